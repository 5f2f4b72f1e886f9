// The reader core: opens a µScope file, finds its segments (section table
// of a finalized file, or the tail_offset / prev_segment_offset chain of a
// live or crashed one), and answers state_at and events_in_range by loading
// a checkpoint and replaying deltas. Built only on the shared codecs of
// src/format/. Every offset and length is checked against the file size
// before use; malformed input throws uscope::Error with a specific status.
//
// Tolerance (defects.hpp, uscope.h "Tolerant and strict reading"): items and
// segments that do not fit the schema or do not decode are skipped and
// counted in defects(), unless the reader was opened strict (kStrict), where
// the first one throws its kind's status. Errors of the file as a whole (no
// magic, a bad preamble or section table, a broken live chain) and I/O
// errors (a file that shrank under the reader: FileChanged) always throw.
//
// The file is read with pread() into buffers the reader owns, never mapped
// (input_file.hpp): a file truncated or rewritten under the reader gives
// Error(TRUNCATED) ("... shrank under the reader ...") or CORRUPT, never a
// SIGBUS. The preamble and tables are read once at open (and at each poll);
// a query reads one segment (header already known, checkpoint and
// compressed deltas) into one reused buffer and decompresses its deltas
// into another, so a scan over a large file keeps about one segment
// resident on the heap; the file's pages stay in the shared page cache.
// Open itself keeps the index (segments(): SegmentInfo and the segment
// table's entry, about 100 bytes a segment) and the summary, and decodes
// no more than kGridScanBytes of segment 0 (tolerant reads): its resident
// memory does not grow with the file (tests/unit/test_reader_memory.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "format/compress.hpp"
#include "format/file_codec.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/storage_state.hpp"
#include "format/tsum.hpp"
#include "format/wire.hpp"
#include "reader/defects.hpp"
#include "io/input_file.hpp"

namespace uscope {

// A byte vector whose resize() leaves the new bytes uninitialized. The
// reader sizes its segment buffers for a whole segment but often fills only
// a prefix (state_at, events_in_range, the grid scan at open); zero-filling
// them would make every page resident, megabytes per segment, whatever was
// read. Pages never written stay out of the resident set.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U> &) noexcept {}
  template <class U>
  void construct(U *p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void *>(p)) U;  // default-initialization: no zero-fill
  }
  template <class U, class... A>
  void construct(U *p, A &&...a) {
    ::new (static_cast<void *>(p)) U(std::forward<A>(a)...);
  }
};
using ByteBuffer = std::vector<uint8_t, UninitAllocator<uint8_t>>;

struct SegmentInfo {
  uint64_t offset = 0;
  SegmentHeader header;
  // Its place in the file's list of segments, which defects name: it
  // differs from its index in segments() once a segment before it was left
  // out of the index (a defect of the file's structure).
  uint32_t file_index = 0;
  bool after_gap = false;  // the segment before it in the file was left out
};

struct TimedEvent {
  uint64_t time_ps = 0;
  uint16_t event_type_id = 0;
  const uint8_t *payload = nullptr;  // into the reader's replay buffer
  uint32_t payload_size = 0;
};

// A visitor may also take the ops skipped for a slot past their storage's
// size (COMPAT 27: the reference's Rust cpu writer puts instruction ids
// there), with a member skipped_op(time, op): they are still counted (and
// thrown when strict) and never applied.
template <class V, class = void>
struct HasSkippedOp : std::false_type {};
template <class V>
struct HasSkippedOp<V, std::void_t<decltype(std::declval<V &>().skipped_op(uint64_t{}, std::declval<const DeltaOp &>()))>>
    : std::true_type {};

// What replay() wraps an exception of the caller's visitor in while it
// unwinds through the decoder, so that it is never taken for a segment that
// does not decode; replay() rethrows the original.
struct VisitorError {
  std::exception_ptr inner;
};

class TraceReader {
 public:
  static constexpr uint32_t kStrict = USCOPE_READ_STRICT;

  // Throws Error: IO (cannot open, not a regular file), BAD_MAGIC,
  // UNSUPPORTED_VERSION, UNKNOWN_COMPRESSION, TRUNCATED, CORRUPT; with
  // kStrict also the status of a defect found at open. Every message starts
  // with the path.
  explicit TraceReader(const std::string &path, uint32_t flags = 0);

