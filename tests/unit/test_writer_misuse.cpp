// Misuse of the writer's C API: one test per status code the writer can
// return. Each test checks the exact status, the message (per thread and per
// writer), that a per-cycle error is sticky (later calls are counted no-ops
// returning the same code), that close() returns it, and, by decoding the
// finalized file, that every cycle completed before the error is on disk
// while the failing cycle is not.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

namespace fs = std::filesystem;

bool contains(const char *haystack, const std::string &needle) {
  return haystack && std::strstr(haystack, needle.c_str()) != nullptr;
}

#define EXPECT_MSG(text, needle) \
  EXPECT_TRUE(contains((text), (needle))) << "message \"" << (text) << "\" lacks \"" << (needle) << "\""

// ── The schema every per-cycle test uses ──
constexpr uint16_t kEnt = 0;  // sparse, 4 slots
constexpr uint16_t kCnt = 1;  // dense, 1 slot, U64
constexpr uint16_t kEv = 0;   // event: U32 + ENUM (5 bytes)
enum : uint16_t { F_A = 0 /*U8*/, F_B /*I8*/, F_C /*BOOL*/, F_D /*ENUM*/, F_E /*U64*/, F_F /*U16*/, F_G /*I64*/ };
constexpr uint16_t P_P = 0;  // U8 property of kEnt

uscope_schema_t *make_schema() {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0xEE, en = 0xEE;
  uint16_t scope = 0xEEEE, sid = 0xEEEE, ev = 0xEEEE;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  const char *stages[] = {"F", "D", "X"};
  EXPECT_EQ(uscope_schema_add_enum(s, &en, "stage", stages, 3), USCOPE_OK);
  const uscope_field_t fields[] = {
      {"a", USCOPE_FT_U8, 0, 0, 0},   {"b", USCOPE_FT_I8, 0, 0, 0},
      {"c", USCOPE_FT_BOOL, 0, 0, 0}, {"d", USCOPE_FT_ENUM, en, 0, 0},
      {"e", USCOPE_FT_U64, 0, 0, 0},  {"f", USCOPE_FT_U16, 0, 0, 0},
      {"g", USCOPE_FT_I64, 0, 0, 0},
  };
  const uscope_field_t props[] = {{"p", USCOPE_FT_U8, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &sid, "ent", scope, 4, USCOPE_SF_SPARSE, fields, 7, props, 1),
            USCOPE_OK);
  EXPECT_EQ(sid, kEnt);
  const uscope_field_t cnt[] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &sid, "cnt", scope, 1, 0, cnt, 1, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(sid, kCnt);
  const uscope_field_t evf[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"st", USCOPE_FT_ENUM, en, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &ev, "ev", scope, evf, 2), USCOPE_OK);
  EXPECT_EQ(ev, kEv);
  return s;
}

struct Payload {
  uint8_t b[5];
};
Payload payload(uint32_t id, uint8_t st) {
  Payload p;
  std::memcpy(p.b, &id, 4);
  p.b[4] = st;
  return p;
}

uscope_writer_stats_t stats_of(const uscope_writer_t *w) {
  uscope_writer_stats_t st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  EXPECT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  return st;
}

// An open writer on a fresh file, which records good cycles at 1000 ps,
// 2000 ps, ... and checks the file after close.
class Session {
 public:
  explicit Session(const uscope_writer_options_t *opts = nullptr) : path_(dir_.file("t.usc")) {
    uscope_schema_t *s = make_schema();
    EXPECT_EQ(uscope_writer_open(&w_, path_.c_str(), s, nullptr, 0, opts), USCOPE_OK)
        << uscope_last_error();
    uscope_schema_free(s);
  }
  ~Session() {
    if (w_) (void)uscope_writer_close(w_);
  }
  uscope_writer_t *w() const { return w_; }
  const std::string &path() const { return path_; }
  uint64_t next_time() const { return (good_ + 1) * 1000; }
  int good() const { return good_; }

