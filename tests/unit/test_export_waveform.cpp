// uscope export --to fst|vcd (src/export/waveform.cpp, docs/export.md "FST
// and VCD"). The FST is read back by GTKWave's own fst2vcd (an outside
// reader), the VCD by a parser written here from IEEE 1364 §18.2; the values
// of every signal at chosen times must equal the reader's state at those
// times (uscope_reader_state_at, what `uscope state` prints), and every
// event of the window must show as a pulse with its payload.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <uscope/export.h>
#include <uscope/uscope.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef USCOPE_WITH_FST
#include "fstapi.h"
#endif
#include "support/cli_run.hpp"
#include "support/test_util.hpp"

namespace {

using uscope::test::kCorpusDir;
using uscope::test::TempDir;

// ── A VCD, as any viewer reads it ──

struct Wave {
  std::map<std::string, std::string> id_of;       // full path ("a.b.sig") -> identifier code
  std::map<std::string, uint32_t> width_of;       // full path -> bits
  std::unordered_map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> changes;  // id -> (time, value)
  std::vector<uint64_t> times;                    // every #time, in order
  std::string timescale;

  bool has(const std::string &path) const { return id_of.count(path) != 0; }
  // The value at time t: the last change at or before it (the failure names
  // the signal when there is none).
  uint64_t at(const std::string &path, uint64_t t) const {
    const auto it = id_of.find(path);
    if (it == id_of.end()) {
      ADD_FAILURE() << "no signal " << path;
      return ~0ull;
    }
    const auto c = changes.find(it->second);
    if (c == changes.end()) {
      ADD_FAILURE() << "signal " << path << " never has a value";
      return ~0ull;
    }
    uint64_t v = ~0ull;
    bool any = false;
    for (const auto &[ct, cv] : c->second) {
      if (ct > t) break;
      v = cv, any = true;
    }
    if (!any) ADD_FAILURE() << "signal " << path << " has no value at " << t;
    return v;
  }
};

Wave parse_vcd(const std::string &text) {
  Wave w;
  std::istringstream in(text);
  std::string tok;
  std::vector<std::string> scopes;
  auto skip_to_end = [&](std::string *collect) {
    while (in >> tok && tok != "$end")
      if (collect) *collect += (collect->empty() ? "" : " ") + tok;
  };
  // Header.
  while (in >> tok) {
    if (tok == "$scope") {
      std::string type, name;
      in >> type >> name;
      scopes.push_back(name);
      skip_to_end(nullptr);
    } else if (tok == "$upscope") {
      if (scopes.empty()) ADD_FAILURE() << "$upscope without a scope";
      else scopes.pop_back();
      skip_to_end(nullptr);
    } else if (tok == "$var") {
      std::string type, width, id, name;
      in >> type >> width >> id >> name;
      std::string path;
      for (const auto &s : scopes) path += s + ".";
      path += name;
      if (w.id_of.count(path)) ADD_FAILURE() << "two signals named " << path;
      w.id_of[path] = id;
      w.width_of[path] = static_cast<uint32_t>(std::stoul(width));
      skip_to_end(nullptr);
    } else if (tok == "$timescale") {
      skip_to_end(&w.timescale);
    } else if (tok == "$enddefinitions") {
      skip_to_end(nullptr);
      break;
    } else if (!tok.empty() && tok[0] == '$') {
      skip_to_end(nullptr);  // $comment, $date, $version, $attrbegin ...
    } else {
      ADD_FAILURE() << "unexpected token in the VCD header: " << tok;
    }
  }
  // Value changes.
  uint64_t now = 0;
  auto value_of = [](const std::string &bits) {
    uint64_t v = 0;
    for (char c : bits) {
      if (c != '0' && c != '1') ADD_FAILURE() << "non-binary value " << bits;
      v = v << 1 | (c == '1');
    }
    return v;
  };
  while (in >> tok) {
    if (tok[0] == '#') {
      now = std::stoull(tok.substr(1));
      if (!w.times.empty() && now < w.times.back()) ADD_FAILURE() << "time goes back to " << now;
      w.times.push_back(now);
    } else if (tok[0] == '$') {
      continue;  // $dumpvars, $end, $dumpon ...
    } else if (tok[0] == 'b' || tok[0] == 'B') {
      std::string id;
      in >> id;
      w.changes[id].emplace_back(now, value_of(tok.substr(1)));
    } else if (tok[0] == 'r' || tok[0] == 'R' || tok[0] == 's' || tok[0] == 'S') {
      std::string id;
      in >> id;  // real and string values: none of ours
    } else {
      w.changes[tok.substr(1)].emplace_back(now, value_of(tok.substr(0, 1)));
    }
  }
  return w;
}

std::string run_capture(const std::string &cmd, int *status) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

// GTKWave's fst2vcd: the outside reader of our FST files.
Wave read_fst(const std::string &path) {
  int status = -1;
  const std::string text = run_capture(std::string(USCOPE_FST2VCD) + " -f '" + path + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << USCOPE_FST2VCD << " failed on " << path << ":\n" << text.substr(0, 2000);
  return parse_vcd(text);
}

// ── The trace, through the reader's C API ──

std::string wave_name(const char *s) {
  std::string n = s && *s ? s : "_";
  for (char &c : n)
    if (static_cast<unsigned char>(c) <= ' ' || c == '.' || c == 0x7f) c = '_';
  if (n[0] == '$') n[0] = '_';
  return n;
}

struct Trace {
  uscope_reader_t *r = nullptr;
  uscope_schema_counts_t counts{};
  uscope_file_info_t info{};
  explicit Trace(const std::string &path) {
    if (uscope_reader_open(&r, path.c_str()) != USCOPE_OK) {
      ADD_FAILURE() << "cannot open " << path << ": " << uscope_last_error();
      return;
    }
    counts.struct_size = sizeof counts;
    info.struct_size = sizeof info;
    EXPECT_EQ(uscope_reader_schema_counts(r, &counts), USCOPE_OK);
    EXPECT_EQ(uscope_reader_info(r, &info), USCOPE_OK);
  }
  ~Trace() { uscope_reader_close(r); }
  // The scope path of a scope id ("root.core0"), "" for none.
  std::string scope_path(uint16_t id) const {
    std::vector<std::string> names;
    for (int depth = 0; depth < 64 && id != USCOPE_NO_PARENT; ++depth) {
      uscope_scope_info_t s{};
      if (uscope_reader_scope(r, &s, id) != USCOPE_OK) break;
      names.push_back(wave_name(s.name));
      id = s.parent_id;
    }
    std::string p;
    for (auto it = names.rbegin(); it != names.rend(); ++it) p += *it + ".";
    return p;
  }
  uint64_t scope_period(uint16_t id, uint64_t fallback) const {
    for (int depth = 0; depth < 64 && id != USCOPE_NO_PARENT; ++depth) {
      uscope_scope_info_t s{};
      if (uscope_reader_scope(r, &s, id) != USCOPE_OK) break;
      if (s.clock_id != USCOPE_CLOCK_INHERIT) {
        uscope_clock_info_t c{};
        if (uscope_reader_clock(r, &c, s.clock_id) == USCOPE_OK && c.period_ps) return c.period_ps;
        break;
      }
      id = s.parent_id;
    }
    return fallback;
  }
};

uint64_t mask(uint64_t v, uint32_t width) { return width >= 64 ? v : v & ((uint64_t{1} << width) - 1); }

// Every storage signal at time t equals the reader's state at t; returns the
// number of values compared.
size_t compare_state(const Trace &t, const Wave &w, uint64_t time, const std::string &what) {
  uscope_state_t *st = nullptr;
  if (uscope_reader_state_at(t.r, &st, time) != USCOPE_OK) {
    ADD_FAILURE() << "state_at " << time << ": " << uscope_last_error();
    return 0;
  }
  size_t n = 0;
  for (uint16_t sid = 0; sid < t.counts.storages; ++sid) {
    uscope_storage_info_t s{};
    EXPECT_EQ(uscope_reader_storage(t.r, &s, sid), USCOPE_OK);
    const std::string base = t.scope_path(s.scope_id) + wave_name(s.name) + ".";
    const bool sparse = s.flags & USCOPE_SF_SPARSE;
    for (uint16_t p = 0; p < s.num_properties; ++p) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_storage_field(t.r, &f, sid, p, 1), USCOPE_OK);
      uint64_t v = 0;
      EXPECT_EQ(uscope_state_property(st, &v, sid, p), USCOPE_OK);
      const std::string path = base + wave_name(f.name);
      EXPECT_EQ(w.at(path, time), mask(v, w.width_of.at(path))) << what << ": " << path << " at " << time << " ps";
      ++n;
    }
    const bool flat = s.num_slots == 1 && !sparse;
    for (uint16_t slot = 0; slot < s.num_slots; ++slot) {
      const std::string sb = flat ? base : base + "slot" + std::to_string(slot) + ".";
      int valid = 1;
      EXPECT_EQ(uscope_state_slot_valid(st, &valid, sid, slot), USCOPE_OK);
      if (sparse) {
        EXPECT_EQ(w.at(sb + "valid", time), static_cast<uint64_t>(valid != 0)) << what << ": " << sb << "valid at " << time;
        ++n;
      }
      if (!valid) continue;  // `uscope state` shows the fields of valid slots only
      for (uint16_t fi = 0; fi < s.num_fields; ++fi) {
        uscope_field_info_t f{};
        EXPECT_EQ(uscope_reader_storage_field(t.r, &f, sid, fi, 0), USCOPE_OK);
        uint64_t v = 0;
        EXPECT_EQ(uscope_state_slot_field(st, &v, sid, slot, fi), USCOPE_OK);
        const std::string path = sb + wave_name(f.name);
        const uint32_t width = f.type == USCOPE_FT_BOOL ? 1 : f.size * 8;
        EXPECT_EQ(w.width_of.at(path), width) << path;
        EXPECT_EQ(w.at(path, time), mask(v, width)) << what << ": " << path << " at " << time << " ps";
        ++n;
      }
    }
  }
  uscope_state_free(st);
  return n;
}

