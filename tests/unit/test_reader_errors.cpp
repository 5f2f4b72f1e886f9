// The reader core against damaged files: a golden-errors suite (issue 5,
// point 6). Every damaged file is made by this test from a valid one, either
// a trace of the reference corpus (../shared/conformance/uscope) or a trace
// written by our own writer through the C API, and then opened and driven
// through every reader entry point (tests/support/reader_exercise.hpp: each
// segment's replay, state_at at several times, events_in_range over the whole
// time axis, poll_new_segments).
//
// The contract under test (src/reader/trace_reader.hpp): the reader either
// answers or throws uscope::Error with a status; it never crashes, hangs,
// reads out of bounds or throws anything else. Crafted damage must give the
// one status that names it:
//   - BAD_MAGIC: the first four bytes are not "uSCP" (spec §2);
//   - UNSUPPORTED_VERSION: a major version other than 0 (COMPAT 4);
//   - UNKNOWN_COMPRESSION: F_COMP_METHOD 2..7 (spec §2.1, §8.6.7, COMPAT 3);
//   - TRUNCATED: the file ends inside a structure, or an offset or size
//     points past its end (what a cut-off copy or a crash before the data
//     reached the disk looks like); also a sized structure that ends inside
//     the blocks or entries it declares (the codecs' convention, e.g. a
//     checkpoint_size one byte short);
//   - CORRUPT: everything inside the file that contradicts the format (wrong
//     magic of a segment, a chain that does not go backwards, overlapping
//     segments, sizes that disagree, a delta blob that does not decode);
//   - for ops and events that the schema does not allow, the status a
//     writer gives for the same call (UNKNOWN_SLOT, UNKNOWN_EVENT, ...);
//     TIME_BACKWARDS for a segment that ends before it starts or starts
//     before the one before it ends.
// Those are the statuses of a strict reader (TraceReader::kStrict), which
// every crafted case uses; the default, tolerant reader must answer the same
// bytes (skipping and counting what is damaged inside segments) or fail
// with one of the five file-level statuses. Random damage (bit flips, cut
// points; fixed seeds) must give OK or one of those statuses.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "format/compress.hpp"
#include "format/file_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/wire.hpp"
#include "support/reader_exercise.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

// Bytes of heap the process holds: glibc's figures in the normal build (the
// allocation-counting wrappers of test_writer_alloc.cpp forward to glibc),
// the sanitizer's under ASan, whose allocator is not glibc's.
#if defined(__SANITIZE_ADDRESS__)
#define USCOPE_ERRORS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USCOPE_ERRORS_ASAN 1
#endif
#endif
#if defined(USCOPE_ERRORS_ASAN)
extern "C" size_t __sanitizer_get_current_allocated_bytes();
size_t heap_in_use() { return __sanitizer_get_current_allocated_bytes(); }
#else
size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
#endif

namespace w = uscope::wire;
using Codec = const uscope::CompressionMethod *;
const Codec kLz4 = uscope::compression_by_id(USCOPE_COMPRESSION_LZ4);
const Codec kZstd = uscope::compression_by_id(USCOPE_COMPRESSION_ZSTD);
const Codec kNone = uscope::compression_by_id(USCOPE_COMPRESSION_NONE);
using uscope::FileHeader;
using uscope::SegmentHeader;
using uscope::test::ReaderOutcome;
using uscope::test::run_reader_on_bytes;
using Bytes = std::vector<uint8_t>;

// ── Byte patching ──

void put16(Bytes &b, uint64_t at, uint16_t v) { w::put_u16(&b.at(at + 1) - 1, v); }
void put32(Bytes &b, uint64_t at, uint32_t v) { w::put_u32(&b.at(at + 3) - 3, v); }
void put64(Bytes &b, uint64_t at, uint64_t v) { w::put_u64(&b.at(at + 7) - 7, v); }
uint16_t get16(const Bytes &b, uint64_t at) { return w::get_u16(&b.at(at + 1) - 1); }
uint32_t get32(const Bytes &b, uint64_t at) { return w::get_u32(&b.at(at + 3) - 3); }
uint64_t get64(const Bytes &b, uint64_t at) { return w::get_u64(&b.at(at + 7) - 7); }

// §2 file header and §8.1 segment header field offsets.
constexpr uint64_t kHdrVersionMajor = 4, kHdrVersionMinor = 6;
constexpr uint64_t kSegTimeStart = 8, kSegTimeEnd = 16, kSegPrev = 24, kSegCkpt = 32,
                   kSegDeltasComp = 36, kSegDeltasRaw = 40;

// ── Where every structure of a valid file lies, found with the codecs ──

struct Seg {
  uint64_t off = 0;
  SegmentHeader h;
  uint64_t ckpt() const { return off + w::kSegmentHeaderSize; }
  uint64_t deltas() const { return ckpt() + h.checkpoint_size; }
  uint64_t end() const { return deltas() + h.deltas_compressed_size; }
};

struct FileMap {
  FileHeader h;
  std::vector<uscope::ChunkRef> chunks;
  std::vector<Seg> segs;  // time (and file) order
  std::vector<uscope::SectionEntry> sections;
  uint64_t st_end = 0;    // end of the section table (finalized files)
  uscope::Schema schema;

  bool complete() const { return h.flags & w::F_COMPLETE; }
  // Index of the section of that type in the section table, or -1.
  int section(uint16_t type) const {
    for (size_t i = 0; i < sections.size(); ++i)
      if (sections[i].type == type) return static_cast<int>(i);
    return -1;
  }
  uint64_t section_entry_at(int i) const {
    return h.section_table_offset + static_cast<uint64_t>(i) * w::kSectionEntrySize;
  }
  uint64_t segment_entry_at(size_t k) const {
    return sections.at(section(w::SECTION_SEGMENTS)).offset + k * w::kSegmentIndexEntrySize;
  }
};

FileMap map_file(const Bytes &b) {
  FileMap m;
  m.h = uscope::decode_file_header(b.data(), b.size());
  m.chunks = uscope::walk_chunks(b.data(), b.size(), m.h.preamble_end);
  for (const auto &c : m.chunks)
    if (c.type == w::CHUNK_SCHEMA) m.schema = uscope::decode_schema(b.data() + c.offset, c.size);
  std::vector<uint64_t> offs;
  if (m.complete()) {
    const uint64_t st = m.h.section_table_offset;
    m.sections = uscope::decode_section_table(b.data() + st, b.size() - st);
    m.st_end = st + (m.sections.size() + 1) * w::kSectionEntrySize;
    const int s = m.section(w::SECTION_SEGMENTS);
    if (s >= 0)
      for (const auto &e : uscope::decode_segment_table(b.data() + m.sections[s].offset, m.sections[s].size))
        offs.push_back(e.offset);
  } else {  // COMPAT 15: the chain back from tail_offset
    for (uint64_t off = m.h.tail_offset; off; off = uscope::decode_segment_header(b.data() + off, b.size() - off).prev_segment_offset)
      offs.push_back(off);
    std::reverse(offs.begin(), offs.end());
  }
  for (uint64_t off : offs) m.segs.push_back({off, uscope::decode_segment_header(b.data() + off, b.size() - off)});
  return m;
}

Codec codec_of(const FileHeader &h) { return uscope::compression_by_flags(h.flags); }

// A live (unfinished) copy of a finalized file, as a crash before close
// leaves it (COMPAT 12, 15): F_COMPLETE clear, no section table offset. The
// writer keeps tail_offset at the last segment, so the chain is intact.
Bytes make_live(Bytes b) {
  put64(b, w::kHdrOffFlags, get64(b, w::kHdrOffFlags) & ~w::F_COMPLETE);
  put64(b, w::kHdrOffSectionTable, 0);
  return b;
}

// ── Re-encoding the deltas of the last segment ──

Bytes raw_deltas(const Bytes &b, const FileMap &m, const Seg &s) {
  Bytes out;
  uscope::decompress(*codec_of(m.h), b.data() + s.deltas(), s.h.deltas_compressed_size, s.h.deltas_raw_size, out);
  return out;
}

