// v0.1 frames: the order in which ops and events at one timestamp come back.
//
// The reference reader (zarubaf/uscope @ ca8ae82, crates/uscope/src/reader.rs,
// Reader::segment_replay, the "v0.1 fallback" branch) decodes a v0.1 segment
// into two lists, its ops and its events, each in stream order, appends the
// events after the ops and stable-sorts the result by (time_ps, op = 0 /
// event = 1). So, per segment, it yields for each timestamp every op at that
// time (in stream order, across all frames of that time), then every event at
// that time. Nothing is merged across segments: it replays one segment at a
// time. (v0.2 segments are returned in stream order, unsorted.)
//
// Our writer writes v0.1 frames in that order (docs/compat.md "v0.1 frames"),
// so that what we wrote, what the reference reads and what our reader reads
// (stream order) are one sequence. These cases state the sequence the
// reference yields explicitly and check that our reader yields it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

// An item as read back: "O<storage>:<value>" for a SET/ADD, "E<x>" for an
// event whose U16 payload is x, each with its time.
struct Got {
  uint64_t t;
  std::string what;
  bool operator==(const Got &o) const { return t == o.t && what == o.what; }
};
std::ostream &operator<<(std::ostream &os, const Got &g) { return os << g.t << ":" << g.what; }

// Storage 0 "rob" (sparse, 4 slots, U32), storage 1 "ctr" (1-slot U64
// counter), event 0 "ev" (one U16). A call in a cycle: an op (storage,
// value) or an event (x).
struct Call {
  bool event;
  uint16_t sid;
  uint64_t v;
};
struct Cycle {
  uint64_t t;
  std::vector<Call> calls;
  bool flush_after = false;
};
Call op(uint16_t sid, uint64_t v) { return {false, sid, v}; }
Call ev(uint64_t x) { return {true, 0, x}; }

