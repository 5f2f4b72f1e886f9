// The C API of the converters (include/uscope/convert.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uscope/convert.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "capi/guard.hpp"
#include "convert/jsonl_ingest.hpp"
#include "convert/pairing.hpp"
#include "convert/pccx_side.hpp"
#include "convert/report.hpp"
#include "convert/uscope_side.hpp"

using namespace uscope::convert;

namespace {

struct Opts {
  uscope_convert_options_t o{};
  bool period_given = false;  // else TRACE_META's period_ps, else 1000
  explicit Opts(const uscope_convert_options_t *in) {
    uscope_convert_options_init(&o);
    if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
    o.struct_size = sizeof o;
    uscope_convert_options_t d;
    uscope_convert_options_init(&d);
    period_given = o.period_ps != 0;
    if (!o.period_ps) o.period_ps = 1000;
    if (!o.max_line_bytes) o.max_line_bytes = d.max_line_bytes;
    if (!o.reorder_window) o.reorder_window = d.reorder_window;
    if (!o.queue_depth) o.queue_depth = d.queue_depth;
    if (!o.num_contexts) o.num_contexts = d.num_contexts;
    if (!o.num_te) o.num_te = d.num_te;
    if (!o.num_ve) o.num_ve = d.num_ve;
    if (!o.num_dma_channels) o.num_dma_channels = d.num_dma_channels;
    if (!o.num_dram_channels) o.num_dram_channels = d.num_dram_channels;
    if (!o.num_noc_links) o.num_noc_links = d.num_noc_links;
    if (!o.num_sram_banks) o.num_sram_banks = d.num_sram_banks;
  }
  IngestOptions ingest(bool lossless, const char *label) const {
    IngestOptions i;
    i.max_line_bytes = o.max_line_bytes;
    i.reorder_window = o.reorder_window;
    i.period_ps = o.period_ps;
    i.period_given = period_given;
    i.lossless_checks = lossless;
    i.progress = o.progress != 0;
    i.progress_label = label;
    return i;
  }
  uint64_t period() const { return o.period_ps; }
  Issues issues() const {
    Issues is;
    is.strict = o.strict != 0;
    if (o.on_issue) {
      auto fn = o.on_issue;
      void *user = o.user;
      is.on_issue = [fn, user](uint64_t line, const std::string &why) { fn(user, line, why.c_str()); };
    }
    return is;
  }
};

bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  return true;
}

// Buffered JSONL output, plain or gzip (".gz").
class JsonlOut {
 public:
  ~JsonlOut() {
    if (gz_) gzclose(gz_);
    if (f_) std::fclose(f_);
  }
  uscope_status_t open(const char *path, std::string *error) {
    path_ = path;
    if (ends_with(path, ".gz")) gz_ = gzopen(path, "wb6");
    else f_ = std::fopen(path, "wb");
    if (!gz_ && !f_) {
      *error = std::string(path) + ": " + std::strerror(errno);
      return USCOPE_ERR_IO;
    }
    buf_.reserve(1 << 20);
    return 0;
  }
  std::string &buf() { return buf_; }
  uscope_status_t maybe_flush(std::string *error) { return buf_.size() >= (1 << 20) ? flush(error) : 0; }
  uscope_status_t flush(std::string *error) {
    if (buf_.empty()) return 0;
    bool ok = gz_ ? gzwrite(gz_, buf_.data(), static_cast<unsigned>(buf_.size())) == static_cast<int>(buf_.size())
                  : std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
    buf_.clear();
    if (!ok) {
      *error = std::string(path_) + ": writing the JSONL file failed: " + (gz_ ? "gzwrite" : std::strerror(errno));
      return USCOPE_ERR_IO;
    }
    return 0;
  }
  uscope_status_t close(std::string *error) {
    uscope_status_t s = flush(error);
    int rc = 0;
    if (gz_) rc = gzclose(gz_);
    if (f_) rc = std::fclose(f_);
    gz_ = nullptr;
    f_ = nullptr;
    if (!s && rc != 0) {
      *error = "closing the JSONL file failed: " + std::string(std::strerror(errno));
      s = USCOPE_ERR_IO;
    }
    return s;
  }

 private:
  FILE *f_ = nullptr;
  gzFile gz_ = nullptr;
  std::string buf_, path_;
};

