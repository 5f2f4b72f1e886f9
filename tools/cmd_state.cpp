// uscope state FILE (--time PS | --cycle N) [--json] [--strict]: every
// storage's valid slots and properties at a time (a cycle: of clock 0),
// values by name (enum names, string-table text). Past the trace's end: the
// state at the end, with a warning.
//
// JSON: {time_ps, storages[...], cycle, buffers[...]}: buffers[] is what the
// reference uscope-cli's state prints (its top-level array; here under
// "buffers", as the spec's `jq '.buffers[] | select(.name == "rob")'` reads
// it): {name, capacity, occupied, fill_percent, slots[{slot, fields,
// entity_fields, named_fields}], properties[{name, value, role, pair_id}],
// pairs[]} (cli_cpu.hpp, buffer_json). With a cpu scope they come from the
// cpu analysis (entity_fields: the catalog's fields of the slot's entity);
// without one, from the storages flagged as buffers (no entity_fields).
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

// Without a cpu scope: the storages flagged as buffers, from the reader's state.
void schema_buffers_json(Json &j, const Trace &t, const uscope_state_t *st) {
  const auto c = t.counts();
  for (uint16_t sid = 0; sid < c.storages; ++sid) {
    const auto s = t.storage(sid);
    if (!(s.flags & USCOPE_SF_BUFFER)) continue;
    uint32_t occ = 0;
    check(uscope_state_occupancy(st, &occ, sid), "occupancy");
    j.begin_object();
    j.field("name", s.name);
    j.field("capacity", s.num_slots);
    j.field("occupied", occ);
    j.field("fill_percent", s.num_slots ? 100.0 * occ / s.num_slots : 0.0);
    j.key("slots");
    j.begin_array();
    for (uint16_t slot = 0; slot < s.num_slots; ++slot) {
      int valid = 0;
      check(uscope_state_slot_valid(st, &valid, sid, slot), "slot");
      if (!valid) continue;
      std::vector<std::pair<uscope_field_info_t, uint64_t>> v;
      for (uint16_t fi = 0; fi < s.num_fields; ++fi) {
        uint64_t x = 0;
        check(uscope_state_slot_field(st, &x, sid, slot, fi), "field");
        v.emplace_back(t.field(sid, fi, false), x);
      }
      j.begin_object();
      j.field("slot", slot);
      j.key("fields");
      j.begin_array();
      for (const auto &f : v) j.num(f.second);
      j.end_array();
      j.key("entity_fields");
      j.begin_array();
      j.end_array();
      j.key("named_fields");
      j.begin_object();
      for (const auto &f : v) {
        j.key(f.first.name);
        json_value(j, t, f.first, f.second);
      }
      j.end_object();
      j.end_object();
    }
    j.end_array();
    // Properties, and the head/tail pointer pairs they form (same pair_id).
    std::map<uint8_t, std::pair<int, int>> pairs;  // pair_id -> (head, tail) property indices
    std::vector<uint64_t> values(s.num_properties);
    j.key("properties");
    j.begin_array();
    for (uint16_t p = 0; p < s.num_properties; ++p) {
      const auto f = t.field(sid, p, true);
      check(uscope_state_property(st, &values[p], sid, p), "property");
      j.begin_object();
      j.field("name", f.name);
      j.field("value", values[p]);
      j.field("role", role_name(f.role));
      j.field("pair_id", f.pair_id);
      j.end_object();
      if (f.role == USCOPE_ROLE_HEAD_PTR || f.role == USCOPE_ROLE_TAIL_PTR) {
        auto &e = pairs.try_emplace(f.pair_id, -1, -1).first->second;
        (f.role == USCOPE_ROLE_HEAD_PTR ? e.first : e.second) = p;
      }
    }
    j.end_array();
    j.key("pairs");
    j.begin_array();
    for (const auto &[id, ht] : pairs) {
      if (ht.first < 0 || ht.second < 0) continue;
      const uint64_t head = values[ht.first], tail = values[ht.second];
      j.begin_object();
      j.field("pair_id", id);
      j.field("head_name", t.field(sid, static_cast<uint16_t>(ht.first), true).name);
      j.field("tail_name", t.field(sid, static_cast<uint16_t>(ht.second), true).name);
      j.field("head", head);
      j.field("tail", tail);
      j.field("distance", s.num_slots ? (tail + s.num_slots - head % s.num_slots) % s.num_slots : uint64_t{0});
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
}

void cmd_state(const Trace &t, const std::string &path, uint64_t time_ps, bool json) {
  uscope_state_t *st = nullptr;
  check(uscope_reader_state_at(t.r(), &st, time_ps), "state_at");
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
    check(uscope_state_occupancy(st, &occ, sid), "occupancy");
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
      check(uscope_state_property(st, &v, sid, p), "property");
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
      check(uscope_state_slot_valid(st, &valid, sid, slot), "slot");
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
        check(uscope_state_slot_field(st, &v, sid, slot, fi), "field");
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
  // The buffers (the reference's state): from the cpu analysis when the trace has a cpu scope.
  const std::unique_ptr<CpuTrace> cpu = optional_cpu(t, path);
  const uint64_t period = cpu ? cpu->info().period_ps : 0;
  const uint64_t cycle = period ? time_ps / period : 0;
  if (json) {
    j.end_array();
    if (cpu) j.field("cycle", cycle);
    j.key("buffers");
    j.begin_array();
    if (cpu) {
      const BufferState bs(*cpu, cycle);
      const auto infos = cpu->buffers();
      for (uint32_t k = 0; k < infos.size(); ++k) buffer_json(j, t, bs, infos[k], k);
    } else {
      schema_buffers_json(j, t, st);
    }
    j.end_array();
    j.end_object();
    j.end();
  } else if (cpu && cpu->info().num_buffers) {
    std::printf("\nbuffers of cpu scope %s at cycle %" PRIu64 "\n", cpu->info().scope_name, cycle);
    const BufferState bs(*cpu, cycle);
    const auto infos = cpu->buffers();
    for (uint32_t k = 0; k < infos.size(); ++k) buffer_text(t, bs, infos[k], k);
  }
}

// state --time PS | --cycle N: the time asked for, or the trace's end (with
// a warning) when that is past it; a cycle whose time does not fit in 64
// bits is past any end.
uint64_t state_time(const Trace &t, bool by_cycle, uint64_t time_ps, uint64_t cycle) {
  const uint64_t end = trace_end(t);
  std::string asked = "--time " + std::to_string(time_ps) + " ps";
  bool past = false;
  if (by_cycle) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), &ck, 0), "clock 0");
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

class State final : public TraceCommand {
 public:
  State()
      : TraceCommand("state", "storage state at a time (past the end: the state at the end)", "trace file (.uscope)") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    time_ = add_number(&sub, "--time", &time_ps_, "time in ps");
    cycle_ = add_number(&sub, "--cycle", &cycle_n_, "cycle of clock 0");
    time_->excludes(cycle_);
    sub.add_flag("--json", json_, "JSON output");
    sub.footer(
        "JSON: {time_ps, storages[], cycle, buffers[]}; buffers[] as `uscope buffers` prints them.\n"
        "Example: uscope state trace.uscope --cycle 100 --json | jq '.buffers[] | select(.name == \"rob\")'");
  }
  bool before_open() override {
    if (!*time_ && !*cycle_) throw Usage("state: give --time PS or --cycle N");
    return false;
  }
  void read(const Trace &t) override { cmd_state(t, file(), state_time(t, cycle_->count() > 0, time_ps_, cycle_n_), json_); }
  CLI::Option *time_ = nullptr, *cycle_ = nullptr;
  uint64_t time_ps_ = 0, cycle_n_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> state_command() { return std::make_unique<State>(); }

}  // namespace uscope_cli
