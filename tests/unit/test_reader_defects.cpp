// Tolerant and strict reading (issue 18; uscope.h "Tolerant and strict
// reading"): every defect kind, crafted from a trace our own writer wrote
// through the C API and then patched in place, and shown three ways:
//   (a) a default reader answers its queries without the bad item (and
//       keeps everything around it), and uscope_reader_defects() names the
//       kind with its exact count and first place (segment index, that
//       segment's file offset, the item's time);
//   (b) a reader opened with USCOPE_READ_STRICT fails the call that meets the
//       defect with the kind's status listed in uscope.h, with a message
//       that says what and where;
//   (c) `uscope check FILE --json`, run as a user runs it, exits 1 and names
//       the kind with the same count, where the unpatched file exits 0.
//
// Items are patched in files written with USCOPE_COMPRESSION_NONE, whose
// delta blobs are stored raw right after the checkpoint (spec §8.6.7), so an
// item's bytes can be changed without moving anything. Each item is located
// by walking the v0.2 frames (§8.6.6) of the segment that the library's own
// decoder (tests/support/trace_file.hpp) found, never by a fixed offset.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/wire.hpp"
#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

namespace w = uscope::wire;
using uscope::test::TempDir;
using uscope::test::TraceFile;
using Bytes = std::vector<uint8_t>;

// ── The trace: what every test patches ──
//
// One cycle per kPeriod, kCycles cycles, a checkpoint every kInterval cycles:
// 4 segments. The cycle that reaches a checkpoint time ends its segment, so
// segment 0 holds cycles 0-100, segment 1 101-200, segment 2 201-300 and
// segment 3 301-399; segment i's header starts at the checkpoint time, i *
// 100,000 ps (its first frame's delta is 1000). The patched items sit in
// segment 2, so that a segment before and one after show that the rest of
// the file still reads as written.
constexpr uint64_t kPeriod = 1000;
constexpr uint64_t kCycles = 400;
constexpr uint64_t kInterval = 100;
constexpr uint32_t kSegments = 4;
constexpr uint64_t kTarget = 250;  // the cycle whose item is patched
constexpr uint32_t kTargetSeg = 2;
uint64_t first_cycle(uint32_t seg) { return seg == 0 ? 0 : seg * kInterval + 1; }
uint64_t last_cycle(uint32_t seg) { return seg + 1 == kSegments ? kCycles - 1 : (seg + 1) * kInterval; }

constexpr uint16_t kRob = 0, kRetired = 1, kEntities = 2, kMisc = 3;
constexpr uint16_t kRobSlots = 8;
constexpr uint16_t kRobId = 0, kRobPc = 1, kRobStage = 2, kRobInsn = 3;  // rob fields
constexpr uint16_t kHead = 0, kTail = 1;                                  // rob properties
constexpr uint16_t kEvRetire = 0, kEvFlush = 1, kEvMisc = 2;
constexpr uint32_t kRetireSize = 5, kFlushSize = 12;

uint16_t rob_slot(uint64_t cy) { return static_cast<uint16_t>(cy % kRobSlots); }
uint64_t rob_pc(uint64_t cy) { return 0x80000000ull + 4 * cy; }  // > 65535: wide frames
uint64_t stage_of(uint64_t cy) { return cy % 3; }

struct TraceOptions {
  uint32_t compression = USCOPE_COMPRESSION_NONE;
  uint64_t step_ps = kPeriod;     // time between cycles
  uint32_t period_ps = kPeriod;   // clock 0's period
};

// Writes the trace through the C API. Every field type of §4.2 is used:
// rob (sparse buffer; U32, U64, ENUM, STRING_REF; U8 head/tail properties),
// retired (a counter, so the file carries a TSUM with a counter mipmap),
// entities (sparse non-buffer: TSUM instruction density), misc (dense; every
// integer type and BOOL, an ENUM property); events retire (U32, ENUM), flush
// (U64, STRING_REF) and misc (every type).
void write_trace(const std::string &path, const TraceOptions &t = {}) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  std::unique_ptr<uscope_schema_t, decltype(&uscope_schema_free)> sp(s, &uscope_schema_free);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", t.period_ps), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uint16_t core = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &core, "core0", 0, "cpu", USCOPE_CLOCK_INHERIT), USCOPE_OK);
  const char *stages[] = {"fetch", "decode", "execute"};
  uint8_t stage = 0;
  ASSERT_EQ(uscope_schema_add_enum(s, &stage, "stage", stages, 3), USCOPE_OK);
  const uscope_field_t rob[] = {{"id", USCOPE_FT_U32, 0, 0, 0},
                                {"pc", USCOPE_FT_U64, 0, 0, 0},
                                {"stage", USCOPE_FT_ENUM, stage, 0, 0},
                                {"insn", USCOPE_FT_STRING_REF, 0, 0, 0}};
  const uscope_field_t rob_props[] = {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                      {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  uint16_t id = 0;
  ASSERT_EQ(uscope_schema_add_storage(s, &id, "rob", core, kRobSlots, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER, rob,
                                      4, rob_props, 2),
            USCOPE_OK);
  ASSERT_EQ(id, kRob);
  const uscope_field_t count[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, &id, "retired", core, 1, 0, count, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(id, kRetired);
  const uscope_field_t ent[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, &id, "entities", core, 4, USCOPE_SF_SPARSE, ent, 1, nullptr, 0),
            USCOPE_OK);
  ASSERT_EQ(id, kEntities);
  const uscope_field_t misc[] = {{"u8", USCOPE_FT_U8, 0, 0, 0},   {"u16", USCOPE_FT_U16, 0, 0, 0},
                                 {"u32", USCOPE_FT_U32, 0, 0, 0}, {"u64", USCOPE_FT_U64, 0, 0, 0},
                                 {"i8", USCOPE_FT_I8, 0, 0, 0},   {"i16", USCOPE_FT_I16, 0, 0, 0},
                                 {"i32", USCOPE_FT_I32, 0, 0, 0}, {"i64", USCOPE_FT_I64, 0, 0, 0},
                                 {"flag", USCOPE_FT_BOOL, 0, 0, 0}};
  const uscope_field_t misc_props[] = {{"mode", USCOPE_FT_ENUM, stage, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, &id, "misc", core, 2, 0, misc, 9, misc_props, 1), USCOPE_OK);
  ASSERT_EQ(id, kMisc);
  const uscope_field_t retire[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"stage", USCOPE_FT_ENUM, stage, 0, 0}};
  ASSERT_EQ(uscope_schema_add_event(s, &id, "retire", core, retire, 2), USCOPE_OK);
  ASSERT_EQ(id, kEvRetire);
  const uscope_field_t flush[] = {{"id", USCOPE_FT_U64, 0, 0, 0}, {"insn", USCOPE_FT_STRING_REF, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_event(s, &id, "flush", core, flush, 2), USCOPE_OK);
  ASSERT_EQ(id, kEvFlush);
  const uscope_field_t all[] = {{"u8", USCOPE_FT_U8, 0, 0, 0},        {"u16", USCOPE_FT_U16, 0, 0, 0},
                                {"u32", USCOPE_FT_U32, 0, 0, 0},      {"u64", USCOPE_FT_U64, 0, 0, 0},
                                {"i8", USCOPE_FT_I8, 0, 0, 0},        {"i16", USCOPE_FT_I16, 0, 0, 0},
                                {"i32", USCOPE_FT_I32, 0, 0, 0},      {"i64", USCOPE_FT_I64, 0, 0, 0},
                                {"flag", USCOPE_FT_BOOL, 0, 0, 0},    {"str", USCOPE_FT_STRING_REF, 0, 0, 0},
                                {"stage", USCOPE_FT_ENUM, stage, 0, 0}};
  ASSERT_EQ(uscope_schema_add_event(s, &id, "misc", core, all, 11), USCOPE_OK);
  ASSERT_EQ(id, kEvMisc);

  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compression = t.compression;
  o.checkpoint_interval_ps = kInterval * t.step_ps;
  uscope_writer_t *wr = nullptr;
  ASSERT_EQ(uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uint32_t str[3];
  ASSERT_EQ(uscope_string_insert(wr, &str[0], "addi x1, x0, 1"), USCOPE_OK);
  ASSERT_EQ(uscope_string_insert(wr, &str[1], "ld x2, 0(x1)"), USCOPE_OK);
  ASSERT_EQ(uscope_string_insert(wr, &str[2], "mispredict"), USCOPE_OK);
  for (uint64_t cy = 0; cy < kCycles; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(wr, cy * t.step_ps), USCOPE_OK);
    const uint16_t slot = rob_slot(cy);
    ASSERT_EQ(uscope_slot_set(wr, kRob, slot, kRobId, cy), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, kRob, slot, kRobPc, rob_pc(cy)), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, kRob, slot, kRobStage, stage_of(cy)), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, kRob, slot, kRobInsn, str[cy % 2]), USCOPE_OK);
    if (cy % 8 == 7) {
      ASSERT_EQ(uscope_slot_clear(wr, kRob, (slot + 4) % kRobSlots), USCOPE_OK);
    }
    ASSERT_EQ(uscope_prop_set(wr, kRob, kHead, slot), USCOPE_OK);
    ASSERT_EQ(uscope_prop_set(wr, kRob, kTail, (slot + 1) % kRobSlots), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(wr, kRetired, 0, 0, 2), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, kEntities, cy % 4, 0, cy), USCOPE_OK);
    if (cy % 4 == 3) {
      ASSERT_EQ(uscope_slot_clear(wr, kEntities, (cy + 2) % 4), USCOPE_OK);
    }
    // misc: one field per cycle, signed ones negative (sign-extended, which
    // makes the frame wide: COMPAT 13).
    const uint16_t f = static_cast<uint16_t>(cy % 9);
    const uint64_t v = f == 8 ? cy % 2 : f >= 4 ? static_cast<uint64_t>(-static_cast<int64_t>(cy % 100)) : cy % 200;
    ASSERT_EQ(uscope_slot_set(wr, kMisc, cy % 2, f, v), USCOPE_OK);
    ASSERT_EQ(uscope_prop_set(wr, kMisc, 0, cy % 3), USCOPE_OK);
    uint8_t ev[36] = {};
    const uint32_t id32 = static_cast<uint32_t>(cy);
    std::memcpy(ev, &id32, 4);
    ev[4] = static_cast<uint8_t>(stage_of(cy));
    ASSERT_EQ(uscope_event(wr, kEvRetire, ev, kRetireSize), USCOPE_OK);
    if (cy % 10 == 0) {
      std::memset(ev, 0, sizeof ev);
      std::memcpy(ev, &cy, 8);
      std::memcpy(ev + 8, &str[2], 4);
      ASSERT_EQ(uscope_event(wr, kEvFlush, ev, kFlushSize), USCOPE_OK);
    }
    if (cy % 25 == 0) {
      // u8 u16 u32 u64 i8 i16 i32 i64 (bytes 0-29), bool (30), string
      // reference (31-34), enum (35): packed, 36 bytes.
      std::memset(ev, 0xEE, sizeof ev);
      ev[30] = 1;
      std::memcpy(ev + 31, &str[1], 4);
      ev[35] = static_cast<uint8_t>(stage_of(cy));
      ASSERT_EQ(uscope_event(wr, kEvMisc, ev, 36), USCOPE_OK);
    }
    ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK) << uscope_last_error();
}

