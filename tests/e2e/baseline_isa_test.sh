#!/usr/bin/env bash
# The shipped libraries must run on every x86-64 CPU (Debian's baseline ISA):
# no object of theirs may be compiled with -mavx* or a target attribute. An
# AVX instruction anywhere in them is a CPU that crashes with SIGILL, often in
# an inline function the linker took from the one object built for AVX2.
# SIMD belongs in libsimdjson/liblz4/libzstd, which choose their kernels at
# run time. Usage: baseline_isa_test.sh LIB...
set -euo pipefail
status=0
for lib in "$@"; do
  [[ -f $lib ]] || { echo "missing: $lib"; exit 1; }
  # AT&T syntax: any VEX/EVEX-encoded instruction is a v-mnemonic or names a
  # ymm/zmm register. Allowed: simdjson's own per-CPU kernels
  # (simdjson::haswell / icelake / westmere), which its headers compile with
  # target attributes and which only its runtime dispatch calls; an -O0
  # build emits some of them into every object that includes simdjson.h.
  hits=$(objdump -d --no-show-raw-insn "$lib" |
         awk '/^[0-9a-f]+ <.*>:$/ { fn = $2; ok = fn ~ /^<_ZN8simdjson(7haswell|7icelake|8westmere)/ }
              !ok && /^ +[0-9a-f]+:\t(v[a-z0-9]+|.*%[yz]mm)/ && n < 20 { print fn ": " $0; n++ }')
  if [[ -n $hits ]]; then
    echo "$lib has instructions beyond the x86-64 baseline:"
    echo "$hits"
    status=1
  else
    echo "$lib: baseline x86-64 only"
  fi
done
exit $status
