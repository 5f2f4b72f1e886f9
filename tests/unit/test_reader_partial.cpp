// The reader's shortcuts (issue 5, point 8), against its plain replay:
// - decode_deltas stops at a frame whose v.frame() returns false;
// - state_at decompresses only a prefix of an LZ4 segment (as much as the
//   time asked for, by proportion, plus a margin) and stops decoding at the
//   first frame after t; events_in_range does the same up to t1, without the
//   checkpoint. When the proportional guess falls short (bytes not spread
//   evenly over time) both must start again with the whole blob;
// - the last segment's decompressed deltas are kept and reused, also for a
//   longer prefix, a full replay after a prefix, and across segments.
// Every answer is compared with TraceReader::replay of the whole segment
// (which decodes every frame), on traces whose segments are large enough for
// a prefix to be shorter than the blob, with every codec.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "format/frame_codec.hpp"
#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

#define ASSERT_USCOPE_OK(call) ASSERT_EQ((call), USCOPE_OK) << uscope_last_error()

// ── decode_deltas: early stop ──

TEST(FrameDecodeStop, AFrameVisitorReturningFalseStopsBeforeThatFramesItems) {
  std::vector<uint8_t> blob;
  uint8_t item[16];
  size_t frame_at[4];
  for (uint64_t k = 0; k < 4; ++k) {
    frame_at[k] = blob.size();
    uscope::put_wide_op(item, uscope::wire::DA_SLOT_SET, 0, 0, 0, k);
    uscope::CycleItems it{item, sizeof item, 1, false};
    uscope::encode_cycle(uscope::FrameFormat::V02, 100, it, blob);
  }
  for (uint64_t stop_after : {uint64_t{0}, uint64_t{250}, uint64_t{400}, uint64_t{1000}}) {
    struct V {
      uint64_t stop_after;
      std::vector<uint64_t> frames, values;
      bool frame(uint64_t t) {
        if (t > stop_after) return false;
        frames.push_back(t);
        return true;
      }
      void op(uint64_t, const uscope::DeltaOp &o) { values.push_back(o.value); }
      void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
    } v{stop_after, {}, {}};
    const size_t used = uscope::decode_deltas(blob.data(), blob.size(), 0, true, false, v);
    const size_t n = stop_after >= 400 ? 4 : stop_after / 100;  // frames at 100, 200, 300, 400
    EXPECT_EQ(v.frames.size(), n) << stop_after;
    EXPECT_EQ(v.values.size(), n) << stop_after;
    EXPECT_EQ(used, n == 4 ? blob.size() : frame_at[n]) << stop_after;
  }
}

// ── the reader ──

constexpr uint64_t kPeriod = 1000;
constexpr uint16_t kSlots = 64;

struct Ids {
  uint16_t regs = 0, ctr = 0, ev = 0;
};

// One segment per 4,000 cycles. The items per cycle change a lot over time
// (quiet stretches, then bursts of a few hundred items), so that bytes are
// far from proportional to time and the reader's prefix guesses fall short
// at some times and overshoot at others.
void write_trace(const std::string &path, uint32_t compression, uint32_t frames, uint64_t cycles,
                 Ids &ids) {
  uscope_schema_t *s = nullptr;
  ASSERT_USCOPE_OK(uscope_schema_new(&s));
  uint8_t clk = 0;
  uint16_t root = 0;
  ASSERT_USCOPE_OK(uscope_schema_add_clock(s, &clk, "clk", kPeriod));
  ASSERT_USCOPE_OK(uscope_schema_add_scope(s, &root, "root", USCOPE_NO_PARENT, nullptr, clk));
  const uscope_field_t reg_fields[] = {{"a", USCOPE_FT_U32, 0, 0, 0}, {"b", USCOPE_FT_U64, 0, 0, 0},
                                       {"c", USCOPE_FT_U8, 0, 0, 0}};
  const uscope_field_t reg_props[] = {{"mode", USCOPE_FT_U16, 0, 0, 0}};
  ASSERT_USCOPE_OK(uscope_schema_add_storage(s, &ids.regs, "regs", root, kSlots, USCOPE_SF_SPARSE, reg_fields,
                                             3, reg_props, 1));
  const uscope_field_t ctr_fields[] = {{"n", USCOPE_FT_U16, 0, 0, 0}};
  ASSERT_USCOPE_OK(uscope_schema_add_storage(s, &ids.ctr, "ctr", root, 4, 0, ctr_fields, 1, nullptr, 0));
  const uscope_field_t ev_fields[] = {{"x", USCOPE_FT_U32, 0, 0, 0}, {"y", USCOPE_FT_U8, 0, 0, 0}};
  ASSERT_USCOPE_OK(uscope_schema_add_event(s, &ids.ev, "ev", root, ev_fields, 2));
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.compression = compression;
  opts.frame_format = frames;
  opts.checkpoint_interval_ps = 4000 * kPeriod;
  uscope_writer_t *w = nullptr;
  ASSERT_USCOPE_OK(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &opts));
  uint64_t x = 12345;
  auto rnd = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int st = 0;
  for (uint64_t c = 0; c < cycles; ++c) {
    const uint64_t phase = c % 4000;
    // Bursts late in each segment (and one early), quiet elsewhere.
    const unsigned n = (phase >= 3000 && phase < 3400) || (phase >= 200 && phase < 260) ? 60 : 1;
    if (phase % 7 == 3) continue;  // cycles without a frame
    st |= uscope_begin_cycle(w, c * kPeriod);
    for (unsigned k = 0; k < n; ++k) {
      const uint16_t slot = static_cast<uint16_t>(rnd() % kSlots);
      switch (rnd() % 6) {
        case 0: st |= uscope_slot_clear(w, ids.regs, slot); break;
        case 1: st |= uscope_slot_set(w, ids.regs, slot, 0, rnd() & 0xFFFFFFFF); break;
        case 2: st |= uscope_slot_set(w, ids.regs, slot, 1, rnd()); break;
        case 3: st |= uscope_slot_add(w, ids.ctr, slot % 4, 0, rnd() % 1000); break;
        case 4: st |= uscope_prop_set(w, ids.regs, 0, rnd() & 0xFFFF); break;
        default: {
          const uint64_t v = rnd();
          uint8_t p[5];
          std::memcpy(p, &v, 5);
          st |= uscope_event(w, ids.ev, p, sizeof p);
        }
      }
    }
    st |= uscope_end_cycle(w);
  }
  ASSERT_EQ(st, 0) << uscope_last_error();
  ASSERT_USCOPE_OK(uscope_writer_close(w));
  uscope_schema_free(s);
}

