#!/usr/bin/env bash
# The README's test command: every test in a normal build (build/default), under ASan+UBSan
# (build/asan), the threading tests under TSan (build/tsan), then bounded libFuzzer runs. Each
# build has its own preset with every option set, so what another command (the demo) configured
# never changes what runs here; ctest fails when it finds no test. CI (.ci/run) runs exactly this,
# after the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/deps.sh
uscope_install_deps
jobs=$(nproc)

echo "== build and test (RelWithDebInfo) =="
cmake --preset default >/dev/null
cmake --build build/default -j "$jobs"
ctest --test-dir build/default --output-on-failure --no-tests=error -j "$jobs"

echo "== build and test (ASan + UBSan) =="
cmake --preset asan >/dev/null
cmake --build build/asan -j "$jobs"
# view_browser is left out (as in the asan test preset): Chromium is not built with the
# sanitizers; the page builder's C++ runs under them in the CliView unit tests.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure --no-tests=error -j "$jobs" -E '^view_browser$'

echo "== threading tests (TSan) =="
# Only the test programs of the threaded parts (the tsan build preset's targets: the unit tests
# and the DPI bridge's), and of those the tests whose threads meet: the writer's encoder thread
# against the simulation thread (alloc, crash, finish, flush), the reader tailing a live file,
# the DPI bridge's registry and writers (the tsan test preset's filter).
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan -j "$jobs"

# The bounded libFuzzer runs (readers, JSONL ingest, CLI): .ci/fuzz.sh.
bash .ci/fuzz.sh
