// The noc protocol handle (spec chapter "µScope noc Protocol"): the ids of a
// declared interconnect scope and its per-cycle calls, inline as for cpu.
#pragma once

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "protocol/common.hpp"
#include "protocol/noc_table.hpp"

struct uscope_noc : uscope::proto::CatalogScope {
  static constexpr uscope::proto::CatalogWords kWords = {
      uscope::proto::noc::kTxnFields[USCOPE_NOC_FIELD_TXN_ID].name, "a transaction", "transaction",
      "transactions", uscope::proto::noc::kTransactions.slots};

  uscope_noc_ids_t ids{};
  uint32_t num_ports = 0;  // 0: ports are not checked

  uscope_noc() : CatalogScope("uscope_noc", kWords) {}

  static constexpr uint16_t kNumRetryReasons = std::size(uscope::proto::noc::kRetryReasons);
  static constexpr uint16_t kNumCreditDirections = std::size(uscope::proto::noc::kCreditDirections);

  using Writer = uscope::Writer;

  uscope_status_t issue(Writer &w, uint32_t txn, uint8_t opcode, uint64_t addr, uint16_t len, uint8_t size,
                        uint16_t src, uint16_t dst) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("issue", "txn_id", txn);
    if (USCOPE_UNLIKELY(opcode >= ids.num_opcodes))
      return bad_enum("issue", "opcode", opcode, ids.num_opcodes);
    if (USCOPE_UNLIKELY(num_ports && src >= num_ports)) return bad_port("issue", "src_port", src);
    if (USCOPE_UNLIKELY(num_ports && dst >= num_ports)) return bad_port("issue", "dst_port", dst);
    const auto slot = static_cast<uint16_t>(txn);
    const uint16_t sid = ids.transactions;
    USCOPE_TRY(uscope::proto::set_fields(w, sid, slot, USCOPE_NOC_FIELD_TXN_ID, txn, opcode, addr, len, size,
                                         src, dst));
    return transition(w, txn, 0);
  }
  uscope_status_t stage_transition(Writer &w, uint32_t txn, uint8_t stage) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("stage_transition", "txn_id", txn);
    if (USCOPE_UNLIKELY(stage >= ids.num_stages))
      return bad_enum("stage_transition", "stage", stage, ids.num_stages);
    return transition(w, txn, stage);
  }
  uscope_status_t complete(Writer &w, uint32_t txn) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("complete", "txn_id", txn);
    USCOPE_TRY(w.slot_clear(ids.transactions, static_cast<uint16_t>(txn)));
    return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_TXN_COMPLETED], 0, 0, 1);
  }
  uscope_status_t beat(Writer &w, uint32_t txn, uint16_t beat_num, uint16_t data_bytes) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("beat", "txn_id", txn);
    return uscope::proto::emit(w, ids.beat, txn, beat_num, data_bytes);
  }
  uscope_status_t retry(Writer &w, uint32_t txn, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("retry", "txn_id", txn);
    if (USCOPE_UNLIKELY(reason >= kNumRetryReasons))
      return bad_enum("retry", "reason", reason, kNumRetryReasons);
    USCOPE_TRY(uscope::proto::emit(w, ids.retry, txn, reason));
    return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_RETRIES], 0, 0, 1);
  }
  uscope_status_t timeout(Writer &w, uint32_t txn, uint32_t threshold) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("timeout", "txn_id", txn);
    return uscope::proto::emit(w, ids.timeout, txn, threshold);
  }
  uscope_status_t link_credit(Writer &w, uint16_t port, uint8_t direction, uint8_t credits) const noexcept {
    if (USCOPE_UNLIKELY(num_ports && port >= num_ports)) return bad_port("link_credit", "port", port);
    if (USCOPE_UNLIKELY(direction >= kNumCreditDirections))
      return bad_enum("link_credit", "direction", direction, kNumCreditDirections);
    return uscope::proto::emit(w, ids.link_credit, port, direction, credits);
  }
  uscope_status_t arb_decision(Writer &w, uint32_t winner, uint16_t port, uint8_t contenders) const noexcept {
    if (USCOPE_UNLIKELY(winner >= ids.max_txns)) return bad_id("arb_decision", "winner_txn", winner);
    if (USCOPE_UNLIKELY(num_ports && port >= num_ports)) return bad_port("arb_decision", "port", port);
    USCOPE_TRY(uscope::proto::emit(w, ids.arb_decision, winner, port, contenders));
    // The spec's arb_conflicts counts arbitrations with more than one contender (§6).
    if (contenders > 1) return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_ARB_CONFLICTS], 0, 0, 1);
    return USCOPE_OK;
  }
  uscope_status_t txn_handoff(Writer &w, uint16_t src_scope, uint32_t src_txn, uint16_t dst_scope,
                              uint32_t dst_txn) const noexcept {
    return uscope::proto::emit(w, ids.txn_handoff, src_scope, src_txn, dst_scope, dst_txn);
  }
  uscope_status_t annotate(Writer &w, uint32_t txn, const char *text) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("annotate", "txn_id", txn);
    uint32_t s = 0;
    USCOPE_TRY(uscope::proto::intern(w, "uscope_noc_annotate", "text", text, false, &s));
    return uscope::proto::emit(w, ids.annotate, txn, s);
  }
  uscope_status_t txn_set(Writer &w, uint32_t txn, uint16_t field, uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_id("txn_set", "txn_id", txn);
    if (USCOPE_UNLIKELY(field == 0 || field >= ids.num_txn_fields))
      return bad_catalog_field("txn_set", field, ids.num_txn_fields);
    if (USCOPE_UNLIKELY(field == USCOPE_NOC_FIELD_OPCODE && value >= ids.num_opcodes))
      return bad_enum("txn_set", "opcode", static_cast<unsigned>(value), ids.num_opcodes);
    return w.slot_set(ids.transactions, static_cast<uint16_t>(txn), field, value);
  }

 private:
  uscope_status_t transition(Writer &w, uint32_t txn, uint8_t stage) const noexcept {
    return uscope::proto::emit(w, ids.stage_transition, txn, stage);
  }
  uscope_status_t bad_port(const char *op, const char *what, unsigned port) const noexcept
      __attribute__((cold, noinline));
};

namespace uscope::proto {
std::unique_ptr<uscope_noc> declare_noc(Declaration &d, const uscope_noc_config_t &cfg);
}  // namespace uscope::proto
