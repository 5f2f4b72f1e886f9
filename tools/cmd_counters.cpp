// uscope counters FILE [--counter NAME] [--range A:B] [--window W]
// [--buckets N] [--json | --format csv]: the cpu scope's counters (1-slot
// storages of one u64 count, spec cpu §6), in decimal.
//   no --range:  each counter's final value (at the last cycle), and its
//                rate over the whole trace;
//   --range A:B: each cycle's cumulative value, its delta (value - the
//                previous cycle's; a counter is 0 before the trace) and its
//                rate over the W cycles ending there (default 1: the delta);
//   --buckets N: a min/max downsample of the per-cycle increments over the
//                range (default: the whole trace) in N buckets, from the
//                trace's TSUM mipmaps when it has them (O(N), not O(cycles)).
// --counter picks counters as the reference does: the exact name, else every
// name containing it; none is an error naming the trace's counters.
//
// JSON: the reference's array of {name, values[{cycle, value}]}, each value
// with delta and rate too, each counter with start_value, end_value, delta
// (end - start) and rate (delta per cycle of the range); with --buckets:
// {name, exact, buckets[{start_cycle, end_cycle, min_delta, max_delta, sum}]}.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

constexpr uint64_t kTableRows = 200;  // the text table samples a longer range, as the reference does

constexpr uint64_t kChunk = 65536;     // cycles of a series held in memory at a time

// Cumulative values of counter k at cycles [lo, hi] (one pass over their segments).
std::vector<uint64_t> fetch(const CpuTrace &c, uint32_t k, uint64_t lo, uint64_t hi) {
  std::vector<uint64_t> v(hi - lo + 1);
  check(uscope_cpu_trace_counter_series(c.h(), v.data(), k, lo, v.size()), "counter series");
  return v;
}

// A counter's values over a range, a chunk of cycles at a time (bounded
// memory over any range), with what each cycle's delta and rate need: the
// value one cycle and `window` cycles before (0 before the trace).
struct Chunk {
  uint64_t start = 0, end = 0;             // cycles [start, end]
  std::vector<uint64_t> v, back;           // values at c, and at c - window (c >= window)
  uint64_t before_start = 0;               // value at start - 1
  uint64_t window = 1;
  uint64_t value(uint64_t cy) const { return v[cy - start]; }
  uint64_t prev(uint64_t cy) const { return cy == start ? before_start : v[cy - start - 1]; }
  uint64_t ago(uint64_t cy) const {
    if (cy < window) return 0;
    return back[cy - window - (start >= window ? start - window : 0)];
  }
};
Chunk chunk(const CpuTrace &c, uint32_t k, uint64_t start, uint64_t end, uint64_t window) {
  Chunk ch;
  ch.start = start;
  ch.end = end;
  ch.window = window;
  ch.v = fetch(c, k, start, end);
  if (start > 0) ch.before_start = fetch(c, k, start - 1, start - 1)[0];
  if (end >= window) ch.back = fetch(c, k, start >= window ? start - window : 0, end - window);
  return ch;
}

double ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

class Counters final : public TraceCommand {
 public:
  Counters()
      : TraceCommand("counters", "cpu counter values: final, per cycle over a range, or downsampled",
                     "trace file (.uscope) with a cpu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_option("--counter", counter_, "counter name (exact, else every name containing it)")->type_name("NAME");
    range_ = sub.add_option("--range", range_text_, "per-cycle values over cycles START:END (closed)")
                 ->type_name("START:END");
    add_number(&sub, "--window", &window_, "cycles of the rate window with --range (default 1)");
    buckets_ = add_number(&sub, "--buckets", &buckets_n_,
                          "min/max downsample of the increments in N buckets (over --range, else the whole trace)");
    format_.add(sub, true);
    sub.footer(
        "Without --range: each counter's value at the last cycle. With --range A:B: every cycle's value,\n"
        "delta and rate over --window cycles. --buckets N: min/max of the per-cycle increments in N buckets.\n"
        "JSON: an array of {name, values[{cycle, value, delta, rate}], start_value, end_value, delta, rate}.\n"
        "Example: uscope counters trace.uscope --counter committed_insns --range 0:50 --format csv");
  }
  bool before_open() override {
    format_.get();
    if (*range_) range_cycles_ = parse_range(range_text_, "--range");
    if (window_ == 0) throw Usage("counters --window: expected at least 1 cycle");
    if (*buckets_ && buckets_n_ == 0) throw Usage("counters --buckets: expected at least 1 bucket");
    if (*buckets_ && buckets_n_ > 1000000) throw Usage("counters --buckets: at most 1000000 buckets");
    return false;
  }
  void read(const Trace &t) override {
    const CpuTrace c(t);
    const auto infos = c.counters();
    std::vector<std::string> names;
    for (const auto &i : infos) names.emplace_back(i.name);
    if (names.empty()) throw Failure("no counters in this trace's cpu scope");
    std::vector<uint32_t> chosen;
    if (counter_.empty())
      for (uint32_t i = 0; i < names.size(); ++i) chosen.push_back(i);
    else
      chosen = match_names(names, counter_, "counter");
    CycleRange r{0, c.max_cycle()};
    if (*range_) r = clamp_range(range_cycles_, c.max_cycle(), "counters --range " + range_text_);
    const Format f = format_.get();
    if (*buckets_) return downsample(c, names, chosen, r, f);
    if (*range_) return per_cycle(c, names, chosen, r, f);
    final_values(c, names, chosen, f);
  }

