// The cpu analysis (include/uscope/analysis.h) against a model: a test core
// writes instructions with known lives through the public cpu protocol API,
// over many small segments (so that instructions cross segment boundaries),
// and keeps the ground truth; every query must give it back exactly, over
// the whole trace and over windows that cut instructions at both edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_util.hpp"
#include "test_protocol_util.hpp"
#include "analysis/cpu_trace.hpp"
#include "analysis/elf_info.hpp"
#include "analysis/insn_prefetch.hpp"
#include "analysis/riscv_disasm.hpp"
#include "reader/replay_rider.hpp"
#include "reader/scope_presence.hpp"
#include "reader/trace_reader.hpp"
#include "uscope/analysis.h"

namespace {

using uscope::test::TempDir;
using namespace uscope::test::proto;

const char *const kStages[] = {"fetch", "decode", "rename", "dispatch", "issue", "execute", "complete", "retire"};
constexpr uint16_t kMaxEntities = 16;
constexpr uint64_t kPeriod = 1000;
constexpr uint64_t kCycles = 3000;

struct Span {
  uint32_t stage;
  uint64_t start, end;
  bool operator==(const Span &o) const { return stage == o.stage && start == o.start && end == o.end; }
};
struct Truth {
  uint32_t entity_id = 0;
  uint64_t pc = 0;
  uint32_t bits = 0;
  uint64_t first = 0, last = 0;
  uint32_t status = USCOPE_INSN_IN_FLIGHT;
  uint32_t flush_reason = 0;
  std::vector<Span> spans;
  std::vector<std::string> notes;
  std::vector<uint32_t> deps;
  // The model's plan: the cycle each stage starts, and how it ends.
  std::vector<uint64_t> at;
  uint64_t end_cycle = 0;
  bool flush = false;
};

// A two-wide core whose instructions live 8-40 cycles, some flushed, some
// annotated, with dependencies, stalls, a bp_misses counter and a rob.
struct Model {
  TempDir dir{"cpu_analysis"};
  std::string path = dir.file("t.uscope");
  std::vector<Truth> insns;             // in fetch order
  std::vector<uint64_t> committed;      // committed_insns after each cycle
  std::vector<uint64_t> misses;         // bp_misses after each cycle
  std::vector<uint32_t> rob_occupied;   // rob occupancy after each cycle
  std::map<uint32_t, uint64_t> stalls;  // reason -> count
  std::vector<std::pair<uint64_t, uint32_t>> stall_at;

  void write() {
    uscope_schema_t *s = base_schema(kPeriod);
    uscope_cpu_buffer_def_t bufs[1] = {{"rob", 8, nullptr, 0}};
    const char *counters[1] = {"bp_misses"};
    uscope_cpu_config_t cfg = cpu_config("core0", "rv32imac", kStages, 8, kMaxEntities);
    cfg.buffers = bufs;
    cfg.num_buffers = 1;
    cfg.counters = counters;
    cfg.num_counters = 1;
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_writer_options_t o{};
    o.struct_size = sizeof o;
    o.checkpoint_interval_ps = 50 * kPeriod;  // 60 segments
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK) << uscope_last_error();
    uscope_schema_free(s);

    std::mt19937 rng(7);
    std::vector<int> live(kMaxEntities, -1);  // slot -> insn index
    std::vector<int> rob(8, -1);
    uint64_t c_commit = 0, c_miss = 0;
    // Real RV32 encodings, so that disassembly can be checked: addi a0,a0,1 and c.addi a0,1.
    const uint32_t kBits[2] = {0x00150513u, 0x0505u};
    for (uint64_t cy = 0; cy < kCycles; ++cy) {
      ASSERT_EQ(uscope_begin_cycle(w, cy * kPeriod), USCOPE_OK);
      // Ends first (retire/flush), so a slot freed now is reused next cycle.
      for (uint16_t slot = 0; slot < kMaxEntities; ++slot) {
        const int k = live[slot];
        if (k < 0) continue;
        Truth &t = insns[static_cast<size_t>(k)];
        for (size_t st = 1; st < t.at.size(); ++st)
          if (t.at[st] == cy) {
            ASSERT_EQ(uscope_cpu_stage_transition(w, cpu, slot, static_cast<uint8_t>(st)), USCOPE_OK);
            t.spans.push_back({static_cast<uint32_t>(st - 1), t.at[st - 1], cy});
          }
        if (t.end_cycle == cy) {
          const size_t open = static_cast<size_t>(std::upper_bound(t.at.begin(), t.at.end(), cy) - t.at.begin()) - 1;
          t.spans.push_back({static_cast<uint32_t>(open), t.at[open], cy});
          t.last = cy;
          if (t.flush) {
            t.status = USCOPE_INSN_FLUSHED;
            t.flush_reason = USCOPE_CPU_FLUSH_MISPREDICT;
            ASSERT_EQ(uscope_cpu_flush(w, cpu, slot, USCOPE_CPU_FLUSH_MISPREDICT), USCOPE_OK);
            ASSERT_EQ(uscope_cpu_counter_add(w, cpu, 1, 1), USCOPE_OK);
            ++c_miss;
          } else {
            t.status = USCOPE_INSN_RETIRED;
            ASSERT_EQ(uscope_cpu_retire(w, cpu, slot), USCOPE_OK);
            ++c_commit;
          }
          for (auto &r : rob)
            if (r == k) {
              ASSERT_EQ(uscope_cpu_buffer_remove(w, cpu, 0, static_cast<uint16_t>(&r - rob.data())), USCOPE_OK);
              r = -1;
            }
          live[slot] = -1;
          freed_at_[slot] = cy;  // refetched from the next cycle on
        }
      }
      // Up to two fetches into slots free since an earlier cycle.
      int fetched = 0;
      for (uint16_t slot = 0; slot < kMaxEntities && fetched < 2; ++slot) {
        if (live[slot] >= 0 || freed_at_[slot] == cy || rng() % 3 == 0) continue;
        Truth t;
        t.entity_id = slot;
        t.pc = 0x80000000u + 4 * insns.size();
        t.bits = kBits[insns.size() % 2];
        t.first = cy;
        uint64_t c = cy;
        for (int st = 0; st < 8; ++st) {
          t.at.push_back(c);
          c += 1 + rng() % 4;
        }
        t.flush = rng() % 7 == 0;
        t.end_cycle = t.flush ? t.at[2 + rng() % 5] + 1 : c;
        if (t.end_cycle >= kCycles) t.end_cycle = UINT64_MAX;  // still in flight at the end
        const int k = static_cast<int>(insns.size());
        ASSERT_EQ(uscope_cpu_fetch(w, cpu, slot, t.pc, t.bits), USCOPE_OK);
        if (k % 5 == 0) {
          const std::string note = "note " + std::to_string(k);
          ASSERT_EQ(uscope_cpu_annotate(w, cpu, slot, note.c_str()), USCOPE_OK);
          t.notes.push_back(note);
        }
        if (k > 0 && k % 3 == 0 && live[(slot + 1) % kMaxEntities] >= 0) {
          const uint32_t src = (slot + 1) % kMaxEntities;
          ASSERT_EQ(uscope_cpu_dependency(w, cpu, src, slot, USCOPE_CPU_DEP_RAW), USCOPE_OK);
          t.deps.push_back(src);
        }
        for (auto &r : rob)
          if (r < 0) {
            r = k;
            ASSERT_EQ(uscope_cpu_buffer_insert(w, cpu, 0, static_cast<uint16_t>(&r - rob.data()), slot), USCOPE_OK);
            break;
          }
        live[slot] = k;
        insns.push_back(t);
        ++fetched;
      }
      if (cy % 37 == 5) {
        const uint8_t reason = static_cast<uint8_t>(cy % 3);
        ASSERT_EQ(uscope_cpu_stall(w, cpu, reason), USCOPE_OK);
        ++stalls[reason];
        stall_at.emplace_back(cy, reason);
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
      committed.push_back(c_commit);
      misses.push_back(c_miss);
      rob_occupied.push_back(static_cast<uint32_t>(std::count_if(rob.begin(), rob.end(), [](int r) { return r >= 0; })));
    }
    // Still in flight: their open stage runs to the last cycle seen.
    for (Truth &t : insns)
      if (t.status == USCOPE_INSN_IN_FLIGHT) {
        const size_t open = static_cast<size_t>(std::upper_bound(t.at.begin(), t.at.end(), kCycles - 1) - t.at.begin()) - 1;
        t.spans.push_back({static_cast<uint32_t>(open), t.at[open], kCycles - 1});
        t.last = kCycles - 1;
      }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK) << uscope_last_error();
    uscope_cpu_free(cpu);
  }
  Model() { std::fill(std::begin(freed_at_), std::end(freed_at_), UINT64_MAX); }
  uint64_t freed_at_[kMaxEntities];
};

