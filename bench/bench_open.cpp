// Memory of a reader right after open, against the trace's size (issue 16
// point 4: "peak RSS right after open is independent of the file size, at
// most 8 MB at 434 MB and at 4 GB").
//
// The BOOM-like workload of boom_workload.hpp (108 MB of LZ4 trace per
// million cycles, a segment every 10,000 cycles) is written at each size of
// USCOPE_BENCH_OPEN_CYCLES (comma-separated cycle counts; default
// "1000000,4000000": 108 MB and 434 MB; 37000000 gives 4.0 GB), or the
// files named by USCOPE_BENCH_OPEN_TRACES (comma-separated paths) are used
// as they are. Each open is measured in a child process of its own, forked
// before anything of the trace is touched, so that no earlier open, page
// cache mapping or heap left by another benchmark counts:
//
//   BM_OpenMemory/<file>  uscope_reader_open through the C ABI, then
//                         uscope_reader_info: hwm_after_open_MB (the whole
//                         process's VmHWM, code and libraries included),
//                         open_delta_MB (VmHWM after minus VmRSS before:
//                         what the open itself made resident), segments,
//                         file_MB. Two sizes' deltas give the part that
//                         grows with the number of segments (the index).
//
// Written traces go to USCOPE_BENCH_DIR (default $TMPDIR or /tmp) and are
// removed at exit.
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "boom_workload.hpp"
#include "uscope/uscope.h"

namespace {

using namespace uscope_bench;

// A field of /proc/self/status, in kB (-1 when absent).
long status_kb(const char *key) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, n) == 0) v = std::strtol(line + n, nullptr, 10);
  std::fclose(f);
  return v;
}

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "bench_open: %s: %s\n", what, uscope_last_error());
  std::exit(1);
}

void write_boom(const std::string &path, uint64_t cycles) {
  Ids ids{};
  uscope_schema_t *schema = build_schema(ids);
  uscope_writer_options_t o;
  uscope_writer_options_init(&o);
  o.frame_format = USCOPE_FRAMES_V02;
  o.checkpoint_interval_ps = kCheckpointPs;
  uscope_writer_t *w = nullptr;
  if (uscope_writer_open(&w, path.c_str(), schema, nullptr, 0, &o) != USCOPE_OK) die("writer_open");
  TraceSink sink{w};
  int st = 0;
  for (uint64_t c = 0; c < cycles; ++c) st |= run_cycle(sink, ids, c);
  if (st != 0) die("a per-cycle call");
  if (uscope_writer_close(w) != USCOPE_OK) die("writer_close");
  uscope_schema_free(schema);
}

struct Figures {
  long rss_before_kb = 0, hwm_after_kb = 0;
  uint32_t segments = 0;
};

// Opens path in a forked child and returns what it measured.
Figures measure(const std::string &path) {
  int fds[2];
  if (pipe(fds) != 0) die("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Figures f;
    // The peak so far is the child's RSS (clear_refs "5" resets VmHWM).
    if (FILE *c = std::fopen("/proc/self/clear_refs", "w")) {
      std::fputs("5", c);
      std::fclose(c);
    }
    f.rss_before_kb = status_kb("VmRSS:");
    uscope_reader_t *r = nullptr;
    if (uscope_reader_open(&r, path.c_str()) != USCOPE_OK) _exit(2);
    f.hwm_after_kb = status_kb("VmHWM:");
    uscope_file_info_t i{};
    i.struct_size = sizeof i;
    if (uscope_reader_info(r, &i) != USCOPE_OK) _exit(3);
    f.segments = i.num_segments;
    uscope_reader_close(r);
    if (write(fds[1], &f, sizeof f) != static_cast<ssize_t>(sizeof f)) _exit(4);
    _exit(0);
  }
  close(fds[1]);
  Figures f;
  const ssize_t got = read(fds[0], &f, sizeof f);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof f) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_open: the child could not open %s (status %d)\n", path.c_str(), status);
    std::exit(1);
  }
  return f;
}

void BM_OpenMemory(benchmark::State &state, std::string path) {
  Figures f;
  for (auto _ : state) f = measure(path);
  struct stat sb {};
  stat(path.c_str(), &sb);
  using benchmark::Counter;
  const double delta_mb = static_cast<double>(f.hwm_after_kb - f.rss_before_kb) / 1024;
  state.counters["hwm_after_open_MB"] = Counter(static_cast<double>(f.hwm_after_kb) / 1024);
  state.counters["open_delta_MB"] = Counter(delta_mb);
  state.counters["segments"] = Counter(f.segments);
  state.counters["file_MB"] = Counter(static_cast<double>(sb.st_size) / 1e6);
}

std::vector<std::string> split(const char *s) {
  std::vector<std::string> out;
  std::string cur;
  for (const char *p = s; *p; ++p) {
    if (*p == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> paths, written;
  if (const char *t = std::getenv("USCOPE_BENCH_OPEN_TRACES")) {
    paths = split(t);
  } else {
    const char *c = std::getenv("USCOPE_BENCH_OPEN_CYCLES");
    const char *base = std::getenv("USCOPE_BENCH_DIR");
    if (!base) base = std::getenv("TMPDIR");
    if (!base) base = "/tmp";
    for (const std::string &n : split(c ? c : "1000000,4000000")) {
      const std::string path =
          std::string(base) + "/uscope_bench_open." + std::to_string(getpid()) + "." + n + ".uscope";
      write_boom(path, std::strtoull(n.c_str(), nullptr, 10));
      paths.push_back(path);
      written.push_back(path);
    }
  }
  for (const std::string &p : paths) {
    const std::string name = "BM_OpenMemory/" + p.substr(p.find_last_of('/') + 1);
    benchmark::RegisterBenchmark(name.c_str(), BM_OpenMemory, p)->Iterations(1)->Repetitions(3)->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const std::string &p : written) std::remove(p.c_str());
  return 0;
}
