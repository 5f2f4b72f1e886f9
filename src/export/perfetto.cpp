// `uscope export --to perfetto`: the timeline (timeline_model.hpp) as a
// Perfetto protobuf trace (docs/export.md "Perfetto and Chrome JSON"),
// written as it is made: a `Trace` is `repeated TracePacket packet = 1`
// (perfetto/protos/perfetto/trace/trace.proto), so each packet is one
// length-delimited field 1 and the file needs no header or trailer.
//
// Field numbers are those of Perfetto's public protos (the file named at
// each group); the encoding is protobuf_wire.hpp.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.hpp"
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

// One writer sequence per thread of the mapping (trusted_packet_sequence_id
// 1, and 2 for the side encoder's), whose incremental state (the interned
// event names) is set up by its first packet: the two interleave in the
// file by whole packets, each with names of its own.
constexpr uint64_t kMainSequence = 1, kSideSequence = 2;
// Names interned at most: beyond, a name is written inline (TrackEvent.name),
// so the table stays bounded on a trace of millions of distinct disassemblies.
constexpr size_t kMaxInterned = 1 << 16;

// The interned event names: iid k (from 1) is the k-th distinct name, up to
// kMaxInterned. A slice's name is looked up once per instruction (its stages
// share it, see name_iid), millions of times on a long trace: an
// open-addressing table over one arena of the texts, hashed 8 bytes at a
// time, with no string made per lookup (a std::unordered_map<std::string>
// keyed by a copy of each name was 16% of the slices' thread).
class NameTable {
 public:
  NameTable() : slots_(kMinSlots) {}
  // name's iid, added when new; 0 when it is new and the table is full.
  uint64_t find_or_add(std::string_view name) {
    const uint64_t h = hash(name);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot &s = slots_[i];
      if (s.iid == 0) {
        if (texts_.size() >= kMaxInterned) return 0;
        s.hash = h;
        s.iid = static_cast<uint32_t>(texts_.size() + 1);
        texts_.push_back({arena_.size(), name.size()});
        arena_.append(name.data(), name.size());
        if (2 * texts_.size() > slots_.size()) grow();
        return texts_.size();
      }
      if (s.hash == h && text(s.iid) == name) return s.iid;
    }
  }
  std::string_view text(uint64_t iid) const {
    const Text &t = texts_[iid - 1];
    return std::string_view(arena_.data() + t.off, t.len);
  }

 private:
  // At least twice the names, so that probes stay short; made to fit the
  // names there are (a firmware's few thousand disassemblies stay in the
  // cache), up to 2 * kMaxInterned.
  static constexpr size_t kMinSlots = 1024;
  void grow() {
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot &s : old) {
      if (s.iid == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].iid != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  static uint64_t hash(std::string_view s) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h = s.size() * kMul;
    const char *p = s.data();
    size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      h = (h ^ v) * kMul;
      h ^= h >> 29;
    }
    if (n) {
      uint64_t v = 0;
      std::memcpy(&v, p, n);
      h = (h ^ v) * kMul;
      h ^= h >> 29;
    }
    return h ^ (h >> 32);
  }
  struct Slot {
    uint64_t hash = 0;
    uint32_t iid = 0;  // 0: empty
  };
  struct Text {
    size_t off, len;
  };
  std::vector<Slot> slots_;
  std::vector<Text> texts_;
  std::string arena_;
};

