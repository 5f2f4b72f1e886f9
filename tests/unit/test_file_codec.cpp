// Unit tests of src/format/file_codec: file header (§2), preamble chunks
// (§2.3), trace config (§2.4), section table (§5), string table (§7),
// segment header (§8.1) and segment table (§8.3).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "format/file_codec.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;
const std::string &kCorpus = uscope::test::kCorpusDir;

std::vector<uint8_t> slice(const std::vector<uint8_t> &v, size_t off, size_t n) {
  EXPECT_LE(off + n, v.size());
  if (off + n > v.size()) return {};
  return std::vector<uint8_t>(v.begin() + off, v.begin() + off + n);
}

}  // namespace

// ── File header (§2) ──

TEST(FileHeader, Encodes48BytesHandComputed) {
  FileHeader h;
  h.version_major = 0;
  h.version_minor = 3;
  h.flags = 0x87;
  h.total_time_ps = 0x0102030405060708ull;
  h.num_segments = 0x0A0B0C0D;
  h.preamble_end = 0xB8;
  h.section_table_offset = 0x1122334455667788ull;
  h.tail_offset = 0xE0;
  uint8_t out[48];
  std::memset(out, 0xCC, sizeof out);
  encode_file_header(h, out);
  const std::vector<uint8_t> expect = {
      0x75, 0x53, 0x43, 0x50,                          // "uSCP"
      0x00, 0x00, 0x03, 0x00,                          // version 0.3
      0x87, 0, 0, 0, 0, 0, 0, 0,                       // flags
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // total_time_ps
      0x0D, 0x0C, 0x0B, 0x0A,                          // num_segments
      0xB8, 0x00, 0x00, 0x00,                          // preamble_end
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // section_table_offset
      0xE0, 0, 0, 0, 0, 0, 0, 0};                      // tail_offset
  EXPECT_EQ(std::vector<uint8_t>(out, out + 48), expect);
  const FileHeader d = decode_file_header(out, 48);
  EXPECT_EQ(d.version_major, 0u);
  EXPECT_EQ(d.version_minor, 3u);
  EXPECT_EQ(d.flags, 0x87u);
  EXPECT_EQ(d.total_time_ps, h.total_time_ps);
  EXPECT_EQ(d.num_segments, h.num_segments);
  EXPECT_EQ(d.preamble_end, h.preamble_end);
  EXPECT_EQ(d.section_table_offset, h.section_table_offset);
  EXPECT_EQ(d.tail_offset, h.tail_offset);
}

TEST(FileHeader, InPlaceOffsetsMatchTheLayout) {
  // §2.2: tail_offset and num_segments are rewritten in place; they must be
  // naturally aligned for the single-write commit.
  EXPECT_EQ(w::kHdrOffTailOffset % 8, 0u);
  EXPECT_EQ(w::kHdrOffNumSegments % 4, 0u);
  FileHeader h;
  h.tail_offset = 0xABCDEF;
  h.num_segments = 77;
  uint8_t out[48];
  encode_file_header(h, out);
  EXPECT_EQ(w::get_u64(out + w::kHdrOffTailOffset), 0xABCDEFu);
  EXPECT_EQ(w::get_u32(out + w::kHdrOffNumSegments), 77u);
}

TEST(FileHeader, DecodeRejectsShortAndBadMagic) {
  uint8_t buf[48] = {};
  encode_file_header(FileHeader{}, buf);
  EXPECT_EQ(error_code([&] { decode_file_header(buf, 47); }), USCOPE_ERR_TRUNCATED);
  EXPECT_EQ(error_code([&] { decode_file_header(buf, 0); }), USCOPE_ERR_TRUNCATED);
  buf[3] = 'Q';
  EXPECT_EQ(error_code([&] { decode_file_header(buf, 48); }), USCOPE_ERR_BAD_MAGIC);
}

TEST(FileHeader, ReferenceHeaderRoundTrips) {
  // 11_empty.uscope: flags 0x83, preamble_end 184, section table at 224 (11_empty.json).
  const auto file = test::read_bytes(kCorpus + "11_empty.uscope");
  const FileHeader h = decode_file_header(file.data(), file.size());
  EXPECT_EQ(h.version_major, 0u);
  EXPECT_EQ(h.version_minor, 3u);
  EXPECT_EQ(h.flags, 0x83u);
  EXPECT_EQ(h.num_segments, 0u);
  EXPECT_EQ(h.preamble_end, 184u);
  EXPECT_EQ(h.section_table_offset, 224u);
  EXPECT_EQ(h.tail_offset, 0u);
  uint8_t again[48];
  encode_file_header(h, again);
  EXPECT_EQ(std::vector<uint8_t>(again, again + 48), slice(file, 0, 48));
}

