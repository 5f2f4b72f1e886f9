// Property tests of the reader core (issue 5, point 4): random schemas and
// random op/event streams are written through the public writer C API, and
// uscope::TraceReader must give back exactly what an independent in-memory
// model of the same calls predicts — state_at at many times (zero, segment
// boundaries, exact frame times, between frames, past the end) and
// events_in_range over many windows. Every case runs with LZ4, ZSTD and no
// compression, and with both frame formats (v0.2 interleaved, v0.1 compact),
// with checkpoint intervals small enough to give many segments.
//
// Determinism: a fixed list of seeds drives a self-contained PRNG
// (splitmix64, not <random> distributions, whose output differs between
// standard libraries), so a failure names a seed that reproduces anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "format/error.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;
namespace wire = uscope::wire;

// ── Deterministic PRNG ─────────────────────────────────────────────────────

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }          // [0, n)
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }  // [lo, hi]
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  uint64_t s_;
};

// ── Random schema ──────────────────────────────────────────────────────────

struct FieldSpec {
  uint8_t type = USCOPE_FT_U8;
  uint8_t enum_id = 0;
};
struct StorageSpec {
  uint16_t slots = 1;
  uint16_t flags = 0;
  std::vector<FieldSpec> fields, props;
  bool sparse() const { return flags & USCOPE_SF_SPARSE; }
};
struct EventSpec {
  std::vector<FieldSpec> fields;
  uint32_t size = 0;
};
struct SchemaSpec {
  std::vector<uint16_t> enum_sizes;  // number of values of each enum
  std::vector<StorageSpec> storages;
  std::vector<EventSpec> events;
};

constexpr uint8_t kAllTypes[] = {USCOPE_FT_U8,  USCOPE_FT_U16,  USCOPE_FT_U32,        USCOPE_FT_U64,
                                 USCOPE_FT_I8,  USCOPE_FT_I16,  USCOPE_FT_I32,        USCOPE_FT_I64,
                                 USCOPE_FT_BOOL, USCOPE_FT_STRING_REF, USCOPE_FT_ENUM};

unsigned type_size(uint8_t t) { return wire::field_type_size(t); }
uint64_t width_mask(uint8_t t) {
  const unsigned bits = type_size(t) * 8;
  return bits == 64 ? ~0ull : (1ull << bits) - 1;
}
bool is_signed(uint8_t t) { return t >= USCOPE_FT_I8 && t <= USCOPE_FT_I64; }

FieldSpec random_field(Rng &r, const SchemaSpec &s) {
  FieldSpec f;
  f.type = kAllTypes[r.below(sizeof kAllTypes)];
  if (f.type == USCOPE_FT_ENUM) f.enum_id = static_cast<uint8_t>(r.below(s.enum_sizes.size()));
  return f;
}

// How big a case is. "many_storages" makes more than 256 storages so that
// storage ids above 255 appear in ops (wide frames, COMPAT 18).
struct Shape {
  bool many_storages = false;
  bool many_events = false;  // more than 256 event types: ids above 255
  unsigned cycles = 0;
};

