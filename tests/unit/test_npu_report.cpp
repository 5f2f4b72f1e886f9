// uscope npu-report and uscope_convert_npu_report: the same data gives the
// same metrics from .jsonl, .uscope and .pccx (for .pccx: the metrics it
// can support; the rest are reported unavailable). Also the CLI commands.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "convert/pairing.hpp"
#include "convert/report.hpp"

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "uscope/convert.h"

namespace {

using uscope::test::TempDir;

// A small NPU workload: commands of three phases and two layers, each with
// DMA, TE and VE jobs, DRAM transfers on 4 channels, SRAM accesses and
// conflicts; some lines out of order by a few cycles.
std::string workload(unsigned seed, int cmds) {
  std::mt19937 rng(seed);
  const char *phases[] = {"QKV_PROJ", "ATTENTION_SCORE", "MLP"};
  std::string s = R"({"event_type":"TRACE_META","version":"1.0","sim_config":{"te_tflops":64}})" "\n";
  uint64_t t = 10;
  uint32_t job = 1, tx = 1;
  char b[512];
  for (int c = 0; c < cmds; ++c) {
    const char *ph = phases[c % 3];
    const int layer = c / 3 % 2;
    std::snprintf(b, sizeof b, R"({"event_type":"CMD_ENQUEUE","t_cycle":%llu,"cmd_id":%d,"cmd_type":"MATMUL","source":"ISA","token":%d,"desc_addr":4096,"layer_id":%d,"block_id":%d,"phase":"%s","model_name":"llama2_7b"})" "\n",
                  (unsigned long long)t, c, c, layer, layer, ph);
    s += b;
    t += 5;
    std::snprintf(b, sizeof b, R"({"event_type":"CMD_START","t_cycle":%llu,"cmd_id":%d,"core_id":%d})" "\n", (unsigned long long)t, c, c % 2);
    s += b;
    const uint64_t t0 = t;
    for (int j = 0; j < 3; ++j) {
      const uint64_t ts = t0 + rng() % 20, d = 5 + rng() % 40, ch = rng() % 4;
      std::snprintf(b, sizeof b, R"({"event_type":"DMA_START","t_cycle":%llu,"tx_id":%u,"channel":%llu,"direction":"%s","src_addr":1,"dst_addr":2,"size_bytes":%llu,"cmd_id":%d,"job_id":%u,"core_id":%d})" "\n",
                    (unsigned long long)ts, tx, (unsigned long long)ch, j == 2 ? "SRAM_TO_DRAM" : "DRAM_TO_SRAM",
                    (unsigned long long)(4096 << (rng() % 4)), c, job, c % 2);
      s += b;
      std::snprintf(b, sizeof b, R"({"event_type":"DRAM_TX_START","t_cycle":%llu,"tx_id":%u,"channel":%llu,"size_bytes":4096,"cmd_id":%d})" "\n",
                    (unsigned long long)ts + 1, tx, (unsigned long long)ch, c);
      s += b;
      std::snprintf(b, sizeof b, R"({"event_type":"DRAM_TX_END","t_cycle":%llu,"tx_id":%u,"channel":%llu})" "\n",
                    (unsigned long long)(ts + d - 1), tx, (unsigned long long)ch);
      s += b;
      std::snprintf(b, sizeof b, R"({"event_type":"DMA_END","t_cycle":%llu,"tx_id":%u,"channel":%llu,"cmd_id":%d,"job_id":%u,"core_id":%d})" "\n",
                    (unsigned long long)(ts + d), tx, (unsigned long long)ch, c, job, c % 2);
      s += b;
      ++tx;
      const uint64_t te = ts + d, te_d = 10 + rng() % 50;
      std::snprintf(b, sizeof b, R"({"event_type":"TE_START","t_cycle":%llu,"job_id":%u,"cmd_id":%d,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"%s","layer_id":%d,"core_id":%d})" "\n",
                    (unsigned long long)te, job, c, ph, layer, c % 2);
      s += b;
      for (int a = 0; a < 4; ++a) {
        std::snprintf(b, sizeof b, R"({"event_type":"SRAM_ACCESS","t_cycle":%llu,"addr":%u,"bank_id":%u,"access_type":"%s","by":"TE","conflict":%s,"cmd_id":%d,"job_id":%u})" "\n",
                      (unsigned long long)(te + a), a * 64, a % 8, a % 2 ? "WRITE" : "READ", a == 3 ? "true" : "false", c, job);
        s += b;
      }
      std::snprintf(b, sizeof b, R"({"event_type":"SRAM_CONFLICT","t_cycle":%llu,"bank_id":3,"num_requests":2,"allowed":1,"stalled_clients":["VE","DMA"],"cmd_id":%d})" "\n",
                    (unsigned long long)(te + 3), c);
      s += b;
      std::snprintf(b, sizeof b, R"({"event_type":"TE_END","t_cycle":%llu,"job_id":%u,"cmd_id":%d,"mac_count":1048576,"latency_cycles":%llu,"phase":"%s","layer_id":%d,"core_id":%d})" "\n",
                    (unsigned long long)(te + te_d), job, c, (unsigned long long)te_d, ph, layer, c % 2);
      s += b;
      ++job;
      std::snprintf(b, sizeof b, R"({"event_type":"VE_START","t_cycle":%llu,"job_id":%u,"cmd_id":%d,"op_type":"SOFTMAX","len":4096,"batch":1,"phase":"%s","layer_id":%d})" "\n",
                    (unsigned long long)(te + te_d), job, c, ph, layer);
      s += b;
      std::snprintf(b, sizeof b, R"({"event_type":"VE_END","t_cycle":%llu,"job_id":%u,"cmd_id":%d,"latency_cycles":7,"phase":"%s","layer_id":%d})" "\n",
                    (unsigned long long)(te + te_d + 7), job, c, ph, layer);
      s += b;
      ++job;
      t = std::max<uint64_t>(t, te + te_d + 7);
    }
    t += 3;
    std::snprintf(b, sizeof b, R"({"event_type":"CMD_END","t_cycle":%llu,"cmd_id":%d,"status":"OK","core_id":%d})" "\n", (unsigned long long)t, c, c % 2);
    s += b;
    std::snprintf(b, sizeof b, R"({"event_type":"TOKEN_COMPLETE","t_cycle":%llu,"token":%d,"cmd_id":%d,"status":"OK"})" "\n", (unsigned long long)t, c, c);
    s += b;
  }
  return s;
}

std::string report(const std::string &path) {
  char *text = nullptr;
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  const uscope_status_t s = uscope_convert_npu_report(&text, nullptr, path.c_str(), 0, &o, 1);
  EXPECT_EQ(s, USCOPE_OK) << uscope_last_error();
  std::string r = text ? text : "";
  uscope_convert_free(text);
  return r;
}

std::string field(simdjson::dom::element e, const char *k) { return simdjson::minify(e[k]); }

TEST(NpuReport, SameNumbersFromJsonlUscopeAndPccx) {
  TempDir d("rep");
  {
    std::ofstream f(d.file("w.jsonl"));
    f << workload(7, 30);
  }
  ASSERT_EQ(uscope_convert(nullptr, d.file("w.jsonl").c_str(), 0, d.file("w.uscope").c_str(), 0, nullptr), USCOPE_OK)
      << uscope_last_error();
  ASSERT_EQ(uscope_convert(nullptr, d.file("w.jsonl").c_str(), 0, d.file("w.pccx").c_str(), 0, nullptr), USCOPE_OK)
      << uscope_last_error();
  const std::string rj = report(d.file("w.jsonl")), ru = report(d.file("w.uscope")), rp = report(d.file("w.pccx"));
  simdjson::dom::parser pj, pu, pp;
  auto j = pj.parse(rj).value(), u = pu.parse(ru).value(), p = pp.parse(rp).value();
  EXPECT_EQ(std::string_view(j["format"]), "jsonl");
  EXPECT_EQ(std::string_view(u["format"]), "uscope");
  // .uscope: everything equal.
  for (const char *k : {"period_ps", "first_cycle", "last_cycle", "total_cycles", "te_utilization", "ve_utilization",
                        "dma_bandwidth", "dram_channels", "sram", "phases", "layers"})
    EXPECT_EQ(field(j, k), field(u, k)) << k;
  // .pccx: what it can hold is equal, the rest unavailable.
  for (const char *k : {"period_ps", "first_cycle", "last_cycle", "total_cycles", "te_utilization", "ve_utilization",
                        "sram", "phases"})
    EXPECT_EQ(field(j, k), field(p, k)) << k;
  for (const char *k : {"dma_bandwidth", "dram_channels", "layers"}) {
    std::string_view why;
    EXPECT_FALSE(p[k]["unavailable"].get(why)) << k;
  }
  // Sanity of the numbers themselves.
  EXPECT_GT(double(j["te_utilization"]["utilization"]), 0.0);
  EXPECT_LE(double(j["te_utilization"]["utilization"]), 1.0);
  EXPECT_EQ(uint64_t(j["sram"]["accesses"]), 30u * 3 * 4);
  EXPECT_EQ(uint64_t(j["sram"]["conflicts"]), 30u * 3);
  EXPECT_EQ(simdjson::dom::array(j["phases"]).size(), 3u);
  EXPECT_EQ(simdjson::dom::array(j["layers"]).size(), 2u);
  EXPECT_EQ(simdjson::dom::array(j["dram_channels"]).size(), 4u);
  // DMA bytes by direction (two reads into SRAM, one write back per command), adding up to the total.
  auto dirs = simdjson::dom::array(j["dma_bandwidth"]["by_direction"]);
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(std::string_view(dirs.at(0)["direction"]), "DRAM_TO_SRAM");
  EXPECT_EQ(uint64_t(dirs.at(0)["transfers"]), 30u * 2);
  EXPECT_EQ(std::string_view(dirs.at(1)["direction"]), "SRAM_TO_DRAM");
  EXPECT_EQ(uint64_t(dirs.at(1)["transfers"]), 30u);
  EXPECT_GT(uint64_t(dirs.at(1)["bytes"]), 0u);
  EXPECT_EQ(uint64_t(dirs.at(0)["bytes"]) + uint64_t(dirs.at(1)["bytes"]), uint64_t(j["dma_bandwidth"]["bytes"]));
}

// The text report says what each figure counts and over which time base.
TEST(NpuReport, TextSaysWhatEachFigureCounts) {
  TempDir d("reptext");
  {
    std::ofstream f(d.file("w.jsonl"));
    f << workload(7, 6);
  }
  char *text = nullptr;
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  ASSERT_EQ(uscope_convert_npu_report(&text, nullptr, d.file("w.jsonl").c_str(), 0, &o, 0), USCOPE_OK)
      << uscope_last_error();
  const std::string r = text;
  uscope_convert_free(text);
  for (const char *want : {"cycles from the first to the last event: T below", "cycles T with at least one TE job running",
                           "cycles T with at least one VE job running", "bytes in all directions over the",
                           "direction DRAM_TO_SRAM", "direction SRAM_TO_DRAM", "cycles T busy)",
                           "CMD_START to CMD_END mean", "(first CMD_START to last CMD_END); of its TE+VE+DMA busy cycles"})
    EXPECT_NE(r.find(want), std::string::npos) << want << "\n" << r;
}

using uscope::test::CliRun;
CliRun cli(const std::string &args) { return uscope::test::run_cli(args, true); }

TEST(NpuReportCli, ConvertAndReportCommands) {
  TempDir d("repcli");
  {
    std::ofstream f(d.file("w.jsonl"));
    f << workload(3, 6) << "{oops\n" << R"({"event_type":"NOPE","t_cycle":1})" "\n";
  }
  CliRun c = cli("convert " + d.file("w.jsonl") + " -o " + d.file("w.uscope"));
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("skipped 2 malformed line(s)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("unknown event type \"NOPE\""), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("\r"), std::string::npos);  // no progress bar when stderr is not a terminal
  CliRun s = cli("convert " + d.file("w.jsonl") + " -o " + d.file("s.uscope") + " --strict");
  EXPECT_EQ(s.exit_code, 1) << s.out;
  EXPECT_NE(s.out.find("line "), std::string::npos) << s.out;
  CliRun b = cli("convert " + d.file("w.uscope") + " -o " + d.file("back.jsonl"));
  EXPECT_EQ(b.exit_code, 0) << b.out;
  CliRun r1 = cli("npu-report " + d.file("w.uscope") + " --json");
  EXPECT_EQ(r1.exit_code, 0) << r1.out;
  simdjson::dom::parser p;
  auto j = p.parse(r1.out);
  ASSERT_FALSE(j.error()) << r1.out;
  CliRun r2 = cli("npu-report " + d.file("back.jsonl") + " --json");
  EXPECT_EQ(r2.exit_code, 0);
  EXPECT_EQ(r2.out.substr(r2.out.find(",\"period_ps\"")), r1.out.substr(r1.out.find(",\"period_ps\"")));
  CliRun t = cli("npu-report " + d.file("w.uscope"));
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("TE utilization"), std::string::npos) << t.out;
  CliRun bad = cli("convert " + d.file("w.jsonl") + " -o " + d.file("x.txt"));
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
}

}  // namespace

