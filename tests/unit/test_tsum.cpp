// Unit tests of src/format/tsum: the trace summary (§6.1, §6.2) as the
// reference C writer computes it (COMPAT 16), and decode_tsum with the legacy
// CSUM form (§6.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/tsum.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;
const std::string &kCorpus = uscope::test::kCorpusDir;

void add_storage(Schema &s, const char *name, uint16_t slots, uint16_t flags,
                 std::vector<uint8_t> types) {
  StorageDef d;
  d.name = s.pool.insert(name);
  d.storage_id = static_cast<uint16_t>(s.storages.size());
  d.num_slots = slots;
  d.flags = flags;
  d.scope_id = 0;
  for (uint8_t t : types) {
    FieldDef f;
    f.name = s.pool.insert("f");
    f.type = t;
    d.fields.push_back(f);
  }
  s.storages.push_back(d);
}

// clock 0 (given period), storage 0 "ents" (sparse, 2 x U32), storage 1
// "retired" (a counter: 1 slot, dense, one U64).
Schema cpu_schema(uint32_t period = 1000) {
  Schema s;
  s.clocks.push_back(ClockDef{s.pool.insert("clk"), 0, period});
  s.scopes.push_back(ScopeDef{s.pool.insert("root"), 0, 0xFFFF, 0xFFFF, 0});
  add_storage(s, "ents", 8, w::SF_SPARSE, {w::FT_U32, w::FT_U32});
  add_storage(s, "retired", 1, 0, {w::FT_U64});
  return s;
}

struct Op {
  bool add;
  uint16_t sid;
  uint16_t field;  // SET
  uint64_t value;  // ADD
};
Op set(uint16_t sid, uint16_t field) { return Op{false, sid, field, 0}; }
Op add(uint16_t sid, uint64_t v) { return Op{true, sid, 0, v}; }

// One cycle as the encoder drives it: the ops' hooks, then end_cycle.
void cycle(TsumBuilder &b, uint64_t t, std::vector<Op> ops) {
  for (const Op &o : ops) {
    if (o.add)
      b.on_add(o.sid, o.value);
    else
      b.on_set(o.sid, o.field);
  }
  b.end_cycle(t);
}

void expect_entry(const MipmapEntry &e, uint64_t mn, uint64_t mx, uint64_t sum) {
  EXPECT_EQ(e.min_delta, mn);
  EXPECT_EQ(e.max_delta, mx);
  EXPECT_EQ(e.sum, sum);
}

TraceSummary finish_and_decode(TsumBuilder &b) {
  const auto blob = b.finish();
  EXPECT_FALSE(blob.empty());
  return decode_tsum(blob.data(), blob.size());
}

}  // namespace

TEST(Tsum, SmallCaseHandComputed) {
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  ASSERT_TRUE(b.enabled());
  // The first cycle need not be at time 0: buckets count from it (COMPAT 16).
  cycle(b, 5000, {set(0, 0), set(0, 1), set(0, 0), add(1, 3)});  // 2 instructions
  cycle(b, 6000, {});
  cycle(b, 7000, {add(1, 2), add(1, 3)});  // per-cycle sum 5
  const std::vector<uint8_t> expect = {
      'T', 'S', 'U', 'M',
      0x00, 0x04, 0x00, 0x00,                          // base_interval_cycles 1024
      0x04, 0x00, 0x00, 0x00,                          // fan_out 4
      0x02, 0, 0, 0, 0, 0, 0, 0,                       // total_instructions 2
      0x01, 0x00, 0x00, 0x00,                          // 1 density level
      0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,  //   1 entry: 2
      0x01, 0x00, 0x00, 0x00,                          // 1 counter
      0x07, 0x00, 0x00, 0x00, 'r', 'e', 't', 'i', 'r', 'e', 'd',
      0x01, 0x00,                                      // storage_id 1
      0x01, 0x00, 0x00, 0x00,                          // 1 level
      0x01, 0x00, 0x00, 0x00,                          //   1 entry (§6.2):
      0x03, 0, 0, 0, 0, 0, 0, 0,                       //     min 3
      0x05, 0, 0, 0, 0, 0, 0, 0,                       //     max 5
      0x08, 0, 0, 0, 0, 0, 0, 0};                      //     sum 8
  EXPECT_EQ(b.finish(), expect);
}

