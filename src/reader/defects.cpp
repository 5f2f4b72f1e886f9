#include "reader/defects.hpp"

#include <algorithm>

namespace uscope {

namespace {
// Indexed by USCOPE_DEFECT_*. The strict statuses reuse the codes a writer
// returns for the same mistake, so that a strict read of a file and the
// call that should have refused it agree.
constexpr DefectKindInfo kKinds[] = {
    {"slot_out_of_range", USCOPE_ERR_UNKNOWN_SLOT,
     "ops on slots past their storage's size were ignored (the reference's konata2uscope and gen-uscope "
     "write them, COMPAT 27)"},
    {"unknown_storage", USCOPE_ERR_UNKNOWN_STORAGE, "ops on storages the schema does not have were ignored"},
    {"field_out_of_range", USCOPE_ERR_UNKNOWN_FIELD,
     "ops on fields or properties past their storage's were ignored"},
    {"unknown_event_type", USCOPE_ERR_UNKNOWN_EVENT, "events of types the schema does not have were ignored"},
    {"event_payload_size", USCOPE_ERR_PAYLOAD_SIZE,
     "events whose payload size differs from their type's were ignored"},
    {"string_ref_out_of_range", USCOPE_ERR_VALUE_RANGE,
     "values name strings past the string table (kept as written)"},
    {"enum_out_of_range", USCOPE_ERR_VALUE_RANGE, "values lie past their enum (kept as written)"},
    {"time_backwards", USCOPE_ERR_TIME_BACKWARDS,
     "frames or segments whose time goes backwards were ignored"},
    {"segment_undecodable", USCOPE_ERR_CORRUPT,
     "segments could not be decoded; their items are lost, the next checkpoint resynchronises"},
    {"end_of_segment_checkpoints", USCOPE_ERR_NONCONFORMING,
     "checkpoints hold the state at their segment's end (COMPAT 9, 28); read as their writer meant"},
    {"off_clock_grid", USCOPE_ERR_NONCONFORMING,
     "timestamps do not lie on their clock's period (COMPAT 29); cycles use the grid the timestamps follow"},
    {"tsum_mismatch", USCOPE_ERR_CORRUPT, "the trace summary (TSUM) differs from the one the items give"},
    {"unknown_op_action", USCOPE_ERR_CORRUPT, "ops with an unknown action were ignored"},
    {"checkpoint_mismatch", USCOPE_ERR_CORRUPT,
     "checkpoints differ from the state the items before them give"},
};
static_assert(sizeof kKinds / sizeof kKinds[0] == kDefectKinds, "one row per USCOPE_DEFECT_* kind");

bool before(const DefectPlace &a, const DefectPlace &b) {
  // Structure defects (segment UINT32_MAX) are listed first: they are found
  // before any segment is read.
  const uint64_t sa = a.segment == UINT32_MAX ? 0 : uint64_t{a.segment} + 1;
  const uint64_t sb = b.segment == UINT32_MAX ? 0 : uint64_t{b.segment} + 1;
  return sa != sb ? sa < sb : a.time_ps < b.time_ps;
}
}  // namespace

const DefectKindInfo *defect_info(uint32_t kind) { return kind < kDefectKinds ? &kKinds[kind] : nullptr; }

void DefectLog::add_segment(uint32_t segment, const DefectTally &t) {
  if (!t.any) return;
  DefectTally &s = segments_[segment];
  for (size_t k = 0; k < kDefectKinds; ++k) {
    if (!t.count[k]) continue;
    // Every pass starts at the segment's start, so the one that got furthest
    // in the segment's ops, and the one that got furthest in its events,
    // have met every item the others met.
    const uint64_t ops = std::max(t.count[k] - t.in_events[k], s.count[k] - s.in_events[k]);
    const uint64_t events = std::max(t.in_events[k], s.in_events[k]);
    if (!s.count[k] || before(t.first[k], s.first[k])) s.first[k] = t.first[k];
    s.count[k] = ops + events;
    s.in_events[k] = events;
  }
  s.any = true;
}

std::vector<DefectEntry> DefectLog::entries() const {
  std::array<uint64_t, kDefectKinds> count = structure_.count;
  std::array<DefectPlace, kDefectKinds> first = structure_.first;
  for (const auto &kv : segments_) {
    for (size_t k = 0; k < kDefectKinds; ++k) {
      if (!kv.second.count[k]) continue;
      if (!count[k] || before(kv.second.first[k], first[k])) first[k] = kv.second.first[k];
      count[k] += kv.second.count[k];
    }
  }
  std::vector<DefectEntry> out;
  for (size_t k = 0; k < kDefectKinds; ++k)
    if (count[k]) out.push_back({static_cast<Defect>(k), count[k], first[k]});
  return out;
}

}  // namespace uscope
