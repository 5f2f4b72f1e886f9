// The MCP server (mcp_server.hpp): JSON-RPC over lines, parsed with simdjson,
// answered with the CLI's Json writer; the tool table; the tools, over the
// public C API only.
#include "mcp_server.hpp"

#include "analysis_json.hpp"
#include "protocol/noc_table.hpp"

#include <simdjson.h>
#include <uscope/analysis.h>
#include <uscope/convert.h>
#include <uscope/uscope.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace uscope_cli::mcp {

// ── arguments ──

// The arguments object of a tools/call (empty when it has none). Each getter
// checks its argument's type and range; a bad one is a ToolError naming it.
class Args {
 public:
  Args() = default;
  explicit Args(simdjson::dom::object o) : obj_(o), has_(true) {}

  bool has(const char *name) const {
    simdjson::dom::element e;
    return get(name, &e);
  }
  // A whole number >= 0 (a JSON integer, or a float with no fraction).
  uint64_t number(const char *name) const {
    simdjson::dom::element e;
    if (!get(name, &e)) throw ToolError(std::string("missing '") + name + "' parameter (a number >= 0)");
    return to_number(name, e);
  }
  uint64_t number_or(const char *name, uint64_t fallback) const {
    simdjson::dom::element e;
    return get(name, &e) ? to_number(name, e) : fallback;
  }
  std::string text(const char *name) const {
    simdjson::dom::element e;
    if (!get(name, &e)) throw ToolError(std::string("missing '") + name + "' parameter (a string)");
    std::string_view v;
    if (e.get_string().get(v) != simdjson::SUCCESS)
      throw ToolError(std::string("invalid '") + name + "' parameter: expected a string, got " +
                      simdjson::minify(e));
    return std::string(v);
  }
  std::string text_or(const char *name, const std::string &fallback) const {
    return has(name) ? text(name) : fallback;
  }

 private:
  bool get(const char *name, simdjson::dom::element *e) const {
    if (!has_) return false;
    if (obj_[name].get(*e) != simdjson::SUCCESS) return false;
    return !e->is_null();  // null: as if absent
  }
  static uint64_t to_number(const char *name, simdjson::dom::element e) {
    uint64_t u = 0;
    if (e.get_uint64().get(u) == simdjson::SUCCESS) return u;
    double d = 0;
    if (e.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 18446744073709551616.0 && std::floor(d) == d)
      return static_cast<uint64_t>(d);
    throw ToolError(std::string("invalid '") + name + "' parameter: expected a whole number >= 0, got " +
                    simdjson::minify(e));
  }
  simdjson::dom::object obj_;
  bool has_ = false;
};

// ── the session: the trace, its cpu analysis ──

