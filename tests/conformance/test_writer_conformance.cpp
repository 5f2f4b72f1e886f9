// Our writer, fed the same calls as the reference C writer, must produce a
// file whose decoded content equals the reference file's, as the reference
// Rust reader decoded it (../shared/conformance/uscope/NN.json). Compressed
// bytes are never compared (README of the corpus).
//
// The calls are recovered from the reference file itself, with our own
// decoder: its schema (add_* calls merged into the order that reproduces its
// string pool), DUT properties, string table, and every frame - including
// idle frames and frames at a repeated timestamp, which the JSON item lists
// cannot show. The expected answers all come from the JSON.
//
// These tests double as a check of our decoder against the reference reader:
// before replaying, the decoded items of every corpus file (also the Rust
// writer's 20, 23 and 24) must hash to the JSON's items_fnv64.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "format/checksum.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/corpus_json.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TraceFile;
namespace wire = uscope::wire;

const std::string &kDir = uscope::test::kCorpusDir;

struct Corpus {
  TraceFile ref;
  simdjson::dom::parser parser;
  simdjson::dom::element json;
};

void load(const std::string &name, Corpus &c) {
  // A missing input is a failure, never a skip.
  c.ref = uscope::test::read_trace_file(kDir + name + ".uscope");
  auto r = c.parser.load(kDir + name + ".json");
  ASSERT_FALSE(r.error()) << "cannot load " << name << ".json: " << simdjson::error_message(r.error());
  c.json = r.value();
}

std::string str(simdjson::dom::element e) { return std::string(std::string_view(e)); }
uint64_t u64(simdjson::dom::element e) { return uint64_t(e); }
// By value: `x.get_array().value()` in a range-for would bind to a temporary.
simdjson::dom::array arr(simdjson::dom::element e) { return simdjson::dom::array(e); }

// ── Decoder check: items of every segment hash like the reference reader's ──

class DecodeDigest : public ::testing::TestWithParam<const char *> {};

TEST_P(DecodeDigest, ItemsMatchReferenceReader) {
  Corpus c;
  ASSERT_NO_FATAL_FAILURE(load(GetParam(), c));
  auto segs = arr(c.json["segments"]);
  ASSERT_EQ(segs.size(), c.ref.segments.size());
  uint64_t total = uscope::kFnv64Offset;
  size_t i = 0;
  for (auto s : segs) {
    const auto &seg = c.ref.segments[i++];
    EXPECT_EQ(uscope::test::hex16(uscope::test::items_digest(seg.items, uscope::kFnv64Offset)),
              str(s["items_fnv64"]))
        << "segment " << i - 1;
    EXPECT_EQ(uscope::test::hex16(uscope::fnv1a64(seg.deltas.data(), seg.deltas.size())),
              str(s["deltas_raw_fnv64"]));
    EXPECT_EQ(seg.frame_times.size(), u64(s["header"]["num_frames"]));
    total = uscope::test::items_digest(seg.items, total);
  }
  EXPECT_EQ(uscope::test::hex16(total), str(c.json["totals"]["items_fnv64"]));
}

INSTANTIATE_TEST_SUITE_P(Corpus, DecodeDigest,
                         ::testing::Values("01_tiny", "02_multiseg", "03_sparse_dense", "04_props",
                                           "05_events_all_types", "06_wide_compact",
                                           "07_many_storages", "08_multiclock_scopes",
                                           "10_live_incomplete", "11_empty", "12_boundary",
                                           "20_konata_sample", "23_rust_v01_wide",
                                           "24_rust_v01_compact"));

// ── Replay ──

std::vector<uscope_field_t> fields_of(const uscope::Schema &s,
                                      const std::vector<uscope::FieldDef> &defs) {
  std::vector<uscope_field_t> out;
  for (const auto &f : defs) out.push_back({s.str(f.name), f.type, f.enum_id, f.role, f.pair_id});
  return out;
}

