/*
 * A child process for the kill and disk-error tests (tests/unit/test_writer_crash.cpp).
 * It writes a trace through the shared libuscope, as a user's simulator would.
 *
 *   child run   PATH [max=N] [pace=US] [durability=D] [tokens=1]
 *   child fsize PATH [max=N]
 *
 * Both modes record cycle n at time n * PERIOD_PS with a pattern that is a
 * pure function of n (the test recomputes it; keep the two copies equal):
 *
 *   storage 0 "rob"   sparse, 8 slots, fields id:U32, pc:U64
 *   storage 1 "count" dense, 1 slot, field n:U64 (a TSUM counter)
 *   event 0   "tick"  payload cycle:U64, tag:U32 (12 bytes)
 *
 *   s = n % 8
 *   if ((n / 8) % 3 == 2)  slot_clear(0, s)
 *   else                   slot_set(0, s, 0, id(n)); slot_set(0, s, 1, pc(n))
 *   slot_add(1, 0, 0, (n % 7) + 1)
 *   event(0, {n, (uint32_t)(n ^ 0xA5A5A5A5)})
 *
 * with, for "wide" cycles (n % 5 == 0), values that force a wide frame:
 *   id(n) = wide ? (uint32_t)(n * 2654435761u) | 0x10000 : n & 0xFFFF
 *   pc(n) = wide ? 0x100000000 + 4n                   : (4n) & 0xFFFF
 *
 * The checkpoint interval is INTERVAL_PS (50 cycles), so segments commit often.
 *
 * Output on stdout, one line each, flushed at once (the parent reads a pipe):
 *   "progress N"                   N cycles completed; after every 50 cycles
 *   "fail CALL N STATUS MESSAGE"   the first per-cycle call that failed, at cycle N
 *   "close STATUS MESSAGE"         what uscope_writer_close returned
 *   "open STATUS MESSAGE"          uscope_writer_open failed
 *   "exit"                         the last line before a normal exit
 *
 * "run" writes max=N cycles (0, the default: forever), sleeping pace=US
 * microseconds after every progress line (default 0: full speed), with
 * durability=D, a USCOPE_DURABILITY_* value (default FLUSH). With tokens=1 it
 * reads one byte from stdin before each block of 50 cycles, so the parent
 * decides how far it may run; at EOF on stdin it stops and closes the writer.
 * "fsize" is meant to run under RLIMIT_FSIZE: it ignores SIGXFSZ so that a
 * write past the limit fails with EFBIG, writes until a call fails (or max=N,
 * default 50,000,000), then closes.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uscope/uscope.h"

#define PERIOD_PS 1000u
#define INTERVAL_PS (50u * PERIOD_PS)
#define REPORT_EVERY 50u

static uint32_t pat_id(uint64_t n) {
  return (n % 5 == 0) ? ((uint32_t)(n * 2654435761u) | 0x10000u) : (uint32_t)(n & 0xFFFFu);
}
static uint64_t pat_pc(uint64_t n) {
  return (n % 5 == 0) ? 0x100000000ull + 4 * n : (4 * n) & 0xFFFFu;
}

static int check(const char *what, uscope_status_t st) {
  if (st != USCOPE_OK) {
    fprintf(stderr, "child: %s failed: %d %s\n", what, (int)st, uscope_last_error());
    exit(2);
  }
  return 0;
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* One line per status: the message has no newline in it. */
static void print_status(const char *prefix, uscope_status_t st, const char *msg) {
  printf("%s %d %s\n", prefix, (int)st, msg ? msg : "");
  fflush(stdout);
}

/* Records cycle n. Returns OK or the first failing status; *call names it. */
static uscope_status_t write_cycle(uscope_writer_t *w, uint64_t n, const char **call) {
  uscope_status_t st;
  uint8_t payload[12];
  const uint16_t s = (uint16_t)(n % 8);
#define STEP(name, expr)   \
  do {                     \
    *call = name;          \
    st = (expr);           \
    if (st != USCOPE_OK) return st; \
  } while (0)
  STEP("begin_cycle", uscope_begin_cycle(w, n * PERIOD_PS));
  if ((n / 8) % 3 == 2) {
    STEP("slot_clear", uscope_slot_clear(w, 0, s));
  } else {
    STEP("slot_set", uscope_slot_set(w, 0, s, 0, pat_id(n)));
    STEP("slot_set", uscope_slot_set(w, 0, s, 1, pat_pc(n)));
  }
  STEP("slot_add", uscope_slot_add(w, 1, 0, 0, (n % 7) + 1));
  put_u64(payload, n);
  put_u32(payload + 8, (uint32_t)(n ^ 0xA5A5A5A5u));
  STEP("event", uscope_event(w, 0, payload, sizeof payload));
  STEP("end_cycle", uscope_end_cycle(w));
#undef STEP
  return USCOPE_OK;
}

