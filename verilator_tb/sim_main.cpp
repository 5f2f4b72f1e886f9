// sim_main.cpp — the C++ harness of the testbench SoC (verilator_tb/README.md).
//
// It drives the two clocks and the reset of soc_top, opens the µScope writer and registers the
// tracing handles the RTL fetches through uscope_pkg, brackets every rising edge with
// uscope_begin_cycle / uscope_end_cycle, and at the end prints the core's and the NPU's counters
// and a JSON report (the end-to-end test's scoreboard).
//
// Plusargs
//   +trace=<path>      µScope trace file (default trace.uscope)
//   +notrace           no writer: every handle stays null and the RTL makes no tracing call
//   +pccx=<path>       pccx-lab .pccx trace written beside the µScope one (default: the +trace
//                      path with .uscope replaced by .pccx; docs/pccx.md): MAC_COMPUTE per TE
//                      tile and SYSTOLIC_STALL per run of TE cycles lost to the SRAM arbiter
//                      (core_id 0), DMA_READ / DMA_WRITE per DMA transfer (core_id 1), in
//                      npu_clk cycles
//   +nopccx            no .pccx file
//   +fst=<path>        FST waveform (only in the uscope_tb_fst build, which has --trace-fst)
//   +fw=<base>         firmware images <base>.imem.hex / <base>.dram.hex (default: the build's)
//   +elf=<path>        ELF recorded as cpu.elf_path, made absolute (default: the build's firmware ELF)
//   +max_cycles=<n>    core cycles before giving up (default 50,000,000)
//   +bench_cycles=<n>  run the first n core cycles only, then stop without failing: a timing
//                      window for slow modes (FST), reported as "window" in the JSON
//   +report=<path>     write the JSON report there too (it is always printed as one line
//                      starting with "TB_REPORT ")
//   +quiet             no human-readable summary
//
// Exit status: 0 when the firmware wrote TOHOST = 0 and the core halted with ECALL (or a
// +bench_cycles window ended with no failure); 1 when the firmware failed (non-zero TOHOST,
// another trap, a bus error) or the RTL flagged an error (an assertion, $error, $fatal); 2 on
// timeout; 3 on a harness or tracing error.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "Vsoc_top.h"
#include "tb_dpi.h"
#include "verilated.h"

#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

#ifdef USCOPE_TB_TRACE
#include <uscope/protocols.h>
#include <uscope/uscope.h>
#include <uscope/uscope_dpi.h>
#include <pccx/pccx.h>
#endif

#ifndef USCOPE_TB_FW_ELF
#define USCOPE_TB_FW_ELF ""
#endif
#ifndef USCOPE_TB_FW_BASE
#define USCOPE_TB_FW_BASE "(built-in)"
#endif

namespace {

// Clocks (README "Clocks and time"), in picoseconds.
constexpr uint64_t kCorePeriod = 1000;
constexpr uint64_t kNpuPeriod = 1250;
constexpr uint64_t kResetCycles = 10;

// The firmware's scoreboard (fw/tb_report.h): key -> total of the values reported under it.
struct ReportKey {
  uint32_t key;
  const char *name;
};
constexpr ReportKey kReportKeys[] = {
    {1, "npu_cmds"},   {2, "dma_bytes"},  {3, "macs"},      {4, "matmuls"},
    {5, "ve_cmds"},    {6, "dma_cmds"},   {7, "checks"},    {8, "mismatches"},
    {9, "isa_fail"},   {10, "cpu_cycles"}, {11, "npu_cycles"},
};
const char *trap_name(unsigned cause) {
  switch (cause) {
    case 0: return "none";
    case 1: return "ecall";
    case 2: return "ebreak";
    case 3: return "illegal_instruction";
    case 4: return "misaligned_access";
    case 5: return "bus_error";
    default: return "unknown";
  }
}

std::string plusarg(VerilatedContext &ctx, const char *name, const std::string &dflt) {
  // commandArgsPlusMatch returns the whole "+name=value" argument, or "".
  std::string prefix = std::string("+") + name + "=";
  const char *m = ctx.commandArgsPlusMatch((std::string(name) + "=").c_str());
  if (m && std::strncmp(m, prefix.c_str(), prefix.size()) == 0) return m + prefix.size();
  return dflt;
}

// A numeric plusarg; false (with a message) when it is not a number.
bool plusarg_u64(VerilatedContext &ctx, const char *name, uint64_t dflt, uint64_t *out) {
  const std::string v = plusarg(ctx, name, "");
  if (v.empty()) {
    *out = dflt;
    return true;
  }
  char *end = nullptr;
  *out = std::strtoull(v.c_str(), &end, 0);
  if (end == v.c_str() || *end != '\0') {
    std::fprintf(stderr, "sim_main: +%s=%s is not a number\n", name, v.c_str());
    return false;
  }
  return true;
}

bool plusflag(VerilatedContext &ctx, const char *name) {
  // "+name" exactly (the match is by prefix, and "" when there is none).
  const char *m = ctx.commandArgsPlusMatch(name);
  return m && m[0] == '+' && std::strcmp(m + 1, name) == 0;
}

#ifdef USCOPE_TB_TRACE
// The trace: a schema built with the protocol helpers, one writer, three protocol handles.
struct Tracer {
  uscope_writer_t *w = nullptr;
  uscope_cpu_t *cpu = nullptr;
  uscope_noc_t *noc = nullptr;
  uscope_npu_t *npu = nullptr;
  pccx_writer_t *pccx = nullptr;  // the .pccx beside the trace (README "Tracing handles": "pccx")

