#include "format/frame_codec.hpp"

#include <cstring>

namespace uscope {

namespace {

size_t item_size(const uint8_t *p) {
  return p[0] == wire::TAG_WIDE_OP ? wire::kWideOpSize
                                   : wire::kEventItemHeaderSize + wire::get_u32(p + 4);
}

// One v0.2 frame of `count` items starting at p; returns the bytes of input used.
size_t encode_v02(uint64_t dt, const uint8_t *p, uint32_t count, bool compact,
                  std::vector<uint8_t> &out, size_t input_bytes) {
  if (!compact) {
    // Wide ops and events are already in their final form: one copy, no zero-fill.
    uint8_t hdr[wire::kMaxLeb128 + 2];
    size_t h = wire::leb128_encode(dt, hdr);
    wire::put_u16(hdr + h, static_cast<uint16_t>(count));
    h += 2;
    out.insert(out.end(), hdr, hdr + h);
    out.insert(out.end(), p, p + input_bytes);
    return input_bytes;
  }
  const size_t start = out.size();
  // Upper bound: LEB128 + count + items (a compact op is smaller than a wide one).
  out.resize(start + wire::kMaxLeb128 + 2 + input_bytes);
  uint8_t *o = out.data() + start;
  o += wire::leb128_encode(dt, o);
  wire::put_u16(o, static_cast<uint16_t>(count));
  o += 2;
  const uint8_t *q = p;
  for (uint32_t i = 0; i < count; ++i) {
    if (q[0] == wire::TAG_WIDE_OP) {
      if (compact) {  // COMPAT 1: 9-byte compact item
        o[0] = wire::TAG_COMPACT_OP;
        o[1] = q[1];
        o[2] = q[2];  // storage_id low byte
        std::memcpy(o + 3, q + 4, 4);  // slot, field
        std::memcpy(o + 7, q + 8, 2);  // value16
        o += wire::kCompactOpV2Size;
      } else {
        std::memcpy(o, q, wire::kWideOpSize);
        o += wire::kWideOpSize;
      }
      q += wire::kWideOpSize;
    } else {  // events are already in their final v0.2 form
      const size_t sz = wire::kEventItemHeaderSize + wire::get_u32(q + 4);
      std::memcpy(o, q, sz);
      o += sz;
      q += sz;
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return static_cast<size_t>(q - p);
}

// The v0.1 frames of one timestamp (docs/compat.md, "v0.1 frames"). A v0.1
// frame holds its ops, then its events (§8.6.1), and the reference reader
// (segment_replay) yields a segment's items sorted by time with ops before
// events at equal time, whatever frame they came in. So all the ops of the
// timestamp go first, in call order, then all its events, in call order: the
// stream order is then the order the reference reads back. When they do not
// fit the u16 counts of one frame, the frames that follow (time delta 0)
// continue the ops and then the events, never ops after events.
uint32_t encode_v01(uint64_t dt, const uint8_t *p, size_t bytes, uint32_t count, bool compact,
                    std::vector<uint8_t> &out) {
  uint32_t ops_left = 0;
  for (const uint8_t *q = p; q < p + bytes; q += item_size(q)) ops_left += q[0] == wire::TAG_WIDE_OP;
  uint32_t events_left = count - ops_left;
  const uint8_t *op = p, *ev = p;  // cursors: the next op, the next event
  uint32_t frames = 0;
  do {
    const uint32_t n_ops = ops_left < wire::kMaxV01OpsPerFrame ? ops_left : wire::kMaxV01OpsPerFrame;
    ops_left -= n_ops;
    uint32_t n_events = 0;
    if (ops_left == 0)
      n_events = events_left < wire::kMaxV01EventsPerFrame ? events_left : wire::kMaxV01EventsPerFrame;
    events_left -= n_events;
    // Upper bound: header + every item in wide form (a v0.1 item is never larger).
    const size_t start = out.size();
    out.resize(start + wire::kMaxLeb128 + wire::kV01FrameFixedSize + bytes);
    uint8_t *o = out.data() + start;
    o += wire::leb128_encode(frames == 0 ? dt : 0, o);
    o[0] = compact ? wire::kOpFormatCompact : wire::kOpFormatWide;
    o[1] = 0;
    wire::put_u16(o + 2, static_cast<uint16_t>(n_ops));
    wire::put_u16(o + 4, static_cast<uint16_t>(n_events));
    o += wire::kV01FrameFixedSize;
    for (uint32_t i = 0; i < n_ops; ++i) {
      while (op[0] != wire::TAG_WIDE_OP) op += item_size(op);
      if (compact) {  // §8.6.3, 8 bytes, no tag
        o[0] = op[1];
        o[1] = op[2];
        std::memcpy(o + 2, op + 4, 4);
        std::memcpy(o + 6, op + 8, 2);
        o += wire::kCompactOpV1Size;
      } else {        // §8.6.2: action, reserved, sid, slot, field, value
        std::memcpy(o, op, wire::kWideOpSize);
        o[0] = op[1];
        o[1] = 0;
        o += wire::kWideOpSize;
      }
      op += wire::kWideOpSize;
    }
    for (uint32_t i = 0; i < n_events; ++i) {
      while (ev[0] != wire::TAG_EVENT) ev += item_size(ev);
      const size_t sz = item_size(ev);  // §8.6.4: id u16, reserved u16, size u32, payload
      wire::put_u16(o, wire::get_u16(ev + 2));
      wire::put_u16(o + 2, 0);
      std::memcpy(o + 4, ev + 4, sz - 4);
      o += sz;
      ev += sz;
    }
    out.resize(static_cast<size_t>(o - out.data()));
    ++frames;
  } while (ops_left > 0 || events_left > 0);
  return frames;
}

}  // namespace

uint32_t encode_cycle(FrameFormat fmt, uint64_t time_delta, const CycleItems &items,
                      std::vector<uint8_t> &out) {
  if (fmt == FrameFormat::V01)
    return encode_v01(time_delta, items.data, items.size, items.num_items, items.compact_ok, out);
  const uint8_t *p = items.data;
  size_t left = items.size;
  uint32_t remaining = items.num_items;
  uint32_t frames = 0;
  do {
    const uint32_t count = remaining > wire::kMaxItemsPerFrame ? wire::kMaxItemsPerFrame : remaining;
    // Only a split cycle needs the exact input size of this chunk; otherwise it is `left`.
    size_t chunk_bytes = left;
    if (count != remaining) {
      chunk_bytes = 0;
      for (uint32_t i = 0; i < count; ++i) chunk_bytes += item_size(p + chunk_bytes);
    }
    const uint64_t dt = frames == 0 ? time_delta : 0;
    const size_t used = encode_v02(dt, p, count, items.compact_ok, out, chunk_bytes);
    p += used;
    left -= used;
    remaining -= count;
    ++frames;
  } while (remaining > 0);
  return frames;
}

}  // namespace uscope

