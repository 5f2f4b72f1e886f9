// Wire-format constants and primitive codecs of the µScope format.
//
// Every constant names the section of ../shared/specs/uscope-spec.md (§) or
// the point of ../shared/specs/COMPAT.md that defines it. This header is the
// only place they are spelled out; the writer, the reader and the tools all
// include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uscope::wire {

// §2: file header.
inline constexpr uint8_t kFileMagic[4] = {0x75, 0x53, 0x43, 0x50};  // "uSCP"
inline constexpr size_t kFileHeaderSize = 48;
// COMPAT 4: the reference writes 0.3 and its reader checks no version.
inline constexpr uint16_t kVersionMajor = 0;
inline constexpr uint16_t kVersionMinor = 3;
// §2: byte offsets of the header fields that are rewritten in place.
inline constexpr size_t kHdrOffFlags = 8;
inline constexpr size_t kHdrOffTotalTime = 16;
inline constexpr size_t kHdrOffNumSegments = 24;
inline constexpr size_t kHdrOffPreambleEnd = 28;
inline constexpr size_t kHdrOffSectionTable = 32;
inline constexpr size_t kHdrOffTailOffset = 40;

// §2.1: header flags.
inline constexpr uint64_t F_COMPLETE = 1ull << 0;
inline constexpr uint64_t F_COMPRESSED = 1ull << 1;
inline constexpr uint64_t F_HAS_STRINGS = 1ull << 2;
inline constexpr unsigned kCompMethodShift = 3;  // bits 3-5
inline constexpr uint64_t kCompMethodMask = 7ull << kCompMethodShift;
inline constexpr uint64_t F_COMPACT_DELTAS = 1ull << 6;
inline constexpr uint64_t F_INTERLEAVED_DELTAS = 1ull << 7;
inline constexpr uint64_t kKnownFlags = 0xFF;  // bits 8-63 reserved, must be zero
// §2.1 F_COMP_METHOD values: the wire ids of the compression table
// (compress.cpp), the one place that lists the methods.

// §2.3: preamble chunks.
inline constexpr size_t kChunkHeaderSize = 8;
inline constexpr uint16_t CHUNK_END = 0x0000;
inline constexpr uint16_t CHUNK_DUT_DESC = 0x0001;
inline constexpr uint16_t CHUNK_SCHEMA = 0x0002;
inline constexpr uint16_t CHUNK_TRACE_CONFIG = 0x0003;

// §4.1 .. §4.9: schema record sizes.
inline constexpr size_t kSchemaHeaderSize = 12;
inline constexpr size_t kClockDefSize = 8;
inline constexpr size_t kScopeDefSize = 12;
inline constexpr size_t kEnumDefSize = 4;
inline constexpr size_t kEnumValueSize = 4;
inline constexpr size_t kStorageDefSize = 16;  // v0.3 (§4.6)
inline constexpr size_t kFieldDefSize = 8;
inline constexpr size_t kEventDefSize = 8;
inline constexpr size_t kSummaryFieldDefSize = 8;
// §1.3: string pool offsets are u16; 0xFFFF is the "none" sentinel (§4.4).
inline constexpr uint16_t kNoString = 0xFFFF;
inline constexpr size_t kMaxStringPool = 0xFFFF;

// §4.2: field types.
enum FieldType : uint8_t {
  FT_U8 = 0x01, FT_U16 = 0x02, FT_U32 = 0x03, FT_U64 = 0x04,
  FT_I8 = 0x05, FT_I16 = 0x06, FT_I32 = 0x07, FT_I64 = 0x08,
  FT_BOOL = 0x09, FT_STRING_REF = 0x0A, FT_ENUM = 0x0B,
};
// §4.3: size of a field of each type; 0 for an unknown type.
constexpr unsigned field_type_size(uint8_t t) {
  switch (t) {
    case FT_U8: case FT_I8: case FT_BOOL: case FT_ENUM: return 1;
    case FT_U16: case FT_I16: return 2;
    case FT_U32: case FT_I32: case FT_STRING_REF: return 4;
    case FT_U64: case FT_I64: return 8;
    default: return 0;
  }
}
constexpr bool field_type_signed(uint8_t t) { return t >= FT_I8 && t <= FT_I64; }

// §4.6.1: storage flags.
inline constexpr uint16_t SF_SPARSE = 0x0001;
inline constexpr uint16_t SF_BUFFER = 0x0002;

// §5: section table.
inline constexpr size_t kSectionEntrySize = 24;
inline constexpr uint16_t SECTION_END = 0x0000;
inline constexpr uint16_t SECTION_SUMMARY = 0x0001;
inline constexpr uint16_t SECTION_STRINGS = 0x0002;
inline constexpr uint16_t SECTION_SEGMENTS = 0x0003;
inline constexpr uint16_t SECTION_COUNTER_SUMMARY = 0x0010;

