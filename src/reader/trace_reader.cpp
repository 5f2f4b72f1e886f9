#include "reader/trace_reader.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

namespace {
// A delta blob larger than this is refused before decompression, so a hostile
// size field cannot make us allocate gigabytes (our writer cuts at 256 MiB).
constexpr size_t kMaxRawDeltas = 1u << 30;

bool in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

struct NoVisit {
  void frame(uint64_t) {}
  void op(uint64_t, const DeltaOp &) {}
  void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
};
}  // namespace

TraceReader::TraceReader(const std::string &path, uint32_t flags)
    : strict_(flags & kStrict), check_values_(flags & kStrict) {
  try {
    open(path);
  } catch (const Error &e) {
    // Every open error names the file (the codecs' messages do not know it).
    if (std::strstr(e.what(), path.c_str())) throw;
    fail(e.code(), "%s: %s", path.c_str(), e.what());
  }
}

void TraceReader::open(const std::string &path) {
  file_.open(path, "a µScope trace");
  load_metadata();
  // Size again now that the header is read: a live writer may have appended
  // and committed segments since the file was sized (see poll_new_segments).
  file_.refresh();
  commit(load_segments(header_));
}

void TraceReader::check_flags(uint64_t flags) {
  // §2.1: bits 8-63 are reserved and must be zero. A bit we do not know may
  // change how everything after the header reads, so refuse rather than guess.
  if (flags & ~wire::kKnownFlags)
    fail(USCOPE_ERR_UNSUPPORTED_VERSION, "header flags 0x%llx set reserved bits 8-63 (spec §2.1)",
         (unsigned long long)flags);
}

const uint8_t *TraceReader::deltas(size_t i) {
  if (i >= segments_.size())
    fail(USCOPE_ERR_INVALID_ARGUMENT, "segment %zu of %zu", i, segments_.size());
  return segment_deltas(i);
}

TsumReadAt TraceReader::summary_read_at(uint64_t at) const {
  return [this, at](uint64_t off, void *dst, size_t len) { file_.read(at + off, dst, len, "trace summary"); };
}

TsumReadAt TraceReader::summary_read() const {
  if (!summary_) fail(USCOPE_ERR_NOT_FOUND, "%s has no trace summary", file_.path().c_str());
  return summary_read_at(summary_offset_);
}

void TraceReader::summary_density(const TsumArray &a, uint64_t first, size_t n, uint32_t *out) const {
  read_tsum_density(a, first, n, out, summary_read());
}

void TraceReader::summary_mipmap(const TsumArray &a, uint64_t first, size_t n, MipmapEntry *out) const {
  read_tsum_mipmap(a, first, n, out, summary_read());
}

TraceSummary TraceReader::load_summary() const { return load_tsum(*summary_, summary_read()); }

void TraceReader::commit(Index &&x) {
  sections_ = std::move(x.sections);
  segment_table_ = std::move(x.segment_table);
  segments_ = std::move(x.segments);
  strings_ = std::move(x.strings);
  summary_ = std::move(x.summary);
  summary_offset_ = x.summary_offset;
  deltas_segment_ = SIZE_MAX;  // indices may now name other segments
  body_segment_ = SIZE_MAX;
  body_valid_ = 0;
  index_defects_ = x.defects;
  detect_conventions();
}

