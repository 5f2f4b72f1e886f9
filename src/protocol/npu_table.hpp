// The npu protocol's vocabulary (docs/npu-protocol.md), in the order
// declare_npu (npu.cpp) adds it to the schema. Its events are the JSONL event
// types of npu-trace-jsonl.md §4, so the JSONL converter's key and event
// tables (src/convert/npu_event.cpp) are built from this one too. table.hpp
// says who else reads it.
#pragma once

#include "protocol/table.hpp"
#include "uscope/protocols.h"

namespace uscope::proto::npu {

using namespace uscope::proto::table;

// ── enums (npu-protocol.md §3.1, §4), indexed by Field::enum_ref ──
enum EnumRef : uint8_t { kCmdSource, kAccessType, kCmdState, kNumEnums };
inline constexpr const char *kSources[] = {"ISA", "MMIO"};
inline constexpr const char *kAccessTypes[] = {"READ", "WRITE"};
inline constexpr const char *kCmdStates[] = {"QUEUED", "RUNNING"};
inline constexpr Enum kEnums[] = {
    {"cmd_source", kSources}, {"access_type", kAccessTypes}, {"cmd_state", kCmdStates}};
static_assert(sizeof kEnums / sizeof *kEnums == kNumEnums);
static_assert(sizeof kSources / sizeof *kSources == USCOPE_NPU_SOURCE_MMIO + 1);
static_assert(sizeof kAccessTypes / sizeof *kAccessTypes == USCOPE_NPU_ACCESS_WRITE + 1);
static_assert(sizeof kCmdStates / sizeof *kCmdStates == USCOPE_NPU_CMD_RUNNING + 1);

// ── storages (§3). cmd_queue comes first: it is the scope's entity catalog,
// the commands being the NPU's instructions (COMPAT 16) ──
inline constexpr Field kCmdQueueFields[] = {
    {"cmd_id", U32},   {"state", ENUM, kCmdState}, {"cmd_type", STR}, {"source", ENUM, kCmdSource},
    {"token", U32},    {"desc_addr", U64},         {"layer_id", U32}, {"block_id", U32},
    {"phase", STR},    {"ctx", U16, kNoEnum, kOwn}};
// The contexts' fields are the JSONL context keys (§3.2), in this order.
inline constexpr Field kContextFields[] = {
    {"core_id", U16},  {"npu_id", U16},   {"tenant_id", U32}, {"layer_id", U32},
    {"block_id", U32}, {"head_id", U32},  {"token_idx", U32}, {"seq_len", U32},
    {"phase", STR},    {"thread_id", U32}, {"model_name", STR}, {"precision", STR}};
inline constexpr Field kTeFields[] = {{"job_id", U32}, {"cmd_id", U32}, {"m", U32},
                                      {"n", U32},      {"k", U32},      {"ctx", U16, kNoEnum, kOwn}};
inline constexpr Field kVeFields[] = {{"job_id", U32}, {"cmd_id", U32}, {"op_type", STR},
                                      {"len", U32},    {"batch", U32},  {"ctx", U16, kNoEnum, kOwn}};
inline constexpr Field kDmaFields[] = {{"tx_id", U32},    {"cmd_id", U32},     {"job_id", U32},
                                       {"direction", STR}, {"src_addr", U64},  {"dst_addr", U64},
                                       {"size_bytes", U64}, {"ctx", U16, kNoEnum, kOwn}};
// Dense: every bank always exists; its two counts only grow.
inline constexpr Field kBankFields[] = {{"accesses", U64}, {"conflicts", U64}};
// dram and noc: the same shape on two storages.
inline constexpr Field kChannelFields[] = {
    {"tx_id", U32}, {"cmd_id", U32}, {"size_bytes", U64}, {"ctx", U16, kNoEnum, kOwn}};
constexpr uint16_t kSparse = USCOPE_SF_SPARSE, kBuffer = USCOPE_SF_SPARSE | USCOPE_SF_BUFFER;
// The last three are declared only when their slot count is not 0.
inline constexpr Storage kStorages[] = {
    {"cmd_queue", kSparse, kCmdQueueFields, "queue_depth"},
    {"contexts", kSparse, kContextFields, "num_contexts"},
    {"te", kBuffer, kTeFields, "num_te"},
    {"ve", kBuffer, kVeFields, "num_ve"},
    {"dma", kBuffer, kDmaFields, "num_dma_channels"},
    {"sram_banks", 0, kBankFields, "num_sram_banks"},
    {"dram", kBuffer, kChannelFields, "num_dram_channels"},
    {"noc", kBuffer, kChannelFields, "num_noc_links"},
};

// ── counters (§5), numbered USCOPE_NPU_COUNTER_*, then the config's ──
inline constexpr const char *kCounters[] = {"macs",      "dma_bytes", "sram_accesses", "sram_conflicts", "cmds_done",
                                            "jobs_done", "tokens_done", "dram_bytes",  "noc_bytes"};
static_assert(sizeof kCounters / sizeof *kCounters == USCOPE_NPU_NUM_STD_COUNTERS);

// ── events (§4): one per JSONL event type, named as its event_type in lower
// case; the JSONL fields in JSONL order under their JSONL keys, then the
// protocol's own: the storage slot it updates (slot, engine) and ctx. The
// per-cycle calls of npu.hpp pack payloads in this order ──
constexpr Field kSlot = {"slot", U16, kNoEnum, kOwn}, kEngine = {"engine", U16, kNoEnum, kOwn},
                kCtx = {"ctx", U16, kNoEnum, kOwn};
inline constexpr Field kCmdEnqueueFields[] = {
    {"cmd_id", U32},   {"cmd_type", STR}, {"source", ENUM, kCmdSource}, {"token", U32}, {"desc_addr", U64},
    {"layer_id", U32}, {"block_id", U32}, {"phase", STR},               kSlot,          kCtx};
inline constexpr Field kCmdStartFields[] = {{"cmd_id", U32}, kSlot, kCtx};
inline constexpr Field kCmdEndFields[] = {{"cmd_id", U32}, {"status", STR}, kSlot, kCtx};
inline constexpr Field kJobIssueFields[] = {{"job_id", U32},  {"cmd_id", U32},       {"job_type", STR},
                                            {"tile_id", U32}, {"vec_chunk_id", U32}, kCtx};
inline constexpr Field kJobDoneFields[] = {
    {"job_id", U32}, {"cmd_id", U32}, {"job_type", STR}, {"latency_cycles", U32}, kCtx};
inline constexpr Field kDmaStartFields[] = {{"tx_id", U32},    {"channel", U16},    {"direction", STR},
                                            {"src_addr", U64}, {"dst_addr", U64},   {"size_bytes", U64},
                                            {"cmd_id", U32},   {"job_id", U32},     kCtx};
inline constexpr Field kDmaEndFields[] = {{"tx_id", U32}, {"channel", U16}, {"cmd_id", U32}, {"job_id", U32}, kCtx};
inline constexpr Field kTeStartFields[] = {{"job_id", U32}, {"cmd_id", U32}, {"m", U32},      {"n", U32},
                                           {"k", U32},      {"tile_m", U32}, {"tile_n", U32}, {"tile_k", U32},
                                           kEngine,         kCtx};
inline constexpr Field kTeEndFields[] = {
    {"job_id", U32}, {"cmd_id", U32}, {"mac_count", U64}, {"latency_cycles", U32}, kEngine, kCtx};
inline constexpr Field kVeStartFields[] = {{"job_id", U32}, {"cmd_id", U32}, {"op_type", STR}, {"len", U32},
                                           {"batch", U32},  kEngine,         kCtx};
inline constexpr Field kVeEndFields[] = {{"job_id", U32}, {"cmd_id", U32}, {"latency_cycles", U32}, kEngine, kCtx};
inline constexpr Field kSramAccessFields[] = {
    {"addr", U64},  {"bank_id", U16},           {"access_type", ENUM, kAccessType}, {"by", STR},
    {"conflict", U8, kNoEnum, kBool}, {"cmd_id", U32}, {"job_id", U32}, kCtx};
inline constexpr Field kSramConflictFields[] = {
    {"bank_id", U16}, {"num_requests", U32}, {"allowed", U32}, {"stalled_clients", STR, kNoEnum, kStrArray},
    {"cmd_id", U32},  kCtx};
inline constexpr Field kDramTxStartFields[] = {
    {"tx_id", U32}, {"channel", U16}, {"size_bytes", U64}, {"cmd_id", U32}, kCtx};
inline constexpr Field kDramTxEndFields[] = {{"tx_id", U32}, {"channel", U16}, kCtx};
inline constexpr Field kNocTxStartFields[] = {
    {"tx_id", U32}, {"link_id", U16}, {"size_bytes", U64}, {"cmd_id", U32}, kCtx};
inline constexpr Field kNocTxEndFields[] = {{"tx_id", U32}, {"link_id", U16}, kCtx};
inline constexpr Field kIrqEmitFields[] = {{"cmd_id", U32}, {"token", U32}, {"irq_line", U32}, kCtx};
inline constexpr Field kTokenCompleteFields[] = {{"token", U32}, {"cmd_id", U32}, {"status", STR}, kCtx};
inline constexpr Field kDiagnosticFields[] = {{"component", STR}, {"code", STR},   {"msg", STR},
                                              {"cmd_id", U32},    {"job_id", U32}, kCtx};
// Indexed by USCOPE_NPU_EV_*.
inline constexpr Event kEvents[] = {
    {"cmd_enqueue", kCmdEnqueueFields},
    {"cmd_start", kCmdStartFields},
    {"cmd_end", kCmdEndFields},
    {"job_issue", kJobIssueFields},
    {"job_done", kJobDoneFields},
    {"dma_start", kDmaStartFields},
    {"dma_end", kDmaEndFields},
    {"te_start", kTeStartFields},
    {"te_end", kTeEndFields},
    {"ve_start", kVeStartFields},
    {"ve_end", kVeEndFields},
    {"sram_access", kSramAccessFields},
    {"sram_conflict", kSramConflictFields},
    {"dram_tx_start", kDramTxStartFields},
    {"dram_tx_end", kDramTxEndFields},
    {"noc_tx_start", kNocTxStartFields},
    {"noc_tx_end", kNocTxEndFields},
    {"irq_emit", kIrqEmitFields},
    {"token_complete", kTokenCompleteFields},
    {"error", kDiagnosticFields},
    {"warn", kDiagnosticFields},
};
static_assert(sizeof kEvents / sizeof *kEvents == USCOPE_NPU_NUM_EVENTS);
static_assert(same(kEvents[USCOPE_NPU_EV_CMD_ENQUEUE].name, "cmd_enqueue") &&
              same(kEvents[USCOPE_NPU_EV_SRAM_ACCESS].name, "sram_access") &&
              same(kEvents[USCOPE_NPU_EV_WARN].name, "warn"));

// ── DUT properties (§6), in the order they are set: trace-wide ones once per
// trace, the instance's under its scope name ──
inline constexpr Property kProperties[] = {
    {"dut_name", false},      {"npu.protocol_version", false}, {"npu.vendor", false},
    {"npu.sim_id", false},    {"npu.trace_version", false},    {"npu.sim_version", false},
    {"npu.sim_config", false}, {"npu.te_dims", true},
};

inline constexpr Protocol kTable = {"npu", kEnums, kStorages, kCounters, kEvents, kProperties};

// Where each entry's id goes in the public ids (uscope_npu_ids); the events
// go to ids.events[], by index.
inline constexpr uint8_t uscope_npu_ids_t::*kEnumIds[] = {
    &uscope_npu_ids_t::cmd_source_enum, &uscope_npu_ids_t::access_type_enum, &uscope_npu_ids_t::cmd_state_enum};
inline constexpr uint16_t uscope_npu_ids_t::*kStorageIds[] = {
    &uscope_npu_ids_t::cmd_queue,  &uscope_npu_ids_t::contexts, &uscope_npu_ids_t::te,
    &uscope_npu_ids_t::ve,         &uscope_npu_ids_t::dma,      &uscope_npu_ids_t::sram_banks,
    &uscope_npu_ids_t::dram,       &uscope_npu_ids_t::noc};
static_assert(sizeof kEnumIds / sizeof *kEnumIds == sizeof kEnums / sizeof *kEnums);
static_assert(sizeof kStorageIds / sizeof *kStorageIds == sizeof kStorages / sizeof *kStorages);

}  // namespace uscope::proto::npu