  bool strict() const { return strict_; }
  const std::string &path() const { return file_.path(); }
  // What was skipped so far (the counts grow as segments are read).
  const DefectLog &defects() const { return defects_; }
  // The step the timestamps follow (uscope_file_info_t.time_grid_ps).
  uint64_t time_grid_ps() const { return grid_ps_; }
  // COMPAT 9, 28: the file's checkpoints hold their segment's end state.
  bool end_of_segment_checkpoints() const { return eos_; }

  // Read every segment in order and validate everything (uscope_reader_check):
  // items against the schema, values against strings and enums, timestamps
  // against the clocks, checkpoints against the replayed state, the TSUM
  // against a recomputed one. progress(done, total) in bytes of segments.
  void check(const std::function<void(uint64_t, uint64_t)> &progress);

  const FileHeader &header() const { return header_; }
  // The compression method the header names (compress.hpp's table).
  const CompressionMethod &compression() const { return *codec_; }
  bool complete() const { return header_.flags & wire::F_COMPLETE; }
  const Schema &schema() const { return schema_; }
  const std::vector<DutProperty> &dut() const { return dut_; }
  uint64_t checkpoint_interval_ps() const { return interval_; }
  const std::vector<std::string> &strings() const { return strings_; }
  // The summary's index (§6): its parameters, counters and the place of
  // each array, read at open at a size independent of the trace's length.
  // The arrays stay in the file: summary_density and summary_mipmap read
  // the entries asked for, load_summary all of them.
  const std::optional<TsumIndex> &summary() const { return summary_; }
  void summary_density(const TsumArray &a, uint64_t first, size_t n, uint32_t *out) const;
  void summary_mipmap(const TsumArray &a, uint64_t first, size_t n, MipmapEntry *out) const;
  TraceSummary load_summary() const;
  const std::vector<StorageLayout> &layouts() const { return layouts_; }
  const std::vector<SegmentInfo> &segments() const { return segments_; }
  // The raw structures behind the above, for tools and tests that look at
  // the file itself: preamble chunks (payload offsets into the file), the
  // section table and the segment table (both empty unless finalized).
  const std::vector<ChunkRef> &chunks() const { return chunks_; }
  const std::vector<SectionEntry> &sections() const { return sections_; }
  const std::vector<SegmentIndexEntry> &segment_table() const { return segment_table_; }
  // The file size when the reader last looked (open, or a poll that found
  // new segments).
  size_t file_size() const { return static_cast<size_t>(file_.size()); }

  // Segment i's decompressed deltas (deltas_raw_size bytes), valid until the
  // next call on this reader. Throws Error: INVALID_ARGUMENT for i out of
  // range, CORRUPT for a bad blob.
  const uint8_t *deltas(size_t i);

  // The state after every frame with time <= time_ps: storages in schema
  // order. A trace without segments gives the initial (empty) state.
  // Reads one segment: its checkpoint, then its frames up to the first one
  // after time_ps (later frames are neither decompressed, when the codec
  // allows, nor validated).
  std::vector<StorageState> state_at(uint64_t time_ps);

  // Every event with t0 <= time <= t1, in file order. Payload pointers stay
  // valid until the next call on this reader. Reads the events of the frames
  // up to t1 of the segments that meet [t0, t1], and nothing else: no
  // checkpoint, and ops are skipped (replay is what validates them).
  const std::vector<TimedEvent> &events_in_range(uint64_t t0, uint64_t t1);
  // The same for segment i alone (the step of an iterator over a range):
  // its events with t0 <= time <= t1, read the same way.
  const std::vector<TimedEvent> &segment_events(size_t i, uint64_t t0, uint64_t t1);

  // Replay segment i: loads its start state into states (its checkpoint, or
  // with end-of-segment checkpoints the previous segment's; states must
  // come from initial_state(); Error(INVALID_ARGUMENT) for a vector of
  // another size) and calls v.frame/op/event (see decode_deltas) with every
  // op and event that fits the schema; the others are skipped and counted
  // (strict: thrown). Ops of frames at or before `until` are applied to
  // states and visited; later ones are validated only. Returns false when
  // the segment does not decode (counted as segment_undecodable; strict:
  // thrown): v may then have seen the items before the damage. An exception
  // thrown by v propagates unchanged. The decompressed deltas of the last
  // segment read are kept, so replaying it again does not decompress it.
  template <class Visitor>
  bool replay(size_t i, std::vector<StorageState> &states, Visitor &&v,
              uint64_t until = UINT64_MAX);

