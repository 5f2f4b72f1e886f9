// uscope analyze FILE [--range A:B] [--json | --format csv]: the
// performance of every cpu, noc and npu protocol scope of a trace, over a
// cycle range (default: the whole trace). A trace with none of them is an
// error (exit 1).
//
// cpu (uscope_cpu_trace_analyze, over [A, B)): instructions fetched in the
// range and how they ended, IPC, flush rate, each counter's change and rate,
// each buffer's occupancy at the start, middle and end, the average cycles
// per pipeline stage (the bottleneck first) and the stall reasons the trace
// records (the most frequent first).
// noc (uscope_noc_analyze, over [A, B] of the first noc scope's clock):
// transactions completed, in flight, retries, timeouts, credit stalls, hop
// and end-to-end latency percentiles, and the same per noc scope.
// npu (uscope_npu_analyze, over [A, B] of the npu scope's clock): each
// engine's jobs, busy cycles and utilization, command latency percentiles,
// the phases, DMA transfers and bytes, SRAM accesses and conflicts.
// A range past the end is cut at the last cycle, with a warning.
//
// JSON: the cpu figures at the top level, with the keys of the reference
// uscope-mcp's analyze_performance: start_cycle, end_cycle, range_cycles,
// instructions{total, retired, flushed, in_flight, flush_rate}, ipc,
// counter_summaries[{name, start_value, end_value, delta, rate_per_cycle}],
// buffer_snapshots[{name, samples[{cycle, occupied, capacity,
// fill_percent}]}], stage_latencies[{name, total_cycles, instruction_count,
// avg_latency}], plus retired_in_range, commit_ipc (instructions retired in
// the range, whenever fetched) and stalls[{reason, count}]; then "noc" and
// "npu" objects when the trace has those scopes. CSV: every figure as one
// row of section,name,cycle,metric,value (sections noc, noc_scope, npu,
// npu_engine, npu_phase after the cpu ones).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include "analysis_json.hpp"
#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

void cpu_csv(Csv &csv, const CpuTrace &c, const uscope_perf_report_t &p, const std::vector<uscope_counter_info_t> &ctr,
             const std::vector<uscope_buffer_info_t> &buf) {
  const auto row = [&](const char *section, const std::string &name, const std::string &cycle, const char *metric,
                       const std::string &value) { csv.row({section, name, cycle, metric, value}); };
  row("range", "", "", "start_cycle", cell(p.start_cycle));
  row("range", "", "", "end_cycle", cell(p.end_cycle));
  row("range", "", "", "range_cycles", cell(p.range_cycles));
  row("instructions", "", "", "total", cell(p.total));
  row("instructions", "", "", "retired", cell(p.retired));
  row("instructions", "", "", "flushed", cell(p.flushed));
  row("instructions", "", "", "in_flight", cell(p.in_flight));
  row("instructions", "", "", "flush_rate", cell(p.flush_rate));
  row("instructions", "", "", "ipc", cell(p.ipc));
  row("instructions", "", "", "retired_in_range", cell(p.retired_in_range));
  row("instructions", "", "", "commit_ipc", cell(p.commit_ipc));
  for (uint32_t i = 0; i < p.num_counters; ++i) {
    const auto &s = p.counters[i];
    const std::string n = s.counter < ctr.size() ? ctr[s.counter].name : "?";
    row("counter", n, "", "start_value", cell(s.start_value));
    row("counter", n, "", "end_value", cell(s.end_value));
    row("counter", n, "", "delta", cell(s.delta));
    row("counter", n, "", "rate_per_cycle", cell(s.rate_per_cycle));
  }
  for (uint32_t i = 0; i < p.num_buffers; ++i) {
    const auto &b = p.buffers[i];
    const std::string n = b.buffer < buf.size() ? buf[b.buffer].name : "?";
    for (int k = 0; k < 3; ++k) {
      row("buffer", n, cell(b.cycle[k]), "occupied", cell(uint64_t{b.occupied[k]}));
      row("buffer", n, cell(b.cycle[k]), "fill_percent", cell(b.fill_percent[k]));
    }
  }
  for (uint32_t i = 0; i < p.num_stages; ++i) {
    const auto &s = p.stages[i];
    row("stage", c.stage(s.stage), "", "total_cycles", cell(s.total_cycles));
    row("stage", c.stage(s.stage), "", "instruction_count", cell(s.count));
    row("stage", c.stage(s.stage), "", "avg_latency", cell(s.avg_latency));
  }
  for (uint32_t i = 0; i < p.num_stalls; ++i)
    row("stall", p.stalls[i].name ? p.stalls[i].name : std::to_string(p.stalls[i].reason), "", "count",
        cell(p.stalls[i].count));
}

