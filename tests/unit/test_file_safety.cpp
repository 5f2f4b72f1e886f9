// Files that change or are not what they should be, under the readers and
// the writer (issue 11: 1.2 SIGBUS on a shrinking file, 1.3 non-regular
// paths that hang, 1.4 a 0-byte file after a kill or a full disk at open,
// 2.4 open error messages).
//
// Anything that could crash or hang runs in a forked child with an alarm, so
// that a regression fails the test (the child dies of a signal) instead of
// killing or hanging the whole test program.
#include <gtest/gtest.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pccx/pccx.h"
#include "support/test_util.hpp"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

constexpr uint64_t kPeriod = 1000;

// ── helpers ──

std::vector<uint8_t> slurp(const std::string &path) {
  std::vector<uint8_t> out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

void spit(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_TRUE(f) << path;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

// Runs body in a forked child that must exit within timeout_s. Returns ""
// when it returned true and exited normally, else what went wrong (its
// message, a signal, a timeout).
std::string in_child(const std::function<bool(std::string &)> &body, unsigned timeout_s = 120,
                     std::string *ok_msg = nullptr) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(timeout_s);  // SIGALRM ends a hang: the parent sees a signal
    std::string msg;
    const bool ok = body(msg);
    if (!msg.empty()) (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st))
    return std::string("child killed by signal ") + strsignal(WTERMSIG(st)) +
           (WTERMSIG(st) == SIGALRM ? " (timeout: it hung)" : "") + (msg.empty() ? "" : ": " + msg);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return "child failed: " + msg;
  if (ok_msg) *ok_msg = msg;
  return "";
}

// A schema of `extra` + 2 storages: rob (8 slots, 3 fields), ctr, and
// `extra` small counters (a large schema makes open slow), one event type.
uscope_schema_t *make_schema(uint32_t extra = 0) {
  uscope_schema_t *s = nullptr;
  if (uscope_schema_new(&s) != USCOPE_OK) return nullptr;
  EXPECT_EQ(uscope_schema_add_clock(s, nullptr, "clk", kPeriod), USCOPE_OK);
  EXPECT_EQ(uscope_schema_add_scope(s, nullptr, "/", USCOPE_NO_PARENT, nullptr, 0), USCOPE_OK);
  uint16_t core = 0;
  EXPECT_EQ(uscope_schema_add_scope(s, &core, "core0", 0, "cpu", USCOPE_CLOCK_INHERIT), USCOPE_OK);
  uscope_field_t f[] = {{"id", USCOPE_FT_U32, 0, 0, 0}, {"pc", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "rob", core, 8, USCOPE_SF_SPARSE, f, 2, nullptr, 0), USCOPE_OK);
  uscope_field_t c[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_storage(s, nullptr, "ctr", core, 1, 0, c, 1, nullptr, 0), USCOPE_OK);
  for (uint32_t i = 0; i < extra; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "c%u", i);
    EXPECT_EQ(uscope_schema_add_storage(s, nullptr, name, core, 1, 0, c, 1, nullptr, 0), USCOPE_OK);
  }
  uscope_field_t e[] = {{"id", USCOPE_FT_U32, 0, 0, 0}};
  EXPECT_EQ(uscope_schema_add_event(s, nullptr, "retire", core, e, 1), USCOPE_OK);
  return s;
}

// A finalized trace of `cycles` cycles, a segment every 100; `seed` changes
// the values, so that two runs differ.
void write_trace(const std::string &path, uint64_t cycles, uint64_t seed = 0) {
  uscope_schema_t *s = make_schema();
  ASSERT_TRUE(s);
  uscope_writer_options_t o = USCOPE_WRITER_OPTIONS_INIT;
  o.checkpoint_interval_ps = 100 * kPeriod;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  for (uint64_t cy = 0; cy < cycles; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(w, 0, cy % 8, 0, cy * 7 + seed), USCOPE_OK);
    EXPECT_EQ(uscope_slot_set(w, 0, cy % 8, 1, 0x80000000ull + 4 * cy + seed * 1000003), USCOPE_OK);
    EXPECT_EQ(uscope_slot_add(w, 1, 0, 0, 1 + seed), USCOPE_OK);
    const uint32_t id = static_cast<uint32_t>(cy ^ seed);
    EXPECT_EQ(uscope_event(w, 0, &id, 4), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
}

void write_pccx(const std::string &path, uint32_t events) {
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), nullptr), USCOPE_OK) << uscope_last_error();
  for (uint32_t i = 0; i < events; ++i)
    ASSERT_EQ(pccx_writer_event(w, i % 4, i * 10ull, 5, i % 7, (i % 3) ? nullptr : "gemm_tile"), USCOPE_OK);
  ASSERT_EQ(pccx_writer_close(w), USCOPE_OK) << uscope_last_error();
}

