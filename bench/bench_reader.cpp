// Reader throughput and latency on the BOOM-like trace of boom_workload.hpp
// (1,000,000 cycles of 1000 ps, a checkpoint every 10,000 cycles, 13 ops + 10
// events per cycle, LZ4, v0.2 frames), written once at start-up with our
// writer, then read back with the C++ reader core, uscope::TraceReader
// (src/reader/; this program links the static library and measures the core
// itself, not a C API over it). The same workload is also written with zstd
// (default level), so that the query latencies of both codecs are reported
// side by side in one run, on one machine state.
//
// Targets of issue 5 on this file shape: replay >= 150 M items/s on one core,
// state_at median <= 1.5 ms, events_in_range over 1,000 cycles median
// <= 1 ms; and a scan must stream (resident memory bounded, not the file).
//
// Benchmarks and their counters (wall-clock figures, and the same from the
// thread's CPU time, which a busy machine does not inflate):
//   BM_Replay            every segment replayed with TraceReader::replay:
//                        checkpoint loaded, every op validated and applied,
//                        every event visited (its payload read).
//                        items_per_s, items_per_s_cpu, ns_per_item,
//                        x_minimal (time over BM_Baseline_MinimalDecode's
//                        of the same run);
//   BM_CapiReplay/<cap>  the same replay through the C ABI's batch cursor
//                        (uscope_reader_replay, uscope_replay_fill into an
//                        array of <cap> items, every item read: value, or
//                        payload[0] + size): the same counters, and x_core
//                        (time over BM_Replay's of the same run; target of
//                        issue 16: <= 1.1, and >= 150 M items/s);
//   BM_CapiSegmentItems  every segment through uscope_reader_segment_items
//                        and uscope_item_iter_next (an item per call): the
//                        same counters and x_core;
//   BM_StateAt           state_at at 1,000 uniformly random times (fixed
//                        seed): median_ms, p90_ms, max_ms, mean_ms,
//                        cpu_median_ms, cpu_max_ms; each answer's
//                        `committed` counter is checked; x_segment_lz4 =
//                        median over the median time to LZ4-decompress one
//                        whole segment (same run);
//   BM_StateAt_ZSTD      the same queries on the zstd trace; x_segment_zstd =
//                        median over BM_Baseline_ZSTD's seg_median_ms. A
//                        query needs only the segment's deltas up to its
//                        time: x_segment_zstd below 1 shows that the zstd
//                        prefix decompression stops early;
//   BM_EventsInRange     events_in_range over 1,000 random windows of 1,000
//                        cycles (t0 on a cycle, t1 = t0 + 1000 cycles - 1 ps;
//                        each must return 10,000 events): the same counters;
//   BM_EventsInRange_ZSTD  the same windows on the zstd trace;
//   BM_CapiEventsInRange the same windows as BM_EventsInRange through the C
//                        ABI (uscope_reader_events_in_range, an event per
//                        uscope_event_iter_next, the iterator freed): the
//                        same counters, and x_core = median over
//                        BM_EventsInRange's median of the same run (issue 16:
//                        <= 1.1);
//   BM_ScanMemory        a fresh reader, opened and then replaying every
//                        segment: peak_rss_delta_MB (VmHWM, reset before,
//                        over VmRSS before opening), max_file_rss_delta_MB
//                        (RssFile of /proc/self/status after each segment:
//                        pages of the mapped file resident), heap_peak_MB
//                        (peak live bytes of operator new, replaced in this
//                        program, over those before opening), file_MB. The
//                        reader maps the whole file: what is resident must
//                        not grow with the file (about one segment's
//                        compressed bytes mapped, its raw deltas on the heap).
// Same-run baselines (what a reader fundamentally has to do):
//   BM_Baseline_LZ4            LZ4_decompress_safe of every segment's delta
//                              blob into one reused buffer, from our own map
//                              of the file: GB/s of raw deltas, items/s,
//                              seg_median_ms (one segment);
//   BM_Baseline_MinimalDecode  the same plus a minimal pass over the v0.2
//                              items (frame headers, tags, op values, event
//                              payload bytes summed; no validation, no state).
//   BM_Baseline_ZSTD           ZSTD_decompressDCtx of every segment's delta
//                              blob of the zstd trace (one reused context and
//                              buffer): the same counters as BM_Baseline_LZ4.
//
// Environment: USCOPE_BENCH_CYCLES (default 1000000; at least 1000),
// USCOPE_BENCH_DIR (default $TMPDIR or /tmp; a private directory is made
// inside and removed at exit), USCOPE_BENCH_TRACE (a path: the trace is
// kept there, and read from there instead of written when it exists, for
// profiling runs; nothing checks that it matches USCOPE_BENCH_CYCLES; the
// zstd trace is kept likewise at that path + ".zstd").
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <lz4.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "boom_workload.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/uscope.h"