class PerfettoEncoder final : public timeline::Encoder {
 public:
  PerfettoEncoder(OutFile &f, std::mutex *shared, uint64_t sequence) : raw_(f, shared), sequence_(sequence) {}

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
  // Tens of millions of these on a long cpu trace: each packet is sized
  // first and written straight into the output's raw buffer (no copy).
  void slice(const timeline::Track &t, uint64_t ts, uint64_t dur, const timeline::Name &nm, const timeline::Arg *args,
             size_t n_args, const uint64_t *out, size_t n_out, const uint64_t *in, size_t n_in) override {
    // Interning first: it adds to the interned data the packet carries.
    const std::string_view name = nm.text;
    const uint64_t iid = nm.id ? iid_of(nm) : name_iid(name);
    arg_iid_.resize(n_args);
    for (size_t i = 0; i < n_args; ++i) arg_iid_[i] = arg_name(args[i].key);
    auto value_field = [&](size_t i) { return args[i].pointer ? kDaPointerValue : kDaUintValue; };
    auto annotation_size = [&](size_t i) {
      return uint_size(kDaNameIid, arg_iid_[i]) + uint_size(value_field(i), args[i].value);
    };
    size_t n = uint_size(kTeType, kTypeSliceBegin) + uint_size(kTeTrackUuid, t.uuid) + name_size(iid, name) +
               n_out * fixed_size(kTeFlowIds) + n_in * fixed_size(kTeTerminatingFlowIds);
    for (size_t i = 0; i < n_args; ++i) n += pb::len_field_size(kTeDebugAnnotations, annotation_size(i));
    char *p = begin_packet(ts, true, n);
    pb::wr_uint(p, kTeType, kTypeSliceBegin);
    pb::wr_uint(p, kTeTrackUuid, t.uuid);
    write_name(p, iid, name);
    for (size_t i = 0; i < n_args; ++i) {
      pb::wr_tag(p, kTeDebugAnnotations, pb::kLen);
      pb::wr_varint(p, annotation_size(i));
      pb::wr_uint(p, kDaNameIid, arg_iid_[i]);
      pb::wr_uint(p, value_field(i), args[i].value);
    }
    for (size_t i = 0; i < n_out; ++i) pb::wr_fixed64(p, kTeFlowIds, out[i]);
    for (size_t i = 0; i < n_in; ++i) pb::wr_fixed64(p, kTeTerminatingFlowIds, in[i]);
    end_packet(p);
    p = begin_packet(ts + dur, false, uint_size(kTeType, kTypeSliceEnd) + uint_size(kTeTrackUuid, t.uuid));
    pb::wr_uint(p, kTeType, kTypeSliceEnd);
    pb::wr_uint(p, kTeTrackUuid, t.uuid);
    end_packet(p);
  }
  void instant(const timeline::Track &t, uint64_t ts, std::string_view name) override {
    const uint64_t iid = name_iid(name);
    char *p = begin_packet(
        ts, true, uint_size(kTeType, kTypeInstant) + uint_size(kTeTrackUuid, t.uuid) + name_size(iid, name));
    pb::wr_uint(p, kTeType, kTypeInstant);
    pb::wr_uint(p, kTeTrackUuid, t.uuid);
    write_name(p, iid, name);
    end_packet(p);
  }
  void counter(const timeline::Track &t, uint64_t ts, int64_t value) override {
    const uint64_t v = static_cast<uint64_t>(value);
    char *p = begin_packet(ts, false,
                           uint_size(kTeType, kTypeCounter) + uint_size(kTeTrackUuid, t.uuid) +
                               uint_size(kTeCounterValue, v));
    pb::wr_uint(p, kTeType, kTypeCounter);
    pb::wr_uint(p, kTeTrackUuid, t.uuid);
    pb::wr_uint(p, kTeCounterValue, v);
    end_packet(p);
  }
  void finish() override { raw_.finish(); }
  void flush() override { raw_.finish(); }