  void final_values(const CpuTrace &c, const std::vector<std::string> &names, const std::vector<uint32_t> &chosen,
                    Format f) {
    const uint64_t m = c.max_cycle();
    Json j;
    Csv csv;
    if (f == Format::kJson) j.begin_array();
    if (f == Format::kCsv) csv.row({"counter", "cycle", "value", "rate"});
    if (f == Format::kTable) std::printf("=== Counters at cycle %" PRIu64 " ===\n", m);
    size_t width = 0;
    for (uint32_t k : chosen) width = std::max(width, names[k].size());
    for (uint32_t k : chosen) {
      uint64_t v = 0;
      check(uscope_cpu_trace_counter_value(c.h(), &v, k, m), "counter value");
      // Over the whole trace: cycles 0..m, m + 1 of them, from 0 before it.
      const double rate = ratio(v, m + 1);
      if (f == Format::kJson) {
        j.begin_object();
        j.field("name", names[k]);
        j.key("values");
        j.begin_array();
        j.begin_object();
        j.field("cycle", m);
        j.field("value", v);
        j.end_object();
        j.end_array();
        j.field("start_value", uint64_t{0});
        j.field("end_value", v);
        j.field("delta", v);
        j.field("rate", rate);
        j.end_object();
      } else if (f == Format::kCsv) {
        csv.row({names[k], cell(m), cell(v), cell(rate)});
      } else {
        std::printf("  %-*s  %" PRIu64 "  (%.4f per cycle)\n", static_cast<int>(width), names[k].c_str(), v, rate);
      }
    }
    if (f == Format::kJson) {
      j.end_array();
      j.end();
    }
  }

  void per_cycle(const CpuTrace &c, const std::vector<std::string> &names, const std::vector<uint32_t> &chosen,
                 CycleRange r, Format f) {
    const uint64_t cycles = r.end - r.start + 1;
    if (f == Format::kTable) {
      // One column per counter, as the reference, at most kTableRows + 1 rows:
      // a longer range is sampled (each sample one exact value).
      const uint64_t step = cycles > kTableRows ? cycles / kTableRows : 1;
      std::vector<uint64_t> rows;
      for (uint64_t i = 0; i < cycles; i += step) rows.push_back(r.start + i);
      if (rows.back() != r.end) rows.push_back(r.end);
      std::vector<std::vector<uint64_t>> cols;
      for (uint32_t k : chosen) {
        std::vector<uint64_t> col;
        if (step == 1) col = fetch(c, k, r.start, r.end);
        else
          for (uint64_t cy : rows) {
            uint64_t v = 0;
            check(uscope_cpu_trace_counter_value(c.h(), &v, k, cy), "counter value");
            col.push_back(v);
          }
        cols.push_back(std::move(col));
      }
      std::printf("  %8s", "Cycle");
      for (uint32_t k : chosen) std::printf("  %12s", names[k].c_str());
      std::printf("\n  %8s", "-----");
      for (size_t k = 0; k < chosen.size(); ++k) std::printf("  %12s", "-----");
      std::printf("\n");
      for (size_t i = 0; i < rows.size(); ++i) {
        std::printf("  %8" PRIu64, rows[i]);
        for (const auto &col : cols) std::printf("  %12" PRIu64, col[i]);
        std::printf("\n");
      }
      if (step > 1)
        std::printf("  (every %" PRIu64 "th cycle of %" PRIu64 "; --json or --format csv give them all)\n", step, cycles);
      return;
    }
    Json j;
    Csv csv;
    if (f == Format::kJson) j.begin_array();
    else csv.row({"counter", "cycle", "value", "delta", "rate"});
    for (uint32_t k : chosen) {
      if (f == Format::kJson) {
        j.begin_object();
        j.field("name", names[k]);
        j.key("values");
        j.begin_array();
      }
      uint64_t first = 0, last = 0;
      for (uint64_t cs = r.start;; cs += kChunk) {
        const uint64_t ce = r.end - cs < kChunk ? r.end : cs + kChunk - 1;
        const Chunk ch = chunk(c, k, cs, ce, window_);
        if (cs == r.start) first = ch.value(cs);
        last = ch.value(ce);
        for (uint64_t cy = cs; cy <= ce; ++cy) {
          const uint64_t v = ch.value(cy), delta = v - ch.prev(cy);
          const double rate = static_cast<double>(v - ch.ago(cy)) / static_cast<double>(window_);
          if (f == Format::kJson) {
            j.begin_object();
            j.field("cycle", cy);
            j.field("value", v);
            j.field("delta", delta);
            j.field("rate", rate);
            j.end_object();
          } else {
            csv.row({names[k], cell(cy), cell(v), cell(delta), cell(rate)});
          }
        }
        if (ce == r.end) break;
      }
      if (f == Format::kJson) {
        j.end_array();
        j.field("start_value", first);
        j.field("end_value", last);
        j.field("delta", last - first);
        j.field("rate", ratio(last - first, r.end - r.start));
        j.end_object();
      }
    }
    if (f == Format::kJson) {
      j.end_array();
      j.end();
    }
  }

