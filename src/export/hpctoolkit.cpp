// uscope export --to hpctoolkit: an HPCToolkit database v4 directory
// (meta.db, profile.db, cct.db, trace.db; hpctoolkit_db.hpp encodes them)
// for hpcviewer, from a µScope trace's cpu scopes and npu scope
// (docs/export.md "HPCToolkit" says what maps to what).
//
// One profile per cpu scope (a core) and one per NPU engine. The calling
// context tree is the firmware's, as FwProfile (fw_profile.hpp) rebuilds it
// from each core's retired instructions: its frames become function
// contexts under their call site's line, its lines line contexts; plus one
// synthetic "npu/<engine>" context per engine. Memory is bounded by the
// firmware's code and call paths and by the number of engines: values are
// folded per context as instructions stream by, and the trace lines go to
// temporary files.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "base/error.hpp"
#include "convert/convert.hpp"
#include "convert/report.hpp"
#include "convert/uscope_side.hpp"
#include "export/export.hpp"
#include "export/fw_profile.hpp"
#include "export/hpctoolkit_db.hpp"
#include "protocol/npu_table.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::exporter {

namespace {

namespace h = hpctk;
using analysis::CpuTrace;

// The metrics, in meta.db order; stall reasons follow as "stall:<reason>".
enum : uint32_t { kCycles = 0, kRetired = 1, kNpuBusy = 2, kFirstStall = 3 };

// ns from a cycle of a clock of period_ps: every line of trace.db shares
// one time axis (cpu and npu clocks may differ), in the unit HPCToolkit
// gives its timestamps. Sub-ns periods are floored; TraceLines keeps the
// last sample of one ns.
uint64_t ns_of(uint64_t cycle, uint64_t period_ps) {
  // floor(cycle * period / 1000) without the 64-bit overflow of the product.
  const uint64_t q = cycle / 1000, r = cycle % 1000;
  if (period_ps && q > (UINT64_MAX - period_ps) / period_ps) return UINT64_MAX;
  return q * period_ps + r * period_ps / 1000;
}

// A whole file written at once into the output directory.
void write_file(const std::string &path, const std::string &bytes) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) fail(USCOPE_ERR_IO, "%s: %s", path.c_str(), std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) fail(USCOPE_ERR_IO, "%s: %s", path.c_str(), std::strerror(errno));
}

// The database being built: contexts are created as code is met.
struct Builder {
  h::Database db;
  std::map<std::string, uint32_t> files, functions;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> fn_ctx;             // (parent ctx, function) -> ctx
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> line_ctx;  // (fn ctx, file, line) -> ctx
  std::vector<std::string> stall_names;                                     // metric kFirstStall + i
  // profile -> ctx * kFirstStall + metric (the per-instruction ones, dense),
  // and profile -> (ctx, stall metric) -> value.
  std::vector<std::vector<double>> fixed;
  std::vector<std::map<std::pair<uint32_t, uint32_t>, double>> other;

