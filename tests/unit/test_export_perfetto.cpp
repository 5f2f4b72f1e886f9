// `uscope export --to perfetto` and `--to chrome-json` (src/export/perfetto.cpp,
// chrome_json.cpp over timeline_model.cpp), read back by outside readers:
// every Perfetto packet decoded by `protoc --decode_raw` and by the small
// protobuf decoder below (written from the protobuf encoding documentation
// and Perfetto's protos, not from the encoder), the Chrome JSON parsed by
// simdjson; the slices, counter samples and flows they hold are counted
// against the analysis layer (a cpu trace written with the C writer) and
// against the npu report (NPU JSON-Lines).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "export/export.hpp"
#include "export/timeline_model.hpp"
#include "analysis/cpu_trace.hpp"
#include "reader/scope_presence.hpp"
#include "reader/trace_reader.hpp"
#include "support/timeline_decode.hpp"
#include "test_protocol_util.hpp"
#include "uscope/analysis.h"
#include "uscope/convert.h"
#include "uscope/export.h"

namespace {

using uscope::test::read_all;
using uscope::test::TempDir;
using uscope::test::write_all;
using namespace uscope::test::proto;

// The decoders and run_export: tests/support/timeline_decode.hpp.
using namespace uscope::test::timeline;

// ── a cpu trace ──

const char *const kStages[] = {"fetch", "decode", "execute", "retire"};
constexpr uint16_t kSlots = 16;
constexpr uint64_t kCycles = 3000;
constexpr uint64_t kPeriodPs = 2500;

// Two fetches a cycle into free slots, 1-4 cycles a stage, some flushed,
// a dependency on the previous instruction for every third one, a
// bp_misses counter and a rob buffer; many small segments. with_noc: also a
// noc scope, bus0, with a transaction issued every 4 cycles and completed 6
// later (the timeline's counter tracks then ride its noc walk).
void write_cpu_trace(const std::string &path, bool with_noc = false) {
  uscope_schema_t *s = base_schema(kPeriodPs);
  uscope_cpu_buffer_def_t bufs[1] = {{"rob", 8, nullptr, 0}};
  const char *counters[1] = {"bp_misses"};
  uscope_cpu_config_t cfg = cpu_config("core0", "rv32imac", kStages, 4, kSlots);
  cfg.buffers = bufs;
  cfg.num_buffers = 1;
  cfg.counters = counters;
  cfg.num_counters = 1;
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_noc_t *noc = nullptr;
  if (with_noc) {
    const char *const noc_stages[] = {"request", "response"};
    const uscope_noc_config_t nc = noc_config("bus0", 0, "crossbar", noc_stages, 2, 8, 4);
    ASSERT_EQ(uscope_noc_declare(s, &noc, &nc), USCOPE_OK) << uscope_last_error();
  }
  uscope_writer_options_t o{};
  o.struct_size = sizeof o;
  o.checkpoint_interval_ps = 100 * kPeriodPs;
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  std::mt19937 rng(11);
  struct Live {
    bool on = false;
    uint64_t next[4] = {~0ull, ~0ull, ~0ull, ~0ull};
    uint32_t stage = 0;
    bool flush = false;
    int rob = -1;
  } live[kSlots];
  std::vector<bool> rob(8, false);
  int last_slot = -1;
  uint64_t n = 0;
  for (uint64_t cy = 0; cy < kCycles; ++cy) {
    ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriodPs), USCOPE_OK);
    for (uint16_t slot = 0; slot < kSlots; ++slot) {
      Live &l = live[slot];
      if (!l.on || l.next[l.stage] != cy) continue;
      if (l.stage + 1 < 4 && !(l.flush && l.stage == 2)) {
        ++l.stage;
        ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, slot, static_cast<uint8_t>(l.stage)), USCOPE_OK);
        continue;
      }
      if (l.flush) {
        ASSERT_EQ(uscope_cpu_flush(w, cpu, slot, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
        ASSERT_EQ(uscope_cpu_counter_add(w, cpu, 0, 1), USCOPE_OK);
      } else {
        ASSERT_EQ(uscope_cpu_retire(w, cpu, slot), USCOPE_OK);
      }
      if (l.rob >= 0) {
        ASSERT_EQ(uscope_cpu_buffer_remove(w, cpu, 0, static_cast<uint16_t>(l.rob)), USCOPE_OK);
        rob[static_cast<size_t>(l.rob)] = false;
      }
      l.on = false;
      l.next[0] = cy;  // freed this cycle: fetched into again from the next one
    }
    int fetched = 0;
    for (uint16_t slot = 0; slot < kSlots && fetched < 2; ++slot) {
      Live &l = live[slot];
      if (l.on || (l.next[0] == cy && n) || rng() % 4 == 0) continue;
      l = Live{};
      l.on = true;
      uint64_t c = cy;
      for (int st = 0; st < 4; ++st) {
        c += 1 + rng() % 4;
        l.next[st] = c;
      }
      l.flush = rng() % 6 == 0;
      ASSERT_EQ(uscope_cpu_fetch(w, cpu, slot, 0x80000000u + 4 * n, 0x00150513u), USCOPE_OK);
      if (n % 3 == 2 && last_slot >= 0 && live[last_slot].on) {
        ASSERT_EQ(uscope_cpu_dependency(w, cpu, static_cast<uint16_t>(last_slot), slot, USCOPE_CPU_DEP_RAW), USCOPE_OK);
      }
      for (size_t r = 0; r < rob.size(); ++r)
        if (!rob[r]) {
          rob[r] = true;
          l.rob = static_cast<int>(r);
          ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, 0, static_cast<uint16_t>(r), slot), USCOPE_OK);
          break;
        }
      last_slot = slot;
      ++n;
      ++fetched;
    }
    if (noc && cy % 4 == 0) {
      ASSERT_EQ(uscope_noc_issue(w, noc, static_cast<uint32_t>(cy / 4 % 8), 0, 0x1000 + cy, 1, 2,
                                 static_cast<uint16_t>(cy / 4 % 2), static_cast<uint16_t>(2 + cy / 8 % 2)),
                USCOPE_OK)
          << uscope_writer_error(w);
    }
    if (noc && cy >= 6 && (cy - 6) % 4 == 0 && cy + 1 < kCycles) {
      ASSERT_EQ(uscope_noc_complete(w, noc, static_cast<uint32_t>((cy - 6) / 4 % 8)), USCOPE_OK)
          << uscope_writer_error(w);
    }
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
  uscope_cpu_free(cpu);
  if (noc) uscope_noc_free(noc);
}