// Every event in [t0, t1]: its fire signal is 1 at its time (and 0 one cycle
// of its scope's clock later, unless another event of its type is there),
// its payload fields hold its values (the last event of the type at that
// time). Returns the number of events seen.
size_t compare_events(const Trace &t, const Wave &w, uint64_t t0, uint64_t t1, uint64_t period,
                      const std::string &what) {
  struct Ev {
    uint16_t type;
    uint64_t time;
    std::vector<uint8_t> payload;
  };
  std::vector<Ev> evs;
  uscope_event_iter_t *it = nullptr;
  EXPECT_EQ(uscope_reader_events_in_range(t.r, &it, t0, t1), USCOPE_OK);
  uscope_event_t e{};
  while (it && uscope_event_iter_next(it, &e) == USCOPE_OK)
    evs.push_back({e.event_type_id, e.time_ps, std::vector<uint8_t>(e.payload, e.payload + e.payload_size)});
  uscope_event_iter_free(it);
  // The last of each (type, time), and the times of each type.
  std::map<std::pair<uint16_t, uint64_t>, const Ev *> last;
  for (const Ev &ev : evs) last[{ev.type, ev.time}] = &ev;
  for (const auto &[key, ev] : last) {
    uscope_event_type_info_t et{};
    EXPECT_EQ(uscope_reader_event_type(t.r, &et, ev->type), USCOPE_OK);
    const std::string base = t.scope_path(et.scope_id) + wave_name(et.name) + ".";
    EXPECT_EQ(w.at(base + "fire", ev->time), 1u) << what << ": " << base << "fire at " << ev->time;
    const uint64_t fall = ev->time + t.scope_period(et.scope_id, period);
    if (fall <= t1 && !last.count({ev->type, fall})) {
      EXPECT_EQ(w.at(base + "fire", fall), 0u) << what << ": " << base << "fire after the event at " << ev->time;
    }
    for (uint16_t k = 0; k < et.num_fields; ++k) {
      uscope_field_info_t f{};
      EXPECT_EQ(uscope_reader_event_field(t.r, &f, ev->type, k), USCOPE_OK);
      uint64_t v = 0;
      for (uint32_t b = 0; b < f.size && f.offset + b < ev->payload.size(); ++b)
        v |= uint64_t{ev->payload[f.offset + b]} << (8 * b);
      const std::string path = base + wave_name(f.name);
      EXPECT_EQ(w.at(path, ev->time), mask(v, w.width_of.at(path))) << what << ": " << path << " at " << ev->time;
    }
  }
  return evs.size();
}

