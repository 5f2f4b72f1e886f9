// chrome-json in pccx-lab's own layout (export.h USCOPE_CHROME_PCCX_LAB, the
// default for a .pccx input; docs/export.md "pccx-lab's own views"): the
// JSON pccx-lab's exporter (crates/core/src/chrome_trace.rs, write_chrome_trace)
// writes for its timeline, byte for byte, so that pccx-lab users keep their
// views when they switch tools.
//
// That layout, as pccx-lab writes it: a top-level JSON array, "[\n", then one
// event per line indented by two spaces and separated by ",\n", then "\n]\n";
// each event a complete ("X") event named by its type, with cat from the
// type ("mac", "dma", "stall", "sync", else "other"), ts = start / 200 and
// dur = max(duration / 200, 1) in whole microseconds (pccx-lab assumes its
// v002 design's 200 MHz clock, whatever the file's header says), pid 1, tid
// the core, and args core_id, start_cycle, duration_cycles; in the file's
// order. Type names have '\' and '"' escaped and nothing else, as there.
//
// An NPU µScope trace or JSON-Lines input is first converted to a .pccx
// (the converters' mapping, docs/conversions.md), written beside the output
// and removed after: the JSON is what pccx-lab shows for the .pccx that
// `uscope convert` makes. Streams: the events are read in file order
// through a bounded window (pccx_stream.hpp), never held whole.
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <string>

#include "base/error.hpp"
#include "base/last_error.hpp"
#include "convert/convert.hpp"
#include "export/export.hpp"
#include "pccx/pccx_stream.hpp"

namespace uscope::exporter {

namespace {

// pccx-lab's CYCLES_PER_US (chrome_trace.rs): 200 cycles to a microsecond.
constexpr uint64_t kCyclesPerUs = 200;

const char *category(std::string_view type) {
  if (type == "MAC_COMPUTE") return "mac";
  if (type == "DMA_READ" || type == "DMA_WRITE") return "dma";
  if (type == "SYSTOLIC_STALL") return "stall";
  if (type == "BARRIER_SYNC") return "sync";
  return "other";
}

void put_u64(std::string &b, uint64_t v) {
  char tmp[24];
  const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  b.append(tmp, r.ptr);
}

// A temporary .pccx beside the output, removed when done.
struct TempPccx {
  std::string path;
  explicit TempPccx(const std::string &out) {
    const size_t slash = out.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
    std::string t = dir + "/.uscope-export.XXXXXX.pccx";
    const int fd = ::mkstemps(t.data(), 5);
    if (fd < 0) fail(USCOPE_ERR_IO, "cannot create a temporary .pccx beside %s: %s", out.c_str(), std::strerror(errno));
    ::close(fd);
    path = t;
  }
  ~TempPccx() { ::unlink(path.c_str()); }
};

}  // namespace

void export_chrome_json_pccx_lab(Job &job) {
  std::unique_ptr<TempPccx> temp;
  std::string pccx = job.input;
  if (job.kind != Job::Input::Pccx) {
    // The .pccx `uscope convert` would make (its mapping of NPU events).
    temp = std::make_unique<TempPccx>(job.output);
    uscope_convert_options_t co;
    uscope_convert_options_init(&co);
    co.on_issue = job.opts.on_issue;
    co.user = job.opts.user;
    const uint32_t fi = job.kind == Job::Input::Jsonl ? USCOPE_CONVERT_JSONL : USCOPE_CONVERT_USCOPE;
    if (convert::convert(job.input.c_str(), fi, temp->path.c_str(), USCOPE_CONVERT_PCCX, convert::Options(&co),
                         nullptr) != USCOPE_OK) {
      std::string msg = thread_error();
      const std::string prefix = job.input + ": ";
      if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
      throw Error(USCOPE_ERR_CORRUPT, "chrome-json in pccx-lab's layout needs the trace as pccx events: " + msg);
    }
    pccx = temp->path;
  }
  if (job.opts.time_unit != USCOPE_TIME_AUTO)
    job.note("--time-unit does not apply to pccx-lab's layout: it counts 200 cycles to a microsecond");

  pccx::SortedEventStream events(16ull << 20, /*file_order=*/true);
  events.open(pccx, 0);
  const uint64_t total = events.event_count();
  const uint64_t a = job.opts.range_start, b = job.opts.range_end;
  OutFile out(job.output);
  std::string &buf = out.buf();
  buf += "[\n";
  bool first = true;
  uint64_t n = 0, seen = 0, first_cycle = UINT64_MAX, last_cycle = 0;
  pccx::SortedEvent e;
  while (events.next(&e)) {
    if ((++seen & 0xFFFF) == 0) job.progress->update(seen, total, "events");
    // --range: the events that meet the window (an event of duration 0
    // occupies its start cycle).
    const uint64_t end = e.duration ? e.start + e.duration - 1 : e.start;
    if (job.range_given && (e.start > b || end < a)) continue;
    if (!first) buf += ",\n";
    first = false;
    buf += "  {\"name\":\"";
    for (const char *p = e.type_name; *p; ++p) {
      if (*p == '\\' || *p == '"') buf += '\\';
      buf += *p;
    }
    buf += "\",\"cat\":\"";
    buf += category(e.type_name);
    buf += "\",\"ph\":\"X\",\"ts\":";
    put_u64(buf, e.start / kCyclesPerUs);
    buf += ",\"dur\":";
    put_u64(buf, std::max<uint64_t>(e.duration / kCyclesPerUs, 1));
    buf += ",\"pid\":1,\"tid\":";
    put_u64(buf, e.core_id);
    buf += ",\"args\":{\"core_id\":";
    put_u64(buf, e.core_id);
    buf += ",\"start_cycle\":";
    put_u64(buf, e.start);
    buf += ",\"duration_cycles\":";
    put_u64(buf, e.duration);
    buf += "}}";
    out.maybe_flush();
    ++n;
    first_cycle = std::min(first_cycle, e.start);
    last_cycle = std::max(last_cycle, end);
  }
  buf += "\n]\n";
  job.stats.records = n;
  job.stats.first_cycle = n ? std::max(first_cycle, job.range_given ? a : 0) : a;
  job.stats.last_cycle = n ? (job.range_given ? std::min(last_cycle, b) : last_cycle) : a;
  job.stats.bytes_out = out.bytes();
  out.publish();
}

}  // namespace uscope::exporter
