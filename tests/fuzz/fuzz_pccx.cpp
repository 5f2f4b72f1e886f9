// libFuzzer target over the .pccx reader (include/pccx/pccx.h): the input is a
// whole .pccx file, opened from memory (pccx_reader_open_memory, same parser
// as the mapped-file path), then every event, the header and the payload are
// read back.
//
// The contract: open succeeds, or fails with one of the input statuses
// (TRUNCATED, BAD_MAGIC, UNSUPPORTED_VERSION, BAD_HEADER, CORRUPT, BAD_UTF8,
// LIMIT, CHECKSUM with the strict flag). A crash, a sanitizer report, a hang,
// an allocation past libFuzzer's limit or any other status is a bug.
//
// Built like fuzz_reader.cpp (tests/fuzz/CMakeLists.txt): as a libFuzzer
// binary with USCOPE_FUZZ=ON, and always as a ctest corpus replay
// (fuzz_pccx_corpus_replay over tests/fuzz/corpus/pccx and the shared
// conformance/pccx files).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pccx/pccx.h"

namespace {
bool input_error(uscope_status_t s) {
  switch (s) {
    case USCOPE_ERR_TRUNCATED:
    case USCOPE_ERR_BAD_MAGIC:
    case USCOPE_ERR_UNSUPPORTED_VERSION:
    case USCOPE_ERR_BAD_HEADER:
    case USCOPE_ERR_CORRUPT:
    case USCOPE_ERR_BAD_UTF8:
    case USCOPE_ERR_LIMIT:
    case USCOPE_ERR_CHECKSUM:
      return true;
    default:
      return false;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The last byte chooses the open flags, so both checksum modes are fuzzed.
  const uint32_t flags = (size && (data[size - 1] & 1)) ? PCCX_OPEN_STRICT_CHECKSUM : 0;
  pccx_reader_t *r = nullptr;
  const uscope_status_t s = pccx_reader_open_memory(&r, data, size, flags);
  if (s != USCOPE_OK) {
    if (!input_error(s)) {
      std::fprintf(stderr, "fuzz_pccx: unexpected status %d: %s\n", s, uscope_last_error());
      std::abort();
    }
    if (r) std::abort();
    return 0;
  }
  pccx_header_t h{};
  h.struct_size = sizeof h;
  if (pccx_reader_header(r, &h) != USCOPE_OK) std::abort();
  volatile size_t sink = std::strlen(h.pccx_lab_version) + std::strlen(h.isa_version) +
                         std::strlen(h.encoding_name);
  const uint64_t n = pccx_reader_event_count(r);
  if (n != h.num_events) std::abort();
  for (uint64_t i = 0; i < n; ++i) {
    pccx_event_t e{};
    if (pccx_reader_event(r, &e, i) != USCOPE_OK) std::abort();
    sink = sink + std::strlen(e.type_name) + (e.api_name ? std::strlen(e.api_name) : 0);
  }
  const uint8_t *p = nullptr;
  uint64_t len = 0;
  if (pccx_reader_payload(r, &p, &len) != USCOPE_OK || len != h.payload_bytes) std::abort();
  if (len) sink = sink + p[len - 1];
  size_t jl = 0;
  if (!pccx_reader_header_json(r, &jl) || jl != h.header_bytes) std::abort();
  (void)sink;
  pccx_reader_close(r);
  return 0;
}