  std::vector<StorageState> initial_state() const;

  // Where a replay of one segment in parts stands (replay_part). A caller
  // that takes items in batches of its own size (uscope_replay_fill: an
  // array of the caller's capacity) cannot take a whole segment at once and
  // must not buffer one either (a segment holds hundreds of thousands of
  // items): it stops at a frame and resumes there on its next call.
  struct ReplayPart {
    size_t segment = SIZE_MAX;  // in segments()
    size_t offset = 0;          // of the next frame in the segment's deltas
    uint64_t base_ps = 0;       // the time the next frame's delta adds to
    uint64_t last_ps = 0;       // the last frame visited (time_backwards)
    bool started = false;       // the start state is loaded
    bool done = true;           // the segment is finished (or did not decode)
    DefectTally tally;          // found in the segment so far
  };
  // Size the segment buffers for the largest of segments [first, last), so
  // that reading those one after another never grows them (a replay
  // cursor's fills allocate nothing once warm). The pages are not touched:
  // nothing becomes resident before it is read.
  void reserve_segment_buffers(size_t first, size_t last);
  // Set part to the start of segment i (nothing is read yet).
  void replay_part_begin(size_t i, ReplayPart &part) const;
  // Go on replaying part's segment as replay() does (its start state into
  // states on the first call), except that v.frame(t) returns bool: false
  // stops before that frame, and the next call resumes there. Ops of every
  // frame visited are applied. part.done tells that the segment ended.
  // Returns false when the segment does not decode (counted once, as
  // replay() counts it; strict: thrown), with part.done set. The defects met
  // are recorded as one reading of the segment, however many parts it took.
  // Other calls on the reader between parts are allowed: a part decompresses
  // its segment again when another segment was read meanwhile.
  template <class Visitor>
  bool replay_part(std::vector<StorageState> &states, ReplayPart &part, Visitor &&v);

  // Live files: re-read the header and pick up newly committed segments.
  // Returns true when there are new ones. On an error the reader is left as
  // it was before the call: every answer it gave stays available.
  bool poll_new_segments();

 private:
  // Per storage, the bounds an op is checked against (from layouts_), packed
  // so that the per-op check is a few compares on one cache line.
  struct OpBounds {
    uint32_t num_slots, num_fields, num_props;
    // Fields (bits 0-14, bit 15: any field from 15 on) and properties (bits
    // 16-30, bit 31: any from 15 on) whose values name a string or an enum
    // value, checked on SET / PROP_SET (value_bit()).
    uint32_t value_checks;
  };
  static uint32_t value_bit(uint16_t index, bool prop) {
    return (index < 15 ? 1u << index : 1u << 15) << (prop ? 16 : 0);
  }
  // Where a decoding pass is, for the defects it meets.
  struct Pass {
    DefectTally tally;
    uint32_t segment;  // SegmentInfo::file_index, as defects name segments
    uint64_t offset;
    size_t index;      // in segments_
    DefectPlace at(uint64_t t, uint32_t subject = UINT32_MAX) const { return {segment, offset, t, subject}; }
  };
  // A field of an event payload whose value names a string or enum value.
  struct ValueCheck {
    uint32_t offset;
    uint8_t size, type, enum_id;
  };
  // kCheckValues: string references and enum values are checked too
  // (check_values_: strict reads and check(); the values are kept as
  // written either way, so no answer depends on it).
  // kParts: v.frame(t) returns bool, false stops before the frame
  // (replay_part), and the time of the last frame decoded is kept.
  template <bool kStopAfterUntil, class Visitor, bool kCheckValues, bool kParts = false>
  struct Apply;
  // Decode segment i's deltas d (its start state already in states) with
  // Apply<false, V, ...>, the value checks chosen at run time.
  template <class Visitor>
  void apply_deltas(size_t i, const uint8_t *d, std::vector<StorageState> &states, Visitor &v, uint64_t until,
                    Pass &p);

