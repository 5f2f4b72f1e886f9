// The cpu analysis (include/uscope/analysis.h) on the BOOM-like workload of
// boom_workload.hpp, declared through the cpu protocol (so that the schema
// has every cpu event the reference's tools require) and with each fetch
// also setting entity_id, which the workload's writer benchmark leaves out
// (without it no instruction starts, in our analysis or the reference's):
// 1,000,000 cycles of 1000 ps, a checkpoint every 10,000 cycles, 4 fetches
// and 4 retires per cycle (128 in flight), 10 stage transitions, one
// counter. Issue 13's targets on it: analyze_performance over the whole
// trace <= 1.5 s and over 1,000 cycles <= 5 ms; timeline --entity <= 5 ms;
// a 200-bucket counter downsample over the whole trace <= 2 ms (TSUM); peak
// RSS of the analysis over a 1 GB trace <= 64 MB plus the mapping.
//
// Benchmarks (all through the C ABI, as the CLI and the MCP server call it):
//   BM_Baseline_Replay    every segment replayed by the reader core with a
//                         visitor that does nothing: what any analysis of
//                         the whole trace has to pay (same run);
//   BM_AnalyzeWhole       a fresh handle, uscope_cpu_trace_analyze over the
//                         whole trace: s, x_replay (over the baseline);
//   BM_Analyze1000        200 random windows of 1,000 cycles on one handle:
//                         median_ms, p90_ms, max_ms;
//   BM_TimelineAtCycle    uscope_cpu_trace_entity for the instruction fetched
//                         at a random cycle (--entity N --cycle C): median_ms,
//                         p90_ms;
//   BM_TimelineWholeTrace one entity over the whole trace (the reference's
//                         semantics: every life of the id): ms;
//   BM_Downsample200      200 buckets over the whole trace: median_ms;
//   BM_CounterSeries1000  per-cycle values over 1,000 cycles: median_ms;
//   BM_AnalyzeMemory      peak RSS (VmHWM, reset before) of a fresh reader +
//                         handle analyzing the big trace whole, minus the RSS
//                         before: peak_rss_delta_MB, file_MB.
// Each answer is checked (instruction counts, IPC, the entity found, the
// downsample's sum); a wrong one makes the program exit 1.
//
// Environment: USCOPE_BENCH_CYCLES (default 1000000), USCOPE_BENCH_BIG_MB
// (size of the trace of BM_AnalyzeMemory, default 1024; 0 skips it),
// USCOPE_BENCH_DIR (default /tmp), USCOPE_BENCH_TRACE (keep / reuse the
// 1M-cycle trace at this path, e.g. to run the reference's tools on it).
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "boom_cpu_trace.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/analysis.h"
#include "uscope/protocols.h"

