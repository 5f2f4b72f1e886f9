// npu protocol analysis over a cycle range of a µScope trace (issue 13 §1):
// the npu report of `uscope npu-report` (src/convert/report.*, the metrics of
// npu-trace-jsonl.md §7: engine busy time and utilization, DMA bandwidth,
// SRAM conflicts, the phase summary), measured by the same code over the
// same paired events, plus command latency percentiles.
//
// The whole trace (start 0, end UINT64_MAX) gives npu-report's figures
// exactly: T runs from the first to the last npu event. A range [start, end]
// (cycles of the npu scope's clock, clamped to the trace) is measured by
// Report::set_window: T is end - start, TE / VE / DRAM busy spans are cut to
// it, commands and DMA transfers count when they end in it, whole. The
// events are read from the trace's first segment (a command that ends in
// the range may have started long before) up to the one holding end, in
// bounded memory: the pairer holds the STARTs still open and the report
// folds busy spans as it goes (report.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/latency_stats.hpp"
#include "convert/report.hpp"

namespace uscope {
class TraceReader;
}

namespace uscope::analysis {

struct NpuOptions {
  uint64_t start_cycle = 0;
  uint64_t end_cycle = UINT64_MAX;
};

struct NpuEngine {
  convert::Report::Engine e;
  double utilization = 0;  // busy / T
};

struct NpuReport {
  bool whole = true;     // npu-report's window: the first to the last event
  bool clamped = false;  // the range asked for went past the trace
  uint64_t start_cycle = 0, end_cycle = 0, range_cycles = 0;  // T
  uint64_t max_cycle = 0, period_ps = 1000;
  std::vector<NpuEngine> engines;
  std::vector<convert::Report::PhaseFigures> phases;
  uint64_t dma_transfers = 0, dma_bytes = 0;
  double dma_bytes_per_cycle = 0;
  uint64_t sram_accesses = 0, sram_conflicts = 0;
  LatencyStats command_latency{65536};  // CMD_START to CMD_END of the commands counted
  std::string text, json;               // Report::render of the same figures
};

// Throws Error(NOT_FOUND) "this trace has no npu protocol scope".
void require_npu(const TraceReader &r);
// Also Error(SCHEMA / CORRUPT) from the npu scope's source (UscopeIn), and
// INVALID_ARGUMENT for start > end.
NpuReport analyze_npu(TraceReader &r, const NpuOptions &o);

}  // namespace uscope::analysis