// The strings one add_* call interns, in order (pool offsets).
std::vector<uint16_t> strings_of_clock(const uscope::ClockDef &d) { return {d.name}; }
std::vector<uint16_t> strings_of_scope(const uscope::ScopeDef &d) {
  std::vector<uint16_t> v{d.name};
  if (d.protocol != wire::kNoString) v.push_back(d.protocol);
  return v;
}
std::vector<uint16_t> strings_of_enum(const uscope::EnumDef &d) {
  std::vector<uint16_t> v{d.name};
  for (const auto &x : d.values) v.push_back(x.name);
  return v;
}
template <class T>
std::vector<uint16_t> strings_of_fields(uint16_t name, const std::vector<uscope::FieldDef> &a,
                                        const std::vector<uscope::FieldDef> &b = {}) {
  std::vector<uint16_t> v{name};
  for (const auto &f : a) v.push_back(f.name);
  for (const auto &f : b) v.push_back(f.name);
  return v;
}

// Rebuild the schema through the public API. Definitions of one kind keep
// their id order; the kinds are merged greedily so that each call's first
// new string lands where the reference pool has it.
uscope_schema_t *rebuild_schema(const uscope::Schema &s) {
  uscope_schema_t *out = nullptr;
  EXPECT_EQ(uscope_schema_new(&out), USCOPE_OK);
  struct Kind {
    size_t next = 0, count = 0;
  } k[5];
  k[0].count = s.clocks.size();
  k[1].count = s.scopes.size();
  k[2].count = s.enums.size();
  k[3].count = s.storages.size();
  k[4].count = s.events.size();
  auto strings = [&](int kind, size_t i) -> std::vector<uint16_t> {
    switch (kind) {
      case 0: return strings_of_clock(s.clocks[i]);
      case 1: return strings_of_scope(s.scopes[i]);
      case 2: return strings_of_enum(s.enums[i]);
      case 3: return strings_of_fields<int>(s.storages[i].name, s.storages[i].fields, s.storages[i].props);
      default: return strings_of_fields<int>(s.events[i].name, s.events[i].fields);
    }
  };
  uint32_t pool_len = 0;  // how much of the reference pool our calls have produced
  for (;;) {
    int pick = -1;
    for (int kind = 0; kind < 5 && pick < 0; ++kind) {
      if (k[kind].next == k[kind].count) continue;
      for (uint16_t off : strings(kind, k[kind].next)) {
        if (off >= pool_len) {  // a new string: it must start exactly at the end of the pool
          if (off == pool_len) pick = kind;
          break;
        }
      }
    }
    if (pick < 0) {  // nothing adds the next string: take a call that adds none
      for (int kind = 0; kind < 5 && pick < 0; ++kind) {
        if (k[kind].next == k[kind].count) continue;
        bool adds = false;
        for (uint16_t off : strings(kind, k[kind].next)) adds |= off >= pool_len;
        if (!adds) pick = kind;
      }
    }
    if (pick < 0) break;
    const size_t i = k[pick].next++;
    for (uint16_t off : strings(pick, i))
      if (off >= pool_len) pool_len = off + static_cast<uint32_t>(std::strlen(s.str(off))) + 1;
    switch (pick) {
      case 0:
        EXPECT_EQ(uscope_schema_add_clock(out, nullptr, s.str(s.clocks[i].name), s.clocks[i].period_ps), USCOPE_OK);
        break;
      case 1: {
        const auto &d = s.scopes[i];
        EXPECT_EQ(uscope_schema_add_scope(out, nullptr, s.str(d.name),
                                          d.parent_id,
                                          d.protocol == wire::kNoString ? nullptr : s.str(d.protocol), d.clock_id),
                  USCOPE_OK)
            << uscope_last_error();
        break;
      }
      case 2: {
        std::vector<const char *> v;
        for (const auto &x : s.enums[i].values) v.push_back(s.str(x.name));
        EXPECT_EQ(uscope_schema_add_enum(out, nullptr, s.str(s.enums[i].name),
                                         v.data(), static_cast<uint16_t>(v.size())),
                  USCOPE_OK);
        break;
      }
      case 3: {
        const auto &d = s.storages[i];
        auto f = fields_of(s, d.fields), p = fields_of(s, d.props);
        EXPECT_EQ(uscope_schema_add_storage(out, nullptr, s.str(d.name), d.scope_id, d.num_slots, d.flags,
                                            f.data(), static_cast<uint16_t>(f.size()),
                                            p.data(), static_cast<uint16_t>(p.size())),
                  USCOPE_OK)
            << uscope_last_error();
        break;
      }
      default: {
        const auto &d = s.events[i];
        auto f = fields_of(s, d.fields);
        EXPECT_EQ(uscope_schema_add_event(out, nullptr, s.str(d.name), d.scope_id,
                                          f.data(), static_cast<uint16_t>(f.size())),
                  USCOPE_OK);
        break;
      }
    }
  }
  for (int kind = 0; kind < 5; ++kind) EXPECT_EQ(k[kind].next, k[kind].count) << "kind " << kind;
  return out;
}

