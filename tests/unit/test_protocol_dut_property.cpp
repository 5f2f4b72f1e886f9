// uscope_schema_add_dut_property: DUT properties carried by the schema, written
// before the props[] of uscope_writer_open, each key once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "test_protocol_util.hpp"

namespace {

using uscope::test::TempDir;
using uscope::test::proto::base_schema;
using uscope::test::proto::contains;
using uscope::test::proto::Trace;
using Props = std::vector<std::pair<std::string, std::string>>;

std::vector<char> bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_cycles(uscope_writer_t *w) {
  for (uint64_t c = 0; c < 3; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
}

TEST(ProtocolDutProperty, SchemaPropertiesComeFirstThenOpenProperties) {
  TempDir dir("uscope_dut");
  uscope_schema_t *s = base_schema();
  ASSERT_EQ(uscope_schema_add_dut_property(s, "cpu.isa", "RV64GC"), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_dut_property(s, "dut_name", "core"), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_dut_property(s, "empty", ""), USCOPE_OK);  // an empty value is a value
  const uscope_dut_property_t props[] = {{"vendor", "acme"}, {"build", "42"}};
  uscope_writer_t *w = nullptr;
  const std::string path = dir.file("t.uscope");
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, props, 2, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);  // the writer copied what it needs
  write_cycles(w);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  Trace t(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(
      t.dut_all(),
      (Props{
          {"cpu.isa", "RV64GC"}, {"dut_name", "core"}, {"empty", ""}, {"vendor", "acme"}, {"build", "42"}}));
  EXPECT_EQ(t.dut("dut_name"), "core");
}

TEST(ProtocolDutProperty, SameFileAsPassingThemAllToOpen) {
  // The properties are interned at open, after the schema's strings, exactly
  // where props[] would put them: the two files are byte-identical.
  TempDir dir("uscope_dut");
  const std::string a = dir.file("schema.uscope"), b = dir.file("open.uscope");
  {
    uscope_schema_t *s = base_schema();
    ASSERT_EQ(uscope_schema_add_dut_property(s, "k1", "v1"), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_dut_property(s, "k2", "v2"), USCOPE_OK);
    const uscope_dut_property_t more[] = {{"k3", "v1"}};
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, a.c_str(), s, more, 1, nullptr), USCOPE_OK);
    uscope_schema_free(s);
    write_cycles(w);
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  }
  {
    uscope_schema_t *s = base_schema();
    const uscope_dut_property_t all[] = {{"k1", "v1"}, {"k2", "v2"}, {"k3", "v1"}};
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, b.c_str(), s, all, 3, nullptr), USCOPE_OK);
    uscope_schema_free(s);
    write_cycles(w);
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  }
  const auto x = bytes(a), y = bytes(b);
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x, y);
}

TEST(ProtocolDutProperty, AKeyIsSetOnce) {
  TempDir dir("uscope_dut");
  uscope_schema_t *s = base_schema();
  ASSERT_EQ(uscope_schema_add_dut_property(s, "cpu.isa", "RV64GC"), USCOPE_OK);
  // Twice in the schema: refused at add time, naming the key and its value.
  EXPECT_EQ(uscope_schema_add_dut_property(s, "cpu.isa", "RV32I"), USCOPE_ERR_SCHEMA);
  EXPECT_TRUE(contains(uscope_last_error(), "\"cpu.isa\"")) << uscope_last_error();
  EXPECT_TRUE(contains(uscope_last_error(), "RV64GC")) << uscope_last_error();
  EXPECT_EQ(uscope_schema_add_dut_property(s, "cpu.isa", "RV64GC"),
            USCOPE_ERR_SCHEMA);  // even the same value

  // In the schema and in props[]: refused at open, naming the key; no file.
  const std::string path = dir.file("t.uscope");
  const uscope_dut_property_t props[] = {{"vendor", "acme"}, {"cpu.isa", "RV32I"}};
  uscope_writer_t *w = reinterpret_cast<uscope_writer_t *>(0x1);
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, props, 2, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "\"cpu.isa\" (props[1])")) << uscope_last_error();
  EXPECT_EQ(w, reinterpret_cast<uscope_writer_t *>(0x1));  // *out untouched
  EXPECT_FALSE(std::filesystem::exists(path));

  // The schema was not changed by the refusals: it opens with the one key.
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, props, 1, nullptr), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_schema_free(s);
  Trace t(path);
  EXPECT_EQ(t.dut_all(), (Props{{"cpu.isa", "RV64GC"}, {"vendor", "acme"}}));
}

TEST(ProtocolDutProperty, BadArguments) {
  TempDir dir("uscope_dut");
  uscope_schema_t *s = base_schema();
  EXPECT_EQ(uscope_schema_add_dut_property(nullptr, "k", "v"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "schema is NULL"));
  EXPECT_EQ(uscope_schema_add_dut_property(s, nullptr, "v"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "key is NULL"));
  EXPECT_EQ(uscope_schema_add_dut_property(s, "k", nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "value is NULL"));
  ASSERT_EQ(uscope_schema_add_dut_property(s, "k", "v"), USCOPE_OK);
  // With schema properties, props[] is checked before the merge, with its own indices.
  const std::string path = dir.file("t.uscope");
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 2, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "props is NULL but num_props is 2")) << uscope_last_error();
  const uscope_dut_property_t props[] = {{"a", "1"}, {nullptr, "2"}};
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, props, 2, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(uscope_last_error(), "DUT property 1 has a NULL key")) << uscope_last_error();
  EXPECT_FALSE(std::filesystem::exists(path));
  uscope_schema_free(s);
}

}  // namespace
