// libFuzzer target over the reader core (src/reader/trace_reader.hpp): the
// input is a whole .uscope file. It is opened, every segment is replayed,
// state_at is asked at several times and events_in_range over the whole time
// axis (tests/support/reader_exercise.hpp, shared with the golden-errors
// suite tests/unit/test_reader_errors.cpp). Then the cpu analysis over the
// same bytes (tests/support/analysis_exercise.hpp): every query kind once.
//
// The contract: the reader answers, or throws uscope::Error with one of its
// input statuses (CORRUPT, TRUNCATED, BAD_MAGIC, UNSUPPORTED_VERSION,
// UNKNOWN_COMPRESSION). The analysis answers, or gives one of those, or
// NOT_FOUND (no cpu scope) or SCHEMA (a cpu scope without what the protocol
// requires). A crash, a sanitizer report, a hang, an allocation past
// libFuzzer's limit, any other exception or any other status is a bug.
//
// The reader opens a path: the bytes go to a memfd opened as
// /proc/self/fd/N, so the reader's own open/fstat/mmap path is the one
// fuzzed and the library needs no in-memory entry point.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with clang and
// -fsanitize=fuzzer,address,undefined as the fuzzer (USCOPE_FUZZ=ON), and
// with the normal compiler, linked with replay_main.cpp, as a ctest test that
// replays the seed corpus in every build.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "support/analysis_exercise.hpp"
#include "support/reader_exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Both reading modes: tolerant (the default: defects skipped and counted,
  // then the whole-file check) and strict (the first defect is an error with
  // its kind's status).
  for (const uint32_t flags : {0u, uscope::TraceReader::kStrict}) {
    uscope::test::ReaderOutcome o;
    try {
      o = uscope::test::run_reader_on_bytes(data, size, flags);
    } catch (const std::exception &e) {
      // run_reader_on_bytes catches uscope::Error; anything else escaped the
      // reader (std::bad_alloc, std::out_of_range, ...).
      std::fprintf(stderr, "fuzz_reader: the reader threw a non-uscope exception: %s\n", e.what());
      std::abort();
    }
    const bool expected = o.status == USCOPE_OK || uscope::test::is_reader_input_error(o.status) ||
                          (flags && uscope::test::is_strict_defect_error(o.status));
    if (!expected) {
      std::fprintf(stderr, "fuzz_reader: unexpected status %d (%s mode): %s\n", o.status, flags ? "strict" : "tolerant",
                   o.message.c_str());
      std::abort();
    }
  }
  const int fd = ::memfd_create("uscope-analysis-input", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    const ssize_t k = ::write(fd, data + done, size - done);
    if (k <= 0) break;
    done += static_cast<size_t>(k);
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const uscope_status_t s = uscope::test::exercise_analysis(path);
  ::close(fd);
  if (s != USCOPE_OK) {
    std::fprintf(stderr, "fuzz_reader: the analysis gave unexpected status %d: %s\n", s, uscope_last_error());
    std::abort();
  }
  return 0;
}
