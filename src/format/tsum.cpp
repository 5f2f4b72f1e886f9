#include "format/tsum.hpp"

#include <algorithm>
#include <cstring>

#include "format/bytes.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

namespace {
// Level-0 buckets are kept in memory until close. A time jump of 2^60 ps
// would ask for ~10^12 buckets; cap the summary at 256 MiB instead and leave
// it out when a trace needs more (it is derived data, never trace content).
constexpr uint64_t kMaxSummaryBytes = 256ull << 20;

uint32_t level_count(size_t n) {
  uint32_t levels = 1;
  while (n > 1) {
    n = (n + wire::kTsumFanOut - 1) / wire::kTsumFanOut;
    ++levels;
  }
  return levels;
}
}  // namespace

TsumBuilder::TsumBuilder(const Schema &schema) {
  // Indexed by storage id, which a decoded schema need not keep equal to
  // the storage's position: size the table by the largest id.
  size_t ids = 0;
  for (const auto &st : schema.storages) ids = std::max<size_t>(ids, size_t{st.storage_id} + 1);
  counter_of_.assign(ids, -1);
  for (const auto &st : schema.storages) {
    const bool sparse = st.flags & wire::SF_SPARSE;
    const bool buffer = st.flags & wire::SF_BUFFER;
    // COMPAT 16: a counter is a 1-slot dense non-buffer storage with one U64 field.
    if (st.num_slots == 1 && !sparse && !buffer && st.fields.size() == 1 &&
        st.fields[0].type == wire::FT_U64) {
      counter_of_[st.storage_id] = static_cast<int32_t>(counters_.size());
      const char *name = schema.str(st.name);
      counters_.push_back(Counter{name ? name : "?", st.storage_id, {}});
    }
    if (sparse && !buffer && entities_sid_ > 0xFFFF) entities_sid_ = st.storage_id;
  }
  cycle_delta_.assign(counters_.size(), 0);
  touched_flag_.assign(counters_.size(), 0);
  touched_.assign(counters_.size(), 0);
  enabled_ = !counters_.empty() || entities_sid_ <= 0xFFFF;
  // COMPAT 16: buckets are cycles of clock 0. The reference divides by zero
  // when that period is 0; we fall back to the first clock with a known
  // period, and to 1000 ps (the reference's no-clock default) without one.
  period_ps_ = 1000;
  for (const auto &c : schema.clocks) {
    if (c.period_ps) {
      period_ps_ = c.period_ps;
      break;
    }
  }
  if (!schema.clocks.empty() && schema.clocks[0].period_ps) period_ps_ = schema.clocks[0].period_ps;
  max_buckets_ = kMaxSummaryBytes / (4 + wire::kMipmapEntrySize * counters_.size());
  bucket_span_ps_ = period_ps_ > UINT64_MAX / wire::kTsumBaseInterval ? UINT64_MAX
                                                                      : period_ps_ * wire::kTsumBaseInterval;
}

void TsumBuilder::close_bucket() {
  for (auto &c : counters_) {
    c.level0.push_back({c.bmin == UINT64_MAX ? 0 : c.bmin, c.bmax, c.bsum});
    c.bmin = UINT64_MAX;
    c.bmax = 0;
    c.bsum = 0;
  }
  density_.push_back(density_count_);
  density_count_ = 0;
}

void TsumBuilder::end_cycle(uint64_t time_ps) {
  if (!enabled_ || omitted_) return;
  if (!started_) {
    first_time_ = time_ps;
    started_ = true;
  }
  const uint64_t rel = time_ps - first_time_;
  if (rel >= next_bucket_rel_) {
    // floor(rel / period / base) as the reference computes it; below
    // next_bucket_rel_ it is at most current_bucket_.
    const uint64_t bucket = rel / period_ps_ / wire::kTsumBaseInterval;
    if (bucket > current_bucket_) {
      if (bucket >= max_buckets_) {
        omitted_ = true;
        for (auto &c : counters_) std::vector<MipmapEntry>().swap(c.level0);
        std::vector<uint32_t>().swap(density_);
        return;
      }
      while (current_bucket_ < bucket) {
        close_bucket();
        ++current_bucket_;
      }
    }
    next_bucket_rel_ = current_bucket_ + 1 > UINT64_MAX / bucket_span_ps_ ? UINT64_MAX
                                                                           : (current_bucket_ + 1) * bucket_span_ps_;
  }
  for (size_t k = 0; k < num_touched_; ++k) {
    const uint32_t i = touched_[k];
    const uint64_t d = cycle_delta_[i];
    if (d > 0) {  // the reference skips zero-delta cycles in min/max/sum
      auto &c = counters_[i];
      if (d < c.bmin) c.bmin = d;
      if (d > c.bmax) c.bmax = d;
      c.bsum += d;
    }
    cycle_delta_[i] = 0;
    touched_flag_[i] = 0;
  }
  num_touched_ = 0;
}

