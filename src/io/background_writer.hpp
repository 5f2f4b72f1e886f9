// The one background-writer engine, shared by the µScope writer
// (writer/writer.cpp, its consumer writer/encoder.cpp) and the pccx writer
// (pccx/pccx_writer.cpp): the byte ring between the caller's thread and a
// consumer thread (stream.hpp's Ring), the consumer thread's loop (drain
// what is published, report progress, sleep when idle and park when idle for
// long, end once stopped and empty), stopping it, and the producer's wait
// for room with its stall accounting.
//
// What stays with each writer is what differs between them: the record
// format and the producer's fast path (inline stores into buf(), which must
// stay allocation-, lock- and syscall-free), when to publish, and the
// back-pressure policy (the µScope writer blocks, or drops whole cycles; the
// pccx writer blocks, or drops single records), using consumed() and
// RoomWait from here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <thread>

#include "io/stream.hpp"

namespace uscope {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline uint64_t steady_now_ns() noexcept {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// A producer's wait for room in a full ring: spin briefly, then sleep in
// 20 µs steps. The caller counts one stall per wait, and its time.
class RoomWait {
 public:
  // One round of waiting; the first one starts the clock.
  void round() noexcept {
    if (!start_) start_ = steady_now_ns() | 1;  // never 0: 0 means "not waiting"
    if (spins_ < kSpins) {
      ++spins_;
      cpu_relax();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  bool waited() const noexcept { return start_ != 0; }
  uint64_t elapsed_ns() const noexcept { return waited() ? steady_now_ns() - start_ : 0; }

 private:
  static constexpr unsigned kSpins = 128;
  uint64_t start_ = 0;
  unsigned spins_ = 0;
};

// The consumer a BackgroundWriter drives, on its thread:
//   uint64_t drain(uint64_t pos, uint64_t end): consume the whole records
//     from ring position pos until at least end (end <= the published
//     position) and return the position after the last one. May throw.
//   bool failed(const std::exception &e) noexcept: drain threw; keep the
//     error. Everything published so far is skipped (the published position
//     is a record boundary). Return true to skip everything published from
//     then on too (the producer never waits on a consumer that gave up).
//   bool poll() noexcept: the ring is idle; do other work (the µScope
//     encoder merges its producers' rings here) and return true if there
//     was some, so that the thread polls again instead of sleeping.
//   bool may_park() noexcept: the ring has been idle for kParkAfterUs; may
//     the thread now wait until this ring is published to, stopped or
//     woken (Ring::wake())? A consumer with work that does not come through
//     this ring (the encoder's producers) says no, and goes on polling.
//   void drained() noexcept: the ring is stopped and empty; last call.
class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter() { stop(); }
  BackgroundWriter(const BackgroundWriter &) = delete;
  BackgroundWriter &operator=(const BackgroundWriter &) = delete;

  // The ring, 64-byte aligned; false when out of memory.
  bool allocate(uint64_t bytes) { return ring_.allocate(bytes); }
  uint8_t *buf() const noexcept { return ring_.buf; }
  uint64_t cap() const noexcept { return ring_.cap; }
  stream::Ring &ring() noexcept { return ring_; }

  // Starts the consumer thread. It drains at most `step` bytes between two
  // progress reports, so that a producer waiting for room resumes as soon as
  // some is free, not after the whole published batch.
  template <class Consumer>
  void start(Consumer &c, uint64_t step) {
    thread_ = std::thread([this, &c, step] { run(c, step); });
  }

  // Producer: make the records before pos visible to the consumer, and wake
  // it if it is parked (Ring::publish).
  void publish(uint64_t pos) noexcept { ring_.publish(pos); }
  // Wakes a parked consumer so that it polls again (Ring::wake()).
  void wake() noexcept { ring_.wake(); }
  // Producer: how far the consumer has drained (acquire).
  uint64_t consumed() const noexcept { return ring_.consumed.load(std::memory_order_acquire); }

  // Producer: no more records after those published; waits for the consumer
  // to drain them and end (idempotent).
  void stop() noexcept {
    if (!thread_.joinable()) return;
    ring_.request_stop();  // wakes the consumer's idle sleep
    thread_.join();
  }

 private:
  template <class Consumer>
  void run(Consumer &c, uint64_t step) noexcept {
    uint64_t pos = ring_.consumed.load(std::memory_order_relaxed);
    bool discard = false;
    Idle idle;
    for (;;) {
      const uint64_t pub = ring_.published.load(std::memory_order_acquire);
      if (pos == pub) {
        if (c.poll()) {
          idle.resume();
          continue;
        }
        if (ring_.stop.load(std::memory_order_acquire) &&
            ring_.published.load(std::memory_order_acquire) == pos)
          break;
        idle_wait(c, idle, pos);
        continue;
      }
      idle.resume();
      if (discard) {
        pos = pub;
      } else {
        try {
          pos = c.drain(pos, pub - pos > step ? pos + step : pub);
        } catch (const std::exception &e) {
          discard = c.failed(e);
          pos = pub;
        }
      }
      ring_.consumed.store(pos, std::memory_order_release);
    }
    c.drained();
  }

  // The consumer's waiting between two batches. It spins briefly (a fast
  // producer publishes again within microseconds), then sleeps in doubling
  // steps up to 1 ms; the sleep ends early at stop(). Each sleep is a
  // context switch: starting every wait at 1 µs cost ~10 of them per batch
  // next to a simulation that publishes every millisecond (0.15 s of kernel
  // time in the testbench). So the first step starts at half the step that
  // last found data: when batches come at a steady pace, a wait takes two or
  // three sleeps. After kParkAfterUs of sleeps with nothing published the
  // ring is idle, not between batches: the thread parks until the next
  // publish (Ring::park()), so that an idle writer costs nothing (1 ms
  // sleeps cost 2-3% of a CPU per writer, 0.11-0.14 s per 5 s).
  struct Idle {
    unsigned spins = 0;
    unsigned step_us = 0;   // the last sleep of this wait (0: none yet)
    unsigned hint_us = 1;   // the step that found data last time
    unsigned slept_us = 0;  // the sleeps of this wait
    void resume() {
      if (step_us) hint_us = step_us;
      else if (spins > 0 && hint_us > 1) hint_us /= 2;  // it came while spinning
      spins = 0;
      step_us = 0;
      slept_us = 0;
    }
  };
  static constexpr unsigned kSpins = 64;
  static constexpr unsigned kMaxSleepUs = 1000;

 public:
  static constexpr unsigned kParkAfterUs = 20000;

 private:
  template <class Consumer>
  void idle_wait(Consumer &c, Idle &idle, uint64_t pos) noexcept {
    if (idle.spins < kSpins) {
      ++idle.spins;
      cpu_relax();
      return;
    }
    if (idle.slept_us >= kParkAfterUs) {
      // The kick count first: a wake() after it ends the park even when
      // may_park() has not seen what the wake() was for.
      const uint64_t kick = ring_.kick_count();
      if (c.may_park()) {
        ring_.park(pos, kick);
        idle.slept_us = 0;
        return;
      }
    }
    idle.step_us = idle.step_us ? std::min(2 * idle.step_us, kMaxSleepUs) : std::max(1u, idle.hint_us / 2);
    ring_.idle_sleep(std::chrono::microseconds(idle.step_us));
    idle.slept_us += idle.step_us;
  }

  stream::Ring ring_;
  std::thread thread_;
};

}  // namespace uscope
