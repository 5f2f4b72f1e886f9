// uscope export --to fst|vcd (docs/export.md "FST and VCD"): a window of
// cycles as waveforms, one signal per (storage, slot, field), a valid bit
// per slot of a sparse storage, one per storage property, and per event type
// a pulse plus its payload fields. One signal model (Signals) feeds either
// writer (WaveSink): VCD by hand, FST through GTKWave's fstapi as Verilator
// ships it (compiled in only when CMake found it: USCOPE_WITH_FST).
//
// Time is the trace's own, in ps (timescale 1 ps), so that a multi-clock
// trace keeps every clock's edges where they were; the window A:B is in the
// cycles of clock 0, as `uscope state --cycle` counts them, and covers
// [A * P, (B + 1) * P - 1] ps (P: clock 0's period).
//
// Streaming: the state at A comes from replaying the segment holding A (its
// checkpoint, then its frames up to A), then every later frame up to B is
// replayed in order; memory is the storages' state plus a few words per
// signal, whatever the trace's length.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cinttypes>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "export/export.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"

#ifdef USCOPE_WITH_FST
#include "fstapi.h"
#endif

namespace uscope::exporter {
namespace {

// ── The writers ──

std::string version() {
  return "libuscope " + std::to_string(USCOPE_VERSION_MAJOR) + "." + std::to_string(USCOPE_VERSION_MINOR) + "." +
         std::to_string(USCOPE_VERSION_PATCH);
}

// What the signal model emits; the VCD and FST writers differ only here.
class WaveSink {
 public:
  virtual ~WaveSink() = default;
  virtual void scope(const std::string &name) = 0;
  virtual void upscope() = 0;
  // A signal of `width` bits (1..64); enum_id: its values' names (FST can
  // show them), or -1. Signals are numbered in the order they are declared.
  virtual void var(const std::string &name, uint32_t width, int enum_id) = 0;
  virtual void end_definitions() = 0;
  virtual void time(uint64_t t) = 0;
  virtual void value(uint32_t sig, uint32_t width, uint64_t v) = 0;
  // Closes the output and publishes it; returns the bytes written.
  virtual uint64_t finish(uint64_t last_time) = 0;
};

// A byte's 8 bits as the characters '0'/'1', most significant first.
struct Bits8 {
  char c[8];
};
constexpr std::array<Bits8, 256> make_bits8() {
  std::array<Bits8, 256> t{};
  for (unsigned v = 0; v < 256; ++v)
    for (unsigned b = 0; b < 8; ++b) t[v].c[7 - b] = static_cast<char>('0' + (v >> b & 1));
  return t;
}
constexpr std::array<Bits8, 256> kBits = make_bits8();

// [p, end) := the low end - p bits of v as '0'/'1', most significant first
// (both formats' text of a value), 8 bits at a time.
void put_bits(char *p, char *end, uint64_t v) {
  while (end - p >= 8) {
    end -= 8;
    std::memcpy(end, kBits[v & 0xff].c, 8);
    v >>= 8;
  }
  while (end > p) {
    *--end = static_cast<char>('0' + (v & 1));
    v >>= 1;
  }
}

// IEEE 1364 §18.2 four-state VCD, two states used. Formatted in place by
// hand (a value change is a few characters: no stream, no snprintf) into
// the output's raw buffer, which OutFile writes from a thread of its own.
class VcdSink final : public WaveSink {
 public:
  VcdSink(const std::string &path, const std::string &comment) : out_(path) {
    put("$comment\n  " + comment + "\n$end\n$version " + version() + " $end\n");
    put("$timescale 1ps $end\n");
  }
  void scope(const std::string &name) override { put("$scope module " + name + " $end\n"); }
  void upscope() override { put("$upscope $end\n"); }
  void var(const std::string &name, uint32_t width, int) override {
    Id id{};
    for (uint32_t i = next_++;; i /= 94) {
      id.c[id.len++] = static_cast<char>('!' + i % 94);
      if (i < 94) break;
    }
    ids_.push_back(id);
    put("$var wire " + std::to_string(width) + ' ' + std::string(id.c, id.len) + ' ' + name + " $end\n");
  }
  void end_definitions() override { put("$enddefinitions $end\n"); }
  void time(uint64_t t) override {
    char *p = at();
    *p++ = '#';
    p = std::to_chars(p, p + 20, t).ptr;
    *p++ = '\n';
    commit(p);
    last_ = t;
  }
  void value(uint32_t sig, uint32_t width, uint64_t v) override {
    char *p = at();
    if (width == 1) {
      *p++ = v & 1 ? '1' : '0';
    } else {
      // Binary without leading zeros (§18.2.1: the value is left-extended).
      *p++ = 'b';
      char *const end = p + (v ? 64 - __builtin_clzll(v) : 1);
      put_bits(p, end, v);
      p = end;
      *p++ = ' ';
    }
    const Id &id = ids_[sig];
    std::memcpy(p, id.c, sizeof id.c);  // all 4: the bytes past len are overwritten next
    p += id.len;
    *p++ = '\n';
    commit(p);
  }
  uint64_t finish(uint64_t last_time) override {
    if (last_time > last_) time(last_time);
    raw_.finish();
    const uint64_t n = out_.bytes();
    out_.publish();
    return n;
  }