// The file with its last segment replaced by a copy whose delta blob is raw
// (compressed with the file's own codec, sizes fixed): the copy is appended
// at the end of the file, and tail_offset and the segment table entry point
// at it. The last segment is the one moved so that segments stay in file
// order; its checkpoint and prev_segment_offset are kept.
Bytes with_last_segment_deltas(const Bytes &b, const FileMap &m, const Bytes &raw) {
  const Seg &s = m.segs.back();
  uscope::Compressor comp(*codec_of(m.h), 0);
  Bytes blob;
  const size_t n = comp.compress(raw.data(), raw.size(), blob);
  SegmentHeader h = s.h;
  h.deltas_compressed_size = static_cast<uint32_t>(n);
  h.deltas_raw_size = static_cast<uint32_t>(raw.size());
  Bytes out = b;
  const uint64_t at = out.size();
  out.resize(at + w::kSegmentHeaderSize);
  uscope::encode_segment_header(h, out.data() + at);
  out.insert(out.end(), b.begin() + static_cast<ptrdiff_t>(s.ckpt()), b.begin() + static_cast<ptrdiff_t>(s.deltas()));
  out.insert(out.end(), blob.begin(), blob.begin() + static_cast<ptrdiff_t>(n));
  put64(out, w::kHdrOffTailOffset, at);
  if (m.complete()) put64(out, m.segment_entry_at(m.segs.size() - 1), at);
  return out;
}

// One op or event inside a raw delta blob, located by an independent walk
// of the frame formats (§8.6.1-§8.6.4 for v0.1, §8.6.6 with COMPAT 1 for
// v0.2), with the byte offsets of its fields.
struct ItemAt {
  bool event = false;
  bool compact = false;  // compact op: storage_id is one byte
  uint8_t action = 0;
  uint64_t action_at = 0, sid_at = 0, slot_at = 0, field_at = 0;  // ops
  uint64_t id_at = 0, size_at = 0, payload_at = 0;                // events
  uint32_t payload_size = 0;
};

std::vector<ItemAt> walk_items(const Bytes &raw, uint64_t flags) {
  std::vector<ItemAt> items;
  const bool v02 = flags & w::F_INTERLEAVED_DELTAS, compact_flag = flags & w::F_COMPACT_DELTAS;
  size_t pos = 0;
  while (pos < raw.size()) {
    uint64_t dt;
    const size_t k = w::leb128_decode(raw.data() + pos, raw.size() - pos, &dt);
    if (!k) ADD_FAILURE() << "bad LEB128 at " << pos;
    if (!k) return items;
    pos += k;
    auto event_at = [&](uint64_t id_at, uint64_t size_at, uint64_t payload_at) {
      ItemAt e;
      e.event = true;
      e.id_at = id_at;
      e.size_at = size_at;
      e.payload_at = payload_at;
      e.payload_size = get32(raw, size_at);
      items.push_back(e);
      return payload_at + e.payload_size;
    };
    if (v02) {
      const uint16_t n = get16(raw, pos);
      pos += 2;
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t tag = raw.at(pos);
        if (tag == w::TAG_EVENT) {
          pos = event_at(pos + 2, pos + 4, pos + 8);
          continue;
        }
        ItemAt o;
        o.compact = tag == w::TAG_COMPACT_OP;
        o.action = raw.at(pos + 1);
        o.action_at = pos + 1;
        o.sid_at = pos + 2;
        o.slot_at = pos + (o.compact ? 3 : 4);
        o.field_at = pos + (o.compact ? 5 : 6);
        items.push_back(o);
        pos += o.compact ? w::kCompactOpV2Size : w::kWideOpSize;
      }
    } else {
      const bool compact = compact_flag && raw.at(pos) == w::kOpFormatCompact;
      const uint16_t ops = get16(raw, pos + 2), events = get16(raw, pos + 4);
      pos += w::kV01FrameFixedSize;
      for (uint32_t i = 0; i < ops; ++i) {
        ItemAt o;
        o.compact = compact;
        o.action = raw.at(pos);
        o.action_at = pos;
        o.sid_at = pos + (compact ? 1 : 2);
        o.slot_at = pos + (compact ? 2 : 4);
        o.field_at = pos + (compact ? 4 : 6);
        items.push_back(o);
        pos += compact ? w::kCompactOpV1Size : w::kWideOpSize;
      }
      for (uint32_t i = 0; i < events; ++i) pos = event_at(pos, pos + 4, pos + 8);
    }
  }
  return items;
}

// ── The valid files everything starts from ──

struct Source {
  std::string name;
  Bytes bytes;
};

