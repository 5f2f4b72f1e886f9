#include "format/file_codec.hpp"

#include <cstring>

#include "format/bytes.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

void encode_file_header(const FileHeader &h, uint8_t out[48]) {
  std::memcpy(out, wire::kFileMagic, 4);
  wire::put_u16(out + 4, h.version_major);
  wire::put_u16(out + 6, h.version_minor);
  wire::put_u64(out + wire::kHdrOffFlags, h.flags);
  wire::put_u64(out + wire::kHdrOffTotalTime, h.total_time_ps);
  wire::put_u32(out + wire::kHdrOffNumSegments, h.num_segments);
  wire::put_u32(out + wire::kHdrOffPreambleEnd, h.preamble_end);
  wire::put_u64(out + wire::kHdrOffSectionTable, h.section_table_offset);
  wire::put_u64(out + wire::kHdrOffTailOffset, h.tail_offset);
}

FileHeader decode_file_header(const uint8_t *data, size_t size) {
  if (size < wire::kFileHeaderSize)
    fail(USCOPE_ERR_TRUNCATED, "file header: %zu bytes, needs 48 (spec §2)", size);
  if (std::memcmp(data, wire::kFileMagic, 4) != 0)
    fail(USCOPE_ERR_BAD_MAGIC, "not a µScope file: magic is not \"uSCP\" (spec §2)");
  FileHeader h;
  h.version_major = wire::get_u16(data + 4);
  h.version_minor = wire::get_u16(data + 6);
  h.flags = wire::get_u64(data + wire::kHdrOffFlags);
  h.total_time_ps = wire::get_u64(data + wire::kHdrOffTotalTime);
  h.num_segments = wire::get_u32(data + wire::kHdrOffNumSegments);
  h.preamble_end = wire::get_u32(data + wire::kHdrOffPreambleEnd);
  h.section_table_offset = wire::get_u64(data + wire::kHdrOffSectionTable);
  h.tail_offset = wire::get_u64(data + wire::kHdrOffTailOffset);
  return h;
}

void append_chunk(std::vector<uint8_t> &out, uint16_t type, const std::vector<uint8_t> &payload) {
  ByteSink o(out);
  o.u16(type);  // §2.3 preamble_chunk_t
  o.u16(0);
  o.u32(static_cast<uint32_t>(payload.size()));
  o.bytes(payload.data(), payload.size());
  o.zeros(wire::align8(payload.size()) - payload.size());
}

std::vector<ChunkRef> walk_chunks(const uint8_t *file, size_t size, uint32_t preamble_end) {
  std::vector<ChunkRef> chunks;
  const size_t end = preamble_end < size ? preamble_end : size;
  size_t pos = wire::kFileHeaderSize;  // COMPAT 15: chunks start at offset 48
  for (;;) {
    if (pos + wire::kChunkHeaderSize > end)
      fail(USCOPE_ERR_TRUNCATED, "preamble: no CHUNK_END before offset %zu (spec §2.3)", end);
    ChunkRef c;
    c.type = wire::get_u16(file + pos);
    c.flags = wire::get_u16(file + pos + 2);
    c.size = wire::get_u32(file + pos + 4);
    c.offset = pos + wire::kChunkHeaderSize;
    if (c.offset + c.size > end)
      fail(USCOPE_ERR_TRUNCATED, "preamble: chunk type %u at offset %zu runs past offset %zu",
           c.type, pos, end);
    chunks.push_back(c);
    if (c.type == wire::CHUNK_END) break;
    pos = c.offset + wire::align8(c.size);
  }
  return chunks;
}

std::vector<uint8_t> encode_trace_config(uint64_t checkpoint_interval_ps) {
  std::vector<uint8_t> out;
  ByteSink(out).u64(checkpoint_interval_ps);  // §2.4
  return out;
}

void encode_segment_header(const SegmentHeader &h, uint8_t out[56]) {
  std::memcpy(out, wire::kSegmentMagic, 4);  // §8.1
  wire::put_u32(out + 4, h.flags);
  wire::put_u64(out + 8, h.time_start_ps);
  wire::put_u64(out + 16, h.time_end_ps);
  wire::put_u64(out + 24, h.prev_segment_offset);
  wire::put_u32(out + 32, h.checkpoint_size);
  wire::put_u32(out + 36, h.deltas_compressed_size);
  wire::put_u32(out + 40, h.deltas_raw_size);
  wire::put_u32(out + 44, h.num_frames);
  wire::put_u32(out + 48, h.num_frames_active);
  wire::put_u32(out + 52, h.reserved);
}

