#include "export/fw_profile.hpp"

#include <algorithm>

#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "analysis/insn_prefetch.hpp"
#include "base/error.hpp"
#include "export/export.hpp"

namespace uscope::exporter {

namespace {

constexpr uint8_t kPlain = 0, kCall = 1, kReturn = 2;

// x1 (ra) and x5 (t0): the link registers of the RISC-V unprivileged spec's
// JAL/JALR return-address-stack hints (§2.5 "Control Transfer Instructions").
bool is_link(uint32_t r) { return r == 1 || r == 5; }

// The control-transfer kind of one encoding (bits holds its 2 or 4 bytes).
uint8_t kind_of(uint32_t bits, bool rv64) {
  if ((bits & 3) == 3) {
    const uint32_t opcode = bits & 0x7f, rd = (bits >> 7) & 31, rs1 = (bits >> 15) & 31;
    if (opcode == 0x6f) return is_link(rd) ? kCall : kPlain;  // JAL
    if (opcode == 0x67 && ((bits >> 12) & 7) == 0) {          // JALR
      if (is_link(rd)) return kCall;
      if (rd == 0 && is_link(rs1)) return kReturn;
    }
    return kPlain;
  }
  // The C extension ("RVC Instruction Set Listings").
  const uint32_t quadrant = bits & 3, funct3 = (bits >> 13) & 7;
  if (quadrant == 1 && funct3 == 1 && !rv64) return kCall;  // C.JAL (RV32 only; C.ADDIW on RV64)
  if (quadrant == 2 && funct3 == 4 && ((bits >> 2) & 31) == 0) {
    const uint32_t rs1 = (bits >> 7) & 31;
    if (rs1 == 0) return kPlain;                // C.EBREAK / reserved
    if ((bits >> 12) & 1) return kCall;         // C.JALR: writes ra
    return is_link(rs1) ? kReturn : kPlain;     // C.JR
  }
  return kPlain;
}

}  // namespace

FwProfile::FwProfile(analysis::CpuTrace &t) : t_(t), elf_(t.elf()) {
  if (!elf_) {
    std::string why = t.elf_path().empty() ? "the trace names no cpu.elf_path"
                                           : "the trace's cpu.elf_path is not usable: " + t.elf_note();
    fail(USCOPE_ERR_INVALID_ARGUMENT,
         "the firmware profile needs the program's ELF for functions and source lines: give it with --elf FILE (%s)",
         why.c_str());
  }
  if (!elf_->has_symbols())
    fail(USCOPE_ERR_INVALID_ARGUMENT,
         "the ELF %s has no symbols and no line table: the firmware profile needs an unstripped ELF (built with -g)",
         t.elf_path().c_str());
  rv64_ = elf_->xlen() == analysis::Xlen::k64;
  files_.emplace_back();
  file_ids_.emplace("", 0);
  nodes_.emplace_back();  // the root
}

uint32_t FwProfile::file_id(const std::string &f) {
  auto it = file_ids_.find(f);
  if (it != file_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(files_.size());
  files_.push_back(f);
  file_ids_.emplace(f, id);
  return id;
}

uint32_t FwProfile::function_id(const std::string &name) {
  auto it = function_ids_.find(name);
  if (it != function_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(functions_.size());
  functions_.push_back(Function{name, 0, 0, 0});
  function_ids_.emplace(name, id);
  return id;
}

const FwProfile::PcInfo &FwProfile::info(uint64_t pc, uint32_t bits, bool has_bits) {
  auto it = pcs_.find(pc);
  if (it != pcs_.end()) return it->second;
  PcInfo pi{};
  // The containing symbol as objdump names it ("f", "f+0x1c"): its name is
  // the frame's function, and no offset means pc is the symbol's start.
  std::string sym = elf_->symbol_at(pc);
  const size_t cut = sym.find_first_of("+-", 1);
  pi.entry = !sym.empty() && cut == std::string::npos;
  if (cut != std::string::npos) {
    // Below the first symbol ("_start-0x4") there is no containing function.
    if (sym[cut] == '-') sym.clear();
    else sym.resize(cut);
  }
  const analysis::SourceLine &loc = elf_->locate(pc);
  if (sym.empty()) sym = loc.function;
  // objdump names any address after the last symbol "last+off": a pc
  // outside the ELF's loaded image is in no function of it (another
  // program's ELF, code loaded at run time).
  size_t avail = 0;
  const uint8_t *code = elf_->code_at(pc, &avail);
  if (!code) sym.clear();
  pi.unknown = sym.empty();
  pi.function = function_id(sym.empty() ? "<unknown>" : sym);
  pi.file = file_id(loc.file);
  pi.line = loc.file.empty() ? 0 : loc.line;
  if (!has_bits) {
    const uint8_t *p = code;
    if (p && avail >= 2) {
      bits = p[0] | uint32_t{p[1]} << 8;
      if ((bits & 3) == 3 && avail >= 4) bits |= uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
      has_bits = (bits & 3) != 3 || avail >= 4;
    }
  }
  pi.kind = has_bits ? kind_of(bits, rv64_) : kPlain;
  pi.length = has_bits ? ((bits & 3) == 3 ? 4 : 2) : 0;
  // The cache is bounded by the code the firmware runs; a pathological trace
  // (pcs everywhere) starts it afresh rather than growing without end.
  if (pcs_.size() >= (1u << 20)) pcs_.clear();
  return pcs_.emplace(pc, pi).first->second;
}

uint32_t FwProfile::child(uint32_t parent, uint32_t function, uint32_t call_file, uint32_t call_line) {
  const ChildKey k{parent, function, call_file, call_line};
  auto it = children_.find(k);
  if (it != children_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(nodes_.size());
  Node n;
  n.parent = parent;
  n.function = function;
  n.call_file = call_file;
  n.call_line = call_line;
  n.depth = nodes_[parent].depth + 1;
  nodes_.push_back(n);
  children_.emplace(k, id);
  return id;
}

void FwProfile::run(uint64_t start, uint64_t end, const Hook &hook, Progress *progress) {
  if (ran_) fail(USCOPE_ERR_INVALID_ARGUMENT, "FwProfile::run: called twice");
  ran_ = true;
  start_ = last_retire_ = start;
  std::vector<uint32_t> stack;  // node ids, innermost last
  uint32_t folded = 0;          // calls past kMaxDepth not pushed (their returns pop nothing)
  uint8_t pending = kPlain;     // the previous instruction's kind
  uint32_t call_file = 0, call_line = 0;
  uint64_t prev_pc = 0, prev_len = 0, prev_retire = start;
  uint64_t count = 0;
  // Decoded on a worker while this thread attributes them; the worker
  // needs no disassembly (info() decodes the bits and reads the ELF here,
  // which the worker never touches).
  analysis::InsnPrefetch s(t_, start, end, false);
  while (const analysis::InsnView *insn = s.next()) {
    const analysis::InsnPiece &h = insn->head;
    if (h.status != USCOPE_INSN_RETIRED || h.last_cycle < start || h.last_cycle > end) continue;
    const PcInfo pi = info(h.pc, h.inst_bits, (h.flags & analysis::InsnPiece::kHasBits) != 0);
    const uint32_t fn = pi.function;
    if (pi.unknown) ++unknown_;
    bool entered = false;  // the top frame was entered at this instruction
    if (stack.empty()) {
      stack.push_back(child(kRoot, fn, 0, 0));
      entered = true;
    } else if (pending == kCall) {
      if (stack.size() < kMaxDepth) {
        stack.push_back(child(stack.back(), fn, call_file, call_line));
        entered = true;
      } else {
        ++folded;
      }
    } else if (pending == kReturn) {
      if (folded) --folded;
      else if (stack.size() > 1) stack.pop_back();
      else {
        // Returning out of the frame the window opened in: its caller is
        // outside the window, so the function returned to hangs off the root.
        stack.back() = child(kRoot, fn, 0, 0);
        entered = true;
      }
    }
    if (nodes_[stack.back()].function != fn) {
      // Not where the call/return structure says: unwind to a frame of this
      // function further up, else the new function takes the top frame's
      // place under the same caller and call site (tail call, jump in).
      size_t k = stack.size() - 1;
      while (k > 0 && nodes_[stack[k - 1]].function != fn) --k;
      if (k > 0 && !entered) {
        stack.resize(k);
      } else {
        const Node &top = nodes_[stack.back()];
        stack.back() = child(top.parent, fn, top.call_file, top.call_line);
        entered = true;
      }
    } else if (!entered && pi.entry && pending == kPlain && prev_len && h.pc != prev_pc + prev_len) {
      entered = true;  // a jump back to its own start: a self tail call
    }
    const uint32_t node = stack.back();
    if (entered) ++nodes_[node].calls;

    const uint64_t cycles = h.last_cycle > prev_retire ? h.last_cycle - prev_retire : 0;
    prev_retire = std::max(prev_retire, h.last_cycle);
    Node &n = nodes_[node];
    n.exclusive_cycles += cycles;
    ++n.instructions;
    const auto key = std::make_pair(uint64_t{node} << 32 | pi.file, pi.line);
    auto li = line_ids_.find(key);
    if (li == line_ids_.end()) {
      li = line_ids_.emplace(key, static_cast<uint32_t>(lines_.size())).first;
      lines_.push_back(Line{node, pi.file, pi.line, 0, 0});
    }
    lines_[li->second].cycles += cycles;
    ++lines_[li->second].instructions;
    Function &f = functions_[fn];
    if (pi.file && pi.line) {
      if (!f.file) f.file = pi.file;
      if (f.file == pi.file) {
        f.first_line = f.first_line ? std::min(f.first_line, pi.line) : pi.line;
        f.last_line = std::max(f.last_line, pi.line);
      }
    }
    ++retired_;
    if (hook) hook(Retired{h.last_cycle, cycles, h.pc, node, pi.file, pi.line});

    pending = pi.kind;
    call_file = pi.file;
    call_line = pi.line;
    prev_pc = h.pc;
    prev_len = pi.length;
    if (progress && (++count & 0xFFFF) == 0) progress->update(h.last_cycle - start, end - start, "cycles");
  }
  last_retire_ = prev_retire;
  stalls_ = s.stalls();
  // Children come after their parents: one backward pass sums the subtrees.
  for (Node &n : nodes_) n.inclusive_cycles = n.exclusive_cycles;
  for (size_t k = nodes_.size(); k-- > 1;) nodes_[nodes_[k].parent].inclusive_cycles += nodes_[k].inclusive_cycles;
  std::sort(lines_.begin(), lines_.end(), [](const Line &a, const Line &b) {
    return a.node != b.node ? a.node < b.node : a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  line_ids_.clear();
}

}  // namespace uscope::exporter
