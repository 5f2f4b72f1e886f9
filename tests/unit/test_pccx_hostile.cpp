// Hostile and malformed .pccx inputs: each gives one specific status, never a
// crash or an unbounded allocation (run under ASan in the sanitizer build).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "format/checksum.hpp"
#include "pccx/pccx.h"
#include "support/pccx_test_util.hpp"
#include "support/test_util.hpp"

using namespace uscope::test;

namespace {

std::vector<uint8_t> bincode_payload(uint64_t count_override = ~0ull) {
  std::vector<uint8_t> b;
  put_u64(b, 1000);
  put_u64(b, count_override != ~0ull ? count_override : 3);
  put_u32(b, 1); put_u64(b, 10); put_u64(b, 5); put_str(b, "MAC_COMPUTE"); b.push_back(0);
  put_u32(b, 2); put_u64(b, 20); put_u64(b, 5); put_str(b, "API_CALL"); b.push_back(1); put_str(b, "uca_x");
  put_u32(b, 3); put_u64(b, 30); put_u64(b, 5); put_str(b, "FANCY_NEW_TYPE"); b.push_back(0);
  return b;
}

std::vector<uint8_t> bincode_file(const std::vector<uint8_t> &payload) {
  return pccx_file(pccx_json("bincode", payload.size(), std::to_string(uscope::fnv1a64(payload.data(), payload.size()))),
                   payload);
}

uscope_status_t status_of(const std::vector<uint8_t> &f, uint32_t flags = 0) {
  pccx_reader_t *r = nullptr;
  const uscope_status_t s = open_bytes(f, &r, flags);
  if (s == USCOPE_OK) {
    pccx_header_t h{};
    h.struct_size = sizeof h;
    EXPECT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    for (uint64_t i = 0; i < pccx_reader_event_count(r); ++i) {
      pccx_event_t e{};
      EXPECT_EQ(pccx_reader_event(r, &e, i), USCOPE_OK);
    }
    pccx_reader_close(r);
  } else {
    EXPECT_EQ(r, nullptr);
  }
  return s;
}

std::string header_error(const std::string &json, const std::vector<uint8_t> &payload = {}) {
  pccx_reader_t *r = nullptr;
  const auto f = pccx_file(json, payload);
  EXPECT_EQ(open_bytes(f, &r), USCOPE_ERR_BAD_HEADER) << json;
  pccx_reader_close(r);
  return uscope_last_error();
}

}  // namespace

