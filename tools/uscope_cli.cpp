// uscope: inspect µScope traces from the command line. Built only on the
// public C API of libuscope, like any user's tool.
//
//   uscope info   FILE [--json]
//   uscope dump   FILE --json
//   uscope state  FILE (--time PS | --cycle N) [--json]   (past the end: the end, with a warning)
//   uscope events FILE --from PS --to PS [--json]       (from <= to; clipped to the end, with a warning)
//   uscope summary FILE [--json]     (cpu / npu / noc scopes; cmd_summary.cpp)
//   uscope convert IN -o OUT [--strict]   (NPU JSONL <-> .uscope / .pccx; cmd_convert.cpp)
//   uscope npu-report FILE [--json]  (NPU metrics of .jsonl / .uscope / .pccx; cmd_npu_report.cpp)
//   uscope check FILE [--json] [--strict]   (validate a trace; cmd_check.cpp)
//
// Tolerant reading: what a trace holds that does not fit its schema (ops on
// slots past a storage's size, segments that no longer decode, ...) is
// skipped by the library and counted; each command that read such a file
// prints one warning line per kind on stderr after its (whole) output and
// exits 0. --strict validates the whole file first and fails on the first
// defect, before printing anything.
//
// Output is deterministic. Errors go to stderr with exit code 1 (2 for usage:
// every numeric option is a plain decimal number, parse_number in
// cli_common.hpp). uscope --version; uscope <command> --help.
#include <CLI/CLI.hpp>
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "cli_main.hpp"
#include "cmd_convert.hpp"

