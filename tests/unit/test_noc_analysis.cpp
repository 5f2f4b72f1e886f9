// The noc analysis (src/analysis/noc_analysis, analysis.h's noc section):
// traces written here with known latencies give exact percentiles, per pair,
// per scope and per port; handoffs stitch hops into end-to-end transactions;
// retries, timeouts and credit stalls are counted; a range is clamped and
// reaches back for the issues of what completes in it; a trace without a noc
// scope is refused by name. The latency statistics keep their error bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <uscope/analysis.h>

#include "analysis/latency_stats.hpp"
#include "analysis/noc_analysis.hpp"
#include "base/error.hpp"
#include "reader/replay_rider.hpp"
#include "reader/trace_reader.hpp"
#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::analysis::analyze_noc;
using uscope::analysis::LatencyStats;
using uscope::analysis::NocOptions;
using uscope::analysis::NocReport;
using uscope::test::TempDir;
using namespace uscope::test::proto;

const char *const kStages[] = {"issue", "route", "deliver"};
enum : uint8_t { kRead, kWrite };

// A crossbar noc scope under `parent`, 6 ports, 64 transactions.
struct Fabric {
  uscope_noc_config_t cfg{};
  explicit Fabric(const char *name, uint16_t parent = 0)
      : cfg(noc_config(name, parent, "crossbar", kStages, 3, 64, 6)) {}
};

// A writer over a schema of the given fabrics (root scope 0, 1000 ps clock),
// with checkpoints every `interval_ps` (0: the default).
struct Writer {
  TempDir dir{"uscope_noc_analysis"};
  std::string path = dir.file("t.uscope");
  std::vector<uscope_noc_t *> nocs;
  uscope_writer_t *w = nullptr;
  void open(std::vector<Fabric> fabrics, uint64_t interval_ps = 0) {
    uscope_schema_t *s = base_schema(1000);
    for (Fabric &f : fabrics) {
      uscope_noc_t *n = nullptr;
      ASSERT_EQ(uscope_noc_declare(s, &n, &f.cfg), USCOPE_OK) << uscope_last_error();
      nocs.push_back(n);
    }
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.checkpoint_interval_ps = interval_ps;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
  }
  void cycle(uint64_t c) { ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK) << uscope_writer_error(w); }
  void end() { ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w); }
  void close() {
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
    w = nullptr;
  }
  ~Writer() {
    if (w) (void)uscope_writer_close(w);
    for (uscope_noc_t *n : nocs) uscope_noc_free(n);
  }
  uscope_noc_ids_t ids(size_t i) const { return ids_of(nocs[i]); }
};

// Every transaction's (issue, complete, src, dst), written in cycle order on one fabric.
struct Txn {
  uint32_t id;
  uint64_t issue, done;
  uint16_t src, dst;
};

void write_txns(Writer &t, const std::vector<Txn> &txns, uint64_t last_cycle,
                const std::function<void(uint64_t)> &extra = nullptr) {
  for (uint64_t c = 0; c <= last_cycle; ++c) {
    ASSERT_NO_FATAL_FAILURE(t.cycle(c));
    for (const Txn &x : txns)
      if (x.done == c) { ASSERT_EQ(uscope_noc_complete(t.w, t.nocs[0], x.id), USCOPE_OK); }
    for (const Txn &x : txns)
      if (x.issue == c) { ASSERT_EQ(uscope_noc_issue(t.w, t.nocs[0], x.id, kRead, 0x1000, 1, 3, x.src, x.dst), USCOPE_OK); }
    if (extra) extra(c);
    ASSERT_NO_FATAL_FAILURE(t.end());
  }
}

// uscope noc-latency's output on write_four's trace.
const std::string kGoldenJson =
    R"({"start_cycle":0,"end_cycle":50,"max_cycle":50,"clamped":false,"period_ps":1000,"completed":4)"
    R"(,"unknown_issue":0,"retries":2,"timeouts":1,"credit_stalls":1,"in_flight":0,"handoffs":0)"
    R"(,"multi_hop":0,"retries_by_reason":{"target_busy":0,"no_credits":1,"vc_full":0,"arb_lost":1)"
    R"(,"protocol_retry":0},"latency":{"count":4,"min":10,"max":40,"mean":25.000000,"p50":20,"p90":40)"
    R"(,"p99":40,"exact":true},"end_to_end":{"count":4,"min":10,"max":40,"mean":25.000000,"p50":20,"p90":40)"
    R"(,"p99":40,"exact":true},"scopes":[{"name":"xbar","scope_id":1,"period_ps":1000,"in_flight":0)"
    R"(,"completed":4,"unknown_issue":0,"retries":2,"timeouts":1,"credit_stalls":1,"latency":{"count":4)"
    R"(,"min":10,"max":40,"mean":25.000000,"p50":20,"p90":40,"p99":40,"exact":true}}])"
    R"(,"pairs":[{"scope":"xbar","src_port":0,"dst_port":4,"completed":2,"unknown_issue":0,"retries":0)"
    R"(,"timeouts":0,"credit_stalls":0,"latency":{"count":2,"min":10,"max":20,"mean":15.000000,"p50":10)"
    R"(,"p90":20,"p99":20,"exact":true}},{"scope":"xbar","src_port":1,"dst_port":4,"completed":1)"
    R"(,"unknown_issue":0,"retries":2,"timeouts":1,"credit_stalls":1,"latency":{"count":1,"min":40,"max":40)"
    R"(,"mean":40.000000,"p50":40,"p90":40,"p99":40,"exact":true}},{"scope":"xbar","src_port":1)"
    R"(,"dst_port":5,"completed":1,"unknown_issue":0,"retries":0,"timeouts":0,"credit_stalls":0)"
    R"(,"latency":{"count":1,"min":30,"max":30,"mean":30.000000,"p50":30,"p90":30,"p99":30,"exact":true}}])"
    R"(,"ports":[{"scope":"xbar","noc":"xbar","port":4,"grants":1,"consumes":2,"credits_granted":4)"
    R"(,"credits_consumed":3}]})"
    "\n";
