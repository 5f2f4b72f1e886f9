#include "format/compress.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <climits>
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

// ── LZ4 (§8.6.7): one block; level > 0 is LZ4HC at that level ──

void *lz4_make_state(int level) {
  // operator new[] aligns to 16 bytes, more than LZ4's states need (8).
  return new char[static_cast<size_t>(level > 0 ? LZ4_sizeofStateHC() : LZ4_sizeofState())];
}

void lz4_free_state(void *state) { delete[] static_cast<char *>(state); }

size_t lz4_bound(size_t n) { return static_cast<size_t>(LZ4_compressBound(static_cast<int>(n))); }

size_t lz4_compress(void *state, int level, const uint8_t *in, size_t n, uint8_t *dst, size_t cap) {
  // liblz4's optimal parser (HC levels 10-12, 1.9.x) reads through src even
  // for 0 bytes: an empty vector's NULL data() would crash it.
  static const char kNothing = 0;
  const char *src = n ? reinterpret_cast<const char *>(in) : &kNothing;
  char *d = reinterpret_cast<char *>(dst);
  const int r = level > 0
      ? LZ4_compress_HC_extStateHC(state, src, d, static_cast<int>(n), static_cast<int>(cap), level)
      : LZ4_compress_fast_extState(state, src, d, static_cast<int>(n), static_cast<int>(cap), 1);
  if (r <= 0 && n > 0) fail(USCOPE_ERR_INTERNAL, "LZ4 compression failed");
  return static_cast<size_t>(r);
}

uint64_t lz4_max_decoded(const uint8_t *, size_t n, uint64_t) {
  // One LZ4 input byte adds at most 255 output bytes (a match-length
  // extension byte); every other byte yields less.
  return 255 * uint64_t{n};
}

void lz4_check_sizes(size_t n, size_t raw) {
  if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) || raw > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
    fail(USCOPE_ERR_CORRUPT, "LZ4 block too large");
}

void lz4_decode(const uint8_t *src, size_t n, uint8_t *out, size_t raw) {
  lz4_check_sizes(n, raw);
  const int r = LZ4_decompress_safe(reinterpret_cast<const char *>(src), reinterpret_cast<char *>(out),
                                    static_cast<int>(n), static_cast<int>(raw));
  if (r < 0 || static_cast<size_t>(r) != raw)
    fail(USCOPE_ERR_CORRUPT, "LZ4 delta block is corrupt (decoded %d of %zu bytes)", r, raw);
}

size_t lz4_decode_prefix(const uint8_t *src, size_t n, uint8_t *out, size_t raw, size_t want) {
  lz4_check_sizes(n, raw);
  const int r = LZ4_decompress_safe_partial(reinterpret_cast<const char *>(src),
                                            reinterpret_cast<char *>(out), static_cast<int>(n),
                                            static_cast<int>(want), static_cast<int>(raw));
  if (r < 0 || static_cast<size_t>(r) < want)
    fail(USCOPE_ERR_CORRUPT, "LZ4 delta block is corrupt (decoded %d of %zu bytes)", r, want);
  return static_cast<size_t>(r);
}

// ── zstd (§8.6.7): one frame; level 0 is zstd's default, 3 ──

void *zstd_make_state(int) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  if (!c) fail(USCOPE_ERR_NO_MEMORY, "cannot create a zstd context");
  return c;
}

void zstd_free_state(void *state) { ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(state)); }

size_t zstd_bound(size_t n) { return ZSTD_compressBound(n); }

size_t zstd_compress(void *state, int level, const uint8_t *in, size_t n, uint8_t *dst, size_t cap) {
  const size_t written = ZSTD_compressCCtx(static_cast<ZSTD_CCtx *>(state), dst, cap, in, n, level ? level : 3);
  if (ZSTD_isError(written))
    fail(USCOPE_ERR_INTERNAL, "zstd compression failed: %s", ZSTD_getErrorName(written));
  return written;
}

