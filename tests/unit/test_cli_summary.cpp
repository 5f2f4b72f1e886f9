// `uscope summary` figures say what they count: on the README demo
// (examples/pipeline.c, run here), on cpu scopes that trace retirement only
// through the entity catalog, or not at all (n/a with the reason, not 0),
// and its errors on files it does not read. Also npu-report's. npu scopes
// whose commands have no cmd_type and whose TE jobs have no mac_count (files
// converted from pccx) print names and counts, never `?` or a wrapped sum.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <string>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::CliRun;
using uscope::test::TempDir;

CliRun cli(const std::string &args, bool merge_stderr = false) { return uscope::test::run_cli(args, merge_stderr); }

std::string grouped(unsigned long long v) {
  std::string d = std::to_string(v), o;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) o += ',';
    o += d[i];
  }
  return o;
}

#ifndef USCOPE_EXAMPLE_PIPELINE
#define USCOPE_EXAMPLE_PIPELINE "(examples not built: configure with -DUSCOPE_BUILD_EXAMPLES=ON)"
#endif

// The example prints "N instructions retired, S load-use stalls, F flushes
// (Q instructions squashed)"; the summary of its trace must find the same.
TEST(CliSummary, ExamplePipelineShowsItsRetirementFlushesAndStalls) {
  TempDir d("summary_example");
  const std::string trace = d.file("pipeline.uscope");
  const std::string cmd = std::string(USCOPE_EXAMPLE_PIPELINE) + " " + trace;
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << cmd << "\n" << out;
  unsigned long long retired = 0, stalls = 0, flushes = 0, squashed = 0;
  const auto at = out.find("cycles: ");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + at,
                        "cycles: %llu instructions retired, %llu load-use stalls, %llu flushes (%llu instructions "
                        "squashed)",
                        &retired, &stalls, &flushes, &squashed),
            4)
      << out;
  ASSERT_GT(retired, 1000u);
  ASSERT_GT(flushes, 100u);
  ASSERT_GT(squashed, flushes);  // a taken branch squashes up to two younger instructions

  const CliRun r = cli("summary " + trace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser parser;
  auto j = parser.parse(r.out);
  ASSERT_FALSE(j.error()) << r.out;
  auto c = j.value()["cpu"].at(0);
  EXPECT_EQ(std::string_view(c["scope"]), "core0");
  EXPECT_EQ(uint64_t(c["instructions_retired"]), retired);
  EXPECT_EQ(std::string_view(c["retired_source"]), "counter committed_insns");
  EXPECT_EQ(uint64_t(c["cycles"]), 10000u);
  EXPECT_DOUBLE_EQ(double(c["ipc"]), static_cast<double>(retired) / 10000.0);
  EXPECT_EQ(uint64_t(c["pipeline_flushes"]), flushes);
  EXPECT_EQ(uint64_t(c["instructions_squashed"]), squashed);
  EXPECT_EQ(uint64_t(c["stall_events"]), stalls);

  const CliRun text = cli("summary " + trace);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("instructions retired  " + grouped(retired) + " (counter committed_insns)"),
            std::string::npos)
      << text.out;
}