SchemaSpec random_schema(Rng &r, const Shape &shape) {
  SchemaSpec s;
  const unsigned enums = static_cast<unsigned>(r.range(1, 3));
  for (unsigned i = 0; i < enums; ++i) s.enum_sizes.push_back(static_cast<uint16_t>(r.range(1, 6)));
  const unsigned storages =
      shape.many_storages ? static_cast<unsigned>(r.range(257, 300)) : static_cast<unsigned>(r.range(1, 8));
  for (unsigned i = 0; i < storages; ++i) {
    StorageSpec st;
    // Mostly small, sometimes more than 256 slots (slot numbers above 255);
    // in the many-storages case most storages are tiny to keep files small.
    if (shape.many_storages && i < 250) st.slots = static_cast<uint16_t>(r.range(1, 3));
    else if (r.chance(10)) st.slots = static_cast<uint16_t>(r.range(257, 300));
    else st.slots = static_cast<uint16_t>(r.range(1, 24));
    st.flags = r.chance(50) ? USCOPE_SF_SPARSE : 0;
    if (st.sparse() && r.chance(30)) st.flags |= USCOPE_SF_BUFFER;
    // A storage may have no slot fields at all (only CLEAR and properties).
    const unsigned nf = r.chance(5) ? 0 : static_cast<unsigned>(r.range(1, 6));
    for (unsigned k = 0; k < nf; ++k) st.fields.push_back(random_field(r, s));
    const unsigned np = r.chance(40) ? static_cast<unsigned>(r.range(1, 3)) : 0;
    for (unsigned k = 0; k < np; ++k) st.props.push_back(random_field(r, s));
    s.storages.push_back(std::move(st));
  }
  const unsigned events =
      shape.many_events ? static_cast<unsigned>(r.range(257, 280)) : static_cast<unsigned>(r.range(1, 6));
  for (unsigned i = 0; i < events; ++i) {
    EventSpec e;
    const unsigned nf = static_cast<unsigned>(r.below(6));  // 0..5 fields
    for (unsigned k = 0; k < nf; ++k) {
      e.fields.push_back(random_field(r, s));
      e.size += type_size(e.fields.back().type);
    }
    s.events.push_back(std::move(e));
  }
  return s;
}

std::vector<uscope_field_t> c_fields(const std::vector<FieldSpec> &fs, std::vector<std::string> &names,
                                     const char *prefix) {
  std::vector<uscope_field_t> out;
  for (size_t i = 0; i < fs.size(); ++i) {
    names.push_back(prefix + std::to_string(i));
    out.push_back({nullptr, fs[i].type, fs[i].enum_id, 0, 0});
  }
  return out;
}

// Builds the schema through the C API. Returns nullptr (after a test
// failure) when any call fails.
uscope_schema_t *build_schema(const SchemaSpec &spec) {
  uscope_schema_t *s = nullptr;
  if (uscope_schema_new(&s) != USCOPE_OK) {
    ADD_FAILURE() << uscope_last_error();
    return nullptr;
  }
  auto ok = [&](uscope_status_t st, const std::string &what) {
    if (st == USCOPE_OK) return true;
    ADD_FAILURE() << what << ": " << st << " " << uscope_last_error();
    return false;
  };
  uint8_t clk = 0, en = 0;
  uint16_t top = 0, id = 0;
  if (!ok(uscope_schema_add_clock(s, "clk", 1000, &clk), "add_clock") ||
      !ok(uscope_schema_add_scope(s, "top", USCOPE_NO_PARENT, nullptr, clk, &top), "add_scope")) {
    uscope_schema_free(s);
    return nullptr;
  }
  for (size_t i = 0; i < spec.enum_sizes.size(); ++i) {
    std::vector<std::string> vals;
    for (unsigned k = 0; k < spec.enum_sizes[i]; ++k) vals.push_back("v" + std::to_string(k));
    std::vector<const char *> ptrs;
    for (auto &v : vals) ptrs.push_back(v.c_str());
    const std::string name = "e" + std::to_string(i);
    if (!ok(uscope_schema_add_enum(s, name.c_str(), ptrs.data(), spec.enum_sizes[i], &en), "add_enum") ||
        en != i) {
      uscope_schema_free(s);
      return nullptr;
    }
  }
  for (size_t i = 0; i < spec.storages.size(); ++i) {
    const StorageSpec &st = spec.storages[i];
    std::vector<std::string> names;
    names.reserve(st.fields.size() + st.props.size());
    auto f = c_fields(st.fields, names, "f");
    auto p = c_fields(st.props, names, "p");
    for (size_t k = 0; k < f.size(); ++k) f[k].name = names[k].c_str();
    for (size_t k = 0; k < p.size(); ++k) p[k].name = names[f.size() + k].c_str();
    const std::string name = "s" + std::to_string(i);
    if (!ok(uscope_schema_add_storage(s, name.c_str(), top, st.slots, st.flags, f.data(),
                                      static_cast<uint16_t>(f.size()), p.empty() ? nullptr : p.data(),
                                      static_cast<uint16_t>(p.size()), &id),
            "add_storage " + name) ||
        id != i) {
      uscope_schema_free(s);
      return nullptr;
    }
  }
  for (size_t i = 0; i < spec.events.size(); ++i) {
    std::vector<std::string> names;
    names.reserve(spec.events[i].fields.size());
    auto f = c_fields(spec.events[i].fields, names, "f");
    for (size_t k = 0; k < f.size(); ++k) f[k].name = names[k].c_str();
    const std::string name = "ev" + std::to_string(i);
    if (!ok(uscope_schema_add_event(s, name.c_str(), top, f.empty() ? nullptr : f.data(),
                                    static_cast<uint16_t>(f.size()), &id),
            "add_event " + name) ||
        id != i) {
      uscope_schema_free(s);
      return nullptr;
    }
  }
  return s;
}

