// The DPI bridge through its C entry points (the calls SystemVerilog makes),
// each trace read back with libuscope's reader C API.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dpi_test_util.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"

using dpitest::cat;
using dpitest::le;
using dpitest::Reader;
using dpitest::TempDir;

namespace {

// The payload array SV passes: always 256 bytes.
struct Payload {
  unsigned char b[USCOPE_DPI_PAYLOAD_BYTES] = {};
  unsigned n = 0;
  Payload &put(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b[n++] = static_cast<unsigned char>(v >> (8 * i));
    return *this;
  }
};

std::string last_error() { return uscope_dpi_last_error(); }

// ── versions and status strings ──

TEST(DpiVersion, MatchesLibrary) {
  EXPECT_STREQ(uscope_dpi_version(), uscope_version_string());
  EXPECT_STREQ(uscope_dpi_version(), USCOPE_DPI_VERSION);
}

TEST(DpiVersion, StatusStrings) {
  EXPECT_NE(std::string(uscope_dpi_status_str(USCOPE_DPI_ERR_JSON_SCHEMA)).find("schema"), std::string::npos);
  EXPECT_STREQ(uscope_dpi_status_str(USCOPE_ERR_IO), uscope_status_str(USCOPE_ERR_IO));
  EXPECT_NE(uscope_dpi_status_str(-77), nullptr);
}

// ── schemas from SV calls ──

TEST(DpiSchema, BuildFromSvCallsAndReadBack) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(uscope_sv_schema_dut_property(s, "dut_name", "sv_core"), 0);
  const int clk = uscope_sv_schema_clock(s, "core_clk", 1000);
  EXPECT_EQ(clk, 0);
  EXPECT_EQ(uscope_sv_schema_scope(s, "root", -1, "", -1), 0);
  const int core = uscope_sv_schema_scope(s, "core0", 0, "cpu", clk);
  EXPECT_EQ(core, 1);
  const int stage = uscope_sv_schema_enum(s, "pipeline_stage", "IF, ID ,EX,MEM,WB");
  EXPECT_EQ(stage, 0);
  const int rob = uscope_sv_schema_storage(s, "rob", core, 8, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER,
                                           "entity_id:u32, pc:u64, stage:enum(pipeline_stage), off:i16",
                                           "head:u8:head_ptr(3),tail:u8:tail_ptr(3),n:u16");
  EXPECT_EQ(rob, 0) << last_error();
  const int regs = uscope_sv_schema_storage(s, "regs", -1, 4, 0, "v:u32", "");
  EXPECT_EQ(regs, 1) << last_error();
  const int ev = uscope_sv_schema_event(s, "stage_transition", core, "entity_id:u32,stage:enum(0),note:string");
  EXPECT_EQ(ev, 0) << last_error();
  const int tick = uscope_sv_schema_event(s, "tick", -1, "");
  EXPECT_EQ(tick, 1) << last_error();
  EXPECT_EQ(uscope_sv_schema_summary(s, "ipc", "u32", core), 0) << last_error();

  const std::string path = dir.file("sv.uscope");
  void *w = uscope_open_opts(path.c_str(), s, "compression=zstd, level=3 checkpoint_interval_ps=5000");
  ASSERT_NE(w, nullptr) << last_error();
  EXPECT_EQ(uscope_sv_schema_free(s), 0);

  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  uint32_t note = 0;
  ASSERT_EQ(uscope_string_insert(wr, &note, "hello"), USCOPE_OK);
  for (uint64_t cy = 0; cy < 20; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(wr, cy * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 8, 0, cy), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 8, 1, 0x80000000ull + 4 * cy), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 8, 2, cy % 5), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 8, 3, static_cast<uint64_t>(-static_cast<int64_t>(cy))), USCOPE_OK);
    ASSERT_EQ(uscope_prop_set(wr, 0, 0, cy % 8), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(wr, 1, 2, 0, 3), USCOPE_OK);
    Payload p;
    p.put(cy, 4).put(cy % 5, 1).put(note, 4);
    ASSERT_EQ(uscope_event_raw(w, 0, p.b, p.n), USCOPE_OK);
    if (cy == 7) {
      ASSERT_EQ(uscope_event_raw(w, 1, p.b, 0), USCOPE_OK);
    }
    if (cy == 9) {
      ASSERT_EQ(uscope_slot_clear(wr, 0, 1), USCOPE_OK);
    }
    ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  }
  ASSERT_EQ(uscope_close(w), 0) << last_error();

  Reader r(path);
  ASSERT_TRUE(r.ok());
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.compression, static_cast<uint32_t>(USCOPE_COMPRESSION_ZSTD));
  EXPECT_EQ(info.checkpoint_interval_ps, 5000u);
  EXPECT_GT(info.num_segments, 2u);
  EXPECT_EQ(r.dut("dut_name"), "sv_core");

  uscope_scope_info_t sc{};
  ASSERT_EQ(uscope_reader_scope(r.get(), &sc, 1), USCOPE_OK);
  EXPECT_STREQ(sc.name, "core0");
  EXPECT_STREQ(sc.protocol, "cpu");
  EXPECT_EQ(sc.parent_id, 0);
  EXPECT_EQ(sc.clock_id, 0);
  ASSERT_EQ(uscope_reader_scope(r.get(), &sc, 0), USCOPE_OK);
  EXPECT_EQ(sc.parent_id, USCOPE_NO_PARENT);
  EXPECT_EQ(sc.clock_id, USCOPE_CLOCK_INHERIT);
  EXPECT_EQ(sc.protocol, nullptr);

  const char *ename = nullptr;
  uint32_t nvalues = 0;
  ASSERT_EQ(uscope_reader_enum(r.get(), &ename, &nvalues, 0), USCOPE_OK);
  EXPECT_STREQ(ename, "pipeline_stage");
  ASSERT_EQ(nvalues, 5u);
  const char *vname = nullptr;
  ASSERT_EQ(uscope_reader_enum_value(r.get(), &vname, 0, 1), USCOPE_OK);
  EXPECT_STREQ(vname, "ID");  // blanks around CSV items are trimmed

  const uscope_storage_info_t si = r.storage_info(0);
  EXPECT_STREQ(si.name, "rob");
  EXPECT_EQ(si.num_slots, 8);
  EXPECT_EQ(si.flags, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER);
  EXPECT_EQ(si.num_fields, 4);
  EXPECT_EQ(si.num_properties, 3);
  EXPECT_EQ(si.scope_id, 1);
  EXPECT_EQ(r.field(0, 2).type, USCOPE_FT_ENUM);
  EXPECT_EQ(r.field(0, 3).type, USCOPE_FT_I16);
  EXPECT_EQ(r.field(0, 0, true).role, USCOPE_ROLE_HEAD_PTR);
  EXPECT_EQ(r.field(0, 0, true).pair_id, 3);
  EXPECT_EQ(r.field(0, 1, true).role, USCOPE_ROLE_TAIL_PTR);
  EXPECT_EQ(r.field(0, 2, true).role, USCOPE_ROLE_PLAIN);
  EXPECT_EQ(r.field(0, 2, true).type, USCOPE_FT_U16);
  EXPECT_EQ(r.storage_info(1).scope_id, USCOPE_ROOT_SCOPE);

  uscope_event_type_info_t et{};
  ASSERT_EQ(uscope_reader_event_type(r.get(), &et, 0), USCOPE_OK);
  EXPECT_EQ(et.payload_size, 9u);
  uscope_field_info_t ef{};
  ASSERT_EQ(uscope_reader_event_field(r.get(), &ef, 0, 2), USCOPE_OK);
  EXPECT_EQ(ef.type, USCOPE_FT_STRING_REF);

  // State: slot 3 was last written at cycle 19 (19 % 8 == 3).
  EXPECT_EQ(r.slot(19000, 0, 3, 0), 19u);
  EXPECT_EQ(r.slot(19000, 0, 3, 1), 0x80000000ull + 76);
  EXPECT_EQ(r.slot(19000, 0, 3, 2), 4u);
  EXPECT_EQ(r.slot(19000, 0, 3, 3), 0xFFEDu);  // -19 as 16 stored bits
  EXPECT_EQ(r.prop(19000, 0, 0), 3u);
  EXPECT_EQ(r.slot(19000, 1, 2, 0), 60u);
  EXPECT_FALSE(r.valid(9000, 0, 1));
  EXPECT_TRUE(r.valid(8000, 0, 1));

  const auto events = r.events();
  ASSERT_EQ(events.size(), 21u);
  EXPECT_EQ(events[0].time, 0u);
  EXPECT_EQ(events[0].payload, cat({le(0, 4), le(0, 1), le(note, 4)}));
  EXPECT_EQ(events[19].time, 18000u);
  EXPECT_EQ(events[19].payload, cat({le(18, 4), le(3, 1), le(note, 4)}));
  EXPECT_EQ(events[8].type, 1);
  EXPECT_EQ(events[8].time, 7000u);
  EXPECT_TRUE(events[8].payload.empty());
}

