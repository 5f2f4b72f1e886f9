// The timeline mapping of perfetto.cpp and chrome_json.cpp (timeline_model.hpp).
#include "export/timeline_model.hpp"

#include <algorithm>
#include <deque>
#include <thread>
#include <exception>
#include <atomic>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_set>
#include <unordered_map>
#include <utility>

#include "analysis/cpu_trace.hpp"
#include "analysis/insn_prefetch.hpp"
#include "analysis/noc_analysis.hpp"
#include "base/error.hpp"
#include "convert/matrix.hpp"
#include "convert/pairing.hpp"
#include "convert/uscope_side.hpp"
#include "protocol/noc_table.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::exporter::timeline {

namespace {

using convert::Ev;
using convert::Interval;

// Track numbering: a process's uuid is pid << 20, a track's (pid << 20) | tid
// with 1 <= tid < 2^20; tids are grouped so that Chrome JSON's viewers, which
// sort threads by tid, show them in the mapping's order.
constexpr uint32_t kLanesPerResource = 1000;       // tid = resource * 1000 + lane + 1
constexpr uint32_t kMaxResources = 500;            // resource tids below 500,000
constexpr uint32_t kCounterTidBase = 500000;       // counter tracks after them
constexpr size_t kDepRing = 256;                   // cpu instructions held to link dependencies

const char *unit_label(uint32_t unit) {
  switch (unit) {
    case USCOPE_TIME_CYCLE: return "1 ns = 1 cycle";
    case USCOPE_TIME_PS: return "1 ns = 1 ps";
    default: return "ns";
  }
}

// The window, in one scope's cycles: [a, b], b clamped to the scope's end.
struct Window {
  uint64_t a = 0, b = UINT64_MAX;
  // A span [s, e) (e: the cycle the next state began) is shown when it
  // occupies a cycle of the window, or is empty and inside it.
  bool meets(uint64_t s, uint64_t e) const { return s <= b && (e > a || s >= a); }
  uint64_t clip_start(uint64_t s) const { return std::max(s, a); }
  uint64_t clip_end(uint64_t e) const { return b == UINT64_MAX ? e : std::min(e, b + 1); }
};

// The names of one cpu scope's instructions, each distinct one made once,
// with an id (Name). An instruction's disassembly follows from its pc, its
// bits and the annotation that disassembles it, if any (CpuTrace::disasm);
// a flushed one's name says so: those four are the key of an
// open-addressing table. The texts stay where they are made (a deque), so
// names handed out stay valid. Past kMaxNames distinct names, new ones get
// no id (the encoders then take the text itself).
class InsnNames {
 public:
  static constexpr uint32_t kMaxNames = 1 << 16;
  explicit InsnNames(uint32_t &next_id) : next_id_(next_id), slots_(kMinSlots) {}
  // i's name; d (its disassembly) is read only when the name is new. With no
  // id, the text is valid until the next call.
  Name get(const analysis::InsnView &i, std::string_view d) {
    Key k;
    k.pc = i.head.pc;
    k.bits = (i.head.flags & analysis::InsnPiece::kHasBits) ? i.head.inst_bits : 0;
    k.text = i.head.disasm_text;
    k.flags = static_cast<uint32_t>(i.head.flags & analysis::InsnPiece::kHasBits) |
              (i.head.status == USCOPE_INSN_FLUSHED ? 0x100u : 0u);
    const uint64_t h = hash(k);
    for (size_t at = h & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
      Slot &s = slots_[at];
      if (s.id && s.key == k) return {texts_[s.text], s.id};
      if (s.id) continue;
      if (texts_.size() >= kMaxNames || next_id_ >= kNameIds) {
        make(spill_, d, k.flags & 0x100u);
        return {spill_, 0};
      }
      s.key = k;
      s.id = next_id_++;
      s.text = static_cast<uint32_t>(texts_.size());
      texts_.emplace_back();
      make(texts_.back(), d, k.flags & 0x100u);
      const Name n{texts_.back(), s.id};
      if (2 * texts_.size() > slots_.size()) grow();
      return n;
    }
  }

 private:
  static constexpr size_t kMinSlots = 1024;
  struct Key {
    uint64_t pc = 0;
    uint32_t bits = 0, text = 0, flags = 0;
    bool operator==(const Key &o) const { return pc == o.pc && bits == o.bits && text == o.text && flags == o.flags; }
  };
  struct Slot {
    Key key;
    uint32_t id = 0;  // 0: empty
    uint32_t text = 0;
  };
  static uint64_t hash(const Key &k) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h = (k.pc ^ (uint64_t{k.bits} << 32 | k.text)) * kMul;
    h = (h ^ (h >> 29) ^ k.flags) * kMul;
    return h ^ (h >> 32);
  }
  // "0x<pc> <text>" loses its pc (an argument of the slice, so that names
  // repeat with the code rather than never).
  static void make(std::string &out, std::string_view d, bool flushed) {
    const size_t sp = d.size() > 2 && d[0] == '0' && d[1] == 'x' ? d.find(' ') : std::string_view::npos;
    const size_t from = sp == std::string_view::npos ? 0 : sp + 1;
    out.assign(d.data() + from, d.size() - from);
    if (flushed) out += " (flushed)";
  }
  void grow() {
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    for (const Slot &s : old) {
      if (!s.id) continue;
      size_t at = hash(s.key) & (slots_.size() - 1);
      while (slots_[at].id) at = (at + 1) & (slots_.size() - 1);
      slots_[at] = s;
    }
  }
  uint32_t &next_id_;
  std::vector<Slot> slots_;
  std::deque<std::string> texts_;
  std::string spill_;
};

