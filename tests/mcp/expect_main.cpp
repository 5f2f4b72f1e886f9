// uscope_mcp_expect DIR: the inputs and the expected answers of the MCP SDK
// client test (run_client_test.sh, client_test.mjs).
//
// Writes DIR/cpu.uscope (a small out-of-order core over 3000 cycles, in
// several segments: fetch, decode, execute, retire, flushes, stalls, ROB and
// IQ occupancy, counters, annotations with quotes) with the public writer and
// cpu protocol API, and DIR/npu.uscope (an NPU JSON-Lines workload converted
// by the library), and DIR/noc.uscope (a crossbar's transactions, retries,
// timeouts and link credits, by the noc protocol API); then prints one JSON object: the queries the client makes
// and what the C API (uscope.h, analysis.h, convert.h) answers to each, so
// that the client compares the server's answers with the library's, field by
// field. Nothing here goes through the server's code.
#include <uscope/analysis.h>
#include <uscope/convert.h>
#include <uscope/protocols.h>
#include <uscope/uscope.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <string>
#include <vector>

#include "cli_common.hpp"  // the Json writer (header-only)

namespace {

using uscope_cli::Json;

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "uscope_mcp_expect: %s: %s\n", what, uscope_last_error());
  std::exit(1);
}
void ok(uscope_status_t s, const char *what) {
  if (s < 0) die(what);
}

const char *const kStages[] = {"fetch", "decode", "execute", "retire"};
constexpr uint16_t kRob = 0, kIq = 1, kBpMisses = 1;
constexpr uint64_t kCycles = 3000;

// The queries (the client reads them from the output).
constexpr uint64_t kStateCycle = 1234, kEntity = 10;
constexpr uint64_t kCounterStart = 100, kCounterEnd = 600;
constexpr uint64_t kAnalyzeStart = 500, kAnalyzeEnd = 1500;
constexpr uint64_t kEventsStart = 1000, kEventsEnd = 1010, kEventsLimit = 50;
constexpr uint64_t kStallsStart = 200, kStallsEnd = 400;
constexpr uint64_t kNpuStart = 40, kNpuEnd = 80;
constexpr uint64_t kNocStart = 100, kNocEnd = 300, kNocCycles = 400;

