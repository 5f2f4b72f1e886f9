// What the three protocol helpers (cpu, noc, npu) share: declaring on a copy
// of the schema builder that is committed only when the whole declaration
// succeeded, name-list checks, shared enums and properties; and on the
// per-cycle side, rejecting an argument without touching the writer, string
// interning and little-endian payloads built on the stack.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/error.hpp"
#include "format/wire.hpp"
#include "uscope/protocols.h"
#include "writer/schema_builder.hpp"
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
  // A 1-slot dense storage with one U64 field "count" (spec cpu §6): the shape
  // the viewer and the trace summary (COMPAT 16) recognize as a counter.
  uint16_t counter(const char *name, uint16_t scope_id);

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

}  // namespace uscope::proto
