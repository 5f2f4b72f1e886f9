// Unit tests of src/format/schema_codec: the string pool (§1.3), the
// CHUNK_SCHEMA payload (§4) and the CHUNK_DUT_DESC payload (§3).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "format/schema_codec.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;
const std::string &kCorpus = uscope::test::kCorpusDir;

// Runs f and returns the status of the uscope::Error it throws; fails the test
// (returning USCOPE_OK) when it throws nothing.
FieldDef field(uint16_t name, uint8_t type, uint8_t enum_id = 0, uint8_t role = 0,
               uint8_t pair = 0) {
  FieldDef f;
  f.name = name;
  f.type = type;
  f.enum_id = enum_id;
  f.role = role;
  f.pair_id = pair;
  return f;
}

// A schema with one record of every kind. The offsets in the comments are
// where each string lands in the pool; the byte test below relies on them.
Schema small_schema() {
  Schema s;
  StringPool &p = s.pool;
  const uint16_t clk = p.insert("clk");     // 0
  const uint16_t root = p.insert("/");      // 4
  const uint16_t core = p.insert("core");   // 6
  const uint16_t cpu = p.insert("cpu");     // 11
  const uint16_t stg = p.insert("stg");     // 15
  const uint16_t f_ = p.insert("F");        // 19
  const uint16_t d_ = p.insert("D");        // 21
  const uint16_t ent = p.insert("ent");     // 23
  const uint16_t id = p.insert("id");       // 27
  const uint16_t st = p.insert("st");       // 30
  const uint16_t head = p.insert("head");   // 33
  const uint16_t ev = p.insert("ev");       // 38
  const uint16_t n = p.insert("n");         // 41
  EXPECT_EQ(p.insert("id"), id);            // dedup: the event field reuses offset 27

  s.clocks.push_back(ClockDef{clk, 0, 1000});
  s.scopes.push_back(ScopeDef{root, 0, 0xFFFF, 0xFFFF, 0});
  s.scopes.push_back(ScopeDef{core, 1, 0, cpu, 0xFF});
  s.enums.push_back(EnumDef{stg, {EnumValue{0, f_}, EnumValue{1, d_}}});
  StorageDef sd;
  sd.name = ent;
  sd.storage_id = 0;
  sd.num_slots = 4;
  sd.flags = w::SF_SPARSE;
  sd.scope_id = 1;
  sd.fields = {field(id, w::FT_U32), field(st, w::FT_ENUM, 0)};
  sd.props = {field(head, w::FT_U16, 0, /*role HEAD_PTR*/ 1, /*pair*/ 2)};
  s.storages.push_back(sd);
  EventDef ed;
  ed.name = ev;
  ed.event_type_id = 0;
  ed.scope_id = 1;
  ed.fields = {field(id, w::FT_U32)};
  s.events.push_back(ed);
  s.summary_fields.push_back(SummaryFieldDef{n, w::FT_U64, 1});
  return s;
}

// small_schema() encoded by hand from §4.1-§4.9 (+ COMPAT 5 for field bytes 4-5).
const std::vector<uint8_t> kSmallSchemaBytes = {
    // §4.1 schema_header_t (12 bytes): enums=1, clocks=1, scopes=2, storages=1,
    // events=1, summary fields=1, string_pool_offset=120 (= 12+8+24+12+40+16+8)
    0x01, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x78, 0x00,
    // §4.9 clock_domain_def_t: name 0 "clk", clock_id 0, period 1000 ps
    0x00, 0x00, 0x00, 0x00, 0xE8, 0x03, 0x00, 0x00,
    // §4.4 scope_def_t 0: name 4 "/", id 0, parent 0xFFFF, protocol none, clock 0, 3 reserved
    0x04, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00,
    // scope 1: name 6 "core", id 1, parent 0, protocol 11 "cpu", clock 0xFF (inherit)
    0x06, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0B, 0x00, 0xFF, 0x00, 0x00, 0x00,
    // §4.5 enum_def_t: name 15 "stg", 2 values, reserved; values {0,res,19 "F"}, {1,res,21 "D"}
    0x0F, 0x00, 0x02, 0x00, 0x00, 0x00, 0x13, 0x00, 0x01, 0x00, 0x15, 0x00,
    // §4.6 storage_def_t: name 23 "ent", id 0, 4 slots, 2 fields, SF_SPARSE, scope 1,
    // 1 property, reserved
    0x17, 0x00, 0x00, 0x00, 0x04, 0x00, 0x02, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
    // §4.3 field_def_t: name 27 "id", FT_U32, enum 0, role 0, pair 0, reserved 2
    0x1B, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
    //   name 30 "st", FT_ENUM, enum_id 0
    0x1E, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00,
    //   property: name 33 "head", FT_U16, enum 0, role 1 (HEAD_PTR), pair_id 2 (COMPAT 5)
    0x21, 0x00, 0x02, 0x00, 0x01, 0x02, 0x00, 0x00,
    // §4.7 event_def_t: name 38 "ev", id 0, 1 field, scope 1; field name 27 "id" (dedup) FT_U32
    0x26, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x1B, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
    // §4.8 summary_field_def_t: name 41 "n", FT_U64, reserved, scope 1, reserved2
    0x29, 0x00, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
    // §1.3 string pool, 43 bytes
    'c', 'l', 'k', 0, '/', 0, 'c', 'o', 'r', 'e', 0, 'c', 'p', 'u', 0, 's', 't', 'g', 0,
    'F', 0, 'D', 0, 'e', 'n', 't', 0, 'i', 'd', 0, 's', 't', 0, 'h', 'e', 'a', 'd', 0,
    'e', 'v', 0, 'n', 0};

