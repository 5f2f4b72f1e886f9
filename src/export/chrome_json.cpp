// `uscope export --to chrome-json`: the timeline (timeline_model.hpp) in the
// Trace Event Format (docs/export.md "Perfetto and Chrome JSON"):
// {"displayTimeUnit":"ns","traceEvents":[...]}, written as it is made.
// Slices are complete events (ph X), so a slice is one record; counters
// ph C; flows ph s / f (bound to the enclosing slice, bp "e"); process and
// thread names ph M. "ts" and "dur" are microseconds (the format's unit),
// written with up to three decimals so that a nanosecond is exact.
#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "convert/npu_event.hpp"
#include "export/export.hpp"
#include "export/timeline_model.hpp"

namespace uscope::exporter {

namespace {

class ChromeJsonEncoder final : public timeline::Encoder {
 public:
  // side: events only, each after a separator (the main encoder writes the
  // document's head, a first event before the side starts, and its tail).
  ChromeJsonEncoder(OutFile &f, std::mutex *shared, bool side) : raw_(f, shared), n_(side ? 1 : 0) {
    if (!side) raw_.put("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  }

  void process(const timeline::Track &p, std::string_view name) override { meta("process_name", p.pid, 0, name); }
  void thread(const timeline::Track &p, const timeline::Track &t, std::string_view name) override {
    meta("thread_name", p.pid, t.tid, name);
  }
  // A counter is named per process in this format: the track's name is
  // written with each sample.
  void counter_track(const timeline::Track &, const timeline::Track &t, std::string_view name) override {
    std::string esc;
    convert::append_json_string(esc, name);
    counters_[t.uuid] = std::move(esc);
  }
  void slice(const timeline::Track &t, uint64_t ts, uint64_t dur, const timeline::Name &name, const timeline::Arg *args,
             size_t n_args, const uint64_t *out, size_t n_out, const uint64_t *in, size_t n_in) override {
    // Tens of millions of these on a long cpu trace: each record is made in
    // place in the output's buffer; a name with an id is escaped once per
    // export, another once for the slices in a row that share it.
    const std::string &esc = name.id ? escaped_by_id(name) : escaped(name.text);
    size_t keys = 0;
    for (size_t i = 0; i < n_args; ++i) keys += key_of(args[i]).size();
    char *const b0 = scratch(kRecordHead + 16 + esc.size() + keys + n_args * 48);
    char *p = begin(b0, "X", t, ts);
    p = put(p, ",\"dur\":");
    p = micros(p, dur);
    p = put(p, ",\"name\":");
    p = put(p, esc);
    for (size_t i = 0; i < n_args; ++i) {
      if (i)
        *p++ = ',';
      else
        p = put(p, ",\"args\":{");
      p = put(p, key_of(args[i]));
      if (args[i].pointer) {
        p = std::to_chars(p, p + 16, args[i].value, 16).ptr;
        *p++ = '"';
      } else {
        p = std::to_chars(p, p + 20, args[i].value).ptr;
      }
    }
    if (n_args) *p++ = '}';
    *p++ = '}';
    emit(b0, p);
    for (size_t i = 0; i < n_out; ++i) flow("s", t, ts, out[i]);
    for (size_t i = 0; i < n_in; ++i) flow("f", t, ts, in[i]);
  }
  void instant(const timeline::Track &t, uint64_t ts, std::string_view name) override {
    const std::string &esc = escaped(name);
    char *const b0 = scratch(kRecordHead + 32 + esc.size());
    char *p = begin(b0, "i", t, ts);
    p = put(p, ",\"s\":\"t\",\"name\":");
    p = put(p, esc);
    *p++ = '}';
    emit(b0, p);
  }
  void counter(const timeline::Track &t, uint64_t ts, int64_t value) override {
    // Samples of one track come in runs (a counter's changes): its name is
    // looked up once per run.
    if (t.uuid != last_counter_ || !counter_name_) {
      counter_name_ = &counters_[t.uuid];
      last_counter_ = t.uuid;
    }
    const std::string &name = *counter_name_;
    char *const b0 = scratch(kRecordHead + 64 + name.size());
    char *p = begin(b0, "C", t, ts);
    p = put(p, ",\"name\":");
    p = put(p, name);
    p = put(p, ",\"args\":{\"value\":");
    p = std::to_chars(p, p + 21, value).ptr;
    p = put(p, "}}");
    emit(b0, p);
  }
  void finish() override {
    raw_.put("\n]}\n");
    raw_.finish();
  }
  void flush() override { raw_.finish(); }

 private:
  // The most bytes of a record's ",\n{"ph":..,"pid":..,"tid":..,"ts":..".
  static constexpr size_t kRecordHead = 96;
  // An argument's key as written before its value: "key": and, for a
  // pointer, the opening "0x. The mapping's keys are a few string literals:
  // made once per key (found by its address), not measured per slice.
  const std::string &key_of(const timeline::Arg &a) {
    for (const Key &k : keys_)
      if (k.key == a.key && k.pointer == a.pointer) return k.text;
    keys_.push_back({a.key, a.pointer, "\"" + std::string(a.key) + (a.pointer ? "\":\"0x" : "\":")});
    return keys_.back().text;
  }
  // Room for a record of at most n bytes, written in place (RawOut).
  char *scratch(size_t n) { return raw_.room(n); }
  template <size_t N>
  static char *put(char *p, const char (&lit)[N]) {
    std::memcpy(p, lit, N - 1);
    return p + N - 1;
  }
  static char *put(char *p, const std::string &s) {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
  }
  // ns as microseconds, exact: up to three decimals, trailing zeros left
  // out ("12.345", "12.3", "12"). A trace with several clocks is written in
  // ps, where nearly every time is a whole number of ns: ".000" on each ts
  // and dur was 6% of the file.
  static char *micros(char *p, uint64_t ns) {
    p = std::to_chars(p, p + 20, ns / 1000).ptr;
    unsigned f = static_cast<unsigned>(ns % 1000);
    if (f == 0) return p;
    *p++ = '.';
    *p++ = static_cast<char>('0' + f / 100);
    f %= 100;
    if (f == 0) return p;
    *p++ = static_cast<char>('0' + f / 10);
    f %= 10;
    if (f == 0) return p;
    *p++ = static_cast<char>('0' + f);
    return p;
  }
  const std::string &escaped(std::string_view name) {
    if (!have_last_ || name != last_name_) {
      last_name_.assign(name.data(), name.size());
      last_esc_.clear();
      convert::append_json_string(last_esc_, name);
      have_last_ = true;
    }
    return last_esc_;
  }
  const std::string &escaped_by_id(const timeline::Name &n) {
    if (n.id >= timeline::kNameIds) return escaped(n.text);
    if (n.id >= by_id_.size())
      by_id_.resize(std::min<size_t>(timeline::kNameIds, std::max<size_t>(n.id + 1, 2 * by_id_.size())));
    std::string &e = by_id_[n.id];  // "" until made: an escaped name is at least ""
    if (e.empty()) convert::append_json_string(e, n.text);
    return e;
  }
  // The record's separator and its first fields.
  char *begin(char *p, const char *ph, const timeline::Track &t, uint64_t ts) {
    if (n_++) p = put(p, ",\n");
    p = put(p, "{\"ph\":\"");
    *p++ = ph[0];
    p = put(p, "\",\"pid\":");
    p = std::to_chars(p, p + 10, t.pid).ptr;
    p = put(p, ",\"tid\":");
    p = std::to_chars(p, p + 10, t.tid).ptr;
    p = put(p, ",\"ts\":");
    return micros(p, ts);
  }
  void emit(const char *, const char *p) { raw_.commit(p); }
  void flow(const char *ph, const timeline::Track &t, uint64_t ts, uint64_t id) {
    char *const b0 = scratch(kRecordHead + 96);
    char *p = begin(b0, ph, t, ts);
    p = put(p, ",\"id\":");
    p = std::to_chars(p, p + 20, id).ptr;
    p = put(p, ",\"cat\":\"flow\",\"name\":\"flow\"");
    if (ph[0] == 'f') p = put(p, ",\"bp\":\"e\"");
    *p++ = '}';
    emit(b0, p);
  }
  void meta(const char *what, uint32_t pid, uint32_t tid, std::string_view name) {
    std::string b;
    if (n_++) b += ",\n";
    char v[96];
    std::snprintf(v, sizeof v, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid, tid, what);
    b += v;
    convert::append_json_string(b, name);
    b += "}}";
    raw_.put(b);
  }

  RawOut raw_;
  uint64_t n_;
  std::unordered_map<uint64_t, std::string> counters_;  // counter track uuid -> its name, escaped
  uint64_t last_counter_ = 0;                            // the track counter_name_ is of
  const std::string *counter_name_ = nullptr;            // into counters_ (its nodes do not move)
  std::string last_name_, last_esc_;
  std::vector<std::string> by_id_;  // Name id -> its text escaped
  struct Key {
    const char *key;
    bool pointer;
    std::string text;
  };
  std::deque<Key> keys_;  // key_of's (references to them stay valid)
  bool have_last_ = false;
};

}  // namespace

void export_chrome_json(Job &job) {
  OutFile f(job.output);
  std::mutex shared;
  ChromeJsonEncoder enc(f, &shared, false);
  timeline::run(job, enc, [&] { return std::make_unique<ChromeJsonEncoder>(f, &shared, true); });
  job.stats.bytes_out = f.bytes();
  f.publish();
}

}  // namespace uscope::exporter