// Everything a trace answers to the queries the tests make, as text: two
// readers that print the same have read the same content.
std::string fingerprint(uscope_reader_t *r, std::string &err) {
  std::string out;
  char b[160];
  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  if (uscope_reader_info(r, &fi) != USCOPE_OK) return err = uscope_last_error(), "";
  std::snprintf(b, sizeof b, "segments %u end %llu\n", fi.num_segments, (unsigned long long)fi.last_time_ps);
  out += b;
  for (uint64_t t : {uint64_t{0}, 150 * kPeriod, 777 * kPeriod, 1999 * kPeriod}) {
    uscope_state_t *st = nullptr;
    if (uscope_reader_state_at(r, &st, t) != USCOPE_OK) return err = uscope_last_error(), "";
    for (uint16_t slot = 0; slot < 8; ++slot) {
      int valid = 0;
      uint64_t v0 = 0, v1 = 0;
      (void)uscope_state_slot_valid(st, &valid, 0, slot);
      (void)uscope_state_slot_field(st, &v0, 0, slot, 0);
      (void)uscope_state_slot_field(st, &v1, 0, slot, 1);
      std::snprintf(b, sizeof b, "t%llu s%u %d %llu %llu\n", (unsigned long long)t, slot, valid,
                    (unsigned long long)v0, (unsigned long long)v1);
      out += b;
    }
    uint64_t c = 0;
    (void)uscope_state_slot_field(st, &c, 1, 0, 0);
    out += "ctr " + std::to_string(c) + "\n";
    uscope_state_free(st);
  }
  uscope_event_iter_t *it = nullptr;
  if (uscope_reader_events_in_range(r, &it, 100 * kPeriod, 1300 * kPeriod) != USCOPE_OK)
    return err = uscope_last_error(), "";
  uscope_event_t ev{};
  uscope_status_t s;
  uint64_t sum = 0, n = 0;
  while ((s = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
    uint32_t id = 0;
    std::memcpy(&id, ev.payload, 4);
    sum = sum * 31 + ev.time_ps + id;
    ++n;
  }
  uscope_event_iter_free(it);
  if (s != USCOPE_DONE) return err = uscope_last_error(), "";
  out += "events " + std::to_string(n) + " " + std::to_string(sum) + "\n";
  return out;
}

// What a reader may answer about a file that is being truncated, extended
// with zeros (ftruncate past the end) and rewritten: the statuses of file
// contents (cut short, inconsistent, not a trace, zeros where the version or
// flags were), never IO, INTERNAL, NO_MEMORY or a crash.
bool is_content_error(uscope_status_t s) {
  return s == USCOPE_ERR_TRUNCATED || s == USCOPE_ERR_CORRUPT || s == USCOPE_ERR_BAD_MAGIC ||
         s == USCOPE_ERR_UNSUPPORTED_VERSION || s == USCOPE_ERR_UNKNOWN_COMPRESSION;
}
bool is_pccx_content_error(uscope_status_t s) {
  return is_content_error(s) || s == USCOPE_ERR_BAD_HEADER || s == USCOPE_ERR_BAD_UTF8 || s == USCOPE_ERR_LIMIT;
}

// A process that, until killed, truncates path to random sizes (which
// extends it with zeros when it is shorter), to 0, and
// rewrites it with one of the given contents (in pieces, so readers also see
// it half written), in a tight loop; only a whole file is left alone for up
// to 3 ms.
pid_t start_mutator(const std::string &path, const std::vector<std::vector<uint8_t>> &contents) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::alarm(300);  // never outlive the test
  std::mt19937_64 rng(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) ::_exit(3);
  for (;;) {
    const auto &c = contents[rng() % contents.size()];
    switch (rng() % 4) {
      case 0: (void)!::ftruncate(fd, 0); break;
      case 1: (void)!::ftruncate(fd, static_cast<off_t>(rng() % (c.size() + 1))); break;
      default: {  // rewrite from 0, in pieces
        (void)!::ftruncate(fd, 0);
        size_t off = 0;
        while (off < c.size()) {
          const size_t k = std::min<size_t>(c.size() - off, 4096 + rng() % 65536);
          if (::pwrite(fd, c.data() + off, k, static_cast<off_t>(off)) <= 0) break;
          off += k;
        }
        // Whole again: leave it so for a moment, so that readers open it
        // and are reading when the next truncation comes.
        ::usleep(static_cast<useconds_t>(rng() % 3000));
        break;
      }
    }
  }
}

