#include "analysis/cpu_trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "analysis/elf_info.hpp"
#include "analysis/riscv_disasm.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"
#include "protocol/cpu_table.hpp"

namespace uscope::analysis {

namespace {

namespace cpu = proto::cpu;

// How far a query follows instructions alive at its edges into the segments
// before and after its window. An instruction alive longer than this many
// segments is reported from what was seen (its fetch unknown, or in flight).
constexpr size_t kMaxFollow = 64;
// How far past a window's end the segment holding it is decoded at first:
// most instructions alive at the end of the window retire within it, and
// then the rest of the segment is never decoded.
constexpr uint64_t kTailCycles = 256;
// The decoded segments kept (besides the two most recent): what lets a
// sequence of nearby queries skip decoding, within a fixed memory budget.
constexpr size_t kCacheBytes = size_t{24} << 20;

int32_t find_field(const Schema &s, const std::vector<FieldDef> &fields, const char *name) {
  for (size_t i = 0; i < fields.size(); ++i)
    if (std::strcmp(s.name(fields[i].name), name) == 0) return static_cast<int32_t>(i);
  return -1;
}

// Offset of a named payload field (§4.7: packed, no padding); -1 when absent.
int64_t payload_offset(const Schema &s, const EventDef &e, const char *name) {
  uint32_t off = 0;
  for (const FieldDef &f : e.fields) {
    if (std::strcmp(s.name(f.name), name) == 0) return off;
    off += wire::field_type_size(f.type);
  }
  return -1;
}

uint64_t get_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// An annotation that disassembles the instruction starts with its address
// ("00001000: jal zero, 0x10", "0x80000000 addi x1, x0, 1"): the reference's
// rule, so that both tools show the same text.
bool is_disasm_line(const std::string &text, uint64_t pc) {
  if (pc == 0) return false;
  size_t b = text.find_first_not_of(" \t");
  if (b == std::string::npos) return false;
  size_t e = text.find_first_of(" \t", b);
  std::string w = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
  if (!w.empty() && w.back() == ':') w.pop_back();
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) w = w.substr(2);
  if (w.size() < 4 || w.size() > 16) return false;
  uint64_t v = 0;
  for (char c : w) {
    const int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                                   : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v == pc;
}

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string known_names(const char *what, const std::vector<std::string> &names) {
  std::string m;
  for (const auto &n : names) m += (m.empty() ? "" : ", ") + n;
  return names.empty() ? std::string("the trace has no ") + what : "known: " + m;
}

}  // namespace

size_t SegmentDecode::bytes() const {
  return sizeof *this + pieces.capacity() * sizeof(InsnPiece) + spans.capacity() * sizeof(uscope_stage_span_t) +
         (annotations.capacity() + deps.capacity()) * sizeof(uint32_t) + stalls.capacity() * sizeof(Stall);
}

// ── opening ──

CpuTrace::CpuTrace(TraceReader &r, const uscope_cpu_trace_options_t &o) : r_(r) {
  cache_cap_ = std::max<uint32_t>(o.cache_segments ? o.cache_segments : 8, 2);
  resolve(o.scope);
  build_metadata();
  open_elf(o.elf_path);
}

CpuTrace::~CpuTrace() = default;

void CpuTrace::resolve(const char *want) {
  const Schema &s = r_.schema();
  const ScopeDef *scope = nullptr;
  std::vector<std::string> cpu_scopes;
  for (const ScopeDef &sc : s.scopes) {
    if (sc.protocol == 0xFFFF || std::strcmp(s.name(sc.protocol), "cpu") != 0) continue;
    cpu_scopes.push_back(s.name(sc.name));
    if (!scope && (!want || cpu_scopes.back() == want)) scope = &sc;
  }
  if (!scope) {
    if (want && !cpu_scopes.empty())
      fail(USCOPE_ERR_NOT_FOUND, "no cpu protocol scope named '%s' (%s)", want,
           known_names("cpu scope", cpu_scopes).c_str());
    fail(USCOPE_ERR_NOT_FOUND, "this trace has no cpu protocol scope");
  }
  scope_name_ = s.name(scope->name);
  ids_.scope = scope->scope_id;

  // The scope's clock, inherited from the closest ancestor that names one.
  const ScopeDef *at = scope;
  for (size_t hops = 0; at && at->clock_id == 0xFF && hops < s.scopes.size(); ++hops) {
    const ScopeDef *parent = nullptr;
    for (const ScopeDef &sc : s.scopes)
      if (sc.scope_id == at->parent_id) parent = &sc;
    at = parent;
  }
  if (at && at->clock_id != 0xFF)
    for (const ClockDef &c : s.clocks)
      if (c.clock_id == at->clock_id && c.period_ps) ids_.period_ps = c.period_ps;

  const StorageDef *ent = nullptr;
  for (const StorageDef &st : s.storages)
    if (st.scope_id == ids_.scope && std::strcmp(s.name(st.name), cpu::kEntities.name) == 0) ent = &st;
  if (!ent) fail(USCOPE_ERR_SCHEMA, "cpu scope '%s' has no '%s' storage", scope_name_.c_str(), cpu::kEntities.name);
  ids_.entities = ent->storage_id;
  ids_.num_slots = ent->num_slots;
  const int32_t fid = find_field(s, ent->fields, cpu::kEntityFields[USCOPE_CPU_FIELD_ENTITY_ID].name);
  const int32_t fpc = find_field(s, ent->fields, cpu::kEntityFields[USCOPE_CPU_FIELD_PC].name);
  if (fid < 0 || fpc < 0)
    fail(USCOPE_ERR_SCHEMA, "cpu scope '%s': storage '%s' lacks the entity_id or pc field", scope_name_.c_str(),
         cpu::kEntities.name);
  ids_.f_entity_id = static_cast<uint16_t>(fid);
  ids_.f_pc = static_cast<uint16_t>(fpc);
  ids_.f_inst_bits = find_field(s, ent->fields, cpu::kEntityFields[USCOPE_CPU_FIELD_INST_BITS].name);

  // Events by the protocol table's names (spec cpu §5); offsets by field name.
  const EventDef *stage_ev = nullptr;
  for (const EventDef &e : s.events) {
    if (e.scope_id != ids_.scope) continue;
    const char *n = s.name(e.name);
    // A payload field the decoder reads: it must be there with the size of
    // its protocol type (a u32 id or string ref, a 1-byte enum), since the
    // decoder reads it at that offset with that size.
    auto off = [&](const char *field, uint32_t *out) {
      const int64_t o = payload_offset(s, e, field);
      if (o < 0) fail(USCOPE_ERR_SCHEMA, "cpu event '%s' has no field '%s'", n, field);
      const int32_t k = find_field(s, e.fields, field);
      const unsigned size = wire::field_type_size(e.fields[static_cast<size_t>(k)].type);
      const bool is_enum = std::strcmp(field, "stage") == 0 || std::strcmp(field, "reason") == 0;
      if (size != (is_enum ? 1u : 4u))
        fail(USCOPE_ERR_SCHEMA, "cpu event '%s': field '%s' is %u bytes, the cpu protocol's is %u", n, field, size,
             is_enum ? 1u : 4u);
      *out = static_cast<uint32_t>(o);
    };
    const auto &ev = cpu::kEvents;
    if (std::strcmp(n, ev[0].name) == 0) {  // stage_transition
      ids_.ev_stage = e.event_type_id;
      stage_ev = &e;
      off(cpu::kStageTransitionFields[0].name, &ids_.stage_off_id);
      off(cpu::kStageTransitionFields[1].name, &ids_.stage_off_stage);
    } else if (std::strcmp(n, ev[1].name) == 0) {  // annotate
      ids_.ev_annotate = e.event_type_id;
      off(cpu::kAnnotateFields[0].name, &ids_.ann_off_id);
      off(cpu::kAnnotateFields[1].name, &ids_.ann_off_text);
    } else if (std::strcmp(n, ev[2].name) == 0) {  // dependency
      ids_.ev_dependency = e.event_type_id;
      off(cpu::kDependencyFields[0].name, &ids_.dep_off_src);
      off(cpu::kDependencyFields[1].name, &ids_.dep_off_dst);
    } else if (std::strcmp(n, ev[3].name) == 0) {  // flush
      ids_.ev_flush = e.event_type_id;
      off(cpu::kFlushFields[0].name, &ids_.flush_off_id);
      off(cpu::kFlushFields[1].name, &ids_.flush_off_reason);
    } else if (std::strcmp(n, ev[4].name) == 0) {  // stall
      ids_.ev_stall = e.event_type_id;
      off(cpu::kStallFields[0].name, &ids_.stall_off_reason);
      if (!e.fields.empty()) ids_.stall_enum = e.fields[0].enum_id;
    }
  }
  if (!stage_ev)
    fail(USCOPE_ERR_SCHEMA, "cpu scope '%s' has no '%s' event", scope_name_.c_str(), cpu::kEvents[0].name);

  // Stage names: the stage field's enum, indexed by value; the reference's
  // cpu.pipeline_stages property when the enum is missing.
  const FieldDef &sf = stage_ev->fields[static_cast<size_t>(find_field(s, stage_ev->fields, "stage"))];  // off() found it
  if (sf.type == wire::FT_ENUM && sf.enum_id < s.enums.size()) {
    for (const EnumValue &v : s.enums[sf.enum_id].values) {
      if (stages_.size() <= v.value) stages_.resize(v.value + 1u);
      stages_[v.value] = s.name(v.name);
    }
  }
  auto prop = [&](const std::string &key) -> std::string {
    for (const DutProperty &p : r_.dut()) {
      const std::string k = s.name(p.key);
      if (k == key || k == scope_name_ + "/" + key) return s.name(p.value);
    }
    return {};
  };
  if (stages_.empty()) {
    std::string list = prop("cpu.pipeline_stages");
    size_t b = 0;
    while (!list.empty() && b <= list.size()) {
      size_t e = list.find(',', b);
      if (e == std::string::npos) e = list.size();
      std::string n = list.substr(b, e - b);
      n.erase(0, n.find_first_not_of(' '));
      n.erase(n.find_last_not_of(' ') + 1);
      stages_.push_back(n);
      b = e + 1;
    }
  }
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].empty()) stages_[i] = "stage_" + std::to_string(i);
  isa_ = prop("cpu.isa");
  elf_path_ = prop("cpu.elf_path");

  // Counters (spec cpu §6 and the reference's detection): 1-slot dense
  // storages with one u64 field, trace-wide. Buffers: SF_BUFFER storages.
  for (const StorageDef &st : s.storages) {
    if (st.num_slots == 1 && !(st.flags & (wire::SF_SPARSE | wire::SF_BUFFER)) && st.fields.size() == 1 &&
        st.fields[0].type == wire::FT_U64) {
      uint32_t ti = UINT32_MAX;
      if (r_.summary())
        for (size_t k = 0; k < r_.summary()->counters.size(); ++k)
          if (r_.summary()->counters[k].storage_id == st.storage_id) ti = static_cast<uint32_t>(k);
      counters_.push_back({s.name(st.name), st.storage_id, ti});
    }
    if (st.flags & wire::SF_BUFFER) buffers_.push_back({s.name(st.name), st.storage_id});
  }
}

