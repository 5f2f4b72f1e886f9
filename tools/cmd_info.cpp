// uscope info FILE [--json] [--strict]: a file's overview: format version,
// time, segments and their sizes, DUT properties, clocks, scopes, storages
// and event types with their fields, enums, and what the cpu analysis sees
// (pipeline stages, counters, buffers, the reference's metadata list). A
// pccx-lab .pccx container, known by its magic, gets its own overview
// (cmd_pccx_info.cpp).
//
// JSON: our keys, then the reference uscope-cli's (version, segment_count,
// total_instructions, max_cycle, period_ps, metadata [[key, value], ...],
// stage_names, counter_names, buffer_names, schema{storages[{name,
// storage_id, num_slots, fields[{name, field_type}], properties, flags}],
// events[{name, event_type_id, fields}], enums[{name, values[{value,
// name}]}]}), then counters, buffers and stages: the same names again, under
// the keys of the spec's `jq '.counters'` and issue 13. Where the two
// overlap, one key serves both: "version" ("0.3") is the same text in both;
// "segments" stays our number of segments (the reference CLI has no such
// key; its segment_count is the same number); our top-level "storages" and
// "events" (counts of fields) are not the reference's, which sit under
// "schema". A trace without a cpu scope gets stage_names [], its counters
// and buffers from the schema (1-slot storages of one u64 "count"; storages
// flagged as buffers), max_cycle and period_ps from clock 0, and the DUT
// properties as metadata.
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "analysis_json.hpp"
#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

// What info adds from the cpu analysis (or, without a cpu scope, the schema).
struct CpuView {
  uint64_t total_instructions = 0, max_cycle = 0, period_ps = 1000;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<std::string> stages, counters, buffers;
};

bool is_counter(const Trace &t, uint16_t sid) {
  const auto s = t.storage(sid);
  if (s.num_slots != 1 || s.num_fields != 1 || (s.flags & USCOPE_SF_SPARSE)) return false;
  const auto f = t.field(sid, 0, false);
  return f.type == USCOPE_FT_U64 && std::strcmp(f.name, "count") == 0;
}

CpuView cpu_view(const Trace &t, const std::string &path) {
  CpuView v;
  if (const auto cpu = optional_cpu(t, path)) {
    const CpuTrace &c = *cpu;
    v.total_instructions = c.info().total_instructions;
    v.max_cycle = c.info().max_cycle;
    v.period_ps = c.info().period_ps;
    v.metadata = c.metadata();
    v.stages = c.stage_names();
    for (const auto &k : c.counters()) v.counters.emplace_back(k.name);
    for (const auto &b : c.buffers()) v.buffers.emplace_back(b.name);
    return v;
  }
  const auto c = t.counts();
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  if (uscope_reader_summary(t.r(), &sum) == USCOPE_OK && sum.present) v.total_instructions = sum.total_instructions;
  if (c.clocks) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), &ck, 0), "clock");
    if (ck.period_ps) v.period_ps = cycle_period(t, ck.period_ps);
  }
  v.max_cycle = trace_end(t) / v.period_ps;
  for (uint32_t d = 0; d < uscope_reader_dut_count(t.r()); ++d) {
    const char *k, *val;
    check(uscope_reader_dut_property(t.r(), &k, &val, d), "dut");
    v.metadata.emplace_back(k, val);
  }
  for (uint32_t k = 0; k < c.storages; ++k) {
    const auto s = t.storage(static_cast<uint16_t>(k));
    if (is_counter(t, static_cast<uint16_t>(k))) v.counters.emplace_back(s.name);
    if (s.flags & USCOPE_SF_BUFFER) v.buffers.emplace_back(s.name);
  }
  return v;
}

void names_json(Json &j, const char *key, const std::vector<std::string> &names) {
  j.key(key);
  j.begin_array();
  for (const auto &n : names) j.str(n.c_str());
  j.end_array();
}

std::string joined(const std::vector<std::string> &v, const char *sep) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

