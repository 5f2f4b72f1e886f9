// The cpu protocol helpers (include/uscope/protocols.h): the declared schema
// follows the spec's cpu chapter, a realistic instruction sequence reads back
// through the public reader API exactly, and every misuse gets its status.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::test::TempDir;
using namespace uscope::test::proto;
using Strings = std::vector<std::string>;

const char *const kStages[] = {"fetch", "decode",  "rename",   "dispatch",
                               "issue", "execute", "complete", "retire"};
enum : uint8_t { kFetch, kDecode, kRename, kDispatch, kIssue, kExecute, kComplete, kRetire };
constexpr uint16_t kMaxEntities = 16;

// A BOOM-like core: rob (8 slots, completed BOOL), iq (4 slots), a bp_misses
// counter, a thread_id entity field.
struct Core {
  uscope_field_t rob_extra[1] = {{"completed", USCOPE_FT_BOOL, 0, 0, 0}};
  uscope_cpu_buffer_def_t buffers[2] = {{"rob", 8, rob_extra, 1}, {"iq", 4, nullptr, 0}};
  const char *counters[1] = {"bp_misses"};
  uscope_field_t entity_extra[1] = {{"thread_id", USCOPE_FT_U16, 0, 0, 0}};
  uscope_cpu_config_t cfg{};
  Core(const char *name = "core0", uint16_t parent = 0) {
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = name;
    cfg.parent_scope_id = parent;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.isa = "RV64GC";
    cfg.stages = kStages;
    cfg.num_stages = 8;
    cfg.max_entities = kMaxEntities;
    cfg.buffers = buffers;
    cfg.num_buffers = 2;
    cfg.counters = counters;
    cfg.num_counters = 1;
    cfg.fetch_width = 4;
    cfg.commit_width = 2;
    cfg.elf_path = "/workspace/fw.elf";
    cfg.vendor = "acme";
    cfg.dut_name = "boom_tile0";
    cfg.entity_extra_fields = entity_extra;
    cfg.num_entity_extra_fields = 1;
  }
};

// The Core declared and a writer open on a fresh file.
struct CpuTrace : OpenTrace<Core, uscope_cpu_t> {
  CpuTrace() : OpenTrace("uscope_cpu", uscope_cpu_declare) {}
};

