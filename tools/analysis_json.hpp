// The JSON of the analysis reports (analysis.h) and of a trace's schema,
// written once for the CLI commands (analyze, noc-latency, info) and the MCP
// server. Each writer takes the Json writer of cli_common.hpp and the C
// struct; the options say where the CLI's and the MCP server's answers
// differ (their keys are frozen by goldens and by MCP clients).
#pragma once

#include <uscope/analysis.h>

#include <cstdint>
#include <functional>
#include <string>

#include "cli_common.hpp"

namespace uscope_cli {

struct AnalysisJsonOptions {
  // The MCP server's style: reals in their shortest form (the CLI: 6
  // decimals), a latency of no transaction as {"count":0}, a missing name
  // as "", an npu engine's channel when it has one.
  bool mcp = false;
  // noc: the clamped flag, the scopes' ids and the pair and port tables
  // (noc-latency's report; analyze gives the summary).
  bool detail = true;
};

// key: {count, min, max, mean, p50, p90, p99, exact}.
void latency_json(Json &j, const char *key, const uscope_latency_t &l, const AnalysisJsonOptions &o = {});
// completed, unknown_issue, retries, timeouts, credit_stalls, as fields of the open object.
void noc_counts_json(Json &j, const uscope_noc_counts_t &c);
// One object of the "scopes" table.
void noc_scope_json(Json &j, const uscope_noc_scope_stats_t &s, const AnalysisJsonOptions &o = {});
// One object of the "pairs" table of r.
void noc_pair_json(Json &j, const uscope_noc_report_t &r, const uscope_noc_pair_stats_t &p,
                   const AnalysisJsonOptions &o = {});
// One object of the "ports" table of r: the CLI names the credit scope
// "scope" and the noc "noc", the MCP server the noc "scope" and the credit
// scope "where".
void noc_port_json(Json &j, const uscope_noc_report_t &r, const uscope_noc_port_credits_t &p,
                   const AnalysisJsonOptions &o = {});
// The CLI's noc report object (noc-latency --json; analyze's "noc" with detail off).
void noc_report_json(Json &j, const uscope_noc_report_t &r, const AnalysisJsonOptions &o = {});

// The "engines" key and array of an npu report.
void npu_engines_json(Json &j, const uscope_npu_report_t &r, const AnalysisJsonOptions &o = {});

// The "counter_summaries" key and array of a cpu report, counter names from counter_name.
void counter_summaries_json(Json &j, const uscope_perf_report_t &p,
                            const std::function<std::string(uint32_t)> &counter_name);
// The "samples" key of a cpu buffer snapshot: its three samples.
void buffer_samples_json(Json &j, const uscope_buffer_snapshot_t &b);
// The "stage_latencies" key and array of a cpu report, stage names from stage_name.
void stage_latencies_json(Json &j, const uscope_perf_report_t &p,
                          const std::function<std::string(uint32_t)> &stage_name);

// The cpu figures of analyze (analyze_performance's keys), as fields of the
// open object j; names of stages, counters and buffers by index.
void cpu_report_json(Json &j, const uscope_perf_report_t &p, const std::function<std::string(uint32_t)> &stage_name,
                     const std::function<std::string(uint32_t)> &counter_name,
                     const std::function<std::string(uint32_t)> &buffer_name);
// The "npu" key and object of analyze: engines, command latency, phases, dma, sram.
void npu_report_json(Json &j, const uscope_npu_report_t &r);

// The "schema" key and object of a trace: storages (fields, properties,
// flags), event types (fields) and, with enums, the enums with their values.
// type_key names a field's type ("field_type" in info, "type" in MCP).
void schema_json(Json &j, const Trace &t, const char *type_key, bool enums);
// The clock domains as [{"name", "period_ps"}] (info, view).
void clocks_json(Json &j, const Trace &t);

}  // namespace uscope_cli
