// Unit tests of src/format/wire.hpp: LEB128 (§8.6.1), little-endian field
// packing (§8.6.5), field sizes (§4.3) and alignment (§2.3).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "format/wire.hpp"

namespace w = uscope::wire;

namespace {

std::vector<uint8_t> leb(uint64_t v) {
  uint8_t buf[w::kMaxLeb128] = {};
  const size_t n = w::leb128_encode(v, buf);
  return std::vector<uint8_t>(buf, buf + n);
}

// Decode exactly `in`; returns the bytes consumed (0 = rejected).
size_t unleb(const std::vector<uint8_t> &in, uint64_t *out) {
  return w::leb128_decode(in.data(), in.size(), out);
}

}  // namespace

// §8.6.1 table: 0 and 1..127 take one byte, 128..16383 two, 16384+ three or more.
TEST(WireLeb128, EncodesBoundaryValuesToKnownBytes) {
  EXPECT_EQ(leb(0), (std::vector<uint8_t>{0x00}));
  EXPECT_EQ(leb(1), (std::vector<uint8_t>{0x01}));
  EXPECT_EQ(leb(127), (std::vector<uint8_t>{0x7F}));
  EXPECT_EQ(leb(128), (std::vector<uint8_t>{0x80, 0x01}));
  EXPECT_EQ(leb(200), (std::vector<uint8_t>{0xC8, 0x01}));  // a 5 GHz clock period
  EXPECT_EQ(leb(16383), (std::vector<uint8_t>{0xFF, 0x7F}));
  EXPECT_EQ(leb(16384), (std::vector<uint8_t>{0x80, 0x80, 0x01}));
  // 2^32 = bit 32 set: 32 = 4*7 + 4, so four 0x80 groups and then 1 << 4.
  EXPECT_EQ(leb(uint64_t{1} << 32), (std::vector<uint8_t>{0x80, 0x80, 0x80, 0x80, 0x10}));
  // UINT64_MAX needs ten bytes; the tenth carries only bit 63.
  EXPECT_EQ(leb(UINT64_MAX), (std::vector<uint8_t>{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                   0xFF, 0xFF, 0x01}));
}

TEST(WireLeb128, DecodeRoundTripsAndReportsLength) {
  const uint64_t values[] = {0,     1,     127,          128,          16383,
                             16384, 65535, 65536,        uint64_t{1} << 32,
                             (uint64_t{1} << 63) - 1,    uint64_t{1} << 63, UINT64_MAX};
  for (uint64_t v : values) {
    const auto bytes = leb(v);
    uint64_t out = 0xDEADBEEF;
    EXPECT_EQ(unleb(bytes, &out), bytes.size()) << v;
    EXPECT_EQ(out, v);
    // Trailing bytes after the value are not consumed (frames follow the delta).
    auto longer = bytes;
    longer.push_back(0xAA);
    longer.push_back(0x55);
    out = 0;
    EXPECT_EQ(unleb(longer, &out), bytes.size()) << v;
    EXPECT_EQ(out, v);
  }
}

TEST(WireLeb128, EveryTruncationIsRejected) {
  for (uint64_t v : {uint64_t{128}, uint64_t{16384}, uint64_t{1} << 32, UINT64_MAX}) {
    const auto bytes = leb(v);
    for (size_t n = 0; n < bytes.size(); ++n) {
      uint64_t out = 42;
      EXPECT_EQ(w::leb128_decode(bytes.data(), n, &out), 0u) << v << " cut to " << n;
      EXPECT_EQ(out, 42u) << "out must be left alone on failure";
    }
  }
}

TEST(WireLeb128, OverlongInputsAreRejected) {
  uint64_t out = 7;
  // Eleven continuation bytes: more than the 10 a u64 can ever need.
  std::vector<uint8_t> eleven(11, 0x80);
  eleven.back() = 0x00;
  EXPECT_EQ(unleb(eleven, &out), 0u);
  // Ten bytes whose tenth still has the continuation bit.
  std::vector<uint8_t> ten_cont(10, 0xFF);
  ten_cont.push_back(0x01);
  EXPECT_EQ(unleb(ten_cont, &out), 0u);
  // A tenth byte of 2 would be bit 64: does not fit a u64.
  std::vector<uint8_t> bit64(9, 0x80);
  bit64.push_back(0x02);
  EXPECT_EQ(unleb(bit64, &out), 0u);
  // UINT64_MAX with its tenth byte carrying extra bits (0x03 = bits 63 and 64).
  std::vector<uint8_t> max_plus(9, 0xFF);
  max_plus.push_back(0x03);
  EXPECT_EQ(unleb(max_plus, &out), 0u);
  EXPECT_EQ(out, 7u);
  // A huge buffer of continuation bytes is still rejected after 10 bytes.
  std::vector<uint8_t> many(1000, 0x80);
  EXPECT_EQ(unleb(many, &out), 0u);
}

