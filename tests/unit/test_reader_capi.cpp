// The reader's C API: every accessor against a trace written through the
// writer's C API with known content, plus its error statuses.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

constexpr uint64_t kCycles = 500;
constexpr uint64_t kPeriod = 1000;

// rob: sparse buffer, 8 slots, fields id U32 + pc U64 + stage ENUM, properties
// head/tail U8. ctr: 1-slot dense U64 counter. ev: stage_transition (U32, ENUM).
struct Written {
  std::string path;
  uint32_t str_index = 0;
};

Written write_trace(const TempDir &dir, uint64_t interval_cycles = 100) {
  Written out;
  out.path = dir.file("t.uscope");
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "core_clk", kPeriod), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uint16_t core = 0;
  EXPECT_EQ(uscope_schema_add_scope(s, &core, "core0", 0, "cpu", USCOPE_CLOCK_INHERIT), USCOPE_OK);
  const char *stages[] = {"fetch", "decode", "execute"};
  uint8_t stage = 0;
  EXPECT_EQ(uscope_schema_add_enum(s, &stage, "stage", stages, 3), USCOPE_OK);
  uscope_field_t f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0},
                        {"stage", USCOPE_FT_ENUM, stage, 0, 0}};
  uscope_field_t p[] = {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0},
                        {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "rob", core, 8, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER, f, 3,
                                      p, 2),
            USCOPE_OK);
  uscope_field_t c[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "ctr", core, 1, 0, c, 1, nullptr, 0), USCOPE_OK);
  uscope_field_t e[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"stage", USCOPE_FT_ENUM, stage, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "stage_transition", core, e, 2), USCOPE_OK);
  uscope_dut_property_t props[] = {{"dut_name", "capi"}, {"cpu.isa", "RV32I"}};
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = interval_cycles * kPeriod;
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, out.path.c_str(), s, props, 2, &o), USCOPE_OK);
  uscope_schema_free(s);
  EXPECT_EQ(uscope_string_insert(w, &out.str_index, "addi x1, x0, 1"), USCOPE_OK);
  for (uint64_t cy = 0; cy < kCycles; ++cy) {
    EXPECT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
    const uint16_t slot = cy % 8;
    EXPECT_EQ(uscope_slot_set(w, 0, slot, 0, cy), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(w, 0, slot, 1, 0x80000000ull + 4 * cy), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(w, 0, slot, 2, cy % 3), USCOPE_OK);
    if (cy % 8 == 7) {
      EXPECT_EQ(uscope_slot_clear(w, 0, (slot + 4) % 8), USCOPE_OK);
    }
    EXPECT_EQ(uscope_prop_set(w, 0, 0, slot), USCOPE_OK);
    EXPECT_EQ(uscope_slot_add(w, 1, 0, 0, 2), USCOPE_OK);
    uint8_t payload[5];
    const uint32_t id = static_cast<uint32_t>(cy);
    std::memcpy(payload, &id, 4);
    payload[4] = static_cast<uint8_t>(cy % 3);
    EXPECT_EQ(uscope_event(w, 0, payload, 5), USCOPE_OK);
    EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  return out;
}

