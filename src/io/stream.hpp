// The queue between the simulation thread (producer) and the encoder thread
// (consumer): a single-producer single-consumer byte ring of records.
//
// Ops and events travel in their wide v0.2 item form (frame_codec.hpp), so
// the producer writes each op with two stores and the encoder does not
// convert them. A record never straddles the end of the ring: a PAD byte
// sends the reader back to the start.
//
// Synchronisation is two monotonic 64-bit positions: `published` (producer,
// release) and `consumed` (consumer, release). The producer publishes only
// between records (at end_cycle, and before it waits for space), so the
// consumer always sees whole records. No locks on the data path; waiting on
// either side is a bounded spin followed by short sleeps, which only happens
// when one side is idle or the queue is full, never in steady state. The
// consumer's idle sleep is a timed wait that request_stop() interrupts, so a
// close joins the consumer at once instead of waiting out its sleep (up to
// 1 ms per writer: most of the time of a short conversion). A consumer idle
// for longer parks instead (park()), without a timeout, and the producer's
// next publish wakes it (publish()): an idle writer then costs no
// wake-ups at all, where 1 ms sleeps cost 2-3% of a CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "format/frame_codec.hpp"
#include "format/wire.hpp"

namespace uscope::stream {

// Record tags. Op and event records reuse the v0.2 item tags (§8.6.6).
inline constexpr uint8_t kOp = wire::TAG_WIDE_OP;  // 16 bytes: a wide item
inline constexpr uint8_t kEvent = wire::TAG_EVENT; // 8 + N bytes: an event item
inline constexpr uint8_t kBegin = 0x10;            // 16 bytes: tag, 7 pad, u64 time
inline constexpr uint8_t kEnd = 0x11;              // 1 byte
inline constexpr uint8_t kAbort = 0x12;            // 1 byte: discard the open cycle
inline constexpr uint8_t kCkptBegin = 0x13;        // 16 bytes: tag, pad, u16 sid, u32 nvalid, u64 bytes
inline constexpr uint8_t kCkptData = 0x14;         // 8 + N bytes: tag, 3 pad, u32 N, data
inline constexpr uint8_t kFlush = 0x15;            // 1 byte: commit the open segment now
inline constexpr uint8_t kPad = 0xFF;              // skip to the start of the ring

inline constexpr size_t kBeginSize = 16;
inline constexpr size_t kCkptBeginSize = 16;
inline constexpr size_t kCkptChunk = 64 * 1024;   // checkpoint data travels in pieces

// The op and event records at p, up to `avail` bytes: their size in bytes,
// stopping at the first record of another kind. Counts them into `items`
// and clears `compact` when an op needs the wide form (frame_codec.hpp).
inline size_t scan_items(const uint8_t *p, uint64_t avail, bool &compact, uint32_t &items) {
  const uint8_t *r = p;
  const uint8_t *const end = p + avail;
  bool c = compact;
  uint32_t n = 0;
  while (r < end) {
    if (r[0] == kOp) {
      c &= op_fits_compact(wire::get_u16(r + 2), wire::get_u64(r + 8));
      r += wire::kWideOpSize;
    } else if (r[0] == kEvent) {
      r += wire::kEventItemHeaderSize + wire::get_u32(r + 4);
    } else {
      break;
    }
    ++n;
  }
  compact = c;
  items += n;
  return static_cast<size_t>(r - p);
}

struct Ring {
  uint8_t *buf = nullptr;
  uint64_t cap = 0;
  alignas(64) std::atomic<uint64_t> published{0};
  alignas(64) std::atomic<uint64_t> consumed{0};
  alignas(64) std::atomic<bool> stop{false};
  // Set by a parked consumer (park()), on a line of its own: the producer
  // reads it once per publish, and it changes only when the consumer parks.
  alignas(64) std::atomic<bool> parked{false};
  std::atomic<uint64_t> kicks{0};  // wake() calls, under the mutex

  Ring() = default;
  Ring(const Ring &) = delete;
  Ring &operator=(const Ring &) = delete;
  ~Ring() { std::free(buf); }
  // Producer: no more records after those published. Set under the mutex,
  // so a consumer between its check and its wait cannot miss the wake-up.
  void request_stop() {
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      stop.store(true, std::memory_order_release);
    }
    stop_cv_.notify_all();
  }
  // Consumer, when idle: sleeps up to `d`, or until request_stop(). Records
  // published meanwhile do not wake it (publishing stays a plain store); the
  // caller re-checks `published` after the sleep as before.
  void idle_sleep(std::chrono::microseconds d) {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    stop_cv_.wait_for(lock, d, [this] { return stop.load(std::memory_order_acquire); });
  }

  // Producer: makes the records before pos visible, and wakes a parked
  // consumer. The store and park()'s are sequentially consistent, and so
  // are the loads after them, so at least one side sees the other: either
  // the consumer sees the records and does not wait, or this sees it parked
  // and wakes it. (Fences would say the same, but GCC's TSan cannot check
  // them.) In steady state the consumer never parks: a publish is then one
  // locked store (x86 xchg) and the load of a line nobody writes, once per
  // published batch.
  void publish(uint64_t pos) noexcept {
    published.store(pos, std::memory_order_seq_cst);
    if (parked.load(std::memory_order_seq_cst)) wake();
  }
  // Wakes a parked consumer whatever it waits for: a consumer that must look
  // at something other than this ring (the encoder, when a producer's ring
  // is added) reads kick_count() before deciding to park.
  void wake() noexcept {
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      kicks.fetch_add(1, std::memory_order_relaxed);
    }
    stop_cv_.notify_all();
  }
  uint64_t kick_count() const noexcept { return kicks.load(std::memory_order_seq_cst); }
  // Consumer, after a long idle stretch: waits, with no timeout, until
  // records are published past pos, request_stop(), or a wake() after
  // kick_count() returned `kick`.
  void park(uint64_t pos, uint64_t kick) {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    parked.store(true, std::memory_order_seq_cst);
    stop_cv_.wait(lock, [&] {
      return stop.load(std::memory_order_acquire) || published.load(std::memory_order_seq_cst) != pos ||
             kicks.load(std::memory_order_relaxed) != kick;
    });
    parked.store(false, std::memory_order_relaxed);
  }
  bool allocate(uint64_t bytes) {
    buf = static_cast<uint8_t *>(std::aligned_alloc(64, (bytes + 63) & ~uint64_t{63}));
    cap = bytes;
    return buf != nullptr;
  }

 private:
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
};

}  // namespace uscope::stream