void stop(pid_t pid) {
  ::kill(pid, SIGKILL);
  int st;
  ::waitpid(pid, &st, 0);
}

// ── 1.2: a file that shrinks under the reader ──

TEST(FileSafety, TraceReaderSurvivesAFileTruncatedAndRewrittenUnderIt) {
  TempDir dir;
  const std::string path = dir.file("t.uscope"), other = dir.file("u.uscope");
  write_trace(path, 20000);
  write_trace(other, 15000, 99);
  const std::vector<std::vector<uint8_t>> contents = {slurp(path), slurp(other)};
  ASSERT_GT(contents[0].size(), 100000u);
  const pid_t mut = start_mutator(path, contents);
  ASSERT_GT(mut, 0);
  uint64_t ok_calls = 0, failed_calls = 0;
  std::string counts;
  const std::string r = in_child([&](std::string &msg) {
    std::mt19937_64 rng(42);
    timespec t0{}, t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    auto bad = [&](uscope_status_t s, const char *what) {
      if (s == USCOPE_OK || s == USCOPE_DONE) {
        ++ok_calls;
        return false;
      }
      ++failed_calls;
      if (is_content_error(s)) return false;
      msg = std::string(what) + " returned " + uscope_status_str(s) + ": " + uscope_last_error();
      return true;
    };
    // Bounded: 3000 rounds or about 4 s, whichever comes first.
    for (int round = 0; round < 3000; ++round) {
      ::clock_gettime(CLOCK_MONOTONIC, &t);
      if (t.tv_sec - t0.tv_sec > 4) break;
      uscope_reader_t *rd = nullptr;
      uscope_status_t s = uscope_reader_open(&rd, path.c_str());
      if (bad(s, "uscope_reader_open")) return false;
      if (s != USCOPE_OK) continue;
      for (int q = 0; q < 8; ++q) {
        uscope_state_t *st = nullptr;
        s = uscope_reader_state_at(rd, &st, rng() % (20000 * kPeriod));
        if (bad(s, "uscope_reader_state_at")) return false;
        uscope_state_free(st);
        uscope_event_iter_t *it = nullptr;
        const uint64_t a = rng() % (20000 * kPeriod);
        s = uscope_reader_events_in_range(rd, &it, a, a + 3000 * kPeriod);
        if (bad(s, "uscope_reader_events_in_range")) return false;
        if (s == USCOPE_OK) {
          uscope_event_t ev{};
          while ((s = uscope_event_iter_next(it, &ev)) == USCOPE_OK) {
          }
          if (bad(s, "uscope_event_iter_next")) return false;
          uscope_event_iter_free(it);
        }
        uscope_file_info_t fi{};
        fi.struct_size = sizeof fi;
        (void)uscope_reader_info(rd, &fi);
        if (fi.num_segments) {
          uscope_item_iter_t *ii = nullptr;
          s = uscope_reader_segment_items(rd, &ii, static_cast<uint32_t>(rng() % fi.num_segments));
          if (bad(s, "uscope_reader_segment_items")) return false;
          if (s == USCOPE_OK) {
            uscope_item_t item{};
            while ((s = uscope_item_iter_next(ii, &item)) == USCOPE_OK) {
            }
            if (bad(s, "uscope_item_iter_next")) return false;
            uscope_item_iter_free(ii);
          }
        }
        uint32_t found = 0;
        if (bad(uscope_reader_poll_new_segments(rd, &found), "uscope_reader_poll_new_segments")) return false;
      }
      uscope_reader_close(rd);
    }
    msg = std::to_string(ok_calls) + " calls succeeded, " + std::to_string(failed_calls) +
          " failed with a file-content status";
    return true;
  }, 120, &counts);
  stop(mut);
  EXPECT_EQ(r, "");
  std::printf("reader: %s\n", counts.c_str());
}

