// Which scopes each segment holds items of, as a pass that replayed the
// segments whole saw them: a later pass over the same file that reads one
// scope's items only can leave out the segments that hold none, and with
// them their decompression. The timeline exporters (docs/export.md
// "Performance") read the npu scope after the cpu counters' replay: on the
// demo trace its items are in 13 of 247 segments.
//
// A segment no pass saw whole (outside its window, stopped part way, or
// undecodable) may hold anything. A scope is a storage's or an event type's
// ScopeDef::scope_id (§4.6, §4.7); items are those replay() visits, so the
// ops and events it skips as defects count for no scope, for the later pass
// as for this one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "format/schema_codec.hpp"

namespace uscope {

class ScopePresence {
 public:
  ScopePresence(const Schema &s, size_t num_segments) {
    uint32_t max_scope = 0;
    for (const StorageDef &d : s.storages)
      if (d.scope_id != kNone) max_scope = std::max<uint32_t>(max_scope, d.scope_id);
    for (const EventDef &e : s.events)
      if (e.scope_id != kNone) max_scope = std::max<uint32_t>(max_scope, e.scope_id);
    // Scope ids index the bits: a hostile schema's id near 0xFFFF would make
    // a kilobyte per segment, so past kMaxScopes nothing is kept (every
    // segment may hold anything).
    if (max_scope >= kMaxScopes) return;
    words_ = (max_scope + 64) / 64;
    storage_scope_.reserve(s.storages.size());
    for (const StorageDef &d : s.storages) storage_scope_.push_back(d.scope_id);
    for (const EventDef &e : s.events) {
      if (e.event_type_id >= event_scope_.size()) event_scope_.resize(e.event_type_id + size_t{1}, kNone);
      event_scope_[e.event_type_id] = e.scope_id;
    }
    bits_.assign(num_segments * words_, 0);
    whole_.assign(num_segments, 0);
  }

  // A replay of segment i starts: op() and event() then name its items.
  void begin(size_t i) { cur_ = words_ && i < whole_.size() ? &bits_[i * words_] : nullptr; }
  void op(uint16_t storage_id) {
    if (cur_ && storage_id < storage_scope_.size()) set(storage_scope_[storage_id]);
  }
  void event(uint16_t type_id) {
    if (cur_ && type_id < event_scope_.size() && event_scope_[type_id] != kNone) set(event_scope_[type_id]);
  }
  // The replay of segment i ended; whole: every item of it was seen.
  void end(size_t i, bool whole) {
    if (cur_ && whole) whole_[i] = 1;
    cur_ = nullptr;
  }

  // False only when a whole replay of segment i saw no item of the scope.
  bool may_hold(size_t i, uint16_t scope_id) const {
    if (i >= whole_.size() || !whole_[i]) return true;
    if (scope_id / 64u >= words_) return false;  // no storage or event type has it
    return bits_[i * words_ + scope_id / 64u] >> (scope_id % 64u) & 1u;
  }

 private:
  static constexpr uint32_t kMaxScopes = 1024;
  static constexpr uint16_t kNone = 0xFFFF;
  void set(uint16_t scope) {
    if (scope != kNone) cur_[scope / 64u] |= uint64_t{1} << (scope % 64u);
  }
  size_t words_ = 0;  // per segment; 0: nothing kept
  std::vector<uint16_t> storage_scope_, event_scope_;
  std::vector<uint64_t> bits_;  // per segment, words_ of scope bits
  std::vector<uint8_t> whole_;  // per segment: a replay saw all of it
  uint64_t *cur_ = nullptr;
};

}  // namespace uscope
