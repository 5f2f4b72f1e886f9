// The RISC-V disassembler (src/analysis/riscv_disasm) against GNU objdump, instruction by
// instruction: `riscv64-unknown-elf-objdump -d` (Debian's binutils-riscv64-unknown-elf) is run at
// test time on the testbench firmware, on tests/unit/data/riscv_isa.s (every instruction,
// assembled for RV32 and RV64), on every 16-bit encoding and on a structured sweep of 32-bit
// ones. A missing tool or input fails the test; nothing is skipped.
//
// The objects are compared without symbols (objcopy --strip-all), so objdump prints targets and
// address comments as bare `0x...` numbers, which is what the disassembler prints without a
// symbolizer; the symbolizer's format is checked on the unstripped firmware separately.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/riscv_disasm.hpp"

using uscope::analysis::Decoded;
using uscope::analysis::Disassembler;
using uscope::analysis::DisasmOptions;
using uscope::analysis::Xlen;

namespace {

const char *const kObjdump = "riscv64-unknown-elf-objdump";
const char *const kObjcopy = "riscv64-unknown-elf-objcopy";
const char *const kAs = "riscv64-unknown-elf-as";
const char *const kReadelf = "riscv64-unknown-elf-readelf";

// Runs a shell command; returns its stdout, and its exit status in *status.
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

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = testing::TempDir() + "uscope_disasm_XXXXXX";
    std::vector<char> b(tmpl.begin(), tmpl.end());
    b.push_back('\0');
    if (mkdtemp(b.data()) != nullptr) path_ = b.data();
  }
  ~TempDir() {
    if (!path_.empty()) {
      int st;
      run("rm -rf '" + path_ + "'", &st);
    }
  }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

struct ObjLine {
  uint64_t addr;
  std::string text;  // after the bytes' tab: mnemonic \t operands, or a directive
};

// The instruction lines of `objdump -d`: "<spaces>addr:\t<bytes><spaces>\t<text>". Lines without
// the second tab (the continuation of a long byte dump) and headers are not instructions.
std::vector<ObjLine> parse_objdump(const std::string &out) {
  std::vector<ObjLine> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t digits = i;
    while (i < line.size() && std::strchr("0123456789abcdef", line[i]) != nullptr && line[i] != '\0') ++i;
    if (i == digits || line.compare(i, 2, ":\t") != 0) continue;
    const uint64_t addr = std::stoull(line.substr(digits, i - digits), nullptr, 16);
    const size_t bytes = i + 2, tab = line.find('\t', bytes);
    if (tab == std::string::npos) continue;
    if (line.find_first_not_of("0123456789abcdef ", bytes) != tab) continue;
    lines.push_back({addr, line.substr(tab + 1)});
  }
  return lines;
}

// The first hexadecimal number after `key` in `text` (e.g. a section's address in objdump -h).
bool hex_after(const std::string &text, size_t pos, uint64_t *value) {
  pos = text.find_first_of("0123456789abcdef", pos);
  if (pos == std::string::npos) return false;
  *value = std::stoull(text.substr(pos, text.find_first_not_of("0123456789abcdef", pos) - pos), nullptr, 16);
  return true;
}

