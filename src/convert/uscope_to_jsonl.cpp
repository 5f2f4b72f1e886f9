// µScope -> JSONL: the first npu scope's events, their contexts merged back
// into each line (docs/convert.md, docs/npu-protocol.md §6).
#include "convert/pipeline.hpp"
#include "convert/uscope_side.hpp"

namespace uscope::convert {

uscope_status_t uscope_to_jsonl(const char *in, const char *out, const Options &o, uscope_convert_stats_t *st) {
  UscopeIn r;
  std::string err;
  if (uscope_status_t s = r.open(in, &err, o.o.strict != 0)) return fail_with(s, err);
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  if (wants_meta_line(r.meta())) format_trace_meta(r.meta(), w.buf());
  uint64_t n = 0;
  uscope_status_t ws = 0;
  uscope_status_t s = r.run(
      [&](const Ev &e) {
        format_jsonl(e, r, r.meta(), r.period_ps(), w.buf());
        ++n;
        if (!ws) ws = w.maybe_flush(&err);
      },
      &err);
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  r.report_defects(issues_of(o));
  IngestStats is;
  is.events = n;
  fill_stats(st, is, Issues{}, n);
  if (s) return fail_with(s, in_error(in, err));
  if (ws) return fail_with(ws, err);
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

}  // namespace uscope::convert
