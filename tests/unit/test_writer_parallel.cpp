// Segment compression on worker threads (uscope_writer_options_t.compress_threads,
// src/writer/segment_committer.*): the file is byte for byte the one inline
// compression writes, for every worker count, method and frame format; a
// full pool is waited for and counted, never dropped; a live reader sees
// segments in order; the option is checked. (A write failure on a worker:
// WriterMisuse.CompressionWorkerWriteErrorIsStickyIo.)
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

// A core-like schema: a sparse entity table, a dense counter, an event with
// a payload; values from a fixed seed, so that every writer gets the same calls.
uscope_schema_t *make_schema() {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t top = 0, id = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &top, "core0", USCOPE_NO_PARENT, "cpu", clk), USCOPE_OK);
  const uscope_field_t ent[] = {{"pc", USCOPE_FT_U64, 0, 0, 0}, {"bits", USCOPE_FT_U32, 0, 0, 0},
                                {"stage", USCOPE_FT_U8, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id, "entities", top, 64, USCOPE_SF_SPARSE, ent, 3, nullptr, 0),
            USCOPE_OK);
  const uscope_field_t cnt[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id, "retired", top, 1, 0, cnt, 1, nullptr, 0), USCOPE_OK);
  const uscope_field_t ev[] = {{"entity", USCOPE_FT_U32, 0, 0, 0}, {"stage", USCOPE_FT_U16, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &id, "stage_transition", top, ev, 2), USCOPE_OK);
  return s;
}

struct Workload {
  uint32_t compression = USCOPE_COMPRESSION_LZ4;
  int32_t level = 0;
  uint32_t frames = USCOPE_FRAMES_V02;
  uint32_t threads = USCOPE_COMPRESS_THREADS_INLINE;
  uint64_t cycles = 24'000;
  uint64_t interval_ps = 200'000;  // a segment every 200 cycles: 120 segments
};

struct Written {
  std::string bytes;
  uscope_writer_stats_t stats{};
};

Written write_trace(const std::string &path, const Workload &r) {
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compression = r.compression;
  o.compression_level = r.level;
  o.frame_format = r.frames;
  o.compress_threads = r.threads;
  o.checkpoint_interval_ps = r.interval_ps;
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  Written out;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return out;
  std::mt19937_64 rng(42);
  uint64_t retired = 0;
  bool ok = true;
  for (uint64_t c = 1; c <= r.cycles && ok; ++c) {
    ok &= uscope_begin_cycle(w, c * 1000) == USCOPE_OK;
    const unsigned n = static_cast<unsigned>(rng() % 8);
    for (unsigned i = 0; i < n; ++i) {
      const uint16_t slot = static_cast<uint16_t>(rng() % 64);
      const uint64_t x = rng();
      if (x % 11 == 0) {
        ok &= uscope_slot_clear(w, 0, slot) == USCOPE_OK;
        continue;
      }
      ok &= uscope_slot_set(w, 0, slot, 0, 0x80000000u + (x >> 40) * 4) == USCOPE_OK;
      ok &= uscope_slot_set(w, 0, slot, 1, static_cast<uint32_t>(x)) == USCOPE_OK;
      ok &= uscope_slot_set(w, 0, slot, 2, x % 5) == USCOPE_OK;
      const uint8_t payload[6] = {static_cast<uint8_t>(slot), 0, 0, 0, static_cast<uint8_t>(x % 5), 0};
      ok &= uscope_event(w, 0, payload, sizeof payload) == USCOPE_OK;
    }
    if (rng() % 3 == 0) ok &= uscope_slot_add(w, 1, 0, 0, 1 + (retired++ % 2)) == USCOPE_OK;
    ok &= uscope_end_cycle(w) == USCOPE_OK;
  }
  EXPECT_TRUE(ok) << uscope_writer_error(w);
  EXPECT_EQ(uscope_writer_finish(w), USCOPE_OK) << uscope_last_error();
  out.stats.struct_size = sizeof out.stats;
  EXPECT_EQ(uscope_writer_stats(w, &out.stats), USCOPE_OK);  // the final figures
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  out.bytes = uscope::test::read_all(path);
  return out;
}

