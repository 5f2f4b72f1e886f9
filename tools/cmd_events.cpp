// uscope events FILE (--from PS | --from-cycle N) (--to PS | --to-cycle N)
// [--json | --format csv] [--strict]: the events of a closed time range, in
// time order, values by name (enum names, string-table text); a range
// reaching past the trace's end is clipped to it, with a warning. Cycles are
// of clock 0 (as state --cycle), converted to ps through its period.
#include <uscope/uscope.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_command.hpp"

namespace uscope_cli {
namespace {

void event_text(const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload) {
  const auto et = t.event_type(id);
  std::printf("%" PRIu64 " %s", time, et.name);
  for (uint16_t k = 0; k < et.num_fields; ++k) {
    const auto f = t.event_field(id, k);
    std::printf(" %s=%s", f.name, text_value(t, f, payload_field(payload, f)).c_str());
  }
  std::printf("\n");
}

// CSV: one row per event: time_ps, type, then "fields" as name=value pairs
// separated by spaces (events of different types have different fields).
void event_csv(Csv &csv, const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload) {
  const auto et = t.event_type(id);
  std::string fields;
  for (uint16_t k = 0; k < et.num_fields; ++k) {
    const auto f = t.event_field(id, k);
    fields += (k ? " " : "") + std::string(f.name) + "=" + text_value(t, f, payload_field(payload, f));
  }
  csv.row({cell(time), et.name, fields});
}

void cmd_events(const Trace &t, uint64_t from, uint64_t to, Format fmt) {
  const bool json = fmt == Format::kJson;
  Csv csv;
  if (fmt == Format::kCsv) csv.row({"time_ps", "type", "fields"});
  if (from > to) {  // a range that starts after the trace's end (events_range clipped it)
    if (json) std::printf("[]\n");
    return;
  }
  uscope_event_iter_t *it = nullptr;
  check(uscope_reader_events_in_range(t.r(), &it, from, to), "events_in_range");
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
    else if (fmt == Format::kCsv) event_csv(csv, t, ev.time_ps, ev.event_type_id, ev.payload);
    else event_text(t, ev.time_ps, ev.event_type_id, ev.payload);
  }
  check(s, "events");
  if (json) {
    j.end_array();
    j.end();
  }
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

class Events final : public TraceCommand {
 public:
  Events()
      : TraceCommand("events", "events in a closed time range (clipped to the trace's end)", "trace file (.uscope)") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    from_opt_ = add_number(&sub, "--from", &from_, "first time in ps");
    to_opt_ = add_number(&sub, "--to", &to_, "last time in ps (>= --from)");
    from_cycle_opt_ = add_number(&sub, "--from-cycle", &from_cycle_, "first cycle of clock 0 (instead of --from)");
    to_cycle_opt_ = add_number(&sub, "--to-cycle", &to_cycle_, "last cycle of clock 0 (instead of --to)");
    from_opt_->excludes(from_cycle_opt_);
    to_opt_->excludes(to_cycle_opt_);
    format_.add(sub, true);
    sub.footer(
        "Values by name: enum values as their names, string-table fields as their text. CSV:\n"
        "time_ps,type,fields (name=value pairs). Cycles are clock 0's.\n"
        "Example: uscope events trace.uscope --from-cycle 100 --to-cycle 200 --json");
  }
  bool before_open() override {
    format_.get();
    if (!*from_opt_ && !*from_cycle_opt_) throw Usage("events: give --from PS or --from-cycle N");
    if (!*to_opt_ && !*to_cycle_opt_) throw Usage("events: give --to PS or --to-cycle N");
    if (*from_opt_ && *to_opt_) check_range(from_, to_);
    if (*from_cycle_opt_ && *to_cycle_opt_ && from_cycle_ > to_cycle_)
      throw Usage("events: --from-cycle " + std::to_string(from_cycle_) + " is after --to-cycle " +
                  std::to_string(to_cycle_) + "; expected --from-cycle <= --to-cycle");
    return false;
  }
  // A cycle of clock 0 as ps; one whose time does not fit in 64 bits is the largest time.
  static uint64_t cycle_time(const Trace &t, uint64_t cycle) {
    uscope_clock_info_t ck{};
    check(uscope_reader_clock(t.r(), &ck, 0), "clock 0");
    if (ck.period_ps == 0) throw Failure("events --from-cycle/--to-cycle: clock 0 has no period; use --from/--to");
    const uint64_t period = cycle_period(t, ck.period_ps);
    return cycle > UINT64_MAX / period ? UINT64_MAX : cycle * period;
  }
  void read(const Trace &t) override {
    if (*from_cycle_opt_) from_ = cycle_time(t, from_cycle_);
    if (*to_cycle_opt_) to_ = cycle_time(t, to_cycle_);
    check_range(from_, to_);
    events_range(t, from_, &to_);
    cmd_events(t, from_, to_, format_.get());
  }
  CLI::Option *from_opt_ = nullptr, *to_opt_ = nullptr, *from_cycle_opt_ = nullptr, *to_cycle_opt_ = nullptr;
  uint64_t from_ = 0, to_ = 0, from_cycle_ = 0, to_cycle_ = 0;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> events_command() { return std::make_unique<Events>(); }

}  // namespace uscope_cli
