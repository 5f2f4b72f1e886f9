// The calls of one cycle of the "BOOM-like" workload (boom_workload.hpp
// describes it), generic over the sink that receives them. Kept apart from
// any writer's header so that the same cycles can drive libuscope
// (boom_workload.hpp's TraceSink) and the reference C writer, whose header
// declares functions of the same names (writer_driver.cpp).
#pragma once

#include <cstdint>

namespace uscope_bench {

// ── configuration ──

constexpr uint64_t kPeriodPs = 1000;
constexpr uint64_t kCheckpointPs = 10'000'000;
constexpr uint16_t kSlots = 512;
constexpr uint32_t kFetchWidth = 4;
constexpr uint32_t kInFlight = 128;  // retire what was fetched 32 cycles earlier
constexpr uint64_t kPcBase = 0x80000000ull;
constexpr uint32_t kItemsPerCycle = 2 * kFetchWidth + kFetchWidth + 1 + 10;

// ── the workload, generic over the sink ──

constexpr uint32_t kRv32i[8] = {
    0x00000013,  // addi x0, x0, 0 (nop)
    0x00a50533,  // add  a0, a0, a0
    0x00052583,  // lw   a1, 0(a0)
    0x00b52223,  // sw   a1, 4(a0)
    0xfff58593,  // addi a1, a1, -1
    0x00b50463,  // beq  a0, a1, +8
    0x40b50533,  // sub  a0, a0, a1
    0x0080006f,  // jal  x0, +8
};
inline const char *const kStages[] = {"fetch", "decode", "rename", "issue", "execute", "commit"};
constexpr uint8_t kNumStages = 6;
enum : uint8_t { kFetch, kDecode, kRename, kIssue, kExecute, kCommit };

// The 10 stage transitions of a cycle: which stage, for the instruction
// fetched `lag` cycles ago in fetch lane `lane`.
struct Transition {
  uint8_t stage, lag, lane;
};
constexpr Transition kTransitions[10] = {
    {kFetch, 0, 0},   {kFetch, 0, 1},   {kDecode, 1, 0},  {kDecode, 1, 1},  {kRename, 2, 0},
    {kRename, 2, 1},  {kIssue, 4, 0},   {kExecute, 6, 0}, {kCommit, 31, 0}, {kCommit, 31, 1},
};

struct Ids {
  uint16_t entities, committed, stage_event;
};

// One cycle of the workload. Returns the OR of all statuses (0 when all OK).
template <class Sink>
inline __attribute__((always_inline)) int run_cycle(Sink &sink, const Ids &ids, uint64_t c) {
  int st = 0;
  st |= sink.begin(c * kPeriodPs);
  const uint32_t base = static_cast<uint32_t>(c) * kFetchWidth;  // first entity fetched now
  for (uint32_t k = 0; k < kFetchWidth; ++k) {
    const uint32_t eid = base + k;
    const uint16_t slot = static_cast<uint16_t>(eid % kSlots);
    st |= sink.set(ids.entities, slot, 1, kPcBase + 4ull * eid);
    st |= sink.set(ids.entities, slot, 2, kRv32i[(eid * 2654435761u) >> 29]);
  }
  for (uint32_t k = 0; k < kFetchWidth; ++k)
    st |= sink.clear(ids.entities, static_cast<uint16_t>((base + k + kSlots - kInFlight) % kSlots));
  st |= sink.add(ids.committed, 0, 0, kFetchWidth);
  for (const Transition &t : kTransitions) {
    const uint32_t eid = base - kFetchWidth * t.lag + t.lane;
    uint8_t payload[5] = {static_cast<uint8_t>(eid), static_cast<uint8_t>(eid >> 8),
                          static_cast<uint8_t>(eid >> 16), static_cast<uint8_t>(eid >> 24),
                          t.stage};
    st |= sink.event(ids.stage_event, payload, sizeof payload);
  }
  st |= sink.end();
  return st;
}

}  // namespace uscope_bench
