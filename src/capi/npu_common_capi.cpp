// The extern "C" functions of pccx.h and convert.h that need neither
// simdjson nor zlib: option defaults, format names, event type names. They
// are in every build; the rest of those headers is in pccx_capi.cpp and
// src/convert/convert_capi.cpp, or, built with USCOPE_WITH_NPU=OFF, in
// npu_unsupported.cpp.
#include <cstdlib>
#include <cstring>
#include <string>

#include "pccx/pccx.h"
#include "pccx/pccx_common.hpp"
#include "uscope/convert.h"

namespace {
bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

extern "C" {

USCOPE_API const char *pccx_event_type_name(uint32_t id) {
  return id < PCCX_EVENT_TYPE_COUNT ? uscope::pccx::kTypeNames[id] : nullptr;
}

USCOPE_API uint32_t pccx_event_type_id(const char *name) {
  if (!name) return PCCX_EVENT_UNKNOWN;
  const uint32_t id = uscope::pccx::type_id_of(name, std::strlen(name));
  return id == PCCX_EVENT_TYPE_COUNT ? PCCX_EVENT_UNKNOWN : id;
}

USCOPE_API void pccx_writer_options_init(pccx_writer_options_t *opts) {
  if (!opts) return;
  std::memset(opts, 0, sizeof(*opts));
  opts->struct_size = sizeof(*opts);
}

USCOPE_API void uscope_convert_options_init(uscope_convert_options_t *opts) {
  if (!opts) return;
  std::memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->period_ps = 0;  // the trace's (TRACE_META period_ps), else 1000
  opts->max_line_bytes = 64ull << 20;
  opts->reorder_window = 65536;
  opts->queue_depth = 1024;
  opts->num_contexts = 256;
  opts->num_te = 64;
  opts->num_ve = 64;
  opts->num_dma_channels = 64;
  opts->num_dram_channels = 64;
  opts->num_noc_links = 64;
  opts->num_sram_banks = 1024;
}

USCOPE_API uint32_t uscope_convert_format_of(const char *path) {
  if (!path) return USCOPE_CONVERT_AUTO;
  const std::string p(path);
  if (ends_with(p, ".jsonl") || ends_with(p, ".jsonl.gz") || ends_with(p, ".json.gz") || ends_with(p, ".json"))
    return USCOPE_CONVERT_JSONL;
  if (ends_with(p, ".uscope")) return USCOPE_CONVERT_USCOPE;
  if (ends_with(p, ".pccx")) return USCOPE_CONVERT_PCCX;
  return USCOPE_CONVERT_AUTO;
}

USCOPE_API void uscope_convert_free(void *p) { std::free(p); }

}  // extern "C"
