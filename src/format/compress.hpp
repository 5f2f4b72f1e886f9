// Delta-blob compression (§8.6.7). A compressed blob is the 4-byte
// little-endian uncompressed size followed by the method's data (one LZ4
// block, one zstd frame: COMPAT 2); deltas_compressed_size counts the
// prefix. Without F_COMPRESSED the blob is the raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uscope {

// One delta compression method: a row of the table in compress.cpp, the
// only place that knows the methods. The writer's options, the header flags
// (§2.1 F_COMPRESSED, F_COMP_METHOD bits 3-5), the reader, the C API's file
// info and the names the CLI and the DPI bridge show all read it, so that a
// new method is a row there, its public id in uscope.h and its test.
struct CompressionMethod {
  uint32_t id;           // USCOPE_COMPRESSION_*
  const char *name;      // "lz4", "zstd", "none": the CLI's and the DPI option's word
  bool compressed;       // §2.1 F_COMPRESSED: blobs carry the size prefix (COMPAT 2)
  uint32_t wire_id;      // §2.1 F_COMP_METHOD when compressed (§8.6.7, COMPAT 3)
  int min_level;         // the levels uscope_writer_options_t.compression_level takes
  int max_level;
  const char *levels;    // what they mean, for the option's error message
  // The functions below see the blob after its size prefix; the functions
  // after this struct handle the prefix, and the uncompressed method (whose
  // blob is the raw bytes, so it has no decoder).
  //
  // The state one Compressor keeps for its life (level in range), and its
  // release; either may be null.
  void *(*make_state)(int level);
  void (*free_state)(void *state);
  // Room compress() may need for n input bytes.
  size_t (*bound)(size_t n);
  // in[0, n) into dst[0, cap), cap >= bound(n); returns the bytes written.
  // Throws Error.
  size_t (*compress)(void *state, int level, const uint8_t *in, size_t n, uint8_t *dst,
                     size_t cap);
  // At most how many bytes src[0, n) can decode to, or UINT64_MAX when the
  // data itself declares exactly `raw`. Throws Error(CORRUPT) on data that
  // cannot be this method's.
  uint64_t (*max_decoded)(const uint8_t *src, size_t n, uint64_t raw);
  // All of src[0, n) into out[0, raw): exactly raw bytes, or Error(CORRUPT).
  void (*decode)(const uint8_t *src, size_t n, uint8_t *out, size_t raw);
  // At least the first want bytes (0 <= want < raw) into out[0, raw), nothing
  // written past the returned count of valid bytes. Error(CORRUPT) on bad data.
  size_t (*decode_prefix)(const uint8_t *src, size_t n, uint8_t *out, size_t raw, size_t want);
};

// The rows of the table, in public id order.
const CompressionMethod *compression_methods(size_t *count);
// Look-ups: nullptr when there is no such method.
const CompressionMethod *compression_by_id(uint32_t id);
const CompressionMethod *compression_by_name(const char *name);
const CompressionMethod *compression_by_wire_id(uint32_t wire_id);
// The method a file's header flags (§2.1) name: F_COMP_METHOD must be a
// known wire id, with or without F_COMPRESSED (values 2-7 are reserved and
// must not be used), and F_COMPRESSED clear means the uncompressed method.
const CompressionMethod *compression_by_flags(uint64_t flags);
// The F_COMPRESSED and F_COMP_METHOD bits (§2.1) a file written with m has.
uint64_t compression_flags(const CompressionMethod &m);

class Compressor {
 public:
  // level 0 = method default; the row's levels say what the others mean.
  Compressor(const CompressionMethod &method, int level);
  ~Compressor();
  Compressor(const Compressor &) = delete;
  Compressor &operator=(const Compressor &) = delete;

  // Write the blob for in[0..n) to the start of out and return its size. out
  // only ever grows (never zero-filled again), and the compressor's state is
  // reused, so steady state allocates and clears nothing. Throws Error.
  size_t compress(const uint8_t *in, size_t n, std::vector<uint8_t> &out);
  const CompressionMethod &method() const { return method_; }

 private:
  const CompressionMethod &method_;
  int level_;
  void *state_;
};

// Throws Error(CORRUPT) when a blob of n bytes (size prefix included) cannot
// decode to raw bytes: more than 255 bytes per LZ4 input byte, or not the
// content size its zstd frame declares (at most 128 KiB per zstd block when
// it declares none). Call it before sizing a buffer from a size field, so
// that a few hostile bytes cannot make the reader allocate up to its limit.
void check_decoded_size(const CompressionMethod &method, const uint8_t *blob, size_t n, uint64_t raw);

// Decode a blob into out (resized to the uncompressed size). Rejects a size
// prefix above max_raw, and any blob that does not decode to exactly that
// size, with Error(CORRUPT).
void decompress(const CompressionMethod &method, const uint8_t *blob, size_t n, size_t max_raw,
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
size_t decompress_prefix(const CompressionMethod &method, const uint8_t *blob, size_t n, size_t raw, size_t want,
                         uint8_t *out);

}  // namespace uscope
