// convert(): picks the pipeline, and writes its output beside the target,
// never over the input, renamed over the target only on success.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/last_error.hpp"
#include "convert/pipeline.hpp"

namespace uscope::convert {

namespace {

// The input, resolved: an output naming the same file (the same path, a
// symlink, a hard link, "./f", "dir/../f") would be truncated before it is
// read, so it is refused before anything is opened (st_dev / st_ino: the
// one test that sees through every spelling).
uscope_status_t check_not_input(const char *in, const char *out) {
  struct stat si {}, so {};
  if (::stat(in, &si) != 0)
    return fail_with(USCOPE_ERR_IO, std::string(in) + ": cannot open the input: " + std::strerror(errno));
  if (S_ISDIR(si.st_mode)) return fail_with(USCOPE_ERR_IO, std::string(in) + ": the input is a directory, not a file");
  if (::stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT,
                     std::string(out) + ": the output is the input file " + in +
                         " (same device and inode): refusing to overwrite the input; choose another output");
  return 0;
}

// The output is written to a temporary file in the target's directory (same
// file system: the rename is atomic) and renamed over the target only when
// the conversion succeeded; otherwise the temporary file is removed and the
// target, old or absent, is left as it was. The temporary name ends with the
// target's name, so its suffix (".gz") still picks the encoding. (Not
// io/replace_file's ReplacingFile: a pipeline's writer opens the file by its
// name, and a device or FIFO named as output is written in place, where
// ReplacingFile refuses it.)
class OutputFile {
 public:
  ~OutputFile() {
    if (!tmp_.empty() && !committed_ && !in_place_) ::unlink(tmp_.c_str());
  }
  uscope_status_t create(const char *out, mode_t mode) {
    // A symlink target is replaced where it points (as writing through it
    // did), not the link itself.
    char buf[PATH_MAX];
    struct stat st {};
    const bool link = ::lstat(out, &st) == 0 && S_ISLNK(st.st_mode);
    const bool resolved = link && ::realpath(out, buf);
    target_ = resolved ? std::string(buf) : std::string(out);
    if (::stat(out, &st) == 0) {
      if (S_ISDIR(st.st_mode)) return fail_with(USCOPE_ERR_IO, std::string(out) + ": the output is a directory, not a file");
      // Not a file that can be replaced: a device, a FIFO, or a link with no
      // path behind it (/proc/self/fd/N of a pipe or memfd). Written in place.
      struct stat t {};
      if (!S_ISREG(st.st_mode) || (link && !resolved) || ::stat(target_.c_str(), &t) != 0 || t.st_ino != st.st_ino ||
          t.st_dev != st.st_dev) {
        in_place_ = true;
        tmp_ = out;
        return 0;
      }
    }
    const size_t slash = target_.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : target_.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      tmp_ = dir + ".~uscope." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." + base;
      const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd >= 0) {
        ::close(fd);
        return 0;
      }
      if (errno != EEXIST) {
        const std::string why = std::strerror(errno);
        tmp_.clear();
        return fail_with(USCOPE_ERR_IO, std::string(out) + ": cannot create a temporary file in " +
                                            (dir.empty() ? std::string("the current directory") : dir) + ": " + why);
      }
    }
    tmp_.clear();
    return fail_with(USCOPE_ERR_IO, std::string(out) + ": no unused temporary file name beside it");
  }
  const char *tmp() const { return tmp_.c_str(); }
  uscope_status_t commit(const char *out) {
    if (in_place_) return 0;
    if (::rename(tmp_.c_str(), target_.c_str()) != 0)
      return fail_with(USCOPE_ERR_IO, std::string(out) + ": renaming the finished temporary file " + tmp_ +
                                          " over it failed: " + std::strerror(errno));
    committed_ = true;
    return 0;
  }

 private:
  std::string tmp_, target_;
  bool committed_ = false, in_place_ = false;
};

using Pipeline = uscope_status_t (*)(const char *, const char *, const Options &, uscope_convert_stats_t *);

Pipeline pipeline_of(uint32_t fi, uint32_t fo) {
  if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_USCOPE) return jsonl_to_uscope;
  if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_PCCX) return jsonl_to_pccx;
  if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_JSONL) return jsonl_to_jsonl;
  if (fi == USCOPE_CONVERT_USCOPE && fo == USCOPE_CONVERT_JSONL) return uscope_to_jsonl;
  if (fi == USCOPE_CONVERT_PCCX && fo == USCOPE_CONVERT_JSONL) return pccx_to_jsonl;
  return nullptr;
}

}  // namespace

uscope_status_t convert(const char *in, uint32_t fi, const char *out, uint32_t fo, const Options &o,
                        uscope_convert_stats_t *stats) {
  const Pipeline fn = pipeline_of(fi, fo);
  if (!fn)
    return fail_with(USCOPE_ERR_UNSUPPORTED,
                     std::string("uscope_convert: no conversion from ") + in + " to " + out +
                         " (supported: jsonl -> uscope|pccx|jsonl, uscope -> jsonl, pccx -> jsonl)");
  if (uscope_status_t s = check_not_input(in, out)) return s;
  OutputFile file;
  // The modes the writers create files with (JSONL: fopen's).
  if (uscope_status_t s = file.create(out, fo == USCOPE_CONVERT_JSONL ? 0666 : 0644)) return s;
  if (uscope_status_t s = fn(in, file.tmp(), o, stats)) {
    // Messages name the output, not its temporary file (removed now).
    std::string msg = uscope::thread_error();
    const std::string tmp = file.tmp();
    for (size_t at = 0; tmp != out && (at = msg.find(tmp, at)) != std::string::npos; at += std::strlen(out))
      msg.replace(at, tmp.size(), out);
    return fail_with(s, msg);
  }
  return file.commit(out);
}

}  // namespace uscope::convert