// ── Random values ──────────────────────────────────────────────────────────

// A value for a field of type t, as a user would pass it: in range for the
// type (signed ones sign-extended to 64 bits, COMPAT 13), small ones often
// (compact ops), and now and then a full 64-bit value, which the default
// VALUE_CHECK_NONE writer records and readers truncate to the field width.
uint64_t random_value(Rng &r, const FieldSpec &f, const SchemaSpec &s, uint32_t num_strings) {
  if (r.chance(8)) return r.next();
  const unsigned bits = type_size(f.type) * 8;
  switch (f.type) {
    case USCOPE_FT_BOOL: return r.below(2);
    case USCOPE_FT_ENUM: return r.below(s.enum_sizes[f.enum_id]);
    case USCOPE_FT_STRING_REF: return num_strings ? r.below(num_strings) : r.below(1000);
    default: break;
  }
  uint64_t v;
  switch (r.below(4)) {
    case 0: v = r.below(256); break;
    case 1: v = r.below(65536); break;
    default: v = r.next(); break;
  }
  v &= width_mask(f.type);
  if (is_signed(f.type) && bits < 64 && (v >> (bits - 1)) & 1) v |= ~width_mask(f.type);  // sign-extend
  if (is_signed(f.type) && r.chance(30)) {  // small negatives: -1 .. -min(300, 2^(bits-1))
    const uint64_t most = bits == 8 ? 128 : 300;
    v = static_cast<uint64_t>(-static_cast<int64_t>(r.range(1, most)));
  }
  return v;
}

// ADD operands: small increments, negative ones (wrap downwards), big ones.
uint64_t random_addend(Rng &r) {
  switch (r.below(5)) {
    case 0: return static_cast<uint64_t>(-static_cast<int64_t>(r.range(1, 1000)));
    case 1: return r.next();
    case 2: return r.below(70000);
    default: return r.range(1, 9);
  }
}

// ── The op stream and the model ────────────────────────────────────────────

enum class Kind : uint8_t { Set, Clear, Add, Prop, Event, String };

struct Item {
  Kind kind;
  uint16_t id = 0;  // storage id, or event type id
  uint16_t slot = 0;
  uint16_t field = 0;  // field or property index
  uint64_t value = 0;
  std::vector<uint8_t> payload;  // events
  std::string str;               // String: interned inside the cycle
};
struct Cycle {
  uint64_t time = 0;
  std::vector<Item> items;
  bool flush_after = false;  // uscope_writer_flush() after this cycle
};

struct ModelStorage {
  std::vector<uint8_t> valid;   // per slot; dense slots are always valid
  std::vector<uint64_t> value;  // slot * num_fields + field, zero-extended
  std::vector<uint64_t> prop;
};

struct ModelEvent {
  uint64_t time;
  uint16_t id;
  std::vector<uint8_t> payload;
};

