// uscope_writer_finish: the file is complete and the stats are final before
// the writer is freed. uscope_writer_flush: completed cycles reach the file
// without waiting for a checkpoint boundary.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

// A writer on the smallest valid schema (one clock, the root scope) plus, when
// name is not NULL, one storage with one field.
uscope_writer_t *open_writer(const std::string &path, const char *name, uint16_t slots,
                             uint16_t flags, uint8_t type, const uscope_writer_options_t *o,
                             uint16_t *sid = nullptr) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  if (name) {
    uscope_field_t f[] = {{"v", type, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_storage(s, sid, name, 0, slots, flags, f, 1, nullptr, 0), USCOPE_OK);
  }
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  return w;
}

TEST(WriterFinish, StatsAreFinalAndMatchTheFile) {
  TempDir dir("uscope_finish");
  const std::string path = dir.file("t.uscope");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * 1000;  // a segment every 100 cycles
  uint16_t sid = 0;
  uscope_writer_t *w = open_writer(path, "regs", 16, 0, USCOPE_FT_U64, &o, &sid);
  ASSERT_NE(w, nullptr);
  for (uint64_t c = 0; c < 1050; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, sid, c % 16, 0, c * 0x10001), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_finish(w), USCOPE_OK);

  uscope_writer_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  const uscope::test::TraceFile t = uscope::test::read_trace_file(path);
  struct stat sb {};
  ASSERT_EQ(stat(path.c_str(), &sb), 0);
  EXPECT_EQ(st.file_bytes, static_cast<uint64_t>(sb.st_size));
  EXPECT_EQ(st.segments, t.header.num_segments);
  EXPECT_EQ(st.segments, 11u);  // 10 full segments and the 50 cycles left at close
  uint64_t raw = 0, compressed = 0, checkpoints = 0, frames = 0;
  for (const auto &seg : t.segments) {
    raw += seg.header.deltas_raw_size;
    compressed += seg.header.deltas_compressed_size;
    checkpoints += seg.header.checkpoint_size;
    frames += seg.header.num_frames;
  }
  EXPECT_EQ(st.raw_bytes, raw);
  EXPECT_EQ(st.compressed_bytes, compressed);
  EXPECT_EQ(st.checkpoint_bytes, checkpoints);
  EXPECT_EQ(st.frames, frames);
  EXPECT_EQ(st.cycles, 1050u);
  EXPECT_EQ(st.ops, 1050u);

  // The writer is finished: per-cycle calls are refused, finish and close
  // repeat the first status.
  EXPECT_EQ(uscope_begin_cycle(w, 2'000'000), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_finish(w), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  EXPECT_EQ(uscope::test::read_bytes(path), t.bytes);  // close wrote nothing more
}

TEST(WriterFinish, RepeatsTheStickyError) {
  TempDir dir("uscope_finish");
  const std::string path = dir.file("t.uscope");
  uscope_writer_t *w = open_writer(path, nullptr, 0, 0, 0, nullptr);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_finish(w), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_finish(w), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_finish(nullptr), USCOPE_ERR_INVALID_ARGUMENT);
}

// A time jump of 2^62 ps would need ~10^12 summary buckets: the summary is
// left out (trace content stays complete) and the stats say so.
TEST(WriterFinish, ReportsAnOmittedSummary) {
  TempDir dir("uscope_finish");
  const std::string path = dir.file("t.uscope");
  uint16_t sid = 0;  // a sparse storage: the writer computes a TSUM (COMPAT 16)
  uscope_writer_t *w = open_writer(path, "entities", 8, USCOPE_SF_SPARSE, USCOPE_FT_U32, nullptr, &sid);
  ASSERT_NE(w, nullptr);
  for (uint64_t t : {uint64_t{0}, uint64_t{1000}, uint64_t{1} << 62}) {
    ASSERT_EQ(uscope_begin_cycle(w, t), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, sid, 1, 0, 7), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_finish(w), USCOPE_OK);
  uscope_writer_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.summary_omitted, 1u);
  EXPECT_NE(std::string(uscope_writer_error(w)).find("summary was left out"), std::string::npos);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  const uscope::test::TraceFile t = uscope::test::read_trace_file(path);
  EXPECT_FALSE(t.summary.has_value());
  size_t items = 0;
  for (const auto &seg : t.segments) items += seg.items.size();
  EXPECT_EQ(items, 3u);
  EXPECT_EQ(t.header.total_time_ps, uint64_t{1} << 62);
}

