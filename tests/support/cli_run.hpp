// Test support: run the uscope command-line tool (USCOPE_CLI, set by
// tests/CMakeLists.txt) as a separate program and capture what it prints.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace uscope::test {

struct CliRun {
  int exit_code;
  std::string out;  // stdout, plus stderr when merged
};

// Runs `uscope <args> <redirect>` (a shell redirection of stderr).
inline CliRun run_cli_redirected(const std::string &args, const std::string &redirect) {
  const std::string cmd = std::string(USCOPE_CLI) + " " + args + " " + redirect;
  CliRun r{-1, {}};
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Runs `uscope <args>`; stderr is merged into out when asked, else dropped.
inline CliRun run_cli(const std::string &args, bool merge_stderr) {
  return run_cli_redirected(args, merge_stderr ? "2>&1" : "2>/dev/null");
}

// `uscope <args>` with stdout and stderr kept apart (stderr through a file
// of err_dir): output that must stay valid JSON whatever the warnings say.
struct CliSplit {
  int exit_code = -1;
  std::string out, err;
};
inline CliSplit run_cli_split(const std::string &args, const std::string &err_dir) {
  const std::string path = err_dir + "/uscope_stderr.txt";
  const CliRun r = run_cli_redirected(args, "2>" + path);
  CliSplit s{r.exit_code, r.out, {}};
  if (FILE *f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.err.append(buf, n);
    std::fclose(f);
  }
  std::remove(path.c_str());
  return s;
}

// Runs `uscope <args>` with its stderr on a pseudo-terminal (stdout to
// /dev/null), as a user at a terminal sees it: what the program draws only
// on a terminal (progress bars) is in out. The pty turns "\n" into "\r\n".
inline CliRun run_cli_on_pty(const std::vector<std::string> &args) {
  CliRun r{-1, {}};
  const int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) return r;
  const std::string slave = ptsname(m);
  std::vector<std::string> argv_s = {"uscope"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (auto &a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int s = open(slave.c_str(), O_RDWR | O_NOCTTY);
    const int null = open("/dev/null", O_WRONLY);
    if (s < 0 || null < 0 || dup2(s, 2) < 0 || dup2(null, 1) < 0) _exit(126);
    execv(USCOPE_CLI, argv.data());
    _exit(127);
  }
  char buf[4096];
  for (;;) {  // EIO once the child has exited and the slave is closed
    const ssize_t n = read(m, buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  close(m);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace uscope::test
