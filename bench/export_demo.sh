#!/usr/bin/env bash
# Issue 14's performance figures: every exporter on the demo trace (the README's demo writes
# trace.uscope), each run RUNS times, best wall time kept, with `uscope check` (every segment
# decoded and validated) as the same-run baseline: the floor of any whole-trace pass.
#
#   bench/export_demo.sh [TRACE [ELF [RUNS]]]
#
# TRACE defaults to ./trace.uscope, ELF to the firmware the trace names (cpu.elf_path), RUNS to 3.
# MB/s is input trace bytes per second of wall time; peak RSS is the export's own (the CLI reads its
# VmHWM). The outputs go to a temporary directory beside nothing else and are removed. The last
# line, "(fstapi)", is fstapi alone writing the FST export's value changes (read from the VCD
# export, untimed): the floor under the fst line.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-trace.uscope}
elf=${2:-}
runs=${3:-3}
cli=${USCOPE_CLI:-build/default/uscope}
[ -f "$trace" ] || { echo "no trace at $trace: run the README's demo first, or name one" >&2; exit 1; }
[ -x "$cli" ] || { echo "no CLI at $cli: build it (cmake --build --preset default) or set USCOPE_CLI" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bytes=$(stat -c %s "$trace")
elf_opt=()
[ -n "$elf" ] && elf_opt=(--elf "$elf")

best() {  # best wall seconds of RUNS runs of "$@", and the peak RSS of that run
  local b=999999 rss=0
  for _ in $(seq "$runs"); do
    local t0 t1 log
    log=$("$@" 2>&1 >/dev/null) || { echo "$log" >&2; exit 1; }
    t0=$(sed -n 's/.* in \([0-9.]*\) s (.*/\1/p' <<<"$log")
    t1=$(sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p' <<<"$log")
    if awk -v a="$t0" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t0; rss=$t1; fi
  done
  echo "$b $rss"
}

printf '%-12s %8s %10s %10s %12s\n' format "wall s" "MB/s in" "peak MB" "out MB"
# The baseline: a whole-trace decode with nothing written.
b=999999
for _ in $(seq "$runs"); do
  TIMEFORMAT=%R
  t=$( { time "$cli" check "$trace" >/dev/null 2>&1; } 2>&1 )
  awk -v a="$t" -v c="$b" 'BEGIN { exit !(a < c) }' && b=$t
done
awk -v t="$b" -v n="$bytes" 'BEGIN { printf "%-12s %8.2f %10.0f %10s %12s\n", "(check)", t, n / 1e6 / t, "-", "-" }'
for f in konata perfetto chrome-json nytprof hpctoolkit fst vcd; do
  o=$out/out.$f
  read -r t rss < <(best "$cli" export "$trace" --to "$f" "${elf_opt[@]}" -o "$o" --no-progress)
  size=$(du -sb "$o" | cut -f1)
  awk -v f="$f" -v t="$t" -v n="$bytes" -v r="$rss" -v s="$size" \
    'BEGIN { printf "%-12s %8.2f %10.0f %10.1f %12.1f\n", f, t, n / 1e6 / t, r, s / 1e6 }'
  if [ "$f" = vcd ]; then
    # fstapi on its own, fed this VCD's value changes (the FST export's): the floor under the fst
    # line's time while fstapi's writer is one thread (bench/fstapi_floor.cpp).
    floor=$(dirname "$cli")/bench/uscope_bench_fstapi_floor
    if [ -x "$floor" ]; then
      fb=999999
      for _ in $(seq "$runs"); do
        t=$("$floor" "$o" "$out/floor.fst" | sed -n 's/^fstapi alone: \([0-9.]*\) s.*/\1/p')
        awk -v a="$t" -v c="$fb" 'BEGIN { exit !(a < c) }' && fb=$t
        rm -f "$out/floor.fst"
      done
      awk -v t="$fb" -v n="$bytes" 'BEGIN { printf "%-12s %8.2f %10.0f %10s %12s\n", "(fstapi)", t, n / 1e6 / t, "-", "-" }'
    else
      echo "(fstapi)     not built: cmake --build --preset release --target uscope_bench_fstapi_floor" >&2
    fi
  fi
  rm -rf "$o"
done
