// Unit tests of src/format/frame_codec: v0.2 interleaved frames (§8.6.6 with
// COMPAT 1: 9-byte compact items), v0.1 frames (§8.6.1-§8.6.4), the per-frame
// compact/wide choice (§8.6.3), cycle splitting, and decode_deltas.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "format/frame_codec.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;
const std::string &kCorpus = uscope::test::kCorpusDir;

// The writer's input form: wide items in call order, with the compact
// decision accumulated exactly as the encoder thread does (op_fits_compact).
struct Items {
  std::vector<uint8_t> buf;
  uint32_t n = 0;
  bool compact = true;
  void op(uint8_t action, uint16_t sid, uint16_t slot, uint16_t field, uint64_t value) {
    const size_t at = buf.size();
    buf.resize(at + w::kWideOpSize);
    put_wide_op(buf.data() + at, action, sid, slot, field, value);
    compact = compact && op_fits_compact(sid, value);
    ++n;
  }
  void event(uint16_t id, const std::vector<uint8_t> &payload) {
    const size_t at = buf.size();
    buf.resize(at + w::kEventItemHeaderSize + payload.size());
    uint8_t *p = buf.data() + at;
    p[0] = w::TAG_EVENT;
    p[1] = 0;
    w::put_u16(p + 2, id);
    w::put_u32(p + 4, static_cast<uint32_t>(payload.size()));
    if (!payload.empty()) std::memcpy(p + 8, payload.data(), payload.size());
    ++n;
  }
  CycleItems view() const { return CycleItems{buf.data(), buf.size(), n, compact}; }
};

struct Rec {
  bool is_event = false;
  uint64_t t = 0;
  DeltaOp op{};
  uint16_t id = 0;
  std::vector<uint8_t> payload;
};

struct Recorder {
  std::vector<uint64_t> frames;
  std::vector<Rec> items;
  void frame(uint64_t t) { frames.push_back(t); }
  void op(uint64_t t, const DeltaOp &o) {
    Rec r;
    r.t = t;
    r.op = o;
    items.push_back(r);
  }
  void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
    Rec r;
    r.is_event = true;
    r.t = t;
    r.id = id;
    r.payload.assign(p, p + n);
    items.push_back(std::move(r));
  }
};

Recorder decode(const std::vector<uint8_t> &blob, uint64_t t0, bool interleaved,
                bool compact_flag) {
  Recorder r;
  decode_deltas(blob.data(), blob.size(), t0, interleaved, compact_flag, r);
  return r;
}

std::vector<uint8_t> encode(FrameFormat fmt, uint64_t dt, const Items &it,
                            uint32_t expect_frames = 1) {
  std::vector<uint8_t> out;
  EXPECT_EQ(encode_cycle(fmt, dt, it.view(), out), expect_frames);
  return out;
}

void expect_op(const Rec &r, uint8_t action, uint16_t sid, uint16_t slot, uint16_t field,
               uint64_t value) {
  ASSERT_FALSE(r.is_event);
  EXPECT_EQ(r.op.action, action);
  EXPECT_EQ(r.op.storage_id, sid);
  EXPECT_EQ(r.op.slot, slot);
  EXPECT_EQ(r.op.field, field);
  EXPECT_EQ(r.op.value, value);
}

// Items in call order decoded back must match what went in.
void expect_items_match(const Items &in, const std::vector<Rec> &out, bool ops_first = false) {
  // Rebuild the call-order list from the input buffer.
  std::vector<Rec> ops, events, all;
  const uint8_t *p = in.buf.data();
  for (uint32_t i = 0; i < in.n; ++i) {
    Rec r;
    if (p[0] == w::TAG_WIDE_OP) {
      r.op = DeltaOp{p[1], w::get_u16(p + 2), w::get_u16(p + 4), w::get_u16(p + 6),
                     w::get_u64(p + 8)};
      p += w::kWideOpSize;
      ops.push_back(r);
    } else {
      r.is_event = true;
      r.id = w::get_u16(p + 2);
      const uint32_t n = w::get_u32(p + 4);
      r.payload.assign(p + 8, p + 8 + n);
      p += 8 + n;
      events.push_back(r);
    }
    all.push_back(r);
  }
  if (ops_first) {
    all = ops;
    all.insert(all.end(), events.begin(), events.end());
  }
  ASSERT_EQ(out.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(out[i].is_event, all[i].is_event) << "item " << i;
    if (all[i].is_event) {
      EXPECT_EQ(out[i].id, all[i].id) << i;
      EXPECT_EQ(out[i].payload, all[i].payload) << i;
    } else {
      expect_op(out[i], all[i].op.action, all[i].op.storage_id, all[i].op.slot, all[i].op.field,
                all[i].op.value);
    }
  }
}

}  // namespace

