// Streaming NPU JSONL ingest (see jsonl_ingest.hpp, docs/convert.md).
#include "convert/jsonl_ingest.hpp"

#include <fcntl.h>
#include <simdjson.h>  // SIMDJSON_PADDING only
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include <uscope/uscope.h>

namespace uscope::convert {

bool Issues::report(uint64_t line, const std::string &reason) {
  if (count++ == 0) {
    first_line = line;
    first_reason = reason;
  }
  if (on_issue) on_issue(line, reason);
  return strict;
}

// ── LineReader ──

namespace {
constexpr size_t kWindow = 1u << 20;     // initial window; grows only for longer lines
constexpr size_t kRawChunk = 256u << 10;  // compressed input chunk
constexpr size_t kPad = simdjson::SIMDJSON_PADDING;
}  // namespace

LineReader::LineReader(uint64_t max_line_bytes) : max_line_(max_line_bytes ? max_line_bytes : 1) {}

LineReader::~LineReader() {
  if (zinit_) inflateEnd(&zs_);
  if (fd_ >= 0) ::close(fd_);
  std::free(buf_);
}

void LineReader::grow(size_t need) {
  size_t cap = cap_ ? cap_ : std::max<size_t>(need, 1);  // the first call sets the initial window
  while (cap < need) cap *= 2;
  char *nb = static_cast<char *>(std::realloc(buf_, cap + kPad));
  if (!nb) throw std::bad_alloc();
  buf_ = nb;
  cap_ = cap;
  std::memset(buf_ + cap_, 0, kPad);
}

Status LineReader::open_file(const char *path) {
  fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    status_ = USCOPE_ERR_IO;
    message_ = std::string(path) + ": " + std::strerror(errno);
    return status_;
  }
  struct stat st {};
  if (fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) raw_size_ = static_cast<uint64_t>(st.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
  posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return open_memory(nullptr, 0);
}

Status LineReader::open_memory(const void *data, size_t size) {
  if (fd_ < 0) {
    mem_ = static_cast<const char *>(data);
    mem_size_ = size;
    raw_size_ = size;
  }
  // The initial window: 1 MiB, or less when no line can be longer (a plain
  // file of known size, or --max-line-bytes below it; a gzip file's lines can
  // pass its size: the window then grows like for any longer line).
  size_t window = std::min<size_t>(kWindow, max_line_ + 1);
  if (raw_size_) window = std::min<size_t>(window, raw_size_ + 1);
  grow(window);
  // Detect gzip by its magic; the bytes read stay in head_ and are fed first.
  char magic[2];
  long n = 0;
  while (n < 2) {
    const long r = read_raw(magic + n, 2 - static_cast<size_t>(n));
    if (r < 0) return status_;
    if (r == 0) break;
    n += r;
  }
  head_.assign(magic, static_cast<size_t>(n));
  gz_ = n == 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
  if (gz_) {
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) {
      status_ = USCOPE_ERR_NO_MEMORY;
      message_ = "gzip: inflateInit2 failed";
      return status_;
    }
    zinit_ = true;
    // No larger than the file (its pages are zeroed here: a 300-byte .gz
    // does not need 256 KiB of them).
    raw_.resize(raw_size_ ? static_cast<size_t>(std::min<uint64_t>(kRawChunk, raw_size_)) : kRawChunk);
  }
  return 0;
}

long LineReader::read_raw(char *dst, size_t n) {
  if (head_pos_ < head_.size()) {
    const size_t k = std::min(n, head_.size() - head_pos_);
    std::memcpy(dst, head_.data() + head_pos_, k);
    head_pos_ += k;
    return static_cast<long>(k);
  }
  if (fd_ >= 0) {
    for (;;) {
      const ssize_t r = ::read(fd_, dst, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        status_ = USCOPE_ERR_IO;
        message_ = std::string("read: ") + std::strerror(errno);
        return -1;
      }
      raw_consumed_ += static_cast<uint64_t>(r);
      return static_cast<long>(r);
    }
  }
  const size_t k = std::min(n, mem_size_ - mem_pos_);
  if (k) std::memcpy(dst, mem_ + mem_pos_, k);
  mem_pos_ += k;
  raw_consumed_ += k;
  return static_cast<long>(k);
}