uscope_export_stats_t do_export(const std::string &in, const std::string &out, uint32_t format, uint64_t a = 0,
                                uint64_t b = UINT64_MAX) {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = format;
  o.range_start = a;
  o.range_end = b;
  uscope_export_stats_t s{};
  s.struct_size = sizeof s;
  const uscope_status_t st = uscope_export(&s, in.c_str(), out.c_str(), &o);
  EXPECT_EQ(st, USCOPE_OK) << in << " -> " << out << ": " << uscope_last_error();
  return s;
}

// The cycle period the window is counted in: clock 0's, or the timestamps'
// step when they are off its grid (COMPAT 29), as `uscope state --cycle`.
uint64_t expected_period(const Trace &t) {
  uscope_clock_info_t c{};
  EXPECT_EQ(uscope_reader_clock(t.r, &c, 0), USCOPE_OK);
  uint64_t p = c.period_ps;
  uscope_defect_t d[USCOPE_DEFECT_KIND_COUNT]{};
  uint32_t n = 0;
  EXPECT_EQ(uscope_reader_defects(t.r, d, &n, USCOPE_DEFECT_KIND_COUNT), USCOPE_OK);
  for (uint32_t i = 0; i < n && i < USCOPE_DEFECT_KIND_COUNT; ++i)
    if (d[i].kind == USCOPE_DEFECT_OFF_CLOCK_GRID && t.info.time_grid_ps && t.info.time_grid_ps != p)
      p = t.info.time_grid_ps;
  return p;
}

