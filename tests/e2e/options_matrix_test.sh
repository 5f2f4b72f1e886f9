#!/usr/bin/env bash
# Any combination of the build options configures: none set (the defaults, which follow the
# installed tools), all ON, all OFF, each one OFF alone and each one ON alone, plus the
# sanitizer settings. Configure only (no build), each in its own scratch build directory;
# except the machine with nothing but lz4, zstd and libdw (elfutils), whose library is built and run.
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
# Nothing but the library's own dependencies, lz4, zstd and libdw (elfutils, for the ELF
# symbols and DWARF line tables of the cpu analysis; found by pkg-config, which
# CMAKE_DISABLE_FIND_PACKAGE cannot hide): simdjson and zlib hidden too. The
# library builds without its pccx / NPU JSON-Lines part (USCOPE_WITH_NPU defaults to OFF); this
# one is also built below, and checked.
no_npu="$no_tools -DCMAKE_DISABLE_FIND_PACKAGE_simdjson=TRUE -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=TRUE"
configs+=("$no_npu")
# Every part asked for while the NPU part is off: configures, leaving out what needs it.
configs+=("$(all ON) -DUSCOPE_WITH_NPU=OFF")

# The library built with lz4, zstd and libdw alone: it links those three and neither simdjson nor
# zlib, still exports every function of pccx.h and convert.h (their table names the symbols the
# full library has), writes and reads a µScope trace, and its pccx / convert calls say they are not built in.
build_lib_only() {
  local b=$1
  cmake --build "$b" -j "$(nproc)" --target uscope uscope_static >"$tmp/build.log" 2>&1 ||
    { tail -n 30 "$tmp/build.log"; return 1; }
  local so
  so=$(ls "$b"/libuscope.so.*.*.* | head -n 1)
  local needed
  needed=$(readelf -d "$so")
  if grep -E 'NEEDED.*(simdjson|libz\.)' <<<"$needed"; then echo "links simdjson or zlib"; return 1; fi
  for l in liblz4 libzstd libdw; do
    grep -qE "NEEDED.*\[$l\.so" <<<"$needed" || { echo "does not link $l"; return 1; }
  done
  local syms
  syms=$(nm -D --defined-only "$so")  # (not piped into grep -q: pipefail would see nm's SIGPIPE)
  for f in pccx_reader_open pccx_writer_open pccx_event_type_name uscope_convert uscope_convert_npu_report \
           uscope_convert_options_init uscope_jsonl_to_pccx; do
    grep -qw "$f" <<<"$syms" || { echo "does not export $f"; return 1; }
  done
  cat >"$tmp/lib_only.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <pccx/pccx.h>
#include <uscope/convert.h>
#include <uscope/uscope.h>
int main(int argc, char **argv) {
  uscope_schema_t *s = NULL;
  uint8_t clk = 0;
  uint16_t root = 0, st = 0;
  const uscope_field_t f[] = {{"v", USCOPE_FT_U32, 0, 0, 0}};
  if (uscope_schema_new(&s) || uscope_schema_add_clock(s, &clk, "clk", 1000) ||
      uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, NULL, clk) ||
      uscope_schema_add_storage(s, &st, "r", root, 1, 0, f, 1, NULL, 0)) return 10;
  uscope_writer_t *w = NULL;
  if (uscope_writer_open(&w, argv[1], s, NULL, 0, NULL)) return 11;
  uscope_schema_free(s);
  for (uint64_t c = 0; c < 10; ++c)
    if (uscope_begin_cycle(w, c * 1000) || uscope_slot_set(w, st, 0, 0, c) || uscope_end_cycle(w)) return 12;
  if (uscope_writer_close(w)) return 13;
  uscope_reader_t *r = NULL;
  uscope_state_t *state = NULL;
  uint64_t v = 0;
  if (uscope_reader_open(&r, argv[1]) || uscope_reader_state_at(r, &state, 9000) ||
      uscope_state_slot_field(state, &v, st, 0, 0) || v != 9) return 14;
  uscope_state_free(state);
  uscope_reader_close(r);
  pccx_reader_t *p = NULL;
  if (pccx_reader_open(&p, argv[1], 0) != USCOPE_ERR_UNSUPPORTED || p) return 15;
  if (!strstr(uscope_last_error(), "USCOPE_WITH_NPU=OFF")) return 16;
  if (uscope_convert(NULL, argv[1], 0, "x.jsonl", 0, NULL) != USCOPE_ERR_UNSUPPORTED) return 17;
  if (strcmp(pccx_event_type_name(1), "MAC_COMPUTE") != 0) return 18;
  (void)argc;
  printf("lib only: OK\n");
  return 0;
}
C
  cc -I"$src/include" "$tmp/lib_only.c" -o "$tmp/lib_only" "$so" -Wl,-rpath,"$(dirname "$so")" || return 1
  (cd "$tmp" && ./lib_only "$tmp/lib_only.uscope") || { echo "lib_only exit $?"; return 1; }
}

failed=0 n=0
for c in "${configs[@]}"; do
  n=$((n + 1))
  # shellcheck disable=SC2086  # $c is a list of -D arguments
  if cmake -S "$src" -B "$tmp/b$n" -G "$gen" $c >"$tmp/log" 2>&1; then
    echo "ok:     ${c:-(no options)}"
    if [ "$c" = "$no_tools" ] || [ "$c" = "$no_npu" ]; then
      for o in TESTS BENCH TOOLS TB; do
        grep -q "USCOPE_BUILD_$o=OFF by default: not found" "$tmp/log" ||
          { echo "FAILED: without the optional tools, USCOPE_BUILD_$o did not default to OFF"; cat "$tmp/log"; failed=$((failed + 1)); }
      done
    fi
    if [ "$c" = "$no_npu" ]; then
      for o in USCOPE_WITH_NPU USCOPE_BUILD_DPI; do
        grep -q "$o=OFF by default: not found" "$tmp/log" ||
          { echo "FAILED: without simdjson and zlib, $o did not default to OFF"; cat "$tmp/log"; failed=$((failed + 1)); }
      done
      if ! build_lib_only "$tmp/b$n"; then
        echo "FAILED: the library alone (lz4, zstd, libdw) does not build or work"; failed=$((failed + 1))
      fi
    fi
  else
    echo "FAILED: ${c:-(no options)}"; tail -n 30 "$tmp/log"; failed=$((failed + 1))
  fi
  rm -rf "$tmp/b$n"
done
echo "$n configurations, $failed failed"
[ "$failed" -eq 0 ]
echo "options matrix: OK"