void TraceReader::load_metadata() {
  uint8_t hb[wire::kFileHeaderSize];
  const size_t got = file_.read_some(0, hb, sizeof hb);
  // Say what the file is when it is not a trace: the usual mistakes are an
  // empty file (a run that never opened its writer), a pccx container or
  // JSON-Lines given to the wrong reader.
  if (got < 4 || std::memcmp(hb, "uSCP", 4) != 0)  // spec §2: magic
    // An empty file or the start of the magic: a trace cut short.
    fail(got < 4 && std::memcmp(hb, "uSCP", got) == 0 ? USCOPE_ERR_TRUNCATED : USCOPE_ERR_BAD_MAGIC,
         "expected a µScope trace (magic \"uSCP\", spec §2), found %s", describe_content(hb, got).c_str());
  header_ = decode_file_header(hb, got);
  check_flags(header_.flags);
  // COMPAT 4: the reference checks no version; we refuse an unknown major.
  if (header_.version_major != wire::kVersionMajor)
    fail(USCOPE_ERR_UNSUPPORTED_VERSION, "file-format version %u.%u; this reader knows %u.x",
         header_.version_major, header_.version_minor, wire::kVersionMajor);
  // §8.6.7: readers must reject unknown methods (COMPAT 3). Values 2-7 are
  // reserved and must not be used (§2.1), with or without F_COMPRESSED.
  codec_ = compression_by_flags(header_.flags);
  if (!codec_)
    fail(USCOPE_ERR_UNKNOWN_COMPRESSION, "compression method %u is unknown (spec §2.1)",
         static_cast<unsigned>((header_.flags & wire::kCompMethodMask) >> wire::kCompMethodShift));
  // The preamble, read once: everything in it is decoded into our own
  // structures below, and the buffer is dropped on return.
  std::vector<uint8_t> pre(std::min<uint64_t>(header_.preamble_end, file_.size()));
  const size_t n = file_.read_some(0, pre.data(), pre.size());
  const uint8_t *f = pre.data();
  chunks_ = walk_chunks(f, n, header_.preamble_end);
  const ChunkRef *dut = nullptr, *schema = nullptr, *cfg = nullptr;
  for (const auto &c : chunks_) {
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
  // Enum values as bit sets (§4.5: values are u8), for enum_out_of_range.
  enum_values_.assign(schema_.enums.size(), {});
  for (size_t e = 0; e < schema_.enums.size(); ++e)
    for (const auto &v : schema_.enums[e].values) enum_values_[e][v.value >> 6] |= uint64_t{1} << (v.value & 63);
  auto checked = [](const FieldDef &fd) { return fd.type == wire::FT_ENUM || fd.type == wire::FT_STRING_REF; };
  op_bounds_.clear();
  for (size_t i = 0; i < layouts_.size(); ++i) {
    const auto &L = layouts_[i];
    uint32_t mask = 0;
    const StorageDef &sd = schema_.storages[i];
    for (size_t k = 0; k < sd.fields.size(); ++k)
      if (checked(sd.fields[k])) mask |= value_bit(static_cast<uint16_t>(std::min<size_t>(k, 0xFFFF)), false);
    for (size_t k = 0; k < sd.props.size(); ++k)
      if (checked(sd.props[k])) mask |= value_bit(static_cast<uint16_t>(std::min<size_t>(k, 0xFFFF)), true);
    op_bounds_.push_back({L.num_slots, static_cast<uint32_t>(L.field_off.size()),
                          static_cast<uint32_t>(L.prop_off.size()), mask});
  }
  event_checks_.assign(schema_.events.size(), {});
  event_has_checks_.assign(schema_.events.size(), 0);
  for (size_t e = 0; e < schema_.events.size(); ++e) {
    uint32_t off = 0;
    for (const auto &fd : schema_.events[e].fields) {
      const uint32_t size = wire::field_type_size(fd.type);
      if (checked(fd)) event_checks_[e].push_back({off, static_cast<uint8_t>(size), fd.type, fd.enum_id});
      off += size;
    }
    event_has_checks_[e] = !event_checks_[e].empty();
  }
  // §4.9: the timeline is the union of the clocks' edges; a timestamp off
  // every clock's grid is off their greatest common divisor too.
  clock_gcd_ = 0;
  for (const auto &c : schema_.clocks)
    if (c.period_ps) clock_gcd_ = std::gcd<uint64_t, uint64_t>(clock_gcd_, c.period_ps);
  grid_ps_ = clock_gcd_;
}

TraceReader::Index TraceReader::load_segments(const FileHeader &h) const {
  const size_t n = static_cast<size_t>(file_.size());
  Index x;
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> buf;
  if (h.flags & wire::F_COMPLETE) {
    const uint64_t st = h.section_table_offset;
    if (st >= n) fail(USCOPE_ERR_TRUNCATED, "section table offset %llu is past the end (%zu bytes)",
                      (unsigned long long)st, n);
    // The table runs to its SECTION_END entry: read a few entries, more only
    // when that was not enough (a table is a handful of entries).
    for (size_t want = 64 * wire::kSectionEntrySize;; want *= 4) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(want, n - st));
      buf.resize(len);
      file_.read(st, buf.data(), len, "section table");
      try {
        x.sections = decode_section_table(buf.data(), len);
        break;
      } catch (const Error &e) {
        if (e.code() != USCOPE_ERR_TRUNCATED || len == n - st) throw;
      }
    }
    for (const auto &s : x.sections) {
      if (!in_file(s.offset, s.size, n))
        fail(USCOPE_ERR_TRUNCATED, "section type %u (offset %llu, %llu bytes) runs past the end",
             s.type, (unsigned long long)s.offset, (unsigned long long)s.size);
      if (s.type == wire::SECTION_COUNTER_SUMMARY) {
        // Only its headers: the arrays, which grow with the trace's
        // length, are read when asked for (summary_density, summary_mipmap).
        x.summary = index_tsum(s.size, summary_read_at(s.offset));
        x.summary_offset = s.offset;
        continue;
      }
      if (s.type != wire::SECTION_SEGMENTS && s.type != wire::SECTION_STRINGS)
        continue;  // not read: unknown sections are skipped (§5)
      buf.resize(static_cast<size_t>(s.size));
      file_.read(s.offset, buf.data(), buf.size(), "section");
      const uint8_t *p = buf.data();
      if (s.type == wire::SECTION_SEGMENTS) {
        x.segment_table = decode_segment_table(p, s.size);
        for (const auto &e : x.segment_table) offsets.push_back(e.offset);
      } else if (s.type == wire::SECTION_STRINGS) {
        x.strings = decode_string_table(p, s.size);
      }
    }
  } else {
    // COMPAT 12, 15: walk back from tail_offset. Offsets must strictly
    // decrease, so a cyclic chain cannot loop.
    uint64_t off = h.tail_offset;
    while (off != 0) {
      if (!offsets.empty() && off >= offsets.back())
        fail(USCOPE_ERR_CORRUPT, "segment chain does not go backwards at offset %llu", (unsigned long long)off);
      if (off < h.preamble_end)
        fail(USCOPE_ERR_CORRUPT, "segment chain points at offset %llu, inside the preamble",
             (unsigned long long)off);
      // Past the end: what a crash leaves when tail_offset reached the disk
      // before the segment did (without fdatasync the order is not kept).
      if (!in_file(off, wire::kSegmentHeaderSize, n))
        fail(USCOPE_ERR_TRUNCATED, "segment chain points at offset %llu, past the end (%zu bytes)",
             (unsigned long long)off, n);
      offsets.push_back(off);
      uint8_t sh[wire::kSegmentHeaderSize];
      file_.read(off, sh, sizeof sh, "segment header at the chain's step", offsets.size() - 1);
      off = decode_segment_header(sh, sizeof sh).prev_segment_offset;
    }
    std::reverse(offsets.begin(), offsets.end());
  }
  auto &segs = x.segments;
  segs.reserve(offsets.size());
  uint64_t prev_end = h.preamble_end;
  // A segment whose header or place does not fit is left out of the index
  // and counted (strict: the error is thrown, with the status it always
  // had). k is its place in the file's list of segments.
  bool gap = false;  // the segment before the next one kept was left out
  auto leave_out = [&](size_t k, uint64_t off, Defect d, uscope_status_t code, uint64_t t, std::string msg) {
    if (strict_) throw Error(code, std::move(msg));
    x.defects.add(d, DefectPlace{static_cast<uint32_t>(k), off, t});
    gap = true;
  };
  for (size_t k = 0; k < offsets.size(); ++k) {
    const uint64_t off = offsets[k];
    // An offset or size past the end is TRUNCATED, like every structure the
    // file ends before; one inside the file at the wrong place is CORRUPT.
    if (off < h.preamble_end) {
      leave_out(k, off, Defect::SegmentUndecodable, USCOPE_ERR_CORRUPT, 0,
                format_message("segment offset %llu is inside the preamble", (unsigned long long)off));
      continue;
    }
    if (!in_file(off, wire::kSegmentHeaderSize, n)) {
      leave_out(k, off, Defect::SegmentUndecodable, USCOPE_ERR_TRUNCATED, 0,
                format_message("segment offset %llu is past the end (%zu bytes)", (unsigned long long)off, n));
      continue;
    }
    SegmentInfo s;
    s.offset = off;
    uint8_t sh[wire::kSegmentHeaderSize];
    file_.read(off, sh, sizeof sh, "the header of segment", segs.size());
    try {
      s.header = decode_segment_header(sh, sizeof sh);
    } catch (const Error &e) {
      leave_out(k, off, Defect::SegmentUndecodable, e.code(), 0, e.what());
      continue;
    }
    const uint64_t body = uint64_t{s.header.checkpoint_size} + s.header.deltas_compressed_size;
    if (!in_file(off + wire::kSegmentHeaderSize, body, n)) {
      leave_out(k, off, Defect::SegmentUndecodable, USCOPE_ERR_TRUNCATED, s.header.time_start_ps,
                format_message("segment at offset %llu runs past the end of the file", (unsigned long long)off));
      continue;
    }
    // Segments are appended one after the other (COMPAT 6): in file order,
    // never overlapping. This also stops a table that names one segment many
    // times from making events_in_range decode it as often.
    if (off < prev_end) {
      leave_out(k, off, Defect::SegmentUndecodable, USCOPE_ERR_CORRUPT, s.header.time_start_ps,
                format_message("segment at offset %llu overlaps the one before it (which ends at %llu)",
                               (unsigned long long)off, (unsigned long long)prev_end));
      continue;
    }
    if (s.header.time_end_ps < s.header.time_start_ps) {
      leave_out(k, off, Defect::TimeBackwards, USCOPE_ERR_TIME_BACKWARDS, s.header.time_start_ps,
                format_message("segment at offset %llu ends before it starts", (unsigned long long)off));
      continue;
    }
    // One after the other in time too; neighbours may share their boundary
    // time (a segment ends at its last frame, COMPAT 10, and the next may
    // start at that same time). The binary searches of state_at and
    // events_in_range rely on this order.
    if (!segs.empty() && s.header.time_start_ps < segs.back().header.time_end_ps) {
      leave_out(k, off, Defect::TimeBackwards, USCOPE_ERR_TIME_BACKWARDS, s.header.time_start_ps,
                format_message("segment at offset %llu starts at %llu ps, before the one before it ends (%llu ps)",
                               (unsigned long long)off, (unsigned long long)s.header.time_start_ps,
                               (unsigned long long)segs.back().header.time_end_ps));
      continue;
    }
    if (s.header.deltas_raw_size > kMaxRawDeltas) {
      leave_out(k, off, Defect::SegmentUndecodable, USCOPE_ERR_CORRUPT, s.header.time_start_ps,
                format_message("segment at offset %llu claims %u raw delta bytes", (unsigned long long)off,
                               s.header.deltas_raw_size));
      continue;
    }
    prev_end = off + wire::kSegmentHeaderSize + body;
    s.file_index = static_cast<uint32_t>(k);
    s.after_gap = gap;
    gap = false;
    segs.push_back(s);
  }
  return x;
}