TEST(DpiSchema, CsvErrorsNameTheProblemAndAddNothing) {
  void *s = uscope_sv_schema_create();
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(uscope_sv_schema_clock(s, "clk", 1000), 0);
  ASSERT_EQ(uscope_sv_schema_scope(s, "root", -1, nullptr, 0), 0);

  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x:u33", ""), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_NE(last_error().find("unknown type \"u33\""), std::string::npos) << last_error();
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x:u8:head_ptr", ""), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_NE(last_error().find("only storage properties take a role"), std::string::npos) << last_error();
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x:u8", "h:u8:middle_ptr"), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x:u8", "h:u8:head_ptr(300)"), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x", ""), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, ":u8", ""), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "x:enum(nope)", ""), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(last_error().find("no enum named \"nope\""), std::string::npos) << last_error();
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 0, 0, "x:u8", ""), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 70000, 0, "x:u8", ""), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 9, 4, 0, "x:u8", ""), USCOPE_ERR_SCHEMA);  // no scope 9
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", -2, 4, 0, "x:u8", ""), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_sv_schema_storage(s, nullptr, 0, 4, 0, "x:u8", ""), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_sv_schema_event(s, "e", 0, "a:bool,b:float"), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_summary(s, "sum", "enum(x)", 0), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_schema_scope(s, "x", 0, "", 7), USCOPE_ERR_SCHEMA);  // no clock 7
  EXPECT_EQ(uscope_sv_schema_enum(s, "empty", ""), USCOPE_ERR_LIMIT);
  // Nothing was added by the failures: the next ids are the first ones.
  EXPECT_EQ(uscope_sv_schema_storage(s, "a", 0, 4, 0, "X:U8, y:Bool", ""), 0) << last_error();
  EXPECT_EQ(uscope_sv_schema_event(s, "e", 0, "a:bool"), 0);
  EXPECT_EQ(uscope_sv_schema_scope(s, "x", 0, "", -1), 1);
  EXPECT_EQ(uscope_sv_schema_free(s), 0);
}