// Our writer, through the C API: a sparse storage with properties, a dense
// storage, a counter, three event types (5-byte, empty, STRING_REF), values
// that force wide frames every third cycle, a string table, a TSUM summary
// and a segment every 10 cycles, so that every kind of structure, op and
// event occurs, in the last segment too.
Bytes write_with_our_writer(const std::string &path, uint32_t compression, uint32_t frames) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t top = 0, id = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, "cpu", clk), USCOPE_OK);
  const uscope_field_t ents_f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t ents_p[] = {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                   {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  const uscope_field_t regs_f[] = {{"val", USCOPE_FT_U16, 0, 0, 0}};
  const uscope_field_t ctr_f[] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id, "ents", top, 8, USCOPE_SF_SPARSE, ents_f, 2, ents_p, 2), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_storage(s, &id, "regs", top, 4, 0, regs_f, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_storage(s, &id, "ctr", top, 1, 0, ctr_f, 1, nullptr, 0), USCOPE_OK);
  const uscope_field_t retire_f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"kind", USCOPE_FT_U8, 0, 0, 0}};
  const uscope_field_t note_f[] = {{"str", USCOPE_FT_STRING_REF, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &id, "retire", top, retire_f, 2), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_event(s, &id, "tick", top, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_event(s, &id, "note", top, note_f, 1), USCOPE_OK);

  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compression = compression;
  o.frame_format = frames;
  o.checkpoint_interval_ps = 10'000;
  const uscope_dut_property_t props[] = {{"dut_name", "reader_errors"}};
  uscope_writer_t *wr = nullptr;
  EXPECT_EQ(uscope_writer_open(&wr, path.c_str(), s, props, 1, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!wr) return {};
  for (uint32_t i = 0; i < 45; ++i) {
    EXPECT_EQ(uscope_begin_cycle(wr, 1000ull * (i + 1)), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(wr, 0, i % 8, 0, i), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(wr, 0, i % 8, 1, i % 3 == 0 ? 0x123456789ull : i * 3), USCOPE_OK);
    if (i % 4 == 1) {
      EXPECT_EQ(uscope_slot_clear(wr, 0, (i + 4) % 8), USCOPE_OK);
    }
    EXPECT_EQ(uscope_slot_add(wr, 2, 0, 0, 1), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(wr, 1, i % 4, 0, i * 7), USCOPE_OK);
    EXPECT_EQ(uscope_prop_set(wr, 0, 0, i % 8), USCOPE_OK);
    uint8_t retire[5];
    std::memcpy(retire, &i, 4);
    retire[4] = static_cast<uint8_t>(i % 3);
    EXPECT_EQ(uscope_event(wr, 0, retire, 5), USCOPE_OK);
    if (i % 5 == 0) {
      EXPECT_EQ(uscope_event(wr, 1, nullptr, 0), USCOPE_OK);
    }
    if (i % 7 == 0) {
      uint32_t idx = 0;
      EXPECT_EQ(uscope_string_insert(wr, &idx, ("string " + std::to_string(i)).c_str()), USCOPE_OK);
      EXPECT_EQ(uscope_event(wr, 2, &idx, 4), USCOPE_OK);
    }
    EXPECT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(wr), USCOPE_OK);
  return uscope::test::read_bytes(path);
}

const std::vector<Source> &sources() {
  static const std::vector<Source> all = [] {
    std::vector<Source> v;
    for (const char *n : {"01_tiny", "02_multiseg", "03_sparse_dense", "04_props", "05_events_all_types",
                          "06_wide_compact", "07_many_storages", "08_multiclock_scopes", "10_live_incomplete",
                          "11_empty", "12_boundary", "20_konata_sample", "23_rust_v01_wide", "24_rust_v01_compact"})
      v.push_back({n, uscope::test::read_bytes(uscope::test::kCorpusDir + n + ".uscope")});
    uscope::test::TempDir dir("reader_errors");
    v.push_back({"ours_lz4_v02", write_with_our_writer(dir.file("a.uscope"), USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02)});
    v.push_back({"ours_zstd_v02", write_with_our_writer(dir.file("b.uscope"), USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02)});
    v.push_back({"ours_none_v02", write_with_our_writer(dir.file("c.uscope"), USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V02)});
    v.push_back({"ours_lz4_v01", write_with_our_writer(dir.file("d.uscope"), USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V01)});
    return v;
  }();
  return all;
}

// Every source, and the live copy of each finalized one.
std::vector<Source> sources_and_live_copies() {
  std::vector<Source> v;
  for (const Source &s : sources()) {
    v.push_back(s);
    if (map_file(s.bytes).complete()) v.push_back({s.name + " (live)", make_live(s.bytes)});
  }
  return v;
}

// Outcome of the untouched file: every source must open and answer.
const std::map<std::string, uscope::test::ReaderDigest> &digests() {
  static const auto all = [] {
    std::map<std::string, uscope::test::ReaderDigest> m;
    for (const Source &s : sources_and_live_copies()) {
      const ReaderOutcome o = run_reader_on_bytes(s.bytes);
      EXPECT_EQ(o.status, USCOPE_OK) << s.name << ": " << o.message;
      m[s.name] = o.digest;
    }
    return m;
  }();
  return all;
}

// The default, tolerant reader answers damaged bytes, or fails with a
// status of the file as a whole.
void expect_tolerant(const Bytes &b, const std::string &what) {
  const ReaderOutcome t = run_reader_on_bytes(b);
  EXPECT_TRUE(t.status == USCOPE_OK || uscope::test::is_reader_input_error(t.status))
      << what << " (tolerant)\n  reader said: " << t.message;
}

// Run the strict reader over b and check the exact status; returns the
// outcome. The same bytes read tolerantly (the default) must answer, or fail
// with an input status of the file as a whole (what a tolerant reader cannot
// skip: a bad header, preamble, section table or live chain).
//
// want == OK: the bytes hold no defect, so the tolerant reader's answers
// (returned, and compared by callers with the undamaged file's) are the
// strict reader's; except for the Rust writer's end-of-segment checkpoints
// (20_konata_sample, COMPAT 28), which a strict reader refuses at open.
ReaderOutcome expect_status(const Bytes &b, uscope_status_t want, const std::string &what) {
  const ReaderOutcome o = run_reader_on_bytes(b, uscope::TraceReader::kStrict);
  if (want == USCOPE_OK) {
    const ReaderOutcome t = run_reader_on_bytes(b);
    EXPECT_EQ(t.status, USCOPE_OK) << what << " (tolerant)\n  reader said: " << t.message;
    if (o.status == USCOPE_ERR_NONCONFORMING)
      EXPECT_NE(o.message.find("end_of_segment_checkpoints"), std::string::npos) << what << ": " << o.message;
    else
      EXPECT_EQ(o.status, USCOPE_OK) << what << "\n  reader said: " << o.message;
    return t;
  }
  EXPECT_EQ(o.status, want) << what << "\n  reader said: " << (o.message.empty() ? "(no error)" : o.message);
  expect_tolerant(b, what);
  return o;
}

Bytes prefix(const Bytes &b, uint64_t n) { return Bytes(b.begin(), b.begin() + static_cast<ptrdiff_t>(n)); }

// Every boundary between structures of a valid file, with the bytes just
// before and after it (inside the structure on either side).
std::vector<uint64_t> boundaries(const FileMap &m, uint64_t size) {
  std::vector<uint64_t> b = {0, 4, 8, w::kFileHeaderSize, m.h.preamble_end};
  for (const auto &c : m.chunks)
    b.insert(b.end(), {c.offset - w::kChunkHeaderSize, c.offset, c.offset + c.size, c.offset + w::align8(c.size)});
  for (const Seg &s : m.segs) b.insert(b.end(), {s.off, s.ckpt(), s.deltas(), s.deltas() + 4, s.end()});
  for (const auto &e : m.sections) b.insert(b.end(), {e.offset, e.offset + e.size});
  if (m.complete())
    for (uint64_t at = m.h.section_table_offset; at <= m.st_end; at += w::kSectionEntrySize) b.push_back(at);
  std::vector<uint64_t> out;
  for (uint64_t x : b)
    for (uint64_t y : {x - 1, x, x + 1})
      if (y < size) out.push_back(y);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The end of the last committed segment of a live file: a cut at or after
// it loses nothing that the chain reaches.
uint64_t live_data_end(const FileMap &m) {
  return m.segs.empty() ? m.h.preamble_end : m.segs.back().end();
}

// ════════════════════════════════ Truncation ════════════════════════════════

// Every source opens and answers before it is damaged (the baseline that the
// damaged copies are compared with), and the live copy of a finalized file
// gives the same answers as the file itself (same chain, same segments).
TEST(ReaderErrors, UndamagedSourcesOpenAndLiveCopiesAgree) {
  ASSERT_EQ(sources().size(), 18u);
  for (const Source &s : sources()) {
    ASSERT_FALSE(s.bytes.empty()) << s.name;
    const auto &d = digests();
    ASSERT_TRUE(d.count(s.name)) << s.name;
    if (d.count(s.name + " (live)")) {
      const auto &fin = d.at(s.name), &live = d.at(s.name + " (live)");
      EXPECT_EQ(fin.segments, live.segments) << s.name;
      EXPECT_EQ(fin.frames, live.frames) << s.name;
      EXPECT_EQ(fin.events, live.events) << s.name;
    }
  }
  EXPECT_GT(digests().at("ours_lz4_v02").segments, 3u);
}

// A finalized file ends with its section table (COMPAT 7), which the header
// points at, so any proper prefix lacks it: TRUNCATED, at every length of
// the small files.
TEST(ReaderErrors, EveryPrefixOfSmallFinalizedFilesIsTruncated) {
  size_t n = 0;
  for (const Source &s : sources()) {
    if (s.bytes.size() > 2048 || !map_file(s.bytes).complete()) continue;
    for (uint64_t len = 0; len < s.bytes.size(); ++len, ++n)
      expect_status(prefix(s.bytes, len), USCOPE_ERR_TRUNCATED, s.name + " cut to " + std::to_string(len));
  }
  EXPECT_GE(n, 3000u);
}

// Cuts at every structure boundary (header, each preamble chunk, segment
// header, checkpoint, deltas and their size prefix, TSUM, string table,
// segment table, section table entries) and one byte either side.
//   finalized: TRUNCATED (the section table is gone);
//   live: TRUNCATED while the cut is inside the preamble or the chain's
//   segments (tail_offset or a segment body points past the end); a cut
//   after the last committed segment drops only what no reader of a live
//   file uses, and the file answers exactly as before (COMPAT 12).
TEST(ReaderErrors, TruncationAtEveryStructureBoundary) {
  size_t cuts = 0, live_ok = 0;
  for (const Source &s : sources_and_live_copies()) {
    const FileMap m = map_file(s.bytes);
    for (uint64_t len : boundaries(m, s.bytes.size())) {
      ++cuts;
      const std::string what = s.name + " cut to " + std::to_string(len);
      if (m.complete() || len < live_data_end(m)) {
        expect_status(prefix(s.bytes, len), USCOPE_ERR_TRUNCATED, what);
      } else {
        const ReaderOutcome o = expect_status(prefix(s.bytes, len), USCOPE_OK, what);
        EXPECT_TRUE(o.digest == digests().at(s.name)) << what << ": answers differ from the whole file";
        ++live_ok;
      }
    }
  }
  EXPECT_GT(cuts, 1000u);
  EXPECT_GE(live_ok, 30u);
}

// Cuts at random points (fixed seed), finalized and live: the same rule.
TEST(ReaderErrors, TruncationAtRandomPoints) {
  std::mt19937_64 rng(0x5eed0001);
  for (const Source &s : sources_and_live_copies()) {
    const FileMap m = map_file(s.bytes);
    for (int i = 0; i < 40; ++i) {
      const uint64_t len = rng() % s.bytes.size();
      const std::string what = s.name + " cut to " + std::to_string(len);
      if (m.complete() || len < live_data_end(m)) {
        expect_status(prefix(s.bytes, len), USCOPE_ERR_TRUNCATED, what);
      } else {
        const ReaderOutcome o = expect_status(prefix(s.bytes, len), USCOPE_OK, what);
        EXPECT_TRUE(o.digest == digests().at(s.name)) << what;
      }
    }
  }
}

// ═══════════════════════════════ Random damage ══════════════════════════════

// Flipped bytes at random positions (fixed seed): one to eight bytes XORed
// with random non-zero values per copy. Small files get many more copies
// than the 800 KB one, whose every run replays 101 segments.
TEST(ReaderErrors, RandomByteFlips) {
  std::mt19937_64 rng(0x5eed0002);
  size_t runs = 0, failed = 0;
  for (const Source &s : sources_and_live_copies()) {
    const size_t copies = std::clamp<size_t>(4'000'000 / s.bytes.size(), 25, 400);
    for (size_t i = 0; i < copies; ++i) {
      Bytes b = s.bytes;
      const int flips = 1 + static_cast<int>(rng() % 8);
      std::string what = s.name + " flipped at";
      for (int k = 0; k < flips; ++k) {
        const uint64_t at = rng() % b.size();
        b[at] ^= static_cast<uint8_t>(1 + rng() % 255);
        what += " " + std::to_string(at);
      }
      const ReaderOutcome o = run_reader_on_bytes(b, uscope::TraceReader::kStrict);
      ++runs;
      if (o.status != USCOPE_OK) {
        ++failed;
        EXPECT_TRUE(uscope::test::is_reader_input_error(o.status) || uscope::test::is_strict_defect_error(o.status))
            << what << ": " << o.message;
      }
      expect_tolerant(b, what);
    }
  }
  EXPECT_GT(runs, 3000u);
  EXPECT_GT(failed, runs / 10);  // the damage is real: many copies must be refused
}

// Flips inside the decompressed delta blob of the last segment, recompressed
// with the file's codec and sizes fixed: this reaches the frame decoder and
// the schema checks of ops and events, which flips of compressed bytes
// rarely get past LZ4.
TEST(ReaderErrors, RandomFlipsInsideDecompressedDeltas) {
  std::mt19937_64 rng(0x5eed0003);
  size_t runs = 0, refused = 0;
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (m.segs.empty()) continue;
    const Bytes raw = raw_deltas(s.bytes, m, m.segs.back());
    if (raw.empty()) continue;
    for (int i = 0; i < 150; ++i) {
      Bytes r = raw;
      const int flips = 1 + static_cast<int>(rng() % 4);
      std::string what = s.name + " deltas flipped at";
      for (int k = 0; k < flips; ++k) {
        const uint64_t at = rng() % r.size();
        r[at] ^= static_cast<uint8_t>(1 + rng() % 255);
        what += " " + std::to_string(at);
      }
      const Bytes damaged = with_last_segment_deltas(s.bytes, m, r);
      const ReaderOutcome o = run_reader_on_bytes(damaged, uscope::TraceReader::kStrict);
      expect_tolerant(damaged, what);
      ++runs;
      if (o.status != USCOPE_OK) {
        ++refused;
        EXPECT_TRUE(uscope::test::is_reader_input_error(o.status) || uscope::test::is_strict_defect_error(o.status))
            << what << ": " << o.message;
      }
    }
  }
  EXPECT_GT(runs, 1500u);
  EXPECT_GT(refused, runs / 4);
}

// ══════════════════════════ Header (§2, §2.1) ═══════════════════════════════

TEST(ReaderErrors, BadMagic) {
  for (const Source &s : sources()) {
    for (int i = 0; i < 4; ++i) {
      Bytes b = s.bytes;
      b[i] ^= 0x20;
      expect_status(b, USCOPE_ERR_BAD_MAGIC, s.name + " magic byte " + std::to_string(i));
    }
    Bytes b = s.bytes;
    std::memcpy(b.data(), w::kSegmentMagic, 4);  // a segment is not a file
    expect_status(b, USCOPE_ERR_BAD_MAGIC, s.name + " with uSEG magic");
  }
  expect_status(Bytes(48, 0), USCOPE_ERR_BAD_MAGIC, "48 zero bytes");
  expect_status(uscope::test::read_bytes(uscope::test::kCorpusDir + "01_tiny.json"), USCOPE_ERR_BAD_MAGIC,
                "a JSON file");
  // Shorter than the header: there is no magic to judge.
  expect_status(Bytes{}, USCOPE_ERR_TRUNCATED, "empty file");
  expect_status(Bytes{'u', 'S', 'C', 'P'}, USCOPE_ERR_TRUNCATED, "magic only");
}

// COMPAT 4: the reference reader checks no version; ours refuses an unknown
// major and accepts any minor of major 0.
TEST(ReaderErrors, UnknownMajorVersion) {
  for (const Source &s : sources_and_live_copies()) {
    for (uint16_t major : {1, 2, 0x100, 0xFFFF}) {
      Bytes b = s.bytes;
      put16(b, kHdrVersionMajor, major);
      expect_status(b, USCOPE_ERR_UNSUPPORTED_VERSION, s.name + " major " + std::to_string(major));
    }
    Bytes b = s.bytes;
    put16(b, kHdrVersionMinor, 0xFFFF);
    const ReaderOutcome o = expect_status(b, USCOPE_OK, s.name + " minor 0xFFFF");
    EXPECT_TRUE(o.digest == digests().at(s.name)) << s.name;
  }
}

// §2.1: flag bits 8-63 are reserved and must be zero. A bit this reader does
// not know could change how the rest of the file reads, so the file is
// refused as a version it does not support, rather than read wrongly.
TEST(ReaderErrors, ReservedFlagBits) {
  for (const Source &s : sources_and_live_copies()) {
    for (int bit : {8, 9, 31, 32, 63}) {
      Bytes b = s.bytes;
      put64(b, w::kHdrOffFlags, get64(b, w::kHdrOffFlags) | uint64_t{1} << bit);
      expect_status(b, USCOPE_ERR_UNSUPPORTED_VERSION, s.name + " flag bit " + std::to_string(bit));
    }
  }
}

// §2.1: F_COMP_METHOD values 2-7 are reserved and must not be used; §8.6.7:
// readers must reject them (COMPAT 3). That holds whether F_COMPRESSED is
// set or not: the bits name no method either way. The values tried are
// those the table of methods (compress.cpp) has no row for, so that a new
// method's wire id is not expected to fail here.
TEST(ReaderErrors, UnknownCompressionMethod) {
  std::vector<uint64_t> reserved;
  for (uint64_t method = 0; method <= 7; ++method)
    if (!uscope::compression_by_wire_id(static_cast<uint32_t>(method))) reserved.push_back(method);
  ASSERT_FALSE(reserved.empty());
  for (const Source &s : sources_and_live_copies()) {
    for (uint64_t method : reserved) {
      Bytes b = s.bytes;
      const uint64_t f = get64(b, w::kHdrOffFlags);
      put64(b, w::kHdrOffFlags, (f & ~w::kCompMethodMask) | method << w::kCompMethodShift);
      expect_status(b, USCOPE_ERR_UNKNOWN_COMPRESSION, s.name + " method " + std::to_string(method));
    }
  }
}

// A known method that is not the one the blobs were written with: every
// segment fails to decode.
TEST(ReaderErrors, WrongCompressionMethod) {
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (m.segs.empty() || codec_of(m.h) == kNone) continue;
    Bytes b = s.bytes;
    put64(b, w::kHdrOffFlags, get64(b, w::kHdrOffFlags) ^ (uint64_t{1} << w::kCompMethodShift));
    expect_status(b, USCOPE_ERR_CORRUPT, s.name + " LZ4 <-> ZSTD");
  }
}

