#include "convert/pccx_side.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "base/guard.hpp"
#include "base/last_error.hpp"
#include "convert/pipeline.hpp"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_stream.hpp"
#include "pccx/pccx_writer.hpp"

namespace uscope::convert {

namespace {

// The direction a DMA type stands for when the api_name names none: into the
// NPU is a read (pccx-format.md, DMA_READ), out of it a write.
constexpr std::string_view kReadDir = "DRAM_TO_SRAM", kWriteDir = "SRAM_TO_DRAM";

// pccx type of a DMA direction: to DRAM or the host is a write, anything
// else (DRAM_TO_SRAM, HOST_TO_..., none) a read.
uint32_t dma_type(std::string_view direction) {
  const size_t to = direction.find("TO_");
  const std::string_view dst = to == std::string_view::npos ? std::string_view() : direction.substr(to + 3);
  return dst == "DRAM" || dst == "HOST" ? PCCX_EVENT_DMA_WRITE : PCCX_EVENT_DMA_READ;
}
std::string_view default_dir(uint32_t type) { return type == PCCX_EVENT_DMA_WRITE ? kWriteDir : kReadDir; }

// The pccx type of an instant (a zero-length event named by its event type).
uint32_t instant_type(uint8_t ev) {
  switch (ev) {
    case E_SRAM_CONFLICT: return PCCX_EVENT_SYSTOLIC_STALL;
    case E_IRQ_EMIT: case E_TOKEN_COMPLETE: return PCCX_EVENT_BARRIER_SYNC;
    case E_CMD_ENQUEUE: return PCCX_EVENT_API_CALL;
    default: return PCCX_EVENT_UNKNOWN;
  }
}

// The name of a pccx event's type, never NULL: a flatbuf type id past the
// table (pccx-format.md "Versioning Policy": new ids are additive) has no
// name, kTypeNames has none for it and the reader "UNKNOWN";
// "UNKNOWN_<id>" keeps the id. A bincode event_type this library does not
// know keeps its own string (type_name).
std::string type_label(const pccx::SortedEvent &ev) {
  if (ev.type_id >= PCCX_EVENT_TYPE_COUNT) return "UNKNOWN_" + std::to_string(ev.type_id);
  if (ev.type_name && *ev.type_name) return ev.type_name;
  const char *n = pccx::kTypeNames[ev.type_id];
  return n ? n : "UNKNOWN";
}

// Finishes the writer (header patched, file published), as pccx_writer_close
// does: a failure's message is the writer's own.
Status finish(pccx::Writer &w) {
  return guard([&] {
    const Status s = w.finish();
    if (s != USCOPE_OK) set_thread_error(w.error());
    return s;
  });
}

// Keys an Ev -> pccx conversion keeps (in the event's type, core, name or
// pairing); any other key of an event is lost and counted (notes()).
constexpr uint64_t bit(Key k) { return uint64_t{1} << k; }
constexpr uint64_t kKeptKeys = bit(K_core_id) | bit(K_phase) | bit(K_job_type) | bit(K_direction) |
                               bit(K_component) | bit(K_code) | bit(K_msg);
// Keys that pair STARTs with ENDs: the pairing is kept, their values are not
// (pccx -> anything numbers the pairs in time order).
constexpr uint64_t kPairKeys = bit(K_cmd_id) | bit(K_job_id) | bit(K_tx_id) | bit(K_channel) | bit(K_link_id);
// What pccx -> events assigns (docs/conversions.md): in a trace that came
// from a .pccx file they are not the trace's, and nothing is lost with them.
constexpr uint64_t kAssignedKeys = kPairKeys | bit(K_source) | bit(K_access_type) | bit(K_bank_id);

}  // namespace

// ── PccxOut: Ev -> pccx ──

PccxOut::PccxOut(const StringSource &strs, uint64_t queue_bytes)
    : strs_(strs), queue_bytes_(queue_bytes), pairer_(*this) {}

PccxOut::~PccxOut() {
  // Only an output abandoned on an error path gets here: its status adds nothing to the
  // error already reported, and the partial file is removed by the writer.
  if (w_) (void)finish(*w_);
}

Status PccxOut::open(const char *path, const TraceMeta &tm, uint64_t period_ps, std::string *error) {
  const PccxMeta &meta = tm.pccx;
  lost_meta_ = tm.has_version || tm.has_sim_version || tm.has_sim_config || tm.has_sim_id || tm.has_t_ns;
  // A trace that came from a .pccx file has pair numbers for ids already:
  // nothing of them is lost again.
  synthetic_ids_ = meta.has;
  pccx_writer_options_t o{};
  o.struct_size = sizeof o;
  // clock_mhz is an integer: 1e6 / period_ps, rounded (exact for 1000 ps).
  // The original clock_mhz when it is the one this period came from (a
  // clock over 1 GHz does not survive MHz -> ps -> MHz: 3000 MHz is 333 ps).
  const uint64_t from_period = period_ps ? (1000000 + period_ps / 2) / period_ps : 1000;
  const bool same_clock = meta.has_clock_mhz && meta.clock_mhz &&
                          (1000000 + meta.clock_mhz / 2) / meta.clock_mhz == period_ps;
  o.clock_mhz = same_clock ? meta.clock_mhz : static_cast<uint32_t>(std::min<uint64_t>(from_period, 0xFFFFFFFFu));
  if (o.clock_mhz == 0) o.clock_mhz = 1;
  if (meta.has_lab_version) o.pccx_lab_version = meta.lab_version.c_str();
  if (meta.has_isa_version) o.isa_version = meta.isa_version.c_str();
  if (meta.has_mac_dims) {
    o.mac_rows = meta.mac_rows;
    o.mac_cols = meta.mac_cols;
  } else if (tm.te_rows && tm.te_cols) {  // a µScope npu scope's "npu.te_dims"
    o.mac_rows = tm.te_rows;
    o.mac_cols = tm.te_cols;
  }
  if (meta.has_peak_tops) o.peak_tops = meta.peak_tops;
  if (meta.has_cores) o.cores = meta.cores;
  if (meta.has_encoding && meta.encoding == "flatbuf") o.encoding = PCCX_ENCODING_FLATBUF;
  set_cycles_ = meta.has_cycles;
  cycles_ = meta.cycles;
  o.queue_bytes = queue_bytes_ ? queue_bytes_ : kDefaultQueue;
  const Status s = guard([&] {
    // pccx -> pccx: the same events and total, so the checksum can be hashed
    // as the payload is written (checked at close; a wrong guess costs the
    // read-back it saves).
    const pccx::Writer::Expect expect{meta.cycles, tm.pccx_events};
    const bool guess = tm.pccx_events != ~uint64_t{0} && meta.has_cycles;
    w_ = std::make_unique<pccx::Writer>(path, &o, guess ? &expect : nullptr);
    return USCOPE_OK;
  });
  if (s) *error = about_file(path, thread_error());
  return s;
}

Status PccxOut::add(const Ev &e, std::string *reason) {
  if (e.mask & ~(kKeptKeys | (synthetic_ids_ ? kAssignedKeys : 0))) ++lost_fields_;
  if (!pccx_warn(e)) pairer_.add(e);
  // Every few hundred events (the horizon costs one pass over the open
  // STARTs; fewer held events make the heap cheaper): write what can no
  // longer be preceded.
  if (++since_release_ >= 256 || held_.size() > kMaxHeld) {
    since_release_ = 0;
    release(std::min(pairer_.horizon(), e.t_cycle));
  }
  if (status_) *reason = "writing the .pccx file: " + error_;
  return status_;
}

void PccxOut::put(uint32_t core, uint64_t start, uint64_t duration, uint32_t type, const char *name) {
  held_.push(Held{start, held_seq_++, duration, core, type, name ? intern(name) : nullptr});
}

const char *PccxOut::intern(const char *name) {
  const auto it = names_.find(std::string_view(name));
  if (it != names_.end()) return it->second;
  const std::string &s = name_store_.emplace_back(name);
  names_.emplace(std::string_view(s), s.c_str());
  return s.c_str();
}

void PccxOut::release(uint64_t h) {
  while (!held_.empty() && !status_ && (held_.top().start < h || held_.size() > kMaxHeld)) {
    const Held x = held_.top();
    held_.pop();
    if (x.start < written_upto_) ++out_of_order_;
    written_upto_ = std::max(written_upto_, x.start);
    const Status s = w_->event(x.core, x.start, x.duration, x.type, x.name);
    if (s) {
      status_ = s;
      // The writer's own sticky error says what failed (e.g. the encoder's
      // write); the call's message only that the writer has failed.
      const char *we = w_->error();
      error_ = we && *we ? we : thread_error();
    } else {
      ++events_;
    }
  }
}

// The api_name of a pair (docs/conversions.md "pccx"): the type says what
// ran, the name what pccx would otherwise lose. A command, a TE job and a
// DMA transfer in its type's default direction are named by their START's
// phase (none without one), so that pccx-lab's own names (API calls, MAC
// and DMA events with or without a name) come back as they were; a job by
// "JOB:<job_type>"; a DMA transfer in another direction by "DMA:<direction>"
// (or "DMA" with none); VE, DRAM and NoC work, which pccx has no type for,
// by "VE", "DRAM_TX", "NOC_TX".
void PccxOut::interval(const Interval &iv) {
  const uint64_t dur = iv.end - iv.start;
  auto phase = [&](uint64_t id) { return id == kNoLabel ? nullptr : strs_.c_str(id); };
  switch (iv.kind) {
    case P_CMD: put(iv.core, iv.start, dur, PCCX_EVENT_API_CALL, phase(iv.label)); return;
    case P_TE: put(iv.core, iv.start, dur, PCCX_EVENT_MAC_COMPUTE, phase(iv.phase)); return;
    case P_JOB:
      name_ = "JOB";
      if (iv.label != kNoLabel) name_.append(":").append(strs_.str(iv.label));
      put(iv.core, iv.start, dur, PCCX_EVENT_API_CALL, name_.c_str());
      return;
    case P_DMA: {
      if (iv.label == kNoLabel) {
        put(iv.core, iv.start, dur, PCCX_EVENT_DMA_READ, "DMA");
        return;
      }
      const std::string_view dir = strs_.str(iv.label);
      const uint32_t type = dma_type(dir);
      if (dir == default_dir(type)) {
        put(iv.core, iv.start, dur, type, phase(iv.phase));
        return;
      }
      name_.assign("DMA:").append(dir);
      put(iv.core, iv.start, dur, type, name_.c_str());
      return;
    }
    default: put(iv.core, iv.start, dur, PCCX_EVENT_UNKNOWN, kPairNames[iv.kind]); return;
  }
}

void PccxOut::instant(uint8_t ev_type, uint64_t t, uint32_t core) {
  put(core, t, 0, instant_type(ev_type), kEvTypes[ev_type].name);
}

bool PccxOut::pccx_warn(const Ev &e) {
  uint64_t comp, code, msg;
  if (e.type != E_WARN || !e.value(K_component, &comp) || !e.value(K_code, &code) || !e.value(K_msg, &msg) ||
      strs_.str(comp) != "pccx")
    return false;
  const std::string_view c = strs_.str(code), m = strs_.str(msg);
  // The type: a pccx name; "UNKNOWN_<id>" and names this library does not
  // know can only be written as UNKNOWN (the writer takes ids 0..6).
  uint32_t type = PCCX_EVENT_UNKNOWN;
  for (uint32_t i = 0; i < PCCX_EVENT_TYPE_COUNT; ++i)
    if (c == pccx::kTypeNames[i]) type = i;
  // The msg, parsed from its end: "<N> cycle" or "<N> cycles", after ", " when a name precedes it.
  std::string_view rest = m;
  if (rest.size() > 7 && rest.substr(rest.size() - 7) == " cycles") rest.remove_suffix(7);
  else if (rest.size() > 6 && rest.substr(rest.size() - 6) == " cycle") rest.remove_suffix(6);
  else return false;
  size_t digits = 0;
  while (digits < rest.size() && rest[rest.size() - 1 - digits] >= '0' && rest[rest.size() - 1 - digits] <= '9') ++digits;
  if (digits == 0 || digits > 20) return false;
  const std::string_view num = rest.substr(rest.size() - digits);
  uint64_t dur = 0;
  for (char ch : num) {
    const uint64_t d = static_cast<uint64_t>(ch - '0');
    if (dur > (~uint64_t{0} - d) / 10) return false;
    dur = dur * 10 + d;
  }
  rest.remove_suffix(digits);
  const bool has_name = !rest.empty();
  if (has_name) {
    if (rest.size() < 2 || rest.substr(rest.size() - 2) != ", ") return false;
    rest.remove_suffix(2);
  }
  name_.assign(rest);
  put(core_of(e), e.t_cycle, dur, type, has_name ? name_.c_str() : nullptr);
  return true;
}

Status PccxOut::close(std::string *error) {
  pairer_.finish();
  release(~uint64_t{0});
  Status s = 0;
  if (set_cycles_ && !status_) s = w_->set_total_cycles(cycles_);
  const Status c = finish(*w_);
  if (!s) s = c;
  w_.reset();
  if (status_) {
    *error = "writing the .pccx file: " + error_;
    return status_;
  }
  if (s) *error = std::string("writing the .pccx file: ") + thread_error();
  return s;
}

void PccxOut::notes(std::vector<std::string> *out) const {
  if (lost_fields_)
    out->push_back("pccx holds a type, core, start, duration and name per event: the other fields of " +
                   count_of(lost_fields_, "event") +
                   " (ids and channels, sizes, addresses, tiles, layer and LLM keys, status ...) are not kept: pairs "
                   "come back numbered in time order (docs/conversions.md)");
  if (out_of_order_)
    out->push_back(count_of(out_of_order_, "event") + " written out of start order: more than " +
                   with_commas(kMaxHeld) + " events ended while an earlier START was still open (pccx-lab's "
                   "large-file reader expects start order)");
  if (lost_meta_)
    out->push_back("pccx has no place for TRACE_META version, sim_config, sim_version, sim_id or t_ns: not kept");
}

std::unique_ptr<EvSink> make_pccx_sink(const StringSource &strs, uint64_t queue_bytes) {
  return std::make_unique<PccxOut>(strs, queue_bytes);
}

// ── PccxIn: pccx -> Ev ──

namespace {

// The lowest unit (DMA channel, DRAM channel, NoC link) free at a START,
// taken until its END: a deterministic assignment that never puts two
// transfers in flight on one unit, using as many units as transfers overlap.
class UnitPool {
 public:
  uint32_t take() {
    if (free_.empty()) return next_++;
    const uint32_t u = free_.top();
    free_.pop();
    return u;
  }
  void give(uint32_t u) { free_.push(u); }