// ── The compact/wide choice (§8.6.3) ──

TEST(FrameCompactChoice, OpFitsCompactBoundaries) {
  EXPECT_TRUE(op_fits_compact(0, 0));
  EXPECT_TRUE(op_fits_compact(255, 65535));
  EXPECT_FALSE(op_fits_compact(256, 0));
  EXPECT_FALSE(op_fits_compact(0, 65536));
  EXPECT_FALSE(op_fits_compact(0xFFFF, 1));
  // COMPAT 13: a negative value travels sign-extended, so it never fits.
  EXPECT_FALSE(op_fits_compact(0, static_cast<uint64_t>(int64_t{-1})));
}

// ── v0.2 (§8.6.6, COMPAT 1) ──

TEST(FrameV02, CompactOpIsNineBytes) {
  Items it;
  it.op(w::DA_SLOT_SET, 2, 3, 1, 0x1234);
  ASSERT_TRUE(it.compact);
  // LEB128(200) = C8 01; num_items u16; tag 0x02, action, sid_lo, slot u16, field u16, value16.
  EXPECT_EQ(encode(FrameFormat::V02, 200, it),
            (std::vector<uint8_t>{0xC8, 0x01, 0x01, 0x00, 0x02, 0x01, 0x02, 0x03, 0x00, 0x01,
                                  0x00, 0x34, 0x12}));
}

TEST(FrameV02, WideOpIsSixteenBytes) {
  Items it;
  it.op(w::DA_SLOT_ADD, 2, 3, 1, 0x10000);
  ASSERT_FALSE(it.compact);
  // tag 0x01, action, sid u16, slot u16, field u16, value u64.
  EXPECT_EQ(encode(FrameFormat::V02, 0, it),
            (std::vector<uint8_t>{0x00, 0x01, 0x00, 0x01, 0x03, 0x02, 0x00, 0x03, 0x00, 0x01, 0x00,
                                  0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00}));
}

TEST(FrameV02, ChoiceAtValue65535And65536) {
  Items a;
  a.op(w::DA_SLOT_SET, 0, 0, 0, 65535);
  auto b = encode(FrameFormat::V02, 1, a);
  ASSERT_EQ(b.size(), 1u + 2 + 9);
  EXPECT_EQ(b[3], w::TAG_COMPACT_OP);
  EXPECT_EQ(b[10], 0xFF);
  EXPECT_EQ(b[11], 0xFF);

  Items c;
  c.op(w::DA_SLOT_SET, 0, 0, 0, 65536);
  b = encode(FrameFormat::V02, 1, c);
  ASSERT_EQ(b.size(), 1u + 2 + 16);
  EXPECT_EQ(b[3], w::TAG_WIDE_OP);
}

TEST(FrameV02, ChoiceAtStorageId255And256) {
  Items a;
  a.op(w::DA_SLOT_SET, 255, 1, 2, 3);
  auto b = encode(FrameFormat::V02, 1, a);
  ASSERT_EQ(b.size(), 1u + 2 + 9);
  EXPECT_EQ(b[3], w::TAG_COMPACT_OP);
  EXPECT_EQ(b[5], 0xFF);  // storage_id_lo

  Items c;
  c.op(w::DA_SLOT_SET, 256, 1, 2, 3);
  b = encode(FrameFormat::V02, 1, c);
  ASSERT_EQ(b.size(), 1u + 2 + 16);
  EXPECT_EQ(b[3], w::TAG_WIDE_OP);
  EXPECT_EQ(w::get_u16(b.data() + 5), 256u);
  const Recorder r = decode(b, 0, true, false);
  ASSERT_EQ(r.items.size(), 1u);
  expect_op(r.items[0], w::DA_SLOT_SET, 256, 1, 2, 3);
}

