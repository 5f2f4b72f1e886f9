// The reader core on files that are still being written (issue 5, point 5;
// spec §2.2, §8; COMPAT 12, 15):
//  - a writer thread in this process commits segments (uscope_writer_flush)
//    while uscope::TraceReader tails the file with poll_new_segments(): every
//    committed segment must show up exactly once, in order, with all of its
//    events, until the writer closes the file;
//  - a writer process (tests/e2e/child.c, USCOPE_TEST_HELPER) is killed with
//    SIGKILL: the reader must open the unfinished file through the
//    tail_offset / prev_segment_offset chain and read back every committed
//    segment exactly as the child's deterministic pattern wrote it.
// Every wait is bounded by a deadline: a stuck writer or reader fails the
// test, it never hangs it. No assertion depends on timing.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "format/wire.hpp"
#include "reader/trace_reader.hpp"
#include "support/child_pattern.hpp"
#include "support/child_process.hpp"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;
using Clock = std::chrono::steady_clock;
namespace wire = uscope::wire;

constexpr auto kDeadline = std::chrono::seconds(60);  // generous: ASan, loaded CI machines

// Opens path with TraceReader, retrying while the writer has not yet written
// the header and preamble (the file may be missing, empty or partial).
// Returns nullptr after a test failure at the deadline.
std::unique_ptr<uscope::TraceReader> open_when_ready(const std::string &path, Clock::time_point deadline) {
  std::string last_error;
  for (;;) {
    try {
      return std::make_unique<uscope::TraceReader>(path);
    } catch (const uscope::Error &e) {
      last_error = e.what();
    }
    if (Clock::now() >= deadline) {
      ADD_FAILURE() << "could not open " << path << " before the deadline; last error: " << last_error;
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Collects what replay() reports for one segment.
struct Collect {
  std::vector<uint64_t> frames;
  struct Ev {
    uint64_t time;
    uint16_t id;
    std::vector<uint8_t> payload;
  };
  std::vector<Ev> events;
  void frame(uint64_t t) { frames.push_back(t); }
  void op(uint64_t, const uscope::DeltaOp &) {}
  void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) { events.push_back({t, id, {p, p + n}}); }
};

// ── (a) A writer thread and a tailing reader ─────────────────────────────────

// The in-process writer's pattern: cycle n at time n * kPeriod sets slot n % 4
// of a sparse storage to n, adds 1 to a dense counter, and records event 0
// with payload {n:U64, n ^ 0x5A5A5A5A:U32}.
constexpr uint64_t kPeriod = 1000;
constexpr uint64_t kLiveCycles = 6000;
constexpr uint64_t kFlushEvery = 37;        // cycles; off the checkpoint grid
constexpr uint64_t kLockstepFlushes = 12;   // first flushes wait for the reader
constexpr uint64_t kLiveInterval = 100 * kPeriod;

std::vector<uint8_t> live_payload(uint64_t n) {
  std::vector<uint8_t> p(12);
  wire::put_u64(p.data(), n);
  wire::put_u32(p.data() + 8, static_cast<uint32_t>(n ^ 0x5A5A5A5Au));
  return p;
}

struct LiveShared {
  std::atomic<bool> opened{false};        // the writer has created the file
  std::atomic<uint64_t> reader_time{0};   // end time of the last segment the reader checked
  std::atomic<bool> closed{false};        // uscope_writer_close returned
  std::atomic<uint64_t> final_segments{0};
  std::atomic<bool> abort{false};         // the reader failed: stop writing
  std::atomic<bool> failed{false};        // the writer failed; `error` says why
  std::string error;                      // written by the writer thread, read after join
};

// Runs on the writer thread. Reports problems through sh.error (gtest
// assertions belong on the main thread).
void live_writer(const std::string &path, LiveShared &sh, Clock::time_point deadline) {
  auto fail = [&](const std::string &what, uscope_status_t st) {
    sh.error = what + ": status " + std::to_string(st) + " " + uscope_last_error();
    sh.failed = true;
  };
  uscope_schema_t *s = nullptr;
  uint8_t clk;
  uint16_t top, ents, ctr, tick;
  const uscope_field_t ent_fields[1] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t ctr_fields[1] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t tick_fields[2] = {{"n", USCOPE_FT_U64, 0, 0, 0}, {"tag", USCOPE_FT_U32, 0, 0, 0}};
  uscope_status_t st = uscope_schema_new(&s);
  if (st == USCOPE_OK) st = uscope_schema_add_clock(s, &clk, "clk", kPeriod);
  if (st == USCOPE_OK) st = uscope_schema_add_scope(s, &top, "top", USCOPE_NO_PARENT, nullptr, clk);
  if (st == USCOPE_OK)
    st = uscope_schema_add_storage(s, &ents, "ents", top, 4, USCOPE_SF_SPARSE, ent_fields, 1, nullptr, 0);
  if (st == USCOPE_OK) st = uscope_schema_add_storage(s, &ctr, "ctr", top, 1, 0, ctr_fields, 1, nullptr, 0);
  if (st == USCOPE_OK) st = uscope_schema_add_event(s, &tick, "tick", top, tick_fields, 2);
  if (st != USCOPE_OK) {
    fail("schema", st);
    uscope_schema_free(s);
    return;
  }
  uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
  opts.checkpoint_interval_ps = kLiveInterval;
  opts.queue_bytes = 64 << 10;
  uscope_writer_t *w = nullptr;
  st = uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &opts);
  uscope_schema_free(s);
  if (st != USCOPE_OK) return fail("writer_open", st);
  sh.opened = true;

  uint64_t flushes = 0;
  for (uint64_t n = 0; n < kLiveCycles && st == USCOPE_OK && !sh.abort; ++n) {
    const std::vector<uint8_t> p = live_payload(n);
    st = uscope_begin_cycle(w, n * kPeriod);
    if (st == USCOPE_OK) st = uscope_slot_set(w, ents, static_cast<uint16_t>(n % 4), 0, n);
    if (st == USCOPE_OK) st = uscope_slot_add(w, ctr, 0, 0, 1);
    if (st == USCOPE_OK) st = uscope_event(w, tick, p.data(), 12);
    if (st == USCOPE_OK) st = uscope_end_cycle(w);
    if (st != USCOPE_OK) {
      fail("cycle " + std::to_string(n), st);
      break;
    }
    if ((n + 1) % kFlushEvery != 0) continue;
    st = uscope_writer_flush(w);
    if (st != USCOPE_OK) {
      fail("flush", st);
      break;
    }
    ++flushes;
    if (flushes <= kLockstepFlushes) {
      // Lock-step phase: the flush commits every cycle so far; wait until
      // the reader has checked a segment ending with cycle n, so that it
      // certainly sees the unfinished file with segments several times.
      while (sh.reader_time < n * kPeriod) {
        if (sh.abort || Clock::now() >= deadline) {
          sh.error = "lock-step: the reader never saw cycle " + std::to_string(n);
          sh.failed = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    } else {
      // Free-running phase: only a short pause, so commits race with polls.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  const uscope_status_t fin = uscope_writer_finish(w);
  uscope_writer_stats_t stats{};
  stats.struct_size = sizeof stats;
  EXPECT_EQ(uscope_writer_stats(w, &stats), USCOPE_OK);
  sh.final_segments = stats.segments;
  if (uscope_writer_close(w) != USCOPE_OK || fin != USCOPE_OK) {
    if (sh.error.empty()) fail("writer_finish", fin);
  }
  sh.closed = true;
}

TEST(ReaderLive, TailsWriterThread) {
  TempDir dir("reader_live");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("live.usc");
  const Clock::time_point deadline = Clock::now() + kDeadline;
  LiveShared sh;
  std::thread writer(live_writer, path, std::ref(sh), deadline);
  // Whatever happens below, stop and join the writer before returning.
  struct Joiner {
    std::thread &t;
    LiveShared &sh;
    ~Joiner() {
      sh.abort = true;
      if (t.joinable()) t.join();
      if (sh.failed) ADD_FAILURE() << "writer thread: " << sh.error;
    }
  } joiner{writer, sh};

  while (!sh.opened && !sh.failed) {
    ASSERT_LT(Clock::now(), deadline) << "the writer did not open the file";
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  std::unique_ptr<uscope::TraceReader> rd = open_when_ready(path, deadline);
  ASSERT_NE(rd, nullptr);
  uscope::TraceReader &r = *rd;

  std::vector<uint64_t> seen;  // offsets of the segments checked, in order
  uint64_t next_n = 0;         // the next cycle whose event we expect
  size_t polls = 0, incomplete_polls_with_segments = 0;
  bool done = false;
  while (!done) {
    ASSERT_LT(Clock::now(), deadline) << "the writer did not close before the deadline; " << seen.size()
                                      << " segments seen";
    ASSERT_FALSE(sh.failed) << "the writer thread failed (message after join)";
    // Read `closed` before polling: a poll that starts after close returned
    // must see the finished file, so the loop ends with everything.
    const bool closed_before = sh.closed;
    const size_t before = r.segments().size();  // the constructor may have found some already
    bool grew = false;
    try {
      grew = r.poll_new_segments();
    } catch (const uscope::Error &e) {
      FAIL() << "poll_new_segments threw after " << seen.size() << " segments (" << polls << " polls): " << e.what();
    }
    ++polls;
    const auto &segs = r.segments();
    // Segments seen before must still be there, at the same places: a poll
    // only appends.
    ASSERT_GE(segs.size(), seen.size()) << "a poll lost segments";
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(segs[i].offset, seen[i]) << "segment " << i << " changed offset";
    ASSERT_EQ(grew, segs.size() > before) << "poll_new_segments' return value";
    if (!r.complete() && !segs.empty()) ++incomplete_polls_with_segments;
    for (size_t i = seen.size(); i < segs.size(); ++i) {
      if (i > 0) {
        ASSERT_GT(segs[i].offset, seen.back()) << "segments out of file order";
      }
      // Every event of the new segment, in order, continuing the sequence.
      Collect c;
      std::vector<uscope::StorageState> states = r.initial_state();
      try {
        r.replay(i, states, c);
      } catch (const uscope::Error &e) {
        FAIL() << "replay of segment " << i << " threw: " << e.what();
      }
      for (const auto &e : c.events) {
        ASSERT_EQ(e.time, next_n * kPeriod) << "segment " << i;
        ASSERT_EQ(e.id, 0);
        ASSERT_EQ(e.payload, live_payload(next_n)) << "event of cycle " << next_n;
        ++next_n;
      }
      if (!c.frames.empty()) {
        // The state at the end of the segment: checkpoint plus its deltas.
        const uint64_t last_n = c.frames.back() / kPeriod;
        ASSERT_EQ(last_n + 1, next_n) << "segment " << i << " ends at another cycle than its last event";
        EXPECT_EQ(states[1].get(0, 0), last_n + 1) << "counter after segment " << i;
        for (uint64_t k = last_n >= 3 ? last_n - 3 : 0; k <= last_n; ++k) {
          EXPECT_TRUE(states[0].valid(k % 4));
          EXPECT_EQ(states[0].get(static_cast<uint16_t>(k % 4), 0), k) << "slot " << k % 4 << " after segment " << i;
        }
        // The same events through events_in_range over the segment's span.
        const auto &h = segs[i].header;
        const auto &ev = r.events_in_range(h.time_start_ps, h.time_end_ps);
        const uint64_t first = (h.time_start_ps + kPeriod - 1) / kPeriod;
        ASSERT_EQ(ev.size(), h.time_end_ps / kPeriod - first + 1) << "events_in_range of segment " << i;
        for (size_t k = 0; k < ev.size(); ++k) {
          ASSERT_EQ(ev[k].time_ps, (first + k) * kPeriod);
          ASSERT_EQ(std::vector<uint8_t>(ev[k].payload, ev[k].payload + ev[k].payload_size),
                    live_payload(first + k));
        }
      }
      seen.push_back(segs[i].offset);
    }
    if (!segs.empty()) sh.reader_time = segs.back().header.time_end_ps;
    if (closed_before) {
      done = true;
    } else if (!grew) {
      std::this_thread::sleep_for(std::chrono::microseconds(30));
    }
  }
  writer.join();
  ASSERT_FALSE(sh.failed);  // the Joiner reports the writer's message
  EXPECT_TRUE(r.complete()) << "after close the file is finished";
  EXPECT_EQ(next_n, kLiveCycles) << "every cycle's event was read exactly once";
  EXPECT_EQ(seen.size(), sh.final_segments.load()) << "every committed segment was seen";
  // The lock-step phase guarantees live reads of an unfinished file.
  EXPECT_GE(incomplete_polls_with_segments, kLockstepFlushes);
  std::fprintf(stderr, "[ live ] %zu polls, %zu of an unfinished file with segments, %zu segments\n", polls,
               incomplete_polls_with_segments, seen.size());
}

// ── (b) A killed writer process ──────────────────────────────────────────────

// The child's pattern (keep equal to tests/e2e/child.c and test_writer_crash.cpp).
using namespace uscope::test::child;  // pat_*() and the constants below
constexpr uint64_t kChildPeriod = kPeriodPs;
constexpr uint64_t kChildCyclesPerSegment = kCyclesPerSegment;
constexpr uint64_t kBlock = kCyclesPerBlock;
constexpr uint16_t kChildSlots = kNumSlots;

struct PatternModel {
  bool valid[kChildSlots] = {};
  uint32_t id[kChildSlots] = {};
  uint64_t pc[kChildSlots] = {};
  uint64_t counter = 0;
  void apply(uint64_t n) {
    const unsigned s = static_cast<unsigned>(n % kChildSlots);
    valid[s] = !pat_clear(n);
    id[s] = valid[s] ? pat_id(n) : 0;
    pc[s] = valid[s] ? pat_pc(n) : 0;
    counter += pat_add(n);
  }
};

testing::AssertionResult same_as_pattern(const PatternModel &m, const std::vector<uscope::StorageState> &st) {
  if (st.size() != 2) return testing::AssertionFailure() << st.size() << " storages";
  for (uint16_t s = 0; s < kChildSlots; ++s) {
    if (st[0].valid(s) != m.valid[s])
      return testing::AssertionFailure() << "rob slot " << s << ": valid " << st[0].valid(s);
    if (m.valid[s] && (st[0].get(s, 0) != m.id[s] || st[0].get(s, 1) != m.pc[s]))
      return testing::AssertionFailure() << "rob slot " << s << ": id " << st[0].get(s, 0) << " pc "
                                         << st[0].get(s, 1) << ", expected " << m.id[s] << " " << m.pc[s];
  }
  if (st[1].get(0, 0) != m.counter)
    return testing::AssertionFailure() << "counter " << st[1].get(0, 0) << ", expected " << m.counter;
  return testing::AssertionSuccess();
}

// The helper child (as in test_writer_crash.cpp, reduced): stdout is a pipe
// of progress lines; stdin a socket of tokens, one per block of 50 cycles.
class Child {
 public:
  ~Child() {
    kill_now();
    if (out_ >= 0) ::close(out_);
    if (in_ >= 0) ::close(in_);
  }
  bool spawn(const std::vector<std::string> &args) {
    uscope::test::SpawnedChild c;
    if (!uscope::test::spawn_child(USCOPE_TEST_HELPER, args, &c)) return false;
    pid_ = c.pid;
    out_ = c.out;
    in_ = c.in;
    return true;
  }
  // Lets the child write n more blocks of 50 cycles.
  void give(uint64_t n) {
    static const char kTokens[256] = {};
    while (n > 0 && in_ >= 0) {
      const ssize_t r = ::send(in_, kTokens, n < sizeof kTokens ? n : sizeof kTokens, MSG_NOSIGNAL);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return;  // the child is gone; its output tells why
      n -= static_cast<uint64_t>(r);
    }
  }
  // Reads stdout until "progress N" with N >= cycles; false at EOF or deadline.
  bool wait_progress(uint64_t cycles, Clock::time_point deadline) {
    while (progress_ < cycles) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        const std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        output_ += line + "\n";
        if (line.compare(0, 9, "progress ") == 0) progress_ = std::strtoull(line.c_str() + 9, nullptr, 10);
        continue;
      }
      if (!read_some(deadline)) return false;
    }
    return true;
  }
  // Reads whatever output is ready without waiting.
  void drain() {
    while (read_some(Clock::now())) {
    }
  }
  int kill_now() {
    int st = -1;
    if (pid_ <= 0) return st;  // never kill(-1, ...)
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return st;
  }
  uint64_t progress() const { return progress_; }
  std::string output() const { return output_ + buf_; }

 private:
  bool read_some(Clock::time_point deadline) {
    if (out_ < 0) return false;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd pfd{out_, POLLIN, 0};
      const int r = ::poll(&pfd, 1, left > 0 ? static_cast<int>(left) : 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(out_);
        out_ = -1;
        return false;
      }
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }
  pid_t pid_ = -1;
  int out_ = -1, in_ = -1;
  std::string buf_, output_;
  uint64_t progress_ = 0;
};

struct KillCase {
  const char *name;
  uint64_t blocks;        // tokens given (blocks of 50 cycles the child may write)
  uint64_t wait_cycles;   // progress to wait for
  size_t wait_segments;   // committed segments the reader must see before the kill
};

void kill_and_read(const KillCase &c) {
  SCOPED_TRACE(c.name);
  TempDir dir("reader_kill");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file(std::string(c.name) + ".usc");
  const Clock::time_point deadline = Clock::now() + kDeadline;
  Child child;
  ASSERT_TRUE(child.spawn({"run", path, "tokens=1"}));
  child.give(c.blocks);
  ASSERT_TRUE(child.wait_progress(c.wait_cycles, deadline))
      << "no progress to " << c.wait_cycles << " cycles; output:\n" << child.output();

  // Tail the live file until enough segments are committed: the reader of a
  // running writer's file, from another process.
  std::unique_ptr<uscope::TraceReader> live = open_when_ready(path, deadline);
  ASSERT_NE(live, nullptr);
  while (live->segments().size() < c.wait_segments) {
    ASSERT_LT(Clock::now(), deadline) << "only " << live->segments().size() << " segments committed; output:\n"
                                      << child.output();
    try {
      live->poll_new_segments();
    } catch (const uscope::Error &e) {
      FAIL() << "poll_new_segments on the live file threw: " << e.what();
    }
    ASSERT_FALSE(live->complete()) << "the child never closes its writer here";
    child.drain();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const size_t seen_live = live->segments().size();
  const int st = child.kill_now();
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
      << "the child ended before the kill (status " << st << "); output:\n" << child.output();

  // A fresh reader of the dead writer's file.
  std::unique_ptr<uscope::TraceReader> rd;
  try {
    rd = std::make_unique<uscope::TraceReader>(path);
  } catch (const uscope::Error &e) {
    FAIL() << "TraceReader on the killed writer's file: " << e.what();
  }
  uscope::TraceReader &r = *rd;
  EXPECT_FALSE(r.complete()) << "a killed writer leaves an unfinished file";
  EXPECT_EQ(r.header().section_table_offset, 0u);
  EXPECT_FALSE(r.summary().has_value()) << "no TSUM before close";
  const auto &segs = r.segments();  // from the tail_offset chain (COMPAT 15)
  ASSERT_GE(segs.size(), seen_live) << "committed segments disappeared";
  for (size_t i = 0; i < seen_live; ++i) EXPECT_EQ(segs[i].offset, live->segments()[i].offset);
  // Segment 0 starts at 0 (COMPAT 10); the rest follow without gaps.
  ASSERT_EQ(segs[0].header.time_start_ps, 0u);
  for (size_t i = 1; i < segs.size(); ++i)
    ASSERT_EQ(segs[i].header.time_start_ps, segs[i - 1].header.time_end_ps) << "segment " << i;

  // Every committed segment, one by one: its events continue the pattern and
  // the state at its end (checkpoint + deltas) is the pattern's.
  PatternModel m;
  uint64_t next_n = 0;
  try {
    for (size_t i = 0; i < segs.size(); ++i) {
      Collect col;
      std::vector<uscope::StorageState> states = r.initial_state();
      r.replay(i, states, col);
      for (const auto &e : col.events) {
        ASSERT_EQ(e.time, next_n * kChildPeriod) << "segment " << i;
        ASSERT_EQ(e.id, 0);
        ASSERT_EQ(e.payload, pat_payload(next_n)) << "event of cycle " << next_n;
        m.apply(next_n);
        ++next_n;
      }
      ASSERT_FALSE(col.frames.empty()) << "segment " << i << " has no frames";
      ASSERT_EQ(col.frames.back(), segs[i].header.time_end_ps) << "segment " << i;
      ASSERT_TRUE(same_as_pattern(m, states)) << "state after segment " << i << " (replay)";
      ASSERT_TRUE(same_as_pattern(m, r.state_at(segs[i].header.time_end_ps)))
          << "state_at(" << segs[i].header.time_end_ps << ")";
    }
  } catch (const uscope::Error &e) {
    FAIL() << "reading the committed segments threw: " << e.what();
  }
  const uint64_t last_time = segs.back().header.time_end_ps;
  ASSERT_EQ(next_n, last_time / kChildPeriod + 1);
  // With blocks of 50 cycles on a 50-cycle interval, a segment ends at every
  // multiple of 50 cycles.
  EXPECT_EQ(next_n - 1, segs.size() * kChildCyclesPerSegment);

  // The whole committed trace through the query methods.
  PatternModel all;
  for (uint64_t n = 0; n < next_n; ++n) all.apply(n);
  try {
    EXPECT_TRUE(same_as_pattern(all, r.state_at(last_time))) << "state_at the last committed time";
    EXPECT_TRUE(same_as_pattern(all, r.state_at(UINT64_MAX))) << "state_at past the end";
    const auto &ev = r.events_in_range(0, UINT64_MAX);
    ASSERT_EQ(ev.size(), next_n);
    for (uint64_t n = 0; n < next_n; ++n) {
      ASSERT_EQ(ev[n].time_ps, n * kChildPeriod);
      ASSERT_EQ(std::vector<uint8_t>(ev[n].payload, ev[n].payload + ev[n].payload_size), pat_payload(n));
    }
  } catch (const uscope::Error &e) {
    FAIL() << "query threw: " << e.what();
  }
  std::fprintf(stderr, "[ %s ] killed at progress %llu: %zu segments, cycles 0..%llu read back\n", c.name,
               static_cast<unsigned long long>(child.progress()), segs.size(),
               static_cast<unsigned long long>(next_n - 1));
}

TEST(ReaderLive, KilledWriterProcess) {
  const KillCase cases[] = {
      // Blocked on its next token: 8 blocks written, 7 segments committed
      // (each ends on a multiple of 50 cycles), the 8th still open in memory.
      {"idle", 8, 8 * kBlock, 7},
      // Running free with 1000 blocks allowed: most likely killed while it
      // writes (only the count of committed segments depends on when).
      {"busy", 1000, 40 * kBlock, 30},
  };
  for (const auto &c : cases) ASSERT_NO_FATAL_FAILURE(kill_and_read(c));
}

}  // namespace
