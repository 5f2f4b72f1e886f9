// Unit tests of src/format/compress: delta-blob compression (§8.6.7) with
// the 4-byte little-endian uncompressed-size prefix of COMPAT 2.
#include <gtest/gtest.h>

#include <lz4.h>
#include <zstd.h>

#include <cstdint>
#include <random>
#include <vector>

#include "format/compress.hpp"
#include "support/test_util.hpp"
#include "format/error.hpp"
#include "format/wire.hpp"

using namespace uscope;
namespace w = uscope::wire;

namespace {

using uscope::test::error_code;

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
const CodecCase kCodecs[] = {{Codec::Lz4, 0, "lz4"},
                             {Codec::Lz4, 9, "lz4hc-9"},
                             {Codec::Zstd, 0, "zstd"},
                             {Codec::Zstd, 19, "zstd-19"},
                             {Codec::None, 0, "none"}};

}  // namespace

TEST(Compress, RoundTripEveryCodecIncludingEmpty) {
  for (const auto &c : kCodecs) {
    Compressor comp(c.codec, c.level);
    EXPECT_EQ(comp.codec(), c.codec);
    for (size_t n : {size_t{0}, size_t{1}, size_t{13}, size_t{4096}, size_t{1} << 20}) {
      const auto in = sample(n);
      std::vector<uint8_t> blob, out;
      blob.resize(comp.compress(in.data(), in.size(), blob));
      decompress(c.codec, blob.data(), blob.size(), n, out);
      EXPECT_EQ(out, in) << c.name << " n=" << n;
    }
  }
}

TEST(Compress, CompressedBlobsStartWithTheUncompressedSize) {
  for (const auto &c : kCodecs) {
    if (c.codec == Codec::None) continue;
    Compressor comp(c.codec, c.level);
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
    Compressor comp(Codec::Lz4, level);
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
  Compressor comp(Codec::Zstd, 0);
  const auto in = sample(10000, 4);
  std::vector<uint8_t> blob;
  blob.resize(comp.compress(in.data(), in.size(), blob));
  EXPECT_EQ(ZSTD_getFrameContentSize(blob.data() + 4, blob.size() - 4), in.size());
  EXPECT_EQ(ZSTD_findFrameCompressedSize(blob.data() + 4, blob.size() - 4), blob.size() - 4);
}

TEST(Compress, NoneIsACopyWithoutPrefix) {
  Compressor comp(Codec::None, 0);
  const std::vector<uint8_t> in = {1, 2, 3};
  std::vector<uint8_t> blob = {9, 9, 9, 9, 9, 9};  // replaced, not appended to
  blob.resize(comp.compress(in.data(), in.size(), blob));
  EXPECT_EQ(blob, in);
}

TEST(Compress, ReusedCompressorAndOutputStayCorrect) {
  // The writer reuses one Compressor and one output vector per segment.
  for (const auto &c : kCodecs) {
    Compressor comp(c.codec, c.level);
    std::vector<uint8_t> blob, out;
    for (uint32_t i = 0; i < 6; ++i) {
      const auto in = sample(i % 2 ? 50000 : 77, i);  // big, small, big: shrinking outputs too
      blob.resize(comp.compress(in.data(), in.size(), blob));
      decompress(c.codec, blob.data(), blob.size(), in.size(), out);
      ASSERT_EQ(out, in) << c.name << " round " << i;
    }
  }
}

TEST(Decompress, RejectsWrongPrefix) {
  for (Codec codec : {Codec::Lz4, Codec::Zstd}) {
    Compressor comp(codec, 0);
    const auto in = sample(5000, 5);
    std::vector<uint8_t> blob, out;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    for (uint32_t claimed : {uint32_t{0}, uint32_t{4999}, uint32_t{5001}, uint32_t{100000}}) {
      auto bad = blob;
      w::put_u32(bad.data(), claimed);
      EXPECT_EQ(error_code([&] { decompress(codec, bad.data(), bad.size(), 1u << 20, out); }),
                USCOPE_ERR_CORRUPT)
          << int(codec) << " claimed " << claimed;
    }
    // A prefix above the caller's limit is refused before any allocation.
    auto huge = blob;
    w::put_u32(huge.data(), 0xFFFFFFFFu);
    EXPECT_EQ(error_code([&] { decompress(codec, huge.data(), huge.size(), 1u << 20, out); }),
              USCOPE_ERR_CORRUPT);
    EXPECT_EQ(error_code([&] { decompress(codec, blob.data(), blob.size(), 4999, out); }),
              USCOPE_ERR_CORRUPT);
    decompress(codec, blob.data(), blob.size(), 5000, out);  // the limit itself is allowed
    EXPECT_EQ(out, in);
  }
}

TEST(Decompress, RejectsMissingPrefixAndCorruptBlocks) {
  std::vector<uint8_t> out;
  for (Codec codec : {Codec::Lz4, Codec::Zstd}) {
    const uint8_t tiny[3] = {1, 0, 0};
    EXPECT_EQ(error_code([&] { decompress(codec, tiny, 3, 100, out); }), USCOPE_ERR_CORRUPT);
    EXPECT_EQ(error_code([&] { decompress(codec, tiny, 0, 100, out); }), USCOPE_ERR_CORRUPT);

    Compressor comp(codec, 0);
    const auto in = sample(8000, 6);
    std::vector<uint8_t> blob;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    // Every truncation of the block is refused.
    for (size_t n = 4; n < blob.size(); n += (n < 64 ? 1 : 97)) {
      EXPECT_EQ(error_code([&] { decompress(codec, blob.data(), n, 1u << 20, out); }),
                USCOPE_ERR_CORRUPT)
          << int(codec) << " cut to " << n;
    }
    // Garbage after a valid prefix.
    std::vector<uint8_t> junk(64, 0xFF);
    w::put_u32(junk.data(), 1000);
    EXPECT_EQ(error_code([&] { decompress(codec, junk.data(), junk.size(), 1u << 20, out); }),
              USCOPE_ERR_CORRUPT)
        << int(codec);
  }
  // zstd: a damaged frame magic.
  Compressor z(Codec::Zstd, 0);
  const auto in = sample(1000, 8);
  std::vector<uint8_t> blob;
  blob.resize(z.compress(in.data(), in.size(), blob));
  blob[4] ^= 0xFF;
  EXPECT_EQ(error_code([&] { decompress(Codec::Zstd, blob.data(), blob.size(), 1u << 20, out); }),
            USCOPE_ERR_CORRUPT);
}

TEST(Decompress, RandomCorruptionNeverCrashes) {
  // Flipped bytes must either decode to exactly the claimed size or throw
  // Error(CORRUPT); LZ4_decompress_safe / ZSTD never write past the buffer.
  std::mt19937 rng(99);
  for (Codec codec : {Codec::Lz4, Codec::Zstd}) {
    Compressor comp(codec, 0);
    const auto in = sample(3000, 9);
    std::vector<uint8_t> blob, out;
    blob.resize(comp.compress(in.data(), in.size(), blob));
    for (int i = 0; i < 500; ++i) {
      auto bad = blob;
      bad[4 + rng() % (bad.size() - 4)] ^= static_cast<uint8_t>(1 + rng() % 255);
      try {
        decompress(codec, bad.data(), bad.size(), 1u << 20, out);
        EXPECT_EQ(out.size(), in.size());
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), USCOPE_ERR_CORRUPT);
      }
    }
  }
}