namespace {

using namespace uscope_bench;

constexpr int kQueries = 1000;
constexpr uint64_t kWindowCycles = 1000;

uint64_t g_cycles = 1'000'000;
uint64_t g_items = 0;  // ops + events in the file, from the writer's stats
// The `committed` counter's storage id (ids are schema positions; a kept
// trace was written by the same build_schema).
uint16_t g_committed = 1;
std::string g_dir, g_path, g_path_zstd;

// Which of the two traces (same workload) a benchmark reads.
enum TraceCodec { kLz4Trace, kZstdTrace };
const std::string &trace_path(TraceCodec c) { return c == kZstdTrace ? g_path_zstd : g_path; }

// Figures of the baselines, for the ratios of the later benchmarks.
double g_minimal_ns = 0;     // BM_Baseline_MinimalDecode, whole file
double g_seg_lz4_ms = 0;     // median LZ4 time of one segment
double g_seg_zstd_ms = 0;    // median zstd time of one segment (zstd trace)

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// ── writing the trace ──

void write_trace(const std::string &path, uint32_t compression) {
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.compression = compression;  // level 0: the method's default
  opts.frame_format = USCOPE_FRAMES_V02;
  opts.checkpoint_interval_ps = kCheckpointPs;
  const uscope_dut_property_t props[] = {{"dut_name", "boom_like"}, {"cpu.isa", "RV64GC"}};
  uscope_writer_t *w = nullptr;
  CHECK_OK(uscope_writer_open(&w, path.c_str(), schema, props, 2, &opts));
  TraceSink sink{w};
  int st = 0;
  for (uint64_t c = 0; c < g_cycles; ++c) st |= run_cycle(sink, ids, c);
  uscope_writer_stats_t s;
  s.struct_size = sizeof s;
  CHECK_OK(uscope_writer_stats(w, &s));
  if (st != 0) die("a per-cycle call", s.sticky_status, w);
  g_items = s.ops + s.events;
  g_committed = ids.committed;
  CHECK_OK(uscope_writer_close(w));
  uscope_schema_free(schema);
}

// ── memory figures ──

// Live and peak bytes of the C++ heap (operator new, replaced below): the
// reader's own allocations, which RSS figures cannot separate from heap that
// earlier benchmarks freed and malloc kept.
std::atomic<int64_t> g_heap_live{0}, g_heap_peak{0};

void note_alloc(int64_t n) {
  const int64_t live = g_heap_live.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_heap_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_heap_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

struct Mem {
  double rss = 0, anon = 0, file = 0, hwm = 0;  // MB
};
Mem read_mem() {
  Mem m;
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    double kb = 0;
    if (std::sscanf(line, "VmRSS: %lf", &kb) == 1) m.rss = kb / 1024;
    else if (std::sscanf(line, "RssAnon: %lf", &kb) == 1) m.anon = kb / 1024;
    else if (std::sscanf(line, "RssFile: %lf", &kb) == 1) m.file = kb / 1024;
    else if (std::sscanf(line, "VmHWM: %lf", &kb) == 1) m.hwm = kb / 1024;
  }
  std::fclose(f);
  return m;
}

// ── our own view of the file, for the baselines ──

struct Blob {
  const uint8_t *data;  // after the 4-byte size prefix (COMPAT 2)
  uint32_t size, raw;
};
class FileMap {
 public:
  explicit FileMap(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
      std::perror(path.c_str());
      std::exit(1);
    }
    size_ = static_cast<size_t>(sb.st_size);
    void *p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) {
      std::perror("mmap");
      std::exit(1);
    }
    data_ = static_cast<const uint8_t *>(p);
  }
  ~FileMap() { munmap(const_cast<uint8_t *>(data_), size_); }
  const uint8_t *data() const { return data_; }

 private:
  const uint8_t *data_;
  size_t size_;
};

