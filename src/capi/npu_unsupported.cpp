// The pccx container and NPU JSON-Lines entry points of a libuscope built
// with USCOPE_WITH_NPU=OFF (simdjson or zlib not installed): every function of
// pccx.h and convert.h is still exported, so that a program links against
// any build, and each one that would read, write or convert fails with
// USCOPE_ERR_UNSUPPORTED and says why. The functions that need neither
// library are real in every build (npu_common_capi.cpp).
#include "capi/guard.hpp"
#include "pccx/pccx.h"
#include "uscope/convert.h"

namespace {
uscope_status_t unsupported(const char *call) {
  uscope::set_thread_error(std::string(call) +
                           ": this libuscope was built without pccx and NPU JSON-Lines support "
                           "(USCOPE_WITH_NPU=OFF: it needs simdjson and zlib)");
  return USCOPE_ERR_UNSUPPORTED;
}
}  // namespace

extern "C" {

// A JSON schema needs simdjson (src/schema/json_schema.cpp).
USCOPE_API uscope_status_t uscope_schema_load_json(uscope_schema_t **out, const char *, size_t) {
  if (out) *out = nullptr;
  return unsupported("uscope_schema_load_json");
}

// No handle can be made, so the calls on one only see NULL (or a caller's
// mistake) and do nothing.
USCOPE_API uscope_status_t pccx_reader_open(pccx_reader_t **out, const char *, uint32_t) {
  if (out) *out = nullptr;
  return unsupported("pccx_reader_open");
}
USCOPE_API uscope_status_t pccx_reader_open_memory(pccx_reader_t **out, const void *, size_t, uint32_t) {
  if (out) *out = nullptr;
  return unsupported("pccx_reader_open_memory");
}
USCOPE_API void pccx_reader_close(pccx_reader_t *) {}
USCOPE_API const char *pccx_reader_error(const pccx_reader_t *) { return ""; }
USCOPE_API uscope_status_t pccx_reader_header(const pccx_reader_t *, pccx_header_t *) {
  return unsupported("pccx_reader_header");
}
USCOPE_API const char *pccx_reader_header_json(const pccx_reader_t *, size_t *len) {
  if (len) *len = 0;
  return nullptr;
}
USCOPE_API uint64_t pccx_reader_event_count(const pccx_reader_t *) { return 0; }
USCOPE_API uscope_status_t pccx_reader_event(const pccx_reader_t *, pccx_event_t *, uint64_t) {
  return unsupported("pccx_reader_event");
}
USCOPE_API uscope_status_t pccx_reader_payload(const pccx_reader_t *, const uint8_t **, uint64_t *) {
  return unsupported("pccx_reader_payload");
}

USCOPE_API uscope_status_t pccx_writer_open(pccx_writer_t **out, const char *, const pccx_writer_options_t *) {
  if (out) *out = nullptr;
  return unsupported("pccx_writer_open");
}
USCOPE_API uscope_status_t pccx_writer_event(pccx_writer_t *, uint32_t, uint64_t, uint64_t, uint32_t, const char *) {
  return unsupported("pccx_writer_event");
}
USCOPE_API uscope_status_t pccx_writer_raw(pccx_writer_t *, const void *, size_t) {
  return unsupported("pccx_writer_raw");
}
USCOPE_API uscope_status_t pccx_writer_set_total_cycles(pccx_writer_t *, uint64_t) {
  return unsupported("pccx_writer_set_total_cycles");
}
USCOPE_API uscope_status_t pccx_writer_stats(const pccx_writer_t *, pccx_writer_stats_t *) {
  return unsupported("pccx_writer_stats");
}
USCOPE_API uscope_status_t pccx_writer_finish(pccx_writer_t *) { return unsupported("pccx_writer_finish"); }
USCOPE_API uscope_status_t pccx_writer_close(pccx_writer_t *) { return USCOPE_OK; }  // of NULL, as documented
USCOPE_API const char *pccx_writer_error(const pccx_writer_t *) { return ""; }

USCOPE_API uscope_status_t uscope_convert(uscope_convert_stats_t *, const char *, uint32_t, const char *,
                                          uint32_t, const uscope_convert_options_t *) {
  return unsupported("uscope_convert");
}
USCOPE_API uscope_status_t uscope_jsonl_to_uscope(uscope_convert_stats_t *, const char *, const char *,
                                                  const uscope_convert_options_t *) {
  return unsupported("uscope_jsonl_to_uscope");
}
USCOPE_API uscope_status_t uscope_jsonl_to_pccx(uscope_convert_stats_t *, const char *, const char *,
                                                const uscope_convert_options_t *) {
  return unsupported("uscope_jsonl_to_pccx");
}
USCOPE_API uscope_status_t uscope_convert_uscope_to_jsonl(uscope_convert_stats_t *, const char *,
                                                          const char *,
                                                          const uscope_convert_options_t *) {
  return unsupported("uscope_convert_uscope_to_jsonl");
}
USCOPE_API uscope_status_t uscope_convert_pccx_to_jsonl(uscope_convert_stats_t *, const char *, const char *,
                                                        const uscope_convert_options_t *) {
  return unsupported("uscope_convert_pccx_to_jsonl");
}
USCOPE_API uscope_status_t uscope_convert_npu_report(char **out, uscope_convert_stats_t *, const char *, uint32_t,
                                                     const uscope_convert_options_t *, int) {
  if (out) *out = nullptr;
  return unsupported("uscope_convert_npu_report");
}

}  // extern "C"
