// The cpu protocol's analysis (include/uscope/analysis.h, the reference's
// uscope-cpu CpuTrace): the protocol resolved from the schema, counters,
// buffers, instructions rebuilt from the stream with their stage spans, and
// analyze_performance. Built over a TraceReader it does not own.
//
// Instructions are rebuilt one segment at a time (SegmentDecode) and kept in
// a small LRU cache. An instruction alive across a segment boundary appears
// in both segments: in the first one open at its end, in the next one as a
// catalog slot already valid in its start state; InsnStream stitches the
// pieces back together in order, so a query decodes only the segments around
// its window (plus the few before it that hold the fetch of instructions
// still alive at its start) and memory stays bounded whatever the file size.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader/replay_rider.hpp"
#include "reader/scope_presence.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/analysis.h"

namespace uscope::analysis {

class ElfInfo;

struct CpuIds {
  uint16_t scope = 0;
  uint64_t period_ps = 1000;
  uint16_t entities = 0;
  uint16_t f_entity_id = 0, f_pc = 0;
  int32_t f_inst_bits = -1;
  uint16_t num_slots = 0;
  int32_t ev_stage = -1, ev_annotate = -1, ev_dependency = -1, ev_flush = -1, ev_stall = -1;
  // Payload offsets of the fields the decoder reads (spec cpu §5), found by
  // name so that extra fields do not move them.
  uint32_t stage_off_id = 0, stage_off_stage = 4;
  uint32_t ann_off_id = 0, ann_off_text = 4;
  uint32_t dep_off_src = 0, dep_off_dst = 4;
  uint32_t flush_off_id = 0, flush_off_reason = 4;
  uint32_t stall_off_reason = 0;
  uint8_t stall_enum = 0xFF;
};

// One instruction as rebuilt from one segment (or stitched from several).
struct InsnPiece {
  enum : uint8_t { kStartsBefore = 1, kOpenAtEnd = 2, kHasBits = 4, kDisasmAnnotation = 8, kIdSet = 16 };
  uint32_t entity_id = 0;
  uint16_t slot = 0;
  uint8_t status = USCOPE_INSN_IN_FLIGHT;
  uint8_t flags = 0;
  uint64_t pc = 0;
  uint32_t inst_bits = 0;
  uint32_t flush_reason = 0;
  uint64_t first_cycle = 0, last_cycle = 0;
  // A piece that starts before its segment: the stage it was in at the
  // segment's start ended at pre_end (its first transition, or its end).
  uint64_t pre_end = 0;
  // Its open stage at the end of the segment (kOpenAtEnd), to be continued.
  int32_t cur_stage = -1;
  uint64_t cur_start = 0;
  uint32_t disasm_text = UINT32_MAX;  // string-table index of the annotation that disassembles it
  // Ranges in the segment's arrays, contiguous per piece.
  uint32_t span_begin = 0, span_count = 0;
  uint32_t ann_begin = 0, ann_count = 0;
  uint32_t dep_begin = 0, dep_count = 0;
  // The instruction's simulator id: unique per (fetch cycle, catalog slot).
  uint64_t sim_id(uint32_t slots) const { return first_cycle * slots + slot; }
};

struct SegmentDecode {
  size_t index = 0;
  bool ok = true;  // false: the segment did not decode; it holds nothing
  // false: decoded only up to `upto` (its frames after it not visited); the
  // pieces open there are marked kOpenAtEnd like those open at its end.
  bool complete = true;
  uint64_t upto = UINT64_MAX;
  uint64_t first_cycle = 0, last_cycle = 0;  // last_cycle: of the last frame decoded
  std::vector<InsnPiece> pieces;  // in creation order: kStartsBefore ones first, then by fetch
  std::vector<uscope_stage_span_t> spans;
  std::vector<uint32_t> annotations;  // string-table indices
  std::vector<uint32_t> deps;         // src entity ids
  struct Stall {
    uint64_t cycle;
    uint32_t reason;
  };
  std::vector<Stall> stalls;
  size_t bytes() const;
};

// A finished instruction: a reusable record (its vectors keep their capacity).
struct Insn {
  InsnPiece head;  // ids, status, cycles; the ranges in it are unused
  std::vector<uscope_stage_span_t> spans;
  std::vector<uint32_t> annotations;
  std::vector<uint32_t> deps;
  bool done = false;
  uint64_t sim_id(uint32_t slots) const { return head.sim_id(slots); }
};

class CpuTrace;

// Instructions meeting [start, end] in fetch order, optionally of one entity.
class InsnStream {
 public:
  InsnStream(CpuTrace &t, uint64_t start, uint64_t end, std::optional<uint32_t> entity);
  // The next instruction, or nullptr at the end. Valid until the next call.
  const Insn *next();
  // Stall events per stall_reason value within [start, end] of the segments
  // decoded so far (all of them once next() returned nullptr).
  const std::vector<uint64_t> &stalls() const { return stalls_; }