  // One complete cycle: SET ent[i%4].a, ADD cnt, one event.
  void good_cycle(bool check_end = true) {
    const uint64_t i = good_;
    ASSERT_EQ(uscope_begin_cycle(w_, next_time()), USCOPE_OK) << uscope_writer_error(w_);
    ASSERT_EQ(uscope_slot_set(w_, kEnt, i % 4, F_A, (i + 1) & 0xFF), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(w_, kCnt, 0, 0, 1), USCOPE_OK);
    const Payload p = payload(static_cast<uint32_t>(i), 1);
    ASSERT_EQ(uscope_event(w_, kEv, p.b, sizeof p.b), USCOPE_OK);
    const uscope_status_t end = uscope_end_cycle(w_);
    if (check_end) {
      ASSERT_EQ(end, USCOPE_OK);
    }
    ++good_;
  }
  void good_cycles(int n) {
    for (int k = 0; k < n; ++k) ASSERT_NO_FATAL_FAILURE(good_cycle());
  }
  // Starts a cycle and records one valid op that must never reach the file.
  void open_doomed_cycle() {
    ASSERT_EQ(uscope_begin_cycle(w_, next_time()), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w_, kEnt, 3, F_E, 0xDEADBEEF), USCOPE_OK);
  }

  // After the first error `code`: every per-cycle call is a counted no-op
  // returning it, and the messages stay.
  void expect_sticky(uscope_status_t code, const std::string &msg) {
    EXPECT_MSG(uscope_writer_error(w_), msg);
    const uscope_writer_stats_t before = stats_of(w_);
    EXPECT_EQ(before.sticky_status, code);
    EXPECT_EQ(before.errors, 1u);
    const Payload p = payload(7, 0);
    EXPECT_EQ(uscope_slot_set(w_, kEnt, 0, F_A, 1), code);
    EXPECT_EQ(uscope_slot_add(w_, kCnt, 0, 0, 1), code);
    EXPECT_EQ(uscope_slot_clear(w_, kEnt, 0), code);
    EXPECT_EQ(uscope_prop_set(w_, kEnt, P_P, 1), code);
    EXPECT_EQ(uscope_event(w_, kEv, p.b, sizeof p.b), code);
    EXPECT_EQ(uscope_end_cycle(w_), code);
    EXPECT_EQ(uscope_begin_cycle(w_, 1'000'000'000), code);
    EXPECT_EQ(uscope_slot_set(w_, kEnt, 1, F_A, 2), code);
    EXPECT_EQ(uscope_end_cycle(w_), code);
    const uscope_writer_stats_t after = stats_of(w_);
    EXPECT_EQ(after.sticky_status, code);
    EXPECT_EQ(after.errors, before.errors + 9);
    EXPECT_EQ(after.ops, before.ops);
    EXPECT_EQ(after.events, before.events);
    EXPECT_EQ(after.cycles, before.cycles);
    EXPECT_EQ(after.cycles, static_cast<uint64_t>(good_));
    EXPECT_MSG(uscope_writer_error(w_), msg);  // the first error's message is kept
  }

  // close() returns `code`, and the finalized file holds exactly the good
  // cycles, each complete.
  void close_and_verify(uscope_status_t code, const std::string &msg) {
    EXPECT_EQ(uscope_writer_close(w_), code);
    w_ = nullptr;
    if (code != USCOPE_OK) {
      EXPECT_MSG(uscope_last_error(), msg);
    }
    verify_file();
  }
  void verify_file() {
    const uscope::test::TraceFile t = uscope::test::read_trace_file(path_);
    EXPECT_TRUE(t.header.flags & 1) << "the file must be finalized (F_COMPLETE)";
    EXPECT_EQ(t.header.total_time_ps, static_cast<uint64_t>(good_) * 1000);
    std::vector<uint64_t> frames;
    std::vector<const uscope::test::Item *> items;
    for (const auto &seg : t.segments) {
      frames.insert(frames.end(), seg.frame_times.begin(), seg.frame_times.end());
      for (const auto &it : seg.items) items.push_back(&it);
    }
    std::vector<uint64_t> want_frames;
    for (int i = 0; i < good_; ++i) want_frames.push_back((i + 1) * 1000ull);
    EXPECT_EQ(frames, want_frames);
    ASSERT_EQ(items.size(), 3u * good_);
    for (int i = 0; i < good_; ++i) {
      const uint64_t t_ps = (i + 1) * 1000ull;
      const auto &set = *items[3 * i];
      const auto &add = *items[3 * i + 1];
      const auto &ev = *items[3 * i + 2];
      EXPECT_EQ(set.time_ps, t_ps);
      EXPECT_FALSE(set.is_event);
      EXPECT_EQ(set.op.action, 0x01);
      EXPECT_EQ(set.op.storage_id, kEnt);
      EXPECT_EQ(set.op.slot, i % 4);
      EXPECT_EQ(set.op.field, F_A);
      EXPECT_EQ(set.op.value, static_cast<uint64_t>((i + 1) & 0xFF));
      EXPECT_EQ(add.op.action, 0x03);
      EXPECT_EQ(add.op.storage_id, kCnt);
      EXPECT_TRUE(ev.is_event);
      EXPECT_EQ(ev.time_ps, t_ps);
      const Payload p = payload(static_cast<uint32_t>(i), 1);
      EXPECT_EQ(ev.payload, std::vector<uint8_t>(p.b, p.b + 5));
    }
  }

 private:
  TempDir dir_;
  std::string path_;
  uscope_writer_t *w_ = nullptr;
  int good_ = 0;
};

// The whole scenario: good cycles, optionally an open cycle with a valid op,
// then `bad` must fail with `code` and `msg`.
void run_misuse(bool in_cycle, const std::function<uscope_status_t(uscope_writer_t *)> &bad,
                uscope_status_t code, const std::string &msg,
                const uscope_writer_options_t *opts = nullptr) {
  Session s(opts);
  ASSERT_NE(s.w(), nullptr);
  ASSERT_NO_FATAL_FAILURE(s.good_cycles(3));
  if (in_cycle) {
    ASSERT_NO_FATAL_FAILURE(s.open_doomed_cycle());
  }
  EXPECT_EQ(bad(s.w()), code);
  EXPECT_MSG(uscope_last_error(), msg);
  s.expect_sticky(code, msg);
  s.close_and_verify(code, msg);
}

// ── INVALID_ARGUMENT ──

TEST(WriterMisuse, NullWriterHandleIsInvalidArgument) {
  const uint8_t pl[5] = {};
  uint32_t idx = 0xABCD;
  uscope_writer_stats_t st;
  st.struct_size = sizeof st;
  const uscope_status_t E = USCOPE_ERR_INVALID_ARGUMENT;
  EXPECT_EQ(uscope_begin_cycle(nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "writer handle is NULL");
  EXPECT_EQ(uscope_end_cycle(nullptr), E);
  EXPECT_EQ(uscope_slot_set(nullptr, 0, 0, 0, 0), E);
  EXPECT_EQ(uscope_slot_clear(nullptr, 0, 0), E);
  EXPECT_EQ(uscope_slot_add(nullptr, 0, 0, 0, 0), E);
  EXPECT_EQ(uscope_prop_set(nullptr, 0, 0, 0), E);
  EXPECT_EQ(uscope_event(nullptr, 0, pl, 5), E);
  EXPECT_MSG(uscope_last_error(), "writer handle is NULL");
  EXPECT_EQ(uscope_string_insert(nullptr, &idx, "x"), E);
  EXPECT_MSG(uscope_last_error(), "uscope_string_insert: writer is NULL");
  EXPECT_EQ(idx, 0xABCDu);  // out-parameters are written only on success
  EXPECT_EQ(uscope_set_checkpoint_callback(nullptr, nullptr, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "uscope_set_checkpoint_callback: writer is NULL");
  EXPECT_EQ(uscope_checkpoint_storage(nullptr, 0, nullptr, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "uscope_checkpoint_storage: writer is NULL");
  EXPECT_EQ(uscope_writer_stats(nullptr, &st), E);
  EXPECT_MSG(uscope_last_error(), "uscope_writer_stats: writer is NULL");
  // Releasing NULL is a no-op; the per-writer message of NULL is "".
  EXPECT_EQ(uscope_writer_close(nullptr), USCOPE_OK);
  EXPECT_STREQ(uscope_writer_error(nullptr), "");
}

TEST(WriterMisuse, NullSchemaArgumentsAreInvalidArgument) {
  const uscope_status_t E = USCOPE_ERR_INVALID_ARGUMENT;
  EXPECT_EQ(uscope_schema_new(nullptr), E);
  EXPECT_MSG(uscope_last_error(), "uscope_schema_new: out is NULL");
  uint8_t id8 = 0x77;
  uint16_t id16 = 0x7777;
  EXPECT_EQ(uscope_schema_add_clock(nullptr, &id8, "c", 1), E);
  EXPECT_MSG(uscope_last_error(), "uscope_schema_add_clock: schema is NULL");
  EXPECT_EQ(uscope_schema_add_scope(nullptr, &id16, "s", USCOPE_NO_PARENT, nullptr, 0), E);
  EXPECT_EQ(uscope_schema_add_enum(nullptr, &id8, "e", nullptr, 1), E);
  EXPECT_EQ(uscope_schema_add_storage(nullptr, &id16, "s", 0, 1, 0, nullptr, 0, nullptr, 0), E);
  EXPECT_EQ(uscope_schema_add_event(nullptr, &id16, "e", 0, nullptr, 0), E);
  EXPECT_EQ(uscope_schema_add_summary_field(nullptr, &id16, "f", USCOPE_FT_U8, 0), E);
  EXPECT_MSG(uscope_last_error(), "uscope_schema_add_summary_field: schema is NULL");
  EXPECT_EQ(id8, 0x77);
  EXPECT_EQ(id16, 0x7777);
  uscope_schema_free(nullptr);  // no-op

  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, &id8, nullptr, 1), E);
  EXPECT_MSG(uscope_last_error(), "add_clock: name is NULL");
  ASSERT_EQ(uscope_schema_add_clock(s, &id8, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(id8, 0);  // the failed call added nothing
  ASSERT_EQ(uscope_schema_add_scope(s, &id16, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_enum(s, &id8, "e", nullptr, 2), E);
  EXPECT_MSG(uscope_last_error(), "values is NULL");
  const char *vals[] = {"a", nullptr};
  EXPECT_EQ(uscope_schema_add_enum(s, &id8, "e", vals, 2), E);
  EXPECT_MSG(uscope_last_error(), "value 1 is NULL");
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "st", 0, 1, 0, nullptr, 2, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "field array is NULL");
  const uscope_field_t noname[] = {{nullptr, USCOPE_FT_U8, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &id16, "ev", 0, noname, 1), E);
  EXPECT_MSG(uscope_last_error(), "field 0 has no name");

  // writer_open's own NULL checks; *out stays untouched.
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_writer_t *w = reinterpret_cast<uscope_writer_t *>(0x1);
  EXPECT_EQ(uscope_writer_open(nullptr, path.c_str(), s, nullptr, 0, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "uscope_writer_open: out is NULL");
  EXPECT_EQ(uscope_writer_open(&w, nullptr, s, nullptr, 0, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "uscope_writer_open: path is NULL");
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), nullptr, nullptr, 0, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "uscope_writer_open: schema is NULL");
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 2, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "props is NULL but num_props is 2");
  const uscope_dut_property_t bad_prop[] = {{"key", nullptr}};
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, bad_prop, 1, nullptr), E);
  EXPECT_MSG(uscope_last_error(), "DUT property 0 has a NULL key or value");
  EXPECT_EQ(w, reinterpret_cast<uscope_writer_t *>(0x1));
  EXPECT_FALSE(fs::exists(path)) << "a rejected open must not create the file";
  uscope_schema_free(s);
}

TEST(WriterMisuse, NullEventPayloadIsInvalidArgumentAndSticky) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_event(w, kEv, nullptr, 5); },
             USCOPE_ERR_INVALID_ARGUMENT, "event 0: payload is NULL");
}