TEST(ReaderCapi, MetadataSchemaAndLookups) {
  TempDir dir("uscope_rcapi");
  const Written wr = write_trace(dir);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, wr.path.c_str()), USCOPE_OK) << uscope_last_error();

  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  EXPECT_EQ(info.version_major, 0);
  EXPECT_EQ(info.version_minor, 3);
  EXPECT_EQ(info.flags, 0x87u);  // complete, compressed, strings, interleaved (COMPAT 4)
  EXPECT_EQ(info.complete, 1u);
  EXPECT_EQ(info.compression, uint32_t{USCOPE_COMPRESSION_LZ4});
  EXPECT_EQ(info.interleaved, 1u);
  EXPECT_EQ(info.num_segments, 5u);  // boundaries at 100, 200, 300, 400 cycles, plus the rest
  EXPECT_EQ(info.total_time_ps, (kCycles - 1) * kPeriod);
  EXPECT_EQ(info.last_time_ps, (kCycles - 1) * kPeriod);
  EXPECT_EQ(info.checkpoint_interval_ps, 100 * kPeriod);
  // The raw header fields: finalized, so the header's count is exact and the
  // section table sits after the last segment, whose offset is the tail.
  EXPECT_EQ(info.header_num_segments, 5u);
  EXPECT_GT(info.preamble_end, 48u);
  EXPECT_EQ(info.preamble_end % 8, 0u);
  uscope_segment_info_t last{};
  ASSERT_EQ(uscope_reader_segment(r, &last, 4), USCOPE_OK);
  EXPECT_EQ(info.tail_offset, last.offset);
  EXPECT_GT(info.section_table_offset, last.offset);
  EXPECT_LT(info.section_table_offset, info.file_bytes);
  EXPECT_EQ(uscope_is_complete(r), 1);
  EXPECT_EQ(uscope_is_complete(nullptr), 0);

  ASSERT_EQ(uscope_reader_dut_count(r), 2u);
  const char *k = nullptr, *v = nullptr;
  ASSERT_EQ(uscope_reader_dut_property(r, &k, &v, 1), USCOPE_OK);
  EXPECT_STREQ(k, "cpu.isa");
  EXPECT_STREQ(v, "RV32I");
  ASSERT_EQ(uscope_reader_dut_lookup(r, &v, "dut_name"), USCOPE_OK);
  EXPECT_STREQ(v, "capi");
  EXPECT_EQ(uscope_reader_dut_lookup(r, &v, "nope"), USCOPE_ERR_NOT_FOUND);
  EXPECT_EQ(uscope_reader_dut_property(r, &k, &v, 2), USCOPE_ERR_NOT_FOUND);

  uscope_schema_counts_t n{};
  n.struct_size = sizeof n;
  ASSERT_EQ(uscope_reader_schema_counts(r, &n), USCOPE_OK);
  EXPECT_EQ(n.clocks, 1u);
  EXPECT_EQ(n.scopes, 2u);
  EXPECT_EQ(n.enums, 1u);
  EXPECT_EQ(n.storages, 2u);
  EXPECT_EQ(n.event_types, 1u);
  EXPECT_EQ(n.summary_fields, 0u);

  uscope_clock_info_t clk{};
  ASSERT_EQ(uscope_reader_clock(r, &clk, 0), USCOPE_OK);
  EXPECT_STREQ(clk.name, "core_clk");
  EXPECT_EQ(clk.period_ps, kPeriod);
  uscope_scope_info_t sc{};
  ASSERT_EQ(uscope_reader_scope(r, &sc, 0), USCOPE_OK);
  EXPECT_EQ(sc.protocol, nullptr);
  EXPECT_EQ(sc.parent_id, USCOPE_NO_PARENT);
  ASSERT_EQ(uscope_reader_scope(r, &sc, 1), USCOPE_OK);
  EXPECT_STREQ(sc.name, "core0");
  EXPECT_STREQ(sc.protocol, "cpu");
  EXPECT_EQ(sc.clock_id, USCOPE_CLOCK_INHERIT);
  const char *en = nullptr;
  uint32_t nv = 0;
  ASSERT_EQ(uscope_reader_enum(r, &en, &nv, 0), USCOPE_OK);
  EXPECT_STREQ(en, "stage");
  EXPECT_EQ(nv, 3u);
  ASSERT_EQ(uscope_reader_enum_value(r, &en, 0, 2), USCOPE_OK);
  EXPECT_STREQ(en, "execute");
  EXPECT_EQ(uscope_reader_enum_value(r, &en, 0, 3), USCOPE_ERR_NOT_FOUND);

  uscope_storage_info_t st{};
  ASSERT_EQ(uscope_reader_storage(r, &st, 0), USCOPE_OK);
  EXPECT_STREQ(st.name, "rob");
  EXPECT_EQ(st.num_slots, 8);
  EXPECT_EQ(st.flags, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER);
  EXPECT_EQ(st.num_fields, 3);
  EXPECT_EQ(st.num_properties, 2);
  EXPECT_EQ(st.slot_size, 13u);
  uscope_field_info_t fi{};
  ASSERT_EQ(uscope_reader_storage_field(r, &fi, 0, 2, 0), USCOPE_OK);
  EXPECT_STREQ(fi.name, "stage");
  EXPECT_EQ(fi.type, USCOPE_FT_ENUM);
  EXPECT_EQ(fi.offset, 12u);  // after id (4) and pc (8): §8.6.5 packing
  ASSERT_EQ(uscope_reader_storage_field(r, &fi, 0, 1, 1), USCOPE_OK);
  EXPECT_STREQ(fi.name, "tail");
  EXPECT_EQ(fi.role, USCOPE_ROLE_TAIL_PTR);
  EXPECT_EQ(fi.offset, 1u);
  EXPECT_EQ(uscope_reader_storage_field(r, &fi, 0, 3, 0), USCOPE_ERR_UNKNOWN_FIELD);
  EXPECT_EQ(uscope_reader_storage_field(r, &fi, 0, 2, 1), USCOPE_ERR_UNKNOWN_PROPERTY);
  EXPECT_EQ(uscope_reader_storage(r, &st, 2), USCOPE_ERR_UNKNOWN_STORAGE);
  uscope_event_type_info_t et{};
  ASSERT_EQ(uscope_reader_event_type(r, &et, 0), USCOPE_OK);
  EXPECT_STREQ(et.name, "stage_transition");
  EXPECT_EQ(et.payload_size, 5u);
  ASSERT_EQ(uscope_reader_event_field(r, &fi, 0, 1), USCOPE_OK);
  EXPECT_EQ(fi.offset, 4u);
  EXPECT_EQ(uscope_reader_event_type(r, &et, 1), USCOPE_ERR_UNKNOWN_EVENT);

  uint16_t id = 0;
  ASSERT_EQ(uscope_reader_find_storage(r, &id, "ctr"), USCOPE_OK);
  EXPECT_EQ(id, 1);
  ASSERT_EQ(uscope_reader_find_field(r, &id, 0, "pc", 0), USCOPE_OK);
  EXPECT_EQ(id, 1);
  ASSERT_EQ(uscope_reader_find_field(r, &id, 0, "head", 1), USCOPE_OK);
  EXPECT_EQ(id, 0);
  ASSERT_EQ(uscope_reader_find_event(r, &id, "stage_transition"), USCOPE_OK);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(uscope_reader_find_storage(r, &id, "missing"), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(std::string(uscope_reader_error(r)).find("missing"), std::string::npos);

  ASSERT_EQ(uscope_reader_string_count(r), 1u);
  const char *str = nullptr;
  uint32_t len = 0;
  ASSERT_EQ(uscope_reader_string(r, &str, &len, wr.str_index), USCOPE_OK);
  EXPECT_STREQ(str, "addi x1, x0, 1");
  EXPECT_EQ(len, 14u);

  // A counter storage makes the writer add a TSUM (COMPAT 16). Instructions
  // count SETs to the first sparse NON-buffer storage; rob is a buffer, so 0.
  uscope_summary_info_t sum{};
  sum.struct_size = sizeof sum;
  ASSERT_EQ(uscope_reader_summary(r, &sum), USCOPE_OK);
  EXPECT_EQ(sum.present, 1u);
  EXPECT_EQ(sum.total_instructions, 0u);
  EXPECT_EQ(sum.num_counters, 1u);
  const uint32_t *dens = nullptr;
  uint32_t nd = 0;
  ASSERT_EQ(uscope_reader_summary_density(r, &dens, &nd, 0), USCOPE_OK);
  ASSERT_EQ(nd, 1u);  // 500 cycles fit one 1024-cycle bucket
  EXPECT_EQ(dens[0], 0u);
  const char *cname = nullptr;
  uint16_t csid = 0;
  uint32_t levels = 0;
  ASSERT_EQ(uscope_reader_summary_counter(r, &cname, &csid, &levels, 0), USCOPE_OK);
  EXPECT_STREQ(cname, "ctr");
  EXPECT_EQ(csid, 1);
  const uscope_mipmap_entry_t *e = nullptr;
  uint32_t ne = 0;
  ASSERT_EQ(uscope_reader_summary_counter_level(r, &e, &ne, 0, 0), USCOPE_OK);
  ASSERT_EQ(ne, 1u);
  EXPECT_EQ(e[0].min_delta, 2u);
  EXPECT_EQ(e[0].max_delta, 2u);
  EXPECT_EQ(e[0].sum, 2 * kCycles);
  uscope_reader_close(r);
}