 private:
  // The sequence's first packet clears its incremental state.
  void sequence_fields(std::string &pkt, bool uses_state) {
    pb::put_uint(pkt, kPktSequenceId, sequence_);
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
  // A name with an id: its iid is looked up by the id once known.
  uint64_t iid_of(const timeline::Name &n) {
    if (n.id < iid_by_id_.size() && iid_by_id_[n.id]) return iid_by_id_[n.id];
    const uint64_t iid = name_iid(n.text);
    if (iid && n.id < timeline::kNameIds) {
      if (n.id >= iid_by_id_.size())
        iid_by_id_.resize(std::min<size_t>(timeline::kNameIds, std::max<size_t>(n.id + 1, 2 * iid_by_id_.size())));
      iid_by_id_[n.id] = static_cast<uint32_t>(iid);
    }
    return iid;
  }
  // The event's name: its iid, interned (defined in the next packet when
  // new), or 0: written inline (the table is full).
  uint64_t name_iid(std::string_view name) {
    // Consecutive slices often share a name (an instruction's stages).
    if (last_iid_ && names_.text(last_iid_) == name) return last_iid_;
    const uint64_t iid = names_.find_or_add(name);
    if (iid == 0) return 0;
    if (iid > defined_) {  // new: defined by the packet that first uses it
      defined_ = iid;
      sub_.clear();
      pb::put_uint(sub_, kEnIid, iid);
      pb::put_bytes(sub_, kEnName, name);
      pb::put_bytes(interned_, kIdEventNames, sub_);
    }
    last_iid_ = iid;
    return iid;
  }
  static size_t uint_size(uint32_t field, uint64_t v) {
    return pb::varint_size(uint64_t{field} << 3) + pb::varint_size(v);
  }
  static size_t fixed_size(uint32_t field) { return pb::varint_size((uint64_t{field} << 3) | pb::kFixed64) + 8; }
  // The event's name: its iid, or (the table full) the text inline.
  static size_t name_size(uint64_t iid, std::string_view name) {
    return iid ? uint_size(kTeNameIid, iid) : pb::len_field_size(kTeName, name.size());
  }
  static void write_name(char *&p, uint64_t iid, std::string_view name) {
    if (iid) {
      pb::wr_uint(p, kTeNameIid, iid);
    } else {
      pb::wr_bytes(p, kTeName, name.data(), name.size());
    }
  }
  // A TracePacket holding a TrackEvent of n bytes, then the interned data
  // made since the last packet: begin_packet writes its head into the
  // output and returns where the event's n bytes go; end_packet(end of
  // them) checks their count, adds the interned data and keeps the packet.
  // uses_state: the event names an interned string (a SLICE_END or a
  // counter value does not, and saves the flags).
  char *begin_packet(uint64_t ts, bool uses_state, size_t n) {
    // The packet's own fields are sized, then written in place (staged in a
    // local array, their copy became a memcpy call per packet).
    uint64_t flags = 0;
    if (first_)
      flags = kSeqIncrementalStateCleared | (uses_state ? kSeqNeedsIncrementalState : 0);
    else if (uses_state)
      flags = kSeqNeedsIncrementalState;
    const bool first = first_;
    first_ = false;
    const size_t fn = uint_size(kPktTimestamp, ts) + uint_size(kPktSequenceId, sequence_) +
                      (flags ? uint_size(kPktSequenceFlags, flags) : 0) +
                      (first ? uint_size(kPktFirstOnSequence, 1) : 0);
    const size_t len = fn + pb::len_field_size(kPktTrackEvent, n) +
                       (interned_.empty() ? 0 : pb::len_field_size(kPktInternedData, interned_.size()));
    char *p = raw_.room(pb::kMaxLenFieldHead + len);
    pb::wr_tag(p, kTracePacket, pb::kLen);
    pb::wr_varint(p, len);
    pb::wr_uint(p, kPktTimestamp, ts);
    pb::wr_uint(p, kPktSequenceId, sequence_);
    if (flags) pb::wr_uint(p, kPktSequenceFlags, flags);
    if (first) pb::wr_uint(p, kPktFirstOnSequence, 1);
    pb::wr_tag(p, kPktTrackEvent, pb::kLen);
    pb::wr_varint(p, n);
    event_end_ = p + n;
    return p;
  }
  void end_packet(char *p) {
    // A size counted unlike it was written would corrupt every packet after.
    if (p != event_end_) fail(USCOPE_ERR_INTERNAL, "perfetto: a track event was sized wrong");
    if (!interned_.empty()) {
      pb::wr_bytes(p, kPktInternedData, interned_.data(), interned_.size());
      interned_.clear();
    }
    raw_.commit(p);
  }
  void packet() {
    char *p = raw_.room(pb::len_field_size(kTracePacket, pkt_.size()));
    pb::wr_bytes(p, kTracePacket, pkt_.data(), pkt_.size());
    raw_.commit(p);
  }

  RawOut raw_;
  const uint64_t sequence_;
  char *event_end_ = nullptr;
  std::vector<uint64_t> arg_iid_;
  bool first_ = true;
  std::string sub_, desc_, interned_, pkt_;
  NameTable names_;
  std::vector<uint32_t> iid_by_id_;  // Name id -> iid (0: not known yet)
  uint64_t defined_ = 0;  // names_' iids up to this one are in the file
  std::vector<std::pair<const char *, uint64_t>> arg_iids_;  // the keys outlive the export
  uint64_t last_iid_ = 0;
};

}  // namespace

void export_perfetto(Job &job) {
  OutFile f(job.output);
  std::mutex shared;
  PerfettoEncoder enc(f, &shared, kMainSequence);
  timeline::run(job, enc, [&] { return std::make_unique<PerfettoEncoder>(f, &shared, kSideSequence); });
  job.stats.bytes_out = f.bytes();
  f.publish();
}

}  // namespace uscope::exporter