const uint8_t *TraceReader::segment_body(size_t i, size_t len) {
  const SegmentInfo &s = segments_[i];
  const size_t n = size_t{s.header.checkpoint_size} + s.header.deltas_compressed_size;
  if (len > n) len = n;
  if (body_segment_ == i && body_valid_ >= len) return body_.data();
  // Sized for the whole body at once, so that reading more of the same
  // segment later never moves the bytes already handed out (a checkpoint
  // pointer stays valid). Only grows: no zero-fill per segment.
  if (body_.size() < n) body_.resize(n);
  const size_t from = body_segment_ == i ? body_valid_ : 0;
  body_segment_ = SIZE_MAX;
  file_.read(s.offset + wire::kSegmentHeaderSize + from, body_.data() + from, len - from, "segment", i);
  body_segment_ = i;
  body_valid_ = len;
  return body_.data();
}

const uint8_t *TraceReader::segment_deltas(size_t i, size_t want, size_t *avail) {
  const SegmentInfo &s = segments_[i];
  const uint32_t raw = s.header.deltas_raw_size;
  const size_t ckpt = s.header.checkpoint_size;
  if (want > raw) want = raw;
  if (!codec_->compressed) {
    if (s.header.deltas_compressed_size != raw)
      fail(USCOPE_ERR_CORRUPT, "uncompressed segment at %llu: %u stored bytes, %u raw",
           (unsigned long long)s.offset, s.header.deltas_compressed_size, raw);
    // Stored as is: read only the bytes asked for, and use them in place.
    if (avail) *avail = want;
    return segment_body(i, ckpt + want) + ckpt;
  }
  if (avail) *avail = raw;
  if (deltas_segment_ == i && deltas_valid_ >= want) {
    if (avail) *avail = deltas_valid_;
    return deltas_.data();
  }
  deltas_segment_ = SIZE_MAX;
  const uint32_t n = s.header.deltas_compressed_size;
  // Only a prefix of the raw deltas is needed (state_at, events_in_range):
  // read only the compressed bytes that hold it, guessed in proportion with
  // a margin. Both codecs decode a prefix from a cut blob and fail cleanly
  // when it is too short; then the whole blob is read and decoded. (Reading
  // the whole blob each time costs about 10% of such a query.)
  size_t have = n;
  if (want < raw) {
    const uint64_t guess = uint64_t{wire::kBlobSizePrefix} + uint64_t{n} * want / raw + n / 32 + 16384;
    if (guess < n) have = static_cast<size_t>(guess);
  }
  const uint8_t *blob = segment_body(i, ckpt + have) + ckpt;
  check_decoded_size(*codec_, blob, n, raw);  // before deltas_ is sized from the header
  if (n >= wire::kBlobSizePrefix && wire::get_u32(blob) == raw) {
    // LZ4 and zstd can stop early (want < raw); want == raw decodes the
    // whole blob. The buffer only grows, and never zero-filled (ByteBuffer):
    // the pages of a prefix never decoded are never made resident.
    if (deltas_.size() < raw) deltas_.resize(raw);
    bool done = false;
    if (have < n) {
      try {
        deltas_valid_ = decompress_prefix(*codec_, blob, have, raw, want, deltas_.data());
        done = true;
      } catch (const Error &) {
        // The guess was short (or the blob is bad: the whole one says which).
      }
    }
    if (!done) {
      blob = segment_body(i) + ckpt;
      deltas_valid_ = decompress_prefix(*codec_, blob, n, raw, want, deltas_.data());
    }
  } else {
    // The blob's size prefix disagrees with the header (or is missing):
    // decoded aside only to say which size it has, which is never raw.
    blob = segment_body(i) + ckpt;
    std::vector<uint8_t> out;
    decompress(*codec_, blob, n, raw, out);
    if (out.size() != raw)
      fail(USCOPE_ERR_CORRUPT, "segment at %llu decompresses to %zu bytes, its header says %u",
           (unsigned long long)s.offset, out.size(), raw);
    if (deltas_.size() < raw) deltas_.resize(raw);
    if (raw) std::memcpy(deltas_.data(), out.data(), raw);
    deltas_valid_ = raw;
  }
  deltas_segment_ = i;
  if (avail) *avail = deltas_valid_;
  return deltas_.data();
}

