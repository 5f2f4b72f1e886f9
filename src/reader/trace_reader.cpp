#include "reader/trace_reader.hpp"

#include <algorithm>

#include "format/error.hpp"
#include "format/wire.hpp"

namespace uscope {

namespace {
// A delta blob larger than this is refused before decompression, so a hostile
// size field cannot make us allocate gigabytes (our writer cuts at 256 MiB).
constexpr size_t kMaxRawDeltas = 1u << 30;

bool in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }
}  // namespace

TraceReader::TraceReader(const std::string &path) {
  file_.open(path);
  load_metadata();
  load_segments();
}

void TraceReader::load_metadata() {
  const uint8_t *f = file_.data();
  const size_t n = file_.size();
  header_ = decode_file_header(f, n);
  // COMPAT 4: the reference checks no version; we refuse an unknown major.
  if (header_.version_major != wire::kVersionMajor)
    fail(USCOPE_ERR_UNSUPPORTED_VERSION, "file-format version %u.%u; this reader knows %u.x",
         header_.version_major, header_.version_minor, wire::kVersionMajor);
  const uint32_t method = (header_.flags & wire::kCompMethodMask) >> wire::kCompMethodShift;
  if (!(header_.flags & wire::F_COMPRESSED)) {
    codec_ = Codec::None;
  } else if (method == wire::kCompLz4) {
    codec_ = Codec::Lz4;
  } else if (method == wire::kCompZstd) {
    codec_ = Codec::Zstd;
  } else {  // §8.6.7: readers must reject unknown methods (COMPAT 3)
    fail(USCOPE_ERR_UNKNOWN_COMPRESSION, "compression method %u is unknown (spec §2.1)", method);
  }
  const auto chunks = walk_chunks(f, n, header_.preamble_end);
  const ChunkRef *dut = nullptr, *schema = nullptr, *cfg = nullptr;
  for (const auto &c : chunks) {
    const ChunkRef **slot = c.type == wire::CHUNK_DUT_DESC ? &dut
                            : c.type == wire::CHUNK_SCHEMA ? &schema
                            : c.type == wire::CHUNK_TRACE_CONFIG ? &cfg
                                                                 : nullptr;
    if (!slot) continue;  // §2.3: unknown chunks are skipped
    if (*slot) fail(USCOPE_ERR_CORRUPT, "preamble: chunk type %u appears twice (spec §2.3)", c.type);
    *slot = &c;
  }
  if (!dut || !schema || !cfg)
    fail(USCOPE_ERR_CORRUPT, "preamble: the %s chunk is missing (spec §2.3)",
         !dut ? "DUT descriptor" : !schema ? "schema" : "trace config");
  schema_ = decode_schema(f + schema->offset, schema->size);
  dut_ = decode_dut(f + dut->offset, dut->size);
  if (cfg->size < 8) fail(USCOPE_ERR_CORRUPT, "trace config chunk of %u bytes (spec §2.4)", cfg->size);
  interval_ = wire::get_u64(f + cfg->offset);

  // Ids are positions: ops and checkpoints address storages by index.
  for (size_t i = 0; i < schema_.storages.size(); ++i)
    if (schema_.storages[i].storage_id != i)
      fail(USCOPE_ERR_CORRUPT, "schema: storage %zu has id %u", i, schema_.storages[i].storage_id);
  for (size_t i = 0; i < schema_.events.size(); ++i)
    if (schema_.events[i].event_type_id != i)
      fail(USCOPE_ERR_CORRUPT, "schema: event type %zu has id %u", i, schema_.events[i].event_type_id);
  for (const auto &st : schema_.storages) {
    for (const auto *fields : {&st.fields, &st.props})
      for (const auto &fd : *fields)
        if (wire::field_type_size(fd.type) == 0)
          fail(USCOPE_ERR_CORRUPT, "schema: field type 0x%02x is unknown (spec §4.2)", fd.type);
  }
  for (const auto &ev : schema_.events) {
    for (const auto &fd : ev.fields)
      if (wire::field_type_size(fd.type) == 0)
        fail(USCOPE_ERR_CORRUPT, "schema: field type 0x%02x is unknown (spec §4.2)", fd.type);
    event_sizes_.push_back(packed_size(ev.fields));
  }
  layouts_ = make_layouts(schema_);
}

