// Shared by the uscope commands: errors, number options, the JSON writer, a
// reader handle with throwing accessors, field values as text and JSON, the
// tolerant-reading warnings and --strict, the JSONL ingest's options. Built
// only on the public C API; the definitions that are not inline are in
// cli_common.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <uscope/convert.h>
#include <uscope/uscope.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/parse.hpp"

namespace uscope_cli {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An error in the command line found after parsing (--from after --to, no
// --time nor --cycle): exit code 2, as CLI11's own usage errors.
struct Usage : Failure {
  using Failure::Failure;
};

// Every numeric option is parsed by uscope::parse_number (src/base/parse.hpp): a plain
// decimal number from 0 to max. CLI11's own conversion wraps "-5" into a huge uint64_t,
// takes "0x10" as hex and "" as 0.
using uscope::parse_number;

// parse_number as a CLI11 validator: it runs on the option's text before
// CLI11 converts it, so a value that passes converts exactly.
inline CLI::Validator number_check(uint64_t max) {
  return CLI::Validator(
      [max](std::string &s) {
        uint64_t v = 0;
        return parse_number(s, max, &v);
      },
      "");  // no description: the help shows the type name "N" alone
}

// A numeric option stored in *target (an unsigned integer), checked by
// parse_number against the largest value *target can hold.
template <class T>
CLI::Option *add_number(CLI::App *sub, const std::string &name, T *target, const std::string &help) {
  static_assert(std::is_unsigned_v<T>, "numeric options are unsigned");
  return sub->add_option(name, *target, help)->check(number_check(std::numeric_limits<T>::max()))->type_name("N");
}

// Every integer option registered without add_number (another file's
// subcommand) gets the same check, up to 2^64-1; CLI11 then refuses a value
// too large for a narrower type. Call once, after every subcommand is added.
inline void check_all_numbers(CLI::App &app) {
  for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; })) {
    for (CLI::Option *o : sub->get_options()) {
      const std::string t = o->get_type_name();
      if (t.rfind("UINT", 0) == 0 || t.rfind("INT", 0) == 0) o->check(number_check(UINT64_MAX))->type_name("N");
    }
  }
}

// 1234567 -> "1,234,567": the text output's figures, for people.
inline std::string grouped(uint64_t v) {
  std::string d = std::to_string(v), o;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) o += ',';
    o += d[i];
  }
  return o;
}

inline void check(uscope_status_t s, const char *what) {
  if (s >= 0) return;
  // "WHAT: status: message". A reader's open error starts with the file's
  // path ("PATH is a FIFO, ..."): the path is said once, in front.
  std::string m = uscope_last_error();
  const size_t n = std::strlen(what);
  if (n && m.compare(0, n, what) == 0 && m.size() > n && (m[n] == ' ' || m[n] == ':'))
    m.erase(0, m[n] == ':' && m.size() > n + 1 && m[n + 1] == ' ' ? n + 2 : n + 1);
  throw Failure(std::string(what) + ": " + uscope_status_str(s) + ": " + m);
}

