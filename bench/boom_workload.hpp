// The "BOOM-like" workload shared by the writer and reader benchmarks
// (bench_writer.cpp, bench_reader.cpp), through the library's C API.
//
// Per cycle of 1000 ps, with a checkpoint every 10,000 cycles (10,000,000 ps):
//   - 4 fetches: slot_set of pc and inst_bits on 4 slots of the sparse
//     `entities` storage (512 slots: entity_id U32, pc U64, inst_bits U32);
//   - 4 retires: slot_clear of the 4 slots fetched 32 cycles earlier
//     (128 instructions in flight);
//   - 1 slot_add of 4 on the dense 1-slot `committed` counter (U64);
//   - 10 stage_transition events (entity_id U32, stage ENUM of 6 stages).
// That is 13 ops + 10 events = 23 items per cycle. pc counts up by 4 from
// 0x80000000, inst_bits come from 8 real RV32I encodings, entity ids count up
// and map onto the 512 slots.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "boom_cycle.hpp"
#include "uscope/uscope.h"

namespace uscope_bench {

[[noreturn]] inline void die(const char *what, uscope_status_t s, const uscope_writer_t *w) {
  std::fprintf(stderr, "uscope_bench: %s: %s (%d): %s\n", what, uscope_status_str(s), s,
               w ? uscope_writer_error(w) : uscope_last_error());
  std::exit(1);
}
#define CHECK_OK(call)                                            \
  do {                                                            \
    const uscope_status_t s_ = (call);                            \
    if (s_ != USCOPE_OK) ::uscope_bench::die(#call, s_, nullptr); \
  } while (0)

// ── peak RSS ──

// Writing "5" to clear_refs resets the peak RSS (VmHWM and ru_maxrss) to the
// current RSS (Linux >= 4.0). Without it the figure is the process's peak.
inline void reset_peak_rss() {
  if (FILE *f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}
inline double peak_rss_mb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
}

// Builds the schema of the workload. The caller frees it.
inline uscope_schema_t *build_schema(Ids &ids) {
  uscope_schema_t *s = nullptr;
  CHECK_OK(uscope_schema_new(&s));
  uint8_t clk = 0, stage_enum = 0;
  uint16_t root = 0, core = 0;
  CHECK_OK(uscope_schema_add_clock(s, &clk, "core_clk", static_cast<uint32_t>(kPeriodPs)));
  CHECK_OK(uscope_schema_add_scope(s, &root, "root", USCOPE_NO_PARENT, nullptr, clk));
  CHECK_OK(uscope_schema_add_scope(s, &core, "core0", root, "cpu", USCOPE_CLOCK_INHERIT));
  CHECK_OK(uscope_schema_add_enum(s, &stage_enum, "pipeline_stage", kStages, kNumStages));
  const uscope_field_t entity_fields[] = {
      {"entity_id", USCOPE_FT_U32, 0, 0, 0},
      {"pc", USCOPE_FT_U64, 0, 0, 0},
      {"inst_bits", USCOPE_FT_U32, 0, 0, 0},
  };
  CHECK_OK(uscope_schema_add_storage(s, &ids.entities, "entities", core, kSlots, USCOPE_SF_SPARSE,
                                     entity_fields, 3, nullptr, 0));
  const uscope_field_t counter_fields[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  CHECK_OK(uscope_schema_add_storage(s, &ids.committed, "committed", core, 1, 0, counter_fields, 1, nullptr,
                                     0));
  const uscope_field_t ev_fields[] = {
      {"entity_id", USCOPE_FT_U32, 0, 0, 0},
      {"stage", USCOPE_FT_ENUM, stage_enum, 0, 0},
  };
  CHECK_OK(uscope_schema_add_event(s, &ids.stage_event, "stage_transition", core, ev_fields, 2));
  return s;
}

// The real thing: every call through the exported C API.
struct TraceSink {
  uscope_writer_t *w;
  int begin(uint64_t t) { return uscope_begin_cycle(w, t); }
  int set(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    return uscope_slot_set(w, sid, slot, f, v);
  }
  int clear(uint16_t sid, uint16_t slot) { return uscope_slot_clear(w, sid, slot); }
  int add(uint16_t sid, uint16_t slot, uint16_t f, uint64_t v) {
    return uscope_slot_add(w, sid, slot, f, v);
  }
  int event(uint16_t id, const void *p, uint32_t n) { return uscope_event(w, id, p, n); }
  int end() { return uscope_end_cycle(w); }
};

}  // namespace uscope_bench