// ── Finding and patching items ──

struct RawItem {
  size_t pos = 0;  // in the segment's delta blob
  uint64_t time_ps = 0;
  bool is_event = false;
  bool compact = false;  // COMPAT 1: a 9-byte TAG_COMPACT_OP
  uint8_t action = 0;
  uint16_t storage_id = 0, slot = 0, field = 0;
  uint64_t value = 0;
  uint16_t event_id = 0;
};

// Every item of a v0.2 delta blob (§8.6.6: LEB128 time delta, u16 item
// count, tagged items) with its position.
std::vector<RawItem> raw_items(const Bytes &d, uint64_t time_start) {
  std::vector<RawItem> out;
  size_t pos = 0;
  uint64_t t = time_start;
  while (pos < d.size()) {
    uint64_t dt = 0;
    const size_t k = w::leb128_decode(d.data() + pos, d.size() - pos, &dt);
    if (!k || d.size() - pos < k + 2) {
      ADD_FAILURE() << "bad frame at " << pos;
      return out;
    }
    pos += k;
    t += dt;
    const uint16_t n = w::get_u16(&d[pos]);
    pos += 2;
    for (uint16_t i = 0; i < n; ++i) {
      const uint8_t *q = &d[pos];
      RawItem it;
      it.pos = pos;
      it.time_ps = t;
      if (q[0] == w::TAG_WIDE_OP) {
        it.action = q[1];
        it.storage_id = w::get_u16(q + 2);
        it.slot = w::get_u16(q + 4);
        it.field = w::get_u16(q + 6);
        it.value = w::get_u64(q + 8);
        pos += w::kWideOpSize;
      } else if (q[0] == w::TAG_COMPACT_OP) {
        it.compact = true;
        it.action = q[1];
        it.storage_id = q[2];
        it.slot = w::get_u16(q + 3);
        it.field = w::get_u16(q + 5);
        it.value = w::get_u16(q + 7);
        pos += w::kCompactOpV2Size;
      } else if (q[0] == w::TAG_EVENT) {
        it.is_event = true;
        it.event_id = w::get_u16(q + 2);
        pos += w::kEventItemHeaderSize + w::get_u32(q + 4);
      } else {
        ADD_FAILURE() << "unknown item tag " << int(q[0]) << " at " << pos;
        return out;
      }
      out.push_back(it);
    }
  }
  return out;
}

// §8.1 segment header fields.
constexpr uint64_t kSegTimeStart = 8, kSegTimeEnd = 16;

// The intact file, decoded by the library, with the means to patch a copy.
struct Crafted {
  TempDir dir{"uscope_defects"};
  std::string intact, patched;
  TraceFile tf;
  Bytes bytes;  // the patched copy, written by save()

  explicit Crafted(const TraceOptions &o = {}) {
    intact = dir.file("intact.uscope");
    patched = dir.file("patched.uscope");
    write_trace(intact, o);
    tf = uscope::test::read_trace_file(intact);
    bytes = tf.bytes;
  }
  void save() const { uscope::test::write_all(patched, std::string(bytes.begin(), bytes.end())); }
  const uscope::test::Segment &seg(size_t i) const { return tf.segments.at(i); }

  // File offset of an item of segment i: the raw blob follows the checkpoint
  // in an uncompressed file.
  uint64_t at(size_t i, const RawItem &it) const {
    EXPECT_FALSE(tf.header.flags & w::F_COMPRESSED) << "items are patched in uncompressed files only";
    return seg(i).offset + w::kSegmentHeaderSize + seg(i).header.checkpoint_size + it.pos;
  }
  // The op of segment i at time t with that action, storage and field.
  RawItem op(size_t i, uint64_t t, uint8_t action, uint16_t sid, uint16_t field) const {
    for (const auto &it : raw_items(seg(i).deltas, seg(i).header.time_start_ps))
      if (!it.is_event && it.time_ps == t && it.action == action && it.storage_id == sid && it.field == field)
        return it;
    ADD_FAILURE() << "no op " << int(action) << " on storage " << sid << " field " << field << " at " << t;
    return {};
  }
  RawItem event(size_t i, uint64_t t, uint16_t id) const {
    for (const auto &it : raw_items(seg(i).deltas, seg(i).header.time_start_ps))
      if (it.is_event && it.time_ps == t && it.event_id == id) return it;
    ADD_FAILURE() << "no event " << id << " at " << t;
    return {};
  }

  void put16(uint64_t at, uint16_t v) { w::put_u16(&bytes.at(at + 1) - 1, v); }
  void put64(uint64_t at, uint64_t v) { w::put_u64(&bytes.at(at + 7) - 7, v); }

  // Patches of one op (wide: tag, action, sid u16, slot u16, field u16, value
  // u64; compact: tag, action, sid u8, slot u16, field u16, value u16).
  void set_action(size_t i, const RawItem &it, uint8_t a) { bytes.at(at(i, it) + 1) = a; }
  void set_storage(size_t i, const RawItem &it, uint16_t sid) {
    if (it.compact) {
      ASSERT_LE(sid, 0xFF);
      bytes.at(at(i, it) + 2) = static_cast<uint8_t>(sid);
    } else {
      put16(at(i, it) + 2, sid);
    }
  }
  void set_slot(size_t i, const RawItem &it, uint16_t slot) { put16(at(i, it) + (it.compact ? 3 : 4), slot); }
  void set_field(size_t i, const RawItem &it, uint16_t f) { put16(at(i, it) + (it.compact ? 5 : 6), f); }
  void set_value(size_t i, const RawItem &it, uint64_t v) {
    if (it.compact) {
      ASSERT_LE(v, 0xFFFFu);
      put16(at(i, it) + 7, static_cast<uint16_t>(v));
    } else {
      put64(at(i, it) + 8, v);
    }
  }
  // An event item: tag, reserved, event type id u16, size u32, payload.
  void set_event_type(size_t i, const RawItem &it, uint16_t id) { put16(at(i, it) + 2, id); }
  void set_payload_u8(size_t i, const RawItem &it, uint32_t off, uint8_t v) {
    bytes.at(at(i, it) + w::kEventItemHeaderSize + off) = v;
  }
  void set_payload_u32(size_t i, const RawItem &it, uint32_t off, uint32_t v) {
    w::put_u32(&bytes.at(at(i, it) + w::kEventItemHeaderSize + off + 3) - 3, v);
  }
};

