// Writer throughput on a "BOOM-like" workload, through the shared library's C
// ABI, as a simulator would call it.
//
// Workload: the BOOM-like one of boom_workload.hpp (1,000,000 cycles of
// 1000 ps, a checkpoint every 10,000 cycles, 13 ops + 10 events per cycle).
//
// Every traced run is one whole file: open, 1M cycles, close. The counters:
//   ns_per_item_sim   simulation-thread time of the cycle loop minus the time
//                     it waited for the encoder (stats.stall_ns), per op/event:
//                     the cost of the calls themselves;
//   ns_per_item_raw   the same including the waits: the sustained rate;
//   cpu_ns_per_item   the simulation thread's CPU time in the loop per item
//                     (CLOCK_THREAD_CPUTIME_ID: robust to preemption by other
//                     processes on a busy machine; includes the short spins of
//                     a stall, not its sleeps);
//   encoder_ns_per_cycle
//                     CPU time of every other thread (the encoder) from open
//                     to close, per cycle: above the simulation thread's time
//                     per cycle, the encoder is the bottleneck;
//   loop_ms, close_ms, wall_ms
//                     the cycle loop, uscope_writer_close (drains the queue and
//                     finalizes), and open..close (also the benchmark's time);
//   bytes_per_cycle, file_MB, raw_MB, compressed_MB, ckpt_MB, ratio
//                     from the finished file (segment headers walked);
//   stalls, stall_ms  from uscope_writer_stats just before close;
//   peak_rss_MB       getrusage ru_maxrss, reset before each run through
//                     /proc/self/clear_refs so that it is this run's peak.
//
// Baselines in the same process, for a meaningful ratio on a noisy machine:
//   BM_Baseline_PlainStores      the same calls with the same checks (state,
//                                ids, slot, field, value range, payload size,
//                                space) and the same 16-byte records into a
//                                preallocated 8 MiB ring, inlined: what the
//                                hot path fundamentally has to do;
//   BM_Baseline_PlainStoresCall  the same, each call out of line (the cost of a
//                                function call per op, as through a C ABI);
//   BM_ModelOnly/200, /1000      only the ~200 ns or ~1 us per cycle of "model
//                                work".
// BM_Writer_LZ4_HotPath times the calls alone: g_cycles cycles in bursts that
// the encoder drains in between (no stall, queue pages already touched); that
// is the figure to hold against the baselines.
// BM_Writer_Idle: an open writer recording nothing, its CPU and context
// switches per second.
// BM_Writer_LZ4_Model200ns and _Model1us report tracer_ns_per_item(_sim):
// the loop time (minus stalls) minus the median BM_ModelOnly time of the same
// model work, per item: the tracer's overhead on a real simulation. At 200 ns
// per cycle the encoder is still the bottleneck of this workload; at 1 us it
// is not.
//
// Environment: USCOPE_BENCH_CYCLES (default 1000000), USCOPE_BENCH_DIR (default
// $TMPDIR or /tmp; a private directory is made inside and removed at exit).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "boom_workload.hpp"
#include "uscope/uscope.h"

namespace {

using namespace uscope_bench;

// ── configuration ──

constexpr double kModelTargetNs = 200.0;  // calibration target; variants use multiples

uint64_t g_cycles = 1'000'000;
std::string g_dir;
std::atomic<unsigned> g_file_seq{0};

uint64_t cpu_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
// CPU time of the calling thread, and of the whole process (all threads).
uint64_t thread_cpu_ns() { return cpu_ns(CLOCK_THREAD_CPUTIME_ID); }
uint64_t process_cpu_ns() { return cpu_ns(CLOCK_PROCESS_CPUTIME_ID); }

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The baseline: the same validation and the same records as the writer's hot
// path, into a preallocated ring that nobody drains (it just wraps).
class PlainStores {
 public:
  PlainStores(const Ids &ids, size_t cap) {
    buf_ = static_cast<uint8_t *>(std::aligned_alloc(64, cap));
    if (!buf_) std::abort();
    std::memset(buf_, 0, cap);  // preallocated: no page faults in the timed loop
    w_ = buf_;
    limit_ = buf_ + cap;
    storages_[ids.entities] = {kSlots, 3, 0};
    storages_[ids.committed] = {1, 1, 3};
    ranges_[0] = {0, UINT32_MAX};
    ranges_[1] = {0, UINT64_MAX};
    ranges_[2] = {0, UINT32_MAX};
    ranges_[3] = {0, UINT64_MAX};
    event_sizes_[ids.stage_event] = 5;
  }
  ~PlainStores() { std::free(buf_); }
  PlainStores(const PlainStores &) = delete;
  PlainStores &operator=(const PlainStores &) = delete;

