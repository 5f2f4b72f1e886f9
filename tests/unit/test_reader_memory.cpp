// The reader's memory at open does not depend on the size of the trace
// (issue 16 §4, issue 14 "peak RSS <= 128 MB on any input size"):
//  - the index it keeps costs a few dozen bytes per segment (SegmentInfo and
//    the segment table's entry), never a segment's worth: the same cycles cut
//    into 50 and into 2000 segments differ at open by at most
//    kPerSegmentBytes per extra segment of live heap (counted by the
//    allocator, not timed);
//  - opening does not decode the whole first segment to look at its frames
//    (the COMPAT 29 grid scan reads a prefix, and the segment buffers are
//    never zero-filled), so a trace whose segment 0 holds 80 MB of deltas
//    opens with a few MiB resident, not 130 (its raw and compressed bytes).
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "format/wire.hpp"
#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define USCOPE_TEST_SANITIZER_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define USCOPE_TEST_SANITIZER_HEAP 1
#endif
#endif

#if defined(USCOPE_TEST_SANITIZER_HEAP)
// Declared here: GCC installs no <sanitizer/allocator_interface.h>.
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace {

using uscope::test::TempDir;

constexpr uint64_t kPeriodPs = 1000;
constexpr uint16_t kSlots = 64;

// Bytes the allocator has handed out and not taken back, all threads. The
// test binary's malloc is glibc's (test_writer_alloc.cpp counts calls on
// top of it), whose mallinfo2 sums every arena and the mmapped chunks; under
// a sanitizer, the sanitizer's allocator says the same.
size_t heap_in_use() {
#if defined(USCOPE_TEST_SANITIZER_HEAP)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

// VmRSS of this process, in bytes (0 when /proc is unreadable: the caller
// asserts it is not).
uint64_t resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  return 0;
}

// `cycles` cycles of a small pipeline-like trace: each cycle sets two fields
// of `sets` slots and emits one event. step_ps apart (the clock's period is
// kPeriodPs), a checkpoint (a new segment) every interval_ps.
void write_trace(const std::string &path, uint64_t cycles, uint64_t interval_ps, uint32_t sets,
                 uint64_t step_ps = kPeriodPs) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t top = 0, st = 0, ev = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", kPeriodPs), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  const uscope_field_t fields[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, &st, "entries", top, kSlots, USCOPE_SF_SPARSE, fields, 2, nullptr, 0),
            USCOPE_OK);
  const uscope_field_t evf[] = {{"id", USCOPE_FT_U32, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_event(s, &ev, "retire", top, evf, 1), USCOPE_OK);
  uscope_writer_options_t o{};
  o.struct_size = sizeof o;
  o.checkpoint_interval_ps = interval_ps;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uscope_status_t bad = USCOPE_OK;
  uint32_t x = 0x9E3779B9u;
  for (uint64_t c = 0; c < cycles; ++c) {
    bad = static_cast<uscope_status_t>(bad | uscope_begin_cycle(w, c * step_ps));
    for (uint32_t k = 0; k < sets; ++k) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;  // values that do not compress away
      const uint16_t slot = static_cast<uint16_t>((c * sets + k) % kSlots);
      bad = static_cast<uscope_status_t>(bad | uscope_slot_set(w, st, slot, 0, x));
      bad = static_cast<uscope_status_t>(bad | uscope_slot_set(w, st, slot, 1, 0x80000000ull + 4 * x));
    }
    const uint32_t id = static_cast<uint32_t>(c);
    bad = static_cast<uscope_status_t>(bad | uscope_event(w, ev, &id, sizeof id));
    bad = static_cast<uscope_status_t>(bad | uscope_end_cycle(w));
  }
  ASSERT_EQ(bad, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
}

// What opening path adds to the live heap while the reader stays open.
struct Opened {
  size_t heap = 0;
  size_t segments = 0;
  uint64_t grid = 0;
};
Opened open_and_measure(const std::string &path) {
  Opened m;
  const size_t before = heap_in_use();
  {
    uscope::TraceReader r(path);
    const size_t after = heap_in_use();
    m.heap = after > before ? after - before : 0;
    m.segments = r.segments().size();
    m.grid = r.time_grid_ps();
  }
  return m;
}

