// `uscope export --to perfetto`: the timeline (timeline_model.hpp) as a
// Perfetto protobuf trace (docs/export.md "Perfetto and Chrome JSON"),
// written as it is made: a `Trace` is `repeated TracePacket packet = 1`
// (perfetto/protos/perfetto/trace/trace.proto), so each packet is one
// length-delimited field 1 and the file needs no header or trailer.
//
// Field numbers are those of Perfetto's public protos (the file named at
// each group); the encoding is protobuf_wire.hpp.
#include <map>
#include <string>
#include <unordered_map>

#include "export/export.hpp"
#include "export/protobuf_wire.hpp"
#include "export/timeline_model.hpp"

namespace uscope::exporter {

namespace {

// trace.proto: Trace.packet.
constexpr uint32_t kTracePacket = 1;
// trace_packet.proto: TracePacket.
constexpr uint32_t kPktTimestamp = 8, kPktSequenceId = 10, kPktTrackEvent = 11, kPktInternedData = 12,
                   kPktSequenceFlags = 13, kPktTrackDescriptor = 60, kPktFirstOnSequence = 87;
// trace_packet.proto: TracePacket.SequenceFlags.
constexpr uint64_t kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2;
// track_event/track_descriptor.proto: TrackDescriptor.
constexpr uint32_t kTdUuid = 1, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdParentUuid = 5, kTdCounter = 8;
// track_event/process_descriptor.proto, thread_descriptor.proto.
constexpr uint32_t kProcPid = 1, kProcName = 6;
constexpr uint32_t kThrPid = 1, kThrTid = 2, kThrName = 5;
// track_event/track_event.proto: TrackEvent and TrackEvent.Type.
constexpr uint32_t kTeType = 9, kTeNameIid = 10, kTeTrackUuid = 11, kTeName = 23, kTeCounterValue = 30,
                   kTeFlowIds = 47, kTeTerminatingFlowIds = 48;
constexpr uint64_t kTypeSliceBegin = 1, kTypeSliceEnd = 2, kTypeInstant = 3, kTypeCounter = 4;
// interned_data/interned_data.proto: InternedData.event_names, debug_annotation_names;
// EventName (track_event.proto), DebugAnnotationName (debug_annotation.proto).
constexpr uint32_t kIdEventNames = 2, kIdDebugAnnotationNames = 3, kEnIid = 1, kEnName = 2;
// track_event/track_event.proto: TrackEvent.debug_annotations; debug_annotation.proto: DebugAnnotation.
constexpr uint32_t kTeDebugAnnotations = 4, kDaNameIid = 1, kDaUintValue = 3, kDaPointerValue = 7;

// One writer sequence (trusted_packet_sequence_id 1) whose incremental state
// (the interned event names) is set up by its first packet.
constexpr uint64_t kSequenceId = 1;
// Names interned at most: beyond, a name is written inline (TrackEvent.name),
// so the table stays bounded on a trace of millions of distinct disassemblies.
constexpr size_t kMaxInterned = 1 << 16;

class PerfettoEncoder final : public timeline::Encoder {
 public:
  explicit PerfettoEncoder(OutFile &f) : f_(f) {}

  void process(const timeline::Track &p, std::string_view name) override {
    sub_.clear();
    pb::put_int(sub_, kProcPid, p.pid);
    pb::put_bytes(sub_, kProcName, name);
    desc_.clear();
    pb::put_uint(desc_, kTdUuid, p.uuid);
    pb::put_bytes(desc_, kTdProcess, sub_);
    descriptor();
  }
  void thread(const timeline::Track &p, const timeline::Track &t, std::string_view name) override {
    sub_.clear();
    pb::put_int(sub_, kThrPid, p.pid);
    pb::put_int(sub_, kThrTid, t.tid);
    pb::put_bytes(sub_, kThrName, name);
    desc_.clear();
    pb::put_uint(desc_, kTdUuid, t.uuid);
    pb::put_bytes(desc_, kTdName, name);
    pb::put_bytes(desc_, kTdThread, sub_);
    pb::put_uint(desc_, kTdParentUuid, p.uuid);
    descriptor();
  }
  void counter_track(const timeline::Track &p, const timeline::Track &t, std::string_view name) override {
    desc_.clear();
    pb::put_uint(desc_, kTdUuid, t.uuid);
    pb::put_bytes(desc_, kTdName, name);
    pb::put_uint(desc_, kTdParentUuid, p.uuid);
    pb::put_bytes(desc_, kTdCounter, std::string_view());  // a CounterDescriptor with its defaults
    descriptor();
  }
  void slice(const timeline::Track &t, uint64_t ts, uint64_t dur, std::string_view name, const timeline::Arg *args,
             size_t n_args, const uint64_t *out, size_t n_out, const uint64_t *in, size_t n_in) override {
    ev_.clear();
    pb::put_uint(ev_, kTeType, kTypeSliceBegin);
    pb::put_uint(ev_, kTeTrackUuid, t.uuid);
    named(name);
    for (size_t i = 0; i < n_args; ++i) {
      sub_.clear();
      pb::put_uint(sub_, kDaNameIid, arg_name(args[i].key));
      pb::put_uint(sub_, args[i].pointer ? kDaPointerValue : kDaUintValue, args[i].value);
      pb::put_bytes(ev_, kTeDebugAnnotations, sub_);
    }
    for (size_t i = 0; i < n_out; ++i) pb::put_fixed64(ev_, kTeFlowIds, out[i]);
    for (size_t i = 0; i < n_in; ++i) pb::put_fixed64(ev_, kTeTerminatingFlowIds, in[i]);
    event(ts, true);
    ev_.clear();
    pb::put_uint(ev_, kTeType, kTypeSliceEnd);
    pb::put_uint(ev_, kTeTrackUuid, t.uuid);
    event(ts + dur, false);
  }
  void instant(const timeline::Track &t, uint64_t ts, std::string_view name) override {
    ev_.clear();
    pb::put_uint(ev_, kTeType, kTypeInstant);
    pb::put_uint(ev_, kTeTrackUuid, t.uuid);
    named(name);
    event(ts, true);
  }
  void counter(const timeline::Track &t, uint64_t ts, int64_t value) override {
    ev_.clear();
    pb::put_uint(ev_, kTeType, kTypeCounter);
    pb::put_uint(ev_, kTeTrackUuid, t.uuid);
    pb::put_int(ev_, kTeCounterValue, value);
    event(ts, false);
  }
  void finish() override {}