  // What load_segments finds, built aside and swapped in only once all of it
  // has been checked, so that a failed poll leaves the reader untouched.
  struct Index {
    std::vector<SectionEntry> sections;
    std::vector<SegmentIndexEntry> segment_table;
    std::vector<SegmentInfo> segments;
    std::vector<std::string> strings;
    std::optional<TsumIndex> summary;
    uint64_t summary_offset = 0;  // of the summary section in the file
    DefectTally defects;  // of the structure: segments left out of the index
  };
  static void check_flags(uint64_t flags);
  void load_metadata();
  Index load_segments(const FileHeader &h) const;
  void commit(Index &&index);
  // After (re)indexing: end-of-segment checkpoints (COMPAT 28) and the
  // timestamps' grid (COMPAT 29), from what the index and segment 0 show.
  void detect_conventions();
  bool detect_end_of_segment_checkpoints();
  // COMPAT 29: frames a step apart that is not a multiple of the clocks'
  // period are counted into p (strict: thrown); step is the greatest common
  // step seen (jumps longer than a checkpoint interval left out).
  struct GridScan {
    const TraceReader &r;
    Pass p;
    uint64_t clock_gcd, interval;
    uint64_t step = 0, last = 0;
    bool started = false;
    void frame(uint64_t t);
    void op(uint64_t, const DeltaOp &) {}
    void event(uint64_t, uint16_t, const uint8_t *, uint32_t) {}
  };
  // Tolerant: the frames in the first kGridScanBytes of segment 0's deltas,
  // so that open decompresses (and keeps resident) a bounded prefix, not a
  // whole segment of up to kMaxRawDeltas. Strict: every frame of segment 0,
  // so that a defect anywhere in it still fails the open.
  static constexpr size_t kGridScanBytes = 256 * 1024;
  void scan_grid_of_first_segment();
  // Segment i's start state into st: its checkpoint, or with end-of-segment
  // checkpoints segment i-1's (the empty state for segment 0).
  void load_start_state(size_t i, std::vector<StorageState> &st);
  // A segment failed to decode with e. Returns normally when that is
  // tolerated (and counted into p, which is then recorded); rethrows
  // otherwise (strict, I/O, a file that shrank).
  void segment_failed(Pass &p, const Error &e);
  void record(const Pass &p) { defects_.add_segment(p.segment, p.tally); }
  Pass pass(size_t i) const { return Pass{{}, segments_[i].file_index, segments_[i].offset, i}; }
  // The deltas of segment i, all of them (*avail = raw size), or at least the
  // first `want` bytes when only a prefix is needed (then only about the
  // compressed bytes that hold them are read from the file). The last segment
  // decompressed is kept, so asking again for it costs nothing.
  const uint8_t *segment_deltas(size_t i, size_t want = SIZE_MAX, size_t *avail = nullptr);
  // Bytes of segment i's deltas to decompress to reach time t, with a margin,
  // assuming bytes roughly proportional to time. A wrong guess costs a second
  // decompression of the whole blob, never a wrong answer.
  size_t deltas_for_time(size_t i, uint64_t t) const;
  // The start state of segment i into states, then its frames up to time t
  // (a segment that does not decode: state_before(i)).
  void replay_until(size_t i, std::vector<StorageState> &states, uint64_t t);
  void state_before(size_t i, std::vector<StorageState> &states);
  // The first n bytes of segment i's deltas d applied to st up to time t
  // (Apply<true, ...>); returns decode_deltas' result.
  size_t apply_until(size_t i, const uint8_t *d, size_t n, std::vector<StorageState> &st, uint64_t t, Pass &p);
  // Events of segment i in [t0, t1], appended to events_ (none of a segment
  // that does not decode).
  void collect_events(size_t i, uint64_t t0, uint64_t t1);
  // The slow paths of Apply: an op or event that does not fit the schema,
  // a value past its strings or enum, a frame whose time went backwards.
  // Cold and out of line: the per-item fast path stays a few compares.
#define USCOPE_COLD __attribute__((cold, noinline))
  USCOPE_COLD void bad_op(Pass &p, const DeltaOp &op, uint64_t t) const;
  USCOPE_COLD bool bad_event(Pass &p, uint16_t id, uint32_t n, uint64_t t) const;  // true: skip it
  USCOPE_COLD void check_value(Pass &p, const DeltaOp &op, uint64_t t) const;
  void check_event_values(Pass &p, uint16_t id, const uint8_t *payload, uint64_t t) const;
  USCOPE_COLD void time_backwards(Pass &p, uint64_t t, uint64_t last) const;
#undef USCOPE_COLD
  bool value_ok(uint8_t type, uint8_t enum_id, uint64_t v) const;
  // Segment i's checkpoint followed by its compressed deltas, at least the
  // first `len` bytes of them, read from the file into body_ (kept: asking
  // again for bytes of the same segment reads only what is missing, and
  // never moves the bytes already there). Throws Error(TRUNCATED) when the
  // file has shrunk since it was indexed.
  const uint8_t *segment_body(size_t i, size_t len = SIZE_MAX);
  // The whole-file wrapper of the constructor (adds the path to messages).
  void open(const std::string &path);

