// extern "C" noc and npu analysis (include/uscope/analysis.h): thin wrappers
// over src/analysis/noc_analysis and npu_analysis, opened over a reader.
#include <cstring>
#include <string>
#include <vector>

#include "analysis/noc_analysis.hpp"
#include "capi/guard.hpp"
#include "capi/reader_handle.hpp"
#include "uscope/analysis.h"

// USCOPE_ANALYSIS_NPU (CMakeLists.txt): built with the npu converters, whose
// report the npu analysis measures with; without them its calls are
// USCOPE_ERR_UNSUPPORTED.
#if USCOPE_ANALYSIS_NPU
#include "analysis/npu_analysis.hpp"
#endif

namespace {

#define NEED(cond, ...) USCOPE_CHECK_ARG(cond, __VA_ARGS__)

uscope_latency_t latency_of(uscope::analysis::LatencyStats &l) {
  uscope_latency_t o{};
  o.count = l.count();
  o.min = l.min();
  o.max = l.max();
  o.p50 = l.percentile(50);
  o.p90 = l.percentile(90);
  o.p99 = l.percentile(99);
  o.mean = l.mean();
  o.exact = l.exact() ? 1 : 0;
  return o;
}

uscope_noc_counts_t counts_of(const uscope::analysis::NocCounts &c) {
  return {c.completed, c.unknown_issue, c.retries, c.timeouts, c.credit_stalls};
}

}  // namespace

struct uscope_noc_analysis {
  uscope_reader_t *reader;
  uscope::analysis::NocReport report;  // what the arrays below point into
  std::vector<uscope_noc_scope_stats_t> scopes;
  std::vector<uscope_noc_pair_stats_t> pairs;
  std::vector<uscope_noc_port_credits_t> ports;
};