void CpuTrace::build_metadata() {
  const Schema &s = r_.schema();
  const FileHeader &h = r_.header();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%u.%u", h.version_major, h.version_minor);
  version_ = buf;
  const std::string &path = r_.path();
  metadata_.emplace_back("File", path.substr(path.find_last_of('/') + 1));
  metadata_.emplace_back("Format", "uScope v" + version_);
  std::string flags;
  auto add_flag = [&](const char *f) { flags += (flags.empty() ? "" : ", ") + std::string(f); };
  if (h.flags & wire::F_COMPRESSED) add_flag("compressed");
  if (h.flags & wire::F_INTERLEAVED_DELTAS) add_flag("interleaved");
  if ((h.flags & wire::F_COMPACT_DELTAS) && !(h.flags & wire::F_INTERLEAVED_DELTAS)) add_flag("compact-deltas");
  if (!flags.empty()) metadata_.emplace_back("Flags", flags);
  for (const DutProperty &p : r_.dut()) metadata_.emplace_back(s.name(p.key), s.name(p.value));
  if (!s.clocks.empty() && s.clocks[0].period_ps) {
    std::snprintf(buf, sizeof buf, "%s (%u ps, %.0f MHz)", s.name(s.clocks[0].name), s.clocks[0].period_ps,
                  1e6 / s.clocks[0].period_ps);
    metadata_.emplace_back("Clock", buf);
  }
  std::string pipeline;
  for (const auto &n : stages_) pipeline += (pipeline.empty() ? "" : " -> ") + n;
  metadata_.emplace_back("Pipeline", pipeline);
  const uint64_t total_ps = max_cycle() * ids_.period_ps;
  std::snprintf(buf, sizeof buf, "%" PRIu64 " cycles (%.1f us)", max_cycle(), static_cast<double>(total_ps) / 1e6);
  metadata_.emplace_back("Duration", buf);
  metadata_.emplace_back("Segments", std::to_string(r_.segments().size()));
  std::snprintf(buf, sizeof buf, "%zu storages, %zu events, %zu enums", s.storages.size(), s.events.size(),
                s.enums.size());
  metadata_.emplace_back("Schema", buf);
  metadata_.emplace_back("Strings", std::to_string(r_.strings().size()) + " entries");
}

void CpuTrace::open_elf(const char *path) {
  // An ELF the caller names must open and match the trace's ISA (the error
  // is the caller's to see); one the trace names (cpu.elf_path) is optional:
  // a file that has moved or another ISA's leaves a note, not a failure.
  if (path && *path) {
    elf_path_ = path;
    elf_ = std::make_unique<ElfInfo>(elf_path_);
    elf_->check_isa(isa_);
    return;
  }
  if (elf_path_.empty()) return;
  try {
    auto elf = std::make_unique<ElfInfo>(elf_path_);
    elf->check_isa(isa_);
    elf_ = std::move(elf);
  } catch (const Error &e) {
    elf_note_ = e.what();
  }
}

const SourceLine *CpuTrace::locate(uint64_t pc) { return elf_ ? &elf_->locate(pc) : nullptr; }

uint64_t CpuTrace::max_cycle() const {
  uint64_t t = r_.header().total_time_ps;
  if (!t && !r_.segments().empty()) t = r_.segments().back().header.time_end_ps;
  return t / ids_.period_ps;
}

uint32_t CpuTrace::find_counter(const char *name) const {
  std::vector<std::string> names;
  for (size_t i = 0; i < counters_.size(); ++i) {
    if (counters_[i].name == name) return static_cast<uint32_t>(i);
    names.push_back(counters_[i].name);
  }
  fail(USCOPE_ERR_NOT_FOUND, "no counter named '%s' (%s)", name, known_names("counters", names).c_str());
}

uint32_t CpuTrace::find_buffer(const char *name) const {
  std::vector<std::string> names;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].name == name) return static_cast<uint32_t>(i);
    names.push_back(buffers_[i].name);
  }
  fail(USCOPE_ERR_NOT_FOUND, "no buffer named '%s' (%s)", name, known_names("buffers", names).c_str());
}

const std::string &CpuTrace::string_at(uint32_t index) const {
  static const std::string kNone;
  return index < r_.strings().size() ? r_.strings()[index] : kNone;
}

uint64_t CpuTrace::segment_first_cycle(size_t i) const { return cycle_of(r_.segments()[i].header.time_start_ps); }
uint64_t CpuTrace::segment_last_cycle(size_t i) const { return cycle_of(r_.segments()[i].header.time_end_ps); }

bool CpuTrace::segments_for(uint64_t start, uint64_t end, size_t *first, size_t *last) const {
  const auto &segs = r_.segments();
  if (segs.empty() || start > end) return false;
  // Segments are in time order; the first whose last cycle reaches start.
  size_t lo = 0, hi = segs.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (segment_last_cycle(mid) < start) lo = mid + 1;
    else hi = mid;
  }
  if (lo == segs.size() || segment_first_cycle(lo) > end) return false;
  size_t l = lo;
  while (l + 1 < segs.size() && segment_first_cycle(l + 1) <= end) ++l;
  *first = lo;
  *last = l;
  return true;
}