TEST(FrameV02, OneWideOpMakesTheWholeFrameWide) {
  Items it;
  it.op(w::DA_SLOT_SET, 1, 0, 0, 5);
  it.op(w::DA_SLOT_SET, 1, 1, 0, 70000);
  it.op(w::DA_SLOT_CLEAR, 1, 2, 0, 0);
  const auto b = encode(FrameFormat::V02, 10, it);
  ASSERT_EQ(b.size(), 1u + 2 + 3 * 16);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b[3 + 16 * i], w::TAG_WIDE_OP) << i;
}

TEST(FrameV02, EventsInterleavedInCallOrder) {
  Items it;
  it.op(w::DA_SLOT_SET, 0, 1, 0, 0xAB);
  it.event(7, {0x11, 0x22, 0x33});
  it.op(w::DA_SLOT_CLEAR, 0, 1, 0, 0);
  it.event(0x0102, {});
  const auto b = encode(FrameFormat::V02, 1000, it);
  const std::vector<uint8_t> expect = {
      0xE8, 0x07,                                            // LEB128(1000)
      0x04, 0x00,                                            // 4 items
      0x02, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0xAB, 0x00,  // compact SET
      0x03, 0x00, 0x07, 0x00, 0x03, 0x00, 0x00, 0x00,        // event 7, 3 bytes
      0x11, 0x22, 0x33,
      0x02, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,  // compact CLEAR
      0x03, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00};       // event 0x102, empty
  EXPECT_EQ(b, expect);
  const Recorder r = decode(b, 5000, true, false);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{6000}));
  expect_items_match(it, r.items);
  for (const auto &rec : r.items) EXPECT_EQ(rec.t, 6000u);
}

TEST(FrameV02, EmptyFrame) {
  Items it;
  EXPECT_EQ(encode(FrameFormat::V02, 0, it), (std::vector<uint8_t>{0x00, 0x00, 0x00}));
  EXPECT_EQ(encode(FrameFormat::V02, 128, it), (std::vector<uint8_t>{0x80, 0x01, 0x00, 0x00}));
  std::vector<uint8_t> blob = encode(FrameFormat::V02, 0, it);
  const auto more = encode(FrameFormat::V02, 128, it);
  blob.insert(blob.end(), more.begin(), more.end());
  const Recorder r = decode(blob, 10, true, false);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{10, 138}));
  EXPECT_TRUE(r.items.empty());
}

TEST(FrameV02, AppendsToExistingOutput) {
  Items it;
  it.op(w::DA_SLOT_SET, 0, 0, 0, 1);
  std::vector<uint8_t> out = {0xAA, 0xBB};
  encode_cycle(FrameFormat::V02, 1, it.view(), out);
  ASSERT_EQ(out.size(), 2u + 1 + 2 + 9);
  EXPECT_EQ(out[0], 0xAA);
  EXPECT_EQ(out[1], 0xBB);
  EXPECT_EQ(out[2], 0x01);
}

namespace {
// n items with an event every 7th item, so that a split must measure
// variable-size items.
Items many_items(uint32_t n, bool wide) {
  Items it;
  for (uint32_t i = 0; i < n; ++i) {
    if (i % 7 == 3)
      it.event(static_cast<uint16_t>(i & 0xFF),
               {static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8)});
    else
      it.op(w::DA_SLOT_SET, static_cast<uint16_t>(i % 4), static_cast<uint16_t>(i), 0,
            wide && i == 0 ? 0x1'0000'0000ull : i & 0xFFFF);
  }
  return it;
}
}  // namespace

TEST(FrameSplit, ExactlyMaxItemsIsOneFrame) {
  const Items it = many_items(65535, false);
  const auto b = encode(FrameFormat::V02, 3, it, 1);
  EXPECT_EQ(w::get_u16(b.data() + 1), 0xFFFFu);
  const Recorder r = decode(b, 0, true, false);
  EXPECT_EQ(r.frames.size(), 1u);
  expect_items_match(it, r.items);
}

TEST(FrameSplit, MaxPlusOneIsTwoFrames) {
  const Items it = many_items(65536, false);
  const auto b = encode(FrameFormat::V02, 3, it, 2);
  const Recorder r = decode(b, 100, true, false);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{103, 103}));
  expect_items_match(it, r.items);
}

