// The cpu commands of tools/uscope (info, state, timeline, counters, buffers,
// analyze, events by cycle) run as a separate program, their JSON and CSV
// compared with golden files in tests/unit/data/golden/, on two traces:
//   cpu_small: written here with the public writer and the cpu protocol API
//              (the schedule below, 12 cycles, 6 instructions on 4 reused
//              entity ids, one flush, stalls, a rob and an iq buffer);
//   20_konata_sample: the reference writer's conformance trace (4 cycles,
//              2 instructions), whose reference uscope-cli output the
//              goldens were compared with by hand (tools/README.md lists the
//              differences that remain, all of them additions).
// The goldens were produced once by the command (USCOPE_UPDATE_GOLDEN=1
// rewrites them) and checked by hand against the schedule: each test below
// also asserts the figures that check found, so that a wrong golden cannot
// pass unnoticed. Then the error cases: no cpu scope, unknown names, ranges
// past the end (clamped, with a warning), bad ranges (usage errors).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::kCorpusDir;
using uscope::test::TempDir;

const std::string kGoldenDir = std::string(USCOPE_UNIT_DATA_DIR) + "/golden/";
const std::string kKonata = kCorpusDir + "20_konata_sample.uscope";

// The schedule of cpu_small (cycle = time / 1000 ps; stages IF ID EX WB):
//   insn  entity pc      fetch ID EX WB  end
//   #0    0      0x1000  0     1  2  3   retired at 4
//   #1    1      0x1004  1     2  3  5   retired at 6   (annotated "waits for x1"; raw dep on entity 0)
//   #2    2      0x1008  2     3  4  5   retired at 6
//   #3    3      0x100c  3     4         flushed at 5 (mispredict; branch_misses += 1)
//   #4    0      0x1010  6     7  8  9   retired at 10
//   #5    3      0x1014  7     8         in flight at the end (cycle 11)
// rob (4 slots): an instruction holds a slot from its ID cycle to its retire or
// flush: slot 0 #0 1..4, slot 1 #1 2..6, slot 2 #2 3..6, slot 3 #3 4..5,
// slot 0 #4 7..10, slot 1 #5 8..end.
// iq (4 slots, head/tail pointers, pair 0): slot 0 = entity 1 at 2 (tail 1),
// slot 1 = entity 2 at 3 (tail 2), slot 0 cleared at 3 (head 1), slot 1
// cleared at 4 (head 2), slot 2 = entity 3 at 8 (tail 3).
// Stalls: rob_full at 5 and 6, iq_full at 8.
std::string write_cpu_small(const TempDir &dir) {
  const std::string path = dir.file("cpu_small.uscope");
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "core_clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "soc", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  const char *stages[] = {"IF", "ID", "EX", "WB"};
  const char *counters[] = {"branch_misses"};
  uscope_cpu_buffer_def_t rob{};
  rob.name = "rob";
  rob.num_slots = 4;
  uscope_cpu_config_t cc{};
  cc.struct_size = sizeof cc;
  cc.scope_name = "core0";
  cc.parent_scope_id = 0;
  cc.clock_id = clk;
  cc.isa = "RV32I";
  cc.stages = stages;
  cc.num_stages = 4;
  cc.max_entities = 4;
  cc.buffers = &rob;
  cc.num_buffers = 1;
  cc.counters = counters;
  cc.num_counters = 1;
  cc.dut_name = "small";
  uscope_cpu_t *cpu = nullptr;
  EXPECT_EQ(uscope_cpu_declare(s, &cpu, &cc), USCOPE_OK) << uscope_last_error();
  uscope_cpu_ids_t ids{};
  ids.struct_size = sizeof ids;
  EXPECT_EQ(uscope_cpu_ids(cpu, &ids), USCOPE_OK);
  const uscope_field_t iq_fields[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}};
  const uscope_field_t iq_props[] = {{"head", USCOPE_FT_U16, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                     {"tail", USCOPE_FT_U16, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  uint16_t iq = 0;
  EXPECT_EQ(uscope_schema_add_storage(s, &iq, "iq", ids.scope_id, 4, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER, iq_fields,
                                      1, iq_props, 2),
            USCOPE_OK)
      << uscope_last_error();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return path;

  const auto ok = [](uscope_status_t st) { EXPECT_EQ(st, USCOPE_OK) << uscope_last_error(); };
  const auto stage = [&](uint32_t e, uint8_t st) { ok(uscope_cpu_stage_transition(w, cpu, e, st)); };
  for (uint64_t c = 0; c < 12; ++c) {
    ok(uscope_begin_cycle(w, c * 1000));
    switch (c) {
      case 0:
        ok(uscope_cpu_fetch(w, cpu, 0, 0x1000, 0x00100093));  // addi x1, x0, 1
        break;
      case 1:
        ok(uscope_cpu_fetch(w, cpu, 1, 0x1004, 0x00108133));  // add x2, x1, x1
        stage(0, 1);
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 0, 0));
        break;
      case 2:
        ok(uscope_cpu_fetch(w, cpu, 2, 0x1008, 0x00208463));  // beq x1, x2, 8
        stage(0, 2);
        stage(1, 1);
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 1, 1));
        ok(uscope_cpu_annotate(w, cpu, 1, "waits for x1"));
        ok(uscope_slot_set(w, iq, 0, 0, 1));
        ok(uscope_prop_set(w, iq, 1, 1));
        break;
      case 3:
        ok(uscope_cpu_fetch(w, cpu, 3, 0x100c, 0x00000013));  // nop
        stage(0, 3);
        stage(1, 2);
        stage(2, 1);
        ok(uscope_cpu_dependency(w, cpu, 0, 1, USCOPE_CPU_DEP_RAW));
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 2, 2));
        ok(uscope_slot_set(w, iq, 1, 0, 2));
        ok(uscope_prop_set(w, iq, 1, 2));
        ok(uscope_slot_clear(w, iq, 0));
        ok(uscope_prop_set(w, iq, 0, 1));
        break;
      case 4:
        ok(uscope_cpu_retire(w, cpu, 0));
        ok(uscope_cpu_buffer_remove(w, cpu, 0, 0));
        stage(2, 2);
        stage(3, 1);
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 3, 3));
        ok(uscope_slot_clear(w, iq, 1));
        ok(uscope_prop_set(w, iq, 0, 2));
        break;
      case 5:
        stage(1, 3);
        stage(2, 3);
        ok(uscope_cpu_flush(w, cpu, 3, USCOPE_CPU_FLUSH_MISPREDICT));
        ok(uscope_cpu_buffer_remove(w, cpu, 0, 3));
        ok(uscope_cpu_counter_add(w, cpu, 1, 1));
        ok(uscope_cpu_stall(w, cpu, 0));  // rob_full
        break;
      case 6:
        ok(uscope_cpu_retire(w, cpu, 1));
        ok(uscope_cpu_retire(w, cpu, 2));
        ok(uscope_cpu_buffer_remove(w, cpu, 0, 1));
        ok(uscope_cpu_buffer_remove(w, cpu, 0, 2));
        ok(uscope_cpu_fetch(w, cpu, 0, 0x1010, 0x00000013));
        ok(uscope_cpu_stall(w, cpu, 0));  // rob_full
        break;
      case 7:
        ok(uscope_cpu_fetch(w, cpu, 3, 0x1014, 0x00000013));
        stage(0, 1);
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 0, 0));
        break;
      case 8:
        stage(0, 2);
        stage(3, 1);
        ok(uscope_cpu_buffer_insert(w, cpu, 0, 1, 3));
        ok(uscope_slot_set(w, iq, 2, 0, 3));
        ok(uscope_prop_set(w, iq, 1, 3));
        ok(uscope_cpu_stall(w, cpu, 1));  // iq_full
        break;
      case 9:
        stage(0, 3);
        break;
      case 10:
        ok(uscope_cpu_retire(w, cpu, 0));
        ok(uscope_cpu_buffer_remove(w, cpu, 0, 0));
        break;
      default:
        break;
    }
    ok(uscope_end_cycle(w));
  }
  ok(uscope_writer_close(w));
  uscope_cpu_free(cpu);
  return path;
}