// ── counters ──

uint64_t CpuTrace::counter_value(uint32_t c, uint64_t cycle) {
  const auto st = state_at_cycle(cycle);
  return st[counters_.at(c).storage_id].get(0, 0);
}

namespace {
struct StopReplay {};
}  // namespace

template <class T, class Read>
void CpuTrace::storage_series(uint16_t sid, uint64_t start, uint64_t count, Read read, T *out) {
  if (!count) return;
  T cur = read(state_at_cycle(start)[sid]);
  out[0] = cur;
  uint64_t k = 1;  // out[k] is the value at cycle start + k
  size_t first = 0, last = 0;
  if (count > 1 && segments_for(start + 1, start + count - 1, &first, &last)) {
    auto states = r_.initial_state();
    const uint64_t end = start + count - 1;
    struct V {
      CpuTrace &t;
      std::vector<StorageState> &st;
      uint16_t sid;
      uint64_t start, end, count;
      T &cur;
      uint64_t &k;
      T *out;
      Read &read;
      void frame(uint64_t time) {
        const uint64_t cy = t.cycle_of(time);
        if (cy > end) throw StopReplay{};
        if (cy <= start) return;
        while (k < count && start + k < cy) out[k++] = cur;
      }
      void op(uint64_t time, const DeltaOp &o) {
        if (o.storage_id == sid && t.cycle_of(time) > start) cur = read(st[sid]);
      }
      void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
    } v{*this, states, sid, start, end, count, cur, k, out, read};
    try {
      for (size_t i = first; i <= last; ++i) r_.replay(i, states, v);
    } catch (const StopReplay &) {
    }
  }
  while (k < count) out[k++] = cur;
}

void CpuTrace::counter_series(uint32_t c, uint64_t start, uint64_t count, uint64_t *out) {
  storage_series(counters_.at(c).storage_id, start, count, [](const StorageState &s) { return s.get(0, 0); }, out);
}

void CpuTrace::buffer_occupancy(uint32_t b, uint64_t start, uint64_t count, uint32_t *out) {
  storage_series(buffers_.at(b).storage_id, start, count, [](const StorageState &s) { return s.occupancy(); }, out);
}

void CpuTrace::series_changes(const std::vector<Series> &series, uint64_t start, uint64_t end,
                              const std::function<void(uint32_t, uint64_t, uint64_t)> &f, ScopePresence *seen) {
  SeriesPass p(*this, series, start, end, f, seen);
  p.finish();
}

// ── SeriesPass ──

SeriesPass::SeriesPass(CpuTrace &t, const std::vector<CpuTrace::Series> &series, uint64_t start, uint64_t end,
                       Fn f, ScopePresence *seen)
    : t_(t), series_(series), start_(start), end_(end), f_(std::move(f)), seen_(seen) {
  if (series_.empty() || start_ > end_) return;  // nothing wanted: next_ > last_
  const size_t nst = t_.reader().schema().storages.size();
  by_storage_.resize(nst);
  is_dirty_.assign(nst, 0);
  shown_.resize(series_.size());
  value_.resize(series_.size());
  is_captured_.assign(series_.size(), 0);
  {
    const auto st = t_.state_at_cycle(start_);
    for (uint32_t k = 0; k < series_.size(); ++k) {
      const uint16_t sid = series_[k].storage_id;
      if (sid >= st.size()) fail(USCOPE_ERR_INVALID_ARGUMENT, "series %u: no storage %u", k, sid);
      by_storage_[sid].push_back(k);
      shown_[k] = value_[k] = read(k, st[sid]);
      f_(k, start_, shown_[k]);
    }
  }
  size_t first = 0, last = 0;
  if (start_ == end_ || !t_.segments_for(start_ + 1, end_, &first, &last)) return;
  next_ = first;
  last_ = last;
}

void SeriesPass::begin_segment(size_t i, const std::vector<StorageState> &states) {
  in_segment_ = taking_ = false;
  // Segments come in ascending order: one past next_ means next_ was skipped,
  // and so is everything after it (finish() reads them).
  if (done_ || i != next_ || next_ > last_) return;
  in_segment_ = taking_ = true;
  st_ = &states;
  if (seen_) seen_->begin(i);
}

void SeriesPass::frame(uint64_t time) {
  if (!taking_) return;
  const uint64_t cy = t_.cycle_of(time);
  if (cy != cycle_) {
    capture();
    tell();
  }
  if (cy > end_) {
    done_ = true;
    taking_ = false;
    if (alone_) throw StopReplay{};  // finish()'s replay: the rest of the segment is not read
    return;
  }
  cycle_ = cy;
}

void SeriesPass::op(uint64_t time, const DeltaOp &o) {
  if (!taking_) return;
  if (seen_) seen_->op(o.storage_id);
  // Ops at or before start are in the first value already.
  if (o.storage_id < by_storage_.size() && !by_storage_[o.storage_id].empty() && !is_dirty_[o.storage_id] &&
      t_.cycle_of(time) > start_) {
    is_dirty_[o.storage_id] = 1;
    dirty_.push_back(o.storage_id);
  }
}

void SeriesPass::end_segment(size_t i, bool whole) {
  if (!in_segment_) return;
  capture();
  if (seen_) seen_->end(i, whole && !done_);  // the segment stopped in is not whole
  in_segment_ = taking_ = false;
  next_ = i + 1;
}

void SeriesPass::capture() {
  for (uint16_t sid : dirty_) {
    is_dirty_[sid] = 0;
    for (uint32_t k : by_storage_[sid]) {
      value_[k] = read(k, (*st_)[sid]);
      if (!is_captured_[k]) {
        is_captured_[k] = 1;
        captured_.push_back(k);
      }
    }
  }
  dirty_.clear();
}

void SeriesPass::tell() {
  for (uint32_t k : captured_) {
    is_captured_[k] = 0;
    if (value_[k] != shown_[k]) {
      shown_[k] = value_[k];
      f_(k, cycle_, value_[k]);
    }
  }
  captured_.clear();
}

void SeriesPass::finish() {
  if (!done_ && next_ <= last_) {
    own_ = t_.reader().initial_state();
    alone_ = true;
    try {
      for (size_t i = next_; i <= last_ && !done_; ++i) {
        begin_segment(i, own_);
        const bool whole = t_.reader().replay(i, own_, *this);
        end_segment(i, whole);
      }
    } catch (const StopReplay &) {
      if (seen_ && in_segment_) seen_->end(next_, false);  // the segment stopped in is not whole
      in_segment_ = taking_ = false;
    }
    alone_ = false;
  }
  // Every segment's end captured its changes; the last ones are told here.
  tell();
}

