#!/usr/bin/env bash
# Any combination of the build options configures: none set (the defaults, which follow the
# installed tools), all ON, all OFF, each one OFF alone and each one ON alone, plus the
# sanitizer settings. Configure only (no build), each in its own scratch build directory.
# usage: options_matrix_test.sh <source dir> [generator]
set -euo pipefail
src=$1
gen=${2:-Ninja}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
opts=(TESTS BENCH EXAMPLES DPI TB TOOLS)

all() { for o in "${opts[@]}"; do printf -- '-DUSCOPE_BUILD_%s=%s ' "$o" "$1"; done; }
configs=("" "$(all ON)" "$(all OFF)")
for o in "${opts[@]}"; do
  configs+=("$(all ON) -DUSCOPE_BUILD_$o=OFF" "$(all OFF) -DUSCOPE_BUILD_$o=ON")
done
configs+=("-DUSCOPE_SANITIZE=ON" "-DUSCOPE_SANITIZE=thread -DUSCOPE_BUILD_TB=OFF")
# A machine with only the library's dependencies: every optional CMake package hidden. The
# defaults must then leave out what needs them (and say so) instead of failing.
no_tools="-DCMAKE_DISABLE_FIND_PACKAGE_GTest=TRUE -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=TRUE"
no_tools+=" -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=TRUE -DCMAKE_DISABLE_FIND_PACKAGE_verilator=TRUE"
configs+=("$no_tools")

failed=0 n=0
for c in "${configs[@]}"; do
  n=$((n + 1))
  # shellcheck disable=SC2086  # $c is a list of -D arguments
  if cmake -S "$src" -B "$tmp/b$n" -G "$gen" $c >"$tmp/log" 2>&1; then
    echo "ok:     ${c:-(no options)}"
    if [ "$c" = "$no_tools" ]; then
      for o in TESTS BENCH TOOLS TB; do
        grep -q "USCOPE_BUILD_$o=OFF by default: not found" "$tmp/log" ||
          { echo "FAILED: without the optional tools, USCOPE_BUILD_$o did not default to OFF"; cat "$tmp/log"; failed=$((failed + 1)); }
      done
    fi
  else
    echo "FAILED: ${c:-(no options)}"; tail -n 30 "$tmp/log"; failed=$((failed + 1))
  fi
  rm -rf "$tmp/b$n"
done
echo "$n configurations, $failed failed"
[ "$failed" -eq 0 ]
echo "options matrix: OK"
