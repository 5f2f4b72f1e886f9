// The writer under process death and disk errors (spec §2.2, §8.1-8.2;
// COMPAT 10-12, 15). A child process (tests/e2e/child.c, USCOPE_TEST_HELPER)
// writes a trace whose content is a pure function of the cycle number; the
// tests kill it, starve it of disk, or read its file while it runs, and then
// check the file byte by byte up to its last committed tail_offset.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "format/file_codec.hpp"
#include "format/storage_state.hpp"
#include "format/wire.hpp"
#include "support/child_pattern.hpp"
#include "support/child_process.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

using Clock = std::chrono::steady_clock;
namespace wire = uscope::wire;

// ── The child's pattern (keep equal to tests/e2e/child.c) ──────────────────

using namespace uscope::test::child;  // the pattern, shared with test_reader_live.cpp

// The items of cycle n, in call order, as the decoder reports them.
std::vector<uscope::test::Item> pattern_items(uint64_t n) {
  using uscope::test::Item;
  std::vector<Item> v;
  const uint16_t s = static_cast<uint16_t>(n % kNumSlots);
  auto op = [&](uint8_t action, uint16_t sid, uint16_t slot, uint16_t field, uint64_t value) {
    Item i;
    i.time_ps = n * kPeriodPs;
    i.op = uscope::DeltaOp{action, sid, slot, field, value};
    v.push_back(i);
  };
  if (pat_clear(n)) {
    op(wire::DA_SLOT_CLEAR, 0, s, 0, 0);
  } else {
    op(wire::DA_SLOT_SET, 0, s, 0, pat_id(n));
    op(wire::DA_SLOT_SET, 0, s, 1, pat_pc(n));
  }
  op(wire::DA_SLOT_ADD, 1, 0, 0, pat_add(n));
  Item e;
  e.is_event = true;
  e.time_ps = n * kPeriodPs;
  e.event_id = 0;
  e.payload = pat_payload(n);
  v.push_back(std::move(e));
  return v;
}

// The state the pattern builds, to check checkpoints against (COMPAT 9: a
// checkpoint holds the state before the segment's first cycle).
struct Model {
  bool valid[kNumSlots] = {};
  uint32_t id[kNumSlots] = {};
  uint64_t pc[kNumSlots] = {};
  uint64_t counter = 0;
  void apply(uint64_t n) {
    const unsigned s = static_cast<unsigned>(n % kNumSlots);
    if (pat_clear(n)) {
      valid[s] = false;
      id[s] = 0;
      pc[s] = 0;
    } else {
      valid[s] = true;
      id[s] = pat_id(n);
      pc[s] = pat_pc(n);
    }
    counter += pat_add(n);
  }
};

// ── Byte-level check of an unfinished file ───────────────────────────────

struct Checked {
  size_t segments = 0;
  uint64_t cycles = 0;          // cycles 0 .. cycles-1 were verified
  uint64_t tail_offset = 0;
  uint64_t committed_end = 0;   // end of the last committed segment
};

std::string at(uint64_t off) { return " (offset " + std::to_string(off) + ")"; }

