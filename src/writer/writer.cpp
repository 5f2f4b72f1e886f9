#include "writer/writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <thread>

#include <sched.h>

#include "base/last_error.hpp"
#include "base/error.hpp"
#include "format/file_codec.hpp"

namespace uscope {


namespace {
constexpr uint64_t kDefaultInterval = 10'000'000;  // 10 µs of simulated time
constexpr uint64_t kDefaultQueue = 8ull << 20;  // ~24k cycles of a BOOM-like core; pre-faulted
constexpr uint64_t kMinQueue = 64ull << 10;
constexpr uint64_t kMaxQueue = 1ull << 40;
constexpr unsigned kDefaultMaxWorkers = 4;

// The CPUs this process may run on (its affinity mask: a container's or
// taskset's limit, not the machine's count).
unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// uscope_writer_options_t.compress_threads as a worker count: the default
// leaves one CPU to the simulation thread (the encoder thread shares with
// the workers: it sleeps whenever they are behind).
unsigned compress_workers(uint32_t option) {
  if (option == USCOPE_COMPRESS_THREADS_INLINE) return 0;
  if (option) return option;
  const unsigned cpus = available_cpus();
  return std::min(cpus > 1 ? cpus - 1 : 0u, kDefaultMaxWorkers);
}

}  // namespace

ValueRange value_range(uint8_t type, const Schema &s, uint8_t enum_id) {
  const unsigned bits = wire::field_type_size(type) * 8;
  if (type == wire::FT_BOOL) return {0, 1};
  if (type == wire::FT_ENUM) return {0, s.enums[enum_id].values.size() - 1u};
  if (bits == 64) return {0, UINT64_MAX};
  if (wire::field_type_signed(type)) return {uint64_t{1} << (bits - 1), (uint64_t{1} << bits) - 1};
  return {0, (uint64_t{1} << bits) - 1};
}

Writer::Writer(uscope_writer_t *handle, const char *path, const Schema &schema,
               const uscope_dut_property_t *props, uint32_t num_props,
               const uscope_writer_options_t *opts)
    : handle_(handle), schema_(schema) {
  // ── options ──
  uscope_writer_options_t o;
  default_options(&o);
  if (opts) {
    if (opts->struct_size < sizeof(uint32_t) || opts->struct_size > sizeof(o))
      fail(USCOPE_ERR_INVALID_ARGUMENT,
           "options.struct_size is %u; this library knows %zu (set it to sizeof)", opts->struct_size,
           sizeof(o));
    std::memcpy(&o, opts, opts->struct_size);  // an older, shorter struct keeps our defaults
    o.struct_size = sizeof(o);
  }
  const CompressionMethod *method = compression_by_id(o.compression);
  if (!method) fail(USCOPE_ERR_INVALID_ARGUMENT, "options.compression %u is unknown", o.compression);
  if (o.durability > USCOPE_DURABILITY_FDATASYNC)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.durability %u is unknown", o.durability);
  if (o.frame_format > USCOPE_FRAMES_V01)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.frame_format %u is unknown", o.frame_format);
  if (o.backpressure > USCOPE_BACKPRESSURE_DROP)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.backpressure %u is unknown", o.backpressure);
  if (o.compression_level < method->min_level || o.compression_level > method->max_level)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.compression_level %d: %s", o.compression_level,
         method->levels);
  if (o.value_check > USCOPE_VALUE_CHECK_STRICT)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.value_check %u is unknown", o.value_check);
  if (o.reserved != 0) fail(USCOPE_ERR_INVALID_ARGUMENT, "options.reserved must be 0");
  if (o.reserved2 != 0) fail(USCOPE_ERR_INVALID_ARGUMENT, "options.reserved2 must be 0");
  if (o.compress_threads > USCOPE_COMPRESS_THREADS_MAX && o.compress_threads != USCOPE_COMPRESS_THREADS_INLINE)
    fail(USCOPE_ERR_INVALID_ARGUMENT,
         "options.compress_threads %u: 0 (default), 1..%u workers or USCOPE_COMPRESS_THREADS_INLINE",
         o.compress_threads, USCOPE_COMPRESS_THREADS_MAX);
  if (o.queue_bytes > kMaxQueue)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "options.queue_bytes %llu is above 1 TiB",
         static_cast<unsigned long long>(o.queue_bytes));
  interval_ = o.checkpoint_interval_ps ? o.checkpoint_interval_ps : kDefaultInterval;
  backpressure_ = o.backpressure;
  durability_ = o.durability;

  // ── schema ──
  if (schema_.clocks.empty())
    fail(USCOPE_ERR_SCHEMA, "the schema has no clock domain; a trace needs one (spec §4.9)");
  if (schema_.scopes.empty())
    fail(USCOPE_ERR_SCHEMA, "the schema has no scope; a trace needs the root scope (spec §4.4)");
  // The DUT strings go into the shared pool after the schema's (§1.3), in the
  // order the reference writer puts them.
  std::vector<DutProperty> dut;
  if (num_props && !props) fail(USCOPE_ERR_INVALID_ARGUMENT, "props is NULL but num_props is %u", num_props);
  if (num_props > 0xFFFF) fail(USCOPE_ERR_LIMIT, "%u DUT properties; at most 65,535 (spec §3)", num_props);
  for (uint32_t i = 0; i < num_props; ++i) {
    if (!props[i].key || !props[i].value)
      fail(USCOPE_ERR_INVALID_ARGUMENT, "DUT property %u has a NULL key or value", i);
    DutProperty d;
    d.key = schema_.pool.insert(props[i].key);
    d.value = schema_.pool.insert(props[i].value);
    dut.push_back(d);
  }
  layouts_ = make_layouts(schema_);
  // The largest piece of checkpoint_storage data: no schema needs a bigger
  // one than its largest mask or slot data, and a small schema's queue then
  // need not hold four 64 KiB pieces (pre-faulted at open: 256 KiB of page
  // faults a small job paid for).
  uint64_t max_checkpoint = 0, max_piece = 1;
  for (const auto &L : layouts_) {
    max_checkpoint += L.max_block_size();
    max_piece = std::max<uint64_t>({max_piece, L.mask_bytes, uint64_t{L.num_slots} * L.slot_size});
  }
  ckpt_chunk_ = static_cast<uint32_t>(std::min<uint64_t>(max_piece, stream::kCkptChunk));
  uint64_t max_record = stream::kCkptBeginSize + 8 + ckpt_chunk_;
  if (max_checkpoint > UINT32_MAX)
    fail(USCOPE_ERR_LIMIT, "a full checkpoint of this schema takes %llu bytes; checkpoint_size is a u32 (spec §8.1)",
         static_cast<unsigned long long>(max_checkpoint));
  for (const auto &ev : schema_.events) {
    event_sizes_.push_back(packed_size(ev.fields));
    max_record = std::max<uint64_t>(max_record, wire::kEventItemHeaderSize + event_sizes_.back());
  }
  // Without the strict check every range is the full u64, so the hot path
  // runs the same single compare either way and it never fails.
  const bool strict = o.value_check == USCOPE_VALUE_CHECK_STRICT;
  auto range = [&](const FieldDef &f) {
    return strict ? value_range(f.type, schema_, f.enum_id) : ValueRange{0, UINT64_MAX};
  };
  for (size_t i = 0; i < schema_.storages.size(); ++i) {
    const auto &st = schema_.storages[i];
    storages_.push_back({st.num_slots, static_cast<uint16_t>(st.fields.size()),
                         static_cast<uint16_t>(st.props.size()),
                         static_cast<uint32_t>(ranges_.size())});
    for (const auto &f : st.fields) ranges_.push_back(range(f));
    for (const auto &f : st.props) ranges_.push_back(range(f));
  }

  num_storages_ = static_cast<uint32_t>(storages_.size());
  num_event_types_ = static_cast<uint32_t>(event_sizes_.size());

  // ── header and preamble (§2, §2.3) ──
  flags_ |= compression_flags(*method);
  // COMPAT 4: 0x82 while open with v0.2 frames. v0.1 frames set
  // F_COMPACT_DELTAS so that frames may use the compact form.
  flags_ |= o.frame_format == USCOPE_FRAMES_V02 ? wire::F_INTERLEAVED_DELTAS : wire::F_COMPACT_DELTAS;

  std::vector<uint8_t> file(wire::kFileHeaderSize, 0);
  append_chunk(file, wire::CHUNK_DUT_DESC, encode_dut(dut));
  append_chunk(file, wire::CHUNK_SCHEMA, encode_schema(schema_));
  append_chunk(file, wire::CHUNK_TRACE_CONFIG, encode_trace_config(interval_));
  append_chunk(file, wire::CHUNK_END, {});
  if (file.size() > UINT32_MAX) fail(USCOPE_ERR_LIMIT, "preamble larger than 4 GiB");
  preamble_end_ = static_cast<uint32_t>(file.size());
  FileHeader h;
  h.version_major = wire::kVersionMajor;
  h.version_minor = wire::kVersionMinor;
  h.flags = flags_;
  h.preamble_end = preamble_end_;
  encode_file_header(h, file.data());

  // ── queue, encoder thread ──
  uint64_t q = o.queue_bytes ? o.queue_bytes : kDefaultQueue;
  q = std::max<uint64_t>({q, kMinQueue, 4 * max_record});
  if (!queue_.allocate(q))
    fail(USCOPE_ERR_NO_MEMORY, "cannot allocate a %llu-byte queue", static_cast<unsigned long long>(q));
  publish_batch_ = std::min<uint64_t>(kPublishBatch, queue_.cap() / 8);
  // Touch every page now, so that page faults happen at open and not in the
  // first cycles of the simulation.
  std::memset(queue_.buf(), 0, queue_.cap());
  w_ = queue_.buf();
  wlimit_ = queue_.buf() + queue_.cap();
  drop_headroom_ = std::max<uint64_t>(queue_.cap() / 4, 2 * max_record);
  next_checkpoint_ = interval_;

  EncoderConfig cfg;
  cfg.format = o.frame_format == USCOPE_FRAMES_V02 ? FrameFormat::V02 : FrameFormat::V01;
  cfg.method = method;
  cfg.level = o.compression_level;
  cfg.checkpoint_interval_ps = interval_;
  cfg.compress_workers = compress_workers(o.compress_threads);

  // The header and preamble go to a temporary file renamed onto path only
  // once they are written (file_sink.hpp): a kill or a full disk during
  // open leaves path absent or the previous file, never an empty or partial
  // preamble; and readers of the previous run keep their own inode.
  sink_.open(path, static_cast<Durability>(o.durability));
  sink_.append(file);
  sink_.publish();
  enc_stats_.file_bytes.store(sink_.size(), std::memory_order_relaxed);
  encoder_ = std::make_unique<Encoder>(schema_, layouts_, queue_.ring(), sink_, cfg, enc_stats_, enc_error_);
  queue_.start(*encoder_, Encoder::kProgressStep);
}

