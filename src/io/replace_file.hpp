// A new file that takes the place of a path only once it is complete: it is
// created beside the path's target (".NAME.XXXXXX" in the same directory,
// O_EXCL) and renamed onto it by publish(). Until then the path is untouched
// (absent, or the previous file, which readers that have it open keep
// reading: a new inode, never a truncation under them); if publish() never
// happens the temporary file is removed. A symbolic link is followed and the
// file is written beside its target, so the link keeps working. An existing
// path that is not a regular file (a directory, a FIFO, a device) is refused.
// Used by the µScope writer (FileSink: published once header and preamble are
// written, so a live reader finds a valid trace) and the pccx writer
// (published at close: its header is patched last).
#pragma once

#include <string>

namespace uscope {

class ReplacingFile {
 public:
  ReplacingFile() = default;
  ~ReplacingFile();  // removes the temporary file if it was never published
  ReplacingFile(const ReplacingFile &) = delete;
  ReplacingFile &operator=(const ReplacingFile &) = delete;

  // Create the temporary file, opened with O_CREAT | O_EXCL | O_CLOEXEC |
  // access (O_WRONLY or O_RDWR); returns its descriptor, which the caller owns.
  // A replaced file's permissions are kept. Throws Error(IO) naming path.
  int create(const std::string &path, int access);
  // Rename the temporary file onto the path (and fsync the directory after
  // it when sync_dir). Throws Error(IO); the temporary is then still removed
  // by the destructor.
  void publish(bool sync_dir);
  bool published() const { return temp_.empty(); }
  // Where create() writes until publish(): the temporary file, or the path
  // itself when it is written in place. For a library that opens files by
  // name (the FST exporter's fstapi).
  const std::string &written_path() const { return in_place_ ? path_ : temp_; }

 private:
  std::string path_;    // as the caller named it, for messages
  std::string target_;  // path with symbolic links followed: what publish() replaces
  std::string temp_;    // the temporary file until publish()
  bool in_place_ = false;  // written through path itself (no name to replace)
};

}  // namespace uscope
