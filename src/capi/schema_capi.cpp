// extern "C" schema builder.
#include "capi/guard.hpp"
#include "schema/schema_lookup.hpp"
#include "uscope/uscope.h"
#include "schema/schema_builder.hpp"

struct uscope_schema {
  uscope::SchemaBuilder builder;
};

namespace uscope {
const Schema &schema_of(const uscope_schema_t *s) { return s->builder.schema(); }
// The whole builder, schema and DUT properties: uscope_writer_open reads the
// properties, and the protocol helpers (src/capi/protocol_capi.cpp) build on a
// copy of it that they commit only when a declaration succeeds as a whole.
const SchemaBuilder &builder_of(const uscope_schema_t *s) { return s->builder; }
SchemaBuilder &builder_of(uscope_schema_t *s) { return s->builder; }
}  // namespace uscope

using uscope::guard;

extern "C" {

USCOPE_API uscope_status_t uscope_schema_new(uscope_schema_t **out) {
  return guard([&] {
    USCOPE_CHECK_ARG(out, "uscope_schema_new: out is NULL");
    *out = new uscope_schema;
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_schema_free(uscope_schema_t *schema) { delete schema; }

USCOPE_API uscope_status_t uscope_schema_add_clock(uscope_schema_t *s, uint8_t *out,
                                                   const char *name, uint32_t period_ps) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_clock: schema is NULL");
    const uint8_t id = s->builder.add_clock(name, period_ps);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_scope(uscope_schema_t *s, uint16_t *out,
                                                   const char *name, uint16_t parent_id,
                                                   const char *protocol, uint8_t clock_id) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_scope: schema is NULL");
    const uint16_t id = s->builder.add_scope(name, parent_id, protocol, clock_id);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_enum(uscope_schema_t *s, uint8_t *out,
                                                  const char *name, const char *const *values,
                                                  uint16_t count) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_enum: schema is NULL");
    const uint8_t id = s->builder.add_enum(name, values, count);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_storage(uscope_schema_t *s, uint16_t *out,
                                                     const char *name, uint16_t scope_id,
                                                     uint16_t num_slots, uint16_t flags,
                                                     const uscope_field_t *fields,
                                                     uint16_t num_fields,
                                                     const uscope_field_t *props, uint16_t num_properties) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_storage: schema is NULL");
    const uint16_t id = s->builder.add_storage(name, scope_id, num_slots, flags, fields, num_fields,
                                               props, num_properties);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_event(uscope_schema_t *s, uint16_t *out,
                                                   const char *name, uint16_t scope_id,
                                                   const uscope_field_t *fields, uint16_t num_fields) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_event: schema is NULL");
    const uint16_t id = s->builder.add_event(name, scope_id, fields, num_fields);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_summary_field(uscope_schema_t *s, uint16_t *out,
                                                           const char *name, uint8_t type,
                                                           uint16_t scope_id) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_summary_field: schema is NULL");
    const uint16_t id = s->builder.add_summary_field(name, type, scope_id);
    if (out) *out = id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_add_dut_property(uscope_schema_t *s, const char *key,
                                                         const char *value) {
  return guard([&] {
    USCOPE_CHECK_ARG(s, "uscope_schema_add_dut_property: schema is NULL");
    s->builder.add_dut_property(key, value);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_find_storage(const uscope_schema_t *s, uint16_t *out, const char *name) {
  return guard([&] {
    USCOPE_CHECK_ARG(s && name && out, "uscope_schema_find_storage: NULL argument");
    *out = uscope::find_storage(s->builder.schema(), name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_schema_find_event(const uscope_schema_t *s, uint16_t *out, const char *name) {
  return guard([&] {
    USCOPE_CHECK_ARG(s && name && out, "uscope_schema_find_event: NULL argument");
    *out = uscope::find_event(s->builder.schema(), name);
    return USCOPE_OK;
  });
}

}  // extern "C"
