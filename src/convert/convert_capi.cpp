// The C API of the converters (include/uscope/convert.h).
#include <uscope/convert.h>
#include <zlib.h>

#include <algorithm>
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
  explicit Opts(const uscope_convert_options_t *in) {
    uscope_convert_options_init(&o);
    if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
    o.struct_size = sizeof o;
    uscope_convert_options_t d;
    uscope_convert_options_init(&d);
    if (!o.period_ps) o.period_ps = d.period_ps;
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
    i.lossless_checks = lossless;
    i.progress = o.progress != 0;
    i.progress_label = label;
    return i;
  }
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
      *error = "writing the JSONL file failed";
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
      *error = "closing the JSONL file failed";
      s = USCOPE_ERR_IO;
    }
    return s;
  }

 private:
  FILE *f_ = nullptr;
  gzFile gz_ = nullptr;
  std::string buf_;
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

// ── the conversions ──

uscope_status_t jsonl_to_uscope(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(true, "jsonl -> uscope"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, std::string(in) + ": cannot open");
  UnitCounts u;
  u.queue_depth = o.o.queue_depth;
  u.num_contexts = o.o.num_contexts;
  u.num_te = o.o.num_te;
  u.num_ve = o.o.num_ve;
  u.num_dma = o.o.num_dma_channels;
  u.num_dram = o.o.num_dram_channels;
  u.num_noc = o.o.num_noc_links;
  u.num_banks = o.o.num_sram_banks;
  u.queue_bytes = o.o.queue_bytes;
  if (o.o.period_ps > 0xFFFFFFFFull) return fail_with(USCOPE_ERR_INVALID_ARGUMENT, "period_ps over 32 bits");
  UscopeOut w(u, o.o.period_ps, pool);
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!w.is_open()) {
          // The first event out of the reorder window: sim_id and TRACE_META are known.
          if (uscope_status_t os = w.open(out, meta, reason)) return os;
        }
        return w.add(e, reason);
      },
      &err);
  if (!w.is_open()) {
    std::string e2;
    if (uscope_status_t os = w.open(out, meta, &e2)) {
      if (!s) {
        s = os;
        err = e2;
      }
    }
  }
  std::string cerr;
  const uscope_status_t cs = w.is_open() ? w.close(&cerr) : 0;
  fill_stats(st, ing.stats(), issues, w.events());
  if (s) return fail_with(s, err.empty() ? std::string(uscope_last_error()) : err);
  if (cs) return fail_with(cs, cerr);
  return 0;
}

uscope_status_t jsonl_to_pccx(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(false, "jsonl -> pccx"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, std::string(in) + ": cannot open");
  PccxOut w(pool);
  if (uscope_status_t s = w.open(out, o.o.period_ps, o.o.queue_bytes, &err)) return fail_with(s, err);
  Pairer pairer(w);
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *) -> uscope_status_t {
        pairer.add(e);
        return w.status();
      },
      &err);
  pairer.finish();
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  fill_stats(st, ing.stats(), issues, w.events());
  if (s) return fail_with(s, err);
  if (cs) return fail_with(cs, cerr);
  return 0;
}

uscope_status_t jsonl_to_jsonl(const char *in, const char *out, const Opts &o, uscope_convert_stats_t *st) {
  Issues issues = o.issues();
  StringPool pool;
  TraceMeta meta;
  Ingest ing(o.ingest(true, "jsonl -> jsonl"), issues, pool, meta);
  std::string err;
  if (uscope_status_t s = ing.open_file(in)) return fail_with(s, std::string(in) + ": cannot open");
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  bool started = false;
  uint64_t n = 0;
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!started && meta.has_meta_line) format_trace_meta(meta, w.buf());
        started = true;
        format_jsonl(e, pool, meta, o.o.period_ps, w.buf());
        ++n;
        return w.maybe_flush(reason);
      },
      &err);
  if (!started && meta.has_meta_line) format_trace_meta(meta, w.buf());
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  fill_stats(st, ing.stats(), issues, n);
  if (s) return fail_with(s, err);
  if (cs) return fail_with(cs, cerr);
  return 0;
}

uscope_status_t uscope_to_jsonl(const char *in, const char *out, const Opts &, uscope_convert_stats_t *st) {
  UscopeIn r;
  std::string err;
  if (uscope_status_t s = r.open(in, &err)) return fail_with(s, err);
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  if (r.meta().has_meta_line) format_trace_meta(r.meta(), w.buf());
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
  IngestStats is;
  is.events = n;
  Issues none;
  fill_stats(st, is, none, n);
  if (s) return fail_with(s, err);
  if (ws) return fail_with(ws, err);
  if (cs) return fail_with(cs, cerr);
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
  void pccx_other(uint32_t type_id, uint64_t start, uint64_t duration, uint32_t core, uint64_t name) override {
    L l{start, seq++, E_WARN, core, kNoLabel, kNoLabel};
    l.code = pool.intern(pccx_event_type_name(type_id));
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
  if (uscope_status_t s = read_pccx(in, pool, sink, &period, &events, &others, &err)) return fail_with(s, err);
  std::stable_sort(sink.lines.begin(), sink.lines.end(),
                   [](const PccxLines::L &a, const PccxLines::L &b) { return a.t < b.t || (a.t == b.t && a.seq < b.seq); });
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  TraceMeta meta;
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
  if (uscope_status_t s = w.close(&cerr)) return fail_with(s, cerr);
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
    if ((s = ing.open_file(in))) return fail_with(s, std::string(in) + ": cannot open");
    rep.format = "jsonl";
    rep.period_ps = o.o.period_ps;
    rep.strs = &pool;
    Pairer p(rep);
    rep.horizon = [&p](PairKind k) { return p.horizon(k); };
    s = ing.run([&](const Ev &e, std::string *) -> uscope_status_t { p.add(e); return 0; }, &err);
    p.finish();
    rep.horizon = nullptr;  // p goes out of scope
    is = ing.stats();
  } else if (fmt == USCOPE_CONVERT_USCOPE) {
    ur = std::make_unique<UscopeIn>();
    if ((s = ur->open(in, &err))) return fail_with(s, err);
    rep.format = "uscope";
    rep.period_ps = ur->period_ps();
    rep.strs = ur.get();
    Pairer p(rep);
    rep.horizon = [&p](PairKind k) { return p.horizon(k); };
    s = ur->run([&](const Ev &e) { p.add(e); ++is.events; }, &err);
    p.finish();
    rep.horizon = nullptr;
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
  if (s) return fail_with(s, err);
  const std::string text = rep.render(json);
  char *buf = static_cast<char *>(std::malloc(text.size() + 1));
  if (!buf) return fail_with(USCOPE_ERR_NO_MEMORY, "out of memory");
  std::memcpy(buf, text.c_str(), text.size() + 1);
  *out = buf;
  return 0;
}

}  // namespace

