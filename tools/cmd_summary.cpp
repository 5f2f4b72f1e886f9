// uscope summary FILE [--json]: what a protocol-aware reader learns from a
// trace, per scope, using the roles the cpu and noc chapters of the spec
// and docs/npu-protocol.md give to storages and events, not one name:
//   cpu scopes: instructions retired: a counter with the committed role
//               (committed_insns, cpu §6; committed in the §10 examples),
//               else the entity catalog's retirements (a slot of `entities`
//               cleared without a flush event for it, cpu §3.4); cycles of
//               the scope's clock; IPC; pipeline flushes (cycles with flush
//               events) and instructions squashed (flush events: one per
//               squashed entity, §5.4); stall events. A figure the trace
//               cannot give is n/a with the reason, never 0;
//   npu scopes: commands by type with their latency (cmd_start to cmd_end):
//               a command is named by its cmd_type, else by its phase (its
//               cmd_enqueue's own, else that of the context of its
//               cmd_enqueue or cmd_start: files converted from pccx have
//               commands with a phase and no cmd_type), else "(no cmd_type)";
//               tensor-engine busy time (at least one te job running) over
//               the trace and over the time at least one command was in
//               flight; the te storage's slots are job slots, not engines;
//               MACs: the sum of the te_end mac_counts that are present (an
//               absent or null one, docs/npu-protocol.md §2.4, is counted
//               apart and said, never added);
//   noc scopes: the txn_completed, bytes_tx (bytes transmitted) and
//               bytes_rx (bytes received) counters, each labelled: the two
//               directions are not added up nor one of them dropped.
// One pass over the events of the trace, one state_at at its end. Only a
// cpu scope without a committed counter needs the ops (the catalog's
// clears): then the pass goes over the items of every segment, which costs
// about 3x (2M cycles of examples/pipeline.c: 1.1 s against 0.37 s). So does
// naming commands by their context's phase, in a second pass taken only when
// a finished command has neither a cmd_type nor a phase of its own.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_command.hpp"
#include "protocol/cpu_table.hpp"
#include "protocol/noc_table.hpp"
#include "protocol/npu_table.hpp"

