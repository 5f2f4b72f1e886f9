// Bridge schemas: a libuscope uscope_schema_t plus the names seen so far, so
// that CSV field lists, JSON files and SV code can refer to enums, scopes and
// clocks by name. Shared by bridge.cpp (the SV calls), json_schema.cpp (the
// target of the core's JSON reader) and protocols.cpp. Everything here throws
// uscope::Error (Failure); the exported calls turn it into a status and a
// thread-local message (bridge.cpp, guarded()). The field-list syntax is the
// core's (src/schema/field_syntax.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "schema/field_syntax.hpp"
#include "schema/name_ids.hpp"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"

namespace uscope_dpi {

/**
 * A failure with its status (a libuscope or USCOPE_DPI_ERR_* code); what() is
 * the message. The core's Error, so that the core's field-list parser and
 * JSON reader, compiled into the bridge, throw what the bridge catches.
 */
class Failure : public uscope::Error {
 public:
  Failure(int status, std::string msg) : uscope::Error(status, std::move(msg)) {}
};

[[noreturn]] void fail(int status, std::string msg);
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Throw Failure(status, context + ": " + uscope_last_error()) unless status is OK. */
void check(uscope_status_t status, const std::string &context);

/** Ids by name for clocks, scopes, enums, summary fields: the core's (src/schema/name_ids.hpp). */
using uscope::NameIds;

/**
 * What the bridge knows by name beyond libuscope's look-ups. Storages and
 * events are not here: uscope_sv_find asks libuscope (uscope_schema_find_*,
 * uscope_writer_find_*), which takes plain and scope-qualified names
 * ("core0.rob") and reports a plain name declared in several scopes as
 * ambiguous. Their member names are here, by id.
 */
struct Names {
  NameIds clocks, scopes, enums, summaries;
  std::map<int, std::vector<std::string>> enum_values, storage_fields, storage_props,
      event_fields;
  // Event names libuscope does not resolve: a noc's "<noc scope>.txn_handoff",
  // whose event type lies on the noc's parent scope.
  std::map<std::string, int> event_aliases;
};

using uscope::FieldSpec;

struct Schema {
  Schema();
  ~Schema();
  Schema(const Schema &) = delete;
  Schema &operator=(const Schema &) = delete;

  uscope_schema_t *raw = nullptr;
  Names names;
  uscope_writer_options_t opts;                          // defaults for uscope_open*
};

// ── Adding to a schema (ids as returned by libuscope) ──
int add_clock(Schema &s, const std::string &name, uint32_t period_ps);
int add_scope(Schema &s, const std::string &name, int parent, const std::string &protocol, int clock);
int add_enum(Schema &s, const std::string &name, const std::vector<std::string> &values);
int add_storage(Schema &s, const std::string &name, int scope, uint32_t num_slots, uint32_t flags,
                const std::vector<FieldSpec> &fields, const std::vector<FieldSpec> &props);
int add_event(Schema &s, const std::string &name, int scope, const std::vector<FieldSpec> &fields);
int add_summary(Schema &s, const std::string &name, uint8_t type, int scope);
void add_dut_property(Schema &s, const std::string &key, const std::string &value);

// ── Text ──
// The field-list syntax is the core's (src/schema/field_syntax.hpp).
using uscope::parse_role;
using uscope::parse_type;
using uscope::split_csv;
using uscope::trim;
/** "name:type[:role],..." (roles only when is_property). Throws USCOPE_DPI_ERR_SYNTAX. */
inline std::vector<FieldSpec> parse_fields(const std::string &csv, bool is_property, const char *what) {
  return uscope::parse_fields(csv, is_property, what, USCOPE_DPI_ERR_SYNTAX);
}
/** A scope / clock / parent reference given as an int: -1 maps to the sentinel. */
uint16_t scope_ref(int scope, const char *what);
/** Apply one option; false for an unknown key, throws on a bad value. */
bool apply_option(uscope_writer_options_t *opts, const std::string &key, const std::string &value);
/** "key=value, key=value" over *opts. Throws USCOPE_DPI_ERR_SYNTAX. */
void parse_options(uscope_writer_options_t *opts, const std::string &text);
/** A strict unsigned decimal or 0x number; false if text is not one. */
bool parse_u64(const std::string &text, uint64_t *out);

/** Load a JSON schema file: the core's reader (src/schema/json_schema.hpp) into a bridge schema (json_schema.cpp). */
std::unique_ptr<Schema> load_json_schema(const std::string &path);

}  // namespace uscope_dpi