void cpu_text(const CpuTrace &c, const uscope_perf_report_t &p, const std::vector<uscope_counter_info_t> &ctr,
                const std::vector<uscope_buffer_info_t> &buf) {
  std::printf("=== Performance of %s, cycles %" PRIu64 " to %" PRIu64 " (%s cycles) ===\n\n", c.info().scope_name,
              p.start_cycle, p.end_cycle, grouped(p.range_cycles).c_str());
  std::printf("Instructions fetched in the range: %s\n", grouped(p.total).c_str());
  std::printf("  retired    %s\n  flushed    %s (%.1f%%)\n  in flight  %s\n", grouped(p.retired).c_str(),
              grouped(p.flushed).c_str(), 100.0 * p.flush_rate, grouped(p.in_flight).c_str());
  std::printf("IPC: %.3f (those retired / cycles)\n", p.ipc);
  std::printf("Retired in the range: %s, commit IPC %.3f (whatever their fetch cycle)\n\n",
              grouped(p.retired_in_range).c_str(), p.commit_ipc);
  if (p.num_stages) {
    std::printf("--- Stage latency (cycles per instruction, bottleneck first) ---\n");
    std::printf("  %-20s %10s %12s %14s\n", "Stage", "Average", "Instructions", "Total cycles");
    for (uint32_t i = 0; i < p.num_stages; ++i) {
      const auto &s = p.stages[i];
      std::printf("  %-20s %10.2f %12s %14s\n", c.stage(s.stage).c_str(), s.avg_latency, grouped(s.count).c_str(),
                  grouped(s.total_cycles).c_str());
    }
    std::printf("\n");
  }
  if (p.num_stalls) {
    std::printf("--- Stalls (most frequent first) ---\n");
    for (uint32_t i = 0; i < p.num_stalls; ++i)
      std::printf("  %-20s %s\n", p.stalls[i].name ? p.stalls[i].name : std::to_string(p.stalls[i].reason).c_str(),
                  grouped(p.stalls[i].count).c_str());
    std::printf("\n");
  }
  if (p.num_counters) {
    std::printf("--- Counters ---\n");
    std::printf("  %-24s %14s %14s %12s %10s\n", "Counter", "Start", "End", "Delta", "Per cycle");
    for (uint32_t i = 0; i < p.num_counters; ++i) {
      const auto &s = p.counters[i];
      std::printf("  %-24s %14" PRIu64 " %14" PRIu64 " %12" PRIu64 " %10.4f\n",
                  s.counter < ctr.size() ? ctr[s.counter].name : "?", s.start_value, s.end_value, s.delta,
                  s.rate_per_cycle);
    }
    std::printf("\n");
  }
  if (p.num_buffers) {
    std::printf("--- Buffer occupancy (start / middle / end) ---\n");
    for (uint32_t i = 0; i < p.num_buffers; ++i) {
      const auto &b = p.buffers[i];
      std::printf("  %-20s capacity %-5u", b.buffer < buf.size() ? buf[b.buffer].name : "?", b.capacity);
      for (int k = 0; k < 3; ++k)
        std::printf("  @%" PRIu64 ": %u (%.1f%%)", b.cycle[k], b.occupied[k], b.fill_percent[k]);
      std::printf("\n");
    }
    std::printf("\n");
  }
}

