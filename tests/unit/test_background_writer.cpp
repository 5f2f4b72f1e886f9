// Unit tests of src/io/background_writer.hpp: the one background-writer
// engine of the µScope and pccx writers, driven here by a toy consumer of
// 8-byte records (a u64 each) and a PAD byte at a lap's end, as both writers
// lay their rings out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "io/background_writer.hpp"

using uscope::BackgroundWriter;
using uscope::RoomWait;

namespace {

constexpr uint8_t kPad = 0xFF;

struct Summer {
  explicit Summer(BackgroundWriter &queue) : q(queue) {}
  BackgroundWriter &q;
  uint64_t sum = 0, records = 0, drains = 0, max_step = 0;
  uint64_t throw_at = UINT64_MAX;  // a record value that makes drain throw
  bool give_up = false;            // failed()'s answer
  std::vector<std::string> errors;
  bool drained_called = false;

  uint64_t drain(uint64_t pos, uint64_t end) {
    ++drains;
    if (end - pos > max_step) max_step = end - pos;
    while (pos < end) {
      const uint64_t off = pos % q.cap();
      const uint8_t *r = q.buf() + off;
      if (r[0] == kPad) {
        pos += q.cap() - off;
        continue;
      }
      uint64_t v;
      std::memcpy(&v, r, 8);
      if (v == throw_at) throw std::runtime_error("record " + std::to_string(v >> 8));
      sum += v >> 8;
      ++records;
      pos += 8;
    }
    return pos;
  }
  bool failed(const std::exception &e) noexcept {
    errors.push_back(e.what());
    return give_up;
  }
  bool poll() noexcept {
    polls.fetch_add(1, std::memory_order_relaxed);
    return extra_work.exchange(false, std::memory_order_acq_rel);
  }
  bool may_park() noexcept { return parking_allowed; }
  void drained() noexcept { drained_called = true; }
  std::atomic<uint64_t> polls{0};
  std::atomic<bool> extra_work{false};  // work that does not come through the ring
  bool parking_allowed = true;
};

// The producer side, as the writers do it: records never straddle the end
// of the ring (a PAD sends the consumer back to the start), wait for room.
struct Producer {
  explicit Producer(BackgroundWriter &queue) : q(queue) {}
  BackgroundWriter &q;
  uint64_t head = 0, stalls = 0;
  void put(uint64_t value) {
    const uint64_t v = value << 8;  // low byte 0: never a PAD
    RoomWait wait;
    while (head + 8 - q.consumed() > q.cap()) {
      q.publish(head);
      wait.round();
    }
    if (wait.waited()) ++stalls;
    std::memcpy(q.buf() + head % q.cap(), &v, 8);
    head += 8;
  }
};

}  // namespace

TEST(BackgroundWriter, DrainsEverythingPublishedBeforeStop) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(4096));
  Summer s(q);
  q.start(s, 1024);
  Producer p(q);
  uint64_t expect = 0;
  for (uint64_t i = 1; i <= 100000; ++i) {
    p.put(i);
    expect += i;
    if (i % 37 == 0) q.publish(p.head);
  }
  q.publish(p.head);
  q.stop();
  EXPECT_EQ(s.sum, expect);
  EXPECT_EQ(s.records, 100000u);
  EXPECT_TRUE(s.drained_called);
  EXPECT_EQ(q.consumed(), p.head);
  EXPECT_LE(s.max_step, 1024u) << "drain is given at most one progress step";
  EXPECT_TRUE(s.errors.empty());
  q.stop();  // idempotent
}

TEST(BackgroundWriter, PadSendsTheConsumerBackToTheStart) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(64));
  Summer s(q);
  q.start(s, 1 << 20);
  // 6 records, a PAD over the last 16 bytes of the lap, then 2 at the start.
  uint64_t head = 0;
  for (uint64_t i = 1; i <= 6; ++i, head += 8) {
    const uint64_t v = i << 8;
    std::memcpy(q.buf() + head, &v, 8);
  }
  q.buf()[head] = kPad;
  head += 16;
  q.publish(head);
  while (q.consumed() != head) std::this_thread::yield();
  for (uint64_t i = 7; i <= 8; ++i, head += 8) {
    const uint64_t v = i << 8;
    std::memcpy(q.buf() + head % 64, &v, 8);
  }
  q.publish(head);
  q.stop();
  EXPECT_EQ(s.sum, 36u);
  EXPECT_EQ(s.records, 8u);
}

// A consumer that goes on after a failure loses only what was published
// with the failing record; one that gives up loses everything after it, and
// the producer still never waits for ever.
TEST(BackgroundWriter, FailureSkipsThePublishedBatch) {
  for (bool give_up : {false, true}) {
    BackgroundWriter q;
    ASSERT_TRUE(q.allocate(4096));
    Summer s(q);
    s.throw_at = uint64_t{3} << 8;
    s.give_up = give_up;
    q.start(s, 1 << 20);
    Producer p(q);
    for (uint64_t i = 1; i <= 4; ++i) p.put(i);
    q.publish(p.head);  // 1..4: 1 + 2 counted, 3 throws, 4 skipped
    while (q.consumed() != p.head) std::this_thread::yield();
    for (uint64_t i = 0; i < 2000; ++i) p.put(100);  // more than the ring holds
    q.publish(p.head);
    q.stop();
    ASSERT_EQ(s.errors.size(), 1u);
    EXPECT_EQ(s.errors[0], "record 3");
    EXPECT_EQ(s.sum, give_up ? 3u : 3u + 2000u * 100u) << give_up;
    EXPECT_EQ(q.consumed(), p.head);
    EXPECT_TRUE(s.drained_called);
  }
}

