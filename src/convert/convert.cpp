// convert(): joins the input's source to the output's sink (matrix.hpp), and
// writes the output beside the target, never over the input, renamed over the
// target only on success.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/last_error.hpp"
#include "convert/matrix.hpp"
#include "convert/pccx_side.hpp"
#include "convert/pipeline.hpp"
#include "convert/uscope_side.hpp"

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

}  // namespace

std::unique_ptr<EvSource> make_source(uint32_t format, const Options &o, uint32_t target, const char *label) {
  switch (format) {
    case USCOPE_CONVERT_JSONL: return make_jsonl_source(o, target, label);
    case USCOPE_CONVERT_USCOPE: return make_uscope_source(o);
    case USCOPE_CONVERT_PCCX: return make_pccx_source(o);
    default: return nullptr;
  }
}

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string count_of(uint64_t n, const char *what) { return with_commas(n) + " " + what + (n == 1 ? "" : "s"); }

namespace {

// Runs src into a sink of format fo writing `out` (the temporary file). The
// sink opens at the first event, when the source's meta and period are
// final (a JSONL TRACE_META may come after the first lines).
uscope_status_t run_matrix(EvSource &src, const char *in, uint32_t fi, const char *out, uint32_t fo,
                           const Options &o, uscope_convert_stats_t *st) {
  const char *const kFormatNames[] = {"", "jsonl", "uscope", "pccx"};
  std::unique_ptr<EvSink> sink;
  if (fo == USCOPE_CONVERT_JSONL) {
    sink = make_jsonl_sink(src.strings());
  } else if (fo == USCOPE_CONVERT_USCOPE) {
    UnitCounts u, declared;
    u.queue_depth = o.o.queue_depth;
    u.num_contexts = o.o.num_contexts;
    u.num_te = o.o.num_te;
    u.num_ve = o.o.num_ve;
    u.num_dma = o.o.num_dma_channels;
    u.num_dram = o.o.num_dram_channels;
    u.num_noc = o.o.num_noc_links;
    u.num_banks = o.o.num_sram_banks;
    // A .uscope input's own unit counts, where larger: its ids fit again.
    if (src.units(&declared)) {
      u.queue_depth = std::max(u.queue_depth, declared.queue_depth);
      u.num_contexts = std::max(u.num_contexts, declared.num_contexts);
      u.num_te = std::max(u.num_te, declared.num_te);
      u.num_ve = std::max(u.num_ve, declared.num_ve);
      u.num_dma = std::max(u.num_dma, declared.num_dma);
      u.num_dram = std::max(u.num_dram, declared.num_dram);
      u.num_noc = std::max(u.num_noc, declared.num_noc);
      u.num_banks = std::max(u.num_banks, declared.num_banks);
    }
    u.queue_bytes = queue_for_input(o.o.queue_bytes, UscopeOut::kDefaultQueue, src.input_size(), src.input_gzip());
    sink = make_uscope_sink(u, src.strings());
  } else {
    sink = make_pccx_sink(src.strings(),
                          queue_for_input(o.o.queue_bytes, PccxOut::kDefaultQueue, src.input_size(), src.input_gzip()));
  }
  bool opened = false;
  uscope_status_t os = 0;  // the output's failure, not the input's
  std::string err, out_err;
  auto open_sink = [&]() {
    opened = true;
    if ((os = sink->open(out, src.meta(), src.period_ps(), &out_err))) out_err = about_file(out, out_err.c_str());
    return os;
  };
  uscope_status_t s = src.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!opened && open_sink()) return os;
        const uscope_status_t r = sink->add(e, reason);
        if (r < 0) {  // the writer's (sticky) error, not the event's
          os = r;
          out_err = about_file(out, reason->c_str());
        }
        return r;
      },
      &err);
  if (!s && !opened) open_sink();
  std::string cerr;
  const uscope_status_t cs = opened && !os ? sink->close(&cerr) : 0;
  const Issues &issues = src.issues();
  const IngestStats is = src.stats();
  fill_stats(st, is, issues, sink->events());
  if (os) return fail_with(os, out_err);
  if (s) return fail_with(s, in_error(in, err));
  if (cs) return fail_with(cs, about_file(out, cerr.c_str()));
  // Not a silent drop: events the output could not place fail the
  // conversion above the documented share (convert.h max_skipped_ppm).
  // The input's records: JSONL lines that are not blank or TRACE_META
  // (malformed ones included), else the events read.
  const uint64_t n = std::max<uint64_t>(
      fi == USCOPE_CONVERT_JSONL ? is.lines - is.blank_lines - is.meta_lines : is.events, issues.count);
  if (issues.count > kSkipAllowance && issues.count * 1000000.0 > static_cast<double>(o.o.max_skipped_ppm) * n) {
    char share[64];
    std::snprintf(share, sizeof share, "%.3g%%), more than the %.3g%%", issues.count * 100.0 / static_cast<double>(n),
                  o.o.max_skipped_ppm / 10000.0);
    return fail_with(USCOPE_ERR_CORRUPT,
                     std::string(in) + ": the " + kFormatNames[fo] + " output cannot place " +
                         count_of(issues.count, "event") + " of " + with_commas(n) + " (" + share +
                         " allowed (--max-skipped); the first, " +
                         (fi == USCOPE_CONVERT_JSONL ? "line " + std::to_string(issues.first_line) + ": "
                                                     : std::string()) +
                         issues.first_reason + "; no output written");
  }
  // What the input held that is not converted, and what the output cannot
  // hold: one line each, with counts (line 0: about the file, not a line).
  std::vector<std::string> notes;
  src.notes(&notes);
  sink->notes(&notes);
  if (o.o.on_issue)
    for (const std::string &n2 : notes) o.o.on_issue(o.o.user, 0, n2.c_str());
  return 0;
}

}  // namespace

uscope_status_t convert(const char *in, uint32_t fi, const char *out, uint32_t fo, const Options &o,
                        uscope_convert_stats_t *stats) {
  const char *const kLabels[4][4] = {{},
                                     {"", "jsonl -> jsonl", "jsonl -> uscope", "jsonl -> pccx"},
                                     {"", "uscope -> jsonl", "uscope -> uscope", "uscope -> pccx"},
                                     {"", "pccx -> jsonl", "pccx -> uscope", "pccx -> pccx"}};
  for (const auto &[path, f] : {std::pair<const char *, uint32_t>{in, fi}, {out, fo}})
    if (f < USCOPE_CONVERT_JSONL || f > USCOPE_CONVERT_PCCX)
      return fail_with(USCOPE_ERR_INVALID_ARGUMENT,
                       std::string("uscope_convert: ") + path +
                           (f == USCOPE_CONVERT_AUTO
                                ? ": cannot tell the format from the name: expected .jsonl, .jsonl.gz, .uscope or .pccx"
                                : ": format " + std::to_string(f) +
                                      " is not one of USCOPE_CONVERT_JSONL, _USCOPE, _PCCX or _AUTO"));
  if (uscope_status_t s = check_not_input(in, out)) return s;
  std::unique_ptr<EvSource> src = make_source(fi, o, fo, kLabels[fi][fo]);
  std::string err;
  // Opened before the output exists: an unreadable input leaves no file.
  if (uscope_status_t s = src->open(in, &err)) return fail_with(s, in_error(in, err));
  OutputFile file;
  // The modes the writers create files with (JSONL: fopen's).
  if (uscope_status_t s = file.create(out, fo == USCOPE_CONVERT_JSONL ? 0666 : 0644)) return s;
  if (uscope_status_t s = run_matrix(*src, in, fi, file.tmp(), fo, o, stats)) {
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
