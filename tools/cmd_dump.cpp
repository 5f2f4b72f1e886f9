// uscope dump FILE --json [--strict]: every segment's items (ops and
// events) in file order, canonical: the same trace gives the same bytes, so
// two files diff by their content.
//
// JSON Lines (one JSON object per line, never one line of the whole trace):
//   {"record":"header","complete","total_time_ps","checkpoint_interval_ps","strings","segments"}
//   {"record":"string","index","text"}                      one per string-table entry
//   {"record":"segment","index","time_start_ps","time_end_ps","frames"}
//   {"record":"op","time_ps","op","storage","slot"[,"field","value"[,"value_name"]]}
//   {"record":"event","time_ps","type","fields":{...}}      (the events command's objects)
// An op's value is the 64 bits recorded (an add's delta included); a set of
// an enum or string-table field also gives its name or text as value_name.
// Items follow their segment's record. `jq -c 'select(.record == "event")'`
// picks the events; `jq -s` makes one array again.
#include <uscope/uscope.h>

#include <memory>

#include "cli_command.hpp"

namespace uscope_cli {
namespace {

void cmd_dump(const Trace &t) {
  const auto i = t.info();
  const uint32_t nstrings = uscope_reader_string_count(t.r());
  Json j;
  j.begin_object();
  j.field("record", "header");
  j.field("complete", i.complete != 0);
  j.field("total_time_ps", i.total_time_ps);
  j.field("checkpoint_interval_ps", i.checkpoint_interval_ps);
  j.field("strings", nstrings);
  j.field("segments", i.num_segments);
  j.end_object();
  j.end();
  for (uint32_t k = 0; k < nstrings; ++k) {
    const char *s = nullptr;
    check(uscope_reader_string(t.r(), &s, nullptr, k), "string");
    Json l;
    l.begin_object();
    l.field("record", "string");
    l.field("index", k);
    l.field("text", s);
    l.end_object();
    l.end();
  }
  for (uint32_t k = 0; k < i.num_segments; ++k) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), &seg, k), "segment");
    Json h;
    h.begin_object();
    h.field("record", "segment");
    h.field("index", k);
    h.field("time_start_ps", seg.time_start_ps);
    h.field("time_end_ps", seg.time_end_ps);
    h.field("frames", seg.num_frames);
    h.end_object();
    h.end();
    uscope_item_iter_t *it = nullptr;
    check(uscope_reader_segment_items(t.r(), &it, k), "segment items");
    struct Free {
      uscope_item_iter_t *i;
      ~Free() { uscope_item_iter_free(i); }
    } guard{it};
    uscope_item_t item{};
    uscope_status_t s;
    while ((s = uscope_item_iter_next(it, &item)) == USCOPE_OK) {
      Json l;
      if (item.is_event) {
        event_json(l, t, item.time_ps, item.event_type_id, item.payload, false, "event");
        l.end();
        continue;
      }
      static const char *actions[] = {"?", "set", "clear", "add", "prop"};
      l.begin_object();
      l.field("record", "op");
      l.field("time_ps", item.time_ps);
      l.field("op", actions[item.action <= 4 ? item.action : 0]);
      l.field("storage", t.storage(item.storage_id).name);
      l.field("slot", item.slot);
      if (item.action != 2) {
        const auto f = t.field(item.storage_id, item.field, item.action == 4);
        l.field("field", f.name);
        l.key("value");
        l.num(item.value);  // as recorded: the full 64 bits of the delta
        if (item.action != 3 && (f.type == USCOPE_FT_ENUM || f.type == USCOPE_FT_STRING_REF)) {
          l.key("value_name");
          json_value(l, t, f, item.value);
        }
      }
      l.end_object();
      l.end();
    }
    check(s, "items");
  }
}

class Dump final : public TraceCommand {
 public:
  Dump()
      : TraceCommand("dump", "canonical full dump of every segment's items, as JSON Lines (one record a line)",
                     "trace file (.uscope)") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_flag("--json", json_, "JSON Lines output (the only format)")->required();
    sub.footer(
        "One JSON object per line: a header record, then {\"record\": \"string\"} entries, and per segment a\n"
        "{\"record\": \"segment\"} followed by its op and event records in file order.\n"
        "Example: uscope dump trace.uscope --json | jq -c 'select(.record == \"event\")'");
  }
  void read(const Trace &t) override { cmd_dump(t); }
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> dump_command() { return std::make_unique<Dump>(); }

}  // namespace uscope_cli
