// What the three protocol helpers (cpu, noc, npu) share: declaring on a copy
// of the schema builder that is committed only when the whole declaration
// succeeded, name-list checks, shared enums and properties; and on the
// per-cycle side, rejecting an argument without touching the writer, string
// interning and little-endian payloads built on the stack.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.hpp"
#include "format/wire.hpp"
#include "protocol/table.hpp"
#include "uscope/protocols.h"
#include "schema/schema_builder.hpp"
#include "writer/writer.hpp"

namespace uscope::proto {

// ── declaring ──

// A config struct of the caller, copied into a zeroed one of ours: an older,
// shorter struct leaves the newer fields zero (as writer options do).
template <class Cfg>
Cfg copy_config(const Cfg *cfg) {
  if (!cfg) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg is NULL");
  if (cfg->struct_size < sizeof(uint32_t) || cfg->struct_size > sizeof(Cfg))
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg->struct_size is %u; this library knows %zu (set it to sizeof)",
         cfg->struct_size, sizeof(Cfg));
  Cfg c;
  std::memset(&c, 0, sizeof c);
  std::memcpy(&c, cfg, cfg->struct_size);
  return c;
}

// A list of names that becomes an enum (and, with `listed`, a comma-separated
// DUT property): each present, non-empty and distinct, at most 255 of them.
// `what` names the config field in messages.
void check_names(const char *const *names, uint16_t n, const char *what, bool listed);
std::string join(const char *const *names, uint16_t n);

// Checks a caller's field list for a storage whose field 0 the protocol owns
// (entity_id, txn_id): no NULL names and none equal to a protocol field name.
void check_extra_fields(const uscope_field_t *f, uint16_t n, const char *what, const char *const *reserved,
                        size_t num_reserved);
// The same, the reserved names being a table storage's fields.
void check_extra_fields(const uscope_field_t *f, uint16_t n, const char *what, table::Span<table::Field> reserved);

// A list of names from a config (stages, opcodes, ...).
struct NameList {
  const char *const *names = nullptr;
  uint16_t count = 0;
};

// The builder a declaration works on. It starts as a copy of the live one and
// replaces it in commit(), so that a failing declaration leaves the schema as
// it was (no scope, enum or string pool entry behind).
class Declaration {
 public:
  explicit Declaration(SchemaBuilder &live) : live_(live), b_(live) {}
  SchemaBuilder &b() { return b_; }
  const Schema &schema() const { return b_.schema(); }
  void commit() { live_ = std::move(b_); }

  // An enum with exactly these values under this name is reused, so that
  // several cores or fabrics share one (the spec's dual-core example).
  uint8_t shared_enum(const char *name, const char *const *values, uint16_t count);
  // Set key unless it is set already to the same value; another value is an
  // Error(SCHEMA) naming both (two protocol instances that disagree on a
  // trace-wide property).
  void property(const std::string &key, const std::string &value);
  // The scope name keys the per-instance properties ("<scope>/noc.topology"),
  // so no other scope may have it.
  void require_unused_scope_name(const char *name) const;
  // The period of the scope's clock, following USCOPE_CLOCK_INHERIT up the
  // tree; false when no ancestor names a clock.
  bool clock_period(uint16_t scope_id, uint32_t *period_ps) const;
  // An event of this name in this scope, or 0xFFFF.
  uint16_t find_event(const char *name, uint16_t scope_id) const;
  // A 1-slot dense storage of table::kCounterField (spec cpu §6): the shape
  // the viewer and the trace summary (COMPAT 16) recognize as a counter.
  uint16_t counter(const char *name, uint16_t scope_id);

  // ── from a protocol table ──

  // The table's enums, in its order, each shared as by shared_enum; an enum
  // whose values come from the config takes config[i] (for kOrDefault, the
  // table's values when config[i] has none). ids[i] gets enum i's id.
  void enums(table::Span<table::Enum> t, const NameList *config, uint8_t *ids);
  // A storage with the table's fields (enum refs resolved through enum_ids),
  // then the config's extra fields.
  uint16_t storage(const table::Storage &s, uint16_t scope_id, uint16_t num_slots, const uint8_t *enum_ids,
                   const uscope_field_t *extra = nullptr, uint16_t num_extra = 0);
  // An event with the table's payload fields.
  uint16_t event(const table::Event &e, uint16_t scope_id, const uint8_t *enum_ids);
  // The table's DUT properties in its order: values[i] is property i's value,
  // nullopt to leave it out; a per-scope key is written "<scope>/<key>".
  void properties(table::Span<table::Property> t, const std::string &scope,
                  const std::optional<std::string> *values);

 private:
  SchemaBuilder &live_;
  SchemaBuilder b_;
};

// Storage names must be distinct within the protocol's scope: the viewer finds
// storages by name.
class NameSet {
 public:
  void add(const char *name, const char *what);

 private:
  std::vector<std::string> names_;
};

// ── per-cycle ──

// Refuse an argument: the message goes to uscope_last_error(), nothing is
// written and the writer's state is untouched, so the cycle stays usable.
// Formats into a stack buffer: no allocation, cannot throw.
uscope_status_t reject(uscope_status_t code, const char *fmt, ...) noexcept
    __attribute__((cold, noinline, format(printf, 2, 3)));

