#!/usr/bin/env python3
"""Prints the NPU's two fixed-point lookup tables, in SystemVerilog and in C.

The tables are part of the bit-exact contract between the RTL (npu_pkg.sv) and the golden model
(fw/npu_ref.c); both files carry the numbers printed here. Run it only to re-derive them; the unit
testbench sweeps every GELU table entry and the softmax table on random data, so a drift between
the two copies fails `ctest`.

  EXP2: 16 entries, round(2^16 * 2^(-f/16)), f = 0..15        (softmax, Q0.16)
  PHI : 129 entries, round(2^16 * Phi(-4 + i/16)), i = 0..128 (GELU, Q0.16; Phi = normal CDF)
"""
import math

exp2 = [round(65536 * 2 ** (-f / 16)) for f in range(16)]
phi = [round(65536 * 0.5 * (1 + math.erf((-4 + i / 16) / math.sqrt(2)))) for i in range(129)]


def rows(vals, per=12):
    return [", ".join(str(v) for v in vals[i:i + per]) for i in range(0, len(vals), per)]


print("// SystemVerilog")
print("localparam logic [16:0] EXP2_LUT [16] = '{")
print(",\n".join("  " + r for r in rows(exp2)))
print("};")
print("localparam logic [16:0] PHI_LUT [129] = '{")
print(",\n".join("  " + r for r in rows(phi)))
print("};")
print("/* C */")
print("static const uint32_t EXP2_LUT[16] = {")
print(",\n".join("  " + r for r in rows(exp2)))
print("};")
print("static const uint32_t PHI_LUT[129] = {")
print(",\n".join("  " + r for r in rows(phi)))
print("};")
