// The noc protocol's vocabulary (spec chapter "µScope noc Protocol"), in the
// order declare_noc (noc.cpp) adds it to the schema. table.hpp says who else
// reads it.
#pragma once

#include "protocol/table.hpp"
#include "uscope/protocols.h"

namespace uscope::proto::noc {

using namespace uscope::proto::table;

// ── enums (§4.2, §5.3, §5.5), indexed by Field::enum_ref ──
enum EnumRef : uint8_t { kOpcode, kPipelineStage, kRetryReason, kCreditDirection, kNumEnums };
// The two opcodes every bus has: the enum when the config names none.
inline constexpr const char *kDefaultOpcodes[] = {"read", "write"};
inline constexpr const char *kRetryReasons[] = {"target_busy", "no_credits", "vc_full", "arb_lost",
                                               "protocol_retry"};
inline constexpr const char *kCreditDirections[] = {"grant", "consume"};
inline constexpr Enum kEnums[] = {
    {"opcode", kDefaultOpcodes, Values::kOrDefault},
    {"pipeline_stage", {}, Values::kConfig},
    {"retry_reason", kRetryReasons},
    {"credit_direction", kCreditDirections},
};
static_assert(sizeof kEnums / sizeof *kEnums == kNumEnums);
static_assert(sizeof kRetryReasons / sizeof *kRetryReasons == USCOPE_NOC_RETRY_PROTOCOL_RETRY + 1);
static_assert(sizeof kCreditDirections / sizeof *kCreditDirections == USCOPE_NOC_CREDIT_CONSUME + 1);

// ── storages (§3; the config appends its txn_extra_fields) ──
inline constexpr Field kTxnFields[] = {{"txn_id", U32}, {"opcode", ENUM, kOpcode}, {"addr", U64}, {"len", U16},
                                       {"size", U8},    {"src_port", U16},         {"dst_port", U16}};
static_assert(USCOPE_NOC_FIELD_DST_PORT + 1 == sizeof kTxnFields / sizeof *kTxnFields);
inline constexpr Storage kTransactions = {"transactions", USCOPE_SF_SPARSE, kTxnFields, "max_txns"};
inline constexpr Storage kStorages[] = {kTransactions};

// ── counters (§6): the standard ones, numbered USCOPE_NOC_COUNTER_*, then the config's ──
inline constexpr const char *kCounters[] = {"bytes_tx", "bytes_rx", "arb_conflicts", "retries", "txn_completed"};
static_assert(sizeof kCounters / sizeof *kCounters == USCOPE_NOC_COUNTER_TXN_COMPLETED + 1);

// ── events (§5) ──
inline constexpr Field kStageTransitionFields[] = {{"txn_id", U32}, {"stage", ENUM, kPipelineStage}};
inline constexpr Field kBeatFields[] = {{"txn_id", U32}, {"beat_num", U16}, {"data_bytes", U16}};
inline constexpr Field kRetryFields[] = {{"txn_id", U32}, {"reason", ENUM, kRetryReason}};
inline constexpr Field kTimeoutFields[] = {{"txn_id", U32}, {"threshold_cycles", U32}};
inline constexpr Field kLinkCreditFields[] = {
    {"port", U16}, {"direction", ENUM, kCreditDirection}, {"credits", U8}};
inline constexpr Field kArbDecisionFields[] = {{"winner_txn", U32}, {"port", U16}, {"num_contenders", U8}};
inline constexpr Field kAnnotateFields[] = {{"txn_id", U32}, {"text", STR}};
inline constexpr Event kEvents[] = {
    {"stage_transition", kStageTransitionFields}, {"beat", kBeatFields},
    {"retry", kRetryFields},                      {"timeout", kTimeoutFields},
    {"link_credit", kLinkCreditFields},           {"arb_decision", kArbDecisionFields},
    {"annotate", kAnnotateFields},
};
// §5.7: txn_handoff lives at a common ancestor of the scopes it joins, not in
// the noc's scope; every noc under one parent shares the one event type there.
inline constexpr Field kTxnHandoffFields[] = {
    {"src_scope", U16}, {"src_txn_id", U32}, {"dst_scope", U16}, {"dst_txn_id", U32}};
inline constexpr Event kTxnHandoff = {"txn_handoff", kTxnHandoffFields};

// ── DUT properties (§8), each keyed by the scope name, in the order they are set ──
inline constexpr Property kProperties[] = {
    {"noc.protocol_version", true}, {"noc.bus_protocol", true}, {"noc.topology", true},
    {"noc.pipeline_stages", true},  {"clock.period_ps", true},  {"noc.data_width", true},
    {"noc.addr_width", true},       {"noc.num_ports", true},    {"noc.dim_x", true},
    {"noc.dim_y", true},            {"noc.num_vcs", true},      {"noc.routing", true},
};

inline constexpr Protocol kTable = {"noc", kEnums, kStorages, kCounters, kEvents, kProperties};

// Where each entry's id goes in the public ids (uscope_noc_ids), parallel to
// the lists above.
inline constexpr uint8_t uscope_noc_ids_t::*kEnumIds[] = {
    &uscope_noc_ids_t::opcode_enum, &uscope_noc_ids_t::pipeline_stage_enum,
    &uscope_noc_ids_t::retry_reason_enum, &uscope_noc_ids_t::credit_direction_enum};
inline constexpr uint16_t uscope_noc_ids_t::*kStorageIds[] = {&uscope_noc_ids_t::transactions};
inline constexpr uint16_t uscope_noc_ids_t::*kEventIds[] = {
    &uscope_noc_ids_t::stage_transition, &uscope_noc_ids_t::beat,         &uscope_noc_ids_t::retry,
    &uscope_noc_ids_t::timeout,          &uscope_noc_ids_t::link_credit, &uscope_noc_ids_t::arb_decision,
    &uscope_noc_ids_t::annotate};
static_assert(sizeof kEnumIds / sizeof *kEnumIds == sizeof kEnums / sizeof *kEnums);
static_assert(sizeof kStorageIds / sizeof *kStorageIds == sizeof kStorages / sizeof *kStorages);
static_assert(sizeof kEventIds / sizeof *kEventIds == sizeof kEvents / sizeof *kEvents);

}  // namespace uscope::proto::noc
