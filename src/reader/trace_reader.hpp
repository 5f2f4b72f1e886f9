// The reader core: opens a µScope file through a memory map, finds its
// segments (section table of a finalized file, or the tail_offset /
// prev_segment_offset chain of a live or crashed one), and answers
// state_at and events_in_range by loading a checkpoint and replaying deltas.
// Built only on the shared codecs of src/format/. Every offset and length is
// checked against the file size before use; malformed input throws
// uscope::Error with a specific status.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/compress.hpp"
#include "format/file_codec.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/storage_state.hpp"
#include "format/tsum.hpp"
#include "reader/mapped_file.hpp"

namespace uscope {

struct SegmentInfo {
  uint64_t offset = 0;
  SegmentHeader header;
};

struct TimedEvent {
  uint64_t time_ps = 0;
  uint16_t event_type_id = 0;
  const uint8_t *payload = nullptr;  // into the reader's replay buffer
  uint32_t payload_size = 0;
};

class TraceReader {
 public:
  // Throws Error: IO, BAD_MAGIC, UNSUPPORTED_VERSION, UNKNOWN_COMPRESSION,
  // TRUNCATED, CORRUPT.
  explicit TraceReader(const std::string &path);

  const FileHeader &header() const { return header_; }
  bool complete() const { return header_.flags & 1u; }
  const Schema &schema() const { return schema_; }
  const std::vector<DutProperty> &dut() const { return dut_; }
  uint64_t checkpoint_interval_ps() const { return interval_; }
  const std::vector<std::string> &strings() const { return strings_; }
  const std::optional<TraceSummary> &summary() const { return summary_; }
  const std::vector<StorageLayout> &layouts() const { return layouts_; }
  const std::vector<SegmentInfo> &segments() const { return segments_; }
  size_t file_size() const { return file_.size(); }

  // The state after every frame with time <= time_ps: storages in schema
  // order. A trace without segments gives the initial (empty) state.
  std::vector<StorageState> state_at(uint64_t time_ps);

  // Every event with t0 <= time <= t1, in file order. Payload pointers stay
  // valid until the next call on this reader.
  const std::vector<TimedEvent> &events_in_range(uint64_t t0, uint64_t t1);

  // Replay segment i: loads its checkpoint into states (which must come from
  // initial_state()) and calls v.frame/op/event (see decode_deltas) with
  // every op and event validated against the schema. Ops of frames at or
  // before `until` are applied to states; later ones are validated only.
  template <class Visitor>
  void replay(size_t i, std::vector<StorageState> &states, Visitor &&v,
              uint64_t until = UINT64_MAX);

  std::vector<StorageState> initial_state() const;

  // Live files: re-read the header and pick up newly committed segments.
  // Returns true when there are new ones.
  bool poll_new_segments();

 private:
  void load_metadata();
  void load_segments();
  const uint8_t *segment_deltas(size_t i);
  void check_op(const DeltaOp &op, uint64_t t) const;

  MappedFile file_;
  FileHeader header_;
  Schema schema_;
  std::vector<DutProperty> dut_;
  uint64_t interval_ = 0;
  std::vector<std::string> strings_;
  std::optional<TraceSummary> summary_;
  std::vector<StorageLayout> layouts_;
  std::vector<uint32_t> event_sizes_;
  std::vector<SegmentInfo> segments_;
  Codec codec_ = Codec::Lz4;
  std::vector<uint8_t> deltas_;  // reused replay buffer
  std::vector<TimedEvent> events_;
  std::vector<uint8_t> event_payloads_;
};

template <class Visitor>
void TraceReader::replay(size_t i, std::vector<StorageState> &states, Visitor &&v, uint64_t until) {
  const SegmentInfo &s = segments_.at(i);
  decode_checkpoint(file_.data() + s.offset + 56, s.header.checkpoint_size, states);
  const uint8_t *d = segment_deltas(i);
  struct Apply {
    TraceReader &r;
    std::vector<StorageState> &st;
    Visitor &v;
    uint64_t until;
    void frame(uint64_t t) { v.frame(t); }
    void op(uint64_t t, const DeltaOp &o) {
      r.check_op(o, t);
      if (t > until) return;
      StorageState &s = st[o.storage_id];
      switch (o.action) {  // §8.6.2 with COMPAT 13
        case 0x01: s.set(o.slot, o.field, o.value); break;
        case 0x02: s.clear(o.slot); break;
        case 0x03: s.add(o.slot, o.field, o.value); break;
        case 0x04: s.prop_set(o.field, o.value); break;
      }
      v.op(t, o);
    }
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
      if (id >= r.event_sizes_.size())
        fail(USCOPE_ERR_CORRUPT, "event of unknown type %u at %llu ps", id, (unsigned long long)t);
      if (n != r.event_sizes_[id])
        fail(USCOPE_ERR_CORRUPT, "event %u at %llu ps has a %u-byte payload; the schema says %u", id,
             (unsigned long long)t, n, r.event_sizes_[id]);
      v.event(t, id, p, n);
    }
  } apply{*this, states, v, until};
  decode_deltas(d, s.header.deltas_raw_size, s.header.time_start_ps,
                header_.flags & (1u << 7), header_.flags & (1u << 6), apply);
}

}  // namespace uscope
