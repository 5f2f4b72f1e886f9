#include "protocol/common.hpp"

#include <cstdarg>
#include <cstdio>

#include "base/guard.hpp"

namespace uscope::proto {

void check_names(const char *const *names, uint16_t n, const char *what, bool listed) {
  if (n == 0) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: no names (count is 0)", what);
  // An ENUM field is a u8 and §4.5 allows 255 values.
  if (n > 0xFF) fail(USCOPE_ERR_LIMIT, "%s: %u names; an enum has at most 255 (spec §4.5)", what, n);
  if (!names) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s is NULL but its count is %u", what, n);
  for (uint16_t i = 0; i < n; ++i) {
    if (!names[i]) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s[%u] is NULL", what, i);
    if (!names[i][0]) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s[%u] is empty", what, i);
    // The list property is split at commas by the viewer (cpu §4.1).
    if (listed && std::strchr(names[i], ','))
      fail(USCOPE_ERR_INVALID_ARGUMENT,
           "%s[%u] \"%s\" contains a comma; the list property is comma-separated", what, i, names[i]);
    for (uint16_t j = 0; j < i; ++j)
      if (std::strcmp(names[i], names[j]) == 0)
        fail(USCOPE_ERR_INVALID_ARGUMENT, "%s[%u] \"%s\" repeats %s[%u]; names are matched by value", what, i,
             names[i], what, j);
  }
}

std::string join(const char *const *names, uint16_t n) {
  std::string s;
  for (uint16_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += names[i];
  }
  return s;
}

void check_extra_fields(const uscope_field_t *f, uint16_t n, const char *what, const char *const *reserved,
                        size_t num_reserved) {
  if (n && !f) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s is NULL but its count is %u", what, n);
  for (uint16_t i = 0; i < n; ++i) {
    if (!f[i].name) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s[%u] has no name", what, i);
    for (size_t r = 0; r < num_reserved; ++r)
      if (std::strcmp(f[i].name, reserved[r]) == 0)
        fail(USCOPE_ERR_INVALID_ARGUMENT, "%s[%u] is named \"%s\", a field the protocol defines itself", what,
             i, f[i].name);
  }
}

void check_extra_fields(const uscope_field_t *f, uint16_t n, const char *what, table::Span<table::Field> reserved) {
  std::vector<const char *> names;
  for (const table::Field &r : reserved) names.push_back(r.name);
  check_extra_fields(f, n, what, names.data(), names.size());
}

uint8_t Declaration::shared_enum(const char *name, const char *const *values, uint16_t count) {
  const Schema &s = b_.schema();
  for (size_t e = 0; e < s.enums.size(); ++e) {
    const EnumDef &d = s.enums[e];
    const char *n = s.str(d.name);
    if (!n || std::strcmp(n, name) != 0 || d.values.size() != count) continue;
    bool same = true;
    for (uint16_t i = 0; i < count && same; ++i) {
      const char *v = s.str(d.values[i].name);
      same = v && d.values[i].value == i && std::strcmp(v, values[i]) == 0;
    }
    if (same) return static_cast<uint8_t>(e);
  }
  return b_.add_enum(name, values, count);
}

void Declaration::property(const std::string &key, const std::string &value) {
  if (const std::string *old = b_.find_dut_property(key.c_str())) {
    if (*old == value) return;
    fail(USCOPE_ERR_SCHEMA, "DUT property \"%s\" is \"%s\" already; this declaration needs \"%s\"",
         key.c_str(), old->c_str(), value.c_str());
  }
  b_.add_dut_property(key.c_str(), value.c_str());
}

void Declaration::require_unused_scope_name(const char *name) const {
  const Schema &s = b_.schema();
  for (const auto &sc : s.scopes) {
    const char *n = s.str(sc.name);
    if (n && std::strcmp(n, name) == 0)
      fail(USCOPE_ERR_SCHEMA,
           "scope name \"%s\" is used by scope %u already; this protocol keys its DUT properties by "
           "scope name, so it must be unique",
           name, sc.scope_id);
  }
}

bool Declaration::clock_period(uint16_t scope_id, uint32_t *period_ps) const {
  const Schema &s = b_.schema();
  // A scope's parent always has a smaller id (add_scope needs it to exist),
  // so this walk ends; the bound guards it anyway.
  for (size_t hops = 0; scope_id < s.scopes.size() && hops <= s.scopes.size(); ++hops) {
    const ScopeDef &sc = s.scopes[scope_id];
    if (sc.clock_id != USCOPE_CLOCK_INHERIT) {
      if (sc.clock_id >= s.clocks.size()) return false;
      *period_ps = s.clocks[sc.clock_id].period_ps;
      return true;
    }
    scope_id = sc.parent_id;
  }
  return false;
}

uint16_t Declaration::find_event(const char *name, uint16_t scope_id) const {
  const Schema &s = b_.schema();
  for (const auto &ev : s.events) {
    const char *n = s.str(ev.name);
    if (ev.scope_id == scope_id && n && std::strcmp(n, name) == 0) return ev.event_type_id;
  }
  return 0xFFFF;
}

uint16_t Declaration::counter(const char *name, uint16_t scope_id) {
  const uscope_field_t count[] = {{table::kCounterField.name, table::kCounterField.type, 0, 0, 0}};
  return b_.add_storage(name, scope_id, 1, 0, count, 1, nullptr, 0);
}

namespace {
std::vector<uscope_field_t> resolve(table::Span<table::Field> fields, const uint8_t *enum_ids) {
  std::vector<uscope_field_t> out;
  out.reserve(fields.size);
  for (const table::Field &f : fields)
    out.push_back({f.name, f.type, f.enum_ref == table::kNoEnum ? uint8_t{0} : enum_ids[f.enum_ref], 0, 0});
  return out;
}
}  // namespace

void Declaration::enums(table::Span<table::Enum> t, const NameList *config, uint8_t *ids) {
  for (uint16_t i = 0; i < t.size; ++i) {
    const table::Enum &e = t[i];
    NameList v{e.values.data, e.values.size};
    if (e.source == table::Values::kConfig || (e.source == table::Values::kOrDefault && config[i].names))
      v = config[i];
    ids[i] = shared_enum(e.name, v.names, v.count);
  }
}

uint16_t Declaration::storage(const table::Storage &s, uint16_t scope_id, uint16_t num_slots,
                              const uint8_t *enum_ids, const uscope_field_t *extra, uint16_t num_extra) {
  std::vector<uscope_field_t> f = resolve(s.fields, enum_ids);
  if (num_extra) f.insert(f.end(), extra, extra + num_extra);
  return b_.add_storage(s.name, scope_id, num_slots, s.flags, f.data(), static_cast<uint16_t>(f.size()),
                        nullptr, 0);
}

uint16_t Declaration::event(const table::Event &e, uint16_t scope_id, const uint8_t *enum_ids) {
  const std::vector<uscope_field_t> f = resolve(e.fields, enum_ids);
  return b_.add_event(e.name, scope_id, f.data(), e.fields.size);
}

void Declaration::properties(table::Span<table::Property> t, const std::string &scope,
                             const std::optional<std::string> *values) {
  for (uint16_t i = 0; i < t.size; ++i) {
    if (!values[i]) continue;
    property(t[i].per_scope ? scope + "/" + t[i].key : std::string(t[i].key), *values[i]);
  }
}

void NameSet::add(const char *name, const char *what) {
  if (!name) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s has no name", what);
  for (const auto &n : names_)
    if (n == name)
      fail(USCOPE_ERR_INVALID_ARGUMENT, "%s \"%s\": the scope has a storage of that name already", what,
           name);
  names_.emplace_back(name);
}

uscope_status_t reject(uscope_status_t code, const char *fmt, ...) noexcept {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  set_thread_error(static_cast<const char *>(buf));
  return code;
}

uscope_status_t intern(Writer &w, const char *fn, const char *what, const char *str, bool may_be_null,
                       uint32_t *out) noexcept {
  if (!str) {
    if (may_be_null) {
      *out = USCOPE_NPU_STR_ABSENT;
      return USCOPE_OK;
    }
    return reject(USCOPE_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
  }
  // SystemVerilog imports the per-cycle calls directly and cannot pass NULL
  // for a string: "" is how it says "absent".
  if (may_be_null && !*str) {
    *out = USCOPE_NPU_STR_ABSENT;
    return USCOPE_OK;
  }
  // string_insert throws on allocation failure or after close; the guard
  // turns that into a status with its message.
  return guard([&] { return w.string_insert(str, out); });
}

// ── the handles' cold paths ──

uscope_status_t CounterScope::bad_counter(uint16_t counter) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_STORAGE, "%s_counter_add: counter %u of scope \"%s\", which has %zu",
                prefix_, counter, scope_name.c_str(), counter_ids.size());
}