// Near 2^64 ps, "time + interval" must saturate rather than wrap to the past,
// which would make every later cycle end a segment.
TEST(WriterFinish, CheckpointTimeSaturatesNearTheEndOfTime) {
  TempDir dir("uscope_finish");
  const std::string path = dir.file("t.uscope");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 10'000;
  uscope_writer_t *w = open_writer(path, "regs", 4, 0, USCOPE_FT_U32, &o);
  ASSERT_NE(w, nullptr);
  for (uint64_t back : {3000u, 2000u, 1000u}) {
    ASSERT_EQ(uscope_begin_cycle(w, UINT64_MAX - back), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, 0, 0, 0, back), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const uscope::test::TraceFile t = uscope::test::read_trace_file(path);
  // The first cycle passes the first checkpoint time (10,000 ps) and ends
  // segment 0; the next checkpoint time saturates, so the other two cycles
  // share segment 1, cut at close.
  ASSERT_EQ(t.segments.size(), 2u);
  EXPECT_EQ(t.segments[0].frame_times.size(), 1u);
  EXPECT_EQ(t.segments[1].frame_times.size(), 2u);
  EXPECT_EQ(t.header.total_time_ps, UINT64_MAX - 1000);
}

TEST(WriterFlush, CommitsEveryCompletedCycleToTheLiveFile) {
  TempDir dir("uscope_flush");
  const std::string path = dir.file("t.uscope");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 1'000'000'000;  // no boundary during this test
  uint16_t sid = 0;
  uscope_writer_t *w = open_writer(path, "regs", 4, 0, USCOPE_FT_U32, &o, &sid);
  ASSERT_NE(w, nullptr);

  // Two rounds: each flush must make all cycles so far readable, in a new segment.
  uint64_t c = 0;
  for (int round = 1; round <= 2; ++round) {
    for (const uint64_t stop = c + 37; c < stop; ++c) {
      ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
      ASSERT_EQ(uscope_slot_set(w, sid, c % 4, 0, c), USCOPE_OK);
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK);
    // The commit happens on the encoder thread: poll the file, bounded.
    uscope::test::TraceFile t;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      t = uscope::test::read_trace_file(path);
      if (t.segments.size() == static_cast<size_t>(round)) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "flush was not committed";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    size_t items = 0;
    for (const auto &seg : t.segments) items += seg.items.size();
    EXPECT_EQ(items, c);
    EXPECT_EQ(t.segments.back().items.back().op.value, c - 1);
  }
  // Inside a cycle it is misuse.
  ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
  EXPECT_EQ(uscope_writer_flush(w), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_BAD_STATE);
  const uscope::test::TraceFile t = uscope::test::read_trace_file(path);
  EXPECT_EQ(t.segments.size(), 2u);  // the aborted cycle is not in the file
}

}  // namespace

// The queue's floor is four of the largest records; checkpoint_storage's
// data travels in pieces no larger than the schema's largest storage, so a
// small schema keeps the 64 KiB minimum it asked for (it was raised to
// 4 x 64 KiB pieces: 256 KiB, all pre-faulted at open). Its checkpoints
// still go through.
TEST(WriterQueue, ASmallSchemaKeepsTheMinimumQueue) {
  TempDir dir;
  const std::string path = dir.file("q.uscope");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.queue_bytes = 64 * 1024;
  o.checkpoint_interval_ps = 10 * 1000;
  uint16_t sid = 0;
  uscope_writer_t *w = open_writer(path, "regs", 8, 0, USCOPE_FT_U64, &o, &sid);
  ASSERT_TRUE(w);
  uscope_writer_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.queue_bytes, 64u * 1024);
  struct Ckpt {
    uint16_t sid;
    unsigned calls = 0, bad = 0;
  } ck{sid};
  ASSERT_EQ(uscope_set_checkpoint_callback(
                w,
                [](uscope_writer_t *wr, uint64_t t, void *u) {
                  auto *c = static_cast<Ckpt *>(u);
                  uint64_t data[8];
                  for (uint64_t i = 0; i < 8; ++i) data[i] = t + i;
                  ++c->calls;
                  if (uscope_checkpoint_storage(wr, c->sid, nullptr, data, 8) != USCOPE_OK) ++c->bad;
                },
                &ck),
            USCOPE_OK);
  for (uint64_t c = 0; c < 100; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(w, sid, c % 8, 0, c), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w);
  }
  EXPECT_GT(ck.calls, 0u);
  EXPECT_EQ(ck.bad, 0u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  const auto t = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : t.segments) frames += seg.header.num_frames;
  EXPECT_EQ(frames, 100u);
}
