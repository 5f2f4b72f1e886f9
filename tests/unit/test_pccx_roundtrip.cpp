// pccx writer -> reader round trips for every encoding.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/checksum.hpp"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_writer.hpp"
#include "pccx/pccx.h"
#include "support/pccx_test_util.hpp"
#include "support/test_util.hpp"

using namespace uscope::test;

namespace {

struct Ev {
  uint32_t core, type;
  uint64_t start, dur;
  const char *api;
};

const std::vector<Ev> kEvents = {
    {0, PCCX_EVENT_API_CALL, 0, 10, "uca_init"},  {1, PCCX_EVENT_MAC_COMPUTE, 5, 100, nullptr},
    {2, PCCX_EVENT_DMA_READ, 7, 30, nullptr},     {2, PCCX_EVENT_DMA_WRITE, 40, 3, nullptr},
    {3, PCCX_EVENT_SYSTOLIC_STALL, 50, 2, nullptr}, {0, PCCX_EVENT_BARRIER_SYNC, 60, 1, nullptr},
    {7, PCCX_EVENT_UNKNOWN, 70, 0, nullptr},       {1, PCCX_EVENT_API_CALL, 80, 5, "uca_\xc3\xa9t\xc3\xa9"},
    {1, PCCX_EVENT_API_CALL, 90, 5, ""},
};

void write_events(const std::string &path, uint32_t enc, bool names, uint64_t queue = 0) {
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.encoding = enc;
  o.queue_bytes = queue;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
  for (const auto &e : kEvents)
    ASSERT_EQ(pccx_writer_event(w, e.core, e.start, e.dur, e.type, names ? e.api : nullptr), USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
}

void check_events(const std::string &path, uint32_t enc, bool names) {
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.encoding, enc);
  EXPECT_EQ(h.checksum_status, uint32_t{PCCX_CHECKSUM_OK});
  EXPECT_EQ(h.total_cycles, 105u);  // max start + duration
  EXPECT_EQ(h.cycles, 105u);
  EXPECT_EQ(h.cores, 8u);
  EXPECT_EQ(h.mac_rows, 32u);
  EXPECT_EQ(h.clock_mhz, 1000u);
  EXPECT_EQ(h.num_api_names, names ? 3u : 0u);
  EXPECT_EQ(h.flatbuf_trailer, enc == PCCX_ENCODING_FLATBUF && names ? 1u : 0u);
  EXPECT_EQ(std::string(h.pccx_lab_version).rfind("libuscope ", 0), 0u);
  ASSERT_EQ(pccx_reader_event_count(r), kEvents.size());
  for (size_t i = 0; i < kEvents.size(); ++i) {
    pccx_event_t e{};
    ASSERT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    EXPECT_EQ(e.core_id, kEvents[i].core);
    EXPECT_EQ(e.type_id, kEvents[i].type);
    EXPECT_EQ(e.start_cycle, kEvents[i].start);
    EXPECT_EQ(e.duration, kEvents[i].dur);
    EXPECT_STREQ(e.type_name, pccx_event_type_name(kEvents[i].type));
    if (names && kEvents[i].api) EXPECT_STREQ(e.api_name, kEvents[i].api);
    else EXPECT_EQ(e.api_name, nullptr);
  }
  if (enc == PCCX_ENCODING_FLATBUF) {
    EXPECT_GE(h.payload_bytes, kEvents.size() * 24);
  }
  if (enc == PCCX_ENCODING_FLATBUF && !names) {
    EXPECT_EQ(h.payload_bytes, kEvents.size() * 24);
  }
  pccx_reader_close(r);
}

}  // namespace

TEST(PccxRoundTrip, Bincode) {
  TempDir d("pccx_rt");
  write_events(d.file("a.pccx"), PCCX_ENCODING_BINCODE, true);
  check_events(d.file("a.pccx"), PCCX_ENCODING_BINCODE, true);
}

TEST(PccxRoundTrip, FlatbufWithApiNamesHasPcc2Trailer) {
  TempDir d("pccx_rt");
  write_events(d.file("a.pccx"), PCCX_ENCODING_FLATBUF, true);
  check_events(d.file("a.pccx"), PCCX_ENCODING_FLATBUF, true);
}

TEST(PccxRoundTrip, FlatbufWithoutApiNames) {
  TempDir d("pccx_rt");
  write_events(d.file("a.pccx"), PCCX_ENCODING_FLATBUF, false);
  check_events(d.file("a.pccx"), PCCX_ENCODING_FLATBUF, false);
}