// ── The public API, wrapped ──

using ReaderPtr = std::unique_ptr<uscope_reader_t, decltype(&uscope_reader_close)>;
using StatePtr = std::unique_ptr<uscope_state_t, decltype(&uscope_state_free)>;

ReaderPtr open_reader(const std::string &path, uint32_t flags = 0) {
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open_ex(&r, path.c_str(), flags), USCOPE_OK) << uscope_last_error();
  return ReaderPtr(r, &uscope_reader_close);
}

std::vector<uscope_defect_t> defects_of(const uscope_reader_t *r) {
  uint32_t n = 0;
  EXPECT_EQ(uscope_reader_defects(r, nullptr, &n, 0), USCOPE_OK);
  std::vector<uscope_defect_t> out(n);
  if (n) {
    EXPECT_EQ(uscope_reader_defects(r, out.data(), &n, n), USCOPE_OK);
  }
  return out;
}

std::vector<uint32_t> kinds_of(const std::vector<uscope_defect_t> &ds) {
  std::vector<uint32_t> k;
  for (const auto &d : ds) k.push_back(d.kind);
  return k;
}

// The reader's entry for kind, which must be its only one: the crafted
// defect is the only thing wrong with the file, and its consequences are
// not defects of their own.
void expect_only_defect(const uscope_reader_t *r, uint32_t kind, uint64_t count, uint32_t segment,
                        uint64_t offset, uint64_t time_ps) {
  const auto ds = defects_of(r);
  ASSERT_EQ(kinds_of(ds), std::vector<uint32_t>{kind}) << "expected only " << uscope_defect_name(kind);
  EXPECT_EQ(ds[0].count, count) << uscope_defect_name(kind);
  EXPECT_EQ(ds[0].segment, segment) << uscope_defect_name(kind);
  EXPECT_EQ(ds[0].offset, offset) << uscope_defect_name(kind);
  EXPECT_EQ(ds[0].time_ps, time_ps) << uscope_defect_name(kind);
}

StatePtr state_at(uscope_reader_t *r, uint64_t t) {
  uscope_state_t *s = nullptr;
  EXPECT_EQ(uscope_reader_state_at(r, &s, t), USCOPE_OK) << "state_at(" << t << "): " << uscope_last_error();
  return StatePtr(s, &uscope_state_free);
}
uint64_t field(const StatePtr &s, uint16_t sid, uint16_t slot, uint16_t f) {
  uint64_t v = ~0ull;
  EXPECT_EQ(uscope_state_slot_field(s.get(), &v, sid, slot, f), USCOPE_OK) << uscope_last_error();
  return v;
}
uint64_t prop(const StatePtr &s, uint16_t sid, uint16_t p) {
  uint64_t v = ~0ull;
  EXPECT_EQ(uscope_state_property(s.get(), &v, sid, p), USCOPE_OK) << uscope_last_error();
  return v;
}

// Everything a state holds, flattened: validity, fields and properties of
// every storage, for comparing two readers' answers.
std::vector<uint64_t> snapshot(uscope_reader_t *r, uint64_t t) {
  std::vector<uint64_t> out;
  const StatePtr s = state_at(r, t);
  if (!s) return out;
  uscope_schema_counts_t n{};
  n.struct_size = sizeof n;
  EXPECT_EQ(uscope_reader_schema_counts(r, &n), USCOPE_OK);
  for (uint16_t sid = 0; sid < n.storages; ++sid) {
    uscope_storage_info_t si{};
    EXPECT_EQ(uscope_reader_storage(r, &si, sid), USCOPE_OK);
    for (uint16_t slot = 0; slot < si.num_slots; ++slot) {
      int valid = 0;
      EXPECT_EQ(uscope_state_slot_valid(s.get(), &valid, sid, slot), USCOPE_OK);
      out.push_back(static_cast<uint64_t>(valid));
      for (uint16_t f = 0; f < si.num_fields; ++f) out.push_back(field(s, sid, slot, f));
    }
    for (uint16_t p = 0; p < si.num_properties; ++p) out.push_back(prop(s, sid, p));
  }
  return out;
}

struct Ev {
  uint64_t time_ps;
  uint16_t id;
  Bytes payload;
  bool operator==(const Ev &o) const { return time_ps == o.time_ps && id == o.id && payload == o.payload; }
};

// The events of [t0, t1]; the status of the first call that failed, else OK.
uscope_status_t events(uscope_reader_t *r, uint64_t t0, uint64_t t1, std::vector<Ev> *out) {
  out->clear();
  uscope_event_iter_t *it = nullptr;
  uscope_status_t s = uscope_reader_events_in_range(r, &it, t0, t1);
  if (s != USCOPE_OK) return s;
  uscope_event_t e{};
  while ((s = uscope_event_iter_next(it, &e)) == USCOPE_OK)
    out->push_back({e.time_ps, e.event_type_id, Bytes(e.payload, e.payload + e.payload_size)});
  uscope_event_iter_free(it);
  return s == USCOPE_DONE ? USCOPE_OK : s;
}
std::vector<Ev> all_events(uscope_reader_t *r, uint64_t t0 = 0, uint64_t t1 = UINT64_MAX) {
  std::vector<Ev> out;
  EXPECT_EQ(events(r, t0, t1, &out), USCOPE_OK) << uscope_last_error();
  return out;
}
size_t count_events(const std::vector<Ev> &evs, uint64_t t, uint16_t id) {
  return static_cast<size_t>(
      std::count_if(evs.begin(), evs.end(), [&](const Ev &e) { return e.time_ps == t && e.id == id; }));
}

// The items uscope_reader_segment_items() gives for segment i.
std::vector<uscope_item_t> segment_items(uscope_reader_t *r, uint32_t i) {
  std::vector<uscope_item_t> out;
  uscope_item_iter_t *it = nullptr;
  EXPECT_EQ(uscope_reader_segment_items(r, &it, i), USCOPE_OK) << uscope_last_error();
  if (!it) return out;
  uscope_item_t item{};
  while (uscope_item_iter_next(it, &item) == USCOPE_OK) {
    item.payload = nullptr;  // not kept past the iterator
    out.push_back(item);
  }
  uscope_item_iter_free(it);
  return out;
}
bool has_op(const std::vector<uscope_item_t> &items, uint64_t t, uint8_t action, uint16_t sid, uint16_t slot,
            uint16_t f) {
  return std::any_of(items.begin(), items.end(), [&](const uscope_item_t &i) {
    return !i.is_event && i.time_ps == t && i.action == action && i.storage_id == sid && i.slot == slot &&
           i.field == f;
  });
}