struct Open {
  uscope_reader_t *r = nullptr;
  uscope_cpu_trace_t *t = nullptr;
  explicit Open(const std::string &path, const uscope_cpu_trace_options_t *o = nullptr) {
    EXPECT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK) << uscope_last_error();
    if (r) {
      EXPECT_EQ(uscope_cpu_trace_open(&t, r, o), USCOPE_OK) << uscope_last_error();
    }
  }
  ~Open() {
    uscope_cpu_trace_close(t);
    uscope_reader_close(r);
  }
};

struct Got {
  uscope_insn_t i;
  std::vector<Span> spans;
  std::string disasm, notes;
  std::vector<uint32_t> deps;
};

std::vector<Got> collect(uscope_insn_iter_t *it) {
  std::vector<Got> out;
  uscope_insn_t i;
  uscope_status_t s;
  while ((s = uscope_insn_iter_next(it, &i)) == USCOPE_OK) {
    Got g{i, {}, i.disasm, i.annotations, std::vector<uint32_t>(i.dep_src, i.dep_src + i.num_deps)};
    for (uint32_t k = 0; k < i.num_stages; ++k)
      g.spans.push_back({i.stages[k].stage, i.stages[k].start_cycle, i.stages[k].end_cycle});
    out.push_back(g);
  }
  EXPECT_EQ(s, USCOPE_DONE) << uscope_last_error();
  uscope_insn_iter_free(it);
  return out;
}

std::vector<Got> instructions(uscope_cpu_trace_t *t, uint64_t a, uint64_t b) {
  uscope_insn_iter_t *it = nullptr;
  EXPECT_EQ(uscope_cpu_trace_instructions(t, &it, a, b), USCOPE_OK) << uscope_last_error();
  return it ? collect(it) : std::vector<Got>{};
}

void expect_same(const Truth &t, const Got &g) {
  SCOPED_TRACE("entity " + std::to_string(t.entity_id) + " fetched at " + std::to_string(t.first));
  EXPECT_EQ(g.i.entity_id, t.entity_id);
  EXPECT_EQ(g.i.pc, t.pc);
  EXPECT_EQ(g.i.first_cycle, t.first);
  EXPECT_EQ(g.i.last_cycle, t.last);
  EXPECT_EQ(g.i.status, t.status);
  if (t.status == USCOPE_INSN_FLUSHED) {
    EXPECT_EQ(g.i.flush_reason, t.flush_reason);
  }
  EXPECT_EQ(g.i.sim_id, t.first * kMaxEntities + t.entity_id);
  EXPECT_EQ(g.spans, t.spans);
  std::string notes;
  for (const auto &n : t.notes) notes += (notes.empty() ? "" : "\n") + n;
  EXPECT_EQ(g.notes, notes);
  EXPECT_EQ(g.deps, t.deps);
  EXPECT_TRUE(g.i.has_inst_bits);
  EXPECT_EQ(g.i.inst_bits, t.bits);
}

class CpuAnalysis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new Model;
    model_->write();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static Model *model_;
};
Model *CpuAnalysis::model_ = nullptr;

