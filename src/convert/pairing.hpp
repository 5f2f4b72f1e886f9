// START/END pairing: turns a time-ordered Ev stream into intervals (a
// command, job, TE/VE run, DMA/DRAM/NoC transfer with its duration) and
// instants (everything else, and STARTs or ENDs without a partner). Used by
// JSONL -> pccx and by the npu report, so both give one meaning to "busy".
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "convert/npu_event.hpp"

namespace uscope::convert {

enum PairKind : uint8_t { P_CMD, P_JOB, P_TE, P_VE, P_DMA, P_DRAM, P_NOC, kNumPairKinds };
extern const char *const kPairNames[kNumPairKinds];      // "CMD", "JOB", "TE", ...
extern const uint8_t kPairStart[kNumPairKinds], kPairEnd[kNumPairKinds];  // EvType

constexpr uint32_t kNoUnit = ~0u;
constexpr uint32_t kNoLayer = ~0u;
constexpr uint64_t kNoSize = ~uint64_t{0};
constexpr uint64_t kNoLabel = ~uint64_t{0};

struct Interval {
  uint8_t kind;        // PairKind
  uint64_t start, end; // cycles
  uint32_t core;       // core_id, else npu_id, else 0
  uint32_t unit;       // DMA / DRAM channel, NoC link; kNoUnit
  uint32_t layer;      // layer_id of the START or of its command; kNoLayer
  uint64_t size;       // size_bytes of the START; kNoSize
  uint64_t label;      // string id: CMD phase, JOB job_type, DMA direction; kNoLabel
  // The phase of the START line (string id; kNoLabel when absent or null):
  // a pccx event's api_name travels in it (pccx_side.hpp).
  uint64_t phase = kNoLabel;
};

struct PairSink {
  virtual ~PairSink() = default;
  virtual void interval(const Interval &iv) = 0;
  virtual void instant(uint8_t ev_type, uint64_t t, uint32_t core) = 0;
};

class Pairer {
 public:
  explicit Pairer(PairSink &sink) : sink_(sink) {}
  void add(const Ev &e);
  void finish();  // pending STARTs become instants, in time order
  // No interval of this kind given to the sink from now on starts before
  // the returned cycle: the earliest pending START of the kind, or the
  // latest event's time (the stream is time-ordered). O(pending STARTs);
  // the report calls it once per few thousand intervals.
  uint64_t horizon(PairKind kind) const;
  // The same over every kind: no interval or instant given to the sink
  // from now on starts before it.
  uint64_t horizon() const;

 private:
  struct K {
    uint64_t a, b;
    bool operator==(const K &o) const { return a == o.a && b == o.b; }
  };
  struct KH {
    size_t operator()(const K &k) const { return std::hash<uint64_t>()(k.a * 0x9E3779B97F4A7C15ull ^ k.b); }
  };
  struct Pending {
    uint64_t t, size, label, seq;
    uint32_t core, unit, layer;
    uint64_t phase;
  };
  struct CmdInfo {
    uint32_t layer;
    uint64_t phase;
  };
  PairSink &sink_;
  std::unordered_map<K, Pending, KH> pending_;
  std::unordered_map<uint64_t, CmdInfo> cmds_;
  uint64_t seq_ = 0;
  uint64_t last_t_ = 0;
};

uint32_t core_of(const Ev &e);

}  // namespace uscope::convert
