// The encoder: runs on the writer's background thread. It drains the record
// stream, encodes frames (choosing compact or wide per frame), tracks storage
// state for checkpoints, computes the TSUM summary and cuts segments, which
// its SegmentCommitter compresses (on worker threads, or here) and commits to
// the file in order. Nothing here runs on the simulation thread until close,
// after the thread has been joined.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "base/cache_line.hpp"
#include "format/compress.hpp"
#include "format/file_codec.hpp"
#include "format/frame_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/storage_state.hpp"
#include "format/tsum.hpp"
#include "uscope/uscope.h"
#include "io/file_sink.hpp"
#include "io/stream.hpp"
#include "writer/segment_committer.hpp"

namespace uscope {

// Figures the encoder publishes for uscope_writer_stats(). On lines of their
// own: the encoder updates them every cycle (cache_line.hpp).
struct alignas(kCacheLine) EncoderStats {
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> segments{0};
  std::atomic<uint64_t> raw_bytes{0};
  std::atomic<uint64_t> compressed_bytes{0};
  std::atomic<uint64_t> checkpoint_bytes{0};
  std::atomic<uint64_t> file_bytes{0};
  // Times the encoder thread waited for a compression slot, and how long.
  std::atomic<uint64_t> compress_waits{0};
  std::atomic<uint64_t> compress_wait_ns{0};
};

// The first error of the encoder thread. The message is written before the
// status is published (release), and never changed afterwards.
struct EncoderError {
  std::atomic<uscope_status_t> status{USCOPE_OK};
  std::string message;
  std::atomic<bool> claimed{false};
  void set(uscope_status_t code, const std::string &msg) {
    if (claimed.exchange(true)) return;
    message = msg;
    status.store(code, std::memory_order_release);
  }
};

struct EncoderConfig {
  FrameFormat format = FrameFormat::V02;
  const CompressionMethod *method = compression_by_id(USCOPE_COMPRESSION_LZ4);
  int level = 0;
  uint64_t checkpoint_interval_ps = 0;
  // Segment compression workers (segment_committer.hpp); 0 = on this thread.
  unsigned compress_workers = 0;
};

// The rings of a writer's producers (uscope_writer_add_producer): filled by
// the main writer's thread, read by the encoder thread. A fixed array and a
// count published with release, so that the encoder never takes a lock to see
// a new producer.
struct ProducerTable {
  static constexpr uint32_t kMax = USCOPE_MAX_PRODUCERS;
  std::array<std::atomic<stream::Ring *>, kMax> rings{};
  std::atomic<uint32_t> count{0};
  // The main writer is finishing: each producer still open ends at what it
  // has published (its unfinished cycle, if any, is discarded).
  std::atomic<bool> closing{false};
};

// Over-aligned, so that the encoder's own state, written every cycle, shares
// no cache line with a heap neighbour the simulation thread reads.
class alignas(kCacheLine) Encoder {
 public:
  Encoder(const Schema &schema, const std::vector<StorageLayout> &layouts, stream::Ring &ring,
          FileSink &sink, const EncoderConfig &cfg, EncoderStats &stats, EncoderError &error);

  // The consumer of the writer's BackgroundWriter (io/background_writer.hpp),
  // on its thread: drain() encodes the records in [pos, end); a failure goes
  // to the EncoderError, and the rest of the stream is discarded so that the
  // producer never waits forever.
  uint64_t drain(uint64_t pos, uint64_t end) { return consume(pos, end); }
  bool failed(const std::exception &e) noexcept;
  // The stream has ended: the producers' rings are merged to their ends
  // and the segments still compressing are committed before the writer goes
  // on to close the file.
  void drained() noexcept;
  // The main ring is idle: merge what the producers have published. True
  // when something was consumed (the caller then polls again at once).
  bool poll() noexcept;
  // Parking waits on the main ring only: with producers, their rings are
  // polled instead (the count is read after the ring's kick count, and
  // add_producer() wakes the thread after raising it).
  bool may_park() noexcept { return producers_.count.load(std::memory_order_seq_cst) == 0; }
  // Main writer's thread: register a producer's ring (before any cycle).
  void add_producer(stream::Ring &ring) {
    const uint32_t n = producers_.count.load(std::memory_order_relaxed);
    producers_.rings[n].store(&ring, std::memory_order_relaxed);
    producers_.count.store(n + 1, std::memory_order_seq_cst);
  }
  void close_producers() { producers_.closing.store(true, std::memory_order_release); }
  // Progress is reported every 256 KiB, so that a producer waiting on a full
  // queue resumes as soon as some room is free, not after the whole batch.
  static constexpr uint64_t kProgressStep = 256u << 10;