// §6.1: trace summary.
inline constexpr uint8_t kTsumMagic[4] = {0x54, 0x53, 0x55, 0x4D};  // "TSUM"
inline constexpr uint8_t kCsumMagic[4] = {0x43, 0x53, 0x55, 0x4D};  // "CSUM" (§6.3)
// COMPAT 16: the reference C writer's bucket size (cycles) and fan-out.
inline constexpr uint32_t kTsumBaseInterval = 1024;
inline constexpr uint32_t kTsumFanOut = 4;
inline constexpr size_t kMipmapEntrySize = 24;  // §6.2

// §7: string table.
inline constexpr size_t kStringTableHeaderSize = 8;
inline constexpr size_t kStringIndexSize = 8;

// §8.1: segment header.
inline constexpr uint8_t kSegmentMagic[4] = {0x75, 0x53, 0x45, 0x47};  // "uSEG"
inline constexpr size_t kSegmentHeaderSize = 56;
// §8.3: segment table entry.
inline constexpr size_t kSegmentIndexEntrySize = 24;
// §8.5: checkpoint block header.
inline constexpr size_t kCheckpointBlockHeaderSize = 8;

// §8.6.2: delta actions.
enum DeltaAction : uint8_t {
  DA_SLOT_SET = 0x01, DA_SLOT_CLEAR = 0x02, DA_SLOT_ADD = 0x03, DA_PROP_SET = 0x04,
};
// §8.6.6 and COMPAT 1: v0.2 item tags and sizes.
inline constexpr uint8_t TAG_WIDE_OP = 0x01;
inline constexpr uint8_t TAG_COMPACT_OP = 0x02;
inline constexpr uint8_t TAG_EVENT = 0x03;
inline constexpr size_t kWideOpSize = 16;         // tag, action, sid u16, slot, field, value u64
inline constexpr size_t kCompactOpV2Size = 9;     // COMPAT 1: tag, action, sid_lo u8, slot, field, v16
inline constexpr size_t kEventItemHeaderSize = 8; // tag, reserved, id u16, size u32
// §8.6.1 / §8.6.3: v0.1 frame header and op sizes.
inline constexpr size_t kV01FrameFixedSize = 6;   // op_format u8, reserved u8, num_ops, num_events
inline constexpr size_t kCompactOpV1Size = 8;
inline constexpr uint8_t kOpFormatWide = 0;
inline constexpr uint8_t kOpFormatCompact = 1;
// §8.6.3: the compact form holds storage ids <= 255 and values <= 65535.
inline constexpr uint16_t kCompactMaxStorage = 0xFF;
inline constexpr uint64_t kCompactMaxValue = 0xFFFF;
// The item count of a v0.2 frame is a u16 (§8.6.6).
inline constexpr uint32_t kMaxItemsPerFrame = 0xFFFF;
// A v0.1 frame counts its ops and its events in two u16s (§8.6.1).
inline constexpr uint32_t kMaxV01OpsPerFrame = 0xFFFF;
inline constexpr uint32_t kMaxV01EventsPerFrame = 0xFFFF;

// COMPAT 2: compressed blobs carry a 4-byte little-endian uncompressed size.
inline constexpr size_t kBlobSizePrefix = 4;

// LEB128 (§8.6.1): at most 10 bytes for a u64.
inline constexpr size_t kMaxLeb128 = 10;

// ── Little-endian primitives. memcpy keeps them alignment-safe; the
// compiler turns them into single moves on little-endian hosts. ──
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "libuscope's codecs assume a little-endian host");

inline void put_u8(uint8_t *p, uint8_t v) { *p = v; }
inline void put_u16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, 2); }
inline void put_u32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void put_u64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint16_t get_u16(const uint8_t *p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline uint32_t get_u32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t get_u64(const uint8_t *p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

// Write the low `size` bytes of v (size 1, 2, 4 or 8) little-endian.
inline void put_field(uint8_t *p, unsigned size, uint64_t v) {
  switch (size) {
    case 1: p[0] = static_cast<uint8_t>(v); break;
    case 2: put_u16(p, static_cast<uint16_t>(v)); break;
    case 4: put_u32(p, static_cast<uint32_t>(v)); break;
    default: put_u64(p, v); break;
  }
}
// Read a field of `size` bytes, zero-extended.
inline uint64_t get_field(const uint8_t *p, unsigned size) {
  switch (size) {
    case 1: return p[0];
    case 2: return get_u16(p);
    case 4: return get_u32(p);
    default: return get_u64(p);
  }
}

// Unsigned LEB128 encode; returns the number of bytes written (1..10).
inline size_t leb128_encode(uint64_t v, uint8_t *out) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

// Unsigned LEB128 decode of at most `avail` bytes. Returns the bytes consumed,
// or 0 when the input is truncated or does not fit 64 bits.
inline size_t leb128_decode(const uint8_t *in, size_t avail, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < avail && i < kMaxLeb128; ++i) {
    const uint8_t b = in[i];
    if (i == 9 && b > 1) return 0;  // the 10th byte may carry only bit 63
    v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

constexpr uint64_t align8(uint64_t v) { return (v + 7) & ~uint64_t{7}; }

// a + b, or UINT64_MAX when that overflows (times near 2^64 ps must not wrap
// the next checkpoint time back to the past).
constexpr uint64_t add_saturating(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace uscope::wire
