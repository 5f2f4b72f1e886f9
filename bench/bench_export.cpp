// The exporters (include/uscope/export.h) on the BOOM-like cpu workload of
// boom_cpu_trace.hpp: 1,000,000 cycles, 4 fetches and 4 retires per cycle,
// 10 stage transitions each, one counter; its pcs walk the testbench
// firmware's .text and the trace names that ELF (cpu.elf_path), so that
// nytprof and hpctoolkit attribute cycles to real functions and lines.
// Issue 14 asks every exporter to stream: memory bounded whatever the trace's
// size.
//
// Benchmarks (through the C ABI, as `uscope export` calls it):
//   BM_Baseline_Replay  every segment replayed by the reader core with a
//                       visitor that does nothing (same run): s;
//   BM_Export/<format>  a whole-trace export: s, x_replay (over the
//                       baseline), in_MBps (trace bytes per second), out_MB,
//                       out_MBps, records, peak_rss_delta_MB (VmHWM reset
//                       before, minus the RSS then);
//   BM_ExportBig/<format> the same on a trace of USCOPE_BENCH_BIG_MB
//                       (default 1024; 0 skips them): peak_rss_delta_MB
//                       against file_MB shows whether memory grows with the
//                       trace.
// A failed export or one that wrote nothing makes the program exit 1.
//
// Environment: USCOPE_BENCH_CYCLES (default 1000000), USCOPE_BENCH_BIG_MB,
// USCOPE_BENCH_DIR (default /tmp), USCOPE_BENCH_ELF (default: the testbench
// firmware this build made, USCOPE_BENCH_FW_ELF).
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/elf_info.hpp"
#include "boom_cpu_trace.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/export.h"

namespace {

using namespace uscope_bench;
using Clock = std::chrono::steady_clock;

uint64_t env_u64(const char *name, uint64_t def) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

double file_mb(const std::string &path) {
  std::error_code ec;
  uint64_t n = 0;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto &e : std::filesystem::recursive_directory_iterator(path, ec))
      if (e.is_regular_file(ec)) n += e.file_size(ec);
  } else {
    n = std::filesystem::file_size(path, ec);
  }
  return static_cast<double>(n) / 1048576.0;
}

struct Env {
  std::string dir, trace, big, elf;
  uint64_t cycles = 0, big_cycles = 0, text_lo = 0, text_span = 0;
  Env() {
    cycles = std::max<uint64_t>(env_u64("USCOPE_BENCH_CYCLES", 1000000), 20000);
    const char *d = std::getenv("USCOPE_BENCH_DIR");
    dir = std::string(d && *d ? d : "/tmp") + "/uscope_bench_export." + std::to_string(getpid());
    mkdir(dir.c_str(), 0700);
    const char *e = std::getenv("USCOPE_BENCH_ELF");
#ifdef USCOPE_BENCH_FW_ELF
    elf = e && *e ? e : USCOPE_BENCH_FW_ELF;
#else
    elf = e && *e ? e : "";
#endif
    if (elf.empty()) {
      std::fprintf(stderr, "bench_export: set USCOPE_BENCH_ELF to a RISC-V firmware ELF\n");
      std::exit(1);
    }
    // The first run of code from the ELF's lowest executable address: the
    // pcs the trace walks.
    {
      uscope::analysis::ElfInfo info(elf);
      for (uint64_t a = 0; a < (1u << 24) && !text_span; a += 4) {
        size_t avail = 0;
        if (info.code_at(a, &avail) && avail >= 4) {
          text_lo = a;
          text_span = avail & ~uint64_t{3};
        }
      }
      if (!text_span) {
        std::fprintf(stderr, "bench_export: no code below 16 MiB in %s\n", elf.c_str());
        std::exit(1);
      }
    }
    trace = dir + "/boom.uscope";
    write_cpu_trace(trace, cycles, text_lo, text_span, elf.c_str());
    const uint64_t big_mb = env_u64("USCOPE_BENCH_BIG_MB", 1024);
    if (big_mb) {
      struct stat sb;
      stat(trace.c_str(), &sb);
      big_cycles = static_cast<uint64_t>(static_cast<double>(cycles) * big_mb * 1048576.0 / sb.st_size);
      big = dir + "/big.uscope";
    }
  }
  ~Env() { std::filesystem::remove_all(dir); }
};
Env &env() {
  static Env e;
  return e;
}

double g_replay_s = 0;

void BM_Baseline_Replay(benchmark::State &state) {
  uint64_t items = 0;
  for (auto _ : state) g_replay_s = replay_all_seconds(env().trace, &items);
  state.counters["s"] = g_replay_s;
  state.counters["items"] = static_cast<double>(items);
}

// One export of `trace`, measured into state's counters.
void export_once(benchmark::State &state, const std::string &trace, uint32_t format) {
  const char *name = uscope_export_format_name(format);
  const std::string out = env().dir + "/out." + name;
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = format;
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  double s = 0, delta = 0;
  for (auto _ : state) {
    reset_peak_rss();
    const double base = peak_rss_mb();
    const auto t0 = Clock::now();
    const uscope_status_t rc = uscope_export(&st, trace.c_str(), out.c_str(), &o);
    s = std::chrono::duration<double>(Clock::now() - t0).count();
    delta = peak_rss_mb() - base;
    if (rc != USCOPE_OK) {
      std::fprintf(stderr, "bench_export: export to %s failed: %s\n", name, uscope_last_error());
      std::exit(1);
    }
  }
  const double in_mb = file_mb(trace), out_mb = file_mb(out);
  if (st.records == 0 || out_mb <= 0) {
    std::fprintf(stderr, "bench_export: export to %s wrote nothing\n", name);
    std::exit(1);
  }
  std::filesystem::remove_all(out);
  state.counters["s"] = s;
  if (g_replay_s > 0) state.counters["x_replay"] = s / g_replay_s;
  state.counters["in_MB"] = in_mb;
  state.counters["in_MBps"] = in_mb / s;
  state.counters["out_MB"] = out_mb;
  state.counters["out_MBps"] = out_mb / s;
  state.counters["records"] = static_cast<double>(st.records);
  state.counters["peak_rss_delta_MB"] = delta;
}

void export_big(benchmark::State &state, uint32_t format) {
  if (env().big.empty()) {
    state.SkipWithError("USCOPE_BENCH_BIG_MB=0");
    return;
  }
  struct stat sb;
  if (stat(env().big.c_str(), &sb) != 0)
    write_cpu_trace(env().big, env().big_cycles, env().text_lo, env().text_span, env().elf.c_str());
  export_once(state, env().big, format);
}

}  // namespace

BENCHMARK(BM_Baseline_Replay)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
// BM_Export/<format> for every format, then BM_ExportBig/<format>, named by
// the format (uscope_export_format_name).
const bool g_registered = [] {
  for (const bool big : {false, true}) {
    const char *kind = big ? "BM_ExportBig/" : "BM_Export/";
    for (uint32_t f = USCOPE_EXPORT_KONATA; f <= USCOPE_EXPORT_VCD; ++f) {
      benchmark::RegisterBenchmark((kind + std::string(uscope_export_format_name(f))).c_str(),
                                   [f, big](benchmark::State &s) {
                                     if (big)
                                       export_big(s, f);
                                     else
                                       export_once(s, env().trace, f);
                                   })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return true;
}();

BENCHMARK_MAIN();