 private:
  // Identifier codes: base 94 over the printable characters '!'..'~'
  // (§18.2.3.6), least significant digit first; at most 4 digits for the
  // 2^20 signals Signals allows.
  struct Id {
    char c[4];
    uint8_t len;
  };
  // Where the next bytes go: at most kSlack of them (one value change, one
  // time) before commit().
  static constexpr size_t kSlack = 256;
  char *at() { return raw_.room(kSlack); }
  void commit(const char *end) { raw_.commit(end); }
  // The declarations: text of any length.
  void put(const std::string &s) { raw_.put(s); }
  OutFile out_;
  RawOut raw_{out_};
  std::vector<Id> ids_;
  uint32_t next_ = 0;
  uint64_t last_ = 0;
};

#ifdef USCOPE_WITH_FST
// FST through fstapi, which opens the file by name: OutFile's temporary file,
// renamed over the output by publish().
//
// fstapi's part (its value-change buffer and, at each block, packing every
// signal's changes: it scans each change of a wide signal bit by bit, and
// compresses them) costs more than the replay that makes the changes. So
// fstapi runs on a thread of its own, fed batches of changes, while the
// replay goes on. The replay's side also spells each value as the text
// fstapi takes ('0'/'1', most significant bit first), so that fstapi's
// thread, the slower one, does nothing but call fstapi. fstapi's own
// parallel mode (a new thread and a fresh 132 MiB buffer per block, which
// the next block waits for) was measured slower and is left off. Blocks are
// cut small (kBlockBytes): the per-signal chains fstapi walks at each block
// then stay in the cache (docs/export.md "FST and VCD" has the figures).
class FstSink final : public WaveSink {
 public:
  FstSink(const std::string &path, const std::string &comment, const Schema &schema)
      : out_(path), schema_(schema) {
    ctx_ = fstWriterCreate(out_.temp_path().c_str(), 1);
    if (!ctx_) fail(USCOPE_ERR_IO, "cannot create the FST file %s (fstapi)", path.c_str());
    fstWriterSetTimescale(ctx_, -12);  // 1 ps
    fstWriterSetVersion(ctx_, version().c_str());
    fstWriterSetComment(ctx_, comment.c_str());
    // LZ4 for the blocks' value changes (the default, zlib, is several
    // times slower); fstapi's parallel mode off (see above).
    fstWriterSetPackType(ctx_, FST_WR_PT_LZ4);
    fstWriterSetParallelMode(ctx_, 0);
    enum_tables_.assign(schema.enums.size(), 0);
    batch_.resize(kBatchBytes);
  }
  ~FstSink() override {
    stop();
    if (ctx_) fstWriterClose(ctx_);
  }
  void scope(const std::string &name) override {
    fstWriterSetScope(ctx_, FST_ST_VCD_MODULE, name.c_str(), nullptr);
  }
  void upscope() override { fstWriterSetUpscope(ctx_); }
  void var(const std::string &name, uint32_t width, int enum_id) override {
    if (enum_id >= 0 && static_cast<size_t>(enum_id) < enum_tables_.size()) {
      fstEnumHandle &h = enum_tables_[static_cast<size_t>(enum_id)];
      if (!h) h = enum_table(static_cast<size_t>(enum_id), width);
      if (h) fstWriterEmitEnumTableRef(ctx_, h);
    }
    handles_.push_back(fstWriterCreateVar(ctx_, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, width, name.c_str(), 0));
    widths_.push_back(static_cast<uint8_t>(width));
  }
  // The declarations are made: from here on only the worker calls fstapi.
  void end_definitions() override { worker_ = std::thread([this] { work(); }); }
  void time(uint64_t t) override {
    char *p = room(sizeof(uint32_t) + sizeof t);
    std::memcpy(p, &kTime, sizeof kTime);
    std::memcpy(p + sizeof kTime, &t, sizeof t);
    fill_ += sizeof kTime + sizeof t;
    last_ = t;
  }
  void value(uint32_t sig, uint32_t width, uint64_t v) override {
    char *p = room(sizeof sig + width);
    std::memcpy(p, &sig, sizeof sig);
    put_bits(p + sizeof sig, p + sizeof sig + width, v);
    fill_ += sizeof sig + width;
  }
  uint64_t finish(uint64_t last_time) override {
    if (last_time > last_) time(last_time);
    stop();
    const bool seek_failed = fstWriterGetFseekFailed(ctx_);
    fstWriterClose(ctx_);
    ctx_ = nullptr;
    // fstapi reports no write error of its own beyond a failed seek: the
    // file it closed must at least hold its header block.
    struct stat st {};
    if (seek_failed || ::stat(out_.temp_path().c_str(), &st) != 0 || st.st_size <= 0)
      fail(USCOPE_ERR_IO, "fstapi could not write %s (disk full?)", out_.temp_path().c_str());
    out_.publish();
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  // A batch holds records back to back: a time (kTime, then the time's 8
  // bytes) or a value change (the signal, then its width in '0'/'1'
  // characters, the text fstWriterEmitValueChange takes).
  static constexpr uint32_t kTime = UINT32_MAX;
  // Bytes handed over at a time, and batches waiting at most: a few MiB.
  static constexpr size_t kBatchBytes = 1 << 20, kQueued = 4;
  struct Batch {
    std::vector<char> bytes;
    size_t size = 0;
  };
  // Room for a record of n bytes (at most 4 + 64) in the batch being filled.
  char *room(size_t n) {
    if (fill_ + n > batch_.size()) hand_over();
    return batch_.data() + fill_;
  }
  void hand_over() {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [&] { return full_.size() < kQueued; });
    full_.push_back(Batch{std::move(batch_), fill_});
    if (!spare_.empty()) {
      batch_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      batch_.assign(kBatchBytes, 0);
    }
    fill_ = 0;
    cv_.notify_all();
  }
  // Hands over the last batch and waits until fstapi has every change.
  void stop() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (fill_) full_.push_back(Batch{std::move(batch_), fill_});
      fill_ = 0;
      done_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  void work() {
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      cv_.wait(lk, [&] { return !full_.empty() || done_; });
      if (full_.empty()) return;
      Batch b = std::move(full_.front());
      full_.pop_front();
      cv_.notify_all();
      lk.unlock();
      emit(b.bytes.data(), b.bytes.data() + b.size);
      lk.lock();
      spare_.push_back(std::move(b.bytes));
    }
  }
  void emit(const char *p, const char *end) {
    while (p < end) {
      uint32_t sig;
      std::memcpy(&sig, p, sizeof sig);
      p += sizeof sig;
      if (sig == kTime) {
        uint64_t t;
        std::memcpy(&t, p, sizeof t);
        p += sizeof t;
        // fstapi keeps a block's value changes in memory until they pass
        // 128 MiB (its FST_BREAK_SIZE); the block is cut at kBlockBytes,
        // which also keeps the export's memory bounded (issue 14: <= 128 MB).
        if (pending_ >= kBlockBytes) {
          fstWriterFlushContext(ctx_);
          pending_ = 0;
        }
        fstWriterEmitTimeChange(ctx_, t);
        continue;
      }
      fstWriterEmitValueChange(ctx_, handles_[sig], p);
      p += widths_[sig];
      pending_ += widths_[sig] + 10u;  // at most what fstapi buffers for one change (its fpos + len + 10)
    }
  }

