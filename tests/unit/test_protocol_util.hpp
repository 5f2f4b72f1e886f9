// Reading protocol traces back through the public reader C API only, for the
// test_protocol_*.cpp suites: storages and events found by name within a
// scope, event payloads decoded field by field from the schema, strings
// resolved through the string table.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace uscope::test::proto {

struct FieldInfo {
  std::string name;
  uint8_t type = 0;
  uint8_t enum_id = 0;
};

struct Event {
  uint64_t time_ps = 0;
  uint16_t type_id = 0;
  std::string name;
  std::map<std::string, uint64_t> f;  // field name -> value, zero-extended
  uint64_t operator[](const std::string &k) const {
    auto it = f.find(k);
    EXPECT_NE(it, f.end()) << "event " << name << " has no field " << k;
    return it == f.end() ? ~0ull : it->second;
  }
};

// A reader over a finished file, closed at the end of the test.
class Trace {
 public:
  explicit Trace(const std::string &path) {
    EXPECT_EQ(uscope_reader_open(&r_, path.c_str()), USCOPE_OK) << uscope_last_error();
  }
  ~Trace() {
    for (auto *s : states_) uscope_state_free(s);
    uscope_reader_close(r_);
  }
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;
  uscope_reader_t *get() const { return r_; }
  bool ok() const { return r_ != nullptr; }

  std::string dut(const char *key) const {
    const char *v = nullptr;
    if (uscope_reader_dut_lookup(r_, key, &v) != USCOPE_OK) return "<absent>";
    return v;
  }
  std::vector<std::pair<std::string, std::string>> dut_all() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (uint32_t i = 0; i < uscope_reader_dut_count(r_); ++i) {
      const char *k = nullptr, *v = nullptr;
      EXPECT_EQ(uscope_reader_dut_property(r_, i, &k, &v), USCOPE_OK);
      out.emplace_back(k, v);
    }
    return out;
  }
  uscope_schema_counts_t counts() const {
    uscope_schema_counts_t n{};
    n.struct_size = sizeof n;
    EXPECT_EQ(uscope_reader_schema_counts(r_, &n), USCOPE_OK);
    return n;
  }
  uscope_scope_info_t scope(uint16_t id) const {
    uscope_scope_info_t s{};
    EXPECT_EQ(uscope_reader_scope(r_, id, &s), USCOPE_OK);
    return s;
  }
  std::string enum_name(uint8_t id) const {
    const char *n = nullptr;
    uint32_t nv = 0;
    EXPECT_EQ(uscope_reader_enum(r_, id, &n, &nv), USCOPE_OK);
    return n ? n : "";
  }
  std::vector<std::string> enum_values(uint8_t id) const {
    const char *n = nullptr;
    uint32_t nv = 0;
    EXPECT_EQ(uscope_reader_enum(r_, id, &n, &nv), USCOPE_OK);
    std::vector<std::string> out;
    for (uint32_t v = 0; v < nv; ++v) {
      const char *vn = nullptr;
      EXPECT_EQ(uscope_reader_enum_value(r_, id, v, &vn), USCOPE_OK);
      out.emplace_back(vn);
    }
    return out;
  }
  // The storage of that name in that scope, or 0xFFFF.
  uint16_t storage(const char *name, uint16_t scope_id) const {
    const auto n = counts().storages;
    for (uint16_t i = 0; i < n; ++i) {
      uscope_storage_info_t s{};
      EXPECT_EQ(uscope_reader_storage(r_, i, &s), USCOPE_OK);
      if (s.scope_id == scope_id && std::strcmp(s.name, name) == 0) return i;
    }
    return 0xFFFF;
  }
  uscope_storage_info_t storage_info(uint16_t sid) const {
    uscope_storage_info_t s{};
    EXPECT_EQ(uscope_reader_storage(r_, sid, &s), USCOPE_OK);
    return s;
  }
  std::vector<FieldInfo> storage_fields(uint16_t sid) const {
    std::vector<FieldInfo> out;
    for (uint16_t i = 0; i < storage_info(sid).num_fields; ++i) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_storage_field(r_, sid, i, 0, &f), USCOPE_OK);
      out.push_back({f.name, f.type, f.enum_id});
    }
    return out;
  }
  // The event type of that name in that scope, or 0xFFFF.
  uint16_t event_type(const char *name, uint16_t scope_id) const {
    const auto n = counts().event_types;
    for (uint16_t i = 0; i < n; ++i) {
      uscope_event_type_info_t e{};
      EXPECT_EQ(uscope_reader_event_type(r_, i, &e), USCOPE_OK);
      if (e.scope_id == scope_id && std::strcmp(e.name, name) == 0) return i;
    }
    return 0xFFFF;
  }
  std::vector<FieldInfo> event_fields(uint16_t id) const {
    uscope_event_type_info_t e{};
    EXPECT_EQ(uscope_reader_event_type(r_, id, &e), USCOPE_OK);
    std::vector<FieldInfo> out;
    for (uint16_t i = 0; i < e.num_fields; ++i) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_event_field(r_, id, i, &f), USCOPE_OK);
      out.push_back({f.name, f.type, f.enum_id});
    }
    return out;
  }
  std::string str(uint64_t index) const {
    const char *s = nullptr;
    uint32_t len = 0;
    if (uscope_reader_string(r_, static_cast<uint32_t>(index), &s, &len) != USCOPE_OK) return "<bad string>";
    return std::string(s, len);
  }
  // Every event of the trace, decoded by the schema's field table.
  std::vector<Event> events() const {
    std::vector<Event> out;
    uscope_event_iter_t *it = nullptr;
    EXPECT_EQ(uscope_reader_events_in_range(r_, 0, UINT64_MAX, &it), USCOPE_OK);
    if (!it) return out;
    uscope_event_t ev{};
    uscope_status_t st;
    while ((st = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
      Event e;
      e.time_ps = ev.time_ps;
      e.type_id = ev.event_type_id;
      uscope_event_type_info_t ti{};
      EXPECT_EQ(uscope_reader_event_type(r_, ev.event_type_id, &ti), USCOPE_OK);
      e.name = ti.name;
      EXPECT_EQ(ev.payload_size, ti.payload_size);
      for (uint16_t i = 0; i < ti.num_fields; ++i) {
        uscope_field_info_t f{};
        EXPECT_EQ(uscope_reader_event_field(r_, ev.event_type_id, i, &f), USCOPE_OK);
        uint64_t v = 0;
        std::memcpy(&v, ev.payload + f.offset, f.size);  // little-endian host
        e.f[f.name] = v;
      }
      out.push_back(std::move(e));
    }
    EXPECT_EQ(st, USCOPE_DONE);
    uscope_event_iter_free(it);
    return out;
  }
  // The state after every frame at or before time_ps; freed with the Trace.
  const uscope_state_t *state_at(uint64_t time_ps) {
    uscope_state_t *s = nullptr;
    EXPECT_EQ(uscope_reader_state_at(r_, time_ps, &s), USCOPE_OK);
    states_.push_back(s);
    return s;
  }

 private:
  uscope_reader_t *r_ = nullptr;
  std::vector<uscope_state_t *> states_;
};