extern "C" {

USCOPE_API void uscope_convert_options_init(uscope_convert_options_t *opts) {
  if (!opts) return;
  std::memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->period_ps = 1000;
  opts->max_line_bytes = 64ull << 20;
  opts->reorder_window = 65536;
  opts->queue_depth = 1024;
  opts->num_contexts = 256;
  opts->num_te = 64;
  opts->num_ve = 64;
  opts->num_dma_channels = 64;
  opts->num_dram_channels = 64;
  opts->num_noc_links = 64;
  opts->num_sram_banks = 1024;
}

USCOPE_API uint32_t uscope_convert_format_of(const char *path) {
  if (!path) return USCOPE_CONVERT_AUTO;
  const std::string p(path);
  if (ends_with(p, ".jsonl") || ends_with(p, ".jsonl.gz") || ends_with(p, ".json.gz") || ends_with(p, ".json"))
    return USCOPE_CONVERT_JSONL;
  if (ends_with(p, ".uscope")) return USCOPE_CONVERT_USCOPE;
  if (ends_with(p, ".pccx")) return USCOPE_CONVERT_PCCX;
  return USCOPE_CONVERT_AUTO;
}

USCOPE_API uscope_status_t uscope_convert(const char *in, uint32_t in_format, const char *out, uint32_t out_format,
                                          const uscope_convert_options_t *opts, uscope_convert_stats_t *stats) {
  return uscope::guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert: NULL path");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert: opts->struct_size not set");
    const uint32_t fi = in_format ? in_format : uscope_convert_format_of(in);
    const uint32_t fo = out_format ? out_format : uscope_convert_format_of(out);
    const Opts o(opts);
    if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_USCOPE) return jsonl_to_uscope(in, out, o, stats);
    if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_PCCX) return jsonl_to_pccx(in, out, o, stats);
    if (fi == USCOPE_CONVERT_JSONL && fo == USCOPE_CONVERT_JSONL) return jsonl_to_jsonl(in, out, o, stats);
    if (fi == USCOPE_CONVERT_USCOPE && fo == USCOPE_CONVERT_JSONL) return uscope_to_jsonl(in, out, o, stats);
    if (fi == USCOPE_CONVERT_PCCX && fo == USCOPE_CONVERT_JSONL) return pccx_to_jsonl(in, out, o, stats);
    return fail_with(USCOPE_ERR_UNSUPPORTED,
                     std::string("uscope_convert: no conversion from ") + in + " to " + out +
                         " (supported: jsonl -> uscope|pccx|jsonl, uscope -> jsonl, pccx -> jsonl)");
  });
}

USCOPE_API uscope_status_t uscope_jsonl_to_uscope(const char *in, const char *out, const uscope_convert_options_t *o,
                                                  uscope_convert_stats_t *s) {
  return uscope_convert(in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_USCOPE, o, s);
}
USCOPE_API uscope_status_t uscope_jsonl_to_pccx(const char *in, const char *out, const uscope_convert_options_t *o,
                                                uscope_convert_stats_t *s) {
  return uscope_convert(in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_PCCX, o, s);
}
USCOPE_API uscope_status_t uscope_convert_uscope_to_jsonl(const char *in, const char *out,
                                                          const uscope_convert_options_t *o, uscope_convert_stats_t *s) {
  return uscope_convert(in, USCOPE_CONVERT_USCOPE, out, USCOPE_CONVERT_JSONL, o, s);
}
USCOPE_API uscope_status_t uscope_convert_pccx_to_jsonl(const char *in, const char *out,
                                                        const uscope_convert_options_t *o, uscope_convert_stats_t *s) {
  return uscope_convert(in, USCOPE_CONVERT_PCCX, out, USCOPE_CONVERT_JSONL, o, s);
}

USCOPE_API uscope_status_t uscope_convert_npu_report(const char *in, uint32_t in_format,
                                                     const uscope_convert_options_t *opts, int json, char **out,
                                                     uscope_convert_stats_t *stats) {
  return uscope::guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert_npu_report: NULL argument");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert_npu_report: opts->struct_size not set");
    const Opts o(opts);
    return report(in, in_format ? in_format : uscope_convert_format_of(in), o, json != 0, out, stats);
  });
}

USCOPE_API void uscope_convert_free(void *p) { std::free(p); }

}  // extern "C"