TEST(ProtocolCpu, DeclaresTheSchemaOfTheSpecChapter) {
  TempDir dir("uscope_cpu");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema();
  Core core;
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &core.cfg), USCOPE_OK) << uscope_last_error();
  const uscope_cpu_ids_t ids = ids_of(cpu);
  uscope_writer_t *w = nullptr;
  const uscope_dut_property_t extra[] = {{"run", "7"}};
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, extra, 1, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(path);
  ASSERT_TRUE(t.ok());
  // Scope "core0", protocol "cpu", under the root.
  const uscope_scope_info_t sc = t.scope(ids.scope_id);
  EXPECT_STREQ(sc.name, "core0");
  EXPECT_STREQ(sc.protocol, "cpu");
  EXPECT_EQ(sc.parent_id, 0);
  EXPECT_EQ(sc.clock_id, USCOPE_CLOCK_INHERIT);

  // Enums (§5): names and standard values.
  EXPECT_EQ(t.enum_name(ids.pipeline_stage_enum), "pipeline_stage");
  EXPECT_EQ(t.enum_values(ids.pipeline_stage_enum), Strings(kStages, kStages + 8));
  EXPECT_EQ(t.enum_name(ids.dep_type_enum), "dep_type");
  EXPECT_EQ(t.enum_values(ids.dep_type_enum), (Strings{"raw", "war", "waw", "structural"}));
  EXPECT_EQ(t.enum_name(ids.flush_reason_enum), "flush_reason");
  EXPECT_EQ(t.enum_values(ids.flush_reason_enum),
            (Strings{"mispredict", "exception", "interrupt", "pipeline_clear"}));
  EXPECT_EQ(t.enum_name(ids.stall_reason_enum), "stall_reason");
  EXPECT_EQ(t.enum_values(ids.stall_reason_enum), (Strings{"rob_full", "iq_full", "lq_full", "sq_full",
                                                           "fetch_miss", "dcache_miss", "frontend_stall"}));
  EXPECT_EQ(t.counts().enums, 4u);

  // Entity catalog (§3): sparse, not a buffer, the required fields first.
  const uint16_t ent = t.storage("entities", ids.scope_id);
  ASSERT_EQ(ent, ids.entities);
  EXPECT_EQ(t.storage_info(ent).flags, USCOPE_SF_SPARSE);
  EXPECT_EQ(t.storage_info(ent).num_slots, kMaxEntities);
  EXPECT_EQ(shape(t.storage_fields(ent)),
            (Strings{"entity_id:U32", "pc:U64", "inst_bits:U32", "thread_id:U16"}));
  // Buffers (§4.2): sparse, SF_BUFFER, entity_id U32 first.
  ASSERT_EQ(ids.num_buffers, 2);
  const uint16_t rob = t.storage("rob", ids.scope_id);
  ASSERT_EQ(rob, ids.buffers[0]);
  EXPECT_EQ(t.storage_info(rob).flags, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER);
  EXPECT_EQ(t.storage_info(rob).num_slots, 8);
  EXPECT_EQ(shape(t.storage_fields(rob)), (Strings{"entity_id:U32", "completed:BOOL"}));
  EXPECT_EQ(t.storage("iq", ids.scope_id), ids.buffers[1]);
  EXPECT_EQ(shape(t.storage_fields(ids.buffers[1])), Strings{"entity_id:U32"});
  // Counters (§6): 1-slot dense storages with count U64; committed_insns first.
  ASSERT_EQ(ids.num_counters, 2);
  const char *const counter_names[] = {"committed_insns", "bp_misses"};
  for (int i = 0; i < 2; ++i) {
    const uint16_t c = t.storage(counter_names[i], ids.scope_id);
    ASSERT_EQ(c, ids.counters[i]) << counter_names[i];
    EXPECT_EQ(t.storage_info(c).flags, 0);
    EXPECT_EQ(t.storage_info(c).num_slots, 1);
    EXPECT_EQ(shape(t.storage_fields(c)), Strings{"count:U64"});
  }
  // Events (§5).
  EXPECT_EQ(t.event_type("stage_transition", ids.scope_id), ids.stage_transition);
  EXPECT_EQ(shape(t.event_fields(ids.stage_transition)), (Strings{"entity_id:U32", "stage:ENUM"}));
  EXPECT_EQ(t.event_fields(ids.stage_transition)[1].enum_id, ids.pipeline_stage_enum);
  EXPECT_EQ(t.event_type("annotate", ids.scope_id), ids.annotate);
  EXPECT_EQ(shape(t.event_fields(ids.annotate)), (Strings{"entity_id:U32", "text:STRING_REF"}));
  EXPECT_EQ(t.event_type("dependency", ids.scope_id), ids.dependency);
  EXPECT_EQ(shape(t.event_fields(ids.dependency)), (Strings{"src_id:U32", "dst_id:U32", "dep_type:ENUM"}));
  EXPECT_EQ(t.event_fields(ids.dependency)[2].enum_id, ids.dep_type_enum);
  EXPECT_EQ(t.event_type("flush", ids.scope_id), ids.flush);
  EXPECT_EQ(shape(t.event_fields(ids.flush)), (Strings{"entity_id:U32", "reason:ENUM"}));
  EXPECT_EQ(t.event_fields(ids.flush)[1].enum_id, ids.flush_reason_enum);
  EXPECT_EQ(t.event_type("stall", ids.scope_id), ids.stall);
  EXPECT_EQ(shape(t.event_fields(ids.stall)), Strings{"reason:ENUM"});
  EXPECT_EQ(t.event_fields(ids.stall)[0].enum_id, ids.stall_reason_enum);
  EXPECT_EQ(t.counts().summary_fields, 0u);  // §7 is left out: docs/protocols.md

  // DUT properties (§8), required first, then the open call's own.
  using Props = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(t.dut_all(),
            (Props{{"dut_name", "boom_tile0"},
                   {"cpu.protocol_version", "0.1"},
                   {"cpu.isa", "RV64GC"},
                   {"cpu.pipeline_stages", "fetch,decode,rename,dispatch,issue,execute,complete,retire"},
                   {"cpu.fetch_width", "4"},
                   {"cpu.commit_width", "2"},
                   {"cpu.elf_path", "/workspace/fw.elf"},
                   {"cpu.vendor", "acme"},
                   {"run", "7"}}));
  uscope_cpu_free(cpu);
}

