// Property tests of the reader (issue 5, point 4): random schemas and random
// op/event streams are written through the public writer C API and read back
// through the public reader C API only (uscope/uscope.h, "Reader"), which must
// give back exactly what an independent in-memory model of the same calls
// predicts — the schema, string table and DUT properties; every segment's
// op and event items; uscope_reader_state_at at many times (zero, segment
// boundaries, exact frame times, between frames, past the end); and
// uscope_reader_events_in_range over many windows. Every case runs with LZ4,
// ZSTD and no compression, and with both frame formats (v0.2 interleaved,
// v0.1 compact), with checkpoint intervals small enough to give many segments.
//
// Only public headers: the test sees the library as a user does, so it keeps
// its own copy of the field sizes and of the payload packing (header: "Sizes:
// 1,2,4,8,1,2,4,8,1,4,1 bytes"; "fields packed little-endian").
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

#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

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

unsigned type_size(uint8_t t) {
  switch (t) {
    case USCOPE_FT_U8: case USCOPE_FT_I8: case USCOPE_FT_BOOL: case USCOPE_FT_ENUM: return 1;
    case USCOPE_FT_U16: case USCOPE_FT_I16: return 2;
    case USCOPE_FT_U32: case USCOPE_FT_I32: case USCOPE_FT_STRING_REF: return 4;
    default: return 8;  // U64, I64: kAllTypes holds no other type
  }
}
// The low `size` bytes of v, little-endian: one field of an event payload.
void put_field(uint8_t *p, unsigned size, uint64_t v) {
  for (unsigned i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
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
  if (!ok(uscope_schema_add_clock(s, &clk, "clk", 1000), "add_clock") ||
      !ok(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, nullptr, clk), "add_scope")) {
    uscope_schema_free(s);
    return nullptr;
  }
  for (size_t i = 0; i < spec.enum_sizes.size(); ++i) {
    std::vector<std::string> vals;
    for (unsigned k = 0; k < spec.enum_sizes[i]; ++k) vals.push_back("v" + std::to_string(k));
    std::vector<const char *> ptrs;
    for (auto &v : vals) ptrs.push_back(v.c_str());
    const std::string name = "e" + std::to_string(i);
    if (!ok(uscope_schema_add_enum(s, &en, name.c_str(), ptrs.data(), spec.enum_sizes[i]), "add_enum") ||
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
    if (!ok(uscope_schema_add_storage(s, &id, name.c_str(), top, st.slots, st.flags,
                                      f.data(), static_cast<uint16_t>(f.size()),
                                      p.empty() ? nullptr : p.data(), static_cast<uint16_t>(p.size())),
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
    if (!ok(uscope_schema_add_event(s, &id, name.c_str(), top,
                                    f.empty() ? nullptr : f.data(), static_cast<uint16_t>(f.size())),
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
    put_field(p.data() + off, sz, random_value(r, f, s, nstr));
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
    const uscope_status_t st = uscope_string_insert(w, &idx, s.c_str());
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

// ── Reader handles ─────────────────────────────────────────────────────────

// Owners of every handle the reader API returns, so that a failing ASSERT
// (which returns from the function at once) still frees them: ASan runs this
// test with leak detection. States and iterators are declared after the
// reader they come from, so they are destroyed first, as
// uscope_reader_close() requires.
template <class T, void (*Free)(T *)>
struct Deleter {
  void operator()(T *p) const { Free(p); }
};
using ReaderPtr = std::unique_ptr<uscope_reader_t, Deleter<uscope_reader_t, uscope_reader_close>>;
using StatePtr = std::unique_ptr<uscope_state_t, Deleter<uscope_state_t, uscope_state_free>>;
using EventIterPtr = std::unique_ptr<uscope_event_iter_t, Deleter<uscope_event_iter_t, uscope_event_iter_free>>;
using ItemIterPtr = std::unique_ptr<uscope_item_iter_t, Deleter<uscope_item_iter_t, uscope_item_iter_free>>;

// A failure's message. Calls on the reader and its event iterators keep it
// on the reader; state and item-iterator calls know no reader and leave it
// only on the thread, so both are shown.
std::string why(const uscope_reader_t *r) {
  return std::string(uscope_reader_error(r)) + " [thread: " + uscope_last_error() + "]";
}

// Every status is checked; only built into a message when it is not OK.
#define ASSERT_OK(call, r) ASSERT_EQ((call), USCOPE_OK) << #call << ": " << why(r)

// ── Checking ───────────────────────────────────────────────────────────────

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The fields of a storage's slots, of its properties or of an event, each
// read with get(index, &info), against the spec: name, type, enum, size, and
// the packed offset (the sum of the sizes before it).
template <class Get>
void check_fields(const uscope_reader_t *r, const std::vector<FieldSpec> &want, const char *prefix, Get get) {
  uint32_t offset = 0;
  for (uint16_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE(prefix + std::to_string(k));
    uscope_field_info_t fi{};
    ASSERT_OK(get(k, &fi), r);
    EXPECT_STREQ(fi.name, (prefix + std::to_string(k)).c_str());
    EXPECT_EQ(fi.type, want[k].type);
    EXPECT_EQ(fi.enum_id, want[k].enum_id);
    EXPECT_EQ(fi.size, type_size(want[k].type));
    EXPECT_EQ(fi.offset, offset);
    offset += type_size(want[k].type);
  }
}

// The schema the reader decoded is the one written (ids are positions).
void check_schema(const SchemaSpec &spec, const uscope_reader_t *r) {
  uscope_schema_counts_t c{};
  c.struct_size = sizeof c;
  ASSERT_OK(uscope_reader_schema_counts(r, &c), r);
  EXPECT_EQ(c.clocks, 1u);
  EXPECT_EQ(c.scopes, 1u);
  EXPECT_EQ(c.enums, spec.enum_sizes.size());
  ASSERT_EQ(c.storages, spec.storages.size());
  ASSERT_EQ(c.event_types, spec.events.size());
  for (uint16_t i = 0; i < spec.storages.size(); ++i) {
    SCOPED_TRACE("storage " + std::to_string(i));
    const StorageSpec &w = spec.storages[i];
    uscope_storage_info_t g{};
    ASSERT_OK(uscope_reader_storage(r, &g, i), r);
    EXPECT_STREQ(g.name, ("s" + std::to_string(i)).c_str());
    EXPECT_EQ(g.num_slots, w.slots);
    EXPECT_EQ(g.flags, w.flags);
    ASSERT_EQ(g.num_fields, w.fields.size());
    ASSERT_EQ(g.num_properties, w.props.size());
    uint32_t slot_size = 0;
    for (const auto &f : w.fields) slot_size += type_size(f.type);
    EXPECT_EQ(g.slot_size, slot_size);
    ASSERT_NO_FATAL_FAILURE(check_fields(r, w.fields, "f", [&](uint16_t k, uscope_field_info_t *fi) {
      return uscope_reader_storage_field(r, fi, i, k, 0);
    }));
    ASSERT_NO_FATAL_FAILURE(check_fields(r, w.props, "p", [&](uint16_t k, uscope_field_info_t *fi) {
      return uscope_reader_storage_field(r, fi, i, k, 1);
    }));
  }
  for (uint16_t i = 0; i < spec.events.size(); ++i) {
    SCOPED_TRACE("event type " + std::to_string(i));
    uscope_event_type_info_t g{};
    ASSERT_OK(uscope_reader_event_type(r, &g, i), r);
    EXPECT_STREQ(g.name, ("ev" + std::to_string(i)).c_str());
    ASSERT_EQ(g.num_fields, spec.events[i].fields.size());
    EXPECT_EQ(g.payload_size, spec.events[i].size);
    ASSERT_NO_FATAL_FAILURE(check_fields(r, spec.events[i].fields, "f", [&](uint16_t k, uscope_field_info_t *fi) {
      return uscope_reader_event_field(r, fi, i, k);
    }));
  }
}

// The string table: the writer's indices, first insertion order.
void check_strings(const std::vector<std::string> &want, const uscope_reader_t *r) {
  ASSERT_EQ(uscope_reader_string_count(r), want.size());
  for (uint32_t i = 0; i < want.size(); ++i) {
    const char *s = nullptr;
    uint32_t len = 0;
    ASSERT_OK(uscope_reader_string(r, &s, &len, i), r);
    ASSERT_EQ(std::string(s, len), want[i]) << "string " << i;
    EXPECT_EQ(s[len], '\0') << "string " << i << " is NUL-terminated";
  }
}

// The two DUT properties write_trace gives, in order.
void check_dut(const Variant &v, const uscope_reader_t *r) {
  ASSERT_EQ(uscope_reader_dut_count(r), 2u);
  const char *want[2][2] = {{"dut_name", "reader_roundtrip"}, {"variant", v.name}};
  for (uint32_t i = 0; i < 2; ++i) {
    const char *key = nullptr, *value = nullptr;
    ASSERT_OK(uscope_reader_dut_property(r, &key, &value, i), r);
    EXPECT_STREQ(key, want[i][0]);
    EXPECT_STREQ(value, want[i][1]);
  }
}

// The reader's state against the model, storage by storage: validity and
// occupancy of every slot, every field of every valid slot (an invalid slot
// has no value to compare), every property. Values are compared as stored
// bytes zero-extended, which is what both the model and
// uscope_state_slot_field give.
//
// This runs millions of times per suite, so the passing path is plain
// compares on plain pointers (no per-element calls in the unoptimized ASan
// build): the gtest assertions, out-of-line helpers, run only on a mismatch,
// to report it.
void check_state(const SchemaSpec &spec, const std::vector<ModelStorage> &want, const uscope_state_t *st,
                 const uscope_reader_t *r) {
  for (uint16_t s = 0; s < want.size(); ++s) {
    const StorageSpec &sp = spec.storages[s];
    const ModelStorage &m = want[s];
    const size_t nf = sp.fields.size();
    const uint8_t *const valids = m.valid.data();
    const uint64_t *const values = m.value.data();
    uint32_t occupied = 0;
    for (uint16_t slot = 0; slot < sp.slots; ++slot) {
      occupied += valids[slot];
      int valid = -1;
      const uscope_status_t vs = uscope_state_slot_valid(st, &valid, s, slot);
      if (vs != USCOPE_OK || valid != valids[slot]) {
        ASSERT_OK(vs, r);
        ASSERT_EQ(valid, valids[slot]) << "storage " << s << " slot " << slot;
      }
      if (!valids[slot]) continue;
      for (uint16_t f = 0; f < nf; ++f) {
        const uint64_t e = values[slot * nf + f];
        uint64_t g = 0;
        const uscope_status_t fs = uscope_state_slot_field(st, &g, s, slot, f);
        if (fs != USCOPE_OK || g != e) {
          ASSERT_OK(fs, r);
          ASSERT_EQ(g, e) << "storage " << s << " slot " << slot << " field " << f << " (type "
                          << int(sp.fields[f].type) << "): " << hex(g) << ", expected " << hex(e);
        }
      }
    }
    uint32_t occupancy = 0;
    ASSERT_OK(uscope_state_occupancy(st, &occupancy, s), r);
    ASSERT_EQ(occupancy, occupied) << "storage " << s;
    for (uint16_t p = 0; p < sp.props.size(); ++p) {
      uint64_t g = 0;
      ASSERT_OK(uscope_state_property(st, &g, s, p), r);
      ASSERT_EQ(g, m.prop[p]) << "storage " << s << " property " << p << ": " << hex(g) << ", expected "
                              << hex(m.prop[p]);
    }
  }
}

uint8_t action_of(Kind k) {  // DA_* of spec §8.6.2
  switch (k) {
    case Kind::Set: return 1;
    case Kind::Clear: return 2;
    case Kind::Add: return 3;
    default: return 4;  // Kind::Prop
  }
}

// The items one cycle gives, in the order its frame keeps them: v0.2 frames
// keep call order; v0.1 frames hold the cycle's ops, then its events (the
// header: "ops before events"). String inserts are not items.
void frame_items(const Cycle &c, uint32_t frames, std::vector<const Item *> *out) {
  out->clear();
  for (const Item &it : c.items)
    if (it.kind != Kind::String && (frames == USCOPE_FRAMES_V02 || it.kind != Kind::Event)) out->push_back(&it);
  if (frames == USCOPE_FRAMES_V01)
    for (const Item &it : c.items)
      if (it.kind == Kind::Event) out->push_back(&it);
}

// An item read back is the one the model expects at time t: the same kind;
// for an event its type and payload bytes; for an op its action, storage and
// slot (0 for PROP_SET: COMPAT 13, as the generator has it), and but for
// CLEAR its field (the property index for PROP_SET) and its value, all 64
// bits of it (the reader does not truncate op values). §8.6.2 has field and
// value ignored for DA_SLOT_CLEAR, so a writer may put anything there.
bool same_item(const uscope_item_t &g, const Item &w, uint64_t t) {
  if (g.time_ps != t || g.is_event != (w.kind == Kind::Event ? 1u : 0u)) return false;
  if (w.kind == Kind::Event)
    return g.event_type_id == w.id && g.payload_size == w.payload.size() &&
           (w.payload.empty() || std::memcmp(g.payload, w.payload.data(), w.payload.size()) == 0);
  if (g.action != action_of(w.kind) || g.storage_id != w.id || g.slot != w.slot) return false;
  return w.kind == Kind::Clear || (g.field == w.field && g.value == w.value);
}

std::string describe(const uscope_item_t &g) {
  std::string s = "at " + std::to_string(g.time_ps) + ": ";
  if (g.is_event) {
    s += "event " + std::to_string(g.event_type_id) + ", payload";
    for (uint32_t i = 0; i < g.payload_size; ++i) s += " " + std::to_string(g.payload[i]);
    return s;
  }
  return s + "op " + std::to_string(g.action) + " storage " + std::to_string(g.storage_id) + " slot " +
         std::to_string(g.slot) + " field " + std::to_string(g.field) + " value " + hex(g.value);
}
std::string describe(const Item &w, uint64_t t) {
  std::string s = "at " + std::to_string(t) + ": ";
  if (w.kind == Kind::Event) {
    s += "event " + std::to_string(w.id) + ", payload";
    for (uint8_t b : w.payload) s += " " + std::to_string(b);
    return s;
  }
  return s + "op " + std::to_string(action_of(w.kind)) + " storage " + std::to_string(w.id) + " slot " +
         std::to_string(w.slot) + " field " + std::to_string(w.field) + " value " + hex(w.value);
}

// Every segment's items (uscope_reader_segment_items) against the model.
// Segments take the cycles in order and each cycle lies in exactly one
// (COMPAT 10: a segment ends with the cycle that reaches the next checkpoint
// time, which becomes that time plus the interval, or at a flush; the next
// one starts at that same time, segment 0 at time 0), so the model knows
// which cycles each segment holds. Within a segment:
//  - v0.2: one frame per cycle (a cycle is split only above 65,535 items;
//    these have at most 8), empty cycles included, items in call order;
//  - v0.1 (docs/compat.md): one frame per run of cycles at one time, holding
//    the run's ops, then its events, each in call order - the order the
//    reference reader yields.
// The concatenation of all segments is the whole call sequence. This pins
// both where items go and what they say.
void check_segment_items(const Trace &t, const Variant &v, uscope_reader_t *r,
                         const std::vector<uscope_segment_info_t> &segs, size_t *items_seen) {
  size_t ci = 0;  // the first cycle of the current segment
  uint64_t next_checkpoint = t.interval;
  std::vector<const Item *> want, part;
  std::vector<uint64_t> want_time;
  for (uint32_t i = 0; i < segs.size(); ++i) {
    const uscope_segment_info_t &sg = segs[i];
    // Built only on a failure: there are thousands of segments per case.
    auto where = [&] {
      return "segment " + std::to_string(i) + " [" + std::to_string(sg.time_start_ps) + ", " +
             std::to_string(sg.time_end_ps) + "] of " + std::to_string(sg.num_frames) + " frames from cycle " +
             std::to_string(ci) + ": ";
    };
    ASSERT_EQ(sg.time_start_ps, i == 0 ? 0 : segs[i - 1].time_end_ps) << where();
    ASSERT_LT(ci, t.cycles.size()) << where() << "more segments than the cycles fill";
    // The cycles of this segment: up to the one that cuts it.
    size_t cend = ci;
    for (;;) {
      const Cycle &c = t.cycles[cend++];
      if (c.time >= next_checkpoint) {
        next_checkpoint = c.time + t.interval;
        break;
      }
      if (c.flush_after || cend == t.cycles.size()) break;
    }
    ASSERT_GE(t.cycles[ci].time, sg.time_start_ps) << where();
    ASSERT_EQ(t.cycles[cend - 1].time, sg.time_end_ps) << where() << "time_end_ps is the time of the last frame";
    want.clear();
    want_time.clear();
    uint32_t frames = 0, active = 0;
    for (size_t c = ci; c < cend;) {
      size_t run = c + 1;  // v0.1: the run of cycles at this time is one frame
      if (v.frames == USCOPE_FRAMES_V01)
        while (run < cend && t.cycles[run].time == t.cycles[c].time) ++run;
      const size_t before = want.size();
      // v0.2: one pass, call order. v0.1: the run's ops, then its events.
      const int passes = v.frames == USCOPE_FRAMES_V01 ? 2 : 1;
      for (int pass = 0; pass < passes; ++pass)
        for (size_t k = c; k < run; ++k) {
          frame_items(t.cycles[k], v.frames, &part);
          for (const Item *it : part)
            if (passes == 1 || (it->kind == Kind::Event) == (pass == 1)) {
              want.push_back(it);
              want_time.push_back(t.cycles[k].time);
            }
        }
      ++frames;
      active += want.size() != before;
      c = run;
    }
    EXPECT_EQ(sg.num_frames, frames) << where();
    EXPECT_EQ(sg.num_frames_active, active) << where();

    uscope_item_iter_t *raw = nullptr;
    ASSERT_OK(uscope_reader_segment_items(r, &raw, i), r) << where();
    const ItemIterPtr it(raw);
    for (size_t k = 0; k < want.size(); ++k) {
      uscope_item_t g{};
      const uscope_status_t st = uscope_item_iter_next(it.get(), &g);
      ASSERT_NE(st, USCOPE_DONE) << where() << "the items end before item " << k << " of the segment, "
                                 << describe(*want[k], want_time[k]);
      ASSERT_OK(st, r) << where();
      ++*items_seen;
      ASSERT_TRUE(same_item(g, *want[k], want_time[k]))
          << where() << "item " << k << " of the segment\n    got " << describe(g) << "\n  model "
          << describe(*want[k], want_time[k]);
    }
    uscope_item_t extra{};
    const uscope_status_t st = uscope_item_iter_next(it.get(), &extra);
    ASSERT_EQ(st, USCOPE_DONE) << where() << "items after the last cycle of the segment: "
                               << (st == USCOPE_OK ? describe(extra) : why(r));
    ci = cend;
  }
  ASSERT_EQ(ci, t.cycles.size()) << "the segments hold fewer cycles than there were";
}

// Query times: 0 and 1, every segment boundary and its neighbours, exact
// frame times and their neighbours, random times between, and past the end.
std::vector<uint64_t> query_times(Rng &r, const Trace &t, const std::vector<uscope_segment_info_t> &segs) {
  std::vector<uint64_t> q = {0, 1, UINT64_MAX};
  auto near = [&](uint64_t v) {
    q.push_back(v);
    if (v) q.push_back(v - 1);
    if (v != UINT64_MAX) q.push_back(v + 1);
  };
  // Every boundary for short segment lists; a random sample of long ones.
  for (size_t i = 0; i < segs.size(); ++i) {
    if (segs.size() > 40 && !r.chance(40) && i != 0 && i + 1 != segs.size()) continue;
    near(segs[i].time_start_ps);
    near(segs[i].time_end_ps);
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
  size_t items = 0;
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

  uscope_reader_t *raw = nullptr;
  ASSERT_EQ(uscope_reader_open(&raw, path.c_str()), USCOPE_OK)
      << "uscope_reader_open(" << path << "): " << uscope_last_error();
  const ReaderPtr reader(raw);
  uscope_reader_t *r = reader.get();

  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(uscope_reader_info(r, &info), r);
  EXPECT_EQ(info.struct_size, sizeof info);
  EXPECT_EQ(info.complete, 1u);
  EXPECT_EQ(info.checkpoint_interval_ps, t.interval);
  EXPECT_EQ(info.compression, v.compression);
  EXPECT_EQ(info.interleaved, v.frames == USCOPE_FRAMES_V02 ? 1u : 0u);
  EXPECT_EQ(info.last_time_ps, t.cycles.back().time);
  ASSERT_NO_FATAL_FAILURE(check_schema(t.schema, r));
  ASSERT_NO_FATAL_FAILURE(check_strings(strings, r));
  ASSERT_NO_FATAL_FAILURE(check_dut(v, r));
  std::vector<uscope_segment_info_t> segs(info.num_segments);
  for (uint32_t i = 0; i < segs.size(); ++i) ASSERT_OK(uscope_reader_segment(r, &segs[i], i), r);
  // Small intervals and early flushes: there must be many segments, or the
  // case does not test what it says.
  ASSERT_GE(segs.size(), 5u);
  res->segments += segs.size();
  ASSERT_NO_FATAL_FAILURE(check_segment_items(t, v, r, segs, &res->items));

  Rng qr(seed ^ 0x5EED5EED5EED5EEDull);
  const std::vector<uint64_t> qs = query_times(qr, t, segs);
  // Walk the cycles once; at each query time, compare with the model.
  Model model(t.schema);
  size_t ci = 0;
  for (uint64_t q : qs) {
    while (ci < t.cycles.size() && t.cycles[ci].time <= q) {
      for (const Item &it : t.cycles[ci].items) model.apply(it);
      ++ci;
    }
    uscope_state_t *raw_state = nullptr;
    ASSERT_OK(uscope_reader_state_at(r, &raw_state, q), r) << " at " << q;
    const StatePtr state(raw_state);
    ASSERT_NO_FATAL_FAILURE(check_state(t.schema, model.storages(), state.get(), r))
        << "state_at(" << q << "), seed " << seed;
    ++res->queries;
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
    windows.push_back({s.time_start_ps, s.time_end_ps});
    windows.push_back({s.time_start_ps, s.time_start_ps});
    windows.push_back({s.time_end_ps, s.time_end_ps + qr.below(3 * t.interval)});
  }
  for (int i = 0; i < 30; ++i) {
    const uint64_t a = qr.chance(50) ? t.cycles[qr.below(t.cycles.size())].time : qr.below(last + 2);
    const uint64_t span = qr.chance(30) ? 0 : qr.below(qr.chance(80) ? 4 * t.interval : last + 1);
    windows.push_back({a, a + span});
  }
  for (const auto &w : windows) {
    SCOPED_TRACE("events_in_range(" + std::to_string(w.first) + ", " + std::to_string(w.second) + "), seed " +
                 std::to_string(seed));
    std::vector<const ModelEvent *> want;
    for (const auto &e : events)
      if (e.time >= w.first && e.time <= w.second) want.push_back(&e);
    uscope_event_iter_t *raw_it = nullptr;
    ASSERT_OK(uscope_reader_events_in_range(r, &raw_it, w.first, w.second), r);
    const EventIterPtr it(raw_it);
    size_t n = 0;
    for (;; ++n) {
      uscope_event_t got{};
      const uscope_status_t st = uscope_event_iter_next(it.get(), &got);
      if (st == USCOPE_DONE) break;
      ASSERT_OK(st, r) << " at event " << n;
      // The payload is valid until the next call: compare it now.
      ASSERT_LT(n, want.size()) << "an extra event at " << got.time_ps << ", type " << got.event_type_id;
      ASSERT_EQ(got.time_ps, want[n]->time) << "event " << n;
      ASSERT_EQ(got.event_type_id, want[n]->id) << "event " << n << " at " << want[n]->time;
      ASSERT_EQ(got.payload_size, want[n]->payload.size()) << "event " << n << " at " << want[n]->time;
      ASSERT_TRUE(want[n]->payload.empty() ||
                  std::memcmp(got.payload, want[n]->payload.data(), want[n]->payload.size()) == 0)
          << "payload of event " << n << " at " << want[n]->time;
    }
    ASSERT_EQ(n, want.size()) << "events missing";
    ++res->windows;
  }
}

void run_seed(uint64_t seed, const Shape &shape) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng r(seed);
  const Trace t = random_trace(r, shape);
  CaseResult res;
  for (const Variant &v : kVariants) ASSERT_NO_FATAL_FAILURE(check_trace(t, v, seed, &res));
  std::fprintf(stderr, "[ seed %llu ] %zu storages, %zu event types, %zu cycles: %zu segments, %zu items, "
               "%zu state_at, %zu windows over %zu variants\n",
               static_cast<unsigned long long>(seed), t.schema.storages.size(), t.schema.events.size(),
               t.cycles.size(), res.segments, res.items, res.queries, res.windows, std::size(kVariants));
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

#undef ASSERT_OK

}  // namespace