namespace uscope_cli {
// A field value as JSON: signed types sign-extended, enums with their name.
void json_value(Json &j, const Trace &t, const uscope_field_info_t &f, uint64_t raw) {
  if (is_signed(f.type)) j.snum(sign_extend(raw, f.size));
  else j.num(raw);
}
std::string text_value(const Trace &t, const uscope_field_info_t &f, uint64_t raw) {
  char b[64];
  if (is_signed(f.type)) std::snprintf(b, sizeof b, "%" PRId64, sign_extend(raw, f.size));
  else if (f.type == USCOPE_FT_U64 || f.type == USCOPE_FT_U32) std::snprintf(b, sizeof b, "0x%" PRIx64, raw);
  else std::snprintf(b, sizeof b, "%" PRIu64, raw);
  std::string s = b;
  if (f.type == USCOPE_FT_ENUM)
    if (const char *n = t.enum_value(f.enum_id, raw)) s += std::string("(") + n + ")";
  return s;
}

// ── info ──

void cmd_info(const Trace &t, bool json) {
  const auto i = t.info();
  const auto c = t.counts();
  uint64_t raw = 0, compressed = 0;
  for (uint32_t s = 0; s < i.num_segments; ++s) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), s, &seg), "segment");
    raw += seg.deltas_raw_size;
    compressed += seg.deltas_compressed_size;
  }
  const char *comp = i.compression == USCOPE_COMPRESSION_LZ4 ? "lz4" : i.compression == USCOPE_COMPRESSION_ZSTD ? "zstd" : "none";
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
      check(uscope_reader_dut_property(t.r(), d, &k, &v), "dut");
      j.field(k, v);
    }
    j.end_object();
    j.key("clocks");
    j.begin_array();
    for (uint32_t k = 0; k < c.clocks; ++k) {
      uscope_clock_info_t ck{};
      check(uscope_reader_clock(t.r(), k, &ck), "clock");
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
      check(uscope_reader_scope(t.r(), k, &sc), "scope");
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
    check(uscope_reader_dut_property(t.r(), d, &k, &v), "dut");
    std::printf("dut         %s = %s\n", k, v);
  }
  for (uint32_t k = 0; k < c.clocks; ++k) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), k, &ck), "clock");
    std::printf("clock %-5u %s, %u ps\n", k, ck.name, ck.period_ps);
  }
  for (uint32_t k = 0; k < c.scopes; ++k) {
    uscope_scope_info_t sc{};
    check(uscope_reader_scope(t.r(), k, &sc), "scope");
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

// ── state ──

void cmd_state(const Trace &t, uint64_t time_ps, bool json) {
  uscope_state_t *st = nullptr;
  check(uscope_reader_state_at(t.r(), time_ps, &st), "state_at");
  struct Free {
    uscope_state_t *s;
    ~Free() { uscope_state_free(s); }
  } guard{st};
  const auto c = t.counts();
  Json j;
  if (json) {
    j.begin_object();
    j.field("time_ps", time_ps);
    j.key("storages");
    j.begin_array();
  } else {
    std::printf("state at %" PRIu64 " ps\n", time_ps);
  }
  for (uint16_t sid = 0; sid < c.storages; ++sid) {
    const auto s = t.storage(sid);
    uint32_t occ = 0;
    check(uscope_state_occupancy(st, sid, &occ), "occupancy");
    if (json) {
      j.begin_object();
      j.field("name", s.name);
      j.field("valid", occ);
      j.key("properties");
      j.begin_object();
    } else {
      std::printf("%s (%u/%u valid)\n", s.name, occ, s.num_slots);
    }
    for (uint16_t p = 0; p < s.num_properties; ++p) {
      const auto f = t.field(sid, p, true);
      uint64_t v = 0;
      check(uscope_state_property(st, sid, p, &v), "property");
      if (json) {
        j.key(f.name);
        json_value(j, t, f, v);
      } else {
        std::printf("  .%s = %s\n", f.name, text_value(t, f, v).c_str());
      }
    }
    if (json) {
      j.end_object();
      j.key("slots");
      j.begin_array();
    }
    for (uint16_t slot = 0; slot < s.num_slots; ++slot) {
      int valid = 0;
      check(uscope_state_slot_valid(st, sid, slot, &valid), "slot");
      if (!valid) continue;
      if (json) {
        j.begin_object();
        j.field("slot", slot);
      } else {
        std::printf("  [%u]", slot);
      }
      for (uint16_t fi = 0; fi < s.num_fields; ++fi) {
        const auto f = t.field(sid, fi, false);
        uint64_t v = 0;
        check(uscope_state_slot_field(st, sid, slot, fi, &v), "field");
        if (json) {
          j.key(f.name);
          json_value(j, t, f, v);
        } else {
          std::printf(" %s=%s", f.name, text_value(t, f, v).c_str());
        }
      }
      if (json) j.end_object();
      else std::printf("\n");
    }
    if (json) {
      j.end_array();
      j.end_object();
    }
  }
  if (json) {
    j.end_array();
    j.end_object();
    j.end();
  }
}

// ── events / dump ──

void event_json(Json &j, const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload) {
  const auto et = t.event_type(id);
  j.begin_object();
  j.field("time_ps", time);
  j.field("type", et.name);
  j.key("fields");
  j.begin_object();
  for (uint16_t k = 0; k < et.num_fields; ++k) {
    const auto f = t.event_field(id, k);
    j.key(f.name);
    json_value(j, t, f, payload_field(payload, f));
  }
  j.end_object();
  j.end_object();
}

void event_text(const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload) {
  const auto et = t.event_type(id);
  std::printf("%" PRIu64 " %s", time, et.name);
  for (uint16_t k = 0; k < et.num_fields; ++k) {
    const auto f = t.event_field(id, k);
    std::printf(" %s=%s", f.name, text_value(t, f, payload_field(payload, f)).c_str());
  }
  std::printf("\n");
}

void cmd_events(const Trace &t, uint64_t from, uint64_t to, bool json) {
  if (from > to) {  // a range that starts after the trace's end (events_range clipped it)
    if (json) std::printf("[]\n");
    return;
  }
  uscope_event_iter_t *it = nullptr;
  check(uscope_reader_events_in_range(t.r(), from, to, &it), "events_in_range");
  struct Free {
    uscope_event_iter_t *i;
    ~Free() { uscope_event_iter_free(i); }
  } guard{it};
  Json j;
  if (json) j.begin_array();
  uscope_event_t ev{};
  uscope_status_t s;
  while ((s = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
    if (json) event_json(j, t, ev.time_ps, ev.event_type_id, ev.payload);
    else event_text(t, ev.time_ps, ev.event_type_id, ev.payload);
  }
  check(s, "events");
  if (json) {
    j.end_array();
    j.end();
  }
}

void cmd_dump(const Trace &t) {
  const auto i = t.info();
  Json j;
  j.begin_object();
  j.field("complete", i.complete != 0);
  j.field("total_time_ps", i.total_time_ps);
  j.field("checkpoint_interval_ps", i.checkpoint_interval_ps);
  j.key("strings");
  j.begin_array();
  for (uint32_t k = 0; k < uscope_reader_string_count(t.r()); ++k) {
    const char *s = nullptr;
    check(uscope_reader_string(t.r(), k, &s, nullptr), "string");
    j.str(s);
  }
  j.end_array();
  j.key("segments");
  j.begin_array();
  for (uint32_t k = 0; k < i.num_segments; ++k) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), k, &seg), "segment");
    j.begin_object();
    j.field("time_start_ps", seg.time_start_ps);
    j.field("time_end_ps", seg.time_end_ps);
    j.field("frames", seg.num_frames);
    j.key("items");
    j.begin_array();
    uscope_item_iter_t *it = nullptr;
    check(uscope_reader_segment_items(t.r(), k, &it), "segment items");
    struct Free {
      uscope_item_iter_t *i;
      ~Free() { uscope_item_iter_free(i); }
    } guard{it};
    uscope_item_t item{};
    uscope_status_t s;
    while ((s = uscope_item_iter_next(it, &item)) == USCOPE_OK) {
      if (item.is_event) {
        event_json(j, t, item.time_ps, item.event_type_id, item.payload);
        continue;
      }
      static const char *actions[] = {"?", "set", "clear", "add", "prop"};
      j.begin_object();
      j.field("time_ps", item.time_ps);
      j.field("op", actions[item.action <= 4 ? item.action : 0]);
      j.field("storage", t.storage(item.storage_id).name);
      j.field("slot", item.slot);
      if (item.action != 2) {
        const auto f = t.field(item.storage_id, item.field, item.action == 4);
        j.field("field", f.name);
        j.key("value");
        j.num(item.value);  // as recorded: the full 64 bits of the delta
      }
      j.end_object();
    }
    check(s, "items");
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end();
}