// The whole check of one exported window: both formats, every value at
// every cycle (and half-way through it, where a faster clock's frames are)
// and every event.
void check_path(const std::string &in, uint64_t a = 0, uint64_t b = UINT64_MAX) {
  SCOPED_TRACE(in);
  struct stat sb {};
  ASSERT_EQ(::stat(in.c_str(), &sb), 0) << "missing conformance trace " << in;
  TempDir dir("wave");
  const Trace t(in);
  ASSERT_NE(t.r, nullptr);
  const uint64_t period = expected_period(t);
  ASSERT_GT(period, 0u);
  const uint64_t last_cycle = t.info.last_time_ps / period;
  const uscope_export_stats_t vs = do_export(in, dir.file("w.vcd"), USCOPE_EXPORT_VCD, a, b);
  const uscope_export_stats_t fs = do_export(in, dir.file("w.fst"), USCOPE_EXPORT_FST, a, b);
  const uint64_t eb = std::min(b, last_cycle);
  EXPECT_EQ(vs.first_cycle, a);
  EXPECT_EQ(vs.last_cycle, eb);
  EXPECT_EQ(fs.first_cycle, a);
  EXPECT_EQ(fs.last_cycle, eb);
  EXPECT_EQ(vs.records, fs.records);
  EXPECT_GT(vs.bytes_out, 0u);
  EXPECT_GT(fs.bytes_out, 0u);
  const uint64_t t0 = a * period, t1 = (eb + 1) * period - 1;

  const Wave ours = parse_vcd(uscope::test::read_all(dir.file("w.vcd")));
  const Wave fst = read_fst(dir.file("w.fst"));
  for (const Wave *w : {&ours, &fst}) {
    const std::string what = w == &ours ? "vcd" : "fst (fst2vcd)";
    ASSERT_FALSE(w->times.empty()) << what;
    EXPECT_EQ(w->times.front(), t0) << what << ": the window starts at cycle " << a;
    EXPECT_EQ(w->times.back(), t1) << what << ": the window ends with cycle " << eb;
    EXPECT_EQ(w->id_of.size(), ours.id_of.size()) << what << ": the same signals";
    // Every cycle of small windows; about 300 spread over large ones.
    const uint64_t step = std::max<uint64_t>(1, (eb - a + 1) / 300);
    size_t compared = 0;
    for (uint64_t c = a; c <= eb; c += step) {
      compared += compare_state(t, *w, c * period, what);
      if (period > 1) compared += compare_state(t, *w, c * period + period / 2, what);
    }
    compared += compare_state(t, *w, t1, what);
    // And at each time a value changes (multi-clock frames between cycles).
    size_t k = 0;
    for (uint64_t time : w->times)
      if (++k % std::max<size_t>(1, w->times.size() / 200) == 0) compared += compare_state(t, *w, time, what);
    EXPECT_GT(compared, 0u) << what;
    compare_events(t, *w, t0, t1, period, what);
  }
}