class Model {
 public:
  Model(Job &job, Encoder &enc) : job_(job), enc_(enc) {}
  Counts run(const SideEncoderFactory &side);

 private:
  // ── time ──
  struct Clock {
    uint32_t unit;
    uint64_t period_ps;
    uint64_t ts(uint64_t cycle) const {
      switch (unit) {
        case USCOPE_TIME_PS: return cycle * period_ps;
        case USCOPE_TIME_NS: return cycle * period_ps / 1000;
        default: return cycle;
      }
    }
  };

  // ── tracks ──
  // A resource (a pipeline stage, an engine, a channel): lanes of
  // non-overlapping slices, each a thread track made when first used.
  struct Resource {
    std::string name;
    uint32_t index = 0;
    struct Lane {
      uint64_t end;
      Track t;
    };
    std::vector<Lane> lanes;
  };
  struct Process {
    Track p;
    uint32_t resources = 0, counters = 0;
  };
  Process new_process(const std::string &name);
  Resource new_resource(Process &pr, std::string name);
  // The track of the lane the slice [s, e) goes to (ts units): the first
  // whose slices all end by s. nullptr when the resource has no lane left.
  const Track *place(const Process &pr, Resource &r, uint64_t s, uint64_t e);
  Track new_counter(Process &pr, const std::string &name);

  void emit_slice(const Track &t, uint64_t s, uint64_t e, const Name &name, const Arg *args, size_t n_args,
                  const std::vector<uint64_t> &out, const std::vector<uint64_t> &in);

  // ── scopes ──
  // A cpu scope to show: its instructions' slices (cpu_slices) and its
  // counter tracks (series_and_rest, possibly on the second thread, over a
  // CpuTrace of its own).
  struct Cpu {
    std::string scope;
    std::unique_ptr<analysis::CpuTrace> t;
    Process pr;
    Window w;
    Clock clk;
  };
  // false: the scope could not be read as the cpu protocol (skipped_ says
  // why). True with nothing in *out when the window lies past its end.
  bool open_cpu(const std::string &scope, uint32_t unit, std::vector<Cpu> *out);
  void cpu_slices(Cpu &c);
  // The parts besides the instructions' slices: every cpu scope's counter
  // tracks, the npu scope (npu_name; none when empty and !npu), the noc scopes.
  struct Rest {
    bool npu = false, noc = false;
    std::string npu_name;
  };
  // What a cpu scope's counter tracks need (copied: the slices' thread goes
  // on adding lanes to the process meanwhile).
  struct SeriesScope {
    std::string scope;
    Process pr;
    Window w;
    Clock clk;
  };
  // The rest: the cpu scopes' counter and occupancy tracks, the noc scopes,
  // then the npu scope.
  void series_and_rest(std::vector<SeriesScope> &cpus, const Rest &rest, uint32_t unit);
  // Everything in turn: each cpu scope's slices, then the rest.
  void all_on_this_thread(std::vector<Cpu> &cpus, const Rest &rest, uint32_t unit);
  // The cpu scopes' slices here, everything else on a second thread meanwhile.
  void rest_on_a_thread(std::vector<Cpu> &cpus, const Rest &rest, uint32_t unit, const SideEncoderFactory &side);
  // The second thread's mapping gives up when the first one failed.
  void check_stop() const {
    if (stop_ && stop_->load(std::memory_order_relaxed)) fail(USCOPE_ERR_INTERNAL, "the export stopped");
  }
  // presence: the segments a cpu series pass saw hold no npu item are left out.
  void npu_scope(uint32_t unit, const std::string &scope, const ScopePresence *presence = nullptr);
  // rider: a pass the noc walk carries (NocOptions::rider).
  void noc_scopes(uint32_t unit, const char *want, ReplayRider *rider = nullptr);
  void widen(uint64_t first, uint64_t last) {
    first_ = std::min(first_, first);
    last_ = any_ ? std::max(last_, last) : last;
    any_ = true;
  }

  Job &job_;
  Encoder &enc_;
  Counts c_;
  uint32_t next_pid_ = 1;
  uint64_t next_flow_ = 1;
  uint32_t next_name_id_ = 1;  // Name ids, over all cpu scopes
  uint64_t lane_overflow_ = 0, deps_unlinked_ = 0, noc_dangling_ = 0;
  uint64_t first_ = UINT64_MAX, last_ = 0;
  bool any_ = false;
  struct Skipped {
    uscope_status_t code;
    std::string why;
  };
  std::vector<Skipped> skipped_;  // cpu scopes that could not be read
  const std::atomic<bool> *stop_ = nullptr;  // the second thread's: set when the first failed
};

Model::Process Model::new_process(const std::string &name) {
  Process pr;
  pr.p.pid = next_pid_++;
  pr.p.uuid = uint64_t{pr.p.pid} << 20;
  enc_.process(pr.p, name);
  return pr;
}

Model::Resource Model::new_resource(Process &pr, std::string name) {
  Resource r;
  r.name = std::move(name);
  r.index = pr.resources++;
  return r;
}

const Track *Model::place(const Process &pr, Resource &r, uint64_t s, uint64_t e) {
  for (Resource::Lane &l : r.lanes)
    if (l.end <= s) {
      l.end = e;
      return &l.t;
    }
  if (r.lanes.size() >= kLanesPerResource || r.index >= kMaxResources) {
    ++lane_overflow_;
    return nullptr;
  }
  Resource::Lane l;
  l.end = e;
  l.t.pid = pr.p.pid;
  l.t.tid = r.index * kLanesPerResource + static_cast<uint32_t>(r.lanes.size()) + 1;
  l.t.uuid = pr.p.uuid | l.t.tid;
  const std::string name = r.lanes.empty() ? r.name : r.name + " #" + std::to_string(r.lanes.size());
  enc_.thread(pr.p, l.t, name);
  r.lanes.push_back(l);
  return &r.lanes.back().t;
}