bool CpuTrace::counter_downsample(uint32_t c, uint64_t start, uint64_t end, uint32_t n,
                                  uscope_counter_bucket_t *out) {
  if (!n || start >= end) fail(USCOPE_ERR_INVALID_ARGUMENT, "downsample: need n > 0 and start < end");
  const uint64_t range = end - start;
  for (uint32_t b = 0; b < n; ++b) {
    out[b] = {};
    out[b].start_cycle = start + range * b / n;
  }
  auto bucket_end = [&](uint32_t b) { return b + 1 < n ? out[b + 1].start_cycle : end; };
  const auto &sum = r_.summary();
  const Counter &ctr = counters_.at(c);
  if (sum && ctr.tsum_index != UINT32_MAX && sum->base_interval_cycles && sum->fan_out > 1 &&
      !r_.segments().empty()) {
    // TSUM (spec §6.2): level-0 entry e covers base_interval cycles from the
    // first frame's cycle (COMPAT 16); level L entries cover fan_out^L of them.
    const std::vector<TsumArray> &levels = sum->counters[ctr.tsum_index].levels;
    const uint64_t origin = segment_first_cycle(0);
    const uint64_t trace_end = max_cycle() + 1;
    const double width = static_cast<double>(range) / n;
    size_t level = 0;
    uint64_t w = sum->base_interval_cycles;
    while (level + 1 < levels.size() && static_cast<double>(w) * sum->fan_out <= width) {
      ++level;
      w *= sum->fan_out;
    }
    if (!levels.empty()) {
      // The level's entries the buckets cover, read from the file in one go
      // (the level is the coarsest whose entries are no wider than a
      // bucket: about fan_out entries a bucket, at most).
      const TsumArray &level_array = levels[level];
      const uint64_t first = std::min<uint64_t>((std::max(start, origin) - origin) / w, level_array.count);
      const uint64_t past = std::min<uint64_t>(end > origin ? (end - origin + w - 1) / w : 0, level_array.count);
      std::vector<MipmapEntry> entries(past > first ? past - first : 0);
      r_.summary_mipmap(level_array, first, entries.size(), entries.data());
      bool exact = true;
      for (uint32_t b = 0; b < n; ++b) {
        const uint64_t b0 = std::max(out[b].start_cycle, origin), b1 = bucket_end(b);
        if (b1 <= b0) continue;
        uint64_t e0 = std::max((b0 - origin) / w, first), e1 = (b1 - origin + w - 1) / w;
        e1 = std::min<uint64_t>(e1, past);
        double s = 0;
        uint64_t mn = UINT64_MAX, mx = 0;
        for (uint64_t e = e0; e < e1; ++e) {
          const MipmapEntry &m = entries[e - first];
          // The last entry stops at the trace's end.
          const uint64_t es = origin + e * w, ee = std::min(origin + (e + 1) * w, trace_end);
          const uint64_t lo = std::max(b0, es), hi = std::min(b1, ee);
          if (hi <= lo) continue;
          if (hi - lo == ee - es) {
            s += static_cast<double>(m.sum);
          } else {
            exact = false;
            s += static_cast<double>(m.sum) * static_cast<double>(hi - lo) / static_cast<double>(ee - es);
          }
          if (m.sum) {
            mn = std::min(mn, m.min_delta);
            mx = std::max(mx, m.max_delta);
          }
        }
        out[b].sum = static_cast<uint64_t>(std::llround(s));
        out[b].min_delta = mn == UINT64_MAX ? 0 : mn;
        out[b].max_delta = mx;
      }
      return exact;
    }
  }
  // No TSUM for it: replay the range, exactly.
  size_t first = 0, last = 0;
  if (!segments_for(start, end - 1, &first, &last)) return true;
  auto states = r_.initial_state();
  struct V {
    CpuTrace &t;
    uscope_counter_bucket_t *out;
    uint32_t n;
    uint16_t sid;
    uint64_t start, end, range;
    uint64_t cycle = UINT64_MAX, delta = 0;
    void flush() {
      if (cycle == UINT64_MAX || !delta) return;
      auto &b = out[std::min<uint64_t>((cycle - start) * n / range, n - 1)];
      if (!b.sum || delta < b.min_delta) b.min_delta = delta;
      if (delta > b.max_delta) b.max_delta = delta;
      b.sum += delta;
    }
    void frame(uint64_t time) {
      const uint64_t cy = t.cycle_of(time);
      if (cy != cycle) {
        flush();
        delta = 0;
        cycle = cy;
      }
      if (cy >= end) throw StopReplay{};
    }
    void op(uint64_t, const DeltaOp &o) {
      if (o.storage_id == sid && o.action == wire::DA_SLOT_ADD && cycle >= start) delta += o.value;
    }
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  } v{*this, out, n, ctr.storage_id, start, end, range, UINT64_MAX, 0};
  try {
    for (size_t i = first; i <= last; ++i) r_.replay(i, states, v);
  } catch (const StopReplay &) {
  }
  v.flush();
  return true;
}

// ── instructions: one segment ──