const std::string kGoldenCsv =
    "group,scope,src_port,dst_port,count,min,mean,p50,p90,p99,max,exact,completed,unknown_issue,retries,timeouts,credit_stalls\n"
    "all,,,,4,10,25.000000,20,40,40,40,1,4,0,2,1,1\n"
    "end_to_end,,,,4,10,25.000000,20,40,40,40,1,,,,,\n"
    "scope,xbar,,,4,10,25.000000,20,40,40,40,1,4,0,2,1,1\n"
    "pair,xbar,0,4,2,10,15.000000,10,20,20,20,1,2,0,0,0,0\n"
    "pair,xbar,1,4,1,40,40.000000,40,40,40,40,1,1,0,2,1,1\n"
    "pair,xbar,1,5,1,30,30.000000,30,30,30,30,1,1,0,0,0,0\n";

NocReport analyze(const std::string &path, uint64_t start = 0, uint64_t end = UINT64_MAX, uint32_t lookback = 64) {
  uscope::TraceReader r(path);
  NocOptions o;
  o.start_cycle = start;
  o.end_cycle = end;
  o.max_lookback = lookback;
  return analyze_noc(r, o);
}

const uscope::analysis::NocPairRow *find_pair(const NocReport &r, uint32_t src, uint32_t dst) {
  for (const auto &p : r.pairs)
    if (p.src_port == src && p.dst_port == dst) return &p;
  return nullptr;
}

// Four reads of known latency 10, 20, 30, 40 over three port pairs; the last
// one retried twice (no_credits, arb_lost) and timed out; credits on port 4.
void write_four(Writer &t) {
  ASSERT_NO_FATAL_FAILURE(t.open({Fabric("xbar")}));
  const std::vector<Txn> txns = {{1, 0, 10, 0, 4}, {2, 1, 21, 0, 4}, {3, 2, 32, 1, 5}, {4, 3, 43, 1, 4}};
  ASSERT_NO_FATAL_FAILURE(write_txns(t, txns, 50, [&](uint64_t c) {
    uscope_noc_t *n = t.nocs[0];
    if (c == 1) { ASSERT_EQ(uscope_noc_link_credit(t.w, n, 4, USCOPE_NOC_CREDIT_GRANT, 4), USCOPE_OK); }
    if (c == 2) { ASSERT_EQ(uscope_noc_link_credit(t.w, n, 4, USCOPE_NOC_CREDIT_CONSUME, 1), USCOPE_OK); }
    if (c == 3) { ASSERT_EQ(uscope_noc_link_credit(t.w, n, 4, USCOPE_NOC_CREDIT_CONSUME, 2), USCOPE_OK); }
    if (c == 5) { ASSERT_EQ(uscope_noc_retry(t.w, n, 4, USCOPE_NOC_RETRY_NO_CREDITS), USCOPE_OK); }
    if (c == 6) { ASSERT_EQ(uscope_noc_retry(t.w, n, 4, USCOPE_NOC_RETRY_ARB_LOST), USCOPE_OK); }
    if (c == 7) { ASSERT_EQ(uscope_noc_timeout(t.w, n, 4, 4), USCOPE_OK); }
  }));
  ASSERT_NO_FATAL_FAILURE(t.close());
}