uint64_t zstd_max_decoded(const uint8_t *src, size_t n, uint64_t raw) {
  const unsigned long long c = ZSTD_getFrameContentSize(src, n);
  if (c == ZSTD_CONTENTSIZE_ERROR)
    fail(USCOPE_ERR_CORRUPT, "zstd delta blob does not start with a zstd frame");
  if (c == raw) return UINT64_MAX;
  // No declared size, or more frames follow: a block (3-byte header)
  // yields at most 128 KiB.
  return (uint64_t{n} / 3 + 1) * (uint64_t{1} << 17);
}

void zstd_decode(const uint8_t *src, size_t n, uint8_t *out, size_t raw) { zstd_whole(out, raw, src, n); }

size_t zstd_decode_prefix(const uint8_t *src, size_t n, uint8_t *out, size_t raw, size_t want) {
  const unsigned long long declared = ZSTD_getFrameContentSize(src, n);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    fail(USCOPE_ERR_CORRUPT, "zstd delta blob does not start with a zstd frame");
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) {
    // Our writer always declares the size (it compresses each blob in one
    // call). Without it zstd would size its stream buffer from the window
    // alone (up to 2^kZstdWindowLogMax per thread, at a hostile frame's
    // asking): decode it whole instead, into the raw bytes out already has.
    zstd_whole(out, raw, src, n);
    return raw;
  }
  if (declared != raw)
    fail(USCOPE_ERR_CORRUPT, "zstd delta frame declares %llu uncompressed bytes, expected %zu",
         declared, raw);
  if (want == 0) return 0;
  return zstd_prefix(out, raw, want, src, n);
}

// ── none: the blob is the raw bytes (F_COMPRESSED clear) ──

size_t none_bound(size_t n) { return n; }

size_t none_compress(void *, int, const uint8_t *in, size_t n, uint8_t *dst, size_t) {
  if (n) std::memcpy(dst, in, n);
  return n;
}

// The table. Public ids are uscope.h's USCOPE_COMPRESSION_*, wire ids the
// §2.1 F_COMP_METHOD values (bits 3-5 of the header flags; 2-7 reserved).
// Rows are in public id order (compression_by_id indexes them).
constexpr CompressionMethod kMethods[] = {
    {USCOPE_COMPRESSION_LZ4, "lz4", true, 0, 0, 12, "LZ4 takes 0 (fast) or 1..12 (HC)",
     lz4_make_state, lz4_free_state, lz4_bound, lz4_compress, lz4_max_decoded, lz4_decode,
     lz4_decode_prefix},
    {USCOPE_COMPRESSION_ZSTD, "zstd", true, 1, 0, 22, "zstd takes 0..22", zstd_make_state,
     zstd_free_state, zstd_bound, zstd_compress, zstd_max_decoded, zstd_decode, zstd_decode_prefix},
    // Any level: it has none, and the writer always accepted any.
    {USCOPE_COMPRESSION_NONE, "none", false, 0, INT_MIN, INT_MAX, "none ignores its level", nullptr,
     nullptr, none_bound, none_compress, nullptr, nullptr, nullptr},
};
constexpr size_t kNumMethods = sizeof kMethods / sizeof kMethods[0];

constexpr bool ids_are_indexes() {
  for (size_t i = 0; i < kNumMethods; ++i)
    if (kMethods[i].id != i) return false;
  return true;
}
static_assert(ids_are_indexes(), "kMethods rows are in public id order, from 0");

// Largest blob the prefix can describe and LZ4's int sizes can take.
constexpr size_t kMaxBlobInput = static_cast<size_t>(LZ4_MAX_INPUT_SIZE);

}  // namespace

const CompressionMethod *compression_methods(size_t *count) {
  *count = kNumMethods;
  return kMethods;
}

const CompressionMethod *compression_by_id(uint32_t id) {
  return id < kNumMethods ? &kMethods[id] : nullptr;
}

