// Several producers writing one trace (uscope_writer_add_producer): the
// encoder thread merges their rings into one stream of cycles, by time.
//
// Ordering rules (docs/writer.md, "Several producers"):
//  - each producer's cycle times strictly increase (its writer checks that);
//  - the cycles of all producers at one time become one cycle of the trace,
//    whose items are producer 0's, then producer 1's, ... (the order in
//    which they were added), each in the order it recorded them; so the file
//    is byte for byte the one a single thread writes when it records, at
//    each time, the producers' items in that order;
//  - a time is merged once every producer still open has either published
//    its cycle at that time or shown that its next cycle is later (its last
//    merged cycle is earlier and its next one is loaded, or it is closed).
//
// Each producer's next cycle is copied out of its ring as soon as it is
// published, so a producer waits only for that copy, never for another
// producer: simulators whose threads meet at a barrier every cycle cannot
// deadlock on a full ring. Memory: one cycle per producer.
#include <cstring>

#include "base/error.hpp"
#include "writer/encoder.hpp"

namespace uscope {

void Encoder::sync_sources() {
  const uint32_t n = producers_.count.load(std::memory_order_acquire);
  while (sources_.size() < n) {
    Source s;
    s.index = static_cast<uint32_t>(sources_.size());
    s.ring = producers_.rings[s.index].load(std::memory_order_relaxed);
    sources_.push_back(std::move(s));
  }
}

// Copies what the producer published into its source, up to the end of its
// next whole cycle. True when it consumed anything.
bool Encoder::load(Source &s, bool closing) {
  if (s.done) return false;
  stream::Ring &r = *s.ring;
  if (closing && s.end == UINT64_MAX) s.end = r.published.load(std::memory_order_acquire);
  const uint64_t pub = closing ? s.end : r.published.load(std::memory_order_acquire);
  const uint64_t cap = r.cap;
  const uint64_t start = s.pos;
  while (!s.pending && s.pos < pub) {
    const uint64_t idx = s.pos % cap;
    const uint8_t *p = r.buf + idx;
    switch (p[0]) {
      case stream::kOp:
      case stream::kEvent: {
        if (!s.loading) fail(USCOPE_ERR_INTERNAL, "producer %u: an item outside a cycle", s.index);
        const uint64_t lap_end = s.pos - idx + cap;
        const size_t n = stream::scan_items(p, (pub < lap_end ? pub : lap_end) - s.pos, s.compact, s.items);
        if (s.len + n > s.cycle.size()) s.cycle.resize((s.len + n) * 2);
        std::memcpy(s.cycle.data() + s.len, p, n);
        s.len += n;
        s.pos += n;
        break;
      }
      case stream::kBegin: {
        const uint64_t t = wire::get_u64(p + 8);
        if ((s.started && t <= s.last) || (merged_any_ && t <= merged_time_ && !s.started))
          fail(USCOPE_ERR_TIME_BACKWARDS,
               "producer %u recorded a cycle at %llu ps after cycles up to %llu ps were merged "
               "(add every producer before any of them records a cycle)",
               s.index, static_cast<unsigned long long>(t),
               static_cast<unsigned long long>(s.started ? s.last : merged_time_));
        s.loading = true;
        s.time = t;
        s.len = 0;
        s.items = 0;
        s.compact = true;
        s.pos += stream::kBeginSize;
        break;
      }
      case stream::kEnd:
        s.loading = false;
        s.pending = true;
        s.pos += 1;
        break;
      case stream::kAbort:  // a misuse discarded the producer's cycle
        s.loading = false;
        s.len = 0;
        s.pos += 1;
        break;
      case stream::kFlush:
        // Cut here: every cycle merged so far is committed. Where segments
        // are cut is invisible to readers.
        if (seg_frames_ > 0 || group_open_) flush_segment();
        s.pos += 1;
        break;
      case stream::kPad:
        s.pos += cap - idx;
        break;
      default:
        fail(USCOPE_ERR_INTERNAL, "producer %u: record stream tag 0x%02x", s.index, p[0]);
    }
  }
  if (s.pos != start) r.consumed.store(s.pos, std::memory_order_release);
  if (!s.pending && s.pos == pub) {
    if (closing) {
      s.loading = false;  // its unfinished cycle is discarded
      s.done = true;
    } else if (!s.loading && r.stop.load(std::memory_order_acquire) &&
               r.published.load(std::memory_order_acquire) == s.pos) {
      s.done = true;  // closed: the stop follows its last publish
    }
  }
  return s.pos != start;
}

bool Encoder::merge() {
  const bool closing = producers_.closing.load(std::memory_order_acquire);
  bool progress = false;
  for (Source &s : sources_) progress |= load(s, closing);
  // After the loads: a producer whose cycle was just seen was added before
  // that cycle was recorded (the rule), so it is in the count read now.
  const size_t known = sources_.size();
  sync_sources();
  for (size_t i = known; i < sources_.size(); ++i) progress |= load(sources_[i], closing);

  for (;;) {
    // The earliest whole cycle waiting...
    bool any = false;
    uint64_t t = 0;
    for (const Source &s : sources_)
      if (s.pending && (!any || s.time < t)) {
        any = true;
        t = s.time;
      }
    if (!any) break;
    // ...is merged only once no open producer can still record a cycle at
    // or before that time.
    bool ready = true;
    for (const Source &s : sources_) {
      if (s.done || s.pending) continue;
      const uint64_t next = s.loading ? s.time : s.started ? s.last + 1 : 0;
      if (next <= t) {
        ready = false;
        break;
      }
    }
    if (!ready) break;
    start_cycle(t);
    for (Source &s : sources_) {
      if (!s.pending || s.time != t) continue;
      if (s.len == 0) {
        // An empty cycle (a producer marking its progress): nothing to add.
      } else if (scratch_len_ == 0) {
        // The first items of the cycle: take the buffer instead of copying it
        // (the source keeps the emptied one for its next cycle).
        scratch_.swap(s.cycle);
        scratch_len_ = s.len;
      } else {
        append_scratch(s.cycle.data(), s.len);
      }
      cycle_items_ += s.items;
      cycle_compact_ = cycle_compact_ && s.compact;
      s.pending = false;
      s.started = true;
      s.last = t;
    }
    end_cycle();
    in_cycle_ = false;
    merged_any_ = true;
    merged_time_ = t;
    for (Source &s : sources_) load(s, closing);
    progress = true;
  }
  return progress;
}

// After a failure: skip whatever the producers publish, so that none of
// them waits forever for room.
bool Encoder::discard_sources() {
  sync_sources();
  bool progress = false;
  for (Source &s : sources_) {
    const uint64_t pub = s.ring->published.load(std::memory_order_acquire);
    if (pub != s.pos) {
      s.pos = pub;
      s.ring->consumed.store(pub, std::memory_order_release);
      progress = true;
    }
    s.pending = s.loading = false;
    if (s.ring->stop.load(std::memory_order_acquire) || producers_.closing.load(std::memory_order_acquire))
      s.done = true;
  }
  return progress;
}

bool Encoder::poll() noexcept {
  if (sources_.empty() && producers_.count.load(std::memory_order_acquire) == 0) return false;
  if (error_.status.load(std::memory_order_acquire) != USCOPE_OK) return discard_sources();
  try {
    return merge();
  } catch (const std::exception &e) {
    failed(e);
    return discard_sources();
  }
}

void Encoder::drained() noexcept {
  // The main writer is finishing (closing is set before its ring stops):
  // every producer ends at what it has published.
  if (producers_.count.load(std::memory_order_acquire) > 0) {
    for (;;) {
      poll();
      bool all = true;
      for (const Source &s : sources_) all = all && s.done;
      if (all && sources_.size() == producers_.count.load(std::memory_order_acquire)) break;
    }
  }
  committer_.wait_idle();
}

}  // namespace uscope