TEST(ProtocolCpu, OptionalPropertiesAreOmittedAndIdsCopyToTheirSize) {
  TempDir dir("uscope_cpu");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema();
  uscope_cpu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = "core";
  c.isa = "RV32I";
  const char *const stages[] = {"fetch", "decode", "execute", "memory", "writeback"};
  c.stages = stages;
  c.num_stages = 5;
  c.max_entities = 8;
  c.clock_id = USCOPE_CLOCK_INHERIT;
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &c), USCOPE_OK) << uscope_last_error();
  // An ids struct of an older, shorter layout gets its prefix only.
  uscope_cpu_ids_t small{};
  small.struct_size = 8;
  small.num_counters = 77;
  ASSERT_EQ(uscope_cpu_ids(cpu, &small), USCOPE_OK);
  EXPECT_EQ(small.struct_size, 8u);
  EXPECT_EQ(small.scope_id, 1);
  EXPECT_EQ(small.num_counters, 77);  // past struct_size: untouched
  small.struct_size = 4;
  EXPECT_EQ(uscope_cpu_ids(cpu, &small), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_cpu_ids(nullptr, &small), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_cpu_ids(cpu, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  const uscope_cpu_ids_t ids = ids_of(cpu);
  EXPECT_EQ(ids.num_buffers, 0);
  EXPECT_EQ(ids.num_counters, 1);
  EXPECT_EQ(ids.num_entity_fields, 3);

  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  Trace t(path);
  using Props = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(t.dut_all(), (Props{{"cpu.protocol_version", "0.1"},
                                {"cpu.isa", "RV32I"},
                                {"cpu.pipeline_stages", "fetch,decode,execute,memory,writeback"}}));
  EXPECT_EQ(t.counts().storages, 2u);  // entities, committed_insns
  uscope_cpu_free(cpu);
}

TEST(ProtocolCpu, ARealisticSequenceReadsBackExactly) {
  CpuTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_cpu_t *cpu = o.h;
  const uscope_cpu_ids_t ids = ids_of(cpu);

  constexpr uint16_t ROB = 0, BP_MISSES = 1;
  auto cycle = [&](uint64_t c) { ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK); };
  auto end = [&] { ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK) << uscope_writer_error(w); };
  // Three instructions: e0 retires, e1 is still in flight at the end, e2 (a
  // wrong-path instruction) is flushed.
  cycle(0);
  ASSERT_EQ(uscope_cpu_fetch(w, cpu, 0, 0x80000000u, 0x00100093u), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_entity_set(w, cpu, 0, 3, 1), USCOPE_OK);  // thread_id
  end();
  cycle(1);
  ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 0, kDecode), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(w, cpu, 1, 0x80000004u, 0x00208133u), USCOPE_OK);
  end();
  cycle(2);
  ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 0, kExecute), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, ROB, 3, 0), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 1, kDecode), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_dependency(w, cpu, 0, 1, USCOPE_CPU_DEP_RAW), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_annotate(w, cpu, 1, "add x2, x1, x2"), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(w, cpu, 15, 0x80000100u, 0xdeadbeefu), USCOPE_OK);
  end();
  cycle(3);
  ASSERT_EQ(uscope_cpu_stall(w, cpu, 0), USCOPE_OK);                  // rob_full
  ASSERT_EQ(uscope_cpu_buffer_set(w, cpu, ROB, 3, 1, 1), USCOPE_OK);  // completed
  ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, 1, 0, 1), USCOPE_OK);    // iq[0] = e1
  end();
  cycle(4);
  ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 0, kRetire), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_retire(w, cpu, 0), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_buffer_remove(w, cpu, ROB, 3), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_flush(w, cpu, 15, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_counter_add(w, cpu, BP_MISSES, 1), USCOPE_OK);
  end();
  cycle(5);
  ASSERT_EQ(uscope_cpu_counter_add(w, cpu, USCOPE_CPU_COUNTER_COMMITTED_INSNS, 2), USCOPE_OK);
  end();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(o.path);
  ASSERT_TRUE(t.ok());
  const auto ev = t.events();
  struct Want {
    uint64_t cycle;
    uint16_t type;
    std::vector<std::pair<const char *, uint64_t>> f;
  };
  const std::vector<Want> want = {
      {0, ids.stage_transition, {{"entity_id", 0}, {"stage", kFetch}}},
      {1, ids.stage_transition, {{"entity_id", 0}, {"stage", kDecode}}},
      {1, ids.stage_transition, {{"entity_id", 1}, {"stage", kFetch}}},
      {2, ids.stage_transition, {{"entity_id", 0}, {"stage", kExecute}}},
      {2, ids.stage_transition, {{"entity_id", 1}, {"stage", kDecode}}},
      {2, ids.dependency, {{"src_id", 0}, {"dst_id", 1}, {"dep_type", USCOPE_CPU_DEP_RAW}}},
      {2, ids.annotate, {{"entity_id", 1}}},
      {2, ids.stage_transition, {{"entity_id", 15}, {"stage", kFetch}}},
      {3, ids.stall, {{"reason", 0}}},
      {4, ids.stage_transition, {{"entity_id", 0}, {"stage", kRetire}}},
      {4, ids.flush, {{"entity_id", 15}, {"reason", USCOPE_CPU_FLUSH_MISPREDICT}}},
  };
  ASSERT_EQ(ev.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ev[i].time_ps, want[i].cycle * 1000);
    EXPECT_EQ(ev[i].type_id, want[i].type) << ev[i].name;
    EXPECT_EQ(ev[i].f.size(), t.event_fields(want[i].type).size());
    for (const auto &[k, v] : want[i].f) EXPECT_EQ(ev[i][k], v) << k;
  }
  EXPECT_EQ(t.str(ev[6]["text"]), "add x2, x1, x2");

  // State at cycle 3: three entities in flight with their fields, e0 in the
  // ROB (completed), e1 in the IQ.
  const uscope_state_t *s3 = t.state_at(3000);
  EXPECT_EQ(occupancy(s3, ids.entities), 3u);
  EXPECT_EQ(field(s3, ids.entities, 1, USCOPE_CPU_FIELD_ENTITY_ID), 1u);
  EXPECT_EQ(field(s3, ids.entities, 1, USCOPE_CPU_FIELD_PC), 0x80000004u);
  EXPECT_EQ(field(s3, ids.entities, 1, USCOPE_CPU_FIELD_INST_BITS), 0x00208133u);
  EXPECT_EQ(field(s3, ids.entities, 0, 3), 1u);  // thread_id
  EXPECT_EQ(field(s3, ids.entities, 15, USCOPE_CPU_FIELD_PC), 0x80000100u);
  EXPECT_TRUE(valid(s3, ids.buffers[ROB], 3));
  EXPECT_EQ(field(s3, ids.buffers[ROB], 3, 0), 0u);
  EXPECT_EQ(field(s3, ids.buffers[ROB], 3, 1), 1u);
  EXPECT_EQ(field(s3, ids.buffers[1], 0, 0), 1u);
  EXPECT_EQ(counter(s3, ids.counters[0]), 0u);
  // At the end: e0 retired (committed 1 + 2 added), e15 flushed, e1 left.
  const uscope_state_t *s5 = t.state_at(5000);
  EXPECT_EQ(occupancy(s5, ids.entities), 1u);
  EXPECT_TRUE(valid(s5, ids.entities, 1));
  EXPECT_FALSE(valid(s5, ids.entities, 0));
  EXPECT_FALSE(valid(s5, ids.entities, 15));
  EXPECT_EQ(occupancy(s5, ids.buffers[ROB]), 0u);
  EXPECT_EQ(occupancy(s5, ids.buffers[1]), 1u);
  EXPECT_EQ(counter(s5, ids.counters[0]), 3u);
  EXPECT_EQ(counter(s5, ids.counters[1]), 1u);
  // The trace summary sees committed_insns as a counter (COMPAT 16).
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  ASSERT_EQ(uscope_reader_summary(t.get(), &sum), USCOPE_OK);
  EXPECT_EQ(sum.present, 1u);
  EXPECT_EQ(sum.num_counters, 2u);
  EXPECT_EQ(sum.total_instructions, 3u);  // the fetches: field-0 sets of the catalog
  uscope_cpu_free(cpu);
}

