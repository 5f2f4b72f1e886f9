// Cycle frames of the delta blob: the v0.2 interleaved form (§8.6.6, COMPAT
// 1) and the v0.1 form (§8.6.1-§8.6.4). One encoder and one decoder, shared
// by the writer, the reader and the tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

// The items of one cycle in call order, each in the wide v0.2 form: an op is
// a 16-byte TAG_WIDE_OP item, an event a TAG_EVENT item (8 bytes + payload).
// This is also the form in which the simulation thread hands items to the
// encoder thread, so no conversion happens in between.
struct CycleItems {
  const uint8_t *data = nullptr;
  size_t size = 0;
  uint32_t num_items = 0;
  bool compact_ok = true;  // every op has storage_id <= 255 and value <= 65535
};

// Raw wide-item helpers.
inline void put_wide_op(uint8_t *p, uint8_t action, uint16_t sid, uint16_t slot, uint16_t field,
                        uint64_t value) {
  // tag, action, storage_id, slot, field: one little-endian u64; then the value.
  wire::put_u64(p, uint64_t{wire::TAG_WIDE_OP} | uint64_t{action} << 8 | uint64_t{sid} << 16 |
                       uint64_t{slot} << 32 | uint64_t{field} << 48);
  wire::put_u64(p + 8, value);
}
inline bool op_fits_compact(uint16_t sid, uint64_t value) {
  return sid <= wire::kCompactMaxStorage && value <= wire::kCompactMaxValue;  // §8.6.3
}

enum class FrameFormat : uint8_t { V02 = 0, V01 = 1 };

// Append the frame(s) for one cycle to out and return how many were written.
// v0.2: call order; a cycle of more than 65,535 items (the u16 count of
// §8.6.6) becomes several frames, the later ones with time delta 0, so
// nothing is ever dropped. v0.1: the items may be those of several cycles at
// one time; they are written ops first, then events, each in call order (the
// order the reference reader yields: docs/compat.md), in as many frames as
// the u16 op and event counts of §8.6.1 need.
uint32_t encode_cycle(FrameFormat fmt, uint64_t time_delta, const CycleItems &items,
                      std::vector<uint8_t> &out);

struct DeltaOp {
  uint8_t action;
  uint16_t storage_id;
  uint16_t slot;
  uint16_t field;
  uint64_t value;
};

// What a visitor's frame(t) may return instead of void or bool: visit the
// frame's items, stop before them, or decode them without visiting any (a
// reader skipping a frame whose time went backwards).
enum class FrameStep : uint8_t { kVisit, kStop, kSkip };

namespace detail {
// v.frame(t), which may return bool (false: stop) or a FrameStep.
template <class Visitor>
inline FrameStep visit_frame(Visitor &v, uint64_t t) {
  using R = decltype(v.frame(t));
  if constexpr (std::is_same_v<R, FrameStep>) {
    return v.frame(t);
  } else if constexpr (std::is_same_v<R, bool>) {
    return v.frame(t) ? FrameStep::kVisit : FrameStep::kStop;
  } else {
    v.frame(t);
    return FrameStep::kVisit;
  }
}

// The items of a skipped frame go here: decoded (so that the next frame is
// found) and dropped.
struct DropItems {
  void op(uint64_t, const DeltaOp &) {}
  void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
};

// The items of one frame at p[*pos] (v0.2 interleaved when `interleaved`,
// else a v0.1 frame whose ops are compact when `compact_flag` and its
// op_format say so), visited with v; *pos advances past them.
template <class Visitor>
inline void decode_frame_items(const uint8_t *p, size_t n, size_t *pos_io, uint64_t t, bool interleaved,
                               bool compact_flag, Visitor &v);
}  // namespace detail

// Decode a delta blob. Calls, in stream order:
//   v.frame(time_ps)                                  once per frame
//   v.op(time_ps, const DeltaOp&)                     per op
//   v.event(time_ps, id, const uint8_t *payload, u32) per event
// interleaved selects v0.2 (§8.6.6); otherwise v0.1 frames, whose op_format
// is honoured only when compact_flag (F_COMPACT_DELTAS) is set. Throws
// Error(CORRUPT) on a malformed blob, without reading out of bounds.
// v.frame may return bool: false stops before that frame's items, and the
// offset of the frame is returned (a reader that wants the state at t stops
// at the first frame after t); or a FrameStep, whose kSkip decodes the
// frame's items without visiting them. Otherwise returns n.
template <class Visitor>
size_t decode_deltas(const uint8_t *p, size_t n, uint64_t time_start, bool interleaved,
                     bool compact_flag, Visitor &&v) {
  size_t pos = 0;
  uint64_t t = time_start;
  detail::DropItems drop;
  while (pos < n) {
    const size_t frame_at = pos;
    uint64_t dt;
    const size_t k = wire::leb128_decode(p + pos, n - pos, &dt);
    if (!k) fail(USCOPE_ERR_CORRUPT, "delta blob: bad LEB128 time delta at offset %zu", pos);
    pos += k;
    t += dt;
    const FrameStep step = detail::visit_frame(v, t);
    if (__builtin_expect(step == FrameStep::kVisit, 1)) {
      detail::decode_frame_items(p, n, &pos, t, interleaved, compact_flag, v);
    } else if (step == FrameStep::kStop) {
      return frame_at;
    } else {
      detail::decode_frame_items(p, n, &pos, t, interleaved, compact_flag, drop);
    }
  }
  return n;
}

