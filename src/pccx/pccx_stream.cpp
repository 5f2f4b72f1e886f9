#include "pccx/pccx_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "format/checksum.hpp"
#include "io/input_file.hpp"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_decode.hpp"

namespace uscope::pccx {

namespace {

// The pread() window over the payload: large enough that the syscall cost
// vanishes, small beside the budget.
constexpr size_t kMinWindow = 4 << 10;
constexpr size_t kMaxWindow = 1 << 20;
// The sort buffer never holds fewer records than this, whatever the budget.
constexpr size_t kMinRecords = 64;
// A merged run's read buffer is at least this large, which bounds the number
// of runs merged at once (more runs: intermediate merge passes).
constexpr size_t kMinRunBuffer = 4 << 10;
// Payloads from this size are hashed on a second thread (hash_payload).
constexpr uint64_t kBackgroundHashBytes = 8 << 20;

// One event in the sort buffer and the spilled runs. Strings are interned
// ids (0: none).
struct Rec {
  uint64_t start;
  uint64_t index;
  uint64_t duration;
  uint32_t core_id;
  uint32_t type_id;
  uint32_t type_name;
  uint32_t api_name;
};
static_assert(sizeof(Rec) == 40, "records are spilled as they are in memory");

// Interned ids (Interner) fit 32 bits; kNoString becomes 0.
inline Rec to_rec(const DecodedEvent &ev, uint64_t index) {
  return Rec{ev.start, index, ev.duration, ev.core_id, ev.type_id,
             ev.type_name == kNoString ? 0 : static_cast<uint32_t>(ev.type_name),
             ev.api_name == kNoString ? 0 : static_cast<uint32_t>(ev.api_name)};
}

inline bool before(const Rec &a, const Rec &b) {
  return a.start != b.start ? a.start < b.start : a.index < b.index;
}
// As a type, so that sorts and heaps inline it.
struct Before {
  bool operator()(const Rec &a, const Rec &b) const { return before(a, b); }
};

// Each distinct string once, NUL-terminated at a stable address.
class Interner {
 public:
  Interner() { ptrs_.push_back(nullptr); }
  // The decoders' Names: a string's id.
  uint64_t intern(const char *s, size_t n) {
    // Names repeat (an api_name per call site): the last one is the usual hit.
    if (n == last_len_ && last_id_ != 0 && std::memcmp(ptrs_[last_id_], s, n) == 0) return last_id_;
    const std::string_view key(s, n);
    auto it = ids_.find(key);
    uint32_t id;
    if (it != ids_.end()) {
      id = it->second;
    } else {
      if (ptrs_.size() == UINT32_MAX) fail(USCOPE_ERR_LIMIT, "pccx file has over 4 billion distinct names");
      store_.emplace_back(s, n);
      const std::string &kept = store_.back();
      id = static_cast<uint32_t>(ptrs_.size());
      ptrs_.push_back(kept.c_str());
      ids_.emplace(std::string_view(kept), id);
    }
    last_id_ = id;
    last_len_ = n;
    return id;
  }
  const char *str(uint32_t id) const { return ptrs_[id]; }

 private:
  std::deque<std::string> store_;  // a deque never moves its elements
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::vector<const char *> ptrs_;
  uint32_t last_id_ = 0;
  size_t last_len_ = 0;
};

// The decoders' Src over the file: a window of payload bytes read with
// pread(), refilled as the decoder moves on (positions never go back).
class FileSource {
 public:
  FileSource(const InputFile &f, uint64_t base, uint64_t n, size_t window, uint64_t start = 0)
      : f_(f), base_(base), n_(n), window_(window), off_(start) {}

  const uint8_t *at(uint64_t pos, size_t k) {
    if (pos >= off_ && pos - off_ <= len_ && k <= len_ - (pos - off_)) return buf_.data() + (pos - off_);
    return refill(pos, k);
  }

