// The MCP server (tools/mcp_server.hpp) in-process, on a small cpu trace the
// test writes with the public writer and cpu protocol API: the protocol
// (version negotiation, errors, notifications, a malformed line in the
// middle), every tool against what the C API answers for the same question,
// tool failures as isError results, and the size cap of an answer. Also the
// CLI's JSON writer, which every answer goes through.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "mcp_server.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"
#include "uscope/analysis.h"
#include "uscope/convert.h"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;
using uscope_cli::mcp::Server;
namespace dom = simdjson::dom;

// ── a small cpu trace ──

const char *const kStages[] = {"fetch", "decode", "execute", "retire"};
enum : uint8_t { kFetch, kDecode, kExecute, kRetire };
constexpr uint16_t kRob = 0, kIq = 1, kBpMisses = 1;
constexpr uint8_t kRobFull = 0, kIqFull = 1;  // the default stall reasons
const char *const kNote = "hot \"loop\"\tbody\\n";

// 8 instructions over 24 cycles of 1000 ps: e0..e3 fill the 4-slot ROB at
// cycles 3..6 (it is full there), e2 is flushed, entity 5 is used twice,
// stalls: rob_full x3, iq_full x1; an annotation with quotes, a tab and a
// backslash.
std::string write_cpu_trace(const TempDir &dir) {
  const std::string path = dir.file("cpu.uscope");
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uscope_field_t rob_extra[1] = {{"completed", USCOPE_FT_BOOL, 0, 0, 0}};
  uscope_cpu_buffer_def_t buffers[2] = {{"rob", 4, rob_extra, 1}, {"iq", 2, nullptr, 0}};
  const char *counters[1] = {"bp_misses"};
  uscope_cpu_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = "core0";
  cfg.parent_scope_id = 0;
  cfg.clock_id = USCOPE_CLOCK_INHERIT;
  cfg.isa = "RV64GC";
  cfg.stages = kStages;
  cfg.num_stages = 4;
  cfg.max_entities = 8;
  cfg.buffers = buffers;
  cfg.num_buffers = 2;
  cfg.counters = counters;
  cfg.num_counters = 1;
  uscope_cpu_t *cpu = nullptr;
  EXPECT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return path;
  auto ok = [&](uscope_status_t st) { EXPECT_EQ(st, USCOPE_OK) << uscope_writer_error(w); };
  for (uint64_t c = 0; c < 24; ++c) {
    ok(uscope_begin_cycle(w, c * 1000));
    // Fetch e0..e3 at cycles 0..3, e5 at 10 and again (a new instruction) at 16.
    if (c < 4) ok(uscope_cpu_fetch(w, cpu, static_cast<uint32_t>(c), 0x80000000u + 4 * c, 0x00000013u));
    if (c == 10 || c == 16) ok(uscope_cpu_fetch(w, cpu, 5, 0x80000100u + c, 0x00100093u));
    if (c >= 1 && c < 5) ok(uscope_cpu_stage_transition(w, cpu, static_cast<uint32_t>(c - 1), kDecode));
    if (c >= 3 && c < 7) ok(uscope_cpu_buffer_insert(w, cpu, kRob, static_cast<uint16_t>(c - 3), static_cast<uint32_t>(c - 3)));
    if (c == 4) ok(uscope_cpu_annotate(w, cpu, 1, kNote));
    if (c >= 4 && c < 7) ok(uscope_cpu_stall(w, cpu, kRobFull));
    if (c == 5) {
      ok(uscope_cpu_stage_transition(w, cpu, 0, kExecute));
      ok(uscope_cpu_buffer_insert(w, cpu, kIq, 0, 3));
      ok(uscope_cpu_stall(w, cpu, kIqFull));
    }
    if (c == 7) {
      ok(uscope_cpu_flush(w, cpu, 2, USCOPE_CPU_FLUSH_MISPREDICT));
      ok(uscope_cpu_buffer_remove(w, cpu, kRob, 2));
      ok(uscope_cpu_counter_add(w, cpu, kBpMisses, 1));
    }
    if (c == 8) {
      ok(uscope_cpu_stage_transition(w, cpu, 0, kRetire));
      ok(uscope_cpu_stage_transition(w, cpu, 1, kRetire));
    }
    if (c == 9) {
      ok(uscope_cpu_retire(w, cpu, 0));
      ok(uscope_cpu_retire(w, cpu, 1));
      ok(uscope_cpu_buffer_remove(w, cpu, kRob, 0));
      ok(uscope_cpu_buffer_remove(w, cpu, kRob, 1));
    }
    if (c == 12) ok(uscope_cpu_stage_transition(w, cpu, 5, kRetire));
    if (c == 13) ok(uscope_cpu_retire(w, cpu, 5));  // retire counts committed_insns itself
    ok(uscope_end_cycle(w));
  }
  ok(uscope_writer_close(w));
  uscope_cpu_free(cpu);
  return path;
}

