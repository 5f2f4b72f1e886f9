/*
 * npu_drv.c — see npu_drv.h.
 */
#include "npu_drv.h"

/* Stop the compiler from moving plain memory accesses (descriptors, tensors) across an MMIO
 * access: the NPU reads and writes data RAM behind its back. There is no cache to flush. */
#define NPU_BARRIER() __asm__ volatile("" ::: "memory")

/* The descriptor ring: 16 slots of 8 words (32-byte aligned, a word of padding). More slots than
 * commands can be in flight (8 queued + 1 decoding + 4 on engines), so reuse rarely waits. */
#define NPU_RING 16u
static uint32_t g_ring[NPU_RING][8] __attribute__((aligned(32)));
static uint32_t g_ring_token[NPU_RING]; /* the token that last used each slot; 0 = free */
static uint32_t g_next_token = 1;
static uint32_t g_head;

int npu_init(void) {
  if (npu_rd(NPU_REG_ID) != NPU_ID_VALUE) return -1;
  npu_wr(NPU_REG_IRQ_ENABLE, 0);
  npu_wr(NPU_REG_IRQ_STATUS, 1);
  npu_error_clear();
  /* Continue from whatever the NPU last completed, so waits compare correctly. */
  g_next_token = npu_done_token() + 1u;
  if (g_next_token == 0) g_next_token = 1;
  for (uint32_t i = 0; i < NPU_RING; i++) g_ring_token[i] = 0;
  g_head = 0;
  return 0;
}

void npu_desc_build(uint32_t desc[NPU_DESC_WORDS], const npu_cmd_t *c, uint32_t token) {
  desc[0] = (uint32_t)c->opcode | (uint32_t)c->phase << 8 | (uint32_t)c->layer << 16 |
            (uint32_t)c->head << 24;
  desc[1] = token;
  desc[2] = c->src0;
  desc[3] = c->src1;
  desc[4] = c->dst;
  desc[5] = (uint32_t)c->m | (uint32_t)c->n << 16;
  desc[6] = (uint32_t)c->k | (uint32_t)c->flags << 16;
}

void npu_push_desc(const uint32_t *desc) {
  NPU_BARRIER(); /* the descriptor's stores before the push */
  npu_wr(NPU_REG_CMD_PUSH, (uint32_t)desc);
}

uint32_t npu_submit(const npu_cmd_t *c) {
  uint32_t *d = g_ring[g_head];
  uint32_t old = g_ring_token[g_head];
  if (old != 0) {
    /* The slot's previous command must have been read; completed is the observable bound. */
    while (!npu_token_done(old)) {
    }
  }
  uint32_t token = g_next_token++;
  if (g_next_token == 0) g_next_token = 1; /* 0 is the token of a rejected descriptor address */
  npu_desc_build(d, c, token);
  g_ring_token[g_head] = token;
  g_head = (g_head + 1u) % NPU_RING;
  npu_push_desc(d);
  return token;
}

int npu_wait_token(uint32_t token) {
  while (!npu_token_done(token)) {
  }
  NPU_BARRIER(); /* results in data RAM are read after the completion is seen */
  return npu_error() ? -1 : 0;
}

int npu_wait_idle(void) {
  while (npu_status() & NPU_STATUS_BUSY) {
  }
  NPU_BARRIER();
  return npu_error() ? -1 : 0;
}

uint32_t npu_wait_irq(void) {
  while (!(npu_rd(NPU_REG_IRQ_STATUS) & 1u)) {
  }
  npu_wr(NPU_REG_IRQ_STATUS, 1u);
  NPU_BARRIER();
  return npu_done_token();
}

void npu_perf_read(npu_perf_t *p) {
  uint32_t hi, lo;
  do { /* a completion may update the pair between the two reads */
    hi = npu_rd(NPU_REG_PERF_MACS_HI);
    lo = npu_rd(NPU_REG_PERF_MACS_LO);
  } while (hi != npu_rd(NPU_REG_PERF_MACS_HI));
  p->macs = (uint64_t)hi << 32 | lo;
  p->dma_bytes = npu_rd(NPU_REG_PERF_DMA_BYTES);
  p->conflicts = npu_rd(NPU_REG_PERF_CONFLICTS);
}
