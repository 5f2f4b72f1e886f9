/*
 * transformer.c — the NPU workload: a small int8 transformer encoder, layer by layer, offloaded to
 * the NPU through npu_drv and checked tensor by tensor against npu_ref computed on the core.
 *
 * Per layer (seq TF_SEQ, d_model TF_DM, TF_HEADS heads of TF_DH, d_ff TF_DFF):
 *
 *   QKV_PROJ         Q_h = X . Wq_h,  K_h^T = Wk_h^T . X^T,  V_h = X . Wv_h        (MATMUL, int8 out)
 *   ATTENTION_SCORE  S_h = Q_h . K_h^T                                               (MATMUL, int32)
 *   SOFTMAX          P_h = softmax(S_h) row-wise, requantized to int8                (SOFTMAX)
 *   ATTENTION_APPLY  O_h = P_h . V_h                                                 (MATMUL, int8)
 *   (core)           R1 = X + concat_h(O_h)                                          residual
 *   LN1              H = layernorm(R1)                                               (LAYERNORM, int8)
 *   MLP              F = H . W1;  G = gelu(F);  M = G . W2                            (MATMUL, GELU, MATMUL)
 *   (core)           R2 = H + M                                                       residual
 *   LN2              Y = layernorm(R2), the next layer's X                           (LAYERNORM, int8)
 *
 * K is produced already transposed (K^T = Wk^T . X^T, with X^T and Wk^T made by the core) because
 * the NPU's MATMUL takes dense row-major operands: no strided or transposed views. Head outputs
 * are separate dense blocks, so the concatenation and the residual adds run on the core, between
 * a DMA_OUT and a DMA_IN: that is the host's share of the layer, as on a real accelerator.
 *
 * Each phase is pushed as a batch (the queue holds eight commands; CMD_PUSH stalls the store
 * when it is full). While the NPU works the core computes the golden model of the same phase,
 * then waits for the batch's last token and compares every result the phase DMA'd back, so the
 * trace shows the core and the NPU busy at the same time.
 */
#include "transformer.h"

#include "npu_drv.h"
#include "npu_ref.h"
#include "tb_io.h"
#include "tb_report.h"

/* ── Shapes, scales ───────────────────────────────────────────────────────────────────────── */
#define S TF_SEQ
#define D TF_DM
#define H TF_HEADS
#define DH TF_DH
#define FF TF_DFF

/* Fixed-point scales: each output keeps a useful spread of values (neither saturating nor
 * collapsing to zero) for random int8 data with the ranges used below. */
#define FL_QKV    NPU_FLAGS(0, 7, 1)  /* sum of 16 int8 products >> 7, int8 */
#define FL_SCORE  NPU_FLAGS(0, 2, 0)  /* int32 scores for the softmax */
#define FL_SOFT   NPU_FLAGS(6, 9, 1)  /* (max - x) >> 6 per exp step; Q0.16 >> 9 = 0..128, int8 */
#define FL_APPLY  NPU_FLAGS(0, 7, 1)  /* probabilities (sum 128) . V >> 7, int8 */
#define FL_LN     NPU_FLAGS(0, 3, 1)  /* 256 per sigma >> 3 = 32 per sigma, int8 */
#define FL_MLP1   NPU_FLAGS(0, 3, 0)  /* int32 for the GELU, ~256 per unit */
#define FL_GELU   NPU_FLAGS(0, 2, 1)  /* int8 */
#define FL_MLP2   NPU_FLAGS(0, 6, 0)  /* int32 for the residual */

/* ── Data RAM tensors (one element per word) ──────────────────────────────────────────────── */
typedef struct {
  int32_t wq[H][D * DH];   /* Wq_h  [D x DH] */
  int32_t wkt[H][DH * D];  /* Wk_h^T [DH x D] */
  int32_t wv[H][D * DH];   /* Wv_h  [D x DH] */
  int32_t w1[D * FF];
  int32_t w2[FF * D];
} layer_w_t;

static layer_w_t g_w[TF_LAYERS];
static int32_t g_x[S * D], g_xt[D * S];       /* layer input and its transpose */
static int32_t g_r1[S * D], g_r2[S * D];      /* residual sums (core) */

