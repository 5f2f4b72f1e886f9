// uscope noc-latency FILE [--range A:B] [--json] [--format csv] [--strict]:
// transaction latencies of the noc protocol scopes (analysis.h, noc
// section): count, mean and percentiles overall, end to end across
// txn_handoff, per scope (fabric or link) and per source/destination port
// pair; retries by reason, timeouts, credit stalls and the credit flow of
// each port. A range past the trace is clamped, with a warning.
#include <uscope/analysis.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "analysis_json.hpp"
#include "base/parse.hpp"
#include "cli_command.hpp"
#include "protocol/noc_table.hpp"

namespace uscope_cli {
namespace {

namespace noc = uscope::proto::noc;

// "A:B" (cycles, A <= B); "A:" runs to the end.
void parse_range(const std::string &s, uint64_t *a, uint64_t *b) {
  const size_t colon = s.find(':');
  std::string err;
  if (colon == std::string::npos)
    throw Usage("noc-latency: --range " + s + ": expected A:B (cycles), e.g. 100:500");
  err = uscope::parse_number(s.substr(0, colon), UINT64_MAX, a);
  if (err.empty()) {
    const std::string tail = s.substr(colon + 1);
    if (tail.empty()) *b = UINT64_MAX;
    else err = uscope::parse_number(tail, UINT64_MAX, b);
  }
  if (!err.empty()) throw Usage("noc-latency: --range " + s + ": " + err);
  if (*a > *b)
    throw Usage("noc-latency: --range " + s + ": starts after it ends; expected A <= B");
}

// A CSV cell (RFC 4180): quoted when it holds a comma, quote or line break.
std::string csv_field(const char *v) {
  const std::string s = v ? v : "";
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

// A percentile that came from the histogram (more than the exact values
// kept) is marked "~" in the text.
std::string lat_text(const uscope_latency_t &l) {
  if (!l.count) return "count 0";
  char b[256];
  std::snprintf(b, sizeof b, "count %" PRIu64 "  mean %.2f  min %" PRIu64 "  p50 %s%" PRIu64 "  p90 %s%" PRIu64
                "  p99 %s%" PRIu64 "  max %" PRIu64,
                l.count, l.mean, l.min, l.exact ? "" : "~", l.p50, l.exact ? "" : "~", l.p90, l.exact ? "" : "~",
                l.p99, l.max);
  return b;
}

void print_json(const uscope_noc_report_t &r) {
  Json j;
  noc_report_json(j, r);
  j.end();
}

// One tidy table: a row per group (all, end_to_end, each scope, each pair).
void print_csv(const uscope_noc_report_t &r) {
  std::printf("group,scope,src_port,dst_port,count,min,mean,p50,p90,p99,max,exact,completed,unknown_issue,retries,"
              "timeouts,credit_stalls\n");
  auto row = [](const char *group, const std::string &scope, const std::string &src, const std::string &dst,
                const uscope_latency_t &l, const uscope_noc_counts_t *c) {
    std::printf("%s,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,", group,
                scope.c_str(), src.c_str(), dst.c_str(), l.count, l.min, l.mean, l.p50, l.p90, l.p99, l.max,
                l.exact ? 1 : 0);
    if (c)
      std::printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", c->completed, c->unknown_issue,
                  c->retries, c->timeouts, c->credit_stalls);
    else
      std::printf(",,,,\n");
  };
  row("all", "", "", "", r.latency, &r.counts);
  row("end_to_end", "", "", "", r.end_to_end, nullptr);
  for (uint32_t i = 0; i < r.num_scopes; ++i)
    row("scope", csv_field(r.scopes[i].name), "", "", r.scopes[i].latency, &r.scopes[i].counts);
  for (uint32_t i = 0; i < r.num_pairs; ++i) {
    const uscope_noc_pair_stats_t &p = r.pairs[i];
    row("pair", csv_field(r.scopes[p.scope].name), std::to_string(p.src_port), std::to_string(p.dst_port), p.latency,
        &p.counts);
  }
}

void print_text(const uscope_noc_report_t &r) {
  std::printf("noc latency, cycles %" PRIu64 " .. %" PRIu64 " (of %s's clock, %" PRIu64
              " ps; latencies of a hop in its scope's cycles)\n",
              r.start_cycle, r.end_cycle, r.num_scopes ? r.scopes[0].name : "-", r.period_ps);
  std::printf("transactions   %" PRIu64 " completed in the range, %" PRIu64 " in flight at its end", r.counts.completed,
              r.in_flight);
  if (r.counts.unknown_issue)
    std::printf(", %" PRIu64 " issued before what was read (no latency)", r.counts.unknown_issue);
  std::printf("\nlatency        %s\n", lat_text(r.latency).c_str());
  std::printf("end to end     %s  (%" PRIu64 " across handoffs; %" PRIu64 " txn_handoff events)\n",
              lat_text(r.end_to_end).c_str(), r.multi_hop, r.handoffs);
  std::printf("retries        %" PRIu64, r.counts.retries);
  const char *sep = " (";
  for (size_t i = 0; i < std::size(noc::kRetryReasons); ++i)
    if (r.retries_by_reason[i]) {
      std::printf("%s%s %" PRIu64, sep, noc::kRetryReasons[i], r.retries_by_reason[i]);
      sep = ", ";
    }
  std::printf("%s; timeouts %" PRIu64 "; credit stalls (retries for no_credits) %" PRIu64 "\n",
              *sep == ',' ? ")" : "", r.counts.timeouts, r.counts.credit_stalls);
  std::printf("\nper scope\n");
  for (uint32_t i = 0; i < r.num_scopes; ++i) {
    const uscope_noc_scope_stats_t &s = r.scopes[i];
    std::printf("  %-16s %s  in flight %" PRIu64 ", retries %" PRIu64 ", timeouts %" PRIu64 ", credit stalls %" PRIu64
                "\n",
                s.name, lat_text(s.latency).c_str(), s.in_flight, s.counts.retries, s.counts.timeouts,
                s.counts.credit_stalls);
  }
  if (r.num_pairs) std::printf("\nper source -> destination port\n");
  for (uint32_t i = 0; i < r.num_pairs; ++i) {
    const uscope_noc_pair_stats_t &p = r.pairs[i];
    std::printf("  %-16s %5u -> %-5u %s  retries %" PRIu64 ", timeouts %" PRIu64 ", credit stalls %" PRIu64 "\n",
                r.scopes[p.scope].name, p.src_port, p.dst_port, lat_text(p.latency).c_str(), p.counts.retries,
                p.counts.timeouts, p.counts.credit_stalls);
  }
  if (r.num_ports) std::printf("\nlink credits per port\n");
  for (uint32_t i = 0; i < r.num_ports; ++i) {
    const uscope_noc_port_credits_t &p = r.ports[i];
    std::printf("  %-16s port %-5u granted %" PRIu64 " in %" PRIu64 " grants, consumed %" PRIu64 " in %" PRIu64
                " consumes\n",
                p.where, p.port, p.credits_granted, p.grants, p.credits_consumed, p.consumes);
  }
}

class NocLatency final : public TraceCommand {
 public:
  NocLatency()
      : TraceCommand("noc-latency",
                     "noc transaction latencies (issue to complete): percentiles overall, end to end across "
                     "txn_handoff, per scope and per port pair; retries, timeouts, credit stalls",
                     "trace file (.uscope) with a noc protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_option("--range", range_,
                   "cycles A:B (closed; of the first noc scope's clock): transactions that complete in it; "
                   "clamped to the trace (default: the whole trace)")
        ->type_name("A:B");
    sub.add_flag("--json", json_, "JSON output");
    sub.add_option("--format", format_, "csv: one row per group (all, end_to_end, scope, pair)")
        ->check(CLI::IsMember({"text", "csv"}));
  }
  bool before_open() override {
    if (!range_.empty()) parse_range(range_, &start_, &end_);
    if (json_ && format_ == "csv") throw Usage("noc-latency: --json and --format csv: choose one");
    return false;
  }
  void read(const Trace &t) override {
    uscope_noc_analysis_t *a = nullptr;
    check(uscope_noc_analysis_open(&a, t.r()), "noc-latency");
    struct Close {
      uscope_noc_analysis_t *a;
      ~Close() { uscope_noc_analysis_close(a); }
    } close{a};
    uscope_noc_report_t r{};
    r.struct_size = sizeof r;
    check(uscope_noc_analyze(a, &r, start_, end_), "noc-latency");
    if (r.clamped)
      std::fprintf(stderr, "uscope: warning: noc-latency --range %s reaches past the end of the trace (cycle %" PRIu64
                   "); showing %" PRIu64 "..%" PRIu64 "\n", range_.c_str(), r.max_cycle, r.start_cycle, r.end_cycle);
    if (json_) print_json(r);
    else if (format_ == "csv") print_csv(r);
    else print_text(r);
  }
  std::string range_, format_ = "text";
  uint64_t start_ = 0, end_ = UINT64_MAX;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> noc_latency_command() { return std::make_unique<NocLatency>(); }

}  // namespace uscope_cli