TEST(DpiSchema, BadHandles) {
  int dummy = 0;
  EXPECT_EQ(uscope_sv_schema_clock(nullptr, "c", 1), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_EQ(uscope_sv_schema_clock(&dummy, "c", 1), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_NE(last_error().find("not a live schema"), std::string::npos);
  EXPECT_EQ(uscope_sv_schema_free(&dummy), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_EQ(uscope_sv_schema_free(nullptr), 0);
  EXPECT_EQ(uscope_open("/tmp/x.uscope", &dummy), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_EQ(uscope_open(nullptr, nullptr), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_INVALID_ARGUMENT);
  void *s = uscope_sv_schema_create();
  EXPECT_EQ(uscope_close(s), USCOPE_DPI_ERR_BAD_HANDLE);  // a schema is not a writer
  EXPECT_EQ(uscope_sv_cycle(s, 0), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_EQ(uscope_sv_schema_free(s), 0);
  EXPECT_EQ(uscope_sv_schema_free(s), USCOPE_DPI_ERR_BAD_HANDLE);  // twice
  EXPECT_EQ(uscope_close(nullptr), 0);
  EXPECT_EQ(uscope_sv_find(nullptr, "storage", "x"), USCOPE_DPI_ERR_BAD_HANDLE);
  EXPECT_EQ(uscope_sv_find(&dummy, "storage", "x"), USCOPE_DPI_ERR_BAD_HANDLE);
}

TEST(DpiSchema, OpenWithoutClockFailsWithMessage) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  EXPECT_EQ(uscope_open(dir.file("x.uscope").c_str(), s), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_SCHEMA);
  EXPECT_NE(last_error().find("uscope_open"), std::string::npos) << last_error();
  uscope_sv_schema_free(s);
}

// The status of the last call was AMBIGUOUS, and its message names every one of `words`.
void expect_ambiguous(int got, std::initializer_list<const char *> words) {
  EXPECT_EQ(got, USCOPE_ERR_AMBIGUOUS);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_AMBIGUOUS);
  const std::string msg = last_error();
  for (const char *w : words) EXPECT_NE(msg.find(w), std::string::npos) << "\"" << w << "\" not in: " << msg;
}

TEST(DpiSchema, FindByName) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  const int c0 = uscope_sv_schema_scope(s, "core0", 0, "", -1);
  const int c1 = uscope_sv_schema_scope(s, "core1", 0, "", -1);
  const int alu0 = uscope_sv_schema_scope(s, "alu", c0, "", -1);
  const int alu1 = uscope_sv_schema_scope(s, "alu", c1, "", -1);
  uscope_sv_schema_enum(s, "st", "a,b,c");
  ASSERT_EQ(uscope_sv_schema_storage(s, "rob", c0, 4, 1, "id:u32,pc:u64", "head:u8"), 0);
  ASSERT_EQ(uscope_sv_schema_storage(s, "rob", c1, 4, 1, "id:u32,pc:u64,stage:enum(st)", ""), 1);
  ASSERT_EQ(uscope_sv_schema_storage(s, "regs", c0, 32, 0, "v:u32", ""), 2);
  ASSERT_EQ(uscope_sv_schema_event(s, "ev", c1, "x:u8,y:u16"), 0);
  ASSERT_EQ(uscope_sv_schema_summary(s, "ipc", "u32", c0), 0);
  ASSERT_EQ(uscope_sv_schema_summary(s, "ipc", "u32", c1), 1);

  // A plain name declared in two scopes is an error, as libuscope's look-ups
  // say it (uscope_reader_find_storage): the candidates are listed.
  expect_ambiguous(uscope_sv_find(s, "storage", "rob"),
                   {"uscope_sv_find", "2 storages", "storage 0 (scope 1 \"core0\")", "storage 1 (scope 2 \"core1\")"});
  expect_ambiguous(uscope_sv_find(s, "field", "rob.pc"), {"2 storages", "\"rob\""});
  expect_ambiguous(uscope_sv_find(s, "property", "rob.head"), {"2 storages"});
  expect_ambiguous(uscope_sv_find(s, "scope", "alu"), {"2 scopes", "\"alu\"", "scope 3", "scope 4"});
  expect_ambiguous(uscope_sv_find(s, "summary", "ipc"), {"2 summary fields", "\"ipc\""});
  // Qualified by scope, each is one.
  EXPECT_EQ(uscope_sv_find(s, "storage", "core0.rob"), 0);
  EXPECT_EQ(uscope_sv_find(s, "storage", "core1.rob"), 1);
  EXPECT_EQ(uscope_sv_find(s, "storage", "root.core1.rob"), 1);
  EXPECT_EQ(uscope_sv_find(s, "field", "core1.rob.stage"), 2);
  EXPECT_EQ(uscope_sv_find(s, "field", "core0.rob.pc"), 1);
  EXPECT_EQ(uscope_sv_find(s, "property", "core0.rob.head"), 0);
  // Declared once: the plain name.
  EXPECT_EQ(uscope_sv_find(s, "storage", "regs"), 2);
  EXPECT_EQ(uscope_sv_find(s, "field", "regs.v"), 0);
  EXPECT_EQ(uscope_sv_find(s, "event", "ev"), 0);
  EXPECT_EQ(uscope_sv_find(s, "event", "core1.ev"), 0);
  EXPECT_EQ(uscope_sv_find(s, "event_field", "ev.y"), 1);
  EXPECT_EQ(uscope_sv_find(s, "enum_value", "st.c"), 2);
  EXPECT_EQ(uscope_sv_find(s, "scope", "core1"), c1);
  EXPECT_EQ(uscope_sv_find(s, "clock", "clk"), 0);
  EXPECT_NE(alu0, alu1);
  EXPECT_EQ(uscope_sv_find(s, "storage", "nope"), USCOPE_ERR_NOT_FOUND);
  EXPECT_EQ(uscope_sv_find(s, "storage", "core0.ev"), USCOPE_ERR_NOT_FOUND);  // an event's name
  EXPECT_EQ(uscope_sv_find(s, "storage", "core2.rob"), USCOPE_ERR_NOT_FOUND);
  EXPECT_EQ(uscope_sv_find(s, "field", "core0.rob.nope"), USCOPE_ERR_NOT_FOUND);
  EXPECT_EQ(uscope_sv_find(s, "field", "core0.rob.stage"), USCOPE_ERR_NOT_FOUND);  // core1's only
  EXPECT_EQ(uscope_sv_find(s, "colour", "x"), USCOPE_ERR_INVALID_ARGUMENT);

  // The writer keeps the names as they were at open, with the same rules.
  void *w = uscope_open(dir.file("f.uscope").c_str(), s);
  ASSERT_NE(w, nullptr) << last_error();
  uscope_sv_schema_storage(s, "later", c0, 1, 0, "v:u8", "");
  EXPECT_EQ(uscope_sv_find(s, "storage", "later"), 3);
  EXPECT_EQ(uscope_sv_find(w, "storage", "later"), USCOPE_ERR_NOT_FOUND);
  expect_ambiguous(uscope_sv_find(w, "storage", "rob"), {"2 storages", "storage 1 (scope 2 \"core1\")"});
  expect_ambiguous(uscope_sv_find(w, "scope", "alu"), {"2 scopes"});
  EXPECT_EQ(uscope_sv_find(w, "storage", "core1.rob"), 1);
  uscope_sv_schema_free(s);
  EXPECT_EQ(uscope_sv_find(w, "field", "core1.rob.stage"), 2);
  EXPECT_EQ(uscope_sv_find(w, "event", "ev"), 0);
  EXPECT_EQ(uscope_close(w), 0);  // the failed look-ups were no error of the writer
  EXPECT_EQ(uscope_sv_find(w, "storage", "core0.rob"), USCOPE_DPI_ERR_BAD_HANDLE);  // closed
}

TEST(DpiOptions, Errors) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  const std::string p = dir.file("o.uscope");
  EXPECT_EQ(uscope_open_opts(p.c_str(), s, "colour=blue"), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_NE(last_error().find("unknown key \"colour\""), std::string::npos) << last_error();
  EXPECT_EQ(uscope_open_opts(p.c_str(), s, "compression=gzip"), nullptr);
  EXPECT_NE(last_error().find("bad value \"gzip\""), std::string::npos) << last_error();
  EXPECT_EQ(uscope_open_opts(p.c_str(), s, "checkpoint_interval_ps=-5"), nullptr);
  EXPECT_EQ(uscope_open_opts(p.c_str(), s, "compression"), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  void *w = uscope_open_opts(p.c_str(), s,
                             "compression=none;durability=none frames=v01,backpressure=drop,"
                             "queue_bytes=0x100000,value_check=strict,checkpoint_interval_ps=2000");
  ASSERT_NE(w, nullptr) << last_error();
  EXPECT_EQ(uscope_close(w), 0);
  Reader r(p);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.compression, static_cast<uint32_t>(USCOPE_COMPRESSION_NONE));
  EXPECT_EQ(info.interleaved, 0u);  // v0.1 frames
  EXPECT_EQ(info.checkpoint_interval_ps, 2000u);
  uscope_sv_schema_free(s);
}

// compress_threads: a worker count, "inline" or "auto"; the handle is the
// writer, whose stats say what it runs with.
TEST(DpiOptions, CompressThreads) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  const std::string p = dir.file("c.uscope");
  for (const char *bad : {"compress_threads=0", "compress_threads=65", "compress_threads=two", "compress_threads=-1"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(uscope_open_opts(p.c_str(), s, bad), nullptr);
    EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX) << last_error();
  }
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const unsigned cpus = static_cast<unsigned>(CPU_COUNT(&set));
  const std::pair<const char *, uint32_t> cases[] = {
      {"compress_threads=3", 3}, {"compress_threads=inline", 0}, {"compress_threads=auto", std::min(cpus - 1, 4u)}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.first);
    void *w = uscope_open_opts(p.c_str(), s, c.first);
    ASSERT_NE(w, nullptr) << last_error();
    uscope_writer_stats_t st{};
    st.struct_size = sizeof st;
    ASSERT_EQ(uscope_writer_stats(static_cast<uscope_writer_t *>(w), &st), USCOPE_OK);
    EXPECT_EQ(st.compress_threads, c.second);
    EXPECT_EQ(uscope_close(w), 0);
  }
  uscope_sv_schema_free(s);
}

// Numbers of option strings go through the core's checked parser
// (src/base/parse.hpp): no wrapped negatives, no octal, no silent truncation.
TEST(DpiOptions, NumbersAreChecked) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  const std::string p = dir.file("n.uscope");
  for (const char *bad : {"queue_bytes=-1", "queue_bytes=0x-5", "checkpoint_interval_ps=+5", "level=9x",
                          "level=2147483648", "level=--1", "checkpoint_interval_ps=18446744073709551616"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(uscope_open_opts(p.c_str(), s, bad), nullptr);
    EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX) << last_error();
  }
  // "-3" is read as -3 (libuscope then refuses it for zstd, not the bridge's syntax).
  EXPECT_EQ(uscope_open_opts(p.c_str(), s, "compression=zstd,level=-3"), nullptr);
  EXPECT_NE(last_error().find("-3: zstd takes"), std::string::npos) << last_error();
  void *w = uscope_open_opts(p.c_str(), s, "compression=zstd,level=+3,checkpoint_interval_ps=010");
  ASSERT_NE(w, nullptr) << last_error();  // a decimal "010" here was always decimal (base 10)
  EXPECT_EQ(uscope_close(w), 0);
  Reader r(p);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.checkpoint_interval_ps, 10u);
  uscope_sv_schema_free(s);
}