TEST(Tsum, SetInFirstCycleOfNewBucketCountsInPreviousBucket) {
  // The reference counts instructions in uscope_slot_set, before
  // uscope_end_cycle closes finished buckets; so the SETs of the first cycle
  // seen in bucket 1 are closed into bucket 0 (uscope_dpi.c, COMPAT 16).
  // Counter deltas are accumulated after the close, so they land in bucket 1.
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  cycle(b, 0, {set(0, 0)});
  cycle(b, 1023 * 1000, {set(0, 0)});
  cycle(b, 1024 * 1000, {set(0, 0), set(0, 0), set(0, 0), add(1, 7)});  // first cycle of bucket 1
  cycle(b, 1025 * 1000, {set(0, 0), add(1, 1)});
  const TraceSummary t = finish_and_decode(b);
  EXPECT_EQ(t.total_instructions, 6u);
  ASSERT_EQ(t.density.size(), 2u);
  EXPECT_EQ(t.density[0], (std::vector<uint32_t>{5, 1}));
  EXPECT_EQ(t.density[1], (std::vector<uint32_t>{6}));
  ASSERT_EQ(t.counters.size(), 1u);
  ASSERT_EQ(t.counters[0].levels.size(), 2u);
  ASSERT_EQ(t.counters[0].levels[0].size(), 2u);
  expect_entry(t.counters[0].levels[0][0], 0, 0, 0);  // no ADD in bucket 0
  expect_entry(t.counters[0].levels[0][1], 1, 7, 8);
}

TEST(Tsum, SetsInAJumpGoToTheBucketBeforeTheJump) {
  // A jump over several buckets closes them all; the SETs of the cycle after
  // the jump are closed into the first of them, the others are zero.
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  cycle(b, 0, {set(0, 0)});
  cycle(b, 3000 * 1000, {set(0, 0)});  // cycle 3000 = bucket 2
  const TraceSummary t = finish_and_decode(b);
  ASSERT_FALSE(t.density.empty());
  EXPECT_EQ(t.density[0], (std::vector<uint32_t>{2, 0, 0}));
}

TEST(Tsum, CounterStatsAreOverPerCycleSumsSkippingZeroCycles) {
  Schema s = cpu_schema();
  add_storage(s, "flushes", 1, 0, {w::FT_U64});  // a second counter, storage 2
  TsumBuilder b(s);
  cycle(b, 0, {add(1, 1), add(1, 3)});  // one cycle, sum 4: min and max are 4, not 1 and 3
  cycle(b, 1000, {add(1, 0)});          // zero delta: not a minimum of 0
  cycle(b, 2000, {});                   // no delta at all
  cycle(b, 3000, {add(1, 9), add(2, 100)});
  cycle(b, 4000, {add(0, 50)});  // ADD to a non-counter storage is not a counter delta
  b.on_add(999, 1);              // out-of-range storage ids are ignored
  b.end_cycle(5000);
  const TraceSummary t = finish_and_decode(b);
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_EQ(t.counters[0].name, "retired");
  EXPECT_EQ(t.counters[0].storage_id, 1u);
  expect_entry(t.counters[0].levels[0][0], 4, 9, 13);
  EXPECT_EQ(t.counters[1].name, "flushes");
  EXPECT_EQ(t.counters[1].storage_id, 2u);
  expect_entry(t.counters[1].levels[0][0], 100, 100, 100);
  EXPECT_EQ(t.total_instructions, 0u);
}

