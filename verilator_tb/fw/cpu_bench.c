/*
 * cpu_bench.c — core-only work before the NPU starts: a bitwise CRC-32 (branchy, data-dependent
 * shifts), an insertion sort (load-use hazards on every compare, many taken and untaken branches)
 * and a linked-list walk (pointer chasing: each load's address is the previous load's result).
 * Each result is checked against a known value, so a core bug fails the run here, early.
 */
#include "cpu_bench.h"

#include "tb_io.h"

static uint32_t crc32(const uint8_t *p, uint32_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

#define SORT_N 64
static int32_t g_sort[SORT_N];

static void insertion_sort(int32_t *a, int n) {
  for (int i = 1; i < n; i++) {
    int32_t v = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

typedef struct node {
  struct node *next;
  int32_t value;
} node_t;
#define LIST_N 48
static node_t g_nodes[LIST_N];

int cpu_bench_run(void) {
  int fails = 0;

  /* CRC-32 of "123456789" is the standard check value 0xCBF43926. */
  static const char check[] = "123456789";
  const uint32_t crc = crc32((const uint8_t *)check, 9);
  if (crc != 0xCBF43926u) fails++;

  /* Sort a permutation of 0..SORT_N-1 (i * 37 mod 64 is one: 37 is odd). */
  for (int i = 0; i < SORT_N; i++) g_sort[i] = (i * 37) % SORT_N - SORT_N / 2;
  insertion_sort(g_sort, SORT_N);
  for (int i = 0; i < SORT_N; i++)
    if (g_sort[i] != i - SORT_N / 2) fails++;

  /* A list threaded through the array in a scrambled order (stride 7, coprime with 48). */
  for (int i = 0; i < LIST_N; i++) {
    g_nodes[i].value = i;
    g_nodes[i].next = &g_nodes[(i + 7) % LIST_N];
  }
  g_nodes[(LIST_N - 7) % LIST_N].next = 0; /* the node pointing back to 0 ends the list */
  int32_t sum = 0, count = 0;
  for (const node_t *p = &g_nodes[0]; p; p = p->next) {
    sum += p->value;
    count++;
  }
  if (count != LIST_N || sum != LIST_N * (LIST_N - 1) / 2) fails++;

  tb_puts("cpu: crc32 ");
  tb_put_hex(crc);
  tb_puts(", sort ");
  tb_puts(fails ? "FAIL" : "ok");
  tb_puts(", list ");
  tb_put_dec(count);
  tb_puts(" nodes\n");
  return fails;
}
