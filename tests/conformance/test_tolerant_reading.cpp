// Real files that do not follow the spec to the letter, read as a user reads
// them (the `uscope` CLI as a separate program) and through the reader core:
// issue 18's "done means".
//
// - 21_konata2uscope_overflow: the reference's konata2uscope puts the
//   instruction id in the entities slot (COMPAT 27: 1,405 of its 1,764 ops
//   address slots 16-299 of a 16-slot storage) and writes end-of-segment
//   checkpoints (COMPAT 9, 28). The reference reader opens it but its
//   state_at counts committed_insns twice (564 at the end, probes.json);
//   the log retires 282. Ours: 282, and every state equals the item stream
//   replayed from time 0 with the out-of-range ops ignored.
// - The reference C writer's files hold no defect: `uscope check` exits 0.
// - 02_multiseg with segment 50's compressed deltas damaged: only segment
//   50's items are lost; every other answer is the intact file's.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "reader/trace_reader.hpp"
#include "support/cli_run.hpp"
#include "support/corpus_json.hpp"
#include "support/test_util.hpp"

namespace {

using uscope::test::jarr;
using uscope::test::jstr;
using uscope::test::ju64;
using uscope::test::kCorpusDir;

// `uscope ARGS` with stdout and stderr kept apart: the output must stay
// valid JSON whatever the warnings say.
using CliResult = uscope::test::CliSplit;
CliResult uscope(const std::string &args) {
  uscope::test::TempDir dir("tolerant_cli");
  return uscope::test::run_cli_split(args, dir.path());
}

const std::string k21 = kCorpusDir + "21_konata2uscope_overflow.uscope";

TEST(TolerantReading, Konata2uscopeOverflowRetires282) {
  const CliResult r = uscope("summary --json " + k21);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser p;
  auto doc = p.parse(r.out);
  ASSERT_FALSE(doc.error()) << r.out;
  auto cpu = jarr(doc.value()["cpu"]);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(ju64((*cpu.begin())["instructions_retired"]), 282u);  // the reference reader: 564
  EXPECT_EQ(ju64((*cpu.begin())["instructions_squashed"]), 18u);
  // One warning line per kind, naming what was skipped and how often.
  EXPECT_NE(r.err.find("slot_out_of_range x1405"), std::string::npos) << r.err;
  // The first one's place names the storage it addressed.
  EXPECT_NE(r.err.find("(first: segment 0 at offset 864, 10000 ps, storage 'entities')"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("end_of_segment_checkpoints"), std::string::npos) << r.err;
  // --strict fails before printing a result.
  const CliResult s = uscope("summary --json --strict " + k21);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.out, "");
  // The first defect met (at open, while segment 0 is read to recognise its
  // checkpoint): the first op past the storage's size.
  EXPECT_NE(s.err.find("slot 16 of storage 0 at 10000 ps is out of range"), std::string::npos) << s.err;
}

// `uscope state --time T --json` at every frame time (and between frames)
// equals the item stream replayed from time 0, ops on slots past the size
// ignored. (The reference's probes at 0 and at the end differ: they show
// the segment's end state at time 0, and 564 committed at the end.)
TEST(TolerantReading, Konata2uscopeOverflowStateIsTheReplayedItemStream) {
  simdjson::dom::parser pd;
  auto dump = pd.load(kCorpusDir + "21_konata2uscope_overflow.json");
  ASSERT_FALSE(dump.error());
  uscope::TraceReader reader(k21);
  const auto &schema = reader.schema();
  std::set<uint64_t> times = {0, 1};
  for (auto seg : jarr(dump.value()["segments"]))
    for (auto it : jarr(seg["items"])) times.insert({ju64(it["time_ps"]), ju64(it["time_ps"]) + 1});
  ASSERT_GT(times.size(), 200u);
  size_t compared = 0;
  for (uint64_t t : times) {
    if (t > reader.segments().back().header.time_end_ps) continue;  // past the end: a warning, the end state
    const auto truth = uscope::test::replayed_state_at(dump.value(), reader.initial_state(), t);
    EXPECT_EQ(uscope::test::state_bytes(reader.state_at(t)), uscope::test::state_bytes(truth)) << "t=" << t;
    if (t % 7000 && t != 0) continue;  // the CLI at a sample of the times (a process each)
    const CliResult r = uscope("state --time " + std::to_string(t) + " --json " + k21);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser p;
    auto doc = p.parse(r.out);
    ASSERT_FALSE(doc.error()) << r.out;
    size_t i = 0;
    for (auto js : jarr(doc.value()["storages"])) {
      const uscope::StorageState &s = truth.at(i);
      const auto &fields = schema.storages.at(i).fields;
      EXPECT_EQ(ju64(js["valid"]), s.occupancy()) << "t=" << t << " storage " << i;
      std::vector<uint64_t> got, want;
      for (auto slot : jarr(js["slots"])) {
        got.push_back(ju64(slot["slot"]));
        for (const auto &f : fields) got.push_back(ju64(slot[schema.str(f.name)]));
      }
      for (uint16_t k = 0; k < s.layout().num_slots; ++k) {
        if (!s.valid(k)) continue;
        want.push_back(k);
        for (uint16_t f = 0; f < fields.size(); ++f) want.push_back(s.get(k, f));
      }
      EXPECT_EQ(got, want) << "t=" << t << " storage " << i;
      ++i;
    }
    EXPECT_EQ(i, truth.size());
    ++compared;
  }
  EXPECT_GE(compared, 30u);
  // At the end: the 282 retired instructions of the log.
  const auto end = reader.state_at(reader.segments().back().header.time_end_ps);
  size_t committed = schema.storages.size();
  for (size_t i = 0; i < schema.storages.size(); ++i)
    if (std::string(schema.str(schema.storages[i].name)) == "committed_insns") committed = i;
  ASSERT_LT(committed, schema.storages.size());
  EXPECT_EQ(end[committed].get(0, 0), 282u);
}

TEST(TolerantReading, Konata2uscopeOverflowCheck) {
  const CliResult r = uscope("check --json " + k21);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // defects, readable
  simdjson::dom::parser p;
  auto doc = p.parse(r.out);
  ASSERT_FALSE(doc.error()) << r.out;
  EXPECT_TRUE(bool(doc.value()["readable"]));
  std::map<std::string, uint64_t> kinds;
  for (auto d : jarr(doc.value()["defects"])) {
    kinds[jstr(d["kind"])] = ju64(d["count"]);
    if (jstr(d["kind"]) == "slot_out_of_range") {
      EXPECT_EQ(ju64(d["first"]["segment"]), 0u);
      EXPECT_EQ(ju64(d["first"]["time_ps"]), 10000u);  // the first instruction id past 15
    }
  }
  EXPECT_EQ(kinds, (std::map<std::string, uint64_t>{{"slot_out_of_range", 1405}, {"end_of_segment_checkpoints", 1}}));
  // Text: one line per kind and a summary line.
  const CliResult t = uscope("check " + k21);
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.out.find("slot_out_of_range: 1405 (first: segment 0"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("2 kinds of defect, readable"), std::string::npos) << t.out;
}

// On a terminal, check draws the progress bar of `uscope convert`.
TEST(TolerantReading, CheckShowsProgressOnATerminal) {
  const auto bar = uscope::test::run_cli_on_pty({"check", kCorpusDir + "02_multiseg.uscope"});
  EXPECT_EQ(bar.exit_code, 0) << bar.out;
  EXPECT_NE(bar.out.find("\rcheck ["), std::string::npos) << bar.out;
  EXPECT_NE(bar.out.find("100%"), std::string::npos) << bar.out;
  const auto quiet = uscope::test::run_cli_on_pty({"check", kCorpusDir + "02_multiseg.uscope", "--no-progress"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("check ["), std::string::npos) << quiet.out;
}

// The reference C writer's files follow the spec: nothing to report, TSUM
// included (recomputed from the items and compared where the file has one).
TEST(TolerantReading, ReferenceCWriterFilesHaveNoDefect) {
  for (const char *name : {"01_tiny", "02_multiseg", "03_sparse_dense", "04_props", "05_events_all_types",
                           "06_wide_compact", "07_many_storages", "08_multiclock_scopes", "10_live_incomplete",
                           "11_empty", "12_boundary"}) {
    const CliResult r = uscope(std::string("check --json ") + kCorpusDir + name + ".uscope");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
    simdjson::dom::parser p;
    auto doc = p.parse(r.out);
    ASSERT_FALSE(doc.error()) << name << ": " << r.out;
    EXPECT_TRUE(bool(doc.value()["readable"])) << name;
    EXPECT_EQ(jarr(doc.value()["defects"]).size(), 0u) << name << ": " << r.out;
  }
  // A file that is not a trace at all: exit 2.
  const CliResult r = uscope(std::string("check --json ") + kCorpusDir + "01_tiny.json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  simdjson::dom::parser p;
  auto doc = p.parse(r.out);
  ASSERT_FALSE(doc.error()) << r.out;
  EXPECT_FALSE(bool(doc.value()["readable"]));
}

// 02_multiseg with 16 bytes of segment 50's compressed deltas inverted: the
// segment no longer decodes. `check` names it; `events --json` over the
// whole trace is one valid JSON array of the other 100 segments' 2,571
// events (2,602 less segment 50's 31), exit 0, with a warning naming
// segment 50; state_at in segments 51-100 is the intact file's.
TEST(TolerantReading, DamagedSegmentLosesOnlyItsOwnItems) {
  const std::string intact_path = kCorpusDir + "02_multiseg.uscope";
  uscope::TraceReader intact(intact_path);
  ASSERT_EQ(intact.segments().size(), 101u);
  const uscope::SegmentInfo &s50 = intact.segments()[50];
  std::string bytes = uscope::test::read_all(intact_path);
  ASSERT_FALSE(bytes.empty());
  // After the 4-byte size prefix (COMPAT 2): the LZ4 block itself.
  const uint64_t at = s50.offset + uscope::wire::kSegmentHeaderSize + s50.header.checkpoint_size + 4;
  ASSERT_LT(at + 16, s50.offset + uscope::wire::kSegmentHeaderSize + s50.header.checkpoint_size +
                         s50.header.deltas_compressed_size);
  for (int i = 0; i < 16; ++i) bytes[at + i] = static_cast<char>(bytes[at + i] ^ 0xFF);
  uscope::test::TempDir dir("tolerant_damaged");
  const std::string path = dir.file("02_damaged.uscope");
  uscope::test::write_all(path, bytes);

  const CliResult c = uscope("check --json " + path);
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  simdjson::dom::parser pc;
  auto cdoc = pc.parse(c.out);
  ASSERT_FALSE(cdoc.error()) << c.out;
  auto defects = jarr(cdoc.value()["defects"]);
  ASSERT_EQ(defects.size(), 1u) << c.out;
  EXPECT_EQ(jstr((*defects.begin())["kind"]), "segment_undecodable");
  EXPECT_EQ(ju64((*defects.begin())["count"]), 1u);
  EXPECT_EQ(ju64((*defects.begin())["first"]["segment"]), 50u);
  EXPECT_EQ(ju64((*defects.begin())["first"]["offset"]), s50.offset);

  const uint64_t end = intact.segments().back().header.time_end_ps;
  const CliResult e = uscope("events --json --from 0 --to " + std::to_string(end) + " " + path);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  simdjson::dom::parser pe;
  auto edoc = pe.parse(e.out);
  ASSERT_FALSE(edoc.error()) << "not valid JSON: " << e.out.substr(0, 200);
  const auto events = jarr(edoc.value());
  EXPECT_EQ(events.size(), 2571u);
  for (auto ev : events) {
    const uint64_t t = ju64(ev["time_ps"]);
    // No event of segment 50's own span survives (its boundary times are
    // shared with segments 49 and 51, whose events there do).
    EXPECT_FALSE(t > s50.header.time_start_ps && t < s50.header.time_end_ps) << t;
  }
  EXPECT_NE(e.err.find("segment_undecodable x1"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("segment 50 at offset " + std::to_string(s50.offset)), std::string::npos) << e.err;
  // --strict refuses it, before printing anything.
  const CliResult strict = uscope("events --json --strict --from 0 --to " + std::to_string(end) + " " + path);
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_EQ(strict.out, "");

  uscope::TraceReader damaged(path);
  for (size_t i = 51; i < 101; ++i) {
    const auto &h = intact.segments()[i].header;
    for (uint64_t t : {h.time_start_ps, h.time_start_ps + 1, h.time_start_ps + (h.time_end_ps - h.time_start_ps) / 2,
                       h.time_end_ps})
      EXPECT_EQ(uscope::test::state_bytes(damaged.state_at(t)), uscope::test::state_bytes(intact.state_at(t)))
          << "segment " << i << " t=" << t;
  }
  // Inside segment 50: its start state (its checkpoint decodes), which is
  // the intact file's state after segment 49.
  struct Skip {
    void frame(uint64_t) {}
    void op(uint64_t, const uscope::DeltaOp &) {}
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  };
  std::vector<uscope::StorageState> after49 = intact.initial_state();
  ASSERT_TRUE(intact.replay(49, after49, Skip{}));
  EXPECT_EQ(uscope::test::state_bytes(damaged.state_at(s50.header.time_start_ps + 1)),
            uscope::test::state_bytes(after49));
  const auto found = damaged.defects().entries();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, uscope::Defect::SegmentUndecodable);
  EXPECT_EQ(found[0].count, 1u);  // read many times, counted once
}

}  // namespace
