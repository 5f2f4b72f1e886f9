// pccx-lab .pccx as a source and a sink of the conversion matrix
// (matrix.hpp). The two mappings (docs/conversions.md "pccx"):
//
//   Ev -> pccx (PccxOut): START/END pairs become one event with a duration
//   (pairing.hpp), instants zero-length events, the WARN lines that stand for
//   pccx events with no NPU meaning their original event.
//   pccx -> Ev (PccxIn): each event back as the pair, instant or WARN line
//   whose pccx event is that event again.
//
// PccxOut(PccxIn(x)) = x for every event's type, core, start, duration and
// api_name (the one exception: type ids the writer cannot write, >= 7).
#pragma once

#include <pccx/pccx.h>

#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <deque>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "convert/matrix.hpp"
#include "convert/pairing.hpp"

namespace uscope::pccx {
class Writer;
}

namespace uscope::convert {

// Intervals and instants (pairing.hpp) as pccx events.
class PccxOut final : public EvSink, public PairSink {
 public:
  PccxOut(const StringSource &strs, uint64_t queue_bytes);
  ~PccxOut() override;
  // Larger than the pccx writer's default: a conversion outruns its encoder
  // in bursts (long runs of instants), and a batch job can afford the memory.
  static constexpr uint64_t kDefaultQueue = 16u << 20;
  // The header's fields come from meta.pccx where present
  // (docs/convert.md), clock_mhz from period_ps (or meta.pccx.clock_mhz
  // when it gives this period).
  Status open(const char *path, const TraceMeta &meta, uint64_t period_ps, std::string *error) override;
  Status add(const Ev &e, std::string *reason) override;
  Status close(std::string *error) override;
  uint64_t events() const override { return events_; }
  void notes(std::vector<std::string> *out) const override;

  void interval(const Interval &iv) override;
  void instant(uint8_t ev_type, uint64_t t, uint32_t core) override;

 private:
  // A WARN line that stands for a pccx event ("component":"pccx", "code":
  // its type, "msg": "[<api_name>, ]<N> cycle(s)") is written back as that
  // event; false (nothing written) for any other line.
  bool pccx_warn(const Ev &e);
  // One event, held until no event can start before it (start order, which
  // pccx-lab's large-file reader expects of a flatbuf payload).
  void put(uint32_t core, uint64_t start, uint64_t duration, uint32_t type, const char *name);
  // Writes the held events that start before h (all: ~0); a failure is
  // kept (status_, error_).
  void release(uint64_t h);
  struct Held {
    uint64_t start, seq, duration;
    uint32_t core, type;
    const char *name;  // interned in names_, or NULL
    bool operator>(const Held &o) const { return start > o.start || (start == o.start && seq > o.seq); }
  };
  // Bounds the events held back by a START that stays open: past it the
  // earliest are written anyway, and counted.
  static constexpr size_t kMaxHeld = 1u << 20;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
  // Interned names: looked up by view (no allocation per event), kept in a
  // deque (stable addresses).
  const char *intern(const char *name);
  std::unordered_map<std::string_view, const char *> names_;
  std::deque<std::string> name_store_;
  uint64_t held_seq_ = 0, since_release_ = 0, out_of_order_ = 0, written_upto_ = 0;
  const StringSource &strs_;
  uint64_t queue_bytes_;
  Pairer pairer_;
  std::unique_ptr<pccx::Writer> w_;
  std::string name_;
  uint64_t events_ = 0;
  bool set_cycles_ = false;
  uint64_t cycles_ = 0;
  // What pccx cannot hold, counted for notes().
  uint64_t lost_fields_ = 0;
  bool lost_meta_ = false, synthetic_ids_ = false;
  Status status_ = 0;
  std::string error_;
};

}  // namespace uscope::convert
