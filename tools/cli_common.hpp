// Shared by the uscope subcommands: errors, the JSON writer, and a reader
// handle with throwing accessors. Built only on the public C API.
#pragma once

#include <uscope/uscope.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace uscope_cli {


struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check(uscope_status_t s, const char *what) {
  if (s < 0) throw Failure(std::string(what) + ": " + uscope_status_str(s) + ": " + uscope_last_error());
}

// A minimal, streaming JSON writer: the tool's output format, not a parser.
// The shortest text that reads back to v (finite): no precision lost, no
// digits invented (2.05, not 2.050000 or 2.0499999999999998).
inline std::string shortest(double v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

class Json {
 public:
  void begin_object() { sep(); std::fputc('{', stdout); first_ = true; }
  void end_object() { std::fputc('}', stdout); first_ = false; }
  void begin_array() { sep(); std::fputc('[', stdout); first_ = true; }
  void end_array() { std::fputc(']', stdout); first_ = false; }
  void key(const char *k) { sep(); string_raw(k); std::fputc(':', stdout); first_ = true; }
  void str(const char *v) { sep(); if (v) string_raw(v); else std::fputs("null", stdout); }
  void num(uint64_t v) { sep(); std::printf("%" PRIu64, v); }
  void snum(int64_t v) { sep(); std::printf("%" PRId64, v); }
  void fixed(double v, int digits) { sep(); std::printf("%.*f", digits, v); }  // deterministic
  void real(double v) { sep(); std::fputs(shortest(v).c_str(), stdout); }
  void boolean(bool v) { sep(); std::fputs(v ? "true" : "false", stdout); }
  void null() { sep(); std::fputs("null", stdout); }
  void end() { std::fputc('\n', stdout); }
  template <class T>
  void field(const char *k, T v) {
    key(k);
    put(v);
  }

 private:
  void put(const char *v) { str(v); }
  void put(uint64_t v) { num(v); }
  void put(uint32_t v) { num(v); }
  void put(uint16_t v) { num(v); }
  void put(uint8_t v) { num(v); }
  void put(bool v) { boolean(v); }
  void sep() {
    if (!first_) std::fputc(',', stdout);
    first_ = false;
  }
  static void string_raw(const char *s) {
    std::fputc('"', stdout);
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(s); *p; ++p) {
      switch (*p) {
        case '"': std::fputs("\\\"", stdout); break;
        case '\\': std::fputs("\\\\", stdout); break;
        case '\n': std::fputs("\\n", stdout); break;
        case '\r': std::fputs("\\r", stdout); break;
        case '\t': std::fputs("\\t", stdout); break;
        default:
          if (*p < 0x20) std::printf("\\u%04x", *p);
          else std::fputc(*p, stdout);
      }
    }
    std::fputc('"', stdout);
  }
  bool first_ = true;
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
  explicit Trace(const std::string &path) { check(uscope_reader_open(&r_, path.c_str()), path.c_str()); }
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
    check(uscope_reader_storage(r_, id, &s), "storage");
    return s;
  }
  uscope_field_info_t field(uint16_t sid, uint16_t i, bool prop) const {
    uscope_field_info_t f{};
    check(uscope_reader_storage_field(r_, sid, i, prop ? 1 : 0, &f), "field");
    return f;
  }
  uscope_event_type_info_t event_type(uint16_t id) const {
    uscope_event_type_info_t e{};
    check(uscope_reader_event_type(r_, id, &e), "event type");
    return e;
  }
  uscope_field_info_t event_field(uint16_t id, uint16_t i) const {
    uscope_field_info_t f{};
    check(uscope_reader_event_field(r_, id, i, &f), "event field");
    return f;
  }
  const char *enum_value(uint8_t enum_id, uint64_t v) const {
    const char *name = nullptr;
    return uscope_reader_enum_value(r_, enum_id, static_cast<uint32_t>(v), &name) == USCOPE_OK ? name : nullptr;
  }

 private:
  uscope_reader_t *r_ = nullptr;
};

inline uint64_t payload_field(const uint8_t *p, const uscope_field_info_t &f) {
  uint64_t v = 0;
  std::memcpy(&v, p + f.offset, f.size);  // little-endian host (the library checks)
  return v;
}


// Subcommands defined in their own files.
void cmd_summary(const Trace &t, bool json);
// cmd_pccx_info.cpp: `uscope info` on a pccx-lab .pccx file (detected by magic).
bool is_pccx_file(const std::string &path);
void cmd_pccx_info(const std::string &path, bool json);

}  // namespace uscope_cli