Writer::Writer(uscope_writer_t *handle, Writer &parent)
    : storages_(parent.storages_),
      ranges_(parent.ranges_),
      event_sizes_(parent.event_sizes_),
      num_storages_(parent.num_storages_),
      num_event_types_(parent.num_event_types_),
      publish_batch_(0),
      time_step_(1),
      handle_(handle),
      interval_(parent.interval_),
      backpressure_(parent.backpressure_),
      drop_headroom_(parent.drop_headroom_),
      parent_(&parent),
      schema_(parent.schema_) {
  // The same queue size as the writer's, pre-faulted for the same reason.
  if (!queue_.allocate(parent.queue_.cap()))
    fail(USCOPE_ERR_NO_MEMORY, "cannot allocate a %llu-byte queue for the producer",
         static_cast<unsigned long long>(parent.queue_.cap()));
  std::memset(queue_.buf(), 0, queue_.cap());
  w_ = queue_.buf();
  wlimit_ = queue_.buf() + queue_.cap();
  next_checkpoint_ = interval_;
}

Writer::~Writer() { stop_encoder(); }

uscope_status_t Writer::add_producer(uscope_writer_t **out) {
  if (parent_)
    fail(USCOPE_ERR_BAD_STATE, "uscope_writer_add_producer: this handle is a producer; add producers to its writer");
  if (state_ == kClosed) fail(USCOPE_ERR_BAD_STATE, "uscope_writer_add_producer after the writer was finished");
  if (state_ == kFailed) return not_recording(0, 0);
  if (state_ != kIdle && state_ != kCoordinating)
    fail(USCOPE_ERR_BAD_STATE, "uscope_writer_add_producer inside a cycle or the checkpoint callback");
  if (have_time_)
    fail(USCOPE_ERR_BAD_STATE,
         "uscope_writer_add_producer: this writer has recorded cycles itself; a writer with producers "
         "records none");
  if (producers_started_.load(std::memory_order_relaxed))
    fail(USCOPE_ERR_BAD_STATE,
         "uscope_writer_add_producer: a producer has recorded a cycle already; add every producer "
         "before the first cycle");
  if (callback_)
    fail(USCOPE_ERR_BAD_STATE, "uscope_writer_add_producer: a checkpoint callback is set, which producers cannot have");
  if (producers_.size() >= USCOPE_MAX_PRODUCERS)
    fail(USCOPE_ERR_LIMIT, "uscope_writer_add_producer: this writer has %u producers already (USCOPE_MAX_PRODUCERS)",
         USCOPE_MAX_PRODUCERS);
  producers_.reserve(producers_.size() + 1);  // so that the push below cannot throw
  auto p = std::make_unique<uscope_writer>(*this);
  encoder_->add_producer(p->impl.queue_.ring());
  queue_.wake();  // the encoder may be parked on this writer's own ring
  producers_.push_back(std::move(p));
  state_ = kCoordinating;
  *out = producers_.back().get();
  return USCOPE_OK;
}

