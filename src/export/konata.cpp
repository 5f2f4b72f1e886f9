// The Kanata export (uscope export --to konata, docs/export.md "Konata (both
// ways)"): a cpu-protocol trace, ours or the reference's, as a Kanata log
// v0004 that Konata opens.
//
// The instructions come from the analysis layer (InsnStream: whole
// instructions with their stage spans, in fetch order); a Kanata log wants
// its commands in cycle order. An instruction's commands are therefore put
// in a min-heap keyed by cycle and written once the stream's fetch cycle has
// passed them: everything an instruction fetched later will add is at or
// after its fetch cycle. The heap holds the commands of the instructions in
// flight only, so memory is bounded by them, not by the trace.
//
// Mapping (the inverse of the import, konata_import.cpp):
//   I  one per instruction, ids 0, 1, ... in fetch order; the simulator id
//      is its sim_id, the thread 0 (the cpu protocol has no threads)
//   L  0: its disassembly (the annotation that disassembles it, else decoded
//      from inst_bits or the ELF; without any, its first annotation);
//      1: each other annotation
//   S/E  each stage span on lane 0; each "stall:<stage> @<lane> +<offset>:<cycles>"
//      annotation (the import's lane >= 1 stages) on its lane
//   W  each dependency, at the consumer's fetch cycle, producer named by its
//      entity id (the latest instruction fetched in that catalog slot)
//   R  at its last cycle: type 0 retired, 1 flushed; none while in flight
#include <algorithm>
#include <cinttypes>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "base/error.hpp"
#include "export/export.hpp"
#include "export/kanata_log.hpp"

namespace uscope::exporter {

namespace {

using analysis::Insn;
using analysis::InsnPiece;
using kanata::Cmd;
using kanata::Command;

// A lane >= 1 stage kept as an annotation by the import:
// "stall:<stage> @<lane> +<offset>:<cycles>", its start `offset` cycles
// after the fetch. False for any other text (konata2uscope's plain
// "stall:<stage>" among them).
bool parse_lane_annotation(const std::string &a, uint64_t fetch, std::string *stage, uint64_t *lane, uint64_t *start,
                           uint64_t *end) {
  if (a.compare(0, 6, "stall:") != 0) return false;
  const size_t at = a.rfind(" @");
  if (at == std::string::npos || at < 6) return false;
  unsigned long long l = 0, off = 0, len = 0;
  char tail = 0;
  if (std::sscanf(a.c_str() + at + 2, "%llu +%llu:%llu%c", &l, &off, &len, &tail) != 3 || l == 0 ||
      off > UINT64_MAX - fetch || len > UINT64_MAX - fetch - off)
    return false;
  *stage = a.substr(6, at - 6);
  *lane = l;
  *start = fetch + off;
  *end = *start + len;
  return true;
}

class Emitter {
 public:
  Emitter(analysis::CpuTrace &t, OutFile &out) : t_(t), out_(out) {}

  void add(const Insn &i) {
    flush_before(i.head.first_cycle);
    const uint64_t id = next_id_++;
    last_in_slot_[i.head.entity_id] = id;
    const uint64_t f = i.head.first_cycle;

    // I and the labels, at the fetch.
    std::string block;
    kanata::append_line(block, {Cmd::Insn, id, i.sim_id(t_.sim_id_slots()), 0, {}});
    std::vector<std::string> notes;
    struct LaneSpan {
      std::string stage;
      uint64_t lane, start, end;
    };
    std::vector<LaneSpan> lanes;
    for (uint32_t a : i.annotations) {
      const std::string &text = t_.string_at(a);
      LaneSpan ls;
      if (parse_lane_annotation(text, f, &ls.stage, &ls.lane, &ls.start, &ls.end))
        lanes.push_back(std::move(ls));
      else
        notes.push_back(text);
    }
    size_t first_note = 0;
    // inst_bits 0 is no instruction (RISC-V reserves the all-zero encoding
    // as illegal): it is what an instruction has whose writer never set
    // them (the import's) once the analysis reads it from a segment's
    // checkpoint, which holds every field.
    const bool bits = (i.head.flags & InsnPiece::kHasBits) && i.head.inst_bits != 0;
    if ((i.head.flags & InsnPiece::kDisasmAnnotation) || bits || t_.elf() || i.head.pc != 0) {
      const std::string d = t_.disasm(i);
      kanata::append_line(block, {Cmd::Label, id, kanata::kLabelName, 0, d});
    } else if (!notes.empty()) {
      kanata::append_line(block, {Cmd::Label, id, kanata::kLabelName, 0, notes[0]});
      first_note = 1;
    }
    for (size_t k = first_note; k < notes.size(); ++k)
      kanata::append_line(block, {Cmd::Label, id, kanata::kLabelDetail, 0, notes[k]});
    push(f, kGroupInsn, Kind::Text, id, 0, std::move(block));

    for (uint32_t src : i.deps) push(f, kGroupWake, Kind::Wake, id, src, {});

    // Stages, in the instruction's own order (seq) within a cycle: a stage
    // that ends when the next begins is closed before it starts.
    for (const uscope_stage_span_t &s : i.spans) {
      const std::string &name = stage_name(s.stage);
      std::string l;
      kanata::append_line(l, {Cmd::Start, id, 0, 0, name});
      push(s.start_cycle, kGroupStage, Kind::Text, id, 0, std::move(l));
      l.clear();
      kanata::append_line(l, {Cmd::End, id, 0, 0, name});
      push(s.end_cycle, kGroupStage, Kind::Text, id, 0, std::move(l));
    }
    for (const LaneSpan &s : lanes) {
      std::string l;
      kanata::append_line(l, {Cmd::Start, id, s.lane, 0, s.stage});
      push(s.start, kGroupStage, Kind::Text, id, 0, std::move(l));
      l.clear();
      kanata::append_line(l, {Cmd::End, id, s.lane, 0, s.stage});
      push(s.end, kGroupStage, Kind::Text, id, 0, std::move(l));
    }
    if (i.head.status == USCOPE_INSN_RETIRED || i.head.status == USCOPE_INSN_FLUSHED)
      push(i.head.last_cycle, kGroupRetire, Kind::Retire, id, i.head.status == USCOPE_INSN_FLUSHED, {});
  }