long LineReader::produce(char *dst, size_t n) {
  if (!gz_) return read_raw(dst, n);
  zs_.next_out = reinterpret_cast<Bytef *>(dst);
  zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
  while (zs_.avail_out == static_cast<uInt>(std::min<size_t>(n, 1u << 30))) {
    if (zs_.avail_in == 0 && !raw_eof_) {
      const long r = read_raw(raw_.data(), raw_.size());
      if (r < 0) return -1;
      if (r == 0) raw_eof_ = true;
      zs_.next_in = reinterpret_cast<Bytef *>(raw_.data());
      zs_.avail_in = static_cast<uInt>(r);
    }
    if (zend_) {
      // Between members: more input starts another gzip member.
      if (zs_.avail_in == 0 && raw_eof_) return 0;
      if (zs_.avail_in == 0) continue;
      inflateReset(&zs_);
      zend_ = false;
    }
    if (zs_.avail_in == 0 && raw_eof_) {
      status_ = USCOPE_ERR_TRUNCATED;
      message_ = "gzip stream truncated (input ends inside a compressed member)";
      return -1;
    }
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      zend_ = true;
    } else if (rc == Z_BUF_ERROR) {
      continue;  // needs input
    } else if (rc != Z_OK) {
      status_ = rc == Z_MEM_ERROR ? USCOPE_ERR_NO_MEMORY : USCOPE_ERR_CORRUPT;
      message_ = std::string("gzip: corrupt data (") + (zs_.msg ? zs_.msg : "inflate error") + ")";
      return -1;
    }
  }
  return static_cast<long>(std::min<size_t>(n, 1u << 30) - zs_.avail_out);
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // slide the unread part to the front
    std::memmove(buf_, buf_ + begin_, end_ - begin_);
    end_ -= begin_;
    scan_ -= begin_;
    begin_ = 0;
  }
  if (end_ == cap_) grow(cap_ * 2);
  const long r = produce(buf_ + end_, cap_ - end_);
  if (r < 0) {
    eof_ = true;
    return false;
  }
  if (r == 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(r);
  bytes_out_ += static_cast<uint64_t>(r);
  return true;
}

LineReader::Result LineReader::next(std::string_view *line) {
  for (;;) {
    const char *nl = scan_ < end_ ? static_cast<const char *>(std::memchr(buf_ + scan_, '\n', end_ - scan_)) : nullptr;
    if (nl) {
      const size_t at = static_cast<size_t>(nl - buf_);
      size_t len = at - begin_;
      const size_t start = begin_;
      begin_ = scan_ = at + 1;
      ++lineno_;
      if (len > max_line_) return kTooLong;
      if (len && buf_[start + len - 1] == '\r') --len;
      *line = std::string_view(buf_ + start, len);
      return kLine;
    }
    scan_ = end_;
    if (end_ - begin_ > max_line_) {
      // Longer than allowed: drop what we have and skip to the next newline
      // without keeping it, so memory stays bounded.
      for (;;) {
        begin_ = scan_ = end_ = 0;
        if (!fill()) {
          ++lineno_;
          return status_ ? kError : kTooLong;
        }
        const char *p = static_cast<const char *>(std::memchr(buf_, '\n', end_));
        if (p) {
          begin_ = scan_ = static_cast<size_t>(p - buf_) + 1;
          ++lineno_;
          return kTooLong;
        }
      }
    }
    if (end_ - begin_ == cap_ && cap_ <= max_line_) {
      // The whole window is one unfinished line: grow (bounded by max_line).
      grow(cap_ * 2);
    }
    if (!fill()) {
      if (status_) return kError;
      if (begin_ < end_) {  // a last line without '\n'
        size_t len = end_ - begin_;
        const size_t start = begin_;
        begin_ = scan_ = end_;
        ++lineno_;
        if (len && buf_[start + len - 1] == '\r') --len;
        *line = std::string_view(buf_ + start, len);
        return kLine;
      }
      return kEnd;
    }
  }
}

