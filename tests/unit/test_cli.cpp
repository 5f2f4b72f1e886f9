// tools/uscope, run as a separate program on corpus files.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::kCorpusDir;

using uscope::test::CliRun;

CliRun cli(const std::string &args, bool merge_stderr = false) {
  return uscope::test::run_cli(args, merge_stderr);
}

simdjson::dom::element parse(simdjson::dom::parser &p, const std::string &s) {
  auto r = p.parse(s);
  EXPECT_FALSE(r.error()) << "not JSON: " << s.substr(0, 200);
  return r.value();
}

TEST(Cli, InfoJsonDescribesTheFile) {
  const CliRun r = cli("info " + kCorpusDir + "04_props.uscope --json");
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser p;
  auto j = parse(p, r.out);
  EXPECT_EQ(uint64_t(j["segments"]), 7u);
  EXPECT_TRUE(bool(j["complete"]));
  EXPECT_EQ(std::string_view(j["compression"]), "lz4");
  EXPECT_EQ(std::string_view(j["dut"]["dut_name"]), "props");
  auto storages = simdjson::dom::array(j["storages"]);
  ASSERT_EQ(storages.size(), 3u);
  EXPECT_EQ(std::string_view((*storages.begin())["name"]), "rob");
  EXPECT_EQ(uint64_t((*storages.begin())["properties"]), 6u);
}