TEST(FrameSplit, SeventyThousandItemsSplitWithSecondDeltaZero) {
  for (bool wide : {false, true}) {
    const Items it = many_items(70000, wide);
    ASSERT_EQ(it.compact, !wide);
    const auto b = encode(FrameFormat::V02, 1000, it, 2);
    // First frame: LEB(1000) = 2 bytes, count 65535.
    EXPECT_EQ(w::get_u16(b.data() + 2), 65535u);
    const Recorder r = decode(b, 0, true, false);
    EXPECT_EQ(r.frames, (std::vector<uint64_t>{1000, 1000}));  // the second frame has delta 0
    expect_items_match(it, r.items);
    // Locate the second frame: it starts with LEB128(0) and a count of 4,465.
    size_t first_ops = 0, first_events = 0;
    for (uint32_t i = 0; i < 65535; ++i) (i % 7 == 3 ? first_events : first_ops)++;
    const size_t op_size = wide ? 16 : 9;
    const size_t second = 2 + 2 + first_ops * op_size + first_events * (8 + 2);
    ASSERT_LT(second + 3, b.size());
    EXPECT_EQ(b[second], 0x00);
    EXPECT_EQ(w::get_u16(b.data() + second + 1), 70000u - 65535u);
  }
}

// v0.1 (docs/compat.md): a frame counts its ops and its events in two u16s
// (§8.6.1), and the items of one time are written ops first, then events -
// the order the reference reader yields - so frames split on the ops and
// only the last ops frame and those after it carry events.
// n items of many_items, in the order a v0.1 encoding must yield them.
void expect_v01_order(uint32_t n, const std::vector<Rec> &got) {
  ASSERT_EQ(got.size(), n);
  size_t k = 0;
  for (int events = 0; events < 2; ++events)
    for (uint32_t i = 0; i < n; ++i) {
      if ((i % 7 == 3) != (events == 1)) continue;
      const Rec &r = got[k++];
      ASSERT_EQ(r.is_event, events == 1) << "item " << k - 1;
      if (events) EXPECT_EQ(r.payload[0], static_cast<uint8_t>(i)) << "item " << k - 1;
      else EXPECT_EQ(r.op.slot, static_cast<uint16_t>(i)) << "item " << k - 1;
    }
}

TEST(FrameSplit, V01OpsAndEventsEachUpTo65535InOneFrame) {
  // 70,000 items: 60,000 ops and 10,000 events fit one v0.1 frame.
  const Items it = many_items(70000, false);
  const auto b = encode(FrameFormat::V01, 5, it, 1);
  const Recorder r = decode(b, 0, false, true);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{5}));
  expect_v01_order(70000, r.items);
}

TEST(FrameSplit, V01SplitPutsEveryOpBeforeAnyEvent) {
  // 80,000 items: 68,571 ops (more than one frame holds) and 11,429 events.
  const Items it = many_items(80000, false);
  const auto b = encode(FrameFormat::V01, 5, it, 2);
  const Recorder r = decode(b, 0, false, true);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{5, 5}));
  // The first frame: 65,535 ops and no event; the second: the other ops, then every event.
  EXPECT_EQ(w::get_u16(b.data() + 1 + 2), 65535u);
  EXPECT_EQ(w::get_u16(b.data() + 1 + 4), 0u);
  expect_v01_order(80000, r.items);
}

// ── v0.1 (§8.6.1-§8.6.4) ──