// ═════════════════════════ Preamble chunks (§2.3, §2.4) ════════════════════

TEST(ReaderErrors, PreambleChunks) {
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    for (const auto &c : m.chunks) {
      const uint64_t hdr = c.offset - w::kChunkHeaderSize;
      if (c.type == w::CHUNK_END) {
        // No CHUNK_END: the walk runs into preamble_end.
        Bytes b = s.bytes;
        put16(b, hdr, 0x7777);
        expect_status(b, USCOPE_ERR_TRUNCATED, s.name + " without CHUNK_END");
        continue;
      }
      // §2.3: a mandatory chunk turned into an unknown one is missing.
      Bytes b = s.bytes;
      put16(b, hdr, 0x7777);
      expect_status(b, USCOPE_ERR_CORRUPT, s.name + " chunk " + std::to_string(c.type) + " unknown");
      // Exactly one of each: a second schema chunk (the trace config turned
      // into one) is refused. The DUT chunk stays.
      if (c.type == w::CHUNK_TRACE_CONFIG) {
        b = s.bytes;
        put16(b, hdr, w::CHUNK_SCHEMA);
        expect_status(b, USCOPE_ERR_CORRUPT, s.name + " two schema chunks");
        // §2.4: the trace config holds a u64 (the padding keeps the walk aligned).
        b = s.bytes;
        put32(b, hdr + 4, 4);
        expect_status(b, USCOPE_ERR_CORRUPT, s.name + " 4-byte trace config");
      }
      // A chunk size that runs past preamble_end.
      b = s.bytes;
      put32(b, hdr + 4, 0xFFFFFFF0u);
      expect_status(b, USCOPE_ERR_TRUNCATED, s.name + " chunk " + std::to_string(c.type) + " huge");
    }
    // preamble_end inside the first chunk.
    Bytes b = s.bytes;
    put32(b, w::kHdrOffPreambleEnd, w::kFileHeaderSize + 4);
    expect_status(b, USCOPE_ERR_TRUNCATED, s.name + " preamble_end inside a chunk header");
  }
}