std::string_view LineReader::peek_block(size_t max_bytes) const {
  // [begin_, scan_) holds no '\n' (next() has looked there), so the last
  // one is searched from scan_.
  const size_t lim = std::min(end_, begin_ + std::min(max_bytes, end_ - begin_));
  if (scan_ >= lim) return {};
  const void *nl = memrchr(buf_ + scan_, '\n', lim - scan_);
  if (!nl) return {};
  return std::string_view(buf_ + begin_, static_cast<size_t>(static_cast<const char *>(nl) - (buf_ + begin_)) + 1);
}

// ── SlotRing ──

void SlotRing::reset(size_t max_size) {
  size_t cap = 1;
  while (cap < max_size) cap *= 2;
  buf_.reset(new uint32_t[cap]);  // not value-initialized: pages are touched as slots are used
  mask_ = cap - 1;
  head_ = size_ = 0;
}

void SlotRing::insert(size_t pos, uint32_t v) {
  for (size_t i = size_; i > pos; --i) buf_[(head_ + i) & mask_] = buf_[(head_ + i - 1) & mask_];
  buf_[(head_ + pos) & mask_] = v;
  ++size_;
}

// ── Ingest ──

namespace {
// The block size of the stream parser (and the capacity of its parser,
// allocated once): large enough that stage 1 runs once per many lines, small
// enough that the block, its structural indexes (4 B per token) and its
// string buffer stay in the L2 cache while the lines are walked (64 KiB to
// 1 MiB measured the same within noise, bench_convert).
constexpr size_t kBlock = 256u << 10;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Ingest::Ingest(const IngestOptions &opts, Issues &issues, StringPool &pool, TraceMeta &meta)
    : opts_(opts), issues_(issues), pool_(pool), meta_(meta), reader_(opts.max_line_bytes) {
  if (opts_.reorder_window == 0) opts_.reorder_window = 1;
  if (opts_.period_ps == 0) opts_.period_ps = 1000;
  tty_ = opts_.progress && isatty(2);
}
Ingest::~Ingest() = default;

bool Ingest::check_lossless(const Ev &e, std::string *reason) {
  if (!seen_event_) {
    seen_event_ = true;
    meta_.has_sim_id = e.has_sim_id;
    if (e.has_sim_id) {
      meta_.sim_id = std::string(pool_.str(e.sim_id));
      sim_id_ = e.sim_id;
    }
    meta_.has_t_ns = e.has_t_ns;
  } else {
    if (e.has_sim_id != meta_.has_sim_id || (e.has_sim_id && e.sim_id != sim_id_)) {
      *reason = meta_.has_sim_id ? "sim_id differs from the trace's \"" + meta_.sim_id +
                                       "\" (µScope keeps one sim_id per trace, DUT property npu.sim_id)"
                                 : std::string("sim_id on a line of a trace whose first event has none "
                                               "(µScope keeps one sim_id per trace)");
      return false;
    }
    if (e.has_t_ns != meta_.has_t_ns) {
      *reason = std::string("t_ns ") + (e.has_t_ns ? "present" : "absent") +
                " unlike the first event (t_ns is derived from t_cycle for the whole trace)";
      return false;
    }
  }
  if (e.has_t_ns) {
    const double want = static_cast<double>(e.t_cycle) * static_cast<double>(opts_.period_ps) / 1000.0;
    if (std::fabs(e.t_ns - want) > 1e-9 * std::max(1.0, std::fabs(want))) {
      char b[160];
      std::snprintf(b, sizeof b, "t_ns %.17g disagrees with t_cycle x period_ps / 1000 = %.17g (set the period)",
                    e.t_ns, want);
      *reason = b;
      return false;
    }
  }
  return true;
}

void Ingest::progress(bool final) {
  if (!tty_) return;
  const double t = now_s();
  if (!final && t - last_progress_ < 0.2) return;
  last_progress_ = t;
  // The producer's counters as of the batch last taken (it may be reading).
  const uint64_t total = reader_.raw_size(), done = seen_raw_;
  const double mb = static_cast<double>(seen_out_) / 1e6;
  const double rate = mb / std::max(1e-6, t - start_time_);
  if (total) {
    const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const int w = 30, n = static_cast<int>(f * w);
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %.0f MB  %.0f MB/s  %llu lines%s", opts_.progress_label, n,
                 "##############################", w - n, "", f * 100, mb, rate,
                 static_cast<unsigned long long>(stats_.lines), final ? "\n" : "");
  } else {
    std::fprintf(stderr, "\r%s %.0f MB  %.0f MB/s  %llu lines%s", opts_.progress_label, mb, rate,
                 static_cast<unsigned long long>(stats_.lines), final ? "\n" : "");
  }
}

