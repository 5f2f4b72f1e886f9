// A table-driven RISC-V disassembler: RV32 and RV64 I, M, A, C, Zicsr, Zifencei (and the
// privileged return / wait / fence instructions objdump decodes with them). Its text is what
// `riscv64-unknown-elf-objdump -d` (GNU binutils 2.40, default options: ABI register names,
// aliases on) prints after the tab that follows the instruction bytes, so that `uscope timeline`,
// the MCP server and the exporters show what a RISC-V engineer sees in objdump (issue 13, §4).
// Debian's Capstone (4.0.2) has no RISC-V, hence this file.
//
// "As objdump prints it" includes the quirks of that version: addi, andi, ori, xori, slli, srli,
// srai (and their W forms, and the compressed ones) print under their register-register names
// (`add sp,sp,-16`, `sll a0,a0,0x2`), rdcycle/csrr/... aliases, `.2byte 0x...` for an unknown
// encoding. objdump decodes the extensions the ELF's Tag_RISCV_arch names (rv64gc when it has
// none); DisasmOptions::extensions says which to decode here (all by default).
//
// Never aborts and never reads past `avail` on any input: an encoding outside the supported set
// is printed the way objdump prints it (a `.2byte`/`.4byte`/`.8byte`/`.byte` directive).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace uscope::analysis {

enum class Xlen : uint8_t { k32 = 32, k64 = 64 };

struct Decoded {
  // Bytes the encoding occupies, as objdump steps over it: 2 or 4 for an instruction; for an
  // unknown encoding its encoded length (2, 4, 6, 8, 10 ... 22: the RISC-V length prefix of the
  // unprivileged spec, "Expanded Instruction-Length Encoding"), so a caller walking a code
  // region stays in step with objdump. 0: fewer than that many bytes were readable (`text`
  // then says so and is no objdump output).
  uint8_t length = 0;
  // true: a supported instruction; false: `text` is objdump's data directive for the bytes.
  bool known = false;
  // Mnemonic, a tab, operands (no tab when there are none), as objdump prints them. Branch and
  // jump targets and the `# address` comments objdump adds are formatted as objdump does
  // without symbols (`0x1c`), or with them when a symbolizer is given (`1c <main>`).
  std::string text;
};

// Names an address for a target or `# address` comment: returns e.g. "main" or "main+0x10",
// or "" for none. With a symbolizer the address is printed objdump's way for a file that has
// symbols (`1c <main>`, bare hex when the name is empty); without one, its way for a file that
// has none (`0x1c`).
using Symbolizer = std::function<std::string(uint64_t address)>;

// The privileged-spec version whose CSR names objdump prints: the file's Tag_RISCV_priv_spec
// attribute (gas records 1.11 when a file names a CSR), 1.12 for a file without one.
enum class PrivSpec : uint8_t { k1_9_1, k1_10, k1_11, k1_12 };

// The extensions beyond the base (RV32I / RV64I and the privileged instructions, always on) to
// decode, as bits; an encoding of one left out prints as objdump prints an unknown one.
enum Extension : uint32_t {
  kExtM = 1u << 0,
  kExtA = 1u << 1,
  kExtC = 1u << 2,
  kExtZicsr = 1u << 3,
  kExtZifencei = 1u << 4,
  kExtAll = kExtM | kExtA | kExtC | kExtZicsr | kExtZifencei,
};

struct DisasmOptions {
  uint32_t extensions = kExtAll;
  PrivSpec priv_spec = PrivSpec::k1_12;
  // The value of `__global_pointer$` when the program has one: objdump then comments gp-relative
  // addresses (`lw a0,-2016(gp) # 100004e0`).
  std::optional<uint64_t> gp;
  Symbolizer symbolize;
};

// A disassembler over a sequence of instructions. Like objdump it remembers the upper bits set
// by `lui` / `auipc` / `c.lui` in each register and comments the address that a later `addi`,
// load, store or `jalr` on that register forms (`auipc a0,0x1` then `add a0,a0,16 # 0x1010`).
// Feed it the instructions in address order (objdump's state runs across a whole disassembly,
// functions included); call reset() to start afresh. As in objdump, the upper bits of a register
// stay until a use consumes them, even when another instruction wrote that register in between.
// Not thread-safe; one per thread.
class Disassembler {
 public:
  explicit Disassembler(Xlen xlen, DisasmOptions options = {});

  // bytes: `avail` readable bytes at address `pc` (little-endian, as RISC-V code always is);
  // may be null when `avail` is 0. Reads at most min(avail, 22) bytes.
  Decoded next(const uint8_t *bytes, size_t avail, uint64_t pc);
  void reset();

 private:
  Xlen xlen_;
  DisasmOptions options_;
  uint64_t hi_addr_[32];  // upper bits from lui/auipc per register; all ones: none
};

// One instruction on its own (a fresh Disassembler): what objdump prints for it when it is the
// first instruction it disassembles.
Decoded disassemble(const uint8_t *bytes, size_t avail, uint64_t pc, Xlen xlen);

}  // namespace uscope::analysis