// ── argument checks that need the trace ──

// The trace's last time: that of its last frame (the header's total is 0
// while a file is live, COMPAT 11).
uint64_t trace_end(const Trace &t) { return t.info().last_time_ps; }

// state --time PS | --cycle N: the time asked for, or the trace's end (with
// a warning) when that is past it; a cycle whose time does not fit in 64
// bits is past any end.
uint64_t state_time(const Trace &t, bool by_cycle, uint64_t time_ps, uint64_t cycle) {
  const uint64_t end = trace_end(t);
  std::string asked = "--time " + std::to_string(time_ps) + " ps";
  bool past = false;
  if (by_cycle) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), 0, &ck), "clock 0");
    if (ck.period_ps == 0) throw Failure("state --cycle: clock 0 has no period; use --time");
    const uint64_t period = cycle_period(t, ck.period_ps);
    asked = "--cycle " + std::to_string(cycle) + " (clock 0, " + std::to_string(period) + " ps)";
    if (cycle > UINT64_MAX / period) past = true;
    else time_ps = cycle * period, asked += " = " + std::to_string(time_ps) + " ps";
  }
  if (past || time_ps > end) {
    std::fprintf(stderr, "uscope: warning: state %s is past the end of the trace (last frame at %" PRIu64
                 " ps); showing the state at %" PRIu64 " ps\n", asked.c_str(), end, end);
    return end;
  }
  return time_ps;
}

// events --from A --to B: A after B is a usage error (checked before the
// file is opened, as CLI11's own); a range reaching past the trace's end is
// clipped to it, with a warning.
void check_range(uint64_t from, uint64_t to) {
  if (from > to)
    throw Usage("events: --from " + std::to_string(from) + " ps is after --to " + std::to_string(to) +
                " ps; expected --from <= --to");
}
void events_range(const Trace &t, uint64_t from, uint64_t *to) {
  const uint64_t end = trace_end(t);
  if (*to <= end) return;
  if (from > end)
    std::fprintf(stderr, "uscope: warning: events --from %" PRIu64 " ps is past the end of the trace (last frame at %"
                 PRIu64 " ps); no events\n", from, end);
  else
    std::fprintf(stderr, "uscope: warning: events --to %" PRIu64 " ps is past the end of the trace (last frame at %"
                 PRIu64 " ps); showing %" PRIu64 "..%" PRIu64 " ps\n", *to, end, from, end);
  *to = end;
}

// "uscope --version": the CLI's version (the headers it was built with) and
// the library's (the one loaded now; they differ after a library upgrade).
std::string version_text() {
  const uint32_t f = uscope_format_version();
  return "uscope " + std::to_string(USCOPE_VERSION_MAJOR) + "." + std::to_string(USCOPE_VERSION_MINOR) + "." +
         std::to_string(USCOPE_VERSION_PATCH) + "\nlibuscope " + uscope_version_string() + " (writes µScope format " +
         std::to_string(f >> 16) + "." + std::to_string(f & 0xFFFF) + ")";
}

}  // namespace uscope_cli