std::vector<uint8_t> TsumBuilder::finish() {
  std::vector<uint8_t> out;
  if (!enabled_ || omitted_) return out;
  close_bucket();  // the last, partial bucket
  ByteSink o(out);
  o.bytes(wire::kTsumMagic, 4);  // §6.1
  o.u32(wire::kTsumBaseInterval);
  o.u32(wire::kTsumFanOut);
  o.u64(total_instructions_);

  const uint32_t dlevels = level_count(density_.size());
  o.u32(dlevels);
  std::vector<uint32_t> level = density_;
  for (uint32_t l = 0; l < dlevels; ++l) {
    if (l > 0) {  // each level sums fan_out buckets of the one below
      std::vector<uint32_t> next((level.size() + wire::kTsumFanOut - 1) / wire::kTsumFanOut, 0);
      for (size_t i = 0; i < level.size(); ++i) next[i / wire::kTsumFanOut] += level[i];
      level.swap(next);
    }
    o.u32(static_cast<uint32_t>(level.size()));
    for (uint32_t v : level) o.u32(v);
  }

  o.u32(static_cast<uint32_t>(counters_.size()));
  for (const auto &c : counters_) {
    o.u32(static_cast<uint32_t>(c.name.size()));
    o.bytes(c.name.data(), c.name.size());
    o.u16(c.storage_id);
    const uint32_t levels = level_count(c.level0.size());
    o.u32(levels);
    std::vector<MipmapEntry> lv = c.level0;
    for (uint32_t l = 0; l < levels; ++l) {
      if (l > 0) {
        std::vector<MipmapEntry> next((lv.size() + wire::kTsumFanOut - 1) / wire::kTsumFanOut,
                                      MipmapEntry{UINT64_MAX, 0, 0});
        for (size_t i = 0; i < lv.size(); ++i) {
          auto &n = next[i / wire::kTsumFanOut];
          if (lv[i].min_delta < n.min_delta) n.min_delta = lv[i].min_delta;
          if (lv[i].max_delta > n.max_delta) n.max_delta = lv[i].max_delta;
          n.sum += lv[i].sum;
        }
        for (auto &n : next)
          if (n.min_delta == UINT64_MAX) n.min_delta = 0;
        lv.swap(next);
      }
      o.u32(static_cast<uint32_t>(lv.size()));
      for (const auto &e : lv) {
        o.u64(e.min_delta);
        o.u64(e.max_delta);
        o.u64(e.sum);
      }
    }
  }
  return out;
}

namespace {

// At most this many counters (a counter is a storage: storage ids are u16)
// and levels (each level divides its count by fan_out >= 2, from a u32).
constexpr uint32_t kMaxTsumCounters = 1u << 16;
constexpr uint32_t kMaxTsumLevels = 64;

// A forward cursor over the blob that reads its headers through a window,
// so that indexing a summary of any size makes a few small reads.
class TsumCursor {
 public:
  TsumCursor(uint64_t size, const TsumReadAt &read) : size_(size), read_(read) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  const uint8_t *take(size_t n) {
    need(n);
    if (pos_ < win_ || pos_ + n > win_ + buf_.size()) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(std::max<size_t>(n, kWindow), size_ - pos_));
      buf_.resize(len);
      read_(pos_, buf_.data(), len);
      win_ = pos_;
    }
    const uint8_t *p = buf_.data() + (pos_ - win_);
    pos_ += n;
    return p;
  }
  uint16_t u16() { return wire::get_u16(take(2)); }
  uint32_t u32() { return wire::get_u32(take(4)); }
  uint64_t u64() { return wire::get_u64(take(8)); }
  // An array of n entries of `entry` bytes: skipped, and where it lies.
  TsumArray array(uint32_t n, size_t entry, const char *what, uint32_t level) {
    if (uint64_t{n} * entry > remaining())
      fail(USCOPE_ERR_TRUNCATED, "trace summary: %s level %u claims %u entries", what, level, n);
    const TsumArray a{pos_, n};
    pos_ += uint64_t{n} * entry;
    return a;
  }

 private:
  static constexpr size_t kWindow = 4096;
  void need(size_t k) {
    if (k > remaining())
      fail(USCOPE_ERR_TRUNCATED, "trace summary: needs %zu more bytes at offset %llu, has %llu", k,
           (unsigned long long)pos_, (unsigned long long)remaining());
  }
  uint64_t size_;
  const TsumReadAt &read_;
  uint64_t pos_ = 0, win_ = 0;
  std::vector<uint8_t> buf_;
};

