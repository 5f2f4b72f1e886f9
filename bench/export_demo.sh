#!/usr/bin/env bash
# Issue 14's performance figures: every exporter on the demo trace (the README's demo writes
# trace.uscope), each run RUNS times, best wall time kept, with `uscope check` (every segment
# decoded and validated) as the same-run baseline: the floor of any whole-trace pass.
#
#   bench/export_demo.sh [TRACE [ELF [RUNS]]]
#
# TRACE defaults to ./trace.uscope, ELF to the firmware the trace names (cpu.elf_path), RUNS to 5.
# Each line gives the median and the best wall time of RUNS runs; MB/s is input trace bytes per
# second of the median; peak RSS is the median run's own (the CLI reads its VmHWM). The outputs go
# to a temporary directory beside nothing else. Every run writes a path that does not exist: the
# previous run's output is removed first, untimed. Replacing an existing output also costs the file
# system's time to free the old file (the export's rename drops its last link): on ext4 with
# discard, 0.18 s for a 1.5 GB Chrome JSON, as `rm` of it costs. Timing that in would measure the
# file system, not the exporter. The last line, "(fstapi)", is fstapi alone writing the FST
# export's value changes (read from the VCD export, untimed): the floor under the fst line.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-trace.uscope}
elf=${2:-}
runs=${3:-5}
cli=${USCOPE_CLI:-build/default/uscope}
[ -f "$trace" ] || { echo "no trace at $trace: run the README's demo first, or name one" >&2; exit 1; }
[ -x "$cli" ] || { echo "no CLI at $cli: build it (cmake --build --preset default) or set USCOPE_CLI" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bytes=$(stat -c %s "$trace")
elf_opt=()
[ -n "$elf" ] && elf_opt=(--elf "$elf")

mid_best() {  # stdin: "seconds [rss]" lines; out: "median best rss-of-median"
  sort -n | awk '{ t[NR] = $1; r[NR] = $2 } END { m = int((NR + 1) / 2); print t[m], t[1], r[m] + 0 }'
}

runs_of() {  # "median best rss": wall seconds of RUNS runs of "$@" (output $o)
  local log
  for _ in $(seq "$runs"); do
    rm -rf "$o"
    sync
    log=$("$@" 2>&1 >/dev/null) || { echo "$log" >&2; exit 1; }
    echo "$(sed -n 's/.* in \([0-9.]*\) s (.*/\1/p' <<<"$log") $(sed -n 's/.*peak RSS \([0-9.]*\) MB.*/\1/p' <<<"$log")"
  done | mid_best
}

line() {  # format median best [rss size]
  awk -v f="$1" -v t="$2" -v b="$3" -v n="$bytes" -v r="${4:--}" -v s="${5:--}" 'BEGIN {
    printf "%-12s %8.2f %8.2f %10.0f %10s %12s\n", f, t, b, n / 1e6 / t, r, s == "-" ? s : sprintf("%.1f", s / 1e6) }'
}

printf '%-12s %8s %8s %10s %10s %12s\n' format "median s" "best s" "MB/s in" "peak MB" "out MB"
# The baseline: a whole-trace decode with nothing written.
TIMEFORMAT=%R
read -r t b _ < <(for _ in $(seq "$runs"); do { time "$cli" check "$trace" >/dev/null 2>&1; } 2>&1; done | mid_best)
line "(check)" "$t" "$b"
for f in konata perfetto chrome-json nytprof hpctoolkit fst vcd; do
  o=$out/out.$f
  read -r t b rss < <(runs_of "$cli" export "$trace" --to "$f" "${elf_opt[@]}" -o "$o" --no-progress)
  line "$f" "$t" "$b" "$rss" "$(du -sb "$o" | cut -f1)"
  if [ "$f" = vcd ]; then
    # fstapi on its own, fed this VCD's value changes (the FST export's): the floor under the fst
    # line's time while fstapi's writer is one thread (bench/fstapi_floor.cpp).
    floor=$(dirname "$cli")/bench/uscope_bench_fstapi_floor
    if [ -x "$floor" ]; then
      read -r t b _ < <(for _ in $(seq "$runs"); do
        "$floor" "$o" "$out/floor.fst" | sed -n 's/^fstapi alone: \([0-9.]*\) s.*/\1/p'
        rm -f "$out/floor.fst"
      done | mid_best)
      line "(fstapi)" "$t" "$b"
    else
      echo "(fstapi)     not built: cmake --build --preset release --target uscope_bench_fstapi_floor" >&2
    fi
  fi
  rm -rf "$o"
done
