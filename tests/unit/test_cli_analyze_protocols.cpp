// uscope analyze on traces with noc and npu protocol scopes (tools/cmd_analyze.cpp):
// a noc trace and an npu trace written here, whose JSON and CSV are compared
// with goldens checked by hand against what was written (the figures are
// worked out in the comments), ranges (cut to the trace with a warning), and
// a trace with both a cpu and a noc scope (the cpu keys stay at the top level).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <uscope/convert.h>
#include <uscope/protocols.h>
#include <uscope/uscope.h>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::test::CliSplit;
using uscope::test::run_cli_split;
using uscope::test::TempDir;
using namespace uscope::test::proto;

const char *const kNocStages[] = {"issue", "route", "deliver"};

uscope_noc_config_t xbar_config() { return noc_config("xbar", 0, "crossbar", kNocStages, 3, 16, 6); }

// The noc trace (1000 ps clock, cycles 0 .. 40), three reads on xbar:
//   txn  issue  complete  ports   latency
//   1    0      10        0 -> 4  10
//   2    2      22        1 -> 4  20
//   3    5      35        1 -> 5  30   (retried at 6 for no_credits: a credit stall)
// Whole trace: 3 completed, latencies 10 20 30: mean 20, p50 20 (the 2nd
// smallest), p90 and p99 30 (the 3rd); each hop is its own end-to-end
// transaction (no handoff). Range 15:40: txns 2 and 3 (mean 25, p50 20), the
// retry at 6 lies outside.
void write_noc(const std::string &path, bool with_cpu) {
  uscope_schema_t *s = base_schema(1000);
  uscope_cpu_t *cpu = nullptr;
  const char *stages[] = {"IF", "EX"};
  if (with_cpu) {
    uscope_cpu_config_t cc{};
    cc.struct_size = sizeof cc;
    cc.scope_name = "core0";
    cc.parent_scope_id = 0;
    cc.clock_id = USCOPE_CLOCK_INHERIT;
    cc.isa = "RV32I";
    cc.stages = stages;
    cc.num_stages = 2;
    cc.max_entities = 4;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cc), USCOPE_OK) << uscope_last_error();
  }
  uscope_noc_t *n = nullptr;
  const uscope_noc_config_t nc = xbar_config();
  ASSERT_EQ(uscope_noc_declare(s, &n, &nc), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  struct Txn {
    uint32_t id;
    uint64_t issue, done;
    uint16_t src, dst;
  };
  const std::vector<Txn> txns = {{1, 0, 10, 0, 4}, {2, 2, 22, 1, 4}, {3, 5, 35, 1, 5}};
  const auto ok = [&](uscope_status_t st) { EXPECT_EQ(st, USCOPE_OK) << uscope_writer_error(w); };
  for (uint64_t c = 0; c <= 40; ++c) {
    ok(uscope_begin_cycle(w, c * 1000));
    for (const Txn &x : txns)
      if (x.done == c) ok(uscope_noc_complete(w, n, x.id));
    for (const Txn &x : txns)
      if (x.issue == c) ok(uscope_noc_issue(w, n, x.id, 0, 0x1000, 1, 3, x.src, x.dst));
    if (c == 6) ok(uscope_noc_retry(w, n, 3, USCOPE_NOC_RETRY_NO_CREDITS));
    if (with_cpu) {
      // One instruction: fetched at 0, EX at 1, retired at 2.
      if (c == 0) ok(uscope_cpu_fetch(w, cpu, 0, 0x1000, 0x00100093));
      if (c == 1) ok(uscope_cpu_stage_transition(w, cpu, 0, 1));
      if (c == 2) ok(uscope_cpu_retire(w, cpu, 0));
    }
    ok(uscope_end_cycle(w));
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_noc_free(n);
  if (cpu) uscope_cpu_free(cpu);
}

// The npu trace, converted from this JSONL (cycles 0 .. 80):
//   cmd 0 (LOAD) 10 .. 30: 20 cycles; cmd 1 (MLP) 20 .. 60: 40; cmd 2 (MLP) 70 .. 80: 10.
//   TE jobs 10 .. 40 and 30 .. 50 (busy 10 .. 50: 40 of T = 80, 0.5);
//   VE job 70 .. 75 (5, 0.0625); DRAM channel 1 transfer 22 .. 44 (22, 0.275);
//   one DMA of 1024 bytes (12.8 bytes per cycle over 80); SRAM accesses at 25 and 72, one a conflict.
// Command latencies 10 20 40: mean 23.333333, p50 20, p90 and p99 40.
// Phases: LOAD 1 command of 20; MLP 2 commands, 50 cycles, 10 .. 40, mean 25.
const char *const kNpuJsonl =
    R"({"event_type":"TRACE_META","version":"1.0"})" "\n"
    R"({"event_type":"CMD_ENQUEUE","t_cycle":0,"cmd_id":0,"cmd_type":"MATMUL","source":"ISA","token":0,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"LOAD","model_name":"m"})" "\n"
    R"({"event_type":"CMD_ENQUEUE","t_cycle":0,"cmd_id":1,"cmd_type":"MATMUL","source":"ISA","token":1,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"MLP","model_name":"m"})" "\n"
    R"({"event_type":"CMD_START","t_cycle":10,"cmd_id":0,"core_id":0})" "\n"
    R"({"event_type":"TE_START","t_cycle":10,"job_id":1,"cmd_id":0,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"CMD_START","t_cycle":20,"cmd_id":1,"core_id":0})" "\n"
    R"({"event_type":"DMA_START","t_cycle":20,"tx_id":1,"channel":0,"direction":"DRAM_TO_SRAM","src_addr":1,"dst_addr":2,"size_bytes":1024,"cmd_id":1,"job_id":9,"core_id":0})" "\n"
    R"({"event_type":"DRAM_TX_START","t_cycle":22,"tx_id":2,"channel":1,"size_bytes":4096,"cmd_id":1})" "\n"
    R"({"event_type":"SRAM_ACCESS","t_cycle":25,"addr":0,"bank_id":0,"access_type":"READ","by":"TE","conflict":false,"cmd_id":0,"job_id":1})" "\n"
    R"({"event_type":"CMD_END","t_cycle":30,"cmd_id":0,"status":"OK","core_id":0})" "\n"
    R"({"event_type":"TE_START","t_cycle":30,"job_id":2,"cmd_id":1,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"MLP","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"DMA_END","t_cycle":35,"tx_id":1,"channel":0,"cmd_id":1,"job_id":9,"core_id":0})" "\n"
    R"({"event_type":"TE_END","t_cycle":40,"job_id":1,"cmd_id":0,"mac_count":1,"latency_cycles":30,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"DRAM_TX_END","t_cycle":44,"tx_id":2,"channel":1})" "\n"
    R"({"event_type":"TE_END","t_cycle":50,"job_id":2,"cmd_id":1,"mac_count":1,"latency_cycles":20,"phase":"MLP","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"CMD_ENQUEUE","t_cycle":50,"cmd_id":2,"cmd_type":"MATMUL","source":"ISA","token":2,"desc_addr":4096,"layer_id":1,"block_id":0,"phase":"MLP","model_name":"m"})" "\n"
    R"({"event_type":"CMD_END","t_cycle":60,"cmd_id":1,"status":"OK","core_id":0})" "\n"
    R"({"event_type":"CMD_START","t_cycle":70,"cmd_id":2,"core_id":0})" "\n"
    R"({"event_type":"VE_START","t_cycle":70,"job_id":3,"cmd_id":2,"op_type":"SOFTMAX","len":4096,"batch":1,"phase":"MLP","layer_id":1})" "\n"
    R"({"event_type":"SRAM_ACCESS","t_cycle":72,"addr":0,"bank_id":0,"access_type":"READ","by":"VE","conflict":true,"cmd_id":2,"job_id":3})" "\n"
    R"({"event_type":"SRAM_CONFLICT","t_cycle":72,"bank_id":0,"num_requests":2,"allowed":1,"stalled_clients":["DMA"],"cmd_id":2})" "\n"
    R"({"event_type":"VE_END","t_cycle":75,"job_id":3,"cmd_id":2,"latency_cycles":5,"phase":"MLP","layer_id":1})" "\n"
    R"({"event_type":"CMD_END","t_cycle":80,"cmd_id":2,"status":"OK","core_id":0})" "\n";

