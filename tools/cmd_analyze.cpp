// uscope analyze FILE --range A:B [--json | --format csv]: the
// performance of a cpu scope over cycles [A, B) (uscope_cpu_trace_analyze):
// instructions fetched in the range and how they ended, IPC, flush rate,
// each counter's change and rate, each buffer's occupancy at the start,
// middle and end, the average cycles per pipeline stage (the bottleneck
// first) and the stall reasons the trace records (the most frequent first).
// A range past the end is cut at the last cycle, with a warning.
//
// JSON: the keys of the reference uscope-mcp's analyze_performance:
// start_cycle, end_cycle, range_cycles, instructions{total, retired,
// flushed, in_flight, flush_rate}, ipc, counter_summaries[{name,
// start_value, end_value, delta, rate_per_cycle}], buffer_snapshots[{name,
// samples[{cycle, occupied, capacity, fill_percent}]}], stage_latencies[{name,
// total_cycles, instruction_count, avg_latency}], plus retired_in_range,
// commit_ipc (instructions retired in the range, whenever fetched) and
// stalls[{reason, count}]. CSV: every figure as one row of section,name,cycle,metric,value.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

void print_json(const CpuTrace &c, const uscope_perf_report_t &p, const std::vector<uscope_counter_info_t> &ctr,
                const std::vector<uscope_buffer_info_t> &buf) {
  Json j;
  j.begin_object();
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
  j.key("counter_summaries");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_counters; ++i) {
    const auto &s = p.counters[i];
    j.begin_object();
    j.field("name", s.counter < ctr.size() ? ctr[s.counter].name : "?");
    j.field("start_value", s.start_value);
    j.field("end_value", s.end_value);
    j.field("delta", s.delta);
    j.field("rate_per_cycle", s.rate_per_cycle);
    j.end_object();
  }
  j.end_array();
  j.key("buffer_snapshots");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_buffers; ++i) {
    const auto &b = p.buffers[i];
    j.begin_object();
    j.field("name", b.buffer < buf.size() ? buf[b.buffer].name : "?");
    j.field("capacity", b.capacity);
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
    j.end_object();
  }
  j.end_array();
  j.key("stage_latencies");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_stages; ++i) {
    const auto &s = p.stages[i];
    j.begin_object();
    j.field("name", c.stage(s.stage));
    j.field("total_cycles", s.total_cycles);
    j.field("instruction_count", s.count);
    j.field("avg_latency", s.avg_latency);
    j.end_object();
  }
  j.end_array();
  j.key("stalls");
  j.begin_array();
  for (uint32_t i = 0; i < p.num_stalls; ++i) {
    j.begin_object();
    j.field("reason", p.stalls[i].name ? p.stalls[i].name : std::to_string(p.stalls[i].reason).c_str());
    j.field("count", p.stalls[i].count);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end();
}

void print_csv(const CpuTrace &c, const uscope_perf_report_t &p, const std::vector<uscope_counter_info_t> &ctr,
               const std::vector<uscope_buffer_info_t> &buf) {
  Csv csv;
  csv.row({"section", "name", "cycle", "metric", "value"});
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

void print_text(const CpuTrace &c, const uscope_perf_report_t &p, const std::vector<uscope_counter_info_t> &ctr,
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

class Analyze final : public TraceCommand {
 public:
  Analyze()
      : TraceCommand("analyze", "cpu performance over a cycle range: IPC, flushes, stage latencies, stalls, counters",
                     "trace file (.uscope) with a cpu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_option("--range", range_text_, "cycles START:END to analyze ([START, END), START < END)")
        ->type_name("START:END")
        ->required();
    format_.add(sub, true);
    sub.footer(
        "JSON: {start_cycle, end_cycle, range_cycles, instructions{total, retired, flushed, in_flight,\n"
        "flush_rate}, ipc, counter_summaries[], buffer_snapshots[], stage_latencies[], stalls[]} (the\n"
        "reference uscope-mcp's analyze_performance, plus stalls). CSV: section,name,cycle,metric,value.\n"
        "Example: uscope analyze trace.uscope --range 100:500");
  }
  bool before_open() override {
    format_.get();
    range_ = parse_range(range_text_, "--range");
    if (range_.start == range_.end) throw Usage("analyze --range " + range_text_ + ": expected START < END");
    return false;
  }
  void read(const Trace &t) override {
    const CpuTrace c(t);
    const CycleRange r = clamp_range(range_, c.max_cycle(), "analyze --range " + range_text_);
    if (r.start >= r.end)
      throw Failure("analyze --range " + range_text_ + " starts at or past the trace's last cycle (" +
                    std::to_string(c.max_cycle()) + "): nothing to analyze");
    uscope_perf_report_t p{};
    p.struct_size = sizeof p;
    check(uscope_cpu_trace_analyze(c.h(), &p, r.start, r.end), "analyze");
    const auto ctr = c.counters();
    const auto buf = c.buffers();
    switch (format_.get()) {
      case Format::kJson: print_json(c, p, ctr, buf); break;
      case Format::kCsv: print_csv(c, p, ctr, buf); break;
      case Format::kTable: print_text(c, p, ctr, buf); break;
    }
  }
  std::string range_text_;
  CycleRange range_;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> analyze_command() { return std::make_unique<Analyze>(); }

}  // namespace uscope_cli