TEST(WriterMisuse, BadArgumentsOfNonCycleCallsAreNotSticky) {
  Session s;
  ASSERT_NE(s.w(), nullptr);
  ASSERT_NO_FATAL_FAILURE(s.good_cycles(2));
  uint32_t idx = 99;
  EXPECT_EQ(uscope_string_insert(s.w(), &idx, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_MSG(uscope_last_error(), "uscope_string_insert: str is NULL");
  EXPECT_EQ(uscope_string_insert(s.w(), nullptr, "x"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_MSG(uscope_last_error(), "uscope_string_insert: out_index is NULL");
  EXPECT_EQ(idx, 99u);
  EXPECT_EQ(uscope_writer_stats(s.w(), nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  uscope_writer_stats_t st;
  st.struct_size = 0;
  EXPECT_EQ(uscope_writer_stats(s.w(), &st), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_MSG(uscope_last_error(), "set out->struct_size first");
  // These do not poison the writer: recording goes on and close succeeds.
  EXPECT_STREQ(uscope_writer_error(s.w()), "");
  EXPECT_EQ(stats_of(s.w()).sticky_status, USCOPE_OK);
  ASSERT_NO_FATAL_FAILURE(s.good_cycles(2));
  s.close_and_verify(USCOPE_OK, "");
}

// ── UNKNOWN_* and PAYLOAD_SIZE ──

TEST(WriterMisuse, UnknownStorage) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_set(w, 2, 0, 0, 1); },
             USCOPE_ERR_UNKNOWN_STORAGE, "storage id 2 is not in the schema (2 storages)");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_clear(w, 300, 0); },
             USCOPE_ERR_UNKNOWN_STORAGE, "storage id 300 is not in the schema");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_add(w, 0xFFFF, 0, 0, 1); },
             USCOPE_ERR_UNKNOWN_STORAGE, "storage id 65535 is not in the schema");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_prop_set(w, 2, 0, 1); },
             USCOPE_ERR_UNKNOWN_STORAGE, "storage id 2 is not in the schema");
}

TEST(WriterMisuse, UnknownSlot) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_set(w, kEnt, 4, F_A, 1); },
             USCOPE_ERR_UNKNOWN_SLOT, "slot 4 of storage 0 (\"ent\"), which has 4 slots");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_clear(w, kCnt, 1); },
             USCOPE_ERR_UNKNOWN_SLOT, "slot 1 of storage 1 (\"cnt\"), which has 1 slots");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_add(w, kCnt, 0xFFFF, 0, 1); },
             USCOPE_ERR_UNKNOWN_SLOT, "slot 65535 of storage 1");
}

TEST(WriterMisuse, UnknownField) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_set(w, kEnt, 0, 7, 1); },
             USCOPE_ERR_UNKNOWN_FIELD, "field 7 of storage 0 (\"ent\"), which has 7 fields");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_slot_add(w, kCnt, 0, 1, 1); },
             USCOPE_ERR_UNKNOWN_FIELD, "field 1 of storage 1 (\"cnt\"), which has 1 fields");
}

TEST(WriterMisuse, UnknownProperty) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_prop_set(w, kEnt, 1, 1); },
             USCOPE_ERR_UNKNOWN_PROPERTY, "property 1 of storage 0 (\"ent\"), which has 1 properties");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_prop_set(w, kCnt, 0, 1); },
             USCOPE_ERR_UNKNOWN_PROPERTY, "property 0 of storage 1 (\"cnt\"), which has 0 properties");
}

TEST(WriterMisuse, UnknownEvent) {
  run_misuse(true,
             [](uscope_writer_t *w) {
               const Payload p = payload(1, 1);
               return uscope_event(w, 1, p.b, 5);
             },
             USCOPE_ERR_UNKNOWN_EVENT, "event type 1 is not in the schema (1 event types)");
}

TEST(WriterMisuse, PayloadSize) {
  run_misuse(true,
             [](uscope_writer_t *w) {
               const uint8_t p[8] = {};
               return uscope_event(w, kEv, p, 8);
             },
             USCOPE_ERR_PAYLOAD_SIZE, "event 0 (\"ev\"): payload of 8 bytes, the schema says 5");
  run_misuse(true, [](uscope_writer_t *w) { return uscope_event(w, kEv, nullptr, 0); },
             USCOPE_ERR_PAYLOAD_SIZE, "payload of 0 bytes, the schema says 5");
}

