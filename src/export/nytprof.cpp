// `uscope export --to nytprof`: the firmware's per-line profile (FwProfile)
// as a Devel::NYTProf data file, format 5.0, as Devel::NYTProf 6.12's reader
// (NYTProf.xs load_profile_data_from_stream, FileHandle.xs read_u32 /
// read_str / read_nv) reads it, so that nytprofhtml, nytprofcsv and
// nytprofcalls show the firmware's C source with its cycles
// (docs/export.md "NYTProf").
//
// Layout (FileHandle.xs NYTP_write_*, which Devel::NYTProf itself writes
// with): the text header "NYTProf 5 0\n", '#' comment and ':' attribute /
// '!' option lines, then tagged binary records: '@' NEW_FID, '+' TIME_LINE,
// '-' DISCOUNT, 'S' SRC_LINE, 's' SUB_INFO, 'c' SUB_CALLERS, 'P' PID_START,
// 'p' PID_END. Integers are FileHandle.xs output_tag_u32's big-endian
// prefix code; strings are '\'' + length + bytes; NVs are the reader's
// native double (nv_size 8, little-endian here).
//
// Time: ticks_per_sec is 1, so one tick is one cycle and the "seconds" the
// tools print are cycles. A statement is a visit of one source line: each
// run of consecutive retired instructions on one (file, line) is one
// TIME_LINE record holding their cycles (FwProfile's rule: the cycles since
// the previous retirement), so nytprofhtml's statement counts are line
// visits, as Perl's are statement executions, and the line times add up to
// the window's retired cycles. The records are written while the trace is
// walked (bounded memory; the file grows with the visits, as a Perl
// profile grows with the statements run).
#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/cpu_trace.hpp"
#include "analysis/insn_prefetch.hpp"
#include "base/error.hpp"
#include "export/export.hpp"
#include "export/fw_profile.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::exporter {

namespace {

// Tags: Devel::NYTProf FileHandle.h NYTP_TAG_*.
constexpr char kTagTimeLine = '+', kTagDiscount = '-', kTagNewFid = '@', kTagSrcLine = 'S', kTagSubInfo = 's',
               kTagSubCallers = 'c', kTagPidStart = 'P', kTagPidEnd = 'p', kTagString = '\'';
// NEW_FID flags: NYTProf.h NYTP_FIDf_VIA_STMT, _HAS_SRC, _SAVE_SRC (the
// source is in the file as SRC_LINE records, as with savesrc=1).
constexpr uint32_t kFidViaStmt = 0x2, kFidHasSrc = 0x10, kFidSaveSrc = 0x20;
constexpr uint32_t kPid = 1;  // the firmware's "process"

class Writer {
 public:
  explicit Writer(OutFile &out) : o_(out.buf()), out_(out) {}
  // FileHandle.xs output_tag_u32: 1 to 5 bytes, the top bits of the first
  // byte saying how many follow.
  void u32(uint32_t i) {
    if (i < 0x80) {
      put(static_cast<char>(i));
    } else if (i < 0x4000) {
      put(static_cast<char>((i >> 8) | 0x80)), put(static_cast<char>(i));
    } else if (i < 0x200000) {
      put(static_cast<char>((i >> 16) | 0xC0)), put(static_cast<char>(i >> 8)), put(static_cast<char>(i));
    } else if (i < 0x10000000) {
      put(static_cast<char>((i >> 24) | 0xE0)), put(static_cast<char>(i >> 16)), put(static_cast<char>(i >> 8));
      put(static_cast<char>(i));
    } else {
      put(static_cast<char>(0xFF)), put(static_cast<char>(i >> 24)), put(static_cast<char>(i >> 16));
      put(static_cast<char>(i >> 8)), put(static_cast<char>(i));
    }
  }
  void tag(char t, uint32_t i) {
    put(t);
    u32(i);
  }
  // FileHandle.xs output_str (bytes; the reader's NYTP_TAG_STRING).
  void str(const std::string &s) {
    const size_t n = std::min<size_t>(s.size(), 0x7FFFFFFF);
    tag(kTagString, static_cast<uint32_t>(n));
    o_.append(s.data(), n);
  }
  // FileHandle.xs output_nv: the NV's bytes as the machine holds them.
  void nv(double d) {
    char b[sizeof d];
    std::memcpy(b, &d, sizeof d);
    o_.append(b, sizeof d);
  }
  void put(char c) { o_.push_back(c); }
  void text(const std::string &s) { o_.append(s); }
  void done() { out_.maybe_flush(); }

