// The C ABI's batch replay (uscope_reader_replay / uscope_replay_fill): the
// items it gives equal the C++ core's replay of the same window, for every
// capacity, on the reference corpus and on a trace written here; its misuse
// statuses; and no allocation per fill once warm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

// The allocation counter of this thread, kept by the allocator replacement
// in test_writer_alloc.cpp (one test binary).
namespace uscope::test {
uint64_t thread_allocations();
}

namespace {

using uscope::test::kCorpusDir;
using uscope::test::TempDir;

constexpr uint64_t kPeriod = 1000;

// An item with its payload's bytes, comparable whole.
struct Item {
  uint64_t time_ps = 0;
  uint32_t is_event = 0;
  uint8_t action = 0;
  uint16_t storage_id = 0, slot = 0, field = 0;
  uint64_t value = 0;
  uint16_t event_type_id = 0;
  std::vector<uint8_t> payload;
  bool operator==(const Item &o) const {
    return time_ps == o.time_ps && is_event == o.is_event && action == o.action && storage_id == o.storage_id &&
           slot == o.slot && field == o.field && value == o.value && event_type_id == o.event_type_id &&
           payload == o.payload;
  }
};

std::ostream &operator<<(std::ostream &os, const Item &i) {
  os << "{t=" << i.time_ps << (i.is_event ? " event " : " op ") << "action=" << int(i.action)
     << " storage=" << i.storage_id << " slot=" << i.slot << " field=" << i.field << " value=" << i.value
     << " type=" << i.event_type_id << " payload=" << i.payload.size() << "B}";
  return os;
}

Item from_c(const uscope_item_t &c) {
  Item i;
  i.time_ps = c.time_ps;
  i.is_event = c.is_event;
  i.action = c.action;
  i.storage_id = c.storage_id;
  i.slot = c.slot;
  i.field = c.field;
  i.value = c.value;
  i.event_type_id = c.event_type_id;
  if (c.payload_size) i.payload.assign(c.payload, c.payload + c.payload_size);
  return i;
}

// The reference: the core's replay of every segment, the items of [t0, t1].
std::vector<Item> core_items(const std::string &path, uint64_t t0, uint64_t t1) {
  uscope::TraceReader r(path);
  std::vector<uscope::StorageState> st = r.initial_state();
  struct Collect {
    uint64_t t0, t1;
    std::vector<Item> &out;
    void frame(uint64_t) {}
    void op(uint64_t t, const uscope::DeltaOp &o) {
      if (t < t0 || t > t1) return;
      Item i;
      i.time_ps = t;
      i.action = o.action;
      i.storage_id = o.storage_id;
      i.slot = o.slot;
      i.field = o.field;
      i.value = o.value;
      out.push_back(i);
    }
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
      if (t < t0 || t > t1) return;
      Item i;
      i.time_ps = t;
      i.is_event = 1;
      i.event_type_id = id;
      i.payload.assign(p, p + n);
      out.push_back(i);
    }
  };
  std::vector<Item> out;
  for (size_t s = 0; s < r.segments().size(); ++s) r.replay(s, st, Collect{t0, t1, out});
  return out;
}

// The same window through the C ABI, `cap` items per fill. Every fill's
// count is checked against its status. When `interleave`, another query on
// the reader runs between fills (the payloads are copied before it).
std::vector<Item> capi_items(const std::string &path, uint64_t t0, uint64_t t1, uint32_t cap,
                             bool interleave = false) {
  std::vector<Item> out;
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  if (!r) return out;
  uscope_replay_t *c = nullptr;
  EXPECT_EQ(uscope_reader_replay(r, &c, t0, t1), USCOPE_OK) << uscope_last_error();
  std::vector<uscope_item_t> buf(cap);
  uscope_status_t s;
  uint32_t n = 0;
  while ((s = uscope_replay_fill(c, buf.data(), &n, cap)) == USCOPE_OK) {
    EXPECT_GE(n, 1u);
    EXPECT_LE(n, cap);
    for (uint32_t k = 0; k < n; ++k) out.push_back(from_c(buf[k]));
    if (interleave) {
      uscope_event_iter_t *it = nullptr;
      EXPECT_EQ(uscope_reader_events_in_range(r, &it, 0, UINT64_MAX), USCOPE_OK);
      uscope_event_t ev;
      while (uscope_event_iter_next(it, &ev) == USCOPE_OK) {
      }
      uscope_event_iter_free(it);
      uscope_state_t *st = nullptr;
      EXPECT_EQ(uscope_reader_state_at(r, &st, 0), USCOPE_OK);
      uscope_state_free(st);
    }
  }
  EXPECT_EQ(s, USCOPE_DONE) << uscope_last_error();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(uscope_replay_fill(c, buf.data(), &n, cap), USCOPE_DONE);  // and stays done
  uscope_replay_free(c);
  uscope_reader_close(r);
  return out;
}