  // The enum's value names, shown by GTKWave in place of the number (an FST
  // enum table: the literals and their values as binary strings).
  fstEnumHandle enum_table(size_t id, uint32_t width) {
    const EnumDef &e = schema_.enums[id];
    if (e.values.empty()) return 0;
    std::vector<std::string> names, vals;
    for (const EnumValue &v : e.values) {
      const char *n = schema_.str(v.name);
      names.emplace_back(n ? n : "?");
      std::string bits(width, '0');
      for (uint32_t b = 0; b < width && b < 8; ++b)
        if (v.value >> b & 1) bits[width - 1 - b] = '1';
      vals.push_back(bits);
    }
    std::vector<const char *> np, vp;
    for (size_t k = 0; k < names.size(); ++k) np.push_back(names[k].c_str()), vp.push_back(vals[k].c_str());
    const char *en = schema_.str(e.name);
    return fstWriterCreateEnumTable(ctx_, en ? en : "enum", static_cast<uint32_t>(np.size()), width, np.data(),
                                    vp.data());
  }
  OutFile out_;
  const Schema &schema_;
  void *ctx_ = nullptr;
  std::vector<fstHandle> handles_;
  std::vector<fstEnumHandle> enum_tables_;
  uint64_t last_ = 0;
  // 4 MiB: on the demo trace 16 MiB blocks (33 MB file) took a third more
  // CPU than 4 MiB ones (36 MB), and 1 MiB ones (43 MB) were no faster.
  static constexpr uint64_t kBlockBytes = 4 << 20;
  uint64_t pending_ = 0;  // bytes of changes fstapi holds since its last block (the worker's)
  std::vector<uint8_t> widths_;  // per signal, as handles_
  std::vector<char> batch_;      // being filled, up to fill_
  size_t fill_ = 0;
  std::thread worker_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Batch> full_;
  std::vector<std::vector<char>> spare_;
  bool done_ = false;
};
#endif

// ── The signal model ──

// A name as both formats take it: no whitespace (it ends a VCD token), no
// '.' (the viewers' hierarchy separator), no leading '$' (a VCD keyword such
// as $end); never empty.
std::string wave_name(const char *s) {
  std::string n = s && *s ? s : "_";
  for (char &c : n)
    if (static_cast<unsigned char>(c) <= ' ' || c == '.' || c == 0x7f) c = '_';
  if (n[0] == '$') n[0] = '_';
  return n;
}

uint32_t width_of(uint8_t type) {
  if (type == wire::FT_BOOL) return 1;
  const uint32_t size = wire::field_type_size(type);
  return size ? size * 8 : 8;  // an unknown type (the schema decoder refuses them): one byte, as its layout
}

struct StorageSignals {
  // Slot s's signals start at base + s * stride: its valid bit first (sparse
  // storages), then its fields in schema order.
  uint32_t base = 0, stride = 0;
  uint32_t props = 0;  // property p: props + p
  uint16_t num_fields = 0;
  bool sparse = false;
  uint32_t field(uint16_t slot, uint16_t f) const { return base + slot * stride + (sparse ? 1u : 0u) + f; }
  uint32_t valid(uint16_t slot) const { return base + slot * stride; }
};

struct EventSignals {
  uint32_t fire = 0;  // the pulse; payload field k: fire + 1 + k
  std::vector<uint32_t> off;
  std::vector<uint8_t> size;
  uint64_t pulse_ps = 1;         // one cycle of the event's scope's clock
  uint64_t off_at = UINT64_MAX;  // when the pulse falls back to 0
  uint64_t fired_at = UINT64_MAX;
};

// The signals, their declarations (the scope tree), and the replay visitor
// that turns ops and events into value changes at their times. Changes are
// gathered per time and written once per time: a signal set twice in a
// frame is written once, with its final value, and one set to the value it
// had is not written (Verilator's compare-and-emit idiom).
class Signals {
 public:
  Signals(TraceReader &r, WaveSink &sink, uint64_t period_ps, uint64_t t0, uint64_t t1)
      : r_(r), sink_(sink), t0_(t0), t1_(t1), states_(r.initial_state()) {
    declare(r.schema(), period_ps);
    val_.assign(width_.size(), 0);
    last_.assign(width_.size(), 0);
    dirty_.assign(width_.size(), 0);
  }