Track Model::new_counter(Process &pr, const std::string &name) {
  Track t;
  t.pid = pr.p.pid;
  t.tid = kCounterTidBase + pr.counters++;
  t.uuid = pr.p.uuid | t.tid;
  enc_.counter_track(pr.p, t, name);
  return t;
}

void Model::emit_slice(const Track &t, uint64_t s, uint64_t e, const Name &name, const Arg *args, size_t n_args,
                       const std::vector<uint64_t> &out, const std::vector<uint64_t> &in) {
  if ((c_.slices & 0xFFF) == 0) check_stop();
  enc_.slice(t, s, e - s, name, args, n_args, out.data(), out.size(), in.data(), in.size());
  ++c_.slices;
}

// ── cpu: the analysis layer's instructions, counters and buffers ──

bool Model::open_cpu(const std::string &scope, uint32_t unit, std::vector<Cpu> *out) {
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  o.scope = scope.c_str();
  o.elf_path = job_.opts.elf_path;
  o.cache_segments = analysis::kStreamCacheSegments;  // read through a stream only
  // A scope that says it is a cpu one but is not a whole cpu protocol (no
  // entities catalog, ...) is left out with a note when other scopes are
  // exported; named by --scope, it is the error.
  std::unique_ptr<analysis::CpuTrace> t;
  try {
    t = std::make_unique<analysis::CpuTrace>(*job_.reader, o);
  } catch (const Error &e) {
    if (job_.opts.scope) throw;
    skipped_.push_back({e.code(), scope + ": " + e.what()});
    return false;
  }
  const Window w{job_.opts.range_start, std::min(job_.opts.range_end, t->max_cycle())};
  if (w.a > t->max_cycle()) return true;  // the window lies past this scope's end
  widen(w.a, w.b);
  Cpu c;
  c.scope = scope;
  c.clk = Clock{unit, t->period_ps()};
  c.w = w;
  c.pr = new_process(scope + " (cpu, " + unit_label(unit) + ")");
  c.t = std::move(t);
  out->push_back(std::move(c));
  return true;
}

void Model::cpu_slices(Cpu &c) {
  analysis::CpuTrace &t = *c.t;
  const Clock clk = c.clk;
  const Window w = c.w;
  Process &pr = c.pr;
  const std::vector<std::string> &stages = t.stage_names();
  std::vector<Resource> res;
  for (const std::string &s : stages) res.push_back(new_resource(pr, s));

  // Instructions pass through a ring of the last kDepRing fetched, so that a
  // dependency names its source while the source's slices are still
  // unwritten: the source gets the flow's start, the dependent its end.
  struct Held {
    uint32_t entity = 0;
    uint64_t pc = 0, sim_id = 0;
    Name name;
    std::string own;  // name's text when it has no id
    std::vector<uscope_stage_span_t> spans;  // the ones the window shows
    std::vector<uint64_t> out, in;
  };
  std::vector<Held> ring(kDepRing);
  size_t head = 0, count = 0;
  const std::vector<uint64_t> none;
  auto flush_one = [&] {
    Held &h = ring[head];
    bool first = true;
    for (const uscope_stage_span_t &sp : h.spans) {
      const uint64_t s = clk.ts(w.clip_start(sp.start_cycle)), e = clk.ts(w.clip_end(sp.end_cycle));
      if (sp.stage >= res.size()) continue;
      const Track *tr = place(pr, res[sp.stage], s, e);
      if (!tr) continue;
      const Arg args[2] = {{"pc", h.pc, true}, {"insn", h.sim_id, false}};
      emit_slice(*tr, s, e, h.name, args, 2, first ? h.out : none, first ? h.in : none);
      first = false;
    }
    head = (head + 1) % kDepRing;
    --count;
  };

  const uint32_t slots = t.sim_id_slots();
  // Decoded and disassembled on a worker while this thread encodes.
  analysis::InsnPrefetch is(t, w.a, w.b, true);
  InsnNames names(next_name_id_);
  uint64_t n = 0;
  while (const analysis::InsnView *i = is.next()) {
    if (count == kDepRing) flush_one();
    Held &h = ring[(head + count) % kDepRing];
    ++count;
    h.entity = i->head.entity_id;
    h.spans.clear();
    h.out.clear();
    h.in.clear();
    for (const uscope_stage_span_t &sp : i->spans)
      if (w.meets(sp.start_cycle, sp.end_cycle)) h.spans.push_back(sp);
    h.pc = i->head.pc;
    h.sim_id = i->sim_id(slots);
    h.name = names.get(*i, is.disasm());
    if (!h.name.id) {
      h.own.assign(h.name.text.data(), h.name.text.size());
      h.name.text = h.own;
    }
    // A dependency joins the newest earlier instruction of its source
    // entity still held, when both show a slice.
    for (uint32_t src : i->deps) {
      bool linked = false;
      for (size_t k = count - 1; k-- > 0 && !h.spans.empty();) {
        Held &s = ring[(head + k) % kDepRing];
        if (s.entity != src) continue;
        if (!s.spans.empty()) {
          s.out.push_back(next_flow_);
          h.in.push_back(next_flow_++);
          ++c_.flows;
          linked = true;
        }
        break;
      }
      if (!linked) ++deps_unlinked_;
    }
    if ((++n & 0xFFF) == 0 && job_.progress)
      job_.progress->update(i->head.first_cycle - std::min(i->head.first_cycle, w.a), w.b - w.a + 1, "cycles");
  }
  while (count) flush_one();
}

