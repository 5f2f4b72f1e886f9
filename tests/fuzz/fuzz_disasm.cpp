// libFuzzer target over the RISC-V disassembler (src/analysis/riscv_disasm.hpp): a stream of
// arbitrary bytes walked with Disassembler::next as a timeline walks a code region, under the
// options the first bytes choose:
//
//   byte 0      bit 0: XLEN 64 (else 32); bit 1: a gp value; bit 2: a symbolizer;
//               bits 3-4: the privileged spec (1.9.1, 1.10, 1.11, 1.12)
//   byte 1      the extensions to decode (M, A, C, Zicsr, Zifencei: the low 5 bits)
//   bytes 2-9   the first pc (little-endian)
//   bytes 10-17 the gp value
//   the rest    the code
//
// (missing header bytes read as 0). The symbolizer names an address "s<hex>" or, for every
// eighth address, nothing, so both of its printed forms are reached.
//
// Beyond "no crash, no sanitizer report, no read past `avail`", each answer is checked:
//   - its length is the one the spec's length prefix announces (unprivileged ISA 1.5), or 0 when
//     fewer bytes are left, and a known instruction is 2 or 4 bytes long;
//   - an unknown encoding prints as objdump's data directive, whose value reads back as exactly
//     the bytes (".4byte 0x..." / ".byte 0x.., 0x.."): a round trip;
//   - a known one is a lowercase mnemonic, then a tab and printable operands, with `<name>` only
//     from the symbolizer;
//   - reset() restores the initial state: a second walk prints the same text.
// Each call gets the bytes left (at most 24: an encoding is at most 22) in a buffer of exactly
// that size, so ASan sees a read past `avail`.
//
// Built like fuzz_reader.cpp (tests/fuzz/CMakeLists.txt): a libFuzzer binary with
// USCOPE_FUZZ=ON, run by .ci/fuzz.sh, and always a ctest replay of corpus/disasm/ (real code:
// the instruction list of tests/unit/data/riscv_isa.s assembled for RV32 and RV64, testbench
// firmware, long and illegal encodings, each behind a header as above).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/riscv_disasm.hpp"

using uscope::analysis::Decoded;
using uscope::analysis::Disassembler;
using uscope::analysis::DisasmOptions;
using uscope::analysis::PrivSpec;
using uscope::analysis::Xlen;