TEST(FrameV01, CompactFrameOpsBeforeEvents) {
  Items it;
  it.event(9, {0xEE});
  it.op(w::DA_SLOT_SET, 3, 4, 5, 0x0607);
  it.event(10, {});
  it.op(w::DA_SLOT_CLEAR, 3, 4, 0, 0);
  const auto b = encode(FrameFormat::V01, 200, it);
  const std::vector<uint8_t> expect = {
      0xC8, 0x01,                                      // LEB128(200)
      0x01, 0x00, 0x02, 0x00, 0x02, 0x00,              // op_format 1, reserved, 2 ops, 2 events
      // §8.6.3 compact ops: action, sid_lo, slot, field, value16
      0x01, 0x03, 0x04, 0x00, 0x05, 0x00, 0x07, 0x06,
      0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xEE,  // §8.6.4: id, reserved, size, payload
      0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(b, expect);
  const Recorder r = decode(b, 0, false, true);
  expect_items_match(it, r.items, /*ops_first=*/true);
}

TEST(FrameV01, WideFrameHasOpFormatZero) {
  Items it;
  it.op(w::DA_PROP_SET, 300, 0, 2, 0x123456789ull);
  it.event(1, {0x01, 0x02});
  const auto b = encode(FrameFormat::V01, 1, it);
  const std::vector<uint8_t> expect = {
      0x01,                                // LEB128(1)
      0x00, 0x00, 0x01, 0x00, 0x01, 0x00,  // op_format 0 (wide), reserved, 1 op, 1 event
      // §8.6.2 delta_op_t: action, reserved, sid u16, slot, field, value u64
      0x04, 0x00, 0x2C, 0x01, 0x00, 0x00, 0x02, 0x00,
      0x89, 0x67, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00,
      0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x02};
  EXPECT_EQ(b, expect);
  // The wide form decodes whether or not F_COMPACT_DELTAS is set.
  for (bool flag : {false, true}) {
    const Recorder r = decode(b, 0, false, flag);
    ASSERT_EQ(r.items.size(), 2u);
    expect_op(r.items[0], w::DA_PROP_SET, 300, 0, 2, 0x123456789ull);
    EXPECT_EQ(r.items[1].payload, (std::vector<uint8_t>{1, 2}));
  }
}

TEST(FrameV01, EmptyFrameIsSixBytesAfterTheDelta) {
  Items it;
  const auto b = encode(FrameFormat::V01, 0, it);
  ASSERT_EQ(b.size(), 7u);
  EXPECT_EQ(b[0], 0x00);
  // §8.6.3: compact when every op fits, which holds vacuously for no ops
  // (the Rust writer's `ops().all(..)` decides the same way).
  EXPECT_EQ(b[1], w::kOpFormatCompact);
  EXPECT_EQ(b[2], 0x00);  // reserved
  EXPECT_EQ(w::get_u16(b.data() + 3), 0u);
  EXPECT_EQ(w::get_u16(b.data() + 5), 0u);
  const Recorder r = decode(b, 77, false, true);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{77}));
  EXPECT_TRUE(r.items.empty());
}

TEST(FrameV01, CompactOpFormatIgnoredWithoutFlag) {
  // §8.6.1: op_format is meaningful only with F_COMPACT_DELTAS; without it a
  // reader treats ops as wide. A 16-byte op with op_format 1 decodes as wide.
  std::vector<uint8_t> b = {0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
                            0x01, 0x00, 0x05, 0x00, 0x06, 0x00, 0x07, 0x00,
                            0x08, 0, 0, 0, 0, 0, 0, 0};
  const Recorder r = decode(b, 0, false, false);
  ASSERT_EQ(r.items.size(), 1u);
  expect_op(r.items[0], w::DA_SLOT_SET, 5, 6, 7, 8);
}

// ── decode_deltas errors ──

TEST(FrameDecode, EveryTruncationOfAFrameIsCorrupt) {
  Items it;
  it.op(w::DA_SLOT_SET, 1, 2, 3, 4);
  it.event(5, {1, 2, 3, 4});
  it.op(w::DA_SLOT_SET, 1, 2, 3, 0x1'0000'0000ull);  // forces wide
  Items compact;
  compact.op(w::DA_SLOT_SET, 1, 2, 3, 4);
  compact.event(5, {1, 2, 3, 4});
  struct Case {
    FrameFormat fmt;
    const Items *items;
    bool interleaved;
  } cases[] = {{FrameFormat::V02, &it, true}, {FrameFormat::V02, &compact, true},
               {FrameFormat::V01, &it, false}, {FrameFormat::V01, &compact, false}};
  for (const auto &c : cases) {
    const auto b = encode(c.fmt, 300, *c.items);  // 2-byte LEB128, so the cut can split it
    for (size_t n = 1; n < b.size(); ++n) {
      const std::vector<uint8_t> cut(b.begin(), b.begin() + n);
      EXPECT_EQ(error_code([&] { decode(cut, 0, c.interleaved, true); }), USCOPE_ERR_CORRUPT)
          << "format " << int(c.fmt) << " cut to " << n;
    }
  }
}

TEST(FrameDecode, EmptyBlobHasNoFrames) {
  const Recorder r = decode({}, 0, true, false);
  EXPECT_TRUE(r.frames.empty());
}

TEST(FrameDecode, UnknownTagIsCorrupt) {
  for (uint8_t tag : {0x00, 0x04, 0x80, 0xFF}) {
    std::vector<uint8_t> b = {0x00, 0x01, 0x00, tag};  // delta 0, 1 item, then the tag
    b.resize(b.size() + 15, 0);
    EXPECT_EQ(error_code([&] { decode(b, 0, true, false); }), USCOPE_ERR_CORRUPT) << int(tag);
  }
}