using namespace uscope_cli;

int uscope_cli_main(int argc, char **argv) {
  CLI::App app{"Inspect µScope traces (libuscope " + std::string(uscope_version_string()) + ")", "uscope"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App *, const CLI::Error &e) {
    return std::string("uscope: ") + e.what() + "\nRun with --help for more information.\n";
  });
  app.set_version_flag("--version", version_text(), "print the uscope and libuscope versions and exit");
  std::string file;
  bool json = false;
  auto *info = app.add_subcommand("info", "file overview: format, time, segments, schema, DUT");
  info->add_option("file", file, "trace file (.uscope, or a .pccx container)")->required();
  info->add_flag("--json", json, "JSON output");
  auto *dump = app.add_subcommand("dump", "canonical full dump of every segment's items");
  dump->add_option("file", file, "trace file (.uscope)")->required();
  bool dump_json = false;
  dump->add_flag("--json", dump_json, "JSON output (the only format)")->required();
  auto *state = app.add_subcommand("state", "storage state at a time (past the end: the state at the end)");
  state->add_option("file", file, "trace file (.uscope)")->required();
  uint64_t time_ps = 0, cycle = 0;
  auto *opt_time = add_number(state, "--time", &time_ps, "time in ps");
  auto *opt_cycle = add_number(state, "--cycle", &cycle, "cycle of clock 0");
  opt_time->excludes(opt_cycle);
  state->add_flag("--json", json, "JSON output");
  auto *events = app.add_subcommand("events", "events in a closed time range (clipped to the trace's end)");
  events->add_option("file", file, "trace file (.uscope)")->required();
  uint64_t from = 0, to = 0;
  add_number(events, "--from", &from, "first time in ps")->required();
  add_number(events, "--to", &to, "last time in ps (>= --from)")->required();
  events->add_flag("--json", json, "JSON output");
  auto *summary = app.add_subcommand("summary", "per-scope figures of cpu, npu and noc protocol scopes");
  summary->add_option("file", file, "trace file (.uscope)")->required();
  summary->add_flag("--json", json, "JSON output");
  bool strict = false;
  for (CLI::App *c : {info, dump, state, events, summary})
    c->add_flag("--strict", strict, "fail on the first defect of the file (validated first) instead of skipping it");
  auto check_cmd = add_check(app);         // cmd_check.cpp
  auto convert = add_convert(app);         // cmd_convert.cpp
  auto npu_report = add_npu_report(app);   // cmd_npu_report.cpp
  check_all_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // These open their own inputs (JSONL, .uscope or .pccx).
  if (*convert->app) return convert->run();
  if (*npu_report->app) return npu_report->run();
  if (*check_cmd->app) return check_cmd->run();
  try {
    if (*info && is_pccx_file(file)) {  // .pccx, by magic (cmd_pccx_info.cpp)
      cmd_pccx_info(file, json);
      return 0;
    }
    if (*state && !*opt_time && !*opt_cycle) throw Usage("state: give --time PS or --cycle N");
    if (*events) check_range(from, to);
    Trace t(file, strict ? USCOPE_READ_STRICT : 0);
    if (strict) strict_check(t, file);
    if (*info) cmd_info(t, json);
    else if (*dump) cmd_dump(t);
    else if (*state) cmd_state(t, state_time(t, opt_cycle->count() > 0, time_ps, cycle), json);
    else if (*events) {
      events_range(t, from, &to);
      cmd_events(t, from, to, json);
    } else if (*summary) {
      cmd_summary(t, json);
    }
    std::fflush(stdout);
    warn_defects(t, file);
  } catch (const Failure &e) {
    std::fflush(stdout);
    const bool usage = dynamic_cast<const Usage *>(&e) != nullptr;
    // Every error about the file names it (the reader's open message does already).
    const std::string what = e.what();
    const bool named = usage || what.find(file) != std::string::npos;
    std::fprintf(stderr, "uscope: %s%s%s%s\n", named ? "" : file.c_str(), named ? "" : ": ", what.c_str(),
                 *summary ? summary_hint(file).c_str() : "");
    return usage ? 2 : 1;
  }
  return 0;
}
