// The JSON of the analysis reports and of a trace's schema (analysis_json.hpp).
#include "analysis_json.hpp"

#include <iterator>

#include "cli_cpu.hpp"
#include "protocol/noc_table.hpp"

namespace uscope_cli {
namespace {

// A name, or "" for a missing one in the MCP style (null in the CLI's).
const char *name_or(const char *n, const AnalysisJsonOptions &o) { return n || !o.mcp ? n : ""; }

void real_json(Json &j, const char *key, double v, const AnalysisJsonOptions &o) {
  j.key(key);
  if (o.mcp) j.real(v);
  else j.fixed(v, 6);
}

// A field's or property's entry of the schema.
void schema_field_json(Json &j, const uscope_field_info_t &f, const char *type_key, bool prop) {
  j.begin_object();
  j.field("name", f.name);
  j.field(type_key, field_type_name(f.type));
  if (prop) {
    j.field("role", role_name(f.role));
    j.field("pair_id", f.pair_id);
  }
  j.end_object();
}

}  // namespace

void latency_json(Json &j, const char *key, const uscope_latency_t &l, const AnalysisJsonOptions &o) {
  j.key(key);
  j.begin_object();
  j.field("count", l.count);
  if (l.count || !o.mcp) {
    j.field("min", l.min);
    j.field("max", l.max);
    real_json(j, "mean", l.mean, o);
    j.field("p50", l.p50);
    j.field("p90", l.p90);
    j.field("p99", l.p99);
    j.field("exact", l.exact != 0);
  }
  j.end_object();
}

void noc_counts_json(Json &j, const uscope_noc_counts_t &c) {
  j.field("completed", c.completed);
  j.field("unknown_issue", c.unknown_issue);
  j.field("retries", c.retries);
  j.field("timeouts", c.timeouts);
  j.field("credit_stalls", c.credit_stalls);
}

void noc_scope_json(Json &j, const uscope_noc_scope_stats_t &s, const AnalysisJsonOptions &o) {
  j.begin_object();
  j.field("name", name_or(s.name, o));
  if (o.detail) j.field("scope_id", static_cast<uint32_t>(s.scope_id));
  j.field("period_ps", s.period_ps);
  j.field("in_flight", s.in_flight);
  noc_counts_json(j, s.counts);
  latency_json(j, "latency", s.latency, o);
  j.end_object();
}

void noc_pair_json(Json &j, const uscope_noc_report_t &r, const uscope_noc_pair_stats_t &p,
                   const AnalysisJsonOptions &o) {
  j.begin_object();
  j.field("scope", name_or(p.scope < r.num_scopes ? r.scopes[p.scope].name : nullptr, o));
  j.field("src_port", p.src_port);
  j.field("dst_port", p.dst_port);
  noc_counts_json(j, p.counts);
  latency_json(j, "latency", p.latency, o);
  j.end_object();
}

void noc_port_json(Json &j, const uscope_noc_report_t &r, const uscope_noc_port_credits_t &p,
                   const AnalysisJsonOptions &o) {
  const char *noc = p.scope < r.num_scopes ? r.scopes[p.scope].name : nullptr;
  j.begin_object();
  if (o.mcp) {
    j.field("scope", name_or(noc, o));
    j.field("where", name_or(p.where, o));
  } else {
    j.field("scope", p.where);
    j.field("noc", noc);
  }
  j.field("port", p.port);
  j.field("grants", p.grants);
  j.field("consumes", p.consumes);
  j.field("credits_granted", p.credits_granted);
  j.field("credits_consumed", p.credits_consumed);
  j.end_object();
}

void noc_report_json(Json &j, const uscope_noc_report_t &r, const AnalysisJsonOptions &o) {
  namespace noc = uscope::proto::noc;
  j.begin_object();
  j.field("start_cycle", r.start_cycle);
  j.field("end_cycle", r.end_cycle);
  j.field("max_cycle", r.max_cycle);
  if (o.detail) j.field("clamped", r.clamped != 0);
  j.field("period_ps", r.period_ps);
  noc_counts_json(j, r.counts);
  j.field("in_flight", r.in_flight);
  j.field("handoffs", r.handoffs);
  j.field("multi_hop", r.multi_hop);
  j.key("retries_by_reason");
  j.begin_object();
  for (size_t i = 0; i < std::size(noc::kRetryReasons); ++i) j.field(noc::kRetryReasons[i], r.retries_by_reason[i]);
  j.end_object();
  latency_json(j, "latency", r.latency, o);
  latency_json(j, "end_to_end", r.end_to_end, o);
  j.key("scopes");
  j.begin_array();
  for (uint32_t i = 0; i < r.num_scopes; ++i) noc_scope_json(j, r.scopes[i], o);
  j.end_array();
  if (o.detail) {
    j.key("pairs");
    j.begin_array();
    for (uint32_t i = 0; i < r.num_pairs; ++i) noc_pair_json(j, r, r.pairs[i], o);
    j.end_array();
    j.key("ports");
    j.begin_array();
    for (uint32_t i = 0; i < r.num_ports; ++i) noc_port_json(j, r, r.ports[i], o);
    j.end_array();
  }
  j.end_object();
}

void npu_engines_json(Json &j, const uscope_npu_report_t &r, const AnalysisJsonOptions &o) {
  j.key("engines");
  j.begin_array();
  for (uint32_t i = 0; i < r.num_engines; ++i) {
    const uscope_npu_engine_t &e = r.engines[i];
    j.begin_object();
    j.field("name", name_or(e.name, o));
    if (o.mcp && e.channel != UINT32_MAX) j.field("channel", e.channel);
    j.field("jobs", e.jobs);
    j.field("busy_cycles", e.busy_cycles);
    real_json(j, "utilization", e.utilization, o);
    j.end_object();
  }
  j.end_array();
}

void counter_summaries_json(Json &j, const uscope_perf_report_t &p,
                            const std::function<std::string(uint32_t)> &counter_name) {
  j.key("counter_summaries");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_counters; ++i) {
    const uscope_counter_summary_t &s = p.counters[i];
    j.begin_object();
    j.field("name", counter_name(s.counter));
    j.field("start_value", s.start_value);
    j.field("end_value", s.end_value);
    j.field("delta", s.delta);
    j.field("rate_per_cycle", s.rate_per_cycle);
    j.end_object();
  }
  j.end_array();
}