namespace uscope_cli {
namespace {

constexpr uint16_t kNone = 0xFFFF;

// The names summary looks for, from the protocol tables (src/protocol/*_table.hpp):
// a name not in its table does not compile.
namespace table = uscope::proto::table;
namespace cpu_t = uscope::proto::cpu;
namespace npu_t = uscope::proto::npu;
namespace noc_t = uscope::proto::noc;
constexpr const char *kCount = table::kCounterField.name;
// cpu
constexpr const char *kCommittedInsns = table::name_in(cpu_t::kTable.counters, "committed_insns");
constexpr const char *kCommitted = "committed";  // the counter of the spec's §10 examples: not the protocol's
constexpr const char *kEntities = table::name_in(cpu_t::kTable.storages, "entities");
constexpr const char *kEntityId = table::field_in(cpu_t::kTable.storages, "entities", "entity_id");
constexpr const char *kFlush = table::name_in(cpu_t::kTable.events, "flush");
constexpr const char *kFlushEntityId = table::field_in(cpu_t::kTable.events, "flush", "entity_id");
constexpr const char *kStall = table::name_in(cpu_t::kTable.events, "stall");
// npu
constexpr const char *kCmdEnqueue = table::name_in(npu_t::kTable.events, "cmd_enqueue");
constexpr const char *kCmdStart = table::name_in(npu_t::kTable.events, "cmd_start");
constexpr const char *kCmdEnd = table::name_in(npu_t::kTable.events, "cmd_end");
constexpr const char *kTeStart = table::name_in(npu_t::kTable.events, "te_start");
constexpr const char *kTeEnd = table::name_in(npu_t::kTable.events, "te_end");
constexpr const char *kEnqCmdId = table::field_in(npu_t::kTable.events, "cmd_enqueue", "cmd_id");
constexpr const char *kEnqCmdType = table::field_in(npu_t::kTable.events, "cmd_enqueue", "cmd_type");
constexpr const char *kEnqPhase = table::field_in(npu_t::kTable.events, "cmd_enqueue", "phase");
constexpr const char *kEnqCtx = table::field_in(npu_t::kTable.events, "cmd_enqueue", "ctx");
constexpr const char *kStartCtx = table::field_in(npu_t::kTable.events, "cmd_start", "ctx");
constexpr const char *kContexts = table::name_in(npu_t::kTable.storages, "contexts");
constexpr const char *kContextPhase = table::field_in(npu_t::kTable.storages, "contexts", "phase");
constexpr const char *kStartCmdId = table::field_in(npu_t::kTable.events, "cmd_start", "cmd_id");
constexpr const char *kEndCmdId = table::field_in(npu_t::kTable.events, "cmd_end", "cmd_id");
constexpr const char *kTeStartEngine = table::field_in(npu_t::kTable.events, "te_start", "engine");
constexpr const char *kTeEndEngine = table::field_in(npu_t::kTable.events, "te_end", "engine");
constexpr const char *kTeEndMacs = table::field_in(npu_t::kTable.events, "te_end", "mac_count");
constexpr const char *kTe = table::name_in(npu_t::kTable.storages, "te");
// noc
constexpr const char *kTxnCompleted = table::name_in(noc_t::kTable.counters, "txn_completed");
constexpr const char *kBytesTx = table::name_in(noc_t::kTable.counters, "bytes_tx");
constexpr const char *kBytesRx = table::name_in(noc_t::kTable.counters, "bytes_rx");

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
  // A counter (spec cpu §2.4: one slot, not sparse) of the scope by name.
  uint16_t counter(uint16_t scope, const char *name) const {
    const uint16_t id = storage(scope, name);
    if (id == kNone) return kNone;
    const auto s = t.storage(id);
    return s.num_slots == 1 && !(s.flags & USCOPE_SF_SPARSE) ? id : kNone;
  }
  // A sparse storage (the entity catalog) of the scope by name.
  uint16_t catalog(uint16_t scope, const char *name) const {
    const uint16_t id = storage(scope, name);
    return id != kNone && (t.storage(id).flags & USCOPE_SF_SPARSE) ? id : kNone;
  }
  uint16_t storage_field(uint16_t sid, const char *name) const {
    uint16_t f = 0;
    return sid != kNone && uscope_reader_find_field(t.r(), &f, sid, name, 0) == USCOPE_OK ? f : kNone;
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
  // The clock of a scope, following inheritance up the tree; period 0 and
  // no name when no ancestor names one.
  uscope_clock_info_t clock(uint16_t scope) const {
    for (int depth = 0; scope != USCOPE_NO_PARENT && depth < 65536; ++depth) {
      uscope_scope_info_t s{};
      check(uscope_reader_scope(t.r(), &s, scope), "scope");
      if (s.clock_id != USCOPE_CLOCK_INHERIT) {
        uscope_clock_info_t c{};
        check(uscope_reader_clock(t.r(), &c, s.clock_id), "clock");
        return c;
      }
      scope = s.parent_id;
    }
    return uscope_clock_info_t{};
  }
};

// A counter's value (field "count", else field 0) in a state.
uint64_t counter_value(const Trace &t, const uscope_state_t *st, uint16_t sid) {
  if (sid == kNone || !st) return 0;
  uint16_t f = 0;
  if (uscope_reader_find_field(t.r(), &f, sid, kCount, 0) != USCOPE_OK) f = 0;
  uint64_t v = 0;
  check(uscope_state_slot_field(st, &v, sid, 0, f), "counter");
  return v;
}

// The npu protocol's absent and null sentinels (docs/npu-protocol.md §2.4):
// all ones, and all ones but the lowest bit, at the field's width. They are
// values no figure may add up or print as a number or a string.
bool npu_sentinel(uint64_t v, uint32_t size) {
  const uint64_t ones = size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
  return v == ones || v == ones - 1;
}

// A STRING_REF that is present: its text; else false (absent, null, or an
// index past the string table, which a reader cannot name either).
bool string_at(const Trace &t, uint64_t index, uint32_t size, std::string *out) {
  if (npu_sentinel(index, size)) return false;
  const char *s = nullptr;
  uint32_t len = 0;
  if (uscope_reader_string(t.r(), &s, &len, static_cast<uint32_t>(index)) != USCOPE_OK) return false;
  out->assign(s, len);
  return true;
}

constexpr const char *kNoCmdType = "(no cmd_type)";
std::string phase_name(const std::string &phase) { return phase + " (phase)"; }

// The slots of the entity catalog as the ops leave them: valid, and the
// entity_id (kept per slot, since an op sets one field at a time).
struct Slots {
  std::vector<uint8_t> valid;
  std::vector<uint64_t> a;
  void init(uint32_t n) { valid.assign(n, 0), a.assign(n, 0); }
  bool has(uint16_t slot) const { return slot < valid.size(); }
};

struct Cpu {
  std::string name, clock;
  uint32_t period = 0;
  uint16_t committed = kNone;  // a counter with the committed role
  std::string committed_name;
  uint16_t catalog = kNone, cat_eid = kNone;  // `entities`, its entity_id field
  bool use_catalog = false;                   // no committed counter: retirement from the catalog
  uint16_t flush = kNone, stall = kNone;
  uscope_field_info_t flush_eid{};
  Slots slots;  // a: entity_id
  std::vector<uint64_t> cleared_now, flushed_now;  // entity ids in the current frame
  uint64_t fetched = 0, cat_retired = 0, squashed = 0, flush_cycles = 0, stalls = 0, counter = 0;
  uint64_t last_flush = 0;
  bool any_flush = false;
  // At the end of a frame: a cleared entity with a flush event in the same
  // frame was squashed, any other retired (cpu §3.4).
  void resolve() {
    for (const uint64_t id : cleared_now) {
      auto at = std::find(flushed_now.begin(), flushed_now.end(), id);
      if (at != flushed_now.end()) flushed_now.erase(at);
      else ++cat_retired;
    }
    cleared_now.clear();
    flushed_now.clear();
  }
  // The retired figure: true with *v set, or false with *why.
  bool retired(uint64_t *v, std::string *source, std::string *why) const {
    if (committed != kNone) {
      *v = counter;
      *source = "counter " + committed_name;
      return true;
    }
    if (use_catalog && (cat_retired || !fetched)) {
      *v = cat_retired;
      *source = std::string("entity catalog ") + kEntities + ": slots cleared without a flush event";
      return true;
    }
    *why = std::string("no counter with the committed role (") + kCommittedInsns + ", or " + kCommitted +
           ") in scope '" + name + "', and ";
    if (catalog == kNone) *why += std::string("no entity catalog '") + kEntities + "' (sparse) in it";
    else *why += std::string("no slot of its entity catalog '") + kEntities +
                 "' was cleared without a flush event (" + grouped(fetched) + " fetched)";
    return false;
  }
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

// A context slot named by an event at a time: its phase is the slot's at
// that time (the npu protocol's rule, docs/npu-protocol.md §2.3).
struct CtxRef {
  uint64_t time = 0;
  uint16_t ctx = USCOPE_NPU_NO_CONTEXT;
};
// A command known before its cmd_end: its name, or where its name may be.
struct Cmd {
  std::string name;  // "" until known
  CtxRef refs[2];    // its cmd_enqueue's context, then its cmd_start's
  int nrefs = 0;
  void ref(uint64_t time, const uscope_field_info_t &f, const uint8_t *payload) {
    if (!f.size || nrefs == 2) return;
    const uint64_t c = payload_field(payload, f);
    if (c != USCOPE_NPU_NO_CONTEXT) refs[nrefs++] = {time, static_cast<uint16_t>(c)};
  }
};
// A finished command whose name waits for its contexts' phases.
struct Unnamed {
  Cmd cmd;
  uint64_t cycles = 0;
};

struct Npu {
  std::string name;
  uint32_t period = 0;
  uint16_t enqueue = kNone, start = kNone, end = kNone, te_start = kNone, te_end = kNone;
  uscope_field_info_t enq_id{}, enq_type{}, enq_phase{}, enq_ctx{}, start_id{}, start_ctx{}, end_id{},
      te_engine_s{}, te_engine_e{}, te_macs{};
  uint16_t contexts = kNone, ctx_phase = kNone;  // the contexts storage, its phase field
  uint32_t te_slots = 0;
  std::map<uint64_t, Cmd> cmds;              // cmd_id -> the command, from its cmd_enqueue / cmd_start
  std::map<uint64_t, uint64_t> started;      // cmd_id -> time: the commands in flight
  std::map<std::string, Latency> by_type;
  std::vector<Unnamed> unnamed;
  Latency all;
  std::map<uint64_t, uint64_t> te_open;      // te slot -> time its job started
  uint64_t te_jobs = 0, te_job_ps = 0;
  // te_end mac_counts: the sum of the present ones, and the te_end events
  // without one (absent, null, or no such field in the schema).
  uint64_t macs = 0, te_ends = 0, no_macs = 0;
  bool macs_overflow = false;
  // A sweep over time: between two events of the scope, whether a te job
  // runs and whether a command is in flight stay the same.
  uint64_t last_t = 0, busy_ps = 0, in_flight_ps = 0, busy_in_flight_ps = 0;
  void advance(uint64_t t) {
    if (t <= last_t) return;
    const uint64_t dt = t - last_t;
    const bool busy = !te_open.empty(), in_flight = !started.empty();
    if (busy) busy_ps += dt;
    if (in_flight) in_flight_ps += dt;
    if (busy && in_flight) busy_in_flight_ps += dt;
    last_t = t;
  }
};

struct Noc {
  std::string name;
  uint16_t completed = kNone, bytes_tx = kNone, bytes_rx = kNone;
  uint64_t txns = 0, tx = 0, rx = 0;
};

double ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

// "4 npu cycles" / "4.5 npu cycles": a time in cycles of a clock, for the
// text output; "" without a period.
std::string in_cycles(uint64_t ps, uint32_t period, const char *clock) {
  if (!period) return "";
  char b[64];
  if (ps % period == 0) return grouped(ps / period) + " " + clock + " cycles";
  // One decimal, digits grouped as the whole numbers are.
  uint64_t whole = ps / period, tenth = ((ps % period) * 10 + period / 2) / period;  // no overflow: rem < period
  if (tenth == 10) ++whole, tenth = 0;
  std::snprintf(b, sizeof b, ".%u %s cycles", static_cast<unsigned>(tenth), clock);
  return grouped(whole) + b;
}

// For an error on a file that is not a µScope trace (by its magic): which
// files summary reads, and what reads this one. "" else.
std::string summary_hint(const std::string &path) {
  const std::string m = file_magic(path);  // never waits on a FIFO (it hung here)
  if (m.empty() || m == "uSCP") return "";  // unreadable or a trace: the reader said why
  const bool pccx = m == "PCCX";
  return std::string("\n  summary reads µScope traces (.uscope, magic \"uSCP\")") +
         (pccx ? "; this is a pccx-lab .pccx container" : "") +
         "; for NPU files (.jsonl, .jsonl.gz, .uscope, .pccx) use: uscope npu-report " + path;
}

// Names the finished commands that have neither a cmd_type nor a phase of
// their own by the phase of their context (their cmd_enqueue's, else their
// cmd_start's) at the time of that event: the contexts storage is replayed
// from the ops of every segment, and each lookup is answered once the ops of
// its frame are applied. A command without one is "(no cmd_type)".
// Calls fn for every item (op or event) of segment seg, in stream order.
template <class Fn>
void for_each_item(const Trace &t, uint32_t seg, Fn &&fn) {
  uscope_item_iter_t *it = nullptr;
  check(uscope_reader_segment_items(t.r(), &it, seg), "segment items");
  struct Free {
    uscope_item_iter_t *it;
    ~Free() { uscope_item_iter_free(it); }
  } free_it{it};
  uscope_item_t item{};
  for (;;) {
    const uscope_status_t st = uscope_item_iter_next(it, &item);
    if (st == USCOPE_DONE) break;
    check(st, "segment items");
    fn(item);
  }
}

void name_by_context(const Trace &t, const uscope_file_info_t &info, std::vector<Npu> &npus) {
  struct Lookup {
    uint64_t time;
    size_t npu, cmd;
    int ref;
  };
  struct Ctx {
    std::vector<uint8_t> valid;
    std::vector<uint64_t> phase;
    std::vector<uint64_t> found[2];  // per unnamed command, per ref: the phase string index
  };
  std::vector<Lookup> look;
  std::vector<Ctx> ctx(npus.size());
  for (size_t i = 0; i < npus.size(); ++i) {
    Npu &n = npus[i];
    if (n.unnamed.empty() || n.contexts == kNone || n.ctx_phase == kNone) continue;
    const uint32_t slots = t.storage(n.contexts).num_slots;
    ctx[i].valid.assign(slots, 0);
    ctx[i].phase.assign(slots, USCOPE_NPU_STR_ABSENT);
    for (auto &f : ctx[i].found) f.assign(n.unnamed.size(), USCOPE_NPU_STR_ABSENT);
    for (size_t k = 0; k < n.unnamed.size(); ++k)
      for (int r = 0; r < n.unnamed[k].cmd.nrefs; ++r) look.push_back({n.unnamed[k].cmd.refs[r].time, i, k, r});
  }
  if (!look.empty()) {
    std::stable_sort(look.begin(), look.end(), [](const Lookup &a, const Lookup &b) { return a.time < b.time; });
    size_t next = 0;
    // Answers the lookups at times before `before` from the state as it stands.
    auto answer = [&](uint64_t before, bool all) {
      for (; next < look.size() && (all || look[next].time < before); ++next) {
        const Lookup &l = look[next];
        const Ctx &c = ctx[l.npu];
        const uint16_t slot = npus[l.npu].unnamed[l.cmd].cmd.refs[l.ref].ctx;
        if (slot < c.valid.size() && c.valid[slot]) ctx[l.npu].found[l.ref][l.cmd] = c.phase[slot];
      }
    };
    for (uint32_t seg = 0; seg < info.num_segments && next < look.size(); ++seg) {
      for_each_item(t, seg, [&](const uscope_item_t &item) {
        answer(item.time_ps, false);  // every op of the earlier frames is applied
        if (item.is_event) return;
        for (size_t i = 0; i < npus.size(); ++i) {
          Ctx &c = ctx[i];
          if (item.storage_id != npus[i].contexts || item.slot >= c.valid.size()) continue;
          if (item.action == 1) {  // set: a slot made valid starts as zeros (npu-protocol.md §2.3)
            if (!c.valid[item.slot]) c.phase[item.slot] = 0;
            c.valid[item.slot] = 1;
            if (item.field == npus[i].ctx_phase) c.phase[item.slot] = item.value;
          } else if (item.action == 2) {
            c.valid[item.slot] = 0;
          }
        }
      });
    }
    answer(0, true);
  }
  for (size_t i = 0; i < npus.size(); ++i) {
    Npu &n = npus[i];
    for (size_t k = 0; k < n.unnamed.size(); ++k) {
      std::string name = kNoCmdType, v;
      for (int r = 0; r < n.unnamed[k].cmd.nrefs && !ctx[i].found[r].empty(); ++r)
        if (string_at(t, ctx[i].found[r][k], 4, &v)) {
          name = phase_name(v);
          break;
        }
      n.by_type[name].add(n.unnamed[k].cycles);
    }
    n.unnamed.clear();
  }
}

void cmd_summary(const Trace &t, bool json) {
  const Schema s(t);
  const uscope_file_info_t info = t.info();
  std::vector<Cpu> cpus;
  std::vector<Npu> npus;
  std::vector<Noc> nocs;
  for (uint32_t i = 0; i < s.n.scopes; ++i) {
    const auto id = static_cast<uint16_t>(i);
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, id), "scope");
    if (!sc.protocol) continue;
    if (std::strcmp(sc.protocol, cpu_t::kTable.name) == 0) {
      Cpu c;
      c.name = sc.name;
      const auto ck = s.clock(id);
      c.period = static_cast<uint32_t>(cycle_period(t, ck.period_ps));
      c.clock = ck.name ? ck.name : "";
      for (const char *role : {kCommittedInsns, kCommitted}) {  // cpu §6; §10's examples
        if ((c.committed = s.counter(id, role)) != kNone) {
          c.committed_name = role;
          break;
        }
      }
      c.catalog = s.catalog(id, kEntities);
      c.cat_eid = s.storage_field(c.catalog, kEntityId);
      if (c.catalog != kNone) c.slots.init(t.storage(c.catalog).num_slots);
      c.flush = s.event(id, kFlush);
      c.flush_eid = s.field(c.flush, kFlushEntityId);
      c.stall = s.event(id, kStall);
      cpus.push_back(std::move(c));
    } else if (std::strcmp(sc.protocol, npu_t::kTable.name) == 0) {
      Npu n;
      n.name = sc.name;
      n.period = static_cast<uint32_t>(cycle_period(t, s.clock(id).period_ps));
      n.enqueue = s.event(id, kCmdEnqueue);
      n.start = s.event(id, kCmdStart);
      n.end = s.event(id, kCmdEnd);
      n.te_start = s.event(id, kTeStart);
      n.te_end = s.event(id, kTeEnd);
      n.enq_id = s.field(n.enqueue, kEnqCmdId);
      n.enq_type = s.field(n.enqueue, kEnqCmdType);
      n.enq_phase = s.field(n.enqueue, kEnqPhase);
      n.enq_ctx = s.field(n.enqueue, kEnqCtx);
      n.start_id = s.field(n.start, kStartCmdId);
      n.start_ctx = s.field(n.start, kStartCtx);
      n.contexts = s.catalog(id, kContexts);
      n.ctx_phase = s.storage_field(n.contexts, kContextPhase);
      n.end_id = s.field(n.end, kEndCmdId);
      n.te_engine_s = s.field(n.te_start, kTeStartEngine);
      n.te_engine_e = s.field(n.te_end, kTeEndEngine);
      n.te_macs = s.field(n.te_end, kTeEndMacs);
      const uint16_t te = s.storage(id, kTe);
      n.te_slots = te == kNone ? 0 : t.storage(te).num_slots;
      npus.push_back(std::move(n));
    } else if (std::strcmp(sc.protocol, noc_t::kTable.name) == 0) {
      Noc n;
      n.name = sc.name;
      n.completed = s.counter(id, kTxnCompleted);
      n.bytes_tx = s.counter(id, kBytesTx);
      n.bytes_rx = s.counter(id, kBytesRx);
      nocs.push_back(std::move(n));
    }
  }

