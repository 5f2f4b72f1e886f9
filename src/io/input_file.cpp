#include "io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace uscope {

std::string describe_content(const uint8_t *d, size_t n) {
  if (n == 0) return "an empty file (0 bytes)";
  // The magics of the formats this library reads (uscope-spec §2,
  // pccx-format "fixed header").
  if (n >= 4 && std::memcmp(d, "uSCP", 4) == 0) return "a µScope trace (magic \"uSCP\")";
  if (n >= 4 && std::memcmp(d, "PCCX", 4) == 0) return "a pccx container (magic \"PCCX\")";
  // Text: no control bytes other than whitespace in the first bytes (UTF-8
  // bytes >= 0x80 pass; this is a description, not a validation).
  const size_t k = n < 256 ? n : 256;
  bool text = true;
  size_t first = k;
  for (size_t i = 0; i < k; ++i) {
    const uint8_t c = d[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f') {
      text = false;
      break;
    }
    if (first == k && c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != '\f') first = i;
  }
  if (text && first < k && (d[first] == '{' || d[first] == '[')) return "JSON text";
  if (text) return "text";
  char buf[64];
  int m = std::snprintf(buf, sizeof buf, "binary data (first bytes");
  for (size_t i = 0; i < n && i < 4; ++i) m += std::snprintf(buf + m, sizeof buf - m, " %02x", d[i]);
  std::snprintf(buf + m, sizeof buf - m, ")");
  return buf;
}

const char *file_kind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    case S_IFREG: return "a regular file";
    default: return "not a regular file";
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::open(const std::string &path, const char *expected) {
  path_ = path;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever. It is cleared below, once fstat has shown a regular file.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0)
    fail(USCOPE_ERR_IO, "cannot open %s (expected %s): %s", path.c_str(), expected, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(USCOPE_ERR_IO, "stat %s: %s", path.c_str(), std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    fail(USCOPE_ERR_IO, "%s is %s, not %s (a regular file)", path.c_str(), file_kind(st.st_mode), expected);
  const int fl = ::fcntl(fd_, F_GETFL);
  if (fl >= 0) ::fcntl(fd_, F_SETFL, fl & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

uint64_t InputFile::refresh() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(USCOPE_ERR_IO, "stat %s: %s", path_.c_str(), std::strerror(errno));
  size_ = static_cast<uint64_t>(st.st_size);
  return size_;
}

size_t InputFile::read_some(uint64_t off, void *dst, size_t n) const {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, static_cast<uint8_t *>(dst) + done, n - done, static_cast<off_t>(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(USCOPE_ERR_IO, "reading %s at offset %llu: %s", path_.c_str(),
           static_cast<unsigned long long>(off + done), std::strerror(errno));
    }
    if (r == 0) break;  // end of file
    done += static_cast<size_t>(r);
  }
  return done;
}

void InputFile::read(uint64_t off, void *dst, size_t n, const char *what, size_t index) const {
  if (__builtin_expect(read_some(off, dst, n) == n, 1)) return;
  struct stat st {};
  const unsigned long long now = ::fstat(fd_, &st) == 0 ? static_cast<unsigned long long>(st.st_size) : 0;
  const std::string name = index == SIZE_MAX ? std::string(what) : format_message("%s %zu", what, index);
  throw FileChanged(USCOPE_ERR_TRUNCATED,
                    format_message("%s shrank under the reader: %s at offset %llu needs %zu bytes, the file now has %llu",
                                   path_.c_str(), name.c_str(), static_cast<unsigned long long>(off), n, now));
}

}  // namespace uscope
