// Writes the writer-made seeds of tests/fuzz/corpus/reader/ with our writer,
// through the C API. Not run by the build: the seeds are committed, and this
// program says how they were made. Regenerate with
//   cmake --build build/default --target uscope_fuzz_make_reader_seeds
//   build/default/tests/fuzz/uscope_fuzz_make_reader_seeds tests/fuzz/corpus/reader
// Seeds stay small (about 2 KiB) so that libFuzzer's default input size
// limit (4 KiB when the corpus is smaller) covers them with room to grow.
//
// Every seed has a sparse storage with properties, a dense storage, a
// counter, a 5-byte, an empty and a STRING_REF event, a string table, a TSUM
// and three segments. They differ in what the reader must decode:
//   ours_lz4_v02    LZ4, v0.2 interleaved frames (the default)
//   ours_zstd_v02   zstd (COMPAT 3)
//   ours_none_v02   F_COMPRESSED clear: deltas read in place
//   ours_lz4_v01    v0.1 frames with compact ops (F_COMPACT_DELTAS)
//   ours_live_v02   the LZ4 file as a crash leaves it (COMPAT 12, 15):
//                   F_COMPLETE clear, no section table, cut after the last
//                   segment, so segments come from the tail_offset chain
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "uscope/uscope.h"

namespace {

bool check(uscope_status_t st, const char *what) {
  if (st != USCOPE_OK) std::fprintf(stderr, "%s: %s\n", what, uscope_last_error());
  return st == USCOPE_OK;
}

bool write_trace(const std::string &path, uint32_t compression, uint32_t frames) {
  uscope_schema_t *s = nullptr;
  uint8_t clk = 0;
  uint16_t top = 0, id = 0;
  const uscope_field_t ents_f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t ents_p[] = {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0},
                                   {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 0}};
  const uscope_field_t regs_f[] = {{"val", USCOPE_FT_I16, 0, 0, 0}};
  const uscope_field_t ctr_f[] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t retire_f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"kind", USCOPE_FT_U8, 0, 0, 0}};
  const uscope_field_t note_f[] = {{"str", USCOPE_FT_STRING_REF, 0, 0, 0}};
  bool ok = check(uscope_schema_new(&s), "schema_new") &&
            check(uscope_schema_add_clock(s, &clk, "clk", 1000), "add_clock") &&
            check(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, "cpu", clk), "add_scope") &&
            check(uscope_schema_add_storage(s, &id, "ents", top, 8, USCOPE_SF_SPARSE, ents_f, 2, ents_p, 2), "ents") &&
            check(uscope_schema_add_storage(s, &id, "regs", top, 4, 0, regs_f, 1, nullptr, 0), "regs") &&
            check(uscope_schema_add_storage(s, &id, "ctr", top, 1, 0, ctr_f, 1, nullptr, 0), "ctr") &&
            check(uscope_schema_add_event(s, &id, "retire", top, retire_f, 2), "retire") &&
            check(uscope_schema_add_event(s, &id, "tick", top, nullptr, 0), "tick") &&
            check(uscope_schema_add_event(s, &id, "note", top, note_f, 1), "note");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compression = compression;
  o.frame_format = frames;
  o.checkpoint_interval_ps = 4000;
  const uscope_dut_property_t props[] = {{"dut_name", "seed"}};
  uscope_writer_t *w = nullptr;
  ok = ok && check(uscope_writer_open(&w, path.c_str(), s, props, 1, &o), "writer_open");
  uscope_schema_free(s);
  for (uint32_t i = 0; ok && i < 12; ++i) {
    uint8_t retire[5];
    std::memcpy(retire, &i, 4);
    retire[4] = static_cast<uint8_t>(i % 3);
    uint32_t idx = 0;
    ok = check(uscope_begin_cycle(w, 1000ull * (i + 1) - (i == 5 ? 1000 : 0)), "begin") &&
         check(uscope_slot_set(w, 0, i % 8, 0, i), "set") &&
         check(uscope_slot_set(w, 0, i % 8, 1, i % 3 == 0 ? 0x123456789ull : i * 3), "set") &&
         (i % 4 != 1 || check(uscope_slot_clear(w, 0, (i + 4) % 8), "clear")) &&
         check(uscope_slot_add(w, 2, 0, 0, 1), "add") &&
         check(uscope_slot_set(w, 1, i % 4, 0, i % 2 ? static_cast<uint64_t>(-static_cast<int64_t>(i)) : i), "set") &&
         check(uscope_prop_set(w, 0, i % 2, i % 8), "prop") &&
         check(uscope_event(w, 0, retire, 5), "retire") &&
         (i % 5 != 0 || check(uscope_event(w, 1, nullptr, 0), "tick")) &&
         (i % 4 != 2 || (check(uscope_string_insert(w, &idx, ("s" + std::to_string(i)).c_str()), "string") &&
                         check(uscope_event(w, 2, &idx, 4), "note"))) &&
         check(uscope_end_cycle(w), "end");
  }
  return check(uscope_writer_close(w), "close") && ok;
}

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}
bool write_file(const std::string &path, const std::vector<uint8_t> &b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
  return f.good();
}
uint64_t get(const std::vector<uint8_t> &b, size_t at, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, n);  // little-endian host, as the library
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = write_trace(dir + "/ours_lz4_v02.seed", USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02) &&
            write_trace(dir + "/ours_zstd_v02.seed", USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02) &&
            write_trace(dir + "/ours_none_v02.seed", USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V02) &&
            write_trace(dir + "/ours_lz4_v01.seed", USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V01);
  if (!ok) return 1;
  // The live copy: spec §2 header fields flags (8), section_table_offset
  // (32), tail_offset (40); §8.1 segment sizes at 32/36 of the last segment.
  std::vector<uint8_t> b = read_file(dir + "/ours_lz4_v02.seed");
  const uint64_t flags = get(b, 8, 8) & ~uint64_t{1}, zero = 0, tail = get(b, 40, 8);
  const uint64_t end = tail + 56 + get(b, tail + 32, 4) + get(b, tail + 36, 4);
  std::memcpy(b.data() + 8, &flags, 8);
  std::memcpy(b.data() + 32, &zero, 8);
  b.resize(end);
  return write_file(dir + "/ours_live_v02.seed", b) ? 0 : 1;
}
