// The npu report: the metrics of npu-trace-jsonl.md §7 from intervals and
// instants (pairing.hpp), whatever format they came from.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "convert/pairing.hpp"

namespace uscope::convert {

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

  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;
  std::string render(bool json) const;
  size_t busy_spans_held() const;  // TE, VE and DRAM spans not folded yet: the report's memory

 private:
  void touch(uint64_t t) {
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
  bool any_ = false;
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