void write_cpu(const std::string &path) {
  uscope_schema_t *s = nullptr;
  ok(uscope_schema_new(&s), "schema");
  ok(uscope_schema_add_clock(s, nullptr, "clk", 1000), "clock");
  ok(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), "root");
  uscope_field_t rob_extra[1] = {{"completed", USCOPE_FT_BOOL, 0, 0, 0}};
  uscope_cpu_buffer_def_t buffers[2] = {{"rob", 16, rob_extra, 1}, {"iq", 4, nullptr, 0}};
  const char *counters[1] = {"bp_misses"};
  uscope_cpu_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = "core0";
  cfg.parent_scope_id = 0;
  cfg.clock_id = USCOPE_CLOCK_INHERIT;
  cfg.isa = "RV64GC";
  cfg.stages = kStages;
  cfg.num_stages = 4;
  cfg.max_entities = 64;
  cfg.buffers = buffers;
  cfg.num_buffers = 2;
  cfg.counters = counters;
  cfg.num_counters = 1;
  cfg.dut_name = "mcp_test_core";
  uscope_cpu_t *cpu = nullptr;
  ok(uscope_cpu_declare(s, &cpu, &cfg), "cpu_declare");
  uscope_writer_options_t o;
  uscope_writer_options_init(&o);
  o.checkpoint_interval_ps = 500 * 1000;  // six segments
  uscope_writer_t *w = nullptr;
  ok(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), "writer_open");
  uscope_schema_free(s);
  struct Insn {
    uint64_t seq, fetched, done;
    uint32_t id;
    bool flush, in_iq;
  };
  std::deque<Insn> rob;
  uint64_t seq = 0;
  char note[64];
  for (uint64_t c = 0; c < kCycles; ++c) {
    ok(uscope_begin_cycle(w, c * 1000), "begin_cycle");
    // Retire (or flush) up to 2 done instructions at the head.
    for (int k = 0; k < 2 && !rob.empty() && rob.front().done <= c; ++k) {
      const Insn in = rob.front();
      rob.pop_front();
      if (in.flush) {
        ok(uscope_cpu_flush(w, cpu, in.id, USCOPE_CPU_FLUSH_MISPREDICT), "flush");
        ok(uscope_cpu_counter_add(w, cpu, kBpMisses, 1), "counter");
      } else {
        ok(uscope_cpu_stage_transition(w, cpu, in.id, 3), "retire stage");
        ok(uscope_cpu_retire(w, cpu, in.id), "retire");  // adds 1 to committed_insns
      }
      ok(uscope_cpu_buffer_remove(w, cpu, kRob, static_cast<uint16_t>(in.seq % 16)), "rob remove");
      if (in.in_iq) ok(uscope_cpu_buffer_remove(w, cpu, kIq, static_cast<uint16_t>(in.seq % 4)), "iq remove");
    }
    // Decode one cycle after fetch, execute (and the IQ while it is there) the next.
    for (auto &in : rob) {
      if (in.fetched + 1 == c) ok(uscope_cpu_stage_transition(w, cpu, in.id, 1), "decode");
      if (in.fetched + 2 == c) {
        ok(uscope_cpu_stage_transition(w, cpu, in.id, 2), "execute");
        if (in.seq % 5 == 0) {  // through the IQ: slot seq % 4 (at most 4 of them in flight)
          ok(uscope_cpu_buffer_insert(w, cpu, kIq, static_cast<uint16_t>(in.seq % 4), in.id), "iq insert");
          in.in_iq = true;
        }
      }
      if (in.done == c + 1 && !in.flush)
        ok(uscope_cpu_buffer_set(w, cpu, kRob, static_cast<uint16_t>(in.seq % 16), 1, 1), "completed");
    }
    // Fetch up to 2; a full ROB stalls.
    for (int k = 0; k < 2; ++k) {
      if (rob.size() == 16) {
        ok(uscope_cpu_stall(w, cpu, 0), "stall rob_full");
        break;
      }
      const uint32_t id = static_cast<uint32_t>(seq % 64);
      const uint64_t pc = 0x80000000u + 4 * (seq % 1024);
      ok(uscope_cpu_fetch(w, cpu, id, pc, 0x00000013u), "fetch");
      ok(uscope_cpu_buffer_insert(w, cpu, kRob, static_cast<uint16_t>(seq % 16), id), "rob insert");
      if (seq % 100 == 7) {
        std::snprintf(note, sizeof note, "hot \"loop\"\t#%llu", static_cast<unsigned long long>(seq));
        ok(uscope_cpu_annotate(w, cpu, id, note), "annotate");
      }
      if (seq % 3 == 0 && !rob.empty()) ok(uscope_cpu_dependency(w, cpu, rob.back().id, id, USCOPE_CPU_DEP_RAW), "dep");
      const uint64_t latency = seq % 7 == 0 ? 12 : 3 + seq % 3;
      rob.push_back({seq, c, c + latency, id, seq % 97 == 50, false});
      ++seq;
    }
    if (c % 50 == 25) ok(uscope_cpu_stall(w, cpu, 4), "stall fetch_miss");
    ok(uscope_end_cycle(w), "end_cycle");
  }
  ok(uscope_writer_close(w), "writer_close");
  uscope_cpu_free(cpu);
}

void write_npu(const std::string &dir) {
  const std::string jsonl = dir + "/npu.jsonl";
  std::ofstream f(jsonl);
  uint64_t t = 10;
  for (int c = 0; c < 6; ++c) {
    const std::string phase = c % 2 ? "MLP" : "ATTENTION_SCORE", layer = std::to_string(c / 3);
    const std::string cmd = std::to_string(c), te = std::to_string(t + 3), te_end = std::to_string(t + 20 + c);
    f << R"({"event_type":"CMD_ENQUEUE","t_cycle":)" << t << R"(,"cmd_id":)" << cmd
      << R"(,"cmd_type":"MATMUL","source":"ISA","token":)" << cmd << R"(,"desc_addr":4096,"layer_id":)" << layer
      << R"(,"block_id":)" << layer << R"(,"phase":")" << phase << R"(","model_name":"llama2_7b"})" "\n";
    f << R"({"event_type":"CMD_START","t_cycle":)" << t + 2 << R"(,"cmd_id":)" << cmd << R"(,"core_id":0})" "\n";
    f << R"({"event_type":"TE_START","t_cycle":)" << te << R"(,"job_id":)" << cmd << R"(,"cmd_id":)" << cmd
      << R"(,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":")" << phase << R"(","layer_id":)"
      << layer << R"(,"core_id":0})" "\n";
    f << R"({"event_type":"TE_END","t_cycle":)" << te_end << R"(,"job_id":)" << cmd << R"(,"cmd_id":)" << cmd
      << R"(,"mac_count":1048576,"latency_cycles":)" << 17 + c << R"(,"phase":")" << phase << R"(","layer_id":)"
      << layer << R"(,"core_id":0})" "\n";
    f << R"({"event_type":"CMD_END","t_cycle":)" << t + 22 + c << R"(,"cmd_id":)" << cmd
      << R"(,"status":"OK","core_id":0})" "\n";
    t += 15;
  }
  f.close();
  ok(uscope_convert(nullptr, jsonl.c_str(), USCOPE_CONVERT_JSONL, (dir + "/npu.uscope").c_str(), USCOPE_CONVERT_USCOPE,
                    nullptr),
     "convert npu");
}