// The same without a race: the file is cut after open. The query that needs
// the missing bytes says so; the reader stays usable once they are back.
TEST(FileSafety, AQueryPastTheNewEndSaysTheFileShrank) {
  TempDir dir;
  const std::string path = dir.file("t.uscope");
  write_trace(path, 2000);
  const std::vector<uint8_t> whole = slurp(path);
  const std::string r = in_child([&](std::string &msg) {
    uscope_reader_t *rd = nullptr;
    if (uscope_reader_open(&rd, path.c_str()) != USCOPE_OK) return msg = uscope_last_error(), false;
    if (::truncate(path.c_str(), static_cast<off_t>(whole.size() / 2)) != 0) return msg = "truncate", false;
    uscope_state_t *st = nullptr;
    const uscope_status_t s = uscope_reader_state_at(rd, &st, 1990 * kPeriod);
    const std::string m = uscope_last_error();
    char want[128];
    std::snprintf(want, sizeof want, "the file now has %zu", whole.size() / 2);
    if (s != USCOPE_ERR_TRUNCATED || m.find(path + " shrank under the reader: segment 19 at offset ") != 0 ||
        m.find(" bytes, ") == std::string::npos || m.find(want) == std::string::npos)
      return msg = std::string(uscope_status_str(s)) + ": " + m, false;
    // An early segment is still inside the file: answered as before.
    if (uscope_reader_state_at(rd, &st, 10 * kPeriod) != USCOPE_OK) return msg = uscope_last_error(), false;
    uscope_state_free(st);
    FILE *f = std::fopen(path.c_str(), "r+b");
    if (!f || std::fwrite(whole.data(), 1, whole.size(), f) != whole.size()) return msg = "rewrite", false;
    std::fclose(f);
    if (uscope_reader_state_at(rd, &st, 1990 * kPeriod) != USCOPE_OK) return msg = uscope_last_error(), false;
    uscope_state_free(st);
    uscope_reader_close(rd);
    return true;
  });
  EXPECT_EQ(r, "");
}

TEST(FileSafety, PccxReaderSurvivesAFileTruncatedAndRewrittenUnderIt) {
  TempDir dir;
  const std::string path = dir.file("t.pccx");
  write_pccx(path, 100000);
  const std::vector<std::vector<uint8_t>> contents = {slurp(path)};
  ASSERT_GT(contents[0].size(), 1000000u);
  const pid_t mut = start_mutator(path, contents);
  ASSERT_GT(mut, 0);
  std::string counts;
  const std::string r = in_child([&](std::string &msg) {
    timespec t0{}, t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t opened = 0, failed = 0;
    for (int round = 0; round < 2000; ++round) {
      ::clock_gettime(CLOCK_MONOTONIC, &t);
      if (t.tv_sec - t0.tv_sec > 4) break;
      pccx_reader_t *rd = nullptr;
      const uscope_status_t s = pccx_reader_open(&rd, path.c_str(), 0);
      if (s == USCOPE_OK) {
        pccx_event_t ev{};
        const uint64_t n = pccx_reader_event_count(rd);
        for (uint64_t i = 0; i < n; i += 97) (void)pccx_reader_event(rd, &ev, i);
        pccx_reader_close(rd);
        ++opened;
        continue;
      }
      ++failed;
      if (!is_pccx_content_error(s)) {
        msg = std::string("pccx_reader_open returned ") + uscope_status_str(s) + ": " + uscope_last_error();
        return false;
      }
    }
    msg = std::to_string(opened) + " opens succeeded, " + std::to_string(failed) + " failed";
    return true;
  }, 120, &counts);
  stop(mut);
  EXPECT_EQ(r, "");
  std::printf("pccx reader: %s\n", counts.c_str());
}

