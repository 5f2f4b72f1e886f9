// The HPCToolkit database v4 export (uscope export --to hpctoolkit). The four
// files are read back by a reader written here from
// ../shared/specs/hpctoolkit-db-formats.md alone (namespace hpcread: it
// shares no code with src/export/hpctoolkit_db.*), which checks every
// header, format identifier, version, section pointer and size, alignment
// and footer; the values it reads are compared with the analysis layer's
// answers for the same window.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "export/hpctoolkit_db.hpp"
#include "support/cli_run.hpp"
#include "support/test_util.hpp"
#include "test_protocol_util.hpp"
#include "uscope/analysis.h"
#include "uscope/export.h"
#include "uscope/convert.h"

namespace {

using uscope::test::TempDir;

// ── the independent reader ──
namespace hpcread {

struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define HPC_REQUIRE(cond, what)                                        \
  do {                                                                 \
    if (!(cond)) throw Bad(std::string(what) + " (" #cond ")");       \
  } while (0)

struct File {
  std::string b;
  explicit File(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    HPC_REQUIRE(f.good(), "cannot open " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    b = ss.str();
  }
  // Little-endian integers ("Formats legend").
  uint64_t le(uint64_t off, int n) const {
    HPC_REQUIRE(off + uint64_t(n) <= b.size(), "read past the end at " + std::to_string(off));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | uint8_t(b[off + i]);
    return v;
  }
  uint8_t u8(uint64_t o) const { return uint8_t(le(o, 1)); }
  uint16_t u16(uint64_t o) const { return uint16_t(le(o, 2)); }
  uint32_t u32(uint64_t o) const { return uint32_t(le(o, 4)); }
  uint64_t u64(uint64_t o) const { return le(o, 8); }
  double f64(uint64_t o) const {
    uint64_t v = u64(o);
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
  // A NUL-terminated string that lies within [lo, hi).
  std::string str(uint64_t p, uint64_t lo, uint64_t hi) const {
    HPC_REQUIRE(p >= lo && p < hi, "string pointer outside its section");
    size_t e = b.find('\0', p);
    HPC_REQUIRE(e != std::string::npos && e < hi, "string not terminated within its section");
    return b.substr(p, e - p);
  }
  // Format identifier (14 bytes), major 4, minor 0.
  void head(const char *magic) const {
    HPC_REQUIRE(b.size() >= 16 && b.compare(0, 14, magic) == 0, std::string("magic ") + magic);
    HPC_REQUIRE(u8(0x0e) == 4, "majorVersion 4");
    HPC_REQUIRE(u8(0x0f) == 0, "minorVersion 0");
  }
  void footer(const char *f) const {
    HPC_REQUIRE(b.size() >= 8 && b.compare(b.size() - 8, 8, f) == 0, std::string("footer ") + f);
  }
};

struct Section {
  uint64_t sz = 0, p = 0;
  bool in(uint64_t a, uint64_t n = 1) const { return a >= p && a + n <= p + sz; }
};

struct Ctx {
  uint32_t id = 0;
  int64_t parent = -1;
  uint8_t relation = 0, lexical = 0;
  bool has_fn = false, has_src = false, has_point = false;
  std::string fn, file, module;
  uint32_t line = 0;
  uint64_t offset = 0;
};

struct Meta {
  std::string title, description;
  std::vector<std::string> id_names;
  // name -> scope -> (propMetricId, statMetricId)
  std::map<std::string, std::map<std::string, std::pair<uint16_t, uint16_t>>> metrics;
  std::vector<std::string> modules, files;
  struct Fn {
    std::string name, module, file;
    uint64_t offset;
    uint32_t line;
  };
  std::vector<Fn> functions;
  std::map<uint32_t, Ctx> ctxs;
  uint16_t metric(const std::string &name, const std::string &scope) const {
    auto m = metrics.find(name);
    HPC_REQUIRE(m != metrics.end(), "metric " + name);
    auto s = m->second.find(scope);
    HPC_REQUIRE(s != m->second.end(), "scope " + scope + " of " + name);
    return s->second.first;
  }
};

Meta read_meta(const std::string &path) {
  File f(path);
  Meta m;
  f.head("HPCTOOLKITmeta");
  f.footer("_meta.db");
  HPC_REQUIRE(f.b.size() >= 0x90 + 8, "meta.db header");
  // Header: 8 (size, pointer) pairs from 0x10; alignment (8) except the strings (1).
  Section s[8];
  for (int i = 0; i < 8; ++i) {
    s[i].sz = f.u64(0x10 + 16 * i);
    s[i].p = f.u64(0x18 + 16 * i);
    HPC_REQUIRE(s[i].p >= 0x90 && s[i].p + s[i].sz <= f.b.size() - 8, "meta.db section within the file");
    if (i != 4) HPC_REQUIRE(s[i].p % 8 == 0, "meta.db section pointer 8-aligned");
  }
  for (int i = 0; i < 8; ++i)
    for (int j = i + 1; j < 8; ++j)
      HPC_REQUIRE(s[i].p + s[i].sz <= s[j].p || s[j].p + s[j].sz <= s[i].p, "meta.db sections overlap");
  const Section &gp = s[0], &in = s[1], &pm = s[2], &ct = s[3], &st = s[4], &lm = s[5], &sf = s[6], &fs = s[7];
  // General Properties.
  HPC_REQUIRE(gp.sz >= 0x10, "general properties size");
  m.title = f.str(f.u64(gp.p), gp.p, gp.p + gp.sz);
  m.description = f.str(f.u64(gp.p + 8), gp.p, gp.p + gp.sz);
  // Identifier Names.
  HPC_REQUIRE(in.sz >= 9, "id names size");
  uint64_t pp = f.u64(in.p);
  uint8_t nk = f.u8(in.p + 8);
  HPC_REQUIRE(pp % 8 == 0 && in.in(pp, 8 * uint64_t(nk)), "ppNames within the section");
  for (uint8_t k = 0; k < nk; ++k) m.id_names.push_back(f.str(f.u64(pp + 8 * k), in.p, in.p + in.sz));
  // Performance Metrics: {MD} 24, {PS} 24, {SS} 16.
  HPC_REQUIRE(pm.sz >= 0x0f, "metrics size");
  uint64_t pmd = f.u64(pm.p);
  uint32_t nm = f.u32(pm.p + 8);
  uint8_t szm = f.u8(pm.p + 0x0c), szs = f.u8(pm.p + 0x0d), szsum = f.u8(pm.p + 0x0e);
  HPC_REQUIRE(szm == 24 && szs == 24 && szsum == 16, "szMetric 24, szScope 24, szSummary 16");
  HPC_REQUIRE(nm == 0 || (pmd % 8 == 0 && pm.in(pmd, uint64_t(nm) * szm)), "pMetrics within the section");
  std::set<uint16_t> prop_ids;
  for (uint32_t i = 0; i < nm; ++i) {
    uint64_t md = pmd + uint64_t(i) * szm;
    std::string name = f.str(f.u64(md), pm.p, pm.p + pm.sz);
    uint16_t nsc = f.u16(md + 8);
    uint64_t psc = f.u64(md + 0x10);
    HPC_REQUIRE(psc % 8 == 0 && pm.in(psc, uint64_t(nsc) * szs), "pScopes within the section");
    for (uint16_t j = 0; j < nsc; ++j) {
      uint64_t ps = psc + uint64_t(j) * szs;
      std::string scope = f.str(f.u64(ps), pm.p, pm.p + pm.sz);
      uint16_t nsum = f.u16(ps + 8), prop = f.u16(ps + 0x0a);
      uint64_t psum = f.u64(ps + 0x10);
      HPC_REQUIRE(psum % 8 == 0 && pm.in(psum, uint64_t(nsum) * szsum), "pSummaries within the section");
      HPC_REQUIRE(prop_ids.insert(prop).second, "propMetricId unique");
      HPC_REQUIRE(nsum >= 1, "a summary statistic");
      uint64_t ss = psum;
      HPC_REQUIRE(f.str(f.u64(ss), pm.p, pm.p + pm.sz) == "$$", "formula $$");
      HPC_REQUIRE(f.u8(ss + 8) <= 2, "combine enumeration");
      m.metrics[name][scope] = {prop, f.u16(ss + 0x0a)};
    }
  }
  // Load Modules, Source Files ({LMS}/{SFS} 16) and Functions ({FS} 40).
  auto table = [&](const Section &sec, uint16_t want, std::vector<uint64_t> &at) {
    HPC_REQUIRE(sec.sz >= 0x0e, "table section size");
    uint64_t p = f.u64(sec.p);
    uint32_t n = f.u32(sec.p + 8);
    uint16_t sz = f.u16(sec.p + 0x0c);
    HPC_REQUIRE(sz == want, "table element size");
    HPC_REQUIRE(n == 0 || (p % 8 == 0 && sec.in(p, uint64_t(n) * sz)), "table within its section");
    for (uint32_t i = 0; i < n; ++i) at.push_back(p + uint64_t(i) * sz);
  };
  std::vector<uint64_t> lms, sfs, fss;
  table(lm, 16, lms);
  table(sf, 16, sfs);
  table(fs, 40, fss);
  std::map<uint64_t, std::string> mod_at, file_at, fn_at;
  for (uint64_t p : lms) m.modules.push_back(mod_at[p] = f.str(f.u64(p + 8), st.p, st.p + st.sz));
  for (uint64_t p : sfs) m.files.push_back(file_at[p] = f.str(f.u64(p + 8), st.p, st.p + st.sz));
  for (uint64_t p : fss) {
    Meta::Fn fn;
    uint64_t pn = f.u64(p), pmod = f.u64(p + 8), pf = f.u64(p + 0x18);
    HPC_REQUIRE(pn || pmod || pf, "a function has a name, module or file");
    fn.name = pn ? f.str(pn, st.p, st.p + st.sz) : "";
    HPC_REQUIRE(!pmod || mod_at.count(pmod), "pModule points at a module");
    HPC_REQUIRE(!pf || file_at.count(pf), "pFile points at a file");
    fn.module = pmod ? mod_at[pmod] : "";
    fn.file = pf ? file_at[pf] : "";
    fn.offset = f.u64(p + 0x10);
    fn.line = f.u32(p + 0x20);
    m.functions.push_back(fn);
    fn_at[p] = fn.name;
  }
  // Context Tree: arrays of {Ctx} whose size comes from nFlexWords.
  HPC_REQUIRE(ct.sz >= 0x10, "context tree size");
  struct Todo {
    uint64_t p, sz;
    int64_t parent;
  };
  std::vector<Todo> todo{{f.u64(ct.p + 8), f.u64(ct.p), -1}};
  HPC_REQUIRE((todo[0].p == 0) == (todo[0].sz == 0), "pRoots 0 iff szRoots 0");
  while (!todo.empty()) {
    Todo t = todo.back();
    todo.pop_back();
    if (t.sz == 0) continue;
    HPC_REQUIRE(t.p % 8 == 0 && ct.in(t.p, t.sz), "context array within the section");
    uint64_t p = t.p, end = t.p + t.sz;
    while (p < end) {
      HPC_REQUIRE(p + 0x18 <= end, "context within its array");
      Ctx c;
      uint64_t szc = f.u64(p), pc = f.u64(p + 8);
      HPC_REQUIRE((pc == 0) == (szc == 0), "pChildren 0 iff szChildren 0");
      c.id = f.u32(p + 0x10);
      uint8_t flags = f.u8(p + 0x14);
      c.relation = f.u8(p + 0x15);
      c.lexical = f.u8(p + 0x16);
      uint8_t words = f.u8(p + 0x17);
      HPC_REQUIRE(c.relation <= 2 && c.lexical <= 3, "relation / lexicalType enumerations");
      HPC_REQUIRE(p + 0x18 + 8 * uint64_t(words) <= end, "flex within its array");
      c.parent = t.parent;
      // flex: u64 in the next full word; u32 in the next free 4 bytes.
      uint64_t fx = p + 0x18, word = 0;
      int64_t half = -1;
      auto next64 = [&] { return fx + 8 * word++; };
      auto next32 = [&] {
        if (half >= 0) {
          uint64_t at = fx + 8 * uint64_t(half) + 4;
          half = -1;
          return at;
        }
        half = int64_t(word);
        return fx + 8 * word++;
      };
      if (flags & 1) {
        c.has_fn = true;
        uint64_t q = f.u64(next64());
        HPC_REQUIRE(fn_at.count(q), "pFunction points at a function");
        c.fn = fn_at[q];
      }
      if (flags & 2) {
        c.has_src = true;
        uint64_t q = f.u64(next64());
        HPC_REQUIRE(file_at.count(q), "pFile points at a file");
        c.file = file_at[q];
        c.line = f.u32(next32());
      }
      if (flags & 4) {
        c.has_point = true;
        uint64_t q = f.u64(next64());
        HPC_REQUIRE(mod_at.count(q), "pModule points at a module");
        c.module = mod_at[q];
        c.offset = f.u64(next64());
      }
      HPC_REQUIRE(word == words, "nFlexWords matches the flags");
      HPC_REQUIRE(m.ctxs.emplace(c.id, c).second, "ctxId unique");
      todo.push_back({pc, szc, int64_t(c.id)});
      p += 0x18 + 8 * uint64_t(words);
    }
  }
  return m;
}

// (profIdx or ctxId, ...) -> value maps.
using Values = std::map<std::tuple<uint32_t, uint32_t, uint16_t>, double>;  // (prof, ctx, metric)

struct Profiles {
  std::vector<std::vector<std::tuple<uint8_t, uint16_t, uint32_t, uint64_t>>> tuples;  // kind, flags, logical, physical
  std::vector<bool> has_tuple;
  Values values;
};

Profiles read_profile(const std::string &path) {
  File f(path);
  Profiles r;
  f.head("HPCTOOLKITprof");
  f.footer("_prof.db");
  Section pi{f.u64(0x10), f.u64(0x18)}, it{f.u64(0x20), f.u64(0x28)};
  HPC_REQUIRE(pi.p % 8 == 0 && it.p % 8 == 0, "profile.db sections 8-aligned");
  HPC_REQUIRE(pi.p >= 0x30 && pi.p + pi.sz <= f.b.size() && it.p >= 0x30 && it.p + it.sz <= f.b.size(),
              "profile.db sections within the file");
  HPC_REQUIRE(pi.sz >= 0x0d, "profile info size");
  uint64_t pp = f.u64(pi.p);
  uint32_t n = f.u32(pi.p + 8);
  // szProfile: the spec's table says 0x0a, inside nProfiles (u32 at 0x08);
  // the packing rule puts it at 0x0c, and {PI} ends at 0x28 (40).
  uint8_t szp = f.u8(pi.p + 0x0c);
  HPC_REQUIRE(szp == 40, "szProfile is the END of {PI}");
  HPC_REQUIRE(n >= 1 && pp % 8 == 0 && pi.in(pp, uint64_t(n) * szp), "pProfiles within the section");
  for (uint32_t k = 0; k < n; ++k) {
    uint64_t b = pp + uint64_t(k) * szp;
    uint64_t nv = f.u64(b), pv = f.u64(b + 8), pid = f.u64(b + 0x20);
    uint32_t nc = f.u32(b + 0x10);
    uint64_t pc = f.u64(b + 0x18);
    r.has_tuple.push_back(pid != 0);
    r.tuples.emplace_back();
    if (pid) {
      HPC_REQUIRE(pid % 8 == 0 && it.in(pid, 8), "pIdTuple within the id tuple section");
      uint16_t nids = f.u16(pid);
      HPC_REQUIRE(it.in(pid, 8 + 16 * uint64_t(nids)), "ids within the id tuple section");
      for (uint16_t i = 0; i < nids; ++i) {
        uint64_t e = pid + 8 + 16 * uint64_t(i);
        r.tuples.back().emplace_back(f.u8(e), f.u16(e + 2), f.u32(e + 4), f.u64(e + 8));
      }
    }
    if (nv == 0 && nc == 0) continue;
    HPC_REQUIRE(pv % 2 == 0 && pc % 4 == 0, "pValues (2) and pCtxIndices (4) aligned");
    HPC_REQUIRE(pv < pc && pv + 10 * nv <= pc && pc + 12 * uint64_t(nc) <= f.b.size() - 8, "value block layout");
    HPC_REQUIRE(pc - (pv + 10 * nv) < 8, "only padding between pValues and pCtxIndices");
    HPC_REQUIRE(!pi.in(pv) && !it.in(pv), "values outside the sections");
    int64_t last_ctx = -1;
    for (uint32_t i = 0; i < nc; ++i) {
      uint32_t ctx = f.u32(pc + 12 * uint64_t(i));
      uint64_t s0 = f.u64(pc + 12 * uint64_t(i) + 4);
      uint64_t s1 = i + 1 < nc ? f.u64(pc + 12 * uint64_t(i + 1) + 4) : nv;
      HPC_REQUIRE(int64_t(ctx) > last_ctx, "ctx indices sorted");
      HPC_REQUIRE(s0 < s1 && s1 <= nv, "startIndex ranges");
      last_ctx = ctx;
      int last_m = -1;
      for (uint64_t j = s0; j < s1; ++j) {
        uint16_t mid = f.u16(pv + 10 * j);
        HPC_REQUIRE(int(mid) > last_m, "values sorted by metricId");
        last_m = mid;
        double v = f.f64(pv + 10 * j + 2);
        HPC_REQUIRE(v != 0, "non-zero values only");
        r.values[{k, ctx, mid}] = v;
      }
    }
  }
  return r;
}

Values read_cct(const std::string &path, uint32_t *nctxs) {
  File f(path);
  Values r;
  f.head("HPCTOOLKITctxt");
  f.footer("__ctx.db");
  Section ci{f.u64(0x10), f.u64(0x18)};
  HPC_REQUIRE(ci.p % 8 == 0 && ci.p >= 0x20 && ci.p + ci.sz <= f.b.size() && ci.sz >= 0x0d, "context info section");
  uint64_t pc = f.u64(ci.p);
  uint32_t n = f.u32(ci.p + 8);
  uint8_t szc = f.u8(ci.p + 0x0c);
  // The spec's prose says 22; {CI} is a [CSVB] of 0x20 bytes.
  HPC_REQUIRE(szc == 32, "szCtx is the END of {CI}");
  HPC_REQUIRE(pc % 8 == 0 && ci.in(pc, uint64_t(n) * szc), "pCtxs within the section");
  *nctxs = n;
  for (uint32_t c = 0; c < n; ++c) {
    uint64_t b = pc + uint64_t(c) * szc;
    uint64_t nv = f.u64(b), pv = f.u64(b + 8), pm = f.u64(b + 0x18);
    uint16_t nm = f.u16(b + 0x10);
    if (nv == 0 && nm == 0) continue;
    HPC_REQUIRE(pv % 2 == 0 && pm % 2 == 0, "pValues / pMetricIndices aligned");
    HPC_REQUIRE(pv < pm && pv + 12 * nv <= pm && pm - (pv + 12 * nv) < 8, "value block layout");
    HPC_REQUIRE(pm + 10 * uint64_t(nm) <= f.b.size() - 8 && !ci.in(pv), "values outside the section");
    int last_m = -1;
    for (uint16_t i = 0; i < nm; ++i) {
      uint16_t mid = f.u16(pm + 10 * uint64_t(i));
      uint64_t s0 = f.u64(pm + 10 * uint64_t(i) + 2), s1 = i + 1 < nm ? f.u64(pm + 10 * uint64_t(i + 1) + 2) : nv;
      HPC_REQUIRE(int(mid) > last_m && s0 < s1 && s1 <= nv, "metric indices sorted, ranges");
      last_m = mid;
      int64_t last_p = -1;
      for (uint64_t j = s0; j < s1; ++j) {
        uint32_t prof = f.u32(pv + 12 * j);
        HPC_REQUIRE(int64_t(prof) > last_p && prof >= 1, "values sorted by profIndex, no summary");
        last_p = prof;
        r[{prof, c, mid}] = f.f64(pv + 12 * j + 4);
      }
    }
  }
  return r;
}

struct Trace {
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> lines;  // profIdx -> (timestamp, ctxId)
};

Trace read_trace(const std::string &path) {
  File f(path);
  Trace t;
  f.head("HPCTOOLKITtrce");
  Section th{f.u64(0x10), f.u64(0x18)};
  HPC_REQUIRE(th.p % 8 == 0 && th.p >= 0x20 && th.p + th.sz <= f.b.size() && th.sz >= 0x0d, "trace headers section");
  uint64_t pt = f.u64(th.p);
  uint32_t n = f.u32(th.p + 8);
  uint8_t szt = f.u8(th.p + 0x0c);
  // The spec's prose says 22; {TH} ends at 0x18.
  HPC_REQUIRE(szt == 24, "szTrace is the END of {TH}");
  HPC_REQUIRE(pt % 8 == 0 && th.in(pt, uint64_t(n) * szt), "pTraces within the section");
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t h = pt + uint64_t(i) * szt;
    uint32_t prof = f.u32(h);
    uint64_t s = f.u64(h + 8), e = f.u64(h + 0x10);
    HPC_REQUIRE(s % 8 == 0 && e % 4 == 0, "pStart (8) and pEnd (4) aligned");
    HPC_REQUIRE(s <= e && (e - s) % 12 == 0 && e <= f.b.size(), "trace line bounds");
    HPC_REQUIRE(s == e || !th.in(s), "trace line outside the section");
    HPC_REQUIRE(!t.lines.count(prof), "one line per profile");
    auto &l = t.lines[prof];
    for (uint64_t p = s; p < e; p += 12) {
      uint64_t ts = f.u64(p);
      HPC_REQUIRE(l.empty() || ts > l.back().first, "timestamps increase");
      l.emplace_back(ts, f.u32(p + 8));
    }
  }
  return t;
}

}  // namespace hpcread

// ── the encoders on a calling context tree built by hand ──

TEST(HpctoolkitExport, EncodersRoundTripAHandBuiltTree) {
  namespace h = uscope::exporter::hpctk;
  TempDir dir("hpctoolkit_enc");
  h::Database db;
  db.title = "t";
  db.description = "d";
  db.modules = {"/fw.elf"};
  db.files = {"main.c", "foo.c"};
  db.functions = {{"main", 0, 0x100, 0, 3}, {"foo", 0, 0x200, 1, 10}, {"", 0, 0x300, h::kNone, 0}};
  // 0 root; 1 main (call from root); 2 main.c:5; 3 foo called from 2; 4 foo.c:11;
  // 5 instruction in foo; 6 anonymous function at 0x300 (inlined into 2).
  db.contexts.resize(7);
  db.contexts[0] = {h::kNone, h::kLexical, h::kFunction, h::kNone, h::kNone, 0, h::kNone, 0};
  db.contexts[1] = {0, h::kCall, h::kFunction, 0, 0, 3, h::kNone, 0};
  db.contexts[2] = {1, h::kLexical, h::kLine, h::kNone, 0, 5, h::kNone, 0};
  db.contexts[3] = {2, h::kCall, h::kFunction, 1, h::kNone, 0, h::kNone, 0};
  db.contexts[4] = {3, h::kLexical, h::kLine, h::kNone, 1, 11, h::kNone, 0};
  db.contexts[5] = {4, h::kLexical, h::kInstruction, 1, 1, 11, 0, 0x204};
  db.contexts[6] = {2, h::kInlinedCall, h::kFunction, 2, h::kNone, 0, h::kNone, 0};
  db.metrics = {"cycles", "insns"};
  db.profiles = {{{h::kCore, false, 0, 0}}, {{h::kGpuDevice, false, 0, 0}, {h::kGpuStream, true, 1, 77}}};
  db.resize_values();
  db.add(0, 2, 0, 10);
  db.add(0, 5, 0, 7);
  db.add(0, 4, 1, 3);
  db.add(0, 6, 0, 2);
  db.add(1, 1, 0, 5);
  {
    std::ofstream(dir.file("meta.db"), std::ios::binary) << h::encode_meta(db);
    std::ofstream(dir.file("profile.db"), std::ios::binary) << h::encode_profile(db);
    std::ofstream(dir.file("cct.db"), std::ios::binary) << h::encode_cct(db);
    h::TraceLines tl(dir.path());
    ASSERT_EQ(tl.add_line(1), 0u);
    ASSERT_EQ(tl.add_line(2), 1u);
    tl.sample(0, 100, 2);
    tl.sample(0, 101, 2);  // merged: same context
    tl.sample(0, 105, 5);
    tl.sample(0, 105, 4);  // replaces the one at 105
    tl.sample(1, 7, 1);
    tl.finish(dir.file("trace.db"));
  }
  hpcread::Meta m = hpcread::read_meta(dir.file("meta.db"));
  EXPECT_EQ(m.title, "t");
  EXPECT_EQ(m.description, "d");
  ASSERT_EQ(m.id_names.size(), 8u);
  EXPECT_EQ(m.id_names[7], "CORE");
  ASSERT_EQ(m.ctxs.size(), 7u);
  EXPECT_EQ(m.ctxs[0].parent, -1);
  EXPECT_EQ(m.ctxs[1].fn, "main");
  EXPECT_EQ(m.ctxs[1].file, "main.c");
  EXPECT_EQ(m.ctxs[1].relation, 1);
  EXPECT_EQ(m.ctxs[2].line, 5u);
  EXPECT_EQ(m.ctxs[2].parent, 1);
  EXPECT_EQ(m.ctxs[3].fn, "foo");
  EXPECT_EQ(m.ctxs[5].module, "/fw.elf");
  EXPECT_EQ(m.ctxs[5].offset, 0x204u);
  EXPECT_EQ(m.ctxs[5].line, 11u);
  EXPECT_TRUE(m.ctxs[5].has_fn && m.ctxs[5].has_src && m.ctxs[5].has_point);
  EXPECT_EQ(m.ctxs[6].relation, 2);
  EXPECT_EQ(m.ctxs[6].fn, "");
  ASSERT_EQ(m.functions.size(), 3u);
  EXPECT_EQ(m.functions[1].file, "foo.c");
  EXPECT_EQ(m.functions[1].offset, 0x200u);
  EXPECT_EQ(m.functions[2].module, "/fw.elf");
  uint16_t cyc_exc = m.metric("cycles", "function"), cyc_inc = m.metric("cycles", "execution");
  uint16_t ins_inc = m.metric("insns", "execution");
  hpcread::Profiles p = hpcread::read_profile(dir.file("profile.db"));
  ASSERT_EQ(p.tuples.size(), 3u);
  EXPECT_FALSE(p.has_tuple[0]);
  ASSERT_EQ(p.tuples[2].size(), 2u);
  EXPECT_EQ(p.tuples[2][1], std::make_tuple(uint8_t(h::kGpuStream), uint16_t(1), 1u, uint64_t(77)));
  EXPECT_EQ(p.tuples[1][0], std::make_tuple(uint8_t(h::kCore), uint16_t(0), 0u, uint64_t(0)));
  // Inclusive: 10 + 7 + 2 at main, 19 + 5 at the root of the two profiles.
  EXPECT_EQ(p.values[std::make_tuple(1u, 1u, cyc_inc)], 19);
  EXPECT_EQ(p.values[std::make_tuple(1u, 0u, cyc_inc)], 19);
  EXPECT_EQ(p.values[std::make_tuple(1u, 3u, cyc_inc)], 7);
  EXPECT_EQ(p.values[std::make_tuple(1u, 4u, ins_inc)], 3);
  // Exclusive ("function"): main keeps its line's 10, not foo's 7 nor the inlined 2.
  EXPECT_EQ(p.values[std::make_tuple(1u, 1u, cyc_exc)], 10);
  EXPECT_EQ(p.values[std::make_tuple(1u, 3u, cyc_exc)], 7);
  EXPECT_EQ(p.values[std::make_tuple(2u, 0u, cyc_inc)], 5);
  EXPECT_EQ(p.values[std::make_tuple(0u, 0u, cyc_inc)], 24);  // summary: the sum of both
  uint32_t nctx = 0;
  hpcread::Values c = hpcread::read_cct(dir.file("cct.db"), &nctx);
  EXPECT_EQ(nctx, 7u);
  for (const auto &kv : p.values)
    if (std::get<0>(kv.first) != 0) {
      auto it = c.find(kv.first);
      ASSERT_NE(it, c.end());
      EXPECT_EQ(it->second, kv.second);
    }
  EXPECT_EQ(c.size(), p.values.size() - std::count_if(p.values.begin(), p.values.end(), [](const auto &kv) {
                         return std::get<0>(kv.first) == 0;
                       }));
  hpcread::Trace t = hpcread::read_trace(dir.file("trace.db"));
  ASSERT_EQ(t.lines.size(), 2u);
  EXPECT_EQ(t.lines[1], (std::vector<std::pair<uint64_t, uint32_t>>{{100, 2}, {105, 4}}));
  EXPECT_EQ(t.lines[2], (std::vector<std::pair<uint64_t, uint32_t>>{{7, 1}}));
  // No temporary line files are left beside trace.db.
  EXPECT_FALSE(std::ifstream(dir.file(".trace-line-0")).good());
}

// The NPU engines' lines (hpctoolkit.cpp npu_pass): made as their first
// event comes, on another TraceLines (the NPU's thread), with their
// context given after the pass (kLater), adopted, and written in profile
// order whatever the order they were made in.
TEST(HpctoolkitExport, TraceLinesNumberedAfterTheirSamples) {
  namespace h = uscope::exporter::hpctk;
  TempDir dir;
  h::TraceLines tl(dir.path());
  ASSERT_EQ(tl.add_line(1), 0u);  // a core's line, profile 1
  tl.sample(0, 10, 3);
  tl.sample(0, 20, 4);
  uint64_t npu_samples = 0;
  {
    h::TraceLines other(dir.path(), ".trace-npu-");
    ASSERT_EQ(other.add_line(0), 0u);  // "VE": first event first, profile 3 below
    ASSERT_EQ(other.add_line(0), 1u);  // "TE": profile 2
    // More samples than one copy chunk of finish() (65,536 elements), so
    // that contexts are substituted across chunks.
    for (uint64_t i = 0; i < 70000; ++i) other.sample(0, 100 + i, i % 2 ? 0 : h::TraceLines::kLater);
    other.sample(1, 5, h::TraceLines::kLater);
    other.sample(1, 6, h::TraceLines::kLater);  // merged: the same context
    other.sample(1, 9, 0);
    npu_samples = other.samples();
    const uint32_t from = tl.adopt(other);
    ASSERT_EQ(from, 1u);
    EXPECT_EQ(other.samples(), 0u);
    tl.set_line(from + 0, 3, 7);
    tl.set_line(from + 1, 2, 6);
  }  // other's destructor must not close or remove the adopted lines' files
  EXPECT_EQ(tl.samples(), 2 + npu_samples);
  tl.finish(dir.file("trace.db"));

  hpcread::Trace t = hpcread::read_trace(dir.file("trace.db"));
  ASSERT_EQ(t.lines.size(), 3u);
  EXPECT_EQ(t.lines[1], (std::vector<std::pair<uint64_t, uint32_t>>{{10, 3}, {20, 4}}));
  EXPECT_EQ(t.lines[2], (std::vector<std::pair<uint64_t, uint32_t>>{{5, 6}, {9, 0}}));
  const auto &ve = t.lines[3];
  ASSERT_EQ(ve.size(), 70000u);
  for (size_t i = 0; i < ve.size(); ++i) {
    ASSERT_EQ(ve[i].first, 100 + i);
    ASSERT_EQ(ve[i].second, i % 2 ? 0u : 7u) << "sample " << i;
  }
  // The {TH} entries in profile order: 1, 2, 3 (made in the order 1, 3, 2).
  std::ifstream in(dir.file("trace.db"), std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u64 = [&](size_t o) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; --k) v = v << 8 | uint8_t(b.at(o + size_t(k)));
    return v;
  };
  const size_t pt = size_t(u64(size_t(u64(0x18))));  // the section's pTraces
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(uint32_t(u64(pt + 24 * i)), i + 1) << "{TH} " << i;
  EXPECT_FALSE(std::ifstream(dir.file(".trace-npu-0")).good());
  EXPECT_FALSE(std::ifstream(dir.file(".trace-npu-1")).good());
}

// ── the export of cpu and npu traces ──

using namespace uscope::test::proto;

const char *const kStages[] = {"fetch", "decode", "execute", "retire"};
constexpr uint16_t kEntities = 16;
constexpr uint64_t kPeriod = 1000;  // 1 ns: trace.db timestamps are cycles

std::string sh(const std::string &cmd, int *status) {
  std::string out;
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

// A small rv32imac firmware with debug info, built by the test, and a run of
// it: `run` is the instructions (pc, bits) _start retires, through its call
// of acc and acc's call of scale, each function's body walked straight
// through from its entry to its `ret` (a call descends into the callee and
// comes back after it), up to _start's closing jump.
struct Firmware {
  TempDir dir{"hpctoolkit_fw"};
  std::string elf = dir.file("fw.elf");
  std::string error;
  std::vector<std::pair<uint64_t, uint32_t>> run;
  struct Insn {
    uint64_t pc;
    uint32_t bits;
    std::string text;
  };
  std::map<std::string, std::vector<Insn>> fns;
  Firmware() {
    std::ofstream(dir.file("fw.c")) << "int scale(int x) {\n"              // 1
                                       "  return x * 3 + 1;\n"              // 2
                                       "}\n"                                // 3
                                       "int acc(int *p, int n) {\n"         // 4
                                       "  int s = 0;\n"                     // 5
                                       "  for (int i = 0; i < n; ++i)\n"    // 6
                                       "    s += scale(p[i]);\n"            // 7
                                       "  return s;\n"                      // 8
                                       "}\n"                                // 9
                                       "int buf[8];\n"                      // 10
                                       "void _start(void) {\n"              // 11
                                       "  buf[0] = acc(buf, 8);\n"          // 12
                                       "  for (;;) {}\n"                    // 13
                                       "}\n";                               // 14
    int st = 0;
    const std::string out = sh("riscv64-unknown-elf-gcc -march=rv32imac -mabi=ilp32 -O1 -g -fno-inline -nostdlib -o '" +
                                   elf + "' '" + dir.file("fw.c") + "'",
                               &st);
    if (st != 0) {
      error = "riscv64-unknown-elf-gcc failed (Debian: gcc-riscv64-unknown-elf): " + out;
      return;
    }
    // The instructions from objdump (an outside tool), not from the exporter's ELF reader.
    const std::string dis = sh("riscv64-unknown-elf-objdump -d '" + elf + "'", &st);
    if (st != 0) {
      error = "riscv64-unknown-elf-objdump failed: " + dis;
      return;
    }
    std::istringstream in(dis);
    std::string line, fn;
    while (std::getline(in, line)) {
      // "00010074 <scale>:" then "   10074:\t1141                \taddi\tsp,sp,-16"
      if (line.size() > 3 && line.back() == ':' && line.find(" <") != std::string::npos) {
        fn = line.substr(line.find(" <") + 2);
        fn = fn.substr(0, fn.size() - 2);
        continue;
      }
      const size_t colon = line.find(":\t");
      if (colon == std::string::npos || line.empty() || line[0] != ' ' || fn.empty()) continue;
      std::istringstream f(line.substr(colon + 2));
      std::string hex;
      f >> hex;
      std::string text;
      std::getline(f, text);
      text.erase(0, text.find_first_not_of(" \t"));
      fns[fn].push_back({std::stoull(line.substr(0, colon), nullptr, 16), uint32_t(std::stoul(hex, nullptr, 16)), text});
    }
    if (!fns.count("_start") || !fns.count("acc") || !fns.count("scale")) {
      error = "functions missing from the firmware: " + dis;
      return;
    }
    walk("_start", 0);
  }
  void walk(const std::string &name, int depth) {
    for (const Insn &i : fns[name]) {
      run.emplace_back(i.pc, i.bits);
      const std::string op = i.text.substr(0, i.text.find_first_of(" \t"));
      if (op == "ret") return;
      if (op == "j" && name == "_start") return;
      if (op == "jal" && depth < 3)
        for (const char *callee : {"acc", "scale"})
          if (i.text.find(std::string("<") + callee + ">") != std::string::npos) walk(callee, depth + 1);
    }
  }
};

// A trace of `cores` cpu scopes running the firmware: core c fetches one
// instruction a cycle (the run over and over, from offset 5c), retires it `lat` cycles
// later in order, flushes every 11th instead, and stalls every 13 cycles.
void write_cpu_trace(const std::string &path, const Firmware &fw, int cores, uint64_t insns, uint64_t seg_ps,
                     const char *elf_prop) {
  uscope_schema_t *s = base_schema(kPeriod);
  std::vector<uscope_cpu_t *> cpu(size_t(cores), nullptr);
  std::vector<std::string> names;
  for (int c = 0; c < cores; ++c) names.push_back("core" + std::to_string(c));
  for (int c = 0; c < cores; ++c) {
    uscope_cpu_config_t cfg = cpu_config(names[size_t(c)].c_str(), "rv32imac", kStages, 4, kEntities);
    cfg.elf_path = elf_prop;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu[size_t(c)], &cfg), USCOPE_OK) << uscope_last_error();
  }
  uscope_writer_options_t o{};
  o.struct_size = sizeof o;
  o.checkpoint_interval_ps = seg_ps;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  const uint64_t lat = 5;
  for (uint64_t cy = 0; cy < insns + lat + 1; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
    for (int c = 0; c < cores; ++c) {
      uscope_cpu_t *h = cpu[size_t(c)];
      if (cy >= lat && cy - lat < insns) {
        const uint64_t k = cy - lat;
        const uint16_t slot = uint16_t(k % kEntities);
        if (k % 11 == 10) {
          ASSERT_EQ(uscope_cpu_flush(w, h, slot, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
        } else {
          ASSERT_EQ(uscope_cpu_retire(w, h, slot), USCOPE_OK);
        }
      }
      if (cy < insns) {
        const auto &insn = fw.run[(cy + uint64_t(c) * 5) % fw.run.size()];
        ASSERT_EQ(uscope_cpu_fetch(w, h, uint16_t(cy % kEntities), insn.first, insn.second), USCOPE_OK);
      }
      if (cy % 13 == 3) {
        ASSERT_EQ(uscope_cpu_stall(w, h, uint8_t((cy / 13 + uint64_t(c)) % 3)), USCOPE_OK);
      }
    }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  for (auto *h : cpu) uscope_cpu_free(h);
}

uscope_status_t export_db(const std::string &in, const std::string &out, uscope_export_stats_t *st,
                          uint64_t a = 0, uint64_t b = UINT64_MAX, const char *elf = nullptr) {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_HPCTOOLKIT;
  o.range_start = a;
  o.range_end = b;
  o.elf_path = elf;
  st->struct_size = sizeof *st;
  return uscope_export(st, in.c_str(), out.c_str(), &o);
}

// What the analysis layer says of core `scope` over [a, b].
struct CoreTruth {
  uint64_t retired = 0, last_retire = 0;
  bool any = false;
  std::map<std::pair<std::string, uint32_t>, std::pair<double, double>> by_line;  // (fn, line) -> (retired, cycles)
  std::map<std::string, uint64_t> stalls;
  uint64_t retired_in_range = 0;
};

CoreTruth truth(const std::string &path, const char *scope, uint64_t a, uint64_t b) {
  CoreTruth t;
  uscope_reader_t *r = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK);
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  o.scope = scope;
  uscope_cpu_trace_t *ct = nullptr;
  EXPECT_EQ(uscope_cpu_trace_open(&ct, r, &o), USCOPE_OK) << uscope_last_error();
  uscope_insn_iter_t *it = nullptr;
  EXPECT_EQ(uscope_cpu_trace_instructions(ct, &it, a, b), USCOPE_OK);
  uscope_insn_t i;
  uint64_t mark = a;
  while (it && uscope_insn_iter_next(it, &i) == USCOPE_OK) {
    if (i.status != USCOPE_INSN_RETIRED || i.last_cycle < a || i.last_cycle > b) continue;
    ++t.retired;
    auto &v = t.by_line[{i.function, i.source_line}];
    v.first += 1;
    // Each retirement owns the cycles since the one before (the first: since
    // the window's start); one at or before an earlier one gets none.
    v.second += double(i.last_cycle > mark ? i.last_cycle - mark : 0);
    mark = std::max(mark, i.last_cycle);
    t.last_retire = i.last_cycle;
    t.any = true;
  }
  uscope_insn_iter_free(it);
  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  EXPECT_EQ(uscope_cpu_trace_analyze(ct, &rep, a, b + 1), USCOPE_OK) << uscope_last_error();
  t.retired_in_range = rep.retired_in_range;
  for (uint32_t k = 0; k < rep.num_stalls; ++k) t.stalls[rep.stalls[k].name] = rep.stalls[k].count;
  uscope_cpu_trace_close(ct);
  uscope_reader_close(r);
  return t;
}

struct Db {
  hpcread::Meta meta;
  hpcread::Profiles prof;
  hpcread::Values cct;
  hpcread::Trace trace;
  uint32_t nctx = 0;
  explicit Db(const std::string &dir) {
    meta = hpcread::read_meta(dir + "/meta.db");
    prof = hpcread::read_profile(dir + "/profile.db");
    cct = hpcread::read_cct(dir + "/cct.db", &nctx);
    trace = hpcread::read_trace(dir + "/trace.db");
  }
  double at(uint32_t p, uint32_t ctx, const std::string &metric, const std::string &scope) const {
    auto it = prof.values.find({p, ctx, meta.metric(metric, scope)});
    return it == prof.values.end() ? 0.0 : it->second;
  }
  // The profile whose id tuple is (kind, logicalId) last.
  uint32_t profile(uint8_t kind, uint32_t logical) const {
    for (size_t p = 1; p < prof.tuples.size(); ++p)
      if (!prof.tuples[p].empty() && std::get<0>(prof.tuples[p].back()) == kind &&
          std::get<2>(prof.tuples[p].back()) == logical)
        return uint32_t(p);
    return 0;
  }
  uint32_t root() const {
    for (const auto &kv : meta.ctxs)
      if (kv.second.parent < 0) return kv.first;
    return UINT32_MAX;
  }
};

// Every check of one core's profile against the analysis layer.
void expect_core(const Db &db, uint32_t p, const CoreTruth &t, uint64_t a) {
  ASSERT_NE(p, 0u);
  const uint32_t root = db.root();
  // Retired: the analysis layer's instructions retired in the window.
  EXPECT_EQ(db.at(p, root, "retired", "execution"), double(t.retired_in_range));
  EXPECT_EQ(db.at(p, root, "retired", "execution"), double(t.retired));
  // Cycles: the window's retired cycles, from its start to the last retirement.
  EXPECT_EQ(db.at(p, root, "cycles", "execution"), t.any ? double(t.last_retire - a) : 0.0);
  // Stalls by reason: analyze's counts.
  for (const auto &kv : t.stalls) EXPECT_EQ(db.at(p, root, "stall:" + kv.first, "execution"), double(kv.second)) << kv.first;
  double stalls = 0;
  for (const auto &m : db.meta.metrics)
    if (m.first.rfind("stall:", 0) == 0) stalls += db.at(p, root, m.first, "execution");
  uint64_t want = 0;
  for (const auto &kv : t.stalls) want += kv.second;
  EXPECT_EQ(stalls, double(want));
  // Per line: each (function, line) context holds its instructions and cycles.
  std::map<std::pair<std::string, uint32_t>, std::pair<double, double>> got;
  for (const auto &kv : db.meta.ctxs) {
    const hpcread::Ctx &c = kv.second;
    if (c.lexical != 2 || c.parent < 0) continue;
    const hpcread::Ctx &f = db.meta.ctxs.at(uint32_t(c.parent));
    EXPECT_EQ(f.lexical, 0);
    EXPECT_EQ(c.relation, 0);
    const double r = db.at(p, c.id, "retired", "function"), cy = db.at(p, c.id, "cycles", "function");
    // One (function, line) appears under each calling context it ran in.
    if (r || cy) {
      got[{f.fn, c.line}].first += r;
      got[{f.fn, c.line}].second += cy;
    }
  }
  EXPECT_EQ(got, t.by_line);
  // The profile's values in cct.db are those of profile.db.
  for (const auto &kv : db.prof.values)
    if (std::get<0>(kv.first) == p) {
      auto it = db.cct.find(kv.first);
      ASSERT_NE(it, db.cct.end());
      EXPECT_EQ(it->second, kv.second);
    }
}

TEST(HpctoolkitExport, CoresFunctionsLinesAndStallsMatchTheAnalysis) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_cpu");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  ASSERT_NO_FATAL_FAILURE(write_cpu_trace(trace, fw, 2, 3000, 97 * kPeriod, fw.elf.c_str()));
  uscope_export_stats_t st{};
  ASSERT_EQ(export_db(trace, out, &st), USCOPE_OK) << uscope_last_error();
  Db db(out);
  EXPECT_EQ(st.first_cycle, 0u);
  EXPECT_EQ(st.last_cycle, 3005u);
  // Every function of the firmware met, by name, with its file.
  std::set<std::string> fns;
  for (const auto &kv : db.meta.ctxs)
    if (kv.second.lexical == 0 && kv.second.relation == 1) fns.insert(kv.second.fn);
  EXPECT_TRUE(fns.count("scale") && fns.count("acc") && fns.count("_start"));
  // The calls: scale called from acc's line 7, acc from _start's line 12.
  std::set<std::string> calls;
  for (const auto &kv : db.meta.ctxs) {
    const hpcread::Ctx &c = kv.second;
    if (c.relation != 1 || c.parent < 0) continue;
    const hpcread::Ctx &site = db.meta.ctxs.at(uint32_t(c.parent));
    if (site.lexical != 2 || site.parent < 0) continue;
    calls.insert(db.meta.ctxs.at(uint32_t(site.parent)).fn + ":" + std::to_string(site.line) + "->" + c.fn);
  }
  EXPECT_TRUE(calls.count("acc:7->scale")) << ::testing::PrintToString(calls);
  EXPECT_TRUE(calls.count("_start:12->acc")) << ::testing::PrintToString(calls);
  // Exclusive ("function") cycles of acc are those of its lines, leaving out
  // scale's; inclusive ones hold them too.
  {
    const uint32_t p0 = db.profile(7, 0);
    for (const auto &kv : db.meta.ctxs) {
      if (kv.second.fn != "acc" || kv.second.lexical != 0) continue;
      double lines = 0, callees = 0;
      for (const auto &kw : db.meta.ctxs) {
        if (kw.second.parent != int64_t(kv.first) || kw.second.lexical != 2) continue;
        lines += db.at(p0, kw.first, "cycles", "function");
        for (const auto &kx : db.meta.ctxs)
          if (kx.second.parent == int64_t(kw.first) && kx.second.relation == 1)
            callees += db.at(p0, kx.first, "cycles", "execution");
      }
      EXPECT_GT(callees, 0);
      EXPECT_EQ(db.at(p0, kv.first, "cycles", "function"), lines);
      EXPECT_EQ(db.at(p0, kv.first, "cycles", "execution"), lines + callees);
    }
  }
  EXPECT_EQ(db.meta.modules, std::vector<std::string>{fw.elf});
  for (int c = 0; c < 2; ++c) {
    SCOPED_TRACE("core " + std::to_string(c));
    const std::string scope = "core" + std::to_string(c);
    const CoreTruth t = truth(trace, scope.c_str(), 0, 3005);
    const uint32_t p = db.profile(7 /* CORE */, uint32_t(c));
    ASSERT_NO_FATAL_FAILURE(expect_core(db, p, t, 0));
    // The core's trace line: from cycle 0, one sample per change of line, increasing.
    ASSERT_TRUE(db.trace.lines.count(p));
    const auto &l = db.trace.lines.at(p);
    ASSERT_FALSE(l.empty());
    EXPECT_EQ(l.front().first, 0u);
    EXPECT_GT(l.size(), 100u);
    for (const auto &e : l) EXPECT_TRUE(db.meta.ctxs.count(e.second));
  }
  // The summary profile sums the cores.
  const uint32_t root = db.root();
  EXPECT_EQ(db.at(0, root, "retired", "execution"),
            db.at(db.profile(7, 0), root, "retired", "execution") + db.at(db.profile(7, 1), root, "retired", "execution"));
  EXPECT_EQ(st.records, uint64_t(db.at(0, root, "retired", "execution")));
  // bytes_out: the four files.
  uint64_t bytes = 0;
  for (const char *f : {"meta.db", "profile.db", "cct.db", "trace.db"}) {
    std::ifstream in(out + "/" + f, std::ios::binary | std::ios::ate);
    bytes += uint64_t(in.tellg());
  }
  EXPECT_EQ(st.bytes_out, bytes);
}

TEST(HpctoolkitExport, RangeExportsOnlyTheWindow) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_range");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  ASSERT_NO_FATAL_FAILURE(write_cpu_trace(trace, fw, 1, 4000, 101 * kPeriod, fw.elf.c_str()));
  uscope_export_stats_t st{};
  ASSERT_EQ(export_db(trace, out, &st, 1234, 2345), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(st.first_cycle, 1234u);
  EXPECT_EQ(st.last_cycle, 2345u);
  Db db(out);
  const CoreTruth t = truth(trace, "core0", 1234, 2345);
  ASSERT_GT(t.retired, 1000u);
  ASSERT_NO_FATAL_FAILURE(expect_core(db, db.profile(7, 0), t, 1234));
  const auto &l = db.trace.lines.at(db.profile(7, 0));
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(l.front().first, 1234u);
  EXPECT_LE(l.back().first, 2346u);
  // A window past the end is cut there.
  ASSERT_EQ(export_db(trace, out, &st, 3000, UINT64_MAX - 1), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(st.last_cycle, 4005u);
  Db db2(out);
  ASSERT_NO_FATAL_FAILURE(expect_core(db2, db2.profile(7, 0), truth(trace, "core0", 3000, 4005), 3000));
}

// Two TE jobs overlapping on 30..40, a VE job, a DRAM transfer; events 0 .. 80.
const char *const kNpuJsonl =
    R"({"event_type":"TRACE_META","version":"1.0"})" "\n"
    R"({"event_type":"CMD_ENQUEUE","t_cycle":0,"cmd_id":0,"cmd_type":"MATMUL","source":"ISA","token":0,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"LOAD","model_name":"m"})" "\n"
    R"({"event_type":"CMD_START","t_cycle":10,"cmd_id":0,"core_id":0})" "\n"
    R"({"event_type":"TE_START","t_cycle":10,"job_id":1,"cmd_id":0,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"DRAM_TX_START","t_cycle":22,"tx_id":2,"channel":1,"size_bytes":4096,"cmd_id":0})" "\n"
    R"({"event_type":"TE_START","t_cycle":30,"job_id":2,"cmd_id":0,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"TE_END","t_cycle":40,"job_id":1,"cmd_id":0,"mac_count":1,"latency_cycles":30,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"DRAM_TX_END","t_cycle":44,"tx_id":2,"channel":1})" "\n"
    R"({"event_type":"TE_END","t_cycle":50,"job_id":2,"cmd_id":0,"mac_count":1,"latency_cycles":20,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"TE_START","t_cycle":60,"job_id":4,"cmd_id":0,"m":128,"n":128,"k":64,"tile_m":32,"tile_n":32,"tile_k":32,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"VE_START","t_cycle":62,"job_id":3,"cmd_id":0,"op_type":"SOFTMAX","len":4096,"batch":1,"phase":"MLP","layer_id":1})" "\n"
    R"({"event_type":"TE_END","t_cycle":66,"job_id":4,"cmd_id":0,"mac_count":1,"latency_cycles":6,"phase":"LOAD","layer_id":0,"core_id":0})" "\n"
    R"({"event_type":"VE_END","t_cycle":75,"job_id":3,"cmd_id":0,"latency_cycles":5,"phase":"MLP","layer_id":1})" "\n"
    R"({"event_type":"CMD_END","t_cycle":80,"cmd_id":0,"status":"OK","core_id":0})" "\n";

// Busy time of a line: the spans it spends in ctx, up to `end`.
uint64_t busy_of(const std::vector<std::pair<uint64_t, uint32_t>> &l, uint32_t ctx, uint64_t end) {
  uint64_t busy = 0;
  for (size_t i = 0; i < l.size(); ++i)
    if (l[i].second == ctx) busy += (i + 1 < l.size() ? l[i + 1].first : end) - l[i].first;
  return busy;
}

// line_busy: the busy time each engine's line shows, when it is not the
// analysis's busy cycles: over a range, the analysis counts a span only once
// its END is read by the window's end, while the line shows a job still
// running there up to the end.
void expect_npu(const std::string &trace, const std::string &out, uint64_t a, uint64_t b,
                const std::map<std::string, uint64_t> *line_busy = nullptr) {
  Db db(out);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, trace.c_str()), USCOPE_OK);
  uscope_npu_analysis_t *na = nullptr;
  ASSERT_EQ(uscope_npu_analysis_open(&na, r), USCOPE_OK) << uscope_last_error();
  uscope_npu_report_t rep{};
  rep.struct_size = sizeof rep;
  ASSERT_EQ(uscope_npu_analyze(na, &rep, a, b), USCOPE_OK) << uscope_last_error();
  ASSERT_GE(rep.num_engines, 3u);
  for (uint32_t k = 0; k < rep.num_engines; ++k) {
    const uscope_npu_engine_t &e = rep.engines[k];
    SCOPED_TRACE(e.name);
    // The engine's synthetic context "npu/<engine>", called from the root.
    uint32_t ctx = UINT32_MAX;
    for (const auto &kv : db.meta.ctxs)
      if (kv.second.fn == std::string("npu/") + e.name) ctx = kv.first;
    ASSERT_NE(ctx, UINT32_MAX);
    EXPECT_EQ(db.meta.ctxs.at(ctx).relation, 1);
    // Its profile (GPUDEVICE 0, GPUSTREAM k) holds the analysis's busy cycles there.
    const uint32_t p = db.profile(6 /* GPUSTREAM */, k);
    ASSERT_NE(p, 0u);
    ASSERT_EQ(db.prof.tuples[p].size(), 2u);
    EXPECT_EQ(std::get<0>(db.prof.tuples[p][0]), 4 /* GPUDEVICE */);
    EXPECT_EQ(db.at(p, ctx, "npu busy cycles", "function"), double(e.busy_cycles));
    EXPECT_EQ(db.at(p, db.root(), "npu busy cycles", "execution"), double(e.busy_cycles));
    // Its trace line is in the engine's context for those cycles (1 ns each).
    ASSERT_TRUE(db.trace.lines.count(p));
    const uint64_t want = line_busy ? line_busy->at(e.name) : e.busy_cycles;
    EXPECT_EQ(busy_of(db.trace.lines.at(p), ctx, std::min<uint64_t>(b, rep.end_cycle)), want);
  }
  uscope_npu_analysis_close(na);
  uscope_reader_close(r);
}

TEST(HpctoolkitExport, NpuEnginesBusyCyclesAndTraceLines) {
  TempDir dir("hpctoolkit_npu");
  const std::string jsonl = dir.file("w.jsonl"), trace = dir.file("w.uscope"), out = dir.file("db");
  std::ofstream(jsonl) << kNpuJsonl;
  ASSERT_EQ(uscope_convert(nullptr, jsonl.c_str(), 0, trace.c_str(), 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_export_stats_t st{};
  ASSERT_EQ(export_db(trace, out, &st), USCOPE_OK) << uscope_last_error();
  ASSERT_NO_FATAL_FAILURE(expect_npu(trace, out, 0, UINT64_MAX));
  {
    Db db(out);
    // TE: busy 10..50 and 60..66, idle (the root) between.
    uint32_t te = UINT32_MAX;
    for (const auto &kv : db.meta.ctxs)
      if (kv.second.fn == "npu/TE") te = kv.first;
    bool found = false;
    for (const auto &kv : db.trace.lines)
      if (!kv.second.empty() && kv.second.front().second == te) {
        found = true;
        EXPECT_EQ(kv.second, (std::vector<std::pair<uint64_t, uint32_t>>{
                                 {10, te}, {50, db.root()}, {60, te}, {66, db.root()}}));
      }
    EXPECT_TRUE(found);
  }
  // The JSONL itself is refused, saying what it needs.
  EXPECT_NE(export_db(jsonl, out + "2", &st), USCOPE_OK);
  EXPECT_NE(std::string(uscope_last_error()).find("needs a µScope trace"), std::string::npos) << uscope_last_error();
  EXPECT_FALSE(std::ifstream(out + "2/meta.db").good());
  // A range cuts the busy spans as the analysis does.
  ASSERT_EQ(export_db(trace, out, &st, 35, 63), USCOPE_OK) << uscope_last_error();
  // TE 35..50 and 60..63 (its END at 66 is after the window), VE 62..63, DRAM 1 35..44.
  const std::map<std::string, uint64_t> lines{{"TE", 18}, {"VE", 1}, {"DRAM 1", 9}};
  ASSERT_NO_FATAL_FAILURE(expect_npu(trace, out, 35, 63, &lines));
}

// A core (1 ns clock) and an NPU (2 ns clock) in one trace: one time axis in
// ns, the range in the core's cycles.
TEST(HpctoolkitExport, CoreAndNpuShareOneTimeAxis) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_mixed");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  {
    uscope_schema_t *s = base_schema(kPeriod);
    uint8_t npu_clk = 0;
    ASSERT_EQ(uscope_schema_add_clock(s, &npu_clk, "npu_clk", 2 * kPeriod), USCOPE_OK);
    uscope_cpu_config_t cc = cpu_config("core0", "rv32imac", kStages, 4, kEntities);
    cc.elf_path = fw.elf.c_str();
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cc), USCOPE_OK) << uscope_last_error();
    uscope_npu_config_t nc = npu_config("npu0", npu_clk, 4, 1, 1, 1);
    uscope_npu_t *npu = nullptr;
    ASSERT_EQ(uscope_npu_declare(s, &npu, &nc), USCOPE_OK) << uscope_last_error();
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, trace.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    for (uint64_t cy = 0; cy < 1000; ++cy) {
      ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
      if (cy >= 3) {
        ASSERT_EQ(uscope_cpu_retire(w, cpu, uint16_t((cy - 3) % kEntities)), USCOPE_OK);
      }
      if (cy < 990) {
        const auto &insn = fw.run[cy % fw.run.size()];
        ASSERT_EQ(uscope_cpu_fetch(w, cpu, uint16_t(cy % kEntities), insn.first, insn.second), USCOPE_OK);
      }
      // TE busy over npu cycles 100..300 (200 to 600 ns).
      if (cy == 200) {
        ASSERT_EQ(uscope_npu_te_start(w, npu, 0, USCOPE_NPU_NO_CONTEXT, 1, 0, 8, 8, 8, 8, 8, 8), USCOPE_OK);
      }
      if (cy == 600) {
        ASSERT_EQ(uscope_npu_te_end(w, npu, 0, USCOPE_NPU_NO_CONTEXT, 1, 0, 512, 200), USCOPE_OK);
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
    uscope_npu_free(npu);
  }
  uscope_export_stats_t st{};
  ASSERT_EQ(export_db(trace, out, &st, 0, 899), USCOPE_OK) << uscope_last_error();
  Db db(out);
  uint32_t te = UINT32_MAX;
  for (const auto &kv : db.meta.ctxs)
    if (kv.second.fn == "npu/TE") te = kv.first;
  ASSERT_NE(te, UINT32_MAX);
  // The core's line in ns = its cycles; the TE's in ns = 2 x its cycles.
  const auto &core = db.trace.lines.at(db.profile(7, 0));
  EXPECT_EQ(core.front().first, 0u);
  EXPECT_LE(core.back().first, 900u);
  const uint32_t pte = db.profile(6, 0);
  ASSERT_NE(pte, 0u);
  EXPECT_EQ(db.trace.lines.at(pte), (std::vector<std::pair<uint64_t, uint32_t>>{{200, te}, {600, db.root()}}));
  // Busy cycles: the npu analysis over the same span in npu cycles (0 .. 449).
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, trace.c_str()), USCOPE_OK);
  uscope_npu_analysis_t *na = nullptr;
  ASSERT_EQ(uscope_npu_analysis_open(&na, r), USCOPE_OK) << uscope_last_error();
  uscope_npu_report_t rep{};
  rep.struct_size = sizeof rep;
  ASSERT_EQ(uscope_npu_analyze(na, &rep, 0, 449), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(rep.period_ps, 2000u);
  uint64_t busy = UINT64_MAX;
  for (uint32_t k = 0; k < rep.num_engines; ++k)
    if (std::string(rep.engines[k].name) == "TE") busy = rep.engines[k].busy_cycles;
  EXPECT_EQ(busy, 200u);
  EXPECT_EQ(db.at(pte, te, "npu busy cycles", "function"), double(busy));
  // The core's figures are unchanged by the npu beside it.
  ASSERT_NO_FATAL_FAILURE(expect_core(db, db.profile(7, 0), truth(trace, "core0", 0, 899), 0));

  // The whole trace (no range): the NPU's pass runs on a thread of its own
  // beside the core's (hpctoolkit.cpp), with the same answers.
  const std::string whole = dir.file("db_whole");
  ASSERT_EQ(export_db(trace, whole, &st), USCOPE_OK) << uscope_last_error();
  Db dw(whole);
  uint32_t te_w = UINT32_MAX;
  for (const auto &kv : dw.meta.ctxs)
    if (kv.second.fn == "npu/TE") te_w = kv.first;
  ASSERT_NE(te_w, UINT32_MAX);
  const uint32_t pte_w = dw.profile(6, 0);
  ASSERT_NE(pte_w, 0u);
  EXPECT_EQ(dw.trace.lines.at(pte_w), (std::vector<std::pair<uint64_t, uint32_t>>{{200, te_w}, {600, dw.root()}}));
  ASSERT_EQ(uscope_npu_analyze(na, &rep, 0, UINT64_MAX), USCOPE_OK) << uscope_last_error();
  uint64_t busy_w = UINT64_MAX;
  for (uint32_t k = 0; k < rep.num_engines; ++k)
    if (std::string(rep.engines[k].name) == "TE") busy_w = rep.engines[k].busy_cycles;
  EXPECT_EQ(busy_w, 200u);
  EXPECT_EQ(dw.at(pte_w, te_w, "npu busy cycles", "function"), double(busy_w));
  ASSERT_NO_FATAL_FAILURE(expect_core(dw, dw.profile(7, 0), truth(trace, "core0", 0, st.last_cycle), 0));
  uscope_npu_analysis_close(na);
  uscope_reader_close(r);
}