// The test trace, written once for the suite.
class CliAnalysis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("cli_analysis");
    path_ = new std::string(write_cpu_small(*dir_));
  }
  static void TearDownTestSuite() {
    // Regenerating the goldens keeps the trace, to check them by hand (and
    // to run the reference uscope-cli on it).
    if (std::getenv("USCOPE_UPDATE_GOLDEN")) {
      const auto kept = std::filesystem::temp_directory_path() / "cpu_small.uscope";
      std::error_code ec;
      std::filesystem::copy_file(*path_, kept, std::filesystem::copy_options::overwrite_existing, ec);
      std::printf("cpu_small kept as %s\n", kept.c_str());
    }
    delete path_;
    delete dir_;
    path_ = nullptr;
    dir_ = nullptr;
  }
  static const std::string &cpu_small() { return *path_; }

 private:
  static TempDir *dir_;
  static std::string *path_;
};
TempDir *CliAnalysis::dir_ = nullptr;
std::string *CliAnalysis::path_ = nullptr;

using Split = uscope::test::CliSplit;
Split run(const std::string &args) {
  TempDir d("cli_analysis_err");
  return uscope::test::run_cli_split(args, d.path());
}

std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// out must equal golden file `name`; USCOPE_UPDATE_GOLDEN=1 rewrites it instead
// (then check the new file by hand against the schedule above).
void expect_golden(const std::string &out, const std::string &name) {
  const std::string path = kGoldenDir + name;
  if (std::getenv("USCOPE_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << out;
    return;
  }
  std::ifstream probe(path);
  ASSERT_TRUE(probe.good()) << "missing golden file " << path;
  EXPECT_EQ(out, read_text(path)) << "golden " << name << " differs; the output is:\n" << out;
}

// `uscope ARGS` succeeds and prints golden `name`, with nothing on stderr but
// warnings about the reader's defect `defect` (the konata sample's checkpoints).
std::string golden(const std::string &args, const std::string &name, const std::string &defect = "") {
  const Split r = run(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);)
    EXPECT_TRUE(!defect.empty() && line.find("warning: " + kKonata + ": " + defect) != std::string::npos)
        << args << ": " << line;
  expect_golden(r.out, name);
  return r.out;
}

