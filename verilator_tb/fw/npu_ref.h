/*
 * npu_ref — the golden model of the NPU's compute opcodes, bit-exact with rtl/npu/.
 *
 * Freestanding C99: it includes only <stdint.h> and calls nothing but the compiler's own helpers
 * (on RV32I, libgcc's __mulsi3, __muldi3 and __udivsi3 for `*` and `/`). The firmware links it
 * with -lgcc; the NPU unit testbench (npu_tb/) compiles the same file on the host.
 *
 * Matrices are row-major with one element per 32-bit word, as in data RAM and NPU SRAM. int8
 * operands are the low byte of a word, sign-extended. Every function processes rows in order and,
 * within a row, makes its passes in the same order as the vector engine, so `dst == src` (in
 * place) gives the same result as in hardware. `dst` must otherwise not overlap the sources (the
 * NPU rejects such commands with ERR_OVERLAP).
 *
 * The arithmetic is defined in rtl/npu/README.md ("Fixed point"); in short:
 *   flags[4:0]  in_shift, flags[9:5] out_shift, flags[10] sat8;
 *   post(v)   = sat8 ? clamp(v >>> out_shift, -128, 127) : v >>> out_shift   (every compute op)
 *   MATMUL    c[i][j] = post(sum_k sext8(a[i][k]) * sext8(b[k][j]))            (int32, wraps)
 *   SOFTMAX   per row: e_j = exp2 table of ((max - x_j) >> in_shift), Q0.16;
 *             r = 0xFFFFFFFF / sum(e); y_j = post((e_j * r) >> 16)
 *   LAYERNORM per row: xs = x >>> in_shift; mean = sum(xs) / n (truncating); dc = clamp16(xs - mean);
 *             var = sat32(sum(dc^2)) / n; inv = 2^24 / isqrt(var + 1); y = post((dc * inv) >>> 16)
 *   GELU      y = post(xs * Phi(xs / 256)), Phi from a 129-entry table with linear interpolation
 */
#ifndef NPU_REF_H
#define NPU_REF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* flags (descriptor word 6, bits 31:16) */
#define NPU_FLAGS(in_shift, out_shift, sat8) \
  ((uint32_t)(((in_shift) & 31u) | (((out_shift) & 31u) << 5) | ((sat8) ? 1u << 10 : 0u)))
#define NPU_FLAGS_IN_SHIFT(f)  ((uint32_t)(f) & 31u)
#define NPU_FLAGS_OUT_SHIFT(f) (((uint32_t)(f) >> 5) & 31u)
#define NPU_FLAGS_SAT8(f)      (((uint32_t)(f) >> 10) & 1u)

/* The output stage shared by every compute op. */
int32_t npu_ref_post(int32_t v, uint32_t flags);

/* dst[m x n] = a[m x k] . b[k x n]; dst must not overlap a or b. */
void npu_ref_matmul(const int32_t *a, const int32_t *b, int32_t *dst,
                    uint32_t m, uint32_t n, uint32_t k, uint32_t flags);

/* Row-wise over an m x n matrix; dst may equal src. */
void npu_ref_softmax(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags);
void npu_ref_layernorm(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags);
/* Element-wise over m x n words; dst may equal src. */
void npu_ref_gelu(const int32_t *src, int32_t *dst, uint32_t m, uint32_t n, uint32_t flags);

/* The pieces, for tests and for firmware that wants one element. */
uint32_t npu_ref_softmax_exp(int32_t row_max, int32_t x, uint32_t in_shift); /* Q0.16, <= 65536 */
int32_t  npu_ref_gelu1(int32_t x, uint32_t in_shift);                       /* before post() */
uint32_t npu_ref_isqrt(uint32_t v);                                         /* floor(sqrt(v)) */

/*
 * Runs one compute descriptor (MATMUL, SOFTMAX, LAYERNORM or GELU) on an image of NPU SRAM:
 * `sram` is `sram_words` words and the descriptor's src0/src1/dst are SRAM byte addresses.
 * Returns 0, or -1 for an opcode it does not compute, a misaligned or out-of-range operand or an
 * overlap the NPU would reject (then `sram` is unchanged).
 */
int npu_ref_run(int32_t *sram, uint32_t sram_words, const uint32_t desc[7]);

#ifdef __cplusplus
}
#endif

#endif /* NPU_REF_H */