 private:
  // Out of line: the fast path above is the common one.
  __attribute__((noinline)) const uint8_t *refill(uint64_t pos, size_t k) {
    const uint64_t loaded = off_ + len_;
    if (pos >= off_ && pos <= loaded) {
      const size_t keep = static_cast<size_t>(loaded - pos);
      if (keep) std::memmove(buf_.data(), buf_.data() + (pos - off_), keep);  // data() is NULL before the first fill
      len_ = keep;
    } else {
      len_ = 0;
    }
    off_ = pos;
    // A string longer than the window grows it: such a string is kept
    // (interned) anyway.
    const size_t want = std::max(window_, k);
    if (buf_.size() < want) buf_.resize(want);
    const size_t r = static_cast<size_t>(std::min<uint64_t>(buf_.size() - len_, n_ - (off_ + len_)));
    f_.read(base_ + off_ + len_, buf_.data() + len_, r, "the payload");
    len_ += r;
    return buf_.data();
  }

  const InputFile &f_;
  const uint64_t base_;  // file offset of the payload
  const uint64_t n_;     // payload bytes
  const size_t window_;
  std::vector<uint8_t> buf_;
  uint64_t off_;         // payload offset of buf_[0]
  size_t len_ = 0;       // bytes of buf_ loaded
};

// FNV-1a 64 of the payload (the checksum), read with its own pread()s: the
// hash goes at about 0.6 GB/s, as slow as the decoding, so a large payload
// is hashed on a second thread while the first decodes (both read the same
// pages of the page cache). `stop` ends it early (the result is then unused).
uint64_t hash_payload(const InputFile &f, uint64_t base, uint64_t n, size_t window,
                      const std::atomic<bool> &stop) {
  std::vector<uint8_t> buf(static_cast<size_t>(std::min<uint64_t>(n, window)));
  uint64_t h = kFnv64Offset;
  for (uint64_t at = 0; at < n && !stop.load(std::memory_order_relaxed);) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n - at, buf.size()));
    f.read(base + at, buf.data(), k, "the payload");
    h = fnv1a64(buf.data(), k, h);
    at += k;
  }
  return h;
}

// hash_payload on a thread of its own; joined (stopped first unless
// finish() waits for the result) before it goes away.
class BackgroundHash {
 public:
  BackgroundHash() = default;
  BackgroundHash(const BackgroundHash &) = delete;
  BackgroundHash &operator=(const BackgroundHash &) = delete;
  ~BackgroundHash() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // False when no thread could be started (the caller hashes itself).
  bool start(const InputFile &f, uint64_t base, uint64_t n, size_t window) {
    try {
      thread_ = std::thread([this, &f, base, n, window] {
        try {
          hash_ = hash_payload(f, base, n, window, stop_);
        } catch (...) {
          error_ = std::current_exception();
        }
      });
    } catch (const std::system_error &) {
      return false;
    }
    return true;
  }
  // Wait for the hash; rethrows the hashing thread's error.
  uint64_t finish() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return hash_;
  }

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  uint64_t hash_ = 0;
  std::exception_ptr error_;
};

// The unlinked temporary file that holds spilled runs.
class SpillFile {
 public:
  SpillFile() = default;
  SpillFile(const SpillFile &) = delete;
  SpillFile &operator=(const SpillFile &) = delete;
  ~SpillFile() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    size_ = 0;
  }
  uint64_t size() const { return size_; }

  // Append; returns the offset written at.
  uint64_t append(const void *data, size_t n) {
    if (fd_ < 0) create();
    const uint64_t off = size_;
    const char *p = static_cast<const char *>(data);
    size_t done = 0;
    while (done < n) {
      const ssize_t w = ::pwrite(fd_, p + done, n - done, static_cast<off_t>(off + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        fail(USCOPE_ERR_IO, "cannot write %zu bytes of sorted pccx events to the temporary file in %s: %s", n,
             dir_.c_str(), w < 0 ? std::strerror(errno) : "no space written");
      done += static_cast<size_t>(w);
    }
    size_ += n;
    return off;
  }
  void read(uint64_t off, void *data, size_t n) const {
    char *p = static_cast<char *>(data);
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        fail(USCOPE_ERR_IO, "cannot read sorted pccx events back from the temporary file in %s: %s", dir_.c_str(),
             r < 0 ? std::strerror(errno) : "it is shorter than written");
      done += static_cast<size_t>(r);
    }
  }

 private:
  void create() {
    const char *env = std::getenv("TMPDIR");
    dir_ = env && *env ? env : "/tmp";
#ifdef O_TMPFILE
    // No name at all: nothing to clean up after a crash.
    fd_ = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ >= 0) return;
#endif
    // File systems without O_TMPFILE: a named file, unlinked at once.
    std::string name = dir_ + "/.uscope-pccx-sort-XXXXXX";
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0)
      fail(USCOPE_ERR_IO, "cannot create a temporary file in %s to sort pccx events: %s", dir_.c_str(),
           std::strerror(errno));
    ::unlink(name.c_str());
  }

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string dir_;
};