TEST(PccxHostile, ValidBaseFileReads) {
  const auto f = bincode_file(bincode_payload());
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(open_bytes(f, &r, PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(pccx_reader_event_count(r), 3u);
  pccx_event_t e{};
  ASSERT_EQ(pccx_reader_event(r, &e, 2), USCOPE_OK);
  EXPECT_EQ(e.type_id, uint32_t{PCCX_EVENT_UNKNOWN});  // unknown names: id 0, name kept
  EXPECT_STREQ(e.type_name, "FANCY_NEW_TYPE");
  ASSERT_EQ(pccx_reader_event(r, &e, 1), USCOPE_OK);
  EXPECT_STREQ(e.api_name, "uca_x");
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.clock_mhz, 500u);
  EXPECT_EQ(h.mac_cols, 8u);
  EXPECT_EQ(h.total_cycles, 1000u);
  pccx_reader_close(r);
}

TEST(PccxHostile, TruncationAtEveryByte) {
  const auto f = bincode_file(bincode_payload());
  EXPECT_EQ(status_of({}), USCOPE_ERR_BAD_MAGIC);
  for (size_t n = 1; n < f.size(); ++n) {
    std::vector<uint8_t> t(f.begin(), f.begin() + long(n));
    EXPECT_EQ(status_of(t), USCOPE_ERR_TRUNCATED) << "cut at " << n;
  }
  EXPECT_EQ(status_of(f), USCOPE_OK);
}

// The payload cut at every byte with a consistent byte_length: the decoder
// itself meets the end inside each structure.
TEST(PccxHostile, PayloadCutAtEveryByteWithConsistentLength) {
  const auto p = bincode_payload();
  for (size_t n = 0; n < p.size(); ++n) {
    std::vector<uint8_t> cut(p.begin(), p.begin() + long(n));
    EXPECT_EQ(status_of(pccx_file(pccx_json("bincode", n), cut)), USCOPE_ERR_TRUNCATED) << n;
  }
}

TEST(PccxHostile, RandomTruncationAndCorruptionNeverCrash) {
  const auto f = bincode_file(bincode_payload());
  std::mt19937 rng(1234);
  for (int i = 0; i < 3000; ++i) {
    auto g = f;
    const int flips = 1 + int(rng() % 4);
    for (int k = 0; k < flips; ++k) g[rng() % g.size()] = uint8_t(rng());
    if (rng() % 2) g.resize(rng() % g.size());
    const uscope_status_t s = status_of(g);
    EXPECT_TRUE(s == USCOPE_OK || s == USCOPE_ERR_TRUNCATED || s == USCOPE_ERR_BAD_MAGIC ||
                s == USCOPE_ERR_UNSUPPORTED_VERSION || s == USCOPE_ERR_BAD_HEADER ||
                s == USCOPE_ERR_CORRUPT || s == USCOPE_ERR_BAD_UTF8 || s == USCOPE_ERR_LIMIT)
        << s << " " << uscope_last_error();
  }
}

TEST(PccxHostile, HugeDeclaredLengths) {
  auto f = bincode_file(bincode_payload());
  auto g = f;
  const uint64_t huge = ~0ull - 3;
  std::memcpy(g.data() + 8, &huge, 8);
  EXPECT_EQ(status_of(g), USCOPE_ERR_TRUNCATED);
  // Header length over the 64 MiB bound but inside a (sparse) bigger file is LIMIT.
  // Payload byte_length beyond the file.
  EXPECT_EQ(status_of(pccx_file(pccx_json("bincode", 18446744073709551615ull), bincode_payload())),
            USCOPE_ERR_TRUNCATED);
  // Event count far beyond what the bytes can hold: refused before reserving.
  for (uint64_t c : {uint64_t{4}, uint64_t{1} << 40, ~uint64_t{0} >> 1, ~uint64_t{0} - 1})
    EXPECT_EQ(status_of(bincode_file(bincode_payload(c))), USCOPE_ERR_TRUNCATED) << c;
  // String length huge.
  auto p = bincode_payload();
  const uint64_t hl = uint64_t{1} << 62;
  std::memcpy(p.data() + 16 + 20, &hl, 8);
  EXPECT_EQ(status_of(bincode_file(p)), USCOPE_ERR_TRUNCATED);
  // Flatbuf trailer count huge.
  std::vector<uint8_t> fb(24, 0);
  put_u32(fb, 0x32434350u);
  put_u32(fb, 0xFFFFFFFFu);
  EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", fb.size()), fb)), USCOPE_ERR_TRUNCATED);
}

TEST(PccxHostile, MagicAndVersion) {
  auto f = bincode_file(bincode_payload());
  auto g = f;
  g[0] = 'X';
  EXPECT_EQ(status_of(g), USCOPE_ERR_BAD_MAGIC);
  g = f;
  g[4] = 2;
  EXPECT_EQ(status_of(g), USCOPE_ERR_UNSUPPORTED_VERSION);
  g[4] = 0;
  EXPECT_EQ(status_of(g), USCOPE_ERR_UNSUPPORTED_VERSION);
  g = f;
  g[5] = 77;  // any minor
  EXPECT_EQ(status_of(g), USCOPE_OK);
  EXPECT_EQ(status_of({'P', 'C'}), USCOPE_ERR_TRUNCATED);
  EXPECT_EQ(status_of({'Q'}), USCOPE_ERR_BAD_MAGIC);
}

TEST(PccxHostile, BadJsonHeaders) {
  EXPECT_NE(header_error("{").find("invalid JSON"), std::string::npos);
  EXPECT_NE(header_error("[1,2]").find("$"), std::string::npos);
  EXPECT_NE(header_error("{\"payload\":{\"encoding\":\"raw\",\"byte_length\":0}}").find("pccx_lab_version"),
            std::string::npos);
  EXPECT_NE(header_error("{\"pccx_lab_version\":\"x\"}").find("payload"), std::string::npos);
  EXPECT_NE(header_error("{\"pccx_lab_version\":\"x\",\"payload\":{\"encoding\":\"raw\"}}").find("payload.byte_length"),
            std::string::npos);
  EXPECT_NE(header_error("{\"pccx_lab_version\":7,\"payload\":{\"encoding\":\"raw\",\"byte_length\":0}}")
                .find("pccx_lab_version"),
            std::string::npos);
  const std::string base = "\"pccx_lab_version\":\"x\",\"payload\":{\"encoding\":\"raw\",\"byte_length\":0";
  EXPECT_NE(header_error("{" + base + ",\"checksum_fnv64\":\"zz\"}}").find("payload.checksum_fnv64"), std::string::npos);
  EXPECT_NE(header_error("{" + base + ",\"checksum_fnv64\":-1}}").find("payload.checksum_fnv64"), std::string::npos);
  EXPECT_NE(header_error("{" + base + ",\"checksum_fnv64\":1.5}}").find("payload.checksum_fnv64"), std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"trace\":{\"cycles\":\"12\",\"cores\":1}}").find("trace.cycles"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"trace\":{\"cycles\":12,\"cores\":-1}}").find("trace.cores"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"trace\":{\"cycles\":12}}").find("trace.cores"), std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"trace\":{\"cycles\":12,\"cores\":4294967296}}").find("trace.cores"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"arch\":{\"mac_dims\":[1],\"isa_version\":\"1\"}}").find("arch.mac_dims"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"arch\":{\"mac_dims\":[1,2]}}").find("arch.isa_version"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"arch\":{\"mac_dims\":[1,2],\"isa_version\":\"1\",\"peak_tops\":\"x\"}}")
                .find("arch.peak_tops"),
            std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"format_minor\":256}").find("format_minor"), std::string::npos);
  EXPECT_NE(header_error("{" + base + "},\"arch\":5}").find("arch"), std::string::npos);
  // Bad UTF-8 in the JSON header is BAD_UTF8.
  pccx_reader_t *r = nullptr;
  EXPECT_EQ(open_bytes(pccx_file("{\"pccx_lab_version\":\"\xff\"}", {}), &r), USCOPE_ERR_BAD_UTF8);
}

