// Konata both ways (src/export/konata_import.cpp, konata.cpp, kanata_log.cpp;
// docs/export.md "Konata (both ways)").
//
// The Kanata logs the exporter writes are read back here by an independent
// reader written from Konata's format document and its parser's rules
// (onikiri_parser.ts: a new S on a lane ends the lane's open stage, R ends
// every open stage, E may be omitted), not by the library's kanata_log.cpp.
// The traces the import writes are read through the analysis layer's C ABI
// and compared with what the logs say, and with the reference's
// konata2uscope output for the same log.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/cli_run.hpp"
#include "export/kanata_log.hpp"
#include "support/test_util.hpp"
#include "uscope/analysis.h"
#include "uscope/export.h"
#include "uscope/protocols.h"
#include "uscope/uscope.h"

namespace {

using uscope::test::TempDir;

std::string data(const char *name) { return std::string(USCOPE_UNIT_DATA_DIR) + "/konata/" + name; }
std::string conformance(const char *name) { return std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/" + name; }

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void spit(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}
bool exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// ── An independent Kanata reader ──

struct KStage {
  uint64_t lane;
  std::string name;
  uint64_t start, end;
  bool open;
};
struct KInsn {
  uint64_t id = 0, fetch = 0, end = 0;
  int status = 0;  // 0 in flight at the end of the log, 1 retired, 2 flushed
  std::vector<std::string> labels[3];
  std::vector<KStage> stages;
  std::vector<uint64_t> prods;
};
struct KLog {
  std::vector<KInsn> insns;  // in I order
  uint64_t last_cycle = 0;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t p = 0;
  for (;;) {
    const size_t q = s.find(sep, p);
    out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) return out;
    p = q + 1;
  }
}

KLog read_kanata(const std::string &text) {
  KLog log;
  std::map<uint64_t, size_t> live;  // id -> index in insns
  uint64_t cycle = 0;
  size_t n = 0;
  for (std::string line : split(text, '\n')) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto f = split(line, '\t');
    if (n == 1) {
      EXPECT_EQ(f[0], "Kanata") << "line 1";
      EXPECT_EQ(f.size() >= 2 ? f[1] : "", "0004") << "line 1";
      continue;
    }
    const std::string &c = f[0];
    auto num = [&](size_t i) -> uint64_t {
      if (i >= f.size()) {
        ADD_FAILURE() << "line " << n << ": missing field " << i << ": " << line;
        return 0;
      }
      return std::stoull(f[i]);
    };
    if (c == "C=") {
      cycle = num(1);
    } else if (c == "C") {
      cycle += num(1);
    } else if (c == "I") {
      EXPECT_EQ(live.count(num(1)), 0u) << "line " << n;
      KInsn i;
      i.id = num(1);
      i.fetch = cycle;
      live[i.id] = log.insns.size();
      log.insns.push_back(i);
    } else {
      auto it = live.find(num(1));
      if (it == live.end()) {
        ADD_FAILURE() << "line " << n << ": command for an instruction not in flight: " << line;
        continue;
      }
      KInsn &i = log.insns[it->second];
      if (c == "L") {
        const uint64_t t = num(2);
        EXPECT_LT(t, 3u) << "line " << n;
        if (t < 3) i.labels[t].push_back(f.size() > 3 ? f[3] : "");
      } else if (c == "S" || c == "E") {
        const uint64_t lane = num(2);
        EXPECT_GE(f.size(), 4u) << "line " << n;
        const std::string name = f.size() > 3 ? f[3] : "";
        if (c == "S") {
          for (auto &s : i.stages)
            if (s.lane == lane && s.open) s.open = false, s.end = cycle;
          i.stages.push_back({lane, name, cycle, cycle, true});
        } else {
          for (auto s = i.stages.rbegin(); s != i.stages.rend(); ++s)
            if (s->lane == lane && s->name == name) {
              if (s->open) s->open = false, s->end = cycle;
              break;
            }
        }
      } else if (c == "R") {
        const uint64_t t = num(3);
        EXPECT_LT(t, 2u) << "line " << n;
        i.status = t == 1 ? 2 : 1;
        i.end = cycle;
        for (auto &s : i.stages)
          if (s.open) s.open = false, s.end = cycle;
        live.erase(it);
      } else if (c == "W") {
        i.prods.push_back(num(2));
      } else {
        ADD_FAILURE() << "line " << n << ": unknown command " << line;
      }
    }
  }
  log.last_cycle = cycle;
  for (auto &kv : live) {
    KInsn &i = log.insns[kv.second];
    i.end = cycle;
    for (auto &s : i.stages)
      if (s.open) s.open = false, s.end = cycle;
  }
  return log;
}

// A log's instructions with everything that must survive a round trip, in
// an order that does not depend on ids: by fetch cycle, then label.
struct CInsn {
  uint64_t fetch, end;
  int status;
  std::vector<std::string> l0, l1;
  std::vector<std::tuple<uint64_t, std::string, uint64_t, uint64_t>> stages;  // lane, name, start, end
  std::vector<std::string> prods;                                              // keys of the producers
  bool operator==(const CInsn &o) const {
    return std::tie(fetch, end, status, l0, l1, stages, prods) ==
           std::tie(o.fetch, o.end, o.status, o.l0, o.l1, o.stages, o.prods);
  }
};
std::string key_of(const KInsn &i) {
  return std::to_string(i.fetch) + "|" + (i.labels[0].empty() ? "" : i.labels[0][0]);
}
std::ostream &operator<<(std::ostream &os, const CInsn &i) {
  os << "{fetch " << i.fetch << " end " << i.end << " status " << i.status << " l0";
  for (auto &s : i.l0) os << " [" << s << "]";
  os << " l1";
  for (auto &s : i.l1) os << " [" << s << "]";
  os << " stages";
  for (auto &s : i.stages)
    os << " " << std::get<1>(s) << "@" << std::get<0>(s) << ":" << std::get<2>(s) << "-" << std::get<3>(s);
  os << " prods";
  for (auto &p : i.prods) os << " (" << p << ")";
  return os << "}";
}
std::vector<CInsn> canon(const KLog &log) {
  std::map<uint64_t, std::string> key;
  for (const auto &i : log.insns) key[i.id] = key_of(i);
  std::vector<CInsn> out;
  for (const auto &i : log.insns) {
    CInsn c{i.fetch, i.end, i.status, i.labels[0], i.labels[1], {}, {}};
    for (const auto &s : i.stages) c.stages.emplace_back(s.lane, s.name, s.start, s.end);
    std::stable_sort(c.stages.begin(), c.stages.end(), [](const auto &a, const auto &b) {
      return std::tie(std::get<0>(a), std::get<2>(a)) < std::tie(std::get<0>(b), std::get<2>(b));
    });
    for (uint64_t p : i.prods) c.prods.push_back(key.count(p) ? key[p] : "?" + std::to_string(p));
    std::sort(c.prods.begin(), c.prods.end());
    out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const CInsn &a, const CInsn &b) {
    return std::tie(a.fetch, a.l0) < std::tie(b.fetch, b.l0);
  });
  return out;
}

