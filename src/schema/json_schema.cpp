// The JSON schema reader (json_schema.hpp). Moved here from the DPI bridge
// (dpi/src/json_schema.cpp) with its messages unchanged.
#include "schema/json_schema.hpp"

#include <simdjson.h>

#include <initializer_list>

#include "base/error.hpp"

namespace uscope {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

const char *kind_word(NameKind kind) {
  switch (kind) {
    case NameKind::clock: return "clock";
    case NameKind::scope: return "scope";
    case NameKind::enumeration: return "enum";
  }
  return "name";
}

class JsonSchemaReader {
 public:
  JsonSchemaReader(std::string file, JsonSchemaTarget &target, const JsonSchemaStatuses &st)
      : file_(std::move(file)), t_(target), st_(st) {}

  void read(element root) {
    const object top = as_object(root, "$");
    allow(top, "$", {"version", "dut", "options", "clocks", "scopes", "enums", "storages", "events",
                     "summary_fields"});
    element e;
    if (top["version"].get(e) == simdjson::SUCCESS) {
      const uint64_t v = as_uint(e, "$.version", 0xFFFFFFFFu);
      if (v != 1) bad("$.version", "version " + std::to_string(v) + " is not supported (this bridge reads 1)");
    }
    if (top["dut"].get(e) == simdjson::SUCCESS) dut(e, "$.dut");
    if (top["options"].get(e) == simdjson::SUCCESS) options(e, "$.options");
    each(top, "clocks", [&](element c, const std::string &p) { clock(c, p); });
    each(top, "scopes", [&](element c, const std::string &p) { scope(c, p); });
    each(top, "enums", [&](element c, const std::string &p) { enumeration(c, p); });
    each(top, "storages", [&](element c, const std::string &p) { storage(c, p); });
    each(top, "events", [&](element c, const std::string &p) { event(c, p); });
    each(top, "summary_fields", [&](element c, const std::string &p) { summary(c, p); });
  }

 private:
  [[noreturn]] void bad(const std::string &path, const std::string &msg) const {
    throw Error(st_.not_schema, file_ + ": " + path + ": " + msg);
  }

  // Run f; a failure gains the file and JSON path. Syntax and name errors
  // become not_schema; the schema builder's (SCHEMA, DUPLICATE, LIMIT) keep
  // their status.
  template <class F>
  auto at(const std::string &path, F &&f) -> decltype(f()) {
    try {
      return f();
    } catch (const Error &x) {
      const uscope_status_t code = x.code();
      const uscope_status_t st = (code == st_.syntax || code == USCOPE_ERR_NOT_FOUND ||
                                  code == USCOPE_ERR_INVALID_ARGUMENT)
                                     ? st_.not_schema
                                     : code;
      const std::string msg = x.what();
      if (msg.compare(0, file_.size(), file_) == 0) throw;  // already located
      throw Error(st, file_ + ": " + path + ": " + msg);
    }
  }

  static const char *type_name(element e) {
    switch (e.type()) {
      case element_type::ARRAY: return "an array";
      case element_type::OBJECT: return "an object";
      case element_type::INT64:
      case element_type::UINT64: return "an integer";
      case element_type::DOUBLE: return "a number";
      case element_type::STRING: return "a string";
      case element_type::BOOL: return "a boolean";
      case element_type::NULL_VALUE: return "null";
    }
    return "a value";
  }

  object as_object(element e, const std::string &path) const {
    object o;
    if (e.get(o) != simdjson::SUCCESS) bad(path, std::string("expected an object, found ") + type_name(e));
    return o;
  }
  array as_array(element e, const std::string &path) const {
    array a;
    if (e.get(a) != simdjson::SUCCESS) bad(path, std::string("expected an array, found ") + type_name(e));
    return a;
  }
  std::string as_string(element e, const std::string &path) const {
    std::string_view v;
    if (e.get(v) != simdjson::SUCCESS) bad(path, std::string("expected a string, found ") + type_name(e));
    return std::string(v);
  }
  uint64_t as_uint(element e, const std::string &path, uint64_t max) const {
    uint64_t v = 0;
    if (e.get(v) != simdjson::SUCCESS)
      bad(path, std::string("expected a non-negative integer, found ") + type_name(e));
    if (v > max) bad(path, std::to_string(v) + " is larger than " + std::to_string(max));
    return v;
  }
  bool as_bool(element e, const std::string &path) const {
    bool v = false;
    if (e.get(v) != simdjson::SUCCESS) bad(path, std::string("expected true or false, found ") + type_name(e));
    return v;
  }

