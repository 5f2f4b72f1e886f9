// InsnStream on a worker thread, for the exporters: they spend as long
// writing an instruction's text or packets as the analysis layer spends
// decoding it, so the worker decodes (and, when asked, disassembles) the
// next batch of instructions while the caller writes the ones before
// (docs/export.md "Performance").
//
// Ownership: the CpuTrace belongs to the worker from construction until
// next() has returned nullptr (or the prefetch is destroyed); the caller
// must not use it in between (it is not thread-safe). Memory is bounded:
// kBatches batches of kBatchSize instructions, reused.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/cpu_trace.hpp"

namespace uscope::analysis {

// Read-only view of n contiguous T (std::span is C++20).
template <class T>
class ArrayView {
 public:
  ArrayView() = default;
  ArrayView(const T *p, size_t n) : p_(p), n_(n) {}
  const T *begin() const { return p_; }
  const T *end() const { return p_ + n_; }
  const T *data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T &operator[](size_t i) const { return p_[i]; }
  const T &back() const { return p_[n_ - 1]; }

 private:
  const T *p_ = nullptr;
  size_t n_ = 0;
};

// An instruction as InsnPrefetch gives it: Insn's fields, its arrays viewed
// in its batch's buffers.
struct InsnView {
  InsnPiece head;  // ids, status, cycles; the ranges in it are the batch's
  ArrayView<uscope_stage_span_t> spans;
  ArrayView<uint32_t> annotations;
  ArrayView<uint32_t> deps;
  uint64_t sim_id(uint32_t slots) const { return head.sim_id(slots); }
};

// The decode cache a CpuTrace read only through a stream needs
// (uscope_cpu_trace_options_t.cache_segments): the stream holds one segment
// while it decodes the next, and one more spares a window's lookback. The
// default 8 serves random access; a streaming exporter with 8 touched ~25 MB
// more (peak RSS of the demo's Chrome JSON export 79 -> 53 MB with 2) for
// no speed.
inline constexpr uint32_t kStreamCacheSegments = 3;

class InsnPrefetch {
 public:
  // Instructions meeting [start, end] in fetch order, as InsnStream gives
  // them; with_disasm: CpuTrace::disasm of each, made on the worker too.
  // On a machine with one core (or with worker false) the stream runs on
  // the caller's thread. batch: instructions per batch (tests use small ones).
  InsnPrefetch(CpuTrace &t, uint64_t start, uint64_t end, bool with_disasm, size_t batch = kBatchSize,
               bool worker = true);
  ~InsnPrefetch();
  InsnPrefetch(const InsnPrefetch &) = delete;
  InsnPrefetch &operator=(const InsnPrefetch &) = delete;

  // The next instruction, or nullptr at the end; valid (its arrays too)
  // until the next call. Rethrows what the worker threw.
  const InsnView *next();
  // The disassembly of the instruction next() returned last (with_disasm);
  // valid until the next call.
  std::string_view disasm() const { return text_; }
  // InsnStream::stalls, once next() has returned nullptr.
  const std::vector<uint64_t> &stalls() const { return stalls_; }

  // The worker decodes a whole segment before it can fill the next batch
  // (the demo trace's: ~7,500 instructions, ~2 ms), while the caller goes
  // on with the batches filled: 4 of them ran dry during such a decode and
  // the caller waited; 8 (16,384 instructions, ~2 MB more) outlast it.
  static constexpr size_t kBatches = 8, kBatchSize = 2048;

 private:
  // A batch's instructions with their arrays one after another in a few
  // buffers (heads[k]'s ranges index them), and their texts likewise
  // (instruction k's ending at text_end[k]). The caller reads them in
  // order, so they stream from the worker's core: a record with vectors of
  // its own per instruction, scattered on the heap, cost the encoding
  // thread a cache miss on each (the texts alone ~6% of a Perfetto export).
  struct Batch {
    std::vector<InsnPiece> heads;
    std::vector<uscope_stage_span_t> spans;
    std::vector<uint32_t> annotations, deps;
    std::string texts;
    std::vector<size_t> text_end;
    size_t n = 0;
    bool last = false;  // the stream's end (after these n)
  };
  void work();
  bool fill(Batch &b);  // false: the stream ended (b may still hold some)

  CpuTrace &t_;
  uint64_t start_, end_;
  // Made by the first fill(), on the worker: its constructor decodes the
  // window's first segment(s) already.
  std::unique_ptr<InsnStream> stream_;
  bool with_disasm_;
  size_t batch_;
  std::vector<Batch> batches_ = std::vector<Batch>(kBatches);
  // Batches go round: batch k (counting from 0) is batches_[k % kBatches];
  // the worker may fill batch k once k - consumed_ < kBatches, the caller
  // reads it once filled_ > k.
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t filled_ = 0, consumed_ = 0;  // batch counts, under m_
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
  bool inline_ = false;
  // The caller's side.
  Batch *cur_ = nullptr;
  size_t pos_ = 0;
  bool ended_ = false;
  std::string_view text_;
  InsnView view_;
  std::vector<uint64_t> stalls_;
};

}  // namespace uscope::analysis