void expect_same(const std::vector<CInsn> &want, const std::vector<CInsn> &got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(want[k], got[k]) << "instruction " << k;
}

// ── The library's calls ──

struct Import {
  uscope_status_t status = USCOPE_OK;
  std::string error;
  uscope_convert_stats_t stats{};
  std::vector<std::pair<uint64_t, std::string>> issues;
};

Import import_log(const std::string &in, const std::string &out, bool strict = false, uint64_t period = 0,
                  const char *dut = nullptr) {
  Import r;
  uscope_konata_import_options_t o;
  uscope_konata_import_options_init(&o);
  o.strict = strict;
  o.clock_period_ps = period;
  o.dut_name = dut;
  o.user = &r;
  o.on_issue = [](void *u, uint64_t line, const char *why) {
    static_cast<Import *>(u)->issues.emplace_back(line, why);
  };
  r.stats.struct_size = sizeof r.stats;
  r.status = uscope_import_konata(&r.stats, in.c_str(), out.c_str(), &o);
  if (r.status != USCOPE_OK) r.error = uscope_last_error();
  return r;
}

struct Export {
  uscope_status_t status = USCOPE_OK;
  std::string error;
  uscope_export_stats_t stats{};
  std::vector<std::string> notes;
};

Export export_log(const std::string &in, const std::string &out, uint64_t start = 0, uint64_t end = UINT64_MAX) {
  Export r;
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_KONATA;
  o.range_start = start;
  o.range_end = end;
  o.user = &r;
  o.on_issue = [](void *u, uint64_t, const char *why) { static_cast<Export *>(u)->notes.emplace_back(why); };
  r.stats.struct_size = sizeof r.stats;
  r.status = uscope_export(&r.stats, in.c_str(), out.c_str(), &o);
  if (r.status != USCOPE_OK) r.error = uscope_last_error();
  return r;
}

// An instruction as the analysis layer's C ABI gives it.
struct AInsn {
  uint32_t entity = 0, status = 0;
  uint64_t pc = 0, first = 0, last = 0;
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> spans;
  std::string disasm, annotations;
  std::vector<uint32_t> deps;
};
struct ATrace {
  std::vector<AInsn> insns;
  std::vector<std::string> stages;
  uint64_t period_ps = 0, max_cycle = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
};

ATrace analyze(const std::string &path) {
  ATrace t;
  uscope_reader_t *r = nullptr;
  if (uscope_reader_open(&r, path.c_str()) != USCOPE_OK) {
    ADD_FAILURE() << path << ": " << uscope_last_error();
    return t;
  }
  uscope_cpu_trace_t *ct = nullptr;
  if (uscope_cpu_trace_open(&ct, r, nullptr) != USCOPE_OK) {
    ADD_FAILURE() << path << ": " << uscope_last_error();
    uscope_reader_close(r);
    return t;
  }
  uscope_cpu_trace_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(uscope_cpu_trace_info(ct, &info), USCOPE_OK);
  t.period_ps = info.period_ps;
  t.max_cycle = info.max_cycle;
  for (uint32_t k = 0; k < info.num_stages; ++k) {
    const char *name = nullptr;
    EXPECT_EQ(uscope_cpu_trace_stage(ct, &name, k), USCOPE_OK);
    t.stages.push_back(name ? name : "");
  }
  for (uint32_t k = 0; k < info.num_metadata; ++k) {
    const char *key = nullptr, *value = nullptr;
    if (uscope_cpu_trace_metadata(ct, &key, &value, k) == USCOPE_OK) t.metadata.emplace_back(key, value);
  }
  uscope_insn_iter_t *it = nullptr;
  EXPECT_EQ(uscope_cpu_trace_instructions(ct, &it, 0, UINT64_MAX), USCOPE_OK) << uscope_last_error();
  uscope_insn_t in{};
  while (it && uscope_insn_iter_next(it, &in) == USCOPE_OK) {
    AInsn a;
    a.entity = in.entity_id;
    a.status = in.status;
    a.pc = in.pc;
    a.first = in.first_cycle;
    a.last = in.last_cycle;
    for (uint32_t s = 0; s < in.num_stages; ++s)
      a.spans.emplace_back(in.stages[s].stage < t.stages.size() ? t.stages[in.stages[s].stage] : "?",
                           in.stages[s].start_cycle, in.stages[s].end_cycle);
    a.disasm = in.disasm;
    a.annotations = in.annotations;
    a.deps.assign(in.dep_src, in.dep_src + in.num_deps);
    t.insns.push_back(std::move(a));
  }
  uscope_insn_iter_free(it);
  uscope_cpu_trace_close(ct);
  uscope_reader_close(r);
  return t;
}