std::string write_npu(const TempDir &d) {
  const std::string jsonl = d.file("w.jsonl"), out = d.file("npu.uscope");
  {
    std::ofstream f(jsonl);
    f << kNpuJsonl;
  }
  EXPECT_EQ(uscope_convert(nullptr, jsonl.c_str(), 0, out.c_str(), 0, nullptr), USCOPE_OK) << uscope_last_error();
  return out;
}

// The noc trace, whole: the figures of the comment above write_noc.
const std::string kNocJson =
    R"({"noc":{"start_cycle":0,"end_cycle":40,"max_cycle":40,"period_ps":1000,"completed":3)"
    R"(,"unknown_issue":0,"retries":1,"timeouts":0,"credit_stalls":1,"in_flight":0,"handoffs":0)"
    R"(,"multi_hop":0,"retries_by_reason":{"target_busy":0,"no_credits":1,"vc_full":0,"arb_lost":0)"
    R"(,"protocol_retry":0},"latency":{"count":3,"min":10,"max":30,"mean":20.000000,"p50":20,"p90":30)"
    R"(,"p99":30,"exact":true},"end_to_end":{"count":3,"min":10,"max":30,"mean":20.000000,"p50":20)"
    R"(,"p90":30,"p99":30,"exact":true},"scopes":[{"name":"xbar","period_ps":1000,"in_flight":0)"
    R"(,"completed":3,"unknown_issue":0,"retries":1,"timeouts":0,"credit_stalls":1,"latency":{"count":3)"
    R"(,"min":10,"max":30,"mean":20.000000,"p50":20,"p90":30,"p99":30,"exact":true}}]}})"
    "\n";
