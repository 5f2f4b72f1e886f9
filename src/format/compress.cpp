#include "format/compress.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <cstring>

#include "format/error.hpp"
#include "format/wire.hpp"

namespace uscope {

struct Compressor::State {
  ZSTD_CCtx *zctx = nullptr;
  std::vector<char> lz4_state;
  ~State() { ZSTD_freeCCtx(zctx); }
};

Compressor::Compressor(Codec codec, int level) : codec_(codec), level_(level), st_(new State) {
  if (codec_ == Codec::Zstd) {
    st_->zctx = ZSTD_createCCtx();
    if (!st_->zctx) fail(USCOPE_ERR_NO_MEMORY, "cannot create a zstd context");
  } else if (codec_ == Codec::Lz4) {
    st_->lz4_state.resize(level_ > 0 ? LZ4_sizeofStateHC() : LZ4_sizeofState());
  }
}

Compressor::~Compressor() = default;

size_t Compressor::compress(const uint8_t *in, size_t n, std::vector<uint8_t> &out) {
  if (codec_ == Codec::None) {
    if (out.size() < n) out.resize(n);
    if (n) std::memcpy(out.data(), in, n);
    return n;
  }
  if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
    fail(USCOPE_ERR_LIMIT, "delta blob of %zu bytes is too large to compress", n);
  const size_t bound = codec_ == Codec::Lz4 ? static_cast<size_t>(LZ4_compressBound(static_cast<int>(n)))
                                            : ZSTD_compressBound(n);
  if (out.size() < wire::kBlobSizePrefix + bound) out.resize(wire::kBlobSizePrefix + bound);
  wire::put_u32(out.data(), static_cast<uint32_t>(n));  // COMPAT 2
  char *dst = reinterpret_cast<char *>(out.data() + wire::kBlobSizePrefix);
  size_t written;
  if (codec_ == Codec::Lz4) {
    const char *src = reinterpret_cast<const char *>(in);
    const int r = level_ > 0
        ? LZ4_compress_HC_extStateHC(st_->lz4_state.data(), src, dst, static_cast<int>(n),
                                     static_cast<int>(bound), level_)
        : LZ4_compress_fast_extState(st_->lz4_state.data(), src, dst, static_cast<int>(n),
                                     static_cast<int>(bound), 1);
    if (r <= 0 && n > 0) fail(USCOPE_ERR_INTERNAL, "LZ4 compression failed");
    written = static_cast<size_t>(r);
  } else {
    written = ZSTD_compressCCtx(st_->zctx, dst, bound, in, n, level_ ? level_ : 3);
    if (ZSTD_isError(written))
      fail(USCOPE_ERR_INTERNAL, "zstd compression failed: %s", ZSTD_getErrorName(written));
  }
  return wire::kBlobSizePrefix + written;
}

void check_decoded_size(Codec codec, const uint8_t *blob, size_t n, uint64_t raw) {
  if (codec == Codec::None) return;
  if (n < wire::kBlobSizePrefix)
    fail(USCOPE_ERR_CORRUPT, "compressed delta blob of %zu bytes lacks its size prefix", n);
  const uint8_t *src = blob + wire::kBlobSizePrefix;
  const uint64_t srcn = n - wire::kBlobSizePrefix;
  uint64_t most;
  if (codec == Codec::Lz4) {
    // One LZ4 input byte adds at most 255 output bytes (a match-length
    // extension byte); every other byte yields less.
    most = 255 * srcn;
  } else {
    const unsigned long long c = ZSTD_getFrameContentSize(src, srcn);
    if (c == ZSTD_CONTENTSIZE_ERROR)
      fail(USCOPE_ERR_CORRUPT, "zstd delta blob does not start with a zstd frame");
    if (c == raw) return;
    // No declared size, or more frames follow: a block (3-byte header)
    // yields at most 128 KiB.
    most = (srcn / 3 + 1) * (uint64_t{1} << 17);
  }
  if (raw > most)
    fail(USCOPE_ERR_CORRUPT, "a %zu-byte delta blob cannot hold %llu uncompressed bytes", n,
         static_cast<unsigned long long>(raw));
}

void decompress(Codec codec, const uint8_t *blob, size_t n, size_t max_raw,
                std::vector<uint8_t> &out) {
  if (codec == Codec::None) {
    out.assign(blob, blob + n);
    return;
  }
  if (n < wire::kBlobSizePrefix)
    fail(USCOPE_ERR_CORRUPT, "compressed delta blob of %zu bytes lacks its size prefix", n);
  const uint32_t raw = wire::get_u32(blob);
  if (raw > max_raw)
    fail(USCOPE_ERR_CORRUPT, "delta blob claims %u uncompressed bytes, limit %zu", raw, max_raw);
  check_decoded_size(codec, blob, n, raw);  // before sizing out from a hostile prefix
  out.resize(raw);
  const uint8_t *src = blob + wire::kBlobSizePrefix;
  const size_t srcn = n - wire::kBlobSizePrefix;
  if (codec == Codec::Lz4) {
    if (srcn > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) fail(USCOPE_ERR_CORRUPT, "LZ4 block too large");
    const int r = LZ4_decompress_safe(reinterpret_cast<const char *>(src),
                                      reinterpret_cast<char *>(out.data()), static_cast<int>(srcn),
                                      static_cast<int>(raw));
    if (r < 0 || static_cast<uint32_t>(r) != raw)
      fail(USCOPE_ERR_CORRUPT, "LZ4 delta block is corrupt (decoded %d of %u bytes)", r, raw);
  } else {
    const size_t r = ZSTD_decompress(out.data(), raw, src, srcn);
    if (ZSTD_isError(r) || r != raw)
      fail(USCOPE_ERR_CORRUPT, "zstd delta frame is corrupt: %s",
           ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
  }
}

size_t decompress_prefix(Codec codec, const uint8_t *blob, size_t n, size_t raw, size_t want,
                         uint8_t *out) {
  if (want > raw) want = raw;
  if (codec == Codec::None) {
    if (n != raw) fail(USCOPE_ERR_CORRUPT, "uncompressed delta blob of %zu bytes, expected %zu", n, raw);
    if (raw) std::memcpy(out, blob, raw);
    return raw;
  }
  if (n < wire::kBlobSizePrefix)
    fail(USCOPE_ERR_CORRUPT, "compressed delta blob of %zu bytes lacks its size prefix", n);
  const uint32_t prefix = wire::get_u32(blob);
  if (prefix != raw)
    fail(USCOPE_ERR_CORRUPT, "delta blob claims %u uncompressed bytes, expected %zu", prefix, raw);
  const uint8_t *src = blob + wire::kBlobSizePrefix;
  const size_t srcn = n - wire::kBlobSizePrefix;
  if (codec == Codec::Lz4) {
    if (srcn > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) || raw > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
      fail(USCOPE_ERR_CORRUPT, "LZ4 block too large");
    const int r = want == raw
        ? LZ4_decompress_safe(reinterpret_cast<const char *>(src), reinterpret_cast<char *>(out),
                              static_cast<int>(srcn), static_cast<int>(raw))
        : LZ4_decompress_safe_partial(reinterpret_cast<const char *>(src),
                                      reinterpret_cast<char *>(out), static_cast<int>(srcn),
                                      static_cast<int>(want), static_cast<int>(raw));
    if (r < 0 || static_cast<size_t>(r) < want || (want == raw && static_cast<size_t>(r) != raw))
      fail(USCOPE_ERR_CORRUPT, "LZ4 delta block is corrupt (decoded %d of %zu bytes)", r, want);
    return static_cast<size_t>(r);
  }
  const size_t r = ZSTD_decompress(out, raw, src, srcn);
  if (ZSTD_isError(r) || r != raw)
    fail(USCOPE_ERR_CORRUPT, "zstd delta frame is corrupt: %s",
         ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
  return raw;
}

}  // namespace uscope
