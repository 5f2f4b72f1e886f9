// Table-driven RISC-V disassembler (riscv_disasm.hpp). Two tables drive it: kAliases, the
// preferred spellings objdump prints (li, mv, ret, beqz, csrr, ...), searched first in the order
// objdump searches its own table, and kInstructions, the encodings of the ISA itself (with the
// `c.` names objdump falls back to for the compressed HINT encodings). The first entry whose
// mask/match and extra check accept the word is printed with its operand string.
//
// Spec references: "The RISC-V Instruction Set Manual, Volume I: Unprivileged ISA" (20191213):
// ch. 2 RV32I base (2.4 integer computational, 2.5 control transfer, 2.6 loads and stores,
// 2.7 memory ordering), ch. 3 Zifencei, ch. 5 RV64I, ch. 7 M, ch. 8 A, ch. 9 Zicsr, ch. 16 C
// (16.8 "RVC Instruction Set Listings": the quadrant tables), ch. 24 opcode map, 1.5
// instruction-length encoding; Volume II (Privileged) 3.3 for mret/sret/wfi/sfence.vma.
#include "analysis/riscv_disasm.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

namespace uscope::analysis {
namespace {

constexpr uint64_t kNoAddr = ~uint64_t{0};

// ABI register names (psABI "Integer Register Convention"), as objdump prints by default.
constexpr const char *kGpr[32] = {"zero", "ra", "sp",  "gp",  "tp", "t0", "t1", "t2",
                                  "s0",   "s1", "a0",  "a1",  "a2", "a3", "a4", "a5",
                                  "a6",   "a7", "s2",  "s3",  "s4", "s5", "s6", "s7",
                                  "s8",   "s9", "s10", "s11", "t3", "t4", "t5", "t6"};

// The extension that defines an entry (DisasmOptions::extensions selects them).
enum class Ext : uint8_t { kI, kM, kA, kC, kZicsr, kZifencei, kPriv };

// Conditions beyond mask/match (reserved and HINT encodings of the C extension, chapter 16).
enum class Check : uint8_t {
  kNone,
  kRdNonzero,   // rd (bits 11:7) != x0
  kCAdd,        // c.add / c.mv: rd != x0 and rs2 != x0
  kRs2Nonzero,  // c.add / c.mv HINT forms (rd == x0): rs2 != x0
  kCLui,        // c.lui: rd != x0, rd != sp, nzimm != 0
  kCLuiHint,    // c.lui HINT form: rd != sp, nzimm != 0
  kCAddi4spn,   // c.addi4spn: nzuimm != 0
  kCShamt,      // c.slli / c.srli / c.srai: shamt != 0 (shamt 0 is the *64 HINT)
  kCSlli,       // c.slli printed as `sll`: rd != x0 and shamt != 0
};

struct Entry {
  const char *name;
  // Operands, one letter (or 'C' + letter for a compressed field) each, and literal , ( ):
  //  d rd   s rs1   t rs2   z "zero"   u U-imm (hex, bits 31:12)   a J target   p B target
  //  j I-imm   o I-imm as a load/jalr offset   q S-imm   > shamt[5:0]   < shamt[4:0] (hex)
  //  E CSR name   Z uimm[4:0] in rs1   P / Q fence predecessor / successor set
  //  0 a zero offset (printed only when last: `lr.w a0,(a1)`)
  //  Cs/Cw rs1' (9:7)   Ct/Cx rs2' (4:2)   CU rd   CV rs2 (6:2)   Cc "sp"   Cz "zero"
  //  Co/Cj CI-imm   Cu c.lui imm (hex)   C> CI shamt (hex)   Ck/Cl CL lw/ld offset
  //  Cm/Cn lwsp/ldsp offset   CM/CN swsp/sdsp offset   CK addi4spn imm   CL addi16sp imm
  //  Cp CB target   Ca CJ target
  const char *args;
  uint32_t match;
  uint32_t mask;
  Check check;
  uint8_t xlen;  // 0: RV32 and RV64
  Ext ext;
};

using C = Check;
using E = Ext;

// objdump's preferred spellings, in the order binutils 2.40 prefers them (the first match wins;
// the order and masks were checked against its output on every 16-bit encoding and a sweep of
// 32-bit ones, test_riscv_disasm.cpp).
constexpr Entry kAliases[] = {
    {"unimp", "", 0x0000, 0xffff, C::kNone, 0, E::kC},                  // 16.8: all-zero is illegal
    {"unimp", "", 0xc0001073, 0xffffffff, C::kNone, 0, E::kI},  // csrrw x0,cycle,x0 (base in objdump)
    {"ebreak", "", 0x9002, 0xffff, C::kNone, 0, E::kC},
    {"ebreak", "", 0x00100073, 0xffffffff, C::kNone, 0, E::kI},
    {"ret", "", 0x8082, 0xffff, C::kNone, 0, E::kC},                    // c.jr ra
    {"ret", "", 0x00008067, 0xffffffff, C::kNone, 0, E::kI},            // jalr x0,0(ra)
    {"jr", "d", 0x8002, 0xf07f, C::kRdNonzero, 0, E::kC},
    {"jr", "s", 0x00000067, 0xfff07fff, C::kNone, 0, E::kI},
    {"jr", "o(s)", 0x00000067, 0x00007fff, C::kNone, 0, E::kI},
    {"jalr", "d", 0x9002, 0xf07f, C::kRdNonzero, 0, E::kC},
    {"jalr", "s", 0x000000e7, 0xfff07fff, C::kNone, 0, E::kI},          // rd = ra
    {"jalr", "o(s)", 0x000000e7, 0x00007fff, C::kNone, 0, E::kI},
    {"jalr", "d,s", 0x00000067, 0xfff0707f, C::kNone, 0, E::kI},       // jalr rd,0(rs)
    {"j", "Ca", 0xa001, 0xe003, C::kNone, 0, E::kC},
    {"j", "a", 0x0000006f, 0x00000fff, C::kNone, 0, E::kI},             // jal x0
    {"jal", "a", 0x000000ef, 0x00000fff, C::kNone, 0, E::kI},           // jal ra
    {"jal", "Ca", 0x2001, 0xe003, C::kNone, 32, E::kC},
    {"nop", "", 0x0001, 0xffff, C::kNone, 0, E::kC},
    {"nop", "", 0x00000013, 0xffffffff, C::kNone, 0, E::kI},
    {"lui", "d,Cu", 0x6001, 0xe003, C::kCLui, 0, E::kC},
    {"li", "d,Co", 0x4001, 0xe003, C::kRdNonzero, 0, E::kC},
    {"li", "d,j", 0x00000013, 0x000ff07f, C::kNone, 0, E::kI},          // addi rd,x0,imm
    {"mv", "d,CV", 0x8002, 0xf003, C::kCAdd, 0, E::kC},
    {"mv", "d,s", 0x00000013, 0xfff0707f, C::kNone, 0, E::kI},          // addi rd,rs,0
    {"zext.b", "d,s", 0x0ff07013, 0xfff0707f, C::kNone, 0, E::kI},      // andi rd,rs,255
    {"and", "Cs,Cw,Ct", 0x8c61, 0xfc63, C::kNone, 0, E::kC},
    {"and", "Cs,Cw,Co", 0x8801, 0xec03, C::kNone, 0, E::kC},            // c.andi
    {"and", "d,s,t", 0x00007033, 0xfe00707f, C::kNone, 0, E::kI},
    {"and", "d,s,j", 0x00007013, 0x0000707f, C::kNone, 0, E::kI},       // andi
    {"beqz", "Cs,Cp", 0xc001, 0xe003, C::kNone, 0, E::kC},
    {"beqz", "s,p", 0x00000063, 0x01f0707f, C::kNone, 0, E::kI},
    {"blez", "t,p", 0x00005063, 0x000ff07f, C::kNone, 0, E::kI},        // bge x0,rs
    {"bgez", "s,p", 0x00005063, 0x01f0707f, C::kNone, 0, E::kI},        // bge rs,x0
    {"bltz", "s,p", 0x00004063, 0x01f0707f, C::kNone, 0, E::kI},
    {"bgtz", "t,p", 0x00004063, 0x000ff07f, C::kNone, 0, E::kI},
    {"bnez", "Cs,Cp", 0xe001, 0xe003, C::kNone, 0, E::kC},
    {"bnez", "s,p", 0x00001063, 0x01f0707f, C::kNone, 0, E::kI},
    {"add", "d,CU,CV", 0x9002, 0xf003, C::kCAdd, 0, E::kC},
    {"add", "d,CU,Co", 0x0001, 0xe003, C::kRdNonzero, 0, E::kC},        // c.addi
    {"add", "Ct,Cc,CK", 0x0000, 0xe003, C::kCAddi4spn, 0, E::kC},
    {"add", "Cc,Cc,CL", 0x6101, 0xef83, C::kNone, 0, E::kC},
    {"add", "d,s,t", 0x00000033, 0xfe00707f, C::kNone, 0, E::kI},
    {"add", "d,s,j", 0x00000013, 0x0000707f, C::kNone, 0, E::kI},       // addi
    {"neg", "d,t", 0x40000033, 0xfe0ff07f, C::kNone, 0, E::kI},         // sub rd,x0,rs
    {"sll", "d,CU,C>", 0x0002, 0xe003, C::kCSlli, 0, E::kC},
    {"sll", "d,s,t", 0x00001033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sll", "d,s,>", 0x00001013, 0xfc00707f, C::kNone, 0, E::kI},       // slli
    {"srl", "Cs,Cw,C>", 0x8001, 0xec03, C::kCShamt, 0, E::kC},
    {"srl", "d,s,t", 0x00005033, 0xfe00707f, C::kNone, 0, E::kI},
    {"srl", "d,s,>", 0x00005013, 0xfc00707f, C::kNone, 0, E::kI},       // srli
    {"sra", "Cs,Cw,C>", 0x8401, 0xec03, C::kCShamt, 0, E::kC},
    {"sra", "d,s,t", 0x40005033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sra", "d,s,>", 0x40005013, 0xfc00707f, C::kNone, 0, E::kI},       // srai
    {"sub", "Cs,Cw,Ct", 0x8c01, 0xfc63, C::kNone, 0, E::kC},
    {"lw", "d,Cm(Cc)", 0x4002, 0xe003, C::kRdNonzero, 0, E::kC},        // c.lwsp
    {"lw", "Ct,Ck(Cs)", 0x4000, 0xe003, C::kNone, 0, E::kC},
    {"not", "d,s", 0xfff04013, 0xfff0707f, C::kNone, 0, E::kI},         // xori rd,rs,-1
    {"or", "Cs,Cw,Ct", 0x8c41, 0xfc63, C::kNone, 0, E::kC},
    {"or", "d,s,t", 0x00006033, 0xfe00707f, C::kNone, 0, E::kI},
    {"or", "d,s,j", 0x00006013, 0x0000707f, C::kNone, 0, E::kI},        // ori
    {"seqz", "d,s", 0x00103013, 0xfff0707f, C::kNone, 0, E::kI},        // sltiu rd,rs,1
    {"snez", "d,t", 0x00003033, 0xfe0ff07f, C::kNone, 0, E::kI},        // sltu rd,x0,rs
    {"sltz", "d,s", 0x00002033, 0xfff0707f, C::kNone, 0, E::kI},        // slt rd,rs,x0
    {"sgtz", "d,t", 0x00002033, 0xfe0ff07f, C::kNone, 0, E::kI},        // slt rd,x0,rs
    {"sw", "CV,CM(Cc)", 0xc002, 0xe003, C::kNone, 0, E::kC},            // c.swsp
    {"sw", "Ct,Ck(Cs)", 0xc000, 0xe003, C::kNone, 0, E::kC},
    {"fence", "", 0x0ff0000f, 0xffffffff, C::kNone, 0, E::kI},          // fence iorw,iorw
    // csrrs rd,cycle,x0 ...: objdump counts these (and unimp) as base, decoded without Zicsr
    {"rdcycle", "d", 0xc0002073, 0xfffff07f, C::kNone, 0, E::kI},
    {"rdinstret", "d", 0xc0202073, 0xfffff07f, C::kNone, 0, E::kI},
    {"rdtime", "d", 0xc0102073, 0xfffff07f, C::kNone, 0, E::kI},
    {"rdcycleh", "d", 0xc8002073, 0xfffff07f, C::kNone, 32, E::kI},
    {"rdinstreth", "d", 0xc8202073, 0xfffff07f, C::kNone, 32, E::kI},
    {"rdtimeh", "d", 0xc8102073, 0xfffff07f, C::kNone, 32, E::kI},
    {"xor", "Cs,Cw,Ct", 0x8c21, 0xfc63, C::kNone, 0, E::kC},
    {"xor", "d,s,t", 0x00004033, 0xfe00707f, C::kNone, 0, E::kI},
    {"xor", "d,s,j", 0x00004013, 0x0000707f, C::kNone, 0, E::kI},       // xori
    {"ld", "d,Cn(Cc)", 0x6002, 0xe003, C::kRdNonzero, 64, E::kC},       // c.ldsp
    {"ld", "Ct,Cl(Cs)", 0x6000, 0xe003, C::kNone, 64, E::kC},
    {"sd", "CV,CN(Cc)", 0xe002, 0xe003, C::kNone, 64, E::kC},           // c.sdsp
    {"sd", "Ct,Cl(Cs)", 0xe000, 0xe003, C::kNone, 64, E::kC},
    {"sext.w", "d,CU", 0x2001, 0xf07f, C::kRdNonzero, 64, E::kC},       // c.addiw rd,0
    {"sext.w", "d,s", 0x0000001b, 0xfff0707f, C::kNone, 64, E::kI},     // addiw rd,rs,0
    {"addw", "Cs,Cw,Ct", 0x9c21, 0xfc63, C::kNone, 64, E::kC},
    {"addw", "d,CU,Co", 0x2001, 0xe003, C::kRdNonzero, 64, E::kC},      // c.addiw
    {"addw", "d,s,t", 0x0000003b, 0xfe00707f, C::kNone, 64, E::kI},
    {"addw", "d,s,j", 0x0000001b, 0x0000707f, C::kNone, 64, E::kI},     // addiw
    {"negw", "d,t", 0x4000003b, 0xfe0ff07f, C::kNone, 64, E::kI},       // subw rd,x0,rs
    {"sllw", "d,s,t", 0x0000103b, 0xfe00707f, C::kNone, 64, E::kI},
    {"sllw", "d,s,<", 0x0000101b, 0xfe00707f, C::kNone, 64, E::kI},     // slliw
    {"srlw", "d,s,t", 0x0000503b, 0xfe00707f, C::kNone, 64, E::kI},
    {"srlw", "d,s,<", 0x0000501b, 0xfe00707f, C::kNone, 64, E::kI},     // srliw
    {"sraw", "d,s,t", 0x4000503b, 0xfe00707f, C::kNone, 64, E::kI},
    {"sraw", "d,s,<", 0x4000501b, 0xfe00707f, C::kNone, 64, E::kI},     // sraiw
    {"subw", "Cs,Cw,Ct", 0x9c01, 0xfc63, C::kNone, 64, E::kC},
    {"csrr", "d,E", 0x00002073, 0x000ff07f, C::kNone, 0, E::kZicsr},    // csrrs rd,csr,x0
    {"csrw", "E,s", 0x00001073, 0x00007fff, C::kNone, 0, E::kZicsr},    // csrrw x0,csr,rs
    {"csrw", "E,Z", 0x00005073, 0x00007fff, C::kNone, 0, E::kZicsr},    // csrrwi x0,csr,uimm
    {"csrs", "E,s", 0x00002073, 0x00007fff, C::kNone, 0, E::kZicsr},
    {"csrs", "E,Z", 0x00006073, 0x00007fff, C::kNone, 0, E::kZicsr},
    {"csrc", "E,s", 0x00003073, 0x00007fff, C::kNone, 0, E::kZicsr},
    {"csrc", "E,Z", 0x00007073, 0x00007fff, C::kNone, 0, E::kZicsr},
    {"csrrw", "d,E,Z", 0x00005073, 0x0000707f, C::kNone, 0, E::kZicsr}, // csrrwi
    {"csrrs", "d,E,Z", 0x00006073, 0x0000707f, C::kNone, 0, E::kZicsr}, // csrrsi
    {"csrrc", "d,E,Z", 0x00007073, 0x0000707f, C::kNone, 0, E::kZicsr}, // csrrci
    {"sfence.vma", "", 0x12000073, 0xffffffff, C::kNone, 0, E::kPriv},
    {"sfence.vma", "s", 0x12000073, 0xfff07fff, C::kNone, 0, E::kPriv},
};

// The A extension (ch. 8): funct5 in 31:27, aq in 26, rl in 25, width in funct3 (2: .w, 3: .d).
constexpr uint32_t amo(uint32_t funct5, uint32_t funct3, uint32_t aqrl) {
  return (funct5 << 27) | (aqrl << 25) | (funct3 << 12) | 0x2f;
}
// Each AMO in its four orderings; lr has rs2 = 0 in its mask and no rs2 operand.
#define USCOPE_AMO4(name, args, f5, f3, mask, xl)                                      \
  {name, args, amo(f5, f3, 0), mask, C::kNone, xl, E::kA},                             \
      {name ".aq", args, amo(f5, f3, 2), mask, C::kNone, xl, E::kA},                   \
      {name ".rl", args, amo(f5, f3, 1), mask, C::kNone, xl, E::kA},                   \
      {name ".aqrl", args, amo(f5, f3, 3), mask, C::kNone, xl, E::kA}
#define USCOPE_AMO_WD(op, f5)                                                           \
  USCOPE_AMO4("amo" op ".w", "d,t,0(s)", f5, 2, 0xfe00707f, 0),                        \
      USCOPE_AMO4("amo" op ".d", "d,t,0(s)", f5, 3, 0xfe00707f, 64)

// The ISA's own encodings (canonical names), in spec order. Where an alias above covers every
// encoding of an entry, the entry still documents the instruction; the C entries' `c.` names
// are what objdump prints for the HINT encodings no alias accepts (16.8's "HINT" rows).
constexpr Entry kInstructions[] = {
    // 2.4 Integer computational (OP-IMM, LUI, AUIPC, OP)
    {"lui", "d,u", 0x00000037, 0x0000007f, C::kNone, 0, E::kI},
    {"auipc", "d,u", 0x00000017, 0x0000007f, C::kNone, 0, E::kI},
    {"addi", "d,s,j", 0x00000013, 0x0000707f, C::kNone, 0, E::kI},
    {"slti", "d,s,j", 0x00002013, 0x0000707f, C::kNone, 0, E::kI},
    {"sltiu", "d,s,j", 0x00003013, 0x0000707f, C::kNone, 0, E::kI},
    {"xori", "d,s,j", 0x00004013, 0x0000707f, C::kNone, 0, E::kI},
    {"ori", "d,s,j", 0x00006013, 0x0000707f, C::kNone, 0, E::kI},
    {"andi", "d,s,j", 0x00007013, 0x0000707f, C::kNone, 0, E::kI},
    {"slli", "d,s,>", 0x00001013, 0xfc00707f, C::kNone, 0, E::kI},   // shamt[5]: RV64 (5.2)
    {"srli", "d,s,>", 0x00005013, 0xfc00707f, C::kNone, 0, E::kI},
    {"srai", "d,s,>", 0x40005013, 0xfc00707f, C::kNone, 0, E::kI},
    {"add", "d,s,t", 0x00000033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sub", "d,s,t", 0x40000033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sll", "d,s,t", 0x00001033, 0xfe00707f, C::kNone, 0, E::kI},
    {"slt", "d,s,t", 0x00002033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sltu", "d,s,t", 0x00003033, 0xfe00707f, C::kNone, 0, E::kI},
    {"xor", "d,s,t", 0x00004033, 0xfe00707f, C::kNone, 0, E::kI},
    {"srl", "d,s,t", 0x00005033, 0xfe00707f, C::kNone, 0, E::kI},
    {"sra", "d,s,t", 0x40005033, 0xfe00707f, C::kNone, 0, E::kI},
    {"or", "d,s,t", 0x00006033, 0xfe00707f, C::kNone, 0, E::kI},
    {"and", "d,s,t", 0x00007033, 0xfe00707f, C::kNone, 0, E::kI},
    // 2.5 Control transfer
    {"jal", "d,a", 0x0000006f, 0x0000007f, C::kNone, 0, E::kI},
    {"jalr", "d,o(s)", 0x00000067, 0x0000707f, C::kNone, 0, E::kI},
    {"beq", "s,t,p", 0x00000063, 0x0000707f, C::kNone, 0, E::kI},
    {"bne", "s,t,p", 0x00001063, 0x0000707f, C::kNone, 0, E::kI},
    {"blt", "s,t,p", 0x00004063, 0x0000707f, C::kNone, 0, E::kI},
    {"bge", "s,t,p", 0x00005063, 0x0000707f, C::kNone, 0, E::kI},
    {"bltu", "s,t,p", 0x00006063, 0x0000707f, C::kNone, 0, E::kI},
    {"bgeu", "s,t,p", 0x00007063, 0x0000707f, C::kNone, 0, E::kI},
    // 2.6 Loads and stores
    {"lb", "d,o(s)", 0x00000003, 0x0000707f, C::kNone, 0, E::kI},
    {"lh", "d,o(s)", 0x00001003, 0x0000707f, C::kNone, 0, E::kI},
    {"lw", "d,o(s)", 0x00002003, 0x0000707f, C::kNone, 0, E::kI},
    {"lbu", "d,o(s)", 0x00004003, 0x0000707f, C::kNone, 0, E::kI},
    {"lhu", "d,o(s)", 0x00005003, 0x0000707f, C::kNone, 0, E::kI},
    {"sb", "t,q(s)", 0x00000023, 0x0000707f, C::kNone, 0, E::kI},
    {"sh", "t,q(s)", 0x00001023, 0x0000707f, C::kNone, 0, E::kI},
    {"sw", "t,q(s)", 0x00002023, 0x0000707f, C::kNone, 0, E::kI},
    // 2.7 Memory ordering (fence.tso first: it is a fence with fm = 1000, pred = succ = rw)
    {"fence.tso", "", 0x8330000f, 0xffffffff, C::kNone, 0, E::kI},
    {"fence", "P,Q", 0x0000000f, 0xf00fffff, C::kNone, 0, E::kI},
    // 2.8 Environment call and breakpoints
    {"ecall", "", 0x00000073, 0xffffffff, C::kNone, 0, E::kI},
    {"ebreak", "", 0x00100073, 0xffffffff, C::kNone, 0, E::kI},
    // Privileged spec 3.3: trap return, wait for interrupt, address-translation fence
    {"uret", "", 0x00200073, 0xffffffff, C::kNone, 0, E::kPriv},    // removed from the spec;
    {"hret", "", 0x20200073, 0xffffffff, C::kNone, 0, E::kPriv},    // objdump still decodes them
    {"sret", "", 0x10200073, 0xffffffff, C::kNone, 0, E::kPriv},
    {"mret", "", 0x30200073, 0xffffffff, C::kNone, 0, E::kPriv},
    {"dret", "", 0x7b200073, 0xffffffff, C::kNone, 0, E::kPriv},
    {"wfi", "", 0x10500073, 0xffffffff, C::kNone, 0, E::kPriv},
    {"sfence.vm", "", 0x10400073, 0xffffffff, C::kNone, 0, E::kPriv},  // privileged 1.9.1
    {"sfence.vm", "s", 0x10400073, 0xfff07fff, C::kNone, 0, E::kPriv},
    {"sfence.vma", "s,t", 0x12000073, 0xfe007fff, C::kNone, 0, E::kPriv},
    // 3 Zifencei
    {"fence.i", "", 0x0000100f, 0xffffffff, C::kNone, 0, E::kZifencei},
    // 5 RV64I
    {"lwu", "d,o(s)", 0x00006003, 0x0000707f, C::kNone, 64, E::kI},
    {"ld", "d,o(s)", 0x00003003, 0x0000707f, C::kNone, 64, E::kI},
    {"sd", "t,q(s)", 0x00003023, 0x0000707f, C::kNone, 64, E::kI},
    {"addiw", "d,s,j", 0x0000001b, 0x0000707f, C::kNone, 64, E::kI},
    {"slliw", "d,s,<", 0x0000101b, 0xfe00707f, C::kNone, 64, E::kI},
    {"srliw", "d,s,<", 0x0000501b, 0xfe00707f, C::kNone, 64, E::kI},
    {"sraiw", "d,s,<", 0x4000501b, 0xfe00707f, C::kNone, 64, E::kI},
    {"addw", "d,s,t", 0x0000003b, 0xfe00707f, C::kNone, 64, E::kI},
    {"subw", "d,s,t", 0x4000003b, 0xfe00707f, C::kNone, 64, E::kI},
    {"sllw", "d,s,t", 0x0000103b, 0xfe00707f, C::kNone, 64, E::kI},
    {"srlw", "d,s,t", 0x0000503b, 0xfe00707f, C::kNone, 64, E::kI},
    {"sraw", "d,s,t", 0x4000503b, 0xfe00707f, C::kNone, 64, E::kI},
    // 7 M: multiplication and division (OP / OP-32 with funct7 = 1)
    {"mul", "d,s,t", 0x02000033, 0xfe00707f, C::kNone, 0, E::kM},
    {"mulh", "d,s,t", 0x02001033, 0xfe00707f, C::kNone, 0, E::kM},
    {"mulhsu", "d,s,t", 0x02002033, 0xfe00707f, C::kNone, 0, E::kM},
    {"mulhu", "d,s,t", 0x02003033, 0xfe00707f, C::kNone, 0, E::kM},
    {"div", "d,s,t", 0x02004033, 0xfe00707f, C::kNone, 0, E::kM},
    {"divu", "d,s,t", 0x02005033, 0xfe00707f, C::kNone, 0, E::kM},
    {"rem", "d,s,t", 0x02006033, 0xfe00707f, C::kNone, 0, E::kM},
    {"remu", "d,s,t", 0x02007033, 0xfe00707f, C::kNone, 0, E::kM},
    {"mulw", "d,s,t", 0x0200003b, 0xfe00707f, C::kNone, 64, E::kM},
    {"divw", "d,s,t", 0x0200403b, 0xfe00707f, C::kNone, 64, E::kM},
    {"divuw", "d,s,t", 0x0200503b, 0xfe00707f, C::kNone, 64, E::kM},
    {"remw", "d,s,t", 0x0200603b, 0xfe00707f, C::kNone, 64, E::kM},
    {"remuw", "d,s,t", 0x0200703b, 0xfe00707f, C::kNone, 64, E::kM},
    // 8 A: load-reserved / store-conditional and the AMOs
    USCOPE_AMO4("lr.w", "d,0(s)", 0x02, 2, 0xfff0707f, 0),
    USCOPE_AMO4("sc.w", "d,t,0(s)", 0x03, 2, 0xfe00707f, 0),
    USCOPE_AMO4("lr.d", "d,0(s)", 0x02, 3, 0xfff0707f, 64),
    USCOPE_AMO4("sc.d", "d,t,0(s)", 0x03, 3, 0xfe00707f, 64),
    USCOPE_AMO_WD("swap", 0x01),
    USCOPE_AMO_WD("add", 0x00),
    USCOPE_AMO_WD("xor", 0x04),
    USCOPE_AMO_WD("and", 0x0c),
    USCOPE_AMO_WD("or", 0x08),
    USCOPE_AMO_WD("min", 0x10),
    USCOPE_AMO_WD("max", 0x14),
    USCOPE_AMO_WD("minu", 0x18),
    USCOPE_AMO_WD("maxu", 0x1c),
    // 9 Zicsr
    {"csrrw", "d,E,s", 0x00001073, 0x0000707f, C::kNone, 0, E::kZicsr},
    {"csrrs", "d,E,s", 0x00002073, 0x0000707f, C::kNone, 0, E::kZicsr},
    {"csrrc", "d,E,s", 0x00003073, 0x0000707f, C::kNone, 0, E::kZicsr},
    {"csrrwi", "d,E,Z", 0x00005073, 0x0000707f, C::kNone, 0, E::kZicsr},
    {"csrrsi", "d,E,Z", 0x00006073, 0x0000707f, C::kNone, 0, E::kZicsr},
    {"csrrci", "d,E,Z", 0x00007073, 0x0000707f, C::kNone, 0, E::kZicsr},
    // 16.8 C, in objdump's fallback order. Quadrant 0 (bits 1:0 = 00)
    {"c.unimp", "", 0x0000, 0xffff, C::kNone, 0, E::kC},
    {"c.ebreak", "", 0x9002, 0xffff, C::kNone, 0, E::kC},
    {"c.jr", "d", 0x8002, 0xf07f, C::kRdNonzero, 0, E::kC},
    {"c.jalr", "d", 0x9002, 0xf07f, C::kRdNonzero, 0, E::kC},
    {"c.j", "Ca", 0xa001, 0xe003, C::kNone, 0, E::kC},
    {"c.jal", "Ca", 0x2001, 0xe003, C::kNone, 32, E::kC},
    {"c.beqz", "Cs,Cp", 0xc001, 0xe003, C::kNone, 0, E::kC},
    {"c.bnez", "Cs,Cp", 0xe001, 0xe003, C::kNone, 0, E::kC},
    {"c.lwsp", "d,Cm(Cc)", 0x4002, 0xe003, C::kRdNonzero, 0, E::kC},
    {"c.lw", "Ct,Ck(Cs)", 0x4000, 0xe003, C::kNone, 0, E::kC},
    {"c.swsp", "CV,CM(Cc)", 0xc002, 0xe003, C::kNone, 0, E::kC},
    {"c.sw", "Ct,Ck(Cs)", 0xc000, 0xe003, C::kNone, 0, E::kC},
    {"c.nop", "", 0x0001, 0xffff, C::kNone, 0, E::kC},
    {"c.nop", "Cj", 0x0001, 0xef83, C::kNone, 0, E::kC},            // HINT: c.addi x0,imm
    {"c.mv", "d,CV", 0x8002, 0xf003, C::kRs2Nonzero, 0, E::kC},
    {"c.lui", "d,Cu", 0x6001, 0xe003, C::kCLuiHint, 0, E::kC},
    {"c.li", "d,Co", 0x4001, 0xe003, C::kNone, 0, E::kC},
    {"c.addi4spn", "Ct,Cc,CK", 0x0000, 0xe003, C::kCAddi4spn, 0, E::kC},
    {"c.addi16sp", "Cc,CL", 0x6101, 0xef83, C::kNone, 0, E::kC},
    {"c.addi", "d,Co", 0x0001, 0xe003, C::kNone, 0, E::kC},
    {"c.add", "d,CV", 0x9002, 0xf003, C::kRs2Nonzero, 0, E::kC},
    {"c.sub", "Cs,Ct", 0x8c01, 0xfc63, C::kNone, 0, E::kC},
    {"c.and", "Cs,Ct", 0x8c61, 0xfc63, C::kNone, 0, E::kC},
    {"c.or", "Cs,Ct", 0x8c41, 0xfc63, C::kNone, 0, E::kC},
    {"c.xor", "Cs,Ct", 0x8c21, 0xfc63, C::kNone, 0, E::kC},
    {"c.slli", "d,C>", 0x0002, 0xe003, C::kCShamt, 0, E::kC},
    {"c.srli", "Cs,C>", 0x8001, 0xec03, C::kCShamt, 0, E::kC},
    {"c.srai", "Cs,C>", 0x8401, 0xec03, C::kCShamt, 0, E::kC},
    {"c.slli64", "d", 0x0002, 0xf07f, C::kNone, 0, E::kC},
    {"c.srli64", "Cs", 0x8001, 0xfc7f, C::kNone, 0, E::kC},
    {"c.srai64", "Cs", 0x8401, 0xfc7f, C::kNone, 0, E::kC},
    {"c.andi", "Cs,Co", 0x8801, 0xec03, C::kNone, 0, E::kC},
    {"c.addiw", "d,Co", 0x2001, 0xe003, C::kRdNonzero, 64, E::kC},
    {"c.addw", "Cs,Ct", 0x9c21, 0xfc63, C::kNone, 64, E::kC},
    {"c.subw", "Cs,Ct", 0x9c01, 0xfc63, C::kNone, 64, E::kC},
    {"c.ldsp", "d,Cn(Cc)", 0x6002, 0xe003, C::kRdNonzero, 64, E::kC},
    {"c.ld", "Ct,Cl(Cs)", 0x6000, 0xe003, C::kNone, 64, E::kC},
    {"c.sdsp", "CV,CN(Cc)", 0xe002, 0xe003, C::kNone, 64, E::kC},
    {"c.sd", "Ct,Cl(Cs)", 0xe000, 0xe003, C::kNone, 64, E::kC},
};
#undef USCOPE_AMO_WD
#undef USCOPE_AMO4

// CSR names objdump prints (binutils 2.40 include/opcode/riscv-opc.h), sorted by number, each
// with the privileged-spec versions [first, end) that define it (a few were renamed, e.g.
// mbadaddr -> mtval in 1.10, or dropped, e.g. the N extension's ustatus in 1.12); any other
// number prints as hex. Produced from objdump's own output for all 4096 numbers under each
// version (test_riscv_disasm.cpp checks every one).
enum class Ver : uint8_t { k1_9_1, k1_10, k1_11, k1_12, kEnd };  // PrivSpec's order
using P = Ver;
struct CsrName {
  uint16_t number;
  const char *name;
  Ver first = Ver::k1_9_1;
  Ver end = Ver::kEnd;
};
constexpr CsrName kCsrNames[] = {
#include "analysis/riscv_csr_names.inc"
};

// ── Fields (unprivileged spec 2.3 "Immediate Encoding Variants", 16.2-16.5 for RVC) ──────

constexpr uint32_t bits(uint32_t w, int hi, int lo) { return (w >> lo) & ((1u << (hi - lo + 1)) - 1); }
constexpr int64_t sext(uint64_t v, int width) {
  const uint64_t m = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

int64_t imm_i(uint32_t w) { return sext(bits(w, 31, 20), 12); }
int64_t imm_s(uint32_t w) { return sext((bits(w, 31, 25) << 5) | bits(w, 11, 7), 12); }
int64_t imm_b(uint32_t w) {
  return sext((bits(w, 31, 31) << 12) | (bits(w, 7, 7) << 11) | (bits(w, 30, 25) << 5) |
                  (bits(w, 11, 8) << 1),
              13);
}
int64_t imm_u(uint32_t w) { return sext(w & 0xfffff000u, 32); }
int64_t imm_j(uint32_t w) {
  return sext((bits(w, 31, 31) << 20) | (bits(w, 19, 12) << 12) | (bits(w, 20, 20) << 11) |
                  (bits(w, 30, 21) << 1),
              21);
}
// RVC (16.8 tables; the scrambled offsets of 16.3-16.5).
int64_t c_imm(uint32_t w) { return sext((bits(w, 12, 12) << 5) | bits(w, 6, 2), 6); }
uint32_t c_lw_off(uint32_t w) { return (bits(w, 12, 10) << 3) | (bits(w, 6, 6) << 2) | (bits(w, 5, 5) << 6); }
uint32_t c_ld_off(uint32_t w) { return (bits(w, 12, 10) << 3) | (bits(w, 6, 5) << 6); }
uint32_t c_lwsp_off(uint32_t w) { return (bits(w, 12, 12) << 5) | (bits(w, 6, 4) << 2) | (bits(w, 3, 2) << 6); }
uint32_t c_ldsp_off(uint32_t w) { return (bits(w, 12, 12) << 5) | (bits(w, 6, 5) << 3) | (bits(w, 4, 2) << 6); }
uint32_t c_swsp_off(uint32_t w) { return (bits(w, 12, 9) << 2) | (bits(w, 8, 7) << 6); }
uint32_t c_sdsp_off(uint32_t w) { return (bits(w, 12, 10) << 3) | (bits(w, 9, 7) << 6); }
uint32_t c_addi4spn_imm(uint32_t w) {
  return (bits(w, 12, 11) << 4) | (bits(w, 10, 7) << 6) | (bits(w, 6, 6) << 2) | (bits(w, 5, 5) << 3);
}
int64_t c_addi16sp_imm(uint32_t w) {
  return sext((bits(w, 12, 12) << 9) | (bits(w, 6, 6) << 4) | (bits(w, 5, 5) << 6) |
                  (bits(w, 4, 3) << 7) | (bits(w, 2, 2) << 5),
              10);
}
int64_t c_b_off(uint32_t w) {
  return sext((bits(w, 12, 12) << 8) | (bits(w, 11, 10) << 3) | (bits(w, 6, 5) << 6) |
                  (bits(w, 4, 3) << 1) | (bits(w, 2, 2) << 5),
              9);
}
int64_t c_j_off(uint32_t w) {
  return sext((bits(w, 12, 12) << 11) | (bits(w, 11, 11) << 4) | (bits(w, 10, 9) << 8) |
                  (bits(w, 8, 8) << 10) | (bits(w, 7, 7) << 6) | (bits(w, 6, 6) << 7) |
                  (bits(w, 5, 3) << 1) | (bits(w, 2, 2) << 5),
              12);
}

uint32_t rd_of(uint32_t w) { return bits(w, 11, 7); }
uint32_t rs1_of(uint32_t w) { return bits(w, 19, 15); }
uint32_t rs2_of(uint32_t w) { return bits(w, 24, 20); }

// Opcode tests the address comments depend on (objdump looks at the word, not the entry).
bool is_addi(uint32_t w) { return (w & 0x707f) == 0x13; }
bool is_addiw(uint32_t w) { return (w & 0x707f) == 0x1b; }
bool is_jalr(uint32_t w) { return (w & 0x707f) == 0x67; }
bool is_auipc(uint32_t w) { return (w & 0x7f) == 0x17; }
bool is_lui(uint32_t w) { return (w & 0x7f) == 0x37; }
bool is_c_lui(uint32_t w) { return (w & 0xe003) == 0x6001; }
bool is_c_addi(uint32_t w) { return (w & 0xe003) == 0x0001; }
bool is_c_addiw(uint32_t w) { return (w & 0xe003) == 0x2001; }

bool check_ok(Check c, uint32_t w) {
  switch (c) {
    case Check::kNone: return true;
    case Check::kRdNonzero: return rd_of(w) != 0;
    case Check::kCAdd: return rd_of(w) != 0 && bits(w, 6, 2) != 0;
    case Check::kRs2Nonzero: return bits(w, 6, 2) != 0;
    case Check::kCLui: return rd_of(w) != 0 && rd_of(w) != 2 && c_imm(w) != 0;
    case Check::kCLuiHint: return rd_of(w) != 2 && c_imm(w) != 0;
    case Check::kCAddi4spn: return c_addi4spn_imm(w) != 0;
    case Check::kCShamt: return (c_imm(w) & 0x3f) != 0;
    case Check::kCSlli: return rd_of(w) != 0 && (c_imm(w) & 0x3f) != 0;
  }
  return false;
}

// The DisasmOptions::extensions bit an entry needs (0: the base, always decoded).
uint32_t extension_bit(Ext e) {
  switch (e) {
    case Ext::kM: return kExtM;
    case Ext::kA: return kExtA;
    case Ext::kC: return kExtC;
    case Ext::kZicsr: return kExtZicsr;
    case Ext::kZifencei: return kExtZifencei;
    case Ext::kI: case Ext::kPriv: return 0;
  }
  return 0;
}

bool entry_matches(const Entry &e, uint32_t w, unsigned length, unsigned xlen, uint32_t extensions) {
  const bool compressed_entry = e.ext == Ext::kC;
  if (compressed_entry != (length == 2)) return false;
  if (e.xlen != 0 && e.xlen != xlen) return false;
  const uint32_t needs = extension_bit(e.ext);
  if (needs != 0 && (extensions & needs) == 0) return false;
  return (w & e.mask) == e.match && check_ok(e.check, w);
}

const char *csr_name(uint32_t csr, PrivSpec spec) {
  const size_t n = sizeof(kCsrNames) / sizeof(kCsrNames[0]);
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (kCsrNames[mid].number < csr) lo = mid + 1; else hi = mid;
  }
  const auto v = static_cast<Ver>(spec);
  for (; lo < n && kCsrNames[lo].number == csr; ++lo)
    if (v >= kCsrNames[lo].first && v < kCsrNames[lo].end) return kCsrNames[lo].name;
  return nullptr;
}

// The fence predecessor / successor sets (2.7): index = IORW bits; 0 is printed "unknown",
// as objdump does.
constexpr const char *kFenceSets[16] = {"unknown", "w", "r", "rw", "o", "ow", "or", "orw",
                                        "i", "iw", "ir", "irw", "io", "iow", "ior", "iorw"};

// 1.5 "Expanded Instruction-Length Encoding": the length the first 16 bits announce
// (objdump's rule, 2 for the reserved >= 192-bit prefix).
unsigned encoded_length(uint32_t h) {
  if ((h & 0x3) != 0x3) return 2;
  if ((h & 0x1f) != 0x1f) return 4;
  if ((h & 0x3f) == 0x1f) return 6;
  if ((h & 0x7f) == 0x3f) return 8;
  if ((h & 0x7f) == 0x7f && (h & 0x7000) != 0x7000) return 10 + ((h >> 11) & 0xe);
  return 2;
}

void append_hex(std::string &out, uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  out += buf;
}
void append_dec(std::string &out, int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRId64, v);
  out += buf;
}

// The printing state of one instruction: objdump's print_insn_args walk over an operand string.
class InsnPrinter {
 public:
  InsnPrinter(uint32_t w, uint64_t pc, unsigned xlen, const DisasmOptions &opt, uint64_t *hi_addr,
              std::string &out)
      : w_(w), pc_(pc), xlen_(xlen), opt_(opt), hi_addr_(hi_addr), out_(out) {}

  void print(const char *args) {
    if (*args != '\0') out_ += '\t';
    for (const char *a = args; *a != '\0'; ++a) {
      if (*a == 'C' && a[1] != '\0') {
        ++a;
        compressed(*a);
      } else {
        plain(*a, a[1] == '\0');
      }
    }
    if (have_addr_) {
      out_ += " # ";
      address(addr_);
    }
  }

 private:
  void reg(uint32_t r) { out_ += kGpr[r & 31]; }

  // objdump's maybe_print_address: the address an offset forms from a register whose upper
  // bits a lui/auipc set (consumed once), from gp, or from tp / x0 as is.
  void maybe_address(uint32_t base, int64_t offset, bool wide) {
    if (hi_addr_[base] != kNoAddr) {
      addr_ = (base != 0 ? hi_addr_[base] : 0) + static_cast<uint64_t>(offset);
      hi_addr_[base] = kNoAddr;
    } else if (base == 3 && opt_.gp) {
      addr_ = *opt_.gp + static_cast<uint64_t>(offset);
    } else if (base == 4 || base == 0) {
      addr_ = static_cast<uint64_t>(offset);
    } else {
      return;
    }
    have_addr_ = true;
    if (wide) addr_ = static_cast<uint64_t>(sext(addr_ & 0xffffffffu, 32));
    if (xlen_ == 32) addr_ &= 0xffffffffu;
  }

  void address(uint64_t a) {
    if (xlen_ == 32) a &= 0xffffffffu;
    if (opt_.symbolize) {
      append_hex(out_, a);
      const std::string name = opt_.symbolize(a);
      if (!name.empty()) {
        out_ += " <";
        out_ += name;
        out_ += '>';
      }
    } else {
      out_ += "0x";
      append_hex(out_, a);
    }
  }

  void hex(uint64_t v) {
    out_ += "0x";
    append_hex(out_, v);
  }

  void plain(char c, bool last) {
    switch (c) {
      case ',': case '(': case ')': out_ += c; break;
      case '0': if (last) out_ += '0'; break;
      case 'd':
        if (is_auipc(w_)) hi_addr_[rd_of(w_)] = pc_ + static_cast<uint64_t>(imm_u(w_));
        else if (is_lui(w_)) hi_addr_[rd_of(w_)] = static_cast<uint64_t>(imm_u(w_));
        else if (is_c_lui(w_)) hi_addr_[rd_of(w_)] = static_cast<uint64_t>(c_imm(w_)) << 12;
        reg(rd_of(w_));
        break;
      case 's':
        if (is_jalr(w_)) maybe_address(rs1_of(w_), imm_i(w_), false);
        reg(rs1_of(w_));
        break;
      case 't': reg(rs2_of(w_)); break;
      case 'z': reg(0); break;
      case 'o':
        maybe_address(rs1_of(w_), imm_i(w_), false);
        [[fallthrough]];
      case 'j':
        if ((is_addi(w_) && rs1_of(w_) != 0) || is_jalr(w_)) maybe_address(rs1_of(w_), imm_i(w_), false);
        if (xlen_ == 64 && is_addiw(w_) && rs1_of(w_) != 0) maybe_address(rs1_of(w_), imm_i(w_), true);
        append_dec(out_, imm_i(w_));
        break;
      case 'q':
        maybe_address(rs1_of(w_), imm_s(w_), false);
        append_dec(out_, imm_s(w_));
        break;
      case 'u': hex((w_ >> 12) & 0xfffff); break;
      case 'a': address(pc_ + static_cast<uint64_t>(imm_j(w_))); break;
      case 'p': address(pc_ + static_cast<uint64_t>(imm_b(w_))); break;
      case '>': hex(bits(w_, 25, 20)); break;
      case '<': hex(bits(w_, 24, 20)); break;
      case 'E': {
        const char *name = csr_name(w_ >> 20, opt_.priv_spec);
        if (name != nullptr) out_ += name; else hex(w_ >> 20);
        break;
      }
      case 'Z': append_dec(out_, rs1_of(w_)); break;
      case 'P': out_ += kFenceSets[bits(w_, 27, 24)]; break;
      case 'Q': out_ += kFenceSets[bits(w_, 23, 20)]; break;
      default: break;  // the tables use no other letter
    }
  }

  void compressed(char c) {
    switch (c) {
      case 's': case 'w': reg(bits(w_, 9, 7) + 8); break;
      case 't': case 'x': reg(bits(w_, 4, 2) + 8); break;
      case 'U': reg(rd_of(w_)); break;
      case 'V': reg(bits(w_, 6, 2)); break;
      case 'c': reg(2); break;
      case 'z': reg(0); break;
      case 'o': case 'j':
        if (is_c_addi(w_) && rd_of(w_) != 0) maybe_address(rd_of(w_), c_imm(w_), false);
        if (xlen_ == 64 && is_c_addiw(w_) && rd_of(w_) != 0) maybe_address(rd_of(w_), c_imm(w_), true);
        append_dec(out_, c_imm(w_));
        break;
      case 'k': append_dec(out_, c_lw_off(w_)); break;
      case 'l': append_dec(out_, c_ld_off(w_)); break;
      case 'm': append_dec(out_, c_lwsp_off(w_)); break;
      case 'n': append_dec(out_, c_ldsp_off(w_)); break;
      case 'K': append_dec(out_, c_addi4spn_imm(w_)); break;
      case 'L': append_dec(out_, c_addi16sp_imm(w_)); break;
      case 'M': append_dec(out_, c_swsp_off(w_)); break;
      case 'N': append_dec(out_, c_sdsp_off(w_)); break;
      case 'p': address(pc_ + static_cast<uint64_t>(c_b_off(w_))); break;
      case 'a': address(pc_ + static_cast<uint64_t>(c_j_off(w_))); break;
      case 'u': hex(static_cast<uint64_t>(c_imm(w_)) & 0xfffff); break;
      case '>': hex(static_cast<uint64_t>(c_imm(w_)) & 0x3f); break;
      default: break;
    }
  }

  uint32_t w_;
  uint64_t pc_;
  unsigned xlen_;
  const DisasmOptions &opt_;
  uint64_t *hi_addr_;
  std::string &out_;
  bool have_addr_ = false;
  uint64_t addr_ = 0;
};

}  // namespace

Disassembler::Disassembler(Xlen xlen, DisasmOptions options) : xlen_(xlen), options_(std::move(options)) {
  reset();
}

void Disassembler::reset() {
  for (uint64_t &a : hi_addr_) a = kNoAddr;
}

Decoded Disassembler::next(const uint8_t *bytes, size_t avail, uint64_t pc) {
  Decoded d;
  if (bytes == nullptr || avail < 2) {
    d.text = "(truncated: fewer than 2 bytes)";
    return d;
  }
  const uint32_t first = static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8);
  const unsigned length = encoded_length(first);
  if (avail < length) {
    d.text = "(truncated: " + std::to_string(avail) + " of " + std::to_string(length) + " bytes)";
    return d;
  }
  d.length = static_cast<uint8_t>(length);
  const unsigned xlen = static_cast<unsigned>(xlen_);

  if (length == 2 || length == 4) {
    uint32_t w = first;
    if (length == 4) w |= (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
    const Entry *hit = nullptr;
    for (const Entry &e : kAliases) {
      if (entry_matches(e, w, length, xlen, options_.extensions)) { hit = &e; break; }
    }
    if (hit == nullptr) {
      for (const Entry &e : kInstructions) {
        if (entry_matches(e, w, length, xlen, options_.extensions)) { hit = &e; break; }
      }
    }
    if (hit != nullptr) {
      d.known = true;
      d.text = hit->name;
      InsnPrinter(w, pc, xlen, options_, hi_addr_, d.text).print(hit->args);
      return d;
    }
  }

  // Not an instruction we know: objdump's data directive for the whole encoding.
  if (length == 2 || length == 4 || length == 8) {
    uint64_t v = 0;
    for (unsigned i = 0; i < length; ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    d.text = "." + std::to_string(length) + "byte\t0x";
    append_hex(d.text, v);
  } else {
    d.text = ".byte\t";
    for (unsigned i = 0; i < length; ++i) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%s0x%02x", i == 0 ? "" : ", ", bytes[i]);
      d.text += buf;
    }
  }
  return d;
}

Decoded disassemble(const uint8_t *bytes, size_t avail, uint64_t pc, Xlen xlen) {
  return Disassembler(xlen).next(bytes, avail, pc);
}

}  // namespace uscope::analysis
