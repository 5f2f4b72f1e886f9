#include "protocol/cpu.hpp"

#include <memory>

namespace uscope::proto {

namespace {
// Spec cpu §5.3, §5.4 and the common stall causes of §5.5.
const char *const kDepTypes[] = {"raw", "war", "waw", "structural"};
const char *const kFlushReasons[] = {"mispredict", "exception", "interrupt", "pipeline_clear"};
const char *const kDefaultStallReasons[] = {"rob_full",   "iq_full",     "lq_full",       "sq_full",
                                            "fetch_miss", "dcache_miss", "frontend_stall"};
const char *const kEntityFields[] = {"entity_id", "pc", "inst_bits"};
}  // namespace

std::unique_ptr<uscope_cpu> declare_cpu(Declaration &d, const uscope_cpu_config_t &c) {
  static_assert(uscope_cpu::kNumDepTypes == sizeof kDepTypes / sizeof *kDepTypes);
  static_assert(uscope_cpu::kNumFlushReasons == sizeof kFlushReasons / sizeof *kFlushReasons);

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
    stalls = kDefaultStallReasons;
    num_stalls = sizeof kDefaultStallReasons / sizeof *kDefaultStallReasons;
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
                     kEntityFields, 3);
  if (c.num_entity_extra_fields > 0xFFFF - 3)
    fail(USCOPE_ERR_LIMIT, "cfg.num_entity_extra_fields is %u; a storage has at most 65,535 fields",
         c.num_entity_extra_fields);
  NameSet names;
  names.add("entities", "the entity catalog");
  names.add("committed_insns", "the committed_insns counter");
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
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, "cpu", c.clock_id);
  const uint16_t sc = ids.scope_id;
  ids.pipeline_stage_enum = d.shared_enum("pipeline_stage", c.stages, c.num_stages);
  ids.dep_type_enum = d.shared_enum("dep_type", kDepTypes, uscope_cpu::kNumDepTypes);
  ids.flush_reason_enum = d.shared_enum("flush_reason", kFlushReasons, uscope_cpu::kNumFlushReasons);
  ids.stall_reason_enum = d.shared_enum("stall_reason", stalls, num_stalls);

  // ── storages: the catalog first, so that it is the scope's first sparse
  // non-buffer storage (the trace summary counts its field-0 sets as
  // instructions, COMPAT 16) ──
  std::vector<uscope_field_t> f = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                                   {"pc", USCOPE_FT_U64, 0, 0, 0},
                                   {"inst_bits", USCOPE_FT_U32, 0, 0, 0}};
  f.insert(f.end(), c.entity_extra_fields, c.entity_extra_fields + c.num_entity_extra_fields);
  ids.entities = b.add_storage("entities", sc, c.max_entities, USCOPE_SF_SPARSE, f.data(),
                               static_cast<uint16_t>(f.size()), nullptr, 0);
  ids.num_entity_fields = static_cast<uint16_t>(f.size());
  h->add_buffers(b, sc, c.buffers, c.num_buffers);
  h->counter_ids.push_back(d.counter("committed_insns", sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events (§5) ──
  const uscope_field_t st[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                               {"stage", USCOPE_FT_ENUM, ids.pipeline_stage_enum, 0, 0}};
  ids.stage_transition = b.add_event("stage_transition", sc, st, 2);
  const uscope_field_t an[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                               {"text", USCOPE_FT_STRING_REF, 0, 0, 0}};
  ids.annotate = b.add_event("annotate", sc, an, 2);
  // §5.3 names the third field dep_type (the §10.2 example says "type"; the
  // normative table wins).
  const uscope_field_t dep[] = {{"src_id", USCOPE_FT_U32, 0, 0, 0},
                                {"dst_id", USCOPE_FT_U32, 0, 0, 0},
                                {"dep_type", USCOPE_FT_ENUM, ids.dep_type_enum, 0, 0}};
  ids.dependency = b.add_event("dependency", sc, dep, 3);
  const uscope_field_t fl[] = {{"entity_id", USCOPE_FT_U32, 0, 0, 0},
                               {"reason", USCOPE_FT_ENUM, ids.flush_reason_enum, 0, 0}};
  ids.flush = b.add_event("flush", sc, fl, 2);
  const uscope_field_t sl[] = {{"reason", USCOPE_FT_ENUM, ids.stall_reason_enum, 0, 0}};
  ids.stall = b.add_event("stall", sc, sl, 1);

  // ── DUT properties (§8): required first, then the optional ones ──
  if (c.dut_name) d.property("dut_name", c.dut_name);
  d.property("cpu.protocol_version", USCOPE_CPU_PROTOCOL_VERSION);
  d.property("cpu.isa", c.isa);
  d.property("cpu.pipeline_stages", join(c.stages, c.num_stages));
  if (c.fetch_width) d.property("cpu.fetch_width", std::to_string(c.fetch_width));
  if (c.commit_width) d.property("cpu.commit_width", std::to_string(c.commit_width));
  if (c.elf_path) d.property("cpu.elf_path", c.elf_path);
  if (c.vendor) d.property("cpu.vendor", c.vendor);

  h->publish(ids);
  return h;
}

}  // namespace uscope::proto
