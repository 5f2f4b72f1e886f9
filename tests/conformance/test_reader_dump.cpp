// The reader against the reference reader's full dumps
// (../shared/conformance/uscope/NN.json): header, DUT, schema, string table,
// TSUM, and for every segment its header, its item stream (items_fnv64 over
// the reader's own replay) and its state after the segment (final_state).
// The Rust writer's files 20 and 21 store end-of-segment checkpoints (COMPAT
// 9, 28): the reference reader replays each segment from its own checkpoint
// and so counts its items twice in final_state; ours starts segment N from
// segment N-1's checkpoint (segment 0 from the empty state), so its state
// after a segment is that segment's checkpoint as the writer stored it
// (checkpoint_state).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "format/checksum.hpp"
#include "reader/trace_reader.hpp"
#include "support/corpus_json.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

namespace {

using uscope::test::jarr;
using uscope::test::jstr;
using uscope::test::ju64;
using uscope::test::kCorpusDir;

void expect_fields(const uscope::Schema &s, const std::vector<uscope::FieldDef> &got,
                   simdjson::dom::element want, const std::string &what) {
  auto arr = jarr(want);
  ASSERT_EQ(got.size(), arr.size()) << what;
  size_t i = 0;
  for (auto f : arr) {
    const auto &g = got[i++];
    EXPECT_EQ(std::string(s.str(g.name)), jstr(f["name"])) << what;
    EXPECT_EQ(g.type, ju64(f["type"])) << what;
    EXPECT_EQ(g.enum_id, ju64(f["enum_id"])) << what;
    EXPECT_EQ(g.role, ju64(f["role"])) << what;
    EXPECT_EQ(g.pair_id, ju64(f["pair_id"])) << what;
  }
}

class ReaderDump : public ::testing::TestWithParam<const char *> {};

TEST_P(ReaderDump, EverythingMatchesTheReferenceDump) {
  const std::string name = GetParam();
  uscope::TraceReader r(kCorpusDir + name + ".uscope");
  simdjson::dom::parser parser;
  auto loaded = parser.load(kCorpusDir + name + ".json");
  ASSERT_FALSE(loaded.error()) << simdjson::error_message(loaded.error());
  simdjson::dom::element d = loaded.value();

  auto h = d["header"];
  EXPECT_EQ(r.header().version_major, ju64(h["version_major"]));
  EXPECT_EQ(r.header().version_minor, ju64(h["version_minor"]));
  EXPECT_EQ(r.header().flags, ju64(h["flags"]));
  EXPECT_EQ(r.header().total_time_ps, ju64(h["total_time_ps"]));
  EXPECT_EQ(r.header().num_segments, ju64(h["num_segments"]));
  EXPECT_EQ(r.header().preamble_end, ju64(h["preamble_end"]));
  EXPECT_EQ(r.header().section_table_offset, ju64(h["section_table_offset"]));
  EXPECT_EQ(r.header().tail_offset, ju64(h["tail_offset"]));
  EXPECT_EQ(r.segments().size(), ju64(d["reader_segment_count"]));
  EXPECT_EQ(r.checkpoint_interval_ps(), ju64(d["trace_config"]["checkpoint_interval_ps"]));

  const uscope::Schema &s = r.schema();
  {
    auto props = jarr(d["dut"]["properties"]);
    ASSERT_EQ(r.dut().size(), props.size());
    size_t i = 0;
    for (auto p : props) {
      EXPECT_EQ(std::string(s.str(r.dut()[i].key)), jstr(p["key"]));
      EXPECT_EQ(std::string(s.str(r.dut()[i].value)), jstr(p["value"]));
      ++i;
    }
  }
  auto js = d["schema"];
  {
    auto clocks = jarr(js["clock_domains"]);
    ASSERT_EQ(s.clocks.size(), clocks.size());
    size_t i = 0;
    for (auto c : clocks) {
      EXPECT_EQ(std::string(s.str(s.clocks[i].name)), jstr(c["name"]));
      EXPECT_EQ(s.clocks[i].clock_id, ju64(c["clock_id"]));
      EXPECT_EQ(s.clocks[i].period_ps, ju64(c["period_ps"]));
      ++i;
    }
  }
  {
    auto scopes = jarr(js["scopes"]);
    ASSERT_EQ(s.scopes.size(), scopes.size());
    size_t i = 0;
    for (auto sc : scopes) {
      const auto &g = s.scopes[i++];
      EXPECT_EQ(std::string(s.str(g.name)), jstr(sc["name"]));
      EXPECT_EQ(g.parent_id, ju64(sc["parent_id"]));
      EXPECT_EQ(g.protocol, ju64(sc["protocol_off"]));
      if (!sc["protocol"].is_null()) {
        EXPECT_EQ(std::string(s.str(g.protocol)), jstr(sc["protocol"]));
      }
      EXPECT_EQ(g.clock_id, ju64(sc["clock_id"]));
    }
  }
  {
    auto enums = jarr(js["enums"]);
    ASSERT_EQ(s.enums.size(), enums.size());
    size_t i = 0;
    for (auto e : enums) {
      const auto &g = s.enums[i++];
      EXPECT_EQ(std::string(s.str(g.name)), jstr(e["name"]));
      auto values = jarr(e["values"]);
      ASSERT_EQ(g.values.size(), values.size());
      size_t k = 0;
      for (auto v : values) {
        EXPECT_EQ(g.values[k].value, ju64(v["value"]));
        EXPECT_EQ(std::string(s.str(g.values[k].name)), jstr(v["name"]));
        ++k;
      }
    }
  }
  {
    auto storages = jarr(js["storages"]);
    ASSERT_EQ(s.storages.size(), storages.size());
    size_t i = 0;
    for (auto st : storages) {
      const auto &g = s.storages[i++];
      const std::string what = name + " storage " + jstr(st["name"]);
      EXPECT_EQ(std::string(s.str(g.name)), jstr(st["name"]));
      EXPECT_EQ(g.storage_id, ju64(st["storage_id"]));
      EXPECT_EQ(g.num_slots, ju64(st["num_slots"]));
      EXPECT_EQ(g.flags, ju64(st["flags"]));
      EXPECT_EQ(g.scope_id, ju64(st["scope_id"]));
      EXPECT_EQ(r.layouts()[g.storage_id].slot_size, ju64(st["slot_size"])) << what;
      EXPECT_EQ(r.layouts()[g.storage_id].prop_size, ju64(st["property_data_size"])) << what;
      expect_fields(s, g.fields, st["fields"], what);
      expect_fields(s, g.props, st["properties"], what + " properties");
    }
  }
  {
    auto events = jarr(js["events"]);
    ASSERT_EQ(s.events.size(), events.size());
    size_t i = 0;
    for (auto ev : events) {
      const auto &g = s.events[i++];
      EXPECT_EQ(std::string(s.str(g.name)), jstr(ev["name"]));
      EXPECT_EQ(g.event_type_id, ju64(ev["event_type_id"]));
      EXPECT_EQ(g.scope_id, ju64(ev["scope_id"]));
      EXPECT_EQ(uscope::packed_size(g.fields), ju64(ev["payload_size"]));
      expect_fields(s, g.fields, ev["fields"], name + " event " + jstr(ev["name"]));
    }
  }
  EXPECT_EQ(s.summary_fields.size(), jarr(js["summary_fields"]).size());

  if (d["string_table"].is_null()) {
    EXPECT_TRUE(r.strings().empty());
  } else {
    std::vector<std::string> want;
    for (auto v : jarr(d["string_table"])) want.push_back(jstr(v));
    EXPECT_EQ(r.strings(), want);
  }
  if (d["trace_summary"].is_null()) {
    EXPECT_FALSE(r.summary().has_value());
  } else {
    ASSERT_TRUE(r.summary().has_value());
    uscope::test::expect_summary_equal(r.load_summary(), d["trace_summary"]);
  }

  // Every segment through the reader's own replay.
  auto segs = jarr(d["segments"]);
  ASSERT_EQ(r.segments().size(), segs.size());
  uint64_t total = uscope::kFnv64Offset;
  size_t i = 0;
  for (auto js_seg : segs) {
    const auto &seg = r.segments()[i];
    auto sh = js_seg["header"];
    EXPECT_EQ(seg.offset, ju64(js_seg["offset"]));
    EXPECT_EQ(seg.header.time_start_ps, ju64(sh["time_start_ps"]));
    EXPECT_EQ(seg.header.time_end_ps, ju64(sh["time_end_ps"]));
    EXPECT_EQ(seg.header.num_frames, ju64(sh["num_frames"]));
    std::vector<uscope::test::Item> items;
    struct Collect {
      std::vector<uscope::test::Item> &items;
      void frame(uint64_t) {}
      void op(uint64_t t, const uscope::DeltaOp &o) {
        uscope::test::Item it;
        it.time_ps = t;
        it.op = o;
        items.push_back(it);
      }
      void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
        uscope::test::Item it;
        it.is_event = true;
        it.time_ps = t;
        it.event_id = id;
        it.payload.assign(p, p + n);
        items.push_back(std::move(it));
      }
    } collect{items};
    // The item stream as stored (what items_fnv64 digests), ops the schema
    // does not allow included (file 21's slots past the size, COMPAT 27);
    // the replay below skips those, as the reference reader ignores them.
    uscope::decode_deltas(r.deltas(i), seg.header.deltas_raw_size, seg.header.time_start_ps,
                          r.header().flags & uscope::wire::F_INTERLEAVED_DELTAS,
                          r.header().flags & uscope::wire::F_COMPACT_DELTAS, collect);
    struct Skip {
      void frame(uint64_t) {}
      void op(uint64_t, const uscope::DeltaOp &) {}
      void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
    };
    std::vector<uscope::StorageState> states = r.initial_state();
    ASSERT_TRUE(r.replay(i, states, Skip{})) << name << " segment " << i;
    EXPECT_EQ(uscope::test::hex16(uscope::test::items_digest(items, uscope::kFnv64Offset)),
              jstr(js_seg["items_fnv64"]))
        << name << " segment " << i;
    total = uscope::test::items_digest(items, total);
    uscope::test::expect_state_equal(states, js_seg[r.end_of_segment_checkpoints() ? "checkpoint_state" : "final_state"],
                                     name + " final state of segment " + std::to_string(i));
    ++i;
  }
  EXPECT_EQ(uscope::test::hex16(total), jstr(d["totals"]["items_fnv64"]));
}

INSTANTIATE_TEST_SUITE_P(Corpus, ReaderDump,
                         ::testing::Values("01_tiny", "02_multiseg", "03_sparse_dense", "04_props",
                                           "05_events_all_types", "06_wide_compact",
                                           "07_many_storages", "08_multiclock_scopes",
                                           "10_live_incomplete", "11_empty", "12_boundary",
                                           "20_konata_sample", "21_konata2uscope_overflow",
                                           "23_rust_v01_wide", "24_rust_v01_compact"));

}  // namespace