void fill_stats(uscope_convert_stats_t *st, const IngestStats &is, const Issues &issues, uint64_t out) {
  if (!st) return;
  uscope_convert_stats_t s{};
  s.struct_size = sizeof s;
  s.lines = is.lines;
  s.events_in = is.events;
  s.events_out = out;
  s.skipped = issues.count;
  s.meta_lines = is.meta_lines;
  s.blank_lines = is.blank_lines;
  s.bytes_in = is.bytes_in;
  s.first_issue_line = issues.first_line;
  const uint32_t n = std::min<uint32_t>(st->struct_size, sizeof s);
  std::memcpy(st, &s, n);
  st->struct_size = n;
}

uscope_status_t fail_with(uscope_status_t s, const std::string &msg) {
  uscope::set_thread_error(msg);
  return s;
}

// ── the output: never the input, written beside the target, renamed on success ──

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
// target's name, so its suffix (".gz") still picks the encoding.
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

// ── the conversions ──
//
// Each writes `out` (the temporary file of OutputFile) and names `in` in its
// errors; uscope_convert names the real output.

// An error of the JSONL ingest ("line N: ..."), or a message without a file
// name, as "<in>: ...".
std::string in_error(const char *in, const std::string &err) {
  if (err.rfind(in, 0) == 0) return err;
  return std::string(in) + ": " + (err.empty() ? std::string(uscope_last_error()) : err);
}

// The output writer's queue for this input. The writers touch every page of
// their queue at open (so that a simulation's first cycles take no page
// faults); a conversion of a small file does not need the 8 or 16 MiB
// default, whose page faults were most of a small `uscope convert`. The
// records an input yields take fewer bytes than its JSONL lines, so twice
// the file's size (32x for gzip) holds them all, rounded up to a power of
// two; the asked-for (or default) size stays the upper bound, and the
// writer's own minimum applies. An input of unknown size (a pipe) gets the
// asked-for size. A large input gets the same queue as before.
uint64_t queue_for_input(uint64_t asked, uint64_t dflt, const Ingest &ing) {
  const uint64_t cap = asked ? asked : dflt;
  const uint64_t size = ing.input_size();
  if (!size || size > (cap >> 5)) return cap;  // also: no overflow below
  const uint64_t need = size * (ing.input_gzip() ? 32 : 2);
  uint64_t q = 4096;
  while (q < need) q <<= 1;
  return std::min(q, cap);
}