uscope_status_t CatalogScope::bad_id(const char *op, const char *what, uint64_t id) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_SLOT, "%s_%s: %s %llu is not %s of scope \"%s\" (%s %u)", prefix_, op,
                what, static_cast<unsigned long long>(id), words_.an_item, scope_name.c_str(), words_.limit,
                max_ids);
}
uscope_status_t CatalogScope::bad_id_field0(const char *op, uint64_t id) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_SLOT, "%s_%s: %s (field 0) %llu is not %s of scope \"%s\" (%s %u)",
                prefix_, op, words_.id_field, static_cast<unsigned long long>(id), words_.an_item,
                scope_name.c_str(), words_.limit, max_ids);
}
uscope_status_t CatalogScope::bad_enum(const char *op, const char *what, unsigned v,
                                       unsigned count) const noexcept {
  return reject(USCOPE_ERR_VALUE_RANGE, "%s_%s: %s %u is out of range (scope \"%s\" has %u)", prefix_, op,
                what, v, scope_name.c_str(), count);
}
uscope_status_t CatalogScope::bad_catalog_field(const char *op, uint16_t field,
                                                unsigned num_fields) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_FIELD,
                "%s_%s: field %u of the %s of scope \"%s\"; fields 1..%u may be set (0 is the %s id itself)",
                prefix_, op, field, words_.items, scope_name.c_str(), num_fields - 1u, words_.item);
}
uscope_status_t CatalogScope::bad_buffer(const char *op, uint16_t buffer) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_STORAGE, "%s_%s: buffer %u of scope \"%s\", which has %zu", prefix_, op,
                buffer, scope_name.c_str(), buffers.size());
}
uscope_status_t CatalogScope::bad_slot(const char *op, uint16_t buffer, uint16_t slot) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_SLOT, "%s_%s: slot %u of buffer %u of scope \"%s\", which has %u slots",
                prefix_, op, slot, buffer, scope_name.c_str(), buffers[buffer].num_slots);
}
uscope_status_t CatalogScope::bad_field(const char *op, uint16_t buffer, uint16_t field) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_FIELD, "%s_%s: field %u of buffer %u of scope \"%s\", which has %u fields",
                prefix_, op, field, buffer, scope_name.c_str(), buffers[buffer].num_fields);
}

}  // namespace uscope::proto