USCOPE_API uscope_status_t uscope_noc_analysis_open(uscope_noc_analysis_t **out, uscope_reader_t *reader) {
  return uscope::guard([&] {
    NEED(out, "uscope_noc_analysis_open: out is NULL");
    NEED(reader, "uscope_noc_analysis_open: reader is NULL");
    uscope::analysis::require_noc(reader->impl);
    *out = new uscope_noc_analysis{reader, {}, {}, {}, {}};
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_noc_analysis_close(uscope_noc_analysis_t *a) { delete a; }

USCOPE_API uscope_status_t uscope_noc_analyze(uscope_noc_analysis_t *a, uscope_noc_report_t *out,
                                              uint64_t start_cycle, uint64_t end_cycle) {
  return uscope::guard([&] {
    NEED(a && out, "uscope_noc_analyze: NULL argument");
    NEED(out->struct_size >= sizeof *out, "uscope_noc_analyze: out->struct_size is %u, expected %zu",
         out->struct_size, sizeof *out);
    NEED(start_cycle <= end_cycle, "uscope_noc_analyze: the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(start_cycle), static_cast<unsigned long long>(end_cycle));
    uscope::analysis::NocOptions o;
    o.start_cycle = start_cycle;
    o.end_cycle = end_cycle;
    uscope::analysis::NocReport rep = uscope::analysis::analyze_noc(a->reader->impl, o);
    std::vector<uscope_noc_scope_stats_t> scopes;
    std::vector<uscope_noc_pair_stats_t> pairs;
    std::vector<uscope_noc_port_credits_t> ports;
    a->report = std::move(rep);
    uscope::analysis::NocReport &r = a->report;
    for (auto &s : r.scopes) {
      uscope_noc_scope_stats_t x{};
      x.name = s.name.c_str();
      x.scope_id = s.scope_id;
      x.period_ps = s.period_ps;
      x.in_flight = s.in_flight;
      x.counts = counts_of(s.counts);
      x.latency = latency_of(s.latency);
      scopes.push_back(x);
    }
    for (auto &p : r.pairs) {
      uscope_noc_pair_stats_t x{};
      x.scope = p.scope;
      x.src_port = p.src_port;
      x.dst_port = p.dst_port;
      x.counts = counts_of(p.counts);
      x.latency = latency_of(p.latency);
      pairs.push_back(x);
    }
    for (const auto &p : r.ports) {
      uscope_noc_port_credits_t x{};
      x.scope = p.scope;
      x.scope_id = p.scope_id;
      x.where = p.where.c_str();
      x.port = p.port;
      x.grants = p.grants;
      x.consumes = p.consumes;
      x.credits_granted = p.credits_granted;
      x.credits_consumed = p.credits_consumed;
      ports.push_back(x);
    }
    a->scopes.swap(scopes);
    a->pairs.swap(pairs);
    a->ports.swap(ports);

    uscope_noc_report_t o2{};
    o2.struct_size = sizeof o2;
    o2.clamped = r.clamped ? 1 : 0;
    o2.start_cycle = r.start_cycle;
    o2.end_cycle = r.end_cycle;
    o2.max_cycle = r.max_cycle;
    o2.period_ps = r.period_ps;
    o2.counts = counts_of(r.counts);
    o2.in_flight = r.in_flight;
    o2.handoffs = r.handoffs;
    o2.multi_hop = r.multi_hop;
    static_assert(sizeof o2.retries_by_reason == sizeof r.retry_reasons);
    std::memcpy(o2.retries_by_reason, r.retry_reasons, sizeof o2.retries_by_reason);
    o2.latency = latency_of(r.latency);
    o2.end_to_end = latency_of(r.end_to_end);
    o2.num_scopes = static_cast<uint32_t>(a->scopes.size());
    o2.num_pairs = static_cast<uint32_t>(a->pairs.size());
    o2.num_ports = static_cast<uint32_t>(a->ports.size());
    o2.segments_read = r.segments_read;
    o2.scopes = a->scopes.data();
    o2.pairs = a->pairs.data();
    o2.ports = a->ports.data();
    *out = o2;
    return USCOPE_OK;
  });
}

#if USCOPE_ANALYSIS_NPU

struct uscope_npu_analysis {
  uscope_reader_t *reader;
  uscope::analysis::NpuReport report;  // what the arrays below point into
  std::vector<uscope_npu_engine_t> engines;
  std::vector<uscope_npu_phase_t> phases;
};

USCOPE_API uscope_status_t uscope_npu_analysis_open(uscope_npu_analysis_t **out, uscope_reader_t *reader) {
  return uscope::guard([&] {
    NEED(out, "uscope_npu_analysis_open: out is NULL");
    NEED(reader, "uscope_npu_analysis_open: reader is NULL");
    uscope::analysis::require_npu(reader->impl);
    *out = new uscope_npu_analysis{reader, {}, {}, {}};
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_npu_analysis_close(uscope_npu_analysis_t *a) { delete a; }

USCOPE_API uscope_status_t uscope_npu_analyze(uscope_npu_analysis_t *a, uscope_npu_report_t *out,
                                              uint64_t start_cycle, uint64_t end_cycle) {
  return uscope::guard([&] {
    NEED(a && out, "uscope_npu_analyze: NULL argument");
    NEED(out->struct_size >= sizeof *out, "uscope_npu_analyze: out->struct_size is %u, expected %zu",
         out->struct_size, sizeof *out);
    NEED(start_cycle <= end_cycle, "uscope_npu_analyze: the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(start_cycle), static_cast<unsigned long long>(end_cycle));
    uscope::analysis::NpuOptions o;
    o.start_cycle = start_cycle;
    o.end_cycle = end_cycle;
    uscope::analysis::NpuReport rep = uscope::analysis::analyze_npu(a->reader->impl, o);
    a->report = std::move(rep);
    uscope::analysis::NpuReport &r = a->report;
    std::vector<uscope_npu_engine_t> engines;
    for (const auto &e : r.engines)
      engines.push_back({e.e.name.c_str(), static_cast<uint32_t>(e.e.kind), e.e.channel, e.e.jobs, e.e.busy,
                         e.utilization});
    std::vector<uscope_npu_phase_t> phases;
    for (const auto &p : r.phases)
      phases.push_back({p.name.c_str(), p.commands, p.total, p.min, p.max,
                        p.commands ? static_cast<double>(p.total) / static_cast<double>(p.commands) : 0.0});
    a->engines.swap(engines);
    a->phases.swap(phases);

    uscope_npu_report_t o2{};
    o2.struct_size = sizeof o2;
    o2.clamped = r.clamped ? 1 : 0;
    o2.start_cycle = r.start_cycle;
    o2.end_cycle = r.end_cycle;
    o2.range_cycles = r.range_cycles;
    o2.max_cycle = r.max_cycle;
    o2.period_ps = r.period_ps;
    o2.dma_transfers = r.dma_transfers;
    o2.dma_bytes = r.dma_bytes;
    o2.dma_bytes_per_cycle = r.dma_bytes_per_cycle;
    o2.sram_accesses = r.sram_accesses;
    o2.sram_conflicts = r.sram_conflicts;
    o2.command_latency = latency_of(r.command_latency);
    o2.num_engines = static_cast<uint32_t>(a->engines.size());
    o2.num_phases = static_cast<uint32_t>(a->phases.size());
    o2.engines = a->engines.data();
    o2.phases = a->phases.data();
    o2.text = r.text.c_str();
    o2.json = r.json.c_str();
    *out = o2;
    return USCOPE_OK;
  });
}

#else  // without the npu converters

USCOPE_API uscope_status_t uscope_npu_analysis_open(uscope_npu_analysis_t **out, uscope_reader_t *reader) {
  (void)out;
  (void)reader;
  return uscope::guard([&]() -> uscope_status_t {
    uscope::fail(USCOPE_ERR_UNSUPPORTED, "uscope_npu_analysis_open: this libuscope was built without the npu "
                                         "converters (USCOPE_WITH_NPU=OFF)");
  });
}

USCOPE_API void uscope_npu_analysis_close(uscope_npu_analysis_t *) {}

USCOPE_API uscope_status_t uscope_npu_analyze(uscope_npu_analysis_t *a, uscope_npu_report_t *out, uint64_t start_cycle,
                                              uint64_t end_cycle) {
  (void)a;
  (void)out;
  (void)start_cycle;
  (void)end_cycle;
  return uscope::guard([&]() -> uscope_status_t {
    uscope::fail(USCOPE_ERR_UNSUPPORTED, "uscope_npu_analyze: this libuscope was built without the npu "
                                         "converters (USCOPE_WITH_NPU=OFF)");
  });
}

#endif
