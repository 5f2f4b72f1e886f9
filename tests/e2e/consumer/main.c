/* A user's program, built against an installed libuscope: writes a trace
   through the public header only and checks every status. */
#include <stdio.h>
#include <uscope/uscope.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    uscope_status_t st_ = (call);                                                \
    if (st_ != USCOPE_OK) {                                                      \
      fprintf(stderr, "%s: %s (%s)\n", #call, uscope_status_str(st_), uscope_last_error()); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (uscope_version_number() != USCOPE_VERSION_NUMBER) {
    fprintf(stderr, "header %d, library %u\n", USCOPE_VERSION_NUMBER, uscope_version_number());
    return 1;
  }
  uscope_schema_t *s;
  CHECK(uscope_schema_new(&s));
  CHECK(uscope_schema_add_clock(s, NULL, "clk", 1000));
  CHECK(uscope_schema_add_scope(s, NULL, "/", USCOPE_NO_PARENT, NULL, 0));
  uscope_field_t f[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  uint16_t ctr;
  CHECK(uscope_schema_add_storage(s, &ctr, "ctr", 0, 1, 0, f, 1, NULL, 0));
  uscope_writer_t *w;
  CHECK(uscope_writer_open(&w, argv[1], s, NULL, 0, NULL));
  uscope_schema_free(s);
  for (uint64_t c = 0; c < 1000; ++c) {
    CHECK(uscope_begin_cycle(w, c * 1000));
    CHECK(uscope_slot_add(w, ctr, 0, 0, 1));
    CHECK(uscope_end_cycle(w));
  }
  CHECK(uscope_writer_close(w));
  printf("libuscope %s: wrote %s\n", uscope_version_string(), argv[1]);
  return 0;
}