// The index per segment: its SegmentInfo and its segment table entry, with
// room for a vector's spare capacity. A reader that kept a segment's header
// page, checkpoint or deltas per segment (kilobytes) is far above it.
constexpr size_t kPerSegmentBytes =
    sizeof(uscope::SegmentInfo) + 2 * sizeof(uscope::SegmentIndexEntry) + 8;

TEST(ReaderMemory, HeapAtOpenDoesNotGrowWithTheNumberOfSegments) {
  TempDir dir("reader_memory");
  ASSERT_TRUE(dir.ok());
  // The same 20,000 cycles cut every 400 and every 10 cycles: the items,
  // strings and summary are the same; only the number of segments differs.
  constexpr uint64_t kCycles = 20000;
  const std::string few = dir.file("few.uscope"), many = dir.file("many.uscope");
  write_trace(few, kCycles, 400 * kPeriodPs, 2);
  write_trace(many, kCycles, 10 * kPeriodPs, 2);
  ASSERT_FALSE(testing::Test::HasFatalFailure());

  // The counter must see the heap at all: a 1 MiB block shows.
  {
    const size_t h0 = heap_in_use();
    std::unique_ptr<uint8_t[]> block(new uint8_t[1 << 20]);
    asm volatile("" : : "g"(block.get()) : "memory");
    ASSERT_GE(heap_in_use() - h0, size_t{1} << 20) << "the heap counter does not see allocations";
  }

  const Opened a = open_and_measure(few);
  const Opened b = open_and_measure(many);
  ASSERT_EQ(a.segments, 50u);
  ASSERT_EQ(b.segments, 2000u);
  EXPECT_EQ(a.grid, kPeriodPs);
  EXPECT_EQ(b.grid, kPeriodPs);
  const size_t extra = b.segments - a.segments;
  EXPECT_LE(b.heap, a.heap + extra * kPerSegmentBytes)
      << "50 segments: " << a.heap << " bytes at open; 2000 segments: " << b.heap << " bytes ("
      << (b.heap > a.heap ? (b.heap - a.heap) / extra : 0) << " per extra segment, bound " << kPerSegmentBytes << ")";
  // And in absolute terms: the index plus one small segment's buffers.
  EXPECT_LE(b.heap, b.segments * kPerSegmentBytes + (size_t{1} << 20)) << b.heap << " bytes at open";
}

TEST(ReaderMemory, OpenDoesNotMakeAWholeSegmentResident) {
  TempDir dir("reader_memory");
  ASSERT_TRUE(dir.ok());
  // One segment of about 80 MB of raw deltas (no checkpoint before the end),
  // on the clock's grid and 500 ps apart (off it: COMPAT 29).
  const std::string on = dir.file("on_grid.uscope"), off = dir.file("off_grid.uscope");
  constexpr uint64_t kCycles = 200000;
  write_trace(on, kCycles, 0xFFFFFFFFFFFFull, 12);
  write_trace(off, kCycles, 0xFFFFFFFFFFFFull, 12, kPeriodPs / 2);
  ASSERT_FALSE(testing::Test::HasFatalFailure());

  for (const std::string *path : {&on, &off}) {
    SCOPED_TRACE(*path);
    const uint64_t rss0 = resident_bytes();
    ASSERT_GT(rss0, 0u) << "cannot read VmRSS from /proc/self/status";
    uscope::TraceReader r(*path);
    const uint64_t rss1 = resident_bytes();
    ASSERT_EQ(r.segments().size(), 1u);
    const uint32_t raw = r.segments()[0].header.deltas_raw_size;
    ASSERT_GE(raw, 40u << 20) << "the segment is meant to be large";
    // Opening touched at most a bounded prefix of it (and the index):
    // before, the whole segment (raw deltas and compressed body) was made
    // resident by the grid scan.
    EXPECT_LT(rss1 - std::min(rss1, rss0), uint64_t{8} << 20)
        << "open made " << (rss1 - std::min(rss1, rss0)) << " bytes resident for a segment of " << raw
        << " raw delta bytes";
    // The prefix still tells the grid the timestamps follow.
    EXPECT_EQ(r.time_grid_ps(), path == &on ? kPeriodPs : kPeriodPs / 2);
    // And the whole segment still reads: every event, the last one last.
    const auto &evs = r.events_in_range(0, UINT64_MAX);
    ASSERT_EQ(evs.size(), kCycles);
    uint32_t last = 0;
    std::memcpy(&last, evs.back().payload, sizeof last);
    EXPECT_EQ(last, kCycles - 1);
  }
}