// uscope_sv_pccx_open's numbers: strtoull(base 0) used to read "010" as 8
// and "-1" as 2^64-1; both are refused now, and a failure is in the bridge's
// one error record (uscope_sv_pccx_error is uscope_dpi_last_error).
TEST(DpiPccx, OpenOptionsAreChecked) {
  TempDir dir;
  const std::string p = dir.file("o.pccx");
  struct Case {
    const char *options, *message;
  } cases[] = {{"cores=010", "leading 0 (octal)"},
               {"cores=-1", "negative"},
               {"queue_bytes=-1", "negative"},
               {"mac_rows=4294967296", "too large"},
               {"peak_tops=1.5x", "after it"},
               {"peak_tops=", "empty value"},
               {"encoding=gzip", "bincode, flatbuf or raw"},
               {"speed=1", "unknown key \"speed\""}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.options);
    EXPECT_EQ(uscope_sv_pccx_open(p.c_str(), c.options), nullptr);
    EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
    EXPECT_NE(std::string(uscope_sv_pccx_error()).find(c.message), std::string::npos) << uscope_sv_pccx_error();
    EXPECT_STREQ(uscope_sv_pccx_error(), uscope_dpi_last_error());
  }
  EXPECT_EQ(uscope_sv_pccx_open(nullptr, ""), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_INVALID_ARGUMENT);
  void *w = uscope_sv_pccx_open(p.c_str(), "cores=0x2 mac_rows=4,mac_cols=4;clock_mhz=800 peak_tops=1e1");
  ASSERT_NE(w, nullptr) << uscope_sv_pccx_error();
  EXPECT_EQ(uscope_sv_pccx_event(w, 1, 0, 10, 1, ""), 0) << uscope_sv_pccx_error();
  EXPECT_EQ(uscope_sv_pccx_close(w), 0) << uscope_sv_pccx_error();
}

// ── JSON ──

// The SV calls that mirror tests/dpi/data/example_schema.json, in its order.
void *example_schema_from_calls() {
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_dut_property(s, "dut_name", "demo_core");
  uscope_sv_schema_dut_property(s, "cpu.isa", "RV32I");
  uscope_sv_schema_dut_property(s, "cpu.fetch_width", "1");
  uscope_sv_schema_clock(s, "core_clk", 1000);
  uscope_sv_schema_clock(s, "npu_clk", 1250);
  uscope_sv_schema_scope(s, "root", -1, "", -1);
  uscope_sv_schema_scope(s, "core0", 0, "cpu", 0);
  uscope_sv_schema_scope(s, "npu0", 0, "", 1);
  uscope_sv_schema_enum(s, "pipeline_stage", "IF,ID,EX,MEM,WB");
  uscope_sv_schema_enum(s, "npu_op", "DMA_IN,DMA_OUT,MATMUL,SOFTMAX");
  uscope_sv_schema_storage(s, "rob", 1, 16, 3, "entity_id:u32,pc:u64,stage:enum(pipeline_stage),done:bool",
                           "head:u16:head_ptr(0),tail:u16:tail_ptr(0),count:u16");
  uscope_sv_schema_storage(s, "regs", 1, 32, 0, "value:u32,last_writer:i32", "");
  uscope_sv_schema_storage(s, "npu_queue", 2, 4, 1, "op:enum(npu_op),token:u32,text:string", "depth:u8");
  uscope_sv_schema_event(s, "stage_transition", 1, "entity_id:u32,stage:enum(pipeline_stage)");
  uscope_sv_schema_event(s, "npu_done", 2, "token:u32,cycles:u16,ok:bool");
  uscope_sv_schema_event(s, "tick", 0, "");
  EXPECT_EQ(uscope_sv_schema_summary(s, "ipc_x1000", "u32", 1), 0) << last_error();
  return s;
}

void trace_example(void *w) {
  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  for (uint64_t cy = 0; cy < 300; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(wr, cy * 1000), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 16, 1, 0x1000 + cy * 4), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 0, cy % 16, 2, cy % 5), USCOPE_OK);
    ASSERT_EQ(uscope_prop_set(wr, 0, 0, cy % 16), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(wr, 1, cy % 32, 0, cy * 7), USCOPE_OK);
    Payload p;
    p.put(cy, 4).put(cy % 5, 1);
    ASSERT_EQ(uscope_event_raw(w, 0, p.b, p.n), USCOPE_OK);
    if (cy % 10 == 0) {
      Payload q;
      q.put(cy / 10, 4).put(cy, 2).put(1, 1);
      ASSERT_EQ(uscope_event_raw(w, 1, q.b, q.n), USCOPE_OK);
    }
    ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  }
}

const std::string kExampleJson = std::string(USCOPE_DPI_TEST_DATA) + "/example_schema.json";

TEST(DpiJson, ExampleGivesTheSameFileAsSvCalls) {
  TempDir dir;
  const std::string a = dir.file("json.uscope"), b = dir.file("calls.uscope");
  void *w = uscope_open_json(a.c_str(), kExampleJson.c_str());
  ASSERT_NE(w, nullptr) << last_error();
  EXPECT_EQ(uscope_sv_find(w, "storage", "npu0.npu_queue"), 2);
  EXPECT_EQ(uscope_sv_find(w, "property", "rob.count"), 2);
  trace_example(w);
  ASSERT_EQ(uscope_close(w), 0) << last_error();

  void *s = example_schema_from_calls();
  void *w2 = uscope_open_opts(b.c_str(), s, "checkpoint_interval_ps=100000");
  ASSERT_NE(w2, nullptr) << last_error();
  uscope_sv_schema_free(s);
  trace_example(w2);
  ASSERT_EQ(uscope_close(w2), 0) << last_error();

  const std::string fa = dpitest::slurp(a), fb = dpitest::slurp(b);
  ASSERT_GT(fa.size(), 1000u);
  EXPECT_TRUE(fa == fb) << "the JSON schema and the equivalent SV calls gave different files";

  Reader r(a);
  EXPECT_EQ(r.dut("cpu.fetch_width"), "1");
  EXPECT_EQ(r.storage("npu_queue"), 2);
  EXPECT_EQ(r.field(0, 0, true).role, USCOPE_ROLE_HEAD_PTR);
  EXPECT_EQ(r.field(2, 0).type, USCOPE_FT_ENUM);
  EXPECT_EQ(r.field(2, 0).enum_id, 1);
  EXPECT_EQ(r.field(2, 2).type, USCOPE_FT_STRING_REF);
  EXPECT_EQ(r.slot(299000, 1, 299 % 32, 0), 299u * 7);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.checkpoint_interval_ps, 100000u);  // from "options"
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  EXPECT_EQ(uscope_reader_summary(r.get(), &sum), USCOPE_OK);
  uscope_schema_counts_t counts{};
  counts.struct_size = sizeof counts;
  ASSERT_EQ(uscope_reader_schema_counts(r.get(), &counts), USCOPE_OK);
  EXPECT_EQ(counts.summary_fields, 1u);
  EXPECT_EQ(counts.event_types, 3u);
}