class Session {
 public:
  Session(const std::string &path, size_t max_text)
      : path_(path), trace_(path), budget_(max_text > kMargin ? max_text - kMargin : max_text / 2) {
    uscope_cpu_trace_t *t = nullptr;
    const uscope_status_t s = uscope_cpu_trace_open(&t, trace_.r(), nullptr);
    if (s == USCOPE_OK) {
      cpu_ = t;
      cpu_info_.struct_size = sizeof cpu_info_;
      check(uscope_cpu_trace_info(cpu_, &cpu_info_), "cpu trace info");
    } else if (s == USCOPE_ERR_NOT_FOUND) {
      cpu_error_ = "this trace has no cpu protocol scope";
    } else {
      cpu_error_ = std::string("the cpu analysis cannot read this trace: ") + uscope_status_str(s) + ": " +
                   uscope_last_error();
    }
  }
  ~Session() {
    uscope_noc_analysis_close(noc_);
    uscope_npu_analysis_close(npu_);
    uscope_cpu_trace_close(cpu_);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const std::string &path() const { return path_; }
  const Trace &trace() const { return trace_; }
  bool has_cpu() const { return cpu_ != nullptr; }
  const std::string &cpu_error() const { return cpu_error_; }
  // The cpu analysis, or ToolError "this trace has no cpu protocol scope".
  uscope_cpu_trace_t *cpu() const {
    if (!cpu_) throw ToolError(cpu_error_);
    return cpu_;
  }
  const uscope_cpu_trace_info_t &cpu_info() const {
    cpu();
    return cpu_info_;
  }
  // The noc / npu analysis of the trace, opened on first use; ToolError
  // "this trace has no noc (npu) protocol scope" and the like otherwise.
  uscope_noc_analysis_t *noc() {
    if (!noc_) noc_ = open_analysis<uscope_noc_analysis_t>(uscope_noc_analysis_open, "noc");
    return noc_;
  }
  uscope_npu_analysis_t *npu() {
    if (!npu_) npu_ = open_analysis<uscope_npu_analysis_t>(uscope_npu_analysis_open, "npu");
    return npu_;
  }
  // The picoseconds of one cycle: the cpu scope clock's; else the step the
  // trace's timestamps follow (uscope_file_info_t.time_grid_ps); else 1000.
  uint64_t period_ps() const {
    if (cpu_) return cpu_info_.period_ps ? cpu_info_.period_ps : 1000;
    const uint64_t g = trace_.info().time_grid_ps;
    return g ? g : 1000;
  }
  // The last cycle of the trace.
  uint64_t max_cycle() const { return cpu_ ? cpu_info_.max_cycle : trace_end(trace_) / period_ps(); }
  // Bytes a list may grow to before it is cut (the cap less room for what follows it).
  size_t budget() const { return budget_; }

 private:
  template <class A>
  A *open_analysis(uscope_status_t (*open)(A **, uscope_reader_t *), const char *what) {
    A *a = nullptr;
    const uscope_status_t st = open(&a, trace_.r());
    if (st == USCOPE_OK) return a;
    if (st == USCOPE_ERR_NOT_FOUND) throw ToolError(std::string("this trace has no ") + what + " protocol scope");
    throw ToolError(std::string("the ") + what + " analysis cannot read this trace: " + uscope_status_str(st) + ": " +
                    uscope_last_error());
  }
  static constexpr size_t kMargin = 8 * 1024;
  std::string path_;
  Trace trace_;
  uscope_noc_analysis_t *noc_ = nullptr;
  uscope_npu_analysis_t *npu_ = nullptr;
  uscope_cpu_trace_t *cpu_ = nullptr;
  uscope_cpu_trace_info_t cpu_info_{};
  std::string cpu_error_;
  size_t budget_;
};

namespace {

// ── small helpers ──

void cpu_check(uscope_status_t s, const char *what) {
  if (s < 0) throw ToolError(std::string(what) + ": " + uscope_last_error());
}

const char *field_type_name(uint8_t t) {
  switch (t) {
    case USCOPE_FT_U8: return "u8";
    case USCOPE_FT_U16: return "u16";
    case USCOPE_FT_U32: return "u32";
    case USCOPE_FT_U64: return "u64";
    case USCOPE_FT_I8: return "i8";
    case USCOPE_FT_I16: return "i16";
    case USCOPE_FT_I32: return "i32";
    case USCOPE_FT_I64: return "i64";
    case USCOPE_FT_BOOL: return "bool";
    case USCOPE_FT_STRING_REF: return "string_ref";
    case USCOPE_FT_ENUM: return "enum";
    default: return "unknown";
  }
}
const char *role_name(uint8_t role) {
  return role == USCOPE_ROLE_HEAD_PTR ? "HEAD_PTR" : role == USCOPE_ROLE_TAIL_PTR ? "TAIL_PTR" : "plain";
}
const char *retire_status_name(uint32_t s) {
  return s == USCOPE_INSN_RETIRED ? "retired" : s == USCOPE_INSN_FLUSHED ? "flushed" : "in_flight";
}

std::string stage_name(uscope_cpu_trace_t *t, uint32_t stage) {
  const char *n = nullptr;
  if (uscope_cpu_trace_stage(t, &n, stage) == USCOPE_OK && n) return n;
  return "stage_" + std::to_string(stage);
}
std::string enum_name_of(const Trace &t, const char *enum_name, uint64_t v) {
  // The cpu scope's enums by name (flush_reason, ...): the first enum so named.
  const auto c = t.counts();
  for (uint32_t e = 0; e < c.enums; ++e) {
    const char *name = nullptr;
    uint32_t nv = 0;
    if (uscope_reader_enum(t.r(), &name, &nv, e) == USCOPE_OK && name && std::string(name) == enum_name)
      if (const char *vn = t.enum_value(static_cast<uint8_t>(e), v)) return vn;
  }
  return std::to_string(v);
}

// A closed range [start, end] (half_open: [start, end)), checked, and
// clamped to the trace's last cycle; the clamp is said in "warning" (an IPC
// over cycles past the end would count cycles the trace does not have).
struct Range {
  uint64_t start, end;
  std::string warning;
};
std::string clamp_warning(uint64_t asked, uint64_t used) {
  return "end_cycle " + std::to_string(asked) + " is past the trace's end: clamped to " + std::to_string(used);
}
Range cycle_range(const Session &s, const Args &a, bool half_open) {
  Range r{a.number("start_cycle"), a.number("end_cycle"), ""};
  if (half_open ? r.start >= r.end : r.start > r.end)
    throw ToolError(std::string("start_cycle must be ") + (half_open ? "less than" : "at most") + " end_cycle");
  const uint64_t last = s.max_cycle();
  if (r.start > last)
    throw ToolError("start_cycle " + std::to_string(r.start) + " is past the trace's last cycle " + std::to_string(last));
  const uint64_t end = half_open ? last + 1 : last;
  if (r.end > end) {
    r.warning = clamp_warning(r.end, end);
    r.end = end;
  }
  return r;
}
uint64_t clamp_cycle(const Session &s, uint64_t cycle, std::string *warning) {
  const uint64_t last = s.max_cycle();
  if (cycle <= last) return cycle;
  *warning = "cycle " + std::to_string(cycle) + " is past the trace's last cycle " + std::to_string(last) +
             ": the state at the last cycle";
  return last;
}

// A list's pagination: limit (default, at most max) and offset.
struct Page {
  uint64_t limit, offset;
};
Page page(const Args &a, uint64_t dflt, uint64_t max) {
  Page p{a.number_or("limit", dflt), a.number_or("offset", 0)};
  if (p.limit == 0 || p.limit > max)
    throw ToolError("invalid 'limit' parameter: expected 1.." + std::to_string(max));
  return p;
}
// After a list: "truncated", "next_offset" and a note when it was cut.
void page_end(Json &j, bool truncated, uint64_t next, const char *what) {
  j.field("truncated", truncated);
  if (truncated) {
    j.field("next_offset", next);
    j.field("note", (std::string("more ") + what + " follow: call again with offset " + std::to_string(next)).c_str());
  }
}

// Names that match a query: the one equal to it, else those containing it
// (the reference's substring match).
std::vector<uint32_t> matching(const std::vector<std::string> &names, const std::string &q) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < names.size(); ++i)
    if (names[i] == q) return {i};
  for (uint32_t i = 0; i < names.size(); ++i)
    if (names[i].find(q) != std::string::npos) out.push_back(i);
  return out;
}
std::string listed(const std::vector<std::string> &names) {
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

std::vector<std::string> counter_names(uscope_cpu_trace_t *t, const uscope_cpu_trace_info_t &info) {
  std::vector<std::string> v;
  for (uint32_t i = 0; i < info.num_counters; ++i) {
    uscope_counter_info_t c{};
    cpu_check(uscope_cpu_trace_counter(t, &c, i), "counter");
    v.emplace_back(c.name ? c.name : "");
  }
  return v;
}
std::vector<uscope_buffer_info_t> buffer_infos(uscope_cpu_trace_t *t, const uscope_cpu_trace_info_t &info) {
  std::vector<uscope_buffer_info_t> v(info.num_buffers);
  for (uint32_t i = 0; i < info.num_buffers; ++i) cpu_check(uscope_cpu_trace_buffer(t, &v[i], i), "buffer");
  return v;
}

struct BufferState {
  uscope_buffer_state_t *s = nullptr;
  BufferState(uscope_cpu_trace_t *t, uint64_t cycle) { cpu_check(uscope_cpu_trace_buffers_at(t, &s, cycle), "buffers"); }
  ~BufferState() { uscope_buffer_state_free(s); }
  BufferState(const BufferState &) = delete;
  BufferState &operator=(const BufferState &) = delete;
  uscope_buffer_fill_t fill(uint32_t b) const {
    uscope_buffer_fill_t f{};
    cpu_check(uscope_buffer_state_fill(s, &f, b), "buffer fill");
    return f;
  }
};

struct InsnIter {
  uscope_insn_iter_t *it = nullptr;
  ~InsnIter() { uscope_insn_iter_free(it); }
  bool next(uscope_insn_t *out) {
    const uscope_status_t s = uscope_insn_iter_next(it, out);
    if (s == USCOPE_DONE) return false;
    cpu_check(s, "instructions");
    return true;
  }
};

// ── the tools ──

// The fields of a storage or event type as [{name, type}].
void fields_json(Json &j, const Trace &t, uint16_t id, uint16_t n, bool event) {
  j.begin_array();
  for (uint16_t k = 0; k < n; ++k) {
    const auto f = event ? t.event_field(id, k) : t.field(id, k, false);
    j.begin_object();
    j.field("name", f.name);
    j.field("type", field_type_name(f.type));
    j.end_object();
  }
  j.end_array();
}

void tool_file_info(Session &s, const Args &a, Json &j) {
  const Trace &t = s.trace();
  const auto info = t.info();
  const auto counts = t.counts();
  const Page pg = page(a, 1000, 1000000);  // of the segments
  const uint64_t period = s.period_ps();
  j.begin_object();
  char version[16];
  std::snprintf(version, sizeof version, "%u.%u", info.version_major, info.version_minor);
  j.field("version", s.has_cpu() ? s.cpu_info().version : version);
  j.field("segment_count", static_cast<uint64_t>(info.num_segments));
  j.field("total_instructions", s.has_cpu() ? s.cpu_info().total_instructions : uint64_t{0});
  j.field("max_cycle", s.max_cycle());
  j.field("period_ps", period);
  // The reference's metadata list ([{key: value}]) from the cpu analysis;
  // without a cpu scope, the DUT properties.
  j.key("metadata");
  j.begin_array();
  if (s.has_cpu()) {
    for (uint32_t i = 0; i < s.cpu_info().num_metadata; ++i) {
      const char *k = nullptr, *v = nullptr;
      cpu_check(uscope_cpu_trace_metadata(s.cpu(), &k, &v, i), "metadata");
      j.begin_object();
      j.field(k ? k : "", v ? v : "");
      j.end_object();
    }
  } else {
    for (uint32_t i = 0; i < uscope_reader_dut_count(t.r()); ++i) {
      const char *k = nullptr, *v = nullptr;
      check(uscope_reader_dut_property(t.r(), &k, &v, i), "dut property");
      j.begin_object();
      j.field(k, v);
      j.end_object();
    }
  }
  j.end_array();
  j.key("stage_names");
  j.begin_array();
  if (s.has_cpu())
    for (uint32_t i = 0; i < s.cpu_info().num_stages; ++i) j.str(stage_name(s.cpu(), i));
  j.end_array();
  j.key("counter_names");
  j.begin_array();
  if (s.has_cpu())
    for (const auto &n : counter_names(s.cpu(), s.cpu_info())) j.str(n);
  j.end_array();
  j.key("buffers");
  j.begin_array();
  if (s.has_cpu()) {
    for (const auto &b : buffer_infos(s.cpu(), s.cpu_info())) {
      j.begin_object();
      j.field("name", b.name);
      j.field("capacity", b.capacity);
      j.field("storage_id", b.storage_id);
      j.key("fields");
      fields_json(j, t, b.storage_id, b.num_fields, false);
      j.end_object();
    }
  }
  j.end_array();
  // Ours: what the reference leaves out.
  j.field("file", s.path().c_str());
  j.field("complete", info.complete != 0);
  j.field("has_cpu_scope", s.has_cpu());
  if (s.has_cpu()) {
    j.field("cpu_scope", s.cpu_info().scope_name);
    j.field("isa", s.cpu_info().isa);
    j.field("elf_path", s.cpu_info().elf_path);
    if (s.cpu_info().elf_note && *s.cpu_info().elf_note) j.field("elf_note", s.cpu_info().elf_note);
  } else {
    j.field("cpu_scope_note", s.cpu_error().c_str());
  }
  j.key("scopes");
  j.begin_array();
  for (uint32_t i = 0; i < counts.scopes; ++i) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, i), "scope");
    j.begin_object();
    j.field("name", sc.name);
    j.key("protocol");
    j.str(sc.protocol);  // null when none
    j.end_object();
  }
  j.end_array();
  schema_json(j, t, "type", false);
  // The segments last: the one list that grows with the file (limit / offset).
  j.key("segments");
  j.begin_array();
  uint64_t i = pg.offset;
  for (; i < info.num_segments && i - pg.offset < pg.limit && j.size() < s.budget(); ++i) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), &seg, static_cast<uint32_t>(i)), "segment");
    j.begin_object();
    j.field("index", i);
    j.field("start_cycle", seg.time_start_ps / period);
    j.field("end_cycle", seg.time_end_ps / period);
    j.end_object();
  }
  j.end_array();
  page_end(j, i < info.num_segments, i, "segments");
  j.end_object();
}

