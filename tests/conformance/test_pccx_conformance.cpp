// The real pccx-lab file (COMPAT 19-23): dummy_trace.pccx reads with exactly
// its documented contents, its checksum verifies, and re-encoding its events
// with our writer reproduces its payload bytes exactly.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "pccx/pccx.h"
#include "uscope/convert.h"
#include "support/pccx_test_util.hpp"
#include "support/test_util.hpp"

using namespace uscope::test;

TEST(PccxConformance, DummyTraceContents) {
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, kPccxDummy.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK)
      << kPccxDummy << ": " << uscope_last_error();
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.major, 1u);
  EXPECT_EQ(h.minor, 1u);
  EXPECT_STREQ(h.pccx_lab_version, "v0.4.0-contention-aware");
  EXPECT_EQ(h.format_minor, 1u);
  EXPECT_EQ(h.mac_rows, 32u);
  EXPECT_EQ(h.mac_cols, 32u);
  EXPECT_STREQ(h.isa_version, "1.1");
  EXPECT_EQ(h.has_peak_tops, 1u);
  EXPECT_DOUBLE_EQ(h.peak_tops, 65.54);
  EXPECT_EQ(h.cycles, 5423940u);
  EXPECT_EQ(h.cores, 32u);
  EXPECT_EQ(h.clock_mhz, 1000u);
  EXPECT_EQ(h.encoding, uint32_t{PCCX_ENCODING_BINCODE});
  EXPECT_EQ(h.payload_bytes, 637295u);
  EXPECT_EQ(h.checksum_present, 1u);
  EXPECT_EQ(h.checksum, 13668806591801049621ull);  // above 2^53: parsed exactly
  EXPECT_EQ(h.computed_checksum, h.checksum);
  EXPECT_EQ(h.checksum_status, uint32_t{PCCX_CHECKSUM_OK});
  EXPECT_EQ(h.total_cycles, 5423940u);
  EXPECT_EQ(h.num_events, 16008u);
  EXPECT_EQ(h.num_api_names, 8u);
  ASSERT_EQ(pccx_reader_event_count(r), 16008u);

  std::map<std::string, uint64_t> by_type;
  uint64_t api = 0, max_end = 0;
  uint32_t max_core = 0;
  for (uint64_t i = 0; i < 16008; ++i) {
    pccx_event_t e{};
    ASSERT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    ++by_type[e.type_name];
    EXPECT_STREQ(e.type_name, pccx_event_type_name(e.type_id));
    if (e.api_name) {
      ++api;
      EXPECT_EQ(e.type_id, uint32_t{PCCX_EVENT_API_CALL});
      EXPECT_EQ(std::string(e.api_name).rfind("uca_", 0), 0u) << e.api_name;
    }
    max_end = std::max(max_end, e.start_cycle + e.duration);
    max_core = std::max(max_core, e.core_id);
  }
  EXPECT_EQ(api, 8u);
  EXPECT_EQ(by_type.size(), 6u);
  EXPECT_EQ(by_type["API_CALL"], 8u);
  for (const char *t : {"MAC_COMPUTE", "DMA_READ", "DMA_WRITE", "SYSTOLIC_STALL", "BARRIER_SYNC"})
    EXPECT_EQ(by_type[t], 3200u) << t;
  EXPECT_LE(max_end, 5423940u);
  EXPECT_LT(max_core, 32u);
  pccx_event_t first{};
  ASSERT_EQ(pccx_reader_event(r, &first, 0), USCOPE_OK);
  EXPECT_STREQ(first.api_name, "uca_init");
  pccx_event_t none{};
  EXPECT_EQ(pccx_reader_event(r, &none, 16008), USCOPE_ERR_NOT_FOUND);
  pccx_reader_close(r);
}