SegmentDecode CpuTrace::decode_uncached(size_t i, uint64_t upto) {
  SegmentDecode d;
  // The vectors of the decode the cache let go last, sized like the last
  // decode (a trace's segments are alike): a segment's arrays are built
  // without regrowing them, copying and freeing megabytes each time.
  // The grouped arrays keep their old size: group() overwrites each element
  // of its new size, so only growth past the old one is zero-filled.
  auto reuse = [](auto &dst, auto &from, size_t hint, bool keep_size) {
    dst.swap(from);
    if (!keep_size) dst.clear();
    dst.reserve(hint);
  };
  reuse(d.pieces, spare_.pieces, hint_.pieces, false);
  reuse(d.spans, spare_.spans, hint_.spans, true);
  reuse(d.annotations, spare_.annotations, hint_.anns, true);
  reuse(d.deps, spare_.deps, hint_.deps, true);
  d.stalls.swap(spare_.stalls);
  d.stalls.clear();
  d.index = i;
  d.upto = upto;
  d.first_cycle = segment_first_cycle(i);
  d.last_cycle = segment_last_cycle(i);
  auto states = r_.initial_state();

  using Tr = DecodeScratch::Span;
  struct Builder {
    CpuTrace &t;
    const CpuIds &ids;
    SegmentDecode &d;
    std::vector<StorageState> &st;
    bool started = false;
    uint64_t cycle = 0;
    // (The arrays are the CpuTrace's scratch_, emptied here.)
    std::vector<int32_t> &by_slot;                   // open piece per catalog slot, -1: none
    std::unordered_map<uint32_t, int32_t> by_other;  // open pieces whose entity_id is not their slot
    std::vector<Tr> &spans;
    std::vector<std::pair<uint32_t, uint32_t>> &anns, &deps;
    std::vector<std::pair<uint32_t, int32_t>> &closed_now;  // entity id, piece: closed in this frame

    void start() {
      started = true;
      const StorageState &e = st[ids.entities];
      for (uint16_t slot = 0; slot < ids.num_slots; ++slot) {
        if (!e.valid(slot)) continue;
        InsnPiece p;
        p.entity_id = static_cast<uint32_t>(e.get(slot, ids.f_entity_id));
        p.slot = slot;
        p.flags = InsnPiece::kStartsBefore | InsnPiece::kIdSet;
        p.pc = e.get(slot, ids.f_pc);
        if (ids.f_inst_bits >= 0) {
          p.inst_bits = static_cast<uint32_t>(e.get(slot, static_cast<uint16_t>(ids.f_inst_bits)));
          p.flags |= InsnPiece::kHasBits;
        }
        p.first_cycle = p.last_cycle = d.first_cycle;
        p.pre_end = UINT64_MAX;
        add(p);
      }
    }
    // Where an open piece of an entity is found without the hash map: at
    // slot entity_id (our writer: ids are slots), or at entity_id modulo the
    // catalog's size (writers that number instructions and wrap them onto
    // the slots). Only pieces elsewhere go into by_other.
    bool direct(uint32_t entity_id, uint16_t slot) const {
      return entity_id == slot || (ids.num_slots && entity_id % ids.num_slots == slot);
    }
    void add(const InsnPiece &p) {
      const auto idx = static_cast<int32_t>(d.pieces.size());
      d.pieces.push_back(p);
      by_slot[p.slot] = idx;
      if (!direct(p.entity_id, p.slot)) by_other[p.entity_id] = idx;
    }
    // The open piece of an entity; else one closed earlier in this frame:
    // v0.1 frames carry all their ops before their events (§8.6), so the
    // flush or last transition of an instruction cleared in the same cycle
    // comes after its clear.
    InsnPiece *find(uint32_t entity_id, int32_t *idx, bool *closed = nullptr) {
      int32_t i = -1;
      const size_t mod = ids.num_slots ? entity_id % ids.num_slots : 0;
      if (entity_id < by_slot.size() && by_slot[entity_id] >= 0 &&
          d.pieces[static_cast<size_t>(by_slot[entity_id])].entity_id == entity_id)
        i = by_slot[entity_id];
      else if (mod < by_slot.size() && by_slot[mod] >= 0 &&
               d.pieces[static_cast<size_t>(by_slot[mod])].entity_id == entity_id)
        i = by_slot[mod];
      else if (!by_other.empty()) {
        auto it = by_other.find(entity_id);
        if (it != by_other.end()) i = it->second;
      }
      if (closed) *closed = false;
      if (i < 0)
        for (const auto &c : closed_now)
          if (c.first == entity_id) {
            i = c.second;
            if (closed) *closed = true;
          }
      if (i < 0 && t.slots_past_catalog_ && entity_id >= ids.num_slots) {
        // COMPAT 27 files: an instruction on a slot past the catalog is in
        // no checkpoint, so one alive at the segment's start shows up only
        // here, at its first event; its slot is its id.
        if (by_slot.size() < 0x10000) by_slot.resize(0x10000, -1);
        const auto slot = static_cast<uint16_t>(entity_id & 0xFFFF);
        if (by_slot[slot] < 0) {
          InsnPiece p;
          p.entity_id = entity_id;
          p.slot = slot;
          p.flags = InsnPiece::kStartsBefore | InsnPiece::kIdSet;
          p.first_cycle = p.last_cycle = d.first_cycle;
          p.pre_end = UINT64_MAX;
          i = static_cast<int32_t>(d.pieces.size());
          add(p);
        }
      }
      *idx = i;
      return i < 0 ? nullptr : &d.pieces[static_cast<size_t>(i)];
    }
    // End the piece's open stage at cycle c.
    void end_stage(InsnPiece &p, uint32_t idx, uint64_t c) {
      if (p.cur_stage >= 0) {
        spans.push_back({idx, {static_cast<uint32_t>(p.cur_stage), 0, p.cur_start, c}});
        p.cur_stage = -1;
      } else if ((p.flags & InsnPiece::kStartsBefore) && p.pre_end == UINT64_MAX) {
        p.pre_end = c;
      }
    }
    void close(int32_t idx, uint8_t status) {
      InsnPiece &p = d.pieces[static_cast<size_t>(idx)];
      end_stage(p, static_cast<uint32_t>(idx), cycle);
      if (p.status == USCOPE_INSN_IN_FLIGHT) p.status = status;
      p.last_cycle = cycle;
      if (by_slot[p.slot] == idx) by_slot[p.slot] = -1;
      if (!direct(p.entity_id, p.slot)) by_other.erase(p.entity_id);
      closed_now.emplace_back(p.entity_id, idx);
    }

    void frame(uint64_t time) {
      const uint64_t cy = t.cycle_of(time);
      // States asked for by analyze, taken from this replay when it passes
      // them (the state before this frame is the one at the cycles before it).
      for (auto &w : t.snapshots_)
        if (!w.taken && w.cycle < cy && w.cycle >= d.first_cycle) {
          *w.out = st;
          w.taken = true;
        }
      if (cy > d.upto) throw StopReplay{};
      cycle = cy;
      closed_now.clear();
      if (!started) start();
    }
    void op(uint64_t, const DeltaOp &o) {
      if (o.storage_id != ids.entities) return;
      const int32_t cur = o.slot < by_slot.size() ? by_slot[o.slot] : -1;
      if (o.action == wire::DA_SLOT_SET) {
        // An instruction starts when its catalog slot becomes valid (a set
        // on a free slot, whichever field; the reference counts sets of
        // entity_id), or when entity_id is set to a new id on a live slot.
        if (o.field == ids.f_entity_id) {
          InsnPiece *live = cur >= 0 ? &d.pieces[static_cast<size_t>(cur)] : nullptr;
          if (live && !(live->flags & InsnPiece::kIdSet) && live->first_cycle == cycle &&
              !(live->flags & InsnPiece::kStartsBefore)) {
            // Its other fields came first this cycle: now it gets its id.
            if (!direct(live->entity_id, live->slot)) by_other.erase(live->entity_id);
            live->entity_id = static_cast<uint32_t>(o.value);
            live->flags |= InsnPiece::kIdSet;
            if (!direct(live->entity_id, live->slot)) by_other[live->entity_id] = cur;
            return;
          }
          if (live) close(cur, USCOPE_INSN_IN_FLIGHT);  // replaced without a clear
          InsnPiece p;
          p.entity_id = static_cast<uint32_t>(o.value);
          p.slot = o.slot;
          p.flags = InsnPiece::kIdSet;
          p.first_cycle = p.last_cycle = cycle;
          add(p);
          return;
        }
        int32_t at = cur;
        if (at < 0) {
          InsnPiece p;
          // (A slot past the catalog holds nothing: its id is the slot, COMPAT 27.)
          p.entity_id = o.slot < ids.num_slots ? static_cast<uint32_t>(st[ids.entities].get(o.slot, ids.f_entity_id))
                                               : o.slot;
          p.slot = o.slot;
          p.first_cycle = p.last_cycle = cycle;
          at = static_cast<int32_t>(d.pieces.size());
          add(p);
        }
        {
          InsnPiece &p = d.pieces[static_cast<size_t>(at)];
          if (o.field == ids.f_pc) {
            p.pc = o.value;
          } else if (static_cast<int32_t>(o.field) == ids.f_inst_bits) {
            p.inst_bits = static_cast<uint32_t>(o.value);
            p.flags |= InsnPiece::kHasBits;
          }
        }
      } else if (o.action == wire::DA_SLOT_CLEAR && cur >= 0) {
        close(cur, USCOPE_INSN_RETIRED);
      }
    }
    // COMPAT 27: the reference's Rust cpu writer (konata2uscope, gen-uscope)
    // puts instruction ids in the entities slot, past the catalog's size.
    // The reader skips (and counts) those ops; they still say when each
    // instruction starts and retires, so they are decoded as the others,
    // on slots up to the wire format's 65,535.
    void skipped_op(uint64_t time, const DeltaOp &o) {
      if (o.storage_id != ids.entities) return;
      t.slots_past_catalog_ = true;
      if (by_slot.size() < 0x10000) by_slot.resize(0x10000, -1);
      op(time, o);
    }
    void event(uint64_t, uint16_t id, const uint8_t *e, uint32_t) {
      int32_t idx = -1;
      bool closed = false;
      if (id == ids.ev_stage) {
        InsnPiece *p = find(static_cast<uint32_t>(get_le(e + ids.stage_off_id, 4)), &idx, &closed);
        if (!p || closed) return;
        end_stage(*p, static_cast<uint32_t>(idx), cycle);
        p->cur_stage = e[ids.stage_off_stage];
        p->cur_start = cycle;
        p->last_cycle = cycle;
      } else if (id == ids.ev_flush) {
        InsnPiece *p = find(static_cast<uint32_t>(get_le(e + ids.flush_off_id, 4)), &idx, &closed);
        if (!p) return;
        p->flush_reason = e[ids.flush_off_reason];
        p->status = USCOPE_INSN_FLUSHED;
        if (!closed) close(idx, USCOPE_INSN_FLUSHED);
      } else if (id == ids.ev_annotate) {
        InsnPiece *p = find(static_cast<uint32_t>(get_le(e + ids.ann_off_id, 4)), &idx);
        if (!p) return;
        const auto text = static_cast<uint32_t>(get_le(e + ids.ann_off_text, 4));
        if (p->disasm_text == UINT32_MAX && is_disasm_line(t.string_at(text), p->pc)) {
          p->disasm_text = text;
          p->flags |= InsnPiece::kDisasmAnnotation;
        } else {
          anns.emplace_back(static_cast<uint32_t>(idx), text);
        }
      } else if (id == ids.ev_dependency) {
        if (find(static_cast<uint32_t>(get_le(e + ids.dep_off_dst, 4)), &idx))
          deps.emplace_back(static_cast<uint32_t>(idx), static_cast<uint32_t>(get_le(e + ids.dep_off_src, 4)));
      } else if (id == ids.ev_stall) {
        d.stalls.push_back({cycle, e[ids.stall_off_reason]});
      }
    }
  } b{*this, ids_, d, states, false, 0, scratch_.by_slot, {}, scratch_.spans, scratch_.anns, scratch_.deps,
      scratch_.closed_now};
  b.by_slot.assign(ids_.num_slots, -1);
  b.spans.clear();
  b.anns.clear();
  b.deps.clear();
  b.closed_now.clear();

  try {
    d.ok = r_.replay(i, states, b);
  } catch (const StopReplay &) {
    d.complete = false;
    d.last_cycle = b.cycle;
  }
  if (!d.ok) {
    d.pieces.clear();
    d.spans.clear();
    d.annotations.clear();
    d.deps.clear();
    d.stalls.clear();
    return d;
  }
  for (size_t k = 0; k < d.pieces.size(); ++k) {
    InsnPiece &p = d.pieces[k];
    if (b.by_slot[p.slot] == static_cast<int32_t>(k)) {
      p.flags |= InsnPiece::kOpenAtEnd;
      p.last_cycle = std::max(p.last_cycle, d.last_cycle);
    }
  }
  // Group spans, annotations and dependencies by piece (a counting sort that
  // keeps their time order), so each piece owns one contiguous range.
  auto group = [&](const auto &items, auto key, auto value, auto &dst, uint32_t InsnPiece::*begin,
                   uint32_t InsnPiece::*count) {
    for (const auto &it : items) ++(d.pieces[key(it)].*count);
    uint32_t at = 0;
    for (auto &p : d.pieces) {
      p.*begin = at;
      at += p.*count;
      p.*count = 0;
    }
    dst.resize(at);
    for (const auto &it : items) {
      InsnPiece &p = d.pieces[key(it)];
      dst[p.*begin + (p.*count)++] = value(it);
    }
  };
  group(
      b.spans, [](const Tr &x) { return x.piece; }, [](const Tr &x) { return x.span; }, d.spans,
      &InsnPiece::span_begin, &InsnPiece::span_count);
  auto first = [](const std::pair<uint32_t, uint32_t> &x) { return x.first; };
  auto second = [](const std::pair<uint32_t, uint32_t> &x) { return x.second; };
  group(b.anns, first, second, d.annotations, &InsnPiece::ann_begin, &InsnPiece::ann_count);
  group(b.deps, first, second, d.deps, &InsnPiece::dep_begin, &InsnPiece::dep_count);
  auto more = [](size_t n) { return n + n / 4; };
  hint_ = {more(d.pieces.size()), more(b.spans.size()), more(b.anns.size()), more(b.deps.size())};
  return d;
}