// The analysis layer's answers over [a, b]: stage spans shown per stage (a
// span [s, e) occupies a cycle of the window, or is empty inside it),
// dependencies, and the samples of each counter and buffer (one at a, one
// per change).
struct Expected {
  std::map<std::string, uint64_t> slices;
  uint64_t insns = 0, deps = 0;
  std::string first_disasm;
  std::map<std::string, std::vector<std::pair<uint64_t, int64_t>>> counters;
};

Expected expected_cpu(const std::string &path, uint64_t a, uint64_t b) {
  Expected x;
  uscope_reader_t *r = nullptr;
  uscope_cpu_trace_t *t = nullptr;
  EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK);
  EXPECT_EQ(uscope_cpu_trace_open(&t, r, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_insn_iter_t *it = nullptr;
  EXPECT_EQ(uscope_cpu_trace_instructions(t, &it, a, b), USCOPE_OK);
  uscope_insn_t i;
  uscope_status_t s;
  while ((s = uscope_insn_iter_next(it, &i)) == USCOPE_OK) {
    if (!x.insns++) x.first_disasm = i.disasm;
    x.deps += i.num_deps;
    for (uint32_t k = 0; k < i.num_stages; ++k) {
      const uscope_stage_span_t &sp = i.stages[k];
      if (sp.start_cycle <= b && (sp.end_cycle > a || sp.start_cycle >= a)) ++x.slices[kStages[sp.stage]];
    }
  }
  EXPECT_EQ(s, USCOPE_DONE);
  uscope_insn_iter_free(it);
  const uint64_t n = b - a + 1;
  std::vector<uint64_t> v(n);
  uscope_counter_info_t ci;
  for (uint32_t c = 0; uscope_cpu_trace_counter(t, &ci, c) == USCOPE_OK; ++c) {
    EXPECT_EQ(uscope_cpu_trace_counter_series(t, v.data(), c, a, n), USCOPE_OK);
    for (uint64_t k = 0; k < n; ++k)
      if (!k || v[k] != v[k - 1]) x.counters[ci.name].push_back({a + k, static_cast<int64_t>(v[k])});
  }
  std::vector<uint32_t> o(n);
  uscope_buffer_info_t bi;
  for (uint32_t bf = 0; uscope_cpu_trace_buffer(t, &bi, bf) == USCOPE_OK; ++bf) {
    EXPECT_EQ(uscope_cpu_trace_buffer_occupancy(t, o.data(), bf, a, n), USCOPE_OK);
    for (uint64_t k = 0; k < n; ++k)
      if (!k || o[k] != o[k - 1]) x.counters[std::string(bi.name) + " occupancy"].push_back({a + k, o[k]});
  }
  uscope_cpu_trace_close(t);
  uscope_reader_close(r);
  return x;
}

// The timeline of a cpu trace against the analysis layer's answers.
void check_cpu(const Timeline &t, const Expected &x, uint64_t a, uint64_t b, uint64_t scale) {
  for (const char *st : kStages) EXPECT_EQ(t.slices.count(st) ? t.slices.at(st) : 0, x.slices.at(st)) << st;
  EXPECT_EQ(t.slices.size(), 4u);
  EXPECT_EQ(t.counters.size(), x.counters.size());
  EXPECT_TRUE(x.counters.count("bp_misses") && x.counters.count("rob occupancy"));
  for (const auto &[name, samples] : x.counters) {
    ASSERT_TRUE(t.counters.count(name)) << name;
    auto got = t.counters.at(name);
    std::sort(got.begin(), got.end());
    std::vector<std::pair<uint64_t, int64_t>> want = samples;
    for (auto &p : want) p.first *= scale;
    EXPECT_EQ(got, want) << name;
  }
  EXPECT_EQ(t.flow_out, t.flow_in) << "every flow starts once and ends once";
  EXPECT_EQ(std::set<uint64_t>(t.flow_out.begin(), t.flow_out.end()).size(), t.flow_out.size());
  EXPECT_GE(t.min_ts, a * scale);
  EXPECT_LE(t.max_ts, (b + 1) * scale);
  ASSERT_EQ(t.processes.size(), 1u);
}

class CpuTraceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("export_perfetto");
    path_ = dir_->file("cpu.uscope");
    write_cpu_trace(path_);
    noc_path_ = dir_->file("cpu_noc.uscope");
    write_cpu_trace(noc_path_, true);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TempDir *dir_;
  static std::string path_, noc_path_;
};
TempDir *CpuTraceTest::dir_ = nullptr;
std::string CpuTraceTest::path_, CpuTraceTest::noc_path_;

using PerfettoExport = CpuTraceTest;
using ChromeJsonExport = CpuTraceTest;

TEST_F(PerfettoExport, CpuTraceDecodesAndMatchesTheAnalysis) {
  const std::string out = dir_->file("cpu.perfetto-trace");
  const uscope_export_stats_t st = run_export(path_, out, USCOPE_EXPORT_PERFETTO);
  EXPECT_EQ(st.first_cycle, 0u);
  EXPECT_EQ(st.last_cycle, kCycles - 1);
  EXPECT_EQ(st.bytes_out, read_all(out).size());
  const Timeline t = decode_perfetto(out);
  check_protoc(out, t);
  const Expected x = expected_cpu(path_, 0, kCycles - 1);
  ASSERT_GT(x.insns, 1000u);
  check_cpu(t, x, 0, kCycles - 1, 1);
  // Over the whole trace every dependency's source is still held: one flow each.
  EXPECT_GT(x.deps, 100u);
  EXPECT_EQ(t.flow_out.size(), x.deps);
  uint64_t slices = 0, samples = 0;
  for (const auto &kv : t.slices) slices += kv.second;
  for (const auto &kv : t.counters) samples += kv.second.size();
  EXPECT_EQ(st.records, slices + samples);
  // The counters come from the export's second thread: a sequence of their own.
  EXPECT_EQ(t.sequences, 2u);
  // Cycles are the unit by default, and the process says so.
  EXPECT_NE(t.processes[0].find("1 ns = 1 cycle"), std::string::npos) << t.processes[0];
  // Slices are named by disassembly, the pc being an argument of each.
  ASSERT_EQ(x.first_disasm.rfind("0x80000000 ", 0), 0u) << x.first_disasm;
  EXPECT_GT(t.slice_names.count(x.first_disasm.substr(11)), 0u) << t.slice_names.begin()->first;
  EXPECT_EQ(t.slices_with_pc, slices);
}

