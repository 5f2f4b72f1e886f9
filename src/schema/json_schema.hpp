// Schemas from JSON (format: docs/dpi.md, "JSON schema files"), on simdjson.
// The reader checks every member it reads and rejects members it does not
// know, so a typo is an error that names its JSON path ("$.storages[1].slots")
// rather than a silent default. It adds what it reads to a JsonSchemaTarget:
// a SchemaBuilder for uscope_schema_load_json (json_schema_builder.cpp), the
// DPI bridge's schema for uscope_sv_schema_from_json / uscope_open_json.
//
// Self-contained (no other .cpp of the core but field_syntax.cpp): the DPI
// bridge compiles this file into libuscope_dpi.so as well, because
// libuscope.so exports no C++ symbols (cmake/uscope.map). Built only with
// simdjson (USCOPE_WITH_NPU, and the bridge).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/field_syntax.hpp"
#include "uscope/uscope.h"

namespace uscope {

/** The kinds a JSON file refers to by name (a scope's parent and clock, a field's enum). */
enum class NameKind { clock, scope, enumeration };

/** The statuses a failure carries. */
struct JsonSchemaStatuses {
  uscope_status_t not_json;    // the file cannot be read, or is not JSON
  uscope_status_t not_schema;  // JSON, but not a schema: the message names the JSON path
  // A status the target throws for text that does not parse (an option's
  // value); inside a JSON file it becomes not_schema, as NOT_FOUND and
  // INVALID_ARGUMENT do. The target's other statuses (SCHEMA, DUPLICATE,
  // LIMIT) come through unchanged.
  uscope_status_t syntax;
};

/**
 * What a JSON schema is added to. Every call throws uscope::Error (or a
 * class derived from it) on failure, having added nothing; ids are those the
 * schema builder returns.
 */
class JsonSchemaTarget {
 public:
  virtual ~JsonSchemaTarget() = default;
  /** Whether something of `kind` called name was added so far. */
  virtual bool has(NameKind kind, const std::string &name) const = 0;
  /** Its one id; throws Error(AMBIGUOUS) listing the ids when several have the name. */
  virtual int one(NameKind kind, const std::string &name) const = 0;
  virtual int add_clock(const std::string &name, uint32_t period_ps) = 0;
  /** parent, clock: an id, or -1 (root / inherit). protocol: "" for none. */
  virtual int add_scope(const std::string &name, int parent, const std::string &protocol, int clock) = 0;
  virtual int add_enum(const std::string &name, const std::vector<std::string> &values) = 0;
  virtual int add_storage(const std::string &name, int scope, uint32_t num_slots, uint32_t flags,
                          const std::vector<FieldSpec> &fields, const std::vector<FieldSpec> &props) = 0;
  virtual int add_event(const std::string &name, int scope, const std::vector<FieldSpec> &fields) = 0;
  virtual int add_summary(const std::string &name, uint8_t type, int scope) = 0;
  virtual void add_dut_property(const std::string &key, const std::string &value) = 0;
  /** A member of "options" (its value as text): false for a key it does not know. */
  virtual bool apply_option(const std::string &key, const std::string &value) = 0;
};

/**
 * Read the JSON file at path into target. Throws Error: st.not_json when the
 * file cannot be read or does not parse, st.not_schema (or the target's
 * status) with "<path>: <JSON path>: <what>" otherwise.
 */
void load_json_schema_file(const std::string &path, JsonSchemaTarget &target, const JsonSchemaStatuses &st);
/** The same from JSON text in memory; label stands for the path in messages. */
void load_json_schema_text(std::string_view json, const std::string &label, JsonSchemaTarget &target,
                           const JsonSchemaStatuses &st);

}  // namespace uscope