  int begin(uint64_t t) {
    if (__builtin_expect(recording_, 0)) return USCOPE_ERR_BAD_STATE;
    if (__builtin_expect(t < last_time_, 0)) return USCOPE_ERR_TIME_BACKWARDS;
    last_time_ = t;
    uint8_t *p = room(16);
    const uint64_t tag = 0x10;
    std::memcpy(p, &tag, 8);
    std::memcpy(p + 8, &t, 8);
    recording_ = true;
    return USCOPE_OK;
  }
  int set(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    if (__builtin_expect(!recording_, 0)) return USCOPE_ERR_BAD_STATE;
    if (__builtin_expect(sid >= kNumStorages, 0)) return USCOPE_ERR_UNKNOWN_STORAGE;
    const Storage &s = storages_[sid];
    if (__builtin_expect(slot >= s.num_slots, 0)) return USCOPE_ERR_UNKNOWN_SLOT;
    if (__builtin_expect(f >= s.num_fields, 0)) return USCOPE_ERR_UNKNOWN_FIELD;
    const Range &r = ranges_[s.range_base + f];
    if (__builtin_expect(v + r.bias > r.span, 0)) return USCOPE_ERR_VALUE_RANGE;
    return op(1, sid, slot, f, v);
  }
  int clear(uint16_t sid, uint16_t slot) {
    if (__builtin_expect(!recording_, 0)) return USCOPE_ERR_BAD_STATE;
    if (__builtin_expect(sid >= kNumStorages, 0)) return USCOPE_ERR_UNKNOWN_STORAGE;
    if (__builtin_expect(slot >= storages_[sid].num_slots, 0)) return USCOPE_ERR_UNKNOWN_SLOT;
    return op(2, sid, slot, 0, 0);
  }
  int add(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    if (__builtin_expect(!recording_, 0)) return USCOPE_ERR_BAD_STATE;
    if (__builtin_expect(sid >= kNumStorages, 0)) return USCOPE_ERR_UNKNOWN_STORAGE;
    const Storage &s = storages_[sid];
    if (__builtin_expect(slot >= s.num_slots, 0)) return USCOPE_ERR_UNKNOWN_SLOT;
    if (__builtin_expect(f >= s.num_fields, 0)) return USCOPE_ERR_UNKNOWN_FIELD;
    return op(3, sid, slot, f, v);
  }
  int event(uint16_t id, const void *payload, uint32_t n) {
    if (__builtin_expect(!recording_, 0)) return USCOPE_ERR_BAD_STATE;
    if (__builtin_expect(id >= kNumEvents, 0)) return USCOPE_ERR_UNKNOWN_EVENT;
    if (__builtin_expect(n != event_sizes_[id], 0)) return USCOPE_ERR_PAYLOAD_SIZE;
    uint8_t *p = room(8 + n);
    const uint64_t hdr = 0x03 | uint64_t{id} << 16 | uint64_t{n} << 32;
    std::memcpy(p, &hdr, 8);
    std::memcpy(p + 8, payload, n);
    ++items_;
    return USCOPE_OK;
  }
  int end() {
    if (__builtin_expect(!recording_, 0)) return USCOPE_ERR_BAD_STATE;
    *room(1) = 0x11;
    recording_ = false;
    benchmark::ClobberMemory();  // the records are "published" here
    return USCOPE_OK;
  }
  uint64_t items() const { return items_; }

 private:
  static constexpr uint16_t kNumStorages = 2, kNumEvents = 1;
  struct Storage {
    uint16_t num_slots, num_fields;
    uint32_t range_base;
  };
  struct Range {
    uint64_t bias, span;
  };
  int op(uint8_t action, uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    uint8_t *p = room(16);
    const uint64_t hdr = 0x02 | uint64_t{action} << 8 | uint64_t{sid} << 16 |
                         uint64_t{slot} << 32 | uint64_t{f} << 48;
    std::memcpy(p, &hdr, 8);
    std::memcpy(p + 8, &v, 8);
    ++items_;
    return USCOPE_OK;
  }
  uint8_t *room(size_t n) {
    if (__builtin_expect(static_cast<size_t>(limit_ - w_) < n, 0)) w_ = buf_;  // wrap
    uint8_t *p = w_;
    w_ += n;
    return p;
  }

