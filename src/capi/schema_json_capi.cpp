// extern "C" uscope_schema_load_json (built with simdjson; without it,
// npu_unsupported.cpp).
#include "capi/guard.hpp"
#include "schema/json_schema_builder.hpp"
#include "uscope/uscope.h"

namespace uscope {
SchemaBuilder &builder_of(uscope_schema_t *s);  // schema_capi.cpp
}  // namespace uscope

extern "C" {

USCOPE_API uscope_status_t uscope_schema_load_json(uscope_schema_t **out, const char *json, size_t len) {
  return uscope::guard([&] {
    USCOPE_CHECK_ARG(out, "uscope_schema_load_json: out is NULL");
    *out = nullptr;
    USCOPE_CHECK_ARG(json || len == 0, "uscope_schema_load_json: json is NULL");
    uscope_schema_t *s = nullptr;
    const uscope_status_t st = uscope_schema_new(&s);
    if (st != USCOPE_OK) return st;
    try {
      uscope::build_schema_from_json(uscope::builder_of(s), std::string_view(json ? json : "", len));
    } catch (...) {
      uscope_schema_free(s);  // all or nothing: the caller gets no half-built schema
      throw;
    }
    *out = s;
    return USCOPE_OK;
  });
}

}  // extern "C"