void gzip_file(const std::string &in, const std::string &out) {
  const std::string text = slurp(in);
  gzFile g = gzopen(out.c_str(), "wb");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(gzwrite(g, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(g), Z_OK);
}

using Span = std::tuple<std::string, uint64_t, uint64_t>;

// ── Import ──

// The line formatter of the export's hot path: the same bytes with and
// without the id table, whatever the id's length or the table's history; a
// tab, newline or carriage return anywhere in a label (each place of the
// 8-byte scan, and its tail) becomes a space, and nothing else changes.
TEST(KonataLine, FormatterWritesWhatItShouldWithAndWithoutTheIdTable) {
  namespace k = uscope::exporter::kanata;
  using k::Cmd;
  k::IdDecimals ids;
  auto line = [&](const k::Command &c, k::IdDecimals *t) {
    std::string out(k::max_line_size(c), '\xAA');
    out.resize(static_cast<size_t>(k::format_line(out.data(), c, t) - out.data()));
    return out;
  };
  for (uint64_t id : {uint64_t{0}, uint64_t{7}, uint64_t{255}, uint64_t{256}, uint64_t{12345678},
                      uint64_t{1} << 40, UINT64_MAX - 1, uint64_t{7}, uint64_t{263}}) {
    const std::string want = "S\t" + std::to_string(id) + "\t0\tdecode\n";
    EXPECT_EQ(line({Cmd::Start, id, 0, 0, "decode"}, &ids), want);
    EXPECT_EQ(line({Cmd::Start, id, 0, 0, "decode"}, nullptr), want);
    EXPECT_EQ(line({Cmd::Retire, id, id + 1, 1, {}}, &ids),
              "R\t" + std::to_string(id) + "\t" + std::to_string(id + 1) + "\t1\n");
  }
  // C and C= carry cycles, not ids: never from the table.
  EXPECT_EQ(line({Cmd::CycleDelta, 263, 0, 0, {}}, &ids), "C\t263\n");
  EXPECT_EQ(line({Cmd::CycleAbs, 99, 0, 0, {}}, &ids), "C=\t99\n");
  for (size_t len : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{23}, size_t{40}}) {
    for (size_t at = 0; at < len; ++at) {
      for (char bad : {'\t', '\n', '\r'}) {
        std::string text(len, 'x');
        text[len - 1] = '\xC3';  // UTF-8 bytes stay as they are
        text[at] = bad;
        std::string want = text;
        want[at] = ' ';
        EXPECT_EQ(line({Cmd::Label, 5, 0, 0, text}, &ids), "L\t5\t0\t" + want + "\n") << len << " " << at;
      }
    }
    const std::string plain(len, '\x0E');  // just above what is replaced
    EXPECT_EQ(line({Cmd::Label, 5, 1, 0, plain}, &ids), "L\t5\t1\t" + plain + "\n");
  }
}

TEST(KonataImport, BasicLogGivesItsInstructionsStagesLabelsAndDependencies) {
  TempDir dir("konata");
  const std::string out = dir.file("basic.uscope");
  const Import r = import_log(data("basic.log"), out);
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_TRUE(r.issues.empty()) << r.issues[0].first << ": " << r.issues[0].second;
  EXPECT_EQ(r.stats.events_out, 4u);
  EXPECT_EQ(r.stats.skipped, 0u);
  EXPECT_EQ(r.stats.first_issue_line, 0u);
  EXPECT_EQ(r.stats.lines, 52u);

  const ATrace t = analyze(out);
  EXPECT_EQ(t.stages, (std::vector<std::string>{"F", "D", "X", "W"}));
  EXPECT_EQ(t.period_ps, 1000u);
  EXPECT_EQ(t.max_cycle, 109u);  // the log's last C: the in-flight instruction's stage ends there
  ASSERT_EQ(t.insns.size(), 4u);
  const AInsn &i0 = t.insns[0], &i1 = t.insns[1], &i2 = t.insns[2], &i3 = t.insns[3];
  EXPECT_EQ(i0.pc, 0x1000u);
  EXPECT_EQ(i0.disasm, "0x1000 addi x1, x0, 1");
  EXPECT_EQ(i0.annotations, "r1 <= 1");
  EXPECT_EQ(i0.status, USCOPE_INSN_RETIRED);
  EXPECT_EQ(i0.spans, (std::vector<Span>{{"F", 100, 101}, {"D", 101, 102}, {"X", 102, 103}, {"W", 103, 105}}));
  EXPECT_EQ(i1.disasm, "0x1004 lw x2, 0(x1)");
  // The lane-1 stage, with its lane, its start after the fetch (100) and its length.
  EXPECT_EQ(i1.annotations, "stall:stl @1 +2:3");
  EXPECT_EQ(i1.spans, (std::vector<Span>{{"F", 100, 101}, {"D", 101, 102}, {"X", 102, 105}, {"W", 105, 106}}));
  EXPECT_EQ(i1.status, USCOPE_INSN_RETIRED);
  EXPECT_EQ(i2.status, USCOPE_INSN_FLUSHED);
  EXPECT_EQ(i2.last, 106u);
  EXPECT_EQ(i2.spans, (std::vector<Span>{{"F", 101, 102}, {"D", 102, 105}, {"X", 105, 106}}));
  ASSERT_EQ(i2.deps.size(), 1u);
  EXPECT_EQ(i2.deps[0], i1.entity);
  // Instruction 3 is never retired: in flight, its last stage open to the end of the log.
  EXPECT_EQ(i3.status, USCOPE_INSN_IN_FLIGHT);
  EXPECT_EQ(i3.spans, (std::vector<Span>{{"F", 106, 107}, {"D", 107, 109}}));
  // W 3 1: its producer retired at 106, the same cycle; its slot is not reused yet.
  ASSERT_EQ(i3.deps.size(), 1u);
  EXPECT_EQ(i3.deps[0], i1.entity);
  // Slots are recycled: at most 3 in flight, so entity ids stay below 3.
  for (const auto &i : t.insns) EXPECT_LT(i.entity, 3u);
}

TEST(KonataImport, Gem5O3StyleLogWithLanesAndSquashes) {
  TempDir dir("konata");
  const std::string out = dir.file("gem5.uscope");
  const Import r = import_log(data("gem5_o3.log"), out);
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_TRUE(r.issues.empty());
  EXPECT_EQ(r.stats.events_out, 6u);
  const ATrace t = analyze(out);
  EXPECT_EQ(t.stages, (std::vector<std::string>{"F", "Dc", "Rn", "Ds", "Is", "Cm", "Rt"}));
  ASSERT_EQ(t.insns.size(), 6u);
  int flushed = 0, retired = 0;
  for (const auto &i : t.insns) {
    flushed += i.status == USCOPE_INSN_FLUSHED;
    retired += i.status == USCOPE_INSN_RETIRED;
    // gem5's labels carry no address konata2uscope reads ("0x100b0.0 : ..."): pc stays 0.
    EXPECT_EQ(i.pc, 0u);
  }
  EXPECT_EQ(flushed, 2);
  EXPECT_EQ(retired, 4);
  // The lw: 3 cycles in Is, with a memory stall on lane 1 over its first 2.
  const AInsn *lw = nullptr;
  for (const auto &i : t.insns)
    if (i.annotations.find("lw a1") != std::string::npos) lw = &i;
  ASSERT_NE(lw, nullptr);
  EXPECT_EQ(lw->spans.size(), 7u);
  EXPECT_EQ(lw->spans[4], (Span{"Is", 5004, 5007}));
  EXPECT_NE(lw->annotations.find("stall:mem @1 +4:2"), std::string::npos) << lw->annotations;
  // The squashed ones stop after Ds.
  for (const auto &i : t.insns) {
    if (i.status == USCOPE_INSN_FLUSHED) {
      EXPECT_EQ(std::get<0>(i.spans.back()), "Ds");
    }
  }
}

