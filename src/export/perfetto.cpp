// `uscope export --to perfetto`: the timeline (timeline_model.hpp) as a
// Perfetto protobuf trace (docs/export.md "Perfetto and Chrome JSON"),
// written as it is made: a `Trace` is `repeated TracePacket packet = 1`
// (perfetto/protos/perfetto/trace/trace.proto), so each packet is one
// length-delimited field 1 and the file needs no header or trailer.
//
// Field numbers are those of Perfetto's public protos (the file named at
// each group); the encoding is protobuf_wire.hpp.
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

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
    // Tens of millions of these on a long cpu trace: both events are
    // encoded into one scratch buffer sized for them, then appended once.
    const uint64_t iid = name_iid(name);
    const size_t bound = 3 * pb::kMaxVarintField + (iid ? 0 : pb::kMaxLenFieldHead + name.size()) +
                         n_args * (pb::kMaxLenFieldHead + 2 * pb::kMaxVarintField) +
                         (n_out + n_in) * pb::kMaxFixed64Field;
    char *ev = scratch(kHeadRoom + bound) + kHeadRoom;
    char *e = ev;
    pb::wr_uint(e, kTeType, kTypeSliceBegin);
    pb::wr_uint(e, kTeTrackUuid, t.uuid);
    if (iid) {
      pb::wr_uint(e, kTeNameIid, iid);
    } else {
      pb::wr_bytes(e, kTeName, name.data(), name.size());
    }
    for (size_t i = 0; i < n_args; ++i) {
      char sub[2 * pb::kMaxVarintField];
      char *q = sub;
      pb::wr_uint(q, kDaNameIid, arg_name(args[i].key));
      pb::wr_uint(q, args[i].pointer ? kDaPointerValue : kDaUintValue, args[i].value);
      pb::wr_bytes(e, kTeDebugAnnotations, sub, static_cast<size_t>(q - sub));
    }
    for (size_t i = 0; i < n_out; ++i) pb::wr_fixed64(e, kTeFlowIds, out[i]);
    for (size_t i = 0; i < n_in; ++i) pb::wr_fixed64(e, kTeTerminatingFlowIds, in[i]);
    event(ev, static_cast<size_t>(e - ev), ts, true);
    char end[kHeadRoom + 2 * pb::kMaxVarintField];
    char *x = end + kHeadRoom;
    pb::wr_uint(x, kTeType, kTypeSliceEnd);
    pb::wr_uint(x, kTeTrackUuid, t.uuid);
    event(end + kHeadRoom, static_cast<size_t>(x - end - kHeadRoom), ts + dur, false);
  }
  void instant(const timeline::Track &t, uint64_t ts, std::string_view name) override {
    const uint64_t iid = name_iid(name);
    const size_t bound = 3 * pb::kMaxVarintField + pb::kMaxLenFieldHead + name.size();
    char *ev = scratch(kHeadRoom + bound) + kHeadRoom;
    char *e = ev;
    pb::wr_uint(e, kTeType, kTypeInstant);
    pb::wr_uint(e, kTeTrackUuid, t.uuid);
    if (iid) {
      pb::wr_uint(e, kTeNameIid, iid);
    } else {
      pb::wr_bytes(e, kTeName, name.data(), name.size());
    }
    event(ev, static_cast<size_t>(e - ev), ts, true);
  }
  void counter(const timeline::Track &t, uint64_t ts, int64_t value) override {
    char buf[kHeadRoom + 3 * pb::kMaxVarintField];
    char *const ev = buf + kHeadRoom;
    char *e = ev;
    pb::wr_uint(e, kTeType, kTypeCounter);
    pb::wr_uint(e, kTeTrackUuid, t.uuid);
    pb::wr_uint(e, kTeCounterValue, static_cast<uint64_t>(value));
    event(ev, static_cast<size_t>(e - ev), ts, false);
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
  // An argument's name, interned (few: the mapping's keys, string
  // literals, so a pointer compare finds nearly all of them).
  uint64_t arg_name(const char *key) {
    for (const auto &[k, iid] : arg_iids_)
      if (k == key) return iid;
    for (const auto &[k, iid] : arg_iids_)
      if (std::strcmp(k, key) == 0) return iid;
    const uint64_t iid = arg_iids_.size() + 1;
    arg_iids_.emplace_back(key, iid);
    std::string d;
    pb::put_uint(d, kEnIid, iid);
    pb::put_bytes(d, kEnName, key);
    pb::put_bytes(interned_, kIdDebugAnnotationNames, d);
    return iid;
  }
  // The event's name: its iid, interned (defined in the next packet when
  // new), or 0: written inline (the table is full).
  uint64_t name_iid(std::string_view name) {
    // Consecutive slices often share a name (an instruction's stages).
    if (last_iid_ && name == last_name_) return last_iid_;
    key_.assign(name.data(), name.size());
    auto it = iids_.find(key_);
    if (it != iids_.end()) {
      last_name_ = key_;
      last_iid_ = it->second;
      return last_iid_;
    }
    if (iids_.size() >= kMaxInterned) return 0;
    const uint64_t iid = iids_.size() + 1;  // iid 0 is "none"
    iids_.emplace(key_, iid);
    last_name_ = key_;
    last_iid_ = iid;
    sub_.clear();
    pb::put_uint(sub_, kEnIid, iid);
    pb::put_bytes(sub_, kEnName, name);
    pb::put_bytes(interned_, kIdEventNames, sub_);
    return iid;
  }
  char *scratch(size_t n) {
    if (scratch_.size() < n) scratch_.resize(n);
    return scratch_.data();
  }
  // One TracePacket holding the TrackEvent ev[0, n), appended to the file.
  // The kHeadRoom bytes before ev are the caller's scratch: the packet's
  // head (its tag and length, timestamp, sequence fields, the event's tag
  // and length) is put there, so the packet goes out in one append.
  // uses_state: the event names an interned string (a SLICE_END or a
  // counter value does not, and saves the flags).
  static constexpr size_t kHeadRoom = 64;
  void event(char *ev, size_t n, uint64_t ts, bool uses_state) {
    char fields[3 * pb::kMaxVarintField];
    char *f = fields;
    pb::wr_uint(f, kPktTimestamp, ts);
    pb::wr_uint(f, kPktSequenceId, kSequenceId);
    if (first_) {
      pb::wr_uint(f, kPktSequenceFlags, kSeqIncrementalStateCleared | (uses_state ? kSeqNeedsIncrementalState : 0));
      pb::wr_uint(f, kPktFirstOnSequence, 1);
      first_ = false;
    } else if (uses_state) {
      pb::wr_uint(f, kPktSequenceFlags, kSeqNeedsIncrementalState);
    }
    const size_t fn = static_cast<size_t>(f - fields);
    const size_t len = fn + pb::len_field_size(kPktTrackEvent, n) +
                       (interned_.empty() ? 0 : pb::len_field_size(kPktInternedData, interned_.size()));
    char head[kHeadRoom];
    char *h = head;
    pb::wr_tag(h, kTracePacket, pb::kLen);
    pb::wr_varint(h, len);
    for (size_t i = 0; i < fn; ++i) *h++ = fields[i];
    pb::wr_tag(h, kPktTrackEvent, pb::kLen);
    pb::wr_varint(h, n);
    const size_t hn = static_cast<size_t>(h - head);
    char *p = ev - hn;
    for (size_t i = 0; i < hn; ++i) p[i] = head[i];  // a dozen bytes: no memcpy call
    std::string &b = f_.buf();
    b.append(p, hn + n);
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
  std::string sub_, desc_, interned_, pkt_, key_;
  std::vector<char> scratch_;
  std::unordered_map<std::string, uint64_t> iids_;
  std::vector<std::pair<const char *, uint64_t>> arg_iids_;  // the keys outlive the export
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
