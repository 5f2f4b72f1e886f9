#include "schema/json_schema_builder.hpp"

#include "schema/json_schema.hpp"
#include "schema/name_ids.hpp"

namespace uscope {
namespace {

// The core's target: ids by name for the references a JSON file makes, and
// the builder's add_* calls with the file's -1 ("root", "inherit") mapped to
// the format's sentinels.
class BuilderTarget final : public JsonSchemaTarget {
 public:
  explicit BuilderTarget(SchemaBuilder &b) : b_(b) {}

  bool has(NameKind kind, const std::string &name) const override { return ids(kind).has(name); }
  int one(NameKind kind, const std::string &name) const override {
    return ids(kind).one(kind == NameKind::enumeration ? "enum" : kind == NameKind::scope ? "scope" : "clock", name);
  }
  int add_clock(const std::string &name, uint32_t period_ps) override {
    const int id = b_.add_clock(name.c_str(), period_ps);
    clocks_.add(name, id);
    return id;
  }
  int add_scope(const std::string &name, int parent, const std::string &protocol, int clock) override {
    const int id = b_.add_scope(name.c_str(), parent < 0 ? USCOPE_NO_PARENT : static_cast<uint16_t>(parent),
                                protocol.empty() ? nullptr : protocol.c_str(),
                                clock < 0 ? USCOPE_CLOCK_INHERIT : static_cast<uint8_t>(clock));
    scopes_.add(name, id);
    return id;
  }
  int add_enum(const std::string &name, const std::vector<std::string> &values) override {
    if (values.size() > 0xFFFF) throw Error(USCOPE_ERR_LIMIT, "enum \"" + name + "\": too many values");
    std::vector<const char *> ptrs;
    for (const std::string &v : values) ptrs.push_back(v.c_str());
    const int id = b_.add_enum(name.c_str(), ptrs.data(), static_cast<uint16_t>(ptrs.size()));
    enums_.add(name, id);
    return id;
  }
  int add_storage(const std::string &name, int scope, uint32_t num_slots, uint32_t flags,
                  const std::vector<FieldSpec> &fields, const std::vector<FieldSpec> &props) override {
    const std::string ctx = "storage \"" + name + "\"";
    if (fields.size() > 0xFFFF || props.size() > 0xFFFF) throw Error(USCOPE_ERR_LIMIT, ctx + ": too many fields");
    const std::vector<uscope_field_t> f = to_c_fields(fields, enums_, ctx);
    const std::vector<uscope_field_t> p = to_c_fields(props, enums_, ctx);
    // The reader passes slots <= 0xFFFF and flags from two booleans.
    return b_.add_storage(name.c_str(), scope_id(scope), static_cast<uint16_t>(num_slots),
                          static_cast<uint16_t>(flags), f.data(), static_cast<uint16_t>(f.size()),
                          p.empty() ? nullptr : p.data(), static_cast<uint16_t>(p.size()));
  }
  int add_event(const std::string &name, int scope, const std::vector<FieldSpec> &fields) override {
    const std::string ctx = "event \"" + name + "\"";
    if (fields.size() > 0xFFFF) throw Error(USCOPE_ERR_LIMIT, ctx + ": too many fields");
    const std::vector<uscope_field_t> f = to_c_fields(fields, enums_, ctx);
    return b_.add_event(name.c_str(), scope_id(scope), f.empty() ? nullptr : f.data(),
                        static_cast<uint16_t>(f.size()));
  }
  int add_summary(const std::string &name, uint8_t type, int scope) override {
    return b_.add_summary_field(name.c_str(), type, scope_id(scope));
  }
  void add_dut_property(const std::string &key, const std::string &value) override {
    b_.add_dut_property(key.c_str(), value.c_str());
  }
  // Writer settings, not part of a schema (json_schema_builder.hpp).
  bool apply_option(const std::string &, const std::string &) override { return true; }

 private:
  // The reader has range-checked ids: -1..65534.
  static uint16_t scope_id(int scope) { return scope < 0 ? USCOPE_ROOT_SCOPE : static_cast<uint16_t>(scope); }
  const NameIds &ids(NameKind kind) const {
    switch (kind) {
      case NameKind::clock: return clocks_;
      case NameKind::scope: return scopes_;
      case NameKind::enumeration: break;
    }
    return enums_;
  }
  SchemaBuilder &b_;
  NameIds clocks_, scopes_, enums_;
};

}  // namespace

void build_schema_from_json(SchemaBuilder &b, std::string_view json) {
  BuilderTarget target(b);
  load_json_schema_text(json, "JSON schema", target,
                        {USCOPE_ERR_INVALID_ARGUMENT, USCOPE_ERR_SCHEMA, USCOPE_ERR_INVALID_ARGUMENT});
}

}  // namespace uscope
