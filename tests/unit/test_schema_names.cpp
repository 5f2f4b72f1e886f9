// Names and look-ups by name (docs/compat.md, "Duplicate names"):
//  - the schema builder refuses a name repeated where a look-up by name needs
//    it unique (USCOPE_ERR_DUPLICATE, schema unchanged, message naming the
//    scope and the name), and accepts the repeats no look-up confuses;
//  - uscope_reader_find_* resolve scope-qualified names and report
//    USCOPE_ERR_AMBIGUOUS, listing the candidates, on files whose writer did
//    not keep names unique (crafted here by patching our own file's strings);
//  - uscope_schema_find_* and uscope_writer_find_* answer the same way, from
//    one implementation (src/schema/schema_lookup.cpp), on a schema being
//    built and on a writer's schema as opened.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

struct Schema {
  uscope_schema_t *s = nullptr;
  Schema() { EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK); }
  ~Schema() { uscope_schema_free(s); }
};

const uscope_field_t kU32[] = {{"v", USCOPE_FT_U32, 0, 0, 0}};

// A schema with clock 0 "clk", root scope 0 "top", scopes 1 "core0" and 2 "core1".
void base(uscope_schema_t *s) {
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "core0", 0, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "core1", 0, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
}

// The status is DUPLICATE and the message mentions every one of `words`.
void expect_duplicate(uscope_status_t st, std::initializer_list<const char *> words) {
  EXPECT_EQ(st, USCOPE_ERR_DUPLICATE);
  const std::string msg = uscope_last_error();
  for (const char *w : words) EXPECT_NE(msg.find(w), std::string::npos) << "\"" << w << "\" not in: " << msg;
}

TEST(SchemaNames, StatusStrings) {
  EXPECT_STREQ(uscope_status_str(USCOPE_ERR_DUPLICATE), "name already defined");
  EXPECT_STREQ(uscope_status_str(USCOPE_ERR_AMBIGUOUS), "name is ambiguous");
  EXPECT_EQ(USCOPE_ERR_DUPLICATE, -27);  // appended: the earlier codes keep their values
  EXPECT_EQ(USCOPE_ERR_AMBIGUOUS, -28);
}

