// What the conversion matrix (matrix.hpp, convert.cpp) and the npu report
// share: the JSONL input with its issues and string pool, the JSONL output,
// the statistics and the error messages.
//
// A conversion writes `out` (the temporary file convert() renames over the
// target) and names `in` in its errors; convert() names the real output. A
// failure sets the thread's last error and returns its status.
#pragma once

#include <zlib.h>

#include <cstdio>
#include <memory>
#include <string>

#include "convert/convert.hpp"
#include "convert/jsonl_ingest.hpp"

namespace uscope::convert {

// The options of the JSONL ingest (lossless: jsonl -> uscope's checks).
IngestOptions ingest_options(const Options &o, bool lossless, const char *label);
// The caller's strict flag and on_issue callback.
Issues issues_of(const Options &o);

// Sets the thread's last error to msg and returns s.
uscope_status_t fail_with(uscope_status_t s, const std::string &msg);
// An error of the input (the JSONL ingest's "line N: ..." or a message
// without a file name) as "<in>: ...".
std::string in_error(const char *in, const std::string &err);
// Copies the statistics into *st (at most st->struct_size bytes); st may be NULL.
void fill_stats(uscope_convert_stats_t *st, const IngestStats &is, const Issues &issues, uint64_t events_out);
// The output writer's queue for an input of `size` bytes (0: unknown; gzip:
// compressed): asked (0: dflt) for a large or unknown input, less for a
// small one (pipeline.cpp says why).
uint64_t queue_for_input(uint64_t asked, uint64_t dflt, uint64_t size, bool gzip);

// A JSONL input with what its ingest fills: issues, strings, TRACE_META.
struct JsonlIn {
  JsonlIn(const Options &o, bool lossless, const char *label)
      : issues(issues_of(o)), ing(ingest_options(o, lossless, label), issues, pool, meta) {}
  // Opens the file; on failure the error names it.
  uscope_status_t open(const char *in) {
    const uscope_status_t s = ing.open_file(in);
    return s ? fail_with(s, in_error(in, ing.open_error())) : 0;
  }
  Issues issues;
  StringPool pool;
  TraceMeta meta;
  Ingest ing;
};

// Buffered JSONL output, plain or gzip (".gz" in the name). The caller
// formats lines into buf(); full buffers go to a writer thread that
// compresses and writes them, so formatting overlaps compression and the
// write system calls (it was a third of a JSON-Lines conversion's time).
// gzip: each buffer is one gzip member (RFC 1952 §2.2: a file is a series of
// members; gzip, zlib's gzread and our reader take them all), compressed by
// libdeflate, which does in one call what zlib's stream does 2.5x slower.
// Memory: kQueued buffers of kFlushBytes and one compressed buffer.
class JsonlOut {
 public:
  JsonlOut();
  ~JsonlOut();
  uscope_status_t open(const char *path, std::string *error);
  std::string &buf() { return buf_; }
  uscope_status_t maybe_flush(std::string *error) { return buf_.size() >= kFlushBytes ? flush(error) : 0; }
  // Hands buf() to the writer thread (waits while kQueued are pending).
  uscope_status_t flush(std::string *error);
  // Writes what is left, joins the thread and closes the file; the first
  // error of any write.
  uscope_status_t close(std::string *error);

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  static constexpr size_t kQueued = 3;
  // libdeflate level 5: 480 MB/s of JSON-Lines on one core, 6% larger than
  // gzip -6 (which does 80 MB/s): faster than the lines are made.
  static constexpr int kGzipLevel = 5;
  void run();
  struct Shared;
  std::unique_ptr<Shared> sh_;
  std::string buf_, path_;
};

}  // namespace uscope::convert
