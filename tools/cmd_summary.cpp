// uscope summary FILE [--json]: what a protocol-aware reader learns from a
// trace, per scope, using the conventions of the cpu and noc chapters of the
// spec and of docs/npu-protocol.md:
//   cpu scopes: instructions retired (the committed_insns counter at the
//               end), cycles of the scope's clock, IPC, flushes, stalls;
//   npu scopes: commands by type with their latency (cmd_start to cmd_end),
//               and tensor-engine utilization (te_start to te_end per engine,
//               over the whole trace);
//   noc scopes: transactions completed and bytes moved (its counters).
// One pass over the events of the whole trace, one state_at at its end.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace uscope_cli {
namespace {

constexpr uint16_t kNone = 0xFFFF;

struct Schema {
  const Trace &t;
  uscope_schema_counts_t n;
  explicit Schema(const Trace &tr) : t(tr), n(tr.counts()) {}

  uint16_t storage(uint16_t scope, const char *name) const {
    for (uint32_t i = 0; i < n.storages; ++i) {
      const auto s = t.storage(static_cast<uint16_t>(i));
      if (s.scope_id == scope && std::strcmp(s.name, name) == 0) return static_cast<uint16_t>(i);
    }
    return kNone;
  }
  uint16_t event(uint16_t scope, const char *name) const {
    for (uint32_t i = 0; i < n.event_types; ++i) {
      const auto e = t.event_type(static_cast<uint16_t>(i));
      if (e.scope_id == scope && std::strcmp(e.name, name) == 0) return static_cast<uint16_t>(i);
    }
    return kNone;
  }
  // A field of an event type by name; size 0 when the type or field is absent.
  uscope_field_info_t field(uint16_t ev, const char *name) const {
    uscope_field_info_t none{};
    if (ev == kNone) return none;
    const auto e = t.event_type(ev);
    for (uint16_t i = 0; i < e.num_fields; ++i) {
      const auto f = t.event_field(ev, i);
      if (std::strcmp(f.name, name) == 0) return f;
    }
    return none;
  }
  // The period of a scope's clock, following inheritance up the tree.
  uint32_t period(uint16_t scope) const {
    for (int depth = 0; scope != USCOPE_NO_PARENT && depth < 65536; ++depth) {
      uscope_scope_info_t s{};
      check(uscope_reader_scope(t.r(), scope, &s), "scope");
      if (s.clock_id != USCOPE_CLOCK_INHERIT) {
        uscope_clock_info_t c{};
        check(uscope_reader_clock(t.r(), s.clock_id, &c), "clock");
        return c.period_ps;
      }
      scope = s.parent_id;
    }
    return 0;
  }
};

// A counter's value (1-slot storage, field "count" or field 0) in a state.
uint64_t counter(const Trace &t, const uscope_state_t *st, uint16_t sid) {
  if (sid == kNone || !st) return 0;
  uint16_t f = 0;
  if (uscope_reader_find_field(t.r(), sid, "count", 0, &f) != USCOPE_OK) f = 0;
  uint64_t v = 0;
  check(uscope_state_slot_field(st, sid, 0, f, &v), "counter");
  return v;
}

std::string string_at(const Trace &t, uint64_t index) {
  const char *s = nullptr;
  uint32_t len = 0;
  if (uscope_reader_string(t.r(), static_cast<uint32_t>(index), &s, &len) != USCOPE_OK) return "?";
  return std::string(s, len);
}

struct Cpu {
  std::string name;
  uint32_t period = 0;
  uint16_t committed = kNone, flush = kNone, stall = kNone;
  uint64_t retired = 0, flushes = 0, stalls = 0;
};

struct Latency {
  uint64_t count = 0, sum = 0, min = UINT64_MAX, max = 0;
  void add(uint64_t v) {
    ++count;
    sum += v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
};

struct Npu {
  std::string name;
  uint32_t period = 0;
  uint16_t enqueue = kNone, start = kNone, end = kNone, te_start = kNone, te_end = kNone;
  uscope_field_info_t enq_id{}, enq_type{}, start_id{}, end_id{}, te_engine_s{}, te_engine_e{}, te_macs{};
  uint32_t num_te = 0;
  std::map<uint64_t, std::string> type_of;   // cmd_id -> cmd_type
  std::map<uint64_t, uint64_t> started;      // cmd_id -> time
  std::map<std::string, Latency> by_type;
  Latency all;
  std::map<uint64_t, uint64_t> te_open;      // engine -> time
  uint64_t te_busy_ps = 0, macs = 0;
  uint64_t first_start = UINT64_MAX, last_end = 0;  // the window in which commands ran
  double util(uint64_t span) const {
    return num_te && span ? static_cast<double>(te_busy_ps) / (static_cast<double>(num_te) * span) : 0.0;
  }
  uint64_t active() const { return last_end > first_start ? last_end - first_start : 0; }
};

struct Noc {
  std::string name;
  uint16_t completed = kNone, bytes_tx = kNone;
  uint64_t txns = 0, bytes = 0;
};

}  // namespace

void cmd_summary(const Trace &t, bool json) {
  const Schema s(t);
  const uscope_file_info_t info = t.info();
  std::vector<Cpu> cpus;
  std::vector<Npu> npus;
  std::vector<Noc> nocs;
  for (uint32_t i = 0; i < s.n.scopes; ++i) {
    const auto id = static_cast<uint16_t>(i);
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), id, &sc), "scope");
    if (!sc.protocol) continue;
    if (std::strcmp(sc.protocol, "cpu") == 0) {
      Cpu c;
      c.name = sc.name;
      c.period = s.period(id);
      c.committed = s.storage(id, "committed_insns");
      c.flush = s.event(id, "flush");
      c.stall = s.event(id, "stall");
      cpus.push_back(c);
    } else if (std::strcmp(sc.protocol, "npu") == 0) {
      Npu n;
      n.name = sc.name;
      n.period = s.period(id);
      n.enqueue = s.event(id, "cmd_enqueue");
      n.start = s.event(id, "cmd_start");
      n.end = s.event(id, "cmd_end");
      n.te_start = s.event(id, "te_start");
      n.te_end = s.event(id, "te_end");
      n.enq_id = s.field(n.enqueue, "cmd_id");
      n.enq_type = s.field(n.enqueue, "cmd_type");
      n.start_id = s.field(n.start, "cmd_id");
      n.end_id = s.field(n.end, "cmd_id");
      n.te_engine_s = s.field(n.te_start, "engine");
      n.te_engine_e = s.field(n.te_end, "engine");
      n.te_macs = s.field(n.te_end, "mac_count");
      const uint16_t te = s.storage(id, "te");
      n.num_te = te == kNone ? 0 : t.storage(te).num_slots;
      npus.push_back(std::move(n));
    } else if (std::strcmp(sc.protocol, "noc") == 0) {
      Noc n;
      n.name = sc.name;
      n.completed = s.storage(id, "txn_completed");
      n.bytes_tx = s.storage(id, "bytes_tx");
      nocs.push_back(n);
    }
  }

  // One pass over every event of the trace.
  uscope_event_iter_t *it = nullptr;
  check(uscope_reader_events_in_range(t.r(), 0, UINT64_MAX, &it), "events");
  struct Free {
    uscope_event_iter_t *it;
    ~Free() { uscope_event_iter_free(it); }
  } free_it{it};
  uscope_event_t ev{};
  for (;;) {
    const uscope_status_t st = uscope_event_iter_next(it, &ev);
    if (st == USCOPE_DONE) break;
    check(st, "events");
    for (auto &c : cpus) {
      if (ev.event_type_id == c.flush) ++c.flushes;
      if (ev.event_type_id == c.stall) ++c.stalls;
    }
    for (auto &n : npus) {
      const uint16_t e = ev.event_type_id;
      if (e == n.enqueue && n.enq_id.size) {
        const uint64_t id = payload_field(ev.payload, n.enq_id);
        n.type_of[id] = n.enq_type.size ? string_at(t, payload_field(ev.payload, n.enq_type)) : "?";
      } else if (e == n.start && n.start_id.size) {
        n.started[payload_field(ev.payload, n.start_id)] = ev.time_ps;
        n.first_start = std::min(n.first_start, ev.time_ps);
      } else if (e == n.end && n.end_id.size) {
        const uint64_t id = payload_field(ev.payload, n.end_id);
        auto at = n.started.find(id);
        if (at == n.started.end() || n.period == 0) continue;
        const uint64_t cycles = (ev.time_ps - at->second) / n.period;
        n.started.erase(at);
        n.last_end = std::max(n.last_end, ev.time_ps);
        n.all.add(cycles);
        auto ty = n.type_of.find(id);
        n.by_type[ty == n.type_of.end() ? "?" : ty->second].add(cycles);
      } else if (e == n.te_start) {
        n.te_open[n.te_engine_s.size ? payload_field(ev.payload, n.te_engine_s) : 0] = ev.time_ps;
      } else if (e == n.te_end) {
        auto at = n.te_open.find(n.te_engine_e.size ? payload_field(ev.payload, n.te_engine_e) : 0);
        if (at != n.te_open.end()) {
          n.te_busy_ps += ev.time_ps - at->second;
          n.te_open.erase(at);
        }
        if (n.te_macs.size) n.macs += payload_field(ev.payload, n.te_macs);
      }
    }
  }

  // Counters as they stand after the last frame.
  uscope_state_t *end = nullptr;
  if (!cpus.empty() || !nocs.empty()) check(uscope_reader_state_at(t.r(), UINT64_MAX, &end), "state");
  struct FreeState {
    uscope_state_t *s;
    ~FreeState() { uscope_state_free(s); }
  } free_state{end};
  for (auto &c : cpus) c.retired = counter(t, end, c.committed);
  for (auto &n : nocs) {
    n.txns = counter(t, end, n.completed);
    n.bytes = counter(t, end, n.bytes_tx);
  }

  const uint64_t span_ps = info.last_time_ps;  // the trace starts at time 0
  auto cycles_of = [&](uint32_t period) { return period ? span_ps / period + 1 : 0; };
  if (json) {
    Json j;
    j.begin_object();
    j.field("time_ps", span_ps);
    j.key("cpu");
    j.begin_array();
    for (const auto &c : cpus) {
      const uint64_t cyc = cycles_of(c.period);
      j.begin_object();
      j.field("scope", c.name.c_str());
      j.field("retired", c.retired);
      j.field("cycles", cyc);
      j.key("ipc");
      j.fixed(cyc ? static_cast<double>(c.retired) / static_cast<double>(cyc) : 0.0, 4);
      j.field("flushes", c.flushes);
      j.field("stalls", c.stalls);
      j.end_object();
    }
    j.end_array();
    j.key("npu");
    j.begin_array();
    for (const auto &n : npus) {
      j.begin_object();
      j.field("scope", n.name.c_str());
      j.field("commands", n.all.count);
      j.field("unfinished", static_cast<uint64_t>(n.started.size()));
      j.key("latency_cycles");
      j.begin_object();
      for (const auto &[type, l] : n.by_type) {
        j.key(type.c_str());
        j.begin_object();
        j.field("count", l.count);
        j.field("min", l.min);
        j.field("max", l.max);
        j.key("mean");
        j.fixed(static_cast<double>(l.sum) / static_cast<double>(l.count), 2);
        j.end_object();
      }
      j.end_object();
      j.field("te_engines", n.num_te);
      j.field("te_macs", n.macs);
      j.key("te_utilization");  // over the whole trace
      j.fixed(n.util(span_ps), 4);
      j.key("te_utilization_active");  // from the first command start to the last command end
      j.fixed(n.util(n.active()), 4);
      j.end_object();
    }
    j.end_array();
    j.key("noc");
    j.begin_array();
    for (const auto &n : nocs) {
      j.begin_object();
      j.field("scope", n.name.c_str());
      j.field("transactions", n.txns);
      j.field("bytes", n.bytes);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.end();
    return;
  }
  std::printf("trace       %" PRIu64 " ps\n", span_ps);
  for (const auto &c : cpus) {
    const uint64_t cyc = cycles_of(c.period);
    std::printf("cpu %-8s retired %" PRIu64 " in %" PRIu64 " cycles: IPC %.3f; %" PRIu64 " flushes, %" PRIu64
                " stalls\n",
                c.name.c_str(), c.retired, cyc, cyc ? static_cast<double>(c.retired) / static_cast<double>(cyc) : 0.0,
                c.flushes, c.stalls);
  }
  for (const auto &n : npus) {
    std::printf("npu %-8s %" PRIu64 " commands%s; latency in npu cycles (count, mean, min, max):\n", n.name.c_str(),
                n.all.count, n.started.empty() ? "" : " (some unfinished)");
    for (const auto &[type, l] : n.by_type)
      std::printf("    %-12s %6" PRIu64 " %10.1f %8" PRIu64 " %8" PRIu64 "\n", type.c_str(), l.count,
                  static_cast<double>(l.sum) / static_cast<double>(l.count), l.min, l.max);
    std::printf("    tensor engine: %u engine(s), %" PRIu64 " MACs, utilization %.1f%% of the trace, %.1f%% while "
                "commands ran\n",
                n.num_te, n.macs, 100.0 * n.util(span_ps), 100.0 * n.util(n.active()));
  }
  for (const auto &n : nocs)
    std::printf("noc %-8s %" PRIu64 " transactions, %" PRIu64 " bytes\n", n.name.c_str(), n.txns, n.bytes);
}

}  // namespace uscope_cli
