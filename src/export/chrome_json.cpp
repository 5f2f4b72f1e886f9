// `uscope export --to chrome-json`: the timeline (timeline_model.hpp) in the
// Trace Event Format (docs/export.md "Perfetto and Chrome JSON"):
// {"displayTimeUnit":"ns","traceEvents":[...]}, written as it is made.
// Slices are complete events (ph X), so a slice is one record; counters
// ph C; flows ph s / f (bound to the enclosing slice, bp "e"); process and
// thread names ph M. "ts" and "dur" are microseconds (the format's unit),
// written with three decimals so that a nanosecond is exact.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "convert/npu_event.hpp"
#include "export/export.hpp"
#include "export/timeline_model.hpp"

namespace uscope::exporter {

namespace {

class ChromeJsonEncoder final : public timeline::Encoder {
 public:
  explicit ChromeJsonEncoder(OutFile &f) : f_(f) { f_.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"); }

  void process(const timeline::Track &p, std::string_view name) override { meta("process_name", p.pid, 0, name); }
  void thread(const timeline::Track &p, const timeline::Track &t, std::string_view name) override {
    meta("thread_name", p.pid, t.tid, name);
  }
  // A counter is named per process in this format: the track's name is
  // written with each sample.
  void counter_track(const timeline::Track &, const timeline::Track &t, std::string_view name) override {
    counters_[t.uuid] = std::string(name);
  }
  void slice(const timeline::Track &t, uint64_t ts, uint64_t dur, std::string_view name, const timeline::Arg *args,
             size_t n_args, const uint64_t *out, size_t n_out, const uint64_t *in, size_t n_in) override {
    std::string &b = begin("X", t, ts);
    b += ",\"dur\":";
    micros(b, dur);
    b += ",\"name\":";
    convert::append_json_string(b, name);
    for (size_t i = 0; i < n_args; ++i) {
      b += i ? "," : ",\"args\":{";
      convert::append_json_string(b, args[i].key);
      char v[32];
      if (args[i].pointer) std::snprintf(v, sizeof v, ":\"0x%" PRIx64 "\"", args[i].value);
      else std::snprintf(v, sizeof v, ":%" PRIu64, args[i].value);
      b += v;
    }
    if (n_args) b += '}';
    end();
    for (size_t i = 0; i < n_out; ++i) flow("s", t, ts, out[i]);
    for (size_t i = 0; i < n_in; ++i) flow("f", t, ts, in[i]);
  }
  void instant(const timeline::Track &t, uint64_t ts, std::string_view name) override {
    std::string &b = begin("i", t, ts);
    b += ",\"s\":\"t\",\"name\":";
    convert::append_json_string(b, name);
    end();
  }
  void counter(const timeline::Track &t, uint64_t ts, int64_t value) override {
    std::string &b = begin("C", t, ts);
    b += ",\"name\":";
    convert::append_json_string(b, counters_[t.uuid]);
    char v[32];
    std::snprintf(v, sizeof v, ",\"args\":{\"value\":%" PRId64 "}", value);
    b += v;
    end();
  }
  void finish() override { f_.write("\n]}\n"); }

 private:
  // ns as microseconds with three decimals ("12.345").
  static void micros(std::string &b, uint64_t ns) {
    char v[32];
    std::snprintf(v, sizeof v, "%" PRIu64 ".%03u", ns / 1000, static_cast<unsigned>(ns % 1000));
    b += v;
  }
  std::string &begin(const char *ph, const timeline::Track &t, uint64_t ts) {
    std::string &b = f_.buf();
    if (n_++) b += ",\n";
    char v[64];
    std::snprintf(v, sizeof v, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":", ph, t.pid, t.tid);
    b += v;
    micros(b, ts);
    return b;
  }
  void end() {
    f_.buf() += '}';
    f_.maybe_flush();
  }
  void flow(const char *ph, const timeline::Track &t, uint64_t ts, uint64_t id) {
    std::string &b = begin(ph, t, ts);
    char v[96];
    std::snprintf(v, sizeof v, ",\"id\":%" PRIu64 ",\"cat\":\"flow\",\"name\":\"flow\"%s", id,
                  ph[0] == 'f' ? ",\"bp\":\"e\"" : "");
    b += v;
    end();
  }
  void meta(const char *what, uint32_t pid, uint32_t tid, std::string_view name) {
    std::string &b = f_.buf();
    if (n_++) b += ",\n";
    char v[96];
    std::snprintf(v, sizeof v, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid, tid, what);
    b += v;
    convert::append_json_string(b, name);
    b += "}";
    end();
  }

  OutFile &f_;
  uint64_t n_ = 0;
  std::unordered_map<uint64_t, std::string> counters_;  // counter track uuid -> name
};

}  // namespace

void export_chrome_json(Job &job) {
  OutFile f(job.output);
  ChromeJsonEncoder enc(f);
  timeline::run(job, enc);
  job.stats.bytes_out = f.bytes();
  f.publish();
}

}  // namespace uscope::exporter