void Ingest::finalize_meta() {
  // The period the trace was converted with is the one written back
  // (TRACE_META period_ps), so that a chain of conversions keeps it.
  meta_.period_ps = opts_.period_ps;
  meta_.has_period = meta_.has_period || opts_.period_ps != 1000;
}

Status Ingest::not_jsonl(bool early, std::string *error) {
  const uint64_t nonblank = stats_.lines - stats_.blank_lines;
  *error = std::string("not NPU JSONL (expected one JSON object with \"event_type\" per line): ") +
           (early ? "its first " + std::to_string(nonblank) + " non-blank lines are"
                  : nonblank == 1 ? std::string("its only non-blank line is")
                                  : "none of its " + std::to_string(nonblank) + " non-blank lines is a valid record, all are") +
           " malformed; the first, line " + std::to_string(issues_.first_line) + ": " + issues_.first_reason;
  return USCOPE_ERR_CORRUPT;
}

Status Ingest::emit_front(const Sink &sink, std::string *error) {
  if (!emitted_any_) finalize_meta();
  const uint32_t idx = ring_.front();
  ring_.pop_front();
  const Ev &e = evs_[idx];
  emitted_any_ = true;
  last_emitted_ = e.t_cycle;
  std::string reason;
  const Status s = sink(e, &reason);
  free_.push_back(idx);
  if (s < 0) return s;
  if (s > 0 && issues_.report(e.line, reason)) {
    *error = "line " + std::to_string(e.line) + ": " + reason;
    return USCOPE_ERR_CORRUPT;
  }
  return 0;
}

// One input line as the producer read and parsed it.
struct Ingest::Rec {
  enum Kind : uint8_t { kLine, kTooLong };
  Kind kind = kLine;
  LineParser::Result pr = LineParser::kBlank;  // kLine
  uint32_t strings = 0;                        // wpool_ strings this line interned first (Batch::strs, in order)
  uint32_t meta = 0;                           // kMeta: its Batch::metas entry
  uint64_t line = 0;
  std::string reason;  // kBad
  Ev ev;               // kEvent, ids of wpool_
};

struct Ingest::Batch {
  static constexpr size_t kRecs = 1024;
  std::vector<Rec> recs = std::vector<Rec>(kRecs);
  size_t n = 0;
  std::vector<std::string> strs;  // reused: assign() allocates only for a longer string
  size_t nstrs = 0;
  std::vector<TraceMeta> metas;
  size_t nmetas = 0;
  bool last = false;  // the input ends after these lines: at its end, or at a read error
  Status status = 0;  // the read error
  std::string message;
  uint64_t error_line = 0;
  uint64_t raw_consumed = 0, bytes_out = 0, block_events = 0;  // as of the batch's end
  std::exception_ptr exc;  // the producer thread's exception (no memory)
};