// Checks every byte reachable from tail_offset: header fields of an
// unfinished file (COMPAT 11, §2.2), the "uSEG" chain back to the first
// segment (§8.2, COMPAT 15), contiguous segment times (COMPAT 10), and the
// checkpoint and decoded deltas of every segment against the pattern.
//
// batched_commits: the file was written with USCOPE_DURABILITY_NONE, whose
// commits wait for the 1 MiB buffer and then jump tail_offset over every
// segment that was in it. num_segments is then only known not to run ahead.
void check_unfinished(const std::vector<uint8_t> &b, Checked *out, bool batched_commits = false) {
  ASSERT_GE(b.size(), wire::kFileHeaderSize);
  const uint8_t *p = b.data();
  ASSERT_EQ(0, std::memcmp(p, "uSCP", 4)) << "file magic";
  EXPECT_EQ(wire::get_u16(p + 4), wire::kVersionMajor);
  EXPECT_EQ(wire::get_u16(p + 6), wire::kVersionMinor);
  const uint64_t flags = wire::get_u64(p + wire::kHdrOffFlags);
  EXPECT_EQ(flags & wire::F_COMPLETE, 0u) << "an unfinished file must not say F_COMPLETE";
  // COMPAT 4: compressed (LZ4) + interleaved while open.
  EXPECT_EQ(flags, wire::F_COMPRESSED | wire::F_INTERLEAVED_DELTAS);
  EXPECT_EQ(wire::get_u64(p + wire::kHdrOffTotalTime), 0u) << "COMPAT 11: total_time_ps is 0 until close";
  EXPECT_EQ(wire::get_u64(p + wire::kHdrOffSectionTable), 0u) << "§2.2: no section table before close";
  const uint32_t num_segments = wire::get_u32(p + wire::kHdrOffNumSegments);
  const uint32_t preamble_end = wire::get_u32(p + wire::kHdrOffPreambleEnd);
  const uint64_t tail = wire::get_u64(p + wire::kHdrOffTailOffset);
  ASSERT_GE(preamble_end, wire::kFileHeaderSize);
  ASSERT_EQ(preamble_end % 8, 0u);
  ASSERT_LE(preamble_end, b.size());

  // Walk tail_offset -> prev_segment_offset -> ... -> 0, byte by byte.
  std::vector<uint64_t> chain;
  for (uint64_t off = tail; off != 0;) {
    ASSERT_GE(off, preamble_end) << "segment before the preamble end" << at(off);
    ASSERT_LE(off + wire::kSegmentHeaderSize, b.size()) << "segment header past EOF" << at(off);
    ASSERT_EQ(0, std::memcmp(p + off, "uSEG", 4)) << "segment magic" << at(off);
    const uscope::SegmentHeader h = uscope::decode_segment_header(p + off, b.size() - off);
    ASSERT_LE(off + wire::kSegmentHeaderSize + h.checkpoint_size + h.deltas_compressed_size, b.size())
        << "committed segment runs past EOF" << at(off);
    ASSERT_LT(h.prev_segment_offset, off) << "the chain must go backwards" << at(off);
    chain.insert(chain.begin(), off);
    off = h.prev_segment_offset;
  }
  // §2.2: num_segments is written after tail_offset, so it may lag by one.
  // (With batched commits a kill between the two writes leaves it lagging by
  // a whole buffer of segments: see the NONE case of KillLeavesValidPrefix.)
  if (batched_commits) {
    EXPECT_LE(num_segments, chain.size()) << "num_segments must never run ahead of tail_offset";
  } else {
    EXPECT_TRUE(num_segments == chain.size() || num_segments + 1 == chain.size())
        << "num_segments " << num_segments << ", chain of " << chain.size();
  }

  // Segments are appended back to back after the preamble.
  uint64_t expect_off = preamble_end;
  for (uint64_t off : chain) {
    ASSERT_EQ(off, expect_off) << "gap or overlap between committed segments";
    const uscope::SegmentHeader h = uscope::decode_segment_header(p + off, b.size() - off);
    expect_off = off + wire::kSegmentHeaderSize + h.checkpoint_size + h.deltas_compressed_size;
  }

  // Decode everything with the library's codecs (LZ4, frames, preamble).
  uscope::test::TraceFile t;
  try {
    t = uscope::test::parse_trace_file(b);
  } catch (const uscope::Error &e) {
    FAIL() << "the committed prefix does not decode: " << e.what();
  }
  ASSERT_EQ(t.segments.size(), chain.size());
  ASSERT_EQ(t.schema.storages.size(), 2u);
  ASSERT_EQ(t.schema.events.size(), 1u);
  EXPECT_EQ(t.checkpoint_interval_ps, kIntervalPs);
  const std::vector<uscope::StorageLayout> layouts = uscope::make_layouts(t.schema);

  Model model;
  uint64_t next_cycle = 0;
  for (size_t i = 0; i < t.segments.size(); ++i) {
    const auto &s = t.segments[i];
    const auto &h = s.header;
    SCOPED_TRACE("segment " + std::to_string(i) + " at offset " + std::to_string(s.offset));
    ASSERT_EQ(s.offset, chain[i]);
    EXPECT_EQ(h.flags, 0u);     // COMPAT 8
    EXPECT_EQ(h.reserved, 0u);
    // COMPAT 10: segment 0 starts at 0; each next one starts where the last ended.
    ASSERT_EQ(h.time_start_ps, i == 0 ? 0 : t.segments[i - 1].header.time_end_ps);
    // COMPAT 10: cut at the cycle that reaches the next checkpoint time
    // (50, 100, 150, ... cycles here).
    ASSERT_EQ(h.time_end_ps, (i + 1) * kIntervalPs);
    EXPECT_EQ(s.deltas.size(), h.deltas_raw_size);

    // The checkpoint: the pattern's state before this segment's first cycle.
    std::vector<uscope::StorageState> states;
    for (const auto &L : layouts) states.emplace_back(L);
    try {
      uscope::decode_checkpoint(s.checkpoint.data(), s.checkpoint.size(), states);
    } catch (const uscope::Error &e) {
      FAIL() << "checkpoint does not decode: " << e.what();
    }
    for (uint16_t slot = 0; slot < kNumSlots; ++slot) {
      ASSERT_EQ(states[0].valid(slot), model.valid[slot]) << "slot " << slot << " before cycle " << next_cycle;
      if (model.valid[slot]) {
        ASSERT_EQ(states[0].get(slot, 0), model.id[slot]) << "slot " << slot;
        ASSERT_EQ(states[0].get(slot, 1), model.pc[slot]) << "slot " << slot;
      }
    }
    ASSERT_EQ(states[1].get(0, 0), model.counter) << "counter before cycle " << next_cycle;

    // Frames: one per cycle, contiguous, every one active.
    const uint64_t first = next_cycle;
    const uint64_t last = h.time_end_ps / kPeriodPs;
    ASSERT_EQ(s.frame_times.size(), last - first + 1);
    EXPECT_EQ(h.num_frames, s.frame_times.size());
    EXPECT_EQ(h.num_frames_active, h.num_frames);
    size_t k = 0;
    for (uint64_t n = first; n <= last; ++n) {
      ASSERT_EQ(s.frame_times[n - first], n * kPeriodPs);
      for (const auto &want : pattern_items(n)) {
        ASSERT_LT(k, s.items.size()) << "items end early at cycle " << n;
        const auto &got = s.items[k++];
        ASSERT_EQ(got.is_event, want.is_event) << "cycle " << n << " item " << k - 1;
        ASSERT_EQ(got.time_ps, want.time_ps) << "cycle " << n;
        if (want.is_event) {
          ASSERT_EQ(got.event_id, want.event_id) << "cycle " << n;
          ASSERT_EQ(got.payload, want.payload) << "cycle " << n;
        } else {
          ASSERT_EQ(got.op.action, want.op.action) << "cycle " << n;
          ASSERT_EQ(got.op.storage_id, want.op.storage_id) << "cycle " << n;
          ASSERT_EQ(got.op.slot, want.op.slot) << "cycle " << n;
          ASSERT_EQ(got.op.field, want.op.field) << "cycle " << n;
          ASSERT_EQ(got.op.value, want.op.value) << "cycle " << n;
        }
      }
      model.apply(n);
    }
    ASSERT_EQ(k, s.items.size()) << "extra items after the last cycle";
    next_cycle = last + 1;
  }
  out->segments = chain.size();
  out->cycles = next_cycle;
  out->tail_offset = tail;
  out->committed_end = chain.empty() ? preamble_end : expect_off;
}