// Re-encode every event through the streaming writer (bincode) and compare
// payload bytes, and the JSON header's fields with the original's.
TEST(PccxConformance, DummyTraceReencodesByteExact) {
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, kPccxDummy.c_str(), 0), USCOPE_OK) << uscope_last_error();
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  TempDir dir("pccx_conf");
  const std::string out = dir.file("re.pccx");
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.pccx_lab_version = h.pccx_lab_version;
  o.isa_version = h.isa_version;
  o.mac_rows = h.mac_rows;
  o.mac_cols = h.mac_cols;
  o.peak_tops = h.peak_tops;
  o.cores = h.cores;
  o.clock_mhz = h.clock_mhz;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, out.c_str(), &o), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(pccx_writer_set_total_cycles(w, h.total_cycles), USCOPE_OK);
  for (uint64_t i = 0; i < pccx_reader_event_count(r); ++i) {
    pccx_event_t e{};
    ASSERT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    ASSERT_EQ(pccx_writer_event(w, e.core_id, e.start_cycle, e.duration, e.type_id, e.api_name), USCOPE_OK);
  }
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();

  pccx_reader_t *r2 = nullptr;
  ASSERT_EQ(pccx_reader_open(&r2, out.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  const uint8_t *p1, *p2;
  uint64_t n1, n2;
  ASSERT_EQ(pccx_reader_payload(r, &p1, &n1), USCOPE_OK);
  ASSERT_EQ(pccx_reader_payload(r2, &p2, &n2), USCOPE_OK);
  ASSERT_EQ(n1, n2);
  EXPECT_EQ(std::memcmp(p1, p2, n1), 0);
  pccx_header_t h2{};
  h2.struct_size = sizeof h2;
  ASSERT_EQ(pccx_reader_header(r2, &h2), USCOPE_OK);
  EXPECT_EQ(h2.checksum, h.checksum);
  EXPECT_EQ(h2.cycles, h.cycles);
  EXPECT_EQ(h2.cores, h.cores);
  EXPECT_DOUBLE_EQ(h2.peak_tops, h.peak_tops);
  EXPECT_STREQ(h2.pccx_lab_version, h.pccx_lab_version);
  // Same JSON text as pccx-lab's serde_json, apart from the trailing padding.
  size_t j1n, j2n;
  const char *j1 = pccx_reader_header_json(r, &j1n);
  const char *j2 = pccx_reader_header_json(r2, &j2n);
  std::string s2(j2, j2n);
  s2.erase(s2.find_last_not_of(' ') + 1);
  EXPECT_EQ(std::string(j1, j1n), s2);
  pccx_reader_close(r2);
  pccx_reader_close(r);
}

// pccx-lab's own trace through the converters (docs/convert.md "pccx →
// JSONL"): every event becomes JSONL, none is skipped — MAC_COMPUTE a TE
// pair, DMA_READ / DMA_WRITE a DMA pair, API_CALL a command whose phase is
// the call's name, SYSTOLIC_STALL and BARRIER_SYNC a WARN line that keeps
// type, duration and core — and the npu report counts its TE jobs.
TEST(PccxConformance, DummyTraceConvertsToJsonlWithNothingSkipped) {
  TempDir d("pccxconv");
  const std::string out = d.file("dummy.jsonl");
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_convert(&st, kPccxDummy.c_str(), 0, out.c_str(), 0, nullptr), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(st.events_in, 16008u);
  EXPECT_EQ(st.skipped, 0u);
  std::ifstream f(out);
  std::map<std::string, uint64_t> types, warn_codes;
  std::set<std::string> phases;
  uint64_t lines = 0, cores_over_0 = 0;
  simdjson::dom::parser p;
  std::string meta;
  for (std::string line; std::getline(f, line); ++lines) {
    simdjson::dom::object o;
    ASSERT_EQ(p.parse(line).get(o), simdjson::SUCCESS) << line;
    const std::string type{std::string_view(o["event_type"])};
    if (type == "TRACE_META") {  // the header's fields (docs/convert.md "TRACE_META extensions")
      EXPECT_EQ(lines, 0u);
      meta = line;
      --lines;
      continue;
    }
    ++types[type];
    uint64_t core = 0;
    if (o["core_id"].get(core) == simdjson::SUCCESS && core > 0) ++cores_over_0;
    if (type == "WARN") {
      ++warn_codes[std::string(std::string_view(o["code"]))];
      EXPECT_EQ(std::string_view(o["component"]), "pccx");
      EXPECT_NE(std::string_view(o["msg"]).find("cycle"), std::string_view::npos) << line;
    }
    if (type == "CMD_START") phases.insert(std::string(std::string_view(o["phase"])));
  }
  EXPECT_EQ(lines, st.events_out);
  EXPECT_NE(meta.find("\"mac_dims\":[32,32]"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"cores\":32"), std::string::npos) << meta;
  const std::map<std::string, uint64_t> want{{"TE_START", 3200}, {"TE_END", 3200},   {"DMA_START", 6400},
                                             {"DMA_END", 6400},  {"CMD_START", 8},    {"CMD_END", 8},
                                             {"WARN", 6400}};
  EXPECT_EQ(types, want);
  EXPECT_EQ(warn_codes, (std::map<std::string, uint64_t>{{"SYSTOLIC_STALL", 3200}, {"BARRIER_SYNC", 3200}}));
  EXPECT_EQ(phases.size(), 8u);  // 8 API calls, each its own name
  EXPECT_GT(cores_over_0, 0u);   // 32 cores: core ids are kept

  char *text = nullptr;
  ASSERT_EQ(uscope_convert_npu_report(&text, nullptr, kPccxDummy.c_str(), 0, nullptr, 1), USCOPE_OK)
      << uscope_last_error();
  const std::string rep(text);
  uscope_convert_free(text);
  EXPECT_NE(rep.find("\"te_utilization\":{\"jobs\":3200,"), std::string::npos) << rep;
  EXPECT_NE(rep.find("\"commands\":1,"), std::string::npos) << rep;  // per-phase: one call each
}
