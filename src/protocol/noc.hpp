// The noc protocol handle (spec chapter "µScope noc Protocol"): the ids of a
// declared interconnect scope and its per-cycle calls, inline as for cpu.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "protocol/common.hpp"

struct uscope_noc {
  struct Buffer {
    uint16_t sid;
    uint16_t num_slots;
    uint16_t num_fields;
  };

  std::string scope_name;
  uscope_noc_ids_t ids{};
  std::vector<uint16_t> buffer_ids, counter_ids;
  std::vector<Buffer> buffers;
  uint32_t num_ports = 0;  // 0: ports are not checked

  uscope_noc() = default;
  uscope_noc(const uscope_noc &) = delete;
  uscope_noc &operator=(const uscope_noc &) = delete;

  static constexpr uint16_t kNumRetryReasons = 5;
  static constexpr uint16_t kNumCreditDirections = 2;

  using Writer = uscope::Writer;
  using Payload = uscope::proto::Payload;

  uscope_status_t issue(Writer &w, uint32_t txn, uint8_t opcode, uint64_t addr, uint16_t len, uint8_t size,
                        uint16_t src, uint16_t dst) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_issue", "txn_id", txn);
    if (USCOPE_UNLIKELY(opcode >= ids.num_opcodes))
      return bad_enum("uscope_noc_issue", "opcode", opcode, ids.num_opcodes);
    if (USCOPE_UNLIKELY(num_ports && src >= num_ports)) return bad_port("uscope_noc_issue", "src_port", src);
    if (USCOPE_UNLIKELY(num_ports && dst >= num_ports)) return bad_port("uscope_noc_issue", "dst_port", dst);
    const auto slot = static_cast<uint16_t>(txn);
    const uint16_t sid = ids.transactions;
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_TXN_ID, txn));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_OPCODE, opcode));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_ADDR, addr));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_LEN, len));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_SIZE, size));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_SRC_PORT, src));
    USCOPE_TRY(w.slot_set(sid, slot, USCOPE_NOC_FIELD_DST_PORT, dst));
    return transition(w, txn, 0);
  }
  uscope_status_t stage_transition(Writer &w, uint32_t txn, uint8_t stage) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_stage_transition", "txn_id", txn);
    if (USCOPE_UNLIKELY(stage >= ids.num_stages))
      return bad_enum("uscope_noc_stage_transition", "stage", stage, ids.num_stages);
    return transition(w, txn, stage);
  }
  uscope_status_t complete(Writer &w, uint32_t txn) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_complete", "txn_id", txn);
    USCOPE_TRY(w.slot_clear(ids.transactions, static_cast<uint16_t>(txn)));
    return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_TXN_COMPLETED], 0, 0, 1);
  }
  uscope_status_t beat(Writer &w, uint32_t txn, uint16_t beat_num, uint16_t data_bytes) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_beat", "txn_id", txn);
    Payload p;
    p.u32(txn).u16(beat_num).u16(data_bytes);
    return w.event(ids.beat, p.data(), p.size());
  }
  uscope_status_t retry(Writer &w, uint32_t txn, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_retry", "txn_id", txn);
    if (USCOPE_UNLIKELY(reason >= kNumRetryReasons))
      return bad_enum("uscope_noc_retry", "reason", reason, kNumRetryReasons);
    Payload p;
    p.u32(txn).u8(reason);
    USCOPE_TRY(w.event(ids.retry, p.data(), p.size()));
    return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_RETRIES], 0, 0, 1);
  }
  uscope_status_t timeout(Writer &w, uint32_t txn, uint32_t threshold) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_timeout", "txn_id", txn);
    Payload p;
    p.u32(txn).u32(threshold);
    return w.event(ids.timeout, p.data(), p.size());
  }
  uscope_status_t link_credit(Writer &w, uint16_t port, uint8_t direction, uint8_t credits) const noexcept {
    if (USCOPE_UNLIKELY(num_ports && port >= num_ports))
      return bad_port("uscope_noc_link_credit", "port", port);
    if (USCOPE_UNLIKELY(direction >= kNumCreditDirections))
      return bad_enum("uscope_noc_link_credit", "direction", direction, kNumCreditDirections);
    Payload p;
    p.u16(port).u8(direction).u8(credits);
    return w.event(ids.link_credit, p.data(), p.size());
  }
  uscope_status_t arb_decision(Writer &w, uint32_t winner, uint16_t port, uint8_t contenders) const noexcept {
    if (USCOPE_UNLIKELY(winner >= ids.max_txns))
      return bad_txn("uscope_noc_arb_decision", "winner_txn", winner);
    if (USCOPE_UNLIKELY(num_ports && port >= num_ports))
      return bad_port("uscope_noc_arb_decision", "port", port);
    Payload p;
    p.u32(winner).u16(port).u8(contenders);
    USCOPE_TRY(w.event(ids.arb_decision, p.data(), p.size()));
    // The spec's arb_conflicts counts arbitrations with more than one contender (§6).
    if (contenders > 1) return w.slot_add(counter_ids[USCOPE_NOC_COUNTER_ARB_CONFLICTS], 0, 0, 1);
    return USCOPE_OK;
  }
  uscope_status_t txn_handoff(Writer &w, uint16_t src_scope, uint32_t src_txn, uint16_t dst_scope,
                              uint32_t dst_txn) const noexcept {
    Payload p;
    p.u16(src_scope).u32(src_txn).u16(dst_scope).u32(dst_txn);
    return w.event(ids.txn_handoff, p.data(), p.size());
  }
  uscope_status_t annotate(Writer &w, uint32_t txn, const char *text) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_annotate", "txn_id", txn);
    uint32_t s = 0;
    USCOPE_TRY(uscope::proto::intern(w, "uscope_noc_annotate", "text", text, false, &s));
    Payload p;
    p.u32(txn).u32(s);
    return w.event(ids.annotate, p.data(), p.size());
  }
  uscope_status_t buffer_insert(Writer &w, uint16_t buffer, uint16_t slot, uint32_t txn) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_noc_buffer_insert", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_noc_buffer_insert", buffer, slot);
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_buffer_insert", "txn_id", txn);
    return w.slot_set(b.sid, slot, 0, txn);
  }
  uscope_status_t buffer_set(Writer &w, uint16_t buffer, uint16_t slot, uint16_t field,
                             uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_noc_buffer_set", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_noc_buffer_set", buffer, slot);
    if (USCOPE_UNLIKELY(field >= b.num_fields)) return bad_field("uscope_noc_buffer_set", buffer, field);
    if (USCOPE_UNLIKELY(field == 0 && value >= ids.max_txns))
      return bad_txn("uscope_noc_buffer_set", "txn_id (field 0)", value);
    return w.slot_set(b.sid, slot, field, value);
  }
  uscope_status_t buffer_remove(Writer &w, uint16_t buffer, uint16_t slot) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_noc_buffer_remove", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_noc_buffer_remove", buffer, slot);
    return w.slot_clear(b.sid, slot);
  }
  uscope_status_t counter_add(Writer &w, uint16_t counter, uint64_t delta) const noexcept {
    if (USCOPE_UNLIKELY(counter >= ids.num_counters)) return bad_counter(counter);
    return w.slot_add(counter_ids[counter], 0, 0, delta);
  }
  uscope_status_t txn_set(Writer &w, uint32_t txn, uint16_t field, uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(txn >= ids.max_txns)) return bad_txn("uscope_noc_txn_set", "txn_id", txn);
    if (USCOPE_UNLIKELY(field == 0 || field >= ids.num_txn_fields)) return bad_txn_field(field);
    if (USCOPE_UNLIKELY(field == USCOPE_NOC_FIELD_OPCODE && value >= ids.num_opcodes))
      return bad_enum("uscope_noc_txn_set", "opcode", static_cast<unsigned>(value), ids.num_opcodes);
    return w.slot_set(ids.transactions, static_cast<uint16_t>(txn), field, value);
  }

 private:
  uscope_status_t transition(Writer &w, uint32_t txn, uint8_t stage) const noexcept {
    Payload p;
    p.u32(txn).u8(stage);
    return w.event(ids.stage_transition, p.data(), p.size());
  }
  uscope_status_t bad_txn(const char *fn, const char *what, uint64_t txn) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_enum(const char *fn, const char *what, unsigned v, unsigned count) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_port(const char *fn, const char *what, unsigned port) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_counter(uint16_t counter) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_buffer(const char *fn, uint16_t buffer) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_slot(const char *fn, uint16_t buffer, uint16_t slot) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_field(const char *fn, uint16_t buffer, uint16_t field) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_txn_field(uint16_t field) const noexcept __attribute__((cold, noinline));
};

namespace uscope::proto {
std::unique_ptr<uscope_noc> declare_noc(Declaration &d, const uscope_noc_config_t &cfg);
}  // namespace uscope::proto
