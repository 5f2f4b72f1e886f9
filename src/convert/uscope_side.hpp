// JSONL events <-> the npu protocol of µScope (docs/npu-protocol.md §6).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <uscope/convert.h>
#include <uscope/protocols.h>

#include "convert/jsonl_ingest.hpp"
#include "convert/matrix.hpp"
#include "convert/npu_event.hpp"

struct uscope_npu;
namespace uscope {
class ScopePresence;
class TraceReader;
class Writer;
}

namespace uscope::convert {

// Writes Ev records through the npu per-cycle calls.
class UscopeOut final : public EvSink {
 public:
  // The µScope writer's default queue (uscope.h, uscope_writer_options_t).
  static constexpr uint64_t kDefaultQueue = 8u << 20;
  UscopeOut(const UnitCounts &u, const StringSource &strs);
  ~UscopeOut() override;
  // Opens the writer; meta must be final (sim_id, TRACE_META). period_ps:
  // the npu clock's (at most 2^32-1: a µScope clock period is 32-bit).
  Status open(const char *path, const TraceMeta &meta, uint64_t period_ps, std::string *error) override;
  // 0, 1 with *reason (the event is not written), or a fatal status.
  Status add(const Ev &e, std::string *reason) override;
  Status close(std::string *error) override;
  uint64_t events() const override { return events_; }

 private:
  Status context_of(const Ev &e, uint16_t *ctx, std::string *reason);
  Status cycle(uint64_t t, std::string *reason);
  UnitCounts u_;
  uint64_t period_ = 1000;
  const StringSource &pool_;
  std::unique_ptr<Writer> w_;
  std::unique_ptr<uscope_npu> npu_;
  uscope_npu_ids_t ids_{};
  bool in_cycle_ = false;
  uint64_t cur_ = 0, tick_ = 0, events_ = 0;
  uint32_t empty_str_ = 0;
  bool have_empty_ = false;
  using Tuple = std::array<uint64_t, kNumMetaKeys>;
  struct TupleHash {
    size_t operator()(const Tuple &t) const {
      uint64_t h = 0;
      for (uint64_t x : t) h = (h ^ x) * 0x100000001B3ull;
      return h;
    }
  };
  struct Ctx {
    Tuple tuple;
    bool used = false;
    uint64_t last_cycle = ~uint64_t{0}, tick = 0;
  };
  std::vector<Ctx> ctxs_;
  std::unordered_map<Tuple, uint16_t, TupleHash> ctx_of_;
  // Engines and queue slots: free lists and the job / command they hold.
  std::vector<uint16_t> te_free_, ve_free_, q_free_;
  std::unordered_multimap<uint64_t, uint16_t> te_of_, ve_of_, q_of_;
  std::unordered_map<uint64_t, uint64_t> dma_size_, dram_size_, noc_size_;
};

// Reads the first npu scope of a .uscope file back as Ev records, through
// the reader core.
class UscopeIn final : public EvSource, public StringSource {
 public:
  // strict: the reader's USCOPE_READ_STRICT (a defect of the trace fails
  // the run); else defects are skipped by the reader and told by notes().
  explicit UscopeIn(const Options &o);
  // Over a reader the caller owns (the npu analysis of a reader handle),
  // which must outlive this source; open() is then attach().
  UscopeIn(TraceReader &r, const Options &o);
  ~UscopeIn() override;
  Status open(const char *path, std::string *error) override;
  // Finds the npu scope of the reader given or opened (errors as open's).
  Status attach(std::string *error);
  // run() stops after the events at time_ps (the segments after it are not
  // read); UINT64_MAX (the default): every event.
  void set_until(uint64_t time_ps) { until_ps_ = time_ps; }
  // run() leaves out the segments that a pass over the same file saw hold no
  // item of the npu scope (scope_presence.hpp); `seen` must outlive run().
  void skip_by(const ScopePresence *seen) { seen_ = seen; }
  const TraceReader &reader() const { return *r_; }
  // Every npu event in file order (non-decreasing time); an event the
  // caller does not place is an issue numbered by its 1-based event number.
  Status run(const Fn &fn, std::string *error) override;
  const StringSource &strings() const override { return *this; }
  const TraceMeta &meta() const override { return meta_; }
  uint64_t period_ps() const override { return period_; }
  Issues &issues() override { return issues_; }
  IngestStats stats() const override { return stats_; }
  uint64_t input_size() const override;
  // The npu scope's slot counts (its storages'), the spare ones of
  // UscopeOut excluded.
  bool units(UnitCounts *u) const override;
  // One line per kind of defect the reader skipped in the run, and the
  // scopes other than the npu one (not converted).
  void notes(std::vector<std::string> *out) const override;
  // The caller shows the trace's other protocol scopes itself (the timeline
  // exporters): no "not converted" note for them.
  void others_shown() { note_others_ = false; }
  std::string_view str(uint64_t id) const override;
  const char *c_str(uint64_t id) const override;

 private:
  bool strict_ = false;
  Issues issues_;
  IngestStats stats_;
  std::string path_;
  struct FieldMap {
    int key;        // Key, or -1 (own protocol field: slot / engine), -2 (ctx)
    uint8_t type;
    uint32_t size, offset;
  };
  struct TypeMap {
    int ev = -1;
    std::vector<FieldMap> fields;
  };
  std::unique_ptr<TraceReader> own_;  // when opened by path
  TraceReader *r_ = nullptr;
  uint64_t until_ps_ = UINT64_MAX;
  const ScopePresence *seen_ = nullptr;
  TraceMeta meta_;
  uint64_t period_ = 1000;
  uint16_t scope_ = 0, contexts_ = 0xFFFF;
  std::vector<TypeMap> types_;
  bool note_others_ = true;
  std::vector<uint32_t> ctx_sizes_;  // field sizes of the contexts storage
  std::vector<uint8_t> ctx_types_;
};

}  // namespace uscope::convert
