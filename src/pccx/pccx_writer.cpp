#include "pccx/pccx_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "base/last_error.hpp"
#include "base/version.hpp"
#include "format/checksum.hpp"
#include "base/error.hpp"
#include "pccx/pccx_common.hpp"

namespace uscope {
}

namespace uscope::pccx {

namespace {

constexpr size_t kOutBuf = 1u << 20;
constexpr uint64_t kDefaultQueue = 4u << 20;
constexpr uint64_t kMinQueue = 256u << 10;

inline void bump(std::atomic<uint64_t> &a, uint64_t by = 1) {
  a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

inline size_t round8(size_t n) { return (n + 7) & ~size_t{7}; }

void check_text(const char *s, const char *what) {
  const size_t n = std::strlen(s);
  if (n > 4096) fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: %s is over 4096 bytes", what);
  if (!valid_utf8(s, n)) fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: %s is not UTF-8", what);
}

}  // namespace

Writer::Writer(const char *path, const pccx_writer_options_t *opts, const Expect *expect) : path_(path) {
  pccx_writer_options_t o{};
  o.struct_size = sizeof(o);
  if (opts) {
    if (opts->struct_size < offsetof(pccx_writer_options_t, reserved) ||
        opts->struct_size > sizeof(o))
      fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: options struct_size %u is not valid (expected %zu)",
           opts->struct_size, sizeof(o));
    std::memcpy(&o, opts, opts->struct_size);
  }
  if (o.encoding > PCCX_ENCODING_RAW)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: encoding %u is not BINCODE, FLATBUF or RAW", o.encoding);
  if (o.backpressure > PCCX_BACKPRESSURE_DROP)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: backpressure %u is not valid", o.backpressure);
  if (o.struct_size == sizeof(o) && o.reserved != 0)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: reserved option field must be 0");
  if (!std::isfinite(o.peak_tops) || o.peak_tops < 0)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: peak_tops must be a finite number >= 0");
  encoding_ = o.encoding;
  // simdjson picks its UTF-8 kernel on first use (and may allocate then): do
  // it here, not in the first pccx_writer_event with an api_name.
  (void)valid_utf8("uca", 3);
  if (o.pccx_lab_version) {
    check_text(o.pccx_lab_version, "pccx_lab_version");
    lab_version_ = o.pccx_lab_version;
  } else {
    lab_version_ = std::string("libuscope ") + kVersionString;
  }
  if (o.isa_version) {
    check_text(o.isa_version, "isa_version");
    isa_version_ = o.isa_version;
  } else {
    isa_version_ = "1.1";
  }
  peak_tops_json_ = json_double(o.peak_tops);
  mac_rows_ = o.mac_rows ? o.mac_rows : 32;
  mac_cols_ = o.mac_cols ? o.mac_cols : 32;
  cores_opt_ = o.cores;
  clock_mhz_ = o.clock_mhz ? o.clock_mhz : 1000;
  backpressure_ = o.backpressure;

  uint64_t q = o.queue_bytes ? o.queue_bytes : kDefaultQueue;
  if (q < kMinQueue) q = kMinQueue;
  if (q > (uint64_t{1} << 40)) fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_writer_open: queue_bytes is too large");
  q = (q + 63) & ~uint64_t{63};
  if (!queue_.allocate(q)) fail(USCOPE_ERR_NO_MEMORY, "pccx_writer_open: cannot allocate a %" PRIu64 "-byte queue", q);
  std::memset(queue_.buf(), 0, q);  // touch the pages now, not on the hot path
  // The output buffer need not outgrow the queue it drains (a small queue
  // asks for a small writer); it stays above the largest bincode record
  // (~64 KiB name), since kMinQueue is 256 KiB.
  obuf_cap_ = static_cast<size_t>(std::min<uint64_t>(kOutBuf, q));
  obuf_.reset(new uint8_t[obuf_cap_]);
  names_.reserve(64);

  // The JSON header's largest possible rendering: every number at its maximum.
  reserved_json_ = render_json(UINT64_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX).size();

