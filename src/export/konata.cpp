// The Kanata export (uscope export --to konata, docs/export.md "Konata (both
// ways)"): a cpu-protocol trace, ours or the reference's, as a Kanata log
// v0004 that Konata opens.
//
// The instructions come from the analysis layer (InsnStream: whole
// instructions with their stage spans, in fetch order); a Kanata log wants
// its commands in cycle order. An instruction's commands are therefore put
// (but its I and labels, written at once) in a priority queue keyed by
// cycle (a calendar queue: a ring of per-cycle buckets, a heap for the far
// ones) and written once the stream's fetch cycle has passed them:
// everything an instruction fetched later will add is at or after its fetch
// cycle. The queue holds the commands of the instructions in flight only,
// so memory is bounded by them, not by the trace. The instructions are
// decoded and disassembled on a worker (InsnPrefetch) meanwhile.
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
#include <deque>
#include <unordered_map>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "analysis/insn_prefetch.hpp"
#include "base/error.hpp"
#include "export/export.hpp"
#include "export/kanata_log.hpp"

namespace uscope::exporter {

namespace {

using analysis::InsnView;
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

  // disasm: the instruction's disassembly (CpuTrace::disasm).
  void add(const InsnView &i, std::string_view disasm) {
    const uint64_t f = i.head.first_cycle;
    flush_before(f);
    const uint64_t id = next_id_++;
    remember_producer(i.head.entity_id, id);

    // I and the labels, written at once: every command of an earlier cycle
    // is out, and in its fetch cycle an I comes before anything else.
    write_cycle(f);
    line({Cmd::Insn, id, i.sim_id(t_.sim_id_slots()), 0, {}});
    notes_.clear();
    lanes_.clear();
    for (uint32_t a : i.annotations) {
      const std::string &text = t_.string_at(a);
      LaneSpan ls;
      if (parse_lane_annotation(text, f, &stage_, &ls.lane, &ls.start, &ls.end)) {
        ls.name = lane_name(stage_);
        lanes_.push_back(ls);
      } else {
        notes_.push_back(&text);
      }
    }
    size_t first_note = 0;
    // inst_bits 0 is no instruction (RISC-V reserves the all-zero encoding
    // as illegal): it is what an instruction has whose writer never set
    // them (the import's) once the analysis reads it from a segment's
    // checkpoint, which holds every field.
    const bool bits = (i.head.flags & InsnPiece::kHasBits) && i.head.inst_bits != 0;
    if ((i.head.flags & InsnPiece::kDisasmAnnotation) || bits || t_.elf() || i.head.pc != 0) {
      line({Cmd::Label, id, kanata::kLabelName, 0, disasm});
    } else if (!notes_.empty()) {
      line({Cmd::Label, id, kanata::kLabelName, 0, *notes_[0]});
      first_note = 1;
    }
    for (size_t k = first_note; k < notes_.size(); ++k)
      line({Cmd::Label, id, kanata::kLabelDetail, 0, *notes_[k]});
    // Lane-0 stages. Its first one starting at the fetch is written now; a
    // stage that ends where the next begins (the analysis layer's spans
    // always do) is one heap entry for the E and the S: half the entries.
    size_t k0 = 0;
    const auto &sp = i.spans;
    if (!sp.empty() && sp[0].start_cycle == f) {
      stage_line(Cmd::Start, id, sp[0].stage);
      k0 = 1;
    }

    for (uint32_t src : i.deps) push(f, kGroupWake, Kind::Wake, id, src, 0);
    for (size_t k = k0; k < sp.size(); ++k) {
      if (k > 0 && sp[k - 1].end_cycle == sp[k].start_cycle) {
        push(sp[k].start_cycle, kGroupStage, Kind::Next, id, sp[k - 1].stage, sp[k].stage);
      } else {
        if (k > 0) push(sp[k - 1].end_cycle, kGroupStage, Kind::End, id, sp[k - 1].stage, 0);
        push(sp[k].start_cycle, kGroupStage, Kind::Start, id, sp[k].stage, 0);
      }
    }
    if (!sp.empty()) push(sp.back().end_cycle, kGroupStage, Kind::End, id, sp.back().stage, 0);
    for (const LaneSpan &ls : lanes_) {
      push(ls.start, kGroupStage, Kind::StartLane, id, ls.name, ls.lane);
      push(ls.end, kGroupStage, Kind::EndLane, id, ls.name, ls.lane);
    }
    if (i.head.status == USCOPE_INSN_RETIRED || i.head.status == USCOPE_INSN_FLUSHED)
      push(i.head.last_cycle, kGroupRetire, Kind::Retire, id, i.head.status == USCOPE_INSN_FLUSHED, 0);
  }

  void finish(uint64_t start) {
    flush_before(UINT64_MAX);
    if (!started_) write_cycle(start);
    raw_.finish();
  }
  uint64_t unresolved_deps() const { return unresolved_; }

