// Round trips through every converter pair keep what both formats can hold
// (docs/convert.md "Round trips"): the clock period, the pccx header fields
// (mac_dims, isa_version, peak_tops, cores, cycles, clock_mhz, encoding,
// pccx_lab_version) and the events.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "pccx/pccx.h"
#include "support/test_util.hpp"
#include "uscope/convert.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

using uscope::test::read_all;
using uscope::test::write_all;

// Converts with default options (period_ps 0: the trace's), or the given period.
void conv(const std::string &in, const std::string &out, uint64_t period_ps = 0, uint64_t skipped = 0) {
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  o.period_ps = period_ps;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_convert(&st, in.c_str(), 0, out.c_str(), 0, &o), USCOPE_OK) << in << " -> " << out << ": "
                                                                                << uscope_last_error();
  EXPECT_EQ(st.skipped, skipped) << in << " -> " << out;
}

uint64_t uscope_period(const std::string &path) {
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  if (!r) return 0;
  uscope_clock_info_t ck{};
  EXPECT_EQ(uscope_reader_clock(r, &ck, 0), USCOPE_OK);
  uscope_reader_close(r);
  return ck.period_ps;
}

struct PccxFile {
  std::string lab, isa, encoding;
  uint32_t mac_rows = 0, mac_cols = 0, cores = 0, clock_mhz = 0;
  double peak_tops = 0;
  uint64_t cycles = 0;
  // core, start, duration, type, api_name
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, std::string>> events;
  bool operator==(const PccxFile &o) const {
    return std::tie(lab, isa, encoding, mac_rows, mac_cols, cores, clock_mhz, peak_tops, cycles, events) ==
           std::tie(o.lab, o.isa, o.encoding, o.mac_rows, o.mac_cols, o.cores, o.clock_mhz, o.peak_tops, o.cycles,
                    o.events);
  }
};
std::ostream &operator<<(std::ostream &os, const PccxFile &f) {
  os << f.lab << " " << f.isa << " " << f.encoding << " mac " << f.mac_rows << "x" << f.mac_cols << " cores "
     << f.cores << " clock " << f.clock_mhz << " peak " << f.peak_tops << " cycles " << f.cycles << " events "
     << f.events.size();
  return os;
}

PccxFile read_pccx(const std::string &path) {
  PccxFile f;
  pccx_reader_t *r = nullptr;
  EXPECT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  if (!r) return f;
  pccx_header_t h{};
  h.struct_size = sizeof h;
  EXPECT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  f.lab = h.pccx_lab_version;
  f.isa = h.isa_version;
  f.encoding = h.encoding_name;
  f.mac_rows = h.mac_rows;
  f.mac_cols = h.mac_cols;
  f.cores = h.cores;
  f.clock_mhz = h.clock_mhz;
  f.peak_tops = h.peak_tops;
  f.cycles = h.cycles;
  for (uint64_t i = 0; i < pccx_reader_event_count(r); ++i) {
    pccx_event_t e{};
    EXPECT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    f.events.emplace_back(e.core_id, e.start_cycle, e.duration, e.type_id, e.api_name ? e.api_name : "");
  }
  std::sort(f.events.begin(), f.events.end());
  pccx_reader_close(r);
  return f;
}

// The .pccx file's events are in start order, as pccx-lab's large-file
// reader (MmapTrace) expects of a flatbuf payload.
bool in_start_order(const std::string &path) {
  pccx_reader_t *r = nullptr;
  EXPECT_EQ(pccx_reader_open(&r, path.c_str(), 0), USCOPE_OK) << uscope_last_error();
  if (!r) return false;
  bool ok = true;
  uint64_t last = 0;
  for (uint64_t i = 0; i < pccx_reader_event_count(r) && ok; ++i) {
    pccx_event_t e{};
    EXPECT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    ok = e.start_cycle >= last;
    last = e.start_cycle;
  }
  pccx_reader_close(r);
  return ok;
}