// A minimal, streaming JSON writer: the tool's output format, not a parser.
// The shortest text that reads back to v (finite): no precision lost, no
// digits invented (2.05, not 2.050000 or 2.0499999999999998).
inline std::string shortest(double v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

// Writes to stdout, or (Json(&s)) appends to a string: the MCP server's
// answers (mcp_server.cpp). Strings are escaped per RFC 8259: '"', '\\' and
// every control character, and each byte that is not part of well-formed
// UTF-8 becomes U+FFFD, so the output is valid JSON whatever a trace's
// strings hold.
class Json {
 public:
  Json() = default;
  explicit Json(std::string *out) : out_(out) {}
  void begin_object() { sep(); put_char('{'); first_ = true; }
  void end_object() { put_char('}'); first_ = false; }
  void begin_array() { sep(); put_char('['); first_ = true; }
  void end_array() { put_char(']'); first_ = false; }
  void key(const char *k) { sep(); string_raw(k); put_char(':'); first_ = true; }
  void str(const char *v) { sep(); if (v) string_raw(v); else put_text("null"); }
  void str(const std::string &v) { sep(); string_raw(v.data(), v.size()); }
  void num(uint64_t v) { sep(); put_number(v); }
  void snum(int64_t v) { sep(); put_number(v); }
  void fixed(double v, int digits) {  // deterministic
    sep();
    char b[352];  // enough for DBL_MAX in %f
    const int n = std::snprintf(b, sizeof b, "%.*f", digits, v);
    put_text(b, n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof b - 1) : 0);
  }
  // Not finite (0/0): null, as JSON has no NaN.
  void real(double v) { sep(); put_text(v == v && v - v == 0 ? shortest(v).c_str() : "null"); }
  void boolean(bool v) { sep(); put_text(v ? "true" : "false"); }
  void null() { sep(); put_text("null"); }
  // A value that is JSON text already (the npu report's, a tool's input
  // schema): the caller vouches for it.
  void raw(const char *json, size_t n) { sep(); put_text(json, n); }
  void end() { put_char('\n'); }
  // Bytes written so far to the string (0 on stdout): the MCP server's size budget.
  size_t size() const { return out_ ? out_->size() : 0; }
  template <class T>
  void field(const char *k, T v) {
    key(k);
    put(v);
  }

 private:
  void put(const char *v) { str(v); }
  void put(const std::string &v) { str(v); }
  void put(double v) { real(v); }
  void put(uint64_t v) { num(v); }
  void put(uint32_t v) { num(v); }
  void put(uint16_t v) { num(v); }
  void put(uint8_t v) { num(v); }
  void put(bool v) { boolean(v); }
  void sep() {
    if (!first_) put_char(',');
    first_ = false;
  }
  void put_char(char c) {
    if (out_) out_->push_back(c);
    else std::fputc(c, stdout);
  }
  void put_text(const char *s, size_t n) {
    if (out_) out_->append(s, n);
    else std::fwrite(s, 1, n, stdout);
  }
  void put_text(const char *s) { put_text(s, std::strlen(s)); }
  template <class I>
  void put_number(I v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    put_text(b, static_cast<size_t>(r.ptr - b));
  }
  // The length of the well-formed UTF-8 sequence at p (RFC 3629: no
  // overlong forms, no surrogates, nothing past U+10FFFF), or 0.
  static size_t utf8_length(const unsigned char *p, const unsigned char *end) {
    const unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (static_cast<size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; ++i)
      if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
  }
  void string_raw(const char *s) { string_raw(s, std::strlen(s)); }
  void string_raw(const char *s, size_t len) {
    put_char('"');
    const unsigned char *p = reinterpret_cast<const unsigned char *>(s), *end = p + len;
    while (p < end) {
      const unsigned char c = *p;
      if (c >= 0x80) {
        const size_t n = utf8_length(p, end);
        if (n) put_text(reinterpret_cast<const char *>(p), n);
        else put_text("\\ufffd");
        p += n ? n : 1;
        continue;
      }
      switch (c) {
        case '"': put_text("\\\""); break;
        case '\\': put_text("\\\\"); break;
        case '\n': put_text("\\n"); break;
        case '\r': put_text("\\r"); break;
        case '\t': put_text("\\t"); break;
        default:
          if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            put_text(b, 6);
          } else {
            put_char(static_cast<char>(c));
          }
      }
      ++p;
    }
    put_char('"');
  }
  std::string *out_ = nullptr;
  bool first_ = true;
};

// CSV (RFC 4180) for --format csv: a header row, then one row per record; a
// cell holding a comma, a quote or a line break is quoted, quotes doubled.
class Csv {
 public:
  void row(const std::vector<std::string> &cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) std::fputc(',', stdout);
      cell(cells[i]);
    }
    std::fputs("\r\n", stdout);
  }

 private:
  static void cell(const std::string &c) {
    if (c.find_first_of(",\"\r\n") == std::string::npos) {
      std::fputs(c.c_str(), stdout);
      return;
    }
    std::fputc('"', stdout);
    for (char ch : c) {
      if (ch == '"') std::fputc('"', stdout);
      std::fputc(ch, stdout);
    }
    std::fputc('"', stdout);
  }
};
// A number as a CSV cell: decimal; a double in its shortest form ("" when not finite).
inline std::string cell(uint64_t v) { return std::to_string(v); }
inline std::string cell(double v) { return v == v && v - v == 0 ? shortest(v) : ""; }

