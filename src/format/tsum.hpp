// The trace summary (TSUM, spec §6) computed the way the reference C writer
// computes it (COMPAT 16), so that our files carry the same summary for the
// same calls; plus its decoder, which also accepts legacy CSUM (§6.3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/schema_codec.hpp"

namespace uscope {

struct MipmapEntry {  // §6.2
  uint64_t min_delta = 0;
  uint64_t max_delta = 0;
  uint64_t sum = 0;
};

struct TraceSummary {
  uint32_t base_interval_cycles = 0;
  uint32_t fan_out = 0;
  uint64_t total_instructions = 0;
  std::vector<std::vector<uint32_t>> density;  // [level][bucket]
  struct Counter {
    std::string name;
    uint16_t storage_id = 0;
    std::vector<std::vector<MipmapEntry>> levels;
  };
  std::vector<Counter> counters;
};

class TsumBuilder {
 public:
  explicit TsumBuilder(const Schema &schema);

  // COMPAT 16: a summary is written when the schema has a counter or a
  // sparse non-buffer storage.
  bool enabled() const { return enabled_; }

  // Per-op hooks, called in op order within a cycle.
  void on_set(uint16_t storage_id, uint16_t field) {
    // COMPAT 16: "instructions" are SETs to field 0 of the first sparse
    // non-buffer storage. Counted into the open bucket before end_cycle()
    // closes finished buckets, exactly as the reference does.
    if (storage_id == entities_sid_ && field == 0) {
      ++density_count_;
      ++total_instructions_;
    }
  }
  void on_add(uint16_t storage_id, uint64_t value) {
    if (storage_id < counter_of_.size()) {
      const int32_t c = counter_of_[storage_id];
      if (c >= 0) cycle_delta_[c] += value;
    }
  }
  void end_cycle(uint64_t time_ps);

  // Close the last bucket and encode the TSUM blob (§6.1). Empty when the
  // summary is disabled or was abandoned (see omitted()).
  std::vector<uint8_t> finish();
  // True when a time jump would have needed more buckets than the memory cap
  // allows; the summary is then left out of the file (the reader can
  // recompute it), and the writer reports it in its stats.
  bool omitted() const { return omitted_; }
  uint64_t period_ps() const { return period_ps_; }

 private:
  void close_bucket();
  bool enabled_ = false;
  bool omitted_ = false;
  uint32_t entities_sid_ = 0x10000;  // none
  std::vector<int32_t> counter_of_;  // storage id -> counter index or -1
  struct Counter {
    std::string name;
    uint16_t storage_id;
    std::vector<MipmapEntry> level0;
    uint64_t bmin = UINT64_MAX, bmax = 0, bsum = 0;
  };
  std::vector<Counter> counters_;
  std::vector<uint64_t> cycle_delta_;
  std::vector<uint32_t> density_;
  uint32_t density_count_ = 0;
  uint64_t total_instructions_ = 0;
  uint64_t period_ps_ = 1000;
  bool started_ = false;
  uint64_t first_time_ = 0;
  uint64_t current_bucket_ = 0;
  uint64_t max_buckets_ = 0;
};

// Decode a TSUM or CSUM blob. Throws Error(TRUNCATED / CORRUPT).
TraceSummary decode_tsum(const uint8_t *data, size_t size);

}  // namespace uscope
