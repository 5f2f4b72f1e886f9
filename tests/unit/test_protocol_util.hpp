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

#include "support/test_util.hpp"
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
    if (uscope_reader_dut_lookup(r_, &v, key) != USCOPE_OK) return "<absent>";
    return v;
  }
  std::vector<std::pair<std::string, std::string>> dut_all() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (uint32_t i = 0; i < uscope_reader_dut_count(r_); ++i) {
      const char *k = nullptr, *v = nullptr;
      EXPECT_EQ(uscope_reader_dut_property(r_, &k, &v, i), USCOPE_OK);
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
    EXPECT_EQ(uscope_reader_scope(r_, &s, id), USCOPE_OK);
    return s;
  }
  std::string enum_name(uint8_t id) const {
    const char *n = nullptr;
    uint32_t nv = 0;
    EXPECT_EQ(uscope_reader_enum(r_, &n, &nv, id), USCOPE_OK);
    return n ? n : "";
  }
  std::vector<std::string> enum_values(uint8_t id) const {
    const char *n = nullptr;
    uint32_t nv = 0;
    EXPECT_EQ(uscope_reader_enum(r_, &n, &nv, id), USCOPE_OK);
    std::vector<std::string> out;
    for (uint32_t v = 0; v < nv; ++v) {
      const char *vn = nullptr;
      EXPECT_EQ(uscope_reader_enum_value(r_, &vn, id, v), USCOPE_OK);
      out.emplace_back(vn);
    }
    return out;
  }
  // The storage of that name in that scope, or 0xFFFF.
  uint16_t storage(const char *name, uint16_t scope_id) const {
    const auto n = counts().storages;
    for (uint16_t i = 0; i < n; ++i) {
      uscope_storage_info_t s{};
      EXPECT_EQ(uscope_reader_storage(r_, &s, i), USCOPE_OK);
      if (s.scope_id == scope_id && std::strcmp(s.name, name) == 0) return i;
    }
    return 0xFFFF;
  }
  uscope_storage_info_t storage_info(uint16_t sid) const {
    uscope_storage_info_t s{};
    EXPECT_EQ(uscope_reader_storage(r_, &s, sid), USCOPE_OK);
    return s;
  }
  std::vector<FieldInfo> storage_fields(uint16_t sid) const {
    std::vector<FieldInfo> out;
    for (uint16_t i = 0; i < storage_info(sid).num_fields; ++i) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_storage_field(r_, &f, sid, i, 0), USCOPE_OK);
      out.push_back({f.name, f.type, f.enum_id});
    }
    return out;
  }
  // The event type of that name in that scope, or 0xFFFF.
  uint16_t event_type(const char *name, uint16_t scope_id) const {
    const auto n = counts().event_types;
    for (uint16_t i = 0; i < n; ++i) {
      uscope_event_type_info_t e{};
      EXPECT_EQ(uscope_reader_event_type(r_, &e, i), USCOPE_OK);
      if (e.scope_id == scope_id && std::strcmp(e.name, name) == 0) return i;
    }
    return 0xFFFF;
  }
  std::vector<FieldInfo> event_fields(uint16_t id) const {
    uscope_event_type_info_t e{};
    EXPECT_EQ(uscope_reader_event_type(r_, &e, id), USCOPE_OK);
    std::vector<FieldInfo> out;
    for (uint16_t i = 0; i < e.num_fields; ++i) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_event_field(r_, &f, id, i), USCOPE_OK);
      out.push_back({f.name, f.type, f.enum_id});
    }
    return out;
  }
  std::string str(uint64_t index) const {
    const char *s = nullptr;
    uint32_t len = 0;
    if (uscope_reader_string(r_, &s, &len, static_cast<uint32_t>(index)) != USCOPE_OK) return "<bad string>";
    return std::string(s, len);
  }
  // Every event of the trace, decoded by the schema's field table.
  std::vector<Event> events() const {
    std::vector<Event> out;
    uscope_event_iter_t *it = nullptr;
    EXPECT_EQ(uscope_reader_events_in_range(r_, &it, 0, UINT64_MAX), USCOPE_OK);
    if (!it) return out;
    uscope_event_t ev{};
    uscope_status_t st;
    while ((st = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
      Event e;
      e.time_ps = ev.time_ps;
      e.type_id = ev.event_type_id;
      uscope_event_type_info_t ti{};
      EXPECT_EQ(uscope_reader_event_type(r_, &ti, ev.event_type_id), USCOPE_OK);
      e.name = ti.name;
      EXPECT_EQ(ev.payload_size, ti.payload_size);
      for (uint16_t i = 0; i < ti.num_fields; ++i) {
        uscope_field_info_t f{};
        EXPECT_EQ(uscope_reader_event_field(r_, &f, ev.event_type_id, i), USCOPE_OK);
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
    EXPECT_EQ(uscope_reader_state_at(r_, &s, time_ps), USCOPE_OK);
    states_.push_back(s);
    return s;
  }

 private:
  uscope_reader_t *r_ = nullptr;
  std::vector<uscope_state_t *> states_;
};

inline uint32_t occupancy(const uscope_state_t *s, uint16_t sid) {
  uint32_t n = 0;
  EXPECT_EQ(uscope_state_occupancy(s, &n, sid), USCOPE_OK);
  return n;
}
inline bool valid(const uscope_state_t *s, uint16_t sid, uint16_t slot) {
  int v = 0;
  EXPECT_EQ(uscope_state_slot_valid(s, &v, sid, slot), USCOPE_OK);
  return v != 0;
}
inline uint64_t field(const uscope_state_t *s, uint16_t sid, uint16_t slot, uint16_t f) {
  uint64_t v = 0;
  EXPECT_EQ(uscope_state_slot_field(s, &v, sid, slot, f), USCOPE_OK);
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
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", period_ps), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  return s;
}

// A cpu scope under the root scope on clock 0, with what every test names;
// the caller adds the rest (counters, buffers, elf_path).
inline uscope_cpu_config_t cpu_config(const char *scope, const char *isa, const char *const *stages,
                                      uint16_t num_stages, uint16_t max_entities) {
  uscope_cpu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = scope;
  c.clock_id = 0;
  c.isa = isa;
  c.stages = stages;
  c.num_stages = num_stages;
  c.max_entities = max_entities;
  return c;
}

// An AXI4 noc scope under `parent` on its parent's clock; the caller adds the
// rest (widths, routing, extra transaction fields).
inline uscope_noc_config_t noc_config(const char *scope, uint16_t parent, const char *topology,
                                      const char *const *stages, uint16_t num_stages, uint16_t max_txns,
                                      uint32_t num_ports) {
  uscope_noc_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = scope;
  c.parent_scope_id = parent;
  c.clock_id = USCOPE_CLOCK_INHERIT;
  c.bus_protocol = "AXI4";
  c.topology = topology;
  c.stages = stages;
  c.num_stages = num_stages;
  c.max_txns = max_txns;
  c.num_ports = num_ports;
  return c;
}

// An npu scope under the root scope, with its engines and command queue.
inline uscope_npu_config_t npu_config(const char *scope, uint8_t clock_id, uint16_t queue_depth, uint16_t num_te,
                                      uint16_t num_ve, uint16_t num_dma_channels) {
  uscope_npu_config_t c{};
  c.struct_size = sizeof c;
  c.scope_name = scope;
  c.parent_scope_id = 0;
  c.clock_id = clock_id;
  c.queue_depth = queue_depth;
  c.num_te = num_te;
  c.num_ve = num_ve;
  c.num_dma_channels = num_dma_channels;
  return c;
}

inline bool contains(const char *haystack, const char *needle) {
  return haystack && std::strstr(haystack, needle) != nullptr;
}

// A per-cycle call refused: the status, and the message containing msg. Each
// call is made before its check reads uscope_last_error().
inline void refused(uscope_status_t got, uscope_status_t want, const char *msg) {
  EXPECT_EQ(got, want) << msg;
  EXPECT_TRUE(contains(uscope_last_error(), msg)) << uscope_last_error();
}

// Declarations refused for one defect each of a fixture's good config (the
// test's Core, Xbar, Npu: a struct with a member cfg): the status, a message
// that starts with the declare call's name and contains msg, and *out
// untouched.
template <class Fixture, class Handle>
class DeclareRefusals {
 public:
  using Cfg = decltype(Fixture::cfg);
  using Declare = uscope_status_t (*)(uscope_schema_t *, Handle **, const Cfg *);

  DeclareRefusals(Declare declare, const char *fn, uscope_schema_t *s)
      : declare_(declare), prefix_(std::string(fn) + ": "), s_(s) {}

  void operator()(const Cfg &c, uscope_status_t want, const char *msg) const {
    SCOPED_TRACE(msg);
    Handle *const untouched = reinterpret_cast<Handle *>(0x1);
    Handle *out = untouched;
    EXPECT_EQ(declare_(s_, &out, &c), want);
    EXPECT_TRUE(contains(uscope_last_error(), prefix_.c_str())) << uscope_last_error();
    EXPECT_TRUE(contains(uscope_last_error(), msg)) << uscope_last_error();
    EXPECT_EQ(out, untouched);
  }
  // The fixture's good config with edit applied to the fixture.
  template <class Edit>
  void after(Edit edit, uscope_status_t want, const char *msg) const {
    Fixture f;
    edit(f);
    (*this)(f.cfg, want, msg);
  }

 private:
  Declare declare_;
  std::string prefix_;
  uscope_schema_t *s_;
};

// A handle's ids (uscope_cpu_ids and the like), copied at their full size.
template <class Handle, class Ids>
Ids read_ids(uscope_status_t (*get)(const Handle *, Ids *), const Handle *h) {
  Ids ids{};
  ids.struct_size = sizeof ids;
  EXPECT_EQ(get(h, &ids), USCOPE_OK);
  return ids;
}

inline uscope_cpu_ids_t ids_of(const uscope_cpu_t *h) { return read_ids(uscope_cpu_ids, h); }
inline uscope_noc_ids_t ids_of(const uscope_noc_t *h) { return read_ids(uscope_noc_ids, h); }
inline uscope_npu_ids_t ids_of(const uscope_npu_t *h) { return read_ids(uscope_npu_ids, h); }

// The start of most tests: base_schema(period_ps) with one protocol instance
// declared from a Fixture's good config (the test's Core, Xbar, Npu), and a
// writer open on a fresh file with that schema. Run open() under
// ASSERT_NO_FATAL_FAILURE; the test closes w and frees h itself.
template <class Fixture, class Handle>
class OpenTrace {
 public:
  using Cfg = decltype(Fixture::cfg);
  using Declare = uscope_status_t (*)(uscope_schema_t *, Handle **, const Cfg *);

  OpenTrace(const char *tag, Declare declare, uint32_t period_ps = 1000)
      : dir_(tag), path(dir_.file("t.uscope")), declare_(declare), period_ps_(period_ps) {}

  void open() {
    uscope_schema_t *s = base_schema(period_ps_);
    ASSERT_EQ(declare_(s, &h, &fx.cfg), USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
  }

 private:
  TempDir dir_;  // before path, which names a file in it

 public:
  const std::string path;
  Fixture fx;
  Handle *h = nullptr;
  uscope_writer_t *w = nullptr;

 private:
  Declare declare_;
  uint32_t period_ps_;
};

}  // namespace uscope::test::proto
