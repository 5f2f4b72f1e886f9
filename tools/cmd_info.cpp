// uscope info FILE [--json] [--strict]: a file's overview: format version,
// time, segments and their sizes, DUT properties, clocks, scopes, storages
// and event types. A pccx-lab .pccx container, known by its magic, gets its
// own overview (cmd_pccx_info.cpp).
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {
namespace {

void cmd_info(const Trace &t, bool json) {
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
    j.begin_array();
    for (uint32_t k = 0; k < c.clocks; ++k) {
      uscope_clock_info_t ck{};
      check(uscope_reader_clock(t.r(), &ck, k), "clock");
      j.begin_object();
      j.field("name", ck.name);
      j.field("period_ps", ck.period_ps);
      j.end_object();
    }
    j.end_array();
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
    std::printf("storage %-3u %s: %u %s slots, %u fields, %u properties\n", k, s.name, s.num_slots,
                (s.flags & USCOPE_SF_SPARSE) ? "sparse" : "dense", s.num_fields, s.num_properties);
  }
  for (uint32_t k = 0; k < c.event_types; ++k) {
    const auto e = t.event_type(static_cast<uint16_t>(k));
    std::printf("event %-5u %s: %u fields, %u bytes\n", k, e.name, e.num_fields, e.payload_size);
  }
}

class Info final : public TraceCommand {
 public:
  Info()
      : TraceCommand("info", "file overview: format, time, segments, schema, DUT",
                     "trace file (.uscope, or a .pccx container)") {}

 private:
  void add_trace_options(CLI::App &sub) override { sub.add_flag("--json", json_, "JSON output"); }
  bool before_open() override {
    if (!is_pccx_file(file())) return false;  // by magic
    cmd_pccx_info(file(), json_);
    return true;
  }
  void read(const Trace &t) override { cmd_info(t, json_); }
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> info_command() { return std::make_unique<Info>(); }

}  // namespace uscope_cli
