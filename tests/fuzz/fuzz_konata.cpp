// libFuzzer target over the Kanata import and export (src/export/
// konata_import.cpp, konata.cpp, kanata_log.cpp), through the public C API:
// the input is a whole Kanata log (plain, or gzip when it starts with 1f 8b)
// in a memfd (/proc/self/fd/N), imported as a µScope trace; a trace that was
// written is then exported back to a Kanata log, so the analysis layer and
// the exporter's reorder heap see every shape of instruction the import can
// make.
//
// The contract: the import returns OK, or CORRUPT (not a Kanata log) /
// TRUNCATED (a broken gzip stream); malformed lines are issues, never
// failures. The export of what it wrote returns OK. A crash, a sanitizer
// report, a hang or another status is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <uscope/export.h>

namespace {
struct MemFile {
  int fd;
  std::string path;
  explicit MemFile(const char *name) : fd(memfd_create(name, 0)), path("/proc/self/fd/" + std::to_string(fd)) {}
  ~MemFile() {
    if (fd >= 0) close(fd);
  }
};

void unexpected(const char *what, uscope_status_t s) {
  std::fprintf(stderr, "fuzz_konata: %s: unexpected status %d: %s\n", what, s, uscope_last_error());
  std::abort();
}

// The outputs are real files (the writers publish by rename), one pair per
// process, in the temporary directory.
const std::string &out_dir() {
  static const std::string dir = [] {
    const char *t = std::getenv("TMPDIR");
    std::string d = std::string(t && *t ? t : "/tmp") + "/uscope_fuzz_konata_XXXXXX";
    if (!mkdtemp(d.data())) std::abort();
    return d;
  }();
  return dir;
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
  const std::string trace = out_dir() + "/t.uscope", log = out_dir() + "/t.kanata";
  uscope_konata_import_options_t io;
  uscope_konata_import_options_init(&io);
  uscope_convert_stats_t st{};
  st.struct_size = sizeof st;
  const uscope_status_t s = uscope_import_konata(&st, in.path.c_str(), trace.c_str(), &io);
  if (s == USCOPE_ERR_CORRUPT || s == USCOPE_ERR_TRUNCATED) return 0;
  if (s != USCOPE_OK) unexpected("import", s);
  uscope_export_options_t eo;
  uscope_export_options_init(&eo);
  eo.format = USCOPE_EXPORT_KONATA;
  const uscope_status_t e = uscope_export(nullptr, trace.c_str(), log.c_str(), &eo);
  if (e != USCOPE_OK) unexpected("export", e);
  return 0;
}