  void finish(uint64_t start) {
    flush_before(UINT64_MAX);
    if (!started_) write_cycle(start);
  }
  uint64_t unresolved_deps() const { return unresolved_; }

 private:
  enum class Kind : uint8_t { Text, Wake, Retire };
  // Order within a cycle: every I first (a W may name an instruction
  // fetched in the same cycle), then the W, then the stages, then the R.
  static constexpr uint8_t kGroupInsn = 0, kGroupWake = 1, kGroupStage = 2, kGroupRetire = 3;
  struct Pending {
    uint64_t cycle;
    uint8_t group;
    Kind kind;
    uint64_t seq;
    uint64_t id, arg;
    std::string text;
  };
  struct Later {
    bool operator()(const Pending &a, const Pending &b) const {
      if (a.cycle != b.cycle) return a.cycle > b.cycle;
      if (a.group != b.group) return a.group > b.group;
      return a.seq > b.seq;
    }
  };

  const std::string &stage_name(uint32_t s) {
    const auto &names = t_.stage_names();
    if (s < names.size()) return names[s];
    unnamed_ = "stage" + std::to_string(s);
    return unnamed_;
  }

  void push(uint64_t cycle, uint8_t group, Kind kind, uint64_t id, uint64_t arg, std::string text) {
    heap_.push({cycle, group, kind, seq_++, id, arg, std::move(text)});
  }

  void write_cycle(uint64_t c) {
    std::string &b = out_.buf();
    if (!started_) {
      kanata::append_line(b, {Cmd::CycleAbs, c, 0, 0, {}});
      started_ = true;
    } else if (c > cycle_) {
      kanata::append_line(b, {Cmd::CycleDelta, c - cycle_, 0, 0, {}});
    }
    cycle_ = c;
  }

  void flush_before(uint64_t cycle) {
    while (!heap_.empty() && heap_.top().cycle < cycle) {
      const Pending &p = heap_.top();
      write_cycle(p.cycle);
      std::string &b = out_.buf();
      switch (p.kind) {
        case Kind::Text: b += p.text; break;
        case Kind::Wake: {
          auto it = last_in_slot_.find(static_cast<uint32_t>(p.arg));
          if (it == last_in_slot_.end()) {
            ++unresolved_;
            break;
          }
          kanata::append_line(b, {Cmd::Wake, p.id, it->second, 0, {}});
          break;
        }
        case Kind::Retire:
          // The retirement id is the serial number of the retired ones
          // (format doc "R"); a flushed one carries the next.
          kanata::append_line(b, {Cmd::Retire, p.id, retired_, p.arg ? kanata::kFlush : kanata::kRetire, {}});
          if (!p.arg) ++retired_;
          break;
      }
      heap_.pop();
      out_.maybe_flush();
    }
  }

  analysis::CpuTrace &t_;
  OutFile &out_;
  std::priority_queue<Pending, std::vector<Pending>, Later> heap_;
  std::unordered_map<uint32_t, uint64_t> last_in_slot_;  // entity id -> Kanata id of its latest instruction
  uint64_t next_id_ = 0, seq_ = 0, retired_ = 0, unresolved_ = 0;
  uint64_t cycle_ = 0;
  bool started_ = false;
  std::string unnamed_;
};

}  // namespace

void export_konata(Job &job) {
  uscope_cpu_trace_options_t to{};
  to.struct_size = sizeof to;
  to.scope = job.opts.scope;
  to.elf_path = job.opts.elf_path;
  analysis::CpuTrace t(*job.reader, to);

  const uint64_t max_cycle = t.max_cycle();
  if (job.opts.range_start > max_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "--range starts at cycle %" PRIu64 ", after the trace's last cycle %" PRIu64,
         job.opts.range_start, max_cycle);
  const uint64_t start = job.opts.range_start, end = std::min(job.opts.range_end, max_cycle);
  job.stats.first_cycle = start;
  job.stats.last_cycle = end;

  OutFile out(job.output);
  kanata::append_line(out.buf(), {Cmd::Header, 0, 0, 0, kanata::kVersion});
  Emitter e(t, out);
  analysis::InsnStream stream(t, start, end, std::nullopt);
  uint64_t n = 0;
  while (const Insn *i = stream.next()) {
    e.add(*i);
    if ((++n & 0xFFF) == 0 && job.progress)
      job.progress->update(std::max(i->head.first_cycle, start) - start, end - start + 1, "cycles");
  }
  e.finish(start);
  if (e.unresolved_deps())
    job.note(std::to_string(e.unresolved_deps()) +
             " dependencies name a producer outside the exported instructions: left out (no W)");
  job.stats.records = n;
  job.stats.bytes_out = out.bytes();
  out.publish();
}

}  // namespace uscope::exporter