// Replaces every "<...>" with "<sym>".
[[maybe_unused]] std::string anonymize_symbols(const std::string &text) {  // used only with USCOPE_TB_FW_ELF
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') {
      const size_t close = text.find('>', i);
      if (close != std::string::npos) {
        out += "<sym>";
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

const size_t kReportLimit = std::getenv("USCOPE_DISASM_ALL") ? SIZE_MAX : 40;

struct Comparison {
  size_t compared = 0;
  size_t mismatches = 0;
  std::string report;  // the first mismatches
};

// Walks the section as objdump did: at each of its lines, disassemble at that address and
// compare the text; the length must bring us to objdump's next line.
Comparison compare(const std::vector<uint8_t> &section, uint64_t vma, const std::vector<ObjLine> &lines,
                   Xlen xlen, DisasmOptions options = {}) {
  Comparison c;
  Disassembler dis(xlen, std::move(options));
  for (size_t i = 0; i < lines.size(); ++i) {
    const ObjLine &l = lines[i];
    const uint64_t off = l.addr - vma;
    if (off >= section.size()) {
      ++c.mismatches;
      c.report += "objdump line outside the section: " + l.text + "\n";
      continue;
    }
    // Exactly the readable bytes (up to the longest encoding, 22), so that a read past them
    // shows under ASan.
    const size_t avail = std::min<size_t>(section.size() - off, 24);
    std::vector<uint8_t> bytes(section.begin() + static_cast<std::ptrdiff_t>(off),
                               section.begin() + static_cast<std::ptrdiff_t>(off + avail));
    const Decoded d = dis.next(bytes.data(), bytes.size(), l.addr);
    const uint64_t next = i + 1 < lines.size() ? lines[i + 1].addr : vma + section.size();
    ++c.compared;
    const bool same = l.text.find("out of bounds") != std::string::npos
                          ? d.length == 0
                          : d.text == l.text && d.length == next - l.addr;
    if (!same) {
      if (++c.mismatches <= kReportLimit) {
        char addr[32];
        std::snprintf(addr, sizeof addr, "%8llx", static_cast<unsigned long long>(l.addr));
        c.report += std::string(addr) + ": objdump '" + l.text + "' ours '" + d.text + "' (length " +
                    std::to_string(d.length) + ", objdump " + std::to_string(next - l.addr) + ")\n";
      }
    }
  }
  return c;
}

// .text of an object (address 0 in a relocatable file) after stripping its symbols, and
// objdump's listing of the stripped file.
struct Listing {
  std::vector<uint8_t> text;
  uint64_t vma = 0;
  std::vector<ObjLine> lines;
};

::testing::AssertionResult objdump_stripped(const std::string &object, const std::string &dir, Listing *out) {
  int st;
  const std::string stripped = dir + "/stripped.o", raw = dir + "/text.bin";
  std::string o = run(std::string(kObjcopy) + " --strip-all '" + object + "' '" + stripped + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kObjcopy << " failed (" << st << "): " << o;
  o = run(std::string(kObjcopy) + " -O binary -j .text '" + stripped + "' '" + raw + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kObjcopy << " -O binary failed: " << o;
  out->text = read_file(raw);
  // The section's address: the first line of "objdump -h" that names .text.
  o = run(std::string(kObjdump) + " -h '" + stripped + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kObjdump << " -h failed: " << o;
  // " 0 .text         00000e20  00000000  00000000 ...": size, then VMA.
  const size_t sec = o.find(" .text ");
  uint64_t size = 0;
  if (sec == std::string::npos || !hex_after(o, sec + 7, &size))
    return ::testing::AssertionFailure() << "no .text in " << o;
  const size_t after_size = o.find_first_not_of("0123456789abcdef", o.find_first_of("0123456789abcdef", sec + 7));
  if (!hex_after(o, after_size, &out->vma)) return ::testing::AssertionFailure() << "no .text VMA in " << o;
  // -z: zero blocks disassembled too, not elided as "...".
  o = run(std::string(kObjdump) + " -d -z -j .text '" + stripped + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kObjdump << " -d failed (" << st << "): " << o;
  out->lines = parse_objdump(o);
  if (out->text.empty() || out->lines.empty())
    return ::testing::AssertionFailure() << "empty .text or listing for " << object;
  return ::testing::AssertionSuccess();
}

// `march` empty: rv32imac_zicsr_zifencei or rv64imac_zicsr_zifencei.
::testing::AssertionResult assemble(const std::string &source, const std::string &object, Xlen xlen,
                                    const std::string &flags, std::string march = "") {
  int st;
  if (march.empty()) march = xlen == Xlen::k64 ? "rv64imac_zicsr_zifencei" : "rv32imac_zicsr_zifencei";
  const std::string o = run(std::string(kAs) + " -march=" + march + (xlen == Xlen::k64 ? " --defsym RV64=1 " : " ") +
                                flags + " -o '" + object + "' '" + source + "'",
                            &st);
  if (st != 0) return ::testing::AssertionFailure() << kAs << " failed (" << st << "): " << o;
  return ::testing::AssertionSuccess();
}

// The extensions objdump decodes for an object: its Tag_RISCV_arch ("rv32i2p1_m2p0_c2p0_zicsr2p0")
// or, without one, all of ours (objdump's default rv64gc has them all).
::testing::AssertionResult extensions_of(const std::string &object, uint32_t *ext) {
  int st;
  const std::string o = run(std::string(kReadelf) + " -A '" + object + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kReadelf << " -A failed: " << o;
  const size_t tag = o.find("Tag_RISCV_arch: \"");
  if (tag == std::string::npos) {
    *ext = uscope::analysis::kExtAll;
    return ::testing::AssertionSuccess();
  }
  const size_t begin = tag + std::strlen("Tag_RISCV_arch: \"");
  const std::string arch = o.substr(begin, o.find('"', begin) - begin);
  *ext = 0;
  std::istringstream parts(arch.substr(4));  // after "rv32" / "rv64": "i2p1_m2p0_..."
  std::string part;
  while (std::getline(parts, part, '_')) {
    if (part.rfind("zicsr", 0) == 0) *ext |= uscope::analysis::kExtZicsr;
    else if (part.rfind("zifencei", 0) == 0) *ext |= uscope::analysis::kExtZifencei;
    else if (part[0] == 'm') *ext |= uscope::analysis::kExtM;
    else if (part[0] == 'a') *ext |= uscope::analysis::kExtA;
    else if (part[0] == 'c') *ext |= uscope::analysis::kExtC;
  }
  return ::testing::AssertionSuccess();
}

// The privileged spec objdump names CSRs by: the object's Tag_RISCV_priv_spec attributes
// ("Tag_RISCV_priv_spec: 1", "Tag_RISCV_priv_spec_minor: 11"), 1.12 without them.
::testing::AssertionResult priv_spec_of(const std::string &object, uscope::analysis::PrivSpec *spec) {
  int st;
  const std::string o = run(std::string(kReadelf) + " -A '" + object + "'", &st);
  if (st != 0) return ::testing::AssertionFailure() << kReadelf << " -A failed: " << o;
  using uscope::analysis::PrivSpec;
  *spec = PrivSpec::k1_12;
  const size_t minor = o.find("Tag_RISCV_priv_spec_minor: ");
  if (minor == std::string::npos) return ::testing::AssertionSuccess();
  const int m = std::atoi(o.c_str() + minor + std::strlen("Tag_RISCV_priv_spec_minor: "));
  switch (m) {
    case 9: *spec = PrivSpec::k1_9_1; break;
    case 10: *spec = PrivSpec::k1_10; break;
    case 11: *spec = PrivSpec::k1_11; break;
    case 12: *spec = PrivSpec::k1_12; break;
    default: return ::testing::AssertionFailure() << "unexpected priv spec minor " << m << " in " << o;
  }
  return ::testing::AssertionSuccess();
}

// Assembles `source`, strips it, and compares every instruction under the object's own
// extensions and privileged spec; returns how many.
size_t check_source(const std::string &source, Xlen xlen, const std::string &flags = "", const std::string &march = "") {
  TempDir dir;
  EXPECT_FALSE(dir.path().empty());
  const std::string object = dir.path() + "/a.o";
  EXPECT_TRUE(assemble(source, object, xlen, flags, march));
  DisasmOptions options;
  EXPECT_TRUE(priv_spec_of(object, &options.priv_spec));
  EXPECT_TRUE(extensions_of(object, &options.extensions));
  Listing l;
  EXPECT_TRUE(objdump_stripped(object, dir.path(), &l));
  const Comparison c = compare(l.text, l.vma, l.lines, xlen, options);
  EXPECT_EQ(c.mismatches, 0u) << c.report;
  return c.compared;
}

// Writes data words into .text as a source file (gas emits them as data, so they are assembled
// as is; stripping drops the mapping symbols that would make objdump print them as data).
std::string write_words(const std::string &dir, const std::vector<uint32_t> &words, int width) {
  const std::string path = dir + "/words.s";
  std::ofstream f(path);
  f << "\t.text\n";
  char buf[32];
  for (uint32_t w : words) {
    std::snprintf(buf, sizeof buf, width == 2 ? "\t.2byte 0x%04x\n" : "\t.4byte 0x%08x\n", w);
    f << buf;
  }
  return path;
}


}  // namespace

TEST(RiscvDisasm, ObjdumpIsInstalled) {
  int st;
  const std::string o = run(std::string(kObjdump) + " --version", &st);
  ASSERT_EQ(st, 0) << kObjdump << " is needed (Debian: binutils-riscv64-unknown-elf): " << o;
  EXPECT_NE(o.find("GNU objdump"), std::string::npos) << o;
}

// The firmware tests exist in a build with the testbench (USCOPE_BUILD_TB, as in the default
// preset), which defines USCOPE_TB_FW_ELF and builds the firmware first; a missing ELF fails.
#ifdef USCOPE_TB_FW_ELF
// 1. The testbench firmware (verilator_tb/fw): every instruction of its .text.
TEST(RiscvDisasm, TestbenchFirmwareMatchesObjdump) {
  const std::string elf = USCOPE_TB_FW_ELF;
  ASSERT_TRUE(std::ifstream(elf).good()) << "missing firmware " << elf;
  TempDir dir;
  Listing l;
  ASSERT_TRUE(objdump_stripped(elf, dir.path(), &l));
  const Comparison c = compare(l.text, l.vma, l.lines, Xlen::k32);
  EXPECT_EQ(c.mismatches, 0u) << c.report;
  EXPECT_GT(c.compared, 1000u);
  std::printf("firmware: %zu instructions compared\n", c.compared);
}
#endif  // USCOPE_TB_FW_ELF

// 2. Every RV32IMAC / RV64IMAC + Zicsr + Zifencei instruction, edge immediates and registers.
TEST(RiscvDisasm, EveryInstructionMatchesObjdump) {
  const std::string source = std::string(USCOPE_UNIT_DATA_DIR) + "/riscv_isa.s";
  ASSERT_TRUE(std::ifstream(source).good()) << "missing " << source;
  const size_t n32 = check_source(source, Xlen::k32);
  const size_t n64 = check_source(source, Xlen::k64);
  EXPECT_GT(n32, 250u);
  EXPECT_GT(n64, n32);
  std::printf("riscv_isa.s: %zu (RV32) + %zu (RV64) instructions compared\n", n32, n64);
}

// Every 16-bit encoding (quadrants 0-2, 49152 of them), on RV32 and RV64: the C extension's
// instructions, HINTs, reserved and RV32/RV64-only encodings.
TEST(RiscvDisasm, Every16BitEncodingMatchesObjdump) {
  TempDir dir;
  std::vector<uint32_t> halves;
  for (uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 3) != 3) halves.push_back(h);
  const std::string source = write_words(dir.path(), halves, 2);
  EXPECT_EQ(check_source(source, Xlen::k32), halves.size());
  EXPECT_EQ(check_source(source, Xlen::k64), halves.size());
  // Without C (-march=rv32i: objdump then prints every one as .2byte).
  EXPECT_EQ(check_source(source, Xlen::k32, "", "rv32i"), halves.size());
}

// A sweep of 32-bit encodings: every major opcode x funct3 x funct7 with random, zero and ra
// register and immediate fields, every CSR number (with each csr* instruction), the SYSTEM and MISC-MEM
// spaces, and 0x00000000 / 0xffffffff-like edge words.
TEST(RiscvDisasm, Sweep32BitEncodingsMatchesObjdump) {
  std::mt19937 rng(13);
  std::vector<uint32_t> words;
  // rs2 / imm[4:0] and rs1, rd: random, and each zero or ra (the aliases test for x0 and ra).
  const uint32_t fields[][3] = {{99, 99, 99}, {99, 99, 99}, {0, 99, 99}, {99, 0, 99}, {99, 99, 0},
                                {0, 0, 0},    {1, 1, 0},    {0, 1, 1}};
  for (uint32_t op = 0; op < 32; ++op)
    for (uint32_t f3 = 0; f3 < 8; ++f3)
      for (uint32_t f7 = 0; f7 < 128; ++f7)
        for (const auto &f : fields) {
          const auto pick = [&](uint32_t v) { return v == 99 ? rng() & 31 : v; };
          const uint32_t w = (f7 << 25) | (pick(f[0]) << 20) | (pick(f[1]) << 15) | (f3 << 12) | (pick(f[2]) << 7) |
                             (op << 2) | 3;
          if ((w & 0x1f) != 0x1f) words.push_back(w);
        }
  for (uint32_t csr = 0; csr < 4096; ++csr)
    for (uint32_t f3 : {1u, 2u, 3u, 5u, 6u, 7u})
      words.push_back((csr << 20) | ((csr % 3 == 0 ? 0u : (csr & 31)) << 15) | (f3 << 12) |
                      ((csr % 5 == 0 ? 0u : 10u) << 7) | 0x73);
  for (uint32_t hi = 0; hi < 4096; ++hi) {                                  // SYSTEM funct3 = 0
    words.push_back((hi << 20) | 0x73);
    words.push_back((hi << 20) | ((rng() & 31) << 15) | 0x73);
    words.push_back((hi << 20) | ((rng() & 31) << 15) | ((rng() & 31) << 7) | 0x73);
  }
  for (uint32_t fm_pred_succ = 0; fm_pred_succ < 4096; ++fm_pred_succ) {   // MISC-MEM
    words.push_back((fm_pred_succ << 20) | 0x0f);
    words.push_back((fm_pred_succ << 20) | ((rng() & 31) << 15) | ((rng() & 31) << 7) | 0x0f);
    words.push_back((fm_pred_succ << 20) | 0x100f);
  }
  for (uint32_t w : {0x00000013u, 0xfff00013u, 0x80000037u, 0x7ffff06fu, 0x800000efu, 0xfe000ee3u,
                     0x7e000fe3u, 0x00000003u, 0xfffff003u, 0x0000006fu, 0xffffffefu})
    words.push_back(w);
  TempDir dir;
  const std::string source = write_words(dir.path(), words, 4);
  EXPECT_EQ(check_source(source, Xlen::k32), words.size());
  EXPECT_EQ(check_source(source, Xlen::k64), words.size());
  // Fewer extensions: objdump prints the encodings of the others as .4byte.
  EXPECT_EQ(check_source(source, Xlen::k32, "", "rv32i"), words.size());
  EXPECT_EQ(check_source(source, Xlen::k64, "", "rv64ia_zicsr"), words.size());
  std::printf("32-bit sweep: %zu words, 4 times\n", words.size());
}

// Every CSR number under each privileged-spec version objdump knows (the names differ: the
// N extension's ustatus until 1.12, mbadaddr before 1.10, pmpaddr16.. from 1.12, ...).
TEST(RiscvDisasm, EveryCsrNameMatchesObjdumpForEachPrivSpec) {
  TempDir dir;
  const std::string path = dir.path() + "/csr.s";
  {
    std::ofstream f(path);
    f << "\t.text\n";
    for (int csr = 0; csr < 4096; ++csr) f << "\tcsrrs ra, " << csr << ", a0\n\tcsrrwi zero, " << csr << ", 1\n";
  }
  for (const char *spec : {"1.9.1", "1.10", "1.11", "1.12"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(check_source(path, Xlen::k32, std::string("-mpriv-spec=") + spec), 8192u);
  }
}

// Illegal and over-long encodings (the 48-, 64- and 80..176-bit length prefixes of the spec's
// 1.5, and 0xffff, whose prefix is reserved) print as objdump's data directives and step as it
// does; truncated input gives length 0 and reads nothing past `avail`.
TEST(RiscvDisasm, IllegalAndLongEncodingsMatchObjdump) {
  TempDir dir;
  const std::string path = dir.path() + "/long.s";
  {
    std::ofstream f(path);
    f << "\t.text\n"
         "\t.2byte 0x0000, 0x0000\n"      // 0x00000000: two c.unimp halves
         "\t.2byte 0xffff, 0xffff\n"      // 0xffffffff: two reserved-prefix halves
         "\t.2byte 0x001f, 0x1234, 0x5678\n"
         "\t.2byte 0x003f, 0x1111, 0x2222, 0x3333\n"
         "\t.2byte 0x007f, 1, 2, 3, 4\n"
         "\t.2byte 0x107f, 1, 2, 3, 4, 5\n"
         "\t.2byte 0x607f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10\n"
         "\t.2byte 0x2000, 0x8000, 0x9c41, 0x6101\n"  // reserved RV32/RV64 C encodings
         "\t.4byte 0x0000707b, 0xffffffff\n";
  }
  EXPECT_GT(check_source(path, Xlen::k32), 10u);
  EXPECT_GT(check_source(path, Xlen::k64), 10u);
}

TEST(RiscvDisasm, TruncatedInputGivesLengthZero) {
  const uint8_t addi[4] = {0x13, 0x05, 0x15, 0x00};  // addi a0,a0,1 (32-bit)
  for (size_t avail = 0; avail < 4; ++avail) {
    std::vector<uint8_t> b(addi, addi + avail);
    const Decoded d = uscope::analysis::disassemble(avail ? b.data() : nullptr, avail, 0, Xlen::k32);
    EXPECT_EQ(d.length, 0) << avail;
    EXPECT_FALSE(d.known);
    EXPECT_NE(d.text.find("truncated"), std::string::npos) << d.text;
  }
  const Decoded d = uscope::analysis::disassemble(addi, 4, 0, Xlen::k32);
  EXPECT_EQ(d.length, 4);
  EXPECT_TRUE(d.known);
  EXPECT_EQ(d.text, "add\ta0,a0,1");
  const uint8_t c_nop[2] = {0x01, 0x00};
  EXPECT_EQ(uscope::analysis::disassemble(c_nop, 2, 0, Xlen::k64).text, "nop");
  const uint8_t longer[2] = {0x3f, 0x00};  // announces 8 bytes
  EXPECT_EQ(uscope::analysis::disassemble(longer, 2, 0, Xlen::k64).length, 0);
}

// Random bytes with random lengths: never crashes, never reads past `avail` (ASan builds see it),
// always either a length within `avail` or 0.
TEST(RiscvDisasm, RandomBytesNeverReadPastAvail) {
  std::mt19937 rng(42);
  Disassembler dis64(Xlen::k64), dis32(Xlen::k32);
  for (int i = 0; i < 200000; ++i) {
    const size_t avail = rng() % 24;
    std::vector<uint8_t> b(avail);
    for (uint8_t &x : b) x = static_cast<uint8_t>(rng());
    const Decoded d = (i % 2 ? dis32 : dis64).next(b.data(), avail, rng());
    EXPECT_LE(d.length, avail);
    if (d.length == 0) {
      EXPECT_FALSE(d.known);
    }
    if (d.known) {
      EXPECT_TRUE(d.length == 2 || d.length == 4);
    }
  }
}

#ifdef USCOPE_TB_FW_ELF
// With a symbolizer, targets and address comments print as objdump prints them for a file that
// has symbols: bare hex and <name>. Checked on the unstripped firmware, where objdump names
// every target: the names themselves are objdump's symbol choice, so both sides' names are
// replaced by <sym> and the rest compared exactly (gp from __global_pointer$).
TEST(RiscvDisasm, SymbolizedFirmwareMatchesObjdump) {
  const std::string elf = USCOPE_TB_FW_ELF;
  ASSERT_TRUE(std::ifstream(elf).good()) << "missing firmware " << elf;
  int st;
  const std::string syms = run(std::string(kObjdump) + " -t '" + elf + "'", &st);
  ASSERT_EQ(st, 0) << syms;
  // "10000cc0 g       .data	00000000 __global_pointer$"
  const size_t gp_name = syms.find(" __global_pointer$\n");
  ASSERT_NE(gp_name, std::string::npos) << syms;
  const size_t gp_line = syms.rfind('\n', gp_name) + 1;
  uint64_t gp = 0;
  ASSERT_TRUE(hex_after(syms, gp_line, &gp));
  DisasmOptions opt;
  opt.gp = gp;
  opt.symbolize = [](uint64_t) { return std::string("sym"); };
  TempDir dir;
  Listing l;
  ASSERT_TRUE(objdump_stripped(elf, dir.path(), &l));  // the bytes and vma
  const std::string listing = run(std::string(kObjdump) + " -d -z -j .text '" + elf + "'", &st);
  ASSERT_EQ(st, 0) << listing;
  std::vector<ObjLine> lines = parse_objdump(listing);
  for (ObjLine &line : lines) line.text = anonymize_symbols(line.text);
  // objdump prints data in .text ($d mapping symbols) as .word: not instructions, left out.
  std::vector<ObjLine> insns;
  size_t data = 0;
  for (const ObjLine &line : lines) {
    if (line.text.rfind(".word", 0) == 0 || line.text.rfind(".short", 0) == 0 || line.text.rfind(".byte", 0) == 0) {
      ++data;
      continue;
    }
    insns.push_back(line);
  }
  EXPECT_LE(data, 4u);
  // Compare each instruction on its own line's bytes; the address state runs through all.
  Disassembler dis(Xlen::k32, opt);
  size_t mismatches = 0, compared = 0;
  std::string report;
  for (const ObjLine &line : insns) {
    const uint64_t off = line.addr - l.vma;
    ASSERT_LT(off, l.text.size());
    const Decoded d = dis.next(l.text.data() + off, l.text.size() - off, line.addr);
    ++compared;
    if (d.text != line.text && ++mismatches <= 40) report += "objdump '" + line.text + "' ours '" + d.text + "'\n";
  }
  EXPECT_EQ(mismatches, 0u) << report;
  EXPECT_GT(compared, 1000u);
}
#endif  // USCOPE_TB_FW_ELF