/* What the NPU sends back (DMA_OUT destinations), and the golden model's versions. */
typedef struct {
  int32_t q[H][S * DH], kt[H][DH * S], v[H][S * DH];
  int32_t s[H][S * S], p[H][S * S], o[H][S * DH];
  int32_t h[S * D], f[S * FF], g[S * FF], m[S * D], y[S * D];
} acts_t;
static acts_t g_npu, g_ref;

/* ── NPU SRAM layout (byte addresses), one layer at a time ────────────────────────────────── */
enum {
  SR_X = 0,
  SR_XT = SR_X + 4 * S * D,
  SR_WQ = SR_XT + 4 * D * S,
  SR_WKT = SR_WQ + 4 * H * D * DH,
  SR_WV = SR_WKT + 4 * H * DH * D,
  SR_W1 = SR_WV + 4 * H * D * DH,
  SR_W2 = SR_W1 + 4 * D * FF,
  SR_Q = SR_W2 + 4 * FF * D,
  SR_KT = SR_Q + 4 * H * S * DH,
  SR_V = SR_KT + 4 * H * DH * S,
  SR_S = SR_V + 4 * H * S * DH,  /* scores, then the probabilities in place */
  SR_O = SR_S + 4 * H * S * S,
  SR_R1 = SR_O + 4 * H * S * DH,
  SR_H = SR_R1 + 4 * S * D,
  SR_F = SR_H + 4 * S * D,       /* MLP hidden, then its GELU in place */
  SR_M = SR_F + 4 * S * FF,
  SR_R2 = SR_M + 4 * S * D,
  SR_Y = SR_R2 + 4 * S * D,
  SR_END = SR_Y + 4 * S * D,
};
_Static_assert(SR_END <= 64 * 1024, "the layer must fit the NPU's 64 KiB SRAM");

/* ── The driver, and the scoreboard of what was asked of the NPU ──────────────────────────── */
static uint32_t g_last_token;
static uint32_t g_macs, g_dma_bytes; /* what was asked, for the PERF_* check */

static void push(uint8_t op, uint8_t phase, uint8_t layer, uint8_t head, uint32_t src0,
                 uint32_t src1, uint32_t dst, uint32_t m, uint32_t n, uint32_t k, uint32_t flags) {
  const npu_cmd_t c = {op, phase, layer, head, src0, src1, dst, (uint16_t)m, (uint16_t)n,
                       (uint16_t)k, (uint16_t)flags};
  g_last_token = npu_submit(&c);
  tb_report(TB_REPORT_NPU_CMDS, 1);
  if (op == NPU_OP_DMA_IN || op == NPU_OP_DMA_OUT) {
    tb_report(TB_REPORT_DMA_CMDS, 1);
    tb_report(TB_REPORT_DMA_BYTES, 4u * m * n);
    g_dma_bytes += 4u * m * n;
  } else if (op == NPU_OP_MATMUL) {
    tb_report(TB_REPORT_MATMULS, 1);
    tb_report(TB_REPORT_MACS, m * n * k);
    g_macs += m * n * k;
  } else {
    tb_report(TB_REPORT_VE_CMDS, 1);
  }
}

static void dma_in(uint8_t ph, uint8_t l, uint8_t hd, const int32_t *src, uint32_t sram, uint32_t m,
                   uint32_t n) {
  push(NPU_OP_DMA_IN, ph, l, hd, (uint32_t)src, 0, sram, m, n, 0, 0);
}
static void dma_out(uint8_t ph, uint8_t l, uint8_t hd, uint32_t sram, int32_t *dst, uint32_t m,
                    uint32_t n) {
  push(NPU_OP_DMA_OUT, ph, l, hd, sram, 0, (uint32_t)dst, m, n, 0, 0);
}
static void matmul(uint8_t ph, uint8_t l, uint8_t hd, uint32_t a, uint32_t b, uint32_t c, uint32_t m,
                   uint32_t n, uint32_t k, uint32_t flags) {
  push(NPU_OP_MATMUL, ph, l, hd, a, b, c, m, n, k, flags);
}
static void vec_op(uint8_t op, uint8_t ph, uint8_t l, uint8_t hd, uint32_t src, uint32_t dst,
                   uint32_t m, uint32_t n, uint32_t flags) {
  push(op, ph, l, hd, src, 0, dst, m, n, 0, flags);
}