struct Window {
  const char *name;
  uint64_t t0, t1;
};

// Whole, inside one segment, across segments, and empty ones, from the file's
// own segment table.
std::vector<Window> windows(const std::string &path) {
  std::vector<Window> w{{"whole", 0, UINT64_MAX}, {"reversed", 10 * kPeriod, 5 * kPeriod}};
  uscope::TraceReader r(path);
  const auto &segs = r.segments();
  if (segs.empty()) return w;
  const auto &a = segs.front().header;
  const uint64_t len = a.time_end_ps - a.time_start_ps;
  w.push_back({"inside_first", a.time_start_ps + len / 4, a.time_start_ps + len / 2});
  w.push_back({"one_instant", a.time_end_ps, a.time_end_ps});
  if (segs.size() >= 2) {
    const auto &b = segs[1].header;
    w.push_back({"spanning", a.time_start_ps + len / 2, b.time_start_ps + (b.time_end_ps - b.time_start_ps) / 2});
    const auto &z = segs.back().header;
    w.push_back({"inside_last", z.time_start_ps + 1, z.time_end_ps});
  }
  w.push_back({"past_end", segs.back().header.time_end_ps + 1, UINT64_MAX});
  return w;
}

void expect_same_as_core(const std::string &path, size_t *total_items = nullptr) {
  for (const Window &w : windows(path)) {
    SCOPED_TRACE(path + " window " + w.name + " [" + std::to_string(w.t0) + ", " + std::to_string(w.t1) + "]");
    const std::vector<Item> want = core_items(path, w.t0, w.t1);
    if (std::string(w.name) == "whole" && total_items) *total_items = want.size();
    if (std::string(w.name) == "reversed" || std::string(w.name) == "past_end") {
      EXPECT_TRUE(want.empty());
    }
    for (const uint32_t cap : {1u, 7u, 1u << 16}) {
      SCOPED_TRACE("capacity " + std::to_string(cap));
      const std::vector<Item> got = capi_items(path, w.t0, w.t1, cap);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "item " << k;
    }
  }
}

// A multi-segment trace with ops of every action and events of two sizes
// (segments of 100 cycles, 23 or 24 items a cycle).
std::string write_trace(const TempDir &dir, uint64_t cycles = 1000) {
  const std::string path = dir.file("replay.uscope");
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", kPeriod), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uscope_field_t f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  uscope_field_t p[] = {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "buf", 0, 16, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER, f, 2, p, 1),
            USCOPE_OK);
  uscope_field_t c[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "ctr", 0, 1, 0, c, 1, nullptr, 0), USCOPE_OK);
  uscope_field_t e1[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"x", USCOPE_FT_U8, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "small", 0, e1, 2), USCOPE_OK);
  uscope_field_t e2[] = {{"a", USCOPE_FT_U64, 0, 0, 0}, {"b", USCOPE_FT_U64, 0, 0, 0}, {"c", USCOPE_FT_U32, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "large", 0, e2, 3), USCOPE_OK);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * kPeriod;
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return path;
  for (uint64_t cy = 0; cy < cycles; ++cy) {
    uscope_status_t bad = uscope_begin_cycle(w, cy * kPeriod);
    for (uint16_t k = 0; k < 4; ++k) {
      const uint16_t slot = static_cast<uint16_t>((cy * 4 + k) % 16);
      bad |= uscope_slot_set(w, 0, slot, 0, cy * 4 + k);
      bad |= uscope_slot_set(w, 0, slot, 1, 0x80000000ull + 16 * cy + 4 * k);
    }
    bad |= uscope_slot_clear(w, 0, static_cast<uint16_t>((cy * 4 + 8) % 16));
    bad |= uscope_prop_set(w, 0, 0, cy % 16);
    bad |= uscope_slot_add(w, 1, 0, 0, 3);
    for (uint32_t k = 0; k < 10; ++k) {
      uint8_t small[5];
      const uint32_t id = static_cast<uint32_t>(cy * 10 + k);
      std::memcpy(small, &id, 4);
      small[4] = static_cast<uint8_t>(k);
      bad |= uscope_event(w, 0, small, sizeof small);
    }
    if (cy % 3 == 0) {
      uint8_t large[20];
      for (uint8_t k = 0; k < 20; ++k) large[k] = static_cast<uint8_t>(cy + k);
      bad |= uscope_event(w, 1, large, sizeof large);
    }
    bad |= uscope_end_cycle(w);
    EXPECT_EQ(bad, USCOPE_OK) << uscope_last_error();
    if (bad) break;
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  return path;
}