TEST(PccxRoundTrip, Raw) {
  TempDir d("pccx_rt");
  const std::string p = d.file("r.pccx");
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.encoding = PCCX_ENCODING_RAW;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, p.c_str(), &o), USCOPE_OK);
  std::vector<uint8_t> all;
  for (int i = 0; i < 50; ++i) {
    std::vector<uint8_t> chunk(size_t(i) * 3001 + 1);
    for (size_t k = 0; k < chunk.size(); ++k) chunk[k] = uint8_t(k * 31 + i);
    ASSERT_EQ(pccx_writer_raw(w, chunk.data(), chunk.size()), USCOPE_OK);
    all.insert(all.end(), chunk.begin(), chunk.end());
  }
  EXPECT_EQ(pccx_writer_event(w, 0, 0, 1, 1, nullptr), USCOPE_ERR_BAD_STATE);
  ASSERT_EQ(pccx_writer_set_total_cycles(w, 1234), USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, p.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  const uint8_t *data;
  uint64_t n;
  ASSERT_EQ(pccx_reader_payload(r, &data, &n), USCOPE_OK);
  ASSERT_EQ(n, all.size());
  EXPECT_EQ(std::memcmp(data, all.data(), n), 0);
  EXPECT_EQ(pccx_reader_event_count(r), 0u);
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.cycles, 1234u);
  EXPECT_EQ(h.checksum, uscope::fnv1a64(all.data(), all.size()));
  pccx_reader_close(r);
}

// A queue small enough to wrap many times, with every record size.
TEST(PccxRoundTrip, SmallQueueWrapsAndBlocks) {
  TempDir d("pccx_rt");
  const std::string p = d.file("big.pccx");
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.queue_bytes = 1;  // raised to the minimum
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, p.c_str(), &o), USCOPE_OK);
  const uint64_t n = 200000;
  std::string name;
  for (uint64_t i = 0; i < n; ++i) {
    const char *api = nullptr;
    if (i % 97 == 0) {
      name = "uca_" + std::string(i % 50, 'x');
      api = name.c_str();
    }
    ASSERT_EQ(pccx_writer_event(w, uint32_t(i % 16), i * 3, i % 7, uint32_t(i % 7), api), USCOPE_OK);
  }
  pccx_writer_stats_t s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(pccx_writer_finish(w), USCOPE_OK);
  ASSERT_EQ(pccx_writer_stats(w, &s), USCOPE_OK);
  EXPECT_EQ(s.events, n);
  EXPECT_EQ(s.events_written, n);
  EXPECT_EQ(s.dropped_events, 0u);
  EXPECT_EQ(s.queue_bytes, 256u * 1024);
  EXPECT_NE(s.checksum, 0u);
  EXPECT_EQ(pccx_writer_event(w, 0, 0, 0, 1, nullptr), USCOPE_ERR_BAD_STATE);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK);
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, p.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(pccx_reader_event_count(r), n);
  for (uint64_t i = 0; i < n; i += 997) {
    pccx_event_t e{};
    ASSERT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    EXPECT_EQ(e.start_cycle, i * 3);
    EXPECT_EQ(e.type_id, uint32_t(i % 7));
    EXPECT_EQ(e.api_name != nullptr, i % 97 == 0);
  }
  pccx_reader_close(r);
}

TEST(PccxRoundTrip, DropModeCountsAndReports) {
  TempDir d("pccx_rt");
  const std::string p = d.file("drop.pccx");
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.backpressure = PCCX_BACKPRESSURE_DROP;
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, p.c_str(), &o), USCOPE_OK);
  uint64_t ok = 0, dropped = 0;
  std::string big(60000, 'n');
  for (int i = 0; i < 20000; ++i) {
    const uscope_status_t s = pccx_writer_event(w, 0, uint64_t(i), 1, PCCX_EVENT_API_CALL, big.c_str());
    if (s == USCOPE_OK) ++ok;
    else if (s == USCOPE_ERR_DATA_DROPPED) ++dropped;
    else FAIL() << s;
  }
  pccx_writer_stats_t s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(pccx_writer_stats(w, &s), USCOPE_OK);
  EXPECT_EQ(s.dropped_events, dropped);
  const uscope_status_t cs = pccx_writer_close(w);
  EXPECT_EQ(cs, dropped ? USCOPE_ERR_DATA_DROPPED : USCOPE_OK);
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, p.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(pccx_reader_event_count(r), ok);
  pccx_reader_close(r);
}