  ~Tracer() { release(); }
  void release() {
    uscope_cpu_free(cpu);
    uscope_noc_free(noc);
    uscope_npu_free(npu);
    cpu = nullptr;
    noc = nullptr;
    npu = nullptr;
  }

  static bool check(uscope_status_t st, const char *what) {
    if (st == USCOPE_OK) return true;
    std::fprintf(stderr, "sim_main: %s: %s (%s)\n", what, uscope_status_str(st), uscope_last_error());
    return false;
  }

  bool open(const std::string &path, const std::string &elf, const std::string &fw) {
    uscope_schema_t *s = nullptr;
    if (!check(uscope_schema_new(&s), "uscope_schema_new")) return false;
    std::unique_ptr<uscope_schema_t, void (*)(uscope_schema_t *)> guard(s, uscope_schema_free);
    uint8_t core_clk = 0, npu_clk = 0;
    uint16_t root = 0;
    if (!check(uscope_schema_add_clock(s, &core_clk, "core_clk", kCorePeriod), "add_clock") ||
        !check(uscope_schema_add_clock(s, &npu_clk, "npu_clk", kNpuPeriod), "add_clock") ||
        !check(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, core_clk), "add_scope"))
      return false;

    // core0: the five stages of rv32i_core.sv. Entity ids are its rolling NUM_EIDS = 16 slots.
    static const char *const kStages[] = {"fetch", "decode", "execute", "memory", "writeback"};
    // Stall reasons, in the order of rv32i_core.sv's STALL_* values.
    static const char *const kStalls[] = {"load_use", "mem_wait"};
    static const char *const kCpuCounters[] = {"flushes", "squashed", "load_use_stalls", "mem_wait_cycles"};
    uscope_cpu_config_t cc{};
    cc.struct_size = sizeof cc;
    cc.scope_name = "core0";
    cc.parent_scope_id = root;
    cc.clock_id = core_clk;
    cc.isa = "RV32I_Zicsr";
    cc.stages = kStages;
    cc.num_stages = 5;
    cc.max_entities = 16;
    cc.stall_reasons = kStalls;
    cc.num_stall_reasons = 2;
    cc.counters = kCpuCounters;
    cc.num_counters = 4;
    cc.fetch_width = 1;
    cc.commit_width = 1;
    cc.elf_path = elf.empty() ? nullptr : elf.c_str();
    cc.vendor = "libuscope verilator_tb";
    cc.dut_name = "soc_top";
    if (!check(uscope_cpu_declare(s, &cpu, &cc), "uscope_cpu_declare")) return false;

