/*
 * npu_ref.c — see npu_ref.h. Every formula here mirrors a function in rtl/npu/npu_pkg.sv or a
 * pass of rtl/npu/npu_ve.sv; keep them in step. Integer behaviour that C leaves open is pinned
 * down explicitly: sums wrap (done in uint32_t), `>>` of a negative value is arithmetic (GCC
 * defines it so on every target we build for), division truncates toward zero as in C.
 */
#include "npu_ref.h"

/* round(2^16 * 2^(-f/16)), f = 0..15 (rtl/npu/gen_npu_luts.py) */
static const uint32_t EXP2_LUT[16] = {
  65536, 62757, 60097, 57549, 55109, 52773, 50535, 48393, 46341, 44376, 42495, 40693,
  38968, 37316, 35734, 34219
};

/* round(2^16 * Phi(-4 + i/16)), i = 0..128 (rtl/npu/gen_npu_luts.py) */
static const uint32_t PHI_LUT[129] = {
  2, 3, 3, 5, 6, 7, 9, 12, 15, 19, 24, 30,
  38, 47, 58, 72, 88, 108, 132, 161, 195, 236, 284, 341,
  407, 485, 575, 680, 801, 941, 1101, 1283, 1491, 1726, 1992, 2291,
  2625, 2999, 3413, 3872, 4378, 4934, 5542, 6205, 6924, 7701, 8539, 9437,
  10398, 11420, 12503, 13648, 14852, 16114, 17432, 18801, 20220, 21684, 23189, 24729,
  26299, 27894, 29508, 31135, 32768, 34401, 36028, 37642, 39237, 40807, 42347, 43852,
  45316, 46735, 48104, 49422, 50684, 51888, 53033, 54116, 55138, 56099, 56997, 57835,
  58612, 59331, 59994, 60602, 61158, 61664, 62123, 62537, 62911, 63245, 63544, 63810,
  64045, 64253, 64435, 64595, 64735, 64856, 64961, 65051, 65129, 65195, 65252, 65300,
  65341, 65375, 65404, 65428, 65448, 65464, 65478, 65489, 65498, 65506, 65512, 65517,
  65521, 65524, 65527, 65529, 65530, 65531, 65533, 65533, 65534
};

int32_t npu_ref_post(int32_t v, uint32_t flags) {
  int32_t r = v >> NPU_FLAGS_OUT_SHIFT(flags);
  if (NPU_FLAGS_SAT8(flags)) {
    if (r > 127) r = 127;
    else if (r < -128) r = -128;
  }
  return r;
}

static int32_t sext8(int32_t w) { return (int32_t)(int8_t)(uint8_t)((uint32_t)w & 0xFFu); }

void npu_ref_matmul(const int32_t *a, const int32_t *b, int32_t *dst,
                    uint32_t m, uint32_t n, uint32_t k, uint32_t flags) {
  for (uint32_t i = 0; i < m; i++) {
    for (uint32_t j = 0; j < n; j++) {
      uint32_t acc = 0; /* int32 accumulator that wraps, as the PE's adder does */
      for (uint32_t kk = 0; kk < k; kk++)
        acc += (uint32_t)(sext8(a[i * k + kk]) * sext8(b[kk * n + j]));
      dst[i * n + j] = npu_ref_post((int32_t)acc, flags);
    }
  }
}

uint32_t npu_ref_softmax_exp(int32_t row_max, int32_t x, uint32_t in_shift) {
  /* row_max >= x, so the difference is exact in 32 unsigned bits. */
  uint32_t d = ((uint32_t)row_max - (uint32_t)x) >> (in_shift & 31u);
  if (d > 0xFFFFu) d = 0xFFFFu; /* any d >= 189 gives 0 below: the clamp only bounds the multiply */
  uint32_t t = (d * 369u) >> 8; /* 369/256 ~= log2(e): t is the base-2 exponent in Q4 */
  uint32_t q = t >> 4;
  if (q >= 17u) return 0;
  return EXP2_LUT[t & 15u] >> q;
}

void npu_ref_softmax(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags) {
  uint32_t s = NPU_FLAGS_IN_SHIFT(flags);
  for (uint32_t i = 0; i < m; i++) {
    const int32_t *x = src + i * n;
    int32_t *y = dst + i * n;
    if (n == 0) continue;
    /* pass A: row maximum */
    int32_t mx = INT32_MIN;
    for (uint32_t j = 0; j < n; j++)
      if (x[j] > mx) mx = x[j];
    /* pass B: exponentials to dst, and their sum (>= 65536: the maximum contributes 2^16;
       <= n * 2^16 < 2^32 since n < 2^16) */
    uint32_t sum = 0;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t e = npu_ref_softmax_exp(mx, x[j], s);
      y[j] = (int32_t)e;
      sum += e;
    }
    /* reciprocal: one 32-bit division per row; e <= sum makes e * r < 2^32 */
    uint32_t r = 0xFFFFFFFFu / sum;
    /* pass C: normalise in place in dst */
    for (uint32_t j = 0; j < n; j++)
      y[j] = npu_ref_post((int32_t)(((uint32_t)y[j] * r) >> 16), flags);
  }
}