  InputFile file_;
  bool strict_ = false;
  DefectLog defects_;
  DefectTally index_defects_;  // of the last load_segments()
  DefectTally conventions_;    // of detect_conventions()
  bool check_values_ = false;  // strict, or inside check(): see Apply
  bool eos_ = false;          // end-of-segment checkpoints (COMPAT 9, 28)
  bool eos_checked_ = false;  // detect_conventions() has seen segment 0
  bool grid_checked_ = false;
  uint64_t clock_gcd_ = 0;    // gcd of the clocks' periods; 0: none has one
  uint64_t grid_ps_ = 0;      // time_grid_ps()
  std::vector<std::vector<ValueCheck>> event_checks_;  // per event type
  std::vector<uint8_t> event_has_checks_;
  std::vector<std::array<uint64_t, 4>> enum_values_;  // per enum: its values as a bit set
  FileHeader header_;
  std::vector<ChunkRef> chunks_;
  std::vector<SectionEntry> sections_;
  std::vector<SegmentIndexEntry> segment_table_;
  Schema schema_;
  std::vector<DutProperty> dut_;
  uint64_t interval_ = 0;
  std::vector<std::string> strings_;
  std::optional<TsumIndex> summary_;
  uint64_t summary_offset_ = 0;
  TsumReadAt summary_read() const;
  TsumReadAt summary_read_at(uint64_t section_offset) const;
  std::vector<StorageLayout> layouts_;
  std::vector<OpBounds> op_bounds_;
  std::vector<uint32_t> event_sizes_;
  std::vector<SegmentInfo> segments_;
  const CompressionMethod *codec_ = nullptr;  // set by the constructor, never null after
  ByteBuffer body_;  // segment body_segment_'s checkpoint + compressed deltas
  size_t body_segment_ = SIZE_MAX;
  size_t body_valid_ = 0;  // leading bytes of body_ read from the file
  ByteBuffer deltas_;  // reused replay buffer
  size_t deltas_segment_ = SIZE_MAX;  // whose deltas deltas_ holds (a prefix of)
  size_t deltas_valid_ = 0;           // how many leading bytes of deltas_ are valid
  std::vector<TimedEvent> events_;
  std::vector<uint8_t> event_payloads_;  // payloads of events_: the first payloads_used_ bytes
  size_t payloads_used_ = 0;
};

// Checks every op and event against the schema and applies the ops of
// frames at or before `until`; what does not fit is skipped and counted
// (strict: thrown) through the reader's out-of-line slow paths. With
// kStopAfterUntil the first frame after `until` ends the decoding
// (state_at); otherwise later frames are still checked, and their events
// visited (replay's contract). A frame whose time is before the previous
// one's is skipped with its items (FrameStep::kSkip).
template <bool kStopAfterUntil, class Visitor, bool kCheckValues, bool kParts>
struct TraceReader::Apply {
  Apply(const TraceReader &reader, std::vector<StorageState> &states, Visitor &visitor, uint64_t u,
        Pass &pass, uint64_t time_start)
      : r(reader),
        st(states.data()),
        bounds(reader.op_bounds_.data()),
        num_storages(reader.op_bounds_.size()),
        event_sizes(reader.event_sizes_.data()),
        event_checks(reader.event_has_checks_.data()),
        num_events(reader.event_sizes_.size()),
        v(visitor),
        until(u),
        p(pass),
        last_t(time_start),
        decoded_t(time_start) {}

  // Plain copies of what every item needs, so that the chain of loads per op
  // is short (stores into the state bytes may alias anything, so whatever
  // sits behind a pointer is loaded again after each of them).
  const TraceReader &r;
  StorageState *st;  // states.size() == num_storages: made by initial_state()
  const OpBounds *bounds;
  size_t num_storages;
  const uint32_t *event_sizes;
  const uint8_t *event_checks;
  size_t num_events;
  Visitor &v;
  uint64_t until;
  Pass &p;
  uint64_t last_t;
  uint64_t decoded_t;  // kParts: the last frame decoded, visited or not

