#!/usr/bin/env bash
# The DPI bridge as a user gets it: install into a scratch prefix, then
#  - check the library (SONAME link), header, SV package and uscope_dpi.pc;
#  - dlopen the installed library from C (tests/dpi/dlopen_test.c);
#  - build a Verilator model against the installed package the documented way
#    (the SV package from `pkg-config --variable=svpkg`, link flags from
#    `pkg-config --libs`), run it and let it read its trace back.
# usage: install_test.sh <build dir> <tests/dpi source dir>
set -euo pipefail
build_dir=$1
src=$(cd "$2" && pwd)  # absolute: Verilator compiles in its -Mdir
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -n1)
lib=${lib%/}
export PKG_CONFIG_PATH="$lib/pkgconfig"

test -L "$lib/libuscope_dpi.so.1" || { echo "no SONAME link libuscope_dpi.so.1"; exit 1; }
soname=$(objdump -p "$lib/libuscope_dpi.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libuscope_dpi.so.1" ] || { echo "SONAME is '$soname'"; exit 1; }
test -f "$tmp/prefix/include/uscope/uscope_dpi.h" || { echo "uscope_dpi.h not installed"; exit 1; }
svpkg=$(pkg-config --variable=svpkg uscope_dpi)
test -f "$svpkg" || { echo "svpkg '$svpkg' does not exist"; exit 1; }
libs=$(pkg-config --libs uscope_dpi)
case " $libs " in *" -luscope_dpi "*"-luscope "*) ;; *) echo "pkg-config --libs uscope_dpi: '$libs'"; exit 1;; esac
echo "pkg-config: $libs; svpkg $svpkg"

# Another language: dlopen the installed library by its runtime name.
cc "$src/dlopen_test.c" -o "$tmp/dl" -ldl
LD_LIBRARY_PATH="$lib" "$tmp/dl" libuscope_dpi.so.1 "$tmp/dl.uscope"

# A Verilator user.
verilator --cc --exe --build -j 2 -Wno-fatal --top-module dpi_tb --prefix Vdpi_tb -Mdir "$tmp/v" \
  -o dpi_tb_sim "$svpkg" "$src/sv/dpi_tb.sv" "$src/sim_main.cpp" \
  -CFLAGS "$(pkg-config --cflags uscope_dpi)" \
  -LDFLAGS "$libs -Wl,-rpath,$lib" >"$tmp/verilator.log" 2>&1 || { cat "$tmp/verilator.log"; exit 1; }
"$tmp/v/dpi_tb_sim" +mode=sv +trace="$tmp/tb.uscope"
echo "DPI install e2e: OK"
