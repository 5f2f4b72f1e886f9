// The conversion matrix (docs/conversions.md): every input format is an
// EvSource, a time-ordered stream of Ev records (npu_event.hpp), and every
// output format an EvSink that takes them. convert() (convert.cpp) joins any
// source to any sink, so each pair of formats is one source and one sink
// rather than a pipeline of its own, and a round trip through any chain
// meets the same two mappings per format (jsonl_side.cpp, uscope_side.cpp,
// pccx_side.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convert/convert.hpp"
#include "convert/jsonl_ingest.hpp"
#include "convert/npu_event.hpp"

namespace uscope::convert {

// Unit counts of a µScope npu scope, which neither JSONL nor pccx declares.
struct UnitCounts {
  uint16_t queue_depth = 1024, num_contexts = 256, num_te = 64, num_ve = 64, num_dma = 64, num_dram = 64,
           num_noc = 64, num_banks = 1024;
  uint64_t queue_bytes = 0;  // the writer's queue; 0: its default
};

class EvSource {
 public:
  virtual ~EvSource() = default;
  // fn returns 0 (placed), 1 (not placed: *reason says why; the source
  // reports it as an issue of the event's line or number, counts it, and
  // stops with USCOPE_ERR_CORRUPT when strict), or a fatal status, which
  // stops run() and is returned.
  using Fn = std::function<Status(const Ev &, std::string *reason)>;
  // Errors name the file.
  virtual Status open(const char *in, std::string *error) = 0;
  // Every event in non-decreasing t_cycle.
  virtual Status run(const Fn &fn, std::string *error) = 0;
  virtual const StringSource &strings() const = 0;
  // Final when fn sees the first event, and after run().
  virtual const TraceMeta &meta() const = 0;
  virtual uint64_t period_ps() const = 0;
  virtual Issues &issues() = 0;
  virtual IngestStats stats() const = 0;
  // The input's size in bytes and whether it is compressed (0: unknown): the
  // output writers size their queue from it (pipeline.hpp queue_for_input).
  virtual uint64_t input_size() const { return 0; }
  virtual bool input_gzip() const { return false; }
  // Unit counts the input declares (a .uscope npu scope); false: none.
  virtual bool units(UnitCounts *) const { return false; }
  // After run(): one line per kind of thing the input holds that the
  // conversion does not read (a .uscope file's other scopes, its defects),
  // with counts. Not issues: nothing of the npu stream was skipped.
  virtual void notes(std::vector<std::string> *) const {}
};

class EvSink {
 public:
  virtual ~EvSink() = default;
  // Called before the first event (or at the end of an empty input) with
  // the source's final meta and period.
  virtual Status open(const char *out, const TraceMeta &meta, uint64_t period_ps, std::string *error) = 0;
  // 0, 1 (not placed: *reason), or a fatal status (*reason: the message).
  virtual Status add(const Ev &e, std::string *reason) = 0;
  virtual Status close(std::string *error) = 0;
  virtual uint64_t events() const = 0;
  // After close(): one line per kind of field or event the format cannot
  // hold, with the count of events that lost it (docs/conversions.md).
  virtual void notes(std::vector<std::string> *) const {}
};

// The sources and sinks of each format (their files: jsonl_side.cpp,
// uscope_side.cpp, pccx_side.cpp). `target` is the output format, which
// decides the JSONL ingest's representability checks; `label` names the
// progress bar.
std::unique_ptr<EvSource> make_jsonl_source(const Options &o, uint32_t target, const char *label);
std::unique_ptr<EvSource> make_uscope_source(const Options &o);
std::unique_ptr<EvSource> make_pccx_source(const Options &o);
std::unique_ptr<EvSource> make_source(uint32_t format, const Options &o, uint32_t target, const char *label);

std::unique_ptr<EvSink> make_jsonl_sink(const StringSource &strs);
std::unique_ptr<EvSink> make_uscope_sink(const UnitCounts &u, const StringSource &strs);
std::unique_ptr<EvSink> make_pccx_sink(const StringSource &strs, uint64_t queue_bytes);

// n with thousands separators ("12,800"), and "12,800 events" (what + s
// unless n is 1), for notes and messages.
std::string with_commas(uint64_t n);
std::string count_of(uint64_t n, const char *what);

}  // namespace uscope::convert