// Counters and buffer occupancy: per cpu scope a sample at the window's
// start and one per change, all its series from one replay (SeriesPass).
// The first scope's pass rides the noc walk, which reads the same segments
// (the window; the noc's lookback before it is not taken): the trace is
// decompressed and decoded once for both. The other scopes' passes, and the
// first's when there is no noc scope, replay on their own. The npu pass
// comes last: it skips the segments the series passes saw hold no npu item.
void Model::series_and_rest(std::vector<SeriesScope> &cpus, const Rest &rest, uint32_t unit) {
  // The noc walk and the passes it carries read one reader (this model's).
  TraceReader &r = *job_.reader;
  ScopePresence seen(r.schema(), r.segments().size());
  struct Series {
    std::unique_ptr<analysis::CpuTrace> t;
    std::vector<analysis::CpuTrace::Series> series;
    std::vector<Track> tracks;
    std::unique_ptr<analysis::SeriesPass> pass;
  };
  std::vector<Series> all(cpus.size());  // sized first: each pass holds its element's address
  for (size_t i = 0; i < cpus.size(); ++i) {
    SeriesScope &c = cpus[i];
    Series &s = all[i];
    uscope_cpu_trace_options_t o{};
    o.struct_size = sizeof o;
    o.scope = c.scope.c_str();
    s.t = std::make_unique<analysis::CpuTrace>(r, o);
    for (const auto &k : s.t->counters()) {
      s.series.push_back({k.storage_id, false});
      s.tracks.push_back(new_counter(c.pr, k.name));
    }
    for (const auto &b : s.t->buffers()) {
      s.series.push_back({b.storage_id, true});
      s.tracks.push_back(new_counter(c.pr, b.name + " occupancy"));
    }
    const Clock clk = c.clk;
    s.pass = std::make_unique<analysis::SeriesPass>(
        *s.t, s.series, c.w.a, c.w.b,
        [this, &s, clk](uint32_t k, uint64_t cycle, uint64_t v) {
          if ((c_.counter_samples & 0xFFF) == 0) check_stop();
          enc_.counter(s.tracks[k], clk.ts(cycle), static_cast<int64_t>(v));
          ++c_.counter_samples;
        },
        &seen);
  }
  if (rest.noc) noc_scopes(unit, job_.opts.scope, all.empty() ? nullptr : all[0].pass.get());
  for (Series &s : all) s.pass->finish();
  all.clear();  // the CpuTraces go before the npu pass
  if (rest.npu) npu_scope(unit, rest.npu_name, &seen);
}

// ── npu: the converters' events, paired into intervals (pairing.hpp) ──

// The pairing key of an event of a kind for the flows' bookkeeping: its id,
// and for transfers its channel or link (the Pairer's own key, whose
// intervals do not carry the ids).
struct WorkKey {
  uint64_t a, b;
  bool operator==(const WorkKey &o) const { return a == o.a && b == o.b; }
};
struct WorkKeyHash {
  size_t operator()(const WorkKey &k) const { return std::hash<uint64_t>()(k.a * 0x9E3779B97F4A7C15ull ^ k.b); }
};
uint64_t raw(const Ev &e, convert::Key k) { return e.has(k) ? e.v[k] : ~uint64_t{0}; }
int pair_kind(uint8_t type, bool *is_start) {
  for (int k = 0; k < convert::kNumPairKinds; ++k) {
    if (convert::kPairStart[k] == type) { *is_start = true; return k; }
    if (convert::kPairEnd[k] == type) { *is_start = false; return k; }
  }
  return -1;
}
WorkKey work_key(int kind, const Ev &e) {
  WorkKey k{static_cast<uint64_t>(kind) << 32, 0};
  switch (kind) {
    case convert::P_CMD: k.b = raw(e, convert::K_cmd_id); break;
    case convert::P_JOB: case convert::P_TE: case convert::P_VE: k.b = raw(e, convert::K_job_id); break;
    case convert::P_NOC: k.b = raw(e, convert::K_tx_id); k.a |= raw(e, convert::K_link_id) & 0xFFFFFFFFu; break;
    default: k.b = raw(e, convert::K_tx_id); k.a |= raw(e, convert::K_channel) & 0xFFFFFFFFu; break;
  }
  return k;
}