void check_window(const std::string &name, uint64_t a = 0, uint64_t b = UINT64_MAX) {
  check_path(kCorpusDir + name, a, b);
}

// ── The tests ──

TEST(WaveformExport, TinyWholeTrace) { check_window("01_tiny.uscope"); }
TEST(WaveformExport, MultiSegment) { check_window("02_multiseg.uscope"); }
TEST(WaveformExport, SparseAndDense) { check_window("03_sparse_dense.uscope"); }
TEST(WaveformExport, EventsOfAllTypes) {
  check_window("05_events_all_types.uscope");
  // Events there are: the pulses were compared, not an empty set.
  const Trace t(kCorpusDir + "05_events_all_types.uscope");
  uscope_event_iter_t *it = nullptr;
  ASSERT_EQ(uscope_reader_events_in_range(t.r, &it, 0, UINT64_MAX), USCOPE_OK);
  uscope_event_t e{};
  size_t n = 0;
  while (uscope_event_iter_next(it, &e) == USCOPE_OK) ++n;
  uscope_event_iter_free(it);
  EXPECT_GT(n, 0u);
}
TEST(WaveformExport, WideCompact) { check_window("06_wide_compact.uscope"); }
TEST(WaveformExport, MultiClockScopes) { check_window("08_multiclock_scopes.uscope"); }
// Cpu traces written by the reference's tools: instructions (sparse
// entities), counters, stage events; 21 also has ops past its storage's
// slots (COMPAT 27) and timestamps off the clock's grid (COMPAT 29).
TEST(WaveformExport, CpuTraceReference) { check_window("20_konata_sample.uscope"); }
TEST(WaveformExport, CpuTraceOffGrid) { check_window("21_konata2uscope_overflow.uscope"); }

TEST(WaveformExport, RangeCuts) {
  const std::string in = kCorpusDir + "02_multiseg.uscope";
  const Trace t(in);
  ASSERT_NE(t.r, nullptr);
  const uint64_t last = t.info.last_time_ps / expected_period(t);
  ASSERT_GT(last, 8u) << "02_multiseg is expected to span more than 8 cycles";
  // A window inside a later segment, and one across segments.
  check_window("02_multiseg.uscope", last / 2, last / 2 + 3);
  check_window("02_multiseg.uscope", 1, last - 1);
  check_window("05_events_all_types.uscope", 1, 2);
}