  // Every key of o must be in allowed (keys starting with '_' are comments).
  void allow(object o, const std::string &path, std::initializer_list<const char *> allowed) const {
    for (auto kv : o) {
      const std::string_view key = kv.key;
      if (!key.empty() && key[0] == '_') continue;
      bool ok = false;
      for (const char *a : allowed) ok = ok || key == a;
      if (!ok) {
        std::string list;
        for (const char *a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        bad(path, "unknown member \"" + std::string(key) + "\" (expected: " + list + ")");
      }
    }
  }

  element required(object o, const char *key, const std::string &path) const {
    element e;
    if (o[key].get(e) != simdjson::SUCCESS) bad(path, std::string("missing member \"") + key + "\"");
    return e;
  }
  bool optional(object o, const char *key, element *e) const { return o[key].get(*e) == simdjson::SUCCESS; }

  template <class F>
  void each(object top, const char *key, F &&f) {
    element e;
    if (!optional(top, key, &e)) return;
    const std::string path = std::string("$.") + key;
    size_t i = 0;
    for (element item : as_array(e, path)) f(item, path + "[" + std::to_string(i++) + "]");
  }

  // A reference to a clock / scope: a name, an id, or null / absent (-1).
  int ref(object o, const char *key, const std::string &path, NameKind k, int max_id) const {
    const char *kind = kind_word(k);
    element e;
    if (!optional(o, key, &e) || e.is_null()) return -1;
    const std::string p = path + "." + key;
    if (e.is_string()) {
      const std::string n = as_string(e, p);
      if (!t_.has(k, n)) bad(p, "no " + std::string(kind) + " named \"" + n + "\" declared above");
      try {
        return t_.one(k, n);
      } catch (const Error &f) {  // declared more than once (scopes of different parents)
        bad(p, f.what());
      }
    }
    int64_t v = 0;
    if (e.get(v) != simdjson::SUCCESS)
      bad(p, std::string("expected a ") + kind + " name or id, found " + type_name(e));
    if (v < -1 || v > max_id) bad(p, std::string(kind) + " id " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  }

  std::string name_of(object o, const std::string &path) const {
    const std::string n = as_string(required(o, "name", path), path + ".name");
    if (n.empty()) bad(path + ".name", "empty name");
    return n;
  }

  void dut(element e, const std::string &path) {
    for (auto kv : as_object(e, path)) {
      const std::string key(kv.key);
      const std::string p = path + "." + key;
      // Numbers and booleans are written as their JSON text; the format stores strings.
      std::string value;
      if (kv.value.is_string()) value = as_string(kv.value, p);
      else if (kv.value.is_number() || kv.value.is_bool()) value = simdjson::minify(kv.value);
      else bad(p, std::string("expected a string, number or boolean, found ") + type_name(kv.value));
      at(p, [&] { t_.add_dut_property(key, value); });
    }
  }

  void options(element e, const std::string &path) {
    for (auto kv : as_object(e, path)) {
      const std::string key(kv.key);
      const std::string p = path + "." + key;
      std::string value;
      if (kv.value.is_string()) value = as_string(kv.value, p);
      else if (kv.value.is_number()) value = simdjson::minify(kv.value);
      else bad(p, std::string("expected a string or a number, found ") + type_name(kv.value));
      const bool known = at(p, [&] { return t_.apply_option(key, value); });
      if (!known)
        bad(p, "unknown option (compression, level, checkpoint_interval_ps, durability, frames, "
               "backpressure, queue_bytes, value_check)");
    }
  }

  void clock(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "period_ps"});
    const std::string name = name_of(o, path);
    element p;
    const uint32_t period =
        optional(o, "period_ps", &p) ? static_cast<uint32_t>(as_uint(p, path + ".period_ps", 0xFFFFFFFFu)) : 0;
    at(path, [&] { return t_.add_clock(name, period); });
  }

