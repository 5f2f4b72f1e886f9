// noc protocol analysis (spec chapter "µScope noc Protocol"; issue 13 §1):
// transaction latencies from issue to complete with their percentiles,
// overall, per noc scope (each fabric or link a transaction hops across),
// per source/destination port pair; end-to-end latencies of transactions
// stitched across txn_handoff events (§5.7, §9.5); retries by reason,
// timeouts, credit stalls and the credit flow of each port.
//
// Names come from the protocol table (protocol/noc_table.hpp); the file is
// read through the reader core one segment at a time.
//
// What counts, over a closed cycle range [start, end] (cycles of the first
// noc scope's clock):
//  - a transaction (a "hop": one life of a slot of a scope's transactions
//    catalog, §3.4, from the SET that makes it valid to its CLEAR) counts
//    when it completes in the range; its latency is whole, from its issue,
//    which may lie before the range. To find the issues, the analysis starts
//    at the segment holding start and steps back (at most max_lookback
//    segments) until each transaction live at that segment's start has its
//    issue in a segment stepped over; a transaction whose issue is still not
//    seen is counted in unknown_issue, not in the latencies;
//  - an end-to-end transaction is a chain of hops joined by txn_handoff
//    (src_scope, src_txn_id) -> (dst_scope, dst_txn_id): the handoff joins
//    the source's live hop, or its last completed one, to the destination's
//    live hop, or to the next one issued there. It counts when its last hop
//    completes in the range and no handoff continues it; its latency runs
//    from its first hop's issue to its last hop's completion, in cycles of
//    the first noc scope's clock. A single hop is a chain of one;
//  - retries, timeouts and link_credit events count when they lie in the
//    range, those of a scope below a noc scope (a noc.router, §2.6) with
//    that noc scope. A credit stall is a retry whose reason is no_credits (§5.3): the
//    protocol's record of a transaction held for want of link credits. Per
//    port, the credits granted and consumed are added up;
//  - in_flight: transactions live at the end of the range.
// Memory: per scope its catalog's slots; per group a LatencyStats (exact up
// to 4096 values, 65,536 for the overall ones, then a histogram: 0.79 %;
// at most 32 KiB a group, 512 KiB for the overall ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/latency_stats.hpp"
#include "reader/replay_rider.hpp"

namespace uscope {
class TraceReader;
}

