// The npu protocol helpers (docs/npu-protocol.md). The example events of
// npu-trace-jsonl.md §4 (plus two carrying every meta and LLM field) are
// written through the per-cycle calls and read back through the public reader
// API; the JSONL objects rebuilt from the trace equal the originals key for
// key, and the storages and counters follow the events.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::test::TempDir;
using namespace uscope::test::proto;
using Strings = std::vector<std::string>;
using Json = std::map<std::string, std::string>;  // key -> canonical JSON text of the value

constexpr uint64_t kPeriod = 1000;  // t_cycle = time_ps / kPeriod
constexpr uint16_t kNoCtx = USCOPE_NPU_NO_CONTEXT;
constexpr uint32_t A32 = USCOPE_NPU_ABSENT32;
constexpr uint16_t A16 = USCOPE_NPU_ABSENT16;

// npu-trace-jsonl.md §4, comments removed, in time order; the last two lines
// carry every common meta field and every §5 LLM field.
const char *const kJsonl[] = {
    R"({"event_type": "CMD_ENQUEUE", "t_cycle": 100, "cmd_id": 42, "cmd_type": "MATMUL", "source": "ISA", "token": 10, "desc_addr": 140737488355328, "layer_id": 3, "block_id": 3, "phase": "QKV_PROJ", "model_name": "llama2_7b"})",
    R"({"event_type": "CMD_START", "t_cycle": 150, "cmd_id": 42})",
    R"({"event_type": "JOB_ISSUE", "t_cycle": 200, "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "tile_id": 5, "vec_chunk_id": null, "phase": "QKV_PROJ"})",
    R"({"event_type": "DMA_START", "t_cycle": 210, "tx_id": 500, "channel": 0, "direction": "DRAM_TO_SRAM", "src_addr": 140737488355328, "dst_addr": 4096, "size_bytes": 65536, "cmd_id": 42, "job_id": 1001, "phase": "QKV_PROJ"})",
    R"({"event_type": "NOC_TX_START", "t_cycle": 218, "tx_id": 500, "link_id": 0, "size_bytes": 65536, "cmd_id": 42})",
    R"({"event_type": "DRAM_TX_START", "t_cycle": 220, "tx_id": 500, "channel": 1, "size_bytes": 65536, "cmd_id": 42})",
    R"({"event_type": "TE_START", "t_cycle": 230, "job_id": 1001, "cmd_id": 42, "m": 128, "n": 128, "k": 256, "tile_m": 64, "tile_n": 64, "tile_k": 64, "phase": "QKV_PROJ"})",
    R"({"event_type": "SRAM_ACCESS", "t_cycle": 235, "addr": 8192, "bank_id": 1, "access_type": "READ", "by": "TE", "conflict": false, "cmd_id": 42, "job_id": 1001})",
    R"({"event_type": "SRAM_CONFLICT", "t_cycle": 236, "bank_id": 1, "num_requests": 3, "allowed": 1, "stalled_clients": ["VE", "DMA"], "cmd_id": 42})",
    R"({"event_type": "NOC_TX_END", "t_cycle": 258, "tx_id": 500, "link_id": 0})",
    R"({"event_type": "DMA_END", "t_cycle": 260, "tx_id": 500, "channel": 0, "cmd_id": 42, "job_id": 1001})",
    R"({"event_type": "DRAM_TX_END", "t_cycle": 260, "tx_id": 500, "channel": 1})",
    R"({"event_type": "JOB_DONE", "t_cycle": 260, "job_id": 1001, "cmd_id": 42, "job_type": "TE_GEMM", "latency_cycles": 60})",
    R"({"event_type": "TE_END", "t_cycle": 280, "job_id": 1001, "cmd_id": 42, "mac_count": 4194304, "latency_cycles": 50})",
    R"({"event_type": "VE_START", "t_cycle": 300, "job_id": 1100, "cmd_id": 43, "op_type": "LAYERNORM", "len": 4096, "batch": 128, "phase": "LN1"})",
    R"({"event_type": "VE_END", "t_cycle": 340, "job_id": 1100, "cmd_id": 43, "latency_cycles": 40})",
    R"({"event_type": "TE_START", "t_cycle": 400, "core_id": 1, "npu_id": 0, "tenant_id": 2, "thread_id": 0, "job_id": 2001, "cmd_id": 44, "m": 64, "n": 64, "k": 64, "tile_m": 32, "tile_n": 32, "tile_k": 32, "phase": "ATTENTION_SCORE", "layer_id": 5, "head_id": 7, "token_idx": 11, "seq_len": 12, "precision": "BF16", "model_name": "llama2_7b"})",
    R"({"event_type": "TE_END", "t_cycle": 420, "core_id": 1, "npu_id": 0, "tenant_id": 2, "thread_id": 0, "job_id": 2001, "cmd_id": 44, "mac_count": 262144, "latency_cycles": 20, "phase": "ATTENTION_SCORE", "layer_id": 5, "head_id": 7, "token_idx": 11, "seq_len": 12, "precision": "BF16", "model_name": "llama2_7b"})",
    R"({"event_type": "WARN", "t_cycle": 700, "component": "TE", "code": "LOW_UTIL", "msg": "TE utilization below 50% in last 1000 cycles", "layer_id": 3})",
    R"({"event_type": "CMD_END", "t_cycle": 900, "cmd_id": 42, "status": "OK"})",
    R"({"event_type": "IRQ_EMIT", "t_cycle": 900, "cmd_id": 42, "token": 10, "irq_line": 3})",
    R"({"event_type": "TOKEN_COMPLETE", "t_cycle": 900, "token": 10, "cmd_id": 42, "status": "OK"})",
    R"({"event_type": "ERROR", "t_cycle": 905, "component": "DMA", "code": "ADDR_ALIGN", "msg": "unaligned DMA source address", "cmd_id": 42, "job_id": 1001})",
};
constexpr size_t kNumLines = sizeof kJsonl / sizeof *kJsonl;

