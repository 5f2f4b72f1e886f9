#include "schema/schema_builder.hpp"

#include <cstring>
#include <string_view>
#include <unordered_set>

#include "base/error.hpp"
#include "format/wire.hpp"

namespace uscope {

namespace {
const char *need_name(const char *name, const char *what) {
  if (!name) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: name is NULL", what);
  return name;
}
}  // namespace

// Every add_* inserts into the pool under a PoolTxn that takes the strings
// back out unless the call succeeds, so a rejected call leaves no strings
// behind. (It used to work on a copy of the pool, which made declaring a
// schema quadratic in its strings: the npu protocol's ~300 names took most
// of a short conversion's set-up.)
namespace {
class PoolTxn {
 public:
  explicit PoolTxn(StringPool &p) : pool_(p), mark_(p.mark()) {}
  ~PoolTxn() {
    if (!committed_) pool_.rollback(mark_);
  }
  PoolTxn(const PoolTxn &) = delete;
  PoolTxn &operator=(const PoolTxn &) = delete;
  void commit() { committed_ = true; }

 private:
  StringPool &pool_;
  size_t mark_;
  bool committed_ = false;
};
}  // namespace

std::string SchemaBuilder::name_key(uint16_t scope, const char *name) {
  // Two fixed bytes of scope, then the name: no separator can be confused.
  std::string k(2, '\0');
  k[0] = static_cast<char>(scope & 0xFF);
  k[1] = static_cast<char>(scope >> 8);
  k += name;
  return k;
}

std::string SchemaBuilder::scope_words(uint16_t scope) const {
  if (scope == USCOPE_ROOT_SCOPE || scope >= schema_.scopes.size()) return "the root level";
  const char *n = schema_.str(schema_.scopes[scope].name);
  return "scope " + std::to_string(scope) + " \"" + (n ? n : "") + "\"";
}

void SchemaBuilder::check_unique(const NameIndex &index, uint16_t scope, const char *name,
                                 const char *kind, const char *what) const {
  const auto it = index.find(name_key(scope, name));
  if (it == index.end()) return;
  fail(USCOPE_ERR_DUPLICATE, "%s \"%s\": %s has a %s of that name already (%s %u); names are unique "
       "within a scope so that a look-up by name finds one", what, name, scope_words(scope).c_str(), kind,
       kind, it->second);
}

uint8_t SchemaBuilder::add_clock(const char *name, uint32_t period_ps) {
  need_name(name, "add_clock");
  // §4.1: num_clock_domains is a u8, and §4.4 reserves clock id 0xFF for "inherit".
  if (schema_.clocks.size() >= 0xFF)
    fail(USCOPE_ERR_LIMIT, "add_clock: at most 255 clock domains (spec §4.1)");
  // Clocks are trace-wide (§4.9): one namespace.
  const auto dup = clock_names_.find(name_key(0, name));
  if (dup != clock_names_.end())
    fail(USCOPE_ERR_DUPLICATE, "add_clock \"%s\": the schema has a clock of that name already (clock %u)",
         name, dup->second);
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  ClockDef c;
  c.name = pool.insert(name);
  c.clock_id = static_cast<uint16_t>(schema_.clocks.size());
  c.period_ps = period_ps;
  txn.commit();
  schema_.clocks.push_back(c);
  clock_names_.emplace(name_key(0, name), c.clock_id);
  return static_cast<uint8_t>(c.clock_id);
}

uint16_t SchemaBuilder::add_scope(const char *name, uint16_t parent, const char *protocol,
                                  uint8_t clock_id) {
  need_name(name, "add_scope");
  if (schema_.scopes.size() >= 0xFFFF)
    fail(USCOPE_ERR_LIMIT, "add_scope: at most 65,535 scopes (spec §4.1)");
  if (schema_.scopes.empty()) {
    if (parent != USCOPE_NO_PARENT)
      fail(USCOPE_ERR_SCHEMA, "add_scope: the first scope is the root; its parent must be 0xFFFF (spec §4.4)");
  } else if (parent >= schema_.scopes.size()) {
    fail(USCOPE_ERR_SCHEMA, "add_scope \"%s\": parent scope %u does not exist", name, parent);
  }
  if (clock_id != USCOPE_CLOCK_INHERIT && clock_id >= schema_.clocks.size())
    fail(USCOPE_ERR_SCHEMA, "add_scope \"%s\": clock %u does not exist", name, clock_id);
  // Siblings only: a scope is named by its path ("core0.rob" in the reader's look-ups).
  if (!schema_.scopes.empty() && scope_names_.count(name_key(parent, name)))
    fail(USCOPE_ERR_DUPLICATE, "add_scope \"%s\": %s has a child scope of that name already (scope %u); "
         "sibling scopes have distinct names", name, scope_words(parent).c_str(),
         scope_names_.at(name_key(parent, name)));
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  ScopeDef sc;
  sc.name = pool.insert(name);
  sc.scope_id = static_cast<uint16_t>(schema_.scopes.size());
  sc.parent_id = parent;
  sc.protocol = protocol ? pool.insert(protocol) : wire::kNoString;
  sc.clock_id = clock_id;
  txn.commit();
  schema_.scopes.push_back(sc);
  scope_names_.emplace(name_key(parent, name), sc.scope_id);
  return sc.scope_id;
}

uint8_t SchemaBuilder::add_enum(const char *name, const char *const *values, uint16_t count) {
  need_name(name, "add_enum");
  if (schema_.enums.size() >= 0xFF) fail(USCOPE_ERR_LIMIT, "add_enum: at most 255 enums (spec §4.1)");
  if (count == 0 || count > 0xFF)
    fail(USCOPE_ERR_LIMIT, "add_enum \"%s\": %u values; an enum has 1 to 255 (spec §4.5)", name, count);
  if (!values) fail(USCOPE_ERR_INVALID_ARGUMENT, "add_enum \"%s\": values is NULL", name);
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  EnumDef e;
  e.name = pool.insert(name);
  // Enum names may repeat (no scope, fields refer by id: docs/compat.md);
  // a value name that means two numbers may not.
  std::unordered_set<std::string_view> seen;
  for (uint16_t i = 0; i < count; ++i) {
    if (!values[i]) fail(USCOPE_ERR_INVALID_ARGUMENT, "add_enum \"%s\": value %u is NULL", name, i);
    if (!seen.insert(values[i]).second)
      fail(USCOPE_ERR_DUPLICATE, "add_enum \"%s\": value %u \"%s\" repeats an earlier value's name", name, i,
           values[i]);
    e.values.push_back({static_cast<uint8_t>(i), pool.insert(values[i])});
  }
  txn.commit();
  schema_.enums.push_back(std::move(e));
  return static_cast<uint8_t>(schema_.enums.size() - 1);
}

void SchemaBuilder::check_scope_ref(uint16_t scope_id, const char *what) const {
  if (scope_id != USCOPE_ROOT_SCOPE && scope_id >= schema_.scopes.size())
    fail(USCOPE_ERR_SCHEMA, "%s: scope %u does not exist", what, scope_id);
}

std::vector<FieldDef> SchemaBuilder::make_fields(const uscope_field_t *f, uint16_t n, bool props,
                                                 StringPool &pool, const char *what) const {
  if (n && !f) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: field array is NULL", what);
  std::vector<FieldDef> out;
  out.reserve(n);
  // Repeated names: a few fields (the usual case) are compared pairwise; a
  // hash set allocates a node per name, which was most of the cost of
  // declaring a protocol's schema (hundreds of small events and storages).
  constexpr uint16_t kPairwise = 32;
  std::unordered_set<std::string_view> seen;
  if (n > kPairwise) seen.reserve(n);
  auto repeats = [&](uint16_t i) {
    if (n > kPairwise) return !seen.insert(f[i].name).second;
    for (uint16_t j = 0; j < i; ++j)
      if (std::strcmp(f[j].name, f[i].name) == 0) return true;
    return false;
  };
  for (uint16_t i = 0; i < n; ++i) {
    if (!f[i].name) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: field %u has no name", what, i);
    if (repeats(i))
      fail(USCOPE_ERR_DUPLICATE, "%s: %s %u \"%s\" repeats an earlier %s's name", what,
           props ? "property" : "field", i, f[i].name, props ? "property" : "field");
    if (wire::field_type_size(f[i].type) == 0)
      fail(USCOPE_ERR_SCHEMA, "%s: field \"%s\" has unknown type 0x%02x (spec §4.2)", what,
           f[i].name, f[i].type);
    if (f[i].type == wire::FT_ENUM ? f[i].enum_id >= schema_.enums.size() : f[i].enum_id != 0)
      fail(USCOPE_ERR_SCHEMA, "%s: field \"%s\": enum_id %u is not a defined enum of an ENUM field",
           what, f[i].name, f[i].enum_id);
    if (f[i].role > USCOPE_ROLE_TAIL_PTR || (!props && (f[i].role || f[i].pair_id)))
      fail(USCOPE_ERR_SCHEMA, "%s: field \"%s\": role/pair_id are for storage properties only, role <= 2",
           what, f[i].name);
    FieldDef d;
    d.name = pool.insert(f[i].name);
    d.type = f[i].type;
    d.enum_id = f[i].enum_id;
    d.role = f[i].role;
    d.pair_id = f[i].pair_id;
    out.push_back(d);
  }
  return out;
}

uint16_t SchemaBuilder::add_storage(const char *name, uint16_t scope_id, uint16_t num_slots,
                                    uint16_t flags, const uscope_field_t *fields,
                                    uint16_t num_fields, const uscope_field_t *props,
                                    uint16_t num_props) {
  need_name(name, "add_storage");
  if (schema_.storages.size() >= 0xFFFF)
    fail(USCOPE_ERR_LIMIT, "add_storage: at most 65,535 storages (spec §4.1)");
  check_scope_ref(scope_id, "add_storage");
  if (num_slots == 0) fail(USCOPE_ERR_SCHEMA, "add_storage \"%s\": num_slots must be >= 1", name);
  if (flags & ~(wire::SF_SPARSE | wire::SF_BUFFER))
    fail(USCOPE_ERR_SCHEMA, "add_storage \"%s\": unknown flag bits 0x%04x (spec §4.6.1)", name, flags);
  check_unique(storage_names_, scope_id, name, "storage", "add_storage");
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  StorageDef st;
  st.name = pool.insert(name);
  st.storage_id = static_cast<uint16_t>(schema_.storages.size());
  st.num_slots = num_slots;
  st.flags = flags;
  st.scope_id = scope_id;
  st.fields = make_fields(fields, num_fields, false, pool, "add_storage");
  st.props = make_fields(props, num_props, true, pool, "add_storage (property)");
  txn.commit();
  schema_.storages.push_back(std::move(st));
  storage_names_.emplace(name_key(scope_id, name), schema_.storages.back().storage_id);
  return schema_.storages.back().storage_id;
}

uint16_t SchemaBuilder::add_event(const char *name, uint16_t scope_id, const uscope_field_t *fields,
                                  uint16_t num_fields) {
  need_name(name, "add_event");
  if (schema_.events.size() >= 0xFFFF)
    fail(USCOPE_ERR_LIMIT, "add_event: at most 65,535 event types (spec §4.1)");
  check_scope_ref(scope_id, "add_event");
  check_unique(event_names_, scope_id, name, "event type", "add_event");
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  EventDef ev;
  ev.name = pool.insert(name);
  ev.event_type_id = static_cast<uint16_t>(schema_.events.size());
  ev.scope_id = scope_id;
  ev.fields = make_fields(fields, num_fields, false, pool, "add_event");
  txn.commit();
  schema_.events.push_back(std::move(ev));
  event_names_.emplace(name_key(scope_id, name), schema_.events.back().event_type_id);
  return schema_.events.back().event_type_id;
}

uint16_t SchemaBuilder::add_summary_field(const char *name, uint8_t type, uint16_t scope_id) {
  need_name(name, "add_summary_field");
  if (schema_.summary_fields.size() >= 0xFFFF)
    fail(USCOPE_ERR_LIMIT, "add_summary_field: at most 65,535 summary fields (spec §4.1)");
  if (wire::field_type_size(type) == 0)
    fail(USCOPE_ERR_SCHEMA, "add_summary_field \"%s\": unknown type 0x%02x", name, type);
  check_scope_ref(scope_id, "add_summary_field");
  check_unique(summary_names_, scope_id, name, "summary field", "add_summary_field");
  PoolTxn txn(schema_.pool);
  StringPool &pool = schema_.pool;
  SummaryFieldDef sf;
  sf.name = pool.insert(name);
  sf.type = type;
  sf.scope_id = scope_id;
  txn.commit();
  schema_.summary_fields.push_back(sf);
  const auto id = static_cast<uint16_t>(schema_.summary_fields.size() - 1);
  summary_names_.emplace(name_key(scope_id, name), id);
  return id;
}

const std::string *SchemaBuilder::find_dut_property(const char *key) const {
  for (const auto &d : dut_)
    if (d.key == key) return &d.value;
  return nullptr;
}

void SchemaBuilder::add_dut_property(const char *key, const char *value) {
  if (!key) fail(USCOPE_ERR_INVALID_ARGUMENT, "add_dut_property: key is NULL");
  if (!value) fail(USCOPE_ERR_INVALID_ARGUMENT, "add_dut_property \"%s\": value is NULL", key);
  // §3 gives a key no meaning twice: a reader's lookup would see only one of
  // the values, so a second one is refused rather than silently shadowed.
  if (const std::string *old = find_dut_property(key))
    fail(USCOPE_ERR_SCHEMA, "add_dut_property: key \"%s\" is already set (to \"%s\"); a key is set once",
         key, old->c_str());
  // §3: num_properties is a u16.
  if (dut_.size() >= 0xFFFF) fail(USCOPE_ERR_LIMIT, "add_dut_property: at most 65,535 DUT properties (spec §3)");
  dut_.push_back({key, value});
}

}  // namespace uscope