  size_t count() const { return width_.size(); }
  uint64_t changes() const { return changes_; }
  std::vector<StorageState> &states() { return states_; }
  // The time the replay has reached (to draw progress).
  uint64_t now() const { return cur_; }

  // ── replay()'s visitor ──
  // A frame is visited before its items are applied: the state then holds
  // everything before it.
  void frame(uint64_t t) {
    if (done_ || (started_ && t <= cur_)) return;
    if (!started_) {
      if (t <= t0_) return;
      start();
    } else {
      flush(cur_);
    }
    if (t > t1_) {
      finish_window();
      return;
    }
    lower_until(t);
    cur_ = t;
    if (resync_) {
      // A segment's start state (its checkpoint) stands for every op before
      // it: compare all signals once, so that a checkpoint that differs from
      // the replayed state still shows.
      mark_storages();
      resync_ = false;
    }
  }
  // Ops are visited once applied: the value written is the slot's new one
  // (ADD wraps, CLEAR zeroes).
  void op(uint64_t t, const DeltaOp &o) {
    if (!started_ || done_ || t > t1_) return;
    const StorageSignals &g = storages_[o.storage_id];
    const StorageState &st = states_[o.storage_id];
    switch (o.action) {
      case wire::DA_SLOT_SET:
      case wire::DA_SLOT_ADD:
        mark(g.field(o.slot, o.field), st.get(o.slot, o.field));
        if (g.sparse) mark(g.valid(o.slot), 1);
        break;
      case wire::DA_SLOT_CLEAR:
        for (uint16_t f = 0; f < g.num_fields; ++f) mark(g.field(o.slot, f), 0);
        if (g.sparse) mark(g.valid(o.slot), 0);
        break;
      case wire::DA_PROP_SET: mark(g.props + o.field, st.prop(o.field)); break;
      default: break;
    }
  }
  void event(uint64_t t, uint16_t id, const uint8_t *payload, uint32_t n) {
    if (done_ || t < t0_ || t > t1_ || id >= events_.size()) return;
    EventSignals &e = events_[id];
    if (e.off_at == UINT64_MAX) raised_.insert(std::lower_bound(raised_.begin(), raised_.end(), id), id);
    mark(e.fire, 1);
    e.fired_at = t;
    e.off_at = t < UINT64_MAX - e.pulse_ps ? t + e.pulse_ps : UINT64_MAX - 1;  // a time near 2^64: never wraps
    next_off_ = std::min(next_off_, e.off_at);
    for (size_t k = 0; k < e.off.size(); ++k)
      if (e.size[k] && e.off[k] + e.size[k] <= n)
        mark(e.fire + 1 + static_cast<uint32_t>(k), wire::get_field(payload + e.off[k], e.size[k]));
  }

