// The NPU metrics report of a JSONL, µScope or pccx file (docs/convert.md
// "npu-report"): the events paired into intervals, measured by Report.
#include <memory>

#include "convert/matrix.hpp"
#include "convert/pairing.hpp"
#include "convert/pipeline.hpp"
#include "convert/report.hpp"

namespace uscope::convert {

uscope_status_t measure(EvSource &src, Report &rep, PairSink *also, std::string *error) {
  // Every format through its source (matrix.hpp), paired the same way: one
  // meaning of "busy" whatever the file.
  struct Tee final : PairSink {
    Report &rep;
    PairSink *also;
    Tee(Report &r, PairSink *a) : rep(r), also(a) {}
    void interval(const Interval &iv) override {
      rep.interval(iv);
      if (also) also->interval(iv);
    }
    void instant(uint8_t ev_type, uint64_t t, uint32_t core) override {
      rep.instant(ev_type, t, core);
      if (also) also->instant(ev_type, t, core);
    }
  } tee(rep, also);
  // The report asks the pairer how far each kind is complete while it measures.
  Pairer p(tee);
  rep.horizon = [&p](PairKind k) { return p.horizon(k); };
  const uscope_status_t s = src.run([&](const Ev &e, std::string *) -> uscope_status_t { p.add(e); return 0; }, error);
  p.finish();
  rep.horizon = nullptr;  // p goes out of scope
  return s;
}

uscope_status_t npu_report(const char *in, uint32_t fmt, const Options &o, bool json, std::string *text,
                           uscope_convert_stats_t *st) {
  if (fmt < USCOPE_CONVERT_JSONL || fmt > USCOPE_CONVERT_PCCX)
    return fail_with(USCOPE_ERR_INVALID_ARGUMENT, std::string(in) + ": unknown format (.jsonl, .jsonl.gz, .uscope, .pccx)");
  // The JSONL ingest checks what pccx would hold (no representability
  // checks: nothing is written).
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
  const uscope_status_t s = measure(*src, rep, nullptr, &err);
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
