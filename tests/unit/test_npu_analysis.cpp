// The npu analysis (src/analysis/npu_analysis, analysis.h's npu section):
// over the whole trace it is npu-report's figures, by the same code; over a
// range, busy spans are cut to it and commands counted by their end, with
// figures worked out by hand here; command latency percentiles; a trace with
// no npu scope is refused by name.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <uscope/analysis.h>
#include <uscope/convert.h>

#include "analysis/npu_analysis.hpp"
#include "base/error.hpp"
#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"

namespace {

using uscope::analysis::analyze_npu;
using uscope::analysis::NpuOptions;
using uscope::analysis::NpuReport;
using uscope::test::TempDir;

// Three commands (latencies 20, 40, 10), two TE jobs overlapping on 30..40,
// a VE job, a DMA and a DRAM transfer, SRAM accesses; events 0 .. 80.
const char *const kJsonl =
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

struct Files {
  TempDir d{"npu_analysis"};
  std::string jsonl = d.file("w.jsonl"), uscope = d.file("w.uscope");
  explicit Files(const std::string &text = kJsonl) {
    {
      std::ofstream f(jsonl);
      f << text;
    }
    EXPECT_EQ(uscope_convert(nullptr, jsonl.c_str(), 0, uscope.c_str(), 0, nullptr), USCOPE_OK) << uscope_last_error();
  }
};

std::string npu_report_json(const std::string &path) {
  char *text = nullptr;
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  EXPECT_EQ(uscope_convert_npu_report(&text, nullptr, path.c_str(), 0, &o, 1), USCOPE_OK) << uscope_last_error();
  std::string r = text ? text : "";
  uscope_convert_free(text);
  return r;
}

NpuReport analyze(const std::string &path, uint64_t start = 0, uint64_t end = UINT64_MAX) {
  uscope::TraceReader r(path);
  NpuOptions o;
  o.start_cycle = start;
  o.end_cycle = end;
  return analyze_npu(r, o);
}

const uscope::analysis::NpuEngine *engine(const NpuReport &r, const std::string &name) {
  for (const auto &e : r.engines)
    if (e.e.name == name) return &e;
  return nullptr;
}

TEST(NpuAnalysis, WholeTraceIsNpuReport) {
  Files f;
  const NpuReport r = analyze(f.uscope);
  EXPECT_TRUE(r.whole);
  // The same bytes as npu-report on the .uscope file and on its JSONL source.
  EXPECT_EQ(r.json, npu_report_json(f.uscope));
  std::string from_jsonl = npu_report_json(f.jsonl);
  const std::string fmt = "\"format\":\"jsonl\"";
  ASSERT_NE(from_jsonl.find(fmt), std::string::npos);
  from_jsonl.replace(from_jsonl.find(fmt), fmt.size(), "\"format\":\"uscope\"");
  EXPECT_EQ(r.json, from_jsonl);
  // And the figures behind it, worked out by hand.
  EXPECT_EQ(r.start_cycle, 0u);
  EXPECT_EQ(r.end_cycle, 80u);
  EXPECT_EQ(r.range_cycles, 80u);
  const auto *te = engine(r, "TE"), *ve = engine(r, "VE"), *dram1 = engine(r, "DRAM 1");
  ASSERT_TRUE(te && ve && dram1);
  EXPECT_EQ(te->e.jobs, 2u);
  EXPECT_EQ(te->e.busy, 40u);  // 10 .. 50
  EXPECT_DOUBLE_EQ(te->utilization, 0.5);
  EXPECT_EQ(ve->e.busy, 5u);
  EXPECT_EQ(dram1->e.busy, 22u);
  EXPECT_EQ(r.dma_transfers, 1u);
  EXPECT_EQ(r.dma_bytes, 1024u);
  EXPECT_EQ(r.sram_accesses, 2u);
  EXPECT_EQ(r.sram_conflicts, 1u);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].name, "LOAD");
  EXPECT_EQ(r.phases[0].commands, 1u);
  EXPECT_EQ(r.phases[1].name, "MLP");
  EXPECT_EQ(r.phases[1].commands, 2u);
  EXPECT_EQ(r.phases[1].min, 10u);
  EXPECT_EQ(r.phases[1].max, 40u);
  NpuReport mut = r;
  EXPECT_EQ(mut.command_latency.count(), 3u);
  EXPECT_EQ(mut.command_latency.percentile(50), 20u);
  EXPECT_EQ(mut.command_latency.percentile(90), 40u);
  EXPECT_EQ(mut.command_latency.min(), 10u);
}

