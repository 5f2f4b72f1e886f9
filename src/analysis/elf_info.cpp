// ELF symbols, DWARF functions and line tables, loaded bytes (elf_info.hpp), through elfutils.
//
// References: the System V gABI (ELF header, section and program headers, symbol table), the
// RISC-V ELF psABI ("ELF Object Files": EM_RISCV = 243, e_flags EF_RISCV_RVC = 0x1,
// EF_RISCV_FLOAT_ABI = 0x6, EF_RISCV_RVE = 0x8; `__global_pointer$`), DWARF 5 (2.17 code
// addresses and ranges, 3.3 subroutine entries, 3.3.8 inlined subroutines, 6.2 line tables),
// the RISC-V unprivileged ISA manual ch. 27 "ISA Extension Naming Conventions", and, for the
// symbol objdump names an address by, binutils 2.40 objdump.c (compare_symbols,
// remove_useless_symbols, find_symbol_for_address, objdump_print_addr_with_sym) and
// riscv-dis.c (riscv_symbol_is_valid), whose behaviour symbol_at reproduces.
#include "analysis/elf_info.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "io/input_file.hpp"

namespace uscope::analysis {
namespace {

// RISC-V psABI, "File Header".
constexpr unsigned kEmRiscv = 243;
constexpr uint32_t kEfRvc = 0x1;
constexpr uint32_t kEfFloatAbi = 0x6;  // 0 soft, 2 single, 4 double, 6 quad
constexpr uint32_t kEfRve = 0x8;

// locate()'s cache: distinct pcs kept before it starts afresh (a program's hot pcs are far
// fewer; each entry is ~100 bytes plus its strings).
constexpr size_t kLocateCacheLimit = 32768;
// The loaded image is copied at open: at most this much in all, so a hostile file whose
// program headers name the same bytes many times cannot exhaust memory.
constexpr uint64_t kMaxLoadedBytes = uint64_t{1} << 30;
// DIE nesting walked when indexing functions (deeper is hostile or broken DWARF).
constexpr int kMaxDieDepth = 256;

const char *machine_name(unsigned m) {
  switch (m) {
    case 3: return "i386";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 40: return "ARM";
    case 62: return "x86-64";
    case 183: return "AArch64";
    default: return nullptr;
  }
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%" PRIx64, v);
  return b;
}

// The RISC-V ISA a cpu.isa string names (ISA manual ch. 27): base and single-letter
// extensions, plus the multi-letter ones that matter here.
struct Isa {
  unsigned xlen = 0;  // 0: not a RISC-V ISA string
  bool rve = false;
  bool ext[26] = {};
  bool zca = false;

  bool has(char c) const { return ext[c - 'a']; }
};

Isa parse_isa(const std::string &text) {
  Isa isa;
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.compare(0, 4, "rv32") == 0) isa.xlen = 32;
  else if (s.compare(0, 4, "rv64") == 0) isa.xlen = 64;
  else return isa;
  size_t i = 4;
  if (i >= s.size() || (s[i] != 'i' && s[i] != 'e' && s[i] != 'g')) {
    isa.xlen = 0;
    return isa;
  }
  // Single letters, each with an optional version ("2p1"); '_' separates; a multi-letter
  // extension starts with z, s or x and runs to the next '_'.
  const auto skip_version = [&] {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i + 1 < s.size() && s[i] == 'p' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    }
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '_') {
      ++i;
    } else if (c == 'z' || c == 's' || c == 'x') {
      const size_t end = std::min(s.find('_', i), s.size());
      const std::string name = s.substr(i, end - i);
      if (name.compare(0, 3, "zca") == 0) isa.zca = true;
      i = end;
    } else if (c >= 'a' && c <= 'z') {
      if (c == 'g') {
        for (char e : {'i', 'm', 'a', 'f', 'd'}) isa.ext[e - 'a'] = true;
      } else if (c == 'e') {
        isa.rve = true;
      } else {
        isa.ext[c - 'a'] = true;
      }
      ++i;
      skip_version();
    } else {
      isa.xlen = 0;  // not an ISA string
      return isa;
    }
  }
  // D implies F, Q implies D (ch. 13, 14).
  if (isa.has('q')) isa.ext['d' - 'a'] = true;
  if (isa.has('d')) isa.ext['f' - 'a'] = true;
  return isa;
}