void TraceReader::load_segments() {
  const uint8_t *f = file_.data();
  const size_t n = file_.size();
  std::vector<uint64_t> offsets;
  strings_.clear();
  summary_.reset();
  if (complete()) {
    const uint64_t st = header_.section_table_offset;
    if (st >= n) fail(USCOPE_ERR_TRUNCATED, "section table offset %llu is past the end (%zu bytes)",
                      (unsigned long long)st, n);
    const auto sections = decode_section_table(f + st, n - st);
    for (const auto &s : sections) {
      if (!in_file(s.offset, s.size, n))
        fail(USCOPE_ERR_TRUNCATED, "section type %u (offset %llu, %llu bytes) runs past the end",
             s.type, (unsigned long long)s.offset, (unsigned long long)s.size);
      const uint8_t *p = f + s.offset;
      if (s.type == wire::SECTION_SEGMENTS) {
        for (const auto &e : decode_segment_table(p, s.size)) offsets.push_back(e.offset);
      } else if (s.type == wire::SECTION_STRINGS) {
        strings_ = decode_string_table(p, s.size);
      } else if (s.type == wire::SECTION_COUNTER_SUMMARY) {
        summary_ = decode_tsum(p, s.size);
      }
    }
  } else {
    // COMPAT 12, 15: walk back from tail_offset. Offsets must strictly
    // decrease, so a cyclic chain cannot loop.
    uint64_t off = header_.tail_offset, prev_seen = UINT64_MAX;
    while (off != 0) {
      if (off >= prev_seen)
        fail(USCOPE_ERR_CORRUPT, "segment chain does not go backwards at offset %llu", (unsigned long long)off);
      if (off < header_.preamble_end || !in_file(off, wire::kSegmentHeaderSize, n))
        fail(USCOPE_ERR_CORRUPT, "segment chain points at offset %llu, outside the segment area",
             (unsigned long long)off);
      offsets.push_back(off);
      prev_seen = off;
      off = decode_segment_header(f + off, n - off).prev_segment_offset;
    }
    std::reverse(offsets.begin(), offsets.end());
  }
  segments_.clear();
  segments_.reserve(offsets.size());
  for (uint64_t off : offsets) {
    if (off < header_.preamble_end || !in_file(off, wire::kSegmentHeaderSize, n))
      fail(USCOPE_ERR_CORRUPT, "segment offset %llu is outside the file", (unsigned long long)off);
    SegmentInfo s;
    s.offset = off;
    s.header = decode_segment_header(f + off, n - off);
    const uint64_t body = uint64_t{s.header.checkpoint_size} + s.header.deltas_compressed_size;
    if (!in_file(off + wire::kSegmentHeaderSize, body, n))
      fail(USCOPE_ERR_TRUNCATED, "segment at offset %llu runs past the end of the file",
           (unsigned long long)off);
    if (s.header.time_end_ps < s.header.time_start_ps)
      fail(USCOPE_ERR_CORRUPT, "segment at offset %llu ends before it starts", (unsigned long long)off);
    if (!segments_.empty() && s.header.time_start_ps < segments_.back().header.time_start_ps)
      fail(USCOPE_ERR_CORRUPT, "segments are not in time order at offset %llu", (unsigned long long)off);
    if (s.header.deltas_raw_size > kMaxRawDeltas)
      fail(USCOPE_ERR_CORRUPT, "segment at offset %llu claims %u raw delta bytes", (unsigned long long)off,
           s.header.deltas_raw_size);
    segments_.push_back(s);
  }
}

const uint8_t *TraceReader::segment_deltas(size_t i) {
  const SegmentInfo &s = segments_[i];
  const uint8_t *blob = file_.data() + s.offset + wire::kSegmentHeaderSize + s.header.checkpoint_size;
  if (codec_ == Codec::None) {
    if (s.header.deltas_compressed_size != s.header.deltas_raw_size)
      fail(USCOPE_ERR_CORRUPT, "uncompressed segment at %llu: %u stored bytes, %u raw",
           (unsigned long long)s.offset, s.header.deltas_compressed_size, s.header.deltas_raw_size);
    return blob;  // straight from the map: no copy
  }
  decompress(codec_, blob, s.header.deltas_compressed_size, s.header.deltas_raw_size, deltas_);
  if (deltas_.size() != s.header.deltas_raw_size)
    fail(USCOPE_ERR_CORRUPT, "segment at %llu decompresses to %zu bytes, its header says %u",
         (unsigned long long)s.offset, deltas_.size(), s.header.deltas_raw_size);
  return deltas_.data();
}