// A live reader's view (§2.2): read the header first, then the rest. Bytes
// read after the header snapshot were written no later than when we read them,
// so every segment committed by that tail_offset is complete in them.
std::vector<uint8_t> snapshot(const std::string &path) {
  std::vector<uint8_t> b;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return b;
  uint8_t hdr[wire::kFileHeaderSize];
  if (::pread(fd, hdr, sizeof hdr, 0) != static_cast<ssize_t>(sizeof hdr)) {
    ::close(fd);
    return b;
  }
  b.assign(hdr, hdr + sizeof hdr);
  uint8_t buf[1 << 16];
  for (uint64_t off = sizeof hdr;;) {
    const ssize_t r = ::pread(fd, buf, sizeof buf, static_cast<off_t>(off));
    if (r <= 0) break;
    b.insert(b.end(), buf, buf + r);
    off += static_cast<uint64_t>(r);
  }
  ::close(fd);
  return b;
}

uint64_t read_tail_offset(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint8_t b[8] = {};
  const ssize_t r = ::pread(fd, b, 8, wire::kHdrOffTailOffset);
  ::close(fd);
  return r == 8 ? wire::get_u64(b) : 0;
}

// ── The child process ────────────────────────────────────────────────────

constexpr auto kChildDeadline = std::chrono::seconds(20);

