#!/usr/bin/env bash
# The README's test command: every test, in a normal build and under
# ASan+UBSan, then a bounded libFuzzer run of the reader. CI (.ci/run) runs
# exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/deps.sh
uscope_install_deps
jobs=$(nproc)

echo "== build and test (RelWithDebInfo) =="
cmake --preset default -DUSCOPE_BUILD_BENCH=ON >/dev/null
cmake --build build/default -j "$jobs"
ctest --test-dir build/default --output-on-failure -j "$jobs"

echo "== build and test (ASan + UBSan) =="
cmake --preset asan >/dev/null
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

# The bounded libFuzzer runs (readers, JSONL ingest, CLI): .ci/fuzz.sh.
bash .ci/fuzz.sh
