// Unit tests of src/format/compress: delta-blob compression (§8.6.7) with
// the 4-byte little-endian uncompressed-size prefix of COMPAT 2.
#include <gtest/gtest.h>

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "format/compress.hpp"
#include "support/test_util.hpp"
#include "base/error.hpp"
#include "format/wire.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;

// The cases below take the table's rows by pointer.
using Codec = const CompressionMethod *;
const Codec kLz4 = compression_by_name("lz4");
const Codec kZstd = compression_by_name("zstd");
const Codec kNone = compression_by_name("none");

// Delta-blob-like data: repetitive frames with some noise, so compression
// has something to find but is not trivial.
std::vector<uint8_t> sample(size_t n, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (i % 13 < 9) ? static_cast<uint8_t>(i % 13) : static_cast<uint8_t>(rng());
  return v;
}

struct CodecCase {
  Codec codec;
  int level;
  const char *name;
};
const CodecCase kCodecs[] = {{kLz4, 0, "lz4"},
                             {kLz4, 9, "lz4hc-9"},
                             {kZstd, 0, "zstd"},
                             {kZstd, 19, "zstd-19"},
                             {kNone, 0, "none"}};

}  // namespace

TEST(Compress, RoundTripEveryCodecIncludingEmpty) {
  for (const auto &c : kCodecs) {
    Compressor comp(*c.codec, c.level);
    EXPECT_EQ(&comp.method(), c.codec);
    for (size_t n : {size_t{0}, size_t{1}, size_t{13}, size_t{4096}, size_t{1} << 20}) {
      const auto in = sample(n);
      std::vector<uint8_t> blob, out;
      blob.resize(comp.compress(in.data(), in.size(), blob));
      decompress(*c.codec, blob.data(), blob.size(), n, out);
      EXPECT_EQ(out, in) << c.name << " n=" << n;
    }
  }
}

TEST(Compress, CompressedBlobsStartWithTheUncompressedSize) {
  for (const auto &c : kCodecs) {
    if (c.codec == kNone) continue;
    Compressor comp(*c.codec, c.level);
    for (size_t n : {size_t{0}, size_t{300}, size_t{70000}}) {
      const auto in = sample(n, 7);
      std::vector<uint8_t> blob;
      blob.resize(comp.compress(in.data(), in.size(), blob));
      ASSERT_GE(blob.size(), 4u) << c.name;
      EXPECT_EQ(w::get_u32(blob.data()), n) << c.name;  // COMPAT 2: LE u32 prefix
      if (n == 70000) {
        EXPECT_LT(blob.size(), n) << c.name << " should compress repetitive data";
      }
    }
  }
}

TEST(Compress, Lz4BlobIsOneRawBlockAfterThePrefix) {
  // COMPAT 2: what follows the prefix is a plain LZ4 block (not a frame), as
  // the reference reader decodes it; check with liblz4 directly.
  for (int level : {0, 9}) {
    Compressor comp(*kLz4, level);
    const auto in = sample(10000, 3);
    std::vector<uint8_t> blob;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    std::vector<uint8_t> out(in.size());
    const int r = LZ4_decompress_safe(
        reinterpret_cast<const char *>(blob.data() + 4), reinterpret_cast<char *>(out.data()),
        static_cast<int>(blob.size() - 4), static_cast<int>(out.size()));
    ASSERT_EQ(r, static_cast<int>(in.size())) << "level " << level;
    EXPECT_EQ(out, in);
  }
}

TEST(Compress, ZstdBlobIsOneFrameAfterThePrefix) {
  Compressor comp(*kZstd, 0);
  const auto in = sample(10000, 4);
  std::vector<uint8_t> blob;
  blob.resize(comp.compress(in.data(), in.size(), blob));
  EXPECT_EQ(ZSTD_getFrameContentSize(blob.data() + 4, blob.size() - 4), in.size());
  EXPECT_EQ(ZSTD_findFrameCompressedSize(blob.data() + 4, blob.size() - 4), blob.size() - 4);
}

