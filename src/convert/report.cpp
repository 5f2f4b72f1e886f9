#include "convert/report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace uscope::convert {

bool Report::counts(const Interval &iv, uint64_t *s, uint64_t *e) const {
  *s = iv.start;
  *e = iv.end;
  if (!window_) return true;
  if (iv.kind == P_TE || iv.kind == P_VE || iv.kind == P_DRAM) {
    if (iv.end < first_ || iv.start > last_) return false;
    *s = std::max(iv.start, first_);
    *e = std::min(iv.end, last_);
    return true;
  }
  return iv.end >= first_ && iv.end <= last_;
}

void Report::interval(const Interval &whole) {
  Interval iv = whole;
  if (!counts(whole, &iv.start, &iv.end)) return;
  touch(iv.start);
  touch(iv.end);
  const uint64_t d = iv.end - iv.start;
  ++counts_[iv.kind];
  switch (iv.kind) {
    case P_TE: add_busy(te_, P_TE, iv.start, iv.end); break;
    case P_VE: add_busy(ve_, P_VE, iv.start, iv.end); break;
    case P_DMA: {
      ++dma_transfers_;
      dma_busy_ += d;
      Direction &dir = dma_dir_[iv.label == kNoLabel ? std::string("(none)") : std::string(strs->str(iv.label))];
      ++dir.transfers;
      if (iv.size != kNoSize) dma_bytes_ += iv.size, dir.bytes += iv.size;
      break;
    }
    case P_DRAM: add_busy(dram_[iv.unit], P_DRAM, iv.start, iv.end); break;
    case P_CMD: {
      Phase &p = phases_[iv.label == kNoLabel ? std::string("(none)") : std::string(strs->str(iv.label))];
      ++p.n;
      p.total += d;
      p.min = std::min(p.min, d);
      p.max = std::max(p.max, d);
      break;
    }
    default: break;
  }
  if (iv.layer != kNoLayer) {
    Layer &l = layers_[iv.layer];
    if (iv.kind == P_TE) l.te += d;
    else if (iv.kind == P_VE) l.ve += d;
    else if (iv.kind == P_DMA) l.dma += d;
    else if (iv.kind == P_CMD) {
      ++l.cmds;
      l.first = std::min(l.first, iv.start);
      l.last = std::max(l.last, iv.end);
    }
  }
}

void Report::instant(uint8_t ev_type, uint64_t t, uint32_t) {
  if (window_ && (t < first_ || t > last_)) return;
  touch(t);
  if (ev_type == E_SRAM_ACCESS) ++sram_access_;
  else if (ev_type == E_SRAM_CONFLICT) ++sram_conflict_;
}

void Report::add_busy(Busy &b, PairKind kind, uint64_t s, uint64_t e) {
  b.add(s, e);
  if (b.full() && horizon) b.fold(horizon(kind));
}

// Sorts and merges the spans into disjoint runs; runs ending at or before
// the horizon are final. Doubles the limit when little was folded (many
// jobs still running), so folding stays amortized O(log n) per span.
void Report::Busy::fold(uint64_t horizon) {
  std::sort(spans_.begin(), spans_.end());
  size_t out = 0;
  for (size_t i = 0; i < spans_.size();) {
    uint64_t s = spans_[i].first, e = spans_[i].second;
    for (++i; i < spans_.size() && spans_[i].first <= e; ++i) e = std::max(e, spans_[i].second);
    if (e <= horizon) done_ += e - s;
    else spans_[out++] = {s, e};
  }
  spans_.resize(out);
  if (spans_.size() > limit_ / 2) limit_ *= 2;
}

size_t Report::busy_spans_held() const {
  size_t n = te_.held() + ve_.held();
  for (const auto &[ch, b] : dram_) n += b.held();
  return n;
}

uint64_t Report::Busy::total() const {
  Busy rest = *this;
  rest.fold(~uint64_t{0});
  return rest.done_;
}

std::vector<Report::Engine> Report::engines() const {
  std::vector<Engine> out;
  out.push_back({"TE", 0, kNoUnit, counts_[P_TE], te_.total()});
  out.push_back({"VE", 1, kNoUnit, counts_[P_VE], ve_.total()});
  if (has_units)
    for (const auto &[ch, busy] : dram_)
      out.push_back({ch == kNoUnit ? std::string("DRAM -") : "DRAM " + std::to_string(ch), 2, ch, busy.count(),
                     busy.total()});
  return out;
}

std::vector<Report::PhaseFigures> Report::phase_figures() const {
  std::vector<PhaseFigures> out;
  for (const auto &[name, p] : phases_) out.push_back({name, p.n, p.total, p.min, p.max});
  return out;
}

