// The helpers of cli_cpu.hpp.
#include "cli_cpu.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace uscope_cli {

CpuTrace::CpuTrace(const Trace &t, const std::string &elf) {
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  o.elf_path = elf.empty() ? nullptr : elf.c_str();
  const uscope_status_t s = uscope_cpu_trace_open(&h_, t.r(), &o);
  // "this trace has no cpu protocol scope": said as it is, the file named by the caller.
  if (s == USCOPE_ERR_NOT_FOUND) throw Failure(uscope_last_error());
  check(s, "cpu analysis");
  info_.struct_size = sizeof info_;
  const uscope_status_t i = uscope_cpu_trace_info(h_, &info_);
  if (i < 0) {
    uscope_cpu_trace_close(h_);
    h_ = nullptr;
    check(i, "cpu info");
  }
}

std::string CpuTrace::stage(uint32_t index) const {
  const char *name = nullptr;
  if (uscope_cpu_trace_stage(h_, &name, index) == USCOPE_OK && name) return name;
  return "stage_" + std::to_string(index);
}

std::vector<std::string> CpuTrace::stage_names() const {
  std::vector<std::string> v;
  for (uint32_t i = 0; i < info_.num_stages; ++i) v.push_back(stage(i));
  return v;
}

std::vector<uscope_counter_info_t> CpuTrace::counters() const {
  std::vector<uscope_counter_info_t> v(info_.num_counters);
  for (uint32_t i = 0; i < info_.num_counters; ++i) check(uscope_cpu_trace_counter(h_, &v[i], i), "counter");
  return v;
}

std::vector<uscope_buffer_info_t> CpuTrace::buffers() const {
  std::vector<uscope_buffer_info_t> v(info_.num_buffers);
  for (uint32_t i = 0; i < info_.num_buffers; ++i) check(uscope_cpu_trace_buffer(h_, &v[i], i), "buffer");
  return v;
}

std::vector<std::pair<std::string, std::string>> CpuTrace::metadata() const {
  std::vector<std::pair<std::string, std::string>> v;
  for (uint32_t i = 0; i < info_.num_metadata; ++i) {
    const char *k = nullptr, *val = nullptr;
    check(uscope_cpu_trace_metadata(h_, &k, &val, i), "metadata");
    v.emplace_back(k ? k : "", val ? val : "");
  }
  return v;
}

bool has_cpu_scope(const Trace &t) { return has_protocol(t, "cpu"); }

std::unique_ptr<CpuTrace> optional_cpu(const Trace &t, const std::string &path) {
  if (!has_cpu_scope(t)) return nullptr;
  try {
    return std::make_unique<CpuTrace>(t);
  } catch (const Failure &e) {
    std::fprintf(stderr, "uscope: warning: %s: its cpu scope cannot be analyzed (%s); using the schema alone\n",
                 path.c_str(), e.what());
    return nullptr;
  }
}

CycleRange parse_range(const std::string &text, const std::string &option) {
  const size_t colon = text.find(':');
  CycleRange r;
  const auto bad = [&](const std::string &what) {
    return Usage(option + " " + text + ": expected START:END, two whole numbers of cycles (" + what + ")");
  };
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) throw bad("one ':' between them");
  std::string why = parse_number(text.substr(0, colon), UINT64_MAX, &r.start);
  if (!why.empty()) throw bad("START: " + why);
  why = parse_number(text.substr(colon + 1), UINT64_MAX, &r.end);
  if (!why.empty()) throw bad("END: " + why);
  if (r.start > r.end) throw bad("START after END");
  return r;
}

uint64_t clamp_cycle(uint64_t cycle, uint64_t max_cycle, const std::string &what) {
  if (cycle <= max_cycle) return cycle;
  std::fprintf(stderr, "uscope: warning: %s is past the end of the trace (last cycle %" PRIu64 "); showing cycle %"
               PRIu64 "\n", what.c_str(), max_cycle, max_cycle);
  return max_cycle;
}

CycleRange clamp_range(CycleRange r, uint64_t max_cycle, const std::string &what) {
  if (r.end <= max_cycle) return r;
  const CycleRange c{r.start <= max_cycle ? r.start : max_cycle, max_cycle};
  std::fprintf(stderr, "uscope: warning: %s reaches past the end of the trace (last cycle %" PRIu64 "); showing %"
               PRIu64 ":%" PRIu64 "\n", what.c_str(), max_cycle, c.start, c.end);
  return c;
}

const char *retire_status_name(uint32_t status) {
  switch (status) {
    case USCOPE_INSN_RETIRED: return "retired";
    case USCOPE_INSN_FLUSHED: return "flushed";
    default: return "in_flight";
  }
}

const char *role_name(uint8_t role) {
  switch (role) {
    case USCOPE_ROLE_HEAD_PTR: return "HEAD_PTR";
    case USCOPE_ROLE_TAIL_PTR: return "TAIL_PTR";
    default: return "plain";
  }
}

std::string field_type_name(uint8_t type) {
  static const char *const names[] = {"u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bool", "string_ref", "enum"};
  if (type >= USCOPE_FT_U8 && type <= USCOPE_FT_ENUM) return names[type - USCOPE_FT_U8];
  char b[24];
  std::snprintf(b, sizeof b, "unknown(0x%02x)", type);
  return b;
}