struct NoVisit {
  void frame(uint64_t) {}
  void op(uint64_t, const uscope::DeltaOp &) {}
  void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
};

// The state at t by a whole-segment replay: the reference.
std::vector<uscope::StorageState> reference_state(uscope::TraceReader &r, uint64_t t) {
  std::vector<uscope::StorageState> st = r.initial_state();
  const auto &segs = r.segments();
  size_t i = segs.size();
  while (i > 0 && segs[i - 1].header.time_start_ps > t) --i;
  if (i > 0) r.replay(i - 1, st, NoVisit{}, t);
  return st;
}

struct Ev {
  uint64_t t;
  uint16_t id;
  std::vector<uint8_t> payload;
  bool operator==(const Ev &o) const { return t == o.t && id == o.id && payload == o.payload; }
};

std::vector<Ev> reference_events(uscope::TraceReader &r, uint64_t t0, uint64_t t1) {
  struct Collect {
    uint64_t t0, t1;
    std::vector<Ev> out;
    void frame(uint64_t) {}
    void op(uint64_t, const uscope::DeltaOp &) {}
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
      // Segments share boundary times, and every event lives in one of them.
      if (t >= t0 && t <= t1) out.push_back({t, id, std::vector<uint8_t>(p, p + n)});
    }
  } c{t0, t1, {}};
  std::vector<uscope::StorageState> st = r.initial_state();
  for (size_t i = 0; i < r.segments().size(); ++i) r.replay(i, st, c);
  return c.out;
}

void expect_same_state(const std::vector<uscope::StorageState> &got,
                       const std::vector<uscope::StorageState> &want, uint64_t t) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    const auto &L = got[s].layout();
    ASSERT_EQ(got[s].occupancy(), want[s].occupancy()) << "storage " << s << " at " << t;
    for (uint16_t slot = 0; slot < L.num_slots; ++slot) {
      ASSERT_EQ(got[s].valid(slot), want[s].valid(slot)) << "storage " << s << " slot " << slot << " at " << t;
      for (uint16_t f = 0; f < L.field_off.size(); ++f)
        ASSERT_EQ(got[s].get(slot, f), want[s].get(slot, f))
            << "storage " << s << " slot " << slot << " field " << f << " at " << t;
    }
    for (uint16_t p = 0; p < L.prop_off.size(); ++p)
      ASSERT_EQ(got[s].prop(p), want[s].prop(p)) << "storage " << s << " prop " << p << " at " << t;
  }
}

struct Case {
  uint32_t compression, frames;
  const char *name;
};
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class ReaderPartial : public ::testing::TestWithParam<Case> {};

