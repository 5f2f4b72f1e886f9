// What the conversion matrix and the npu report share (pipeline.hpp).
#include "convert/pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

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

JsonlOut::~JsonlOut() {
  // Only an output abandoned on an error path gets here: the error is reported already.
  if (gz_) (void)gzclose(gz_);
  if (f_) (void)std::fclose(f_);
}

uscope_status_t JsonlOut::open(const char *path, std::string *error) {
  path_ = path;
  if (ends_with(path, ".gz", true)) gz_ = gzopen(path, "wb6");
  else f_ = std::fopen(path, "wb");
  if (!gz_ && !f_) {
    *error = std::string(path) + ": " + std::strerror(errno);
    return USCOPE_ERR_IO;
  }
  buf_.reserve(kFlushBytes);
  return 0;
}

uscope_status_t JsonlOut::flush(std::string *error) {
  if (buf_.empty()) return 0;
  bool ok = gz_ ? gzwrite(gz_, buf_.data(), static_cast<unsigned>(buf_.size())) == static_cast<int>(buf_.size())
                : std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
  buf_.clear();
  if (!ok) {
    *error = std::string(path_) + ": writing the JSONL file failed: " + (gz_ ? "gzwrite" : std::strerror(errno));
    return USCOPE_ERR_IO;
  }
  return 0;
}

uscope_status_t JsonlOut::close(std::string *error) {
  uscope_status_t s = flush(error);
  int rc = 0;
  if (gz_) rc = gzclose(gz_);
  if (f_) rc = std::fclose(f_);
  gz_ = nullptr;
  f_ = nullptr;
  if (!s && rc != 0) {
    *error = "closing the JSONL file failed: " + std::string(std::strerror(errno));
    s = USCOPE_ERR_IO;
  }
  return s;
}

}  // namespace uscope::convert