// One symbol objdump may name an address by (remove_useless_symbols and riscv_symbol_is_valid
// kept it).
struct Symbol {
  uint64_t value;
  uint64_t size;
  std::string name;
  uint32_t section;  // index into Impl::section_names
  uint8_t type;      // STT_*
  uint8_t bind;      // STB_*
  uint8_t visibility;  // STV_*
};

bool file_like_name(const std::string &n) {  // objdump's file_symbol heuristic
  const size_t l = n.size();
  return l > 2 && n[l - 2] == '.' && (n[l - 1] == 'o' || n[l - 1] == 'a');
}
bool compiled_marker(const std::string &n) {
  return n.find("gnu_compiled") != std::string::npos || n.find("gcc2_compiled") != std::string::npos;
}

// objdump's compare_symbols, less its first rule after the value (symbols of the section being
// disassembled first), which symbol_at applies among the symbols of one value.
bool objdump_before(const Symbol &a, const Symbol &b) {
  if (a.value != b.value) return a.value < b.value;
  const bool ac = compiled_marker(a.name), bc = compiled_marker(b.name);
  if (ac != bc) return bc;
  const bool af = file_like_name(a.name), bf = file_like_name(b.name);  // STT_FILE is dropped
  if (af != bf) return bf;
  const bool afn = a.type == STT_FUNC || a.type == STT_GNU_IFUNC, bfn = b.type == STT_FUNC || b.type == STT_GNU_IFUNC;
  if (afn != bfn) return afn;
  const bool ao = a.type == STT_OBJECT || a.type == STT_COMMON, bo = b.type == STT_OBJECT || b.type == STT_COMMON;
  if (ao != bo) return ao;
  const bool al = a.bind == STB_LOCAL, bl = b.bind == STB_LOCAL;
  if (al != bl) return bl;
  const bool ag = a.bind == STB_GLOBAL, bg = b.bind == STB_GLOBAL;
  if (ag != bg) return ag;
  if (a.size != b.size) return a.size > b.size;
  const bool ad = !a.name.empty() && a.name[0] == '.', bd = !b.name.empty() && b.name[0] == '.';
  if (ad != bd) return bd;
  return a.name < b.name;
}

// A DWARF subprogram or inlined subroutine's address range, for locate().
struct FuncRange {
  uint64_t lo, hi;
  int depth;
  uint32_t name;  // index into Impl::func_names
};

// An address range of a compilation unit, or any [lo, hi) interval indexed for "which holds pc".
struct UnitRange {
  uint64_t lo, hi;
  uint32_t unit;
};

struct Unit {
  Dwarf_Die die;
  bool indexed = false;
  std::vector<FuncRange> funcs;     // sorted by lo
  std::vector<uint64_t> funcs_max;  // running maximum of hi over funcs, for the backward scan
};

struct Segment {
  uint64_t addr;
  std::vector<uint8_t> bytes;
};

struct ExecSection {
  uint64_t addr, size;
  uint32_t name;  // index into section_names
};

}  // namespace

struct ElfInfo::Impl {
  std::string path;
  int fd = -1;
  Elf *elf = nullptr;
  Dwarf *dwarf = nullptr;
  Xlen xlen = Xlen::k32;
  uint32_t flags = 0;
  uint64_t file_size = 0;

  std::vector<std::string> section_names;  // by section index; "*ABS*" appended for SHN_ABS
  uint32_t abs_section = 0;
  std::vector<Symbol> symbols;              // objdump's candidates, in objdump_before order
  std::vector<size_t> code_symbols;         // addr2line's function candidates in `symbols`, by value
  std::vector<ExecSection> exec_sections;   // by address
  std::vector<Segment> segments;            // by address
  std::optional<uint64_t> gp;

  std::vector<Unit> units;
  std::vector<UnitRange> unit_ranges;       // sorted by lo
  std::vector<uint64_t> unit_ranges_max;    // running maximum of hi
  bool line_tables = false;
  std::vector<std::string> func_names;

  std::unordered_map<uint64_t, SourceLine> cache;