// A .pccx whose events are the ones the converters write (docs/convert.md
// "JSONL -> .pccx"), with every header field set away from its default.
void write_pccx(const std::string &path, uint32_t encoding, uint32_t clock_mhz) {
  pccx_writer_options_t o;
  pccx_writer_options_init(&o);
  o.encoding = encoding;
  o.pccx_lab_version = "v0.4.0-contention-aware";
  o.isa_version = "2.3";
  o.mac_rows = 16;
  o.mac_cols = 64;
  o.peak_tops = 2.05;
  o.cores = 8;
  o.clock_mhz = clock_mhz;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
  struct E {
    uint32_t core;
    uint64_t start, dur;
    uint32_t type;
    const char *name;
  };
  const E evs[] = {
      {0, 10, 0, PCCX_EVENT_API_CALL, "CMD_ENQUEUE"},
      {0, 20, 500, PCCX_EVENT_API_CALL, "CMD:QKV_PROJ"},
      {1, 30, 40, PCCX_EVENT_API_CALL, "JOB:TE_GEMM"},
      {1, 40, 20, PCCX_EVENT_DMA_READ, "DMA:DRAM_TO_SRAM"},
      {2, 45, 25, PCCX_EVENT_DMA_WRITE, "DMA:SRAM_TO_DRAM"},
      {3, 50, 30, PCCX_EVENT_MAC_COMPUTE, "TE"},
      {3, 60, 10, PCCX_EVENT_UNKNOWN, "VE"},
      {4, 61, 9, PCCX_EVENT_UNKNOWN, "DRAM_TX"},
      {5, 62, 8, PCCX_EVENT_UNKNOWN, "NOC_TX"},
      {6, 70, 0, PCCX_EVENT_SYSTOLIC_STALL, "SRAM_CONFLICT"},
      {7, 80, 0, PCCX_EVENT_BARRIER_SYNC, "IRQ_EMIT"},
      {7, 90, 0, PCCX_EVENT_BARRIER_SYNC, "TOKEN_COMPLETE"},
      {0, 95, 0, PCCX_EVENT_UNKNOWN, "SRAM_ACCESS"},
      // Events of another producer with no NPU meaning: WARN lines in JSONL.
      {9, 100, 7, PCCX_EVENT_SYSTOLIC_STALL, "stall, row 3"},
      {9, 110, 1, PCCX_EVENT_BARRIER_SYNC, nullptr},
      {10, 120, 0, PCCX_EVENT_UNKNOWN, "u"},
  };
  for (const E &e : evs) ASSERT_EQ(pccx_writer_event(w, e.core, e.start, e.dur, e.type, e.name), USCOPE_OK);
  ASSERT_EQ(pccx_writer_set_total_cycles(w, 100000), USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
}

const char *const kJsonl =
    R"({"event_type": "TRACE_META", "version": "1.0", "sim_config": {"te_tflops": 64}, "sim_version": "3.2", "period_ps": 1250, "pccx": {"mac_dims": [16, 64], "peak_tops": 2.05, "isa_version": "2.3"}})" "\n"
    R"({"event_type": "CMD_ENQUEUE", "t_cycle": 100, "t_ns": 125, "cmd_id": 42, "cmd_type": "MATMUL", "source": "ISA", "token": 10, "phase": "QKV_PROJ"})" "\n"
    R"({"event_type": "CMD_START", "t_cycle": 150, "t_ns": 187.5, "cmd_id": 42})" "\n"
    R"({"event_type": "TE_START", "t_cycle": 230, "t_ns": 287.5, "job_id": 1001, "cmd_id": 42, "m": 128, "n": 128, "k": 256, "tile_m": 64, "tile_n": 64, "tile_k": 64})" "\n"
    R"({"event_type": "TE_END", "t_cycle": 280, "t_ns": 350, "job_id": 1001, "cmd_id": 42, "mac_count": 4194304, "latency_cycles": 50})" "\n"
    R"({"event_type": "CMD_END", "t_cycle": 900, "t_ns": 1125, "cmd_id": 42, "status": "OK"})" "\n";

// jsonl -> uscope -> jsonl and jsonl -> jsonl: the period (TRACE_META
// period_ps, checked against t_ns) and the pccx object are kept.
TEST(ConvertRoundTrip, JsonlUscopeJsonlKeepsPeriodAndPccxFields) {
  TempDir d("rt");
  write_all(d.file("in.jsonl"), kJsonl);
  conv(d.file("in.jsonl"), d.file("canon.jsonl"));
  conv(d.file("in.jsonl"), d.file("t.uscope"));
  EXPECT_EQ(uscope_period(d.file("t.uscope")), 1250u);
  conv(d.file("t.uscope"), d.file("back.jsonl"));
  const std::string canon = read_all(d.file("canon.jsonl"));
  EXPECT_EQ(read_all(d.file("back.jsonl")), canon);
  EXPECT_NE(canon.find("\"period_ps\":1250"), std::string::npos) << canon;
  EXPECT_NE(canon.find("\"pccx\":{\"isa_version\":\"2.3\",\"mac_dims\":[16,64],\"peak_tops\":2.05}"), std::string::npos)
      << canon;
  EXPECT_NE(canon.find("\"t_ns\":187.5"), std::string::npos) << canon;
  // uscope -> jsonl -> uscope: the same clock, the same JSONL again.
  conv(d.file("back.jsonl"), d.file("t2.uscope"));
  EXPECT_EQ(uscope_period(d.file("t2.uscope")), 1250u);
  conv(d.file("t2.uscope"), d.file("back2.jsonl"));
  EXPECT_EQ(read_all(d.file("back2.jsonl")), canon);
  // jsonl -> jsonl is a fixed point.
  conv(d.file("canon.jsonl"), d.file("canon2.jsonl"));
  EXPECT_EQ(read_all(d.file("canon2.jsonl")), canon);
}

// A period given as an option (no TRACE_META) is written back as TRACE_META
// period_ps, so the next conversion needs no option.
TEST(ConvertRoundTrip, PeriodGivenAsOptionIsKept) {
  TempDir d("rt");
  std::string text(kJsonl);
  text = text.substr(text.find('\n') + 1);  // no TRACE_META
  write_all(d.file("in.jsonl"), text);
  conv(d.file("in.jsonl"), d.file("t.uscope"), 1250);
  EXPECT_EQ(uscope_period(d.file("t.uscope")), 1250u);
  conv(d.file("t.uscope"), d.file("back.jsonl"));
  const std::string back = read_all(d.file("back.jsonl"));
  EXPECT_EQ(back.substr(0, back.find('\n')), R"({"event_type":"TRACE_META","period_ps":1250})");
  conv(d.file("back.jsonl"), d.file("t2.uscope"));  // no option now
  EXPECT_EQ(uscope_period(d.file("t2.uscope")), 1250u);
  // The default period writes no TRACE_META line (the canonical form of a
  // file without one is unchanged).
  std::string plain;
  for (std::istringstream in(text); std::getline(in, text);) {
    const size_t at = text.find(", \"t_ns\"");
    plain += text.substr(0, at) + text.substr(text.find(',', at + 2)) + "\n";
  }
  write_all(d.file("plain.jsonl"), plain);
  conv(d.file("plain.jsonl"), d.file("p.uscope"));
  EXPECT_EQ(uscope_period(d.file("p.uscope")), 1000u);
  conv(d.file("p.uscope"), d.file("p.jsonl"));
  EXPECT_EQ(read_all(d.file("p.jsonl")).find("TRACE_META"), std::string::npos);
}

// The four chains of issue 19 from a .pccx file back to .pccx: through
// µScope, through JSONL, and through both in either order.
const char *const kChains[][3] = {
    {"uscope", nullptr, nullptr}, {"jsonl", nullptr, nullptr}, {"uscope", "jsonl", nullptr}, {"jsonl", "uscope", nullptr}};

// Converts a through each chain back to .pccx; every file of the chain
// converts with nothing skipped.
std::vector<PccxFile> through_chains(TempDir &d, const std::string &a) {
  std::vector<PccxFile> out;
  int n = 0;
  for (const auto &chain : kChains) {
    std::string prev = a;
    const std::string tag = "c" + std::to_string(n++);
    for (int k = 0; k < 3 && chain[k]; ++k) {
      const std::string next = d.file(tag + "_" + std::to_string(k) + "." + chain[k]);
      conv(prev, next);
      prev = next;
    }
    const std::string back = d.file(tag + "_back.pccx");
    conv(prev, back);
    EXPECT_TRUE(in_start_order(back)) << back;
    out.push_back(read_pccx(back));
  }
  return out;
}

// pccx -> {uscope, jsonl, uscope -> jsonl, jsonl -> uscope} -> pccx: every
// header field and every event come back exactly (type, core, start,
// duration and api_name, compared as multisets), for both encodings and
// clocks that are not a whole number of picoseconds.
TEST(ConvertRoundTrip, PccxChainsKeepHeaderAndEvents) {
  for (uint32_t enc : {uint32_t{PCCX_ENCODING_BINCODE}, uint32_t{PCCX_ENCODING_FLATBUF}}) {
    for (uint32_t mhz : {800u, 1000u, 3000u}) {
      SCOPED_TRACE(std::to_string(enc) + " " + std::to_string(mhz) + " MHz");
      TempDir d("rt");
      write_pccx(d.file("a.pccx"), enc, mhz);
      const PccxFile a = read_pccx(d.file("a.pccx"));
      ASSERT_EQ(a.events.size(), 16u);
      int chain = 0;
      for (const PccxFile &b : through_chains(d, d.file("a.pccx"))) {
        SCOPED_TRACE("chain " + std::to_string(chain++));
        EXPECT_EQ(a, b) << a << "\n" << b;
        EXPECT_EQ(b.mac_rows, 16u);
        EXPECT_EQ(b.clock_mhz, mhz);
        EXPECT_EQ(b.cycles, 100000u);
      }
      // The µScope file has the pccx clock.
      EXPECT_EQ(uscope_period(d.file("c0_0.uscope")), (1000000 + mhz / 2) / mhz);
    }
  }
}

// pccx-lab's own trace, through each chain: all 16,008 events come back with
// their type, core, start, duration and api_name (an API call's name, none
// for its MAC and DMA events), and the header whole.
TEST(ConvertRoundTrip, PccxLabTraceKeepsEveryEvent) {
  TempDir d("rt");
  const std::string dummy = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";
  const PccxFile a = read_pccx(dummy);
  ASSERT_EQ(a.events.size(), 16008u);
  EXPECT_EQ(a.mac_rows, 32u);
  EXPECT_EQ(a.cycles, 5423940u);
  EXPECT_EQ(a.peak_tops, 65.54);
  int chain = 0;
  for (const PccxFile &b : through_chains(d, dummy)) {
    SCOPED_TRACE("chain " + std::to_string(chain++));
    EXPECT_EQ(a, b) << a << "\n" << b;
  }
}

// The chain of issue 11: µScope (1250 ps) -> JSONL -> pccx -> JSONL -> µScope.
TEST(ConvertRoundTrip, UscopeThroughPccxKeepsThePeriod) {
  TempDir d("rt");
  write_all(d.file("in.jsonl"), kJsonl);
  conv(d.file("in.jsonl"), d.file("a.uscope"));
  conv(d.file("a.uscope"), d.file("a.jsonl"));
  conv(d.file("a.jsonl"), d.file("a.pccx"));
  const PccxFile p = read_pccx(d.file("a.pccx"));
  EXPECT_EQ(p.clock_mhz, 800u);
  EXPECT_EQ(p.mac_rows, 16u);
  EXPECT_EQ(p.mac_cols, 64u);
  EXPECT_EQ(p.peak_tops, 2.05);
  EXPECT_EQ(p.isa, "2.3");
  conv(d.file("a.pccx"), d.file("b.jsonl"));
  conv(d.file("b.jsonl"), d.file("b.uscope"));  // CMD_ENQUEUE from pccx: source ISA (docs/conversions.md)
  EXPECT_EQ(uscope_period(d.file("b.uscope")), 1250u);
  conv(d.file("b.uscope"), d.file("c.jsonl"));
  const std::string c = read_all(d.file("c.jsonl"));
  EXPECT_NE(c.find("\"period_ps\":1250"), std::string::npos) << c;
  EXPECT_NE(c.find("\"mac_dims\":[16,64]"), std::string::npos) << c;
  // jsonl -> pccx -> jsonl: the t_cycle of every event survives (pccx keeps
  // no t_ns, no TRACE_META version / sim_config / sim_version: the table in
  // docs/convert.md).
  EXPECT_NE(c.find("\"event_type\":\"TE_START\",\"t_cycle\":230"), std::string::npos) << c;
  EXPECT_NE(c.find("\"event_type\":\"CMD_END\",\"t_cycle\":900"), std::string::npos) << c;
}

// TRACE_META's period_ps is checked like the option: t_ns must agree; a
// caller's period wins.
TEST(ConvertRoundTrip, TraceMetaPeriodAndOptions) {
  TempDir d("rt");
  write_all(d.file("in.jsonl"), kJsonl);
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  EXPECT_EQ(o.period_ps, 0u);  // the trace's
  o.period_ps = 1000;          // disagrees with t_ns: every event line is an issue
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  EXPECT_EQ(uscope_convert(&st, d.file("in.jsonl").c_str(), 0, d.file("o.uscope").c_str(), 0, &o), USCOPE_OK);
  EXPECT_EQ(st.skipped, 5u);
  // A bad period_ps or pccx object is an issue of the TRACE_META line.
  write_all(d.file("bad.jsonl"), std::string(R"({"event_type": "TRACE_META", "period_ps": 0})") + "\n" +
                                     R"({"event_type": "TRACE_META", "pccx": {"mac_dims": [1]}})" "\n" +
                                     R"({"event_type": "CMD_START", "t_cycle": 1, "cmd_id": 1})" "\n");
  uscope_convert_options_init(&o);
  std::vector<std::string> why;
  o.user = &why;
  o.on_issue = [](void *u, uint64_t, const char *r) { static_cast<std::vector<std::string> *>(u)->push_back(r); };
  EXPECT_EQ(uscope_convert(&st, d.file("bad.jsonl").c_str(), 0, d.file("o.jsonl").c_str(), 0, &o), USCOPE_OK);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_NE(why[0].find("period_ps"), std::string::npos) << why[0];
  EXPECT_NE(why[1].find("mac_dims"), std::string::npos) << why[1];
}

}  // namespace