  uint8_t *buf_, *w_, *limit_;
  bool recording_ = false;
  uint64_t last_time_ = 0, items_ = 0;
  Storage storages_[kNumStorages] = {};
  Range ranges_[4] = {};
  uint32_t event_sizes_[kNumEvents] = {};
};

// The same, with every call out of line, like a call into a library.
struct PlainStoresCall {
  PlainStores &p;
  __attribute__((noinline)) int begin(uint64_t t) { return p.begin(t); }
  __attribute__((noinline)) int set(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    return p.set(sid, slot, f, v);
  }
  __attribute__((noinline)) int clear(uint16_t sid, uint16_t slot) { return p.clear(sid, slot); }
  __attribute__((noinline)) int add(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    return p.add(sid, slot, f, v);
  }
  __attribute__((noinline)) int event(uint16_t id, const void *pl, uint32_t n) {
    return p.event(id, pl, n);
  }
  __attribute__((noinline)) int end() { return p.end(); }
};

// ── simulated model work ──

// A stand-in for a Verilator model's eval(): straight-line work over 256 KiB
// of "signal" state, streamed through like a model's variables, with enough
// independent loads, ALU work and stores per word to keep the core's ports
// busy (a latency-bound pointer chase would leave them idle and let the
// tracer run for free in its shadow, which a real model does not). Not
// vectorized, like most of Verilator's code. Calibrated at startup.
class Model {
 public:
  Model() : mem_(kWords) {
    for (size_t i = 0; i < kWords; ++i) mem_[i] = i * 0x9E3779B97F4A7C15ull;
  }
#if defined(__clang__)
  __attribute__((noinline)) void step(uint32_t words) {
#else
  __attribute__((noinline, optimize("no-tree-vectorize"))) void step(uint32_t words) {
#endif
    uint64_t *m = mem_.data();
    size_t i = pos_;
    for (uint32_t k = 0; k < words; ++k) {
      const uint64_t a = m[i], b = m[(i + 1) & (kWords - 1)], c = m[(i + 7) & (kWords - 1)];
      m[i] = ((a ^ (b >> 3)) + (c | 1) * 0x9E3779B97F4A7C15ull) ^ (a << 7);
      i = (i + 1) & (kWords - 1);
    }
    pos_ = i;
  }
  uint64_t state() const { return mem_[pos_]; }

 private:
  static constexpr size_t kWords = 32 * 1024;
  std::vector<uint64_t> mem_;
  size_t pos_ = 0;
};

// Iterations of Model::step and their measured time, by multiple of 200 ns
// (index 1: ~200 ns, index 5: ~1 us), each target calibrated on its own.
constexpr int kMaxModelMult = 5;
uint32_t g_model_iters[kMaxModelMult + 1] = {};
double g_model_calibrated_ns[kMaxModelMult + 1] = {};
// ns per cycle measured by each BM_ModelOnly run, by multiple.
std::vector<double> g_model_runs[kMaxModelMult + 1];

// The median of the BM_ModelOnly runs so far for that multiple, or the
// calibration figure.
double model_ns_per_cycle(int mult) {
  if (g_model_runs[mult].empty()) return g_model_calibrated_ns[mult];
  std::vector<double> v = g_model_runs[mult];
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void calibrate_model(int mult) {
  // Scale the iteration count until one step takes about mult * 200 ns (the
  // best of a few rounds, so that a busy machine does not inflate it).
  const double target = kModelTargetNs * mult;
  Model m;
  const uint32_t reps = 20000 / static_cast<uint32_t>(mult);
  uint32_t iters = 32u * static_cast<uint32_t>(mult);
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    best = 1e30;
    for (int round = 0; round < 5; ++round) {
      const uint64_t t0 = now_ns();
      for (uint32_t i = 0; i < reps; ++i) m.step(iters);
      best = std::min(best, static_cast<double>(now_ns() - t0) / reps);
    }
    if (pass < 4) iters = std::max<uint32_t>(1, static_cast<uint32_t>(iters * target / best + 0.5));
  }
  benchmark::DoNotOptimize(m.state());
  g_model_iters[mult] = iters;
  g_model_calibrated_ns[mult] = best;
}

// ── reading back the file ──

struct FileFigures {
  uint64_t file_bytes = 0, segments = 0, checkpoint = 0, compressed = 0, raw = 0;
};

uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// Sums the segment headers (spec §8.1), walking back from the tail.
FileFigures read_figures(const std::string &path) {
  FileFigures f;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  struct stat sb;
  fstat(fd, &sb);
  f.file_bytes = static_cast<uint64_t>(sb.st_size);
  uint8_t h[56];
  if (pread(fd, h, 48, 0) != 48 || std::memcmp(h, "uSCP", 4) != 0) {
    std::fprintf(stderr, "uscope_bench: %s: bad file header\n", path.c_str());
    std::exit(1);
  }
  const uint64_t n = le(h + 24, 4);
  uint64_t off = le(h + 40, 8);
  for (uint64_t i = 0; i < n; ++i) {
    if (pread(fd, h, 56, static_cast<off_t>(off)) != 56 || std::memcmp(h, "uSEG", 4) != 0) {
      std::fprintf(stderr, "uscope_bench: %s: bad segment at %llu\n", path.c_str(),
                   static_cast<unsigned long long>(off));
      std::exit(1);
    }
    f.checkpoint += le(h + 32, 4);
    f.compressed += le(h + 36, 4);
    f.raw += le(h + 40, 4);
    off = le(h + 24, 8);
  }
  f.segments = n;
  ::close(fd);
  return f;
}

// ── benchmarks ──

struct Variant {
  uint32_t compression;
  uint32_t frames;
  int model;  // model work per cycle, in multiples of ~200 ns (0: none)
  int32_t level = 0;
  uint32_t compress_threads = 0;  // 0: the library's default
};

void BM_Writer(benchmark::State &state, Variant v) {
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.compression = v.compression;
  opts.frame_format = v.frames;
  opts.compression_level = v.level;
  opts.compress_threads = v.compress_threads;
  const uint32_t model_iters = g_model_iters[v.model];
  opts.checkpoint_interval_ps = kCheckpointPs;
  const uscope_dut_property_t props[] = {{"dut_name", "boom_like"}, {"cpu.isa", "RV64GC"}};
  Model model;

  double loop_ns = 0, loop_cpu_ns = 0, encoder_cpu_ns = 0, close_ns = 0, wall_ns = 0;
  double stall_ns = 0, stalls = 0, rss = 0, items = 0, cycles = 0, waits = 0;
  uint32_t workers = 0;
  FileFigures ff;
  for (auto _ : state) {
    const std::string path =
        g_dir + "/bench_" + std::to_string(g_file_seq.fetch_add(1)) + ".uscope";
    reset_peak_rss();
    const uint64_t p0 = process_cpu_ns(), m0 = thread_cpu_ns();
    const uint64_t t0 = now_ns();
    uscope_writer_t *w = nullptr;
    CHECK_OK(uscope_writer_open(&w, path.c_str(), schema, props, 2, &opts));
    TraceSink sink{w};
    const uint64_t t1 = now_ns(), m1 = thread_cpu_ns();
    int st = 0;
    for (uint64_t c = 0; c < g_cycles; ++c) {
      if (model_iters) model.step(model_iters);
      st |= run_cycle(sink, ids, c);
    }
    const uint64_t t2 = now_ns(), m2 = thread_cpu_ns();
    uscope_writer_stats_t s;
    s.struct_size = sizeof s;
    CHECK_OK(uscope_writer_stats(w, &s));
    if (st != 0) die("a per-cycle call", s.sticky_status, w);
    const uscope_status_t fs = uscope_writer_finish(w);
    uscope_writer_stats_t fin;
    fin.struct_size = sizeof fin;
    CHECK_OK(uscope_writer_stats(w, &fin));
    const uscope_status_t cs = fs != USCOPE_OK ? fs : uscope_writer_close(w);
    const uint64_t t3 = now_ns(), m3 = thread_cpu_ns(), p3 = process_cpu_ns();
    if (cs != USCOPE_OK) die("uscope_writer_close", cs, nullptr);

    state.PauseTiming();
    rss = std::max(rss, peak_rss_mb());
    loop_ns += static_cast<double>(t2 - t1);
    loop_cpu_ns += static_cast<double>(m2 - m1);
    // Everything but the simulation thread: the encoder thread.
    encoder_cpu_ns += static_cast<double>((p3 - p0) - (m3 - m0));
    close_ns += static_cast<double>(t3 - t2);
    wall_ns += static_cast<double>(t3 - t0);
    stall_ns += static_cast<double>(s.stall_ns);
    stalls += static_cast<double>(s.stalls);
    waits += static_cast<double>(fin.compress_waits);
    workers = fin.compress_threads;
    items += static_cast<double>(s.ops + s.events);
    cycles += static_cast<double>(s.cycles);
    ff = read_figures(path);
    std::remove(path.c_str());
    state.ResumeTiming();
  }
  uscope_schema_free(schema);
  benchmark::DoNotOptimize(model.state());

  const double iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["ns_per_item_sim"] = Counter((loop_ns - stall_ns) / items);
  state.counters["ns_per_item_raw"] = Counter(loop_ns / items);
  state.counters["cpu_ns_per_item"] = Counter(loop_cpu_ns / items);
  state.counters["encoder_ns_per_cycle"] = Counter(encoder_cpu_ns / cycles);
  if (v.model) {
    const double model_ns = model_ns_per_cycle(v.model);
    state.counters["model_ns_per_cycle"] = Counter(model_ns);
    state.counters["tracer_ns_per_item"] = Counter((loop_ns - model_ns * cycles) / items);
    state.counters["tracer_ns_per_item_sim"] =
        Counter((loop_ns - stall_ns - model_ns * cycles) / items);
  }
  state.counters["loop_ms"] = Counter(loop_ns / iters / 1e6);
  state.counters["close_ms"] = Counter(close_ns / iters / 1e6);
  state.counters["wall_ms"] = Counter(wall_ns / iters / 1e6);
  state.counters["stalls"] = Counter(stalls / iters);
  state.counters["stall_ms"] = Counter(stall_ns / iters / 1e6);
  // End to end: items over open..close (the figure issue 16 §1 holds
  // against the reference writer), the workers used and their back-pressure.
  state.counters["items_per_s"] = Counter(items / (wall_ns / 1e9));
  state.counters["compress_workers"] = Counter(workers);
  state.counters["compress_waits"] = Counter(waits / iters);
  const double file_bytes = static_cast<double>(ff.file_bytes);
  state.counters["bytes_per_cycle"] = Counter(file_bytes / (cycles / iters));
  state.counters["file_MB"] = Counter(file_bytes / 1e6);
  state.counters["raw_MB"] = Counter(static_cast<double>(ff.raw) / 1e6);
  state.counters["compressed_MB"] = Counter(static_cast<double>(ff.compressed) / 1e6);
  state.counters["ckpt_MB"] = Counter(static_cast<double>(ff.checkpoint) / 1e6);
  state.counters["ratio"] =
      Counter(static_cast<double>(ff.raw) / static_cast<double>(ff.compressed));
  state.counters["segments"] = Counter(static_cast<double>(ff.segments));
  state.counters["peak_rss_MB"] = Counter(rss);
  state.counters["items"] = Counter(items / iters);
}

// The per-call cost with the encoder keeping up: one writer, its queue warmed
// by a first lap, then g_cycles cycles in bursts of kBurstCycles, each started
// once the encoder has drained the previous one (uscope_writer_flush, then
// stats.frames caught up), so
// the simulation thread never waits. Only the bursts are timed; the encoder
// still runs concurrently on the other core, as it would in a simulation.
void BM_Writer_HotPath(benchmark::State &state) {
  constexpr uint64_t kBurstCycles = 2000;   // ~700 KB of records: far below the queue
  constexpr uint64_t kWarmCycles = 100000;  // > one lap of the default (8 MiB) queue
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.checkpoint_interval_ps = kCheckpointPs;
  double burst_ns = 0, burst_cpu_ns = 0, items = 0, stalls = 0;
  for (auto _ : state) {
    const std::string path =
        g_dir + "/bench_" + std::to_string(g_file_seq.fetch_add(1)) + ".uscope";
    uscope_writer_t *w = nullptr;
    CHECK_OK(uscope_writer_open(&w, path.c_str(), schema, nullptr, 0, &opts));
    TraceSink sink{w};
    uscope_writer_stats_t s;
    s.struct_size = sizeof s;
    auto drain = [&](uint64_t cycles) {
      CHECK_OK(uscope_writer_flush(w));  // hand over the last, unbatched cycles
      for (;;) {
        CHECK_OK(uscope_writer_stats(w, &s));
        if (s.frames >= cycles) return;
        usleep(50);
      }
    };
    int st = 0;
    uint64_t c = 0;
    for (; c < kWarmCycles; ++c) st |= run_cycle(sink, ids, c);
    drain(c);
    CHECK_OK(uscope_writer_stats(w, &s));
    const uint64_t items0 = s.ops + s.events, stalls0 = s.stalls;
    for (uint64_t done = 0; done < g_cycles; done += kBurstCycles) {
      const uint64_t t0 = now_ns(), m0 = thread_cpu_ns();
      for (const uint64_t stop = c + kBurstCycles; c < stop; ++c) st |= run_cycle(sink, ids, c);
      const uint64_t t1 = now_ns(), m1 = thread_cpu_ns();
      burst_ns += static_cast<double>(t1 - t0);
      burst_cpu_ns += static_cast<double>(m1 - m0);
      drain(c);
    }
    CHECK_OK(uscope_writer_stats(w, &s));
    if (st != 0) die("a per-cycle call", s.sticky_status, w);
    items += static_cast<double>(s.ops + s.events - items0);
    stalls += static_cast<double>(s.stalls - stalls0);
    CHECK_OK(uscope_writer_close(w));
    std::remove(path.c_str());
  }
  uscope_schema_free(schema);
  using benchmark::Counter;
  state.counters["ns_per_item_sim"] = Counter(burst_ns / items);
  state.counters["cpu_ns_per_item"] = Counter(burst_cpu_ns / items);
  state.counters["stalls"] = Counter(stalls / static_cast<double>(state.iterations()));
  state.counters["items"] = Counter(items / static_cast<double>(state.iterations()));
}

// An open writer while the simulation records nothing (a trace window not
// reached yet, a paused model): the process's CPU time and context switches
// while its own thread sleeps, per second. Before its consumer thread parked
// (io/background_writer.hpp), it woke every millisecond: 22-29 ms of CPU and
// ~900 switches per second.
void BM_Writer_Idle(benchmark::State &state) {
  constexpr auto kIdle = std::chrono::milliseconds(1000);
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  double cpu_ms = 0, switches = 0, seconds = 0;
  for (auto _ : state) {
    const std::string path =
        g_dir + "/bench_" + std::to_string(g_file_seq.fetch_add(1)) + ".uscope";
    uscope_writer_t *w = nullptr;
    CHECK_OK(uscope_writer_open(&w, path.c_str(), schema, nullptr, 0, &opts));
    rusage r0{}, r1{};
    getrusage(RUSAGE_SELF, &r0);
    std::this_thread::sleep_for(kIdle);
    getrusage(RUSAGE_SELF, &r1);
    auto ms = [](const rusage &r) {
      return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
    };
    cpu_ms += ms(r1) - ms(r0);
    switches += static_cast<double>((r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw));
    seconds += std::chrono::duration<double>(kIdle).count();
    CHECK_OK(uscope_writer_close(w));
    std::remove(path.c_str());
  }
  uscope_schema_free(schema);
  state.counters["cpu_ms_per_s"] = benchmark::Counter(cpu_ms / seconds);
  state.counters["switches_per_s"] = benchmark::Counter(switches / seconds);
}

template <bool kOutOfLine>
void BM_Baseline(benchmark::State &state) {
  Ids ids{0, 1, 0};
  double loop_ns = 0, loop_cpu_ns = 0, items = 0, rss = 0;
  for (auto _ : state) {
    state.PauseTiming();
    reset_peak_rss();
    auto owned = std::make_unique<PlainStores>(ids, 8u << 20);  // the default queue size
    PlainStores &plain = *owned;
    state.ResumeTiming();
    const uint64_t t0 = now_ns(), m0 = thread_cpu_ns();
    int st = 0;
    if (kOutOfLine) {
      PlainStoresCall sink{plain};
      for (uint64_t c = 0; c < g_cycles; ++c) st |= run_cycle(sink, ids, c);
    } else {
      for (uint64_t c = 0; c < g_cycles; ++c) st |= run_cycle(plain, ids, c);
    }
    const uint64_t t1 = now_ns(), m1 = thread_cpu_ns();
    if (st != 0) {
      std::fprintf(stderr, "uscope_bench: baseline failed\n");
      std::exit(1);
    }
    state.PauseTiming();
    loop_ns += static_cast<double>(t1 - t0);
    loop_cpu_ns += static_cast<double>(m1 - m0);
    items += static_cast<double>(plain.items());
    rss = std::max(rss, peak_rss_mb());
    state.ResumeTiming();
  }
  using benchmark::Counter;
  const double iters = static_cast<double>(state.iterations());
  state.counters["ns_per_item_sim"] = Counter(loop_ns / items);
  state.counters["ns_per_item_raw"] = Counter(loop_ns / items);
  state.counters["cpu_ns_per_item"] = Counter(loop_cpu_ns / items);
  state.counters["loop_ms"] = Counter(loop_ns / iters / 1e6);
  state.counters["peak_rss_MB"] = Counter(rss);
  state.counters["items"] = Counter(items / iters);
}

void BM_ModelOnly(benchmark::State &state) {
  const int mult = static_cast<int>(state.range(0)) / 200;
  const uint32_t iters = g_model_iters[mult];
  Model model;
  double loop_ns = 0, cycles = 0;
  for (auto _ : state) {
    const uint64_t t0 = now_ns();
    for (uint64_t c = 0; c < g_cycles; ++c) model.step(iters);
    loop_ns += static_cast<double>(now_ns() - t0);
    cycles += static_cast<double>(g_cycles);
  }
  benchmark::DoNotOptimize(model.state());
  g_model_runs[mult].push_back(loop_ns / cycles);
  state.counters["model_ns_per_cycle"] = benchmark::Counter(loop_ns / cycles);
  state.counters["model_iters"] = benchmark::Counter(iters);
}

// Each run is a whole 1M-cycle file: one iteration, a few repetitions (the
// console shows mean/median/stddev; --benchmark_format=json has every run).
void OneFile(benchmark::internal::Benchmark *b) {
  b->Iterations(1)->Repetitions(5)->UseRealTime()->Unit(benchmark::kMillisecond);
  b->DisplayAggregatesOnly(true);
}

BENCHMARK_TEMPLATE(BM_Baseline, false)->Name("BM_Baseline_PlainStores")->Apply(OneFile);
BENCHMARK_TEMPLATE(BM_Baseline, true)->Name("BM_Baseline_PlainStoresCall")->Apply(OneFile);
BENCHMARK(BM_Writer_HotPath)->Name("BM_Writer_LZ4_HotPath")->Apply(OneFile);
BENCHMARK(BM_Writer_Idle)->Iterations(1)->Repetitions(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Writer, LZ4, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 0})
    ->Name("BM_Writer_LZ4")
    ->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, None, Variant{USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V02, 0})
    ->Name("BM_Writer_None")
    ->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, Zstd, Variant{USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02, 0})
    ->Name("BM_Writer_Zstd")
    ->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, Zstd1, Variant{USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02, 0, 1})
    ->Name("BM_Writer_Zstd_Level1")
    ->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, LZ4_V01, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V01, 0})
    ->Name("BM_Writer_LZ4_FramesV01")
    ->Apply(OneFile);