TEST_F(CpuAnalysis, InfoNamesTheProtocol) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  uscope_cpu_trace_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_cpu_trace_info(o.t, &info), USCOPE_OK);
  EXPECT_EQ(info.max_cycle, kCycles - 1);
  EXPECT_EQ(info.period_ps, kPeriod);
  EXPECT_GT(info.segment_count, 50u);
  EXPECT_EQ(info.total_instructions, model_->insns.size());
  EXPECT_STREQ(info.scope_name, "core0");
  EXPECT_STREQ(info.isa, "rv32imac");
  ASSERT_EQ(info.num_stages, 8u);
  for (uint32_t k = 0; k < 8; ++k) {
    const char *n = nullptr;
    ASSERT_EQ(uscope_cpu_trace_stage(o.t, &n, k), USCOPE_OK);
    EXPECT_STREQ(n, kStages[k]);
  }
  ASSERT_EQ(info.num_counters, 2u);
  uscope_counter_info_t c{};
  ASSERT_EQ(uscope_cpu_trace_counter(o.t, &c, 0), USCOPE_OK);
  EXPECT_STREQ(c.name, "committed_insns");
  uint32_t idx = 9;
  ASSERT_EQ(uscope_cpu_trace_find_counter(o.t, &idx, "bp_misses"), USCOPE_OK);
  EXPECT_EQ(idx, 1u);
  EXPECT_EQ(uscope_cpu_trace_find_counter(o.t, &idx, "ipc"), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(std::string(uscope_last_error()).find("committed_insns, bp_misses"), std::string::npos)
      << uscope_last_error();
  ASSERT_EQ(info.num_buffers, 1u);
  EXPECT_EQ(uscope_cpu_trace_find_buffer(o.t, &idx, "lsq"), USCOPE_ERR_NOT_FOUND);
  EXPECT_NE(std::string(uscope_last_error()).find("known: rob"), std::string::npos) << uscope_last_error();
  // The reference's metadata keys, in its order.
  std::vector<std::string> keys;
  for (uint32_t k = 0; k < info.num_metadata; ++k) {
    const char *key = nullptr, *value = nullptr;
    ASSERT_EQ(uscope_cpu_trace_metadata(o.t, &key, &value, k), USCOPE_OK);
    keys.push_back(key);
  }
  ASSERT_GE(keys.size(), 8u);
  EXPECT_EQ(keys.front(), "File");
  EXPECT_EQ(keys.back(), "Strings");
}

TEST_F(CpuAnalysis, EveryInstructionOfTheWholeTrace) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  const auto got = instructions(o.t, 0, UINT64_MAX);
  ASSERT_EQ(got.size(), model_->insns.size());
  for (size_t k = 0; k < got.size(); ++k) expect_same(model_->insns[k], got[k]);
}

TEST_F(CpuAnalysis, WindowsGiveWholeInstructions) {
  // Windows that cut instructions at both edges and cross segment
  // boundaries, with a cache of 2 segments so that stitching re-decodes.
  uscope_cpu_trace_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.cache_segments = 2;
  Open o(model_->path, &opts);
  ASSERT_TRUE(o.t);
  const std::pair<uint64_t, uint64_t> windows[] = {{0, 0}, {49, 51}, {120, 180}, {1234, 1234}, {2990, 5000}};
  for (const auto &w : windows) {
    SCOPED_TRACE("window " + std::to_string(w.first) + ":" + std::to_string(w.second));
    std::vector<const Truth *> want;
    for (const Truth &t : model_->insns)
      if (t.first <= w.second && t.last >= w.first) want.push_back(&t);
    const auto got = instructions(o.t, w.first, w.second);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) expect_same(*want[k], got[k]);
  }
}

TEST_F(CpuAnalysis, EntityTimelineFindsEveryLifeOfAnId) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  uscope_insn_iter_t *it = nullptr;
  ASSERT_EQ(uscope_cpu_trace_entity(o.t, &it, 3, 0, UINT64_MAX), USCOPE_OK);
  const auto got = collect(it);
  std::vector<const Truth *> want;
  for (const Truth &t : model_->insns)
    if (t.entity_id == 3) want.push_back(&t);
  ASSERT_GT(want.size(), 10u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) expect_same(*want[k], got[k]);
  // One life, picked by a cycle.
  const Truth &mid = *want[want.size() / 2];
  ASSERT_EQ(uscope_cpu_trace_entity(o.t, &it, 3, mid.first, mid.first), USCOPE_OK);
  const auto one = collect(it);
  ASSERT_EQ(one.size(), 1u);
  expect_same(mid, one[0]);
  // An id never used: an empty answer, not an error.
  ASSERT_EQ(uscope_cpu_trace_entity(o.t, &it, 999, 0, UINT64_MAX), USCOPE_OK);
  EXPECT_TRUE(collect(it).empty());
}

TEST_F(CpuAnalysis, DisassemblyFromInstBits) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  const auto got = instructions(o.t, 0, 3);
  ASSERT_GE(got.size(), 2u);
  // What riscv64-unknown-elf-objdump (binutils 2.40) prints for 0x00150513
  // (addi) and 0x0505 (c.addi), after the pc: it names both "add".
  for (const auto &g : got) {
    const std::string want = "add a0,a0,1";
    char pc[24];
    std::snprintf(pc, sizeof pc, "0x%08llx ", static_cast<unsigned long long>(g.i.pc));
    EXPECT_EQ(g.disasm, pc + want);
  }
}

TEST_F(CpuAnalysis, CountersExactlyAsWritten) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  const auto &m = *model_;
  for (uint64_t cy : {0ull, 1ull, 49ull, 50ull, 777ull, 2999ull}) {
    uint64_t v = 0;
    ASSERT_EQ(uscope_cpu_trace_counter_value(o.t, &v, 0, cy), USCOPE_OK);
    EXPECT_EQ(v, m.committed[cy]) << cy;
    ASSERT_EQ(uscope_cpu_trace_counter_value(o.t, &v, 1, cy), USCOPE_OK);
    EXPECT_EQ(v, m.misses[cy]) << cy;
  }
  std::vector<uint64_t> series(400);
  ASSERT_EQ(uscope_cpu_trace_counter_series(o.t, series.data(), 0, 90, series.size()), USCOPE_OK);
  for (size_t k = 0; k < series.size(); ++k) ASSERT_EQ(series[k], m.committed[90 + k]) << 90 + k;
  uint64_t d = 0;
  ASSERT_EQ(uscope_cpu_trace_counter_delta(o.t, &d, 0, 500), USCOPE_OK);
  EXPECT_EQ(d, m.committed[500] - m.committed[499]);
  double rate = 0;
  ASSERT_EQ(uscope_cpu_trace_counter_rate(o.t, &rate, 0, 1000, 100), USCOPE_OK);
  EXPECT_DOUBLE_EQ(rate, (m.committed[1000] - m.committed[900]) / 100.0);
  EXPECT_EQ(uscope_cpu_trace_counter_value(o.t, &d, 7, 0), USCOPE_ERR_NOT_FOUND);
}

