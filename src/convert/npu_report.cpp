// The NPU metrics report of a JSONL, µScope or pccx file (docs/convert.md
// "npu-report"): the events paired into intervals, measured by Report.
#include <memory>

#include "convert/pairing.hpp"
#include "convert/pccx_side.hpp"
#include "convert/pipeline.hpp"
#include "convert/report.hpp"
#include "convert/uscope_side.hpp"

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
  Report rep;
  std::string err;
  IngestStats is;
  Issues issues = issues_of(o);
  uscope_status_t s = 0;
  // What rep.strs points at lives as long as rep.
  std::unique_ptr<JsonlIn> jin;
  std::unique_ptr<UscopeIn> ur;
  StringPool pool;
  if (fmt == USCOPE_CONVERT_JSONL) {
    jin = std::make_unique<JsonlIn>(o, false, "npu-report");
    if ((s = jin->open(in))) return s;
    Ingest &ing = jin->ing;
    rep.format = "jsonl";
    rep.period_ps = o.o.period_ps;
    rep.strs = &jin->pool;
    s = pair_into(rep, [&](Pairer &p) {
      return ing.run([&](const Ev &e, std::string *) -> uscope_status_t { p.add(e); return 0; }, &err);
    });
    rep.period_ps = ing.period_ps();  // TRACE_META's period_ps when not given
    is = ing.stats();
    issues = jin->issues;
  } else if (fmt == USCOPE_CONVERT_USCOPE) {
    ur = std::make_unique<UscopeIn>();
    if ((s = ur->open(in, &err, o.o.strict != 0))) return fail_with(s, err);
    rep.format = "uscope";
    rep.period_ps = ur->period_ps();
    rep.strs = ur.get();
    s = pair_into(rep, [&](Pairer &p) { return ur->run([&](const Ev &e) { p.add(e); ++is.events; }, &err); });
    ur->report_defects(issues);
  } else if (fmt == USCOPE_CONVERT_PCCX) {
    rep.format = "pccx";
    rep.strs = &pool;
    rep.has_sizes = rep.has_units = rep.has_layers = false;
    uint64_t others = 0;  // no metric counts them
    s = read_pccx(in, pool, rep, &rep.period_ps, &is.events, &others, &err);
  } else {
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, std::string(in) + ": unknown format (.jsonl, .jsonl.gz, .uscope, .pccx)");
  }
  fill_stats(st, is, issues, 0);
  if (s) return fail_with(s, in_error(in, err));
  *text = rep.render(json);
  return 0;
}

}  // namespace uscope::convert