TEST_P(ReaderPartial, StateAtAndEventsInRangeMatchAWholeSegmentReplay) {
  const Case c = GetParam();
  TempDir dir;
  const std::string path = dir.file("partial.uscope");
  Ids ids;
  constexpr uint64_t kCycles = 12'500;  // 3 full segments and a short last one
  ASSERT_NO_FATAL_FAILURE(write_trace(path, c.compression, c.frames, kCycles, ids));
  uscope::TraceReader r(path);
  ASSERT_EQ(r.segments().size(), 4u);
  // The segments must be large enough for a prefix to be shorter than the blob.
  EXPECT_GT(r.segments()[1].header.deltas_raw_size, 64u * 1024);

  // Times: every segment's start and end and around them, the burst edges,
  // and a sweep, in an order that moves back and forth between segments
  // (so the kept deltas are reused, extended and replaced).
  std::vector<uint64_t> times;
  for (const auto &s : r.segments())
    for (uint64_t t : {s.header.time_start_ps, s.header.time_start_ps + 1, s.header.time_end_ps,
                       s.header.time_end_ps + 1, s.header.time_start_ps - 1})
      times.push_back(t);
  for (uint64_t seg = 0; seg < 4; ++seg)
    for (uint64_t phase : {199u, 200u, 230u, 259u, 260u, 1000u, 2999u, 3000u, 3200u, 3399u, 3400u, 3999u})
      times.push_back((seg * 4000 + phase) * kPeriod);
  for (uint64_t t = 0; t < kCycles * kPeriod; t += 97 * kPeriod + 13) times.push_back(t);
  times.push_back(UINT64_MAX);
  for (size_t k = 0; k < times.size(); ++k) {
    // Alternate the direction of travel.
    const uint64_t t = times[k % 2 ? times.size() - 1 - k / 2 : k / 2];
    SCOPED_TRACE(std::string(c.name) + " t=" + std::to_string(t));
    const auto got = r.state_at(t);
    ASSERT_NO_FATAL_FAILURE(expect_same_state(got, reference_state(r, t), t));
  }

  // Windows: inside a quiet stretch, across a burst, across a segment
  // boundary, the whole trace, an empty one.
  std::vector<std::pair<uint64_t, uint64_t>> windows = {
      {0, 0}, {0, UINT64_MAX}, {2000 * kPeriod, 2100 * kPeriod}, {2990 * kPeriod, 3410 * kPeriod},
      {3900 * kPeriod, 4100 * kPeriod}, {4000 * kPeriod, 4000 * kPeriod},
      {7999 * kPeriod, 12'000 * kPeriod}, {100 * kPeriod, 50 * kPeriod}};
  for (uint64_t t0 = 0; t0 < kCycles * kPeriod; t0 += 331 * kPeriod + 7)
    windows.push_back({t0, t0 + 150 * kPeriod});
  for (const auto &w : windows) {
    SCOPED_TRACE(std::string(c.name) + " window " + std::to_string(w.first) + ".." + std::to_string(w.second));
    const auto want = reference_events(r, w.first, w.second);
    // Twice: the second call starts from the deltas the first one kept.
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<Ev> got;
      for (const auto &e : r.events_in_range(w.first, w.second))
        got.push_back({e.time_ps, e.event_type_id, std::vector<uint8_t>(e.payload, e.payload + e.payload_size)});
      ASSERT_EQ(got.size(), want.size()) << "pass " << pass;
      ASSERT_TRUE(got == want) << "pass " << pass;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, ReaderPartial,
                         ::testing::Values(Case{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, "lz4"},
                                           Case{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V01, "lz4_v01"},
                                           Case{USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02, "zstd"},
                                           Case{USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V02, "none"}),
                         [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

// replay() after a prefix-only state_at must see every frame of the segment.
TEST(ReaderPartial, ReplayAfterAPrefixSeesTheWholeSegment) {
  TempDir dir;
  const std::string path = dir.file("prefix_then_replay.uscope");
  Ids ids;
  ASSERT_NO_FATAL_FAILURE(write_trace(path, USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 8000, ids));
  uscope::TraceReader r(path);
  ASSERT_EQ(r.segments().size(), 2u);
  struct Count {
    uint64_t frames = 0, items = 0;
    void frame(uint64_t) { ++frames; }
    void op(uint64_t, const uscope::DeltaOp &) { ++items; }
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) { ++items; }
  };
  std::vector<uscope::StorageState> st = r.initial_state();
  Count before;
  r.replay(0, st, before);
  EXPECT_EQ(before.frames, r.segments()[0].header.num_frames);
  r.state_at(10 * kPeriod);                     // a short prefix of segment 0
  r.events_in_range(5 * kPeriod, 6 * kPeriod);  // and again
  Count after;
  r.replay(0, st, after);
  EXPECT_EQ(after.frames, before.frames);
  EXPECT_EQ(after.items, before.items);
}

TEST(ReaderPartial, ReplayRejectsAStateVectorOfTheWrongSize) {
  TempDir dir;
  const std::string path = dir.file("wrong_states.uscope");
  Ids ids;
  ASSERT_NO_FATAL_FAILURE(write_trace(path, USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 100, ids));
  uscope::TraceReader r(path);
  std::vector<uscope::StorageState> st = r.initial_state();
  st.pop_back();
  EXPECT_EQ(uscope::test::error_code([&] { r.replay(0, st, NoVisit{}); }), USCOPE_ERR_INVALID_ARGUMENT);
}

}  // namespace
