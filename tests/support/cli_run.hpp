// Test support: run the uscope command-line tool (USCOPE_CLI, set by
// tests/CMakeLists.txt) as a separate program and capture what it prints.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace uscope::test {

struct CliRun {
  int exit_code;
  std::string out;  // stdout, plus stderr when merged
};

// Runs `uscope <args>`; stderr is merged into out when asked, else dropped.
inline CliRun run_cli(const std::string &args, bool merge_stderr) {
  const std::string cmd = std::string(USCOPE_CLI) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
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

}  // namespace uscope::test