static void sleep_us(unsigned us) {
  struct timespec ts;
  ts.tv_sec = us / 1000000u;
  ts.tv_nsec = (long)(us % 1000000u) * 1000L;
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s run|fsize PATH [max=N] [pace=US] [durability=D] [tokens=1]\n", argv[0]);
    return 64;
  }
  const char *mode = argv[1];
  const char *path = argv[2];
  const int fsize = strcmp(mode, "fsize") == 0;
  if (!fsize && strcmp(mode, "run") != 0) {
    fprintf(stderr, "child: unknown mode %s\n", mode);
    return 64;
  }
  uint64_t max_cycles = 0;
  unsigned pace_us = 0;
  uint32_t durability = USCOPE_DURABILITY_FLUSH;
  int tokens = 0;
  for (int i = 3; i < argc; ++i) {
    const char *a = argv[i];
    if (strncmp(a, "max=", 4) == 0) max_cycles = strtoull(a + 4, NULL, 0);
    else if (strncmp(a, "pace=", 5) == 0) pace_us = (unsigned)strtoul(a + 5, NULL, 0);
    else if (strncmp(a, "durability=", 11) == 0) durability = (uint32_t)strtoul(a + 11, NULL, 0);
    else if (strncmp(a, "tokens=", 7) == 0) tokens = atoi(a + 7);
    else {
      fprintf(stderr, "child: unknown option %s\n", a);
      return 64;
    }
  }
  if (fsize) {
    /* A write past RLIMIT_FSIZE then fails with EFBIG instead of killing us. */
    signal(SIGXFSZ, SIG_IGN);
    if (max_cycles == 0) max_cycles = 50000000u;
  }

  uscope_schema_t *schema = NULL;
  uint8_t clk;
  uint16_t root, rob, count, tick;
  check("schema_new", uscope_schema_new(&schema));
  check("add_clock", uscope_schema_add_clock(schema, &clk, "clk", PERIOD_PS));
  check("add_scope", uscope_schema_add_scope(schema, &root, "top", USCOPE_NO_PARENT, NULL, clk));
  const uscope_field_t rob_fields[2] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  check("add_storage rob", uscope_schema_add_storage(schema, &rob, "rob", root, 8, USCOPE_SF_SPARSE,
                                                     rob_fields, 2, NULL, 0));
  const uscope_field_t count_fields[1] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  check("add_storage count",
        uscope_schema_add_storage(schema, &count, "count", root, 1, 0, count_fields, 1, NULL, 0));
  const uscope_field_t tick_fields[2] = {{"cycle", USCOPE_FT_U64, 0, 0, 0}, {"tag", USCOPE_FT_U32, 0, 0, 0}};
  check("add_event", uscope_schema_add_event(schema, &tick, "tick", root, tick_fields, 2));
  if (rob != 0 || count != 1 || tick != 0) {
    fprintf(stderr, "child: unexpected ids %u %u %u\n", rob, count, tick);
    return 2;
  }

  uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
  opts.checkpoint_interval_ps = INTERVAL_PS;
  opts.durability = durability;
  const uscope_dut_property_t props[1] = {{"test", "writer_crash"}};
  uscope_writer_t *w = NULL;
  uscope_status_t st = uscope_writer_open(&w, path, schema, props, 1, &opts);
  uscope_schema_free(schema);
  if (st != USCOPE_OK) {
    print_status("open", st, uscope_last_error());
    printf("exit\n");
    fflush(stdout);
    return 1;
  }

  for (uint64_t n = 0; max_cycles == 0 || n < max_cycles; ++n) {
    if (tokens && n % REPORT_EVERY == 0) {
      char token;
      ssize_t r;
      do r = read(STDIN_FILENO, &token, 1);
      while (r < 0 && errno == EINTR);
      if (r != 1) break; /* EOF: the parent wants us to finish */
    }
    const char *call = "";
    st = write_cycle(w, n, &call);
    if (st != USCOPE_OK) {
      printf("fail %s %llu %d %s\n", call, (unsigned long long)n, (int)st, uscope_writer_error(w));
      fflush(stdout);
      break;
    }
    if ((n + 1) % REPORT_EVERY == 0) {
      printf("progress %llu\n", (unsigned long long)(n + 1));
      fflush(stdout);
      if (pace_us) sleep_us(pace_us);
    }
  }
  st = uscope_writer_close(w);
  print_status("close", st, st == USCOPE_OK ? "" : uscope_last_error());
  printf("exit\n");
  fflush(stdout);
  return 0;
}