TEST(Compress, NoneIsACopyWithoutPrefix) {
  Compressor comp(*kNone, 0);
  const std::vector<uint8_t> in = {1, 2, 3};
  std::vector<uint8_t> blob = {9, 9, 9, 9, 9, 9};  // replaced, not appended to
  blob.resize(comp.compress(in.data(), in.size(), blob));
  EXPECT_EQ(blob, in);
}

TEST(Compress, ReusedCompressorAndOutputStayCorrect) {
  // The writer reuses one Compressor and one output vector per segment.
  for (const auto &c : kCodecs) {
    Compressor comp(*c.codec, c.level);
    std::vector<uint8_t> blob, out;
    for (uint32_t i = 0; i < 6; ++i) {
      const auto in = sample(i % 2 ? 50000 : 77, i);  // big, small, big: shrinking outputs too
      blob.resize(comp.compress(in.data(), in.size(), blob));
      decompress(*c.codec, blob.data(), blob.size(), in.size(), out);
      ASSERT_EQ(out, in) << c.name << " round " << i;
    }
  }
}

TEST(Decompress, RejectsWrongPrefix) {
  for (Codec codec : {kLz4, kZstd}) {
    Compressor comp(*codec, 0);
    const auto in = sample(5000, 5);
    std::vector<uint8_t> blob, out;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    for (uint32_t claimed : {uint32_t{0}, uint32_t{4999}, uint32_t{5001}, uint32_t{100000}}) {
      auto bad = blob;
      w::put_u32(bad.data(), claimed);
      EXPECT_EQ(error_code([&] { decompress(*codec, bad.data(), bad.size(), 1u << 20, out); }),
                USCOPE_ERR_CORRUPT)
          << codec->name << " claimed " << claimed;
    }
    // A prefix above the caller's limit is refused before any allocation.
    auto huge = blob;
    w::put_u32(huge.data(), 0xFFFFFFFFu);
    EXPECT_EQ(error_code([&] { decompress(*codec, huge.data(), huge.size(), 1u << 20, out); }),
              USCOPE_ERR_CORRUPT);
    EXPECT_EQ(error_code([&] { decompress(*codec, blob.data(), blob.size(), 4999, out); }),
              USCOPE_ERR_CORRUPT);
    decompress(*codec, blob.data(), blob.size(), 5000, out);  // the limit itself is allowed
    EXPECT_EQ(out, in);
  }
}

TEST(Decompress, RejectsMissingPrefixAndCorruptBlocks) {
  std::vector<uint8_t> out;
  for (Codec codec : {kLz4, kZstd}) {
    const uint8_t tiny[3] = {1, 0, 0};
    EXPECT_EQ(error_code([&] { decompress(*codec, tiny, 3, 100, out); }), USCOPE_ERR_CORRUPT);
    EXPECT_EQ(error_code([&] { decompress(*codec, tiny, 0, 100, out); }), USCOPE_ERR_CORRUPT);

    Compressor comp(*codec, 0);
    const auto in = sample(8000, 6);
    std::vector<uint8_t> blob;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    // Every truncation of the block is refused.
    for (size_t n = 4; n < blob.size(); n += (n < 64 ? 1 : 97)) {
      EXPECT_EQ(error_code([&] { decompress(*codec, blob.data(), n, 1u << 20, out); }),
                USCOPE_ERR_CORRUPT)
          << codec->name << " cut to " << n;
    }
    // Garbage after a valid prefix.
    std::vector<uint8_t> junk(64, 0xFF);
    w::put_u32(junk.data(), 1000);
    EXPECT_EQ(error_code([&] { decompress(*codec, junk.data(), junk.size(), 1u << 20, out); }),
              USCOPE_ERR_CORRUPT)
        << codec->name;
  }
  // zstd: a damaged frame magic.
  Compressor z(*kZstd, 0);
  const auto in = sample(1000, 8);
  std::vector<uint8_t> blob;
  blob.resize(z.compress(in.data(), in.size(), blob));
  blob[4] ^= 0xFF;
  EXPECT_EQ(error_code([&] { decompress(*kZstd, blob.data(), blob.size(), 1u << 20, out); }),
            USCOPE_ERR_CORRUPT);
}

