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
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure --no-tests=error -j "$jobs"

echo "== threading tests (TSan) =="
# Only the test programs of the threaded parts (the tsan build preset's targets: the unit tests
# and the DPI bridge's), and of those the tests whose threads meet: the writer's encoder thread
# against the simulation thread (alloc, crash, finish, flush), the reader tailing a live file,
# the DPI bridge's registry and writers (the tsan test preset's filter).
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan -j "$jobs"

echo "== fuzz the reader (clang, libFuzzer + ASan + UBSan, ${USCOPE_FUZZ_SECONDS:=60} s) =="
# A separate clang build of the fuzz target only. It runs on a copy of the
# seed corpus (tests/fuzz/corpus/reader), so new inputs stay in the build
# tree; a crash leaves its input in build/fuzz/artifacts/ and fails CI. To
# keep a finding as a regression test, copy that file into the seed corpus:
# the ctest replay runs it in every build.
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DUSCOPE_FUZZ=ON -DUSCOPE_BUILD_TESTS=OFF -DUSCOPE_BUILD_BENCH=OFF -DUSCOPE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target uscope_fuzz_reader
rm -rf build/fuzz/corpus build/fuzz/artifacts
mkdir -p build/fuzz/corpus build/fuzz/artifacts
cp tests/fuzz/corpus/reader/* build/fuzz/corpus/
# Limits: 10 s per input is a hang; one allocation over 512 MiB is a hostile
# size that got through (inputs stay within the default 4 KiB -max_len, whose
# largest legitimate allocation is a ~260 MiB storage state).
build/fuzz/tests/fuzz/uscope_fuzz_reader -max_total_time="$USCOPE_FUZZ_SECONDS" -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/ \
  build/fuzz/corpus

echo "== fuzz the pccx reader (clang, libFuzzer + ASan + UBSan, ${USCOPE_FUZZ_PCCX_SECONDS:=30} s) =="
# Same build tree and rules; seeds from tests/fuzz/corpus/pccx and the real
# pccx-lab file. Allocations are bounded by the input size (docs/pccx.md).
cmake --build build/fuzz -j "$jobs" --target uscope_fuzz_pccx
rm -rf build/fuzz/corpus_pccx
mkdir -p build/fuzz/corpus_pccx
cp tests/fuzz/corpus/pccx/* build/fuzz/corpus_pccx/
build/fuzz/tests/fuzz/uscope_fuzz_pccx -max_total_time="$USCOPE_FUZZ_PCCX_SECONDS" -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/ \
  build/fuzz/corpus_pccx

echo "== fuzz the NPU JSONL ingest (${USCOPE_FUZZ_SECONDS} s) =="
cmake --build build/fuzz -j "$jobs" --target uscope_fuzz_jsonl
rm -rf build/fuzz/corpus_jsonl && mkdir -p build/fuzz/corpus_jsonl && cp tests/fuzz/corpus/jsonl/* build/fuzz/corpus_jsonl/
build/fuzz/tests/fuzz/uscope_fuzz_jsonl -max_total_time="$USCOPE_FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/ build/fuzz/corpus_jsonl