TEST_F(CpuAnalysis, DownsampleSumsMatchTheCounter) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  const auto &m = *model_;
  // Buckets aligned with the TSUM's (base interval 1024 cycles from cycle 0)
  // are exact; their sums are the counter's increments.
  std::vector<uscope_counter_bucket_t> b(2);
  int exact = -1;
  ASSERT_EQ(uscope_cpu_trace_counter_downsample(o.t, b.data(), &exact, 0, 0, 2048, 2), USCOPE_OK)
      << uscope_last_error();
  EXPECT_EQ(exact, 1);
  EXPECT_EQ(b[0].sum, m.committed[1023]);
  EXPECT_EQ(b[1].sum, m.committed[2047] - m.committed[1023]);
  EXPECT_EQ(b[0].start_cycle, 0u);
  EXPECT_EQ(b[1].start_cycle, 1024u);
  EXPECT_GE(b[0].max_delta, b[0].min_delta);
  EXPECT_LE(b[0].max_delta, kMaxEntities);  // no more retire in a cycle than there are entities
  // Any range: the sums add up to the increments over it, within rounding.
  std::vector<uscope_counter_bucket_t> many(200);
  ASSERT_EQ(uscope_cpu_trace_counter_downsample(o.t, many.data(), &exact, 0, 0, kCycles, 200), USCOPE_OK);
  uint64_t total = 0;
  for (const auto &x : many) total += x.sum;
  EXPECT_NEAR(static_cast<double>(total), static_cast<double>(m.committed[kCycles - 1]), 200.0);
}

TEST_F(CpuAnalysis, BuffersAtACycle) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  for (uint64_t cy : {0ull, 60ull, 1500ull, 2999ull}) {
    uscope_buffer_state_t *s = nullptr;
    ASSERT_EQ(uscope_cpu_trace_buffers_at(o.t, &s, cy), USCOPE_OK);
    uscope_buffer_fill_t f{};
    ASSERT_EQ(uscope_buffer_state_fill(s, &f, 0), USCOPE_OK);
    EXPECT_EQ(f.capacity, 8u);
    EXPECT_EQ(f.occupied, model_->rob_occupied[cy]) << cy;
    EXPECT_DOUBLE_EQ(f.fill_percent, 100.0 * f.occupied / 8);
    for (uint32_t k = 0; k < f.occupied; ++k) {
      uscope_buffer_slot_t sl{};
      ASSERT_EQ(uscope_buffer_state_slot(s, &sl, 0, k), USCOPE_OK);
      EXPECT_EQ(sl.has_entity, 1u);  // the rob holds live entities only
      EXPECT_LT(sl.fields[0], kMaxEntities);
    }
    uscope_buffer_slot_t sl{};
    EXPECT_EQ(uscope_buffer_state_slot(s, &sl, 0, f.occupied), USCOPE_ERR_NOT_FOUND);
    if (cy + 300 <= kCycles) {
      std::vector<uint32_t> occ(300);
      ASSERT_EQ(uscope_cpu_trace_buffer_occupancy(o.t, occ.data(), 0, cy, occ.size()), USCOPE_OK);
      for (size_t k = 0; k < occ.size(); ++k) ASSERT_EQ(occ[k], model_->rob_occupied[cy + k]) << cy + k;
    }
    EXPECT_EQ(uscope_buffer_state_fill(s, &f, 1), USCOPE_ERR_NOT_FOUND);
    uscope_buffer_state_free(s);
  }
}

TEST_F(CpuAnalysis, AnalyzeAgreesWithTheModel) {
  Open o(model_->path);
  ASSERT_TRUE(o.t);
  const auto &m = *model_;
  for (auto w : {std::pair<uint64_t, uint64_t>{0, kCycles}, {500, 1500}, {101, 102}}) {
    SCOPED_TRACE(std::to_string(w.first) + ":" + std::to_string(w.second));
    uscope_perf_report_t r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(uscope_cpu_trace_analyze(o.t, &r, w.first, w.second), USCOPE_OK) << uscope_last_error();
    uint64_t total = 0, retired = 0, flushed = 0, in_flight = 0, retired_in = 0;
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> st;
    for (const Truth &t : m.insns) {
      if (t.status == USCOPE_INSN_RETIRED && t.last >= w.first && t.last < w.second) ++retired_in;
      if (t.first < w.first || t.first >= w.second) continue;
      ++total;
      (t.status == USCOPE_INSN_RETIRED ? retired : t.status == USCOPE_INSN_FLUSHED ? flushed : in_flight)++;
      for (const Span &s : t.spans) {
        st[s.stage].first += s.end - s.start;
        ++st[s.stage].second;
      }
    }
    EXPECT_EQ(r.total, total);
    EXPECT_EQ(r.retired, retired);
    EXPECT_EQ(r.flushed, flushed);
    EXPECT_EQ(r.in_flight, in_flight);
    EXPECT_EQ(r.retired_in_range, retired_in);
    EXPECT_DOUBLE_EQ(r.ipc, static_cast<double>(retired) / (w.second - w.first));
    ASSERT_EQ(r.num_stages, st.size());
    for (uint32_t k = 0; k < r.num_stages; ++k) {
      const auto &x = r.stages[k];
      EXPECT_EQ(x.total_cycles, st[x.stage].first);
      EXPECT_EQ(x.count, st[x.stage].second);
      if (k) {
        EXPECT_GE(r.stages[k - 1].avg_latency, x.avg_latency);
      }
    }
    ASSERT_EQ(r.num_counters, 2u);
    const uint64_t end = std::min<uint64_t>(w.second, kCycles - 1);
    EXPECT_EQ(r.counters[0].delta, m.committed[end] - m.committed[w.first]);
    ASSERT_EQ(r.num_buffers, 1u);
    EXPECT_EQ(r.buffers[0].occupied[0], m.rob_occupied[w.first]);
    std::map<uint32_t, uint64_t> stalls;
    for (const auto &s : m.stall_at)
      if (s.first >= w.first && s.first < w.second) ++stalls[s.second];
    ASSERT_EQ(r.num_stalls, stalls.size());
    for (uint32_t k = 0; k < r.num_stalls; ++k) EXPECT_EQ(r.stalls[k].count, stalls[r.stalls[k].reason]);
  }
  uscope_perf_report_t r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(uscope_cpu_trace_analyze(o.t, &r, 10, 10), USCOPE_ERR_INVALID_ARGUMENT);
  // Past the end: clamped to it; starting past it: refused.
  ASSERT_EQ(uscope_cpu_trace_analyze(o.t, &r, 2000, 9000), USCOPE_OK);
  EXPECT_EQ(r.end_cycle, kCycles);
  EXPECT_EQ(r.range_cycles, kCycles - 2000);
  EXPECT_EQ(uscope_cpu_trace_analyze(o.t, &r, kCycles, kCycles + 5), USCOPE_ERR_INVALID_ARGUMENT);
}