TEST(HpctoolkitExport, FailureLeavesNoDirectory) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_fail");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  // The trace names an ELF that is not there: no lines to attribute to.
  ASSERT_NO_FATAL_FAILURE(write_cpu_trace(trace, fw, 1, 200, 50 * kPeriod, dir.file("gone.elf").c_str()));
  uscope_export_stats_t st{};
  EXPECT_NE(export_db(trace, out, &st), USCOPE_OK);
  const std::string msg = uscope_last_error();
  EXPECT_NE(msg.find("ELF"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gone.elf"), std::string::npos) << msg;
  int status = 0;
  EXPECT_EQ(sh("ls -A '" + dir.path() + "'", &status), "t.uscope\n");
  // A range after the end: refused, nothing left either.
  EXPECT_NE(export_db(trace, out, &st, 100000, UINT64_MAX, fw.elf.c_str()), USCOPE_OK);
  EXPECT_EQ(sh("ls -A '" + dir.path() + "'", &status), "t.uscope\n");
  // A good export replaces an earlier directory whole.
  ASSERT_EQ(export_db(trace, out, &st, 0, UINT64_MAX, fw.elf.c_str()), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(sh("ls -A '" + out + "'", &status), "cct.db\nmeta.db\nprofile.db\ntrace.db\n");
}

// The command: `uscope export --to hpctoolkit -o DIR --range A:B --elf F`.
TEST(HpctoolkitExport, CommandLineWithRangeAndElf) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_cli");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  // The trace names no ELF: --elf gives it.
  ASSERT_NO_FATAL_FAILURE(write_cpu_trace(trace, fw, 1, 2000, 64 * kPeriod, nullptr));
  const auto bad = uscope::test::run_cli("export '" + trace + "' --to hpctoolkit -o '" + out + "'", true);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("no ELF"), std::string::npos) << bad.out;
  const auto r = uscope::test::run_cli(
      "export '" + trace + "' --to hpctoolkit -o '" + out + "' --range 100:1099 --elf '" + fw.elf + "'", true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Db db(out);
  uscope_reader_t *rd = nullptr;
  ASSERT_EQ(uscope_reader_open(&rd, trace.c_str()), USCOPE_OK);
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  o.elf_path = fw.elf.c_str();
  uscope_cpu_trace_t *ct = nullptr;
  ASSERT_EQ(uscope_cpu_trace_open(&ct, rd, &o), USCOPE_OK) << uscope_last_error();
  uscope_perf_report_t rep{};
  rep.struct_size = sizeof rep;
  ASSERT_EQ(uscope_cpu_trace_analyze(ct, &rep, 100, 1100), USCOPE_OK);
  EXPECT_EQ(db.at(db.profile(7, 0), db.root(), "retired", "execution"), double(rep.retired_in_range));
  uint64_t stalls = 0;
  for (uint32_t k = 0; k < rep.num_stalls; ++k) {
    EXPECT_EQ(db.at(db.profile(7, 0), db.root(), std::string("stall:") + rep.stalls[k].name, "execution"),
              double(rep.stalls[k].count));
    stalls += rep.stalls[k].count;
  }
  EXPECT_GT(stalls, 0u);
  uscope_cpu_trace_close(ct);
  uscope_reader_close(rd);
}

// Figures on a large trace (reported, never asserted).
TEST(HpctoolkitExport, LargeTraceThroughput) {
  Firmware fw;
  ASSERT_EQ(fw.error, "");
  TempDir dir("hpctoolkit_big");
  const std::string trace = dir.file("t.uscope"), out = dir.file("db");
  ASSERT_NO_FATAL_FAILURE(write_cpu_trace(trace, fw, 2, 1000000, 2000 * kPeriod, fw.elf.c_str()));
  std::ifstream in(trace, std::ios::binary | std::ios::ate);
  const double mb = double(in.tellg()) / 1e6;
  uscope_export_stats_t st{};
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(export_db(trace, out, &st), USCOPE_OK) << uscope_last_error();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("[hpctoolkit] input %.1f MB, %llu instructions, %llu bytes written, %.2f s, %.1f MB/s, peak RSS %.1f MB\n",
              mb, static_cast<unsigned long long>(st.records), static_cast<unsigned long long>(st.bytes_out), s,
              mb / s, double(ru.ru_maxrss) / 1024.0);
  Db db(out);
  EXPECT_EQ(db.at(0, db.root(), "retired", "execution"), double(st.records));
}

}  // namespace
