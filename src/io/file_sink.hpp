// Append-mostly file output for the writer, with the commit order of spec
// §2.2 / COMPAT 12: segment data, (sync), then tail_offset, then num_segments.
// Used only off the simulation thread (the encoder thread, open and close).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/replace_file.hpp"

namespace uscope {

enum class Durability : uint8_t { Flush = 0, None = 1, Fdatasync = 2 };

class FileSink {
 public:
  FileSink() = default;
  ~FileSink();
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;

  // Start a new file for path: a temporary file beside the final one
  // (".NAME.XXXXXX" in the same directory, created with O_EXCL), which
  // publish() renames onto path. Until then path is untouched: absent, or
  // the previous file, which readers that have it open keep reading (a new
  // inode, never a truncation under them). A symbolic link is followed and
  // the file is written beside its target, so the link keeps working. An
  // existing path that is not a regular file (a directory, a FIFO, a device)
  // is refused. A link that names no file (a /proc/PID/fd/N entry of a
  // memfd or of a deleted file) is written in place, truncated: that file
  // has no name to put a temporary beside. Throws Error(IO).
  void open(const std::string &path, Durability d);
  // Rename the temporary file onto path, after pushing what was appended so
  // far to the OS (and fdatasync'ing it, and the directory after the rename,
  // with Durability::Fdatasync). Throws Error(IO); the temporary is then
  // removed by the destructor.
  void publish();
  // Append bytes at the end of the file; returns their file offset. With
  // Durability::None the bytes may stay in a 1 MiB user-space buffer.
  uint64_t append(const uint8_t *data, size_t n);
  uint64_t append(const std::vector<uint8_t> &v) { return append(v.data(), v.size()); }
  // Make a finished segment visible: push buffered bytes to the OS when the
  // policy asks for it, fdatasync when it asks for that, then write
  // tail_offset and num_segments into the header in that order.
  void commit_segment(uint64_t tail_offset, uint32_t num_segments);
  // Write bytes at a fixed offset (header fields). Flushes the buffer first.
  void write_at(uint64_t offset, const uint8_t *data, size_t n);
  void flush();     // push the user-space buffer to the OS
  void sync();      // fdatasync
  void close();     // flush and close; throws Error(IO) if that fails
  uint64_t size() const { return size_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  void write_all(const uint8_t *data, size_t n);
  void pwrite_all(uint64_t off, const uint8_t *data, size_t n);
  void write_commit(uint64_t tail_offset, uint32_t num_segments);
  int fd_ = -1;
  Durability durability_ = Durability::Flush;
  uint64_t size_ = 0;      // logical end of file, buffered bytes included
  std::vector<uint8_t> buffer_;
  bool has_pending_ = false;
  uint64_t pending_tail_ = 0;
  uint32_t pending_count_ = 0;
  std::string path_;    // as the caller named it, for messages
  ReplacingFile replace_;  // the temporary file and its rename (replace_file.hpp)
};

}  // namespace uscope