std::vector<uint32_t> match_names(const std::vector<std::string> &names, const std::string &filter, const char *kind) {
  std::vector<uint32_t> exact, part;
  for (uint32_t i = 0; i < names.size(); ++i) {
    if (names[i] == filter) exact.push_back(i);
    else if (names[i].find(filter) != std::string::npos) part.push_back(i);
  }
  if (!exact.empty()) return exact;
  if (!part.empty()) return part;
  std::string known;
  for (const auto &n : names) known += (known.empty() ? "" : ", ") + n;
  throw Failure(std::string("no ") + kind + " named or containing '" + filter + "'; the trace's " + kind + "s: " +
                (known.empty() ? "none" : known));
}

namespace {

struct Slots {
  std::vector<uscope_buffer_slot_t> slots;
  std::vector<uscope_buffer_property_t> props;
  std::vector<uscope_pointer_pair_t> pairs;
  uscope_buffer_fill_t fill{};
};

Slots read_buffer(const BufferState &st, uint32_t index) {
  Slots s;
  check(uscope_buffer_state_fill(st.s, &s.fill, index), "buffer fill");
  s.slots.resize(s.fill.occupied);
  for (uint32_t i = 0; i < s.fill.occupied; ++i) check(uscope_buffer_state_slot(st.s, &s.slots[i], index, i), "slot");
  s.props.resize(s.fill.num_properties);
  for (uint32_t i = 0; i < s.fill.num_properties; ++i)
    check(uscope_buffer_state_property(st.s, &s.props[i], index, i), "property");
  s.pairs.resize(s.fill.num_pairs);
  for (uint32_t i = 0; i < s.fill.num_pairs; ++i) check(uscope_buffer_state_pair(st.s, &s.pairs[i], index, i), "pair");
  return s;
}

}  // namespace

void buffer_json(Json &j, const Trace &t, const BufferState &st, const uscope_buffer_info_t &b, uint32_t index) {
  const Slots s = read_buffer(st, index);
  j.begin_object();
  j.field("name", b.name);
  j.field("capacity", s.fill.capacity);
  j.field("occupied", s.fill.occupied);
  j.field("fill_percent", s.fill.fill_percent);
  j.key("slots");
  j.begin_array();
  for (const auto &sl : s.slots) {
    j.begin_object();
    j.field("slot", sl.slot);
    j.key("fields");
    j.begin_array();
    for (uint32_t f = 0; f < sl.num_fields; ++f) j.num(sl.fields[f]);
    j.end_array();
    // The reference's [name, value] pairs (serde's tuples).
    j.key("entity_fields");
    j.begin_array();
    for (uint32_t f = 0; sl.has_entity && f < sl.num_entity_fields; ++f) {
      j.begin_array();
      j.str(sl.entity_field_names[f]);
      j.num(sl.entity_fields[f]);
      j.end_array();
    }
    j.end_array();
    j.key("named_fields");
    j.begin_object();
    for (uint32_t f = 0; f < sl.num_fields && f < b.num_fields; ++f) {
      const auto fi = t.field(b.storage_id, static_cast<uint16_t>(f), false);
      j.key(fi.name);
      json_value(j, t, fi, sl.fields[f]);
    }
    j.end_object();
    j.end_object();
  }
  j.end_array();
  j.key("properties");
  j.begin_array();
  for (const auto &p : s.props) {
    j.begin_object();
    j.field("name", p.name);
    j.field("value", p.value);
    j.field("role", role_name(p.role));
    j.field("pair_id", p.pair_id);
    j.end_object();
  }
  j.end_array();
  j.key("pairs");
  j.begin_array();
  for (const auto &p : s.pairs) {
    j.begin_object();
    j.field("pair_id", p.pair_id);
    j.field("head_name", s.props.at(p.head_property).name);
    j.field("tail_name", s.props.at(p.tail_property).name);
    j.field("head", p.head);
    j.field("tail", p.tail);
    j.field("distance", p.distance);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void buffer_text(const Trace &t, const BufferState &st, const uscope_buffer_info_t &b, uint32_t index) {
  const Slots s = read_buffer(st, index);
  std::printf("--- %s (capacity=%u, occupied=%u, fill=%.1f%%) ---\n", b.name, s.fill.capacity, s.fill.occupied,
              s.fill.fill_percent);
  for (const auto &p : s.props)
    std::printf("  @%s: %" PRIu64 "%s%s%s\n", p.name, p.value, p.role ? " (" : "", p.role ? role_name(p.role) : "",
                p.role ? ")" : "");
  for (const auto &p : s.pairs)
    std::printf("  pair %u: head %s=%" PRIu64 ", tail %s=%" PRIu64 ", %" PRIu64 " slots apart\n", p.pair_id,
                s.props.at(p.head_property).name, p.head, s.props.at(p.tail_property).name, p.tail, p.distance);
  if (s.slots.empty()) std::printf("  (empty)\n");
  for (const auto &sl : s.slots) {
    std::printf("  slot %3u:", sl.slot);
    for (uint32_t f = 0; f < sl.num_fields && f < b.num_fields; ++f) {
      const auto fi = t.field(b.storage_id, static_cast<uint16_t>(f), false);
      std::printf(" %s=%s", fi.name, text_value(t, fi, sl.fields[f]).c_str());
    }
    for (uint32_t f = 0; sl.has_entity && f < sl.num_entity_fields; ++f)
      std::printf("%s%s=%" PRIu64, f ? " " : "  | ", sl.entity_field_names[f], sl.entity_fields[f]);
    std::printf("\n");
  }
}

}  // namespace uscope_cli