// The reference for each method and format: the inline writer's file.
TEST(WriterParallel, FilesAreByteIdenticalToInlineCompressionForAnyWorkerCount) {
  TempDir dir;
  struct Method {
    uint32_t id;
    int32_t level;
  };
  const Method methods[] = {{USCOPE_COMPRESSION_LZ4, 0}, {USCOPE_COMPRESSION_LZ4, 4},
                            {USCOPE_COMPRESSION_ZSTD, 3}, {USCOPE_COMPRESSION_NONE, 0}};
  for (const Method &m : methods) {
    for (uint32_t frames : {USCOPE_FRAMES_V02, USCOPE_FRAMES_V01}) {
      Workload r;
      r.compression = m.id;
      r.level = m.level;
      r.frames = frames;
      const Written ref = write_trace(dir.file("inline.uscope"), r);
      ASSERT_GT(ref.stats.segments, 100u);
      EXPECT_EQ(ref.stats.compress_threads, 0u);
      for (uint32_t workers : {1u, 2u, 3u, 4u, 0u}) {
        SCOPED_TRACE("method " + std::to_string(m.id) + " level " + std::to_string(m.level) + " frames " +
                     std::to_string(frames) + " workers " + std::to_string(workers));
        r.threads = workers;
        const Written got = write_trace(dir.file("w" + std::to_string(workers) + ".uscope"), r);
        if (workers) {
          EXPECT_EQ(got.stats.compress_threads, workers);
        }
        EXPECT_EQ(got.stats.segments, ref.stats.segments);
        EXPECT_EQ(got.stats.compressed_bytes, ref.stats.compressed_bytes);
        ASSERT_EQ(got.bytes.size(), ref.bytes.size());
        EXPECT_TRUE(got.bytes == ref.bytes) << "first difference at byte "
                                            << std::mismatch(got.bytes.begin(), got.bytes.end(), ref.bytes.begin())
                                                       .first -
                                                   got.bytes.begin();
      }
    }
  }
}

// The decoded content, not only the bytes: every segment's frames in order
// and chained (§8.1 prev_segment_offset), with 4 workers.
TEST(WriterParallel, SegmentsAreChainedInTimeOrder) {
  TempDir dir;
  Workload r;
  r.threads = 4;
  const std::string path = dir.file("t.uscope");
  const Written w = write_trace(path, r);
  const auto tf = uscope::test::read_trace_file(path);
  ASSERT_EQ(tf.segments.size(), w.stats.segments);
  uint64_t next = 1000, frames = 0;
  for (size_t i = 0; i < tf.segments.size(); ++i) {
    const auto &seg = tf.segments[i];
    if (i) {
      EXPECT_EQ(seg.header.prev_segment_offset, tf.segments[i - 1].offset) << "segment " << i;
      EXPECT_EQ(seg.header.time_start_ps, tf.segments[i - 1].header.time_end_ps);
    }
    for (uint64_t t : seg.frame_times) {
      EXPECT_EQ(t, next);
      next += 1000;
    }
    frames += seg.frame_times.size();
  }
  EXPECT_EQ(frames, r.cycles);
}

// One worker, zstd at its slowest level and small segments: the encoder
// outruns the worker, so it must wait for free slots. Every wait is counted,
// and every cycle is in the file.
TEST(WriterParallel, AFullPoolIsWaitedForAndCountedNeverDropped) {
  TempDir dir;
  Workload r;
  r.compression = USCOPE_COMPRESSION_ZSTD;
  r.level = 22;
  r.threads = 1;
  r.cycles = 8'000;
  r.interval_ps = 1'000'000;  // 8 segments of 1000 cycles
  const std::string path = dir.file("t.uscope");
  const Written w = write_trace(path, r);
  EXPECT_GT(w.stats.compress_waits, 0u);
  EXPECT_GT(w.stats.compress_wait_ns, 0u);
  EXPECT_EQ(w.stats.dropped_cycles, 0u);
  const auto tf = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : tf.segments) frames += seg.frame_times.size();
  EXPECT_EQ(frames, r.cycles);
  // And it is still the inline writer's file.
  r.threads = USCOPE_COMPRESS_THREADS_INLINE;
  EXPECT_TRUE(write_trace(dir.file("inline.uscope"), r).bytes == w.bytes);
}