// A cpu scope written with the raw API, with or without its parts: a
// counter (by the given name), the entity catalog, a flush event. Over 6
// cycles it fetches entities 0..3, retires 0 and 1 (clear), and squashes 2
// (flush event, then clear); 3 stays in flight.
struct RawCpu {
  const char *counter = nullptr;  // nullptr: none
  bool catalog = true, clears = true;
  uint32_t clock_ps = 500;  // the clock's declared period (cycles are 500 ps apart whatever it says)
};
std::string write_raw_cpu(const TempDir &d, const char *name, const RawCpu &o) {
  const std::string path = d.file(name);
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0, reason = 0;
  uint16_t root = 0, core = 0, entities = 0, counter = 0, flush = 0, stage = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", o.clock_ps), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &core, "core0", root, "cpu", USCOPE_CLOCK_INHERIT), USCOPE_OK);
  const char *reasons[] = {"mispredict"};
  EXPECT_EQ(uscope_schema_add_enum(s, &reason, "flush_reason", reasons, 1), USCOPE_OK);
  if (o.catalog) {
    const uscope_field_t f[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0},
                                {"inst_bits", USCOPE_FT_U32, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_storage(s, &entities, "entities", core, 8, USCOPE_SF_SPARSE, f, 3, nullptr, 0),
              USCOPE_OK);
  }
  if (o.counter) {
    const uscope_field_t f[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
    EXPECT_EQ(uscope_schema_add_storage(s, &counter, o.counter, core, 1, 0, f, 1, nullptr, 0), USCOPE_OK);
  }
  const uscope_field_t fl[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}, {"reason", USCOPE_FT_ENUM, reason, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &flush, "flush", core, fl, 2), USCOPE_OK);
  const uscope_field_t st[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &stage, "stage_transition", core, st, 1), USCOPE_OK);
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  for (uint16_t c = 0; c < 6; ++c) {
    EXPECT_EQ(uscope_begin_cycle(w, c * 500ull), USCOPE_OK);
    const uint8_t ev[4] = {static_cast<uint8_t>(c), 0, 0, 0};
    EXPECT_EQ(uscope_event(w, stage, ev, 4), USCOPE_OK);
    if (c < 4 && o.catalog) {
      EXPECT_EQ(uscope_slot_set(w, entities, c, 0, c), USCOPE_OK);
      EXPECT_EQ(uscope_slot_set(w, entities, c, 1, 0x1000 + 4 * c), USCOPE_OK);
    }
    if ((c == 4 || c == 5) && o.catalog && o.clears) {  // entities 0 and 1 retire
      EXPECT_EQ(uscope_slot_clear(w, entities, c - 4), USCOPE_OK);
    }
    if ((c == 4 || c == 5) && o.counter) {
      EXPECT_EQ(uscope_slot_add(w, counter, 0, 0, 1), USCOPE_OK);
    }
    if (c == 5) {  // entity 2 is squashed: the event, then the clear (cpu §3.4)
      const uint8_t p[5] = {2, 0, 0, 0, 0};
      EXPECT_EQ(uscope_event(w, flush, p, 5), USCOPE_OK);
      if (o.catalog && o.clears) {
        EXPECT_EQ(uscope_slot_clear(w, entities, 2), USCOPE_OK);
      }
    }
    EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  return path;
}