// ── Preamble chunks (§2.3) ──

TEST(Chunks, PayloadIsPaddedTo8WithZeros) {
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 87u}) {
    std::vector<uint8_t> payload(n, 0xAB);
    std::vector<uint8_t> out = {0x55};  // appends after existing bytes
    append_chunk(out, 0x1234, payload);
    ASSERT_EQ(out.size(), 1 + 8 + w::align8(n)) << n;
    EXPECT_EQ(out[0], 0x55);
    EXPECT_EQ(w::get_u16(out.data() + 1), 0x1234u);  // type
    EXPECT_EQ(w::get_u16(out.data() + 3), 0u);       // flags must be 0
    EXPECT_EQ(w::get_u32(out.data() + 5), n);        // size excludes the padding
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[9 + i], 0xAB);
    for (size_t i = 9 + n; i < out.size(); ++i) EXPECT_EQ(out[i], 0x00) << "padding of " << n;
  }
}

TEST(Chunks, TraceConfigIsOneU64) {
  EXPECT_EQ(encode_trace_config(0x0102030405060708ull),
            (std::vector<uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
}

namespace {
// A file prefix: 48-byte header (contents irrelevant to walk_chunks) + chunks.
std::vector<uint8_t> preamble(const std::vector<std::pair<uint16_t, size_t>> &chunks) {
  std::vector<uint8_t> f(48, 0);
  for (const auto &c : chunks) append_chunk(f, c.first, std::vector<uint8_t>(c.second, 0x11));
  return f;
}
}  // namespace

TEST(Chunks, WalkFindsChunksIncludingUnknownOnesAndEnd) {
  const auto f = preamble({{w::CHUNK_DUT_DESC, 8}, {0x7777, 3}, {w::CHUNK_SCHEMA, 87},
                           {w::CHUNK_TRACE_CONFIG, 8}, {w::CHUNK_END, 0}});
  const auto cs = walk_chunks(f.data(), f.size(), static_cast<uint32_t>(f.size()));
  ASSERT_EQ(cs.size(), 5u);
  const uint16_t types[] = {w::CHUNK_DUT_DESC, 0x7777, w::CHUNK_SCHEMA, w::CHUNK_TRACE_CONFIG,
                            w::CHUNK_END};
  // Headers at 48, 64, 80 (3 -> 8), 176 (87 -> 88), 192; payload at header + 8.
  const uint64_t payload_at[] = {56, 72, 88, 184, 200};
  const uint32_t sizes[] = {8, 3, 87, 8, 0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(cs[i].type, types[i]);
    EXPECT_EQ(cs[i].offset, payload_at[i]);
    EXPECT_EQ(cs[i].size, sizes[i]);
    EXPECT_EQ(cs[i].flags, 0u);
  }
  // Nothing after CHUNK_END is read: garbage there is fine.
  auto g = f;
  g.insert(g.end(), 16, 0xFF);
  EXPECT_EQ(walk_chunks(g.data(), g.size(), static_cast<uint32_t>(g.size())).size(), 5u);
}

TEST(Chunks, WalkErrors) {
  // No CHUNK_END before preamble_end.
  auto f = preamble({{w::CHUNK_DUT_DESC, 8}, {w::CHUNK_SCHEMA, 8}});
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), static_cast<uint32_t>(f.size())); }),
            USCOPE_ERR_TRUNCATED);
  // A chunk whose payload runs past preamble_end.
  f = preamble({{w::CHUNK_DUT_DESC, 8}, {w::CHUNK_END, 0}});
  w::put_u32(f.data() + 48 + 4, 4096);
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), static_cast<uint32_t>(f.size())); }),
            USCOPE_ERR_TRUNCATED);
  // A size of 0xFFFFFFFF must not wrap the bounds check.
  w::put_u32(f.data() + 48 + 4, 0xFFFFFFFFu);
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), static_cast<uint32_t>(f.size())); }),
            USCOPE_ERR_TRUNCATED);
  // preamble_end inside the END chunk header.
  f = preamble({{w::CHUNK_DUT_DESC, 8}, {w::CHUNK_END, 0}});
  const auto short_end = static_cast<uint32_t>(f.size() - 1);
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), short_end); }), USCOPE_ERR_TRUNCATED);
  // preamble_end past the buffer: the walk is bounded by the buffer.
  f = preamble({{w::CHUNK_DUT_DESC, 8}});
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), 1u << 30); }), USCOPE_ERR_TRUNCATED);
  // A file shorter than its header / preamble_end before offset 48.
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), 20, 20); }), USCOPE_ERR_TRUNCATED);
  EXPECT_EQ(error_code([&] { walk_chunks(f.data(), f.size(), 8); }), USCOPE_ERR_TRUNCATED);
}