TEST(ReaderReplayCapi, EqualsTheCoreReplayOnAWrittenTrace) {
  TempDir dir("uscope_replay");
  const std::string path = write_trace(dir);
  size_t total = 0;
  ASSERT_NO_FATAL_FAILURE(expect_same_as_core(path, &total));
  EXPECT_GT(total, 20000u);  // the reference is not empty
  uscope::TraceReader r(path);
  EXPECT_GE(r.segments().size(), 9u);
}

TEST(ReaderReplayCapi, EqualsTheCoreReplayOnTheCorpus) {
  const char *files[] = {"01_tiny",          "02_multiseg",        "03_sparse_dense",     "04_props",
                         "05_events_all_types", "06_wide_compact",  "07_many_storages",    "08_multiclock_scopes",
                         "10_live_incomplete", "11_empty",          "12_boundary",         "20_konata_sample",
                         "21_konata2uscope_overflow"};
  size_t nonempty = 0;
  for (const char *f : files) {
    const std::string path = kCorpusDir + f + ".uscope";
    ASSERT_FALSE(uscope::test::read_all(path).empty()) << "missing corpus file " << path;
    size_t total = 0;
    ASSERT_NO_FATAL_FAILURE(expect_same_as_core(path, &total));
    nonempty += total > 0;
  }
  EXPECT_GE(nonempty, 10u);
}

// Other calls on the reader between fills (which reuse its segment buffers)
// change nothing in what the next fills give.
TEST(ReaderReplayCapi, OtherQueriesBetweenFillsChangeNothing) {
  TempDir dir("uscope_replay");
  const std::string path = write_trace(dir, 300);
  const uint64_t t0 = 150 * kPeriod + 1, t1 = 250 * kPeriod;
  const std::vector<Item> want = core_items(path, t0, t1);
  ASSERT_FALSE(want.empty());
  for (const uint32_t cap : {1u, 7u, 1000u}) {
    SCOPED_TRACE("capacity " + std::to_string(cap));
    const std::vector<Item> got = capi_items(path, t0, t1, cap, /*interleave=*/true);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "item " << k;
  }
}