uint64_t seg_offset(uscope_reader_t *r, uint32_t i) {
  uscope_segment_info_t s{};
  EXPECT_EQ(uscope_reader_segment(r, &s, i), USCOPE_OK);
  return s.offset;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

// ── `uscope check FILE --json`, as a user runs it ──

struct JsonDefect {
  std::string kind;
  uint64_t count = 0;
  bool whole_file = false;  // "segment": null
  uint64_t segment = 0, offset = 0, time_ps = 0;
};
struct CheckReport {
  int exit_code = -1;
  bool readable = false;
  uint64_t time_grid_ps = 0;
  std::vector<JsonDefect> defects;
  std::string out;
};

CheckReport run_check(const std::string &path) {
  CheckReport c;
  const auto r = uscope::test::run_cli("check '" + path + "' --json", false);
  c.exit_code = r.exit_code;
  c.out = r.out;
  simdjson::dom::parser p;
  simdjson::dom::element j;
  if (p.parse(r.out).get(j)) {
    ADD_FAILURE() << "`uscope check --json` printed no JSON: " << r.out;
    return c;
  }
  try {
    c.readable = bool(j["readable"]);
    if (c.readable) c.time_grid_ps = uint64_t(j["time_grid_ps"]);
    for (auto d : simdjson::dom::array(j["defects"])) {
      JsonDefect x;
      x.kind = std::string(std::string_view(d["kind"]));
      x.count = uint64_t(d["count"]);
      x.whole_file = d["first"]["segment"].is_null();
      if (!x.whole_file) x.segment = uint64_t(d["first"]["segment"]);
      x.offset = uint64_t(d["first"]["offset"]);
      x.time_ps = uint64_t(d["first"]["time_ps"]);
      c.defects.push_back(x);
    }
  } catch (const simdjson::simdjson_error &e) {
    ADD_FAILURE() << "unexpected `uscope check --json` output (" << e.what() << "): " << r.out;
  }
  return c;
}

// The check report names exactly this kind, with this count and place.
void expect_check_names(const CheckReport &c, uint32_t kind, uint64_t count, uint32_t segment, uint64_t offset,
                        uint64_t time_ps) {
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_TRUE(c.readable) << c.out;
  ASSERT_EQ(c.defects.size(), 1u) << c.out;
  const JsonDefect &d = c.defects[0];
  EXPECT_EQ(d.kind, uscope_defect_name(kind)) << c.out;
  EXPECT_EQ(d.count, count) << c.out;
  EXPECT_EQ(d.whole_file, segment == UINT32_MAX) << c.out;
  if (segment != UINT32_MAX) {
    EXPECT_EQ(d.segment, segment) << c.out;
  }
  EXPECT_EQ(d.offset, offset) << c.out;
  EXPECT_EQ(d.time_ps, time_ps) << c.out;
}

void expect_check_clean(const std::string &path) {
  const CheckReport c = run_check(path);
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_TRUE(c.readable) << c.out;
  EXPECT_TRUE(c.defects.empty()) << c.out;
}

// Strict: the call failed with status, and the message (thread-local and on
// the reader) holds every one of parts.
void expect_strict_failure(uscope_status_t got, uscope_status_t want, const uscope_reader_t *r,
                           const std::vector<std::string> &parts) {
  EXPECT_EQ(got, want) << uscope_status_str(got) << ": " << uscope_last_error();
  const std::string msg = uscope_last_error();
  for (const auto &p : parts) EXPECT_TRUE(contains(msg, p)) << "\"" << msg << "\" lacks \"" << p << "\"";
  if (r) {
    EXPECT_EQ(std::string(uscope_reader_error(r)), msg);
  }
}

// Each defect's place names one segment: two places with the same segment
// index have the same offset. (Whether the index counts the file's segments
// or the reader's, one report must not give two segments one number.)
void expect_places_name_one_segment_each(const uscope_reader_t *r) {
  const auto ds = defects_of(r);
  for (const auto &a : ds)
    for (const auto &b : ds)
      if (a.segment != UINT32_MAX && a.segment == b.segment) {
        EXPECT_EQ(a.offset, b.offset) << uscope_defect_name(a.kind) << " and " << uscope_defect_name(b.kind)
                                      << " both name segment " << a.segment;
      }
}

// The precondition of every patch: the file is laid out as planned.
void expect_layout(const Crafted &c) {
  ASSERT_EQ(c.tf.segments.size(), kSegments);
  for (uint32_t i = 0; i < kSegments; ++i) {
    ASSERT_EQ(c.seg(i).header.time_start_ps, i * kInterval * kPeriod) << "segment " << i;
    ASSERT_EQ(c.seg(i).frame_times.front(), first_cycle(i) * kPeriod) << "segment " << i;
    ASSERT_EQ(c.seg(i).frame_times.back(), last_cycle(i) * kPeriod) << "segment " << i;
    ASSERT_EQ(c.seg(i).frame_times.size(), last_cycle(i) - first_cycle(i) + 1) << "segment " << i;
  }
}

// ── One test per kind ──

TEST(ReaderDefects, SlotOutOfRange) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  // The SET of the instruction's id goes to slot 8 of an 8-slot storage, as
  // the reference's Rust cpu writer does (COMPAT 27).
  c.set_slot(kTargetSeg, c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobId), kRobSlots);
  c.save();

  // (a) The op does nothing; the same cycle's other ops are applied.
  ReaderPtr r = open_reader(c.patched);
  EXPECT_TRUE(defects_of(r.get()).empty()) << "nothing of segment 2 is read at open";
  const StatePtr s = state_at(r.get(), t);
  EXPECT_EQ(field(s, kRob, slot, kRobId), kTarget - kRobSlots) << "the skipped SET left the previous id";
  EXPECT_EQ(field(s, kRob, slot, kRobPc), rob_pc(kTarget));
  EXPECT_EQ(field(s, kRob, slot, kRobStage), stage_of(kTarget));
  EXPECT_EQ(prop(s, kRob, kHead), slot);
  EXPECT_EQ(field(s, kRetired, 0, 0), 2 * (kTarget + 1));
  ReaderPtr ref = open_reader(c.intact);
  EXPECT_EQ(snapshot(r.get(), t + kRobSlots * kPeriod), snapshot(ref.get(), t + kRobSlots * kPeriod))
      << "the slot's next SET rewrites the id";
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_FALSE(has_op(items, t, w::DA_SLOT_SET, kRob, kRobSlots, kRobId));
  EXPECT_FALSE(has_op(items, t, w::DA_SLOT_SET, kRob, slot, kRobId));
  EXPECT_TRUE(has_op(items, t, w::DA_SLOT_SET, kRob, slot, kRobPc));
  EXPECT_EQ(all_events(r.get()), all_events(ref.get())) << "events are not touched";
  // Read three times over: counted once.
  expect_only_defect(r.get(), USCOPE_DEFECT_SLOT_OUT_OF_RANGE, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);
  EXPECT_EQ(defects_of(r.get())[0].subject, kRob) << "the storage the op addressed";
  EXPECT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_SLOT_OUT_OF_RANGE, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  // (b) Strict: answers before the op, and fails the query that meets it.
  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  ASSERT_TRUE(st);
  EXPECT_EQ(snapshot(st.get(), 150 * kPeriod), snapshot(ref.get(), 150 * kPeriod));
  EXPECT_EQ(snapshot(st.get(), t - kPeriod), snapshot(ref.get(), t - kPeriod)) << "decoding stops before the op";
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, t), USCOPE_ERR_UNKNOWN_SLOT, st.get(),
                        {"slot 8", std::to_string(t) + " ps"});
  EXPECT_EQ(out, nullptr);
  ReaderPtr st2 = open_reader(c.patched, USCOPE_READ_STRICT);
  expect_strict_failure(uscope_reader_check(st2.get(), nullptr, nullptr), USCOPE_ERR_UNKNOWN_SLOT, st2.get(),
                        {"slot 8"});

  // (c)
  expect_check_names(run_check(c.patched), USCOPE_DEFECT_SLOT_OUT_OF_RANGE, 1, kTargetSeg, c.seg(kTargetSeg).offset, t);
  expect_check_clean(c.intact);
  EXPECT_EQ(uscope::test::run_cli("check '" + c.patched + "' --strict", false).exit_code, 1);
}