/* Waits for the last command pushed (completion is in push order). A command the NPU rejected
 * (STATUS.error) counts as a mismatch: its result cannot be trusted. */
static int g_npu_errors;
static void wait_all(void) {
  if (npu_wait_token(g_last_token) != 0) {
    g_npu_errors++;
    npu_error_clear();
    tb_puts("  NPU reported an error\n");
  }
}

/* ── Checks ───────────────────────────────────────────────────────────────────────────────── */
static int g_mismatches;

static void check(const char *what, int layer, int head, const int32_t *got, const int32_t *want,
                  uint32_t n) {
  uint32_t bad = 0, first = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (got[i] != want[i]) {
      if (!bad) first = i;
      bad++;
    }
  }
  tb_report(TB_REPORT_CHECKS, 1);
  if (bad) {
    g_mismatches++;
    tb_report(TB_REPORT_MISMATCHES, 1);
    tb_puts("  MISMATCH ");
    tb_puts(what);
    tb_puts(" layer ");
    tb_put_dec(layer);
    tb_puts(" head ");
    tb_put_dec(head);
    tb_puts(": ");
    tb_put_udec(bad);
    tb_puts(" of ");
    tb_put_udec(n);
    tb_puts(", first at ");
    tb_put_udec(first);
    tb_puts(" npu ");
    tb_put_dec(got[first]);
    tb_puts(" ref ");
    tb_put_dec(want[first]);
    tb_putc('\n');
  }
}

/* ── Core-side pieces of the layer ────────────────────────────────────────────────────────── */
static uint32_t g_rng = 0x2545F491u;

static int32_t rand_int8(int32_t lo, int32_t hi) { /* xorshift32, uniform in [lo, hi] */
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return lo + (int32_t)(g_rng % (uint32_t)(hi - lo + 1));
}

static void transpose(const int32_t *a, int32_t *at, uint32_t rows, uint32_t cols) {
  for (uint32_t i = 0; i < rows; i++)
    for (uint32_t j = 0; j < cols; j++) at[j * rows + i] = a[i * cols + j];
}

static void init_weights(void) {
  for (int l = 0; l < TF_LAYERS; l++) {
    layer_w_t *w = &g_w[l];
    for (int h = 0; h < H; h++)
      for (int i = 0; i < D * DH; i++) {
        w->wq[h][i] = rand_int8(-32, 31);
        w->wkt[h][i] = rand_int8(-32, 31);
        w->wv[h][i] = rand_int8(-32, 31);
      }
    for (int i = 0; i < D * FF; i++) w->w1[i] = rand_int8(-32, 31);
    for (int i = 0; i < FF * D; i++) w->w2[i] = rand_int8(-32, 31);
  }
  for (int i = 0; i < S * D; i++) g_x[i] = rand_int8(-64, 63);
}

/* R1 = X + concat_h(O_h), from the golden O (the NPU's O has been checked equal). */
static void residual_attention(const acts_t *a) {
  for (int i = 0; i < S; i++)
    for (int h = 0; h < H; h++)
      for (int j = 0; j < DH; j++) g_r1[i * D + h * DH + j] = g_x[i * D + h * DH + j] + a->o[h][i * DH + j];
}

