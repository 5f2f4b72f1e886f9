// The extern "C" functions of pccx.h and convert.h that need neither
// simdjson nor zlib: option defaults, format names, event type names. They
// are in every build; the rest of those headers is in pccx_capi.cpp and
// convert_capi.cpp, or, built with USCOPE_WITH_NPU=OFF, in
// npu_unsupported.cpp.
#include <cstdlib>
#include <cstring>

#include "convert/convert.hpp"
#include "pccx/pccx.h"
#include "pccx/pccx_common.hpp"
#include "uscope/convert.h"

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
  if (opts) uscope::convert::default_options(opts);
}

USCOPE_API uint32_t uscope_convert_format_of(const char *path) { return uscope::convert::format_of(path); }

USCOPE_API void uscope_convert_free(void *p) { std::free(p); }

}  // extern "C"