struct Run {
  uint64_t off;    // byte offset in the spill file
  uint64_t count;  // records
};

// Binary min-heaps (4 children a node measured slower: the branchy choice
// of the least child costs more than the levels it saves).
constexpr size_t kHeapArity = 2;

// Move h[i] down a min-heap of n elements (less: the order) to its place.
template <class T, class Less>
void sift_down(T *h, size_t n, size_t i, Less less) {
  const T k = h[i];
  for (;;) {
    const size_t first = kHeapArity * i + 1;
    if (first >= n) break;
    size_t c = first;
    const size_t last = std::min(n, first + kHeapArity);
    for (size_t j = first + 1; j < last; ++j)
      if (less(h[j], h[c])) c = j;
    if (!less(h[c], k)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = k;
}
// Order n elements as a heap.
template <class T, class Less>
void make_heap(T *h, size_t n, Less less) {
  for (size_t i = n / kHeapArity + 1; i-- > 0;)
    if (i < n) sift_down(h, n, i, less);
}

// A k-way merge of sorted runs, each read through its own buffer. The heap
// holds each run's head key, so that ordering it touches no run buffer.
class Merger {
 public:
  void start(const SpillFile &f, const std::vector<Run> &runs, size_t per_run) {
    file_ = &f;
    cursors_.clear();
    heap_.clear();
    cursors_.resize(runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      Cursor &c = cursors_[i];
      c.run = runs[i];
      c.buf.resize(per_run);
      if (fill(c)) heap_.push_back(Key{c.buf[0].start, c.buf[0].index, static_cast<uint32_t>(i)});
    }
    make_heap(heap_.data(), heap_.size(), std::less<Key>());
  }
  // The next record in order; false at the end.
  bool next(Rec &out) {
    if (heap_.empty()) return false;
    Cursor &c = cursors_[heap_[0].run];
    out = c.buf[c.pos++];
    if (c.pos < c.len || fill(c)) {
      heap_[0].start = c.buf[c.pos].start;
      heap_[0].index = c.buf[c.pos].index;
    } else {
      heap_[0] = heap_.back();
      heap_.pop_back();
    }
    if (!heap_.empty()) sift_down(heap_.data(), heap_.size(), 0, std::less<Key>());
    return true;
  }

 private:
  struct Cursor {
    Run run;
    uint64_t read = 0;  // records read from the run
    std::vector<Rec> buf;
    size_t pos = 0, len = 0;
  };
  struct Key {
    uint64_t start, index;
    uint32_t run;
    bool operator<(const Key &o) const { return start != o.start ? start < o.start : index < o.index; }
  };
  bool fill(Cursor &c) {
    const uint64_t left = c.run.count - c.read;
    if (left == 0) return false;
    const size_t k = static_cast<size_t>(std::min<uint64_t>(left, c.buf.size()));
    file_->read(c.run.off + c.read * sizeof(Rec), c.buf.data(), k * sizeof(Rec));
    c.read += k;
    c.pos = 0;
    c.len = k;
    return true;
  }

  const SpillFile *file_ = nullptr;
  std::vector<Cursor> cursors_;
  std::vector<Key> heap_;
};

// The api names of a flatbuf PCC2 trailer, sorted by event index, joined
// with records that come in ascending index order.
class NameJoin {
 public:
  explicit NameJoin(const std::vector<std::pair<uint32_t, uint32_t>> &names) : names_(names) {}
  // The name id of event `index` (0: none); indexes must not decrease.
  uint32_t at(uint64_t index) {
    while (pos_ < names_.size() && names_[pos_].first < index) ++pos_;
    return pos_ < names_.size() && names_[pos_].first == index ? names_[pos_].second : 0;
  }

 private:
  const std::vector<std::pair<uint32_t, uint32_t>> &names_;
  size_t pos_ = 0;
};

// How far back in the file an event's start can go. A min-heap of H
// records that pushes events in file order and pops the least once it holds
// H gives them in (start, index) order iff no event has H or more earlier
// events with a later start. This bounds that count from above for every
// event: the earlier events with a later start all lie after p, the first
// position whose start exceeds the event's, and p is found (to a block of
// `block` events) among prefix-max samples taken at each block's end. Files
// written as events complete (start = end - duration) are ordered this way,
// with H about the number of events in flight.
class DisorderBound {
 public:
  // Bound up to `limit` (a heap the budget holds); beyond it, bounded() is false.
  explicit DisorderBound(uint64_t limit)
      : limit_(limit), block_(std::max<uint64_t>(1, (limit + kSamples - 1) / kSamples)), ring_(kSamples) {}
  void add(uint64_t j, uint64_t start) {
    if (start >= max_) {
      max_ = start;
    } else if (bounded_) {
      behind(j, start);
    }
    if (++in_block_ == block_) {
      ring_[samples_ % kSamples] = max_;
      ++samples_;
      in_block_ = 0;
    }
  }
  bool bounded() const { return bounded_; }
  uint64_t heap() const { return lag_ + 1; }  // H

 private:
  static constexpr uint64_t kSamples = 1024;
  void behind(uint64_t j, uint64_t start) {
    // The first sample k (block k ends at (k+1)*block - 1) whose prefix max
    // is later than start: p lies after block k-1.
    uint64_t lo = samples_ > kSamples ? samples_ - kSamples : 0, hi = samples_;
    const uint64_t oldest = lo;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (ring_[mid % kSamples] > start) hi = mid;
      else lo = mid + 1;
    }
    if (lo == oldest && oldest > 0) {
      bounded_ = false;  // further back than the samples reach
      return;
    }
    const uint64_t lag = j + 1 - lo * block_;  // >= j - p + 1
    if (lag > lag_) lag_ = lag;
    if (lag_ + 1 > limit_) bounded_ = false;
  }

  const uint64_t limit_;
  const uint64_t block_;
  std::vector<uint64_t> ring_;  // prefix max at the end of the last kSamples blocks
  uint64_t samples_ = 0;
  uint64_t in_block_ = 0;
  uint64_t max_ = 0;
  uint64_t lag_ = 0;
  bool bounded_ = true;
};

// The Reader's rule (pccx_reader.cpp): every open error names the file.
[[noreturn]] void rethrow_with_path(const Error &e, const std::string &path) {
  if (std::strstr(e.what(), path.c_str())) throw e;
  fail(e.code(), "%s: %s", path.c_str(), e.what());
}

}  // namespace