simdjson::dom::element summary_cpu(simdjson::dom::parser &p, const std::string &path, std::string *text) {
  const CliRun r = cli("summary " + path + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = p.parse(r.out);
  EXPECT_FALSE(j.error()) << r.out;
  const CliRun t = cli("summary " + path);
  EXPECT_EQ(t.exit_code, 0) << t.out;
  *text = t.out;
  return j.value()["cpu"].at(0);
}

// Retirement from the roles of the cpu protocol, whatever the counter's name.
TEST(CliSummary, RetirementFromACommittedCounterOrTheEntityCatalog) {
  TempDir d("summary_roles");
  simdjson::dom::parser p1, p2;
  std::string text;
  // cpu §10's examples name the counter "committed".
  auto a = summary_cpu(p1, write_raw_cpu(d, "a.uscope", {"committed", true, true}), &text);
  EXPECT_EQ(uint64_t(a["instructions_retired"]), 2u);
  EXPECT_EQ(std::string_view(a["retired_source"]), "counter committed");
  EXPECT_NE(text.find("instructions retired  2 (counter committed); IPC 0.333"), std::string::npos) << text;
  // No counter: the entity catalog's clears without a flush event.
  auto b = summary_cpu(p2, write_raw_cpu(d, "b.uscope", {nullptr, true, true}), &text);
  EXPECT_EQ(uint64_t(b["instructions_retired"]), 2u);
  EXPECT_EQ(std::string_view(b["retired_source"]), "entity catalog entities: slots cleared without a flush event");
  EXPECT_EQ(uint64_t(b["instructions_squashed"]), 1u);
  EXPECT_EQ(uint64_t(b["pipeline_flushes"]), 1u);
  EXPECT_NE(text.find("instructions retired  2 (entity catalog entities: slots cleared without a flush event)"),
            std::string::npos)
      << text;
}

// COMPAT 29: konata2uscope --clock-period-ps P writes cycle * P but leaves
// the clock at 1000 ps. Cycles are then counted on the step the timestamps
// follow (500 ps here), with a warning, in every command that shows them.
TEST(CliSummary, CyclesFollowTheTimestampsWhenTheyAreOffTheClockGrid) {
  TempDir d("summary_grid");
  const std::string path = write_raw_cpu(d, "grid.uscope", {"committed_insns", true, true, 1000});
  simdjson::dom::parser p;
  std::string text;
  auto cpu = summary_cpu(p, path, &text);
  EXPECT_EQ(uint64_t(cpu["cycles"]), 6u);  // 0..2500 ps in 500 ps steps (the clock's 1000 ps would say 3)
  const CliRun warned = cli("summary " + path, true);
  EXPECT_NE(warned.out.find("timestamps follow a 500 ps step, not the clock's 1000 ps"), std::string::npos)
      << warned.out;
  // Counted per frame whose step from the one before is not a whole number
  // of clock periods: each of the 5 steps of 500 ps.
  EXPECT_NE(warned.out.find("off_clock_grid x5"), std::string::npos) << warned.out;
  // state --cycle N is N steps of 500 ps.
  const CliRun st = cli("state " + path + " --cycle 3 --json");
  ASSERT_EQ(st.exit_code, 0) << st.out;
  EXPECT_NE(st.out.find("\"time_ps\":1500"), std::string::npos) << st.out;
  // check names it, with the step.
  simdjson::dom::parser pc;
  const CliRun c = cli("check --json " + path);
  EXPECT_EQ(c.exit_code, 1) << c.out;
  auto doc = pc.parse(c.out);
  ASSERT_FALSE(doc.error()) << c.out;
  EXPECT_EQ(uint64_t(doc.value()["time_grid_ps"]), 500u);
  EXPECT_EQ(std::string_view(doc.value()["defects"].at(0)["kind"]), "off_clock_grid");
  EXPECT_EQ(uint64_t(doc.value()["defects"].at(0)["count"]), 5u);
}

// What the trace cannot tell is n/a with the reason, not 0.
TEST(CliSummary, RetiredIsNotAvailableWithTheReason) {
  TempDir d("summary_na");
  simdjson::dom::parser p1, p2;
  std::string text;
  auto a = summary_cpu(p1, write_raw_cpu(d, "none.uscope", {nullptr, false, false}), &text);
  EXPECT_TRUE(a["instructions_retired"].is_null());
  EXPECT_TRUE(a["ipc"].is_null());
  EXPECT_EQ(std::string_view(a["retired_unavailable"]),
            "no counter with the committed role (committed_insns, or committed) in scope 'core0', and no entity "
            "catalog 'entities' (sparse) in it");
  EXPECT_NE(text.find("instructions retired  n/a (no counter with the committed role (committed_insns, or "
                      "committed) in scope 'core0', and no entity catalog 'entities' (sparse) in it); IPC n/a"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("retired  0"), std::string::npos) << text;
  // A catalog that is filled but never cleared says nothing about retirement.
  auto b = summary_cpu(p2, write_raw_cpu(d, "noclear.uscope", {nullptr, true, false}), &text);
  EXPECT_TRUE(b["instructions_retired"].is_null());
  EXPECT_EQ(std::string_view(b["retired_unavailable"]),
            "no counter with the committed role (committed_insns, or committed) in scope 'core0', and no slot of its "
            "entity catalog 'entities' was cleared without a flush event (4 fetched)");
}

// Files summary does not read: the error names the file, what summary
// expected and what reads the file instead.
TEST(CliSummary, ErrorsNameTheFileAndTheKindsAccepted) {
  TempDir d("summary_err");
  const std::string jsonl = d.file("run.jsonl");
  {
    std::ofstream f(jsonl);
    f << R"({"event_type":"CMD_START","t_cycle":1,"cmd_id":1})" "\n";
  }
  const CliRun j = cli("summary " + jsonl, true);
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_NE(j.out.find("uscope: " + jsonl + ": "), std::string::npos) << j.out;  // the reader's message, whole
  EXPECT_NE(j.out.find("magic"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("summary reads µScope traces (.uscope"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("uscope npu-report " + jsonl), std::string::npos) << j.out;
  const std::string pccx = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";
  const CliRun x = cli("summary " + pccx, true);
  EXPECT_EQ(x.exit_code, 1);
  EXPECT_NE(x.out.find("uscope: " + pccx + ": "), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("this is a pccx-lab .pccx container"), std::string::npos) << x.out;
  // A file that does not exist: the reader's message with the path, no hint.
  const CliRun m = cli("summary " + d.file("missing.uscope"), true);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.out.find("uscope: " + d.file("missing.uscope") + ": "), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("No such file"), std::string::npos) << m.out;
  EXPECT_EQ(m.out.find("summary reads"), std::string::npos) << m.out;

  const CliRun r = cli("npu-report " + d.file("run.txt"), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("uscope: npu-report: " + d.file("run.txt") +
                       ": unknown kind of file: expected a name ending in .jsonl, .jsonl.gz, .json or .json.gz (NPU "
                       "JSON-Lines), .uscope (a µScope trace with an npu scope) or .pccx (a pccx-lab container)"),
            std::string::npos)
      << r.out;
  const CliRun nf = cli("npu-report " + d.file("missing.jsonl"), true);
  EXPECT_EQ(nf.exit_code, 1);
  EXPECT_NE(nf.out.find(d.file("missing.jsonl")), std::string::npos) << nf.out;
}

// An npu scope written with the protocol's C API, as a file converted from
// pccx has it: commands without a cmd_type (named by their phase: their
// cmd_enqueue's own, else their context's at the time of their cmd_enqueue
// or cmd_start; else "(no cmd_type)"), TE jobs whose mac_count is absent or
// null (USCOPE_NPU_ABSENT64 / USCOPE_NPU_NULL64: counted apart, not summed).
// One npu cycle is 1000 ps.
std::string write_npu_unnamed(const TempDir &d, const char *name, bool one_mac_count) {
  const std::string path = d.file(name);
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t root = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "npu_clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  uscope_npu_config_t nc{};
  nc.struct_size = sizeof nc;
  nc.scope_name = "npu0";
  nc.parent_scope_id = root;
  nc.clock_id = USCOPE_CLOCK_INHERIT;
  nc.queue_depth = 8;
  nc.num_te = 2;
  nc.num_ve = nc.num_dma_channels = 1;
  uscope_npu_t *npu = nullptr;
  EXPECT_EQ(uscope_npu_declare(s, &npu, &nc), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  const uint32_t A32 = USCOPE_NPU_ABSENT32;
  const uint16_t none = USCOPE_NPU_NO_CONTEXT;
  auto context = [&](uint16_t ctx, const char *phase) {
    EXPECT_EQ(uscope_npu_context(w, npu, ctx, 0, 0, A32, A32, A32, A32, A32, A32, phase), USCOPE_OK)
        << uscope_last_error();
  };
  auto enqueue = [&](uint16_t slot, uint16_t ctx, uint32_t id, const char *type, const char *phase) {
    EXPECT_EQ(uscope_npu_cmd_enqueue(w, npu, slot, ctx, id, type, USCOPE_NPU_SOURCE_ISA, A32,
                                     USCOPE_NPU_ABSENT64, A32, A32, phase),
              USCOPE_OK)
        << uscope_last_error();
  };
  for (uint64_t c = 0; c < 10; ++c) {
    EXPECT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
    switch (c) {
      case 0:
        context(1, "PREFILL");
        context(2, nullptr);  // a context without a phase
        enqueue(0, none, 1, "GEMM", nullptr);       // 1: its cmd_type
        enqueue(2, 1, 5, nullptr, nullptr);         // 5: no phase of its own nor in context 2 below...
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 0, none, 1), USCOPE_OK);
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 3, 1, 3), USCOPE_OK);     // 3: no enqueue, context 1
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 4, none, 4), USCOPE_OK);  // 4: no enqueue, no context
        EXPECT_EQ(uscope_npu_te_start(w, npu, 0, none, 10, 1, 2, 2, 2, 2, 2, 2), USCOPE_OK);
        break;
      case 1:
        enqueue(1, 1, 2, nullptr, "DECODE");  // 2: its own phase wins over context 1's
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 1, 1, 2), USCOPE_OK);
        EXPECT_EQ(uscope_npu_te_start(w, npu, 1, none, 11, 1, 2, 2, 2, 2, 2, 2), USCOPE_OK);
        break;
      case 2:
        // ...its enqueue named context 1 (PREFILL at that time) as cmd_start's context 2 has no phase:
        // the enqueue's context comes first.
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 2, 2, 5), USCOPE_OK);
        EXPECT_EQ(uscope_npu_te_end(w, npu, 0, none, 10, 1, USCOPE_NPU_ABSENT64, A32), USCOPE_OK);
        break;
      case 3:
        context(1, "LATER");  // redefined: commands started before keep PREFILL
        EXPECT_EQ(uscope_npu_te_end(w, npu, 1, none, 11, 1, USCOPE_NPU_NULL64, A32), USCOPE_OK);
        EXPECT_EQ(uscope_npu_te_start(w, npu, 0, none, 12, 1, 2, 2, 2, 2, 2, 2), USCOPE_OK);
        break;
      case 4:
        EXPECT_EQ(uscope_npu_cmd_start(w, npu, 5, 1, 6), USCOPE_OK);  // 6: context 1 is LATER now
        break;
      case 5:
        EXPECT_EQ(uscope_npu_te_end(w, npu, 0, none, 12, 1, one_mac_count ? 1000 : USCOPE_NPU_ABSENT64, A32),
                  USCOPE_OK);
        break;
      case 6:
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 0, none, 1, "OK"), USCOPE_OK);  // 6 cycles
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 1, 1, 2, "OK"), USCOPE_OK);     // 5
        break;
      case 7:
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 3, 1, 3, "OK"), USCOPE_OK);     // 7
        break;
      case 8:
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 4, none, 4, "OK"), USCOPE_OK);  // 8
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 2, 2, 5, "OK"), USCOPE_OK);     // 6
        break;
      case 9:
        EXPECT_EQ(uscope_npu_cmd_end(w, npu, 5, 1, 6, "OK"), USCOPE_OK);     // 5
        break;
    }
    EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_npu_free(npu);
  return path;
}