// A trace with no cpu scope: one dense storage and one event type, `n` events.
std::string write_plain_trace(const TempDir &dir, int n) {
  const std::string path = dir.file("plain.uscope");
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uint16_t scope = 0;
  EXPECT_EQ(uscope_schema_add_scope(s, &scope, "top", 0, nullptr, 0), USCOPE_OK);
  const uscope_field_t f[] = {{"value", USCOPE_FT_U32, 0, 0, 0}};
  uint16_t ev = 0;
  EXPECT_EQ(uscope_schema_add_event(s, &ev, "tick", scope, f, 1), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w) return path;
  for (int c = 0; c < n; ++c) {
    EXPECT_EQ(uscope_begin_cycle(w, static_cast<uint64_t>(c) * 1000), USCOPE_OK);
    const uint32_t v = static_cast<uint32_t>(c);
    EXPECT_EQ(uscope_event(w, ev, &v, sizeof v), USCOPE_OK) << uscope_writer_error(w);
    EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  return path;
}

// A noc trace: one crossbar "xbar" (6 ports), 4 transactions issued at
// cycles 0..3 and completed at 10, 21, 32, 43 (latencies 10, 20, 30, 40) on
// pairs 0->4, 0->4, 1->5, 1->4; credits on port 4, two retries (no_credits,
// arb_lost) and a timeout of transaction 4; cycles 0..50.
std::string write_noc_trace(const TempDir &dir) {
  const std::string path = dir.file("noc.uscope");
  const char *const stages[] = {"issue", "route", "deliver"};
  uscope_schema_t *s = uscope::test::proto::base_schema(1000);
  const uscope_noc_config_t cfg = uscope::test::proto::noc_config("xbar", 0, "crossbar", stages, 3, 64, 6);
  uscope_noc_t *noc = nullptr;
  EXPECT_EQ(uscope_noc_declare(s, &noc, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  if (!w || !noc) return path;
  auto ok = [&](uscope_status_t st) { EXPECT_EQ(st, USCOPE_OK) << uscope_writer_error(w); };
  struct Txn {
    uint32_t id;
    uint64_t issue, done;
    uint16_t src, dst;
  };
  const Txn txns[] = {{1, 0, 10, 0, 4}, {2, 1, 21, 0, 4}, {3, 2, 32, 1, 5}, {4, 3, 43, 1, 4}};
  for (uint64_t c = 0; c <= 50; ++c) {
    ok(uscope_begin_cycle(w, c * 1000));
    for (const Txn &x : txns)
      if (x.done == c) ok(uscope_noc_complete(w, noc, x.id));
    for (const Txn &x : txns)
      if (x.issue == c) ok(uscope_noc_issue(w, noc, x.id, 0, 0x1000, 1, 3, x.src, x.dst));
    if (c == 1) ok(uscope_noc_link_credit(w, noc, 4, USCOPE_NOC_CREDIT_GRANT, 4));
    if (c == 2) ok(uscope_noc_link_credit(w, noc, 4, USCOPE_NOC_CREDIT_CONSUME, 1));
    if (c == 3) ok(uscope_noc_link_credit(w, noc, 4, USCOPE_NOC_CREDIT_CONSUME, 2));
    if (c == 5) ok(uscope_noc_retry(w, noc, 4, USCOPE_NOC_RETRY_NO_CREDITS));
    if (c == 6) ok(uscope_noc_retry(w, noc, 4, USCOPE_NOC_RETRY_ARB_LOST));
    if (c == 7) ok(uscope_noc_timeout(w, noc, 4, 4));
    ok(uscope_end_cycle(w));
  }
  ok(uscope_writer_close(w));
  uscope_noc_free(noc);
  return path;
}

// An npu workload (npu-trace JSONL) converted to .uscope by the library:
// three commands (latencies 20, 40, 10), two TE jobs, a VE job, a DMA and a
// DRAM transfer, SRAM accesses; cycles 0 .. 80.
std::string write_npu_trace(const TempDir &dir) {
  const std::string jsonl = dir.file("npu.jsonl"), path = dir.file("npu.uscope");
  {
    std::ofstream f(jsonl);
    f << R"({"event_type":"TRACE_META","version":"1.0"})" "\n"
      << R"({"event_type":"CMD_ENQUEUE","t_cycle":0,"cmd_id":0,"cmd_type":"MATMUL","source":"ISA","token":0,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"LOAD","model_name":"m"})" "\n"
      << R"({"event_type":"CMD_ENQUEUE","t_cycle":0,"cmd_id":1,"cmd_type":"MATMUL","source":"ISA","token":1,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"MLP","model_name":"m"})" "\n"
      << R"({"event_type":"CMD_START","t_cycle":10,"cmd_id":0,"core_id":0})" "\n"
      << R"({"event_type":"TE_START","t_cycle":10,"job_id":1,"cmd_id":0,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
      << R"({"event_type":"CMD_START","t_cycle":20,"cmd_id":1,"core_id":0})" "\n"
      << R"({"event_type":"DMA_START","t_cycle":20,"tx_id":1,"channel":0,"direction":"DRAM_TO_SRAM","src_addr":1,"dst_addr":2,"size_bytes":1024,"cmd_id":1,"job_id":9,"core_id":0})" "\n"
      << R"({"event_type":"DRAM_TX_START","t_cycle":22,"tx_id":2,"channel":1,"size_bytes":4096,"cmd_id":1})" "\n"
      << R"({"event_type":"SRAM_ACCESS","t_cycle":25,"addr":0,"bank_id":0,"access_type":"READ","by":"TE","conflict":false,"cmd_id":0,"job_id":1})" "\n"
      << R"({"event_type":"CMD_END","t_cycle":30,"cmd_id":0,"status":"OK","core_id":0})" "\n"
      << R"({"event_type":"TE_START","t_cycle":30,"job_id":2,"cmd_id":1,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"MLP","layer_id":0,"core_id":0})" "\n"
      << R"({"event_type":"DMA_END","t_cycle":35,"tx_id":1,"channel":0,"cmd_id":1,"job_id":9,"core_id":0})" "\n"
      << R"({"event_type":"TE_END","t_cycle":40,"job_id":1,"cmd_id":0,"mac_count":1,"latency_cycles":30,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
      << R"({"event_type":"DRAM_TX_END","t_cycle":44,"tx_id":2,"channel":1})" "\n"
      << R"({"event_type":"TE_END","t_cycle":50,"job_id":2,"cmd_id":1,"mac_count":1,"latency_cycles":20,"phase":"MLP","layer_id":0,"core_id":0})" "\n"
      << R"({"event_type":"CMD_ENQUEUE","t_cycle":50,"cmd_id":2,"cmd_type":"MATMUL","source":"ISA","token":2,"desc_addr":4096,"layer_id":1,"block_id":0,"phase":"MLP","model_name":"m"})" "\n"
      << R"({"event_type":"CMD_END","t_cycle":60,"cmd_id":1,"status":"OK","core_id":0})" "\n"
      << R"({"event_type":"CMD_START","t_cycle":70,"cmd_id":2,"core_id":0})" "\n"
      << R"({"event_type":"VE_START","t_cycle":70,"job_id":3,"cmd_id":2,"op_type":"SOFTMAX","len":4096,"batch":1,"phase":"MLP","layer_id":1})" "\n"
      << R"({"event_type":"SRAM_ACCESS","t_cycle":72,"addr":0,"bank_id":0,"access_type":"READ","by":"VE","conflict":true,"cmd_id":2,"job_id":3})" "\n"
      << R"({"event_type":"SRAM_CONFLICT","t_cycle":72,"bank_id":0,"num_requests":2,"allowed":1,"stalled_clients":["DMA"],"cmd_id":2})" "\n"
      << R"({"event_type":"VE_END","t_cycle":75,"job_id":3,"cmd_id":2,"latency_cycles":5,"phase":"MLP","layer_id":1})" "\n"
      << R"({"event_type":"CMD_END","t_cycle":80,"cmd_id":2,"status":"OK","core_id":0})" "\n";
  }
  EXPECT_EQ(uscope_convert(nullptr, jsonl.c_str(), USCOPE_CONVERT_AUTO, path.c_str(), USCOPE_CONVERT_AUTO, nullptr),
            USCOPE_OK)
      << uscope_last_error();
  return path;
}

// ── JSON-RPC in, parsed answers out ──

struct Reply {
  std::unique_ptr<dom::parser> parser = std::make_unique<dom::parser>();
  std::string text;
  dom::element doc;
  dom::element operator[](const char *k) const { return doc[k].value(); }
};
Reply parse(const std::string &text) {
  Reply r;
  r.text = text;
  const auto err = r.parser->parse(r.text).get(r.doc);
  EXPECT_EQ(err, simdjson::SUCCESS) << text;
  return r;
}

std::string request(int id, const std::string &method, const std::string &params) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}";
}

// A tools/call's result: its text parsed (the tool's answer), isError.
struct ToolReply {
  bool is_error = false;
  std::string text;
  Reply answer;  // the text parsed, when not an error
};
ToolReply call(Server &srv, const std::string &tool, const std::string &args) {
  static int id = 100;
  const Reply r = parse(srv.handle(request(++id, "tools/call", R"({"name":")" + tool + R"(","arguments":)" + args + "}")));
  ToolReply t;
  dom::element result;
  EXPECT_EQ(r.doc["result"].get(result), simdjson::SUCCESS) << r.text;
  if (result.is_null()) return t;
  EXPECT_EQ(result["isError"].get(t.is_error), simdjson::SUCCESS) << r.text;
  std::string_view text;
  EXPECT_EQ(result["content"].at(0)["text"].get(text), simdjson::SUCCESS) << r.text;
  t.text = std::string(text);
  std::string_view type;
  EXPECT_EQ(result["content"].at(0)["type"].get(type), simdjson::SUCCESS);
  EXPECT_EQ(type, "text");
  if (!t.is_error) {
    t.answer = parse(t.text);
    // structuredContent is the same object (2025-06-18).
    dom::element sc;
    EXPECT_EQ(result["structuredContent"].get(sc), simdjson::SUCCESS) << r.text;
    EXPECT_EQ(simdjson::minify(sc), simdjson::minify(t.answer.doc));
  }
  return t;
}

uint64_t u(dom::element e) {
  uint64_t v = ~0ull;
  EXPECT_EQ(e.get_uint64().get(v), simdjson::SUCCESS) << simdjson::minify(e);
  return v;
}
double d(dom::element e) {
  double v = -1;
  EXPECT_EQ(e.get_double().get(v), simdjson::SUCCESS) << simdjson::minify(e);
  return v;
}
std::string s(dom::element e) {
  std::string_view v;
  EXPECT_EQ(e.get_string().get(v), simdjson::SUCCESS) << simdjson::minify(e);
  return std::string(v);
}
size_t n(dom::element e) {
  dom::array a;
  EXPECT_EQ(e.get_array().get(a), simdjson::SUCCESS) << simdjson::minify(e);
  return a.size();
}
bool has(dom::element e, const char *k) { return e[k].error() == simdjson::SUCCESS; }

// The C API's view of the same trace, to compare the tools with.
struct Api {
  uscope_reader_t *r = nullptr;
  uscope_cpu_trace_t *t = nullptr;
  explicit Api(const std::string &path) {
    EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(uscope_cpu_trace_open(&t, r, nullptr), USCOPE_OK) << uscope_last_error();
  }
  ~Api() {
    uscope_cpu_trace_close(t);
    uscope_reader_close(r);
  }
  uscope_cpu_trace_info_t info() const {
    uscope_cpu_trace_info_t i{};
    i.struct_size = sizeof i;
    EXPECT_EQ(uscope_cpu_trace_info(t, &i), USCOPE_OK);
    return i;
  }
  uint64_t counter(uint32_t c, uint64_t cycle) const {
    uint64_t v = 0;
    EXPECT_EQ(uscope_cpu_trace_counter_value(t, &v, c, cycle), USCOPE_OK) << uscope_last_error();
    return v;
  }
};

class McpServer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.ok());
    path = write_cpu_trace(dir);
    ASSERT_FALSE(HasFailure());
    srv = std::make_unique<Server>(path);
  }
  TempDir dir{"uscope_mcp"};
  std::string path;
  std::unique_ptr<Server> srv;
};