namespace {

using namespace uscope_bench;
using Clock = std::chrono::steady_clock;

uint64_t env_u64(const char *name, uint64_t def) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

[[noreturn]] void wrong(const char *what) {
  std::fprintf(stderr, "bench_analysis: wrong answer: %s\n", what);
  std::exit(1);
}

struct Env {
  std::string dir, trace, big;
  uint64_t cycles = 0, big_cycles = 0;
  bool keep = false;
  Env() {
    cycles = std::max<uint64_t>(env_u64("USCOPE_BENCH_CYCLES", 1000000), 20000);
    const char *d = std::getenv("USCOPE_BENCH_DIR");
    dir = std::string(d && *d ? d : "/tmp") + "/uscope_bench_analysis." + std::to_string(getpid());
    mkdir(dir.c_str(), 0700);
    const char *t = std::getenv("USCOPE_BENCH_TRACE");
    keep = t && *t;
    trace = keep ? t : dir + "/boom.uscope";
    struct stat sb;
    if (!keep || stat(trace.c_str(), &sb) != 0) write_cpu_trace(trace, cycles);
    const uint64_t big_mb = env_u64("USCOPE_BENCH_BIG_MB", 1024);
    if (big_mb) {
      stat(trace.c_str(), &sb);
      big_cycles = static_cast<uint64_t>(static_cast<double>(cycles) * big_mb * 1048576.0 / sb.st_size);
      big = dir + "/big.uscope";
    }
  }
  ~Env() {
    if (!keep) std::remove(trace.c_str());
    if (!big.empty()) std::remove(big.c_str());
    rmdir(dir.c_str());
  }
};
Env &env() {
  static Env e;
  return e;
}

struct Handle {
  uscope_reader_t *r = nullptr;
  uscope_cpu_trace_t *t = nullptr;
  explicit Handle(const std::string &path) {
    CHECK_OK(uscope_reader_open(&r, path.c_str()));
    CHECK_OK(uscope_cpu_trace_open(&t, r, nullptr));
  }
  ~Handle() {
    uscope_cpu_trace_close(t);
    uscope_reader_close(r);
  }
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void percentiles(benchmark::State &state, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  state.counters["median_ms"] = v[v.size() / 2];
  state.counters["p90_ms"] = v[v.size() * 9 / 10];
  state.counters["max_ms"] = v.back();
}

double g_replay_s = 0;

void BM_Baseline_Replay(benchmark::State &state) {
  uint64_t items = 0;
  for (auto _ : state) g_replay_s = replay_all_seconds(env().trace, &items);
  state.counters["s"] = g_replay_s;
  state.counters["items"] = static_cast<double>(items);
}

void BM_AnalyzeWhole(benchmark::State &state) {
  const uint64_t cycles = env().cycles;
  double s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Handle h(env().trace);
    uscope_perf_report_t rep{};
    rep.struct_size = sizeof rep;
    CHECK_OK(uscope_cpu_trace_analyze(h.t, &rep, 0, cycles));
    s = ms_since(t0) / 1e3;
    if (rep.total != cycles * kFetchWidth) wrong("analyze: total");
    if (rep.retired != (cycles - kInFlight / kFetchWidth) * kFetchWidth) wrong("analyze: retired");
    if (rep.num_stages == 0) wrong("analyze: no stage latencies");
  }
  state.counters["s"] = s;
  if (g_replay_s > 0) state.counters["x_replay"] = s / g_replay_s;
}

void BM_Analyze1000(benchmark::State &state) {
  Handle h(env().trace);
  std::mt19937_64 rng(1);
  std::vector<double> ms;
  for (auto _ : state) {
    ms.clear();
    for (int q = 0; q < 200; ++q) {
      const uint64_t a = rng() % (env().cycles - 3000) + 1000;
      const auto t0 = Clock::now();
      uscope_perf_report_t rep{};
      rep.struct_size = sizeof rep;
      CHECK_OK(uscope_cpu_trace_analyze(h.t, &rep, a, a + 1000));
      ms.push_back(ms_since(t0));
      if (rep.total != 1000 * kFetchWidth || rep.retired != rep.total) wrong("analyze 1000: counts");
    }
  }
  percentiles(state, ms);
}

void BM_TimelineAtCycle(benchmark::State &state) {
  Handle h(env().trace);
  std::mt19937_64 rng(2);
  std::vector<double> ms;
  for (auto _ : state) {
    ms.clear();
    for (int q = 0; q < 200; ++q) {
      const uint64_t c = rng() % (env().cycles - 100);
      const uint32_t eid = static_cast<uint32_t>(c * kFetchWidth + 1);
      const auto t0 = Clock::now();
      uscope_insn_iter_t *it = nullptr;
      CHECK_OK(uscope_cpu_trace_entity(h.t, &it, eid, c, c));
      uscope_insn_t i;
      const uscope_status_t st = uscope_insn_iter_next(it, &i);
      ms.push_back(ms_since(t0));
      if (st != USCOPE_OK || i.entity_id != eid || i.first_cycle != c || i.num_stages == 0)
        wrong("timeline: the entity");
      uscope_insn_iter_free(it);
    }
  }
  percentiles(state, ms);
}

void BM_TimelineWholeTrace(benchmark::State &state) {
  Handle h(env().trace);
  double ms = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    uscope_insn_iter_t *it = nullptr;
    const uint32_t eid = static_cast<uint32_t>(env().cycles / 2 * kFetchWidth);
    CHECK_OK(uscope_cpu_trace_entity(h.t, &it, eid, 0, UINT64_MAX));
    uscope_insn_t i;
    int n = 0;
    while (uscope_insn_iter_next(it, &i) == USCOPE_OK) ++n;
    uscope_insn_iter_free(it);
    ms = ms_since(t0);
    if (n != 1) wrong("timeline whole: one life");
  }
  state.counters["ms"] = ms;
}

