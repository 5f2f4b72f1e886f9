// What a tolerant reader skips, counts and reports (issue 18).
//
// Files written by other tools carry defects that do not stop decoding: ops
// on slots past a storage's size (the reference's Rust cpu writer, COMPAT
// 27), end-of-segment checkpoints (COMPAT 9, 28), timestamps off their
// clock's grid (COMPAT 29), and, in a damaged file, segments that no longer
// decode. By default the reader skips each such item, counts it by kind and
// keeps the first place it saw one; opened strict, it throws the kind's
// status at the first one instead. Nothing is skipped silently: the counts
// are part of every answer (uscope_reader_defects, `uscope check`, the CLI's
// warnings).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "uscope/uscope.h"

namespace uscope {

// Values are USCOPE_DEFECT_* of uscope.h: the table below is the one list.
enum class Defect : uint8_t {
  SlotOutOfRange = USCOPE_DEFECT_SLOT_OUT_OF_RANGE,
  UnknownStorage = USCOPE_DEFECT_UNKNOWN_STORAGE,
  FieldOutOfRange = USCOPE_DEFECT_FIELD_OUT_OF_RANGE,
  UnknownEventType = USCOPE_DEFECT_UNKNOWN_EVENT_TYPE,
  EventPayloadSize = USCOPE_DEFECT_EVENT_PAYLOAD_SIZE,
  StringRefOutOfRange = USCOPE_DEFECT_STRING_REF_OUT_OF_RANGE,
  EnumOutOfRange = USCOPE_DEFECT_ENUM_OUT_OF_RANGE,
  TimeBackwards = USCOPE_DEFECT_TIME_BACKWARDS,
  SegmentUndecodable = USCOPE_DEFECT_SEGMENT_UNDECODABLE,
  EndOfSegmentCheckpoints = USCOPE_DEFECT_END_OF_SEGMENT_CHECKPOINTS,
  OffClockGrid = USCOPE_DEFECT_OFF_CLOCK_GRID,
  TsumMismatch = USCOPE_DEFECT_TSUM_MISMATCH,
  UnknownOpAction = USCOPE_DEFECT_UNKNOWN_OP_ACTION,
  CheckpointMismatch = USCOPE_DEFECT_CHECKPOINT_MISMATCH,
};
constexpr size_t kDefectKinds = USCOPE_DEFECT_KIND_COUNT;

struct DefectKindInfo {
  const char *name;         // "slot_out_of_range": the JSON kind of `uscope check`
  uscope_status_t status;   // what a strict reader returns for it
  const char *what;         // "ops on slots past their storage's size were ignored"
};
// The one table of defect kinds; nullptr for a value past the last kind.
const DefectKindInfo *defect_info(uint32_t kind);
inline const DefectKindInfo &defect_info(Defect k) { return *defect_info(static_cast<uint32_t>(k)); }

// Where a defect was met. segment is UINT32_MAX for the file as a whole;
// offset is the segment's file offset (items live inside compressed blocks,
// so the segment is the finest place a file offset names) or, for a
// structure outside any segment, that structure's offset.
struct DefectPlace {
  uint32_t segment = UINT32_MAX;
  uint64_t offset = 0;
  uint64_t time_ps = 0;
  // What the item names (uscope_defect_t.subject): the storage of an op,
  // the event type of an event; UINT32_MAX for none.
  uint32_t subject = UINT32_MAX;
};

// Counts by kind, with the first place of each, for one decoding pass.
// Of each count, the part met in events is kept apart too (`in_events`):
// a pass that reads only events (events_in_range) and one that reads ops
// too (state_at) meet different items of a kind such as enum_out_of_range.
struct DefectTally {
  std::array<uint64_t, kDefectKinds> count{};
  std::array<uint64_t, kDefectKinds> in_events{};
  std::array<DefectPlace, kDefectKinds> first{};
  bool any = false;
  void add(Defect k, const DefectPlace &at, uint64_t n = 1, bool event = false) {
    const size_t i = static_cast<size_t>(k);
    if (!count[i]) first[i] = at;
    count[i] += n;
    if (event) in_events[i] += n;
    any = true;
  }
};

// One entry of a report: a kind that was seen, how often, and where first.
struct DefectEntry {
  Defect kind;
  uint64_t count;
  DefectPlace first;
};

// Everything a reader has seen. Defects of the file's structure (found when
// the segments are indexed) are replaced at every re-index (a live file's
// poll); defects inside segments are kept per segment, as the most any one
// decoding of that segment found (in its ops and in its events apart), so
// that reading a segment twice, or a prefix of it then all of it, does not
// count anything twice.
class DefectLog {
 public:
  void set_structure(const DefectTally &t) { structure_ = t; }
  const DefectTally &structure() const { return structure_; }
  void add_segment(uint32_t segment, const DefectTally &t);
  // Every kind seen, in kind order; the first place is the earliest in
  // file order (structure defects first, then by segment).
  std::vector<DefectEntry> entries() const;
  bool empty() const { return !structure_.any && segments_.empty(); }

 private:
  DefectTally structure_;
  std::unordered_map<uint32_t, DefectTally> segments_;
};

}  // namespace uscope
