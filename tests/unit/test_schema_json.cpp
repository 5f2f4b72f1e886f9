// uscope_schema_load_json: the core's JSON schema reader (src/schema/
// json_schema.cpp, the one the DPI bridge's uscope_sv_schema_from_json uses;
// tests/dpi covers that side and the full list of error messages). Here: a
// file declared in JSON equals the same file declared with add_* calls, and
// the failures carry core statuses, the JSON path, and hand out no schema.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

const char kJson[] = R"j({
  "_comment": "members starting with _ are comments",
  "version": 1,
  "dut": {"dut_name": "demo", "cpu.fetch_width": 2},
  "options": {"compression": "zstd", "anything": 1},
  "clocks": [{"name": "clk", "period_ps": 1000}],
  "scopes": [{"name": "top"}, {"name": "core0", "parent": "top", "protocol": "cpu", "clock": "clk"}],
  "enums": [{"name": "stage", "values": ["IF", "EX"]}, {"name": "op", "values": "LD,ST"}],
  "storages": [
    {"name": "rob", "scope": "core0", "slots": 8, "sparse": true,
     "fields": [{"name": "pc", "type": "u64"}, {"name": "st", "type": "enum", "enum": "stage"}],
     "properties": [{"name": "head", "type": "u16", "role": "head_ptr", "pair": 1}]},
    {"name": "lsq", "scope": "core0", "slots": 4, "fields": "kind:enum(op),addr:u32", "properties": "tail:u8:tail_ptr(1)"}
  ],
  "events": [{"name": "retire", "scope": "core0", "fields": "pc:u64,ok:bool"}, {"name": "tick"}],
  "summary_fields": [{"name": "ipc", "type": "u32", "scope": "core0"}]
})j";

// The same schema, call by call.
uscope_schema_t *by_calls() {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_dut_property(s, "dut_name", "demo"), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_dut_property(s, "cpu.fetch_width", "2"), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "top", USCOPE_NO_PARENT, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "core0", 0, "cpu", 0), USCOPE_OK);
  const char *stage[] = {"IF", "EX"}, *op[] = {"LD", "ST"};
  EXPECT_EQ(uscope_schema_add_enum(s, nullptr, "stage", stage, 2), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_enum(s, nullptr, "op", op, 2), USCOPE_OK);
  const uscope_field_t rob[] = {{"pc", USCOPE_FT_U64, 0, 0, 0}, {"st", USCOPE_FT_ENUM, 0, 0, 0}};
  uscope_field_t head = {"head", USCOPE_FT_U16, 0, USCOPE_ROLE_HEAD_PTR, 1};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "rob", 1, 8, USCOPE_SF_SPARSE, rob, 2, &head, 1), USCOPE_OK);
  const uscope_field_t lsq[] = {{"kind", USCOPE_FT_ENUM, 1, 0, 0}, {"addr", USCOPE_FT_U32, 0, 0, 0}};
  uscope_field_t tail = {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 1};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "lsq", 1, 4, 0, lsq, 2, &tail, 1), USCOPE_OK);
  const uscope_field_t retire[] = {{"pc", USCOPE_FT_U64, 0, 0, 0}, {"ok", USCOPE_FT_BOOL, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "retire", 1, retire, 2), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "tick", USCOPE_ROOT_SCOPE, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_summary_field(s, nullptr, "ipc", USCOPE_FT_U32, 1), USCOPE_OK);
  return s;
}

std::string write_empty_trace(const std::string &path, uscope_schema_t *s) {
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(uscope_begin_cycle(w, 1000), USCOPE_OK);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(SchemaJson, SameFileAsTheAddCalls) {
  TempDir dir;
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_load_json(&s, kJson, sizeof kJson - 1), USCOPE_OK) << uscope_last_error();
  ASSERT_NE(s, nullptr);
  uint16_t id = 0;
  ASSERT_EQ(uscope_schema_find_storage(s, &id, "core0.lsq"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  ASSERT_EQ(uscope_schema_find_event(s, &id, "tick"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  uscope_schema_t *c = by_calls();
  const std::string a = write_empty_trace(dir.file("json.uscope"), s);
  const std::string b = write_empty_trace(dir.file("calls.uscope"), c);
  ASSERT_GT(a.size(), 100u);
  EXPECT_TRUE(a == b) << "the JSON schema and the equivalent add_* calls gave different files";
  // More may be added to a loaded schema.
  EXPECT_EQ(uscope_schema_add_event(s, &id, "flush", 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(id, 2);
  uscope_schema_free(s);
  uscope_schema_free(c);
}

TEST(SchemaJson, TextNeedsNoTerminator) {
  const std::string json = std::string(R"j({"clocks":[{"name":"c"}],"scopes":[{"name":"top"}]})j") + "garbage";
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_load_json(&s, json.data(), json.size() - 7), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  EXPECT_EQ(uscope_schema_load_json(&s, json.data(), json.size()), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
}

TEST(SchemaJson, FailuresNameTheJsonPathAndHandOutNothing) {
  struct Case {
    const char *json;
    uscope_status_t status;
    const char *message;
  } cases[] = {
      {"{\"clocks\": [", USCOPE_ERR_INVALID_ARGUMENT, "JSON schema: not valid JSON"},
      {"[1]", USCOPE_ERR_SCHEMA, "JSON schema: $: expected an object, found an array"},
      {R"j({"scopes":[{"name":"top"}],"storages":[{"name":"r","fields":"a:u8"}]})j", USCOPE_ERR_SCHEMA,
       "JSON schema: $.storages[0]: missing member \"slots\""},
      {R"j({"scopes":[{"name":"top"}],"events":[{"name":"e","fields":"a:float"}]})j", USCOPE_ERR_SCHEMA,
       "$.events[0].fields: field list: field \"a\": unknown type \"float\""},
      {R"j({"scopes":[{"name":"top"}],"events":[{"name":"e","fields":"a:enum(nope)"}]})j", USCOPE_ERR_SCHEMA,
       "$.events[0]: event \"e\": field \"a\": no enum named \"nope\""},
      {R"j({"scopes":[{"name":"top"},{"name":"x","parent":"tpo"}]})j", USCOPE_ERR_SCHEMA,
       "$.scopes[1].parent: no scope named \"tpo\" declared above"},
      {R"j({"clocks":[{"name":"c"}],"scopes":[{"name":"top"},{"name":"a","parent":0},{"name":"b","parent":0},
          {"name":"u","parent":"a"},{"name":"u","parent":"b"},{"name":"x","parent":"u"}]})j",
       USCOPE_ERR_SCHEMA, "$.scopes[5].parent: 2 scopes are named \"u\": scope 3, scope 4; use the id"},
      {R"j({"clocks":[{"name":"c"},{"name":"c"}]})j", USCOPE_ERR_DUPLICATE, "$.clocks[1]: "},
      {R"j({"options":[1]})j", USCOPE_ERR_SCHEMA, "$.options: expected an object"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    uscope_schema_t *s = reinterpret_cast<uscope_schema_t *>(&cases);  // overwritten with NULL
    EXPECT_EQ(uscope_schema_load_json(&s, c.json, std::char_traits<char>::length(c.json)), c.status);
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(uscope_last_error()).find(c.message), std::string::npos) << uscope_last_error();
  }
  EXPECT_EQ(uscope_schema_load_json(nullptr, "{}", 2), USCOPE_ERR_INVALID_ARGUMENT);
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_load_json(&s, nullptr, 5), USCOPE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(uscope_schema_load_json(&s, "{}", 2), USCOPE_OK);  // an empty schema
  uscope_schema_free(s);
}

}  // namespace