  // The same instructions in no particular order, each as a view valid
  // during the call: an instruction whole within one segment is read in
  // place, with no record built (what analyze needs over a long range).
  struct View {
    const InsnPiece &head;
    const uscope_stage_span_t *spans;
    size_t num_spans;
  };
  template <class F>
  void scan(F &&f) {
    struct Thunk {
      static void call(void *ctx, const View &v) { (*static_cast<F *>(ctx))(v); }
    };
    sink_ = &Thunk::call;
    sink_ctx_ = &f;
    while (step()) {
    }
    sink_ = nullptr;
  }

 private:
  bool step();  // decode the next segment into the queue; false at the end
  // The decode of segment i this stream needs: within the window, all of
  // it; at its last segment (and past it), up to a little after the window,
  // unless an instruction it wants is still open there.
  const SegmentDecode &decode_for(size_t i);
  void add_piece(const SegmentDecode &d, const InsnPiece &p);
  void finish(Insn *insn);
  Insn *take();
  bool wanted(const Insn &i) const;

  CpuTrace &t_;
  uint64_t start_, end_;
  std::optional<uint32_t> entity_;
  size_t seg_ = 0, last_seg_ = 0, end_seg_ = 0;
  bool started_ = false;
  bool done_all_ = false;
  std::deque<Insn *> queue_;                  // fetch order; emitted from the front once done
  std::unordered_map<uint32_t, Insn *> open_;  // by slot: open at the end of the last segment decoded
  std::vector<std::unique_ptr<Insn>> pool_;
  std::vector<Insn *> free_;
  std::unordered_map<uint32_t, Insn *> carried_;  // open_ of the previous segment, being matched
  std::vector<uint64_t> stalls_;
  Insn *current_ = nullptr;
  void (*sink_)(void *, const View &) = nullptr;  // scan(): finished instructions go here, not to queue_
  void *sink_ctx_ = nullptr;
};

// Every buffer's contents at a cycle (uscope_cpu_trace_buffers_at).
struct BufferSnapshot {
  struct Slot {
    uint32_t slot = 0;
    std::vector<uint64_t> fields;
    bool has_entity = false;
    std::vector<uint64_t> entity_fields;
  };
  struct Buffer {
    uint32_t capacity = 0;
    std::vector<Slot> slots;
    std::vector<uscope_buffer_property_t> props;
    std::vector<uscope_pointer_pair_t> pairs;
  };
  std::vector<Buffer> buffers;
  // The catalog fields shown with each slot's entity: those after entity_id
  // and pc (the reference's choice).
  std::vector<std::string> entity_field_names;
  std::vector<const char *> entity_field_ptrs;
};

class CpuTrace {
 public:
  CpuTrace(TraceReader &r, const uscope_cpu_trace_options_t &opts);
  ~CpuTrace();

  TraceReader &reader() { return r_; }
  const CpuIds &ids() const { return ids_; }
  uint64_t period_ps() const { return ids_.period_ps; }
  uint64_t max_cycle() const;
  uint64_t cycle_of(uint64_t time_ps) const { return time_ps / ids_.period_ps; }
  const std::string &scope_name() const { return scope_name_; }
  const std::string &isa() const { return isa_; }
  const std::string &elf_path() const { return elf_path_; }
  ElfInfo *elf() { return elf_.get(); }
  const std::string &elf_note() const { return elf_note_; }
  // Function, file and line of pc from the ELF (empty without one).
  const struct SourceLine *locate(uint64_t pc);
  const std::vector<std::string> &stage_names() const { return stages_; }
  // The multiplier of sim_id: the catalog's slots, or the wire format's 65,536 in
  // files of the reference's Rust writer, whose slots are instruction ids (COMPAT 27).
  uint32_t sim_id_slots() const { return r_.end_of_segment_checkpoints() ? 0x10000u : ids_.num_slots; }
  const std::vector<std::pair<std::string, std::string>> &metadata() const { return metadata_; }
  const std::string &version() const { return version_; }