  // Before each segment's replay: its start state replaces the state.
  void begin_segment() { resync_ = started_; }
  bool done() const { return done_; }
  // After the last segment: the window's remaining changes, then its end.
  uint64_t end() {
    if (!started_) start();
    if (!done_) {
      flush(cur_);
      finish_window();
    }
    return sink_.finish(t1_);
  }

 private:
  void mark(uint32_t sig, uint64_t v) {
    val_[sig] = v;
    if (!dirty_[sig]) {
      dirty_[sig] = 1;
      dirty_list_.push_back(sig);
    }
  }
  void mark_storages() {
    for (size_t k = 0; k < storages_.size(); ++k) {
      const StorageSignals &g = storages_[k];
      const StorageState &st = states_[k];
      const StorageLayout &l = st.layout();
      for (uint16_t p = 0; p < l.prop_off.size(); ++p) mark(g.props + p, st.prop(p));
      for (uint16_t slot = 0; slot < l.num_slots; ++slot) {
        if (g.sparse) mark(g.valid(slot), st.valid(slot));
        for (uint16_t f = 0; f < g.num_fields; ++f) mark(g.field(slot, f), st.get(slot, f));
      }
    }
  }
  // The window opens at t0 with every signal's value: the state then, the
  // events at t0 (already marked), everything else 0.
  void start() {
    started_ = true;
    cur_ = t0_;
    mark_storages();
    sink_.time(t0_);
    for (uint32_t sig = 0; sig < width_.size(); ++sig) {
      sink_.value(sig, width_[sig], val_[sig]);
      last_[sig] = val_[sig];
      dirty_[sig] = 0;
    }
    changes_ += width_.size();
    dirty_list_.clear();
    lower_due(t0_);  // pulses of events at t0 end later; nothing falls at t0
  }
  // Pulses due to fall at or before t (and not raised again at t) fall.
  void lower_due(uint64_t t) {
    if (next_off_ > t) return;
    next_off_ = UINT64_MAX;
    // The raised pulses only (in event-type order, as the changes are
    // written), not every event type: a pulse falls at nearly every time.
    size_t kept = 0;
    for (const uint16_t id : raised_) {
      EventSignals &e = events_[id];
      if (e.off_at <= t && e.fired_at != t) {
        mark(e.fire, 0);
        e.off_at = UINT64_MAX;
        continue;
      }
      raised_[kept++] = id;
      next_off_ = std::min(next_off_, e.off_at);
    }
    raised_.resize(kept);
  }
  // The changes gathered for time t.
  void flush(uint64_t t) {
    lower_due(t);
    bool timed = false;
    for (uint32_t sig : dirty_list_) {
      dirty_[sig] = 0;
      if (val_[sig] == last_[sig]) continue;
      if (!timed) sink_.time(t), timed = true;
      sink_.value(sig, width_[sig], val_[sig]);
      last_[sig] = val_[sig];
      ++changes_;
    }
    dirty_list_.clear();
  }
  // Pulses that fall after the current time and before t, each at its time.
  void lower_until(uint64_t t) {
    while (next_off_ < t) flush(next_off_);
  }
  void finish_window() {
    lower_until(t1_ + 1);
    done_ = true;
  }

