// The data and the page of `uscope view` (view_page.hpp). Everything comes
// from the analysis layer (<uscope/analysis.h>) and the reader, and every
// analysis result is written by the encoders of analysis_json.cpp, so the
// page shows what `uscope analyze` prints. What grows with the trace is
// bounded: the overview has at most kViewBuckets buckets (served from the
// TSUM mipmaps), the window at most kViewMaxInsns instructions and
// kViewMaxEvents npu events.
#include "view_page.hpp"

#include <uscope/analysis.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <vector>

#include "analysis_json.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {

// The assets, embedded by cmake/embed_text.cmake from tools/view/ (bytes, NUL-terminated).
extern const unsigned char kViewHtml[];
extern const unsigned char kViewCss[];
extern const unsigned char kViewJs[];

namespace {

struct NpuHandle {
  uscope_npu_analysis_t *a = nullptr;
  ~NpuHandle() { uscope_npu_analysis_close(a); }
};

// The view's clock and window, in its cycles and in ps.
struct Window {
  uint64_t period_ps = 1000, max_cycle = 0;
  uint64_t start = 0, end = 0;  // closed, cycles
  bool busiest = false;         // chosen as the busiest kViewWindowCycles
  uint64_t start_ps() const { return start * period_ps; }
  uint64_t end_ps() const { return end >= UINT64_MAX / period_ps - 1 ? UINT64_MAX : (end + 1) * period_ps - 1; }
};

// The busiest kViewWindowCycles cycles by committed instructions: the run of
// overview buckets that holds the most, found on the downsample (O(buckets)).
// Without the counter: the first kViewWindowCycles.
void busiest_window(const CpuTrace &c, Window *w) {
  const uint64_t cycles = w->max_cycle + 1;
  w->start = 0;
  w->end = std::min(w->max_cycle, kViewWindowCycles - 1);
  if (cycles <= kViewWindowCycles) return;
  uint32_t counter = 0;
  if (uscope_cpu_trace_find_counter(c.h(), &counter, "committed_insns") != USCOPE_OK) return;
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kViewBuckets, cycles));
  std::vector<uscope_counter_bucket_t> b(n);
  check(uscope_cpu_trace_counter_downsample(c.h(), b.data(), nullptr, counter, 0, cycles, n), "downsample");
  const uint64_t width = std::max<uint64_t>(1, cycles / n);
  const size_t k = static_cast<size_t>(std::max<uint64_t>(1, kViewWindowCycles / width));
  uint64_t sum = 0, best = 0;
  size_t best_i = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    sum += b[i].sum;
    if (i >= k) sum -= b[i - k].sum;
    if (i + 1 >= k && sum > best) best = sum, best_i = i + 1 - k;
  }
  w->start = std::min(b[best_i].start_cycle, cycles - kViewWindowCycles);
  w->end = w->start + kViewWindowCycles - 1;
  w->busiest = true;
}

// A counter downsampled over [start, end) into at most kViewBuckets buckets:
// {name, start:[], sum:[], max:[], end}.
void counter_series_json(Json &j, const CpuTrace &c, uint32_t counter, const char *name, uint64_t start,
                         uint64_t end) {
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kViewBuckets, end - start));
  std::vector<uscope_counter_bucket_t> b(n);
  int exact = 0;
  check(uscope_cpu_trace_counter_downsample(c.h(), b.data(), &exact, counter, start, end, n), "downsample");
  j.begin_object();
  j.field("name", name ? name : "");
  j.field("end", end);
  j.field("exact", exact != 0);
  j.key("start");
  j.begin_array();
  for (const auto &x : b) j.num(x.start_cycle);
  j.end_array();
  j.key("sum");
  j.begin_array();
  for (const auto &x : b) j.num(x.sum);
  j.end_array();
  j.key("max");
  j.begin_array();
  for (const auto &x : b) j.num(x.max_delta);
  j.end_array();
  j.end_object();
}

