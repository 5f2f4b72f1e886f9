// extern "C" reader: thin wrappers over uscope::TraceReader.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capi/guard.hpp"
#include "capi/reader_handle.hpp"
#include "schema/schema_lookup.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/uscope.h"


struct uscope_state {
  std::vector<uscope::StorageState> states;
};

// The iterators take their buffers from the reader's spares and give them
// back when freed (reader_handle.hpp), so that their capacity outlives them.
struct uscope_event_iter {
  uscope_reader *r;
  uint64_t t0, t1;
  size_t next_segment;
  std::shared_ptr<uscope_reader::Spares> spares;
  std::vector<uscope_event_t> events;
  std::vector<uint8_t> payloads;
  size_t pos = 0;
  ~uscope_event_iter() {
    if (!spares) return;
    spares->events = std::move(events);
    spares->event_payloads = std::move(payloads);
  }
};

struct uscope_item_iter {
  std::shared_ptr<uscope_reader::Spares> spares;
  std::vector<uscope_item_t> items;
  std::vector<uint8_t> payloads;
  size_t pos = 0;
  ~uscope_item_iter() {
    if (!spares) return;
    spares->items = std::move(items);
    spares->item_payloads = std::move(payloads);
  }
};

// A replay over [t0, t1] in batches of the caller's size (uscope_replay_fill).
// Items go straight into the caller's array while the core decodes; only the
// rest of the frame that filled it waits here (pending), for the next fill.
struct uscope_replay {
  uscope_reader *r;        // NULL once the reader is closed
  uscope_replay *prev = nullptr, *next = nullptr;  // the reader's list
  uint64_t generation;     // the reader's, when made
  uint64_t t0, t1;
  size_t next_segment;     // the next segment to begin
  bool finished = false;   // past t1, or no segment left
  uscope_status_t error = USCOPE_OK;  // sticky: the first failure of a fill
  std::string error_message;
  std::vector<uscope::StorageState> states;
  uscope::TraceReader::ReplayPart part;
  std::vector<uscope_item_t> pending;
  size_t pending_pos = 0;
  // The pending items' payloads, copied: the reader's buffer that holds the
  // rest may be reused by another call on the reader before the next fill.
  // Two buffers, so that starting the next frame's pending items does not
  // overwrite payloads handed out by this fill.
  std::vector<uint8_t> pending_payloads[2];
  int pending_buf = 0;
};

// FillVisitor::put writes items as 8-byte little-endian words of this layout.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "FillVisitor::put composes little-endian words");
static_assert(sizeof(uscope_item_t) == 48 && offsetof(uscope_item_t, is_event) == 8 &&
                  offsetof(uscope_item_t, action) == 12 && offsetof(uscope_item_t, storage_id) == 14 &&
                  offsetof(uscope_item_t, slot) == 16 && offsetof(uscope_item_t, field) == 18 &&
                  offsetof(uscope_item_t, value) == 24 && offsetof(uscope_item_t, event_type_id) == 32 &&
                  offsetof(uscope_item_t, payload_size) == 36 && offsetof(uscope_item_t, payload) == 40,
              "uscope_item_t's layout, as FillVisitor::put writes it");

static_assert(sizeof(uscope_mipmap_entry_t) == sizeof(uscope::MipmapEntry),
              "uscope_mipmap_entry_t mirrors uscope::MipmapEntry (spec §6.2)");

namespace {

using uscope::fail;

// Runs body; on failure also keeps the message on the reader.
template <class F>
uscope_status_t guard_r(const uscope_reader_t *r, F &&body) {
  const uscope_status_t s = uscope::guard(body);
  if (s < 0 && r) const_cast<uscope_reader_t *>(r)->message = uscope_last_error();
  return s;
}

#define NEED(cond, ...) USCOPE_CHECK_ARG(cond, __VA_ARGS__)

const uscope::Schema &schema(const uscope_reader_t *r) { return r->impl.schema(); }

void fill_field(const uscope::Schema &s, const uscope::FieldDef &f, uint32_t offset,
                uscope_field_info_t *out) {
  out->name = s.name(f.name);
  out->type = f.type;
  out->enum_id = f.enum_id;
  out->role = f.role;
  out->pair_id = f.pair_id;
  out->size = uscope::wire::field_type_size(f.type);
  out->offset = offset;
}

}  // namespace

