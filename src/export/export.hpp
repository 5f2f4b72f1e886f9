// The exporters' shared frame (include/uscope/export.h, docs/export.md): the
// job each exporter is given, its output file or directory written beside
// the target and renamed over it on success, and its progress bar.
//
// One file per exporter (konata.cpp, perfetto.cpp, chrome_json.cpp,
// nytprof.cpp, hpctoolkit.cpp, waveform.cpp); export.cpp resolves the
// options and the input, runs the one the format names and publishes its
// output. An exporter throws uscope::Error (src/base/error.hpp) on failure,
// naming what it could not do; export.cpp prefixes the file.
#pragma once

#include <uscope/export.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "io/replace_file.hpp"

namespace uscope {
class TraceReader;
}

namespace uscope::exporter {

// A progress bar on stderr, drawn at most 5 times a second, only when asked
// for and stderr is a terminal.
class Progress {
 public:
  Progress(bool enabled, std::string label);
  // done of total units (total 0: unknown); unit names them ("cycles").
  void update(uint64_t done, uint64_t total, const char *unit);
  void finish();  // ends the line if a bar was drawn

 private:
  bool tty_ = false, drawn_ = false;
  std::string label_;
  double start_ = 0, last_ = 0;
};

// A buffered output file that replaces its path only when publish()ed
// (ReplacingFile). Throws Error(IO) naming the path.
//
// The exporters write several times their input (a Perfetto or Chrome JSON
// timeline is 9-22x the trace), so the write itself is a large share of an
// export. The bytes are copied once, into 4 MiB blocks aligned for O_DIRECT,
// and each full block is handed to a thread of its own, which writes a
// regular file with O_DIRECT straight from it (the page cache's copy cost
// the kernel ~25x more CPU than the device did here: docs/export.md
// "Performance"); the last, partial block goes through the page cache, and so
// does everything where the file system refuses O_DIRECT. An error met by
// that thread is thrown by the next block handed over or by publish().
class OutFile {
 public:
  explicit OutFile(const std::string &path);
  ~OutFile();
  OutFile(const OutFile &) = delete;
  OutFile &operator=(const OutFile &) = delete;

  // Append n bytes (after what buf() holds).
  void write(const void *p, size_t n) {
    if (!front_.empty()) take_front();
    put(static_cast<const char *>(p), n);
  }
  void write(std::string_view s) { write(s.data(), s.size()); }
  // A small buffer in front of the blocks, for formatting in place (the
  // few exporters that write a string at a time); call maybe_flush() after.
  std::string &buf() { return front_; }
  void maybe_flush() {
    if (front_.size() >= kFrontBytes) take_front();
  }
  // What buf() holds goes into the blocks; full blocks go to the file. (The
  // partial block waits for more, or for publish(): O_DIRECT writes whole
  // blocks only.)
  void flush() {
    if (!front_.empty()) take_front();
  }
  uint64_t bytes() const { return handed_ + used_ + front_.size(); }
  // The temporary file's path, for a library that opens the file by name
  // (fstapi): it writes there, this object writes nothing, and publish()
  // still renames it. Valid until publish().
  const std::string &temp_path() const;
  // Writes everything, closes and renames the file over the path.
  void publish();