uscope_status_t jsonl_to_uscope(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(true, "jsonl -> uscope"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, in_error(in, ing.open_error()));
  UnitCounts u;
  u.queue_depth = o.o.queue_depth;
  u.num_contexts = o.o.num_contexts;
  u.num_te = o.o.num_te;
  u.num_ve = o.o.num_ve;
  u.num_dma = o.o.num_dma_channels;
  u.num_dram = o.o.num_dram_channels;
  u.num_noc = o.o.num_noc_links;
  u.num_banks = o.o.num_sram_banks;
  u.queue_bytes = queue_for_input(o.o.queue_bytes, UscopeOut::kDefaultQueue, ing);
  if (o.o.period_ps > 0xFFFFFFFFull)
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, "period_ps " + std::to_string(o.o.period_ps) +
                                                      ": expected at most 2^32-1 ps (a µScope clock period is 32-bit)");
  UscopeOut w(u, o.period(), pool);
  std::string open_err;
  uscope_status_t os = 0;
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!w.is_open()) {
          // The first event out of the reorder window: sim_id, TRACE_META
          // and the period are known.
          w.set_period(ing.period_ps());
          if ((os = w.open(out, meta, &open_err))) return os;
        }
        const uscope_status_t r = w.add(e, reason);
        if (r < 0) {  // the writer's (sticky) error, not the line's
          os = r;
          open_err = std::string(out) + ": writing the .uscope file: " + uscope_last_error();
        }
        return r;
      },
      &err);
  if (os) {
    s = os;
    err = open_err;
  }
  if (!s && !w.is_open()) {
    w.set_period(ing.period_ps());
    if ((s = w.open(out, meta, &err))) {}
  }
  std::string cerr;
  const uscope_status_t cs = w.is_open() ? w.close(&cerr) : 0;
  fill_stats(st, ing.stats(), issues, w.events());
  if (s) return fail_with(s, os ? err : in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

uscope_status_t jsonl_to_pccx(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(false, "jsonl -> pccx"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, in_error(in, ing.open_error()));
  PccxOut w(pool);
  Pairer pairer(w);
  std::string open_err;
  uscope_status_t os = 0;
  // Opened at the first event, when TRACE_META (period, pccx header fields) is known.
  const uint64_t pccx_queue = queue_for_input(o.o.queue_bytes, PccxOut::kDefaultQueue, ing);
  auto open = [&]() { return os = w.open(out, ing.period_ps(), meta.pccx, pccx_queue, &open_err); };
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *) -> uscope_status_t {
        if (!w.is_open() && open()) return os;
        if (!w.pccx_warn(e)) pairer.add(e);
        if (w.status()) {
          std::string why;
          os = w.close(&why);
          open_err = std::string(out) + ": " + why;
        }
        return os;
      },
      &err);
  if (os) {
    s = os;
    err = open_err;
  }
  if (!s && !w.is_open() && open()) {
    s = os;
    err = open_err;
  }
  std::string cerr;
  uscope_status_t cs = 0;
  if (w.is_open()) {
    pairer.finish();
    cs = w.close(&cerr);
  }
  fill_stats(st, ing.stats(), issues, w.events());
  if (s) return fail_with(s, os ? err : in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

uscope_status_t jsonl_to_jsonl(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(true, "jsonl -> jsonl"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, in_error(in, ing.open_error()));
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  std::string werr;
  uscope_status_t ws = 0;
  bool started = false;
  uint64_t n = 0;
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!started && wants_meta_line(meta)) format_trace_meta(meta, w.buf());
        started = true;
        format_jsonl(e, pool, meta, ing.period_ps(), w.buf());
        ++n;
        return ws = w.maybe_flush(&werr);
      },
      &err);
  if (!s && !started && wants_meta_line(meta)) format_trace_meta(meta, w.buf());
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  fill_stats(st, ing.stats(), issues, n);
  if (ws) return fail_with(ws, werr);
  if (s) return fail_with(s, in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

uscope_status_t uscope_to_jsonl(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  UscopeIn r;
  std::string err;
  if (uscope_status_t s = r.open(in, &err, o.o.strict != 0)) return fail_with(s, err);
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  if (wants_meta_line(r.meta())) format_trace_meta(r.meta(), w.buf());
  uint64_t n = 0;
  uscope_status_t ws = 0;
  uscope_status_t s = r.run(
      [&](const Ev &e) {
        format_jsonl(e, r, r.meta(), r.period_ps(), w.buf());
        ++n;
        if (!ws) ws = w.maybe_flush(&err);
      },
      &err);
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  r.report_defects(o.issues());
  IngestStats is;
  is.events = n;
  Issues none;
  fill_stats(st, is, none, n);
  if (s) return fail_with(s, in_error(in, err));
  if (ws) return fail_with(ws, err);
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

// pccx -> JSONL: each interval gives its START and END line, each instant
// one line; ids of pairs are the pccx event's index (synthetic). An event of
// another producer with no NPU meaning becomes a WARN line: component
// "pccx", code its pccx type, msg its api_name and duration.
struct PccxLines final : PairSink {
  explicit PccxLines(StringPool &p) : pool(p) {}
  struct L {
    uint64_t t, seq;
    uint8_t type;
    uint32_t core;
    uint64_t id, label, phase = kNoLabel, code = kNoLabel, msg = kNoLabel;
  };
  StringPool &pool;
  std::vector<L> lines;
  uint64_t seq = 0, pairs = 0;
  void interval(const Interval &iv) override {
    const uint64_t id = pairs++;
    L start{iv.start, seq++, kPairStart[iv.kind], iv.core, id, iv.label};
    start.phase = iv.name;
    lines.push_back(start);
    lines.push_back({iv.end, seq++, kPairEnd[iv.kind], iv.core, id, kNoLabel});
  }
  void instant(uint8_t type, uint64_t t, uint32_t core) override {
    lines.push_back({t, seq++, type, core, kNoLabel, kNoLabel});
  }
  void pccx_other(uint32_t, uint64_t type_label, uint64_t start, uint64_t duration, uint32_t core,
                  uint64_t name) override {
    L l{start, seq++, E_WARN, core, kNoLabel, kNoLabel};
    l.code = type_label;
    std::string msg = name == kNoLabel ? std::string() : std::string(pool.str(name)) + ", ";
    msg += std::to_string(duration) + (duration == 1 ? " cycle" : " cycles");
    l.msg = pool.intern(msg);
    lines.push_back(l);
  }
};

uscope_status_t pccx_to_jsonl(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  StringPool pool;
  PccxLines sink(pool);
  uint64_t period = 0, events = 0, others = 0;
  std::string err;
  TraceMeta meta;
  if (uscope_status_t s = read_pccx(in, pool, sink, &period, &events, &others, &err, &meta.pccx))
    return fail_with(s, in_error(in, err));
  // The header's fields and the period ride on a TRACE_META line
  // (docs/convert.md "TRACE_META extensions").
  meta.period_ps = period;
  meta.has_period = period != 1000;
  std::stable_sort(sink.lines.begin(), sink.lines.end(),
                   [](const PccxLines::L &a, const PccxLines::L &b) { return a.t < b.t || (a.t == b.t && a.seq < b.seq); });
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  format_trace_meta(meta, w.buf());
  Ev e;
  for (const auto &l : sink.lines) {
    e.mask = 0;
    e.type = l.type;
    e.t_cycle = l.t;
    e.set(K_core_id, l.core);  // JSONL numbers have no width: a u32 core id is written as is
    if (l.id != kNoLabel) {
      switch (l.type) {
        case E_CMD_START: case E_CMD_END: e.set(K_cmd_id, l.id); break;
        case E_JOB_ISSUE: case E_JOB_DONE: case E_TE_START: case E_TE_END: case E_VE_START: case E_VE_END:
          e.set(K_job_id, l.id);
          break;
        default: e.set(K_tx_id, l.id); break;
      }
    }
    if (l.label != kNoLabel) {
      if (l.type == E_CMD_START) e.set(K_phase, l.label);
      else if (l.type == E_JOB_ISSUE) e.set(K_job_type, l.label);
      else if (l.type == E_DMA_START) e.set(K_direction, l.label);
    }
    if (l.phase != kNoLabel) e.set(K_phase, l.phase);
    if (l.code != kNoLabel) {
      e.set(K_component, pool.intern("pccx"));
      e.set(K_code, l.code);
      e.set(K_msg, l.msg);
    }
    format_jsonl(e, pool, meta, period, w.buf());
    if (uscope_status_t s = w.maybe_flush(&err)) return fail_with(s, err);
  }
  std::string cerr;
  if (uscope_status_t s = w.close(&cerr)) return fail_with(s, std::string(out) + ": " + cerr);
  IngestStats is;
  is.events = events;
  Issues none;
  fill_stats(st, is, none, sink.lines.size());
  return 0;
}

uscope_status_t report(const char *in, uint32_t fmt, const Opts &o, bool json, char **out, uscope_convert_stats_t *st) {
  Report rep;
  StringPool pool;
  std::string err;
  IngestStats is;
  Issues issues = o.issues();
  uscope_status_t s = 0;
  std::unique_ptr<UscopeIn> ur;
  if (fmt == USCOPE_CONVERT_JSONL) {
    TraceMeta meta;
    Ingest ing(o.ingest(false, "npu-report"), issues, pool, meta);
    if ((s = ing.open_file(in))) return fail_with(s, in_error(in, ing.open_error()));
    rep.format = "jsonl";
    rep.period_ps = o.o.period_ps;
    rep.strs = &pool;
    Pairer p(rep);
    rep.horizon = [&p](PairKind k) { return p.horizon(k); };
    s = ing.run([&](const Ev &e, std::string *) -> uscope_status_t { p.add(e); return 0; }, &err);
    rep.period_ps = ing.period_ps();  // TRACE_META's period_ps when not given
    p.finish();
    rep.horizon = nullptr;  // p goes out of scope
    is = ing.stats();
  } else if (fmt == USCOPE_CONVERT_USCOPE) {
    ur = std::make_unique<UscopeIn>();
    if ((s = ur->open(in, &err, o.o.strict != 0))) return fail_with(s, err);
    rep.format = "uscope";
    rep.period_ps = ur->period_ps();
    rep.strs = ur.get();
    Pairer p(rep);
    rep.horizon = [&p](PairKind k) { return p.horizon(k); };
    s = ur->run([&](const Ev &e) { p.add(e); ++is.events; }, &err);
    p.finish();
    rep.horizon = nullptr;
    ur->report_defects(issues);
  } else if (fmt == USCOPE_CONVERT_PCCX) {
    rep.format = "pccx";
    rep.strs = &pool;
    rep.has_sizes = rep.has_units = rep.has_layers = false;
    uint64_t others = 0;  // no metric counts them
    s = read_pccx(in, pool, rep, &rep.period_ps, &is.events, &others, &err);
  } else {
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, std::string(in) + ": unknown format (.jsonl, .jsonl.gz, .uscope, .pccx)");
  }
  fill_stats(st, is, issues, 0);
  if (s) return fail_with(s, in_error(in, err));
  const std::string text = rep.render(json);
  char *buf = static_cast<char *>(std::malloc(text.size() + 1));
  if (!buf) return fail_with(USCOPE_ERR_NO_MEMORY, "out of memory");
  std::memcpy(buf, text.c_str(), text.size() + 1);
  *out = buf;
  return 0;
}

}  // namespace