void Writer::stop_encoder() noexcept {
  if (!encoder_) return;  // the constructor failed before the thread started, or a producer
  // Before the main ring stops: the encoder then ends each producer at what
  // it has published.
  finishing_.store(true, std::memory_order_release);
  encoder_->close_producers();
  publish();
  queue_.stop();
}

// ── queue ──

void Writer::publish() noexcept {
  published_pos_ = write_pos();
  queue_.publish(published_pos_);
}

bool Writer::refill(size_t n) noexcept {
  const uint64_t cap = queue_.cap();
  RoomWait wait;
  for (;;) {
    const uint64_t idx = static_cast<uint64_t>(w_ - queue_.buf());
    const uint64_t tail = cap - idx;
    consumed_cache_ = queue_.consumed();
    const uint64_t free = cap - (wrap_base_ + idx - consumed_cache_);
    if (n <= tail && n <= free) {
      wlimit_ = w_ + std::min(tail, free);
      break;
    }
    if (n > tail && tail <= free) {  // the record does not fit before the end: wrap
      if (tail) *w_ = stream::kPad;
      wrap_base_ += cap;
      w_ = queue_.buf();
      continue;
    }
    // The queue is full: let the encoder see everything so far, then wait.
    if (!check_encoder()) return false;
    publish();
    if (!wait.waited()) ++stalls_;
    wait.round();
  }
  stall_ns_ += wait.elapsed_ns();
  return true;
}

