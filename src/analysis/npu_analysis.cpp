#include "analysis/npu_analysis.hpp"

#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "convert/convert.hpp"
#include "convert/uscope_side.hpp"
#include "format/wire.hpp"
#include "protocol/npu_table.hpp"
#include "reader/trace_reader.hpp"

namespace uscope::analysis {

void require_npu(const TraceReader &r) {
  const Schema &sc = r.schema();
  for (const ScopeDef &s : sc.scopes) {
    const char *p = s.protocol == wire::kNoString ? nullptr : sc.str(s.protocol);
    if (p && std::strcmp(p, proto::npu::kTable.name) == 0) return;
  }
  fail(USCOPE_ERR_NOT_FOUND, "this trace has no %s protocol scope", proto::npu::kTable.name);
}

NpuReport analyze_npu(TraceReader &r, const NpuOptions &o) {
  require_npu(r);
  if (o.start_cycle > o.end_cycle)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "the range %llu:%llu starts after it ends",
         static_cast<unsigned long long>(o.start_cycle), static_cast<unsigned long long>(o.end_cycle));
  const convert::Options opts(nullptr);
  convert::UscopeIn in(r, opts);
  std::string err;
  if (const uscope_status_t s = in.attach(&err)) fail(s, "%s", err.c_str());

  NpuReport out;
  const uint64_t P = in.period_ps() ? in.period_ps() : 1000;
  out.period_ps = P;
  uint64_t last_ps = r.header().total_time_ps;
  if (!r.segments().empty()) last_ps = std::max(last_ps, r.segments().back().header.time_end_ps);
  out.max_cycle = last_ps / P;

  convert::Report rep;
  rep.format = "uscope";
  rep.strs = &in.strings();
  rep.period_ps = P;
  out.whole = o.start_cycle == 0 && o.end_cycle == UINT64_MAX;
  if (!out.whole) {
    out.clamped = o.end_cycle > out.max_cycle || o.start_cycle > out.max_cycle;
    const uint64_t start = std::min(o.start_cycle, out.max_cycle), end = std::min(o.end_cycle, out.max_cycle);
    rep.set_window(start, end);
    in.set_until(end >= UINT64_MAX / P ? UINT64_MAX : end * P + (P - 1));
  }

  // The commands the report counts, with their latencies.
  struct Commands final : convert::PairSink {
    const convert::Report &rep;
    LatencyStats &lat;
    Commands(const convert::Report &r, LatencyStats &l) : rep(r), lat(l) {}
    void interval(const convert::Interval &iv) override {
      uint64_t s, e;
      if (iv.kind == convert::P_CMD && rep.counts(iv, &s, &e)) lat.add(iv.end - iv.start);
    }
    void instant(uint8_t, uint64_t, uint32_t) override {}
  } cmds(rep, out.command_latency);
  if (const uscope_status_t s = convert::measure(in, rep, &cmds, &err)) fail(s, "%s", err.c_str());

  out.start_cycle = rep.first_cycle();
  out.end_cycle = rep.last_cycle();
  out.range_cycles = rep.total_cycles();
  const double T = static_cast<double>(out.range_cycles);
  for (const convert::Report::Engine &e : rep.engines())
    out.engines.push_back({e, out.range_cycles ? static_cast<double>(e.busy) / T : 0.0});
  out.phases = rep.phase_figures();
  out.dma_transfers = rep.dma_transfers();
  out.dma_bytes = rep.dma_bytes();
  out.dma_bytes_per_cycle = out.range_cycles ? static_cast<double>(out.dma_bytes) / T : 0.0;
  out.sram_accesses = rep.sram_accesses();
  out.sram_conflicts = rep.sram_conflicts();
  out.text = rep.render(false);
  out.json = rep.render(true);
  return out;
}

}  // namespace uscope::analysis