// ═════════════════════════ Section table (§5, COMPAT 7) ═════════════════════

TEST(ReaderErrors, SectionTableOffsetPastEof) {
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (!m.complete()) continue;
    for (uint64_t st : {uint64_t{s.bytes.size()}, uint64_t{s.bytes.size()} + 8, UINT64_MAX - 7}) {
      Bytes b = s.bytes;
      put64(b, w::kHdrOffSectionTable, st);
      expect_status(b, USCOPE_ERR_TRUNCATED, s.name + " section table at " + std::to_string(st));
    }
    // The last entry (SECTION_END) cut in half: a table without its end.
    Bytes b = s.bytes;
    put64(b, w::kHdrOffSectionTable, s.bytes.size() - w::kSectionEntrySize / 2);
    expect_status(b, USCOPE_ERR_TRUNCATED, s.name + " section table without SECTION_END");
  }
}

TEST(ReaderErrors, SectionEntriesPastEof) {
  size_t n = 0;
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (!m.complete()) continue;
    const uint64_t size = s.bytes.size();
    for (size_t i = 0; i < m.sections.size(); ++i, ++n) {
      const uint64_t e = m.section_entry_at(static_cast<int>(i));
      const auto &sec = m.sections[i];
      const std::string what = s.name + " section type " + std::to_string(sec.type);
      Bytes b = s.bytes;
      put64(b, e + 8, size + 1);  // offset past the end
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " offset past EOF");
      b = s.bytes;
      put64(b, e + 16, size - sec.offset + 1);  // one byte too long
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " size past EOF");
      b = s.bytes;
      put64(b, e + 8, UINT64_MAX - 3);  // offset + size wraps around 2^64
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " offset + size overflows");
      b = s.bytes;
      put64(b, e + 16, UINT64_MAX);
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " size 2^64-1");
    }
  }
  EXPECT_GE(n, 25u);
}

// ═════════════════════════ Segment table (§8.3) ═════════════════════════════

TEST(ReaderErrors, SegmentTableEntries) {
  size_t n = 0;
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (!m.complete() || m.segs.empty()) continue;
    ++n;
    const uint64_t size = s.bytes.size();
    for (size_t k : {size_t{0}, m.segs.size() - 1}) {
      const uint64_t e = m.segment_entry_at(k);
      const std::string what = s.name + " segment " + std::to_string(k);
      Bytes b = s.bytes;
      put64(b, e, size);  // the segment it names would start at EOF
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " at EOF");
      b = s.bytes;
      put64(b, e, size - 10);  // its header would run past EOF
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " header past EOF");
      b = s.bytes;
      put64(b, e, UINT64_MAX);
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " at 2^64-1");
      b = s.bytes;
      put64(b, e, 0);  // inside the file header
      expect_status(b, USCOPE_ERR_CORRUPT, what + " at offset 0");
      b = s.bytes;
      put64(b, e, m.h.preamble_end - 8);  // inside the preamble
      expect_status(b, USCOPE_ERR_CORRUPT, what + " inside the preamble");
      b = s.bytes;
      put64(b, e, m.segs[k].off + 1);  // not at a segment header (§8.1 magic)
      expect_status(b, USCOPE_ERR_CORRUPT, what + " one byte off");
    }
    // §8.3: 24-byte entries.
    Bytes b = s.bytes;
    const int sec = m.section(w::SECTION_SEGMENTS);
    put64(b, m.section_entry_at(sec) + 16, m.sections[sec].size - 1);
    expect_status(b, USCOPE_ERR_CORRUPT, s.name + " segment table of 24n-1 bytes");
  }
  EXPECT_GE(n, 12u);
}

// Segments are written one after the other (COMPAT 6), so their byte ranges
// do not overlap, and the table lists them in file order. A table that lists
// one segment twice, or whose segments overlap, is refused: it cannot come
// from a writer, and a table of N copies of one large segment would make
// events_in_range decode that segment N times (quadratic work from a file
// of linear size).
TEST(ReaderErrors, OverlappingSegments) {
  size_t n = 0;
  for (const Source &s : sources()) {
    const FileMap m = map_file(s.bytes);
    if (!m.complete() || m.segs.size() < 2) continue;
    ++n;
    Bytes b = s.bytes;
    put64(b, m.segment_entry_at(1), m.segs[0].off);  // segment 0 twice
    expect_status(b, USCOPE_ERR_CORRUPT, s.name + " segment 0 listed twice");
    // Every entry naming the first segment (all start at time 0 or later,
    // so the time order alone does not catch it).
    b = s.bytes;
    for (size_t k = 0; k < m.segs.size(); ++k) put64(b, m.segment_entry_at(k), m.segs[0].off);
    expect_status(b, USCOPE_ERR_CORRUPT, s.name + " every entry names segment 0");
    // The first segment's checkpoint grown into the second segment.
    b = s.bytes;
    put32(b, m.segs[0].off + kSegCkpt, static_cast<uint32_t>(m.segs[1].off - m.segs[0].ckpt() + 1));
    expect_status(b, USCOPE_ERR_CORRUPT, s.name + " segment 0 runs into segment 1");
  }
  EXPECT_GE(n, 8u);
}

// ═════════════════ Live files: tail_offset and the chain (§8.2) ═════════════

TEST(ReaderErrors, TailOffset) {
  size_t n = 0;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.complete() || m.segs.empty()) continue;
    ++n;
    const uint64_t size = src.bytes.size();
    auto with_tail = [&](uint64_t t) {
      Bytes b = src.bytes;
      put64(b, w::kHdrOffTailOffset, t);
      return b;
    };
    // Past the end: what a crash leaves when tail_offset reached the disk and
    // the segment did not.
    expect_status(with_tail(size), USCOPE_ERR_TRUNCATED, src.name + " tail at EOF");
    expect_status(with_tail(size + 4096), USCOPE_ERR_TRUNCATED, src.name + " tail past EOF");
    expect_status(with_tail(size - 20), USCOPE_ERR_TRUNCATED, src.name + " tail header past EOF");
    expect_status(with_tail(UINT64_MAX), USCOPE_ERR_TRUNCATED, src.name + " tail 2^64-1");
    // Inside the file, at something that is not a segment.
    expect_status(with_tail(8), USCOPE_ERR_CORRUPT, src.name + " tail in the file header");
    expect_status(with_tail(m.h.preamble_end - 8), USCOPE_ERR_CORRUPT, src.name + " tail in the preamble");
    expect_status(with_tail(m.segs.back().off + 1), USCOPE_ERR_CORRUPT, src.name + " tail one byte off");
    // tail_offset 0: no segment committed yet. The file answers as empty.
    const ReaderOutcome o = expect_status(with_tail(0), USCOPE_OK, src.name + " tail 0");
    EXPECT_EQ(o.digest.segments, 0u);
  }
  EXPECT_GE(n, 12u);
}

