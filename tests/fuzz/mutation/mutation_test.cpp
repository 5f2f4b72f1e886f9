// CLI mutation test: every `uscope` command, run as a real process of the
// built program, on hundreds of mutated input files (bit flips, byte
// overwrites, truncations, inserted and deleted runs, splices of two files)
// made from the shared conformance files, an example-program trace and NPU
// JSONL (and what `uscope convert` makes of it). For every run it asserts:
//  - no exit by a signal, no sanitizer report on stderr (an ASan/UBSan build
//    of the program is checked the same way, whatever its ASAN_OPTIONS);
//  - no hang: a run over the timeout (10 s) is killed and counted as a failure;
//  - an exit status in the documented set: 0, 1 (error; for `check`: defects),
//    2 (usage; for `check`: not readable as a trace);
//  - the input file is unchanged (its checksum before and after the run).
// Deterministic: the mutants come from a fixed seed (printed; --seed to
// change it) and the sorted source files. Everything lives in a temporary
// directory, removed at the end unless a run failed (then it is kept and
// named, with the failing inputs). Runs `--jobs` processes at once.
//
//   uscope_mutation_test --uscope BIN [--example BIN] [--seed N] [--per-kind N]
//                        [--jobs N] [--timeout S] SOURCE...
// --per-kind N: N mutants of each input kind, and N runs of each command
// (on its kinds' mutants in turn). Default 500.
// SOURCEs are files or directories (not recursive); a file's kind comes from
// its name: .uscope, .pccx, .jsonl / .jsonl.gz. Other files are ignored.
//
// The commands are the table kCommands below: to add one, add a line with the
// input kinds it takes and its arguments.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

enum Kind : unsigned { kUscope = 1, kPccx = 2, kJsonl = 4 };
const char *const kExt[] = {"", ".uscope", ".pccx", "", ".jsonl"};

// One command: the input kinds it takes, and its arguments after `uscope`.
// {in} is the mutated input, {out} a fresh output directory's path prefix.
struct Command {
  const char *name;
  unsigned kinds;
  std::vector<std::string> args;
};
const std::vector<Command> kCommands = {
    {"info", kUscope | kPccx, {"info", "{in}"}},
    {"info --json", kUscope | kPccx, {"info", "{in}", "--json"}},
    {"dump --json", kUscope, {"dump", "{in}", "--json"}},
    {"state", kUscope, {"state", "{in}", "--time", "5000"}},
    {"state --cycle --json", kUscope, {"state", "{in}", "--cycle", "3", "--json"}},
    {"events --json", kUscope, {"events", "{in}", "--from", "0", "--to", "18446744073709551615", "--json"}},
    {"summary", kUscope, {"summary", "{in}"}},
    {"summary --json", kUscope, {"summary", "{in}", "--json"}},
    {"timeline --json", kUscope, {"timeline", "{in}", "--entity", "0", "--range", "0:16", "--json"}},
    {"counters --json", kUscope, {"counters", "{in}", "--range", "0:16", "--json"}},
    {"buffers --json", kUscope, {"buffers", "{in}", "--cycle", "3", "--json"}},
    {"analyze --json", kUscope, {"analyze", "{in}", "--range", "0:16", "--json"}},
    {"analyze csv", kUscope, {"analyze", "{in}", "--range", "0:16", "--format", "csv"}},
    {"noc-latency --json", kUscope, {"noc-latency", "{in}", "--range", "0:16", "--json"}},
    {"check", kUscope | kPccx, {"check", "{in}", "--no-progress"}},
    {"check --json --strict", kUscope, {"check", "{in}", "--json", "--strict"}},
    {"npu-report", kUscope | kPccx | kJsonl, {"npu-report", "{in}"}},
    {"npu-report --json", kUscope | kPccx | kJsonl, {"npu-report", "{in}", "--json"}},
    {"view", kUscope, {"view", "{in}", "--range", "0:16", "-o", "{out}.html"}},
    {"convert -> .uscope", kJsonl, {"convert", "{in}", "-o", "{out}.uscope", "--no-progress"}},
    {"convert -> .pccx", kJsonl, {"convert", "{in}", "-o", "{out}.pccx", "--no-progress"}},
    {"convert -> .jsonl", kUscope | kPccx | kJsonl, {"convert", "{in}", "-o", "{out}.jsonl", "--no-progress"}},
    {"convert -> .jsonl.gz", kUscope | kPccx | kJsonl, {"convert", "{in}", "-o", "{out}.jsonl.gz", "--no-progress"}},
};

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "mutation_test: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<uint8_t> read_file(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) die("cannot read " + p.string());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_file(const fs::path &p, const std::vector<uint8_t> &b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!f) die("cannot write " + p.string());
}
// FNV-1a 64 of the file's bytes, and its size: "unchanged" means both equal.
std::pair<uint64_t, uint64_t> checksum(const fs::path &p) {
  const auto b = read_file(p);
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  return {h, b.size()};
}