// ── VALUE_RANGE ──

TEST(WriterMisuse, ValueRange) {
  struct Case {
    uint16_t field;
    uint64_t value;
    bool prop;
    const char *msg;
  };
  const Case cases[] = {
      {F_A, 300, false, "value 0x12c does not fit field 0 (\"a\", type 0x01) of storage 0 (\"ent\")"},
      {F_A, 256, false, "value 0x100 does not fit field 0"},
      {F_B, static_cast<uint64_t>(int64_t{-129}), false,
       "value 0xffffffffffffff7f does not fit field 1 (\"b\", type 0x05)"},
      {F_B, 128, false, "value 0x80 does not fit field 1"},  // +128 is not an I8
      {F_B, 0xFF, false, "value 0xff does not fit field 1"},  // -1 must be sign-extended
      {F_C, 2, false, "value 0x2 does not fit field 2 (\"c\", type 0x09)"},
      {F_D, 3, false, "value 0x3 does not fit field 3 (\"d\", type 0x0b)"},  // 3 enum values
      {F_F, 65536, false, "value 0x10000 does not fit field 5 (\"f\", type 0x02)"},
      {P_P, 256, true, "value 0x100 does not fit property 0 (\"p\", type 0x01) of storage 0 (\"ent\")"},
  };
  uscope_writer_options_t strict = USCOPE_WRITER_OPTIONS_INIT;
  strict.value_check = USCOPE_VALUE_CHECK_STRICT;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.msg);
    run_misuse(true,
               [&](uscope_writer_t *w) {
                 return c.prop ? uscope_prop_set(w, kEnt, c.field, c.value)
                               : uscope_slot_set(w, kEnt, 1, c.field, c.value);
               },
               USCOPE_ERR_VALUE_RANGE, c.msg, &strict);
  }
}

// Without USCOPE_VALUE_CHECK_STRICT (the default, as the reference writer)
// any 64-bit value is recorded as given.
TEST(WriterMisuse, ValueRangeIsNotCheckedByDefault) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  ASSERT_EQ(uscope_begin_cycle(w, 1), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, kEnt, 0, F_A, 300), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, kEnt, 0, F_C, 2), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, kEnt, 0, F_D, 200), USCOPE_OK);
  EXPECT_EQ(uscope_prop_set(w, kEnt, P_P, 0x1234), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto t = uscope::test::read_trace_file(path);
  ASSERT_EQ(t.segments.size(), 1u);
  const auto &items = t.segments[0].items;
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].op.value, 300u);
  EXPECT_EQ(items[1].op.value, 2u);
  EXPECT_EQ(items[2].op.value, 200u);
  EXPECT_EQ(items[3].op.value, 0x1234u);
}

TEST(WriterMisuse, ValueRangeBoundariesAreAccepted) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  uscope_writer_options_t strict = USCOPE_WRITER_OPTIONS_INIT;
  strict.value_check = USCOPE_VALUE_CHECK_STRICT;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &strict), USCOPE_OK);
  uscope_schema_free(s);
  struct Set {
    uint16_t field;
    uint64_t value;
  };
  const Set sets[] = {
      {F_A, 255},
      {F_A, 0},
      {F_B, static_cast<uint64_t>(int64_t{-128})},  // sign-extended: fits
      {F_B, 127},
      {F_B, static_cast<uint64_t>(int64_t{-1})},
      {F_C, 1},
      {F_C, 0},
      {F_D, 2},
      {F_E, UINT64_MAX},
      {F_F, 65535},
      {F_G, static_cast<uint64_t>(INT64_MIN)},
      {F_G, static_cast<uint64_t>(INT64_MAX)},
  };
  ASSERT_EQ(uscope_begin_cycle(w, 5), USCOPE_OK);
  for (const Set &x : sets) EXPECT_EQ(uscope_slot_set(w, kEnt, 2, x.field, x.value), USCOPE_OK) << x.field;
  EXPECT_EQ(uscope_prop_set(w, kEnt, P_P, 255), USCOPE_OK);
  // ADD wraps at the field width, so any addend is valid (COMPAT 13).
  EXPECT_EQ(uscope_slot_add(w, kEnt, 2, F_A, UINT64_MAX), USCOPE_OK);
  EXPECT_EQ(uscope_slot_add(w, kCnt, 0, 0, UINT64_MAX), USCOPE_OK);
  ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  EXPECT_EQ(stats_of(w).errors, 0u);
  EXPECT_STREQ(uscope_writer_error(w), "");
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);

  const auto t = uscope::test::read_trace_file(path);
  ASSERT_EQ(t.segments.size(), 1u);
  const auto &items = t.segments[0].items;
  ASSERT_EQ(items.size(), std::size(sets) + 3);
  for (size_t i = 0; i < std::size(sets); ++i) {
    EXPECT_EQ(items[i].op.action, 0x01);
    EXPECT_EQ(items[i].op.field, sets[i].field);
    EXPECT_EQ(items[i].op.value, sets[i].value) << i;  // negative values travel sign-extended
  }
  EXPECT_EQ(items[std::size(sets)].op.action, 0x04);
  EXPECT_EQ(items[std::size(sets)].op.value, 255u);
  EXPECT_EQ(items[std::size(sets) + 1].op.value, UINT64_MAX);
}

// ── TIME_BACKWARDS ──

TEST(WriterMisuse, TimeBackwards) {
  Session s;
  ASSERT_NE(s.w(), nullptr);
  ASSERT_NO_FATAL_FAILURE(s.good_cycles(3));  // last cycle at 3000 ps
  // An equal time is allowed: it makes a second frame at the same time.
  // (Checked on a separate writer below so that this file stays simple.)
  EXPECT_EQ(uscope_begin_cycle(s.w(), 2999), USCOPE_ERR_TIME_BACKWARDS);
  const std::string msg = "begin_cycle(2999) is before the previous cycle at 3000 ps";
  EXPECT_MSG(uscope_last_error(), msg);
  s.expect_sticky(USCOPE_ERR_TIME_BACKWARDS, msg);
  s.close_and_verify(USCOPE_ERR_TIME_BACKWARDS, msg);
}

TEST(WriterMisuse, EqualTimeIsNotBackwards) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(uscope_begin_cycle(w, 700), USCOPE_OK);
    ASSERT_EQ(uscope_slot_add(w, kCnt, 0, 0, 1), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto t = uscope::test::read_trace_file(path);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].frame_times, (std::vector<uint64_t>{700, 700, 700}));
  EXPECT_EQ(t.segments[0].items.size(), 3u);
}

// ── BAD_STATE ──