  void scope(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "parent", "protocol", "clock"});
    const std::string name = name_of(o, path);
    const int parent = ref(o, "parent", path, NameKind::scope, 0xFFFE);
    const int clk = ref(o, "clock", path, NameKind::clock, 0xFE);
    std::string protocol;
    element p;
    if (optional(o, "protocol", &p) && !p.is_null()) protocol = as_string(p, path + ".protocol");
    at(path, [&] { return t_.add_scope(name, parent, protocol, clk); });
  }

  void enumeration(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "values"});
    const std::string name = name_of(o, path);
    const std::string vp = path + ".values";
    element v = required(o, "values", path);
    std::vector<std::string> values;
    if (v.is_string()) {
      values = split_csv(as_string(v, vp));
    } else {
      size_t i = 0;
      for (element item : as_array(v, vp)) values.push_back(as_string(item, vp + "[" + std::to_string(i++) + "]"));
    }
    at(path, [&] { return t_.add_enum(name, values); });
  }

  // A field list: a CSV string, or an array of {name, type, enum?, role?, pair?}.
  std::vector<FieldSpec> fields(object o, const char *key, const std::string &path, bool is_property,
                                bool required_member) {
    element e;
    if (!optional(o, key, &e)) {
      if (required_member) bad(path, std::string("missing member \"") + key + "\"");
      return {};
    }
    const std::string fp = path + "." + key;
    if (e.is_string()) {
      const std::string csv = as_string(e, fp);
      return at(fp, [&] { return parse_fields(csv, is_property, "field list", st_.not_schema); });
    }
    std::vector<FieldSpec> out;
    size_t i = 0;
    for (element item : as_array(e, fp)) {
      const std::string p = fp + "[" + std::to_string(i++) + "]";
      const object f = as_object(item, p);
      if (is_property) allow(f, p, {"name", "type", "enum", "role", "pair"});
      else allow(f, p, {"name", "type", "enum"});
      FieldSpec spec;
      spec.name = name_of(f, p);
      const std::string type = as_string(required(f, "type", p), p + ".type");
      element en;
      const bool has_enum = optional(f, "enum", &en);
      if (type == "enum") {
        if (!has_enum) bad(p, "type \"enum\" needs an \"enum\" member (or write \"enum(<name>)\")");
        spec.type = USCOPE_FT_ENUM;
        if (en.is_string()) {
          spec.enum_ref = as_string(en, p + ".enum");
        } else {
          spec.enum_ref = std::to_string(as_uint(en, p + ".enum", 254));
        }
        if (!t_.has(NameKind::enumeration, spec.enum_ref) && !en.is_number())
          bad(p + ".enum", "no enum named \"" + spec.enum_ref + "\" declared above");
      } else {
        if (!parse_type(type, &spec))
          bad(p + ".type", "unknown type \"" + type + "\" (u8 u16 u32 u64 i8 i16 i32 i64 bool string enum "
                           "enum(<name>))");
        if (has_enum) bad(p + ".enum", "only fields of type \"enum\" take an \"enum\" member");
        if (spec.type == USCOPE_FT_ENUM && !t_.has(NameKind::enumeration, spec.enum_ref) &&
            spec.enum_ref.find_first_not_of("0123456789") != std::string::npos)
          bad(p + ".type", "no enum named \"" + spec.enum_ref + "\" declared above");
      }
      element r;
      if (optional(f, "role", &r)) {
        const std::string role = as_string(r, p + ".role");
        if (!parse_role(role, &spec) || role.find('(') != std::string::npos)
          bad(p + ".role", "unknown role \"" + role + "\" (plain, head_ptr, tail_ptr; the pair id goes in \"pair\")");
      }
      element pr;
      if (optional(f, "pair", &pr)) spec.pair_id = static_cast<uint8_t>(as_uint(pr, p + ".pair", 0xFF));
      out.push_back(std::move(spec));
    }
    return out;
  }

  void storage(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "scope", "slots", "sparse", "buffer", "fields", "properties"});
    const std::string name = name_of(o, path);
    const int sc = ref(o, "scope", path, NameKind::scope, 0xFFFE);
    const uint32_t slots = static_cast<uint32_t>(as_uint(required(o, "slots", path), path + ".slots", 0xFFFF));
    uint32_t flags = 0;
    element b;
    if (optional(o, "sparse", &b) && as_bool(b, path + ".sparse")) flags |= USCOPE_SF_SPARSE;
    if (optional(o, "buffer", &b) && as_bool(b, path + ".buffer")) flags |= USCOPE_SF_BUFFER;
    const std::vector<FieldSpec> f = fields(o, "fields", path, false, true);
    const std::vector<FieldSpec> p = fields(o, "properties", path, true, false);
    at(path, [&] { return t_.add_storage(name, sc, slots, flags, f, p); });
  }

  void event(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "scope", "fields"});
    const std::string name = name_of(o, path);
    const int sc = ref(o, "scope", path, NameKind::scope, 0xFFFE);
    const std::vector<FieldSpec> f = fields(o, "fields", path, false, false);
    at(path, [&] { return t_.add_event(name, sc, f); });
  }

  void summary(element e, const std::string &path) {
    const object o = as_object(e, path);
    allow(o, path, {"name", "type", "scope"});
    const std::string name = name_of(o, path);
    const std::string type = as_string(required(o, "type", path), path + ".type");
    FieldSpec spec;
    if (!parse_type(type, &spec) || spec.type == USCOPE_FT_ENUM)
      bad(path + ".type", "unknown type \"" + type + "\" (u8 u16 u32 u64 i8 i16 i32 i64 bool string)");
    const int sc = ref(o, "scope", path, NameKind::scope, 0xFFFE);
    at(path, [&] { return t_.add_summary(name, spec.type, sc); });
  }

  std::string file_;
  JsonSchemaTarget &t_;
  const JsonSchemaStatuses &st_;
};

void check_parse(simdjson::error_code err, const std::string &label, const JsonSchemaStatuses &st) {
  if (err == simdjson::IO_ERROR) throw Error(st.not_json, label + ": cannot read the file");
  if (err != simdjson::SUCCESS)
    throw Error(st.not_json, label + ": not valid JSON (" + simdjson::error_message(err) + ")");
}

}  // namespace

void load_json_schema_file(const std::string &path, JsonSchemaTarget &target, const JsonSchemaStatuses &st) {
  simdjson::dom::parser parser;
  element root;
  check_parse(parser.load(path).get(root), path, st);
  JsonSchemaReader(path, target, st).read(root);
}

void load_json_schema_text(std::string_view json, const std::string &label, JsonSchemaTarget &target,
                           const JsonSchemaStatuses &st) {
  simdjson::dom::parser parser;
  element root;
  // parse() copies into a padded buffer: json needs no SIMDJSON_PADDING.
  check_parse(parser.parse(json.data(), json.size()).get(root), label, st);
  JsonSchemaReader(label, target, st).read(root);
}

}  // namespace uscope