// The exporters' counter tracks: every series from one replay, a sample at
// the window's start and one per change, as the per-cycle values say.
TEST_F(CpuAnalysis, SeriesChangesFromOneReplayAreTheValuesChanges) {
  uscope::TraceReader r(model_->path);
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  uscope::analysis::CpuTrace t(r, o);
  ASSERT_GE(t.counters().size(), 2u);
  ASSERT_EQ(t.buffers().size(), 1u);
  const std::vector<uscope::analysis::CpuTrace::Series> series = {
      {t.counters()[0].storage_id, false}, {t.counters()[1].storage_id, false}, {t.buffers()[0].storage_id, true}};
  const auto &m = *model_;
  const std::vector<uint64_t> rob(m.rob_occupied.begin(), m.rob_occupied.end());
  const std::vector<const std::vector<uint64_t> *> truth = {&m.committed, &m.misses, &rob};
  for (const auto &[a, b] : std::vector<std::pair<uint64_t, uint64_t>>{{0, kCycles - 1}, {90, 2500}, {777, 777}}) {
    SCOPED_TRACE("window " + std::to_string(a) + ".." + std::to_string(b));
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> got(series.size());
    uint64_t last_cycle = 0;
    t.series_changes(series, a, b, [&](uint32_t k, uint64_t cycle, uint64_t v) {
      ASSERT_LT(k, series.size());
      EXPECT_GE(cycle, last_cycle) << "samples come in time order";
      last_cycle = cycle;
      got[k].push_back({cycle, v});
    });
    for (size_t k = 0; k < series.size(); ++k) {
      std::vector<std::pair<uint64_t, uint64_t>> want = {{a, (*truth[k])[a]}};
      for (uint64_t c = a + 1; c <= b; ++c)
        if ((*truth[k])[c] != (*truth[k])[c - 1]) want.push_back({c, (*truth[k])[c]});
      EXPECT_EQ(got[k], want) << "series " << k;
      EXPECT_GT(want.size(), b > a ? 2u : 0u) << "the model's series change";
    }
  }
}

// SeriesPass riding another pass's replay (reader/replay_rider.hpp, as the
// timeline exporters' counter tracks ride their noc walk) tells what
// series_changes tells alone, sample for sample, and marks the same segments
// in a ScopePresence: whether the host replays every segment, starts before
// the window, stops part way or skips one (the pass reads the rest itself).
TEST_F(CpuAnalysis, SeriesPassRidingAHostTellsWhatItTellsAlone) {
  uscope::TraceReader r(model_->path);
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  uscope::analysis::CpuTrace t(r, o);
  const std::vector<uscope::analysis::CpuTrace::Series> series = {
      {t.counters()[0].storage_id, false}, {t.counters()[1].storage_id, false}, {t.buffers()[0].storage_id, true}};
  const size_t n = r.segments().size();
  ASSERT_GE(n, 6u) << "the model's trace has several segments";
  using Sample = std::tuple<uint32_t, uint64_t, uint64_t>;
  // A host as the noc walk is one: segments ascending, every item told.
  struct Host {
    uscope::ReplayRider &rider;
    void frame(uint64_t t) { rider.frame(t); }
    void op(uint64_t t, const uscope::DeltaOp &d) { rider.op(t, d); }
    void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t m) { rider.event(t, id, p, m); }
  };
  auto hosted = [&](uscope::ReplayRider &rider, const std::vector<size_t> &segs) {
    auto st = r.initial_state();
    Host h{rider};
    for (size_t i : segs) {
      rider.begin_segment(i, st);
      const bool whole = r.replay(i, st, h);
      rider.end_segment(i, whole);
    }
  };
  std::vector<size_t> every(n), front, skipping;
  for (size_t i = 0; i < n; ++i) every[i] = i;
  for (size_t i = 0; i < n / 2; ++i) front.push_back(i);
  for (size_t i = 0; i < n; ++i)
    if (i != n / 3) skipping.push_back(i);
  const std::vector<std::pair<const char *, const std::vector<size_t> *>> hosts = {
      {"every segment", &every}, {"the first half", &front}, {"one skipped", &skipping}};
  for (const auto &[a, b] : std::vector<std::pair<uint64_t, uint64_t>>{{0, kCycles - 1}, {1100, 2500}, {777, 777}}) {
    std::vector<Sample> alone;
    uscope::ScopePresence seen_alone(r.schema(), n);
    t.series_changes(series, a, b, [&](uint32_t k, uint64_t c, uint64_t v) { alone.emplace_back(k, c, v); },
                     &seen_alone);
    ASSERT_GE(alone.size(), series.size() + (b > a ? 10u : 0u));
    for (const auto &[what, segs] : hosts) {
      SCOPED_TRACE(std::string(what) + ", window " + std::to_string(a) + ".." + std::to_string(b));
      std::vector<Sample> ridden;
      uscope::ScopePresence seen(r.schema(), n);
      uscope::analysis::SeriesPass p(t, series, a, b,
                                     [&](uint32_t k, uint64_t c, uint64_t v) { ridden.emplace_back(k, c, v); }, &seen);
      hosted(p, *segs);
      p.finish();
      EXPECT_EQ(ridden, alone);
      for (size_t i = 0; i < n; ++i)
        for (uint16_t scope = 0; scope < r.schema().scopes.size(); ++scope)
          EXPECT_EQ(seen.may_hold(i, scope), seen_alone.may_hold(i, scope)) << "segment " << i << " scope " << scope;
    }
  }
}