TEST(CliSummary, NpuCommandsWithoutCmdTypeAndJobsWithoutMacCount) {
  TempDir d("summary_npu_absent");
  const std::string some = write_npu_unnamed(d, "some.uscope", true);
  const CliRun t = cli("summary " + some);
  ASSERT_EQ(t.exit_code, 0) << t.out;
  EXPECT_EQ(t.out,
            "trace       9,000 ps\n"
            "npu npu0     6 commands; latency in npu cycles (count, mean, min, max):\n"
            "    (no cmd_type)        1        8.0        8        8\n"
            "    DECODE (phase)       1        5.0        5        5\n"
            "    GEMM                 1        6.0        6        6\n"
            "    LATER (phase)        1        5.0        5        5\n"
            "    PREFILL (phase)      2        6.5        6        7\n"
            "    tensor engine: 3 jobs on 2 job slots (storage te), 1,000 MACs (2 jobs had no mac_count)\n"
            "      busy (at least one job running) 55.6% of the 9,000 ps of the trace (9 npu cycles)\n"
            "      busy 55.6% of the 9,000 ps (9 npu cycles) during which at least one command was in flight\n"
            "      0.67 jobs running on average over the trace\n");
  simdjson::dom::parser p;
  const CliRun j = cli("summary " + some + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.out;
  auto doc = p.parse(j.out);
  ASSERT_FALSE(doc.error()) << j.out;
  auto n = doc.value()["npu"].at(0);
  EXPECT_EQ(uint64_t(n["te_macs"]), 1000u);
  EXPECT_EQ(uint64_t(n["te_jobs_without_mac_count"]), 2u);
  EXPECT_EQ(uint64_t(n["latency_cycles"]["(no cmd_type)"]["count"]), 1u);
  EXPECT_EQ(uint64_t(n["latency_cycles"]["PREFILL (phase)"]["count"]), 2u);
  EXPECT_EQ(j.out.find("\"?\""), std::string::npos) << j.out;

  // No TE job has a mac_count: the figure is n/a, not a sum of sentinels
  // (it was 18,446,744,073,709,551,614 + ... wrapped).
  const std::string none = write_npu_unnamed(d, "none.uscope", false);
  const CliRun u = cli("summary " + none);
  ASSERT_EQ(u.exit_code, 0) << u.out;
  EXPECT_NE(u.out.find("    tensor engine: 3 jobs on 2 job slots (storage te), MACs n/a (3 jobs had no mac_count)\n"),
            std::string::npos)
      << u.out;
  EXPECT_EQ(u.out.find('?'), std::string::npos) << u.out;
  EXPECT_EQ(u.out.find("18,446,744"), std::string::npos) << u.out;
  simdjson::dom::parser p2;
  const CliRun uj = cli("summary " + none + " --json");
  ASSERT_EQ(uj.exit_code, 0) << uj.out;
  auto doc2 = p2.parse(uj.out);
  ASSERT_FALSE(doc2.error()) << uj.out;
  EXPECT_TRUE(doc2.value()["npu"].at(0)["te_macs"].is_null()) << uj.out;
  EXPECT_EQ(uint64_t(doc2.value()["npu"].at(0)["te_jobs_without_mac_count"]), 3u);
}

// pccx-lab's dummy_trace.pccx through JSONL to .uscope: its API_CALL events
// are commands with a phase and no cmd_type, its MAC_COMPUTE events TE jobs
// without a mac_count.
TEST(CliSummary, ConvertedPccxTraceNamesCommandsByPhase) {
  TempDir d("summary_pccx");
  const std::string pccx = std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";
  ASSERT_EQ(cli("convert " + pccx + " -o " + d.file("d.jsonl")).exit_code, 0);
  ASSERT_EQ(cli("convert " + d.file("d.jsonl") + " -o " + d.file("d.uscope")).exit_code, 0);
  const CliRun t = cli("summary " + d.file("d.uscope"));
  ASSERT_EQ(t.exit_code, 0) << t.out;
  for (const char *want : {"npu npu0     8 commands; latency in npu cycles (count, mean, min, max):\n",
                           "    uca_get_perf_counters (phase)      1     1040.0     1040     1040\n",
                           "    uca_init (phase)                   1      820.0      820      820\n",
                           "(storage te), MACs n/a (3,200 jobs had no mac_count)\n"})
    EXPECT_NE(t.out.find(want), std::string::npos) << want << "\n" << t.out;
  EXPECT_EQ(t.out.find('?'), std::string::npos) << t.out;
}

}  // namespace