std::vector<Blob> blobs(const uscope::TraceReader &r, const FileMap &m) {
  std::vector<Blob> out;
  for (const auto &s : r.segments()) {
    const uint8_t *b =
        m.data() + s.offset + uscope::wire::kSegmentHeaderSize + s.header.checkpoint_size;
    out.push_back({b + uscope::wire::kBlobSizePrefix,
                   s.header.deltas_compressed_size - uint32_t{uscope::wire::kBlobSizePrefix},
                   s.header.deltas_raw_size});
  }
  return out;
}

// A minimal pass over v0.2 items: what any consumer has to touch.
uint64_t minimal_decode(const uint8_t *p, size_t n, uint64_t &items) {
  uint64_t sum = 0, t = 0;
  size_t pos = 0;
  while (pos < n) {
    uint64_t dt = 0;
    pos += uscope::wire::leb128_decode(p + pos, n - pos, &dt);
    t += dt;
    const uint16_t count = uscope::wire::get_u16(p + pos);
    pos += 2;
    for (uint32_t i = 0; i < count; ++i) {
      const uint8_t tag = p[pos];
      if (tag == uscope::wire::TAG_WIDE_OP) {
        sum += uscope::wire::get_u64(p + pos + 8) ^ p[pos + 1];
        pos += uscope::wire::kWideOpSize;
      } else if (tag == uscope::wire::TAG_COMPACT_OP) {
        sum += uscope::wire::get_u16(p + pos + 7) ^ p[pos + 1];
        pos += uscope::wire::kCompactOpV2Size;
      } else {
        const uint32_t size = uscope::wire::get_u32(p + pos + 4);
        sum += p[pos + 8] + size;
        pos += uscope::wire::kEventItemHeaderSize + size;
      }
    }
    items += count;
  }
  return sum + t;
}

void check_items(uint64_t items, const char *who) {
  if (items != g_items) {
    std::fprintf(stderr, "uscope_bench_reader: %s saw %llu items, the writer wrote %llu\n", who,
                 static_cast<unsigned long long>(items), static_cast<unsigned long long>(g_items));
    std::exit(1);
  }
}

// ── baselines ──

template <bool kDecode>
void BM_Baseline(benchmark::State &state) {
  uscope::TraceReader r(g_path);
  FileMap m(g_path);
  const std::vector<Blob> bl = blobs(r, m);
  uint32_t max_raw = 0;
  uint64_t raw_total = 0;
  for (const auto &b : bl) {
    max_raw = std::max(max_raw, b.raw);
    raw_total += b.raw;
  }
  std::vector<char> buf(max_raw);
  std::vector<double> seg_ms;
  double wall = 0, cpu = 0, items = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    uint64_t n = 0;
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (const auto &b : bl) {
      const uint64_t s0 = now_ns();
      const int got = LZ4_decompress_safe(reinterpret_cast<const char *>(b.data), buf.data(),
                                          static_cast<int>(b.size), static_cast<int>(b.raw));
      if (got != static_cast<int>(b.raw)) {
        std::fprintf(stderr, "uscope_bench_reader: LZ4 baseline failed\n");
        std::exit(1);
      }
      if (kDecode) sum += minimal_decode(reinterpret_cast<const uint8_t *>(buf.data()), b.raw, n);
      else benchmark::DoNotOptimize(buf.data());
      seg_ms.push_back(static_cast<double>(now_ns() - s0) / 1e6);
    }
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
    if (kDecode) check_items(n, "the minimal decode");
    items += static_cast<double>(g_items);
  }
  benchmark::DoNotOptimize(sum);
  const double iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(items / (wall / 1e9));
  state.counters["items_per_s_cpu"] = Counter(items / (cpu / 1e9));
  state.counters["ns_per_item"] = Counter(wall / items);
  state.counters["raw_GB_per_s"] = Counter(static_cast<double>(raw_total) * iters / wall);
  state.counters["seg_median_ms"] = Counter(quantile(seg_ms, 0.5));
  state.counters["segments"] = Counter(static_cast<double>(bl.size()));
  if (kDecode) {
    if (g_minimal_ns == 0 || wall / iters < g_minimal_ns) g_minimal_ns = wall / iters;
  } else {
    const double med = quantile(seg_ms, 0.5);
    if (g_seg_lz4_ms == 0 || med < g_seg_lz4_ms) g_seg_lz4_ms = med;
  }
}