// ── the protocol ──

TEST_F(McpServer, InitializeNegotiatesTheProtocolVersion) {
  for (const char *v : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    const Reply r = parse(srv->handle(request(1, "initialize", std::string(R"({"protocolVersion":")") + v +
                                                                    R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}})")));
    EXPECT_EQ(s(r["result"]["protocolVersion"]), v);
    EXPECT_EQ(u(r["id"]), 1u);
    EXPECT_EQ(s(r["jsonrpc"]), "2.0");
  }
  // A version we do not speak (newer or older): our latest.
  for (const char *v : {"2099-01-01", "2024-01-01"}) {
    const Reply r = parse(srv->handle(request(2, "initialize", std::string(R"({"protocolVersion":")") + v + "\"}")));
    EXPECT_EQ(s(r["result"]["protocolVersion"]), "2025-06-18");
  }
  const Reply r = parse(srv->handle(request(3, "initialize", R"({"protocolVersion":"2025-06-18"})")));
  EXPECT_TRUE(r["result"]["capabilities"]["tools"].is_object());
  EXPECT_EQ(s(r["result"]["serverInfo"]["name"]), "uscope-mcp");
  EXPECT_EQ(s(r["result"]["serverInfo"]["version"]), uscope_version_string());
  // A string id comes back as it was, escapes and all.
  const Reply p = parse(srv->handle(R"({"jsonrpc":"2.0","id":"a\"b","method":"ping"})"));
  EXPECT_EQ(s(p["id"]), "a\"b");
  EXPECT_TRUE(p["result"].is_object());
}

TEST_F(McpServer, ToolsListHasEveryToolWithItsSchema) {
  const Reply r = parse(srv->handle(request(1, "tools/list", "{}")));
  std::set<std::string> names;
  const dom::array tools = r["result"]["tools"].get_array().value();
  for (dom::element t : tools) {
    const std::string name = s(t["name"]);
    names.insert(name);
    EXPECT_FALSE(s(t["description"]).empty()) << name;
    dom::element schema = t["inputSchema"].value();
    EXPECT_EQ(s(schema["type"]), "object") << name;
    EXPECT_TRUE(t["annotations"]["readOnlyHint"].get_bool().value()) << name;
    dom::object props;
    ASSERT_EQ(schema["properties"].get(props), simdjson::SUCCESS) << name;
    const dom::array required = schema["required"].get_array().value();
    for (dom::element req : required)
      EXPECT_EQ(props[s(req)].error(), simdjson::SUCCESS) << name << " requires " << s(req) << " it does not describe";
  }
  EXPECT_EQ(names, (std::set<std::string>{"file_info", "state_at_cycle", "entity_timeline", "counter_values",
                                          "buffer_occupancy", "analyze_performance", "events_in_range", "find_stalls",
                                          "npu_summary", "noc_latency"}));
  EXPECT_EQ(names.size(), uscope_cli::mcp::tools().size());
}

TEST_F(McpServer, MalformedMessagesGetErrorsAndTheServerKeepsServing) {
  auto code = [](const Reply &r) {
    int64_t c = 0;
    EXPECT_EQ(r["error"]["code"].get(c), simdjson::SUCCESS) << r.text;
    return c;
  };
  const Reply bad = parse(srv->handle(R"({"jsonrpc":"2.0","id":1,"method":)"));
  EXPECT_EQ(code(bad), -32700);
  EXPECT_TRUE(bad["id"].is_null());
  // ... and the next request is answered.
  const Reply ok = parse(srv->handle(request(2, "ping", "{}")));
  EXPECT_TRUE(ok["result"].is_object()) << ok.text;
  EXPECT_EQ(code(parse(srv->handle("[1,2]"))), -32600);                                        // a batch
  EXPECT_EQ(code(parse(srv->handle(request(3, "ping", "{}").insert(0, "[") + "]"))), -32600);   // a batch
  EXPECT_EQ(code(parse(srv->handle("42"))), -32600);                                           // not an object
  const Reply nover = parse(srv->handle(R"({"id":4,"method":"ping"})"));
  EXPECT_EQ(code(nover), -32600);
  EXPECT_EQ(u(nover["id"]), 4u);
  EXPECT_EQ(code(parse(srv->handle(R"({"jsonrpc":"1.0","id":5,"method":"ping"})"))), -32600);
  EXPECT_EQ(code(parse(srv->handle(R"({"jsonrpc":"2.0","id":6})"))), -32600);                 // no method
  EXPECT_EQ(code(parse(srv->handle(R"({"jsonrpc":"2.0","id":{},"method":"ping"})"))), -32600); // a bad id
  EXPECT_EQ(code(parse(srv->handle(request(7, "resources/list", "{}")))), -32601);
  EXPECT_EQ(code(parse(srv->handle(request(8, "tools/call", "{}")))), -32602);                 // no tool name
  EXPECT_EQ(code(parse(srv->handle(request(9, "tools/call", R"({"name":"file_info","arguments":[1]})")))), -32602);
  EXPECT_EQ(srv->handle("   "), "");
}

TEST_F(McpServer, NotificationsGetNoAnswer) {
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"), "");
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})"), "");
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0","method":"no/such/method"})"), "");
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"file_info"}})"), "");
  // Without an id there is nothing to answer with, even when the message is malformed.
  EXPECT_EQ(srv->handle(R"({"method":"notifications/initialized"})"), "");
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0"})"), "");
  // A response (the server sends no requests) is not answered either.
  EXPECT_EQ(srv->handle(R"({"jsonrpc":"2.0","id":1,"result":{}})"), "");
}

