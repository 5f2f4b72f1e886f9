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
  const uint64_t bucket = (time_ps - first_time_) / period_ps_ / wire::kTsumBaseInterval;
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
  for (size_t i = 0; i < counters_.size(); ++i) {
    const uint64_t d = cycle_delta_[i];
    if (d > 0) {  // the reference skips zero-delta cycles in min/max/sum
      auto &c = counters_[i];
      if (d < c.bmin) c.bmin = d;
      if (d > c.bmax) c.bmax = d;
      c.bsum += d;
    }
    cycle_delta_[i] = 0;
  }
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

TraceSummary decode_tsum(const uint8_t *data, size_t size) {
  ByteSource in(data, size, "trace summary");
  TraceSummary s;
  const uint8_t *magic = in.take(4);
  const bool tsum = std::memcmp(magic, wire::kTsumMagic, 4) == 0;
  if (!tsum && std::memcmp(magic, wire::kCsumMagic, 4) != 0)
    fail(USCOPE_ERR_CORRUPT, "trace summary: magic is neither TSUM nor CSUM (spec §6)");
  s.base_interval_cycles = in.u32();
  s.fan_out = in.u32();
  if (tsum) {
    s.total_instructions = in.u64();
    const uint32_t levels = in.u32();
    for (uint32_t l = 0; l < levels; ++l) {
      const uint32_t n = in.u32();
      if (size_t{n} * 4 > in.remaining())
        fail(USCOPE_ERR_TRUNCATED, "trace summary: density level %u claims %u entries", l, n);
      std::vector<uint32_t> v(n);
      for (auto &x : v) x = in.u32();
      s.density.push_back(std::move(v));
    }
  }
  const uint32_t nc = in.u32();
  for (uint32_t c = 0; c < nc; ++c) {
    TraceSummary::Counter ctr;
    const uint32_t len = in.u32();
    const uint8_t *name = in.take(len);
    ctr.name.assign(reinterpret_cast<const char *>(name), len);
    ctr.storage_id = in.u16();
    const uint32_t levels = in.u32();
    for (uint32_t l = 0; l < levels; ++l) {
      const uint32_t n = in.u32();
      if (size_t{n} * wire::kMipmapEntrySize > in.remaining())
        fail(USCOPE_ERR_TRUNCATED, "trace summary: counter level claims %u entries", n);
      std::vector<MipmapEntry> v(n);
      for (auto &e : v) {
        e.min_delta = in.u64();
        e.max_delta = in.u64();
        e.sum = in.u64();
      }
      ctr.levels.push_back(std::move(v));
    }
    s.counters.push_back(std::move(ctr));
  }
  return s;
}

}  // namespace uscope