  ~Impl() {
    if (dwarf != nullptr) dwarf_end(dwarf);
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void invalid(const std::string &what) const {
    throw Error(USCOPE_ERR_INVALID_ARGUMENT, path + ": " + what);
  }
  [[noreturn]] void truncated(const char *what, uint64_t end) const {
    invalid("truncated ELF file: the " + std::string(what) + " ends at byte " + std::to_string(end) +
            ", the file has " + std::to_string(file_size));
  }
  void check_span(const char *what, uint64_t off, uint64_t size) const {
    if (off > file_size || size > file_size - off) {
      const uint64_t end = off + size < off ? UINT64_MAX : off + size;
      truncated(what, end);
    }
  }

  void open_file();
  void read_header();
  void read_sections();
  void check_string_sections();
  void read_symbols();
  void read_segments();
  void read_dwarf();
  void index_unit(Unit &u);
  void walk(Dwarf_Die *parent, int depth, std::vector<FuncRange> *out);
  const ExecSection *exec_section_of(uint64_t addr) const;
  std::string dwarf_function(uint64_t pc, Dwarf_Die **cu);
  std::string symbol_function(uint64_t pc) const;
};

void ElfInfo::Impl::open_file() {
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(USCOPE_ERR_IO, path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) throw Error(USCOPE_ERR_IO, path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(USCOPE_ERR_IO, path + ": " + file_kind(st.st_mode) + ", not an ELF file");
  file_size = static_cast<uint64_t>(st.st_size);
  // What the first bytes are, for the message when they are no ELF.
  uint8_t head[EI_NIDENT] = {};
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  if (n < 0) throw Error(USCOPE_ERR_IO, path + ": cannot read: " + std::strerror(errno));
  if (n > 0 && n < SELFMAG && std::memcmp(head, ELFMAG, static_cast<size_t>(n)) == 0)
    truncated("ELF identification", EI_NIDENT);
  if (n < SELFMAG || std::memcmp(head, ELFMAG, SELFMAG) != 0)
    invalid("not an ELF file: " + describe_content(head, static_cast<size_t>(n)));
  if (n < EI_NIDENT) truncated("ELF identification", EI_NIDENT);
  if (head[EI_CLASS] != ELFCLASS32 && head[EI_CLASS] != ELFCLASS64)
    invalid("not a valid ELF file (class " + std::to_string(head[EI_CLASS]) + ")");
  const uint64_t ehdr_size = head[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
  check_span("ELF header", 0, ehdr_size);
  if (head[EI_DATA] != ELFDATA2LSB) invalid("not a little-endian ELF file (RISC-V code is little-endian)");
  // The header tables' extents, checked here so that a truncated file says so (libelf refuses
  // it as "invalid" without saying why). The ELF header's fields, read with <elf.h>'s layout
  // (the file is little-endian, like the hosts this library builds on).
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ELF header is read as little-endian");
  uint64_t phoff, shoff;
  unsigned phnum, phentsize, shnum, shentsize;
  if (head[EI_CLASS] == ELFCLASS32) {
    Elf32_Ehdr eh;
    if (::pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh)) truncated("ELF header", sizeof eh);
    phoff = eh.e_phoff, shoff = eh.e_shoff, phnum = eh.e_phnum, shnum = eh.e_shnum;
    phentsize = eh.e_phentsize, shentsize = eh.e_shentsize;
  } else {
    Elf64_Ehdr eh;
    if (::pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh)) truncated("ELF header", sizeof eh);
    phoff = eh.e_phoff, shoff = eh.e_shoff, phnum = eh.e_phnum, shnum = eh.e_shnum;
    phentsize = eh.e_phentsize, shentsize = eh.e_shentsize;
  }
  if (phnum != 0) check_span("program header table", phoff, uint64_t{phnum} * phentsize);
  // (0 sections with an offset: extended numbering, the count in section header 0)
  if (shnum != 0 || shoff != 0) check_span("section header table", shoff, uint64_t{shnum ? shnum : 1} * shentsize);
  if (elf_version(EV_CURRENT) == EV_NONE) invalid(std::string("libelf: ") + elf_errmsg(-1));
  // ELF_C_READ: pread() on demand, no mapping (a file rewritten under us cannot SIGBUS).
  elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) invalid(std::string("not a valid ELF file (libelf: ") + elf_errmsg(-1) + ")");
  if (elf_kind(elf) != ELF_K_ELF) invalid("not an ELF file (libelf does not read it as one)");
}