// A per-cycle call with a NULL writer or handle.
inline uscope_status_t null_args(const char *fn, const void *w, const void *h) noexcept {
  if (!w) return reject(USCOPE_ERR_INVALID_ARGUMENT, "%s: writer handle is NULL", fn);
  return reject(USCOPE_ERR_INVALID_ARGUMENT, "%s: protocol handle is NULL", fn);
}

// Intern str into the string table. When the field is optional (the npu's),
// NULL and "" give USCOPE_NPU_STR_ABSENT; otherwise NULL is INVALID_ARGUMENT.
// Allocates only for a string not seen before (and see docs/protocols.md).
uscope_status_t intern(Writer &w, const char *fn, const char *what, const char *str, bool may_be_null,
                       uint32_t *out) noexcept;

// A payload of at most kMax bytes packed little-endian, in schema field order.
class Payload {
 public:
  static constexpr uint32_t kMax = 64;  // the largest protocol event is 44 bytes
  Payload &u8(uint8_t v) { return put(&v, 1); }
  Payload &u16(uint16_t v) { return put(&v, 2); }
  Payload &u32(uint32_t v) { return put(&v, 4); }
  Payload &u64(uint64_t v) { return put(&v, 8); }
  const uint8_t *data() const { return buf_; }
  uint32_t size() const { return n_; }

  // The values packed each at the width of its own type: the call's
  // parameters are declared with the schema field's type, so the argument
  // list reads as the field list. Only unsigned fixed-width values, so that a
  // literal (an int) cannot slip in at the wrong width.
  template <class... T>
  static Payload of(T... v) {
    static_assert(
        ((std::is_unsigned_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8)) &&
         ...),
        "payload values are u8, u16, u32 or u64");
    Payload p;
    (p.put(&v, sizeof v), ...);
    return p;
  }

 private:
  // Little-endian hosts only, as the rest of the library (wire.hpp).
  Payload &put(const void *v, uint32_t k) {
    std::memcpy(buf_ + n_, v, k);
    n_ += k;
    return *this;
  }
  uint8_t buf_[kMax];
  uint32_t n_ = 0;
};

// Early return on the first writer error: every op after it would be a no-op
// returning the same sticky status anyway.
#define USCOPE_TRY(call)                                                   \
  do {                                                                     \
    const uscope_status_t uscope_try_s_ = (call);                          \
    if (USCOPE_UNLIKELY(uscope_try_s_ != USCOPE_OK)) return uscope_try_s_; \
  } while (0)

// Sets fields first, first + 1, ... of one slot to the values, in order,
// stopping at the first writer error (as USCOPE_TRY would).
template <class... T>
inline uscope_status_t set_fields(Writer &w, uint16_t sid, uint16_t slot, uint16_t first, T... v) noexcept {
  uscope_status_t st = USCOPE_OK;
  uint16_t f = first;
  (void)((st = w.slot_set(sid, slot, f++, static_cast<uint64_t>(v)), st == USCOPE_OK) && ...);
  return st;
}

// Records one event whose payload is the values, packed as by Payload::of.
template <class... T>
inline uscope_status_t emit(Writer &w, uint16_t event_type, T... v) noexcept {
  const Payload p = Payload::of(v...);
  return w.event(event_type, p.data(), p.size());
}

// ── what the handles share ──

// The user counters every protocol handle has (cpu, noc, npu): dense 1-slot
// storages indexed by the handle's counter number. `prefix` ("uscope_cpu")
// starts the messages, which name the exported call.
class CounterScope {
 public:
  std::string scope_name;  // for messages
  std::vector<uint16_t> counter_ids;

  explicit CounterScope(const char *prefix) : prefix_(prefix) {}
  CounterScope(const CounterScope &) = delete;
  CounterScope &operator=(const CounterScope &) = delete;

  uscope_status_t counter_add(Writer &w, uint16_t counter, uint64_t delta) const noexcept {
    if (USCOPE_UNLIKELY(counter >= counter_ids.size())) return bad_counter(counter);
    return w.slot_add(counter_ids[counter], 0, 0, delta);
  }

 protected:
  ~CounterScope() = default;
  const char *prefix_;

 private:
  uscope_status_t bad_counter(uint16_t counter) const noexcept __attribute__((cold, noinline));
};

// How a cpu or noc handle names the ids of its catalog in messages; the two
// differ only in these words.
struct CatalogWords {
  const char *id_field;  // "entity_id": field 0 of the catalog and of every buffer
  const char *an_item;   // "an entity"
  const char *item;      // "entity"
  const char *items;     // "entities"
  const char *limit;     // "max_entities": the config field bounding the ids
};

// The part of the cpu and noc handles that is the same in both: a sparse
// catalog of ids (entities, transactions), user buffers whose field 0 is such
// an id, and counters. The per-cycle calls stay inline, as the handles' own.
class CatalogScope : public CounterScope {
 public:
  struct Buffer {
    uint16_t sid;
    uint16_t num_slots;
    uint16_t num_fields;
  };

