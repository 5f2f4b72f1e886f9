#include "io/replace_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.hpp"
#include "io/input_file.hpp"

namespace uscope {

namespace {

std::string dir_of(const std::string &p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string base_of(const std::string &p) {
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// path with its symbolic links followed (as many levels as the kernel
// allows), the link target possibly dangling: the file the writer replaces.
std::string follow_links(const std::string &path) {
  std::string p = path;
  for (int depth = 0; depth < 40; ++depth) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::vector<char> buf(PATH_MAX + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return p;
    const std::string link(buf.data(), static_cast<size_t>(n));
    p = link[0] == '/' ? link : dir_of(p) + "/" + link;
  }
  fail(USCOPE_ERR_IO, "cannot create %s: too many levels of symbolic links", path.c_str());
}

// Six characters for a temporary name: O_EXCL makes a collision a retry,
// so this only has to differ between processes and calls.
std::string temp_suffix() {
  static std::atomic<uint64_t> counter{0};
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec)) ^ (uint64_t(::getpid()) << 40) ^
               (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;  // splitmix64 finaliser
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(6, 'x');
  for (char &c : s) {
    c = kChars[x % 62];
    x /= 62;
  }
  return s;
}

}  // namespace

ReplacingFile::~ReplacingFile() {
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

int ReplacingFile::create(const std::string &path, int access) {
  path_ = path;
  target_ = follow_links(path);
  // Renaming over a directory or a device node would replace it, and the
  // writers seek back to patch headers: only a regular file will do.
  struct stat st {};
  bool exists = ::stat(target_.c_str(), &st) == 0;
  // A link whose text names no file, or another file than the one it opens:
  // a /proc/PID/fd/N (or /dev/fd/N) entry for a memfd or a deleted file
  // reads "/memfd:NAME (deleted)". Renaming onto that text would create a
  // stray file of that name (in /) and leave the caller's file empty; such a
  // file has no name to replace, so it is written in place, truncated.
  struct stat pst {};
  if (target_ != path && ::stat(path.c_str(), &pst) == 0 &&
      (!exists || pst.st_dev != st.st_dev || pst.st_ino != st.st_ino)) {
    st = pst;
    exists = true;
    in_place_ = true;
  }
  if (exists && !S_ISREG(st.st_mode))
    fail(USCOPE_ERR_IO, "cannot create %s: it is %s, not a regular file", path.c_str(), file_kind(st.st_mode));
  if (in_place_) {
    const int fd = ::open(path.c_str(), access | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(USCOPE_ERR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
    return fd;
  }
  const std::string prefix = dir_of(target_) + "/." + base_of(target_) + ".";
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    const std::string name = prefix + temp_suffix();
    fd = ::open(name.c_str(), access | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      temp_ = name;
    } else if (errno != EEXIST || attempt == 100) {
      fail(USCOPE_ERR_IO, "cannot create %s: %s (creating its temporary file %s)", path.c_str(),
           std::strerror(errno), name.c_str());
    }
  }
  // A re-run keeps the permissions of the file it replaces (O_TRUNC did).
  if (exists) (void)::fchmod(fd, st.st_mode & 07777);
  return fd;
}

void ReplacingFile::publish(bool sync_dir) {
  if (in_place_) return;  // no name to rename onto, no directory entry to sync
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    fail(USCOPE_ERR_IO, "cannot rename %s onto %s: %s", temp_.c_str(), path_.c_str(), std::strerror(errno));
  temp_.clear();
  if (sync_dir) {
    const int dfd = ::open(dir_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      const int r = ::fsync(dfd);
      const int err = errno;
      ::close(dfd);
      if (r != 0) fail(USCOPE_ERR_IO, "fsync of the directory of %s: %s", path_.c_str(), std::strerror(err));
    }
  }
}

}  // namespace uscope
