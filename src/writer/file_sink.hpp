// Append-mostly file output for the writer, with the commit order of spec
// §2.2 / COMPAT 12: segment data, (sync), then tail_offset, then num_segments.
// Used only off the simulation thread (the encoder thread, open and close).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uscope {

enum class Durability : uint8_t { Flush = 0, None = 1, Fdatasync = 2 };

class FileSink {
 public:
  FileSink() = default;
  ~FileSink();
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;

  // Create or truncate path. Throws Error(IO).
  void open(const std::string &path, Durability d);
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
  std::string path_;
};

}  // namespace uscope
