// ElfInfo (src/analysis/elf_info) against GNU binutils, on the testbench firmware and on small
// programs this test compiles with riscv64-unknown-elf-gcc -g (RV32 and RV64, two translation
// units, a header's inline function inlined, gp-relative data):
//  - locate(pc) gives `riscv64-unknown-elf-addr2line -f`'s function and file:line for every
//    instruction address;
//  - the whole disassembly (code_at's bytes, the Disassembler with symbol_at as symbolizer and
//    global_pointer as gp) is `objdump -d`'s, line for line, and symbol_at names each function
//    header's address as objdump does;
//  - the bad inputs give their errors: no file, not an ELF, an x86-64 ELF, a truncated ELF, an
//    ELF that does not match the trace's ISA.
// A missing tool or input fails the test; nothing is skipped.
#include <gtest/gtest.h>

#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/elf_info.hpp"
#include "analysis/riscv_disasm.hpp"
#include "base/error.hpp"

namespace ua = uscope::analysis;

namespace {

const char *const kGcc = "riscv64-unknown-elf-gcc";
const char *const kObjdump = "riscv64-unknown-elf-objdump";
const char *const kObjcopy = "riscv64-unknown-elf-objcopy";
const char *const kAddr2line = "riscv64-unknown-elf-addr2line";

// Runs a shell command; returns its stdout and stderr, and its exit status in *status.
std::string run(const std::string &cmd, int *status) {
  std::string out;
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string &path, const uint8_t *data, size_t n) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(n));
}

// The small programs, built once for the whole suite in a scratch directory removed at exit.
const char *const kUtilH = R"(#pragma once
static inline int clamp8(int v) {
  if (v < 0) return 0;
  if (v > 255) return 255;
  return v;
}
int scale(int v, int k);
)";
const char *const kMainC = R"(#include "util.h"
volatile int counter;
int table[64];
static int local_helper(int x) { return x * 3 + counter; }
__attribute__((noinline)) int sum(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += clamp8(table[i & 63]);
  return s;
}
int main(void) {
  for (int i = 0; i < 64; ++i) table[i] = scale(i, 7) - 100;
  counter = sum(40);
  return local_helper(counter);
}
void _start(void) {
  main();
  for (;;) {
  }
}
)";
const char *const kUtilC = R"(#include "util.h"
long long wide;
int scale(int v, int k) {
  wide += (long long)v * k;
  return clamp8(v * k) + (int)(wide >> 3);
}
)";

struct Programs {
  std::string dir;
  std::string rv32, rv64, rv32_stripped, rv32_float_obj;
  std::string error;  // why building failed ("" when it did not)

  ~Programs() {
    if (!dir.empty()) {
      int st;
      run("rm -rf '" + dir + "'", &st);
    }
  }
};

const Programs &programs() {
  static const std::unique_ptr<Programs> p = [] {
    auto b = std::make_unique<Programs>();
    std::string tmpl = testing::TempDir() + "uscope_elf_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      b->error = "mkdtemp failed";
      return b;
    }
    b->dir = buf.data();
    for (const auto &[name, text] : {std::pair<const char *, const char *>{"util.h", kUtilH},
                                     {"main.c", kMainC}, {"util.c", kUtilC}})
      std::ofstream(b->dir + "/" + name) << text;
    int st;
    const std::string common = " -O2 -g -nostdlib -ffreestanding -Wall -o ";
    const std::string srcs = " '" + b->dir + "/main.c' '" + b->dir + "/util.c'";
    b->rv32 = b->dir + "/rv32.elf";
    b->rv64 = b->dir + "/rv64.elf";
    b->rv32_stripped = b->dir + "/rv32_stripped.elf";
    b->rv32_float_obj = b->dir + "/float.o";
    const std::string cmds[] = {
        std::string(kGcc) + " -march=rv32imac -mabi=ilp32" + common + "'" + b->rv32 + "'" + srcs,
        std::string(kGcc) + " -march=rv64imac -mabi=lp64" + common + "'" + b->rv64 + "'" + srcs,
        std::string(kObjcopy) + " --strip-all '" + b->rv32 + "' '" + b->rv32_stripped + "'",
        std::string(kGcc) + " -march=rv32imafc -mabi=ilp32f -O2 -c -o '" + b->rv32_float_obj + "' '" + b->dir +
            "/util.c'",
    };
    for (const std::string &cmd : cmds) {
      const std::string out = run(cmd, &st);
      if (st != 0) {
        b->error = cmd + " failed (" + std::to_string(st) + "; Debian: gcc-riscv64-unknown-elf): " + out;
        break;
      }
    }
    return b;
  }();
  return *p;
}