  // About 25 bytes each here (and as much in fstapi): 1 Mi signals stay
  // well inside the 128 MB the exporters keep to, and are far more than a
  // viewer shows (a fuzzed trace of a few bytes must not cost a gigabyte).
  static constexpr uint64_t kMaxSignals = uint64_t{1} << 20;
  void declare(const Schema &s, uint64_t period_ps);
  uint32_t add(const std::string &name, uint32_t width, int enum_id) {
    sink_.var(name, width, enum_id);
    width_.push_back(static_cast<uint8_t>(width));
    return static_cast<uint32_t>(width_.size() - 1);
  }
  static int enum_of(const FieldDef &f) { return f.type == wire::FT_ENUM ? f.enum_id : -1; }
  void declare_storage(const Schema &s, size_t k);
  void declare_event(const Schema &s, size_t k);

  TraceReader &r_;
  WaveSink &sink_;
  uint64_t t0_, t1_;
  std::vector<StorageState> states_;
  std::vector<StorageSignals> storages_;
  std::vector<EventSignals> events_;
  std::vector<uint8_t> width_;  // per signal
  std::vector<uint64_t> val_, last_;
  std::vector<uint8_t> dirty_;
  std::vector<uint32_t> dirty_list_;
  std::vector<uint16_t> raised_;    // the event types whose pulse is 1 (off_at set), ascending
  uint64_t next_off_ = UINT64_MAX;  // the earliest pulse to fall
  uint64_t cur_ = 0;                // the time whose changes are being gathered
  uint64_t changes_ = 0;
  bool started_ = false, done_ = false, resync_ = false;
};

void Signals::declare(const Schema &s, uint64_t period_ps) {
  const size_t ns = s.scopes.size();
  std::map<uint16_t, size_t> by_id;
  for (size_t i = 0; i < ns; ++i) by_id.emplace(s.scopes[i].scope_id, i);
  auto index_of = [&](uint16_t id) -> long {
    const auto it = by_id.find(id);
    return it == by_id.end() ? -1 : static_cast<long>(it->second);
  };
  // The period of a scope's clock (inherited from its parents; clock 0's
  // when none names one).
  auto scope_period = [&](uint16_t id) -> uint64_t {
    long i = index_of(id);
    for (size_t depth = 0; i >= 0 && depth < ns; ++depth) {
      const ScopeDef &d = s.scopes[static_cast<size_t>(i)];
      if (d.clock_id != 0xFF) {
        for (const ClockDef &c : s.clocks)
          if (c.clock_id == d.clock_id && c.period_ps) return c.period_ps;
        break;
      }
      i = index_of(d.parent_id);
    }
    return period_ps;
  };
  // Children per scope; a scope whose parent is unknown, that sits in a
  // cycle of parents, or that is deeper than kMaxDepth is shown at the top.
  std::vector<std::vector<size_t>> kids(ns);
  std::vector<size_t> roots;
  std::vector<std::vector<size_t>> st_of(ns + 1), ev_of(ns + 1);  // [ns]: no scope
  for (size_t i = 0; i < ns; ++i) {
    const long p = index_of(s.scopes[i].parent_id);
    if (p < 0 || static_cast<size_t>(p) == i) roots.push_back(i);
    else kids[static_cast<size_t>(p)].push_back(i);
  }
  for (size_t k = 0; k < s.storages.size(); ++k) {
    const long i = index_of(s.storages[k].scope_id);
    st_of[i < 0 ? ns : static_cast<size_t>(i)].push_back(k);
  }
  for (size_t k = 0; k < s.events.size(); ++k) {
    const long i = index_of(s.events[k].scope_id);
    ev_of[i < 0 ? ns : static_cast<size_t>(i)].push_back(k);
  }
  // The signals the schema asks for, counted before any is made: a schema
  // of a few bytes can name billions (65,535 storages of 65,535 slots).
  uint64_t total = 0;
  for (size_t k = 0; k < s.storages.size(); ++k) {
    const StorageDef &d = s.storages[k];
    const bool sparse = r_.layouts()[k].sparse;
    total += d.props.size() + uint64_t{r_.layouts()[k].num_slots} * (d.fields.size() + (sparse ? 1 : 0));
  }
  for (const EventDef &e : s.events) total += 1 + e.fields.size();
  if (total > kMaxSignals)
    fail(USCOPE_ERR_LIMIT, "the trace's schema makes %" PRIu64 " signals, more than the %" PRIu64
         " a waveform export holds", total, kMaxSignals);
  storages_.resize(s.storages.size());
  events_.resize(s.events.size());
  for (size_t k = 0; k < s.events.size(); ++k)
    events_[k].pulse_ps = std::max<uint64_t>(1, scope_period(s.events[k].scope_id));

  // Iterative depth-first walk, so that a hostile schema's depth cannot
  // overflow the stack.
  constexpr size_t kMaxDepth = 64;
  std::vector<uint8_t> seen(ns, 0);
  auto walk = [&](size_t root) {
    if (seen[root]) return;
    std::vector<std::pair<size_t, bool>> todo{{root, false}};  // (scope, closing)
    size_t depth = 0;
    while (!todo.empty()) {
      const auto [i, closing] = todo.back();
      todo.pop_back();
      if (closing) {
        for (size_t k : st_of[i]) declare_storage(s, k);
        for (size_t k : ev_of[i]) declare_event(s, k);
        sink_.upscope();
        --depth;
        continue;
      }
      if (seen[i]) continue;
      seen[i] = 1;
      sink_.scope(wave_name(s.str(s.scopes[i].name)));
      ++depth;
      todo.push_back({i, true});
      if (depth < kMaxDepth)
        for (auto it = kids[i].rbegin(); it != kids[i].rend(); ++it) todo.push_back({*it, false});
    }
  };
  for (size_t i : roots) walk(i);
  for (size_t i = 0; i < ns; ++i) walk(i);  // in a cycle of parents, or too deep
  for (size_t k : st_of[ns]) declare_storage(s, k);
  for (size_t k : ev_of[ns]) declare_event(s, k);
  sink_.end_definitions();
}

// A storage is a scope: its properties, then one scope per slot ("slotN":
// valid, then the fields). A storage of one dense slot (a counter) has its
// fields directly in its scope: its slot number says nothing.
void Signals::declare_storage(const Schema &s, size_t k) {
  const StorageDef &d = s.storages[k];
  const StorageLayout &l = r_.layouts()[k];
  StorageSignals &g = storages_[k];
  g.num_fields = static_cast<uint16_t>(d.fields.size());
  g.sparse = l.sparse;
  g.stride = g.num_fields + (g.sparse ? 1u : 0u);
  sink_.scope(wave_name(s.str(d.name)));
  g.props = static_cast<uint32_t>(width_.size());
  for (const FieldDef &p : d.props) add(wave_name(s.str(p.name)), width_of(p.type), enum_of(p));
  g.base = static_cast<uint32_t>(width_.size());
  const bool flat = l.num_slots == 1 && !g.sparse;
  for (uint32_t slot = 0; slot < l.num_slots; ++slot) {
    if (!flat) sink_.scope("slot" + std::to_string(slot));
    if (g.sparse) add("valid", 1, -1);
    for (const FieldDef &f : d.fields) add(wave_name(s.str(f.name)), width_of(f.type), enum_of(f));
    if (!flat) sink_.upscope();
  }
  sink_.upscope();
}

// An event type is a scope: "fire" (1 for one cycle of its scope's clock
// from each event), then its payload fields, which keep the last event's
// values.
void Signals::declare_event(const Schema &s, size_t k) {
  const EventDef &d = s.events[k];
  EventSignals &e = events_[k];
  sink_.scope(wave_name(s.str(d.name)));
  e.fire = add("fire", 1, -1);
  uint32_t off = 0;
  for (const FieldDef &f : d.fields) {
    add(wave_name(s.str(f.name)), width_of(f.type), enum_of(f));
    const uint32_t size = wire::field_type_size(f.type);
    e.off.push_back(off);
    e.size.push_back(static_cast<uint8_t>(size));
    off += size;
  }
  sink_.upscope();
}

// The period that counts cycles: clock 0's, or, when the reader found the
// timestamps off the clocks' grid (COMPAT 29), the step they follow (as
// `uscope state --cycle` counts).
uint64_t cycle_period_ps(const TraceReader &r) {
  const Schema &s = r.schema();
  uint64_t p = s.clocks.empty() ? 0 : s.clocks[0].period_ps;
  const uint64_t grid = r.time_grid_ps();
  bool off_grid = false;
  for (const DefectEntry &d : r.defects().entries()) off_grid |= d.kind == Defect::OffClockGrid;
  if (!p || (off_grid && grid && grid != p)) p = grid;
  return p ? p : 1;
}

}  // namespace

