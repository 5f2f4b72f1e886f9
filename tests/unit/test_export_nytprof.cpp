// The firmware profile (src/export/fw_profile.hpp) and the NYTProf exporter
// (`uscope export --to nytprof`, docs/export.md "NYTProf").
//
// The firmware is a real rv32i program compiled here with debug info; a tiny
// RV32I interpreter in this file runs it from its ELF, so the trace follows
// the program's real control flow (calls, loops, returns), and the test keeps
// the ground truth: each instruction's pc and retire cycle. The profile must
// give back the cycles per source line and the calls the run made; the
// NYTProf file must be read by Devel::NYTProf's own tools (nytprofhtml,
// nytprofcsv) without a warning, with per-line times adding up to the
// retired cycles of the window.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "base/error.hpp"
#include "export/fw_profile.hpp"
#include "reader/trace_reader.hpp"
#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"
#include "uscope/analysis.h"
#include "uscope/export.h"

namespace {

using uscope::test::TempDir;
using uscope::test::proto::base_schema;
using uscope::test::proto::cpu_config;

constexpr uint64_t kPeriod = 1000;
constexpr uint16_t kEntities = 16;
const char *const kStages[] = {"fetch", "retire"};

std::string run_sh(const std::string &cmd, int *status, std::string *err = nullptr, const std::string &err_file = "") {
  std::string out;
  const std::string full = err ? cmd + " 2>'" + err_file + "'" : cmd + " 2>&1";
  FILE *p = popen(full.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  if (err) {
    std::ifstream f(err_file);
    std::stringstream ss;
    ss << f.rdbuf();
    *err = ss.str();
  }
  return out;
}

// The firmware: _start calls f twice (lines 9 and 10), f loops; h, in
// assembly, has a symbol but no line in the line table.
const char kSource[] =
    "int g; int h(int); int n2 = N2;\n"  // 1
    "int f(int n) {\n"                    // 2
    "  int s = 0;\n"                      // 3
    "  for (int i = 0; i < n; ++i)\n"     // 4
    "    s += i;\n"                       // 5
    "  return s;\n"                       // 6
    "}\n"                                 // 7
    "void _start(void) {\n"               // 8
    "  g = f(3);\n"                       // 9
    "  g += f(n2);\n"                     // 10
    "  g = h(g);\n"                       // 11
    "  for (;;) {\n"                      // 12
    "  }\n"                               // 13
    "}\n";                                // 14
// h, assembled without debug info: a symbol with no line-table row.
const char kAsm[] = ".globl h\n.type h, @function\nh: addi a0, a0, 1\n ret\n.size h, .-h\n";

struct Firmware {
  TempDir dir{"fw_profile"};
  std::string src = dir.file("fw.c"), elf = dir.file("fw.elf");
  std::string error;
  // n2: the count of f's second call (5; more for a long run).
  explicit Firmware(uint32_t n2 = 5) {
    std::ofstream(src) << kSource;
    std::ofstream(dir.file("h.s")) << kAsm;
    int st = 0;
    const std::string gcc = "riscv64-unknown-elf-gcc -march=rv32i -mabi=ilp32 ";
    const std::string out = run_sh(gcc + "-c -o '" + dir.file("h.o") + "' '" + dir.file("h.s") + "' && " + gcc +
                                       "-O0 -g -nostdlib -DN2=" + std::to_string(n2) + " -o '" + elf + "' '" + src + "' '" + dir.file("h.o") + "'",
                                   &st);
    if (st != 0) error = "riscv64-unknown-elf-gcc failed (Debian: gcc-riscv64-unknown-elf): " + out;
  }
};

// One retired instruction of the run.
struct Step {
  uint64_t pc;
  uint32_t bits;
  uint64_t retire;
};

uint64_t symbol_address(uscope::analysis::ElfInfo &elf, const std::string &name) {
  for (uint64_t a = 0x10000; a < 0x40000; a += 4)
    if (elf.symbol_at(a) == name) return a;
  return 0;
}

// An RV32I interpreter for what -O0 code uses (LUI, AUIPC, JAL, JALR,
// branches, LW/SW, OP-IMM, OP), from _start until the `j .` it ends in.
// Latency: 1 cycle, +2 for a load, +1 for a taken branch or jump; the first
// instruction is fetched at cycle `first`.
std::vector<Step> simulate(uscope::analysis::ElfInfo &elf, uint64_t first, size_t max_steps = 100000) {
  std::vector<Step> steps;
  uint32_t x[32] = {};
  x[2] = 0x80000;  // sp
  if (auto gp = elf.global_pointer()) x[3] = static_cast<uint32_t>(*gp);
  std::map<uint32_t, uint32_t> mem;  // words written
  auto load = [&](uint32_t a) -> uint32_t {
    auto it = mem.find(a);
    if (it != mem.end()) return it->second;
    size_t avail = 0;
    const uint8_t *p = elf.code_at(a, &avail);
    if (!p || avail < 4) return 0;
    return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
  };
  uint32_t pc = static_cast<uint32_t>(symbol_address(elf, "_start"));
  uint64_t cycle = first;
  while (steps.size() < max_steps) {
    const uint32_t in = load(pc);
    const uint32_t op = in & 0x7f, rd = (in >> 7) & 31, f3 = (in >> 12) & 7, rs1 = (in >> 15) & 31,
                   rs2 = (in >> 20) & 31;
    const int32_t imm_i = static_cast<int32_t>(in) >> 20;
    // Sign bits shifted as unsigned: a left shift of a negative int is
    // undefined behaviour (UBSan stops on it).
    const uint32_t sign = static_cast<uint32_t>(static_cast<int32_t>(in) >> 31);  // all ones or zero
    const int32_t imm_s = static_cast<int32_t>((static_cast<uint32_t>(static_cast<int32_t>(in) >> 25) << 5) | rd);
    const int32_t imm_b = static_cast<int32_t>(sign << 12 | (in >> 7 & 1) << 11 | (in >> 25 & 0x3f) << 5 |
                                               (in >> 8 & 0xf) << 1);
    const int32_t imm_j = static_cast<int32_t>(sign << 20 | (in >> 12 & 0xff) << 12 | (in >> 20 & 1) << 11 |
                                               (in >> 21 & 0x3ff) << 1);
    uint32_t next = pc + 4, v = 0;
    uint64_t lat = 1;
    bool write = true;
    switch (op) {
      case 0x37: v = in & 0xfffff000u; break;
      case 0x17: v = pc + (in & 0xfffff000u); break;
      case 0x6f: v = pc + 4; next = pc + static_cast<uint32_t>(imm_j); lat = 2; break;
      case 0x67: v = pc + 4; next = (x[rs1] + static_cast<uint32_t>(imm_i)) & ~1u; lat = 2; break;
      case 0x63: {
        write = false;
        const int32_t a = static_cast<int32_t>(x[rs1]), b = static_cast<int32_t>(x[rs2]);
        const bool t = f3 == 0 ? a == b : f3 == 1 ? a != b : f3 == 4 ? a < b : f3 == 5 ? a >= b
                     : f3 == 6 ? x[rs1] < x[rs2] : x[rs1] >= x[rs2];
        if (t) next = pc + static_cast<uint32_t>(imm_b), lat = 2;
        break;
      }
      case 0x03: v = load(x[rs1] + static_cast<uint32_t>(imm_i)); lat = 3; break;  // lw only in this program
      case 0x23: write = false; mem[x[rs1] + static_cast<uint32_t>(imm_s)] = x[rs2]; break;
      case 0x13:
        v = f3 == 0 ? x[rs1] + static_cast<uint32_t>(imm_i) : f3 == 1 ? x[rs1] << (imm_i & 31)
            : f3 == 4 ? x[rs1] ^ static_cast<uint32_t>(imm_i) : f3 == 6 ? x[rs1] | static_cast<uint32_t>(imm_i)
            : f3 == 7 ? x[rs1] & static_cast<uint32_t>(imm_i) : x[rs1] >> (imm_i & 31);
        break;
      case 0x33: v = (in >> 30 & 1) ? x[rs1] - x[rs2] : f3 == 0 ? x[rs1] + x[rs2] : x[rs1] << (x[rs2] & 31); break;
      default: ADD_FAILURE() << "the test interpreter does not know 0x" << std::hex << in << " at 0x" << pc; return steps;
    }
    if (write && rd) x[rd] = v;
    cycle += lat;
    steps.push_back({pc, in, cycle});
    if (in == 0x0000006f) break;  // j . : the end
    pc = next;
  }
  return steps;
}

// The run as a cpu trace: instruction k is fetched at the previous one's
// retire cycle (the first at `first`) and retires at its own.
void write_trace(const std::string &path, const std::string &elf_prop, const std::vector<Step> &steps,
                 uint64_t first, const char *isa = "rv32i") {
  uscope_schema_t *s = base_schema(kPeriod);
  uscope_cpu_config_t cfg = cpu_config("core0", isa, kStages, 2, kEntities);
  cfg.elf_path = elf_prop.empty() ? nullptr : elf_prop.c_str();
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uint64_t at = first;
  for (size_t k = 0; k <= steps.size(); ++k) {
    ASSERT_EQ(uscope_begin_cycle(w, at * kPeriod), USCOPE_OK) << uscope_last_error();
    if (k) {
      ASSERT_EQ(uscope_cpu_retire(w, cpu, static_cast<uint32_t>((k - 1) % kEntities)), USCOPE_OK);
    }
    if (k < steps.size()) {
      ASSERT_EQ(uscope_cpu_fetch(w, cpu, static_cast<uint32_t>(k % kEntities), steps[k].pc, steps[k].bits),
                USCOPE_OK);
    }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    if (k < steps.size()) at = steps[k].retire;
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  uscope_cpu_free(cpu);
}

// The symbol-table function of a pc (objdump's name without its offset).
std::string function_of(uscope::analysis::ElfInfo &elf, uint64_t pc) {
  std::string s = elf.symbol_at(pc);
  const size_t c = s.find('+');
  return c == std::string::npos ? s : s.substr(0, c);
}

struct Profiled {
  std::unique_ptr<uscope::TraceReader> reader;
  std::unique_ptr<uscope::analysis::CpuTrace> trace;
  std::unique_ptr<uscope::exporter::FwProfile> prof;
  std::vector<uscope::exporter::FwProfile::Retired> seen;
  Profiled(const std::string &path, const std::string &elf, uint64_t a, uint64_t b) {
    reader = std::make_unique<uscope::TraceReader>(path);
    uscope_cpu_trace_options_t o{};
    o.struct_size = sizeof o;
    o.elf_path = elf.empty() ? nullptr : elf.c_str();
    trace = std::make_unique<uscope::analysis::CpuTrace>(*reader, o);
    prof = std::make_unique<uscope::exporter::FwProfile>(*trace);
    prof->run(a, b, [this](const uscope::exporter::FwProfile::Retired &r) { seen.push_back(r); });
  }
  std::string fn(uint32_t node) const {
    const auto &n = prof->nodes()[node];
    return n.function == UINT32_MAX ? "<root>" : prof->functions()[n.function].name;
  }
};

// The truth over [a, b]: cycles per (function, line) and per call of f.
struct Truth {
  std::map<std::pair<std::string, uint32_t>, uint64_t> cycles, insns;
  uint64_t total = 0, retired = 0;
};
Truth truth(uscope::analysis::ElfInfo &elf, const std::vector<Step> &steps, uint64_t a, uint64_t b) {
  Truth t;
  uint64_t prev = a;
  for (const Step &s : steps) {
    if (s.retire < a || s.retire > b) continue;
    const auto key = std::make_pair(function_of(elf, s.pc), elf.locate(s.pc).line);
    t.cycles[key] += s.retire - prev;
    ++t.insns[key];
    t.total += s.retire - prev;
    ++t.retired;
    prev = s.retire;
  }
  return t;
}

// The program, its run and its trace, made for each test.
class ProgramTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fw.error, "");
    elf = std::make_unique<uscope::analysis::ElfInfo>(fw.elf);
    steps = simulate(*elf, kFirst);
    ASSERT_GT(steps.size(), 50u);
    ASSERT_EQ(steps.back().bits, 0x6fu) << "the run did not reach the final loop";
    path = dir.file("t.uscope");
    ASSERT_NO_FATAL_FAILURE(write_trace(path, fw.elf, steps, kFirst));
  }
  static constexpr uint64_t kFirst = 7;
  Firmware fw;
  TempDir dir{"fw_profile_trace"};
  std::unique_ptr<uscope::analysis::ElfInfo> elf;
  std::vector<Step> steps;
  std::string path;
};

