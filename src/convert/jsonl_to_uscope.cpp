// JSONL -> µScope: every line through the npu protocol's per-cycle calls
// (docs/convert.md, docs/npu-protocol.md §6).
#include "base/last_error.hpp"
#include "convert/pipeline.hpp"
#include "convert/uscope_side.hpp"

namespace uscope::convert {

uscope_status_t jsonl_to_uscope(const char *in, const char *out, const Options &o, uscope_convert_stats_t *st) {
  JsonlIn src(o, true, "jsonl -> uscope");
  Ingest &ing = src.ing;
  if (uscope_status_t s = src.open(in)) return s;
  std::string err;
  UnitCounts u;
  u.queue_depth = o.o.queue_depth;
  u.num_contexts = o.o.num_contexts;
  u.num_te = o.o.num_te;
  u.num_ve = o.o.num_ve;
  u.num_dma = o.o.num_dma_channels;
  u.num_dram = o.o.num_dram_channels;
  u.num_noc = o.o.num_noc_links;
  u.num_banks = o.o.num_sram_banks;
  u.queue_bytes = queue_for_input(o.o.queue_bytes, UscopeOut::kDefaultQueue, ing);
  if (o.o.period_ps > 0xFFFFFFFFull)
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, "period_ps " + std::to_string(o.o.period_ps) +
                                                      ": expected at most 2^32-1 ps (a µScope clock period is 32-bit)");
  UscopeOut w(u, o.o.period_ps, src.pool);
  std::string open_err;
  uscope_status_t os = 0;
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!w.is_open()) {
          // The first event out of the reorder window: sim_id, TRACE_META
          // and the period are known.
          w.set_period(ing.period_ps());
          if ((os = w.open(out, src.meta, &open_err))) return os;
        }
        const uscope_status_t r = w.add(e, reason);
        if (r < 0) {  // the writer's (sticky) error, not the line's
          os = r;
          open_err = std::string(out) + ": writing the .uscope file: " + uscope::thread_error();
        }
        return r;
      },
      &err);
  if (os) {
    s = os;
    err = open_err;
  }
  if (!s && !w.is_open()) {
    w.set_period(ing.period_ps());
    s = w.open(out, src.meta, &err);
  }
  std::string cerr;
  const uscope_status_t cs = w.is_open() ? w.close(&cerr) : 0;
  fill_stats(st, ing.stats(), src.issues, w.events());
  if (s) return fail_with(s, os ? err : in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

}  // namespace uscope::convert