void export_waveform(Job &job) {
  const bool fst = job.opts.format == USCOPE_EXPORT_FST;
  TraceReader &r = *job.reader;
#ifndef USCOPE_WITH_FST
  if (fst)
    fail(USCOPE_ERR_UNSUPPORTED,
         "FST export is not built in: libuscope was configured without GTKWave's fstapi, which it takes from "
         "the Debian package verilator (/usr/share/verilator/include/gtkwave); --to vcd works without it");
#endif
  if (job.opts.time_unit == USCOPE_TIME_CYCLE || job.opts.time_unit == USCOPE_TIME_NS)
    job.note("--time-unit does not apply to waveforms: their times are the trace's, in ps (timescale 1 ps)");
  const uint64_t period = cycle_period_ps(r);
  const auto &segs = r.segments();
  const uint64_t last_time = segs.empty() ? 0 : segs.back().header.time_end_ps;
  const uint64_t last_cycle = last_time / period;
  // The window, clamped to the trace's last cycle.
  const uint64_t a = job.opts.range_start;
  if (a > last_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "--range starts at cycle %" PRIu64 ", after the trace's last cycle %" PRIu64
         " (clock 0, %" PRIu64 " ps)", a, last_cycle, period);
  const uint64_t b = std::min(job.opts.range_end, last_cycle);
  job.stats.first_cycle = a;
  job.stats.last_cycle = b;
  const uint64_t t0 = a * period;
  const uint64_t t1 = b >= UINT64_MAX / period - 1 ? UINT64_MAX - 1 : (b + 1) * period - 1;

  char comment[256];
  std::snprintf(comment, sizeof comment,
                "uscope export of cycles %" PRIu64 "..%" PRIu64 " (clock 0, %" PRIu64 " ps): times in ps", a, b, period);
  std::unique_ptr<WaveSink> sink;
#ifdef USCOPE_WITH_FST
  if (fst) sink = std::make_unique<FstSink>(job.output, comment, r.schema());
#endif
  if (!sink) sink = std::make_unique<VcdSink>(job.output, comment);
  Signals sig(r, *sink, period, t0, t1);

  // The segment holding t0 (the last one starting at or before it), then
  // every one up to t1.
  size_t first = 0;
  for (size_t i = 0; i < segs.size(); ++i)
    if (segs[i].header.time_start_ps <= t0) first = i;
  uint64_t undecodable = 0;
  for (size_t i = first; i < segs.size() && !sig.done(); ++i) {
    if (segs[i].header.time_start_ps > t1) break;
    sig.begin_segment();
    if (!r.replay(i, sig.states(), sig, t1)) ++undecodable;
    if (job.progress) job.progress->update((std::max(sig.now(), t0) - t0) / period, b - a + 1, "cycles");
  }
  if (undecodable)
    job.note(std::to_string(undecodable) +
             " segment(s) of the window do not decode: their changes are missing from the waveform, and the state "
             "resumes at the next segment's checkpoint");
  job.stats.bytes_out = sig.end();
  job.stats.records = sig.changes();
}

}  // namespace uscope::exporter
