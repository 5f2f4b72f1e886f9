// Delta-blob compression (§8.6.7). A compressed blob is the 4-byte
// little-endian uncompressed size followed by one LZ4 block or one zstd
// frame (COMPAT 2); deltas_compressed_size counts the prefix.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace uscope {

enum class Codec : uint8_t { Lz4 = 0, Zstd = 1, None = 2 };

class Compressor {
 public:
  // level 0 = method default; LZ4 level > 0 uses LZ4HC at that level.
  Compressor(Codec codec, int level);
  ~Compressor();
  Compressor(const Compressor &) = delete;
  Compressor &operator=(const Compressor &) = delete;

  // Write the blob for in[0..n) to the start of out and return its size. out
  // only ever grows (never zero-filled again), and the compressor's state is
  // reused, so steady state allocates and clears nothing. Throws Error.
  size_t compress(const uint8_t *in, size_t n, std::vector<uint8_t> &out);
  Codec codec() const { return codec_; }

 private:
  Codec codec_;
  int level_;
  struct State;
  std::unique_ptr<State> st_;
};

// Throws Error(CORRUPT) when a blob of n bytes (size prefix included) cannot
// decode to raw bytes: more than 255 bytes per LZ4 input byte, or not the
// content size its zstd frame declares (at most 128 KiB per zstd block when
// it declares none). Call it before sizing a buffer from a size field, so
// that a few hostile bytes cannot make the reader allocate up to its limit.
void check_decoded_size(Codec codec, const uint8_t *blob, size_t n, uint64_t raw);

// Decode a blob into out (resized to the uncompressed size). Rejects a size
// prefix above max_raw, and any blob that does not decode to exactly that
// size, with Error(CORRUPT).
void decompress(Codec codec, const uint8_t *blob, size_t n, size_t max_raw,
                std::vector<uint8_t> &out);

// Decode only the start of a blob whose size prefix says `raw` bytes: at
// least the first min(want, raw) bytes into out[0, raw), which must have room
// for raw bytes. Both codecs stop soon after `want`, so that a reader that
// needs the frames up to some time need not decode the rest: LZ4 within a
// sequence, zstd at a block end at most one block (128 KiB) past want, with
// a per-thread stream context, writing nothing past the returned count (a
// zstd frame that does not declare its size is decoded whole). want >= raw
// decodes and checks the whole blob; None always copies it whole.
// Returns how many leading bytes of out are valid. Throws Error(CORRUPT) when
// the size prefix is not `raw` or the blob is malformed or short.
size_t decompress_prefix(Codec codec, const uint8_t *blob, size_t n, size_t raw, size_t want,
                         uint8_t *out);

}  // namespace uscope
