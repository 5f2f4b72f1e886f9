#!/usr/bin/env bash
# Installs libuscope into a scratch prefix and builds a user's program against
# it three ways: pkg-config (shared), pkg-config --static, and CMake
# find_package(uscope). Also checks that the shared library exports uscope_* and pccx_*
# symbols only (hidden visibility) and carries its SOVERSION.
set -euo pipefail
build_dir=$1
e2e_dir=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
lib=$(ls -d "$tmp"/prefix/lib*/ | head -n1)
export PKG_CONFIG_PATH="$lib/pkgconfig"

test -L "$lib/libuscope.so.1" || { echo "no SONAME link libuscope.so.1"; exit 1; }
soname=$(objdump -p "$lib/libuscope.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libuscope.so.1" ] || { echo "SONAME is '$soname'"; exit 1; }
leaked=$(nm -D --defined-only "$lib/libuscope.so" | awk '$2 != "A" {print $3}' | grep -Ev '^(uscope|pccx)_' || true)  # A: the version node
[ -z "$leaked" ] || { echo "symbols exported besides uscope_* and pccx_*:"; echo "$leaked"; exit 1; }

cc "$e2e_dir/consumer/main.c" -o "$tmp/pc_shared" $(pkg-config --cflags --libs uscope) -Wl,-rpath,"$lib"
"$tmp/pc_shared" "$tmp/a.uscope"
c++ -x c "$e2e_dir/consumer/main.c" -x none -o "$tmp/pc_static" $(pkg-config --cflags uscope) \
  "$lib/libuscope.a" $(pkg-config --static --libs-only-l --libs-only-L uscope | sed 's/-luscope//') -pthread
"$tmp/pc_static" "$tmp/b.uscope"

cmake -S "$e2e_dir/consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
LD_LIBRARY_PATH="$lib" "$tmp/cmake/consumer_shared" "$tmp/c.uscope"
"$tmp/cmake/consumer_static" "$tmp/d.uscope"
cmp "$tmp/a.uscope" "$tmp/c.uscope"  # same calls, same library: identical files
echo "install e2e: OK"