TEST(KonataImport, GzipLogGivesTheSameTraceAsPlain) {
  TempDir dir("konata");
  const std::string gz = dir.file("basic.log.gz");
  gzip_file(data("basic.log"), gz);
  const Import a = import_log(data("basic.log"), dir.file("plain.uscope"));
  const Import b = import_log(gz, dir.file("gz.uscope"));
  ASSERT_EQ(a.status, USCOPE_OK) << a.error;
  ASSERT_EQ(b.status, USCOPE_OK) << b.error;
  EXPECT_EQ(a.stats.lines, b.stats.lines);
  EXPECT_EQ(a.stats.bytes_in, b.stats.bytes_in);
  const ATrace ta = analyze(dir.file("plain.uscope")), tb = analyze(dir.file("gz.uscope"));
  ASSERT_EQ(ta.insns.size(), tb.insns.size());
  for (size_t k = 0; k < ta.insns.size(); ++k) {
    EXPECT_EQ(ta.insns[k].spans, tb.insns[k].spans);
    EXPECT_EQ(ta.insns[k].disasm, tb.insns[k].disasm);
    EXPECT_EQ(ta.insns[k].annotations, tb.insns[k].annotations);
    EXPECT_EQ(ta.insns[k].status, tb.insns[k].status);
  }
}

TEST(KonataImport, TruncatedGzipIsAnErrorAndWritesNothing) {
  TempDir dir("konata");
  // Big enough that the cut falls inside the deflate stream, not its header.
  std::string text = "Kanata\t0004\nC=\t0\n";
  for (int k = 0; k < 2000; ++k)
    text += "I\t" + std::to_string(k) + "\t0\t0\nL\t" + std::to_string(k) + "\t0\t" + std::to_string(k * 7919) +
            " x\nS\t" + std::to_string(k) + "\t0\tF\nC\t1\nR\t" + std::to_string(k) + "\t0\t0\n";
  spit(dir.file("big.log"), text);
  gzip_file(dir.file("big.log"), dir.file("big.log.gz"));
  const std::string gz = slurp(dir.file("big.log.gz"));
  spit(dir.file("cut.log.gz"), gz.substr(0, gz.size() / 2));
  const std::string out = dir.file("cut.uscope");
  const Import r = import_log(dir.file("cut.log.gz"), out);
  EXPECT_NE(r.status, USCOPE_OK);
  EXPECT_NE(r.error.find("cut.log.gz"), std::string::npos) << r.error;
  EXPECT_FALSE(exists(out));
}

// Every kind of malformed line, each reported with its line number and
// skipped; the good lines around them still make their instructions.
TEST(KonataImport, EachMalformedLineIsReportedWithItsNumber) {
  TempDir dir("konata");
  const std::string log =
      "Kanata\t0004\n"          // 1
      "C=\t10\n"                // 2
      "I\t0\t0\t0\n"            // 3
      "S\t0\t0\tF\n"            // 4
      "Q\t1\t2\n"               // 5 unknown command
      "I\t1\t0\n"               // 6 missing argument
      "I\tx\t0\t0\n"            // 7 not a number
      "L\t9\t0\tnope\n"         // 8 L for an instruction not in flight
      "S\t9\t0\tF\n"            // 9 S for one not in flight
      "E\t9\t0\tF\n"            // 10 E for one not in flight
      "R\t9\t0\t0\n"            // 11 R for one not in flight
      "R\t0\t0\t7\n"            // 12 R type neither retire nor flush
      "W\t9\t0\t0\n"            // 13 W consumer not in flight
      "W\t0\t77\t0\n"           // 14 W producer unknown
      "I\t0\t0\t0\n"            // 15 I of an id in flight
      "C=\t5\n"                 // 16 C= back in time
      "S\t0\t0\t\n"             // 17 empty stage name
      "Kanata\t0004\n"          // 18 a second header
      "S\t0\t0\tA,B\n"          // 19 a stage name with a comma
      "# fine\n"                // 20 a comment
      "\n"                      // 21 blank
      "C\t1\n"                  // 22
      "S\t0\t0\tX\n"            // 23
      "C\t-1\n"                 // 24 negative delta
      "R\t0\t0\t0\n"            // 25
      + std::string("S\t0\t0\tI\0x\n", 10);  // 26 a NUL byte (a name cut short at it could repeat "I")
  spit(dir.file("bad.log"), log);
  const Import r = import_log(dir.file("bad.log"), dir.file("bad.uscope"));
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  const std::vector<std::pair<uint64_t, std::string>> want = {
      {5, "unknown command"},     {6, "missing"},           {7, "not a decimal number"},
      {8, "not in flight"},       {9, "not in flight"},     {10, "not in flight"},
      {11, "not in flight"},      {12, "type 7"},           {13, "not in flight"},
      {14, "producer 77"},        {15, "already in flight"}, {16, "before the current cycle"},
      {17, "empty stage name"},   {18, "second Kanata header"}, {19, "comma"},
      {24, "not a decimal number"}, {26, "NUL byte"}};
  ASSERT_EQ(r.issues.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(r.issues[k].first, want[k].first) << r.issues[k].second;
    EXPECT_NE(r.issues[k].second.find(want[k].second), std::string::npos)
        << "line " << r.issues[k].first << ": " << r.issues[k].second;
  }
  EXPECT_EQ(r.stats.skipped, want.size());
  EXPECT_EQ(r.stats.first_issue_line, 5u);
  EXPECT_EQ(r.stats.events_out, 1u);
  const ATrace t = analyze(dir.file("bad.uscope"));
  ASSERT_EQ(t.insns.size(), 1u);
  EXPECT_EQ(t.insns[0].spans, (std::vector<Span>{{"F", 10, 11}, {"X", 11, 11}}));
  EXPECT_EQ(t.insns[0].status, USCOPE_INSN_RETIRED);
}