// The exporters' instruction stream on a worker: the same instructions, in
// the same order, with the same disassembly, as InsnStream on this thread,
// whatever the batch size (small ones make the batches go round many times).
TEST_F(CpuAnalysis, PrefetchedInstructionsAreTheStreams) {
  uscope::TraceReader r(model_->path);
  uscope_cpu_trace_options_t o{};
  o.struct_size = sizeof o;
  uscope::analysis::CpuTrace t(r, o);
  struct Rec {
    uint32_t entity;
    uint64_t first, last, pc;
    uint8_t status;
    std::vector<uint32_t> spans, annotations, deps;
    std::string text;
    bool operator==(const Rec &x) const {
      return entity == x.entity && first == x.first && last == x.last && pc == x.pc && status == x.status &&
             spans == x.spans && annotations == x.annotations && deps == x.deps && text == x.text;
    }
  };
  // Every array of an instruction: the prefetch copies each into its batch.
  auto rec = [](const auto &i, std::string text) {
    Rec x{i.head.entity_id, i.head.first_cycle, i.head.last_cycle, i.head.pc, i.head.status, {}, {}, {},
          std::move(text)};
    for (const auto &sp : i.spans) {
      x.spans.push_back(sp.stage);
      x.spans.push_back(static_cast<uint32_t>(sp.start_cycle));
      x.spans.push_back(static_cast<uint32_t>(sp.end_cycle));
    }
    x.annotations.assign(i.annotations.begin(), i.annotations.end());
    x.deps.assign(i.deps.begin(), i.deps.end());
    return x;
  };
  for (const auto &[a, b] : std::vector<std::pair<uint64_t, uint64_t>>{{0, UINT64_MAX}, {1200, 1900}}) {
    std::vector<Rec> want;
    {
      uscope::analysis::InsnStream s(t, a, b, std::nullopt);
      while (const auto *i = s.next()) want.push_back(rec(*i, t.disasm(*i)));
    }
    ASSERT_GT(want.size(), 100u);
    if (a == 0) {  // the model writes both: the comparison covers them
      EXPECT_TRUE(std::any_of(want.begin(), want.end(), [](const Rec &x) { return !x.annotations.empty(); }));
      EXPECT_TRUE(std::any_of(want.begin(), want.end(), [](const Rec &x) { return !x.deps.empty(); }));
    }
    for (size_t batch : {size_t{1}, size_t{7}, size_t{2048}})
      for (bool worker : {true, false}) {
        SCOPED_TRACE("window " + std::to_string(a) + " batch " + std::to_string(batch) + (worker ? " worker" : " inline"));
        std::vector<Rec> got;
        uscope::analysis::InsnPrefetch p(t, a, b, true, batch, worker);
        while (const auto *i = p.next()) got.push_back(rec(*i, std::string(p.disasm())));
        EXPECT_EQ(p.next(), nullptr) << "the end stays the end";
        ASSERT_EQ(got.size(), want.size());
        EXPECT_TRUE(got == want);
      }
  }
  // A consumer that stops early (an encoder's error) destroys it mid-stream:
  // the worker is stopped and joined, and the trace is usable again.
  {
    uscope::analysis::InsnPrefetch p(t, 0, UINT64_MAX, true, 3);
    for (int k = 0; k < 10; ++k) ASSERT_NE(p.next(), nullptr);
  }
  uscope::analysis::InsnStream s(t, 0, UINT64_MAX, std::nullopt);
  EXPECT_NE(s.next(), nullptr);
}

TEST(CpuAnalysisErrors, NoCpuScopeIsNamed) {
  TempDir dir("cpu_analysis_none");
  const std::string path = dir.file("t.uscope");
  uscope_schema_t *s = base_schema();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_reader_t *r = nullptr;
  ASSERT_EQ(uscope_reader_open(&r, path.c_str()), USCOPE_OK);
  uscope_cpu_trace_t *t = nullptr;
  EXPECT_EQ(uscope_cpu_trace_open(&t, r, nullptr), USCOPE_ERR_NOT_FOUND);
  EXPECT_STREQ(uscope_last_error(), "this trace has no cpu protocol scope");
  EXPECT_EQ(t, nullptr);
  uscope_cpu_trace_options_t bad{};
  bad.struct_size = 9999;
  EXPECT_EQ(uscope_cpu_trace_open(&t, r, &bad), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_cpu_trace_open(nullptr, r, nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  uscope_reader_close(r);
}

// The reference writers' cpu traces (konata2uscope): every instruction of the
// conformance sample, with its stages and status.
TEST(CpuAnalysisConformance, KonataSampleFromTheReferenceWriter) {
  const std::string path = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/20_konata_sample.uscope";
  Open o(path);
  ASSERT_TRUE(o.t) << path;
  const auto got = instructions(o.t, 0, UINT64_MAX);
  ASSERT_FALSE(got.empty());
  for (const auto &g : got) {
    EXPECT_FALSE(g.spans.empty()) << g.i.entity_id;
    EXPECT_LE(g.i.first_cycle, g.i.last_cycle);
    for (const auto &s : g.spans) EXPECT_LE(s.start, s.end);
  }
}


// COMPAT 27: konata2uscope writes instruction ids as entity slots, past the
// catalog's 16. The reader skips those ops (counted); the analysis still
// reads them, and gives the reference uscope-mcp's analyze_performance and
// entity_timeline answers on this file (taken from the reference built from
// zarubaf/uscope ca8ae82): 300 instructions, 282 retired, 18 flushed, IPC
// 282 / 233, per-stage totals, and entity 150's life.
TEST(CpuAnalysisConformance, KonataOverflowSlotsGiveTheReferencesAnswers) {
  const std::string path = std::string(USCOPE_SHARED_DIR) + "/conformance/uscope/21_konata2uscope_overflow.uscope";
  Open o(path);
  ASSERT_TRUE(o.t) << path;
  uscope_perf_report_t r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(uscope_cpu_trace_analyze(o.t, &r, 0, 233), USCOPE_OK) << uscope_last_error();
  EXPECT_EQ(r.total, 300u);
  EXPECT_EQ(r.retired, 282u);
  EXPECT_EQ(r.flushed, 18u);
  EXPECT_EQ(r.in_flight, 0u);
  EXPECT_DOUBLE_EQ(r.ipc, 282.0 / 233.0);
  const std::map<std::string, std::pair<uint64_t, uint64_t>> want = {
      {"F", {469, 300}}, {"X", {440, 282}}, {"W", {424, 282}}, {"D", {448, 300}}, {"M", {414, 282}}, {"R", {434, 300}}};
  ASSERT_EQ(r.num_stages, want.size());
  for (uint32_t k = 0; k < r.num_stages; ++k) {
    const char *name = nullptr;
    ASSERT_EQ(uscope_cpu_trace_stage(o.t, &name, r.stages[k].stage), USCOPE_OK);
    ASSERT_TRUE(want.count(name)) << name;
    EXPECT_EQ(r.stages[k].total_cycles, want.at(name).first) << name;
    EXPECT_EQ(r.stages[k].count, want.at(name).second) << name;
  }
  uscope_insn_iter_t *it = nullptr;
  ASSERT_EQ(uscope_cpu_trace_entity(o.t, &it, 150, 0, UINT64_MAX), USCOPE_OK);
  const auto got = collect(it);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].disasm, "00001258: addi x10, x14, -6");
  EXPECT_EQ(got[0].i.first_cycle, 109u);
  EXPECT_EQ(got[0].i.last_cycle, 118u);
  EXPECT_EQ(got[0].i.status, static_cast<uint32_t>(USCOPE_INSN_RETIRED));
  EXPECT_EQ(got[0].spans, (std::vector<Span>{{0, 109, 111}, {1, 111, 112}, {2, 112, 113}, {3, 113, 114},
                                              {4, 114, 116}, {5, 116, 118}}));
}