bool Writer::encoder_stopped() noexcept {
  const EncoderError &e = parent_ ? parent_->enc_error_ : enc_error_;
  const uscope_status_t s = e.status.load(std::memory_order_acquire);
  if (sticky_ == USCOPE_OK) {
    try {
      sticky_ = s != USCOPE_OK ? s : USCOPE_ERR_BAD_STATE;
      message_ = s != USCOPE_OK ? e.message
                                : "the writer of this producer was finished before the producer was closed";
      set_thread_error(message_);
    } catch (...) {
      // Out of memory for the message: the status still says what happened.
    }
  }
  state_ = kFailed;
  return false;
}

// ── per-cycle calls ──

uscope_status_t Writer::begin_cycle(uint64_t t) noexcept {
  if (USCOPE_UNLIKELY(state_ != kIdle)) {
    if (state_ == kRecording || state_ == kDropping)
      return misuse(USCOPE_ERR_BAD_STATE, "begin_cycle(%llu) inside a cycle: end_cycle was not called",
                    static_cast<unsigned long long>(t));
    return not_recording(0, 0);
  }
  if (USCOPE_UNLIKELY(!check_encoder())) {
    ++errors_;
    return sticky_;
  }
  if (USCOPE_UNLIKELY(have_time_ && t < last_time_ + time_step_))
    return misuse(USCOPE_ERR_TIME_BACKWARDS, "begin_cycle(%llu) is %s the previous cycle at %llu ps",
                  static_cast<unsigned long long>(t),
                  time_step_ ? "not after (a producer's times strictly increase)" : "before",
                  static_cast<unsigned long long>(last_time_));
  if (USCOPE_UNLIKELY(!have_time_) && parent_)
    parent_->producers_started_.store(true, std::memory_order_relaxed);
  last_time_ = t;
  have_time_ = true;
  if (backpressure_ == USCOPE_BACKPRESSURE_DROP &&
      USCOPE_UNLIKELY(queue_.cap() - (write_pos() - consumed_cache_) < drop_headroom_)) {
    consumed_cache_ = queue_.consumed();
    if (queue_.cap() - (write_pos() - consumed_cache_) < drop_headroom_) {
      state_ = kDropping;  // the whole cycle is counted and skipped
      ++dropped_cycles_;
      return USCOPE_OK;
    }
  }
  if (USCOPE_UNLIKELY(wlimit_ - w_ < static_cast<ptrdiff_t>(stream::kBeginSize)) &&
      !refill(stream::kBeginSize))
    return sticky_;
  w_[0] = stream::kBegin;
  std::memset(w_ + 1, 0, 7);
  wire::put_u64(w_ + 8, t);
  w_ += stream::kBeginSize;
  state_ = kRecording;
  cycle_ops_ = ops_;  // so that a discarded cycle can be taken out of the counts
  cycle_events_ = events_;
  return USCOPE_OK;
}

uscope_status_t Writer::end_cycle() noexcept {
  if (USCOPE_UNLIKELY(state_ != kRecording)) {
    if (state_ == kDropping) {
      state_ = kIdle;
      return USCOPE_OK;
    }
    if (state_ == kIdle)
      return misuse(USCOPE_ERR_BAD_STATE, "end_cycle without begin_cycle");
    return not_recording(0, 0);
  }
  if (USCOPE_UNLIKELY(w_ == wlimit_) && !refill(1)) return sticky_;
  *w_++ = stream::kEnd;
  state_ = kIdle;
  ++cycles_;
  // Publishing in batches lets the encoder sleep between them instead of
  // waking for every cycle; a segment boundary always publishes, so the
  // segment is committed (and visible to live readers) without delay.
  const bool boundary = last_time_ >= next_checkpoint_;
  if (boundary || write_pos() - published_pos_ >= publish_batch_) publish();
  // The same boundary rule as the encoder (COMPAT 10), so the callback runs
  // exactly where a segment ends.
  if (USCOPE_UNLIKELY(boundary)) {
    next_checkpoint_ = wire::add_saturating(last_time_, interval_);
    if (callback_) {
      run_callback(last_time_);
      if (state_ == kFailed) return sticky_;  // a misuse inside the callback
    }
  }
  return USCOPE_OK;
}

uscope_status_t Writer::flush() noexcept {
  if (state_ != kIdle && state_ != kCoordinating) {
    if (state_ == kRecording || state_ == kDropping)
      return misuse(USCOPE_ERR_BAD_STATE, "uscope_writer_flush inside a cycle");
    return not_recording(0, 0);
  }
  if (!check_encoder()) return sticky_;
  if (USCOPE_UNLIKELY(w_ == wlimit_) && !refill(1)) return sticky_;
  *w_++ = stream::kFlush;
  publish();
  return USCOPE_OK;
}

