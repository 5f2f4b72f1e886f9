// A pass over a trace's segments that can ride along another pass's replay
// of the same reader: the two then decompress, decode and apply each
// segment once instead of twice (the timeline exporters' counter tracks ride
// their noc pass: docs/export.md "Performance").
//
// The host replays segments in ascending order, each as TraceReader::replay
// does (its start state loaded, then its frames), and tells the rider of
// every one: begin_segment, then every frame, op and event it visits (ops
// after they are applied, as replay() visits them), then end_segment. A
// host replays every op (no `until`): a rider may want the ones its host
// does not. A rider takes the segments it wants and ignores the others; one
// that finds a segment it wanted skipped takes none after it and reads the
// rest on its own (each segment starts from its own checkpoint, so nothing
// read before is lost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/frame_codec.hpp"
#include "format/storage_state.hpp"

namespace uscope {

class ReplayRider {
 public:
  virtual ~ReplayRider() = default;
  // Segment i comes next; states is the host's, holding segment i's state as
  // the replay goes (valid until end_segment).
  virtual void begin_segment(size_t i, const std::vector<StorageState> &states) = 0;
  virtual void frame(uint64_t t) = 0;
  virtual void op(uint64_t t, const DeltaOp &o) = 0;
  virtual void event(uint64_t t, uint16_t id, const uint8_t *payload, uint32_t n) = 0;
  // whole: replay() returned true (the segment decoded to its end).
  virtual void end_segment(size_t i, bool whole) = 0;
};

}  // namespace uscope