// ── disassembly and source lines from the program's ELF ──

namespace elf_test {

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

// A small rv32imac program with debug info, built by the test.
struct Program {
  TempDir dir{"cpu_analysis_elf"};
  std::string elf = dir.file("prog.elf");
  std::string error;
  Program() {
    std::ofstream(dir.file("prog.c")) << "int acc(int *p, int n) {\n  int s = 0;\n  for (int i = 0; i < n; ++i)\n"
                                         "    s += p[i] * 3;\n  return s;\n}\n"
                                         "int buf[8];\nvoid _start(void) {\n  buf[0] = acc(buf, 8);\n  for (;;) {}\n}\n";
    int st = 0;
    const std::string out = sh("riscv64-unknown-elf-gcc -march=rv32imac -mabi=ilp32 -O1 -g -nostdlib -o '" + elf +
                                   "' '" + dir.file("prog.c") + "'",
                               &st);
    if (st != 0) error = "riscv64-unknown-elf-gcc failed (Debian: gcc-riscv64-unknown-elf): " + out;
  }
};

// Writes a trace whose instructions are the program's first `n` instructions
// (pc and inst_bits from its bytes), naming `elf_prop` as cpu.elf_path.
void write_program_trace(const std::string &path, const std::string &elf_prop, const char *isa,
                         const std::vector<std::pair<uint64_t, uint32_t>> &insns) {
  uscope_schema_t *s = base_schema(kPeriod);
  uscope_cpu_config_t cfg = cpu_config("core0", isa, kStages, 8, kMaxEntities);
  cfg.elf_path = elf_prop.c_str();
  uscope_cpu_t *cpu = nullptr;
  ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
  uscope_writer_t *w = nullptr;
  ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, nullptr), USCOPE_OK);
  uscope_schema_free(s);
  for (size_t k = 0; k < insns.size(); ++k) {
    ASSERT_EQ(uscope_begin_cycle(w, k * kPeriod), USCOPE_OK);
    const uint32_t id = static_cast<uint32_t>(k % kMaxEntities);
    ASSERT_EQ(uscope_cpu_fetch(w, cpu, id, insns[k].first, insns[k].second), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    ASSERT_EQ(uscope_begin_cycle(w, k * kPeriod + kPeriod / 2), USCOPE_OK);
    ASSERT_EQ(uscope_cpu_retire(w, cpu, id), USCOPE_OK);
    ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
  }
  ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
  uscope_cpu_free(cpu);
}

}  // namespace elf_test

TEST(CpuAnalysisElf, DisassemblyAndSourceLinesFromTheTracesElf) {
  elf_test::Program prog;
  ASSERT_EQ(prog.error, "");
  uscope::analysis::ElfInfo elf(prog.elf);
  // The program's instructions from _start on, as the trace's instructions.
  std::vector<std::pair<uint64_t, uint32_t>> insns;
  uint64_t pc = 0;
  for (uint64_t a = 0x10000; a < 0x20000 && !pc; a += 2)
    if (elf.symbol_at(a) == "acc") pc = a;
  ASSERT_NE(pc, 0u) << "acc not found";
  for (int k = 0; k < 12; ++k) {
    size_t avail = 0;
    const uint8_t *p = elf.code_at(pc, &avail);
    ASSERT_TRUE(p && avail >= 2);
    const uint32_t bits = (p[0] & 3) == 3 ? (p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24)
                                          : (p[0] | p[1] << 8);
    insns.emplace_back(pc, bits);
    pc += (p[0] & 3) == 3 ? 4 : 2;
  }
  TempDir dir("cpu_analysis_elf_trace");
  const std::string path = dir.file("t.uscope");
  ASSERT_NO_FATAL_FAILURE(elf_test::write_program_trace(path, prog.elf, "rv32imac", insns));
  Open o(path);
  ASSERT_TRUE(o.t);
  uscope_cpu_trace_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_cpu_trace_info(o.t, &info), USCOPE_OK);
  EXPECT_EQ(info.has_symbols, 1u);
  EXPECT_STREQ(info.elf_path, prog.elf.c_str());
  EXPECT_STREQ(info.elf_note, "");
  uscope_insn_iter_t *it = nullptr;
  ASSERT_EQ(uscope_cpu_trace_instructions(o.t, &it, 0, UINT64_MAX), USCOPE_OK);
  uscope_insn_t i;
  size_t n = 0;
  while (uscope_insn_iter_next(it, &i) == USCOPE_OK) {
    ASSERT_LT(n, insns.size());
    // What objdump prints with the program's symbols, one instruction alone.
    uscope::analysis::DisasmOptions opts;
    opts.gp = elf.global_pointer();
    opts.symbolize = [&elf](uint64_t a) { return elf.symbol_at(a); };
    size_t avail = 0;
    const uint8_t *p = elf.code_at(i.pc, &avail);
    std::string text = uscope::analysis::Disassembler(uscope::analysis::Xlen::k32, opts).next(p, avail, i.pc).text;
    std::replace(text.begin(), text.end(), '\t', ' ');
    char head[24];
    std::snprintf(head, sizeof head, "0x%08llx ", static_cast<unsigned long long>(i.pc));
    EXPECT_EQ(std::string(i.disasm), head + text);
    const auto &loc = elf.locate(i.pc);
    EXPECT_EQ(std::string(i.function), loc.function);
    EXPECT_EQ(std::string(i.source_file), loc.file);
    EXPECT_EQ(i.source_line, loc.line);
    EXPECT_EQ(std::string(i.function), "acc");
    EXPECT_NE(std::string(i.source_file).find("prog.c"), std::string::npos);
    EXPECT_GE(i.source_line, 1u);
    ++n;
  }
  uscope_insn_iter_free(it);
  EXPECT_EQ(n, insns.size());
}