#define REQUIRE_PROGRAMS() ASSERT_EQ(programs().error, "")

struct ObjLine {
  uint64_t addr;
  std::string text;  // after the bytes' tab: mnemonic \t operands, or a directive
};

struct Listing {
  std::vector<ObjLine> insns;
  std::vector<std::pair<uint64_t, std::string>> headers;  // "00010094 <main>:"
  std::vector<std::string> sections;                       // "Disassembly of section .text:"
};

// objdump -d -z: instruction lines "<spaces>addr:\t<bytes><spaces>\t<text>", function headers
// "addr <name>:" and section headers.
::testing::AssertionResult objdump(const std::string &elf, Listing *l) {
  int st;
  const std::string out = run(std::string(kObjdump) + " -d -z '" + elf + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kObjdump << " failed (" << st << "): " << out;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Disassembly of section ", 0) == 0) {
      l->sections.push_back(line);
      continue;
    }
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t digits = i;
    while (i < line.size() && line[i] != '\0' && std::strchr("0123456789abcdef", line[i]) != nullptr) ++i;
    if (i == digits) continue;
    const uint64_t addr = std::stoull(line.substr(digits, i - digits), nullptr, 16);
    if (digits == 0 && line.compare(i, 2, " <") == 0 && line.size() > i + 4 && line.compare(line.size() - 2, 2, ">:") == 0) {
      l->headers.emplace_back(addr, line.substr(i + 2, line.size() - 2 - (i + 2)));
      continue;
    }
    if (line.compare(i, 2, ":\t") != 0) continue;
    const size_t bytes = i + 2, tab = line.find('\t', bytes);
    if (tab == std::string::npos) continue;
    if (line.find_first_not_of("0123456789abcdef ", bytes) != tab) continue;
    l->insns.push_back({addr, line.substr(tab + 1)});
  }
  if (l->insns.empty() || l->headers.empty()) return ::testing::AssertionFailure() << "empty listing for " << elf << ":\n" << out;
  return ::testing::AssertionSuccess();
}

bool is_data_directive(const std::string &text) {
  return text.rfind(".word", 0) == 0 || text.rfind(".short", 0) == 0 || text.rfind(".byte", 0) == 0;
}