// ── noc and npu sections ──────────────────────────────────────────────

void latency_csv(Csv &csv, const char *section, const std::string &name, const char *prefix,
                 const uscope_latency_t &l) {
  const std::string p = prefix;
  csv.row({section, name, "", p + "count", cell(l.count)});
  csv.row({section, name, "", p + "min", cell(l.min)});
  csv.row({section, name, "", p + "mean", cell(l.mean)});
  csv.row({section, name, "", p + "p50", cell(l.p50)});
  csv.row({section, name, "", p + "p90", cell(l.p90)});
  csv.row({section, name, "", p + "p99", cell(l.p99)});
  csv.row({section, name, "", p + "max", cell(l.max)});
  csv.row({section, name, "", p + "exact", cell(uint64_t{l.exact})});
}

// "count 0", or count, mean and percentiles ("~": from the histogram).
std::string latency_text(const uscope_latency_t &l) {
  if (!l.count) return "count 0";
  char b[256];
  const char *a = l.exact ? "" : "~";
  std::snprintf(b, sizeof b,
                "count %" PRIu64 "  mean %.2f  min %" PRIu64 "  p50 %s%" PRIu64 "  p90 %s%" PRIu64 "  p99 %s%" PRIu64
                "  max %" PRIu64,
                l.count, l.mean, l.min, a, l.p50, a, l.p90, a, l.p99, l.max);
  return b;
}

void noc_counts_csv(Csv &csv, const char *section, const std::string &name, const uscope_noc_counts_t &c) {
  csv.row({section, name, "", "completed", cell(c.completed)});
  csv.row({section, name, "", "unknown_issue", cell(c.unknown_issue)});
  csv.row({section, name, "", "retries", cell(c.retries)});
  csv.row({section, name, "", "timeouts", cell(c.timeouts)});
  csv.row({section, name, "", "credit_stalls", cell(c.credit_stalls)});
}

void noc_json(Json &j, const uscope_noc_report_t &r) {
  j.key("noc");
  AnalysisJsonOptions o;
  o.detail = false;
  noc_report_json(j, r, o);
}

void noc_csv(Csv &csv, const uscope_noc_report_t &r) {
  csv.row({"noc", "", "", "start_cycle", cell(r.start_cycle)});
  csv.row({"noc", "", "", "end_cycle", cell(r.end_cycle)});
  noc_counts_csv(csv, "noc", "", r.counts);
  csv.row({"noc", "", "", "in_flight", cell(r.in_flight)});
  csv.row({"noc", "", "", "handoffs", cell(r.handoffs)});
  csv.row({"noc", "", "", "multi_hop", cell(r.multi_hop)});
  latency_csv(csv, "noc", "", "latency_", r.latency);
  latency_csv(csv, "noc", "", "end_to_end_", r.end_to_end);
  for (uint32_t i = 0; i < r.num_scopes; ++i) {
    const uscope_noc_scope_stats_t &s = r.scopes[i];
    csv.row({"noc_scope", s.name, "", "in_flight", cell(s.in_flight)});
    noc_counts_csv(csv, "noc_scope", s.name, s.counts);
    latency_csv(csv, "noc_scope", s.name, "latency_", s.latency);
  }
}