TEST(NocAnalysis, KnownLatenciesGiveExactPercentilesPerPairAndPort) {
  Writer t;
  ASSERT_NO_FATAL_FAILURE(write_four(t));
  NocReport r = analyze(t.path);
  EXPECT_EQ(r.start_cycle, 0u);
  EXPECT_EQ(r.end_cycle, 50u);
  EXPECT_EQ(r.max_cycle, 50u);
  EXPECT_FALSE(r.clamped);
  EXPECT_EQ(r.period_ps, 1000u);
  EXPECT_EQ(r.counts.completed, 4u);
  EXPECT_EQ(r.counts.unknown_issue, 0u);
  EXPECT_EQ(r.latency.count(), 4u);
  EXPECT_EQ(r.latency.min(), 10u);
  EXPECT_EQ(r.latency.max(), 40u);
  EXPECT_DOUBLE_EQ(r.latency.mean(), 25.0);
  EXPECT_EQ(r.latency.percentile(50), 20u);  // nearest rank: the 2nd of 4
  EXPECT_EQ(r.latency.percentile(90), 40u);
  EXPECT_EQ(r.latency.percentile(99), 40u);
  EXPECT_TRUE(r.latency.exact());
  // Each read its own end-to-end transaction: no handoffs.
  EXPECT_EQ(r.end_to_end.count(), 4u);
  EXPECT_EQ(r.end_to_end.percentile(50), 20u);
  EXPECT_EQ(r.multi_hop, 0u);
  EXPECT_EQ(r.handoffs, 0u);
  EXPECT_EQ(r.in_flight, 0u);
  EXPECT_EQ(r.counts.retries, 2u);
  EXPECT_EQ(r.counts.timeouts, 1u);
  EXPECT_EQ(r.counts.credit_stalls, 1u);
  EXPECT_EQ(r.retry_reasons[USCOPE_NOC_RETRY_NO_CREDITS], 1u);
  EXPECT_EQ(r.retry_reasons[USCOPE_NOC_RETRY_ARB_LOST], 1u);
  EXPECT_EQ(r.retry_reasons[USCOPE_NOC_RETRY_TARGET_BUSY], 0u);

  ASSERT_EQ(r.scopes.size(), 1u);
  EXPECT_EQ(r.scopes[0].name, "xbar");
  EXPECT_EQ(r.scopes[0].counts.completed, 4u);
  EXPECT_EQ(r.scopes[0].latency.percentile(50), 20u);
  EXPECT_EQ(r.scopes[0].counts.retries, 2u);

  ASSERT_EQ(r.pairs.size(), 3u);  // by scope, src, dst
  EXPECT_EQ(r.pairs[0].src_port, 0u);
  EXPECT_EQ(r.pairs[0].dst_port, 4u);
  EXPECT_EQ(r.pairs[1].src_port, 1u);
  EXPECT_EQ(r.pairs[1].dst_port, 4u);
  EXPECT_EQ(r.pairs[2].src_port, 1u);
  EXPECT_EQ(r.pairs[2].dst_port, 5u);
  auto *p04 = find_pair(r, 0, 4), *p14 = find_pair(r, 1, 4), *p15 = find_pair(r, 1, 5);
  ASSERT_TRUE(p04 && p14 && p15);
  EXPECT_EQ(p04->latency.count(), 2u);
  EXPECT_EQ(p04->latency.min(), 10u);
  EXPECT_EQ(p04->latency.max(), 20u);
  EXPECT_EQ(p04->latency.percentile(50), 10u);
  EXPECT_EQ(p04->counts.retries, 0u);
  EXPECT_EQ(p14->latency.percentile(50), 40u);
  EXPECT_EQ(p14->counts.retries, 2u);
  EXPECT_EQ(p14->counts.credit_stalls, 1u);
  EXPECT_EQ(p14->counts.timeouts, 1u);
  EXPECT_EQ(p15->latency.percentile(99), 30u);

  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(r.ports[0].port, 4u);
  EXPECT_EQ(r.ports[0].grants, 1u);
  EXPECT_EQ(r.ports[0].credits_granted, 4u);
  EXPECT_EQ(r.ports[0].consumes, 2u);
  EXPECT_EQ(r.ports[0].credits_consumed, 3u);
}

