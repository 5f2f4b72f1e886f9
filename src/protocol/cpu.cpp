#include "protocol/cpu.hpp"

#include <iterator>
#include <memory>

#include "protocol/cpu_table.hpp"

namespace uscope::proto {

std::unique_ptr<uscope_cpu> declare_cpu(Declaration &d, const uscope_cpu_config_t &c) {
  // ── the config, before anything is added ──
  if (!c.scope_name) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.scope_name is NULL");
  if (!c.isa) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.isa is NULL; cpu.isa is a required property (cpu §8.1)");
  check_names(c.stages, c.num_stages, "cfg.stages", true);
  if (c.max_entities == 0)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.max_entities is 0; the entity catalog needs at least one slot");
  const char *const *stalls = c.stall_reasons;
  uint16_t num_stalls = c.num_stall_reasons;
  if (!stalls) {
    if (num_stalls)
      fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.stall_reasons is NULL but cfg.num_stall_reasons is %u",
           num_stalls);
    stalls = cpu::kDefaultStallReasons;
    num_stalls = std::size(cpu::kDefaultStallReasons);
  }
  check_names(stalls, num_stalls, "cfg.stall_reasons", false);
  if (c.num_buffers && !c.buffers)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.buffers is NULL but cfg.num_buffers is %u", c.num_buffers);
  if (c.num_counters && !c.counters)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.counters is NULL but cfg.num_counters is %u", c.num_counters);
  if (c.num_counters == 0xFFFF)
    fail(USCOPE_ERR_LIMIT,
         "cfg.num_counters is 65,535; with committed_insns that passes the u16 counter index");
  check_extra_fields(c.entity_extra_fields, c.num_entity_extra_fields, "cfg.entity_extra_fields",
                     cpu::kEntities.fields);
  if (c.num_entity_extra_fields > 0xFFFF - cpu::kEntities.fields.size)
    fail(USCOPE_ERR_LIMIT, "cfg.num_entity_extra_fields is %u; a storage has at most 65,535 fields",
         c.num_entity_extra_fields);
  NameSet names;
  names.add(cpu::kEntities.name, "the entity catalog");
  for (const char *n : cpu::kCounters) names.add(n, "a standard counter");
  auto h = std::make_unique<uscope_cpu>();
  h->check_buffers(names, c.buffers, c.num_buffers);
  for (uint16_t i = 0; i < c.num_counters; ++i) names.add(c.counters[i], "cfg.counters[]");

  h->scope_name = c.scope_name;
  h->max_ids = c.max_entities;
  uscope_cpu_ids_t &ids = h->ids;
  ids.struct_size = sizeof ids;
  ids.max_entities = c.max_entities;
  ids.num_stages = c.num_stages;
  ids.num_stall_reasons = num_stalls;

  // ── scope and enums ──
  SchemaBuilder &b = d.b();
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, cpu::kTable.name, c.clock_id);
  const uint16_t sc = ids.scope_id;
  uint8_t enum_ids[cpu::kNumEnums];
  NameList lists[cpu::kNumEnums];
  lists[cpu::kPipelineStage] = {c.stages, c.num_stages};
  lists[cpu::kStallReason] = {stalls, num_stalls};
  d.enums(cpu::kEnums, lists, enum_ids);
  for (uint16_t i = 0; i < cpu::kNumEnums; ++i) ids.*cpu::kEnumIds[i] = enum_ids[i];

  // ── storages (the catalog first, cpu_table.hpp says why), counters ──
  ids.entities = d.storage(cpu::kEntities, sc, c.max_entities, enum_ids, c.entity_extra_fields,
                           c.num_entity_extra_fields);
  ids.num_entity_fields = static_cast<uint16_t>(cpu::kEntities.fields.size + c.num_entity_extra_fields);
  h->add_buffers(b, sc, c.buffers, c.num_buffers);
  for (const char *n : cpu::kCounters) h->counter_ids.push_back(d.counter(n, sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events (§5) ──
  for (uint16_t i = 0; i < std::size(cpu::kEvents); ++i)
    ids.*cpu::kEventIds[i] = d.event(cpu::kEvents[i], sc, enum_ids);

  // ── DUT properties (§8): required first, then the optional ones ──
  auto number = [](uint32_t v) { return v ? std::optional<std::string>(std::to_string(v)) : std::nullopt; };
  auto text = [](const char *v) { return v ? std::optional<std::string>(v) : std::nullopt; };
  const std::optional<std::string> props[] = {
      text(c.dut_name),         USCOPE_CPU_PROTOCOL_VERSION,   c.isa, join(c.stages, c.num_stages),
      number(c.fetch_width),    number(c.commit_width),        text(c.elf_path), text(c.vendor)};
  static_assert(std::size(props) == std::size(cpu::kProperties));
  d.properties(cpu::kProperties, c.scope_name, props);

  h->publish(ids);
  return h;
}

}  // namespace uscope::proto