TEST(WriterMisuse, SlotCallsOutsideACycle) {
  run_misuse(false, [](uscope_writer_t *w) { return uscope_slot_set(w, kEnt, 0, F_A, 1); },
             USCOPE_ERR_BAD_STATE, "a slot or property call outside a begin_cycle/end_cycle pair");
  run_misuse(false, [](uscope_writer_t *w) { return uscope_prop_set(w, kEnt, P_P, 1); },
             USCOPE_ERR_BAD_STATE, "a slot or property call outside a begin_cycle/end_cycle pair");
  run_misuse(false,
             [](uscope_writer_t *w) {
               const Payload p = payload(1, 1);
               return uscope_event(w, kEv, p.b, 5);
             },
             USCOPE_ERR_BAD_STATE, "event outside a begin_cycle/end_cycle pair");
}

TEST(WriterMisuse, NestedBeginCycle) {
  run_misuse(true, [](uscope_writer_t *w) { return uscope_begin_cycle(w, 4000); },
             USCOPE_ERR_BAD_STATE, "begin_cycle(4000) inside a cycle: end_cycle was not called");
}

TEST(WriterMisuse, EndCycleWithoutBegin) {
  run_misuse(false, [](uscope_writer_t *w) { return uscope_end_cycle(w); }, USCOPE_ERR_BAD_STATE,
             "end_cycle without begin_cycle");
}

TEST(WriterMisuse, SetCheckpointCallbackInsideACycle) {
  run_misuse(true,
             [](uscope_writer_t *w) {
               return uscope_set_checkpoint_callback(
                   w, [](uscope_writer_t *, uint64_t, void *) {}, nullptr);
             },
             USCOPE_ERR_BAD_STATE, "set_checkpoint_callback inside a cycle or callback");
}

TEST(WriterMisuse, CheckpointStorageOutsideTheCallback) {
  const uint64_t zero = 0;
  const std::string msg = "uscope_checkpoint_storage is only valid inside the checkpoint callback";
  run_misuse(false,
             [&](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kCnt, nullptr, &zero, 1); },
             USCOPE_ERR_BAD_STATE, msg);
  run_misuse(true,
             [&](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kCnt, nullptr, &zero, 1); },
             USCOPE_ERR_BAD_STATE, msg);
}

// Inside the checkpoint callback only uscope_checkpoint_storage is allowed.
// The cycle that reached the boundary is complete (the callback runs after
// it), so it stays in the file; the first wrong call inside fails sticky.
struct CallbackProbe {
  std::function<uscope_status_t(uscope_writer_t *)> call;
  uscope_status_t status = USCOPE_OK;
  std::string writer_msg, thread_msg;
  int calls = 0;
};

void probe_callback(uscope_writer_t *w, uint64_t, void *ud) {
  auto *p = static_cast<CallbackProbe *>(ud);
  if (p->calls++) return;
  p->status = p->call(w);
  p->writer_msg = uscope_writer_error(w);
  p->thread_msg = uscope_last_error();
}

void run_callback_misuse(const std::function<uscope_status_t(uscope_writer_t *)> &call,
                         uscope_status_t code, const std::string &msg) {
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 10'000;
  Session s(&o);
  ASSERT_NE(s.w(), nullptr);
  CallbackProbe probe;
  probe.call = call;
  ASSERT_EQ(uscope_set_checkpoint_callback(s.w(), probe_callback, &probe), USCOPE_OK);
  ASSERT_NO_FATAL_FAILURE(s.good_cycles(9));  // 1000 .. 9000 ps: before the boundary
  EXPECT_EQ(probe.calls, 0);
  // The 10th cycle reaches 10,000 ps: its end_cycle runs the callback. The
  // cycle itself is complete by then; the error belongs to the call inside.
  ASSERT_NO_FATAL_FAILURE(s.good_cycle(/*check_end=*/false));
  EXPECT_EQ(probe.calls, 1);
  EXPECT_EQ(probe.status, code);
  EXPECT_MSG(probe.writer_msg.c_str(), msg);
  EXPECT_MSG(probe.thread_msg.c_str(), msg);
  EXPECT_EQ(stats_of(s.w()).cycles, 10u);
  s.expect_sticky(code, msg);
  s.close_and_verify(code, msg);
}

TEST(WriterMisuse, NonCheckpointCallsInsideTheCallback) {
  const std::string msg = "only uscope_checkpoint_storage may be called inside the checkpoint callback";
  run_callback_misuse([](uscope_writer_t *w) { return uscope_slot_set(w, kEnt, 0, F_A, 1); },
                      USCOPE_ERR_BAD_STATE, msg);
  run_callback_misuse([](uscope_writer_t *w) { return uscope_begin_cycle(w, 20'000); },
                      USCOPE_ERR_BAD_STATE, msg);
  run_callback_misuse([](uscope_writer_t *w) { return uscope_end_cycle(w); }, USCOPE_ERR_BAD_STATE,
                      msg);
  run_callback_misuse(
      [](uscope_writer_t *w) {
        const Payload p = payload(1, 1);
        return uscope_event(w, kEv, p.b, 5);
      },
      USCOPE_ERR_BAD_STATE, msg);
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_set_checkpoint_callback(w, nullptr, nullptr); },
      USCOPE_ERR_BAD_STATE, "set_checkpoint_callback inside a cycle or callback");
}

TEST(WriterMisuse, CheckpointStorageWithBadArgumentsInsideTheCallback) {
  static const uint64_t kZero[4] = {};
  static const uint8_t kMask = 0x03;  // two valid slots
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, 2, nullptr, kZero, 1); },
      USCOPE_ERR_UNKNOWN_STORAGE, "checkpoint_storage: storage id 2 is not in the schema");
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kEnt, nullptr, kZero, 0); },
      USCOPE_ERR_INVALID_ARGUMENT, "checkpoint_storage: storage 0 is sparse; valid_mask is NULL");
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kEnt, &kMask, kZero, 1); },
      USCOPE_ERR_INVALID_ARGUMENT, "valid_mask has 2 bits set, num_valid_slots is 1");
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kCnt, &kMask, kZero, 1); },
      USCOPE_ERR_INVALID_ARGUMENT, "checkpoint_storage: storage 1 is dense; valid_mask must be NULL");
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kCnt, nullptr, kZero, 2); },
      USCOPE_ERR_INVALID_ARGUMENT, "dense storage 1 has 1 slots, num_valid_slots is 2");
  run_callback_misuse(
      [](uscope_writer_t *w) { return uscope_checkpoint_storage(w, kCnt, nullptr, nullptr, 1); },
      USCOPE_ERR_INVALID_ARGUMENT, "checkpoint_storage: slot_data is NULL");
}

// ── Schema builder: SCHEMA and LIMIT ──

// Opens a writer on schema s, closes it, and returns the schema as decoded
// from the file: what the builder really holds.
uscope::Schema schema_on_disk(const uscope_schema_t *s) {
  TempDir dir;
  const std::string path = dir.file("s.usc");
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK)
      << uscope_last_error();
  if (!w) return {};
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  return uscope::test::read_trace_file(path).schema;
}

