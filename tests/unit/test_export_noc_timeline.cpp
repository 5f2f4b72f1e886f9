// NoC scopes on the timeline exporters (src/export/timeline_model.cpp over
// the noc analysis's decoder, analysis/noc_analysis.hpp visit_noc): a noc
// trace written with the uscope_noc_* helpers (three fabrics chained by
// txn_handoff, overlapping hops on one link, retries, timeouts, link
// credits, many segments) is exported to Perfetto and Chrome JSON, read
// back by the independent readers of tests/support/timeline_decode.hpp (and
// protoc --decode_raw), and compared with analyze_noc's report: slices per
// link with the hops it counts, flows with its handoffs, instants with its
// retries and timeouts, credit samples with its link_credit events.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/noc_analysis.hpp"
#include "reader/trace_reader.hpp"
#include "support/timeline_decode.hpp"
#include "test_protocol_util.hpp"
#include "uscope/export.h"

namespace {

using uscope::analysis::analyze_noc;
using uscope::analysis::NocOptions;
using uscope::analysis::NocReport;
using uscope::test::TempDir;
using namespace uscope::test::proto;
using namespace uscope::test::timeline;

const char *const kStages[] = {"issue", "route", "deliver"};
constexpr uint64_t kLast = 1200;  // the trace's last cycle

uscope_noc_config_t fabric(const char *name) { return noc_config(name, 0, "crossbar", kStages, 3, 64, 6); }

// A writer call that must succeed; a statement (braces-safe under if).
#define OK(call)                                                        \
  do {                                                                  \
    ASSERT_EQ((call), USCOPE_OK) << uscope_writer_error(w);             \
  } while (0)

// Every 10 cycles a chain fab0 -> d2d -> fab1 (the second handoff before
// the hop it names is issued); every 3 cycles a hop on fab0 port 5 -> 0
// lasting 7 (overlapping: lanes); retries, timeouts, retries of a
// transaction not live and link credits on fab0 port 4. Everything completes
// by kLast unless leave_open; a checkpoint every 40 cycles.
void write_noc_trace(const std::string &path, bool leave_open = false) {
  uscope_schema_t *s = base_schema(1000);
  uscope_noc_t *n[3] = {};
  const char *names[3] = {"fab0", "d2d", "fab1"};
  for (int i = 0; i < 3; ++i) {
    const uscope_noc_config_t c = fabric(names[i]);
    ASSERT_EQ(uscope_noc_declare(s, &n[i], &c), USCOPE_OK) << uscope_last_error();
  }
  const uint16_t A = ids_of(n[0]).scope_id, L = ids_of(n[1]).scope_id, B = ids_of(n[2]).scope_id;
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 40 * 1000;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  for (uint64_t c = 0; c <= kLast; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK) << uscope_writer_error(w);
    const uint64_t k = c / 10, ph = c % 10;
    const uint32_t slot = static_cast<uint32_t>(k % 32);
    if (k * 10 + 20 <= kLast) {  // chain k
      if (ph == 0)
        OK(uscope_noc_issue(w, n[0], slot, k % 2, 0x1000 + k * 64, 1, 3, static_cast<uint16_t>(k % 3),
                                   static_cast<uint16_t>(3 + k % 2)));
      if (ph == 2 && k % 7 == 0) OK(uscope_noc_timeout(w, n[0], slot, 2));
      if (ph == 4) {
        OK(uscope_noc_complete(w, n[0], slot));
        OK(uscope_noc_issue(w, n[1], slot, 0, 0x1000 + k * 64, 1, 3, 0, 1));
        OK(uscope_noc_txn_handoff(w, n[1], A, slot, L, slot));
      }
      if (ph == 7) {
        OK(uscope_noc_txn_handoff(w, n[1], L, slot, B, slot));
        OK(uscope_noc_complete(w, n[1], slot));
      }
      if (ph == 8) OK(uscope_noc_issue(w, n[2], slot, 1, 0x1000 + k * 64, 1, 3, 1, 2));
      if (ph == 9) OK(uscope_noc_retry(w, n[2], slot, static_cast<uint8_t>(k % 5)));
    }
    // fab1's hop of chain k - 1 completes as chain k starts.
    if (ph == 0 && k >= 1 && (k - 1) * 10 + 20 <= kLast)
      OK(uscope_noc_complete(w, n[2], static_cast<uint32_t>((k - 1) % 32)));
    if (leave_open && c == kLast - 5) {  // two hops never completed
      OK(uscope_noc_issue(w, n[1], 50, 0, 0x9000, 1, 3, 0, 1));
      OK(uscope_noc_issue(w, n[2], 50, 1, 0x9000, 1, 3, 1, 2));
    }
    // The overlapping hops on fab0, slots 32..63.
    if (c % 3 == 0 && c + 10 <= kLast)
      OK(uscope_noc_issue(w, n[0], static_cast<uint32_t>(32 + (c / 3) % 32), 0, 0x8000, 1, 3, 5, 0));
    if (c >= 7 && (c - 7) % 3 == 0 && c + 3 <= kLast)
      OK(uscope_noc_complete(w, n[0], static_cast<uint32_t>(32 + ((c - 7) / 3) % 32)));
    if (c % 50 == 25) OK(uscope_noc_retry(w, n[0], 31, USCOPE_NOC_RETRY_TARGET_BUSY));
    if (ph == 1) OK(uscope_noc_link_credit(w, n[0], 4, USCOPE_NOC_CREDIT_GRANT, 4));
    if (ph == 3 || ph == 6) OK(uscope_noc_link_credit(w, n[0], 4, USCOPE_NOC_CREDIT_CONSUME, 1));
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  for (uscope_noc_t *x : n) uscope_noc_free(x);
}

#undef OK

NocReport report(const std::string &path, uint64_t a = 0, uint64_t b = UINT64_MAX) {
  uscope::TraceReader r(path);
  NocOptions o;
  o.start_cycle = a;
  o.end_cycle = b;
  return analyze_noc(r, o);
}

// What the timeline must hold by the report: slices per link ("port S -> D"
// summed over the scopes) = the hops completed in the window plus those in
// flight at its end (a hop shows when it overlaps the window); instants =
// retries + timeouts; credit samples = link_credit events, the last one the
// net credits.
void check_against_report(const Timeline &t, const NocReport &r, bool all_flows) {
  std::map<std::string, uint64_t> links;
  for (const auto &p : r.pairs)
    links["port " + std::to_string(p.src_port) + " -> " + std::to_string(p.dst_port)] += p.counts.completed;
  uint64_t slices = 0;
  for (const auto &kv : t.slices) slices += kv.second;
  EXPECT_EQ(slices, r.counts.completed + r.in_flight);
  if (r.in_flight == 0) {
    EXPECT_EQ(t.slices, links);
  }
  uint64_t instants = 0;
  for (const auto &kv : t.instants) instants += kv.second;
  EXPECT_EQ(instants, r.counts.retries + r.counts.timeouts);
  EXPECT_GT(r.counts.retries, 0u);
  EXPECT_GT(r.counts.timeouts, 0u);
  // Flows: each id written at most once at each end; over the whole trace
  // both ends of every handoff, over a window those whose hops both show.
  for (uint64_t id : t.flow_out) EXPECT_EQ(t.flow_out.count(id), 1u);
  for (uint64_t id : t.flow_in) EXPECT_EQ(t.flow_in.count(id), 1u);
  if (all_flows) {
    EXPECT_EQ(t.flow_out, t.flow_in);
    EXPECT_EQ(t.flow_out.size(), r.handoffs);
  } else {
    uint64_t both = 0;
    for (uint64_t id : t.flow_out) both += t.flow_in.count(id);
    EXPECT_LE(both, r.handoffs);
    EXPECT_GT(both, r.handoffs / 2);
  }
  ASSERT_EQ(r.ports.size(), 1u);
  const auto &port = r.ports[0];
  const std::string ctr = "fab0 port 4 credits (net)";
  ASSERT_EQ(t.counters.count(ctr), 1u);
  const auto &samples = t.counters.at(ctr);
  EXPECT_EQ(samples.size(), port.grants + port.consumes);
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.back().second,
            static_cast<int64_t>(port.credits_granted) - static_cast<int64_t>(port.credits_consumed));
}