class Child {
 public:
  // fork + exec USCOPE_TEST_HELPER with args; its stdout is a pipe to us.
  // fsize_limit > 0 runs it under RLIMIT_FSIZE with SIGXFSZ ignored.
  bool spawn(const std::vector<std::string> &args, rlim_t fsize_limit = 0) {
    deadline_ = Clock::now() + kChildDeadline;
    uscope::test::SpawnedChild c;
    if (!uscope::test::spawn_child(USCOPE_TEST_HELPER, args, &c, fsize_limit)) return false;
    pid_ = c.pid;
    fd_ = c.out;
    in_ = c.in;
    return true;
  }

  // With tokens=1, each token lets the child write one more block of 50 cycles.
  void give(uint64_t n) {
    static const char kTokens[256] = {};
    while (n > 0 && in_ >= 0) {
      const size_t k = n < sizeof kTokens ? n : sizeof kTokens;
      const ssize_t r = ::send(in_, kTokens, k, MSG_NOSIGNAL);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return;  // the child is gone; its output tells why
      n -= static_cast<uint64_t>(r);
    }
  }
  // Keep the child allowed to run `blocks` blocks past what it has reported.
  void allow_ahead(uint64_t blocks) {
    const uint64_t want = progress_ / kCyclesPerBlock + blocks;
    if (want > given_) {
      give(want - given_);
      given_ = want;
    }
  }

  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
    if (fd_ >= 0) ::close(fd_);
    if (in_ >= 0) ::close(in_);
  }

  bool timed_out() const { return Clock::now() >= deadline_; }

  // The next line of the child's stdout. wait=false: only if one is ready.
  // False at EOF, at the deadline, or (wait=false) when none is ready.
  bool next_line(std::string &line, bool wait = true) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        lines_.push_back(line);
        return true;
      }
      if (fd_ < 0) return false;
      int timeout = 0;
      if (wait) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
        if (left.count() <= 0) return false;
        timeout = static_cast<int>(left.count());
      }
      pollfd pfd{fd_, POLLIN, 0};
      const int r = ::poll(&pfd, 1, timeout);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd_);
        fd_ = -1;
        return false;
      }
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Reads lines until "progress N" with N >= cycles. Returns false on EOF or deadline.
  bool wait_progress(uint64_t cycles) {
    std::string line;
    while (next_line(line)) {
      if (progress_of(line) >= cycles) return true;
    }
    return false;
  }
  // Drains whatever lines are ready, without waiting; returns the last progress seen.
  uint64_t drain() {
    std::string line;
    while (next_line(line, false)) progress_of(line);
    return progress_;
  }

  // Waits for the child to end; kills it at the deadline. Returns the
  // waitpid status, or -1 after a timeout.
  int wait_exit() {
    for (;;) {
      drain();
      int st = 0;
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        std::string line;
        while (next_line(line)) {  // the rest of its output, up to EOF
        }
        return st;
      }
      if (r < 0 || timed_out()) {
        ADD_FAILURE() << "the child did not finish within " << kChildDeadline.count() << " s; killing it";
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // SIGKILL and reap. Returns the waitpid status.
  int kill_now() {
    int st = 0;
    if (pid_ <= 0) return -1;  // never kill(-1, ...)
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return st;
  }

  const std::vector<std::string> &lines() const { return lines_; }
  uint64_t progress() const { return progress_; }
  // Its output for failure messages: every line but the progress lines,
  // of which only the last is kept.
  std::string output() const {
    std::string s, last_progress;
    for (const auto &l : lines_) {
      if (l.compare(0, 9, "progress ") == 0) last_progress = l;
      else s += "  " + l + "\n";
    }
    if (!last_progress.empty()) s = "  (last) " + last_progress + "\n" + s;
    return s.empty() ? "  (none)\n" : s;
  }
  // The first line starting with prefix, or "".
  std::string line_starting(const std::string &prefix) const {
    for (const auto &l : lines_)
      if (l.compare(0, prefix.size(), prefix) == 0) return l;
    return "";
  }

 private:
  uint64_t progress_of(const std::string &line) {
    if (line.compare(0, 9, "progress ") == 0) progress_ = std::strtoull(line.c_str() + 9, nullptr, 10);
    return progress_;
  }
  pid_t pid_ = -1;
  int fd_ = -1;   // its stdout
  int in_ = -1;   // its stdin
  uint64_t given_ = 0;
  std::string buf_;
  std::vector<std::string> lines_;
  uint64_t progress_ = 0;
  Clock::time_point deadline_{};
};

// A fresh directory for one test's files, removed when the test passes.
// ── Kill ─────────────────────────────────────────────────────────────────

struct KillCase {
  const char *name;
  uint64_t kill_after_cycles;  // progress the child must report first
  uint32_t durability;
  unsigned pace_us;
  uint64_t ahead;              // blocks of 50 cycles it may run past what we read
};

void kill_and_check(const KillCase &c) {
  SCOPED_TRACE(c.name);
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file(std::string(c.name) + ".usc");
  Child child;
  ASSERT_TRUE(child.spawn({"run", path, "pace=" + std::to_string(c.pace_us),
                           "durability=" + std::to_string(c.durability), "tokens=1"}));
  // The child may run c.ahead blocks past what we have read: with many, it
  // is busy writing when the kill lands; with any, the file stays small
  // however slowly this process runs.
  child.allow_ahead(c.kill_after_cycles / kCyclesPerBlock + c.ahead);
  ASSERT_TRUE(child.wait_progress(c.kill_after_cycles))
      << "no progress to " << c.kill_after_cycles << " cycles; output:\n" << child.output();
  // The first commit may trail the simulation thread (with NONE durability,
  // by a 1 MiB buffer): wait for it, letting the child run meanwhile.
  uint64_t seen_tail = 0;
  while ((seen_tail = read_tail_offset(path)) == 0) {
    ASSERT_FALSE(child.timed_out()) << "tail_offset stayed 0; output:\n" << child.output();
    child.drain();
    child.allow_ahead(c.ahead);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const uint64_t progress = child.drain();
  const int st = child.kill_now();
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
      << "the child ended before the kill (status " << st << "); output:\n" << child.output();

  Checked r;
  ASSERT_NO_FATAL_FAILURE(
      check_unfinished(uscope::test::read_bytes(path), &r, c.durability == USCOPE_DURABILITY_NONE));
  EXPECT_GE(r.tail_offset, seen_tail) << "tail_offset went backwards";
  EXPECT_GE(r.segments, 1u);
  std::fprintf(stderr, "[ %s ] killed after %llu cycles reported: %zu segments, %llu cycles verified\n",
               c.name, static_cast<unsigned long long>(progress), r.segments,
               static_cast<unsigned long long>(r.cycles));
}

TEST(WriterCrash, KillLeavesValidPrefix) {
  // Different moments: right after the first segments (the child held on a
  // short leash), while paced (the encoder idles between bursts), later at
  // full speed, and with the user-space-buffered NONE durability, whose
  // commits wait for the buffer to reach the OS. NONE commits a whole buffer
  // of segments with one tail_offset write, so a kill between that write and
  // the num_segments write leaves num_segments behind by hundreds (reproduced
  // with strace -e inject=pwrite64:signal=SIGKILL:when=2), not "by one" as
  // §2.2 says; tail_offset stays authoritative and correct.
  const KillCase cases[] = {
      {"early", 3 * kCyclesPerSegment, USCOPE_DURABILITY_FLUSH, 0, 4},
      {"paced", 60 * kCyclesPerSegment, USCOPE_DURABILITY_FLUSH, 50, 200},
      {"busy", 600 * kCyclesPerSegment, USCOPE_DURABILITY_FLUSH, 0, 200},
      {"none", 600 * kCyclesPerSegment, USCOPE_DURABILITY_NONE, 0, 200},
  };
  for (const auto &c : cases) ASSERT_NO_FATAL_FAILURE(kill_and_check(c));
}

// ── Disk full at open ────────────────────────────────────────────────────

uscope_schema_t *pattern_schema() {
  uscope_schema_t *s = nullptr;
  uint8_t clk;
  uint16_t root, rob, count, tick;
  if (uscope_schema_new(&s) != USCOPE_OK) return nullptr;
  const uscope_field_t rob_fields[2] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t count_fields[1] = {{"n", USCOPE_FT_U64, 0, 0, 0}};
  const uscope_field_t tick_fields[2] = {{"cycle", USCOPE_FT_U64, 0, 0, 0}, {"tag", USCOPE_FT_U32, 0, 0, 0}};
  if (uscope_schema_add_clock(s, &clk, "clk", kPeriodPs) != USCOPE_OK ||
      uscope_schema_add_scope(s, &root, "top", USCOPE_NO_PARENT, nullptr, clk) != USCOPE_OK ||
      uscope_schema_add_storage(s, &rob, "rob", root, kNumSlots, USCOPE_SF_SPARSE, rob_fields, 2, nullptr,
                                0) != USCOPE_OK ||
      uscope_schema_add_storage(s, &count, "count", root, 1, 0, count_fields, 1, nullptr, 0) != USCOPE_OK ||
      uscope_schema_add_event(s, &tick, "tick", root, tick_fields, 2) != USCOPE_OK) {
    uscope_schema_free(s);
    return nullptr;
  }
  return s;
}

// A disk that is full when the header and preamble are written. (This wrote
// to /dev/full until the writer refused non-regular paths, issue 11: it
// renames a temporary file into place, which must not replace a device.)
// RLIMIT_FSIZE makes the first write fail, with EFBIG, in a forked child.
TEST(WriterCrash, DiskFullAtOpen) {
  for (uint32_t durability :
       {USCOPE_DURABILITY_FLUSH, USCOPE_DURABILITY_NONE, USCOPE_DURABILITY_FDATASYNC}) {
    SCOPED_TRACE("durability " + std::to_string(durability));
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string path = dir.file("full.usc");
    uscope_schema_t *schema = pattern_schema();
    ASSERT_NE(schema, nullptr) << uscope_last_error();
    uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
    opts.checkpoint_interval_ps = kIntervalPs;
    opts.durability = durability;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ::alarm(60);
      ::signal(SIGXFSZ, SIG_IGN);
      const struct rlimit lim = {16, 16};  // less than the 48-byte file header
      ::setrlimit(RLIMIT_FSIZE, &lim);
      uscope_writer_t *w = nullptr;
      const uscope_status_t st = uscope_writer_open(&w, path.c_str(), schema, nullptr, 0, &opts);
      const std::string msg = std::to_string(st) + (w ? " w" : " -") + " " + uscope_last_error();
      (void)!::write(fds[1], msg.data(), msg.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string msg;
    char buf[1024];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int st = 0;
    ::waitpid(pid, &st, 0);
    uscope_schema_free(schema);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st << " " << msg;
    EXPECT_EQ(msg.compare(0, 5, "-3 - "), 0) << "IO, and out-parameters written only on success: " << msg;
    EXPECT_NE(msg.find("File too large"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    // Nothing is left: not the file, not its temporary.
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << msg;
  }
  // /dev/full itself is refused, by name and kind, and left alone.
  uscope_schema_t *schema = pattern_schema();
  ASSERT_NE(schema, nullptr);
  uscope_writer_t *w = nullptr;
  EXPECT_EQ(uscope_writer_open(&w, "/dev/full", schema, nullptr, 0, nullptr), USCOPE_ERR_IO);
  uscope_schema_free(schema);
  EXPECT_EQ(w, nullptr);
  const std::string msg = uscope_last_error();
  EXPECT_NE(msg.find("/dev/full: it is a character device"), std::string::npos) << msg;
}

// ── Disk error mid-run (RLIMIT_FSIZE) ────────────────────────────────────

TEST(WriterCrash, FileSizeLimitMidRun) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("fsize.usc");
  constexpr rlim_t kLimit = 256 * 1024;  // room for about 180 segments of the pattern
  Child child;
  ASSERT_TRUE(child.spawn({"fsize", path}, kLimit));
  const int st = child.wait_exit();
  ASSERT_NE(st, -1);
  ASSERT_TRUE(WIFEXITED(st)) << "the child must not crash (status " << st << "); output:\n"
                             << child.output();
  ASSERT_EQ(WEXITSTATUS(st), 0) << child.output();
  ASSERT_EQ(child.lines().empty() ? "" : child.lines().back(), "exit") << child.output();

  // The error reaches the simulation thread as IO, from a per-cycle call or
  // at the latest from close; close returns it either way.
  const std::string fail_line = child.line_starting("fail ");
  uint64_t fail_cycle = UINT64_MAX;
  const std::string close_line = child.line_starting("close ");
  ASSERT_FALSE(close_line.empty()) << child.output();
  EXPECT_EQ(close_line.compare(0, 9, "close -3 "), 0) << close_line;
  EXPECT_NE(close_line.find("File too large"), std::string::npos) << close_line;
  EXPECT_NE(close_line.find(path), std::string::npos) << close_line;
  if (!fail_line.empty()) {
    char call[32] = {};
    unsigned long long cycle = 0;
    int status = 0;
    ASSERT_EQ(std::sscanf(fail_line.c_str(), "fail %31s %llu %d", call, &cycle, &status), 3) << fail_line;
    EXPECT_EQ(status, USCOPE_ERR_IO) << fail_line;
    EXPECT_NE(fail_line.find("File too large"), std::string::npos) << fail_line;
    fail_cycle = cycle;
  } else {
    ADD_FAILURE() << "the child wrote 50,000,000 cycles without a per-cycle error:\n" << child.output();
  }

  // Everything committed before the failure is intact.
  const std::vector<uint8_t> bytes = uscope::test::read_bytes(path);
  EXPECT_LE(bytes.size(), kLimit);
  Checked r;
  ASSERT_NO_FATAL_FAILURE(check_unfinished(bytes, &r));
  EXPECT_GE(r.segments, 10u) << "the limit leaves room for many segments";
  EXPECT_LE(r.committed_end, bytes.size());
  EXPECT_LE(r.cycles, fail_cycle) << "a committed cycle the writer had refused";
  std::fprintf(stderr, "[ fsize ] %zu bytes, %zu segments, %llu cycles verified; %s\n", bytes.size(),
               r.segments, static_cast<unsigned long long>(r.cycles), fail_line.c_str());
}

// ── Live reads while the writer runs ─────────────────────────────────────

TEST(WriterCrash, LiveFileIsConsistentPrefix) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("live.usc");
  Child child;
  // Full speed, default FLUSH durability, allowed to run a few segments
  // ahead of us, so that it keeps writing and committing while we read, and
  // the file grows by a bounded amount per snapshot (each checks it all).
  ASSERT_TRUE(child.spawn({"run", path, "tokens=1"}));
  constexpr uint64_t kAhead = 6;
  child.allow_ahead(kAhead);
  ASSERT_TRUE(child.wait_progress(1)) << "the child did not start; output:\n" << child.output();

  // Read the file while the child writes it, until we have seen (and fully
  // checked) twenty different committed tails.
  constexpr size_t kDistinctTails = 20;
  std::vector<uint64_t> tails;
  size_t snapshots = 0;
  Checked last;
  while (tails.size() < kDistinctTails) {
    ASSERT_FALSE(child.timed_out()) << "saw only " << tails.size() << " distinct tails; output:\n"
                                    << child.output();
    child.drain();
    child.allow_ahead(kAhead);
    const std::vector<uint8_t> b = snapshot(path);
    ASSERT_GE(b.size(), wire::kFileHeaderSize) << "the header is written at open";
    ++snapshots;
    Checked r;
    ASSERT_NO_FATAL_FAILURE(check_unfinished(b, &r)) << "snapshot " << snapshots;
    ASSERT_GE(r.tail_offset, last.tail_offset) << "tail_offset went backwards";
    ASSERT_GE(r.segments, last.segments);
    if (r.tail_offset != 0 && (tails.empty() || tails.back() != r.tail_offset)) {
      tails.push_back(r.tail_offset);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    last = r;
  }
  const int st = child.kill_now();
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "status " << st << "; output:\n" << child.output();
  Checked final_check;
  ASSERT_NO_FATAL_FAILURE(check_unfinished(uscope::test::read_bytes(path), &final_check));
  EXPECT_GE(final_check.segments, last.segments);
  std::fprintf(stderr, "[ live ] %zu snapshots, %zu distinct tails, %zu segments at the end\n", snapshots,
               tails.size(), final_check.segments);
}

}  // namespace