simdjson::dom::element parse(simdjson::dom::parser &p, const std::string &s) {
  auto r = p.parse(s);
  EXPECT_FALSE(r.error()) << "not JSON: " << s.substr(0, 300);
  return r.value();
}

// ── cpu_small ──

TEST_F(CliAnalysis, InfoHasTheReferenceKeysAndOurs) {
  const std::string out = golden("info " + cpu_small() + " --json", "cpu_small.info.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  // Ours, unchanged:
  EXPECT_EQ(uint64_t(j["segments"]), uint64_t(j["segment_count"]));
  EXPECT_EQ(std::string_view(j["dut"]["dut_name"]), "small");
  // The reference's:
  EXPECT_EQ(std::string_view(j["version"]), "0.3");
  EXPECT_EQ(uint64_t(j["max_cycle"]), 11u);
  EXPECT_EQ(uint64_t(j["period_ps"]), 1000u);
  std::vector<std::string> stages, counters, buffers, counters2;
  for (auto s : j["stage_names"].get_array()) stages.emplace_back(std::string_view(s));
  for (auto s : j["counter_names"].get_array()) counters.emplace_back(std::string_view(s));
  for (auto s : j["counters"].get_array()) counters2.emplace_back(std::string_view(s));
  for (auto s : j["buffers"].get_array()) buffers.emplace_back(std::string_view(s));
  EXPECT_EQ(stages, (std::vector<std::string>{"IF", "ID", "EX", "WB"}));
  EXPECT_EQ(counters, (std::vector<std::string>{"committed_insns", "branch_misses"}));
  EXPECT_EQ(counters2, counters);  // the spec's `jq '.counters'`
  EXPECT_EQ(buffers, (std::vector<std::string>{"rob", "iq"}));
  // schema.storages: the iq with its pointer properties.
  bool iq_seen = false;
  for (auto s : j["schema"]["storages"].get_array()) {
    if (std::string_view(s["name"]) != "iq") continue;
    iq_seen = true;
    EXPECT_EQ(uint64_t(s["num_slots"]), 4u);
    EXPECT_EQ(std::string_view(s["fields"].at(0)["field_type"]), "u32");
    EXPECT_EQ(std::string_view(s["properties"].at(0)["name"]), "head");
    EXPECT_EQ(std::string_view(s["flags"].at(1)), "buffer");
  }
  EXPECT_TRUE(iq_seen);
  bool stage_enum = false;
  for (auto e : j["schema"]["enums"].get_array())
    if (std::string_view(e["name"]) == "pipeline_stage") stage_enum = std::string_view(e["values"].at(2)["name"]) == "EX";
  EXPECT_TRUE(stage_enum);
}

TEST_F(CliAnalysis, StateHasTheBuffersArray) {
  const std::string out = golden("state " + cpu_small() + " --cycle 5 --json", "cpu_small.state5.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  EXPECT_EQ(uint64_t(j["cycle"]), 5u);
  EXPECT_FALSE(j["storages"].error());  // ours, kept
  // At the end of cycle 5: rob slots 1 and 2 (#1, #2; #3 flushed in 5, #0 retired in 4).
  auto rob = j["buffers"].at(0);
  EXPECT_EQ(std::string_view(rob["name"]), "rob");
  EXPECT_EQ(uint64_t(rob["capacity"]), 4u);
  EXPECT_EQ(uint64_t(rob["occupied"]), 2u);
  EXPECT_DOUBLE_EQ(double(rob["fill_percent"]), 50.0);
  EXPECT_EQ(uint64_t(rob["slots"].at(0)["slot"]), 1u);
  EXPECT_EQ(uint64_t(rob["slots"].at(0)["fields"].at(0)), 1u);
  // iq: empty since cycle 4, head = tail = 2.
  auto iq = j["buffers"].at(1);
  EXPECT_EQ(std::string_view(iq["name"]), "iq");
  EXPECT_EQ(uint64_t(iq["occupied"]), 0u);
  EXPECT_EQ(std::string_view(iq["properties"].at(0)["role"]), "HEAD_PTR");
  EXPECT_EQ(uint64_t(iq["properties"].at(0)["value"]), 2u);
  EXPECT_EQ(uint64_t(iq["properties"].at(1)["value"]), 2u);
}

TEST_F(CliAnalysis, TimelineOfAReusedEntityId) {
  // Entity 3 held #3 (flushed at 5) and #5 (in flight at the end).
  const std::string out = golden("timeline " + cpu_small() + " --entity 3 --json", "cpu_small.timeline3.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  ASSERT_EQ(simdjson::dom::array(j).size(), 2u);
  auto a = j.at(0), b = j.at(1);
  EXPECT_EQ(uint64_t(a["entity_id"]), 3u);
  EXPECT_EQ(uint64_t(a["pc"]), 0x100cu);
  EXPECT_EQ(std::string_view(a["retire_status"]), "flushed");
  EXPECT_EQ(std::string_view(a["flush_reason"]), "mispredict");
  EXPECT_EQ(uint64_t(a["first_cycle"]), 3u);
  EXPECT_EQ(uint64_t(a["last_cycle"]), 5u);
  EXPECT_EQ(std::string_view(a["stages"].at(0)["name"]), "IF");
  EXPECT_EQ(uint64_t(a["stages"].at(0)["start"]), 3u);
  EXPECT_EQ(uint64_t(a["stages"].at(0)["end"]), 4u);
  EXPECT_EQ(uint64_t(a["stages"].at(0)["duration"]), 1u);
  EXPECT_EQ(uint64_t(a["stages"].at(0)["start_cycle"]), 3u);
  EXPECT_EQ(std::string_view(b["retire_status"]), "in_flight");
  EXPECT_EQ(uint64_t(b["pc"]), 0x1014u);
  EXPECT_EQ(uint64_t(b["first_cycle"]), 7u);
  // --cycle picks one of them; csv has one row per stage.
  const Split one = run("timeline " + cpu_small() + " --entity 3 --cycle 8 --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto k = parse(p, one.out);
  ASSERT_EQ(simdjson::dom::array(k).size(), 1u);
  EXPECT_EQ(uint64_t(k.at(0)["first_cycle"]), 7u);
  golden("timeline " + cpu_small() + " --entity 3 --format csv", "cpu_small.timeline3.csv");
}

TEST_F(CliAnalysis, TimelineHasAnnotationsDependenciesAndDisassembly) {
  const std::string out = golden("timeline " + cpu_small() + " --entity 1 --json", "cpu_small.timeline1.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  ASSERT_EQ(simdjson::dom::array(j).size(), 1u);
  auto a = j.at(0);
  EXPECT_EQ(std::string_view(a["retire_status"]), "retired");
  EXPECT_EQ(std::string_view(a["tooltip"]), "waits for x1");
  EXPECT_EQ(std::string_view(a["annotations"].at(0)), "waits for x1");
  EXPECT_EQ(uint64_t(a["deps"].at(0)), 0u);
  EXPECT_NE(std::string(std::string_view(a["disasm"])).find("add"), std::string::npos);
  // EX took cycles 3..5: two cycles.
  EXPECT_EQ(std::string_view(a["stages"].at(2)["name"]), "EX");
  EXPECT_EQ(uint64_t(a["stages"].at(2)["duration"]), 2u);
}

TEST_F(CliAnalysis, CountersFinalPerCycleAndDownsampled) {
  const std::string fin = golden("counters " + cpu_small() + " --json", "cpu_small.counters.json");
  simdjson::dom::parser p;
  auto j = parse(p, fin);
  // Final values at cycle 11: 4 retired (#0 at 4, #1 and #2 at 6, #4 at 10), 1 branch miss.
  EXPECT_EQ(std::string_view(j.at(0)["name"]), "committed_insns");
  EXPECT_EQ(uint64_t(j.at(0)["values"].at(0)["cycle"]), 11u);
  EXPECT_EQ(uint64_t(j.at(0)["values"].at(0)["value"]), 4u);
  EXPECT_EQ(uint64_t(j.at(1)["values"].at(0)["value"]), 1u);

  const std::string range = golden("counters " + cpu_small() + " --counter committed --range 3:7 --json",
                                   "cpu_small.counters3-7.json");
  auto r = parse(p, range);
  ASSERT_EQ(simdjson::dom::array(r).size(), 1u);  // "committed" matches committed_insns only
  auto v = r.at(0)["values"];
  // cycles 3..7: 0 1 1 3 3; deltas 0 1 0 2 0.
  const uint64_t want[] = {0, 1, 1, 3, 3}, delta[] = {0, 1, 0, 2, 0};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(uint64_t(v.at(i)["cycle"]), 3 + i);
    EXPECT_EQ(uint64_t(v.at(i)["value"]), want[i]) << i;
    EXPECT_EQ(uint64_t(v.at(i)["delta"]), delta[i]) << i;
  }
  EXPECT_EQ(uint64_t(r.at(0)["delta"]), 3u);
  golden("counters " + cpu_small() + " --range 3:7 --format csv", "cpu_small.counters3-7.csv");

  const std::string ds = golden("counters " + cpu_small() + " --counter committed_insns --buckets 3 --json",
                                "cpu_small.counters.buckets3.json");
  auto d = parse(p, ds);
  // 3 buckets of 4 cycles over cycles 0..11. The trace's TSUM has one level-0
  // entry for all 12 cycles (its base interval is longer than the trace), so
  // the buckets come from it, inexact, each with its share of the 4
  // increments: 4 x 4/12, rounded: 1 (the documented proportional share;
  // a replay would give 1, 1 and 2).
  EXPECT_FALSE(bool(d.at(0)["exact"]));
  for (auto b : d.at(0)["buckets"].get_array()) {
    const uint64_t width = uint64_t(b["end_cycle"]) - uint64_t(b["start_cycle"]);
    EXPECT_EQ(width, 4u);
    EXPECT_EQ(uint64_t(b["sum"]), 1u);
  }
}

TEST_F(CliAnalysis, BuffersAtACycle) {
  // End of cycle 3: rob slots 0..2 (#0, #1, #2); iq slot 1 (entity 2), head 1, tail 2.
  const std::string out = golden("buffers " + cpu_small() + " --cycle 3 --json", "cpu_small.buffers3.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  EXPECT_EQ(uint64_t(j.at(0)["occupied"]), 3u);
  EXPECT_DOUBLE_EQ(double(j.at(0)["fill_percent"]), 75.0);
  auto iq = j.at(1);
  EXPECT_EQ(uint64_t(iq["occupied"]), 1u);
  EXPECT_EQ(uint64_t(iq["slots"].at(0)["slot"]), 1u);
  EXPECT_EQ(uint64_t(iq["pairs"].at(0)["head"]), 1u);
  EXPECT_EQ(uint64_t(iq["pairs"].at(0)["tail"]), 2u);
  EXPECT_EQ(uint64_t(iq["pairs"].at(0)["distance"]), 1u);
  golden("buffers " + cpu_small() + " --cycle 3 --format csv", "cpu_small.buffers3.csv");
  const Split rob = run("buffers " + cpu_small() + " --cycle 3 --buffer rob --json");
  ASSERT_EQ(rob.exit_code, 0) << rob.err;
  EXPECT_EQ(simdjson::dom::array(parse(p, rob.out)).size(), 1u);
}

TEST_F(CliAnalysis, AnalyzeTheWholeTrace) {
  const std::string out = golden("analyze " + cpu_small() + " --range 0:11 --json", "cpu_small.analyze.json");
  simdjson::dom::parser p;
  auto j = parse(p, out);
  EXPECT_EQ(uint64_t(j["start_cycle"]), 0u);
  EXPECT_EQ(uint64_t(j["end_cycle"]), 11u);
  EXPECT_EQ(uint64_t(j["range_cycles"]), 11u);
  // Fetched in [0, 11): all six; 4 retired, 1 flushed, 1 in flight; IPC 4/11.
  EXPECT_EQ(uint64_t(j["instructions"]["total"]), 6u);
  EXPECT_EQ(uint64_t(j["instructions"]["retired"]), 4u);
  EXPECT_EQ(uint64_t(j["instructions"]["flushed"]), 1u);
  EXPECT_EQ(uint64_t(j["instructions"]["in_flight"]), 1u);
  EXPECT_DOUBLE_EQ(double(j["ipc"]), 4.0 / 11.0);
  EXPECT_DOUBLE_EQ(double(j["instructions"]["flush_rate"]), 1.0 / 6.0);
  EXPECT_EQ(std::string_view(j["counter_summaries"].at(1)["name"]), "branch_misses");
  EXPECT_EQ(uint64_t(j["counter_summaries"].at(1)["delta"]), 1u);
  EXPECT_EQ(std::string_view(j["buffer_snapshots"].at(0)["name"]), "rob");
  EXPECT_FALSE(j["stage_latencies"].at(0)["avg_latency"].error());
  // Stalls: rob_full twice, iq_full once, most frequent first.
  EXPECT_EQ(std::string_view(j["stalls"].at(0)["reason"]), "rob_full");
  EXPECT_EQ(uint64_t(j["stalls"].at(0)["count"]), 2u);
  EXPECT_EQ(std::string_view(j["stalls"].at(1)["reason"]), "iq_full");
  golden("analyze " + cpu_small() + " --range 0:11 --format csv", "cpu_small.analyze.csv");
}

TEST_F(CliAnalysis, EventsByCycleWithValuesByName) {
  // Cycles 4..5 of clock 0 = 4000..5000 ps: enum values by name (stage, flush and stall reasons).
  const std::string out =
      golden("events " + cpu_small() + " --from-cycle 4 --to-cycle 5 --json", "cpu_small.events4-5.json");
  EXPECT_NE(out.find("\"reason\":\"mispredict\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"reason\":\"rob_full\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"stage\":\"ID\""), std::string::npos) << out;
  const Split ps = run("events " + cpu_small() + " --from 4000 --to 5000 --json");
  EXPECT_EQ(ps.out, out);
  golden("events " + cpu_small() + " --from-cycle 4 --to-cycle 5 --format csv", "cpu_small.events4-5.csv");
  // A cell with quotes is quoted, its quotes doubled (RFC 4180): the annotation at cycle 2.
  const Split q = run("events " + cpu_small() + " --from-cycle 2 --to-cycle 2 --format csv");
  EXPECT_NE(q.out.find("2000,annotate,\"entity_id=1 text=\"\"waits for x1\"\"\"\r\n"), std::string::npos) << q.out;
}

#ifdef USCOPE_TB_FW_ELF
// --elf: the testbench firmware (RV32, like cpu_small's RV32I) names the
// function and source line at each pc; which ones depends on the firmware's
// layout, so only their presence is checked here (test_elf_info checks the
// look-ups against objdump).
TEST_F(CliAnalysis, TimelineNamesFunctionAndLineFromAnElf) {
  const Split r = run("timeline " + cpu_small() + " --entity 1 --elf " + USCOPE_TB_FW_ELF + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  simdjson::dom::parser p;
  auto a = parse(p, r.out).at(0);
  EXPECT_NE(std::string_view(a["function"]), "");
  EXPECT_NE(std::string_view(a["source_file"]), "");
  EXPECT_GT(uint64_t(a["source_line"]), 0u);
  const Split text = run("timeline " + cpu_small() + " --entity 1 --elf " + USCOPE_TB_FW_ELF);
  EXPECT_NE(text.out.find("  Source:  " + std::string(std::string_view(a["function"])) + " at "), std::string::npos)
      << text.out;
}
#endif

// ── the reference writer's trace ──

// Its checkpoints hold their segment's end (COMPAT 9, 28): each command warns of it.
const char *const kKonataDefect = "end_of_segment_checkpoints";

TEST_F(CliAnalysis, KonataSampleLikeTheReference) {
  const std::string info = golden("info " + kKonata + " --json", "konata.info.json", kKonataDefect);
  simdjson::dom::parser p;
  auto j = parse(p, info);
  EXPECT_EQ(uint64_t(j["max_cycle"]), 4u);
  EXPECT_EQ(std::string_view(j["metadata"].at(0).at(0)), "File");
  EXPECT_EQ(std::string_view(j["counters"].at(0)), "committed_insns");
  EXPECT_EQ(simdjson::dom::array(j["buffer_names"]).size(), 0u);
  const std::string tl = golden("timeline " + kKonata + " --entity 0 --json", "konata.timeline0.json", kKonataDefect);
  auto t = parse(p, tl);
  EXPECT_EQ(std::string_view(t.at(0)["retire_status"]), "retired");
  EXPECT_EQ(uint64_t(t.at(0)["last_cycle"]), 3u);
  EXPECT_EQ(std::string_view(t.at(0)["stages"].at(3)["name"]), "Writeback");
  const std::string c = golden("counters " + kKonata + " --range 0:4 --json", "konata.counters0-4.json", kKonataDefect);
  auto cj = parse(p, c);
  EXPECT_EQ(uint64_t(cj.at(0)["values"].at(3)["value"]), 1u);  // the reference: 0 0 0 1 2
  EXPECT_EQ(uint64_t(cj.at(0)["values"].at(4)["value"]), 2u);
  golden("state " + kKonata + " --cycle 2 --json", "konata.state2.json", kKonataDefect);
  const std::string a = golden("analyze " + kKonata + " --range 0:4 --json", "konata.analyze.json", kKonataDefect);
  EXPECT_EQ(uint64_t(parse(p, a)["instructions"]["retired"]), 2u);
}

// ── bad input ──

TEST_F(CliAnalysis, EveryCpuCommandRefusesATraceWithoutACpuScope) {
  const std::string tiny = kCorpusDir + "01_tiny.uscope";
  for (const std::string &cmd : {"timeline " + tiny + " --entity 0", "counters " + tiny,
                                 "buffers " + tiny + " --cycle 0"}) {
    const Split r = run(cmd + " --json");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_NE(r.err.find("this trace has no cpu protocol scope"), std::string::npos) << cmd << "\n" << r.err;
  }
  // analyze covers noc and npu scopes too: it names all three.
  const Split a = run("analyze " + tiny + " --range 0:1 --json");
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_EQ(a.out, "");
  EXPECT_NE(a.err.find("this trace has no cpu, noc or npu protocol scope"), std::string::npos) << a.err;
  // info and state still work, with empty cpu parts.
  const Split i = run("info " + tiny + " --json");
  ASSERT_EQ(i.exit_code, 0) << i.err;
  simdjson::dom::parser p;
  auto j = parse(p, i.out);
  EXPECT_EQ(simdjson::dom::array(j["stage_names"]).size(), 0u);
  const Split s = run("state " + tiny + " --cycle 1 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(simdjson::dom::array(parse(p, s.out)["buffers"]).size(), 0u);
}

TEST_F(CliAnalysis, UnknownNamesAreErrorsNamingTheKnownOnes) {
  const Split c = run("counters " + cpu_small() + " --counter nosuch");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("nosuch"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("committed_insns, branch_misses"), std::string::npos) << c.err;
  const Split b = run("buffers " + cpu_small() + " --cycle 1 --buffer lsq");
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("rob, iq"), std::string::npos) << b.err;
  // Entity 2 is not alive in cycles 8..11; entity 9 does not fit the 4-slot catalog.
  const Split e = run("timeline " + cpu_small() + " --entity 2 --range 8:11");
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find("entity 2 not found in cycles 8:11"), std::string::npos) << e.err;
  // --elf must name an ELF file.
  const Split elf = run("timeline " + cpu_small() + " --entity 0 --elf " + kKonata);
  EXPECT_EQ(elf.exit_code, 1);
  EXPECT_NE(elf.err.find("not a readable ELF file"), std::string::npos) << elf.err;
  EXPECT_EQ(elf.out, "");
  const Split big = run("timeline " + cpu_small() + " --entity 9");
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_NE(big.err.find("uscope: "), std::string::npos) << big.err;
  EXPECT_EQ(big.out, "");
}

TEST_F(CliAnalysis, RangesPastTheEndAreClampedWithAWarning) {
  const Split in = run("counters " + cpu_small() + " --range 5:11 --json");
  const Split past = run("counters " + cpu_small() + " --range 5:99 --json");
  EXPECT_EQ(past.exit_code, 0) << past.err;
  EXPECT_EQ(past.out, in.out);
  EXPECT_NE(past.err.find("warning: counters --range 5:99 reaches past the end of the trace (last cycle 11); "
                          "showing 5:11"),
            std::string::npos)
      << past.err;
  const Split buf = run("buffers " + cpu_small() + " --cycle 1000 --json");
  EXPECT_EQ(buf.exit_code, 0);
  EXPECT_EQ(buf.out, run("buffers " + cpu_small() + " --cycle 11 --json").out);
  EXPECT_NE(buf.err.find("warning: buffers --cycle 1000 is past the end of the trace (last cycle 11)"),
            std::string::npos)
      << buf.err;
  const Split an = run("analyze " + cpu_small() + " --range 0:50 --json");
  EXPECT_EQ(an.exit_code, 0);
  EXPECT_EQ(an.out, run("analyze " + cpu_small() + " --range 0:11 --json").out);
  EXPECT_NE(an.err.find("warning: analyze --range 0:50"), std::string::npos) << an.err;
  const Split after = run("analyze " + cpu_small() + " --range 20:30");
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_NE(after.err.find("nothing to analyze"), std::string::npos) << after.err;
}

TEST_F(CliAnalysis, BadRangesAreUsageErrors) {
  for (const char *r : {"5-7", "7:5", "a:3", "3:", ":3", "1:2:3"}) {
    const Split s = run("counters " + cpu_small() + " --range " + r);
    EXPECT_EQ(s.exit_code, 2) << r << "\n" << s.err;
    EXPECT_NE(s.err.find(std::string("--range ") + r + ": expected START:END"), std::string::npos) << s.err;
  }
  EXPECT_EQ(run("analyze " + cpu_small() + " --range 5:5").exit_code, 2);
  EXPECT_EQ(run("counters " + cpu_small() + " --json --format csv").exit_code, 2);
  EXPECT_EQ(run("events " + cpu_small() + " --from-cycle 5 --to-cycle 4").exit_code, 2);
  EXPECT_EQ(run("events " + cpu_small() + " --from 5").exit_code, 2);
}

}  // namespace