const SegmentDecode &CpuTrace::decode(size_t i, uint64_t upto) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->index != i) continue;
    if (it->complete || it->upto >= upto) {
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front();
    }
    cache_.erase(it);  // decoded not far enough: again, further
    break;
  }
  cache_.push_front(decode_uncached(i, upto));
  // At most cache_cap_ segments and kCacheBytes of them, but always the two
  // most recent (a stream holds one while it asks for the next).
  size_t bytes = 0;
  for (const auto &d : cache_) bytes += d.bytes();
  while (cache_.size() > 2 && (cache_.size() > cache_cap_ || bytes > kCacheBytes)) {
    bytes -= cache_.back().bytes();
    spare_ = std::move(cache_.back());  // its storage serves the next decode
    cache_.pop_back();
  }
  return cache_.front();
}

const std::string &CpuTrace::disasm(const Insn &i) {
  if (i.head.disasm_text != UINT32_MAX) return string_at(i.head.disasm_text);
  // The text depends on pc and the bits only (the ELF is fixed), and a
  // program's hot code repeats: a direct-mapped cache skips the decoder's
  // table scan for nearly every instruction of a long trace.
  const uint32_t bits = (i.head.flags & InsnPiece::kHasBits) ? static_cast<uint32_t>(i.head.inst_bits) : 0;
  DisasmCacheEntry &c = disasm_cache_[(i.head.pc >> 1 ^ i.head.pc >> 13) & (kDisasmCacheSize - 1)];
  if (c.valid && c.pc == i.head.pc && c.bits == bits) return c.text;
  c.text = disasm_uncached(i);
  c.pc = i.head.pc;
  c.bits = bits;
  c.valid = true;
  return c.text;
}

std::string CpuTrace::disasm_uncached(const Insn &i) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx64, i.head.pc);
  std::string out = buf;
  uint8_t bytes[4];
  const uint8_t *code = bytes;
  size_t avail = 0;
  // Bits 0 are no instruction (RISC-V reserves the all-zero encoding as
  // illegal), and a checkpoint cannot tell bits never written from 0: an
  // instruction found alive at a segment's start without bits reads 0 there.
  // So 0 disassembles from the ELF's bytes at pc, as no bits do.
  if ((i.head.flags & InsnPiece::kHasBits) && i.head.inst_bits != 0) {
    for (int k = 0; k < 4; ++k) bytes[k] = static_cast<uint8_t>(i.head.inst_bits >> (8 * k));
    // A compressed instruction's 16 bits come alone (the upper half is 0).
    avail = (bytes[0] & 3) == 3 ? 4 : 2;
  } else if (elf_) {
    code = elf_->code_at(i.head.pc, &avail);  // no inst_bits: the program's bytes at pc
  }
  if (!code || !avail) return out;
  const Xlen xlen = elf_ ? elf_->xlen() : lower(isa_).rfind("rv64", 0) == 0 ? Xlen::k64 : Xlen::k32;
  DisasmOptions o;
  if (elf_ && elf_->has_symbols()) {
    o.gp = elf_->global_pointer();
    ElfInfo *e = elf_.get();
    o.symbolize = [e](uint64_t a) { return e->symbol_at(a); };
  }
  const Decoded dec = Disassembler(xlen, o).next(code, avail, i.head.pc);
  std::string text = dec.text;
  std::replace(text.begin(), text.end(), '\t', ' ');
  return out + " " + text;
}

// ── instructions: stitched across segments ──

InsnStream::InsnStream(CpuTrace &t, uint64_t start, uint64_t end, std::optional<uint32_t> entity)
    : t_(t), start_(start), end_(end), entity_(entity) {
  size_t first = 0, last = 0;
  if (!t_.segments_for(start, end, &first, &last)) {
    seg_ = end_seg_ = 0;
    last_seg_ = 0;
    started_ = false;
    done_all_ = true;
    return;
  }
  // Go back to the segments holding the fetch of the instructions alive at
  // the window's start (the pieces of `first` that start before it).
  // Only those still alive at the window's start, and of the entity asked
  // for, need it.
  seg_ = first;
  end_seg_ = last;
  std::unordered_map<uint32_t, uint32_t> unresolved;  // slot -> entity id
  for (const InsnPiece &p : decode_for(first).pieces)
    if ((p.flags & InsnPiece::kStartsBefore) && p.last_cycle >= start && (!entity || *entity == p.entity_id))
      unresolved.emplace(p.slot, p.entity_id);
  size_t lo = first;
  while (!unresolved.empty() && lo > 0 && first - lo < kMaxFollow) {
    std::unordered_map<uint32_t, uint32_t> still;
    for (const InsnPiece &p : t_.decode(lo - 1).pieces) {
      if (!(p.flags & InsnPiece::kOpenAtEnd)) continue;
      auto it = unresolved.find(p.slot);
      if (it != unresolved.end() && it->second == p.entity_id && (p.flags & InsnPiece::kStartsBefore))
        still.emplace(p.slot, p.entity_id);
    }
    --lo;
    unresolved.swap(still);
  }
  seg_ = lo;
  end_seg_ = last;
  last_seg_ = t_.reader().segments().size();
  started_ = true;
}

Insn *InsnStream::take() {
  Insn *i;
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
  } else {
    pool_.push_back(std::make_unique<Insn>());
    i = pool_.back().get();
  }
  i->spans.clear();
  i->annotations.clear();
  i->deps.clear();
  i->done = false;
  return i;
}

bool InsnStream::wanted(const Insn &i) const {
  return i.head.first_cycle <= end_ && i.head.last_cycle >= start_ && (!entity_ || *entity_ == i.head.entity_id);
}

void InsnStream::finish(Insn *i) {
  // Still in flight where the query stopped following it: its open stage
  // runs to the last cycle seen.
  if (i->head.cur_stage >= 0) {
    i->spans.push_back({static_cast<uint32_t>(i->head.cur_stage), 0, i->head.cur_start, i->head.last_cycle});
    i->head.cur_stage = -1;
  }
  i->done = true;
  if (sink_) {
    if (wanted(*i)) sink_(sink_ctx_, View{i->head, i->spans.data(), i->spans.size()});
    free_.push_back(i);
  }
}