void ElfInfo::Impl::read_header() {
  GElf_Ehdr eh;
  if (gelf_getehdr(elf, &eh) == nullptr) invalid(std::string("unreadable ELF header (libelf: ") + elf_errmsg(-1) + ")");
  if (eh.e_machine != kEmRiscv) {
    const char *m = machine_name(eh.e_machine);
    invalid("not a RISC-V ELF file (e_machine " + std::to_string(eh.e_machine) + (m ? std::string(", ") + m : "") +
            "; RISC-V is " + std::to_string(kEmRiscv) + ")");
  }
  xlen = gelf_getclass(elf) == ELFCLASS64 ? Xlen::k64 : Xlen::k32;
  flags = eh.e_flags;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) invalid(std::string("unreadable program headers (libelf: ") + elf_errmsg(-1) + ")");
  if (phnum > 0) check_span("program header table", eh.e_phoff, uint64_t{phnum} * eh.e_phentsize);
  size_t shnum = 0;
  if (elf_getshdrnum(elf, &shnum) != 0) {
    // Extended numbering reads the count from section header 0: past the end when truncated.
    check_span("section header table", eh.e_shoff, eh.e_shentsize);
    invalid(std::string("unreadable section headers (libelf: ") + elf_errmsg(-1) + ")");
  }
  if (shnum > 0) check_span("section header table", eh.e_shoff, uint64_t{shnum} * eh.e_shentsize);
}

void ElfInfo::Impl::read_sections() {
  size_t shnum = 0, shstrndx = 0;
  if (elf_getshdrnum(elf, &shnum) != 0) return;
  const bool names = elf_getshdrstrndx(elf, &shstrndx) == 0;
  section_names.assign(shnum, std::string());
  for (size_t i = 1; i < shnum; ++i) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (scn == nullptr || gelf_getshdr(scn, &sh) == nullptr)
      invalid("unreadable section header " + std::to_string(i) + " (libelf: " + elf_errmsg(-1) + ")");
    const char *name = names ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
    section_names[i] = name != nullptr ? name : "";
    if (sh.sh_type != SHT_NOBITS)
      check_span(("section " + std::to_string(i) + " (" + section_names[i] + ")").c_str(), sh.sh_offset, sh.sh_size);
    if ((sh.sh_flags & SHF_EXECINSTR) != 0 && (sh.sh_flags & SHF_ALLOC) != 0 && sh.sh_size > 0)
      exec_sections.push_back({sh.sh_addr, sh.sh_size, static_cast<uint32_t>(i)});
  }
  std::sort(exec_sections.begin(), exec_sections.end(),
            [](const ExecSection &a, const ExecSection &b) { return a.addr < b.addr; });
  abs_section = static_cast<uint32_t>(section_names.size());
  section_names.push_back("*ABS*");
}

// libelf and libdw (0.188) read the strings of string sections with strlen: one that does not
// end with a NUL (a corrupt file) would be read past its buffer. Refused before either reads it.
void ElfInfo::Impl::check_string_sections() {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type == SHT_NOBITS || sh.sh_size == 0) continue;
      const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
      const bool strings = (sh.sh_flags & SHF_STRINGS) != 0 || sh.sh_type == SHT_STRTAB ||
                           (name != nullptr && std::strncmp(name, ".debug_", 7) == 0 &&
                            std::strstr(name, "str") != nullptr && std::strstr(name, "offsets") == nullptr);
      if (!strings || (sh.sh_flags & SHF_COMPRESSED) != 0) continue;
      uint8_t last = 1;
      if (::pread(fd, &last, 1, static_cast<off_t>(sh.sh_offset + sh.sh_size - 1)) != 1 || last != 0)
        invalid("corrupt ELF file: the string section " + std::string(name ? name : "?") + " does not end with a NUL");
    }
  }
}