TEST(DpiJson, SchemaFromJsonCanBeExtendedFromSv) {
  TempDir dir;
  void *s = uscope_sv_schema_from_json(kExampleJson.c_str());
  ASSERT_NE(s, nullptr) << last_error();
  const int extra = uscope_sv_schema_storage(s, "extra", uscope_sv_find(s, "scope", "npu0"), 2, 0,
                                             "op:enum(npu_op)", "");
  EXPECT_EQ(extra, 3) << last_error();
  void *w = uscope_open_opts(dir.file("x.uscope").c_str(), s, "compression=zstd");
  ASSERT_NE(w, nullptr) << last_error();
  EXPECT_EQ(uscope_close(w), 0);
  Reader r(dir.file("x.uscope"));
  EXPECT_EQ(r.storage("extra"), 3);
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r.get(), &info), USCOPE_OK);
  EXPECT_EQ(info.compression, static_cast<uint32_t>(USCOPE_COMPRESSION_ZSTD));  // over the JSON's lz4
  EXPECT_EQ(info.checkpoint_interval_ps, 100000u);                              // the JSON's
  uscope_sv_schema_free(s);
}

struct JsonCase {
  const char *name;
  const char *json;
  int status;
  const char *message;  // a substring of the message
};

const char *const kBase =
    R"j("clocks":[{"name":"c","period_ps":1000}],"scopes":[{"name":"root"},{"name":"s","parent":"root"}])j";

std::string with_base(const char *rest) { return std::string("{") + kBase + (*rest ? "," : "") + rest + "}"; }