TEST(KonataImport, StrictStopsAtTheFirstMalformedLineAndWritesNothing) {
  TempDir dir("konata");
  spit(dir.file("bad.log"), "Kanata\t0004\nC=\t0\nI\t0\t0\t0\nS\t0\t0\tF\nS\t5\t0\tF\nR\t0\t0\t0\n");
  const std::string out = dir.file("bad.uscope");
  const Import r = import_log(dir.file("bad.log"), out, true);
  EXPECT_EQ(r.status, USCOPE_ERR_CORRUPT);
  EXPECT_NE(r.error.find("line 5"), std::string::npos) << r.error;
  EXPECT_FALSE(exists(out));
  // Without --strict the same log imports, the line skipped.
  const Import ok = import_log(dir.file("bad.log"), out);
  EXPECT_EQ(ok.status, USCOPE_OK) << ok.error;
  EXPECT_EQ(ok.stats.skipped, 1u);
  EXPECT_EQ(ok.stats.first_issue_line, 5u);
}

TEST(KonataImport, NotAKanataLogIsRefused) {
  TempDir dir("konata");
  spit(dir.file("x.log"), "hello\nI\t0\t0\t0\n");
  spit(dir.file("empty.log"), "");
  for (const char *name : {"x.log", "empty.log"}) {
    const Import r = import_log(dir.file(name), dir.file("x.uscope"));
    EXPECT_EQ(r.status, USCOPE_ERR_CORRUPT) << name;
    EXPECT_NE(r.error.find("not a Kanata log"), std::string::npos) << r.error;
    EXPECT_FALSE(exists(dir.file("x.uscope")));
  }
}

TEST(KonataImport, ClockPeriodAndDutName) {
  TempDir dir("konata");
  const Import r = import_log(data("basic.log"), dir.file("p.uscope"), false, 250, "mycore");
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  const ATrace t = analyze(dir.file("p.uscope"));
  EXPECT_EQ(t.period_ps, 250u);
  ASSERT_EQ(t.insns.size(), 4u);
  EXPECT_EQ(t.insns[0].first, 100u);  // cycles, whatever the period
  bool dut = false;
  for (const auto &kv : t.metadata) dut |= kv.second.find("mycore") != std::string::npos;
  EXPECT_TRUE(dut);
}