void write(const std::string &path, uint32_t frames, const std::vector<Cycle> &cycles) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  const uscope_field_t f[] = {{"v", USCOPE_FT_U32, 0, 0, 0}};
  const uscope_field_t c[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t e[] = {{"x", USCOPE_FT_U16, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, nullptr, "rob", 0, 4, USCOPE_SF_SPARSE, f, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_storage(s, nullptr, "ctr", 0, 1, 0, c, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_event(s, nullptr, "ev", 0, e, 1), USCOPE_OK);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.frame_format = frames;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uint16_t slot = 0;
  for (const Cycle &cy : cycles) {
    ASSERT_EQ(uscope_begin_cycle(w, cy.t), USCOPE_OK) << uscope_writer_error(w);
    for (const Call &k : cy.calls) {
      if (k.event) {
        const uint16_t x = static_cast<uint16_t>(k.v);
        ASSERT_EQ(uscope_event(w, 0, &x, 2), USCOPE_OK) << uscope_writer_error(w);
      } else if (k.sid == 0) {
        ASSERT_EQ(uscope_slot_set(w, 0, slot++ % 4, 0, k.v), USCOPE_OK) << uscope_writer_error(w);
      } else {
        ASSERT_EQ(uscope_slot_add(w, 1, 0, 0, k.v), USCOPE_OK) << uscope_writer_error(w);
      }
    }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w);
    if (cy.flush_after) {
      ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK) << uscope_writer_error(w);
    }
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
}

// Every segment's items, through the public reader.
std::vector<std::vector<Got>> read(const std::string &path) {
  std::vector<std::vector<Got>> out;
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  if (!r) return out;
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  for (uint32_t i = 0; i < info.num_segments; ++i) {
    uscope_item_iter_t *it = nullptr;
    EXPECT_EQ(uscope_reader_segment_items(r, &it, i), USCOPE_OK) << uscope_reader_error(r);
    out.emplace_back();
    uscope_item_t g{};
    while (it && uscope_item_iter_next(it, &g) == USCOPE_OK) {
      if (g.is_event) {
        uint16_t x = 0;
        std::memcpy(&x, g.payload, 2);
        out.back().push_back({g.time_ps, "E" + std::to_string(x)});
      } else {
        out.back().push_back({g.time_ps, "O" + std::to_string(g.storage_id) + ":" + std::to_string(g.value)});
      }
    }
    uscope_item_iter_free(it);
  }
  uscope_reader_close(r);
  return out;
}

// Ops and events interleaved within cycles and across cycles at one time
// (begin_cycle twice with the same time: frames with delta 0).
const std::vector<Cycle> kCycles = {
    {1000, {op(0, 1), ev(1), op(1, 2), ev(2)}},
    {1000, {ev(3), op(0, 3)}},
    {2000, {ev(4), op(0, 4)}},
    {2000, {op(1, 5)}},
    {3000, {ev(5)}},
    {3000, {op(0, 6), ev(6), op(0, 7)}},
    {4000, {}},
    {4000, {ev(7)}},
};

TEST(V01Order, EqualTimestampsReadBackAsTheReferenceReaderYieldsThem) {
  TempDir dir;
  const std::string path = dir.file("v01.uscope");
  ASSERT_NO_FATAL_FAILURE(write(path, USCOPE_FRAMES_V01, kCycles));
  // What segment_replay yields for this one segment: per time, every op in
  // call order, then every event in call order.
  const std::vector<std::vector<Got>> reference = {{
      {1000, "O0:1"}, {1000, "O1:2"}, {1000, "O0:3"}, {1000, "E1"}, {1000, "E2"}, {1000, "E3"},
      {2000, "O0:4"}, {2000, "O1:5"}, {2000, "E4"},
      {3000, "O0:6"}, {3000, "O0:7"}, {3000, "E5"}, {3000, "E6"},
      {4000, "E7"},
  }};
  EXPECT_EQ(read(path), reference);
}

TEST(V01Order, TheOrderIsPerSegment) {
  // A flush between two cycles of one time: the reference replays (and
  // sorts) each segment on its own, so the later cycle's op comes after the
  // earlier cycle's events.
  std::vector<Cycle> cycles = kCycles;
  cycles[2].flush_after = true;  // after the first cycle at 2000
  TempDir dir;
  const std::string path = dir.file("v01f.uscope");
  ASSERT_NO_FATAL_FAILURE(write(path, USCOPE_FRAMES_V01, cycles));
  const std::vector<std::vector<Got>> reference = {
      {{1000, "O0:1"}, {1000, "O1:2"}, {1000, "O0:3"}, {1000, "E1"}, {1000, "E2"}, {1000, "E3"},
       {2000, "O0:4"}, {2000, "E4"}},
      {{2000, "O1:5"},
       {3000, "O0:6"}, {3000, "O0:7"}, {3000, "E5"}, {3000, "E6"},
       {4000, "E7"}},
  };
  EXPECT_EQ(read(path), reference);
}

TEST(V01Order, V02KeepsCallOrder) {
  // Unchanged: v0.2 frames are tagged items in call order, and the
  // reference returns them in stream order.
  TempDir dir;
  const std::string path = dir.file("v02.uscope");
  ASSERT_NO_FATAL_FAILURE(write(path, USCOPE_FRAMES_V02, kCycles));
  const std::vector<std::vector<Got>> calls = {{
      {1000, "O0:1"}, {1000, "E1"}, {1000, "O1:2"}, {1000, "E2"}, {1000, "E3"}, {1000, "O0:3"},
      {2000, "E4"}, {2000, "O0:4"}, {2000, "O1:5"},
      {3000, "E5"}, {3000, "O0:6"}, {3000, "E6"}, {3000, "O0:7"},
      {4000, "E7"},
  }};
  EXPECT_EQ(read(path), calls);
}

// The reference-written v0.1 files of the corpus (hand-built with the Rust
// crate) hold ops and events at every timestamp. Our reader yields their
// items in the reference's order there too: per segment, times never go
// back, and at one time no op follows an event. (test_reader_dump compares
// the items themselves with the reference reader's JSON dumps.)
TEST(V01Order, CorpusV01FilesReadInTheReferenceOrder) {
  for (const char *name : {"23_rust_v01_wide", "24_rust_v01_compact"}) {
    SCOPED_TRACE(name);
    const auto segs = read(uscope::test::kCorpusDir + name + ".uscope");
    ASSERT_FALSE(segs.empty());
    size_t ops = 0, events = 0;
    for (const auto &seg : segs)
      for (size_t i = 0; i < seg.size(); ++i) {
        (seg[i].what[0] == 'E' ? events : ops)++;
        if (i == 0) continue;
        ASSERT_LE(seg[i - 1].t, seg[i].t) << i;
        if (seg[i - 1].t == seg[i].t) {
          EXPECT_FALSE(seg[i - 1].what[0] == 'E' && seg[i].what[0] == 'O') << i;
        }
      }
    EXPECT_EQ(ops, 20u);  // 10 frames of 2 ops and 1 event (the JSON dump)
    EXPECT_EQ(events, 10u);
  }
}

}  // namespace