TEST(ReaderCapi, StateEventsAndSegmentItems) {
  TempDir dir("uscope_rcapi");
  const Written wr = write_trace(dir);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, wr.path.c_str()), USCOPE_OK);

  // State at cycle 250: slot 250 % 8 = 2 holds cycle 250; the counter is 2*251.
  uscope_state_t *s = nullptr;
  ASSERT_EQ(uscope_reader_state_at(r, &s, 250 * kPeriod), USCOPE_OK);
  int valid = 0;
  uint64_t value = 0;
  ASSERT_EQ(uscope_state_slot_valid(s, &valid, 0, 2), USCOPE_OK);
  EXPECT_EQ(valid, 1);
  ASSERT_EQ(uscope_state_slot_field(s, &value, 0, 2, 0), USCOPE_OK);
  EXPECT_EQ(value, 250u);
  ASSERT_EQ(uscope_state_slot_field(s, &value, 0, 2, 1), USCOPE_OK);
  EXPECT_EQ(value, 0x80000000ull + 4 * 250);
  ASSERT_EQ(uscope_state_property(s, &value, 0, 0), USCOPE_OK);
  EXPECT_EQ(value, 2u);
  ASSERT_EQ(uscope_state_slot_field(s, &value, 1, 0, 0), USCOPE_OK);
  EXPECT_EQ(value, 2u * 251);
  // Cycle 247 (slot 7) cleared slot (7 + 4) % 8 = 3, and nothing set it since.
  ASSERT_EQ(uscope_state_slot_valid(s, &valid, 0, 3), USCOPE_OK);
  EXPECT_EQ(valid, 0);
  uint32_t occ = 0;
  ASSERT_EQ(uscope_state_occupancy(s, &occ, 0), USCOPE_OK);
  EXPECT_EQ(occ, 7u);
  ASSERT_EQ(uscope_state_occupancy(s, &occ, 1), USCOPE_OK);
  EXPECT_EQ(occ, 1u);  // dense: always valid
  EXPECT_EQ(uscope_state_slot_valid(s, &valid, 0, 8), USCOPE_ERR_UNKNOWN_SLOT);
  EXPECT_EQ(uscope_state_slot_field(s, &value, 0, 0, 3), USCOPE_ERR_UNKNOWN_FIELD);
  EXPECT_EQ(uscope_state_property(s, &value, 0, 2), USCOPE_ERR_UNKNOWN_PROPERTY);
  EXPECT_EQ(uscope_state_occupancy(s, &occ, 2), USCOPE_ERR_UNKNOWN_STORAGE);
  uscope_state_free(s);

  // Events in [99, 201] cycles, across three segments, in order.
  uscope_event_iter_t *it = nullptr;
  ASSERT_EQ(uscope_reader_events_in_range(r, &it, 99 * kPeriod, 201 * kPeriod), USCOPE_OK);
  uscope_event_t ev{};
  uint64_t expect = 99;
  uscope_status_t st;
  while ((st = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
    ASSERT_EQ(ev.time_ps, expect * kPeriod);
    ASSERT_EQ(ev.payload_size, 5u);
    uint32_t id;
    std::memcpy(&id, ev.payload, 4);
    EXPECT_EQ(id, expect);
    EXPECT_EQ(ev.payload[4], expect % 3);
    ++expect;
  }
  EXPECT_EQ(st, USCOPE_DONE);
  EXPECT_EQ(expect, 202u);
  EXPECT_EQ(uscope_event_iter_next(it, &ev), USCOPE_DONE);  // stays done
  uscope_event_iter_free(it);

  // An empty and a reversed range.
  ASSERT_EQ(uscope_reader_events_in_range(r, &it, 10 * kPeriod + 1, 10 * kPeriod + 999), USCOPE_OK);
  EXPECT_EQ(uscope_event_iter_next(it, &ev), USCOPE_DONE);
  uscope_event_iter_free(it);
  ASSERT_EQ(uscope_reader_events_in_range(r, &it, 200 * kPeriod, 100 * kPeriod), USCOPE_OK);
  EXPECT_EQ(uscope_event_iter_next(it, &ev), USCOPE_DONE);
  uscope_event_iter_free(it);

  // Segment 1 covers cycles 100..200: its first frame is cycle 101 (COMPAT 10).
  uscope_segment_info_t seg{};
  ASSERT_EQ(uscope_reader_segment(r, &seg, 1), USCOPE_OK);
  EXPECT_EQ(seg.time_start_ps, 100 * kPeriod);
  EXPECT_EQ(seg.time_end_ps, 200 * kPeriod);
  EXPECT_EQ(seg.num_frames, 100u);
  EXPECT_EQ(uscope_reader_segment(r, &seg, 5), USCOPE_ERR_NOT_FOUND);
  uscope_item_iter_t *items = nullptr;
  ASSERT_EQ(uscope_reader_segment_items(r, &items, 1), USCOPE_OK);
  uscope_item_t item{};
  ASSERT_EQ(uscope_item_iter_next(items, &item), USCOPE_OK);
  EXPECT_EQ(item.time_ps, 101 * kPeriod);
  EXPECT_EQ(item.is_event, 0u);
  EXPECT_EQ(item.action, 1);  // DA_SLOT_SET of field 0 (id)
  EXPECT_EQ(item.value, 101u);
  size_t n_items = 1, n_events = 0;
  while ((st = uscope_item_iter_next(items, &item)) == USCOPE_OK) {
    ++n_items;
    n_events += item.is_event;
  }
  EXPECT_EQ(st, USCOPE_DONE);
  EXPECT_EQ(n_events, 100u);
  EXPECT_GT(n_items, 600u);
  uscope_item_iter_free(items);

  uint32_t found = 7;
  ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK);
  EXPECT_EQ(found, 0u);  // finalized: nothing new
  uscope_reader_close(r);
}