uscope_status_t Writer::not_recording(uint32_t ops, uint32_t events) noexcept {
  switch (state_) {
    case kDropping:
      dropped_ops_ += ops;
      dropped_events_ += events;
      return USCOPE_OK;
    case kFailed:
      ++errors_;
      return sticky_;
    case kInCallback:
      return misuse(USCOPE_ERR_BAD_STATE, "only uscope_checkpoint_storage may be called inside the checkpoint callback");
    case kClosed:
      ++errors_;
      return USCOPE_ERR_BAD_STATE;
    case kCoordinating:  // not sticky: the writer itself is fine
      ++errors_;
      set_thread_error("this writer has producers (uscope_writer_add_producer) and records no cycle "
                       "itself: record through a producer");
      return USCOPE_ERR_BAD_STATE;
    default:
      return misuse(USCOPE_ERR_BAD_STATE, "%s outside a begin_cycle/end_cycle pair",
                    events ? "event" : "a slot or property call");
  }
}

uscope_status_t Writer::misuse(uscope_status_t code, const char *fmt, ...) noexcept {
  ++errors_;
  if (state_ == kFailed) return sticky_;
  try {
    va_list ap;
    va_start(ap, fmt);
    message_ = format_message_v(fmt, ap);
    va_end(ap);
    set_thread_error(message_);
  } catch (...) {
    // Out of memory while formatting: the status still says what happened.
  }
  // Discard the cycle in progress; the encoder has not applied any of it.
  if (state_ == kRecording) {
    if (w_ != wlimit_ || refill(1)) *w_++ = stream::kAbort;
    publish();
    ops_ = cycle_ops_;
    events_ = cycle_events_;
  }
  sticky_ = code;
  state_ = kFailed;
  // A failed producer records nothing more: the merge need not wait for it.
  if (parent_) {
    publish();
    queue_.ring().stop.store(true, std::memory_order_release);
  }
  return code;
}

uscope_status_t Writer::bad_storage(uint16_t sid) noexcept {
  return misuse(USCOPE_ERR_UNKNOWN_STORAGE, "storage id %u is not in the schema (%zu storages)", sid,
                storages_.size());
}
uscope_status_t Writer::bad_slot(uint16_t sid, uint16_t slot) noexcept {
  return misuse(USCOPE_ERR_UNKNOWN_SLOT, "slot %u of storage %u (\"%s\"), which has %u slots", slot,
                sid, schema_.str(schema_.storages[sid].name), storages_[sid].num_slots);
}
uscope_status_t Writer::bad_field(uint16_t sid, uint16_t field) noexcept {
  return misuse(USCOPE_ERR_UNKNOWN_FIELD, "field %u of storage %u (\"%s\"), which has %u fields",
                field, sid, schema_.str(schema_.storages[sid].name), storages_[sid].num_fields);
}
uscope_status_t Writer::bad_prop(uint16_t sid, uint16_t prop) noexcept {
  return misuse(USCOPE_ERR_UNKNOWN_PROPERTY, "property %u of storage %u (\"%s\"), which has %u properties",
                prop, sid, schema_.str(schema_.storages[sid].name), storages_[sid].num_props);
}
uscope_status_t Writer::bad_value(uint16_t sid, uint16_t field, uint64_t v, bool prop) noexcept {
  const auto &st = schema_.storages[sid];
  const FieldDef &f = prop ? st.props[field] : st.fields[field];
  return misuse(USCOPE_ERR_VALUE_RANGE,
                "value 0x%llx does not fit %s %u (\"%s\", type 0x%02x) of storage %u (\"%s\")",
                static_cast<unsigned long long>(v), prop ? "property" : "field", field,
                schema_.str(f.name), f.type, sid, schema_.str(st.name));
}
uscope_status_t Writer::bad_event(uint16_t id) noexcept {
  return misuse(USCOPE_ERR_UNKNOWN_EVENT, "event type %u is not in the schema (%zu event types)", id,
                event_sizes_.size());
}
uscope_status_t Writer::bad_payload(uint16_t id, uint32_t size) noexcept {
  if (size == event_sizes_[id])
    return misuse(USCOPE_ERR_INVALID_ARGUMENT, "event %u: payload is NULL", id);
  return misuse(USCOPE_ERR_PAYLOAD_SIZE, "event %u (\"%s\"): payload of %u bytes, the schema says %u",
                id, schema_.str(schema_.events[id].name), size, event_sizes_[id]);
}

// ── checkpoint callback ──

uscope_status_t Writer::set_checkpoint_callback(uscope_checkpoint_fn fn, void *ud) {
  if (state_ == kRecording || state_ == kDropping || state_ == kInCallback)
    return misuse(USCOPE_ERR_BAD_STATE, "set_checkpoint_callback inside a cycle or callback");
  if (parent_ || state_ == kCoordinating)
    fail(USCOPE_ERR_BAD_STATE, "set_checkpoint_callback: a writer with producers has no checkpoint callback");
  callback_ = fn;
  callback_ud_ = ud;
  return USCOPE_OK;
}

void Writer::run_callback(uint64_t time_ps) noexcept {
  state_ = kInCallback;
  callback_(handle_, time_ps, callback_ud_);
  if (state_ == kInCallback) state_ = kIdle;
  publish();
}