// locate() against `addr2line -f` at every instruction address.
void expect_locate_matches_addr2line(const std::string &elf, const Listing &l, size_t *compared) {
  ua::ElfInfo info(elf);
  const std::string addrs = testing::TempDir() + "uscope_elf_addrs_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(addrs);
    for (const ObjLine &i : l.insns) f << std::hex << i.addr << "\n";
  }
  int st;
  const std::string out = run(std::string(kAddr2line) + " -f -e '" + elf + "' < '" + addrs + "'", &st);
  std::remove(addrs.c_str());
  ASSERT_EQ(st, 0) << out;
  std::istringstream in(out);
  size_t mismatches = 0;
  std::string report;
  for (const ObjLine &i : l.insns) {
    std::string func, where;
    ASSERT_TRUE(std::getline(in, func) && std::getline(in, where)) << "addr2line printed too little";
    // "file:line", "file:line (discriminator N)", "??:0", "??:?"
    const size_t disc = where.find(" (discriminator ");
    if (disc != std::string::npos) where.resize(disc);
    const size_t colon = where.rfind(':');
    ASSERT_NE(colon, std::string::npos) << where;
    std::string file = where.substr(0, colon);
    const std::string line = where.substr(colon + 1);
    if (func == "??") func.clear();
    if (file == "??") file.clear();
    const uint32_t lineno = line == "?" ? 0 : static_cast<uint32_t>(std::stoul(line));
    const ua::SourceLine &got = info.locate(i.addr);
    ++*compared;
    if (got.function != func || got.file != file || got.line != lineno) {
      if (++mismatches <= 20) {
        std::ostringstream m;
        m << std::hex << i.addr << std::dec << ": addr2line " << func << " " << file << ":" << lineno << ", ours "
          << got.function << " " << got.file << ":" << got.line << "\n";
        report += m.str();
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << elf << "\n" << report;
}

// The whole disassembly against objdump -d, and symbol_at against its function headers.
void expect_disassembly_matches_objdump(const std::string &elf, const Listing &l, size_t *compared) {
  ua::ElfInfo info(elf);
  ASSERT_TRUE(info.has_symbols());
  ua::DisasmOptions opt;
  opt.gp = info.global_pointer();
  opt.symbolize = [&info](uint64_t a) { return info.symbol_at(a); };
  ua::Disassembler dis(info.xlen(), opt);
  size_t mismatches = 0, data = 0;
  std::string report;
  for (size_t k = 0; k < l.insns.size(); ++k) {
    const ObjLine &i = l.insns[k];
    if (is_data_directive(i.text)) {  // data in .text ($d mapping symbols): objdump's .word
      ++data;
      continue;
    }
    size_t avail = 0;
    const uint8_t *bytes = info.code_at(i.addr, &avail);
    ASSERT_NE(bytes, nullptr) << std::hex << i.addr;
    const ua::Decoded d = dis.next(bytes, avail, i.addr);
    ++*compared;
    const bool step_ok = k + 1 == l.insns.size() || l.insns[k + 1].addr - i.addr == d.length ||
                         l.insns[k + 1].addr < i.addr;  // (a new section)
    if (d.text != i.text || !step_ok) {
      if (++mismatches <= 20) {
        std::ostringstream m;
        m << std::hex << i.addr << ": objdump '" << i.text << "' ours '" << d.text << "' length " << std::dec
          << int{d.length} << "\n";
        report += m.str();
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << elf << "\n" << report;
  EXPECT_LE(data, 4u);
  for (const auto &[addr, name] : l.headers) EXPECT_EQ(info.symbol_at(addr), name) << std::hex << addr;
}

std::string error_of(const std::string &path, uscope_status_t *code) {
  try {
    ua::ElfInfo info(path);
  } catch (const uscope::Error &e) {
    *code = e.code();
    return e.what();
  }
  *code = USCOPE_OK;
  return "";
}

}  // namespace

TEST(ElfInfo, SmallProgramsLocateLikeAddr2line) {
  REQUIRE_PROGRAMS();
  for (const std::string *elf : {&programs().rv32, &programs().rv64}) {
    SCOPED_TRACE(*elf);
    Listing l;
    ASSERT_TRUE(objdump(*elf, &l));
    size_t n = 0;
    expect_locate_matches_addr2line(*elf, l, &n);
    EXPECT_GT(n, 40u);
    // The inlined header function and the local function are named, with their files.
    ua::ElfInfo info(*elf);
    bool inlined = false, local = false;
    for (const ObjLine &i : l.insns) {
      const ua::SourceLine &s = info.locate(i.addr);
      inlined |= s.function == "clamp8" && s.file == programs().dir + "/util.h" && s.line >= 2 && s.line <= 6;
      local |= s.function == "local_helper" || s.function == "main";
    }
    EXPECT_TRUE(inlined) << "no pc located in the inlined clamp8 of util.h";
    EXPECT_TRUE(local);
  }
}

TEST(ElfInfo, SmallProgramsDisassembleLikeObjdump) {
  REQUIRE_PROGRAMS();
  for (const std::string *elf : {&programs().rv32, &programs().rv64}) {
    SCOPED_TRACE(*elf);
    Listing l;
    ASSERT_TRUE(objdump(*elf, &l));
    size_t n = 0;
    expect_disassembly_matches_objdump(*elf, l, &n);
    EXPECT_GT(n, 40u);
    // gp-relative data was formed, so objdump's comments named symbols through gp.
    ua::ElfInfo info(*elf);
    ASSERT_TRUE(info.global_pointer().has_value());
    bool gp_comment = false;
    for (const ObjLine &i : l.insns) gp_comment |= i.text.find("(gp) # ") != std::string::npos || i.text.find(",gp,") != std::string::npos;
    EXPECT_TRUE(gp_comment) << "no gp-relative access in the program: the gp check checked nothing";
  }
}

TEST(ElfInfo, XlenAndSymbolFormats) {
  REQUIRE_PROGRAMS();
  ua::ElfInfo rv32(programs().rv32), rv64(programs().rv64);
  EXPECT_EQ(rv32.xlen(), ua::Xlen::k32);
  EXPECT_EQ(rv64.xlen(), ua::Xlen::k64);
  Listing l;
  ASSERT_TRUE(objdump(programs().rv32, &l));
  // The lowest function: an address 4 below it is named from above, as objdump does.
  uint64_t lowest = UINT64_MAX;
  std::string lowest_name;
  for (const auto &[addr, name] : l.headers)
    if (addr < lowest) lowest = addr, lowest_name = name;
  EXPECT_EQ(rv32.symbol_at(lowest - 4), lowest_name + "-0x4");
  EXPECT_EQ(rv32.symbol_at(lowest + 2), lowest_name + "+0x2");
  // code_at: the bytes objdump printed, up to the end of the loaded segment.
  size_t avail = 0;
  const uint8_t *p = rv32.code_at(lowest, &avail);
  ASSERT_NE(p, nullptr);
  EXPECT_GT(avail, 40u);
  const uint8_t *end = rv32.code_at(lowest + avail - 1, &avail);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(avail, 1u);
  EXPECT_EQ(rv32.code_at(0, &avail), nullptr);
  EXPECT_EQ(avail, 0u);
  EXPECT_EQ(rv32.code_at(UINT64_MAX, &avail), nullptr);
  // Outside any unit and function: nothing known; the answer is stable.
  const ua::SourceLine &none = rv32.locate(0);
  EXPECT_EQ(none.function, "");
  EXPECT_EQ(none.file, "");
  EXPECT_EQ(none.line, 0u);
  const ua::SourceLine a = rv32.locate(lowest);
  const ua::SourceLine &b = rv32.locate(lowest);
  EXPECT_EQ(a.function, b.function);
  EXPECT_EQ(a.line, b.line);
  EXPECT_FALSE(a.function.empty());
}

TEST(ElfInfo, StrippedProgramHasNoSymbols) {
  REQUIRE_PROGRAMS();
  ua::ElfInfo info(programs().rv32_stripped);
  EXPECT_FALSE(info.has_symbols());
  EXPECT_FALSE(info.global_pointer().has_value());
  Listing l;
  ASSERT_TRUE(objdump(programs().rv32, &l));
  const uint64_t pc = l.insns.front().addr;
  EXPECT_EQ(info.symbol_at(pc), "");
  EXPECT_EQ(info.locate(pc).function, "");
  EXPECT_EQ(info.locate(pc).line, 0u);
  size_t avail = 0;
  EXPECT_NE(info.code_at(pc, &avail), nullptr);  // the code is still there
}

TEST(ElfInfo, CheckIsa) {
  REQUIRE_PROGRAMS();
  ua::ElfInfo rv32(programs().rv32), rv64(programs().rv64), fp(programs().rv32_float_obj);
  for (const char *ok : {"", "rv32imac", "RV32IMAC", "rv32gc", "rv32imac_zicsr_zifencei", "RV32IMAC_Zicsr",
                         "rv32i2p1_m2p0_a2p1_c2p0", "rv32i_zca"})
    EXPECT_NO_THROW(rv32.check_isa(ok)) << ok;
  for (const char *ok : {"rv64imac", "RV64GC", "rv64gcv_zba_zbb"}) EXPECT_NO_THROW(rv64.check_isa(ok)) << ok;
  EXPECT_NO_THROW(fp.check_isa("rv32imafc"));
  EXPECT_NO_THROW(fp.check_isa("rv32gc"));
  struct Bad {
    const ua::ElfInfo *elf;
    const std::string *path;
    const char *isa;
    const char *why;
  };
  const Bad bad[] = {
      {&rv64, &programs().rv64, "rv32imac", "64-bit"},
      {&rv32, &programs().rv32, "RV64GC", "32-bit"},
      {&rv32, &programs().rv32, "rv32im", "RVC"},
      {&rv32, &programs().rv32, "rv32i_zicsr", "no C extension"},
      {&rv32, &programs().rv32, "rv32emac", "16 registers"},
      {&fp, &programs().rv32_float_obj, "rv32imac", "no F extension"},
      {&rv32, &programs().rv32, "x86_64", "not a RISC-V ISA"},
      {&rv32, &programs().rv32, "rv32", "not a RISC-V ISA"},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.isa);
    try {
      b.elf->check_isa(b.isa);
      ADD_FAILURE() << "accepted";
    } catch (const uscope::Error &e) {
      EXPECT_EQ(e.code(), USCOPE_ERR_INVALID_ARGUMENT);
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(*b.path, 0), 0u) << m;                                    // names the ELF
      EXPECT_NE(m.find(std::string("\"") + b.isa + "\""), std::string::npos) << m;  // and the ISA
      EXPECT_NE(m.find(b.why), std::string::npos) << m;
    }
  }
}

TEST(ElfInfo, MissingFileOrDirectoryIsIoError) {
  uscope_status_t code;
  const std::string missing = testing::TempDir() + "uscope_no_such_file.elf";
  std::string m = error_of(missing, &code);
  EXPECT_EQ(code, USCOPE_ERR_IO) << m;
  EXPECT_EQ(m.rfind(missing + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("No such file"), std::string::npos) << m;
  m = error_of("/", &code);
  EXPECT_EQ(code, USCOPE_ERR_IO) << m;
  EXPECT_NE(m.find("directory"), std::string::npos) << m;
}

TEST(ElfInfo, NotAnElfIsRefused) {
  const std::string path = testing::TempDir() + "uscope_not_elf_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "int main(void) { return 0; }\n";
  uscope_status_t code;
  std::string m = error_of(path, &code);
  EXPECT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << m;
  EXPECT_EQ(m.rfind(path + ": not an ELF file", 0), 0u) << m;
  write_bytes(path, nullptr, 0);  // empty
  m = error_of(path, &code);
  EXPECT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << m;
  EXPECT_NE(m.find("empty"), std::string::npos) << m;
  std::remove(path.c_str());
}

TEST(ElfInfo, X86ElfIsRefused) {
  const std::string path = "/bin/true";  // an x86-64 (or at least not RISC-V) ELF
  ASSERT_TRUE(std::ifstream(path).good()) << "missing " << path;
  uscope_status_t code;
  const std::string m = error_of(path, &code);
  EXPECT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << m;
  EXPECT_EQ(m.rfind(path + ": not a RISC-V ELF file (e_machine ", 0), 0u) << m;
}

// Every prefix of a real ELF (each truncation point of its headers and tables, and a sample of
// the rest) is refused with "truncated" or "not an ELF", never accepted, never a crash.
TEST(ElfInfo, TruncatedElfIsRefused) {
  REQUIRE_PROGRAMS();
  const std::vector<uint8_t> whole = read_bytes(programs().rv32);
  ASSERT_GT(whole.size(), 1000u);
  const std::string path = programs().dir + "/truncated.elf";
  std::vector<size_t> cuts;
  for (size_t n = 0; n < 128; ++n) cuts.push_back(n);
  for (size_t n = 128; n < whole.size(); n += 61) cuts.push_back(n);
  cuts.push_back(whole.size() - 1);
  size_t truncated = 0;
  for (size_t n : cuts) {
    write_bytes(path, whole.data(), n);
    uscope_status_t code;
    const std::string m = error_of(path, &code);
    ASSERT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << n << " bytes: " << m;
    ASSERT_EQ(m.rfind(path + ": ", 0), 0u) << m;
    if (n > 0) {
      EXPECT_NE(m.find("truncated"), std::string::npos) << n << " bytes: " << m;
      ++truncated;
    }
  }
  EXPECT_GT(truncated, 100u);
  // Whole, but a section's or a loaded segment's bytes said to lie past the end.
  Elf32_Ehdr eh;
  std::memcpy(&eh, whole.data(), sizeof eh);
  ASSERT_GT(eh.e_shnum, 2);
  ASSERT_GT(eh.e_phnum, 0);
  for (int what = 0; what < 2; ++what) {
    std::vector<uint8_t> bad = whole;
    if (what == 0) {
      Elf32_Shdr sh;
      std::memcpy(&sh, bad.data() + eh.e_shoff + eh.e_shentsize, sizeof sh);  // section 1 (.text)
      sh.sh_offset = static_cast<Elf32_Off>(bad.size() - 4);
      std::memcpy(bad.data() + eh.e_shoff + eh.e_shentsize, &sh, sizeof sh);
    } else {
      Elf32_Phdr ph;
      for (unsigned i = 0; i < eh.e_phnum; ++i) {
        std::memcpy(&ph, bad.data() + eh.e_phoff + i * eh.e_phentsize, sizeof ph);
        if (ph.p_type != PT_LOAD) continue;
        ph.p_offset = static_cast<Elf32_Off>(bad.size() - 4);
        std::memcpy(bad.data() + eh.e_phoff + i * eh.e_phentsize, &ph, sizeof ph);
        break;
      }
    }
    write_bytes(path, bad.data(), bad.size());
    uscope_status_t code;
    const std::string m = error_of(path, &code);
    EXPECT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find(what == 0 ? "truncated ELF file: the section 1 (.text) ends at byte" : "the loaded segment ends at byte"),
              std::string::npos)
        << m;
  }
  write_bytes(path, whole.data(), whole.size());
  EXPECT_NO_THROW(ua::ElfInfo info(path));
}

// A string section without its final NUL (libdw 0.188 would strlen past it): refused, whichever.
TEST(ElfInfo, StringSectionWithoutNulIsRefused) {
  REQUIRE_PROGRAMS();
  const std::vector<uint8_t> whole = read_bytes(programs().rv32);
  Elf32_Ehdr eh;
  ASSERT_GT(whole.size(), sizeof eh);
  std::memcpy(&eh, whole.data(), sizeof eh);
  ASSERT_LT(eh.e_shstrndx, eh.e_shnum);
  const auto shdr = [&](unsigned i) {
    Elf32_Shdr sh;
    std::memcpy(&sh, whole.data() + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  const Elf32_Shdr names = shdr(eh.e_shstrndx);
  const std::string path = programs().dir + "/nul.elf";
  size_t checked = 0;
  for (unsigned i = 1; i < eh.e_shnum; ++i) {
    const Elf32_Shdr sh = shdr(i);
    const std::string name = reinterpret_cast<const char *>(whole.data() + names.sh_offset + sh.sh_name);
    if (name != ".debug_str" && name != ".debug_line_str" && name != ".strtab") continue;
    SCOPED_TRACE(name);
    std::vector<uint8_t> bad = whole;
    bad[sh.sh_offset + sh.sh_size - 1] = 'x';
    write_bytes(path, bad.data(), bad.size());
    uscope_status_t code;
    const std::string m = error_of(path, &code);
    EXPECT_EQ(code, USCOPE_ERR_INVALID_ARGUMENT) << m;
    EXPECT_EQ(m, path + ": corrupt ELF file: the string section " + name + " does not end with a NUL");
    ++checked;
  }
  EXPECT_EQ(checked, 3u);
}

// The firmware tests exist in a build with the testbench (USCOPE_BUILD_TB), which defines
// USCOPE_TB_FW_ELF and builds the firmware first; a missing ELF fails.
#ifdef USCOPE_TB_FW_ELF
TEST(ElfInfo, TestbenchFirmwareMatchesAddr2lineAndObjdump) {
  const std::string elf = USCOPE_TB_FW_ELF;
  ASSERT_TRUE(std::ifstream(elf).good()) << "missing firmware " << elf;
  ua::ElfInfo info(elf);
  EXPECT_EQ(info.xlen(), ua::Xlen::k32);
  EXPECT_NO_THROW(info.check_isa("RV32I_Zicsr"));  // sim_main.cpp's cpu.isa
  Listing l;
  ASSERT_TRUE(objdump(elf, &l));
  size_t located = 0, disassembled = 0;
  expect_locate_matches_addr2line(elf, l, &located);
  expect_disassembly_matches_objdump(elf, l, &disassembled);
  EXPECT_GT(located, 1000u);
  EXPECT_GT(disassembled, 1000u);
  std::printf("firmware: %zu pcs located, %zu instructions disassembled, %zu functions named\n", located,
              disassembled, l.headers.size());
}
#endif  // USCOPE_TB_FW_ELF
