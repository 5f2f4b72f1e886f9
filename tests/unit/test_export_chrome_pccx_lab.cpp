// chrome-json in pccx-lab's layout (export.h USCOPE_CHROME_PCCX_LAB, the
// default on a .pccx; src/export/chrome_json_pccx_lab.cpp): the same bytes as
// pccx-lab's own exporter.
//
// The oracle: pccx-lab's crates/core/src/chrome_trace.rs (write_chrome_trace,
// github.com/pccxai/pccx-lab at 3c99706, unmodified), compiled with rustc
// outside this project and fed each file's events in file order (core,
// start, duration, type name, as pccx_reader_event returns them). Its output
// for the shared conformance file dummy_trace.pccx is 2,387,823 bytes with the
// SHA-256 below; for the small file of SmallFileAsPccxLabWritesIt it is the
// literal there.
#include <gtest/gtest.h>
#include <pccx/pccx.h>
#include <uscope/convert.h>
#include <uscope/export.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "support/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using uscope::test::read_all;
using uscope::test::TempDir;

const std::string kDummy = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";

std::string sha256(const std::string &path) {
  std::string out;
  if (FILE *p = popen(("sha256sum '" + path + "'").c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return out.substr(0, out.find(' '));
}

uscope_status_t export_chrome(const std::string &in, const std::string &out, uint32_t style,
                              uscope_export_stats_t *st = nullptr, uint64_t a = 0, uint64_t b = UINT64_MAX) {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_CHROME_JSON;
  o.chrome_style = style;
  o.range_start = a;
  o.range_end = b;
  return uscope_export(st, in.c_str(), out.c_str(), &o);
}

TEST(ChromeJsonPccxLab, TheConformanceFileGivesPccxLabsOwnBytes) {
  TempDir d("pccx_lab_dummy");
  for (uint32_t style : {USCOPE_CHROME_AUTO, USCOPE_CHROME_PCCX_LAB}) {
    const std::string out = d.file("dummy" + std::to_string(style) + ".json");
    uscope_export_stats_t st{};
    st.struct_size = sizeof st;
    ASSERT_EQ(export_chrome(kDummy, out, style, &st), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(fs::file_size(out), 2387823u);
    EXPECT_EQ(sha256(out), "8e9d5ede228e5fe6eb0fa100086a4332c79c71f9f6ad345a8ed71421790b791b");
    EXPECT_EQ(st.records, 16008u);
    EXPECT_EQ(st.bytes_out, 2387823u);
  }
  // Asked for, our own layout is something else (an object with traceEvents).
  const std::string ours = d.file("ours.json");
  ASSERT_EQ(export_chrome(kDummy, ours, USCOPE_CHROME_USCOPE), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(read_all(ours).rfind("{", 0), 0u);
}

// Events out of start order, durations below, at and above 200 cycles, every
// type, both encodings: pccx-lab keeps the file's order, rounds down, and
// gives at least 1 microsecond.
void write_small(const std::string &path, uint32_t encoding) {
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.encoding = encoding;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
  struct E {
    uint32_t core;
    uint64_t start, dur;
    uint32_t type;
  } ev[] = {{1, 1000, 400, PCCX_EVENT_MAC_COMPUTE}, {0, 0, 199, PCCX_EVENT_DMA_READ},
            {2, 399, 200, PCCX_EVENT_DMA_WRITE},    {0, 5000, 0, PCCX_EVENT_SYSTOLIC_STALL},
            {3, 200, 601, PCCX_EVENT_BARRIER_SYNC}, {0, 7, 1, PCCX_EVENT_API_CALL},
            {1, 12345678, 98765, PCCX_EVENT_UNKNOWN}};
  for (const E &e : ev)
    ASSERT_EQ(pccx_writer_event(w, e.core, e.start, e.dur, e.type, e.type == PCCX_EVENT_API_CALL ? "run" : nullptr),
              USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK);
}

const char *const kSmallAsPccxLabWritesIt =
    "[\n"
    "  {\"name\":\"MAC_COMPUTE\",\"cat\":\"mac\",\"ph\":\"X\",\"ts\":5,\"dur\":2,\"pid\":1,\"tid\":1,\"args\":{\"core_id\":1,\"start_cycle\":1000,\"duration_cycles\":400}},\n"
    "  {\"name\":\"DMA_READ\",\"cat\":\"dma\",\"ph\":\"X\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":0,\"args\":{\"core_id\":0,\"start_cycle\":0,\"duration_cycles\":199}},\n"
    "  {\"name\":\"DMA_WRITE\",\"cat\":\"dma\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":2,\"args\":{\"core_id\":2,\"start_cycle\":399,\"duration_cycles\":200}},\n"
    "  {\"name\":\"SYSTOLIC_STALL\",\"cat\":\"stall\",\"ph\":\"X\",\"ts\":25,\"dur\":1,\"pid\":1,\"tid\":0,\"args\":{\"core_id\":0,\"start_cycle\":5000,\"duration_cycles\":0}},\n"
    "  {\"name\":\"BARRIER_SYNC\",\"cat\":\"sync\",\"ph\":\"X\",\"ts\":1,\"dur\":3,\"pid\":1,\"tid\":3,\"args\":{\"core_id\":3,\"start_cycle\":200,\"duration_cycles\":601}},\n"
    "  {\"name\":\"API_CALL\",\"cat\":\"other\",\"ph\":\"X\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":0,\"args\":{\"core_id\":0,\"start_cycle\":7,\"duration_cycles\":1}},\n"
    "  {\"name\":\"UNKNOWN\",\"cat\":\"other\",\"ph\":\"X\",\"ts\":61728,\"dur\":493,\"pid\":1,\"tid\":1,\"args\":{\"core_id\":1,\"start_cycle\":12345678,\"duration_cycles\":98765}}\n"
    "]\n";

TEST(ChromeJsonPccxLab, SmallFileAsPccxLabWritesIt) {
  TempDir d("pccx_lab_small");
  for (uint32_t enc : {PCCX_ENCODING_BINCODE, PCCX_ENCODING_FLATBUF}) {
    const std::string in = d.file("small" + std::to_string(enc) + ".pccx"), out = d.file("small.json");
    ASSERT_NO_FATAL_FAILURE(write_small(in, enc));
    ASSERT_EQ(export_chrome(in, out, USCOPE_CHROME_AUTO), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(read_all(out), kSmallAsPccxLabWritesIt) << "encoding " << enc;
  }
}

TEST(ChromeJsonPccxLab, RangeKeepsTheEventsThatMeetTheWindow) {
  TempDir d("pccx_lab_range");
  const std::string in = d.file("small.pccx"), out = d.file("w.json");
  ASSERT_NO_FATAL_FAILURE(write_small(in, PCCX_ENCODING_BINCODE));
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  // [399, 999]: DMA_WRITE (399..598) and BARRIER_SYNC (200..800) meet it;
  // MAC_COMPUTE starts at 1000, DMA_READ ends at 198.
  ASSERT_EQ(export_chrome(in, out, USCOPE_CHROME_PCCX_LAB, &st, 399, 999), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(st.records, 2u);
  const std::string s = read_all(out);
  EXPECT_NE(s.find("\"DMA_WRITE\""), std::string::npos);
  EXPECT_NE(s.find("\"BARRIER_SYNC\""), std::string::npos);
  EXPECT_EQ(s.find("\"MAC_COMPUTE\""), std::string::npos);
  EXPECT_EQ(s.rfind("[\n  {", 0), 0u);
  // A window with nothing in it is still pccx-lab's (empty) array.
  ASSERT_EQ(export_chrome(in, out, USCOPE_CHROME_PCCX_LAB, &st, 100000000, 100000001), USCOPE_OK);
  EXPECT_EQ(read_all(out), "[\n\n]\n");
  EXPECT_EQ(st.records, 0u);
}

TEST(ChromeJsonPccxLab, AnNpuTraceGivesWhatPccxLabShowsForItsPccx) {
  TempDir d("pccx_lab_npu");
  const std::string jsonl = std::string(USCOPE_FUZZ_CORPUS_DIR) + "/jsonl/spec_examples.jsonl";
  const std::string us = d.file("npu.uscope"), pccx = d.file("npu.pccx");
  ASSERT_EQ(uscope_convert(nullptr, jsonl.c_str(), USCOPE_CONVERT_AUTO, us.c_str(), USCOPE_CONVERT_AUTO, nullptr),
            USCOPE_OK)
      << uscope_last_error();
  ASSERT_EQ(uscope_convert(nullptr, us.c_str(), USCOPE_CONVERT_AUTO, pccx.c_str(), USCOPE_CONVERT_AUTO, nullptr),
            USCOPE_OK)
      << uscope_last_error();
  const std::string from_pccx = d.file("a.json"), from_uscope = d.file("b.json"), from_jsonl = d.file("c.json");
  ASSERT_EQ(export_chrome(pccx, from_pccx, USCOPE_CHROME_AUTO), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(export_chrome(us, from_uscope, USCOPE_CHROME_PCCX_LAB), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(export_chrome(jsonl, from_jsonl, USCOPE_CHROME_PCCX_LAB), USCOPE_OK) << uscope_last_error();
  const std::string want = read_all(from_pccx);
  EXPECT_GT(want.size(), 100u);
  EXPECT_EQ(read_all(from_uscope), want);
  EXPECT_EQ(read_all(from_jsonl), want);
  // The intermediate .pccx beside the output is gone.
  for (const auto &e : fs::directory_iterator(d.path()))
    EXPECT_EQ(e.path().filename().string().find(".uscope-export"), std::string::npos) << e.path();
  // A µScope trace without npu events has nothing for pccx-lab's layout.
  const std::string cpu = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/20_konata_sample.uscope";
  EXPECT_NE(export_chrome(cpu, d.file("cpu.json"), USCOPE_CHROME_PCCX_LAB), USCOPE_OK);
  EXPECT_NE(std::string(uscope_last_error()).find("pccx-lab's layout"), std::string::npos) << uscope_last_error();
  EXPECT_FALSE(fs::exists(d.file("cpu.json")));
}

TEST(ChromeJsonPccxLab, BadStyleIsRefused) {
  TempDir d("pccx_lab_bad");
  EXPECT_EQ(export_chrome(kDummy, d.file("x.json"), 3), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("chrome_style 3"), std::string::npos);
}

}  // namespace