namespace {

[[noreturn]] void fail(const char *what, uint64_t pc, const Decoded &d) {
  std::fprintf(stderr, "fuzz_disasm: %s at pc 0x%llx: length %u known %d text '%s'\n", what,
               static_cast<unsigned long long>(pc), d.length, d.known ? 1 : 0, d.text.c_str());
  std::abort();
}

uint64_t le64(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// The unprivileged ISA's 1.5 "Expanded Instruction-Length Encoding" of the first halfword:
// 16, 32, 48, 64 and 80 + 16*nnn bits; the reserved >= 192-bit prefix steps 2 bytes, as objdump.
unsigned spec_length(uint16_t h) {
  if ((h & 0x03) != 0x03) return 2;
  if ((h & 0x1c) != 0x1c) return 4;
  if ((h & 0x20) == 0) return 6;
  if ((h & 0x40) == 0) return 8;
  const unsigned nnn = (h >> 12) & 7;
  return nnn == 7 ? 2 : 10 + 2 * nnn;
}

// ".Nbyte\t0x<hex>" or ".byte\t0x..[, 0x..]*": the bytes it stands for, false when malformed.
bool directive_bytes(const std::string &t, std::vector<uint8_t> *out) {
  out->clear();
  unsigned n = 0;
  if (std::sscanf(t.c_str(), ".%ubyte\t", &n) == 1 && (n == 2 || n == 4 || n == 8)) {
    const std::string prefix = "." + std::to_string(n) + "byte\t0x";
    if (t.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string digits = t.substr(prefix.size());
    if (digits.empty() || digits.size() > 2 * n || digits.find_first_not_of("0123456789abcdef") != std::string::npos ||
        (digits.size() > 1 && digits[0] == '0'))
      return false;
    const uint64_t v = std::strtoull(digits.c_str(), nullptr, 16);
    for (unsigned i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
    return true;
  }
  if (t.compare(0, 6, ".byte\t") != 0) return false;
  size_t i = 6;
  while (i < t.size()) {
    if (t.compare(i, 2, "0x") != 0 || i + 4 > t.size()) return false;
    const std::string hx = t.substr(i + 2, 2);
    if (hx.find_first_not_of("0123456789abcdef") != std::string::npos) return false;
    out->push_back(static_cast<uint8_t>(std::strtoul(hx.c_str(), nullptr, 16)));
    i += 4;
    if (i == t.size()) break;
    if (t.compare(i, 2, ", ") != 0) return false;
    i += 2;
  }
  return !out->empty();
}

void check_known_text(const Decoded &d, bool symbolized, uint64_t pc) {
  const std::string &t = d.text;
  size_t i = 0;
  while (i < t.size() && ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  if (i == 0 || !(t[0] >= 'a' && t[0] <= 'z')) fail("no mnemonic", pc, d);
  if (i < t.size() && t[i] != '\t') fail("mnemonic not followed by a tab", pc, d);
  for (size_t k = i + (i < t.size() ? 1 : 0); k < t.size(); ++k)
    if (t[k] < 0x20 || t[k] > 0x7e) fail("unprintable operand text", pc, d);
  for (size_t lt = t.find('<'); lt != std::string::npos; lt = t.find('<', lt + 1)) {
    if (!symbolized) fail("a <name> without a symbolizer", pc, d);
    if (t.compare(lt, 2, "<s") != 0 || t.find('>', lt) == std::string::npos) fail("a <name> the symbolizer did not give", pc, d);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t header[18] = {};
  std::memcpy(header, data, size < sizeof header ? size : sizeof header);
  const uint8_t *code = size > sizeof header ? data + sizeof header : nullptr;
  const size_t code_size = size > sizeof header ? size - sizeof header : 0;

  const Xlen xlen = (header[0] & 1) ? Xlen::k64 : Xlen::k32;
  const bool symbolized = (header[0] & 4) != 0;
  DisasmOptions opt;
  opt.extensions = header[1] & uscope::analysis::kExtAll;
  static constexpr PrivSpec kSpecs[4] = {PrivSpec::k1_9_1, PrivSpec::k1_10, PrivSpec::k1_11, PrivSpec::k1_12};
  opt.priv_spec = kSpecs[(header[0] >> 3) & 3];
  if (header[0] & 2) opt.gp = le64(header + 10, 8);
  if (symbolized) {
    opt.symbolize = [](uint64_t a) {
      if (a % 8 == 3) return std::string();
      char b[24];
      std::snprintf(b, sizeof b, "s%llx", static_cast<unsigned long long>(a));
      return std::string(b);
    };
  }
  const uint64_t pc0 = le64(header + 2, 8);

  Disassembler dis(xlen, opt);
  std::vector<std::string> texts;
  std::vector<uint8_t> back;
  for (int pass = 0; pass < 2; ++pass) {
    uint64_t pc = pc0;
    size_t off = 0, n = 0;
    while (true) {
      // The bytes left, at most 24 (an encoding is at most 22), in a buffer of exactly that size
      // (ASan sees a read past `avail`).
      const size_t avail = code_size - off < 24 ? code_size - off : 24;
      std::vector<uint8_t> bytes(code ? code + off : nullptr, code ? code + off + avail : nullptr);
      const Decoded d = dis.next(bytes.empty() ? nullptr : bytes.data(), avail, pc);
      const unsigned want = avail >= 2 ? spec_length(static_cast<uint16_t>(bytes[0] | (bytes[1] << 8))) : 2;
      if (d.length != (avail >= want ? want : 0)) fail("length differs from the spec's length prefix", pc, d);
      if (d.text.empty()) fail("empty text", pc, d);
      if (pass == 0) {
        if (d.length == 0) {
          if (d.known) fail("known with length 0", pc, d);
        } else if (d.known) {
          if (d.length != 2 && d.length != 4) fail("a known instruction that is not 2 or 4 bytes", pc, d);
          check_known_text(d, symbolized, pc);
        } else {
          if (!directive_bytes(d.text, &back) || back.size() != d.length ||
              std::memcmp(back.data(), bytes.data(), d.length) != 0)
            fail("the data directive does not read back as the bytes", pc, d);
        }
        texts.push_back(d.text);
      } else if (n >= texts.size() || texts[n] != d.text) {
        fail("after reset() the text differs", pc, d);
      }
      ++n;
      if (d.length == 0) break;
      off += d.length;
      pc += d.length;
    }
    dis.reset();
  }
  return 0;
}
