// Test support: a whole µScope file decoded by the library's reader
// (src/reader/), copied into plain vectors the tests compare: raw chunks,
// sections, checkpoints and delta blobs next to the decoded items.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/file_codec.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/storage_state.hpp"
#include "format/tsum.hpp"

namespace uscope::test {

struct Item {  // one decoded op or event, as the conformance digests list them
  bool is_event = false;
  uint32_t frame = 0;  // index into Segment::frame_times
  uint64_t time_ps = 0;
  DeltaOp op{};
  uint16_t event_id = 0;
  std::vector<uint8_t> payload;
};

struct Segment {
  uint64_t offset = 0;
  SegmentHeader header;
  std::vector<uint8_t> checkpoint;  // raw checkpoint bytes
  std::vector<uint8_t> deltas;      // decompressed delta blob
  std::vector<uint64_t> frame_times;
  std::vector<Item> items;
};

struct TraceFile {
  std::vector<uint8_t> bytes;
  FileHeader header;
  std::vector<ChunkRef> chunks;
  Schema schema;
  std::vector<DutProperty> dut;
  uint64_t checkpoint_interval_ps = 0;
  std::vector<SectionEntry> sections;          // empty for an unfinished file
  std::vector<SegmentIndexEntry> segment_table;
  std::vector<Segment> segments;               // in time order
  std::vector<std::string> strings;
  std::optional<TraceSummary> summary;

  const uint8_t *chunk_payload(uint16_t type) const;
  uint32_t chunk_size(uint16_t type) const;
};

// Decode path with uscope::TraceReader: segments come from the SEGMENTS
// section when F_COMPLETE is set, else from the tail_offset /
// prev_segment_offset chain (COMPAT 15). Throws uscope::Error on anything
// malformed, ops and events that do not fit the schema included.
TraceFile read_trace_file(const std::string &path);
TraceFile parse_trace_file(const std::vector<uint8_t> &bytes);  // through a scratch file

std::vector<uint8_t> read_bytes(const std::string &path);
std::string hex16(uint64_t v);

// FNV-1a-64 over the items in the conformance corpus's digest form:
// "O <time> <action> <sid> <slot> <field> <value>\n" and
// "E <time> <event_type_id> <payload-hex>\n" (../shared/conformance/README.md).
uint64_t items_digest(const std::vector<Item> &items, uint64_t h);  // "%016llx", as the conformance JSON writes FNV digests

}  // namespace uscope::test