const std::string kNocCsv =
    "section,name,cycle,metric,value\r\n"
    "noc,,,start_cycle,0\r\n"
    "noc,,,end_cycle,40\r\n"
    "noc,,,completed,3\r\n"
    "noc,,,unknown_issue,0\r\n"
    "noc,,,retries,1\r\n"
    "noc,,,timeouts,0\r\n"
    "noc,,,credit_stalls,1\r\n"
    "noc,,,in_flight,0\r\n"
    "noc,,,handoffs,0\r\n"
    "noc,,,multi_hop,0\r\n"
    "noc,,,latency_count,3\r\n"
    "noc,,,latency_min,10\r\n"
    "noc,,,latency_mean,20\r\n"
    "noc,,,latency_p50,20\r\n"
    "noc,,,latency_p90,30\r\n"
    "noc,,,latency_p99,30\r\n"
    "noc,,,latency_max,30\r\n"
    "noc,,,latency_exact,1\r\n"
    "noc,,,end_to_end_count,3\r\n"
    "noc,,,end_to_end_min,10\r\n"
    "noc,,,end_to_end_mean,20\r\n"
    "noc,,,end_to_end_p50,20\r\n"
    "noc,,,end_to_end_p90,30\r\n"
    "noc,,,end_to_end_p99,30\r\n"
    "noc,,,end_to_end_max,30\r\n"
    "noc,,,end_to_end_exact,1\r\n"
    "noc_scope,xbar,,in_flight,0\r\n"
    "noc_scope,xbar,,completed,3\r\n"
    "noc_scope,xbar,,unknown_issue,0\r\n"
    "noc_scope,xbar,,retries,1\r\n"
    "noc_scope,xbar,,timeouts,0\r\n"
    "noc_scope,xbar,,credit_stalls,1\r\n"
    "noc_scope,xbar,,latency_count,3\r\n"
    "noc_scope,xbar,,latency_min,10\r\n"
    "noc_scope,xbar,,latency_mean,20\r\n"
    "noc_scope,xbar,,latency_p50,20\r\n"
    "noc_scope,xbar,,latency_p90,30\r\n"
    "noc_scope,xbar,,latency_p99,30\r\n"
    "noc_scope,xbar,,latency_max,30\r\n"
    "noc_scope,xbar,,latency_exact,1\r\n";

// The npu trace, whole: the figures of the comment above kNpuJsonl.
const std::string kNpuJson =
    R"({"npu":{"start_cycle":0,"end_cycle":80,"range_cycles":80,"max_cycle":80,"period_ps":1000)"
    R"(,"engines":[{"name":"TE","jobs":2,"busy_cycles":40,"utilization":0.500000},{"name":"VE","jobs":1)"
    R"(,"busy_cycles":5,"utilization":0.062500},{"name":"DRAM 1","jobs":1,"busy_cycles":22)"
    R"(,"utilization":0.275000}],"command_latency":{"count":3,"min":10,"max":40,"mean":23.333333,"p50":20)"
    R"(,"p90":40,"p99":40,"exact":true},"phases":[{"name":"LOAD","commands":1,"total_cycles":20)"
    R"(,"min_cycles":20,"max_cycles":20,"mean_cycles":20.000000},{"name":"MLP","commands":2)"
    R"(,"total_cycles":50,"min_cycles":10,"max_cycles":40,"mean_cycles":25.000000}],"dma":{"transfers":1)"
    R"(,"bytes":1024,"bytes_per_cycle":12.800000},"sram":{"accesses":2,"conflicts":1}}})"
    "\n";