void TraceReader::check_op(const DeltaOp &o, uint64_t t) const {
  // The reference reader drops ops on unknown storages and panics on a bad
  // field index; both are corrupt input here.
  if (o.action < wire::DA_SLOT_SET || o.action > wire::DA_PROP_SET)
    fail(USCOPE_ERR_CORRUPT, "op with unknown action %u at %llu ps", o.action, (unsigned long long)t);
  if (o.storage_id >= layouts_.size())
    fail(USCOPE_ERR_CORRUPT, "op on unknown storage %u at %llu ps", o.storage_id, (unsigned long long)t);
  const StorageLayout &L = layouts_[o.storage_id];
  if (o.action == wire::DA_PROP_SET) {
    if (o.field >= L.prop_off.size())
      fail(USCOPE_ERR_CORRUPT, "property %u of storage %u at %llu ps is not in the schema", o.field,
           o.storage_id, (unsigned long long)t);
    return;
  }
  if (o.slot >= L.num_slots)
    fail(USCOPE_ERR_CORRUPT, "slot %u of storage %u at %llu ps is out of range", o.slot, o.storage_id,
         (unsigned long long)t);
  if (o.action != wire::DA_SLOT_CLEAR && o.field >= L.field_off.size())
    fail(USCOPE_ERR_CORRUPT, "field %u of storage %u at %llu ps is not in the schema", o.field,
         o.storage_id, (unsigned long long)t);
}

std::vector<StorageState> TraceReader::initial_state() const {
  std::vector<StorageState> st;
  st.reserve(layouts_.size());
  for (const auto &L : layouts_) st.emplace_back(L);
  return st;
}

namespace {
struct NoVisit {
  void frame(uint64_t) {}
  void op(uint64_t, const DeltaOp &) {}
  void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
};
}  // namespace

std::vector<StorageState> TraceReader::state_at(uint64_t t) {
  std::vector<StorageState> st = initial_state();
  // The last segment starting at or before t: its checkpoint holds every
  // frame before its start (COMPAT 9), and segments may share a boundary time.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](uint64_t v, const SegmentInfo &s) { return v < s.header.time_start_ps; });
  if (it == segments_.begin()) return st;  // before any segment (or none): initial state
  replay(static_cast<size_t>(it - segments_.begin()) - 1, st, NoVisit{}, t);
  return st;
}

const std::vector<TimedEvent> &TraceReader::events_in_range(uint64_t t0, uint64_t t1) {
  events_.clear();
  if (t1 < t0) return events_;
  // Segments overlap only at their boundary times, so every event in [t0, t1]
  // is in a segment whose [start, end] meets [t0, t1]. (The reference misses
  // events at t0 when t0 is a segment start; see the corpus README.)
  auto first = std::lower_bound(segments_.begin(), segments_.end(), t0,
                                [](const SegmentInfo &s, uint64_t v) { return s.header.time_end_ps < v; });
  std::vector<uint8_t> payloads;
  struct Range {
    uint64_t t0, t1;
    std::vector<TimedEvent> &out;
    std::vector<uint8_t> &payloads;
    void frame(uint64_t) {}
    void op(uint64_t, const DeltaOp &) {}
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
      if (t < t0 || t > t1) return;
      // Offsets for now; turned into pointers once the buffer stops growing.
      out.push_back({t, id, reinterpret_cast<const uint8_t *>(payloads.size()), n});
      payloads.insert(payloads.end(), p, p + n);
    }
  } v{t0, t1, events_, payloads};
  std::vector<StorageState> st = initial_state();
  for (auto it = first; it != segments_.end() && it->header.time_start_ps <= t1; ++it)
    replay(static_cast<size_t>(it - segments_.begin()), st, v, 0);
  event_payloads_.swap(payloads);
  for (auto &e : events_)
    e.payload = event_payloads_.data() + reinterpret_cast<uintptr_t>(e.payload);
  return events_;
}

bool TraceReader::poll_new_segments() {
  file_.refresh();
  const size_t before = segments_.size();
  const uint64_t tail_before = header_.tail_offset;
  header_ = decode_file_header(file_.data(), file_.size());
  if (header_.tail_offset == tail_before && complete() == false) return false;
  load_segments();
  return segments_.size() != before;
}

}  // namespace uscope
