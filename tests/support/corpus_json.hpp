// Comparisons of our decoded structures with the reference reader's JSON
// dumps and probes (../shared/conformance/uscope/*.json), shared by the
// conformance suites.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "format/storage_state.hpp"
#include "format/tsum.hpp"

namespace uscope::test {

inline uint64_t ju64(simdjson::dom::element e) { return uint64_t(e); }
inline std::string jstr(simdjson::dom::element e) { return std::string(std::string_view(e)); }
// By value: `x.get_array().value()` in a range-for would bind to a temporary.
inline simdjson::dom::array jarr(simdjson::dom::element e) { return simdjson::dom::array(e); }

// A TSUM as the dumps print it: levels of [min, max, sum] per counter.
inline void expect_summary_equal(const TraceSummary &got, simdjson::dom::element ts) {
  EXPECT_EQ(got.base_interval_cycles, ju64(ts["base_interval_cycles"]));
  EXPECT_EQ(got.fan_out, ju64(ts["fan_out"]));
  EXPECT_EQ(got.total_instructions, ju64(ts["total_instructions"]));
  std::vector<std::vector<uint32_t>> density;
  for (auto level : jarr(ts["instruction_density"])) {
    density.emplace_back();
    for (auto v : jarr(level)) density.back().push_back(static_cast<uint32_t>(ju64(v)));
  }
  EXPECT_EQ(got.density, density);
  auto counters = jarr(ts["counters"]);
  ASSERT_EQ(got.counters.size(), counters.size());
  size_t i = 0;
  for (auto c : counters) {
    const auto &g = got.counters[i++];
    EXPECT_EQ(g.name, jstr(c["name"]));
    EXPECT_EQ(g.storage_id, ju64(c["storage_id"]));
    auto levels = jarr(c["levels"]);
    ASSERT_EQ(g.levels.size(), levels.size());
    size_t l = 0;
    for (auto level : levels) {
      std::vector<uint64_t> want, have;
      for (auto e : jarr(level))
        for (auto x : jarr(e)) want.push_back(ju64(x));
      for (const auto &e : g.levels[l]) have.insert(have.end(), {e.min_delta, e.max_delta, e.sum});
      EXPECT_EQ(have, want) << "counter " << g.name << " level " << l;
      ++l;
    }
  }
}

// A state as the dumps and probes print it: per storage num_valid,
// properties, and the listed slots with their fields (raw, zero-extended).
//
// Reference bug (not in the corpus README): its reader marks a dense slot
// invalid after DA_SLOT_CLEAR until the next checkpoint reloads it, so a
// dense slot's validity depends on where t falls in its segment. Spec
// §4.6.1: dense slots are always valid (a CLEAR zeroes them, COMPAT 13). For
// dense storages we check every slot's values, and that each slot the
// reference calls invalid is zero in ours.
inline void expect_state_equal(const std::vector<StorageState> &state, simdjson::dom::element storages_json,
                               const std::string &context) {
  auto storages = jarr(storages_json);
  ASSERT_EQ(storages.size(), state.size()) << context;
  size_t i = 0;
  for (auto js : storages) {
    const auto &s = state[i++];
    SCOPED_TRACE(context + " storage " + jstr(js["name"]));
    if (s.layout().sparse) EXPECT_EQ(ju64(js["num_valid"]), s.occupancy());
    else EXPECT_EQ(s.occupancy(), s.layout().num_slots);
    std::vector<uint64_t> props, want_props;
    for (auto v : jarr(js["properties"])) want_props.push_back(ju64(v));
    for (uint16_t p = 0; p < s.layout().prop_off.size(); ++p) props.push_back(s.prop(p));
    EXPECT_EQ(props, want_props);
    std::vector<std::vector<uint64_t>> slots, want_slots;
    std::vector<uint64_t> ids, want_ids;
    for (auto js_slot : jarr(js["slots"])) {
      want_ids.push_back(ju64(js_slot["slot"]));
      want_slots.emplace_back();
      for (auto v : jarr(js_slot["fields"])) want_slots.back().push_back(ju64(v));
      bool ref_valid = true;
      if (!js_slot["valid"].error()) ref_valid = bool(js_slot["valid"]);
      if (!ref_valid) {
        EXPECT_FALSE(s.layout().sparse) << "a listed sparse slot is always valid";
        for (uint64_t v : want_slots.back()) EXPECT_EQ(v, 0u) << "slot " << want_ids.back();
      }
    }
    for (uint16_t slot = 0; slot < s.layout().num_slots; ++slot) {
      if (!s.valid(slot)) continue;
      ids.push_back(slot);
      slots.emplace_back();
      for (uint16_t f = 0; f < s.layout().field_off.size(); ++f) slots.back().push_back(s.get(slot, f));
    }
    EXPECT_EQ(ids, want_ids);
    EXPECT_EQ(slots, want_slots);
  }
}

// The state at t that the item stream gives, independently of any
// checkpoint: every op of every segment's decoded item list (NN.json, the
// reference reader's --decode dump) with time <= t, applied in file order
// to `st` (the empty state, from TraceReader::initial_state()). Ops the
// schema does not allow do nothing, as in both readers (a slot past the
// storage's size: COMPAT 27). This is the truth for files whose checkpoints
// do not hold their segment's start (COMPAT 9, 28), where the reference
// reader's own state_at counts the items twice (conformance README).
inline std::vector<StorageState> replayed_state_at(simdjson::dom::element dump, std::vector<StorageState> st,
                                                    uint64_t t) {
  for (auto seg : jarr(dump["segments"])) {
    EXPECT_FALSE(seg["items"].error()) << "the dump has no item list (a --digest dump)";
    if (seg["items"].error()) break;
    for (auto it : jarr(seg["items"])) {
      if (jstr(it["kind"]) != "op" || ju64(it["time_ps"]) > t) continue;
      const uint64_t sid = ju64(it["storage_id"]), slot = ju64(it["slot"]), field = ju64(it["field_index"]);
      const uint64_t action = ju64(it["action"]), value = ju64(it["value"]);
      if (sid >= st.size()) continue;
      StorageState &s = st[sid];
      const StorageLayout &L = s.layout();
      if (action == 4) {
        if (field < L.prop_off.size()) s.prop_set(static_cast<uint16_t>(field), value);
        continue;
      }
      if (slot >= L.num_slots) continue;
      if (action == 2) s.clear(static_cast<uint16_t>(slot));
      else if (field >= L.field_off.size()) continue;
      else if (action == 1) s.set(static_cast<uint16_t>(slot), static_cast<uint16_t>(field), value);
      else if (action == 3) s.add(static_cast<uint16_t>(slot), static_cast<uint16_t>(field), value);
    }
  }
  return st;
}

inline std::vector<uint8_t> state_bytes(const std::vector<StorageState> &st) {
  std::vector<uint8_t> b;
  encode_checkpoint(st, b);
  return b;
}

}  // namespace uscope::test
