// uscope_sv_schema_from_json / uscope_open_json: the core's JSON schema reader
// (src/schema/json_schema.cpp, compiled into the bridge) adding to a bridge
// schema, so that what the file declares is known by name to later SV calls
// and to uscope_sv_find, and its "options" become the schema's writer
// defaults. This file only adapts the reader's target to schema.hpp.
#include "schema.hpp"
#include "schema/json_schema.hpp"

namespace uscope_dpi {
namespace {

class BridgeTarget final : public uscope::JsonSchemaTarget {
 public:
  explicit BridgeTarget(Schema &s) : s_(s) {}

  bool has(uscope::NameKind kind, const std::string &name) const override { return ids(kind).has(name); }
  int one(uscope::NameKind kind, const std::string &name) const override {
    return ids(kind).one(kind == uscope::NameKind::enumeration ? "enum" : kind == uscope::NameKind::scope ? "scope" : "clock",
                         name);
  }
  int add_clock(const std::string &name, uint32_t period_ps) override {
    return uscope_dpi::add_clock(s_, name, period_ps);
  }
  int add_scope(const std::string &name, int parent, const std::string &protocol, int clock) override {
    return uscope_dpi::add_scope(s_, name, parent, protocol, clock);
  }
  int add_enum(const std::string &name, const std::vector<std::string> &values) override {
    return uscope_dpi::add_enum(s_, name, values);
  }
  int add_storage(const std::string &name, int scope, uint32_t num_slots, uint32_t flags,
                  const std::vector<FieldSpec> &fields, const std::vector<FieldSpec> &props) override {
    return uscope_dpi::add_storage(s_, name, scope, num_slots, flags, fields, props);
  }
  int add_event(const std::string &name, int scope, const std::vector<FieldSpec> &fields) override {
    return uscope_dpi::add_event(s_, name, scope, fields);
  }
  int add_summary(const std::string &name, uint8_t type, int scope) override {
    return uscope_dpi::add_summary(s_, name, type, scope);
  }
  void add_dut_property(const std::string &key, const std::string &value) override {
    uscope_dpi::add_dut_property(s_, key, value);
  }
  bool apply_option(const std::string &key, const std::string &value) override {
    return uscope_dpi::apply_option(&s_.opts, key, value);
  }

 private:
  const NameIds &ids(uscope::NameKind kind) const {
    switch (kind) {
      case uscope::NameKind::clock: return s_.names.clocks;
      case uscope::NameKind::scope: return s_.names.scopes;
      case uscope::NameKind::enumeration: break;
    }
    return s_.names.enums;
  }
  Schema &s_;
};

}  // namespace

std::unique_ptr<Schema> load_json_schema(const std::string &path) {
  auto s = std::unique_ptr<Schema>(new Schema);
  BridgeTarget target(*s);
  uscope::load_json_schema_file(path, target,
                                {USCOPE_DPI_ERR_JSON, USCOPE_DPI_ERR_JSON_SCHEMA, USCOPE_DPI_ERR_SYNTAX});
  return s;
}

}  // namespace uscope_dpi