  struct Counter {
    std::string name;
    uint16_t storage_id;
    uint32_t tsum_index;
  };
  const std::vector<Counter> &counters() const { return counters_; }
  uint32_t find_counter(const char *name) const;  // throws NOT_FOUND naming the known ones
  struct Buffer {
    std::string name;
    uint16_t storage_id;
  };
  const std::vector<Buffer> &buffers() const { return buffers_; }
  uint32_t find_buffer(const char *name) const;

  // ── counters ──
  uint64_t counter_value(uint32_t c, uint64_t cycle);
  void counter_series(uint32_t c, uint64_t start, uint64_t count, uint64_t *out);
  // Occupied slots of buffer b at each cycle of [start, start + count).
  void buffer_occupancy(uint32_t b, uint64_t start, uint64_t count, uint32_t *out);
  // Several counters' values and buffers' occupancies over [start, end] in
  // ONE replay (a per-series call would decompress the trace once per
  // series): f(k, cycle, value) for each series k at start, then at each
  // cycle whose value differs from the cycle before's, in time order.
  struct Series {
    uint16_t storage_id;
    bool occupancy;  // the buffer's occupied slots, else the counter's value
  };
  // seen, when given, is told the scopes of every item of the segments the
  // replay reads whole (scope_presence.hpp), for a later pass to skip by.
  // (SeriesPass below is the same as an object, to ride another replay.)
  void series_changes(const std::vector<Series> &series, uint64_t start, uint64_t end,
                      const std::function<void(uint32_t, uint64_t, uint64_t)> &f, ScopePresence *seen = nullptr);
  // Returns true when exact.
  bool counter_downsample(uint32_t c, uint64_t start, uint64_t end, uint32_t n, uscope_counter_bucket_t *out);

  // ── state ──
  // The storages after the frames at or before cycle's time (the reference's
  // convention: cycle * period).
  std::vector<StorageState> state_at_cycle(uint64_t cycle) { return r_.state_at(cycle * ids_.period_ps); }
  void buffers_at(uint64_t cycle, BufferSnapshot &out);
  // The states at n ascending cycles, in one pass.
  void states_at(const uint64_t *cycles, size_t n, std::vector<StorageState> *out);

  // ── instructions ──
  // Segment i's instructions, from its start up to the frames of cycle
  // `upto` at least (all of it by default). Cached.
  const SegmentDecode &decode(size_t segment, uint64_t upto = UINT64_MAX);
  // Segment range [first, last] whose cycles meet [start, end]; false when none.
  bool segments_for(uint64_t start, uint64_t end, size_t *first, size_t *last) const;
  uint64_t segment_first_cycle(size_t i) const;
  uint64_t segment_last_cycle(size_t i) const;
  // The disassembly text of an instruction ("0x<pc> <mnemonic operands>").
  // Valid until the next call (a cached text, or the trace's string).
  const std::string &disasm(const Insn &i);
  const std::string &string_at(uint32_t index) const;

  // ── analyze ──
  struct Report {
    uscope_perf_report_t head{};
    std::vector<uscope_counter_summary_t> counters;
    std::vector<uscope_buffer_snapshot_t> buffers;
    std::vector<uscope_stage_latency_t> stages;
    std::vector<uscope_stall_count_t> stalls;
  };
  void analyze(uint64_t start, uint64_t end, Report &out);

 private:
  // Per-cycle values read(state of storage sid) over [start, start + count), in one pass.
  template <class T, class Read>
  void storage_series(uint16_t sid, uint64_t start, uint64_t count, Read read, T *out);
  void resolve(const char *scope);
  void build_metadata();
  void open_elf(const char *path);
  SegmentDecode decode_uncached(size_t segment, uint64_t upto);
  std::string disasm_uncached(const Insn &i);

  static constexpr size_t kDisasmCacheSize = 4096;  // a power of two
  struct DisasmCacheEntry {
    uint64_t pc = 0;
    uint32_t bits = 0;
    bool valid = false;
    std::string text;
  };
  std::vector<DisasmCacheEntry> disasm_cache_ = std::vector<DisasmCacheEntry>(kDisasmCacheSize);

