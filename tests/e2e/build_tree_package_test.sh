#!/usr/bin/env bash
# The build tree's package files, used without installing: uscope.pc (and uscope_dpi.pc when the
# DPI bridge is built) through PKG_CONFIG_PATH=<build dir>, and uscopeConfig.cmake through
# -Duscope_DIR=<build dir>. A user's program (tests/e2e/consumer) builds against each and runs.
# usage: build_tree_package_test.sh <build dir> <tests/e2e source dir>
set -euo pipefail
build_dir=$(cd "$1" && pwd)
e2e_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$build_dir"

test -f "$build_dir/uscope.pc" || { echo "no $build_dir/uscope.pc"; exit 1; }
libdir=$(pkg-config --variable=libdir uscope)
test -f "$libdir/libuscope.so" || { echo "uscope.pc: libdir '$libdir' holds no libuscope.so"; exit 1; }
test -f "$(pkg-config --variable=includedir uscope)/uscope/uscope.h" || { echo "uscope.pc: includedir has no uscope/uscope.h"; exit 1; }

cc "$e2e_dir/consumer/main.c" -o "$tmp/pc_shared" $(pkg-config --cflags --libs uscope) -Wl,-rpath,"$libdir"
"$tmp/pc_shared" "$tmp/a.uscope"
c++ -x c "$e2e_dir/consumer/main.c" -x none -o "$tmp/pc_static" $(pkg-config --cflags uscope) \
  "$libdir/libuscope.a" $(pkg-config --static --libs-only-l --libs-only-L uscope | sed 's/-luscope//') -pthread
"$tmp/pc_static" "$tmp/b.uscope"

cmake -S "$e2e_dir/consumer" -B "$tmp/cmake" -Duscope_DIR="$build_dir" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer_shared" "$tmp/c.uscope"  # CMake's build RPATH finds the build tree's library
"$tmp/cmake/consumer_static" "$tmp/d.uscope"
cmp "$tmp/a.uscope" "$tmp/c.uscope"  # same calls, same library: identical files

if [ -f "$build_dir/dpi/libuscope_dpi.so" ] || [ -f "$build_dir/uscope_dpi.pc" ]; then
  test -f "$build_dir/uscope_dpi.pc" || { echo "the DPI bridge is built but $build_dir/uscope_dpi.pc is missing"; exit 1; }
  svpkg=$(pkg-config --variable=svpkg uscope_dpi)
  test -f "$svpkg" || { echo "uscope_dpi.pc: svpkg '$svpkg' does not exist"; exit 1; }
  dpi_libdir=$(pkg-config --variable=libdir uscope_dpi)
  printf '#include <stdio.h>\n#include <uscope/uscope_dpi.h>\n#include <uscope/uscope.h>\n'\
'int main(void) { printf("%%s %%s\\n", uscope_dpi_version(), uscope_version_string()); return 0; }\n' >"$tmp/dpi.c"
  cc "$tmp/dpi.c" -o "$tmp/dpi" $(pkg-config --cflags --libs uscope_dpi) -Wl,-rpath,"$dpi_libdir" -Wl,-rpath,"$libdir"
  "$tmp/dpi"
fi
echo "build-tree package e2e: OK"