// The reference's konata2uscope made 21_konata2uscope_overflow.uscope from
// 21_konata2uscope_overflow.kanata.log: ours, from the same log, gives the
// same instructions, stage spans, labels and dependencies through the
// analysis layer (instruction ids aside: the reference's are the Kanata
// ids, COMPAT 27; ours are recycled slots).
TEST(KonataImport, SameInstructionsAsTheReferenceKonata2uscope) {
  TempDir dir("konata");
  const std::string out = dir.file("21.uscope");
  const Import r = import_log(conformance("21_konata2uscope_overflow.kanata.log"), out);
  ASSERT_EQ(r.status, USCOPE_OK) << r.error;
  EXPECT_EQ(r.stats.skipped, 0u);
  const ATrace ours = analyze(out), ref = analyze(conformance("21_konata2uscope_overflow.uscope"));
  EXPECT_EQ(ours.stages, ref.stages);
  ASSERT_EQ(ours.insns.size(), ref.insns.size());
  ASSERT_EQ(ours.insns.size(), 300u);
  // A key per instruction, the producer of a dependency found as the latest
  // instruction fetched in its entity id up to the consumer.
  auto keyed = [](const ATrace &t) {
    std::map<std::string, const AInsn *> by;
    for (const auto &i : t.insns) by[std::to_string(i.first) + "|" + std::to_string(i.pc)] = &i;
    return by;
  };
  const auto a = keyed(ours), b = keyed(ref);
  ASSERT_EQ(a.size(), 300u);
  for (const auto &kv : b) {
    auto it = a.find(kv.first);
    ASSERT_NE(it, a.end()) << kv.first;
    const AInsn &o = *it->second, &f = *kv.second;
    EXPECT_EQ(o.status, f.status) << kv.first;
    EXPECT_EQ(o.last, f.last) << kv.first;
    EXPECT_EQ(o.spans, f.spans) << kv.first;
    EXPECT_EQ(o.disasm, f.disasm) << kv.first;
    EXPECT_EQ(o.deps.size(), f.deps.size()) << kv.first;
    // The reference writes "stall:<stage>" where ours adds " @<lane> +<offset>:<cycles>".
    std::string mine;
    for (const auto &line : split(o.annotations, '\n')) {
      const size_t at = line.rfind(" @");
      mine += (mine.empty() ? "" : "\n") + (line.rfind("stall:", 0) == 0 && at != std::string::npos ? line.substr(0, at) : line);
    }
    EXPECT_EQ(mine, f.annotations) << kv.first;
  }
  // Dependencies: the producers, by key.
  auto producers = [](const ATrace &t) {
    std::map<uint32_t, std::string> latest;
    std::vector<std::string> found;
    // Fetch order: each dependency resolved against the instructions fetched up to it.
    for (const auto &i : t.insns) {
      const std::string k = std::to_string(i.first) + "|" + std::to_string(i.pc);
      latest[i.entity] = k;
      for (uint32_t d : i.deps) found.push_back(k + " <- " + (latest.count(d) ? latest[d] : "?"));
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  const auto pa = producers(ours), pb = producers(ref);
  EXPECT_EQ(pa, pb);
  EXPECT_EQ(pa.size(), 68u);
}

// ── Export ──

// The reference's sample trace: every instruction, stage span, label and
// status the analysis layer reads from it is in the log.
TEST(KonataExport, ReferenceSampleTrace) {
  TempDir dir("konata");
  const std::string in = conformance("20_konata_sample.uscope"), out = dir.file("20.log");
  const Export e = export_log(in, out);
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  const ATrace t = analyze(in);
  const KLog log = read_kanata(slurp(out));
  ASSERT_FALSE(t.insns.empty());
  ASSERT_EQ(log.insns.size(), t.insns.size());
  EXPECT_EQ(e.stats.records, t.insns.size());
  EXPECT_EQ(e.stats.first_cycle, 0u);
  EXPECT_EQ(e.stats.last_cycle, t.max_cycle);
  EXPECT_EQ(e.stats.bytes_out, slurp(out).size());
  for (size_t k = 0; k < t.insns.size(); ++k) {
    const AInsn &a = t.insns[k];
    const KInsn &i = log.insns[k];
    EXPECT_EQ(i.fetch, a.first) << k;
    ASSERT_EQ(i.labels[0].size(), 1u) << k;
    EXPECT_EQ(i.labels[0][0], a.disasm) << k;
    std::vector<Span> spans;
    for (const auto &s : i.stages) {
      EXPECT_EQ(s.lane, 0u);
      spans.emplace_back(s.name, s.start, s.end);
    }
    EXPECT_EQ(spans, a.spans) << k;
    EXPECT_EQ(i.status, a.status == USCOPE_INSN_RETIRED ? 1 : a.status == USCOPE_INSN_FLUSHED ? 2 : 0) << k;
    if (a.status != USCOPE_INSN_IN_FLIGHT) {
      EXPECT_EQ(i.end, a.last) << k;
    }
  }
}

// The reference's konata2uscope trace, exported: the log it was made from
// comes back (its lane-1 stalls, which konata2uscope kept as "stall:<stage>"
// without their cycles, as tooltip labels).
TEST(KonataExport, ReferenceKonata2uscopeTraceGivesBackItsLog) {
  TempDir dir("konata");
  const Export e = export_log(conformance("21_konata2uscope_overflow.uscope"), dir.file("21.log"));
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  const auto orig = canon(read_kanata(slurp(conformance("21_konata2uscope_overflow.kanata.log"))));
  const auto back = canon(read_kanata(slurp(dir.file("21.log"))));
  ASSERT_EQ(orig.size(), back.size());
  for (size_t k = 0; k < orig.size(); ++k) {
    CInsn o = orig[k];
    std::vector<std::string> stalls;
    auto &st = o.stages;
    for (auto s = st.begin(); s != st.end();) {
      if (std::get<0>(*s) != 0) {
        stalls.push_back("stall:" + std::get<1>(*s));
        s = st.erase(s);
      } else {
        ++s;
      }
    }
    // konata2uscope wrote the annotations in log order: labels then the stall.
    o.l1.insert(o.l1.end(), stalls.begin(), stalls.end());
    std::sort(o.l1.begin(), o.l1.end());
    CInsn b = back[k];
    std::sort(b.l1.begin(), b.l1.end());
    EXPECT_EQ(o, b) << k;
  }
}

TEST(KonataExport, RangeExportsTheInstructionsMeetingTheWindow) {
  TempDir dir("konata");
  ASSERT_EQ(import_log(data("basic.log"), dir.file("b.uscope")).status, USCOPE_OK);
  const Export e = export_log(dir.file("b.uscope"), dir.file("w.log"), 106, 1000);
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  EXPECT_EQ(e.stats.first_cycle, 106u);
  EXPECT_EQ(e.stats.last_cycle, 109u);  // cut at the trace's end
  const KLog log = read_kanata(slurp(dir.file("w.log")));
  // Instruction 0 retired at 105: out. 1 (retired at 106), 2 (flushed at 106), 3 (in flight): in, whole.
  ASSERT_EQ(log.insns.size(), 3u);
  EXPECT_EQ(e.stats.records, 3u);
  EXPECT_EQ(log.insns[0].labels[0], std::vector<std::string>{"0x1004 lw x2, 0(x1)"});
  EXPECT_EQ(log.insns[0].fetch, 100u);
  EXPECT_EQ(log.insns[0].stages.size(), 5u);  // F D X W and the lane-1 stall
  EXPECT_EQ(log.insns[2].status, 0);
  const Export past = export_log(dir.file("b.uscope"), dir.file("p.log"), 500, 600);
  EXPECT_EQ(past.status, USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(exists(dir.file("p.log")));
}

TEST(KonataExport, TraceWithoutCpuProtocolIsRefused) {
  TempDir dir("konata");
  const Export e = export_log(conformance("01_tiny.uscope"), dir.file("x.log"));
  EXPECT_NE(e.status, USCOPE_OK);
  EXPECT_NE(e.error.find("cpu"), std::string::npos) << e.error;
  EXPECT_FALSE(exists(dir.file("x.log")));
}

// A trace of our own writer, with inst_bits: labels are the disassembly,
// dependencies name their producers.
TEST(KonataExport, OwnWriterTraceWithDisassemblyAndDependencies) {
  TempDir dir("konata");
  const std::string path = dir.file("own.uscope");
  {
    uscope_schema_t *s = nullptr;
    ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
    uint8_t clk = 0;
    uint16_t root = 0;
    ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
    const char *const stages[] = {"IF", "EX", "WB"};
    uscope_cpu_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "core0";
    cfg.parent_scope_id = root;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.isa = "rv32imac";
    cfg.stages = stages;
    cfg.num_stages = 3;
    cfg.max_entities = 2;
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    // Cycle 0: addi a0,a0,1 in slot 0. 1: EX; c.addi a0,1 in slot 1, depends on slot 0.
    // 2: slot 0 WB, slot 1 EX. 3: slot 0 retires; slot 1 WB. 4: slot 1 flushed; slot 0 reused.
    ASSERT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_fetch(w, cpu, 0, 0x80000000u, 0x00150513u), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, 1000), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 0, 1), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_fetch(w, cpu, 1, 0x80000004u, 0x0505u), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_dependency(w, cpu, 0, 1, USCOPE_CPU_DEP_RAW), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_annotate(w, cpu, 1, "note one"), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, 2000), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 0, 2), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 1, 1), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, 3000), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_retire(w, cpu, 0), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, 1, 2), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, 4000), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_flush(w, cpu, 1, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_fetch(w, cpu, 0, 0x80000008u, 0x00150513u), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, 5000), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_retire(w, cpu, 0), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
  }
  const Export e = export_log(path, dir.file("own.log"));
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  const std::string text = slurp(dir.file("own.log"));
  const KLog log = read_kanata(text);
  ASSERT_EQ(log.insns.size(), 3u);
  const KInsn &a = log.insns[0], &b = log.insns[1], &c = log.insns[2];
  // The labels are the analysis layer's disassembly, decoded from inst_bits.
  const ATrace t = analyze(path);
  ASSERT_EQ(t.insns.size(), 3u);
  ASSERT_EQ(a.labels[0].size(), 1u);
  EXPECT_EQ(a.labels[0][0], t.insns[0].disasm);
  EXPECT_NE(a.labels[0][0].find("80000000"), std::string::npos) << a.labels[0][0];
  EXPECT_NE(a.labels[0][0].find("a0"), std::string::npos) << a.labels[0][0];
  ASSERT_EQ(b.labels[0].size(), 1u);
  EXPECT_EQ(b.labels[0][0], t.insns[1].disasm);
  EXPECT_EQ(b.labels[1], std::vector<std::string>{"note one"});
  EXPECT_EQ(b.prods, std::vector<uint64_t>{a.id});
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(b.status, 2);
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(a.stages.size(), 3u);
  EXPECT_EQ(b.end, 4u);
  EXPECT_EQ(c.fetch, 4u);
  EXPECT_EQ(text.rfind("Kanata\t0004\nC=\t0\n", 0), 0u) << text.substr(0, 40);
}