TEST(ProtocolCpu, ArgumentErrorsAreSpecificWriteNothingAndAreNotSticky) {
  CpuTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_cpu_t *cpu = o.h;
  const uscope_cpu_ids_t ids = ids_of(cpu);
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);

  refused(uscope_cpu_fetch(w, cpu, kMaxEntities, 0, 0), USCOPE_ERR_UNKNOWN_SLOT,
          "uscope_cpu_fetch: entity_id 16 is not an entity of scope \"core0\" (max_entities 16)");
  refused(uscope_cpu_stage_transition(w, cpu, 0, 8), USCOPE_ERR_VALUE_RANGE,
          "uscope_cpu_stage_transition: stage 8 is out of range (scope \"core0\" has 8)");
  refused(uscope_cpu_stage_transition(w, cpu, 99, 0), USCOPE_ERR_UNKNOWN_SLOT, "entity_id 99");
  refused(uscope_cpu_retire(w, cpu, 1000), USCOPE_ERR_UNKNOWN_SLOT, "uscope_cpu_retire: entity_id 1000");
  refused(uscope_cpu_flush(w, cpu, 0, 4), USCOPE_ERR_VALUE_RANGE, "uscope_cpu_flush: reason 4");
  refused(uscope_cpu_annotate(w, cpu, 0, nullptr), USCOPE_ERR_INVALID_ARGUMENT,
          "uscope_cpu_annotate: text is NULL");
  refused(uscope_cpu_dependency(w, cpu, 0, 16, 0), USCOPE_ERR_UNKNOWN_SLOT, "dst_id 16");
  refused(uscope_cpu_dependency(w, cpu, 0, 1, 4), USCOPE_ERR_VALUE_RANGE, "dep_type 4");
  refused(uscope_cpu_stall(w, cpu, 7), USCOPE_ERR_VALUE_RANGE, "uscope_cpu_stall: reason 7 is out of range");
  refused(uscope_cpu_counter_add(w, cpu, 2, 1), USCOPE_ERR_UNKNOWN_STORAGE,
          "counter 2 of scope \"core0\", which has 2");
  refused(uscope_cpu_buffer_insert(w, cpu, 2, 0, 0), USCOPE_ERR_UNKNOWN_STORAGE, "buffer 2");
  refused(uscope_cpu_buffer_insert(w, cpu, 0, 8, 0), USCOPE_ERR_UNKNOWN_SLOT, "slot 8 of buffer 0");
  refused(uscope_cpu_buffer_insert(w, cpu, 0, 0, 16), USCOPE_ERR_UNKNOWN_SLOT, "entity_id 16");
  refused(uscope_cpu_buffer_set(w, cpu, 0, 0, 2, 1), USCOPE_ERR_UNKNOWN_FIELD, "field 2 of buffer 0");
  refused(uscope_cpu_buffer_set(w, cpu, 1, 0, 0, 16), USCOPE_ERR_UNKNOWN_SLOT, "entity_id (field 0) 16");
  refused(uscope_cpu_buffer_remove(w, cpu, 1, 4), USCOPE_ERR_UNKNOWN_SLOT, "slot 4 of buffer 1");
  refused(uscope_cpu_entity_set(w, cpu, 0, 0, 5), USCOPE_ERR_UNKNOWN_FIELD, "fields 1..3 may be set");
  refused(uscope_cpu_entity_set(w, cpu, 0, 4, 5), USCOPE_ERR_UNKNOWN_FIELD, "field 4 of the entities");
  refused(uscope_cpu_fetch(nullptr, cpu, 0, 0, 0), USCOPE_ERR_INVALID_ARGUMENT,
          "uscope_cpu_fetch: writer handle is NULL");
  refused(uscope_cpu_retire(w, nullptr, 0), USCOPE_ERR_INVALID_ARGUMENT,
          "uscope_cpu_retire: protocol handle is NULL");

  // None of it reached the writer: no sticky error, the cycle goes on.
  EXPECT_STREQ(uscope_writer_error(w), "");
  ASSERT_EQ(uscope_cpu_fetch(w, cpu, 2, 0x1000, 0x13), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  uscope_writer_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.errors, 0u);
  EXPECT_EQ(st.ops, 3u);
  EXPECT_EQ(st.events, 1u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  Trace t(o.path);
  const auto ev = t.events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type_id, ids.stage_transition);
  EXPECT_EQ(ev[0]["entity_id"], 2u);
  uscope_cpu_free(cpu);
}

