// JSONL -> pccx: START/END lines paired into intervals, instants as
// zero-length events (docs/convert.md "pccx").
#include "convert/pairing.hpp"
#include "convert/pccx_side.hpp"
#include "convert/pipeline.hpp"

namespace uscope::convert {

uscope_status_t jsonl_to_pccx(const char *in, const char *out, const Options &o, uscope_convert_stats_t *st) {
  JsonlIn src(o, false, "jsonl -> pccx");
  Ingest &ing = src.ing;
  if (uscope_status_t s = src.open(in)) return s;
  std::string err;
  PccxOut w(src.pool);
  Pairer pairer(w);
  std::string open_err;
  uscope_status_t os = 0;
  // Opened at the first event, when TRACE_META (period, pccx header fields) is known.
  const uint64_t pccx_queue = queue_for_input(o.o.queue_bytes, PccxOut::kDefaultQueue, ing);
  auto open = [&]() { return os = w.open(out, ing.period_ps(), src.meta.pccx, pccx_queue, &open_err); };
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *) -> uscope_status_t {
        if (!w.is_open() && open()) return os;
        if (!w.pccx_warn(e)) pairer.add(e);
        if (w.status()) {
          std::string why;
          os = w.close(&why);
          open_err = std::string(out) + ": " + why;
        }
        return os;
      },
      &err);
  if (os) {
    s = os;
    err = open_err;
  }
  if (!s && !w.is_open() && open()) {
    s = os;
    err = open_err;
  }
  std::string cerr;
  uscope_status_t cs = 0;
  if (w.is_open()) {
    pairer.finish();
    cs = w.close(&cerr);
  }
  fill_stats(st, ing.stats(), src.issues, w.events());
  if (s) return fail_with(s, os ? err : in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

}  // namespace uscope::convert
