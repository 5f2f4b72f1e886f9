// The simulation-thread side of a writer. The per-cycle calls are inline so
// that each exported C function compiles to one short, allocation-free body:
// check the state, check ids and value range against tables sized at open,
// store a 16-byte record into the queue. Refill, waiting, errors and the
// checkpoint callback are out of line.
#pragma once

#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/cache_line.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/storage_state.hpp"
#include "uscope/uscope.h"
#include "writer/encoder.hpp"
#include "io/file_sink.hpp"
#include "io/background_writer.hpp"
#include "io/stream.hpp"

#define USCOPE_LIKELY(x) __builtin_expect(!!(x), 1)
#define USCOPE_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace uscope {

// A value v fits a field iff v + bias <= span (unsigned, wrapping): for
// unsigned types bias 0 and span = max; for signed types of w bits the
// sign-extended range maps onto [0, 2^w - 1] with bias 2^(w-1); BOOL spans
// 0..1 and ENUM 0..num_values-1.
struct ValueRange {
  uint64_t bias;
  uint64_t span;
};
ValueRange value_range(uint8_t type, const Schema &schema, uint8_t enum_id);

class Writer {
 public:
  // The defaults of every option (what uscope_writer_options_init() gives): all zero, which
  // each option documents as "the library's default", and the struct's size.
  static void default_options(uscope_writer_options_t *o) noexcept {
    std::memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
  }

  // Opens the file, writes header and preamble, allocates everything the hot
  // path needs and starts the encoder thread. Throws Error.
  Writer(uscope_writer_t *handle, const char *path, const Schema &schema,
         const uscope_dut_property_t *props, uint32_t num_props,
         const uscope_writer_options_t *opts);
  // A producer of parent (uscope_writer_add_producer): the same per-cycle
  // calls into a ring of its own, which parent's encoder merges. Throws Error.
  Writer(uscope_writer_t *handle, Writer &parent);
  ~Writer();  // stops the encoder if close() was never reached
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  // ── per-cycle calls (simulation thread) ──
  uscope_status_t begin_cycle(uint64_t time_ps) noexcept;
  uscope_status_t end_cycle() noexcept;

