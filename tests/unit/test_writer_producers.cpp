// Several producers writing one trace (uscope_writer_add_producer,
// src/writer/encoder_merge.cpp): the merged file is byte for byte the one a
// single thread writes with the same items in producer order, whether the
// threads run free or meet at a barrier every cycle with the smallest
// queues; the rules of the header are checked; a writer finished before a
// producer keeps the cycles that producer ended; a producer's misuse ends
// only that producer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "io/background_writer.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

constexpr unsigned kCores = 4;
// How long an idle encoder thread sleeps before it parks.
constexpr unsigned kEncoderParkMs = uscope::BackgroundWriter::kParkAfterUs / 1000;

// One scope per core model, each with a sparse entity table, a retired
// counter and an event: producer p writes only core p's storages (2p, 2p+1)
// and event p.
uscope_schema_t *make_schema() {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t id = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  uint16_t soc = 0;
  EXPECT_EQ(uscope_schema_add_scope(s, &soc, "soc", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  for (unsigned p = 0; p < kCores; ++p) {
    uint16_t scope = 0;
    const std::string name = "core" + std::to_string(p);
    EXPECT_EQ(uscope_schema_add_scope(s, &scope, name.c_str(), soc, "cpu", clk), USCOPE_OK);
    const uscope_field_t ent[] = {{"pc", USCOPE_FT_U64, 0, 0, 0}, {"bits", USCOPE_FT_U32, 0, 0, 0},
                                  {"stage", USCOPE_FT_U8, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_storage(s, &id, "entities", scope, 32, USCOPE_SF_SPARSE, ent, 3, nullptr, 0),
              USCOPE_OK);
    const uscope_field_t cnt[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_storage(s, &id, "retired", scope, 1, 0, cnt, 1, nullptr, 0), USCOPE_OK);
    const uscope_field_t ev[] = {{"entity", USCOPE_FT_U32, 0, 0, 0}, {"stage", USCOPE_FT_U16, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_event(s, &id, "stage_transition", scope, ev, 2), USCOPE_OK);
  }
  return s;
}

uint64_t mix(uint64_t x) {  // splitmix64: a cheap, fixed function of (producer, cycle)
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Workload {
  uint64_t cycles = 1'000'000;
  uint32_t frames = USCOPE_FRAMES_V02;
  uint64_t queue_bytes = 0;
  unsigned burst_every = 0;  // every Nth cycle, a burst of items far larger than the smallest queue
  unsigned idle_ms = 0;      // the writer sits idle this long before its producers are added
};

// Whether producer p records a cycle at cycle c: core 3 only every other
// cycle, core 2 not in cycles 1000-1999 (a stretch the others run alone).
bool active(unsigned p, uint64_t c) {
  if (p == 3) return c % 2 == 0;
  if (p == 2) return c < 1000 || c >= 2000;
  return true;
}

// Core p's items in cycle c, the same for every writer.
bool record_items(uscope_writer_t *w, unsigned p, uint64_t c, const Workload &r) {
  const uint64_t h = mix(p * 0x100000000ull + c);
  const uint16_t ent = static_cast<uint16_t>(2 * p), ret = static_cast<uint16_t>(2 * p + 1);
  bool ok = true;
  unsigned n = static_cast<unsigned>(h % 4);
  if (r.burst_every && c % r.burst_every == p) n = 2000;  // ~64 KiB of records from one producer
  for (unsigned i = 0; i < n; ++i) {
    const uint64_t x = mix(h + i);
    const uint16_t slot = static_cast<uint16_t>(x % 32);
    if (x % 13 == 0) {
      ok &= uscope_slot_clear(w, ent, slot) == USCOPE_OK;
      continue;
    }
    ok &= uscope_slot_set(w, ent, slot, 0, 0x80000000u + (x >> 40) * 4) == USCOPE_OK;
    ok &= uscope_slot_set(w, ent, slot, 2, x % 5) == USCOPE_OK;
    const uint8_t payload[6] = {static_cast<uint8_t>(slot), 0, 0, 0, static_cast<uint8_t>(x % 5), 0};
    ok &= uscope_event(w, static_cast<uint16_t>(p), payload, sizeof payload) == USCOPE_OK;
  }
  if (h % 3 == 0) ok &= uscope_slot_add(w, ret, 0, 0, 1 + h % 2) == USCOPE_OK;
  return ok;
}

uscope_writer_options_t options(const Workload &r) {
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.frame_format = r.frames;
  o.queue_bytes = r.queue_bytes;
  o.checkpoint_interval_ps = 50'000'000;  // a segment every 50,000 cycles
  return o;
}

// The reference: one thread records, at each time, core 0's items, then
// core 1's, ... (the order the producers are added in).
std::string write_single(const std::string &path, const Workload &r) {
  const uscope_writer_options_t o = options(r);
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return {};
  bool ok = true;
  for (uint64_t c = 1; c <= r.cycles && ok; ++c) {
    bool any = false;
    for (unsigned p = 0; p < kCores; ++p) any |= active(p, c);
    if (!any) continue;
    ok &= uscope_begin_cycle(w, c * 1000) == USCOPE_OK;
    for (unsigned p = 0; p < kCores; ++p)
      if (active(p, c)) ok &= record_items(w, p, c, r);
    ok &= uscope_end_cycle(w) == USCOPE_OK;
  }
  EXPECT_TRUE(ok) << uscope_writer_error(w);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  return uscope::test::read_all(path);
}

// A barrier for the threads that meet every cycle, as the partitions of a
// multi-threaded simulator do (C++17 has no std::barrier).
class SpinBarrier {
 public:
  explicit SpinBarrier(unsigned n) : n_(n) {}
  void wait() {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_release);
      return;
    }
    while (gen_.load(std::memory_order_acquire) == gen) std::this_thread::yield();
  }

 private:
  const unsigned n_;
  std::atomic<unsigned> count_{0};
  std::atomic<unsigned> gen_{0};
};

struct Produced {
  std::string bytes;
  uscope_writer_stats_t stats{};
  uint64_t stalls = 0;
};

// kCores threads, one producer each; with `lockstep` they meet at a barrier
// after every cycle.
Produced write_producers(const std::string &path, const Workload &r, bool lockstep) {
  const uscope_writer_options_t o = options(r);
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  Produced out;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return out;
  std::this_thread::sleep_for(std::chrono::milliseconds(r.idle_ms));
  uscope_writer_t *prod[kCores] = {};
  for (auto &p : prod) EXPECT_EQ(uscope_writer_add_producer(w, &p), USCOPE_OK) << uscope_last_error();
  SpinBarrier barrier(kCores);
  std::atomic<bool> ok{true};
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < kCores; ++p) {
    threads.emplace_back([&, p] {
      uscope_writer_t *pw = prod[p];
      bool good = true;
      for (uint64_t c = 1; c <= r.cycles; ++c) {
        if (good && active(p, c)) {
          good &= uscope_begin_cycle(pw, c * 1000) == USCOPE_OK;
          good &= record_items(pw, p, c, r);
          good &= uscope_end_cycle(pw) == USCOPE_OK;
        } else if (good && lockstep) {
          // The header's rule: a producer with nothing to record keeps the
          // merge going with an empty cycle (it adds nothing to the trace
          // where another producer records that cycle, as core 0 always does).
          good &= uscope_begin_cycle(pw, c * 1000) == USCOPE_OK;
          good &= uscope_end_cycle(pw) == USCOPE_OK;
        }
        if (lockstep) barrier.wait();  // even after a failure: the others must not hang
      }
      // Its own stats: the cycles it recorded.
      uscope_writer_stats_t st{};
      st.struct_size = sizeof st;
      uint64_t mine = 0;
      for (uint64_t c = 1; c <= r.cycles; ++c) mine += lockstep || active(p, c);
      if (uscope_writer_stats(pw, &st) != USCOPE_OK || st.cycles != mine) good = false;
      if (uscope_writer_close(pw) != USCOPE_OK) good = false;
      if (!good) ok = false;
    });
  }
  for (auto &t : threads) t.join();
  EXPECT_TRUE(ok.load());
  EXPECT_EQ(uscope_writer_finish(w), USCOPE_OK) << uscope_writer_error(w);
  out.stats.struct_size = sizeof out.stats;
  EXPECT_EQ(uscope_writer_stats(w, &out.stats), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  out.bytes = uscope::test::read_all(path);
  return out;
}

std::string first_difference(const std::string &a, const std::string &b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + ", first difference at byte " +
         std::to_string(i);
}

// The test: 4 threads x 1M cycles, free-running, against one thread.
TEST(WriterProducers, FourThreadsWriteTheFileOneThreadWrites) {
  TempDir dir;
  Workload r;
  const std::string ref = write_single(dir.file("single.uscope"), r);
  const Produced got = write_producers(dir.file("producers.uscope"), r, false);
  ASSERT_FALSE(ref.empty());
  EXPECT_TRUE(got.bytes == ref) << first_difference(got.bytes, ref);
  // The writer's stats are the sums over its producers.
  uint64_t cycles = 0;
  for (unsigned p = 0; p < kCores; ++p)
    for (uint64_t c = 1; c <= r.cycles; ++c) cycles += active(p, c);
  EXPECT_EQ(got.stats.cycles, cycles);
  EXPECT_EQ(got.stats.dropped_cycles, 0u);

  // Decoded, not only compared: every time once, in order, and each core's
  // items in producer order within it.
  const uscope::test::TraceFile f = uscope::test::read_trace_file(dir.file("producers.uscope"));
  uint64_t frames = 0, last = 0, events[kCores] = {};
  for (const auto &seg : f.segments) {
    for (uint64_t t : seg.frame_times) {
      EXPECT_GT(t, last);
      last = t;
      ++frames;
    }
    int prev_core = -1;
    uint32_t prev_frame = UINT32_MAX;
    for (const auto &it : seg.items) {
      if (it.frame != prev_frame) prev_core = -1;
      prev_frame = it.frame;
      const int core = it.is_event ? it.event_id : it.op.storage_id / 2;
      EXPECT_GE(core, prev_core);
      prev_core = core;
      if (it.is_event) ++events[it.event_id];
    }
  }
  EXPECT_EQ(frames, r.cycles);  // core 0 records every cycle
  for (unsigned p = 0; p < kCores; ++p) EXPECT_GT(events[p], r.cycles / 4) << "core " << p;
}

// Threads that meet at a barrier every cycle, with the smallest queues and
// bursts far larger than a queue: no deadlock, and the same file.
TEST(WriterProducers, LockstepThreadsWithSmallQueuesNeverDeadlock) {
  TempDir dir;
  for (uint32_t frames : {USCOPE_FRAMES_V02, USCOPE_FRAMES_V01}) {
    SCOPED_TRACE("frames " + std::to_string(frames));
    Workload r;
    r.cycles = 20'000;
    r.frames = frames;
    r.queue_bytes = 64 * 1024;
    r.burst_every = 997;
    const std::string ref = write_single(dir.file("single.uscope"), r);
    const Produced got = write_producers(dir.file("lockstep.uscope"), r, true);
    ASSERT_FALSE(ref.empty());
    EXPECT_TRUE(got.bytes == ref) << first_difference(got.bytes, ref);
    EXPECT_GT(got.stats.stalls, 0u);  // the bursts filled the small queues: waited, never dropped
    EXPECT_EQ(got.stats.dropped_cycles, 0u);
  }
}

// A writer idle long enough for its encoder thread to park on the writer's
// own ring (io/background_writer.hpp) before the producers are added: adding
// one wakes it, or the bursts, far larger than the producers' queues, would
// wait for room for ever.
TEST(WriterProducers, ProducersAddedWhileTheEncoderIsParkedAreDrained) {
  TempDir dir;
  Workload r;
  r.cycles = 20'000;
  r.queue_bytes = 64 * 1024;
  r.burst_every = 997;
  r.idle_ms = 10 * kEncoderParkMs;
  const std::string ref = write_single(dir.file("single.uscope"), r);
  const Produced got = write_producers(dir.file("parked.uscope"), r, false);
  ASSERT_FALSE(ref.empty());
  EXPECT_TRUE(got.bytes == ref) << first_difference(got.bytes, ref);
  EXPECT_GT(got.stats.stalls, 0u);  // the producers did wait for the encoder
}

struct Opened {
  uscope_writer_t *w = nullptr;
  explicit Opened(const std::string &path) {
    uscope_schema_t *s = make_schema();
    EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
  }
};

void trivial_callback(uscope_writer_t *, uint64_t, void *) {}

TEST(WriterProducers, TheRulesAreChecked) {
  TempDir dir;
  {  // producers only before any cycle; none from a producer; none with a callback
    Opened a(dir.file("a.uscope"));
    uscope_writer_t *p = nullptr, *q = nullptr;
    EXPECT_EQ(uscope_writer_add_producer(nullptr, &p), USCOPE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(uscope_writer_add_producer(a.w, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(uscope_writer_add_producer(a.w, &p), USCOPE_OK);
    EXPECT_EQ(uscope_writer_add_producer(p, &q), USCOPE_ERR_BAD_STATE);
    EXPECT_NE(std::string(uscope_last_error()).find("is a producer"), std::string::npos);
    EXPECT_EQ(uscope_set_checkpoint_callback(a.w, trivial_callback, nullptr), USCOPE_ERR_BAD_STATE);
    EXPECT_EQ(uscope_set_checkpoint_callback(p, trivial_callback, nullptr), USCOPE_ERR_BAD_STATE);
    // The writer itself records nothing now; not sticky.
    EXPECT_EQ(uscope_begin_cycle(a.w, 1000), USCOPE_ERR_BAD_STATE);
    EXPECT_NE(std::string(uscope_last_error()).find("record through a producer"), std::string::npos);
    EXPECT_EQ(uscope_slot_set(a.w, 0, 0, 0, 1), USCOPE_ERR_BAD_STATE);
    EXPECT_EQ(uscope_end_cycle(a.w), USCOPE_ERR_BAD_STATE);
    EXPECT_EQ(uscope_writer_flush(a.w), USCOPE_OK);
    // A producer's times strictly increase.
    ASSERT_EQ(uscope_begin_cycle(p, 1000), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(p), USCOPE_OK);
    EXPECT_EQ(uscope_writer_add_producer(a.w, &q), USCOPE_ERR_BAD_STATE);  // a producer has recorded
    EXPECT_NE(std::string(uscope_last_error()).find("before the first cycle"), std::string::npos);
    EXPECT_EQ(uscope_begin_cycle(p, 1000), USCOPE_ERR_TIME_BACKWARDS);
    EXPECT_NE(std::string(uscope_writer_error(p)).find("strictly increase"), std::string::npos);
    EXPECT_EQ(uscope_writer_close(p), USCOPE_ERR_TIME_BACKWARDS);  // its own sticky error
    EXPECT_EQ(uscope_writer_close(p), USCOPE_ERR_TIME_BACKWARDS);  // idempotent: not freed
    EXPECT_EQ(uscope_writer_close(a.w), USCOPE_OK);  // the writer's own status
    const uscope::test::TraceFile f = uscope::test::read_trace_file(dir.file("a.uscope"));
    ASSERT_EQ(f.segments.size(), 1u);
    EXPECT_EQ(f.segments[0].frame_times, std::vector<uint64_t>{1000});
  }
  {  // a writer that recorded a cycle takes no producer; a callback excludes producers
    Opened b(dir.file("b.uscope"));
    uscope_writer_t *p = nullptr;
    ASSERT_EQ(uscope_begin_cycle(b.w, 1000), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(b.w), USCOPE_OK);
    EXPECT_EQ(uscope_writer_add_producer(b.w, &p), USCOPE_ERR_BAD_STATE);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(uscope_writer_close(b.w), USCOPE_OK);
    Opened c(dir.file("c.uscope"));
    ASSERT_EQ(uscope_set_checkpoint_callback(c.w, trivial_callback, nullptr), USCOPE_OK);
    EXPECT_EQ(uscope_writer_add_producer(c.w, &p), USCOPE_ERR_BAD_STATE);
    EXPECT_EQ(uscope_writer_close(c.w), USCOPE_OK);
  }
  {  // at most USCOPE_MAX_PRODUCERS
    Opened d(dir.file("d.uscope"));
    uscope_writer_t *p = nullptr;
    for (unsigned i = 0; i < USCOPE_MAX_PRODUCERS; ++i) ASSERT_EQ(uscope_writer_add_producer(d.w, &p), USCOPE_OK);
    EXPECT_EQ(uscope_writer_add_producer(d.w, &p), USCOPE_ERR_LIMIT);
    EXPECT_EQ(uscope_writer_close(d.w), USCOPE_ERR_BAD_STATE);  // none of them was closed
    EXPECT_NE(std::string(uscope_last_error()).find("64 of the 64 producers were not closed"), std::string::npos);
  }
}

// Strings from any producer go to the trace's one table.
TEST(WriterProducers, StringsFromProducersShareOneTable) {
  TempDir dir;
  Opened a(dir.file("s.uscope"));
  uscope_writer_t *p = nullptr, *q = nullptr;
  ASSERT_EQ(uscope_writer_add_producer(a.w, &p), USCOPE_OK);
  ASSERT_EQ(uscope_writer_add_producer(a.w, &q), USCOPE_OK);
  std::atomic<bool> ok{true};
  auto intern = [&](uscope_writer_t *w, int base) {
    for (int i = 0; i < 2000; ++i) {
      uint32_t idx = 0;
      const std::string str = "s" + std::to_string((base + i) % 3000);
      if (uscope_string_insert(w, &idx, str.c_str()) != USCOPE_OK) ok = false;
    }
  };
  std::thread t1(intern, p, 0), t2(intern, q, 1000);
  intern(a.w, 500);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok.load());
  uint32_t idx = 0;
  ASSERT_EQ(uscope_string_insert(p, &idx, "s42"), USCOPE_OK);
  uint32_t again = 0;
  ASSERT_EQ(uscope_string_insert(a.w, &again, "s42"), USCOPE_OK);
  EXPECT_EQ(idx, again);
  ASSERT_EQ(uscope_begin_cycle(p, 1000), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(p), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(p), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(q), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(a.w), USCOPE_OK);
  const uscope::test::TraceFile f = uscope::test::read_trace_file(dir.file("s.uscope"));
  EXPECT_EQ(f.strings.size(), 3000u);
}

// The writer finished while a producer is still open: the trace keeps every
// cycle that producer ended (not its unfinished one), the writer reports
// BAD_STATE, and the producer's later calls fail instead of waiting.
TEST(WriterProducers, AWriterFinishedBeforeAProducerKeepsTheCyclesItEnded) {
  TempDir dir;
  Opened a(dir.file("early.uscope"));
  uscope_writer_t *p = nullptr, *q = nullptr;
  ASSERT_EQ(uscope_writer_add_producer(a.w, &p), USCOPE_OK);
  ASSERT_EQ(uscope_writer_add_producer(a.w, &q), USCOPE_OK);
  for (uint64_t c = 1; c <= 100; ++c) {
    ASSERT_EQ(uscope_begin_cycle(p, c * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(p, 1, 0, 0, 1), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(p), USCOPE_OK);
    if (c <= 50) {
      ASSERT_EQ(uscope_begin_cycle(q, c * 1000), USCOPE_OK);
      ASSERT_EQ(uscope_slot_add(q, 3, 0, 0, 1), USCOPE_OK);
      ASSERT_EQ(uscope_end_cycle(q), USCOPE_OK);
    }
  }
  ASSERT_EQ(uscope_writer_close(p), USCOPE_OK);
  ASSERT_EQ(uscope_begin_cycle(q, 51'000), USCOPE_OK);  // unfinished
  ASSERT_EQ(uscope_slot_add(q, 3, 0, 0, 1), USCOPE_OK);
  EXPECT_EQ(uscope_writer_finish(a.w), USCOPE_ERR_BAD_STATE);
  EXPECT_NE(std::string(uscope_writer_error(a.w)).find("1 of the 2 producers were not closed"), std::string::npos);
  EXPECT_EQ(uscope_end_cycle(q), USCOPE_OK);  // into a ring nobody reads: the next begin fails
  EXPECT_EQ(uscope_begin_cycle(q, 52'000), USCOPE_ERR_BAD_STATE);
  EXPECT_NE(std::string(uscope_writer_error(q)).find("was finished before the producer was closed"),
            std::string::npos);
  EXPECT_EQ(uscope_writer_close(a.w), USCOPE_ERR_BAD_STATE);
  const uscope::test::TraceFile f = uscope::test::read_trace_file(dir.file("early.uscope"));
  ASSERT_TRUE(f.header.flags & 1u);  // finalized
  uint64_t frames = 0, adds_p = 0, adds_q = 0;
  for (const auto &seg : f.segments) {
    frames += seg.frame_times.size();
    for (const auto &it : seg.items) {
      if (it.is_event) continue;
      adds_p += it.op.storage_id == 1;
      adds_q += it.op.storage_id == 3;
    }
  }
  EXPECT_EQ(frames, 100u);
  EXPECT_EQ(adds_p, 100u);
  EXPECT_EQ(adds_q, 50u);
}

// A producer's misuse ends that producer (its cycle is discarded, the merge
// no longer waits for it); the others go on, and the writer's trace is fine.
TEST(WriterProducers, AProducerMisuseEndsOnlyThatProducer) {
  TempDir dir;
  Opened a(dir.file("misuse.uscope"));
  uscope_writer_t *p = nullptr, *q = nullptr;
  ASSERT_EQ(uscope_writer_add_producer(a.w, &p), USCOPE_OK);
  ASSERT_EQ(uscope_writer_add_producer(a.w, &q), USCOPE_OK);
  ASSERT_EQ(uscope_begin_cycle(q, 1000), USCOPE_OK);
  ASSERT_EQ(uscope_slot_add(q, 3, 0, 0, 7), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(q, 99, 0, 0, 1), USCOPE_ERR_UNKNOWN_STORAGE);  // q is done
  // p runs on for far more than its queue holds: the merge must not wait for q.
  for (uint64_t c = 1; c <= 400'000; ++c) {
    ASSERT_EQ(uscope_begin_cycle(p, c * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(p, 1, 0, 0, 1), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(p), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(p), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(q), USCOPE_ERR_UNKNOWN_STORAGE);
  EXPECT_EQ(uscope_writer_close(a.w), USCOPE_OK);
  const uscope::test::TraceFile f = uscope::test::read_trace_file(dir.file("misuse.uscope"));
  uint64_t frames = 0, adds_q = 0;
  for (const auto &seg : f.segments) {
    frames += seg.frame_times.size();
    for (const auto &it : seg.items) adds_q += !it.is_event && it.op.storage_id == 3;
  }
  EXPECT_EQ(frames, 400'000u);
  EXPECT_EQ(adds_q, 0u);  // its discarded cycle
}

}  // namespace
