// uscope buffers FILE --cycle N [--buffer NAME] [--json | --format csv]:
// the cpu scope's buffers (storages flagged SF_BUFFER: ROB, issue queues,
// ...) at the end of a cycle: fill level, occupancy percentage, the
// head/tail pointer pairs (spec §4.6.2) and the occupied slots with their
// fields by name. --buffer picks buffers as the reference does (the exact
// name, else every name containing it; none: an error naming them). A cycle
// past the end is the last one, with a warning.
//
// JSON: the reference's array of {name, capacity, occupied, slots[{slot,
// fields, entity_fields}], properties[{name, value, role}]}, plus
// fill_percent, pairs[] and each slot's named_fields (cli_cpu.hpp,
// buffer_json). CSV: one row per buffer.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

class Buffers final : public TraceCommand {
 public:
  Buffers()
      : TraceCommand("buffers", "cpu buffer occupancy at a cycle: fill level, pointer pairs, slots",
                     "trace file (.uscope) with a cpu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    add_number(&sub, "--cycle", &cycle_, "cycle to show (its end)")->required();
    sub.add_option("--buffer", buffer_, "buffer name (exact, else every name containing it)")->type_name("NAME");
    format_.add(sub, true);
    sub.footer(
        "JSON: an array of {name, capacity, occupied, fill_percent, slots[{slot, fields, entity_fields,\n"
        "named_fields}], properties[{name, value, role, pair_id}], pairs[{pair_id, head, tail, distance}]}.\n"
        "Example: uscope buffers trace.uscope --cycle 50 --buffer rob");
  }
  bool before_open() override {
    format_.get();
    return false;
  }
  void read(const Trace &t) override {
    const CpuTrace c(t);
    const auto infos = c.buffers();
    if (infos.empty()) throw Failure("no buffers in this trace's cpu scope (no storage flagged as a buffer)");
    std::vector<std::string> names;
    for (const auto &b : infos) names.emplace_back(b.name);
    std::vector<uint32_t> chosen;
    if (buffer_.empty())
      for (uint32_t i = 0; i < names.size(); ++i) chosen.push_back(i);
    else
      chosen = match_names(names, buffer_, "buffer");
    const uint64_t cycle = clamp_cycle(cycle_, c.max_cycle(), "buffers --cycle " + std::to_string(cycle_));
    const BufferState st(c, cycle);
    switch (format_.get()) {
      case Format::kJson: {
        Json j;
        j.begin_array();
        for (uint32_t k : chosen) buffer_json(j, t, st, infos[k], k);
        j.end_array();
        j.end();
        break;
      }
      case Format::kCsv: {
        Csv csv;
        csv.row({"cycle", "buffer", "capacity", "occupied", "fill_percent", "pairs"});
        for (uint32_t k : chosen) {
          uscope_buffer_fill_t f{};
          check(uscope_buffer_state_fill(st.s, &f, k), "buffer fill");
          std::string pairs;  // "head=H tail=T distance=D" per pair, ';' between pairs
          for (uint32_t p = 0; p < f.num_pairs; ++p) {
            uscope_pointer_pair_t pp{};
            check(uscope_buffer_state_pair(st.s, &pp, k, p), "pair");
            pairs += (p ? ";" : "") + std::string("head=") + std::to_string(pp.head) + " tail=" +
                     std::to_string(pp.tail) + " distance=" + std::to_string(pp.distance);
          }
          csv.row({cell(cycle), names[k], cell(uint64_t{f.capacity}), cell(uint64_t{f.occupied}), cell(f.fill_percent),
                   pairs});
        }
        break;
      }
      case Format::kTable:
        std::printf("=== Buffers at cycle %" PRIu64 " ===\n\n", cycle);
        for (uint32_t k : chosen) {
          buffer_text(t, st, infos[k], k);
          std::printf("\n");
        }
        break;
    }
  }
  uint64_t cycle_ = 0;
  std::string buffer_;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> buffers_command() { return std::make_unique<Buffers>(); }

}  // namespace uscope_cli
