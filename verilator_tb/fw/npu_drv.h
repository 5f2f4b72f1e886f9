/*
 * npu_drv — the firmware's NPU driver (verilator_tb/README.md "NPU registers", "Command
 * descriptor"; rtl/npu/README.md for what the NPU does with them).
 *
 * Freestanding C for rv32i: no libc, no interrupts (the core polls; IRQ_STATUS is still the
 * completion flag the hardware would interrupt on). Single-threaded: call it from one context.
 *
 * Usage:
 *   npu_init();                                  // checks ID, clears IRQ_STATUS and STATUS.error
 *   npu_cmd_t c = {NPU_OP_MATMUL, NPU_PH_MLP, layer, 0, a, b, d, m, n, k, NPU_FLAGS(0, 7, 1)};
 *   uint32_t t = npu_submit(&c);                 // descriptor built in the driver's ring, pushed
 *   ...                                          // the core is free meanwhile
 *   if (npu_wait_token(t) != 0) { error }        // t and everything before it has completed
 *
 * Ordering. The NPU completes commands in push order (DONE_TOKEN never moves back) and only
 * reports completion once a DMA_OUT's writes have reached data RAM, so after npu_wait_token(t)
 * the core may read every result of commands up to t. Data RAM the NPU reads (DMA_IN sources)
 * must stay unchanged until the command has completed. Independent commands may run
 * concurrently inside the NPU; it orders those that touch the same SRAM words itself.
 *
 * Tokens are assigned by npu_submit, increasing from 1, and compared modulo 2^32.
 */
#ifndef NPU_DRV_H
#define NPU_DRV_H

#include <stdint.h>

#include "npu_ref.h" /* NPU_FLAGS(in_shift, out_shift, sat8) */

#define NPU_BASE 0x40000000u

/* Registers (offsets from NPU_BASE) */
#define NPU_REG_ID             0x00u
#define NPU_REG_STATUS         0x04u
#define NPU_REG_CMD_PUSH       0x08u
#define NPU_REG_DONE_TOKEN     0x0Cu
#define NPU_REG_IRQ_STATUS     0x10u
#define NPU_REG_IRQ_ENABLE     0x14u
#define NPU_REG_PERF_MACS_LO   0x18u
#define NPU_REG_PERF_MACS_HI   0x1Cu
#define NPU_REG_PERF_DMA_BYTES 0x20u
#define NPU_REG_PERF_CONFLICTS 0x24u

#define NPU_ID_VALUE 0x4E505531u /* "NPU1" */

/* STATUS bits */
#define NPU_STATUS_BUSY       (1u << 0)
#define NPU_STATUS_FULL       (1u << 1)
#define NPU_STATUS_OCC(s)     (((s) >> 8) & 0xFFu) /* queue occupancy */
#define NPU_STATUS_ERROR      (1u << 16)           /* sticky; write 1 to clear */

/* Opcodes */
#define NPU_OP_DMA_IN    0x01u
#define NPU_OP_DMA_OUT   0x02u
#define NPU_OP_MATMUL    0x10u
#define NPU_OP_SOFTMAX   0x20u
#define NPU_OP_LAYERNORM 0x21u
#define NPU_OP_GELU      0x22u

/* Phases (trace metadata) */
#define NPU_PH_QKV_PROJ        0u
#define NPU_PH_ATTENTION_SCORE 1u
#define NPU_PH_SOFTMAX         2u
#define NPU_PH_ATTENTION_APPLY 3u
#define NPU_PH_LN1             4u
#define NPU_PH_MLP             5u
#define NPU_PH_LN2             6u

#define NPU_DESC_WORDS 7u

/*
 * One command. Addresses: data-RAM byte addresses for the data-RAM side of DMA_IN (src0) and
 * DMA_OUT (dst); NPU SRAM byte addresses (0x0000-0xFFFF) for everything else. All 4-byte
 * aligned. m, n, k and flags as in the descriptor; flags = NPU_FLAGS(in_shift, out_shift, sat8).
 */
typedef struct {
  uint8_t opcode, phase, layer, head;
  uint32_t src0, src1, dst;
  uint16_t m, n, k, flags;
} npu_cmd_t;

typedef struct {
  uint64_t macs;      /* PERF_MACS: m*n*k summed over MATMULs */
  uint32_t dma_bytes; /* PERF_DMA_BYTES: 4*m*n summed over DMA_IN / DMA_OUT */
  uint32_t conflicts; /* PERF_CONFLICTS: SRAM (bank, cycle) pairs with >= 2 requesters */
} npu_perf_t;

/* Register access. */
static inline uint32_t npu_rd(uint32_t off) { return *(volatile uint32_t *)(NPU_BASE + off); }
static inline void npu_wr(uint32_t off, uint32_t v) { *(volatile uint32_t *)(NPU_BASE + off) = v; }

/* Checks the ID register; clears IRQ_STATUS and STATUS.error; disables the IRQ. Returns 0, or -1
 * when no NPU answers with the expected ID. The NPU must be idle. */
int npu_init(void);

/* Builds the 7 descriptor words of c with the given token. */
void npu_desc_build(uint32_t desc[NPU_DESC_WORDS], const npu_cmd_t *c, uint32_t token);

/* Pushes a descriptor that the caller keeps in data RAM (word-aligned, unchanged until the command
 * completes). The store stalls while the queue is full. */
void npu_push_desc(const uint32_t *desc);

/* Builds c in the driver's descriptor ring, pushes it, returns its token. Blocks only while the
 * queue is full or the ring slot's previous command has not completed. */
uint32_t npu_submit(const npu_cmd_t *c);

/* The token of the most recently completed command. */
static inline uint32_t npu_done_token(void) { return npu_rd(NPU_REG_DONE_TOKEN); }
/* True once the command with this token (and all before it) has completed. */
static inline int npu_token_done(uint32_t token) {
  return (int32_t)(npu_done_token() - token) >= 0;
}
/* Polls until `token` has completed. Returns 0, or -1 if STATUS.error is set (some command since
 * the last npu_error_clear() failed; they complete all the same). */
int npu_wait_token(uint32_t token);
/* Polls until no command is queued or running. Same return value. */
int npu_wait_idle(void);
/* Polls IRQ_STATUS until a completion is flagged, acknowledges it (W1C), returns DONE_TOKEN. */
uint32_t npu_wait_irq(void);
static inline void npu_irq_enable(int on) { npu_wr(NPU_REG_IRQ_ENABLE, on ? 1u : 0u); }

static inline uint32_t npu_status(void) { return npu_rd(NPU_REG_STATUS); }
static inline int npu_error(void) { return (npu_status() & NPU_STATUS_ERROR) != 0; }
static inline void npu_error_clear(void) { npu_wr(NPU_REG_STATUS, NPU_STATUS_ERROR); }

/* The perf registers. They are snapshots taken when a command completes, so after
 * npu_wait_token(t) they include every command up to t. */
void npu_perf_read(npu_perf_t *p);

#endif /* NPU_DRV_H */
