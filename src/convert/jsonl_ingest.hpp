// Streaming ingest of NPU JSON-Lines (plain or gzip) into time-ordered Ev
// records: a fixed-size window of input (grown only for a line longer than
// it, up to max_line_bytes), simdjson On-Demand over blocks of whole lines
// (iterate_many, falling back to one document per line wherever a block's
// documents and lines disagree), and a bounded reorder window. Memory is
// O(window + max_line_bytes + reorder_window × sizeof(Ev) + distinct
// strings), independent of the file size.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convert/npu_event.hpp"

namespace uscope::convert {

// Raised for a bad line: the ingest reports it (and skips the line, or stops
// with --strict). `reason` is the message without the line number.
struct Issues {
  bool strict = false;
  std::function<void(uint64_t line, const std::string &reason)> on_issue;  // may be empty
  uint64_t count = 0;
  uint64_t first_line = 0;
  std::string first_reason;
  // Records an issue; returns true when conversion must stop (strict).
  bool report(uint64_t line, const std::string &reason);
};

struct IngestOptions {
  uint64_t max_line_bytes = 64ull << 20;
  uint32_t reorder_window = 65536;  // lines held to sort out-of-order input
  uint64_t period_ps = 1000;
  bool period_given = false;        // period_ps set by the caller: wins over TRACE_META's period_ps
  bool lossless_checks = false;     // sim_id / t_ns must be representable (jsonl -> uscope)
  bool progress = false;            // progress bar on stderr (only if it is a terminal)
  const char *progress_label = "convert";
  // Parse blocks of lines with one simdjson stream each (LineParser's block
  // mode). false: one document per line, the reference the block mode is
  // tested against (it gives the same events and issues either way).
  bool block_parse = true;
  // Read and parse on a thread of its own, a few batches of lines ahead of
  // the caller's thread, which runs the reorder window and the sink (the
  // parse was half of a conversion's time, the sink the other half). false:
  // both on the caller's thread. The same events, issues and strings either
  // way (the parser interns into a pool of its own; the new strings of each
  // line go to the caller's pool, in order, when that line is taken).
  bool parse_thread = true;
};

struct IngestStats {
  uint64_t lines = 0, events = 0, meta_lines = 0, blank_lines = 0;
  uint64_t bytes_in = 0;  // decompressed bytes
  uint64_t block_events = 0;  // events the block parser took (the rest went per line)
};

// Reads lines from a file descriptor or a memory buffer, plain or gzip
// (detected by the magic 1f 8b; concatenated members are read in turn).
class LineReader {
 public:
  enum Result { kLine, kTooLong, kEnd, kError };
  explicit LineReader(uint64_t max_line_bytes);
  ~LineReader();
  LineReader(const LineReader &) = delete;
  LineReader &operator=(const LineReader &) = delete;

  Status open_file(const char *path);
  Status open_memory(const void *data, size_t size);
  // kLine: *line is valid until the next call, with readable padding after
  // it (simdjson's SIMDJSON_PADDING); kTooLong: the line was discarded;
  // kError: status()/message().
  Result next(std::string_view *line);
  // The whole lines the window holds from the read position, at most
  // max_bytes of them (each with its '\n'), without reading more input or
  // consuming them: next() then returns them one by one and, until it has
  // returned the last, neither moves nor refills the window. Empty when no
  // whole line fits. The bytes after the block are readable (padding).
  std::string_view peek_block(size_t max_bytes) const;
  // Where the next line starts (inside the window).
  const char *cursor() const { return buf_ + begin_; }
  uint64_t line_number() const { return lineno_; }
  Status status() const { return status_; }
  const std::string &message() const { return message_; }
  uint64_t raw_consumed() const { return raw_consumed_; }   // compressed bytes read
  uint64_t raw_size() const { return raw_size_; }           // file size (0: unknown)
  uint64_t bytes_out() const { return bytes_out_; }
  bool gzip() const { return gz_; }

 private:
  long read_raw(char *dst, size_t n);  // bytes, 0 at EOF, -1 on error
  long produce(char *dst, size_t n);   // decompressed bytes, 0 at EOF, -1 on error
  bool fill();                         // false at EOF or error
  void grow(size_t need);

  uint64_t max_line_;
  int fd_ = -1;
  const char *mem_ = nullptr;
  size_t mem_size_ = 0, mem_pos_ = 0;
  bool gz_ = false, zinit_ = false, zend_ = false, raw_eof_ = false, eof_ = false;
  z_stream zs_{};
  std::vector<char> raw_;
  char *buf_ = nullptr;
  size_t cap_ = 0, begin_ = 0, end_ = 0, scan_ = 0;
  uint64_t lineno_ = 0, raw_consumed_ = 0, raw_size_ = 0, bytes_out_ = 0;
  Status status_ = 0;
  std::string message_;
  // The first bytes, read to detect gzip before the stream is set up.
  std::string head_;
  size_t head_pos_ = 0;
};

// Parses one line into an Ev (or the trace metadata). Not thread-safe.
class LineParser {
 public:
  enum Result { kEvent, kMeta, kBlank, kBad };
  LineParser();
  ~LineParser();
  // `line` must have SIMDJSON_PADDING readable bytes after it.
  Result parse(std::string_view line, size_t readable, StringPool &pool, Ev *ev, TraceMeta *meta,
               std::string *reason);