TEST(Decompress, RandomCorruptionNeverCrashes) {
  // Flipped bytes must either decode to exactly the claimed size or throw
  // Error(CORRUPT); LZ4_decompress_safe / ZSTD never write past the buffer.
  std::mt19937 rng(99);
  for (Codec codec : {kLz4, kZstd}) {
    Compressor comp(*codec, 0);
    const auto in = sample(3000, 9);
    std::vector<uint8_t> blob, out;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    for (int i = 0; i < 500; ++i) {
      auto bad = blob;
      bad[4 + rng() % (bad.size() - 4)] ^= static_cast<uint8_t>(1 + rng() % 255);
      try {
        decompress(*codec, bad.data(), bad.size(), 1u << 20, out);
        EXPECT_EQ(out.size(), in.size());
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), USCOPE_ERR_CORRUPT);
      }
    }
  }
}

// ── decompress_prefix: only the start of a blob (reader's state_at and
// events_in_range, §8.6.7) ──

namespace {

constexpr size_t kZstdBlock = size_t{1} << 17;  // ZSTD_BLOCKSIZE_MAX: 128 KiB
constexpr uint8_t kUntouched = 0xA5;

// Incompressible: zstd stores raw blocks, LZ4 literals only.
std::vector<uint8_t> noise(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto &b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> compress_blob(Codec codec, int level, const std::vector<uint8_t> &in) {
  Compressor comp(*codec, level);
  std::vector<uint8_t> blob;
  blob.resize(comp.compress(in.data(), in.size(), blob));
  return blob;
}

// Prefix-decodes blob (of `in`) into a buffer of exactly in.size() bytes, so
// that ASan sees any write past raw, and checks the contract: at least want
// valid bytes, equal to the input's, no byte written past the count (zstd),
// and (zstd) no more than one 128 KiB block past want.
void check_prefix(Codec codec, const std::vector<uint8_t> &blob, const std::vector<uint8_t> &in,
                  size_t want, const std::string &what) {
  const size_t raw = in.size();
  std::vector<uint8_t> out(raw, kUntouched);
  const size_t got = decompress_prefix(*codec, blob.data(), blob.size(), raw, want, out.data());
  SCOPED_TRACE(what + " raw=" + std::to_string(raw) + " want=" + std::to_string(want) +
               " got=" + std::to_string(got));
  ASSERT_GE(got, std::min(want, raw));
  ASSERT_LE(got, raw);
  ASSERT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(got), in.begin()));
  if (codec == kZstd) {
    if (want < raw) {
      EXPECT_LE(got, want + kZstdBlock);
    }
    EXPECT_TRUE(std::all_of(out.begin() + static_cast<ptrdiff_t>(got), out.end(),
                            [](uint8_t b) { return b == kUntouched; }));
  }
}

// Around zstd's block boundaries and the ends; those above raw mean raw.
std::vector<size_t> wants_for(size_t raw) {
  return {0, 1, 2, 100, 4095, 4096, kZstdBlock - 1, kZstdBlock, kZstdBlock + 1,
          2 * kZstdBlock - 1, 2 * kZstdBlock, 2 * kZstdBlock + 1, 1000000,
          raw / 3, raw / 2, raw - 1, raw, raw + 1};
}

// The frame-header bytes of a zstd frame of `raw` bytes made of one RLE block
// (RFC 8878 §3.1.1): not single-segment, a 4-byte content size, and the
// given window log.
std::vector<uint8_t> rle_frame_blob(uint32_t raw, unsigned window_log, bool declare_size) {
  std::vector<uint8_t> b(4);
  w::put_u32(b.data(), raw);  // COMPAT 2 size prefix
  for (uint8_t m : {0x28, 0xB5, 0x2F, 0xFD}) b.push_back(m);
  b.push_back(declare_size ? 0x80 : 0x00);  // FCS flag 2 (4 bytes) or none
  b.push_back(static_cast<uint8_t>((window_log - 10) << 3));
  if (declare_size) {
    b.resize(b.size() + 4);
    w::put_u32(b.data() + b.size() - 4, raw);
  }
  const uint32_t bh = 1u | (1u << 1) | (raw << 3);  // last block, RLE, size raw
  b.push_back(static_cast<uint8_t>(bh));
  b.push_back(static_cast<uint8_t>(bh >> 8));
  b.push_back(static_cast<uint8_t>(bh >> 16));
  b.push_back(0x5C);  // the repeated byte
  return b;
}

}  // namespace