TEST(ReaderDefects, UnknownStorage) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  c.set_storage(kTargetSeg, c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobId), 200);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  const StatePtr s = state_at(r.get(), t);
  EXPECT_EQ(field(s, kRob, slot, kRobId), kTarget - kRobSlots);
  EXPECT_EQ(field(s, kRob, slot, kRobPc), rob_pc(kTarget));
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_FALSE(std::any_of(items.begin(), items.end(), [](const uscope_item_t &i) { return i.storage_id == 200; }));
  EXPECT_TRUE(has_op(items, t, w::DA_SLOT_SET, kRob, slot, kRobStage));
  expect_only_defect(r.get(), USCOPE_DEFECT_UNKNOWN_STORAGE, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, t + 5 * kPeriod), USCOPE_ERR_UNKNOWN_STORAGE,
                        st.get(), {"storage 200", std::to_string(t) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_UNKNOWN_STORAGE, 1, kTargetSeg, c.seg(kTargetSeg).offset, t);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, FieldOutOfRange) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod, tp = (kTarget + 10) * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  const RawItem set = c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobId);
  const RawItem pset = c.op(kTargetSeg, tp, w::DA_PROP_SET, kRob, kHead);
  // Three files: the SET's field past the 4 fields, the PROP_SET's property
  // past the 2 properties, and both (for the count).
  c.set_field(kTargetSeg, set, 9);
  c.save();
  const std::string field_only = c.dir.file("field.uscope");
  std::rename(c.patched.c_str(), field_only.c_str());
  c.bytes = c.tf.bytes;
  c.set_field(kTargetSeg, pset, 5);
  c.save();
  const std::string prop_only = c.dir.file("prop.uscope");
  std::rename(c.patched.c_str(), prop_only.c_str());
  c.set_field(kTargetSeg, set, 9);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  EXPECT_EQ(field(state_at(r.get(), t), kRob, slot, kRobId), kTarget - kRobSlots) << "the SET on field 9 did nothing";
  EXPECT_EQ(field(state_at(r.get(), t), kRob, slot, kRobPc), rob_pc(kTarget));
  const StatePtr s = state_at(r.get(), tp);
  EXPECT_EQ(prop(s, kRob, kHead), rob_slot(kTarget + 9)) << "the PROP_SET on property 5 did nothing";
  EXPECT_EQ(prop(s, kRob, kTail), (rob_slot(kTarget + 10) + 1) % kRobSlots) << "the next one was applied";
  EXPECT_EQ(snapshot(r.get(), tp + kPeriod), snapshot(ref.get(), tp + kPeriod));
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_FALSE(has_op(items, t, w::DA_SLOT_SET, kRob, slot, 9));
  EXPECT_FALSE(has_op(items, tp, w::DA_PROP_SET, kRob, 0, 5));
  expect_only_defect(r.get(), USCOPE_DEFECT_FIELD_OUT_OF_RANGE, 2, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  // uscope.h: field_out_of_range is UNKNOWN_FIELD in strict mode for a
  // field index, UNKNOWN_PROPERTY for a property index (what the writer's
  // uscope_slot_set and uscope_prop_set return for the same mistakes).
  ReaderPtr sf = open_reader(field_only, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(sf.get(), &out, t), USCOPE_ERR_UNKNOWN_FIELD, sf.get(),
                        {"field 9", std::to_string(t) + " ps"});
  ReaderPtr sp = open_reader(prop_only, USCOPE_READ_STRICT);
  expect_strict_failure(uscope_reader_state_at(sp.get(), &out, tp), USCOPE_ERR_UNKNOWN_PROPERTY, sp.get(),
                        {"property 5", std::to_string(tp) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_FIELD_OUT_OF_RANGE, 2, kTargetSeg, c.seg(kTargetSeg).offset,
                     t);
  expect_check_names(run_check(prop_only), USCOPE_DEFECT_FIELD_OUT_OF_RANGE, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     tp);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, UnknownEventType) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod;
  c.set_event_type(kTargetSeg, c.event(kTargetSeg, t, kEvRetire), 77);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  const auto got = all_events(r.get(), t, t);
  EXPECT_EQ(count_events(got, t, kEvRetire), 0u) << "the event of type 77 is not returned";
  EXPECT_EQ(count_events(got, t, kEvFlush), 1u) << "the same cycle's other events are";
  EXPECT_EQ(count_events(got, t, kEvMisc), 1u);
  EXPECT_EQ(got.size(), 2u);
  auto want = all_events(ref.get());
  want.erase(std::find_if(want.begin(), want.end(), [&](const Ev &e) { return e.time_ps == t && e.id == kEvRetire; }));
  EXPECT_EQ(all_events(r.get()), want);
  EXPECT_EQ(snapshot(r.get(), t), snapshot(ref.get(), t)) << "the state is not touched";
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_FALSE(std::any_of(items.begin(), items.end(),
                           [](const uscope_item_t &i) { return i.is_event && i.event_type_id == 77; }));
  expect_only_defect(r.get(), USCOPE_DEFECT_UNKNOWN_EVENT_TYPE, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  std::vector<Ev> evs;
  EXPECT_EQ(events(st.get(), 0, t - kPeriod, &evs), USCOPE_OK) << "decoding stops before the event";
  EXPECT_EQ(evs, all_events(ref.get(), 0, t - kPeriod));
  expect_strict_failure(events(st.get(), 0, UINT64_MAX, &evs), USCOPE_ERR_UNKNOWN_EVENT, st.get(),
                        {"type 77", std::to_string(t) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_UNKNOWN_EVENT_TYPE, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     t);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, EventPayloadSize) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod;
  // The retire event (5 bytes) claims the flush type (12 bytes): its size
  // field still says 5, so the blob decodes, and the payload differs from
  // its type's.
  c.set_event_type(kTargetSeg, c.event(kTargetSeg, t, kEvRetire), kEvFlush);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  const auto got = all_events(r.get(), t, t);
  EXPECT_EQ(count_events(got, t, kEvRetire), 0u);
  ASSERT_EQ(count_events(got, t, kEvFlush), 1u) << "only the real flush event";
  for (const auto &e : got)
    if (e.id == kEvFlush) {
      EXPECT_EQ(e.payload.size(), kFlushSize);
    }
  EXPECT_EQ(count_events(got, t, kEvMisc), 1u);
  auto want = all_events(ref.get());
  want.erase(std::find_if(want.begin(), want.end(), [&](const Ev &e) { return e.time_ps == t && e.id == kEvRetire; }));
  EXPECT_EQ(all_events(r.get()), want);
  expect_only_defect(r.get(), USCOPE_DEFECT_EVENT_PAYLOAD_SIZE, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  std::vector<Ev> evs;
  expect_strict_failure(events(st.get(), t, t, &evs), USCOPE_ERR_PAYLOAD_SIZE, st.get(),
                        {"5-byte", std::to_string(t) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_EVENT_PAYLOAD_SIZE, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     t);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, StringRefOutOfRange) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  ASSERT_EQ(c.tf.strings.size(), 3u);
  ASSERT_TRUE(c.tf.header.flags & w::F_COMPLETE) << "only a finalized file has its string table";
  const uint64_t t = kTarget * kPeriod, te = (kTarget + 10) * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  // A SET of rob's insn field, and the flush event's insn (payload bytes
  // 8-11), name strings 1000 and 999 of a 3-string table.
  c.set_value(kTargetSeg, c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobInsn), 1000);
  c.set_payload_u32(kTargetSeg, c.event(kTargetSeg, te, kEvFlush), 8, 999);
  c.save();

  // Kept as written, and counted.
  ReaderPtr r = open_reader(c.patched);
  const StatePtr s = state_at(r.get(), t);
  EXPECT_EQ(field(s, kRob, slot, kRobInsn), 1000u);
  EXPECT_EQ(field(s, kRob, slot, kRobId), kTarget);
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_TRUE(has_op(items, t, w::DA_SLOT_SET, kRob, slot, kRobInsn)) << "the op is kept";
  const auto evs = all_events(r.get(), te, te);
  ASSERT_EQ(count_events(evs, te, kEvFlush), 1u) << "the event is kept";
  for (const auto &e : evs)
    if (e.id == kEvFlush) {
      EXPECT_EQ(w::get_u32(&e.payload.at(8)), 999u);
    }
  // Values are kept as written, so no answer depends on them: the queries
  // do not check them (it would cost a quarter of the replay's speed); the
  // whole-file check and strict reads do (uscope.h).
  EXPECT_TRUE(defects_of(r.get()).empty());
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_STRING_REF_OUT_OF_RANGE, 2, kTargetSeg, seg_offset(r.get(), kTargetSeg),
                     t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, t), USCOPE_ERR_VALUE_RANGE, st.get(),
                        {"string reference 1000", std::to_string(t) + " ps"});
  std::vector<Ev> got;
  expect_strict_failure(events(st.get(), te, te, &got), USCOPE_ERR_VALUE_RANGE, st.get(),
                        {"string reference 999", std::to_string(te) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_STRING_REF_OUT_OF_RANGE, 2, kTargetSeg,
                     c.seg(kTargetSeg).offset, t);
  expect_check_clean(c.intact);
}

// The enum file: rob's stage SET at cycle 250 is 7, the retire event's stage
// (payload byte 4) at cycle 260 is 9; "stage" has values 0-2.
void patch_enums(Crafted &c) {
  c.set_value(kTargetSeg, c.op(kTargetSeg, kTarget * kPeriod, w::DA_SLOT_SET, kRob, kRobStage), 7);
  c.set_payload_u8(kTargetSeg, c.event(kTargetSeg, (kTarget + 10) * kPeriod, kEvRetire), 4, 9);
  c.save();
}

TEST(ReaderDefects, EnumOutOfRange) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod, te = (kTarget + 10) * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  patch_enums(c);

  ReaderPtr r = open_reader(c.patched);
  const StatePtr s = state_at(r.get(), t);
  EXPECT_EQ(field(s, kRob, slot, kRobStage), 7u) << "kept as written";
  EXPECT_EQ(field(s, kRob, slot, kRobId), kTarget);
  state_at(r.get(), te);
  const auto evs = all_events(r.get(), te, te);
  ASSERT_EQ(count_events(evs, te, kEvRetire), 1u) << "the event is kept";
  for (const auto &e : evs)
    if (e.id == kEvRetire) {
      EXPECT_EQ(e.payload.at(4), 9u);
    }
  EXPECT_TRUE(defects_of(r.get()).empty()) << "values are checked by the whole-file check and strict reads";
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_ENUM_OUT_OF_RANGE, 2, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, t), USCOPE_ERR_VALUE_RANGE, st.get(),
                        {"enum value 7", std::to_string(t) + " ps"});
  std::vector<Ev> got;
  expect_strict_failure(events(st.get(), te, te, &got), USCOPE_ERR_VALUE_RANGE, st.get(),
                        {"enum value 9", std::to_string(te) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_ENUM_OUT_OF_RANGE, 2, kTargetSeg, c.seg(kTargetSeg).offset, t);
  expect_check_clean(c.intact);
}

