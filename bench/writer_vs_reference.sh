#!/usr/bin/env bash
# Issue 16 §1: libuscope's writer end to end against the reference C writer, with the very same calls
# (bench/writer_driver.cpp built twice), and the scaling curve of compress_threads (inline, 1..4).
# Runs are interleaved (reference, then each of ours, RUNS rounds) so that a noisy machine's drift
# hits every variant alike; the median of each is printed with its ratio to the reference's.
#
#   bench/writer_vs_reference.sh [CYCLES [RUNS]]      (defaults: 1000000 cycles, 7 rounds)
#
# Needs the reference's sources on this machine (never part of the build or of CI):
#   fetch github:zarubaf/uscope           (the search tool's fetch; MIRRORS defaults to /work/.mirror)
# and our driver: cmake --build build/release --target uscope_bench_writer_driver (DRIVER= to override).
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-1000000}
runs=${2:-7}
ref_git=${MIRRORS:-/work/.mirror}/zarubaf+uscope/repo
ours=${DRIVER:-build/release/bench/uscope_bench_writer_driver}
[ -d "$ref_git" ] || { echo "no reference sources at $ref_git: fetch github:zarubaf/uscope first" >&2; exit 1; }
[ -x "$ours" ] || { echo "no driver at $ours: cmake --build build/release --target uscope_bench_writer_driver" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$ref_git" archive HEAD dpi | tar -x -C "$work"
# The reference's own flags (its dpi/Makefile: -O2 -std=c99), with strdup declared (_DEFAULT_SOURCE:
# without it a 64-bit build truncates its pointers), C++17 for the driver.
cc -O2 -std=c99 -D_DEFAULT_SOURCE -w -c -o "$work/uscope_dpi.o" "$work/dpi/uscope_dpi.c"
cc -O2 -std=c99 -D_DEFAULT_SOURCE -w -c -o "$work/lz4.o" "$work/dpi/lz4.c"
c++ -O2 -std=c++17 -DUSCOPE_BENCH_REFERENCE -I"$work/dpi" -Ibench -o "$work/ref_driver" bench/writer_driver.cpp \
  "$work/uscope_dpi.o" "$work/lz4.o"

variants=(ref inline 1 2 3 4)
declare -A wall items simcpu other rss size
for _ in $(seq "$runs"); do
  for v in "${variants[@]}"; do
    out=$work/$v.uscope
    if [ "$v" = ref ]; then line=$("$work/ref_driver" "$out" "$cycles"); else line=$("$ours" "$out" "$cycles" "$v"); fi
    read -r _ w _ i _ s _ o _ r _ f <<<"$line"
    wall[$v]+="$w "; items[$v]+="$i "; simcpu[$v]+="$s "; other[$v]+="$o "; rss[$v]+="$r "; size[$v]=$f
    rm -f "$out"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "cpus: $(nproc); cycles: $cycles; rounds: $runs (medians)"
printf '%-8s %9s %13s %8s %11s %12s %8s %8s\n' writer wall_ms items_per_s x_ref sim_cpu_ms other_cpu_ms rss_MB file_MB
ref_items=$(median "${items[ref]}")
for v in "${variants[@]}"; do
  name=$v; [ "$v" = ref ] || name="ours/$v"
  i=$(median "${items[$v]}")
  printf '%-8s %9s %13s %8.2f %11s %12s %8s %8s\n' "$name" "$(median "${wall[$v]}")" "$i" \
    "$(awk -v a="$i" -v b="$ref_items" 'BEGIN { print a / b }')" "$(median "${simcpu[$v]}")" \
    "$(median "${other[$v]}")" "$(median "${rss[$v]}")" "${size[$v]}"
done
