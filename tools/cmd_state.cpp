// uscope state FILE (--time PS | --cycle N) [--json] [--strict]: every
// storage's valid slots and properties at a time (a cycle: of clock 0).
// Past the trace's end: the state at the end, with a warning.
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {
namespace {

void cmd_state(const Trace &t, uint64_t time_ps, bool json) {
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
  if (json) {
    j.end_array();
    j.end_object();
    j.end();
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
  }
  bool before_open() override {
    if (!*time_ && !*cycle_) throw Usage("state: give --time PS or --cycle N");
    return false;
  }
  void read(const Trace &t) override { cmd_state(t, state_time(t, cycle_->count() > 0, time_ps_, cycle_n_), json_); }
  CLI::Option *time_ = nullptr, *cycle_ = nullptr;
  uint64_t time_ps_ = 0, cycle_n_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> state_command() { return std::make_unique<State>(); }

}  // namespace uscope_cli