// uscope.h: "the defects met so far"; counts grow as more of the file is
// read and never include an item twice. A state query meets ops and events
// up to its time, an event query only events: after a state query that met
// the bad ops before 300 and an event query that met the unknown event
// types (two items of two kinds, each met by one read), both are counted,
// and reading everything again, twice, adds nothing.
TEST(ReaderDefects, PartialReadsOfOneSegmentCountEveryItemMet) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod, te = (kTarget + 10) * kPeriod;
  c.set_slot(kTargetSeg, c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobId), kRobSlots);
  c.set_event_type(kTargetSeg, c.event(kTargetSeg, te, kEvRetire), 77);
  c.save();
  ReaderPtr r = open_reader(c.patched);
  state_at(r.get(), t);  // stops before the event at te
  auto ds = defects_of(r.get());
  ASSERT_EQ(kinds_of(ds), std::vector<uint32_t>{USCOPE_DEFECT_SLOT_OUT_OF_RANGE});
  EXPECT_EQ(ds[0].count, 1u);
  EXPECT_EQ(count_events(all_events(r.get(), te, te), te, kEvRetire), 0u) << "an unknown type is not returned";
  ds = defects_of(r.get());
  ASSERT_EQ(kinds_of(ds), (std::vector<uint32_t>{USCOPE_DEFECT_SLOT_OUT_OF_RANGE, USCOPE_DEFECT_UNKNOWN_EVENT_TYPE}));
  EXPECT_EQ(ds[0].count, 1u);
  EXPECT_EQ(ds[1].count, 1u);
  state_at(r.get(), UINT64_MAX);
  all_events(r.get());
  for (int i = 0; i < 2; ++i) ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  ds = defects_of(r.get());
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].count, 1u);
  EXPECT_EQ(ds[1].count, 1u);
}

TEST(ReaderDefects, UnknownOpAction) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  const uint64_t t = kTarget * kPeriod;
  const uint16_t slot = rob_slot(kTarget);
  c.set_action(kTargetSeg, c.op(kTargetSeg, t, w::DA_SLOT_SET, kRob, kRobId), 9);  // §8.6.2 has 1-4
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  const StatePtr s = state_at(r.get(), t);
  EXPECT_EQ(field(s, kRob, slot, kRobId), kTarget - kRobSlots);
  EXPECT_EQ(field(s, kRob, slot, kRobPc), rob_pc(kTarget));
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  const auto items = segment_items(r.get(), kTargetSeg);
  EXPECT_FALSE(
      std::any_of(items.begin(), items.end(), [](const uscope_item_t &i) { return !i.is_event && i.action == 9; }));
  expect_only_defect(r.get(), USCOPE_DEFECT_UNKNOWN_OP_ACTION, 1, kTargetSeg, seg_offset(r.get(), kTargetSeg), t);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, t), USCOPE_ERR_CORRUPT, st.get(),
                        {"action 9", std::to_string(t) + " ps"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_UNKNOWN_OP_ACTION, 1, kTargetSeg, c.seg(kTargetSeg).offset, t);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, TimeBackwardsFrame) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  // A frame's time is its segment's time_start plus the LEB128 deltas
  // (§8.6.6). The last segment (cycles 301-399: 99 frames 1000 ps apart)
  // made to start 98 frames before 2^64: its last frame wraps to time 0,
  // before the frame ahead of it.
  const uint32_t last = kSegments - 1;
  const uint64_t start = 0 - 99 * kPeriod;  // 2^64 - 99,000: the frames are 1000 ps ... 99,000 ps after it
  ASSERT_EQ(c.seg(last).frame_times.size(), 99u);
  ASSERT_EQ(c.seg(last).frame_times.back() - c.seg(last).header.time_start_ps, 99 * kPeriod);
  c.put64(c.seg(last).offset + kSegTimeStart, start);
  c.put64(c.seg(last).offset + kSegTimeEnd, start + 98 * kPeriod);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  // Frames 0-97 of the segment read as cycles 301-398, the wrapped one not.
  const StatePtr s = state_at(r.get(), UINT64_MAX);
  EXPECT_EQ(field(s, kRob, rob_slot(kCycles - 1), kRobId), kCycles - 1 - kRobSlots) << "cycle 399 is ignored";
  EXPECT_EQ(field(s, kRob, rob_slot(kCycles - 2), kRobId), kCycles - 2);
  EXPECT_EQ(field(s, kRetired, 0, 0), 2 * (kCycles - 1));
  const auto evs = all_events(r.get(), start, UINT64_MAX);
  ASSERT_EQ(std::count_if(evs.begin(), evs.end(), [](const Ev &e) { return e.id == kEvRetire; }), 98);
  EXPECT_EQ(evs.back().time_ps, start + 98 * kPeriod);
  EXPECT_EQ(all_events(r.get(), 0, 300 * kPeriod), all_events(ref.get(), 0, 300 * kPeriod));
  expect_only_defect(r.get(), USCOPE_DEFECT_TIME_BACKWARDS, 1, last, seg_offset(r.get(), last), 0);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, UINT64_MAX), USCOPE_ERR_TIME_BACKWARDS, st.get(),
                        {"segment 3", "at 0 ps"});

  const CheckReport rep = run_check(c.patched);
  expect_check_names(rep, USCOPE_DEFECT_TIME_BACKWARDS, 1, last, c.seg(last).offset, 0);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, TimeBackwardsSegment) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  // Segment 2 claims to start at 150,000 ps, before segment 1 ends (200,000).
  const uint64_t bad_start = 150 * kPeriod;
  c.put64(c.seg(kTargetSeg).offset + kSegTimeStart, bad_start);
  c.save();

  // Found at open; the segment is ignored whole, the others read as written.
  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  expect_only_defect(r.get(), USCOPE_DEFECT_TIME_BACKWARDS, 1, kTargetSeg, c.seg(kTargetSeg).offset, bad_start);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.num_segments, kSegments - 1);
  EXPECT_EQ(snapshot(r.get(), 250 * kPeriod), snapshot(ref.get(), 200 * kPeriod))
      << "inside the ignored segment: the state at the end of the one before";
  EXPECT_EQ(snapshot(r.get(), 150 * kPeriod), snapshot(ref.get(), 150 * kPeriod));
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  EXPECT_TRUE(all_events(r.get(), 201 * kPeriod, 300 * kPeriod).empty());
  EXPECT_EQ(all_events(r.get(), 301 * kPeriod, UINT64_MAX), all_events(ref.get(), 301 * kPeriod, UINT64_MAX));
  EXPECT_EQ(all_events(r.get(), 0, 200 * kPeriod), all_events(ref.get(), 0, 200 * kPeriod));

  // uscope.h: time_backwards is TIME_BACKWARDS in strict mode, "frames or
  // segments".
  uscope_reader_t *st = nullptr;
  expect_strict_failure(uscope_reader_open_ex(&st, c.patched.c_str(), USCOPE_READ_STRICT),
                        USCOPE_ERR_TIME_BACKWARDS, nullptr, {std::to_string(c.seg(kTargetSeg).offset), "150000 ps"});
  uscope_reader_close(st);

  // check: the ignored segment is the defect; the checkpoint after it and
  // the TSUM, which its items would have explained, are not defects too.
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_places_name_one_segment_each(r.get());
  expect_only_defect(r.get(), USCOPE_DEFECT_TIME_BACKWARDS, 1, kTargetSeg, c.seg(kTargetSeg).offset, bad_start);
  expect_check_names(run_check(c.patched), USCOPE_DEFECT_TIME_BACKWARDS, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     bad_start);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, SegmentUndecodableBlock) {
  TraceOptions o;
  o.compression = USCOPE_COMPRESSION_LZ4;
  Crafted c(o);
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  ASSERT_TRUE(c.tf.header.flags & w::F_COMPRESSED);
  // 16 bytes of segment 2's LZ4 block (after the u32 size prefix, §8.6.7)
  // overwritten: its first token now claims a literal run longer than the
  // block.
  const uint64_t blob = c.seg(kTargetSeg).offset + w::kSegmentHeaderSize + c.seg(kTargetSeg).header.checkpoint_size;
  ASSERT_GT(c.seg(kTargetSeg).header.deltas_compressed_size, w::kBlobSizePrefix + 16);
  std::fill(c.bytes.begin() + static_cast<ptrdiff_t>(blob + w::kBlobSizePrefix),
            c.bytes.begin() + static_cast<ptrdiff_t>(blob + w::kBlobSizePrefix + 16), 0xFF);
  c.save();
  const uint64_t t0 = first_cycle(kTargetSeg) * kPeriod;
  const uint64_t start = c.seg(kTargetSeg).header.time_start_ps;  // the place of a lost segment

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  // Inside the segment: its checkpoint (the state before its first frame).
  EXPECT_EQ(snapshot(r.get(), 250 * kPeriod), snapshot(ref.get(), t0 - kPeriod));
  for (uint64_t cy : {0u, 150u, 200u, 301u, 350u, 399u})
    EXPECT_EQ(snapshot(r.get(), cy * kPeriod), snapshot(ref.get(), cy * kPeriod)) << "cycle " << cy;
  auto want = all_events(ref.get());
  want.erase(
      std::remove_if(want.begin(), want.end(),
                     [&](const Ev &e) { return e.time_ps >= t0 && e.time_ps <= last_cycle(kTargetSeg) * kPeriod; }),
      want.end());
  EXPECT_EQ(all_events(r.get()), want) << "every event but segment 2's";
  EXPECT_TRUE(segment_items(r.get(), kTargetSeg).empty());
  expect_only_defect(r.get(), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, c.seg(kTargetSeg).offset, start);
  // The whole walk: the lost items explain the next checkpoint and the TSUM.
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, c.seg(kTargetSeg).offset, start);

  // Strict: the message names the segment (where), not only the codec's
  // complaint (what), as every other strict message does.
  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  EXPECT_EQ(snapshot(st.get(), 150 * kPeriod), snapshot(ref.get(), 150 * kPeriod));
  uscope_state_t *out = nullptr;
  expect_strict_failure(uscope_reader_state_at(st.get(), &out, 250 * kPeriod), USCOPE_ERR_CORRUPT, st.get(),
                        {"segment 2"});
  std::vector<Ev> evs;
  ReaderPtr st2 = open_reader(c.patched, USCOPE_READ_STRICT);
  expect_strict_failure(events(st2.get(), 0, UINT64_MAX, &evs), USCOPE_ERR_CORRUPT, st2.get(), {"segment 2"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     start);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, SegmentUndecodableHeaderPastTheEnd) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  // The segment table (§8.3: offset, time_start, time_end; 24 bytes each)
  // sends segment 2 to 20 bytes before the end of the file: its 56-byte
  // header runs past it.
  uint64_t table = 0;
  for (const auto &s : c.tf.sections)
    if (s.type == w::SECTION_SEGMENTS) table = s.offset;
  ASSERT_NE(table, 0u);
  const uint64_t bad = c.bytes.size() - 20;
  c.put64(table + kTargetSeg * w::kSegmentIndexEntrySize, bad);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  expect_only_defect(r.get(), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, bad, 0);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.num_segments, kSegments - 1);
  EXPECT_EQ(snapshot(r.get(), 250 * kPeriod), snapshot(ref.get(), 200 * kPeriod));
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  EXPECT_TRUE(all_events(r.get(), 201 * kPeriod, 300 * kPeriod).empty());
  EXPECT_EQ(all_events(r.get(), 301 * kPeriod, UINT64_MAX), all_events(ref.get(), 301 * kPeriod, UINT64_MAX));

  uscope_reader_t *st = nullptr;
  expect_strict_failure(uscope_reader_open_ex(&st, c.patched.c_str(), USCOPE_READ_STRICT), USCOPE_ERR_TRUNCATED,
                        nullptr, {std::to_string(bad), "past the end"});
  uscope_reader_close(st);

  // The segment left out is the defect; the checkpoint after it and the
  // TSUM, which its items would explain, are not defects too.
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_places_name_one_segment_each(r.get());
  expect_only_defect(r.get(), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, bad, 0);
  expect_check_names(run_check(c.patched), USCOPE_DEFECT_SEGMENT_UNDECODABLE, 1, kTargetSeg, bad, 0);
  expect_check_clean(c.intact);
}