  // Written beside the path and renamed onto it at close (replace_file.hpp):
  // a killed or failed run leaves the previous file (or none), never half of
  // one, and readers of the previous file keep it (it was O_TRUNC in place).
  fd_ = replace_.create(path, O_RDWR);
  uint8_t fixed[kFixedHeader] = {'P', 'C', 'C', 'X', PCCX_FORMAT_MAJOR, PCCX_FORMAT_MINOR, 0, 0};
  std::memcpy(fixed + 8, &reserved_json_, 8);
  out(fixed, sizeof fixed);
  std::memset(obuf_.get() + olen_, ' ', reserved_json_);  // reserved_json_ is < 1 KiB
  olen_ += reserved_json_;
  payload_start_ = olen_;
  if (encoding_ == PCCX_ENCODING_BINCODE) {
    const uint8_t zero[16] = {};
    out(zero, sizeof zero);  // total_cycles and the event count, patched at close
  }
  hash_ = kFnv64Offset;
  if (encoding_ == PCCX_ENCODING_BINCODE && expect) {
    // The expected prefix is hashed now; flush_out hashes what follows it.
    expect_ = true;
    expected_ = *expect;
    uint8_t pre[16];
    std::memcpy(pre, &expected_.total_cycles, 8);
    std::memcpy(pre + 8, &expected_.events, 8);
    hash_ = fnv1a64(pre, sizeof pre, hash_);
  }
  queue_.start(*this, kProgressStep);
}

Writer::~Writer() {
  if (!finished_) {
    try {
      finish();
    } catch (...) {
    }
  }
  if (fd_ >= 0) ::close(fd_);
}

std::string Writer::render_json(uint64_t cycles, uint32_t cores, uint64_t bytes, uint64_t sum) const {
  static const char *const enc[] = {"bincode", "flatbuf", "raw"};
  std::string j;
  j.reserve(512);
  j += "{\"pccx_lab_version\":";
  json_quote(j, lab_version_.c_str());
  j += ",\"arch\":{\"mac_dims\":[" + std::to_string(mac_rows_) + "," + std::to_string(mac_cols_) +
       "],\"isa_version\":";
  json_quote(j, isa_version_.c_str());
  j += ",\"peak_tops\":" + peak_tops_json_ + "},\"trace\":{\"cycles\":" + std::to_string(cycles) +
       ",\"cores\":" + std::to_string(cores) + ",\"clock_mhz\":" + std::to_string(clock_mhz_) +
       "},\"payload\":{\"encoding\":\"" + enc[encoding_] + "\",\"byte_length\":" +
       std::to_string(bytes) + ",\"checksum_fnv64\":" + std::to_string(sum) +
       "},\"format_minor\":" + std::to_string(PCCX_FORMAT_MINOR) + "}";
  return j;
}

// ── Producer (caller thread) ──────────────────────────────────────────────

uint8_t *Writer::reserve(size_t need) noexcept {
  const uint64_t cap = queue_.cap();
  const uint64_t off = head_ % cap;
  const uint64_t room = cap - off;
  const uint64_t total = need <= room ? need : room + need;
  if (head_ + total - cached_consumed_ > cap) {
    cached_consumed_ = queue_.consumed();
    if (head_ + total - cached_consumed_ > cap) {
      publish();  // the encoder can free room only from what it can see
      if (backpressure_ == PCCX_BACKPRESSURE_DROP) return nullptr;
      RoomWait wait;
      while (head_ + total - cached_consumed_ > cap) {
        wait.round();
        cached_consumed_ = queue_.consumed();
      }
      bump(stalls_);
      bump(stall_ns_, wait.elapsed_ns());
    }
  }
  if (need > room) {
    queue_.buf()[off] = kPad;
    head_ += room;
    return queue_.buf();
  }
  return queue_.buf() + off;
}

uscope_status_t Writer::event(uint32_t core, uint64_t start, uint64_t dur, uint32_t type,
                              const char *api) noexcept {
  const char *msg = nullptr;
  uscope_status_t st = USCOPE_OK;
  size_t nlen = 0;
  if (finished_) {
    st = USCOPE_ERR_BAD_STATE, msg = "pccx_writer_event: the writer is finished";
  } else if (encoding_ == PCCX_ENCODING_RAW) {
    st = USCOPE_ERR_BAD_STATE, msg = "pccx_writer_event: a raw-encoding writer takes pccx_writer_raw only";
  } else if (type >= PCCX_EVENT_TYPE_COUNT) {
    st = USCOPE_ERR_INVALID_ARGUMENT, msg = "pccx_writer_event: type_id is not 0..6";
  } else if (encoding_ == PCCX_ENCODING_FLATBUF && core == kFlatMagicV2) {
    st = USCOPE_ERR_INVALID_ARGUMENT,
    msg = "pccx_writer_event: core_id 0x32434350 reads as the flatbuf PCC2 trailer magic";
  } else if (api && ((nlen = std::strlen(api)) > 65535 || !valid_utf8(api, nlen))) {
    st = USCOPE_ERR_INVALID_ARGUMENT, msg = "pccx_writer_event: api_name is over 65,535 bytes or not UTF-8";
  } else if ((st = sticky_.load(std::memory_order_acquire)) != USCOPE_OK) {
    msg = "pccx_writer_event: the writer has failed (see pccx_writer_error)";
  }
  if (st != USCOPE_OK) {
    bump(errors_);
    set_thread_error(msg);
    return st;
  }
  const size_t need = kEvSize + round8(nlen);
  uint8_t *p = reserve(need);
  if (!p) {
    bump(dropped_events_);
    bump(errors_);
    set_thread_error("pccx_writer_event: queue full, event dropped (PCCX_BACKPRESSURE_DROP)");
    return USCOPE_ERR_DATA_DROPPED;
  }
  p[0] = kEv;
  p[1] = api ? 1 : 0;
  const uint16_t n16 = static_cast<uint16_t>(nlen);
  std::memcpy(p + 2, &n16, 2);
  std::memcpy(p + 4, &core, 4);
  std::memcpy(p + 8, &start, 8);
  std::memcpy(p + 16, &dur, 8);
  std::memcpy(p + 24, &type, 4);
  if (nlen) std::memcpy(p + kEvSize, api, nlen);
  head_ += need;
  if (head_ - published_ >= kPublishBatch) publish();
  bump(events_);
  if (api) bump(api_names_);
  return USCOPE_OK;
}

uscope_status_t Writer::raw(const void *data, size_t n) noexcept {
  const char *msg = nullptr;
  uscope_status_t st = USCOPE_OK;
  if (finished_) st = USCOPE_ERR_BAD_STATE, msg = "pccx_writer_raw: the writer is finished";
  else if (encoding_ != PCCX_ENCODING_RAW)
    st = USCOPE_ERR_BAD_STATE, msg = "pccx_writer_raw: the writer's encoding is not raw";
  else if (n && !data) st = USCOPE_ERR_INVALID_ARGUMENT, msg = "pccx_writer_raw: data is NULL";
  else if ((st = sticky_.load(std::memory_order_acquire)) != USCOPE_OK)
    msg = "pccx_writer_raw: the writer has failed (see pccx_writer_error)";
  if (st != USCOPE_OK) {
    bump(errors_);
    set_thread_error(msg);
    return st;
  }
  const uint8_t *src = static_cast<const uint8_t *>(data);
  size_t done = 0;
  while (done < n) {
    const size_t k = n - done < kRawChunk ? n - done : kRawChunk;
    uint8_t *p = reserve(8 + round8(k));
    if (!p) {
      bump(dropped_raw_, n - done);
      bump(errors_);
      set_thread_error("pccx_writer_raw: queue full, bytes dropped (PCCX_BACKPRESSURE_DROP)");
      return USCOPE_ERR_DATA_DROPPED;
    }
    p[0] = kRaw;
    p[1] = p[2] = p[3] = 0;
    const uint32_t k32 = static_cast<uint32_t>(k);
    std::memcpy(p + 4, &k32, 4);
    std::memcpy(p + 8, src + done, k);
    head_ += 8 + round8(k);
    if (head_ - published_ >= kPublishBatch) publish();
    bump(raw_bytes_, k);
    done += k;
  }
  return USCOPE_OK;
}

uscope_status_t Writer::set_total_cycles(uint64_t c) noexcept {
  if (finished_) {
    set_thread_error("pccx_writer_set_total_cycles: the writer is finished");
    return USCOPE_ERR_BAD_STATE;
  }
  total_cycles_ = c;
  total_set_ = true;
  return USCOPE_OK;
}

// ── Encoder thread ────────────────────────────────────────────────────────

void Writer::set_sticky(uscope_status_t s, const std::string &msg) {
  if (sticky_.load(std::memory_order_relaxed) != USCOPE_OK) return;
  sticky_msg_ = msg;
  sticky_.store(s, std::memory_order_release);
}

void Writer::io_fail(const char *what) {
  set_sticky(USCOPE_ERR_IO, format_message("pccx writer: %s %s: %s", what, path_.c_str(), std::strerror(errno)));
}

void Writer::flush_out() {
  if (!olen_) return;
  if (encoding_ != PCCX_ENCODING_BINCODE || expect_) {
    // Streaming FNV over the payload part of the buffer (bincode: after its
    // prefix, hashed as expected at open).
    const uint64_t from = payload_start_ + (encoding_ == PCCX_ENCODING_BINCODE ? 16 : 0);
    const uint64_t buf_start = file_pos_;
    const uint64_t skip = from > buf_start ? from - buf_start : 0;
    if (skip < olen_) hash_ = fnv1a64(obuf_.get() + skip, olen_ - skip, hash_);
  }
  if (sticky_.load(std::memory_order_relaxed) != USCOPE_ERR_IO) {
    const uint8_t *p = obuf_.get();
    size_t n = olen_;
    while (n) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        io_fail("write");
        break;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  file_pos_ += olen_;
  olen_ = 0;
  file_bytes_.store(file_pos_, std::memory_order_relaxed);
  payload_bytes_.store(file_pos_ - payload_start_, std::memory_order_relaxed);
}

void Writer::out(const void *p, size_t n) {
  const uint8_t *s = static_cast<const uint8_t *>(p);
  while (n) {
    if (olen_ == obuf_cap_) flush_out();
    const size_t k = std::min(n, obuf_cap_ - olen_);
    std::memcpy(obuf_.get() + olen_, s, k);
    olen_ += k;
    s += k;
    n -= k;
  }
}

void Writer::consume(const uint8_t *r, size_t &len) {
  if (r[0] == kRaw) {
    const uint32_t k = load_u32(r + 4);
    out(r + 8, k);
    len = 8 + round8(k);
    return;
  }
  const bool has_name = r[1] != 0;
  const uint16_t nlen = load_u16(r + 2);
  const uint32_t core = load_u32(r + 4);
  const uint64_t start = load_u64(r + 8), dur = load_u64(r + 16);
  const uint32_t type = load_u32(r + 24);
  const char *name = reinterpret_cast<const char *>(r + kEvSize);
  len = kEvSize + round8(nlen);
  const uint64_t end = start + dur < start ? UINT64_MAX : start + dur;
  if (end > max_end_) max_end_ = end;
  if (core > max_core_) max_core_ = core;
  any_event_ = true;
  const uint64_t index = written_.load(std::memory_order_relaxed);
  if (encoding_ == PCCX_ENCODING_BINCODE) {
    // Encode straight into the output buffer (room for the largest record).
    const char *tn = kTypeNames[type];
    const uint64_t tl = std::strlen(tn);
    const size_t max = 4 + 8 + 8 + 8 + tl + 1 + 8 + nlen;
    if (obuf_cap_ - olen_ < max) flush_out();
    uint8_t *b = obuf_.get() + olen_;
    std::memcpy(b, &core, 4);
    std::memcpy(b + 4, &start, 8);
    std::memcpy(b + 12, &dur, 8);
    std::memcpy(b + 20, &tl, 8);
    std::memcpy(b + 28, tn, tl);
    size_t k = 28 + tl;
    b[k++] = has_name ? 1 : 0;
    if (has_name) {
      const uint64_t l64 = nlen;
      std::memcpy(b + k, &l64, 8);
      std::memcpy(b + k + 8, name, nlen);
      k += 8 + nlen;
    }
    olen_ += k;
  } else {
    if (obuf_cap_ - olen_ < kFlatStride) flush_out();
    uint8_t *b = obuf_.get() + olen_;
    std::memcpy(b, &core, 4);
    std::memcpy(b + 4, &start, 8);
    std::memcpy(b + 12, &dur, 8);
    std::memcpy(b + 20, &type, 4);
    olen_ += kFlatStride;
    if (has_name) {
      if (index > UINT32_MAX)
        set_sticky(USCOPE_ERR_LIMIT, "pccx writer: flatbuf api_name on an event index over 2^32 (PCC2 limit)");
      else
        names_.emplace_back(static_cast<uint32_t>(index), std::string(name, nlen));
    }
  }
  bump(written_);
}

uint64_t Writer::drain(uint64_t pos, uint64_t end) {
  const uint64_t cap = queue_.cap();
  while (pos < end) {
    const uint64_t off = pos % cap;
    const uint8_t *r = queue_.buf() + off;
    size_t len;
    if (r[0] == kPad) {
      len = cap - off;
    } else {
      consume(r, len);
    }
    pos += len;
  }
  return pos;
}

bool Writer::failed(const std::exception &e) noexcept {  // bad_alloc of the name table
  try {
    set_sticky(USCOPE_ERR_NO_MEMORY, std::string("pccx writer: ") + e.what());
  } catch (...) {  // no memory for the message either: the status alone
    uscope_status_t none = USCOPE_OK;
    sticky_.compare_exchange_strong(none, USCOPE_ERR_NO_MEMORY, std::memory_order_release);
  }
  return false;  // the records published after it are encoded
}

// ── Close ─────────────────────────────────────────────────────────────────

void Writer::pwrite_all(uint64_t off, const void *p, size_t n) {
  const uint8_t *s = static_cast<const uint8_t *>(p);
  while (n) {
    const ssize_t w = ::pwrite(fd_, s, n, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(USCOPE_ERR_IO, "pccx writer: pwrite %s: %s", path_.c_str(), std::strerror(errno));
    }
    s += w;
    off += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
}

uscope_status_t Writer::finish() {
  if (finished_) return finish_status_;
  finished_ = true;
  publish();
  queue_.stop();
  uscope_status_t st = sticky_.load(std::memory_order_acquire);
  if (st == USCOPE_ERR_IO) {
    finish_status_ = st;
    return st;
  }
  try {
    if (encoding_ == PCCX_ENCODING_FLATBUF && !names_.empty()) {
      const uint32_t magic = kFlatMagicV2, cnt = static_cast<uint32_t>(names_.size());
      out(&magic, 4);
      out(&cnt, 4);
      for (const auto &nm : names_) {
        const uint16_t l = static_cast<uint16_t>(nm.second.size());
        out(&nm.first, 4);
        out(&l, 2);
        out(nm.second.data(), l);
      }
    }
    flush_out();
    if (sticky_.load(std::memory_order_acquire) == USCOPE_ERR_IO) fail(USCOPE_ERR_IO, "%s", sticky_msg_.c_str());
    const uint64_t payload_len = file_pos_ - payload_start_;
    const uint64_t total = total_set_ ? total_cycles_ : max_end_;
    const uint64_t nev = written_.load(std::memory_order_relaxed);
    if (encoding_ == PCCX_ENCODING_BINCODE) {
      uint8_t pre[16];
      std::memcpy(pre, &total, 8);
      std::memcpy(pre + 8, &nev, 8);
      pwrite_all(payload_start_, pre, sizeof pre);
      // The count is known only now, and FNV runs front to back: hash the
      // payload by reading it back (from the page cache, in practice),
      // unless the prefix is the one it was hashed with as it was written.
      const bool guessed = expect_ && total == expected_.total_cycles && nev == expected_.events;
      uint64_t h = kFnv64Offset, off = payload_start_, left = guessed ? 0 : payload_len;
      if (guessed) h = hash_;
      while (left) {
        const size_t k = static_cast<size_t>(std::min<uint64_t>(left, obuf_cap_));
        const ssize_t r = ::pread(fd_, obuf_.get(), k, static_cast<off_t>(off));
        if (r <= 0) {
          if (r < 0 && errno == EINTR) continue;
          fail(USCOPE_ERR_IO, "pccx writer: reading back %s to hash it: %s", path_.c_str(),
               r < 0 ? std::strerror(errno) : "unexpected end of file");
        }
        h = fnv1a64(obuf_.get(), static_cast<size_t>(r), h);
        off += static_cast<uint64_t>(r);
        left -= static_cast<uint64_t>(r);
      }
      hash_ = h;
    }
    checksum_ = hash_;
    uint32_t cores = cores_opt_;
    if (!cores && any_event_) cores = max_core_ == UINT32_MAX ? UINT32_MAX : max_core_ + 1;
    std::string j = render_json(total, cores, payload_len, checksum_);
    if (j.size() > reserved_json_) fail(USCOPE_ERR_INTERNAL, "pccx writer: JSON header outgrew its reserved space");
    j.append(reserved_json_ - j.size(), ' ');
    pwrite_all(kFixedHeader, j.data(), j.size());
    if (::close(fd_) != 0) {
      fd_ = -1;
      fail(USCOPE_ERR_IO, "pccx writer: close %s: %s", path_.c_str(), std::strerror(errno));
    }
    fd_ = -1;
    replace_.publish(false);
  } catch (const Error &e) {
    set_sticky(e.code(), e.what());
    finish_status_ = e.code();
    return finish_status_;
  }
  st = sticky_.load(std::memory_order_acquire);
  if (st == USCOPE_OK && (dropped_events_.load() || dropped_raw_.load())) {
    st = USCOPE_ERR_DATA_DROPPED;
    set_sticky(st, format_message("pccx writer: %" PRIu64 " events and %" PRIu64
                                  " raw bytes were dropped under PCCX_BACKPRESSURE_DROP",
                                  dropped_events_.load(), dropped_raw_.load()));
  }
  finish_status_ = st;
  return st;
}

void Writer::stats(pccx_writer_stats_t *o) const {
  pccx_writer_stats_t s{};
  s.struct_size = sizeof(s);
  s.sticky_status = sticky_.load(std::memory_order_acquire);
  s.events = events_.load();
  s.events_written = written_.load();
  s.api_names = api_names_.load();
  s.raw_bytes = raw_bytes_.load();
  s.dropped_events = dropped_events_.load();
  s.dropped_raw_bytes = dropped_raw_.load();
  s.errors = errors_.load();
  s.stalls = stalls_.load();
  s.stall_ns = stall_ns_.load();
  s.queue_bytes = queue_.cap();
  s.payload_bytes = payload_bytes_.load();
  s.file_bytes = file_bytes_.load();
  s.checksum = finished_ ? checksum_ : 0;
  const uint32_t n = o->struct_size < sizeof(s) ? o->struct_size : uint32_t(sizeof(s));
  std::memcpy(o, &s, n);
  o->struct_size = n;
}

const char *Writer::error() const {
  return sticky_.load(std::memory_order_acquire) != USCOPE_OK ? sticky_msg_.c_str() : "";
}

}  // namespace uscope::pccx