TEST(WaveformExport, WindowPastTheEndIsClamped) {
  check_window("08_multiclock_scopes.uscope", 2, 1000000000);
  // A window that starts after the last cycle is refused, and writes nothing.
  TempDir dir("wave");
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_VCD;
  o.range_start = 1000000000;
  const std::string out = dir.file("none.vcd");
  EXPECT_EQ(uscope_export(nullptr, (kCorpusDir + "01_tiny.uscope").c_str(), out.c_str(), &o),
            USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("after the trace's last cycle"), std::string::npos)
      << uscope_last_error();
  struct stat sb {};
  EXPECT_NE(::stat(out.c_str(), &sb), 0) << "no output for a refused window";
}

// In the FST, an enum field carries its enum's table of names (what GTKWave
// shows in place of the number): read with fstapi's own reader, the
// hierarchy has the table, and a reference to it just before the field.
TEST(WaveformExport, FstEnumFieldsNameTheirValues) {
#ifndef USCOPE_WITH_FST
  FAIL() << "FST export is not built in (GTKWave's fstapi: the Debian package verilator)";
#else
  TempDir dir("wave");
  const std::string out = dir.file("k.fst");
  do_export(kCorpusDir + "20_konata_sample.uscope", out, USCOPE_EXPORT_FST);
  void *ctx = fstReaderOpen(out.c_str());
  ASSERT_NE(ctx, nullptr) << out;
  std::map<uint64_t, std::pair<std::string, std::vector<std::string>>> tables;  // handle -> (name, literals)
  std::vector<std::string> scopes;
  uint64_t ref = 0;  // the table referred to by the next variable
  std::map<std::string, std::string> enum_of;  // variable path -> table name
  for (fstHier *h; (h = fstReaderIterateHier(ctx));) {
    if (h->htyp == FST_HT_SCOPE) scopes.push_back(h->u.scope.name);
    else if (h->htyp == FST_HT_UPSCOPE) scopes.pop_back();
    else if (h->htyp == FST_HT_ATTRBEGIN && h->u.attr.typ == FST_AT_MISC && h->u.attr.subtype == FST_MT_ENUMTABLE) {
      if (h->u.attr.name && *h->u.attr.name) {
        fstETab *t = fstUtilityExtractEnumTableFromString(h->u.attr.name);
        ASSERT_NE(t, nullptr) << h->u.attr.name;
        std::vector<std::string> lits(t->literal_arr, t->literal_arr + t->elem_count);
        tables[h->u.attr.arg] = {t->name, lits};
        fstUtilityFreeEnumTable(t);
      } else {
        ref = h->u.attr.arg;
      }
    } else if (h->htyp == FST_HT_VAR) {
      std::string path;
      for (const auto &sc : scopes) path += sc + ".";
      if (ref) enum_of[path + h->u.var.name] = tables.count(ref) ? tables[ref].first : "?";
      ref = 0;
    }
  }
  fstReaderClose(ctx);
  EXPECT_EQ(enum_of["root.core0.stage_transition.stage"], "pipeline_stage");
  EXPECT_EQ(enum_of["root.core0.stall.reason"], "stall_reason");
  EXPECT_EQ(enum_of.count("root.core0.entities.slot0.pc"), 0u) << "no table on an integer field";
  bool found = false;
  for (const auto &[handle, t] : tables)
    if (t.first == "pipeline_stage") {
      found = true;
      EXPECT_EQ(t.second, (std::vector<std::string>{"Fetch", "Decode", "Execute", "Writeback"}));
    }
  EXPECT_TRUE(found);
#endif
}

