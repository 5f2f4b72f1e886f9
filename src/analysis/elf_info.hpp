// What a RISC-V program's ELF file tells the analysis layer about a pc: the function and source
// line it belongs to, objdump's name for an address, the instruction bytes there (for traces
// that record no inst_bits) and `__global_pointer$` (issue 13, §4: `cpu.elf_path` or `--elf`).
//
// Everything comes from elfutils: libelf for the headers, sections, symbols and loaded bytes,
// libdw for the DWARF units, their subprograms / inlined subroutines and line tables. There is
// no DWARF parsing of our own.
//
// The file is read with pread() through libelf (ELF_C_READ), never mapped, so a file truncated
// or rewritten while it is open gives errors or unknown answers, not SIGBUS. Section data are
// read on demand; the loaded image (PT_LOAD file bytes) is copied at open.
//
// Not thread-safe (locate() fills a cache): one ElfInfo per thread, or a lock around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "analysis/riscv_disasm.hpp"

namespace uscope::analysis {

struct SourceLine {
  std::string function;  // "" when unknown
  std::string file;      // as the line table names it (absolute when the unit's directory is)
  uint32_t line = 0;     // 0 when unknown
};

class ElfInfo {
 public:
  // Opens and indexes `path`. Throws Error(USCOPE_ERR_IO) when it cannot be opened or read (a
  // missing file, a directory, a read error) and Error(USCOPE_ERR_INVALID_ARGUMENT) when it is
  // not an ELF file, is truncated (a header, table or loaded segment past its end) or is not
  // RISC-V (e_machine != EM_RISCV). Every message starts with the path.
  explicit ElfInfo(const std::string &path);
  ~ElfInfo();
  ElfInfo(const ElfInfo &) = delete;
  ElfInfo &operator=(const ElfInfo &) = delete;

  // From the ELF class: ELFCLASS32 -> k32, ELFCLASS64 -> k64.
  Xlen xlen() const;

  // Checks the file against a trace's cpu.isa ("rv32imac", "RV64GC", "rv32i_zicsr",
  // "rv32i2p1_m2p0_c2p0"; case-insensitive; "" accepts anything). Throws
  // Error(USCOPE_ERR_INVALID_ARGUMENT), naming the file and the ISA string, when the string is
  // no RISC-V ISA, when the XLENs differ, or when the file needs what the ISA lacks: compressed
  // instructions (e_flags RVC: c, or zca), a float ABI (single: f; double: d; quad: q; g has
  // f and d), or the full register file (an rv32e/rv64e ISA and a file without the RVE flag).
  void check_isa(const std::string &isa) const;

  // A symbol objdump would name addresses by, or a DWARF line table, is present.
  bool has_symbols() const;

  // The function that contains pc and its source file and line, as `addr2line -f` prints them:
  // the innermost DWARF subprogram or inlined subroutine whose ranges hold pc (its DW_AT_name;
  // for C++ addr2line prints the linkage name instead), else, as addr2line falls back to the
  // symbol table, the nearest function or untyped symbol at or below pc in its section (code
  // without DWARF functions: assembly, libgcc); the file (joined to the unit's compilation
  // directory when relative) and line of libdw's line-table row for pc (dwarf_getsrc_die).
  // Empty / 0 for what is unknown. Answers are cached per pc (a bounded cache): the reference
  // stays valid until the next call of locate().
  const SourceLine &locate(uint64_t pc);

  // objdump's name for an address in its disassembly of a file with symbols, without the angle
  // brackets: "main", "main+0x1c", "_start-0x4" (below the first symbol), as binutils 2.40 picks
  // among symbols at one address (its compare_symbols and find_symbol_for_address: symbols of
  // the section being disassembled first, then functions, objects, globals, larger sizes, ...;
  // mapping symbols $x / $d and file, section and undefined symbols never). "" when the file
  // has no such symbol at all: objdump then prints a bare `0x1c`, which the Disassembler prints
  // when it has no symbolizer, so pass symbol_at as DisasmOptions::symbolize only when
  // has_symbols(). The section being disassembled is taken to be the executable section that
  // holds addr, else the first executable section (it matters only between symbols of
  // different sections at one address).
  std::string symbol_at(uint64_t addr) const;

  // The bytes of the loaded image at pc: the file bytes of the PT_LOAD segments (for a file
  // without program headers, e.g. a relocatable object, those of its SHF_EXECINSTR sections at
  // their addresses). nullptr when pc is outside them; otherwise *avail = the bytes readable
  // from pc to the end of its segment. The pointer stays valid while this object lives.
  const uint8_t *code_at(uint64_t pc, size_t *avail) const;

  // The value of `__global_pointer$` when the symbol table defines it (DisasmOptions::gp).
  std::optional<uint64_t> global_pointer() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uscope::analysis
