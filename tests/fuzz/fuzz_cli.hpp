// Shared by the CLI fuzz targets (fuzz_cli_uscope.cpp, fuzz_cli_pccx.cpp,
// fuzz_cli_jsonl.cpp): they run the `uscope` command line in-process, through
// uscope_cli_main (tools/cli_main.hpp), on the fuzzed input written to a file
// once per input, so that the commands' own code (argument handling, output
// formatting, the converters' file handling) is fuzzed, not only the readers.
//
// The contract checked on every run: the command returns 0 or 1 (2, a usage
// error, is a bug here since every argument list is valid); no crash, no
// sanitizer report, no leak, no hang. stdout goes to /dev/null for the call
// (restored after, so the replay's own messages stay visible); stderr is left
// alone so a sanitizer report is seen (libFuzzer's -close_fd_mask=2 silences
// the commands' error messages in .ci/fuzz.sh).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_main.hpp"

namespace fuzz_cli {

class Env {
 public:
  Env() {
    const char *tmp = std::getenv("TMPDIR");
    std::string t = std::string(tmp && *tmp ? tmp : "/tmp") + "/uscope_fuzz_cli.XXXXXX";
    if (!mkdtemp(t.data())) {
      std::perror("fuzz_cli: mkdtemp");
      std::abort();
    }
    dir_ = t;
    null_fd_ = open("/dev/null", O_WRONLY | O_CLOEXEC);
    saved_stdout_ = dup(1);
    if (null_fd_ < 0 || saved_stdout_ < 0) std::abort();
  }
  // The scratch directory goes with everything in it (an export to
  // hpctoolkit makes a directory).
  ~Env() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Env(const Env &) = delete;
  Env &operator=(const Env &) = delete;

  // A file name in the scratch directory (remembered, removed at exit).
  std::string path(const char *name) {
    std::string p = dir_ + "/" + name;
    for (const auto &f : made_)
      if (f == p) return p;
    made_.push_back(p);
    return p;
  }
  // Writes the input to a fresh file `name` (the extension picks the format).
  std::string write(const char *name, const uint8_t *data, size_t size) {
    const std::string p = path(name);
    const int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) std::abort();
    for (size_t off = 0; off < size;) {
      const ssize_t n = ::write(fd, data + off, size - off);
      if (n <= 0) std::abort();
      off += static_cast<size_t>(n);
    }
    close(fd);
    return p;
  }
  // Runs `uscope args...`; returns its exit status: 0 or 1, and 2 only for
  // `uscope check` (a file not readable as a trace; elsewhere 2 is a usage
  // error, a bug here).
  int run(std::vector<std::string> args) {
    const bool is_check = !args.empty() && args[0] == "check";
    args.insert(args.begin(), "uscope");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    dup2(null_fd_, 1);
    const int rc = uscope_cli_main(static_cast<int>(args.size()), argv.data());
    std::fflush(stdout);
    dup2(saved_stdout_, 1);
    if (rc != 0 && rc != 1 && !(is_check && rc == 2)) {
      std::string cmd;
      for (const auto &a : args) cmd += " " + a;
      std::fprintf(stderr, "fuzz_cli: exit status %d from%s\n", rc, cmd.c_str());
      std::abort();
    }
    return rc;
  }

 private:
  std::string dir_;
  std::vector<std::string> made_;
  int null_fd_ = -1, saved_stdout_ = -1;
};

inline Env &env() {
  static Env e;
  return e;
}

// The report and .uscope reading commands, on a .uscope file.
inline void uscope_commands(const std::string &f) {
  Env &e = env();
  e.run({"info", f});
  e.run({"info", f, "--json"});
  e.run({"dump", f, "--json"});
  e.run({"state", f, "--time", "0"});
  e.run({"state", f, "--time", "1000000", "--json"});
  e.run({"state", f, "--cycle", "7", "--json"});
  e.run({"events", f, "--from", "0", "--to", "18446744073709551615"});
  e.run({"events", f, "--from", "500", "--to", "50000", "--json"});
  e.run({"summary", f});
  e.run({"summary", f, "--json"});
  e.run({"summary", f, "--json", "--strict"});
  e.run({"check", f, "--json"});
  e.run({"check", f, "--strict"});
  e.run({"npu-report", f});
  e.run({"npu-report", f, "--json"});
  // The analysis commands, over small ranges so that a fuzzed trace claiming
  // a huge cycle count stays fast (ranges are cut at the trace's last cycle).
  e.run({"timeline", f, "--entity", "0", "--range", "0:16", "--json"});
  e.run({"timeline", f, "--entity", "1", "--cycle", "3"});
  e.run({"counters", f, "--range", "0:16", "--json"});
  e.run({"counters", f, "--range", "0:16", "--buckets", "4"});
  e.run({"buffers", f, "--cycle", "3", "--json"});
  e.run({"analyze", f, "--range", "0:16", "--json"});
  e.run({"analyze", f, "--range", "2:9", "--format", "csv"});
  e.run({"noc-latency", f, "--range", "0:16", "--json"});
  e.run({"noc-latency", f, "--range", "0:16", "--format", "csv"});
}

// The commands that take a .pccx file (and the .uscope-only ones, which
// must refuse it cleanly).
inline void pccx_commands(const std::string &f) {
  Env &e = env();
  e.run({"info", f});
  e.run({"info", f, "--json"});
  e.run({"npu-report", f});
  e.run({"npu-report", f, "--json"});
  e.run({"dump", f, "--json"});
  e.run({"summary", f});
  e.run({"check", f, "--json"});
  e.run({"analyze", f, "--range", "0:16"});
}

}  // namespace fuzz_cli