TEST(Cli, InfoTextSaysLiveForAnUnfinishedFile) {
  const CliRun r = cli("info " + kCorpusDir + "10_live_incomplete.uscope");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("live (not finalized)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("segments    3"), std::string::npos) << r.out;
}

TEST(Cli, StateByCycleAndByTime) {
  // 01_tiny: slot 1 = 7 at 0 ps, slot 2 = 0x12345 at 1000 ps (cycle 1 of a 1000 ps clock).
  const CliRun by_cycle = cli("state " + kCorpusDir + "01_tiny.uscope --cycle 1");
  ASSERT_EQ(by_cycle.exit_code, 0);
  EXPECT_NE(by_cycle.out.find("[2] val=0x12345"), std::string::npos) << by_cycle.out;
  const CliRun by_time = cli("state " + kCorpusDir + "01_tiny.uscope --time 999 --json");
  ASSERT_EQ(by_time.exit_code, 0);
  simdjson::dom::parser p;
  auto j = parse(p, by_time.out);
  auto slots = simdjson::dom::array((*simdjson::dom::array(j["storages"]).begin())["slots"]);
  uint64_t slot2 = 1;
  for (auto s : slots)
    if (uint64_t(s["slot"]) == 2) slot2 = uint64_t(s["val"]);
  EXPECT_EQ(slot2, 0u);  // not yet set at 999 ps
}

TEST(Cli, EventsInAClosedRange) {
  const CliRun r = cli("events " + kCorpusDir + "01_tiny.uscope --from 0 --to 2000 --json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "[{\"time_ps\":0,\"type\":\"ping\",\"fields\":{\"x\":1}},"
            "{\"time_ps\":2000,\"type\":\"ping\",\"fields\":{\"x\":2}}]\n");
  const CliRun none = cli("events " + kCorpusDir + "01_tiny.uscope --from 1 --to 1999 --json");
  EXPECT_EQ(none.out, "[]\n");
}

// dump --json is JSON Lines (issue 13: one record per line, never one
// multi-GB line): every line parses alone, the header comes first and counts
// the segment records that follow.
TEST(Cli, DumpIsValidJsonLinesAndDeterministic) {
  for (const char *f : {"01_tiny", "05_events_all_types", "11_empty", "24_rust_v01_compact"}) {
    const CliRun a = cli("dump " + kCorpusDir + f + ".uscope --json");
    const CliRun b = cli("dump " + kCorpusDir + f + ".uscope --json");
    ASSERT_EQ(a.exit_code, 0) << f;
    EXPECT_EQ(a.out, b.out) << f;
    ASSERT_FALSE(a.out.empty()) << f;
    EXPECT_EQ(a.out.back(), '\n') << f;
    simdjson::dom::parser p;
    size_t pos = 0, lines = 0;
    uint64_t segments = 0, segment_records = 0;
    while (pos < a.out.size()) {
      const size_t nl = a.out.find('\n', pos);
      const std::string line = a.out.substr(pos, nl - pos);
      pos = nl + 1;
      auto j = parse(p, line);
      const std::string_view record = j["record"];
      if (lines++ == 0) {
        EXPECT_EQ(record, "header") << f;
        EXPECT_TRUE(bool(j["complete"])) << f;
        segments = uint64_t(j["segments"]);
      } else {
        EXPECT_TRUE(record == "string" || record == "segment" || record == "op" || record == "event") << line;
        if (record == "segment") ++segment_records;
      }
    }
    EXPECT_EQ(segment_records, segments) << f;
  }
}

TEST(Cli, ErrorsGoToStderrWithNonZeroExit) {
  const CliRun missing = cli("info /nonexistent/x.uscope", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("uscope: "), std::string::npos);
  EXPECT_NE(missing.out.find("No such file"), std::string::npos);
  EXPECT_EQ(cli("state " + kCorpusDir + "01_tiny.uscope").exit_code, 2);  // neither --time nor --cycle: usage
  EXPECT_EQ(cli("frobnicate").exit_code, 2);
  EXPECT_EQ(cli("").exit_code, 2);
}

}  // namespace

// `uscope summary` on a trace written through the protocol helpers, with
// figures known by construction: a cpu retiring 3 of 5 fetched instructions
// in 10 cycles and squashing the other 2 in one pipeline flush, an npu
// running two commands (latencies 4 and 3 npu cycles) of which one keeps its
// single tensor-engine job slot busy for 5000 of the trace's 9000 ps (and of
// the 8000 ps during which a command was in flight), and a bus completing
// two 4-byte reads (bytes_rx) and one 8-byte write (bytes_tx).
TEST(Cli, SummaryOfProtocolScopes) {
  uscope::test::TempDir dir("uscope_cli");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("proto.uscope");
  constexpr uint32_t kCore = 1000, kNpu = 2000;  // periods, ps
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t core_clk = 0, npu_clk = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &core_clk, "core_clk", kCore), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, &npu_clk, "npu_clk", kNpu), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "soc", USCOPE_NO_PARENT, nullptr, core_clk), USCOPE_OK);
  const char *stages[] = {"fetch", "decode", "execute", "memory", "writeback"};
  uscope_cpu_config_t cc{};
  cc.struct_size = sizeof cc;
  cc.scope_name = "core0";
  cc.parent_scope_id = 0;
  cc.clock_id = core_clk;
  cc.isa = "RV32I";
  cc.stages = stages;
  cc.num_stages = 5;
  cc.max_entities = 8;
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cc), USCOPE_OK) << uscope_last_error();
  uscope_npu_config_t nc{};
  nc.struct_size = sizeof nc;
  nc.scope_name = "npu0";
  nc.parent_scope_id = 0;
  nc.clock_id = npu_clk;
  nc.queue_depth = 4;
  nc.num_te = nc.num_ve = nc.num_dma_channels = 1;
  uscope_npu_t *npu = nullptr;
  ASSERT_EQ(uscope_npu_declare(s, &npu, &nc), USCOPE_OK) << uscope_last_error();
  const char *bstages[] = {"issue", "data", "done"};
  uscope_noc_config_t bc{};
  bc.struct_size = sizeof bc;
  bc.scope_name = "bus0";
  bc.parent_scope_id = 0;
  bc.clock_id = USCOPE_CLOCK_INHERIT;
  bc.bus_protocol = "simple";
  bc.topology = "crossbar";
  bc.stages = bstages;
  bc.num_stages = 3;
  bc.max_txns = 4;
  uscope_noc_t *bus = nullptr;
  ASSERT_EQ(uscope_noc_declare(s, &bus, &bc), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);

  // Time 0..9000 ps: 10 core cycles; npu edges every 2000 ps.
  for (uint64_t c = 0; c < 10; ++c) {
    const uint64_t t = c * kCore;
    ASSERT_EQ(uscope_begin_cycle(w, t), USCOPE_OK);
    if (c < 5) {
      ASSERT_EQ(uscope_cpu_fetch(w, cpu, static_cast<uint32_t>(c), 0x100 + 4 * c, 0x13), USCOPE_OK);
    }
    if (c >= 5 && c < 8) {
      ASSERT_EQ(uscope_cpu_retire(w, cpu, static_cast<uint32_t>(c - 5)), USCOPE_OK);
    }
    if (c == 8) {
      ASSERT_EQ(uscope_cpu_flush(w, cpu, 3, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
      ASSERT_EQ(uscope_cpu_flush(w, cpu, 4, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
    }
    if (c == 9) {
      ASSERT_EQ(uscope_cpu_stall(w, cpu, 0), USCOPE_OK);
    }
    // Reads (opcode 0) 1 and 2 bring 4 bytes each (bytes_rx); write (opcode 1) 3 sends 8 (bytes_tx).
    if (c == 1 || c == 2) {
      ASSERT_EQ(uscope_noc_issue(w, bus, static_cast<uint32_t>(c), 0, 0x40, 1, 2, 0, 1), USCOPE_OK);
    }
    if (c == 3) {
      ASSERT_EQ(uscope_noc_issue(w, bus, 3, 1, 0x80, 2, 2, 0, 1), USCOPE_OK);
    }
    if (c == 3 || c == 4) {
      ASSERT_EQ(uscope_noc_complete(w, bus, static_cast<uint32_t>(c - 2)), USCOPE_OK);
      ASSERT_EQ(uscope_noc_counter_add(w, bus, USCOPE_NOC_COUNTER_BYTES_RX, 4), USCOPE_OK);
    }
    if (c == 6) {
      ASSERT_EQ(uscope_noc_complete(w, bus, 3), USCOPE_OK);
      ASSERT_EQ(uscope_noc_counter_add(w, bus, USCOPE_NOC_COUNTER_BYTES_TX, 8), USCOPE_OK);
    }
    if (t == 0) {
      ASSERT_EQ(uscope_npu_context(w, npu, 0, 0, 0, 0, 1, 1, 0, 0, 8, "QKV_PROJ"), USCOPE_OK);
      ASSERT_EQ(uscope_npu_cmd_enqueue(w, npu, 0, 0, 7, "MATMUL", 0, 1, 0x1000, 1, 1, "QKV_PROJ"), USCOPE_OK);
      ASSERT_EQ(uscope_npu_cmd_enqueue(w, npu, 1, 0, 8, "SOFTMAX", 0, 2, 0x1020, 1, 1, "QKV_PROJ"), USCOPE_OK);
      ASSERT_EQ(uscope_npu_cmd_start(w, npu, 0, 0, 7), USCOPE_OK);
      ASSERT_EQ(uscope_npu_te_start(w, npu, 0, 0, 70, 7, 2, 2, 2, 2, 2, 2), USCOPE_OK);
    }
    if (t == 2000) {
      ASSERT_EQ(uscope_npu_cmd_start(w, npu, 1, 0, 8), USCOPE_OK);
    }
    if (t == 5000) {
      ASSERT_EQ(uscope_npu_te_end(w, npu, 0, 0, 70, 7, 8, 5), USCOPE_OK);
    }
    if (t == 8000) {
      ASSERT_EQ(uscope_npu_cmd_end(w, npu, 0, 0, 7, "OK"), USCOPE_OK);   // 8000 ps: 4 npu cycles
      ASSERT_EQ(uscope_npu_cmd_end(w, npu, 1, 0, 8, "OK"), USCOPE_OK);   // 6000 ps: 3 npu cycles
    }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_cpu_free(cpu);
  uscope_npu_free(npu);
  uscope_noc_free(bus);

  const CliRun r = cli("summary " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  auto j = parse(p, r.out);
  EXPECT_EQ(uint64_t(j["time_ps"]), 9000u);
  auto c = j["cpu"].at(0);
  EXPECT_EQ(std::string_view(c["scope"]), "core0");
  EXPECT_EQ(std::string_view(c["clock"]), "core_clk");
  EXPECT_EQ(uint64_t(c["instructions_retired"]), 3u);
  EXPECT_EQ(std::string_view(c["retired_source"]), "counter committed_insns");
  EXPECT_EQ(uint64_t(c["cycles"]), 10u);
  EXPECT_DOUBLE_EQ(double(c["ipc"]), 0.3);
  EXPECT_EQ(uint64_t(c["pipeline_flushes"]), 1u);       // one cycle with flush events
  EXPECT_EQ(uint64_t(c["instructions_squashed"]), 2u);  // two flush events
  EXPECT_EQ(uint64_t(c["stall_events"]), 1u);
  auto n = j["npu"].at(0);
  EXPECT_EQ(uint64_t(n["commands"]), 2u);
  EXPECT_EQ(uint64_t(n["unfinished"]), 0u);
  EXPECT_EQ(uint64_t(n["latency_cycles"]["MATMUL"]["max"]), 4u);
  EXPECT_EQ(uint64_t(n["latency_cycles"]["SOFTMAX"]["min"]), 3u);
  EXPECT_EQ(uint64_t(n["te_macs"]), 8u);
  EXPECT_EQ(uint64_t(n["te_job_slots"]), 1u);
  EXPECT_EQ(uint64_t(n["te_jobs"]), 1u);
  // Busy 5000 of 9000 ps; at least one command was in flight from 0 to 8000 ps.
  EXPECT_EQ(uint64_t(n["te_busy_ps"]), 5000u);
  EXPECT_DOUBLE_EQ(double(n["te_utilization"]), 0.5556);
  EXPECT_EQ(uint64_t(n["commands_in_flight_ps"]), 8000u);
  EXPECT_EQ(uint64_t(n["te_busy_while_commands_in_flight_ps"]), 5000u);
  EXPECT_DOUBLE_EQ(double(n["te_utilization_while_commands_in_flight"]), 0.625);
  auto b = j["noc"].at(0);
  EXPECT_EQ(uint64_t(b["transactions_completed"]), 3u);
  EXPECT_EQ(uint64_t(b["bytes_tx"]), 8u);
  EXPECT_EQ(uint64_t(b["bytes_rx"]), 8u);

  const CliRun text = cli("summary " + path);
  ASSERT_EQ(text.exit_code, 0);
  for (const char *want : {"cpu core0    10 cycles of core_clk (1,000 ps)",
                           "instructions retired  3 (counter committed_insns); IPC 0.300",
                           "pipeline flushes      1 (cycles with at least one flush event)",
                           "instructions squashed 2 (flush events, one per squashed instruction)",
                           "tensor engine: 1 jobs on 1 job slot (storage te), 8 MACs",
                           "busy (at least one job running) 55.6% of the 9,000 ps of the trace (4.5 npu cycles)",
                           "busy 62.5% of the 8,000 ps (4 npu cycles) during which at least one command was in flight",
                           "transactions completed 3 (counter txn_completed)",
                           "bytes transmitted 8 (counter bytes_tx), bytes received 8 (counter bytes_rx)"})
    EXPECT_NE(text.out.find(want), std::string::npos) << want << "\n" << text.out;

  // The timeline shows the cpu, npu and noc scopes together: no note that
  // the npu source leaves the others out, and a rate only for a whole file.
  for (const char *to : {"perfetto", "chrome-json"}) {
    const CliRun e = cli("export " + path + " --to " + to + " -o " + dir.file("t.out"), true);
    ASSERT_EQ(e.exit_code, 0) << e.out;
    EXPECT_EQ(e.out.find("not converted"), std::string::npos) << e.out;
    EXPECT_NE(e.out.find("MB/s of input"), std::string::npos) << e.out;
    EXPECT_NE(e.out.find("peak RSS"), std::string::npos) << e.out;
    const CliRun win = cli("export " + path + " --to " + to + " --range 2:5 -o " + dir.file("t.out"), true);
    ASSERT_EQ(win.exit_code, 0) << win.out;
    EXPECT_EQ(win.out.find("MB/s"), std::string::npos) << win.out;
  }
}