TEST(ProtocolCpu, WriterErrorsPropagateAndStaySticky) {
  CpuTrace o;
  ASSERT_NO_FATAL_FAILURE(o.open());
  uscope_writer_t *w = o.w;
  uscope_cpu_t *cpu = o.h;
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(w, cpu, 0, 0x1000, 0x13), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  // Outside a cycle: the writer's BAD_STATE, sticky from then on.
  EXPECT_EQ(uscope_cpu_retire(w, cpu, 0), USCOPE_ERR_BAD_STATE);
  EXPECT_TRUE(contains(uscope_writer_error(w), "outside a begin_cycle/end_cycle pair"))
      << uscope_writer_error(w);
  EXPECT_EQ(uscope_cpu_stall(w, cpu, 1), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_begin_cycle(w, 1000), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_cpu_annotate(w, cpu, 0, "late"), USCOPE_ERR_BAD_STATE);
  // An argument error is still reported as such, before the writer is asked.
  EXPECT_EQ(uscope_cpu_fetch(w, cpu, 99, 0, 0), USCOPE_ERR_UNKNOWN_SLOT);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_BAD_STATE);
  Trace t(o.path);  // finalized with the cycle before the error
  EXPECT_EQ(t.events().size(), 1u);
  EXPECT_EQ(occupancy(t.state_at(0), ids_of(cpu).entities), 1u);
  uscope_cpu_free(cpu);
}