  // One pass over every event (and op, when a catalog is needed) of the trace.
  uint64_t frame_time = 0;
  auto on_op = [&](const uscope_item_t &it) {
    for (auto &c : cpus) {
      if (it.storage_id != c.catalog || !c.slots.has(it.slot)) continue;
      if (it.action == 1) {  // set: a fetch makes the slot valid
        if (!c.slots.valid[it.slot]) ++c.fetched, c.slots.a[it.slot] = it.slot;
        c.slots.valid[it.slot] = 1;
        if (it.field == c.cat_eid) c.slots.a[it.slot] = it.value;
      } else if (it.action == 2 && c.slots.valid[it.slot]) {  // clear: retired or squashed
        c.slots.valid[it.slot] = 0;
        c.cleared_now.push_back(c.slots.a[it.slot]);
      }
    }
  };
  auto on_event = [&](uint64_t time, uint16_t e, const uint8_t *payload) {
    for (auto &c : cpus) {
      if (e == c.flush) {
        ++c.squashed;
        if (!c.any_flush || time != c.last_flush) ++c.flush_cycles;
        c.any_flush = true;
        c.last_flush = time;
        if (c.flush_eid.size) c.flushed_now.push_back(payload_field(payload, c.flush_eid));
      }
      if (e == c.stall) ++c.stalls;
    }
    for (auto &n : npus) {
      if (e != n.enqueue && e != n.start && e != n.end && e != n.te_start && e != n.te_end) continue;
      n.advance(time);
      if (e == n.enqueue && n.enq_id.size) {
        Cmd &c = n.cmds[payload_field(payload, n.enq_id)];
        c = Cmd{};
        std::string v;
        if (n.enq_type.size && string_at(t, payload_field(payload, n.enq_type), n.enq_type.size, &v)) c.name = v;
        else if (n.enq_phase.size && string_at(t, payload_field(payload, n.enq_phase), n.enq_phase.size, &v))
          c.name = phase_name(v);  // its own phase wins over its context's (npu-protocol.md §4)
        else c.ref(time, n.enq_ctx, payload);
      } else if (e == n.start && n.start_id.size) {
        const uint64_t id = payload_field(payload, n.start_id);
        n.started[id] = time;
        Cmd &c = n.cmds[id];
        if (c.name.empty()) c.ref(time, n.start_ctx, payload);
      } else if (e == n.end && n.end_id.size) {
        const uint64_t id = payload_field(payload, n.end_id);
        auto at = n.started.find(id);
        if (at == n.started.end() || n.period == 0) continue;
        const uint64_t cycles = (time - at->second) / n.period;
        n.started.erase(at);
        n.all.add(cycles);
        auto c = n.cmds.find(id);
        if (c != n.cmds.end() && !c->second.name.empty()) n.by_type[c->second.name].add(cycles);
        else if (c != n.cmds.end() && c->second.nrefs) n.unnamed.push_back({c->second, cycles});
        else n.by_type[kNoCmdType].add(cycles);
        if (c != n.cmds.end()) n.cmds.erase(c);
      } else if (e == n.te_start) {
        n.te_open[n.te_engine_s.size ? payload_field(payload, n.te_engine_s) : 0] = time;
      } else if (e == n.te_end) {
        auto at = n.te_open.find(n.te_engine_e.size ? payload_field(payload, n.te_engine_e) : 0);
        if (at != n.te_open.end()) {
          ++n.te_jobs;
          n.te_job_ps += time - at->second;
          n.te_open.erase(at);
        }
        ++n.te_ends;
        const uint64_t m = n.te_macs.size ? payload_field(payload, n.te_macs) : 0;
        if (!n.te_macs.size || npu_sentinel(m, n.te_macs.size)) ++n.no_macs;
        else if (__builtin_add_overflow(n.macs, m, &n.macs)) n.macs = UINT64_MAX, n.macs_overflow = true;
      }
    }
  };
  bool need_ops = false;
  for (auto &c : cpus) {
    c.use_catalog = c.committed == kNone && c.catalog != kNone;
    need_ops = need_ops || c.use_catalog;
  }
  if (!need_ops) {
    uscope_event_iter_t *it = nullptr;
    check(uscope_reader_events_in_range(t.r(), &it, 0, UINT64_MAX), "events");
    struct Free {
      uscope_event_iter_t *it;
      ~Free() { uscope_event_iter_free(it); }
    } free_it{it};
    uscope_event_t ev{};
    for (;;) {
      const uscope_status_t st = uscope_event_iter_next(it, &ev);
      if (st == USCOPE_DONE) break;
      check(st, "events");
      on_event(ev.time_ps, ev.event_type_id, ev.payload);
    }
  }
  for (uint32_t seg = 0; need_ops && seg < info.num_segments; ++seg) {
    for_each_item(t, seg, [&](const uscope_item_t &item) {
      if (item.time_ps != frame_time) {
        for (auto &c : cpus) c.resolve();
        frame_time = item.time_ps;
      }
      if (item.is_event) on_event(item.time_ps, item.event_type_id, item.payload);
      else on_op(item);
    });
  }
  for (auto &c : cpus) c.resolve();
  name_by_context(t, info, npus);