class FwProfile : public ProgramTrace {};
class NytprofExport : public ProgramTrace {};

TEST_F(FwProfile, CyclesPerLineAndCallsFollowTheProgram) {
  Profiled p(path, "", 0, steps.back().retire);  // the trace's cpu.elf_path
  const auto &prof = *p.prof;
  const Truth t = truth(*elf, steps, 0, steps.back().retire);
  EXPECT_EQ(prof.retired(), steps.size());
  EXPECT_EQ(prof.total_cycles(), steps.back().retire);
  EXPECT_EQ(t.total, steps.back().retire);
  // Per (function, line), summed over the nodes.
  std::map<std::pair<std::string, uint32_t>, uint64_t> cycles, insns;
  uint64_t sum = 0;
  for (const auto &l : prof.lines()) {
    const auto key = std::make_pair(p.fn(l.node), l.line);
    cycles[key] += l.cycles;
    insns[key] += l.instructions;
    sum += l.cycles;
    if (p.fn(l.node) != "h") {
      EXPECT_NE(prof.files()[l.file].find("fw.c"), std::string::npos) << prof.files()[l.file];
    }
  }
  EXPECT_EQ(sum, prof.total_cycles());
  EXPECT_EQ(cycles, t.cycles);
  EXPECT_EQ(insns, t.insns);
  // The lines the program has: f's loop body ran 3 + 5 times.
  EXPECT_GT(cycles[std::make_pair(std::string("f"), 5u)], 0u);
  EXPECT_GT(cycles[std::make_pair(std::string("_start"), 9u)], 0u);
  EXPECT_GT(cycles[std::make_pair(std::string("_start"), 10u)], 0u);
  EXPECT_GT(cycles[std::make_pair(std::string("h"), 0u)], 0u);  // no line

  // The tree: root -> _start -> f called at line 9 once and at line 10 once.
  std::map<std::pair<std::string, uint32_t>, const uscope::exporter::FwProfile::Node *> f_nodes;
  uint32_t start_node = 0;
  for (uint32_t k = 1; k < prof.nodes().size(); ++k) {
    const auto &n = prof.nodes()[k];
    if (p.fn(k) == "_start") {
      EXPECT_EQ(n.parent, 0u);
      EXPECT_EQ(n.calls, 1u);
      start_node = k;
    } else {
      f_nodes[{p.fn(k), n.call_line}] = &n;
    }
  }
  ASSERT_NE(start_node, 0u);
  ASSERT_EQ(prof.nodes().size(), 5u);  // root, _start, f@9, f@10, h@11
  ASSERT_TRUE(f_nodes.count({"f", 9}) && f_nodes.count({"f", 10}) && f_nodes.count({"h", 11}));
  const auto *h_node = f_nodes[std::make_pair(std::string("h"), 11u)];
  EXPECT_EQ(h_node->calls, 1u);
  EXPECT_EQ(h_node->instructions, 2u);
  // Each call's instructions: those from f's entry to the instruction after its return.
  std::vector<uint64_t> call_cycles, call_insns;
  uint64_t prev = 0;
  bool in_f = false;
  for (const Step &s : steps) {
    const bool f_pc = function_of(*elf, s.pc) == "f";
    if (f_pc && !in_f) call_cycles.push_back(0), call_insns.push_back(0);
    in_f = f_pc;
    if (f_pc) call_cycles.back() += s.retire - prev, ++call_insns.back();
    prev = s.retire;
  }
  ASSERT_EQ(call_cycles.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const auto &n = *f_nodes[{"f", 9u + k}];
    EXPECT_EQ(n.parent, start_node);
    EXPECT_EQ(n.calls, 1u);
    EXPECT_EQ(n.exclusive_cycles, call_cycles[k]);
    EXPECT_EQ(n.inclusive_cycles, call_cycles[k]);
    EXPECT_EQ(n.instructions, call_insns[k]);
  }
  EXPECT_EQ(prof.nodes()[start_node].inclusive_cycles, prof.total_cycles());
  EXPECT_EQ(prof.nodes()[0].inclusive_cycles, prof.total_cycles());
  // f's source lines: its definition (2) to its closing brace (7).
  const auto &ff = prof.functions()[f_nodes[{"f", 9}]->function];
  EXPECT_EQ(ff.first_line, 2u);
  EXPECT_EQ(ff.last_line, 7u);
  EXPECT_NE(prof.files()[ff.file].find("fw.c"), std::string::npos);
  // The hook saw every instruction in retire order, with its node.
  ASSERT_EQ(p.seen.size(), steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(p.seen[k].cycle, steps[k].retire);
    EXPECT_EQ(p.seen[k].pc, steps[k].pc);
    EXPECT_EQ(p.fn(p.seen[k].node), function_of(*elf, steps[k].pc));
    EXPECT_EQ(p.seen[k].line, elf->locate(steps[k].pc).line);
  }
}