TEST_F(McpServer, ServesLinesFromAStream) {
  std::istringstream in(request(1, "initialize", R"({"protocolVersion":"2024-11-05"})") + "\n" +
                        R"({"jsonrpc":"2.0","method":"notifications/initialized"})" + "\n\n" + "{oops\n" +
                        request(2, "tools/list", "{}") + "\r\n");
  std::ostringstream out;
  srv->serve(in, out);
  std::vector<std::string> lines;
  std::istringstream o(out.str());
  for (std::string l; std::getline(o, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_EQ(u(parse(lines[0])["id"]), 1u);
  EXPECT_TRUE(parse(lines[1])["id"].is_null());
  EXPECT_EQ(u(parse(lines[2])["id"]), 2u);
}

// ── tool failures are results with isError ──

TEST_F(McpServer, ToolFailuresAreErrorResults) {
  struct Case {
    const char *tool, *args, *says;
  };
  const Case cases[] = {
      {"no_such_tool", "{}", "unknown tool"},
      {"entity_timeline", R"({"entity_id":7})", "entity 7 not found"},  // in the catalog, never used
      {"entity_timeline", R"({"entity_id":4000000})", "core0.entities holds 8 entities"},  // past the catalog
      {"entity_timeline", R"({})", "missing 'entity_id'"},
      {"counter_values", R"({"counter":"nope","start_cycle":0,"end_cycle":5})", "committed_insns, bp_misses"},
      {"buffer_occupancy", R"({"buffer":"lsq","cycle":3})", "Available: rob, iq"},
      {"state_at_cycle", R"({"cycle":-1})", "invalid 'cycle'"},
      {"state_at_cycle", R"({"cycle":"3"})", "invalid 'cycle'"},
      {"state_at_cycle", R"({"cycle":2.5})", "invalid 'cycle'"},
      {"analyze_performance", R"({"start_cycle":9,"end_cycle":9})", "less than"},
      {"events_in_range", R"({"start_cycle":5,"end_cycle":2})", "at most"},
      {"events_in_range", R"({"start_cycle":0,"end_cycle":2,"event":"nope"})", "stage_transition"},
      {"events_in_range", R"({"start_cycle":0,"end_cycle":2,"limit":0})", "limit"},
      {"npu_summary", "{}", "this trace has no npu protocol scope"},
      {"noc_latency", "{}", "this trace has no noc protocol scope"},
      {"find_stalls", R"({"start_cycle":0,"end_cycle":20,"max_cycles":1000001})", "max_cycles"},
  };
  for (const Case &c : cases) {
    const ToolReply t = call(*srv, c.tool, c.args);
    EXPECT_TRUE(t.is_error) << c.tool << " " << c.args << ": " << t.text;
    EXPECT_NE(t.text.find(c.says), std::string::npos) << c.tool << " " << c.args << ": " << t.text;
  }
}

TEST_F(McpServer, ATraceWithoutACpuScope) {
  const std::string plain = write_plain_trace(dir, 10);
  Server p(plain);
  for (const char *tool : {"state_at_cycle", "entity_timeline", "counter_values", "buffer_occupancy",
                           "analyze_performance", "find_stalls"}) {
    const ToolReply t = call(p, tool, R"({"cycle":1,"entity_id":0,"counter":"x","buffer":"x","start_cycle":0,"end_cycle":5})");
    EXPECT_TRUE(t.is_error) << tool;
    EXPECT_NE(t.text.find("this trace has no cpu protocol scope"), std::string::npos) << tool << ": " << t.text;
  }
  const ToolReply info = call(p, "file_info", "{}");
  ASSERT_FALSE(info.is_error) << info.text;
  EXPECT_FALSE(info.answer["has_cpu_scope"].get_bool().value());
  EXPECT_EQ(n(info.answer["stage_names"]), 0u);
  EXPECT_EQ(u(info.answer["max_cycle"]), 9u);
  EXPECT_EQ(s(info.answer["schema"]["events"].at(0)["name"]), "tick");
  const ToolReply ev = call(p, "events_in_range", R"({"start_cycle":2,"end_cycle":4})");
  ASSERT_FALSE(ev.is_error) << ev.text;
  ASSERT_EQ(n(ev.answer["events"]), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    dom::element e = ev.answer["events"].at(i).value();
    EXPECT_EQ(u(e["cycle"]), 2 + i);
    EXPECT_EQ(u(e["event"]["time_ps"]), (2 + i) * 1000);
    EXPECT_EQ(s(e["event"]["type"]), "tick");
    EXPECT_EQ(u(e["event"]["fields"]["value"]), 2 + i);
  }
}

// ── each tool, against the C API ──

TEST_F(McpServer, FileInfoMatchesTheApi) {
  Api api(path);
  const auto info = api.info();
  const ToolReply t = call(*srv, "file_info", "{}");
  ASSERT_FALSE(t.is_error) << t.text;
  const Reply &a = t.answer;
  EXPECT_EQ(s(a["version"]), info.version);
  EXPECT_EQ(u(a["segment_count"]), info.segment_count);
  EXPECT_EQ(u(a["max_cycle"]), info.max_cycle);
  EXPECT_EQ(u(a["period_ps"]), 1000u);
  EXPECT_EQ(u(a["total_instructions"]), info.total_instructions);
  ASSERT_EQ(n(a["stage_names"]), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(s(a["stage_names"].at(i)), kStages[i]);
  ASSERT_EQ(n(a["counter_names"]), 2u);
  EXPECT_EQ(s(a["counter_names"].at(0)), "committed_insns");
  EXPECT_EQ(s(a["counter_names"].at(1)), "bp_misses");
  ASSERT_EQ(n(a["buffers"]), 2u);
  EXPECT_EQ(s(a["buffers"].at(0)["name"]), "rob");
  EXPECT_EQ(u(a["buffers"].at(0)["capacity"]), 4u);
  EXPECT_EQ(s(a["buffers"].at(0)["fields"].at(1)["name"]), "completed");
  EXPECT_EQ(s(a["buffers"].at(0)["fields"].at(1)["type"]), "bool");
  EXPECT_EQ(n(a["metadata"]), info.num_metadata);
  EXPECT_EQ(n(a["segments"]), info.segment_count);
  EXPECT_FALSE(a["truncated"].get_bool().value());
  EXPECT_TRUE(a["has_cpu_scope"].get_bool().value());
  EXPECT_EQ(s(a["cpu_scope"]), "core0");
  EXPECT_TRUE(has(a.doc, "schema"));
}

TEST_F(McpServer, StateAndBufferOccupancyMatchTheApi) {
  // Cycle 6: e0, e1, e2, e3 in the ROB (full), e3 in the IQ.
  const ToolReply st = call(*srv, "state_at_cycle", R"({"cycle":6})");
  ASSERT_FALSE(st.is_error) << st.text;
  EXPECT_EQ(u(st.answer["cycle"]), 6u);
  ASSERT_EQ(n(st.answer["buffers"]), 2u);
  Api api(path);
  uscope_buffer_state_t *bs = nullptr;
  ASSERT_EQ(uscope_cpu_trace_buffers_at(api.t, &bs, 6), USCOPE_OK) << uscope_last_error();
  for (uint32_t b = 0; b < 2; ++b) {
    uscope_buffer_fill_t f{};
    ASSERT_EQ(uscope_buffer_state_fill(bs, &f, b), USCOPE_OK);
    dom::element got = st.answer["buffers"].at(b).value();
    EXPECT_EQ(u(got["capacity"]), f.capacity);
    EXPECT_EQ(u(got["occupied"]), f.occupied);
    EXPECT_DOUBLE_EQ(d(got["fill_percent"]), f.fill_percent);
    ASSERT_EQ(n(got["slots"]), f.occupied);
    for (uint32_t i = 0; i < f.occupied; ++i) {
      uscope_buffer_slot_t sl{};
      ASSERT_EQ(uscope_buffer_state_slot(bs, &sl, b, i), USCOPE_OK);
      EXPECT_EQ(u(got["slots"].at(i)["slot"]), sl.slot);
      ASSERT_EQ(n(got["slots"].at(i)["fields"]), sl.num_fields);
      for (uint32_t k = 0; k < sl.num_fields; ++k) EXPECT_EQ(u(got["slots"].at(i)["fields"].at(k)), sl.fields[k]);
    }
  }
  uscope_buffer_state_free(bs);
  EXPECT_EQ(u(st.answer["buffers"].at(0)["occupied"]), 4u);  // what the trace wrote
  EXPECT_EQ(u(st.answer["buffers"].at(1)["occupied"]), 1u);

  const ToolReply bo = call(*srv, "buffer_occupancy", R"({"buffer":"rob","cycle":8})");
  ASSERT_FALSE(bo.is_error) << bo.text;
  ASSERT_EQ(n(bo.answer["buffers"]), 1u);
  EXPECT_EQ(s(bo.answer["buffers"].at(0)["name"]), "rob");
  EXPECT_EQ(u(bo.answer["buffers"].at(0)["occupied"]), 3u);  // e2 flushed at 7
  EXPECT_DOUBLE_EQ(d(bo.answer["buffers"].at(0)["fill_percent"]), 75.0);
  EXPECT_TRUE(bo.answer["buffers"].at(0)["pointer_pairs"].is_array());
  // A cycle past the end: the last state, with a warning.
  const ToolReply past = call(*srv, "buffer_occupancy", R"({"buffer":"r","cycle":1000000})");
  ASSERT_FALSE(past.is_error) << past.text;
  EXPECT_TRUE(has(past.answer.doc, "warning"));
}

TEST_F(McpServer, EntityTimelineMatchesTheApi) {
  Api api(path);
  for (uint32_t id : {0u, 2u, 5u}) {
    const ToolReply t = call(*srv, "entity_timeline", R"({"entity_id":)" + std::to_string(id) + "}");
    ASSERT_FALSE(t.is_error) << t.text;
    uscope_insn_iter_t *it = nullptr;
    ASSERT_EQ(uscope_cpu_trace_entity(api.t, &it, id, 0, UINT64_MAX), USCOPE_OK);
    uscope_insn_t in{};
    size_t i = 0;
    for (; uscope_insn_iter_next(it, &in) == USCOPE_OK; ++i) {
      dom::element got = t.answer["results"].at(i).value();
      EXPECT_EQ(u(got["entity_id"]), in.entity_id);
      EXPECT_EQ(u(got["sim_id"]), in.sim_id);
      EXPECT_EQ(u(got["pc"]), in.pc);
      EXPECT_EQ(s(got["disasm"]), in.disasm);
      EXPECT_EQ(u(got["first_cycle"]), in.first_cycle);
      EXPECT_EQ(u(got["last_cycle"]), in.last_cycle);
      EXPECT_EQ(u(got["total_latency"]), in.last_cycle - in.first_cycle);
      EXPECT_EQ(s(got["retire_status"]), in.status == USCOPE_INSN_RETIRED   ? "retired"
                                          : in.status == USCOPE_INSN_FLUSHED ? "flushed"
                                                                             : "in_flight");
      ASSERT_EQ(n(got["stages"]), in.num_stages);
      for (uint32_t k = 0; k < in.num_stages; ++k) {
        EXPECT_EQ(s(got["stages"].at(k)["name"]), kStages[in.stages[k].stage]);
        EXPECT_EQ(u(got["stages"].at(k)["start_cycle"]), in.stages[k].start_cycle);
        EXPECT_EQ(u(got["stages"].at(k)["end_cycle"]), in.stages[k].end_cycle);
      }
    }
    uscope_insn_iter_free(it);
    EXPECT_EQ(n(t.answer["results"]), i);
    EXPECT_EQ(u(t.answer["returned"]), i);
  }
  // What the trace wrote: entity 5 twice, entity 2 flushed (mispredict).
  EXPECT_EQ(n(call(*srv, "entity_timeline", R"({"entity_id":5})").answer["results"]), 2u);
  const ToolReply e2 = call(*srv, "entity_timeline", R"({"entity_id":2})");
  EXPECT_EQ(s(e2.answer["results"].at(0)["retire_status"]), "flushed");
  EXPECT_EQ(s(e2.answer["results"].at(0)["flush_reason"]), "mispredict");
  const ToolReply e1 = call(*srv, "entity_timeline", R"({"entity_id":1})");
  EXPECT_EQ(s(e1.answer["results"].at(0)["tooltip"]), kNote);  // escapes survive the round trip
  // Pagination: one at a time.
  const ToolReply p = call(*srv, "entity_timeline", R"({"entity_id":5,"limit":1})");
  EXPECT_EQ(n(p.answer["results"]), 1u);
  EXPECT_TRUE(p.answer["truncated"].get_bool().value());
  EXPECT_EQ(u(p.answer["next_offset"]), 1u);
  const ToolReply p2 = call(*srv, "entity_timeline", R"({"entity_id":5,"limit":1,"offset":1})");
  EXPECT_FALSE(p2.answer["truncated"].get_bool().value());
  EXPECT_EQ(u(p2.answer["results"].at(0)["first_cycle"]), 16u);
  // A window: only the second life of entity 5 (fetched at 16).
  const ToolReply w = call(*srv, "entity_timeline", R"({"entity_id":5,"start_cycle":15,"end_cycle":20})");
  ASSERT_FALSE(w.is_error) << w.text;
  ASSERT_EQ(n(w.answer["results"]), 1u);
  EXPECT_EQ(u(w.answer["results"].at(0)["first_cycle"]), 16u);
  EXPECT_TRUE(call(*srv, "entity_timeline", R"({"entity_id":0,"start_cycle":20,"end_cycle":21})").is_error);
}

TEST_F(McpServer, CounterValuesMatchTheApi) {
  Api api(path);
  const ToolReply t = call(*srv, "counter_values", R"({"counter":"insns","start_cycle":0,"end_cycle":20})");
  ASSERT_FALSE(t.is_error) << t.text;
  ASSERT_EQ(n(t.answer["counters"]), 1u);  // a substring: committed_insns
  dom::element c = t.answer["counters"].at(0).value();
  EXPECT_EQ(s(c["name"]), "committed_insns");
  ASSERT_EQ(n(c["values"]), 21u);
  for (uint64_t i = 0; i <= 20; ++i) {
    EXPECT_EQ(u(c["values"].at(i)["cycle"]), i);
    EXPECT_EQ(u(c["values"].at(i)["value"]), api.counter(0, i)) << "cycle " << i;
  }
  EXPECT_EQ(u(c["start_value"]), api.counter(0, 0));
  EXPECT_EQ(u(c["end_value"]), api.counter(0, 20));
  EXPECT_EQ(u(c["end_value"]), 3u);  // what the trace wrote
  EXPECT_EQ(u(c["delta"]), api.counter(0, 20) - api.counter(0, 0));
  EXPECT_DOUBLE_EQ(d(c["rate"]), static_cast<double>(api.counter(0, 20) - api.counter(0, 0)) / 20.0);
  // An exact name wins over substrings; a range past the end is clamped, with a warning.
  const ToolReply b = call(*srv, "counter_values", R"({"counter":"bp_misses","start_cycle":5,"end_cycle":999})");
  ASSERT_FALSE(b.is_error) << b.text;
  EXPECT_EQ(u(b.answer["end_cycle"]), api.info().max_cycle);
  EXPECT_TRUE(has(b.answer.doc, "warning"));
  EXPECT_EQ(u(b.answer["counters"].at(0)["end_value"]), 1u);
}

TEST_F(McpServer, AnalyzePerformanceMatchesTheApi) {
  Api api(path);
  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  ASSERT_EQ(uscope_cpu_trace_analyze(api.t, &rep, 0, 20), USCOPE_OK) << uscope_last_error();
  const ToolReply t = call(*srv, "analyze_performance", R"({"start_cycle":0,"end_cycle":20})");
  ASSERT_FALSE(t.is_error) << t.text;
  const Reply &a = t.answer;
  EXPECT_EQ(u(a["start_cycle"]), rep.start_cycle);
  EXPECT_EQ(u(a["end_cycle"]), rep.end_cycle);
  EXPECT_EQ(u(a["range_cycles"]), rep.range_cycles);
  EXPECT_EQ(u(a["instructions"]["total"]), rep.total);
  EXPECT_EQ(u(a["instructions"]["retired"]), rep.retired);
  EXPECT_EQ(u(a["instructions"]["flushed"]), rep.flushed);
  EXPECT_EQ(u(a["instructions"]["in_flight"]), rep.in_flight);
  EXPECT_DOUBLE_EQ(d(a["instructions"]["flush_rate"]), rep.flush_rate);
  EXPECT_DOUBLE_EQ(d(a["ipc"]), rep.ipc);
  EXPECT_DOUBLE_EQ(d(a["commit_ipc"]), rep.commit_ipc);
  EXPECT_EQ(u(a["instructions"]["retired_in_range"]), rep.retired_in_range);
  ASSERT_EQ(n(a["counter_summaries"]), rep.num_counters);
  for (uint32_t i = 0; i < rep.num_counters; ++i) {
    EXPECT_EQ(u(a["counter_summaries"].at(i)["delta"]), rep.counters[i].delta);
    EXPECT_DOUBLE_EQ(d(a["counter_summaries"].at(i)["rate_per_cycle"]), rep.counters[i].rate_per_cycle);
  }
  ASSERT_EQ(n(a["buffer_snapshots"]), rep.num_buffers);
  for (uint32_t i = 0; i < rep.num_buffers; ++i)
    for (uint32_t k = 0; k < 3; ++k) {
      dom::element smp = a["buffer_snapshots"].at(i)["samples"].at(k).value();
      EXPECT_EQ(u(smp["cycle"]), rep.buffers[i].cycle[k]);
      EXPECT_EQ(u(smp["occupied"]), rep.buffers[i].occupied[k]);
    }
  ASSERT_EQ(n(a["stage_latencies"]), rep.num_stages);
  for (uint32_t i = 0; i < rep.num_stages; ++i) {
    EXPECT_EQ(s(a["stage_latencies"].at(i)["name"]), kStages[rep.stages[i].stage]);
    EXPECT_EQ(u(a["stage_latencies"].at(i)["instruction_count"]), rep.stages[i].count);
    EXPECT_DOUBLE_EQ(d(a["stage_latencies"].at(i)["avg_latency"]), rep.stages[i].avg_latency);
  }
  ASSERT_EQ(n(a["stall_reasons"]), rep.num_stalls);
  // A range past the trace's end is clamped to it (cycles 0..23: [0, 24)), with a warning.
  const ToolReply past = call(*srv, "analyze_performance", R"({"start_cycle":10,"end_cycle":500})");
  ASSERT_FALSE(past.is_error) << past.text;
  EXPECT_EQ(u(past.answer["end_cycle"]), api.info().max_cycle + 1);
  EXPECT_TRUE(has(past.answer.doc, "warning"));
  EXPECT_TRUE(call(*srv, "analyze_performance", R"({"start_cycle":500,"end_cycle":600})").is_error);
  // What the trace wrote.
  EXPECT_EQ(u(a["instructions"]["total"]), 6u);  // fetched in [0, 20): e0..e3, e5 twice
  EXPECT_EQ(u(a["instructions"]["retired"]), 3u);
  EXPECT_EQ(u(a["instructions"]["flushed"]), 1u);
}

TEST_F(McpServer, FindStallsCountsReasonsAndFullBuffers) {
  const ToolReply t = call(*srv, "find_stalls", R"({"start_cycle":0,"end_cycle":20})");
  ASSERT_FALSE(t.is_error) << t.text;
  EXPECT_EQ(u(t.answer["stall_events"]), 4u);
  ASSERT_EQ(n(t.answer["stall_reasons"]), 2u);  // largest first
  EXPECT_EQ(s(t.answer["stall_reasons"].at(0)["name"]), "rob_full");
  EXPECT_EQ(u(t.answer["stall_reasons"].at(0)["count"]), 3u);
  EXPECT_EQ(s(t.answer["stall_reasons"].at(1)["name"]), "iq_full");
  // The ROB (4 slots) was full at cycles 6 (e0..e3 in) only: e2 left at 7.
  ASSERT_EQ(n(t.answer["full_buffers"]), 1u);
  dom::element rob = t.answer["full_buffers"].at(0).value();
  EXPECT_EQ(s(rob["name"]), "rob");
  EXPECT_EQ(u(rob["full_cycles"]), 1u);
  EXPECT_EQ(u(rob["intervals"].at(0)["start_cycle"]), 6u);
  EXPECT_EQ(u(rob["intervals"].at(0)["end_cycle"]), 6u);
  EXPECT_EQ(u(rob["intervals"].at(0)["length"]), 1u);
  EXPECT_EQ(u(rob["runs"]), 1u);
  EXPECT_FALSE(t.answer["truncated"].get_bool().value());
  // Every full cycle, as the per-cycle buffer state of the C API has it.
  {
    Api api(path);
    std::set<uint64_t> want, got;
    for (uint64_t c = 0; c < 20; ++c) {
      uscope_buffer_state_t *st = nullptr;
      ASSERT_EQ(uscope_cpu_trace_buffers_at(api.t, &st, c), USCOPE_OK) << uscope_last_error();
      uscope_buffer_fill_t f{};
      ASSERT_EQ(uscope_buffer_state_fill(st, &f, kRob), USCOPE_OK);
      if (f.occupied == f.capacity) want.insert(c);
      uscope_buffer_state_free(st);
    }
    const dom::array runs = rob["intervals"].get_array().value();
    for (dom::element run : runs)
      for (uint64_t c = u(run["start_cycle"]); c <= u(run["end_cycle"]); ++c) got.insert(c);
    EXPECT_EQ(got, want);
  }
  // A scan shorter than the range says where to go on.
  const ToolReply p = call(*srv, "find_stalls", R"({"start_cycle":0,"end_cycle":20,"max_cycles":5})");
  ASSERT_FALSE(p.is_error) << p.text;
  EXPECT_TRUE(p.answer["truncated"].get_bool().value());
  EXPECT_EQ(u(p.answer["next_start_cycle"]), 5u);
  EXPECT_EQ(n(p.answer["full_buffers"]), 0u);
}

// A buffer full in several runs over many cycles: runs, lengths and counts.
TEST_F(McpServer, FindStallsReportsFullRunsOverLongRanges) {
  const std::string long_path = dir.file("long.uscope");
  {
    uscope_schema_t *sc = nullptr;
    ASSERT_EQ(uscope_schema_new(&sc), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_clock(sc, nullptr, "clk", 1000), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_scope(sc, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
    uscope_cpu_buffer_def_t buffers[1] = {{"rob", 2, nullptr, 0}};
    uscope_cpu_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "core0";
    cfg.parent_scope_id = 0;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.isa = "RV64GC";
    cfg.stages = kStages;
    cfg.num_stages = 4;
    cfg.max_entities = 4;
    cfg.buffers = buffers;
    cfg.num_buffers = 1;
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(sc, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, long_path.c_str(), sc, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(sc);
    // Every 1000 cycles: slot 0 in at +100, slot 1 in at +200 (full), slot 1
    // out at +200 + k (k = 1..20), slot 0 out at +500. 20 runs of 1..20 cycles.
    for (uint64_t c = 0; c < 20000; ++c) {
      ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
      const uint64_t blk = c / 1000, off = c % 1000;
      if (off == 100) {
        ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, 0, 0, 0), USCOPE_OK) << uscope_writer_error(w);
      }
      if (off == 200) {
        ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, 0, 1, 1), USCOPE_OK) << uscope_writer_error(w);
      }
      if (off == 201 + blk) {
        ASSERT_EQ(uscope_cpu_buffer_remove(w, cpu, 0, 1), USCOPE_OK) << uscope_writer_error(w);
      }
      if (off == 500) {
        ASSERT_EQ(uscope_cpu_buffer_remove(w, cpu, 0, 0), USCOPE_OK) << uscope_writer_error(w);
      }
      if (off == 300) {
        ASSERT_EQ(uscope_cpu_stall(w, cpu, kRobFull), USCOPE_OK);
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
    uscope_cpu_free(cpu);
  }
  Server p(long_path);
  const ToolReply t = call(p, "find_stalls", R"({"start_cycle":0,"end_cycle":20000})");
  ASSERT_FALSE(t.is_error) << t.text;
  EXPECT_EQ(u(t.answer["stall_events"]), 20u);
  ASSERT_EQ(n(t.answer["full_buffers"]), 1u);
  dom::element rob = t.answer["full_buffers"].at(0).value();
  EXPECT_EQ(u(rob["runs"]), 20u);
  EXPECT_EQ(u(rob["full_cycles"]), 210u);  // 1 + 2 + .. + 20
  ASSERT_EQ(n(rob["intervals"]), 20u);
  for (uint64_t k = 0; k < 20; ++k) {
    dom::element run = rob["intervals"].at(k).value();
    EXPECT_EQ(u(run["start_cycle"]), k * 1000 + 200);
    EXPECT_EQ(u(run["length"]), k + 1);
    EXPECT_EQ(u(run["end_cycle"]), k * 1000 + 200 + k);
  }
  EXPECT_FALSE(t.answer["truncated"].get_bool().value());
  // A scan cut by max_cycles in the middle of a run, then the rest.
  const ToolReply a = call(p, "find_stalls", R"({"start_cycle":0,"end_cycle":20000,"max_cycles":5205})");
  ASSERT_FALSE(a.is_error) << a.text;
  EXPECT_TRUE(a.answer["truncated"].get_bool().value());
  EXPECT_EQ(u(a.answer["next_start_cycle"]), 5205u);
  dom::element ra = a.answer["full_buffers"].at(0).value();
  EXPECT_EQ(u(ra["runs"]), 6u);
  EXPECT_EQ(u(ra["intervals"].at(5)["end_cycle"]), 5204u);
  const ToolReply b = call(p, "find_stalls", R"({"start_cycle":5205,"end_cycle":20000})");
  ASSERT_FALSE(b.is_error) << b.text;
  dom::element rb = b.answer["full_buffers"].at(0).value();
  EXPECT_EQ(u(rb["intervals"].at(0)["start_cycle"]), 5205u);
  EXPECT_EQ(u(ra["full_cycles"]) + u(rb["full_cycles"]), 210u);
}

TEST_F(McpServer, EventsInRangeDecodesFieldsByName) {
  const ToolReply t = call(*srv, "events_in_range", R"({"start_cycle":4,"end_cycle":7})");
  ASSERT_FALSE(t.is_error) << t.text;
  bool saw_note = false, saw_stall = false, saw_flush = false;
  const dom::array events = t.answer["events"].get_array().value();
  for (dom::element e : events) {
    const uint64_t c = u(e["cycle"]);
    EXPECT_GE(c, 4u);
    EXPECT_LE(c, 7u);
    const std::string type = s(e["event"]["type"]);
    if (type == "annotate") {
      EXPECT_EQ(s(e["event"]["fields"]["text"]), kNote);
      saw_note = true;
    } else if (type == "stall") {
      const std::string reason = s(e["event"]["fields"]["reason"]);
      EXPECT_TRUE(reason == "rob_full" || reason == "iq_full") << reason;
      saw_stall = true;
    } else if (type == "flush") {
      EXPECT_EQ(s(e["event"]["fields"]["reason"]), "mispredict");
      EXPECT_EQ(u(e["event"]["fields"]["entity_id"]), 2u);
      saw_flush = true;
    }
  }
  EXPECT_TRUE(saw_note && saw_stall && saw_flush) << t.text;
  // One type only.
  const ToolReply st = call(*srv, "events_in_range", R"({"start_cycle":0,"end_cycle":23,"event":"stall"})");
  ASSERT_FALSE(st.is_error) << st.text;
  EXPECT_EQ(n(st.answer["events"]), 4u);
  EXPECT_EQ(s(st.answer["events"].at(0)["event"]["fields"]["reason"]), "rob_full");
}

void expect_latency(dom::element j, const uscope_latency_t &l, const std::string &what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(u(j["count"]), l.count);
  if (!l.count) return;
  EXPECT_EQ(u(j["min"]), l.min);
  EXPECT_EQ(u(j["max"]), l.max);
  EXPECT_EQ(u(j["p50"]), l.p50);
  EXPECT_EQ(u(j["p90"]), l.p90);
  EXPECT_EQ(u(j["p99"]), l.p99);
  EXPECT_DOUBLE_EQ(d(j["mean"]), l.mean);
  EXPECT_EQ(j["exact"].get_bool().value(), l.exact != 0);
}

// The noc analysis of the C API over a range, on its own reader.
struct NocApi {
  uscope_reader_t *r = nullptr;
  uscope_noc_analysis_t *a = nullptr;
  uscope_noc_report_t rep{};
  NocApi(const std::string &path, uint64_t start, uint64_t end) {
    EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(uscope_noc_analysis_open(&a, r), USCOPE_OK) << uscope_last_error();
    rep.struct_size = sizeof rep;
    EXPECT_EQ(uscope_noc_analyze(a, &rep, start, end), USCOPE_OK) << uscope_last_error();
  }
  ~NocApi() {
    uscope_noc_analysis_close(a);
    uscope_reader_close(r);
  }
};

void expect_noc_matches(const ToolReply &t, const uscope_noc_report_t &rep) {
  ASSERT_FALSE(t.is_error) << t.text;
  EXPECT_EQ(u(t.answer["start_cycle"]), rep.start_cycle);
  EXPECT_EQ(u(t.answer["end_cycle"]), rep.end_cycle);
  EXPECT_EQ(u(t.answer["max_cycle"]), rep.max_cycle);
  EXPECT_EQ(u(t.answer["counts"]["completed"]), rep.counts.completed);
  EXPECT_EQ(u(t.answer["counts"]["retries"]), rep.counts.retries);
  EXPECT_EQ(u(t.answer["counts"]["timeouts"]), rep.counts.timeouts);
  EXPECT_EQ(u(t.answer["counts"]["credit_stalls"]), rep.counts.credit_stalls);
  EXPECT_EQ(u(t.answer["counts"]["in_flight"]), rep.in_flight);
  EXPECT_EQ(u(t.answer["retries_by_reason"]["no_credits"]), rep.retries_by_reason[USCOPE_NOC_RETRY_NO_CREDITS]);
  EXPECT_EQ(u(t.answer["retries_by_reason"]["arb_lost"]), rep.retries_by_reason[USCOPE_NOC_RETRY_ARB_LOST]);
  expect_latency(t.answer["hop_latency"], rep.latency, "hop");
  expect_latency(t.answer["end_to_end_latency"], rep.end_to_end, "end to end");
  ASSERT_EQ(n(t.answer["scopes"]), rep.num_scopes);
  for (uint32_t i = 0; i < rep.num_scopes; ++i) {
    EXPECT_EQ(s(t.answer["scopes"].at(i)["name"]), rep.scopes[i].name);
    EXPECT_EQ(u(t.answer["scopes"].at(i)["completed"]), rep.scopes[i].counts.completed);
    expect_latency(t.answer["scopes"].at(i)["latency"], rep.scopes[i].latency, "scope");
  }
  ASSERT_EQ(n(t.answer["ports"]), rep.num_ports);
  for (uint32_t i = 0; i < rep.num_ports; ++i) {
    dom::element p = t.answer["ports"].at(i).value();
    EXPECT_EQ(u(p["port"]), rep.ports[i].port);
    EXPECT_EQ(u(p["grants"]), rep.ports[i].grants);
    EXPECT_EQ(u(p["consumes"]), rep.ports[i].consumes);
    EXPECT_EQ(u(p["credits_granted"]), rep.ports[i].credits_granted);
    EXPECT_EQ(u(p["credits_consumed"]), rep.ports[i].credits_consumed);
  }
  EXPECT_EQ(u(t.answer["total_pairs"]), rep.num_pairs);
}

TEST_F(McpServer, NocLatencyMatchesTheApi) {
  const std::string noc = write_noc_trace(dir);
  ASSERT_FALSE(HasFailure());
  Server p(noc);
  {
    const ToolReply t = call(p, "noc_latency", "{}");
    NocApi api(noc, 0, UINT64_MAX);
    ASSERT_NO_FATAL_FAILURE(expect_noc_matches(t, api.rep));
    // What the trace wrote.
    EXPECT_EQ(u(t.answer["counts"]["completed"]), 4u);
    EXPECT_EQ(u(t.answer["hop_latency"]["p50"]), 20u);
    EXPECT_EQ(u(t.answer["hop_latency"]["max"]), 40u);
    ASSERT_EQ(n(t.answer["pairs"]), 3u);
    for (uint32_t i = 0; i < 3; ++i) {
      dom::element pr = t.answer["pairs"].at(i).value();
      EXPECT_EQ(s(pr["scope"]), "xbar");
      EXPECT_EQ(u(pr["src_port"]), api.rep.pairs[i].src_port);
      EXPECT_EQ(u(pr["dst_port"]), api.rep.pairs[i].dst_port);
      EXPECT_EQ(u(pr["completed"]), api.rep.pairs[i].counts.completed);
      expect_latency(pr["latency"], api.rep.pairs[i].latency, "pair");
    }
    EXPECT_FALSE(t.answer["truncated"].get_bool().value());
  }
  {  // A range: what completes in [0, 25].
    const ToolReply t = call(p, "noc_latency", R"({"start_cycle":0,"end_cycle":25})");
    NocApi api(noc, 0, 25);
    ASSERT_NO_FATAL_FAILURE(expect_noc_matches(t, api.rep));
    EXPECT_EQ(u(t.answer["counts"]["completed"]), 2u);
  }
  {  // The pair table, a page at a time.
    const ToolReply a = call(p, "noc_latency", R"({"limit":2})");
    ASSERT_FALSE(a.is_error) << a.text;
    EXPECT_EQ(n(a.answer["pairs"]), 2u);
    EXPECT_TRUE(a.answer["truncated"].get_bool().value());
    EXPECT_EQ(u(a.answer["next_offset"]), 2u);
    const ToolReply b = call(p, "noc_latency", R"({"limit":2,"offset":2})");
    ASSERT_FALSE(b.is_error) << b.text;
    ASSERT_EQ(n(b.answer["pairs"]), 1u);
    EXPECT_EQ(u(b.answer["pairs"].at(0)["src_port"]), 1u);
    EXPECT_EQ(u(b.answer["pairs"].at(0)["dst_port"]), 5u);
    EXPECT_FALSE(b.answer["truncated"].get_bool().value());
  }
  // Past the end: clamped, and said.
  const ToolReply c = call(p, "noc_latency", R"({"start_cycle":10,"end_cycle":900})");
  ASSERT_FALSE(c.is_error) << c.text;
  EXPECT_EQ(u(c.answer["end_cycle"]), 50u);
  EXPECT_TRUE(has(c.answer.doc, "warning"));
  EXPECT_TRUE(call(p, "noc_latency", R"({"start_cycle":9,"end_cycle":3})").is_error);
  // The cpu and npu tools on it.
  EXPECT_TRUE(call(p, "state_at_cycle", R"({"cycle":0})").is_error);
  EXPECT_NE(call(p, "npu_summary", "{}").text.find("no npu protocol scope"), std::string::npos);
}

TEST_F(McpServer, NpuSummaryIsTheNpuReport) {
  const std::string npu = write_npu_trace(dir);
  ASSERT_FALSE(HasFailure());
  char *want = nullptr;
  ASSERT_EQ(uscope_convert_npu_report(&want, nullptr, npu.c_str(), USCOPE_CONVERT_USCOPE, nullptr, 1), USCOPE_OK)
      << uscope_last_error();
  const Reply w = parse(want);
  uscope_convert_free(want);
  Server p(npu);
  const ToolReply t = call(p, "npu_summary", "{}");
  ASSERT_FALSE(t.is_error) << t.text;
  // Every key of npu-report's JSON, as it has it.
  size_t keys = 0;
  const dom::object report = w.doc.get_object().value();
  for (auto f : report) {
    ++keys;
    dom::element got;
    ASSERT_EQ(t.answer.doc[f.key].get(got), simdjson::SUCCESS) << f.key;
    EXPECT_EQ(simdjson::minify(got), simdjson::minify(f.value)) << f.key;
  }
  EXPECT_GE(keys, 8u);
  // And the analysis's figures: engines, command latency, the range.
  auto expect_api = [&](const ToolReply &r, uint64_t start, uint64_t end) {
    ASSERT_FALSE(r.is_error) << r.text;
    uscope_reader_t *rd = nullptr;
    ASSERT_EQ(uscope_reader_open(&rd, npu.c_str()), USCOPE_OK);
    uscope_npu_analysis_t *a = nullptr;
    ASSERT_EQ(uscope_npu_analysis_open(&a, rd), USCOPE_OK) << uscope_last_error();
    uscope_npu_report_t rep{};
    rep.struct_size = sizeof rep;
    ASSERT_EQ(uscope_npu_analyze(a, &rep, start, end), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(u(r.answer["range"]["start_cycle"]), rep.start_cycle);
    EXPECT_EQ(u(r.answer["range"]["end_cycle"]), rep.end_cycle);
    EXPECT_EQ(u(r.answer["range"]["range_cycles"]), rep.range_cycles);
    ASSERT_EQ(n(r.answer["engines"]), rep.num_engines);
    for (uint32_t i = 0; i < rep.num_engines; ++i) {
      dom::element e = r.answer["engines"].at(i).value();
      EXPECT_EQ(s(e["name"]), rep.engines[i].name);
      EXPECT_EQ(u(e["busy_cycles"]), rep.engines[i].busy_cycles);
      EXPECT_EQ(u(e["jobs"]), rep.engines[i].jobs);
      EXPECT_DOUBLE_EQ(d(e["utilization"]), rep.engines[i].utilization);
    }
    expect_latency(r.answer["command_latency"], rep.command_latency, "commands");
    // The report's own keys are of the range too.
    const Reply rj = parse(rep.json);
    EXPECT_EQ(simdjson::minify(r.answer["phases"]), simdjson::minify(rj["phases"]));
    EXPECT_EQ(simdjson::minify(r.answer["sram"]), simdjson::minify(rj["sram"]));
    uscope_npu_analysis_close(a);
    uscope_reader_close(rd);
  };
  expect_api(t, 0, UINT64_MAX);
  EXPECT_EQ(u(t.answer["command_latency"]["count"]), 3u);
  const ToolReply r = call(p, "npu_summary", R"({"start_cycle":30,"end_cycle":60})");
  expect_api(r, 30, 60);
  // What the trace wrote: over 30..60, TE busy 20 of 30 cycles; commands 0 and 1 end there.
  EXPECT_EQ(u(r.answer["range"]["range_cycles"]), 30u);
  EXPECT_EQ(s(r.answer["engines"].at(0)["name"]), "TE");
  EXPECT_EQ(u(r.answer["engines"].at(0)["busy_cycles"]), 20u);
  EXPECT_EQ(u(r.answer["command_latency"]["count"]), 2u);
  EXPECT_EQ(u(r.answer["command_latency"]["p90"]), 40u);
  EXPECT_TRUE(call(p, "npu_summary", R"({"start_cycle":9,"end_cycle":3})").is_error);
  // The cpu and noc tools on it.
  EXPECT_TRUE(call(p, "state_at_cycle", R"({"cycle":0})").is_error);
  EXPECT_NE(call(p, "noc_latency", "{}").text.find("no noc protocol scope"), std::string::npos);
}

// ── size ──

TEST_F(McpServer, BigAnswersArePaginatedOrRefused) {
  const std::string plain = write_plain_trace(dir, 5000);
  Server::Options o;
  o.max_text_bytes = 32 * 1024;
  Server p(plain, o);
  // The default limit (200) cuts 5000 events, and says where to go on.
  const ToolReply a = call(p, "events_in_range", R"({"start_cycle":0,"end_cycle":4999})");
  ASSERT_FALSE(a.is_error) << a.text;
  EXPECT_TRUE(a.answer["truncated"].get_bool().value());
  EXPECT_EQ(n(a.answer["events"]), 200u);
  EXPECT_EQ(u(a.answer["next_offset"]), 200u);
  // A limit above what fits: the size cap cuts it.
  const ToolReply b = call(p, "events_in_range", R"({"start_cycle":0,"end_cycle":4999,"limit":5000,"offset":10})");
  ASSERT_FALSE(b.is_error) << b.text;
  EXPECT_TRUE(b.answer["truncated"].get_bool().value());
  EXPECT_LE(b.text.size(), o.max_text_bytes);
  const uint64_t got = n(b.answer["events"]);
  EXPECT_GT(got, 10u);
  EXPECT_LT(got, 5000u);
  EXPECT_EQ(u(b.answer["next_offset"]), 10 + got);
  EXPECT_EQ(u(b.answer["events"].at(0)["event"]["fields"]["value"]), 10u);
  // Pages go on where the last stopped, to the end.
  const ToolReply c = call(p, "events_in_range", R"({"start_cycle":0,"end_cycle":4999,"limit":100,"offset":4950})");
  EXPECT_FALSE(c.answer["truncated"].get_bool().value());
  EXPECT_EQ(n(c.answer["events"]), 50u);
  EXPECT_EQ(u(c.answer["events"].at(0)["event"]["fields"]["value"]), 4950u);
  // An answer with no list to cut that is still over the cap is refused with a hint.
  Server::Options tiny;
  tiny.max_text_bytes = 200;
  Server q(plain, tiny);
  const ToolReply r = call(q, "file_info", "{}");
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("cap"), std::string::npos) << r.text;
}

// ── the JSON writer every answer goes through ──

TEST(McpJson, EscapesEveryStringToValidJson) {
  std::string out;
  uscope_cli::Json j(&out);
  const std::string nasty = std::string("q\"b\\s/\n\r\t\b\f") + '\x01' + '\x1f' + "\x7f" + "é€😀";
  const std::string invalid = std::string("a\xff") + "\xc3" + "b" + "\xed\xa0\x80" + "\xe2\x82";  // not UTF-8
  j.begin_object();
  j.field("nasty", nasty);
  j.field("invalid", invalid.c_str());
  j.key("n");
  j.snum(-42);
  j.key("big");
  j.num(UINT64_MAX);
  j.key("x");
  j.real(2.05);
  j.key("nul");
  j.str(static_cast<const char *>(nullptr));
  j.end_object();
  EXPECT_EQ(out.find('\n'), std::string::npos);
  const Reply r = parse(out);
  EXPECT_EQ(s(r["nasty"]), nasty);  // valid UTF-8 comes back byte for byte
  EXPECT_EQ(s(r["invalid"]), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  int64_t neg = 0;
  EXPECT_EQ(r["n"].get(neg), simdjson::SUCCESS);
  EXPECT_EQ(neg, -42);
  EXPECT_EQ(u(r["big"]), UINT64_MAX);
  EXPECT_EQ(d(r["x"]), 2.05);
  EXPECT_TRUE(r["nul"].is_null());
  EXPECT_NE(out.find(R"(\u0001)"), std::string::npos);
  EXPECT_NE(out.find(R"(\u001f)"), std::string::npos);
}

}  // namespace