TEST(DpiJson, ErrorsNameTheJsonPath) {
  const JsonCase cases[] = {
      {"syntax", "{\"clocks\": [", USCOPE_DPI_ERR_JSON, "not valid JSON"},
      {"not an object", "[1,2]", USCOPE_DPI_ERR_JSON_SCHEMA, "$: expected an object, found an array"},
      {"unknown top member", "{\"clock\": []}", USCOPE_DPI_ERR_JSON_SCHEMA, "$: unknown member \"clock\""},
      {"version", "{\"version\": 2}", USCOPE_DPI_ERR_JSON_SCHEMA, "$.version: version 2"},
      {"clocks not array", "{\"clocks\": {}}", USCOPE_DPI_ERR_JSON_SCHEMA, "$.clocks: expected an array"},
      {"clock without name", "{\"clocks\": [{\"period_ps\": 5}]}", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.clocks[0]: missing member \"name\""},
      {"negative period", "{\"clocks\": [{\"name\":\"c\",\"period_ps\": -5}]}", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.clocks[0].period_ps: expected a non-negative integer"},
      {"unknown parent", R"j({"clocks":[{"name":"c"}],"scopes":[{"name":"root"},{"name":"x","parent":"rot"}]})j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.scopes[1].parent: no scope named \"rot\""},
      {"first scope has a parent", R"j({"clocks":[{"name":"c"}],"scopes":[{"name":"x","parent":0}]})j",
       USCOPE_ERR_SCHEMA, "$.scopes[0]"},
      {"storage typo", R"j("storages":[{"name":"r","scope":"s","slot":4,"fields":"a:u8"}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0]: unknown member \"slot\""},
      {"slots missing", R"j("storages":[{"name":"r","scope":"s","fields":"a:u8"}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.storages[0]: missing member \"slots\""},
      {"slots string", R"j("storages":[{"name":"r","scope":"s","slots":"4","fields":"a:u8"}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].slots: expected a non-negative integer, found a string"},
      {"slots too many", R"j("storages":[{"name":"r","scope":"s","slots":70000,"fields":"a:u8"}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].slots: 70000 is larger than 65535"},
      {"unknown type", R"j("storages":[{"name":"r","slots":4,"fields":[{"name":"a","type":"u8"},{"name":"b","type":"float"}]}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].fields[1].type: unknown type \"float\""},
      {"enum without enum", R"j("storages":[{"name":"r","slots":4,"fields":[{"name":"a","type":"enum"}]}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].fields[0]: type \"enum\" needs an \"enum\" member"},
      {"unknown enum", R"j("storages":[{"name":"r","slots":4,"fields":[{"name":"a","type":"enum(stage)"}]}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].fields[0].type: no enum named \"stage\""},
      {"csv fields", R"j("events":[{"name":"e","scope":"s","fields":"a:u8,b"}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.events[0].fields: field list: \"b\" is not name:type"},
      {"role on field", R"j("storages":[{"name":"r","slots":4,"fields":[{"name":"a","type":"u8","role":"head_ptr"}]}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].fields[0]: unknown member \"role\""},
      {"bad role", R"j("storages":[{"name":"r","slots":4,"fields":"a:u8","properties":[{"name":"h","type":"u8","role":"top"}]}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].properties[0].role: unknown role \"top\""},
      {"sparse not bool", R"j("storages":[{"name":"r","slots":4,"sparse":1,"fields":"a:u8"}])j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.storages[0].sparse: expected true or false"},
      {"unknown scope", R"j("events":[{"name":"e","scope":"core9"}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.events[0].scope: no scope named \"core9\""},
      {"ambiguous scope", R"j({"clocks":[{"name":"c"}],"scopes":[{"name":"root"},{"name":"a","parent":0},{"name":"b","parent":0},{"name":"alu","parent":"a"},{"name":"alu","parent":"b"},{"name":"x","parent":"alu"}]})j",
       USCOPE_DPI_ERR_JSON_SCHEMA, "$.scopes[5].parent: 2 scopes are named \"alu\": scope 3, scope 4; use the id"},
      {"scope id out of range", R"j("events":[{"name":"e","scope":70000}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.events[0].scope: scope id 70000 is out of range"},
      {"bad option", R"j("options":{"compression":"gzip"})j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.options.compression: option compression: bad value \"gzip\""},
      {"unknown option", R"j("options":{"speed":"fast"})j", USCOPE_DPI_ERR_JSON_SCHEMA, "$.options.speed: unknown option"},
      {"dut object value", R"j("dut":{"k":{}})j", USCOPE_DPI_ERR_JSON_SCHEMA, "$.dut.k: expected a string"},
      {"summary enum", R"j("summary_fields":[{"name":"x","type":"enum(a)"}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.summary_fields[0].type: unknown type"},
      {"enum values", R"j("enums":[{"name":"e","values":[1,2]}])j", USCOPE_DPI_ERR_JSON_SCHEMA,
       "$.enums[0].values[0]: expected a string, found an integer"},
  };
  TempDir dir;
  for (const JsonCase &c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text = c.json[0] == '{' || c.json[0] == '[' ? c.json : with_base(c.json);
    const std::string path = dir.write(std::string("case.json"), text);
    EXPECT_EQ(uscope_sv_schema_from_json(path.c_str()), nullptr);
    EXPECT_EQ(uscope_dpi_last_status(), c.status) << last_error();
    EXPECT_NE(last_error().find(c.message), std::string::npos) << last_error();
    EXPECT_NE(last_error().find(path), std::string::npos) << last_error();
    // uscope_open_json reports the same, and creates no file.
    const std::string out = dir.file("never.uscope");
    EXPECT_EQ(uscope_open_json(out.c_str(), path.c_str()), nullptr);
    EXPECT_EQ(uscope_dpi_last_status(), c.status) << last_error();
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  EXPECT_EQ(uscope_sv_schema_from_json(dir.file("missing.json").c_str()), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_JSON);
  EXPECT_NE(last_error().find("cannot read"), std::string::npos) << last_error();
  EXPECT_EQ(uscope_sv_schema_from_json(nullptr), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_INVALID_ARGUMENT);
}

// ── registry ──

TEST(DpiRegistry, RegisterLookupReplaceRemove) {
  int a = 0, b = 0;
  EXPECT_EQ(uscope_handle("reg_x"), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_NOT_FOUND);
  // One error channel: the bridge's message is libuscope's last error.
  EXPECT_NE(std::string(uscope_dpi_last_error()).find("reg_x"), std::string::npos) << uscope_dpi_last_error();
  EXPECT_EQ(uscope_dpi_last_error(), uscope_last_error());
  uscope_dpi_register("reg_x", &a);
  EXPECT_EQ(uscope_handle("reg_x"), &a);
  uscope_dpi_register("reg_x", &b);
  EXPECT_EQ(uscope_handle("reg_x"), &b);
  uscope_dpi_register("reg_x", nullptr);
  EXPECT_EQ(uscope_handle("reg_x"), nullptr);
  uscope_dpi_register(nullptr, &a);  // ignored
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_handle(nullptr), nullptr);
}

TEST(DpiRegistry, CloseRemovesTheWriterNames) {
  TempDir dir;
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  void *w = uscope_open(dir.file("r.uscope").c_str(), s);
  ASSERT_NE(w, nullptr);
  int other = 0;
  uscope_dpi_register("reg_writer", w);
  uscope_dpi_register("reg_alias", w);
  uscope_dpi_register("reg_other", &other);
  EXPECT_EQ(uscope_handle("reg_alias"), w);
  EXPECT_EQ(uscope_close(w), 0);
  EXPECT_EQ(uscope_handle("reg_writer"), nullptr);
  EXPECT_EQ(uscope_handle("reg_alias"), nullptr);
  EXPECT_EQ(uscope_handle("reg_other"), &other);
  uscope_dpi_register("reg_other", nullptr);
  uscope_sv_schema_free(s);
}

// ── writers ──

void *small_writer(const std::string &path, const char *options = "") {
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  EXPECT_EQ(uscope_sv_schema_storage(s, "st", 0, 4, 0, "v:u32", ""), 0);
  EXPECT_EQ(uscope_sv_schema_event(s, "ev", 0, "a:u64"), 0);
  EXPECT_EQ(uscope_sv_schema_event(s, "big", 0,
                                   "a0:u64,a1:u64,a2:u64,a3:u64,a4:u64,a5:u64,a6:u64,a7:u64,a8:u64,a9:u64,"
                                   "b0:u64,b1:u64,b2:u64,b3:u64,b4:u64,b5:u64,b6:u64,b7:u64,b8:u64,b9:u64,"
                                   "c0:u64,c1:u64,c2:u64,c3:u64,c4:u64,c5:u64,c6:u64,c7:u64,c8:u64,c9:u64,"
                                   "d0:u64,d1:u64,d2:u64,d3:u64,d4:u64,d5:u64,d6:u64,d7:u64"),
            1);  // 304 bytes: too large for the SV payload array
  void *w = uscope_open_opts(path.c_str(), s, options);
  uscope_sv_schema_free(s);
  return w;
}

TEST(DpiWriter, EventRawLongerThanTheArrayIsAStickyMisuse) {
  TempDir dir;
  const std::string path = dir.file("e.uscope");
  void *w = small_writer(path);
  ASSERT_NE(w, nullptr) << last_error();
  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  Payload p;
  p.put(42, 8);
  ASSERT_EQ(uscope_begin_cycle(wr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_event_raw(w, 0, p.b, 8), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  ASSERT_EQ(uscope_begin_cycle(wr, 1000), USCOPE_OK);
  const int st = uscope_event_raw(w, 1, p.b, 304);  // would read past the 256-byte array
  EXPECT_EQ(st, USCOPE_ERR_INVALID_ARGUMENT);       // the writer saw a NULL payload
  EXPECT_NE(last_error().find("larger than the 256-byte payload array"), std::string::npos) << last_error();
  EXPECT_EQ(uscope_event_raw(w, 0, p.b, 8), st);  // sticky
  EXPECT_EQ(uscope_event_raw(w, 0, p.b, 300), st);
  EXPECT_EQ(uscope_end_cycle(wr), st);  // sticky too
  EXPECT_EQ(uscope_close(w), st);
  EXPECT_NE(last_error().find("payload is NULL"), std::string::npos) << last_error();
  Reader r(path);
  ASSERT_EQ(r.events().size(), 1u);  // the cycle before the misuse is kept
}

TEST(DpiWriter, EventRawWrongSize) {
  TempDir dir;
  void *w = small_writer(dir.file("e.uscope"));
  ASSERT_NE(w, nullptr);
  Payload p;
  ASSERT_EQ(uscope_begin_cycle(static_cast<uscope_writer_t *>(w), 0), USCOPE_OK);
  EXPECT_EQ(uscope_event_raw(w, 0, p.b, 4), USCOPE_ERR_PAYLOAD_SIZE);
  EXPECT_NE(std::string(uscope_writer_error(static_cast<uscope_writer_t *>(w))).find("8"), std::string::npos);
  EXPECT_EQ(uscope_close(w), USCOPE_ERR_PAYLOAD_SIZE);
}

TEST(DpiWriter, SvCycleOpensOneFramePerTime) {
  TempDir dir;
  const std::string path = dir.file("c.uscope");
  void *w = small_writer(path);
  ASSERT_NE(w, nullptr) << last_error();
  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  // As SV hooks on an event-driven simulator would: each hook calls
  // uscope_sv_cycle with the current time before its ops.
  const uint64_t times[] = {0, 0, 0, 1000, 1000, 5000, 7000, 7000};
  uint32_t v = 0;
  for (uint64_t t : times) {
    ASSERT_EQ(uscope_sv_cycle(w, t), USCOPE_OK) << uscope_writer_error(wr);
    ASSERT_EQ(uscope_slot_set(wr, 0, v % 4, 0, v + 100), USCOPE_OK);
    ++v;
  }
  EXPECT_EQ(uscope_sv_cycle(w, 6000), USCOPE_ERR_TIME_BACKWARDS);
  EXPECT_EQ(uscope_close(w), USCOPE_ERR_TIME_BACKWARDS);
  Reader r(path);
  EXPECT_EQ(r.item_times(), (std::vector<uint64_t>{0, 1000, 5000, 7000}));
  EXPECT_EQ(r.slot(7000, 0, 3, 0), 107u);  // the last frame is kept by uscope_close
  EXPECT_EQ(r.slot(7000, 0, 2, 0), 106u);
  EXPECT_EQ(r.slot(0, 0, 2, 0), 102u);
}

TEST(DpiWriter, SvCycleLastFrameKeptOnCleanClose) {
  TempDir dir;
  const std::string path = dir.file("c2.uscope");
  void *w = small_writer(path);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(uscope_sv_cycle(w, 3000), USCOPE_OK);
  ASSERT_EQ(uscope_slot_set(static_cast<uscope_writer_t *>(w), 0, 1, 0, 9), USCOPE_OK);
  ASSERT_EQ(uscope_close(w), USCOPE_OK) << last_error();
  Reader r(path);
  EXPECT_EQ(r.slot(3000, 0, 1, 0), 9u);
}

// uscope_sv_cycle keeps each thread's last writer state without the lock; a
// writer opened after a close starts fresh, whether or not the allocator gives
// it the closed writer's address (when it does, only the invalidation at
// close tells the two apart).
TEST(DpiWriter, SvCycleStateDoesNotOutliveItsWriter) {
  TempDir dir;
  for (int round = 0; round < 4; ++round) {
    const std::string path = dir.file("r" + std::to_string(round) + ".uscope");
    void *w = small_writer(path);
    ASSERT_NE(w, nullptr) << last_error();
    // Each round starts earlier than the last one ended: stale state would
    // end a frame this writer never began, or go back in time.
    const uint64_t t0 = 9000 - 1000 * round;
    ASSERT_EQ(uscope_sv_cycle(w, t0), USCOPE_OK) << uscope_writer_error(static_cast<uscope_writer_t *>(w));
    ASSERT_EQ(uscope_slot_set(static_cast<uscope_writer_t *>(w), 0, 0, 0, round + 1), USCOPE_OK);
    ASSERT_EQ(uscope_sv_cycle(w, t0 + 500), USCOPE_OK);
    ASSERT_EQ(uscope_close(w), USCOPE_OK) << last_error();
    Reader r(path);
    EXPECT_EQ(r.item_times(), (std::vector<uint64_t>{t0})) << "round " << round;
    EXPECT_EQ(r.slot(t0, 0, 0, 0), uint64_t(round + 1));
  }
}

TEST(DpiWriter, SvCycleInsideAHarnessFrameIsBadState) {
  TempDir dir;
  void *w = small_writer(dir.file("c3.uscope"));
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(uscope_begin_cycle(static_cast<uscope_writer_t *>(w), 0), USCOPE_OK);
  EXPECT_EQ(uscope_sv_cycle(w, 0), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_close(w), USCOPE_ERR_BAD_STATE);
}

// Two simulation threads, each with its producer (uscope_sv_add_producer)
// and frames from uscope_sv_cycle, as SV hooks of a multi-threaded model
// would: one trace, both threads' values at every time.
TEST(DpiWriter, ProducersFromSeveralThreads) {
  TempDir dir;
  const std::string path = dir.file("p.uscope");
  void *w = small_writer(path);
  ASSERT_NE(w, nullptr) << last_error();
  EXPECT_EQ(uscope_sv_add_producer(nullptr), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_BAD_HANDLE);
  void *prod[2] = {uscope_sv_add_producer(w), uscope_sv_add_producer(w)};
  ASSERT_NE(prod[0], nullptr) << last_error();
  ASSERT_NE(prod[1], nullptr) << last_error();
  EXPECT_EQ(uscope_sv_add_producer(prod[0]), nullptr);  // not from a producer
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(uscope_sv_find(prod[1], "storage", "st"), 0);  // the writer's names
  std::atomic<int> bad{0};
  auto run = [&](unsigned i) {
    uscope_writer_t *p = static_cast<uscope_writer_t *>(prod[i]);
    for (uint64_t c = 0; c < 1000; ++c) {
      bad |= uscope_sv_cycle(prod[i], c * 1000);
      bad |= uscope_slot_set(p, 0, static_cast<uint16_t>(i), 0, 10 * c + i);
    }
    bad |= uscope_close(prod[i]);  // ends its last frame
  };
  std::thread t0(run, 0), t1(run, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(bad.load(), 0) << last_error();
  EXPECT_EQ(uscope_close(w), USCOPE_OK) << last_error();
  Reader r(path);
  EXPECT_EQ(r.item_times().size(), 1000u);
  for (uint64_t c : {0u, 1u, 500u, 999u}) {
    EXPECT_EQ(r.slot(c * 1000, 0, 0, 0), 10 * c) << c;
    EXPECT_EQ(r.slot(c * 1000, 0, 1, 0), 10 * c + 1) << c;
  }
  // The writer closed before its producer: BAD_STATE, and the producer's
  // handle is forgotten with it.
  void *w2 = small_writer(dir.file("q.uscope"));
  void *q = uscope_sv_add_producer(w2);
  ASSERT_NE(q, nullptr) << last_error();
  EXPECT_EQ(uscope_close(w2), USCOPE_ERR_BAD_STATE);
  EXPECT_NE(last_error().find("not closed before their writer"), std::string::npos) << last_error();
}

TEST(DpiWriter, OpenFailsOnBadPath) {
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  EXPECT_EQ(uscope_open("/nonexistent-dir/x.uscope", s), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_IO);
  EXPECT_NE(last_error().find("/nonexistent-dir/x.uscope"), std::string::npos) << last_error();
  uscope_sv_schema_free(s);
}

// ── protocols ──

TEST(DpiProtocols, CpuDeclareTraceAndNames) {
  TempDir dir;
  const std::string path = dir.file("cpu.uscope");
  void *s = uscope_sv_schema_create();
  const int clk = uscope_sv_schema_clock(s, "core_clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", clk);
  // A buffer field of the protocol's own enum: declare it first, with the
  // same values; the protocol reuses it.
  const int stage_enum = uscope_sv_schema_enum(s, "pipeline_stage", "IF,ID,EX,MEM,WB");
  void *cpu = uscope_sv_cpu_declare(s, "core0", 0, clk, "RV32I", "IF,ID,EX,MEM,WB", 32,
                                    "rob:8(done:bool,stage:enum(pipeline_stage)),iq:4", "branches,loads", "",
                                    1, 1, "", "acme", "tiny_core", "priv:u8");
  ASSERT_NE(cpu, nullptr) << last_error();
  // Later CSV lists see the protocol's enums.
  EXPECT_GE(uscope_sv_schema_storage(s, "mine", uscope_sv_find(s, "scope", "core0"), 2, 0,
                                     "st:enum(pipeline_stage),d:enum(dep_type)", ""),
            0)
      << last_error();
  void *w = uscope_open(path.c_str(), s);
  ASSERT_NE(w, nullptr) << last_error();
  const std::vector<std::string> storages = {"entities", "rob", "iq", "committed_insns", "branches", "loads",
                                             "mine", "core0.rob"};
  std::vector<int> ids;
  for (const auto &n : storages) ids.push_back(uscope_sv_find(w, "storage", n.c_str()));
  const std::vector<std::string> events = {"stage_transition", "annotate", "dependency", "flush", "stall"};
  std::vector<int> event_ids;
  for (const auto &n : events) event_ids.push_back(uscope_sv_find(w, "event", n.c_str()));
  EXPECT_EQ(uscope_sv_find(w, "field", "rob.done"), 1);
  EXPECT_EQ(uscope_sv_find(w, "field", "entities.priv"), 3);
  EXPECT_EQ(uscope_sv_find(w, "enum_value", "pipeline_stage.MEM"), 3);
  EXPECT_EQ(uscope_sv_find(w, "enum", "pipeline_stage"), stage_enum);
  EXPECT_EQ(uscope_sv_find(w, "enum_value", "stall_reason.dcache_miss"), 5);
  uscope_sv_schema_free(s);

  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  const uscope_cpu_t *c = static_cast<const uscope_cpu_t *>(cpu);
  ASSERT_EQ(uscope_begin_cycle(wr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_fetch(wr, c, 5, 0x80000000ull, 0x13), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_buffer_insert(wr, c, 0, 2, 5), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  ASSERT_EQ(uscope_begin_cycle(wr, 1000), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_stage_transition(wr, c, 5, 1), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_counter_add(wr, c, 1, 1), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  ASSERT_EQ(uscope_begin_cycle(wr, 2000), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_retire(wr, c, 5), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_buffer_remove(wr, c, 0, 2), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  ASSERT_EQ(uscope_close(w), USCOPE_OK) << last_error();
  uscope_cpu_free(static_cast<uscope_cpu_t *>(cpu));

  Reader r(path);
  for (size_t i = 0; i < storages.size(); ++i) {
    const std::string plain = storages[i].substr(storages[i].rfind('.') + 1);
    EXPECT_EQ(ids[i], r.storage(plain.c_str())) << storages[i];
  }
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(event_ids[i], r.event(events[i].c_str())) << events[i];
  EXPECT_EQ(r.dut("cpu.isa"), "RV32I");
  EXPECT_EQ(r.dut("cpu.vendor"), "acme");
  EXPECT_EQ(r.dut("dut_name"), "tiny_core");
  EXPECT_EQ(r.dut("cpu.pipeline_stages"), "IF,ID,EX,MEM,WB");
  const int ent = r.storage("entities");
  EXPECT_EQ(r.slot(0, ent, 5, USCOPE_CPU_FIELD_PC), 0x80000000ull);
  EXPECT_TRUE(r.valid(1000, ent, 5));
  EXPECT_FALSE(r.valid(2000, ent, 5));
  EXPECT_EQ(r.slot(2000, r.storage("committed_insns"), 0, 0), 1u);
  EXPECT_EQ(r.slot(2000, r.storage("branches"), 0, 0), 1u);
  const auto evs = r.events();
  ASSERT_EQ(evs.size(), 2u);  // stage 0 at fetch, stage 1
  EXPECT_EQ(evs[1].payload, cat({le(5, 4), le(1, 1)}));
}

TEST(DpiProtocols, CpuDeclareErrors) {
  void *s = uscope_sv_schema_create();
  uscope_sv_schema_clock(s, "clk", 1000);
  uscope_sv_schema_scope(s, "root", -1, "", 0);
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "", 4, "", "", "", 0, 0, "", "", "", ""), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "IF", 4, "rob", "", "", 0, 0, "", "", "", ""), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_NE(last_error().find("name:slots"), std::string::npos) << last_error();
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "IF", 4, "rob:4(x:float)", "", "", 0, 0, "", "", "", ""),
            nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "IF", 4, "rob:4(x:u8", "", "", 0, 0, "", "", "", ""),
            nullptr);
  EXPECT_NE(last_error().find("unbalanced"), std::string::npos) << last_error();
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "IF", 70000, "", "", "", 0, 0, "", "", "", ""), nullptr);
  EXPECT_EQ(uscope_sv_cpu_declare(s, "c", 0, 0, nullptr, "IF", 4, "", "", "", 0, 0, "", "", "", ""), nullptr);
  EXPECT_EQ(uscope_sv_cpu_declare(nullptr, "c", 0, 0, "x", "IF", 4, "", "", "", 0, 0, "", "", "", ""), nullptr);
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_BAD_HANDLE);
  // All or nothing: the schema is unchanged, so a good declaration still gets scope 1.
  void *cpu = uscope_sv_cpu_declare(s, "c", 0, 0, "RV32I", "IF", 4, "", "", "", 0, 0, "", "", "", "");
  ASSERT_NE(cpu, nullptr) << last_error();
  EXPECT_EQ(uscope_sv_find(s, "scope", "c"), 1);
  uscope_cpu_free(static_cast<uscope_cpu_t *>(cpu));
  uscope_sv_schema_free(s);
}

