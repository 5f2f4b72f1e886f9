// The text syntax of field lists, as people type them in SystemVerilog calls
// and JSON schema files: "name:type[:role],...", types "u8".."i64", "bool",
// "string", "enum(<name or id>)", roles "plain", "head_ptr(<pair>)",
// "tail_ptr(<pair>)" (docs/dpi.md, "Field lists"). Parsed here once, for the
// DPI bridge's SV calls and for the JSON schema loader (json_schema.hpp).
//
// Self-contained (no other .cpp of the core): the DPI bridge compiles this
// file into libuscope_dpi.so as well, because libuscope.so exports no C++
// symbols (cmake/uscope.map).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/name_ids.hpp"
#include "uscope/uscope.h"

namespace uscope {

/** One parsed field of a CSV list or a JSON field object. */
struct FieldSpec {
  std::string name;
  uint8_t type = 0;
  std::string enum_ref;  // for USCOPE_FT_ENUM: the enum's name or decimal id
  uint8_t role = USCOPE_ROLE_PLAIN;
  uint8_t pair_id = 0;
};

/** text without leading and trailing blanks. */
std::string trim(const std::string &text);
/** Split on ',' and trim blanks; "" gives an empty list. */
std::vector<std::string> split_csv(const std::string &text);
/** "u32", "enum(stage)", ... into spec->type (and spec->enum_ref); false if unknown. */
bool parse_type(const std::string &text, FieldSpec *spec);
/** A role word: "plain", "head_ptr", "tail_ptr(3)", ...; false if unknown. */
bool parse_role(const std::string &text, FieldSpec *spec);
/**
 * "name:type[:role],..." (roles only when is_property). Throws
 * Error(syntax_status) naming `what` and the item: the caller picks the status
 * (the bridge's USCOPE_DPI_ERR_SYNTAX for an SV call, the JSON loader's
 * "not a schema" status inside a JSON file).
 */
std::vector<FieldSpec> parse_fields(const std::string &csv, bool is_property, const char *what,
                                    uscope_status_t syntax_status);

/**
 * The uscope_field_t of each spec, for uscope_schema_add_storage / _event (the
 * names point into specs). An enum_ref is an enum's name in enums or a
 * decimal id 0..254; else Error(NOT_FOUND) "<context>: field "x": no enum
 * named "y"", or AMBIGUOUS when several enums have the name.
 */
std::vector<uscope_field_t> to_c_fields(const std::vector<FieldSpec> &specs, const NameIds &enums,
                                        const std::string &context);

}  // namespace uscope