void Model::npu_scope(uint32_t unit, const std::string &scope, const ScopePresence *presence) {
  uscope_convert_options_t co{};
  co.struct_size = sizeof co;
  co.on_issue = job_.opts.on_issue;
  co.user = job_.opts.user;
  const convert::Options o(&co);
  std::unique_ptr<convert::EvSource> src;
  std::string err, name = scope.empty() ? std::string("npu") : scope + " (npu,";
  if (job_.kind == Job::Input::Uscope) {
    auto u = std::make_unique<convert::UscopeIn>(*job_.reader, o);
    u->others_shown();  // run() notes the scopes the timeline leaves out
    u->skip_by(presence);
    src = std::move(u);
  } else {
    src = convert::make_source(job_.kind == Job::Input::Pccx ? USCOPE_CONVERT_PCCX : USCOPE_CONVERT_JSONL, o,
                               USCOPE_CONVERT_PCCX, "export");
  }
  if (convert::Status s = src->open(job_.input.c_str(), &err)) fail(s, "%s", err.c_str());
  const uint64_t period = src->period_ps();
  const Clock clk{unit, period};
  const Window w{job_.opts.range_start, job_.opts.range_end};
  Process pr = new_process(name + (scope.empty() ? " (" : " ") + unit_label(unit) + ")");
  const convert::StringSource &strs = src->strings();

  std::map<std::pair<int, uint32_t>, Resource> res;  // (what, core or unit) -> resource
  Resource overflow;
  overflow.index = kMaxResources;  // place() refuses it
  auto resource = [&](int what, uint32_t id) -> Resource & {
    auto it = res.find({what, id});
    if (it != res.end()) return it->second;
    // Ids come from the input: past kMaxResources resources a hostile trace
    // would grow the map, so the rest share one that takes no slices.
    if (res.size() >= kMaxResources) return overflow;
    static const char *const kWhat[] = {"commands", "jobs core ", "TE core ", "VE core ", "DMA channel ",
                                        "DRAM channel ", "NoC link ", "events core "};
    std::string n = kWhat[what];
    if (what != convert::P_CMD) n += id == convert::kNoUnit ? std::string("?") : std::to_string(id);
    return res.emplace(std::make_pair(what, id), new_resource(pr, n)).first->second;
  };

  // Flows: work of a command that is open (started, not ended) when the
  // work ends gets a flow id; the command's slice, written at its end,
  // starts them all.
  struct OpenCmd {
    uint64_t start;
    std::vector<uint64_t> flows;
  };
  std::unordered_map<uint64_t, OpenCmd> open_cmds;
  std::unordered_map<WorkKey, uint64_t, WorkKeyHash> work_cmd;  // START's cmd_id, until its END
  const Ev *cur = nullptr;
  uint64_t last_t = 0;
  bool seen = false;

  struct Sink final : convert::PairSink {
    std::function<void(const Interval &)> on_interval;
    std::function<void(uint8_t, uint64_t, uint32_t)> on_instant;
    void interval(const Interval &iv) override { on_interval(iv); }
    void instant(uint8_t ev_type, uint64_t t, uint32_t core) override { on_instant(ev_type, t, core); }
  } sink;
  std::vector<uint64_t> flows_in;
  const std::vector<uint64_t> none;
  std::string label;
  sink.on_interval = [&](const Interval &iv) {
    flows_in.clear();
    uint64_t cmd = ~uint64_t{0};
    if (iv.kind == convert::P_CMD) {
      cmd = cur ? raw(*cur, convert::K_cmd_id) : cmd;
    } else if (cur) {
      auto it = work_cmd.find(work_key(iv.kind, *cur));
      if (it != work_cmd.end()) cmd = it->second;
    }
    std::vector<uint64_t> cmd_flows;
    if (iv.kind == convert::P_CMD) {
      auto it = open_cmds.find(cmd);
      if (it != open_cmds.end()) {
        cmd_flows = std::move(it->second.flows);
        open_cmds.erase(it);
      }
    }
    if (!w.meets(iv.start, iv.end)) {
      c_.dangling_flows += cmd_flows.size();
      return;
    }
    if (iv.kind != convert::P_CMD && cmd != ~uint64_t{0}) {
      auto it = open_cmds.find(cmd);
      if (it != open_cmds.end() && it->second.start <= iv.start) {
        it->second.flows.push_back(next_flow_);
        flows_in.push_back(next_flow_++);
        ++c_.flows;
      }
    }
    const uint32_t id = iv.kind == convert::P_CMD ? 0
                        : iv.kind >= convert::P_DMA ? iv.unit
                                                    : iv.core;
    Resource &r = resource(iv.kind, id);
    const uint64_t s = clk.ts(w.clip_start(iv.start)), e = clk.ts(w.clip_end(iv.end));
    const Track *tr = place(pr, r, s, e);
    if (!tr) {
      c_.dangling_flows += cmd_flows.size() + flows_in.size();
      return;
    }
    label = convert::kPairNames[iv.kind];
    if (iv.label != convert::kNoLabel) {
      label += ' ';
      label += strs.str(iv.label);
    }
    emit_slice(*tr, s, e, Name{label}, nullptr, 0, cmd_flows, flows_in);
  };
  sink.on_instant = [&](uint8_t type, uint64_t t, uint32_t core) {
    if (!w.meets(t, t)) return;
    Resource &r = resource(7, core);
    const uint64_t ts = clk.ts(t);
    const Track *tr = place(pr, r, ts, ts);
    if (!tr) return;
    enc_.instant(*tr, ts, type < convert::kNumEvTypes ? convert::kEvTypes[type].name : "?");
    ++c_.instants;
  };

  convert::Pairer pairer(sink);
  uint64_t n = 0;
  const convert::Status s = src->run(
      [&](const Ev &e, std::string *) -> convert::Status {
        bool is_start = false;
        const int kind = pair_kind(e.type, &is_start);
        if (kind == convert::P_CMD && is_start) open_cmds[raw(e, convert::K_cmd_id)] = OpenCmd{e.t_cycle, {}};
        uint64_t cmd;
        if (kind > convert::P_CMD && is_start && e.value(convert::K_cmd_id, &cmd)) work_cmd[work_key(kind, e)] = cmd;
        cur = &e;
        pairer.add(e);
        cur = nullptr;
        if (kind > convert::P_CMD && !is_start) work_cmd.erase(work_key(kind, e));
        last_t = e.t_cycle;
        seen = true;
        if ((++n & 0xFFFF) == 0) {
          check_stop();
          if (job_.progress) job_.progress->update(n, 0, "events");
        }
        return 0;
      },
      &err);
  if (s) fail(s, "%s", err.c_str());
  pairer.finish();
  for (const auto &oc : open_cmds) c_.dangling_flows += oc.second.flows.size();
  std::vector<std::string> notes;
  src->notes(&notes);
  for (const std::string &note : notes) job_.note(note);
  if (seen && w.a <= last_t) widen(w.a, std::min(w.b, last_t));
}