void check_range(const TsumArray &a, uint64_t first, size_t n) {
  if (first > a.count || n > a.count - first)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "trace summary: entries %llu..+%zu of a level of %u", (unsigned long long)first,
         n, a.count);
}

}  // namespace

TsumIndex index_tsum(uint64_t size, const TsumReadAt &read) {
  TsumCursor in(size, read);
  TsumIndex x;
  x.size = size;
  const uint8_t *magic = in.take(4);
  const bool tsum = std::memcmp(magic, wire::kTsumMagic, 4) == 0;
  if (!tsum && std::memcmp(magic, wire::kCsumMagic, 4) != 0)
    fail(USCOPE_ERR_CORRUPT, "trace summary: magic is neither TSUM nor CSUM (spec §6)");
  x.base_interval_cycles = in.u32();
  x.fan_out = in.u32();
  auto levels = [&](const char *what) {
    const uint32_t n = in.u32();
    if (n > kMaxTsumLevels) fail(USCOPE_ERR_CORRUPT, "trace summary: %s has %u levels (at most %u)", what, n, kMaxTsumLevels);
    return n;
  };
  if (tsum) {  // §6.1: CSUM (§6.3) has no instruction density
    x.total_instructions = in.u64();
    const uint32_t n = levels("the density");
    for (uint32_t l = 0; l < n; ++l) x.density.push_back(in.array(in.u32(), 4, "density", l));
  }
  const uint32_t nc = in.u32();
  if (nc > kMaxTsumCounters) fail(USCOPE_ERR_CORRUPT, "trace summary: %u counters (at most %u)", nc, kMaxTsumCounters);
  for (uint32_t c = 0; c < nc; ++c) {
    TsumIndex::Counter ctr;
    const uint32_t len = in.u32();
    const uint8_t *name = in.take(len);
    ctr.name.assign(reinterpret_cast<const char *>(name), len);
    ctr.storage_id = in.u16();
    const uint32_t n = levels("a counter");
    for (uint32_t l = 0; l < n; ++l) ctr.levels.push_back(in.array(in.u32(), wire::kMipmapEntrySize, "counter", l));
    x.counters.push_back(std::move(ctr));
  }
  return x;
}

void read_tsum_density(const TsumArray &a, uint64_t first, size_t n, uint32_t *out, const TsumReadAt &read) {
  check_range(a, first, n);
  if (!n) return;
  read(a.offset + first * 4, out, n * 4);
  for (size_t i = 0; i < n; ++i) out[i] = wire::get_u32(reinterpret_cast<const uint8_t *>(out + i));
}

void read_tsum_mipmap(const TsumArray &a, uint64_t first, size_t n, MipmapEntry *out, const TsumReadAt &read) {
  static_assert(sizeof(MipmapEntry) == wire::kMipmapEntrySize, "entries are read in place");
  check_range(a, first, n);
  if (!n) return;
  read(a.offset + first * wire::kMipmapEntrySize, out, n * wire::kMipmapEntrySize);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *p = reinterpret_cast<const uint8_t *>(out + i);
    out[i] = MipmapEntry{wire::get_u64(p), wire::get_u64(p + 8), wire::get_u64(p + 16)};
  }
}

TraceSummary load_tsum(const TsumIndex &x, const TsumReadAt &read) {
  TraceSummary s;
  s.base_interval_cycles = x.base_interval_cycles;
  s.fan_out = x.fan_out;
  s.total_instructions = x.total_instructions;
  for (const TsumArray &a : x.density) {
    std::vector<uint32_t> v(a.count);
    read_tsum_density(a, 0, a.count, v.data(), read);
    s.density.push_back(std::move(v));
  }
  for (const TsumIndex::Counter &c : x.counters) {
    TraceSummary::Counter ctr;
    ctr.name = c.name;
    ctr.storage_id = c.storage_id;
    for (const TsumArray &a : c.levels) {
      std::vector<MipmapEntry> v(a.count);
      read_tsum_mipmap(a, 0, a.count, v.data(), read);
      ctr.levels.push_back(std::move(v));
    }
    s.counters.push_back(std::move(ctr));
  }
  return s;
}

TraceSummary decode_tsum(const uint8_t *data, size_t size) {
  const TsumReadAt read = [data](uint64_t off, void *dst, size_t n) { std::memcpy(dst, data + off, n); };
  return load_tsum(index_tsum(size, read), read);
}

}  // namespace uscope