  uint32_t max_ids = 0;  // the catalog's slot count
  std::vector<uint16_t> buffer_ids;
  std::vector<Buffer> buffers;

  CatalogScope(const char *prefix, const CatalogWords &words) : CounterScope(prefix), words_(words) {}

  uscope_status_t buffer_insert(Writer &w, uint16_t buffer, uint16_t slot, uint32_t id) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= buffers.size())) return bad_buffer("buffer_insert", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("buffer_insert", buffer, slot);
    if (USCOPE_UNLIKELY(id >= max_ids)) return bad_id("buffer_insert", words_.id_field, id);
    return w.slot_set(b.sid, slot, 0, id);
  }
  uscope_status_t buffer_set(Writer &w, uint16_t buffer, uint16_t slot, uint16_t field,
                             uint64_t value) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= buffers.size())) return bad_buffer("buffer_set", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("buffer_set", buffer, slot);
    if (USCOPE_UNLIKELY(field >= b.num_fields)) return bad_field("buffer_set", buffer, field);
    if (USCOPE_UNLIKELY(field == 0 && value >= max_ids)) return bad_id_field0("buffer_set", value);
    return w.slot_set(b.sid, slot, field, value);
  }
  uscope_status_t buffer_remove(Writer &w, uint16_t buffer, uint16_t slot) const noexcept {
    if (USCOPE_UNLIKELY(buffer >= buffers.size())) return bad_buffer("buffer_remove", buffer);
    const Buffer &b = buffers[buffer];
    if (USCOPE_UNLIKELY(slot >= b.num_slots)) return bad_slot("buffer_remove", buffer, slot);
    return w.slot_clear(b.sid, slot);
  }

  // ── declaring (on the handle being filled) ──

  // The buffer configs, before anything is added: named (distinctly), with
  // slots, and with extra fields that leave field 0 to the protocol.
  template <class Def>
  void check_buffers(NameSet &names, const Def *defs, uint16_t n) const;
  // The buffer storages, in config order; field 0 is the catalog id.
  template <class Def>
  void add_buffers(SchemaBuilder &b, uint16_t scope_id, const Def *defs, uint16_t n);
  // The handle's buffer and counter lists into its public ids.
  template <class Ids>
  void publish(Ids &ids) const {
    ids.num_buffers = static_cast<uint16_t>(buffer_ids.size());
    ids.num_counters = static_cast<uint16_t>(counter_ids.size());
    ids.buffers = buffer_ids.data();
    ids.counters = counter_ids.data();
  }

 protected:
  ~CatalogScope() = default;
  // Cold paths: the messages name the call (prefix_ + op), the value and the
  // scope.
  uscope_status_t bad_id(const char *op, const char *what, uint64_t id) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_id_field0(const char *op, uint64_t id) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_enum(const char *op, const char *what, unsigned v, unsigned count) const noexcept
      __attribute__((cold, noinline));
  // A catalog field outside 1..num_fields-1 (field 0 is the id itself).
  uscope_status_t bad_catalog_field(const char *op, uint16_t field, unsigned num_fields) const noexcept
      __attribute__((cold, noinline));

 private:
  uscope_status_t bad_buffer(const char *op, uint16_t buffer) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_slot(const char *op, uint16_t buffer, uint16_t slot) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_field(const char *op, uint16_t buffer, uint16_t field) const noexcept
      __attribute__((cold, noinline));

  const CatalogWords &words_;
};

template <class Def>
void CatalogScope::check_buffers(NameSet &names, const Def *defs, uint16_t n) const {
  const char *const reserved[] = {words_.id_field};
  for (uint16_t i = 0; i < n; ++i) {
    const Def &b = defs[i];
    names.add(b.name, "cfg.buffers[]");
    if (b.num_slots == 0) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.buffers[%u] \"%s\" has 0 slots", i, b.name);
    const std::string what = "cfg.buffers[" + std::to_string(i) + "].extra_fields";
    check_extra_fields(b.extra_fields, b.num_extra_fields, what.c_str(), reserved, 1);
    if (b.num_extra_fields == 0xFFFF)
      fail(USCOPE_ERR_LIMIT, "cfg.buffers[%u] \"%s\": with %s, 65,536 fields", i, b.name, words_.id_field);
  }
}

template <class Def>
void CatalogScope::add_buffers(SchemaBuilder &b, uint16_t scope_id, const Def *defs, uint16_t n) {
  std::vector<uscope_field_t> f;
  for (uint16_t i = 0; i < n; ++i) {
    const Def &bd = defs[i];
    f.assign(1, {words_.id_field, USCOPE_FT_U32, 0, 0, 0});
    f.insert(f.end(), bd.extra_fields, bd.extra_fields + bd.num_extra_fields);
    const uint16_t sid = b.add_storage(bd.name, scope_id, bd.num_slots, USCOPE_SF_SPARSE | USCOPE_SF_BUFFER,
                                       f.data(), static_cast<uint16_t>(f.size()), nullptr, 0);
    buffer_ids.push_back(sid);
    buffers.push_back({sid, bd.num_slots, static_cast<uint16_t>(f.size())});
  }
}

}  // namespace uscope::proto