// A crossbar of 8 ports over kNocCycles cycles: transaction i issued at
// cycle 2i from port i % 4 to port 4 + i % 3, completed 5 + (7i mod 23)
// cycles later; a retry (by reason i % 5) every 7th, a timeout every 11th,
// credits granted and consumed on the destination ports.
void write_noc(const std::string &path) {
  const char *const stages[] = {"issue", "route", "deliver"};
  uscope_schema_t *s = nullptr;
  ok(uscope_schema_new(&s), "schema_new");
  ok(uscope_schema_add_clock(s, nullptr, "clk", 1000), "add_clock");
  ok(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), "add_scope");
  uscope_noc_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = "xbar";
  cfg.parent_scope_id = 0;
  cfg.clock_id = USCOPE_CLOCK_INHERIT;
  cfg.bus_protocol = "AXI4";
  cfg.topology = "crossbar";
  cfg.stages = stages;
  cfg.num_stages = 3;
  cfg.max_txns = 256;
  cfg.num_ports = 8;
  uscope_noc_t *noc = nullptr;
  ok(uscope_noc_declare(s, &noc, &cfg), "noc_declare");
  uscope_writer_t *w = nullptr;
  ok(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), "writer_open noc");
  uscope_schema_free(s);
  const uint32_t ntx = static_cast<uint32_t>(kNocCycles / 2 - 20);
  for (uint64_t c = 0; c < kNocCycles; ++c) {
    ok(uscope_begin_cycle(w, c * 1000), "begin_cycle");
    for (uint32_t i = 0; i < ntx; ++i)
      if (2 * i + 5 + (7 * i) % 23 == c) ok(uscope_noc_complete(w, noc, i), "noc_complete");
    if (c % 2 == 0 && c / 2 < ntx) {
      const uint32_t i = static_cast<uint32_t>(c / 2);
      ok(uscope_noc_issue(w, noc, i, 0, 0x1000 + 64 * i, 1, 3, static_cast<uint16_t>(i % 4),
                          static_cast<uint16_t>(4 + i % 3)),
         "noc_issue");
      if (i % 7 == 0) ok(uscope_noc_retry(w, noc, i, static_cast<uint8_t>(i % 5)), "noc_retry");
      if (i % 11 == 0) ok(uscope_noc_timeout(w, noc, i, 4), "noc_timeout");
      ok(uscope_noc_link_credit(w, noc, static_cast<uint16_t>(4 + i % 3), USCOPE_NOC_CREDIT_CONSUME, 1), "credit");
      if (i % 4 == 0) ok(uscope_noc_link_credit(w, noc, static_cast<uint16_t>(4 + i % 3), USCOPE_NOC_CREDIT_GRANT, 4),
                         "credit");
    }
    ok(uscope_end_cycle(w), "end_cycle");
  }
  ok(uscope_writer_close(w), "writer_close noc");
  uscope_noc_free(noc);
}

// ── what the C API says ──

void latency_json(Json &j, const char *key, const uscope_latency_t &l) {
  j.key(key);
  j.begin_object();
  j.field("count", l.count);
  if (l.count) {
    j.field("min", l.min);
    j.field("max", l.max);
    j.field("mean", l.mean);
    j.field("p50", l.p50);
    j.field("p90", l.p90);
    j.field("p99", l.p99);
    j.field("exact", l.exact != 0);
  }
  j.end_object();
}

