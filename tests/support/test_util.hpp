// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

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

}  // namespace uscope::test
