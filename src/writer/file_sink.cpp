#include "writer/file_sink.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "format/error.hpp"
#include "format/wire.hpp"
#include "reader/input_file.hpp"

namespace uscope {

namespace {
constexpr size_t kBufferLimit = 1u << 20;  // Durability::None batches up to 1 MiB
}

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

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  // Never published (open failed part-way): leave path as it was, with no
  // temporary beside it.
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void FileSink::open(const std::string &path, Durability d) {
  path_ = path;
  durability_ = d;
  target_ = follow_links(path);
  // The writer seeks back to patch the header: only a regular file will do
  // (and renaming over a directory or a device node would replace it).
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
    fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) fail(USCOPE_ERR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
    size_ = 0;
    return;
  }
  const std::string prefix = dir_of(target_) + "/." + base_of(target_) + ".";
  for (int attempt = 0; fd_ < 0; ++attempt) {
    const std::string name = prefix + temp_suffix();
    fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      temp_ = name;
    } else if (errno != EEXIST || attempt == 100) {
      fail(USCOPE_ERR_IO, "cannot create %s: %s (creating its temporary file %s)", path.c_str(),
           std::strerror(errno), name.c_str());
    }
  }
  // A re-run keeps the permissions of the file it replaces (O_TRUNC did).
  if (exists) (void)::fchmod(fd_, st.st_mode & 07777);
  size_ = 0;
}

void FileSink::publish() {
  flush();
  if (durability_ == Durability::Fdatasync) sync();
  if (in_place_) return;  // no name to rename onto, no directory entry to sync
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    fail(USCOPE_ERR_IO, "cannot rename %s onto %s: %s", temp_.c_str(), path_.c_str(), std::strerror(errno));
  temp_.clear();
  if (durability_ == Durability::Fdatasync) {
    // The rename itself survives a power loss only once the directory is synced.
    const int dfd = ::open(dir_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      const int r = ::fsync(dfd);
      const int err = errno;
      ::close(dfd);
      if (r != 0)
        fail(USCOPE_ERR_IO, "fsync of the directory of %s: %s", path_.c_str(), std::strerror(err));
    }
  }
}

void FileSink::write_all(const uint8_t *data, size_t n) {
  while (n > 0) {
    const ssize_t r = ::write(fd_, data, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(USCOPE_ERR_IO, "writing %s: %s", path_.c_str(), std::strerror(errno));
    }
    data += r;
    n -= static_cast<size_t>(r);
  }
}

void FileSink::pwrite_all(uint64_t off, const uint8_t *data, size_t n) {
  while (n > 0) {
    const ssize_t r = ::pwrite(fd_, data, n, static_cast<off_t>(off));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(USCOPE_ERR_IO, "writing %s at offset %llu: %s", path_.c_str(),
           static_cast<unsigned long long>(off), std::strerror(errno));
    }
    data += r;
    off += static_cast<uint64_t>(r);
    n -= static_cast<size_t>(r);
  }
}

uint64_t FileSink::append(const uint8_t *data, size_t n) {
  const uint64_t off = size_;
  if (durability_ == Durability::None && buffer_.size() + n <= kBufferLimit) {
    buffer_.insert(buffer_.end(), data, data + n);
  } else {
    flush();
    write_all(data, n);
  }
  size_ += n;
  return off;
}

void FileSink::flush() {
  if (!buffer_.empty()) {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  // A commit deferred by Durability::None: its segment has now reached the OS.
  if (has_pending_) {
    has_pending_ = false;
    write_commit(pending_tail_, pending_count_);
  }
}

void FileSink::write_commit(uint64_t tail_offset, uint32_t num_segments) {
  uint8_t b[8];
  wire::put_u64(b, tail_offset);  // §2.2 step 3: the commit point
  pwrite_all(wire::kHdrOffTailOffset, b, 8);
  wire::put_u32(b, num_segments);  // §2.2 step 4: advisory
  pwrite_all(wire::kHdrOffNumSegments, b, 4);
}

void FileSink::sync() {
  flush();
  if (::fdatasync(fd_) != 0)
    fail(USCOPE_ERR_IO, "fdatasync %s: %s", path_.c_str(), std::strerror(errno));
}

void FileSink::commit_segment(uint64_t tail_offset, uint32_t num_segments) {
  // With Durability::None a commit waits until its segment's bytes have left
  // the buffer, so tail_offset never points at data the OS has not seen.
  if (durability_ == Durability::None) {
    pending_tail_ = tail_offset;
    pending_count_ = num_segments;
    has_pending_ = true;
    if (buffer_.empty()) flush();
    return;
  }
  if (durability_ == Durability::Fdatasync) sync(); else flush();
  write_commit(tail_offset, num_segments);
}

void FileSink::write_at(uint64_t offset, const uint8_t *data, size_t n) {
  flush();
  pwrite_all(offset, data, n);
}

void FileSink::close() {
  if (fd_ < 0) return;
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(USCOPE_ERR_IO, "closing %s: %s", path_.c_str(), std::strerror(errno));
}

}  // namespace uscope