  // Block mode: one simdjson iterate_many stream over `block` (whole lines,
  // SIMDJSON_PADDING readable after it, unchanged until end_block), stage 1
  // run once for all of its lines instead of once per line; batch_size >=
  // block.size() and the same for every block (the stream's parser is sized
  // to it). false: no block (parse per line).
  bool begin_block(std::string_view block, size_t batch_size);
  // The block's next line, in order. true: it was an event, and *ev is set
  // exactly as parse() would set it. false: parse this line with parse() —
  // a blank line (the stream has no document for it; the block goes on), or
  // the block has ended (the line is not exactly the stream's next document,
  // or not an event): then the rest of the block too. *ev and *reason may
  // have been written.
  bool parse_in_block(std::string_view line, StringPool &pool, Ev *ev, std::string *reason);
  void end_block();
  bool in_block() const;

 private:
  class Impl;  // line_parser.cpp: keeps simdjson out of this header
  std::unique_ptr<Impl> p_;
};

// The reorder window's order: indices of Ev slots sorted by (t_cycle, line),
// in a circular buffer allocated once (a std::deque allocated and freed a
// chunk every 128 events in steady state).
class SlotRing {
 public:
  void reset(size_t max_size);  // holds up to max_size; allocates, touches no page
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  uint32_t front() const { return buf_[head_]; }
  uint32_t back() const { return buf_[(head_ + size_ - 1) & mask_]; }
  uint32_t operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push_back(uint32_t v) { buf_[(head_ + size_++) & mask_] = v; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void insert(size_t pos, uint32_t v);  // before element pos (O(size - pos))

 private:
  std::unique_ptr<uint32_t[]> buf_;
  size_t head_ = 0, size_ = 0, mask_ = 0;
};

// The whole ingest: lines -> Ev -> reorder window -> sink, in non-decreasing
// t_cycle (stable: lines of one cycle keep their order). Threads: run() calls
// the sink and Issues::on_issue on the caller's thread; with
// IngestOptions::parse_thread it reads and parses on a second thread, which
// it starts and joins before it returns (or throws).
class Ingest {
 public:
  // Returns 0 (OK), 1 (a problem with this event: *reason is set; it is
  // reported as an issue of its line), or a negative fatal status.
  using Sink = std::function<Status(const Ev &, std::string *reason)>;
  Ingest(const IngestOptions &opts, Issues &issues, StringPool &pool, TraceMeta &meta);
  ~Ingest();
  Status open_file(const char *path) { return reader_.open_file(path); }
  Status open_memory(const void *data, size_t size) { return reader_.open_memory(data, size); }
  const std::string &open_error() const { return reader_.message(); }
  // The input's size in bytes (0: unknown, e.g. a pipe) and whether it is gzip.
  uint64_t input_size() const { return reader_.raw_size(); }
  bool input_gzip() const { return reader_.gzip(); }
  // Runs to the end. A fatal status (strict issue: USCOPE_ERR_CORRUPT or
  // LIMIT; a truncated gzip: TRUNCATED; IO) stops it; the message is in
  // *error. Events already given to the sink stay given.
  Status run(const Sink &sink, std::string *error);
  const IngestStats &stats() const { return stats_; }
  // The clock period in use: the caller's, else TRACE_META's period_ps, else 1000.
  uint64_t period_ps() const { return opts_.period_ps; }

  // Not NPU JSONL (docs/convert.md "Input that is not NPU JSONL"): the input
  // is refused when none of its non-blank lines is a valid record (an event
  // or TRACE_META), checked at the end, and as soon as the first
  // kSniffLines non-blank lines are all malformed (a binary or text file is
  // not read to its end). An empty or all-blank file is a valid trace of 0
  // events.
  static constexpr uint64_t kSniffLines = 100;

 private:
  // Parse ahead: the producer fills batches of parsed lines (Rec), the
  // consumer (run) takes them in order.
  struct Rec;
  struct Batch;
  struct Ahead;
  void fill(Batch &b);
  void finalize_meta();
  Status not_jsonl(bool early, std::string *error);
  Status emit_front(const Sink &sink, std::string *error);
  bool check_lossless(const Ev &e, std::string *reason);
  void progress(bool final);

  IngestOptions opts_;
  Issues &issues_;
  StringPool &pool_;
  TraceMeta &meta_;
  LineReader reader_;
  LineParser parser_;
  const char *block_end_ = nullptr;  // the end of the parser's block in the reader's window
  // The producer's: the parser's string pool (ids translated by idmap_ into
  // pool_'s), its TRACE_META scratch and its block-event count.
  StringPool wpool_;
  TraceMeta meta_line_;
  uint64_t block_events_ = 0;
  std::vector<uint32_t> idmap_;
  uint64_t seen_raw_ = 0, seen_out_ = 0;  // the reader's counters as of the last batch taken (progress)
  IngestStats stats_;
  std::vector<Ev> evs_;
  std::vector<uint32_t> free_;
  SlotRing ring_;  // indices into evs_, sorted by (t_cycle, line)
  bool emitted_any_ = false, seen_event_ = false, seen_event_line_ = false;
  uint64_t valid_ = 0;  // lines that parsed as an event or TRACE_META
  uint64_t last_emitted_ = 0;
  uint32_t sim_id_ = 0;
  bool tty_ = false;
  double last_progress_ = 0, start_time_ = 0;
};

}  // namespace uscope::convert
