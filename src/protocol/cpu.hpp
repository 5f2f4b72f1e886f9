// The cpu protocol handle (spec chapter "µScope cpu Protocol"): the ids of a
// declared core scope, and the per-cycle calls as inline members so that each
// exported function compiles to its checks plus the writer's inline ops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "protocol/common.hpp"

struct uscope_cpu {
  struct Buffer {
    uint16_t sid;
    uint16_t num_slots;
    uint16_t num_fields;
  };

  std::string scope_name;  // for messages
  uscope_cpu_ids_t ids{};  // ids.buffers / ids.counters point into the vectors below
  std::vector<uint16_t> buffer_ids, counter_ids;
  std::vector<Buffer> buffers;

  uscope_cpu() = default;
  uscope_cpu(const uscope_cpu &) = delete;
  uscope_cpu &operator=(const uscope_cpu &) = delete;

  // ── per-cycle ──
  using Writer = uscope::Writer;

  uscope_status_t fetch(Writer &w, uint32_t id, uint64_t pc, uint32_t bits) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_entity("uscope_cpu_fetch", "entity_id", id);
    const auto slot = static_cast<uint16_t>(id);
    USCOPE_TRY(w.slot_set(ids.entities, slot, USCOPE_CPU_FIELD_ENTITY_ID, id));
    USCOPE_TRY(w.slot_set(ids.entities, slot, USCOPE_CPU_FIELD_PC, pc));
    USCOPE_TRY(w.slot_set(ids.entities, slot, USCOPE_CPU_FIELD_INST_BITS, bits));
    return transition(w, id, 0);
  }
  uscope_status_t stage_transition(Writer &w, uint32_t id, uint8_t stage) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities))
      return bad_entity("uscope_cpu_stage_transition", "entity_id", id);
    if (USCOPE_UNLIKELY(stage >= ids.num_stages))
      return bad_enum("uscope_cpu_stage_transition", "stage", stage, ids.num_stages);
    return transition(w, id, stage);
  }
  uscope_status_t retire(Writer &w, uint32_t id) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_entity("uscope_cpu_retire", "entity_id", id);
    USCOPE_TRY(w.slot_clear(ids.entities, static_cast<uint16_t>(id)));
    return w.slot_add(counter_ids[USCOPE_CPU_COUNTER_COMMITTED_INSNS], 0, 0, 1);
  }
  uscope_status_t flush(Writer &w, uint32_t id, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_entity("uscope_cpu_flush", "entity_id", id);
    if (USCOPE_UNLIKELY(reason >= kNumFlushReasons))
      return bad_enum("uscope_cpu_flush", "reason", reason, kNumFlushReasons);
    uscope::proto::Payload p;
    p.u32(id).u8(reason);
    // The event first, while the entity is still alive in the catalog.
    USCOPE_TRY(w.event(ids.flush, p.data(), p.size()));
    return w.slot_clear(ids.entities, static_cast<uint16_t>(id));
  }
  uscope_status_t annotate(Writer &w, uint32_t id, const char *text) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_entity("uscope_cpu_annotate", "entity_id", id);
    uint32_t s = 0;
    USCOPE_TRY(uscope::proto::intern(w, "uscope_cpu_annotate", "text", text, false, &s));
    uscope::proto::Payload p;
    p.u32(id).u32(s);
    return w.event(ids.annotate, p.data(), p.size());
  }
  uscope_status_t dependency(Writer &w, uint32_t src, uint32_t dst, uint8_t type) const noexcept {
    if (USCOPE_UNLIKELY(src >= ids.max_entities)) return bad_entity("uscope_cpu_dependency", "src_id", src);
    if (USCOPE_UNLIKELY(dst >= ids.max_entities)) return bad_entity("uscope_cpu_dependency", "dst_id", dst);
    if (USCOPE_UNLIKELY(type >= kNumDepTypes))
      return bad_enum("uscope_cpu_dependency", "dep_type", type, kNumDepTypes);
    uscope::proto::Payload p;
    p.u32(src).u32(dst).u8(type);
    return w.event(ids.dependency, p.data(), p.size());
  }
  uscope_status_t stall(Writer &w, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(reason >= ids.num_stall_reasons))
      return bad_enum("uscope_cpu_stall", "reason", reason, ids.num_stall_reasons);
    return w.event(ids.stall, &reason, 1);
  }
  uscope_status_t counter_add(Writer &w, uint16_t counter, uint64_t delta) const noexcept {
    if (USCOPE_UNLIKELY(counter >= ids.num_counters)) return bad_counter(counter);
    return w.slot_add(counter_ids[counter], 0, 0, delta);
  }
  uscope_status_t buffer_insert(Writer &w, uint16_t buffer, uint16_t slot, uint32_t id) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_cpu_buffer_insert", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_cpu_buffer_insert", buffer, slot);
    if (USCOPE_UNLIKELY(id >= ids.max_entities))
      return bad_entity("uscope_cpu_buffer_insert", "entity_id", id);
    return w.slot_set(b.sid, slot, 0, id);
  }
  uscope_status_t buffer_set(Writer &w, uint16_t buffer, uint16_t slot, uint16_t field,
                             uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_cpu_buffer_set", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_cpu_buffer_set", buffer, slot);
    if (USCOPE_UNLIKELY(field >= b.num_fields)) return bad_field("uscope_cpu_buffer_set", buffer, field);
    if (USCOPE_UNLIKELY(field == 0 && value >= ids.max_entities))
      return bad_entity("uscope_cpu_buffer_set", "entity_id (field 0)", value);
    return w.slot_set(b.sid, slot, field, value);
  }
  uscope_status_t buffer_remove(Writer &w, uint16_t buffer, uint16_t slot) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= ids.num_buffers)) return bad_buffer("uscope_cpu_buffer_remove", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("uscope_cpu_buffer_remove", buffer, slot);
    return w.slot_clear(b.sid, slot);
  }
  uscope_status_t entity_set(Writer &w, uint32_t id, uint16_t field, uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_entity("uscope_cpu_entity_set", "entity_id", id);
    if (USCOPE_UNLIKELY(field == 0 || field >= ids.num_entity_fields)) return bad_entity_field(field);
    return w.slot_set(ids.entities, static_cast<uint16_t>(id), field, value);
  }

  static constexpr uint16_t kNumDepTypes = 4;
  static constexpr uint16_t kNumFlushReasons = 4;

 private:
  uscope_status_t transition(Writer &w, uint32_t id, uint8_t stage) const noexcept {
    uscope::proto::Payload p;
    p.u32(id).u8(stage);
    return w.event(ids.stage_transition, p.data(), p.size());
  }
  // Cold paths: the messages name the call, the value and the scope.
  uscope_status_t bad_entity(const char *fn, const char *what, uint64_t id) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_enum(const char *fn, const char *what, unsigned v, unsigned count) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_counter(uint16_t counter) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_buffer(const char *fn, uint16_t buffer) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_slot(const char *fn, uint16_t buffer, uint16_t slot) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_field(const char *fn, uint16_t buffer, uint16_t field) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_entity_field(uint16_t field) const noexcept __attribute__((cold, noinline));
};

namespace uscope::proto {
// Declares the cpu scope on b (throws Error) and returns the filled handle.
std::unique_ptr<uscope_cpu> declare_cpu(Declaration &d, const uscope_cpu_config_t &cfg);
}  // namespace uscope::proto