bool pool_has(const uscope::Schema &s, const std::string &str) {
  return s.pool.bytes().find(str) != std::string::npos;
}

TEST(WriterMisuse, SchemaErrors) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t id8 = 0x77;
  uint16_t id16 = 0x7777;
  const uscope_status_t E = USCOPE_ERR_SCHEMA;

  // Scopes: the root must have no parent, later scopes an existing parent,
  // and the clock must exist.
  ASSERT_EQ(uscope_schema_add_clock(s, &id8, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &id16, "bad_root", 0, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "the first scope is the root; its parent must be 0xFFFF");
  ASSERT_EQ(uscope_schema_add_scope(s, &id16, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  EXPECT_EQ(id16, 0);
  id16 = 0x7777;
  EXPECT_EQ(uscope_schema_add_scope(s, &id16, "bad_parent", 5, nullptr, USCOPE_CLOCK_INHERIT), E);
  EXPECT_MSG(uscope_last_error(), "add_scope \"bad_parent\": parent scope 5 does not exist");
  EXPECT_EQ(uscope_schema_add_scope(s, &id16, "bad_clock", 0, "proto_x", 1), E);
  EXPECT_MSG(uscope_last_error(), "add_scope \"bad_clock\": clock 1 does not exist");
  EXPECT_EQ(id16, 0x7777);
  ASSERT_EQ(uscope_schema_add_scope(s, &id16, "core", 0, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  EXPECT_EQ(id16, 1);  // the rejected scopes took no id

  const char *vals[] = {"x", "y"};
  ASSERT_EQ(uscope_schema_add_enum(s, &id8, "e", vals, 2), USCOPE_OK);
  EXPECT_EQ(id8, 0);

  id16 = 0x7777;
  // Fields: enum_id only on ENUM fields and naming an existing enum; known types only.
  const uscope_field_t enum_on_u8[] = {{"bad_enum_field", USCOPE_FT_U8, 0, 0, 0},
                                       {"x", USCOPE_FT_U8, 1, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st1", 0, 4, 0, enum_on_u8 + 1, 1, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "field \"x\": enum_id 1 is not a defined enum of an ENUM field");
  const uscope_field_t undefined_enum[] = {{"x", USCOPE_FT_ENUM, 1, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &id16, "bad_ev1", 0, undefined_enum, 1), E);
  EXPECT_MSG(uscope_last_error(), "enum_id 1 is not a defined enum");
  const uscope_field_t bad_type[] = {{"ok", USCOPE_FT_U8, 0, 0, 0}, {"t", 0x0C, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st2", 0, 4, 0, bad_type, 2, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "field \"t\" has unknown type 0x0c");
  const uscope_field_t zero_type[] = {{"z", 0, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, &id16, "bad_ev2", 0, zero_type, 1), E);
  EXPECT_MSG(uscope_last_error(), "has unknown type 0x00");
  EXPECT_EQ(uscope_schema_add_summary_field(s, &id16, "bad_sf", 0x0C, 0), E);
  EXPECT_MSG(uscope_last_error(), "add_summary_field \"bad_sf\": unknown type 0x0c");
  // Storages: existing scope, at least one slot, known flags; role on properties only.
  const uscope_field_t f1[] = {{"v", USCOPE_FT_U16, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st3", 9, 4, 0, f1, 1, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "add_storage: scope 9 does not exist");
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st4", 0, 0, 0, f1, 1, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "num_slots must be >= 1");
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st5", 0, 4, 0x4, f1, 1, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "unknown flag bits 0x0004");
  const uscope_field_t role_on_field[] = {{"r", USCOPE_FT_U16, 0, USCOPE_ROLE_HEAD_PTR, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st6", 0, 4, 0, role_on_field, 1, nullptr, 0), E);
  EXPECT_MSG(uscope_last_error(), "role/pair_id are for storage properties only");
  const uscope_field_t bad_role[] = {{"r", USCOPE_FT_U16, 0, 3, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, &id16, "bad_st7", 0, 4, 0, f1, 1, bad_role, 1), E);
  EXPECT_EQ(uscope_schema_add_event(s, &id16, "bad_ev3", 7, f1, 1), E);
  EXPECT_MSG(uscope_last_error(), "add_event: scope 7 does not exist");
  EXPECT_EQ(id16, 0x7777);

  // Good definitions still get the next ids.
  const uscope_field_t ok_props[] = {{"head", USCOPE_FT_U16, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                     {"tail", USCOPE_FT_U16, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  const uscope_field_t ok_fields[] = {{"st", USCOPE_FT_ENUM, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, &id16, "rob", USCOPE_ROOT_SCOPE, 4, USCOPE_SF_SPARSE,
                                      ok_fields, 1, ok_props, 2),
            USCOPE_OK);
  EXPECT_EQ(id16, 0);
  ASSERT_EQ(uscope_schema_add_event(s, &id16, "retire", 1, ok_fields, 1), USCOPE_OK);
  EXPECT_EQ(id16, 0);

  // On disk: only the good definitions, and no string of a rejected call.
  const uscope::Schema d = schema_on_disk(s);
  EXPECT_EQ(d.clocks.size(), 1u);
  EXPECT_EQ(d.scopes.size(), 2u);
  EXPECT_EQ(d.enums.size(), 1u);
  ASSERT_EQ(d.storages.size(), 1u);
  EXPECT_EQ(d.storages[0].props.size(), 2u);
  EXPECT_EQ(d.events.size(), 1u);
  EXPECT_TRUE(d.summary_fields.empty());
  for (const char *gone : {"bad_root", "bad_parent", "bad_clock", "proto_x", "bad_st", "bad_ev",
                           "bad_sf", "bad_enum_field"})
    EXPECT_FALSE(pool_has(d, gone)) << gone;
  EXPECT_TRUE(pool_has(d, "rob"));
  EXPECT_TRUE(pool_has(d, "retire"));
  uscope_schema_free(s);
}

TEST(WriterMisuse, LimitStringPool) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  // Clock names of 300 bytes + NUL until the 65,535-byte pool is full.
  size_t pool = 0;
  int added = 0;
  for (int i = 0;; ++i) {
    std::string name(300, 'a' + i % 26);
    name.replace(0, 4, std::to_string(1000 + i));
    uint8_t id = 0xEE;
    const bool fits = pool + name.size() + 1 <= 65535;
    const uscope_status_t st = uscope_schema_add_clock(s, &id, name.c_str(), 1000);
    if (fits) {
      ASSERT_EQ(st, USCOPE_OK) << i;
      EXPECT_EQ(id, i);
      pool += name.size() + 1;
      ++added;
      continue;
    }
    EXPECT_EQ(st, USCOPE_ERR_LIMIT);
    EXPECT_MSG(uscope_last_error(), "string pool would grow to " + std::to_string(pool + 301) +
                                        " bytes; the format allows 65535");
    EXPECT_EQ(id, 0xEE);
    break;
  }
  EXPECT_EQ(added, 217);
  // A string that is already in the pool costs nothing; a short new one still fits.
  uint16_t scope = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  // writer_open adds the DUT strings to the same pool: too long -> LIMIT.
  TempDir dir;
  const std::string path = dir.file("t.usc");
  const std::string big(300, 'k');  // 65,321 + 301 > 65,535
  const uscope_dut_property_t too_big[] = {{big.c_str(), "v"}};
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, too_big, 1, nullptr), USCOPE_ERR_LIMIT);
  EXPECT_MSG(uscope_last_error(), "string pool would grow to");
  EXPECT_EQ(w, nullptr);
  EXPECT_FALSE(fs::exists(path));
  // Short DUT strings fit: the schema was left intact by every failure.
  const uscope_dut_property_t small[] = {{"k", "v"}};
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, small, 1, nullptr), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto t = uscope::test::read_trace_file(path);
  EXPECT_EQ(t.schema.clocks.size(), 217u);
  EXPECT_EQ(t.schema.pool.bytes().size(), pool + 4 + 4);  // + "top\0" + "k\0" "v\0"
  uscope_schema_free(s);
}

TEST(WriterMisuse, LimitEnumValues) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  std::vector<std::string> names;
  for (int i = 0; i < 256; ++i) names.push_back("v" + std::to_string(i));
  std::vector<const char *> vals;
  for (const auto &n : names) vals.push_back(n.c_str());
  uint8_t id = 0xEE;
  EXPECT_EQ(uscope_schema_add_enum(s, &id, "big", vals.data(), 256), USCOPE_ERR_LIMIT);
  EXPECT_MSG(uscope_last_error(), "add_enum \"big\": 256 values; an enum has 1 to 255");
  EXPECT_EQ(uscope_schema_add_enum(s, &id, "empty", vals.data(), 0), USCOPE_ERR_LIMIT);
  EXPECT_MSG(uscope_last_error(), "add_enum \"empty\": 0 values");
  EXPECT_EQ(id, 0xEE);
  ASSERT_EQ(uscope_schema_add_enum(s, &id, "max", vals.data(), 255), USCOPE_OK);
  EXPECT_EQ(id, 0);
  uint8_t clk = 0;
  uint16_t scope = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  const uscope::Schema d = schema_on_disk(s);
  ASSERT_EQ(d.enums.size(), 1u);
  EXPECT_EQ(d.enums[0].values.size(), 255u);
  EXPECT_FALSE(pool_has(d, "big"));
  EXPECT_FALSE(pool_has(d, "v255"));
  uscope_schema_free(s);
}

TEST(WriterMisuse, LimitClocks) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  for (int i = 0; i < 255; ++i) {
    uint8_t id = 0;
    ASSERT_EQ(uscope_schema_add_clock(s, &id, ("c" + std::to_string(i)).c_str(), 1000 + i), USCOPE_OK);
    ASSERT_EQ(id, i);
  }
  uint8_t id = 0xEE;
  EXPECT_EQ(uscope_schema_add_clock(s, &id, "c255", 1), USCOPE_ERR_LIMIT);
  EXPECT_MSG(uscope_last_error(), "add_clock: at most 255 clock domains");
  EXPECT_EQ(id, 0xEE);
  uint16_t scope = 0;
  // Clock 254 exists; 255 (0xFF) means "inherit".
  ASSERT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, 254), USCOPE_OK);
  const uscope::Schema d = schema_on_disk(s);
  EXPECT_EQ(d.clocks.size(), 255u);
  EXPECT_FALSE(pool_has(d, "c255"));
  uscope_schema_free(s);
}

// ── writer_open ──

TEST(WriterMisuse, OpenWithoutClockOrScopeIsSchema) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_ERR_SCHEMA);
  EXPECT_MSG(uscope_last_error(), "the schema has no clock domain");
  uint8_t clk = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_ERR_SCHEMA);
  EXPECT_MSG(uscope_last_error(), "the schema has no scope");
  EXPECT_EQ(w, nullptr);
  EXPECT_FALSE(fs::exists(path));
  uint16_t scope = 0;
  ASSERT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_schema_free(s);
}

TEST(WriterMisuse, OpenWithBadOptionsIsInvalidArgument) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = make_schema();
  struct Case {
    std::function<void(uscope_writer_options_t &)> edit;
    const char *msg;
  };
  const Case cases[] = {
      {[](auto &o) { o.struct_size = 0; }, "options.struct_size is 0"},
      {[](auto &o) { o.struct_size = 3; }, "options.struct_size is 3"},
      {[](auto &o) { o.struct_size = sizeof(o) + 8; }, "this library knows"},
      {[](auto &o) { o.compression = 3; }, "options.compression 3 is unknown"},
      {[](auto &o) { o.compression_level = 13; }, "options.compression_level 13: LZ4 takes 0 (fast) or 1..12"},
      {[](auto &o) { o.compression_level = -1; }, "options.compression_level -1"},
      {[](auto &o) { o.compression = USCOPE_COMPRESSION_ZSTD, o.compression_level = 23; },
       "options.compression_level 23: zstd takes 0..22"},
      {[](auto &o) { o.durability = 3; }, "options.durability 3 is unknown"},
      {[](auto &o) { o.frame_format = 2; }, "options.frame_format 2 is unknown"},
      {[](auto &o) { o.backpressure = 2; }, "options.backpressure 2 is unknown"},
      {[](auto &o) { o.value_check = 2; }, "options.value_check 2 is unknown"},
      {[](auto &o) { o.reserved = 1; }, "options.reserved must be 0"},
      {[](auto &o) { o.queue_bytes = (1ull << 40) + 1; }, "options.queue_bytes 1099511627777 is above 1 TiB"},
  };
  for (const Case &c : cases) {
    uscope_writer_options_t o;
    uscope_writer_options_init(&o);
    c.edit(o);
    uscope_writer_t *w = nullptr;
    EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_ERR_INVALID_ARGUMENT)
        << c.msg;
    EXPECT_MSG(uscope_last_error(), c.msg);
    EXPECT_EQ(w, nullptr);
    EXPECT_FALSE(fs::exists(path)) << c.msg;
  }
  uscope_schema_free(s);
}

