// InsnStream on a worker thread (insn_prefetch.hpp).
#include "analysis/insn_prefetch.hpp"

namespace uscope::analysis {

InsnPrefetch::InsnPrefetch(CpuTrace &t, uint64_t start, uint64_t end, bool with_disasm, size_t batch, bool worker)
    : t_(t), start_(start), end_(end), with_disasm_(with_disasm), batch_(batch ? batch : 1) {
  for (Batch &b : batches_) {
    b.heads.resize(batch_);
    if (with_disasm_) b.text_end.resize(batch_);
  }
  inline_ = !worker || std::thread::hardware_concurrency() < 2;
  if (!inline_) worker_ = std::thread([this] { work(); });
}

InsnPrefetch::~InsnPrefetch() {
  if (worker_.joinable()) {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
}

bool InsnPrefetch::fill(Batch &b) {
  b.n = 0;
  b.last = false;
  // Capacities kept from batch to batch.
  b.spans.clear();
  b.annotations.clear();
  b.deps.clear();
  b.texts.clear();
  if (!stream_) stream_ = std::make_unique<InsnStream>(t_, start_, end_, std::nullopt);
  while (b.n < batch_) {
    const Insn *i = stream_->next();
    if (!i) {
      b.last = true;
      return false;
    }
    InsnPiece &h = b.heads[b.n];
    h = i->head;
    h.span_begin = static_cast<uint32_t>(b.spans.size());
    h.span_count = static_cast<uint32_t>(i->spans.size());
    b.spans.insert(b.spans.end(), i->spans.begin(), i->spans.end());
    h.ann_begin = static_cast<uint32_t>(b.annotations.size());
    h.ann_count = static_cast<uint32_t>(i->annotations.size());
    b.annotations.insert(b.annotations.end(), i->annotations.begin(), i->annotations.end());
    h.dep_begin = static_cast<uint32_t>(b.deps.size());
    h.dep_count = static_cast<uint32_t>(i->deps.size());
    b.deps.insert(b.deps.end(), i->deps.begin(), i->deps.end());
    if (with_disasm_) {
      b.texts += t_.disasm(*i);
      b.text_end[b.n] = b.texts.size();
    }
    ++b.n;
  }
  return true;
}

void InsnPrefetch::work() {
  try {
    for (uint64_t k = 0;; ++k) {
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return stop_ || k - consumed_ < kBatches; });
        if (stop_) return;
      }
      const bool more = fill(batches_[k % kBatches]);
      {
        std::lock_guard<std::mutex> l(m_);
        filled_ = k + 1;
      }
      cv_.notify_all();
      if (!more) return;
    }
  } catch (...) {
    std::lock_guard<std::mutex> l(m_);
    error_ = std::current_exception();
    stop_ = true;
    cv_.notify_all();
  }
}

const InsnView *InsnPrefetch::next() {
  for (;;) {
    if (cur_ && pos_ < cur_->n) {
      const Batch &b = *cur_;
      if (with_disasm_) {
        const size_t from = pos_ ? b.text_end[pos_ - 1] : 0;
        text_ = std::string_view(b.texts).substr(from, b.text_end[pos_] - from);
      }
      const InsnPiece &h = b.heads[pos_++];
      view_.head = h;
      view_.spans = {b.spans.data() + h.span_begin, h.span_count};
      view_.annotations = {b.annotations.data() + h.ann_begin, h.ann_count};
      view_.deps = {b.deps.data() + h.dep_begin, h.dep_count};
      return &view_;
    }
    if (ended_ || (cur_ && cur_->last)) {
      if (!ended_) {
        ended_ = true;
        if (worker_.joinable()) worker_.join();
        if (stream_) stalls_ = stream_->stalls();
      }
      return nullptr;
    }
    if (inline_) {
      cur_ = &batches_[0];
      pos_ = 0;
      fill(*cur_);
      continue;
    }
    // Hand the batch read to the worker, wait for the next one.
    std::unique_lock<std::mutex> l(m_);
    if (cur_) ++consumed_;
    cv_.notify_all();
    cv_.wait(l, [&] { return filled_ > consumed_ || error_; });
    if (filled_ <= consumed_) std::rethrow_exception(error_);
    cur_ = &batches_[consumed_ % kBatches];
    pos_ = 0;
  }
}

}  // namespace uscope::analysis