// A segment left out of the index (its header runs past the end) and an op
// on a slot past the size in the segment after it: two defects of two
// segments, whose places must tell them apart.
TEST(ReaderDefects, PlacesAfterASegmentLeftOut) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  uint64_t table = 0;
  for (const auto &s : c.tf.sections)
    if (s.type == w::SECTION_SEGMENTS) table = s.offset;
  ASSERT_NE(table, 0u);
  const uint64_t bad = c.bytes.size() - 20;
  c.put64(table + kTargetSeg * w::kSegmentIndexEntrySize, bad);
  const uint64_t t = 350 * kPeriod;
  c.set_slot(kTargetSeg + 1, c.op(kTargetSeg + 1, t, w::DA_SLOT_SET, kRob, kRobId), kRobSlots);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  EXPECT_EQ(field(state_at(r.get(), t), kRob, rob_slot(350), kRobPc), rob_pc(350));
  const auto ds = defects_of(r.get());
  ASSERT_EQ(kinds_of(ds), (std::vector<uint32_t>{USCOPE_DEFECT_SLOT_OUT_OF_RANGE, USCOPE_DEFECT_SEGMENT_UNDECODABLE}));
  EXPECT_EQ(ds[0].offset, c.seg(kTargetSeg + 1).offset);
  EXPECT_EQ(ds[0].time_ps, t);
  EXPECT_EQ(ds[1].offset, bad);
  EXPECT_EQ(ds[1].segment, kTargetSeg);
  EXPECT_NE(ds[0].segment, ds[1].segment) << "two segments, one number";
  expect_places_name_one_segment_each(r.get());
}

TEST(ReaderDefects, CheckpointMismatch) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  // Segment 2's checkpoint says slot 5 of rob holds pc 0xDEADBEEF; the items
  // before it left cycle 197's pc there. Cycle 205 sets it again, so the
  // state agrees again from then on (one mismatch, not one per segment).
  const uint64_t last_set = 197;
  ASSERT_EQ(rob_slot(last_set), 5);
  const Bytes &ck = c.seg(kTargetSeg).checkpoint;
  uint8_t pattern[8];
  w::put_u64(pattern, rob_pc(last_set));
  const auto hit = std::search(ck.begin(), ck.end(), pattern, pattern + 8);
  ASSERT_NE(hit, ck.end());
  ASSERT_EQ(std::search(hit + 1, ck.end(), pattern, pattern + 8), ck.end()) << "one place only";
  const uint64_t at = c.seg(kTargetSeg).offset + w::kSegmentHeaderSize + static_cast<uint64_t>(hit - ck.begin());
  c.put64(at, 0xDEADBEEF);
  c.save();
  const uint64_t t0 = c.seg(kTargetSeg).header.time_start_ps;  // the checkpoint's time

  // A query trusts the checkpoint (it is what a query starts from), and the
  // defect is found only by the whole walk.
  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  EXPECT_EQ(field(state_at(r.get(), t0), kRob, 5, kRobPc), 0xDEADBEEFu);
  EXPECT_EQ(field(state_at(r.get(), 205 * kPeriod), kRob, 5, kRobPc), rob_pc(205));
  EXPECT_EQ(snapshot(r.get(), 350 * kPeriod), snapshot(ref.get(), 350 * kPeriod));
  EXPECT_TRUE(defects_of(r.get()).empty());
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_CHECKPOINT_MISMATCH, 1, kTargetSeg, c.seg(kTargetSeg).offset, t0);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  EXPECT_EQ(field(state_at(st.get(), t0), kRob, 5, kRobPc), 0xDEADBEEFu) << "queries do not compare checkpoints";
  expect_strict_failure(uscope_reader_check(st.get(), nullptr, nullptr), USCOPE_ERR_CORRUPT, st.get(),
                        {"segment 2", "checkpoint"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_CHECKPOINT_MISMATCH, 1, kTargetSeg, c.seg(kTargetSeg).offset,
                     t0);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, TsumMismatch) {
  Crafted c;
  ASSERT_NO_FATAL_FAILURE(expect_layout(c));
  ASSERT_TRUE(c.tf.summary.has_value());
  ASSERT_EQ(c.tf.summary->counters.size(), 1u) << "retired";
  uint64_t off = 0, size = 0;
  for (const auto &s : c.tf.sections)
    if (s.type == w::SECTION_COUNTER_SUMMARY) off = s.offset, size = s.size;
  ASSERT_NE(off, 0u);
  // §6.1: 20-byte header, density levels (u32 count, then per level a u32
  // count of u32 entries), u32 counter count, then per counter its name
  // (u32 length + bytes), storage id u16, u32 level count, and per level a
  // u32 count of 24-byte entries (min, max, sum: §6.2). The first bucket's
  // sum of the first counter gets one more.
  auto u32 = [&](uint64_t at) { return w::get_u32(&c.bytes.at(at + 3) - 3); };
  uint64_t p = off + 20;
  const uint32_t dlevels = u32(p);
  p += 4;
  for (uint32_t l = 0; l < dlevels; ++l) p += 4 + 4ull * u32(p);
  ASSERT_EQ(u32(p), 1u);
  p += 4;
  p += 4 + u32(p);  // name
  ASSERT_EQ(w::get_u16(&c.bytes.at(p)), kRetired);
  p += 2 + 4;       // storage id, level count
  ASSERT_GT(u32(p), 0u);
  p += 4 + 16;      // entry count; min, max
  ASSERT_LE(p + 8, off + size);
  const uint64_t sum = w::get_u64(&c.bytes.at(p));
  ASSERT_EQ(sum, c.tf.summary->counters[0].levels.at(0).at(0).sum) << "located the first bucket's sum";
  c.put64(p, sum + 1);
  c.save();

  ReaderPtr r = open_reader(c.patched);
  ReaderPtr ref = open_reader(c.intact);
  EXPECT_EQ(snapshot(r.get(), 250 * kPeriod), snapshot(ref.get(), 250 * kPeriod));
  EXPECT_EQ(all_events(r.get()), all_events(ref.get()));
  EXPECT_TRUE(defects_of(r.get()).empty()) << "only the whole walk recomputes the summary";
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_TSUM_MISMATCH, 1, UINT32_MAX, off, 0);

  ReaderPtr st = open_reader(c.patched, USCOPE_READ_STRICT);
  expect_strict_failure(uscope_reader_check(st.get(), nullptr, nullptr), USCOPE_ERR_CORRUPT, st.get(), {"TSUM"});

  expect_check_names(run_check(c.patched), USCOPE_DEFECT_TSUM_MISMATCH, 1, UINT32_MAX, off, 0);
  expect_check_clean(c.intact);
}