class Model {
 public:
  explicit Model(const SchemaSpec &s) : spec_(&s) {
    for (const auto &st : s.storages) {
      ModelStorage m;
      m.valid.assign(st.slots, st.sparse() ? 0 : 1);
      m.value.assign(size_t{st.slots} * st.fields.size(), 0);
      m.prop.assign(st.props.size(), 0);
      st_.push_back(std::move(m));
    }
  }
  // §8.6.2 with COMPAT 13: SET and ADD keep the field's low bytes (ADD wraps)
  // and make a sparse slot valid; CLEAR invalidates a sparse slot and zeroes
  // any slot; PROP_SET keeps the property's low bytes.
  void apply(const Item &it) {
    if (it.kind == Kind::Event || it.kind == Kind::String) return;
    const StorageSpec &sp = spec_->storages[it.id];
    ModelStorage &m = st_[it.id];
    const size_t nf = sp.fields.size();
    switch (it.kind) {
      case Kind::Set:
        m.value[it.slot * nf + it.field] = it.value & width_mask(sp.fields[it.field].type);
        m.valid[it.slot] = 1;
        break;
      case Kind::Add: {
        uint64_t &v = m.value[it.slot * nf + it.field];
        v = (v + it.value) & width_mask(sp.fields[it.field].type);
        m.valid[it.slot] = 1;
        break;
      }
      case Kind::Clear:
        if (sp.sparse()) m.valid[it.slot] = 0;
        std::fill_n(m.value.begin() + it.slot * nf, nf, 0);
        break;
      case Kind::Prop:
        m.prop[it.field] = it.value & width_mask(sp.props[it.field].type);
        break;
      default: break;
    }
  }
  const std::vector<ModelStorage> &storages() const { return st_; }

 private:
  const SchemaSpec *spec_;
  std::vector<ModelStorage> st_;
};

struct Trace {
  SchemaSpec schema;
  std::vector<std::string> strings_before;  // interned before the first cycle
  std::vector<Cycle> cycles;
  uint64_t interval = 0;
};

std::vector<uint8_t> random_payload(Rng &r, const EventSpec &e, const SchemaSpec &s, uint32_t nstr) {
  std::vector<uint8_t> p(e.size);
  size_t off = 0;
  for (const auto &f : e.fields) {
    const unsigned sz = type_size(f.type);
    wire::put_field(p.data() + off, sz, random_value(r, f, s, nstr));
    off += sz;
  }
  return p;
}

Trace random_trace(Rng &r, const Shape &shape) {
  Trace t;
  t.schema = random_schema(r, shape);
  const SchemaSpec &s = t.schema;
  // Small intervals: many segments, boundaries everywhere.
  constexpr uint64_t kIntervals[] = {2000, 3000, 5000, 12000};
  t.interval = kIntervals[r.below(4)];
  const unsigned nstr0 = static_cast<unsigned>(r.below(4));
  for (unsigned i = 0; i < nstr0; ++i) t.strings_before.push_back("str" + std::to_string(r.below(5)));
  // Strings interned so far (equal strings intern once): STRING_REF values
  // stay below their count, i.e. name a real string-table entry.
  std::set<std::string> interned(t.strings_before.begin(), t.strings_before.end());
  auto nstr = [&] { return static_cast<uint32_t>(interned.size()); };
  // Times: start at 0 or later, then repeats (several frames at one time),
  // one-period steps, odd steps, and big gaps over many checkpoint intervals.
  uint64_t time = r.chance(50) ? 0 : r.range(1, 3 * t.interval);
  for (unsigned c = 0; c < shape.cycles; ++c) {
    Cycle cy;
    if (c > 0) {
      const unsigned k = static_cast<unsigned>(r.below(100));
      if (k < 20) time += 0;
      else if (k < 80) time += 1000 * r.range(1, 3);
      else if (k < 95) time += r.range(1, 999);
      else if (k < 99) time += t.interval * r.range(2, 50) + r.below(1000);
      else time += r.range(1'000'000, 100'000'000);
    }
    cy.time = time;
    const unsigned nitems = r.chance(10) ? 0 : static_cast<unsigned>(r.range(1, 8));  // some empty cycles
    for (unsigned i = 0; i < nitems; ++i) {
      Item it;
      const unsigned k = static_cast<unsigned>(r.below(100));
      if (k < 20) {
        it.kind = Kind::Event;
        it.id = static_cast<uint16_t>(r.below(s.events.size()));
        it.payload = random_payload(r, s.events[it.id], s, nstr());
      } else if (k < 22) {
        it.kind = Kind::String;
        it.str = "cyc" + std::to_string(r.below(20));
        interned.insert(it.str);
      } else {
        it.id = static_cast<uint16_t>(r.below(s.storages.size()));
        const StorageSpec &st = s.storages[it.id];
        it.slot = static_cast<uint16_t>(r.below(st.slots));
        const unsigned a = static_cast<unsigned>(r.below(100));
        if (a < 15 && !st.props.empty()) {
          it.kind = Kind::Prop;
          it.field = static_cast<uint16_t>(r.below(st.props.size()));
          it.value = random_value(r, st.props[it.field], s, nstr());
          it.slot = 0;
        } else if (a < 30 || st.fields.empty()) {
          it.kind = Kind::Clear;
        } else if (a < 50) {
          it.kind = Kind::Add;
          it.field = static_cast<uint16_t>(r.below(st.fields.size()));
          it.value = random_addend(r);
        } else {
          it.kind = Kind::Set;
          it.field = static_cast<uint16_t>(r.below(st.fields.size()));
          it.value = random_value(r, st.fields[it.field], s, nstr());
        }
      }
      cy.items.push_back(std::move(it));
    }
    cy.flush_after = r.chance(3);  // segments that end early, off the interval grid
    t.cycles.push_back(std::move(cy));
  }
  return t;
}

