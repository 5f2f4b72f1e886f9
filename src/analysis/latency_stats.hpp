// Latency statistics in bounded memory: count, sum, min and max always
// exact; percentiles exact while at most `exact_limit` values were added
// (they are kept and sorted), then from a log-linear histogram (HDR style)
// the kept values are moved into.
//
// The histogram: values below 128 have a bucket of their own (exact); above,
// each power of two [2^e, 2^(e+1)) is cut into 64 buckets of width 2^(e-6),
// and a percentile is the midpoint of its bucket clamped to [min, max]: the
// relative error is at most 1/128 (0.79 %) of the true value. The buckets
// are a dense array up to the largest value's (at most 128 + 58 x 64
// counters, 30 KiB; a few KiB for latencies below a million cycles), so
// memory is bounded whatever the number of values, and no more than the
// exact values held before (exact_limit x 8 bytes).
//
// Percentiles are by nearest rank: p50 of n values is the ceil(n / 2)-th
// smallest (the value, not an interpolation), as an architect's "half the
// transactions took at most X cycles".
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace uscope::analysis {

class LatencyStats {
 public:
  static constexpr unsigned kSubBits = 6;  // 64 buckets per power of two
  static constexpr uint64_t kExactBelow = uint64_t{2} << kSubBits;  // 128

  explicit LatencyStats(size_t exact_limit = 4096) : limit_(exact_limit) {}

  void add(uint64_t v) {
    ++count_;
    sum_ += v;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
    if (exact_) {
      values_.push_back(v);
      sorted_ = false;
      if (values_.size() > limit_) spill();
    } else {
      count_in(bucket_of(v));
    }
  }

  uint64_t count() const { return count_; }
  uint64_t sum() const { return sum_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // True while the percentiles are exact (no more than exact_limit values).
  bool exact() const { return exact_; }

  // The nearest-rank p-th percentile, 0 < p <= 100; 0 with no values.
  // Sorts the kept values on first use (not safe to call from two threads).
  uint64_t percentile(double p) const {
    if (!count_) return 0;
    const double r = p / 100.0 * static_cast<double>(count_);
    uint64_t rank = static_cast<uint64_t>(r);
    if (static_cast<double>(rank) < r) ++rank;
    rank = std::clamp<uint64_t>(rank, 1, count_);
    if (exact_) {
      if (!sorted_) std::sort(values_.begin(), values_.end());
      sorted_ = true;
      return values_[rank - 1];
    }
    uint64_t seen = 0;
    for (uint32_t b = 0; b < hist_.size(); ++b) {
      seen += hist_[b];
      if (seen >= rank) return std::clamp(midpoint_of(b), min_, max_);
    }
    return max_;
  }

 private:
  static uint32_t bucket_of(uint64_t v) {
    if (v < kExactBelow) return static_cast<uint32_t>(v);
    const unsigned e = 63 - static_cast<unsigned>(__builtin_clzll(v));  // >= kSubBits + 1
    const unsigned shift = e - kSubBits;
    const uint64_t sub = (v >> shift) & ((uint64_t{1} << kSubBits) - 1);
    return static_cast<uint32_t>(kExactBelow + (uint64_t{e - kSubBits - 1} << kSubBits) + sub);
  }
  static uint64_t midpoint_of(uint32_t b) {
    if (b < kExactBelow) return b;
    const uint64_t k = b - kExactBelow;
    const unsigned e = static_cast<unsigned>(k >> kSubBits) + kSubBits + 1;
    const unsigned shift = e - kSubBits;
    const uint64_t lo = (uint64_t{1} << e) + ((k & ((uint64_t{1} << kSubBits) - 1)) << shift);
    return lo + ((uint64_t{1} << shift) >> 1);
  }
  void count_in(uint32_t b) {
    if (b >= hist_.size()) hist_.resize(b + 1);
    ++hist_[b];
  }
  void spill() {
    for (uint64_t x : values_) count_in(bucket_of(x));
    values_.clear();
    values_.shrink_to_fit();
    exact_ = false;
  }

  size_t limit_;
  uint64_t count_ = 0, sum_ = 0, min_ = ~uint64_t{0}, max_ = 0;
  bool exact_ = true;
  mutable bool sorted_ = true;
  mutable std::vector<uint64_t> values_;  // sorted when a percentile is asked for
  std::vector<uint64_t> hist_;  // counts by bucket, once not exact
};

}  // namespace uscope::analysis
