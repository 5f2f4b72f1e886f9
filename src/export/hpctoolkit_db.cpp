// The HPCToolkit database v4 encoders (hpctoolkit_db.hpp). Section names
// and offsets in the comments are those of
// ../shared/specs/hpctoolkit-db-formats.md.
#include "export/hpctoolkit_db.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "base/error.hpp"

namespace uscope::exporter::hpctk {

const char *const kIdNames[8] = {"SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE"};

namespace {

// "Formats legend": every integer and f64 is little-endian.
void w8(std::string &o, size_t pos, uint8_t v) { o[pos] = char(v); }
void w16(std::string &o, size_t pos, uint16_t v) {
  for (int i = 0; i < 2; ++i) o[pos + i] = char(v >> (8 * i));
}
void w32(std::string &o, size_t pos, uint32_t v) {
  for (int i = 0; i < 4; ++i) o[pos + i] = char(v >> (8 * i));
}
void w64(std::string &o, size_t pos, uint64_t v) {
  for (int i = 0; i < 8; ++i) o[pos + i] = char(v >> (8 * i));
}
void wf64(std::string &o, size_t pos, double d) {
  uint64_t v;
  std::memcpy(&v, &d, 8);
  w64(o, pos, v);
}
void pad_to(std::string &o, size_t align) {
  while (o.size() % align) o.push_back('\0');
}
// n zero bytes at the next multiple of align; their position.
size_t reserve(std::string &o, size_t n, size_t align) {
  pad_to(o, align);
  size_t p = o.size();
  o.append(n, '\0');
  return p;
}
size_t put_str(std::string &o, const std::string &s) {
  size_t p = o.size();
  o.append(s);
  o.push_back('\0');
  return p;
}
// Every file starts with a 14-byte format identifier, then major 4, minor 0.
size_t header(std::string &o, const char (&magic)[15], size_t size) {
  o.assign(size, '\0');
  std::memcpy(&o[0], magic, 14);
  w8(o, 0x0e, 4);
  w8(o, 0x0f, 0);
  return size;
}

// meta.db Context Tree section: the `flex` packing of a context's
// sub-fields (u64 in the next full word, u32 in the next free half word).
struct Flex {
  int fn = -1, file = -1, line = -1, module = -1, offset = -1;  // byte offsets in flex
  uint8_t words = 0;
};
Flex flex_of(const Context &c) {
  Flex f;
  int next_word = 0, half = -1;
  auto u64 = [&] { return 8 * next_word++; };
  auto u32 = [&] {
    if (half >= 0) {
      int p = half * 8 + 4;
      half = -1;
      return p;
    }
    half = next_word;
    return 8 * next_word++;
  };
  if (c.function != kNone) f.fn = u64();  // flex[0]
  if (c.file != kNone) {
    f.file = u64();  // flex[1]
    f.line = u32();  // flex[2]
  }
  if (c.module != kNone) {
    f.module = u64();  // flex[3]
    f.offset = u64();  // flex[4]
  }
  f.words = uint8_t(next_word);
  return f;
}

void check(bool ok, const char *what) {
  if (!ok) throw Error(USCOPE_ERR_INVALID_ARGUMENT, std::string("hpctoolkit: ") + what);
}

}  // namespace

void Database::resize_values() {
  point.assign(profiles.size(), std::vector<double>(contexts.size() * metrics.size(), 0.0));
}

void Database::propagate(uint32_t p, std::vector<double> &exc, std::vector<double> &inc) const {
  const size_t M = metrics.size();
  exc = point[p];
  inc = point[p];
  // Parents precede their children (encode_meta checks it), so one pass
  // from the last context folds each into its parent: "execution" takes
  // every child, "function" only the lexically nested ones (no call).
  for (size_t c = contexts.size(); c-- > 0;) {
    const Context &x = contexts[c];
    if (x.parent == kNone) continue;
    for (size_t m = 0; m < M; ++m) {
      inc[x.parent * M + m] += inc[c * M + m];
      if (x.relation == kLexical) exc[x.parent * M + m] += exc[c * M + m];
    }
  }
}

std::string encode_meta(const Database &db) {
  for (size_t c = 0; c < db.contexts.size(); ++c) {
    const Context &x = db.contexts[c];
    check(x.parent == kNone || x.parent < c, "a context's parent must precede it");
    check(x.function == kNone || x.function < db.functions.size(), "context function out of range");
    check(x.file == kNone || x.file < db.files.size(), "context file out of range");
    check(x.module == kNone || x.module < db.modules.size(), "context module out of range");
  }
  for (const Function &f : db.functions) {
    check(f.module == kNone || f.module < db.modules.size(), "function module out of range");
    check(f.file == kNone || f.file < db.files.size(), "function file out of range");
    check(!f.name.empty() || f.module != kNone || f.file != kNone, "a function needs a name, module or file");
  }
  std::string o;
  header(o, "HPCTOOLKITmeta", 0x90);  // meta.db header, END 0x90
  auto section = [&](size_t hdr_sz, size_t start) {
    w64(o, hdr_sz, o.size() - start);  // sz
    w64(o, hdr_sz + 8, start);          // p
  };

  // General Properties section: pTitle, pDescription, then both strings.
  size_t gp = reserve(o, 0x10, 8);
  w64(o, gp + 0x00, put_str(o, db.title));
  w64(o, gp + 0x08, put_str(o, db.description));
  section(0x10, gp);

  // Hierarchical Identifier Names section: ppNames, nKinds; the array; the names.
  size_t in = reserve(o, 0x09, 8);
  size_t names = reserve(o, 8 * 8, 8);
  w64(o, in + 0x00, names);
  w8(o, in + 0x08, 8);
  for (int k = 0; k < 8; ++k) w64(o, names + 8 * k, put_str(o, kIdNames[k]));
  section(0x20, in);

  // Performance Metrics section: {MD} (24), {PS} (24) and {SS} (16) arrays, then strings.
  const size_t M = db.metrics.size();
  check(2 * M <= 0x10000, "too many metrics");
  size_t pm = reserve(o, 0x0f, 8);
  size_t mds = reserve(o, 24 * M, 8);
  w64(o, pm + 0x00, mds);
  w32(o, pm + 0x08, uint32_t(M));
  w8(o, pm + 0x0c, 24);
  w8(o, pm + 0x0d, 24);
  w8(o, pm + 0x0e, 16);
  size_t scopes = reserve(o, 2 * 24 * M, 8);
  size_t sums = reserve(o, 2 * 16 * M, 8);
  size_t s_function = put_str(o, "function"), s_execution = put_str(o, "execution"), s_formula = put_str(o, "$$");
  for (size_t m = 0; m < M; ++m) {
    size_t md = mds + 24 * m;
    w64(o, md + 0x00, put_str(o, db.metrics[m]));
    w16(o, md + 0x08, 2);
    w64(o, md + 0x10, scopes + 2 * 24 * m);
    for (size_t s = 0; s < 2; ++s) {
      size_t ps = scopes + 24 * (2 * m + s), ss = sums + 16 * (2 * m + s);
      uint16_t id = uint16_t(2 * m + s);
      w64(o, ps + 0x00, s == 0 ? s_function : s_execution);
      w16(o, ps + 0x08, 1);
      w16(o, ps + 0x0a, id);  // propMetricId
      w64(o, ps + 0x10, ss);
      w64(o, ss + 0x00, s_formula);
      w8(o, ss + 0x08, 0);    // combine: 0/sum
      w16(o, ss + 0x0a, id);  // statMetricId
    }
  }
  section(0x30, pm);

  // Common String Table section (u8*(1)): paths and function names.
  size_t st = o.size();
  std::vector<size_t> s_mod, s_file, s_fn;
  for (const auto &s : db.modules) s_mod.push_back(put_str(o, s));
  for (const auto &s : db.files) s_file.push_back(put_str(o, s));
  for (const auto &f : db.functions) s_fn.push_back(f.name.empty() ? 0 : put_str(o, f.name));
  section(0x50, st);

  // Load Modules section: header (0x0e), {LMS} array of 16.
  size_t lm = reserve(o, 0x0e, 8);
  size_t lms = reserve(o, 16 * db.modules.size(), 8);
  w64(o, lm + 0x00, lms);
  w32(o, lm + 0x08, uint32_t(db.modules.size()));
  w16(o, lm + 0x0c, 16);
  for (size_t i = 0; i < db.modules.size(); ++i) w64(o, lms + 16 * i + 0x08, s_mod[i]);
  section(0x60, lm);

  // Source Files section: header (0x0e), {SFS} array of 16 (flags 0: not copied).
  size_t sf = reserve(o, 0x0e, 8);
  size_t sfs = reserve(o, 16 * db.files.size(), 8);
  w64(o, sf + 0x00, sfs);
  w32(o, sf + 0x08, uint32_t(db.files.size()));
  w16(o, sf + 0x0c, 16);
  for (size_t i = 0; i < db.files.size(); ++i) w64(o, sfs + 16 * i + 0x08, s_file[i]);
  section(0x70, sf);

  // Functions section: header (0x0e), {FS} array of 40.
  size_t fn = reserve(o, 0x0e, 8);
  size_t fss = reserve(o, 40 * db.functions.size(), 8);
  w64(o, fn + 0x00, fss);
  w32(o, fn + 0x08, uint32_t(db.functions.size()));
  w16(o, fn + 0x0c, 40);
  for (size_t i = 0; i < db.functions.size(); ++i) {
    const Function &f = db.functions[i];
    size_t p = fss + 40 * i;
    w64(o, p + 0x00, s_fn[i]);
    w64(o, p + 0x08, f.module == kNone ? 0 : lms + 16 * f.module);
    w64(o, p + 0x10, f.offset);
    w64(o, p + 0x18, f.file == kNone ? 0 : sfs + 16 * f.file);
    w32(o, p + 0x20, f.line);
  }
  section(0x80, fn);

  // Context Tree section: szRoots, pRoots; then the roots' array and each
  // context's children array, breadth first, every {Ctx} 8-aligned.
  const size_t C = db.contexts.size();
  std::vector<std::vector<uint32_t>> kids(C);
  std::vector<uint32_t> roots;
  std::vector<Flex> flex(C);
  for (size_t c = 0; c < C; ++c) {
    flex[c] = flex_of(db.contexts[c]);
    (db.contexts[c].parent == kNone ? roots : kids[db.contexts[c].parent]).push_back(uint32_t(c));
  }
  auto array_size = [&](const std::vector<uint32_t> &v) {
    size_t n = 0;
    for (uint32_t c : v) n += 0x18 + 8 * size_t(flex[c].words);
    return n;
  };
  size_t ct = reserve(o, 0x10, 8);
  // Breadth-first order of the contexts and the place of each array.
  std::vector<uint32_t> order(roots);
  std::vector<size_t> at(C, 0), kids_at(C, 0);
  size_t roots_at = roots.empty() ? 0 : reserve(o, array_size(roots), 8);
  {
    size_t p = roots_at;
    for (uint32_t c : roots) {
      at[c] = p;
      p += 0x18 + 8 * size_t(flex[c].words);
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    uint32_t c = order[i];
    if (kids[c].empty()) continue;
    kids_at[c] = reserve(o, array_size(kids[c]), 8);
    size_t p = kids_at[c];
    for (uint32_t k : kids[c]) {
      at[k] = p;
      p += 0x18 + 8 * size_t(flex[k].words);
      order.push_back(k);
    }
  }
  check(order.size() == C, "a context is not reachable from a root");
  w64(o, ct + 0x00, array_size(roots));
  w64(o, ct + 0x08, roots_at);
  for (uint32_t c : order) {
    const Context &x = db.contexts[c];
    const Flex &f = flex[c];
    size_t p = at[c];
    w64(o, p + 0x00, kids[c].empty() ? 0 : array_size(kids[c]));
    w64(o, p + 0x08, kids_at[c]);
    w32(o, p + 0x10, c);
    w8(o, p + 0x14, uint8_t((f.fn >= 0 ? 1 : 0) | (f.file >= 0 ? 2 : 0) | (f.module >= 0 ? 4 : 0)));
    w8(o, p + 0x15, x.relation);
    w8(o, p + 0x16, x.lexical);
    w8(o, p + 0x17, f.words);
    size_t fx = p + 0x18;
    if (f.fn >= 0) w64(o, fx + f.fn, fss + 40 * size_t(x.function));
    if (f.file >= 0) {
      w64(o, fx + f.file, sfs + 16 * size_t(x.file));
      w32(o, fx + f.line, x.line);
    }
    if (f.module >= 0) {
      w64(o, fx + f.module, lms + 16 * size_t(x.module));
      w64(o, fx + f.offset, x.offset);
    }
  }
  section(0x40, ct);

  pad_to(o, 8);
  o.append("_meta.db", 8);  // footer
  return o;
}

std::string encode_profile(const Database &db) {
  const size_t M = db.metrics.size(), C = db.contexts.size(), P = db.profiles.size();
  check(db.point.size() == P, "values not sized (resize_values)");
  std::string o;
  header(o, "HPCTOOLKITprof", 0x30);  // profile.db header, END 0x30

  // Profile Info section: pProfiles, nProfiles, szProfile (0x0c), then {PI}
  // of 40: the summary profile first, then one per profile.
  size_t pi = reserve(o, 0x0d, 8);
  size_t pis = reserve(o, 40 * (P + 1), 8);
  w64(o, pi + 0x00, pis);
  w32(o, pi + 0x08, uint32_t(P + 1));
  w8(o, pi + 0x0c, 40);
  w64(o, 0x10, o.size() - pi);
  w64(o, 0x18, pi);

  // Hierarchical Identifier Tuple section: nIds, then {Id} of 16 from 0x08.
  // The summary profile has none (pIdTuple 0).
  size_t it = reserve(o, 0, 8);
  for (size_t p = 0; p < P; ++p) {
    const auto &ids = db.profiles[p];
    size_t t = reserve(o, 8 + 16 * ids.size(), 8);
    w16(o, t, uint16_t(ids.size()));
    for (size_t i = 0; i < ids.size(); ++i) {
      size_t e = t + 8 + 16 * i;
      w8(o, e + 0x00, ids[i].kind);
      w16(o, e + 0x02, ids[i].physical ? 1 : 0);
      w32(o, e + 0x04, ids[i].logical);
      w64(o, e + 0x08, ids[i].physical ? ids[i].physical_id : ids[i].logical);
    }
    w64(o, pis + 40 * (p + 1) + 0x20, t);
  }
  w64(o, 0x20, o.size() - it);
  w64(o, 0x28, it);

  // Profile-Major Sparse Value Blocks: {Val} (u16 metricId, f64) by
  // context, then {Idx} (u32 ctxId, u64 startIndex), outside the sections.
  std::vector<std::vector<double>> prop(P + 1, std::vector<double>(C * 2 * M, 0.0));
  std::vector<double> exc, inc;
  for (size_t p = 0; p < P; ++p) {
    db.propagate(uint32_t(p), exc, inc);
    for (size_t i = 0; i < C * M; ++i) {
      prop[p + 1][2 * i] = exc[i];
      prop[p + 1][2 * i + 1] = inc[i];
      prop[0][2 * i] += exc[i];  // summary: "$$" combined by sum
      prop[0][2 * i + 1] += inc[i];
    }
  }
  for (size_t p = 0; p <= P; ++p) {
    const auto &v = prop[p];
    uint64_t n = 0, nctx = 0;
    for (size_t i = 0; i < v.size(); ++i) n += v[i] != 0;
    for (size_t c = 0; c < C; ++c)
      for (size_t m = 0; m < 2 * M; ++m)
        if (v[c * 2 * M + m] != 0) {
          ++nctx;
          break;
        }
    size_t vals = reserve(o, 10 * n, 8);
    size_t idx = reserve(o, 12 * nctx, 8);
    uint64_t k = 0, j = 0;
    for (size_t c = 0; c < C; ++c) {
      bool first = true;
      for (size_t m = 0; m < 2 * M; ++m) {
        double x = v[c * 2 * M + m];
        if (x == 0) continue;
        if (first) {
          w32(o, idx + 12 * j, uint32_t(c));
          w64(o, idx + 12 * j + 4, k);
          ++j;
          first = false;
        }
        w16(o, vals + 10 * k, uint16_t(m));
        wf64(o, vals + 10 * k + 2, x);
        ++k;
      }
    }
    size_t b = pis + 40 * p;
    w64(o, b + 0x00, n);
    w64(o, b + 0x08, vals);
    w32(o, b + 0x10, uint32_t(nctx));
    w64(o, b + 0x18, idx);
  }
  pad_to(o, 8);
  o.append("_prof.db", 8);  // footer
  return o;
}

std::string encode_cct(const Database &db) {
  const size_t M = db.metrics.size(), C = db.contexts.size(), P = db.profiles.size();
  std::string o;
  header(o, "HPCTOOLKITctxt", 0x20);  // cct.db header, END 0x20

  // Context Info section: pCtxs, nCtxs, szCtx (32), then {CI} per ctxId.
  size_t ci = reserve(o, 0x0d, 8);
  size_t cis = reserve(o, 32 * C, 8);
  w64(o, ci + 0x00, cis);
  w32(o, ci + 0x08, uint32_t(C));
  w8(o, ci + 0x0c, 32);
  w64(o, 0x10, o.size() - ci);
  w64(o, 0x18, ci);

  std::vector<std::vector<double>> exc(P), inc(P);
  for (size_t p = 0; p < P; ++p) db.propagate(uint32_t(p), exc[p], inc[p]);
  auto value = [&](size_t p, size_t c, size_t m) {
    return (m & 1 ? inc : exc)[p][c * M + m / 2];
  };
  // Context-Major Sparse Value Blocks: {Val} (u32 profIndex, f64) by
  // metric, then {Idx} (u16 metricId, u64 startIndex). No summary profile.
  for (size_t c = 0; c < C; ++c) {
    uint64_t n = 0, nm = 0;
    for (size_t m = 0; m < 2 * M; ++m) {
      bool any = false;
      for (size_t p = 0; p < P; ++p)
        if (value(p, c, m) != 0) ++n, any = true;
      nm += any;
    }
    size_t vals = reserve(o, 12 * n, 8);
    size_t idx = reserve(o, 10 * nm, 8);
    uint64_t k = 0, j = 0;
    for (size_t m = 0; m < 2 * M; ++m) {
      bool first = true;
      for (size_t p = 0; p < P; ++p) {
        double x = value(p, c, m);
        if (x == 0) continue;
        if (first) {
          w16(o, idx + 10 * j, uint16_t(m));
          w64(o, idx + 10 * j + 2, k);
          ++j;
          first = false;
        }
        w32(o, vals + 12 * k, uint32_t(p + 1));
        wf64(o, vals + 12 * k + 4, x);
        ++k;
      }
    }
    size_t b = cis + 32 * c;
    w64(o, b + 0x00, n);
    w64(o, b + 0x08, vals);
    w16(o, b + 0x10, uint16_t(nm));
    w64(o, b + 0x18, idx);
  }
  pad_to(o, 8);
  o.append("__ctx.db", 8);  // footer
  return o;
}

// ── trace.db ──

uint32_t TraceLines::add_line(uint32_t prof) {
  lines_.emplace_back();
  Line &l = lines_.back();
  l.prof = prof;
  l.path = dir_ + "/" + prefix_ + std::to_string(lines_.size() - 1);
  l.f = std::fopen(l.path.c_str(), "w+b");
  if (!l.f) throw Error(USCOPE_ERR_IO, l.path + ": " + std::strerror(errno));
  return uint32_t(lines_.size() - 1);
}

void TraceLines::set_line(uint32_t line, uint32_t prof, uint32_t ctx) {
  Line &l = lines_.at(line);
  l.prof = prof;
  l.later = ctx;
}

uint32_t TraceLines::adopt(TraceLines &other) {
  const uint32_t from = uint32_t(lines_.size());
  for (Line &l : other.lines_) lines_.push_back(std::move(l));
  other.lines_.clear();
  samples_ += other.samples_;
  other.samples_ = 0;
  return from;
}

TraceLines::~TraceLines() {
  for (Line &l : lines_)
    if (l.f) {
      std::fclose(l.f);
      ::unlink(l.path.c_str());
    }
}

void TraceLines::put(Line &l) {
  // {Elem}: u64 timestamp, u32 ctxId (12 bytes, no padding).
  char e[12];
  for (int i = 0; i < 8; ++i) e[i] = char(l.ts >> (8 * i));
  for (int i = 0; i < 4; ++i) e[8 + i] = char(l.ctx >> (8 * i));
  l.buf.append(e, 12);
  ++l.count;
  if (l.buf.size() >= (1u << 16)) {
    if (std::fwrite(l.buf.data(), 1, l.buf.size(), l.f) != l.buf.size())
      throw Error(USCOPE_ERR_IO, l.path + ": " + std::strerror(errno));
    l.buf.clear();
  }
}

void TraceLines::sample(uint32_t line, uint64_t ts, uint32_t ctx) {
  Line &l = lines_.at(line);
  if (l.pending) {
    if (ts < l.ts) throw Error(USCOPE_ERR_INTERNAL, "hpctoolkit: trace line timestamps went back");
    if (ts == l.ts) {  // the later sample at the same time wins
      l.ctx = ctx;
      return;
    }
    if (ctx == l.ctx) return;  // still in the same context
    put(l);
  }
  l.pending = true;
  l.ts = ts;
  l.ctx = ctx;
  ++samples_;
}

uint64_t TraceLines::finish(const std::string &path) {
  for (Line &l : lines_) {
    if (l.pending) put(l), l.pending = false;
    if (!l.buf.empty() && std::fwrite(l.buf.data(), 1, l.buf.size(), l.f) != l.buf.size())
      throw Error(USCOPE_ERR_IO, l.path + ": " + std::strerror(errno));
    l.buf.clear();
    if (std::fflush(l.f) != 0) throw Error(USCOPE_ERR_IO, l.path + ": " + std::strerror(errno));
  }
  std::FILE *out = std::fopen(path.c_str(), "wb");
  if (!out) throw Error(USCOPE_ERR_IO, path + ": " + std::strerror(errno));
  struct Closer {
    std::FILE *f;
    ~Closer() {
      if (f) std::fclose(f);
    }
  } closer{out};
  // Header, then the Trace Headers section: pTraces, nTraces, szTrace (24),
  // then {TH} per line; then the lines, each 8-aligned (pStart is *(8)).
  const size_t T = lines_.size();
  // The lines in profile order (the order they were added in, but for the
  // NPU engines' lines, made as their first event came and numbered after).
  std::vector<size_t> order(T);
  for (size_t i = 0; i < T; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return lines_[x].prof < lines_[y].prof; });
  std::string h;
  header(h, "HPCTOOLKITtrce", 0x20);
  size_t th = reserve(h, 0x0d, 8);
  size_t ths = reserve(h, 24 * T, 8);
  w64(h, th + 0x00, ths);
  w32(h, th + 0x08, uint32_t(T));
  w8(h, th + 0x0c, 24);
  w64(h, 0x10, h.size() - th);
  w64(h, 0x18, th);
  uint64_t pos = h.size();
  for (size_t i = 0; i < T; ++i) {
    pos = (pos + 7) & ~uint64_t{7};
    w32(h, ths + 24 * i + 0x00, lines_[order[i]].prof);
    w64(h, ths + 24 * i + 0x08, pos);
    pos += 12 * lines_[order[i]].count;
    w64(h, ths + 24 * i + 0x10, pos);
  }
  auto put_out = [&](const void *p, size_t n) {
    if (n && std::fwrite(p, 1, n, out) != n) throw Error(USCOPE_ERR_IO, path + ": " + std::strerror(errno));
  };
  put_out(h.data(), h.size());
  uint64_t at = h.size();
  std::vector<char> chunk(12 << 16);  // whole {Elem}s
  for (size_t i : order) {
    Line &l = lines_[i];
    static const char zeros[8] = {};
    size_t gap = size_t(((at + 7) & ~uint64_t{7}) - at);
    put_out(zeros, gap);
    at += gap;
    std::rewind(l.f);
    uint64_t left = 12 * l.count;
    while (left) {
      size_t n = std::fread(chunk.data(), 1, size_t(std::min<uint64_t>(left, chunk.size())), l.f);
      if (n == 0 || n % 12) throw Error(USCOPE_ERR_IO, l.path + ": short read");
      if (l.later != kLater)
        for (size_t k = 8; k < n; k += 12) {
          const uint32_t ctx = uint32_t(uint8_t(chunk[k])) | uint32_t(uint8_t(chunk[k + 1])) << 8 |
                               uint32_t(uint8_t(chunk[k + 2])) << 16 | uint32_t(uint8_t(chunk[k + 3])) << 24;
          if (ctx == kLater)
            for (int j = 0; j < 4; ++j) chunk[k + j] = char(l.later >> (8 * j));
        }
      put_out(chunk.data(), n);
      left -= n;
      at += n;
    }
    std::fclose(l.f);
    l.f = nullptr;
    ::unlink(l.path.c_str());
  }
  if (std::fflush(out) != 0) throw Error(USCOPE_ERR_IO, path + ": " + std::strerror(errno));
  return at;
}

}  // namespace uscope::exporter::hpctk
