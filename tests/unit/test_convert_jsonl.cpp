// The NPU JSONL converters (include/uscope/convert.h, docs/convert.md):
// round trips jsonl -> uscope -> jsonl (exact, canonical form) and
// jsonl -> pccx -> jsonl (what pccx keeps), hostile lines, strict vs
// lenient, gzip (whole and truncated), long lines, out-of-order input.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/convert.h"

namespace {

using uscope::test::TempDir;

// npu-trace-jsonl.md §4 examples (as in test_protocol_npu.cpp), a
// TRACE_META line, and lines with every meta / LLM key, nulls and sim_id.
const char *const kSpec[] = {
    R"({"event_type": "TRACE_META", "version": "1.0", "sim_config": {"te_tflops": 64, "sram_size": 8388608}, "sim_version": "3.2"})",
    R"({"event_type": "CMD_ENQUEUE", "t_cycle": 100, "sim_id": "run1", "cmd_id": 42, "cmd_type": "MATMUL", "source": "ISA", "token": 10, "desc_addr": 140737488355328, "layer_id": 3, "block_id": 3, "phase": "QKV_PROJ", "model_name": "llama2_7b"})",
    R"({"event_type": "CMD_START", "t_cycle": 150, "sim_id": "run1", "cmd_id": 42})",
    R"({"event_type": "JOB_ISSUE", "t_cycle": 200, "sim_id": "run1", "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "tile_id": 5, "vec_chunk_id": null, "phase": "QKV_PROJ"})",
    R"({"event_type": "DMA_START", "t_cycle": 210, "sim_id": "run1", "tx_id": 500, "channel": 0, "direction": "DRAM_TO_SRAM", "src_addr": 140737488355328, "dst_addr": 4096, "size_bytes": 65536, "cmd_id": 42, "job_id": 1001, "phase": "QKV_PROJ"})",
    R"({"event_type": "NOC_TX_START", "t_cycle": 218, "sim_id": "run1", "tx_id": 500, "link_id": 0, "size_bytes": 65536, "cmd_id": 42})",
    R"({"event_type": "DRAM_TX_START", "t_cycle": 220, "sim_id": "run1", "tx_id": 500, "channel": 1, "size_bytes": 65536, "cmd_id": 42})",
    R"({"event_type": "TE_START", "t_cycle": 230, "sim_id": "run1", "job_id": 1001, "cmd_id": 42, "m": 128, "n": 128, "k": 256, "tile_m": 64, "tile_n": 64, "tile_k": 64, "phase": "QKV_PROJ"})",
    R"({"event_type": "SRAM_ACCESS", "t_cycle": 235, "sim_id": "run1", "addr": 8192, "bank_id": 1, "access_type": "READ", "by": "TE", "conflict": false, "cmd_id": 42, "job_id": 1001})",
    R"({"event_type": "SRAM_CONFLICT", "t_cycle": 236, "sim_id": "run1", "bank_id": 1, "num_requests": 3, "allowed": 1, "stalled_clients": ["VE", "DMA"], "cmd_id": 42})",
    R"({"event_type": "NOC_TX_END", "t_cycle": 258, "sim_id": "run1", "tx_id": 500, "link_id": 0})",
    R"({"event_type": "DMA_END", "t_cycle": 260, "sim_id": "run1", "tx_id": 500, "channel": 0, "cmd_id": 42, "job_id": 1001})",
    R"({"event_type": "DRAM_TX_END", "t_cycle": 260, "sim_id": "run1", "tx_id": 500, "channel": 1})",
    R"({"event_type": "JOB_DONE", "t_cycle": 260, "sim_id": "run1", "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "latency_cycles": 60})",
    R"({"event_type": "TE_END", "t_cycle": 280, "sim_id": "run1", "job_id": 1001, "cmd_id": 42, "mac_count": 4194304, "latency_cycles": 50})",
    R"({"event_type": "VE_START", "t_cycle": 300, "sim_id": "run1", "job_id": 1100, "cmd_id": 43, "op_type": "LAYERNORM", "len": 4096, "batch": 128, "phase": "LN1"})",
    R"({"event_type": "VE_END", "t_cycle": 340, "sim_id": "run1", "job_id": 1100, "cmd_id": 43, "latency_cycles": 40})",
    R"({"event_type": "TE_START", "t_cycle": 400, "sim_id": "run1", "core_id": 1, "npu_id": 0, "tenant_id": 2, "thread_id": 0, "job_id": 2001, "cmd_id": 44, "m": 64, "n": 64, "k": 64, "tile_m": 32, "tile_n": 32, "tile_k": 32, "phase": "ATTENTION_SCORE", "layer_id": 5, "head_id": 7, "token_idx": 11, "seq_len": 12, "precision": "BF16", "model_name": "llama2_7b"})",
    R"({"event_type": "TE_END", "t_cycle": 420, "sim_id": "run1", "core_id": 1, "npu_id": 0, "tenant_id": 2, "thread_id": 0, "job_id": 2001, "cmd_id": 44, "mac_count": 262144, "latency_cycles": 20, "phase": "ATTENTION_SCORE", "layer_id": 5, "head_id": 7, "token_idx": 11, "seq_len": 12, "precision": "BF16", "model_name": "llama2_7b"})",
    R"({"event_type": "WARN", "t_cycle": 700, "sim_id": "run1", "component": "TE", "code": "LOW_UTIL", "msg": "TE utilization below 50% in \"last\" 1000 cycles", "layer_id": 3, "block_id": null, "phase": null, "precision": ""})",
    R"({"event_type": "CMD_END", "t_cycle": 900, "sim_id": "run1", "cmd_id": 42, "status": "OK"})",
    R"({"event_type": "IRQ_EMIT", "t_cycle": 900, "sim_id": "run1", "cmd_id": 42, "token": 10, "irq_line": 3})",
    R"({"event_type": "TOKEN_COMPLETE", "t_cycle": 900, "sim_id": "run1", "token": 10, "cmd_id": 42, "status": "OK"})",
    R"({"event_type": "ERROR", "t_cycle": 905, "sim_id": "run1", "component": "DMA", "code": "ADDR_ALIGN", "msg": "unaligned DMA source address", "cmd_id": 42, "job_id": 1001})",
};