// Issue 16 §2: the distribution of the simulation thread's cost over 30
// whole files (a slow mode shows as a second cluster: its p99 far above the
// p50). Percentiles of each counter across the repetitions.
double percentile(const std::vector<double> &v, double q) {
  std::vector<double> s(v);
  std::sort(s.begin(), s.end());
  if (s.empty()) return 0;
  const size_t i = static_cast<size_t>(q * static_cast<double>(s.size() - 1) + 0.5);
  return s[std::min(i, s.size() - 1)];
}
double p50(const std::vector<double> &v) { return percentile(v, 0.50); }
double p99(const std::vector<double> &v) { return percentile(v, 0.99); }
double pmax(const std::vector<double> &v) { return percentile(v, 1.0); }
void ThirtyFiles(benchmark::internal::Benchmark *b) {
  b->Iterations(1)->Repetitions(30)->UseRealTime()->Unit(benchmark::kMillisecond);
  b->ComputeStatistics("p50", p50)->ComputeStatistics("p99", p99)->ComputeStatistics("max", pmax);
  b->DisplayAggregatesOnly(true);
}
BENCHMARK_CAPTURE(BM_Writer, LZ4_30, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 0})
    ->Name("BM_Writer_LZ4_Distribution")
    ->Apply(ThirtyFiles);