uint32_t npu_ref_isqrt(uint32_t v) {
  /* Digit-by-digit square root, 16 steps from bit 30; the RTL runs the same steps. */
  uint32_t res = 0;
  for (uint32_t bit = 1u << 30; bit != 0; bit >>= 2) {
    if (v >= res + bit) {
      v -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
  }
  return res;
}

static int32_t clamp16(int32_t v) { return v > 32767 ? 32767 : (v < -32768 ? -32768 : v); }

void npu_ref_layernorm(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags) {
  uint32_t s = NPU_FLAGS_IN_SHIFT(flags);
  for (uint32_t i = 0; i < m; i++) {
    const int32_t *x = src + i * n;
    int32_t *y = dst + i * n;
    if (n == 0) continue;
    /* pass A: mean of the scaled inputs (the sum wraps in 32 bits) */
    uint32_t sum = 0;
    for (uint32_t j = 0; j < n; j++) sum += (uint32_t)(x[j] >> s);
    int32_t mean = (int32_t)sum / (int32_t)n;
    /* pass B: variance of the clamped deviations, the sum saturating at 2^32 - 1 */
    uint32_t sumsq = 0;
    for (uint32_t j = 0; j < n; j++) {
      int32_t dc = clamp16((int32_t)((uint32_t)(x[j] >> s) - (uint32_t)mean));
      uint32_t sq = (uint32_t)(dc * dc);
      sumsq = (sumsq + sq < sumsq) ? 0xFFFFFFFFu : sumsq + sq;
    }
    uint32_t var = sumsq / n;
    uint32_t sd = npu_ref_isqrt(var + 1u); /* >= 1: the +1 is the epsilon */
    uint32_t inv = (1u << 24) / sd;       /* 2^24 / sigma, <= 2^24 */
    /* pass C: y = dc / sigma in Q8, before post() */
    for (uint32_t j = 0; j < n; j++) {
      int32_t dc = clamp16((int32_t)((uint32_t)(x[j] >> s) - (uint32_t)mean));
      int32_t v = (int32_t)(((int64_t)dc * (int64_t)inv) >> 16);
      y[j] = npu_ref_post(v, flags);
    }
  }
}

int32_t npu_ref_gelu1(int32_t x, uint32_t in_shift) {
  int32_t xs = x >> (in_shift & 31u); /* Q8 */
  if (xs >= 1024) return xs;          /* x >= 4.0: Phi(x) rounds to 1 */
  if (xs < -1024) return 0;           /* x < -4.0: Phi(x) rounds to 0 */
  uint32_t u = (uint32_t)(xs + 1024); /* 0..2047: table index in 1/16 steps, then the fraction */
  uint32_t lo = PHI_LUT[u >> 4], hi = PHI_LUT[(u >> 4) + 1];
  uint32_t phi = lo + (((hi - lo) * (u & 15u)) >> 4);
  return (xs * (int32_t)phi) >> 16;
}

void npu_ref_gelu(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags) {
  uint32_t total = m * n;
  for (uint32_t j = 0; j < total; j++)
    dst[j] = npu_ref_post(npu_ref_gelu1(src[j], NPU_FLAGS_IN_SHIFT(flags)), flags);
}

/* ── npu_ref_run: the NPU's decode checks, then the op ── */

/* [addr, addr + 4*len) inside the 64 KiB SRAM; 64-bit so nothing wraps. */
static int sram_fits(uint32_t addr, uint32_t len) {
  return (addr & 3u) == 0 && (uint64_t)addr + 4ull * (uint64_t)len <= 0x10000ull;
}
static int overlaps(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen) {
  uint64_t a0 = a, a1 = (uint64_t)a + 4ull * alen, b0 = b, b1 = (uint64_t)b + 4ull * blen;
  return alen != 0 && blen != 0 && a0 < b1 && b0 < a1;
}

int npu_ref_run(int32_t *sram, uint32_t sram_words, const uint32_t desc[7]) {
  uint32_t op = desc[0] & 0xFFu;
  uint32_t src0 = desc[2], src1 = desc[3], dst = desc[4];
  uint32_t m = desc[5] & 0xFFFFu, n = desc[5] >> 16, k = desc[6] & 0xFFFFu, flags = desc[6] >> 16;
  if ((uint64_t)sram_words * 4u < 0x10000ull) return -1;
  switch (op) {
    case 0x10: /* MATMUL */
      if (!sram_fits(src0, m * k) || !sram_fits(src1, k * n) || !sram_fits(dst, m * n)) return -1;
      if (overlaps(dst, m * n, src0, m * k) || overlaps(dst, m * n, src1, k * n)) return -1;
      npu_ref_matmul(sram + src0 / 4, sram + src1 / 4, sram + dst / 4, m, n, k, flags);
      return 0;
    case 0x20: /* SOFTMAX */
    case 0x21: /* LAYERNORM */
    case 0x22: /* GELU */
      if (!sram_fits(src0, m * n) || !sram_fits(dst, m * n)) return -1;
      if (dst != src0 && overlaps(dst, m * n, src0, m * n)) return -1;
      if (op == 0x20) npu_ref_softmax(sram + src0 / 4, sram + dst / 4, m, n, flags);
      else if (op == 0x21) npu_ref_layernorm(sram + src0 / 4, sram + dst / 4, m, n, flags);
      else npu_ref_gelu(sram + src0 / 4, sram + dst / 4, m, n, flags);
      return 0;
    default:
      return -1;
  }
}