// Entity ids unique per instruction (as the reference's konata2uscope and
// sim-id writers make them): the producers a W can name are the last 2^18
// fetched, so memory stays bounded whatever the trace's length; a dependency
// on an older one is left out and counted in the note.
TEST(KonataExport, UniqueEntityIdsKeepARecentWindowOfProducers) {
  TempDir dir("konata");
  const std::string path = dir.file("unique.uscope");
  constexpr uint32_t kWindow = 1u << 18, kN = kWindow + 8, kBase = 1000;
  {
    uscope_schema_t *s = nullptr;
    ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
    uint8_t clk = 0;
    uint16_t root = 0;
    ASSERT_EQ(uscope_schema_add_clock(s, &clk, "clk", 1000), USCOPE_OK);
    ASSERT_EQ(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, clk), USCOPE_OK);
    const char *const stages[] = {"IF", "WB"};
    uscope_cpu_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "core0";
    cfg.parent_scope_id = root;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    cfg.isa = "rv32i";
    cfg.stages = stages;
    cfg.num_stages = 2;
    cfg.max_entities = 4;
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_cpu_ids_t ids{};
    ids.struct_size = sizeof ids;
    ASSERT_EQ(uscope_cpu_ids(cpu, &ids), USCOPE_OK);
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    const auto dep = [&](uint32_t src, uint32_t dst) {
      const uint8_t p[9] = {static_cast<uint8_t>(src),      static_cast<uint8_t>(src >> 8),
                            static_cast<uint8_t>(src >> 16), static_cast<uint8_t>(src >> 24),
                            static_cast<uint8_t>(dst),      static_cast<uint8_t>(dst >> 8),
                            static_cast<uint8_t>(dst >> 16), static_cast<uint8_t>(dst >> 24), 0};
      return uscope_event(w, ids.dependency, p, sizeof p);
    };
    // Instruction k: entity id kBase + k in slot k % 4, fetched at cycle k,
    // retired at k + 2. Dependencies: 10 on 5 and the last on the one before
    // (recent: drawn), the last on the first (2^18 + 7 fetches back: left out).
    for (uint32_t c = 0; c < kN + 2; ++c) {
      int st = uscope_begin_cycle(w, uint64_t{c} * 1000);
      if (c >= 2) st |= uscope_slot_clear(w, ids.entities, static_cast<uint16_t>((c - 2) % 4));
      if (c < kN) {
        const uint16_t slot = static_cast<uint16_t>(c % 4);
        st |= uscope_slot_set(w, ids.entities, slot, 0, kBase + c);
        st |= uscope_slot_set(w, ids.entities, slot, 1, 0x80000000ull + 4ull * (c % 64));
        const uint8_t tr[5] = {static_cast<uint8_t>(kBase + c), static_cast<uint8_t>((kBase + c) >> 8),
                               static_cast<uint8_t>((kBase + c) >> 16), static_cast<uint8_t>((kBase + c) >> 24), 0};
        st |= uscope_event(w, ids.stage_transition, tr, sizeof tr);
        if (c == 10) st |= dep(kBase + 5, kBase + 10);
        if (c == kN - 1) st |= dep(kBase + kN - 2, kBase + c) | dep(kBase, kBase + c);
      }
      st |= uscope_end_cycle(w);
      ASSERT_EQ(st, USCOPE_OK) << "cycle " << c << ": " << uscope_last_error();
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
  }
  const Export e = export_log(path, dir.file("unique.log"));
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  const KLog log = read_kanata(slurp(dir.file("unique.log")));
  ASSERT_EQ(log.insns.size(), kN);
  EXPECT_EQ(log.insns[10].prods, std::vector<uint64_t>{log.insns[5].id});
  EXPECT_EQ(log.insns[kN - 1].prods, std::vector<uint64_t>{log.insns[kN - 2].id});
  size_t w_lines = 0;
  for (const KInsn &i : log.insns) w_lines += i.prods.size();
  EXPECT_EQ(w_lines, 2u);
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_EQ(e.notes[0].rfind("1 dependencies name a producer", 0), 0u) << e.notes[0];
}

// ── Round trip ──

void round_trip(const std::string &log) {
  TempDir dir("konata");
  const Import i = import_log(log, dir.file("t.uscope"));
  ASSERT_EQ(i.status, USCOPE_OK) << i.error;
  ASSERT_EQ(i.stats.skipped, 0u);
  const Export e = export_log(dir.file("t.uscope"), dir.file("back.log"));
  ASSERT_EQ(e.status, USCOPE_OK) << e.error;
  EXPECT_TRUE(e.notes.empty()) << e.notes[0];
  const std::string orig_text = slurp(log);
  const std::string text = slurp(dir.file("back.log"));
  expect_same(canon(read_kanata(orig_text)), canon(read_kanata(text)));
}

// A Kanata log made of command lines at cycles (from cycle 10): in cycle
// order, then `order` (the format's order within a cycle), stable.
struct Ev {
  uint64_t cycle;
  int order;
  std::string line;
};
std::string kanata_log_of(std::vector<Ev> evs) {
  std::stable_sort(evs.begin(), evs.end(),
                   [](const Ev &a, const Ev &b) { return std::tie(a.cycle, a.order) < std::tie(b.cycle, b.order); });
  std::string text = "Kanata\t0004\nC=\t10\n";
  uint64_t cur = 10;
  for (const Ev &e : evs) {
    if (e.cycle != cur) text += "C\t" + std::to_string(e.cycle - cur) + "\n";
    cur = e.cycle;
    text += e.line + "\n";
  }
  return text;
}