BENCHMARK(BM_Writer_HotPath)->Name("BM_Writer_LZ4_HotPath_Distribution")->Apply(ThirtyFiles);

// Issue 16 §1's scaling curve: segments compressed inline (0) or on 1-4
// workers, everything else as BM_Writer_LZ4.
void BM_Writer_LZ4_Workers(benchmark::State &state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  BM_Writer(state, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 0, 0, n ? n : USCOPE_COMPRESS_THREADS_INLINE});
}
BENCHMARK(BM_Writer_LZ4_Workers)->DenseRange(0, 4)->Apply(OneFile);
// Model work: 200 ns/cycle as asked for, and 1 us/cycle, which is still a
// fast model for a BOOM-class core but slower than the encoder per cycle.
BENCHMARK(BM_ModelOnly)->Arg(200)->Arg(1000)->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, LZ4_Model, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 1})
    ->Name("BM_Writer_LZ4_Model200ns")
    ->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer, LZ4_Model1us, Variant{USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, 5})
    ->Name("BM_Writer_LZ4_Model1us")
    ->Apply(OneFile);

// Several producers (uscope_writer_add_producer): N threads each record the
// BOOM-like workload for g_cycles cycles into one trace, merged by time on
// the encoder thread. The baseline, in the same run, is the file those
// producers are equivalent to: one writer recording, in each cycle, the N
// producers' items one after the other (the same file, byte for byte).
// items_per_s is end to end (open .. close).
struct ItemsOnly {  // a cycle's items only: the baseline's nested copies
  TraceSink inner;
  int begin(uint64_t) { return 0; }
  int set(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) { return inner.set(sid, slot, f, v); }
  int clear(uint16_t sid, uint16_t slot) { return inner.clear(sid, slot); }
  int add(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) { return inner.add(sid, slot, f, v); }
  int event(uint16_t id, const void *p, uint32_t n) { return inner.event(id, p, n); }
  int end() { return 0; }
};

