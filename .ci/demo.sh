#!/usr/bin/env bash
# The README's demo: build libuscope, the DPI bridge and the Verilator testbench (an RV32I
# pipeline and an NPU running a transformer layer), run it traced into trace.uscope, print what
# `uscope summary` reads back from the trace, analyze a window of it and show one instruction's
# timeline, export it to Konata, Perfetto and NYTProf, and compare the simulation's wall time with and without tracing.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/deps.sh
uscope_install_deps
# Its own build directory (build/demo, the `demo` preset, every option set), so that the tests'
# build/default is never configured with the demo's options, nor the other way round.
cmake --preset demo >/dev/null
cmake --build --preset demo   # the preset's targets: the installable ones (README, Install) and uscope_tb

out=build/demo
tb=$out/verilator_tb/uscope_tb
wall() { sed -n 's/^TB_REPORT .*"wall_s":\([0-9.]*\).*/\1/p' "$1"; }

echo "── untraced run (+notrace) ──"
"$tb" +notrace +quiet | tee $out/demo_untraced.log | grep -v '^TB_REPORT' || true
echo "── traced run (+trace=trace.uscope) ──"
"$tb" +trace=trace.uscope | tee $out/demo_traced.log | grep -v '^TB_REPORT'

echo "── uscope summary trace.uscope ──"
$out/uscope summary trace.uscope

# What an architect asks next: the firmware's first 20,000 cycles analyzed (IPC, flushes, stage
# latencies, stalls, counters), and one instruction's life, disassembled from the firmware's ELF
# (the trace names it in cpu.elf_path) with its function and source line.
echo "── uscope analyze trace.uscope --range 0:20000 ──"
$out/uscope analyze trace.uscope --range 0:20000
echo "── uscope timeline trace.uscope --entity 12 --cycle 1000 ──"
$out/uscope timeline trace.uscope --entity 12 --cycle 1000

# Then into the tools architects already use (docs/export.md): the pipeline of the first 20,000
# cycles in Konata, the whole run in Perfetto (1 cycle shows as 1 ns), and the firmware's cycles
# per C line in nytprofhtml.
echo "── uscope export trace.uscope --to konata / perfetto / nytprof ──"
$out/uscope export trace.uscope --to konata --range 0:20000 -o $out/trace.kanata --no-progress
$out/uscope export trace.uscope --to perfetto -o $out/trace.pftrace --no-progress
$out/uscope export trace.uscope --to nytprof -o $out/nytprof.out --no-progress
nytprofhtml -f $out/nytprof.out -o $out/nytprof >/dev/null
echo "open $out/trace.kanata in Konata, $out/trace.pftrace at ui.perfetto.dev, $out/nytprof/index.html in a browser"

untraced=$(wall $out/demo_untraced.log)
traced=$(wall $out/demo_traced.log)
awk -v u="$untraced" -v t="$traced" -v bytes="$(stat -c %s trace.uscope)" 'BEGIN {
  printf "── wall time ──\nuntraced %.2f s, traced %.2f s: tracing costs %+.0f%%; trace.uscope is %.1f MB\n",
         u, t, (t / u - 1) * 100, bytes / 1e6 }'