void buffer_samples_json(Json &j, const uscope_buffer_snapshot_t &b) {
  j.key("samples");
  j.begin_array();
  for (int k = 0; k < 3; ++k) {
    j.begin_object();
    j.field("cycle", b.cycle[k]);
    j.field("occupied", b.occupied[k]);
    j.field("capacity", b.capacity);
    j.field("fill_percent", b.fill_percent[k]);
    j.end_object();
  }
  j.end_array();
}

void stage_latencies_json(Json &j, const uscope_perf_report_t &p,
                          const std::function<std::string(uint32_t)> &stage_name) {
  j.key("stage_latencies");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_stages; ++i) {
    const uscope_stage_latency_t &s = p.stages[i];
    j.begin_object();
    j.field("name", stage_name(s.stage));
    j.field("total_cycles", s.total_cycles);
    j.field("instruction_count", s.count);
    j.field("avg_latency", s.avg_latency);
    j.end_object();
  }
  j.end_array();
}

void clocks_json(Json &j, const Trace &t) {
  const uint32_t n = t.counts().clocks;
  j.begin_array();
  for (uint32_t k = 0; k < n; ++k) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), &ck, k), "clock");
    j.begin_object();
    j.field("name", ck.name);
    j.field("period_ps", ck.period_ps);
    j.end_object();
  }
  j.end_array();
}