using uscope::test::read_all;
using uscope::test::write_all;
std::string spec_text() {
  std::string s;
  for (const char *l : kSpec) s += std::string(l) + "\n";
  return s;
}

// Key -> canonical JSON text, per line (key order does not matter).
using Obj = std::map<std::string, std::string>;
std::string canon(simdjson::dom::element e) {
  std::string out;
  switch (e.type()) {
    case simdjson::dom::element_type::STRING: return "\"" + std::string(std::string_view(e)) + "\"";
    case simdjson::dom::element_type::UINT64: return std::to_string(uint64_t(e));
    case simdjson::dom::element_type::INT64: return std::to_string(int64_t(e));
    case simdjson::dom::element_type::DOUBLE: return std::to_string(double(e));
    case simdjson::dom::element_type::BOOL: return bool(e) ? "true" : "false";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
    case simdjson::dom::element_type::ARRAY:
      out = "[";
      for (auto x : simdjson::dom::array(e)) out += canon(x) + ",";
      return out + "]";
    case simdjson::dom::element_type::OBJECT:
      out = "{";
      for (auto kv : simdjson::dom::object(e)) out += std::string(kv.key) + ":" + canon(kv.value) + ",";
      return out + "}";
  }
  return "?";
}
std::vector<Obj> parse_lines(const std::string &text) {
  std::vector<Obj> v;
  simdjson::dom::parser p;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Obj o;
    for (auto kv : simdjson::dom::object(p.parse(line))) o[std::string(kv.key)] = canon(kv.value);
    v.push_back(o);
  }
  return v;
}

struct ConvRun {
  uscope_status_t status;
  uscope_convert_stats_t stats;
  std::vector<std::pair<uint64_t, std::string>> issues;
  std::vector<std::string> notes;  // line 0: about the files, not a line (what a format cannot hold)
};
ConvRun convert(const std::string &in, const std::string &out, bool strict = false,
            void (*tweak)(uscope_convert_options_t *) = nullptr) {
  ConvRun r{};
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  o.strict = strict;
  o.user = &r;
  o.on_issue = [](void *u, uint64_t line, const char *why) {
    if (line == 0) static_cast<ConvRun *>(u)->notes.emplace_back(why);
    else static_cast<ConvRun *>(u)->issues.emplace_back(line, why);
  };
  if (tweak) tweak(&o);
  r.stats.struct_size = sizeof r.stats;
  r.status = uscope_convert(&r.stats, in.c_str(), 0, out.c_str(), 0, &o);
  return r;
}