TEST(Chunks, WalkReferenceFile) {
  // 01_tiny.json: chunk headers at 48, 64, 184, 200; sizes 8, 108, 8, 0; preamble_end 208.
  const auto file = test::read_bytes(kCorpus + "01_tiny.uscope");
  const FileHeader h = decode_file_header(file.data(), file.size());
  ASSERT_EQ(h.preamble_end, 208u);
  const auto cs = walk_chunks(file.data(), file.size(), h.preamble_end);
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[0].type, w::CHUNK_DUT_DESC);
  EXPECT_EQ(cs[0].offset, 56u);
  EXPECT_EQ(cs[1].type, w::CHUNK_SCHEMA);
  EXPECT_EQ(cs[1].offset, 72u);
  EXPECT_EQ(cs[1].size, 108u);
  EXPECT_EQ(cs[2].type, w::CHUNK_TRACE_CONFIG);
  EXPECT_EQ(cs[2].offset, 192u);
  EXPECT_EQ(cs[3].type, w::CHUNK_END);
  EXPECT_EQ(cs[3].offset, 208u);
  // Re-encoding the chunks reproduces the preamble bytes, padding included.
  std::vector<uint8_t> again(file.begin(), file.begin() + 48);
  for (const auto &c : cs)
    append_chunk(again, c.type, slice(file, c.offset, c.size));
  EXPECT_EQ(again, slice(file, 0, 208));
}

// ── Segment header (§8.1) ──

TEST(SegmentHeader, Encodes56BytesHandComputed) {
  SegmentHeader h;
  h.flags = 0;
  h.time_start_ps = 1000;
  h.time_end_ps = 0x0000010000000000ull;
  h.prev_segment_offset = 0xD0;
  h.checkpoint_size = 24;
  h.deltas_compressed_size = 57;
  h.deltas_raw_size = 54;
  h.num_frames = 3;
  h.num_frames_active = 2;
  h.reserved = 0;
  uint8_t out[56];
  encode_segment_header(h, out);
  const std::vector<uint8_t> expect = {
      0x75, 0x53, 0x45, 0x47,                    // "uSEG"
      0, 0, 0, 0,                                // flags
      0xE8, 0x03, 0, 0, 0, 0, 0, 0,              // time_start_ps
      0, 0, 0, 0, 0, 0x01, 0, 0,                 // time_end_ps = 2^40
      0xD0, 0, 0, 0, 0, 0, 0, 0,                 // prev_segment_offset
      24, 0, 0, 0, 57, 0, 0, 0, 54, 0, 0, 0,     // checkpoint, compressed, raw sizes
      3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};       // frames, active, reserved
  EXPECT_EQ(std::vector<uint8_t>(out, out + 56), expect);
  const SegmentHeader d = decode_segment_header(out, 56);
  EXPECT_EQ(d.time_start_ps, 1000u);
  EXPECT_EQ(d.time_end_ps, h.time_end_ps);
  EXPECT_EQ(d.prev_segment_offset, 0xD0u);
  EXPECT_EQ(d.checkpoint_size, 24u);
  EXPECT_EQ(d.deltas_compressed_size, 57u);
  EXPECT_EQ(d.deltas_raw_size, 54u);
  EXPECT_EQ(d.num_frames, 3u);
  EXPECT_EQ(d.num_frames_active, 2u);
}

TEST(SegmentHeader, DecodeErrors) {
  uint8_t out[56];
  encode_segment_header(SegmentHeader{}, out);
  EXPECT_EQ(error_code([&] { decode_segment_header(out, 55); }), USCOPE_ERR_TRUNCATED);
  out[0] = 'x';
  EXPECT_EQ(error_code([&] { decode_segment_header(out, 56); }), USCOPE_ERR_CORRUPT);
}