// Enough wide changes for many FST blocks (a block every 4 MiB of fstapi's
// buffer, where a 64-bit change takes 74 bytes), many batches to fstapi's
// worker (1 MiB of records each, where a 64-bit change takes 68 bytes) and
// many 1 MiB chunks to the VCD writer thread: the values must still equal
// the reader's everywhere.
TEST(WaveformExport, ManyBlocksBatchesAndChunks) {
  TempDir dir("wave");
  const std::string in = dir.file("busy.uscope");
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "top", USCOPE_NO_PARENT, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  const uscope_field_t fields[] = {{"a", USCOPE_FT_U64, 0, 0, 0},
                                   {"b", USCOPE_FT_U64, 0, 0, 0},
                                   {"c", USCOPE_FT_U32, 0, 0, 0},
                                   {"d", USCOPE_FT_U64, 0, 0, 0}};
  uint16_t sid = 0;
  ASSERT_EQ(uscope_schema_add_storage(s, &sid, "regs", USCOPE_ROOT_SCOPE, 4, 0, fields, 4, nullptr, 0), USCOPE_OK);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, in.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  const uint64_t cycles = 20000;
  for (uint64_t cy = 0; cy < cycles; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(w, cy * 1000), USCOPE_OK);
    for (uint16_t slot = 0; slot < 4; ++slot)
      for (uint16_t f = 0; f < 4; ++f) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64: a new value nearly every time
        ASSERT_EQ(uscope_slot_set(w, sid, slot, f, f == 2 ? x & 0xffffffff : x), USCOPE_OK);
      }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  check_path(in);
  const uscope_export_stats_t vs = do_export(in, dir.file("again.vcd"), USCOPE_EXPORT_VCD);
  EXPECT_GE(vs.records, cycles * 16 - 16);
  EXPECT_GT(vs.bytes_out, uint64_t{8} << 20) << "several VCD chunks";
  EXPECT_GT(vs.records * 74, uint64_t{16} << 20) << "several FST blocks";
  EXPECT_GT(vs.records * 60, uint64_t{8} << 20) << "several batches to fstapi's worker";
}

// A schema of a few hundred bytes can ask for millions of signals: past the
// exporter's limit it is refused with LIMIT, saying how many, and nothing is
// written.
TEST(WaveformExport, TooManySignalsIsRefused) {
  TempDir dir("wave");
  const std::string in = dir.file("wide.uscope"), out = dir.file("wide.vcd");
  uscope_schema_t *s = nullptr;
  ASSERT_EQ(uscope_schema_new(&s), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_clock(s, nullptr, "clk", 1000), USCOPE_OK);
  ASSERT_EQ(uscope_schema_add_scope(s, nullptr, "top", USCOPE_NO_PARENT, nullptr, USCOPE_CLOCK_INHERIT), USCOPE_OK);
  std::vector<std::string> names;
  for (int i = 0; i < 17; ++i) names.push_back("f" + std::to_string(i));
  std::vector<uscope_field_t> fields;
  for (const auto &n : names) fields.push_back({n.c_str(), USCOPE_FT_U8, 0, 0, 0});
  uint16_t sid = 0;
  ASSERT_EQ(uscope_schema_add_storage(s, &sid, "wide", USCOPE_ROOT_SCOPE, 65535, 0, fields.data(), 17, nullptr, 0),
            USCOPE_OK);
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, in.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  EXPECT_EQ(uscope_begin_cycle(w, 0), USCOPE_OK);
  EXPECT_EQ(uscope_slot_set(w, sid, 7, 3, 42), USCOPE_OK);
  EXPECT_EQ(uscope_end_cycle(w), USCOPE_OK);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_VCD;
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &o), USCOPE_ERR_LIMIT);
  EXPECT_NE(std::string(uscope_last_error()).find("1114095 signals"), std::string::npos) << uscope_last_error();
  struct stat sb {};
  EXPECT_NE(::stat(out.c_str(), &sb), 0);
}