 private:
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> free_;
  uint32_t next_ = 0;
};

// The pool of names, and one scratch string for the WARN line of the event
// being given out (its msg holds the duration: interning each would grow
// the pool with the trace). Sinks use an event's strings before the next.
class PccxStrings final : public StringSource {
 public:
  static constexpr uint64_t kScratch = uint64_t{1} << 40;  // past any pool id (32-bit)
  std::string_view str(uint64_t id) const override { return id == kScratch ? scratch : pool.str(id); }
  const char *c_str(uint64_t id) const override { return id == kScratch ? scratch.c_str() : pool.c_str(id); }
  StringPool pool;
  std::string scratch;
};

class PccxIn final : public EvSource {
 public:
  explicit PccxIn(const Options &o) : issues_(issues_of(o)), strict_(o.o.strict != 0) {}
  Status open(const char *in, std::string *error) override;
  Status run(const Fn &fn, std::string *error) override;
  const StringSource &strings() const override { return strs_; }
  const TraceMeta &meta() const override { return meta_; }
  uint64_t period_ps() const override { return meta_.period_ps; }
  Issues &issues() override { return issues_; }
  IngestStats stats() const override { return stats_; }
  uint64_t input_size() const override { return size_; }
  void notes(std::vector<std::string> *out) const override {
    // Without strict checking a wrong checksum does not stop the reader
    // (pccx-lab only warns either): say so.
    const pccx_header_t &h = r_.header();
    if (h.checksum_status == PCCX_CHECKSUM_MISMATCH)
      out->push_back("checksum mismatch: checksum_fnv64 is " + std::to_string(h.checksum) +
                     " but the payload hashes to " + std::to_string(h.computed_checksum) +
                     "; the events were converted as read");
  }