  // After the thread has been joined: encode the open segment, if any, and
  // wait until every segment is in the file. Throws Error.
  void flush_open_segment();
  const std::vector<SegmentIndexEntry> &segment_table() const { return committer_.table(); }
  uint32_t num_segments() const { return committer_.num_segments(); }
  uint64_t tail_offset() const { return committer_.tail_offset(); }
  unsigned compress_workers() const { return committer_.workers(); }
  uint64_t last_time() const { return last_frame_time_; }
  TsumBuilder &tsum() { return tsum_; }

 private:
  uint64_t consume(uint64_t pos, uint64_t end);
  void append_scratch(const uint8_t *p, size_t n);
  void start_cycle(uint64_t time);
  void end_cycle();
  void apply_cycle();
  void apply_checkpoint_override();
  void emit_group();
  void flush_segment();
  // stats_.frames += n. This thread is its only writer, so a plain store of
  // its own total does: a locked add per cycle (lock add drains the store
  // buffer, full of this cycle's deltas) was most of end_cycle's time.
  void publish_frames(uint32_t n) {
    frames_ += n;
    stats_.frames.store(frames_, std::memory_order_relaxed);
  }

  // ── several producers: their cycles merged by time (encoder_merge.cpp) ──
  // One producer's ring, and its next cycle copied out of it: a producer
  // never waits for the others, only for this copy (bounded by one cycle).
  struct Source {
    stream::Ring *ring = nullptr;
    uint32_t index = 0;       // its place in the order of equal-time items
    uint64_t pos = 0;         // next ring position to read
    uint64_t end = UINT64_MAX;  // main writer closing: the last position read
    bool loading = false;     // a cycle's records are being copied
    bool pending = false;     // `cycle` holds one whole cycle, not merged yet
    bool started = false;     // a cycle of it has been merged
    bool done = false;        // closed and drained
    uint64_t time = 0;        // the loading or pending cycle's time
    uint64_t last = 0;        // the time of its last merged cycle
    std::vector<uint8_t> cycle;
    size_t len = 0;
    uint32_t items = 0;
    bool compact = true;
  };
  bool merge();
  bool load(Source &s, bool closing);
  bool discard_sources();
  void sync_sources();
  std::vector<Source> sources_;
  bool merged_any_ = false;
  uint64_t merged_time_ = 0;
  ProducerTable producers_;

  stream::Ring &ring_;
  FileSink &sink_;
  EncoderConfig cfg_;
  EncoderStats &stats_;
  EncoderError &error_;
  TsumBuilder tsum_;
  std::vector<StorageState> states_;

  // The cycle being received: its items are scratch_[cycle_start_, scratch_len_).
  bool in_cycle_ = false;
  uint64_t cycle_time_ = 0;
  std::vector<uint8_t> scratch_;
  size_t scratch_len_ = 0;
  size_t cycle_start_ = 0;
  uint32_t cycle_items_ = 0;
  bool cycle_compact_ = true;

  // v0.1 only: the cycles of one timestamp in the open segment, scratch_[0,
  // cycle_start_) and the cycle being received, written as one group (ops,
  // then events: docs/compat.md) when the time moves on or the segment ends.
  bool group_open_ = false;
  uint64_t group_time_ = 0;
  uint64_t group_dt_ = 0;
  uint32_t group_items_ = 0;
  bool group_compact_ = true;

  // A checkpoint override being received (uscope_checkpoint_storage).
  uint16_t ckpt_sid_ = 0;
  uint32_t ckpt_nvalid_ = 0;
  uint64_t ckpt_expected_ = 0;
  std::vector<uint8_t> ckpt_override_;

  // The open segment.
  std::vector<uint8_t> deltas_;
  std::vector<uint8_t> checkpoint_;
  bool checkpoint_pending_ = true;
  uint64_t seg_start_ = 0;  // COMPAT 10: segment 0 starts at 0
  uint64_t seg_end_ = 0;
  uint32_t seg_frames_ = 0;
  uint32_t seg_active_ = 0;
  uint64_t last_frame_time_ = 0;
  uint64_t next_checkpoint_ = 0;
  uint64_t frames_ = 0;  // published in stats_.frames

  // Sealed segments: compressed and committed in order. Last, so that its
  // workers are joined before anything above goes.
  SegmentCommitter committer_;
};

}  // namespace uscope
