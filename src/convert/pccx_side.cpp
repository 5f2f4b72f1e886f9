#include "convert/pccx_side.hpp"

#include <algorithm>
#include <cstring>

#include "base/guard.hpp"
#include "base/last_error.hpp"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_reader.hpp"
#include "pccx/pccx_writer.hpp"

namespace uscope::convert {

namespace {
// pccx type of each pair kind: commands and jobs are API calls, TE work is
// MAC compute, DMA is a read or a write by direction; pccx has no type for
// VE, DRAM or NoC work (UNKNOWN, told apart by api_name).
uint32_t pair_type(uint8_t kind, std::string_view direction) {
  switch (kind) {
    case P_CMD: case P_JOB: return PCCX_EVENT_API_CALL;
    case P_TE: return PCCX_EVENT_MAC_COMPUTE;
    case P_DMA: {
      // Into the NPU (DRAM_TO_SRAM, HOST_TO_...) is a read; to DRAM or the
      // host is a write.
      const size_t to = direction.find("TO_");
      const std::string_view dst = to == std::string_view::npos ? std::string_view() : direction.substr(to + 3);
      return dst == "DRAM" || dst == "HOST" ? PCCX_EVENT_DMA_WRITE : PCCX_EVENT_DMA_READ;
    }
    default: return PCCX_EVENT_UNKNOWN;
  }
}
// The name of a pccx event's type, never NULL: a flatbuf type id past the
// table (pccx-format.md "Versioning Policy": new ids are additive) has no
// name, kTypeNames has none for it and the reader "UNKNOWN";
// "UNKNOWN_<id>" keeps the id. A bincode event_type this library does not
// know keeps its own string (type_name).
std::string type_label(const pccx_event_t &ev) {
  if (ev.type_id >= PCCX_EVENT_TYPE_COUNT) return "UNKNOWN_" + std::to_string(ev.type_id);
  if (ev.type_name && *ev.type_name) return ev.type_name;
  const char *n = pccx::kTypeNames[ev.type_id];
  return n ? n : "UNKNOWN";
}
uint32_t instant_type(uint8_t ev) {
  switch (ev) {
    case E_SRAM_CONFLICT: return PCCX_EVENT_SYSTOLIC_STALL;
    case E_IRQ_EMIT: case E_TOKEN_COMPLETE: return PCCX_EVENT_BARRIER_SYNC;
    case E_CMD_ENQUEUE: return PCCX_EVENT_API_CALL;
    default: return PCCX_EVENT_UNKNOWN;
  }
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
}  // namespace

PccxOut::PccxOut(const StringSource &strs) : strs_(strs) {}

PccxOut::~PccxOut() {
  // Only an output abandoned on an error path gets here: its status adds nothing to the
  // error already reported, and the partial file is removed by the writer.
  if (w_) (void)finish(*w_);
}

Status PccxOut::open(const char *path, uint64_t period_ps, const PccxMeta &meta, uint64_t queue_bytes,
                     std::string *error) {
  pccx_writer_options_t o{};
  o.struct_size = sizeof o;
  // clock_mhz is an integer: 1e6 / period_ps, rounded (exact for 1000 ps).
  // The original clock_mhz when it is the one this period came from (a
  // clock over 1 GHz does not survive MHz -> ps -> MHz: 3000 MHz is 333 ps).
  const uint64_t from_period = period_ps ? (1000000 + period_ps / 2) / period_ps : 1000;
  const bool same_clock = meta.has_clock_mhz && (1000000 + meta.clock_mhz / 2) / meta.clock_mhz == period_ps;
  o.clock_mhz = same_clock ? meta.clock_mhz : static_cast<uint32_t>(std::min<uint64_t>(from_period, 0xFFFFFFFFu));
  if (o.clock_mhz == 0) o.clock_mhz = 1;
  if (meta.has_lab_version) o.pccx_lab_version = meta.lab_version.c_str();
  if (meta.has_isa_version) o.isa_version = meta.isa_version.c_str();
  if (meta.has_mac_dims) {
    o.mac_rows = meta.mac_rows;
    o.mac_cols = meta.mac_cols;
  }
  if (meta.has_peak_tops) o.peak_tops = meta.peak_tops;
  if (meta.has_cores) o.cores = meta.cores;
  if (meta.has_encoding && meta.encoding == "flatbuf") o.encoding = PCCX_ENCODING_FLATBUF;
  set_cycles_ = meta.has_cycles;
  cycles_ = meta.cycles;
  o.queue_bytes = queue_bytes ? queue_bytes : kDefaultQueue;
  const Status s = guard([&] {
    w_ = std::make_unique<pccx::Writer>(path, &o);
    return USCOPE_OK;
  });
  if (s) *error = about_file(path, thread_error());
  return s;
}

void PccxOut::put(uint32_t core, uint64_t start, uint64_t duration, uint32_t type, const char *name) {
  const Status s = w_->event(core, start, duration, type, name);
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

void PccxOut::interval(const Interval &iv) {
  if (status_) return;
  name_.assign(kPairNames[iv.kind]);
  std::string_view label;
  if (iv.label != kNoLabel && (iv.kind == P_CMD || iv.kind == P_JOB || iv.kind == P_DMA)) {
    label = strs_.str(iv.label);
    name_ += ':';
    name_ += label;
  }
  put(iv.core, iv.start, iv.end - iv.start, pair_type(iv.kind, label), name_.c_str());
}

void PccxOut::instant(uint8_t ev_type, uint64_t t, uint32_t core) {
  if (status_) return;
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
  if (status_) return true;
  name_.assign(rest);
  put(core_of(e), e.t_cycle, dur, type, has_name ? name_.c_str() : nullptr);
  return true;
}

Status PccxOut::close(std::string *error) {
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

Status read_pccx(const char *path, StringPool &pool, PairSink &sink, uint64_t *period_ps, uint64_t *events,
                 uint64_t *others, std::string *error, PccxMeta *meta) {
  pccx::Reader r;
  Status s = guard([&] {
    r.open_file(path, 0);
    return USCOPE_OK;
  });
  if (s) {
    *error = about_file(path, thread_error());
    return s;
  }
  const pccx_header_t &h = r.header();
  *period_ps = h.clock_mhz ? (1000000 + h.clock_mhz / 2) / h.clock_mhz : 1000;
  if (*period_ps == 0) *period_ps = 1;  // a clock over 2 THz
  if (meta) {
    // Every header field a writer sets (the rest is derived: format_minor,
    // byte_length, checksum_fnv64).
    *meta = PccxMeta{};
    meta->has = true;
    meta->has_lab_version = h.pccx_lab_version != nullptr;
    if (h.pccx_lab_version) meta->lab_version = h.pccx_lab_version;
    meta->has_isa_version = h.isa_version != nullptr;
    if (h.isa_version) meta->isa_version = h.isa_version;
    meta->has_mac_dims = true;
    meta->mac_rows = h.mac_rows;
    meta->mac_cols = h.mac_cols;
    meta->has_peak_tops = h.has_peak_tops != 0;
    meta->peak_tops = h.peak_tops;
    meta->has_cores = true;
    meta->cores = h.cores;
    meta->has_cycles = true;
    meta->cycles = h.cycles;
    meta->has_clock_mhz = h.clock_mhz != 0;
    meta->clock_mhz = h.clock_mhz;
    meta->has_encoding = h.encoding_name != nullptr;
    if (h.encoding_name) meta->encoding = h.encoding_name;
  }
  const uint64_t n = r.event_count();
  *events = n;
  *others = 0;
  for (uint64_t i = 0; i < n; ++i) {
    pccx_event_t ev{};
    r.event(i, &ev);
    // start + duration past 2^64 saturates, as pccx-lab's total_cycles does.
    const uint64_t end = ev.duration > ~uint64_t{0} - ev.start_cycle ? ~uint64_t{0} : ev.start_cycle + ev.duration;
    const std::string_view full = ev.api_name ? std::string_view(ev.api_name) : std::string_view();
    // Ours (PccxOut): "<PAIR>[:<label>]" for a pair, the event type for an instant.
    std::string_view name = full, label;
    const size_t colon = name.find(':');
    if (colon != std::string_view::npos) {
      label = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    int kind = -1;
    for (int k = 0; k < kNumPairKinds; ++k)
      if (name == kPairNames[k]) kind = k;
    if (kind >= 0) {
      sink.interval(Interval{static_cast<uint8_t>(kind), ev.start_cycle, end, ev.core_id, kNoUnit, kNoLayer, kNoSize,
                             label.empty() ? kNoLabel : pool.intern(label)});
      continue;
    }
    const int t = colon == std::string_view::npos ? ev_type_by_name(name) : -1;
    if (t >= 0 && t < kNumEvTypes) {
      sink.instant(static_cast<uint8_t>(t), ev.start_cycle, ev.core_id);
      continue;
    }
    // From another producer (pccx-lab's own traces): its types, its api_name.
    const uint64_t nm = full.empty() ? kNoLabel : pool.intern(full);
    Interval iv{P_TE, ev.start_cycle, end, ev.core_id, kNoUnit, kNoLayer, kNoSize, kNoLabel, nm};
    switch (ev.type_id) {
      case PCCX_EVENT_MAC_COMPUTE: break;
      case PCCX_EVENT_DMA_READ: iv.kind = P_DMA; iv.label = pool.intern("DRAM_TO_SRAM"); break;
      case PCCX_EVENT_DMA_WRITE: iv.kind = P_DMA; iv.label = pool.intern("SRAM_TO_DRAM"); break;
      case PCCX_EVENT_API_CALL: iv.kind = P_CMD; iv.label = nm; iv.name = kNoLabel; break;  // the call's name is its phase
      default:
        ++*others;
        sink.pccx_other(ev.type_id, pool.intern(type_label(ev)), ev.start_cycle, ev.duration, ev.core_id, nm);
        continue;
    }
    sink.interval(iv);
  }
  return 0;
}

}  // namespace uscope::convert