namespace {

// An NPU JSONL trace of every event type, from a seed: commands with their
// jobs, TE/VE work, DMA/DRAM/NoC transfers on overlapping channels, SRAM
// traffic, IRQs, tokens and diagnostics, with LLM context keys.
std::string generated_trace(uint32_t seed, int commands) {
  std::mt19937 rng(seed);
  struct L {
    uint64_t t;
    int seq;
    std::string text;
  };
  std::vector<L> lines;
  int seq = 0;
  auto at = [&](uint64_t t, std::string text) { lines.push_back({t, seq++, std::move(text)}); };
  auto ev = [](const char *type, uint64_t t, const std::string &rest) {
    return std::string("{\"event_type\":\"") + type + "\",\"t_cycle\":" + std::to_string(t) + rest + "}";
  };
  const char *phases[] = {"prefill", "decode", "QKV_PROJ"};
  const char *dirs[] = {"DRAM_TO_SRAM", "SRAM_TO_DRAM", "HOST_TO_SRAM", "SRAM_TO_HOST"};
  uint64_t t = 0;
  uint32_t job = 0, tx = 0;
  for (int c = 0; c < commands; ++c) {
    t += 1 + rng() % 20;
    const std::string core = ",\"core_id\":" + std::to_string(rng() % 4);
    const std::string ctx = core + ",\"layer_id\":" + std::to_string(c % 3) + ",\"phase\":\"" + phases[c % 3] + "\"";
    const std::string id = ",\"cmd_id\":" + std::to_string(c);
    at(t, ev("CMD_ENQUEUE", t, id + ",\"cmd_type\":\"MATMUL\",\"source\":\"ISA\"" + ctx));
    const uint64_t cs = t + 2, ce = cs + 50 + rng() % 200;
    at(cs, ev("CMD_START", cs, id + core));
    for (int j = 0; j < 3; ++j) {
      const uint64_t js = cs + 1 + rng() % 40, je = js + 1 + rng() % 60;
      const std::string jid = ",\"job_id\":" + std::to_string(job++);
      at(js, ev("JOB_ISSUE", js, jid + id + ",\"job_type\":\"TE_GEMM\"" + ctx));
      at(js + 1, ev(j == 2 ? "VE_START" : "TE_START", js + 1, jid + id + ctx));
      at(je, ev(j == 2 ? "VE_END" : "TE_END", je, jid + id + core));
      at(je + 1, ev("JOB_DONE", je + 1, jid + id + core));
      const uint64_t ds = js + rng() % 10, de = ds + rng() % 30;
      const std::string chan = ",\"channel\":" + std::to_string(rng() % 8) + ",\"tx_id\":" + std::to_string(tx++);
      at(ds, ev("DMA_START", ds, chan + ",\"direction\":\"" + dirs[rng() % 4] + "\",\"size_bytes\":4096" + ctx));
      at(de, ev("DMA_END", de, chan + core));
      const std::string dram = ",\"channel\":" + std::to_string(rng() % 4) + ",\"tx_id\":" + std::to_string(tx++);
      at(ds + 1, ev("DRAM_TX_START", ds + 1, dram + ",\"size_bytes\":64" + core));
      at(de + 2, ev("DRAM_TX_END", de + 2, dram + core));
      const std::string noc = ",\"link_id\":" + std::to_string(rng() % 4) + ",\"tx_id\":" + std::to_string(tx++);
      at(ds + 2, ev("NOC_TX_START", ds + 2, noc + ",\"size_bytes\":32" + core));
      at(de + 3, ev("NOC_TX_END", de + 3, noc + core));
      at(js + 3, ev("SRAM_ACCESS", js + 3, ",\"addr\":4096,\"bank_id\":3,\"access_type\":\"WRITE\"" + core));
    }
    if (c % 5 == 0) at(cs + 5, ev("SRAM_CONFLICT", cs + 5, ",\"bank_id\":1,\"num_requests\":2,\"allowed\":1" + core));
    at(ce, ev("CMD_END", ce, id + core + ",\"status\":\"OK\""));
    at(ce + 1, ev("IRQ_EMIT", ce + 1, id + ",\"irq_line\":1" + core));
    at(ce + 2, ev("TOKEN_COMPLETE", ce + 2, ",\"token\":" + std::to_string(c) + core));
    if (c % 7 == 0) at(ce + 3, ev("WARN", ce + 3, ",\"component\":\"te\",\"code\":\"W1\",\"msg\":\"slow\"" + core));
    if (c % 11 == 0) at(ce + 3, ev("ERROR", ce + 3, ",\"component\":\"dma\",\"code\":\"E2\",\"msg\":\"retry\"" + core));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const L &a, const L &b) { return a.t < b.t; });
  std::string out;
  for (const L &l : lines) out += l.text + "\n";
  return out;
}