TEST(NocAnalysis, ManyTransactionsPercentilesEqualTheSortedLatencies) {
  // 2,000 transactions, 40 in flight at a time, latencies pseudo-random 1..300.
  Writer t;
  ASSERT_NO_FATAL_FAILURE(t.open({Fabric("xbar")}, 100'000));
  std::mt19937 rng(7);
  std::vector<Txn> txns;
  std::vector<uint64_t> lat;
  for (uint32_t i = 0; i < 2000; ++i) {
    const uint32_t slot = i % 40;
    const uint64_t issue = txns.size() >= 40 ? txns[i - 40].done + 1 : i;
    const uint64_t l = 1 + rng() % 300;
    txns.push_back({slot, issue, issue + l, static_cast<uint16_t>(i % 3), 5});
    lat.push_back(l);
  }
  uint64_t last = 0;
  for (const Txn &x : txns) last = std::max(last, x.done);
  ASSERT_NO_FATAL_FAILURE(write_txns(t, txns, last));
  ASSERT_NO_FATAL_FAILURE(t.close());
  NocReport r = analyze(t.path);
  std::sort(lat.begin(), lat.end());
  auto rank = [&](double p) { return lat[static_cast<size_t>(std::ceil(p / 100.0 * lat.size())) - 1]; };
  EXPECT_EQ(r.latency.count(), 2000u);
  EXPECT_EQ(r.latency.percentile(50), rank(50));
  EXPECT_EQ(r.latency.percentile(90), rank(90));
  EXPECT_EQ(r.latency.percentile(99), rank(99));
  EXPECT_EQ(r.latency.max(), lat.back());
  EXPECT_GT(r.segments_read, 1u);

  // A range in the middle, slots reused all the time: the lookback finds the
  // issue of every transaction that completes in it.
  std::vector<uint64_t> mid;
  for (const Txn &x : txns)
    if (x.done >= 3000 && x.done <= 5000) mid.push_back(x.done - x.issue);
  std::sort(mid.begin(), mid.end());
  ASSERT_GT(mid.size(), 100u);
  NocReport m = analyze(t.path, 3000, 5000);
  auto mid_rank = [&](double p) { return mid[static_cast<size_t>(std::ceil(p / 100.0 * mid.size())) - 1]; };
  EXPECT_EQ(m.counts.unknown_issue, 0u);
  EXPECT_EQ(m.latency.count(), mid.size());
  EXPECT_EQ(m.latency.percentile(50), mid_rank(50));
  EXPECT_EQ(m.latency.percentile(90), mid_rank(90));
  EXPECT_EQ(m.latency.percentile(99), mid_rank(99));
  EXPECT_EQ(m.latency.min(), mid.front());
  EXPECT_EQ(m.latency.max(), mid.back());
  EXPECT_LT(m.segments_read, r.segments_read);  // not the whole trace
}

TEST(NocAnalysis, HandoffsStitchHopsIntoOneEndToEndTransaction) {
  // noc §10.3: fabric 0 -> link -> fabric 1, the handoffs at the root; the
  // second handoff comes before the hop it names is issued.
  Writer t;
  ASSERT_NO_FATAL_FAILURE(t.open({Fabric("fab0"), Fabric("d2d_link"), Fabric("fab1")}));
  const uscope_noc_ids_t a = t.ids(0), l = t.ids(1), b = t.ids(2);
  uscope_noc_t *na = t.nocs[0], *nl = t.nocs[1], *nb = t.nocs[2];
  for (uint64_t c = 0; c <= 14; ++c) {
    ASSERT_NO_FATAL_FAILURE(t.cycle(c));
    if (c == 0) { ASSERT_EQ(uscope_noc_issue(t.w, na, 42, kRead, 0x1000, 1, 3, 0, 5), USCOPE_OK); }
    if (c == 1) { ASSERT_EQ(uscope_noc_issue(t.w, nb, 3, kWrite, 0x2000, 1, 3, 1, 2), USCOPE_OK); }
    if (c == 3) { ASSERT_EQ(uscope_noc_complete(t.w, nb, 3), USCOPE_OK); }
    if (c == 5) {
      ASSERT_EQ(uscope_noc_complete(t.w, na, 42), USCOPE_OK);
      ASSERT_EQ(uscope_noc_issue(t.w, nl, 7, kRead, 0x1000, 1, 3, 0, 1), USCOPE_OK);
      ASSERT_EQ(uscope_noc_txn_handoff(t.w, nl, a.scope_id, 42, l.scope_id, 7), USCOPE_OK);
    }
    if (c == 8) {
      ASSERT_EQ(uscope_noc_txn_handoff(t.w, nl, l.scope_id, 7, b.scope_id, 19), USCOPE_OK);
      ASSERT_EQ(uscope_noc_complete(t.w, nl, 7), USCOPE_OK);
      ASSERT_EQ(uscope_noc_issue(t.w, nb, 19, kRead, 0x1000, 1, 3, 0, 3), USCOPE_OK);
      ASSERT_EQ(uscope_noc_retry(t.w, nb, 19, USCOPE_NOC_RETRY_VC_FULL), USCOPE_OK);
    }
    if (c == 12) { ASSERT_EQ(uscope_noc_complete(t.w, nb, 19), USCOPE_OK); }
    ASSERT_NO_FATAL_FAILURE(t.end());
  }
  ASSERT_NO_FATAL_FAILURE(t.close());
  NocReport r = analyze(t.path);
  EXPECT_EQ(r.handoffs, 2u);
  // Hops: 5 (fab0), 3 (link), 4 (fab1), and the lone write's 2 (fab1).
  EXPECT_EQ(r.counts.completed, 4u);
  EXPECT_EQ(r.latency.min(), 2u);
  EXPECT_EQ(r.latency.max(), 5u);
  EXPECT_EQ(r.latency.sum(), 14u);
  ASSERT_EQ(r.scopes.size(), 3u);
  EXPECT_EQ(r.scopes[0].name, "fab0");
  EXPECT_EQ(r.scopes[0].latency.percentile(50), 5u);
  EXPECT_EQ(r.scopes[1].name, "d2d_link");
  EXPECT_EQ(r.scopes[1].latency.percentile(50), 3u);
  EXPECT_EQ(r.scopes[2].latency.count(), 2u);
  EXPECT_EQ(r.scopes[2].latency.min(), 2u);
  EXPECT_EQ(r.scopes[2].latency.max(), 4u);
  EXPECT_EQ(r.scopes[2].counts.retries, 1u);
  // End to end: the stitched read (0 .. 12) and the lone write.
  EXPECT_EQ(r.end_to_end.count(), 2u);
  EXPECT_EQ(r.end_to_end.min(), 2u);
  EXPECT_EQ(r.end_to_end.max(), 12u);
  EXPECT_EQ(r.multi_hop, 1u);

  // A range that ends before the last hop: no end-to-end transaction ends in it
  // but the lone write; fab1's read is in flight.
  NocReport early = analyze(t.path, 0, 9);
  EXPECT_EQ(early.end_to_end.count(), 1u);
  EXPECT_EQ(early.end_to_end.max(), 2u);
  EXPECT_EQ(early.counts.completed, 3u);
  EXPECT_EQ(early.in_flight, 1u);
  EXPECT_EQ(early.scopes[2].in_flight, 1u);
}

TEST(NocAnalysis, RouterScopeEventsCountWithTheirNoc) {
  // noc §2.6, §10.2: a router scope below the noc holds link_credit and
  // retry events naming the noc's transactions.
  TempDir dir("uscope_noc_router");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema(1000);
  Fabric mesh("mesh");
  uscope_noc_t *noc = nullptr;
  ASSERT_EQ(uscope_noc_declare(s, &noc, &mesh.cfg), USCOPE_OK) << uscope_last_error();
  const uscope_noc_ids_t ids = ids_of(noc);
  uint16_t router = 0, credit = 0, retry = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &router, "router_0_0", ids.scope_id, "noc.router", USCOPE_CLOCK_INHERIT),
            USCOPE_OK);
  const uscope_field_t credit_fields[] = {{"port", USCOPE_FT_U16, 0, 0, 0},
                                          {"direction", USCOPE_FT_ENUM, ids.credit_direction_enum, 0, 0},
                                          {"credits", USCOPE_FT_U8, 0, 0, 0}};
  const uscope_field_t retry_fields[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0},
                                         {"reason", USCOPE_FT_ENUM, ids.retry_reason_enum, 0, 0}};
  ASSERT_EQ(uscope_schema_add_event(s, &credit, "link_credit", router, credit_fields, 3), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_event(s, &retry, "retry", router, retry_fields, 2), USCOPE_OK);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  const uint8_t grant[] = {2, 0, USCOPE_NOC_CREDIT_GRANT, 8}, consume[] = {2, 0, USCOPE_NOC_CREDIT_CONSUME, 3};
  const uint8_t no_credits[] = {9, 0, 0, 0, USCOPE_NOC_RETRY_NO_CREDITS};
  for (uint64_t c = 0; c <= 6; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
    if (c == 0) { ASSERT_EQ(uscope_noc_issue(w, noc, 9, kRead, 0x40, 1, 3, 1, 2), USCOPE_OK); }
    if (c == 1) { ASSERT_EQ(uscope_event(w, credit, grant, sizeof grant), USCOPE_OK); }
    if (c == 2) { ASSERT_EQ(uscope_event(w, credit, consume, sizeof consume), USCOPE_OK); }
    if (c == 3) { ASSERT_EQ(uscope_event(w, retry, no_credits, sizeof no_credits), USCOPE_OK); }
    if (c == 4) { ASSERT_EQ(uscope_noc_link_credit(w, noc, 2, USCOPE_NOC_CREDIT_GRANT, 1), USCOPE_OK); }
    if (c == 6) { ASSERT_EQ(uscope_noc_complete(w, noc, 9), USCOPE_OK); }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_noc_free(noc);

  NocReport r = analyze(path);
  ASSERT_EQ(r.scopes.size(), 1u);  // the router is no noc scope of its own
  EXPECT_EQ(r.counts.retries, 1u);
  EXPECT_EQ(r.counts.credit_stalls, 1u);
  EXPECT_EQ(r.scopes[0].counts.credit_stalls, 1u);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].counts.credit_stalls, 1u);  // txn 9: port 1 -> 2
  EXPECT_EQ(r.pairs[0].latency.percentile(50), 6u);
  ASSERT_EQ(r.ports.size(), 2u);  // port 2 of the noc and port 2 of the router: two links
  EXPECT_EQ(r.ports[0].where, "mesh");
  EXPECT_EQ(r.ports[0].credits_granted, 1u);
  EXPECT_EQ(r.ports[1].where, "router_0_0");
  EXPECT_EQ(r.ports[1].scope, 0u);
  EXPECT_EQ(r.ports[1].scope_id, router);
  EXPECT_EQ(r.ports[1].port, 2u);
  EXPECT_EQ(r.ports[1].credits_granted, 8u);
  EXPECT_EQ(r.ports[1].credits_consumed, 3u);
}

