// A file a reader reads with checked pread() calls into buffers the reader
// owns, never through a memory map.
//
// Why not mmap: a trace is routinely truncated or rewritten while a reader
// has it open (a simulation re-run, `> file`, a writer of another tool that
// truncates in place). A shared mapping of pages past the new end raises
// SIGBUS on access, and no size check before the access closes that race
// (the truncation can land between the check and the load). pread() on a
// shrunk file returns fewer bytes instead, which becomes an error:
// USCOPE_ERR_TRUNCATED, "FILE shrank under the reader: ...".
//
// Memory: the reader copies only what one query needs (one segment's
// checkpoint and compressed deltas) into a buffer it reuses, so resident
// memory stays about one segment whatever the file size; the file's pages
// stay in the page cache, shared with other readers, as with a map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"

namespace uscope {

// What a file's first bytes look like, for "expected X, found Y" messages:
// "a µScope trace (magic "uSCP")", "a pccx container (magic "PCCX")", "JSON
// text", "text", "binary data (first bytes 1f 8b 08 00)", "an empty file
// (0 bytes)".
std::string describe_content(const uint8_t *data, size_t n);

// The kind of a non-regular file for messages: "a directory", "a FIFO", ...
const char *file_kind(unsigned mode);

// What InputFile::read throws when the file ends before the bytes asked
// for: it shrank since the reader sized it. A condition of the file on disk
// now, not a defect of its content, so a tolerant reader never skips it.
class FileChanged : public Error {
 public:
  using Error::Error;
};

class InputFile {
 public:
  InputFile() = default;
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;

  // Open path for reading. Only a regular file is accepted: a FIFO would
  // block forever (it is opened non-blocking, so open() returns), a
  // directory or a device is not a file a reader can seek in. `expected`
  // names what the caller wants, for the message ("a µScope trace").
  // Throws Error(IO): "PATH is a FIFO, not a µScope trace", "cannot open
  // PATH: No such file or directory".
  void open(const std::string &path, const char *expected);
  // The size at open or at the last refresh().
  uint64_t size() const { return size_; }
  // Stat the file again (live tailing); returns the new size.
  uint64_t refresh();
  // Forget a refresh(): a poll that fails leaves the reader as it was.
  void restore_size(uint64_t size) { size_ = size; }
  // Up to n bytes at off into dst; fewer only at the end of the file.
  // Throws Error(IO) on a read error.
  size_t read_some(uint64_t off, void *dst, size_t n) const;
  // Exactly n bytes at off into dst. A file that ends first (it shrank
  // after the reader sized it) throws Error(TRUNCATED): "PATH shrank under
  // the reader: WHAT at offset O needs N bytes, the file now has M".
  // `what` names the structure ("segment", "section table"), with its index
  // when index != SIZE_MAX.
  void read(uint64_t off, void *dst, size_t n, const char *what, size_t index = SIZE_MAX) const;
  const std::string &path() const { return path_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

}  // namespace uscope
