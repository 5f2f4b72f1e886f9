// The trace summary (TSUM, spec §6) computed the way the reference C writer
// computes it (COMPAT 16), so that our files carry the same summary for the
// same calls; plus its decoder, which also accepts legacy CSUM (§6.3).
#pragma once

#include <cstdint>
#include <functional>
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
      // The cycle's touched counters are listed, so that end_cycle visits
      // those (a cycle touches one or two of a schema's dozens).
      if (c >= 0) {
        if (!touched_flag_[c]) {
          touched_flag_[c] = 1;
          touched_[num_touched_++] = static_cast<uint32_t>(c);
        }
        cycle_delta_[c] += value;
      }
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
  std::vector<uint8_t> touched_flag_;   // per counter: in touched_ this cycle
  std::vector<uint32_t> touched_;       // sized for every counter at construction
  size_t num_touched_ = 0;
  std::vector<uint32_t> density_;
  uint32_t density_count_ = 0;
  uint64_t total_instructions_ = 0;
  uint64_t period_ps_ = 1000;
  bool started_ = false;
  uint64_t first_time_ = 0;
  uint64_t current_bucket_ = 0;
  // Time since first_time_ from which the bucket moves on (saturated at
  // UINT64_MAX): below it end_cycle need not divide.
  uint64_t next_bucket_rel_ = 0;
  uint64_t bucket_span_ps_ = 0;  // period_ps_ * kTsumBaseInterval, saturated
  uint64_t max_buckets_ = 0;
};

// The decoder. A summary is a few dozen bytes of headers around arrays
// that grow with the trace (32 bytes per counter per 1,024 cycles, §6.2), so
// it is decoded in two steps: index_tsum walks the headers only (where each
// array lies, and its length), and read_tsum_* fetch the entries a caller
// asks for. A reader keeps the index from open, at a size independent of the
// trace's length, and reads the arrays from the file on demand.
//
// Where an array lies: its first entry's offset in the blob, and its count.
struct TsumArray {
  uint64_t offset = 0;
  uint32_t count = 0;
};
struct TsumIndex {
  uint64_t size = 0;  // of the blob
  uint32_t base_interval_cycles = 0;
  uint32_t fan_out = 0;
  uint64_t total_instructions = 0;
  std::vector<TsumArray> density;  // [level]: u32 entries
  struct Counter {
    std::string name;
    uint16_t storage_id = 0;
    std::vector<TsumArray> levels;  // MipmapEntry entries (§6.2)
  };
  std::vector<Counter> counters;
};
// Reads exactly n bytes at offset off (< the blob's size) of the blob.
using TsumReadAt = std::function<void(uint64_t off, void *dst, size_t n)>;
// Throws Error(TRUNCATED) for an array or header past the blob's end,
// Error(CORRUPT) for a bad magic or more counters or levels than any
// writer makes (a hostile count would otherwise size the index).
TsumIndex index_tsum(uint64_t size, const TsumReadAt &read);
// Entries [first, first + n) of an array of the index; the range must lie in
// the array (Error(INVALID_ARGUMENT) otherwise).
void read_tsum_density(const TsumArray &a, uint64_t first, size_t n, uint32_t *out, const TsumReadAt &read);
void read_tsum_mipmap(const TsumArray &a, uint64_t first, size_t n, MipmapEntry *out, const TsumReadAt &read);
// Everything: the index and every array.
TraceSummary load_tsum(const TsumIndex &x, const TsumReadAt &read);

// Decode a whole TSUM or CSUM blob held in memory: load_tsum(index_tsum(...)).
// Throws Error(TRUNCATED / CORRUPT).
TraceSummary decode_tsum(const uint8_t *data, size_t size);

}  // namespace uscope
