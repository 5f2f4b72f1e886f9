#!/usr/bin/env bash
# The README's demo: build libuscope, the DPI bridge and the Verilator testbench (an RV32I
# pipeline and an NPU running a transformer layer), run it traced into trace.uscope, print what
# `uscope summary` reads back from the trace, and compare the simulation's wall time with and
# without tracing.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/deps.sh
uscope_install_deps
cmake --preset default -DUSCOPE_BUILD_TESTS=OFF -DUSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build/default --target uscope_tb uscope_cli

tb=build/default/verilator_tb/uscope_tb
wall() { sed -n 's/^TB_REPORT .*"wall_s":\([0-9.]*\).*/\1/p' "$1"; }

echo "── untraced run (+notrace) ──"
"$tb" +notrace +quiet | tee build/default/demo_untraced.log | grep -v '^TB_REPORT' || true
echo "── traced run (+trace=trace.uscope) ──"
"$tb" +trace=trace.uscope | tee build/default/demo_traced.log | grep -v '^TB_REPORT'

echo "── uscope summary trace.uscope ──"
build/default/uscope summary trace.uscope

untraced=$(wall build/default/demo_untraced.log)
traced=$(wall build/default/demo_traced.log)
awk -v u="$untraced" -v t="$traced" -v bytes="$(stat -c %s trace.uscope)" 'BEGIN {
  printf "── wall time ──\nuntraced %.2f s, traced %.2f s: tracing costs %+.0f%%; trace.uscope is %.1f MB\n",
         u, t, (t / u - 1) * 100, bytes / 1e6 }'