void expect_field_eq(const FieldDef &a, const FieldDef &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.enum_id, b.enum_id);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.pair_id, b.pair_id);
}

void expect_fields_eq(const std::vector<FieldDef> &a, const std::vector<FieldDef> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) expect_field_eq(a[i], b[i]);
}

// Compares the definitions (everything but the pool).
void expect_defs_eq(const Schema &a, const Schema &b) {
  ASSERT_EQ(a.clocks.size(), b.clocks.size());
  for (size_t i = 0; i < a.clocks.size(); ++i) {
    EXPECT_EQ(a.clocks[i].name, b.clocks[i].name);
    EXPECT_EQ(a.clocks[i].clock_id, b.clocks[i].clock_id);
    EXPECT_EQ(a.clocks[i].period_ps, b.clocks[i].period_ps);
  }
  ASSERT_EQ(a.scopes.size(), b.scopes.size());
  for (size_t i = 0; i < a.scopes.size(); ++i) {
    EXPECT_EQ(a.scopes[i].name, b.scopes[i].name);
    EXPECT_EQ(a.scopes[i].scope_id, b.scopes[i].scope_id);
    EXPECT_EQ(a.scopes[i].parent_id, b.scopes[i].parent_id);
    EXPECT_EQ(a.scopes[i].protocol, b.scopes[i].protocol);
    EXPECT_EQ(a.scopes[i].clock_id, b.scopes[i].clock_id);
  }
  ASSERT_EQ(a.enums.size(), b.enums.size());
  for (size_t i = 0; i < a.enums.size(); ++i) {
    EXPECT_EQ(a.enums[i].name, b.enums[i].name);
    ASSERT_EQ(a.enums[i].values.size(), b.enums[i].values.size());
    for (size_t j = 0; j < a.enums[i].values.size(); ++j) {
      EXPECT_EQ(a.enums[i].values[j].value, b.enums[i].values[j].value);
      EXPECT_EQ(a.enums[i].values[j].name, b.enums[i].values[j].name);
    }
  }
  ASSERT_EQ(a.storages.size(), b.storages.size());
  for (size_t i = 0; i < a.storages.size(); ++i) {
    const auto &x = a.storages[i], &y = b.storages[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.storage_id, y.storage_id);
    EXPECT_EQ(x.num_slots, y.num_slots);
    EXPECT_EQ(x.flags, y.flags);
    EXPECT_EQ(x.scope_id, y.scope_id);
    expect_fields_eq(x.fields, y.fields);
    expect_fields_eq(x.props, y.props);
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].name, b.events[i].name);
    EXPECT_EQ(a.events[i].event_type_id, b.events[i].event_type_id);
    EXPECT_EQ(a.events[i].scope_id, b.events[i].scope_id);
    expect_fields_eq(a.events[i].fields, b.events[i].fields);
  }
  ASSERT_EQ(a.summary_fields.size(), b.summary_fields.size());
  for (size_t i = 0; i < a.summary_fields.size(); ++i) {
    EXPECT_EQ(a.summary_fields[i].name, b.summary_fields[i].name);
    EXPECT_EQ(a.summary_fields[i].type, b.summary_fields[i].type);
    EXPECT_EQ(a.summary_fields[i].scope_id, b.summary_fields[i].scope_id);
  }
}

}  // namespace

// ── String pool (§1.3) ──