TEST(SegmentHeader, ReferenceSegmentRoundTrips) {
  // 01_tiny.json segment 0 at offset 208: checkpoint 24, compressed 57, raw 54, 3 frames.
  const auto file = test::read_bytes(kCorpus + "01_tiny.uscope");
  const auto raw = slice(file, 208, 56);
  ASSERT_EQ(raw.size(), 56u);
  const SegmentHeader h = decode_segment_header(raw.data(), raw.size());
  EXPECT_EQ(h.time_start_ps, 0u);
  EXPECT_EQ(h.time_end_ps, 2000u);
  EXPECT_EQ(h.checkpoint_size, 24u);
  EXPECT_EQ(h.deltas_compressed_size, 57u);
  EXPECT_EQ(h.deltas_raw_size, 54u);
  EXPECT_EQ(h.num_frames, 3u);
  EXPECT_EQ(h.num_frames_active, 3u);
  uint8_t again[56];
  encode_segment_header(h, again);
  EXPECT_EQ(std::vector<uint8_t>(again, again + 56), raw);
}

// ── Segment table (§8.3) ──

TEST(SegmentTable, EntriesAre24BytesAndSizeMustBeAMultiple) {
  std::vector<uint8_t> out;
  append_segment_table(out, {{0xD0, 0, 1000}, {0x1000, 1000, 2000}});
  ASSERT_EQ(out.size(), 48u);
  EXPECT_EQ(w::get_u64(out.data()), 0xD0u);
  EXPECT_EQ(w::get_u64(out.data() + 16), 1000u);
  EXPECT_EQ(w::get_u64(out.data() + 24), 0x1000u);
  const auto t = decode_segment_table(out.data(), out.size());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].time_start_ps, 1000u);
  EXPECT_EQ(t[1].time_end_ps, 2000u);
  EXPECT_TRUE(decode_segment_table(out.data(), 0).empty());
  EXPECT_EQ(error_code([&] { decode_segment_table(out.data(), 47); }), USCOPE_ERR_CORRUPT);
}

// ── Section table (§5) ──

TEST(SectionTable, EndsWithSectionEndHandComputed) {
  std::vector<uint8_t> out;
  append_section_table(out, {{w::SECTION_STRINGS, 0, 0x100, 43},
                             {w::SECTION_COUNTER_SUMMARY, 0, 0x200, 36}});
  const std::vector<uint8_t> expect = {
      0x02, 0x00, 0x00, 0x00, 0, 0, 0, 0,  // type STRINGS, flags, reserved
      0x00, 0x01, 0, 0, 0, 0, 0, 0,        // offset
      43, 0, 0, 0, 0, 0, 0, 0,             // size
      0x10, 0x00, 0x00, 0x00, 0, 0, 0, 0,  // COUNTER_SUMMARY
      0x00, 0x02, 0, 0, 0, 0, 0, 0,
      36, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0,              // SECTION_END: all zero
      0, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(out, expect);
  const auto d = decode_section_table(out.data(), out.size());
  ASSERT_EQ(d.size(), 2u);  // END itself is not returned
  EXPECT_EQ(d[0].type, w::SECTION_STRINGS);
  EXPECT_EQ(d[1].offset, 0x200u);
  EXPECT_EQ(d[1].size, 36u);
  // An empty table is just the END entry.
  out.clear();
  append_section_table(out, {});
  EXPECT_EQ(out, std::vector<uint8_t>(24, 0));
}

TEST(SectionTable, DecodeStopsAtEndAndRejectsMissingEnd) {
  std::vector<uint8_t> out;
  append_section_table(out, {{w::SECTION_SEGMENTS, 0, 1, 2}});
  out.insert(out.end(), 24, 0xEE);  // bytes after END are not read
  EXPECT_EQ(decode_section_table(out.data(), out.size()).size(), 1u);
  for (size_t n = 0; n < 48; ++n)
    EXPECT_EQ(error_code([&] { decode_section_table(out.data(), n); }), USCOPE_ERR_TRUNCATED) << n;
}

TEST(SectionTable, ReferenceTableRoundTrips) {
  // 03_sparse_dense.json: STRINGS, SEGMENTS, COUNTER_SUMMARY, END (COMPAT 7 order).
  const auto file = test::read_bytes(kCorpus + "03_sparse_dense.uscope");
  const FileHeader h = decode_file_header(file.data(), file.size());
  ASSERT_EQ(h.section_table_offset % 8, 0u);  // COMPAT 6: the table itself is aligned
  const auto d = decode_section_table(file.data() + h.section_table_offset,
                                      file.size() - h.section_table_offset);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].type, w::SECTION_STRINGS);
  EXPECT_EQ(d[0].offset, 240799u);
  EXPECT_EQ(d[0].size, 83u);
  EXPECT_EQ(d[1].type, w::SECTION_SEGMENTS);
  EXPECT_EQ(d[2].type, w::SECTION_COUNTER_SUMMARY);
  std::vector<uint8_t> again;
  append_section_table(again, d);
  EXPECT_EQ(again, slice(file, h.section_table_offset, 4 * 24));
  // The segment table it points to decodes and re-encodes identically.
  const auto segs = decode_segment_table(file.data() + d[1].offset, d[1].size);
  EXPECT_EQ(segs.size(), d[1].size / 24);
  std::vector<uint8_t> seg_again;
  append_segment_table(seg_again, segs);
  EXPECT_EQ(seg_again, slice(file, d[1].offset, d[1].size));
}