  Builder() {
    h::Context root;  // ctxId 0: the whole execution, "<program root>" as hpcprof names it
    root.function = function("<program root>", h::kNone, 0);
    db.contexts.push_back(root);
  }
  uint32_t file(const std::string &f) {
    auto it = files.find(f);
    if (it != files.end()) return it->second;
    db.files.push_back(f);
    return files[f] = uint32_t(db.files.size() - 1);
  }
  uint32_t function(const std::string &name, uint32_t module, uint64_t offset, uint32_t file = h::kNone,
                    uint32_t line = 0) {
    auto it = functions.find(name);
    if (it != functions.end()) return it->second;
    h::Function f;
    f.name = name;
    f.module = module;
    f.offset = offset;
    f.file = file;
    f.line = line;
    db.functions.push_back(f);
    return functions[name] = uint32_t(db.functions.size() - 1);
  }
  // Function fn called from context parent (a call site's line, or a function).
  uint32_t child_function(uint32_t parent, uint32_t fn) {
    auto key = std::make_pair(parent, fn);
    auto it = fn_ctx.find(key);
    if (it != fn_ctx.end()) return it->second;
    h::Context c;
    c.parent = parent;
    c.relation = h::kCall;
    c.lexical = h::kFunction;
    c.function = fn;  // its definition's file and line are the function's (meta.db Functions)
    db.contexts.push_back(c);
    return fn_ctx[key] = uint32_t(db.contexts.size() - 1);
  }
  // Source line (file, ln) within function context fctx.
  uint32_t child_line(uint32_t fctx, uint32_t file, uint32_t ln) {
    auto key = std::make_tuple(fctx, file, ln);
    auto it = line_ctx.find(key);
    if (it != line_ctx.end()) return it->second;
    h::Context c;
    c.parent = fctx;
    c.relation = h::kLexical;
    c.lexical = h::kLine;
    c.file = file;
    c.line = ln;
    db.contexts.push_back(c);
    return line_ctx[key] = uint32_t(db.contexts.size() - 1);
  }
  uint32_t profile(std::vector<h::IdEntry> ids) {
    db.profiles.push_back(std::move(ids));
    fixed.emplace_back();
    other.emplace_back();
    return uint32_t(db.profiles.size() - 1);
  }
  void add(uint32_t prof, uint32_t ctx, uint32_t metric, double v) {
    if (metric >= kFirstStall) {
      other[prof][{ctx, metric}] += v;
      return;
    }
    std::vector<double> &f = fixed[prof];
    const size_t i = size_t(ctx) * kFirstStall + metric;
    if (f.size() <= i) f.resize(std::max(i + 1, 2 * f.size()), 0.0);
    f[i] += v;
  }
  uint32_t stall_metric(const std::string &name) {
    for (size_t i = 0; i < stall_names.size(); ++i)
      if (stall_names[i] == name) return kFirstStall + uint32_t(i);
    stall_names.push_back(name);
    return kFirstStall + uint32_t(stall_names.size() - 1);
  }
  void finish() {
    db.metrics = {"cycles", "retired", "npu busy cycles"};
    for (const auto &s : stall_names) db.metrics.push_back("stall:" + s);
    db.resize_values();
    for (size_t p = 0; p < fixed.size(); ++p) {
      for (size_t i = 0; i < fixed[p].size(); ++i)
        if (fixed[p][i] != 0) db.add(uint32_t(p), uint32_t(i / kFirstStall), uint32_t(i % kFirstStall), fixed[p][i]);
      for (const auto &kv : other[p]) db.add(uint32_t(p), kv.first.first, kv.first.second, kv.second);
    }
  }
};

std::vector<std::string> cpu_scopes(const TraceReader &r, const char *want) {
  const Schema &s = r.schema();
  std::vector<std::string> out;
  for (const ScopeDef &sc : s.scopes) {
    if (sc.protocol == wire::kNoString || std::strcmp(s.name(sc.protocol), "cpu") != 0) continue;
    std::string name = s.name(sc.name);
    if (!want || name == want) out.push_back(name);
  }
  return out;
}

bool has_npu(const TraceReader &r) {
  const Schema &s = r.schema();
  for (const ScopeDef &sc : s.scopes)
    if (sc.protocol != wire::kNoString && std::strcmp(s.name(sc.protocol), proto::npu::kTable.name) == 0) return true;
  return false;
}