void cpu_json(Json &j, const CpuTrace &c, const Window &w, const ViewRequest &rq, std::vector<std::string> *notes) {
  const auto ctr = c.counters();
  const auto buf = c.buffers();
  j.key("cpu");
  j.begin_object();
  j.field("scope", c.info().scope_name);
  j.field("isa", c.info().isa);
  j.field("elf", c.info().elf_path);
  j.field("period_ps", c.info().period_ps);
  j.field("max_cycle", c.max_cycle());
  j.key("stages");
  j.begin_array();
  for (const auto &s : c.stage_names()) j.str(s);
  j.end_array();
  j.key("metadata");
  j.begin_array();
  for (const auto &[k, v] : c.metadata()) {
    j.begin_array();
    j.str(k);
    j.str(v);
    j.end_array();
  }
  j.end_array();
  if (rq.overview) {
    // Whole trace: every counter, from the TSUM mipmaps.
    j.key("overview");
    j.begin_array();
    for (uint32_t k = 0; k < ctr.size(); ++k) counter_series_json(j, c, k, ctr[k].name, 0, c.max_cycle() + 1);
    j.end_array();
  }
  // The window: the analyze table, its counters per bucket, buffer occupancy, instructions.
  uscope_perf_report_t p{};
  p.struct_size = sizeof p;
  // analyze takes [start, end) with start < end; a window on the last cycle analyzes the one before.
  uint64_t a_end = std::min(w.end + 1, c.max_cycle());
  const uint64_t a_start = std::min(w.start, a_end > 0 ? a_end - 1 : 0);
  if (a_start >= a_end) a_end = a_start + 1;
  check(uscope_cpu_trace_analyze(c.h(), &p, a_start, a_end), "analyze");
  j.key("analyze");
  j.begin_object();
  cpu_report_json(
      j, p, [&](uint32_t s) { return c.stage(s); },
      [&](uint32_t k) -> std::string { return k < ctr.size() && ctr[k].name ? ctr[k].name : "?"; },
      [&](uint32_t b) -> std::string { return b < buf.size() && buf[b].name ? buf[b].name : "?"; });
  j.end_object();
  j.key("counters");
  j.begin_array();
  for (uint32_t k = 0; k < ctr.size(); ++k) counter_series_json(j, c, k, ctr[k].name, w.start, w.end + 1);
  j.end_array();
  // Occupancy per cycle, folded into buckets (their maximum) so that a long
  // --range stays a bounded answer; the one pass holds a cycle's value each.
  const uint64_t cycles = w.end - w.start + 1;
  j.key("buffers");
  j.begin_array();
  if (cycles <= 4 * 1024 * 1024) {
    const uint64_t n = std::min<uint64_t>(kViewBuckets, cycles), width = (cycles + n - 1) / n;
    std::vector<uint32_t> occ(cycles);
    for (uint32_t b = 0; b < buf.size(); ++b) {
      check(uscope_cpu_trace_buffer_occupancy(c.h(), occ.data(), b, w.start, cycles), "buffer occupancy");
      j.begin_object();
      j.field("name", buf[b].name ? buf[b].name : "");
      j.field("capacity", buf[b].capacity);
      j.field("bucket_cycles", width);
      j.key("max");
      j.begin_array();
      for (uint64_t i = 0; i < cycles; i += width)
        j.num(*std::max_element(occ.begin() + static_cast<ptrdiff_t>(i),
                                occ.begin() + static_cast<ptrdiff_t>(std::min(cycles, i + width))));
      j.end_array();
      j.end_object();
    }
  } else if (!buf.empty()) {
    notes->push_back("buffer occupancy is shown for windows of up to 4,194,304 cycles; this one has " +
                     std::to_string(cycles));
  }
  j.end_array();
  // Instructions: [sim_id, pc, disasm, status, first, last, [[stage, start, end], ...], function].
  InsnIter it;
  check(uscope_cpu_trace_instructions(c.h(), &it.it, w.start, w.end), "instructions");
  uscope_insn_t in{};
  uint32_t count = 0;
  bool truncated = false;
  j.key("insns");
  j.begin_array();
  while (it.next(&in)) {
    if (count == kViewMaxInsns) {
      truncated = true;
      break;
    }
    ++count;
    j.begin_array();
    j.num(in.sim_id);
    char pc[24];
    std::snprintf(pc, sizeof pc, "0x%" PRIx64, in.pc);
    j.str(pc);
    j.str(in.disasm ? in.disasm : "");
    j.str(retire_status_name(in.status));
    j.num(in.first_cycle);
    j.num(in.last_cycle);
    j.begin_array();
    for (uint32_t s = 0; s < in.num_stages; ++s) {
      j.begin_array();
      j.num(in.stages[s].stage);
      j.num(in.stages[s].start_cycle);
      j.num(in.stages[s].end_cycle);
      j.end_array();
    }
    j.end_array();
    j.str(in.function ? in.function : "");
    j.end_array();
  }
  j.end_array();
  j.field("insns_truncated", truncated);
  if (truncated)
    notes->push_back("the pipeline view shows the first " + std::to_string(kViewMaxInsns) +
                     " instructions of the window; choose a narrower range for the rest");
  j.end_object();
}