uscope_status_t Writer::checkpoint_storage(uint16_t sid, const uint8_t *mask, const void *data,
                                           uint32_t num_valid) {
  // Misuse is sticky, as for the per-cycle calls: misuse() records the status
  // and message for uscope_writer_error() and fails the writer.
  if (state_ != kInCallback) {
    if (state_ == kFailed || state_ == kClosed || state_ == kCoordinating) return not_recording(0, 0);
    return misuse(USCOPE_ERR_BAD_STATE, "uscope_checkpoint_storage is only valid inside the checkpoint callback");
  }
  if (sid >= layouts_.size())
    return misuse(USCOPE_ERR_UNKNOWN_STORAGE, "checkpoint_storage: storage id %u is not in the schema", sid);
  const StorageLayout &L = layouts_[sid];
  if (L.sparse) {
    if (!mask)
      return misuse(USCOPE_ERR_INVALID_ARGUMENT, "checkpoint_storage: storage %u is sparse; valid_mask is NULL", sid);
    uint32_t n = 0;
    for (uint32_t s = 0; s < L.num_slots; ++s) n += (mask[s / 8] >> (s % 8)) & 1u;
    if (n != num_valid)
      return misuse(USCOPE_ERR_INVALID_ARGUMENT,
                    "checkpoint_storage: valid_mask has %u bits set, num_valid_slots is %u", n, num_valid);
  } else {
    if (mask)
      return misuse(USCOPE_ERR_INVALID_ARGUMENT,
                    "checkpoint_storage: storage %u is dense; valid_mask must be NULL", sid);
    if (num_valid != L.num_slots)
      return misuse(USCOPE_ERR_INVALID_ARGUMENT,
                    "checkpoint_storage: dense storage %u has %u slots, num_valid_slots is %u", sid,
                    L.num_slots, num_valid);
  }
  const uint64_t data_bytes = uint64_t{num_valid} * L.slot_size;
  if (data_bytes && !data)
    return misuse(USCOPE_ERR_INVALID_ARGUMENT, "checkpoint_storage: slot_data is NULL");
  const uint64_t total = L.mask_bytes + data_bytes;
  if (!refill(stream::kCkptBeginSize)) return sticky_;
  w_[0] = stream::kCkptBegin;
  w_[1] = 0;
  wire::put_u16(w_ + 2, sid);
  wire::put_u32(w_ + 4, num_valid);
  wire::put_u64(w_ + 8, total);
  w_ += stream::kCkptBeginSize;
  // The mask then the data, in pieces small enough for any queue size.
  const uint8_t *parts[2] = {mask, static_cast<const uint8_t *>(data)};
  const uint64_t sizes[2] = {L.mask_bytes, data_bytes};
  for (int k = 0; k < 2; ++k) {
    for (uint64_t done = 0; done < sizes[k];) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(sizes[k] - done, ckpt_chunk_));
      if (!refill(8 + n)) return sticky_;
      w_[0] = stream::kCkptData;
      std::memset(w_ + 1, 0, 3);
      wire::put_u32(w_ + 4, n);
      std::memcpy(w_ + 8, parts[k] + done, n);
      w_ += 8 + n;
      done += n;
    }
  }
  return USCOPE_OK;
}

// ── strings, stats ──

uscope_status_t Writer::string_insert(const char *str, uint32_t *out) {
  if (state_ == kClosed) fail(USCOPE_ERR_BAD_STATE, "string_insert after close");
  // One table for the trace: a producer's strings go to its writer's.
  // The lock only once there are producers (producers_ is the writer
  // thread's own; a producer never reads it).
  if (!parent_ && producers_.empty()) return insert_string(str, out);
  Writer &owner = parent_ ? *parent_ : *this;
  std::lock_guard<std::mutex> lock(owner.strings_mutex_);
  return owner.insert_string(str, out);
}

uscope_status_t Writer::insert_string(const char *str, uint32_t *out) {
  // The lookup key reuses one buffer: a temporary std::string per call would
  // allocate for every string longer than the small-string buffer, on the
  // simulation thread, even when the string is already interned.
  string_key_.assign(str);
  auto it = string_index_.find(string_key_);
  if (it != string_index_.end()) {
    *out = it->second;
    return USCOPE_OK;
  }
  if (strings_.size() >= UINT32_MAX)
    fail(USCOPE_ERR_LIMIT, "the string table is full (2^32-1 entries, spec §7)");
  const auto idx = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(str);
  string_index_.emplace(strings_.back(), idx);
  *out = idx;
  return USCOPE_OK;
}