// One core: FwProfile (fw_profile.hpp) walks the instructions retired in
// [a, e] in retire order and rebuilds the firmware's calling contexts; each
// of its frames becomes a function context called from its call site's line
// context, each (frame, file, line) a line context. Returns the scope's
// clock period.
uint64_t export_core(Job &job, Builder &b, h::TraceLines &lines, const std::string &scope, uint32_t core,
                     uint64_t *first, uint64_t *last, bool *any) {
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  o.scope = scope.c_str();
  o.elf_path = job.opts.elf_path;
  CpuTrace t(*job.reader, o);
  if (!t.elf())
    fail(USCOPE_ERR_NOT_FOUND,
         "hpctoolkit: cpu scope '%s' has no ELF to attribute its instructions to functions and lines%s%s "
         "(pass --elf FILE or set the trace's cpu.elf_path)",
         scope.c_str(), t.elf_note().empty() ? "" : ": ", t.elf_note().c_str());
  const uint64_t max = t.max_cycle();
  const uint64_t a = job.opts.range_start;
  if (a > max)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "hpctoolkit: the range starts at cycle %llu, after cpu scope '%s' ends (%llu)",
         static_cast<unsigned long long>(a), scope.c_str(), static_cast<unsigned long long>(max));
  const uint64_t e = std::min<uint64_t>(job.opts.range_end, max);
  if (!*any || a < *first) *first = a;
  if (!*any || e > *last) *last = e;
  *any = true;

  uint32_t module = h::kNone;
  for (size_t m = 0; m < b.db.modules.size(); ++m)
    if (b.db.modules[m] == t.elf_path()) module = uint32_t(m);
  if (module == h::kNone) {
    b.db.modules.push_back(t.elf_path());
    module = uint32_t(b.db.modules.size() - 1);
  }
  const uint32_t prof = b.profile({{h::kCore, false, core, core}});
  const uint32_t line = lines.add_line(prof + 1);
  const uint64_t P = t.period_ps();
  analysis::ElfInfo &elf = *t.elf();

  FwProfile fp(t);
  // FwProfile's frames and lines -> contexts (bounded by the firmware's call paths).
  std::vector<uint32_t> node_ctx;  // by node: its function context (kNone: not made yet)
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, uint32_t> &k) const {
      const uint64_t x = k.first * 0x9E3779B97F4A7C15ull ^ k.second;
      return static_cast<size_t>(x ^ (x >> 31));
    }
  };
  // (node << 32 | file, line) -> context: the per-instruction lookup.
  std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, KeyHash> line_ctx;
  std::vector<uint32_t> files;  // FwProfile file -> meta.db file
  auto file_of = [&](uint32_t f) {
    while (files.size() <= f) {
      const std::string &name = fp.files()[files.size()];
      files.push_back(files.empty() || name.empty() ? h::kNone : b.file(name));
    }
    return files[f];
  };
  std::function<uint32_t(uint32_t, uint64_t)> node_to_ctx;
  auto line_to_ctx = [&](uint32_t node, uint32_t file, uint32_t ln, uint64_t pc) -> uint32_t {
    const auto key = std::make_pair(uint64_t{node} << 32 | file, ln);
    auto it = line_ctx.find(key);
    if (it != line_ctx.end()) return it->second;
    const uint32_t fctx = node_to_ctx(node, pc);
    const uint32_t c = ln == 0 || file_of(file) == h::kNone ? fctx : b.child_line(fctx, file_of(file), ln);
    line_ctx.emplace(key, c);
    return c;
  };
  node_to_ctx = [&](uint32_t node, uint64_t pc) -> uint32_t {
    if (node == FwProfile::kRoot) return 0;
    if (node < node_ctx.size() && node_ctx[node] != h::kNone) return node_ctx[node];
    const FwProfile::Node &n = fp.nodes()[node];
    const FwProfile::Function &f = fp.functions()[n.function];
    // The entry point from objdump's name for a pc in it ("f+0x1c").
    const std::string sym = elf.symbol_at(pc);
    const size_t plus = sym.rfind('+');
    const uint64_t entry = plus == std::string::npos ? pc : pc - std::strtoull(sym.c_str() + plus + 1, nullptr, 16);
    const uint32_t fn = b.function(f.name, module, entry, file_of(f.file), f.first_line);
    // The call site: the caller's line context, else the caller's function context.
    const uint32_t parent = n.call_line ? line_to_ctx(n.parent, n.call_file, n.call_line, pc)
                                        : node_to_ctx(n.parent, pc);
    const uint32_t c = b.child_function(parent, fn);
    if (node_ctx.size() <= node) node_ctx.resize(node + 1, h::kNone);
    node_ctx[node] = c;
    return c;
  };

  uint64_t mark = a;  // the line is in the context of the instruction whose retirement ends the cycles from here
  fp.run(
      a, e,
      [&](const FwProfile::Retired &r) {
        const uint32_t c = line_to_ctx(r.node, r.file, r.line, r.pc);
        b.add(prof, c, kRetired, 1);
        b.add(prof, c, kCycles, double(r.cycles));
        if (r.cycles) {
          lines.sample(line, ns_of(mark, P), c);
          mark = r.cycle;
        }
      },
      job.progress);
  // The line ends where the window does: idle (the root) after the last retirement.
  if (mark <= e) lines.sample(line, ns_of(mark, P), 0);
  // A function's definition: the first line of its file seen in it (final after run()).
  for (const FwProfile::Function &f : fp.functions()) {
    auto it = b.functions.find(f.name);
    if (it == b.functions.end() || b.db.functions[it->second].file != h::kNone || !f.first_line) continue;
    b.db.functions[it->second].file = file_of(f.file);
    b.db.functions[it->second].line = f.first_line;
  }
  // The stalls at the root: a stall event names no instruction. Counted by
  // FwProfile's instruction stream as it decoded the window (InsnStream::
  // stalls, the analysis layer's count), so the window is decoded once.
  const std::vector<uint64_t> &stalls = fp.stalls();
  const Schema &sc = t.reader().schema();
  for (size_t k = 0; k < stalls.size(); ++k) {
    if (!stalls[k]) continue;
    std::string name = std::to_string(k);
    if (t.ids().stall_enum < sc.enums.size())
      for (const EnumValue &v : sc.enums[t.ids().stall_enum].values)
        if (v.value == k) name = sc.name(v.name);
    b.add(prof, 0, b.stall_metric(name), double(stalls[k]));
  }
  job.stats.records += fp.retired();
  return P;
}