size_t TraceReader::deltas_for_time(size_t i, uint64_t t) const {
  const SegmentHeader &h = segments_[i].header;
  const size_t raw = h.deltas_raw_size;
  if (t >= h.time_end_ps || h.time_end_ps <= h.time_start_ps) return raw;
  const double part = t <= h.time_start_ps ? 0.0
                      : static_cast<double>(t - h.time_start_ps) /
                            static_cast<double>(h.time_end_ps - h.time_start_ps);
  // Margin: 1/32 of the segment plus 8 KiB, so that a frame a little later
  // than the proportional guess is still inside.
  const double want = part * static_cast<double>(raw) + static_cast<double>(raw / 32) + 8192.0;
  return want >= static_cast<double>(raw) ? raw : static_cast<size_t>(want);
}

void TraceReader::bad_op(Pass &p, const DeltaOp &o, uint64_t t) const {
  // The reference reader drops ops on unknown storages and on slots past the
  // size (COMPAT 27) and panics on a bad field index; here each is skipped
  // and counted, or in strict mode refused with the status a writer gives.
  const unsigned long long tt = t;
  Defect k;
  uscope_status_t code;
  std::string msg;
  if (o.action < wire::DA_SLOT_SET || o.action > wire::DA_PROP_SET) {
    k = Defect::UnknownOpAction, code = USCOPE_ERR_CORRUPT;
    if (strict_) msg = format_message("op with unknown action %u at %llu ps", o.action, tt);
  } else if (o.storage_id >= layouts_.size()) {
    k = Defect::UnknownStorage, code = USCOPE_ERR_UNKNOWN_STORAGE;
    if (strict_) msg = format_message("op on unknown storage %u at %llu ps", o.storage_id, tt);
  } else if (o.action == wire::DA_PROP_SET) {
    k = Defect::FieldOutOfRange, code = USCOPE_ERR_UNKNOWN_PROPERTY;
    if (strict_)
      msg = format_message("property %u of storage %u at %llu ps is not in the schema", o.field, o.storage_id, tt);
  } else if (o.slot >= layouts_[o.storage_id].num_slots) {
    k = Defect::SlotOutOfRange, code = USCOPE_ERR_UNKNOWN_SLOT;
    if (strict_)
      msg = format_message("slot %u of storage %u at %llu ps is out of range (%u slots)", o.slot, o.storage_id, tt,
                           layouts_[o.storage_id].num_slots);
  } else {
    k = Defect::FieldOutOfRange, code = USCOPE_ERR_UNKNOWN_FIELD;
    if (strict_) msg = format_message("field %u of storage %u at %llu ps is not in the schema", o.field, o.storage_id, tt);
  }
  if (strict_) throw Error(code, msg);
  p.tally.add(k, p.at(t, o.storage_id));
}

bool TraceReader::bad_event(Pass &p, uint16_t id, uint32_t n, uint64_t t) const {
  const unsigned long long tt = t;
  if (id >= event_sizes_.size()) {
    if (strict_) fail(USCOPE_ERR_UNKNOWN_EVENT, "event of unknown type %u at %llu ps", id, tt);
    p.tally.add(Defect::UnknownEventType, p.at(t, id), 1, true);
    return true;
  }
  if (n != event_sizes_[id]) {
    if (strict_)
      fail(USCOPE_ERR_PAYLOAD_SIZE, "event %u at %llu ps has a %u-byte payload; the schema says %u", id, tt, n,
           event_sizes_[id]);
    p.tally.add(Defect::EventPayloadSize, p.at(t, id), 1, true);
    return true;
  }
  return false;
}

bool TraceReader::value_ok(uint8_t type, uint8_t enum_id, uint64_t v) const {
  // The field's two highest values mark "no value" (absent, null) in the
  // protocols that need one (docs/npu-protocol.md §2.4): they name nothing.
  const uint64_t ones = type == wire::FT_ENUM ? 0xFF : 0xFFFFFFFFu;
  if (v == ones || v == ones - 1) return true;
  if (type == wire::FT_ENUM)
    return enum_id < enum_values_.size() && v < 256 && (enum_values_[enum_id][v >> 6] >> (v & 63) & 1);
  // FT_STRING_REF: the string table is written at close (§5), so only a
  // finalized file can show a reference past it.
  return !complete() || v < strings_.size();
}