void Writer::stats(uscope_writer_stats_t *out) const {
  uscope_writer_stats_t s{};
  s.struct_size = sizeof(s);
  s.sticky_status = sticky_ != USCOPE_OK ? sticky_ : enc_error_.status.load(std::memory_order_acquire);
  s.cycles = cycles_;
  s.ops = ops_;
  s.events = events_;
  s.frames = enc_stats_.frames.load(std::memory_order_relaxed);
  s.segments = enc_stats_.segments.load(std::memory_order_relaxed);
  s.raw_bytes = enc_stats_.raw_bytes.load(std::memory_order_relaxed);
  s.compressed_bytes = enc_stats_.compressed_bytes.load(std::memory_order_relaxed);
  s.checkpoint_bytes = enc_stats_.checkpoint_bytes.load(std::memory_order_relaxed);
  s.file_bytes = enc_stats_.file_bytes.load(std::memory_order_relaxed);
  s.errors = errors_;
  s.dropped_cycles = dropped_cycles_;
  s.dropped_ops = dropped_ops_;
  s.dropped_events = dropped_events_;
  s.stalls = stalls_;
  s.stall_ns = stall_ns_;
  s.queue_bytes = queue_.cap();
  s.summary_omitted = summary_omitted_ ? 1 : 0;
  s.compress_threads = encoder_ ? encoder_->compress_workers() : 0;
  s.compress_waits = enc_stats_.compress_waits.load(std::memory_order_relaxed);
  s.compress_wait_ns = enc_stats_.compress_wait_ns.load(std::memory_order_relaxed);
  if (parent_) {  // its own counts, with its writer's encoder figures
    const EncoderStats &e = parent_->enc_stats_;
    s.sticky_status = sticky_ != USCOPE_OK ? sticky_ : parent_->enc_error_.status.load(std::memory_order_acquire);
    s.frames = e.frames.load(std::memory_order_relaxed);
    s.segments = e.segments.load(std::memory_order_relaxed);
    s.raw_bytes = e.raw_bytes.load(std::memory_order_relaxed);
    s.compressed_bytes = e.compressed_bytes.load(std::memory_order_relaxed);
    s.checkpoint_bytes = e.checkpoint_bytes.load(std::memory_order_relaxed);
    s.file_bytes = e.file_bytes.load(std::memory_order_relaxed);
    s.compress_threads = parent_->encoder_->compress_workers();
    s.compress_waits = e.compress_waits.load(std::memory_order_relaxed);
    s.compress_wait_ns = e.compress_wait_ns.load(std::memory_order_relaxed);
  }
  // A writer's own counts (none, once it has producers) plus those of its
  // closed producers.
  s.cycles += totals_.cycles.load(std::memory_order_relaxed);
  s.ops += totals_.ops.load(std::memory_order_relaxed);
  s.events += totals_.events.load(std::memory_order_relaxed);
  s.errors += totals_.errors.load(std::memory_order_relaxed);
  s.dropped_cycles += totals_.dropped_cycles.load(std::memory_order_relaxed);
  s.dropped_ops += totals_.dropped_ops.load(std::memory_order_relaxed);
  s.dropped_events += totals_.dropped_events.load(std::memory_order_relaxed);
  s.stalls += totals_.stalls.load(std::memory_order_relaxed);
  s.stall_ns += totals_.stall_ns.load(std::memory_order_relaxed);
  const uint32_t n = out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
  std::memcpy(out, &s, n);
  out->struct_size = n;
}

// ── close ──

uscope_status_t Writer::close() {
  if (state_ == kClosed) return close_status_;  // finished already
  if (parent_) return close_producer();
  size_t open_producers = 0;
  for (const auto &p : producers_)
    open_producers += !p->impl.producer_closed_.load(std::memory_order_acquire);
  if (open_producers && sticky_ == USCOPE_OK) {
    // Not sticky before now: the trace is still finalized with every cycle
    // the producers had ended (stop_encoder tells the encoder to end them).
    sticky_ = USCOPE_ERR_BAD_STATE;
    message_ = format_message("%zu of the %zu producers were not closed before their writer; the trace "
                              "keeps every cycle they had ended",
                              open_producers, producers_.size());
  }
  if (state_ == kRecording) {  // an unfinished cycle is discarded
    if (w_ != wlimit_ || refill(1)) *w_++ = stream::kAbort;
    ops_ = cycle_ops_;
    events_ = cycle_events_;
  }
  stop_encoder();
  uscope_status_t status = sticky_;
  const uscope_status_t enc = enc_error_.status.load(std::memory_order_acquire);
  if (status == USCOPE_OK && enc != USCOPE_OK) {
    status = enc;
    message_ = enc_error_.message;
  }
  state_ = kClosed;
  if (enc == USCOPE_OK) {
    // The encoder is healthy, so the file is finalized even after a per-cycle
    // misuse: every cycle before the error is kept.
    try {
      finalize(status);
    } catch (const Error &e) {
      if (status == USCOPE_OK) {
        status = e.code();
        message_ = e.what();
      }
    }
  } else {
    // After an encoder failure (e.g. a full disk) the file is left as a live
    // file: every segment committed before the failure stays readable.
    message_ += " (the file keeps every segment committed before the error, unfinalized)";
    try {
      sink_.close();
    } catch (const Error &) {
    }
  }
  add_drop_status(status);
  if (status != USCOPE_OK) set_thread_error(message_);
  close_status_ = status;
  return status;
}

void Writer::add_drop_status(uscope_status_t &status) {
  const uint64_t cycles = dropped_cycles_ + totals_.dropped_cycles.load(std::memory_order_relaxed);
  if (status != USCOPE_OK || !cycles) return;
  status = USCOPE_ERR_DATA_DROPPED;
  message_ = format_message("%llu cycles (%llu ops, %llu events) were dropped by the DROP backpressure policy",
                            static_cast<unsigned long long>(cycles),
                            static_cast<unsigned long long>(dropped_ops_ + totals_.dropped_ops.load(std::memory_order_relaxed)),
                            static_cast<unsigned long long>(dropped_events_ + totals_.dropped_events.load(std::memory_order_relaxed)));
}