// Whole-segment zstd decompression of the zstd trace: what a query that
// decoded its whole segment would pay before any decoding of items.
void BM_Baseline_ZSTD(benchmark::State &state) {
  uscope::TraceReader r(g_path_zstd);
  FileMap m(g_path_zstd);
  const std::vector<Blob> bl = blobs(r, m);
  uint32_t max_raw = 0;
  uint64_t raw_total = 0;
  for (const auto &b : bl) {
    max_raw = std::max(max_raw, b.raw);
    raw_total += b.raw;
  }
  std::vector<char> buf(max_raw);
  ZSTD_DCtx *dctx = ZSTD_createDCtx();
  std::vector<double> seg_ms;
  double wall = 0, cpu = 0;
  for (auto _ : state) {
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (const auto &b : bl) {
      const uint64_t s0 = now_ns();
      const size_t got = ZSTD_decompressDCtx(dctx, buf.data(), b.raw, b.data, b.size);
      if (ZSTD_isError(got) || got != b.raw) {
        std::fprintf(stderr, "uscope_bench_reader: zstd baseline failed\n");
        std::exit(1);
      }
      benchmark::DoNotOptimize(buf.data());
      seg_ms.push_back(static_cast<double>(now_ns() - s0) / 1e6);
    }
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
  }
  ZSTD_freeDCtx(dctx);
  const double iters = static_cast<double>(state.iterations());
  const double items = static_cast<double>(g_items) * iters;
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(items / (wall / 1e9));
  state.counters["items_per_s_cpu"] = Counter(items / (cpu / 1e9));
  state.counters["ns_per_item"] = Counter(wall / items);
  state.counters["raw_GB_per_s"] = Counter(static_cast<double>(raw_total) * iters / wall);
  const double med = quantile(seg_ms, 0.5);
  state.counters["seg_median_ms"] = Counter(med);
  state.counters["segments"] = Counter(static_cast<double>(bl.size()));
  if (g_seg_zstd_ms == 0 || med < g_seg_zstd_ms) g_seg_zstd_ms = med;
}

// ── the reader ──

struct CountVisitor {
  uint64_t frames = 0, ops = 0, events = 0, sum = 0;
  void frame(uint64_t) { ++frames; }
  void op(uint64_t, const uscope::DeltaOp &o) {
    ++ops;
    sum += o.value;
  }
  void event(uint64_t, uint16_t, const uint8_t *p, uint32_t n) {
    ++events;
    sum += p[0] + n;
  }
};

double g_replay_ms = 0;  // BM_Replay's time per pass, for BM_Check's x_replay
double g_events_median_ms = 0;  // BM_EventsInRange's (LZ4), for BM_CapiEventsInRange's x_core

void BM_Replay(benchmark::State &state) {
  uscope::TraceReader r(g_path);
  std::vector<uscope::StorageState> st = r.initial_state();
  double wall = 0, cpu = 0, items = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    CountVisitor v;
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (size_t i = 0; i < r.segments().size(); ++i) r.replay(i, st, v);
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
    check_items(v.ops + v.events, "replay");
    items += static_cast<double>(v.ops + v.events);
    sum += v.sum;
  }
  benchmark::DoNotOptimize(sum);
  // The final state: every op applied, so the counter holds 4 per cycle.
  if (st[g_committed].get(0, 0) != kFetchWidth * g_cycles) {
    std::fprintf(stderr, "uscope_bench_reader: replay ends with committed=%llu\n",
                 static_cast<unsigned long long>(st[g_committed].get(0, 0)));
    std::exit(1);
  }
  const double iters = static_cast<double>(state.iterations());
  g_replay_ms = wall / iters / 1e6;
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(items / (wall / 1e9));
  state.counters["items_per_s_cpu"] = Counter(items / (cpu / 1e9));
  state.counters["ns_per_item"] = Counter(wall / items);
  if (g_minimal_ns > 0) state.counters["x_minimal"] = Counter(wall / iters / g_minimal_ns);
}

// The benchmark's trace through the C ABI (exits when it does not open).
uscope_reader_t *open_capi_reader() {
  uscope_reader_t *r = nullptr;
  if (uscope_reader_open(&r, g_path.c_str()) != USCOPE_OK) {
    std::fprintf(stderr, "uscope_bench_reader: %s\n", uscope_last_error());
    std::exit(1);
  }
  return r;
}