const CompressionMethod *compression_by_name(const char *name) {
  if (!name) return nullptr;
  for (const auto &m : kMethods)
    if (std::strcmp(m.name, name) == 0) return &m;
  return nullptr;
}

const CompressionMethod *compression_by_wire_id(uint32_t wire_id) {
  for (const auto &m : kMethods)
    if (m.compressed && m.wire_id == wire_id) return &m;
  return nullptr;
}

const CompressionMethod *compression_by_flags(uint64_t flags) {
  const auto *m = compression_by_wire_id(
      static_cast<uint32_t>((flags & wire::kCompMethodMask) >> wire::kCompMethodShift));
  if (!m || (flags & wire::F_COMPRESSED)) return m;
  for (const auto &u : kMethods)
    if (!u.compressed) return &u;
  return nullptr;
}

uint64_t compression_flags(const CompressionMethod &m) {
  return m.compressed ? wire::F_COMPRESSED | uint64_t{m.wire_id} << wire::kCompMethodShift : 0;
}

Compressor::Compressor(const CompressionMethod &method, int level)
    : method_(method), level_(level), state_(method.make_state ? method.make_state(level) : nullptr) {}

Compressor::~Compressor() {
  if (method_.free_state) method_.free_state(state_);
}

size_t Compressor::compress(const uint8_t *in, size_t n, std::vector<uint8_t> &out) {
  const size_t prefix = method_.compressed ? wire::kBlobSizePrefix : 0;
  if (method_.compressed && n > kMaxBlobInput)
    fail(USCOPE_ERR_LIMIT, "delta blob of %zu bytes is too large to compress", n);
  const size_t bound = method_.bound(n);
  if (out.size() < prefix + bound) out.resize(prefix + bound);
  if (prefix) wire::put_u32(out.data(), static_cast<uint32_t>(n));  // COMPAT 2
  return prefix + method_.compress(state_, level_, in, n, out.data() + prefix, bound);
}

void check_decoded_size(const CompressionMethod &method, const uint8_t *blob, size_t n, uint64_t raw) {
  if (!method.compressed) return;
  if (n < wire::kBlobSizePrefix)
    fail(USCOPE_ERR_CORRUPT, "compressed delta blob of %zu bytes lacks its size prefix", n);
  const uint64_t most = method.max_decoded(blob + wire::kBlobSizePrefix, n - wire::kBlobSizePrefix, raw);
  if (raw > most)
    fail(USCOPE_ERR_CORRUPT, "a %zu-byte delta blob cannot hold %llu uncompressed bytes", n,
         static_cast<unsigned long long>(raw));
}

void decompress(const CompressionMethod &method, const uint8_t *blob, size_t n, size_t max_raw,
                std::vector<uint8_t> &out) {
  if (!method.compressed) {
    out.assign(blob, blob + n);
    return;
  }
  if (n < wire::kBlobSizePrefix)
    fail(USCOPE_ERR_CORRUPT, "compressed delta blob of %zu bytes lacks its size prefix", n);
  const uint32_t raw = wire::get_u32(blob);
  if (raw > max_raw)
    fail(USCOPE_ERR_CORRUPT, "delta blob claims %u uncompressed bytes, limit %zu", raw, max_raw);
  check_decoded_size(method, blob, n, raw);  // before sizing out from a hostile prefix
  out.resize(raw);
  method.decode(blob + wire::kBlobSizePrefix, n - wire::kBlobSizePrefix, out.data(), raw);
}

size_t decompress_prefix(const CompressionMethod &method, const uint8_t *blob, size_t n, size_t raw,
                         size_t want, uint8_t *out) {
  if (want > raw) want = raw;
  if (!method.compressed) {
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
  if (want == raw) {
    method.decode(src, srcn, out, raw);
    return raw;
  }
  return method.decode_prefix(src, srcn, out, raw, want);
}

}  // namespace uscope
