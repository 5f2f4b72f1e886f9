// The protocol tables (src/protocol/*_table.hpp) against what the
// declarations build: every enum, storage, field, counter, event and DUT
// property the table names is in the declared schema, with the table's type,
// flags and enum, and where the ids struct says; and the JSONL converter's
// key and event tables are the npu table's.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "convert/npu_event.hpp"
#include "format/schema_codec.hpp"
#include "protocol/cpu_table.hpp"
#include "protocol/noc_table.hpp"
#include "protocol/npu_table.hpp"
#include "schema/schema_builder.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

// As src/capi/schema_capi.cpp defines it: the builder holds the DUT
// properties, which the C API does not list back.
struct uscope_schema {
  uscope::SchemaBuilder builder;
};

namespace {

namespace table = uscope::proto::table;
using uscope::Schema;

std::string str(const Schema &s, uint16_t off) {
  const char *p = s.str(off);
  return p ? p : "<none>";
}

// The values of enum `id` of the schema.
std::vector<std::string> enum_values(const Schema &s, uint8_t id) {
  std::vector<std::string> out;
  for (const auto &v : s.enums.at(id).values) out.push_back(str(s, v.name));
  return out;
}

// The schema's fields [0, table size) are the table's: name, type, and for
// an enum field the enum the ids struct names for that enum (enum_ids).
void expect_fields(const Schema &s, const std::vector<uscope::FieldDef> &got, table::Span<table::Field> want,
                   const uint8_t *enum_ids, const std::string &what) {
  ASSERT_GE(got.size(), want.size) << what;
  for (uint16_t i = 0; i < want.size; ++i) {
    EXPECT_EQ(str(s, got[i].name), want[i].name) << what << " field " << i;
    EXPECT_EQ(got[i].type, want[i].type) << what << "." << want[i].name;
    if (want[i].enum_ref != table::kNoEnum) {
      EXPECT_EQ(got[i].enum_id, enum_ids[want[i].enum_ref]) << what;
    }
  }
}

void expect_storage(const Schema &s, uint16_t id, uint16_t scope, const table::Storage &want,
                    const uint8_t *enum_ids, size_t num_extra) {
  ASSERT_LT(id, s.storages.size()) << want.name;
  const uscope::StorageDef &st = s.storages[id];
  EXPECT_EQ(str(s, st.name), want.name);
  EXPECT_EQ(st.scope_id, scope) << want.name;
  EXPECT_EQ(st.flags, want.flags) << want.name;
  EXPECT_EQ(st.fields.size(), want.fields.size + num_extra) << want.name;
  expect_fields(s, st.fields, want.fields, enum_ids, want.name);
}

void expect_event(const Schema &s, uint16_t id, uint16_t scope, const table::Event &want, const uint8_t *enum_ids) {
  ASSERT_LT(id, s.events.size()) << want.name;
  const uscope::EventDef &ev = s.events[id];
  EXPECT_EQ(str(s, ev.name), want.name);
  EXPECT_EQ(ev.scope_id, scope) << want.name;
  EXPECT_EQ(ev.fields.size(), want.fields.size) << want.name;
  expect_fields(s, ev.fields, want.fields, enum_ids, want.name);
}

void expect_counters(const Schema &s, const uint16_t *ids, uint16_t num, uint16_t scope,
                     table::Span<const char *> standard) {
  ASSERT_GE(num, standard.size);
  for (uint16_t i = 0; i < num; ++i) {
    const uscope::StorageDef &st = s.storages.at(ids[i]);
    if (i < standard.size) {
      EXPECT_EQ(str(s, st.name), standard[i]);
    }
    EXPECT_EQ(st.scope_id, scope);
    EXPECT_EQ(st.num_slots, 1);
    EXPECT_EQ(st.flags, 0);
    ASSERT_EQ(st.fields.size(), 1u);
    EXPECT_EQ(str(s, st.fields[0].name), table::kCounterField.name);
    EXPECT_EQ(st.fields[0].type, table::kCounterField.type);
  }
}

// Enum i of the table is the schema's enum id_of[i] by name, and for a fixed
// enum (or a defaulted one left to its default) by values too.
template <class Ids, size_t N>
void expect_enums(const Schema &s, table::Span<table::Enum> enums, uint8_t Ids::*const (&id_of)[N], const Ids &ids,
                  uint8_t *enum_ids) {
  ASSERT_EQ(N, enums.size);
  for (uint16_t i = 0; i < enums.size; ++i) {
    enum_ids[i] = ids.*id_of[i];
    ASSERT_LT(enum_ids[i], s.enums.size());
    EXPECT_EQ(str(s, s.enums[enum_ids[i]].name), enums[i].name);
    if (enums[i].source != table::Values::kConfig) {
      std::vector<std::string> want(enums[i].values.begin(), enums[i].values.end());
      EXPECT_EQ(enum_values(s, enum_ids[i]), want) << enums[i].name;
    }
  }
}

// The DUT property keys the declarations set are the table's, in its order.
void expect_properties(const uscope_schema_t *raw, table::Span<table::Property> props, const std::string &scope) {
  const auto &dut = raw->builder.dut_properties();
  ASSERT_FALSE(dut.empty());
  size_t at = 0;
  for (const auto &d : dut) {
    const std::string &key = d.key;
    while (at < props.size &&
           key != (props[at].per_scope ? scope + "/" + props[at].key : std::string(props[at].key)))
      ++at;
    EXPECT_LT(at, props.size) << "DUT property " << key << " is not in the table (or out of its order)";
  }
}

struct Schema_ {
  uscope_schema_t *s = nullptr;
  uint16_t top = 0;
  Schema_() {
    EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
    uint8_t clk = 0;
    EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
    EXPECT_EQ(uscope_schema_add_scope(s, &top, "soc", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  }
  ~Schema_() { uscope_schema_free(s); }
  const Schema &schema() const { return s->builder.schema(); }
};

const char *const kStages[] = {"F", "D", "X", "W"};
const uscope_field_t kExtra[] = {{"rd", USCOPE_FT_U8, 0, 0, 0}};
const char *const kMoreCounters[] = {"loads"};

TEST(ProtocolTable, CpuDeclarationIsTheTable) {
  namespace cpu = uscope::proto::cpu;
  Schema_ sc;
  uscope_cpu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = "core0";
  c.parent_scope_id = sc.top;
  c.clock_id = USCOPE_CLOCK_INHERIT;
  c.isa = "RV64GC";
  c.stages = kStages;
  c.num_stages = 4;
  c.max_entities = 32;
  c.counters = kMoreCounters;
  c.num_counters = 1;
  c.fetch_width = 2;
  c.vendor = "v";
  c.entity_extra_fields = kExtra;
  c.num_entity_extra_fields = 1;
  uscope_cpu_t *h = nullptr;
  ASSERT_EQ(uscope_cpu_declare(sc.s, &h, &c), USCOPE_OK) << uscope_last_error();
  uscope_cpu_ids_t ids{};
  ids.struct_size = sizeof ids;
  ASSERT_EQ(uscope_cpu_ids(h, &ids), USCOPE_OK);
  const Schema &s = sc.schema();

  EXPECT_EQ(str(s, s.scopes.at(ids.scope_id).protocol), cpu::kTable.name);
  uint8_t enum_ids[cpu::kNumEnums];
  expect_enums(s, cpu::kEnums, cpu::kEnumIds, ids, enum_ids);
  EXPECT_EQ(enum_values(s, ids.pipeline_stage_enum), (std::vector<std::string>{"F", "D", "X", "W"}));
  for (size_t i = 0; i < std::size(cpu::kStorages); ++i)
    expect_storage(s, ids.*cpu::kStorageIds[i], ids.scope_id, cpu::kStorages[i], enum_ids, 1);
  EXPECT_EQ(ids.num_entity_fields, cpu::kEntities.fields.size + 1);
  expect_counters(s, ids.counters, ids.num_counters, ids.scope_id, cpu::kCounters);
  EXPECT_EQ(ids.num_counters, std::size(cpu::kCounters) + 1);
  for (size_t i = 0; i < std::size(cpu::kEvents); ++i)
    expect_event(s, ids.*cpu::kEventIds[i], ids.scope_id, cpu::kEvents[i], enum_ids);
  EXPECT_EQ(s.events.size(), std::size(cpu::kEvents));
  expect_properties(sc.s, cpu::kProperties, "core0");
  uscope_cpu_free(h);
}

TEST(ProtocolTable, NocDeclarationIsTheTable) {
  namespace noc = uscope::proto::noc;
  Schema_ sc;
  uscope_noc_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = "noc0";
  c.parent_scope_id = sc.top;
  c.clock_id = USCOPE_CLOCK_INHERIT;
  c.bus_protocol = "AXI4";
  c.topology = "mesh";
  c.stages = kStages;
  c.num_stages = 3;
  c.max_txns = 16;
  c.data_width = 64;
  c.routing = "xy";
  c.txn_extra_fields = kExtra;
  c.num_txn_extra_fields = 1;
  uscope_noc_t *h = nullptr;
  ASSERT_EQ(uscope_noc_declare(sc.s, &h, &c), USCOPE_OK) << uscope_last_error();
  uscope_noc_ids_t ids{};
  ids.struct_size = sizeof ids;
  ASSERT_EQ(uscope_noc_ids(h, &ids), USCOPE_OK);
  const Schema &s = sc.schema();

  EXPECT_EQ(str(s, s.scopes.at(ids.scope_id).protocol), noc::kTable.name);
  uint8_t enum_ids[noc::kNumEnums];
  expect_enums(s, noc::kEnums, noc::kEnumIds, ids, enum_ids);
  for (size_t i = 0; i < std::size(noc::kStorages); ++i)
    expect_storage(s, ids.*noc::kStorageIds[i], ids.scope_id, noc::kStorages[i], enum_ids, 1);
  expect_counters(s, ids.counters, ids.num_counters, ids.scope_id, noc::kCounters);
  for (size_t i = 0; i < std::size(noc::kEvents); ++i)
    expect_event(s, ids.*noc::kEventIds[i], ids.scope_id, noc::kEvents[i], enum_ids);
  EXPECT_EQ(ids.handoff_scope_id, sc.top);
  expect_event(s, ids.txn_handoff, sc.top, noc::kTxnHandoff, enum_ids);
  EXPECT_EQ(s.events.size(), std::size(noc::kEvents) + 1);
  expect_properties(sc.s, noc::kProperties, "noc0");
  uscope_noc_free(h);
}

TEST(ProtocolTable, NpuDeclarationIsTheTable) {
  namespace npu = uscope::proto::npu;
  for (const bool all : {true, false}) {
    Schema_ sc;
    uscope_npu_config_t c{};
    c.struct_size = sizeof c;
    c.scope_name = "npu0";
    c.parent_scope_id = sc.top;
    c.clock_id = USCOPE_CLOCK_INHERIT;
    c.queue_depth = 4;
    c.num_te = 2;
    c.num_ve = 1;
    c.num_dma_channels = 2;
    c.num_sram_banks = all ? 4 : 0;
    c.num_dram_channels = all ? 2 : 0;
    c.num_noc_links = all ? 3 : 0;
    c.te_rows = c.te_cols = all ? 8 : 0;
    c.vendor = "acme";
    uscope_npu_t *h = nullptr;
    ASSERT_EQ(uscope_npu_declare(sc.s, &h, &c), USCOPE_OK) << uscope_last_error();
    uscope_npu_ids_t ids{};
    ids.struct_size = sizeof ids;
    ASSERT_EQ(uscope_npu_ids(h, &ids), USCOPE_OK);
    const Schema &s = sc.schema();

    EXPECT_EQ(str(s, s.scopes.at(ids.scope_id).protocol), npu::kTable.name);
    uint8_t enum_ids[npu::kNumEnums];
    expect_enums(s, npu::kEnums, npu::kEnumIds, ids, enum_ids);
    size_t declared = 0;
    for (size_t i = 0; i < std::size(npu::kStorages); ++i) {
      const uint16_t id = ids.*npu::kStorageIds[i];
      if (!all && id == 0xFFFF) continue;  // an optional storage left out
      expect_storage(s, id, ids.scope_id, npu::kStorages[i], enum_ids, 0);
      ++declared;
    }
    EXPECT_EQ(declared, all ? std::size(npu::kStorages) : std::size(npu::kStorages) - 3);
    expect_counters(s, ids.counters, ids.num_counters, ids.scope_id, npu::kCounters);
    for (size_t e = 0; e < std::size(npu::kEvents); ++e)
      expect_event(s, ids.events[e], ids.scope_id, npu::kEvents[e], enum_ids);
    expect_properties(sc.s, npu::kProperties, "npu0");
    uscope_npu_free(h);
  }
}

// The converter's tables are the npu table's: one event type per table event,
// its µScope name the table's and its JSONL name that in upper case, its own
// fields the table's JSONL fields in order; keys 0..11 the contexts' fields.
TEST(ProtocolTable, JsonlConverterVocabularyIsTheNpuTable) {
  namespace npu = uscope::proto::npu;
  namespace cv = uscope::convert;
  ASSERT_EQ(static_cast<size_t>(cv::kNumEvTypes), std::size(npu::kEvents));
  for (int e = 0; e < cv::kNumEvTypes; ++e) {
    const cv::EvTypeInfo &ti = cv::kEvTypes[e];
    EXPECT_STREQ(ti.lower, npu::kEvents[e].name);
    std::string upper = npu::kEvents[e].name;
    for (char &ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(ti.name, upper);
    EXPECT_EQ(cv::ev_type_by_lower(npu::kEvents[e].name), e);
    EXPECT_EQ(cv::ev_type_by_name(upper), e);
    std::vector<std::string> want, got;
    for (const table::Field &f : npu::kEvents[e].fields)
      if (f.jsonl != table::kOwn) want.push_back(f.name);
    for (int i = 0; i < ti.num_fields; ++i) got.push_back(cv::kKeys[ti.fields[i]].name);
    EXPECT_EQ(got, want) << ti.lower;
  }
  ASSERT_EQ(std::size(npu::kContextFields), static_cast<size_t>(cv::kNumMetaKeys));
  for (int k = 0; k < cv::kNumMetaKeys; ++k) EXPECT_STREQ(cv::kKeys[k].name, npu::kContextFields[k].name);
  // Every key is a field of the table.
  for (int k = 0; k < cv::kNumKeys; ++k) {
    bool found = false;
    for (const table::Event &e : npu::kEvents)
      for (const table::Field &f : e.fields) found = found || std::strcmp(f.name, cv::kKeys[k].name) == 0;
    for (const table::Field &f : npu::kContextFields) found = found || std::strcmp(f.name, cv::kKeys[k].name) == 0;
    EXPECT_TRUE(found) << cv::kKeys[k].name;
  }
}

}  // namespace