class NocTimeline : public ::testing::Test {
 protected:
  TempDir dir{"uscope_noc_timeline"};
  std::string trace = dir.file("noc.uscope");
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(write_noc_trace(trace)); }
};

TEST_F(NocTimeline, PerfettoMatchesTheNocReport) {
  const std::string out = dir.file("noc.pftrace");
  const uscope_export_stats_t st = run_export(trace, out, USCOPE_EXPORT_PERFETTO);
  const NocReport r = report(trace);
  ASSERT_EQ(r.in_flight, 0u);
  EXPECT_EQ(r.handoffs, 2 * ((kLast - 20) / 10 + 1));
  const Timeline t = decode_perfetto(out);
  ASSERT_NO_FATAL_FAILURE(check_protoc(out, t));
  ASSERT_NO_FATAL_FAILURE(check_against_report(t, r, true));
  // One process per noc scope, its clock in the name.
  ASSERT_EQ(t.processes.size(), 3u);
  for (const std::string &p : t.processes) EXPECT_NE(p.find("(noc, 1 ns = 1 cycle)"), std::string::npos) << p;
  // The overlapping hops of port 5 -> 0 went to lanes; names carry txn and opcode.
  EXPECT_EQ(t.slices.at("port 5 -> 0"), (kLast - 10) / 3 + 1);
  EXPECT_GT(t.slice_names.count("txn 0 read"), 0u);
  EXPECT_GT(t.slice_names.count("txn 1 write"), 0u);
  EXPECT_EQ(st.first_cycle, 0u);
  EXPECT_EQ(st.last_cycle, kLast);
  EXPECT_EQ(t.max_ts, (kLast - 10) / 3 * 3 + 7);  // the last hop of port 5 -> 0 ends there
}

