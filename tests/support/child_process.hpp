// Launch the test child (USCOPE_TEST_HELPER, tests/e2e/child.c) the way the
// crash and live-reader tests need it: its stdout is a pipe to us, its stdin a
// socket (a token sent to a dead child is an error via MSG_NOSIGNAL, never a
// SIGPIPE for the test binary), and it dies with the test binary.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace uscope::test {

struct SpawnedChild {
  pid_t pid = -1;
  int out = -1;  // read the child's stdout
  int in = -1;   // send tokens to the child's stdin
};

// fork + exec helper with args. fsize_limit > 0 runs it under RLIMIT_FSIZE
// with SIGXFSZ ignored, so writes past the limit fail with EFBIG. A missing
// helper binary is a test failure, never a skip.
inline bool spawn_child(const char *helper, const std::vector<std::string> &args, SpawnedChild *c,
                        rlim_t fsize_limit = 0) {
  if (::access(helper, X_OK) != 0) {
    ADD_FAILURE() << "the helper binary " << helper << " is missing: " << std::strerror(errno);
    return false;
  }
  std::vector<std::string> all{helper};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (auto &a : all) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  int out[2], in[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return false;
  }
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    ADD_FAILURE() << "socketpair: " << std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    for (int fd : {out[0], out[1], in[0], in[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test binary
    if (::dup2(out[1], STDOUT_FILENO) < 0 || ::dup2(in[1], STDIN_FILENO) < 0) ::_exit(126);
    if (fsize_limit) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = SIG_IGN;
      ::sigaction(SIGXFSZ, &sa, nullptr);
      struct rlimit rl;
      rl.rlim_cur = fsize_limit;
      rl.rlim_max = fsize_limit;
      if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(125);
    }
    ::execv(helper, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(in[1]);
  c->pid = pid;
  c->out = out[0];
  c->in = in[0];
  return true;
}

}  // namespace uscope::test
