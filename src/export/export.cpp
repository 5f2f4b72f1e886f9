// uscope_export's frame (export.hpp): the options resolved, the input opened,
// the exporter the format names run, the output published.
#include "export/export.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "base/huge_pages.hpp"
#include "convert/convert.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::exporter {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string dir_of(const std::string &p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}
std::string base_of(const std::string &p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// Removes a directory and the files in it (an exporter's output directory
// holds files only; a subdirectory is removed the same way).
void remove_tree(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (const dirent *e = ::readdir(d)) {
      if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
      const std::string p = dir + "/" + e->d_name;
      struct stat st {};
      if (::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        remove_tree(p);
      else
        ::unlink(p.c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

}  // namespace

// ── Progress ──

Progress::Progress(bool enabled, std::string label) : tty_(enabled && ::isatty(2)), label_(std::move(label)) {
  start_ = now_s();
}

void Progress::update(uint64_t done, uint64_t total, const char *unit) {
  if (!tty_) return;
  const double t = now_s();
  if (t - last_ < 0.2) return;
  last_ = t;
  drawn_ = true;
  if (total) {
    const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const int w = 30, n = static_cast<int>(f * w);
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %llu / %llu %s  %.0f s", label_.c_str(), n,
                 "##############################", w - n, "", f * 100, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total), unit, t - start_);
  } else {
    std::fprintf(stderr, "\r%s %llu %s  %.0f s", label_.c_str(), static_cast<unsigned long long>(done), unit,
                 t - start_);
  }
}

void Progress::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

// ── OutFile ──

// The writing thread of an OutFile, and the blocks: the caller's thread
// fills a block and hands it over, up to kQueued waiting, and takes an empty
// one (written, or new while fewer than kBlocks exist), so that neither side
// copies or allocates in steady state. Full blocks are written with O_DIRECT
// from where they are; the tail (the last block, partial) without.
struct OutFile::Writer {
  // O_DIRECT wants the buffer, the offset and the length aligned to the
  // device's logical block: 4 KiB covers the 512-byte and 4 KiB ones.
  static constexpr size_t kAlign = 4096, kBlock = 4 << 20;
  static constexpr size_t kQueued = 4, kBlocks = kQueued + 2;

  Writer(int fd, const std::string &path) : fd_(fd), path_(path) {
    struct stat st {};
    // Only a regular file: on a pipe, O_DIRECT means packet mode.
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      const int flags = ::fcntl(fd, F_GETFL);
      direct_ = flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
    }
    thread_ = std::thread([this] { run(); });
  }
  ~Writer() { stop(); }

  // An empty block: a written one, or a new one while fewer than kBlocks
  // exist; else waits for one.
  char *block() {
    std::unique_lock<std::mutex> l(m_);
    if (free_.empty() && blocks_.size() < kBlocks) {
      void *m = nullptr;
      if (::posix_memalign(&m, kHugePage, kBlock) != 0) fail(USCOPE_ERR_NO_MEMORY, "no memory for the output's buffers");
      // Huge pages (base/huge_pages.hpp): each O_DIRECT write pins its
      // block's pages in the kernel, 1,024 small ones a block otherwise
      // (gup_fast_fallback was 2-5% of an export's CPU), and the encoders'
      // copies into the block miss the TLB less.
      advise_huge_pages(m, kBlock);
      blocks_.emplace_back(static_cast<char *>(m));
      return blocks_.back().get();
    }
    cv_.wait(l, [&] { return !free_.empty() || !error_.empty(); });
    if (!error_.empty()) fail(USCOPE_ERR_IO, "%s", error_.c_str());
    char *b = free_.back();
    free_.pop_back();
    return b;
  }
  // Queues block b's first n bytes (n < kBlock: the last one); waits while
  // kQueued are waiting already.
  void hand(char *b, size_t n) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return full_.size() < kQueued || !error_.empty(); });
    if (!error_.empty()) {
      free_.push_back(b);
      fail(USCOPE_ERR_IO, "%s", error_.c_str());
    }
    full_.push_back(Block{b, n});
    cv_.notify_all();
  }
  // Writes everything handed over; throws the error the thread met.
  void finish() {
    stop();
    if (!error_.empty()) fail(USCOPE_ERR_IO, "%s", error_.c_str());
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Writes the queued blocks in order; once stopped, those still queued
  // first.
  void run() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [&] { return !full_.empty() || stop_; });
      if (full_.empty()) return;
      const Block b = full_.front();
      full_.pop_front();
      const bool failed = !error_.empty();
      l.unlock();
      std::string err = failed ? std::string() : take(b.p, b.n);
      l.lock();
      if (!err.empty() && error_.empty()) error_ = std::move(err);
      free_.push_back(b.p);
      cv_.notify_all();
    }
  }
  // Returns the error met, or "".
  std::string take(const char *b, size_t n) {
    if (direct_ && n % kAlign != 0) {
      // The tail is not a whole block: written through the page cache.
      const int flags = ::fcntl(fd_, F_GETFL);
      if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
        return format_message("cannot write %s: %s", path_.c_str(), std::strerror(errno));
      direct_ = false;
    }
    return write_all(b, n);
  }
  std::string write_all(const char *p, size_t n) {
    while (n) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EINVAL && direct_) {
        // The file system took the flag but not the write: plain writes
        // from here (the offset is still a whole number of blocks).
        const int flags = ::fcntl(fd_, F_GETFL);
        if (flags >= 0 && ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) == 0) {
          direct_ = false;
          continue;
        }
      }
      if (w <= 0)
        return format_message("cannot write %s: %s", path_.c_str(), std::strerror(w < 0 ? errno : ENOSPC));
      p += w;
      n -= static_cast<size_t>(w);
    }
    return std::string();
  }

  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  int fd_;
  std::string path_;
  bool direct_ = false;  // the writing thread's, once it runs
  std::mutex m_;
  std::condition_variable cv_;
  struct Block {
    char *p;
    size_t n;  // the bytes of p to write
  };
  std::vector<std::unique_ptr<char, Free>> blocks_;  // every block made: at most kBlocks
  std::deque<Block> full_;  // handed over, not yet written: at most kQueued
  std::vector<char *> free_;
  bool stop_ = false;
  std::string error_;  // the first write error; under m_
  std::thread thread_;
};