/* ── One layer ────────────────────────────────────────────────────────────────────────────── */
static void run_layer(int l) {
  const layer_w_t *w = &g_w[l];
  acts_t *n = &g_npu, *r = &g_ref;

  tb_puts("layer ");
  tb_put_dec(l);
  tb_puts(":");

  /* QKV_PROJ: inputs in, three projections per head, results out. */
  transpose(g_x, g_xt, S, D);
  dma_in(NPU_PH_QKV_PROJ, l, 0, g_x, SR_X, S, D);
  dma_in(NPU_PH_QKV_PROJ, l, 0, g_xt, SR_XT, D, S);
  for (int h = 0; h < H; h++) {
    dma_in(NPU_PH_QKV_PROJ, l, h, w->wq[h], SR_WQ + 4 * h * D * DH, D, DH);
    dma_in(NPU_PH_QKV_PROJ, l, h, w->wkt[h], SR_WKT + 4 * h * DH * D, DH, D);
    dma_in(NPU_PH_QKV_PROJ, l, h, w->wv[h], SR_WV + 4 * h * D * DH, D, DH);
  }
  for (int h = 0; h < H; h++) {
    matmul(NPU_PH_QKV_PROJ, l, h, SR_X, SR_WQ + 4 * h * D * DH, SR_Q + 4 * h * S * DH, S, DH, D, FL_QKV);
    matmul(NPU_PH_QKV_PROJ, l, h, SR_WKT + 4 * h * DH * D, SR_XT, SR_KT + 4 * h * DH * S, DH, S, D, FL_QKV);
    matmul(NPU_PH_QKV_PROJ, l, h, SR_X, SR_WV + 4 * h * D * DH, SR_V + 4 * h * S * DH, S, DH, D, FL_QKV);
    dma_out(NPU_PH_QKV_PROJ, l, h, SR_Q + 4 * h * S * DH, n->q[h], S, DH);
    dma_out(NPU_PH_QKV_PROJ, l, h, SR_KT + 4 * h * DH * S, n->kt[h], DH, S);
    dma_out(NPU_PH_QKV_PROJ, l, h, SR_V + 4 * h * S * DH, n->v[h], S, DH);
  }
  for (int h = 0; h < H; h++) {
    npu_ref_matmul(g_x, w->wq[h], r->q[h], S, DH, D, FL_QKV);
    npu_ref_matmul(w->wkt[h], g_xt, r->kt[h], DH, S, D, FL_QKV);
    npu_ref_matmul(g_x, w->wv[h], r->v[h], S, DH, D, FL_QKV);
  }
  wait_all();
  for (int h = 0; h < H; h++) {
    check("Q", l, h, n->q[h], r->q[h], S * DH);
    check("K^T", l, h, n->kt[h], r->kt[h], DH * S);
    check("V", l, h, n->v[h], r->v[h], S * DH);
  }
  tb_puts(" qkv");

  /* ATTENTION_SCORE, SOFTMAX, ATTENTION_APPLY, per head. */
  for (int h = 0; h < H; h++) {
    const uint32_t s = SR_S + 4 * h * S * S;
    matmul(NPU_PH_ATTENTION_SCORE, l, h, SR_Q + 4 * h * S * DH, SR_KT + 4 * h * DH * S, s, S, S, DH, FL_SCORE);
    dma_out(NPU_PH_ATTENTION_SCORE, l, h, s, n->s[h], S, S);
    vec_op(NPU_OP_SOFTMAX, NPU_PH_SOFTMAX, l, h, s, s, S, S, FL_SOFT);
    dma_out(NPU_PH_SOFTMAX, l, h, s, n->p[h], S, S);
    matmul(NPU_PH_ATTENTION_APPLY, l, h, s, SR_V + 4 * h * S * DH, SR_O + 4 * h * S * DH, S, DH, S, FL_APPLY);
    dma_out(NPU_PH_ATTENTION_APPLY, l, h, SR_O + 4 * h * S * DH, n->o[h], S, DH);
  }
  for (int h = 0; h < H; h++) {
    npu_ref_matmul(r->q[h], r->kt[h], r->s[h], S, S, DH, FL_SCORE);
    npu_ref_softmax(r->s[h], r->p[h], S, S, FL_SOFT);
    npu_ref_matmul(r->p[h], r->v[h], r->o[h], S, DH, S, FL_APPLY);
  }
  wait_all();
  for (int h = 0; h < H; h++) {
    check("scores", l, h, n->s[h], r->s[h], S * S);
    check("softmax", l, h, n->p[h], r->p[h], S * S);
    check("attention", l, h, n->o[h], r->o[h], S * DH);
  }
  tb_puts(" attention");

  /* Residual on the core, then LN1 on the NPU. */
  residual_attention(r);
  dma_in(NPU_PH_LN1, l, 0, g_r1, SR_R1, S, D);
  vec_op(NPU_OP_LAYERNORM, NPU_PH_LN1, l, 0, SR_R1, SR_H, S, D, FL_LN);
  dma_out(NPU_PH_LN1, l, 0, SR_H, n->h, S, D);
  npu_ref_layernorm(g_r1, r->h, S, D, FL_LN);
  wait_all();
  check("ln1", l, 0, n->h, r->h, S * D);
  tb_puts(" ln1");

  /* MLP: W1, GELU in place, W2. */
  dma_in(NPU_PH_MLP, l, 0, w->w1, SR_W1, D, FF);
  dma_in(NPU_PH_MLP, l, 0, w->w2, SR_W2, FF, D);
  matmul(NPU_PH_MLP, l, 0, SR_H, SR_W1, SR_F, S, FF, D, FL_MLP1);
  dma_out(NPU_PH_MLP, l, 0, SR_F, n->f, S, FF);
  vec_op(NPU_OP_GELU, NPU_PH_MLP, l, 0, SR_F, SR_F, S, FF, FL_GELU);
  dma_out(NPU_PH_MLP, l, 0, SR_F, n->g, S, FF);
  matmul(NPU_PH_MLP, l, 0, SR_F, SR_W2, SR_M, S, D, FF, FL_MLP2);
  dma_out(NPU_PH_MLP, l, 0, SR_M, n->m, S, D);
  npu_ref_matmul(r->h, w->w1, r->f, S, FF, D, FL_MLP1);
  npu_ref_gelu(r->f, r->g, S, FF, FL_GELU);
  npu_ref_matmul(r->g, w->w2, r->m, S, D, FF, FL_MLP2);
  wait_all();
  check("mlp1", l, 0, n->f, r->f, S * FF);
  check("gelu", l, 0, n->g, r->g, S * FF);
  check("mlp2", l, 0, n->m, r->m, S * D);
  tb_puts(" mlp");

  /* Residual, LN2: the layer's output is the next layer's input. */
  for (int i = 0; i < S * D; i++) g_r2[i] = r->h[i] + r->m[i];
  dma_in(NPU_PH_LN2, l, 0, g_r2, SR_R2, S, D);
  vec_op(NPU_OP_LAYERNORM, NPU_PH_LN2, l, 0, SR_R2, SR_Y, S, D, FL_LN);
  dma_out(NPU_PH_LN2, l, 0, SR_Y, n->y, S, D);
  npu_ref_layernorm(g_r2, r->y, S, D, FL_LN);
  wait_all();
  check("ln2", l, 0, n->y, r->y, S * D);
  for (int i = 0; i < S * D; i++) g_x[i] = r->y[i];
  tb_puts(" ln2\n");
}

