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

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "base/error.hpp"
#include "export/fw_profile.hpp"
#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"
#include "uscope/analysis.h"
#include "uscope/export.h"

namespace {

using uscope::test::TempDir;
using uscope::test::proto::base_schema;

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

// The firmware: _start calls f twice (lines 9 and 10), f loops.
const char kSource[] =
    "int g;\n"                            // 1
    "int f(int n) {\n"                    // 2
    "  int s = 0;\n"                      // 3
    "  for (int i = 0; i < n; ++i)\n"     // 4
    "    s += i;\n"                       // 5
    "  return s;\n"                       // 6
    "}\n"                                 // 7
    "void _start(void) {\n"               // 8
    "  g = f(3);\n"                       // 9
    "  g += f(5);\n"                      // 10
    "  for (;;) {\n"                      // 11
    "  }\n"                               // 12
    "}\n";                                // 13

struct Firmware {
  TempDir dir{"fw_profile"};
  std::string src = dir.file("fw.c"), elf = dir.file("fw.elf");
  std::string error;
  Firmware() {
    std::ofstream(src) << kSource;
    int st = 0;
    const std::string out = run_sh("riscv64-unknown-elf-gcc -march=rv32i -mabi=ilp32 -O0 -g -nostdlib -o '" + elf +
                                       "' '" + src + "'",
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
    const int32_t imm_s = (static_cast<int32_t>(in) >> 25 << 5) | static_cast<int32_t>(rd);
    const int32_t imm_b = (static_cast<int32_t>(in) >> 31 << 12) | static_cast<int32_t>((in >> 7 & 1) << 11 |
                                                                                        (in >> 25 & 0x3f) << 5 |
                                                                                        (in >> 8 & 0xf) << 1);
    const int32_t imm_j = (static_cast<int32_t>(in) >> 31 << 20) |
                          static_cast<int32_t>((in >> 12 & 0xff) << 12 | (in >> 20 & 1) << 11 | (in >> 21 & 0x3ff) << 1);
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
  uscope_cpu_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = "core0";
  cfg.clock_id = 0;
  cfg.isa = isa;
  cfg.stages = kStages;
  cfg.num_stages = 2;
  cfg.max_entities = kEntities;
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

class FwProfile : public ::testing::Test {
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
    EXPECT_NE(prof.files()[l.file].find("fw.c"), std::string::npos) << prof.files()[l.file];
  }
  EXPECT_EQ(sum, prof.total_cycles());
  EXPECT_EQ(cycles, t.cycles);
  EXPECT_EQ(insns, t.insns);
  // The lines the program has: f's loop body ran 3 + 5 times.
  EXPECT_GT(cycles[std::make_pair(std::string("f"), 5u)], 0u);
  EXPECT_GT(cycles[std::make_pair(std::string("_start"), 9u)], 0u);
  EXPECT_GT(cycles[std::make_pair(std::string("_start"), 10u)], 0u);

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
  ASSERT_EQ(prof.nodes().size(), 4u);  // root, _start, f@9, f@10
  ASSERT_TRUE(f_nodes.count({"f", 9}) && f_nodes.count({"f", 10}));
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

}  // namespace
