// The Kanata import (uscope_import_konata, docs/export.md "Konata (both
// ways)"): a Kanata log v0004, plain or gzip, written as a µScope trace with
// the cpu protocol, with the semantics of the reference's konata2uscope
// (seed spec "konata2uscope" §4) except where that tool loses what the log
// says (below).
//
// Two passes over the log, as konata2uscope makes: the schema must be
// declared before the first cycle is written, and it needs every lane-0
// stage name (the pipeline_stage enum) and the most instructions ever in
// flight (the entity catalog's slots). The first pass finds them and
// reports every malformed line; the second writes. Memory is bounded by the
// instructions in flight, never by the log's length.
//
// Departures from konata2uscope, each because it would lose or break data:
//  - Kanata ids are not used as catalog slots (COMPAT 27: they overflow the
//    catalog): each instruction gets a free slot, recycled once it retires;
//    a freed slot is reused last (FIFO), so a dependency on an instruction
//    that retired just before still names the right one.
//  - The fetch writes the catalog slot only: uscope_cpu_fetch would also
//    start stage 0, which a Kanata instruction enters only with its own S.
//  - A lane >= 1 stage (a stall overlay) is one annotation written when it
//    ends (E, R, or the end of the log), "stall:<stage> @<lane> +<offset>:<cycles>"
//    (its start after the fetch, its length), so that its lane and cycles
//    survive; konata2uscope writes "stall:<stage>" at its start and loses both.
//  - The clock's period is the one the timestamps use (COMPAT 29).
#include <uscope/protocols.h>
#include <uscope/uscope.h>

#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "convert/jsonl_ingest.hpp"
#include "export/export.hpp"
#include "export/kanata_log.hpp"