template <class Visitor>
inline void detail::decode_frame_items(const uint8_t *p, size_t n, size_t *pos_io, uint64_t t, bool interleaved,
                                       bool compact_flag, Visitor &v) {
  size_t pos = *pos_io;
  auto need = [&](size_t k, const char *what) {
    if (__builtin_expect(k > n - pos, 0))
      fail(USCOPE_ERR_CORRUPT, "delta blob: %s at offset %zu runs past its end (%zu bytes)", what,
           pos, n);
  };
  if (interleaved) {
    need(2, "frame item count");
    const uint32_t items = wire::get_u16(p + pos);
    pos += 2;
    for (uint32_t i = 0; i < items; ++i) {
      const uint8_t *q = p + pos;
      // Wide ops first: the common item, checked with one comparison when
      // a whole one fits (which also covers an event's 8-byte header).
      if (__builtin_expect(n - pos >= wire::kWideOpSize, 1)) {
        if (q[0] == wire::TAG_WIDE_OP) {
          const uint64_t h = wire::get_u64(q);  // tag, action, sid, slot, field
          v.op(t, DeltaOp{static_cast<uint8_t>(h >> 8), static_cast<uint16_t>(h >> 16),
                          static_cast<uint16_t>(h >> 32), static_cast<uint16_t>(h >> 48),
                          wire::get_u64(q + 8)});
          pos += wire::kWideOpSize;
          continue;
        }
        if (q[0] == wire::TAG_EVENT) {
          const uint16_t id = wire::get_u16(q + 2);
          const uint32_t size = wire::get_u32(q + 4);
          pos += wire::kEventItemHeaderSize;
          need(size, "event payload");
          v.event(t, id, p + pos, size);
          pos += size;
          continue;
        }
      }
      need(1, "item tag");
      const uint8_t tag = q[0];
      if (tag == wire::TAG_WIDE_OP) {
        need(wire::kWideOpSize, "wide op");
        v.op(t, DeltaOp{q[1], wire::get_u16(q + 2), wire::get_u16(q + 4), wire::get_u16(q + 6),
                        wire::get_u64(q + 8)});
        pos += wire::kWideOpSize;
      } else if (tag == wire::TAG_COMPACT_OP) {
        need(wire::kCompactOpV2Size, "compact op");
        v.op(t, DeltaOp{q[1], q[2], wire::get_u16(q + 3), wire::get_u16(q + 5),
                        wire::get_u16(q + 7)});
        pos += wire::kCompactOpV2Size;
      } else if (tag == wire::TAG_EVENT) {
        need(wire::kEventItemHeaderSize, "event header");
        const uint16_t id = wire::get_u16(p + pos + 2);
        const uint32_t size = wire::get_u32(p + pos + 4);
        pos += wire::kEventItemHeaderSize;
        need(size, "event payload");
        v.event(t, id, p + pos, size);
        pos += size;
      } else {
        fail(USCOPE_ERR_CORRUPT, "delta blob: unknown item tag 0x%02x at offset %zu", tag, pos);
      }
    }
  } else {
    need(wire::kV01FrameFixedSize, "v0.1 frame header");
    const uint8_t op_format = p[pos];
    const uint16_t num_ops = wire::get_u16(p + pos + 2);
    const uint16_t num_events = wire::get_u16(p + pos + 4);
    pos += wire::kV01FrameFixedSize;
    const bool compact = compact_flag && op_format == wire::kOpFormatCompact;
    for (uint32_t i = 0; i < num_ops; ++i) {
      const uint8_t *q = p + pos;
      if (compact) {  // §8.6.3 delta_op_compact_t
        need(wire::kCompactOpV1Size, "compact op");
        v.op(t, DeltaOp{q[0], q[1], wire::get_u16(q + 2), wire::get_u16(q + 4),
                        wire::get_u16(q + 6)});
        pos += wire::kCompactOpV1Size;
      } else {        // §8.6.2 delta_op_t
        need(wire::kWideOpSize, "wide op");
        v.op(t, DeltaOp{q[0], wire::get_u16(q + 2), wire::get_u16(q + 4), wire::get_u16(q + 6),
                        wire::get_u64(q + 8)});
        pos += wire::kWideOpSize;
      }
    }
    for (uint32_t i = 0; i < num_events; ++i) {  // §8.6.4 event_record_t
      need(8, "event record");
      const uint16_t id = wire::get_u16(p + pos);
      const uint32_t size = wire::get_u32(p + pos + 4);
      pos += 8;
      need(size, "event payload");
      v.event(t, id, p + pos, size);
      pos += size;
    }
  }
  *pos_io = pos;
}

}  // namespace uscope
