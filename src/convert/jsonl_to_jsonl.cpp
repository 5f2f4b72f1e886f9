// JSONL -> JSONL: the ingest's view of a file (sorted, checked, one
// canonical line per event) written back (docs/convert.md).
#include "convert/pipeline.hpp"

namespace uscope::convert {

uscope_status_t jsonl_to_jsonl(const char *in, const char *out, const Options &o, uscope_convert_stats_t *st) {
  JsonlIn src(o, true, "jsonl -> jsonl");
  Ingest &ing = src.ing;
  if (uscope_status_t s = src.open(in)) return s;
  std::string err;
  JsonlOut w;
  if (uscope_status_t s = w.open(out, &err)) return fail_with(s, err);
  std::string werr;
  uscope_status_t ws = 0;
  bool started = false;
  uint64_t n = 0;
  uscope_status_t s = ing.run(
      [&](const Ev &e, std::string *reason) -> uscope_status_t {
        if (!started && wants_meta_line(src.meta)) format_trace_meta(src.meta, w.buf());
        started = true;
        format_jsonl(e, src.pool, src.meta, ing.period_ps(), w.buf());
        ++n;
        return ws = w.maybe_flush(&werr);
      },
      &err);
  if (!s && !started && wants_meta_line(src.meta)) format_trace_meta(src.meta, w.buf());
  std::string cerr;
  const uscope_status_t cs = w.close(&cerr);
  fill_stats(st, ing.stats(), src.issues, n);
  if (ws) return fail_with(ws, werr);
  if (s) return fail_with(s, in_error(in, err));
  if (cs) return fail_with(cs, std::string(out) + ": " + cerr);
  return 0;
}

}  // namespace uscope::convert