// The noc analysis over [start, end], as the client compares it.
void noc_json(Json &j, uscope_noc_analysis_t *a, uint64_t start, uint64_t end) {
  uscope_noc_report_t rep{};
  rep.struct_size = sizeof rep;
  ok(uscope_noc_analyze(a, &rep, start, end), "noc_analyze");
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("max_cycle", rep.max_cycle);
  j.field("completed", rep.counts.completed);
  j.field("unknown_issue", rep.counts.unknown_issue);
  j.field("retries", rep.counts.retries);
  j.field("timeouts", rep.counts.timeouts);
  j.field("credit_stalls", rep.counts.credit_stalls);
  j.field("in_flight", rep.in_flight);
  j.key("retries_by_reason");
  j.begin_array();
  for (uint64_t v : rep.retries_by_reason) j.num(v);
  j.end_array();
  latency_json(j, "hop_latency", rep.latency);
  latency_json(j, "end_to_end_latency", rep.end_to_end);
  j.key("pairs");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_pairs; ++i) {
    j.begin_object();
    j.field("src_port", rep.pairs[i].src_port);
    j.field("dst_port", rep.pairs[i].dst_port);
    j.field("completed", rep.pairs[i].counts.completed);
    j.field("retries", rep.pairs[i].counts.retries);
    latency_json(j, "latency", rep.pairs[i].latency);
    j.end_object();
  }
  j.end_array();
  j.key("ports");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_ports; ++i) {
    j.begin_object();
    j.field("port", rep.ports[i].port);
    j.field("grants", rep.ports[i].grants);
    j.field("consumes", rep.ports[i].consumes);
    j.field("credits_granted", rep.ports[i].credits_granted);
    j.field("credits_consumed", rep.ports[i].credits_consumed);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

// The npu analysis over [start, end]: the range, engines, command latency and npu-report's JSON.
void npu_json(Json &j, uscope_npu_analysis_t *a, uint64_t start, uint64_t end) {
  uscope_npu_report_t rep{};
  rep.struct_size = sizeof rep;
  ok(uscope_npu_analyze(a, &rep, start, end), "npu_analyze");
  j.begin_object();
  j.key("range");
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("range_cycles", rep.range_cycles);
  j.end_object();
  j.key("engines");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_engines; ++i) {
    j.begin_object();
    j.field("name", rep.engines[i].name);
    j.field("jobs", rep.engines[i].jobs);
    j.field("busy_cycles", rep.engines[i].busy_cycles);
    j.field("utilization", rep.engines[i].utilization);
    j.end_object();
  }
  j.end_array();
  latency_json(j, "command_latency", rep.command_latency);
  size_t n = std::strlen(rep.json);
  while (n && (rep.json[n - 1] == '\n' || rep.json[n - 1] == ' ')) --n;
  j.key("report");
  j.raw(rep.json, n);
  j.end_object();
}


std::string stage_name(uscope_cpu_trace_t *t, uint32_t i) {
  const char *n = nullptr;
  ok(uscope_cpu_trace_stage(t, &n, i), "stage");
  return n;
}