// The summary (TSUM, §6) grows with the trace's length: 24 bytes per
// counter per 1,024 cycles at level 0. Opening reads its headers only; the
// arrays are read when asked for, and give what a whole decode gives.
TEST(ReaderMemory, OpenDoesNotHoldTheSummarysArrays) {
  TempDir dir("reader_memory");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("counters.uscope");
  constexpr int kCounters = 64;
  constexpr uint64_t kCycles = 12000 * 1024;  // 12,000 level-0 buckets
  {
    uscope_schema_t *s = nullptr;
    ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
    uint8_t clk = 0;
    uint16_t top = 0, ids[kCounters];
    ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", kPeriodPs), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
    const uscope_field_t count[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
    for (int c = 0; c < kCounters; ++c)
      ASSERT_EQ(uscope_schema_add_storage(s, &ids[c], ("ctr" + std::to_string(c)).c_str(), top, 1, 0, count, 1,
                                          nullptr, 0),
                USCOPE_OK);
    uscope_writer_options_t o{};
    o.struct_size = sizeof o;
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    uscope_status_t bad = USCOPE_OK;
    for (uint64_t c = 0; c < kCycles; c += 997) {  // about one cycle a bucket: a small file, a large summary
      bad = static_cast<uscope_status_t>(bad | uscope_begin_cycle(w, c * kPeriodPs));
      for (int k = 0; k < kCounters; ++k)
        bad = static_cast<uscope_status_t>(bad | uscope_slot_add(w, ids[k], 0, 0, c % 13 + k));
      bad = static_cast<uscope_status_t>(bad | uscope_end_cycle(w));
    }
    ASSERT_EQ(bad, USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  }
  uint64_t tsum_bytes = 0;
  size_t heap = 0;
  {
    const size_t before = heap_in_use();
    uscope::TraceReader r(path);
    heap = heap_in_use() - std::min(heap_in_use(), before);
    for (const auto &e : r.sections())
      if (e.type == uscope::wire::SECTION_COUNTER_SUMMARY) tsum_bytes = e.size;
    ASSERT_TRUE(r.summary().has_value());
    ASSERT_EQ(r.summary()->counters.size(), size_t{kCounters});
  }
  ASSERT_GE(tsum_bytes, uint64_t{16} << 20) << "the summary is meant to be large";
  EXPECT_LT(heap, size_t{2} << 20) << "open keeps " << heap << " bytes for a summary of " << tsum_bytes;

  // Through the C ABI: a level read on demand equals the whole decode's.
  uscope::TraceReader r(path);
  const uscope::TraceSummary whole = r.load_summary();
  uscope_reader_t *cr = nullptr;
  ASSERT_EQ(uscope_reader_open(&cr, path.c_str()), USCOPE_OK) << uscope_last_error();
  for (uint32_t c : {0u, uint32_t{kCounters - 1}}) {
    const uscope_mipmap_entry_t *e = nullptr;
    uint32_t n = 0;
    ASSERT_EQ(uscope_reader_summary_counter_level(cr, &e, &n, c, 1), USCOPE_OK) << uscope_last_error();
    const auto &want = whole.counters[c].levels[1];
    ASSERT_EQ(n, want.size());
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(e[i].sum, want[i].sum) << c << " " << i;
      ASSERT_EQ(e[i].min_delta, want[i].min_delta);
      ASSERT_EQ(e[i].max_delta, want[i].max_delta);
    }
    // Asked again: the same array (the pointer stays valid until close).
    const uscope_mipmap_entry_t *again = nullptr;
    ASSERT_EQ(uscope_reader_summary_counter_level(cr, &again, &n, c, 1), USCOPE_OK);
    EXPECT_EQ(again, e);
  }
  const uint32_t *d = nullptr;
  uint32_t nd = 0;
  ASSERT_EQ(uscope_reader_summary_density(cr, &d, &nd, 0), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(std::vector<uint32_t>(d, d + nd), whole.density.at(0));
  uscope_reader_close(cr);
}

}  // namespace