// §8.2: prev_segment_offset leads back to the first segment. Ours requires
// strictly decreasing offsets (COMPAT 15), so a cycle cannot loop forever.
TEST(ReaderErrors, PrevSegmentOffsetAndCycles) {
  size_t n = 0, cycles = 0;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.complete() || m.segs.empty()) continue;
    ++n;
    const Seg &last = m.segs.back();
    auto with_prev = [&](const Seg &s, uint64_t p) {
      Bytes b = src.bytes;
      put64(b, s.off + kSegPrev, p);
      return b;
    };
    // Past the end of the file is after the segment itself: forward.
    expect_status(with_prev(last, src.bytes.size()), USCOPE_ERR_CORRUPT, src.name + " prev past EOF");
    expect_status(with_prev(last, UINT64_MAX), USCOPE_ERR_CORRUPT, src.name + " prev 2^64-1");
    expect_status(with_prev(last, last.off), USCOPE_ERR_CORRUPT, src.name + " prev = itself");
    expect_status(with_prev(last, 16), USCOPE_ERR_CORRUPT, src.name + " prev in the file header");
    if (m.segs.size() >= 2) {
      // The first segment points at the last one: a cycle through the chain.
      ++cycles;
      expect_status(with_prev(m.segs.front(), last.off), USCOPE_ERR_CORRUPT, src.name + " cycle");
      expect_status(with_prev(last, m.segs[m.segs.size() - 2].off + 3), USCOPE_ERR_CORRUPT,
                    src.name + " prev one segment off");
    }
  }
  EXPECT_GE(n, 12u);
  EXPECT_GE(cycles, 8u);
}

// ═════════════════════════ Segments (§8.1, §8.5, §8.6.7) ════════════════════

TEST(ReaderErrors, SegmentSizesPastEof) {
  size_t n = 0;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    for (const Seg *s : {m.segs.empty() ? nullptr : &m.segs.front(), m.segs.empty() ? nullptr : &m.segs.back()}) {
      if (!s) continue;
      ++n;
      const uint64_t size = src.bytes.size();
      const std::string what = src.name + " segment at " + std::to_string(s->off);
      Bytes b = src.bytes;
      put32(b, s->off + kSegCkpt, 0xFFFFFFF0u);
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " checkpoint_size 2^32-16");
      b = src.bytes;
      put32(b, s->off + kSegDeltasComp, 0xFFFFFFF0u);
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " deltas_compressed_size 2^32-16");
      b = src.bytes;  // checkpoint + deltas one byte past the end
      put32(b, s->off + kSegDeltasComp, static_cast<uint32_t>(size - s->deltas() + 1));
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " deltas one byte past EOF");
      b = src.bytes;
      put32(b, s->off + kSegCkpt, static_cast<uint32_t>(size - s->ckpt() + 1));
      put32(b, s->off + kSegDeltasComp, 0);
      expect_status(b, USCOPE_ERR_TRUNCATED, what + " checkpoint one byte past EOF");
    }
  }
  EXPECT_GE(n, 24u);
}

TEST(ReaderErrors, SegmentSizeMismatches) {
  size_t n = 0;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty()) continue;
    ++n;
    const Seg &s = m.segs.back();  // the last segment has room after it
    const std::string what = src.name + " last segment";
    auto patched = [&](uint64_t field, uint32_t v) {
      Bytes b = src.bytes;
      put32(b, s.off + field, v);
      return b;
    };
    expect_status(patched(kSegDeltasRaw, s.h.deltas_raw_size + 1), USCOPE_ERR_CORRUPT, what + " raw size +1");
    if (s.h.deltas_raw_size)
      expect_status(patched(kSegDeltasRaw, s.h.deltas_raw_size - 1), USCOPE_ERR_CORRUPT, what + " raw size -1");
    expect_status(patched(kSegDeltasRaw, (1u << 30) + 1), USCOPE_ERR_CORRUPT, what + " raw size > 1 GiB");
    expect_status(patched(kSegDeltasComp, s.h.deltas_compressed_size - 1), USCOPE_ERR_CORRUPT,
                  what + " compressed size -1");
    // COMPAT 14: checkpoint_size is exactly the sum of the blocks. One byte
    // less and the checkpoint ends inside its last block: TRUNCATED, as the
    // codecs report a sized structure too short for what it declares (§8.5).
    // One byte more is left over after the last block: CORRUPT (unless the
    // segment ends the file, as in 10_live_incomplete: then it runs past it).
    expect_status(patched(kSegCkpt, s.h.checkpoint_size - 1), USCOPE_ERR_TRUNCATED, what + " checkpoint -1");
    expect_status(patched(kSegCkpt, s.h.checkpoint_size + 1),
                  s.end() < src.bytes.size() ? USCOPE_ERR_CORRUPT : USCOPE_ERR_TRUNCATED, what + " checkpoint +1");
    // §8.5: the first block names storage 0.
    if (!m.schema.storages.empty()) {
      Bytes b = src.bytes;
      put16(b, s.ckpt(), 1);
      expect_status(b, USCOPE_ERR_CORRUPT, what + " checkpoint block of storage 1 first");
    }
    // §8.1 magic.
    Bytes b = src.bytes;
    b[s.off + 3] ^= 0xFF;
    expect_status(b, USCOPE_ERR_CORRUPT, what + " segment magic");
  }
  EXPECT_GE(n, 30u);
}

// COMPAT 10: segments run forward in time, in order.
TEST(ReaderErrors, SegmentTimes) {
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty()) continue;
    const Seg &s = m.segs.back();
    Bytes b = src.bytes;
    put64(b, s.off + kSegTimeEnd, s.h.time_start_ps - 1);
    if (s.h.time_start_ps > 0) expect_status(b, USCOPE_ERR_TIME_BACKWARDS, src.name + " ends before it starts");
    if (m.segs.size() >= 2) {
      b = src.bytes;
      put64(b, s.off + kSegTimeStart, m.segs[m.segs.size() - 2].h.time_start_ps - 1);
      if (m.segs[m.segs.size() - 2].h.time_start_ps > 0)
        expect_status(b, USCOPE_ERR_TIME_BACKWARDS, src.name + " last segment starts before the one before it");
      // Neighbours may share a boundary time (every multi-segment file of the
      // corpus does, and opens), but may not overlap: here the last segment
      // starts one picosecond before its predecessor's end.
      const Seg &prev = m.segs[m.segs.size() - 2];
      if (prev.h.time_end_ps > prev.h.time_start_ps) {
        b = src.bytes;
        put64(b, s.off + kSegTimeStart, prev.h.time_end_ps - 1);
        expect_status(b, USCOPE_ERR_TIME_BACKWARDS, src.name + " last segment starts inside the one before it");
      }
    }
  }
}

// COMPAT 2: the 4-byte uncompressed size before the LZ4 block (and the zstd
// frame) must be the segment's deltas_raw_size.
TEST(ReaderErrors, WrongLz4SizePrefix) {
  size_t n = 0;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty() || codec_of(m.h) == kNone) continue;
    for (const Seg *s : {&m.segs.front(), &m.segs.back()}) {
      const uint32_t raw = get32(src.bytes, s->deltas());
      ASSERT_EQ(raw, s->h.deltas_raw_size) << src.name;
      for (uint32_t v : {raw + 1, raw - 1, 0u, raw * 2 + 64, UINT32_MAX}) {
        if (v == raw) continue;
        ++n;
        Bytes b = src.bytes;
        put32(b, s->deltas(), v);
        expect_status(b, USCOPE_ERR_CORRUPT, src.name + " size prefix " + std::to_string(v));
      }
    }
  }
  EXPECT_GE(n, 100u);
}

