#include "support/trace_file.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "format/checksum.hpp"
#include "format/compress.hpp"
#include "format/error.hpp"
#include "format/wire.hpp"

namespace uscope::test {

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(USCOPE_ERR_IO, "cannot open %s", path.c_str());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string hex16(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

uint64_t items_digest(const std::vector<Item> &items, uint64_t h) {
  std::string line;
  char buf[128];
  for (const auto &i : items) {
    if (i.is_event) {
      std::snprintf(buf, sizeof buf, "E %llu %u ", static_cast<unsigned long long>(i.time_ps), i.event_id);
      line = buf;
      for (uint8_t b : i.payload) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        line += buf;
      }
      line += '\n';
    } else {
      std::snprintf(buf, sizeof buf, "O %llu %u %u %u %u %llu\n",
                    static_cast<unsigned long long>(i.time_ps), i.op.action, i.op.storage_id,
                    i.op.slot, i.op.field, static_cast<unsigned long long>(i.op.value));
      line = buf;
    }
    h = fnv1a64(line.data(), line.size(), h);
  }
  return h;
}

const uint8_t *TraceFile::chunk_payload(uint16_t type) const {
  for (const auto &c : chunks)
    if (c.type == type) return bytes.data() + c.offset;
  return nullptr;
}
uint32_t TraceFile::chunk_size(uint16_t type) const {
  for (const auto &c : chunks)
    if (c.type == type) return c.size;
  return 0;
}

namespace {
Segment read_segment(const TraceFile &t, uint64_t off) {
  if (off > t.bytes.size()) fail(USCOPE_ERR_TRUNCATED, "segment offset %llu past EOF", (unsigned long long)off);
  Segment s;
  s.offset = off;
  s.header = decode_segment_header(t.bytes.data() + off, t.bytes.size() - off);
  const uint64_t ck = off + wire::kSegmentHeaderSize;
  const uint64_t dl = ck + s.header.checkpoint_size;
  const uint64_t end = dl + s.header.deltas_compressed_size;
  if (end > t.bytes.size()) fail(USCOPE_ERR_TRUNCATED, "segment at %llu runs past EOF", (unsigned long long)off);
  s.checkpoint.assign(t.bytes.begin() + ck, t.bytes.begin() + dl);
  const bool compressed = t.header.flags & wire::F_COMPRESSED;
  const uint32_t method = (t.header.flags & wire::kCompMethodMask) >> wire::kCompMethodShift;
  const Codec codec = !compressed ? Codec::None : method == wire::kCompZstd ? Codec::Zstd : Codec::Lz4;
  decompress(codec, t.bytes.data() + dl, s.header.deltas_compressed_size, 1u << 30, s.deltas);
  struct V {
    Segment &s;
    void frame(uint64_t t) { s.frame_times.push_back(t); }
    void op(uint64_t t, const DeltaOp &o) {
      Item i;
      i.frame = static_cast<uint32_t>(s.frame_times.size() - 1);
      i.time_ps = t;
      i.op = o;
      s.items.push_back(i);
    }
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
      Item i;
      i.frame = static_cast<uint32_t>(s.frame_times.size() - 1);
      i.is_event = true;
      i.time_ps = t;
      i.event_id = id;
      i.payload.assign(p, p + n);
      s.items.push_back(std::move(i));
    }
  } v{s};
  decode_deltas(s.deltas.data(), s.deltas.size(), s.header.time_start_ps,
                t.header.flags & wire::F_INTERLEAVED_DELTAS, t.header.flags & wire::F_COMPACT_DELTAS, v);
  return s;
}
}  // namespace

TraceFile parse_trace_file(std::vector<uint8_t> bytes) {
  TraceFile t;
  t.bytes = std::move(bytes);
  t.header = decode_file_header(t.bytes.data(), t.bytes.size());
  t.chunks = walk_chunks(t.bytes.data(), t.bytes.size(), t.header.preamble_end);
  const uint8_t *schema = t.chunk_payload(wire::CHUNK_SCHEMA);
  const uint8_t *dut = t.chunk_payload(wire::CHUNK_DUT_DESC);
  const uint8_t *cfg = t.chunk_payload(wire::CHUNK_TRACE_CONFIG);
  if (!schema || !dut || !cfg) fail(USCOPE_ERR_CORRUPT, "a mandatory preamble chunk is missing");
  t.schema = decode_schema(schema, t.chunk_size(wire::CHUNK_SCHEMA));
  t.dut = decode_dut(dut, t.chunk_size(wire::CHUNK_DUT_DESC));
  t.checkpoint_interval_ps = wire::get_u64(cfg);

  std::vector<uint64_t> offsets;
  if (t.header.flags & wire::F_COMPLETE) {
    const uint64_t st = t.header.section_table_offset;
    if (st > t.bytes.size()) fail(USCOPE_ERR_TRUNCATED, "section table past EOF");
    t.sections = decode_section_table(t.bytes.data() + st, t.bytes.size() - st);
    for (const auto &s : t.sections) {
      if (s.offset + s.size > t.bytes.size()) fail(USCOPE_ERR_TRUNCATED, "section past EOF");
      const uint8_t *p = t.bytes.data() + s.offset;
      if (s.type == wire::SECTION_SEGMENTS) t.segment_table = decode_segment_table(p, s.size);
      if (s.type == wire::SECTION_STRINGS) t.strings = decode_string_table(p, s.size);
      if (s.type == wire::SECTION_COUNTER_SUMMARY) t.summary = decode_tsum(p, s.size);
    }
    for (const auto &e : t.segment_table) offsets.push_back(e.offset);
  } else {
    for (uint64_t off = t.header.tail_offset; off != 0;) {
      offsets.insert(offsets.begin(), off);
      if (offsets.size() > t.bytes.size()) fail(USCOPE_ERR_CORRUPT, "segment chain loops");
      off = decode_segment_header(t.bytes.data() + off, t.bytes.size() - off).prev_segment_offset;
    }
  }
  for (uint64_t off : offsets) t.segments.push_back(read_segment(t, off));
  return t;
}

TraceFile read_trace_file(const std::string &path) { return parse_trace_file(read_bytes(path)); }

}  // namespace uscope::test
