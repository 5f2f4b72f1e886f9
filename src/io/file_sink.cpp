#include "io/file_sink.hpp"

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
#include "format/wire.hpp"
#include "io/input_file.hpp"

namespace uscope {

namespace {
constexpr size_t kBufferLimit = 1u << 20;  // Durability::None batches up to 1 MiB
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  // A temporary never published (open failed part-way) is removed by
  // replace_: path is left as it was.
}

void FileSink::open(const std::string &path, Durability d) {
  path_ = path;
  durability_ = d;
  fd_ = replace_.create(path, O_WRONLY);
  size_ = 0;
}

void FileSink::publish() {
  flush();
  if (durability_ == Durability::Fdatasync) sync();
  // The rename itself survives a power loss only once the directory is synced.
  replace_.publish(durability_ == Durability::Fdatasync);
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