// ── Writing ────────────────────────────────────────────────────────────────

struct Variant {
  uint32_t compression;
  uint32_t frames;
  const char *name;
};
constexpr Variant kVariants[] = {
    {USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V02, "lz4-v02"},   {USCOPE_COMPRESSION_LZ4, USCOPE_FRAMES_V01, "lz4-v01"},
    {USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V02, "zstd-v02"}, {USCOPE_COMPRESSION_ZSTD, USCOPE_FRAMES_V01, "zstd-v01"},
    {USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V02, "none-v02"}, {USCOPE_COMPRESSION_NONE, USCOPE_FRAMES_V01, "none-v01"},
};

// Writes t with the C API. *strings receives the string table the writer
// should have built (indices in first-insertion order; equal strings once).
void write_trace(const Trace &t, const Variant &v, const std::string &path, std::vector<std::string> *strings) {
  uscope_schema_t *schema = build_schema(t.schema);
  ASSERT_NE(schema, nullptr);
  uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
  opts.compression = v.compression;
  opts.frame_format = v.frames;
  opts.checkpoint_interval_ps = t.interval;
  opts.queue_bytes = 64 << 10;  // small: its pages are touched at open
  const uscope_dut_property_t props[2] = {{"dut_name", "reader_roundtrip"}, {"variant", v.name}};
  uscope_writer_t *w = nullptr;
  const uscope_status_t open_st = uscope_writer_open(&w, path.c_str(), schema, props, 2, &opts);
  uscope_schema_free(schema);
  ASSERT_EQ(open_st, USCOPE_OK) << uscope_last_error();

  std::map<std::string, uint32_t> interned;
  auto intern = [&](const std::string &s) {
    uint32_t idx = 0;
    const uscope_status_t st = uscope_string_insert(w, s.c_str(), &idx);
    if (st != USCOPE_OK) return st;
    auto it = interned.find(s);
    if (it == interned.end()) {
      // New strings take the next index (the header promises indices count up from 0).
      EXPECT_EQ(idx, strings->size()) << "string " << s;
      interned.emplace(s, idx);
      strings->push_back(s);
    } else {
      EXPECT_EQ(idx, it->second) << "equal strings get the same index";
    }
    return st;
  };
  uscope_status_t st = USCOPE_OK;
  for (const auto &s : t.strings_before)
    if (st == USCOPE_OK) st = intern(s);
  for (const Cycle &c : t.cycles) {
    if (st != USCOPE_OK) break;
    st = uscope_begin_cycle(w, c.time);
    for (const Item &it : c.items) {
      if (st != USCOPE_OK) break;
      switch (it.kind) {
        case Kind::Set: st = uscope_slot_set(w, it.id, it.slot, it.field, it.value); break;
        case Kind::Clear: st = uscope_slot_clear(w, it.id, it.slot); break;
        case Kind::Add: st = uscope_slot_add(w, it.id, it.slot, it.field, it.value); break;
        case Kind::Prop: st = uscope_prop_set(w, it.id, it.field, it.value); break;
        case Kind::Event:
          st = uscope_event(w, it.id, it.payload.empty() ? nullptr : it.payload.data(),
                            static_cast<uint32_t>(it.payload.size()));
          break;
        case Kind::String: st = intern(it.str); break;
      }
    }
    if (st == USCOPE_OK) st = uscope_end_cycle(w);
    if (st == USCOPE_OK && c.flush_after) st = uscope_writer_flush(w);
  }
  const std::string err = uscope_writer_error(w);
  const uscope_status_t close_st = uscope_writer_close(w);
  ASSERT_EQ(st, USCOPE_OK) << err;
  ASSERT_EQ(close_st, USCOPE_OK) << uscope_last_error();
}