extern "C" {

USCOPE_API uscope_status_t uscope_convert(uscope_convert_stats_t *stats, const char *in, uint32_t in_format, const char *out,
                                          uint32_t out_format, const uscope_convert_options_t *opts) {
  return uscope::guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert: NULL path");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert: opts->struct_size not set");
    const uint32_t fi = in_format ? in_format : uscope_convert_format_of(in);
    const uint32_t fo = out_format ? out_format : uscope_convert_format_of(out);
    const Opts o(opts);
    using Fn = uscope_status_t (*)(const char *, const char *, const Opts &, uscope_convert_stats_t *);
    Fn fn = nullptr;
    if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_USCOPE) fn = jsonl_to_uscope;
    else if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_PCCX) fn = jsonl_to_pccx;
    else if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_JSONL) fn = jsonl_to_jsonl;
    else if (fi == USCOPE_CONVERT_USCOPE && fo == USCOPE_CONVERT_JSONL) fn = uscope_to_jsonl;
    else if (fi == USCOPE_CONVERT_PCCX && fo == USCOPE_CONVERT_JSONL) fn = pccx_to_jsonl;
    else
      return fail_with(USCOPE_ERR_UNSUPPORTED,
                       std::string("uscope_convert: no conversion from ") + in + " to " + out +
                           " (supported: jsonl -> uscope|pccx|jsonl, uscope -> jsonl, pccx -> jsonl)");
    if (uscope_status_t s = check_not_input(in, out)) return s;
    OutputFile file;
    // The modes the writers create files with (JSONL: fopen's).
    if (uscope_status_t s = file.create(out, fo == USCOPE_CONVERT_JSONL ? 0666 : 0644)) return s;
    if (uscope_status_t s = fn(in, file.tmp(), o, stats)) {
      // Messages name the output, not its temporary file (removed now).
      std::string msg = uscope_last_error();
      const std::string tmp = file.tmp();
      for (size_t at = 0; tmp != out && (at = msg.find(tmp, at)) != std::string::npos; at += std::strlen(out))
        msg.replace(at, tmp.size(), out);
      return fail_with(s, msg);
    }
    return file.commit(out);
  });
}