void TraceReader::check_value(Pass &p, const DeltaOp &o, uint64_t t) const {
  const bool prop = o.action == wire::DA_PROP_SET;
  const StorageDef &sd = schema_.storages[o.storage_id];
  const FieldDef &fd = prop ? sd.props[o.field] : sd.fields[o.field];
  if (fd.type != wire::FT_ENUM && fd.type != wire::FT_STRING_REF) return;  // a field past bit 15's range
  if (value_ok(fd.type, fd.enum_id, o.value)) return;
  const bool is_enum = fd.type == wire::FT_ENUM;
  if (strict_)
    fail(USCOPE_ERR_VALUE_RANGE, "%s %u of storage %u at %llu ps: %s %llu is not %s", prop ? "property" : "field",
         o.field, o.storage_id, (unsigned long long)t, is_enum ? "enum value" : "string reference",
         (unsigned long long)o.value, is_enum ? "a value of its enum" : "in the string table");
  p.tally.add(is_enum ? Defect::EnumOutOfRange : Defect::StringRefOutOfRange, p.at(t, o.storage_id));
}

void TraceReader::check_event_values(Pass &p, uint16_t id, const uint8_t *payload, uint64_t t) const {
  for (const ValueCheck &c : event_checks_[id]) {
    const uint64_t v = wire::get_field(payload + c.offset, c.size);
    if (value_ok(c.type, c.enum_id, v)) continue;
    const bool is_enum = c.type == wire::FT_ENUM;
    if (strict_)
      fail(USCOPE_ERR_VALUE_RANGE, "event %u at %llu ps: %s %llu is not %s", id, (unsigned long long)t,
           is_enum ? "enum value" : "string reference", (unsigned long long)v,
           is_enum ? "a value of its enum" : "in the string table");
    p.tally.add(is_enum ? Defect::EnumOutOfRange : Defect::StringRefOutOfRange, p.at(t, id), 1, true);
  }
}

void TraceReader::time_backwards(Pass &p, uint64_t t, uint64_t last) const {
  if (strict_)
    fail(USCOPE_ERR_TIME_BACKWARDS, "segment %u: a frame at %llu ps follows one at %llu ps", p.segment,
         (unsigned long long)t, (unsigned long long)last);
  p.tally.add(Defect::TimeBackwards, p.at(t), 1, true);  // met by every kind of pass, as events are
}

void TraceReader::segment_failed(Pass &p, const Error &e) {
  // Only a defect of the segment's bytes is tolerated; the file changing
  // under the reader, an I/O error or a bug is not something to skip.
  const uscope_status_t c = e.code();
  if (dynamic_cast<const FileChanged *>(&e) != nullptr || (c != USCOPE_ERR_CORRUPT && c != USCOPE_ERR_TRUNCATED && !strict_))
    throw;  // called from a catch block: the error being handled
  // Strict: the error, said where (the codecs' messages know no segment).
  if (strict_) fail(c, "segment %u at offset %llu: %s", p.segment, (unsigned long long)p.offset, e.what());
  p.tally.add(Defect::SegmentUndecodable, p.at(segments_[p.index].header.time_start_ps), 1, true);
  // Whatever was cached of this segment may be half of it.
  deltas_segment_ = SIZE_MAX;
}

void TraceReader::load_start_state(size_t i, std::vector<StorageState> &st) {
  if (!eos_) {
    const SegmentInfo &s = segments_[i];
    decode_checkpoint(segment_body(i, s.header.checkpoint_size), s.header.checkpoint_size, st);
    return;
  }
  // COMPAT 28: segment i starts where segment i-1's checkpoint says it ended.
  if (i == 0) {
    st = initial_state();
    return;
  }
  const SegmentInfo &prev = segments_[i - 1];
  Pass p = pass(i - 1);
  try {
    decode_checkpoint(segment_body(i - 1, prev.header.checkpoint_size), prev.header.checkpoint_size, st);
  } catch (const Error &e) {
    segment_failed(p, e);
    record(p);
    // No start state to be had for segment i: its items are applied to an
    // empty one (the defect says so).
    st = initial_state();
  }
}

void TraceReader::reserve_segment_buffers(size_t first, size_t last) {
  size_t body = 0, raw = 0;
  for (size_t i = first; i < last && i < segments_.size(); ++i) {
    const SegmentHeader &h = segments_[i].header;
    body = std::max(body, size_t{h.checkpoint_size} + h.deltas_compressed_size);
    raw = std::max(raw, size_t{h.deltas_raw_size});
  }
  if (body_.size() < body) body_.resize(body);
  if (codec_->compressed && deltas_.size() < raw) deltas_.resize(raw);
}

void TraceReader::replay_part_begin(size_t i, ReplayPart &part) const {
  if (i >= segments_.size()) fail(USCOPE_ERR_INVALID_ARGUMENT, "replay_part_begin: segment %zu of %zu", i, segments_.size());
  part.segment = i;
  part.offset = 0;
  part.base_ps = part.last_ps = segments_[i].header.time_start_ps;
  part.started = false;
  part.done = false;
  part.tally = DefectTally{};
}

std::vector<StorageState> TraceReader::initial_state() const {
  std::vector<StorageState> st;
  st.reserve(layouts_.size());
  for (const auto &L : layouts_) st.emplace_back(L);
  return st;
}


size_t TraceReader::apply_until(size_t i, const uint8_t *d, size_t n, std::vector<StorageState> &st, uint64_t t,
                                Pass &p) {
  const uint64_t t0 = segments_[i].header.time_start_ps;
  const bool interleaved = header_.flags & wire::F_INTERLEAVED_DELTAS;
  const bool compact = header_.flags & wire::F_COMPACT_DELTAS;
  NoVisit nv;
  if (check_values_) {
    Apply<true, NoVisit, true> a(*this, st, nv, t, p, t0);
    return decode_deltas(d, n, t0, interleaved, compact, a);
  }
  Apply<true, NoVisit, false> a(*this, st, nv, t, p, t0);
  return decode_deltas(d, n, t0, interleaved, compact, a);
}