TEST(PccxHostile, OptionalFieldsAndChecksumForms) {
  const std::vector<uint8_t> raw = {1, 2, 3};
  const uint64_t sum = uscope::fnv1a64(raw.data(), raw.size());
  char hex[32];
  std::snprintf(hex, sizeof hex, "\"0x%llx\"", static_cast<unsigned long long>(sum));
  for (const std::string &c : {std::to_string(sum), std::string(hex), std::string("null")}) {
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(open_bytes(pccx_file(pccx_json("raw", 3, c), raw), &r, PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << c;
    pccx_header_t h{};
    h.struct_size = sizeof h;
    ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    EXPECT_EQ(h.checksum_status, c == "null" ? uint32_t{PCCX_CHECKSUM_ABSENT} : uint32_t{PCCX_CHECKSUM_OK});
    pccx_reader_close(r);
  }
  // Minimal header: only the required fields; defaults elsewhere. Unknown
  // fields are ignored; trailing whitespace is allowed.
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(open_bytes(pccx_file("{\"pccx_lab_version\":\"v\",\"zzz\":[1,{}],\"payload\":{\"encoding\":\"something\","
                                 "\"byte_length\":3}}   \n\t ",
                                 raw),
                       &r),
            USCOPE_OK)
      << uscope_last_error();
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.encoding, uint32_t{PCCX_ENCODING_OTHER});
  EXPECT_STREQ(h.encoding_name, "something");
  EXPECT_EQ(h.clock_mhz, 1000u);
  EXPECT_EQ(h.checksum_status, uint32_t{PCCX_CHECKSUM_ABSENT});
  pccx_reader_close(r);
  // A smaller (older) header struct is filled up to its size.
  ASSERT_EQ(open_bytes(pccx_file(pccx_json("raw", 3), raw), &r), USCOPE_OK);
  pccx_header_t small{};
  small.struct_size = offsetof(pccx_header_t, mac_rows);
  ASSERT_EQ(pccx_reader_header(r, &small), USCOPE_OK);
  EXPECT_EQ(small.struct_size, offsetof(pccx_header_t, mac_rows));
  EXPECT_EQ(small.mac_rows, 0u);
  pccx_reader_close(r);
}

TEST(PccxHostile, WrongChecksumWarnsOrFails) {
  const auto p = bincode_payload();
  const auto f = pccx_file(pccx_json("bincode", p.size(), "13668806591801049621"), p);
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(open_bytes(f, &r), USCOPE_OK);
  pccx_header_t h{};
  h.struct_size = sizeof h;
  ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
  EXPECT_EQ(h.checksum_status, uint32_t{PCCX_CHECKSUM_MISMATCH});
  EXPECT_EQ(h.checksum, 13668806591801049621ull);
  EXPECT_EQ(pccx_reader_event_count(r), 3u);
  pccx_reader_close(r);
  EXPECT_EQ(open_bytes(f, &r, PCCX_OPEN_STRICT_CHECKSUM), USCOPE_ERR_CHECKSUM);
  EXPECT_NE(std::string(uscope_last_error()).find("checksum"), std::string::npos);
  EXPECT_EQ(open_bytes(f, &r, 0x80), USCOPE_ERR_INVALID_ARGUMENT);
}

TEST(PccxHostile, BadUtf8AndBadStructure) {
  auto p = bincode_payload();
  auto q = p;
  q[16 + 20 + 8] = 0xC3;  // first byte of "MAC_COMPUTE" -> truncated sequence
  q[16 + 20 + 9] = 0x28;
  EXPECT_EQ(status_of(bincode_file(q)), USCOPE_ERR_BAD_UTF8);
  // api_name with an invalid byte.
  q = p;
  const size_t api_at = 16 + (20 + 8 + 11 + 1) + (20 + 8 + 8 + 1 + 8);
  ASSERT_EQ(q[api_at], 'u');
  q[api_at] = 0xFF;
  EXPECT_EQ(status_of(bincode_file(q)), USCOPE_ERR_BAD_UTF8);
  // Option tag 2.
  q = p;
  q[16 + 20 + 8 + 11] = 2;
  EXPECT_EQ(status_of(bincode_file(q)), USCOPE_ERR_CORRUPT);
  // Bytes after the declared events, inside byte_length: pccx-lab's bincode
  // decode ignores them; so do we, and count them.
  q = p;
  q.insert(q.end(), {0, 7, 9});
  {
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(open_bytes(bincode_file(q), &r), USCOPE_OK) << uscope_last_error();
    pccx_header_t h{};
    h.struct_size = sizeof h;
    ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    EXPECT_EQ(h.payload_trailing_bytes, 3u);
    EXPECT_EQ(h.checksum_status, PCCX_CHECKSUM_OK);  // the checksum covers them
    EXPECT_EQ(pccx_reader_event_count(r), 3u);
    pccx_reader_close(r);
  }
  // Bytes after byte_length in the file are ignored (as pccx-lab does).
  auto f = bincode_file(p);
  f.push_back(9);
  EXPECT_EQ(status_of(f), USCOPE_OK);
}

TEST(PccxHostile, FlatbufStructure) {
  std::vector<uint8_t> fb;
  put_u32(fb, 1); put_u64(fb, 10); put_u64(fb, 5); put_u32(fb, 1);
  put_u32(fb, 2); put_u64(fb, 20); put_u64(fb, 5); put_u32(fb, 99);  // unknown id kept
  EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", fb.size()), fb)), USCOPE_OK);
  // A partial last record (no trailer): pccx-lab decodes the whole records
  // and ignores it; so do we, and count it.
  auto g = fb;
  g.insert(g.end(), {1, 2, 3, 4, 5});
  {
    pccx_reader_t *r = nullptr;
    ASSERT_EQ(open_bytes(pccx_file(pccx_json("flatbuf", g.size()), g), &r), USCOPE_OK) << uscope_last_error();
    pccx_header_t h{};
    h.struct_size = sizeof h;
    ASSERT_EQ(pccx_reader_header(r, &h), USCOPE_OK);
    EXPECT_EQ(h.payload_trailing_bytes, 5u);
    EXPECT_EQ(h.flatbuf_trailer, 0u);
    EXPECT_EQ(pccx_reader_event_count(r), 2u);
    pccx_reader_close(r);
  }
  auto t = fb;
  put_u32(t, 0x32434350u); put_u32(t, 1); put_u32(t, 1); put_u16(t, 3);
  t.insert(t.end(), {'a', 'b', 'c'});
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(open_bytes(pccx_file(pccx_json("flatbuf", t.size()), t), &r), USCOPE_OK) << uscope_last_error();
  pccx_event_t e{};
  ASSERT_EQ(pccx_reader_event(r, &e, 1), USCOPE_OK);
  EXPECT_STREQ(e.api_name, "abc");
  EXPECT_EQ(e.type_id, 99u);
  EXPECT_STREQ(e.type_name, "UNKNOWN");
  pccx_reader_close(r);
  auto bad = t;
  bad[48 + 8] = 5;  // event index out of range
  EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", bad.size()), bad)), USCOPE_ERR_CORRUPT);
  bad = t;
  bad[bad.size() - 1] = 0xFF;
  EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", bad.size()), bad)), USCOPE_ERR_BAD_UTF8);
  for (size_t n = 48 + 8; n < t.size(); ++n) {
    std::vector<uint8_t> cut(t.begin(), t.begin() + long(n));
    EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", n), cut)), USCOPE_ERR_TRUNCATED) << n;
  }
  bad = t;
  bad.push_back(1);
  EXPECT_EQ(status_of(pccx_file(pccx_json("flatbuf", bad.size()), bad)), USCOPE_ERR_CORRUPT);
}

TEST(PccxHostile, MissingFileAndNulls) {
  pccx_reader_t *r = nullptr;
  EXPECT_EQ(pccx_reader_open(&r, "/nonexistent/x.pccx", 0), USCOPE_ERR_IO);
  EXPECT_EQ(pccx_reader_open(nullptr, "/x", 0), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_reader_open(&r, nullptr, 0), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_reader_open_memory(&r, nullptr, 4, 0), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pccx_reader_event_count(nullptr), 0u);
  pccx_reader_close(nullptr);
  pccx_header_t h{};
  EXPECT_EQ(pccx_reader_header(nullptr, &h), USCOPE_ERR_INVALID_ARGUMENT);
}
