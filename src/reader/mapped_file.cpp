#include "reader/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/error.hpp"

namespace uscope {

MappedFile::~MappedFile() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::unmap() {
  if (data_ && size_) ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::open(const std::string &path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(USCOPE_ERR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
  refresh();
}

bool MappedFile::refresh() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(USCOPE_ERR_IO, "stat %s: %s", path_.c_str(), std::strerror(errno));
  const auto size = static_cast<size_t>(st.st_size);
  if (size == size_ && data_) return false;
  unmap();
  if (size == 0) return true;
  void *p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) fail(USCOPE_ERR_IO, "cannot map %s: %s", path_.c_str(), std::strerror(errno));
  data_ = static_cast<const uint8_t *>(p);
  size_ = size;
  return true;
}

void MappedFile::release(uint64_t off, uint64_t len) const {
  if (!data_ || off >= size_) return;
  if (len > size_ - off) len = size_ - off;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // Whole pages only; a page shared with a neighbour is dropped too, which is
  // harmless for a read-only shared mapping (it is simply mapped again).
  const uint64_t start = off & ~(page - 1), end = off + len;
  if (end <= start) return;
  ::madvise(const_cast<uint8_t *>(data_) + start, end - start, MADV_DONTNEED);
}

}  // namespace uscope