// The npu scopes' contexts (tenant, model, head, ... of spec §3.2) at the window's end, by ctx
// id: {"ID": {field: value}}. Events carry only their ctx id; the page's filters on those axes
// look them up here. Contexts are interned for the whole run, so the state at the end of the
// window holds every one its events name.
void contexts_json(Json &j, const Trace &t, const std::vector<bool> &scope_npu, uint64_t time_ps) {
  j.key("contexts");
  j.begin_object();
  uscope_state_t *st = nullptr;
  if (uscope_reader_state_at(t.r(), &st, time_ps) != USCOPE_OK) {
    j.end_object();
    return;
  }
  const std::unique_ptr<uscope_state_t, void (*)(uscope_state_t *)> guard(st, uscope_state_free);
  const auto counts = t.counts();
  for (uint32_t k = 0; k < counts.storages; ++k) {
    const auto sid = static_cast<uint16_t>(k);
    const auto s = t.storage(sid);
    if (std::strcmp(s.name, "contexts") != 0 || s.scope_id >= scope_npu.size() || !scope_npu[s.scope_id]) continue;
    for (uint16_t slot = 0; slot < s.num_slots; ++slot) {
      int valid = 0;
      if (uscope_state_slot_valid(st, &valid, sid, slot) != USCOPE_OK || !valid) continue;
      j.key(std::to_string(slot).c_str());
      j.begin_object();
      for (uint16_t f = 0; f < s.num_fields; ++f) {
        const auto fi = t.field(sid, f, false);
        uint64_t v = 0;
        check(uscope_state_slot_field(st, &v, sid, slot, f), "contexts");
        // The npu protocol's "absent" and "null" are a field's two largest values
        // (docs/npu-protocol.md); a context key the run never set is left out.
        const uint64_t max = fi.size >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * fi.size)) - 1;
        if (fi.size >= 2 && v >= max - 1) continue;
        j.key(fi.name);
        json_value(j, t, fi, v);
      }
      j.end_object();
    }
  }
  j.end_object();
}

void npu_json(Json &j, const Trace &t, uscope_npu_analysis_t *a, const Window &w, std::vector<std::string> *notes) {
  uscope_npu_report_t r{};
  r.struct_size = sizeof r;
  check(uscope_npu_analyze(a, &r, 0, 0), "npu analysis");
  const uint64_t period = r.period_ps ? r.period_ps : 1000;
  const uint64_t start = w.start_ps() / period, end = w.end_ps() / period;
  r = {};
  r.struct_size = sizeof r;
  check(uscope_npu_analyze(a, &r, start, end), "npu analysis");
  j.key("npu");
  j.begin_object();
  j.field("period_ps", period);
  j.field("max_cycle", r.max_cycle);
  j.field("start_cycle", start);
  j.field("end_cycle", end);
  j.field("commands", r.command_latency.count);
  j.key("analyze");
  j.begin_object();
  npu_report_json(j, r);
  j.end_object();
  // The events of the npu scopes in the window, values by name.
  const auto counts = t.counts();
  std::vector<bool> is_npu(counts.event_types, false);
  std::vector<bool> scope_npu(counts.scopes, false);
  for (uint32_t k = 0; k < counts.scopes; ++k) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, k), "scope");
    scope_npu[k] = sc.protocol && std::strcmp(sc.protocol, "npu") == 0;
  }
  for (uint32_t k = 0; k < counts.event_types; ++k) {
    const auto et = t.event_type(static_cast<uint16_t>(k));
    is_npu[k] = et.scope_id < scope_npu.size() && scope_npu[et.scope_id];
  }
  uscope_event_iter_t *it = nullptr;
  check(uscope_reader_events_in_range(t.r(), &it, w.start_ps(), w.end_ps()), "events");
  const std::unique_ptr<uscope_event_iter_t, void (*)(uscope_event_iter_t *)> guard(it, uscope_event_iter_free);
  uscope_event_t ev{};
  uscope_status_t s;
  uint32_t n = 0;
  bool truncated = false;
  j.key("events");
  j.begin_array();
  while ((s = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
    if (ev.event_type_id >= is_npu.size() || !is_npu[ev.event_type_id]) continue;
    if (n == kViewMaxEvents) {
      truncated = true;
      break;
    }
    ++n;
    event_json(j, t, ev.time_ps, ev.event_type_id, ev.payload);
  }
  if (s != USCOPE_OK && s != USCOPE_DONE) check(s, "events");
  j.end_array();
  j.field("events_truncated", truncated);
  if (truncated)
    notes->push_back("the npu views show the first " + std::to_string(kViewMaxEvents) +
                     " events of the window; choose a narrower range for the rest");
  contexts_json(j, t, scope_npu, w.end_ps());
  j.end_object();
}

}  // namespace