namespace uscope::analysis {

struct NocOptions {
  uint64_t start_cycle = 0;
  uint64_t end_cycle = UINT64_MAX;  // clamped to the trace's last cycle
  uint32_t max_lookback = 64;       // segments stepped back to find issues
  // visit_noc only: a pass told every segment the walk replays, with every
  // item (reader/replay_rider.hpp), so that the two decode the trace once.
  ReplayRider *rider = nullptr;
};

struct NocCounts {
  uint64_t completed = 0;      // hops completed in the range (with a known issue or not)
  uint64_t unknown_issue = 0;  // of those, issued before what the analysis read
  uint64_t retries = 0, timeouts = 0, credit_stalls = 0;
};

struct NocScopeRow {  // one noc scope: a fabric or a link
  std::string name;
  uint16_t scope_id = 0;
  uint64_t period_ps = 1000;   // its clock's: its hop latencies are in these cycles
  uint64_t in_flight = 0;      // live at the end of the range
  NocCounts counts;
  LatencyStats latency;
};

struct NocPairRow {  // one (scope, src_port, dst_port)
  uint32_t scope = 0;  // index in NocReport::scopes
  uint32_t src_port = 0, dst_port = 0;
  NocCounts counts;
  LatencyStats latency;
};

struct NocPortRow {  // one (scope, port) of link_credit events
  uint32_t scope = 0;     // index in NocReport::scopes: the noc scope it belongs to
  uint16_t scope_id = 0;  // the events' own scope: that noc scope or a router below it (§2.6)
  std::string where;      // its name
  uint32_t port = 0;
  uint64_t grants = 0, consumes = 0, credits_granted = 0, credits_consumed = 0;
};

struct NocReport {
  uint64_t start_cycle = 0, end_cycle = 0;  // the range after clamping
  uint64_t max_cycle = 0;                   // the trace's last cycle
  bool clamped = false;                     // the range asked for went past max_cycle
  uint64_t period_ps = 1000;                // the first noc scope's clock
  uint32_t segments_read = 0;               // lookback included
  NocCounts counts;                         // every scope
  uint64_t in_flight = 0;
  LatencyStats latency{65536};              // every hop completed in the range
  LatencyStats end_to_end{65536};           // every chain ended in the range
  uint64_t multi_hop = 0;                   // of those, with at least one handoff
  uint64_t handoffs = 0;                    // txn_handoff events in the range
  uint64_t retry_reasons[8] = {};           // retries by retry_reason value (noc_table.hpp kRetryReasons)
  std::vector<NocScopeRow> scopes;          // schema order
  std::vector<NocPairRow> pairs;            // by scope, src_port, dst_port
  std::vector<NocPortRow> ports;            // by event scope id, port
};

// ── the decoder under the report: one walk of the noc protocol ──
// visit_noc() reads the segments analyze_noc() reads (the lookback, then up
// to the range's end) and tells a visitor what it decodes; analyze_noc() is
// such a visitor, and so is the timeline exporters' noc mapping
// (src/export/timeline_model.cpp), so the protocol is decoded in one place.
// What is told lies anywhere in what was read, lookback included: a visitor
// keeps what it wants of the range (NocLayout::t0_ps .. t1_ps).

struct NocScopeInfo {  // one noc scope, in schema order (NocReport::scopes' order)
  std::string name;
  uint16_t scope_id = 0;
  uint64_t period_ps = 1000;
  std::vector<std::string> opcodes;  // the catalog's opcode enum, by value (empty: no opcode field)
};

struct NocLayout {
  std::vector<NocScopeInfo> scopes;
  uint64_t start_cycle = 0, end_cycle = 0, max_cycle = 0;  // as NocReport's
  bool clamped = false;
  uint64_t period_ps = 1000;          // the first noc scope's clock: the range's cycles
  uint64_t t0_ps = 0, t1_ps = 0;      // the range, in ps, both ends included
  uint32_t segments_read = 0;         // set when visit_noc returns
};

// One hop: a life of a slot of a scope's transactions catalog (§3.4), told
// once it is final: when its slot is issued again (no handoff can continue
// it any more) or at the end of what was read; a hop still live there is
// told with open set.
struct NocHop {
  uint32_t scope = 0;          // index in NocLayout::scopes
  uint16_t slot = 0;           // its txn_id (the catalog's slot)
  uint64_t src_port = 0, dst_port = 0;
  bool has_opcode = false, has_addr = false;
  uint64_t opcode = 0, addr = 0;
  bool known_issue = false;    // false: live where the reading started, issue unseen
  uint64_t issue_ps = 0;
  bool open = false;           // still live at the end of what was read
  uint64_t complete_ps = 0;    // its CLEAR (not when open)
  uint64_t handoff_in = 0;     // the id of the handoff that led to it (0: none)
  bool continued = false;      // a handoff took it on to a next hop
  const uint64_t *handoffs_out = nullptr;  // those handoffs' ids (at most kNocMaxHandoffsOut)
  size_t n_out = 0;
  // Its end-to-end transaction so far (§5.7): the first hop's issue, the hops.
  uint64_t chain_birth_ps = 0;
  uint32_t chain_hops = 1;
  bool chain_known = false;    // every hop's issue was seen
};
constexpr size_t kNocMaxHandoffsOut = 16;

// A txn_handoff event (§5.7), numbered from 1 in the order read.
struct NocHandoff {
  uint64_t id = 0, t_ps = 0;
  uint64_t src_scope_id = 0, src_txn = 0, dst_scope_id = 0, dst_txn = 0;
};

// A retry (§5.3) or timeout (§5.4) of a noc scope or a scope below one.
struct NocInstant {
  bool timeout = false;
  uint32_t scope = 0;          // the noc scope (index in NocLayout::scopes)
  uint16_t event_scope_id = 0; // the event's own scope
  uint64_t t_ps = 0, txn = 0;
  uint64_t value = 0;          // retry: reason (kRetryReasons); timeout: threshold_cycles
  bool live = false;           // the transaction was live: its ports follow
  uint64_t src_port = 0, dst_port = 0;
};

// A link_credit event (§5.5).
struct NocCredit {
  uint32_t scope = 0;
  uint16_t event_scope_id = 0;
  uint64_t t_ps = 0, port = 0, credits = 0;
  bool grant = false;
};

class NocVisitor {
 public:
  virtual ~NocVisitor() = default;
  virtual void begin(const NocLayout &) {}  // the schema resolved and the range clamped, before any segment
  virtual void hop(const NocHop &) {}
  virtual void handoff(const NocHandoff &) {}
  virtual void instant(const NocInstant &) {}
  virtual void credit(const NocCredit &) {}
};

// The walk. Throws as analyze_noc; returns the layout told to begin().
NocLayout visit_noc(TraceReader &r, const NocOptions &o, NocVisitor &v);

// Throws Error(NOT_FOUND) "this trace has no noc protocol scope" when the
// schema has none; Error(SCHEMA) when a noc scope lacks its transactions
// catalog or the catalog lacks txn_id / src_port / dst_port.
NocReport analyze_noc(TraceReader &r, const NocOptions &o);
// The same checks of the schema alone, without reading a segment.
void require_noc(TraceReader &r);

}  // namespace uscope::analysis
