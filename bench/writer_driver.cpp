// One whole BOOM-like file (boom_cycle.hpp) written end to end and timed:
// open, CYCLES cycles, close. Built twice from this one source, so that the
// two writers get exactly the same calls:
//   - by CMake against libuscope (uscope_bench_writer_driver), where a third
//     argument sets uscope_writer_options_t.compress_threads;
//   - by bench/writer_vs_reference.sh with -DUSCOPE_BENCH_REFERENCE against
//     the reference C writer (GitHub zarubaf/uscope, dpi/uscope_dpi.c),
//     which is never part of this project's build.
//
//   driver OUT.uscope CYCLES [inline|N]
//
// Prints one line of figures: wall_ms (open to close: the end-to-end time,
// what issue 16 §1 compares), items_per_s, sim_cpu_ms (the calling thread's
// CPU time), other_cpu_ms (every other thread's), peak_rss_MB, file_MB.
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "boom_cycle.hpp"

#ifdef USCOPE_BENCH_REFERENCE
#include "uscope_dpi.h"
#else
#include "boom_workload.hpp"
#endif

namespace {

using namespace uscope_bench;

uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "writer_driver: %s\n", what);
  std::exit(1);
}

const uscope_dut_property_t kProps[] = {{"dut_name", "boom_like"}, {"cpu.isa", "RV64GC"}};

#ifdef USCOPE_BENCH_REFERENCE
// The reference's calls return nothing: it has no per-call status.
struct Sink {
  uscope_writer_t *w;
  int begin(uint64_t t) { return uscope_begin_cycle(w, t), 0; }
  int set(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) { return uscope_slot_set(w, sid, slot, f, v), 0; }
  int clear(uint16_t sid, uint16_t slot) { return uscope_slot_clear(w, sid, slot), 0; }
  int add(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) { return uscope_slot_add(w, sid, slot, f, v), 0; }
  int event(uint16_t id, const void *p, uint32_t n) { return uscope_event(w, id, p, n), 0; }
  int end() { return uscope_end_cycle(w), 0; }
};

uscope_writer_t *open_writer(const char *path, Ids &ids, const char *) {
  uscope_schema_def_t *s = uscope_schema_new();
  const uint8_t clk = uscope_schema_add_clock(s, "core_clk", static_cast<uint32_t>(kPeriodPs));
  const uint16_t root = uscope_schema_add_scope(s, "root", 0xFFFF, nullptr, clk);
  const uint16_t core = uscope_schema_add_scope(s, "core0", root, "cpu", 0xFF);
  const uint8_t stage_enum = uscope_schema_add_enum(s, "pipeline_stage", const_cast<const char **>(kStages), kNumStages);
  const char *ent_names[] = {"entity_id", "pc", "inst_bits"};
  const uint8_t ent_types[] = {USCOPE_FT_U32, USCOPE_FT_U64, USCOPE_FT_U32};
  const uint8_t zeros[3] = {0, 0, 0};
  ids.entities = uscope_schema_add_storage(s, "entities", core, kSlots, USCOPE_SF_SPARSE, 3, ent_names, ent_types, zeros);
  const char *cnt_names[] = {"count"};
  const uint8_t cnt_types[] = {USCOPE_FT_U64};
  ids.committed = uscope_schema_add_storage(s, "committed", core, 1, 0, 1, cnt_names, cnt_types, zeros);
  const char *ev_names[] = {"entity_id", "stage"};
  const uint8_t ev_types[] = {USCOPE_FT_U32, USCOPE_FT_ENUM};
  const uint8_t ev_enums[] = {0, stage_enum};
  ids.stage_event = uscope_schema_add_event(s, "stage_transition", core, 2, ev_names, ev_types, ev_enums);
  uscope_writer_t *w = uscope_writer_open(path, kProps, 2, s, kCheckpointPs);  // takes the schema
  if (!w) die("the reference's uscope_writer_open failed");
  return w;
}
void close_writer(uscope_writer_t *w) { uscope_writer_close(w); }
#else
using Sink = TraceSink;  // boom_workload.hpp: every call through the C ABI

#define CHECK(call) \
  if ((call) != USCOPE_OK) die(uscope_last_error())

uscope_writer_t *open_writer(const char *path, Ids &ids, const char *threads) {
  uscope_schema_t *s = build_schema(ids);  // boom_workload.hpp, as the benchmarks
  uscope_writer_options_t o;
  uscope_writer_options_init(&o);
  o.checkpoint_interval_ps = kCheckpointPs;
  if (threads) {
    o.compress_threads = std::strcmp(threads, "inline") == 0 ? USCOPE_COMPRESS_THREADS_INLINE
                                                             : static_cast<uint32_t>(std::strtoul(threads, nullptr, 10));
  }
  uscope_writer_t *w = nullptr;
  CHECK(uscope_writer_open(&w, path, s, kProps, 2, &o));
  uscope_schema_free(s);
  return w;
}
void close_writer(uscope_writer_t *w) { CHECK(uscope_writer_close(w)); }
#endif

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) die("usage: writer_driver OUT.uscope CYCLES [inline|N]");
  const uint64_t cycles = std::strtoull(argv[2], nullptr, 10);
  Ids ids{};
  const uint64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), m0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  const uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  Sink sink{open_writer(argv[1], ids, argc > 3 ? argv[3] : nullptr)};
  int st = 0;
  for (uint64_t c = 0; c < cycles; ++c) st |= run_cycle(sink, ids, c);
  if (st) die("a per-cycle call failed");
  close_writer(sink.w);
  const uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
  const uint64_t m1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  struct stat sb{};
  stat(argv[1], &sb);
  const double wall = static_cast<double>(t1 - t0);
  std::printf("wall_ms %.1f items_per_s %.0f sim_cpu_ms %.1f other_cpu_ms %.1f peak_rss_MB %.1f file_MB %.2f\n",
              wall / 1e6, static_cast<double>(cycles * kItemsPerCycle) / (wall / 1e9),
              static_cast<double>(m1 - m0) / 1e6, static_cast<double>((p1 - p0) - (m1 - m0)) / 1e6,
              static_cast<double>(ru.ru_maxrss) / 1024.0, static_cast<double>(sb.st_size) / 1e6);
  return 0;
}
