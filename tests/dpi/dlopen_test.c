/*
 * A program in another language's position: it knows nothing of libuscope at
 * link time, dlopen()s libuscope_dpi.so, looks every call up by name with the
 * prototypes of uscope_dpi.h / uscope.h, writes a trace through the bridge
 * (schema from CSV calls, the per-cycle calls libuscope exports, an event from
 * a 256-byte array) and reads it back with the reader, also found by dlsym.
 * Exit 0 on success; any difference prints a line and exits 1.
 *
 * usage: dpi_dlopen_test <path of libuscope_dpi.so> <output trace path>
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void *lib;
static int failures;

static void *sym(const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
    failures++;
  }
  return p;
}

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s libuscope_dpi.so out.uscope\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  /* The bridge's own calls. */
  const char *(*version)(void) = (const char *(*)(void))sym("uscope_dpi_version");
  const char *(*last_error)(void) = (const char *(*)(void))sym("uscope_dpi_last_error");
  void *(*schema_create)(void) = (void *(*)(void))sym("uscope_sv_schema_create");
  int (*schema_free)(void *) = (int (*)(void *))sym("uscope_sv_schema_free");
  int (*clock)(void *, const char *, unsigned) = (int (*)(void *, const char *, unsigned))sym("uscope_sv_schema_clock");
  int (*scope)(void *, const char *, int, const char *, int) =
      (int (*)(void *, const char *, int, const char *, int))sym("uscope_sv_schema_scope");
  int (*storage)(void *, const char *, int, unsigned, unsigned, const char *, const char *) =
      (int (*)(void *, const char *, int, unsigned, unsigned, const char *, const char *))sym("uscope_sv_schema_storage");
  int (*event)(void *, const char *, int, const char *) =
      (int (*)(void *, const char *, int, const char *))sym("uscope_sv_schema_event");
  int (*dut)(void *, const char *, const char *) = (int (*)(void *, const char *, const char *))sym("uscope_sv_schema_dut_property");
  void *(*open)(const char *, void *) = (void *(*)(const char *, void *))sym("uscope_open");
  int (*close_)(void *) = (int (*)(void *))sym("uscope_close");
  int (*event_raw)(void *, unsigned short, const unsigned char *, unsigned) =
      (int (*)(void *, unsigned short, const unsigned char *, unsigned))sym("uscope_event_raw");
  void (*reg)(const char *, void *) = (void (*)(const char *, void *))sym("uscope_dpi_register");
  void *(*handle)(const char *) = (void *(*)(const char *))sym("uscope_handle");
  /* libuscope's, reached through the bridge's dependency. */
  int32_t (*begin)(void *, uint64_t) = (int32_t (*)(void *, uint64_t))sym("uscope_begin_cycle");
  int32_t (*end)(void *) = (int32_t (*)(void *))sym("uscope_end_cycle");
  int32_t (*slot_set)(void *, uint16_t, uint16_t, uint16_t, uint64_t) =
      (int32_t (*)(void *, uint16_t, uint16_t, uint16_t, uint64_t))sym("uscope_slot_set");
  int32_t (*reader_open)(void **, const char *) = (int32_t (*)(void **, const char *))sym("uscope_reader_open");
  void (*reader_close)(void *) = (void (*)(void *))sym("uscope_reader_close");
  int32_t (*dut_lookup)(const void *, const char **, const char *) =
      (int32_t (*)(const void *, const char **, const char *))sym("uscope_reader_dut_lookup");
  int32_t (*state_at)(void *, void **, uint64_t) = (int32_t (*)(void *, void **, uint64_t))sym("uscope_reader_state_at");
  int32_t (*slot_field)(const void *, uint64_t *, uint16_t, uint16_t, uint16_t) =
      (int32_t (*)(const void *, uint64_t *, uint16_t, uint16_t, uint16_t))sym("uscope_state_slot_field");
  void (*state_free)(void *) = (void (*)(void *))sym("uscope_state_free");
  if (failures) return 1;

  printf("libuscope_dpi %s\n", version());
  void *s = schema_create();
  CHECK(s != NULL);
  CHECK(dut(s, "dut_name", "dlopen") == 0);
  CHECK(clock(s, "clk", 500) == 0);
  CHECK(scope(s, "root", -1, "", 0) == 0);
  CHECK(storage(s, "regs", 0, 4, 0, "value:u64,tag:u8", "") == 0);
  CHECK(event(s, "done", 0, "code:u16,ok:bool") == 0);
  CHECK(storage(s, "bad", 0, 4, 0, "value:u65", "") == -100);  /* USCOPE_DPI_ERR_SYNTAX */
  CHECK(strstr(last_error(), "u65") != NULL);
  void *w = open(argv[2], s);
  if (!w) {
    fprintf(stderr, "uscope_open: %s\n", last_error());
    return 1;
  }
  schema_free(s);
  reg("dl_writer", w);
  CHECK(handle("dl_writer") == w);

  unsigned char payload[256] = {0};
  for (uint64_t cy = 0; cy < 10; ++cy) {
    CHECK(begin(w, cy * 500) == 0);
    CHECK(slot_set(w, 0, (uint16_t)(cy % 4), 0, 0x1111111100000000ull + cy) == 0);
    CHECK(slot_set(w, 0, (uint16_t)(cy % 4), 1, cy * 3) == 0);
    payload[0] = (unsigned char)cy;
    payload[1] = 0;
    payload[2] = 1;
    CHECK(event_raw(w, 0, payload, 3) == 0);
    CHECK(end(w) == 0);
  }
  CHECK(close_(w) == 0);
  CHECK(handle("dl_writer") == NULL);

  void *r = NULL;
  CHECK(reader_open(&r, argv[2]) == 0);
  if (r) {
    const char *v = NULL;
    CHECK(dut_lookup(r, &v, "dut_name") == 0 && v && strcmp(v, "dlopen") == 0);
    void *st = NULL;
    CHECK(state_at(r, &st, 4500) == 0);
    uint64_t val = 0;
    CHECK(st && slot_field(st, &val, 0, 1, 0) == 0 && val == 0x1111111100000009ull);
    CHECK(st && slot_field(st, &val, 0, 1, 1) == 0 && val == 27);
    CHECK(st && slot_field(st, &val, 0, 2, 0) == 0 && val == 0x1111111100000006ull);
    state_free(st);
    reader_close(r);
  }
  dlclose(lib);
  if (failures) return 1;
  printf("dlopen bridge test: OK\n");
  return 0;
}
