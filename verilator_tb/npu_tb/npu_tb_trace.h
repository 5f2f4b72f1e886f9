// npu_tb_trace: µScope tracing of the NPU unit testbench, and the check of the trace it made.
//
// Built with NPU_TB_TRACE (the model then has the RTL's tracing hooks, -DUSCOPE_TRACE): --trace
// FILE declares an npu0 scope with the npu protocol helpers, registers "writer" and "npu0" for
// uscope_pkg::uscope_handle(), and frames every clock edge. Without --trace nothing is
// registered, the hooks see null handles and make no DPI call. Without NPU_TB_TRACE every call
// is a no-op.
#ifndef NPU_TB_TRACE_H
#define NPU_TB_TRACE_H
#include <cstdint>

struct npu_tb_tracer_t;

// Expected totals, from the harness's model and the NPU's perf registers.
struct npu_tb_expect_t {
  uint64_t commands;   // CMD_PUSH writes
  uint64_t macs;       // PERF_MACS
  uint64_t dma_bytes;  // PERF_DMA_BYTES
  uint64_t conflicts;  // PERF_CONFLICTS
};

// NULL path: no tracing (returns NULL). Exits the program on a set-up failure.
npu_tb_tracer_t *npu_tb_trace_open(const char *path);
void npu_tb_trace_begin(npu_tb_tracer_t *t, uint64_t time_ps);
void npu_tb_trace_end(npu_tb_tracer_t *t);
// Finishes the file, reads it back and compares it with `e`; returns the number of mismatches
// (0 when not tracing).
int npu_tb_trace_check(npu_tb_tracer_t *t, const npu_tb_expect_t &e);
void npu_tb_trace_close(npu_tb_tracer_t *t);
// A tracing hook's call failed (status < 0); counted, and the first few are printed.
void npu_tb_trace_hook_error(int status);
#endif