TEST(ConvertJsonl, UscopeRoundTripIsExact) {
  TempDir d("conv");
  write_all(d.file("in.jsonl"), spec_text());
  ASSERT_EQ(convert(d.file("in.jsonl"), d.file("t.uscope")).status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(convert(d.file("t.uscope"), d.file("back.jsonl")).status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(convert(d.file("in.jsonl"), d.file("canon.jsonl")).status, USCOPE_OK) << uscope_last_error();
  // Byte for byte with the canonical form, and key for key with the input.
  EXPECT_EQ(read_all(d.file("back.jsonl")), read_all(d.file("canon.jsonl")));
  const auto orig = parse_lines(spec_text()), back = parse_lines(read_all(d.file("back.jsonl")));
  ASSERT_EQ(orig.size(), back.size());
  for (size_t i = 0; i < orig.size(); ++i) EXPECT_EQ(orig[i], back[i]) << "line " << i + 1;
}

TEST(ConvertJsonl, OutOfOrderLinesAreSortedWithinTheWindow) {
  TempDir d("conv");
  std::string text;
  for (size_t i = std::size(kSpec); i-- > 1;) text += std::string(kSpec[i]) + "\n";  // reversed
  write_all(d.file("rev.jsonl"), std::string(kSpec[0]) + "\n" + text);
  write_all(d.file("in.jsonl"), spec_text());
  ASSERT_EQ(convert(d.file("rev.jsonl"), d.file("t.uscope")).status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(convert(d.file("t.uscope"), d.file("back.jsonl")).status, USCOPE_OK);
  // Same events by time; lines of one cycle keep their (reversed) input order.
  auto key = [](const Obj &o) { return std::make_tuple(std::stoull(o.at("t_cycle")), o); };
  auto a = parse_lines(spec_text()), b = parse_lines(read_all(d.file("back.jsonl")));
  std::vector<decltype(key(a[0]))> ka, kb;
  for (auto &o : a)
    if (o.count("t_cycle")) ka.push_back(key(o));
  for (auto &o : b)
    if (o.count("t_cycle")) kb.push_back(key(o));
  std::sort(ka.begin(), ka.end());
  std::sort(kb.begin(), kb.end());
  EXPECT_EQ(ka, kb);
  // With a window of 2 lines, the reversed file is out of order: reported,
  // and more than 10 lines and 1% skipped fail the conversion (convert.h
  // max_skipped_ppm) unless the caller allows it.
  ConvRun f = convert(d.file("rev.jsonl"), d.file("t2.uscope"), false,
                      [](uscope_convert_options_t *o) { o->reorder_window = 2; });
  EXPECT_EQ(f.status, USCOPE_ERR_CORRUPT);
  EXPECT_NE(std::string(uscope_last_error()).find("more than the 1% allowed"), std::string::npos) << uscope_last_error();
  EXPECT_FALSE(std::ifstream(d.file("t2.uscope")).good());
  ConvRun r = convert(d.file("rev.jsonl"), d.file("t2.uscope"), false, [](uscope_convert_options_t *o) {
    o->reorder_window = 2;
    o->max_skipped_ppm = 1000000;
  });
  EXPECT_EQ(r.status, USCOPE_OK);
  EXPECT_GT(r.stats.skipped, 0u);
  ASSERT_FALSE(r.issues.empty());
  EXPECT_NE(r.issues[0].second.find("reorder window"), std::string::npos) << r.issues[0].second;
}

TEST(ConvertJsonl, PccxRoundTripKeepsWhatPccxHolds) {
  TempDir d("conv");
  write_all(d.file("in.jsonl"), spec_text());
  ASSERT_EQ(convert(d.file("in.jsonl"), d.file("t.pccx")).status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(convert(d.file("t.pccx"), d.file("back.jsonl")).status, USCOPE_OK) << uscope_last_error();
  // Kept: event_type and t_cycle of every line, CMD phase, DMA direction.
  using T = std::tuple<std::string, std::string, std::string>;
  std::multiset<T> want, got;
  for (const Obj &o : parse_lines(spec_text())) {
    if (o.at("event_type") == "\"TRACE_META\"") continue;
    std::string extra;
    if (o.at("event_type") == "\"DMA_START\"") extra = o.at("direction");
    want.insert({o.at("t_cycle"), o.at("event_type"), extra});
  }
  bool cmd_phase = false;
  for (const Obj &o : parse_lines(read_all(d.file("back.jsonl")))) {
    if (o.at("event_type") == "\"TRACE_META\"") continue;  // the pccx header (test ConvertRoundTrip.*)
    std::string extra;
    if (o.at("event_type") == "\"DMA_START\"") extra = o.at("direction");
    if (o.at("event_type") == "\"CMD_START\"") cmd_phase = o.count("phase") && o.at("phase") == "\"QKV_PROJ\"";
    got.insert({o.at("t_cycle"), o.at("event_type"), extra});
  }
  EXPECT_EQ(want, got);
  EXPECT_TRUE(cmd_phase);
}

// The writers' queue (options.queue_bytes) bounds memory only: with the
// smallest queues, which wrap hundreds of times here, the output is the same.
TEST(ConvertJsonl, SmallWriterQueueGivesTheSameOutput) {
  TempDir d("conv");
  std::string text = std::string(kSpec[0]) + "\n";
  char b[512];
  for (unsigned i = 0; i < 30000; ++i) {
    const unsigned long long t = 1000ull + 10ull * i;
    std::snprintf(b, sizeof b,
                  R"({"event_type": "TE_START", "t_cycle": %llu, "job_id": %u, "cmd_id": 7, "m": 64, "n": 64, "k": 64, "tile_m": 32, "tile_n": 32, "tile_k": 32, "layer_id": %u})"
                  "\n"
                  R"({"event_type": "SRAM_ACCESS", "t_cycle": %llu, "addr": %u, "bank_id": %u, "access_type": "READ", "by": "TE", "conflict": %s})"
                  "\n"
                  R"({"event_type": "TE_END", "t_cycle": %llu, "job_id": %u, "cmd_id": 7, "mac_count": 262144, "latency_cycles": 8})"
                  "\n",
                  t, i, i % 32, t + 1, 64 * i, i % 16, i % 7 ? "false" : "true", t + 8, i);
    text += b;
  }
  write_all(d.file("in.jsonl"), text);
  auto small = [](uscope_convert_options_t *o) { o->queue_bytes = 1; };  // raised to each writer's minimum
  for (const char *ext : {".uscope", ".pccx"}) {
    SCOPED_TRACE(ext);
    const std::string a = d.file(std::string("default") + ext), c = d.file(std::string("small") + ext);
    ConvRun r1 = convert(d.file("in.jsonl"), a), r2 = convert(d.file("in.jsonl"), c, false, small);
    ASSERT_EQ(r1.status, USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(r2.status, USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(r1.stats.skipped, 0u);
    EXPECT_EQ(r2.stats.events_out, r1.stats.events_out);
    ASSERT_EQ(convert(a, a + ".jsonl").status, USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(convert(c, c + ".jsonl").status, USCOPE_OK) << uscope_last_error();
    const std::string ja = read_all(a + ".jsonl"), jc = read_all(c + ".jsonl");
    EXPECT_GT(ja.size(), 2u << 20);  // several MB through a 64 KiB / 256 KiB queue
    EXPECT_TRUE(ja == jc) << "the outputs differ";
  }
  // The .pccx output is deterministic: the same bytes whatever the queue.
  EXPECT_TRUE(read_all(d.file("default.pccx")) == read_all(d.file("small.pccx")));
}

// A small file's conversions and report touch little memory: the reorder
// window's slots are made as lines arrive (all 65,537 were zeroed up front,
// ~29 MB whatever the input), and the writers' queues are sized from the
// input (their 8 / 16 MiB defaults are pre-faulted at open). Measured in a
// forked child as the growth of its peak RSS over the calls, all with the
// default options: ~4.5 MB; 35 MB with the window zeroed up front; more with
// the queues' defaults (16 MiB leaves room for a sanitizer's shadow memory).
#if defined(__SANITIZE_ADDRESS__)
// ASan keeps every freed block in its quarantine (256 MB by default), so the
// child's peak RSS counts all bytes allocated over the four calls, with
// their shadow, not the most live at once: ~30 MB here. The window zeroed up
// front would add its 29 MB to that.
constexpr long kLimitKb = 48 * 1024;
#else
constexpr long kLimitKb = 16 * 1024;
#endif

TEST(ConvertJsonl, ASmallFileTouchesLittleMemory) {
  TempDir d("conv");
  write_all(d.file("in.jsonl"), std::string(kSpec[0]) + "\n" + kSpec[1] + "\n");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    bool ok = true;
    for (const char *ext : {".uscope", ".pccx", ".out.jsonl"})
      ok &= convert(d.file("in.jsonl"), d.file(std::string("out") + ext)).status == USCOPE_OK;
    char *text = nullptr;
    ok &= uscope_convert_npu_report(&text, nullptr, d.file("in.jsonl").c_str(), 0, nullptr, 0) == USCOPE_OK;
    uscope_convert_free(text);
    ::getrusage(RUSAGE_SELF, &after);
    const long grew_kb = after.ru_maxrss - before.ru_maxrss;
    std::fprintf(stderr, "peak RSS grew by %ld KiB\n", grew_kb);
    ::_exit(!ok ? 2 : grew_kb < kLimitKb ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died";
  EXPECT_NE(WEXITSTATUS(status), 2) << "a conversion failed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "more than " << kLimitKb / 1024
                                    << " MiB touched for a 2-line file (see the child's stderr)";
}

TEST(ConvertJsonl, HostileLinesAreReportedWithLineNumbers) {
  TempDir d("conv");
  const std::string big(3u << 20, 'x');  // a 3 MB string value: accepted
  std::string text = std::string(kSpec[1]) + "\n" +               // 1 ok
                     "{not json\n" +                               // 2 bad JSON
                     R"({"t_cycle": 5})" "\n" +                    // 3 missing event_type
                     R"({"event_type": "TE_START"})" "\n" +        // 4 missing t_cycle
                     R"({"event_type": "TE_START", "t_cycle": "7"})" "\n" +  // 5 wrong type
                     R"({"event_type": "FOO", "t_cycle": 7})" "\n" +         // 6 unknown type
                     R"({"event_type": "TE_START", "t_cycle": 7, "job_id": -1})" "\n" +  // 7 negative
                     R"({"event_type": "TE_START", "t_cycle": 7, "bogus": 1})" "\n" +    // 8 unknown key
                     R"({"event_type": "TE_START", "t_cycle": 7, "op_type": "X"})" "\n" +  // 9 not its field
                     R"({"event_type": "WARN", "t_cycle": 8, "sim_id": "run1", "msg": ")" + big + "\"}\n" +  // 10 ok, 3 MB
                     R"({"event_type": "TE_START", "t_cycle": 9, "job_id": 1} trailing)" "\n" +  // 11 trailing
                     "\n" +                                                                    // 12 blank
                     R"({"event_type": "TE_END", "t_cycle": 10, "sim_id": "run1", "job_id": 4294967295})" "\n";  // 13 sentinel
  write_all(d.file("bad.jsonl"), text);
  ConvRun r = convert(d.file("bad.jsonl"), d.file("t.uscope"));
  ASSERT_EQ(r.status, USCOPE_OK) << uscope_last_error();
  std::vector<uint64_t> lines;
  for (auto &i : r.issues) lines.push_back(i.first);
  EXPECT_EQ(lines, (std::vector<uint64_t>{2, 3, 4, 5, 6, 7, 8, 9, 11, 13}));
  EXPECT_EQ(r.stats.skipped, 10u);
  EXPECT_EQ(r.stats.events_out, 2u);
  EXPECT_EQ(r.stats.blank_lines, 1u);
  auto has = [&](size_t i, const char *s) { return r.issues[i].second.find(s) != std::string::npos; };
  EXPECT_TRUE(has(0, "bad JSON"));
  EXPECT_TRUE(has(1, "missing field \"event_type\""));
  EXPECT_TRUE(has(2, "missing field \"t_cycle\""));
  EXPECT_TRUE(has(3, "wrong type"));
  EXPECT_TRUE(has(4, "unknown event type"));
  EXPECT_TRUE(has(5, "wrong type"));
  EXPECT_TRUE(has(6, "unknown key"));
  EXPECT_TRUE(has(7, "not a field of TE_START"));
  EXPECT_TRUE(has(8, "bad JSON"));  // simdjson sees the trailing token
  EXPECT_TRUE(has(9, "out of range"));
  // Strict: stops at line 2.
  ConvRun s = convert(d.file("bad.jsonl"), d.file("s.uscope"), true);
  EXPECT_EQ(s.status, USCOPE_ERR_CORRUPT);
  EXPECT_NE(std::string(uscope_last_error()).find("line 2:"), std::string::npos) << uscope_last_error();
  EXPECT_EQ(s.stats.skipped, 1u);
}

TEST(ConvertJsonl, LineLongerThanTheLimitFailsCleanly) {
  TempDir d("conv");
  const std::string huge = R"({"event_type": "WARN", "t_cycle": 8, "msg": ")" + std::string(5u << 20, 'y') + "\"}\n";
  write_all(d.file("long.jsonl"), huge + R"({"event_type": "CMD_START", "t_cycle": 9, "cmd_id": 1})" "\n");
  auto small = [](uscope_convert_options_t *o) { o->max_line_bytes = 1u << 20; };
  ConvRun r = convert(d.file("long.jsonl"), d.file("t.pccx"), false, small);
  ASSERT_EQ(r.status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].first, 1u);
  EXPECT_NE(r.issues[0].second.find("maximum"), std::string::npos);
  EXPECT_EQ(r.stats.events_in, 1u);  // line 2 still read
  ConvRun s = convert(d.file("long.jsonl"), d.file("s.pccx"), true, small);
  EXPECT_EQ(s.status, USCOPE_ERR_LIMIT);
}

TEST(ConvertJsonl, GzipInputAndTruncatedGzip) {
  TempDir d("conv");
  const std::string text = spec_text();
  gzFile g = gzopen(d.file("in.jsonl.gz").c_str(), "wb");
  gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
  gzclose(g);
  write_all(d.file("in.jsonl"), text);
  ASSERT_EQ(convert(d.file("in.jsonl.gz"), d.file("gz.jsonl")).status, USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(convert(d.file("in.jsonl"), d.file("plain.jsonl")).status, USCOPE_OK);
  EXPECT_EQ(read_all(d.file("gz.jsonl")), read_all(d.file("plain.jsonl")));
  // Written as gzip too, by the .gz name.
  ASSERT_EQ(convert(d.file("in.jsonl"), d.file("out.jsonl.gz")).status, USCOPE_OK);
  ASSERT_EQ(convert(d.file("out.jsonl.gz"), d.file("again.jsonl")).status, USCOPE_OK);
  EXPECT_EQ(read_all(d.file("again.jsonl")), read_all(d.file("plain.jsonl")));
  const std::string gz = read_all(d.file("in.jsonl.gz"));
  write_all(d.file("cut.jsonl.gz"), gz.substr(0, gz.size() * 2 / 3));
  ConvRun r = convert(d.file("cut.jsonl.gz"), d.file("cut.uscope"));
  EXPECT_EQ(r.status, USCOPE_ERR_TRUNCATED);
  EXPECT_NE(std::string(uscope_last_error()).find("truncated"), std::string::npos) << uscope_last_error();
}

TEST(ConvertJsonl, UnrepresentableValuesAreIssuesForUscopeOnly) {
  TempDir d("conv");
  const std::string text = std::string(R"({"event_type": "CMD_END", "t_cycle": 1, "cmd_id": 1, "status": null})") + "\n" +
                           R"({"event_type": "SRAM_ACCESS", "t_cycle": 2, "addr": 1})" "\n" +   // no access_type
                           R"({"event_type": "CMD_START", "t_cycle": 3, "cmd_id": 1, "sim_id": "x"})" "\n";
  write_all(d.file("u.jsonl"), text);
  ConvRun r = convert(d.file("u.jsonl"), d.file("u.uscope"));
  ASSERT_EQ(r.status, USCOPE_OK);
  EXPECT_EQ(r.stats.skipped, 3u);  // null string, missing enum, sim_id on one line only
  ConvRun p = convert(d.file("u.jsonl"), d.file("u.pccx"));
  ASSERT_EQ(p.status, USCOPE_OK);
  EXPECT_EQ(p.stats.skipped, 0u);
}

}  // namespace