void TraceReader::replay_until(size_t i, std::vector<StorageState> &st, uint64_t t) {
  const SegmentInfo &s = segments_[i];
  Pass p = pass(i);
  try {
    load_start_state(i, st);  // may replace st's storage: Apply is made after it
    size_t avail = 0;
    const uint8_t *d = segment_deltas(i, deltas_for_time(i, t), &avail);
    if (avail < s.header.deltas_raw_size) {
      // Only a prefix: enough if a frame after t starts inside it. If it is
      // not, or the prefix cuts a frame (an error here), start again from the
      // start state with every byte, where a real error is reported as such.
      try {
        Pass prefix = p;
        if (apply_until(i, d, avail, st, t, prefix) < avail) {
          record(prefix);
          return;
        }
      } catch (const FileChanged &) {
        throw;
      } catch (const Error &) {
        // A cut frame, or a defect (strict) that the whole read below meets
        // again and reports as such.
      }
      load_start_state(i, st);
      d = segment_deltas(i);
    }
    apply_until(i, d, s.header.deltas_raw_size, st, t, p);
  } catch (const Error &e) {
    segment_failed(p, e);  // rethrows unless tolerated
    record(p);
    state_before(i, st);
    return;
  }
  record(p);
}

void TraceReader::state_before(size_t i, std::vector<StorageState> &st) {
  // The state inside segment i, which does not decode: its start state if
  // that loads, else the end of the closest segment before it that decodes
  // (each step back costs a segment's decoding; a file damaged everywhere
  // ends at the empty state).
  for (size_t j = i + 1; j-- > 0;) {
    Pass p = pass(j);
    try {
      load_start_state(j, st);
      return;
    } catch (const Error &e) {
      segment_failed(p, e);
      record(p);
    }
    if (j == 0) break;
    st = initial_state();
    if (replay(j - 1, st, NoVisit{})) return;
  }
  st = initial_state();
}

std::vector<StorageState> TraceReader::state_at(uint64_t t) {
  std::vector<StorageState> st = initial_state();
  // The last segment starting at or before t: its start state holds every
  // frame before its start (COMPAT 9), and segments may share a boundary time.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](uint64_t v, const SegmentInfo &s) { return v < s.header.time_start_ps; });
  if (it == segments_.begin()) return st;  // before any segment (or none): initial state
  // Frames after t change nothing: decoding stops at the first one (and
  // decompression soon after it), so they are not validated either.
  replay_until(static_cast<size_t>(it - segments_.begin()) - 1, st, t);
  return st;
}

void TraceReader::collect_events(size_t i, uint64_t t0, uint64_t t1) {
  const SegmentInfo &s = segments_[i];
  const bool interleaved = header_.flags & wire::F_INTERLEAVED_DELTAS;
  const bool compact = header_.flags & wire::F_COMPACT_DELTAS;
  // Events only: no checkpoint, ops skipped, and no frame after t1 decoded.
  struct Collect {
    const TraceReader &r;
    Pass &p;
    uint64_t t0, t1;
    std::vector<TimedEvent> &out;
    std::vector<uint8_t> &payloads;  // its first `used` bytes are in use
    size_t &used;
    uint64_t last_t;
    FrameStep frame(uint64_t t) {
      if (__builtin_expect(t < last_t, 0)) {  // as Apply::frame
        r.time_backwards(p, t, last_t);
        return FrameStep::kSkip;
      }
      last_t = t;
      return t <= t1 ? FrameStep::kVisit : FrameStep::kStop;
    }
    void op(uint64_t, const DeltaOp &) {}
    void event(uint64_t t, uint16_t id, const uint8_t *e, uint32_t n) {
      if (__builtin_expect(id >= r.event_sizes_.size() || n != r.event_sizes_[id], 0)) {
        if (r.bad_event(p, id, n, t)) return;
      }
      if (r.check_values_ && r.event_has_checks_[id]) r.check_event_values(p, id, e, t);
      if (t < t0) return;
      // Offsets for now; turned into pointers once the buffer stops growing.
      const size_t at = used;
      out.push_back({t, id, reinterpret_cast<const uint8_t *>(at), n});
      if (__builtin_expect(n > payloads.size() - at, 0))  // grow in large steps, not per event
        payloads.resize(std::max(at + n, 2 * payloads.size() + 4096));
      if (n) std::memcpy(payloads.data() + at, e, n);
      used = at + n;
    }
  };
  const size_t events_before = events_.size(), payloads_before = payloads_used_;
  Pass p = pass(i);
  try {
    size_t avail = 0;
    const uint8_t *d = segment_deltas(i, deltas_for_time(i, t1), &avail);
    if (avail < s.header.deltas_raw_size) {
      Pass prefix = p;
      Collect c{*this, prefix, t0, t1, events_, event_payloads_, payloads_used_, s.header.time_start_ps};
      try {  // as in replay_until
        if (decode_deltas(d, avail, s.header.time_start_ps, interleaved, compact, c) < avail) {
          record(prefix);
          return;
        }
      } catch (const FileChanged &) {
        throw;
      } catch (const Error &) {
      }
      events_.resize(events_before);
      payloads_used_ = payloads_before;
      d = segment_deltas(i);
    }
    Collect c{*this, p, t0, t1, events_, event_payloads_, payloads_used_, s.header.time_start_ps};
    decode_deltas(d, s.header.deltas_raw_size, s.header.time_start_ps, interleaved, compact, c);
  } catch (const Error &e) {
    segment_failed(p, e);  // rethrows unless tolerated
    // A segment that does not decode gives no events: none of its items can
    // be trusted, and a query answers the same whatever part of it was read.
    events_.resize(events_before);
    payloads_used_ = payloads_before;
  }
  record(p);
}

const std::vector<TimedEvent> &TraceReader::events_in_range(uint64_t t0, uint64_t t1) {
  events_.clear();
  payloads_used_ = 0;  // event_payloads_ keeps its size: no zero-fill per call
  if (t1 < t0) return events_;
  // Segments overlap only at their boundary times, so every event in [t0, t1]
  // is in a segment whose [start, end] meets [t0, t1]. (The reference misses
  // events at t0 when t0 is a segment start; see the corpus README.)
  auto first = std::lower_bound(segments_.begin(), segments_.end(), t0,
                                [](const SegmentInfo &s, uint64_t v) { return s.header.time_end_ps < v; });
  for (auto it = first; it != segments_.end() && it->header.time_start_ps <= t1; ++it)
    collect_events(static_cast<size_t>(it - segments_.begin()), t0, t1);
  for (auto &e : events_)
    e.payload = event_payloads_.data() + reinterpret_cast<uintptr_t>(e.payload);
  return events_;
}