TEST(StringPool, OffsetsFollowInsertionOrderAndDedup) {
  StringPool p;
  EXPECT_EQ(p.insert("alpha"), 0u);
  EXPECT_EQ(p.insert("b"), 6u);
  EXPECT_EQ(p.insert("alpha"), 0u);  // equal strings share one offset
  EXPECT_EQ(p.insert(""), 8u);       // the empty string is one NUL
  EXPECT_EQ(p.insert("b"), 6u);
  EXPECT_EQ(p.insert("ph"), 9u);     // a suffix of "alpha" is a new entry, not a tail share
  EXPECT_EQ(p.bytes(), std::string("alpha\0b\0\0ph\0", 12));
  EXPECT_STREQ(p.at(0), "alpha");
  EXPECT_STREQ(p.at(6), "b");
  EXPECT_STREQ(p.at(8), "");
  EXPECT_STREQ(p.at(2), "pha");  // an offset into the middle of a string is still terminated
  EXPECT_EQ(p.at(12), nullptr);  // past the end
  EXPECT_EQ(p.at(0xFFFF), nullptr);
}

TEST(StringPool, RejectsEmbeddedNul) {
  StringPool p;
  EXPECT_EQ(error_code([&] { p.insert(std::string_view("a\0b", 3)); }),
            USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(p.bytes().empty());
}

TEST(StringPool, LimitIs65535BytesAndFailureLeavesPoolUnchanged) {
  StringPool p;
  // 65,534 characters + NUL = exactly 65,535 bytes: the largest pool allowed.
  const std::string big(65534, 'x');
  EXPECT_EQ(p.insert(big), 0u);
  EXPECT_EQ(p.bytes().size(), 65535u);
  // Even the empty string (1 byte) no longer fits.
  EXPECT_EQ(error_code([&] { p.insert(""); }), USCOPE_ERR_LIMIT);
  EXPECT_EQ(error_code([&] { p.insert("y"); }), USCOPE_ERR_LIMIT);
  EXPECT_EQ(p.bytes().size(), 65535u);
  // A string already present is still found: no growth needed.
  EXPECT_EQ(p.insert(big), 0u);
}

TEST(StringPool, LimitReachedByManySmallStrings) {
  StringPool p;
  // 9,362 distinct 6-char strings take 65,534 bytes; the next 7-byte one must fail.
  uint32_t i = 0;
  char buf[16];
  for (; i < 9362; ++i) {
    std::snprintf(buf, sizeof buf, "%06u", i);
    p.insert(buf);
  }
  ASSERT_EQ(p.bytes().size(), 65534u);
  std::snprintf(buf, sizeof buf, "%06u", i);
  EXPECT_EQ(error_code([&] { p.insert(buf); }), USCOPE_ERR_LIMIT);
  EXPECT_EQ(p.insert(""), 65534u);  // one byte still fits, at the last valid offset
  EXPECT_EQ(p.bytes().size(), 65535u);
}

TEST(StringPool, AssignAddsMissingFinalNul) {
  StringPool p;
  p.assign(std::string("ab\0cd", 5));
  EXPECT_EQ(p.bytes(), std::string("ab\0cd\0", 6));
  EXPECT_STREQ(p.at(3), "cd");
  p.assign("");
  EXPECT_EQ(p.at(0), nullptr);
}

// ── Schema (§4) ──

TEST(SchemaCodec, EncodesSmallSchemaByteForByte) {
  const Schema s = small_schema();
  ASSERT_EQ(s.pool.bytes().size(), 43u);
  const std::vector<uint8_t> got = encode_schema(s);
  EXPECT_EQ(got, kSmallSchemaBytes);
}

TEST(SchemaCodec, PackedSizeSumsFieldSizes) {
  const Schema s = small_schema();
  EXPECT_EQ(packed_size(s.storages[0].fields), 5u);  // U32 + ENUM
  EXPECT_EQ(packed_size(s.storages[0].props), 2u);
  EXPECT_EQ(packed_size({}), 0u);
}

TEST(SchemaCodec, DecodeRoundTrip) {
  const Schema s = small_schema();
  const Schema d = decode_schema(kSmallSchemaBytes.data(), kSmallSchemaBytes.size());
  expect_defs_eq(s, d);
  EXPECT_EQ(d.pool.bytes(), s.pool.bytes());
  EXPECT_STREQ(d.str(d.storages[0].name), "ent");
  EXPECT_STREQ(d.str(d.scopes[1].protocol), "cpu");
  EXPECT_STREQ(d.str(d.storages[0].props[0].name), "head");
  // Encoding the decoded schema gives the same bytes again.
  EXPECT_EQ(encode_schema(d), kSmallSchemaBytes);
}

TEST(SchemaCodec, EmptySchemaIsTwelveBytes) {
  Schema s;
  const auto b = encode_schema(s);
  EXPECT_EQ(b, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0}));
  const Schema d = decode_schema(b.data(), b.size());
  EXPECT_TRUE(d.scopes.empty());
  EXPECT_TRUE(d.pool.bytes().empty());
}