  void downsample(const CpuTrace &c, const std::vector<std::string> &names, const std::vector<uint32_t> &chosen,
                  CycleRange r, Format f) {
    // The closed range's cycles [start, end] are the C API's [start, end + 1).
    const uint64_t end = r.end == UINT64_MAX ? r.end : r.end + 1;
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(buckets_n_, end - r.start));
    std::vector<uscope_counter_bucket_t> b(n ? n : 1);
    Json j;
    Csv csv;
    if (f == Format::kJson) j.begin_array();
    if (f == Format::kCsv) csv.row({"counter", "start_cycle", "end_cycle", "min_delta", "max_delta", "sum"});
    for (uint32_t k : chosen) {
      int exact = 0;
      if (n) check(uscope_cpu_trace_counter_downsample(c.h(), b.data(), &exact, k, r.start, end, n), "downsample");
      if (f == Format::kJson) {
        j.begin_object();
        j.field("name", names[k]);
        j.field("exact", exact != 0);
        j.key("buckets");
        j.begin_array();
      } else if (f == Format::kTable) {
        std::printf("=== %s: %u buckets over cycles %" PRIu64 ":%" PRIu64 " (%s) ===\n", names[k].c_str(), n, r.start,
                    r.end, exact ? "exact" : "from the TSUM mipmaps: a bucket edge inside an entry shares its sum");
        std::printf("  %10s %10s %10s %10s %12s\n", "Start", "End", "MinDelta", "MaxDelta", "Sum");
      }
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t bend = i + 1 < n ? b[i + 1].start_cycle : end;  // exclusive
        if (f == Format::kJson) {
          j.begin_object();
          j.field("start_cycle", b[i].start_cycle);
          j.field("end_cycle", bend);
          j.field("min_delta", b[i].min_delta);
          j.field("max_delta", b[i].max_delta);
          j.field("sum", b[i].sum);
          j.end_object();
        } else if (f == Format::kCsv) {
          csv.row({names[k], cell(b[i].start_cycle), cell(bend), cell(b[i].min_delta), cell(b[i].max_delta),
                   cell(b[i].sum)});
        } else {
          std::printf("  %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 "\n", b[i].start_cycle,
                      bend, b[i].min_delta, b[i].max_delta, b[i].sum);
        }
      }
      if (f == Format::kJson) {
        j.end_array();
        j.end_object();
      }
    }
    if (f == Format::kJson) {
      j.end_array();
      j.end();
    }
  }

  std::string counter_, range_text_;
  CLI::Option *range_ = nullptr, *buckets_ = nullptr;
  CycleRange range_cycles_;
  uint64_t window_ = 1, buckets_n_ = 0;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> counters_command() { return std::make_unique<Counters>(); }

}  // namespace uscope_cli