  TraceReader &r_;
  CpuIds ids_;
  std::string scope_name_, isa_, elf_path_, version_;
  std::unique_ptr<ElfInfo> elf_;
  std::string elf_note_;  // why the trace's cpu.elf_path is not in use, or ""
  std::vector<std::string> stages_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::vector<Counter> counters_;
  std::vector<Buffer> buffers_;
  uint32_t cache_cap_ = 8;
  std::list<SegmentDecode> cache_;  // most recently used first
  SegmentDecode spare_;             // the last one evicted, whose vectors the next decode reuses
  struct DecodeHint {
    size_t pieces = 0, spans = 0, anns = 0, deps = 0;
  } hint_;  // a little more than the last decode's sizes
  // decode_uncached's working arrays, kept from one segment to the next:
  // made per segment, they were allocated, grown, and handed back to the
  // system at every segment (page faults and copies on the decode worker).
  struct DecodeScratch {
    struct Span {
      uint32_t piece;
      uscope_stage_span_t span;
    };
    std::vector<int32_t> by_slot;
    std::vector<Span> spans;
    std::vector<std::pair<uint32_t, uint32_t>> anns, deps;  // piece, value
    std::vector<std::pair<uint32_t, int32_t>> closed_now;  // entity id, piece
  } scratch_;
  // States analyze wants, filled by decode_uncached when its replay passes
  // their cycle (one replay instead of two).
  struct Snapshot {
    uint64_t cycle;
    std::vector<StorageState> *out;
    bool taken;
  };
  std::vector<Snapshot> snapshots_;
  bool slots_past_catalog_ = false;  // a decode met COMPAT 27 ops: see Builder::skipped_op
  friend class InsnStream;
};

// CpuTrace::series_changes as a pass that can ride another pass's replay of
// the same reader (ReplayRider): the constructor tells each series' value at
// start, the segments ridden tell the changes, finish() replays on its own
// what no host gave it and tells the last ones. f is called from the thread
// that replays (the host's, while riding). The CpuTrace, the series and seen
// must outlive the pass.
class SeriesPass final : public ReplayRider {
 public:
  using Fn = std::function<void(uint32_t, uint64_t, uint64_t)>;
  SeriesPass(CpuTrace &t, const std::vector<CpuTrace::Series> &series, uint64_t start, uint64_t end, Fn f,
             ScopePresence *seen = nullptr);
  // The segments not ridden, replayed here, then the changes still pending.
  void finish();

  // ── ReplayRider; also replay()'s visitor in finish() ──
  void begin_segment(size_t i, const std::vector<StorageState> &states) override;
  void frame(uint64_t time) override;
  void op(uint64_t time, const DeltaOp &o) override;
  void event(uint64_t, uint16_t id, const uint8_t *, uint32_t) override {
    if (taking_ && seen_) seen_->event(id);
  }
  void end_segment(size_t i, bool whole) override;

 private:
  uint64_t read(uint32_t k, const StorageState &st) const {
    return series_[k].occupancy ? st.occupancy() : st.get(0, 0);
  }
  // A value is told at the cycle its frame ends: the storages touched since
  // the last frame are "dirty"; at the next frame of another cycle their
  // series' values are read (capture) and the changed ones told (tell). A
  // segment's end captures too, while its states still exist (a host's are
  // gone when finish() runs); the telling waits for the next cycle, which
  // may go on in the next segment (several clocks: times of one cycle).
  void capture();
  void tell();

  CpuTrace &t_;
  const std::vector<CpuTrace::Series> &series_;
  uint64_t start_, end_;
  Fn f_;
  ScopePresence *seen_;
  std::vector<std::vector<uint32_t>> by_storage_;  // per storage, the series that read it
  std::vector<uint64_t> shown_;                    // per series, the value told last
  std::vector<uint64_t> value_;                    // per series, the value captured last
  std::vector<uint16_t> dirty_;                    // storages touched since the last capture
  std::vector<uint8_t> is_dirty_;
  std::vector<uint32_t> captured_;                 // series captured since the last tell, in order
  std::vector<uint8_t> is_captured_;
  uint64_t cycle_ = 0;
  size_t next_ = 1, last_ = 0;       // the segments still wanted: [next_, last_] (none when next_ > last_)
  bool done_ = false;                // a frame past end was seen: nothing more is wanted
  bool in_segment_ = false;          // between begin_segment and end_segment of a wanted segment
  bool taking_ = false;              // in_segment_, and not done_
  bool alone_ = false;               // finish() is replaying (a frame past end stops it)
  const std::vector<StorageState> *st_ = nullptr;  // the replay's states
  std::vector<StorageState> own_;                   // finish()'s
};

}  // namespace uscope::analysis
