// The NPU metrics report of a JSONL, µScope or pccx file (docs/convert.md
// "npu-report"): the events paired into intervals, measured by Report.
#include <memory>

#include "convert/matrix.hpp"
#include "convert/pairing.hpp"
#include "convert/pipeline.hpp"
#include "convert/report.hpp"

namespace uscope::convert {

namespace {

// Pairs the events run() gives into rep, which asks the pairer how far each
// kind is complete while it measures.
template <class Run>
uscope_status_t pair_into(Report &rep, Run &&run) {
  Pairer p(rep);
  rep.horizon = [&p](PairKind k) { return p.horizon(k); };
  const uscope_status_t s = run(p);
  p.finish();
  rep.horizon = nullptr;  // p goes out of scope
  return s;
}

}  // namespace

uscope_status_t npu_report(const char *in, uint32_t fmt, const Options &o, bool json, std::string *text,
                           uscope_convert_stats_t *st) {
  if (fmt < USCOPE_CONVERT_JSONL || fmt > USCOPE_CONVERT_PCCX)
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, std::string(in) + ": unknown format (.jsonl, .jsonl.gz, .uscope, .pccx)");
  // Every format through its source (matrix.hpp), paired the same way: one
  // meaning of "busy" whatever the file. The JSONL ingest checks what pccx
  // would hold (no representability checks: nothing is written).
  std::unique_ptr<EvSource> src = make_source(fmt, o, USCOPE_CONVERT_PCCX, "npu-report");
  std::string err;
  if (uscope_status_t s = src->open(in, &err)) return fail_with(s, in_error(in, err));
  Report rep;
  const char *const kNames[] = {"", "jsonl", "uscope", "pccx"};
  rep.format = kNames[fmt];
  rep.strs = &src->strings();
  // A .pccx file has no sizes, units or layers: its channels are the
  // source's assignment (docs/conversions.md), not the trace's.
  if (fmt == USCOPE_CONVERT_PCCX) rep.has_sizes = rep.has_units = rep.has_layers = false;
  const uscope_status_t s = pair_into(rep, [&](Pairer &p) {
    return src->run([&](const Ev &e, std::string *) -> uscope_status_t { p.add(e); return 0; }, &err);
  });
  rep.period_ps = src->period_ps();  // TRACE_META's period_ps when not given
  std::vector<std::string> notes;
  src->notes(&notes);
  if (o.o.on_issue)
    for (const std::string &n : notes) o.o.on_issue(o.o.user, 0, n.c_str());
  fill_stats(st, src->stats(), src->issues(), 0);
  if (s) return fail_with(s, in_error(in, err));
  *text = rep.render(json);
  return 0;
}

}  // namespace uscope::convert