TEST_F(FwProfile, AWindowCountsTheCyclesRetiredInIt) {
  // A window opening inside the first call of f: its frame hangs off the
  // root until it returns into _start, whose frame then opens at the root.
  size_t k0 = 0;
  while (function_of(*elf, steps[k0].pc) != "f") ++k0;
  k0 += 5;
  const uint64_t a = steps[k0].retire - 1, b = steps[steps.size() - 10].retire + 1;
  Profiled p(path, fw.elf, a, b);
  const Truth t = truth(*elf, steps, a, b);
  EXPECT_EQ(p.prof->retired(), t.retired);
  uint64_t last_in = 0;
  for (const Step &s : steps)
    if (s.retire <= b) last_in = s.retire;
  EXPECT_EQ(p.prof->last_retire(), last_in);
  EXPECT_EQ(p.prof->total_cycles(), last_in - a);
  EXPECT_EQ(p.prof->total_cycles(), t.total);
  std::map<std::pair<std::string, uint32_t>, uint64_t> cycles;
  for (const auto &l : p.prof->lines()) cycles[{p.fn(l.node), l.line}] += l.cycles;
  EXPECT_EQ(cycles, t.cycles);
  // f (opened by the window, at the root), _start (returned to, at the
  // root) and f called from line 10 under it.
  std::vector<std::string> tree;
  for (uint32_t k = 1; k < p.prof->nodes().size(); ++k) {
    const auto &n = p.prof->nodes()[k];
    tree.push_back(p.fn(n.parent) + ">" + p.fn(k) + "@" + std::to_string(n.call_line) + "x" + std::to_string(n.calls));
  }
  EXPECT_EQ(tree, (std::vector<std::string>{"<root>>f@0x1", "<root>>_start@0x1", "_start>f@10x1"}));
}