// The contexts the lines need: each holds exactly the meta / LLM keys of the
// lines that use it, every other field absent.
enum : uint16_t { kCtxModel, kCtxQkv, kCtxLn1, kCtxLayer3, kCtxFull, kNumCtx };

struct Npu {
  const char *extra[1] = {"stalls"};
  uscope_npu_config_t cfg{};
  Npu() {
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "npu0";
    cfg.parent_scope_id = 0;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.queue_depth = 8;
    cfg.num_contexts = 8;
    cfg.num_te = 2;
    cfg.num_ve = 2;
    cfg.num_dma_channels = 2;
    cfg.num_sram_banks = 4;
    cfg.num_dram_channels = 2;
    cfg.num_noc_links = 1;
    cfg.te_rows = 128;
    cfg.te_cols = 64;
    cfg.counters = extra;
    cfg.num_counters = 1;
    cfg.dut_name = "xnpu";
    cfg.vendor = "acme";
    cfg.sim_id = "run_2025_11_25_01";
    cfg.trace_version = "1.0";
    cfg.sim_version = "sim-3.2";
    cfg.sim_config_json = R"({"te_tflops": 64, "sram_size": 8388608})";
  }
};

// The Npu declared and a writer open on a fresh file.
struct NpuTrace : OpenTrace<Npu, uscope_npu_t> {
  NpuTrace() : OpenTrace("uscope_npu", uscope_npu_declare, kPeriod) {}
};

// The JSONL lines above through the per-cycle calls, as a converter would
// make them: one cycle per t_cycle, the contexts in cycle 0. The handle is
// freed at the end, so the counter ids (an array the handle owns) are copied.
struct SpecStream {
  NpuTrace o;
  uscope_npu_ids_t ids{};
  std::vector<uint16_t> counter_ids;
  void write();
};

void SpecStream::write() {
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_npu_t *npu = o.h;
  ids = ids_of(npu);
  counter_ids.assign(ids.counters, ids.counters + ids.num_counters);
  ids.counters = nullptr;
  uint64_t now = ~0ull;
  auto at = [&](uint64_t t_cycle) {
    if (t_cycle == now) return;
    if (now != ~0ull) { ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w); }
    ASSERT_EQ(uscope_begin_cycle(w, t_cycle * kPeriod), USCOPE_OK);
    now = t_cycle;
  };
  auto ok = [&](uscope_status_t st) { ASSERT_EQ(st, USCOPE_OK) << uscope_last_error(); };

  at(0);
  ok(uscope_npu_context(w, npu, kCtxModel, A16, A16, A32, A32, A32, A32, A32, A32, nullptr));
  ok(uscope_npu_context_ext(w, npu, kCtxModel, A32, "llama2_7b", nullptr));
  ok(uscope_npu_context(w, npu, kCtxQkv, A16, A16, A32, A32, A32, A32, A32, A32, "QKV_PROJ"));
  ok(uscope_npu_context(w, npu, kCtxLn1, A16, A16, A32, A32, A32, A32, A32, A32, "LN1"));
  ok(uscope_npu_context(w, npu, kCtxLayer3, A16, A16, A32, 3, A32, A32, A32, A32, nullptr));
  ok(uscope_npu_context(w, npu, kCtxFull, 1, 0, 2, 5, A32, 7, 11, 12, "ATTENTION_SCORE"));
  ok(uscope_npu_context_ext(w, npu, kCtxFull, 0, "llama2_7b", "BF16"));
  at(100);
  ok(uscope_npu_cmd_enqueue(w, npu, 2, kCtxModel, 42, "MATMUL", USCOPE_NPU_SOURCE_ISA, 10, 140737488355328ull,
                            3, 3, "QKV_PROJ"));
  at(150);
  ok(uscope_npu_cmd_start(w, npu, 2, kNoCtx, 42));
  at(200);
  ok(uscope_npu_job_issue(w, npu, kCtxQkv, 1001, 42, "TE_GEMM", 5, USCOPE_NPU_NULL32));
  at(210);
  ok(uscope_npu_dma_start(w, npu, kCtxQkv, 500, 0, "DRAM_TO_SRAM", 140737488355328ull, 4096, 65536, 42,
                          1001));
  at(218);
  ok(uscope_npu_noc_tx_start(w, npu, kNoCtx, 500, 0, 65536, 42));
  at(220);
  ok(uscope_npu_dram_tx_start(w, npu, kNoCtx, 500, 1, 65536, 42));
  at(230);
  ok(uscope_npu_te_start(w, npu, 0, kCtxQkv, 1001, 42, 128, 128, 256, 64, 64, 64));
  at(235);
  ok(uscope_npu_sram_access(w, npu, kNoCtx, 8192, 1, USCOPE_NPU_ACCESS_READ, "TE", 0, 42, 1001));
  at(236);
  ok(uscope_npu_sram_conflict(w, npu, kNoCtx, 1, 3, 1, "VE,DMA", 42));
  at(258);
  ok(uscope_npu_noc_tx_end(w, npu, kNoCtx, 500, 0, 65536));
  at(260);
  ok(uscope_npu_dma_end(w, npu, kNoCtx, 500, 0, 42, 1001, 65536));
  ok(uscope_npu_dram_tx_end(w, npu, kNoCtx, 500, 1, 65536));
  ok(uscope_npu_job_done(w, npu, kNoCtx, 1001, 42, "TE_GEMM", 60));
  at(280);
  ok(uscope_npu_te_end(w, npu, 0, kNoCtx, 1001, 42, 4194304, 50));
  at(300);
  ok(uscope_npu_ve_start(w, npu, 1, kCtxLn1, 1100, 43, "LAYERNORM", 4096, 128));
  at(340);
  ok(uscope_npu_ve_end(w, npu, 1, kNoCtx, 1100, 43, 40));
  at(400);
  ok(uscope_npu_te_start(w, npu, 1, kCtxFull, 2001, 44, 64, 64, 64, 32, 32, 32));
  at(420);
  ok(uscope_npu_te_end(w, npu, 1, kCtxFull, 2001, 44, 262144, 20));
  at(700);
  ok(uscope_npu_warn(w, npu, kCtxLayer3, "TE", "LOW_UTIL", "TE utilization below 50% in last 1000 cycles",
                     A32, A32));
  at(900);
  ok(uscope_npu_cmd_end(w, npu, 2, kNoCtx, 42, "OK"));
  ok(uscope_npu_irq_emit(w, npu, kNoCtx, 42, 10, 3));
  ok(uscope_npu_token_complete(w, npu, kNoCtx, 10, 42, "OK"));
  at(905);
  ok(uscope_npu_error(w, npu, kNoCtx, "DMA", "ADDR_ALIGN", "unaligned DMA source address", 42, 1001));
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  uscope_npu_free(npu);
}