TEST(DecompressPrefix, ReturnsTheInputsPrefixForManyWants) {
  const size_t sizes[] = {1, 1000, kZstdBlock, kZstdBlock + 1, 300000, (size_t{3} << 19) + 123};
  for (Codec codec : {kZstd, kLz4}) {
    for (size_t n : sizes) {
      for (int kind = 0; kind < 2; ++kind) {
        const auto in = kind ? noise(n, 21) : sample(n, 22);
        for (int level : {0, 9}) {
          if (level && n > 300000) continue;  // high levels: small inputs only (time)
          const auto blob = compress_blob(codec, level, in);
          const std::string what = std::string(codec == kZstd ? "zstd" : "lz4") + "-" +
                                   std::to_string(level) + (kind ? " noise" : " sample");
          for (size_t want : wants_for(n)) check_prefix(codec, blob, in, want, what);
        }
      }
    }
  }
}

TEST(DecompressPrefix, ZstdMultiBlockFramesAtHighLevel) {
  // Level 19 makes different blocks (and a larger window) than the default.
  const auto in = sample(1u << 20, 23);
  const auto blob = compress_blob(kZstd, 19, in);
  for (size_t want : wants_for(in.size())) check_prefix(kZstd, blob, in, want, "zstd-19");
}

TEST(DecompressPrefix, EmptyBlob) {
  for (Codec codec : {kZstd, kLz4, kNone}) {
    const auto blob = compress_blob(codec, 0, {});
    uint8_t dummy = kUntouched;
    EXPECT_EQ(decompress_prefix(*codec, blob.data(), blob.size(), 0, 0, &dummy), 0u);
    EXPECT_EQ(decompress_prefix(*codec, blob.data(), blob.size(), 0, 10, &dummy), 0u);
    EXPECT_EQ(dummy, kUntouched);
  }
}

TEST(DecompressPrefix, ZstdStopsEarly) {
  // The behaviour a state_at early in a segment relies on: a small want
  // decodes about one block of a 4 MiB blob, not all of it.
  const size_t raw = size_t{4} << 20;
  for (int kind = 0; kind < 2; ++kind) {
    const auto in = kind ? noise(raw, 24) : sample(raw, 25);
    const auto blob = compress_blob(kZstd, 0, in);
    std::vector<uint8_t> out(raw, kUntouched);
    size_t got = decompress_prefix(*kZstd, blob.data(), blob.size(), raw, 1000, out.data());
    EXPECT_GE(got, 1000u);
    EXPECT_LE(got, kZstdBlock) << "kind " << kind;  // well below raw: one block
    EXPECT_EQ(out[raw - 1], kUntouched);
    got = decompress_prefix(*kZstd, blob.data(), blob.size(), raw, raw / 2, out.data());
    EXPECT_GE(got, raw / 2);
    EXPECT_LE(got, raw / 2 + kZstdBlock);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(got), in.begin()));
    // want == raw: the whole frame, checked.
    EXPECT_EQ(decompress_prefix(*kZstd, blob.data(), blob.size(), raw, raw, out.data()), raw);
    EXPECT_EQ(out, in);
  }
}