void cmd_info(const Trace &t, const std::string &path, bool json) {
  const auto i = t.info();
  const auto c = t.counts();
  uint64_t raw = 0, compressed = 0;
  for (uint32_t s = 0; s < i.num_segments; ++s) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), &seg, s), "segment");
    raw += seg.deltas_raw_size;
    compressed += seg.deltas_compressed_size;
  }
  const char *comp = uscope_compression_name(i.compression);
  if (!comp) comp = "unknown";  // a newer library than this program
  if (json) {
    Json j;
    j.begin_object();
    j.key("version");
    j.str((std::to_string(i.version_major) + "." + std::to_string(i.version_minor)).c_str());
    j.field("flags", i.flags);
    j.field("complete", i.complete != 0);
    j.field("frames", i.interleaved ? "v0.2" : "v0.1");
    j.field("compression", comp);
    j.field("total_time_ps", i.total_time_ps);
    j.field("last_time_ps", i.last_time_ps);
    j.field("segments", i.num_segments);
    j.field("checkpoint_interval_ps", i.checkpoint_interval_ps);
    j.field("file_bytes", i.file_bytes);
    j.field("deltas_raw_bytes", raw);
    j.field("deltas_compressed_bytes", compressed);
    j.key("dut");
    j.begin_object();
    for (uint32_t d = 0; d < uscope_reader_dut_count(t.r()); ++d) {
      const char *k, *v;
      check(uscope_reader_dut_property(t.r(), &k, &v, d), "dut");
      j.field(k, v);
    }
    j.end_object();
    j.key("clocks");
    clocks_json(j, t);
    j.key("scopes");
    j.begin_array();
    for (uint32_t k = 0; k < c.scopes; ++k) {
      uscope_scope_info_t sc{};
      check(uscope_reader_scope(t.r(), &sc, k), "scope");
      j.begin_object();
      j.field("name", sc.name);
      j.field("protocol", sc.protocol);
      j.field("parent", sc.parent_id);
      j.field("clock", sc.clock_id);
      j.end_object();
    }
    j.end_array();
    j.key("storages");
    j.begin_array();
    for (uint32_t k = 0; k < c.storages; ++k) {
      const auto s = t.storage(static_cast<uint16_t>(k));
      j.begin_object();
      j.field("name", s.name);
      j.field("slots", s.num_slots);
      j.field("sparse", (s.flags & USCOPE_SF_SPARSE) != 0);
      j.field("buffer", (s.flags & USCOPE_SF_BUFFER) != 0);
      j.field("fields", s.num_fields);
      j.field("properties", s.num_properties);
      j.end_object();
    }
    j.end_array();
    j.key("events");
    j.begin_array();
    for (uint32_t k = 0; k < c.event_types; ++k) {
      const auto e = t.event_type(static_cast<uint16_t>(k));
      j.begin_object();
      j.field("name", e.name);
      j.field("fields", e.num_fields);
      j.field("payload_size", e.payload_size);
      j.end_object();
    }
    j.end_array();
    const CpuView v = cpu_view(t, path);
    j.field("segment_count", i.num_segments);
    j.field("total_instructions", v.total_instructions);
    j.field("max_cycle", v.max_cycle);
    j.field("period_ps", v.period_ps);
    j.key("metadata");
    j.begin_array();
    for (const auto &[k, val] : v.metadata) {
      j.begin_array();
      j.str(k.c_str());
      j.str(val.c_str());
      j.end_array();
    }
    j.end_array();
    names_json(j, "stage_names", v.stages);
    names_json(j, "counter_names", v.counters);
    names_json(j, "buffer_names", v.buffers);
    schema_json(j, t, "field_type", true);
    names_json(j, "counters", v.counters);
    names_json(j, "buffers", v.buffers);
    names_json(j, "stages", v.stages);
    j.end_object();
    j.end();
    return;
  }
  std::printf("format      µScope %u.%u, %s, %s frames, %s\n", i.version_major, i.version_minor,
              i.complete ? "complete" : "live (not finalized)", i.interleaved ? "v0.2" : "v0.1", comp);
  std::printf("time        %" PRIu64 " ps (last segment ends at %" PRIu64 " ps)\n", i.total_time_ps, i.last_time_ps);
  std::printf("segments    %u, checkpoint every %" PRIu64 " ps\n", i.num_segments, i.checkpoint_interval_ps);
  std::printf("size        %" PRIu64 " bytes; deltas %" PRIu64 " raw -> %" PRIu64 " stored (%.2fx)\n", i.file_bytes,
              raw, compressed, compressed ? static_cast<double>(raw) / static_cast<double>(compressed) : 1.0);
  for (uint32_t d = 0; d < uscope_reader_dut_count(t.r()); ++d) {
    const char *k, *v;
    check(uscope_reader_dut_property(t.r(), &k, &v, d), "dut");
    std::printf("dut         %s = %s\n", k, v);
  }
  for (uint32_t k = 0; k < c.clocks; ++k) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), &ck, k), "clock");
    std::printf("clock %-5u %s, %u ps\n", k, ck.name, ck.period_ps);
  }
  for (uint32_t k = 0; k < c.scopes; ++k) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), &sc, k), "scope");
    std::printf("scope %-5u %s%s%s\n", k, sc.name, sc.protocol ? " protocol=" : "", sc.protocol ? sc.protocol : "");
  }
  for (uint32_t k = 0; k < c.storages; ++k) {
    const auto s = t.storage(static_cast<uint16_t>(k));
    std::printf("storage %-3u %s: %u %s slots, %u fields, %u properties%s\n", k, s.name, s.num_slots,
                (s.flags & USCOPE_SF_SPARSE) ? "sparse" : "dense", s.num_fields, s.num_properties,
                (s.flags & USCOPE_SF_BUFFER) ? ", buffer" : "");
    for (uint16_t f = 0; f < s.num_fields; ++f) {
      const auto fi = t.field(static_cast<uint16_t>(k), f, false);
      std::printf("              .%-20s %s\n", fi.name, field_type_name(fi.type).c_str());
    }
    for (uint16_t f = 0; f < s.num_properties; ++f) {
      const auto fi = t.field(static_cast<uint16_t>(k), f, true);
      std::printf("              @%-20s %s%s%s\n", fi.name, field_type_name(fi.type).c_str(), fi.role ? " " : "",
                  fi.role ? role_name(fi.role) : "");
    }
  }
  for (uint32_t k = 0; k < c.event_types; ++k) {
    const auto e = t.event_type(static_cast<uint16_t>(k));
    std::printf("event %-5u %s: %u fields, %u bytes\n", k, e.name, e.num_fields, e.payload_size);
    for (uint16_t f = 0; f < e.num_fields; ++f) {
      const auto fi = t.event_field(static_cast<uint16_t>(k), f);
      std::printf("              .%-20s %s\n", fi.name, field_type_name(fi.type).c_str());
    }
  }
  for (uint32_t k = 0; k < c.enums; ++k) {
    const char *name = nullptr;
    uint32_t n = 0;
    check(uscope_reader_enum(t.r(), &name, &n, k), "enum");
    std::printf("enum %-6u %s:", k, name ? name : "");
    for (uint32_t v = 0; v < n; ++v) {
      const char *value = t.enum_value(static_cast<uint8_t>(k), v);
      std::printf(" %u=%s", v, value ? value : "?");
    }
    std::printf("\n");
  }
  const CpuView v = cpu_view(t, path);
  std::printf("cycles      %" PRIu64 " (last cycle) of %" PRIu64 " ps; %" PRIu64 " instructions (summary)\n",
              v.max_cycle, v.period_ps, v.total_instructions);
  if (!v.stages.empty()) std::printf("stages      %s\n", joined(v.stages, " -> ").c_str());
  std::printf("counters    %s\n", v.counters.empty() ? "(none)" : joined(v.counters, ", ").c_str());
  std::printf("buffers     %s\n", v.buffers.empty() ? "(none)" : joined(v.buffers, ", ").c_str());
}

class Info final : public TraceCommand {
 public:
  Info()
      : TraceCommand("info", "file overview: format, time, segments, schema, DUT",
                     "trace file (.uscope, or a .pccx container)") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_flag("--json", json_, "JSON output");
    sub.footer(
        "JSON: our keys (version, segments, dut, clocks, scopes, storages, events, ...) and the reference\n"
        "uscope-cli's (segment_count, total_instructions, max_cycle, period_ps, metadata, stage_names,\n"
        "counter_names, buffer_names, schema{storages, events, enums}), plus counters, buffers, stages.\n"
        "Example: uscope info trace.uscope --json | jq -r '.counters[]'");
  }
  bool before_open() override {
    if (!is_pccx_file(file())) return false;  // by magic
    cmd_pccx_info(file(), json_);
    return true;
  }
  void read(const Trace &t) override { cmd_info(t, file(), json_); }
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> info_command() { return std::make_unique<Info>(); }

}  // namespace uscope_cli