TEST(ReaderDefects, OffClockGrid) {
  // Cycles every 500 ps on a clock whose period is 1000 ps (COMPAT 29): every
  // frame after the first lies 500 ps after the one before it.
  TraceOptions o;
  o.step_ps = 500;
  Crafted c(o);
  ASSERT_EQ(c.tf.segments.size(), kSegments);
  size_t frames = 0;
  for (const auto &s : c.tf.segments) frames += s.frame_times.size();
  ASSERT_EQ(frames, kCycles);
  const size_t seg0_frames = c.seg(0).frame_times.size();

  // At open, segment 0's frames tell: the grid the timestamps follow is 500.
  ReaderPtr r = open_reader(c.intact);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.time_grid_ps, 500u);
  expect_only_defect(r.get(), USCOPE_DEFECT_OFF_CLOCK_GRID, seg0_frames - 1, 0, c.seg(0).offset, 500);
  // Queries answer as written.
  const StatePtr s = state_at(r.get(), 250 * 500);
  EXPECT_EQ(field(s, kRob, rob_slot(250), kRobId), 250u);
  const auto evs = all_events(r.get());
  EXPECT_EQ(std::count_if(evs.begin(), evs.end(), [](const Ev &e) { return e.id == kEvRetire; }), int64_t(kCycles));
  // The whole walk counts every frame.
  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_OFF_CLOCK_GRID, frames - 1, 0, c.seg(0).offset, 500);
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.time_grid_ps, 500u);

  uscope_reader_t *st = nullptr;
  expect_strict_failure(uscope_reader_open_ex(&st, c.intact.c_str(), USCOPE_READ_STRICT),
                        USCOPE_ERR_NONCONFORMING, nullptr, {"500 ps", "COMPAT 29"});
  uscope_reader_close(st);

  const CheckReport rep = run_check(c.intact);
  expect_check_names(rep, USCOPE_DEFECT_OFF_CLOCK_GRID, frames - 1, 0, c.seg(0).offset, 500);
  EXPECT_EQ(rep.time_grid_ps, 500u);
  // The same trace on its clock's grid is clean.
  TraceOptions on_grid;
  Crafted clean(on_grid);
  expect_check_clean(clean.intact);
}

TEST(ReaderDefects, EndOfSegmentCheckpoints) {
  // The reference Rust writer's konata2uscope output (COMPAT 9, 28): segment
  // 0's checkpoint holds the state at its end (committed_insns 2), not the
  // empty state it starts from.
  const std::string path = uscope::test::kCorpusDir + "20_konata_sample.uscope";
  const std::string json = uscope::test::read_all(uscope::test::kCorpusDir + "20_konata_sample.json");
  ASSERT_FALSE(json.empty()) << "missing 20_konata_sample.json";
  // The truth is the item stream replayed from the empty state: the ADDs of
  // committed_insns (storage 1) up to each time, from the reference's dump.
  simdjson::dom::parser p;
  simdjson::dom::element j;
  ASSERT_FALSE(p.parse(json).get(j));
  std::vector<std::pair<uint64_t, uint64_t>> adds;  // time, value
  uint64_t seg_offset_json = 0;
  for (auto seg : simdjson::dom::array(j["segments"])) {
    seg_offset_json = uint64_t(seg["offset"]);
    for (auto it : simdjson::dom::array(seg["items"]))
      if (std::string_view(it["kind"]) == "op" && uint64_t(it["action"]) == w::DA_SLOT_ADD &&
          uint64_t(it["storage_id"]) == 1)
        adds.emplace_back(uint64_t(it["time_ps"]), uint64_t(it["value"]));
  }
  ASSERT_FALSE(adds.empty());

  // Found at open, and the file's only defect (its ops all fit the schema).
  ReaderPtr r = open_reader(path);
  ASSERT_TRUE(r);
  EXPECT_EQ(seg_offset(r.get(), 0), seg_offset_json);
  expect_only_defect(r.get(), USCOPE_DEFECT_END_OF_SEGMENT_CHECKPOINTS, 1, 0, seg_offset_json, 0);
  for (uint64_t t : {0u, 1000u, 2000u, 3999u, 4000u, 5000u}) {
    uint64_t want = 0;
    for (const auto &a : adds)
      if (a.first <= t) want += a.second;
    EXPECT_EQ(field(state_at(r.get(), t), 1, 0, 0), want) << "committed_insns at " << t << " ps, counted once";
  }

  uscope_reader_t *st = nullptr;
  expect_strict_failure(uscope_reader_open_ex(&st, path.c_str(), USCOPE_READ_STRICT), USCOPE_ERR_NONCONFORMING,
                        nullptr, {"end_of_segment_checkpoints"});
  uscope_reader_close(st);

  ASSERT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  expect_only_defect(r.get(), USCOPE_DEFECT_END_OF_SEGMENT_CHECKPOINTS, 1, 0, seg_offset_json, 0);
  expect_check_names(run_check(path), USCOPE_DEFECT_END_OF_SEGMENT_CHECKPOINTS, 1, 0, seg_offset_json, 0);
}

// A file our writer wrote is clean: every field type, enums, string
// references, events, several LZ4 segments.
TEST(ReaderDefects, OurWriterFileHasNoDefect) {
  TraceOptions o;
  o.compression = USCOPE_COMPRESSION_LZ4;
  TempDir dir("uscope_defects");
  const std::string path = dir.file("clean.uscope");
  ASSERT_NO_FATAL_FAILURE(write_trace(path, o));
  ReaderPtr r = open_reader(path, USCOPE_READ_STRICT);
  ASSERT_TRUE(r);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.num_segments, kSegments);
  EXPECT_EQ(info.compression, uint32_t{USCOPE_COMPRESSION_LZ4});
  EXPECT_EQ(info.time_grid_ps, kPeriod);
  EXPECT_EQ(uscope_reader_check(r.get(), nullptr, nullptr), USCOPE_OK) << uscope_last_error();
  EXPECT_TRUE(defects_of(r.get()).empty());
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  ASSERT_EQ(uscope_reader_summary(r.get(), &sum), USCOPE_OK);
  EXPECT_EQ(sum.present, 1u) << "so the TSUM was compared";
  EXPECT_EQ(sum.num_counters, 1u);
  EXPECT_EQ(uscope_reader_string_count(r.get()), 3u);
  const CheckReport rep = run_check(path);
  EXPECT_EQ(rep.exit_code, 0) << rep.out;
  EXPECT_TRUE(rep.readable);
  EXPECT_TRUE(rep.defects.empty()) << rep.out;
  EXPECT_EQ(rep.time_grid_ps, kPeriod);
}

}  // namespace
