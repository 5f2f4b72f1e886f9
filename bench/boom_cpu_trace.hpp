// The BOOM-like workload of boom_workload.hpp written through the cpu
// protocol (so that the schema has every cpu event the analysis and the
// reference's tools need), each fetch also setting entity_id:
// bench_analysis.cpp and bench_export.cpp read it.
#pragma once

#include <chrono>
#include <string>

#include "reader/trace_reader.hpp"

#include "boom_workload.hpp"
#include "uscope/protocols.h"

namespace uscope_bench {

// Writes `cycles` cycles of the workload, cpu-protocol declared.
// pc_span (a multiple of 4): the pcs wrap around within [pc_base, pc_base +
// pc_span), e.g. a firmware's .text, named by elf_path (cpu.elf_path), for
// the exporters that attribute cycles to its functions and lines.
inline void write_cpu_trace(const std::string &path, uint64_t cycles, uint64_t pc_base = kPcBase,
                            uint64_t pc_span = 0, const char *elf_path = nullptr) {
  uscope_schema_t *s = nullptr;
  CHECK_OK(uscope_schema_new(&s));
  uint8_t clk = 0;
  uint16_t root = 0;
  CHECK_OK(uscope_schema_add_clock(s, &clk, "core_clk", static_cast<uint32_t>(kPeriodPs)));
  CHECK_OK(uscope_schema_add_scope(s, &root, "root", USCOPE_NO_PARENT, nullptr, clk));
  uscope_cpu_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = "core0";
  cfg.parent_scope_id = root;
  cfg.clock_id = USCOPE_CLOCK_INHERIT;
  cfg.isa = "rv32i";
  cfg.stages = kStages;
  cfg.num_stages = kNumStages;
  cfg.max_entities = kSlots;
  cfg.elf_path = elf_path;
  uscope_cpu_t *cpu = nullptr;
  CHECK_OK(uscope_cpu_declare(s, &cpu, &cfg));
  uscope_cpu_ids_t ids{};
  ids.struct_size = sizeof ids;
  CHECK_OK(uscope_cpu_ids(cpu, &ids));
  uscope_writer_options_t o{};
  o.struct_size = sizeof o;
  o.checkpoint_interval_ps = kCheckpointPs;
  uscope_writer_t *w = nullptr;
  CHECK_OK(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o));
  uscope_schema_free(s);
  const uint16_t committed = ids.counters[0];
  for (uint64_t c = 0; c < cycles; ++c) {
    int st = uscope_begin_cycle(w, c * kPeriodPs);
    const uint32_t base = static_cast<uint32_t>(c) * kFetchWidth;
    for (uint32_t k = 0; k < kFetchWidth; ++k) {
      const uint32_t eid = base + k;
      const uint16_t slot = static_cast<uint16_t>(eid % kSlots);
      st |= uscope_slot_set(w, ids.entities, slot, 0, eid);
      st |= uscope_slot_set(w, ids.entities, slot, 1, pc_base + 4ull * (pc_span ? eid % (pc_span / 4) : eid));
      st |= uscope_slot_set(w, ids.entities, slot, 2, kRv32i[(eid * 2654435761u) >> 29]);
    }
    if (c * kFetchWidth >= kInFlight)
      for (uint32_t k = 0; k < kFetchWidth; ++k)
        st |= uscope_slot_clear(w, ids.entities, static_cast<uint16_t>((base + k + kSlots - kInFlight) % kSlots));
    st |= uscope_slot_add(w, committed, 0, 0, kFetchWidth);
    for (const Transition &t : kTransitions) {
      if (base < kFetchWidth * t.lag) continue;
      const uint32_t eid = base - kFetchWidth * t.lag + t.lane;
      uint8_t payload[5] = {static_cast<uint8_t>(eid), static_cast<uint8_t>(eid >> 8),
                            static_cast<uint8_t>(eid >> 16), static_cast<uint8_t>(eid >> 24), t.stage};
      st |= uscope_event(w, ids.stage_transition, payload, sizeof payload);
    }
    st |= uscope_end_cycle(w);
    if (st) die("write", st, w);
  }
  CHECK_OK(uscope_writer_close(w));
  uscope_cpu_free(cpu);
}

// The same-run baseline of bench_analysis and bench_export: every segment of
// `path` replayed by the reader core with a visitor that does nothing (what
// any whole-trace analysis or export has to pay). Returns seconds; *items:
// the ops and events replayed.
inline double replay_all_seconds(const std::string &path, uint64_t *items) {
  uscope::TraceReader r(path);
  struct Nop {
    uint64_t n = 0;
    void frame(uint64_t) {}
    void op(uint64_t, const uscope::DeltaOp &) { ++n; }
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) { ++n; }
  } v;
  const auto t0 = std::chrono::steady_clock::now();
  auto st = r.initial_state();
  for (size_t i = 0; i < r.segments().size(); ++i) r.replay(i, st, v);
  *items = v.n;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace uscope_bench