 private:
  // An END waiting for its time: the pair's kind, core, id and unit.
  struct End {
    uint64_t t, seq;
    uint8_t kind;
    uint32_t core;
    uint64_t id;
    uint32_t unit;
    bool operator>(const End &o) const { return t > o.t || (t == o.t && seq > o.seq); }
  };
  // Gives e to fn; an event fn does not place is an issue numbered by its
  // 1-based pccx event index.
  Status emit(const Ev &e, uint64_t number, const Fn &fn, std::string *error);
  Status start_pair(uint8_t kind, const pccx::SortedEvent &ev, uint64_t number, uint64_t phase, uint64_t label,
                    const Fn &fn, std::string *error);
  Status flush_ends(uint64_t upto, bool all, const Fn &fn, std::string *error);

  Issues issues_;
  bool strict_;  // also: a wrong checksum fails the open (PCCX_OPEN_STRICT_CHECKSUM)
  IngestStats stats_;
  PccxStrings strs_;
  StringPool &pool_ = strs_.pool;
  TraceMeta meta_;
  uint64_t size_ = 0;
  // Bounded memory whatever the file size, and time order whatever the
  // file's (pccx_stream.hpp).
  pccx::SortedEventStream r_;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
  struct Name {
    uint64_t id;  // in pool_
    int ev_type;  // ev_type_by_name of it
  };
  std::unordered_map<const char *, Name> names_;
  UnitPool units_[kNumPairKinds];
  uint64_t seq_ = 0, pairs_ = 0;
  uint32_t s_pccx_ = 0, s_read_ = 0, s_write_ = 0;
  Ev e_{};
};

Status PccxIn::open(const char *in, std::string *error) {
  const Status s = guard([&] {
    r_.open(in, strict_ ? PCCX_OPEN_STRICT_CHECKSUM : 0);
    return USCOPE_OK;
  });
  if (s) {
    *error = about_file(in, thread_error());
    return s;
  }
  const pccx_header_t &h = r_.header();
  size_ = 16 + h.header_bytes + h.payload_bytes;  // pccx-format.md: magic/version/length prefix, JSON, payload
  uint64_t period = h.clock_mhz ? (1000000 + h.clock_mhz / 2) / h.clock_mhz : 1000;
  if (period == 0) period = 1;  // a clock over 2 THz
  meta_.period_ps = period;
  meta_.has_period = period != 1000;
  // Every header field a writer sets (the rest is derived: format_minor,
  // byte_length, checksum_fnv64); they ride on TRACE_META "pccx" in JSONL and
  // on the DUT property npu.jsonl.pccx in µScope (docs/convert.md).
  PccxMeta &m = meta_.pccx;
  m.has = true;
  m.has_lab_version = h.pccx_lab_version != nullptr;
  if (h.pccx_lab_version) m.lab_version = h.pccx_lab_version;
  m.has_isa_version = h.isa_version != nullptr;
  if (h.isa_version) m.isa_version = h.isa_version;
  m.has_mac_dims = true;
  m.mac_rows = h.mac_rows;
  m.mac_cols = h.mac_cols;
  m.has_peak_tops = h.has_peak_tops != 0;
  m.peak_tops = h.peak_tops;
  m.has_cores = true;
  m.cores = h.cores;
  m.has_cycles = true;
  m.cycles = h.cycles;
  m.has_clock_mhz = h.clock_mhz != 0;
  m.clock_mhz = h.clock_mhz;
  m.has_encoding = h.encoding_name != nullptr;
  if (h.encoding_name) m.encoding = h.encoding_name;
  meta_.pccx_events = r_.event_count();
  s_pccx_ = pool_.intern("pccx");
  s_read_ = pool_.intern(kReadDir);
  s_write_ = pool_.intern(kWriteDir);
  return 0;
}

Status PccxIn::emit(const Ev &e, uint64_t number, const Fn &fn, std::string *error) {
  std::string reason;
  const Status r = fn(e, &reason);
  if (r < 0) {
    *error = reason;
    return r;
  }
  if (r > 0 && issues_.report(number, "pccx event " + std::to_string(number) + " (" + kEvTypes[e.type].name +
                                          " at cycle " + std::to_string(e.t_cycle) + "): " + reason)) {
    *error = "pccx event " + std::to_string(number) + ": " + reason + " (strict)";
    return USCOPE_ERR_CORRUPT;
  }
  return 0;
}

Status PccxIn::flush_ends(uint64_t upto, bool all, const Fn &fn, std::string *error) {
  while (!ends_.empty() && (all || ends_.top().t <= upto)) {
    const End x = ends_.top();
    ends_.pop();
    e_.mask = 0;
    e_.type = kPairEnd[x.kind];
    e_.t_cycle = x.t;
    e_.set(K_core_id, x.core);
    switch (x.kind) {
      case P_CMD: e_.set(K_cmd_id, x.id); break;
      case P_JOB: case P_TE: case P_VE: e_.set(K_job_id, x.id); break;
      case P_NOC: e_.set(K_tx_id, x.id); e_.set(K_link_id, x.unit); break;
      default: e_.set(K_tx_id, x.id); e_.set(K_channel, x.unit); break;
    }
    if (x.unit != kNoUnit) units_[x.kind].give(x.unit);
    if (Status s = emit(e_, x.seq, fn, error)) return s;
  }
  return 0;
}

// A pair: its START now, its END queued for start + duration. Ids are the
// pair's number in time order; DMA/DRAM channels and NoC links the lowest
// free one (UnitPool).
Status PccxIn::start_pair(uint8_t kind, const pccx::SortedEvent &ev, uint64_t number, uint64_t phase,
                          uint64_t label, const Fn &fn, std::string *error) {
  // start + duration past 2^64 saturates, as pccx-lab's total_cycles does.
  const uint64_t end =
      ev.duration > ~uint64_t{0} - ev.start ? ~uint64_t{0} : ev.start + ev.duration;
  const uint64_t id = pairs_++;
  const uint32_t unit = kind == P_DMA || kind == P_DRAM || kind == P_NOC ? units_[kind].take() : kNoUnit;
  e_.mask = 0;
  e_.type = kPairStart[kind];
  e_.t_cycle = ev.start;
  e_.set(K_core_id, ev.core_id);
  switch (kind) {
    case P_CMD: e_.set(K_cmd_id, id); break;
    case P_JOB: case P_TE: case P_VE: e_.set(K_job_id, id); break;
    case P_NOC: e_.set(K_tx_id, id); e_.set(K_link_id, unit); break;
    default: e_.set(K_tx_id, id); e_.set(K_channel, unit); break;
  }
  if (kind == P_JOB && label != kNoLabel) e_.set(K_job_type, label);
  if (kind == P_DMA && label != kNoLabel) e_.set(K_direction, label);
  if (phase != kNoLabel) e_.set(K_phase, phase);
  ends_.push(End{end, number, kind, ev.core_id, id, unit});
  return emit(e_, number, fn, error);
}

// pccx -> Ev, the inverse of PccxOut (pccx_side.hpp): each event in start
// order (stable), its END lines merged in by time.
Status PccxIn::run(const Fn &fn, std::string *error) {
  stats_.events = r_.event_count();
  pccx::SortedEvent ev{};
  for (;;) {
    bool more = false;
    const Status rs = guard([&] {
      more = r_.next(&ev);
      return USCOPE_OK;
    });
    if (rs) {
      *error = thread_error();
      return rs;
    }
    if (!more) break;
    const uint64_t i = ev.index;
    const uint64_t number = i + 1;
    if (Status s = flush_ends(ev.start, false, fn, error)) return s;
    const bool has_name = ev.api_name != nullptr;
    const std::string_view name = has_name ? std::string_view(ev.api_name) : std::string_view();
    // The stream interns its names (one address per distinct name): their
    // pool id and event type are looked up once per address, not hashed
    // per event.
    Name nm{kNoLabel, -1};
    if (has_name) {
      auto [at, fresh] = names_.try_emplace(ev.api_name);
      if (fresh) at->second = Name{pool_.intern(name), ev_type_by_name(name)};
      nm = at->second;
    }
    const uint64_t name_id = nm.id;
    // An instant of ours: a zero-length event named by an event type whose
    // pccx type it has.
    if (ev.duration == 0 && has_name) {
      const int it = nm.ev_type;
      if (it >= 0 && it < kNumEvTypes && instant_type(static_cast<uint8_t>(it)) == ev.type_id &&
          it != E_WARN) {
        e_.mask = 0;
        e_.type = static_cast<uint8_t>(it);
        e_.t_cycle = ev.start;
        e_.set(K_core_id, ev.core_id);
        // What the npu protocol needs of these and pccx does not keep: a
        // documented assignment (docs/conversions.md), never a drop.
        if (it == E_CMD_ENQUEUE) e_.set(K_source, USCOPE_NPU_SOURCE_ISA);
        if (it == E_SRAM_ACCESS) e_.set(K_access_type, USCOPE_NPU_ACCESS_READ);
        if (it == E_SRAM_ACCESS || it == E_SRAM_CONFLICT) e_.set(K_bank_id, 0);
        if (Status s = emit(e_, number, fn, error)) return s;
        continue;
      }
    }
    Status s = 0;
    switch (ev.type_id) {
      case PCCX_EVENT_API_CALL:
        if (name == "JOB" || name.rfind("JOB:", 0) == 0)
          s = start_pair(P_JOB, ev, number, kNoLabel, name.size() > 4 ? pool_.intern(name.substr(4)) : kNoLabel,
                         fn, error);
        else
          s = start_pair(P_CMD, ev, number, name_id, kNoLabel, fn, error);
        break;
      case PCCX_EVENT_MAC_COMPUTE: s = start_pair(P_TE, ev, number, name_id, kNoLabel, fn, error); break;
      case PCCX_EVENT_DMA_READ:
      case PCCX_EVENT_DMA_WRITE: {
        const std::string_view dir = name.rfind("DMA:", 0) == 0 ? name.substr(4) : std::string_view();
        if (ev.type_id == PCCX_EVENT_DMA_READ && name == "DMA")
          s = start_pair(P_DMA, ev, number, kNoLabel, kNoLabel, fn, error);
        else if (!dir.empty() && dir != default_dir(ev.type_id) && dma_type(dir) == ev.type_id)
          s = start_pair(P_DMA, ev, number, kNoLabel, pool_.intern(dir), fn, error);
        else
          s = start_pair(P_DMA, ev, number, name_id, ev.type_id == PCCX_EVENT_DMA_WRITE ? s_write_ : s_read_, fn,
                         error);
        break;
      }
      default: {
        int kind = -1;
        if (ev.type_id == PCCX_EVENT_UNKNOWN)
          for (int pk = P_VE; pk < kNumPairKinds && kind < 0; ++pk)
            if (pk != P_DMA && name == kPairNames[pk]) kind = pk;
        if (kind >= 0) {
          s = start_pair(static_cast<uint8_t>(kind), ev, number, kNoLabel, kNoLabel, fn, error);
          break;
        }
        // No NPU meaning (SYSTOLIC_STALL, BARRIER_SYNC, UNKNOWN, type ids
        // past the table): a WARN line that PccxOut turns back into it.
        std::string &msg = strs_.scratch;
        msg.assign(has_name ? name : std::string_view());
        if (has_name) msg += ", ";
        msg += std::to_string(ev.duration) + (ev.duration == 1 ? " cycle" : " cycles");
        e_.mask = 0;
        e_.type = E_WARN;
        e_.t_cycle = ev.start;
        e_.set(K_core_id, ev.core_id);
        e_.set(K_component, s_pccx_);
        e_.set(K_code, pool_.intern(type_label(ev)));
        e_.set(K_msg, PccxStrings::kScratch);
        s = emit(e_, number, fn, error);
        break;
      }
    }
    if (s) return s;
  }
  return flush_ends(0, true, fn, error);
}

}  // namespace

std::unique_ptr<EvSource> make_pccx_source(const Options &o) { return std::make_unique<PccxIn>(o); }

}  // namespace uscope::convert