TEST(ReaderCapi, OpenErrorsAreSpecific) {
  TempDir dir("uscope_rcapi");
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, dir.file("missing.uscope").c_str()), USCOPE_ERR_IO);
  EXPECT_EQ(r, nullptr);
  EXPECT_NE(std::string(uscope_last_error()).find("missing.uscope"), std::string::npos);
  {
    std::ofstream f(dir.file("text.uscope"));
    f << "this is not a trace, but it is long enough to have a header of 48 bytes";
  }
  EXPECT_EQ(uscope_reader_open(&r, dir.file("text.uscope").c_str()), USCOPE_ERR_BAD_MAGIC);
  { std::ofstream f(dir.file("empty.uscope")); }
  EXPECT_EQ(uscope_reader_open(&r, dir.file("empty.uscope").c_str()), USCOPE_ERR_TRUNCATED);
  EXPECT_EQ(uscope_reader_open(nullptr, "x"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_reader_open(&r, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  uscope_reader_close(nullptr);  // a no-op
  EXPECT_EQ(uscope_event_iter_next(nullptr, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
}

// A writer of one 4-slot U32 storage whose segments end only where the test
// flushes, so that the test decides what is committed when.
void open_live_writer(const std::string &path, uscope_writer_t **w) {
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", kPeriod), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uscope_field_t f[] = {{"v", USCOPE_FT_U32, 0, 0, 0}};
  ASSERT_EQ(uscope_schema_add_storage(s, nullptr, "regs", 0, 4, 0, f, 1, nullptr, 0), USCOPE_OK);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 1'000'000'000;
  const uscope_status_t st = uscope_writer_open(w, path.c_str(), s, nullptr, 0, &o);
  uscope_schema_free(s);
  ASSERT_EQ(st, USCOPE_OK) << uscope_last_error();
}

// A live file: the reader opened early sees segments as they are committed.
TEST(ReaderCapi, PollFindsNewlyCommittedSegments) {
  TempDir dir("uscope_rcapi");
  const std::string path = dir.file("live.uscope");
  uscope_writer_t *w = nullptr;
  ASSERT_NO_FATAL_FAILURE(open_live_writer(path, &w));
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  EXPECT_EQ(info.complete, 0u);
  EXPECT_EQ(info.num_segments, 0u);
  uint64_t c = 0;
  for (uint32_t round = 1; round <= 3; ++round) {
    for (const uint64_t end = c + 10; c < end; ++c) {
      ASSERT_EQ(uscope_begin_cycle(w, c * kPeriod), USCOPE_OK);
      ASSERT_EQ(uscope_slot_set(w, 0, c % 4, 0, c), USCOPE_OK);
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK);
    uint32_t found = 0;
    for (int tries = 0; tries < 20000 && found == 0; ++tries) {
      ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK);
      if (!found) usleep(1000);
    }
    ASSERT_EQ(found, 1u) << "round " << round;
    EXPECT_EQ(uscope_is_complete(r), 0);
    uscope_state_t *st = nullptr;
    ASSERT_EQ(uscope_reader_state_at(r, &st, (c - 1) * kPeriod), USCOPE_OK);
    uint64_t v = 0;
    ASSERT_EQ(uscope_state_slot_field(st, &v, 0, (c - 1) % 4, 0), USCOPE_OK);
    EXPECT_EQ(v, c - 1);
    uscope_state_free(st);
  }
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uint32_t found = 0;
  ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK);
  EXPECT_EQ(found, 0u);  // close added no segment: every cycle was flushed
  ASSERT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  EXPECT_EQ(info.complete, 1u);
  EXPECT_EQ(uscope_is_complete(r), 1);
  uscope_reader_close(r);
}

// A poll that finds a damaged header fails with a specific status and leaves
// the reader exactly as it was: its segments, state and events still answer,
// and a later poll of the repaired file works.
TEST(ReaderCapi, FailedPollLeavesTheReaderAsItWas) {
  TempDir dir("uscope_rcapi");
  const std::string path = dir.file("live.uscope");
  uscope_writer_t *w = nullptr;
  ASSERT_NO_FATAL_FAILURE(open_live_writer(path, &w));
  for (uint64_t c = 0; c < 20; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * kPeriod), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, 0, c % 4, 0, c + 100), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    if (c == 9 || c == 19) {
      ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK);  // two segments
    }
  }
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t before{};
  before.struct_size = sizeof before;
  // Flushed segments reach the file from the writer's thread: wait for both.
  for (int tries = 0; tries < 20000; ++tries) {
    uint32_t n = 0;
    ASSERT_EQ(uscope_reader_poll_new_segments(r, &n), USCOPE_OK) << uscope_reader_error(r);
    ASSERT_EQ(uscope_reader_info(r, &before), USCOPE_OK);
    if (before.num_segments == 2) break;
    usleep(1000);
  }
  ASSERT_EQ(before.num_segments, 2u);

  // §2 header: tail_offset is the u64 at byte 40. Point it inside the
  // preamble, as a torn or hostile header would.
  constexpr off_t kTailOffset = 40;
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  uint64_t good = 0, bad = 16;
  ASSERT_EQ(::pread(fd, &good, 8, kTailOffset), 8);
  ASSERT_EQ(::pwrite(fd, &bad, 8, kTailOffset), 8);
  uint32_t found = 99;
  EXPECT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_ERR_CORRUPT);
  EXPECT_NE(std::string(uscope_reader_error(r)).find("preamble"), std::string::npos) << uscope_reader_error(r);

  uscope_file_info_t after{};
  after.struct_size = sizeof after;
  ASSERT_EQ(uscope_reader_info(r, &after), USCOPE_OK);
  EXPECT_EQ(after.num_segments, 2u);
  EXPECT_EQ(after.tail_offset, before.tail_offset);
  EXPECT_EQ(after.last_time_ps, 19 * kPeriod);
  uscope_state_t *st = nullptr;
  ASSERT_EQ(uscope_reader_state_at(r, &st, 19 * kPeriod), USCOPE_OK) << uscope_reader_error(r);
  for (uint16_t slot = 0; slot < 4; ++slot) {
    uint64_t v = 0;
    ASSERT_EQ(uscope_state_slot_field(st, &v, 0, slot, 0), USCOPE_OK);
    EXPECT_EQ(v, 116u + slot);  // the last write of each slot: cycles 16..19
  }
  uscope_state_free(st);

  // Repaired, then one more segment: the next poll finds exactly that one.
  ASSERT_EQ(::pwrite(fd, &good, 8, kTailOffset), 8);
  ::close(fd);
  for (uint64_t c = 20; c < 30; ++c) {
    ASSERT_EQ(uscope_begin_cycle(w, c * kPeriod), USCOPE_OK);
    ASSERT_EQ(uscope_slot_set(w, 0, c % 4, 0, c + 100), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_flush(w), USCOPE_OK);
  found = 0;
  for (int tries = 0; tries < 20000 && found == 0; ++tries) {
    ASSERT_EQ(uscope_reader_poll_new_segments(r, &found), USCOPE_OK) << uscope_reader_error(r);
    if (!found) usleep(1000);
  }
  EXPECT_EQ(found, 1u);
  EXPECT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_reader_close(r);
}

}  // namespace