    // bus0: the crossbar. Ports: masters 0 (core) and 1 (NPU DMA), then targets 2 (data RAM),
    // 3 (TB MMIO), 4 (NPU registers), 5 (the error slave for unmapped addresses).
    static const char *const kBusStages[] = {"request", "grant", "response"};
    uscope_noc_config_t nc{};
    nc.struct_size = sizeof nc;
    nc.scope_name = "bus0";
    nc.parent_scope_id = root;
    nc.clock_id = core_clk;
    nc.bus_protocol = "valid-ready";
    nc.topology = "crossbar";
    nc.stages = kBusStages;
    nc.num_stages = 3;
    nc.max_txns = 16;
    nc.data_width = 32;
    nc.addr_width = 32;
    nc.num_ports = 6;
    // The bus id of each request (the NPU DMA tags descriptor fetches 0 and data 1).
    static const uscope_field_t kTxnExtra[] = {{"tag", USCOPE_FT_U8, 0, 0, 0}};
    nc.txn_extra_fields = kTxnExtra;
    nc.num_txn_extra_fields = 1;
    if (!check(uscope_noc_declare(s, &noc, &nc), "uscope_noc_declare")) return false;

    // npu0: rtl/npu/README.md ("Tracing") says what the NPU emits and what it needs here.
    uscope_npu_config_t pc{};
    pc.struct_size = sizeof pc;
    pc.scope_name = "npu0";
    pc.parent_scope_id = root;
    pc.clock_id = npu_clk;
    pc.queue_depth = 8;
    pc.num_contexts = 16;
    pc.num_te = 1;
    pc.num_ve = 1;
    pc.num_dma_channels = 1;
    pc.num_sram_banks = 8;
    pc.te_rows = 4;  // npu_top's TE_ROWS x TE_COLS array
    pc.te_cols = 4;
    pc.dut_name = "soc_top";
    pc.vendor = "libuscope verilator_tb";
    if (!check(uscope_npu_declare(s, &npu, &pc), "uscope_npu_declare")) return false;

    const uscope_dut_property_t props[] = {
        {"tb.firmware", fw.c_str()},
        {"tb.clocks", "core_clk=1000ps,npu_clk=1250ps"},
    };
    uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
    if (!check(uscope_writer_open(&w, path.c_str(), s, props, 2, &opts), "uscope_writer_open"))
      return false;
    // Published for uscope_pkg::uscope_handle() (README "Tracing handles").
    uscope_dpi_register("writer", w);
    uscope_dpi_register("core0", cpu);
    uscope_dpi_register("bus0", noc);
    uscope_dpi_register("npu0", npu);
    return true;
  }

  // The pccx-lab trace of the NPU: engines as cores (0 = TE, 1 = DMA), npu_clk cycles.
  bool open_pccx(const std::string &path) {
    pccx_writer_options_t po = PCCX_WRITER_OPTIONS_INIT;
    po.mac_rows = 4;  // npu_top's TE_ROWS x TE_COLS
    po.mac_cols = 4;
    po.cores = 2;
    po.clock_mhz = 800;  // npu_clk, 1250 ps
    po.isa_version = "verilator_tb-npu";
    if (!check(pccx_writer_open(&pccx, path.c_str(), &po), "pccx_writer_open")) return false;
    uscope_dpi_register("pccx", pccx);
    return true;
  }

  bool close_pccx(pccx_writer_stats_t *stats) {
    if (!pccx) return true;
    uscope_dpi_register("pccx", nullptr);
    const uscope_status_t st = pccx_writer_finish(pccx);
    stats->struct_size = sizeof *stats;
    const uscope_status_t got = pccx_writer_stats(pccx, stats);
    if (st != USCOPE_OK)
      std::fprintf(stderr, "sim_main: pccx: %s: %s\n", uscope_status_str(st), pccx_writer_error(pccx));
    const uscope_status_t closed = pccx_writer_close(pccx);
    pccx = nullptr;
    return st == USCOPE_OK && got == USCOPE_OK && closed == USCOPE_OK;
  }

  // Finishes the file; returns false on a sticky writer error (which names the first misuse).
  bool close(uscope_writer_stats_t *stats) {
    uscope_dpi_register("writer", nullptr);
    uscope_dpi_register("core0", nullptr);
    uscope_dpi_register("bus0", nullptr);
    uscope_dpi_register("npu0", nullptr);
    uscope_status_t st = uscope_writer_finish(w);
    stats->struct_size = sizeof *stats;
    const uscope_status_t got = uscope_writer_stats(w, stats);
    if (st != USCOPE_OK)
      std::fprintf(stderr, "sim_main: trace: %s: %s\n", uscope_status_str(st), uscope_writer_error(w));
    const uscope_status_t closed = uscope_writer_close(w);
    w = nullptr;
    release();
    return st == USCOPE_OK && got == USCOPE_OK && closed == USCOPE_OK;
  }
};
#endif

}  // namespace