uscope_status_t Writer::close_producer() {
  if (state_ == kRecording) {  // an unfinished cycle is discarded
    if (w_ != wlimit_ || refill(1)) *w_++ = stream::kAbort;
    ops_ = cycle_ops_;
    events_ = cycle_events_;
  }
  // Its last records, then the stop (the encoder reads the stop first, then
  // whether everything published is merged).
  publish();
  queue_.ring().request_stop();
  uscope_status_t status = sticky_;
  const uscope_status_t enc = parent_->enc_error_.status.load(std::memory_order_acquire);
  if (status == USCOPE_OK && enc != USCOPE_OK) {
    status = enc;
    message_ = parent_->enc_error_.message;
  }
  add_drop_status(status);
  ProducerTotals &t = parent_->totals_;
  t.cycles.fetch_add(cycles_, std::memory_order_relaxed);
  t.ops.fetch_add(ops_, std::memory_order_relaxed);
  t.events.fetch_add(events_, std::memory_order_relaxed);
  t.errors.fetch_add(errors_, std::memory_order_relaxed);
  t.dropped_cycles.fetch_add(dropped_cycles_, std::memory_order_relaxed);
  t.dropped_ops.fetch_add(dropped_ops_, std::memory_order_relaxed);
  t.dropped_events.fetch_add(dropped_events_, std::memory_order_relaxed);
  t.stalls.fetch_add(stalls_, std::memory_order_relaxed);
  t.stall_ns.fetch_add(stall_ns_, std::memory_order_relaxed);
  state_ = kClosed;
  producer_closed_.store(true, std::memory_order_release);
  if (status != USCOPE_OK) set_thread_error(message_);
  close_status_ = status;
  return status;
}

void Writer::finalize(uscope_status_t &status) {
  encoder_->flush_open_segment();
  // COMPAT 7: last segment, TSUM, string table, segment table, padding to 8,
  // then the section table: STRINGS, SEGMENTS, COUNTER_SUMMARY, END.
  std::vector<SectionEntry> sections;
  SectionEntry tsum_entry{wire::SECTION_COUNTER_SUMMARY, 0, 0, 0};
  const std::vector<uint8_t> tsum = encoder_->tsum().finish();
  if (!tsum.empty()) {
    tsum_entry.offset = sink_.append(tsum);
    tsum_entry.size = tsum.size();
  }
  if (!strings_.empty()) {
    std::vector<uint8_t> st;
    append_string_table(st, strings_);
    sections.push_back({wire::SECTION_STRINGS, 0, sink_.append(st), st.size()});
    flags_ |= wire::F_HAS_STRINGS;
  }
  if (!encoder_->segment_table().empty()) {
    std::vector<uint8_t> t;
    append_segment_table(t, encoder_->segment_table());
    sections.push_back({wire::SECTION_SEGMENTS, 0, sink_.append(t), t.size()});
  }
  if (!tsum.empty()) sections.push_back(tsum_entry);
  const uint64_t pad = wire::align8(sink_.size()) - sink_.size();
  if (pad) {
    const uint8_t zeros[8] = {};
    sink_.append(zeros, pad);
  }
  std::vector<uint8_t> table;
  append_section_table(table, sections);
  const uint64_t table_offset = sink_.append(table);

  FileHeader h;
  h.version_major = wire::kVersionMajor;
  h.version_minor = wire::kVersionMinor;
  h.flags = flags_;  // F_COMPLETE comes last, below
  h.total_time_ps = encoder_->num_segments() ? encoder_->last_time() : 0;  // COMPAT 11
  h.num_segments = encoder_->num_segments();
  h.preamble_end = preamble_end_;
  h.section_table_offset = table_offset;
  h.tail_offset = encoder_->tail_offset();
  uint8_t hdr[wire::kFileHeaderSize];
  encode_file_header(h, hdr);
  // Everything the header points at must be on disk before the header says
  // F_COMPLETE when the user asked for power-loss durability.
  if (durability_ == USCOPE_DURABILITY_FDATASYNC) sink_.sync();
  sink_.write_at(0, hdr, sizeof(hdr));
  // Set F_COMPLETE in its own 8-byte write after everything else, so that a
  // live reader never sees "complete" with a section table offset not yet
  // written (a 48-byte write is not atomic for a concurrent reader).
  if (durability_ == USCOPE_DURABILITY_FDATASYNC) sink_.sync();
  uint8_t flags[8];
  wire::put_u64(flags, flags_ | wire::F_COMPLETE);
  sink_.write_at(wire::kHdrOffFlags, flags, sizeof(flags));
  if (durability_ == USCOPE_DURABILITY_FDATASYNC) sink_.sync();
  enc_stats_.file_bytes.store(sink_.size(), std::memory_order_relaxed);
  sink_.close();
  summary_omitted_ = encoder_->tsum().omitted();
  if (summary_omitted_ && status == USCOPE_OK) {
    // Not an error of the trace: its content is complete. Say it in the message.
    message_ = "the trace summary was left out: a time jump needed more than 256 MiB of buckets";
  }
}

}  // namespace uscope