struct SortedEventStream::Impl {
  // How open() left the records, and so what next() does.
  enum class Mode {
    kFill,  // every record so far is in buf_
    kRuns,  // full buffers were sorted and spilled
    kTail,  // buf_ filled (a file sorted or of bounded disorder so far, or flatbuf); later records not kept
  };
  enum class Serve { kNothing, kMemory, kTail, kWindow, kMerge };

  Impl(uint64_t memory_budget, bool in_file_order) : file_order(in_file_order), budget(memory_budget) {}
  // Served by index: the file's order is already the order wanted, so the
  // file counts as sorted whatever its starts.
  const bool file_order;

  void open(const std::string &path, uint32_t flags);
  bool next(SortedEvent *out);
  void first_pass(uint32_t flags);
  void absorb(const DecodedEvent &ev, uint64_t index);
  void spill_buffer();
  void second_pass();
  void prepare_merge();
  void start_decoding(uint64_t from_pos, uint64_t from_index);
  bool tail_next(Rec &r);
  void emit(const Rec &r, SortedEvent *out) const;

  const uint64_t budget;
  std::string path;
  InputFile file;
  pccx_header_t hdr{};
  HeaderStrings strings;
  Interner names;
  uint64_t base = 0;  // file offset of the payload
  size_t window = kMinWindow;
  size_t cap = kMinRecords;

