/*
 * main.c — the testbench firmware (verilator_tb/README.md): the ISA self-test, core-only work,
 * then the transformer layers on the NPU. Prints a short report through PUTC and returns 0 (pass,
 * written to TOHOST by crt0) only when every check held.
 */
#include "cpu_bench.h"
#include "tb_io.h"
#include "tb_report.h"
#include "transformer.h"

int isa_selftest(void);

int main(void) {
  tb_puts("fw: rv32i testbench firmware\n");

  const uint32_t c0 = tb_cycle();
  const int isa = isa_selftest();
  tb_report(TB_REPORT_ISA_FAIL, (uint32_t)isa);
  tb_puts("isa: ");
  if (isa) {
    tb_puts("FAIL at test ");
    tb_put_dec(isa);
    tb_putc('\n');
    return 2; /* the rest would only be noise on a broken core */
  }
  tb_puts("ok\n");
  const int cpu_fails = cpu_bench_run();
  const uint32_t c1 = tb_cycle();
  tb_report(TB_REPORT_CPU_CYCLES, c1 - c0);

  uint32_t checksum = 0;
  const int mismatches = transformer_run(&checksum);
  const uint32_t c2 = tb_cycle();
  tb_report(TB_REPORT_NPU_CYCLES, c2 - c1);

  const uint32_t instret = tb_instret();
  tb_puts("fw: ");
  tb_put_dec(TF_LAYERS);
  tb_puts(" layers, ");
  tb_put_dec(mismatches);
  tb_puts(" mismatches, output ");
  tb_put_hex(checksum);
  tb_puts("; cycles cpu ");
  tb_put_udec(c1 - c0);
  tb_puts(" npu ");
  tb_put_udec(c2 - c1);
  tb_puts(", instret ");
  tb_put_udec(instret);
  tb_puts(", flushes ");
  tb_put_udec(tb_flushes());
  tb_puts(", load-use ");
  tb_put_udec(tb_load_use());
  tb_puts(", bus wait ");
  tb_put_udec(tb_mem_wait());
  tb_putc('\n');
  const int ok = cpu_fails == 0 && mismatches == 0;
  tb_puts(ok ? "fw: PASS\n" : "fw: FAIL\n");
  return ok ? 0 : 1;
}