TEST(Tsum, LevelsAreBuiltWithFanOut4) {
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  // Six buckets; bucket 3 has no cycle at all (the jump from 2 to 4 closes
  // it). Bucket k gets k+1 instructions and counter deltas 10(k+1) and k+1.
  // Each bucket opens with an empty cycle, so that the quirk above (SETs of
  // the first cycle seen in a bucket go to the bucket before) stays out of it.
  for (uint64_t k : {0, 1, 2, 4, 5}) {
    cycle(b, 1024 * k * 1000, {});
    std::vector<Op> ops;
    for (uint64_t i = 0; i <= k; ++i) ops.push_back(set(0, 0));
    ops.push_back(add(1, 10 * (k + 1)));
    cycle(b, (1024 * k + 1) * 1000, ops);
    cycle(b, (1024 * k + 2) * 1000, {add(1, k + 1)});
  }
  const TraceSummary t = finish_and_decode(b);
  EXPECT_EQ(t.base_interval_cycles, 1024u);
  EXPECT_EQ(t.fan_out, 4u);
  EXPECT_EQ(t.total_instructions, 1u + 2 + 3 + 5 + 6);
  ASSERT_EQ(t.density.size(), 3u);  // 6 -> 2 -> 1
  EXPECT_EQ(t.density[0], (std::vector<uint32_t>{1, 2, 3, 0, 5, 6}));
  EXPECT_EQ(t.density[1], (std::vector<uint32_t>{6, 11}));
  EXPECT_EQ(t.density[2], (std::vector<uint32_t>{17}));
  ASSERT_EQ(t.counters.size(), 1u);
  const auto &L = t.counters[0].levels;
  ASSERT_EQ(L.size(), 3u);
  ASSERT_EQ(L[0].size(), 6u);
  expect_entry(L[0][0], 1, 10, 11);
  expect_entry(L[0][2], 3, 30, 33);
  expect_entry(L[0][3], 0, 0, 0);
  expect_entry(L[0][5], 6, 60, 66);
  ASSERT_EQ(L[1].size(), 2u);
  // Like the reference, the empty bucket's min of 0 takes part in its parent's min.
  expect_entry(L[1][0], 0, 30, 66);
  expect_entry(L[1][1], 5, 60, 121);
  ASSERT_EQ(L[2].size(), 1u);
  expect_entry(L[2][0], 0, 60, 187);
}

TEST(Tsum, SixteenBucketsMakeThreeLevels) {
  // 16 -> 4 -> 1: exact multiples of the fan-out add no partial bucket.
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  for (uint64_t k = 0; k < 16; ++k) {
    cycle(b, 1024 * k * 1000, {});  // opens bucket k (see the quirk above)
    cycle(b, (1024 * k + 5) * 1000, {set(0, 0)});
  }
  const TraceSummary t = finish_and_decode(b);
  ASSERT_EQ(t.density.size(), 3u);
  EXPECT_EQ(t.density[0], std::vector<uint32_t>(16, 1));
  EXPECT_EQ(t.density[1], (std::vector<uint32_t>{4, 4, 4, 4}));
  EXPECT_EQ(t.density[2], (std::vector<uint32_t>{16}));
}

TEST(Tsum, ClockZeroWithPeriodZeroFallsBack) {
  {  // Clock 0 unknown, clock 1 known: buckets use clock 1's period.
    Schema s = cpu_schema(0);
    s.clocks.push_back(ClockDef{s.pool.insert("clk2"), 1, 500});
    TsumBuilder b(s);
    EXPECT_EQ(b.period_ps(), 500u);
    cycle(b, 0, {set(0, 0)});
    cycle(b, 1024 * 500 + 1, {add(1, 1)});  // bucket 1 at 500 ps per cycle
    const TraceSummary t = finish_and_decode(b);
    EXPECT_EQ(t.density[0].size(), 2u);
  }
  {  // No known period at all: the reference's no-clock default of 1000 ps.
    const Schema s = cpu_schema(0);
    TsumBuilder b(s);
    EXPECT_EQ(b.period_ps(), 1000u);
    cycle(b, 0, {set(0, 0)});
    cycle(b, 1024 * 1000, {set(0, 0)});
    const TraceSummary t = finish_and_decode(b);
    EXPECT_EQ(t.density[0], (std::vector<uint32_t>{2, 0}));
  }
  {
    Schema s = cpu_schema();
    s.clocks.clear();
    TsumBuilder b(s);
    EXPECT_EQ(b.period_ps(), 1000u);
  }
  {  // Clock 0's own period wins when it is known.
    Schema s = cpu_schema(200);
    s.clocks.push_back(ClockDef{s.pool.insert("clk2"), 1, 700});
    EXPECT_EQ(TsumBuilder(s).period_ps(), 200u);
  }
}