// The report folds busy spans as they come (Report::horizon from the
// Pairer), so that its memory does not grow with the trace. Folding must not
// change a number: overlapping TE/VE jobs, long jobs that outlive thousands
// of short ones, DRAM transfers on several channels, and STARTs that never
// end, through the same Pairer, with and without the horizon. A START that
// never ends holds the horizon back (its END could still come), so the
// merged runs after it are kept: the numbers stay exact.
TEST(NpuReport, FoldingBusySpansChangesNoNumber) {
  using namespace uscope::convert;
  struct NoStrings : StringSource {
    std::string_view str(uint64_t) const override { return "p"; }
    const char *c_str(uint64_t) const override { return "p"; }
  } strs;
  std::vector<Ev> evs;
  std::mt19937_64 rng(7);
  // (time, START or END, kind, id, channel): sorted by time like the ingest's output.
  std::vector<std::tuple<uint64_t, int, uint8_t, uint64_t, uint64_t>> raw;
  uint64_t id = 0;
  for (int i = 0; i < 150000; ++i) {
    const uint64_t t = rng() % 5000000;
    const int which = static_cast<int>(rng() % 3);
    const uint64_t len = rng() % 64 == 0 ? rng() % 40000 : rng() % 40;  // some long jobs
    const uint8_t start = which == 0 ? E_TE_START : which == 1 ? E_VE_START : E_DRAM_TX_START;
    raw.emplace_back(t, 0, start, ++id, rng() % 4);
    if (t < 4900000 || rng() % 50)  // STARTs without END only in the last 2%
      raw.emplace_back(t + len, 1, static_cast<uint8_t>(start + 1), id, std::get<4>(raw.back()));
  }
  raw.emplace_back(2500000, 0, E_VE_START, ++id, 0);  // dangling, mid-trace: see below
  std::stable_sort(raw.begin(), raw.end(), [](const auto &a, const auto &b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto &[t, end, type, jid, ch] : raw) {
    Ev e{};
    e.t_cycle = t;
    e.type = type;
    if (type == E_DRAM_TX_START || type == E_DRAM_TX_END) {
      e.set(K_tx_id, jid);
      e.set(K_channel, ch);
      if (!end) e.set(K_size_bytes, 64);
    } else {
      e.set(K_job_id, jid);
    }
    evs.push_back(e);
  }
  size_t held = 0;
  auto run = [&](bool fold) {
    Report rep;
    rep.format = "jsonl";
    rep.strs = &strs;
    Pairer p(rep);
    if (fold) rep.horizon = [&p](PairKind k) { return p.horizon(k); };
    for (const Ev &e : evs) p.add(e);
    p.finish();
    rep.horizon = nullptr;
    held = rep.busy_spans_held();
    return rep.render(true);
  };
  const std::string whole = run(false);
  EXPECT_GT(held, 140000u);
  const std::string folded = run(true);
  EXPECT_EQ(whole, folded);
  // Folded: what is held is merged runs (the mid-trace dangling VE START
  // keeps the VE runs after it), not the 150,000 spans.
  EXPECT_LT(held, 15000u) << "the spans were not folded";
  // The data is what the test claims: engines are neither idle nor always busy.
  EXPECT_NE(whole.find("\"utilization\":0."), std::string::npos) << whole;
  EXPECT_EQ(whole.find("\"utilization\":0.000000"), std::string::npos) << whole;
}

// With stderr on a terminal, a conversion draws a progress bar there (\r
// updates, a final 100% line); --no-progress turns it off. The terminal is a
// pseudo-terminal whose other end this test reads.
TEST(NpuReportCli, ProgressBarOnATerminal) {
  TempDir d("progress");
  {
    std::ofstream f(d.file("w.jsonl"));
    f << workload(5, 40);
  }
  auto run_on_pty = [&](const std::string &extra) {
    std::vector<std::string> args = {"convert", d.file("w.jsonl"), "-o", d.file("w" + extra + ".pccx")};
    if (!extra.empty()) args.push_back(extra);
    const uscope::test::CliRun r = uscope::test::run_cli_on_pty(args);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.out;
  };
  const std::string bar = run_on_pty("");
  EXPECT_NE(bar.find("\rjsonl -> pccx ["), std::string::npos) << bar;
  EXPECT_NE(bar.find("100%"), std::string::npos) << bar;
  EXPECT_NE(bar.find(" lines"), std::string::npos) << bar;
  EXPECT_NE(bar.find("converted "), std::string::npos) << bar;
  const std::string quiet = run_on_pty("--no-progress");
  EXPECT_EQ(quiet.find("jsonl -> pccx ["), std::string::npos) << quiet;  // (the pty turns \n into \r\n)
  EXPECT_EQ(quiet.find("100%"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("converted "), std::string::npos) << quiet;
}
