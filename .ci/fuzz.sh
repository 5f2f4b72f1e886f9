#!/usr/bin/env bash
# The bounded libFuzzer runs of .ci/test.sh (which calls this last, after
# the normal, ASan and TSan test runs): the readers (µScope, .pccx), the NPU JSONL
# ingest and converters, the RISC-V disassembler, and the `uscope` CLI on each input kind. One clang
# build tree (build/fuzz) of the fuzz targets only, with libFuzzer + ASan +
# UBSan. Each target runs on a copy of its seed corpus, so new inputs stay in
# the build tree; a crash, a sanitizer report, a leak or a hang leaves its
# input in build/fuzz/artifacts/ and fails CI. To keep a finding as a
# regression test, copy that file into the target's seed corpus
# (tests/fuzz/corpus/...): the ctest replays run it in every build.
#
# Times (seconds, each overridable): USCOPE_FUZZ_SECONDS (reader, JSONL: 60),
# USCOPE_FUZZ_PCCX_SECONDS (30), USCOPE_FUZZ_CLI_SECONDS (each CLI target: 45),
# USCOPE_FUZZ_CONVERT_SECONDS (the JSONL converters: 45), USCOPE_FUZZ_DISASM_SECONDS (30),
# USCOPE_FUZZ_KONATA_SECONDS (the Kanata import and export: 30).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
: "${USCOPE_FUZZ_SECONDS:=60}" "${USCOPE_FUZZ_PCCX_SECONDS:=30}" "${USCOPE_FUZZ_CLI_SECONDS:=45}" "${USCOPE_FUZZ_CONVERT_SECONDS:=45}"
: "${USCOPE_FUZZ_DISASM_SECONDS:=30}" "${USCOPE_FUZZ_KONATA_SECONDS:=30}"

CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DUSCOPE_FUZZ=ON -DUSCOPE_BUILD_TESTS=OFF -DUSCOPE_BUILD_BENCH=OFF -DUSCOPE_BUILD_EXAMPLES=OFF \
  -DUSCOPE_BUILD_TB=OFF -DUSCOPE_BUILD_DPI=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target uscope_fuzz_reader uscope_fuzz_pccx uscope_fuzz_jsonl uscope_fuzz_jsonl_convert \
  uscope_fuzz_disasm uscope_fuzz_konata uscope_fuzz_cli_uscope uscope_fuzz_cli_pccx uscope_fuzz_cli_jsonl \
  uscope_fuzz_generated_seeds
rm -rf build/fuzz/artifacts && mkdir -p build/fuzz/artifacts

# fuzz NAME SECONDS MALLOC_LIMIT_MB SEED_DIR... [-- EXTRA libFuzzer FLAGS]:
# runs build/fuzz/tests/fuzz/uscope_fuzz_NAME on a fresh copy of the seeds.
# Limits: 10 s per input is a hang; one allocation over MALLOC_LIMIT_MB is a
# hostile size that got through.
fuzz() {
  local name=$1 seconds=$2 malloc_mb=$3
  shift 3
  local corpus=build/fuzz/corpus_$name extra=()
  rm -rf "$corpus" && mkdir -p "$corpus"
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
    # (not the conformance corpus's reference dumps: *.json, *.log)
    find "$1" -maxdepth 1 -type f ! -name '*.json' ! -name '*.log' -exec cp {} "$corpus"/ \;
    shift
  done
  echo "== fuzz $name (clang, libFuzzer + ASan + UBSan, $seconds s) =="
  build/fuzz/tests/fuzz/uscope_fuzz_"$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb="$malloc_mb" -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/ \
    "${extra[@]}" "$corpus"
}

# The reader: inputs stay within the default 4 KiB -max_len, whose largest
# legitimate allocation is a ~260 MiB storage state.
fuzz reader "$USCOPE_FUZZ_SECONDS" 512 tests/fuzz/corpus/reader
# The pccx reader: allocations are bounded by the input size (docs/pccx.md);
# seeds include the real pccx-lab file.
fuzz pccx "$USCOPE_FUZZ_PCCX_SECONDS" 256 tests/fuzz/corpus/pccx
# The NPU JSONL ingest (line reader, parser, reorder window, pairing) through
# the npu report, and the converters' writers on the same inputs, through the
# C API (a conversion's writer set-up costs ~25x a small input's parse, hence
# two targets).
fuzz jsonl "$USCOPE_FUZZ_SECONDS" 512 tests/fuzz/corpus/jsonl
fuzz jsonl_convert "$USCOPE_FUZZ_CONVERT_SECONDS" 512 tests/fuzz/corpus/jsonl
# The Kanata import (line parser, the two passes, slot recycling) and the
# export of what it wrote (reorder heap), through the C API; seeds are small
# logs (not named *.log: this function leaves those out), one of them gzip.
fuzz konata "$USCOPE_FUZZ_KONATA_SECONDS" 512 tests/fuzz/corpus/konata
# The RISC-V disassembler: arbitrary code under every option mix (the first bytes choose
# them), each answer checked (fuzz_disasm.cpp); its allocations are a few times the input's size.
# -max_len 512 (128 to 256 instructions): its state spans a few instructions, and shorter
# inputs run 3-4 times as many per second as the default 4 KiB.
fuzz disasm "$USCOPE_FUZZ_DISASM_SECONDS" 64 tests/fuzz/corpus/disasm -- -max_len=512
# The CLI: the commands' own code on each input kind. -close_fd_mask=2
# silences the commands' error messages (libFuzzer's own output and the
# sanitizers' reports still show). Seeds: the readers' corpora, the shared
# conformance files, every CLI finding (corpus/cli_*) and the JSONL spec
# examples converted by this build's CLI (build/fuzz/tests/fuzz/corpus_generated).
# -max_len 64 KiB: the large conformance files (up to 800 KiB) stay seeds,
# cut to their first 64 KiB, so that a run is not spent on a few big inputs.
shared=../shared/conformance
gen=build/fuzz/tests/fuzz/corpus_generated
fuzz cli_uscope "$USCOPE_FUZZ_CLI_SECONDS" 512 tests/fuzz/corpus/cli_uscope "$gen"/cli_uscope tests/fuzz/corpus/reader \
  "$shared"/uscope -- -close_fd_mask=2 -max_len=65536
fuzz cli_pccx "$USCOPE_FUZZ_CLI_SECONDS" 512 tests/fuzz/corpus/cli_pccx "$gen"/cli_pccx tests/fuzz/corpus/pccx \
  "$shared"/pccx -- -close_fd_mask=2 -max_len=65536
fuzz cli_jsonl "$USCOPE_FUZZ_CLI_SECONDS" 512 tests/fuzz/corpus/cli_jsonl tests/fuzz/corpus/jsonl \
  -- -close_fd_mask=2