// The rate counters of a C ABI benchmark: items per second of wall and of
// CPU time, ns per item, and x_core (time over BM_Replay's, same run).
void report_capi_rate(benchmark::State &state, double items, double wall_ns, double cpu_ns) {
  const double iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(items / (wall_ns / 1e9));
  state.counters["items_per_s_cpu"] = Counter(items / (cpu_ns / 1e9));
  state.counters["ns_per_item"] = Counter(wall_ns / items);
  if (g_replay_ms > 0) state.counters["x_core"] = Counter(wall_ns / iters / 1e6 / g_replay_ms);
}

// The replay through the C ABI: a cursor over the whole file filling an
// array of state.range(0) items, each read as CountVisitor reads it.
void BM_CapiReplay(benchmark::State &state) {
  const uint32_t cap = static_cast<uint32_t>(state.range(0));
  uscope_reader_t *r = open_capi_reader();
  std::vector<uscope_item_t> buf(cap);
  double wall = 0, cpu = 0, items = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    uint64_t n_items = 0;
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    uscope_replay_t *c = nullptr;
    uscope_status_t st = uscope_reader_replay(r, &c, 0, UINT64_MAX);
    uint32_t n = 0;
    while (st == USCOPE_OK && (st = uscope_replay_fill(c, buf.data(), &n, cap)) == USCOPE_OK) {
      for (uint32_t k = 0; k < n; ++k) {
        const uscope_item_t &i = buf[k];
        sum += i.is_event ? i.payload[0] + i.payload_size : i.value;
      }
      n_items += n;
    }
    uscope_replay_free(c);
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
    if (st != USCOPE_DONE) {
      std::fprintf(stderr, "uscope_bench_reader: uscope_replay_fill: %s\n", uscope_last_error());
      std::exit(1);
    }
    check_items(n_items, "the C ABI replay");
    items += static_cast<double>(n_items);
  }
  benchmark::DoNotOptimize(sum);
  uscope_reader_close(r);
  report_capi_rate(state, items, wall, cpu);
}

// uscope_reader_segment_items over every segment, an item per call.
void BM_CapiSegmentItems(benchmark::State &state) {
  uscope_reader_t *r = open_capi_reader();
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  if (uscope_reader_info(r, &info) != USCOPE_OK) std::exit(1);
  double wall = 0, cpu = 0, items = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    uint64_t n_items = 0;
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (uint32_t s = 0; s < info.num_segments; ++s) {
      uscope_item_iter_t *it = nullptr;
      if (uscope_reader_segment_items(r, &it, s) != USCOPE_OK) {
        std::fprintf(stderr, "uscope_bench_reader: %s\n", uscope_last_error());
        std::exit(1);
      }
      uscope_item_t i;
      while (uscope_item_iter_next(it, &i) == USCOPE_OK) {
        sum += i.is_event ? i.payload[0] + i.payload_size : i.value;
        ++n_items;
      }
      uscope_item_iter_free(it);
    }
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
    check_items(n_items, "segment_items");
    items += static_cast<double>(n_items);
  }
  benchmark::DoNotOptimize(sum);
  uscope_reader_close(r);
  report_capi_rate(state, items, wall, cpu);
}

// `uscope check`'s walk (TraceReader::check: every item against the schema
// and its values, every timestamp against the clocks, each checkpoint
// against the replayed state, the TSUM recomputed) over the same trace as
// BM_Replay, in the same run: x_replay is its time over the replay's
// (target: at most 2, i.e. >= 50% of the replay's throughput, issue 18).
void BM_Check(benchmark::State &state) {
  double wall = 0, cpu = 0, peak = 0, heap = 0;
  for (auto _ : state) {
    reset_peak_rss();
    const Mem before = read_mem();
    const int64_t heap0 = g_heap_live.load();
    g_heap_peak.store(heap0);
    const uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
    uscope::TraceReader r(g_path);
    r.check({});
    wall += static_cast<double>(now_ns() - t0);
    cpu += static_cast<double>(thread_cpu_ns() - c0);
    if (!r.defects().entries().empty()) {
      std::fprintf(stderr, "uscope_bench_reader: check found defects in the benchmark's own trace\n");
      std::exit(1);
    }
    heap = std::max(heap, static_cast<double>(g_heap_peak.load() - heap0) / (1 << 20));
    peak = std::max(peak, read_mem().hwm - before.rss);
  }
  const double iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["items_per_s"] = Counter(static_cast<double>(g_items) * iters / (wall / 1e9));
  state.counters["items_per_s_cpu"] = Counter(static_cast<double>(g_items) * iters / (cpu / 1e9));
  struct stat sb;
  if (stat(g_path.c_str(), &sb) == 0)
    state.counters["MB_per_s"] = Counter(static_cast<double>(sb.st_size) * iters / 1e6 / (wall / 1e9));
  if (g_replay_ms > 0) state.counters["x_replay"] = Counter(wall / iters / 1e6 / g_replay_ms);
  state.counters["peak_rss_delta_MB"] = Counter(peak);
  state.counters["heap_peak_MB"] = Counter(heap);
}