void BM_Writer_Producers(benchmark::State &state, bool producers) {
  const auto n = static_cast<unsigned>(state.range(0));
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.checkpoint_interval_ps = kCheckpointPs;
  double wall_ns = 0, items = 0, stalls = 0, rss = 0;
  for (auto _ : state) {
    const std::string path = g_dir + "/bench_" + std::to_string(g_file_seq.fetch_add(1)) + ".uscope";
    reset_peak_rss();
    const uint64_t t0 = now_ns();
    uscope_writer_t *w = nullptr;
    CHECK_OK(uscope_writer_open(&w, path.c_str(), schema, nullptr, 0, &opts));
    std::atomic<int> st{0};
    if (producers) {
      std::vector<uscope_writer_t *> prod(n);
      for (auto &p : prod) CHECK_OK(uscope_writer_add_producer(w, &p));
      std::vector<std::thread> threads;
      for (unsigned i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
          TraceSink sink{prod[i]};
          int bad = 0;
          for (uint64_t c = 0; c < g_cycles; ++c) bad |= run_cycle(sink, ids, c);
          bad |= uscope_writer_close(prod[i]);
          st |= bad;
        });
      for (auto &t : threads) t.join();
    } else {
      TraceSink sink{w};
      ItemsOnly copy{sink};
      int bad = 0;
      for (uint64_t c = 0; c < g_cycles; ++c) {
        bad |= sink.begin(c * kPeriodPs);
        for (unsigned i = 0; i < n; ++i) bad |= run_cycle(copy, ids, c);
        bad |= sink.end();
      }
      st |= bad;
    }
    uscope_writer_stats_t fin;
    fin.struct_size = sizeof fin;
    const uscope_status_t fs = uscope_writer_finish(w);
    CHECK_OK(uscope_writer_stats(w, &fin));
    const uscope_status_t cs = fs != USCOPE_OK ? fs : uscope_writer_close(w);
    const uint64_t t1 = now_ns();
    if (st.load() != 0 || cs != USCOPE_OK) die("the producers' run", cs, nullptr);
    state.PauseTiming();
    rss = std::max(rss, peak_rss_mb());
    wall_ns += static_cast<double>(t1 - t0);
    items += static_cast<double>(fin.ops + fin.events);
    stalls += static_cast<double>(fin.stalls);
    std::remove(path.c_str());
    state.ResumeTiming();
  }
  uscope_schema_free(schema);
  const double iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(items / (wall_ns / 1e9));
  state.counters["wall_ms"] = Counter(wall_ns / iters / 1e6);
  state.counters["items"] = Counter(items / iters);
  state.counters["stalls"] = Counter(stalls / iters);
  state.counters["peak_rss_MB"] = Counter(rss);
}
BENCHMARK_CAPTURE(BM_Writer_Producers, merged, true)->Arg(1)->Arg(2)->Arg(4)->Apply(OneFile);
BENCHMARK_CAPTURE(BM_Writer_Producers, one_thread, false)->Arg(1)->Arg(2)->Arg(4)->Apply(OneFile);

}  // namespace