// The writer replaces the file with a new inode: a reader of the previous
// run keeps reading exactly what it read before.
TEST(FileSafety, AReaderOfRunOneIsUnaffectedByRunTwoOnTheSamePath) {
  TempDir dir;
  const std::string path = dir.file("t.uscope");
  write_trace(path, 2000, 1);
  const std::string r = in_child([&](std::string &msg) {
    uscope_reader_t *r1 = nullptr;
    if (uscope_reader_open(&r1, path.c_str()) != USCOPE_OK) return msg = uscope_last_error(), false;
    std::string err;
    const std::string before = fingerprint(r1, err);
    if (before.empty()) return msg = "run 1: " + err, false;
    write_trace(path, 1500, 2);  // run 2, other content, same path
    if (testing::Test::HasFailure()) return msg = "writing run 2 failed", false;
    const std::string after = fingerprint(r1, err);
    if (after != before) return msg = "run-1 reader changed:\n" + before + "---\n" + (after.empty() ? err : after), false;
    uscope_reader_close(r1);
    uscope_reader_t *r2 = nullptr;
    if (uscope_reader_open(&r2, path.c_str()) != USCOPE_OK) return msg = uscope_last_error(), false;
    const std::string second = fingerprint(r2, err);
    uscope_reader_close(r2);
    if (second.empty() || second == before) return msg = "run 2 not visible: " + err, false;
    return true;
  });
  EXPECT_EQ(r, "");
}

// ── 1.3: non-regular paths ──

struct NonRegular {
  std::string path;
  const char *kind;
};

std::vector<NonRegular> non_regular_paths(const TempDir &dir) {
  const std::string fifo = dir.file("fifo");
  EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string d = dir.file("subdir");
  EXPECT_EQ(::mkdir(d.c_str(), 0700), 0);
  return {{fifo, "is a FIFO"}, {d, "is a directory"}, {"/dev/null", "is a character device"}};
}

TEST(FileSafety, ReadersRefuseNonRegularFilesPromptly) {
  TempDir dir;
  for (const auto &p : non_regular_paths(dir)) {
    const std::string r = in_child(
        [&](std::string &msg) {
          uscope_reader_t *rd = nullptr;
          uscope_status_t s = uscope_reader_open(&rd, p.path.c_str());
          std::string m = uscope_last_error();
          if (s != USCOPE_ERR_IO || m.find(p.path) == std::string::npos || m.find(p.kind) == std::string::npos ||
              m.find("µScope trace") == std::string::npos)
            return msg = "uscope_reader_open: " + std::string(uscope_status_str(s)) + ": " + m, false;
          pccx_reader_t *pr = nullptr;
          s = pccx_reader_open(&pr, p.path.c_str(), 0);
          m = uscope_last_error();
          if (s != USCOPE_ERR_IO || m.find(p.path) == std::string::npos || m.find(p.kind) == std::string::npos ||
              m.find("pccx") == std::string::npos)
            return msg = "pccx_reader_open: " + std::string(uscope_status_str(s)) + ": " + m, false;
          return true;
        },
        60);
    EXPECT_EQ(r, "") << p.path;
  }
}

// Every command that reads a trace or a pccx file, not only info: summary
// sniffed the file's magic with an ifstream and hung on a FIFO. JSON-Lines
// inputs are streams and may be pipes (docs/convert.md), so they are not here.
TEST(FileSafety, CommandsRefuseNonRegularFilesPromptly) {
  TempDir dir;
  const char *commands[] = {"info", "summary", "dump --json", "state --time 0", "events --from 0 --to 1",
                            "timeline --entity 0 --range 0:4", "counters", "buffers --cycle 0",
                            "analyze --range 0:4", "noc-latency", "npu-report", "convert", "view"};
  // Named as traces, so that npu-report and convert pick the trace reader.
  const std::string fifo = dir.file("f.uscope"), d = dir.file("d.uscope"), null = dir.file("null.uscope");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::mkdir(d.c_str(), 0700), 0);
  ASSERT_EQ(::symlink("/dev/null", null.c_str()), 0);
  const NonRegular paths[] = {{fifo, "is a FIFO"}, {d, "is a directory"}, {null, "is a character device"}};
  for (const auto &p : paths) {
    for (const char *c : commands) {
      // timeout(1) turns a hang into a failure (exit status 137).
      std::string cmd = "timeout -s KILL 30 " + std::string(USCOPE_CLI) + " " + c + " '" + p.path + "'";
      if (std::string(c) == "convert") cmd += " -o '" + dir.file("out.jsonl") + "'";
      if (std::string(c) == "view") cmd += " -o '" + dir.file("out.html") + "'";
      FILE *f = ::popen((cmd + " 2>&1").c_str(), "r");
      ASSERT_TRUE(f);
      std::string out;
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      const int st = ::pclose(f);
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << cmd << ": " << st << " " << out;
      EXPECT_NE(out.find(p.kind), std::string::npos) << cmd << ": " << out;
      // The file is named, once (the CLI and the converters used to prefix
      // the reader's message, which names it already).
      const size_t at = out.find(p.path);
      EXPECT_NE(at, std::string::npos) << cmd << ": " << out;
      EXPECT_EQ(out.find(p.path, at + p.path.size()), std::string::npos) << cmd << ": " << out;
    }
  }
}