namespace {
// A tiny text/JSON emitter: ratios with 6 decimals, so that the same data
// gives the same bytes whichever format it came from.
struct Out {
  bool json;
  std::string s;
  void raw(const std::string &x) { s += x; }
  static std::string num(uint64_t v) { return std::to_string(v); }
  static std::string ratio(double v) {
    char b[48];
    std::snprintf(b, sizeof b, "%.6f", v);
    return b;
  }
  static std::string q(const std::string &x) {
    std::string o;
    append_json_string(o, x);
    return o;
  }
};
}  // namespace

std::string Report::render(bool json) const {
  const uint64_t total = any_ ? last_ - first_ : 0;
  const uint64_t te_busy = te_.total(), ve_busy = ve_.total();
  auto frac = [&](uint64_t busy) { return total ? static_cast<double>(busy) / static_cast<double>(total) : 0.0; };
  const double bpc = total ? static_cast<double>(dma_bytes_) / static_cast<double>(total) : 0.0;
  const double gbps = period_ps ? bpc * 1e12 / static_cast<double>(period_ps) / 1e9 : 0.0;
  const char *na_sizes = "the format keeps no transfer sizes";
  const char *na_units = "the format keeps no DRAM channel ids";
  const char *na_layers = "the format keeps no layer ids";
  Out o{json, {}};
  if (json) {
    o.raw("{\"format\":" + Out::q(format) + ",\"period_ps\":" + Out::num(period_ps));
    o.raw(",\"first_cycle\":" + Out::num(any_ ? first_ : 0) + ",\"last_cycle\":" + Out::num(any_ ? last_ : 0) +
          ",\"total_cycles\":" + Out::num(total));
    o.raw(",\"te_utilization\":{\"jobs\":" + Out::num(counts_[P_TE]) + ",\"busy_cycles\":" + Out::num(te_busy) +
          ",\"utilization\":" + Out::ratio(frac(te_busy)) + "}");
    o.raw(",\"ve_utilization\":{\"jobs\":" + Out::num(counts_[P_VE]) + ",\"busy_cycles\":" + Out::num(ve_busy) +
          ",\"utilization\":" + Out::ratio(frac(ve_busy)) + "}");
    if (has_sizes) {
      // bytes: every direction; by_direction: each apart (reads are not writes).
      o.raw(",\"dma_bandwidth\":{\"transfers\":" + Out::num(dma_transfers_) + ",\"bytes\":" + Out::num(dma_bytes_) +
            ",\"bytes_per_cycle\":" + Out::ratio(bpc) + ",\"gb_per_s\":" + Out::ratio(gbps) + ",\"by_direction\":[");
      bool first = true;
      for (const auto &[dir, d] : dma_dir_) {
        o.raw(std::string(first ? "" : ",") + "{\"direction\":" + Out::q(dir) + ",\"transfers\":" +
              Out::num(d.transfers) + ",\"bytes\":" + Out::num(d.bytes) + "}");
        first = false;
      }
      o.raw("]}");
    } else
      o.raw(",\"dma_bandwidth\":{\"unavailable\":" + Out::q(na_sizes) + "}");
    if (has_units) {
      o.raw(",\"dram_channels\":[");
      bool first = true;
      for (const auto &[ch, busy] : dram_) {
        const uint64_t b = busy.total();
        o.raw(std::string(first ? "" : ",") + "{\"channel\":" +
              (ch == kNoUnit ? std::string("null") : Out::num(ch)) + ",\"transfers\":" + Out::num(busy.count()) +
              ",\"busy_cycles\":" + Out::num(b) + ",\"utilization\":" + Out::ratio(frac(b)) + "}");
        first = false;
      }
      o.raw("]");
    } else {
      o.raw(",\"dram_channels\":{\"unavailable\":" + Out::q(na_units) + "}");
    }
    o.raw(",\"sram\":{\"accesses\":" + Out::num(sram_access_) + ",\"conflicts\":" + Out::num(sram_conflict_) +
          ",\"conflict_rate\":" +
          (sram_access_ ? Out::ratio(static_cast<double>(sram_conflict_) / static_cast<double>(sram_access_))
                        : std::string("null")) +
          "}");
    o.raw(",\"phases\":[");
    bool first = true;
    for (const auto &[name, p] : phases_) {
      o.raw(std::string(first ? "" : ",") + "{\"phase\":" + Out::q(name) + ",\"commands\":" + Out::num(p.n) +
            ",\"total_cycles\":" + Out::num(p.total) + ",\"mean_cycles\":" +
            Out::ratio(static_cast<double>(p.total) / static_cast<double>(p.n)) + ",\"min_cycles\":" +
            Out::num(p.min) + ",\"max_cycles\":" + Out::num(p.max) + "}");
      first = false;
    }
    o.raw("]");
    if (has_layers) {
      o.raw(",\"layers\":[");
      first = true;
      for (const auto &[id, l] : layers_) {
        const uint64_t sum = l.te + l.ve + l.dma;
        auto share = [&](uint64_t x) { return Out::ratio(sum ? static_cast<double>(x) / static_cast<double>(sum) : 0.0); };
        o.raw(std::string(first ? "" : ",") + "{\"layer_id\":" + Out::num(id) + ",\"commands\":" + Out::num(l.cmds) +
              ",\"latency_cycles\":" + Out::num(l.cmds ? l.last - l.first : 0) + ",\"te_cycles\":" +
              Out::num(l.te) + ",\"ve_cycles\":" + Out::num(l.ve) + ",\"dma_cycles\":" + Out::num(l.dma) +
              ",\"te_share\":" + share(l.te) + ",\"ve_share\":" + share(l.ve) + ",\"dma_share\":" + share(l.dma) +
              "}");
        first = false;
      }
      o.raw("]");
    } else {
      o.raw(",\"layers\":{\"unavailable\":" + Out::q(na_layers) + "}");
    }
    o.raw("}\n");
    return o.s;
  }
  char b[512];
  auto line = [&](const char *fmt, auto... a) {
    std::snprintf(b, sizeof b, fmt, a...);
    o.s += b;
  };
  // Every ratio over time is over the same base, said once and in each line:
  // the T cycles from the first to the last event.
  line("npu report (%s), period %" PRIu64 " ps\n", format.c_str(), period_ps);
  if (window_)
    line("cycles           %" PRIu64 " .. %" PRIu64 " (%" PRIu64 " cycles of the range asked for: T below)\n", first_,
         last_, total);
  else
    line("cycles           %" PRIu64 " .. %" PRIu64 " (%" PRIu64 " cycles from the first to the last event: T below)\n",
         any_ ? first_ : 0, any_ ? last_ : 0, total);
  line("TE utilization   %.6f  (%" PRIu64 " of the %" PRIu64 " cycles T with at least one TE job running; %" PRIu64
       " jobs)\n", frac(te_busy), te_busy, total, counts_[P_TE]);
  line("VE utilization   %.6f  (%" PRIu64 " of the %" PRIu64 " cycles T with at least one VE job running; %" PRIu64
       " jobs)\n", frac(ve_busy), ve_busy, total, counts_[P_VE]);
  if (has_sizes) {
    line("DMA bandwidth    %.6f B/cycle, %.6f GB/s  (%" PRIu64 " bytes in all directions over the %" PRIu64
         " cycles T, %" PRIu64 " transfers)\n", bpc, gbps, dma_bytes_, total, dma_transfers_);
    for (const auto &[dir, d] : dma_dir_)
      line("  direction %-16s %" PRIu64 " bytes, %" PRIu64 " transfers\n", dir.c_str(), d.bytes, d.transfers);
  } else
    line("DMA bandwidth    unavailable: %s\n", na_sizes);
  if (has_units) {
    for (const auto &[ch, busy] : dram_) {
      const uint64_t bz = busy.total();
      if (ch == kNoUnit) line("DRAM channel  -  %.6f  (%" PRIu64 " of the %" PRIu64 " cycles T busy)\n", frac(bz), bz, total);
      else line("DRAM channel %2u  %.6f  (%" PRIu64 " of the %" PRIu64 " cycles T busy)\n", ch, frac(bz), bz, total);
    }
  } else {
    line("DRAM channels    unavailable: %s\n", na_units);
  }
  if (sram_access_)
    line("SRAM conflicts   %.6f  (%" PRIu64 " / %" PRIu64 " accesses)\n",
         static_cast<double>(sram_conflict_) / static_cast<double>(sram_access_), sram_conflict_, sram_access_);
  else
    line("SRAM conflicts   n/a  (%" PRIu64 " conflicts, no accesses)\n", sram_conflict_);
  for (const auto &[name, p] : phases_)
    line("phase %-16s %" PRIu64 " commands, CMD_START to CMD_END mean %.1f, min %" PRIu64 ", max %" PRIu64 " cycles\n", name.c_str(), p.n,
         static_cast<double>(p.total) / static_cast<double>(p.n), p.min, p.max);
  if (has_layers) {
    for (const auto &[id, l] : layers_) {
      const double sum = static_cast<double>(l.te + l.ve + l.dma);
      line("layer %-4u latency %" PRIu64 " cycles (first CMD_START to last CMD_END); of its TE+VE+DMA busy cycles: TE %.1f%%  VE %.1f%%  DMA %.1f%%\n", id,
           l.cmds ? l.last - l.first : 0, sum ? 100.0 * static_cast<double>(l.te) / sum : 0.0,
           sum ? 100.0 * static_cast<double>(l.ve) / sum : 0.0, sum ? 100.0 * static_cast<double>(l.dma) / sum : 0.0);
    }
  } else {
    line("layers           unavailable: %s\n", na_layers);
  }
  return o.s;
}

}  // namespace uscope::convert
