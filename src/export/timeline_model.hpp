// The timeline both timeline exporters show (docs/export.md "Perfetto and
// Chrome JSON"): ONE mapping from a trace to processes, tracks, slices,
// counters and flows, with the two encoders (perfetto.cpp: protobuf;
// chrome_json.cpp: Trace Event Format) on top of it.
//
// The mapping (issue 14 §2):
//  - one process per exported scope: each cpu protocol scope, the npu scope
//    (of a .uscope, or the whole .pccx / .jsonl input), each noc scope;
//  - thread tracks: per pipeline stage and lane (cpu); per command queue,
//    job queue, TE, VE (per core), DMA / DRAM channel and NoC link (npu), and
//    one for the npu's instant events; per link (src_port -> dst_port) of a
//    noc scope. A track holds properly nested slices
//    only, so slices that overlap on one resource go to lanes of it
//    ("execute #1"), each lane a track of its own;
//  - slices: each instruction's stage spans (named by its disassembly without
//    the pc, which is an argument with the instruction's sim_id), NPU
//    commands, jobs, engine runs, DMA / DRAM / NoC transfers (the START/END
//    pairs of src/convert/pairing.hpp), noc hops (issue to completion, from
//    the noc analysis's decoder, visit_noc); instants: the npu's other
//    events, noc retries and timeouts;
//  - counter tracks: each cpu counter and each buffer's occupancy, one
//    sample at the window's start and then one per change; noc link credits;
//  - flows: cpu dependency events (the source instruction's first stage to
//    the dependent's), NPU command -> its jobs, engine runs and transfers,
//    and noc txn_handoff (a hop -> the next hop of its transaction).
//
// Time: a cycle c is written as ts(c) units of the encoders' nanoseconds:
// c itself (USCOPE_TIME_CYCLE: "1 ns = 1 cycle", said in every process
// name), c * period in ps (USCOPE_TIME_PS: "1 ns = 1 ps"), or real ns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "export/export.hpp"

namespace uscope::exporter::timeline {

// A track: a thread track (slices, instants) or a counter track, in a
// process. uuid is unique over the trace (Perfetto's TrackDescriptor.uuid);
// pid / tid are small integers (Chrome JSON's).
struct Track {
  uint64_t uuid = 0;
  uint32_t pid = 0, tid = 0;
};

// A named integer attached to a slice (Perfetto: a debug annotation; Chrome
// JSON: an entry of "args"). pointer: shown in hex. key: a string that
// outlives the export (the mapping's are literals; encoders keep it).
struct Arg {
  const char *key;
  uint64_t value;
  bool pointer;
};

// A slice's name: its text, and an id of that text within the export (0:
// none). Slices with the same nonzero id have the same text, so an encoder
// keeps what it made of a text by id (Perfetto: its interned iid; Chrome
// JSON: the escaped string) instead of hashing or comparing the text again:
// an instruction's name is given to each of its stages, tens of millions of
// times on a long trace, from a few thousand distinct instructions. Ids
// are small (from 1, counted up per distinct instruction named, below
// kNameIds) so that encoders index arrays by them; two ids may name equal
// texts (the same disassembly at two pcs).
constexpr uint32_t kNameIds = 1 << 17;
struct Name {
  std::string_view text;
  uint32_t id = 0;
};

// What an encoder is told, in the order it must write it: a process before
// its tracks, a track before its events. Timestamps are the encoders' ns
// (Time::ts); events come in no particular time order.
class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual void process(const Track &p, std::string_view name) = 0;
  virtual void thread(const Track &p, const Track &t, std::string_view name) = 0;
  virtual void counter_track(const Track &p, const Track &t, std::string_view name) = 0;
  // A slice [ts, ts + dur) on thread track t; flows_out start at it, flows_in end at it.
  virtual void slice(const Track &t, uint64_t ts, uint64_t dur, const Name &name, const Arg *args, size_t n_args,
                     const uint64_t *flows_out, size_t n_out, const uint64_t *flows_in, size_t n_in) = 0;
  virtual void instant(const Track &t, uint64_t ts, std::string_view name) = 0;
  virtual void counter(const Track &t, uint64_t ts, int64_t value) = 0;
  // After the last event: close the file's structure (not published).
  virtual void finish() = 0;
  // Everything told so far to the file, for an encoder of a second thread
  // sharing it (a side encoder, below): at the main encoder's, before the
  // second thread starts (the processes it adds tracks to are described
  // first); at the side encoder's end, instead of finish().
  virtual void flush() = 0;
};

// A second encoder over the same output, for the part of the mapping run
// on a second thread (the cpu counters, the npu and noc scopes) while the
// first writes the instructions' slices: an independent stream of records
// (Perfetto: a sequence of its own, with its own interned names; Chrome
// JSON: events without the document's head or tail) that the output
// interleaves with the main encoder's by whole pieces (RawOut's shared
// mutex). Empty: everything runs on the calling thread.
using SideEncoderFactory = std::function<std::unique_ptr<Encoder>()>;

// What the mapping produced, for the job's stats and notes.
struct Counts {
  uint64_t slices = 0, instants = 0, counter_samples = 0, flows = 0;
  uint64_t dangling_flows = 0;  // engine work whose command never ended in the input
};

// Runs the mapping of job's input over its window into enc; sets
// job.stats (first/last cycle, records) and tells job.note() what the
// formats cannot hold. Throws uscope::Error.
//
// With a side factory, a µScope input with a cpu scope to stream has its
// other parts mapped on a second thread over a second reader of the input,
// and the side encoder's records interleave with enc's; process, track and
// flow ids stay unique across both.
Counts run(Job &job, Encoder &enc, const SideEncoderFactory &side = {});

}  // namespace uscope::exporter::timeline
