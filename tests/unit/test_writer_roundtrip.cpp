// Round trips through the C API: write traces with uscope_* calls, decode the
// files with the test decoder (tests/support/trace_file.hpp) and compare with
// what was written: items and frame times for every option, header flags
// (COMPAT 4), segment time ranges and chain (COMPAT 10, 15), checkpoints that
// hold the state at the start of their segment (COMPAT 9), split frames,
// wide frames for storage ids above 255 (COMPAT 18), the string table, the
// checkpoint callback, DROP backpressure and the stats counters.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "format/storage_state.hpp"
#include "format/wire.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

namespace fs = std::filesystem;
using uscope::test::Item;
using uscope::test::TraceFile;

// ── Schema description, shared by the writer and the test's own model ──

struct StorageDesc {
  const char *name;
  uint16_t slots;
  uint16_t flags;
  std::vector<uscope_field_t> fields;
  std::vector<uscope_field_t> props;
};
struct EventDesc {
  const char *name;
  std::vector<uscope_field_t> fields;
};
struct SchemaDesc {
  std::vector<const char *> enum_values;
  std::vector<StorageDesc> storages;
  std::vector<EventDesc> events;
};

unsigned type_size(uint8_t t) { return uscope::wire::field_type_size(t); }
uint64_t width_mask(uint8_t t) {
  const unsigned bits = type_size(t) * 8;
  return bits == 64 ? ~0ull : (1ull << bits) - 1;
}

uscope_schema_t *build_schema(const SchemaDesc &d) {
  uscope_schema_t *s = nullptr;
  EXPECT_EQ(uscope_schema_new(&s), USCOPE_OK);
  uint8_t clk = 0, en = 0;
  uint16_t top = 0, id = 0;
  EXPECT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, "cpu", clk), USCOPE_OK);
  if (!d.enum_values.empty()) {
    EXPECT_EQ(uscope_schema_add_enum(s, &en, "kind",
                                     d.enum_values.data(), static_cast<uint16_t>(d.enum_values.size())),
              USCOPE_OK);
  }
  for (size_t i = 0; i < d.storages.size(); ++i) {
    const StorageDesc &st = d.storages[i];
    EXPECT_EQ(uscope_schema_add_storage(s, &id, st.name, top, st.slots, st.flags,
                                        st.fields.data(), static_cast<uint16_t>(st.fields.size()),
                                        st.props.data(), static_cast<uint16_t>(st.props.size())),
              USCOPE_OK)
        << uscope_last_error();
    EXPECT_EQ(id, i);
  }
  for (size_t i = 0; i < d.events.size(); ++i) {
    const EventDesc &e = d.events[i];
    EXPECT_EQ(uscope_schema_add_event(s, &id, e.name, top,
                                      e.fields.data(), static_cast<uint16_t>(e.fields.size())),
              USCOPE_OK);
    EXPECT_EQ(id, i);
  }
  return s;
}

// The main schema: sparse, dense-with-properties, a counter, a U8 array for
// wrapping ADDs, and a wide array for big cycles.
enum : uint16_t { S_ENTS = 0, S_REGS, S_CTR, S_SMALL, S_WIDE };
enum : uint16_t { E_RETIRE = 0, E_TICK, E_NOTE };
constexpr uint16_t kEntSlots = 16, kRegSlots = 8, kSmallSlots = 4, kWideSlots = 1024;

SchemaDesc main_schema() {
  SchemaDesc d;
  d.enum_values = {"alu", "mem", "br"};
  d.storages = {
      {"ents", kEntSlots, USCOPE_SF_SPARSE,
       {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0},
        {"tag", USCOPE_FT_U16, 0, 0, 0}, {"off", USCOPE_FT_I16, 0, 0, 0}},
       {}},
      {"regs", kRegSlots, 0,
       {{"val", USCOPE_FT_I32, 0, 0, 0}, {"flag", USCOPE_FT_BOOL, 0, 0, 0},
        {"kind", USCOPE_FT_ENUM, 0, 0, 0}},
       {{"head", USCOPE_FT_U8, 0, USCOPE_ROLE_HEAD_PTR, 0},
        {"tail", USCOPE_FT_U8, 0, USCOPE_ROLE_TAIL_PTR, 0},
        {"note", USCOPE_FT_U64, 0, 0, 0}}},
      {"ctr", 1, 0, {{"n", USCOPE_FT_U64, 0, 0, 0}}, {}},
      {"small", kSmallSlots, 0, {{"b", USCOPE_FT_U8, 0, 0, 0}}, {}},
      {"wide", kWideSlots, 0, {{"w", USCOPE_FT_U32, 0, 0, 0}}, {}},
  };
  d.events = {
      {"retire", {{"id", USCOPE_FT_U32, 0, 0, 0}, {"kind", USCOPE_FT_ENUM, 0, 0, 0}}},
      {"tick", {}},
      {"note", {{"str", USCOPE_FT_STRING_REF, 0, 0, 0}}},
  };
  return d;
}

// ── Workload: the calls of each cycle, in call order ──

struct Call {
  enum Kind : uint8_t { Set, Clear, Add, Prop, Event } kind;
  uint16_t sid = 0, slot = 0, field = 0;  // Event: field = event type id
  uint64_t value = 0;
  std::vector<uint8_t> payload;
};
struct Cycle {
  uint64_t time = 0;
  std::vector<Call> calls;
};
using Workload = std::vector<Cycle>;

Call set(uint16_t sid, uint16_t slot, uint16_t field, uint64_t v) { return {Call::Set, sid, slot, field, v, {}}; }
Call clear(uint16_t sid, uint16_t slot) { return {Call::Clear, sid, slot, 0, 0, {}}; }
Call add(uint16_t sid, uint16_t slot, uint16_t field, uint64_t v) { return {Call::Add, sid, slot, field, v, {}}; }
Call prop(uint16_t sid, uint16_t p, uint64_t v) { return {Call::Prop, sid, 0, p, v, {}}; }
Call event(uint16_t id, std::vector<uint8_t> payload) { return {Call::Event, 0, 0, id, 0, std::move(payload)}; }
std::vector<uint8_t> retire_payload(uint32_t id, uint8_t kind) {
  std::vector<uint8_t> p(5);
  std::memcpy(p.data(), &id, 4);
  p[4] = kind;
  return p;
}

uint64_t sext(int64_t v) { return static_cast<uint64_t>(v); }