  Mode mode = Mode::kFill;
  bool sorted = true;            // in the order served
  bool starts_decrease = false;  // a start below the one before it (Stats::presorted)
  uint64_t last_start = 0;
  std::optional<DisorderBound> disorder;  // pass 1 only
  uint64_t resume_pos = 0, resume_index = 0;  // the first event after the buffer (kTail)
  std::vector<Rec> buf;
  std::vector<std::pair<uint32_t, uint32_t>> flat_names;  // (event index, name id), sorted by index

  SpillFile spill;
  std::vector<Run> runs;
  Stats stats{};

  Serve serve = Serve::kNothing;
  size_t pos = 0;  // next record of buf_ (kMemory, kTail)
  Merger merger;
  pccx_header_t scratch{};  // what a second decoding writes into the header, discarded
  std::optional<FileSource> tail_src;
  std::optional<BincodeDecoder<FileSource, Interner>> tail_bincode;
  std::optional<FlatbufRecords<FileSource>> tail_flatbuf;
  std::optional<NameJoin> tail_names;
  std::vector<Rec> heap;  // kWindow: a min-heap of up to window_heap records
  size_t window_heap = 0;
  bool tail_done = false;
};

void SortedEventStream::Impl::open(const std::string &p, uint32_t flags) {
  path = p;
  try {
    file.open(path, "a pccx container");
    check_open_flags(flags);
    const uint64_t size = file.size();
    uint8_t head[kDescribeBytes];
    const size_t avail = static_cast<size_t>(std::min<uint64_t>(size, sizeof head));
    file.read(0, head, avail, "the fixed header");
    parse_fixed_header(head, avail, size, hdr);
    {
      // Bounded by kMaxHeaderBytes (parse_fixed_header) and freed at once.
      std::vector<char> json(static_cast<size_t>(hdr.header_bytes));
      file.read(kFixedHeader, json.data(), json.size(), "the JSON header");
      parse_json_header(json.data(), json.size(), hdr, strings);
    }
    check_payload_fits(hdr, size);
    base = kFixedHeader + hdr.header_bytes;
    window = static_cast<size_t>(std::clamp<uint64_t>(budget / 16, kMinWindow, kMaxWindow));
    // The budget holds the sort buffer and two windows (decoder, hasher).
    cap = static_cast<size_t>(
        std::max<uint64_t>(kMinRecords, (budget > 2 * window ? budget - 2 * window : 0) / sizeof(Rec)));
    stats.sort_capacity = cap;
    disorder.emplace(cap);
    if (hdr.encoding == PCCX_ENCODING_BINCODE || hdr.encoding == PCCX_ENCODING_FLATBUF) {
      first_pass(flags);
    } else {
      hdr.computed_checksum = hash_payload(file, base, hdr.payload_bytes, window, std::atomic<bool>{false});
      settle_checksum(hdr, flags);
    }
    attach_strings(hdr, strings);
    stats.presorted = !starts_decrease;
    stats.decode_passes = 1;
    const bool bounded = disorder->bounded();
    const uint64_t heap_need = disorder->heap();
    disorder.reset();  // a second pass does not track it
    if (!flat_names.empty()) {
      NameJoin join(flat_names);  // buf_ holds the first events, in file order
      for (Rec &r : buf) r.api_name = join.at(r.index);
    }

    switch (mode) {
      case Mode::kFill:
        // Everything fits: one sort in memory (none for a sorted file).
        if (!sorted) std::sort(buf.begin(), buf.end(), Before());
        serve = Serve::kMemory;
        break;
      case Mode::kTail:
        if (sorted) {
          serve = Serve::kTail;  // the buffer, then the rest decoded again by next()
          stats.decode_passes = 2;
          break;
        }
        if (bounded) {
          // Nearly in order: decoded again through a heap of a few records.
          serve = Serve::kWindow;
          stats.decode_passes = 2;
          window_heap = static_cast<size_t>(heap_need);
          stats.window = window_heap;
          break;
        }
        // Unsorted after all, past the buffer: the buffer is a sorted run; the
        // records after it are decoded again into runs.
        spill_buffer();
        mode = Mode::kRuns;
        second_pass();
        prepare_merge();
        break;
      case Mode::kRuns:
        spill_buffer();
        prepare_merge();
        break;
    }
  } catch (const Error &e) {
    rethrow_with_path(e, path);
  }
}

