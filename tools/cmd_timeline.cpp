// uscope timeline FILE --entity N [--range A:B | --cycle C] [--elf FILE]
// [--json | --format csv]: the life of every instruction that held entity id
// N (catalog ids are reused, so one id may name several instructions; the
// range or cycle picks some): pc, disassembly, function and source line
// when an ELF gives them, stage spans with their durations, annotations,
// dependencies, and how it ended (retired, flushed, in flight).
//
// JSON: the reference uscope-cli's array of {entity_id, disasm, first_cycle,
// last_cycle, retire_status, stages[{name, start_cycle, end_cycle}],
// tooltip}, each stage also with start, end (the names for the same
// cycles), duration and lane; each instruction also with sim_id, pc,
// inst_bits, annotations[], deps[], flush_reason, function, source_file,
// source_line.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_command.hpp"
#include "cli_cpu.hpp"

namespace uscope_cli {
namespace {

// An instruction copied out of the iterator (its pointers live until the next call).
struct Insn {
  uscope_insn_t i{};
  std::vector<uscope_stage_span_t> stages;
  std::string disasm, function, source_file, flush_reason;
  std::vector<std::string> annotations;
  std::vector<uint32_t> deps;
};

std::vector<std::string> lines(const char *text) {
  std::vector<std::string> v;
  std::istringstream in(text ? text : "");
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

Insn copy(const Trace &t, const uscope_insn_t &i) {
  Insn o;
  o.i = i;
  o.stages.assign(i.stages, i.stages + i.num_stages);
  o.disasm = i.disasm ? i.disasm : "";
  o.function = i.function ? i.function : "";
  o.source_file = i.source_file ? i.source_file : "";
  o.annotations = lines(i.annotations);
  o.deps.assign(i.dep_src, i.dep_src + i.num_deps);
  if (i.status == USCOPE_INSN_FLUSHED) {
    // The flush_reason enum's name for it, from the schema (the number when it has none).
    uint16_t ev = 0;
    const char *name = nullptr;
    if (uscope_reader_find_event(t.r(), &ev, "flush") == USCOPE_OK) {
      const auto et = t.event_type(ev);
      for (uint16_t k = 0; k < et.num_fields && !name; ++k) {
        const auto f = t.event_field(ev, k);
        if (f.type == USCOPE_FT_ENUM) name = t.enum_value(f.enum_id, i.flush_reason);
      }
    }
    o.flush_reason = name ? name : std::to_string(i.flush_reason);
  }
  return o;
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

void print_json(const CpuTrace &c, const std::vector<Insn> &v) {
  Json j;
  j.begin_array();
  for (const Insn &n : v) {
    const auto &i = n.i;
    j.begin_object();
    j.field("entity_id", i.entity_id);
    j.field("disasm", n.disasm);
    j.field("first_cycle", i.first_cycle);
    j.field("last_cycle", i.last_cycle);
    j.field("retire_status", retire_status_name(i.status));
    j.key("stages");
    j.begin_array();
    for (const auto &s : n.stages) {
      j.begin_object();
      j.field("name", c.stage(s.stage));
      j.field("start_cycle", s.start_cycle);
      j.field("end_cycle", s.end_cycle);
      j.field("start", s.start_cycle);
      j.field("end", s.end_cycle);
      j.field("duration", s.end_cycle >= s.start_cycle ? s.end_cycle - s.start_cycle : uint64_t{0});
      j.field("lane", s.lane);
      j.end_object();
    }
    j.end_array();
    std::string tooltip;  // the reference's: the annotations that are not the disassembly, one per line
    for (const auto &a : n.annotations) tooltip += (tooltip.empty() ? "" : "\n") + a;
    j.field("tooltip", tooltip);
    j.field("sim_id", i.sim_id);
    j.field("pc", i.pc);
    j.field("pc_hex", hex(i.pc));
    j.key("inst_bits");
    if (i.has_inst_bits) j.num(i.inst_bits);
    else j.null();
    j.key("annotations");
    j.begin_array();
    for (const auto &a : n.annotations) j.str(a.c_str());
    j.end_array();
    j.key("deps");
    j.begin_array();
    for (uint32_t d : n.deps) j.num(d);
    j.end_array();
    j.key("flush_reason");
    if (i.status == USCOPE_INSN_FLUSHED) j.str(n.flush_reason.c_str());
    else j.null();
    j.field("function", n.function);
    j.field("source_file", n.source_file);
    j.key("source_line");
    if (i.source_line) j.num(i.source_line);
    else j.null();
    j.end_object();
  }
  j.end_array();
  j.end();
}

void print_csv(const CpuTrace &c, const std::vector<Insn> &v) {
  // One row per stage span: what a dataframe groups by entity or sim_id.
  Csv out;
  out.row({"entity_id", "sim_id", "pc", "disasm", "retire_status", "first_cycle", "last_cycle", "stage", "lane",
           "start", "end", "duration"});
  for (const Insn &n : v)
    for (const auto &s : n.stages)
      out.row({cell(uint64_t{n.i.entity_id}), cell(n.i.sim_id), hex(n.i.pc), n.disasm, retire_status_name(n.i.status),
               cell(n.i.first_cycle), cell(n.i.last_cycle), c.stage(s.stage), cell(uint64_t{s.lane}),
               cell(s.start_cycle), cell(s.end_cycle),
               cell(s.end_cycle >= s.start_cycle ? s.end_cycle - s.start_cycle : uint64_t{0})});
}

void print_text(const CpuTrace &c, const std::vector<Insn> &v) {
  for (const Insn &n : v) {
    const auto &i = n.i;
    std::printf("=== Entity %u (instruction #%" PRIu64 ") ===\n", i.entity_id, i.sim_id);
    std::printf("  PC:      %s\n", hex(i.pc).c_str());
    std::printf("  Disasm:  %s\n", n.disasm.c_str());
    if (!n.function.empty() || !n.source_file.empty()) {
      std::printf("  Source:  %s", n.function.empty() ? "?" : n.function.c_str());
      if (!n.source_file.empty()) std::printf(" at %s:%u", n.source_file.c_str(), i.source_line);
      std::printf("\n");
    }
    std::printf("  Cycles:  %" PRIu64 " - %" PRIu64 "\n", i.first_cycle, i.last_cycle);
    std::printf("  Status:  %s", retire_status_name(i.status));
    if (i.status == USCOPE_INSN_FLUSHED) std::printf(" (%s)", n.flush_reason.c_str());
    std::printf("\n");
    for (size_t k = 0; k < n.annotations.size(); ++k)
      std::printf("  %s %s\n", k ? "        " : "Notes:  ", n.annotations[k].c_str());
    if (!n.deps.empty()) {
      std::printf("  Depends on entities:");
      for (uint32_t d : n.deps) std::printf(" %u", d);
      std::printf("\n");
    }
    std::printf("\n");
    if (n.stages.empty()) {
      std::printf("  (no stages)\n\n");
      continue;
    }
    std::printf("  %-20s %8s %8s %8s %4s\n", "Stage", "Start", "End", "Duration", "Lane");
    std::printf("  %-20s %8s %8s %8s %4s\n", "-----", "-----", "---", "--------", "----");
    for (const auto &s : n.stages)
      std::printf("  %-20s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %4u\n", c.stage(s.stage).c_str(), s.start_cycle,
                  s.end_cycle, s.end_cycle >= s.start_cycle ? s.end_cycle - s.start_cycle : uint64_t{0}, s.lane);
    std::printf("\n");
  }
}

class Timeline final : public TraceCommand {
 public:
  Timeline()
      : TraceCommand("timeline", "an instruction's life by entity id: stages, pc, disassembly, retire or flush",
                     "trace file (.uscope) with a cpu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    add_number(&sub, "--entity", &entity_, "entity id (catalog slot) of the instruction")->required();
    range_ = sub.add_option("--range", range_text_,
                            "only the instructions of this id alive in cycles START:END (ids are reused)")
                 ->type_name("START:END");
    cycle_ = add_number(&sub, "--cycle", &cycle_n_, "only the instruction of this id alive at cycle C");
    range_->excludes(cycle_);
    sub.add_option("--elf", elf_, "ELF to disassemble and symbolize with (default: the trace's cpu.elf_path)")
        ->type_name("FILE");
    format_.add(sub, true);
    sub.footer(
        "Entity ids are catalog slots, reused by later instructions: every instruction that held the id\n"
        "is shown, or those alive in --range / at --cycle. JSON: an array of {entity_id, disasm, first_cycle,\n"
        "last_cycle, retire_status, stages[{name, start_cycle, end_cycle, start, end, duration, lane}],\n"
        "tooltip, sim_id, pc, annotations, deps, flush_reason, function, source_file, source_line}.\n"
        "Example: uscope timeline trace.uscope --entity 42 --json | jq '.[].stages[] | select(.name == \"EX\")'");
  }
  bool before_open() override {
    format_.get();
    if (*range_) range_cycles_ = parse_range(range_text_, "--range");
    return false;
  }
  void read(const Trace &t) override {
    // An ELF named here must be one (the library may read it later than the open).
    if (!elf_.empty() && file_magic(elf_) != "\x7f" "ELF")
      throw Failure("--elf " + elf_ + ": not a readable ELF file");
    const CpuTrace c(t, elf_);
    const uscope_cpu_trace_info_t &ci = c.info();
    if (ci.elf_note && *ci.elf_note) std::fprintf(stderr, "uscope: warning: %s: %s\n", file().c_str(), ci.elf_note);
    else if (!elf_.empty() && (!ci.elf_path || !*ci.elf_path))
      std::fprintf(stderr, "uscope: warning: %s: --elf %s is not in use (no symbols nor disassembly from it)\n",
                   file().c_str(), elf_.c_str());
    CycleRange r{0, UINT64_MAX};
    std::string what = "the whole trace";
    if (*range_) {
      r = clamp_range(range_cycles_, c.max_cycle(), "timeline --range " + range_text_);
      what = "cycles " + std::to_string(r.start) + ":" + std::to_string(r.end);
    } else if (*cycle_) {
      const uint64_t k = clamp_cycle(cycle_n_, c.max_cycle(), "timeline --cycle " + std::to_string(cycle_n_));
      r = {k, k};
      what = "cycle " + std::to_string(k);
    }
    InsnIter it;
    check(uscope_cpu_trace_entity(c.h(), &it.it, entity_, r.start, r.end), "entity");
    std::vector<Insn> v;
    uscope_insn_t i{};
    while (it.next(&i)) v.push_back(copy(t, i));
    if (v.empty())
      throw Failure("entity " + std::to_string(entity_) + " not found in " + what +
                    " (`uscope state FILE --cycle N` lists the entities live at a cycle)");
    switch (format_.get()) {
      case Format::kJson: print_json(c, v); break;
      case Format::kCsv: print_csv(c, v); break;
      case Format::kTable: print_text(c, v); break;
    }
  }
  uint32_t entity_ = 0;
  CLI::Option *range_ = nullptr, *cycle_ = nullptr;
  std::string range_text_, elf_;
  CycleRange range_cycles_;
  uint64_t cycle_n_ = 0;
  FormatOption format_;
};

}  // namespace

std::unique_ptr<Command> timeline_command() { return std::make_unique<Timeline>(); }

}  // namespace uscope_cli