 private:
  std::string &o_;
  OutFile &out_;
};

std::string read_lines_ok(const std::string &path, std::vector<std::string> *lines) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot be read";
  std::string l;
  while (std::getline(f, l)) lines->push_back(l + "\n");
  return "";
}

}  // namespace

void export_nytprof(Job &job) {
  if (job.kind != Job::Input::Uscope || !job.reader)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "--to nytprof needs a µScope trace with a cpu protocol scope");
  uscope_cpu_trace_options_t co{};
  co.struct_size = sizeof co;
  co.scope = job.opts.scope;
  co.elf_path = job.opts.elf_path;
  co.cache_segments = analysis::kStreamCacheSegments;  // read through a stream only
  std::unique_ptr<analysis::CpuTrace> trace;
  try {
    trace = std::make_unique<analysis::CpuTrace>(*job.reader, co);
  } catch (const Error &e) {
    if (e.code() == USCOPE_ERR_NOT_FOUND)
      throw Error(e.code(), std::string("--to nytprof profiles a cpu protocol scope: ") + e.what());
    throw;
  }
  analysis::CpuTrace &t = *trace;
  FwProfile prof(t);  // refuses a trace without an ELF, saying how to give one

  // The window, cut at the trace's last cycle.
  const uint64_t last = t.max_cycle();
  const uint64_t start = job.opts.range_start;
  if (start > last)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "--range starts at cycle %" PRIu64 ", after the trace's last cycle %" PRIu64,
         start, last);
  const uint64_t end = std::min(job.opts.range_end, last);
  job.stats.first_cycle = start;
  job.stats.last_cycle = end;

  OutFile out(job.output);
  Writer w(out);
  // The header and attributes Devel::NYTProf writes (NYTProf.xs output_header),
  // with the values that make its reports read cycles.
  struct stat st {};
  const uint64_t basetime = ::stat(job.input.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_mtime) : 0;
  std::string h = "NYTProf 5 0\n";
  h += "#Firmware profile of the cpu scope " + t.scope_name() + ", cycles " + std::to_string(start) + " to " +
       std::to_string(end) + ", written by uscope export --to nytprof (1 tick = 1 cycle)\n";
  auto attr = [&h](const std::string &k, const std::string &v) {
    std::string clean = v;
    for (char &c : clean)
      if (c == '\n' || c == '\r') c = ' ';
    h += ":" + k + "=" + clean + "\n";
  };
  attr("basetime", std::to_string(basetime));
  attr("application", job.input);
  attr("perl_version", "5.36.0");
  attr("nv_size", std::to_string(sizeof(double)));
  attr("xs_version", "6.12");
  attr("PL_perldb", "0");
  attr("clock_id", "0");
  attr("ticks_per_sec", "1");
  attr("uscope_scope", t.scope_name());
  attr("uscope_clock_period_ps", std::to_string(t.period_ps()));
  attr("uscope_elf", t.elf_path());
  // The options a profile carries: statements and subs, no blocks, no calls stream.
  for (const char *o : {"usecputime=0", "subs=1", "blocks=0", "leave=1", "expand=0", "trace=0", "use_db_sub=0",
                        "compress=0", "clock=0", "stmts=1", "slowops=0", "findcaller=0", "forkdepth=-1",
                        "perldb=0", "nameevals=1", "nameanonsubs=1", "calls=0", "evals=0"})
    h += std::string("!") + o + "\n";
  w.text(h);
  w.put(kTagPidStart);
  w.u32(kPid);
  w.u32(0);
  w.nv(static_cast<double>(start));

  // NYTProf fids, given on first sight (a fid is defined before its first
  // time record, as Devel::NYTProf does). The last one, made at the end
  // when needed, holds what has no source line: one line per function.
  std::vector<uint32_t> fid_of;  // FwProfile file index -> fid (0: not yet)
  std::vector<std::string> fid_names;
  std::vector<uint32_t> fid_flags;
  std::vector<std::vector<std::string>> fid_src;
  auto new_fid = [&](const std::string &name, uint32_t flags, uint32_t size, uint32_t mtime) {
    const uint32_t fid = static_cast<uint32_t>(fid_names.size() + 1);
    w.tag(kTagNewFid, fid);
    w.u32(0);  // not an eval: no parent fid
    w.u32(0);  //   nor line
    w.u32(flags);
    w.u32(size);
    w.u32(mtime);
    w.str(name);
    fid_names.push_back(name);
    fid_flags.push_back(flags);
    return fid;
  };
  auto fid_for = [&](uint32_t file) {
    if (file >= fid_of.size()) fid_of.resize(file + 1, 0);
    if (!fid_of[file]) {
      const std::string &name = prof.files()[file];
      std::vector<std::string> src;
      struct stat fs {};
      const bool readable = ::stat(name.c_str(), &fs) == 0 && S_ISREG(fs.st_mode) && read_lines_ok(name, &src).empty();
      fid_of[file] = new_fid(name, kFidViaStmt | (readable ? kFidHasSrc | kFidSaveSrc : 0),
                             readable ? static_cast<uint32_t>(fs.st_size) : 0,
                             readable ? static_cast<uint32_t>(fs.st_mtime) : 0);
      fid_src.push_back(std::move(src));
    }
    return fid_of[file];
  };

  // The functions without a source line (no DWARF line for their pc) go to
  // the pseudo file's line (function index + 1).
  std::vector<bool> lineless;  // by function
  uint32_t pseudo_fid = 0;

  // The statement being timed: a run of instructions on one (fid, line).
  uint32_t cur_fid = 0, cur_line = 0;
  uint64_t cur_ticks = 0;
  uint64_t records = 0;
  auto flush_stmt = [&]() {
    if (!cur_fid) return;
    // TIME_LINE holds an I32 of ticks: a longer visit is cut in pieces, the
    // ones after the first DISCOUNTed so it stays one statement.
    bool first = true;
    do {
      const uint64_t piece = std::min<uint64_t>(cur_ticks, std::numeric_limits<int32_t>::max());
      if (!first) w.put(kTagDiscount);
      w.tag(kTagTimeLine, static_cast<uint32_t>(piece));
      w.u32(cur_fid);
      w.u32(cur_line);
      cur_ticks -= piece;
      first = false;
      ++records;
    } while (cur_ticks);
    w.done();
    cur_fid = 0;
  };
  // Lines without a source line are only known once the pseudo file exists,
  // which it does from its first use (its name does not depend on the end).
  auto pseudo = [&]() {
    if (!pseudo_fid) {
      pseudo_fid = new_fid(t.elf_path() + ".functions-without-source-lines", kFidViaStmt | kFidHasSrc | kFidSaveSrc,
                           0, 0);
      fid_src.emplace_back();
    }
    return pseudo_fid;
  };
  auto place = [&](uint32_t node, uint32_t file, uint32_t line, uint32_t *fid, uint32_t *ln) {
    if (file && line) {
      *fid = fid_for(file);
      *ln = line;
    } else {
      const uint32_t fn = prof.nodes()[node].function;
      if (fn >= lineless.size()) lineless.resize(fn + 1, false);
      lineless[fn] = true;
      *fid = pseudo();
      *ln = fn + 1;
    }
  };
  prof.run(
      start, end,
      [&](const FwProfile::Retired &r) {
        uint32_t fid = 0, line = 0;
        place(r.node, r.file, r.line, &fid, &line);
        if (fid != cur_fid || line != cur_line) {
          flush_stmt();
          cur_fid = fid;
          cur_line = line;
        }
        cur_ticks += r.cycles;
      },
      job.progress);
  flush_stmt();
  if (prof.retired() == 0)
    fail(USCOPE_ERR_NOT_FOUND, "no instruction retired in cycles %" PRIu64 " to %" PRIu64 ": nothing to profile",
         start, end);
  if (prof.unknown_pcs() == prof.retired())
    fail(USCOPE_ERR_INVALID_ARGUMENT,
         "none of the %" PRIu64 " instructions retired in the window is in a function of the ELF %s: is it the "
         "firmware that ran?",
         prof.retired(), t.elf_path().c_str());
  if (prof.unknown_pcs())
    job.note(std::to_string(prof.unknown_pcs()) + " of " + std::to_string(prof.retired()) +
             " retired instructions are at pcs no symbol of " + t.elf_path() + " covers (main::__unknown_pc__)");

  // Every sub: its fid and lines. C names are Perl-identifier-safe;
  // NYTProf wants package-qualified names.
  auto sub_name = [&](uint32_t fn) {
    const std::string &n = prof.functions()[fn].name;
    return std::string("main::") + (n == "<unknown>" ? "__unknown_pc__" : n);
  };
  std::vector<std::pair<uint32_t, uint32_t>> sub_line(prof.functions().size());  // (fid, first line)
  for (uint32_t fn = 0; fn < prof.functions().size(); ++fn) {
    const FwProfile::Function &f = prof.functions()[fn];
    uint32_t fid = 0, first = 0, last_line = 0;
    if (f.file && f.first_line) {
      fid = fid_for(f.file);
      first = f.first_line;
      last_line = f.last_line;
    } else {
      if (fn >= lineless.size()) lineless.resize(fn + 1, false);
      lineless[fn] = true;
      fid = pseudo();
      first = last_line = fn + 1;
    }
    sub_line[fn] = {fid, first};
    w.tag(kTagSubInfo, fid);
    w.str(sub_name(fn));
    w.u32(first);
    w.u32(last_line);
  }
  // main::RUNTIME: the caller of the frames whose caller is outside the
  // window (Perl's name for the main program's code).
  const uint32_t runtime_fid = 1;
  w.tag(kTagSubInfo, runtime_fid);
  w.str("main::RUNTIME");
  w.u32(0);
  w.u32(0);

  // Call edges: per (caller fid, line, caller sub, callee), summed over the
  // tree's nodes. A call made while the callee is already on the stack is
  // recursive: its inclusive time also goes to reci_time, its depth there
  // to rec_depth (the names Devel::NYTProf gives them).
  struct Edge {
    uint64_t count = 0, incl = 0, excl = 0, reci = 0;
    uint32_t depth = 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, std::string, uint32_t>, Edge> edges;
  const auto &nodes = prof.nodes();
  std::vector<uint32_t> rec(nodes.size(), 0);  // same-function frames above each node
  for (uint32_t k = 1; k < nodes.size(); ++k) {
    const FwProfile::Node &n = nodes[k];
    uint32_t depth = 0;
    for (uint32_t p = n.parent; p != FwProfile::kRoot; p = nodes[p].parent)
      if (nodes[p].function == n.function) {
        depth = rec[p] + 1;
        break;
      }
    rec[k] = depth;
    uint32_t fid = 0, line = 0;
    std::string caller;
    if (n.parent == FwProfile::kRoot) {
      fid = sub_line[n.function].first;
      line = sub_line[n.function].second;
      caller = "main::RUNTIME";
    } else {
      place(n.parent, n.call_file, n.call_line, &fid, &line);
      caller = sub_name(nodes[n.parent].function);
    }
    if (!n.calls) continue;
    Edge &e = edges[{fid, line, caller, n.function}];
    e.count += n.calls;
    e.incl += n.inclusive_cycles;
    e.excl += n.exclusive_cycles;
    if (depth) e.reci += n.inclusive_cycles;
    e.depth = std::max(e.depth, depth);
  }
  for (const auto &[key, e] : edges) {
    w.tag(kTagSubCallers, std::get<0>(key));
    w.u32(std::get<1>(key));
    w.str(std::get<2>(key));
    w.u32(static_cast<uint32_t>(std::min<uint64_t>(e.count, UINT32_MAX)));
    w.nv(static_cast<double>(e.incl));
    w.nv(static_cast<double>(e.excl));
    w.nv(static_cast<double>(e.reci));
    w.u32(e.depth);
    w.str(sub_name(std::get<3>(key)));
    w.done();
  }

  // The sources, as SRC_LINE records, so the reports show the C beside its
  // cycles; the pseudo file's lines name its functions.
  for (uint32_t fid = 1; fid <= fid_names.size(); ++fid) {
    if (fid == pseudo_fid) {
      for (uint32_t fn = 0; fn < lineless.size(); ++fn) {
        if (!lineless[fn]) continue;
        w.tag(kTagSrcLine, fid);
        w.u32(fn + 1);
        w.str(prof.functions()[fn].name + " (no source line in the ELF's line table)\n");
      }
      continue;
    }
    const auto &src = fid_src[fid - 1];
    for (uint32_t l = 0; l < src.size(); ++l) {
      w.tag(kTagSrcLine, fid);
      w.u32(l + 1);
      w.str(src[l]);
      w.done();
    }
  }
  w.text(":cumulative_overhead_ticks=0\n");
  w.put(kTagPidEnd);
  w.u32(kPid);
  w.nv(static_cast<double>(prof.last_retire()));
  job.stats.records = records;
  job.stats.bytes_out = out.bytes();
  out.publish();
}

}  // namespace uscope::exporter