TEST(SchemaCodec, EveryTruncationBeforeThePoolThrows) {
  const size_t pool_off = 120;
  for (size_t n = 0; n < pool_off; ++n) {
    // A copy of exactly n bytes, so a read past it is an overrun the sanitizers catch.
    const std::vector<uint8_t> cut(kSmallSchemaBytes.begin(), kSmallSchemaBytes.begin() + n);
    const uscope_status_t code = error_code([&] { decode_schema(cut.data(), cut.size()); });
    EXPECT_TRUE(code == USCOPE_ERR_TRUNCATED || code == USCOPE_ERR_CORRUPT)
        << "cut to " << n << ": status " << code;
  }
}

TEST(SchemaCodec, TruncationInsideThePoolKeepsDefinitions) {
  // The pool has no length of its own (it runs to the chunk end), so a short
  // pool is not detectable as such; the definitions must still decode intact
  // and lookups past the short pool must give nullptr, not garbage.
  const Schema ref = small_schema();
  for (size_t n = 120; n < kSmallSchemaBytes.size(); ++n) {
    const std::vector<uint8_t> cut(kSmallSchemaBytes.begin(), kSmallSchemaBytes.begin() + n);
    const Schema d = decode_schema(cut.data(), cut.size());
    expect_defs_eq(ref, d);
    EXPECT_EQ(d.str(static_cast<uint16_t>(n - 120 + 1)), nullptr) << n;
  }
}

TEST(SchemaCodec, RejectsInconsistentPoolOffset) {
  auto b = kSmallSchemaBytes;
  w::put_u16(b.data() + 10, 119);  // definitions end at 120
  EXPECT_EQ(error_code([&] { decode_schema(b.data(), b.size()); }), USCOPE_ERR_CORRUPT);
  w::put_u16(b.data() + 10, static_cast<uint16_t>(b.size() + 1));  // past the chunk
  EXPECT_EQ(error_code([&] { decode_schema(b.data(), b.size()); }), USCOPE_ERR_CORRUPT);
}

TEST(SchemaCodec, HostileFieldCountDoesNotAllocate) {
  auto b = kSmallSchemaBytes;
  // storage 0's num_fields is at 12 + 8 + 24 + 12 + 6 = 62.
  w::put_u16(b.data() + 62, 0xFFFF);
  EXPECT_EQ(error_code([&] { decode_schema(b.data(), b.size()); }), USCOPE_ERR_TRUNCATED);
  b = kSmallSchemaBytes;
  b[1] = 0xFF;  // 255 clocks
  const uscope_status_t code = error_code([&] { decode_schema(b.data(), b.size()); });
  EXPECT_TRUE(code == USCOPE_ERR_TRUNCATED || code == USCOPE_ERR_CORRUPT) << code;
}

TEST(SchemaCodec, MutatedPayloadsNeverCrash) {
  // Byte flips anywhere must either decode or throw uscope::Error (never any
  // other exception, never an out-of-bounds read under ASan).
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 4000; ++iter) {
    auto b = kSmallSchemaBytes;
    const int flips = 1 + iter % 4;
    for (int k = 0; k < flips; ++k) b[rng() % 120] = static_cast<uint8_t>(rng());
    b.resize(rng() % (b.size() + 1));
    try {
      decode_schema(b.data(), b.size());
    } catch (const Error &) {
    }
  }
}

