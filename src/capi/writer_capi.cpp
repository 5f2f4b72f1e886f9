// extern "C" writer. The per-cycle functions inline the Writer's hot path;
// they are noexcept and cannot throw, so they need no guard.
#include <cstring>
#include <vector>

#include "capi/guard.hpp"
#include "format/compress.hpp"
#include "schema/schema_lookup.hpp"
#include "uscope/uscope.h"
#include "schema/schema_builder.hpp"
#include "writer/writer.hpp"

namespace uscope {
const Schema &schema_of(const uscope_schema_t *s);           // schema_capi.cpp
const SchemaBuilder &builder_of(const uscope_schema_t *s);  // schema_capi.cpp
}

using uscope::guard;

namespace {
uscope_status_t null_writer() {
  uscope::set_thread_error("writer handle is NULL");
  return USCOPE_ERR_INVALID_ARGUMENT;
}
}  // namespace

extern "C" {

USCOPE_API const char *uscope_compression_name(uint32_t method) {
  const auto *m = uscope::compression_by_id(method);
  return m ? m->name : nullptr;
}

USCOPE_API uscope_status_t uscope_compression_find(uint32_t *out_method, const char *name) {
  return guard([&] {
    USCOPE_CHECK_ARG(out_method && name, "uscope_compression_find: NULL argument");
    const auto *m = uscope::compression_by_name(name);
    if (!m) uscope::fail(USCOPE_ERR_UNKNOWN_COMPRESSION, "compression method \"%s\" is unknown", name);
    *out_method = m->id;
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_writer_options_init(uscope_writer_options_t *opts) {
  if (opts) uscope::Writer::default_options(opts);
}

USCOPE_API uscope_status_t uscope_writer_open(uscope_writer_t **out, const char *path,
                                              const uscope_schema_t *schema,
                                              const uscope_dut_property_t *props,
                                              uint32_t num_props,
                                              const uscope_writer_options_t *opts) {
  return guard([&] {
    USCOPE_CHECK_ARG(out, "uscope_writer_open: out is NULL");
    USCOPE_CHECK_ARG(path, "uscope_writer_open: path is NULL");
    USCOPE_CHECK_ARG(schema, "uscope_writer_open: schema is NULL");
    const auto &own = uscope::builder_of(schema).dut_properties();
    if (own.empty()) {
      *out = new uscope_writer(path, uscope::schema_of(schema), props, num_props, opts);
      return USCOPE_OK;
    }
    // The schema's properties come first, in call order, then props[]. props[]
    // is checked here, before the merge, so that messages keep its indices.
    USCOPE_CHECK_ARG(!num_props || props, "uscope_writer_open: props is NULL but num_props is %u",
                     num_props);
    std::vector<uscope_dut_property_t> all;
    all.reserve(own.size() + num_props);
    for (const auto &d : own) all.push_back({d.key.c_str(), d.value.c_str()});
    for (uint32_t i = 0; i < num_props; ++i) {
      USCOPE_CHECK_ARG(props[i].key && props[i].value,
                       "uscope_writer_open: DUT property %u has a NULL key or value", i);
      for (const auto &d : own)
        USCOPE_CHECK_ARG(d.key != props[i].key,
                         "uscope_writer_open: DUT property \"%s\" (props[%u]) is set by the schema "
                         "already (uscope_schema_add_dut_property); a key is set once",
                         props[i].key, i);
      all.push_back(props[i]);
    }
    *out = new uscope_writer(path, uscope::schema_of(schema), all.data(),
                             static_cast<uint32_t>(all.size()), opts);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_writer_finish(uscope_writer_t *w) {
  if (!w) return null_writer();
  return guard([&] { return w->impl.close(); });
}

USCOPE_API uscope_status_t uscope_writer_close(uscope_writer_t *w) {
  if (!w) return USCOPE_OK;
  const uscope_status_t s = guard([&] { return w->impl.close(); });
  if (!w->impl.is_producer()) delete w;  // a producer is freed with its writer
  return s;
}

USCOPE_API uscope_status_t uscope_writer_add_producer(uscope_writer_t *w, uscope_writer_t **out) {
  return guard([&] {
    USCOPE_CHECK_ARG(w, "uscope_writer_add_producer: writer is NULL");
    USCOPE_CHECK_ARG(out, "uscope_writer_add_producer: out_producer is NULL");
    return w->impl.add_producer(out);
  });
}

USCOPE_API const char *uscope_writer_error(const uscope_writer_t *w) {
  return w ? w->impl.error_message() : "";
}

USCOPE_API uscope_status_t uscope_writer_find_storage(const uscope_writer_t *w, uint16_t *out, const char *name) {
  return guard([&] {
    USCOPE_CHECK_ARG(w && name && out, "uscope_writer_find_storage: NULL argument");
    *out = uscope::find_storage(w->impl.schema(), name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_writer_find_event(const uscope_writer_t *w, uint16_t *out, const char *name) {
  return guard([&] {
    USCOPE_CHECK_ARG(w && name && out, "uscope_writer_find_event: NULL argument");
    *out = uscope::find_event(w->impl.schema(), name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_begin_cycle(uscope_writer_t *w, uint64_t time_ps) {
  return w ? w->impl.begin_cycle(time_ps) : null_writer();
}

USCOPE_API uscope_status_t uscope_end_cycle(uscope_writer_t *w) {
  return w ? w->impl.end_cycle() : null_writer();
}

USCOPE_API uscope_status_t uscope_slot_set(uscope_writer_t *w, uint16_t storage_id, uint16_t slot,
                                           uint16_t field, uint64_t value) {
  return w ? w->impl.slot_set(storage_id, slot, field, value) : null_writer();
}

USCOPE_API uscope_status_t uscope_slot_clear(uscope_writer_t *w, uint16_t storage_id,
                                             uint16_t slot) {
  return w ? w->impl.slot_clear(storage_id, slot) : null_writer();
}

USCOPE_API uscope_status_t uscope_slot_add(uscope_writer_t *w, uint16_t storage_id, uint16_t slot,
                                           uint16_t field, uint64_t value) {
  return w ? w->impl.slot_add(storage_id, slot, field, value) : null_writer();
}

USCOPE_API uscope_status_t uscope_prop_set(uscope_writer_t *w, uint16_t storage_id,
                                           uint16_t prop_index, uint64_t value) {
  return w ? w->impl.prop_set(storage_id, prop_index, value) : null_writer();
}

USCOPE_API uscope_status_t uscope_event(uscope_writer_t *w, uint16_t event_type_id,
                                        const void *payload, uint32_t payload_size) {
  return w ? w->impl.event(event_type_id, payload, payload_size) : null_writer();
}

USCOPE_API uscope_status_t uscope_writer_flush(uscope_writer_t *w) {
  return w ? w->impl.flush() : null_writer();
}

USCOPE_API uscope_status_t uscope_string_insert(uscope_writer_t *w, uint32_t *out_index,
                                                const char *str) {
  return guard([&] {
    USCOPE_CHECK_ARG(w, "uscope_string_insert: writer is NULL");
    USCOPE_CHECK_ARG(str, "uscope_string_insert: str is NULL");
    USCOPE_CHECK_ARG(out_index, "uscope_string_insert: out_index is NULL");
    return w->impl.string_insert(str, out_index);
  });
}

USCOPE_API uscope_status_t uscope_set_checkpoint_callback(uscope_writer_t *w,
                                                          uscope_checkpoint_fn fn,
                                                          void *user_data) {
  return guard([&] {
    USCOPE_CHECK_ARG(w, "uscope_set_checkpoint_callback: writer is NULL");
    return w->impl.set_checkpoint_callback(fn, user_data);
  });
}

USCOPE_API uscope_status_t uscope_checkpoint_storage(uscope_writer_t *w, uint16_t storage_id,
                                                     const uint8_t *valid_mask,
                                                     const void *slot_data,
                                                     uint32_t num_valid_slots) {
  return guard([&] {
    USCOPE_CHECK_ARG(w, "uscope_checkpoint_storage: writer is NULL");
    return w->impl.checkpoint_storage(storage_id, valid_mask, slot_data, num_valid_slots);
  });
}

USCOPE_API uscope_status_t uscope_writer_stats(const uscope_writer_t *w,
                                               uscope_writer_stats_t *out) {
  return guard([&] {
    USCOPE_CHECK_ARG(w, "uscope_writer_stats: writer is NULL");
    USCOPE_CHECK_ARG(out, "uscope_writer_stats: out is NULL");
    USCOPE_CHECK_ARG(out->struct_size >= 8, "uscope_writer_stats: set out->struct_size first");
    w->impl.stats(out);
    return USCOPE_OK;
  });
}

}  // extern "C"