TEST(DpiProtocols, NocAndNpuNamesMatchTheFile) {
  TempDir dir;
  const std::string path = dir.file("noc.uscope");
  void *s = uscope_sv_schema_create();
  const int clk = uscope_sv_schema_clock(s, "clk", 1000);
  const int nclk = uscope_sv_schema_clock(s, "npu_clk", 1250);
  uscope_sv_schema_scope(s, "root", -1, "", clk);
  void *noc = uscope_sv_noc_declare(s, "bus0", 0, clk, "AXI4", "crossbar", "AR,R,AW,W,B", 16, "", "ort:8(qos:u8)",
                                    "stalls", 32, 32, 2, 0, 0, 0, "", "qos:u4");
  EXPECT_EQ(noc, nullptr);  // u4 is not a type
  EXPECT_EQ(uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX);
  noc = uscope_sv_noc_declare(s, "bus0", 0, clk, "AXI4", "crossbar", "AR,R,AW,W,B", 16, "", "ort:8(qos:u8)",
                              "stalls", 32, 32, 2, 0, 0, 0, "", "qos:u8");
  ASSERT_NE(noc, nullptr) << last_error();
  void *npu = uscope_sv_npu_declare(s, "npu0", 0, nclk, 4, 1, 1, 2, 0, 4, 1, 0, 16, 16, "stall_cycles", "", "acme",
                                    "", "", "", "");
  ASSERT_NE(npu, nullptr) << last_error();
  void *w = uscope_open(path.c_str(), s);
  ASSERT_NE(w, nullptr) << last_error();
  uscope_sv_schema_free(s);
  const char *const storages[] = {"bus0.transactions", "bus0.ort", "bus0.bytes_tx", "bus0.txn_completed",
                                  "bus0.stalls", "npu0.cmd_queue", "npu0.contexts", "npu0.te", "npu0.ve",
                                  "npu0.dma", "npu0.sram_banks", "npu0.dram", "npu0.macs", "npu0.dma_bytes",
                                  "npu0.noc_bytes", "npu0.stall_cycles"};
  std::vector<int> ids;
  for (const char *n : storages) ids.push_back(uscope_sv_find(w, "storage", n));
  EXPECT_EQ(uscope_sv_find(w, "storage", "npu0.noc"), USCOPE_ERR_NOT_FOUND);  // 0 links: not declared
  const char *const events[] = {"bus0.beat", "bus0.txn_handoff", "bus0.arb_decision", "npu0.cmd_enqueue",
                                "npu0.sram_conflict", "npu0.token_complete", "npu0.warn"};
  std::vector<int> event_ids;
  for (const char *n : events) event_ids.push_back(uscope_sv_find(w, "event", n));
  EXPECT_EQ(uscope_sv_find(w, "field", "bus0.transactions.qos"), 7);
  EXPECT_EQ(uscope_sv_find(w, "event", "root.txn_handoff"), event_ids[1]);  // on the parent scope

  uscope_writer_t *wr = static_cast<uscope_writer_t *>(w);
  ASSERT_EQ(uscope_begin_cycle(wr, 0), USCOPE_OK);
  ASSERT_EQ(uscope_noc_issue(wr, static_cast<uscope_noc_t *>(noc), 3, 0, 0x1000, 4, 2, 0, 1), USCOPE_OK);
  ASSERT_EQ(uscope_npu_cmd_enqueue(wr, static_cast<uscope_npu_t *>(npu), 0, USCOPE_NPU_NO_CONTEXT, 7, "MATMUL",
                                   USCOPE_NPU_SOURCE_MMIO, 11, 0x10000000, 0, 0, "QKV_PROJ"),
            USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(wr), USCOPE_OK);
  ASSERT_EQ(uscope_close(w), USCOPE_OK) << last_error();
  uscope_noc_free(static_cast<uscope_noc_t *>(noc));
  uscope_npu_free(static_cast<uscope_npu_t *>(npu));

  // The reader finds names without scopes: compare the first storage of
  // each name, which is the one in this trace (every name is unique here).
  Reader r(path);
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string plain = std::string(storages[i]).substr(std::string(storages[i]).find('.') + 1);
    EXPECT_EQ(ids[i], r.storage(plain.c_str())) << storages[i];
    EXPECT_GE(ids[i], 0) << storages[i];
  }
  for (size_t i = 0; i < event_ids.size(); ++i) {
    const std::string plain = std::string(events[i]).substr(std::string(events[i]).find('.') + 1);
    EXPECT_EQ(event_ids[i], r.event(plain.c_str())) << events[i];
  }
  EXPECT_EQ(r.dut("bus0/noc.bus_protocol"), "AXI4");
  EXPECT_EQ(r.dut("npu.vendor"), "acme");
  const int txns = r.storage("transactions");
  EXPECT_EQ(r.slot(0, txns, 3, USCOPE_NOC_FIELD_ADDR), 0x1000u);
}

}  // namespace