// A hostile blob: a few bytes that claim 1 GiB of deltas (the reader's
// limit), in both the header and the size prefix. The reader must refuse it
// without allocating the gigabyte first: an LZ4 block expands at most 255
// times (a zstd frame says its content size), so a size the blob cannot
// reach is corrupt before any buffer is sized.
TEST(ReaderErrors, HostileDeltaSizeAllocatesNothing) {
  for (Codec c : {kLz4, kZstd}) {
    uscope::Compressor comp(*c, 0);
    const Bytes raw(100, 0x42);
    Bytes blob;
    blob.resize(comp.compress(raw.data(), raw.size(), blob));
    Bytes hostile = blob;
    w::put_u32(hostile.data(), 1u << 30);
    std::vector<uint8_t> out;
    EXPECT_EQ(uscope::test::error_code([&] { uscope::decompress(*c, hostile.data(), hostile.size(), 1u << 30, out); }),
              USCOPE_ERR_CORRUPT);
    EXPECT_LT(out.capacity(), 1u << 20) << "decompress sized its buffer from the hostile prefix";
    // The same blob with its true size decodes.
    out.clear();
    uscope::decompress(*c, blob.data(), blob.size(), 1u << 30, out);
    EXPECT_EQ(out, raw);
  }
  // In a file: the last segment of our LZ4 trace claims 1 GiB.
  const Source &src = sources()[14];
  ASSERT_EQ(src.name, "ours_lz4_v02");
  const FileMap m = map_file(src.bytes);
  Bytes b = src.bytes;
  put32(b, m.segs.back().off + kSegDeltasRaw, 1u << 30);
  put32(b, m.segs.back().deltas(), 1u << 30);
  expect_status(b, USCOPE_ERR_CORRUPT, "1 GiB claimed by a small blob");
}

// The same file through the reader's own buffer: state_at in the middle of
// the last segment decodes only a prefix of its deltas into a buffer that
// the reader keeps (src/reader/trace_reader.cpp, segment_deltas), sized from
// deltas_raw_size. After the refusal, the heap must not hold the gigabyte.
TEST(ReaderErrors, HostileDeltaSizeAllocatesNothingInTheReader) {
  const Source &src = sources()[14];
  ASSERT_EQ(src.name, "ours_lz4_v02");
  const FileMap m = map_file(src.bytes);
  const Seg &last = m.segs.back();
  Bytes b = src.bytes;
  put32(b, last.off + kSegDeltasRaw, 1u << 30);
  put32(b, last.deltas(), 1u << 30);
  uscope::test::TempDir dir("reader_errors");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("hostile.uscope");
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
    std::fclose(f);
  }
  const size_t before = heap_in_use();
  uscope::TraceReader r(path, uscope::TraceReader::kStrict);  // opening reads no deltas of that segment
  const uint64_t mid = last.h.time_start_ps + (last.h.time_end_ps - last.h.time_start_ps) / 2;
  EXPECT_EQ(uscope::test::error_code([&] { r.state_at(mid); }), USCOPE_ERR_CORRUPT);
  EXPECT_EQ(uscope::test::error_code([&] { r.events_in_range(0, UINT64_MAX); }), USCOPE_ERR_CORRUPT);
  std::vector<uscope::StorageState> st = r.initial_state();
  uscope::test::ReaderDigest d;
  EXPECT_EQ(uscope::test::error_code([&] { r.replay(m.segs.size() - 1, st, uscope::test::detail::Counting{d}); }),
            USCOPE_ERR_CORRUPT);
  // Tolerant, the same segment is skipped and counted, and allocates as
  // little.
  uscope::TraceReader t(path);
  t.state_at(mid);
  t.events_in_range(0, UINT64_MAX);
  const auto defects = t.defects().entries();
  ASSERT_EQ(defects.size(), 1u);
  EXPECT_EQ(defects[0].kind, uscope::Defect::SegmentUndecodable);
  EXPECT_EQ(defects[0].first.segment, m.segs.size() - 1);
  EXPECT_EQ(defects[0].first.offset, last.off);
  const size_t during = heap_in_use();  // the readers (and their buffers) still alive
  EXPECT_LT(during, before + (64u << 20)) << "the readers hold " << (during - before) << " more heap bytes";
}

// ══════════════════ Ops and events against the schema (§8.6) ════════════════

// Re-encoding the last segment without changing it gives the same answers:
// the re-encoding itself, used by the cases below, damages nothing.
TEST(ReaderErrors, ReencodedLastSegmentAnswersTheSame) {
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty()) continue;
    const Bytes b = with_last_segment_deltas(src.bytes, m, raw_deltas(src.bytes, m, m.segs.back()));
    const ReaderOutcome o = expect_status(b, USCOPE_OK, src.name + " re-encoded");
    EXPECT_TRUE(o.digest == digests().at(src.name)) << src.name << ": answers changed";
  }
}

// Ops with ids the schema does not have (§8.6.2; the reference drops ops on
// unknown storages and panics on a bad field index): CORRUPT. Each case
// patches the first op of the right action in the last segment's raw blob.
TEST(ReaderErrors, OpsWithUnknownIds) {
  std::map<std::string, size_t> cases;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty()) continue;
    const Bytes raw = raw_deltas(src.bytes, m, m.segs.back());
    const std::vector<ItemAt> items = walk_items(raw, m.h.flags);
    auto first_op = [&](std::function<bool(const ItemAt &)> pred) -> const ItemAt * {
      for (const ItemAt &it : items)
        if (!it.event && pred(it)) return &it;
      return nullptr;
    };
    auto sid_of = [&](const ItemAt &it) -> uint16_t { return it.compact ? raw[it.sid_at] : get16(raw, it.sid_at); };
    auto run = [&](const std::string &kind, const ItemAt &it, std::function<void(Bytes &)> patch,
                   uscope_status_t want = USCOPE_ERR_CORRUPT) {
      Bytes r = raw;
      patch(r);
      ++cases[kind];
      expect_status(with_last_segment_deltas(src.bytes, m, r), want, src.name + ": " + kind);
    };
    const auto &storages = m.schema.storages;
    const uint16_t num_storages = static_cast<uint16_t>(storages.size());

    if (const ItemAt *op = first_op([](const ItemAt &i) { return i.action == w::DA_SLOT_SET || i.action == w::DA_SLOT_ADD; })) {
      const auto &st = storages.at(sid_of(*op));
      if (!op->compact || num_storages <= 0xFF)
        run("unknown storage", *op, [&](Bytes &r) {
          if (op->compact) r[op->sid_at] = static_cast<uint8_t>(num_storages);
          else put16(r, op->sid_at, num_storages);
        }, USCOPE_ERR_UNKNOWN_STORAGE);
      run("unknown slot", *op, [&](Bytes &r) { put16(r, op->slot_at, st.num_slots); }, USCOPE_ERR_UNKNOWN_SLOT);
      run("slot 0xFFFF", *op, [&](Bytes &r) { put16(r, op->slot_at, 0xFFFF); }, USCOPE_ERR_UNKNOWN_SLOT);
      run("unknown field", *op, [&](Bytes &r) { put16(r, op->field_at, static_cast<uint16_t>(st.fields.size())); },
          USCOPE_ERR_UNKNOWN_FIELD);
      for (uint8_t a : {0, 5, 0xFF})
        run("unknown action", *op, [&](Bytes &r) { r[op->action_at] = a; });
    }
    if (const ItemAt *op = first_op([](const ItemAt &i) { return i.action == w::DA_PROP_SET; })) {
      const auto &st = storages.at(sid_of(*op));
      run("unknown property", *op, [&](Bytes &r) { put16(r, op->field_at, static_cast<uint16_t>(st.props.size())); },
          USCOPE_ERR_UNKNOWN_PROPERTY);
      run("property 0xFFFF", *op, [&](Bytes &r) { put16(r, op->field_at, 0xFFFF); }, USCOPE_ERR_UNKNOWN_PROPERTY);
      if (!op->compact || num_storages <= 0xFF)
        run("property of unknown storage", *op, [&](Bytes &r) {
          if (op->compact) r[op->sid_at] = static_cast<uint8_t>(num_storages);
          else put16(r, op->sid_at, num_storages);
        }, USCOPE_ERR_UNKNOWN_STORAGE);
    }
    if (const ItemAt *op = first_op([](const ItemAt &i) { return i.action == w::DA_SLOT_CLEAR; })) {
      const auto &st = storages.at(sid_of(*op));
      run("clear of unknown slot", *op, [&](Bytes &r) { put16(r, op->slot_at, st.num_slots); }, USCOPE_ERR_UNKNOWN_SLOT);
      // §8.6.2: DA_SLOT_CLEAR ignores field_index, so any value there is fine.
      Bytes r = raw;
      put16(r, op->field_at, 0xFFFF);
      ++cases["clear ignores its field"];
      const ReaderOutcome o = expect_status(with_last_segment_deltas(src.bytes, m, r), USCOPE_OK,
                                            src.name + ": clear with field 0xFFFF");
      const auto &d = digests().at(src.name);
      EXPECT_EQ(o.digest.ops, d.ops) << src.name;
      EXPECT_EQ(o.digest.events, d.events) << src.name;
    }
  }
  // Our writer's traces and the corpus carry every kind of op, in v0.1 and
  // v0.2 frames, compact and wide: each case ran on many files.
  for (const char *k : {"unknown storage", "unknown slot", "slot 0xFFFF", "unknown field", "unknown action",
                        "unknown property", "property 0xFFFF", "property of unknown storage",
                        "clear of unknown slot", "clear ignores its field"})
    EXPECT_GE(cases[k], 8u) << k;
}

