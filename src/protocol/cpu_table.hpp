// The cpu protocol's vocabulary (spec chapter "µScope cpu Protocol"), in the
// order declare_cpu (cpu.cpp) adds it to the schema. table.hpp says who else
// reads it.
#pragma once

#include "protocol/table.hpp"
#include "uscope/protocols.h"

namespace uscope::proto::cpu {

using namespace uscope::proto::table;

// ── enums (§4.2, §5.3, §5.4, §5.5), indexed by Field::enum_ref ──
enum EnumRef : uint8_t { kPipelineStage, kDepType, kFlushReason, kStallReason, kNumEnums };
inline constexpr const char *kDepTypes[] = {"raw", "war", "waw", "structural"};
inline constexpr const char *kFlushReasons[] = {"mispredict", "exception", "interrupt", "pipeline_clear"};
// The common stall causes of §5.5: the enum when the config names none.
inline constexpr const char *kDefaultStallReasons[] = {"rob_full",    "iq_full",       "lq_full", "sq_full",
                                                      "fetch_miss", "dcache_miss", "frontend_stall"};
inline constexpr Enum kEnums[] = {
    {"pipeline_stage", {}, Values::kConfig},
    {"dep_type", kDepTypes},
    {"flush_reason", kFlushReasons},
    {"stall_reason", kDefaultStallReasons, Values::kOrDefault},
};
static_assert(sizeof kEnums / sizeof *kEnums == kNumEnums);
// The per-cycle calls' own range checks (cpu.hpp) and the public
// USCOPE_CPU_DEP_* / USCOPE_CPU_FLUSH_* values count on these.
static_assert(sizeof kDepTypes / sizeof *kDepTypes == USCOPE_CPU_DEP_STRUCTURAL + 1);
static_assert(sizeof kFlushReasons / sizeof *kFlushReasons == USCOPE_CPU_FLUSH_PIPELINE_CLEAR + 1);

// ── storages (§3; the config appends its entity_extra_fields) ──
// The catalog comes first, so that it is the scope's first sparse non-buffer
// storage: the trace summary counts its field-0 sets as instructions (COMPAT 16).
inline constexpr Field kEntityFields[] = {{"entity_id", U32}, {"pc", U64}, {"inst_bits", U32}};
static_assert(USCOPE_CPU_FIELD_INST_BITS + 1 == sizeof kEntityFields / sizeof *kEntityFields);
inline constexpr Storage kEntities = {"entities", USCOPE_SF_SPARSE, kEntityFields, "max_entities"};
inline constexpr Storage kStorages[] = {kEntities};

// ── counters (§6): the standard ones, then the config's ──
inline constexpr const char *kCounters[] = {"committed_insns"};
static_assert(USCOPE_CPU_COUNTER_COMMITTED_INSNS == 0);

// ── events (§5) ──
inline constexpr Field kStageTransitionFields[] = {{"entity_id", U32}, {"stage", ENUM, kPipelineStage}};
inline constexpr Field kAnnotateFields[] = {{"entity_id", U32}, {"text", STR}};
// §5.3 names the third field dep_type (the §10.2 example says "type"; the
// normative table wins).
inline constexpr Field kDependencyFields[] = {{"src_id", U32}, {"dst_id", U32}, {"dep_type", ENUM, kDepType}};
inline constexpr Field kFlushFields[] = {{"entity_id", U32}, {"reason", ENUM, kFlushReason}};
inline constexpr Field kStallFields[] = {{"reason", ENUM, kStallReason}};
inline constexpr Event kEvents[] = {
    {"stage_transition", kStageTransitionFields},
    {"annotate", kAnnotateFields},
    {"dependency", kDependencyFields},
    {"flush", kFlushFields},
    {"stall", kStallFields},
};

// ── DUT properties (§8), trace-wide, in the order they are set ──
inline constexpr Property kProperties[] = {
    {"dut_name", false},           {"cpu.protocol_version", false}, {"cpu.isa", false},
    {"cpu.pipeline_stages", false}, {"cpu.fetch_width", false},      {"cpu.commit_width", false},
    {"cpu.elf_path", false},        {"cpu.vendor", false},
};

inline constexpr Protocol kTable = {"cpu", kEnums, kStorages, kCounters, kEvents, kProperties};

// Where each entry's id goes in the public ids (uscope_cpu_ids), parallel to
// the lists above: the declaration fills them, the DPI bridge reads them.
inline constexpr uint8_t uscope_cpu_ids_t::*kEnumIds[] = {
    &uscope_cpu_ids_t::pipeline_stage_enum, &uscope_cpu_ids_t::dep_type_enum,
    &uscope_cpu_ids_t::flush_reason_enum, &uscope_cpu_ids_t::stall_reason_enum};
inline constexpr uint16_t uscope_cpu_ids_t::*kStorageIds[] = {&uscope_cpu_ids_t::entities};
inline constexpr uint16_t uscope_cpu_ids_t::*kEventIds[] = {
    &uscope_cpu_ids_t::stage_transition, &uscope_cpu_ids_t::annotate, &uscope_cpu_ids_t::dependency,
    &uscope_cpu_ids_t::flush, &uscope_cpu_ids_t::stall};
static_assert(sizeof kEnumIds / sizeof *kEnumIds == sizeof kEnums / sizeof *kEnums);
static_assert(sizeof kStorageIds / sizeof *kStorageIds == sizeof kStorages / sizeof *kStorages);
static_assert(sizeof kEventIds / sizeof *kEventIds == sizeof kEvents / sizeof *kEvents);

}  // namespace uscope::proto::cpu
