#include "schema/field_syntax.hpp"

#include <cctype>

#include "base/error.hpp"
#include "base/parse.hpp"

namespace uscope {

namespace {

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The type words a field list accepts (docs/dpi.md, "Field lists"); the wire
// codes are uscope.h's USCOPE_FT_* (spec §4.3).
const struct {
  const char *name;
  uint8_t type;
} kTypes[] = {{"u8", USCOPE_FT_U8},   {"u16", USCOPE_FT_U16},   {"u32", USCOPE_FT_U32},
              {"u64", USCOPE_FT_U64}, {"i8", USCOPE_FT_I8},     {"i16", USCOPE_FT_I16},
              {"i32", USCOPE_FT_I32}, {"i64", USCOPE_FT_I64},   {"bool", USCOPE_FT_BOOL},
              {"string", USCOPE_FT_STRING_REF}, {"string_ref", USCOPE_FT_STRING_REF}};

}  // namespace

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

bool parse_type(const std::string &text, FieldSpec *spec) {
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
    if (!parse_number(arg, 0xFF, &pair, /*hex_ok=*/true).empty()) return false;
    spec->pair_id = static_cast<uint8_t>(pair);
  }
  return true;
}

std::vector<FieldSpec> parse_fields(const std::string &csv, bool is_property, const char *what,
                                    uscope_status_t syntax_status) {
  auto bad = [&](const std::string &msg) { throw Error(syntax_status, std::string(what) + ": " + msg); };
  std::vector<FieldSpec> out;
  for (const std::string &item : split_csv(csv)) {
    FieldSpec f;
    const size_t c1 = item.find(':');
    if (item.empty() || c1 == std::string::npos) bad("\"" + item + "\" is not name:type");
    f.name = trim(item.substr(0, c1));
    // A ':' after the type separates the role; enum(...) contains no ':'.
    const size_t c2 = item.find(':', c1 + 1);
    const std::string type = item.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (f.name.empty()) bad("\"" + item + "\" has an empty name");
    if (!parse_type(type, &f))
      bad("field \"" + f.name + "\": unknown type \"" + trim(type) +
          "\" (u8 u16 u32 u64 i8 i16 i32 i64 bool string enum(<name>))");
    if (c2 != std::string::npos) {
      const std::string role = item.substr(c2 + 1);
      if (!is_property) bad("field \"" + f.name + "\": only storage properties take a role");
      if (!parse_role(role, &f))
        bad("field \"" + f.name + "\": unknown role \"" + trim(role) +
            "\" (plain, head_ptr, tail_ptr, head_ptr(<pair>), tail_ptr(<pair>))");
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<uscope_field_t> to_c_fields(const std::vector<FieldSpec> &specs, const NameIds &enums,
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
      uint64_t id = 0;
      if (enums.has(f.enum_ref)) {
        u.enum_id = static_cast<uint8_t>(enums.one("enum", f.enum_ref));  // throws when repeated
      } else if (parse_number(f.enum_ref, 254, &id).empty()) {
        u.enum_id = static_cast<uint8_t>(id);
      } else {
        throw Error(USCOPE_ERR_NOT_FOUND,
                    context + ": field \"" + f.name + "\": no enum named \"" + f.enum_ref + "\"");
      }
    }
    out.push_back(u);
  }
  return out;
}

}  // namespace uscope