 private:
  enum class Kind : uint8_t { Wake, Start, End, Next, StartLane, EndLane, Retire };
  // Order within a cycle after the I lines: the W, then the stages, then
  // the R; within a group, the order they were made in.
  static constexpr uint64_t kGroupWake = 1, kGroupStage = 2, kGroupRetire = 3;
  // A pending command, plain data so that the heap moves little: its text
  // is made when it is written.
  struct Pending {
    uint64_t cycle;
    uint64_t order;  // group << 56 | seq
    uint64_t id;
    uint64_t lane;  // the lane (StartLane, EndLane); the stage started (Next)
    uint32_t arg;   // stage (ended, for Next), lane name, producer entity id, flushed
    Kind kind;
  };
  struct Later {
    bool operator()(const Pending &a, const Pending &b) const {
      return a.cycle != b.cycle ? a.cycle > b.cycle : a.order > b.order;
    }
  };
  static constexpr uint64_t kGroups = 3;
  static constexpr uint64_t kRing = 1024, kRingMask = kRing - 1;
  struct Bucket {
    std::vector<Pending> group[kGroups];
  };
  static bool bucket_empty(const Bucket &b) {
    return b.group[0].empty() && b.group[1].empty() && b.group[2].empty();
  }
  struct LaneSpan {
    uint32_t name;
    uint64_t lane, start, end;
  };

  const std::string &stage_name(uint32_t s) {
    const auto &names = t_.stage_names();
    if (s < names.size()) return names[s];
    unnamed_ = "stage" + std::to_string(s);
    return unnamed_;
  }
  // Lane stage names, interned (a handful: Konata's stall overlays).
  uint32_t lane_name(const std::string &n) {
    for (size_t k = 0; k < lane_names_.size(); ++k)
      if (lane_names_[k] == n) return static_cast<uint32_t>(k);
    lane_names_.push_back(n);
    return static_cast<uint32_t>(lane_names_.size() - 1);
  }

  // Lines are formatted in place (RawOut): a log is tens of millions of them.
  void line(const kanata::Command &c) {
    raw_.commit(kanata::format_line(raw_.room(kanata::max_line_size(c)), c, &ids_));
  }

  // A lane-0 S or E line: most of a log's lines. Everything after its id
  // ("\t0\t<stage>\n") depends on the stage only, so it is formatted once
  // per stage, by format_line itself, and copied after the id.
  void stage_line(Cmd cmd, uint64_t id, uint32_t stage) {
    if (stage >= kCachedStages) {  // a value from the trace: no table that large
      line({cmd, id, 0, 0, stage_name(stage)});
      return;
    }
    if (stage >= tails_.size()) tails_.resize(stage + 1);
    std::string &tail = tails_[stage];
    if (tail.empty()) {
      const std::string &name = stage_name(stage);
      std::string l;
      kanata::append_line(l, {Cmd::Start, 0, 0, 0, name});
      tail = l.substr(l.find('\t', 2));  // past "S\t0"
    }
    char *p = raw_.room(2 + 20 + tail.size());
    p[0] = cmd == Cmd::Start ? 'S' : 'E';
    p[1] = '\t';
    p = ids_.put(p + 2, id);
    std::memcpy(p, tail.data(), tail.size());
    raw_.commit(p + tail.size());
  }

  // A command is put in the bucket of its cycle when that lies within kRing
  // cycles of the first unwritten one (nearly all: stages last a few
  // cycles), else in the heap: a calendar queue, O(1) for the common case.
  void push(uint64_t cycle, uint64_t group, Kind kind, uint64_t id, uint32_t arg, uint64_t lane) {
    const Pending p{cycle, group << 56 | (seq_++ & ((uint64_t{1} << 56) - 1)), id, lane, arg, kind};
    if (cycle >= base_ && cycle - base_ < kRing) {
      ring_[cycle & kRingMask].group[group - 1].push_back(p);
      ++in_ring_;
    } else {
      heap_.push(p);
    }
  }

  void write_cycle(uint64_t c) {
    if (!started_) {
      line({Cmd::CycleAbs, c, 0, 0, {}});
      started_ = true;
    } else if (c > cycle_) {
      line({Cmd::CycleDelta, c - cycle_, 0, 0, {}});
    }
    cycle_ = c;
  }

  // Writes every pending command of the cycles before `cycle`, in order.
  void flush_before(uint64_t cycle) {
    for (;;) {
      // The next cycle with commands: the first non-empty bucket at or after
      // base_, or the heap's earliest, whichever comes first.
      uint64_t c = UINT64_MAX;
      if (in_ring_) {
        c = base_;
        while (bucket_empty(ring_[c & kRingMask])) ++c;
      }
      if (!heap_.empty()) c = std::min(c, heap_.top().cycle);
      if (c == UINT64_MAX || c >= cycle) break;
      write_cycle(c);
      Bucket *b = c >= base_ && c - base_ < kRing ? &ring_[c & kRingMask] : nullptr;
      for (uint64_t g = 0; g < kGroups; ++g) {
        // The bucket's commands of group g are in the order they were made;
        // the heap's of the same cycle and group merge in by that order.
        std::vector<Pending> *v = b ? &b->group[g] : nullptr;
        size_t i = 0;
        for (;;) {
          const bool from_heap = !heap_.empty() && heap_.top().cycle == c && (heap_.top().order >> 56) == g + 1;
          if (v && i < v->size() && (!from_heap || (*v)[i].order < heap_.top().order)) {
            write((*v)[i++]);
          } else if (from_heap) {
            const Pending p = heap_.top();
            heap_.pop();
            write(p);
          } else {
            break;
          }
        }
        if (v) {
          in_ring_ -= v->size();
          v->clear();
        }
      }
      base_ = std::max(base_, c + 1);
    }
    if (cycle != UINT64_MAX) base_ = std::max(base_, cycle);
  }