// Per-query times, wall clock and thread CPU time (the latter is not inflated
// when another process preempts us on this busy machine).
struct Latencies {
  std::vector<double> wall_ms, cpu_ms;
  uint64_t t0 = 0, c0 = 0;
  void start() {
    c0 = thread_cpu_ns();
    t0 = now_ns();
  }
  void stop() {
    const uint64_t t1 = now_ns(), c1 = thread_cpu_ns();
    wall_ms.push_back(static_cast<double>(t1 - t0) / 1e6);
    cpu_ms.push_back(static_cast<double>(c1 - c0) / 1e6);
  }
};

void report_latency(benchmark::State &state, const Latencies &l, TraceCodec codec) {
  using benchmark::Counter;
  double total = 0;
  for (double v : l.wall_ms) total += v;
  const double med = quantile(l.wall_ms, 0.5);
  state.counters["median_ms"] = Counter(med);
  state.counters["p90_ms"] = Counter(quantile(l.wall_ms, 0.9));
  state.counters["max_ms"] = Counter(quantile(l.wall_ms, 1.0));
  state.counters["mean_ms"] = Counter(total / static_cast<double>(l.wall_ms.size()));
  state.counters["cpu_median_ms"] = Counter(quantile(l.cpu_ms, 0.5));
  state.counters["cpu_max_ms"] = Counter(quantile(l.cpu_ms, 1.0));
  if (codec == kLz4Trace && g_seg_lz4_ms > 0)
    state.counters["x_segment_lz4"] = Counter(med / g_seg_lz4_ms);
  if (codec == kZstdTrace && g_seg_zstd_ms > 0)
    state.counters["x_segment_zstd"] = Counter(med / g_seg_zstd_ms);
}

template <TraceCodec kCodec>
void BM_StateAt(benchmark::State &state) {
  uscope::TraceReader r(trace_path(kCodec));
  const uint64_t end = r.segments().empty() ? 0 : r.segments().back().header.time_end_ps;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> pick(0, end);
  Latencies lat;
  for (auto _ : state) {
    for (int q = 0; q < kQueries; ++q) {
      const uint64_t t = pick(rng);
      lat.start();
      const std::vector<uscope::StorageState> s = r.state_at(t);
      lat.stop();
      // Cycle c (at c * 1000 ps) adds 4: after every frame <= t, 4 * (t/1000 + 1).
      if (s[g_committed].get(0, 0) != kFetchWidth * (t / kPeriodPs + 1)) {
        std::fprintf(stderr, "uscope_bench_reader: state_at(%llu) has committed=%llu\n",
                     static_cast<unsigned long long>(t),
                     static_cast<unsigned long long>(s[g_committed].get(0, 0)));
        std::exit(1);
      }
    }
  }
  report_latency(state, lat, kCodec);
}

template <TraceCodec kCodec>
void BM_EventsInRange(benchmark::State &state) {
  uscope::TraceReader r(trace_path(kCodec));
  std::mt19937_64 rng(43);
  std::uniform_int_distribution<uint64_t> pick(0, g_cycles - kWindowCycles);
  Latencies lat;
  uint64_t sum = 0;
  for (auto _ : state) {
    for (int q = 0; q < kQueries; ++q) {
      const uint64_t t0 = pick(rng) * kPeriodPs, t1 = t0 + kWindowCycles * kPeriodPs - 1;
      lat.start();
      const auto &ev = r.events_in_range(t0, t1);
      lat.stop();
      if (ev.size() != kWindowCycles * 10) {
        std::fprintf(stderr, "uscope_bench_reader: events_in_range(%llu, %llu) gave %zu events\n",
                     static_cast<unsigned long long>(t0), static_cast<unsigned long long>(t1),
                     ev.size());
        std::exit(1);
      }
      sum += ev.back().payload[0];
    }
  }
  benchmark::DoNotOptimize(sum);
  report_latency(state, lat, kCodec);
  if (kCodec == kLz4Trace) g_events_median_ms = quantile(lat.wall_ms, 0.5);
}