namespace uscope::exporter {

namespace {

using kanata::Cmd;
using kanata::Command;

// The cpu protocol's limits (include/uscope/protocols.h uscope_cpu_config_t:
// 1..255 stages, a uint16_t catalog).
constexpr size_t kMaxStages = 255;
constexpr uint32_t kMaxSlots = 0xFFFF;
// A longer line is reported and skipped: memory stays bounded.
constexpr uint64_t kMaxLineBytes = 1 << 20;
// Checkpoints every 1000 cycles, as konata2uscope writes them.
constexpr uint64_t kCheckpointCycles = 1000;

// The instruction address at the start of a disassembly label, as
// konata2uscope reads it (seed spec konata2uscope §4.2): "80000000 addi",
// "0x80000000 addi", "00001000: jal"; at least 4 hex digits, else 0.
uint64_t extract_pc(std::string_view text) {
  size_t b = text.find_first_not_of(" \t");
  if (b == std::string_view::npos) return 0;
  size_t e = text.find_first_of(" \t", b);
  std::string_view w = text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
  if (!w.empty() && w.back() == ':') w.remove_suffix(1);
  if (w.size() > 2 && w[0] == '0' && w[1] == 'x') w.remove_prefix(2);
  if (w.size() < 4 || w.size() > 16) return 0;
  uint64_t v = 0;
  for (char c : w) {
    const int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                                   : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

// One pass over the log. The same decisions are made in both passes (the
// first with no writer), so the slots, stages and skipped lines of the
// second are those the first found.
class Walker {
 public:
  Walker(const uscope_konata_import_options_t &o, bool report) : o_(o), report_(report) {}

  // Pass 2's schema: the first pass's stage names, frozen.
  void set_stages(const std::vector<std::string> &names) {
    stages_ = names;
    frozen_ = true;
  }
  void set_writer(uscope_writer_t *w, const uscope_cpu_t *cpu, uint16_t entities) {
    w_ = w;
    cpu_ = cpu;
    entities_ = entities;
  }

  void run(const char *path, Progress &progress, const char *what) {
    convert::LineReader lr(kMaxLineBytes);
    if (const auto st = lr.open_file(path)) fail(st, "%s", lr.message().c_str());
    std::string_view line;
    std::string reason;
    for (;;) {
      const auto r = lr.next(&line);
      if (r == convert::LineReader::kEnd) break;
      if (r == convert::LineReader::kError) fail(lr.status(), "%s", lr.message().c_str());
      line_ = lr.line_number();
      if ((line_ & 0xFFFF) == 0) progress.update(lr.raw_consumed(), lr.raw_size(), what);
      if (r == convert::LineReader::kTooLong) {
        issue("line longer than 1 MiB");
        continue;
      }
      Command c;
      const kanata::Parse p = kanata::parse_line(line, &c, &reason);
      if (p == kanata::Parse::Ignore) continue;
      if (!seen_command_ && (p != kanata::Parse::Ok || c.cmd != Cmd::Header))
        fail(USCOPE_ERR_CORRUPT, "line %llu: not a Kanata log: the first command is not the header \"Kanata\t%s\"",
             static_cast<unsigned long long>(line_), std::string(kanata::kVersion).c_str());
      seen_command_ = true;
      if (p == kanata::Parse::Bad) {
        issue(reason);
        continue;
      }
      command(c);
    }
    lines_ = lr.line_number();
    bytes_in_ = lr.bytes_out();
    if (!seen_command_) fail(USCOPE_ERR_CORRUPT, "not a Kanata log: no header (the file is empty)");
    finish();
  }

  const std::vector<std::string> &stages() const { return stages_; }
  uint32_t max_in_flight() const { return next_slot_; }
  uint64_t instructions() const { return instructions_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t first_issue_line() const { return first_issue_; }
  uint64_t lines() const { return lines_; }
  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t last_cycle() const { return cycle_; }

 private:
  struct Lane {
    uint64_t lane;
    std::string stage;
    uint64_t start;
  };
  struct Live {
    uint32_t slot = 0;
    uint64_t fetch = 0;
    std::vector<Lane> lanes;  // open lane >= 1 stages
  };

  void issue(const std::string &why) {
    if (!report_) return;
    ++skipped_;
    if (!first_issue_) first_issue_ = line_;
    if (o_.strict)
      fail(USCOPE_ERR_CORRUPT, "line %llu: %s (strict: stopped at the first malformed line)",
           static_cast<unsigned long long>(line_), why.c_str());
    if (o_.on_issue) o_.on_issue(o_.user, line_, why.c_str());
  }
  static std::string num(uint64_t v) { return std::to_string(v); }

  void check(uscope_status_t st) {
    if (st != USCOPE_OK) fail(st, "line %llu: writing the trace: %s", static_cast<unsigned long long>(line_),
                              uscope_last_error());
  }
  // The cycle's frame, opened on the first write of a cycle (konata2uscope
  // writes no frame for a cycle without commands).
  void frame() {
    if (!w_ || (open_ && open_cycle_ == cycle_)) return;
    if (open_) check(uscope_end_cycle(w_));
    check(uscope_begin_cycle(w_, cycle_ * o_.clock_period_ps));
    open_ = true;
    open_cycle_ = cycle_;
  }

  Live *live(uint64_t id, const char *cmd) {
    auto it = live_.find(id);
    if (it != live_.end()) return &it->second;
    issue(std::string(cmd) + ": instruction " + num(id) + " is not in flight (no I before it, or already retired)");
    return nullptr;
  }

  void close_lane(const Live &l, const Lane &s) {
    frame();
    if (!w_) return;
    // Cycles relative to the fetch: the texts repeat from one instruction to
    // the next, and the trace's string table holds each distinct one once.
    const std::string text =
        "stall:" + s.stage + " @" + num(s.lane) + " +" + num(s.start - l.fetch) + ":" + num(cycle_ - s.start);
    check(uscope_cpu_annotate(w_, cpu_, l.slot, text.c_str()));
  }

  void set_cycle(uint64_t c, const char *cmd) {
    if (c > UINT64_MAX / o_.clock_period_ps) {
      issue(std::string(cmd) + ": cycle " + num(c) + " overflows the 64-bit picosecond time at this clock period");
      return;
    }
    cycle_ = c;
  }

  void command(const Command &c) {
    switch (c.cmd) {
      case Cmd::Header:
        if (seen_header_) issue("a second Kanata header");
        else if (c.text != kanata::kVersion)
          issue("Kanata version \"" + std::string(c.text.substr(0, 16)) + "\": this reader knows version " +
                std::string(kanata::kVersion) + " (read as it)");
        seen_header_ = true;
        return;
      case Cmd::CycleAbs:
        if (c.a < cycle_) {
          issue("C=: cycle " + num(c.a) + " is before the current cycle " + num(cycle_) + " (cycles only grow)");
          return;
        }
        set_cycle(c.a, "C=");
        return;
      case Cmd::CycleDelta:
        if (c.a > UINT64_MAX - cycle_) {
          issue("C: cycle overflows 64 bits");
          return;
        }
        set_cycle(cycle_ + c.a, "C");
        return;
      case Cmd::Insn: return insn(c);
      case Cmd::Label: {
        Live *l = live(c.a, "L");
        if (!l) return;
        frame();
        if (!w_) return;
        if (c.b == kanata::kLabelName) {
          if (const uint64_t pc = extract_pc(c.text))
            check(uscope_cpu_entity_set(w_, cpu_, l->slot, USCOPE_CPU_FIELD_PC, pc));
        }
        text_.assign(c.text.data(), c.text.size());
        check(uscope_cpu_annotate(w_, cpu_, l->slot, text_.c_str()));
        return;
      }
      case Cmd::Start: return start(c);
      case Cmd::End: {
        Live *l = live(c.a, "E");
        if (!l || c.b == 0) return;  // lane 0: the next S or the R ends it (seed spec §4.1)
        // The lane's open stage of that name; none: ignored, as Konata does.
        for (size_t i = l->lanes.size(); i-- > 0;) {
          if (l->lanes[i].lane == c.b && l->lanes[i].stage == c.text) {
            close_lane(*l, l->lanes[i]);
            l->lanes.erase(l->lanes.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          }
        }
        return;
      }
      case Cmd::Retire: {
        if (c.c != kanata::kRetire && c.c != kanata::kFlush) {
          issue("R: type " + num(c.c) + " (expected 0 retire or 1 flush)");
          return;
        }
        auto it = live_.find(c.a);
        if (it == live_.end()) {
          live(c.a, "R");
          return;
        }
        Live &l = it->second;
        for (const Lane &s : l.lanes) close_lane(l, s);
        frame();
        if (w_) {
          // Kanata has no flush reason: a flush is a mispredict, as konata2uscope writes it.
          check(c.c == kanata::kRetire ? uscope_cpu_retire(w_, cpu_, l.slot)
                                       : uscope_cpu_flush(w_, cpu_, l.slot, USCOPE_CPU_FLUSH_MISPREDICT));
        }
        free_.push_back(l.slot);
        retired_[c.a] = l.slot;
        live_.erase(it);
        return;
      }
      case Cmd::Wake: {
        Live *l = live(c.a, "W");
        if (!l) return;
        uint32_t src;
        auto p = live_.find(c.b);
        if (p != live_.end()) {
          src = p->second.slot;
        } else {
          auto r = retired_.find(c.b);
          if (r == retired_.end()) {
            issue("W: producer " + num(c.b) + " is unknown (never started, or retired and its slot reused since)");
            return;
          }
          src = r->second;
        }
        frame();
        // Kanata's type 0 is a wake-up; the others are reserved: all are
        // read-after-write, as konata2uscope writes them.
        if (w_) check(uscope_cpu_dependency(w_, cpu_, src, l->slot, USCOPE_CPU_DEP_RAW));
        return;
      }
    }
  }

  void insn(const Command &c) {
    if (live_.count(c.a)) {
      issue("I: instruction " + num(c.a) + " is already in flight");
      return;
    }
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.front();
      free_.pop_front();
    } else {
      if (next_slot_ >= kMaxSlots) {
        issue("I: more than 65,535 instructions in flight (the cpu protocol's catalog limit)");
        return;
      }
      slot = next_slot_++;
      slot_owner_.push_back(0);
      slot_owned_.push_back(false);
    }
    // The slot's previous instruction can no longer be named by a W.
    if (slot_owned_[slot]) {
      auto r = retired_.find(slot_owner_[slot]);
      if (r != retired_.end() && r->second == slot) retired_.erase(r);
    }
    slot_owner_[slot] = c.a;
    slot_owned_[slot] = true;
    Live &l = live_[c.a];
    l.slot = slot;
    l.fetch = cycle_;
    ++instructions_;
    frame();
    if (w_) {
      // The catalog slot only (entity_id, pc 0 until a label gives it): no stage yet.
      check(uscope_slot_set(w_, entities_, static_cast<uint16_t>(slot), USCOPE_CPU_FIELD_ENTITY_ID, slot));
      check(uscope_slot_set(w_, entities_, static_cast<uint16_t>(slot), USCOPE_CPU_FIELD_PC, 0));
    }
  }

  void start(const Command &c) {
    Live *l = live(c.a, "S");
    if (!l) return;
    if (c.b != 0) {
      // A new stage on a lane closes the lane's open one (Konata's rule).
      for (size_t i = 0; i < l->lanes.size(); ++i) {
        if (l->lanes[i].lane == c.b) {
          close_lane(*l, l->lanes[i]);
          l->lanes.erase(l->lanes.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
      l->lanes.push_back({c.b, std::string(c.text), cycle_});
      return;
    }
    // A linear search: a pipeline has a handful of stages (at most 255), and
    // it needs no string made per line.
    size_t idx = 0;
    while (idx < stages_.size() && stages_[idx] != c.text) ++idx;
    if (idx == stages_.size()) {
      if (frozen_) return;  // reported by the first pass
      if (c.text.find(',') != std::string_view::npos) {
        issue("S: stage name \"" + std::string(c.text.substr(0, 40)) +
              "\" has a comma, which the cpu protocol's stage list cannot hold");
        return;
      }
      if (stages_.size() >= kMaxStages) {
        issue("S: more than 255 stage names (the cpu protocol's limit)");
        return;
      }
      stages_.emplace_back(c.text);
    }
    frame();
    if (w_) check(uscope_cpu_stage_transition(w_, cpu_, l->slot, static_cast<uint8_t>(idx)));
  }

  // The end of the log: lane stages still open end at its last cycle, and
  // that cycle is written (an empty frame when nothing happened in it), so
  // the stages of instructions never retired end there too.
  void finish() {
    for (auto &kv : live_)
      for (const Lane &s : kv.second.lanes) close_lane(kv.second, s);
    if (!w_) return;
    frame();
    check(uscope_end_cycle(w_));
    open_ = false;
  }

  const uscope_konata_import_options_t &o_;
  const bool report_;
  uscope_writer_t *w_ = nullptr;
  const uscope_cpu_t *cpu_ = nullptr;
  uint16_t entities_ = 0;
  uint64_t line_ = 0, lines_ = 0, bytes_in_ = 0;
  uint64_t cycle_ = 0;
  bool open_ = false;
  uint64_t open_cycle_ = 0;
  bool seen_command_ = false, seen_header_ = false;
  std::unordered_map<uint64_t, Live> live_;
  std::deque<uint32_t> free_;
  uint32_t next_slot_ = 0;
  std::vector<uint64_t> slot_owner_;
  std::vector<bool> slot_owned_;
  std::unordered_map<uint64_t, uint32_t> retired_;  // retired id -> its slot, until reused
  std::vector<std::string> stages_;
  bool frozen_ = false;
  uint64_t instructions_ = 0, skipped_ = 0, first_issue_ = 0;
  std::string text_;
};

struct SchemaGuard {
  uscope_schema_t *s = nullptr;
  uscope_cpu_t *cpu = nullptr;
  uscope_writer_t *w = nullptr;
  ~SchemaGuard() {
    if (w) (void)uscope_writer_close(w);
    uscope_cpu_free(cpu);
    uscope_schema_free(s);
  }
};

void check_open(uscope_status_t st, const char *what) {
  if (st != USCOPE_OK) fail(st, "%s: %s", what, uscope_last_error());
}

}  // namespace

void import_konata(const char *in, const char *out, const uscope_konata_import_options_t &opts,
                   uscope_convert_stats_t *stats) {
  if (opts.clock_period_ps > 0xFFFFFFFFull)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "clock period %llu ps: a µScope clock period is 32-bit (at most 4294967295)",
         static_cast<unsigned long long>(opts.clock_period_ps));
  Progress progress(opts.progress != 0, "import konata");
  try {
    // Pass 1: stage names, slots, and every malformed line.
    Walker scan(opts, true);
    scan.run(in, progress, "bytes (pass 1 of 2)");

    std::vector<const char *> names;
    for (const auto &s : scan.stages()) names.push_back(s.c_str());
    // A log without any lane-0 stage still needs one (the protocol requires
    // a stage list): a placeholder that no instruction enters.
    static const char *const kNone = "none";
    if (names.empty()) names.push_back(kNone);

    SchemaGuard g;
    check_open(uscope_schema_new(&g.s), "schema");
    uint8_t clk = 0;
    uint16_t root = 0;
    check_open(uscope_schema_add_clock(g.s, &clk, "core_clk", static_cast<uint32_t>(opts.clock_period_ps)), "clock");
    check_open(uscope_schema_add_scope(g.s, &root, "/", USCOPE_NO_PARENT, nullptr, clk), "scope");
    uscope_cpu_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "core0";
    cfg.parent_scope_id = root;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.isa = "unknown";  // a Kanata log does not say
    cfg.stages = names.data();
    cfg.num_stages = static_cast<uint16_t>(names.size());
    cfg.max_entities = static_cast<uint16_t>(std::max<uint32_t>(scan.max_in_flight(), 1));
    cfg.dut_name = opts.dut_name ? opts.dut_name : "konata";
    check_open(uscope_cpu_declare(g.s, &g.cpu, &cfg), "cpu protocol");
    uscope_cpu_ids_t ids{};
    ids.struct_size = sizeof ids;
    check_open(uscope_cpu_ids(g.cpu, &ids), "cpu protocol");

    // The writer writes the temporary file beside the output, which is
    // renamed over it only once the trace is complete.
    OutFile file(out);
    uscope_writer_options_t wo{};
    wo.struct_size = sizeof wo;
    wo.checkpoint_interval_ps = kCheckpointCycles * opts.clock_period_ps;
    wo.durability = USCOPE_DURABILITY_NONE;  // a batch conversion: fewest syscalls
    check_open(uscope_writer_open(&g.w, file.temp_path().c_str(), g.s, nullptr, 0, &wo), "opening the output");

    // Pass 2: the trace.
    Walker emit(opts, false);
    emit.set_stages(scan.stages());
    emit.set_writer(g.w, g.cpu, ids.entities);
    emit.run(in, progress, "bytes (pass 2 of 2)");
    uscope_writer_t *w = g.w;
    g.w = nullptr;
    check_open(uscope_writer_close(w), "closing the output");
    file.publish();
    progress.finish();

    if (stats) {
      uscope_convert_stats_t s{};
      s.struct_size = sizeof s;
      s.lines = scan.lines();
      s.events_in = scan.lines();
      s.events_out = scan.instructions();
      s.skipped = scan.skipped();
      s.bytes_in = scan.bytes_in();
      s.first_issue_line = scan.first_issue_line();
      const uint32_t n = std::min<uint32_t>(stats->struct_size ? stats->struct_size : sizeof s, sizeof s);
      s.struct_size = n;
      std::memcpy(stats, &s, n);
    }
  } catch (const Error &e) {
    progress.finish();
    throw Error(e.code(), std::string(in) + ": " + e.what());
  }
}

}  // namespace uscope::exporter