TEST_F(FwProfile, APcLandingInAFunctionWithoutACallTakesTheFramesPlace) {
  // _start's first two instructions, then f's first three as if an
  // interrupt or a `j f` had gone there: no call instruction before it.
  const uint64_t f = symbol_address(*elf, "f");
  ASSERT_NE(f, 0u);
  std::vector<Step> jumped(steps.begin(), steps.begin() + 2);
  for (uint64_t k = 0; k < 3; ++k) {
    size_t avail = 0;
    const uint8_t *b = elf->code_at(f + 4 * k, &avail);
    ASSERT_TRUE(b && avail >= 4);
    jumped.push_back({f + 4 * k, b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24,
                      jumped.back().retire + 1});
  }
  const std::string jpath = dir.file("jump.uscope");
  ASSERT_NO_FATAL_FAILURE(write_trace(jpath, fw.elf, jumped, kFirst));
  Profiled p(jpath, "", 0, UINT64_MAX);
  ASSERT_EQ(p.prof->nodes().size(), 3u);
  EXPECT_EQ(p.fn(2), "f");
  EXPECT_EQ(p.prof->nodes()[2].parent, 0u);
  EXPECT_EQ(p.prof->nodes()[2].calls, 1u);
  EXPECT_EQ(p.prof->nodes()[2].instructions, 3u);
  EXPECT_EQ(p.prof->nodes()[1].instructions, 2u);
}