void InsnStream::add_piece(const SegmentDecode &d, const InsnPiece &p) {
  auto append = [&](Insn *i) {
    i->spans.insert(i->spans.end(), d.spans.begin() + p.span_begin, d.spans.begin() + p.span_begin + p.span_count);
    i->annotations.insert(i->annotations.end(), d.annotations.begin() + p.ann_begin,
                          d.annotations.begin() + p.ann_begin + p.ann_count);
    i->deps.insert(i->deps.end(), d.deps.begin() + p.dep_begin, d.deps.begin() + p.dep_begin + p.dep_count);
  };
  Insn *i = nullptr;
  if (p.flags & InsnPiece::kStartsBefore) {
    auto it = carried_.find(p.slot);
    if (it != carried_.end() && it->second->head.entity_id == p.entity_id) {
      i = it->second;
      carried_.erase(it);
      // Its open stage ran until this piece's first transition (or its end).
      if (i->head.cur_stage >= 0 && p.pre_end != UINT64_MAX) {
        i->spans.push_back({static_cast<uint32_t>(i->head.cur_stage), 0, i->head.cur_start, p.pre_end});
        i->head.cur_stage = -1;
      }
      append(i);
      InsnPiece &h = i->head;
      h.status = p.status;
      h.flush_reason = p.flush_reason;
      h.last_cycle = std::max(h.last_cycle, p.last_cycle);
      if (p.cur_stage >= 0) {
        h.cur_stage = p.cur_stage;
        h.cur_start = p.cur_start;
      }
      if (h.disasm_text == UINT32_MAX) h.disasm_text = p.disasm_text;
      if (!(h.flags & InsnPiece::kHasBits) && (p.flags & InsnPiece::kHasBits)) {
        h.inst_bits = p.inst_bits;
        h.flags |= InsnPiece::kHasBits;
      }
    }
  }
  if (!i) {
    // A piece that cannot be (part of) an instruction this stream returns
    // costs nothing more: most of a segment around a short window.
    const bool open = p.flags & InsnPiece::kOpenAtEnd;
    if ((entity_ && *entity_ != p.entity_id) || p.first_cycle > end_ || (!open && p.last_cycle < start_)) return;
    if (sink_ && !open && !(p.flags & InsnPiece::kStartsBefore)) {
      sink_(sink_ctx_, View{p, d.spans.data() + p.span_begin, p.span_count});
      return;
    }
    i = take();
    i->head = p;
    append(i);
    if (!sink_) queue_.push_back(i);
  }
  if (p.flags & InsnPiece::kOpenAtEnd) open_[p.slot] = i;
  else finish(i);
}

const SegmentDecode &InsnStream::decode_for(size_t i) {
  if (i < end_seg_) return t_.decode(i);
  const uint64_t from = std::max(end_, t_.segment_first_cycle(i));
  const uint64_t upto = from > UINT64_MAX - kTailCycles ? UINT64_MAX : from + kTailCycles;
  const SegmentDecode &d = t_.decode(i, upto);
  if (d.complete) return d;
  for (const InsnPiece &p : d.pieces)
    if ((p.flags & InsnPiece::kOpenAtEnd) && p.first_cycle <= end_ && (!entity_ || *entity_ == p.entity_id))
      return t_.decode(i);
  return d;
}

bool InsnStream::step() {
  if (done_all_) return false;
  const size_t n = t_.reader().segments().size();
  bool more = seg_ < n;
  if (more && seg_ > end_seg_) {
    // Past the window: follow only instructions fetched within it.
    bool need = false;
    for (const auto &o : open_)
      if (o.second->head.first_cycle <= end_ && (!entity_ || *entity_ == o.second->head.entity_id)) need = true;
    more = need && seg_ - end_seg_ <= kMaxFollow;
  }
  if (!more) {
    for (auto &o : open_) finish(o.second);
    open_.clear();
    done_all_ = true;
    return false;
  }
  const SegmentDecode &d = decode_for(seg_++);
  carried_.clear();
  carried_.swap(open_);
  if (d.ok && d.pieces.empty() && d.last_cycle == d.first_cycle && !carried_.empty()) {
    open_.swap(carried_);  // a segment with nothing in it: they go on
    return true;
  }
  for (const InsnPiece &p : d.pieces) add_piece(d, p);
  for (auto &c : carried_) finish(c.second);  // gone without a trace (a damaged segment)
  carried_.clear();
  for (const auto &s : d.stalls)
    if (s.cycle >= start_ && s.cycle <= end_) {
      if (stalls_.size() <= s.reason) stalls_.resize(s.reason + 1u);
      ++stalls_[s.reason];
    }
  return true;
}

const Insn *InsnStream::next() {
  if (current_) {
    free_.push_back(current_);
    current_ = nullptr;
  }
  if (!started_) return nullptr;
  for (;;) {
    while (!queue_.empty() && queue_.front()->done) {
      Insn *i = queue_.front();
      queue_.pop_front();
      if (wanted(*i)) {
        current_ = i;
        return i;
      }
      free_.push_back(i);
    }
    if (!step() && (queue_.empty() || !queue_.front()->done)) {
      if (queue_.empty()) return nullptr;
    }
  }
}

// ── analyze ──

void CpuTrace::states_at(const uint64_t *cycles, size_t n, std::vector<StorageState> *out) {
  // One pass forward through the segments from the first cycle's to the
  // last's: each state is taken when the replay reaches the first frame
  // after its cycle, so nothing is decompressed or applied twice (n calls of
  // state_at would each start again from a checkpoint).
  size_t k = 0;
  while (k < n) {
    size_t seg = 0, last = 0;
    if (!segments_for(cycles[k], UINT64_MAX, &seg, &last)) {
      // Past the end: the state at the end.
      const auto end = r_.state_at(UINT64_MAX);
      for (; k < n; ++k) out[k] = end;
      return;
    }
    if (segment_first_cycle(seg) > cycles[k]) {
      out[k] = state_at_cycle(cycles[k]);  // before that segment: a gap or the trace's start
      ++k;
      continue;
    }
    auto states = r_.initial_state();
    struct V {
      CpuTrace &t;
      std::vector<StorageState> &st;
      const uint64_t *cycles;
      size_t n;
      size_t &k;
      std::vector<StorageState> *out;
      void frame(uint64_t time) {
        const uint64_t cy = t.cycle_of(time);
        while (k < n && cycles[k] < cy) out[k++] = st;
        if (k == n) throw StopReplay{};
      }
      void op(uint64_t, const DeltaOp &) {}
      void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
    } v{*this, states, cycles, n, k, out};
    bool stopped = false;
    try {
      r_.replay(seg, states, v);
    } catch (const StopReplay &) {
      stopped = true;
    }
    if (stopped) return;
    // The segment ended first: what remains within it is its end state.
    while (k < n && cycles[k] <= segment_last_cycle(seg)) out[k++] = states;
  }
}