TEST(BackgroundWriter, AFullRingMakesTheProducerWaitAndCountIt) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(256));
  Summer s(q);
  Producer p(q);
  // Fill the ring before the consumer runs: the next put has to wait.
  for (uint64_t i = 0; i < 32; ++i) p.put(1);
  EXPECT_EQ(p.stalls, 0u);
  q.start(s, 64);
  p.put(1);
  EXPECT_EQ(p.stalls, 1u);
  q.publish(p.head);
  q.stop();
  EXPECT_EQ(s.records, 33u);
}

TEST(RoomWait, CountsTimeOnlyOnceWaiting) {
  RoomWait w;
  EXPECT_FALSE(w.waited());
  EXPECT_EQ(w.elapsed_ns(), 0u);
  for (int i = 0; i < 200; ++i) w.round();  // past the spins: sleeps 20 µs each
  EXPECT_TRUE(w.waited());
  EXPECT_GE(w.elapsed_ns(), 20'000u);
}

// ── parking: an idle consumer waits without waking, until a publish, a
// wake() or stop() ──

namespace {

// Waits up to 10 s for pred(); a wake-up that never comes fails the test
// instead of hanging it.
template <class Pred>
bool eventually(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

constexpr auto kParkAfter = std::chrono::microseconds(BackgroundWriter::kParkAfterUs);

}  // namespace

TEST(BackgroundWriter, AnIdleConsumerParksAndEachPublishWakesIt) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(4096));
  Summer s(q);
  q.start(s, 1 << 20);
  Producer p(q);
  uint64_t expect = 0;
  for (uint64_t round = 1; round <= 5; ++round) {
    ASSERT_TRUE(eventually([&] { return q.ring().parked.load(); })) << "round " << round;
    const uint64_t polls = s.polls.load();
    std::this_thread::sleep_for(2 * kParkAfter);
    EXPECT_EQ(s.polls.load(), polls) << "a parked consumer woke by itself, round " << round;
    p.put(round);
    expect += round;
    q.publish(p.head);
    ASSERT_TRUE(eventually([&] { return q.consumed() == p.head; })) << "round " << round;
  }
  q.stop();
  EXPECT_EQ(s.sum, expect);
  EXPECT_FALSE(q.ring().parked.load());
}

// Publishes around the moment the consumer parks, where a wake-up could be
// lost between its last look at `published` and its wait: each record must
// still be drained without a stop().
TEST(BackgroundWriter, PublishesAroundTheParkingMomentAreNeverLost) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(4096));
  Summer s(q);
  q.start(s, 1 << 20);
  Producer p(q);
  const auto step = std::chrono::microseconds(250);
  for (int i = 0; i < 40; ++i) {
    // 19.0 to 21.0 ms after the last drain, in 250 µs steps (kParkAfterUs
    // is 20 ms of sleeps, which take a little longer than they say).
    std::this_thread::sleep_for(kParkAfter - 4 * step + (i % 9) * step);
    p.put(static_cast<uint64_t>(i) + 1);
    q.publish(p.head);
    ASSERT_TRUE(eventually([&] { return q.consumed() == p.head; })) << "record " << i + 1;
  }
  q.stop();
  EXPECT_EQ(s.records, 40u);
  EXPECT_EQ(s.sum, 40u * 41u / 2);
}

// A consumer with work from elsewhere (the encoder's producer rings) is
// woken for it by wake(), and one that may not park never does.
TEST(BackgroundWriter, WakeEndsAParkAndAConsumerThatMayNotParkKeepsPolling) {
  {
    BackgroundWriter q;
    ASSERT_TRUE(q.allocate(4096));
    Summer s(q);
    q.start(s, 1 << 20);
    ASSERT_TRUE(eventually([&] { return q.ring().parked.load(); }));
    s.extra_work = true;
    q.wake();
    EXPECT_TRUE(eventually([&] { return !s.extra_work.load(); })) << "poll() never saw the work";
    q.stop();
  }
  {
    BackgroundWriter q;
    ASSERT_TRUE(q.allocate(4096));
    Summer s(q);
    s.parking_allowed = false;
    q.start(s, 1 << 20);
    std::this_thread::sleep_for(3 * kParkAfter);
    EXPECT_FALSE(q.ring().parked.load());
    const uint64_t polls = s.polls.load();
    std::this_thread::sleep_for(kParkAfter);
    EXPECT_GT(s.polls.load(), polls);
    s.extra_work = true;  // found by polling, with no wake()
    EXPECT_TRUE(eventually([&] { return !s.extra_work.load(); }));
    q.stop();
  }
}

// stop() ends a park at once: the close of an idle writer does not wait.
TEST(BackgroundWriter, StopEndsAPark) {
  BackgroundWriter q;
  ASSERT_TRUE(q.allocate(4096));
  Summer s(q);
  q.start(s, 1 << 20);
  ASSERT_TRUE(eventually([&] { return q.ring().parked.load(); }));
  q.stop();  // joins the thread: hangs if the park does not end
  EXPECT_TRUE(s.drained_called);
}