TEST(KonataRoundTrip, BasicLogKeepsEverything) { round_trip(data("basic.log")); }
TEST(KonataRoundTrip, Gem5O3StyleLogKeepsEverything) { round_trip(data("gem5_o3.log")); }

// Ids out of order (a permutation), slots recycled many times over, a
// dependency on the previous instruction in every one, stalls and flushes.
TEST(KonataRoundTrip, OutOfOrderIdsAndRecycledSlots) {
  TempDir dir("konata");
  std::vector<Ev> evs;
  const int n = 300;
  auto id = [](int k) { return std::to_string((k * 37) % 1009); };
  for (int k = 0; k < n; ++k) {
    const uint64_t c = 10 + static_cast<uint64_t>(k);
    const std::string i = id(k);
    char label[64];
    std::snprintf(label, sizeof label, "%08x op%d", 0x4000 + 4 * k, k % 13);
    evs.push_back({c, 0, "I\t" + i + "\t" + std::to_string(k) + "\t0"});
    evs.push_back({c, 1, "L\t" + i + "\t0\t" + label});
    if (k % 4 == 0) evs.push_back({c, 1, "L\t" + i + "\t1\tnote " + std::to_string(k % 3)});
    evs.push_back({c, 3, "S\t" + i + "\t0\tF"});
    if (k > 0) evs.push_back({c, 4, "W\t" + i + "\t" + id(k - 1) + "\t0"});
    evs.push_back({c + 1, 3, "S\t" + i + "\t0\tX"});
    if (k % 5 == 0) {
      evs.push_back({c + 1, 3, "S\t" + i + "\t1\tstl"});
      evs.push_back({c + 2, 2, "E\t" + i + "\t1\tstl"});
    }
    evs.push_back({c + 3, 2, "E\t" + i + "\t0\tX"});
    evs.push_back({c + 3, 5, "R\t" + i + "\t" + std::to_string(k) + (k % 7 == 3 ? "\t1" : "\t0")});
  }
  const std::string text = kanata_log_of(evs);
  spit(dir.file("ooo.log"), text);
  round_trip(dir.file("ooo.log"));
  // Four in flight at most: the entity ids are recycled slots, not the Kanata ids.
  ASSERT_EQ(import_log(dir.file("ooo.log"), dir.file("ooo.uscope")).status, USCOPE_OK);
  const ATrace t = analyze(dir.file("ooo.uscope"));
  ASSERT_EQ(t.insns.size(), static_cast<size_t>(n));
  for (const auto &i : t.insns) EXPECT_LT(i.entity, 5u);
}

// Stages far longer than the export's ring of per-cycle buckets (1,024
// cycles): their ends wait in its heap and are merged, in order, with the
// bucket's commands of the same cycle (short instructions ending there).
TEST(KonataRoundTrip, StallsLongerThanTheQueuesRingKeepTheirOrder) {
  TempDir dir("konata");
  std::vector<Ev> evs;
  const int n = 4000;
  for (int k = 0; k < n; ++k) {
    const uint64_t c = 10 + static_cast<uint64_t>(k);
    const uint64_t len = k % 97 == 0 ? 2000 + static_cast<uint64_t>(k % 5) * 900 : 2 + k % 3;
    const std::string i = std::to_string(k);
    evs.push_back({c, 0, "I\t" + i + "\t" + i + "\t0"});
    evs.push_back({c, 1, "L\t" + i + "\t0\top" + std::to_string(k % 11)});
    evs.push_back({c, 3, "S\t" + i + "\t0\tF"});
    if (k > 0) evs.push_back({c, 4, "W\t" + i + "\t" + std::to_string(k - 1) + "\t0"});
    evs.push_back({c + 1, 3, "S\t" + i + "\t0\tX"});
    evs.push_back({c + 1 + len, 2, "E\t" + i + "\t0\tX"});
    evs.push_back({c + 1 + len, 5, "R\t" + i + "\t" + i + (k % 7 == 3 ? "\t1" : "\t0")});
  }
  const std::string text = kanata_log_of(evs);
  spit(dir.file("long.log"), text);
  round_trip(dir.file("long.log"));
  // Within each cycle, after the instructions fetched in it (each an I, its
  // labels and its first stage, written at once): the W, then the stages,
  // then the R (the export's order, konata.cpp).
  ASSERT_EQ(import_log(dir.file("long.log"), dir.file("long.uscope")).status, USCOPE_OK);
  ASSERT_EQ(export_log(dir.file("long.uscope"), dir.file("back.log")).status, USCOPE_OK);
  int rank = 0;
  size_t lines = 0;
  bool fetch_block = false;
  for (const std::string &line : split(slurp(dir.file("back.log")), '\n')) {
    if (line.empty()) continue;
    ++lines;
    const char c = line[0];
    if (c == 'C' || c == 'I' || c == 'L' || c == 'K' || (c == 'S' && fetch_block)) {
      if (c == 'C') rank = 0;
      fetch_block = c == 'I' || c == 'L';
      continue;
    }
    fetch_block = false;
    const int r = c == 'W' ? 1 : c == 'R' ? 3 : 2;
    EXPECT_GE(r, rank) << "out of order within its cycle: " << line;
    rank = r;
  }
  EXPECT_GT(lines, static_cast<size_t>(6 * n));
}

TEST(KonataRoundTrip, ThroughTheCommandLine) {
  TempDir dir("konata");
  const std::string t = dir.file("t.uscope"), back = dir.file("back.log");
  auto r = uscope::test::run_cli("import-konata " + data("gem5_o3.log") + " -o " + t + " --dut-name cli", true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("imported 6 instructions"), std::string::npos) << r.out;
  r = uscope::test::run_cli("export " + t + " --to konata -o " + back, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_same(canon(read_kanata(slurp(data("gem5_o3.log")))), canon(read_kanata(slurp(back))));
  // A malformed line: named on stderr with its number, the import goes on.
  spit(dir.file("bad.log"), "Kanata\t0004\nI\t0\t0\t0\nZ\t1\nR\t0\t0\t0\n");
  r = uscope::test::run_cli("import-konata " + dir.file("bad.log") + " -o " + dir.file("bad.uscope"), true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("bad.log:3: unknown command"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first at line 3"), std::string::npos) << r.out;
  r = uscope::test::run_cli("import-konata " + dir.file("bad.log") + " -o " + dir.file("s.uscope") + " --strict", true);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_FALSE(exists(dir.file("s.uscope")));
}

}  // namespace