// The timeline's second thread (timeline_model.hpp, SideEncoderFactory):
// what the encoders are told with it is what they are told without it, but
// for the order and the side's flow and process ids; the side's ids never
// meet the main thread's. Recorded through the mapping's own interface.
struct Recorder final : uscope::exporter::timeline::Encoder {
  std::vector<std::string> *log;
  // track uuid -> "process/track" name, shared by both threads' recorders
  // (the side's counter tracks belong to the main thread's process).
  std::map<uint64_t, std::string> *names;
  std::mutex *names_lock;
  Recorder(std::vector<std::string> *l, std::map<uint64_t, std::string> *n, std::mutex *m)
      : log(l), names(n), names_lock(m) {}
  // The slices' Name ids (timeline::Name): how many slices had one, and
  // each id's text (an id names one text).
  uint64_t named = 0;
  std::map<uint32_t, std::string> text_of_id;
  using Track = uscope::exporter::timeline::Track;
  std::string name_of(uint64_t uuid) {
    std::lock_guard<std::mutex> hold(*names_lock);
    return (*names)[uuid];
  }
  void process(const Track &p, std::string_view name) override {
    std::lock_guard<std::mutex> hold(*names_lock);
    EXPECT_TRUE(names->emplace(p.uuid, std::string(name)).second) << "process id " << p.uuid << " given twice";
  }
  void thread(const Track &p, const Track &t, std::string_view name) override {
    const std::string full = name_of(p.uuid) + "/" + std::string(name);
    std::lock_guard<std::mutex> hold(*names_lock);
    EXPECT_TRUE(names->emplace(t.uuid, full).second) << "track id " << t.uuid << " given twice";
  }
  void counter_track(const Track &p, const Track &t, std::string_view name) override { thread(p, t, name); }
  void slice(const Track &t, uint64_t ts, uint64_t dur, const uscope::exporter::timeline::Name &name,
             const uscope::exporter::timeline::Arg *args, size_t n_args, const uint64_t *out, size_t n_out,
             const uint64_t *in, size_t n_in) override {
    std::string r = "S " + name_of(t.uuid) + " " + std::to_string(ts) + "+" + std::to_string(dur) + " " +
                    std::string(name.text) + " flows " + std::to_string(n_out) + "/" + std::to_string(n_in);
    if (name.id) {
      ++named;
      // An id names one text (two ids may name equal texts: the same
      // disassembly at two pcs).
      const auto by_id = text_of_id.emplace(name.id, std::string(name.text)).first;
      EXPECT_EQ(by_id->second, name.text) << "name id " << name.id;
      EXPECT_LT(name.id, uscope::exporter::timeline::kNameIds);
    }
    for (size_t i = 0; i < n_args; ++i) r += std::string(" ") + args[i].key + "=" + std::to_string(args[i].value);
    log->push_back(r);
  }
  void instant(const Track &t, uint64_t ts, std::string_view name) override {
    log->push_back("I " + name_of(t.uuid) + " " + std::to_string(ts) + " " + std::string(name));
  }
  void counter(const Track &t, uint64_t ts, int64_t value) override {
    log->push_back("C " + name_of(t.uuid) + " " + std::to_string(ts) + " " + std::to_string(value));
  }
  void finish() override {}
  void flush() override {}
};

// A job over the open trace at path for timeline::run with a Recorder (the
// format only picks the defaults; the recorder writes nothing to output).
uscope::exporter::Job recorder_job(const std::string &path, const std::string &output, uscope::TraceReader &r) {
  uscope::exporter::Job job;
  job.input = path;
  job.output = output;
  job.reader = &r;
  uscope_export_options_init(&job.opts);
  job.opts.format = USCOPE_EXPORT_PERFETTO;
  return job;
}

TEST_F(PerfettoExport, SecondThreadTellsTheEncodersWhatOneThreadDoes) {
  namespace ex = uscope::exporter;
  // The cpu trace, and the one with a noc scope too (the counter tracks
  // ride the noc walk, on the second thread or on this one).
  for (const std::string &path : {path_, noc_path_}) {
  SCOPED_TRACE(path);
  auto run = [&](bool two, std::map<uint64_t, std::string> *names) {
    uscope::TraceReader r(path);
    ex::Job job = recorder_job(path, dir_->file("unused"), r);
    std::vector<std::string> main_log, side_log;
    std::mutex lock;
    Recorder main(&main_log, names, &lock);
    ex::timeline::SideEncoderFactory side;
    if (two) side = [&] { return std::make_unique<Recorder>(&side_log, names, &lock); };
    const ex::timeline::Counts c = ex::timeline::run(job, main, side);
    EXPECT_EQ(two, !side_log.empty()) << "the counters go to the side encoder";
    for (const std::string &x : side_log) main_log.push_back(x);
    std::sort(main_log.begin(), main_log.end());
    EXPECT_GT(c.counter_samples, 100u);
    EXPECT_EQ(c.slices + c.counter_samples, main_log.size());
    return main_log;
  };
  std::map<uint64_t, std::string> one_names, two_names;
  const std::vector<std::string> one = run(false, &one_names), two = run(true, &two_names);
  EXPECT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two) << "the two runs told the encoders different things";
  // Track ids are the same set (unique over both threads).
  std::set<std::string> a, b;
  for (const auto &kv : one_names) a.insert(std::to_string(kv.first) + kv.second);
  for (const auto &kv : two_names) b.insert(std::to_string(kv.first) + kv.second);
  EXPECT_EQ(a, b);
  }
}