TEST(PccxWriter, ArgumentErrors) {
  TempDir d("pccx_w");
  pccx_writer_t *w = nullptr;
  EXPECT_EQ(pccx_writer_open(nullptr, d.file("x").c_str(), nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_writer_open(&w, nullptr, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
  o.encoding = 7;
  EXPECT_EQ(pccx_writer_open(&w, d.file("x").c_str(), &o), USCOPE_ERR_INVALID_ARGUMENT);
  o = PCCX_WRITER_OPTIONS_INIT;
  o.isa_version = "\xff";
  EXPECT_EQ(pccx_writer_open(&w, d.file("x").c_str(), &o), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_writer_open(&w, "/nonexistent/dir/x.pccx", nullptr), USCOPE_ERR_IO);
  ASSERT_EQ(pccx_writer_open(&w, d.file("x").c_str(), nullptr), USCOPE_OK);
  EXPECT_EQ(pccx_writer_event(w, 0, 0, 1, 7, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_writer_event(w, 0, 0, 1, 6, "bad\xc3"), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_writer_raw(w, "x", 1), USCOPE_ERR_BAD_STATE);
  EXPECT_EQ(pccx_writer_event(w, 0, 0, 1, 1, nullptr), USCOPE_OK);  // still usable
  EXPECT_EQ(pccx_writer_event(nullptr, 0, 0, 1, 1, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_writer_close(w), USCOPE_OK);
  EXPECT_EQ(pccx_writer_close(nullptr), USCOPE_OK);
  EXPECT_STREQ(pccx_event_type_name(6), "API_CALL");
  EXPECT_EQ(pccx_event_type_name(7), nullptr);
  EXPECT_EQ(pccx_event_type_id("SYSTOLIC_STALL"), 4u);
  EXPECT_EQ(pccx_event_type_id("nope"), 0u);
  EXPECT_STREQ(uscope_status_str(USCOPE_ERR_CHECKSUM), "checksum mismatch");
  EXPECT_STREQ(uscope_status_str(USCOPE_ERR_BAD_HEADER), "invalid file header");
  EXPECT_STREQ(uscope_status_str(USCOPE_ERR_BAD_UTF8), "invalid UTF-8 string");
}

TEST(PccxWriter, EmptyTraceIsValid) {
  TempDir d("pccx_w");
  for (uint32_t enc : {0u, 1u, 2u}) {
    pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
    o.encoding = enc;
    pccx_writer_t *w = nullptr;
    ASSERT_EQ(pccx_writer_open(&w, d.file("e").c_str(), &o), USCOPE_OK);
    ASSERT_EQ(pccx_writer_close(w), USCOPE_OK);
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(pccx_reader_open(&r, d.file("e").c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
    EXPECT_EQ(pccx_reader_event_count(r), 0u);
    pccx_reader_close(r);
  }
}

#ifdef USCOPE_CLI
// `uscope info` detects a .pccx by its magic (tools/cmd_pccx_info.cpp).
TEST(PccxCli, InfoOnDummyTrace) {
  for (const char *flag : {" --json", ""}) {
    const std::string cmd = std::string(USCOPE_CLI) + " info " + kPccxDummy + flag + " 2>&1";
    FILE *f = popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    ASSERT_EQ(pclose(f), 0) << out;
    if (*flag) {
      EXPECT_NE(out.find("\"format\":\"pccx\""), std::string::npos) << out;
      EXPECT_NE(out.find("\"checksum_fnv64\":13668806591801049621"), std::string::npos) << out;
      EXPECT_NE(out.find("\"checksum_status\":\"ok\""), std::string::npos) << out;
      EXPECT_NE(out.find("\"num_events\":16008"), std::string::npos) << out;
      EXPECT_NE(out.find("\"total_cycles\":5423940"), std::string::npos) << out;
      EXPECT_NE(out.find("\"API_CALL\":8"), std::string::npos) << out;
      EXPECT_NE(out.find("\"MAC_COMPUTE\":3200"), std::string::npos) << out;
      EXPECT_NE(out.find("\"mac_dims\":[32,32]"), std::string::npos) << out;
      EXPECT_NE(out.find("\"peak_tops\":65.54}"), std::string::npos) << out;  // shortest, not %f
    } else {
      EXPECT_NE(out.find("checksum:         ok"), std::string::npos) << out;
      EXPECT_NE(out.find("bincode, 637295 bytes"), std::string::npos) << out;
      EXPECT_NE(out.find("peak_tops 65.54\n"), std::string::npos) << out;
    }
  }
}
#endif

// peak_tops is written as serde_json writes an f64 (pccx-lab's own headers):
// the expected texts are serde_json 1.0.146's output for these doubles. The
// value reads back exactly, and the text does not depend on the C locale.
// Fills the stack below the caller with digits, where json_double's buffer
// will be: its exponent parse must stop at the end of what to_chars wrote
// (it used atoi, which read on into such bytes: 0.000123 came out 1.23e-40
// when an earlier call had left a '0' there; seen under parallel ctest).
__attribute__((noinline)) static void dirty_stack() {
  volatile char junk[512];
  for (size_t i = 0; i < sizeof junk; ++i) junk[i] = '0' + static_cast<char>(i % 10);
}
TEST(PccxWriter, JsonDoubleExponentIgnoresStaleStackBytes) {
  for (int i = 0; i < 100; ++i) {
    dirty_stack();
    ASSERT_EQ(uscope::pccx::json_double(0.000123), "0.000123");
    dirty_stack();
    ASSERT_EQ(uscope::pccx::json_double(1e300), "1e300");
    dirty_stack();
    ASSERT_EQ(uscope::pccx::json_double(1.5e-7), "1.5e-7");
  }
}

TEST(PccxWriter, PeakTopsIsWrittenAsSerdeJsonDoes) {
  const std::pair<uint64_t, const char *> cases[] = {
      {0x0000000000000000, "0.0"},       {0x4059000000000000, "100.0"},
      {0x4000666666666666, "2.05"},      {0x4341c37937e08000, "1e16"},
      {0x430c6bf526340000, "1000000000000000.0"},
      {0x3e7ad7f29abcaf48, "1e-7"},      {0x3f1a36e2eb1c432d, "0.0001"},
      {0x3ee4f8b588e368f1, "0.00001"},   {0x3e8421f5f40d8376, "1.5e-7"},
      {0x7e37e43c8800759c, "1e300"},     {0x437b69b4ba630f35, "1.2345678901234568e17"},
      {0x4050000000000000, "64.0"},      {0x3fb999999999999a, "0.1"},
      {0x0000000000000001, "5e-324"},    {0x7fefffffffffffff, "1.7976931348623157e308"},
      {0x405edd2f1a9fbe77, "123.456"},   {0x4340000000000000, "9007199254740992.0"},
      {0x43118b54f22aeb03, "1234567890123456.8"},
      {0x3fd3333333333334, "0.30000000000000004"},
      {0x3efa36e2eb1c432d, "0.000025"},  {0x444b1ae4d6e2ef50, "1e21"},
      {0x4028000000000000, "12.0"},      {0x435aa535d3d0c000, "3e16"},
      {0x44dfe185ca57c517, "6.02214076e23"},
      {0x3f201f31f46ed246, "0.000123"},
  };
  TempDir d("pccxf64");
  for (const auto &[bits, text] : cases) {
    double v;
    std::memcpy(&v, &bits, 8);
    SCOPED_TRACE(text);
    EXPECT_EQ(uscope::pccx::json_double(v), text);
    // Through a file: the header has the text, and the reader gets v back.
    pccx_writer_options_t o = PCCX_WRITER_OPTIONS_INIT;
    o.peak_tops = v;
    pccx_writer_t *w = nullptr;
    const std::string path = d.file("f.pccx");
    ASSERT_EQ(pccx_writer_open(&w, path.c_str(), &o), USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
    std::ifstream f(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(bytes.find(std::string("\"peak_tops\":") + text + "}"), std::string::npos);
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
    pccx_header_t h{};
    h.struct_size = sizeof h;
    ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    EXPECT_EQ(std::memcmp(&h.peak_tops, &v, 8), 0);
    pccx_reader_close(r);
  }
}

// A bincode payload's checksum hashed as it is written (Writer::Expect, what
// pccx -> pccx uses): right whether the expected prefix (total_cycles, event
// count) was the real one or not (then the payload is read back), for the
// strict reader.
TEST(PccxWriter, ExpectedPrefixGivesTheSameChecksum) {
  uscope::test::TempDir d("pccx");
  struct Case {
    const char *name;
    uint64_t total, events;
  };
  // 1000 events, the last ending at 10,990 (total_cycles = max end, no set_total_cycles).
  const Case cases[] = {{"right", 10990, 1000}, {"wrong_count", 10990, 999}, {"wrong_total", 5, 1000}};
  uint64_t sums[3] = {};
  for (int c = 0; c < 3; ++c) {
    const std::string path = d.file(std::string(cases[c].name) + ".pccx");
    pccx_writer_options_t o;
    pccx_writer_options_init(&o);
    const uscope::pccx::Writer::Expect e{cases[c].total, cases[c].events};
    {
      uscope::pccx::Writer w(path.c_str(), &o, &e);
      for (uint64_t i = 0; i < 1000; ++i)
        ASSERT_EQ(w.event(static_cast<uint32_t>(i % 4), i * 10, 1009 - (i % 10), PCCX_EVENT_MAC_COMPUTE,
                          i % 3 ? "gemm" : nullptr),
                  USCOPE_OK);
      ASSERT_EQ(w.finish(), USCOPE_OK) << w.error();
    }
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
    pccx_header_t h{};
    h.struct_size = sizeof h;
    ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    EXPECT_EQ(h.checksum_status, static_cast<uint32_t>(PCCX_CHECKSUM_OK)) << cases[c].name;
    EXPECT_EQ(h.num_events, 1000u);
    sums[c] = h.checksum;
    pccx_reader_close(r);
  }
  EXPECT_EQ(sums[0], sums[1]);
  EXPECT_EQ(sums[0], sums[2]);
}
