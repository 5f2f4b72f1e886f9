// JSONL events <-> pccx-lab .pccx events (docs/convert.md "pccx mapping").
#pragma once

#include <pccx/pccx.h>

#include <memory>
#include <string>

#include "convert/pairing.hpp"

namespace uscope::pccx {
class Writer;
}

namespace uscope::convert {

// Intervals and instants (pairing.hpp) as pccx events.
class PccxOut final : public PairSink {
 public:
  explicit PccxOut(const StringSource &strs);
  ~PccxOut() override;
  // Larger than the pccx writer's default: a conversion outruns its encoder
  // in bursts (long runs of instants), and a batch job can afford the memory.
  static constexpr uint64_t kDefaultQueue = 16u << 20;
  // queue_bytes: the pccx writer's queue; 0: kDefaultQueue. The header's fields
  // come from meta.pccx where present (docs/convert.md), clock_mhz from
  // period_ps (or meta.pccx.clock_mhz when it gives this period).
  Status open(const char *path, uint64_t period_ps, const PccxMeta &meta, uint64_t queue_bytes, std::string *error);
  bool is_open() const { return w_ != nullptr; }
  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;
  // A WARN line that pccx -> JSONL wrote for an event with no NPU meaning
  // ("component":"pccx", "code": its type, "msg": "[<api_name>, ]<N> cycle(s)")
  // is written back as that event; false (nothing written) for any other line.
  bool pccx_warn(const Ev &e);
  Status close(std::string *error);
  uint64_t events() const { return events_; }
  Status status() const { return status_; }

 private:
  const StringSource &strs_;
  // One event to the writer; a failure is kept (status_, error_).
  void put(uint32_t core, uint64_t start, uint64_t duration, uint32_t type, const char *name);
  std::unique_ptr<pccx::Writer> w_;
  std::string name_;
  uint64_t events_ = 0;
  bool set_cycles_ = false;
  uint64_t cycles_ = 0;
  Status status_ = 0;
  std::string error_;
};

// Reads a .pccx file as intervals and instants: the inverse of PccxOut.
// Events of other producers map by pccx type (docs/convert.md): MAC_COMPUTE
// a TE interval, DMA_READ / DMA_WRITE a DMA interval, API_CALL a command
// whose phase is its api_name; the rest go to PairSink::pccx_other, and
// *others counts them. Strings are interned in pool. Returns the period
// from clock_mhz, and (when meta is not NULL) the header's fields.
Status read_pccx(const char *path, StringPool &pool, PairSink &sink, uint64_t *period_ps, uint64_t *events,
                 uint64_t *others, std::string *error, PccxMeta *meta = nullptr);

}  // namespace uscope::convert