TEST(ReaderReplayCapi, MisuseGetsSpecificStatuses) {
  TempDir dir("uscope_replay");
  const std::string path = write_trace(dir, 300);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_replay_t *c = nullptr;
  EXPECT_EQ(uscope_reader_replay(nullptr, &c, 0, 10), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_reader_replay(r, nullptr, 0, 10), USCOPE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(uscope_reader_replay(r, &c, 0, UINT64_MAX), USCOPE_OK);
  uscope_item_t items[4];
  uint32_t n = 99;
  EXPECT_EQ(uscope_replay_fill(nullptr, items, &n, 4), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("cursor is NULL"), std::string::npos);
  EXPECT_EQ(uscope_replay_fill(c, nullptr, &n, 4), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_replay_fill(c, items, nullptr, 4), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_replay_fill(c, items, &n, 0), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(n, 0u);
  EXPECT_NE(std::string(uscope_last_error()).find("capacity is 0"), std::string::npos);
  EXPECT_NE(std::string(uscope_reader_error(r)).find("capacity is 0"), std::string::npos);
  // Bad calls leave the cursor as it was: it starts at the first item.
  ASSERT_EQ(uscope_replay_fill(c, items, &n, 4), USCOPE_OK);
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(items[0].time_ps, 0u);
  EXPECT_EQ(items[0].value, 0u);
  // Closing the reader first: the cursor fails cleanly and is still freed.
  uscope_replay_t *c2 = nullptr;
  ASSERT_EQ(uscope_reader_replay(r, &c2, 0, UINT64_MAX), USCOPE_OK);
  uscope_reader_close(r);
  EXPECT_EQ(uscope_replay_fill(c, items, &n, 4), USCOPE_ERR_BAD_STATE);
  EXPECT_NE(std::string(uscope_last_error()).find("reader was closed"), std::string::npos);
  EXPECT_EQ(uscope_replay_fill(c2, items, &n, 4), USCOPE_ERR_BAD_STATE);
  uscope_replay_free(c);
  uscope_replay_free(c2);
  uscope_replay_free(nullptr);
}

// A cursor made before a poll that found new segments refuses to go on; a
// new one sees them.
TEST(ReaderReplayCapi, CursorFailsAfterThePollChangedTheIndex) {
  TempDir dir("uscope_replay");
  const std::string path = dir.file("live.uscope");
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", kPeriod), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uscope_field_t f[] = {{"v", USCOPE_FT_U32, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, nullptr, "st", 0, 4, 0, f, 1, nullptr, 0), USCOPE_OK);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 1'000'000'000;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uint64_t cy = 0;
  auto write10 = [&] {
    for (const uint64_t end = cy + 10; cy < end; ++cy) {
      ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
      ASSERT_EQ(uscope_slot_set(w, 0, cy % 4, 0, cy), USCOPE_OK);
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK);
  };
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  // The writer commits a flushed segment on its own thread: poll until seen.
  auto poll = [&] {
    uint32_t found = 0;
    for (int tries = 0; tries < 20000 && found == 0; ++tries) {
      ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK);
      if (!found) usleep(1000);
    }
    ASSERT_EQ(found, 1u);
  };
  ASSERT_NO_FATAL_FAILURE(write10());
  ASSERT_NO_FATAL_FAILURE(poll());
  uscope_replay_t *c = nullptr;
  ASSERT_EQ(uscope_reader_replay(r, &c, 0, UINT64_MAX), USCOPE_OK);
  uscope_item_t items[4];
  uint32_t n = 0;
  ASSERT_EQ(uscope_replay_fill(c, items, &n, 4), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(n, 4u);
  ASSERT_NO_FATAL_FAILURE(write10());
  ASSERT_NO_FATAL_FAILURE(poll());
  EXPECT_EQ(uscope_replay_fill(c, items, &n, 4), USCOPE_ERR_BAD_STATE);
  EXPECT_NE(std::string(uscope_reader_error(r)).find("poll_new_segments"), std::string::npos);
  uscope_replay_free(c);
  // A new cursor replays both flushes.
  ASSERT_EQ(uscope_reader_replay(r, &c, 0, UINT64_MAX), USCOPE_OK);
  size_t total = 0;
  uscope_status_t st;
  while ((st = uscope_replay_fill(c, items, &n, 4)) == USCOPE_OK) total += n;
  EXPECT_EQ(st, USCOPE_DONE);
  EXPECT_EQ(total, 20u);
  uscope_replay_free(c);
  uscope_reader_close(r);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
}

// A segment whose deltas do not decode: tolerant, the fills go on past it
// (its items up to the damage, as in the core's replay; the defect counted);
// strict, the fill fails and the cursor keeps failing with that status.
TEST(ReaderReplayCapi, UndecodableSegmentTolerantAndStrict) {
  TempDir dir("uscope_replay");
  const std::string good = write_trace(dir, 300);
  uscope::TraceReader probe(good);
  ASSERT_GE(probe.segments().size(), 3u);
  const auto &seg = probe.segments()[1];
  // Overwrite the middle of segment 1's compressed deltas.
  std::string bytes = uscope::test::read_all(good);
  const size_t at = seg.offset + uscope::wire::kSegmentHeaderSize + seg.header.checkpoint_size +
                    seg.header.deltas_compressed_size / 2;
  ASSERT_LT(at + 64, bytes.size());
  for (size_t k = 0; k < 64; ++k) bytes[at + k] = static_cast<char>(0xA5 ^ k);
  const std::string bad = dir.file("bad.uscope");
  uscope::test::write_all(bad, bytes);

  const std::vector<Item> want = core_items(bad, 0, UINT64_MAX);
  const std::vector<Item> got = capi_items(bad, 0, UINT64_MAX, 7);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "item " << k;
  EXPECT_LT(got.size(), core_items(good, 0, UINT64_MAX).size());
  EXPECT_GT(got.size(), 0u);

  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open_ex(&r, bad.c_str(), USCOPE_READ_STRICT), USCOPE_OK) << uscope_last_error();
  uscope_replay_t *c = nullptr;
  ASSERT_EQ(uscope_reader_replay(r, &c, 0, UINT64_MAX), USCOPE_OK);
  std::vector<uscope_item_t> items(1000);
  uint32_t n = 0;
  uscope_status_t st;
  while ((st = uscope_replay_fill(c, items.data(), &n, 1000)) == USCOPE_OK) {
  }
  EXPECT_TRUE(st == USCOPE_ERR_CORRUPT || st == USCOPE_ERR_TRUNCATED) << st << " " << uscope_last_error();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(uscope_replay_fill(c, items.data(), &n, 1000), st);
  EXPECT_NE(std::string(uscope_last_error()).find("failed earlier"), std::string::npos);
  uscope_replay_free(c);
  uscope_reader_close(r);
}

// Once warm (the first fills: the cursor's pending items, the reader's
// buffers), fills allocate nothing, across segments included.
TEST(ReaderReplayCapi, FillsAllocateNothingOnceWarm) {
  TempDir dir("uscope_replay");
  const std::string path = write_trace(dir, 3000);
  for (const uint32_t cap : {7u, 1024u}) {
    SCOPED_TRACE("capacity " + std::to_string(cap));
    uscope_reader_t *r = nullptr;
    ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
    uscope_replay_t *c = nullptr;
    ASSERT_EQ(uscope_reader_replay(r, &c, 0, UINT64_MAX), USCOPE_OK);
    std::vector<uscope_item_t> items(cap);
    uint32_t n = 0;
    ASSERT_EQ(uscope_replay_fill(c, items.data(), &n, cap), USCOPE_OK);  // the first fill warms up
    size_t fills = 0, total = n;
    uscope_status_t st;
    const uint64_t before = uscope::test::thread_allocations();
    while ((st = uscope_replay_fill(c, items.data(), &n, cap)) == USCOPE_OK) {
      ++fills;
      total += n;
    }
    const uint64_t after = uscope::test::thread_allocations();
    EXPECT_EQ(st, USCOPE_DONE);
    EXPECT_EQ(after - before, 0u) << "over " << fills << " fills";
    EXPECT_GT(fills, 5u);
    EXPECT_EQ(total, core_items(path, 0, UINT64_MAX).size());
    uscope_replay_free(c);
    uscope_reader_close(r);
  }
  // The counter sees this thread's allocations at all.
  const uint64_t a0 = uscope::test::thread_allocations();
  std::vector<uint8_t> *v = new std::vector<uint8_t>(100);
  asm volatile("" : : "g"(v) : "memory");
  delete v;
  EXPECT_GE(uscope::test::thread_allocations() - a0, 1u);
}

// segment_items and events_in_range keep their answers with reused buffers:
// two iterators in turn, and one freed after its reader is closed.
TEST(ReaderReplayCapi, IteratorsReuseBuffersSafely) {
  TempDir dir("uscope_replay");
  const std::string path = write_trace(dir, 300);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  const std::vector<Item> whole = core_items(path, 0, UINT64_MAX);
  size_t k = 0;
  for (uint32_t s = 0; s < 3; ++s) {
    uscope_item_iter_t *it = nullptr;
    ASSERT_EQ(uscope_reader_segment_items(r, &it, s), USCOPE_OK);
    uscope_item_t item;
    while (uscope_item_iter_next(it, &item) == USCOPE_OK) {
      ASSERT_LT(k, whole.size());
      ASSERT_EQ(from_c(item), whole[k]) << "item " << k;
      ++k;
    }
    uscope_item_iter_free(it);
  }
  EXPECT_EQ(k, whole.size());
  std::vector<Item> want;
  for (const Item &i : core_items(path, 50 * kPeriod, 160 * kPeriod))
    if (i.is_event) want.push_back(i);
  ASSERT_FALSE(want.empty());
  for (int round = 0; round < 2; ++round) {
    uscope_event_iter_t *it = nullptr;
    ASSERT_EQ(uscope_reader_events_in_range(r, &it, 50 * kPeriod, 160 * kPeriod), USCOPE_OK);
    size_t events = 0;
    uscope_event_t ev;
    while (uscope_event_iter_next(it, &ev) == USCOPE_OK) {
      ASSERT_LT(events, want.size());
      const Item &w = want[events++];
      EXPECT_EQ(ev.time_ps, w.time_ps);
      EXPECT_EQ(ev.event_type_id, w.event_type_id);
      ASSERT_EQ(ev.payload_size, w.payload.size());
      EXPECT_EQ(std::memcmp(ev.payload, w.payload.data(), w.payload.size()), 0);
    }
    uscope_event_iter_free(it);
    EXPECT_EQ(events, want.size());
  }
  uscope_item_iter_t *late = nullptr;
  ASSERT_EQ(uscope_reader_segment_items(r, &late, 1), USCOPE_OK);
  uscope_reader_close(r);
  uscope_item_t item;
  EXPECT_EQ(uscope_item_iter_next(late, &item), USCOPE_OK);
  uscope_item_iter_free(late);
}

}  // namespace
