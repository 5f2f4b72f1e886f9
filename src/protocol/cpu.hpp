// The cpu protocol handle (spec chapter "µScope cpu Protocol"): the ids of a
// declared core scope, and the per-cycle calls as inline members so that each
// exported function compiles to its checks plus the writer's inline ops.
#pragma once

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "protocol/common.hpp"
#include "protocol/cpu_table.hpp"

struct uscope_cpu : uscope::proto::CatalogScope {
  static constexpr uscope::proto::CatalogWords kWords = {
      uscope::proto::cpu::kEntityFields[USCOPE_CPU_FIELD_ENTITY_ID].name, "an entity", "entity", "entities",
      uscope::proto::cpu::kEntities.slots};

  uscope_cpu_ids_t ids{};  // ids.buffers / ids.counters point into the base's vectors

  uscope_cpu() : CatalogScope("uscope_cpu", kWords) {}

  // ── per-cycle (counter_add and the buffer calls are the base's) ──
  using Writer = uscope::Writer;

  uscope_status_t fetch(Writer &w, uint32_t id, uint64_t pc, uint32_t bits) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("fetch", "entity_id", id);
    const auto slot = static_cast<uint16_t>(id);
    USCOPE_TRY(uscope::proto::set_fields(w, ids.entities, slot, USCOPE_CPU_FIELD_ENTITY_ID, id, pc, bits));
    return transition(w, id, 0);
  }
  uscope_status_t stage_transition(Writer &w, uint32_t id, uint8_t stage) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("stage_transition", "entity_id", id);
    if (USCOPE_UNLIKELY(stage >= ids.num_stages))
      return bad_enum("stage_transition", "stage", stage, ids.num_stages);
    return transition(w, id, stage);
  }
  uscope_status_t retire(Writer &w, uint32_t id) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("retire", "entity_id", id);
    USCOPE_TRY(w.slot_clear(ids.entities, static_cast<uint16_t>(id)));
    return w.slot_add(counter_ids[USCOPE_CPU_COUNTER_COMMITTED_INSNS], 0, 0, 1);
  }
  uscope_status_t flush(Writer &w, uint32_t id, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("flush", "entity_id", id);
    if (USCOPE_UNLIKELY(reason >= kNumFlushReasons))
      return bad_enum("flush", "reason", reason, kNumFlushReasons);
    // The event first, while the entity is still alive in the catalog.
    USCOPE_TRY(uscope::proto::emit(w, ids.flush, id, reason));
    return w.slot_clear(ids.entities, static_cast<uint16_t>(id));
  }
  uscope_status_t annotate(Writer &w, uint32_t id, const char *text) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("annotate", "entity_id", id);
    uint32_t s = 0;
    USCOPE_TRY(uscope::proto::intern(w, "uscope_cpu_annotate", "text", text, false, &s));
    return uscope::proto::emit(w, ids.annotate, id, s);
  }
  uscope_status_t dependency(Writer &w, uint32_t src, uint32_t dst, uint8_t type) const noexcept {
    if (USCOPE_UNLIKELY(src >= ids.max_entities)) return bad_id("dependency", "src_id", src);
    if (USCOPE_UNLIKELY(dst >= ids.max_entities)) return bad_id("dependency", "dst_id", dst);
    if (USCOPE_UNLIKELY(type >= kNumDepTypes)) return bad_enum("dependency", "dep_type", type, kNumDepTypes);
    return uscope::proto::emit(w, ids.dependency, src, dst, type);
  }
  uscope_status_t stall(Writer &w, uint8_t reason) const noexcept {
    if (USCOPE_UNLIKELY(reason >= ids.num_stall_reasons))
      return bad_enum("stall", "reason", reason, ids.num_stall_reasons);
    return w.event(ids.stall, &reason, 1);
  }
  uscope_status_t entity_set(Writer &w, uint32_t id, uint16_t field, uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(id >= ids.max_entities)) return bad_id("entity_set", "entity_id", id);
    if (USCOPE_UNLIKELY(field == 0 || field >= ids.num_entity_fields))
      return bad_catalog_field("entity_set", field, ids.num_entity_fields);
    return w.slot_set(ids.entities, static_cast<uint16_t>(id), field, value);
  }

  static constexpr uint16_t kNumDepTypes = std::size(uscope::proto::cpu::kDepTypes);
  static constexpr uint16_t kNumFlushReasons = std::size(uscope::proto::cpu::kFlushReasons);

 private:
  uscope_status_t transition(Writer &w, uint32_t id, uint8_t stage) const noexcept {
    return uscope::proto::emit(w, ids.stage_transition, id, stage);
  }
};

namespace uscope::proto {
// Declares the cpu scope on b (throws Error) and returns the filled handle.
std::unique_ptr<uscope_cpu> declare_cpu(Declaration &d, const uscope_cpu_config_t &cfg);
}  // namespace uscope::proto