  void write(const Pending &p) {
    switch (p.kind) {
      case Kind::Wake: {
        auto it = last_in_slot_.find(p.arg);
        if (it == last_in_slot_.end()) {
          ++unresolved_;
          break;
        }
        line({Cmd::Wake, p.id, it->second, 0, {}});
        break;
      }
      case Kind::Start:
      case Kind::End:
        stage_line(p.kind == Kind::Start ? Cmd::Start : Cmd::End, p.id, p.arg);
        break;
      case Kind::Next:
        stage_line(Cmd::End, p.id, p.arg);
        stage_line(Cmd::Start, p.id, static_cast<uint32_t>(p.lane));
        break;
      case Kind::StartLane:
      case Kind::EndLane:
        line({p.kind == Kind::StartLane ? Cmd::Start : Cmd::End, p.id, p.lane, 0, lane_names_[p.arg]});
        break;
      case Kind::Retire:
        // The retirement id is the serial number of the retired ones
        // (format doc "R"); a flushed one carries the next.
        line({Cmd::Retire, p.id, retired_, p.arg ? kanata::kFlush : kanata::kRetire, {}});
        if (!p.arg) ++retired_;
        break;
    }
  }

  // The producers a W can name: the latest instruction of each entity id,
  // among the last kProducers fetched. Entity ids may be unique per
  // instruction (the reference's konata2uscope writes Kanata ids, a sim id
  // writer its serial numbers): a map of every id ever seen grew with the
  // trace (1.2 GB for 28M instructions). A dependency on an instruction
  // fetched earlier than that is left out and counted (the note below).
  static constexpr size_t kProducers = size_t{1} << 18;
  void remember_producer(uint32_t entity, uint64_t id) {
    last_in_slot_[entity] = id;
    recent_.emplace_back(entity, id);
    if (recent_.size() > kProducers) {
      const auto [e, old] = recent_.front();
      recent_.pop_front();
      auto it = last_in_slot_.find(e);
      if (it != last_in_slot_.end() && it->second == old) last_in_slot_.erase(it);
    }
  }

  analysis::CpuTrace &t_;
  OutFile &out_;
  std::deque<std::pair<uint32_t, uint64_t>> recent_;  // (entity id, Kanata id) of the last kProducers fetched
  std::priority_queue<Pending, std::vector<Pending>, Later> heap_;  // commands past the ring
  std::vector<Bucket> ring_ = std::vector<Bucket>(kRing);
  uint64_t base_ = 0;  // every command of a cycle before it is written
  size_t in_ring_ = 0;
  std::unordered_map<uint32_t, uint64_t> last_in_slot_;  // entity id -> Kanata id of its latest instruction
  uint64_t next_id_ = 0, seq_ = 0, retired_ = 0, unresolved_ = 0;
  uint64_t cycle_ = 0;
  bool started_ = false;
  std::string unnamed_, stage_;
  static constexpr uint32_t kCachedStages = 256;
  std::vector<std::string> tails_;  // per stage: its S/E lines' text after the id
  std::vector<std::string> lane_names_;
  std::vector<const std::string *> notes_;
  std::vector<LaneSpan> lanes_;
  RawOut raw_{out_};
  kanata::IdDecimals ids_;
};

}  // namespace

void export_konata(Job &job) {
  uscope_cpu_trace_options_t to{};
  to.struct_size = sizeof to;
  to.scope = job.opts.scope;
  to.elf_path = job.opts.elf_path;
  to.cache_segments = analysis::kStreamCacheSegments;  // read through a stream only
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
  // Decoded and disassembled on a worker while this thread writes; the
  // emitter reads only what CpuTrace holds fixed after its construction
  // (stage names, the string table, sim_id's slots).
  analysis::InsnPrefetch stream(t, start, end, true);
  uint64_t n = 0;
  while (const InsnView *i = stream.next()) {
    e.add(*i, stream.disasm());
    if ((++n & 0xFFF) == 0 && job.progress)
      job.progress->update(std::max(i->head.first_cycle, start) - start, end - start + 1, "cycles");
  }
  e.finish(start);
  if (e.unresolved_deps())
    job.note(std::to_string(e.unresolved_deps()) +
             " dependencies name a producer outside the exported instructions (or fetched more than 262,144 instructions before them): left out (no W)");
  job.stats.records = n;
  job.stats.bytes_out = out.bytes();
  out.publish();
}

}  // namespace uscope::exporter