// BM_EventsInRange's windows (same seed) through the C ABI.
void BM_CapiEventsInRange(benchmark::State &state) {
  uscope_reader_t *r = open_capi_reader();
  std::mt19937_64 rng(43);
  std::uniform_int_distribution<uint64_t> pick(0, g_cycles - kWindowCycles);
  Latencies lat;
  uint64_t sum = 0;
  for (auto _ : state) {
    for (int q = 0; q < kQueries; ++q) {
      const uint64_t t0 = pick(rng) * kPeriodPs, t1 = t0 + kWindowCycles * kPeriodPs - 1;
      size_t n = 0;
      lat.start();
      uscope_event_iter_t *it = nullptr;
      uscope_status_t st = uscope_reader_events_in_range(r, &it, t0, t1);
      uscope_event_t ev{};
      while (st == USCOPE_OK && (st = uscope_event_iter_next(it, &ev)) == USCOPE_OK) ++n;
      uscope_event_iter_free(it);
      lat.stop();
      if (st != USCOPE_DONE || n != kWindowCycles * 10) {
        std::fprintf(stderr, "uscope_bench_reader: C events_in_range(%llu, %llu) gave %zu events (%s)\n",
                     static_cast<unsigned long long>(t0), static_cast<unsigned long long>(t1), n,
                     uscope_last_error());
        std::exit(1);
      }
      sum += ev.time_ps;
    }
  }
  benchmark::DoNotOptimize(sum);
  uscope_reader_close(r);
  report_latency(state, lat, kLz4Trace);
  if (g_events_median_ms > 0)
    state.counters["x_core"] = benchmark::Counter(quantile(lat.wall_ms, 0.5) / g_events_median_ms);
}

void BM_ScanMemory(benchmark::State &state) {
  double peak = 0, heap = 0, file = 0, file_mb = 0;
  for (auto _ : state) {
    reset_peak_rss();
    const Mem before = read_mem();
    const int64_t heap0 = g_heap_live.load();
    g_heap_peak.store(heap0);
    uscope::TraceReader r(g_path);
    std::vector<uscope::StorageState> st = r.initial_state();
    CountVisitor v;
    for (size_t i = 0; i < r.segments().size(); ++i) {
      r.replay(i, st, v);
      file = std::max(file, read_mem().file - before.file);
    }
    check_items(v.ops + v.events, "the memory scan");
    heap = std::max(heap, static_cast<double>(g_heap_peak.load() - heap0) / (1 << 20));
    peak = std::max(peak, read_mem().hwm - before.rss);
    struct stat sb;
    if (stat(g_path.c_str(), &sb) == 0) file_mb = static_cast<double>(sb.st_size) / 1e6;
  }
  using benchmark::Counter;
  state.counters["peak_rss_delta_MB"] = Counter(peak);
  state.counters["heap_peak_MB"] = Counter(heap);
  state.counters["max_file_rss_delta_MB"] = Counter(file);
  state.counters["file_MB"] = Counter(file_mb);
}

void Runs(benchmark::internal::Benchmark *b) {
  b->Iterations(1)->Repetitions(3)->UseRealTime()->Unit(benchmark::kMillisecond);
  b->DisplayAggregatesOnly(true);
}