void noc_text(const uscope_noc_report_t &r) {
  std::printf("=== noc, cycles %" PRIu64 " to %" PRIu64 " (of %s's clock, %" PRIu64 " ps) ===\n\n", r.start_cycle,
              r.end_cycle, r.num_scopes ? r.scopes[0].name : "-", r.period_ps);
  std::printf("Transactions completed: %s, in flight at the end: %s", grouped(r.counts.completed).c_str(),
              grouped(r.in_flight).c_str());
  if (r.counts.unknown_issue)
    std::printf(", issued before what was read (no latency): %s", grouped(r.counts.unknown_issue).c_str());
  std::printf("\nHop latency:        %s\n", latency_text(r.latency).c_str());
  std::printf("End-to-end latency: %s  (%s across handoffs)\n", latency_text(r.end_to_end).c_str(),
              grouped(r.multi_hop).c_str());
  std::printf("Retries %s, timeouts %s, credit stalls %s\n\n", grouped(r.counts.retries).c_str(),
              grouped(r.counts.timeouts).c_str(), grouped(r.counts.credit_stalls).c_str());
  std::printf("--- Per scope (latencies in its own clock's cycles) ---\n");
  std::printf("  %-16s %9s %9s %10s %8s %8s %8s %8s %8s %9s\n", "Scope", "Completed", "In flight", "Mean", "p50",
              "p90", "p99", "Max", "Retries", "Timeouts");
  for (uint32_t i = 0; i < r.num_scopes; ++i) {
    const uscope_noc_scope_stats_t &s = r.scopes[i];
    std::printf("  %-16s %9" PRIu64 " %9" PRIu64 " %10.2f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
                " %8" PRIu64 " %9" PRIu64 "\n",
                s.name, s.counts.completed, s.in_flight, s.latency.mean, s.latency.p50, s.latency.p90,
                s.latency.p99, s.latency.max, s.counts.retries, s.counts.timeouts);
  }
  std::printf("\n");
}

void npu_csv(Csv &csv, const uscope_npu_report_t &r) {
  csv.row({"npu", "", "", "start_cycle", cell(r.start_cycle)});
  csv.row({"npu", "", "", "end_cycle", cell(r.end_cycle)});
  csv.row({"npu", "", "", "range_cycles", cell(r.range_cycles)});
  for (uint32_t i = 0; i < r.num_engines; ++i) {
    const uscope_npu_engine_t &e = r.engines[i];
    csv.row({"npu_engine", e.name, "", "jobs", cell(e.jobs)});
    csv.row({"npu_engine", e.name, "", "busy_cycles", cell(e.busy_cycles)});
    csv.row({"npu_engine", e.name, "", "utilization", cell(e.utilization)});
  }
  latency_csv(csv, "npu", "", "command_latency_", r.command_latency);
  for (uint32_t i = 0; i < r.num_phases; ++i) {
    const uscope_npu_phase_t &p = r.phases[i];
    csv.row({"npu_phase", p.name, "", "commands", cell(p.commands)});
    csv.row({"npu_phase", p.name, "", "total_cycles", cell(p.total_cycles)});
    csv.row({"npu_phase", p.name, "", "min_cycles", cell(p.min_cycles)});
    csv.row({"npu_phase", p.name, "", "max_cycles", cell(p.max_cycles)});
    csv.row({"npu_phase", p.name, "", "mean_cycles", cell(p.mean_cycles)});
  }
  csv.row({"npu", "", "", "dma_transfers", cell(r.dma_transfers)});
  csv.row({"npu", "", "", "dma_bytes", cell(r.dma_bytes)});
  csv.row({"npu", "", "", "dma_bytes_per_cycle", cell(r.dma_bytes_per_cycle)});
  csv.row({"npu", "", "", "sram_accesses", cell(r.sram_accesses)});
  csv.row({"npu", "", "", "sram_conflicts", cell(r.sram_conflicts)});
}