TEST(NocAnalysis, RangeIsClampedAndReachesBackForIssues) {
  // Checkpoints every 10 cycles: segments of 10 cycles. Txn 1 is issued at 3
  // and completes at 47; txn 2 lives 41 .. 45; txn 3 completes at 20.
  Writer t;
  ASSERT_NO_FATAL_FAILURE(t.open({Fabric("xbar")}, 10'000));
  ASSERT_NO_FATAL_FAILURE(write_txns(t, {{1, 3, 47, 0, 1}, {2, 41, 45, 2, 3}, {3, 5, 20, 0, 1}}, 60, [&](uint64_t c) {
    if (c == 30) { ASSERT_EQ(uscope_noc_retry(t.w, t.nocs[0], 1, USCOPE_NOC_RETRY_TARGET_BUSY), USCOPE_OK); }
    if (c == 44) { ASSERT_EQ(uscope_noc_retry(t.w, t.nocs[0], 1, USCOPE_NOC_RETRY_NO_CREDITS), USCOPE_OK); }
  }));
  ASSERT_NO_FATAL_FAILURE(t.close());

  NocReport r = analyze(t.path, 40, 50);
  EXPECT_EQ(r.counts.completed, 2u);
  EXPECT_EQ(r.counts.unknown_issue, 0u);
  EXPECT_EQ(r.latency.min(), 4u);
  EXPECT_EQ(r.latency.max(), 44u);  // issued 37 cycles before the range
  EXPECT_EQ(r.counts.retries, 1u);  // the one at 30 lies before the range
  EXPECT_EQ(r.counts.credit_stalls, 1u);
  EXPECT_FALSE(r.clamped);

  // Past the end: clamped to the last cycle.
  NocReport c = analyze(t.path, 40, 1'000'000);
  EXPECT_TRUE(c.clamped);
  EXPECT_EQ(c.end_cycle, c.max_cycle);
  EXPECT_EQ(c.max_cycle, 60u);
  EXPECT_EQ(c.latency.count(), 2u);
  NocReport beyond = analyze(t.path, 500, 600);
  EXPECT_TRUE(beyond.clamped);
  EXPECT_EQ(beyond.start_cycle, 60u);
  EXPECT_EQ(beyond.counts.completed, 0u);

  // Without the lookback the issue of txn 1 is not seen: counted, not measured.
  NocReport short_look = analyze(t.path, 40, 50, 1);
  EXPECT_EQ(short_look.counts.completed, 2u);
  EXPECT_EQ(short_look.counts.unknown_issue, 1u);
  EXPECT_EQ(short_look.latency.count(), 1u);
  EXPECT_EQ(short_look.latency.max(), 4u);

  EXPECT_THROW(analyze(t.path, 50, 40), uscope::Error);
}

// A pass riding the walk (NocOptions::rider: the timeline exporters' counter
// tracks) is told every segment the walk replays, from the lookback's, in order,
// with every item a plain replay of it gives (ops past the window's end too:
// the rider may want them); and the walk tells its visitor the same hops.
TEST(NocAnalysis, ARiderIsToldEverySegmentTheWalkReadsWithEveryItem) {
  Writer t;
  ASSERT_NO_FATAL_FAILURE(t.open({Fabric("xbar")}, 10'000));
  ASSERT_NO_FATAL_FAILURE(write_txns(t, {{1, 3, 47, 0, 1}, {2, 41, 45, 2, 3}, {3, 5, 20, 0, 1}, {4, 52, 58, 1, 2}}, 60,
                                     [](uint64_t) {}));
  ASSERT_NO_FATAL_FAILURE(t.close());
  // Items as text, segment by segment.
  struct Recorder final : uscope::ReplayRider {
    std::vector<size_t> begun, ended;
    std::vector<std::string> items;
    void begin_segment(size_t i, const std::vector<uscope::StorageState> &) override {
      begun.push_back(i);
      items.push_back("segment " + std::to_string(i));
    }
    void frame(uint64_t t) override { items.push_back("frame " + std::to_string(t)); }
    void op(uint64_t t, const uscope::DeltaOp &o) override {
      items.push_back("op " + std::to_string(t) + " " + std::to_string(o.storage_id) + " " + std::to_string(o.slot) +
                      " " + std::to_string(o.field) + " " + std::to_string(o.value));
    }
    void event(uint64_t t, uint16_t id, const uint8_t *, uint32_t n) override {
      items.push_back("event " + std::to_string(t) + " " + std::to_string(id) + " " + std::to_string(n));
    }
    void end_segment(size_t i, bool whole) override {
      ended.push_back(i);
      EXPECT_TRUE(whole);
    }
  };
  struct Hops final : uscope::analysis::NocVisitor {
    std::vector<std::string> hops;
    void hop(const uscope::analysis::NocHop &h) override {
      hops.push_back(std::to_string(h.slot) + " " + std::to_string(h.known_issue) + " " + std::to_string(h.issue_ps) +
                     " " + std::to_string(h.open) + " " + std::to_string(h.complete_ps));
    }
  };
  uscope::TraceReader r(t.path);
  for (const auto &[a, b] : std::vector<std::pair<uint64_t, uint64_t>>{{0, UINT64_MAX}, {40, 50}, {12, 33}}) {
    SCOPED_TRACE("range " + std::to_string(a) + ".." + std::to_string(b));
    NocOptions o;
    o.start_cycle = a;
    o.end_cycle = b;
    Hops plain, ridden;
    uscope::analysis::visit_noc(r, o, plain);
    Recorder rec;
    o.rider = &rec;
    const uscope::analysis::NocLayout l = uscope::analysis::visit_noc(r, o, ridden);
    EXPECT_EQ(ridden.hops, plain.hops);
    ASSERT_FALSE(plain.hops.empty());
    // (segments_read also counts the lookback's probes, which read events only.)
    ASSERT_FALSE(rec.begun.empty());
    EXPECT_LE(rec.begun.size(), l.segments_read);
    EXPECT_EQ(rec.begun.back(), r.segments().size() - (b == 33 ? 3 : 1)) << "up to the window's last segment";
    EXPECT_EQ(rec.ended, rec.begun);
    for (size_t k = 1; k < rec.begun.size(); ++k) EXPECT_EQ(rec.begun[k], rec.begun[k - 1] + 1);
    if (a == 40) {
      EXPECT_LT(rec.begun.front(), 4u) << "the lookback reaches txn 1's issue at cycle 3";
    }
    // What a plain replay of the same segments gives, item for item.
    Recorder want;
    struct Tee {
      Recorder &r;
      void frame(uint64_t t) { r.frame(t); }
      void op(uint64_t t, const uscope::DeltaOp &o) { r.op(t, o); }
      void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) { r.event(t, id, p, n); }
    } tee{want};
    auto st = r.initial_state();
    for (size_t i : rec.begun) {
      want.items.push_back("segment " + std::to_string(i));
      r.replay(i, st, tee);
    }
    EXPECT_EQ(rec.items, want.items);
  }
}

TEST(NocAnalysis, TraceWithoutNocScopeIsRefusedByName) {
  const std::string cpu = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/20_konata_sample.uscope";
  uscope::TraceReader r(cpu);
  try {
    analyze_noc(r, NocOptions{});
    ADD_FAILURE() << "no error";
  } catch (const uscope::Error &e) {
    EXPECT_EQ(e.code(), USCOPE_ERR_NOT_FOUND);
    EXPECT_STREQ(e.what(), "this trace has no noc protocol scope");
  }
  uscope_reader_t *rd = nullptr;
  ASSERT_EQ(uscope_reader_open(&rd, cpu.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_noc_analysis_t *a = reinterpret_cast<uscope_noc_analysis_t *>(1);
  EXPECT_EQ(uscope_noc_analysis_open(&a, rd), USCOPE_ERR_NOT_FOUND);
  EXPECT_STREQ(uscope_last_error(), "this trace has no noc protocol scope");
  EXPECT_EQ(a, reinterpret_cast<uscope_noc_analysis_t *>(1));  // untouched
  uscope_reader_close(rd);
}

TEST(NocAnalysis, CApiGivesTheSameFigures) {
  Writer t;
  ASSERT_NO_FATAL_FAILURE(write_four(t));
  uscope_reader_t *rd = nullptr;
  ASSERT_EQ(uscope_reader_open(&rd, t.path.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_noc_analysis_t *a = nullptr;
  EXPECT_EQ(uscope_noc_analysis_open(nullptr, rd), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_noc_analysis_open(&a, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, nullptr);
  ASSERT_EQ(uscope_noc_analysis_open(&a, rd), USCOPE_OK) << uscope_last_error();
  uscope_noc_report_t rep{};
  EXPECT_EQ(uscope_noc_analyze(a, nullptr, 0, 1), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_noc_analyze(a, &rep, 0, UINT64_MAX), USCOPE_ERR_INVALID_ARGUMENT);  // struct_size unset
  rep.struct_size = sizeof rep;
  EXPECT_EQ(uscope_noc_analyze(a, &rep, 9, 3), USCOPE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(uscope_noc_analyze(a, &rep, 0, UINT64_MAX), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(rep.clamped, 0u);
  EXPECT_EQ(rep.end_cycle, 50u);
  EXPECT_EQ(rep.counts.completed, 4u);
  EXPECT_EQ(rep.counts.retries, 2u);
  EXPECT_EQ(rep.counts.timeouts, 1u);
  EXPECT_EQ(rep.counts.credit_stalls, 1u);
  EXPECT_EQ(rep.retries_by_reason[USCOPE_NOC_RETRY_ARB_LOST], 1u);
  EXPECT_EQ(rep.latency.count, 4u);
  EXPECT_EQ(rep.latency.p50, 20u);
  EXPECT_EQ(rep.latency.p90, 40u);
  EXPECT_EQ(rep.latency.p99, 40u);
  EXPECT_EQ(rep.latency.min, 10u);
  EXPECT_EQ(rep.latency.max, 40u);
  EXPECT_DOUBLE_EQ(rep.latency.mean, 25.0);
  EXPECT_EQ(rep.latency.exact, 1u);
  EXPECT_EQ(rep.end_to_end.count, 4u);
  ASSERT_EQ(rep.num_scopes, 1u);
  EXPECT_STREQ(rep.scopes[0].name, "xbar");
  EXPECT_EQ(rep.scopes[0].period_ps, 1000u);
  ASSERT_EQ(rep.num_pairs, 3u);
  EXPECT_EQ(rep.pairs[1].src_port, 1u);
  EXPECT_EQ(rep.pairs[1].dst_port, 4u);
  EXPECT_EQ(rep.pairs[1].latency.p50, 40u);
  EXPECT_EQ(rep.pairs[1].counts.credit_stalls, 1u);
  ASSERT_EQ(rep.num_ports, 1u);
  EXPECT_EQ(rep.ports[0].credits_consumed, 3u);
  // A range: only the completions at 32 and 43.
  ASSERT_EQ(uscope_noc_analyze(a, &rep, 30, 45), USCOPE_OK);
  EXPECT_EQ(rep.latency.count, 2u);
  EXPECT_EQ(rep.latency.min, 30u);
  EXPECT_EQ(rep.counts.retries, 0u);
  ASSERT_EQ(uscope_noc_analyze(a, &rep, 30, 900), USCOPE_OK);
  EXPECT_EQ(rep.clamped, 1u);
  EXPECT_EQ(rep.end_cycle, 50u);
  uscope_noc_analysis_close(a);
  uscope_noc_analysis_close(nullptr);
  uscope_reader_close(rd);
}

TEST(NocAnalysis, LatencyStatsKeepTheirErrorBoundPastTheExactLimit) {
  LatencyStats s(1000);
  std::vector<uint64_t> v;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t x = rng() % 5'000'000;
    v.push_back(x);
    s.add(x);
  }
  EXPECT_FALSE(s.exact());
  std::sort(v.begin(), v.end());
  EXPECT_EQ(s.min(), v.front());
  EXPECT_EQ(s.max(), v.back());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const uint64_t want = v[static_cast<size_t>(std::ceil(p / 100.0 * v.size())) - 1];
    const uint64_t got = s.percentile(p);
    EXPECT_LE(std::abs(static_cast<double>(got) - static_cast<double>(want)), static_cast<double>(want) / 128.0 + 1)
        << p;
  }
  LatencyStats small(1000);
  for (uint64_t x : {5u, 1u, 3u}) small.add(x);
  EXPECT_TRUE(small.exact());
  EXPECT_EQ(small.percentile(50), 3u);
  EXPECT_EQ(small.percentile(100), 5u);
  LatencyStats none;
  EXPECT_EQ(none.percentile(50), 0u);
  EXPECT_EQ(none.min(), 0u);
}

// uscope noc-latency: the JSON of the four reads, key for key; CSV; the
// range clamped with a warning; usage errors; a trace with no noc scope.
TEST(NocLatencyCli, JsonCsvRangeAndErrors) {
  Writer t;
  ASSERT_NO_FATAL_FAILURE(write_four(t));
  using uscope::test::run_cli;
  using uscope::test::run_cli_split;
  const uscope::test::CliSplit j = run_cli_split("noc-latency " + t.path + " --json", t.dir.path());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.err, "");
  EXPECT_EQ(j.out, kGoldenJson);

  const uscope::test::CliSplit c = run_cli_split("noc-latency " + t.path + " --format csv", t.dir.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, kGoldenCsv);

  const uscope::test::CliSplit r = run_cli_split("noc-latency " + t.path + " --range 30:900 --json", t.dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"start_cycle\":30,\"end_cycle\":50,\"max_cycle\":50,\"clamped\":true"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"latency\":{\"count\":2,\"min\":30,\"max\":40,"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "uscope: warning: noc-latency --range 30:900 reaches past the end of the trace (cycle 50); "
                   "showing 30..50\n");

  const uscope::test::CliRun text = run_cli("noc-latency " + t.path, false);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("latency        count 4  mean 25.00  min 10  p50 20  p90 40  p99 40  max 40\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("retries        2 (no_credits 1, arb_lost 1); timeouts 1;"), std::string::npos) << text.out;

  const uscope::test::CliSplit open_end = run_cli_split("noc-latency " + t.path + " --range 30: --json", t.dir.path());
  ASSERT_EQ(open_end.exit_code, 0) << open_end.err;
  EXPECT_EQ(open_end.err, "");  // to the end: nothing clamped
  EXPECT_NE(open_end.out.find("\"start_cycle\":30,\"end_cycle\":50,\"max_cycle\":50,\"clamped\":false"),
            std::string::npos)
      << open_end.out;
  EXPECT_EQ(run_cli("noc-latency " + t.path + " --range 9:3", false).exit_code, 2);
  EXPECT_EQ(run_cli("noc-latency " + t.path + " --range x:3", false).exit_code, 2);
  EXPECT_EQ(run_cli("noc-latency " + t.path + " --range 9", false).exit_code, 2);
  EXPECT_EQ(run_cli("noc-latency " + t.path + " --json --format csv", false).exit_code, 2);
  const std::string cpu = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/20_konata_sample.uscope";
  const uscope::test::CliRun none = run_cli("noc-latency " + cpu, true);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("this trace has no noc protocol scope"), std::string::npos) << none.out;
}

}  // namespace
