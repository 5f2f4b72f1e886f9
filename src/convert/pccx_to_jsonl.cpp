// pccx -> JSONL: each interval gives its START and END line, each instant
// one line; ids of pairs are the pccx event's index (synthetic). An event of
// another producer with no NPU meaning becomes a WARN line: component
// "pccx", code its pccx type, msg its api_name and duration (docs/convert.md).
#include <algorithm>
#include <vector>

#include "convert/pairing.hpp"
#include "convert/pccx_side.hpp"
#include "convert/pipeline.hpp"

namespace uscope::convert {

namespace {

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

}  // namespace

uscope_status_t pccx_to_jsonl(const char *in, const char *out, const Options &, uscope_convert_stats_t *st) {
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
  std::stable_sort(sink.lines.begin(), sink.lines.end(), [](const PccxLines::L &a, const PccxLines::L &b) {
    return a.t < b.t || (a.t == b.t && a.seq < b.seq);
  });
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
  fill_stats(st, is, Issues{}, sink.lines.size());
  return 0;
}

}  // namespace uscope::convert