TEST_F(FwProfile, CompressedAndT0LinkedCallsAndReturnsAreSeen) {
  // The trace's own inst_bits decide (the ELF's bytes are rv32i): a
  // recursive call shows whether the return pops the inner frame.
  const uint64_t st = symbol_address(*elf, "_start"), f = symbol_address(*elf, "f");
  ASSERT_TRUE(st && f);
  const std::vector<std::pair<uint64_t, uint32_t>> seq = {
      {st, 0x2001},         // c.jal (RV32): a call
      {f, 0x0001},          // f, called from _start
      {f + 4, 0x9782},      // c.jalr a5: a call
      {f, 0x0001},          // f, called from f
      {f + 8, 0x8082},      // c.jr ra: a return
      {f + 12, 0x0001},     // back in the outer f
      {f + 16, 0x00028067}, // jalr x0, 0(t0): a return through t0
      {st + 4, 0x0001},     // back in _start
      {st + 8, 0x000000ef}, // jal ra: a call
      {f, 0x0001},
  };
  std::vector<Step> run;
  for (const auto &[pc, bits] : seq) run.push_back({pc, bits, (run.empty() ? kFirst : run.back().retire) + 1});
  const std::string cpath = dir.file("compressed.uscope");
  ASSERT_NO_FATAL_FAILURE(write_trace(cpath, fw.elf, run, kFirst));
  Profiled p(cpath, "", 0, UINT64_MAX);
  std::map<std::string, uint64_t> insns, calls;  // by path
  for (uint32_t k = 1; k < p.prof->nodes().size(); ++k) {
    std::string chain;
    for (uint32_t n = k; n != 0; n = p.prof->nodes()[n].parent) chain = p.fn(n) + (chain.empty() ? "" : ">") + chain;
    insns[chain] += p.prof->nodes()[k].instructions;
    calls[chain] += p.prof->nodes()[k].calls;
  }
  EXPECT_EQ(insns, (std::map<std::string, uint64_t>{{"_start", 3}, {"_start>f", 5}, {"_start>f>f", 2}}));
  EXPECT_EQ(calls, (std::map<std::string, uint64_t>{{"_start", 1}, {"_start>f", 2}, {"_start>f>f", 1}}));
}