TEST(FileSafety, WriterRefusesNonRegularPaths) {
  TempDir dir;
  for (const auto &p : non_regular_paths(dir)) {
    const std::string r = in_child(
        [&](std::string &msg) {
          uscope_schema_t *s = make_schema();
          uscope_writer_t *w = nullptr;
          const uscope_status_t st = uscope_writer_open(&w, p.path.c_str(), s, nullptr, 0, nullptr);
          uscope_schema_free(s);
          const std::string m = uscope_last_error();
          if (st != USCOPE_ERR_IO || m.find(p.path) == std::string::npos || m.find(p.kind) == std::string::npos)
            return msg = std::string(uscope_status_str(st)) + ": " + m, false;
          return true;
        },
        60);
    EXPECT_EQ(r, "") << p.path;
  }
  struct stat st {};
  EXPECT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced";
}

// ── 1.4: a kill or a full disk inside uscope_writer_open ──

std::vector<std::string> temp_files(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent *e = ::readdir(d))
    if (e->d_name[0] == '.' && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      out.push_back(e->d_name);
  ::closedir(d);
  return out;
}

TEST(FileSafety, AKillInsideWriterOpenLeavesThePreviousFileOrAValidTrace) {
  TempDir dir;
  const std::string path = dir.file("t.uscope");
  write_trace(path, 300);
  uscope_schema_t *s = make_schema(2500);  // thousands of storages: open takes a while
  ASSERT_TRUE(s);
  // How long one open takes here, to spread the kills over it (no assert on it).
  timespec a{}, b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  {
    const std::string other = dir.file("timing.uscope");
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, other.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
    ::unlink(other.c_str());
  }
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  const long open_us = std::max<long>(1000, (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000);
  std::mt19937_64 rng(7);
  int kills = 0;
  for (int i = 0; i < 40; ++i) {
    std::vector<uint8_t> previous = slurp(path);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      uscope_writer_t *w = nullptr;
      if (uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr) != USCOPE_OK) ::_exit(2);
      ::pause();  // open done: wait for the kill, leaving a live trace
      ::_exit(0);
    }
    ::usleep(static_cast<useconds_t>(rng() % (open_us * 3 / 2)));
    ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st)) << "the child failed to open: exit " << WEXITSTATUS(st);
    ++kills;
    // The path holds the previous file, byte for byte, or a trace that opens.
    const std::vector<uint8_t> now = slurp(path);
    if (now != previous) {
      uscope_reader_t *r = nullptr;
      ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK)
          << "after kill " << i << " (" << now.size() << " bytes): " << uscope_last_error();
      uscope_reader_close(r);
    }
  }
  uscope_schema_free(s);
  // A kill can leave its temporary file (documented): at most one per kill,
  // and all of them named .t.uscope.XXXXXX.
  const auto temps = temp_files(dir.path());
  EXPECT_LE(static_cast<int>(temps.size()), kills);
  for (const auto &t : temps) {
    EXPECT_EQ(t.rfind(".t.uscope.", 0), 0u) << t;
    EXPECT_EQ(t.size(), std::strlen(".t.uscope.") + 6) << t;
    ::unlink(dir.file(t).c_str());
  }
}