SegmentHeader decode_segment_header(const uint8_t *data, size_t size) {
  if (size < wire::kSegmentHeaderSize)
    fail(USCOPE_ERR_TRUNCATED, "segment header: %zu bytes, needs 56 (spec §8.1)", size);
  if (std::memcmp(data, wire::kSegmentMagic, 4) != 0)
    fail(USCOPE_ERR_CORRUPT, "segment header: magic is not \"uSEG\" (spec §8.1)");
  SegmentHeader h;
  h.flags = wire::get_u32(data + 4);
  h.time_start_ps = wire::get_u64(data + 8);
  h.time_end_ps = wire::get_u64(data + 16);
  h.prev_segment_offset = wire::get_u64(data + 24);
  h.checkpoint_size = wire::get_u32(data + 32);
  h.deltas_compressed_size = wire::get_u32(data + 36);
  h.deltas_raw_size = wire::get_u32(data + 40);
  h.num_frames = wire::get_u32(data + 44);
  h.num_frames_active = wire::get_u32(data + 48);
  h.reserved = wire::get_u32(data + 52);
  return h;
}

void append_segment_table(std::vector<uint8_t> &out, const std::vector<SegmentIndexEntry> &t) {
  ByteSink o(out);
  for (const auto &e : t) {  // §8.3
    o.u64(e.offset);
    o.u64(e.time_start_ps);
    o.u64(e.time_end_ps);
  }
}

std::vector<SegmentIndexEntry> decode_segment_table(const uint8_t *data, size_t size) {
  if (size % wire::kSegmentIndexEntrySize)
    fail(USCOPE_ERR_CORRUPT, "segment table: %zu bytes is not a multiple of 24 (spec §8.3)", size);
  std::vector<SegmentIndexEntry> t(size / wire::kSegmentIndexEntrySize);
  for (size_t i = 0; i < t.size(); ++i) {
    const uint8_t *p = data + i * wire::kSegmentIndexEntrySize;
    t[i] = {wire::get_u64(p), wire::get_u64(p + 8), wire::get_u64(p + 16)};
  }
  return t;
}

void append_section_table(std::vector<uint8_t> &out, const std::vector<SectionEntry> &entries) {
  ByteSink o(out);
  auto put = [&](const SectionEntry &e) {  // §5 section_entry_t
    o.u16(e.type);
    o.u16(e.flags);
    o.u32(0);
    o.u64(e.offset);
    o.u64(e.size);
  };
  for (const auto &e : entries) put(e);
  put(SectionEntry{});  // SECTION_END terminator
}

std::vector<SectionEntry> decode_section_table(const uint8_t *data, size_t size) {
  ByteSource in(data, size, "section table");
  std::vector<SectionEntry> out;
  for (;;) {
    SectionEntry e;
    e.type = in.u16();
    e.flags = in.u16();
    in.skip(4);
    e.offset = in.u64();
    e.size = in.u64();
    if (e.type == wire::SECTION_END) break;
    out.push_back(e);
  }
  return out;
}

void append_string_table(std::vector<uint8_t> &out, const std::vector<std::string> &strings) {
  ByteSink o(out);
  o.u32(static_cast<uint32_t>(strings.size()));  // §7 string_table_header_t
  o.u32(0);
  uint64_t off = 0;
  for (const auto &s : strings) {
    o.u32(static_cast<uint32_t>(off));
    o.u32(static_cast<uint32_t>(s.size()));
    off += s.size() + 1;
  }
  for (const auto &s : strings) {
    o.bytes(s.data(), s.size());
    o.u8(0);
  }
}

std::vector<std::string> decode_string_table(const uint8_t *data, size_t size) {
  ByteSource in(data, size, "string table");
  const uint32_t n = in.u32();
  in.skip(4);
  if (size_t{n} * wire::kStringIndexSize > in.remaining())
    fail(USCOPE_ERR_TRUNCATED, "string table: %u entries do not fit in %zu bytes", n, size);
  const size_t data_start = wire::kStringTableHeaderSize + size_t{n} * wire::kStringIndexSize;
  const size_t data_len = size - data_start;
  std::vector<std::string> out;
  out.reserve(n);
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t off = in.u32();
    const uint32_t len = in.u32();
    if (uint64_t{off} + len > data_len)
      fail(USCOPE_ERR_CORRUPT, "string table: entry %u (offset %u, length %u) is out of bounds", i,
           off, len);
    // §7: the strings are packed one after the other, so together they fit
    // the string data. Entries that share bytes would let a small table
    // decode to entries x data bytes of strings.
    total += len;
    if (total > data_len)
      fail(USCOPE_ERR_CORRUPT, "string table: entries 0..%u hold %llu bytes of strings; the data has %zu",
           i, static_cast<unsigned long long>(total), data_len);
    out.emplace_back(reinterpret_cast<const char *>(data + data_start + off), len);
  }
  return out;
}

}  // namespace uscope
