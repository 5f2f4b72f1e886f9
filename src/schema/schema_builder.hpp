// Validated construction of a Schema through the C API's add_* calls. Each
// call checks its arguments against what is already defined and changes
// nothing when they are wrong.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/schema_codec.hpp"
#include "uscope/uscope.h"

namespace uscope {

class SchemaBuilder {
 public:
  uint8_t add_clock(const char *name, uint32_t period_ps);
  uint16_t add_scope(const char *name, uint16_t parent, const char *protocol, uint8_t clock_id);
  uint8_t add_enum(const char *name, const char *const *values, uint16_t count);
  uint16_t add_storage(const char *name, uint16_t scope_id, uint16_t num_slots, uint16_t flags,
                       const uscope_field_t *fields, uint16_t num_fields,
                       const uscope_field_t *props, uint16_t num_props);
  uint16_t add_event(const char *name, uint16_t scope_id, const uscope_field_t *fields,
                     uint16_t num_fields);
  uint16_t add_summary_field(const char *name, uint8_t type, uint16_t scope_id);

  // DUT properties (§3) carried by the schema, so that protocol helpers can
  // add theirs when they declare their scope. They are kept as plain strings
  // and interned only at open, after the schema's own strings and before the
  // props[] of uscope_writer_open: the string pool then comes out exactly as
  // if every property had been passed to open, in the same order.
  struct DutEntry {
    std::string key;
    std::string value;
  };
  // Throws Error(SCHEMA) when key is set already, LIMIT past 65,535 properties.
  void add_dut_property(const char *key, const char *value);
  // The value of key, or nullptr when it is not set.
  const std::string *find_dut_property(const char *key) const;
  const std::vector<DutEntry> &dut_properties() const { return dut_; }

  const Schema &schema() const { return schema_; }

 private:
  // Names a look-up by name must find once (uscope.h, uscope_schema_new;
  // docs/compat.md): per kind, the key is the owning scope (or parent) and
  // the name, the value the id already holding it.
  using NameIndex = std::unordered_map<std::string, uint16_t>;
  static std::string name_key(uint16_t scope, const char *name);
  // Throws Error(DUPLICATE) naming the scope when `name` is in `index` under
  // `scope`; `kind` ("storage") and `what` (the call) word the message.
  void check_unique(const NameIndex &index, uint16_t scope, const char *name, const char *kind,
                    const char *what) const;
  std::string scope_words(uint16_t scope) const;
  void check_scope_ref(uint16_t scope_id, const char *what) const;
  std::vector<FieldDef> make_fields(const uscope_field_t *f, uint16_t n, bool props,
                                    StringPool &pool, const char *what) const;
  Schema schema_;
  std::vector<DutEntry> dut_;
  NameIndex clock_names_, scope_names_, storage_names_, event_names_, summary_names_;
};

}  // namespace uscope