TEST(CliAnalyzeProtocols, NocTrace) {
  TempDir d("cli_analyze_noc");
  const std::string path = d.file("noc.uscope");
  ASSERT_NO_FATAL_FAILURE(write_noc(path, false));
  const CliSplit j = run_cli_split("analyze " + path + " --json", d.path());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  EXPECT_EQ(j.out, kNocJson);
  const CliSplit c = run_cli_split("analyze " + path + " --format csv", d.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, kNocCsv);
  const CliSplit t = run_cli_split("analyze " + path, d.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Hop latency:        count 3  mean 20.00  min 10  p50 20  p90 30  p99 30  max 30\n"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("Retries 1, timeouts 0, credit stalls 1\n"), std::string::npos) << t.out;

  // 15:99 reaches past cycle 40: cut there, with a warning; txns 2 and 3, not the retry.
  const CliSplit r = run_cli_split("analyze " + path + " --range 15:99 --json", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"({"noc":{"start_cycle":15,"end_cycle":40,"max_cycle":40,"period_ps":1000,"completed":2,)"
                       R"("unknown_issue":0,"retries":0,"timeouts":0,"credit_stalls":0,)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("latency":{"count":2,"min":20,"max":30,"mean":25.000000,"p50":20,"p90":30,"p99":30,)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "uscope: warning: analyze --range 15:99 reaches past the end of the noc scopes (cycle 40); "
                   "analyzing 15:40\n");
}

TEST(CliAnalyzeProtocols, NpuTrace) {
  TempDir d("cli_analyze_npu");
  const std::string path = write_npu(d);
  const CliSplit j = run_cli_split("analyze " + path + " --json", d.path());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  EXPECT_EQ(j.out, kNpuJson);
  const CliSplit t = run_cli_split("analyze " + path, d.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Command latency: count 3  mean 23.33  min 10  p50 20  p90 40  p99 40  max 40\n"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("DMA: 1 transfers, 1,024 bytes (12.80 bytes/cycle)\n"), std::string::npos) << t.out;

  // 30:60 (the npu analysis test's range): TE busy 30 .. 50 of 30 cycles;
  // commands 0 (ends at 30) and 1 (ends at 60); the DMA ends at 35.
  const CliSplit c = run_cli_split("analyze " + path + " --range 30:60 --format csv", d.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err, "");
  EXPECT_NE(c.out.find("npu,,,range_cycles,30\r\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("npu_engine,TE,,busy_cycles,20\r\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("npu,,,command_latency_count,2\r\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("npu_phase,MLP,,total_cycles,40\r\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("npu,,,dma_bytes,1024\r\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("npu,,,sram_accesses,0\r\n"), std::string::npos) << c.out;
}

TEST(CliAnalyzeProtocols, CpuAndNocTogether) {
  TempDir d("cli_analyze_cpu_noc");
  const std::string path = d.file("both.uscope");
  ASSERT_NO_FATAL_FAILURE(write_noc(path, true));
  const CliSplit j = run_cli_split("analyze " + path + " --range 0:40 --json", d.path());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  // The cpu figures first, at the top level, as on a cpu-only trace; then "noc".
  EXPECT_EQ(j.out.rfind(R"({"start_cycle":0,"end_cycle":40,"range_cycles":40,"instructions":{"total":1,"retired":1,)", 0),
            0u)
      << j.out;
  EXPECT_NE(j.out.find(R"(,"noc":{"start_cycle":0,"end_cycle":40,"max_cycle":40,"period_ps":1000,"completed":3,)"),
            std::string::npos)
      << j.out;
  EXPECT_EQ(j.out.find("\"npu\""), std::string::npos) << j.out;
  const CliSplit t = run_cli_split("analyze " + path + " --range 0:40", d.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("=== Performance of core0, cycles 0 to 40"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("=== noc, cycles 0 to 40"), std::string::npos) << t.out;
}

}  // namespace