const std::vector<TimedEvent> &TraceReader::segment_events(size_t i, uint64_t t0, uint64_t t1) {
  if (i >= segments_.size())
    fail(USCOPE_ERR_INVALID_ARGUMENT, "segment %zu of %zu", i, segments_.size());
  events_.clear();
  payloads_used_ = 0;
  if (t0 <= t1) collect_events(i, t0, t1);
  for (auto &e : events_)
    e.payload = event_payloads_.data() + reinterpret_cast<uintptr_t>(e.payload);
  return events_;
}

namespace {
// Counts of b added to a; each kind keeps the first place of whichever saw
// it first (a before b).
DefectTally merged(DefectTally a, const DefectTally &b) {
  for (size_t k = 0; k < kDefectKinds; ++k)
    if (b.count[k]) a.add(static_cast<Defect>(k), b.first[k], b.count[k]);
  return a;
}
std::vector<uint8_t> encoded(const std::vector<StorageState> &st) {
  std::vector<uint8_t> b;
  encode_checkpoint(st, b);
  return b;
}
bool same_summary(const TraceSummary &a, const TraceSummary &b) {
  if (a.base_interval_cycles != b.base_interval_cycles || a.fan_out != b.fan_out ||
      a.total_instructions != b.total_instructions || a.density != b.density ||
      a.counters.size() != b.counters.size())
    return false;
  for (size_t i = 0; i < a.counters.size(); ++i) {
    const auto &x = a.counters[i], &y = b.counters[i];
    if (x.name != y.name || x.storage_id != y.storage_id || x.levels.size() != y.levels.size()) return false;
    for (size_t l = 0; l < x.levels.size(); ++l) {
      if (x.levels[l].size() != y.levels[l].size()) return false;
      for (size_t e = 0; e < x.levels[l].size(); ++e) {
        const MipmapEntry &m = x.levels[l][e], &n = y.levels[l][e];
        if (m.min_delta != n.min_delta || m.max_delta != n.max_delta || m.sum != n.sum) return false;
      }
    }
  }
  return true;
}
}  // namespace

bool TraceReader::detect_end_of_segment_checkpoints() {
  // COMPAT 28: segment 0 starts from the empty state, so a checkpoint that
  // holds its start is empty. One that is not, and equals segment 0's own
  // items replayed on the empty state, holds the segment's end.
  const SegmentInfo &s = segments_[0];
  try {
    std::vector<StorageState> ck = initial_state();
    decode_checkpoint(segment_body(0, s.header.checkpoint_size), s.header.checkpoint_size, ck);
    const std::vector<uint8_t> held = encoded(ck), empty = encoded(initial_state());
    if (held == empty) return false;
    std::vector<StorageState> end = initial_state();
    Pass p = pass(0);
    NoVisit nv;
    apply_deltas(0, segment_deltas(0), end, nv, UINT64_MAX, p);
    record(p);
    return encoded(end) == held;
  } catch (const Error &e) {
    // Segment 0 does not decode: nothing to tell from (queries report it).
    if (strict_ || dynamic_cast<const FileChanged *>(&e) != nullptr) throw;
    return false;
  }
}

void TraceReader::GridScan::frame(uint64_t t) {
  // COMPAT 29: consecutive cycles of a clock lie a multiple of its period
  // apart. A step longer than a checkpoint interval is a jump in time (the
  // simulation skipped ahead), after which the edges may have another phase.
  if (started) {
    const uint64_t d = t - last;
    if (!(interval && d > interval)) {
      step = std::gcd(step, d);
      if (clock_gcd && d % clock_gcd) {
        if (r.strict_)
          fail(USCOPE_ERR_NONCONFORMING, "segment %u: a frame at %llu ps lies %llu ps after the one before it, "
               "not a multiple of the clocks' period (%llu ps; COMPAT 29)", p.segment, (unsigned long long)t,
               (unsigned long long)d, (unsigned long long)clock_gcd);
        p.tally.add(Defect::OffClockGrid, p.at(t));
      }
    }
  }
  started = true;
  last = t;
}

void TraceReader::scan_grid_of_first_segment() {
  GridScan g{*this, pass(0), clock_gcd_, interval_};
  const SegmentInfo &s = segments_[0];
  try {
    // A prefix when tolerant (kGridScanBytes): it usually ends inside a
    // frame, which throws below like a segment that does not decode; every
    // frame before it was seen whole, and a segment 0 that is really bad is
    // counted where it is read, as before. Strict reads look at all of it.
    size_t avail = 0;
    const uint8_t *d = segment_deltas(0, strict_ ? SIZE_MAX : kGridScanBytes, &avail);
    decode_deltas(d, avail, s.header.time_start_ps, header_.flags & wire::F_INTERLEAVED_DELTAS,
                  header_.flags & wire::F_COMPACT_DELTAS, g);
  } catch (const Error &e) {
    // A segment 0 that does not decode is counted where it is read.
    if (strict_ || dynamic_cast<const FileChanged *>(&e) != nullptr) throw;
  }
  record(g.p);
  if (g.p.tally.any && g.step) grid_ps_ = g.step;
}

