// uscope events FILE --from PS --to PS [--json] [--strict]: the events of
// a closed time range, in time order; a range reaching past the trace's end
// is clipped to it, with a warning.
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

void cmd_events(const Trace &t, uint64_t from, uint64_t to, bool json) {
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
    add_number(&sub, "--from", &from_, "first time in ps")->required();
    add_number(&sub, "--to", &to_, "last time in ps (>= --from)")->required();
    sub.add_flag("--json", json_, "JSON output");
  }
  bool before_open() override {
    check_range(from_, to_);
    return false;
  }
  void read(const Trace &t) override {
    events_range(t, from_, &to_);
    cmd_events(t, from_, to_, json_);
  }
  uint64_t from_ = 0, to_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> events_command() { return std::make_unique<Events>(); }

}  // namespace uscope_cli