// The batches in flight: the producer fills them in turn, the consumer takes
// them in the same turn. Memory: kBatches x kRecs x ~500 B.
struct Ingest::Ahead {
  static constexpr size_t kBatches = 3;
  Batch b[kBatches];
  std::mutex m;
  std::condition_variable cv;
  uint64_t filled = 0, taken = 0;  // batches given to the consumer, and given back
  bool stop = false;
  std::thread th;
};

void Ingest::fill(Batch &b) {
  b.n = b.nstrs = b.nmetas = 0;
  std::string_view line;
  while (b.n < Batch::kRecs) {
    // The block's lines never leave the window before its last is read, and
    // its last line was parsed (by the stream) in the previous turn.
    if (block_end_ && reader_.cursor() >= block_end_) {
      parser_.end_block();
      block_end_ = nullptr;
    }
    if (opts_.block_parse && !block_end_) {
      // Whole lines are in the window: parse them as one stream. The lines
      // left of a block that ended early (a line the stream could not take)
      // go per line, so a bad line costs at most one block's stage 1 again.
      const std::string_view blk = reader_.peek_block(kBlock);
      if (!blk.empty() && parser_.begin_block(blk, kBlock)) block_end_ = blk.data() + blk.size();
    }
    const LineReader::Result r = reader_.next(&line);
    // A line too long for max_line_bytes ends the stream (it holds that
    // line's document); the rest of the block goes per line.
    if (block_end_ && r == LineReader::kTooLong) parser_.end_block();
    if (r == LineReader::kEnd || r == LineReader::kError) {
      // Only after the window's last whole line, past any block.
      parser_.end_block();
      block_end_ = nullptr;
      b.last = true;
      b.status = r == LineReader::kError ? reader_.status() : 0;
      if (r == LineReader::kError) {
        b.message = reader_.message();
        b.error_line = reader_.line_number() + 1;
      }
      break;
    }
    Rec &rec = b.recs[b.n++];
    rec.line = reader_.line_number();
    rec.strings = 0;
    if (r == LineReader::kTooLong) {
      rec.kind = Rec::kTooLong;
      continue;
    }
    rec.kind = Rec::kLine;
    const size_t before = wpool_.size();
    const size_t readable = line.size() + simdjson::SIMDJSON_PADDING;  // the window keeps padding
    if (parser_.in_block() && parser_.parse_in_block(line, wpool_, &rec.ev, &rec.reason)) {
      rec.pr = LineParser::kEvent;
      ++block_events_;
    } else {
      rec.pr = parser_.parse(line, readable, wpool_, &rec.ev, &meta_line_, &rec.reason);
    }
    for (size_t id = before; id < wpool_.size(); ++id) {
      if (b.nstrs == b.strs.size()) b.strs.emplace_back();
      b.strs[b.nstrs++].assign(wpool_.str(id));
      ++rec.strings;
    }
    if (rec.pr == LineParser::kMeta) {
      if (b.nmetas == b.metas.size()) b.metas.emplace_back();
      rec.meta = static_cast<uint32_t>(b.nmetas);
      b.metas[b.nmetas++] = std::move(meta_line_);
      meta_line_ = TraceMeta{};
    }
  }
  b.raw_consumed = reader_.raw_consumed();
  b.bytes_out = reader_.bytes_out();
  b.block_events = block_events_;
}