 private:
  static constexpr size_t kFrontBytes = 256 << 10;
  struct Writer;
  void take_front() {
    put(front_.data(), front_.size());
    front_.clear();
  }
  void put(const char *p, size_t n);
  std::string path_;
  ReplacingFile file_;
  int fd_ = -1;
  std::string front_;
  std::unique_ptr<Writer> w_;  // made at the first byte
  char *block_ = nullptr;      // the block being filled (w_'s)
  size_t used_ = 0;            // its bytes
  uint64_t handed_ = 0;        // bytes in the blocks handed over
};

// Records formatted in place: a raw buffer in front of an OutFile, handed
// to it a quarter MiB at a time, for the exporters that write tens of
// millions of small records (Konata lines, Perfetto packets, Chrome JSON
// events), so that no record costs a string append. While one is in use,
// everything goes to the file through it; finish() hands over the rest.
//
// Two RawOuts on two threads may share one OutFile when each is given the
// same mutex: each hands over whole records (a quarter MiB of them) under
// it, so the file holds them interleaved by those pieces (the timeline's
// second thread, timeline_model.hpp).
class RawOut {
 public:
  explicit RawOut(OutFile &f, std::mutex *shared = nullptr) : f_(f), shared_(shared), buf_(kSize) {}
  // Room for n bytes at the end; commit(end) keeps what was written up to end.
  char *room(size_t n) {
    if (buf_.size() - used_ < n) spill(n);
    return buf_.data() + used_;
  }
  void commit(const char *end) { used_ = static_cast<size_t>(end - buf_.data()); }
  void put(const void *p, size_t n) {
    char *d = room(n);
    std::memcpy(d, p, n);
    commit(d + n);
  }
  void put(std::string_view s) { put(s.data(), s.size()); }
  void finish() { spill(0); }
  uint64_t bytes() const { return f_.bytes() + used_; }

 private:
  // Small enough to stay in the cache while records are written into it:
  // copied into the file's buffer (one streaming copy), it is reused hot.
  // Handing such small buffers to the writer thread instead, or writing
  // records straight into MiB-sized ones, was slower (measured: thread
  // wake-ups, cache misses on every line of a cold buffer).
  void spill(size_t need) {
    if (shared_) {
      std::lock_guard<std::mutex> hold(*shared_);
      f_.write(buf_.data(), used_);
    } else {
      f_.write(buf_.data(), used_);
    }
    used_ = 0;
    if (buf_.size() < need) buf_.resize(need);
  }
  static constexpr size_t kSize = 256 << 10;
  OutFile &f_;
  std::mutex *shared_;
  std::vector<char> buf_;
  size_t used_ = 0;
};

// An output directory (hpctoolkit) made as ".NAME.XXXXXX" beside its path
// and renamed over it by publish(); an existing directory at the path is
// replaced (moved aside, then removed), anything else there is refused.
// Removed with its files when never published.
class OutDir {
 public:
  explicit OutDir(const std::string &path);
  ~OutDir();
  OutDir(const OutDir &) = delete;
  OutDir &operator=(const OutDir &) = delete;
  // The temporary directory: files are created in it by name.
  const std::string &dir() const { return temp_; }
  void publish();

 private:
  std::string path_, temp_;
};

// What an exporter is given. The input is open (reader, for a µScope input)
// and the window resolved; the exporter writes `output` through OutFile or
// OutDir and publishes it, and fills stats.records.
struct Job {
  enum class Input { Uscope, Pccx, Jsonl };
  std::string input, output;  // the paths as the caller named them
  Input kind = Input::Uscope;
  TraceReader *reader = nullptr;   // kind == Uscope
  uscope_export_options_t opts{};  // every field present (defaults filled)
  bool range_given = false;        // opts.range_* set by the caller
  Progress *progress = nullptr;
  uscope_export_stats_t stats{};   // first_cycle, last_cycle: the exporter sets them once it clamps the window
  // A note about the export as a whole (what the format cannot hold): to
  // on_issue with line 0.
  void note(const std::string &text) const;
};

// The exporters, one per file. konata/nytprof/hpctoolkit read the cpu
// protocol through the analysis layer (src/analysis/cpu_trace.hpp).
void export_konata(Job &job);
void export_perfetto(Job &job);
void export_chrome_json(Job &job);
void export_chrome_json_pccx_lab(Job &job);  // chrome_json_pccx_lab.cpp: pccx-lab's layout
void export_nytprof(Job &job);
void export_hpctoolkit(Job &job);
void export_waveform(Job &job);  // fst and vcd

// The Kanata import (konata_import.cpp).
void import_konata(const char *in, const char *out, const uscope_konata_import_options_t &opts,
                   uscope_convert_stats_t *stats);

// Resolves and runs an export (the C ABI's uscope_export).
void run_export(const char *in, const char *out, const uscope_export_options_t &opts, uscope_export_stats_t *stats);

}  // namespace uscope::exporter