int main(int argc, char **argv) {
  if (const char *e = std::getenv("USCOPE_BENCH_CYCLES")) g_cycles = std::strtoull(e, nullptr, 10);
  if (g_cycles == 0) g_cycles = 1;
  const char *base = std::getenv("USCOPE_BENCH_DIR");
  if (!base) base = std::getenv("TMPDIR");
  if (!base) base = "/tmp";
  std::string tmpl = std::string(base) + "/uscope_bench.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("uscope_bench: mkdtemp");
    return 1;
  }
  g_dir = buf.data();
  calibrate_model(1);
  calibrate_model(kMaxModelMult);

  benchmark::AddCustomContext("cycles", std::to_string(g_cycles));
  benchmark::AddCustomContext("items_per_cycle", std::to_string(kItemsPerCycle));
  for (int mult : {1, kMaxModelMult}) {
    const std::string key = "model_" + std::to_string(200 * mult) + "ns";
    benchmark::AddCustomContext(key + "_iters", std::to_string(g_model_iters[mult]));
    benchmark::AddCustomContext(key + "_calibrated_ns",
                                std::to_string(g_model_calibrated_ns[mult]));
  }
  benchmark::AddCustomContext("libuscope", uscope_version_string());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rmdir(g_dir.c_str());
  return 0;
}
