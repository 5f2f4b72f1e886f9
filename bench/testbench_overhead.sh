#!/usr/bin/env bash
# Issue 16 point 7's figure: what tracing adds to the demo simulation's CPU time. The same
# testbench binary runs untraced (+notrace) and traced (+trace=FILE, which also writes the .pccx),
# RUNS times each, interleaved so that a change in the machine's load hits both alike. CPU is
# user + system time of the whole process (the simulation thread and the writers' threads).
#
#   bench/testbench_overhead.sh [TB [RUNS]]
#
# TB defaults to build/default/verilator_tb/uscope_tb, RUNS to 5. Prints each run, then the
# medians and the overhead of the medians: CPU and wall.
set -euo pipefail
cd "$(dirname "$0")/.."
tb=${1:-build/default/verilator_tb/uscope_tb}
runs=${2:-5}
[ -x "$tb" ] || { echo "no testbench at $tb: build it (cmake --build --preset default)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

one() {  # one run: "<cpu s> <wall s>"
  local log=$out/time
  /usr/bin/time -o "$log" -f "%U %S %e" "$tb" "$@" +quiet >/dev/null
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$log"
}

: >"$out/untraced"
: >"$out/traced"
for i in $(seq "$runs"); do
  read -r c w < <(one +notrace)
  echo "$c $w" >>"$out/untraced"
  read -r tc tw < <(one +trace="$out/t.uscope")
  echo "$tc $tw" >>"$out/traced"
  printf 'run %d: untraced cpu %s s wall %s s | traced cpu %s s wall %s s\n' "$i" "$c" "$w" "$tc" "$tw"
done

median() {  # median of column $2 of file $1
  sort -n -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
uc=$(median "$out/untraced" 1)
uw=$(median "$out/untraced" 2)
tc=$(median "$out/traced" 1)
tw=$(median "$out/traced" 2)
awk -v uc="$uc" -v uw="$uw" -v tc="$tc" -v tw="$tw" -v runs="$runs" -v n="$(stat -c %s "$out/t.uscope")" 'BEGIN {
  printf "median of %d runs: untraced cpu %.3f s wall %.3f s; traced cpu %.3f s wall %.3f s\n", runs, uc, uw, tc, tw
  printf "overhead: cpu %+.1f%% (%.3f s), wall %+.1f%%; trace %.1f MB\n", 100 * (tc - uc) / uc, tc - uc,
         100 * (tw - uw) / uw, n / 1e6
}'
