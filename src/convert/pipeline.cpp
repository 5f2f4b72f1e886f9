// What the conversion matrix and the npu report share (pipeline.hpp).
#include "convert/pipeline.hpp"

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/last_error.hpp"

namespace uscope::convert {

IngestOptions ingest_options(const Options &o, bool lossless, const char *label) {
  IngestOptions i;
  i.max_line_bytes = o.o.max_line_bytes;
  i.reorder_window = o.o.reorder_window;
  i.period_ps = o.o.period_ps;
  i.period_given = o.period_given;
  i.lossless_checks = lossless;
  i.progress = o.o.progress != 0;
  i.progress_label = label;
  return i;
}

Issues issues_of(const Options &o) {
  Issues is;
  is.strict = o.o.strict != 0;
  if (o.o.on_issue) {
    auto fn = o.o.on_issue;
    void *user = o.o.user;
    is.on_issue = [fn, user](uint64_t line, const std::string &why) { fn(user, line, why.c_str()); };
  }
  return is;
}

uscope_status_t fail_with(uscope_status_t s, const std::string &msg) {
  uscope::set_thread_error(msg);
  return s;
}

std::string in_error(const char *in, const std::string &err) {
  if (err.rfind(in, 0) == 0) return err;
  return std::string(in) + ": " + (err.empty() ? std::string(uscope::thread_error()) : err);
}

void fill_stats(uscope_convert_stats_t *st, const IngestStats &is, const Issues &issues, uint64_t out) {
  if (!st) return;
  uscope_convert_stats_t s{};
  s.struct_size = sizeof s;
  s.lines = is.lines;
  s.events_in = is.events;
  s.events_out = out;
  s.skipped = issues.count;
  s.meta_lines = is.meta_lines;
  s.blank_lines = is.blank_lines;
  s.bytes_in = is.bytes_in;
  s.first_issue_line = issues.first_line;
  const uint32_t n = std::min<uint32_t>(st->struct_size, sizeof s);
  std::memcpy(st, &s, n);
  st->struct_size = n;
}

// The writers touch every page of their queue at open (so that a
// simulation's first cycles take no page faults); a conversion of a small
// file does not need the 8 or 16 MiB default, whose page faults were most of
// a small `uscope convert`. The records an input yields take fewer bytes
// than its JSONL lines, so twice the file's size (32x for gzip) holds them
// all, rounded up to a power of two; the asked-for (or default) size stays
// the upper bound, and the writer's own minimum applies. An input of unknown
// size (a pipe) gets the asked-for size. A large input gets the same queue
// as before.
uint64_t queue_for_input(uint64_t asked, uint64_t dflt, uint64_t size, bool gzip) {
  const uint64_t cap = asked ? asked : dflt;
  if (!size || size > (cap >> 5)) return cap;  // also: no overflow below
  const uint64_t need = size * (gzip ? 32 : 2);
  uint64_t q = 4096;
  while (q < need) q <<= 1;
  return std::min(q, cap);
}

// ── JsonlOut ──

struct JsonlOut::Shared {
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::string> full, free;  // buffers to write; buffers to reuse
  bool closing = false;
  int fd = -1;
  bool gz = false;
  libdeflate_compressor *z = nullptr;
  std::vector<char> zbuf;
  uscope_status_t status = 0;  // the first failure (sticky)
  std::string error;
  std::thread thread;
};

JsonlOut::JsonlOut() : sh_(std::make_unique<Shared>()) {}

JsonlOut::~JsonlOut() {
  // Only an output abandoned on an error path gets here: the error is reported already.
  if (sh_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lk(sh_->m);
      sh_->closing = true;
    }
    sh_->cv.notify_all();
    sh_->thread.join();
  }
  if (sh_->fd >= 0) ::close(sh_->fd);
  if (sh_->z) libdeflate_free_compressor(sh_->z);
}

uscope_status_t JsonlOut::open(const char *path, std::string *error) {
  path_ = path;
  sh_->gz = ends_with(path, ".gz", true);
  if (sh_->gz && !(sh_->z = libdeflate_alloc_compressor(kGzipLevel))) {
    *error = std::string(path) + ": out of memory for the gzip compressor";
    return USCOPE_ERR_NO_MEMORY;
  }
  // As fopen("wb") did: created 0666 less the umask, truncated; a FIFO or a
  // device is written in place.
  sh_->fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (sh_->fd < 0) {
    *error = std::string(path) + ": " + std::strerror(errno);
    return USCOPE_ERR_IO;
  }
  buf_.reserve(kFlushBytes + 4096);
  sh_->thread = std::thread([this] { run(); });
  return 0;
}

void JsonlOut::run() {
  Shared &s = *sh_;
  for (;;) {
    std::string b;
    {
      std::unique_lock<std::mutex> lk(s.m);
      s.cv.wait(lk, [&] { return !s.full.empty() || s.closing; });
      if (s.full.empty()) return;  // closing, and everything written
      b = std::move(s.full.front());
      s.full.pop_front();
    }
    const char *p = b.data();
    size_t n = b.size();
    if (s.gz && n) {
      const size_t bound = libdeflate_gzip_compress_bound(s.z, n);
      if (s.zbuf.size() < bound) s.zbuf.resize(bound);
      n = libdeflate_gzip_compress(s.z, b.data(), b.size(), s.zbuf.data(), s.zbuf.size());
      p = s.zbuf.data();
    }
    std::string why;
    while (n && !s.status) {
      const ssize_t w = ::write(s.fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        why = std::string(path_) + ": writing the JSONL file failed: " + (w < 0 ? std::strerror(errno) : "wrote nothing");
        break;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    b.clear();
    {
      std::lock_guard<std::mutex> lk(s.m);
      if (!why.empty() && !s.status) {
        s.status = USCOPE_ERR_IO;
        s.error = why;
      }
      s.free.push_back(std::move(b));
    }
    s.cv.notify_all();
  }
}

uscope_status_t JsonlOut::flush(std::string *error) {
  if (buf_.empty()) return 0;
  Shared &s = *sh_;
  std::unique_lock<std::mutex> lk(s.m);
  s.cv.wait(lk, [&] { return s.full.size() < kQueued || s.status; });
  if (s.status) {
    *error = s.error;
    return s.status;
  }
  s.full.push_back(std::move(buf_));
  if (!s.free.empty()) {
    buf_ = std::move(s.free.front());
    s.free.pop_front();
  } else {
    buf_ = std::string();
    buf_.reserve(kFlushBytes + 4096);
  }
  lk.unlock();
  s.cv.notify_all();
  return 0;
}

uscope_status_t JsonlOut::close(std::string *error) {
  Shared &s = *sh_;
  uscope_status_t st = flush(error);
  if (s.thread.joinable()) {
    {
      std::lock_guard<std::mutex> lk(s.m);
      s.closing = true;
    }
    s.cv.notify_all();
    s.thread.join();
  }
  if (!st && s.status) {
    *error = s.error;
    st = s.status;
  }
  if (s.fd >= 0 && ::close(s.fd) != 0 && !st) {
    *error = "closing the JSONL file failed: " + std::string(std::strerror(errno));
    st = USCOPE_ERR_IO;
  }
  s.fd = -1;
  return st;
}

}  // namespace uscope::convert