std::string view_data(const Trace &t, const std::string &label, const ViewRequest &rq) {
  const bool has_cpu = has_cpu_scope(t), has_npu = has_protocol(t, "npu");
  if (!has_cpu && !has_npu)
    throw Failure("this trace has no cpu and no npu protocol scope: uscope view has nothing to show");
  std::unique_ptr<CpuTrace> c;
  if (has_cpu) c = std::make_unique<CpuTrace>(t);
  NpuHandle npu;
  if (has_npu) {
    const uscope_status_t s = uscope_npu_analysis_open(&npu.a, t.r());
    if (s != USCOPE_ERR_UNSUPPORTED) check(s, "npu analysis");  // unsupported: a build without the npu part
  }
  std::vector<std::string> notes;
  if (!has_cpu) notes.push_back("no cpu protocol scope in this trace: the pipeline, IPC, buffer and analyze views are absent");
  if (!has_npu) notes.push_back("no npu protocol scope in this trace: the Gantt, event, heatmap and phase views are absent");
  if (has_npu && !npu.a) notes.push_back("this build has no npu analysis (USCOPE_WITH_NPU=OFF): the npu views are absent");

  // The view's clock: the cpu scope's, else the npu scope's.
  Window w;
  if (c) {
    w.period_ps = c->info().period_ps ? c->info().period_ps : 1000;
    w.max_cycle = c->max_cycle();
  } else if (npu.a) {
    uscope_npu_report_t r{};
    r.struct_size = sizeof r;
    check(uscope_npu_analyze(npu.a, &r, 0, 0), "npu analysis");
    w.period_ps = r.period_ps ? r.period_ps : 1000;
    w.max_cycle = r.max_cycle;
  } else {
    throw Failure("this build cannot analyze the trace's npu scope (USCOPE_WITH_NPU=OFF) and it has no cpu scope");
  }
  if (rq.ranged) {
    if (rq.start > rq.end) throw Usage("--range " + std::to_string(rq.start) + ":" + std::to_string(rq.end) +
                                       ": expected START <= END");
    if (rq.start > w.max_cycle)
      throw Failure("--range starts at cycle " + std::to_string(rq.start) + ", past the trace's last cycle (" +
                    std::to_string(w.max_cycle) + ")");
    w.start = rq.start;
    w.end = std::min(rq.end, w.max_cycle);
  } else if (c) {
    busiest_window(*c, &w);
  } else {
    w.start = 0;
    w.end = std::min(w.max_cycle, kViewWindowCycles - 1);
  }

  std::string out;
  Json j(&out);
  j.begin_object();
  j.field("file", label);
  j.field("generator", std::string("uscope ") + uscope_version_string());
  const auto info = t.info();
  j.key("trace");
  j.begin_object();
  j.field("format", std::to_string(info.version_major) + "." + std::to_string(info.version_minor));
  j.field("complete", info.complete != 0);
  j.field("segments", info.num_segments);
  j.field("last_time_ps", info.last_time_ps);
  j.field("file_bytes", info.file_bytes);
  j.key("scopes");
  j.begin_array();
  const auto counts = t.counts();
  for (uint32_t k = 0; k < counts.scopes; ++k) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, k), "scope");
    j.begin_object();
    j.field("name", sc.name);
    j.field("protocol", sc.protocol ? sc.protocol : "");
    j.end_object();
  }
  j.end_array();
  j.key("clocks");
  clocks_json(j, t);
  j.end_object();
  j.key("clock");
  j.begin_object();
  j.field("scope", c ? "cpu" : "npu");
  j.field("period_ps", w.period_ps);
  j.field("max_cycle", w.max_cycle);
  j.end_object();
  j.key("window");
  j.begin_object();
  j.field("start", w.start);
  j.field("end", w.end);
  j.field("busiest", w.busiest);
  j.field("start_ps", w.start_ps());
  j.field("end_ps", w.end_ps());
  j.end_object();
  schema_json(j, t, "type", false);
  if (c) cpu_json(j, *c, w, rq, &notes);
  else {
    j.key("cpu");
    j.null();
  }
  if (npu.a) npu_json(j, t, npu.a, w, &notes);
  else {
    j.key("npu");
    j.null();
  }
  j.key("notes");
  j.begin_array();
  for (const auto &n : notes) j.str(n);
  j.end_array();
  j.end_object();
  return out;
}

std::string view_page(const std::string &data, bool serve_mode) {
  // "</" inside the JSON becomes "<\/" (the same string to JSON), so no
  // string of the trace can close the <script> element that holds it.
  std::string safe;
  safe.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    safe.push_back(data[i]);
    if (data[i] == '<' && i + 1 < data.size() && data[i + 1] == '/') safe.push_back('\\');
  }
  const auto asset = [](const unsigned char *s) { return std::string(reinterpret_cast<const char *>(s)); };
  std::string page = asset(kViewHtml);
  const auto put = [&](const std::string &marker, const std::string &text) {
    const size_t at = page.find(marker);
    if (at == std::string::npos) throw Failure("view: the embedded page lacks " + marker);
    page.replace(at, marker.size(), text);
  };
  put("/*@CSS@*/", asset(kViewCss));
  put("/*@JS@*/", asset(kViewJs));
  put("@MODE@", serve_mode ? "serve" : "static");
  put("@DATA@", safe);  // last: the data may hold any of the markers
  return page;
}

}  // namespace uscope_cli