TEST(SchemaNames, StorageRepeatedInOneScopeIsRefused) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  uint16_t id = 99;
  ASSERT_EQ(uscope_schema_add_storage(s.s, &id, "rob", 1, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(id, 0);
  expect_duplicate(uscope_schema_add_storage(s.s, &id, "rob", 1, 8, 0, kU32, 1, nullptr, 0),
                   {"\"rob\"", "scope 1", "\"core0\"", "storage 0"});
  EXPECT_EQ(id, 0);  // untouched
  // Another scope, the root level, another kind: all fine.
  ASSERT_EQ(uscope_schema_add_storage(s.s, &id, "rob", 2, 4, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(id, 1);  // the refused call took no id
  ASSERT_EQ(uscope_schema_add_storage(s.s, &id, "rob", USCOPE_ROOT_SCOPE, 4, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  expect_duplicate(uscope_schema_add_storage(s.s, &id, "rob", USCOPE_ROOT_SCOPE, 4, 0, kU32, 1, nullptr, 0),
                   {"\"rob\"", "root level"});
  EXPECT_EQ(uscope_schema_add_event(s.s, &id, "rob", 1, kU32, 1), USCOPE_OK);
}

TEST(SchemaNames, EventRepeatedInOneScopeIsRefused) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  uint16_t id = 99;
  ASSERT_EQ(uscope_schema_add_event(s.s, &id, "retire", 1, kU32, 1), USCOPE_OK);
  expect_duplicate(uscope_schema_add_event(s.s, &id, "retire", 1, nullptr, 0),
                   {"\"retire\"", "\"core0\"", "event type 0"});
  ASSERT_EQ(uscope_schema_add_event(s.s, &id, "retire", 2, kU32, 1), USCOPE_OK);
  EXPECT_EQ(id, 1);
}

TEST(SchemaNames, FieldsAndPropertiesRepeatedAreRefused) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  const uscope_field_t twice[] = {{"pc", USCOPE_FT_U64, 0, 0, 0}, {"id", USCOPE_FT_U32, 0, 0, 0},
                                  {"pc", USCOPE_FT_U32, 0, 0, 0}};
  expect_duplicate(uscope_schema_add_storage(s.s, nullptr, "rob", 1, 4, 0, twice, 3, nullptr, 0),
                   {"field 2", "\"pc\""});
  expect_duplicate(uscope_schema_add_storage(s.s, nullptr, "rob", 1, 4, 0, kU32, 1, twice, 3),
                   {"property 2", "\"pc\""});
  expect_duplicate(uscope_schema_add_event(s.s, nullptr, "ev", 1, twice, 3), {"field 2", "\"pc\""});
  // A field and a property may share a name: find_field looks in one or the other.
  const uscope_field_t head[] = {{"v", USCOPE_FT_U8, 0, 0, 0}};
  uint16_t id = 99;
  ASSERT_EQ(uscope_schema_add_storage(s.s, &id, "rob", 1, 4, 0, kU32, 1, head, 1), USCOPE_OK);
  EXPECT_EQ(id, 0);  // no refused call left a storage behind
}

TEST(SchemaNames, EnumValuesRepeatedAreRefusedEnumNamesMayRepeat) {
  Schema s;
  const char *twice[] = {"fetch", "decode", "fetch"};
  expect_duplicate(uscope_schema_add_enum(s.s, nullptr, "stage", twice, 3), {"\"stage\"", "value 2", "\"fetch\""});
  const char *a[] = {"fetch", "decode"};
  const char *b[] = {"request", "grant"};
  uint8_t e0 = 99, e1 = 99;
  ASSERT_EQ(uscope_schema_add_enum(s.s, &e0, "pipeline_stage", a, 2), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_enum(s.s, &e1, "pipeline_stage", b, 2), USCOPE_OK);  // a cpu's and a noc's
  EXPECT_EQ(e0, 0);
  EXPECT_EQ(e1, 1);
}

TEST(SchemaNames, ClocksScopesAndSummaryFields) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  expect_duplicate(uscope_schema_add_clock(s.s, nullptr, "clk", 500), {"\"clk\"", "clock 0"});
  // Sibling scopes: refused; the same name under another parent: fine.
  expect_duplicate(uscope_schema_add_scope(s.s, nullptr, "core0", 0, nullptr, USCOPE_CLOCK_INHERIT),
                   {"\"core0\"", "\"top\"", "scope 1"});
  uint16_t id = 99;
  ASSERT_EQ(uscope_schema_add_scope(s.s, &id, "lsu", 1, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s.s, &id, "lsu", 2, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  EXPECT_EQ(id, 4);
  ASSERT_EQ(uscope_schema_add_summary_field(s.s, nullptr, "ipc", USCOPE_FT_U32, 1), USCOPE_OK);
  expect_duplicate(uscope_schema_add_summary_field(s.s, nullptr, "ipc", USCOPE_FT_U32, 1), {"\"ipc\"", "\"core0\""});
  EXPECT_EQ(uscope_schema_add_summary_field(s.s, &id, "ipc", USCOPE_FT_U32, 2), USCOPE_OK);
  EXPECT_EQ(id, 1);
}

// ── the reader's look-ups ──


// Storages: 0 "rob" in core0, 1 "rob" in core1, 2 "zz_stor_a" and 3
// "zz_stor_b" in core0 (fields "zz_fld_a", "zz_fld_b"); events 0 "zz_evt_a"
// and 1 "zz_evt_b" in core1. The zz_ names are distinct, as the builder
// wants; patch() makes the _b ones equal to the _a ones.
std::string write_file(const TempDir &dir) {
  Schema s;
  base(s.s);
  const uscope_field_t ab[] = {{"zz_fld_a", USCOPE_FT_U32, 0, 0, 0}, {"zz_fld_b", USCOPE_FT_U32, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 1, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 2, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_storage(s.s, nullptr, "zz_stor_a", 1, 1, 0, ab, 2, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_storage(s.s, nullptr, "zz_stor_b", 1, 1, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_event(s.s, nullptr, "zz_evt_a", 2, kU32, 1), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_event(s.s, nullptr, "zz_evt_b", 2, kU32, 1), USCOPE_OK);
  const std::string path = dir.file("names.uscope");
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s.s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(uscope_begin_cycle(w, 1000), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, 0, 1, 0, 7), USCOPE_OK);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  return path;
}

// The file as another writer might have written it: "zz_stor_b", "zz_fld_b"
// and "zz_evt_b" become "..._a" in the string pool (same length, so nothing
// else moves), giving two storages, two fields and two events of one name.
std::string patch(const TempDir &dir, const std::string &path) {
  std::string bytes = uscope::test::read_all(path);
  for (const char *from : {"zz_stor_b", "zz_fld_b", "zz_evt_b"}) {
    const std::string f = std::string(from) + '\0';
    const size_t at = bytes.find(f);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(bytes.find(f, at + 1), std::string::npos) << from << " twice";
    if (at != std::string::npos) bytes[at + f.size() - 2] = 'a';
  }
  const std::string out = dir.file("patched.uscope");
  uscope::test::write_all(out, bytes);
  return out;
}

struct Reader {
  uscope_reader_t *r = nullptr;
  explicit Reader(const std::string &path) { EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error(); }
  ~Reader() { uscope_reader_close(r); }
};

void expect_ambiguous(uscope_status_t st, const uscope_reader_t *r, std::initializer_list<const char *> words) {
  EXPECT_EQ(st, USCOPE_ERR_AMBIGUOUS);
  const std::string msg = uscope_last_error();
  EXPECT_EQ(msg, uscope_reader_error(r));
  for (const char *w : words) EXPECT_NE(msg.find(w), std::string::npos) << "\"" << w << "\" not in: " << msg;
}

TEST(ReaderFind, QualifiedNamesSingleOutAStorageOfEachScope) {
  TempDir dir;
  Reader rd(write_file(dir));
  ASSERT_NE(rd.r, nullptr);
  uint16_t id = 99;
  // Our own file: "rob" names one storage per core.
  expect_ambiguous(uscope_reader_find_storage(rd.r, &id, "rob"), rd.r,
                   {"2 storages", "\"rob\"", "storage 0 (scope 1 \"core0\")", "storage 1 (scope 2 \"core1\")"});
  EXPECT_EQ(id, 99);  // untouched
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "core0.rob"), USCOPE_OK);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "core1.rob"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "top.core1.rob"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "zz_stor_b"), USCOPE_OK);
  EXPECT_EQ(id, 3);
  EXPECT_EQ(uscope_reader_find_event(rd.r, &id, "core1.zz_evt_b"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  for (const char *miss : {"ob", "core2.rob", "x.top.core0.rob", "core0rob", ".rob", "core0.", "top.rob"}) {
    EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, miss), USCOPE_ERR_NOT_FOUND) << miss;
  }
}

TEST(ReaderFind, RepeatedNamesInAFileAreReportedAmbiguous) {
  TempDir dir;
  const std::string path = patch(dir, write_file(dir));
  Reader rd(path);
  ASSERT_NE(rd.r, nullptr);
  uint16_t id = 99;
  // Two storages "zz_stor_a" in one scope: not even the scope tells them apart.
  expect_ambiguous(uscope_reader_find_storage(rd.r, &id, "zz_stor_a"), rd.r,
                   {"2 storages", "\"zz_stor_a\"", "storage 2 (scope 1 \"core0\")", "storage 3 (scope 1 \"core0\")"});
  expect_ambiguous(uscope_reader_find_storage(rd.r, &id, "core0.zz_stor_a"), rd.r, {"storage 2", "storage 3"});
  expect_ambiguous(uscope_reader_find_event(rd.r, &id, "zz_evt_a"), rd.r,
                   {"2 event types", "event type 0 (scope 2 \"core1\")", "event type 1 (scope 2 \"core1\")"});
  expect_ambiguous(uscope_reader_find_field(rd.r, &id, 2, "zz_fld_a", 0), rd.r, {"field 0", "field 1"});
  EXPECT_EQ(id, 99);
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "zz_stor_b"), USCOPE_ERR_NOT_FOUND);
  // A name that is unique still resolves.
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "core1.rob"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(uscope_reader_find_field(rd.r, &id, 0, "v", 0), USCOPE_OK);
  EXPECT_EQ(id, 0);
}

