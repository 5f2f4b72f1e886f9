/*
 * tb_io.h — the firmware's tiny runtime: console output through the testbench's PUTC register,
 * the core's counters through its read-only CSRs, and the few libc functions GCC may call even
 * in freestanding code (memcpy, memset, memmove, memcmp).
 */
#ifndef TB_IO_H
#define TB_IO_H

#include <stddef.h>
#include <stdint.h>

void tb_putc(char c);
void tb_puts(const char *s);               /* no newline added */
void tb_put_dec(int32_t v);
void tb_put_udec(uint32_t v);
void tb_put_hex(uint32_t v);               /* 0x%08x */

/* The core's counters (rv32i_core.sv: Zicsr read-only CSRs). Reading the pair high-low-high
 * makes the 64-bit value consistent across a carry. */
/* The firmware is compiled for plain rv32i (libgcc's multilib); the CSR reads enable Zicsr for
 * themselves only. */
#define TB_CSR_READ(name)                                                         \
  ({                                                                              \
    uint32_t v_;                                                                  \
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, " #name        \
                     "\n.option pop" : "=r"(v_));                                 \
    v_;                                                                           \
  })

static inline uint64_t tb_csr64_cycle(void) {
  uint32_t hi, lo, hi2;
  do {
    hi = TB_CSR_READ(cycleh);
    lo = TB_CSR_READ(cycle);
    hi2 = TB_CSR_READ(cycleh);
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}
static inline uint32_t tb_cycle(void) { return TB_CSR_READ(cycle); }
static inline uint32_t tb_instret(void) { return TB_CSR_READ(instret); }
static inline uint32_t tb_flushes(void) { return TB_CSR_READ(hpmcounter3); }
static inline uint32_t tb_load_use(void) { return TB_CSR_READ(hpmcounter4); }
static inline uint32_t tb_mem_wait(void) { return TB_CSR_READ(hpmcounter5); }

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

#endif /* TB_IO_H */
