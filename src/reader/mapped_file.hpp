// A read-only memory map of a whole file. Readers check every offset and
// length against size() before touching data().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace uscope {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  // Map path. Throws Error(IO). An empty file maps to size 0.
  void open(const std::string &path);
  // Map the file again if it has grown (live tailing). Returns true when it did.
  bool refresh();
  // Unmap the pages of [off, off + len) from this process (MADV_DONTNEED):
  // the data stays in the page cache and is mapped again on the next access,
  // so a reader that scans the file keeps only what it is working on
  // resident. A hint: failures are ignored.
  void release(uint64_t off, uint64_t len) const;
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void unmap();
  int fd_ = -1;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace uscope