unsigned kind_of(const std::string &name) {
  auto ends = [&](const char *s) {
    const size_t n = std::strlen(s);
    return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
  };
  if (ends(".uscope")) return kUscope;
  if (ends(".pccx")) return kPccx;
  if (ends(".jsonl") || ends(".jsonl.gz")) return kJsonl;
  return 0;
}

// ── mutations (a fixed-seed mt19937_64; only its raw output is used, which
// the standard fixes, so the mutants are the same everywhere) ──
class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) { return n ? rng_() % n : 0; }

  std::vector<uint8_t> mutate(const std::vector<std::vector<uint8_t>> &pool, const std::vector<size_t> &same_kind,
                              std::string *how) {
    std::vector<uint8_t> b = pool[same_kind[below(same_kind.size())]];
    const unsigned steps = 1 + static_cast<unsigned>(below(3));
    for (unsigned s = 0; s < steps; ++s) {
      switch (below(7)) {
        case 0: {  // bit flips
          const unsigned n = 1 + static_cast<unsigned>(below(8));
          for (unsigned i = 0; i < n && !b.empty(); ++i) b[below(b.size())] ^= static_cast<uint8_t>(1u << below(8));
          *how += "flip ";
          break;
        }
        case 1: {  // byte overwrites, with interesting values
          static const uint8_t kInteresting[] = {0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE, '"', '{', '}', ',', '\n', '9'};
          const unsigned n = 1 + static_cast<unsigned>(below(16));
          for (unsigned i = 0; i < n && !b.empty(); ++i)
            b[below(b.size())] = below(2) ? kInteresting[below(sizeof kInteresting)] : static_cast<uint8_t>(rng_());
          *how += "overwrite ";
          break;
        }
        case 2: {  // a 4- or 8-byte field set to a boundary value
          static const uint64_t kValues[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFFull,
                                             0x7FFFFFFFFFFFFFFFull, 0x10000};
          const size_t w = below(2) ? 4 : 8;
          if (b.size() >= w) {
            const uint64_t v = kValues[below(sizeof kValues / sizeof kValues[0])];
            std::memcpy(b.data() + below(b.size() - w + 1), &v, w);
          }
          *how += "field ";
          break;
        }
        case 3:  // truncation
          b.resize(below(b.size() + 1));
          *how += "truncate ";
          break;
        case 4: {  // splice: a prefix of this file and a suffix of another (any kind)
          const auto &o = pool[below(pool.size())];
          const size_t p = below(b.size() + 1), q = below(o.size() + 1);
          b.resize(p);
          b.insert(b.end(), o.begin() + static_cast<std::ptrdiff_t>(q), o.end());
          *how += "splice ";
          break;
        }
        case 5: {  // delete a run
          if (b.empty()) break;
          const size_t p = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - p, 256));
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(p), b.begin() + static_cast<std::ptrdiff_t>(p + n));
          *how += "delete ";
          break;
        }
        default: {  // duplicate a run in place
          if (b.empty()) break;
          const size_t p = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - p, 256));
          const std::vector<uint8_t> run(b.begin() + static_cast<std::ptrdiff_t>(p),
                                         b.begin() + static_cast<std::ptrdiff_t>(p + n));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), run.begin(), run.end());
          *how += "duplicate ";
          break;
        }
      }
    }
    return b;
  }

 private:
  std::mt19937_64 rng_;
};

struct Job {
  size_t cmd;
  fs::path in;
};
struct Running {
  pid_t pid;
  size_t job;
  std::chrono::steady_clock::time_point start;
  fs::path out_dir, err_file;
  std::pair<uint64_t, uint64_t> sum;
  bool killed = false;
};
struct Counts {
  uint64_t runs = 0, exit0 = 0, exit1 = 0, exit2 = 0, failures = 0;
  double seconds = 0;  // wall time of its runs, summed
};