TEST(DecompressPrefix, ZstdTruncatedOrCutShortThrowsCorrupt) {
  const auto in = sample(600000, 26);  // 5 blocks
  const auto blob = compress_blob(kZstd, 0, in);
  const size_t raw = in.size();
  std::vector<uint8_t> out(raw);
  for (size_t n = 0; n < blob.size(); n += (n < 64 ? 1 : 331)) {
    SCOPED_TRACE("cut to " + std::to_string(n));
    // The whole frame is needed: every cut is refused.
    EXPECT_EQ(error_code([&] { decompress_prefix(*kZstd, blob.data(), n, raw, raw, out.data()); }),
              USCOPE_ERR_CORRUPT);
    // A prefix: refused unless the cut is past what it needs, and then right.
    for (size_t want : {size_t{1}, size_t{200000}, raw - 1}) {
      try {
        const size_t got = decompress_prefix(*kZstd, blob.data(), n, raw, want, out.data());
        ASSERT_GE(got, want);
        ASSERT_LE(got, raw);
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(got), in.begin()));
        EXPECT_GT(n, 4 + 6 + 3) << "decoded " << got << " bytes without a frame header";
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), USCOPE_ERR_CORRUPT) << e.what();
      }
    }
  }
  // After all those failures mid-frame, the thread's context still works.
  check_prefix(kZstd, blob, in, 1, "after failures");
  check_prefix(kZstd, blob, in, raw / 2, "after failures");
}

TEST(DecompressPrefix, ZstdRejectsAFrameOfAnotherSize) {
  // The size prefix says raw but the frame declares (and holds) another size:
  // refused on the prefix path and on the full path, as by decompress().
  const size_t raw = 300000;
  for (size_t other : {raw - 1000, raw + 1000, size_t{0}}) {
    auto blob = compress_blob(kZstd, 0, sample(other, 27));
    w::put_u32(blob.data(), static_cast<uint32_t>(raw));
    std::vector<uint8_t> out(raw);
    for (size_t want : {size_t{0}, size_t{1}, size_t{150000}, raw}) {
      EXPECT_EQ(error_code([&] {
                  decompress_prefix(*kZstd, blob.data(), blob.size(), raw, want, out.data());
                }),
                USCOPE_ERR_CORRUPT)
          << "frame of " << other << " want " << want;
    }
  }
  // And a size prefix other than raw.
  const auto in = sample(raw, 28);
  const auto blob = compress_blob(kZstd, 0, in);
  std::vector<uint8_t> out(raw + 10);
  EXPECT_EQ(error_code([&] {
              decompress_prefix(*kZstd, blob.data(), blob.size(), raw + 10, 5, out.data());
            }),
            USCOPE_ERR_CORRUPT);
}