void ElfInfo::Impl::read_symbols() {
  // objdump names addresses by the static symbol table, or by the dynamic one when there is no
  // static one.
  Elf_Scn *symtab = nullptr, *dynsym = nullptr, *shndx_scn = nullptr;
  for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type == SHT_SYMTAB && symtab == nullptr) symtab = scn;
    else if (sh.sh_type == SHT_DYNSYM && dynsym == nullptr) dynsym = scn;
  }
  Elf_Scn *table = symtab != nullptr ? symtab : dynsym;
  if (table == nullptr) return;
  const size_t table_index = elf_ndxscn(table);
  for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != nullptr && sh.sh_type == SHT_SYMTAB_SHNDX && sh.sh_link == table_index)
      shndx_scn = scn;
  }
  GElf_Shdr tsh;
  Elf_Data *data = gelf_getshdr(table, &tsh) != nullptr ? elf_getdata(table, nullptr) : nullptr;
  if (data == nullptr || tsh.sh_entsize == 0) return;
  Elf_Data *shndx_data = shndx_scn != nullptr ? elf_getdata(shndx_scn, nullptr) : nullptr;
  const size_t count = tsh.sh_size / tsh.sh_entsize;
  for (size_t i = 1; i < count; ++i) {
    GElf_Sym sym;
    Elf32_Word xndx = 0;
    if (gelf_getsymshndx(data, shndx_data, static_cast<int>(i), &sym, &xndx) == nullptr) break;
    const char *name = elf_strptr(elf, tsh.sh_link, sym.st_name);
    if (name == nullptr || name[0] == '\0') continue;
    const uint8_t type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
    size_t shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
    if (std::strcmp(name, "__global_pointer$") == 0 && shndx != SHN_UNDEF) gp = sym.st_value;
    // remove_useless_symbols: no debugging (file) or section symbols, no undefined or common
    // ones; riscv_symbol_is_valid: no mapping symbols ($x..., $d...) and no fake label.
    if (type == STT_FILE || type == STT_SECTION) continue;
    if (shndx == SHN_UNDEF || shndx == SHN_COMMON) continue;
    if (std::strncmp(name, "$x", 2) == 0 || std::strncmp(name, "$d", 2) == 0 || std::strcmp(name, ".L0 ") == 0)
      continue;
    uint32_t section = abs_section;
    if (sym.st_shndx != SHN_ABS && shndx < section_names.size() - 1) section = static_cast<uint32_t>(shndx);
    symbols.push_back({sym.st_value, sym.st_size, name, section, type, bind,
                       static_cast<uint8_t>(GELF_ST_VISIBILITY(sym.st_other))});
  }
  std::sort(symbols.begin(), symbols.end(), objdump_before);
  // What addr2line names a pc by without DWARF (binutils elf.c, _bfd_elf_maybe_function_sym
  // and riscv_maybe_function_sym): function and untyped symbols of a section, less hidden
  // local untyped ones of size 0 (and the mapping symbols, already left out).
  for (size_t i = 0; i < symbols.size(); ++i) {
    const Symbol &y = symbols[i];
    const bool code = y.type == STT_FUNC || y.type == STT_GNU_IFUNC || y.type == STT_NOTYPE;
    const bool marker = y.size == 0 && y.bind == STB_LOCAL && y.type == STT_NOTYPE && y.visibility == STV_HIDDEN;
    if (code && !marker && y.section != abs_section) code_symbols.push_back(i);
  }
}

void ElfInfo::Impl::read_segments() {
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) phnum = 0;
  uint64_t total = 0;
  const auto add = [&](uint64_t addr, uint64_t off, uint64_t size, const char *what) {
    if (size == 0) return;
    total += size;
    if (total > kMaxLoadedBytes)
      invalid("the loaded segments add up to more than " + std::to_string(kMaxLoadedBytes) + " bytes");
    check_span(what, off, size);
    Segment seg{addr, std::vector<uint8_t>(static_cast<size_t>(size))};
    size_t done = 0;
    while (done < seg.bytes.size()) {
      const ssize_t n = ::pread(fd, seg.bytes.data() + done, seg.bytes.size() - done, static_cast<off_t>(off + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(USCOPE_ERR_IO, path + ": cannot read: " + std::strerror(errno));
      if (n == 0) throw Error(USCOPE_ERR_TRUNCATED, path + ": the file shrank while it was read");
      done += static_cast<size_t>(n);
    }
    segments.push_back(std::move(seg));
  };
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr)
      invalid("unreadable program header " + std::to_string(i) + " (libelf: " + elf_errmsg(-1) + ")");
    if (ph.p_type == PT_LOAD) add(ph.p_vaddr, ph.p_offset, ph.p_filesz, "loaded segment");
  }
  if (segments.empty()) {
    // No program headers (a relocatable object): the code sections at their addresses.
    for (const ExecSection &s : exec_sections) {
      GElf_Shdr sh;
      Elf_Scn *scn = elf_getscn(elf, s.name);
      if (scn != nullptr && gelf_getshdr(scn, &sh) != nullptr && sh.sh_type == SHT_PROGBITS)
        add(sh.sh_addr, sh.sh_offset, sh.sh_size, "code section");
    }
  }
  std::stable_sort(segments.begin(), segments.end(), [](const Segment &a, const Segment &b) { return a.addr < b.addr; });
}