TEST(FileSafety, AFullDiskAtWriterOpenLeavesThePreviousFileIntact) {
  TempDir dir;
  const std::string path = dir.file("t.uscope");
  write_trace(path, 300);
  const std::vector<uint8_t> previous = slurp(path);
  ASSERT_GT(previous.size(), 0u);
  const std::string r = in_child([&](std::string &msg) {
    // Writes past 4 KiB fail with EFBIG, as on a full disk, once SIGXFSZ is ignored.
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return msg = "setrlimit failed", false;
    uscope_schema_t *s = make_schema(2000);  // its preamble is well over 4 KiB
    uscope_writer_t *w = nullptr;
    const uscope_status_t st = uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr);
    uscope_schema_free(s);
    const std::string m = uscope_last_error();
    if (st != USCOPE_ERR_IO || m.find(path) == std::string::npos || m.find(std::strerror(EFBIG)) == std::string::npos)
      return msg = std::string(uscope_status_str(st)) + ": " + m, false;
    return true;
  });
  EXPECT_EQ(r, "");
  EXPECT_EQ(slurp(path), previous) << "the previous file changed";
  EXPECT_TRUE(temp_files(dir.path()).empty()) << temp_files(dir.path())[0];
}

TEST(FileSafety, WriterThroughASymlinkKeepsTheLink) {
  TempDir dir;
  const std::string target = dir.file("real.uscope"), link = dir.file("link.uscope");
  write_trace(target, 100, 1);
  ASSERT_EQ(::symlink("real.uscope", link.c_str()), 0);
  write_trace(link, 200, 2);
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, target.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  ASSERT_EQ(uscope_reader_info(r, &fi), USCOPE_OK);
  EXPECT_EQ(fi.last_time_ps, 199 * kPeriod);  // run 2 went to the link's target
  uscope_reader_close(r);
  EXPECT_TRUE(temp_files(dir.path()).empty());
}

// A /proc/self/fd/N path of a file with no name (deleted, or a memfd) is a
// link whose text ("<dir>/t.uscope (deleted)") names no file: the writer
// writes that file in place. It used to rename its temporary onto the
// link's text, leaving a stray "t.uscope (deleted)" in the directory and the
// caller's file empty (the fuzz targets write to memfds this way).
TEST(FileSafety, WriterThroughAProcFdOfADeletedFileWritesThatFile) {
  TempDir dir;
  const std::string path = dir.file("t.uscope");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::unlink(path.c_str()), 0);
  const std::string via = "/proc/self/fd/" + std::to_string(fd);
  write_trace(via, 100, 1);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_GT(st.st_size, 0) << "the file behind " << via << " stayed empty";
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, via.c_str()), USCOPE_OK) << uscope_last_error();
  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  ASSERT_EQ(uscope_reader_info(r, &fi), USCOPE_OK);
  EXPECT_EQ(fi.last_time_ps, 99 * kPeriod);
  uscope_reader_close(r);
  ::close(fd);
  std::vector<std::string> left;
  if (DIR *d = ::opendir(dir.path().c_str())) {
    while (dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) left.push_back(e->d_name);
    ::closedir(d);
  }
  EXPECT_TRUE(left.empty()) << "a stray file: " << left[0];
}

// ── 2.4: open errors name the file, what was expected, what was found ──

struct OpenResult {
  uscope_status_t status;
  std::string message;
};

OpenResult open_uscope(const std::string &p) {
  uscope_reader_t *r = nullptr;
  const uscope_status_t s = uscope_reader_open(&r, p.c_str());
  OpenResult o{s, uscope_last_error()};
  uscope_reader_close(r);
  return o;
}

OpenResult open_pccx(const std::string &p) {
  pccx_reader_t *r = nullptr;
  const uscope_status_t s = pccx_reader_open(&r, p.c_str(), 0);
  OpenResult o{s, uscope_last_error()};
  pccx_reader_close(r);
  return o;
}

void expect_message(const OpenResult &o, uscope_status_t status, const std::string &path,
                    std::initializer_list<const char *> parts) {
  EXPECT_EQ(o.status, status) << o.message;
  EXPECT_NE(o.message.find(path), std::string::npos) << o.message;
  for (const char *p : parts) EXPECT_NE(o.message.find(p), std::string::npos) << "'" << p << "' in: " << o.message;
}