// (event_type, t_cycle, core_id) of every event line of a JSONL file, sorted:
// what pccx holds of each event (its pairs' START and END lines come back
// as such, instants as instants).
std::vector<std::tuple<std::string, uint64_t, uint64_t>> skeleton(const std::string &path) {
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> out;
  std::istringstream in(read_all(path));
  simdjson::ondemand::parser parser;
  for (std::string line; std::getline(in, line);) {
    simdjson::padded_string p(line);
    simdjson::ondemand::document doc = parser.iterate(p);
    std::string_view type;
    EXPECT_EQ(doc["event_type"].get_string().get(type), simdjson::SUCCESS) << line;
    if (type == "TRACE_META") continue;
    uint64_t t = 0, core = ~uint64_t{0};
    EXPECT_EQ(doc["t_cycle"].get_uint64().get(t), simdjson::SUCCESS) << line;
    if (doc["core_id"].get_uint64().get(core) != simdjson::SUCCESS) core = ~uint64_t{0};  // none
    out.emplace_back(std::string(type), t, core);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// A generated NPU trace through pccx and back, from JSONL and from µScope:
// every event comes back with its type, cycle and core (what pccx holds of
// it: docs/conversions.md), and jsonl -> pccx -> uscope -> pccx is a fixed
// point of the pccx events.
TEST(ConvertRoundTrip, GeneratedNpuTraceThroughPccx) {
  TempDir d("rt");
  write_all(d.file("g.jsonl"), generated_trace(11, 400));
  conv(d.file("g.jsonl"), d.file("g.uscope"));
  conv(d.file("g.uscope"), d.file("g.pccx"));
  conv(d.file("g.pccx"), d.file("g2.uscope"));
  conv(d.file("g2.uscope"), d.file("g2.jsonl"));
  conv(d.file("g.jsonl"), d.file("h.pccx"));
  conv(d.file("h.pccx"), d.file("h.jsonl"));
  const auto want = skeleton(d.file("g.jsonl"));
  ASSERT_GT(want.size(), 400u * 20);
  EXPECT_EQ(skeleton(d.file("g2.jsonl")), want);  // uscope -> pccx -> uscope
  EXPECT_EQ(skeleton(d.file("h.jsonl")), want);   // jsonl -> pccx -> jsonl
  conv(d.file("g2.uscope"), d.file("g3.pccx"));
  const PccxFile a = read_pccx(d.file("g.pccx")), b = read_pccx(d.file("g3.pccx")), c = read_pccx(d.file("h.pccx"));
  EXPECT_EQ(a, b) << a << "\n" << b;
  EXPECT_EQ(a.events, c.events);
  for (const char *f : {"g.pccx", "g3.pccx", "h.pccx"}) EXPECT_TRUE(in_start_order(d.file(f))) << f;
}

// DMA, DRAM and NoC transfers from a .pccx file get the lowest channel (or
// link) free at their START: never two in flight on one unit, as many units
// as transfers overlap, the same assignment every run.
TEST(ConvertRoundTrip, PccxTransfersGetTheLowestFreeChannel) {
  TempDir d("rt");
  pccx_writer_options_t o;
  pccx_writer_options_init(&o);
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, d.file("t.pccx").c_str(), &o), USCOPE_OK) << uscope_last_error();
  // Out of start order on purpose: pccx files are in no particular order.
  ASSERT_EQ(pccx_writer_event(w, 0, 20, 10, PCCX_EVENT_DMA_READ, nullptr), USCOPE_OK);  // [20,30): channel 1
  ASSERT_EQ(pccx_writer_event(w, 0, 10, 15, PCCX_EVENT_DMA_WRITE, nullptr), USCOPE_OK);  // [10,25): channel 0
  ASSERT_EQ(pccx_writer_event(w, 1, 25, 10, PCCX_EVENT_DMA_READ, nullptr), USCOPE_OK);  // [25,35): 0 again
  ASSERT_EQ(pccx_writer_event(w, 1, 26, 1, PCCX_EVENT_DMA_READ, nullptr), USCOPE_OK);   // [26,27): 2
  ASSERT_EQ(pccx_writer_event(w, 2, 30, 5, PCCX_EVENT_DMA_READ, nullptr), USCOPE_OK);   // [30,35): 1 (freed at 30)
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
  conv(d.file("t.pccx"), d.file("t.jsonl"));
  std::vector<std::pair<uint64_t, uint64_t>> starts;  // (t_cycle, channel) of each DMA_START
  std::istringstream in(read_all(d.file("t.jsonl")));
  for (std::string line; std::getline(in, line);) {
    if (line.find("DMA_START") == std::string::npos) continue;
    const size_t t = line.find("\"t_cycle\":"), c = line.find("\"channel\":");
    ASSERT_NE(c, std::string::npos) << line;
    starts.emplace_back(std::stoull(line.substr(t + 10)), std::stoull(line.substr(c + 10)));
  }
  const std::vector<std::pair<uint64_t, uint64_t>> want = {{10, 0}, {20, 1}, {25, 0}, {26, 2}, {30, 1}};
  EXPECT_EQ(starts, want);
  // The .uscope file takes them with nothing skipped, and gives them back.
  conv(d.file("t.pccx"), d.file("t.uscope"));
  conv(d.file("t.uscope"), d.file("t2.pccx"));
  EXPECT_EQ(read_pccx(d.file("t.pccx")).events, read_pccx(d.file("t2.pccx")).events);
}

