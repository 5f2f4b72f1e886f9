// Shared by the testbench's end-to-end checkers (check_tb_trace, check_tb_pccx): failure
// counting, and the trace's schema looked up by name through libuscope's public reader API, so
// that the checks follow whatever the protocol helpers declare.
#pragma once

#include <uscope/uscope.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {


int g_failures = 0;
const char *g_prog = "check";  // set by main: names the program in messages

#define CHECK(cond, ...)                               \
  do {                                                 \
    if (!(cond)) {                                     \
      ++g_failures;                                    \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);               \
      std::fprintf(stderr, "\n");                      \
    }                                                  \
  } while (0)

[[noreturn]] void die(const char *what, uscope_status_t st) {
  std::fprintf(stderr, "%s: %s: %s (%s)\n", g_prog, what, uscope_status_str(st), uscope_last_error());
  std::exit(2);
}

// The name -> (offset, size) layout of one event type's payload.
struct EventLayout {
  uint16_t id = 0xFFFF;
  std::map<std::string, std::pair<uint32_t, uint32_t>> fields;

  uint64_t get(const uint8_t *payload, const char *name) const {
    auto it = fields.find(name);
    if (it == fields.end()) {
      std::fprintf(stderr, "%s: event has no field %s\n", g_prog, name);
      std::exit(2);
    }
    uint64_t v = 0;
    std::memcpy(&v, payload + it->second.first, it->second.second);  // little-endian host
    return v;
  }
};

struct Schema {
  uscope_reader_t *r;
  std::map<std::string, uint16_t> scopes;  // name -> id

  static Schema load(uscope_reader_t *reader) {
    Schema sc{reader, {}};
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    CHECK(uscope_reader_schema_counts(reader, &c) == USCOPE_OK, "%s", uscope_last_error());
    for (uint32_t s = 0; s < c.scopes; ++s) {
      uscope_scope_info_t si{};
      if (uscope_reader_scope(reader, &si, s) == USCOPE_OK) sc.scopes[si.name] = (uint16_t)s;
    }
    return sc;
  }

  uint16_t scope(const char *name) const {
    auto it = scopes.find(name);
    if (it == scopes.end()) {
      std::fprintf(stderr, "%s: no scope %s\n", g_prog, name);
      std::exit(2);
    }
    return it->second;
  }

  // The event type `name` declared in scope `scope_name`.
  EventLayout event(const char *scope_name, const char *name) const {
    const uint16_t sid = scope(scope_name);
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    CHECK(uscope_reader_schema_counts(r, &c) == USCOPE_OK, "%s", uscope_last_error());
    for (uint32_t e = 0; e < c.event_types; ++e) {
      uscope_event_type_info_t info{};
      if (uscope_reader_event_type(r, &info, (uint16_t)e) != USCOPE_OK) continue;
      if (info.scope_id != sid || std::strcmp(info.name, name) != 0) continue;
      EventLayout l;
      l.id = (uint16_t)e;
      for (uint16_t f = 0; f < info.num_fields; ++f) {
        uscope_field_info_t fi{};
        uscope_status_t st = uscope_reader_event_field(r, &fi, l.id, f);
        if (st != USCOPE_OK) die("uscope_reader_event_field", st);
        l.fields[fi.name] = {fi.offset, fi.size};
      }
      return l;
    }
    std::fprintf(stderr, "%s: no event %s in scope %s\n", g_prog, name, scope_name);
    std::exit(2);
  }

  // The storage `name` of scope `scope_name`.
  uint16_t storage(const char *scope_name, const char *name) const {
    const uint16_t sid = scope(scope_name);
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    CHECK(uscope_reader_schema_counts(r, &c) == USCOPE_OK, "%s", uscope_last_error());
    for (uint32_t s = 0; s < c.storages; ++s) {
      uscope_storage_info_t info{};
      if (uscope_reader_storage(r, &info, (uint16_t)s) != USCOPE_OK) continue;
      if (info.scope_id == sid && std::strcmp(info.name, name) == 0) return (uint16_t)s;
    }
    std::fprintf(stderr, "%s: no storage %s in scope %s\n", g_prog, name, scope_name);
    std::exit(2);
  }

  uint16_t field(uint16_t storage, const char *name) const {
    uint16_t idx = 0;
    uscope_status_t st = uscope_reader_find_field(r, &idx, storage, name, 0);
    if (st != USCOPE_OK) die(name, st);
    return idx;
  }

  uint16_t enum_value(const char *enum_name, const char *value) const {
    uscope_schema_counts_t c{};
    c.struct_size = sizeof c;
    CHECK(uscope_reader_schema_counts(r, &c) == USCOPE_OK, "%s", uscope_last_error());
    for (uint32_t e = 0; e < c.enums; ++e) {
      const char *n = nullptr;
      uint32_t nv = 0;
      if (uscope_reader_enum(r, &n, &nv, e) != USCOPE_OK || std::strcmp(n, enum_name) != 0) continue;
      for (uint32_t v = 0; v < nv; ++v) {
        const char *vn = nullptr;
        if (uscope_reader_enum_value(r, &vn, e, v) == USCOPE_OK && std::strcmp(vn, value) == 0)
          return (uint16_t)v;
      }
    }
    std::fprintf(stderr, "%s: no enum value %s.%s\n", g_prog, enum_name, value);
    std::exit(2);
  }
};

}  // namespace