TEST(SchemaCodec, EncodeRejectsCountsThatDoNotFitTheirWireField) {
  {
    Schema s;
    s.enums.resize(256);
    EXPECT_EQ(error_code([&] { encode_schema(s); }), USCOPE_ERR_LIMIT);
  }
  {
    Schema s;
    s.clocks.resize(256);
    EXPECT_EQ(error_code([&] { encode_schema(s); }), USCOPE_ERR_LIMIT);
  }
  {
    Schema s;
    s.clocks.resize(255);  // 255 is the largest u8 count
    EXPECT_EQ(encode_schema(s).size(), 12u + 255u * 8u);
  }
  {
    Schema s;
    s.enums.resize(1);
    s.enums[0].values.resize(256);  // num_values is a u8 (§4.5)
    EXPECT_EQ(error_code([&] { encode_schema(s); }), USCOPE_ERR_LIMIT);
  }
  {
    // 8,200 fields * 8 bytes puts the pool past offset 65,535 (§4.1 u16).
    Schema s;
    s.storages.resize(1);
    s.storages[0].fields.resize(8200, field(0, w::FT_U8));
    EXPECT_EQ(error_code([&] { encode_schema(s); }), USCOPE_ERR_LIMIT);
  }
}

TEST(SchemaCodec, MatchesReferenceEmptyTraceSchemaChunk) {
  // 11_empty.uscope (reference C writer): schema chunk header at 64, payload at 72,
  // 87 bytes; DUT chunk header at 48, payload at 56, 8 bytes (see 11_empty.json).
  const auto file = test::read_bytes(kCorpus + "11_empty.uscope");
  ASSERT_EQ(file.size(), 272u);
  Schema s;
  const uint16_t clk = s.pool.insert("clk");
  const uint16_t root = s.pool.insert("root");
  const uint16_t ents = s.pool.insert("ents");
  const uint16_t v = s.pool.insert("v");
  const uint16_t key = s.pool.insert("dut_name");  // DUT strings share the pool (§1.3)
  const uint16_t val = s.pool.insert("empty");
  EXPECT_EQ(key, 16u);
  EXPECT_EQ(val, 25u);
  s.clocks.push_back(ClockDef{clk, 0, 1000});
  s.scopes.push_back(ScopeDef{root, 0, 0xFFFF, 0xFFFF, 0});
  StorageDef sd;
  sd.name = ents;
  sd.num_slots = 8;
  sd.flags = w::SF_SPARSE;
  sd.scope_id = 0;
  sd.fields = {field(v, w::FT_U32)};
  s.storages.push_back(sd);

  const std::vector<uint8_t> ref_schema(file.begin() + 72, file.begin() + 72 + 87);
  EXPECT_EQ(encode_schema(s), ref_schema);
  const std::vector<uint8_t> ref_dut(file.begin() + 56, file.begin() + 64);
  EXPECT_EQ(encode_dut({DutProperty{key, val}}), ref_dut);

  const Schema d = decode_schema(ref_schema.data(), ref_schema.size());
  expect_defs_eq(s, d);
  EXPECT_STREQ(d.str(d.storages[0].name), "ents");
  EXPECT_STREQ(d.str(d.storages[0].fields[0].name), "v");
  const auto props = decode_dut(ref_dut.data(), ref_dut.size());
  ASSERT_EQ(props.size(), 1u);
  EXPECT_STREQ(d.str(props[0].key), "dut_name");
  EXPECT_STREQ(d.str(props[0].value), "empty");
}

// ── DUT descriptor (§3) ──

TEST(DutCodec, EncodesHandComputedBytesAndRoundTrips) {
  const std::vector<DutProperty> props = {{0x0010, 0x0019}, {0x1234, 0xABCD}};
  const auto b = encode_dut(props);
  // §3: num_properties u16, reserved u16, then {key u16, value u16} each.
  EXPECT_EQ(b, (std::vector<uint8_t>{0x02, 0x00, 0x00, 0x00, 0x10, 0x00, 0x19, 0x00, 0x34, 0x12,
                                     0xCD, 0xAB}));
  const auto d = decode_dut(b.data(), b.size());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].key, 0x1234u);
  EXPECT_EQ(d[1].value, 0xABCDu);
  EXPECT_EQ(encode_dut({}), (std::vector<uint8_t>{0, 0, 0, 0}));
  const uint8_t none[4] = {0, 0, 0, 0};
  EXPECT_TRUE(decode_dut(none, 4).empty());
}

TEST(DutCodec, EveryTruncationThrows) {
  const auto b = encode_dut({{1, 2}, {3, 4}});
  for (size_t n = 0; n < b.size(); ++n) {
    const std::vector<uint8_t> cut(b.begin(), b.begin() + n);
    EXPECT_EQ(error_code([&] { decode_dut(cut.data(), cut.size()); }), USCOPE_ERR_TRUNCATED) << n;
  }
}

TEST(DutCodec, TooManyPropertiesIsALimit) {
  std::vector<DutProperty> props(65536);
  EXPECT_EQ(error_code([&] { encode_dut(props); }), USCOPE_ERR_LIMIT);
}