USCOPE_API uscope_status_t uscope_jsonl_to_uscope(uscope_convert_stats_t *s, const char *in, const char *out,
                                                  const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_USCOPE, o);
}
USCOPE_API uscope_status_t uscope_jsonl_to_pccx(uscope_convert_stats_t *s, const char *in, const char *out,
                                                const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_PCCX, o);
}
USCOPE_API uscope_status_t uscope_convert_uscope_to_jsonl(uscope_convert_stats_t *s, const char *in,
                                                          const char *out, const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_USCOPE, out, USCOPE_CONVERT_JSONL, o);
}
USCOPE_API uscope_status_t uscope_convert_pccx_to_jsonl(uscope_convert_stats_t *s, const char *in,
                                                        const char *out, const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_PCCX, out, USCOPE_CONVERT_JSONL, o);
}

USCOPE_API uscope_status_t uscope_convert_npu_report(char **out, uscope_convert_stats_t *stats,
                                                     const char *in, uint32_t in_format, const uscope_convert_options_t *opts,
                                                     int json) {
  return uscope::guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert_npu_report: NULL argument");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert_npu_report: opts->struct_size not set");
    const Opts o(opts);
    return report(in, in_format ? in_format : uscope_convert_format_of(in), o, json != 0, out, stats);
  });
}

}  // extern "C"