// A live reader opened while workers are committing finds a prefix of the
// segments, each complete, and more of them after a poll.
TEST(WriterParallel, ALiveReaderSeesCommittedSegmentsInOrder) {
  TempDir dir;
  const std::string path = dir.file("live.uscope");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compress_threads = 4;
  o.checkpoint_interval_ps = 100'000;
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  uscope_schema_free(s);
  uint64_t t = 0;
  auto cycles = [&](int n) {
    for (int i = 0; i < n; ++i) {
      t += 1000;
      ASSERT_EQ(uscope_begin_cycle(w, t), USCOPE_OK);
      ASSERT_EQ(uscope_slot_add(w, 1, 0, 0, 1), USCOPE_OK);
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
  };
  // Waits until the writer has committed at least n segments.
  auto committed = [&](uint64_t n) {
    uscope_writer_stats_t st{};
    for (int k = 0; k < 2000; ++k) {
      st.struct_size = sizeof st;
      EXPECT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
      if (st.segments >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  cycles(5'000);  // 50 segments
  ASSERT_TRUE(committed(49));
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  EXPECT_GE(info.num_segments, 49u);
  const uint32_t first = info.num_segments;
  cycles(5'000);
  ASSERT_TRUE(committed(99));
  uint32_t found = 0;
  ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  EXPECT_GE(info.num_segments, 99u);
  EXPECT_EQ(info.num_segments, first + found);
  // The state at the last committed segment's start holds every add before it.
  uscope_reader_close(r);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto tf = uscope::test::read_trace_file(path);
  uint64_t frames = 0;
  for (const auto &seg : tf.segments) frames += seg.frame_times.size();
  EXPECT_EQ(frames, 10'000u);
}

TEST(WriterParallel, TheOptionIsChecked) {
  TempDir dir;
  uscope_schema_t *s = make_schema();
  auto open_with = [&](uint32_t threads, uint32_t reserved2) {
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.compress_threads = threads;
    o.reserved2 = reserved2;
    uscope_writer_t *w = nullptr;
    const uscope_status_t st = uscope_writer_open(&w, dir.file("o.uscope").c_str(), s, nullptr, 0, &o);
    uscope_writer_stats_t stats{};
    stats.struct_size = sizeof stats;
    if (w) {
      EXPECT_EQ(uscope_writer_stats(w, &stats), USCOPE_OK);
      EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
    }
    return std::make_pair(st, stats.compress_threads);
  };
  EXPECT_EQ(open_with(USCOPE_COMPRESS_THREADS_MAX + 1, 0).first, USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("options.compress_threads 65"), std::string::npos)
      << uscope_last_error();
  EXPECT_EQ(open_with(0xFFFFFFFEu, 0).first, USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(open_with(0, 1).first, USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("options.reserved2 must be 0"), std::string::npos);
  EXPECT_EQ(open_with(USCOPE_COMPRESS_THREADS_MAX, 0), std::make_pair(USCOPE_OK, USCOPE_COMPRESS_THREADS_MAX));
  EXPECT_EQ(open_with(USCOPE_COMPRESS_THREADS_INLINE, 0), std::make_pair(USCOPE_OK, 0u));
  // The default: one CPU left to the simulation thread, at most 4 workers.
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const unsigned cpus = static_cast<unsigned>(CPU_COUNT(&set));
  EXPECT_EQ(open_with(0, 0), std::make_pair(USCOPE_OK, std::min(cpus - 1, 4u)));
  // A caller built against the header before the option (a shorter struct)
  // gets the default.
  uscope_writer_options_t old = USCOPE_WRITER_OPTIONS_INIT;
  old.struct_size = offsetof(uscope_writer_options_t, compress_threads);
  old.compress_threads = 9;  // past its struct: never read
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, dir.file("old.uscope").c_str(), s, nullptr, 0, &old), USCOPE_OK);
  uscope_writer_stats_t stats{};
  stats.struct_size = sizeof stats;
  ASSERT_EQ(uscope_writer_stats(w, &stats), USCOPE_OK);
  EXPECT_EQ(stats.compress_threads, std::min(cpus - 1, 4u));
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_schema_free(s);
}

}  // namespace