  uscope_status_t slot_set(uint16_t sid, uint16_t slot, uint16_t field, uint64_t v) noexcept {
    if (USCOPE_UNLIKELY(state_ != kRecording)) return not_recording(1, 0);
    if (USCOPE_UNLIKELY(sid >= num_storages_)) return bad_storage(sid);
    const StorageInfo &s = storages_[sid];
    if (USCOPE_UNLIKELY(slot >= s.num_slots)) return bad_slot(sid, slot);
    if (USCOPE_UNLIKELY(field >= s.num_fields)) return bad_field(sid, field);
    const Range &r = ranges_[s.range_base + field];
    if (USCOPE_UNLIKELY(v + r.bias > r.span)) return bad_value(sid, field, v, false);
    return put_op(wire::DA_SLOT_SET, sid, slot, field, v);
  }
  uscope_status_t slot_add(uint16_t sid, uint16_t slot, uint16_t field, uint64_t v) noexcept {
    if (USCOPE_UNLIKELY(state_ != kRecording)) return not_recording(1, 0);
    if (USCOPE_UNLIKELY(sid >= num_storages_)) return bad_storage(sid);
    const StorageInfo &s = storages_[sid];
    if (USCOPE_UNLIKELY(slot >= s.num_slots)) return bad_slot(sid, slot);
    if (USCOPE_UNLIKELY(field >= s.num_fields)) return bad_field(sid, field);
    // COMPAT 13: ADD wraps at the field's width, so any 64-bit addend is valid.
    return put_op(wire::DA_SLOT_ADD, sid, slot, field, v);
  }
  uscope_status_t slot_clear(uint16_t sid, uint16_t slot) noexcept {
    if (USCOPE_UNLIKELY(state_ != kRecording)) return not_recording(1, 0);
    if (USCOPE_UNLIKELY(sid >= num_storages_)) return bad_storage(sid);
    if (USCOPE_UNLIKELY(slot >= storages_[sid].num_slots)) return bad_slot(sid, slot);
    return put_op(wire::DA_SLOT_CLEAR, sid, slot, 0, 0);
  }
  uscope_status_t prop_set(uint16_t sid, uint16_t prop, uint64_t v) noexcept {
    if (USCOPE_UNLIKELY(state_ != kRecording)) return not_recording(1, 0);
    if (USCOPE_UNLIKELY(sid >= num_storages_)) return bad_storage(sid);
    const StorageInfo &s = storages_[sid];
    if (USCOPE_UNLIKELY(prop >= s.num_props)) return bad_prop(sid, prop);
    const Range &r = ranges_[s.range_base + s.num_fields + prop];
    if (USCOPE_UNLIKELY(v + r.bias > r.span)) return bad_value(sid, prop, v, true);
    // COMPAT 13: DA_PROP_SET carries slot 0 and field = property index.
    return put_op(wire::DA_PROP_SET, sid, 0, prop, v);
  }
  uscope_status_t event(uint16_t id, const void *payload, uint32_t size) noexcept {
    if (USCOPE_UNLIKELY(state_ != kRecording)) return not_recording(0, 1);
    if (USCOPE_UNLIKELY(id >= num_event_types_)) return bad_event(id);
    if (USCOPE_UNLIKELY(size != event_sizes_[id])) return bad_payload(id, size);
    if (USCOPE_UNLIKELY(size && !payload)) return bad_payload(id, size);
    const size_t n = wire::kEventItemHeaderSize + size;
    uint8_t *w = w_;
    if (USCOPE_UNLIKELY(static_cast<size_t>(wlimit_ - w) < n)) return event_slow(id, payload, size);
    // §8.6.6 event item: tag, reserved, id u16, size u32 (one 8-byte store), payload.
    wire::put_u64(w, uint64_t{wire::TAG_EVENT} | uint64_t{id} << 16 | uint64_t{size} << 32);
    if (size) std::memcpy(w + 8, payload, size);
    w_ = w + n;
    ++events_;
    return USCOPE_OK;
  }

  // ── other calls ──
  // uscope_writer_add_producer. Throws Error.
  uscope_status_t add_producer(uscope_writer_t **out);
  bool is_producer() const { return parent_ != nullptr; }
  uscope_status_t flush() noexcept;
  uscope_status_t string_insert(const char *str, uint32_t *out);
  uscope_status_t set_checkpoint_callback(uscope_checkpoint_fn fn, void *ud);
  uscope_status_t checkpoint_storage(uint16_t sid, const uint8_t *mask, const void *data,
                                     uint32_t num_valid);
  void stats(uscope_writer_stats_t *out) const;
  const char *error_message() const { return message_.c_str(); }
  // The schema as copied at open; it never changes afterwards (look-ups by name).
  const Schema &schema() const { return schema_; }
  // Finalize the file and stop the encoder (idempotent: a second call returns
  // the first call's status). Returns the first sticky error, or OK.
  uscope_status_t close();

 private:
  // kCoordinating: a writer with producers, which records no cycle itself.
  enum State : uint8_t { kIdle, kRecording, kDropping, kInCallback, kFailed, kClosed, kCoordinating };
  struct StorageInfo {
    uint16_t num_slots;
    uint16_t num_fields;
    uint16_t num_props;
    uint32_t range_base;  // index of field 0 in ranges_; properties follow the fields
  };
  using Range = ValueRange;

