// Bridge schemas: a libuscope uscope_schema_t plus the names seen so far, so
// that CSV field lists, JSON files and SV code can refer to enums, scopes and
// clocks by name. Shared by bridge.cpp (the SV calls), json_schema.cpp and
// protocols.cpp. Everything here throws Failure; the exported calls turn it
// into a status and a thread-local message (bridge.cpp, guard()).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "uscope/uscope.h"

namespace uscope_dpi {

/** A failure with its status; what() is the message. */
class Failure : public std::exception {
 public:
  Failure(int status, std::string msg) : status_(status), msg_(std::move(msg)) {}
  int status() const noexcept { return status_; }
  const char *what() const noexcept override { return msg_.c_str(); }
  const std::string &message() const noexcept { return msg_; }

 private:
  int status_;
  std::string msg_;
};

[[noreturn]] void fail(int status, std::string msg);
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Throw Failure(status, context + ": " + uscope_last_error()) unless status is OK. */
void check(uscope_status_t status, const std::string &context);

/**
 * Ids by name, for the kinds the bridge looks up in its own tables (clocks,
 * scopes, enums, summary fields: libuscope has no look-up of these). A name
 * declared more than once keeps every id, so that a look-up by it is an
 * error, as libuscope's look-ups of storages and events are, rather than
 * the first one declared.
 */
struct NameIds {
  std::map<std::string, std::vector<int>> ids;  // distinct ids, in declaration order

  void add(const std::string &name, int id);  // the same id again (a shared enum): no change
  bool has(const std::string &name) const { return ids.count(name) != 0; }
  /** The one id of name. Throws NOT_FOUND, or AMBIGUOUS listing the ids; kind words the message. */
  int one(const char *kind, const std::string &name) const;
};

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

/** One parsed field of a CSV list or a JSON field object. */
struct FieldSpec {
  std::string name;
  uint8_t type = 0;
  std::string enum_ref;  // for USCOPE_FT_ENUM: the enum's name or decimal id
  uint8_t role = USCOPE_ROLE_PLAIN;
  uint8_t pair_id = 0;
};

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
/** Split on ',' and trim blanks; "" gives an empty list. */
std::vector<std::string> split_csv(const std::string &text);
std::string trim(const std::string &text);
/** "u32", "enum(stage)", ... into spec->type (and spec->enum_ref); false if unknown. */
bool parse_type(const std::string &text, FieldSpec *spec);
/** A role word: "plain", "head_ptr", "tail_ptr(3)", ...; false if unknown. */
bool parse_role(const std::string &text, FieldSpec *spec);
/** "name:type[:role],..." (roles only when is_property). Throws USCOPE_DPI_ERR_SYNTAX. */
std::vector<FieldSpec> parse_fields(const std::string &csv, bool is_property, const char *what);
/** A scope / clock / parent reference given as an int: -1 maps to the sentinel. */
uint16_t scope_ref(int scope, const char *what);
/** Apply one option; false for an unknown key, throws on a bad value. */
bool apply_option(uscope_writer_options_t *opts, const std::string &key, const std::string &value);
/** "key=value, key=value" over *opts. Throws USCOPE_DPI_ERR_SYNTAX. */
void parse_options(uscope_writer_options_t *opts, const std::string &text);
/** A strict unsigned decimal or 0x number; false if text is not one. */
bool parse_u64(const std::string &text, uint64_t *out);

/** Load a JSON schema file (json_schema.cpp). */
std::unique_ptr<Schema> load_json_schema(const std::string &path);

}  // namespace uscope_dpi