TEST(NpuAnalysis, LargerWorkloadWholeTraceIsNpuReport) {
  // Many commands with overlapping jobs: the folding of busy spans is exercised.
  std::string text = R"({"event_type":"TRACE_META","version":"1.0"})" "\n";
  char b[512];
  for (int c = 0; c < 3000; ++c) {
    const unsigned t = static_cast<unsigned>(c) * 7;
    std::snprintf(b, sizeof b,
                  R"({"event_type":"CMD_START","t_cycle":%u,"cmd_id":%d,"core_id":0})" "\n"
                  R"({"event_type":"TE_START","t_cycle":%u,"job_id":%d,"cmd_id":%d,"m":1,"n":1,"k":1,"tile_m":1,"tile_n":1,"tile_k":1,"phase":"P","layer_id":0,"core_id":0})" "\n",
                  t, c, t + 1, c, c);
    text += b;
    if (c >= 2) {
      const int e = c - 2;
      std::snprintf(b, sizeof b,
                    R"({"event_type":"TE_END","t_cycle":%u,"job_id":%d,"cmd_id":%d,"mac_count":1,"latency_cycles":1,"phase":"P","layer_id":0,"core_id":0})" "\n"
                    R"({"event_type":"CMD_END","t_cycle":%u,"cmd_id":%d,"status":"OK","core_id":0})" "\n",
                    t + 2 + static_cast<unsigned>(e % 5), e, e, t + 3 + static_cast<unsigned>(e % 5), e);
      text += b;
    }
  }
  Files f(text);
  const NpuReport r = analyze(f.uscope);
  EXPECT_EQ(r.json, npu_report_json(f.uscope));
  EXPECT_EQ(r.command_latency.count(), 2998u);
}

// The reference pccx writer's trace (conformance/pccx), converted to .uscope:
// the analysis over it is npu-report's, and a range inside it is measured.
TEST(NpuAnalysis, ReferenceWriterTraceThroughConversion) {
  TempDir d("npu_analysis_ref");
  const std::string pccx = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";
  const std::string us = d.file("ref.uscope");
  ASSERT_EQ(uscope_convert(nullptr, pccx.c_str(), 0, us.c_str(), 0, nullptr), USCOPE_OK) << uscope_last_error();
  const NpuReport r = analyze(us);
  EXPECT_EQ(r.json, npu_report_json(us));
  EXPECT_GT(r.range_cycles, 0u);
  ASSERT_FALSE(r.engines.empty());
  NpuReport half = analyze(us, r.start_cycle, r.start_cycle + r.range_cycles / 2);
  EXPECT_EQ(half.range_cycles, r.range_cycles / 2);
  for (size_t i = 0; i < half.engines.size() && i < r.engines.size(); ++i)
    EXPECT_LE(half.engines[i].e.busy, r.engines[i].e.busy) << half.engines[i].e.name;
  EXPECT_LE(half.command_latency.count(), NpuReport(r).command_latency.count());
}

TEST(NpuAnalysis, RangeCutsBusySpansAndCountsCommandsByTheirEnd) {
  Files f;
  NpuReport r = analyze(f.uscope, 30, 60);
  EXPECT_FALSE(r.whole);
  EXPECT_FALSE(r.clamped);
  EXPECT_EQ(r.start_cycle, 30u);
  EXPECT_EQ(r.end_cycle, 60u);
  EXPECT_EQ(r.range_cycles, 30u);
  const auto *te = engine(r, "TE"), *ve = engine(r, "VE"), *dram1 = engine(r, "DRAM 1");
  ASSERT_TRUE(te && ve && dram1);
  EXPECT_EQ(te->e.jobs, 2u);
  EXPECT_EQ(te->e.busy, 20u);  // 30 .. 50 of both jobs
  EXPECT_DOUBLE_EQ(te->utilization, 20.0 / 30.0);
  EXPECT_EQ(ve->e.jobs, 0u);   // 70 .. 75: outside
  EXPECT_EQ(ve->e.busy, 0u);
  EXPECT_EQ(dram1->e.busy, 14u);  // 30 .. 44
  EXPECT_EQ(r.dma_transfers, 1u);  // ends at 35
  EXPECT_EQ(r.dma_bytes, 1024u);
  EXPECT_EQ(r.sram_accesses, 0u);  // at 25 and 72
  EXPECT_EQ(r.sram_conflicts, 0u);
  // Commands 0 (ends at 30, 20 cycles) and 1 (ends at 60, 40), whole.
  EXPECT_EQ(r.command_latency.count(), 2u);
  EXPECT_EQ(r.command_latency.percentile(50), 20u);
  EXPECT_EQ(r.command_latency.percentile(99), 40u);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].name, "LOAD");
  EXPECT_EQ(r.phases[0].total, 20u);
  EXPECT_EQ(r.phases[1].name, "MLP");
  EXPECT_EQ(r.phases[1].commands, 1u);
  EXPECT_EQ(r.phases[1].total, 40u);
  EXPECT_NE(r.text.find("30 .. 60 (30 cycles of the range asked for: T below)"), std::string::npos) << r.text;

  // A window over the whole event span measures what npu-report measures.
  const NpuReport all = analyze(f.uscope), span = analyze(f.uscope, 0, 80);
  ASSERT_EQ(all.engines.size(), span.engines.size());
  for (size_t i = 0; i < all.engines.size(); ++i) {
    EXPECT_EQ(all.engines[i].e.name, span.engines[i].e.name);
    EXPECT_EQ(all.engines[i].e.busy, span.engines[i].e.busy) << all.engines[i].e.name;
    EXPECT_EQ(all.engines[i].e.jobs, span.engines[i].e.jobs) << all.engines[i].e.name;
  }
  EXPECT_EQ(all.sram_accesses, span.sram_accesses);
  EXPECT_EQ(all.dma_bytes, span.dma_bytes);
  EXPECT_EQ(all.phases.size(), span.phases.size());

  // Past the end: clamped.
  const NpuReport c = analyze(f.uscope, 70, 100000);
  EXPECT_TRUE(c.clamped);
  EXPECT_EQ(c.end_cycle, c.max_cycle);
  EXPECT_EQ(engine(c, "VE")->e.busy, 5u);
  EXPECT_THROW(analyze(f.uscope, 9, 3), uscope::Error);
}