// An event source that hands each event of another to `tap` before the
// pairing of convert::measure sees it: one pass over the trace gives both
// the npu report and the engines' trace lines.
class TapSource final : public convert::EvSource {
 public:
  using Tap = std::function<void(const convert::Ev &)>;
  TapSource(convert::EvSource &in, Tap tap) : in_(in), tap_(std::move(tap)) {}
  convert::Status open(const char *path, std::string *error) override { return in_.open(path, error); }
  convert::Status run(const Fn &fn, std::string *error) override {
    return in_.run(
        [&](const convert::Ev &ev, std::string *reason) -> convert::Status {
          tap_(ev);
          return fn(ev, reason);
        },
        error);
  }
  const convert::StringSource &strings() const override { return in_.strings(); }
  const convert::TraceMeta &meta() const override { return in_.meta(); }
  uint64_t period_ps() const override { return in_.period_ps(); }
  convert::Issues &issues() override { return in_.issues(); }
  convert::IngestStats stats() const override { return in_.stats(); }

 private:
  convert::EvSource &in_;
  Tap tap_;
};

// The NPU engines: busy cycles per engine as the npu analysis measures them
// (analysis::analyze_npu: convert::measure over the npu events, in the
// window), and a trace line per engine from its START/END events (busy
// while at least one job runs, as the analysis counts busy time). Both come
// from one pass over the trace: the measure's source is tapped for the
// lines, whose engines, profiles and contexts are then numbered as the
// report orders the engines (then the engines only the events name, as
// they came), and TraceLines gives each line its context at the end.
struct NpuPass {
  uint64_t a = 0, e = 0;  // the window, npu cycles
  uint64_t events = 0;
  std::vector<std::pair<std::string, uint64_t>> order;  // engines (name, busy) in profile order
  std::map<std::string, uint32_t> line;                 // engine -> its line in the pass's TraceLines
};
NpuPass npu_pass(const Job &job, TraceReader &r, h::TraceLines &lines, uint64_t cpu_period, bool have_cpu) {
  const convert::Options copts(nullptr);
  convert::UscopeIn in(r, copts);
  std::string err;
  if (const uscope_status_t st = in.attach(&err)) fail(st, "%s", err.c_str());
  const uint64_t P = in.period_ps() ? in.period_ps() : 1000;
  // The range is in cycles of the cpu scope's clock when there is one.
  uint64_t start_cycle = 0, end_cycle = UINT64_MAX;
  if (job.range_given) {
    start_cycle = have_cpu ? job.opts.range_start * cpu_period / P : job.opts.range_start;
    end_cycle = job.opts.range_end == UINT64_MAX
                    ? UINT64_MAX
                    : (have_cpu ? (job.opts.range_end * cpu_period + cpu_period - 1) / P : job.opts.range_end);
  }
  if (start_cycle > end_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(start_cycle), static_cast<unsigned long long>(end_cycle));
  // The npu analysis's window (npu_analysis.cpp analyze_npu): the trace's
  // last cycle from its header and its last segment.
  uint64_t last_ps = r.header().total_time_ps;
  if (!r.segments().empty()) last_ps = std::max(last_ps, r.segments().back().header.time_end_ps);
  const uint64_t max_cycle = last_ps / P;
  convert::Report rep;
  rep.format = "uscope";
  rep.strs = &in.strings();
  rep.period_ps = P;
  if (start_cycle != 0 || end_cycle != UINT64_MAX) {
    const uint64_t s = std::min(start_cycle, max_cycle), e = std::min(end_cycle, max_cycle);
    rep.set_window(s, e);
    in.set_until(e >= UINT64_MAX / P ? UINT64_MAX : e * P + (P - 1));
  }
  NpuPass out;
  const uint64_t a = out.a = job.range_given ? std::min(start_cycle, max_cycle) : 0;
  const uint64_t e = out.e = job.range_given ? std::min(end_cycle, max_cycle) : max_cycle;

  // The engines the events name, as they come: each a trace line whose
  // samples are "busy" (TraceLines::kLater until the engine has its context) or 0.
  struct Engine {
    uint32_t line;
    int64_t open = 0;
  };
  std::map<std::string, Engine> engines;
  std::vector<std::string> seen;  // engine names in the order of their first event
  auto engine = [&](const std::string &name) -> Engine & {
    auto it = engines.find(name);
    if (it != engines.end()) return it->second;
    seen.push_back(name);
    return engines.emplace(name, Engine{lines.add_line(0), 0}).first->second;
  };
  TapSource tap(in, [&](const convert::Ev &ev) {
    if (ev.type >= convert::kNumEvTypes || ev.t_cycle > e) return;  // past e: after the window (until)
    ++out.events;
    std::string name;
    int d = 0;
    switch (ev.type) {
      case convert::E_TE_START: name = "TE", d = 1; break;
      case convert::E_TE_END: name = "TE", d = -1; break;
      case convert::E_VE_START: name = "VE", d = 1; break;
      case convert::E_VE_END: name = "VE", d = -1; break;
      case convert::E_DRAM_TX_START:
      case convert::E_DRAM_TX_END: {
        uint64_t ch;
        name = ev.value(convert::K_channel, &ch) ? "DRAM " + std::to_string(ch) : "DRAM -";
        d = ev.type == convert::E_DRAM_TX_START ? 1 : -1;
        break;
      }
      default: return;
    }
    Engine &x = engine(name);
    const int64_t before = x.open;
    x.open = std::max<int64_t>(0, x.open + d);
    const uint64_t ts = ns_of(std::max(ev.t_cycle, a), P);
    if (before == 0 && x.open > 0) lines.sample(x.line, ts, h::TraceLines::kLater);
    if (before > 0 && x.open == 0) lines.sample(x.line, ts, 0);
  });
  if (const uscope_status_t st = convert::measure(tap, rep, nullptr, &err)) fail(st, "%s", err.c_str());

  // The engines in the report's order, then those only events named (a
  // DRAM channel the report leaves out).
  std::map<std::string, bool> listed;
  for (const convert::Report::Engine &en : rep.engines())
    if (!listed[en.name]) listed[en.name] = true, out.order.emplace_back(en.name, en.busy);
  for (const std::string &n : seen)
    if (!listed[n]) listed[n] = true, out.order.emplace_back(n, 0);
  for (const auto &[name, x] : engines) out.line[name] = x.line;
  return out;
}