TEST(DecompressPrefix, ZstdRejectsNonFrames) {
  std::vector<uint8_t> out(1000);
  std::vector<uint8_t> junk(64, 0xFF);
  w::put_u32(junk.data(), 1000);
  const uint8_t tiny[3] = {1, 0, 0};
  for (size_t want : {size_t{0}, size_t{10}, size_t{1000}}) {
    EXPECT_EQ(error_code([&] { decompress_prefix(*kZstd, junk.data(), junk.size(), 1000, want, out.data()); }),
              USCOPE_ERR_CORRUPT);
    EXPECT_EQ(error_code([&] { decompress_prefix(*kZstd, tiny, 3, 1000, want, out.data()); }),
              USCOPE_ERR_CORRUPT);
  }
  // A skippable frame declares no content: refused, not decoded as empty.
  std::vector<uint8_t> skip = {0, 0, 0, 0, 0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
  w::put_u32(skip.data(), 1000);
  EXPECT_EQ(error_code([&] { decompress_prefix(*kZstd, skip.data(), skip.size(), 1000, 10, out.data()); }),
            USCOPE_ERR_CORRUPT);
}

TEST(DecompressPrefix, ZstdHandMadeFramesAndTheWindowBound) {
  // Sanity: the hand-made frame is valid.
  const auto ok = rle_frame_blob(1000, 20, true);
  std::vector<uint8_t> out(1000);
  EXPECT_EQ(decompress_prefix(*kZstd, ok.data(), ok.size(), 1000, 10, out.data()), 1000u);
  EXPECT_EQ(out, std::vector<uint8_t>(1000, 0x5C));

  // A window of 2^27 (the largest any zstd level picks) is accepted; 2^28
  // is refused by the streaming (prefix) path, which would need a window
  // buffer, and still decodes whole (one-shot: out is the window).
  const auto w27 = rle_frame_blob(1000, 27, true);
  EXPECT_GE(decompress_prefix(*kZstd, w27.data(), w27.size(), 1000, 10, out.data()), 10u);
  const auto w28 = rle_frame_blob(1000, 28, true);
  EXPECT_EQ(error_code([&] { decompress_prefix(*kZstd, w28.data(), w28.size(), 1000, 10, out.data()); }),
            USCOPE_ERR_CORRUPT);
  EXPECT_EQ(decompress_prefix(*kZstd, w28.data(), w28.size(), 1000, 1000, out.data()), 1000u);

  // A frame that does not declare its size (another writer's) is decoded
  // whole, whatever its window, and checked against the size prefix.
  const auto nosize = rle_frame_blob(1000, 30, false);
  std::fill(out.begin(), out.end(), 0);
  EXPECT_EQ(decompress_prefix(*kZstd, nosize.data(), nosize.size(), 1000, 10, out.data()), 1000u);
  EXPECT_EQ(out, std::vector<uint8_t>(1000, 0x5C));
  auto nosize_short = rle_frame_blob(900, 20, false);
  w::put_u32(nosize_short.data(), 1000);
  EXPECT_EQ(error_code([&] {
              decompress_prefix(*kZstd, nosize_short.data(), nosize_short.size(), 1000, 10, out.data());
            }),
            USCOPE_ERR_CORRUPT);
}

TEST(DecompressPrefix, ZstdFrameWithoutContentSizeFromLibzstd) {
  // Same, with a real multi-block frame made without the content-size flag.
  const auto in = sample(500000, 29);
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ASSERT_NE(c, nullptr);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  std::vector<uint8_t> blob(4 + ZSTD_compressBound(in.size()));
  ZSTD_outBuffer o{blob.data() + 4, blob.size() - 4, 0};
  ZSTD_inBuffer i{in.data(), in.size(), 0};
  ASSERT_EQ(ZSTD_compressStream2(c, &o, &i, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(c);
  blob.resize(4 + o.pos);
  w::put_u32(blob.data(), static_cast<uint32_t>(in.size()));
  ASSERT_EQ(ZSTD_getFrameContentSize(blob.data() + 4, blob.size() - 4), ZSTD_CONTENTSIZE_UNKNOWN);
  for (size_t want : {size_t{0}, size_t{1}, size_t{250000}, in.size()}) {
    std::vector<uint8_t> out(in.size());
    EXPECT_EQ(decompress_prefix(*kZstd, blob.data(), blob.size(), in.size(), want, out.data()),
              in.size());
    EXPECT_EQ(out, in);
  }
}

TEST(DecompressPrefix, RandomCorruptionNeverCrashes) {
  // Flipped bytes: Error(CORRUPT), or at least want bytes and never more
  // than raw (without a checksum the bytes themselves may be wrong). The
  // output buffer is exactly raw bytes, so ASan sees any overrun.
  std::mt19937 rng(31);
  for (Codec codec : {kZstd, kLz4}) {
    const auto in = sample(400000, 32);
    const auto blob = compress_blob(codec, 0, in);
    const size_t raw = in.size();
    std::vector<uint8_t> out(raw);
    for (int i = 0; i < 400; ++i) {
      auto bad = blob;
      for (int k = 0; k < 1 + i % 3; ++k)
        bad[4 + rng() % (bad.size() - 4)] ^= static_cast<uint8_t>(1 + rng() % 255);
      if (i % 50 == 0) bad.resize(4 + rng() % (bad.size() - 4));  // and cut
      const size_t want = i % 4 == 3 ? raw : rng() % raw;
      try {
        const size_t got = decompress_prefix(*codec, bad.data(), bad.size(), raw, want, out.data());
        EXPECT_GE(got, want);
        EXPECT_LE(got, raw);
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), USCOPE_ERR_CORRUPT) << e.what();
      }
    }
    check_prefix(codec, blob, in, raw / 3, "after corruption");
  }
}

TEST(DecompressPrefix, ZstdFromSeveralThreadsAtOnce) {
  // Each thread has its own zstd context.
  const auto in = sample(700000, 33);
  const auto blob = compress_blob(kZstd, 0, in);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      std::vector<uint8_t> out(in.size());
      for (int i = 0; i < 20; ++i) {
        const size_t want = (in.size() / 20) * static_cast<size_t>((i + t * 5) % 20) + 1;
        const size_t got =
            decompress_prefix(*kZstd, blob.data(), blob.size(), in.size(), want, out.data());
        if (got < want || got > in.size() ||
            !std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(got), in.begin()))
          ++bad;
      }
    });
  }
  for (auto &t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// ── The table of methods (compress.cpp): the one place that lists them ──

TEST(CompressionTable, EveryMethodRoundTripsAtItsLevels) {
  size_t count = 0;
  const CompressionMethod *rows = compression_methods(&count);
  ASSERT_GE(count, 3u);
  for (size_t r = 0; r < count; ++r) {
    const CompressionMethod &m = rows[r];
    ASSERT_LE(m.min_level, 0) << m.name << ": level 0 (the default) must be valid";
    ASSERT_GE(m.max_level, 0) << m.name;
    for (int level : {0, std::max(m.min_level, -1), std::min(m.max_level, 22)}) {
      Compressor comp(m, level);
      EXPECT_EQ(&comp.method(), &m);
      for (size_t n : {size_t{0}, size_t{1}, size_t{5000}}) {
        const auto in = sample(n, 5);
        std::vector<uint8_t> blob, out;
        blob.resize(comp.compress(in.data(), in.size(), blob));
        EXPECT_EQ(blob.size() >= w::kBlobSizePrefix, m.compressed || n >= w::kBlobSizePrefix) << m.name;
        decompress(m, blob.data(), blob.size(), n, out);
        EXPECT_EQ(out, in) << m.name << " level " << level << " n=" << n;
        std::vector<uint8_t> part(n + 1);
        const size_t got = decompress_prefix(m, blob.data(), blob.size(), n, n / 2, part.data());
        EXPECT_GE(got, n / 2) << m.name;
        EXPECT_TRUE(std::equal(part.begin(), part.begin() + static_cast<ptrdiff_t>(got), in.begin()))
            << m.name << " level " << level << " n=" << n;
      }
    }
  }
}

TEST(CompressionTable, IdsWireIdsAndNamesAreUniqueAndFound) {
  size_t count = 0;
  const CompressionMethod *rows = compression_methods(&count);
  std::set<uint32_t> ids, wire_ids;
  std::set<std::string> names;
  size_t uncompressed = 0;
  for (size_t r = 0; r < count; ++r) {
    const CompressionMethod &m = rows[r];
    ASSERT_NE(m.name, nullptr);
    EXPECT_TRUE(ids.insert(m.id).second) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_EQ(compression_by_id(m.id), &m) << m.name;
    EXPECT_EQ(compression_by_name(m.name), &m) << m.name;
    EXPECT_EQ(compression_by_flags(compression_flags(m)), &m) << m.name;
    EXPECT_STREQ(uscope_compression_name(m.id), m.name);
    uint32_t found = UINT32_MAX;
    ASSERT_EQ(uscope_compression_find(&found, m.name), USCOPE_OK) << m.name;
    EXPECT_EQ(found, m.id);
    if (m.compressed) {
      // §2.1: F_COMP_METHOD is 3 bits.
      EXPECT_LE(m.wire_id, 7u) << m.name;
      EXPECT_TRUE(wire_ids.insert(m.wire_id).second) << m.name;
      EXPECT_EQ(compression_by_wire_id(m.wire_id), &m) << m.name;
      EXPECT_EQ(compression_flags(m) & ~(w::F_COMPRESSED | w::kCompMethodMask), 0u) << m.name;
      EXPECT_TRUE(m.make_state || m.bound) << m.name;
      EXPECT_TRUE(m.max_decoded && m.decode && m.decode_prefix) << m.name;
    } else {
      ++uncompressed;
      EXPECT_EQ(compression_flags(m), 0u) << m.name;  // F_COMPRESSED clear
    }
  }
  EXPECT_EQ(uncompressed, 1u) << "F_COMPRESSED clear names one method";
}

// The values uscope.h and the spec fix (§2.1 F_COMP_METHOD 0 = LZ4, 1 =
// zstd; COMPAT 3), and the names the CLI prints and the DPI option takes.
TEST(CompressionTable, KnownMethodsKeepTheirIds) {
  struct Known {
    uint32_t id;
    const char *name;
    bool compressed;
    uint32_t wire_id;
    int min_level, max_level;
  };
  for (const Known &k : {Known{USCOPE_COMPRESSION_LZ4, "lz4", true, 0, 0, 12},
                         Known{USCOPE_COMPRESSION_ZSTD, "zstd", true, 1, 0, 22}}) {
    const CompressionMethod *m = compression_by_id(k.id);
    ASSERT_NE(m, nullptr) << k.name;
    EXPECT_STREQ(m->name, k.name);
    EXPECT_EQ(m->compressed, k.compressed) << k.name;
    EXPECT_EQ(m->wire_id, k.wire_id) << k.name;
    EXPECT_EQ(m->min_level, k.min_level) << k.name;
    EXPECT_EQ(m->max_level, k.max_level) << k.name;
  }
  const CompressionMethod *none = compression_by_id(USCOPE_COMPRESSION_NONE);
  ASSERT_NE(none, nullptr);
  EXPECT_STREQ(none->name, "none");
  EXPECT_FALSE(none->compressed);
  EXPECT_EQ(compression_flags(*compression_by_id(USCOPE_COMPRESSION_ZSTD)), w::F_COMPRESSED | 1u << 3);
  EXPECT_EQ(compression_flags(*compression_by_id(USCOPE_COMPRESSION_LZ4)), w::F_COMPRESSED);
}

TEST(CompressionTable, UnknownIsNotFound) {
  size_t count = 0;
  const CompressionMethod *rows = compression_methods(&count);
  for (uint32_t id : {static_cast<uint32_t>(count), UINT32_MAX}) {
    EXPECT_EQ(compression_by_id(id), nullptr) << id;
    EXPECT_EQ(uscope_compression_name(id), nullptr) << id;
  }
  for (const char *name : {"no-such-method", "", "LZ4", "lz4 ", "zst"}) {
    EXPECT_EQ(compression_by_name(name), nullptr) << name;
    uint32_t found = 1234;
    EXPECT_EQ(uscope_compression_find(&found, name), USCOPE_ERR_UNKNOWN_COMPRESSION) << name;
    EXPECT_EQ(found, 1234u) << name;
  }
  EXPECT_EQ(compression_by_name(nullptr), nullptr);
  uint32_t found = 0;
  EXPECT_EQ(uscope_compression_find(&found, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_compression_find(nullptr, "lz4"), USCOPE_ERR_INVALID_ARGUMENT);
  // §2.1: the F_COMP_METHOD values no row has (2-7 today) are reserved,
  // with or without F_COMPRESSED.
  size_t reserved = 0;
  for (uint64_t method = 0; method <= 7; ++method) {
    bool known = false;
    for (size_t r = 0; r < count; ++r) known |= rows[r].compressed && rows[r].wire_id == method;
    if (known) continue;
    ++reserved;
    EXPECT_EQ(compression_by_wire_id(static_cast<uint32_t>(method)), nullptr) << method;
    EXPECT_EQ(compression_by_flags(method << w::kCompMethodShift), nullptr) << method;
    EXPECT_EQ(compression_by_flags(w::F_COMPRESSED | method << w::kCompMethodShift), nullptr) << method;
  }
  EXPECT_GE(reserved, 1u);
  // Bits other than F_COMPRESSED and F_COMP_METHOD do not change the answer.
  EXPECT_EQ(compression_by_flags(w::F_COMPLETE | w::F_INTERLEAVED_DELTAS), compression_by_id(USCOPE_COMPRESSION_NONE));
  EXPECT_EQ(compression_by_flags(w::F_COMPLETE | w::F_COMPRESSED), compression_by_id(USCOPE_COMPRESSION_LZ4));
}