TEST(NpuAnalysis, CApiAndNoScope) {
  Files f;
  uscope_reader_t *rd = nullptr;
  ASSERT_EQ(uscope_reader_open(&rd, f.uscope.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_npu_analysis_t *a = nullptr;
  EXPECT_EQ(uscope_npu_analysis_open(nullptr, rd), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_npu_analysis_open(&a, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(uscope_npu_analysis_open(&a, rd), USCOPE_OK) << uscope_last_error();
  uscope_npu_report_t rep{};
  EXPECT_EQ(uscope_npu_analyze(a, &rep, 0, UINT64_MAX), USCOPE_ERR_INVALID_ARGUMENT);  // struct_size unset
  rep.struct_size = sizeof rep;
  EXPECT_EQ(uscope_npu_analyze(a, &rep, 5, 4), USCOPE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(uscope_npu_analyze(a, &rep, 30, 60), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(rep.range_cycles, 30u);
  EXPECT_EQ(rep.clamped, 0u);
  EXPECT_EQ(rep.command_latency.count, 2u);
  EXPECT_EQ(rep.command_latency.p50, 20u);
  EXPECT_EQ(rep.command_latency.p90, 40u);
  EXPECT_EQ(rep.command_latency.exact, 1u);
  ASSERT_GE(rep.num_engines, 3u);
  EXPECT_STREQ(rep.engines[0].name, "TE");
  EXPECT_EQ(rep.engines[0].kind, uint32_t{USCOPE_NPU_ENGINE_TE});
  EXPECT_EQ(rep.engines[0].busy_cycles, 20u);
  EXPECT_DOUBLE_EQ(rep.engines[0].utilization, 20.0 / 30.0);
  ASSERT_EQ(rep.num_phases, 2u);
  EXPECT_STREQ(rep.phases[1].name, "MLP");
  EXPECT_DOUBLE_EQ(rep.phases[1].mean_cycles, 40.0);
  EXPECT_EQ(rep.dma_bytes, 1024u);
  ASSERT_EQ(uscope_npu_analyze(a, &rep, 0, UINT64_MAX), USCOPE_OK);
  EXPECT_EQ(std::string(rep.json), npu_report_json(f.uscope));
  EXPECT_NE(std::string(rep.text).find("TE utilization   0.500000"), std::string::npos) << rep.text;
  uscope_npu_analysis_close(a);
  uscope_npu_analysis_close(nullptr);
  uscope_reader_close(rd);

  // A trace without an npu scope (the reference writer's cpu trace).
  const std::string cpu = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/20_konata_sample.uscope";
  ASSERT_EQ(uscope_reader_open(&rd, cpu.c_str()), USCOPE_OK) << uscope_last_error();
  a = nullptr;
  EXPECT_EQ(uscope_npu_analysis_open(&a, rd), USCOPE_ERR_NOT_FOUND);
  EXPECT_STREQ(uscope_last_error(), "this trace has no npu protocol scope");
  EXPECT_EQ(a, nullptr);
  uscope_reader_close(rd);
}

}  // namespace