TEST(FileSafety, OpenErrorMessagesSayWhatWasExpectedAndFound) {
  TempDir dir;
  const std::string missing = dir.file("missing.uscope"), empty = dir.file("empty"), d = dir.file("d"),
                    fifo = dir.file("fifo"), trace = dir.file("t.uscope"), pccx = dir.file("t.pccx"),
                    text = dir.file("notes.txt"), json = dir.file("trace.jsonl");
  ASSERT_EQ(::mkdir(d.c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  spit(empty, "");
  spit(text, "hello, this is a text file\nnot a trace\n");
  spit(json, "{\"ts\": 1, \"type\": \"MAC_COMPUTE\"}\n");
  write_trace(trace, 50);
  write_pccx(pccx, 10);

  expect_message(open_uscope(missing), USCOPE_ERR_IO, missing, {"No such file", "µScope trace"});
  expect_message(open_pccx(missing), USCOPE_ERR_IO, missing, {"No such file", "pccx"});
  expect_message(open_uscope(d), USCOPE_ERR_IO, d, {"is a directory", "µScope trace"});
  expect_message(open_pccx(d), USCOPE_ERR_IO, d, {"is a directory", "pccx container"});
  expect_message(open_uscope(fifo), USCOPE_ERR_IO, fifo, {"is a FIFO"});
  expect_message(open_pccx(fifo), USCOPE_ERR_IO, fifo, {"is a FIFO"});
  expect_message(open_uscope(empty), USCOPE_ERR_TRUNCATED, empty, {"expected a µScope trace", "found an empty file"});
  expect_message(open_pccx(empty), USCOPE_ERR_BAD_MAGIC, empty, {"expected a pccx container", "found an empty file"});
  expect_message(open_pccx(trace), USCOPE_ERR_BAD_MAGIC, trace, {"expected a pccx container", "found a µScope trace"});
  expect_message(open_uscope(pccx), USCOPE_ERR_BAD_MAGIC, pccx, {"expected a µScope trace", "found a pccx container"});
  expect_message(open_uscope(text), USCOPE_ERR_BAD_MAGIC, text, {"expected a µScope trace", "found text"});
  expect_message(open_pccx(text), USCOPE_ERR_BAD_MAGIC, text, {"expected a pccx container", "found text"});
  expect_message(open_uscope(json), USCOPE_ERR_BAD_MAGIC, json, {"expected a µScope trace", "found JSON text"});
  expect_message(open_pccx(json), USCOPE_ERR_BAD_MAGIC, json, {"expected a pccx container", "found JSON text"});
}

}  // namespace

// The pccx writer replaces its path only at close (it truncated it at open):
// until then a reader of the previous file reads it whole, and afterwards the
// directory holds the new file and nothing else.
TEST(FileSafety, PccxWriterReplacesThePathOnlyAtClose) {
  TempDir dir;
  const std::string path = dir.file("run.pccx");
  spit(path, "previous run");
  pccx_writer_t *w = nullptr;
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), nullptr), USCOPE_OK) << uscope_last_error();
  for (uint32_t i = 0; i < 1000; ++i)
    ASSERT_EQ(pccx_writer_event(w, 0, i * 10, 5, PCCX_EVENT_MAC_COMPUTE, nullptr), USCOPE_OK);
  ASSERT_EQ(pccx_writer_finish(w), USCOPE_OK) << pccx_writer_error(w);
  const std::vector<uint8_t> before_close = slurp(path);
  EXPECT_EQ(pccx_writer_close(w), USCOPE_OK);
  // finish() publishes: the path holds the new container from then on.
  pccx_reader_t *r = nullptr;
  ASSERT_EQ(pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM), USCOPE_OK) << uscope_last_error();
  pccx_reader_close(r);
  EXPECT_EQ(before_close, slurp(path));
  std::vector<std::string> names;
  DIR *d = ::opendir(dir.path().c_str());
  ASSERT_TRUE(d);
  while (dirent *e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.push_back(e->d_name);
  ::closedir(d);
  EXPECT_EQ(names, std::vector<std::string>{"run.pccx"});

  // Before finish, the previous file is still there, whole.
  spit(path, "previous run");
  ASSERT_EQ(pccx_writer_open(&w, path.c_str(), nullptr), USCOPE_OK) << uscope_last_error();
  ASSERT_EQ(pccx_writer_event(w, 0, 0, 5, PCCX_EVENT_MAC_COMPUTE, nullptr), USCOPE_OK);
  const std::vector<uint8_t> during = slurp(path);
  EXPECT_EQ(std::string(during.begin(), during.end()), "previous run");
  EXPECT_EQ(pccx_writer_close(w), USCOPE_OK);
  EXPECT_NE(slurp(path), during);
}