// ── noc: the noc analysis's decoder (analysis/noc_analysis.hpp visit_noc) ──
//
// Per noc scope a process; per link (src_port -> dst_port of its hops) a
// resource, its lanes thread tracks; a hop a slice from its issue to its
// completion ("txn 7 read"), or to the window's end when still open, or
// from the window's start when its issue lies before what was read. A
// txn_handoff is a flow from the hop it continues to the hop it names: flow
// ids kNocFlowBase + the handoff's number, both ends written as their hops
// are told (in any order), counted when both are. Retries and timeouts are
// instants on the link of their transaction (a scope's "events" track when
// it is not live); link_credit a counter track per (event scope, port): the
// net credits granted minus consumed since the window's start (the protocol
// records the changes, not the balance). The window is the noc analysis's:
// cycles of the first noc scope's clock; each scope's slices are in its own.
constexpr uint64_t kNocFlowBase = uint64_t{1} << 40;

void Model::noc_scopes(uint32_t unit, const char *want, ReplayRider *rider) {
  struct V final : analysis::NocVisitor {
    Model &m;
    uint32_t tu;
    const char *only;
    struct Scope {
      bool shown = false;
      Process pr;
      Clock clk{USCOPE_TIME_CYCLE, 1000};
      Window w;
      std::map<std::pair<uint64_t, uint64_t>, Resource> links;
      Resource events, overflow;
      bool have_events = false;
      std::vector<std::string> opcodes;
    };
    std::vector<Scope> scopes;
    std::map<std::pair<uint16_t, uint64_t>, std::pair<Track, int64_t>> credits;  // (event scope, port)
    uint32_t credit_tracks = 0;
    const std::vector<analysis::NocScopeInfo> *info = nullptr;
    uint64_t t0 = 0, t1 = 0;
    std::unordered_set<uint64_t> half;  // flow ids written at one end only
    std::vector<uint64_t> out, in;
    std::string label;
    const Schema *schema = nullptr;

    V(Model &model, uint32_t u, const char *o) : m(model), tu(u), only(o) {}

    void begin(const analysis::NocLayout &l) override {
      t0 = l.t0_ps;
      t1 = l.t1_ps;
      info = &l.scopes;
      for (const analysis::NocScopeInfo &si : l.scopes) {
        Scope s;
        s.shown = (!only || si.name == only) && l.start_cycle <= l.max_cycle;
        s.clk = Clock{tu, si.period_ps};
        s.w = Window{t0 / si.period_ps, t1 == UINT64_MAX ? UINT64_MAX : t1 / si.period_ps};
        s.opcodes = si.opcodes;
        s.overflow.index = kMaxResources;  // place() refuses it
        if (s.shown) {
          s.pr = m.new_process(si.name + " (noc, " + unit_label(tu) + ")");
          m.widen(l.start_cycle, l.end_cycle);
        }
        scopes.push_back(std::move(s));
      }
    }
    Resource &link(Scope &s, uint64_t src, uint64_t dst) {
      auto it = s.links.find({src, dst});
      if (it != s.links.end()) return it->second;
      // Ports come from the input: past kMaxResources links the rest share one that takes no slices.
      if (s.links.size() >= kMaxResources) return s.overflow;
      return s.links
          .emplace(std::make_pair(src, dst),
                   m.new_resource(s.pr, "port " + std::to_string(src) + " -> " + std::to_string(dst)))
          .first->second;
    }
    Resource &events(Scope &s) {
      if (!s.have_events) {
        s.events = m.new_resource(s.pr, "events");
        s.have_events = true;
      }
      return s.events;
    }
    // A flow end written: counted when its other end was written too.
    void end_of(uint64_t id, std::vector<uint64_t> &to) {
      const uint64_t f = kNocFlowBase + id;
      to.push_back(f);
      if (half.erase(f)) {
        ++m.c_.flows;
      } else {
        half.insert(f);
      }
    }
    void hop(const analysis::NocHop &h) override {
      Scope &s = scopes[h.scope];
      if (!s.shown) return;
      const uint64_t P = (*info)[h.scope].period_ps;
      // In this scope's cycles: [issue, complete), open to the window's end.
      const uint64_t a = h.known_issue ? h.issue_ps / P : s.w.a;
      const uint64_t e = h.open ? (s.w.b == UINT64_MAX ? a + 1 : s.w.b + 1) : h.complete_ps / P;
      // Shown when the report counts it: completed in the window, or live at its end
      // (a hop ending at the window's first cycle is an empty slice there).
      if ((h.known_issue && h.issue_ps > t1) || (!h.open && h.complete_ps < t0)) return;
      const uint64_t ts = s.clk.ts(s.w.clip_start(a)), te = std::max(ts, s.clk.ts(s.w.clip_end(std::max(a, e))));
      const Track *tr = m.place(s.pr, link(s, h.src_port, h.dst_port), ts, te);
      if (!tr) return;
      out.clear();
      in.clear();
      for (size_t i = 0; i < h.n_out; ++i) end_of(h.handoffs_out[i], out);
      if (h.handoff_in) end_of(h.handoff_in, in);
      label = "txn " + std::to_string(h.slot);
      if (h.has_opcode) {
        label += ' ';
        label += h.opcode < s.opcodes.size() && !s.opcodes[h.opcode].empty() ? s.opcodes[h.opcode]
                                                                             : "op " + std::to_string(h.opcode);
      }
      if (h.open) label += " (open)";
      Arg args[4] = {{"txn", h.slot, false}, {"src_port", h.src_port, false}, {"dst_port", h.dst_port, false},
                     {"addr", h.addr, true}};
      m.emit_slice(*tr, ts, te, Name{label}, args, h.has_addr ? 4 : 3, out, in);
    }
    void instant(const analysis::NocInstant &x) override {
      Scope &s = scopes[x.scope];
      if (!s.shown || x.t_ps < t0 || x.t_ps > t1) return;
      const uint64_t ts = s.clk.ts(x.t_ps / (*info)[x.scope].period_ps);
      Resource &r = x.live ? link(s, x.src_port, x.dst_port) : events(s);
      // An instant goes on the link's first lane (any slice under it is fine).
      const Track *tr = r.lanes.empty() ? m.place(s.pr, r, ts, ts) : &r.lanes[0].t;
      if (!tr) return;
      if (x.timeout) {
        label = "timeout txn " + std::to_string(x.txn);
      } else {
        label = "retry txn " + std::to_string(x.txn) + " (" +
                (x.value < std::size(proto::noc::kRetryReasons) ? proto::noc::kRetryReasons[x.value]
                                                                : std::to_string(x.value).c_str()) +
                ")";
      }
      m.enc_.instant(*tr, ts, label);
      ++m.c_.instants;
    }
    void credit(const analysis::NocCredit &x) override {
      Scope &s = scopes[x.scope];
      if (!s.shown || x.t_ps < t0 || x.t_ps > t1) return;
      auto it = credits.find({x.event_scope_id, x.port});
      if (it == credits.end()) {
        if (credit_tracks >= kMaxResources) return;  // ports come from the input
        ++credit_tracks;
        const char *where = schema->str(schema->scopes[x.event_scope_id].name);
        const Track t = m.new_counter(s.pr, std::string(where ? where : "?") + " port " + std::to_string(x.port) +
                                                " credits (net)");
        it = credits.emplace(std::make_pair(x.event_scope_id, x.port), std::make_pair(t, int64_t{0})).first;
      }
      int64_t &net = it->second.second;
      net += x.grant ? static_cast<int64_t>(x.credits) : -static_cast<int64_t>(x.credits);
      m.enc_.counter(it->second.first, s.clk.ts(x.t_ps / (*info)[x.scope].period_ps), net);
      ++m.c_.counter_samples;
    }
  } v(*this, unit, want);
  v.schema = &job_.reader->schema();
  analysis::NocOptions o;
  o.start_cycle = job_.opts.range_start;
  o.end_cycle = job_.opts.range_end;
  o.rider = rider;
  try {
    analysis::visit_noc(*job_.reader, o, v);
  } catch (const Error &e) {
    // A scope declared noc without the catalog of noc §3: as for a cpu
    // scope, a note when other scopes are exported, the error when named.
    if (want || e.code() != USCOPE_ERR_SCHEMA) throw;
    job_.note(std::string("not exported: noc scopes: ") + e.what());
  }
  noc_dangling_ += v.half.size();
}