TEST(ReaderFind, AmbiguityListsAtMostSixteenCandidates) {
  // 20 scopes with a "rob" each: the message lists the first 16 and says there are more.
  Schema s;
  ASSERT_EQ(uscope_schema_add_clock(s.s, nullptr, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s.s, nullptr, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  for (int i = 0; i < 20; ++i) {
    const std::string n = "c" + std::to_string(i);
    uint16_t sc = 0;
    ASSERT_EQ(uscope_schema_add_scope(s.s, &sc, n.c_str(), 0, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", sc, 1, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  }
  TempDir dir;
  const std::string path = dir.file("many.uscope");
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s.s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  Reader rd(path);
  uint16_t id = 0;
  expect_ambiguous(uscope_reader_find_storage(rd.r, &id, "rob"), rd.r, {"20 storages", "storage 15 ", ", ..."});
  EXPECT_EQ(std::string(uscope_last_error()).find("storage 16 "), std::string::npos);
  EXPECT_EQ(uscope_reader_find_storage(rd.r, &id, "c17.rob"), USCOPE_OK);
  EXPECT_EQ(id, 17);
}

// ── the same look-ups on a schema being built and on a writer ──

// The status is AMBIGUOUS, the message (thread-local) mentions every one of `words`.
void expect_ambiguous_here(uscope_status_t st, std::initializer_list<const char *> words) {
  EXPECT_EQ(st, USCOPE_ERR_AMBIGUOUS);
  const std::string msg = uscope_last_error();
  for (const char *w : words) EXPECT_NE(msg.find(w), std::string::npos) << "\"" << w << "\" not in: " << msg;
}

TEST(SchemaFind, PlainNameInTwoScopesIsAmbiguousQualifiedNamePicksOne) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 1, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 2, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "regs", 1, 4, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_event(s.s, nullptr, "flush", 1, kU32, 1), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_event(s.s, nullptr, "flush", 2, kU32, 1), USCOPE_OK);
  uint16_t id = 99;
  expect_ambiguous_here(uscope_schema_find_storage(s.s, &id, "rob"),
                        {"2 storages", "\"rob\"", "storage 0 (scope 1 \"core0\")", "storage 1 (scope 2 \"core1\")"});
  expect_ambiguous_here(uscope_schema_find_event(s.s, &id, "flush"), {"2 event types", "event type 1 (scope 2"});
  EXPECT_EQ(id, 99);  // untouched
  EXPECT_EQ(uscope_schema_find_storage(s.s, &id, "core1.rob"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(uscope_schema_find_storage(s.s, &id, "top.core0.rob"), USCOPE_OK);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(uscope_schema_find_storage(s.s, &id, "regs"), USCOPE_OK);  // declared once: the plain name
  EXPECT_EQ(id, 2);
  EXPECT_EQ(uscope_schema_find_event(s.s, &id, "core0.flush"), USCOPE_OK);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(uscope_schema_find_storage(s.s, &id, "core2.rob"), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(std::string(uscope_last_error()).find("no storage named \"core2.rob\""), std::string::npos)
      << uscope_last_error();
  EXPECT_EQ(uscope_schema_find_event(s.s, &id, "rob"), USCOPE_ERR_NOT_FOUND);  // a storage, not an event
  EXPECT_EQ(uscope_schema_find_storage(nullptr, &id, "rob"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_schema_find_storage(s.s, &id, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_schema_find_event(s.s, nullptr, "flush"), USCOPE_ERR_INVALID_ARGUMENT);
}

TEST(SchemaFind, WriterAnswersFromTheSchemaAsOpened) {
  Schema s;
  ASSERT_NO_FATAL_FAILURE(base(s.s));
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 1, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "rob", 2, 4, USCOPE_SF_SPARSE, kU32, 1, nullptr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_event(s.s, nullptr, "done", 2, kU32, 1), USCOPE_OK);
  TempDir dir;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, dir.file("find.uscope").c_str(), s.s, nullptr, 0, nullptr), USCOPE_OK)
      << uscope_last_error();
  ASSERT_EQ(uscope_schema_add_storage(s.s, nullptr, "later", 1, 1, 0, kU32, 1, nullptr, 0), USCOPE_OK);
  uint16_t id = 99;
  expect_ambiguous_here(uscope_writer_find_storage(w, &id, "rob"), {"2 storages", "storage 1 (scope 2 \"core1\")"});
  EXPECT_EQ(id, 99);
  EXPECT_EQ(uscope_writer_find_storage(w, &id, "later"), USCOPE_ERR_NOT_FOUND);  // added after open
  EXPECT_EQ(uscope_writer_find_storage(w, &id, "core1.rob"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  EXPECT_EQ(uscope_writer_find_event(w, &id, "done"), USCOPE_OK);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(uscope_writer_find_event(nullptr, &id, "done"), USCOPE_ERR_INVALID_ARGUMENT);
  // A failed look-up is not the writer's (sticky) error: the trace goes on.
  EXPECT_STREQ(uscope_writer_error(w), "");
  EXPECT_EQ(uscope_begin_cycle(w, 1000), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, 1, 0, 0, 1), USCOPE_OK);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
}

}  // namespace