void buffers_json(Json &j, uscope_cpu_trace_t *t, uint64_t cycle, uint32_t nbuf, bool slots) {
  uscope_buffer_state_t *bs = nullptr;
  ok(uscope_cpu_trace_buffers_at(t, &bs, cycle), "buffers_at");
  j.begin_array();
  for (uint32_t b = 0; b < nbuf; ++b) {
    uscope_buffer_info_t bi{};
    ok(uscope_cpu_trace_buffer(t, &bi, b), "buffer");
    uscope_buffer_fill_t f{};
    ok(uscope_buffer_state_fill(bs, &f, b), "fill");
    j.begin_object();
    j.field("name", bi.name);
    j.field("capacity", f.capacity);
    j.field("occupied", f.occupied);
    j.key("fill_percent");
    j.real(f.fill_percent);
    if (slots) {
      j.key("slots");
      j.begin_array();
      for (uint32_t i = 0; i < f.occupied; ++i) {
        uscope_buffer_slot_t sl{};
        ok(uscope_buffer_state_slot(bs, &sl, b, i), "slot");
        j.begin_object();
        j.field("slot", sl.slot);
        j.key("fields");
        j.begin_array();
        for (uint32_t k = 0; k < sl.num_fields; ++k) j.num(sl.fields[k]);
        j.end_array();
        j.end_object();
      }
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
  uscope_buffer_state_free(bs);
}

// An event's field, decoded by name with the reader's tables.
void event_field(Json &j, uscope_reader_t *r, const uscope_field_info_t &f, const uint8_t *payload) {
  uint64_t v = 0;
  std::memcpy(&v, payload + f.offset, f.size);
  const char *name = nullptr;
  uint32_t len = 0;
  if (f.type == USCOPE_FT_ENUM && uscope_reader_enum_value(r, &name, f.enum_id, static_cast<uint32_t>(v)) == USCOPE_OK)
    j.str(name);
  else if (f.type == USCOPE_FT_STRING_REF && uscope_reader_string(r, &name, &len, static_cast<uint32_t>(v)) == USCOPE_OK)
    j.str(std::string(name, len));
  else if (f.type >= USCOPE_FT_I8 && f.type <= USCOPE_FT_I64 && f.size < 8 && (v >> (f.size * 8 - 1)) & 1)
    j.snum(static_cast<int64_t>(v | (~uint64_t{0} << (f.size * 8))));
  else
    j.num(v);
}

void print_expected(const std::string &cpu_path, const std::string &npu_path, const std::string &noc_path) {
  uscope_reader_t *r = nullptr;
  ok(uscope_reader_open(&r, cpu_path.c_str()), "reader_open");
  uscope_cpu_trace_t *t = nullptr;
  ok(uscope_cpu_trace_open(&t, r, nullptr), "cpu_trace_open");
  uscope_cpu_trace_info_t info{};
  info.struct_size = sizeof info;
  ok(uscope_cpu_trace_info(t, &info), "info");
  Json j;
  j.begin_object();
  j.field("cpu_trace", cpu_path.c_str());
  j.field("npu_trace", npu_path.c_str());
  j.field("noc_trace", noc_path.c_str());

  j.key("file_info");
  j.begin_object();
  j.field("version", info.version);
  j.field("segment_count", info.segment_count);
  j.field("total_instructions", info.total_instructions);
  j.field("max_cycle", info.max_cycle);
  j.field("period_ps", info.period_ps);
  j.key("stage_names");
  j.begin_array();
  for (uint32_t i = 0; i < info.num_stages; ++i) j.str(stage_name(t, i));
  j.end_array();
  j.key("counter_names");
  j.begin_array();
  for (uint32_t i = 0; i < info.num_counters; ++i) {
    uscope_counter_info_t c{};
    ok(uscope_cpu_trace_counter(t, &c, i), "counter");
    j.str(c.name);
  }
  j.end_array();
  j.key("buffers");
  j.begin_array();
  for (uint32_t i = 0; i < info.num_buffers; ++i) {
    uscope_buffer_info_t b{};
    ok(uscope_cpu_trace_buffer(t, &b, i), "buffer");
    j.begin_object();
    j.field("name", b.name);
    j.field("capacity", b.capacity);
    j.field("storage_id", b.storage_id);
    j.end_object();
  }
  j.end_array();
  j.field("num_metadata", info.num_metadata);
  j.end_object();

  j.key("state_at_cycle");
  j.begin_object();
  j.field("cycle", kStateCycle);
  j.key("buffers");
  buffers_json(j, t, kStateCycle, info.num_buffers, true);
  j.end_object();

  j.key("buffer_occupancy");
  j.begin_object();
  j.field("buffer", "rob");
  j.field("cycle", kStateCycle);
  j.key("buffers");
  buffers_json(j, t, kStateCycle, 1, true);  // rob is buffer 0; no other name contains "rob"
  j.end_object();

  j.key("entity_timeline");
  j.begin_object();
  j.field("entity_id", kEntity);
  j.key("results");
  j.begin_array();
  uscope_insn_iter_t *it = nullptr;
  ok(uscope_cpu_trace_entity(t, &it, static_cast<uint32_t>(kEntity), 0, UINT64_MAX), "entity");
  uscope_insn_t in{};
  uscope_status_t st;
  uint64_t total = 0;
  while ((st = uscope_insn_iter_next(it, &in)) == USCOPE_OK) {
    ++total;
    if (total > 100) continue;  // the tool's default limit
    j.begin_object();
    j.field("entity_id", in.entity_id);
    j.field("sim_id", in.sim_id);
    j.field("pc", in.pc);
    j.field("disasm", in.disasm);
    j.field("first_cycle", in.first_cycle);
    j.field("last_cycle", in.last_cycle);
    j.field("retire_status", in.status == USCOPE_INSN_RETIRED   ? "retired"
                             : in.status == USCOPE_INSN_FLUSHED ? "flushed"
                                                                : "in_flight");
    j.field("tooltip", in.annotations);
    j.key("stages");
    j.begin_array();
    for (uint32_t k = 0; k < in.num_stages; ++k) {
      j.begin_object();
      j.field("name", stage_name(t, in.stages[k].stage));
      j.field("start_cycle", in.stages[k].start_cycle);
      j.field("end_cycle", in.stages[k].end_cycle);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  if (st != USCOPE_DONE) die("insn iter");
  uscope_insn_iter_free(it);
  j.end_array();
  j.field("total", total);
  j.end_object();

  j.key("counter_values");
  j.begin_object();
  j.field("counter", "committed_insns");
  j.field("start_cycle", kCounterStart);
  j.field("end_cycle", kCounterEnd);
  j.key("values");
  j.begin_array();
  for (uint64_t c = kCounterStart; c <= kCounterEnd; ++c) {
    uint64_t v = 0;
    ok(uscope_cpu_trace_counter_value(t, &v, 0, c), "counter_value");
    j.num(v);
  }
  j.end_array();
  j.end_object();

  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  ok(uscope_cpu_trace_analyze(t, &rep, kAnalyzeStart, kAnalyzeEnd), "analyze");
  j.key("analyze_performance");
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("range_cycles", rep.range_cycles);
  j.field("total", rep.total);
  j.field("retired", rep.retired);
  j.field("flushed", rep.flushed);
  j.field("in_flight", rep.in_flight);
  j.key("flush_rate");
  j.real(rep.flush_rate);
  j.field("retired_in_range", rep.retired_in_range);
  j.key("ipc");
  j.real(rep.ipc);
  j.key("commit_ipc");
  j.real(rep.commit_ipc);
  j.key("counter_deltas");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_counters; ++i) j.num(rep.counters[i].delta);
  j.end_array();
  j.key("buffer_occupied");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_buffers; ++i) {
    j.begin_array();
    for (int k = 0; k < 3; ++k) j.num(rep.buffers[i].occupied[k]);
    j.end_array();
  }
  j.end_array();
  j.key("stage_latencies");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_stages; ++i) {
    j.begin_object();
    j.field("name", stage_name(t, rep.stages[i].stage));
    j.field("instruction_count", rep.stages[i].count);
    j.field("total_cycles", rep.stages[i].total_cycles);
    j.key("avg_latency");
    j.real(rep.stages[i].avg_latency);
    j.end_object();
  }
  j.end_array();
  j.end_object();

  // find_stalls: the stall reasons of the analysis, and the full cycles of each buffer.
  ok(uscope_cpu_trace_analyze(t, &rep, kStallsStart, kStallsEnd), "analyze");
  j.key("find_stalls");
  j.begin_object();
  j.field("start_cycle", kStallsStart);
  j.field("end_cycle", kStallsEnd);
  j.key("stall_reasons");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_stalls; ++i) {
    j.begin_object();
    j.field("name", rep.stalls[i].name);
    j.field("count", rep.stalls[i].count);
    j.end_object();
  }
  j.end_array();
  std::vector<uint64_t> full(info.num_buffers);
  for (uint64_t c = kStallsStart; c < kStallsEnd; ++c) {
    uscope_buffer_state_t *bs = nullptr;
    ok(uscope_cpu_trace_buffers_at(t, &bs, c), "buffers_at");
    for (uint32_t b = 0; b < info.num_buffers; ++b) {
      uscope_buffer_fill_t f{};
      ok(uscope_buffer_state_fill(bs, &f, b), "fill");
      if (f.capacity && f.occupied == f.capacity) ++full[b];
    }
    uscope_buffer_state_free(bs);
  }
  j.key("full_cycles");  // by buffer name, buffers never full left out
  j.begin_object();
  for (uint32_t b = 0; b < info.num_buffers; ++b) {
    if (!full[b]) continue;
    uscope_buffer_info_t bi{};
    ok(uscope_cpu_trace_buffer(t, &bi, b), "buffer");
    j.field(bi.name, full[b]);
  }
  j.end_object();
  j.end_object();
  uscope_cpu_trace_close(t);

  // events_in_range: the events of [start, end] cycles, by the reader.
  j.key("events_in_range");
  j.begin_object();
  j.field("start_cycle", kEventsStart);
  j.field("end_cycle", kEventsEnd);
  j.field("limit", kEventsLimit);
  j.key("events");
  j.begin_array();
  uscope_event_iter_t *ei = nullptr;
  ok(uscope_reader_events_in_range(r, &ei, kEventsStart * info.period_ps, (kEventsEnd + 1) * info.period_ps - 1),
     "events_in_range");
  uscope_event_t ev{};
  uint64_t nev = 0;
  while ((st = uscope_event_iter_next(ei, &ev)) == USCOPE_OK) {
    if (nev++ >= kEventsLimit) continue;
    uscope_event_type_info_t et{};
    ok(uscope_reader_event_type(r, &et, ev.event_type_id), "event_type");
    j.begin_object();
    j.field("cycle", ev.time_ps / info.period_ps);
    j.field("time_ps", ev.time_ps);
    j.field("type", et.name);
    j.key("fields");
    j.begin_object();
    for (uint16_t k = 0; k < et.num_fields; ++k) {
      uscope_field_info_t f{};
      ok(uscope_reader_event_field(r, &f, ev.event_type_id, k), "event_field");
      j.key(f.name);
      event_field(j, r, f, ev.payload);
    }
    j.end_object();
    j.end_object();
  }
  if (st != USCOPE_DONE) die("events");
  uscope_event_iter_free(ei);
  j.end_array();
  j.field("total", nev);
  j.end_object();
  uscope_reader_close(r);

  // npu_summary: the npu report of the npu trace.
  char *report = nullptr;
  ok(uscope_convert_npu_report(&report, nullptr, npu_path.c_str(), USCOPE_CONVERT_USCOPE, nullptr, 1), "npu report");
  size_t n = std::strlen(report);
  while (n && (report[n - 1] == '\n' || report[n - 1] == ' ')) --n;
  j.key("npu_summary");
  j.raw(report, n);
  uscope_convert_free(report);

  // npu_summary's figures by the npu analysis: the whole trace and a range.
  uscope_reader_t *nr = nullptr;
  ok(uscope_reader_open(&nr, npu_path.c_str()), "reader_open npu");
  uscope_npu_analysis_t *na = nullptr;
  ok(uscope_npu_analysis_open(&na, nr), "npu_analysis_open");
  j.key("npu_analysis");
  npu_json(j, na, 0, UINT64_MAX);
  j.key("npu_range");
  j.begin_object();
  j.field("start_cycle", kNpuStart);
  j.field("end_cycle", kNpuEnd);
  j.key("analysis");
  npu_json(j, na, kNpuStart, kNpuEnd);
  j.end_object();
  uscope_npu_analysis_close(na);
  uscope_reader_close(nr);

  // noc_latency: the noc analysis, the whole trace and a range.
  uscope_reader_t *cr = nullptr;
  ok(uscope_reader_open(&cr, noc_path.c_str()), "reader_open noc");
  uscope_noc_analysis_t *ca = nullptr;
  ok(uscope_noc_analysis_open(&ca, cr), "noc_analysis_open");
  j.key("noc_latency");
  noc_json(j, ca, 0, UINT64_MAX);
  j.key("noc_range");
  j.begin_object();
  j.field("start_cycle", kNocStart);
  j.field("end_cycle", kNocEnd);
  j.key("analysis");
  noc_json(j, ca, kNocStart, kNocEnd);
  j.end_object();
  uscope_noc_analysis_close(ca);
  uscope_reader_close(cr);
  j.end_object();
  j.end();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: uscope_mcp_expect DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  write_cpu(dir + "/cpu.uscope");
  write_npu(dir);
  write_noc(dir + "/noc.uscope");
  print_expected(dir + "/cpu.uscope", dir + "/npu.uscope", dir + "/noc.uscope");
  return 0;
}