Status Ingest::run(const Sink &sink, std::string *error) {
  const size_t window = opts_.reorder_window;
  // The window's slots are made as lines arrive: at most window + 1 are in
  // use (the window and the line being parsed), and reserving them touches
  // no page. Zeroing all of them up front (65,537 x ~450 B by default) was
  // most of the time of a small file's conversion or report.
  evs_.clear();
  evs_.reserve(window + 1);
  free_.clear();
  free_.reserve(window + 1);
  ring_.reset(window + 1);
  start_time_ = last_progress_ = now_s();
  std::string reason;

  Ahead ahead;
  if (opts_.parse_thread) {
    ahead.th = std::thread([this, &ahead] {
      for (uint64_t i = 0;; ++i) {
        {
          std::unique_lock<std::mutex> lk(ahead.m);
          ahead.cv.wait(lk, [&] { return ahead.stop || ahead.filled - ahead.taken < Ahead::kBatches; });
          if (ahead.stop) return;
        }
        Batch &b = ahead.b[i % Ahead::kBatches];
        try {
          fill(b);
        } catch (...) {
          b.exc = std::current_exception();
          b.last = true;
        }
        {
          std::lock_guard<std::mutex> lk(ahead.m);
          ++ahead.filled;
        }
        ahead.cv.notify_all();
        if (b.last) return;
      }
    });
  }
  // Stops and joins the producer (on every return: an early stop leaves it
  // waiting for a batch to fill).
  struct Join {
    Ahead &a;
    ~Join() {
      if (!a.th.joinable()) return;
      {
        std::lock_guard<std::mutex> lk(a.m);
        a.stop = true;
      }
      a.cv.notify_all();
      a.th.join();
    }
  } join{ahead};

  for (uint64_t bi = 0;; ++bi) {
    Batch *bp = &ahead.b[bi % Ahead::kBatches];
    if (opts_.parse_thread) {
      std::unique_lock<std::mutex> lk(ahead.m);
      ahead.cv.wait(lk, [&] { return ahead.filled > bi; });
    } else {
      fill(*bp);
    }
    Batch &b = *bp;
    if (b.exc) std::rethrow_exception(b.exc);
    seen_raw_ = b.raw_consumed;
    seen_out_ = b.bytes_out;
    stats_.block_events = b.block_events;
    size_t spos = 0;
    for (size_t ri = 0; ri < b.n; ++ri) {
      Rec &rec = b.recs[ri];
      // The strings this line interned first, into the caller's pool in the
      // same order as one pool would have had them.
      for (uint32_t j = 0; j < rec.strings; ++j) idmap_.push_back(pool_.intern(b.strs[spos++]));
      ++stats_.lines;
      if ((stats_.lines & 0x3FFF) == 0) progress(false);
      const uint64_t ln = rec.line;
      if (rec.kind == Rec::kTooLong) {
        const std::string why = "line longer than the maximum of " + std::to_string(opts_.max_line_bytes) +
                                " bytes (--max-line-bytes)";
        if (issues_.report(ln, why)) {
          *error = "line " + std::to_string(ln) + ": " + why;
          return USCOPE_ERR_LIMIT;
        }
        if (valid_ == 0 && stats_.lines - stats_.blank_lines >= kSniffLines) return not_jsonl(true, error);
        continue;
      }
      const LineParser::Result pr = rec.pr;
      if (pr == LineParser::kBlank) {
        ++stats_.blank_lines;
        continue;
      }
      if (pr == LineParser::kEvent || pr == LineParser::kMeta) ++valid_;
      if (pr == LineParser::kMeta) {
        TraceMeta &m = b.metas[rec.meta];
        ++stats_.meta_lines;
        if (meta_.has_meta_line) reason = "a second TRACE_META line (one per trace)";
        else if (emitted_any_) reason = "TRACE_META after events were written (put it within the first reorder-window lines)";
        else if (m.has_period && !opts_.period_given && seen_event_line_ && m.period_ps != opts_.period_ps)
          reason = "TRACE_META period_ps " + std::to_string(m.period_ps) + " after event lines read with period " +
                   std::to_string(opts_.period_ps) + " ps (put TRACE_META first, or set the period)";
        else {
          if (m.has_period && !opts_.period_given) opts_.period_ps = m.period_ps;
          const bool sid = meta_.has_sim_id, tns = meta_.has_t_ns;
          const std::string sim = meta_.sim_id;
          meta_ = std::move(m);
          meta_.has_sim_id = sid;
          meta_.has_t_ns = tns;
          meta_.sim_id = sim;
          continue;
        }
        if (issues_.report(ln, reason)) {
          *error = "line " + std::to_string(ln) + ": " + reason;
          return USCOPE_ERR_CORRUPT;
        }
        continue;
      }
      if (pr == LineParser::kBad) reason = rec.reason;
      if (pr == LineParser::kEvent) {
        seen_event_line_ = true;
        if (free_.empty()) {  // every slot holds a windowed event: evs_.size() <= window
          evs_.emplace_back();
          free_.push_back(static_cast<uint32_t>(evs_.size() - 1));
        }
        const uint32_t idx = free_.back();
        Ev &e = evs_[idx];
        // Copied field by field (the present values only, not all of Ev's
        // ~450 bytes), the parser's string ids turned into the caller's pool's.
        const Ev &src = rec.ev;
        e.t_cycle = src.t_cycle;
        e.mask = src.mask;
        e.t_ns = src.t_ns;
        e.type = src.type;
        e.has_t_ns = src.has_t_ns;
        e.has_sim_id = src.has_sim_id;
        e.sim_id = src.has_sim_id ? idmap_[src.sim_id] : src.sim_id;
        for (uint64_t mk = src.mask; mk; mk &= mk - 1) {
          const int k = __builtin_ctzll(mk);
          const uint64_t v = src.v[k];
          e.v[k] = (kKeys[k].kind == Kind::Str || kKeys[k].kind == Kind::StrArray) && v != kNull ? idmap_[v] : v;
        }
        if (!(opts_.lossless_checks && !check_lossless(e, &reason))) {
          e.line = ln;
          ++stats_.events;
          // Insert in (t_cycle, line) order; most input is in order: O(1).
          if (emitted_any_ && e.t_cycle < last_emitted_) {
            reason = "t_cycle " + std::to_string(e.t_cycle) + " is before " + std::to_string(last_emitted_) +
                     ", already written: out of order by more than the reorder window of " + std::to_string(window) +
                     " lines (--reorder-window)";
            --stats_.events;
          } else {
            free_.pop_back();
            if (ring_.empty() || evs_[ring_.back()].t_cycle <= e.t_cycle) {
              ring_.push_back(idx);
            } else {
              // The first slot later than e (upper bound: stable for equal t_cycle).
              size_t lo = 0, hi = ring_.size();
              while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (e.t_cycle < evs_[ring_[mid]].t_cycle) hi = mid;
                else lo = mid + 1;
              }
              ring_.insert(lo, idx);
            }
            if (ring_.size() > window) {
              const Status s = emit_front(sink, error);
              if (s < 0) return s;
            }
            continue;
          }
        }
      }
      if (issues_.report(ln, reason)) {
        *error = "line " + std::to_string(ln) + ": " + reason;
        return USCOPE_ERR_CORRUPT;
      }
      if (valid_ == 0 && stats_.lines - stats_.blank_lines >= kSniffLines) return not_jsonl(true, error);
    }
    const bool last = b.last;
    const Status read_status = b.status;
    const std::string read_message = last && read_status ? b.message : std::string();
    const uint64_t error_line = b.error_line;
    if (opts_.parse_thread) {
      {
        std::lock_guard<std::mutex> lk(ahead.m);
        ++ahead.taken;
      }
      ahead.cv.notify_all();
    }
    if (!last) continue;
    if (read_status) {
      progress(true);
      // Flush what is buffered so that the output holds everything before
      // the failure, then report it.
      while (!ring_.empty()) {
        const Status s = emit_front(sink, error);
        if (s < 0) return s;
      }
      *error = "line " + std::to_string(error_line) + ": " + read_message;
      return read_status;
    }
    break;
  }
  if (ahead.th.joinable()) ahead.th.join();  // it has returned after the last batch
  stats_.bytes_in = reader_.bytes_out();
  if (valid_ == 0 && stats_.lines > stats_.blank_lines) return not_jsonl(false, error);
  while (!ring_.empty()) {
    const Status s = emit_front(sink, error);
    if (s < 0) return s;
  }
  finalize_meta();
  progress(true);
  return 0;
}

}  // namespace uscope::convert
