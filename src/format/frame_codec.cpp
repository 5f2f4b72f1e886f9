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

// One v0.1 frame: ops first (compact or wide), then event records.
size_t encode_v01(uint64_t dt, const uint8_t *p, uint32_t count, bool compact,
                  std::vector<uint8_t> &out, size_t input_bytes) {
  const size_t start = out.size();
  out.resize(start + wire::kMaxLeb128 + wire::kV01FrameFixedSize + input_bytes);
  uint8_t *o = out.data() + start;
  o += wire::leb128_encode(dt, o);
  uint8_t *hdr = o;
  o += wire::kV01FrameFixedSize;
  uint16_t ops = 0, events = 0;
  const uint8_t *q = p;
  for (uint32_t i = 0; i < count; ++i) {
    if (q[0] == wire::TAG_WIDE_OP) {
      ++ops;
      if (compact) {  // §8.6.3, 8 bytes, no tag
        o[0] = q[1];
        o[1] = q[2];
        std::memcpy(o + 2, q + 4, 4);
        std::memcpy(o + 6, q + 8, 2);
        o += wire::kCompactOpV1Size;
      } else {        // §8.6.2: action, reserved, sid, slot, field, value
        std::memcpy(o, q, wire::kWideOpSize);
        o[0] = q[1];
        o[1] = 0;
        o += wire::kWideOpSize;
      }
      q += wire::kWideOpSize;
    } else {
      ++events;
      q += item_size(q);
    }
  }
  q = p;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t sz = item_size(q);
    if (q[0] == wire::TAG_EVENT) {  // §8.6.4: id u16, reserved u16, size u32, payload
      wire::put_u16(o, wire::get_u16(q + 2));
      wire::put_u16(o + 2, 0);
      std::memcpy(o + 4, q + 4, sz - 4);
      o += sz;
    }
    q += sz;
  }
  hdr[0] = compact ? wire::kOpFormatCompact : wire::kOpFormatWide;
  hdr[1] = 0;
  wire::put_u16(hdr + 2, ops);
  wire::put_u16(hdr + 4, events);
  out.resize(static_cast<size_t>(o - out.data()));
  return static_cast<size_t>(q - p);
}

}  // namespace

uint32_t encode_cycle(FrameFormat fmt, uint64_t time_delta, const CycleItems &items,
                      std::vector<uint8_t> &out) {
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
    const size_t used = fmt == FrameFormat::V02
                            ? encode_v02(dt, p, count, items.compact_ok, out, chunk_bytes)
                            : encode_v01(dt, p, count, items.compact_ok, out, chunk_bytes);
    p += used;
    left -= used;
    remaining -= count;
    ++frames;
  } while (remaining > 0);
  return frames;
}

}  // namespace uscope