TEST(Tsum, EmptyTraceGives36BytesLikeTheReference) {
  // 11_empty.uscope: one sparse storage, no cycle; its COUNTER_SUMMARY section
  // is at offset 184, 36 bytes (11_empty.json).
  Schema s;
  s.clocks.push_back(ClockDef{s.pool.insert("clk"), 0, 1000});
  add_storage(s, "ents", 8, w::SF_SPARSE, {w::FT_U32});
  TsumBuilder b(s);
  ASSERT_TRUE(b.enabled());
  const auto blob = b.finish();
  ASSERT_EQ(blob.size(), 36u);
  const auto file = test::read_bytes(kCorpus + "11_empty.uscope");
  ASSERT_GE(file.size(), 184u + 36u);
  EXPECT_EQ(blob, std::vector<uint8_t>(file.begin() + 184, file.begin() + 220));
  const TraceSummary t = decode_tsum(blob.data(), blob.size());
  EXPECT_EQ(t.total_instructions, 0u);
  ASSERT_EQ(t.density.size(), 1u);
  EXPECT_EQ(t.density[0], (std::vector<uint32_t>{0}));
  EXPECT_TRUE(t.counters.empty());
}

TEST(Tsum, EnabledOnlyWithACounterOrAnEntitiesStorage) {
  struct Case {
    const char *what;
    uint16_t slots, flags;
    std::vector<uint8_t> types;
    bool enabled;
  } cases[] = {
      {"counter", 1, 0, {w::FT_U64}, true},
      {"sparse non-buffer", 4, w::SF_SPARSE, {w::FT_U8}, true},
      {"sparse buffer", 4, w::SF_SPARSE | w::SF_BUFFER, {w::FT_U8}, false},
      {"1-slot dense U32", 1, 0, {w::FT_U32}, false},
      {"2-slot dense U64", 2, 0, {w::FT_U64}, false},
      {"1-slot dense U64 buffer", 1, w::SF_BUFFER, {w::FT_U64}, false},
      {"1-slot dense 2 x U64", 1, 0, {w::FT_U64, w::FT_U64}, false},
      {"1-slot dense I64", 1, 0, {w::FT_I64}, false},
  };
  for (const auto &c : cases) {
    Schema s;
    s.clocks.push_back(ClockDef{s.pool.insert("clk"), 0, 1000});
    add_storage(s, "x", c.slots, c.flags, c.types);
    TsumBuilder b(s);
    EXPECT_EQ(b.enabled(), c.enabled) << c.what;
    cycle(b, 0, {set(0, 0), add(0, 1)});
    EXPECT_EQ(b.finish().empty(), !c.enabled) << c.what;
  }
}

TEST(Tsum, InstructionsAreSetsToField0OfFirstSparseNonBufferStorage) {
  Schema s;
  s.clocks.push_back(ClockDef{s.pool.insert("clk"), 0, 1000});
  add_storage(s, "rob", 8, w::SF_SPARSE | w::SF_BUFFER, {w::FT_U32});  // 0: a buffer
  add_storage(s, "ents", 8, w::SF_SPARSE, {w::FT_U32, w::FT_U32});     // 1: the entities
  add_storage(s, "other", 8, w::SF_SPARSE, {w::FT_U32});               // 2: a later sparse one
  TsumBuilder b(s);
  cycle(b, 0, {set(0, 0), set(1, 0), set(1, 1), set(2, 0), set(1, 0)});
  const TraceSummary t = finish_and_decode(b);
  EXPECT_EQ(t.total_instructions, 2u);
  EXPECT_EQ(t.density[0], (std::vector<uint32_t>{2}));
}

TEST(Tsum, StorageIdsAreNotSchemaIndices) {
  // A schema decoded from a file may carry storage ids that are not their
  // index (nothing in §4.6 forbids it); counters are looked up by id.
  Schema s;
  s.clocks.push_back(ClockDef{s.pool.insert("clk"), 0, 1000});
  add_storage(s, "big", 1, 0, {w::FT_U64});
  s.storages[0].storage_id = 300;
  TsumBuilder b(s);
  ASSERT_TRUE(b.enabled());
  cycle(b, 0, {add(300, 4)});
  const TraceSummary t = finish_and_decode(b);
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].storage_id, 300u);
  expect_entry(t.counters[0].levels[0][0], 4, 4, 4);
}

TEST(Tsum, HugeTimeJumpOmitsTheSummaryInsteadOfExhaustingMemory) {
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  cycle(b, 0, {set(0, 0)});
  EXPECT_FALSE(b.omitted());
  cycle(b, uint64_t{1} << 62, {set(0, 0)});
  EXPECT_TRUE(b.omitted());
  cycle(b, (uint64_t{1} << 62) + 1000, {set(0, 0)});  // later cycles are harmless
  EXPECT_TRUE(b.finish().empty());
}

