// The names the bridge gives to a declared protocol's members (uscope_sv_find
// "field", "event_field", "enum_value") are its table's (src/protocol/*_table.hpp),
// the table the declaration itself was built from: every field of every
// storage and event at its index, every value of a fixed enum.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "protocol/cpu_table.hpp"
#include "protocol/noc_table.hpp"
#include "protocol/npu_table.hpp"
#include "uscope/uscope_dpi.h"

namespace {

namespace table = uscope::proto::table;

std::string last_error() { return uscope_dpi_last_error(); }

// Each field of `owner` (a storage or event, "<scope>.<name>") at its index.
void expect_members(void *s, const char *kind, const std::string &owner, table::Span<table::Field> fields) {
  for (uint16_t i = 0; i < fields.size; ++i) {
    const std::string name = owner + "." + fields[i].name;
    EXPECT_EQ(uscope_sv_find(s, kind, name.c_str()), i) << name << ": " << last_error();
  }
}

void expect_enums(void *s, table::Span<table::Enum> enums) {
  for (const table::Enum &e : enums) {
    if (e.source == table::Values::kConfig) continue;  // the test's config, not the table
    for (uint16_t v = 0; v < e.values.size; ++v) {
      const std::string name = std::string(e.name) + "." + e.values[v];
      EXPECT_EQ(uscope_sv_find(s, "enum_value", name.c_str()), v) << name << ": " << last_error();
    }
  }
}

void expect_protocol(void *s, const std::string &scope, const table::Protocol &t, bool all_storages) {
  expect_enums(s, t.enums);
  for (uint16_t i = 0; i < t.storages.size; ++i) {
    if (!all_storages && i >= 5) break;  // npu: the optional storages are not declared here
    expect_members(s, "field", scope + "." + t.storages[i].name, t.storages[i].fields);
  }
  for (const char *counter : t.counters) {
    const std::string name = scope + "." + counter + "." + table::kCounterField.name;
    EXPECT_EQ(uscope_sv_find(s, "field", name.c_str()), 0) << name << ": " << last_error();
  }
  for (const table::Event &e : t.events) expect_members(s, "event_field", scope + "." + e.name, e.fields);
}

TEST(DpiProtocolNames, AreTheProtocolTables) {
  void *s = uscope_sv_schema_create();
  const int clk = uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", clk);
  void *cpu = uscope_sv_cpu_declare(s, "core0", 0, clk, "RV32I", "IF,ID,EX", 8, "rob:4", "", "", 0, 0, "", "",
                                    "", "");
  ASSERT_NE(cpu, nullptr) << last_error();
  void *noc = uscope_sv_noc_declare(s, "bus0", 0, clk, "AXI4", "crossbar", "AR,R", 8, "", "", "", 0, 0, 0, 0, 0,
                                    0, "", "");
  ASSERT_NE(noc, nullptr) << last_error();
  void *npu = uscope_sv_npu_declare(s, "npu0", 0, clk, 4, 1, 1, 1, 0, 0, 0, 0, 0, 0, "", "", "", "", "", "", "");
  ASSERT_NE(npu, nullptr) << last_error();

  expect_protocol(s, "core0", uscope::proto::cpu::kTable, true);
  EXPECT_EQ(uscope_sv_find(s, "field", "core0.rob.entity_id"), 0) << last_error();
  expect_protocol(s, "bus0", uscope::proto::noc::kTable, true);
  expect_members(s, "event_field", std::string("bus0.") + uscope::proto::noc::kTxnHandoff.name,
                 uscope::proto::noc::kTxnHandoff.fields);
  expect_protocol(s, "npu0", uscope::proto::npu::kTable, false);

  uscope_cpu_free(static_cast<uscope_cpu_t *>(cpu));
  uscope_noc_free(static_cast<uscope_noc_t *>(noc));
  uscope_npu_free(static_cast<uscope_npu_t *>(npu));
  uscope_sv_schema_free(s);
}

}  // namespace
