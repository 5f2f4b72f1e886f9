// What the cpu commands share (timeline, counters, buffers, analyze, and the
// cpu parts of info and state): the cpu analysis of <uscope/analysis.h> as a
// handle with throwing accessors, cycle ranges (--range A:B) clamped to the
// trace with a warning, and the names the output gives to numbers (retire
// status, pointer roles, field types). Built on the public C API only.
#pragma once

#include <uscope/analysis.h>
#include <uscope/uscope.h>

#include <memory>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace uscope_cli {

// The cpu analysis of an open trace. A trace without a cpu protocol scope
// throws Failure("this trace has no cpu protocol scope"), the message every
// cpu command gives (exit 1).
class CpuTrace {
 public:
  // elf: --elf FILE, or "" (the trace's cpu.elf_path, if any).
  explicit CpuTrace(const Trace &t, const std::string &elf = "");
  ~CpuTrace() { uscope_cpu_trace_close(h_); }
  CpuTrace(const CpuTrace &) = delete;
  CpuTrace &operator=(const CpuTrace &) = delete;

  uscope_cpu_trace_t *h() const { return h_; }
  const uscope_cpu_trace_info_t &info() const { return info_; }
  uint64_t max_cycle() const { return info_.max_cycle; }
  // Stage index -> its name ("stage_N" when the enum has none).
  std::string stage(uint32_t index) const;
  std::vector<std::string> stage_names() const;
  std::vector<uscope_counter_info_t> counters() const;
  std::vector<uscope_buffer_info_t> buffers() const;
  // The reference's metadata list: (key, value) pairs.
  std::vector<std::pair<std::string, std::string>> metadata() const;

 private:
  uscope_cpu_trace_t *h_ = nullptr;
  uscope_cpu_trace_info_t info_{};
};

// Whether the trace has a cpu protocol scope (info and state work without one).
bool has_cpu_scope(const Trace &t);
// For info and state, which work on any trace: the cpu analysis when the
// trace has a cpu scope, else null; a cpu scope the analysis cannot read (it
// lacks what the protocol requires) is a warning on stderr naming path, and null.
std::unique_ptr<CpuTrace> optional_cpu(const Trace &t, const std::string &path);

// --range A:B, both whole decimal numbers, A <= B; else Usage naming option.
struct CycleRange {
  uint64_t start = 0, end = 0;
};
CycleRange parse_range(const std::string &text, const std::string &option);

// A cycle past the trace's last one is the last one, with a warning on
// stderr naming what was asked (what: "buffers --cycle 99").
uint64_t clamp_cycle(uint64_t cycle, uint64_t max_cycle, const std::string &what);
// A range reaching past the last cycle is cut there, with a warning (what:
// "counters --range 0:99"); one starting past it becomes [max, max].
CycleRange clamp_range(CycleRange r, uint64_t max_cycle, const std::string &what);

// Names of numbers, as the reference CLI prints them.
const char *retire_status_name(uint32_t status);  // "retired", "flushed", "in_flight"
const char *role_name(uint8_t role);              // "HEAD_PTR", "TAIL_PTR", "plain"
std::string field_type_name(uint8_t type);        // "u32", "string_ref", "enum", ...

// Items matching a --counter / --buffer filter as the reference matches
// them: the exact name when one has it, else every name containing the
// filter. None: Failure naming the known ones (kind: "counter", "buffer").
std::vector<uint32_t> match_names(const std::vector<std::string> &names, const std::string &filter,
                                  const char *kind);

// The C API's iterator of instructions, freed on scope exit.
struct InsnIter {
  uscope_insn_iter_t *it = nullptr;
  ~InsnIter() { uscope_insn_iter_free(it); }
  // Fills *out; false at the end; throws on an error.
  bool next(uscope_insn_t *out) {
    const uscope_status_t s = uscope_insn_iter_next(it, out);
    if (s == USCOPE_DONE) return false;
    check(s, "instructions");
    return true;
  }
};

// The buffers' state at a cycle, freed on scope exit.
struct BufferState {
  uscope_buffer_state_t *s = nullptr;
  BufferState(const CpuTrace &c, uint64_t cycle) { check(uscope_cpu_trace_buffers_at(c.h(), &s, cycle), "buffers_at"); }
  ~BufferState() { uscope_buffer_state_free(s); }
  BufferState(const BufferState &) = delete;
  BufferState &operator=(const BufferState &) = delete;
};

// One buffer at a cycle, as state and buffers print it: the reference's
// BufferOutput {name, capacity, occupied, slots[{slot, fields, entity_fields}],
// properties[{name, value, role}]} plus fill_percent, pairs[{pair_id, head,
// tail, head_name, tail_name, distance}] and, per slot, named_fields (each
// field by its name, its value by name: enum names, string-table text).
void buffer_json(Json &j, const Trace &t, const BufferState &st, const uscope_buffer_info_t &b, uint32_t index);
// The same as text: "--- rob (capacity=8, occupied=3, fill=37.5%) ---", the
// properties with their roles, the pointer pairs, one line per slot.
void buffer_text(const Trace &t, const BufferState &st, const uscope_buffer_info_t &b, uint32_t index);

}  // namespace uscope_cli
