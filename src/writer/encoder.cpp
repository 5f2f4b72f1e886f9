#include "writer/encoder.hpp"

#include <chrono>
#include <cstring>
#include <new>
#include <thread>

#include "base/error.hpp"

namespace uscope {

namespace {
// A segment is also cut when its raw deltas pass this size, so that its
// u32 size fields (§8.1) and the encoder's memory stay bounded even when the
// checkpoint interval is huge. Where segments are cut is invisible to readers.
constexpr size_t kMaxSegmentRaw = 256u << 20;
}  // namespace

Encoder::Encoder(const Schema &schema, const std::vector<StorageLayout> &layouts,
                 stream::Ring &ring, FileSink &sink, const EncoderConfig &cfg, EncoderStats &stats,
                 EncoderError &error)
    : ring_(ring),
      sink_(sink),
      cfg_(cfg),
      stats_(stats),
      error_(error),
      tsum_(schema),
      committer_(sink, *cfg.method, cfg.level, cfg.compress_workers, stats, error) {
  states_.reserve(layouts.size());
  for (const auto &L : layouts) states_.emplace_back(L);
  scratch_.resize(64 * 1024);
  next_checkpoint_ = cfg.checkpoint_interval_ps;  // the reference's first boundary
}

bool Encoder::failed(const std::exception &e) noexcept {
  try {
    if (const auto *err = dynamic_cast<const Error *>(&e))
      error_.set(err->code(), err->what());
    else if (dynamic_cast<const std::bad_alloc *>(&e))
      error_.set(USCOPE_ERR_NO_MEMORY, "out of memory in the encoder thread");
    else
      error_.set(USCOPE_ERR_INTERNAL, std::string("encoder thread: ") + e.what());
  } catch (...) {
    // No memory for the message: the status is published all the same.
    error_.status.store(USCOPE_ERR_NO_MEMORY, std::memory_order_release);
  }
  return true;  // the rest of the stream is discarded
}

void Encoder::append_scratch(const uint8_t *p, size_t n) {
  if (n == 0) return;  // p may be an empty vector's null data()
  if (scratch_len_ + n > scratch_.size()) scratch_.resize((scratch_len_ + n) * 2);
  std::memcpy(scratch_.data() + scratch_len_, p, n);
  scratch_len_ += n;
}

uint64_t Encoder::consume(uint64_t pos, uint64_t end) {
  const uint64_t cap = ring_.cap;
  // pos's offset in the ring, kept beside pos: the ring's size need not be a
  // power of two, and a division per record (three a cycle) was a fifth of
  // this loop's time.
  uint64_t idx = pos % cap;
  while (pos < end) {
    const uint8_t *p = ring_.buf + idx;
    const uint64_t before = pos;
    switch (p[0]) {
      case stream::kOp:
      case stream::kEvent: {
        // A run of items: scan sizes and compactness, then copy the run at once.
        const uint64_t lap_end = pos - idx + cap;
        const size_t n = stream::scan_items(p, (end < lap_end ? end : lap_end) - pos, cycle_compact_,
                                            cycle_items_);
        append_scratch(p, n);
        pos += n;
        break;
      }
      case stream::kBegin:
        start_cycle(wire::get_u64(p + 8));
        pos += stream::kBeginSize;
        break;
      case stream::kEnd:
        if (!in_cycle_) fail(USCOPE_ERR_INTERNAL, "record stream: END without BEGIN");
        end_cycle();
        in_cycle_ = false;
        pos += 1;
        break;
      case stream::kAbort:
        in_cycle_ = false;
        scratch_len_ = cycle_start_;  // the group's earlier cycles stay
        pos += 1;
        break;
      case stream::kCkptBegin:
        ckpt_sid_ = wire::get_u16(p + 2);
        ckpt_nvalid_ = wire::get_u32(p + 4);
        ckpt_expected_ = wire::get_u64(p + 8);
        ckpt_override_.clear();
        pos += stream::kCkptBeginSize;
        if (ckpt_expected_ == 0) apply_checkpoint_override();
        break;
      case stream::kCkptData: {
        const uint32_t n = wire::get_u32(p + 4);
        ckpt_override_.insert(ckpt_override_.end(), p + 8, p + 8 + n);
        pos += 8 + n;
        if (ckpt_override_.size() == ckpt_expected_) apply_checkpoint_override();
        break;
      }
      case stream::kFlush:  // uscope_writer_flush: cut the segment here
        if (seg_frames_ > 0 || group_open_) flush_segment();
        pos += 1;
        break;
      case stream::kPad:
        pos += cap - idx;
        break;
      default:
        fail(USCOPE_ERR_INTERNAL, "record stream: unknown tag 0x%02x", p[0]);
    }
    // A record never crosses the end of the ring (kPad fills the rest).
    idx += pos - before;
    if (idx >= cap) idx -= cap;
  }
  return pos;
}

void Encoder::start_cycle(uint64_t time) {
  cycle_time_ = time;
  in_cycle_ = true;
  // v0.1: a cycle at the time of the open group joins it; another time
  // closes the group first.
  if (!(group_open_ && cycle_time_ == group_time_)) {
    if (group_open_) emit_group();
    scratch_len_ = 0;
  }
  cycle_start_ = scratch_len_;
  cycle_items_ = 0;
  cycle_compact_ = true;
}

void Encoder::apply_checkpoint_override() {
  StorageState &st = states_[ckpt_sid_];
  const uint32_t mask = st.layout().mask_bytes;
  const uint8_t *d = ckpt_override_.data();
  if (!st.load_slots(mask ? d : nullptr, d + mask, ckpt_override_.size() - mask))
    fail(USCOPE_ERR_INTERNAL, "checkpoint override of storage %u has a bad size", ckpt_sid_);
}

void Encoder::apply_cycle() {
  // Validated by the producer; applied only once the cycle is complete, so an
  // aborted cycle never touches the state.
  const uint8_t *p = scratch_.data() + cycle_start_;
  const uint8_t *end = scratch_.data() + scratch_len_;
  while (p < end) {
    if (p[0] == wire::TAG_WIDE_OP) {
      const uint16_t sid = wire::get_u16(p + 2), slot = wire::get_u16(p + 4),
                     field = wire::get_u16(p + 6);
      const uint64_t v = wire::get_u64(p + 8);
      StorageState &st = states_[sid];
      switch (p[1]) {
        case wire::DA_SLOT_SET:
          st.set(slot, field, v);
          tsum_.on_set(sid, field);
          break;
        case wire::DA_SLOT_ADD:
          st.add(slot, field, v);
          tsum_.on_add(sid, v);
          break;
        case wire::DA_SLOT_CLEAR:
          st.clear(slot);
          break;
        case wire::DA_PROP_SET:
          st.prop_set(field, v);
          break;
      }
      p += wire::kWideOpSize;
    } else {
      p += wire::kEventItemHeaderSize + wire::get_u32(p + 4);
    }
  }
}

void Encoder::end_cycle() {
  if (checkpoint_pending_) {
    // §8.5 / COMPAT 9: the checkpoint holds the state at the start of the
    // segment, i.e. before this, its first cycle.
    checkpoint_.clear();
    encode_checkpoint(states_, checkpoint_);
    checkpoint_pending_ = false;
  }
  if (cfg_.format == FrameFormat::V01) {
    // docs/compat.md, "v0.1 frames": the reference reader sorts a segment's
    // items by time, ops before events, so the cycles of one time are
    // written together once the time moves on (emit_group).
    if (!group_open_) {
      group_open_ = true;
      group_time_ = cycle_time_;
      group_dt_ = cycle_time_ - last_frame_time_;
      group_items_ = 0;
      group_compact_ = true;
    }
    group_items_ += cycle_items_;
    group_compact_ = group_compact_ && cycle_compact_;
  } else {
    const CycleItems items{scratch_.data(), scratch_len_, cycle_items_, cycle_compact_};
    const uint32_t frames =
        encode_cycle(cfg_.format, cycle_time_ - last_frame_time_, items, deltas_);
    seg_frames_ += frames;
    if (cycle_items_) seg_active_ += frames;
    publish_frames(frames);
  }
  apply_cycle();
  tsum_.end_cycle(cycle_time_);
  last_frame_time_ = cycle_time_;
  seg_end_ = cycle_time_;  // COMPAT 10: inclusive time of the last frame
  // COMPAT 10: a segment ends with the cycle whose time reaches the next
  // checkpoint time, which then becomes that time plus the interval.
  if (cycle_time_ >= next_checkpoint_) {
    flush_segment();
    next_checkpoint_ = wire::add_saturating(cycle_time_, cfg_.checkpoint_interval_ps);
  } else if (deltas_.size() + (group_open_ ? scratch_len_ : 0) >= kMaxSegmentRaw) {
    flush_segment();
  }
}

void Encoder::emit_group() {
  const CycleItems items{scratch_.data(), scratch_len_, group_items_, group_compact_};
  const uint32_t frames = encode_cycle(FrameFormat::V01, group_dt_, items, deltas_);
  seg_frames_ += frames;
  if (group_items_) seg_active_ += frames;
  publish_frames(frames);
  group_open_ = false;
  scratch_len_ = 0;
  cycle_start_ = 0;
}

void Encoder::flush_segment() {
  // Only between cycles: a group open here is complete.
  if (group_open_) emit_group();
  if (deltas_.size() > UINT32_MAX - wire::kMaxLeb128)
    fail(USCOPE_ERR_LIMIT, "a single cycle produced %zu delta bytes; a segment holds at most 4 GiB",
         deltas_.size());
  if (committer_.submitted() == UINT32_MAX)
    fail(USCOPE_ERR_LIMIT, "the file already holds 2^32-1 segments (num_segments is a u32)");
  SealedSegment &seg = committer_.acquire();
  seg.time_start_ps = seg_start_;
  seg.time_end_ps = seg_end_;
  seg.num_frames = seg_frames_;
  seg.num_frames_active = seg_active_;
  // The buffers change hands: the slot's emptied ones (capacity kept) come
  // back for the next segment.
  seg.deltas.swap(deltas_);
  seg.checkpoint.swap(checkpoint_);
  committer_.submit(seg);

  deltas_.clear();
  seg_start_ = seg_end_;  // COMPAT 10: the next segment starts at that same time
  seg_frames_ = 0;
  seg_active_ = 0;
  checkpoint_pending_ = true;
}

void Encoder::flush_open_segment() {
  if (seg_frames_ > 0 || group_open_) flush_segment();
  committer_.finish();
}

}  // namespace uscope