void npu_text(const uscope_npu_report_t &r) {
  std::printf("=== npu, cycles %" PRIu64 " to %" PRIu64 " (%s cycles of %" PRIu64 " ps) ===\n\n", r.start_cycle,
              r.end_cycle, grouped(r.range_cycles).c_str(), r.period_ps);
  std::printf("--- Engines ---\n");
  std::printf("  %-10s %8s %14s %12s\n", "Engine", "Jobs", "Busy cycles", "Utilization");
  for (uint32_t i = 0; i < r.num_engines; ++i) {
    const uscope_npu_engine_t &e = r.engines[i];
    std::printf("  %-10s %8" PRIu64 " %14s %11.1f%%\n", e.name, e.jobs, grouped(e.busy_cycles).c_str(),
                100.0 * e.utilization);
  }
  std::printf("\nCommand latency: %s\n\n", latency_text(r.command_latency).c_str());
  if (r.num_phases) {
    std::printf("--- Phases ---\n");
    std::printf("  %-16s %9s %14s %10s %10s %10s\n", "Phase", "Commands", "Total cycles", "Mean", "Min", "Max");
    for (uint32_t i = 0; i < r.num_phases; ++i) {
      const uscope_npu_phase_t &p = r.phases[i];
      std::printf("  %-16s %9" PRIu64 " %14s %10.2f %10" PRIu64 " %10" PRIu64 "\n", p.name, p.commands,
                  grouped(p.total_cycles).c_str(), p.mean_cycles, p.min_cycles, p.max_cycles);
    }
    std::printf("\n");
  }
  std::printf("DMA: %s transfers, %s bytes (%.2f bytes/cycle)\n", grouped(r.dma_transfers).c_str(),
              grouped(r.dma_bytes).c_str(), r.dma_bytes_per_cycle);
  std::printf("SRAM: %s accesses, %s conflicts\n\n", grouped(r.sram_accesses).c_str(),
              grouped(r.sram_conflicts).c_str());
}

struct NocAnalysis {
  uscope_noc_analysis_t *a = nullptr;
  ~NocAnalysis() { uscope_noc_analysis_close(a); }
};
struct NpuAnalysis {
  uscope_npu_analysis_t *a = nullptr;
  ~NpuAnalysis() { uscope_npu_analysis_close(a); }
};

