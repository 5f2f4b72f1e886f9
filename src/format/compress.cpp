#include "format/compress.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <cstring>

#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

namespace {

// Window bound of the streaming zstd decoder (ZSTD_d_windowLogMax), against
// delta frames (§8.6.7) that ask for a huge window buffer. 27 accepts every
// frame our writer can produce: it takes levels 0..22, and no zstd level picks a window above
// 2^27 (level 22's; the writer also passes the blob size, which can only
// shrink it). It is libzstd's own default (ZSTD_WINDOWLOG_LIMIT_DEFAULT),
// named here so that the bound does not hang on a library default. The
// one-shot path needs no window buffer (out is the window) and has no bound.
constexpr int kZstdWindowLogMax = 27;

// One zstd decompression context per thread, created on first use and kept,
// with the stream buffers zstd sizes on first use (window + 256 KiB, or the
// blob's size if smaller): ~94 KiB of context and up to a few MiB of
// buffers, which would otherwise be allocated again for every segment. Per
// thread, as queries may run on several threads, each with its own reader.
struct ThreadDCtx {
  ZSTD_DCtx *ctx = nullptr;
  ~ThreadDCtx() {
    ZSTD_freeDCtx(ctx);
    ctx = nullptr;  // a later use in this thread's exit makes a new one
  }
};

ZSTD_DCtx *thread_dctx() {
  thread_local ThreadDCtx t;
  if (!t.ctx) {
    ZSTD_DCtx *c = ZSTD_createDCtx();
    if (!c) fail(USCOPE_ERR_NO_MEMORY, "cannot create a zstd decompression context");
    const size_t r = ZSTD_DCtx_setParameter(c, ZSTD_d_windowLogMax, kZstdWindowLogMax);
    if (ZSTD_isError(r)) {
      ZSTD_freeDCtx(c);
      fail(USCOPE_ERR_INTERNAL, "cannot bound the zstd window: %s", ZSTD_getErrorName(r));
    }
    t.ctx = c;
  }
  return t.ctx;
}

// The whole frame in one call, straight into dst: exactly raw bytes, or
// Error(CORRUPT). A frame declaring more than raw bytes fails (dst too
// small), one declaring or holding fewer decodes short.
void zstd_whole(uint8_t *dst, size_t raw, const uint8_t *src, size_t srcn) {
  const size_t r = ZSTD_decompressDCtx(thread_dctx(), dst, raw, src, srcn);
  if (ZSTD_isError(r) || r != raw)
    fail(USCOPE_ERR_CORRUPT, "zstd delta frame is corrupt: %s",
         ZSTD_isError(r) ? ZSTD_getErrorName(r) : "size mismatch");
}

// The start of a frame that declares raw bytes (checked by the caller), into
// out[0, raw), 0 < want < raw: decodes block by block and stops at the end
// of the block that fills byte want - 1 (or of the next one when that is a
// block end), so at most one block (<= 128 KiB) past want. Returns the bytes
// produced, in [want, raw]; writes nothing past them.
size_t zstd_prefix(uint8_t *out, size_t raw, size_t want, const uint8_t *src, size_t srcn) {
  ZSTD_DCtx *d = thread_dctx();
  // An earlier call may have stopped (or thrown) in the middle of a frame.
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  ZSTD_inBuffer in{src, srcn, 0};
  // Room for only `want` bytes: zstd stops flushing when it is full. It also
  // keeps zstd from its single-pass shortcut (taken when the room holds the
  // declared size and the whole frame is given), which decodes everything.
  ZSTD_outBuffer o{out, want, 0};
  size_t r = 1;
  while (o.pos < want) {
    const size_t in0 = in.pos, out0 = o.pos;
    r = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(r))
      fail(USCOPE_ERR_CORRUPT, "zstd delta frame is corrupt: %s", ZSTD_getErrorName(r));
    if (r == 0) break;  // end of frame
    if (in.pos == in0 && o.pos == out0)
      fail(USCOPE_ERR_CORRUPT, "zstd delta frame is truncated (decoded %zu of %zu bytes)", o.pos, raw);
  }
  // zstd checks the declared size at the end of the frame, so r == 0 means
  // all raw bytes; this only guards against a library that does not.
  if (o.pos < want)
    fail(USCOPE_ERR_CORRUPT, "zstd delta frame ends after %zu of %zu bytes", o.pos, raw);
  if (r != 0) {
    // The block that reached `want` is decoded in zstd's buffer: hand out
    // its rest too (a copy, no decoding), so that a caller whose guess was a
    // little short need not come back. No more input: no further block.
    o.size = raw;
    in.size = in.pos;
    r = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(r))
      fail(USCOPE_ERR_CORRUPT, "zstd delta frame is corrupt: %s", ZSTD_getErrorName(r));
  }
  return o.pos;
}

}  // namespace

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
    zstd_whole(out.data(), raw, src, srcn);
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
  if (want == raw) {
    zstd_whole(out, raw, src, srcn);
    return raw;
  }
  const unsigned long long declared = ZSTD_getFrameContentSize(src, srcn);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    fail(USCOPE_ERR_CORRUPT, "zstd delta blob does not start with a zstd frame");
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) {
    // Our writer always declares the size (it compresses each blob in one
    // call). Without it zstd would size its stream buffer from the window
    // alone (up to 2^kZstdWindowLogMax per thread, at a hostile frame's
    // asking): decode it whole instead, into the raw bytes out already has.
    zstd_whole(out, raw, src, srcn);
    return raw;
  }
  if (declared != raw)
    fail(USCOPE_ERR_CORRUPT, "zstd delta frame declares %llu uncompressed bytes, expected %zu",
         declared, raw);
  if (want == 0) return 0;
  return zstd_prefix(out, raw, want, src, srcn);
}

}  // namespace uscope
