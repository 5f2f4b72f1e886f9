// A core schema from JSON text: the reader of json_schema.hpp adding to a
// SchemaBuilder (uscope_schema_load_json). Built only with simdjson.
#pragma once

#include <string_view>

#include "schema/schema_builder.hpp"

namespace uscope {

/**
 * Add what json declares to b. Throws Error: INVALID_ARGUMENT when json is
 * not JSON; SCHEMA, with the JSON path ("JSON schema: $.storages[1]: missing
 * member "slots"), when it does not describe a schema; or the status of the
 * builder call that refused an item (SCHEMA, DUPLICATE, LIMIT). b may be
 * partly filled then: build into a fresh builder and drop it on failure.
 *
 * The "options" member holds writer settings for the DPI bridge's
 * uscope_open_json: its shape is checked (an object of strings and numbers),
 * its keys and values are not read here.
 */
void build_schema_from_json(SchemaBuilder &b, std::string_view json);

}  // namespace uscope