void BM_Downsample200(benchmark::State &state) {
  Handle h(env().trace);
  std::vector<double> ms;
  std::vector<uscope_counter_bucket_t> b(200);
  for (auto _ : state) {
    ms.clear();
    for (int q = 0; q < 200; ++q) {
      const auto t0 = Clock::now();
      int exact = 0;
      CHECK_OK(uscope_cpu_trace_counter_downsample(h.t, b.data(), &exact, 0, 0, env().cycles, 200));
      ms.push_back(ms_since(t0));
    }
    uint64_t sum = 0;
    for (const auto &x : b) sum += x.sum;
    if (sum + 200 < env().cycles * kFetchWidth || sum > env().cycles * kFetchWidth + 200) {
      std::fprintf(stderr, "sum %llu\n", static_cast<unsigned long long>(sum));
      wrong("downsample: sum");
    }
  }
  percentiles(state, ms);
}

void BM_CounterSeries1000(benchmark::State &state) {
  Handle h(env().trace);
  std::mt19937_64 rng(3);
  std::vector<double> ms;
  std::vector<uint64_t> v(1000);
  for (auto _ : state) {
    ms.clear();
    for (int q = 0; q < 200; ++q) {
      const uint64_t a = rng() % (env().cycles - 1000);
      const auto t0 = Clock::now();
      CHECK_OK(uscope_cpu_trace_counter_series(h.t, v.data(), 0, a, v.size()));
      ms.push_back(ms_since(t0));
      if (v[999] != (a + 1000) * kFetchWidth) wrong("counter series");
    }
  }
  percentiles(state, ms);
}

void BM_AnalyzeMemory(benchmark::State &state) {
  if (env().big.empty()) {
    state.SkipWithError("USCOPE_BENCH_BIG_MB=0");
    return;
  }
  struct stat sb;
  if (stat(env().big.c_str(), &sb) != 0) write_cpu_trace(env().big, env().big_cycles);
  stat(env().big.c_str(), &sb);
  double delta = 0, s = 0;
  for (auto _ : state) {
    const double before = peak_rss_mb();
    reset_peak_rss();
    const double base = peak_rss_mb();
    const auto t0 = Clock::now();
    {
      Handle h(env().big);
      uscope_perf_report_t rep{};
      rep.struct_size = sizeof rep;
      CHECK_OK(uscope_cpu_trace_analyze(h.t, &rep, 0, env().big_cycles));
      if (rep.total != env().big_cycles * kFetchWidth) wrong("analyze big: total");
    }
    s = ms_since(t0) / 1e3;
    delta = peak_rss_mb() - base;
    (void)before;
  }
  state.counters["peak_rss_delta_MB"] = delta;
  state.counters["file_MB"] = static_cast<double>(sb.st_size) / 1048576.0;
  state.counters["s"] = s;
}

BENCHMARK(BM_Baseline_Replay)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeWhole)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Analyze1000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TimelineAtCycle)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TimelineWholeTrace)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Downsample200)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CounterSeries1000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AnalyzeMemory)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