// ── Checking ───────────────────────────────────────────────────────────────

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The reader's states against the model, storage by storage: validity and
// occupancy of every slot, every field of every valid slot (an invalid slot
// has no value to compare), every property.
testing::AssertionResult same_state(const SchemaSpec &spec, const std::vector<ModelStorage> &want,
                                    const std::vector<uscope::StorageState> &got) {
  if (got.size() != want.size())
    return testing::AssertionFailure() << got.size() << " storages, expected " << want.size();
  for (size_t s = 0; s < want.size(); ++s) {
    const StorageSpec &sp = spec.storages[s];
    const ModelStorage &m = want[s];
    const uscope::StorageState &g = got[s];
    uint32_t occupied = 0;
    for (uint16_t slot = 0; slot < sp.slots; ++slot) {
      occupied += m.valid[slot];
      if (g.valid(slot) != static_cast<bool>(m.valid[slot]))
        return testing::AssertionFailure() << "storage " << s << " slot " << slot << ": valid " << g.valid(slot)
                                           << ", expected " << int(m.valid[slot]);
      if (!m.valid[slot]) continue;
      for (uint16_t f = 0; f < sp.fields.size(); ++f) {
        const uint64_t e = m.value[slot * sp.fields.size() + f];
        if (g.get(slot, f) != e)
          return testing::AssertionFailure() << "storage " << s << " slot " << slot << " field " << f << " (type "
                                             << int(sp.fields[f].type) << "): " << hex(g.get(slot, f))
                                             << ", expected " << hex(e);
      }
    }
    if (g.occupancy() != occupied)
      return testing::AssertionFailure() << "storage " << s << ": occupancy " << g.occupancy() << ", expected "
                                         << occupied;
    for (uint16_t p = 0; p < sp.props.size(); ++p)
      if (g.prop(p) != m.prop[p])
        return testing::AssertionFailure() << "storage " << s << " property " << p << ": "
                                           << hex(g.prop(p)) << ", expected " << hex(m.prop[p]);
  }
  return testing::AssertionSuccess();
}

// The schema the reader decoded is the one written (ids are positions).
void check_schema(const SchemaSpec &spec, const uscope::Schema &got) {
  ASSERT_EQ(got.storages.size(), spec.storages.size());
  for (size_t i = 0; i < spec.storages.size(); ++i) {
    const auto &g = got.storages[i];
    const auto &w = spec.storages[i];
    EXPECT_EQ(g.storage_id, i);
    EXPECT_EQ(g.num_slots, w.slots);
    EXPECT_EQ(g.flags, w.flags);
    ASSERT_EQ(g.fields.size(), w.fields.size()) << "storage " << i;
    ASSERT_EQ(g.props.size(), w.props.size()) << "storage " << i;
    for (size_t k = 0; k < w.fields.size(); ++k) EXPECT_EQ(g.fields[k].type, w.fields[k].type);
    for (size_t k = 0; k < w.props.size(); ++k) EXPECT_EQ(g.props[k].type, w.props[k].type);
  }
  ASSERT_EQ(got.events.size(), spec.events.size());
  for (size_t i = 0; i < spec.events.size(); ++i) {
    ASSERT_EQ(got.events[i].fields.size(), spec.events[i].fields.size()) << "event " << i;
    for (size_t k = 0; k < spec.events[i].fields.size(); ++k)
      EXPECT_EQ(got.events[i].fields[k].type, spec.events[i].fields[k].type);
  }
}