// Instructions written without their bits and alive across segment
// boundaries: those the analysis finds at a segment's start (from its
// checkpoint, where bits never written read as 0) are disassembled from the
// ELF's bytes like the others, never as the all-zero encoding.
TEST(CpuAnalysisElf, InstructionsWithoutBitsAcrossSegmentsDisassembleFromTheElf) {
  elf_test::Program prog;
  ASSERT_EQ(prog.error, "");
  uscope::analysis::ElfInfo elf(prog.elf);
  uint64_t pc = 0;
  for (uint64_t a = 0x10000; a < 0x20000 && !pc; a += 2)
    if (elf.symbol_at(a) == "acc") pc = a;
  ASSERT_NE(pc, 0u);
  std::vector<uint64_t> pcs;
  for (int k = 0; k < 12; ++k) {
    size_t avail = 0;
    const uint8_t *p = elf.code_at(pc, &avail);
    ASSERT_TRUE(p && avail >= 2);
    pcs.push_back(pc);
    pc += (p[0] & 3) == 3 ? 4 : 2;
  }
  TempDir dir("cpu_analysis_elf_segments");
  const std::string path = dir.file("t.uscope");
  {
    uscope_schema_t *s = base_schema(kPeriod);
    uscope_cpu_config_t cfg = cpu_config("core0", "rv32imac", kStages, 8, kMaxEntities);
    cfg.elf_path = prog.elf.c_str();
    uscope_cpu_t *cpu = nullptr;
    ASSERT_EQ(uscope_cpu_declare(s, &cpu, &cfg), USCOPE_OK) << uscope_last_error();
    uscope_writer_options_t o{};
    o.struct_size = sizeof o;
    o.checkpoint_interval_ps = 2 * kPeriod;  // a segment every 2 cycles; each instruction lives 4
    uscope_writer_t *w = nullptr;
    ASSERT_EQ(uscope_writer_open(&w, path.c_str(), s, nullptr, 0, &o), USCOPE_OK);
    uscope_schema_free(s);
    for (uint64_t c = 0; c < pcs.size() + 4; ++c) {
      ASSERT_EQ(uscope_begin_cycle(w, c * kPeriod), USCOPE_OK);
      if (c < pcs.size()) {
        ASSERT_EQ(uscope_cpu_fetch(w, cpu, static_cast<uint32_t>(c), pcs[c], 0), USCOPE_OK);
      }
      if (c >= 4 && c - 4 < pcs.size()) {
        ASSERT_EQ(uscope_cpu_retire(w, cpu, static_cast<uint32_t>(c - 4)), USCOPE_OK);
      }
      ASSERT_EQ(uscope_end_cycle(w), USCOPE_OK);
    }
    ASSERT_EQ(uscope_writer_close(w), USCOPE_OK);
    uscope_cpu_free(cpu);
  }
  Open o(path);
  ASSERT_TRUE(o.t);
  uscope_insn_iter_t *it = nullptr;
  ASSERT_EQ(uscope_cpu_trace_instructions(o.t, &it, 0, UINT64_MAX), USCOPE_OK);
  uscope_insn_t i;
  size_t n = 0;
  while (uscope_insn_iter_next(it, &i) == USCOPE_OK) {
    ASSERT_LT(n, pcs.size());
    EXPECT_EQ(i.pc, pcs[n]);
    uscope::analysis::DisasmOptions opts;
    opts.gp = elf.global_pointer();
    opts.symbolize = [&elf](uint64_t a) { return elf.symbol_at(a); };
    size_t avail = 0;
    const uint8_t *p = elf.code_at(i.pc, &avail);
    std::string text = uscope::analysis::Disassembler(uscope::analysis::Xlen::k32, opts).next(p, avail, i.pc).text;
    std::replace(text.begin(), text.end(), '\t', ' ');
    char head[24];
    std::snprintf(head, sizeof head, "0x%08llx ", static_cast<unsigned long long>(i.pc));
    EXPECT_EQ(std::string(i.disasm), head + text) << "instruction " << n;
    ++n;
  }
  uscope_insn_iter_free(it);
  EXPECT_EQ(n, pcs.size());
}

TEST(CpuAnalysisElf, AnElfOfAnotherIsaIsRefusedAndAMissingOneNoted) {
  elf_test::Program prog;
  ASSERT_EQ(prog.error, "");
  TempDir dir("cpu_analysis_elf_isa");
  const std::string rv64 = dir.file("rv64.uscope"), moved = dir.file("moved.uscope");
  ASSERT_NO_FATAL_FAILURE(elf_test::write_program_trace(rv64, prog.elf, "rv64gc", {{0x10074, 0x13}}));
  ASSERT_NO_FATAL_FAILURE(elf_test::write_program_trace(moved, dir.file("gone.elf"), "rv32imac", {{0x10074, 0x13}}));
  uscope_reader_t *r = nullptr;
  uscope_cpu_trace_t *t = nullptr;
  // Named by the caller: the mismatch is an error naming both.
  ASSERT_EQ(uscope_reader_open(&r, rv64.c_str()), USCOPE_OK);
  uscope_cpu_trace_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.elf_path = prog.elf.c_str();
  EXPECT_EQ(uscope_cpu_trace_open(&t, r, &opts), USCOPE_ERR_INVALID_ARGUMENT);
  const std::string msg = uscope_last_error();
  EXPECT_NE(msg.find(prog.elf), std::string::npos) << msg;
  EXPECT_NE(msg.find("rv64gc"), std::string::npos) << msg;
  // Named by the trace: opened without it, with a note saying why.
  ASSERT_EQ(uscope_cpu_trace_open(&t, r, nullptr), USCOPE_OK);
  uscope_cpu_trace_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(uscope_cpu_trace_info(t, &info), USCOPE_OK);
  EXPECT_EQ(info.has_symbols, 0u);
  EXPECT_NE(std::string(info.elf_note).find("rv64gc"), std::string::npos) << info.elf_note;
  uscope_cpu_trace_close(t);
  uscope_reader_close(r);
  ASSERT_EQ(uscope_reader_open(&r, moved.c_str()), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_trace_open(&t, r, nullptr), USCOPE_OK);
  ASSERT_EQ(uscope_cpu_trace_info(t, &info), USCOPE_OK);
  EXPECT_NE(std::string(info.elf_note).find("gone.elf"), std::string::npos) << info.elf_note;
  uscope_cpu_trace_close(t);
  uscope_reader_close(r);
}

}  // namespace