void schema_json(Json &j, const Trace &t, const char *type_key, bool enums) {
  const auto c = t.counts();
  j.key("schema");
  j.begin_object();
  j.key("storages");
  j.begin_array();
  for (uint32_t k = 0; k < c.storages; ++k) {
    const auto sid = static_cast<uint16_t>(k);
    const auto s = t.storage(sid);
    j.begin_object();
    j.field("name", s.name);
    j.field("storage_id", sid);
    j.field("num_slots", s.num_slots);
    j.key("fields");
    j.begin_array();
    for (uint16_t f = 0; f < s.num_fields; ++f) schema_field_json(j, t.field(sid, f, false), type_key, false);
    j.end_array();
    j.key("properties");
    j.begin_array();
    for (uint16_t f = 0; f < s.num_properties; ++f) schema_field_json(j, t.field(sid, f, true), type_key, true);
    j.end_array();
    j.key("flags");
    j.begin_array();
    if (s.flags & USCOPE_SF_SPARSE) j.str("sparse");
    if (s.flags & USCOPE_SF_BUFFER) j.str("buffer");
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("events");
  j.begin_array();
  for (uint32_t k = 0; k < c.event_types; ++k) {
    const auto id = static_cast<uint16_t>(k);
    const auto e = t.event_type(id);
    j.begin_object();
    j.field("name", e.name);
    j.field("event_type_id", id);
    j.key("fields");
    j.begin_array();
    for (uint16_t f = 0; f < e.num_fields; ++f) schema_field_json(j, t.event_field(id, f), type_key, false);
    j.end_array();
    j.end_object();
  }
  j.end_array();
  if (enums) {
    j.key("enums");
    j.begin_array();
    for (uint32_t k = 0; k < c.enums; ++k) {
      const char *name = nullptr;
      uint32_t n = 0;
      check(uscope_reader_enum(t.r(), &name, &n, k), "enum");
      j.begin_object();
      j.field("name", name);
      j.key("values");
      j.begin_array();
      for (uint32_t v = 0; v < n; ++v) {
        j.begin_object();
        j.field("value", v);
        j.field("name", t.enum_value(static_cast<uint8_t>(k), v));
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

void cpu_report_json(Json &j, const uscope_perf_report_t &p, const std::function<std::string(uint32_t)> &stage_name,
                     const std::function<std::string(uint32_t)> &counter_name,
                     const std::function<std::string(uint32_t)> &buffer_name) {
  j.field("start_cycle", p.start_cycle);
  j.field("end_cycle", p.end_cycle);
  j.field("range_cycles", p.range_cycles);
  j.key("instructions");
  j.begin_object();
  j.field("total", p.total);
  j.field("retired", p.retired);
  j.field("flushed", p.flushed);
  j.field("in_flight", p.in_flight);
  j.field("flush_rate", p.flush_rate);
  j.end_object();
  j.field("ipc", p.ipc);
  j.field("retired_in_range", p.retired_in_range);
  j.field("commit_ipc", p.commit_ipc);
  counter_summaries_json(j, p, counter_name);
  j.key("buffer_snapshots");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_buffers; ++i) {
    const auto &b = p.buffers[i];
    j.begin_object();
    j.field("name", buffer_name(b.buffer));
    j.field("capacity", b.capacity);
    buffer_samples_json(j, b);
    j.end_object();
  }
  j.end_array();
  stage_latencies_json(j, p, stage_name);
  j.key("stalls");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_stalls; ++i) {
    j.begin_object();
    j.field("reason", p.stalls[i].name ? p.stalls[i].name : std::to_string(p.stalls[i].reason).c_str());
    j.field("count", p.stalls[i].count);
    j.end_object();
  }
  j.end_array();
}

void npu_report_json(Json &j, const uscope_npu_report_t &r) {
  j.key("npu");
  j.begin_object();
  j.field("start_cycle", r.start_cycle);
  j.field("end_cycle", r.end_cycle);
  j.field("range_cycles", r.range_cycles);
  j.field("max_cycle", r.max_cycle);
  j.field("period_ps", r.period_ps);
  npu_engines_json(j, r);
  latency_json(j, "command_latency", r.command_latency);
  j.key("phases");
  j.begin_array();
  for (uint32_t i = 0; i < r.num_phases; ++i) {
    const uscope_npu_phase_t &p = r.phases[i];
    j.begin_object();
    j.field("name", p.name);
    j.field("commands", p.commands);
    j.field("total_cycles", p.total_cycles);
    j.field("min_cycles", p.min_cycles);
    j.field("max_cycles", p.max_cycles);
    j.key("mean_cycles");
    j.fixed(p.mean_cycles, 6);
    j.end_object();
  }
  j.end_array();
  j.key("dma");
  j.begin_object();
  j.field("transfers", r.dma_transfers);
  j.field("bytes", r.dma_bytes);
  j.key("bytes_per_cycle");
  j.fixed(r.dma_bytes_per_cycle, 6);
  j.end_object();
  j.key("sram");
  j.begin_object();
  j.field("accesses", r.sram_accesses);
  j.field("conflicts", r.sram_conflicts);
  j.end_object();
  j.end_object();
}

}  // namespace uscope_cli