void TraceReader::detect_conventions() {
  conventions_ = DefectTally{};
  if (!eos_checked_ && !segments_.empty()) {
    eos_checked_ = true;
    eos_ = detect_end_of_segment_checkpoints();
  }
  if (eos_)
    conventions_.add(Defect::EndOfSegmentCheckpoints, DefectPlace{segments_[0].file_index, segments_[0].offset, 0});
  // COMPAT 29: the frames of segment 0 tell whether the timestamps follow
  // the clocks' period (uscope_reader_check looks at every frame).
  if (!grid_checked_ && !segments_.empty()) {
    grid_checked_ = true;
    grid_ps_ = clock_gcd_;
    if (clock_gcd_) scan_grid_of_first_segment();
  }
  if (strict_ && conventions_.any) {
    const DefectKindInfo &k = defect_info(Defect::EndOfSegmentCheckpoints);
    fail(USCOPE_ERR_NONCONFORMING, "%s: %s", k.name, k.what);
  }
  defects_.set_structure(merged(index_defects_, conventions_));
}

void TraceReader::check(const std::function<void(uint64_t, uint64_t)> &progress) {
  struct Values {  // string and enum values are checked for the walk only
    bool &flag;
    const bool was;
    ~Values() { flag = was; }
  } values{check_values_, check_values_};
  check_values_ = true;
  uint64_t total = 0, done = 0;
  for (const auto &s : segments_)
    total += wire::kSegmentHeaderSize + uint64_t{s.header.checkpoint_size} + s.header.deltas_compressed_size;
  TsumBuilder tsum(schema_);
  // Every frame is a cycle of the writer (the C writer frames each cycle,
  // idle ones included), so the summary is recomputed as the writer
  // computed it: a cycle ends where the next frame starts.
  struct Walk {
    TsumBuilder &tsum;
    GridScan grid;  // across segments; its pass is the segment walked
    bool started = false;
    uint64_t last = 0;
    void frame(uint64_t t) {
      if (started) tsum.end_cycle(last);
      started = true;
      last = t;
      grid.frame(t);
    }
    void op(uint64_t, const DeltaOp &o) {
      if (o.action == wire::DA_SLOT_SET) tsum.on_set(o.storage_id, o.field);
      else if (o.action == wire::DA_SLOT_ADD) tsum.on_add(o.storage_id, o.value);
    }
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  } walk{tsum, GridScan{*this, {}, clock_gcd_, interval_}};
  std::vector<uint8_t> carried;  // the state the items so far give, encoded; empty: unknown
  uint64_t off_grid_frames = 0;
  // Segments left out of the index lose their items as one that does not
  // decode: nothing to compare the next checkpoint or the TSUM with.
  bool lost = index_defects_.any;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const SegmentInfo &s = segments_[i];
    std::vector<StorageState> st = initial_state();
    if (s.after_gap) carried.clear();
    if (!carried.empty()) {
      // Each checkpoint must hold the state the items before it give.
      Pass p = pass(i);
      try {
        load_start_state(i, st);
        if (encoded(st) != carried) {
          if (strict_)
            fail(USCOPE_ERR_CORRUPT, "segment %u at offset %llu: its checkpoint differs from the state the items before it give",
               p.segment, (unsigned long long)p.offset);
          p.tally.add(Defect::CheckpointMismatch, p.at(s.header.time_start_ps));
        }
      } catch (const Error &e) {
        segment_failed(p, e);
      }
      record(p);
      st = initial_state();
    }
    walk.grid.p = pass(i);
    const bool ok = replay(i, st, walk);
    off_grid_frames += walk.grid.p.tally.count[static_cast<size_t>(Defect::OffClockGrid)];
    record(walk.grid.p);
    lost = lost || !ok;
    carried = ok ? encoded(st) : std::vector<uint8_t>{};
    done += wire::kSegmentHeaderSize + uint64_t{s.header.checkpoint_size} + s.header.deltas_compressed_size;
    if (progress) progress(done, total);
  }
  if (walk.started) tsum.end_cycle(walk.last);
  if (off_grid_frames && walk.grid.step) grid_ps_ = walk.grid.step;
  // The summary is compared only when every item was read (a lost segment
  // makes any recomputation differ) and when the writer kept it.
  if (!lost && complete() && summary_ && tsum.enabled()) {
    const std::vector<uint8_t> blob = tsum.finish();
    if (!tsum.omitted()) {
      uint64_t at = 0;
      for (const auto &e : sections_)
        if (e.type == wire::SECTION_COUNTER_SUMMARY) at = e.offset;
      if (blob.empty() || !same_summary(decode_tsum(blob.data(), blob.size()), load_summary())) {
        if (strict_) fail(USCOPE_ERR_CORRUPT, "the trace summary (TSUM) differs from the one its items give");
        conventions_.add(Defect::TsumMismatch, DefectPlace{UINT32_MAX, at, 0});
      }
    }
  }
  defects_.set_structure(merged(index_defects_, conventions_));
}

bool TraceReader::poll_new_segments() {
  // Read the header first, then size the map: the writer appends a segment
  // before it commits tail_offset (§2.2), so a map sized after the header
  // was read covers every segment it names. (Sizing first races: a
  // tail_offset committed in between points past the end of the map.)
  uint8_t hb[wire::kFileHeaderSize];
  file_.read(0, hb, sizeof hb, "the file header");
  const FileHeader h = decode_file_header(hb, sizeof hb);
  check_flags(h.flags);
  if (h.version_major != header_.version_major || h.preamble_end != header_.preamble_end ||
      ((h.flags ^ header_.flags) & ~wire::F_COMPLETE & ~wire::F_HAS_STRINGS))
    fail(USCOPE_ERR_CORRUPT, "the file header changed under the reader (version, preamble or format flags)");
  // Finalized and already read: a finalized file does not change.
  if (header_.flags & wire::F_COMPLETE) return false;
  // F_COMPLETE without a section table: the writer's final header rewrite is
  // only partly visible yet; take it at the next poll.
  if ((h.flags & wire::F_COMPLETE) && h.section_table_offset == 0) return false;
  if (h.tail_offset == header_.tail_offset && !(h.flags & wire::F_COMPLETE)) return false;
  const uint64_t old_size = file_.size();
  file_.refresh();
  Index x;
  try {
    x = load_segments(h);
  } catch (...) {
    file_.restore_size(old_size);  // unchanged on error, file_size() included
    throw;
  }
  const size_t before = segments_.size();
  header_ = h;
  commit(std::move(x));
  return segments_.size() != before;
}

}  // namespace uscope
