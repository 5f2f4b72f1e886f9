// Look-ups by name in a schema (include/uscope/uscope.h, "Look-ups by name";
// docs/compat.md, "Duplicate names"). One implementation for every handle
// that holds a schema: a reader's (the file's, which another writer may have
// filled with repeats), a schema builder's and a writer's, so that a name
// means the same item, or the same error, whichever of them is asked (the DPI
// bridge's uscope_sv_find asks the builder and the writer).
#pragma once

#include <cstdint>

#include "format/schema_codec.hpp"

namespace uscope {

// The id of the one storage (event type) that `name` names: its own name, or
// that name qualified by its enclosing scopes, nearest last ("core0.rob",
// "top.core0.rob"). Throws Error(NOT_FOUND) when none does, Error(AMBIGUOUS)
// listing the first 16 candidates (id and scope) when several do.
uint16_t find_storage(const Schema &s, const char *name);
uint16_t find_event(const Schema &s, const char *name);
// The index of storage_id's field (property, with is_property) called `name`.
// Throws Error(UNKNOWN_STORAGE) for a storage_id past the schema, NOT_FOUND,
// or AMBIGUOUS (a file whose writer repeated a field name).
uint16_t find_field(const Schema &s, uint16_t storage_id, const char *name, bool is_property);

}  // namespace uscope
