// NPU JSON-Lines as a source (the streaming ingest, jsonl_ingest.hpp) and as
// a sink (the canonical form, npu_event.hpp format_jsonl) of the conversion
// matrix (matrix.hpp, docs/conversions.md).
#include "convert/matrix.hpp"
#include "convert/pipeline.hpp"

namespace uscope::convert {

namespace {

class JsonlSource final : public EvSource {
 public:
  // Every key JSONL holds is representable in JSONL and pccx; a .uscope
  // target (lossless) and the canonical form also check that sim_id and t_ns
  // are uniform, as the µScope side must (docs/convert.md "Ingest").
  JsonlSource(const Options &o, uint32_t target, const char *label)
      : in_(o, target == USCOPE_CONVERT_USCOPE || target == USCOPE_CONVERT_JSONL, label) {}
  Status open(const char *in, std::string *error) override {
    const Status s = in_.ing.open_file(in);
    if (s) *error = in_error(in, in_.ing.open_error());
    return s;
  }
  Status run(const Fn &fn, std::string *error) override { return in_.ing.run(fn, error); }
  const StringSource &strings() const override { return in_.pool; }
  const TraceMeta &meta() const override { return in_.meta; }
  uint64_t period_ps() const override { return in_.ing.period_ps(); }
  Issues &issues() override { return in_.issues; }
  IngestStats stats() const override { return in_.ing.stats(); }
  uint64_t input_size() const override { return in_.ing.input_size(); }
  bool input_gzip() const override { return in_.ing.input_gzip(); }

 private:
  JsonlIn in_;
};

class JsonlSink final : public EvSink {
 public:
  explicit JsonlSink(const StringSource &strs) : strs_(strs) {}
  Status open(const char *out, const TraceMeta &meta, uint64_t period_ps, std::string *error) override {
    meta_ = meta;
    period_ = period_ps;
    if (Status s = w_.open(out, error)) return s;
    // TRACE_META first, when the trace had one or has what only it carries.
    if (wants_meta_line(meta_)) format_trace_meta(meta_, w_.buf());
    return 0;
  }
  Status add(const Ev &e, std::string *reason) override {
    format_jsonl(e, strs_, meta_, period_, w_.buf());
    ++events_;
    return w_.maybe_flush(reason);
  }
  Status close(std::string *error) override { return w_.close(error); }
  uint64_t events() const override { return events_; }

 private:
  const StringSource &strs_;
  TraceMeta meta_;
  uint64_t period_ = 1000, events_ = 0;
  JsonlOut w_;
};

}  // namespace

std::unique_ptr<EvSource> make_jsonl_source(const Options &o, uint32_t target, const char *label) {
  return std::make_unique<JsonlSource>(o, target, label);
}

std::unique_ptr<EvSink> make_jsonl_sink(const StringSource &strs) { return std::make_unique<JsonlSink>(strs); }

}  // namespace uscope::convert