void CpuTrace::analyze(uint64_t start, uint64_t end, Report &out) {
  if (start >= end)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "analyze: start_cycle (%" PRIu64 ") must be less than end_cycle (%" PRIu64 ")",
         start, end);
  // A range past the trace's end is clamped to it (analysis.h), so that the
  // rates are per cycle of trace.
  if (!r_.segments().empty()) {
    const uint64_t last = max_cycle() + 1;
    if (start >= last)
      fail(USCOPE_ERR_INVALID_ARGUMENT, "analyze: start_cycle %" PRIu64 " is past the trace's end (cycle %" PRIu64 ")",
           start, last - 1);
    end = std::min(end, last);
  }
  out = Report{};
  uscope_perf_report_t &h = out.head;
  h.struct_size = sizeof h;
  h.start_cycle = start;
  h.end_cycle = end;
  h.range_cycles = end - start;

  // Counters from the states at start and end; buffers at start, mid and end:
  // taken by the instruction decodes below when they replay those cycles,
  // otherwise (segments already decoded) in one pass afterwards.
  const uint64_t at[3] = {start, start + (end - start) / 2, end};
  std::vector<StorageState> st[3];
  snapshots_.clear();
  for (int k = 0; k < 3; ++k) snapshots_.push_back({at[k], &st[k], false});
  struct Clear {
    std::vector<Snapshot> &v;
    ~Clear() { v.clear(); }
  } clear{snapshots_};
  std::vector<uint64_t> stage_total(stages_.size()), stage_count(stages_.size());
  InsnStream s(*this, start, end - 1, std::nullopt);
  s.scan([&](const InsnStream::View &i) {
    const InsnPiece &p = i.head;
    if (p.status == USCOPE_INSN_RETIRED && p.last_cycle >= start && p.last_cycle < end) ++h.retired_in_range;
    if (p.first_cycle < start || p.first_cycle >= end) return;
    ++h.total;
    if (p.status == USCOPE_INSN_RETIRED) ++h.retired;
    else if (p.status == USCOPE_INSN_FLUSHED) ++h.flushed;
    else ++h.in_flight;
    for (size_t k = 0; k < i.num_spans; ++k) {
      const auto &sp = i.spans[k];
      if (sp.stage >= stage_total.size()) {
        stage_total.resize(sp.stage + 1u);
        stage_count.resize(sp.stage + 1u);
      }
      stage_total[sp.stage] += sp.end_cycle - sp.start_cycle;
      ++stage_count[sp.stage];
    }
  });
  h.flush_rate = h.total ? static_cast<double>(h.flushed) / static_cast<double>(h.total) : 0.0;
  h.ipc = static_cast<double>(h.retired) / static_cast<double>(h.range_cycles);
  h.commit_ipc = static_cast<double>(h.retired_in_range) / static_cast<double>(h.range_cycles);
  for (size_t k = 0; k < stage_total.size(); ++k) {
    if (!stage_count[k]) continue;
    out.stages.push_back({static_cast<uint32_t>(k), 0, stage_total[k], stage_count[k],
                          static_cast<double>(stage_total[k]) / static_cast<double>(stage_count[k])});
  }
  std::stable_sort(out.stages.begin(), out.stages.end(),
                   [](const auto &a, const auto &b) { return a.avg_latency > b.avg_latency; });
  const auto &stalls = s.stalls();
  const Schema &sc = r_.schema();
  for (size_t k = 0; k < stalls.size(); ++k) {
    if (!stalls[k]) continue;
    const char *name = "";
    if (ids_.stall_enum < sc.enums.size())
      for (const EnumValue &v : sc.enums[ids_.stall_enum].values)
        if (v.value == k) name = sc.name(v.name);
    out.stalls.push_back({static_cast<uint32_t>(k), 0, name, stalls[k]});
  }
  std::stable_sort(out.stalls.begin(), out.stalls.end(), [](const auto &a, const auto &b) { return a.count > b.count; });

  {
    uint64_t rest[3];
    std::vector<StorageState> got[3];
    size_t n = 0;
    for (const auto &w : snapshots_)
      if (!w.taken) rest[n++] = w.cycle;
    snapshots_.clear();
    states_at(rest, n, got);
    for (int k = 0, j = 0; k < 3; ++k)
      if (st[k].empty()) st[k] = std::move(got[j++]);
  }
  for (size_t c = 0; c < counters_.size(); ++c) {
    const uint64_t a = st[0][counters_[c].storage_id].get(0, 0), b = st[2][counters_[c].storage_id].get(0, 0);
    out.counters.push_back({static_cast<uint32_t>(c), 0, a, b, b - a,
                            static_cast<double>(b - a) / static_cast<double>(h.range_cycles)});
  }
  for (size_t b = 0; b < buffers_.size(); ++b) {
    uscope_buffer_snapshot_t snap{};
    snap.buffer = static_cast<uint32_t>(b);
    const StorageState &s0 = st[0][buffers_[b].storage_id];
    snap.capacity = s0.layout().num_slots;
    for (int k = 0; k < 3; ++k) {
      snap.cycle[k] = at[k];
      snap.occupied[k] = st[k][buffers_[b].storage_id].occupancy();
      snap.fill_percent[k] = snap.capacity ? 100.0 * snap.occupied[k] / snap.capacity : 0.0;
    }
    out.buffers.push_back(snap);
  }
  h.num_counters = static_cast<uint32_t>(out.counters.size());
  h.num_buffers = static_cast<uint32_t>(out.buffers.size());
  h.num_stages = static_cast<uint32_t>(out.stages.size());
  h.num_stalls = static_cast<uint32_t>(out.stalls.size());
  h.counters = out.counters.data();
  h.buffers = out.buffers.data();
  h.stages = out.stages.data();
  h.stalls = out.stalls.data();
}

}  // namespace uscope::analysis

namespace uscope::analysis {

void CpuTrace::buffers_at(uint64_t cycle, BufferSnapshot &out) {
  out = BufferSnapshot{};
  const Schema &s = r_.schema();
  const auto st = state_at_cycle(cycle);
  const StorageDef *ent = nullptr;
  for (const StorageDef &d : s.storages)
    if (d.storage_id == ids_.entities) ent = &d;
  std::vector<uint16_t> shown;  // catalog fields after entity_id and pc
  if (ent)
    for (size_t f = 0; f < ent->fields.size(); ++f)
      if (f != ids_.f_entity_id && f != ids_.f_pc) {
        shown.push_back(static_cast<uint16_t>(f));
        out.entity_field_names.emplace_back(s.name(ent->fields[f].name));
      }
  for (const auto &n : out.entity_field_names) out.entity_field_ptrs.push_back(n.c_str());
  // entity id -> catalog slot, for the slots whose field 0 names an entity.
  std::unordered_map<uint64_t, uint16_t> slot_of;
  const StorageState &es = st[ids_.entities];
  for (uint16_t k = 0; k < ids_.num_slots; ++k)
    if (es.valid(k)) slot_of.emplace(es.get(k, ids_.f_entity_id), k);

  for (const Buffer &b : buffers_) {
    const StorageDef *def = nullptr;
    for (const StorageDef &d : s.storages)
      if (d.storage_id == b.storage_id) def = &d;
    const StorageState &bs = st[b.storage_id];
    BufferSnapshot::Buffer ob;
    ob.capacity = bs.layout().num_slots;
    const auto nf = static_cast<uint16_t>(def->fields.size());
    for (uint16_t k = 0; k < ob.capacity; ++k) {
      if (!bs.valid(k)) continue;
      BufferSnapshot::Slot sl;
      sl.slot = k;
      for (uint16_t f = 0; f < nf; ++f) sl.fields.push_back(bs.get(k, f));
      if (nf) {
        auto it = slot_of.find(sl.fields[0]);
        if (it != slot_of.end()) {
          sl.has_entity = true;
          for (uint16_t f : shown) sl.entity_fields.push_back(es.get(it->second, f));
        }
      }
      ob.slots.push_back(std::move(sl));
    }
    for (size_t p = 0; p < def->props.size(); ++p)
      ob.props.push_back({s.name(def->props[p].name), bs.prop(static_cast<uint16_t>(p)), def->props[p].role,
                          def->props[p].pair_id, 0});
    // Head and tail pointers with the same pair_id form a pair (§4.6.2).
    for (size_t hp = 0; hp < ob.props.size(); ++hp) {
      if (ob.props[hp].role != USCOPE_ROLE_HEAD_PTR) continue;
      for (size_t tp = 0; tp < ob.props.size(); ++tp) {
        if (ob.props[tp].role != USCOPE_ROLE_TAIL_PTR || ob.props[tp].pair_id != ob.props[hp].pair_id) continue;
        uscope_pointer_pair_t pr{};
        pr.pair_id = ob.props[hp].pair_id;
        pr.head_property = static_cast<uint32_t>(hp);
        pr.tail_property = static_cast<uint32_t>(tp);
        pr.head = ob.props[hp].value;
        pr.tail = ob.props[tp].value;
        pr.distance = ob.capacity ? (pr.tail % ob.capacity + ob.capacity - pr.head % ob.capacity) % ob.capacity : 0;
        ob.pairs.push_back(pr);
        break;
      }
    }
    out.buffers.push_back(std::move(ob));
  }
}

}  // namespace uscope::analysis