int transformer_run(uint32_t *checksum) {
  if (npu_init() != 0) {
    tb_puts("npu: no NPU at 0x40000000\n");
    return 1;
  }
  init_weights();
  g_mismatches = 0;
  g_npu_errors = 0;
  for (int l = 0; l < TF_LAYERS; l++) run_layer(l);

  /* The NPU's own counters must match what was asked of it. */
  npu_perf_t perf;
  npu_perf_read(&perf);
  tb_puts("npu: ");
  tb_put_udec((uint32_t)perf.macs);
  tb_puts(" MACs, ");
  tb_put_udec(perf.dma_bytes);
  tb_puts(" DMA bytes, ");
  tb_put_udec(perf.conflicts);
  tb_puts(" SRAM bank conflicts\n");
  if (perf.macs != g_macs || perf.dma_bytes != g_dma_bytes) {
    tb_puts("  MISMATCH npu perf counters: expected ");
    tb_put_udec(g_macs);
    tb_puts(" MACs, ");
    tb_put_udec(g_dma_bytes);
    tb_puts(" DMA bytes\n");
    g_mismatches++;
  }
  /* A fingerprint of the result, so that a change in the arithmetic shows in the log. */
  uint32_t sum = 0;
  for (int i = 0; i < S * D; i++) sum = (sum << 5 | sum >> 27) ^ (uint32_t)g_x[i];
  *checksum = sum;
  return g_mismatches + g_npu_errors;
}