// The output format of a command: --json (the reference's flag) or --format
// table|json|csv (csv on the tabular commands only).
enum class Format { kTable, kJson, kCsv };
struct FormatOption {
  bool json = false;
  std::string format;
  bool csv_allowed = false;
  // --json and --format on sub; csv: whether --format csv is offered.
  void add(CLI::App &sub, bool csv) {
    csv_allowed = csv;
    sub.add_flag("--json", json, "JSON output (the same as --format json)");
    sub.add_option("--format", format, csv ? "output format: table (default), json or csv" : "output format: table (default) or json")
        ->check(csv ? CLI::IsMember({"table", "json", "csv"}) : CLI::IsMember({"table", "json"}))
        ->type_name("FORMAT");
  }
  // Throws Usage when --json and --format say different things.
  Format get() const {
    if (json && !format.empty() && format != "json") throw Usage("--json and --format " + format + " disagree");
    if (json || format == "json") return Format::kJson;
    if (format == "csv") return Format::kCsv;
    return Format::kTable;
  }
};

inline bool is_signed(uint8_t t) { return t >= USCOPE_FT_I8 && t <= USCOPE_FT_I64; }
inline int64_t sign_extend(uint64_t v, uint32_t size) {
  const unsigned bits = size * 8;
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

class Trace {
 public:
  // flags: USCOPE_READ_* (USCOPE_READ_STRICT for --strict).
  explicit Trace(const std::string &path, uint32_t flags = 0) {
    check(uscope_reader_open_ex(&r_, path.c_str(), flags), path.c_str());
  }
  // What the reader skipped so far, one entry per kind (uscope_reader_defects).
  std::vector<uscope_defect_t> defects() const {
    uscope_defect_t d[USCOPE_DEFECT_KIND_COUNT];
    uint32_t n = 0;
    check(uscope_reader_defects(r_, d, &n, USCOPE_DEFECT_KIND_COUNT), "defects");
    return std::vector<uscope_defect_t>(d, d + std::min<uint32_t>(n, USCOPE_DEFECT_KIND_COUNT));
  }
  ~Trace() { uscope_reader_close(r_); }
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;
  uscope_reader_t *r() const { return r_; }

  uscope_file_info_t info() const {
    uscope_file_info_t i{};
    i.struct_size = sizeof i;
    check(uscope_reader_info(r_, &i), "info");
    return i;
  }
  uscope_schema_counts_t counts() const {
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    check(uscope_reader_schema_counts(r_, &c), "schema");
    return c;
  }
  uscope_storage_info_t storage(uint16_t id) const {
    uscope_storage_info_t s{};
    check(uscope_reader_storage(r_, &s, id), "storage");
    return s;
  }
  uscope_field_info_t field(uint16_t sid, uint16_t i, bool prop) const {
    uscope_field_info_t f{};
    check(uscope_reader_storage_field(r_, &f, sid, i, prop ? 1 : 0), "field");
    return f;
  }
  uscope_event_type_info_t event_type(uint16_t id) const {
    uscope_event_type_info_t e{};
    check(uscope_reader_event_type(r_, &e, id), "event type");
    return e;
  }
  uscope_field_info_t event_field(uint16_t id, uint16_t i) const {
    uscope_field_info_t f{};
    check(uscope_reader_event_field(r_, &f, id, i), "event field");
    return f;
  }
  const char *enum_value(uint8_t enum_id, uint64_t v) const {
    const char *name = nullptr;
    return uscope_reader_enum_value(r_, &name, enum_id, static_cast<uint32_t>(v)) == USCOPE_OK ? name : nullptr;
  }

 private:
  uscope_reader_t *r_ = nullptr;
};

inline uint64_t payload_field(const uint8_t *p, const uscope_field_info_t &f) {
  uint64_t v = 0;
  std::memcpy(&v, p + f.offset, f.size);  // little-endian host (the library checks)
  return v;
}

// Every value by its name (issue 13): an enum value as its name, a
// string-table field as its text (each the number when the file has no
// name for it), signed types sign-extended, others in decimal.
void json_value(Json &j, const Trace &t, const uscope_field_info_t &f, uint64_t raw);
// A field value as text: an enum value as its name, a string-table field as
// its text in quotes (the number when the file has none), signed types in
// decimal, 32- and 64-bit unsigned in hex (addresses, instruction bits)
// except a counter's count (spec cpu §6) and identifiers (id, *_id), in
// decimal like the other types.
std::string text_value(const Trace &t, const uscope_field_info_t &f, uint64_t raw);
// The text of string-table entry index, or nullptr when there is none.
const char *table_string(const Trace &t, uint64_t index);
// The same as json_value (the MCP server's name for it, from before every
// value was given by name).
void named_value(Json &j, const Trace &t, const uscope_field_info_t &f, uint64_t raw);
// One event as a JSON object {"time_ps", "type", "fields": {...}} (events,
// dump, the MCP server), its values by name; record, when given, comes first
// as "record": record (dump's JSON Lines). by_name: kept for the MCP server's
// calls; values are by name either way.
void event_json(Json &j, const Trace &t, uint64_t time, uint16_t id, const uint8_t *payload, bool by_name = false,
                const char *record = nullptr);

// The trace's last time: that of its last frame (the header's total is 0
// while a file is live, COMPAT 11).
inline uint64_t trace_end(const Trace &t) { return t.info().last_time_ps; }

// Where a defect was first met, for messages: "segment 50 at offset 123456,
// 25000 ps", with what the item names where the kind tells ("segment 0 at
// offset 864, 10000 ps, storage 'entities'"), or "the file at offset 9000".
std::string defect_place(const Trace &t, const uscope_defect_t &d);
// One warning line on stderr per kind of defect the reader skipped
// ("uscope: warning: FILE: 1405 ops on slots past their storage's size
// were ignored (slot_out_of_range; first: segment 0 ...)"). Output on stdout
// stays whole; the exit status stays 0.
void warn_defects(const Trace &t, const std::string &path);
// The period to count cycles with: the clock's, or, when the reader found
// timestamps off the clocks' grid (COMPAT 29: konata2uscope --clock-period-ps
// leaves the clock at 1000 ps), the step the timestamps follow, with a
// warning on stderr (once per process).
uint64_t cycle_period(const Trace &t, uint64_t clock_period_ps);
// --strict: read and validate the whole file before printing anything, so
// that a defect fails the command (with its status) instead of being
// skipped. Throws Failure naming the file.
void strict_check(const Trace &t, const std::string &path);

// The first 4 bytes of a regular file, or "" (not a regular file, shorter, or
// unreadable); opened non-blocking, so a FIFO never makes it wait.
std::string file_magic(const std::string &path);
// Whether a scope of the trace speaks protocol ("cpu", "noc", "npu").
bool has_protocol(const Trace &t, const char *protocol);
// cmd_pccx_info.cpp: `uscope info` on a pccx-lab .pccx file (detected by magic).
bool is_pccx_file(const std::string &path);
void cmd_pccx_info(const std::string &path, bool json);

// The JSONL ingest of convert and npu-report: its options on a subcommand
// (initialising *o), and the printer of the library's on_issue callback
// (user: an IssuePrinter): malformed lines with their numbers, the first 50
// of them; a line 0 is about the input as a whole, a warning.
struct IssuePrinter {
  const char *file;
  uint64_t printed = 0;
};
void add_ingest_options(CLI::App *sub, uscope_convert_options_t *o);
// This process's peak resident set (VmHWM of /proc/self/status) in KiB, 0
// where there is none. Unlike getrusage's ru_maxrss it starts afresh at
// exec, so a command run by a large parent reports its own.
uint64_t peak_rss_kib();
void print_issue(void *user, uint64_t line, const char *reason);

}  // namespace uscope_cli