  // Counters as they stand after the last frame.
  uscope_state_t *end = nullptr;
  if (!cpus.empty() || !nocs.empty()) check(uscope_reader_state_at(t.r(), &end, UINT64_MAX), "state");
  struct FreeState {
    uscope_state_t *s;
    ~FreeState() { uscope_state_free(s); }
  } free_state{end};
  for (auto &c : cpus) c.counter = counter_value(t, end, c.committed);
  for (auto &n : nocs) {
    n.txns = counter_value(t, end, n.completed);
    n.tx = counter_value(t, end, n.bytes_tx);
    n.rx = counter_value(t, end, n.bytes_rx);
  }

  const uint64_t span_ps = info.last_time_ps;  // the trace starts at time 0
  for (auto &n : npus) n.advance(span_ps);      // jobs and commands still open at the end
  auto cycles_of = [&](uint32_t period) { return period ? span_ps / period + 1 : 0; };
  auto counter_or_null = [](Json &j, const char *k, uint16_t sid, uint64_t v) {
    j.key(k);
    if (sid == kNone) j.null();
    else j.num(v);
  };
  if (json) {
    Json j;
    j.begin_object();
    j.field("time_ps", span_ps);
    j.key("cpu");
    j.begin_array();
    for (const auto &c : cpus) {
      const uint64_t cyc = cycles_of(c.period);
      uint64_t retired = 0;
      std::string source, why;
      const bool ok = c.retired(&retired, &source, &why);
      j.begin_object();
      j.field("scope", c.name.c_str());
      j.field("clock", c.clock.c_str());
      j.field("cycles", cyc);
      j.key("instructions_retired");
      if (ok) j.num(retired);
      else j.null();
      j.key("retired_source");
      if (ok) j.str(source.c_str());
      else j.null();
      if (!ok) j.field("retired_unavailable", why.c_str());
      j.key("ipc");
      if (ok && cyc) j.fixed(static_cast<double>(retired) / static_cast<double>(cyc), 4);
      else j.null();
      j.field("pipeline_flushes", c.flush_cycles);
      j.field("instructions_squashed", c.squashed);
      j.field("stall_events", c.stalls);
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
      j.field("te_job_slots", n.te_slots);
      j.field("te_jobs", n.te_jobs);
      j.key("te_macs");  // null when no te_end has a mac_count
      if (n.te_ends && n.no_macs == n.te_ends) j.null();
      else j.num(n.macs);
      j.field("te_jobs_without_mac_count", n.no_macs);
      if (n.macs_overflow) j.field("te_macs_overflow", true);
      j.field("te_busy_ps", n.busy_ps);  // at least one te job running
      j.key("te_utilization");           // te_busy_ps / time_ps
      j.fixed(ratio(n.busy_ps, span_ps), 4);
      j.field("commands_in_flight_ps", n.in_flight_ps);  // at least one command started, not ended
      j.field("te_busy_while_commands_in_flight_ps", n.busy_in_flight_ps);
      j.key("te_utilization_while_commands_in_flight");
      j.fixed(ratio(n.busy_in_flight_ps, n.in_flight_ps), 4);
      j.key("te_mean_jobs_running");  // job time / time_ps: mean of the te slots in use
      j.fixed(ratio(n.te_job_ps, span_ps), 4);
      j.end_object();
    }
    j.end_array();
    j.key("noc");
    j.begin_array();
    for (const auto &n : nocs) {
      j.begin_object();
      j.field("scope", n.name.c_str());
      counter_or_null(j, "transactions_completed", n.completed, n.txns);
      counter_or_null(j, "bytes_tx", n.bytes_tx, n.tx);
      counter_or_null(j, "bytes_rx", n.bytes_rx, n.rx);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    j.end();
    return;
  }
  std::printf("trace       %s ps\n", grouped(span_ps).c_str());
  for (const auto &c : cpus) {
    const uint64_t cyc = cycles_of(c.period);
    uint64_t retired = 0;
    std::string source, why;
    std::printf("cpu %-8s %s cycles of %s (%s ps)\n", c.name.c_str(), grouped(cyc).c_str(),
                c.clock.empty() ? "no clock" : c.clock.c_str(), grouped(c.period).c_str());
    if (c.retired(&retired, &source, &why)) {
      std::printf("    instructions retired  %s (%s); IPC %.3f\n", grouped(retired).c_str(), source.c_str(),
                  ratio(retired, cyc));
    } else {
      std::printf("    instructions retired  n/a (%s); IPC n/a\n", why.c_str());
    }
    std::printf("    pipeline flushes      %s (cycles with at least one flush event)\n", grouped(c.flush_cycles).c_str());
    std::printf("    instructions squashed %s (flush events, one per squashed instruction)\n",
                grouped(c.squashed).c_str());
    std::printf("    stall events          %s\n", grouped(c.stalls).c_str());
  }
  for (const auto &n : npus) {
    std::printf("npu %-8s %s commands%s; latency in npu cycles (count, mean, min, max):\n", n.name.c_str(),
                grouped(n.all.count).c_str(),
                n.started.empty() ? "" : (", " + grouped(n.started.size()) + " unfinished").c_str());
    int width = 12;  // the names' column: as wide as the longest
    for (const auto &bt : n.by_type) width = std::max(width, static_cast<int>(bt.first.size()));
    for (const auto &[type, l] : n.by_type)
      std::printf("    %-*s %6" PRIu64 " %10.1f %8" PRIu64 " %8" PRIu64 "\n", width, type.c_str(), l.count,
                  static_cast<double>(l.sum) / static_cast<double>(l.count), l.min, l.max);
    std::string macs;
    const std::string missing = grouped(n.no_macs) + (n.no_macs == 1 ? " job" : " jobs") + " had no mac_count";
    if (n.te_ends && n.no_macs == n.te_ends) macs = "MACs n/a (" + missing + ")";
    else macs = (n.macs_overflow ? "over " : "") + grouped(n.macs) + " MACs" + (n.no_macs ? " (" + missing + ")" : "");
    std::printf("    tensor engine: %s jobs on %s job slot%s (storage %s), %s\n", grouped(n.te_jobs).c_str(),
                grouped(n.te_slots).c_str(), n.te_slots == 1 ? "" : "s", kTe, macs.c_str());
    const std::string trace_cyc = in_cycles(span_ps, n.period, "npu");
    std::printf("      busy (at least one job running) %.1f%% of the %s ps of the trace%s%s%s\n",
                100.0 * ratio(n.busy_ps, span_ps), grouped(span_ps).c_str(), trace_cyc.empty() ? "" : " (",
                trace_cyc.c_str(), trace_cyc.empty() ? "" : ")");
    const std::string fl_cyc = in_cycles(n.in_flight_ps, n.period, "npu");
    std::printf("      busy %.1f%% of the %s ps%s%s%s during which at least one command was in flight\n",
                100.0 * ratio(n.busy_in_flight_ps, n.in_flight_ps), grouped(n.in_flight_ps).c_str(),
                fl_cyc.empty() ? "" : " (", fl_cyc.c_str(), fl_cyc.empty() ? "" : ")");
    std::printf("      %.2f jobs running on average over the trace\n", ratio(n.te_job_ps, span_ps));
  }
  for (const auto &n : nocs) {
    auto ctr = [](uint16_t sid, uint64_t v, const char *name) {
      return sid == kNone ? std::string("n/a (no counter ") + name + ")" : grouped(v) + " (counter " + name + ")";
    };
    std::printf("noc %-8s transactions completed %s\n", n.name.c_str(), ctr(n.completed, n.txns, kTxnCompleted).c_str());
    std::printf("    bytes transmitted %s, bytes received %s\n", ctr(n.bytes_tx, n.tx, kBytesTx).c_str(),
                ctr(n.bytes_rx, n.rx, kBytesRx).c_str());
  }
}

class Summary final : public TraceCommand {
 public:
  Summary()
      : TraceCommand("summary", "per-scope figures of cpu, npu and noc protocol scopes", "trace file (.uscope)") {}

 private:
  void add_trace_options(CLI::App &sub) override { sub.add_flag("--json", json_, "JSON output"); }
  void read(const Trace &t) override { cmd_summary(t, json_); }
  std::string error_hint() const override { return summary_hint(file()); }
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> summary_command() { return std::make_unique<Summary>(); }

}  // namespace uscope_cli