// Query times: 0 and 1, every segment boundary and its neighbours, exact
// frame times and their neighbours, random times between, and past the end.
std::vector<uint64_t> query_times(Rng &r, const Trace &t, const std::vector<uscope::SegmentInfo> &segs) {
  std::vector<uint64_t> q = {0, 1, UINT64_MAX};
  auto near = [&](uint64_t v) {
    q.push_back(v);
    if (v) q.push_back(v - 1);
    if (v != UINT64_MAX) q.push_back(v + 1);
  };
  // Every boundary for short segment lists; a random sample of long ones.
  for (size_t i = 0; i < segs.size(); ++i) {
    if (segs.size() > 40 && !r.chance(40) && i != 0 && i + 1 != segs.size()) continue;
    near(segs[i].header.time_start_ps);
    near(segs[i].header.time_end_ps);
  }
  const uint64_t last = t.cycles.empty() ? 0 : t.cycles.back().time;
  for (int i = 0; i < 40 && !t.cycles.empty(); ++i) near(t.cycles[r.below(t.cycles.size())].time);
  for (int i = 0; i < 20; ++i) q.push_back(r.below(last + 2));
  near(last);
  q.push_back(last + 1'000'000'000);
  std::sort(q.begin(), q.end());
  q.erase(std::unique(q.begin(), q.end()), q.end());
  return q;
}

struct CaseResult {
  size_t segments = 0;
  size_t queries = 0;
  size_t windows = 0;
};

void check_trace(const Trace &t, const Variant &v, uint64_t seed, CaseResult *res) {
  SCOPED_TRACE(std::string("variant ") + v.name);
  TempDir dir("reader_rt");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file(std::string(v.name) + ".usc");
  std::vector<std::string> strings;
  ASSERT_NO_FATAL_FAILURE(write_trace(t, v, path, &strings));

  std::unique_ptr<uscope::TraceReader> rd;
  try {
    rd = std::make_unique<uscope::TraceReader>(path);
  } catch (const uscope::Error &e) {
    FAIL() << "TraceReader(" << path << "): " << e.what();
  }
  uscope::TraceReader &r = *rd;
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.checkpoint_interval_ps(), t.interval);
  ASSERT_NO_FATAL_FAILURE(check_schema(t.schema, r.schema()));
  EXPECT_EQ(r.strings(), strings);
  ASSERT_EQ(r.dut().size(), 2u);
  const auto &segs = r.segments();
  // Small intervals and early flushes: there must be many segments, or the
  // case does not test what it says.
  ASSERT_GE(segs.size(), 5u);
  res->segments += segs.size();

  Rng qr(seed ^ 0x5EED5EED5EED5EEDull);
  const std::vector<uint64_t> qs = query_times(qr, t, segs);
  // Walk the cycles once; at each query time, compare with the model.
  Model model(t.schema);
  size_t ci = 0;
  try {
    for (uint64_t q : qs) {
      while (ci < t.cycles.size() && t.cycles[ci].time <= q) {
        for (const Item &it : t.cycles[ci].items) model.apply(it);
        ++ci;
      }
      const std::vector<uscope::StorageState> got = r.state_at(q);
      ASSERT_TRUE(same_state(t.schema, model.storages(), got)) << "state_at(" << q << "), seed " << seed;
      ++res->queries;
    }
  } catch (const uscope::Error &e) {
    FAIL() << "state_at threw: " << e.what();
  }

  // Events: the model's list in call order, filtered by time.
  std::vector<ModelEvent> events;
  for (const Cycle &c : t.cycles)
    for (const Item &it : c.items)
      if (it.kind == Kind::Event) events.push_back({c.time, it.id, it.payload});
  const uint64_t last = t.cycles.back().time;
  std::vector<std::pair<uint64_t, uint64_t>> windows = {{0, UINT64_MAX}, {0, 0}, {last, last},
                                                        {last + 1, UINT64_MAX}, {5, 4}};
  for (const auto &s : segs) {  // windows that start or end exactly on boundaries
    if (!qr.chance(20)) continue;
    windows.push_back({s.header.time_start_ps, s.header.time_end_ps});
    windows.push_back({s.header.time_start_ps, s.header.time_start_ps});
    windows.push_back({s.header.time_end_ps, s.header.time_end_ps + qr.below(3 * t.interval)});
  }
  for (int i = 0; i < 30; ++i) {
    const uint64_t a = qr.chance(50) ? t.cycles[qr.below(t.cycles.size())].time : qr.below(last + 2);
    const uint64_t span = qr.chance(30) ? 0 : qr.below(qr.chance(80) ? 4 * t.interval : last + 1);
    windows.push_back({a, a + span});
  }
  try {
    for (const auto &w : windows) {
      const std::vector<uscope::TimedEvent> &got = r.events_in_range(w.first, w.second);
      std::vector<const ModelEvent *> want;
      for (const auto &e : events)
        if (e.time >= w.first && e.time <= w.second) want.push_back(&e);
      ASSERT_EQ(got.size(), want.size()) << "events_in_range(" << w.first << ", " << w.second << "), seed " << seed;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].time_ps, want[i]->time) << "event " << i << " of [" << w.first << ", " << w.second << "]";
        ASSERT_EQ(got[i].event_type_id, want[i]->id) << "event " << i << " at " << want[i]->time;
        ASSERT_EQ(got[i].payload_size, want[i]->payload.size()) << "event " << i << " at " << want[i]->time;
        ASSERT_TRUE(want[i]->payload.empty() ||
                    std::memcmp(got[i].payload, want[i]->payload.data(), want[i]->payload.size()) == 0)
            << "payload of event " << i << " at " << want[i]->time;
      }
      ++res->windows;
    }
  } catch (const uscope::Error &e) {
    FAIL() << "events_in_range threw: " << e.what();
  }
}

