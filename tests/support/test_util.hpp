// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace uscope::test {

// The reference corpus (../shared/conformance/uscope). Tests that read from it
// fail when a file is missing; they never skip.
inline const std::string kCorpusDir = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/";

// A whole file as bytes ("" when it cannot be read), and a file made of s.
inline std::string read_all(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
inline void write_all(const std::string &path, const std::string &s) {
  std::ofstream f(path, std::ios::binary);
  f << s;
}

// The status of the uscope::Error that f throws; a test failure if it throws none.
template <class F>
uscope_status_t error_code(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.code();
  }
  ADD_FAILURE() << "expected a uscope::Error";
  return USCOPE_OK;
}

// A fresh directory under the test temp dir, removed with its files unless the
// test failed (then it is kept as evidence).
class TempDir {
 public:
  explicit TempDir(const char *prefix = "uscope") {
    std::string tmpl = (std::filesystem::path(testing::TempDir()) / prefix).string() + "_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path_ = buf.data();
    else ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  }
  ~TempDir() {
    if (path_.empty() || testing::Test::HasFailure()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }
  bool ok() const { return !path_.empty(); }

 private:
  std::string path_;
};

// A file-size limit for this process (RLIMIT_FSIZE, soft) with SIGXFSZ
// ignored, so that a write past it fails with EFBIG instead of killing the
// test: how the writer's IO errors on its background threads are made.
// Restores both on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ok_ = sigaction(SIGXFSZ, &ign, &old_action_) == 0 && getrlimit(RLIMIT_FSIZE, &saved_) == 0;
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    ok_ = ok_ && setrlimit(RLIMIT_FSIZE, &lim) == 0;
    if (!ok_) ADD_FAILURE() << "could not set a file-size limit";
  }
  ~FileSizeLimit() { release(); }
  // Back to the saved limit and signal action (idempotent).
  void release() {
    if (released_) return;
    released_ = true;
    setrlimit(RLIMIT_FSIZE, &saved_);
    sigaction(SIGXFSZ, &old_action_, nullptr);
  }
  bool ok() const { return ok_; }
  FileSizeLimit(const FileSizeLimit &) = delete;
  FileSizeLimit &operator=(const FileSizeLimit &) = delete;

 private:
  struct sigaction old_action_ {};
  rlimit saved_{};
  bool ok_ = false, released_ = false;
};

}  // namespace uscope::test