BENCHMARK_TEMPLATE(BM_Baseline, false)->Name("BM_Baseline_LZ4")->Apply(Runs);
BENCHMARK_TEMPLATE(BM_Baseline, true)->Name("BM_Baseline_MinimalDecode")->Apply(Runs);
BENCHMARK(BM_Baseline_ZSTD)->Apply(Runs);
BENCHMARK(BM_Replay)->Apply(Runs);
BENCHMARK(BM_CapiReplay)->Arg(256)->Arg(4096)->Arg(65536)->Apply(Runs);
BENCHMARK(BM_CapiSegmentItems)->Apply(Runs);
BENCHMARK(BM_Check)->Apply(Runs);
BENCHMARK_TEMPLATE(BM_StateAt, kLz4Trace)->Name("BM_StateAt")->Apply(Runs);
BENCHMARK_TEMPLATE(BM_StateAt, kZstdTrace)->Name("BM_StateAt_ZSTD")->Apply(Runs);
BENCHMARK_TEMPLATE(BM_EventsInRange, kLz4Trace)->Name("BM_EventsInRange")->Apply(Runs);
BENCHMARK(BM_CapiEventsInRange)->Apply(Runs);
BENCHMARK_TEMPLATE(BM_EventsInRange, kZstdTrace)->Name("BM_EventsInRange_ZSTD")->Apply(Runs);
BENCHMARK(BM_ScanMemory)->Iterations(1)->Repetitions(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

void *operator new(size_t n) {
  void *p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  note_alloc(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}
void *operator new[](size_t n) { return operator new(n); }
void operator delete(void *p) noexcept {
  if (!p) return;
  note_alloc(-static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
void operator delete[](void *p) noexcept { operator delete(p); }
void operator delete(void *p, size_t) noexcept { operator delete(p); }
void operator delete[](void *p, size_t) noexcept { operator delete(p); }

// Let the kernel write the file back now, not during the first benchmarks:
// a reader usually meets a trace whose pages are clean.
static void write_back(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    fsync(fd);
    ::close(fd);
  }
}

int main(int argc, char **argv) {
  if (const char *e = std::getenv("USCOPE_BENCH_CYCLES")) g_cycles = std::strtoull(e, nullptr, 10);
  g_cycles = std::max<uint64_t>(g_cycles, kWindowCycles);
  const char *base = std::getenv("USCOPE_BENCH_DIR");
  if (!base) base = std::getenv("TMPDIR");
  if (!base) base = "/tmp";
  std::string tmpl = std::string(base) + "/uscope_bench_reader.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("uscope_bench_reader: mkdtemp");
    return 1;
  }
  g_dir = buf.data();
  g_path = g_dir + "/boom.uscope";
  const uint64_t t0 = now_ns();
  const char *keep = std::getenv("USCOPE_BENCH_TRACE");
  if (keep && access(keep, R_OK) == 0) {
    g_path = keep;  // written by an earlier run: count its items
    uscope::TraceReader r(g_path);
    FileMap m(g_path);
    std::vector<char> raw;
    for (const auto &b : blobs(r, m)) {
      raw.resize(b.raw);
      LZ4_decompress_safe(reinterpret_cast<const char *>(b.data), raw.data(),
                          static_cast<int>(b.size), static_cast<int>(b.raw));
      minimal_decode(reinterpret_cast<const uint8_t *>(raw.data()), b.raw, g_items);
    }
    g_cycles = r.segments().back().header.time_end_ps / kPeriodPs + 1;
  } else {
    if (keep) g_path = keep;
    write_trace(g_path, USCOPE_COMPRESSION_LZ4);
    write_back(g_path);
  }
  const double write_ms = static_cast<double>(now_ns() - t0) / 1e6;
  // The zstd twin, after the LZ4 trace so that a kept trace has set g_cycles.
  g_path_zstd = keep ? std::string(keep) + ".zstd" : g_dir + "/boom_zstd.uscope";
  if (!keep || access(g_path_zstd.c_str(), R_OK) != 0) {
    write_trace(g_path_zstd, USCOPE_COMPRESSION_ZSTD);
    write_back(g_path_zstd);
  }
  struct stat sb, sbz;
  stat(g_path.c_str(), &sb);
  stat(g_path_zstd.c_str(), &sbz);

  int rc = 0;
  try {
    uscope::TraceReader r(g_path);
    uint64_t raw = 0;
    for (const auto &s : r.segments()) raw += s.header.deltas_raw_size;
    benchmark::AddCustomContext("cycles", std::to_string(g_cycles));
    benchmark::AddCustomContext("items", std::to_string(g_items));
    benchmark::AddCustomContext("segments", std::to_string(r.segments().size()));
    benchmark::AddCustomContext("file_bytes", std::to_string(sb.st_size));
    benchmark::AddCustomContext("file_bytes_zstd", std::to_string(sbz.st_size));
    benchmark::AddCustomContext("raw_delta_bytes", std::to_string(raw));
    benchmark::AddCustomContext("write_ms", std::to_string(write_ms));
    benchmark::AddCustomContext("libuscope", uscope_version_string());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      rc = 1;
    } else {
      benchmark::RunSpecifiedBenchmarks();
      benchmark::Shutdown();
    }
  } catch (const uscope::Error &e) {
    std::fprintf(stderr, "uscope_bench_reader: %s\n", e.what());
    rc = 1;
  }
  if (!keep) {
    std::remove(g_path.c_str());
    std::remove(g_path_zstd.c_str());
  }
  rmdir(g_dir.c_str());
  return rc;
}
