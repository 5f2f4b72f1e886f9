/* tb_io.c — see tb_io.h. Built with -fno-tree-loop-distribute-patterns so that GCC does not
 * turn the loops of memset/memcpy back into calls to themselves. */
#include "tb_io.h"
#include "tb_report.h"

void tb_putc(char c) { tb_mmio_write(TB_MMIO_PUTC, (uint8_t)c); }

void tb_puts(const char *s) {
  while (*s) tb_putc(*s++);
}

void tb_put_udec(uint32_t v) {
  char buf[11];
  int i = 0;
  do {
    buf[i++] = (char)('0' + v % 10u);  /* __umodsi3 / __udivsi3 from libgcc */
    v /= 10u;
  } while (v);
  while (i) tb_putc(buf[--i]);
}

void tb_put_dec(int32_t v) {
  if (v < 0) {
    tb_putc('-');
    tb_put_udec(0u - (uint32_t)v);
  } else {
    tb_put_udec((uint32_t)v);
  }
}

void tb_put_hex(uint32_t v) {
  tb_puts("0x");
  for (int s = 28; s >= 0; s -= 4) tb_putc("0123456789abcdef"[(v >> s) & 15u]);
}

void *memcpy(void *dst, const void *src, size_t n) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  if ((((uintptr_t)d | (uintptr_t)s | n) & 3u) == 0) {
    for (size_t i = 0; i < n / 4; i++) ((uint32_t *)d)[i] = ((const uint32_t *)s)[i];
    return dst;
  }
  while (n--) *d++ = *s++;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  if (d <= s || d >= s + n) return memcpy(dst, src, n);
  while (n--) d[n] = s[n];
  return dst;
}

void *memset(void *dst, int c, size_t n) {
  uint8_t *d = dst;
  while (n--) *d++ = (uint8_t)c;
  return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
  const uint8_t *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