// ── decode_tsum ──

TEST(TsumDecode, AcceptsLegacyCsum) {
  const std::vector<uint8_t> csum = {
      'C', 'S', 'U', 'M', 0x00, 0x04, 0, 0, 0x04, 0, 0, 0,  // base 1024, fan-out 4
      0x01, 0, 0, 0,                                        // 1 counter (no instruction fields)
      0x01, 0, 0, 0, 'c', 0x05, 0x00,                       // name "c", storage 5
      0x01, 0, 0, 0, 0x01, 0, 0, 0,                         // 1 level, 1 entry
      1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
  const TraceSummary t = decode_tsum(csum.data(), csum.size());
  EXPECT_EQ(t.base_interval_cycles, 1024u);
  EXPECT_EQ(t.fan_out, 4u);
  EXPECT_EQ(t.total_instructions, 0u);  // §6.3: CSUM has none
  EXPECT_TRUE(t.density.empty());
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].name, "c");
  EXPECT_EQ(t.counters[0].storage_id, 5u);
  ASSERT_EQ(t.counters[0].levels.size(), 1u);
  ASSERT_EQ(t.counters[0].levels[0].size(), 1u);
  expect_entry(t.counters[0].levels[0][0], 1, 2, 3);
  for (size_t n = 0; n < csum.size(); ++n) {
    const std::vector<uint8_t> cut(csum.begin(), csum.begin() + n);
    EXPECT_EQ(error_code([&] { decode_tsum(cut.data(), cut.size()); }), USCOPE_ERR_TRUNCATED) << n;
  }
}

TEST(TsumDecode, EveryTruncationAndBadMagicThrow) {
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  cycle(b, 0, {set(0, 0), add(1, 2)});
  cycle(b, 2048 * 1000, {add(1, 3)});
  const auto blob = b.finish();
  for (size_t n = 0; n < blob.size(); ++n) {
    const std::vector<uint8_t> cut(blob.begin(), blob.begin() + n);
    EXPECT_EQ(error_code([&] { decode_tsum(cut.data(), cut.size()); }), USCOPE_ERR_TRUNCATED) << n;
  }
  auto bad = blob;
  bad[0] = 'X';
  EXPECT_EQ(error_code([&] { decode_tsum(bad.data(), bad.size()); }), USCOPE_ERR_CORRUPT);
  // Hostile counts fail cleanly instead of allocating.
  bad = blob;
  w::put_u32(bad.data() + 24, 0x40000000);  // level 0 of density claims 2^30 entries
  EXPECT_EQ(error_code([&] { decode_tsum(bad.data(), bad.size()); }), USCOPE_ERR_TRUNCATED);
}