// The scopes of a µScope trace by protocol.
std::vector<std::pair<std::string, std::string>> scopes_of(const TraceReader &r) {
  std::vector<std::pair<std::string, std::string>> out;  // (name, protocol)
  const Schema &sc = r.schema();
  for (const ScopeDef &s : sc.scopes) {
    if (s.protocol == 0xFFFF) continue;
    const char *p = sc.str(s.protocol), *n = sc.str(s.name);
    out.emplace_back(n ? n : "", p ? p : "");
  }
  return out;
}

void Model::all_on_this_thread(std::vector<Cpu> &cpus, const Rest &rest, uint32_t unit) {
  std::vector<SeriesScope> series;
  for (Cpu &c : cpus) {
    cpu_slices(c);
    c.t.reset();  // its decode cache goes before the next scope's fills
    series.push_back({c.scope, c.pr, c.w, c.clk});
  }
  series_and_rest(series, rest, unit);
}

// The second thread: a reader of its own (a TraceReader is not shared
// between threads) and a Model of its own, with the process ids after the
// cpu scopes' and flow ids from kSideFlows up, so that both threads' ids
// stay unique; its notes and counts join this thread's once it is done.
// The cpu scopes' processes are described before it starts, and their
// counter tracks are its own (their ids: past the stages' lanes').
void Model::rest_on_a_thread(std::vector<Cpu> &cpus, const Rest &rest, uint32_t unit, const SideEncoderFactory &side) {
  // Below 2^53: Chrome JSON's readers take ids as doubles.
  constexpr uint64_t kSideFlows = uint64_t{1} << 48;
  enc_.flush();
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::vector<std::pair<uint64_t, std::string>> notes;  // (line, text), as on_issue is told them
  std::unique_ptr<Model> other;
  Job job = job_;
  job.progress = nullptr;  // drawn by this thread only
  // The caller's callback is called from its own thread only: the notes
  // wait for the join.
  job.opts.on_issue = [](void *user, uint64_t line, const char *text) {
    static_cast<std::vector<std::pair<uint64_t, std::string>> *>(user)->emplace_back(line, text);
  };
  job.opts.user = &notes;
  // What the side needs of the cpu scopes, copied now: this thread goes on
  // adding lanes to their processes.
  std::vector<SeriesScope> series;
  for (const Cpu &c : cpus) series.push_back({c.scope, c.pr, c.w, c.clk});
  const uint32_t first_pid = next_pid_;
  std::unique_ptr<TraceReader> reader;
  std::unique_ptr<Encoder> enc;
  std::thread th([&] {
    try {
      reader = std::make_unique<TraceReader>(job.input);
      job.reader = reader.get();
      enc = side();
      other = std::make_unique<Model>(job, *enc);
      Model &m = *other;
      m.stop_ = &stop;
      m.next_pid_ = first_pid;
      m.next_flow_ = kSideFlows;
      m.series_and_rest(series, rest, unit);
      enc->flush();
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    for (Cpu &c : cpus) {
      cpu_slices(c);
      c.t.reset();  // its decode cache goes before the next scope's fills
    }
  } catch (...) {
    stop = true;
    th.join();
    throw;
  }
  th.join();
  if (error) std::rethrow_exception(error);
  const Model &m = *other;
  c_.slices += m.c_.slices;
  c_.instants += m.c_.instants;
  c_.counter_samples += m.c_.counter_samples;
  c_.flows += m.c_.flows;
  c_.dangling_flows += m.c_.dangling_flows;
  lane_overflow_ += m.lane_overflow_;
  deps_unlinked_ += m.deps_unlinked_;
  noc_dangling_ += m.noc_dangling_;
  if (m.any_) widen(m.first_, m.last_);
  if (job_.opts.on_issue)
    for (const auto &[line, text] : notes) job_.opts.on_issue(job_.opts.user, line, text.c_str());
}

Counts Model::run(const SideEncoderFactory &side) {
  uint32_t unit = job_.opts.time_unit;
  if (job_.kind != Job::Input::Uscope) {
    if (unit == USCOPE_TIME_AUTO) unit = USCOPE_TIME_CYCLE;
    npu_scope(unit, "");
  } else {
    const TraceReader &r = *job_.reader;
    if (unit == USCOPE_TIME_AUTO) unit = r.schema().clocks.size() <= 1 ? USCOPE_TIME_CYCLE : USCOPE_TIME_PS;
    const auto scopes = scopes_of(r);
    const char *want = job_.opts.scope;
    bool any = false, opened = false;
    std::string known;
    Rest rest;
    std::vector<Cpu> cpus;
    for (const auto &[name, proto] : scopes) {
      if (proto == "noc") {
        known += (known.empty() ? "" : ", ") + name + " (" + proto + ")";
        rest.noc |= !want || name == want;
        continue;
      }
      if (proto != "cpu" && proto != "npu") continue;
      known += (known.empty() ? "" : ", ") + name + " (" + proto + ")";
      if (want && name != want) continue;
      if (proto == "cpu") {
        opened |= open_cpu(name, unit, &cpus);
        any = true;
      } else if (!rest.npu) {  // the converters read the first npu scope
        rest.npu = any = true;
        rest.npu_name = name;
      }
    }
    // Every scope there was failed to open: the first failure is the error.
    if (any && !opened && !rest.npu && !rest.noc) fail(skipped_[0].code, "%s", skipped_[0].why.c_str());
    any |= rest.noc;
    if (!any) {
      if (want) fail(USCOPE_ERR_NOT_FOUND, "no cpu, npu or noc scope named '%s' (the trace has: %s)", want,
                     known.empty() ? "none" : known.c_str());
      fail(USCOPE_ERR_NOT_FOUND, "this trace has no cpu, npu or noc protocol scope: nothing to show on a timeline");
    }
    // The instructions' slices are most of a cpu trace's records: with a
    // side encoder, everything else is mapped meanwhile on a second thread.
    bool more = rest.npu || rest.noc;
    for (const Cpu &c : cpus) more |= !c.t->counters().empty() || !c.t->buffers().empty();
    if (side && !cpus.empty() && more) {
      rest_on_a_thread(cpus, rest, unit, side);
    } else {
      all_on_this_thread(cpus, rest, unit);
    }
    for (const Skipped &k : skipped_) job_.note("not exported: cpu scope " + k.why);
    std::string other;
    for (const auto &[name, proto] : scopes)
      if (proto != "cpu" && proto != "npu" && proto != "noc" && !want) other += (other.empty() ? "" : ", ") + name + " (" + proto + ")";
    if (!other.empty()) job_.note("not exported (no timeline mapping for their protocol): " + other);
  }
  enc_.finish();
  if (lane_overflow_)
    job_.note(convert::count_of(lane_overflow_, "slice") + " left out: more than " +
              std::to_string(kLanesPerResource) + " overlapping on one resource, or more than " +
              std::to_string(kMaxResources) + " resources (engines, channels, links) in a process");
  if (deps_unlinked_)
    job_.note(convert::count_of(deps_unlinked_, "dependency") +
              " without a flow: the source instruction is outside the window or more than " +
              std::to_string(kDepRing) + " instructions earlier");
  if (c_.dangling_flows)
    job_.note(convert::count_of(c_.dangling_flows, "flow") +
              " from NPU work to a command whose slice is not in the output (it never ended, or ends outside the window)");
  if (noc_dangling_)
    job_.note(convert::count_of(noc_dangling_, "NoC handoff") +
              " with one end only: the hop it continues or names is outside the window or never issued");
  job_.stats.first_cycle = any_ ? first_ : job_.opts.range_start;
  job_.stats.last_cycle = any_ ? last_ : job_.opts.range_start;
  job_.stats.records = c_.slices + c_.instants + c_.counter_samples;
  return c_;
}

}  // namespace

Counts run(Job &job, Encoder &enc, const SideEncoderFactory &side) { return Model(job, enc).run(side); }

}  // namespace uscope::exporter::timeline
