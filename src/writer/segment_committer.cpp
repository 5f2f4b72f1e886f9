#include "writer/segment_committer.hpp"

#include <chrono>
#include <new>
#include <string>

#include "base/error.hpp"
#include "writer/encoder.hpp"

namespace uscope {

SegmentCommitter::SegmentCommitter(FileSink &sink, const CompressionMethod &method, int level,
                                   unsigned workers, EncoderStats &stats, EncoderError &error)
    : sink_(sink), method_(method), level_(level), stats_(stats), error_(error) {
  // One slot per worker plus one that the encoder fills meanwhile: enough
  // for every worker to be busy while the encoder seals the next segment.
  const size_t n = workers ? workers + 1 : 1;
  for (size_t i = 0; i < n; ++i) slots_.push_back(std::make_unique<SealedSegment>());
  if (!workers) {
    inline_ = std::make_unique<Compressor>(method, level);
    return;
  }
  try {
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    // Could not start them all (std::system_error): stop those that did.
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto &t : threads_) t.join();
    throw;
  }
}

SegmentCommitter::~SegmentCommitter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  // The workers finish (and commit) what was submitted before they end.
  for (auto &t : threads_) t.join();
}

SealedSegment &SegmentCommitter::acquire() {
  if (threads_.empty()) return *slots_[0];
  std::unique_lock<std::mutex> lock(mu_);
  if (submitted_ - committed_ >= slots_.size() && !failed_) {
    // Every slot is in flight: back-pressure on the encoder thread, counted.
    const auto t0 = std::chrono::steady_clock::now();
    free_cv_.wait(lock, [this] { return submitted_ - committed_ < slots_.size() || failed_; });
    stats_.compress_waits.fetch_add(1, std::memory_order_relaxed);
    stats_.compress_wait_ns.fetch_add(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - t0)
                                  .count()),
        std::memory_order_relaxed);
  }
  if (failed_) rethrow_failure();
  return slot(submitted_);
}

void SegmentCommitter::submit(SealedSegment &s) {
  if (threads_.empty()) {
    compress(*inline_, s);
    commit(s);
    ++submitted_;
    ++committed_;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++submitted_;
  }
  work_cv_.notify_one();
}

bool SegmentCommitter::wait_idle() noexcept {
  if (threads_.empty()) return error_.status.load(std::memory_order_acquire) == USCOPE_OK;
  std::unique_lock<std::mutex> lock(mu_);
  // Also after a failure, no commit may be under way on return: the caller
  // goes on to close the file.
  free_cv_.wait(lock, [this] { return !committing_ && (committed_ == submitted_ || failed_); });
  return !failed_;
}

void SegmentCommitter::finish() {
  if (!wait_idle()) rethrow_failure();
}

void SegmentCommitter::rethrow_failure() const {
  const uscope_status_t s = error_.status.load(std::memory_order_acquire);
  // The status is published after the message, so a set status means a
  // complete message (EncoderError).
  throw Error(s != USCOPE_OK ? s : USCOPE_ERR_INTERNAL, s != USCOPE_OK ? error_.message : "segment compression failed");
}

void SegmentCommitter::work() noexcept {
  std::unique_ptr<Compressor> c;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || (taken_ < submitted_ && !failed_); });
    if (!(taken_ < submitted_ && !failed_)) return;  // stopped, nothing left
    SealedSegment &s = slot(taken_++);
    lock.unlock();
    // Each worker keeps its own compression state (a zstd context is not
    // shared between threads); made on its first segment.
    const bool ok = attempt([&] {
      if (!c) c = std::make_unique<Compressor>(method_, level_);
      compress(*c, s);
    });
    lock.lock();
    if (!ok) {
      failed_ = true;
      free_cv_.notify_all();
      continue;
    }
    s.done_ = true;
    commit_ready(lock);
  }
}

void SegmentCommitter::commit_ready(std::unique_lock<std::mutex> &lock) noexcept {
  if (committing_) return;  // that thread re-checks the head after each write
  committing_ = true;
  while (!failed_ && committed_ < submitted_ && slot(committed_).done_) {
    SealedSegment &s = slot(committed_);
    lock.unlock();
    const bool ok = attempt([&] { commit(s); });
    lock.lock();
    if (!ok) {
      failed_ = true;
      break;
    }
    s.done_ = false;
    ++committed_;
    free_cv_.notify_all();
  }
  committing_ = false;
  free_cv_.notify_all();
}

void SegmentCommitter::compress(Compressor &c, SealedSegment &s) {
  s.blob_len_ = c.compress(s.deltas.data(), s.deltas.size(), s.blob_);
}

void SegmentCommitter::commit(SealedSegment &s) {
  SegmentHeader h;  // COMPAT 8: flags and reserved are 0
  h.time_start_ps = s.time_start_ps;
  h.time_end_ps = s.time_end_ps;
  h.prev_segment_offset = prev_offset_;
  h.checkpoint_size = static_cast<uint32_t>(s.checkpoint.size());
  h.deltas_compressed_size = static_cast<uint32_t>(s.blob_len_);
  h.deltas_raw_size = static_cast<uint32_t>(s.deltas.size());
  h.num_frames = s.num_frames;
  h.num_frames_active = s.num_frames_active;
  // One append (one write): header, checkpoint, compressed deltas (§8.1).
  header_.resize(wire::kSegmentHeaderSize);
  encode_segment_header(h, header_.data());
  header_.insert(header_.end(), s.checkpoint.begin(), s.checkpoint.end());
  header_.insert(header_.end(), s.blob_.begin(), s.blob_.begin() + static_cast<ptrdiff_t>(s.blob_len_));
  const uint64_t offset = sink_.append(header_);
  table_.push_back({offset, s.time_start_ps, s.time_end_ps});
  prev_offset_ = offset;
  sink_.commit_segment(offset, static_cast<uint32_t>(table_.size()));  // §2.2: data, then tail_offset, then count

  stats_.segments.fetch_add(1, std::memory_order_relaxed);
  stats_.raw_bytes.fetch_add(s.deltas.size(), std::memory_order_relaxed);
  stats_.compressed_bytes.fetch_add(s.blob_len_, std::memory_order_relaxed);
  stats_.checkpoint_bytes.fetch_add(s.checkpoint.size(), std::memory_order_relaxed);
  stats_.file_bytes.store(sink_.size(), std::memory_order_relaxed);
  s.deltas.clear();  // capacity kept for the segment that reuses the slot
  s.checkpoint.clear();
}

void SegmentCommitter::record_failure() noexcept {
  try {
    try {
      throw;
    } catch (const Error &e) {
      error_.set(e.code(), e.what());
    } catch (const std::bad_alloc &) {
      error_.set(USCOPE_ERR_NO_MEMORY, "out of memory while compressing a segment");
    } catch (const std::exception &e) {
      error_.set(USCOPE_ERR_INTERNAL, std::string("segment compression: ") + e.what());
    } catch (...) {
      error_.set(USCOPE_ERR_INTERNAL, "segment compression: an unknown exception");
    }
  } catch (...) {
    // No memory for the message: the status is published all the same.
    error_.status.store(USCOPE_ERR_NO_MEMORY, std::memory_order_release);
  }
}

}  // namespace uscope