// A cpu trace of n instructions one after another (fetch, a stage, retire
// or flush: 3 cycles each), instruction k at pc_of(k), every fifth flushed.
template <class PcOf>
void write_sequential_cpu_trace(const std::string &path, uint64_t n, PcOf pc_of) {
  uscope_schema_t *s = base_schema(kPeriodPs);
  uscope_cpu_config_t cfg = cpu_config("core0", "rv32imac", kStages, 4, kSlots);
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
  uscope_schema_free(s);
  for (uint64_t k = 0; k < n; ++k) {
    const auto slot = static_cast<uint32_t>(k % kSlots);
    ASSERT_EQ(uscope_begin_cycle(w, 3 * k * kPeriodPs), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_fetch(w, cpu, slot, pc_of(k), 0x00150513u), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, (3 * k + 1) * kPeriodPs), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, slot, 1), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, (3 * k + 2) * kPeriodPs), USCOPE_OK);
    if (k % 5 == 4)
      ASSERT_EQ(uscope_cpu_flush(w, cpu, slot, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
    else
      ASSERT_EQ(uscope_cpu_retire(w, cpu, slot), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_cpu_free(cpu);
}

// The slices of an instruction are named once per distinct text (pc, bits,
// flushed or not), and the encoders keep what they made of a name by its
// id: every instruction slice has one, an id always names the same text,
// the ids are as many as the distinct instructions, and past
// InsnNames::kMaxNames (65,536) the names come without an id, their text
// still right. Perfetto and Chrome JSON then write each slice's own name.
TEST_F(PerfettoExport, InstructionNamesHaveOneIdPerDistinctInstruction) {
  namespace ex = uscope::exporter;
  struct Case {
    uint64_t n;
    uint64_t distinct_pcs;
  };
  for (const Case cs : {Case{400, 3}, Case{70000, 70000}}) {
    SCOPED_TRACE(std::to_string(cs.n) + " instructions at " + std::to_string(cs.distinct_pcs) + " pcs");
    const std::string path = dir_->file("names.uscope");
    auto pc_of = [&](uint64_t k) { return 0x80000000u + 4 * static_cast<uint32_t>(k % cs.distinct_pcs); };
    write_sequential_cpu_trace(path, cs.n, pc_of);
    if (HasFatalFailure()) return;
    uscope::TraceReader r(path);
    ex::Job job = recorder_job(path, dir_->file("unused"), r);
    std::vector<std::string> log;
    std::map<uint64_t, std::string> names;
    std::mutex lock;
    Recorder rec(&log, &names, &lock);
    const ex::timeline::Counts c = ex::timeline::run(job, rec);
    ASSERT_EQ(c.slices, 2 * cs.n) << "fetch and the next stage of each";
    // Distinct instructions: (pc, flushed); 400 at 3 pcs, every fifth
    // flushed, are all six.
    const uint64_t distinct = cs.distinct_pcs == 3 ? 6 : cs.n;
    const uint64_t with_id = std::min<uint64_t>(distinct, 1 << 16);
    EXPECT_EQ(rec.text_of_id.size(), with_id);
    const uint64_t unnamed = distinct - with_id;  // their instructions' slices have no id
    EXPECT_EQ(rec.named, c.slices - 2 * unnamed);
    size_t flushed = 0;
    for (const auto &[id, text] : rec.text_of_id) flushed += text.find(" (flushed)") != std::string::npos;
    EXPECT_EQ(flushed, cs.distinct_pcs == 3 ? 3u : with_id / 5);
    // Every slice still says its own instruction's name: the flushed ones
    // (every fifth), and the others, by the log's text.
    uint64_t flushed_slices = 0, slices = 0;
    for (const std::string &x : log) {
      if (x.rfind("S ", 0) != 0) continue;
      ++slices;
      flushed_slices += x.find(" (flushed) flows") != std::string::npos;
      EXPECT_NE(x.find(" add a0,a0,1 "), std::string::npos) << x;
    }
    EXPECT_EQ(slices, c.slices);
    EXPECT_EQ(flushed_slices, 2 * (cs.n / 5));
    // And the files: each slice's name is its instruction's.
    for (const uint32_t fmt : {uint32_t{USCOPE_EXPORT_PERFETTO}, uint32_t{USCOPE_EXPORT_CHROME_JSON}}) {
      const std::string out = dir_->file("names.out");
      run_export(path, out, fmt, 0, UINT64_MAX);
      const Timeline t = fmt == USCOPE_EXPORT_PERFETTO ? decode_perfetto(out) : decode_chrome(out);
      uint64_t got = 0, got_flushed = 0;
      for (const auto &[name, count] : t.slice_names) {
        EXPECT_EQ(name.rfind("add a0,a0,1", 0), 0u) << name;
        got += count;
        if (name.find(" (flushed)") != std::string::npos) got_flushed += count;
      }
      EXPECT_EQ(got, c.slices);
      EXPECT_EQ(got_flushed, 2 * (cs.n / 5));
    }
  }
}

// With a noc scope the counter tracks ride the noc walk (timeline_model.cpp
// series_and_rest: one decode of the trace for both): their samples are
// still the analysis layer's, over the whole trace and in windows, and the
// bus's hops are all there (one slice per transaction, open ones included).
TEST_F(PerfettoExport, CounterTracksRidingTheNocWalkAreTheAnalysisValues) {
  for (const auto &[a, b] : std::vector<std::pair<uint64_t, uint64_t>>{{0, kCycles - 1}, {700, 1900}, {2995, 2999}}) {
    for (const uint32_t fmt : {uint32_t{USCOPE_EXPORT_PERFETTO}, uint32_t{USCOPE_EXPORT_CHROME_JSON}}) {
      SCOPED_TRACE("window " + std::to_string(a) + ".." + std::to_string(b) + (fmt == USCOPE_EXPORT_PERFETTO ? " perfetto" : " chrome-json"));
      const std::string out = dir_->file("rider.out");
      run_export(noc_path_, out, fmt, a, b);
      const Timeline t = fmt == USCOPE_EXPORT_PERFETTO ? decode_perfetto(out) : decode_chrome(out);
      const Expected x = expected_cpu(noc_path_, a, b);
      ASSERT_EQ(t.counters.size(), x.counters.size());
      size_t changes = 0;
      for (const auto &[name, samples] : x.counters) {
        ASSERT_TRUE(t.counters.count(name)) << name;
        auto got = t.counters.at(name);
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, samples) << name;
        changes += samples.size() - 1;
      }
      EXPECT_GT(changes, b - a > 100 ? 200u : 0u) << "the series change in the window";
      ASSERT_EQ(t.processes.size(), 2u);
      // Transactions issued every 4 cycles, each 6 long: those meeting [a, b].
      uint64_t hops = 0;
      for (uint64_t c = 0; c < kCycles; c += 4) {
        const uint64_t done = c + 6 + 1 < kCycles ? c + 6 : kCycles - 1;
        if (c <= b && done >= a) ++hops;
      }
      uint64_t noc_slices = 0;
      for (const auto &[track, n] : t.slices)
        if (track.rfind("port ", 0) == 0) noc_slices += n;
      EXPECT_EQ(noc_slices, hops);
    }
  }
}

// Event names are interned up to 65,536 distinct ones (perfetto.cpp,
// NameTable: a table that grows with them), then written inline: 70,000
// distinct disassemblies, twice over (a loop), each named right either way,
// and the second time found in the table. The Chrome JSON export of the
// same trace, which names every event inline, is the reference.
TEST(PerfettoNames, PastTheInternTableNamesAreWrittenInline) {
  TempDir d("export_perfetto_names");
  const std::string path = d.file("names.uscope");
  constexpr uint32_t kDistinct = 70000, kInsns = 2 * kDistinct;
  {
    uscope_schema_t *s = base_schema(kPeriodPs);
    uscope_cpu_config_t cfg = cpu_config("core0", "rv32i", kStages, 4, 2);
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    for (uint32_t i = 0; i <= kInsns; ++i) {
      ASSERT_EQ(uscope_begin_cycle(w, uint64_t{i} * kPeriodPs), USCOPE_OK);
      if (i > 0) {
        ASSERT_EQ(uscope_cpu_retire(w, cpu, static_cast<uint16_t>((i - 1) % 2)), USCOPE_OK);
      }
      if (i < kInsns) {
        // addi rd, rs1, imm: 4,096 immediates x 31 destinations, each pair once.
        const uint32_t k = i % kDistinct, imm = k % 4096, rd = 1 + k / 4096, rs1 = 5;
        const uint32_t bits = imm << 20 | rs1 << 15 | rd << 7 | 0x13;
        ASSERT_EQ(uscope_cpu_fetch(w, cpu, static_cast<uint16_t>(i % 2), 0x1000 + 4 * uint64_t{k}, bits), USCOPE_OK);
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
  }
  const std::string pf = d.file("names.perfetto-trace"), js = d.file("names.json");
  run_export(path, pf, USCOPE_EXPORT_PERFETTO);
  run_export(path, js, USCOPE_EXPORT_CHROME_JSON);
  const Timeline t = decode_perfetto(pf), c = decode_chrome(js);
  ASSERT_EQ(c.slice_names.size(), kDistinct);
  for (const auto &kv : c.slice_names) ASSERT_EQ(kv.second, 2u) << kv.first;
  EXPECT_TRUE(t.slice_names == c.slice_names) << "the Perfetto trace names its slices unlike the Chrome JSON";
  // Both ways are used: the table full, the names past it inline (TrackEvent.name).
  EXPECT_EQ(t.interned_names, 65536u);
  EXPECT_EQ(t.inline_names, 2 * (kDistinct - 65536u));
}

// A core with a counter beside an NPU busy in 5 of the trace's 60 segments:
// the counters' replay records which scopes each segment holds
// (reader/scope_presence.hpp), exactly as a replay of each segment finds
// them, and the timeline's npu pass, which then reads only the segments
// with npu items, shows every npu event of the export of the npu scope alone
// (which has no counters' replay and reads every segment).
TEST(PerfettoSparseNpu, NpuPassReadsOnlyTheSegmentsWithNpuItemsAndLosesNone) {
  TempDir d("export_sparse_npu");
  const std::string path = d.file("mixed.uscope");
  constexpr uint64_t kMixedCycles = 6000, kPeriod = 1000;
  {
    uscope_schema_t *s = base_schema(kPeriod);
    const char *counters[1] = {"bp_misses"};
    uscope_cpu_config_t cc = cpu_config("core0", "rv32i", kStages, 4, 2);
    cc.counters = counters;
    cc.num_counters = 1;
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cc), USCOPE_OK) << uscope_last_error();
    uscope_npu_config_t nc = npu_config("npu0", 0, 4, 1, 1, 1);
    uscope_npu_t *npu = nullptr;
    ASSERT_EQ(uscope_npu_declare(s, &npu, &nc), USCOPE_OK) << uscope_last_error();
    uscope_writer_options_t o{};
    o.struct_size = sizeof o;
    o.checkpoint_interval_ps = 100 * kPeriod;
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    // TE runs (start, end): in segments 10, 30 (two) and 55 (across into 56).
    const std::pair<uint64_t, uint64_t> runs[] = {{1010, 1050}, {3000, 3020}, {3040, 3090}, {5550, 5620}};
    uint32_t job = 0;
    for (uint64_t cy = 0; cy < kMixedCycles; ++cy) {
      ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
      if (cy > 0) {
        ASSERT_EQ(uscope_cpu_retire(w, cpu, static_cast<uint16_t>((cy - 1) % 2)), USCOPE_OK);
      }
      ASSERT_EQ(uscope_cpu_fetch(w, cpu, static_cast<uint16_t>(cy % 2), 0x1000 + 4 * (cy % 64), 0x00150513u), USCOPE_OK);
      if (cy % 7 == 0) {
        ASSERT_EQ(uscope_cpu_counter_add(w, cpu, 0, 1), USCOPE_OK);
      }
      for (const auto &[a, b] : runs) {
        if (cy == a) {
          ASSERT_EQ(uscope_npu_te_start(w, npu, 0, USCOPE_NPU_NO_CONTEXT, ++job, 0, 8, 8, 8, 8, 8, 8), USCOPE_OK);
        }
        if (cy == b) {
          ASSERT_EQ(uscope_npu_te_end(w, npu, 0, USCOPE_NPU_NO_CONTEXT, job, 0, 512, uint32_t(b - a)), USCOPE_OK);
        }
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
    uscope_npu_free(npu);
  }

  // What the counters' replay records, against each segment replayed alone.
  uscope::TraceReader r(path);
  const uscope::Schema &sc = r.schema();
  uint16_t npu_scope = 0xFFFF;
  for (size_t i = 0; i < sc.scopes.size(); ++i)
    if (std::string(sc.name(sc.scopes[i].name)) == "npu0") npu_scope = static_cast<uint16_t>(i);
  ASSERT_NE(npu_scope, 0xFFFF);
  uscope::ScopePresence seen(sc, r.segments().size());
  {
    uscope_cpu_trace_options_t o{};
    o.struct_size = sizeof o;
    o.scope = "core0";
    uscope::analysis::CpuTrace t(r, o);
    ASSERT_FALSE(t.counters().empty());
    for (size_t i = 0; i < r.segments().size(); ++i) EXPECT_TRUE(seen.may_hold(i, npu_scope)) << "nothing seen yet";
    t.series_changes({{t.counters()[0].storage_id, false}}, 0, kMixedCycles - 1,
                     [](uint32_t, uint64_t, uint64_t) {}, &seen);
  }
  struct Has {
    const uscope::Schema &sc;
    uint16_t scope;
    bool any = false;
    void frame(uint64_t) {}
    void op(uint64_t, const uscope::DeltaOp &o) { any |= sc.storages[o.storage_id].scope_id == scope; }
    void event(uint64_t, uint16_t id, const uint8_t *, uint32_t) {
      for (const uscope::EventDef &e : sc.events) any |= e.event_type_id == id && e.scope_id == scope;
    }
  };
  ASSERT_EQ(r.segments().size(), 60u);
  size_t with_npu = 0;
  auto states = r.initial_state();
  for (size_t i = 0; i < r.segments().size(); ++i) {
    Has h{sc, npu_scope};
    ASSERT_TRUE(r.replay(i, states, h));
    EXPECT_EQ(seen.may_hold(i, npu_scope), h.any) << "segment " << i;
    with_npu += h.any;
  }
  EXPECT_EQ(with_npu, 5u);

  // The export's npu part, against the npu scope's alone.
  const std::string full = d.file("full.perfetto-trace"), alone = d.file("npu.perfetto-trace");
  run_export(path, full, USCOPE_EXPORT_PERFETTO);
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_PERFETTO;
  o.scope = "npu0";
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(uscope_export(&st, path.c_str(), alone.c_str(), &o), USCOPE_OK) << uscope_last_error();
  const Timeline f = decode_perfetto(full), n = decode_perfetto(alone);
  ASSERT_FALSE(n.slices.empty());
  for (const auto &[track, count] : n.slices) EXPECT_EQ(f.slices.count(track) ? f.slices.at(track) : 0, count) << track;
  for (const auto &[track, count] : n.instants)
    EXPECT_EQ(f.instants.count(track) ? f.instants.at(track) : 0, count) << track;
  EXPECT_EQ(n.slices.at("TE core 0"), 4u);
}

TEST_F(PerfettoExport, RangeCutsAndPicosecondsScale) {
  const uint64_t a = 1000, b = 1999;
  const std::string out = dir_->file("range.perfetto-trace");
  const uscope_export_stats_t st = run_export(path_, out, USCOPE_EXPORT_PERFETTO, a, b, USCOPE_TIME_PS);
  EXPECT_EQ(st.first_cycle, a);
  EXPECT_EQ(st.last_cycle, b);
  const Timeline t = decode_perfetto(out);
  check_protoc(out, t);
  check_cpu(t, expected_cpu(path_, a, b), a, b, kPeriodPs);
  EXPECT_NE(t.processes[0].find("1 ns = 1 ps"), std::string::npos) << t.processes[0];
  // The same window in cycles: every timestamp is the ps one / period.
  const std::string out2 = dir_->file("range_cycles.perfetto-trace");
  run_export(path_, out2, USCOPE_EXPORT_PERFETTO, a, b, USCOPE_TIME_CYCLE);
  const Timeline c = decode_perfetto(out2);
  ASSERT_EQ(c.slice_ts.size(), t.slice_ts.size());
  for (size_t i = 0; i < c.slice_ts.size(); ++i) ASSERT_EQ(c.slice_ts[i] * kPeriodPs, t.slice_ts[i]) << i;
  // A range past the end is cut at the last cycle.
  const std::string out3 = dir_->file("tail.perfetto-trace");
  const uscope_export_stats_t s3 = run_export(path_, out3, USCOPE_EXPORT_PERFETTO, kCycles - 100, kCycles + 5000);
  EXPECT_EQ(s3.last_cycle, kCycles - 1);
  check_cpu(decode_perfetto(out3), expected_cpu(path_, kCycles - 100, kCycles - 1), kCycles - 100, kCycles - 1, 1);
}

// The "ts" and "dur" numbers of a Chrome JSON document, which are written in
// their shortest exact form: a whole number of microseconds with no ".000",
// a fraction with no trailing zero (each one is checked here).
struct TimeForms {
  size_t whole = 0, fraction = 0;
};
TimeForms time_forms(const std::string &doc) {
  TimeForms f;
  for (const char *key : {"\"ts\":", "\"dur\":"}) {
    for (size_t at = doc.find(key); at != std::string::npos; at = doc.find(key, at + 1)) {
      const size_t from = at + std::strlen(key), end = doc.find_first_of(",}", from);
      const std::string num = doc.substr(from, end - from);
      if (num.find('.') == std::string::npos) {
        ++f.whole;
        continue;
      }
      ++f.fraction;
      EXPECT_NE(num.back(), '0') << num;
      EXPECT_LE(num.size() - num.find('.'), 4u) << num;
    }
  }
  return f;
}

TEST_F(ChromeJsonExport, CpuTraceParsesAndMatchesTheAnalysis) {
  const std::string out = dir_->file("cpu.json");
  const uscope_export_stats_t st = run_export(path_, out, USCOPE_EXPORT_CHROME_JSON);
  EXPECT_EQ(st.bytes_out, read_all(out).size());
  const Timeline t = decode_chrome(out);
  const Expected x = expected_cpu(path_, 0, kCycles - 1);
  check_cpu(t, x, 0, kCycles - 1, 1);
  EXPECT_EQ(t.flow_out.size(), x.deps);
  // The same slices as the Perfetto trace, name for name.
  const std::string pf = dir_->file("cpu2.perfetto-trace");
  run_export(path_, pf, USCOPE_EXPORT_PERFETTO);
  const Timeline p = decode_perfetto(pf);
  EXPECT_EQ(t.slice_names, p.slice_names);
  EXPECT_EQ(t.slices, p.slices);
  EXPECT_EQ(t.slices_with_pc, p.slices_with_pc);
  EXPECT_GT(t.slices_with_pc, 1000u);
  // Cycles as microseconds: 1, 2 and 3 decimals, and whole ones.
  const TimeForms f = time_forms(read_all(out));
  EXPECT_GT(f.whole, 0u);
  EXPECT_GT(f.fraction, 1000u);
  // python3's json module reads it too.
  const std::string cmd = "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                          "sys.exit(0 if len(d['traceEvents'])>0 else 1)\" '" + out + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST_F(ChromeJsonExport, RangeAndPicoseconds) {
  const uint64_t a = 500, b = 1200;
  const std::string out = dir_->file("range.json");
  const uscope_export_stats_t st = run_export(path_, out, USCOPE_EXPORT_CHROME_JSON, a, b, USCOPE_TIME_PS);
  EXPECT_EQ(st.first_cycle, a);
  EXPECT_EQ(st.last_cycle, b);
  check_cpu(decode_chrome(out), expected_cpu(path_, a, b), a, b, kPeriodPs);
  // cycle x 2.5 ns: halves of a microsecond and whole ones.
  const TimeForms f = time_forms(read_all(out));
  EXPECT_GT(f.whole, 100u);
  EXPECT_GT(f.fraction, 100u);
}

TEST_F(ChromeJsonExport, EmptyWindowIsValidJson) {
  // An npu input with no events: metadata only, still a JSON document.
  TempDir dir("export_chrome_empty");
  const std::string in = dir.file("empty.jsonl"), out = dir.file("empty.json");
  write_all(in, "{\"event_type\": \"TRACE_META\", \"version\": \"1.0\"}\n");
  run_export(in, out, USCOPE_EXPORT_CHROME_JSON);
  const Timeline t = decode_chrome(out);
  EXPECT_TRUE(t.slices.empty());
  EXPECT_EQ(t.processes.size(), 1u);
  // A window past the cpu trace's end: no event at all, still a document.
  const std::string past = dir.file("past.json");
  const uscope_export_stats_t st = run_export(path_, past, USCOPE_EXPORT_CHROME_JSON, kCycles + 10, kCycles + 20);
  EXPECT_EQ(st.records, 0u);
  const Timeline p = decode_chrome(past);
  EXPECT_EQ(p.events, 0u);
}

TEST_F(ChromeJsonExport, NamesAreEscaped) {
  // A phase (a command's slice name) with a quote, a backslash, a control
  // character and UTF-8.
  TempDir dir("export_chrome_escape");
  const std::string in = dir.file("e.jsonl"), out = dir.file("e.json");
  write_all(in,
            "{\"event_type\": \"CMD_ENQUEUE\", \"t_cycle\": 1, \"cmd_id\": 1, \"cmd_type\": \"MATMUL\", "
            "\"source\": \"ISA\", \"phase\": \"a\\\"b\\\\c\\u0001d\u00e9\"}\n"
            "{\"event_type\": \"CMD_START\", \"t_cycle\": 2, \"cmd_id\": 1}\n"
            "{\"event_type\": \"CMD_END\", \"t_cycle\": 9, \"cmd_id\": 1}\n");
  run_export(in, out, USCOPE_EXPORT_CHROME_JSON);
  const Timeline t = decode_chrome(out);
  EXPECT_EQ(t.slice_names.count("CMD a\"b\\c\x01" "d\u00e9"), 1u) << (t.slice_names.empty() ? "" : t.slice_names.begin()->first);
  const std::string pf = dir.file("e.perfetto-trace");
  run_export(in, pf, USCOPE_EXPORT_PERFETTO);
  EXPECT_EQ(decode_perfetto(pf).slice_names, t.slice_names);
}

// ── NPU JSON-Lines ──

// The npu report's counts (uscope_convert_npu_report, JSON).
struct NpuCounts {
  uint64_t te = 0, ve = 0, dma = 0, dram = 0, cmds = 0;
};
NpuCounts npu_report(const std::string &in) {
  char *text = nullptr;
  EXPECT_EQ(uscope_convert_npu_report(&text, nullptr, in.c_str(), USCOPE_CONVERT_JSONL, nullptr, 1), USCOPE_OK)
      << uscope_last_error();
  NpuCounts c;
  if (!text) return c;
  simdjson::dom::parser p;
  simdjson::dom::element j = p.parse(std::string(text));
  uscope_convert_free(text);
  c.te = uint64_t(j["te_utilization"]["jobs"]);
  c.ve = uint64_t(j["ve_utilization"]["jobs"]);
  c.dma = uint64_t(j["dma_bandwidth"]["transfers"]);
  for (simdjson::dom::element d : simdjson::dom::array(j["dram_channels"])) c.dram += uint64_t(d["transfers"]);
  for (simdjson::dom::element ph : simdjson::dom::array(j["phases"])) c.cmds += uint64_t(ph["commands"]);
  return c;
}

void check_npu(const Timeline &t, const NpuCounts &c) {
  auto sum = [&](const std::string &prefix) {
    uint64_t n = 0;
    for (const auto &kv : t.slices)
      if (kv.first.rfind(prefix, 0) == 0) n += kv.second;
    return n;
  };
  EXPECT_EQ(sum("TE core"), c.te);
  EXPECT_EQ(sum("VE core"), c.ve);
  EXPECT_EQ(sum("DMA channel"), c.dma);
  EXPECT_EQ(sum("DRAM channel"), c.dram);
  EXPECT_EQ(sum("commands"), c.cmds);
  EXPECT_EQ(t.flow_out, t.flow_in);
}

// n commands, overlapping, each with a job, a TE run and a DMA transfer
// inside it, in phases P0..P3; written in time order.
std::string npu_jsonl(int n) {
  std::vector<std::pair<uint64_t, std::string>> ev;
  auto add = [&](uint64_t t, const std::string &s) {
    ev.push_back({t, "{\"t_cycle\": " + std::to_string(t) + ", " + s + "}\n"});
  };
  for (int i = 0; i < n; ++i) {
    const uint64_t t0 = 100 + 37 * static_cast<uint64_t>(i);
    const std::string cmd = "\"cmd_id\": " + std::to_string(i);
    const std::string job = "\"job_id\": " + std::to_string(1000 + i);
    const std::string tx = "\"tx_id\": " + std::to_string(5000 + i) + ", \"channel\": " + std::to_string(i % 3);
    add(t0, "\"event_type\": \"CMD_ENQUEUE\", " + cmd + ", \"cmd_type\": \"MATMUL\", \"source\": \"ISA\", \"phase\": \"P" +
                std::to_string(i % 4) + "\", \"layer_id\": " + std::to_string(i % 5));
    add(t0 + 5, "\"event_type\": \"CMD_START\", " + cmd);
    add(t0 + 10, "\"event_type\": \"JOB_ISSUE\", " + job + ", " + cmd + ", \"job_type\": \"TE_GEMM\"");
    add(t0 + 12, "\"event_type\": \"DMA_START\", " + tx + ", \"direction\": \"DRAM_TO_SRAM\", \"size_bytes\": 4096, " + cmd);
    add(t0 + 40, "\"event_type\": \"DMA_END\", " + tx);
    add(t0 + 41, "\"event_type\": \"TE_START\", " + job + ", " + cmd + ", \"core_id\": " + std::to_string(i % 2));
    add(t0 + 90, "\"event_type\": \"TE_END\", " + job + ", \"core_id\": " + std::to_string(i % 2));
    add(t0 + 95, "\"event_type\": \"JOB_DONE\", " + job);
    add(t0 + 100, "\"event_type\": \"SRAM_ACCESS\", \"addr\": 64, \"bank_id\": 1, \"access_type\": \"READ\", \"by\": \"TE\"");
    add(t0 + 120, "\"event_type\": \"CMD_END\", " + cmd + ", \"status\": \"OK\"");
  }
  std::stable_sort(ev.begin(), ev.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
  std::string s = "{\"event_type\": \"TRACE_META\", \"version\": \"1.0\"}\n";
  for (const auto &e : ev) s += e.second;
  return s;
}

TEST_F(PerfettoExport, NpuJsonlMatchesTheNpuReport) {
  TempDir dir("export_perfetto_npu");
  const std::string in = dir.file("npu.jsonl");
  write_all(in, npu_jsonl(300));
  const NpuCounts c = npu_report(in);
  ASSERT_EQ(c.cmds, 300u);
  ASSERT_EQ(c.te, 300u);
  const std::string out = dir.file("npu.perfetto-trace");
  const uscope_export_stats_t st = run_export(in, out, USCOPE_EXPORT_PERFETTO);
  const Timeline t = decode_perfetto(out);
  check_protoc(out, t);
  check_npu(t, c);
  // Every command starts a flow to its job, TE run and DMA transfer.
  EXPECT_EQ(t.flow_out.size(), 3u * 300);
  // CMD_ENQUEUE and SRAM_ACCESS: instants (the npu's unpaired events).
  EXPECT_EQ(t.instants.at("events core 0"), 600u);
  EXPECT_EQ(st.first_cycle, 0u);
  EXPECT_EQ(st.last_cycle, 100 + 37 * 299 + 120u);
  EXPECT_NE(t.processes[0].find("1 ns = 1 cycle"), std::string::npos);
  // Chrome JSON: the same.
  const std::string js = dir.file("npu.json");
  run_export(in, js, USCOPE_EXPORT_CHROME_JSON);
  const Timeline j = decode_chrome(js);
  check_npu(j, c);
  EXPECT_EQ(j.slice_names, t.slice_names);
  EXPECT_EQ(j.flow_out.size(), 3u * 300);
}

TEST_F(PerfettoExport, SpecExamplesMatchTheNpuReport) {
  const std::string in = std::string(USCOPE_FUZZ_CORPUS_DIR) + "/jsonl/spec_examples.jsonl";
  TempDir dir("export_perfetto_spec");
  const NpuCounts c = npu_report(in);
  const std::string out = dir.file("spec.perfetto-trace");
  run_export(in, out, USCOPE_EXPORT_PERFETTO);
  const Timeline t = decode_perfetto(out);
  check_protoc(out, t);
  check_npu(t, c);
  // Command 42's job, DMA, NoC and DRAM transfers and TE run (the other
  // commands never start).
  EXPECT_EQ(t.flow_out.size(), 5u);
  EXPECT_EQ(t.slices.at("NoC link 0"), 1u);
  EXPECT_EQ(t.slice_names.at("CMD QKV_PROJ"), 1u);
  const std::string js = dir.file("spec.json");
  run_export(in, js, USCOPE_EXPORT_CHROME_JSON);
  check_npu(decode_chrome(js), c);
}

// The npu scope of a .uscope (JSONL converted by uscope_convert): read back
// through the converters' µScope source, the same timeline as the JSONL.
TEST_F(PerfettoExport, NpuUscopeScopeMatchesItsJsonl) {
  TempDir dir("export_perfetto_npu_uscope");
  const std::string in = dir.file("npu.jsonl"), us = dir.file("npu.uscope");
  write_all(in, npu_jsonl(120));
  ASSERT_EQ(uscope_convert(nullptr, in.c_str(), USCOPE_CONVERT_JSONL, us.c_str(), USCOPE_CONVERT_USCOPE, nullptr),
            USCOPE_OK)
      << uscope_last_error();
  const std::string a = dir.file("a.perfetto-trace"), b = dir.file("b.perfetto-trace");
  run_export(in, a, USCOPE_EXPORT_PERFETTO);
  run_export(us, b, USCOPE_EXPORT_PERFETTO);
  const Timeline ta = decode_perfetto(a), tb = decode_perfetto(b);
  check_protoc(b, tb);
  check_npu(tb, npu_report(in));
  EXPECT_EQ(ta.slices, tb.slices);
  EXPECT_EQ(ta.slice_names, tb.slice_names);
  EXPECT_EQ(ta.slice_ts, tb.slice_ts);
  EXPECT_EQ(tb.flow_out.size(), 3u * 120);
  ASSERT_EQ(tb.processes.size(), 1u);
  EXPECT_NE(tb.processes[0].find("(npu, 1 ns = 1 cycle)"), std::string::npos) << tb.processes[0];
}

TEST_F(PerfettoExport, NpuRangeCutsSlices) {
  TempDir dir("export_perfetto_npu_range");
  const std::string in = dir.file("npu.jsonl");
  write_all(in, npu_jsonl(100));
  const std::string out = dir.file("r.perfetto-trace");
  const uscope_export_stats_t st = run_export(in, out, USCOPE_EXPORT_PERFETTO, 1000, 1999);
  EXPECT_EQ(st.first_cycle, 1000u);
  EXPECT_EQ(st.last_cycle, 1999u);
  const Timeline t = decode_perfetto(out);
  EXPECT_GE(t.min_ts, 1000u);
  EXPECT_LE(t.max_ts, 2000u);
  // Commands i whose life [105 + 37 i, 220 + 37 i) meets [1000, 1999].
  uint64_t want = 0;
  for (uint64_t i = 0; i < 100; ++i)
    if (105 + 37 * i <= 1999 && 220 + 37 * i > 1000) ++want;
  EXPECT_EQ(t.slices.at("commands"), want);
  EXPECT_EQ(t.flow_out, t.flow_in);
}

TEST_F(PerfettoExport, ScopeThatIsNotThereIsAnError) {
  TempDir dir("export_perfetto_scope");
  const std::string in = dir.file("npu.jsonl");
  write_all(in, npu_jsonl(3));
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = USCOPE_EXPORT_PERFETTO;
  const std::string out = dir.file("x.perfetto-trace");
  // A .uscope without cpu or npu scopes: nothing to show.
  const std::string plain = dir.file("plain.uscope");
  {
    uscope_schema_t *s = base_schema(1000);
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, plain.c_str(), s, nullptr, 0, nullptr), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  }
  EXPECT_NE(uscope_export(nullptr, plain.c_str(), out.c_str(), &o), USCOPE_OK);
  EXPECT_NE(std::string(uscope_last_error()).find("no cpu, npu or noc protocol scope"), std::string::npos)
      << uscope_last_error();
  EXPECT_FALSE(std::ifstream(out).good()) << "no partial output";
  // A scope declared cpu that is not a whole cpu protocol, and nothing else: its reason is the error.
  const std::string bad = uscope::test::kCorpusDir + "02_multiseg.uscope";
  EXPECT_EQ(uscope_export(nullptr, bad.c_str(), out.c_str(), &o), USCOPE_ERR_SCHEMA);
  EXPECT_NE(std::string(uscope_last_error()).find("cpu scope 'core' has no 'entities' storage"), std::string::npos)
      << uscope_last_error();
  // --scope names one scope: a cpu scope by its name, else an error naming those there are.
  o.scope = "core0";
  uscope_export_stats_t st{};
  st.struct_size = sizeof st;
  EXPECT_EQ(uscope_export(&st, path_.c_str(), out.c_str(), &o), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(decode_perfetto(out).processes.size(), 1u);
  o.scope = "core9";
  EXPECT_EQ(uscope_export(nullptr, path_.c_str(), out.c_str(), &o), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(std::string(uscope_last_error()).find("no cpu, npu or noc scope named 'core9' (the trace has: core0 (cpu))"),
            std::string::npos)
      << uscope_last_error();
}

}  // namespace
