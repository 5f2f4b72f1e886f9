// Codecs of the file-level structures: file header (§2), preamble chunks
// (§2.3), trace config (§2.4), segment header (§8.1), segment table (§8.3),
// section table (§5) and string table (§7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uscope {

struct FileHeader {  // §2
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  uint64_t flags = 0;
  uint64_t total_time_ps = 0;
  uint32_t num_segments = 0;
  uint32_t preamble_end = 0;
  uint64_t section_table_offset = 0;
  uint64_t tail_offset = 0;
};
void encode_file_header(const FileHeader &h, uint8_t out[48]);
// Throws Error(TRUNCATED) for fewer than 48 bytes, Error(BAD_MAGIC) for a
// wrong magic. Flags and version are returned as read.
FileHeader decode_file_header(const uint8_t *data, size_t size);

// §2.3: chunk header + payload + zero padding to 8 bytes, appended to out.
void append_chunk(std::vector<uint8_t> &out, uint16_t type, const std::vector<uint8_t> &payload);
struct ChunkRef {
  uint16_t type;
  uint16_t flags;
  uint64_t offset;  // of the payload, from the start of the buffer
  uint32_t size;
};
// Walk the preamble chunks of a buffer that starts at file offset 0, up to and
// including CHUNK_END. Throws Error(TRUNCATED / CORRUPT).
std::vector<ChunkRef> walk_chunks(const uint8_t *file, size_t size, uint32_t preamble_end);

std::vector<uint8_t> encode_trace_config(uint64_t checkpoint_interval_ps);  // §2.4

struct SegmentHeader {  // §8.1
  uint32_t flags = 0;
  uint64_t time_start_ps = 0;
  uint64_t time_end_ps = 0;
  uint64_t prev_segment_offset = 0;
  uint32_t checkpoint_size = 0;
  uint32_t deltas_compressed_size = 0;
  uint32_t deltas_raw_size = 0;
  uint32_t num_frames = 0;
  uint32_t num_frames_active = 0;
  uint32_t reserved = 0;
};
void encode_segment_header(const SegmentHeader &h, uint8_t out[56]);
// Throws Error(TRUNCATED) / Error(CORRUPT) (bad "uSEG" magic).
SegmentHeader decode_segment_header(const uint8_t *data, size_t size);

struct SegmentIndexEntry {  // §8.3
  uint64_t offset = 0;
  uint64_t time_start_ps = 0;
  uint64_t time_end_ps = 0;
};
void append_segment_table(std::vector<uint8_t> &out, const std::vector<SegmentIndexEntry> &t);
std::vector<SegmentIndexEntry> decode_segment_table(const uint8_t *data, size_t size);

struct SectionEntry {  // §5
  uint16_t type = 0;
  uint16_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};
// Appends the entries and the terminating SECTION_END entry.
void append_section_table(std::vector<uint8_t> &out, const std::vector<SectionEntry> &entries);
// Reads entries up to SECTION_END (excluded); throws Error(TRUNCATED) when
// the data ends first.
std::vector<SectionEntry> decode_section_table(const uint8_t *data, size_t size);

// §7: header, index entries (offset, length), then NUL-terminated strings.
void append_string_table(std::vector<uint8_t> &out, const std::vector<std::string> &strings);
std::vector<std::string> decode_string_table(const uint8_t *data, size_t size);

}  // namespace uscope
