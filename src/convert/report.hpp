// The npu report: the metrics of npu-trace-jsonl.md §7 from intervals and
// instants (pairing.hpp), whatever format they came from.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "convert/pairing.hpp"

namespace uscope::convert {

class EvSource;
class Report;

// The one way the npu report is measured (npu_report.cpp): src's events
// paired START to END into rep, and, when also is given, the same intervals
// and instants into it too (the npu analysis's command latencies). *error
// says why a run failed.
uscope_status_t measure(EvSource &src, Report &rep, PairSink *also, std::string *error);

class Report final : public PairSink {
 public:
  // What the source can tell (a .pccx file has no sizes, units or layers).
  bool has_sizes = true, has_units = true, has_layers = true;
  std::string format;       // "jsonl", "uscope", "pccx"
  uint64_t period_ps = 1000;
  const StringSource *strs = nullptr;
  // When set (Pairer::horizon), busy spans are folded as they come, so the
  // report's memory does not grow with the trace; when not (a .pccx file,
  // whose events are in no particular order), they are kept to the end.
  std::function<uint64_t(PairKind)> horizon;

  // Measure over the window [start, end] (cycles) rather than from the first
  // to the last event (the npu analysis of a range, analysis.h): T is
  // end - start; TE, VE and DRAM spans are cut to it (one that does not meet
  // it is not counted); commands, jobs, DMA and NoC transfers count when they
  // end in it, whole; instants when they lie in it. Call before the first
  // event.
  void set_window(uint64_t start, uint64_t end) {
    window_ = true;
    any_ = true;
    first_ = start;
    last_ = end;
  }
  // Whether an interval counts, and what of it (the window's rule above):
  // false when it does not count; else *s and *e are the part measured.
  bool counts(const Interval &iv, uint64_t *s, uint64_t *e) const;

  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;
  std::string render(bool json) const;
  size_t busy_spans_held() const;  // TE, VE and DRAM spans not folded yet: the report's memory

  // The figures render() prints, for the analysis ABI.
  struct Engine {
    std::string name;  // "TE", "VE", "DRAM 0", "DRAM -"
    int kind;          // 0 TE, 1 VE, 2 DRAM
    uint32_t channel;  // DRAM channel or kNoUnit
    uint64_t jobs, busy;
  };
  struct PhaseFigures {
    std::string name;
    uint64_t commands, total, min, max;
  };
  uint64_t first_cycle() const { return any_ ? first_ : 0; }
  uint64_t last_cycle() const { return any_ ? last_ : 0; }
  uint64_t total_cycles() const { return any_ ? last_ - first_ : 0; }
  std::vector<Engine> engines() const;
  std::vector<PhaseFigures> phase_figures() const;
  uint64_t dma_transfers() const { return dma_transfers_; }
  uint64_t dma_bytes() const { return dma_bytes_; }
  uint64_t sram_accesses() const { return sram_access_; }
  uint64_t sram_conflicts() const { return sram_conflict_; }

 private:
  void touch(uint64_t t) {
    if (window_) return;
    if (!any_ || t < first_) first_ = t;
    if (!any_ || t > last_) last_ = t;
    any_ = true;
  }
  // The length of the union of busy spans (engine busy = at least one job
  // running), folded as it goes: a run of overlapping spans that ends at or
  // before the horizon is final, since no later span can start before the
  // horizon; its length is added up and the spans dropped.
  class Busy {
   public:
    void add(uint64_t s, uint64_t e) {
      spans_.emplace_back(s, e);
      ++count_;
    }
    bool full() const { return spans_.size() >= limit_; }
    void fold(uint64_t horizon);
    uint64_t total() const;
    uint64_t count() const { return count_; }
    size_t held() const { return spans_.size(); }

   private:
    std::vector<std::pair<uint64_t, uint64_t>> spans_;
    uint64_t done_ = 0, count_ = 0;
    size_t limit_ = 4096;
  };
  void add_busy(Busy &b, PairKind kind, uint64_t s, uint64_t e);
  struct Phase {
    uint64_t n = 0, total = 0, min = ~uint64_t{0}, max = 0;
  };
  struct Layer {
    uint64_t te = 0, ve = 0, dma = 0, first = ~uint64_t{0}, last = 0, cmds = 0;
  };
  bool any_ = false, window_ = false;
  uint64_t first_ = 0, last_ = 0;
  Busy te_, ve_;
  std::map<uint32_t, Busy> dram_;
  uint64_t dma_bytes_ = 0, dma_transfers_ = 0, dma_busy_ = 0;
  struct Direction {
    uint64_t transfers = 0, bytes = 0;
  };
  std::map<std::string, Direction> dma_dir_;  // by DMA_START direction: bytes in each, not only the sum
  uint64_t sram_access_ = 0, sram_conflict_ = 0;
  uint64_t counts_[kNumPairKinds] = {};
  std::map<std::string, Phase> phases_;
  std::map<uint32_t, Layer> layers_;
};

}  // namespace uscope::convert