inline uint32_t occupancy(const uscope_state_t *s, uint16_t sid) {
  uint32_t n = 0;
  EXPECT_EQ(uscope_state_occupancy(s, sid, &n), USCOPE_OK);
  return n;
}
inline bool valid(const uscope_state_t *s, uint16_t sid, uint16_t slot) {
  int v = 0;
  EXPECT_EQ(uscope_state_slot_valid(s, sid, slot, &v), USCOPE_OK);
  return v != 0;
}
inline uint64_t field(const uscope_state_t *s, uint16_t sid, uint16_t slot, uint16_t f) {
  uint64_t v = 0;
  EXPECT_EQ(uscope_state_slot_field(s, sid, slot, f, &v), USCOPE_OK);
  return v;
}
inline uint64_t counter(const uscope_state_t *s, uint16_t sid) { return field(s, sid, 0, 0); }

// "name:TYPE" strings, for comparing field tables at a glance.
inline std::vector<std::string> shape(const std::vector<FieldInfo> &fields) {
  std::vector<std::string> out;
  for (const auto &f : fields) {
    const char *t = "?";
    switch (f.type) {
      case USCOPE_FT_U8:
        t = "U8";
        break;
      case USCOPE_FT_U16:
        t = "U16";
        break;
      case USCOPE_FT_U32:
        t = "U32";
        break;
      case USCOPE_FT_U64:
        t = "U64";
        break;
      case USCOPE_FT_BOOL:
        t = "BOOL";
        break;
      case USCOPE_FT_STRING_REF:
        t = "STRING_REF";
        break;
      case USCOPE_FT_ENUM:
        t = "ENUM";
        break;
      default:
        break;
    }
    out.push_back(f.name + ":" + t);
  }
  return out;
}

// A schema with one clock (1 ns) and the root scope "/", as every test starts.
inline uscope_schema_t *base_schema(uint32_t period_ps = 1000) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_clock(s, "clk", period_ps, nullptr), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, "/", USCOPE_NO_PARENT, nullptr, 0, nullptr), USCOPE_OK);
  return s;
}

inline bool contains(const char *haystack, const char *needle) {
  return haystack && std::strstr(haystack, needle) != nullptr;
}

}  // namespace uscope::test::proto
