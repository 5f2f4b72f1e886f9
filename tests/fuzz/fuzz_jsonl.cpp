// libFuzzer target over the NPU JSONL ingest (src/convert/): the input is a
// whole JSONL file (plain, or gzip when it starts with 1f 8b), read through
// the public C API by the npu report: the line reader, the On-Demand line
// parser, the reorder window, START/END pairing and the report's folding,
// with a small maximum line length and reorder window so that those limits
// are reached. The input lives in a memfd (/proc/self/fd/N). What the
// converters' writers do with the events is fuzz_jsonl_convert.cpp.
//
// The contract: the call returns OK, or CORRUPT / TRUNCATED (a broken gzip
// stream, a file that is not JSONL). Malformed lines are issues, never
// failures. A crash, a sanitizer report, a hang or another status is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <uscope/convert.h>

namespace {
struct MemFile {
  int fd;
  std::string path;
  explicit MemFile(const char *name) : fd(memfd_create(name, 0)), path("/proc/self/fd/" + std::to_string(fd)) {}
  ~MemFile() {
    if (fd >= 0) close(fd);
  }
};

void check(uscope_status_t s, const char *what) {
  if (s == USCOPE_OK || s == USCOPE_ERR_CORRUPT || s == USCOPE_ERR_TRUNCATED) return;
  std::fprintf(stderr, "fuzz_jsonl: %s: unexpected status %d: %s\n", what, s, uscope_last_error());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MemFile in("in");
  if (in.fd < 0) return 0;
  for (size_t off = 0; off < size;) {
    const ssize_t n = write(in.fd, data + off, size - off);
    if (n <= 0) return 0;
    off += static_cast<size_t>(n);
  }
  uscope_convert_options_t o;
  uscope_convert_options_init(&o);
  o.max_line_bytes = 2048;
  o.reorder_window = 4;
  o.num_te = o.num_ve = 2;
  o.queue_depth = 4;
  o.num_contexts = 2;
  o.num_sram_banks = 4;
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  char *text = nullptr;
  check(uscope_convert_npu_report(&text, &st, in.path.c_str(), USCOPE_CONVERT_JSONL, &o, 1), "npu_report");
  uscope_convert_free(text);
  return 0;
}
