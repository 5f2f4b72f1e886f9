#!/usr/bin/env bash
# Every command of the README's ```sh blocks, run as written, against files this test makes at
# the README's file names in a scratch directory:
#   trace.uscope       examples/pipeline.c's trace and, when given, the testbench's (what the
#                      demo makes: sim_main +trace, the tb_run_traced test's tb.uscope): each
#                      command on trace.uscope runs on both, except `dump` on the testbench's
#                      (a full JSON dump of ~4 million cycles: gigabytes of output)
#   run.jsonl(.gz)     a small NPU JSON-Lines trace (the spec's example events, below)
#   dummy_trace.pccx   the pccx-lab file of the shared conformance corpus
#   gem5.kanata.log.gz a gem5-style Kanata log (tests/unit/data/konata/gem5_o3.log, gzipped)
# A command fails the test when it exits non-zero, or prints nothing (or an empty JSON array or
# object) on stdout, except the few that are silent by design (SILENT below).
#
# Not run, by design, and why:
#   bash .ci/*.sh        what runs this test (CI runs them: .ci/run)
#   cmake --preset X / cmake --build build/X
#                        whole builds; CI makes them (build/default, build/demo). The commands
#                        after them run against this test's build instead.
# Run on the testbench's trace only: the exports that attribute cycles to the firmware's functions
# and lines (--to nytprof, --to hpctoolkit) need its ELF, which the example program's trace has
# none of; without a testbench trace they fail.
# Rewritten, and how (so that the test touches nothing outside its scratch directory):
#   build/demo, build/release  -> this test's build directory
#   /usr/local                 -> <scratch>/prefix (PKG_CONFIG_PATH points there)
#   ldconfig                   -> ldconfig -n <scratch>/prefix/lib (no system cache update)
#   uscope                     -> the build's uscope CLI (first in PATH)
#   the benchmark programs     run with USCOPE_BENCH_CYCLES=20000 (a short workload)
# usage: readme_test.sh <build dir> <source dir> <shared dir> [testbench trace]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
shared=$3
tb_trace=${4:-}
readme=$src/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ── The README's shell commands ──
# Lines inside ```sh ... ``` fences; blank lines and whole-line comments dropped.
mapfile -t cmds < <(awk '/^```sh[[:space:]]*$/ { on = 1; next } /^```/ { on = 0; next }
                         on && NF && $1 !~ /^#/ { print }' "$readme")
[ ${#cmds[@]} -ge 10 ] || { echo "README.md: found only ${#cmds[@]} shell commands in \`\`\`sh blocks"; exit 1; }

# ── The files they read ──
work=$tmp/work
mkdir -p "$work" "$tmp/bin"
ln -s "$build/uscope" "$tmp/bin/uscope"
export PATH="$tmp/bin:$PATH"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
export USCOPE_BENCH_CYCLES=20000
"$build/uscope_example_pipeline" "$work/trace.uscope" >/dev/null
cp "$shared/conformance/pccx/dummy_trace.pccx" "$work/"
cat >"$work/run.jsonl" <<'EOF'
{"event_type": "TRACE_META", "version": "1.0", "sim_config": {"te_tflops": 64, "sram_size": 8388608}}
{"event_type": "CMD_ENQUEUE", "t_cycle": 100, "cmd_id": 42, "cmd_type": "MATMUL", "source": "ISA", "token": 10, "desc_addr": 140737488355328, "layer_id": 3, "block_id": 3, "phase": "QKV_PROJ", "model_name": "llama2_7b"}
{"event_type": "CMD_START", "t_cycle": 150, "cmd_id": 42}
{"event_type": "JOB_ISSUE", "t_cycle": 200, "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "tile_id": 5, "vec_chunk_id": null, "phase": "QKV_PROJ"}
{"event_type": "DMA_START", "t_cycle": 210, "tx_id": 500, "channel": 0, "direction": "DRAM_TO_SRAM", "src_addr": 140737488355328, "dst_addr": 4096, "size_bytes": 65536, "cmd_id": 42, "job_id": 1001, "phase": "QKV_PROJ"}
{"event_type": "TE_START", "t_cycle": 230, "job_id": 1001, "cmd_id": 42, "m": 128, "n": 128, "k": 256, "tile_m": 64, "tile_n": 64, "tile_k": 64, "phase": "QKV_PROJ"}
{"event_type": "SRAM_ACCESS", "t_cycle": 235, "addr": 8192, "bank_id": 1, "access_type": "READ", "by": "TE", "conflict": false, "cmd_id": 42, "job_id": 1001}
{"event_type": "DMA_END", "t_cycle": 260, "tx_id": 500, "channel": 0, "cmd_id": 42, "job_id": 1001}
{"event_type": "JOB_DONE", "t_cycle": 260, "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "latency_cycles": 60}
{"event_type": "TE_END", "t_cycle": 280, "job_id": 1001, "cmd_id": 42, "mac_count": 4194304, "latency_cycles": 50}
{"event_type": "VE_START", "t_cycle": 300, "job_id": 1100, "cmd_id": 42, "op_type": "LAYERNORM", "len": 4096, "batch": 128, "phase": "LN1"}
{"event_type": "VE_END", "t_cycle": 340, "job_id": 1100, "cmd_id": 42, "latency_cycles": 40}
{"event_type": "CMD_END", "t_cycle": 900, "cmd_id": 42, "status": "OK"}
{"event_type": "TOKEN_COMPLETE", "t_cycle": 900, "token": 10, "cmd_id": 42, "status": "OK"}
EOF
gzip -k "$work/run.jsonl"
gzip -c "$src/tests/unit/data/konata/gem5_o3.log" >"$work/gem5.kanata.log.gz"
if [ -n "$tb_trace" ]; then
  [ -s "$tb_trace" ] || { echo "the testbench trace $tb_trace is missing"; exit 1; }
  mkdir -p "$tmp/work_tb"
  ln -s "$(cd "$(dirname "$tb_trace")" && pwd)/$(basename "$tb_trace")" "$tmp/work_tb/trace.uscope"
fi

# ── Run them ──
SILENT='^(ldconfig|uscope convert|uscope export|uscope import-konata) '  # no stdout by design: checked by their exit status and output files
NEEDS_ELF='--to (nytprof|hpctoolkit)'  # the testbench's trace only (above)
ran=0 skipped=0 failed=0
for cmd in "${cmds[@]}"; do
  case $cmd in
    *".ci/"*)
      echo "skip (runs this test): $cmd"; skipped=$((skipped + 1)); continue ;;
  esac
  # Builds: drop `cmake --preset X &&` and `cmake --build build/X &&`; keep what follows.
  run=$(sed -E 's#cmake --preset [a-z]+ *&& *##; s#cmake --build build/[a-z]+( --target [a-z_ ]+)? *&& *##' <<<"$cmd")
  if [[ $run =~ ^cmake\ --(preset|build)\  ]]; then
    echo "skip (a whole build; CI makes it): $cmd"; skipped=$((skipped + 1)); continue
  fi
  run=$(sed -E "s#(\\./)?build/(demo|release)#$build#g; s#/usr/local#$tmp/prefix#g; s#^ldconfig( |\$)#ldconfig -n $tmp/prefix/lib #" <<<"$run")
  dirs=("$work")
  if [ -n "$tb_trace" ] && [[ $run == *trace.uscope* && $run != *" dump "* ]]; then dirs+=("$tmp/work_tb"); fi
  if [[ $run =~ $NEEDS_ELF ]]; then
    if [ -z "$tb_trace" ]; then echo "FAILED (needs the testbench's trace and its ELF): $cmd"; failed=$((failed + 1)); continue; fi
    dirs=("$tmp/work_tb")
  fi
  for dir in "${dirs[@]}"; do
    echo "\$ (in ${dir##*/}) $run"
    if ! (cd "$dir" && bash -euo pipefail -c "$run") >"$tmp/out" 2>"$tmp/err"; then
      echo "FAILED (exit status): $cmd"; cat "$tmp/err"; failed=$((failed + 1)); continue
    fi
    head -c 300 "$tmp/out"; echo
    out=$(tr -d '[:space:]' <"$tmp/out")
    if [[ ! $cmd =~ $SILENT ]] && [[ -z $out || $out == "[]" || $out == "{}" ]]; then
      echo "FAILED (no output): $cmd"; cat "$tmp/err"; failed=$((failed + 1)); continue
    fi
    ran=$((ran + 1))
  done
done
# What the silent ones made.
for f in run.uscope run.pccx back.jsonl trace.kanata trace.pftrace run.json w.fst gem5.uscope; do
  [ -s "$work/$f" ] || { echo "FAILED: the README's convert, export and import commands made no $f"; failed=$((failed + 1)); }
done
if [ -n "$tb_trace" ]; then
  for f in nytprof.out nytprof/index.html trace.db/meta.db trace.db/trace.db; do
    [ -s "$tmp/work_tb/$f" ] || { echo "FAILED: the README's export commands made no $f"; failed=$((failed + 1)); }
  done
fi
[ -f "$tmp/prefix/lib/libuscope.so.1" ] || { echo "FAILED: nothing installed in $tmp/prefix"; failed=$((failed + 1)); }
echo "README commands: $ran run, $skipped skipped, $failed failed"
[ "$failed" -eq 0 ]
echo "readme e2e: OK"
