// JSONL events <-> pccx-lab .pccx events (docs/convert.md "pccx mapping").
#pragma once

#include <pccx/pccx.h>

#include <string>

#include "convert/pairing.hpp"

namespace uscope::convert {

// Intervals and instants (pairing.hpp) as pccx events.
class PccxOut final : public PairSink {
 public:
  explicit PccxOut(const StringSource &strs) : strs_(strs) {}
  ~PccxOut() override;
  // queue_bytes: the pccx writer's queue; 0: 16 MiB.
  Status open(const char *path, uint64_t period_ps, uint64_t queue_bytes, std::string *error);
  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;
  Status close(std::string *error);
  uint64_t events() const { return events_; }
  Status status() const { return status_; }

 private:
  const StringSource &strs_;
  pccx_writer_t *w_ = nullptr;
  std::string name_;
  uint64_t events_ = 0;
  Status status_ = 0;
  std::string error_;
};

// Reads a .pccx file as intervals and instants: the inverse of PccxOut.
// Events of other producers map by pccx type (docs/convert.md): MAC_COMPUTE
// a TE interval, DMA_READ / DMA_WRITE a DMA interval, API_CALL a command
// whose phase is its api_name; the rest go to PairSink::pccx_other, and
// *others counts them. Strings are interned in pool. Returns the period
// from clock_mhz.
Status read_pccx(const char *path, StringPool &pool, PairSink &sink, uint64_t *period_ps, uint64_t *events,
                 uint64_t *others, std::string *error);

}  // namespace uscope::convert