  // The caller's visitor, with its exceptions marked as its own (VisitorError).
  // Always inline: left out of line (as GCC does once the visitor's body is
  // more than a counter, e.g. the C ABI's fill), it is a call per item, which
  // cost that replay about a third of its time.
  template <class F>
  static inline __attribute__((always_inline)) void call(F &&f) {
    try {
      f();
    } catch (...) {
      throw VisitorError{std::current_exception()};
    }
  }

#define USCOPE_HOT inline __attribute__((always_inline))
  USCOPE_HOT FrameStep frame(uint64_t t) {
    // A frame earlier than the one before it (a wrapped delta) is decoded
    // but not visited: its items are skipped, and counted as one defect.
    if (__builtin_expect(t < last_t, 0)) {
      r.time_backwards(p, t, last_t);
      if constexpr (kParts) decoded_t = t;
      return FrameStep::kSkip;
    }
    if constexpr (kParts) {
      // Asked before anything of the frame is kept, so that a stop leaves
      // last_t and decoded_t where a resumed decoding must start from.
      bool go = true;
      call([&] { go = v.frame(t); });
      if (!go) return FrameStep::kStop;
      last_t = decoded_t = t;
      return FrameStep::kVisit;
    }
    last_t = t;
    if constexpr (kStopAfterUntil) {
      return t <= until ? FrameStep::kVisit : FrameStep::kStop;
    } else {
      call([&] { v.frame(t); });
      return FrameStep::kVisit;
    }
  }
  // An op on a slot past its storage's size, once counted: to the visitor
  // that takes them (HasSkippedOp).
  void skipped(uint64_t t, const DeltaOp &o, const OpBounds &b) {
    if constexpr (!kStopAfterUntil && HasSkippedOp<Visitor>::value) {
      if (o.slot >= b.num_slots && (o.action == wire::DA_SLOT_CLEAR || o.field < b.num_fields) && t <= until)
        call([&] { v.skipped_op(t, o); });
    }
  }
  USCOPE_HOT void op(uint64_t t, const DeltaOp &o) {
    // Checks inline, a few compares against bounds; anything out of range
    // goes to bad_op, which counts (or throws) the precise defect.
    if (__builtin_expect(o.storage_id >= num_storages, 0)) return r.bad_op(p, o, t);
    const OpBounds &b = bounds[o.storage_id];
    StorageState &s = st[o.storage_id];
    const bool apply = kStopAfterUntil || t <= until;
    switch (o.action) {  // §8.6.2 with COMPAT 13
      case wire::DA_SLOT_SET:
        if (__builtin_expect(o.slot >= b.num_slots || o.field >= b.num_fields, 0)) {
          r.bad_op(p, o, t);
          return skipped(t, o, b);
        }
        if constexpr (kCheckValues) {
          if (__builtin_expect(b.value_checks & value_bit(o.field, false), 0)) r.check_value(p, o, t);
        }
        if (apply) s.set(o.slot, o.field, o.value);
        break;
      case wire::DA_SLOT_CLEAR:
        if (__builtin_expect(o.slot >= b.num_slots, 0)) {
          r.bad_op(p, o, t);
          return skipped(t, o, b);
        }
        if (apply) s.clear(o.slot);
        break;
      case wire::DA_SLOT_ADD:
        if (__builtin_expect(o.slot >= b.num_slots || o.field >= b.num_fields, 0)) return r.bad_op(p, o, t);
        if (apply) s.add(o.slot, o.field, o.value);
        break;
      case wire::DA_PROP_SET:
        if (__builtin_expect(o.field >= b.num_props, 0)) return r.bad_op(p, o, t);
        if constexpr (kCheckValues) {
          if (__builtin_expect(b.value_checks & value_bit(o.field, true), 0)) r.check_value(p, o, t);
        }
        if (apply) s.prop_set(o.field, o.value);
        break;
      default:
        return r.bad_op(p, o, t);
    }
    if constexpr (!kStopAfterUntil) {
      if (apply) call([&] { v.op(t, o); });
    }
  }
  USCOPE_HOT void event(uint64_t t, uint16_t id, const uint8_t *e, uint32_t n) {
    if (__builtin_expect(id >= num_events || n != event_sizes[id], 0)) {
      if (r.bad_event(p, id, n, t)) return;
    }
    if constexpr (kCheckValues) {
      if (__builtin_expect(event_checks[id], 0)) r.check_event_values(p, id, e, t);
    }
    if constexpr (!kStopAfterUntil) call([&] { v.event(t, id, e, n); });
  }
#undef USCOPE_HOT
};

