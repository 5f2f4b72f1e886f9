// The firmware profile shared by the NYTProf and HPCToolkit exporters
// (issue 14, §3 and §4): the retired instructions of a cpu trace window,
// walked in retire order, with their cycles attributed to (function, file,
// line) under a calling-context tree rebuilt from the calls and returns the
// ISA makes visible.
//
// Cycles. Each retired instruction is given the cycles since the previous
// retirement in the window; the first one is given the cycles since the
// window's start. So the cycles of all instructions add up to
// (last retire cycle - window start), the window's "retired cycles": pipeline
// fill, stalls and flushed work are charged to the instruction whose
// retirement ended them, which is where a sampling profiler on the real core
// would see the time too. An instruction retiring at an earlier cycle than
// the one before it (out-of-order commit) is given 0, so the sum stays exact.
// Instructions retired in [start, end] count; flushed ones never do.
//
// Calls and returns (RISC-V; the unprivileged spec's "return-address stack"
// hints of JAL/JALR): jal/jalr writing x1 (ra) or x5 (t0), c.jal and c.jalr
// are calls; jalr x0 through x1 or x5 (`ret`, c.jr ra) is a return. The
// callee's frame opens at the next retired instruction, with the call's
// source line as its call site. A pc that lands in another function without
// a call or a return is resolved so that the tree stays right on real code:
// the function of a frame further up the stack (longjmp, an unwound frame)
// unwinds to it; anything else (a tail call `j f`, a jump at a function's
// start, an interrupt handler) replaces the top frame with the new function
// under the same caller and call site, so its return goes where the
// replaced frame's would.
//
// Functions are the symbol-table function around the pc (objdump's name,
// the containing function, not an inlined one, so that inlining does not
// break frames); lines are DWARF's (ElfInfo::locate: the inlined source's
// file and line when inlined).
//
// Memory: one entry per distinct (node, file, line) and per node, bounded by
// the firmware's code and call paths, not by the trace length; recursion
// deeper than kMaxDepth frames is folded into the deepest frame.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace uscope::analysis {
class CpuTrace;
class ElfInfo;
}  // namespace uscope::analysis

namespace uscope::exporter {

class Progress;

class FwProfile {
 public:
  static constexpr uint32_t kMaxDepth = 512;
  static constexpr uint32_t kRoot = 0;  // node 0: the window's outside, no function

  struct Function {
    std::string name;  // the symbol ("acc"); "<unknown>" for pcs no symbol covers
    uint32_t file = 0;  // index in files(): the file of its first line seen
    uint32_t first_line = 0, last_line = 0;  // the lines of that file seen in it (0: none)
  };
  struct Node {
    uint32_t parent = kRoot;
    uint32_t function = UINT32_MAX;  // UINT32_MAX for the root
    // The call site: the line of the parent's call instruction (0 for a
    // frame the window opened in, or entered without a call from the root).
    uint32_t call_file = 0, call_line = 0;
    uint32_t depth = 0;
    uint64_t calls = 0;  // times entered (a call, a tail call or a jump in)
    uint64_t exclusive_cycles = 0;
    uint64_t inclusive_cycles = 0;  // itself and its subtree (filled by run())
    uint64_t instructions = 0;
  };
  struct Line {
    uint32_t node, file, line;  // line 0: no line information
    uint64_t cycles = 0, instructions = 0;
  };
  // What the hook sees for each retired instruction, in retire order.
  struct Retired {
    uint64_t cycle;   // its retire cycle
    uint64_t cycles;  // the cycles given to it
    uint64_t pc;
    uint32_t node, file, line;
  };
  using Hook = std::function<void(const Retired &)>;

  // Throws Error(USCOPE_ERR_INVALID_ARGUMENT) when the trace has no ELF in
  // use (the message says how to give one, and why the trace's own is not
  // used).
  explicit FwProfile(analysis::CpuTrace &t);

  // Profiles the instructions retired in [start, end] (cycles; end within
  // the trace). Call once. hook (optional) runs for each of them.
  void run(uint64_t start, uint64_t end, const Hook &hook = {}, Progress *progress = nullptr);

  const std::vector<std::string> &files() const { return files_; }  // index 0: "" (unknown)
  const std::vector<Function> &functions() const { return functions_; }
  const std::vector<Node> &nodes() const { return nodes_; }
  // Sorted by (node, file, line).
  const std::vector<Line> &lines() const { return lines_; }
  uint64_t start() const { return start_; }
  uint64_t last_retire() const { return last_retire_; }    // start() when none retired
  uint64_t retired() const { return retired_; }            // instructions
  uint64_t total_cycles() const { return last_retire_ - start_; }
  uint64_t unknown_pcs() const { return unknown_; }        // retired at pcs no symbol covers
  // Stall events per stall_reason value in the window (InsnStream::stalls),
  // once run() has returned.
  const std::vector<uint64_t> &stalls() const { return stalls_; }

 private:
  struct PcInfo {
    uint32_t function, file, line;
    bool entry;    // the function's symbol starts at pc
    bool unknown;  // no symbol covers pc
    uint8_t kind;  // kPlain / kCall / kReturn
    uint8_t length;  // instruction bytes (0: unknown)
  };
  const PcInfo &info(uint64_t pc, uint32_t bits, bool has_bits);
  uint32_t file_id(const std::string &f);
  uint32_t function_id(const std::string &name);
  uint32_t child(uint32_t parent, uint32_t function, uint32_t call_file, uint32_t call_line);

  analysis::CpuTrace &t_;
  analysis::ElfInfo *elf_;
  bool rv64_ = false;
  std::vector<std::string> files_;
  std::unordered_map<std::string, uint32_t> file_ids_, function_ids_;
  std::vector<Function> functions_;
  std::vector<Node> nodes_;
  struct ChildKey {
    uint32_t parent, function, call_file, call_line;
    bool operator==(const ChildKey &o) const {
      return parent == o.parent && function == o.function && call_file == o.call_file && call_line == o.call_line;
    }
  };
  struct ChildHash {
    size_t operator()(const ChildKey &k) const {
      uint64_t h = k.parent * 0x9E3779B97F4A7C15ull ^ (uint64_t{k.function} << 32 | k.call_line);
      h ^= uint64_t{k.call_file} * 0xC2B2AE3D27D4EB4Full;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<ChildKey, uint32_t, ChildHash> children_;
  struct LineKeyHash {
    size_t operator()(const std::pair<uint64_t, uint32_t> &k) const {
      const uint64_t h = k.first * 0x9E3779B97F4A7C15ull ^ k.second;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  // (node << 32 | file, line) -> index in lines_
  std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, LineKeyHash> line_ids_;
  std::vector<Line> lines_;
  std::unordered_map<uint64_t, PcInfo> pcs_;
  uint64_t start_ = 0, last_retire_ = 0, retired_ = 0, unknown_ = 0;
  std::vector<uint64_t> stalls_;
  bool ran_ = false;
};

}  // namespace uscope::exporter