// Runs `program args` with stdout to /dev/null and stderr to err_file.
pid_t spawn(const std::string &program, const std::vector<std::string> &args, const fs::path &err_file) {
  std::vector<char *> argv;
  std::vector<std::string> all{program};
  all.insert(all.end(), args.begin(), args.end());
  for (auto &a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) die("fork failed");
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDWR);
    const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null_fd < 0 || err < 0) _exit(126);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(err, 2);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

bool sanitizer_report(const fs::path &err_file) {
  const auto b = read_file(err_file);
  const std::string s(b.begin(), b.end());
  return s.find("Sanitizer") != std::string::npos || s.find("runtime error:") != std::string::npos;
}

}  // namespace

int main(int argc, char **argv) {
  std::string uscope, example;
  uint64_t seed = 20261125;
  size_t per_kind = 500, jobs = 2;
  double timeout_s = 10;
  std::vector<fs::path> sources;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--uscope") uscope = value();
    else if (a == "--example") example = value();
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--per-kind") per_kind = std::stoul(value());
    else if (a == "--jobs") jobs = std::max<size_t>(1, std::stoul(value()));
    else if (a == "--timeout") timeout_s = std::stod(value());
    else sources.emplace_back(a);
  }
  if (uscope.empty()) die("--uscope BIN is required");

  const char *td = std::getenv("TMPDIR");
  std::string t = std::string(td && *td ? td : "/tmp") + "/uscope_mutation.XXXXXX";
  if (!mkdtemp(t.data())) die("mkdtemp failed");
  const fs::path work(t);
  fs::create_directories(work / "gen");
  fs::create_directories(work / "in");
  fs::create_directories(work / "run");

  // Source files, by kind, sorted (the order fixes the mutants).
  std::vector<fs::path> files;
  for (const auto &s : sources) {
    std::error_code ec;
    if (fs::is_directory(s, ec)) {
      for (const auto &e : fs::directory_iterator(s))
        if (e.is_regular_file() && kind_of(e.path().filename().string())) files.push_back(e.path());
    } else if (fs::is_regular_file(s, ec)) {
      if (kind_of(s.filename().string())) files.push_back(s);
    } else {
      die(s.string() + " is neither a file nor a directory");
    }
  }
  std::sort(files.begin(), files.end());
  // Generated sources: the example program's trace, and what convert makes
  // of each JSONL source (.uscope and .pccx, the NPU paths of the readers).
  auto run_quiet = [&](const std::string &prog, const std::vector<std::string> &args) {
    const pid_t pid = spawn(prog, args, work / "gen" / "stderr");
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
  };
  if (!example.empty()) {
    if (!run_quiet(example, {(work / "gen" / "example.uscope").string()})) die("could not run " + example);
    files.push_back(work / "gen" / "example.uscope");
  }
  const size_t nsrc = files.size();
  for (size_t i = 0; i < nsrc; ++i) {
    if (kind_of(files[i].filename().string()) != kJsonl) continue;
    const std::string base = (work / "gen" / ("converted" + std::to_string(i))).string();
    // A source that is itself broken (a truncated .gz) converts to nothing.
    for (const char *ext : {".uscope", ".pccx"})
      if (run_quiet(uscope, {"convert", files[i].string(), "-o", base + ext, "--no-progress"}))
        files.push_back(base + ext);
  }
  std::vector<std::vector<uint8_t>> pool;
  std::map<unsigned, std::vector<size_t>> by_kind;
  for (const auto &f : files) {
    by_kind[kind_of(f.filename().string())].push_back(pool.size());
    pool.push_back(read_file(f));
  }
  std::printf("mutation_test: seed %" PRIu64 ", %zu source files (%zu .uscope, %zu .pccx, %zu JSONL), %zu mutants per kind\n",
              seed, files.size(), by_kind[kUscope].size(), by_kind[kPccx].size(), by_kind[kJsonl].size(), per_kind);
  for (unsigned k : {kUscope, kPccx, kJsonl})
    if (by_kind[k].empty()) die(std::string("no source file of kind ") + kExt[k]);

  // The mutants, per kind, written once.
  Mutator m(seed);
  std::map<unsigned, std::vector<fs::path>> mutants;
  for (unsigned k : {kUscope, kPccx, kJsonl}) {
    for (size_t i = 0; i < per_kind; ++i) {
      std::string how;
      const auto b = m.mutate(pool, by_kind[k], &how);
      char name[32];
      std::snprintf(name, sizeof name, "m%05zu", i);
      const fs::path p = work / "in" / (std::string(name) + kExt[k]);
      write_file(p, b);
      mutants[k].push_back(p);
    }
  }

  // Each command runs on `per_kind` inputs, taken in turn from the kinds it
  // accepts (info: a .uscope mutant, then a .pccx one, ...).
  std::vector<Job> todo;
  for (size_t c = 0; c < kCommands.size(); ++c) {
    std::vector<unsigned> kinds;
    for (unsigned k : {kUscope, kPccx, kJsonl})
      if (kCommands[c].kinds & k) kinds.push_back(k);
    for (size_t i = 0; i < per_kind; ++i) todo.push_back({c, mutants[kinds[i % kinds.size()]][i]});
  }

  std::vector<Counts> counts(kCommands.size());
  std::vector<std::string> failures;
  std::vector<Running> running;
  size_t next = 0, slot_id = 0;
  const auto limit = std::chrono::duration<double>(timeout_s);
  const auto t0 = std::chrono::steady_clock::now();
  while (next < todo.size() || !running.empty()) {
    while (running.size() < jobs && next < todo.size()) {
      const Job &j = todo[next];
      Running r;
      r.job = next++;
      r.out_dir = work / "run" / std::to_string(slot_id);
      r.err_file = work / "run" / (std::to_string(slot_id) + ".stderr");
      ++slot_id;
      fs::create_directories(r.out_dir);
      std::vector<std::string> args;
      for (const auto &a : kCommands[j.cmd].args) {
        std::string s = a;
        if (s == "{in}") s = j.in.string();
        else if (s.rfind("{out}", 0) == 0) s = (r.out_dir / "out").string() + s.substr(5);
        args.push_back(s);
      }
      r.sum = checksum(j.in);
      r.start = std::chrono::steady_clock::now();
      r.pid = spawn(uscope, args, r.err_file);
      running.push_back(std::move(r));
    }
    bool reaped = false;
    for (size_t i = 0; i < running.size();) {
      Running &r = running[i];
      int st = 0;
      const pid_t w = waitpid(r.pid, &st, WNOHANG);
      if (w == 0) {
        if (!r.killed && std::chrono::steady_clock::now() - r.start > limit) {
          kill(r.pid, SIGKILL);
          r.killed = true;
        }
        ++i;
        continue;
      }
      reaped = true;
      const Job &j = todo[r.job];
      Counts &c = counts[j.cmd];
      ++c.runs;
      c.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
      std::string why;
      if (r.killed) why = "hang (killed after the timeout)";
      else if (WIFSIGNALED(st)) why = std::string("signal ") + strsignal(WTERMSIG(st));
      else if (WEXITSTATUS(st) > 2) why = "exit status " + std::to_string(WEXITSTATUS(st));
      else if (sanitizer_report(r.err_file)) why = "sanitizer report on stderr";
      else if (checksum(j.in) != r.sum) why = "the input file changed";
      if (WIFEXITED(st) && !r.killed) {
        const int e = WEXITSTATUS(st);
        if (e == 0) ++c.exit0;
        else if (e == 1) ++c.exit1;
        else if (e == 2) ++c.exit2;
      }
      if (!why.empty()) {
        ++c.failures;
        failures.push_back(std::string(kCommands[j.cmd].name) + " on " + j.in.string() + ": " + why +
                           " (stderr: " + r.err_file.string() + ")");
      } else {
        std::error_code ec;
        fs::remove_all(r.out_dir, ec);
        fs::remove(r.err_file, ec);
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("%-24s %6s %6s %6s %6s %8s %9s\n", "command", "runs", "exit0", "exit1", "exit2", "failures", "ms/run");
  uint64_t total = 0, failed = 0;
  for (size_t c = 0; c < kCommands.size(); ++c) {
    const Counts &n = counts[c];
    std::printf("%-24s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %9.1f\n", kCommands[c].name,
                n.runs, n.exit0, n.exit1, n.exit2, n.failures, n.runs ? 1000 * n.seconds / n.runs : 0.0);
    total += n.runs;
    failed += n.failures;
  }
  std::printf("mutation_test: %" PRIu64 " runs in %.1f s, %" PRIu64 " failures (seed %" PRIu64 ")\n", total, secs,
              failed, seed);
  for (const auto &f : failures) std::printf("FAIL %s\n", f.c_str());
  if (failed) {
    std::printf("mutation_test: inputs and stderr kept in %s\n", work.c_str());
    return 1;
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  std::printf("mutation_test: passed\n");
  return 0;
}