// The two-step decoder: the index names where each array lies, and reads
// of any range of an array give what the whole decode gives there, with
// reads of the blob only where asked (the headers through a small window).
TEST(TsumDecode, IndexThenRangesEqualTheWholeDecode) {
  const Schema s = cpu_schema();
  TsumBuilder b(s);
  // 4,000 buckets: 16 KB of density and 96 KB of level 0, past the window.
  for (uint64_t c = 0; c < 4000 * 1024; c += 1021) cycle(b, c * 1000, {set(0, 0), add(1, c % 7 + 1)});
  const auto blob = b.finish();
  const TraceSummary whole = decode_tsum(blob.data(), blob.size());
  size_t bytes_read = 0, reads = 0;
  const TsumReadAt read = [&](uint64_t off, void *dst, size_t n) {
    ASSERT_LE(off + n, blob.size());
    std::memcpy(dst, blob.data() + off, n);
    bytes_read += n;
    ++reads;
  };
  const TsumIndex x = index_tsum(blob.size(), read);
  EXPECT_LT(bytes_read, blob.size()) << "indexing read the arrays";
  EXPECT_EQ(x.base_interval_cycles, whole.base_interval_cycles);
  EXPECT_EQ(x.fan_out, whole.fan_out);
  EXPECT_EQ(x.total_instructions, whole.total_instructions);
  ASSERT_EQ(x.density.size(), whole.density.size());
  ASSERT_EQ(x.counters.size(), 1u);
  ASSERT_EQ(x.counters[0].levels.size(), whole.counters[0].levels.size());
  EXPECT_EQ(x.counters[0].name, "retired");
  for (size_t l = 0; l < x.density.size(); ++l) {
    const auto &want = whole.density[l];
    ASSERT_EQ(x.density[l].count, want.size());
    for (uint64_t first : {uint64_t{0}, uint64_t{want.size() / 3}, uint64_t{want.size()}}) {
      std::vector<uint32_t> got(want.size() - first);
      read_tsum_density(x.density[l], first, got.size(), got.data(), read);
      EXPECT_EQ(got, std::vector<uint32_t>(want.begin() + static_cast<ptrdiff_t>(first), want.end())) << l;
    }
  }
  for (size_t l = 0; l < x.counters[0].levels.size(); ++l) {
    const auto &want = whole.counters[0].levels[l];
    const TsumArray &a = x.counters[0].levels[l];
    ASSERT_EQ(a.count, want.size());
    const size_t first = want.size() / 2, n = want.size() - first;
    std::vector<MipmapEntry> got(n);
    read_tsum_mipmap(a, first, n, got.data(), read);
    for (size_t i = 0; i < n; ++i) expect_entry(got[i], want[first + i].min_delta, want[first + i].max_delta, want[first + i].sum);
    // A range past the array is the caller's error, not a read past it.
    EXPECT_EQ(error_code([&] { read_tsum_mipmap(a, first, n + 1, got.data(), read); }), USCOPE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(error_code([&] { read_tsum_mipmap(a, a.count + 1, 0, got.data(), read); }), USCOPE_ERR_INVALID_ARGUMENT);
  }
  const TraceSummary loaded = load_tsum(x, read);
  EXPECT_EQ(loaded.density, whole.density);
}

// Counts no writer makes, which would size the index: more counters than
// storage ids, more levels than a u32 count divides into.
TEST(TsumDecode, HostileCountersAndLevelsAreCorrupt) {
  std::vector<uint8_t> csum = {'C', 'S', 'U', 'M', 0x00, 0x04, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0};
  w::put_u32(csum.data() + 12, 0x00010001);  // 65,537 counters
  csum.resize(csum.size() + 65537 * 10, 0);  // each with an empty name, storage 0 and 0 levels
  EXPECT_EQ(error_code([&] { decode_tsum(csum.data(), csum.size()); }), USCOPE_ERR_CORRUPT);
  std::vector<uint8_t> levels = {'C', 'S', 'U', 'M', 0x00, 0x04, 0, 0, 0x04, 0, 0, 0, 1, 0, 0, 0,  // 1 counter
                                 0, 0, 0, 0, 0, 0,                                                  // "", storage 0
                                 65, 0, 0, 0};                                                      // 65 levels
  levels.resize(levels.size() + 65 * 4, 0);  // each of 0 entries
  EXPECT_EQ(error_code([&] { decode_tsum(levels.data(), levels.size()); }), USCOPE_ERR_CORRUPT);
  w::put_u32(levels.data() + 22, 64);  // 64 levels of 0 entries: accepted
  levels.resize(levels.size() - 4);
  EXPECT_EQ(decode_tsum(levels.data(), levels.size()).counters[0].levels.size(), 64u);
}

// ── Against the reference writer ──

TEST(TsumReference, ReplayingReferenceTracesReproducesTheirSummaries) {
  // Replay every frame of the reference C writer's files through TsumBuilder
  // (one reference cycle = one frame) and compare with the TSUM it wrote.
  size_t compared = 0;
  for (const char *name :
       {"02_multiseg.uscope", "03_sparse_dense.uscope", "05_events_all_types.uscope",
        "06_wide_compact.uscope", "07_many_storages.uscope", "08_multiclock_scopes.uscope",
        "12_boundary.uscope"}) {
    SCOPED_TRACE(name);
    const test::TraceFile tf = test::read_trace_file(kCorpus + name);
    const SectionEntry *sec = nullptr;
    for (const auto &e : tf.sections)
      if (e.type == w::SECTION_COUNTER_SUMMARY) sec = &e;
    ASSERT_NE(sec, nullptr);
    TsumBuilder b(tf.schema);
    const bool interleaved = tf.header.flags & w::F_INTERLEAVED_DELTAS;
    const bool compact = tf.header.flags & w::F_COMPACT_DELTAS;
    struct Replay {
      TsumBuilder &b;
      bool open = false;
      uint64_t t = 0;
      void frame(uint64_t time) {
        if (open) b.end_cycle(t);
        open = true;
        t = time;
      }
      void op(uint64_t, const DeltaOp &o) {
        if (o.action == w::DA_SLOT_SET) b.on_set(o.storage_id, o.field);
        if (o.action == w::DA_SLOT_ADD) b.on_add(o.storage_id, o.value);
      }
      void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
    } r{b};
    for (const auto &seg : tf.segments)
      decode_deltas(seg.deltas.data(), seg.deltas.size(), seg.header.time_start_ps, interleaved,
                    compact, r);
    if (r.open) b.end_cycle(r.t);
    const auto mine = b.finish();
    const std::vector<uint8_t> ref(tf.bytes.begin() + sec->offset,
                                   tf.bytes.begin() + sec->offset + sec->size);
    EXPECT_EQ(mine.size(), ref.size());
    EXPECT_TRUE(mine == ref);
    ++compared;
  }
  EXPECT_EQ(compared, 7u);
}

// A long run of cycles at irregular times (first cycle not at 0, steps that
// land on, just before and past bucket boundaries, several counters touched
// per cycle in either order, zero adds, sets) against the definition: a
// cycle's deltas go to bucket floor((t - t0) / period / 1024), and a
// bucket's min/max/sum are over its cycles with a non-zero delta; its sets
// count in the bucket still open before it (COMPAT 16, as above). end_cycle
// skips the division between boundaries and visits only the counters a cycle
// touched; this checks both against the formula.
TEST(Tsum, EveryBucketMatchesTheDefinitionOverIrregularTimes) {
  Schema s = cpu_schema(/*period=*/1000);
  add_storage(s, "flushes", 1, 0, {w::FT_U64});  // storage 2
  add_storage(s, "stalls", 1, 0, {w::FT_U64});   // storage 3
  TsumBuilder b(s);
  const uint64_t t0 = 777, span = 1000ull * w::kTsumBaseInterval;
  struct Bucket {
    uint64_t mn = UINT64_MAX, mx = 0, sum = 0;
  };
  std::vector<std::vector<Bucket>> want(3);  // [counter][bucket]
  std::vector<uint32_t> want_density;
  uint64_t t = t0, rng = 12345, open_bucket = 0;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
  };
  for (int i = 0; i < 20000; ++i) {
    std::vector<Op> ops;
    uint64_t delta[3] = {0, 0, 0};
    uint32_t sets = 0;
    const uint32_t n = next() % 5;
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t what = next() % 4;
      if (what == 3) {
        ops.push_back(set(0, 0));
        ++sets;
      } else {
        const uint64_t v = next() % 3 == 0 ? 0 : next() % 100;
        ops.push_back(add(static_cast<uint16_t>(what + 1), v));
        delta[what] += v;
      }
    }
    const uint64_t bucket = (t - t0) / span;
    for (auto &c : want)
      if (c.size() <= bucket) c.resize(bucket + 1);
    if (want_density.size() <= bucket) want_density.resize(bucket + 1);
    want_density[open_bucket] += sets;
    open_bucket = bucket;
    for (int c = 0; c < 3; ++c) {
      if (!delta[c]) continue;
      Bucket &e = want[c][bucket];
      e.mn = std::min(e.mn, delta[c]);
      e.mx = std::max(e.mx, delta[c]);
      e.sum += delta[c];
    }
    cycle(b, t, ops);
    // Steps of one cycle, of exactly the time to the next boundary (and one
    // ps less), and jumps over whole buckets.
    const uint64_t to_boundary = span - (t - t0) % span;
    switch (next() % 8) {
      case 0: t += to_boundary; break;
      case 1: t += to_boundary > 1 ? to_boundary - 1 : 1; break;
      case 2: t += span * (1 + next() % 3) + next() % 1000; break;
      default: t += 1000; break;
    }
  }
  const TraceSummary got = finish_and_decode(b);
  ASSERT_EQ(got.counters.size(), 3u);
  ASSERT_EQ(got.density[0].size(), want_density.size());
  EXPECT_EQ(got.density[0], want_density);
  for (int c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    ASSERT_EQ(got.counters[c].levels[0].size(), want[c].size());
    for (size_t k = 0; k < want[c].size(); ++k) {
      const Bucket &e = want[c][k];
      expect_entry(got.counters[c].levels[0][k], e.mn == UINT64_MAX ? 0 : e.mn, e.mx, e.sum);
    }
  }
}