// Writes the replayed trace to path (ASSERTs need a void function).
void replay(const TraceFile &ref, const std::string &path) {
  uscope_schema_t *schema = rebuild_schema(ref.schema);
  std::vector<uscope_dut_property_t> props;
  for (const auto &p : ref.dut) props.push_back({ref.schema.str(p.key), ref.schema.str(p.value)});
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = ref.checkpoint_interval_ps;
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), schema, props.data(),
                               static_cast<uint32_t>(props.size()), &o),
            USCOPE_OK)
      << uscope_last_error();
  uscope_schema_free(schema);
  ASSERT_NE(w, nullptr);
  for (size_t i = 0; i < ref.strings.size(); ++i) {
    uint32_t idx = 0;
    EXPECT_EQ(uscope_string_insert(w, &idx, ref.strings[i].c_str()), USCOPE_OK);
    EXPECT_EQ(idx, i);
  }
  for (const auto &seg : ref.segments) {
    size_t item = 0;
    for (uint32_t f = 0; f < seg.frame_times.size(); ++f) {
      ASSERT_EQ(uscope_begin_cycle(w, seg.frame_times[f]), USCOPE_OK) << uscope_writer_error(w);
      for (; item < seg.items.size() && seg.items[item].frame == f; ++item) {
        const auto &it = seg.items[item];
        uscope_status_t st = USCOPE_OK;
        if (it.is_event) {
          st = uscope_event(w, it.event_id, it.payload.data(), static_cast<uint32_t>(it.payload.size()));
        } else {
          const auto &op = it.op;
          switch (op.action) {
            case wire::DA_SLOT_SET: st = uscope_slot_set(w, op.storage_id, op.slot, op.field, op.value); break;
            case wire::DA_SLOT_CLEAR: st = uscope_slot_clear(w, op.storage_id, op.slot); break;
            case wire::DA_SLOT_ADD: st = uscope_slot_add(w, op.storage_id, op.slot, op.field, op.value); break;
            case wire::DA_PROP_SET: st = uscope_prop_set(w, op.storage_id, op.field, op.value); break;
            default: ADD_FAILURE() << "unknown action " << int(op.action);
          }
        }
        ASSERT_EQ(st, USCOPE_OK) << uscope_writer_error(w) << " at t=" << it.time_ps;
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
}

class WriterReplay : public ::testing::TestWithParam<const char *> {};

TEST_P(WriterReplay, DecodedContentMatchesReference) {
  const std::string name = GetParam();
  Corpus c;
  ASSERT_NO_FATAL_FAILURE(load(name, c));
  char tmpl[] = "/tmp/uscope-conf-XXXXXX";
  const int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string path = tmpl;
  replay(c.ref, path);
  ASSERT_FALSE(HasFatalFailure());
  const TraceFile ours = uscope::test::read_trace_file(path);
  std::remove(path.c_str());
  // 10_live_incomplete was never closed by its writer; ours is, so only the
  // content it committed is comparable (header, TSUM and sections are not).
  const bool live = name == "10_live_incomplete";

  auto hdr = c.json["header"];
  EXPECT_EQ(ours.header.version_major, u64(hdr["version_major"]));
  EXPECT_EQ(ours.header.version_minor, u64(hdr["version_minor"]));
  EXPECT_EQ(ours.header.num_segments, u64(hdr["num_segments"]));
  EXPECT_EQ(ours.header.preamble_end, u64(hdr["preamble_end"]));
  if (!live) {
    EXPECT_EQ(ours.header.flags, u64(hdr["flags"]));
    EXPECT_EQ(ours.header.total_time_ps, u64(hdr["total_time_ps"]));
  } else {
    EXPECT_EQ(ours.header.flags, u64(hdr["flags"]) | wire::F_COMPLETE);
  }

  // Preamble: DUT, schema (with its string pool) and trace config, byte for byte.
  size_t i = 0;
  for (auto ch : arr(c.json["preamble_chunks"])) {
    if (ch["type"].error()) continue;  // the trailing {"end_offset": ...} entry
    ASSERT_LT(i, ours.chunks.size());
    const auto &mine = ours.chunks[i++];
    EXPECT_EQ(mine.type, u64(ch["type"]));
    EXPECT_EQ(mine.offset - wire::kChunkHeaderSize, u64(ch["offset"]));
    EXPECT_EQ(mine.size, u64(ch["size"]));
    EXPECT_EQ(uscope::test::hex16(uscope::fnv1a64(ours.bytes.data() + mine.offset, mine.size)),
              str(ch["payload_fnv64"]))
        << "chunk type " << mine.type;
  }
  EXPECT_EQ(i, ours.chunks.size());

  // Segments: header fields, raw checkpoint and raw delta bytes.
  auto segs = arr(c.json["segments"]);
  ASSERT_EQ(ours.segments.size(), segs.size());
  i = 0;
  for (auto s : segs) {
    const auto &mine = ours.segments[i++];
    auto h = s["header"];
    EXPECT_EQ(mine.header.time_start_ps, u64(h["time_start_ps"])) << "segment " << i - 1;
    EXPECT_EQ(mine.header.time_end_ps, u64(h["time_end_ps"])) << "segment " << i - 1;
    EXPECT_EQ(mine.header.checkpoint_size, u64(h["checkpoint_size"]));
    EXPECT_EQ(mine.header.deltas_raw_size, u64(h["deltas_raw_size"]));
    EXPECT_EQ(mine.header.num_frames, u64(h["num_frames"]));
    EXPECT_EQ(mine.header.num_frames_active, u64(h["num_frames_active"]));
    EXPECT_EQ(mine.header.flags, u64(h["flags"]));
    EXPECT_EQ(mine.header.reserved, u64(h["reserved"]));
    EXPECT_EQ(uscope::test::hex16(uscope::fnv1a64(mine.checkpoint.data(), mine.checkpoint.size())),
              str(s["checkpoint_fnv64"]))
        << "segment " << i - 1;
    EXPECT_EQ(uscope::test::hex16(uscope::fnv1a64(mine.deltas.data(), mine.deltas.size())),
              str(s["deltas_raw_fnv64"]))
        << "segment " << i - 1;
  }
  if (live) return;

  // Finalization: section order (COMPAT 7), string table, TSUM.
  std::vector<uint64_t> want_types, have_types;
  for (auto sec : arr(c.json["sections"]))
    if (u64(sec["type"]) != wire::SECTION_END) want_types.push_back(u64(sec["type"]));
  for (const auto &sec : ours.sections) have_types.push_back(sec.type);
  EXPECT_EQ(have_types, want_types);
  if (c.json["string_table"].is_null()) {
    EXPECT_TRUE(ours.strings.empty());
  } else {
    std::vector<std::string> want;
    for (auto sv : arr(c.json["string_table"])) want.push_back(str(sv));
    EXPECT_EQ(ours.strings, want);
  }
  if (c.json["trace_summary"].is_null()) {
    EXPECT_FALSE(ours.summary.has_value());
  } else {
    ASSERT_TRUE(ours.summary.has_value());
    uscope::test::expect_summary_equal(*ours.summary, c.json["trace_summary"]);
  }
}

// Every file the reference C writer produced. The Rust writer's files (20, 23,
// 24) are left out: 20 stores end-of-segment checkpoints (COMPAT 9, a bug we
// must not copy) and 23/24 were hand-built with per-frame choices no writer
// rule reproduces; the decoder test above covers them.
INSTANTIATE_TEST_SUITE_P(Corpus, WriterReplay,
                         ::testing::Values("01_tiny", "02_multiseg", "03_sparse_dense", "04_props",
                                           "05_events_all_types", "06_wide_compact",
                                           "07_many_storages", "08_multiclock_scopes",
                                           "10_live_incomplete", "11_empty", "12_boundary"));

}  // namespace