OutFile::OutFile(const std::string &path) : path_(path) {
  fd_ = file_.create(path, O_WRONLY);
  front_.reserve(kFrontBytes + (64 << 10));
}

OutFile::~OutFile() {
  w_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void OutFile::put(const char *p, size_t n) {
  while (n) {
    if (!block_) {
      if (!w_) w_ = std::make_unique<Writer>(fd_, path_);
      block_ = w_->block();
      used_ = 0;
    }
    const size_t k = std::min(n, Writer::kBlock - used_);
    std::memcpy(block_ + used_, p, k);
    used_ += k;
    p += k;
    n -= k;
    if (used_ == Writer::kBlock) {
      char *b = block_;
      block_ = nullptr;
      handed_ += used_;
      used_ = 0;
      w_->hand(b, Writer::kBlock);
    }
  }
}

const std::string &OutFile::temp_path() const { return file_.written_path(); }

void OutFile::publish() {
  flush();
  if (block_) {
    char *b = block_;
    const size_t n = used_;
    block_ = nullptr;
    handed_ += n;
    used_ = 0;
    w_->hand(b, n);
  }
  if (w_) w_->finish();
  w_.reset();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(USCOPE_ERR_IO, "cannot write %s: %s", path_.c_str(), std::strerror(errno));
  file_.publish(false);
}

// ── OutDir ──

OutDir::OutDir(const std::string &path) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    fail(USCOPE_ERR_IO, "cannot create the directory %s: a file of that name exists", path.c_str());
  std::string t = dir_of(path) + "/." + base_of(path) + ".XXXXXX";
  if (!::mkdtemp(t.data()))
    fail(USCOPE_ERR_IO, "cannot create %s: %s (creating its temporary directory %s)", path.c_str(),
         std::strerror(errno), t.c_str());
  temp_ = t;
}

OutDir::~OutDir() {
  if (!temp_.empty()) remove_tree(temp_);
}

void OutDir::publish() {
  // rename(2) replaces only an empty directory: a previous database is moved
  // aside first and removed once the new one is in place.
  std::string old;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    old = dir_of(path_) + "/." + base_of(path_) + ".old.XXXXXX";
    if (!::mkdtemp(old.data()) || ::rename(path_.c_str(), old.c_str()) != 0)
      fail(USCOPE_ERR_IO, "cannot replace the directory %s: %s", path_.c_str(), std::strerror(errno));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    if (!old.empty()) (void)::rename(old.c_str(), path_.c_str());
    fail(USCOPE_ERR_IO, "cannot rename %s onto %s: %s", temp_.c_str(), path_.c_str(), std::strerror(e));
  }
  temp_.clear();
  if (!old.empty()) remove_tree(old);
}

// ── Job ──

void Job::note(const std::string &text) const {
  if (opts.on_issue) opts.on_issue(opts.user, 0, text.c_str());
}

