// uscope dump FILE --json [--strict]: every segment's items (ops and
// events) in file order, canonical: the same trace gives the same bytes, so
// two files diff by their content.
#include <uscope/uscope.h>

#include <memory>

#include "cli_command.hpp"

namespace uscope_cli {
namespace {

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
    check(uscope_reader_string(t.r(), &s, nullptr, k), "string");
    j.str(s);
  }
  j.end_array();
  j.key("segments");
  j.begin_array();
  for (uint32_t k = 0; k < i.num_segments; ++k) {
    uscope_segment_info_t seg{};
    check(uscope_reader_segment(t.r(), &seg, k), "segment");
    j.begin_object();
    j.field("time_start_ps", seg.time_start_ps);
    j.field("time_end_ps", seg.time_end_ps);
    j.field("frames", seg.num_frames);
    j.key("items");
    j.begin_array();
    uscope_item_iter_t *it = nullptr;
    check(uscope_reader_segment_items(t.r(), &it, k), "segment items");
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

class Dump final : public TraceCommand {
 public:
  Dump() : TraceCommand("dump", "canonical full dump of every segment's items", "trace file (.uscope)") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_flag("--json", json_, "JSON output (the only format)")->required();
  }
  void read(const Trace &t) override { cmd_dump(t); }
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> dump_command() { return std::make_unique<Dump>(); }

}  // namespace uscope_cli