int main(int argc, char **argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  // An assertion, $error or $fatal in the RTL ends the loop (gotFinish) instead of aborting, so
  // the trace of the failure is finalized and the report still printed; $readmemh of a missing
  // image stays fatal.
  ctx->fatalOnError(false);

  const bool notrace = plusflag(*ctx, "notrace");
  const bool quiet = plusflag(*ctx, "quiet");
  const std::string trace_path = plusarg(*ctx, "trace", "trace.uscope");
  const bool nopccx = plusflag(*ctx, "nopccx");
  std::string pccx_default = trace_path;
  if (pccx_default.size() > 7 && pccx_default.compare(pccx_default.size() - 7, 7, ".uscope") == 0)
    pccx_default.resize(pccx_default.size() - 7);
  const std::string pccx_path = plusarg(*ctx, "pccx", pccx_default + ".pccx");
  const std::string report_path = plusarg(*ctx, "report", "");
  const std::string fst_path = plusarg(*ctx, "fst", "");
  // Recorded as cpu.elf_path: absolute, so that a reader of the trace finds it from anywhere.
  std::string elf_path = plusarg(*ctx, "elf", USCOPE_TB_FW_ELF);
  if (!elf_path.empty()) {
    if (char *abs = realpath(elf_path.c_str(), nullptr)) {
      elf_path = abs;
      std::free(abs);
    } else if (!quiet) {
      std::fprintf(stderr, "sim_main: +elf=%s: %s (recorded as given)\n", elf_path.c_str(), std::strerror(errno));
    }
  }
  const std::string fw_base = plusarg(*ctx, "fw", USCOPE_TB_FW_BASE);
  uint64_t max_cycles = 0, bench_cycles = 0;
  if (!plusarg_u64(*ctx, "max_cycles", 50000000, &max_cycles) ||
      !plusarg_u64(*ctx, "bench_cycles", 0, &bench_cycles))
    return 3;

  bool tracing = false;
#ifdef USCOPE_TB_TRACE
  Tracer tracer;
  if (!notrace) {
    if (!tracer.open(trace_path, elf_path, fw_base)) return 3;
    if (!nopccx && !tracer.open_pccx(pccx_path)) return 3;
    tracing = true;
  }
#else
  if (!notrace && !quiet)
    std::fprintf(stderr, "sim_main: built without µScope tracing (no sv/uscope_pkg.sv); +trace ignored\n");
#endif

  auto top = std::make_unique<Vsoc_top>(ctx.get(), "soc_top");

#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> fst;
  if (!fst_path.empty()) {
    ctx->traceEverOn(true);
    fst = std::make_unique<VerilatedFstC>();
    top->trace(fst.get(), 99);
    fst->open(fst_path.c_str());
  }
#else
  if (!fst_path.empty()) {
    std::fprintf(stderr, "sim_main: +fst needs the uscope_tb_fst build\n");
    return 3;
  }
#endif

  // Four edge streams: each clock rises at k*period and falls half a period later. Only rising
  // edges are cycles of the trace; a falling edge just lets the model see the clock low, and
  // triggers no logic (the design has no negedge flops besides the asynchronous reset).
  top->core_clk = 0;
  top->npu_clk = 0;
  top->rst_n = 0;
  ctx->time(0);
  top->eval();  // initial blocks: $readmemh of the firmware

  uint64_t core_rise = 0, core_fall = kCorePeriod / 2, npu_rise = 0, npu_fall = kNpuPeriod / 2;
  uint64_t core_edges = 0, npu_edges = 0;
  bool timeout = false, window_end = false;
  const auto wall0 = std::chrono::steady_clock::now();

  while (!ctx->gotFinish()) {
    const uint64_t t = std::min(std::min(core_rise, npu_rise), std::min(core_fall, npu_fall));
    ctx->time(t);
    const bool c_rise = core_rise == t, n_rise = npu_rise == t;
    if (c_rise || n_rise) {
#ifdef USCOPE_TB_TRACE
      // A failure here is sticky in the writer: uscope_writer_finish() reports it at the end.
      if (tracing) (void)uscope_begin_cycle(tracer.w, t);
#endif
      if (c_rise) top->core_clk = 1;
      if (n_rise) top->npu_clk = 1;
      top->eval();
#ifdef USCOPE_TB_TRACE
      if (tracing) (void)uscope_end_cycle(tracer.w);
#endif
      if (c_rise) {
        core_rise += kCorePeriod;
        ++core_edges;
      }
      if (n_rise) {
        npu_rise += kNpuPeriod;
        ++npu_edges;
      }
    }
    if (core_fall == t || npu_fall == t) {
      if (core_fall == t) {
        top->core_clk = 0;
        core_fall += kCorePeriod;
        // Reset is released at the falling edge after the 10th rising edge.
        if (core_edges == kResetCycles) top->rst_n = 1;
      }
      if (npu_fall == t) {
        top->npu_clk = 0;
        npu_fall += kNpuPeriod;
      }
      top->eval();
    }
#if VM_TRACE_FST
    if (fst) fst->dump(t);
#endif
    if (top->halted) break;
    if (bench_cycles && core_edges >= bench_cycles) {
      window_end = true;
      break;
    }
    if (core_edges >= max_cycles) {
      timeout = true;
      break;
    }
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  top->final();
#if VM_TRACE_FST
  if (fst) fst->close();
#endif

  bool trace_ok = true;
  uint64_t trace_bytes = 0, trace_cycles = 0, trace_ops = 0, trace_events = 0;
#ifdef USCOPE_TB_TRACE
  if (tracing) {
    uscope_writer_stats_t st{};
    trace_ok = tracer.close(&st);
    pccx_writer_stats_t pst{};
    const bool pccx_on = tracer.pccx != nullptr;
    if (!tracer.close_pccx(&pst)) trace_ok = false;
    if (pccx_on && !quiet)
      std::printf("pccx           %s: %" PRIu64 " events, %" PRIu64 " bytes, %" PRIu64 " dropped\n",
                  pccx_path.c_str(), pst.events_written, pst.file_bytes, pst.dropped_events);
    if (const uint64_t errors = tb_dpi_trace_errors()) {
      std::fprintf(stderr, "sim_main: %" PRIu64 " tracing calls failed\n", errors);
      trace_ok = false;
    }
    trace_bytes = st.file_bytes;
    trace_cycles = st.cycles;
    trace_ops = st.ops;
    trace_events = st.events;
  }
#endif

  const bool rtl_error = ctx->gotError();  // an assertion or $error/$fatal in the RTL
  const bool halted = top->halted;
  const unsigned cause = top->trap_cause;
  const bool pass = !rtl_error && halted && cause == 1 && top->tohost_valid && top->tohost_code == 0;
  const bool failed = rtl_error || (halted && !pass);  // anything but the firmware's passing exit
  const int status = !trace_ok ? 3 : timeout ? 2 : (pass || (window_end && !failed)) ? 0 : 1;

  const uint64_t cycles = top->perf_cycles, instret = top->perf_instret;
  const double ipc = cycles ? double(instret) / double(cycles) : 0.0;
  const double cps = wall_s > 0 ? double(core_edges) / wall_s : 0.0;

  if (!quiet) {
    std::printf("\n── soc_top ─────────────────────────────────────────────\n");
    std::printf("firmware       %s (TOHOST %s %u), halted: %s at pc 0x%08x\n",
                pass ? "PASS" : "FAIL", top->tohost_valid ? "=" : "unwritten,",
                (unsigned)top->tohost_code, trap_name(cause), (unsigned)top->trap_pc);
    if (timeout) std::printf("TIMEOUT after %" PRIu64 " core cycles\n", core_edges);
    if (rtl_error) std::printf("RTL ERROR (an assertion or $error) after %" PRIu64 " core cycles\n", core_edges);
    if (window_end) std::printf("stopped after the +bench_cycles window of %" PRIu64 " core cycles\n", core_edges);
    std::printf("core           %" PRIu64 " cycles, %" PRIu64 " instret, IPC %.3f\n", cycles,
                instret, ipc);
    std::printf("               %" PRIu64 " flushes (%" PRIu64 " squashed), %" PRIu64
                " load-use stalls, %" PRIu64 " bus-wait cycles\n",
                (uint64_t)top->perf_flushes, (uint64_t)top->perf_squashed,
                (uint64_t)top->perf_load_use, (uint64_t)top->perf_mem_wait);
    std::printf("npu            %" PRIu64 " MACs, %u DMA bytes, %u SRAM bank conflicts\n",
                (uint64_t)top->npu_perf_macs, (unsigned)top->npu_perf_dma_bytes,
                (unsigned)top->npu_perf_conflicts);
    std::printf("simulation     %" PRIu64 " core + %" PRIu64 " npu edges in %.3f s: %.0f core cycles/s (%s)\n",
                core_edges, npu_edges, wall_s, cps,
                tracing ? "µScope trace" : fst_path.empty() ? "untraced" : "FST");
    if (tracing)
      std::printf("trace          %s: %" PRIu64 " bytes, %" PRIu64 " cycles, %" PRIu64 " ops, %" PRIu64
                  " events\n",
                  trace_path.c_str(), trace_bytes, trace_cycles, trace_ops, trace_events);
    std::printf("exit           %d\n", status);
  }

  // The machine-readable report: one line on stdout, and optionally a file.
  std::string j = "{";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"status\":%d,\"pass\":%s,\"timeout\":%s,\"window\":%s,\"rtl_error\":%s,\"halted\":%s,"
                "\"trap_cause\":\"%s\",\"trap_pc\":%u,\"tohost_valid\":%s,\"tohost_code\":%u,",
                status, pass ? "true" : "false", timeout ? "true" : "false",
                window_end ? "true" : "false", rtl_error ? "true" : "false",
                halted ? "true" : "false", trap_name(cause), (unsigned)top->trap_pc,
                top->tohost_valid ? "true" : "false", (unsigned)top->tohost_code);
  j += buf;
  std::snprintf(buf, sizeof buf,
                "\"core\":{\"cycles\":%" PRIu64 ",\"instret\":%" PRIu64 ",\"ipc\":%.4f,\"flushes\":%" PRIu64
                ",\"squashed\":%" PRIu64 ",\"load_use_stalls\":%" PRIu64 ",\"mem_wait_cycles\":%" PRIu64 "},",
                cycles, instret, ipc, (uint64_t)top->perf_flushes, (uint64_t)top->perf_squashed,
                (uint64_t)top->perf_load_use, (uint64_t)top->perf_mem_wait);
  j += buf;
  std::snprintf(buf, sizeof buf, "\"npu\":{\"macs\":%" PRIu64 ",\"dma_bytes\":%u,\"conflicts\":%u},",
                (uint64_t)top->npu_perf_macs, (unsigned)top->npu_perf_dma_bytes,
                (unsigned)top->npu_perf_conflicts);
  j += buf;
  j += "\"fw\":{";
  bool first = true;
  for (const ReportKey &k : kReportKeys) {
    std::snprintf(buf, sizeof buf, "%s\"%s\":%" PRIu64, first ? "" : ",", k.name, tb_dpi_fw_report(k.key));
    j += buf;
    first = false;
  }
  j += "},";
  std::snprintf(buf, sizeof buf,
                "\"sim\":{\"core_edges\":%" PRIu64 ",\"npu_edges\":%" PRIu64 ",\"wall_s\":%.6f,"
                "\"core_cycles_per_s\":%.1f,\"mode\":\"%s\"},",
                core_edges, npu_edges, wall_s, cps,
                tracing ? "uscope" : fst_path.empty() ? "untraced" : "fst");
  j += buf;
  std::snprintf(buf, sizeof buf,
                "\"trace\":{\"enabled\":%s,\"ok\":%s,\"file_bytes\":%" PRIu64 ",\"cycles\":%" PRIu64
                ",\"ops\":%" PRIu64 ",\"events\":%" PRIu64 "}}",
                tracing ? "true" : "false", trace_ok ? "true" : "false", trace_bytes, trace_cycles,
                trace_ops, trace_events);
  j += buf;
  std::printf("TB_REPORT %s\n", j.c_str());
  if (!report_path.empty()) {
    if (FILE *f = std::fopen(report_path.c_str(), "w")) {
      std::fprintf(f, "%s\n", j.c_str());
      std::fclose(f);
    } else {
      std::fprintf(stderr, "sim_main: cannot write %s\n", report_path.c_str());
      return 3;
    }
  }
  return status;
}
