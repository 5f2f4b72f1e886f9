// Bridge schemas and the bridge's writer-options syntax (the CSV field lists
// are the core's: src/schema/field_syntax.cpp). See docs/dpi.md for the
// syntax as users see it.
#include "schema.hpp"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>

#include "base/parse.hpp"
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

// Field specs into libuscope fields (the core's to_c_fields). The names stay owned by specs.
static std::vector<uscope_field_t> to_fields(const Schema &s, const std::vector<FieldSpec> &specs,
                                             const std::string &context) {
  return uscope::to_c_fields(specs, s.names.enums, context);
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

// ── text ──
// trim, split_csv, parse_type, parse_role and parse_fields: the core's field-list
// syntax (src/schema/field_syntax.cpp).

static std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_u64(const std::string &text, uint64_t *out) {
  // The core's checked parser (src/base/parse.hpp): strtoull took "0x-5" as
  // a wrapped negative; this refuses it, as it refuses "-5" and "+5".
  return uscope::parse_number(trim(text), UINT64_MAX, out, /*hex_ok=*/true).empty();
}

// A signed level ("-5", "19"): the sign here, the digits through the core's
// checked parser, as parse_u64.
static bool parse_i32(const std::string &text, int32_t *out) {
  std::string t = trim(text);
  const bool neg = !t.empty() && t[0] == '-';
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.erase(0, 1);
  uint64_t mag = 0;
  const uint64_t max = neg ? uint64_t{1} << 31 : uint64_t{INT32_MAX};
  if (!uscope::parse_number(t, max, &mag).empty()) return false;
  *out = neg ? static_cast<int32_t>(-static_cast<int64_t>(mag)) : static_cast<int32_t>(mag);
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
  } else if (key == "compress_threads") {
    // "inline" or a worker count; "auto" is the library's default (0).
    if (value == "inline") o->compress_threads = USCOPE_COMPRESS_THREADS_INLINE;
    else if (value == "auto") o->compress_threads = 0;
    else if (parse_u64(value, &n) && n >= 1 && n <= USCOPE_COMPRESS_THREADS_MAX) o->compress_threads = static_cast<uint32_t>(n);
    else bad();
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
                  "durability, frames, backpressure, queue_bytes, value_check, compress_threads)",
                  trim(t.substr(0, eq)).c_str()));
  };
  for (char c : text) {
    if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) flush();
    else item += c;
  }
  flush();
}

}  // namespace uscope_dpi