TEST(WriterMisuse, OpenOnUnwritablePathIsIo) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/t.usc");
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_ERR_IO);
  EXPECT_MSG(uscope_last_error(), "cannot create " + path + ": No such file or directory");
  EXPECT_EQ(w, nullptr);
  // A directory is not a file either.
  EXPECT_EQ(uscope_writer_open(&w, dir.path().c_str(), s, nullptr, 0, nullptr), USCOPE_ERR_IO);
  EXPECT_MSG(uscope_last_error(), "cannot create " + dir.path());
  EXPECT_EQ(w, nullptr);
  uscope_schema_free(s);
}

TEST(WriterMisuse, OpenWithCheckpointOver4GiBIsLimit) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0;
  uint16_t scope = 0, sid = 0;
  ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, &scope, "top", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
  // 65,535 slots of 8,193 U64 fields: 4,295,426,040 bytes of slot data.
  // Distinct field names (the builder refuses a repeat: USCOPE_ERR_DUPLICATE); 45 KB of the pool.
  std::vector<std::string> names(8193);
  std::vector<uscope_field_t> f(8193, uscope_field_t{"", USCOPE_FT_U64, 0, 0, 0});
  for (size_t i = 0; i < f.size(); ++i) f[i].name = (names[i] = "f" + std::to_string(i)).c_str();
  ASSERT_EQ(uscope_schema_add_storage(s, &sid, "huge", scope, 65535, 0, f.data(), 8193, nullptr, 0),
            USCOPE_OK);
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_ERR_LIMIT);
  EXPECT_MSG(uscope_last_error(), "a full checkpoint of this schema takes");
  EXPECT_MSG(uscope_last_error(), "checkpoint_size is a u32");
  EXPECT_EQ(w, nullptr);
  EXPECT_FALSE(fs::exists(path));
  uscope_schema_free(s);
}