// A random mix of every call over the main schema: empty cycles, equal
// times, time jumps over several checkpoint intervals, values that force
// wide frames, negative values, wrapping ADDs, properties and events.
Workload random_workload(uint32_t seed, int cycles, uint64_t start = 1000) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return rng() % n; };
  Workload w;
  uint64_t t = start;
  for (int i = 0; i < cycles; ++i) {
    if (i) {
      const uint64_t r = pick(100);
      t += r < 70 ? 1000 : r < 80 ? 0 : r < 90 ? 500 : 25'000 + pick(40'000);
    }
    Cycle c;
    c.time = t;
    const int n = pick(10) == 0 ? 0 : static_cast<int>(pick(12)) + 1;
    for (int k = 0; k < n; ++k) {
      switch (pick(11)) {
        case 0:
        case 1: {
          const uint16_t slot = pick(kEntSlots), f = pick(4);
          const uint64_t v = f == 0   ? static_cast<uint32_t>(rng())
                             : f == 1 ? (pick(2) ? rng() : pick(60'000))
                             : f == 2 ? pick(65'536)
                                      : sext(static_cast<int64_t>(pick(65'536)) - 32'768);
          c.calls.push_back(set(S_ENTS, slot, f, v));
          break;
        }
        case 2:
          c.calls.push_back(clear(S_ENTS, pick(kEntSlots)));
          break;
        case 3: {
          const uint16_t slot = pick(kRegSlots), f = pick(3);
          const uint64_t v = f == 0 ? sext(static_cast<int32_t>(rng())) : f == 1 ? pick(2) : pick(3);
          c.calls.push_back(set(S_REGS, slot, f, v));
          break;
        }
        case 4:
          c.calls.push_back(pick(3) ? add(S_REGS, pick(kRegSlots), 0, sext(static_cast<int64_t>(pick(2001)) - 1000))
                                    : clear(S_REGS, pick(kRegSlots)));
          break;
        case 5:
          c.calls.push_back(add(S_CTR, 0, 0, pick(8) ? pick(100) : ~0ull - pick(10)));
          break;
        case 6:
          c.calls.push_back(add(S_SMALL, pick(kSmallSlots), 0, 200));
          break;
        case 7: {
          const uint16_t p = pick(3);
          c.calls.push_back(prop(S_REGS, p, p == 2 ? rng() : pick(256)));
          break;
        }
        case 8:
          c.calls.push_back(event(E_RETIRE, retire_payload(static_cast<uint32_t>(rng()), pick(3))));
          break;
        case 9:
          c.calls.push_back(event(E_TICK, {}));
          break;
        default:
          c.calls.push_back(set(S_WIDE, pick(kWideSlots), 0, pick(2) ? pick(65'536) : static_cast<uint32_t>(rng())));
          break;
      }
    }
    w.push_back(std::move(c));
  }
  return w;
}

// Issues one cycle through the C API; returns the first failing status.
uscope_status_t issue(uscope_writer_t *w, const Cycle &c) {
  uscope_status_t st = uscope_begin_cycle(w, c.time);
  for (const Call &k : c.calls) {
    if (st != USCOPE_OK) return st;
    switch (k.kind) {
      case Call::Set: st = uscope_slot_set(w, k.sid, k.slot, k.field, k.value); break;
      case Call::Clear: st = uscope_slot_clear(w, k.sid, k.slot); break;
      case Call::Add: st = uscope_slot_add(w, k.sid, k.slot, k.field, k.value); break;
      case Call::Prop: st = uscope_prop_set(w, k.sid, k.field, k.value); break;
      case Call::Event:
        st = uscope_event(w, k.field, k.payload.empty() ? nullptr : k.payload.data(),
                          static_cast<uint32_t>(k.payload.size()));
        break;
    }
  }
  if (st != USCOPE_OK) return st;
  return uscope_end_cycle(w);
}

// ── What the file must contain ──

struct Expected {
  std::vector<uint64_t> frames;  // one per frame, split cycles included
  struct Entry {
    uint64_t time;
    const Call *call;
  };
  std::vector<Entry> items;
  std::vector<uint32_t> frames_per_cycle;
};

// v0.2 keeps call order, one frame per cycle; a cycle of more than 65,535
// items becomes several frames at the same time.
// v0.1 (docs/compat.md): the cycles of one time in one segment are one group,
// written ops first, then events, each in call order - the order the
// reference reader yields - in one frame, or more when the ops or the events
// pass 65,535 (ops frames first). Segments are cut as the encoder cuts them
// (COMPAT 10: after the cycle whose time reaches the next checkpoint time), so
// the model needs the interval. frames_per_cycle gives a group's frames to
// its first cycle and 0 to the others.
Expected expected_of(const Workload &w, bool v01, uint64_t interval_ps = 10'000'000) {
  Expected e;
  if (v01) {
    uint64_t next = interval_ps;
    for (size_t i = 0; i < w.size();) {
      std::vector<const Call *> ops, evs;
      size_t j = i;
      for (;;) {
        for (const Call &c : w[j].calls) (c.kind == Call::Event ? evs : ops).push_back(&c);
        const uint64_t t = w[j++].time;
        const bool cut = t >= next;
        if (cut) next = t + interval_ps;
        if (cut || j == w.size() || w[j].time != w[i].time) break;
      }
      const uint64_t t = w[i].time;
      size_t ops_left = ops.size(), evs_left = evs.size();
      uint32_t frames = 0;
      do {
        ops_left -= std::min<size_t>(ops_left, 65'535);
        if (ops_left == 0) evs_left -= std::min<size_t>(evs_left, 65'535);
        e.frames.push_back(t);
        ++frames;
      } while (ops_left || evs_left);
      for (const Call *c : ops) e.items.push_back({t, c});
      for (const Call *c : evs) e.items.push_back({t, c});
      e.frames_per_cycle.push_back(frames);
      for (size_t k = i + 1; k < j; ++k) e.frames_per_cycle.push_back(0);
      i = j;
    }
    return e;
  }
  for (const Cycle &c : w) {
    const size_t n = c.calls.size();
    uint32_t frames = 0;
    size_t at = 0;
    do {
      const size_t end = std::min(n, at + 65'535);
      e.frames.push_back(c.time);
      ++frames;
      for (size_t i = at; i < end; ++i) e.items.push_back({c.time, &c.calls[i]});
      at = end;
    } while (at < n);
    e.frames_per_cycle.push_back(frames);
  }
  return e;
}

std::string describe(const Item &it) {
  std::ostringstream o;
  if (it.is_event) {
    o << "E t=" << it.time_ps << " id=" << it.event_id << " size=" << it.payload.size();
  } else {
    o << "O t=" << it.time_ps << " a=" << int(it.op.action) << " sid=" << it.op.storage_id
      << " slot=" << it.op.slot << " field=" << it.op.field << " v=" << it.op.value;
  }
  return o.str();
}
std::string describe(const Expected::Entry &e) {
  std::ostringstream o;
  const Call &c = *e.call;
  if (c.kind == Call::Event) {
    o << "E t=" << e.time << " id=" << c.field << " size=" << c.payload.size();
  } else {
    static const uint8_t action[] = {0x01, 0x02, 0x03, 0x04};
    const bool cl = c.kind == Call::Clear;
    o << "O t=" << e.time << " a=" << int(action[c.kind]) << " sid=" << c.sid
      << " slot=" << (c.kind == Call::Prop ? 0 : c.slot) << " field=" << (cl ? 0 : c.field)
      << " v=" << (cl ? 0 : c.value);
  }
  return o.str();
}
bool matches(const Item &it, const Expected::Entry &e) {
  const Call &c = *e.call;
  if (it.time_ps != e.time) return false;
  if (c.kind == Call::Event)
    return it.is_event && it.event_id == c.field && it.payload == c.payload;
  static const uint8_t action[] = {0x01, 0x02, 0x03, 0x04};
  const bool cl = c.kind == Call::Clear;
  return !it.is_event && it.op.action == action[c.kind] && it.op.storage_id == c.sid &&
         it.op.slot == (c.kind == Call::Prop ? 0 : c.slot) && it.op.field == (cl ? 0 : c.field) &&
         it.op.value == (cl ? 0 : c.value);
}

// Every decoded frame and item equals the expectation, in order.
void expect_content(const TraceFile &t, const Expected &e) {
  std::vector<uint64_t> frames;
  std::vector<const Item *> items;
  for (const auto &seg : t.segments) {
    frames.insert(frames.end(), seg.frame_times.begin(), seg.frame_times.end());
    for (const auto &it : seg.items) items.push_back(&it);
  }
  EXPECT_EQ(frames, e.frames);
  ASSERT_EQ(items.size(), e.items.size());
  for (size_t i = 0; i < items.size(); ++i)
    ASSERT_TRUE(matches(*items[i], e.items[i]))
        << "item " << i << ": got " << describe(*items[i]) << ", want " << describe(e.items[i]);
}

// ── An independent model of storage state ──

struct Model {
  struct St {
    bool sparse = false;
    std::vector<uint8_t> ftype, ptype;
    std::vector<uint8_t> valid;
    size_t nf = 0;
    std::vector<uint64_t> data;  // slot-major: data[slot * nf + field]
    uint64_t &at(uint16_t slot, uint16_t f) { return data[slot * nf + f]; }
    uint64_t at(uint16_t slot, uint16_t f) const { return data[slot * nf + f]; }
    void zero(uint16_t slot) { std::fill_n(data.begin() + slot * nf, nf, 0); }
    std::vector<uint64_t> props;
  };
  std::vector<St> st;

  explicit Model(const SchemaDesc &d) {
    for (const auto &s : d.storages) {
      St m;
      m.sparse = s.flags & USCOPE_SF_SPARSE;
      for (const auto &f : s.fields) m.ftype.push_back(f.type);
      for (const auto &f : s.props) m.ptype.push_back(f.type);
      m.valid.assign(s.slots, 0);
      m.nf = s.fields.size();
      m.data.assign(s.slots * m.nf, 0);
      m.props.assign(s.props.size(), 0);
      st.push_back(std::move(m));
    }
  }
  void apply(const Call &c) {
    if (c.kind == Call::Event) return;
    St &s = st[c.sid];
    switch (c.kind) {
      case Call::Set:
        s.at(c.slot, c.field) = c.value & width_mask(s.ftype[c.field]);
        s.valid[c.slot] = 1;
        break;
      case Call::Add:
        s.at(c.slot, c.field) = (s.at(c.slot, c.field) + c.value) & width_mask(s.ftype[c.field]);
        s.valid[c.slot] = 1;
        break;
      case Call::Clear:
        s.valid[c.slot] = 0;
        s.zero(c.slot);
        break;
      case Call::Prop:
        s.props[c.field] = c.value & width_mask(s.ptype[c.field]);
        break;
      default:
        break;
    }
  }
  void apply(const Cycle &c) {
    for (const Call &k : c.calls) apply(k);
  }
};

testing::AssertionResult same_state(const Model &m, const std::vector<uscope::StorageState> &states) {
  if (m.st.size() != states.size()) return testing::AssertionFailure() << "storage count differs";
  for (size_t sid = 0; sid < states.size(); ++sid) {
    const Model::St &s = m.st[sid];
    const uscope::StorageState &d = states[sid];
    for (uint16_t slot = 0; slot < s.valid.size(); ++slot) {
      const bool mv = !s.sparse || s.valid[slot];
      if (mv != d.valid(slot))
        return testing::AssertionFailure() << "storage " << sid << " slot " << slot << ": valid "
                                           << d.valid(slot) << ", model " << mv;
      if (!mv) continue;
      for (uint16_t f = 0; f < s.ftype.size(); ++f)
        if (d.get(slot, f) != s.at(slot, f))
          return testing::AssertionFailure() << "storage " << sid << " slot " << slot << " field " << f
                                             << ": " << d.get(slot, f) << ", model " << s.at(slot, f);
    }
    for (uint16_t p = 0; p < s.props.size(); ++p)
      if (d.prop(p) != s.props[p])
        return testing::AssertionFailure() << "storage " << sid << " property " << p << ": "
                                           << d.prop(p) << ", model " << s.props[p];
  }
  return testing::AssertionSuccess();
}

struct Decoded {
  std::vector<uscope::StorageLayout> layouts;
  std::vector<uscope::StorageState> states;
  explicit Decoded(const uscope::Schema &s) : layouts(uscope::make_layouts(s)) {
    states.reserve(layouts.size());
    for (const auto &L : layouts) states.emplace_back(L);
  }
  void load(const std::vector<uint8_t> &ckpt) {
    uscope::decode_checkpoint(ckpt.data(), ckpt.size(), states);
  }
  void apply(const std::vector<Item> &items) {
    for (const Item &it : items) {
      if (it.is_event) continue;
      uscope::StorageState &st = states.at(it.op.storage_id);
      switch (it.op.action) {
        case 0x01: st.set(it.op.slot, it.op.field, it.op.value); break;
        case 0x02: st.clear(it.op.slot); break;
        case 0x03: st.add(it.op.slot, it.op.field, it.op.value); break;
        case 0x04: st.prop_set(it.op.field, it.op.value); break;
        default: ADD_FAILURE() << "unknown action " << int(it.op.action);
      }
    }
  }
  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> out;
    uscope::encode_checkpoint(states, out);
    return out;
  }
};

// snapshots[n] is the model after the first n cycles (plus any checkpoint
// override made at the boundary that ended cycle n).
//
// Checks COMPAT 9 two ways: each segment's checkpoint equals the model state
// at the segment's start; and (when `replay` is set, i.e. no callback
// overrides) loading checkpoint k and replaying segment k's deltas gives
// exactly the bytes of checkpoint k+1. The last segment replayed must give
// the final state.
void expect_checkpoints(const TraceFile &t, const Expected &e, const std::vector<Model> &snapshots,
                        bool replay) {
  ASSERT_FALSE(t.segments.empty());
  size_t cycle = 0;  // cycles before the current segment
  uint64_t frames_seen = 0;
  for (size_t k = 0; k < t.segments.size(); ++k) {
    const auto &seg = t.segments[k];
    Decoded d(t.schema);
    d.load(seg.checkpoint);
    ASSERT_LT(cycle, snapshots.size());
    EXPECT_TRUE(same_state(snapshots[cycle], d.states)) << "checkpoint of segment " << k;
    // Which cycles does this segment hold? Segments end at a cycle's end.
    frames_seen += seg.frame_times.size();
    uint64_t f = 0;
    size_t c = 0;
    while (c < e.frames_per_cycle.size() && f + e.frames_per_cycle[c] <= frames_seen) f += e.frames_per_cycle[c++];
    ASSERT_EQ(f, frames_seen) << "segment " << k << " ends inside a cycle";
    cycle = c;
    d.apply(seg.items);
    if (replay && k + 1 < t.segments.size()) {
      EXPECT_EQ(d.encode(), t.segments[k + 1].checkpoint)
          << "checkpoint " << k << " + deltas of segment " << k << " != checkpoint " << k + 1;
    }
    if (replay && k + 1 == t.segments.size()) {
      EXPECT_TRUE(same_state(snapshots[cycle], d.states)) << "state after the last segment";
    }
  }
  EXPECT_EQ(cycle, snapshots.size() - 1);
}

std::vector<Model> snapshots_of(const SchemaDesc &d, const Workload &w) {
  std::vector<Model> s;
  s.emplace_back(d);
  for (const Cycle &c : w) {
    Model m = s.back();
    m.apply(c);
    s.push_back(std::move(m));
  }
  return s;
}

uscope_writer_stats_t stats_of(const uscope_writer_t *w) {
  uscope_writer_stats_t st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  EXPECT_EQ(uscope_writer_stats(w, &st), USCOPE_OK);
  return st;
}

// Writes a workload with the given options; returns close()'s status.
uscope_status_t write_trace(const std::string &path, const SchemaDesc &d, const Workload &w,
                            const uscope_writer_options_t *opts) {
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *wr = nullptr;
  const uscope_status_t st = uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, opts);
  uscope_schema_free(s);
  EXPECT_EQ(st, USCOPE_OK) << uscope_last_error();
  if (st != USCOPE_OK) return st;
  for (const Cycle &c : w) {
    const uscope_status_t r = issue(wr, c);
    EXPECT_EQ(r, USCOPE_OK) << uscope_writer_error(wr);
    if (r != USCOPE_OK) break;
  }
  return uscope_writer_close(wr);
}

// The segment cuts of COMPAT 10: a segment ends with the cycle whose time
// reaches the next checkpoint time, which then becomes that time plus the
// interval; the open segment is flushed at close. Returns each time_end.
std::vector<uint64_t> segment_ends(const Workload &w, uint64_t interval) {
  std::vector<uint64_t> ends;
  uint64_t next = interval;
  bool open = false;
  for (const Cycle &c : w) {
    open = true;
    if (c.time >= next) {
      ends.push_back(c.time);
      next = c.time + interval;
      open = false;
    }
  }
  if (open) ends.push_back(w.back().time);
  return ends;
}

constexpr uint64_t F_COMPLETE = 1, F_COMPRESSED = 2, F_HAS_STRINGS = 4, F_INTERLEAVED = 0x80;

// ── Tests ──

TEST(WriterRoundtrip, EveryOptionDecodesToTheSameItems) {
  const SchemaDesc d = main_schema();
  const Workload w = random_workload(1, 1500);
  const std::vector<Model> snaps = snapshots_of(d, w);
  struct Config {
    const char *name;
    uint32_t compression;
    int32_t level;
    uint32_t durability;
    uint32_t frames;
    uint32_t value_check;
    uint64_t flags;
  };
  const Config configs[] = {
      {"lz4 default", USCOPE_COMPRESSION_LZ4, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02, 0, 0x83},
      {"lz4hc 9", USCOPE_COMPRESSION_LZ4, 9, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02, 0, 0x83},
      {"zstd default", USCOPE_COMPRESSION_ZSTD, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02, 0, 0x8B},
      {"zstd 19", USCOPE_COMPRESSION_ZSTD, 19, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02, 0, 0x8B},
      {"none", USCOPE_COMPRESSION_NONE, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02, 0, 0x81},
      {"v0.1 lz4", USCOPE_COMPRESSION_LZ4, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V01, 0, 0x43},
      {"v0.1 zstd", USCOPE_COMPRESSION_ZSTD, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V01, 0, 0x4B},
      {"v0.1 none", USCOPE_COMPRESSION_NONE, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V01, 0, 0x41},
      {"durability none", USCOPE_COMPRESSION_LZ4, 0, USCOPE_DURABILITY_NONE, USCOPE_FRAMES_V02, 0, 0x83},
      {"durability fdatasync", USCOPE_COMPRESSION_LZ4, 0, USCOPE_DURABILITY_FDATASYNC, USCOPE_FRAMES_V02, 0, 0x83},
      {"strict values", USCOPE_COMPRESSION_LZ4, 0, USCOPE_DURABILITY_FLUSH, USCOPE_FRAMES_V02,
       USCOPE_VALUE_CHECK_STRICT, 0x83},
  };
  TempDir dir;
  std::vector<std::string> digests;
  for (const Config &c : configs) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(std::string(c.name) + ".usc");
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.compression = c.compression;
    o.compression_level = c.level;
    o.durability = c.durability;
    o.frame_format = c.frames;
    o.value_check = c.value_check;
    o.checkpoint_interval_ps = 20'000;
    ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK) << uscope_last_error();
    const TraceFile t = uscope::test::read_trace_file(path);
    EXPECT_EQ(t.header.flags, c.flags);
    EXPECT_EQ(t.header.version_major, 0);
    EXPECT_EQ(t.header.version_minor, 3);
    EXPECT_GT(t.segments.size(), 20u);
    const Expected e = expected_of(w, c.frames == USCOPE_FRAMES_V01, o.checkpoint_interval_ps);
    ASSERT_NO_FATAL_FAILURE(expect_content(t, e));
    ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snaps, true));
    // Same content whatever the options: the conformance digest agrees too
    // between configurations with the same frame layout.
    std::vector<Item> all;
    for (const auto &seg : t.segments) all.insert(all.end(), seg.items.begin(), seg.items.end());
    digests.push_back((c.frames == USCOPE_FRAMES_V01 ? "v01:" : "v02:") +
                      uscope::test::hex16(uscope::test::items_digest(all, 0xcbf29ce484222325ull)));
  }
  for (size_t i = 1; i < digests.size(); ++i) {
    const bool v01 = digests[i].rfind("v01:", 0) == 0;
    EXPECT_EQ(digests[i], v01 ? digests[5] : digests[0]) << configs[i].name;
  }
}

// The encoder follows its position in the ring incrementally (no division
// per record): a small ring of an odd size, which wraps hundreds of times
// with records padded at every end, gives the very file a large one does.
TEST(WriterRoundtrip, SmallOddQueueWrapsAndWritesTheSameFile) {
  const SchemaDesc d = main_schema();
  const Workload w = random_workload(3, 30000);
  TempDir dir;
  std::vector<std::vector<uint8_t>> files;
  for (uint64_t q : {uint64_t{0}, uint64_t{64 * 1024 + 13}, uint64_t{100'003}}) {
    SCOPED_TRACE(q);
    const std::string path = dir.file("q" + std::to_string(q) + ".usc");
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.queue_bytes = q;
    o.checkpoint_interval_ps = 20'000;
    ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK) << uscope_last_error();
    files.push_back(uscope::test::read_bytes(path));
  }
  // The workload is many times the small rings' size.
  uint64_t raw = 0;
  for (const auto &seg : uscope::test::read_trace_file(dir.file("q0.usc")).segments)
    raw += seg.header.deltas_raw_size;
  EXPECT_GT(raw, 20u * 100'003);
  EXPECT_EQ(files[1], files[0]);
  EXPECT_EQ(files[2], files[0]);
}

TEST(WriterRoundtrip, HeaderFlagsOfDefaultTrace) {
  const SchemaDesc d = main_schema();
  const Workload w = random_workload(2, 50);
  TempDir dir;
  const std::string plain = dir.file("plain.usc"), strings = dir.file("strings.usc");

  // While open the header says 0x82 (compressed + interleaved, COMPAT 4).
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *wr = nullptr;
  ASSERT_EQ(uscope_writer_open(&wr, plain.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  for (const Cycle &c : w) ASSERT_EQ(issue(wr, c), USCOPE_OK);
  {
    const auto bytes = uscope::test::read_bytes(plain);
    ASSERT_GE(bytes.size(), 48u);
    EXPECT_EQ(uscope::wire::get_u64(bytes.data() + 8), 0x82u);
    EXPECT_EQ(uscope::wire::get_u64(bytes.data() + 16), 0u);  // total_time_ps: 0 until close
  }
  ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK);
  TraceFile t = uscope::test::read_trace_file(plain);
  EXPECT_EQ(t.header.flags, 0x83u);
  EXPECT_EQ(t.header.flags, F_COMPLETE | F_COMPRESSED | F_INTERLEAVED);
  EXPECT_TRUE(t.strings.empty());
  EXPECT_EQ(t.header.total_time_ps, w.back().time);  // COMPAT 11

  // With a string table: 0x87.
  ASSERT_EQ(uscope_writer_open(&wr, strings.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uint32_t idx = 99;
  ASSERT_EQ(uscope_string_insert(wr, &idx, "hello"), USCOPE_OK);
  EXPECT_EQ(idx, 0u);
  for (const Cycle &c : w) ASSERT_EQ(issue(wr, c), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK);
  t = uscope::test::read_trace_file(strings);
  EXPECT_EQ(t.header.flags, 0x87u);
  EXPECT_EQ(t.header.flags, F_COMPLETE | F_COMPRESSED | F_HAS_STRINGS | F_INTERLEAVED);
  EXPECT_EQ(t.strings, std::vector<std::string>{"hello"});
  uscope_schema_free(s);
}

TEST(WriterRoundtrip, ZstdSetsMethodBits) {
  const SchemaDesc d = main_schema();
  const Workload w = random_workload(3, 100);
  TempDir dir;
  const std::string path = dir.file("z.usc");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.compression = USCOPE_COMPRESSION_ZSTD;
  ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK);
  const TraceFile t = uscope::test::read_trace_file(path);
  EXPECT_EQ((t.header.flags >> 3) & 7, 1u);  // F_COMP_METHOD = ZSTD
  EXPECT_TRUE(t.header.flags & F_COMPRESSED);
  ASSERT_NO_FATAL_FAILURE(expect_content(t, expected_of(w, false)));
}

TEST(WriterRoundtrip, SegmentTimeRangesChainAndTable) {
  const SchemaDesc d = main_schema();
  // Cycles every 1000 ps from 5000 ps (later than 0), every 7th empty, with
  // one jump over several checkpoint intervals and a few equal times.
  Workload w;
  uint64_t t = 5000;
  for (int i = 0; i < 300; ++i) {
    Cycle c;
    c.time = t;
    if (i % 7) c.calls.push_back(add(S_CTR, 0, 0, 1));
    if (i % 5 == 0) c.calls.push_back(event(E_TICK, {}));
    w.push_back(c);
    t += i == 150 ? 47'500 : i % 50 == 3 ? 0 : 1000;
  }
  const uint64_t interval = 10'000;
  TempDir dir;
  const std::string path = dir.file("seg.usc");
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = interval;
  ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK);
  const TraceFile tf = uscope::test::read_trace_file(path);
  EXPECT_EQ(tf.checkpoint_interval_ps, interval);

  const std::vector<uint64_t> ends = segment_ends(w, interval);  // COMPAT 10
  ASSERT_EQ(tf.segments.size(), ends.size());
  EXPECT_EQ(tf.header.num_segments, ends.size());
  EXPECT_EQ(tf.header.total_time_ps, w.back().time);
  ASSERT_EQ(tf.segment_table.size(), ends.size());
  uint64_t start = 0;  // segment 0 starts at 0 even though the first cycle is at 5000
  size_t frame_index = 0;
  const Expected e = expected_of(w, false);
  for (size_t k = 0; k < tf.segments.size(); ++k) {
    const auto &seg = tf.segments[k];
    const auto &h = seg.header;
    SCOPED_TRACE("segment " + std::to_string(k));
    EXPECT_EQ(h.time_start_ps, start);
    EXPECT_EQ(h.time_end_ps, ends[k]);
    ASSERT_FALSE(seg.frame_times.empty());
    EXPECT_EQ(seg.frame_times.back(), h.time_end_ps);  // inclusive end: the last frame's time
    EXPECT_GE(seg.frame_times.front(), h.time_start_ps);
    EXPECT_EQ(h.prev_segment_offset, k ? tf.segments[k - 1].offset : 0u);
    EXPECT_EQ(h.flags, 0u);
    EXPECT_EQ(h.reserved, 0u);
    EXPECT_EQ(h.num_frames, seg.frame_times.size());
    EXPECT_EQ(h.deltas_raw_size, seg.deltas.size());
    EXPECT_EQ(h.checkpoint_size, seg.checkpoint.size());
    uint32_t active = 0;
    for (size_t f = 0; f < seg.frame_times.size(); ++f, ++frame_index)
      active += !w[frame_index].calls.empty();
    EXPECT_EQ(h.num_frames_active, active);
    EXPECT_EQ(tf.segment_table[k].offset, seg.offset);
    EXPECT_EQ(tf.segment_table[k].time_start_ps, h.time_start_ps);
    EXPECT_EQ(tf.segment_table[k].time_end_ps, h.time_end_ps);
    if (k + 1 < tf.segments.size()) {
      // The next segment starts at this one's end, and follows it in the file.
      EXPECT_EQ(seg.offset + 56 + h.checkpoint_size + h.deltas_compressed_size, tf.segments[k + 1].offset);
    }
    start = h.time_end_ps;
  }
  EXPECT_EQ(tf.segments.front().offset, tf.header.preamble_end);
  EXPECT_EQ(tf.header.tail_offset, tf.segments.back().offset);
  EXPECT_EQ(tf.header.preamble_end % 8, 0u);
  EXPECT_EQ(tf.header.section_table_offset % 8, 0u);
  // COMPAT 7: STRINGS (absent here), SEGMENTS, COUNTER_SUMMARY.
  ASSERT_EQ(tf.sections.size(), 2u);
  EXPECT_EQ(tf.sections[0].type, 0x0003);
  EXPECT_EQ(tf.sections[1].type, 0x0010);
  ASSERT_NO_FATAL_FAILURE(expect_content(tf, e));
}

TEST(WriterRoundtrip, CheckpointsHoldTheStateAtSegmentStart) {
  const SchemaDesc d = main_schema();
  const Workload w = random_workload(4, 3000);
  TempDir dir;
  for (uint32_t frames : {USCOPE_FRAMES_V02, USCOPE_FRAMES_V01}) {
    const std::string path = dir.file("ck" + std::to_string(frames) + ".usc");
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.checkpoint_interval_ps = 7'000;
    o.frame_format = frames;
    ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK);
    const TraceFile t = uscope::test::read_trace_file(path);
    EXPECT_GT(t.segments.size(), 100u);
    const Expected e = expected_of(w, frames == USCOPE_FRAMES_V01, o.checkpoint_interval_ps);
    const std::vector<Model> snaps = snapshots_of(d, w);
    // The first checkpoint is the empty state; the counter's ADDs are not
    // double-counted (the reference Rust writer's bug, COMPAT 9).
    Decoded first(t.schema);
    first.load(t.segments[0].checkpoint);
    EXPECT_TRUE(same_state(snaps[0], first.states));
    ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snaps, true));
    // Sanity: the workload really exercised every storage.
    const Model &fin = snaps.back();
    EXPECT_NE(fin.st[S_CTR].at(0, 0), 0u);
    EXPECT_NE(fin.st[S_REGS].props[2], 0u);
  }
}

TEST(WriterRoundtrip, CycleOfSeventyThousandOpsIsSplitNotLost) {
  const SchemaDesc d = main_schema();
  Workload w;
  w.push_back({1000, {set(S_CTR, 0, 0, 1)}});
  Cycle big;
  big.time = 2000;
  for (uint32_t i = 0; i < 70'000; ++i) {
    big.calls.push_back(set(S_WIDE, i % kWideSlots, 0, i % 3 ? i : 0xFFFFFFFFu - i));
    if (i % 20'000 == 0) big.calls.push_back(event(E_RETIRE, retire_payload(i, 1)));
  }
  w.push_back(big);
  w.push_back({3000, {add(S_CTR, 0, 0, 2)}});
  TempDir dir;
  for (uint32_t frames : {USCOPE_FRAMES_V02, USCOPE_FRAMES_V01}) {
    SCOPED_TRACE(frames == USCOPE_FRAMES_V01 ? "v0.1" : "v0.2");
    const std::string path = dir.file("big" + std::to_string(frames) + ".usc");
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.frame_format = frames;
    o.queue_bytes = 64 * 1024;  // the cycle is larger than the queue as well
    uscope_schema_t *s = build_schema(d);
    uscope_writer_t *wr = nullptr;
    ASSERT_EQ(uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
    uscope_schema_free(s);
    for (const Cycle &c : w) ASSERT_EQ(issue(wr, c), USCOPE_OK) << uscope_writer_error(wr);
    const uscope_writer_stats_t st = stats_of(wr);
    EXPECT_EQ(st.ops, 70'002u);
    EXPECT_EQ(st.events, 4u);
    EXPECT_GE(st.stalls, 1u);  // 1.1 MB through a 256 KiB queue
    ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK);
    const TraceFile t = uscope::test::read_trace_file(path);
    const Expected e = expected_of(w, frames == USCOPE_FRAMES_V01);
    EXPECT_EQ(e.frames, (std::vector<uint64_t>{1000, 2000, 2000, 3000}));
    ASSERT_NO_FATAL_FAILURE(expect_content(t, e));
    ASSERT_EQ(t.segments.size(), 1u);
    EXPECT_EQ(t.segments[0].header.num_frames, 4u);
    EXPECT_EQ(t.segments[0].header.num_frames_active, 4u);
    ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snapshots_of(d, w), true));
  }
}

// Walks a delta blob by hand and returns, per frame, the tags of its ops
// (v0.2: 0x01 wide / 0x02 compact) or its op_format (v0.1: 0 wide / 1 compact).
std::vector<std::vector<uint8_t>> op_forms(const std::vector<uint8_t> &b, bool v01) {
  std::vector<std::vector<uint8_t>> out;
  size_t p = 0;
  while (p < b.size()) {
    uint64_t dt;
    const size_t k = uscope::wire::leb128_decode(b.data() + p, b.size() - p, &dt);
    if (!k) {
      ADD_FAILURE() << "bad LEB128";
      return out;
    }
    p += k;
    std::vector<uint8_t> forms;
    if (v01) {
      const uint8_t fmt = b[p];
      const uint16_t ops = uscope::wire::get_u16(&b[p + 2]), evs = uscope::wire::get_u16(&b[p + 4]);
      p += 6;
      for (int i = 0; i < ops; ++i) forms.push_back(fmt);
      p += ops * (fmt ? 8 : 16);
      for (int i = 0; i < evs; ++i) p += 8 + uscope::wire::get_u32(&b[p + 4]);
    } else {
      const uint16_t n = uscope::wire::get_u16(&b[p]);
      p += 2;
      for (int i = 0; i < n; ++i) {
        const uint8_t tag = b[p];
        if (tag == 0x03) {
          p += 8 + uscope::wire::get_u32(&b[p + 4]);
        } else {
          forms.push_back(tag);
          p += tag == 0x01 ? 16 : 9;
        }
      }
    }
    out.push_back(forms);
  }
  return out;
}

TEST(WriterRoundtrip, StorageIdsAbove255ForceWideFrames) {
  SchemaDesc d;
  // Distinct names: the builder refuses a repeated one (USCOPE_ERR_DUPLICATE).
  static std::vector<std::string> names;
  for (int i = static_cast<int>(names.size()); i < 300; ++i) names.push_back("s" + std::to_string(i));
  for (int i = 0; i < 300; ++i)
    d.storages.push_back({names[i].c_str(), 1, 0, {{"v", USCOPE_FT_U32, 0, 0, 0}}, {}});
  const Workload w = {
      {1000, {set(299, 0, 0, 5)}},                       // id > 255: wide
      {2000, {set(3, 0, 0, 5), set(255, 0, 0, 65'535)}},  // all fit: compact
      {3000, {set(3, 0, 0, 70'000)}},                    // value > 65535: wide
      {4000, {set(3, 0, 0, 1), add(256, 0, 0, 1)}},      // one op forces the whole frame wide
      {5000, {clear(300 - 1, 0)}},                       // even a CLEAR
      {6000, {set(3, 0, 0, sext(-1))}},                  // sign-extended negative: wide (COMPAT 13)
  };
  const std::vector<std::vector<uint8_t>> want02 = {{1}, {2, 2}, {1}, {1, 1}, {1}, {1}};
  const std::vector<std::vector<uint8_t>> want01 = {{0}, {1, 1}, {0}, {0, 0}, {0}, {0}};
  TempDir dir;
  for (uint32_t frames : {USCOPE_FRAMES_V02, USCOPE_FRAMES_V01}) {
    SCOPED_TRACE(frames == USCOPE_FRAMES_V01 ? "v0.1" : "v0.2");
    const std::string path = dir.file("ids" + std::to_string(frames) + ".usc");
    uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
    o.frame_format = frames;
    ASSERT_EQ(write_trace(path, d, w, &o), USCOPE_OK);
    const TraceFile t = uscope::test::read_trace_file(path);
    ASSERT_EQ(t.schema.storages.size(), 300u);
    ASSERT_EQ(t.segments.size(), 1u);
    const Expected e = expected_of(w, frames == USCOPE_FRAMES_V01);
    ASSERT_NO_FATAL_FAILURE(expect_content(t, e));
    EXPECT_EQ(op_forms(t.segments[0].deltas, frames == USCOPE_FRAMES_V01),
              frames == USCOPE_FRAMES_V01 ? want01 : want02);
    ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snapshots_of(d, w), true));
  }
}

TEST(WriterRoundtrip, StringInsertDedupsIntoTheStringTable) {
  const SchemaDesc d = main_schema();
  TempDir dir;
  const std::string path = dir.file("str.usc");
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  uint32_t a = 9, b = 9, a2 = 9, g = 9, empty = 9, b2 = 9;
  ASSERT_EQ(uscope_string_insert(w, &a, "alpha"), USCOPE_OK);
  ASSERT_EQ(uscope_string_insert(w, &b, "beta"), USCOPE_OK);
  ASSERT_EQ(uscope_string_insert(w, &a2, "alpha"), USCOPE_OK);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(a2, 0u);
  const std::string utf8 = "\xC2\xB5Scope";  // "µScope"
  uint32_t u = 9;
  for (uint64_t t = 1000; t <= 3000; t += 1000) {
    ASSERT_EQ(uscope_begin_cycle(w, t), USCOPE_OK);
    // Inside a cycle too; the index goes into an FT_STRING_REF payload.
    ASSERT_EQ(uscope_string_insert(w, &g, "gamma"), USCOPE_OK);
    ASSERT_EQ(uscope_string_insert(w, &empty, ""), USCOPE_OK);
    ASSERT_EQ(uscope_string_insert(w, &u, utf8.c_str()), USCOPE_OK);
    ASSERT_EQ(uscope_string_insert(w, &b2, "beta"), USCOPE_OK);
    ASSERT_EQ(uscope_event(w, E_NOTE, &g, 4), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  EXPECT_EQ(g, 2u);
  EXPECT_EQ(empty, 3u);
  EXPECT_EQ(u, 4u);
  EXPECT_EQ(b2, 1u);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  const TraceFile t = uscope::test::read_trace_file(path);
  EXPECT_EQ(t.strings, (std::vector<std::string>{"alpha", "beta", "gamma", "", utf8}));
  EXPECT_EQ(t.header.flags, 0x87u);
  ASSERT_EQ(t.sections.size(), 3u);  // COMPAT 7 order
  EXPECT_EQ(t.sections[0].type, 0x0002);
  EXPECT_EQ(t.sections[1].type, 0x0003);
  EXPECT_EQ(t.sections[2].type, 0x0010);
  size_t notes = 0;
  for (const auto &seg : t.segments)
    for (const auto &it : seg.items)
      if (it.is_event && it.event_id == E_NOTE) {
        ++notes;
        EXPECT_EQ(uscope::wire::get_u32(it.payload.data()), 2u);
      }
  EXPECT_EQ(notes, 3u);
}

// The callback supplies ents and regs at every boundary; ctr keeps its
// tracked state. Each override must be the next segment's checkpoint for
// its storage, and later deltas apply on top of it.
struct Override {
  uint64_t time;
  std::vector<uint8_t> ents_mask;
  std::vector<uint8_t> ents_data;  // packed valid slots: id u32, pc u64, tag u16, off i16
  std::vector<uint8_t> regs_data;  // 8 slots: val i32, flag bool, kind enum
};
struct CallbackLog {
  std::vector<Override> overrides;
  std::vector<uscope_status_t> status;
};

Override make_override(uint64_t t) {
  Override o;
  o.time = t;
  const uint32_t k = static_cast<uint32_t>(t / 10'000);
  o.ents_mask.assign(2, 0);
  for (uint16_t slot : {static_cast<uint16_t>(k % kEntSlots), static_cast<uint16_t>((k + 5) % kEntSlots)}) {
    o.ents_mask[slot / 8] |= 1u << (slot % 8);
  }
  for (uint16_t slot = 0; slot < kEntSlots; ++slot) {
    if (!(o.ents_mask[slot / 8] >> (slot % 8) & 1)) continue;
    uint8_t rec[16];
    uscope::wire::put_u32(rec, 1000 * k + slot);
    uscope::wire::put_u64(rec + 4, 0x1234'5678'0000'0000ull + slot);
    uscope::wire::put_u16(rec + 12, 0xBEEF);
    uscope::wire::put_u16(rec + 14, static_cast<uint16_t>(-static_cast<int16_t>(k)));
    o.ents_data.insert(o.ents_data.end(), rec, rec + 16);
  }
  for (uint16_t slot = 0; slot < kRegSlots; ++slot) {
    uint8_t rec[6];
    uscope::wire::put_u32(rec, static_cast<uint32_t>(-static_cast<int32_t>(k * 100 + slot)));
    rec[4] = slot & 1;
    rec[5] = slot % 3;
    o.regs_data.insert(o.regs_data.end(), rec, rec + 6);
  }
  return o;
}

void apply_override(Model &m, const Override &o) {
  Model::St &e = m.st[S_ENTS];
  size_t at = 0;
  for (uint16_t slot = 0; slot < kEntSlots; ++slot) {
    e.zero(slot);
    e.valid[slot] = o.ents_mask[slot / 8] >> (slot % 8) & 1;
    if (!e.valid[slot]) continue;
    const uint8_t *r = &o.ents_data[at];
    e.at(slot, 0) = uscope::wire::get_u32(r);
    e.at(slot, 1) = uscope::wire::get_u64(r + 4);
    e.at(slot, 2) = uscope::wire::get_u16(r + 12);
    e.at(slot, 3) = uscope::wire::get_u16(r + 14);
    at += 16;
  }
  Model::St &g = m.st[S_REGS];
  for (uint16_t slot = 0; slot < kRegSlots; ++slot) {
    const uint8_t *r = &o.regs_data[slot * 6];
    g.at(slot, 0) = uscope::wire::get_u32(r);
    g.at(slot, 1) = r[4];
    g.at(slot, 2) = r[5];
  }
}

void override_callback(uscope_writer_t *w, uint64_t time_ps, void *ud) {
  auto *log = static_cast<CallbackLog *>(ud);
  log->overrides.push_back(make_override(time_ps));
  const Override &o = log->overrides.back();
  log->status.push_back(uscope_checkpoint_storage(w, S_ENTS, o.ents_mask.data(), o.ents_data.data(),
                                                  static_cast<uint32_t>(o.ents_data.size() / 16)));
  log->status.push_back(uscope_checkpoint_storage(w, S_REGS, nullptr, o.regs_data.data(), kRegSlots));
}

TEST(WriterRoundtrip, CheckpointCallbackReplacesTheNextCheckpoint) {
  const SchemaDesc d = main_schema();
  Workload w = random_workload(5, 400);
  for (size_t i = 0; i < w.size(); ++i) w[i].time = 1000 * (i + 1);  // 1000 .. 400,000 ps
  const uint64_t interval = 10'000;
  TempDir dir;
  const std::string path = dir.file("cb.usc");
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *wr = nullptr;
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = interval;
  ASSERT_EQ(uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  uscope_schema_free(s);
  CallbackLog log;
  ASSERT_EQ(uscope_set_checkpoint_callback(wr, override_callback, &log), USCOPE_OK);
  std::vector<Model> snaps;
  snaps.emplace_back(d);
  size_t calls_before = 0;
  for (const Cycle &c : w) {
    ASSERT_EQ(issue(wr, c), USCOPE_OK) << uscope_writer_error(wr);
    Model m = snaps.back();
    m.apply(c);
    if (log.overrides.size() != calls_before) {  // the callback ran in this end_cycle
      ASSERT_EQ(log.overrides.size(), calls_before + 1);
      EXPECT_EQ(log.overrides.back().time, c.time);
      apply_override(m, log.overrides.back());
      calls_before = log.overrides.size();
    }
    snaps.push_back(std::move(m));
  }
  // Removing the callback stops the calls.
  ASSERT_EQ(uscope_set_checkpoint_callback(wr, nullptr, nullptr), USCOPE_OK);
  ASSERT_EQ(issue(wr, {w.back().time + 20'000, {add(S_CTR, 0, 0, 1)}}), USCOPE_OK);
  Workload all = w;
  all.push_back({w.back().time + 20'000, {add(S_CTR, 0, 0, 1)}});
  {
    Model m = snaps.back();
    m.apply(all.back());
    snaps.push_back(std::move(m));
  }
  ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK) << uscope_last_error();

  // One call per boundary: 10,000, 20,000, ..., 400,000 ps.
  ASSERT_EQ(log.overrides.size(), 40u);
  for (size_t i = 0; i < log.overrides.size(); ++i) EXPECT_EQ(log.overrides[i].time, 10'000 * (i + 1));
  for (uscope_status_t st : log.status) EXPECT_EQ(st, USCOPE_OK);

  const TraceFile t = uscope::test::read_trace_file(path);
  ASSERT_EQ(t.segments.size(), 41u);
  const Expected e = expected_of(all, false);
  ASSERT_NO_FATAL_FAILURE(expect_content(t, e));
  // Every checkpoint equals the model, which took each override at its
  // boundary: checkpoint k+1 holds override k for ents/regs and the tracked
  // state for everything else.
  ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snaps, false));
  // And directly: segment k+1's ents block is exactly override k.
  for (size_t k = 0; k + 1 < t.segments.size(); ++k) {
    Decoded dk(t.schema);
    dk.load(t.segments[k + 1].checkpoint);
    const Override &ov = log.overrides[k];
    for (uint16_t slot = 0; slot < kEntSlots; ++slot)
      EXPECT_EQ(dk.states[S_ENTS].valid(slot), bool(ov.ents_mask[slot / 8] >> (slot % 8) & 1));
    for (uint16_t slot = 0; slot < kRegSlots; ++slot)
      EXPECT_EQ(dk.states[S_REGS].get(slot, 0), uscope::wire::get_u32(&ov.regs_data[slot * 6]));
  }
}

TEST(WriterRoundtrip, DropBackpressureCountsAndKeepsTheFileComplete) {
  const SchemaDesc d = main_schema();
  TempDir dir;
  const std::string path = dir.file("drop.usc");
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *wr = nullptr;
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.backpressure = USCOPE_BACKPRESSURE_DROP;
  o.queue_bytes = 64 * 1024;
  o.checkpoint_interval_ps = 5'000;
  ASSERT_EQ(uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  uscope_schema_free(s);
  const uint64_t cap = stats_of(wr).queue_bytes;
  ASSERT_GE(cap, 64u * 1024);
  // Each cycle fills ~90% of the queue in one go and publishes only at its
  // end, so the next begin_cycle finds less than the 25% headroom free unless
  // the encoder has already consumed and encoded the whole cycle in the few
  // nanoseconds between: most following cycles are dropped.
  const uint32_t ops = static_cast<uint32_t>(cap * 9 / 10 / 16);
  Workload w;
  for (uint32_t i = 0; i < 40; ++i) {
    Cycle c;
    c.time = 1000 * (i + 1);
    c.calls.push_back(event(E_RETIRE, retire_payload(i, 0)));
    for (uint32_t k = 0; k < ops; ++k) c.calls.push_back(set(S_WIDE, k % kWideSlots, 0, i * 1'000'000 + k));
    w.push_back(std::move(c));
  }
  Workload recorded;
  uint64_t dropped = 0;
  for (const Cycle &c : w) {
    ASSERT_EQ(issue(wr, c), USCOPE_OK);  // a dropped cycle's calls succeed as no-ops
    const uscope_writer_stats_t st = stats_of(wr);
    if (st.dropped_cycles == dropped) recorded.push_back(c);
    dropped = st.dropped_cycles;
  }
  const uscope_writer_stats_t st = stats_of(wr);
  EXPECT_GT(st.dropped_cycles, 0u) << "no cycle was dropped";
  EXPECT_GE(recorded.size(), 1u);
  EXPECT_EQ(st.cycles + st.dropped_cycles, w.size());
  EXPECT_EQ(st.cycles, recorded.size());
  EXPECT_EQ(st.dropped_ops, st.dropped_cycles * ops);
  EXPECT_EQ(st.dropped_events, st.dropped_cycles);
  EXPECT_EQ(st.ops, recorded.size() * ops);
  EXPECT_EQ(st.events, recorded.size());
  EXPECT_EQ(st.sticky_status, USCOPE_OK);  // dropping is not a misuse
  EXPECT_EQ(st.errors, 0u);
  EXPECT_EQ(uscope_writer_close(wr), USCOPE_ERR_DATA_DROPPED);
  EXPECT_NE(std::strstr(uscope_last_error(), "were dropped by the DROP backpressure policy"), nullptr)
      << uscope_last_error();

  // The file is finalized and holds exactly the recorded cycles, each whole.
  const TraceFile t = uscope::test::read_trace_file(path);
  EXPECT_TRUE(t.header.flags & F_COMPLETE);
  EXPECT_EQ(t.header.total_time_ps, recorded.back().time);
  const Expected e = expected_of(recorded, false);
  ASSERT_NO_FATAL_FAILURE(expect_content(t, e));
  ASSERT_NO_FATAL_FAILURE(expect_checkpoints(t, e, snapshots_of(d, recorded), true));
}

TEST(WriterRoundtrip, StatsMatchWhatWasWritten) {
  const SchemaDesc d = main_schema();
  Workload w = random_workload(6, 2000);
  const uint64_t interval = 10'000;
  // End on a boundary, so that every segment is committed before close and
  // the encoder-side counters can be read final.
  {
    uint64_t next = interval;
    for (const Cycle &c : w)
      if (c.time >= next) next = c.time + interval;
    w.push_back({next, {add(S_CTR, 0, 0, 1)}});
  }
  uint64_t n_ops = 0, n_events = 0, n_segments = 0;
  for (const Cycle &c : w)
    for (const Call &k : c.calls) (k.kind == Call::Event ? n_events : n_ops)++;
  n_segments = segment_ends(w, interval).size();
  TempDir dir;
  const std::string path = dir.file("stats.usc");
  uscope_schema_t *s = build_schema(d);
  uscope_writer_t *wr = nullptr;
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = interval;
  ASSERT_EQ(uscope_writer_open(&wr, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
  uscope_schema_free(s);
  const uscope_writer_stats_t st0 = stats_of(wr);
  EXPECT_EQ(st0.struct_size, sizeof(uscope_writer_stats_t));
  EXPECT_EQ(st0.queue_bytes, 8ull << 20);
  EXPECT_EQ(st0.cycles, 0u);
  EXPECT_EQ(st0.segments, 0u);
  EXPECT_GT(st0.file_bytes, 48u);  // header and preamble are written at open
  for (const Cycle &c : w) ASSERT_EQ(issue(wr, c), USCOPE_OK);

  // Wait for the encoder to commit the last segment, then let its other
  // counters (stored right after) settle.
  uscope_writer_stats_t st = stats_of(wr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (st.segments < n_segments && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    st = stats_of(wr);
  }
  ASSERT_EQ(st.segments, n_segments) << "the encoder did not commit every segment";
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uscope_writer_stats_t again = stats_of(wr);
    if (std::memcmp(&again, &st, sizeof st) == 0) break;
    st = again;
  }
  // An older caller's shorter struct gets only its own bytes.
  struct {
    uscope_writer_stats_t s;
    uint8_t tail[8];
  } old;
  std::memset(&old, 0xAB, sizeof old);
  const uint32_t old_size = offsetof(uscope_writer_stats_t, frames);
  old.s.struct_size = old_size;
  ASSERT_EQ(uscope_writer_stats(wr, &old.s), USCOPE_OK);
  EXPECT_EQ(old.s.struct_size, old_size);
  EXPECT_EQ(old.s.cycles, w.size());
  EXPECT_EQ(old.s.events, n_events);
  const uint8_t *raw = reinterpret_cast<const uint8_t *>(&old);
  for (size_t i = old_size; i < sizeof old; ++i) ASSERT_EQ(raw[i], 0xAB) << "byte " << i << " written";
  ASSERT_EQ(uscope_writer_close(wr), USCOPE_OK);

  const TraceFile t = uscope::test::read_trace_file(path);
  ASSERT_EQ(t.segments.size(), n_segments);
  uint64_t frames = 0, raw_bytes = 0, comp = 0, ckpt = 0;
  for (const auto &seg : t.segments) {
    frames += seg.header.num_frames;
    raw_bytes += seg.header.deltas_raw_size;
    comp += seg.header.deltas_compressed_size;
    ckpt += seg.header.checkpoint_size;
  }
  const auto &last = t.segments.back();
  EXPECT_EQ(st.sticky_status, USCOPE_OK);
  EXPECT_EQ(st.cycles, w.size());
  EXPECT_EQ(st.ops, n_ops);
  EXPECT_EQ(st.events, n_events);
  EXPECT_EQ(st.frames, frames);
  EXPECT_EQ(st.frames, w.size());  // no cycle was split
  EXPECT_EQ(st.segments, t.segments.size());
  EXPECT_EQ(st.raw_bytes, raw_bytes);
  EXPECT_EQ(st.compressed_bytes, comp);
  EXPECT_LT(st.compressed_bytes, st.raw_bytes);
  EXPECT_EQ(st.checkpoint_bytes, ckpt);
  EXPECT_EQ(st.file_bytes, last.offset + 56 + last.header.checkpoint_size + last.header.deltas_compressed_size);
  EXPECT_EQ(st.errors, 0u);
  EXPECT_EQ(st.dropped_cycles, 0u);
  EXPECT_EQ(st.dropped_ops, 0u);
  EXPECT_EQ(st.dropped_events, 0u);
  ASSERT_NO_FATAL_FAILURE(expect_content(t, expected_of(w, false)));
}

}  // namespace