template <class Visitor>
void TraceReader::apply_deltas(size_t i, const uint8_t *d, std::vector<StorageState> &states, Visitor &v,
                               uint64_t until, Pass &p) {
  const SegmentHeader &h = segments_[i].header;
  const bool interleaved = header_.flags & wire::F_INTERLEAVED_DELTAS;
  const bool compact = header_.flags & wire::F_COMPACT_DELTAS;
  if (check_values_) {
    Apply<false, Visitor, true> apply(*this, states, v, until, p, h.time_start_ps);
    decode_deltas(d, h.deltas_raw_size, h.time_start_ps, interleaved, compact, apply);
  } else {
    Apply<false, Visitor, false> apply(*this, states, v, until, p, h.time_start_ps);
    decode_deltas(d, h.deltas_raw_size, h.time_start_ps, interleaved, compact, apply);
  }
}

template <class Visitor>
bool TraceReader::replay(size_t i, std::vector<StorageState> &states, Visitor &&v, uint64_t until) {
  if (i >= segments_.size()) fail(USCOPE_ERR_INVALID_ARGUMENT, "replay: segment %zu of %zu", i, segments_.size());
  if (states.size() != layouts_.size())
    fail(USCOPE_ERR_INVALID_ARGUMENT, "replay: %zu states for %zu storages (use initial_state())",
         states.size(), layouts_.size());
  Pass p = pass(i);
  try {
    load_start_state(i, states);
    apply_deltas(i, segment_deltas(i), states, v, until, p);
  } catch (const VisitorError &e) {
    record(p);
    std::rethrow_exception(e.inner);
  } catch (const Error &e) {
    segment_failed(p, e);  // rethrows unless tolerated
    record(p);
    return false;
  }
  record(p);
  return true;
}

template <class Visitor>
bool TraceReader::replay_part(std::vector<StorageState> &states, ReplayPart &part, Visitor &&v) {
  const size_t i = part.segment;
  if (part.done || i >= segments_.size())
    fail(USCOPE_ERR_INVALID_ARGUMENT, "replay_part: segment %zu of %zu, done=%d", i, segments_.size(), part.done);
  if (states.size() != layouts_.size())
    fail(USCOPE_ERR_INVALID_ARGUMENT, "replay_part: %zu states for %zu storages (use initial_state())",
         states.size(), layouts_.size());
  Pass p = pass(i);
  // The tally so far goes back into part whichever way this part ends, and
  // is recorded whole: the log keeps the most one reading found. (Copied
  // only when there is something in it: a part may be a few hundred items.)
  if (part.tally.any) p.tally = part.tally;
  auto keep = [&] {
    if (p.tally.any) {
      part.tally = p.tally;
      record(p);
    }
  };
  try {
    if (!part.started) {
      load_start_state(i, states);
      part.started = true;
    }
    const SegmentHeader &h = segments_[i].header;
    const uint8_t *d = segment_deltas(i);
    const bool interleaved = header_.flags & wire::F_INTERLEAVED_DELTAS;
    const bool compact = header_.flags & wire::F_COMPACT_DELTAS;
    const size_t left = h.deltas_raw_size - part.offset;
    auto run = [&](auto &a) {
      part.offset += decode_deltas(d + part.offset, left, part.base_ps, interleaved, compact, a);
      part.base_ps = a.decoded_t;
      part.last_ps = a.last_t;
    };
    if (check_values_) {
      Apply<false, Visitor, true, true> a(*this, states, v, UINT64_MAX, p, part.last_ps);
      a.decoded_t = part.base_ps;
      run(a);
    } else {
      Apply<false, Visitor, false, true> a(*this, states, v, UINT64_MAX, p, part.last_ps);
      a.decoded_t = part.base_ps;
      run(a);
    }
    part.done = part.offset >= h.deltas_raw_size;
  } catch (const VisitorError &e) {
    part.done = true;
    keep();
    std::rethrow_exception(e.inner);
  } catch (const Error &e) {
    part.done = true;
    segment_failed(p, e);  // rethrows unless tolerated
    keep();
    return false;
  }
  keep();
  return true;
}

}  // namespace uscope