  uscope_status_t put_op(uint8_t action, uint16_t sid, uint16_t slot, uint16_t field,
                         uint64_t v) noexcept {
    uint8_t *w = w_;
    if (USCOPE_UNLIKELY(wlimit_ - w < static_cast<ptrdiff_t>(wire::kWideOpSize)))
      return put_op_slow(action, sid, slot, field, v);  // a tail call: no frame on the fast path
    put_wide_op(w, action, sid, slot, field, v);
    w_ = w + wire::kWideOpSize;
    ++ops_;
    return USCOPE_OK;
  }
  uscope_status_t put_op_slow(uint8_t action, uint16_t sid, uint16_t slot, uint16_t field,
                              uint64_t v) noexcept __attribute__((noinline, cold)) {
    if (!refill(wire::kWideOpSize)) return sticky_;
    return put_op(action, sid, slot, field, v);
  }
  uscope_status_t event_slow(uint16_t id, const void *payload, uint32_t size) noexcept
      __attribute__((noinline, cold)) {
    if (!refill(wire::kEventItemHeaderSize + size)) return sticky_;
    return event(id, payload, size);
  }

  // Out of line: the slow paths.
  bool refill(size_t n) noexcept;
  void publish() noexcept;
  uint64_t write_pos() const noexcept { return wrap_base_ + static_cast<uint64_t>(w_ - queue_.buf()); }
  // Per cycle: inline, its slow part out of line.
  bool check_encoder() noexcept {
    const EncoderError &e = parent_ ? parent_->enc_error_ : enc_error_;
    if (USCOPE_LIKELY(e.status.load(std::memory_order_acquire) == USCOPE_OK) &&
        USCOPE_LIKELY(!parent_ || !parent_->finishing_.load(std::memory_order_acquire)))
      return true;
    return encoder_stopped();
  }
  bool encoder_stopped() noexcept;  // check_encoder's failure: sets the sticky error, false
  uscope_status_t not_recording(uint32_t ops, uint32_t events) noexcept;
  uscope_status_t misuse(uscope_status_t code, const char *fmt, ...) noexcept
      __attribute__((format(printf, 3, 4), cold, noinline));
  uscope_status_t bad_storage(uint16_t sid) noexcept __attribute__((cold, noinline));
  uscope_status_t bad_slot(uint16_t sid, uint16_t slot) noexcept __attribute__((cold, noinline));
  uscope_status_t bad_field(uint16_t sid, uint16_t field) noexcept __attribute__((cold, noinline));
  uscope_status_t bad_prop(uint16_t sid, uint16_t prop) noexcept __attribute__((cold, noinline));
  uscope_status_t bad_value(uint16_t sid, uint16_t field, uint64_t v, bool prop) noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_event(uint16_t id) noexcept __attribute__((cold, noinline));
  uscope_status_t bad_payload(uint16_t id, uint32_t size) noexcept __attribute__((cold, noinline));
  void run_callback(uint64_t time_ps) noexcept;
  void stop_encoder() noexcept;
  void finalize(uscope_status_t &status);
  uscope_status_t close_producer();
  uscope_status_t insert_string(const char *str, uint32_t *out);
  void add_drop_status(uscope_status_t &status);

  // Hot state first, on its own cache lines (the object is over-aligned by
  // the encoder's members below); the tables it reads are in whole lines of
  // their own (cache_line.hpp).
  alignas(kCacheLine) uint8_t *w_ = nullptr;  // next byte to write in the ring
  uint8_t *wlimit_ = nullptr;  // how far w_ may advance without checking
  State state_ = kIdle;
  uscope_status_t sticky_ = USCOPE_OK;
  std::vector<StorageInfo, CacheLineAllocator<StorageInfo>> storages_;
  std::vector<Range, CacheLineAllocator<Range>> ranges_;
  std::vector<uint32_t, CacheLineAllocator<uint32_t>> event_sizes_;
  uint32_t num_storages_ = 0;     // cached sizes: cheaper than vector::size() per call
  uint32_t num_event_types_ = 0;
  uint64_t ops_ = 0, events_ = 0, cycles_ = 0, errors_ = 0;
  uint64_t cycle_ops_ = 0, cycle_events_ = 0;  // ops_/events_ when the cycle began
  uint64_t last_time_ = 0;
  bool have_time_ = false;
  uint64_t next_checkpoint_ = 0;
  uint64_t wrap_base_ = 0;      // ring position of ring_.buf[0] in the current lap
  uint64_t published_pos_ = 0;  // last position made visible to the encoder
  // A writer publishes every kPublishBatch bytes, or an eighth of its queue
  // when that is less (the encoder sleeps between batches, and a batch never
  // waits for a queue it fills); a producer at every end_cycle, since the
  // merge waits for each producer's cycle (encoder_merge.cpp). A producer's
  // times must also strictly increase: time_step_ is 1 for it, 0 for a
  // writer. 1 MiB: on the demo testbench, each batch wakes the encoder (a
  // context switch or two); against 256 KiB it took ~0.04 s of the traced
  // run's CPU off (5,700 -> 4,000 switches), and 2 MiB took no more.
  static constexpr uint64_t kPublishBatch = 1024 * 1024;
  uint64_t publish_batch_ = kPublishBatch;
  uint64_t time_step_ = 0;
  uint64_t consumed_cache_ = 0;