// The whole matrix: from each of .pccx, .uscope, .jsonl and .jsonl.gz to each
// of them (the same format too), pccx-lab's trace comes back whole when the
// result is converted to .pccx again.
TEST(ConvertRoundTrip, EveryPairOfFormatsConverts) {
  TempDir d("rt");
  const std::string dummy = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";
  const PccxFile want = read_pccx(dummy);
  ASSERT_EQ(want.events.size(), 16008u);
  const char *const kExt[] = {"pccx", "uscope", "jsonl", "jsonl.gz"};
  for (const char *e : kExt) conv(dummy, d.file(std::string("in.") + e));
  // The gzip output is gzip (magic 1f 8b), and smaller than the plain JSONL.
  const std::string gz = read_all(d.file("in.jsonl.gz"));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), read_all(d.file("in.jsonl")).size());
  for (const char *from : kExt) {
    for (const char *to : kExt) {
      SCOPED_TRACE(std::string(from) + " -> " + to);
      const std::string out = d.file(std::string("out_") + from + "." + to);
      conv(d.file(std::string("in.") + from), out);
      conv(out, out + ".back.pccx");
      EXPECT_EQ(read_pccx(out + ".back.pccx"), want);
    }
  }
}

// A .pccx input whose payload no longer matches its checksum converts (as
// pccx-lab reads it: a warning), and says so in a note; strict refuses it.
TEST(ConvertRoundTrip, PccxChecksumMismatchIsANote) {
  TempDir d("rt");
  std::string bytes = read_all(std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx");
  uint64_t header = 0;
  std::memcpy(&header, bytes.data() + 8, 8);  // pccx-format.md: u64 JSON header length at offset 8
  bytes[16 + header + 16 + 4 + 1] ^= 1;       // the first bincode event's start_cycle (after the 16-byte prefix, core)
  write_all(d.file("bad.pccx"), bytes);
  std::vector<std::string> notes;
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  o.user = &notes;
  o.on_issue = [](void *u, uint64_t line, const char *why) {
    if (line == 0) static_cast<std::vector<std::string> *>(u)->emplace_back(why);
  };
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_convert(&st, d.file("bad.pccx").c_str(), 0, d.file("bad.jsonl").c_str(), 0, &o), USCOPE_OK)
      << uscope_last_error();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("checksum mismatch"), std::string::npos) << notes[0];
  o.strict = 1;
  EXPECT_EQ(uscope_convert(&st, d.file("bad.pccx").c_str(), 0, d.file("bad2.jsonl").c_str(), 0, &o),
            USCOPE_ERR_CHECKSUM);
}