// The pass's engines into the database: one profile and context each, in
// its order; their trace lines (in `lines`, from `from` on: the pass's own,
// adopted) get their profile and context.
void npu_finish(Job &job, Builder &b, h::TraceLines &lines, uint32_t from, const NpuPass &np, bool have_cpu,
                uint64_t *first, uint64_t *last, bool *any) {
  if (!have_cpu) {
    if (!*any || np.a < *first) *first = np.a;
    if (!*any || np.e > *last) *last = np.e;
    *any = true;
  }
  for (size_t i = 0; i < np.order.size(); ++i) {
    const std::string &name = np.order[i].first;
    const uint32_t k = uint32_t(i);
    const uint32_t prof = b.profile({{h::kGpuDevice, false, 0, 0}, {h::kGpuStream, false, k, k}});
    const uint32_t fn = b.function("npu/" + name, h::kNone, 0);
    const uint32_t ctx = b.child_function(0, fn);
    auto it = np.line.find(name);
    const uint32_t line = it != np.line.end() ? from + it->second : lines.add_line(0);
    lines.set_line(line, prof + 1, ctx);
    b.add(prof, ctx, kNpuBusy, double(np.order[i].second));
  }
  job.stats.records += np.events;
}

}  // namespace

void export_hpctoolkit(Job &job) {
  if (job.kind != Job::Input::Uscope || !job.reader)
    fail(USCOPE_ERR_UNSUPPORTED,
         "hpctoolkit: the export reads a µScope trace (.uscope); convert a .pccx or .jsonl one first "
         "(uscope convert)");
  TraceReader &r = *job.reader;
  const std::vector<std::string> cores = cpu_scopes(r, job.opts.scope);
  const bool npu = !job.opts.scope && has_npu(r);
  if (cores.empty() && !npu)
    fail(USCOPE_ERR_NOT_FOUND, job.opts.scope ? "hpctoolkit: no cpu protocol scope named '%s'"
                                              : "hpctoolkit: this trace has neither a cpu nor an npu protocol scope%s",
         job.opts.scope ? job.opts.scope : "");

  OutDir dir(job.output);
  Builder b;
  h::TraceLines lines(dir.dir(), ".trace-line-");
  uint64_t first = 0, last = 0, cpu_period = 1000;
  bool any = false;
  // The cores' instructions and the NPU's events are two passes over the
  // trace that share nothing until the database is numbered: with cores
  // and an NPU, the NPU's pass runs on a thread of its own, over a reader
  // of its own (a TraceReader is not shared between threads), into trace
  // lines of its own. Not for a --range: the NPU's window is then in the
  // first core's clock, known once its pass has begun.
  h::TraceLines npu_lines(dir.dir(), ".trace-npu-");
  NpuPass np;
  std::thread npu_thread;
  std::exception_ptr npu_error;
  std::unique_ptr<TraceReader> npu_reader;
  if (npu && !cores.empty() && !job.range_given) {
    npu_reader = std::make_unique<TraceReader>(job.input);
    npu_thread = std::thread([&] {
      try {
        np = npu_pass(job, *npu_reader, npu_lines, 0, true);
      } catch (...) {
        npu_error = std::current_exception();
      }
    });
  }
  // Joined before anything it uses goes, whatever happens to the cores' pass.
  struct Joiner {
    std::thread &t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{npu_thread};
  for (size_t k = 0; k < cores.size(); ++k) {
    const uint64_t p = export_core(job, b, lines, cores[k], uint32_t(k), &first, &last, &any);
    if (k == 0) cpu_period = p;
  }
  if (npu) {
    if (npu_thread.joinable()) {
      npu_thread.join();
      if (npu_error) std::rethrow_exception(npu_error);
    } else {
      np = npu_pass(job, *job.reader, npu_lines, cpu_period, !cores.empty());
    }
    const uint32_t from = lines.adopt(npu_lines);
    npu_finish(job, b, lines, from, np, !cores.empty(), &first, &last, &any);
  }
  b.db.title = job.input;
  b.db.description =
      "µScope trace `" + job.input + "`, cycles " + std::to_string(first) + " to " + std::to_string(last) +
      ", exported by `uscope export --to hpctoolkit`. Profiles: one per cpu scope (CORE), one per NPU engine "
      "(GPUDEVICE 0, GPUSTREAM k). Trace timestamps are nanoseconds from cycle 0 (cycle x clock period).";
  b.finish();

  auto write = [&](const char *name, const std::string &bytes) {
    write_file(dir.dir() + "/" + name, bytes);
    job.stats.bytes_out += bytes.size();
  };
  write("meta.db", h::encode_meta(b.db));
  write("profile.db", h::encode_profile(b.db));
  write("cct.db", h::encode_cct(b.db));
  job.stats.bytes_out += lines.finish(dir.dir() + "/trace.db");
  job.stats.first_cycle = first;
  job.stats.last_cycle = last;
  if (job.progress) job.progress->finish();
  dir.publish();
}

}  // namespace uscope::exporter