  uscope_writer_t *handle_;
  uint64_t interval_ = 0;
  uint32_t backpressure_ = USCOPE_BACKPRESSURE_BLOCK;
  uint64_t drop_headroom_ = 0;
  // checkpoint_storage's data travels in pieces of at most this: kCkptChunk,
  // or the schema's largest mask or slot data when smaller (the queue's
  // minimum is 4 records of it).
  uint32_t ckpt_chunk_ = stream::kCkptChunk;
  uint64_t dropped_cycles_ = 0, dropped_ops_ = 0, dropped_events_ = 0;
  uint64_t stalls_ = 0, stall_ns_ = 0;
  uscope_checkpoint_fn callback_ = nullptr;
  void *callback_ud_ = nullptr;
  std::string message_;
  uscope_status_t close_status_ = USCOPE_OK;
  bool summary_omitted_ = false;  // set by finalize(), after the encoder has stopped

  // ── several producers ──
  Writer *parent_ = nullptr;  // a producer's writer
  // A writer's producers, freed with it (their rings outlive the encoder).
  std::vector<std::unique_ptr<uscope_writer>> producers_;
  std::mutex strings_mutex_;  // strings_ once producers may intern into it
  // The counts of the producers closed so far, for the writer's stats.
  struct ProducerTotals {
    std::atomic<uint64_t> cycles{0}, ops{0}, events{0}, errors{0}, dropped_cycles{0},
        dropped_ops{0}, dropped_events{0}, stalls{0}, stall_ns{0};
  };
  ProducerTotals totals_;
  std::atomic<bool> producers_started_{false};  // a producer has begun a cycle
  std::atomic<bool> finishing_{false};          // the writer is finishing (read by producers)
  std::atomic<bool> producer_closed_{false};    // this producer has been closed

  Schema schema_;
  std::vector<StorageLayout> layouts_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> string_index_;
  std::string string_key_;  // string_insert's lookup key, reused
  uint64_t flags_ = 0;
  uint32_t preamble_end_ = 0;
  uint32_t durability_ = USCOPE_DURABILITY_FLUSH;

  // Written by the encoder and the compression workers: from a new line on.
  alignas(kCacheLine) FileSink sink_;
  EncoderStats enc_stats_;
  EncoderError enc_error_;
  std::unique_ptr<Encoder> encoder_;
  // The ring and the encoder thread (the library's one background-writer
  // engine). Last, so that it is destroyed (the thread joined) first.
  BackgroundWriter queue_;
};

}  // namespace uscope

// The C handle is the writer itself.
struct uscope_writer {
  explicit uscope_writer(const char *path, const uscope::Schema &schema,
                         const uscope_dut_property_t *props, uint32_t num_props,
                         const uscope_writer_options_t *opts)
      : impl(this, path, schema, props, num_props, opts) {}
  explicit uscope_writer(uscope::Writer &parent) : impl(this, parent) {}
  uscope::Writer impl;
};