void SortedEventStream::Impl::first_pass(uint32_t flags) {
  const uint64_t n = hdr.payload_bytes;
  // The checksum: a small payload is hashed first, as the Reader does; a
  // large one on a second thread while this one decodes.
  BackgroundHash hasher;
  const bool background = n >= kBackgroundHashBytes && hasher.start(file, base, n, window);
  if (!background) {
    hdr.computed_checksum = hash_payload(file, base, n, window, std::atomic<bool>{false});
    settle_checksum(hdr, flags);
  }
  FileSource src(file, base, n, window);
  DecodedEvent ev;
  try {
    if (hdr.encoding == PCCX_ENCODING_BINCODE) {
      BincodeDecoder<FileSource, Interner> d(src, names, n, hdr);
      d.begin();
      buf.reserve(static_cast<size_t>(std::min<uint64_t>(cap, d.count())));
      while (d.next(ev)) {
        absorb(ev, d.index() - 1);
        if (mode == Mode::kTail && resume_index == 0) {
          resume_pos = d.pos();
          resume_index = d.index();
        }
      }
      hdr.num_events = d.count();
    } else {
      FlatbufRecords<FileSource> d(src, n);
      buf.reserve(static_cast<size_t>(std::min<uint64_t>(cap, n / kFlatStride)));
      while (d.next(ev)) {
        absorb(ev, d.count() - 1);
        if (mode == Mode::kTail && resume_index == 0) resume_index = d.count();
      }
      hdr.num_events = d.count();
      hdr.total_cycles = d.total_cycles();
      if (d.trailer()) {
        hdr.flatbuf_trailer = 1;
        decode_flatbuf_trailer(src, n, d.end(), d.count(), [&](uint32_t idx, const char *s, uint16_t len) {
          flat_names.emplace_back(idx, static_cast<uint32_t>(names.intern(s, len)));
        });
        // A repeated index: the last entry wins (as in the Reader).
        std::stable_sort(flat_names.begin(), flat_names.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
        size_t k = 0;
        for (size_t i = 0; i < flat_names.size(); ++i) {
          if (i + 1 < flat_names.size() && flat_names[i + 1].first == flat_names[i].first) continue;
          flat_names[k++] = flat_names[i];
        }
        flat_names.resize(k);
        flat_names.shrink_to_fit();
        hdr.num_api_names = k;
      } else {
        hdr.payload_trailing_bytes = n - d.end();
      }
    }
  } catch (const FileChanged &) {
    throw;
  } catch (const Error &) {
    // The Reader checks a strict checksum before it decodes: a payload that
    // fails both is a checksum error there, so here too.
    if (background && (flags & PCCX_OPEN_STRICT_CHECKSUM) && hdr.checksum_present) {
      hdr.computed_checksum = hasher.finish();
      settle_checksum(hdr, flags);
    }
    throw;
  }
  if (background) {
    hdr.computed_checksum = hasher.finish();
    settle_checksum(hdr, flags);
  }
}

// One decoded event of the first (or second) pass.
void SortedEventStream::Impl::absorb(const DecodedEvent &ev, uint64_t index) {
  if (ev.start < last_start) {
    starts_decrease = true;
    if (!file_order) sorted = false;
  }
  last_start = ev.start;
  if (disorder) disorder->add(index, ev.start);
  if (mode == Mode::kTail) return;
  buf.push_back(to_rec(ev, index));
  if (buf.size() < cap) return;
  // A flatbuf file's api names come after its records (the PCC2 trailer):
  // its runs are made in a second pass, which knows them.
  if (mode == Mode::kFill && (sorted || (disorder && disorder->bounded()) || hdr.encoding == PCCX_ENCODING_FLATBUF)) {
    mode = Mode::kTail;  // the caller notes where the rest starts
    return;
  }
  spill_buffer();
  mode = Mode::kRuns;
}

void SortedEventStream::Impl::spill_buffer() {
  if (buf.empty()) return;
  std::sort(buf.begin(), buf.end(), Before());  // cheap on a sorted buffer
  const uint64_t off = spill.append(buf.data(), buf.size() * sizeof(Rec));
  runs.push_back(Run{off, buf.size()});
  buf.clear();
}

// The records after the buffer of a file that turned out unsorted past it.
void SortedEventStream::Impl::second_pass() {
  stats.decode_passes = 2;
  const uint64_t n = hdr.payload_bytes;
  FileSource src(file, base, n, window, resume_pos);
  DecodedEvent ev;
  scratch = hdr;
  if (hdr.encoding == PCCX_ENCODING_BINCODE) {
    BincodeDecoder<FileSource, Interner> d(src, names, n, scratch);
    d.resume(resume_pos, resume_index, hdr.num_events);
    while (d.next(ev)) absorb(ev, d.index() - 1);
  } else {
    FlatbufRecords<FileSource> d(src, n);
    d.resume(resume_index, hdr.num_events);
    NameJoin join(flat_names);
    while (d.next(ev)) {
      const uint32_t name = join.at(d.count() - 1);
      if (name) ev.api_name = name;
      absorb(ev, d.count() - 1);
    }
    flat_names.clear();
    flat_names.shrink_to_fit();
  }
  spill_buffer();
}

void SortedEventStream::Impl::prepare_merge() {
  buf.clear();
  buf.shrink_to_fit();
  stats.runs = runs.size();
  // Merge at most `fan_in` runs at once, each through a buffer of at least
  // kMinRunBuffer bytes; more runs are merged in groups into longer runs
  // first (appended to the same file).
  const size_t fan_in = static_cast<size_t>(std::max<uint64_t>(2, budget / kMinRunBuffer));
  while (runs.size() > fan_in) {
    ++stats.merge_passes;
    const size_t per = std::max<size_t>(1, static_cast<size_t>(budget / (fan_in + 1) / sizeof(Rec)));
    std::vector<Run> longer;
    std::vector<Rec> out;
    out.reserve(per);
    for (size_t g = 0; g < runs.size(); g += fan_in) {
      const std::vector<Run> group(runs.begin() + static_cast<std::ptrdiff_t>(g),
                                   runs.begin() + static_cast<std::ptrdiff_t>(std::min(runs.size(), g + fan_in)));
      merger.start(spill, group, per);
      Run run{spill.size(), 0};
      Rec r;
      while (merger.next(r)) {
        out.push_back(r);
        if (out.size() == per) {
          spill.append(out.data(), out.size() * sizeof(Rec));
          run.count += out.size();
          out.clear();
        }
      }
      if (!out.empty()) {
        spill.append(out.data(), out.size() * sizeof(Rec));
        run.count += out.size();
        out.clear();
      }
      longer.push_back(run);
    }
    runs = std::move(longer);
  }
  stats.spill_bytes = spill.size();
  const size_t per = std::max<size_t>(1, static_cast<size_t>(budget / (runs.size() + 1) / sizeof(Rec)));
  merger.start(spill, runs, std::max<size_t>(per, kMinRunBuffer / sizeof(Rec)));
  serve = Serve::kMerge;
}

// A second decoding from event from_index at payload offset from_pos, for next().
void SortedEventStream::Impl::start_decoding(uint64_t from_pos, uint64_t from_index) {
  const uint64_t n = hdr.payload_bytes;
  tail_src.emplace(file, base, n, window, from_pos);
  scratch = hdr;
  if (hdr.encoding == PCCX_ENCODING_BINCODE) {
    tail_bincode.emplace(*tail_src, names, n, scratch);
    tail_bincode->resume(from_pos, from_index, hdr.num_events);
  } else {
    tail_flatbuf.emplace(*tail_src, n);
    tail_names.emplace(flat_names);
    tail_flatbuf->resume(from_index, hdr.num_events);
  }
}

bool SortedEventStream::Impl::tail_next(Rec &r) {
  if (!tail_src) {
    buf.clear();
    buf.shrink_to_fit();
    if (serve == Serve::kWindow) {
      start_decoding(hdr.encoding == PCCX_ENCODING_BINCODE ? 16 : 0, 0);  // after NpuTrace's u64 total, u64 count
      heap.reserve(window_heap);
    } else {
      start_decoding(hdr.encoding == PCCX_ENCODING_BINCODE ? resume_pos : resume_index * kFlatStride, resume_index);
    }
  }
  DecodedEvent ev;
  uint64_t index;
  if (tail_bincode) {
    if (!tail_bincode->next(ev)) return false;
    index = tail_bincode->index() - 1;
  } else {
    if (!tail_flatbuf->next(ev)) return false;
    index = tail_flatbuf->count() - 1;
    const uint32_t name = tail_names->at(index);
    if (name) ev.api_name = name;
  }
  r = to_rec(ev, index);
  return true;
}

void SortedEventStream::Impl::emit(const Rec &r, SortedEvent *out) const {
  out->index = r.index;
  out->start = r.start;
  out->duration = r.duration;
  out->core_id = r.core_id;
  out->type_id = r.type_id;
  if (r.type_name) out->type_name = names.str(r.type_name);
  else out->type_name = r.type_id < PCCX_EVENT_TYPE_COUNT ? kTypeNames[r.type_id] : "UNKNOWN";
  out->api_name = r.api_name ? names.str(r.api_name) : nullptr;
}

bool SortedEventStream::Impl::next(SortedEvent *out) {
  try {
    Rec r;
    switch (serve) {
      case Serve::kNothing: return false;
      case Serve::kMemory:
        if (pos == buf.size()) return false;
        emit(buf[pos++], out);
        return true;
      case Serve::kTail:
        if (pos < buf.size()) {
          emit(buf[pos++], out);
          return true;
        }
        if (!tail_next(r)) return false;
        emit(r, out);
        return true;
      case Serve::kWindow: {
        // A min-heap of window_heap records; each new one replaces the
        // least, which goes out (or goes out itself when it is the least).
        while (!tail_done && heap.size() < window_heap) {
          if (!tail_next(r)) {
            tail_done = true;
            make_heap(heap.data(), heap.size(), Before());
            break;
          }
          heap.push_back(r);
          if (heap.size() == window_heap) make_heap(heap.data(), heap.size(), Before());
        }
        if (!tail_done) {
          if (!tail_next(r)) {
            tail_done = true;
          } else if (before(r, heap[0])) {
            emit(r, out);
            return true;
          } else {
            emit(heap[0], out);
            heap[0] = r;
            sift_down(heap.data(), heap.size(), 0, Before());
            return true;
          }
        }
        if (heap.empty()) return false;
        emit(heap[0], out);
        heap[0] = heap.back();
        heap.pop_back();
        if (!heap.empty()) sift_down(heap.data(), heap.size(), 0, Before());
        return true;
      }
      case Serve::kMerge:
        if (!merger.next(r)) return false;
        emit(r, out);
        return true;
    }
    return false;
  } catch (const Error &e) {
    rethrow_with_path(e, path);
  }
}

SortedEventStream::SortedEventStream(uint64_t memory_budget, bool file_order)
    : impl_(new Impl(memory_budget, file_order)) {}
SortedEventStream::~SortedEventStream() = default;

void SortedEventStream::open(const std::string &path, uint32_t flags) {
  impl_.reset(new Impl(impl_->budget, impl_->file_order));
  impl_->open(path, flags);
}
const pccx_header_t &SortedEventStream::header() const { return impl_->hdr; }
uint64_t SortedEventStream::event_count() const { return impl_->hdr.num_events; }
bool SortedEventStream::next(SortedEvent *out) { return impl_->next(out); }
SortedEventStream::Stats SortedEventStream::stats() const { return impl_->stats; }

}  // namespace uscope::pccx