TEST(FrameDecode, BadLebAndOversizedPayloadAreCorrupt) {
  std::vector<uint8_t> leb(11, 0x80);
  leb.push_back(0x00);
  EXPECT_EQ(error_code([&] { decode(leb, 0, true, false); }), USCOPE_ERR_CORRUPT);
  EXPECT_EQ(error_code([&] { decode(leb, 0, false, false); }), USCOPE_ERR_CORRUPT);
  // An event claiming 4 GiB of payload must fail cleanly, not read past the blob.
  const std::vector<uint8_t> ev = {0x00, 0x01, 0x00, 0x03, 0x00, 0x01, 0x00,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0x00};
  EXPECT_EQ(error_code([&] { decode(ev, 0, true, false); }), USCOPE_ERR_CORRUPT);
  // v0.1: more ops claimed than present.
  const std::vector<uint8_t> v01 = {0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00};
  EXPECT_EQ(error_code([&] { decode(v01, 0, false, false); }), USCOPE_ERR_CORRUPT);
}

TEST(FrameDecode, TimeAccumulatesAcrossFrames) {
  std::vector<uint8_t> blob;
  Items a;
  a.op(w::DA_SLOT_ADD, 0, 0, 0, 1);
  for (uint64_t dt : {uint64_t{0}, uint64_t{1}, uint64_t{16384}, uint64_t{1} << 40})
    encode_cycle(FrameFormat::V02, dt, a.view(), blob);
  const Recorder r = decode(blob, 1000, true, false);
  EXPECT_EQ(r.frames, (std::vector<uint64_t>{1000, 1001, 17385, 17385 + (uint64_t{1} << 40)}));
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.items[3].t, 17385 + (uint64_t{1} << 40));
}

// ── Real files: our encoder reproduces the reference writers' delta blobs ──

namespace {
// Decode every frame of a segment's blob, re-encode each with encode_cycle and
// compare with the original bytes.
void reencode_file(const char *name) {
  SCOPED_TRACE(name);
  const test::TraceFile tf = test::read_trace_file(kCorpus + name);
  ASSERT_FALSE(tf.segments.empty());
  const bool interleaved = tf.header.flags & w::F_INTERLEAVED_DELTAS;
  const bool compact_flag = tf.header.flags & w::F_COMPACT_DELTAS;
  const FrameFormat fmt = interleaved ? FrameFormat::V02 : FrameFormat::V01;
  size_t frames_checked = 0;
  for (const auto &seg : tf.segments) {
    struct Collect {
      std::vector<uint64_t> times;
      std::vector<Items> frames;
      void frame(uint64_t t) {
        times.push_back(t);
        frames.emplace_back();
      }
      void op(uint64_t, const DeltaOp &o) {
        frames.back().op(o.action, o.storage_id, o.slot, o.field, o.value);
      }
      void event(uint64_t, uint16_t id, const uint8_t *p, uint32_t n) {
        frames.back().event(id, std::vector<uint8_t>(p, p + n));
      }
    } c;
    decode_deltas(seg.deltas.data(), seg.deltas.size(), seg.header.time_start_ps, interleaved,
                  compact_flag, c);
    EXPECT_EQ(c.frames.size(), seg.header.num_frames);
    std::vector<uint8_t> again;
    uint64_t prev = seg.header.time_start_ps;
    for (size_t i = 0; i < c.frames.size(); ++i) {
      Items &it = c.frames[i];
      if (!interleaved && !compact_flag) it.compact = false;  // op_format must be 0 (§8.6.1)
      encode_cycle(fmt, c.times[i] - prev, it.view(), again);
      prev = c.times[i];
    }
    frames_checked += c.frames.size();
    ASSERT_EQ(again.size(), seg.deltas.size()) << "segment at " << seg.offset;
    ASSERT_TRUE(again == seg.deltas) << "segment at " << seg.offset;
  }
  EXPECT_GT(frames_checked, 0u);
}
}  // namespace

TEST(FrameReference, V02FilesReencodeByteIdentically) {
  reencode_file("01_tiny.uscope");
  reencode_file("05_events_all_types.uscope");
  reencode_file("06_wide_compact.uscope");
  reencode_file("12_boundary.uscope");
}

TEST(FrameReference, V01FilesReencodeByteIdentically) {
  reencode_file("23_rust_v01_wide.uscope");
  reencode_file("24_rust_v01_compact.uscope");
}