class Analyze final : public TraceCommand {
 public:
  Analyze()
      : TraceCommand("analyze",
                     "performance of every cpu, noc and npu protocol scope: IPC, flushes, stage latencies, stalls, "
                     "counters; noc transaction latencies; npu engine utilization and command latencies",
                     "trace file (.uscope) with a cpu, noc or npu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_option("--range", range_text_,
                   "cycles START:END to analyze (START < END; cpu: [START, END); noc and npu: [START, END] of "
                   "their scope's clock). Default: the whole trace")
        ->type_name("START:END");
    format_.add(sub, true);
    sub.footer(
        "JSON: the cpu scope's figures at the top level, {start_cycle, end_cycle, range_cycles,\n"
        "instructions{total, retired, flushed, in_flight, flush_rate}, ipc, counter_summaries[],\n"
        "buffer_snapshots[], stage_latencies[], stalls[]} (the reference uscope-mcp's analyze_performance,\n"
        "plus stalls), then \"noc\" {counts, latency, end_to_end, scopes[]} and \"npu\" {engines[],\n"
        "command_latency, phases[], dma, sram} when the trace has those scopes.\n"
        "CSV: section,name,cycle,metric,value. Example: uscope analyze trace.uscope --range 100:500");
  }
  bool before_open() override {
    format_.get();
    if (!range_text_.empty()) {
      range_ = parse_range(range_text_, "--range");
      if (range_.start == range_.end) throw Usage("analyze --range " + range_text_ + ": expected START < END");
    }
    return false;
  }
  void read(const Trace &t) override {
    const bool cpu = has_cpu_scope(t), has_noc = has_protocol(t, "noc"), has_npu = has_protocol(t, "npu");
    if (!cpu && !has_noc && !has_npu) throw Failure("this trace has no cpu, noc or npu protocol scope");
    const bool ranged = !range_text_.empty();
    const std::string what = "analyze --range " + range_text_;

    // Every analysis runs before anything is printed: an error prints nothing.
    std::unique_ptr<CpuTrace> c;
    uscope_perf_report_t p{};
    std::vector<uscope_counter_info_t> ctr;
    std::vector<uscope_buffer_info_t> buf;
    if (cpu) {
      c = std::make_unique<CpuTrace>(t);
      CycleRange r{0, c->max_cycle()};
      if (ranged) {
        r = clamp_range(range_, c->max_cycle(), what);
        if (r.start >= r.end)
          throw Failure(what + " starts at or past the trace's last cycle (" + std::to_string(c->max_cycle()) +
                        "): nothing to analyze");
      }
      p.struct_size = sizeof p;
      check(uscope_cpu_trace_analyze(c->h(), &p, r.start, r.end), "analyze");
      ctr = c->counters();
      buf = c->buffers();
    }
    const uint64_t a = ranged ? range_.start : 0, b = ranged ? range_.end : UINT64_MAX;
    NocAnalysis na;
    uscope_noc_report_t nr{};
    if (has_noc) {
      check(uscope_noc_analysis_open(&na.a, t.r()), "analyze (noc)");
      nr.struct_size = sizeof nr;
      check(uscope_noc_analyze(na.a, &nr, a, b), "analyze (noc)");
      if (nr.clamped && ranged)
        std::fprintf(stderr, "uscope: warning: %s reaches past the end of the noc scopes (cycle %" PRIu64
                     "); analyzing %" PRIu64 ":%" PRIu64 "\n", what.c_str(), nr.max_cycle, nr.start_cycle, nr.end_cycle);
    }
    NpuAnalysis pa;
    uscope_npu_report_t pr{};
    bool npu = has_npu;
    if (npu) {
      const uscope_status_t st = uscope_npu_analysis_open(&pa.a, t.r());
      if (st == USCOPE_ERR_UNSUPPORTED) {  // a build without the npu part (USCOPE_WITH_NPU=OFF)
        std::fprintf(stderr, "uscope: warning: analyze: the npu scope is left out: %s\n", uscope_last_error());
        npu = false;
      } else {
        check(st, "analyze (npu)");
      }
    }
    if (npu) {
      pr.struct_size = sizeof pr;
      check(uscope_npu_analyze(pa.a, &pr, a, b), "analyze (npu)");
      if (pr.clamped && ranged)
        std::fprintf(stderr, "uscope: warning: %s reaches past the end of the npu scope (cycle %" PRIu64
                     "); analyzing %" PRIu64 ":%" PRIu64 "\n", what.c_str(), pr.max_cycle, pr.start_cycle, pr.end_cycle);
    }

    switch (format_.get()) {
      case Format::kJson: {
        Json j;
        j.begin_object();
        if (cpu)
          cpu_report_json(
              j, p, [&](uint32_t stage) { return c->stage(stage); },
              [&](uint32_t k) -> std::string { return k < ctr.size() ? (ctr[k].name ? ctr[k].name : "") : "?"; },
              [&](uint32_t i) -> std::string { return i < buf.size() && buf[i].name ? buf[i].name : "?"; });
        if (has_noc) noc_json(j, nr);
        if (npu) npu_report_json(j, pr);
        j.end_object();
        j.end();
        break;
      }
      case Format::kCsv: {
        Csv csv;
        csv.row({"section", "name", "cycle", "metric", "value"});
        if (cpu) cpu_csv(csv, *c, p, ctr, buf);
        if (has_noc) noc_csv(csv, nr);
        if (npu) npu_csv(csv, pr);
        break;
      }
      case Format::kTable:
        if (cpu) cpu_text(*c, p, ctr, buf);
        if (has_noc) noc_text(nr);
        if (npu) npu_text(pr);
        break;
    }
  }
  std::string range_text_;
  CycleRange range_;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> analyze_command() { return std::make_unique<Analyze>(); }

}  // namespace uscope_cli