void ElfInfo::Impl::read_dwarf() {
  dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
  if (dwarf == nullptr) return;  // no debugging information: symbols only
  Dwarf_CU *cu = nullptr;
  Dwarf_CU *next = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cudie, subdie;
  while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
    cu = next;
    if (unit_type != DW_UT_compile && unit_type != DW_UT_partial && unit_type != DW_UT_skeleton) continue;
    const uint32_t index = static_cast<uint32_t>(units.size());
    if (dwarf_hasattr(&cudie, DW_AT_stmt_list)) line_tables = true;
    Dwarf_Addr base = 0, start = 0, end = 0;
    ptrdiff_t off = 0;
    bool any = false;
    while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
      if (end > start) {
        unit_ranges.push_back({start, end, index});
        any = true;
      }
    }
    if (any) units.push_back({cudie, false, {}, {}});
  }
  std::sort(unit_ranges.begin(), unit_ranges.end(), [](const UnitRange &a, const UnitRange &b) { return a.lo < b.lo; });
  uint64_t m = 0;
  for (const UnitRange &r : unit_ranges) unit_ranges_max.push_back(m = std::max(m, r.hi));
}

// Every subprogram and inlined subroutine with code under `parent`, with its nesting depth.
void ElfInfo::Impl::walk(Dwarf_Die *parent, int depth, std::vector<FuncRange> *out) {
  if (depth > kMaxDieDepth) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      const char *name = dwarf_diename(&child);  // follows abstract_origin / specification
      if (name == nullptr) {
        Dwarf_Attribute attr;
        name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_linkage_name, &attr));
      }
      if (name != nullptr) {
        const uint32_t ni = static_cast<uint32_t>(func_names.size());
        bool used = false;
        Dwarf_Addr base = 0, start = 0, end = 0;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0) {
          if (end > start) {
            out->push_back({start, end, depth, ni});
            used = true;
          }
        }
        if (used) func_names.emplace_back(name);
      }
    }
    switch (tag) {  // scopes that can hold code
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_lexical_block:
      case DW_TAG_namespace:
      case DW_TAG_module:
      case DW_TAG_try_block:
      case DW_TAG_catch_block:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
        walk(&child, depth + 1, out);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

void ElfInfo::Impl::index_unit(Unit &u) {
  u.indexed = true;
  walk(&u.die, 0, &u.funcs);
  std::sort(u.funcs.begin(), u.funcs.end(), [](const FuncRange &a, const FuncRange &b) { return a.lo < b.lo; });
  uint64_t m = 0;
  for (const FuncRange &f : u.funcs) u.funcs_max.push_back(m = std::max(m, f.hi));
}

namespace {
// Calls fn(i) for each entry of a lo-sorted range vector that holds pc, latest lo first, using
// the running maximum of hi to stop.
template <typename R, typename F>
void each_holding(const std::vector<R> &ranges, const std::vector<uint64_t> &max_hi, uint64_t pc, F fn) {
  size_t i = static_cast<size_t>(
      std::upper_bound(ranges.begin(), ranges.end(), pc, [](uint64_t p, const R &r) { return p < r.lo; }) -
      ranges.begin());
  while (i > 0 && max_hi[i - 1] > pc) {
    --i;
    if (pc < ranges[i].hi && !fn(i)) return;
  }
}
}  // namespace

// The innermost DWARF function holding pc ("" when none); *cu: its unit's DIE, or null.
std::string ElfInfo::Impl::dwarf_function(uint64_t pc, Dwarf_Die **cu) {
  *cu = nullptr;
  Unit *unit = nullptr;
  each_holding(unit_ranges, unit_ranges_max, pc, [&](size_t i) {
    unit = &units[unit_ranges[i].unit];
    return false;
  });
  if (unit == nullptr) return "";
  *cu = &unit->die;
  if (!unit->indexed) index_unit(*unit);
  const FuncRange *best = nullptr;
  each_holding(unit->funcs, unit->funcs_max, pc, [&](size_t i) {
    const FuncRange &f = unit->funcs[i];
    if (best == nullptr || f.depth > best->depth || (f.depth == best->depth && f.hi - f.lo < best->hi - best->lo))
      best = &f;
    return true;
  });
  return best != nullptr ? func_names[best->name] : "";
}

// The function addr2line names pc by from the symbol table (binutils elf.c, elf_find_function
// and better_fit): of the code symbols of pc's section, the nearest at or below pc (its extent
// need not reach pc); among several there, one whose extent (at least 1 byte) covers pc, then
// a function over an untyped symbol, then the smallest; when none covers pc, the largest.
std::string ElfInfo::Impl::symbol_function(uint64_t pc) const {
  const ExecSection *sec = nullptr;
  for (const ExecSection &x : exec_sections)
    if (pc >= x.addr && pc - x.addr < x.size) sec = &x;
  if (sec == nullptr) return "";
  const std::string &sec_name = section_names[sec->name];
  const Symbol *best = nullptr;
  bool best_covers = false;
  auto it = std::upper_bound(code_symbols.begin(), code_symbols.end(), pc,
                             [&](uint64_t p, size_t i) { return p < symbols[i].value; });
  while (it != code_symbols.begin()) {
    const Symbol &y = symbols[*--it];
    if (best != nullptr && y.value != best->value) break;
    if (section_names[y.section] != sec_name) continue;
    const bool covers = pc - y.value < std::max<uint64_t>(y.size, 1);
    const bool func = y.type == STT_FUNC || y.type == STT_GNU_IFUNC;
    const bool best_func = best != nullptr && (best->type == STT_FUNC || best->type == STT_GNU_IFUNC);
    bool better;
    if (best == nullptr) better = true;
    else if (covers != best_covers) better = covers;
    else if (!covers) better = y.size > best->size;
    else if (func != best_func) better = func;
    else better = y.size < best->size;
    if (better) {
      best = &y;
      best_covers = covers;
    }
  }
  return best != nullptr ? best->name : "";
}

const ExecSection *ElfInfo::Impl::exec_section_of(uint64_t addr) const {
  for (const ExecSection &s : exec_sections)
    if (addr >= s.addr && addr - s.addr < s.size) return &s;
  return exec_sections.empty() ? nullptr : &exec_sections.front();
}

ElfInfo::ElfInfo(const std::string &path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->open_file();
  impl_->read_header();
  impl_->read_sections();
  impl_->check_string_sections();
  impl_->read_symbols();
  impl_->read_segments();
  impl_->read_dwarf();
}

ElfInfo::~ElfInfo() = default;

Xlen ElfInfo::xlen() const { return impl_->xlen; }

void ElfInfo::check_isa(const std::string &isa_text) const {
  if (isa_text.empty()) return;
  const unsigned elf_xlen = impl_->xlen == Xlen::k64 ? 64 : 32;
  const uint32_t fabi = impl_->flags & kEfFloatAbi;
  const char *abi = fabi == 0 ? "soft-float" : fabi == 2 ? "single-float" : fabi == 4 ? "double-float" : "quad-float";
  const std::string elf_desc = "RV" + std::to_string(elf_xlen) + ((impl_->flags & kEfRvc) ? ", RVC" : "") +
                               ((impl_->flags & kEfRve) ? ", RVE" : "") + ", " + abi + " ABI";
  const auto refuse = [&](const std::string &why) {
    throw Error(USCOPE_ERR_INVALID_ARGUMENT, impl_->path + " (" + elf_desc + ") does not match the trace's cpu.isa \"" +
                                                 isa_text + "\": " + why);
  };
  const Isa isa = parse_isa(isa_text);
  if (isa.xlen == 0) refuse("that is not a RISC-V ISA string (rv32... or rv64...)");
  if (isa.xlen != elf_xlen)
    refuse("the ELF is " + std::to_string(elf_xlen) + "-bit, the ISA " + std::to_string(isa.xlen) + "-bit");
  if ((impl_->flags & kEfRvc) != 0 && !isa.has('c') && !isa.zca)
    refuse("the ELF has compressed instructions (RVC), the ISA has no C extension");
  if (fabi == 2 && !isa.has('f')) refuse("the ELF uses the single-float ABI, the ISA has no F extension");
  if (fabi == 4 && !isa.has('d')) refuse("the ELF uses the double-float ABI, the ISA has no D extension");
  if (fabi == 6 && !isa.has('q')) refuse("the ELF uses the quad-float ABI, the ISA has no Q extension");
  if (isa.rve && (impl_->flags & kEfRve) == 0)
    refuse("the ISA is RV" + std::to_string(isa.xlen) + "E (16 registers), the ELF is not built for it (no RVE flag)");
}

bool ElfInfo::has_symbols() const { return !impl_->symbols.empty() || impl_->line_tables; }

const SourceLine &ElfInfo::locate(uint64_t pc) {
  Impl &m = *impl_;
  if (m.xlen == Xlen::k32) pc &= 0xffffffffu;
  auto hit = m.cache.find(pc);
  if (hit != m.cache.end()) return hit->second;
  if (m.cache.size() >= kLocateCacheLimit) m.cache.clear();
  SourceLine sl;
  Dwarf_Die *cu = nullptr;
  if (m.dwarf != nullptr) {
    sl.function = m.dwarf_function(pc, &cu);
    if (cu != nullptr) {
      if (Dwarf_Line *line = dwarf_getsrc_die(cu, pc)) {
        const char *file = dwarf_linesrc(line, nullptr, nullptr);
        int lineno = 0;
        if (file != nullptr) {
          // A relative name is relative to the unit's compilation directory, which
          // addr2line puts before it (binutils dwarf2.c, concat_filename).
          Dwarf_Attribute attr;
          const char *comp_dir = file[0] != '/' ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : nullptr;
          if (comp_dir != nullptr && comp_dir[0] != '\0') sl.file = std::string(comp_dir) + "/";
          sl.file += file;
        }
        if (dwarf_lineno(line, &lineno) == 0 && lineno > 0) sl.line = static_cast<uint32_t>(lineno);
      }
    }
  }
  if (sl.function.empty()) sl.function = m.symbol_function(pc);
  return m.cache.emplace(pc, std::move(sl)).first->second;
}

std::string ElfInfo::symbol_at(uint64_t addr) const {
  const Impl &m = *impl_;
  if (m.xlen == Xlen::k32) addr &= 0xffffffffu;
  const auto &syms = m.symbols;
  if (syms.empty()) return "";
  // find_symbol_for_address: the symbols of the greatest value <= addr (of the least value when
  // all are above it); among them the first, in objdump's order, of the section being
  // disassembled, else the first.
  auto it = std::upper_bound(syms.begin(), syms.end(), addr, [](uint64_t a, const Symbol &s) { return a < s.value; });
  const uint64_t value = it == syms.begin() ? syms.front().value : std::prev(it)->value;
  auto first = std::lower_bound(syms.begin(), syms.end(), value, [](const Symbol &s, uint64_t v) { return s.value < v; });
  const ExecSection *current = m.exec_section_of(addr);
  const Symbol *pick = &*first;
  if (current != nullptr) {
    const std::string &cname = m.section_names[current->name];
    for (auto s = first; s != syms.end() && s->value == value; ++s)
      if (m.section_names[s->section] == cname) {
        pick = &*s;
        break;
      }
  }
  // objdump_print_addr_with_sym
  if (pick->value == addr) return pick->name;
  if (pick->value > addr) return pick->name + "-0x" + hex(pick->value - addr);
  return pick->name + "+0x" + hex(addr - pick->value);
}

const uint8_t *ElfInfo::code_at(uint64_t pc, size_t *avail) const {
  const auto &segs = impl_->segments;
  // Segments may overlap only in a relocatable object (every section at 0): the latest-starting
  // one that holds pc wins.
  auto it = std::upper_bound(segs.begin(), segs.end(), pc, [](uint64_t p, const Segment &s) { return p < s.addr; });
  while (it != segs.begin()) {
    --it;
    if (pc - it->addr < it->bytes.size()) {
      *avail = it->bytes.size() - static_cast<size_t>(pc - it->addr);
      return it->bytes.data() + (pc - it->addr);
    }
  }
  *avail = 0;
  return nullptr;
}

std::optional<uint64_t> ElfInfo::global_pointer() const { return impl_->gp; }

}  // namespace uscope::analysis