// ── run_export ──

namespace {

using Fn = void (*)(Job &);

Fn exporter_of(uint32_t format) {
  switch (format) {
    case USCOPE_EXPORT_KONATA: return export_konata;
    case USCOPE_EXPORT_PERFETTO: return export_perfetto;
    case USCOPE_EXPORT_CHROME_JSON: return export_chrome_json;
    case USCOPE_EXPORT_NYTPROF: return export_nytprof;
    case USCOPE_EXPORT_HPCTOOLKIT: return export_hpctoolkit;
    case USCOPE_EXPORT_FST:
    case USCOPE_EXPORT_VCD: return export_waveform;
    default: return nullptr;
  }
}

// Whether a format reads NPU events from any of the converters' inputs
// (JSONL, pccx) rather than a µScope file only.
bool reads_npu_inputs(uint32_t format) {
  return format == USCOPE_EXPORT_PERFETTO || format == USCOPE_EXPORT_CHROME_JSON;
}

}  // namespace

void run_export(const char *in, const char *out, const uscope_export_options_t &opts, uscope_export_stats_t *stats) {
  const Fn fn = exporter_of(opts.format);
  if (!fn) fail(USCOPE_ERR_INVALID_ARGUMENT, "uscope_export: unknown format %u", opts.format);
  if (opts.range_start > opts.range_end)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "uscope_export: range %llu:%llu is empty (start after end)",
         static_cast<unsigned long long>(opts.range_start), static_cast<unsigned long long>(opts.range_end));
  if (opts.time_unit > USCOPE_TIME_NS) fail(USCOPE_ERR_INVALID_ARGUMENT, "uscope_export: unknown time unit %u", opts.time_unit);
  if (opts.chrome_style > USCOPE_CHROME_PCCX_LAB)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "uscope_export: unknown chrome_style %u", opts.chrome_style);

  // An output naming the input (any spelling: same device and inode) would
  // be replaced by a file made from it: refused before anything is opened.
  struct stat si {}, so {};
  if (::stat(in, &si) != 0) fail(USCOPE_ERR_IO, "%s: cannot open the input: %s", in, std::strerror(errno));
  if (S_ISDIR(si.st_mode)) fail(USCOPE_ERR_IO, "%s: the input is a directory, not a trace", in);
  if (::stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: the output is the input file %s: refusing to overwrite it", out, in);

  Job job;
  job.input = in;
  job.output = out;
  job.opts = opts;
  job.range_given = opts.range_start != 0 || opts.range_end != UINT64_MAX;
  job.stats.struct_size = sizeof job.stats;
  Progress progress(opts.progress != 0, std::string("export ") + uscope_export_format_name(opts.format));
  job.progress = &progress;

  const uint32_t cf = convert::format_of(in);
  std::unique_ptr<TraceReader> reader;
  if (cf == USCOPE_CONVERT_PCCX || cf == USCOPE_CONVERT_JSONL) {
    if (!reads_npu_inputs(opts.format))
      fail(USCOPE_ERR_INVALID_ARGUMENT, "%s: --to %s needs a µScope trace (.uscope), not %s", in,
           uscope_export_format_name(opts.format), cf == USCOPE_CONVERT_PCCX ? "a .pccx file" : "NPU JSON-Lines");
    job.kind = cf == USCOPE_CONVERT_PCCX ? Job::Input::Pccx : Job::Input::Jsonl;
  } else {
    try {
      reader = std::make_unique<TraceReader>(in);
    } catch (const Error &e) {
      throw Error(e.code(), std::string(in) + ": " + e.what());
    }
    job.reader = reader.get();
  }
  // chrome-json in pccx-lab's layout: asked for, or by default on a .pccx.
  const bool pccx_lab = opts.format == USCOPE_EXPORT_CHROME_JSON &&
                        (opts.chrome_style == USCOPE_CHROME_PCCX_LAB ||
                         (opts.chrome_style == USCOPE_CHROME_AUTO && job.kind == Job::Input::Pccx));
  try {
    if (pccx_lab)
      export_chrome_json_pccx_lab(job);
    else
      fn(job);
  } catch (const Error &e) {
    progress.finish();
    throw Error(e.code(), std::string(in) + ": " + e.what());
  }
  progress.finish();
  if (stats) {
    const uint32_t n = std::min<uint32_t>(stats->struct_size ? stats->struct_size : sizeof *stats, sizeof *stats);
    job.stats.struct_size = n;
    std::memcpy(stats, &job.stats, n);
  }
}

}  // namespace uscope::exporter