// ── String table (§7) ──

TEST(StringTable, LayoutHandComputed) {
  std::vector<uint8_t> out;
  append_string_table(out, {"ab", "", "xyz"});
  const std::vector<uint8_t> expect = {
      3, 0, 0, 0, 0, 0, 0, 0,  // num_entries, reserved
      0, 0, 0, 0, 2, 0, 0, 0,  // "ab": offset 0, length 2
      3, 0, 0, 0, 0, 0, 0, 0,  // "": offset 3, length 0
      4, 0, 0, 0, 3, 0, 0, 0,  // "xyz": offset 4, length 3
      'a', 'b', 0, 0, 'x', 'y', 'z', 0};
  EXPECT_EQ(out, expect);
  EXPECT_EQ(decode_string_table(out.data(), out.size()),
            (std::vector<std::string>{"ab", "", "xyz"}));
  out.clear();
  append_string_table(out, {});
  EXPECT_EQ(out, std::vector<uint8_t>(8, 0));
  EXPECT_TRUE(decode_string_table(out.data(), out.size()).empty());
}

TEST(StringTable, DecodeRejectsBadTables) {
  std::vector<uint8_t> t;
  append_string_table(t, {"ab", "xyz"});
  // More entries claimed than the table holds.
  auto bad = t;
  w::put_u32(bad.data(), 0x10000000);
  EXPECT_EQ(error_code([&] { decode_string_table(bad.data(), bad.size()); }), USCOPE_ERR_TRUNCATED);
  // An entry reaching past the string data.
  bad = t;
  w::put_u32(bad.data() + 8 + 8 + 4, 4);  // "xyz" length 4 from offset 3: 7 bytes of 7 are fine
  EXPECT_NO_THROW(decode_string_table(bad.data(), bad.size()));
  w::put_u32(bad.data() + 8 + 8 + 4, 5);
  EXPECT_EQ(error_code([&] { decode_string_table(bad.data(), bad.size()); }), USCOPE_ERR_CORRUPT);
  bad = t;
  w::put_u32(bad.data() + 8 + 8, 0xFFFFFFFFu);  // offset near 2^32 must not wrap
  EXPECT_EQ(error_code([&] { decode_string_table(bad.data(), bad.size()); }), USCOPE_ERR_CORRUPT);
  for (size_t n = 0; n < 8 + 16; ++n)
    EXPECT_EQ(error_code([&] { decode_string_table(t.data(), n); }), USCOPE_ERR_TRUNCATED) << n;
}

TEST(StringTable, MatchesReferenceBytes) {
  // 03_sparse_dense.json: STRINGS section at 240799, 83 bytes =
  // 8 + 4 x 8 + "slot-string-A\0slot-string-B\0\0slot-string-D\0".
  const auto file = test::read_bytes(kCorpus + "03_sparse_dense.uscope");
  const std::vector<std::string> strings = {"slot-string-A", "slot-string-B", "",
                                            "slot-string-D"};
  std::vector<uint8_t> out;
  append_string_table(out, strings);
  ASSERT_EQ(out.size(), 83u);
  EXPECT_EQ(out, slice(file, 240799, 83));
  EXPECT_EQ(decode_string_table(out.data(), out.size()), strings);
}