// ── JSON canonical forms ──

std::string json_string(const std::string &s) { return "\"" + s + "\""; }

std::string canonical(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING:
      return json_string(std::string(std::string_view(e)));
    case simdjson::dom::element_type::UINT64:
      return std::to_string(uint64_t(e));
    case simdjson::dom::element_type::INT64:
      return std::to_string(int64_t(e));
    case simdjson::dom::element_type::BOOL:
      return bool(e) ? "true" : "false";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    case simdjson::dom::element_type::ARRAY: {
      std::string out = "[";
      for (simdjson::dom::element x : simdjson::dom::array(e))
        out += (out.size() > 1 ? "," : "") + canonical(x);
      return out + "]";
    }
    default:
      ADD_FAILURE() << "unexpected JSON type";
      return "?";
  }
}

Json parse_line(const char *line) {
  simdjson::dom::parser p;
  simdjson::dom::object o = p.parse(std::string(line));
  Json out;
  for (auto kv : o) out[std::string(kv.key)] = canonical(kv.value);
  return out;
}

// The reverse of the converter: one µScope event (and its context at that
// time) back into a JSONL object, by docs/npu-protocol.md §6.
class ToJsonl {
 public:
  explicit ToJsonl(Trace &t, const uscope_npu_ids_t &ids) : t_(t), ids_(ids) {}