TEST_F(NocTimeline, ChromeJsonMatchesTheNocReport) {
  const std::string out = dir.file("noc.json");
  run_export(trace, out, USCOPE_EXPORT_CHROME_JSON);
  const NocReport r = report(trace);
  const Timeline t = decode_chrome(out);
  ASSERT_NO_FATAL_FAILURE(check_against_report(t, r, true));
  EXPECT_EQ(t.processes.size(), 3u);
}

TEST_F(NocTimeline, RangeCutsToTheReportsWindow) {
  // A window starting and ending inside hops and chains, across segments.
  const uint64_t a = 333, b = 777;
  for (uint32_t fmt : {USCOPE_EXPORT_PERFETTO, USCOPE_EXPORT_CHROME_JSON}) {
    const std::string out = dir.file(fmt == USCOPE_EXPORT_PERFETTO ? "r.pftrace" : "r.json");
    const uscope_export_stats_t st = run_export(trace, out, fmt, a, b);
    const NocReport r = report(trace, a, b);
    EXPECT_GT(r.in_flight, 0u);
    const Timeline t = fmt == USCOPE_EXPORT_PERFETTO ? decode_perfetto(out) : decode_chrome(out);
    ASSERT_NO_FATAL_FAILURE(check_against_report(t, r, false));
    EXPECT_GE(t.min_ts, a);
    EXPECT_LE(t.max_ts, b + 1);
    EXPECT_EQ(st.first_cycle, a);
    EXPECT_EQ(st.last_cycle, b);
  }
}

TEST_F(NocTimeline, PicosecondsScaleAndScopeSelects) {
  const std::string out = dir.file("ps.pftrace");
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_PERFETTO;
  o.time_unit = USCOPE_TIME_PS;
  o.scope = "d2d";
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_export(&st, trace.c_str(), out.c_str(), &o), USCOPE_OK) << uscope_last_error();
  const Timeline t = decode_perfetto(out);
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_NE(t.processes[0].find("d2d (noc, 1 ns = 1 ps)"), std::string::npos) << t.processes[0];
  // d2d: one hop a chain, from cycle 10k + 4 to 10k + 7; handoffs into and out of it have one end here.
  EXPECT_EQ(t.slices.at("port 0 -> 1"), (kLast - 20) / 10 + 1);
  EXPECT_EQ(t.min_ts, 4000u);
  for (uint64_t ts : t.slice_ts) EXPECT_EQ(ts % 1000, 0u);
  // Each hop continues one handoff and is continued by one, whose other ends are not in this output.
  EXPECT_EQ(t.flow_in.size(), (kLast - 20) / 10 + 1);
  EXPECT_EQ(t.flow_out.size(), (kLast - 20) / 10 + 1);
}

TEST(NocTimelineOpen, HopsOpenAtTheEndShowToIt) {
  TempDir dir{"uscope_noc_timeline_open"};
  const std::string trace = dir.file("open.uscope");
  ASSERT_NO_FATAL_FAILURE(write_noc_trace(trace, true));
  const std::string out = dir.file("open.pftrace");
  run_export(trace, out, USCOPE_EXPORT_PERFETTO);
  const NocReport r = report(trace);
  EXPECT_GT(r.in_flight, 0u);
  const Timeline t = decode_perfetto(out);
  uint64_t slices = 0;
  for (const auto &kv : t.slices) slices += kv.second;
  EXPECT_EQ(slices, r.counts.completed + r.in_flight);
  uint64_t open = 0;
  for (const auto &kv : t.slice_names)
    if (kv.first.find("(open)") != std::string::npos) open += kv.second;
  EXPECT_EQ(open, r.in_flight);
  EXPECT_EQ(open, 2u);
  EXPECT_GE(t.max_ts, kLast);
}

}  // namespace
