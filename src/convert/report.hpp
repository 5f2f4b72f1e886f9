// The npu report: the metrics of npu-trace-jsonl.md §7 from intervals and
// instants (pairing.hpp), whatever format they came from.
#pragma once

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

  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;
  std::string render(bool json) const;

 private:
  void touch(uint64_t t) {
    if (!any_ || t < first_) first_ = t;
    if (!any_ || t > last_) last_ = t;
    any_ = true;
  }
  using Spans = std::vector<std::pair<uint64_t, uint64_t>>;
  static uint64_t union_length(Spans s);
  struct Phase {
    uint64_t n = 0, total = 0, min = ~uint64_t{0}, max = 0;
  };
  struct Layer {
    uint64_t te = 0, ve = 0, dma = 0, first = ~uint64_t{0}, last = 0, cmds = 0;
  };
  bool any_ = false;
  uint64_t first_ = 0, last_ = 0;
  Spans te_, ve_;
  std::map<uint32_t, Spans> dram_;
  uint64_t dma_bytes_ = 0, dma_transfers_ = 0, dma_busy_ = 0;
  uint64_t sram_access_ = 0, sram_conflict_ = 0;
  uint64_t counts_[kNumPairKinds] = {};
  std::map<std::string, Phase> phases_;
  std::map<uint32_t, Layer> layers_;
};

}  // namespace uscope::convert
