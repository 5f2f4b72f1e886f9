// The last stage of the µScope writer: compress sealed segments, on a pool of
// worker threads or inline, and commit them to the file in the order they
// were sealed (§2.2's commit order, segment after segment).
//
// Why a pool: compressing a segment is most of the encoder thread's work (LZ4
// took two thirds of its instructions on the BOOM-like workload), and
// segments compress independently of each other. What does depend on the
// order is only the commit: a segment header names the previous segment's
// offset (§8.1 prev_segment_offset), which is known once every earlier
// segment has its compressed size. So workers compress in any order and the
// committer writes strictly in sequence; the bytes are the same as inline
// compression's for any number of workers.
//
// Memory is bounded: a fixed ring of workers + 1 segments is in flight. When
// every slot is busy the encoder thread waits for the oldest to be committed
// (counted in EncoderStats::compress_waits/_wait_ns; nothing is dropped).
// The slots keep their buffers' capacity, so steady state allocates nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "format/compress.hpp"
#include "format/file_codec.hpp"
#include "io/file_sink.hpp"

namespace uscope {

struct EncoderStats;
struct EncoderError;

// One segment on its way to the file: what its header says before
// compression, and its bodies. acquire() hands out a slot whose vectors are
// empty with their capacity kept; the encoder swaps its own buffers in.
struct SealedSegment {
  uint64_t time_start_ps = 0;
  uint64_t time_end_ps = 0;
  uint32_t num_frames = 0;
  uint32_t num_frames_active = 0;
  std::vector<uint8_t> checkpoint;
  std::vector<uint8_t> deltas;

 private:
  friend class SegmentCommitter;
  std::vector<uint8_t> blob_;  // the compressed deltas (compress.hpp's blob)
  size_t blob_len_ = 0;
  bool done_ = false;          // compressed, waiting for its turn to be committed
};

class SegmentCommitter {
 public:
  // workers == 0: submit() compresses and commits on the caller's thread.
  // Otherwise that many threads compress; the one that completes the oldest
  // outstanding segment commits it (and any completed ones after it).
  // Failures go to `error` (the first one wins) and stop every later commit.
  SegmentCommitter(FileSink &sink, const CompressionMethod &method, int level, unsigned workers,
                   EncoderStats &stats, EncoderError &error);
  ~SegmentCommitter();  // lets the workers finish what is in flight, then joins them
  SegmentCommitter(const SegmentCommitter &) = delete;
  SegmentCommitter &operator=(const SegmentCommitter &) = delete;

  // ── the encoder thread ──
  // A free slot for the next segment; waits while all are in flight. Throws
  // Error once a compression or a commit has failed.
  SealedSegment &acquire();
  // Hands the slot acquire() gave back, filled, for compression and commit.
  void submit(SealedSegment &s);
  // Waits until every submitted segment is committed or a failure stopped
  // them; false after a failure (`error` says which).
  bool wait_idle() noexcept;
  // wait_idle(), then throws the failure as an Error.
  void finish();

  uint64_t submitted() const { return submitted_; }  // the encoder thread's own count
  // After wait_idle(): the committed segments.
  const std::vector<SegmentIndexEntry> &table() const { return table_; }
  uint64_t tail_offset() const { return prev_offset_; }
  uint32_t num_segments() const { return static_cast<uint32_t>(table_.size()); }
  unsigned workers() const { return static_cast<unsigned>(threads_.size()); }

 private:
  SealedSegment &slot(uint64_t seq) { return *slots_[seq % slots_.size()]; }
  void work() noexcept;
  // With mu_ held: commits the completed segments at the head of the
  // sequence, unless another thread is already doing that (it will find
  // them). Drops the lock while writing.
  void commit_ready(std::unique_lock<std::mutex> &lock) noexcept;
  void compress(Compressor &c, SealedSegment &s);
  void commit(SealedSegment &s);  // the file writes; throws Error
  void record_failure() noexcept; // the current exception into error_
  // f(); false when it threw (recorded).
  template <class F>
  bool attempt(F &&f) noexcept {
    try {
      f();
      return true;
    } catch (...) {
      record_failure();
      return false;
    }
  }
  [[noreturn]] void rethrow_failure() const;  // error_ as an Error

  FileSink &sink_;
  const CompressionMethod &method_;
  int level_;
  EncoderStats &stats_;
  EncoderError &error_;
  std::unique_ptr<Compressor> inline_;  // workers == 0 only

  std::vector<std::unique_ptr<SealedSegment>> slots_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // workers: a segment to compress, or stop
  std::condition_variable free_cv_;  // the encoder: a slot freed, or idle, or failed
  // Sequence numbers, under mu_ (submitted_ is also read unlocked by the
  // encoder thread, its only writer).
  uint64_t submitted_ = 0;  // handed to submit()
  uint64_t taken_ = 0;      // taken by a worker for compression
  uint64_t committed_ = 0;  // written to the file (or skipped after a failure)
  bool committing_ = false; // a thread is in commit_ready's write loop
  bool failed_ = false;
  bool stop_ = false;

  // The committed segments: written by whichever thread commits, under
  // committing_; read by the encoder after wait_idle().
  std::vector<SegmentIndexEntry> table_;
  std::vector<uint8_t> header_;
  uint64_t prev_offset_ = 0;
};

}  // namespace uscope