void run_seed(uint64_t seed, const Shape &shape) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng r(seed);
  const Trace t = random_trace(r, shape);
  CaseResult res;
  for (const Variant &v : kVariants) ASSERT_NO_FATAL_FAILURE(check_trace(t, v, seed, &res));
  std::fprintf(stderr, "[ seed %llu ] %zu storages, %zu event types, %zu cycles: %zu segments, %zu state_at, "
               "%zu windows over %zu variants\n",
               static_cast<unsigned long long>(seed), t.schema.storages.size(), t.schema.events.size(),
               t.cycles.size(), res.segments, res.queries, res.windows, std::size(kVariants));
}

// Sizes: about 1 s for the whole suite in RelWithDebInfo and about 10 s under
// ASan + UBSan (the 300-storage cases slow down most there).
TEST(ReaderRoundtrip, SmallSchemas) {
  for (uint64_t seed : {1ull, 2ull, 3ull, 4ull, 5ull, 6ull})
    ASSERT_NO_FATAL_FAILURE(run_seed(seed, Shape{false, false, 700}));
}

// More than 256 storages (and, in one case, event types): ids above 255
// force wide ops (COMPAT 18), and every checkpoint carries hundreds of blocks.
TEST(ReaderRoundtrip, StorageIdsAbove255) {
  ASSERT_NO_FATAL_FAILURE(run_seed(101, Shape{true, false, 450}));
  ASSERT_NO_FATAL_FAILURE(run_seed(102, Shape{true, true, 450}));
}

// Longer streams: more segments per case, and more cycles at repeated times
// and after big gaps falling on or next to segment boundaries.
TEST(ReaderRoundtrip, LongerTraces) {
  for (uint64_t seed : {201ull, 202ull}) ASSERT_NO_FATAL_FAILURE(run_seed(seed, Shape{false, false, 2500}));
}

}  // namespace