// §8.6.4: an event's payload_size must equal the sum of its fields' sizes;
// its type id must be in the schema.
TEST(ReaderErrors, EventsAgainstTheSchema) {
  std::map<std::string, size_t> cases;
  for (const Source &src : sources_and_live_copies()) {
    const FileMap m = map_file(src.bytes);
    if (m.segs.empty()) continue;
    const Bytes raw = raw_deltas(src.bytes, m, m.segs.back());
    const std::vector<ItemAt> items = walk_items(raw, m.h.flags);
    const ItemAt *ev = nullptr;
    for (const ItemAt &it : items)
      if (it.event) {
        ev = &it;
        break;
      }
    if (!ev) continue;
    // Strict statuses: the writer's for the same mistake (a defect a tolerant
    // reader skips), CORRUPT for a blob that does not decode.
    auto run = [&](const std::string &kind, Bytes r, uscope_status_t want) {
      ++cases[kind];
      expect_status(with_last_segment_deltas(src.bytes, m, r), want, src.name + ": " + kind);
    };
    Bytes r = raw;
    put16(r, ev->id_at, static_cast<uint16_t>(m.schema.events.size()));
    run("unknown event type", r, USCOPE_ERR_UNKNOWN_EVENT);
    r = raw;
    put16(r, ev->id_at, 0xFFFF);
    run("event type 0xFFFF", r, USCOPE_ERR_UNKNOWN_EVENT);
    // One byte more than the schema says (the byte is really there).
    r = raw;
    put32(r, ev->size_at, ev->payload_size + 1);
    r.insert(r.begin() + static_cast<ptrdiff_t>(ev->payload_at), 0xAB);
    run("payload one byte long", r, USCOPE_ERR_PAYLOAD_SIZE);
    if (ev->payload_size) {
      r = raw;
      put32(r, ev->size_at, ev->payload_size - 1);
      r.erase(r.begin() + static_cast<ptrdiff_t>(ev->payload_at));
      run("payload one byte short", r, USCOPE_ERR_PAYLOAD_SIZE);
    }
    // A payload size that runs past the end of the blob.
    r = raw;
    put32(r, ev->size_at, 0xFFFFFFF0u);
    run("payload past the blob", r, USCOPE_ERR_CORRUPT);
  }
  for (const char *k : {"unknown event type", "event type 0xFFFF", "payload one byte long", "payload one byte short",
                        "payload past the blob"})
    EXPECT_GE(cases[k], 8u) << k;
}

// ═══════════════════════ Hostile sizes: string table ════════════════════════

// §7: the string table's index entries point into its packed string data.
// Entries that all cover the same bytes would turn a table of n entries and
// d data bytes into n*d bytes of strings (quadratic in the file size); the
// strings of a real table take their own bytes, so their lengths add up to
// at most the data size.
TEST(ReaderErrors, StringTableEntriesThatOverlap) {
  const Source &src = sources()[14];
  ASSERT_EQ(src.name, "ours_lz4_v02");
  const FileMap m = map_file(src.bytes);
  const int sec = m.section(w::SECTION_STRINGS);
  ASSERT_GE(sec, 0);
  auto with_table = [&](uint32_t n, uint32_t len, bool overlap) {
    // A new table appended at the end; the STRINGS entry points at it.
    Bytes b = src.bytes;
    const uint64_t at = b.size();
    Bytes t(w::kStringTableHeaderSize, 0);
    w::put_u32(t.data(), n);
    for (uint32_t i = 0; i < n; ++i) {
      uint8_t e[8];
      w::put_u32(e, overlap ? 0 : i * (len + 1));
      w::put_u32(e + 4, len);
      t.insert(t.end(), e, e + 8);
    }
    t.insert(t.end(), overlap ? len + 1 : n * (len + 1), 'x');
    b.insert(b.end(), t.begin(), t.end());
    put64(b, m.section_entry_at(sec) + 8, at);
    put64(b, m.section_entry_at(sec) + 16, t.size());
    return b;
  };
  EXPECT_EQ(run_reader_on_bytes(with_table(50, 20, false)).status, USCOPE_OK);  // a valid table
  // The codec itself (src/format/file_codec.cpp): two entries "ab" sharing
  // the bytes of one "ab\0" are refused; the same strings packed apart are not.
  const Bytes shared = {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'a', 'b', 0};
  EXPECT_EQ(uscope::test::error_code([&] { uscope::decode_string_table(shared.data(), shared.size()); }),
            USCOPE_ERR_CORRUPT);
  Bytes apart;
  uscope::append_string_table(apart, {"ab", "ab"});
  EXPECT_EQ(uscope::decode_string_table(apart.data(), apart.size()), (std::vector<std::string>{"ab", "ab"}));
  expect_status(with_table(2000, 4000, true), USCOPE_ERR_CORRUPT, "2,000 entries over the same 4,000 bytes");
  expect_status(with_table(2, 10, true), USCOPE_ERR_CORRUPT, "two entries over the same bytes");
}

// ═════════════════════════ The fuzzer's seed corpus ════════════════════════

// tests/fuzz/corpus/reader/ seeds the libFuzzer target: valid files, so that
// mutations start deep in the format. Every seed opens and answers, and the
// set covers what the reader decodes (finalized and live files, LZ4, zstd,
// uncompressed, v0.1 and v0.2 frames, no segments).
TEST(ReaderErrors, FuzzSeedCorpusIsValid) {
  namespace fs = std::filesystem;
  std::set<std::string> names;
  uint64_t kinds = 0;
  for (const auto &e : fs::directory_iterator(std::string(USCOPE_FUZZ_CORPUS_DIR) + "/reader")) {
    const Bytes b = uscope::test::read_bytes(e.path().string());
    EXPECT_LE(b.size(), 4096u) << e.path() << ": keep seeds within libFuzzer's default -max_len";
    expect_status(b, USCOPE_OK, e.path().string());
    names.insert(e.path().filename().string());
    const FileMap m = map_file(b);
    kinds |= uint64_t{1} << codec_of(m.h)->id;
    kinds |= (m.complete() ? 8u : 16u) | (m.h.flags & w::F_INTERLEAVED_DELTAS ? 32u : 64u);
    if (m.segs.empty()) kinds |= 128u;
  }
  EXPECT_GE(names.size(), 9u);
  EXPECT_EQ(kinds, 255u) << "seed kinds: LZ4, zstd, none, finalized, live, v0.2, v0.1, empty";
}

}  // namespace