 private:
  // The sequence's first packet clears its incremental state.
  void sequence_fields(std::string &pkt, bool uses_state) {
    pb::put_uint(pkt, kPktSequenceId, kSequenceId);
    if (first_) {
      pb::put_uint(pkt, kPktSequenceFlags, kSeqIncrementalStateCleared | (uses_state ? kSeqNeedsIncrementalState : 0));
      pb::put_uint(pkt, kPktFirstOnSequence, 1);
      first_ = false;
    } else if (uses_state) {
      pb::put_uint(pkt, kPktSequenceFlags, kSeqNeedsIncrementalState);
    }
  }
  void descriptor() {
    pkt_.clear();
    sequence_fields(pkt_, false);
    pb::put_bytes(pkt_, kPktTrackDescriptor, desc_);
    packet();
  }
  // An argument's name, interned (few: the mapping's keys).
  uint64_t arg_name(const char *key) {
    auto it = arg_iids_.find(key);
    if (it != arg_iids_.end()) return it->second;
    const uint64_t iid = arg_iids_.size() + 1;
    arg_iids_.emplace(key, iid);
    std::string d;
    pb::put_uint(d, kEnIid, iid);
    pb::put_bytes(d, kEnName, key);
    pb::put_bytes(interned_, kIdDebugAnnotationNames, d);
    return iid;
  }
  // The event's name: interned (defined in this packet when new) or inline.
  void named(std::string_view name) {
    // Consecutive slices often share a name (an instruction's stages).
    if (last_iid_ && name == last_name_) {
      pb::put_uint(ev_, kTeNameIid, last_iid_);
      return;
    }
    key_.assign(name.data(), name.size());
    auto it = iids_.find(key_);
    if (it != iids_.end()) {
      pb::put_uint(ev_, kTeNameIid, it->second);
      last_name_ = key_;
      last_iid_ = it->second;
      return;
    }
    if (iids_.size() >= kMaxInterned) {
      pb::put_bytes(ev_, kTeName, name);
      return;
    }
    const uint64_t iid = iids_.size() + 1;  // iid 0 is "none"
    iids_.emplace(key_, iid);
    last_name_ = key_;
    last_iid_ = iid;
    pb::put_uint(ev_, kTeNameIid, iid);
    sub_.clear();
    pb::put_uint(sub_, kEnIid, iid);
    pb::put_bytes(sub_, kEnName, name);
    pb::put_bytes(interned_, kIdEventNames, sub_);
  }
  // uses_state: the event names an interned string (a SLICE_END or a
  // counter value does not, and saves the flags).
  void event(uint64_t ts, bool uses_state) {
    // Written straight into the file's buffer: the packet's length is known
    // from its parts, so the event is not copied into a packet first.
    pkt_.clear();
    pb::put_uint(pkt_, kPktTimestamp, ts);
    sequence_fields(pkt_, uses_state);
    const size_t len = pkt_.size() + pb::len_field_size(kPktTrackEvent, ev_.size()) +
                       (interned_.empty() ? 0 : pb::len_field_size(kPktInternedData, interned_.size()));
    std::string &b = f_.buf();
    pb::put_tag(b, kTracePacket, pb::kLen);
    pb::put_varint(b, len);
    b += pkt_;
    pb::put_bytes(b, kPktTrackEvent, ev_);
    if (!interned_.empty()) {
      pb::put_bytes(b, kPktInternedData, interned_);
      interned_.clear();
    }
    f_.maybe_flush();
  }
  void packet() {
    std::string &b = f_.buf();
    pb::put_bytes(b, kTracePacket, pkt_);
    f_.maybe_flush();
  }

  OutFile &f_;
  bool first_ = true;
  std::string sub_, desc_, ev_, interned_, pkt_, key_;
  std::unordered_map<std::string, uint64_t> iids_;
  std::map<std::string, uint64_t> arg_iids_;
  std::string last_name_;
  uint64_t last_iid_ = 0;
};

}  // namespace

void export_perfetto(Job &job) {
  OutFile f(job.output);
  PerfettoEncoder enc(f);
  timeline::run(job, enc);
  job.stats.bytes_out = f.bytes();
  f.publish();
}

}  // namespace uscope::exporter