// One buffer's state: the reference's keys, plus the pointer pairs (buffer_occupancy).
void buffer_json(Json &j, const BufferState &st, uint32_t b, const uscope_buffer_info_t &info,
                 const Trace &tr, bool pairs, const Session &s, bool *cut) {
  const auto fill = st.fill(b);
  j.begin_object();
  j.field("name", info.name);
  j.field("capacity", fill.capacity);
  j.field("occupied", fill.occupied);
  j.key("fill_percent");
  j.real(fill.fill_percent);
  j.key("field_names");
  j.begin_array();
  for (uint16_t k = 0; k < info.num_fields; ++k) j.str(tr.field(info.storage_id, k, false).name);
  j.end_array();
  j.key("slots");
  j.begin_array();
  for (uint32_t i = 0; i < fill.occupied; ++i) {
    if (j.size() >= s.budget()) {
      *cut = true;
      break;
    }
    uscope_buffer_slot_t sl{};
    cpu_check(uscope_buffer_state_slot(st.s, &sl, b, i), "buffer slot");
    j.begin_object();
    j.field("slot", sl.slot);
    j.key("fields");
    j.begin_array();
    for (uint32_t k = 0; k < sl.num_fields; ++k) j.num(sl.fields[k]);
    j.end_array();
    j.key("entity_fields");
    j.begin_array();
    if (sl.has_entity)
      for (uint32_t k = 0; k < sl.num_entity_fields; ++k) {
        j.begin_object();
        j.field("name", sl.entity_field_names[k]);
        j.field("value", sl.entity_fields[k]);
        j.end_object();
      }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  std::vector<uscope_buffer_property_t> props(fill.num_properties);
  j.key("properties");
  j.begin_array();
  for (uint32_t i = 0; i < fill.num_properties; ++i) {
    cpu_check(uscope_buffer_state_property(st.s, &props[i], b, i), "buffer property");
    j.begin_object();
    j.field("name", props[i].name);
    j.field("value", props[i].value);
    j.field("role", role_name(props[i].role));
    j.end_object();
  }
  j.end_array();
  if (pairs) {
    j.key("pointer_pairs");
    j.begin_array();
    for (uint32_t i = 0; i < fill.num_pairs; ++i) {
      uscope_pointer_pair_t p{};
      cpu_check(uscope_buffer_state_pair(st.s, &p, b, i), "pointer pair");
      j.begin_object();
      j.field("pair_id", p.pair_id);
      j.key("head");
      j.begin_object();
      j.field("name", p.head_property < props.size() ? props[p.head_property].name : "");
      j.field("value", p.head);
      j.end_object();
      j.key("tail");
      j.begin_object();
      j.field("name", p.tail_property < props.size() ? props[p.tail_property].name : "");
      j.field("value", p.tail);
      j.end_object();
      j.field("distance", p.distance);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

void slots_cut_note(Json &j, bool cut) {
  j.field("truncated", cut);
  if (cut)
    j.field("note", "slots were left out to keep the answer under its size cap: ask buffer_occupancy for one buffer");
}

void tool_state_at_cycle(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  std::string warning;
  const uint64_t requested = a.number("cycle");
  const uint64_t cycle = clamp_cycle(s, requested, &warning);
  const auto infos = buffer_infos(t, s.cpu_info());
  BufferState st(t, cycle);
  bool cut = false;
  j.begin_object();
  j.field("cycle", cycle);
  if (!warning.empty()) j.field("warning", warning.c_str());
  j.key("buffers");
  j.begin_array();
  for (uint32_t b = 0; b < infos.size(); ++b) buffer_json(j, st, b, infos[b], s.trace(), false, s, &cut);
  j.end_array();
  slots_cut_note(j, cut);
  j.end_object();
}

void tool_buffer_occupancy(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  const std::string query = a.text("buffer");
  std::string warning;
  const uint64_t cycle = clamp_cycle(s, a.number("cycle"), &warning);
  const auto infos = buffer_infos(t, s.cpu_info());
  std::vector<std::string> names;
  for (const auto &b : infos) names.emplace_back(b.name);
  const auto match = matching(names, query);
  if (match.empty()) throw ToolError("no buffers matching '" + query + "'. Available: " + listed(names));
  BufferState st(t, cycle);
  bool cut = false;
  j.begin_object();
  j.field("buffer", query);
  j.field("cycle", cycle);
  if (!warning.empty()) j.field("warning", warning.c_str());
  j.key("buffers");
  j.begin_array();
  for (uint32_t b : match) buffer_json(j, st, b, infos[b], s.trace(), true, s, &cut);
  j.end_array();
  slots_cut_note(j, cut);
  j.end_object();
}

void insn_json(Json &j, uscope_cpu_trace_t *t, const Trace &tr, const uscope_insn_t &in) {
  j.begin_object();
  j.field("entity_id", in.entity_id);
  j.field("disasm", in.disasm ? in.disasm : "");
  j.field("first_cycle", in.first_cycle);
  j.field("last_cycle", in.last_cycle);
  j.field("total_latency", in.last_cycle >= in.first_cycle ? in.last_cycle - in.first_cycle : 0);
  j.field("retire_status", retire_status_name(in.status));
  j.key("stages");
  j.begin_array();
  for (uint32_t k = 0; k < in.num_stages; ++k) {
    const auto &sp = in.stages[k];
    j.begin_object();
    j.field("name", stage_name(t, sp.stage));
    j.field("start_cycle", sp.start_cycle);
    j.field("end_cycle", sp.end_cycle);
    j.field("duration", sp.end_cycle >= sp.start_cycle ? sp.end_cycle - sp.start_cycle : 0);
    j.field("lane", sp.lane);
    j.end_object();
  }
  j.end_array();
  j.field("tooltip", in.annotations ? in.annotations : "");
  // Ours.
  j.field("sim_id", in.sim_id);
  j.field("pc", in.pc);
  char pc[24];
  std::snprintf(pc, sizeof pc, "0x%" PRIx64, in.pc);
  j.field("pc_hex", pc);
  if (in.has_inst_bits) j.field("inst_bits", in.inst_bits);
  if (in.status == USCOPE_INSN_FLUSHED)
    j.field("flush_reason", enum_name_of(tr, "flush_reason", in.flush_reason));
  if (in.function && *in.function) j.field("function", in.function);
  if (in.source_file && *in.source_file) {
    j.field("source_file", in.source_file);
    j.field("source_line", in.source_line);
  }
  j.key("depends_on");
  j.begin_array();
  for (uint32_t k = 0; k < in.num_deps; ++k) j.num(in.dep_src[k]);
  j.end_array();
  j.end_object();
}

void tool_entity_timeline(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  const uint64_t id = a.number("entity_id");
  if (id > UINT32_MAX) throw ToolError("entity " + std::to_string(id) + " not found in trace (ids are 32-bit)");
  const Page pg = page(a, 100, 100000);
  // Optional window: the instructions whose life meets [start_cycle, end_cycle] (default: the whole trace).
  const uint64_t from = a.number_or("start_cycle", 0), to = a.number_or("end_cycle", UINT64_MAX);
  if (from > to) throw ToolError("start_cycle must be at most end_cycle");
  InsnIter it;
  cpu_check(uscope_cpu_trace_entity(t, &it.it, static_cast<uint32_t>(id), from, to), "entity");
  uscope_insn_t in{};
  uint64_t n = 0, shown = 0;
  bool truncated = false;
  j.begin_object();
  j.field("entity_id", id);
  j.key("results");
  j.begin_array();
  while (it.next(&in)) {
    if (n++ < pg.offset) continue;
    if (shown == pg.limit || j.size() >= s.budget()) {
      truncated = true;
      break;
    }
    insn_json(j, t, s.trace(), in);
    ++shown;
  }
  if (n == 0) {
    // Name the ids there are: the slots of the scope's entity catalog.
    std::string known;
    uint16_t sid = 0;
    const std::string catalog = std::string(s.cpu_info().scope_name) + ".entities";
    if (uscope_reader_find_storage(s.trace().r(), &sid, catalog.c_str()) == USCOPE_OK)
      known = " (" + catalog + " holds " + std::to_string(s.trace().storage(sid).num_slots) +
              " entities at a time; the cpu protocol's writers use its slots 0.." +
              std::to_string(s.trace().storage(sid).num_slots - 1) + " as ids, reused by later instructions)";
    throw ToolError("entity " + std::to_string(id) + " not found in " +
                    (a.has("start_cycle") || a.has("end_cycle") ? "cycles " + std::to_string(from) + ".." +
                                                                      std::to_string(to)
                                                                : std::string("trace")) +
                    known);
  }
  j.end_array();
  j.field("offset", pg.offset);
  j.field("returned", shown);
  page_end(j, truncated, pg.offset + shown, "instructions of this entity");
  j.end_object();
}

void tool_counter_values(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  const std::string query = a.text("counter");
  const Range r = cycle_range(s, a, false);
  const auto names = counter_names(t, s.cpu_info());
  const auto match = matching(names, query);
  if (match.empty()) throw ToolError("no counters matching '" + query + "'. Available: " + listed(names));
  const uint64_t range = r.end - r.start;
  const uint64_t step = range > 1000 ? range / 1000 : 1;  // the reference's sampling: about 1000 points
  j.begin_object();
  j.field("counter", query);
  j.field("start_cycle", r.start);
  j.field("end_cycle", r.end);
  if (!r.warning.empty()) j.field("warning", r.warning.c_str());
  j.field("step", step);
  j.key("counters");
  j.begin_array();
  std::vector<uint64_t> series;
  constexpr uint64_t kSeriesMax = uint64_t{1} << 20;  // one pass over the range up to 8 MiB of values
  for (uint32_t c : match) {
    auto value_at = [&](uint64_t cycle) {
      if (!series.empty()) return series[cycle - r.start];
      uint64_t v = 0;
      cpu_check(uscope_cpu_trace_counter_value(t, &v, c, cycle), "counter value");
      return v;
    };
    series.clear();
    if (range + 1 <= kSeriesMax) {
      series.resize(range + 1);
      cpu_check(uscope_cpu_trace_counter_series(t, series.data(), c, r.start, range + 1), "counter series");
    }
    const uint64_t v0 = value_at(r.start), v1 = value_at(r.end);
    j.begin_object();
    j.field("name", names[c]);
    j.field("start_value", v0);
    j.field("end_value", v1);
    j.field("delta", v1 - v0);
    j.key("rate");
    j.real(range ? static_cast<double>(v1 - v0) / static_cast<double>(range) : 0.0);
    j.key("values");
    j.begin_array();
    uint64_t last = 0;
    for (uint64_t cy = r.start;; cy += step) {
      j.begin_object();
      j.field("cycle", cy);
      j.field("value", value_at(cy));
      j.end_object();
      last = cy;
      if (r.end - cy < step) break;
    }
    if (last != r.end) {
      j.begin_object();
      j.field("cycle", r.end);
      j.field("value", v1);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void tool_analyze_performance(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  const Range r = cycle_range(s, a, true);
  const auto names = counter_names(t, s.cpu_info());
  const auto infos = buffer_infos(t, s.cpu_info());
  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  cpu_check(uscope_cpu_trace_analyze(t, &rep, r.start, r.end), "analyze");
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("range_cycles", rep.range_cycles);
  if (!r.warning.empty()) j.field("warning", r.warning);
  j.key("instructions");
  j.begin_object();
  j.field("total", rep.total);
  j.field("retired", rep.retired);
  j.field("flushed", rep.flushed);
  j.field("in_flight", rep.in_flight);
  j.key("flush_rate");
  j.real(rep.flush_rate);
  j.field("retired_in_range", rep.retired_in_range);  // ours: retired in the range, whenever fetched
  j.end_object();
  j.key("ipc");
  j.real(rep.ipc);
  j.key("commit_ipc");  // ours: retired_in_range / range_cycles
  j.real(rep.commit_ipc);
  counter_summaries_json(j, rep, [&](uint32_t k) { return k < names.size() ? names[k] : std::to_string(k); });
  j.key("buffer_snapshots");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_buffers; ++i) {
    const auto &b = rep.buffers[i];
    j.begin_object();
    j.field("name", b.buffer < infos.size() ? infos[b.buffer].name : "");
    buffer_samples_json(j, b);
    j.end_object();
  }
  j.end_array();
  stage_latencies_json(j, rep, [&](uint32_t stage) { return stage_name(t, stage); });
  j.key("stall_reasons");  // ours
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_stalls; ++i) {
    j.begin_object();
    j.field("name", rep.stalls[i].name ? rep.stalls[i].name : "");
    j.field("reason", rep.stalls[i].reason);
    j.field("count", rep.stalls[i].count);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void tool_events_in_range(Session &s, const Args &a, Json &j) {
  const Trace &t = s.trace();
  const Range r = cycle_range(s, a, false);
  const Page pg = page(a, 200, 100000);
  const uint64_t period = s.period_ps();
  const std::string type = a.text_or("event", "");
  bool filtered = false;
  uint16_t want = 0;
  if (!type.empty()) {
    if (uscope_reader_find_event(t.r(), &want, type.c_str()) != USCOPE_OK) {
      std::vector<std::string> names;
      for (uint32_t i = 0; i < t.counts().event_types; ++i) names.emplace_back(t.event_type(static_cast<uint16_t>(i)).name);
      throw ToolError("no event type '" + type + "' (" + uscope_last_error() + "). Available: " + listed(names));
    }
    filtered = true;
  }
  // A cycle covers [cycle * period, (cycle + 1) * period - 1] ps.
  const uint64_t t0 = r.start * period;
  const uint64_t t1 = r.end >= UINT64_MAX / period - 1 ? UINT64_MAX : (r.end + 1) * period - 1;
  uscope_event_iter_t *raw = nullptr;
  check(uscope_reader_events_in_range(t.r(), &raw, t0, t1), "events_in_range");
  struct Free {
    uscope_event_iter_t *i;
    ~Free() { uscope_event_iter_free(i); }
  } guard{raw};
  j.begin_object();
  j.field("start_cycle", r.start);
  j.field("end_cycle", r.end);
  j.field("period_ps", period);
  if (!r.warning.empty()) j.field("warning", r.warning.c_str());
  if (filtered) j.field("event", type);
  j.key("events");
  j.begin_array();
  uscope_event_t ev{};
  uscope_status_t st;
  uint64_t n = 0, shown = 0;
  bool truncated = false;
  while ((st = uscope_event_iter_next(raw, &ev)) == USCOPE_OK) {
    if (filtered && ev.event_type_id != want) continue;
    if (n++ < pg.offset) continue;
    if (shown == pg.limit || j.size() >= s.budget()) {
      truncated = true;
      break;
    }
    // {"cycle", "time_ps", "type", "fields"}: the CLI's events --json object, by name, with its cycle first.
    std::string one;
    Json e(&one);
    event_json(e, t, ev.time_ps, ev.event_type_id, ev.payload, true);
    j.begin_object();
    j.field("cycle", ev.time_ps / period);
    j.key("event");
    j.raw(one.data(), one.size());
    j.end_object();
    ++shown;
  }
  if (!truncated) check(st, "events");
  j.end_array();
  j.field("offset", pg.offset);
  j.field("returned", shown);
  page_end(j, truncated, pg.offset + shown, "events");
  j.end_object();
}

void tool_find_stalls(Session &s, const Args &a, Json &j) {
  uscope_cpu_trace_t *t = s.cpu();
  const Range r = cycle_range(s, a, true);
  const uint64_t max_scan = a.number_or("max_cycles", 1000000);
  if (max_scan == 0 || max_scan > 1000000) throw ToolError("invalid 'max_cycles' parameter: expected 1..1000000");
  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  cpu_check(uscope_cpu_trace_analyze(t, &rep, r.start, r.end), "analyze");
  const auto infos = buffer_infos(t, s.cpu_info());
  // Cycles where a buffer was full: its occupancy over [r.start, scan_end) in
  // one pass per buffer, at most max_scan cycles.
  const uint64_t end = r.end;
  const uint64_t scan_end = std::min(end, r.start + max_scan);
  struct Full {
    uint64_t cycles = 0;
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // [first, last]
  };
  std::vector<Full> full(infos.size());
  std::vector<uint32_t> occupied(scan_end - r.start);
  for (uint32_t b = 0; b < infos.size(); ++b) {
    const uint32_t cap = infos[b].capacity;
    if (!cap || occupied.empty()) continue;
    cpu_check(uscope_cpu_trace_buffer_occupancy(t, occupied.data(), b, r.start, occupied.size()), "buffer occupancy");
    auto &fb = full[b];
    for (uint64_t i = 0; i < occupied.size(); ++i) {
      if (occupied[i] < cap) continue;
      const uint64_t c = r.start + i;
      ++fb.cycles;
      if (!fb.runs.empty() && fb.runs.back().second + 1 == c) fb.runs.back().second = c;
      else fb.runs.emplace_back(c, c);
    }
  }
  uint64_t stall_events = 0;
  for (uint32_t i = 0; i < rep.num_stalls; ++i) stall_events += rep.stalls[i].count;
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  if (!r.warning.empty()) j.field("warning", r.warning);
  j.field("stall_events", stall_events);
  j.key("stall_reasons");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_stalls; ++i) {
    j.begin_object();
    j.field("name", rep.stalls[i].name ? rep.stalls[i].name : "");
    j.field("reason", rep.stalls[i].reason);
    j.field("count", rep.stalls[i].count);
    j.end_object();
  }
  j.end_array();
  j.key("full_buffers");
  j.begin_array();
  bool cut = false;
  for (uint32_t b = 0; b < infos.size(); ++b) {
    if (!full[b].cycles) continue;
    j.begin_object();
    j.field("name", infos[b].name);
    j.field("capacity", infos[b].capacity);
    j.field("full_cycles", full[b].cycles);
    j.field("runs", static_cast<uint64_t>(full[b].runs.size()));
    j.key("intervals");
    j.begin_array();
    for (const auto &run : full[b].runs) {
      if (j.size() >= s.budget()) {
        cut = true;
        break;
      }
      j.begin_object();
      j.field("start_cycle", run.first);
      j.field("end_cycle", run.second);
      j.field("length", run.second - run.first + 1);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("buffers_scanned");
  j.begin_object();
  j.field("start_cycle", r.start);
  j.field("end_cycle", scan_end);  // exclusive, as the range
  j.end_object();
  const bool partial = scan_end < end;
  j.field("truncated", partial || cut);
  if (partial) {
    j.field("next_start_cycle", scan_end);
    j.field("note", ("buffers were scanned for " + std::to_string(max_scan) +
                     " cycles (max_cycles); call again with start_cycle " + std::to_string(scan_end) +
                     " for the rest (stall_reasons cover the whole range)").c_str());
  } else if (cut) {
    j.field("note", "intervals were left out to keep the answer under its size cap: ask for a shorter range");
  }
  j.end_object();
}

// An optional closed range {start_cycle?, end_cycle?}: the whole trace by default.
std::pair<uint64_t, uint64_t> optional_range(const Args &a) {
  const uint64_t start = a.number_or("start_cycle", 0), end = a.number_or("end_cycle", UINT64_MAX);
  if (start > end) throw ToolError("start_cycle must be at most end_cycle");
  return {start, end};
}

void tool_noc_latency(Session &s, const Args &a, Json &j) {
  uscope_noc_analysis_t *noc = s.noc();
  const auto range = optional_range(a);
  const Page pg = page(a, 100, 10000);
  uscope_noc_report_t rep{};
  rep.struct_size = sizeof rep;
  cpu_check(uscope_noc_analyze(noc, &rep, range.first, range.second), "noc analysis");
  AnalysisJsonOptions o;
  o.mcp = true;
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("max_cycle", rep.max_cycle);
  j.field("period_ps", rep.period_ps);
  if (rep.clamped && range.second != UINT64_MAX)
    j.field("warning", clamp_warning(range.second, rep.end_cycle));
  j.key("counts");
  j.begin_object();
  noc_counts_json(j, rep.counts);
  j.field("in_flight", rep.in_flight);
  j.field("handoffs", rep.handoffs);
  j.field("multi_hop", rep.multi_hop);
  j.end_object();
  j.key("retries_by_reason");
  j.begin_object();
  for (size_t i = 0; i < std::size(uscope::proto::noc::kRetryReasons); ++i)
    j.field(uscope::proto::noc::kRetryReasons[i], rep.retries_by_reason[i]);
  j.end_object();
  latency_json(j, "hop_latency", rep.latency, o);
  latency_json(j, "end_to_end_latency", rep.end_to_end, o);
  j.key("scopes");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_scopes; ++i) noc_scope_json(j, rep.scopes[i], o);
  j.end_array();
  j.key("ports");
  j.begin_array();
  for (uint32_t i = 0; i < rep.num_ports; ++i) noc_port_json(j, rep, rep.ports[i], o);
  j.end_array();
  j.field("total_pairs", static_cast<uint64_t>(rep.num_pairs));
  j.key("pairs");
  j.begin_array();
  uint64_t shown = 0;
  bool truncated = false;
  for (uint64_t i = pg.offset; i < rep.num_pairs; ++i) {
    if (shown == pg.limit || j.size() >= s.budget()) {
      truncated = true;
      break;
    }
    noc_pair_json(j, rep, rep.pairs[i], o);
    ++shown;
  }
  j.end_array();
  j.field("offset", pg.offset);
  j.field("returned", shown);
  page_end(j, truncated, pg.offset + shown, "pairs");
  j.field("segments_read", static_cast<uint64_t>(rep.segments_read));
  j.end_object();
}

void tool_npu_summary(Session &s, const Args &a, Json &j) {
  uscope_npu_analysis_t *npu = s.npu();
  const auto range = optional_range(a);
  uscope_npu_report_t rep{};
  rep.struct_size = sizeof rep;
  cpu_check(uscope_npu_analyze(npu, &rep, range.first, range.second), "npu analysis");
  // npu-report's JSON object of the range (its phases, DMA and SRAM figures):
  // its keys as they are, then the range, engines and command latency.
  std::string_view v(rep.json ? rep.json : "");
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  simdjson::dom::parser p;
  simdjson::dom::object obj;
  if (p.parse(v.data(), v.size()).get(obj) != simdjson::SUCCESS) throw ToolError("npu report: not a JSON object");
  j.begin_object();
  for (auto field : obj) {
    const std::string k(field.key);
    j.key(k.c_str());
    const std::string val = simdjson::minify(field.value);
    j.raw(val.data(), val.size());
  }
  j.key("range");
  j.begin_object();
  j.field("start_cycle", rep.start_cycle);
  j.field("end_cycle", rep.end_cycle);
  j.field("range_cycles", rep.range_cycles);
  j.field("max_cycle", rep.max_cycle);
  j.field("period_ps", rep.period_ps);
  j.field("clamped", rep.clamped != 0);
  j.end_object();
  AnalysisJsonOptions o;
  o.mcp = true;
  npu_engines_json(j, rep, o);
  latency_json(j, "command_latency", rep.command_latency, o);
  j.end_object();
}

constexpr const char *kRangeProps =
    R"("start_cycle":{"type":"integer","minimum":0,"description":"Start of the cycle range"},)"
    R"("end_cycle":{"type":"integer","minimum":0,"description":"End of the cycle range"})";

}  // namespace

const std::vector<Tool> &tools() {
  static const std::vector<Tool> table = {
      {"file_info",
       "Get trace file header, schema, segments, counters, and buffer metadata. Call this first to understand the "
       "trace structure. Works on any trace; the cpu fields are empty when it has no cpu protocol scope.",
       R"({"type":"object","properties":{)"
       R"("limit":{"type":"integer","minimum":1,"description":"Segments to list, default 1000"},)"
       R"("offset":{"type":"integer","minimum":0,"description":"First segment to list, default 0"}},"required":[]})",
       tool_file_info},
      {"state_at_cycle",
       "Get the state of all buffers at a specific cycle. Shows slot contents, pointer positions, and fill levels.",
       R"({"type":"object","properties":{"cycle":{"type":"integer","minimum":0,"description":"The cycle number to query"}},"required":["cycle"]})",
       tool_state_at_cycle},
      {"entity_timeline",
       "Get the full lifecycle of an instruction entity: pipeline stages, disassembly, retire/flush status. An entity "
       "id is a slot of the entity catalog, reused by later instructions: every instruction that had it is listed.",
       R"({"type":"object","properties":{"entity_id":{"type":"integer","minimum":0,"description":"The entity ID to look up"},)"
       R"("start_cycle":{"type":"integer","minimum":0,"description":"Only instructions alive at or after this cycle, default 0"},)"
       R"("end_cycle":{"type":"integer","minimum":0,"description":"Only instructions alive at or before this cycle, default the end"},)"
       R"("limit":{"type":"integer","minimum":1,"description":"Instructions to return, default 100"},)"
       R"("offset":{"type":"integer","minimum":0,"description":"Instructions to skip, default 0"}},"required":["entity_id"]})",
       tool_entity_timeline},
      {"counter_values",
       "Get performance counter values over a cycle range. Returns cumulative values at sampled points within the "
       "range (about 1000 points), with the delta and rate.",
       R"({"type":"object","properties":{"counter":{"type":"string","description":"Counter name, or a substring of it"},)" +
           std::string(kRangeProps) + R"(},"required":["counter","start_cycle","end_cycle"]})",
       tool_counter_values},
      {"buffer_occupancy",
       "Get buffer state at a specific cycle: occupied slots, pointer positions, fill level. Use file_info first to "
       "discover buffer names.",
       R"({"type":"object","properties":{"buffer":{"type":"string","description":"Buffer name, or a substring of it"},)"
       R"("cycle":{"type":"integer","minimum":0,"description":"The cycle number to query"}},"required":["buffer","cycle"]})",
       tool_buffer_occupancy},
      {"analyze_performance",
       "Compute performance summary for a cycle range: instruction count, IPC, per-counter totals, buffer occupancy "
       "snapshots, per-stage latency sorted by bottleneck, and stall reasons.",
       R"({"type":"object","properties":{)" + std::string(kRangeProps) +
           R"(},"required":["start_cycle","end_cycle"]})",
       tool_analyze_performance},
      {"events_in_range",
       "List the events of a closed cycle range in time order, every payload field by name (enum values as their "
       "names, strings as text). Optionally of one event type. Paginated with limit/offset.",
       R"({"type":"object","properties":{)" + std::string(kRangeProps) +
           R"(,"event":{"type":"string","description":"Only events of this type, e.g. stall or core0.flush"},)"
           R"("limit":{"type":"integer","minimum":1,"description":"Events to return, default 200"},)"
           R"("offset":{"type":"integer","minimum":0,"description":"Events to skip, default 0"}},)"
           R"("required":["start_cycle","end_cycle"]})",
       tool_events_in_range},
      {"find_stalls",
       "Why the pipeline stalls in a cycle range: the cpu scope's stall events counted by reason, and the runs of "
       "cycles (start, end, length) where each buffer was full (scanned for at most max_cycles cycles).",
       R"({"type":"object","properties":{)" + std::string(kRangeProps) +
           R"(,"max_cycles":{"type":"integer","minimum":1,"maximum":1000000,"description":"Cycles to scan for full buffers, default and at most 1000000"}},)"
           R"("required":["start_cycle","end_cycle"]})",
       tool_find_stalls},
      {"npu_summary",
       "The npu report of the trace's npu scope, over the whole trace or a cycle range: per-engine busy cycles and "
       "utilization, DMA bandwidth, DRAM channel utilization, SRAM bank conflicts, command latency percentiles and "
       "per phase, per-layer breakdown.",
       R"({"type":"object","properties":{)"
       R"("start_cycle":{"type":"integer","minimum":0,"description":"Start of the cycle range (npu clock), default the trace's start"},)"
       R"("end_cycle":{"type":"integer","minimum":0,"description":"End of the cycle range, inclusive, default the trace's end"}},"required":[]})",
       tool_npu_summary},
      {"noc_latency",
       "NoC transaction latency of the trace's noc protocol scopes, over the whole trace or a cycle range: counts "
       "(completed, retries by reason, timeouts, credit stalls, in flight), hop and end-to-end latency percentiles, "
       "per scope, per (src, dst) port pair (paginated with limit/offset) and per port link credits.",
       R"({"type":"object","properties":{)"
       R"("start_cycle":{"type":"integer","minimum":0,"description":"Start of the cycle range (first noc scope's clock), default 0"},)"
       R"("end_cycle":{"type":"integer","minimum":0,"description":"End of the cycle range, inclusive, default the trace's end"},)"
       R"("limit":{"type":"integer","minimum":1,"description":"Port pairs to return, default 100"},)"
       R"("offset":{"type":"integer","minimum":0,"description":"Port pairs to skip, default 0"}},"required":[]})",
       tool_noc_latency},
  };
  return table;
}

// ── the server ──

namespace {

std::string error_response(const std::string &id, int code, const std::string &message) {
  std::string out;
  Json j(&out);
  j.begin_object();
  j.field("jsonrpc", "2.0");
  j.key("id");
  j.raw(id.data(), id.size());
  j.key("error");
  j.begin_object();
  j.key("code");
  j.snum(code);
  j.field("message", message);
  j.end_object();
  j.end_object();
  return out;
}

// {"jsonrpc":"2.0","id":ID,"result":<result>}
std::string result_response(const std::string &id, const std::string &result) {
  std::string out;
  Json j(&out);
  j.begin_object();
  j.field("jsonrpc", "2.0");
  j.key("id");
  j.raw(id.data(), id.size());
  j.key("result");
  j.raw(result.data(), result.size());
  j.end_object();
  return out;
}

std::string tool_result(const std::string &text, bool is_error, const std::string *structured) {
  std::string out;
  Json j(&out);
  j.begin_object();
  j.key("content");
  j.begin_array();
  j.begin_object();
  j.field("type", "text");
  j.field("text", text);
  j.end_object();
  j.end_array();
  if (structured) {
    j.key("structuredContent");
    j.raw(structured->data(), structured->size());
  }
  j.field("isError", is_error);
  j.end_object();
  return out;
}

}  // namespace

struct Server::Impl {
  Impl(const std::string &path, Options o) : opts(o), session(path, o.max_text_bytes) {}
  Options opts;
  Session session;
  simdjson::dom::parser parser;

  std::string initialize(const simdjson::dom::element *params) {
    std::string_view asked;
    const char *version = kProtocolVersions[0];
    if (params && params->is_object() && (*params)["protocolVersion"].get_string().get(asked) == simdjson::SUCCESS)
      for (const char *v : kProtocolVersions)
        if (asked == v) version = v;
    std::string out;
    Json j(&out);
    j.begin_object();
    j.field("protocolVersion", version);
    j.key("capabilities");
    j.begin_object();
    j.key("tools");
    j.begin_object();
    j.end_object();
    j.end_object();
    j.key("serverInfo");
    j.begin_object();
    j.field("name", "uscope-mcp");
    j.field("version", uscope_version_string());
    j.end_object();
    j.field("instructions",
            "Tools over one uScope trace (" + session.path() +
                "). Call file_info first: it names the stages, counters, buffers and event types the other tools "
                "take. Cycles are time / the cpu clock's period.");
    j.end_object();
    return out;
  }

  std::string list_tools() {
    std::string out;
    Json j(&out);
    j.begin_object();
    j.key("tools");
    j.begin_array();
    for (const Tool &t : tools()) {
      j.begin_object();
      j.field("name", t.name);
      j.field("description", t.description);
      j.key("inputSchema");
      j.raw(t.input_schema.data(), t.input_schema.size());
      // Every tool only reads the trace (2025-03-26 tool annotations; hints to the client).
      j.key("annotations");
      j.begin_object();
      j.field("readOnlyHint", true);
      j.field("openWorldHint", false);
      j.end_object();
      j.end_object();
    }
    j.end_array();
    j.end_object();
    return out;
  }

  // tools/call: a tool result (isError on failure); "" with *bad set for a
  // malformed call itself (-32602).
  std::string call_tool(const simdjson::dom::element *params, std::string *bad) {
    std::string_view name;
    if (!params || !params->is_object() || (*params)["name"].get_string().get(name) != simdjson::SUCCESS) {
      *bad = "tools/call needs params.name, the tool's name (a string)";
      return "";
    }
    Args args;
    simdjson::dom::element a;
    if ((*params)["arguments"].get(a) == simdjson::SUCCESS && !a.is_null()) {
      simdjson::dom::object o;
      if (a.get_object().get(o) != simdjson::SUCCESS) {
        *bad = "tools/call: params.arguments must be an object";
        return "";
      }
      args = Args(o);
    }
    const Tool *tool = nullptr;
    for (const Tool &t : tools())
      if (name == t.name) tool = &t;
    if (!tool) {
      std::string known;
      for (const Tool &t : tools()) known += (known.empty() ? "" : ", ") + std::string(t.name);
      return tool_result("Error: unknown tool: " + std::string(name) + " (tools: " + known + ")", true, nullptr);
    }
    std::string result;
    try {
      Json j(&result);
      tool->run(session, args, j);
    } catch (const ToolError &e) {
      return tool_result(std::string("Error: ") + e.what(), true, nullptr);
    } catch (const Failure &e) {
      return tool_result(std::string("Error: ") + e.what(), true, nullptr);
    } catch (const std::bad_alloc &) {
      return tool_result("Error: out of memory answering " + std::string(name) + ": ask for less", true, nullptr);
    }
    if (result.size() > opts.max_text_bytes)
      return tool_result("Error: the answer of " + std::string(name) + " is " + std::to_string(result.size()) +
                             " bytes, over the " + std::to_string(opts.max_text_bytes) +
                             "-byte cap of one answer: ask for less (a shorter range, one buffer, limit/offset)",
                         true, nullptr);
    return tool_result(result, false, &result);
  }

  std::string handle(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    size_t b = 0;
    while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
    line.remove_prefix(b);
    if (line.empty()) return "";
    static const std::string kNull = "null";
    simdjson::dom::element doc;
    if (const auto err = parser.parse(line.data(), line.size()).get(doc))
      return error_response(kNull, -32700, std::string("Parse error: ") + simdjson::error_message(err));
    if (doc.is_array())
      return error_response(kNull, -32600, "Invalid Request: batches (JSON arrays) are not supported (MCP 2025-06-18 "
                                           "removed them); send one message per line");
    simdjson::dom::object msg;
    if (doc.get_object().get(msg) != simdjson::SUCCESS)
      return error_response(kNull, -32600, "Invalid Request: a message is a JSON object");
    // The id: a string or a number, echoed as it came; none: a notification.
    std::string id = kNull;
    bool has_id = false;
    simdjson::dom::element idv;
    if (msg["id"].get(idv) == simdjson::SUCCESS) {
      if (!idv.is_string() && !idv.is_number())
        return error_response(kNull, -32600, "Invalid Request: id must be a string or a number");
      id = simdjson::minify(idv);
      has_id = true;
    }
    std::string_view version, method;
    const bool valid_version = msg["jsonrpc"].get_string().get(version) == simdjson::SUCCESS && version == "2.0";
    const bool has_method = msg["method"].get_string().get(method) == simdjson::SUCCESS;
    // A response (to a request we never send) and a malformed notification
    // have no id to answer with: they are logged, never answered.
    const bool response = !has_method && (msg["result"].error() == simdjson::SUCCESS ||
                                          msg["error"].error() == simdjson::SUCCESS);
    if ((!has_id || response) && (!valid_version || !has_method)) {
      std::fprintf(stderr, "uscope-mcp: ignored a message that is neither a request nor a notification: %.200s\n",
                   std::string(line).c_str());
      return "";
    }
    if (!valid_version) return error_response(id, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
    if (!has_method) return error_response(id, -32600, "Invalid Request: no method");
    simdjson::dom::element pv;
    const simdjson::dom::element *params = msg["params"].get(pv) == simdjson::SUCCESS ? &pv : nullptr;
    if (!has_id) return "";  // notifications/initialized, notifications/cancelled, ...: nothing to answer
    if (method == "initialize") return result_response(id, initialize(params));
    if (method == "ping") return result_response(id, "{}");
    if (method == "tools/list") return result_response(id, list_tools());
    if (method == "tools/call") {
      std::string bad;
      std::string r = call_tool(params, &bad);
      if (!bad.empty()) return error_response(id, -32602, "Invalid params: " + bad);
      return result_response(id, r);
    }
    return error_response(id, -32601, "Method not found: " + std::string(method));
  }
};

Server::Server(const std::string &trace_path, Options opts) : impl_(std::make_unique<Impl>(trace_path, opts)) {}
Server::Server(const std::string &trace_path) : Server(trace_path, Options{}) {}
Server::~Server() = default;

std::string Server::handle(std::string_view line) {
  if (impl_->opts.log_messages) std::fprintf(stderr, "uscope-mcp: << %.*s\n", static_cast<int>(line.size()), line.data());
  std::string out = impl_->handle(line);
  if (impl_->opts.log_messages && !out.empty()) std::fprintf(stderr, "uscope-mcp: >> %s\n", out.c_str());
  return out;
}

void Server::serve(std::istream &in, std::ostream &out) {
  std::string line;
  while (std::getline(in, line)) {
    const std::string answer = handle(line);
    if (answer.empty()) continue;
    out << answer << '\n';
    out.flush();
  }
}

int run_stdio_server(const std::string &trace_path, bool log_messages) {
  std::unique_ptr<Server> server;
  try {
    Server::Options o;
    o.log_messages = log_messages;
    server = std::make_unique<Server>(trace_path, o);
  } catch (const Failure &e) {
    std::fprintf(stderr, "uscope-mcp: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "uscope-mcp: serving %s over stdio (MCP %s)\n", trace_path.c_str(), kProtocolVersions[0]);
  std::ios::sync_with_stdio(false);
  server->serve(std::cin, std::cout);
  std::fprintf(stderr, "uscope-mcp: stdin closed, exiting\n");
  return 0;
}

}  // namespace uscope_cli::mcp