  Json convert(const Event &ev) {
    Json j;
    std::string type = ev.name;
    for (char &c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    j["event_type"] = json_string(type);
    j["t_cycle"] = std::to_string(ev.time_ps / kPeriod);
    for (const FieldInfo &f : t_.event_fields(ev.type_id)) {
      if (f.name == "slot" || f.name == "engine" || f.name == "ctx") continue;  // the protocol's own
      put(j, f, ev[f.name]);
    }
    const uint64_t ctx = ev["ctx"];
    if (ctx != USCOPE_NPU_NO_CONTEXT) {
      // The context as it was at the event's time (npu-protocol.md §2.3).
      const uscope_state_t *st = t_.state_at(ev.time_ps);
      EXPECT_TRUE(valid(st, ids_.contexts, static_cast<uint16_t>(ctx)));
      const auto fields = t_.storage_fields(ids_.contexts);
      for (uint16_t i = 0; i < fields.size(); ++i) {
        if (j.count(fields[i].name)) continue;  // the event's own field wins
        put(j, fields[i], field(st, ids_.contexts, static_cast<uint16_t>(ctx), i));
      }
    }
    return j;
  }

 private:
  void put(Json &j, const FieldInfo &f, uint64_t v) {
    const unsigned bits = f.type == USCOPE_FT_U8 || f.type == USCOPE_FT_ENUM ? 8
                          : f.type == USCOPE_FT_U16                          ? 16
                          : f.type == USCOPE_FT_U64                          ? 64
                                                                             : 32;
    const uint64_t absent = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (f.type == USCOPE_FT_ENUM) {
      j[f.name] = json_string(t_.enum_values(f.enum_id).at(v));
      return;
    }
    if (v == absent) return;
    if (v == absent - 1) {
      j[f.name] = "null";
      return;
    }
    if (f.type == USCOPE_FT_STRING_REF) {
      const std::string s = t_.str(v);
      if (f.name == "stalled_clients") {  // a JSON array, joined with ','
        std::string out = "[";
        size_t from = 0;
        for (;;) {
          const size_t comma = s.find(',', from);
          out += (out.size() > 1 ? "," : "") + json_string(s.substr(from, comma - from));
          if (comma == std::string::npos) break;
          from = comma + 1;
        }
        j[f.name] = out + "]";
      } else {
        j[f.name] = json_string(s);
      }
    } else if (f.name == "conflict") {  // a JSON bool
      j[f.name] = v ? "true" : "false";
    } else {
      j[f.name] = std::to_string(v);
    }
  }
  Trace &t_;
  const uscope_npu_ids_t &ids_;
};

TEST(ProtocolNpu, SpecExamplesRoundTripJsonlThroughUscopeLosslessly) {
  SpecStream sp;
  ASSERT_NO_FATAL_FAILURE(sp.write());
  const uscope_npu_ids_t &ids = sp.ids;
  Trace t(sp.o.path);
  ASSERT_TRUE(t.ok());
  const auto events = t.events();
  ASSERT_EQ(events.size(), kNumLines);
  ToJsonl conv(t, ids);
  for (size_t i = 0; i < kNumLines; ++i) {
    SCOPED_TRACE(kJsonl[i]);
    EXPECT_EQ(conv.convert(events[i]), parse_line(kJsonl[i]));
  }
}

TEST(ProtocolNpu, StoragesAndCountersFollowTheEvents) {
  SpecStream sp;
  ASSERT_NO_FATAL_FAILURE(sp.write());
  const uscope_npu_ids_t &ids = sp.ids;
  const std::vector<uint16_t> &counter_ids = sp.counter_ids;
  Trace t(sp.o.path);
  ASSERT_TRUE(t.ok());
  enum { MACS, DMA_BYTES, SRAM_ACC, SRAM_CONF, CMDS, JOBS, TOKENS, DRAM_BYTES, NOC_BYTES, STALLS };
  auto counters = [&](const uscope_state_t *st) {
    std::vector<uint64_t> v;
    for (uint16_t sid : counter_ids) v.push_back(counter(st, sid));
    return v;
  };
  using V = std::vector<uint64_t>;

  // t=236: the command runs; TE 0, DMA 0, DRAM 1 and NoC link 0 are busy; the
  // SRAM access and conflict are counted, also on bank 1.
  const uscope_state_t *s = t.state_at(236 * kPeriod);
  EXPECT_EQ(occupancy(s, ids.cmd_queue), 1u);
  const uint64_t cmd[] = {
      42, USCOPE_NPU_CMD_RUNNING, 0, USCOPE_NPU_SOURCE_ISA, 10, 140737488355328ull, 3, 3, 0, kCtxModel};
  for (uint16_t f = 0; f < 10; ++f)
    if (f != 2 && f != 8) { EXPECT_EQ(field(s, ids.cmd_queue, 2, f), cmd[f]) << f; }
  EXPECT_EQ(t.str(field(s, ids.cmd_queue, 2, 2)), "MATMUL");
  EXPECT_EQ(t.str(field(s, ids.cmd_queue, 2, 8)), "QKV_PROJ");
  EXPECT_EQ(occupancy(s, ids.te), 1u);
  const uint64_t te[] = {1001, 42, 128, 128, 256, kCtxQkv};
  for (uint16_t f = 0; f < 6; ++f) EXPECT_EQ(field(s, ids.te, 0, f), te[f]) << f;
  EXPECT_EQ(occupancy(s, ids.ve), 0u);
  EXPECT_EQ(occupancy(s, ids.dma), 1u);
  EXPECT_EQ(field(s, ids.dma, 0, 0), 500u);
  EXPECT_EQ(t.str(field(s, ids.dma, 0, 3)), "DRAM_TO_SRAM");
  EXPECT_EQ(field(s, ids.dma, 0, 4), 140737488355328ull);
  EXPECT_EQ(field(s, ids.dma, 0, 6), 65536u);
  EXPECT_TRUE(valid(s, ids.dram, 1));
  EXPECT_FALSE(valid(s, ids.dram, 0));
  EXPECT_EQ(field(s, ids.dram, 1, 2), 65536u);
  EXPECT_EQ(field(s, ids.dram, 1, 3), kNoCtx);
  EXPECT_TRUE(valid(s, ids.noc, 0));
  EXPECT_EQ(field(s, ids.sram_banks, 1, 0), 1u);
  EXPECT_EQ(field(s, ids.sram_banks, 1, 1), 1u);
  EXPECT_EQ(field(s, ids.sram_banks, 0, 0), 0u);
  EXPECT_EQ(counters(s), (V{0, 0, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(occupancy(s, ids.contexts), kNumCtx);
  const uint64_t full[] = {1, 0, 2, 5, A32, 7, 11, 12};
  for (uint16_t f = 0; f < 8; ++f) EXPECT_EQ(field(s, ids.contexts, kCtxFull, f), full[f]) << f;
  EXPECT_EQ(t.str(field(s, ids.contexts, kCtxFull, 8)), "ATTENTION_SCORE");
  EXPECT_EQ(field(s, ids.contexts, kCtxFull, 9), 0u);  // thread_id
  EXPECT_EQ(t.str(field(s, ids.contexts, kCtxFull, 10)), "llama2_7b");
  EXPECT_EQ(t.str(field(s, ids.contexts, kCtxFull, 11)), "BF16");
  EXPECT_EQ(field(s, ids.contexts, kCtxQkv, 10), USCOPE_NPU_STR_ABSENT);  // set absent by uscope_npu_context

  // t=300: the transfers and the GEMM are done and counted; VE 1 is busy.
  s = t.state_at(300 * kPeriod);
  EXPECT_EQ(occupancy(s, ids.te), 0u);
  EXPECT_EQ(occupancy(s, ids.dma), 0u);
  EXPECT_EQ(occupancy(s, ids.dram), 0u);
  EXPECT_EQ(occupancy(s, ids.noc), 0u);
  EXPECT_TRUE(valid(s, ids.ve, 1));
  EXPECT_EQ(t.str(field(s, ids.ve, 1, 2)), "LAYERNORM");
  EXPECT_EQ(field(s, ids.ve, 1, 3), 4096u);
  EXPECT_EQ(counters(s), (V{4194304, 65536, 1, 1, 0, 1, 0, 65536, 65536, 0}));

  // The end: the command is done, its token complete.
  s = t.state_at(905 * kPeriod);
  EXPECT_EQ(occupancy(s, ids.cmd_queue), 0u);
  EXPECT_EQ(occupancy(s, ids.ve), 0u);
  EXPECT_EQ(counters(s), (V{4194304 + 262144, 65536, 1, 1, 1, 1, 1, 65536, 65536, 0}));

  // The trace summary: every counter, and one "instruction" per enqueued command.
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  ASSERT_EQ(uscope_reader_summary(t.get(), &sum), USCOPE_OK);
  EXPECT_EQ(sum.num_counters, ids.num_counters);
  EXPECT_EQ(sum.total_instructions, 1u);
}

TEST(ProtocolNpu, DeclaresTheDocumentedSchema) {
  NpuTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_npu_t *npu = o.h;
  const uscope_npu_ids_t ids = ids_of(npu);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(o.path);
  ASSERT_TRUE(t.ok());
  EXPECT_STREQ(t.scope(ids.scope_id).name, "npu0");
  EXPECT_STREQ(t.scope(ids.scope_id).protocol, "npu");
  EXPECT_EQ(t.enum_name(ids.cmd_source_enum), "cmd_source");
  EXPECT_EQ(t.enum_values(ids.cmd_source_enum), (Strings{"ISA", "MMIO"}));
  EXPECT_EQ(t.enum_name(ids.access_type_enum), "access_type");
  EXPECT_EQ(t.enum_values(ids.access_type_enum), (Strings{"READ", "WRITE"}));
  EXPECT_EQ(t.enum_name(ids.cmd_state_enum), "cmd_state");
  EXPECT_EQ(t.enum_values(ids.cmd_state_enum), (Strings{"QUEUED", "RUNNING"}));

  struct St {
    const char *name;
    uint16_t id, slots, flags;
    Strings fields;
  };
  constexpr uint16_t SP = USCOPE_SF_SPARSE, BUF = USCOPE_SF_SPARSE | USCOPE_SF_BUFFER;
  const St storages[] = {
      {"cmd_queue",
       ids.cmd_queue,
       8,
       SP,
       {"cmd_id:U32", "state:ENUM", "cmd_type:STRING_REF", "source:ENUM", "token:U32", "desc_addr:U64",
        "layer_id:U32", "block_id:U32", "phase:STRING_REF", "ctx:U16"}},
      {"contexts",
       ids.contexts,
       8,
       SP,
       {"core_id:U16", "npu_id:U16", "tenant_id:U32", "layer_id:U32", "block_id:U32", "head_id:U32",
        "token_idx:U32", "seq_len:U32", "phase:STRING_REF", "thread_id:U32", "model_name:STRING_REF",
        "precision:STRING_REF"}},
      {"te", ids.te, 2, BUF, {"job_id:U32", "cmd_id:U32", "m:U32", "n:U32", "k:U32", "ctx:U16"}},
      {"ve",
       ids.ve,
       2,
       BUF,
       {"job_id:U32", "cmd_id:U32", "op_type:STRING_REF", "len:U32", "batch:U32", "ctx:U16"}},
      {"dma",
       ids.dma,
       2,
       BUF,
       {"tx_id:U32", "cmd_id:U32", "job_id:U32", "direction:STRING_REF", "src_addr:U64", "dst_addr:U64",
        "size_bytes:U64", "ctx:U16"}},
      {"sram_banks", ids.sram_banks, 4, 0, {"accesses:U64", "conflicts:U64"}},
      {"dram", ids.dram, 2, BUF, {"tx_id:U32", "cmd_id:U32", "size_bytes:U64", "ctx:U16"}},
      {"noc", ids.noc, 1, BUF, {"tx_id:U32", "cmd_id:U32", "size_bytes:U64", "ctx:U16"}},
  };
  for (const St &st : storages) {
    SCOPED_TRACE(st.name);
    ASSERT_EQ(t.storage(st.name, ids.scope_id), st.id);
    EXPECT_EQ(t.storage_info(st.id).num_slots, st.slots);
    EXPECT_EQ(t.storage_info(st.id).flags, st.flags);
    EXPECT_EQ(shape(t.storage_fields(st.id)), st.fields);
  }
  EXPECT_EQ(t.storage_fields(ids.cmd_queue)[1].enum_id, ids.cmd_state_enum);
  EXPECT_EQ(t.storage_fields(ids.cmd_queue)[3].enum_id, ids.cmd_source_enum);
  const char *const counters[] = {"macs",      "dma_bytes",   "sram_accesses", "sram_conflicts", "cmds_done",
                                  "jobs_done", "tokens_done", "dram_bytes",    "noc_bytes",      "stalls"};
  ASSERT_EQ(ids.num_counters, 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(t.storage(counters[i], ids.scope_id), ids.counters[i]) << counters[i];
    EXPECT_EQ(shape(t.storage_fields(ids.counters[i])), Strings{"count:U64"});
    EXPECT_EQ(t.storage_info(ids.counters[i]).num_slots, 1);
  }

  const std::pair<const char *, Strings> events[USCOPE_NPU_NUM_EVENTS] = {
      {"cmd_enqueue",
       {"cmd_id:U32", "cmd_type:STRING_REF", "source:ENUM", "token:U32", "desc_addr:U64", "layer_id:U32",
        "block_id:U32", "phase:STRING_REF", "slot:U16", "ctx:U16"}},
      {"cmd_start", {"cmd_id:U32", "slot:U16", "ctx:U16"}},
      {"cmd_end", {"cmd_id:U32", "status:STRING_REF", "slot:U16", "ctx:U16"}},
      {"job_issue",
       {"job_id:U32", "cmd_id:U32", "job_type:STRING_REF", "tile_id:U32", "vec_chunk_id:U32", "ctx:U16"}},
      {"job_done", {"job_id:U32", "cmd_id:U32", "job_type:STRING_REF", "latency_cycles:U32", "ctx:U16"}},
      {"dma_start",
       {"tx_id:U32", "channel:U16", "direction:STRING_REF", "src_addr:U64", "dst_addr:U64", "size_bytes:U64",
        "cmd_id:U32", "job_id:U32", "ctx:U16"}},
      {"dma_end", {"tx_id:U32", "channel:U16", "cmd_id:U32", "job_id:U32", "ctx:U16"}},
      {"te_start",
       {"job_id:U32", "cmd_id:U32", "m:U32", "n:U32", "k:U32", "tile_m:U32", "tile_n:U32", "tile_k:U32",
        "engine:U16", "ctx:U16"}},
      {"te_end",
       {"job_id:U32", "cmd_id:U32", "mac_count:U64", "latency_cycles:U32", "engine:U16", "ctx:U16"}},
      {"ve_start",
       {"job_id:U32", "cmd_id:U32", "op_type:STRING_REF", "len:U32", "batch:U32", "engine:U16", "ctx:U16"}},
      {"ve_end", {"job_id:U32", "cmd_id:U32", "latency_cycles:U32", "engine:U16", "ctx:U16"}},
      {"sram_access",
       {"addr:U64", "bank_id:U16", "access_type:ENUM", "by:STRING_REF", "conflict:U8", "cmd_id:U32",
        "job_id:U32", "ctx:U16"}},
      {"sram_conflict",
       {"bank_id:U16", "num_requests:U32", "allowed:U32", "stalled_clients:STRING_REF", "cmd_id:U32",
        "ctx:U16"}},
      {"dram_tx_start", {"tx_id:U32", "channel:U16", "size_bytes:U64", "cmd_id:U32", "ctx:U16"}},
      {"dram_tx_end", {"tx_id:U32", "channel:U16", "ctx:U16"}},
      {"noc_tx_start", {"tx_id:U32", "link_id:U16", "size_bytes:U64", "cmd_id:U32", "ctx:U16"}},
      {"noc_tx_end", {"tx_id:U32", "link_id:U16", "ctx:U16"}},
      {"irq_emit", {"cmd_id:U32", "token:U32", "irq_line:U32", "ctx:U16"}},
      {"token_complete", {"token:U32", "cmd_id:U32", "status:STRING_REF", "ctx:U16"}},
      {"error",
       {"component:STRING_REF", "code:STRING_REF", "msg:STRING_REF", "cmd_id:U32", "job_id:U32", "ctx:U16"}},
      {"warn",
       {"component:STRING_REF", "code:STRING_REF", "msg:STRING_REF", "cmd_id:U32", "job_id:U32", "ctx:U16"}},
  };
  for (int e = 0; e < USCOPE_NPU_NUM_EVENTS; ++e) {
    SCOPED_TRACE(events[e].first);
    EXPECT_EQ(t.event_type(events[e].first, ids.scope_id), ids.events[e]);
    EXPECT_EQ(shape(t.event_fields(ids.events[e])), events[e].second);
  }
  EXPECT_EQ(t.event_fields(ids.events[USCOPE_NPU_EV_SRAM_ACCESS])[2].enum_id, ids.access_type_enum);

  using Props = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(t.dut_all(), (Props{{"dut_name", "xnpu"},
                                {"npu.protocol_version", "0.1"},
                                {"npu.vendor", "acme"},
                                {"npu.sim_id", "run_2025_11_25_01"},
                                {"npu.trace_version", "1.0"},
                                {"npu.sim_version", "sim-3.2"},
                                {"npu.sim_config", R"({"te_tflops": 64, "sram_size": 8388608})"},
                                {"npu0/npu.te_dims", "128x64"}}));
  uscope_npu_free(npu);
}

TEST(ProtocolNpu, OptionalStoragesAreLeftOutAndTheirIdsAreNotChecked) {
  TempDir dir("uscope_npu");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema(kPeriod);
  uscope_npu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = "npu";
  c.clock_id = USCOPE_CLOCK_INHERIT;
  c.queue_depth = 1;
  c.num_te = c.num_ve = c.num_dma_channels = 1;
  uscope_npu_t *npu = nullptr;
  ASSERT_EQ(uscope_npu_declare(s, &npu, &c), USCOPE_OK) << uscope_last_error();
  const uscope_npu_ids_t ids = ids_of(npu);
  EXPECT_EQ(ids.sram_banks, 0xFFFF);
  EXPECT_EQ(ids.dram, 0xFFFF);
  EXPECT_EQ(ids.noc, 0xFFFF);
  EXPECT_EQ(ids.num_contexts, 16);  // the default
  EXPECT_EQ(ids.num_counters, USCOPE_NPU_NUM_STD_COUNTERS);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  ASSERT_EQ(uscope_npu_sram_access(w, npu, kNoCtx, 0, 77, USCOPE_NPU_ACCESS_WRITE, nullptr,
                                   USCOPE_NPU_ABSENT8, A32, A32),
            USCOPE_OK);
  ASSERT_EQ(uscope_npu_dram_tx_start(w, npu, kNoCtx, 1, 9, 64, 1), USCOPE_OK);
  ASSERT_EQ(uscope_npu_dram_tx_end(w, npu, kNoCtx, 1, 9, USCOPE_NPU_ABSENT64), USCOPE_OK);  // not counted
  ASSERT_EQ(uscope_npu_noc_tx_end(w, npu, kNoCtx, 1, 3, 128), USCOPE_OK);
  ASSERT_EQ(uscope_npu_counter_add(w, npu, USCOPE_NPU_COUNTER_MACS, 5), USCOPE_OK);
  // "" is absent too: a SystemVerilog string cannot be NULL.
  ASSERT_EQ(uscope_npu_warn(w, npu, kNoCtx, "", nullptr, "m", A32, A32), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  Trace t(path);
  EXPECT_EQ(t.counts().storages, 5u + USCOPE_NPU_NUM_STD_COUNTERS);
  EXPECT_EQ(t.dut_all().size(), 1u);  // npu.protocol_version only
  const auto ev = t.events();
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[4]["component"], USCOPE_NPU_STR_ABSENT);
  EXPECT_EQ(ev[4]["code"], USCOPE_NPU_STR_ABSENT);
  EXPECT_EQ(t.str(ev[4]["msg"]), "m");
  EXPECT_EQ(ev[0]["bank_id"], 77u);
  EXPECT_EQ(ev[0]["by"], USCOPE_NPU_STR_ABSENT);
  EXPECT_EQ(ev[0]["conflict"], USCOPE_NPU_ABSENT8);
  EXPECT_EQ(ev[0]["access_type"], USCOPE_NPU_ACCESS_WRITE);
  const uscope_state_t *st = t.state_at(0);
  EXPECT_EQ(counter(st, ids.counters[USCOPE_NPU_COUNTER_SRAM_ACCESSES]), 1u);
  EXPECT_EQ(counter(st, ids.counters[USCOPE_NPU_COUNTER_DRAM_BYTES]), 0u);
  EXPECT_EQ(counter(st, ids.counters[USCOPE_NPU_COUNTER_NOC_BYTES]), 128u);
  EXPECT_EQ(counter(st, ids.counters[USCOPE_NPU_COUNTER_MACS]), 5u);
  uscope_npu_free(npu);
}

TEST(ProtocolNpu, ArgumentErrorsAreSpecificAndWriteNothing) {
  NpuTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_npu_t *npu = o.h;
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  constexpr uint32_t U = A32;
  refused(uscope_npu_context(w, npu, 8, 0, 0, 0, 0, 0, 0, 0, 0, "x"), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_context: ctx 8 is not a context of scope \"npu0\" (num_contexts 8");
  refused(uscope_npu_context_ext(w, npu, kNoCtx, 0, nullptr, nullptr), USCOPE_ERR_UNKNOWN_SLOT, "ctx 65535");
  refused(uscope_npu_context_clear(w, npu, 100), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_context_clear: ctx 100");
  refused(uscope_npu_cmd_enqueue(w, npu, 8, kNoCtx, 1, "X", 0, 0, 0, 0, 0, "P"), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_cmd_enqueue: slot 8 is not a slot of cmd_queue of scope \"npu0\", which has 8");
  refused(uscope_npu_cmd_enqueue(w, npu, 0, 9, 1, "X", 0, 0, 0, 0, 0, "P"), USCOPE_ERR_UNKNOWN_SLOT, "ctx 9");
  refused(uscope_npu_cmd_enqueue(w, npu, 0, kNoCtx, 1, "X", 2, 0, 0, 0, 0, "P"), USCOPE_ERR_VALUE_RANGE,
          "source 2 is out of range");
  refused(uscope_npu_cmd_start(w, npu, 8, kNoCtx, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_cmd_start: slot 8");
  refused(uscope_npu_cmd_end(w, npu, 9, kNoCtx, 1, "OK"), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_cmd_end: slot 9");
  refused(uscope_npu_job_issue(w, npu, 20, 1, 1, "T", 0, 0), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_job_issue: ctx 20");
  refused(uscope_npu_job_done(w, npu, 20, 1, 1, "T", 0), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_job_done: ctx 20");
  refused(uscope_npu_dma_start(w, npu, kNoCtx, 1, 2, "D", 0, 0, 1, U, U), USCOPE_ERR_UNKNOWN_SLOT,
          "channel 2 is not a slot of dma");
  refused(uscope_npu_dma_end(w, npu, kNoCtx, 1, A16, U, U, 1), USCOPE_ERR_UNKNOWN_SLOT, "channel 65535");
  refused(uscope_npu_te_start(w, npu, 2, kNoCtx, 1, 1, 1, 1, 1, 1, 1, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_te_start: engine 2 is not a slot of te");
  refused(uscope_npu_te_end(w, npu, 5, kNoCtx, 1, 1, 1, 1), USCOPE_ERR_UNKNOWN_SLOT, "engine 5");
  refused(uscope_npu_ve_start(w, npu, 2, kNoCtx, 1, 1, "LN", 1, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "engine 2 is not a slot of ve");
  refused(uscope_npu_ve_end(w, npu, 3, kNoCtx, 1, 1, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_ve_end: engine 3");
  refused(uscope_npu_sram_access(w, npu, kNoCtx, 0, 4, 0, "TE", 0, U, U), USCOPE_ERR_UNKNOWN_SLOT,
          "bank_id 4 is not a slot of sram_banks");
  refused(uscope_npu_sram_access(w, npu, kNoCtx, 0, 0, 2, "TE", 0, U, U), USCOPE_ERR_VALUE_RANGE,
          "access_type 2");
  refused(uscope_npu_sram_access(w, npu, kNoCtx, 0, 0, 0, "TE", 2, U, U), USCOPE_ERR_VALUE_RANGE,
          "conflict 2");
  refused(uscope_npu_sram_conflict(w, npu, kNoCtx, 4, 2, 1, "VE", U), USCOPE_ERR_UNKNOWN_SLOT, "bank_id 4");
  refused(uscope_npu_dram_tx_start(w, npu, kNoCtx, 1, 2, 1, U), USCOPE_ERR_UNKNOWN_SLOT,
          "channel 2 is not a slot of dram");
  refused(uscope_npu_dram_tx_end(w, npu, kNoCtx, 1, 2, 1), USCOPE_ERR_UNKNOWN_SLOT, "uscope_npu_dram_tx_end");
  refused(uscope_npu_noc_tx_start(w, npu, kNoCtx, 1, 1, 1, U), USCOPE_ERR_UNKNOWN_SLOT,
          "link_id 1 is not a slot of noc");
  refused(uscope_npu_noc_tx_end(w, npu, 30, 1, 0, 1), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_noc_tx_end: ctx 30");
  refused(uscope_npu_irq_emit(w, npu, 30, 1, 1, 1), USCOPE_ERR_UNKNOWN_SLOT, "uscope_npu_irq_emit: ctx 30");
  refused(uscope_npu_token_complete(w, npu, 30, 1, 1, "OK"), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_token_complete");
  refused(uscope_npu_error(w, npu, 30, "C", "E", "M", U, U), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_error: ctx 30");
  refused(uscope_npu_warn(w, npu, 30, "C", "W", "M", U, U), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_npu_warn: ctx 30");
  refused(uscope_npu_counter_add(w, npu, 10, 1), USCOPE_ERR_UNKNOWN_STORAGE,
          "counter 10 of scope \"npu0\", which has 10");
  refused(uscope_npu_te_end(nullptr, npu, 0, kNoCtx, 1, 1, 1, 1), USCOPE_ERR_INVALID_ARGUMENT,
          "uscope_npu_te_end: writer handle is NULL");
  refused(uscope_npu_te_end(w, nullptr, 0, kNoCtx, 1, 1, 1, 1), USCOPE_ERR_INVALID_ARGUMENT,
          "uscope_npu_te_end: protocol handle is NULL");
  EXPECT_STREQ(uscope_writer_error(w), "");
  // Sentinels are values: an absent bank updates no bank.
  ASSERT_EQ(uscope_npu_sram_conflict(w, npu, kNoCtx, A16, 2, 1, nullptr, U), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  uscope_writer_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.events, 1u);
  EXPECT_EQ(st.ops, 1u);  // sram_conflicts += 1
  EXPECT_EQ(st.errors, 0u);
  // Outside a cycle the writer's sticky BAD_STATE comes back unchanged.
  EXPECT_EQ(uscope_npu_irq_emit(w, npu, kNoCtx, 1, 1, 1), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_BAD_STATE);
  uscope_npu_free(npu);
}

TEST(ProtocolNpu, BadConfigsAreRefusedAndLeaveTheSchemaUnchanged) {
  uscope_schema_t *s = base_schema(kPeriod);
  uscope_npu_t *npu = nullptr;
  const DeclareRefusals<Npu, uscope_npu_t> refused(uscope_npu_declare, "uscope_npu_declare", s);
  refused.after([](Npu &n) { n.cfg.scope_name = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.scope_name is NULL");
  refused.after([](Npu &n) { n.cfg.queue_depth = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.queue_depth is 0");
  refused.after([](Npu &n) { n.cfg.num_te = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.num_te is 0");
  refused.after([](Npu &n) { n.cfg.num_ve = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.num_ve is 0");
  refused.after([](Npu &n) { n.cfg.num_dma_channels = 0; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.num_dma_channels is 0");
  refused.after([](Npu &n) { n.cfg.num_contexts = 0xFFFF; }, USCOPE_ERR_LIMIT, "cfg.num_contexts is 65535");
  refused.after([](Npu &n) { n.cfg.te_cols = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "give both or neither");
  refused.after([](Npu &n) { n.cfg.counters = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.counters is NULL but");
  refused.after([](Npu &n) { n.extra[0] = "macs"; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.counters[] \"macs\"");
  refused.after([](Npu &n) { n.cfg.struct_size = 2; }, USCOPE_ERR_INVALID_ARGUMENT, "struct_size is 2");
  refused.after([](Npu &n) { n.cfg.scope_name = "/"; }, USCOPE_ERR_SCHEMA, "scope name \"/\" is used");
  refused.after([](Npu &n) { n.cfg.clock_id = 9; }, USCOPE_ERR_SCHEMA, "clock 9 does not exist");
  {
    // A trace-wide property another declaration set differently.
    ASSERT_EQ(uscope_schema_add_dut_property(s, "npu.sim_id", "other_run"), USCOPE_OK);
    Npu n;
    refused(n.cfg, USCOPE_ERR_SCHEMA, "DUT property \"npu.sim_id\" is \"other_run\" already");
    n.cfg.sim_id = "other_run";  // the same value is shared
    ASSERT_EQ(uscope_npu_declare(s, &npu, &n.cfg), USCOPE_OK) << uscope_last_error();
  }
  EXPECT_EQ(ids_of(npu).scope_id, 1);
  EXPECT_EQ(ids_of(npu).cmd_queue, 0);
  EXPECT_EQ(ids_of(npu).cmd_source_enum, 0);
  EXPECT_EQ(ids_of(npu).events[0], 0);
  uscope_npu_free(npu);
  uscope_schema_free(s);
}

}  // namespace