// The CLI, end to end: `uscope export --to vcd --range` and `uscope state
// --cycle N --json` agree on the integer fields.
TEST(WaveformExport, CliAgreesWithState) {
  const std::string in = kCorpusDir + "03_sparse_dense.uscope";
  TempDir dir("wave");
  const std::string out = dir.file("cli.vcd");
  const auto r = uscope::test::run_cli("export " + in + " --to vcd -o " + out + " --range 1:6", true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Wave w = parse_vcd(uscope::test::read_all(out));
  const Trace t(in);
  const uint64_t period = expected_period(t);
  for (uint64_t c = 1; c <= 6; ++c) {
    const auto s = uscope::test::run_cli("state " + in + " --cycle " + std::to_string(c) + " --json", false);
    ASSERT_EQ(s.exit_code, 0);
    // storages[{name, slots[{slot, field: value ...}]}]: pick the integers by hand.
    size_t compared = 0;
    for (uint16_t sid = 0; sid < t.counts.storages; ++sid) {
      uscope_storage_info_t si{};
      ASSERT_EQ(uscope_reader_storage(t.r, &si, sid), USCOPE_OK);
      const std::string key = "{\"name\":\"" + std::string(si.name) + "\"";
      const size_t at = s.out.find(key);
      ASSERT_NE(at, std::string::npos) << key << " in " << s.out;
      const size_t end = s.out.find("{\"name\":", at + 1);
      const std::string body = s.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
      const std::string base = t.scope_path(si.scope_id) + wave_name(si.name) + ".";
      const bool flat = si.num_slots == 1 && !(si.flags & USCOPE_SF_SPARSE);
      for (size_t p = body.find("{\"slot\":"); p != std::string::npos; p = body.find("{\"slot\":", p + 1)) {
        const uint16_t slot = static_cast<uint16_t>(std::stoul(body.substr(p + 8)));
        const std::string sb = flat ? base : base + "slot" + std::to_string(slot) + ".";
        for (uint16_t fi = 0; fi < si.num_fields; ++fi) {
          uscope_field_info_t f{};
          ASSERT_EQ(uscope_reader_storage_field(t.r, &f, sid, fi, 0), USCOPE_OK);
          if (f.type == USCOPE_FT_ENUM || f.type == USCOPE_FT_STRING_REF || f.type == USCOPE_FT_BOOL ||
              (f.type >= USCOPE_FT_I8 && f.type <= USCOPE_FT_I64))
            continue;  // printed as names, text, true/false or negative numbers
          const std::string fk = "\"" + std::string(f.name) + "\":";
          const size_t q = body.find(fk, p);
          ASSERT_NE(q, std::string::npos) << fk;
          const uint64_t v = std::stoull(body.substr(q + fk.size()));
          EXPECT_EQ(w.at(sb + wave_name(f.name), c * period), v) << sb << f.name << " at cycle " << c;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 0u) << "cycle " << c;
  }
}

// Not a test of speed (timings are never asserted): the MB/s and peak RSS
// of both formats, printed, on the trace USCOPE_WAVE_BENCH_TRACE names (the
// demo's trace.uscope for the figures in docs/export.md), else on 02_multiseg.
TEST(WaveformExport, Throughput) {
  const char *env = std::getenv("USCOPE_WAVE_BENCH_TRACE");
  const std::string in = env && *env ? env : kCorpusDir + "02_multiseg.uscope";
  struct stat sb {};
  ASSERT_EQ(::stat(in.c_str(), &sb), 0) << in;
  TempDir dir("wave");
  auto cpu_seconds = [] {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  };
  for (uint32_t format : {USCOPE_EXPORT_VCD, USCOPE_EXPORT_FST}) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const uscope_export_stats_t s = do_export(in, dir.file(format == USCOPE_EXPORT_FST ? "b.fst" : "b.vcd"), format);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = cpu_seconds() - cpu0;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    // CPU time as well as wall time: on a shared machine the wall time says
    // more about the other processes than about the exporter.
    std::printf("[ wave ] %s %s: %.1f MB in %.3f s wall (%.1f MB/s), %.3f s CPU (%.1f MB/s), %llu changes, "
                "%.1f MB out, peak RSS %.1f MB\n",
                uscope_export_format_name(format), in.c_str(), sb.st_size / 1e6, secs, sb.st_size / 1e6 / secs, cpu,
                sb.st_size / 1e6 / cpu, static_cast<unsigned long long>(s.records), s.bytes_out / 1e6,
                ru.ru_maxrss / 1024.0);
    EXPECT_GT(s.records, 0u);
  }
}

}  // namespace