TEST(WireLeb128, PaddedEncodingWithinTenBytesIsAccepted) {
  // LEB128 (DWARF) allows redundant 0x80 groups; a reader must accept them
  // as long as the value fits 64 bits.
  uint64_t out = 99;
  EXPECT_EQ(unleb({0x80, 0x00}, &out), 2u);
  EXPECT_EQ(out, 0u);
  EXPECT_EQ(unleb({0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, &out), 10u);
  EXPECT_EQ(out, 1u);
}

// §8.6.5: fields are little-endian, of 1, 2, 4 or 8 bytes, no padding.
TEST(WireField, PutWritesOnlyItsLowBytesLittleEndian) {
  const uint64_t v = 0x1122334455667788ull;
  for (unsigned size : {1u, 2u, 4u, 8u}) {
    std::vector<uint8_t> buf(10, 0xEE);
    w::put_field(buf.data() + 1, size, v);
    EXPECT_EQ(buf[0], 0xEE) << size;
    for (unsigned i = 0; i < size; ++i)
      EXPECT_EQ(buf[1 + i], static_cast<uint8_t>(v >> (8 * i))) << size << " byte " << i;
    for (unsigned i = 1 + size; i < buf.size(); ++i)
      EXPECT_EQ(buf[i], 0xEE) << "overrun, size " << size;
  }
}

TEST(WireField, GetZeroExtendsAndMasksToWidth) {
  const uint8_t b[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0xF1};
  EXPECT_EQ(w::get_field(b, 1), 0x88u);
  EXPECT_EQ(w::get_field(b, 2), 0x7788u);
  EXPECT_EQ(w::get_field(b, 4), 0x55667788u);
  EXPECT_EQ(w::get_field(b, 8), 0xF122334455667788ull);
  // A value wider than the field is truncated on put: the wrap rule of COMPAT 13.
  uint8_t f[8] = {};
  w::put_field(f, 2, 0x12345);
  EXPECT_EQ(w::get_field(f, 2), 0x2345u);
  // Sign-extended negatives travel as u64 (COMPAT 13); narrowing keeps the two's complement bits.
  w::put_field(f, 1, static_cast<uint64_t>(int64_t{-2}));
  EXPECT_EQ(w::get_field(f, 1), 0xFEu);
}

TEST(WireField, FixedWidthHelpersAreLittleEndian) {
  uint8_t b[8];
  w::put_u16(b, 0xA1B2);
  EXPECT_EQ(b[0], 0xB2);
  EXPECT_EQ(b[1], 0xA1);
  w::put_u32(b, 0x01020304);
  EXPECT_EQ((std::vector<uint8_t>(b, b + 4)), (std::vector<uint8_t>{4, 3, 2, 1}));
  w::put_u64(b, 0x0102030405060708ull);
  EXPECT_EQ((std::vector<uint8_t>(b, b + 8)), (std::vector<uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(w::get_u64(b), 0x0102030405060708ull);
  EXPECT_EQ(w::get_u32(b), 0x05060708u);
  EXPECT_EQ(w::get_u16(b), 0x0708u);
}

// §4.3 size table.
TEST(WireFieldType, SizesMatchSpecTable) {
  EXPECT_EQ(w::field_type_size(w::FT_U8), 1u);
  EXPECT_EQ(w::field_type_size(w::FT_I8), 1u);
  EXPECT_EQ(w::field_type_size(w::FT_BOOL), 1u);
  EXPECT_EQ(w::field_type_size(w::FT_ENUM), 1u);
  EXPECT_EQ(w::field_type_size(w::FT_U16), 2u);
  EXPECT_EQ(w::field_type_size(w::FT_I16), 2u);
  EXPECT_EQ(w::field_type_size(w::FT_U32), 4u);
  EXPECT_EQ(w::field_type_size(w::FT_I32), 4u);
  EXPECT_EQ(w::field_type_size(w::FT_STRING_REF), 4u);
  EXPECT_EQ(w::field_type_size(w::FT_U64), 8u);
  EXPECT_EQ(w::field_type_size(w::FT_I64), 8u);
  // Unknown types have no size, so decoders can reject them.
  EXPECT_EQ(w::field_type_size(0x00), 0u);
  EXPECT_EQ(w::field_type_size(0x0C), 0u);
  EXPECT_EQ(w::field_type_size(0xFF), 0u);
  EXPECT_TRUE(w::field_type_signed(w::FT_I8));
  EXPECT_TRUE(w::field_type_signed(w::FT_I64));
  EXPECT_FALSE(w::field_type_signed(w::FT_U64));
  EXPECT_FALSE(w::field_type_signed(w::FT_BOOL));
}

TEST(WireAlign, Align8) {
  EXPECT_EQ(w::align8(0), 0u);
  EXPECT_EQ(w::align8(1), 8u);
  EXPECT_EQ(w::align8(7), 8u);
  EXPECT_EQ(w::align8(8), 8u);
  EXPECT_EQ(w::align8(9), 16u);
  EXPECT_EQ(w::align8(87), 88u);  // the 87-byte schema chunk of 11_empty.uscope
}

// §2, §8.1 and COMPAT 1: the layout sizes every codec builds on.
TEST(WireConstants, StructureSizesMatchSpec) {
  EXPECT_EQ(w::kFileHeaderSize, 48u);
  EXPECT_EQ(w::kSegmentHeaderSize, 56u);
  EXPECT_EQ(w::kSectionEntrySize, 24u);
  EXPECT_EQ(w::kSchemaHeaderSize, 12u);
  EXPECT_EQ(w::kStorageDefSize, 16u);
  EXPECT_EQ(w::kWideOpSize, 16u);
  EXPECT_EQ(w::kCompactOpV2Size, 9u);
  EXPECT_EQ(w::kCompactOpV1Size, 8u);
  EXPECT_EQ(w::kMipmapEntrySize, 24u);
  EXPECT_EQ(w::F_INTERLEAVED_DELTAS, 0x80u);
  EXPECT_EQ(w::F_COMPACT_DELTAS, 0x40u);
}
