/*
 * tb_report.h — the testbench MMIO as the firmware sees it (verilator_tb/README.md "Memory
 * map"), and the keys of the harness's scoreboard.
 *
 * The firmware tells the harness what it asked the hardware to do by adding values under these
 * keys (REPORT_KEY, then REPORT_VAL: the harness adds the value to the key's total). sim_main
 * prints the totals at exit as "fw.<name>" in its JSON report, and the end-to-end test compares
 * them with what the trace shows (e.g. DMA bytes moved, MACs per MATMUL).
 */
#ifndef TB_REPORT_H
#define TB_REPORT_H

#include <stdint.h>

#define TB_MMIO_BASE       0x20000000u
#define TB_MMIO_TOHOST     (TB_MMIO_BASE + 0x00u)
#define TB_MMIO_PUTC       (TB_MMIO_BASE + 0x04u)
#define TB_MMIO_CYCLE      (TB_MMIO_BASE + 0x08u)
#define TB_MMIO_CYCLEH     (TB_MMIO_BASE + 0x0Cu)
#define TB_MMIO_REPORT_KEY (TB_MMIO_BASE + 0x10u)
#define TB_MMIO_REPORT_VAL (TB_MMIO_BASE + 0x14u)

/* Scoreboard keys. Keep in step with kReportKeys in sim_main.cpp. */
#define TB_REPORT_NPU_CMDS      1u  /* descriptors pushed to CMD_PUSH */
#define TB_REPORT_DMA_BYTES     2u  /* data bytes requested by DMA_IN and DMA_OUT (4 * m * n) */
#define TB_REPORT_MACS          3u  /* sum of m * n * k over MATMUL commands */
#define TB_REPORT_MATMULS       4u  /* MATMUL commands */
#define TB_REPORT_VE_CMDS       5u  /* SOFTMAX, LAYERNORM and GELU commands */
#define TB_REPORT_DMA_CMDS      6u  /* DMA_IN and DMA_OUT commands */
#define TB_REPORT_CHECKS        7u  /* results compared with the golden model */
#define TB_REPORT_MISMATCHES    8u  /* ... that differed */
#define TB_REPORT_ISA_FAIL      9u  /* failing ISA self-test number (0: passed) */
#define TB_REPORT_CPU_CYCLES   10u  /* core cycles spent in the CPU-only workloads */
#define TB_REPORT_NPU_CYCLES   11u  /* core cycles from the first push to the last completion */

static inline void tb_mmio_write(uint32_t addr, uint32_t v) { *(volatile uint32_t *)addr = v; }
static inline uint32_t tb_mmio_read(uint32_t addr) { return *(volatile uint32_t *)addr; }

static inline void tb_report(uint32_t key, uint32_t value) {
  tb_mmio_write(TB_MMIO_REPORT_KEY, key);
  tb_mmio_write(TB_MMIO_REPORT_VAL, value);
}

#endif /* TB_REPORT_H */