TEST(ProtocolCpu, BadConfigsAreRefusedAndLeaveTheSchemaUnchanged) {
  uscope_schema_t *s = base_schema();
  uscope_cpu_t *cpu = reinterpret_cast<uscope_cpu_t *>(0x1);
  const DeclareRefusals<Core, uscope_cpu_t> refused(uscope_cpu_declare, "uscope_cpu_declare", s);
  {
    Core k;
    EXPECT_EQ(uscope_cpu_declare(nullptr, &cpu, &k.cfg), USCOPE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(uscope_cpu_declare(s, &cpu, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(uscope_last_error(), "cfg is NULL"));
    EXPECT_EQ(uscope_cpu_declare(s, nullptr, &k.cfg), USCOPE_ERR_INVALID_ARGUMENT);
  }
  refused.after([](Core &k) { k.cfg.struct_size = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "struct_size is 0");
  refused.after([](Core &k) { k.cfg.struct_size = sizeof k.cfg + 8; }, USCOPE_ERR_INVALID_ARGUMENT,
                "set it to sizeof");
  refused.after([](Core &k) { k.cfg.scope_name = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.scope_name is NULL");
  refused.after([](Core &k) { k.cfg.isa = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.isa is NULL");
  refused.after([](Core &k) { k.cfg.num_stages = 0; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.stages: no names");
  refused.after([](Core &k) { k.cfg.stages = nullptr; }, USCOPE_ERR_INVALID_ARGUMENT, "cfg.stages is NULL");
  {
    std::vector<std::string> names;
    for (int i = 0; i < 256; ++i) names.push_back("s" + std::to_string(i));
    std::vector<const char *> p;
    for (auto &n : names) p.push_back(n.c_str());
    Core k;
    k.cfg.stages = p.data();
    k.cfg.num_stages = 256;
    refused(k.cfg, USCOPE_ERR_LIMIT, "256 names; an enum has at most 255");
    // 255, the most an ENUM field can name, is fine (on a schema of its own).
    uscope_schema_t *s255 = base_schema();
    k.cfg.num_stages = 255;
    uscope_cpu_t *c255 = nullptr;
    EXPECT_EQ(uscope_cpu_declare(s255, &c255, &k.cfg), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(ids_of(c255).num_stages, 255);
    uscope_cpu_free(c255);
    uscope_schema_free(s255);
  }
  // A second stage that has the list separator in it, repeats the first or is empty.
  const struct {
    const char *second, *msg;
  } bad_stages[] = {
      {"decode,rename", "cfg.stages[1] \"decode,rename\" contains a comma"},
      {"fetch", "cfg.stages[1] \"fetch\" repeats cfg.stages[0]"},
      {"", "cfg.stages[1] is empty"},
  };
  for (const auto &b : bad_stages) {
    const char *const st[] = {"fetch", b.second};
    Core k;
    k.cfg.stages = st;
    k.cfg.num_stages = 2;
    refused(k.cfg, USCOPE_ERR_INVALID_ARGUMENT, b.msg);
  }
  refused.after([](Core &k) { k.cfg.max_entities = 0; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.max_entities is 0");
  refused.after([](Core &k) { k.buffers[1].num_slots = 0; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.buffers[1] \"iq\" has 0 slots");
  refused.after([](Core &k) { k.buffers[1].name = "entities"; }, USCOPE_ERR_INVALID_ARGUMENT,
                "\"entities\": the scope has a storage of that name");
  refused.after([](Core &k) { k.counters[0] = "rob"; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.counters[] \"rob\"");
  refused.after([](Core &k) { k.rob_extra[0].name = "entity_id"; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.buffers[0].extra_fields[0] is named \"entity_id\", a field the protocol defines itself");
  refused.after([](Core &k) { k.entity_extra[0].name = "pc"; }, USCOPE_ERR_INVALID_ARGUMENT,
                "cfg.entity_extra_fields[0] is named \"pc\"");
  refused.after([](Core &k) { k.rob_extra[0].type = 0x42; }, USCOPE_ERR_SCHEMA, "unknown type 0x42");
  refused.after(
      [](Core &k) {
        k.cfg.stall_reasons = nullptr;
        k.cfg.num_stall_reasons = 3;
      },
      USCOPE_ERR_INVALID_ARGUMENT, "cfg.stall_reasons is NULL but");
  {
    Core k("core0", 7);
    refused(k.cfg, USCOPE_ERR_SCHEMA, "parent scope 7 does not exist");
  }
  refused.after([](Core &k) { k.cfg.clock_id = 3; }, USCOPE_ERR_SCHEMA, "clock 3 does not exist");

  // Nothing of the refused declarations stayed: the next one gets scope 1 and
  // the schema holds exactly one core.
  Core good;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &good.cfg), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(ids_of(cpu).scope_id, 1);
  EXPECT_EQ(ids_of(cpu).entities, 0);
  EXPECT_EQ(ids_of(cpu).pipeline_stage_enum, 0);
  uscope_cpu_free(cpu);
  uscope_cpu_free(nullptr);  // a no-op
  uscope_schema_free(s);
}

TEST(ProtocolCpu, TwoCoresShareEnumsAndPropertiesAndMustAgreeOnThem) {
  TempDir dir("uscope_cpu");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema();
  uint16_t cluster = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &cluster, "cpu_cluster", 0, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  Core k0("core0", cluster), k1("core1", cluster);
  uscope_cpu_t *c0 = nullptr, *c1 = nullptr, *c2 = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &c0, &k0.cfg), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_cpu_declare(s, &c1, &k1.cfg), USCOPE_OK) << uscope_last_error();
  const uscope_cpu_ids_t i0 = ids_of(c0), i1 = ids_of(c1);
  EXPECT_EQ(i0.pipeline_stage_enum, i1.pipeline_stage_enum);
  EXPECT_EQ(i0.dep_type_enum, i1.dep_type_enum);
  EXPECT_NE(i0.entities, i1.entities);
  // A third core whose stages differ cannot share cpu.pipeline_stages (§8 has
  // one per trace); nothing of it is left behind.
  const char *const other[] = {"fetch", "decode", "execute"};
  Core k2("core2", cluster);
  k2.cfg.stages = other;
  k2.cfg.num_stages = 3;
  EXPECT_EQ(uscope_cpu_declare(s, &c2, &k2.cfg), USCOPE_ERR_SCHEMA);
  EXPECT_TRUE(contains(uscope_last_error(), "DUT property \"cpu.pipeline_stages\" is \"fetch,decode,rename"))
      << uscope_last_error();
  EXPECT_EQ(c2, nullptr);

  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(w, c0, 3, 0x100, 1), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(w, c1, 3, 0x200, 2), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(path);
  EXPECT_EQ(t.counts().scopes, 4u);  // /, cpu_cluster, core0, core1
  EXPECT_EQ(t.counts().enums, 4u);
  EXPECT_EQ(t.dut_all().size(), 8u);  // one set of cpu.* properties
  EXPECT_EQ(t.storage("entities", i1.scope_id), i1.entities);
  const uscope_state_t *st = t.state_at(0);
  EXPECT_EQ(field(st, i0.entities, 3, USCOPE_CPU_FIELD_PC), 0x100u);
  EXPECT_EQ(field(st, i1.entities, 3, USCOPE_CPU_FIELD_PC), 0x200u);
  const auto ev = t.events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type_id, i0.stage_transition);
  EXPECT_EQ(ev[1].type_id, i1.stage_transition);
  uscope_cpu_free(c0);
  uscope_cpu_free(c1);
}

}  // namespace