extern "C" {

USCOPE_API uscope_status_t uscope_reader_open(uscope_reader_t **out, const char *path) {
  return uscope::guard([&] {
    NEED(out, "uscope_reader_open: out is NULL");
    NEED(path, "uscope_reader_open: path is NULL");
    *out = new uscope_reader(path, 0);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_open_ex(uscope_reader_t **out, const char *path, uint32_t flags) {
  return uscope::guard([&] {
    NEED(out, "uscope_reader_open_ex: out is NULL");
    NEED(path, "uscope_reader_open_ex: path is NULL");
    NEED(!(flags & ~uint32_t{USCOPE_READ_STRICT}), "uscope_reader_open_ex: unknown flag bits 0x%x",
         flags & ~uint32_t{USCOPE_READ_STRICT});
    *out = new uscope_reader(path, flags);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_defects(const uscope_reader_t *r, uscope_defect_t *out, uint32_t *count,
                                                 uint32_t capacity) {
  return guard_r(r, [&] {
    NEED(r && count, "uscope_reader_defects: NULL argument");
    NEED(out || capacity == 0, "uscope_reader_defects: out is NULL with capacity %u", capacity);
    const auto entries = r->impl.defects().entries();
    for (size_t i = 0; i < entries.size() && i < capacity; ++i) {
      const auto &e = entries[i];
      out[i] = uscope_defect_t{static_cast<uint32_t>(e.kind), e.first.segment, e.count, e.first.offset,
                               e.first.time_ps, e.first.subject, 0};
    }
    *count = static_cast<uint32_t>(entries.size());
    return USCOPE_OK;
  });
}

USCOPE_API const char *uscope_defect_name(uint32_t kind) {
  const auto *k = uscope::defect_info(kind);
  return k ? k->name : nullptr;
}

USCOPE_API const char *uscope_defect_description(uint32_t kind) {
  const auto *k = uscope::defect_info(kind);
  return k ? k->what : nullptr;
}

USCOPE_API uscope_status_t uscope_reader_check(uscope_reader_t *r, uscope_progress_fn progress, void *ctx) {
  return guard_r(r, [&] {
    NEED(r, "uscope_reader_check: reader is NULL");
    std::function<void(uint64_t, uint64_t)> fn;
    if (progress) fn = [&](uint64_t done, uint64_t total) { progress(ctx, done, total); };
    r->impl.check(fn);
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_reader_close(uscope_reader_t *r) { delete r; }
}  // extern "C"

uscope_reader::~uscope_reader() {
  for (uscope_replay *c = cursors; c; c = c->next) c->r = nullptr;
}

extern "C" {

USCOPE_API const char *uscope_reader_error(const uscope_reader_t *r) {
  return r ? r->message.c_str() : "";
}

USCOPE_API uscope_status_t uscope_reader_info(const uscope_reader_t *r, uscope_file_info_t *out) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_info: NULL argument");
    NEED(out->struct_size >= 8, "uscope_reader_info: set out->struct_size");
    uscope_file_info_t i{};
    i.struct_size = sizeof i;
    const auto &h = r->impl.header();
    i.version_major = h.version_major;
    i.version_minor = h.version_minor;
    i.flags = h.flags;
    i.complete = r->impl.complete();
    i.compression = r->impl.compression().id;
    i.interleaved = (h.flags & uscope::wire::F_INTERLEAVED_DELTAS) != 0;
    i.num_segments = static_cast<uint32_t>(r->impl.segments().size());
    i.total_time_ps = h.total_time_ps;
    i.last_time_ps = r->impl.segments().empty() ? 0 : r->impl.segments().back().header.time_end_ps;
    i.checkpoint_interval_ps = r->impl.checkpoint_interval_ps();
    i.file_bytes = r->impl.file_size();
    i.header_num_segments = h.num_segments;
    i.preamble_end = h.preamble_end;
    i.section_table_offset = h.section_table_offset;
    i.tail_offset = h.tail_offset;
    i.time_grid_ps = r->impl.time_grid_ps();
    const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof i);
    std::memcpy(out, &i, n);
    out->struct_size = n;
    return USCOPE_OK;
  });
}

USCOPE_API int uscope_is_complete(const uscope_reader_t *r) { return r && r->impl.complete() ? 1 : 0; }

USCOPE_API uint32_t uscope_reader_dut_count(const uscope_reader_t *r) {
  return r ? static_cast<uint32_t>(r->impl.dut().size()) : 0;
}

USCOPE_API uscope_status_t uscope_reader_dut_property(const uscope_reader_t *r, const char **key,
                                                      const char **value, uint32_t index) {
  return guard_r(r, [&] {
    NEED(r && key && value, "uscope_reader_dut_property: NULL argument");
    if (index >= r->impl.dut().size())
      fail(USCOPE_ERR_NOT_FOUND, "DUT property %u: the file has %zu", index, r->impl.dut().size());
    *key = schema(r).name(r->impl.dut()[index].key);
    *value = schema(r).name(r->impl.dut()[index].value);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_dut_lookup(const uscope_reader_t *r, const char **value,
                                                    const char *key) {
  return guard_r(r, [&] {
    NEED(r && key && value, "uscope_reader_dut_lookup: NULL argument");
    for (const auto &p : r->impl.dut()) {
      const char *k = schema(r).str(p.key);
      if (k && std::strcmp(k, key) == 0) {
        *value = schema(r).name(p.value);
        return USCOPE_OK;
      }
    }
    fail(USCOPE_ERR_NOT_FOUND, "no DUT property \"%s\"", key);
  });
}

USCOPE_API uscope_status_t uscope_reader_schema_counts(const uscope_reader_t *r,
                                                       uscope_schema_counts_t *out) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_schema_counts: NULL argument");
    NEED(out->struct_size >= 8, "uscope_reader_schema_counts: set out->struct_size");
    const auto &s = schema(r);
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    c.clocks = static_cast<uint32_t>(s.clocks.size());
    c.scopes = static_cast<uint32_t>(s.scopes.size());
    c.enums = static_cast<uint32_t>(s.enums.size());
    c.storages = static_cast<uint32_t>(s.storages.size());
    c.event_types = static_cast<uint32_t>(s.events.size());
    c.summary_fields = static_cast<uint32_t>(s.summary_fields.size());
    const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof c);
    std::memcpy(out, &c, n);
    out->struct_size = n;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_clock(const uscope_reader_t *r, uscope_clock_info_t *out,
                                               uint32_t id) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_clock: NULL argument");
    const auto &s = schema(r);
    if (id >= s.clocks.size()) fail(USCOPE_ERR_NOT_FOUND, "clock %u: the schema has %zu", id, s.clocks.size());
    out->name = s.name(s.clocks[id].name);
    out->period_ps = s.clocks[id].period_ps;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_scope(const uscope_reader_t *r, uscope_scope_info_t *out,
                                               uint32_t id) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_scope: NULL argument");
    const auto &s = schema(r);
    if (id >= s.scopes.size()) fail(USCOPE_ERR_NOT_FOUND, "scope %u: the schema has %zu", id, s.scopes.size());
    const auto &sc = s.scopes[id];
    out->name = s.name(sc.name);
    out->protocol = sc.protocol == uscope::wire::kNoString ? nullptr : s.str(sc.protocol);
    out->parent_id = sc.parent_id;
    out->clock_id = sc.clock_id;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_enum(const uscope_reader_t *r, const char **name, uint32_t *num_values,
                                              uint32_t id) {
  return guard_r(r, [&] {
    NEED(r && name && num_values, "uscope_reader_enum: NULL argument");
    const auto &s = schema(r);
    if (id >= s.enums.size()) fail(USCOPE_ERR_NOT_FOUND, "enum %u: the schema has %zu", id, s.enums.size());
    *name = s.name(s.enums[id].name);
    *num_values = static_cast<uint32_t>(s.enums[id].values.size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_enum_value(const uscope_reader_t *r, const char **name, uint32_t id,
                                                    uint32_t value) {
  return guard_r(r, [&] {
    NEED(r && name, "uscope_reader_enum_value: NULL argument");
    const auto &s = schema(r);
    if (id >= s.enums.size()) fail(USCOPE_ERR_NOT_FOUND, "enum %u: the schema has %zu", id, s.enums.size());
    for (const auto &v : s.enums[id].values)
      if (v.value == value) {
        *name = s.name(v.name);
        return USCOPE_OK;
      }
    fail(USCOPE_ERR_NOT_FOUND, "enum %u has no value %u", id, value);
  });
}

USCOPE_API uscope_status_t uscope_reader_storage(const uscope_reader_t *r, uscope_storage_info_t *out,
                                                 uint16_t id) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_storage: NULL argument");
    const auto &s = schema(r);
    if (id >= s.storages.size()) fail(USCOPE_ERR_UNKNOWN_STORAGE, "storage %u: the schema has %zu", id, s.storages.size());
    const auto &st = s.storages[id];
    out->name = s.name(st.name);
    out->scope_id = st.scope_id;
    out->num_slots = st.num_slots;
    out->flags = st.flags;
    out->num_fields = static_cast<uint16_t>(st.fields.size());
    out->num_properties = static_cast<uint16_t>(st.props.size());
    out->slot_size = r->impl.layouts()[id].slot_size;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_storage_field(const uscope_reader_t *r, uscope_field_info_t *out, uint16_t id,
                                                       uint16_t index, int is_property) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_storage_field: NULL argument");
    const auto &s = schema(r);
    if (id >= s.storages.size()) fail(USCOPE_ERR_UNKNOWN_STORAGE, "storage %u: the schema has %zu", id, s.storages.size());
    const auto &fields = is_property ? s.storages[id].props : s.storages[id].fields;
    if (index >= fields.size())
      fail(is_property ? USCOPE_ERR_UNKNOWN_PROPERTY : USCOPE_ERR_UNKNOWN_FIELD, "storage %u has %zu %s", id,
           fields.size(), is_property ? "properties" : "fields");
    const auto &L = r->impl.layouts()[id];
    fill_field(s, fields[index], is_property ? L.prop_off[index] : L.field_off[index], out);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_event_type(const uscope_reader_t *r, uscope_event_type_info_t *out,
                                                    uint16_t id) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_event_type: NULL argument");
    const auto &s = schema(r);
    if (id >= s.events.size()) fail(USCOPE_ERR_UNKNOWN_EVENT, "event type %u: the schema has %zu", id, s.events.size());
    out->name = s.name(s.events[id].name);
    out->scope_id = s.events[id].scope_id;
    out->num_fields = static_cast<uint16_t>(s.events[id].fields.size());
    out->payload_size = uscope::packed_size(s.events[id].fields);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_event_field(const uscope_reader_t *r, uscope_field_info_t *out, uint16_t id,
                                                     uint16_t index) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_event_field: NULL argument");
    const auto &s = schema(r);
    if (id >= s.events.size()) fail(USCOPE_ERR_UNKNOWN_EVENT, "event type %u: the schema has %zu", id, s.events.size());
    const auto &fields = s.events[id].fields;
    if (index >= fields.size()) fail(USCOPE_ERR_UNKNOWN_FIELD, "event type %u has %zu fields", id, fields.size());
    uint32_t off = 0;
    for (uint16_t i = 0; i < index; ++i) off += uscope::wire::field_type_size(fields[i].type);
    fill_field(s, fields[index], off, out);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_find_storage(const uscope_reader_t *r, uint16_t *out, const char *name) {
  return guard_r(r, [&] {
    NEED(r && name && out, "uscope_reader_find_storage: NULL argument");
    *out = uscope::find_storage(schema(r), name);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_find_field(const uscope_reader_t *r, uint16_t *out, uint16_t id,
                                                    const char *name, int is_property) {
  return guard_r(r, [&] {
    NEED(r && name && out, "uscope_reader_find_field: NULL argument");
    *out = uscope::find_field(schema(r), id, name, is_property != 0);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_find_event(const uscope_reader_t *r, uint16_t *out, const char *name) {
  return guard_r(r, [&] {
    NEED(r && name && out, "uscope_reader_find_event: NULL argument");
    *out = uscope::find_event(schema(r), name);
    return USCOPE_OK;
  });
}

USCOPE_API uint32_t uscope_reader_string_count(const uscope_reader_t *r) {
  return r ? static_cast<uint32_t>(r->impl.strings().size()) : 0;
}

USCOPE_API uscope_status_t uscope_reader_string(const uscope_reader_t *r, const char **str, uint32_t *len,
                                                uint32_t index) {
  return guard_r(r, [&] {
    NEED(r && str, "uscope_reader_string: NULL argument");
    if (index >= r->impl.strings().size())
      fail(USCOPE_ERR_NOT_FOUND, "string %u: the table has %zu", index, r->impl.strings().size());
    *str = r->impl.strings()[index].c_str();
    if (len) *len = static_cast<uint32_t>(r->impl.strings()[index].size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_summary(const uscope_reader_t *r, uscope_summary_info_t *out) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_summary: NULL argument");
    NEED(out->struct_size >= 8, "uscope_reader_summary: set out->struct_size");
    uscope_summary_info_t i{};
    i.struct_size = sizeof i;
    if (const auto &t = r->impl.summary()) {
      i.present = 1;
      i.base_interval_cycles = t->base_interval_cycles;
      i.fan_out = t->fan_out;
      i.total_instructions = t->total_instructions;
      i.density_levels = static_cast<uint32_t>(t->density.size());
      i.num_counters = static_cast<uint32_t>(t->counters.size());
    }
    const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof i);
    std::memcpy(out, &i, n);
    out->struct_size = n;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_summary_density(const uscope_reader_t *r, const uint32_t **counts,
                                                         uint32_t *num, uint32_t level) {
  return guard_r(r, [&] {
    NEED(r && counts && num, "uscope_reader_summary_density: NULL argument");
    const auto &t = r->impl.summary();
    if (!t || level >= t->density.size()) fail(USCOPE_ERR_NOT_FOUND, "no density level %u", level);
    auto it = r->density.find(level);
    if (it == r->density.end()) {
      std::vector<uint32_t> v(t->density[level].count);
      r->impl.summary_density(t->density[level], 0, v.size(), v.data());
      it = r->density.emplace(level, std::move(v)).first;
    }
    *counts = it->second.data();
    *num = static_cast<uint32_t>(it->second.size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_summary_counter(const uscope_reader_t *r, const char **name,
                                                         uint16_t *storage_id, uint32_t *num_levels,
                                                         uint32_t index) {
  return guard_r(r, [&] {
    NEED(r && name && storage_id && num_levels, "uscope_reader_summary_counter: NULL argument");
    const auto &t = r->impl.summary();
    if (!t || index >= t->counters.size()) fail(USCOPE_ERR_NOT_FOUND, "no summary counter %u", index);
    *name = t->counters[index].name.c_str();
    *storage_id = t->counters[index].storage_id;
    *num_levels = static_cast<uint32_t>(t->counters[index].levels.size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_summary_counter_level(const uscope_reader_t *r, const uscope_mipmap_entry_t **entries,
                                                               uint32_t *num,
                                                               uint32_t index,
                                                               uint32_t level) {
  return guard_r(r, [&] {
    NEED(r && entries && num, "uscope_reader_summary_counter_level: NULL argument");
    const auto &t = r->impl.summary();
    if (!t || index >= t->counters.size() || level >= t->counters[index].levels.size())
      fail(USCOPE_ERR_NOT_FOUND, "no summary counter %u level %u", index, level);
    auto it = r->mipmap.find({index, level});
    if (it == r->mipmap.end()) {
      const uscope::TsumArray &a = t->counters[index].levels[level];
      std::vector<uscope::MipmapEntry> v(a.count);
      r->impl.summary_mipmap(a, 0, v.size(), v.data());
      it = r->mipmap.emplace(std::make_pair(index, level), std::move(v)).first;
    }
    *entries = reinterpret_cast<const uscope_mipmap_entry_t *>(it->second.data());
    *num = static_cast<uint32_t>(it->second.size());
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_state_at(uscope_reader_t *r, uscope_state_t **out, uint64_t t) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_state_at: NULL argument");
    auto *s = new uscope_state;
    try {
      s->states = r->impl.state_at(t);
    } catch (...) {
      delete s;
      throw;
    }
    *out = s;
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_state_free(uscope_state_t *s) { delete s; }

}  // extern "C"

namespace {
const uscope::StorageState &storage_of(const uscope_state_t *s, uint16_t id) {
  NEED(s, "state is NULL");
  if (id >= s->states.size()) fail(USCOPE_ERR_UNKNOWN_STORAGE, "storage %u: the schema has %zu", id, s->states.size());
  return s->states[id];
}
void need_slot(const uscope::StorageState &st, uint16_t slot) {
  if (slot >= st.layout().num_slots)
    fail(USCOPE_ERR_UNKNOWN_SLOT, "slot %u: storage %u has %u slots", slot, st.layout().storage_id, st.layout().num_slots);
}
}  // namespace

extern "C" {

USCOPE_API uscope_status_t uscope_state_slot_valid(const uscope_state_t *s, int *valid, uint16_t id, uint16_t slot) {
  return uscope::guard([&] {
    NEED(valid, "uscope_state_slot_valid: valid is NULL");
    const auto &st = storage_of(s, id);
    need_slot(st, slot);
    *valid = st.valid(slot) ? 1 : 0;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_state_slot_field(const uscope_state_t *s, uint64_t *value, uint16_t id,
                                                   uint16_t slot, uint16_t field) {
  return uscope::guard([&] {
    NEED(value, "uscope_state_slot_field: value is NULL");
    const auto &st = storage_of(s, id);
    need_slot(st, slot);
    if (field >= st.layout().field_off.size())
      fail(USCOPE_ERR_UNKNOWN_FIELD, "field %u: storage %u has %zu", field, id, st.layout().field_off.size());
    *value = st.get(slot, field);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_state_property(const uscope_state_t *s, uint64_t *value, uint16_t id,
                                                 uint16_t prop) {
  return uscope::guard([&] {
    NEED(value, "uscope_state_property: value is NULL");
    const auto &st = storage_of(s, id);
    if (prop >= st.layout().prop_off.size())
      fail(USCOPE_ERR_UNKNOWN_PROPERTY, "property %u: storage %u has %zu", prop, id, st.layout().prop_off.size());
    *value = st.prop(prop);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_state_occupancy(const uscope_state_t *s, uint32_t *n, uint16_t id) {
  return uscope::guard([&] {
    NEED(n, "uscope_state_occupancy: out is NULL");
    *n = storage_of(s, id).occupancy();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_events_in_range(uscope_reader_t *r, uscope_event_iter_t **out, uint64_t t0,
                                                         uint64_t t1) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_events_in_range: NULL argument");
    const auto &segs = r->impl.segments();
    // Segments overlap only at boundary times: start with the first one whose
    // (inclusive) end reaches t0.
    auto first = std::lower_bound(segs.begin(), segs.end(), t0,
                                  [](const uscope::SegmentInfo &s, uint64_t v) { return s.header.time_end_ps < v; });
    auto *it = new uscope_event_iter{r, t0, t1, static_cast<size_t>(first - segs.begin()), r->spares, {}, {}, 0};
    it->events = std::move(r->spares->events);
    it->payloads = std::move(r->spares->event_payloads);
    it->events.clear();
    it->payloads.clear();
    *out = it;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_event_iter_next(uscope_event_iter_t *it, uscope_event_t *ev) {
  // The step within a segment already copied out cannot fail: no guard, so
  // that a call per event costs a copy and a compare.
  if (it && ev && it->pos < it->events.size()) {
    *ev = it->events[it->pos++];
    return USCOPE_OK;
  }
  if (!it) return uscope::guard([&]() -> uscope_status_t { fail(USCOPE_ERR_INVALID_ARGUMENT, "iterator is NULL"); });
  return guard_r(it->r, [&] {
    NEED(ev, "uscope_event_iter_next: ev is NULL");
    const auto &segs = it->r->impl.segments();
    while (it->pos == it->events.size()) {
      if (it->t1 < it->t0 || it->next_segment >= segs.size() ||
          segs[it->next_segment].header.time_start_ps > it->t1)
        return USCOPE_DONE;
      // One segment at a time, the way events_in_range reads it (events
      // only, no checkpoint, nothing after t1), copied out because other
      // calls on the reader may reuse its buffers before the next step.
      const auto &got = it->r->impl.segment_events(it->next_segment++, it->t0, it->t1);
      it->pos = 0;
      size_t bytes = 0;
      for (const auto &e : got) bytes += e.payload_size;
      // Sized once per segment (no regrowth), over the capacity kept.
      it->payloads.resize(bytes);
      it->events.resize(got.size());
      uint8_t *p = it->payloads.data();
      uscope_event_t *o = it->events.data();
      for (const auto &e : got) {
        if (e.payload_size) std::memcpy(p, e.payload, e.payload_size);
        *o++ = {e.time_ps, e.event_type_id, e.payload_size, p};
        p += e.payload_size;
      }
    }
    *ev = it->events[it->pos++];
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_event_iter_free(uscope_event_iter_t *it) { delete it; }

USCOPE_API uscope_status_t uscope_reader_segment(const uscope_reader_t *r, uscope_segment_info_t *out,
                                                 uint32_t index) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_segment: NULL argument");
    const auto &segs = r->impl.segments();
    if (index >= segs.size()) fail(USCOPE_ERR_NOT_FOUND, "segment %u: the reader has %zu", index, segs.size());
    const auto &s = segs[index];
    out->offset = s.offset;
    out->time_start_ps = s.header.time_start_ps;
    out->time_end_ps = s.header.time_end_ps;
    out->checkpoint_size = s.header.checkpoint_size;
    out->deltas_compressed_size = s.header.deltas_compressed_size;
    out->deltas_raw_size = s.header.deltas_raw_size;
    out->num_frames = s.header.num_frames;
    out->num_frames_active = s.header.num_frames_active;
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_reader_segment_items(uscope_reader_t *r, uscope_item_iter_t **out,
                                                       uint32_t index) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_segment_items: NULL argument");
    if (index >= r->impl.segments().size())
      fail(USCOPE_ERR_NOT_FOUND, "segment %u: the reader has %zu", index, r->impl.segments().size());
    auto it = std::make_unique<uscope_item_iter>();
    it->spares = r->spares;
    it->items = std::move(r->spares->items);
    it->payloads = std::move(r->spares->item_payloads);
    it->items.clear();
    it->payloads.clear();
    // Payloads are at most the segment's raw deltas: reserved once, so that
    // they are rarely copied to a larger buffer while the segment is read.
    // The header's raw size is only a claim until the blob is decompressed
    // (a 12 KB file claimed 1 GB, found by fuzz_cli_uscope): the reservation
    // is capped by what the stored blob can decode to in LZ4, at most 255
    // bytes per byte (compress.cpp); a zstd blob that decodes to more grows
    // the vector.
    const uscope::SegmentHeader &h = r->impl.segments()[index].header;
    it->payloads.reserve(std::min<uint64_t>(h.deltas_raw_size, uint64_t{255} * h.deltas_compressed_size));
    struct Collect {
      uscope_item_iter &it;
      void frame(uint64_t) {}
      void op(uint64_t t, const uscope::DeltaOp &o) {
        uscope_item_t i{};
        i.time_ps = t;
        i.action = o.action;
        i.storage_id = o.storage_id;
        i.slot = o.slot;
        i.field = o.field;
        i.value = o.value;
        it.items.push_back(i);
      }
      void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
        uscope_item_t i{};
        i.time_ps = t;
        i.is_event = 1;
        i.event_type_id = id;
        i.payload_size = n;
        i.payload = reinterpret_cast<const uint8_t *>(it.payloads.size());
        it.items.push_back(i);
        it.payloads.insert(it.payloads.end(), p, p + n);
      }
    };
    auto st = r->impl.initial_state();
    // A segment that does not decode gives no items (counted in the
    // reader's defects), as it gives no events to events_in_range.
    if (!r->impl.replay(index, st, Collect{*it})) {
      it->items.clear();
      it->payloads.clear();
    }
    for (auto &i : it->items)
      if (i.is_event) i.payload = it->payloads.data() + reinterpret_cast<uintptr_t>(i.payload);
    *out = it.release();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_item_iter_next(uscope_item_iter_t *it, uscope_item_t *item) {
  if (it && item && it->pos < it->items.size()) {  // cannot fail: no guard
    *item = it->items[it->pos++];
    return USCOPE_OK;
  }
  return uscope::guard([&] {
    NEED(it && item, "uscope_item_iter_next: NULL argument");
    if (it->pos == it->items.size()) return USCOPE_DONE;
    *item = it->items[it->pos++];
    return USCOPE_OK;
  });
}

USCOPE_API void uscope_item_iter_free(uscope_item_iter_t *it) { delete it; }

USCOPE_API uscope_status_t uscope_reader_poll_new_segments(uscope_reader_t *r, uint32_t *found) {
  return guard_r(r, [&] {
    NEED(r && found, "uscope_reader_poll_new_segments: NULL argument");
    const size_t before = r->impl.segments().size();
    if (r->impl.poll_new_segments()) ++r->generation;
    *found = static_cast<uint32_t>(r->impl.segments().size() - before);
    return USCOPE_OK;
  });
}


}  // extern "C"

namespace {

// The core's visitor of a fill: each item of [t0, t1] straight into the
// caller's array; past its capacity, the rest of that frame into the
// cursor's pending items, and the decoding stops at the next frame. The
// per-item path is inline and writes each item whole; the pending path is
// out of line. kCheckT0: the segment starts before t0 (otherwise no item of
// it can be, and the per-item compare is left out).
template <bool kCheckT0>
struct FillVisitor {
  uscope_replay &c;
  uscope_item_t *out;
  uint32_t n, cap;
  uint64_t t0, t1;  // copies: the item stores cannot be taken to change them
  bool past_t1 = false;

#define USCOPE_FILL_HOT inline __attribute__((always_inline))
  USCOPE_FILL_HOT bool frame(uint64_t t) {
    if (__builtin_expect(t > t1, 0)) {
      past_t1 = true;
      return false;
    }
    return n < cap;
  }
  // An item is written as six 8-byte words composed in registers: field by
  // field it took ten stores, and the store port, not the decoding, set the
  // fill's pace; built aside and copied whole, it was stored in pieces and
  // loaded back in 16-byte halves (a store-forwarding stall per item). The
  // padding bytes are written as zeros.
  static USCOPE_FILL_HOT void put(uscope_item_t &d, uint64_t t, uint64_t w1, uint64_t w2, uint64_t value,
                                  uint64_t w4, const uint8_t *payload) {
    unsigned char *b = reinterpret_cast<unsigned char *>(&d);
    std::memcpy(b + 0, &t, 8);
    std::memcpy(b + 8, &w1, 8);
    std::memcpy(b + 16, &w2, 8);
    std::memcpy(b + 24, &value, 8);
    std::memcpy(b + 32, &w4, 8);
    std::memcpy(b + 40, &payload, 8);
  }
  static USCOPE_FILL_HOT void put_op(uscope_item_t &d, uint64_t t, const uscope::DeltaOp &o) {
    // The decoder has just stored o's 16-bit fields one by one; loaded as one
    // wider word (the compiler merges adjacent loads), no single store can
    // forward it: a stall per op. The empty asm keeps each load its own.
    uint16_t storage = o.storage_id, slot = o.slot, field = o.field;
    __asm__("" : "+r"(storage), "+r"(slot), "+r"(field));
    put(d, t, uint64_t{o.action} << 32 | uint64_t{storage} << 48, uint64_t{slot} | uint64_t{field} << 16, o.value,
        0, nullptr);
  }
  static USCOPE_FILL_HOT void put_event(uscope_item_t &d, uint64_t t, uint16_t id, const uint8_t *p, uint32_t size) {
    put(d, t, 1, 0, 0, uint64_t{id} | uint64_t{size} << 32, p);
  }
  USCOPE_FILL_HOT void op(uint64_t t, const uscope::DeltaOp &o) {
    if (kCheckT0 && t < t0) return;
    if (__builtin_expect(n < cap, 1)) {
      put_op(out[n++], t, o);
    } else {
      uscope_item_t i;
      put_op(i, t, o);
      pend(i, nullptr);
    }
  }
  USCOPE_FILL_HOT void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t size) {
    if (kCheckT0 && t < t0) return;
    if (__builtin_expect(n < cap, 1)) {
      put_event(out[n++], t, id, p, size);
    } else {
      uscope_item_t i;
      put_event(i, t, id, p, size);
      pend(i, p);
    }
  }
#undef USCOPE_FILL_HOT
  __attribute__((noinline)) void pend(const uscope_item_t &i, const uint8_t *payload) {
    if (c.pending.empty()) {
      // Payloads handed out by this fill may sit in the other buffer.
      c.pending_buf ^= 1;
      c.pending_payloads[c.pending_buf].clear();
    }
    c.pending.push_back(i);
    if (i.is_event) {
      // An offset until the frame is done: the buffer may still grow.
      auto &buf = c.pending_payloads[c.pending_buf];
      c.pending.back().payload = reinterpret_cast<const uint8_t *>(buf.size());
      buf.insert(buf.end(), payload, payload + i.payload_size);
    }
  }
};

uscope_status_t replay_fill(uscope_replay &c, uscope_item_t *items, uint32_t *count, uint32_t cap) {
  uint32_t n = 0;
  while (c.pending_pos < c.pending.size() && n < cap) items[n++] = c.pending[c.pending_pos++];
  if (c.pending_pos < c.pending.size() || n == cap) {
    *count = n;
    return USCOPE_OK;
  }
  c.pending.clear();
  c.pending_pos = 0;
  auto &impl = c.r->impl;
  const auto &segs = impl.segments();
  uint32_t got = n;
  while (got < cap && !c.finished) {
    if (c.part.done) {
      if (c.t1 < c.t0 || c.next_segment >= segs.size() || segs[c.next_segment].header.time_start_ps > c.t1) {
        c.finished = true;
        break;
      }
      impl.replay_part_begin(c.next_segment++, c.part);
    }
    // A segment that does not decode ends early (counted in the reader's
    // defects; strict: thrown), as it does for the core's replay.
    bool past_t1;
    if (segs[c.part.segment].header.time_start_ps >= c.t0) {
      FillVisitor<false> v{c, items, got, cap, c.t0, c.t1};
      (void)impl.replay_part(c.states, c.part, v);
      got = v.n;
      past_t1 = v.past_t1;
    } else {
      FillVisitor<true> v{c, items, got, cap, c.t0, c.t1};
      (void)impl.replay_part(c.states, c.part, v);
      got = v.n;
      past_t1 = v.past_t1;
    }
    if (past_t1) c.finished = true;
    // The items given point into this segment's decoded bytes, which the
    // next segment's replace: a fill ends with the segment that gave items.
    if (c.part.done && got > n) break;
  }
  if (!c.pending.empty()) {
    const uint8_t *base = c.pending_payloads[c.pending_buf].data();
    for (auto &i : c.pending)
      if (i.is_event) i.payload = base + reinterpret_cast<uintptr_t>(i.payload);
  }
  *count = got;
  return got ? USCOPE_OK : USCOPE_DONE;
}

}  // namespace

extern "C" {

USCOPE_API uscope_status_t uscope_reader_replay(uscope_reader_t *r, uscope_replay_t **out, uint64_t t0,
                                                uint64_t t1) {
  return guard_r(r, [&] {
    NEED(r && out, "uscope_reader_replay: NULL argument");
    const auto &segs = r->impl.segments();
    auto c = std::make_unique<uscope_replay>();
    c->r = r;
    c->generation = r->generation;
    c->t0 = t0;
    c->t1 = t1;
    // As events_in_range: the first segment whose (inclusive) end reaches t0.
    c->next_segment = static_cast<size_t>(
        std::lower_bound(segs.begin(), segs.end(), t0,
                         [](const uscope::SegmentInfo &s, uint64_t v) { return s.header.time_end_ps < v; }) -
        segs.begin());
    // Everything a fill needs is allocated here or in the first fills, never
    // per fill once warm (test_reader_replay_capi.cpp counts).
    c->states = r->impl.initial_state();
    // Room for the rest of a frame of up to 256 items and 4 KiB of payloads
    // (a larger frame grows them once).
    c->pending.reserve(256);
    for (auto &b : c->pending_payloads) b.reserve(4096);
    size_t last = c->next_segment;
    while (t0 <= t1 && last < segs.size() && segs[last].header.time_start_ps <= t1) ++last;
    r->impl.reserve_segment_buffers(c->next_segment, last);
    c->next = r->cursors;
    if (r->cursors) r->cursors->prev = c.get();
    r->cursors = c.get();
    *out = c.release();
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_replay_fill(uscope_replay_t *c, uscope_item_t *items, uint32_t *count,
                                              uint32_t capacity) {
  if (!c) return uscope::guard([&]() -> uscope_status_t { fail(USCOPE_ERR_INVALID_ARGUMENT, "uscope_replay_fill: cursor is NULL"); });
  uscope_reader *r = c->r;
  const uscope_status_t s = uscope::guard([&]() -> uscope_status_t {
    NEED(items && count, "uscope_replay_fill: NULL argument");
    *count = 0;
    NEED(capacity > 0, "uscope_replay_fill: capacity is 0");
    if (!r) fail(USCOPE_ERR_BAD_STATE, "uscope_replay_fill: the cursor's reader was closed");
    if (c->generation != r->generation)
      fail(USCOPE_ERR_BAD_STATE,
           "uscope_replay_fill: the reader found new segments (uscope_reader_poll_new_segments) after the "
           "cursor was made: make a new cursor");
    if (c->error) fail(c->error, "uscope_replay_fill: the cursor failed earlier: %s", c->error_message.c_str());
    try {
      return replay_fill(*c, items, count, capacity);
    } catch (const uscope::Error &e) {
      c->error = e.code();
      c->error_message = e.what();
      throw;
    } catch (const std::bad_alloc &) {
      c->error = USCOPE_ERR_NO_MEMORY;
      c->error_message = "out of memory";
      throw;
    } catch (...) {
      c->error = USCOPE_ERR_INTERNAL;
      c->error_message = "internal error";
      throw;
    }
  });
  if (s < 0 && r) r->message = uscope_last_error();
  return s;
}

USCOPE_API void uscope_replay_free(uscope_replay_t *c) {
  if (!c) return;
  if (c->r) {
    if (c->prev) c->prev->next = c->next;
    else c->r->cursors = c->next;
    if (c->next) c->next->prev = c->prev;
  }
  delete c;
}

}  // extern "C"