TEST_F(FwProfile, ATraceWithoutAnElfIsRefusedSayingSo) {
  std::vector<Step> few(steps.begin(), steps.begin() + 5);
  ASSERT_NO_FATAL_FAILURE(write_trace(dir.file("noelf.uscope"), "", few, 1));
  uscope::TraceReader r(dir.file("noelf.uscope"));
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  uscope::analysis::CpuTrace t(r, o);
  try {
    uscope::exporter::FwProfile prof(t);
    FAIL() << "no error";
  } catch (const uscope::Error &e) {
    EXPECT_NE(std::string(e.what()).find("--elf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("names no cpu.elf_path"), std::string::npos) << e.what();
  }
}

// ── NYTProf ──

// Runs a tool, keeping its stderr apart.
struct Tool {
  int status = -1;
  std::string out, err;
};
Tool tool(const std::string &cmd, const TempDir &dir) {
  Tool t;
  t.out = run_sh(cmd, &t.status, &t.err, dir.file("stderr.txt"));
  return t;
}

// nytprofcsv's per-line rows of every file: time (cycles: 1 tick = 1
// "second"), calls, and the line number (the row's index in its file).
struct CsvLines {
  std::map<std::string, std::map<uint32_t, double>> time;  // csv file -> line -> time
  std::map<std::string, std::map<uint32_t, uint64_t>> calls;
  double total = 0;
  std::string error;
};
CsvLines read_csv_dir(const std::string &dir) {
  CsvLines c;
  int st = 0;
  const std::string list = run_sh("ls '" + dir + "'", &st);
  std::istringstream names(list);
  std::string name;
  while (std::getline(names, name)) {
    if (name.size() < 4 || name.substr(name.size() - 4) != ".csv") continue;
    std::ifstream f(dir + "/" + name);
    std::string row;
    uint32_t line = 0;
    while (std::getline(f, row)) {
      if (row.empty() || row[0] == '#') continue;
      ++line;
      // time,calls,time/call,source
      const size_t a = row.find(','), b = a == std::string::npos ? a : row.find(',', a + 1);
      if (b == std::string::npos) {
        c.error = name + ": no time,calls,... in \"" + row + "\"";
        return c;
      }
      const double t = std::stod(row.substr(0, a));
      c.time[name][line] = t;
      c.calls[name][line] = std::stoull(row.substr(a + 1, b - a - 1));
      c.total += t;
    }
  }
  return c;
}

std::string csv_name_of(const CsvLines &c, const std::string &needle) {
  for (const auto &kv : c.time)
    if (kv.first.find(needle) != std::string::npos) return kv.first;
  return "";
}

TEST_F(NytprofExport, NytprofhtmlAndNytprofcsvReadItAndTheLineTimesAddUpToTheRetiredCycles) {
  const std::string out = dir.file("nytprof.out");
  const auto r = uscope::test::run_cli("export '" + path + "' --to nytprof --elf '" + fw.elf + "' -o '" + out + "'",
                                       true);
  ASSERT_EQ(r.exit_code, 0) << r.out;

  const Tool html = tool("nytprofhtml -f '" + out + "' -o '" + dir.file("html") + "'", dir);
  EXPECT_EQ(html.status, 0) << html.out << html.err;
  EXPECT_EQ(html.err, "") << "nytprofhtml warned";
  std::ifstream index(dir.file("html/index.html"));
  std::stringstream page;
  page << index.rdbuf();
  EXPECT_NE(page.str().find(">f</a>"), std::string::npos) << "index.html links no sub f";

  const Tool csv = tool("nytprofcsv -f '" + out + "' -o '" + dir.file("csv") + "'", dir);
  EXPECT_EQ(csv.status, 0) << csv.out << csv.err;
  EXPECT_EQ(csv.err, "") << "nytprofcsv warned";
  const CsvLines c = read_csv_dir(dir.file("csv"));
  ASSERT_EQ(c.error, "");
  const uint64_t retired_cycles = steps.back().retire;  // the window starts at cycle 0
  EXPECT_EQ(c.total, static_cast<double>(retired_cycles));
  // Per line of fw.c, the cycles of the instructions on it.
  const std::string fw_csv = csv_name_of(c, "fw-c");
  ASSERT_NE(fw_csv, "") << "no csv for fw.c";
  const Truth t = truth(*elf, steps, 0, retired_cycles);
  std::map<uint32_t, double> want;
  double lineless = 0;
  for (const auto &kv : t.cycles) (kv.first.second ? want[kv.first.second] : lineless) += static_cast<double>(kv.second);
  ASSERT_GT(lineless, 0);
  // h's cycles on its line of the file of functions without source lines.
  const std::string pseudo_csv = csv_name_of(c, "without-source-lines");
  ASSERT_NE(pseudo_csv, "") << "no csv for the functions without source lines";
  double pseudo_total = 0;
  for (const auto &kv : c.time.at(pseudo_csv)) pseudo_total += kv.second;
  EXPECT_EQ(pseudo_total, lineless);
  for (const auto &kv : want) {
    const auto &got = c.time.at(fw_csv);
    EXPECT_EQ(got.count(kv.first) ? got.at(kv.first) : -1, kv.second) << "line " << kv.first;
  }
  for (const auto &kv : c.time.at(fw_csv)) {
    if (!want.count(kv.first)) {
      EXPECT_EQ(kv.second, 0) << "line " << kv.first;
    }
  }
  EXPECT_EQ(c.calls.at(fw_csv).at(5), 8u);  // s += i: 3 + 5 visits

  // The subs as Devel::NYTProf::Data reads them: f called twice, once from
  // each line, its inclusive cycles those of its two calls.
  uint64_t f_cycles = 0;
  for (const auto &kv : t.cycles)
    if (kv.first.first == "f") f_cycles += kv.second;
  const Tool subs = tool("perl -MDevel::NYTProf::Data -e '$p = Devel::NYTProf::Data->new({filename => \"" + out +
                             "\", quiet => 1}); $s = $p->subinfo_of(\"main::f\"); "
                             "print join(\" \", $s->calls, $s->incl_time, $s->excl_time, "
                             "join(\",\", sort map { $_->[1] } $s->caller_places)), \"\\n\";'",
                         dir);
  EXPECT_EQ(subs.err, "");
  EXPECT_EQ(subs.out, "2 " + std::to_string(f_cycles) + " " + std::to_string(f_cycles) + " 10,9\n");
}

TEST_F(NytprofExport, ARangeExportsTheCyclesRetiredInIt) {
  const uint64_t a = steps[steps.size() / 3].retire, b = steps[2 * steps.size() / 3].retire;
  const std::string out = dir.file("range.out");
  const auto r = uscope::test::run_cli("export '" + path + "' --to nytprof --range " + std::to_string(a) + ":" +
                                           std::to_string(b) + " -o '" + out + "'",  // the trace's cpu.elf_path
                                       true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Tool csv = tool("nytprofcsv -f '" + out + "' -o '" + dir.file("csv") + "'", dir);
  EXPECT_EQ(csv.status, 0) << csv.out << csv.err;
  EXPECT_EQ(csv.err, "") << "nytprofcsv warned";
  const CsvLines c = read_csv_dir(dir.file("csv"));
  ASSERT_EQ(c.error, "");
  const Truth t = truth(*elf, steps, a, b);
  EXPECT_EQ(t.total, b - a);  // b is a retire cycle
  EXPECT_EQ(c.total, static_cast<double>(b - a));
  const Tool html = tool("nytprofhtml -f '" + out + "' -o '" + dir.file("html") + "'", dir);
  EXPECT_EQ(html.status, 0) << html.out << html.err;
  EXPECT_EQ(html.err, "") << "nytprofhtml warned";
}

TEST_F(NytprofExport, WithoutItsElfOrWithAnotherIsasTheExportFailsSayingWhy) {
  const std::string bare = dir.file("bare.uscope"), out = dir.file("x.out");
  ASSERT_NO_FATAL_FAILURE(write_trace(bare, "", steps, kFirst));  // names no ELF
  auto r = uscope::test::run_cli("export '" + bare + "' --to nytprof -o '" + out + "'", true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--elf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("names no cpu.elf_path"), std::string::npos) << r.out;
  struct stat st {};
  EXPECT_NE(::stat(out.c_str(), &st), 0) << "an output was written";

  r = uscope::test::run_cli("export '" + bare + "' --to nytprof --elf '" + dir.file("gone.elf") + "' -o '" + out + "'",
                            true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("gone.elf"), std::string::npos) << r.out;

  // The program built for RV64: the trace's ISA is rv32i.
  int status = 0;
  const std::string rv64 = dir.file("fw64.elf");
  const std::string cc = run_sh("riscv64-unknown-elf-gcc -march=rv64i -mabi=lp64 -O0 -g -nostdlib -DN2=5 -o '" + rv64 + "' '" +
                                    fw.src + "' '" + fw.dir.file("h.s") + "'",
                                &status);
  ASSERT_EQ(status, 0) << cc;
  r = uscope::test::run_cli("export '" + bare + "' --to nytprof --elf '" + rv64 + "' -o '" + out + "'", true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("fw64.elf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rv32i"), std::string::npos) << r.out;
  EXPECT_NE(::stat(out.c_str(), &st), 0) << "an output was written";

  // Another program's run: its pcs are outside this ELF's code.
  std::vector<Step> other(steps.begin(), steps.begin() + 8);
  for (Step &s : other) s.pc += 0x4000000;
  const std::string elsewhere = dir.file("other.uscope");
  ASSERT_NO_FATAL_FAILURE(write_trace(elsewhere, "", other, 1));
  r = uscope::test::run_cli("export '" + elsewhere + "' --to nytprof --elf '" + fw.elf + "' -o '" + out + "'", true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("none of the 8 instructions retired in the window is in a function of the ELF"),
            std::string::npos)
      << r.out;
  EXPECT_NE(::stat(out.c_str(), &st), 0) << "an output was written";
}

TEST_F(NytprofExport, ATraceWithoutACpuProtocolIsRefusedSayingSo) {
  const std::string none = dir.file("nocpu.uscope"), out = dir.file("x.out");
  uscope_schema_t *s = base_schema(kPeriod);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, none.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto r = uscope::test::run_cli("export '" + none + "' --to nytprof --elf '" + fw.elf + "' -o '" + out + "'", true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("cpu protocol"), std::string::npos) << r.out;
  struct stat st {};
  EXPECT_NE(::stat(out.c_str(), &st), 0) << "an output was written";
}

// Runs `uscope export ...` with its output to a file; its peak RSS (KiB),
// as the CLI's summary line states it, and wall time. -1 status when it
// could not run. The CLI reads its own VmHWM: a forked child's getrusage
// peak would count the pages of this (large) process it copied before exec.
struct Measured {
  int status = -1;
  long max_rss_kib = 0;
  double seconds = 0;
};
Measured run_measured(const std::vector<std::string> &args, const std::string &log) {
  Measured m;
  std::vector<char *> argv;
  for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return m;
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen(log.c_str(), "w", stderr)) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("peak RSS ");
  if (at != std::string::npos) m.max_rss_kib = std::lround(std::strtod(text.c_str() + at + 9, nullptr) * 1024);
  return m;
}

TEST_F(NytprofExport, ALongRunIsExportedInBoundedMemory) {
  // f's second call loops 300,000 times: ~3.6 million retired instructions.
  Firmware big(300000);
  ASSERT_EQ(big.error, "");
  uscope::analysis::ElfInfo big_elf(big.elf);
  std::vector<Step> run = simulate(big_elf, 1, 10000000);
  ASSERT_EQ(run.back().bits, 0x6fu) << "the run did not reach the final loop";
  const std::string trace = dir.file("big.uscope"), out = dir.file("big.out");
  ASSERT_NO_FATAL_FAILURE(write_trace(trace, big.elf, run, 1));
  // The run's record goes before the export starts: a forked child's peak
  // RSS counts the pages it shares with this process at fork time.
  const size_t retired = run.size();
  const uint64_t retired_cycles = run.back().retire;
  std::vector<Step>().swap(run);
  const Measured m = run_measured({USCOPE_CLI, "export", trace, "--to", "nytprof", "-o", out}, dir.file("big.log"));
  ASSERT_EQ(m.status, 0);
  struct stat in {}, o {};
  ASSERT_EQ(::stat(trace.c_str(), &in), 0);
  ASSERT_EQ(::stat(out.c_str(), &o), 0);
  const double mb = static_cast<double>(in.st_size) / 1e6;
  std::printf("[ figures  ] %zu retired instructions, trace %.1f MB -> nytprof %.1f MB in %.2f s: %.1f MB/s, "
              "peak RSS %.1f MB\n",
              retired, mb, static_cast<double>(o.st_size) / 1e6, m.seconds, mb / m.seconds,
              static_cast<double>(m.max_rss_kib) / 1024);
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan, its shadow memory and its quarantine of freed blocks (256 MB
  // by default) count in the RSS: the bound is checked by the normal build.
  EXPECT_GT(m.max_rss_kib, 0);
#else
  EXPECT_LE(m.max_rss_kib, 128 * 1024) << "peak RSS over the issue's 128 MB";
#endif
  // Devel::NYTProf reads it whole: the line times add up.
  const Tool csv = tool("nytprofcsv -f '" + out + "' -o '" + dir.file("bigcsv") + "'", dir);
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.err, "");
  const CsvLines c = read_csv_dir(dir.file("bigcsv"));
  EXPECT_EQ(c.total, static_cast<double>(retired_cycles));
}

}  // namespace