TEST(WriterMisuse, OlderShorterOptionsStructIsAccepted) {
  // A caller built against a header whose options ended before frame_format:
  // the library must read only struct_size bytes and default the rest.
  struct {
    uscope_writer_options_t o;
    uint8_t guard[16];
  } buf;
  std::memset(&buf, 0xFF, sizeof buf);  // garbage beyond struct_size must be ignored
  buf.o.struct_size = offsetof(uscope_writer_options_t, frame_format);
  buf.o.compression = USCOPE_COMPRESSION_ZSTD;
  buf.o.compression_level = 3;
  buf.o.durability = USCOPE_DURABILITY_NONE;
  buf.o.checkpoint_interval_ps = 2000;
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &buf.o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uscope_writer_stats_t st;
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  EXPECT_EQ(st.queue_bytes, 8ull << 20);  // queue_bytes defaulted
  for (uint64_t t = 1000; t <= 5000; t += 1000) {
    ASSERT_EQ(uscope_begin_cycle(w, t), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, kEnt, 0, F_E, t << 20), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const auto t = uscope::test::read_trace_file(path);
  EXPECT_EQ(t.header.flags, 0x8Bu);  // complete, compressed, ZSTD, v0.2 frames (default)
  EXPECT_EQ(t.checkpoint_interval_ps, 2000u);
  EXPECT_EQ(t.segments.size(), 3u);  // boundaries at 2000 and 4000 ps; the last holds 5000
}

// ── IO from the encoder thread ──

// A file-size limit makes the encoder's write fail with EFBIG: the error
// reaches the simulation thread as a sticky IO status, close() returns it,
// and the file keeps every segment committed before the failure.
// With compress_threads: the failing write is the encoder thread's
// (INLINE) or a compression worker's.
void expect_write_error_is_sticky_io(uint32_t compress_threads) {
  TempDir dir;
  const std::string path = dir.file("t.usc");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 10'000;
  o.compression = USCOPE_COMPRESSION_NONE;  // predictable sizes
  o.compress_threads = compress_threads;
  uscope_schema_t *s = make_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  uscope_schema_free(s);

  uscope::test::FileSizeLimit limit(64 * 1024);
  ASSERT_TRUE(limit.ok());

  // Cycles of 40 wide ops (~650 bytes): segments of 10 cycles are ~6.5 KiB,
  // so the 64 KiB limit is hit after about ten segments.
  uscope_status_t st = USCOPE_OK;
  uint64_t t = 0;
  uint64_t completed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (st == USCOPE_OK && std::chrono::steady_clock::now() < deadline) {
    t += 1000;
    st = uscope_begin_cycle(w, t);
    if (st != USCOPE_OK) break;
    for (uint16_t k = 0; k < 40 && st == USCOPE_OK; ++k)
      st = uscope_slot_set(w, kEnt, k % 4, F_E, (t << 16) | k);
    if (st == USCOPE_OK) st = uscope_end_cycle(w);
    if (st == USCOPE_OK) ++completed;
    if (t > 400'000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  limit.release();

  ASSERT_EQ(st, USCOPE_ERR_IO) << "the encoder's write error never reached the simulation thread";
  const std::string msg = "writing " + path;
  EXPECT_MSG(uscope_writer_error(w), msg);
  EXPECT_MSG(uscope_writer_error(w), "File too large");
  EXPECT_MSG(uscope_last_error(), msg);
  uscope_writer_stats_t before;
  before.struct_size = sizeof before;
  ASSERT_EQ(uscope_writer_stats(w, &before), USCOPE_OK);
  EXPECT_EQ(before.sticky_status, USCOPE_ERR_IO);
  // Sticky: every later per-cycle call is a counted no-op.
  EXPECT_EQ(uscope_begin_cycle(w, t + 1000), USCOPE_ERR_IO);
  EXPECT_EQ(uscope_slot_set(w, kEnt, 0, F_A, 1), USCOPE_ERR_IO);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_ERR_IO);
  uscope_writer_stats_t after;
  after.struct_size = sizeof after;
  ASSERT_EQ(uscope_writer_stats(w, &after), USCOPE_OK);
  EXPECT_EQ(after.errors, before.errors + 3);
  EXPECT_EQ(after.ops, before.ops);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_ERR_IO);
  EXPECT_MSG(uscope_last_error(), msg);
  EXPECT_MSG(uscope_last_error(), "unfinalized");

  // The file is a live (unfinished) file: its committed segments decode, and
  // they hold a gap-free prefix of the completed cycles.
  const auto tf = uscope::test::read_trace_file(path);
  EXPECT_FALSE(tf.header.flags & 1);
  ASSERT_GE(tf.segments.size(), 1u);
  EXPECT_EQ(tf.header.num_segments, tf.segments.size());
  uint64_t expect_t = 1000;
  for (const auto &seg : tf.segments) {
    for (uint64_t ft : seg.frame_times) {
      EXPECT_EQ(ft, expect_t);
      expect_t += 1000;
    }
    EXPECT_EQ(seg.items.size(), 40u * seg.frame_times.size());
  }
  EXPECT_LE(expect_t - 1000, completed * 1000);
}
TEST(WriterMisuse, EncoderWriteErrorIsStickyIo) { expect_write_error_is_sticky_io(USCOPE_COMPRESS_THREADS_INLINE); }
TEST(WriterMisuse, CompressionWorkerWriteErrorIsStickyIo) { expect_write_error_is_sticky_io(4); }

}  // namespace
