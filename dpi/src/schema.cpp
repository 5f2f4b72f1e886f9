// Bridge schemas and the text syntaxes of the bridge (CSV field lists,
// writer options). See docs/dpi.md for the syntax as users see it.
#include "schema.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "uscope/uscope_dpi.h"

namespace uscope_dpi {

void fail(int status, std::string msg) { throw Failure(status, std::move(msg)); }

std::string format(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(&big[0], big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<size_t>(n));
  return big;
}

void check(uscope_status_t status, const std::string &context) {
  if (status != USCOPE_OK) fail(status, context + ": " + uscope_last_error());
}

Schema::Schema() {
  uscope_writer_options_init(&opts);
  check(uscope_schema_new(&raw), "uscope_schema_new");
}
Schema::~Schema() { uscope_schema_free(raw); }

// ── ids ──

uint16_t scope_ref(int scope, const char *what) {
  if (scope == -1) return USCOPE_ROOT_SCOPE;  // == USCOPE_NO_PARENT
  if (scope < 0 || scope >= 0xFFFF)
    fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s: scope id %d is neither -1 nor 0..65534", what, scope));
  return static_cast<uint16_t>(scope);
}

static uint8_t clock_ref(int clock, const char *what) {
  if (clock == -1) return USCOPE_CLOCK_INHERIT;
  if (clock < 0 || clock >= 0xFF)
    fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s: clock id %d is neither -1 nor 0..254", what, clock));
  return static_cast<uint8_t>(clock);
}

static bool all_digits(const std::string &s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Field specs into libuscope fields. The names stay owned by specs.
static std::vector<uscope_field_t> to_fields(const Schema &s, const std::vector<FieldSpec> &specs,
                                             const std::string &context) {
  std::vector<uscope_field_t> out;
  out.reserve(specs.size());
  for (const FieldSpec &f : specs) {
    uscope_field_t u{};
    u.name = f.name.c_str();
    u.type = f.type;
    u.role = f.role;
    u.pair_id = f.pair_id;
    if (f.type == USCOPE_FT_ENUM) {
      if (s.names.enums.has(f.enum_ref)) {
        u.enum_id = static_cast<uint8_t>(s.names.enums.one("enum", f.enum_ref));  // throws when repeated
      } else if (all_digits(f.enum_ref) && f.enum_ref.size() <= 3 && std::atoi(f.enum_ref.c_str()) < 255) {
        u.enum_id = static_cast<uint8_t>(std::atoi(f.enum_ref.c_str()));
      } else {
        fail(USCOPE_ERR_NOT_FOUND, format("%s: field \"%s\": no enum named \"%s\"", context.c_str(),
                                          f.name.c_str(), f.enum_ref.c_str()));
      }
    }
    out.push_back(u);
  }
  return out;
}

static std::vector<std::string> names_of(const std::vector<FieldSpec> &specs) {
  std::vector<std::string> out;
  for (const FieldSpec &f : specs) out.push_back(f.name);
  return out;
}

int add_clock(Schema &s, const std::string &name, uint32_t period_ps) {
  const std::string ctx = "clock \"" + name + "\"";
  uint8_t id = 0;
  check(uscope_schema_add_clock(s.raw, &id, name.c_str(), period_ps), ctx);
  s.names.clocks.add(name, id);
  return id;
}

int add_scope(Schema &s, const std::string &name, int parent, const std::string &protocol, int clock) {
  const std::string ctx = "scope \"" + name + "\"";
  const uint16_t p = scope_ref(parent, ctx.c_str());
  const uint8_t c = clock_ref(clock, ctx.c_str());
  uint16_t id = 0;
  check(uscope_schema_add_scope(s.raw, &id, name.c_str(), p,
                                protocol.empty() ? nullptr : protocol.c_str(), c),
        ctx);
  s.names.scopes.add(name, id);
  return id;
}

int add_enum(Schema &s, const std::string &name, const std::vector<std::string> &values) {
  const std::string ctx = "enum \"" + name + "\"";
  if (values.size() > 0xFFFF) fail(USCOPE_ERR_LIMIT, ctx + ": too many values");
  std::vector<const char *> ptrs;
  for (const std::string &v : values) ptrs.push_back(v.c_str());
  uint8_t id = 0;
  check(uscope_schema_add_enum(s.raw, &id, name.c_str(), ptrs.data(), static_cast<uint16_t>(ptrs.size())),
        ctx);
  s.names.enums.add(name, id);
  s.names.enum_values[id] = values;
  return id;
}

int add_storage(Schema &s, const std::string &name, int scope, uint32_t num_slots, uint32_t flags,
                const std::vector<FieldSpec> &fields, const std::vector<FieldSpec> &props) {
  const std::string ctx = "storage \"" + name + "\"";
  const uint16_t sc = scope_ref(scope, ctx.c_str());
  if (num_slots == 0 || num_slots > 0xFFFF)
    fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s: %u slots; a storage has 1 to 65535", ctx.c_str(), num_slots));
  if (flags > 0xFFFF)
    fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s: flags 0x%x do not fit 16 bits", ctx.c_str(), flags));
  if (fields.size() > 0xFFFF || props.size() > 0xFFFF) fail(USCOPE_ERR_LIMIT, ctx + ": too many fields");
  const std::vector<uscope_field_t> f = to_fields(s, fields, ctx);
  const std::vector<uscope_field_t> p = to_fields(s, props, ctx);
  uint16_t id = 0;
  check(uscope_schema_add_storage(s.raw, &id, name.c_str(), sc,
                                  static_cast<uint16_t>(num_slots), static_cast<uint16_t>(flags), f.data(),
                                  static_cast<uint16_t>(f.size()), p.empty() ? nullptr : p.data(), static_cast<uint16_t>(p.size())),
        ctx);
  s.names.storage_fields[id] = names_of(fields);
  s.names.storage_props[id] = names_of(props);
  return id;
}

int add_event(Schema &s, const std::string &name, int scope, const std::vector<FieldSpec> &fields) {
  const std::string ctx = "event \"" + name + "\"";
  const uint16_t sc = scope_ref(scope, ctx.c_str());
  if (fields.size() > 0xFFFF) fail(USCOPE_ERR_LIMIT, ctx + ": too many fields");
  const std::vector<uscope_field_t> f = to_fields(s, fields, ctx);
  uint16_t id = 0;
  check(uscope_schema_add_event(s.raw, &id, name.c_str(), sc,
                                f.empty() ? nullptr : f.data(), static_cast<uint16_t>(f.size())),
        ctx);
  s.names.event_fields[id] = names_of(fields);
  return id;
}

int add_summary(Schema &s, const std::string &name, uint8_t type, int scope) {
  const std::string ctx = "summary field \"" + name + "\"";
  const uint16_t sc = scope_ref(scope, ctx.c_str());
  uint16_t id = 0;
  check(uscope_schema_add_summary_field(s.raw, &id, name.c_str(), type, sc), ctx);
  s.names.summaries.add(name, id);
  return id;
}

void add_dut_property(Schema &s, const std::string &key, const std::string &value) {
  if (key.empty()) fail(USCOPE_ERR_INVALID_ARGUMENT, "DUT property: empty key");
  check(uscope_schema_add_dut_property(s.raw, key.c_str(), value.c_str()), "DUT property \"" + key + "\"");
}

void NameIds::add(const std::string &name, int id) {
  std::vector<int> &v = ids[name];
  if (std::find(v.begin(), v.end(), id) == v.end()) v.push_back(id);
}

int NameIds::one(const char *kind, const std::string &name) const {
  auto it = ids.find(name);
  if (it == ids.end()) fail(USCOPE_ERR_NOT_FOUND, format("no %s named \"%s\"", kind, name.c_str()));
  const std::vector<int> &v = it->second;
  if (v.size() == 1) return v[0];
  std::string list;
  for (int id : v) list += (list.empty() ? "" : ", ") + std::string(kind) + " " + std::to_string(id);
  fail(USCOPE_ERR_AMBIGUOUS, format("%zu %ss are named \"%s\": %s; use the id", v.size(), kind, name.c_str(),
                                    list.c_str()));
}

// ── text ──

std::string trim(const std::string &text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return text.substr(b, e - b);
}

std::vector<std::string> split_csv(const std::string &text) {
  std::vector<std::string> out;
  if (trim(text).empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

static std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_type(const std::string &text, FieldSpec *spec) {
  static const struct {
    const char *name;
    uint8_t type;
  } kTypes[] = {{"u8", USCOPE_FT_U8},   {"u16", USCOPE_FT_U16},   {"u32", USCOPE_FT_U32},
                {"u64", USCOPE_FT_U64}, {"i8", USCOPE_FT_I8},     {"i16", USCOPE_FT_I16},
                {"i32", USCOPE_FT_I32}, {"i64", USCOPE_FT_I64},   {"bool", USCOPE_FT_BOOL},
                {"string", USCOPE_FT_STRING_REF}, {"string_ref", USCOPE_FT_STRING_REF}};
  const std::string t = lower(trim(text));
  for (const auto &k : kTypes) {
    if (t == k.name) {
      spec->type = k.type;
      spec->enum_ref.clear();
      return true;
    }
  }
  // enum(<name or id>): the enum's name keeps its case.
  const std::string raw = trim(text);
  if (t.compare(0, 5, "enum(") == 0 && raw.size() > 6 && raw.back() == ')') {
    const std::string ref = trim(raw.substr(5, raw.size() - 6));
    if (ref.empty()) return false;
    spec->type = USCOPE_FT_ENUM;
    spec->enum_ref = ref;
    return true;
  }
  return false;
}

bool parse_role(const std::string &text, FieldSpec *spec) {
  const std::string t = lower(trim(text));
  if (t == "plain") {
    spec->role = USCOPE_ROLE_PLAIN;
    spec->pair_id = 0;
    return true;
  }
  std::string word = t, arg;
  const size_t paren = t.find('(');
  if (paren != std::string::npos) {
    if (t.back() != ')') return false;
    word = trim(t.substr(0, paren));
    arg = trim(t.substr(paren + 1, t.size() - paren - 2));
  }
  if (word == "head_ptr") spec->role = USCOPE_ROLE_HEAD_PTR;
  else if (word == "tail_ptr") spec->role = USCOPE_ROLE_TAIL_PTR;
  else return false;
  spec->pair_id = 0;
  if (paren != std::string::npos) {
    uint64_t pair = 0;
    if (!parse_u64(arg, &pair) || pair > 0xFF) return false;
    spec->pair_id = static_cast<uint8_t>(pair);
  }
  return true;
}

std::vector<FieldSpec> parse_fields(const std::string &csv, bool is_property, const char *what) {
  std::vector<FieldSpec> out;
  for (const std::string &item : split_csv(csv)) {
    FieldSpec f;
    const size_t c1 = item.find(':');
    if (item.empty() || c1 == std::string::npos)
      fail(USCOPE_DPI_ERR_SYNTAX, format("%s: \"%s\" is not name:type", what, item.c_str()));
    f.name = trim(item.substr(0, c1));
    // A ':' after the type separates the role; enum(...) contains no ':'.
    const size_t c2 = item.find(':', c1 + 1);
    const std::string type = item.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (f.name.empty()) fail(USCOPE_DPI_ERR_SYNTAX, format("%s: \"%s\" has an empty name", what, item.c_str()));
    if (!parse_type(type, &f))
      fail(USCOPE_DPI_ERR_SYNTAX,
           format("%s: field \"%s\": unknown type \"%s\" (u8 u16 u32 u64 i8 i16 i32 i64 bool string "
                  "enum(<name>))", what, f.name.c_str(), trim(type).c_str()));
    if (c2 != std::string::npos) {
      const std::string role = item.substr(c2 + 1);
      if (!is_property)
        fail(USCOPE_DPI_ERR_SYNTAX, format("%s: field \"%s\": only storage properties take a role",
                                           what, f.name.c_str()));
      if (!parse_role(role, &f))
        fail(USCOPE_DPI_ERR_SYNTAX, format("%s: field \"%s\": unknown role \"%s\" (plain, head_ptr, "
                                           "tail_ptr, head_ptr(<pair>), tail_ptr(<pair>))",
                                           what, f.name.c_str(), trim(role).c_str()));
    }
    out.push_back(std::move(f));
  }
  return out;
}

bool parse_u64(const std::string &text, uint64_t *out) {
  const std::string t = trim(text);
  if (t.empty() || t[0] == '-' || t[0] == '+') return false;
  errno = 0;
  char *end = nullptr;
  const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const unsigned long long v = std::strtoull(t.c_str(), &end, hex ? 16 : 10);
  if (errno != 0 || end != t.c_str() + t.size()) return false;
  *out = v;
  return true;
}

static bool parse_i32(const std::string &text, int32_t *out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || end != t.c_str() + t.size() || v < INT32_MIN || v > INT32_MAX) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

bool apply_option(uscope_writer_options_t *o, const std::string &key_in, const std::string &value_in) {
  const std::string key = lower(trim(key_in));
  const std::string value = lower(trim(value_in));
  auto bad = [&]() {
    fail(USCOPE_DPI_ERR_SYNTAX, format("option %s: bad value \"%s\"", key.c_str(), value.c_str()));
  };
  auto pick = [&](std::initializer_list<std::pair<const char *, uint32_t>> choices) -> uint32_t {
    for (const auto &c : choices)
      if (value == c.first) return c.second;
    bad();
    return 0;
  };
  uint64_t n = 0;
  if (key == "compression") {
    if (uscope_compression_find(&o->compression, value.c_str()) != USCOPE_OK) bad();
  } else if (key == "level" || key == "compression_level") {
    int32_t level = 0;
    if (!parse_i32(value, &level)) bad();
    o->compression_level = level;
  } else if (key == "checkpoint_interval_ps" || key == "checkpoint_interval") {
    if (!parse_u64(value, &n)) bad();
    o->checkpoint_interval_ps = n;
  } else if (key == "durability") {
    o->durability = pick({{"flush", USCOPE_DURABILITY_FLUSH}, {"none", USCOPE_DURABILITY_NONE},
                          {"fdatasync", USCOPE_DURABILITY_FDATASYNC}});
  } else if (key == "frames" || key == "frame_format") {
    o->frame_format = pick({{"v02", USCOPE_FRAMES_V02}, {"v01", USCOPE_FRAMES_V01}});
  } else if (key == "backpressure") {
    o->backpressure = pick({{"block", USCOPE_BACKPRESSURE_BLOCK}, {"drop", USCOPE_BACKPRESSURE_DROP}});
  } else if (key == "queue_bytes") {
    if (!parse_u64(value, &n)) bad();
    o->queue_bytes = n;
  } else if (key == "value_check") {
    o->value_check = pick({{"none", USCOPE_VALUE_CHECK_NONE}, {"strict", USCOPE_VALUE_CHECK_STRICT}});
  } else {
    return false;
  }
  return true;
}

void parse_options(uscope_writer_options_t *opts, const std::string &text) {
  std::string item;
  auto flush = [&]() {
    const std::string t = trim(item);
    item.clear();
    if (t.empty()) return;
    const size_t eq = t.find('=');
    if (eq == std::string::npos)
      fail(USCOPE_DPI_ERR_SYNTAX, format("options: \"%s\" is not key=value", t.c_str()));
    if (!apply_option(opts, t.substr(0, eq), t.substr(eq + 1)))
      fail(USCOPE_DPI_ERR_SYNTAX,
           format("options: unknown key \"%s\" (compression, level, checkpoint_interval_ps, "
                  "durability, frames, backpressure, queue_bytes, value_check)",
                  trim(t.substr(0, eq)).c_str()));
  };
  for (char c : text) {
    if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) flush();
    else item += c;
  }
  flush();
}

}  // namespace uscope_dpi
