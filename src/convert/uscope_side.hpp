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
#include "convert/npu_event.hpp"

struct uscope_npu;
namespace uscope {
class TraceReader;
class Writer;
}

namespace uscope::convert {

struct UnitCounts {
  uint16_t queue_depth = 1024, num_contexts = 256, num_te = 64, num_ve = 64, num_dma = 64, num_dram = 64,
           num_noc = 64, num_banks = 1024;
  uint64_t queue_bytes = 0;  // the writer's queue; 0: its default
};

// Writes Ev records through the npu per-cycle calls.
class UscopeOut {
 public:
  // The µScope writer's default queue (uscope.h, uscope_writer_options_t).
  static constexpr uint64_t kDefaultQueue = 8u << 20;
  UscopeOut(const UnitCounts &u, uint64_t period_ps, const StringPool &pool);
  ~UscopeOut();
  // Opens the writer; meta must be final (sim_id, TRACE_META).
  Status open(const char *path, const TraceMeta &meta, std::string *error);
  bool is_open() const { return w_ != nullptr; }
  void set_period(uint64_t period_ps) { period_ = period_ps; }  // before open
  // 0, 1 with *reason (the event is not written), or a fatal status.
  Status add(const Ev &e, std::string *reason);
  Status close(std::string *error);
  uint64_t events() const { return events_; }

 private:
  Status context_of(const Ev &e, uint16_t *ctx, std::string *reason);
  Status cycle(uint64_t t, std::string *reason);
  UnitCounts u_;
  uint64_t period_;
  const StringPool &pool_;
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
class UscopeIn final : public StringSource {
 public:
  UscopeIn();
  ~UscopeIn() override;
  // strict: the reader's USCOPE_READ_STRICT (a defect of the trace fails
  // the run); else defects are skipped by the reader and told by
  // report_defects().
  Status open(const char *path, std::string *error, bool strict = false);
  // One message per kind of defect the reader skipped in the run, through
  // issues.on_issue with line 0 (not counted as malformed lines: the trace
  // has none).
  void report_defects(const Issues &issues) const;
  const TraceMeta &meta() const { return meta_; }
  uint64_t period_ps() const { return period_; }
  // Calls fn for every npu event in file order (non-decreasing time).
  Status run(const std::function<void(const Ev &)> &fn, std::string *error);
  std::string_view str(uint64_t id) const override;

 private:
  struct FieldMap {
    int key;        // Key, or -1 (own protocol field: slot / engine), -2 (ctx)
    uint8_t type;
    uint32_t size, offset;
  };
  struct TypeMap {
    int ev = -1;
    std::vector<FieldMap> fields;
  };
  std::unique_ptr<TraceReader> r_;
  TraceMeta meta_;
  uint64_t period_ = 1000;
  uint16_t scope_ = 0, contexts_ = 0xFFFF;
  std::vector<TypeMap> types_;
  std::vector<uint32_t> ctx_sizes_;  // field sizes of the contexts storage
  std::vector<uint8_t> ctx_types_;
};

}  // namespace uscope::convert
