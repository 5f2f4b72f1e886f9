#include "convert/pairing.hpp"

#include <algorithm>
#include <vector>

namespace uscope::convert {

const char *const kPairNames[kNumPairKinds] = {"CMD", "JOB", "TE", "VE", "DMA", "DRAM_TX", "NOC_TX"};
const uint8_t kPairStart[kNumPairKinds] = {E_CMD_START,  E_JOB_ISSUE,   E_TE_START,  E_VE_START,
                                           E_DMA_START,  E_DRAM_TX_START, E_NOC_TX_START};
const uint8_t kPairEnd[kNumPairKinds] = {E_CMD_END, E_JOB_DONE,     E_TE_END,   E_VE_END,
                                         E_DMA_END, E_DRAM_TX_END, E_NOC_TX_END};

uint32_t core_of(const Ev &e) {
  uint64_t v;
  if (e.value(K_core_id, &v)) return static_cast<uint32_t>(v);
  if (e.value(K_npu_id, &v)) return static_cast<uint32_t>(v);
  return 0;
}

namespace {
// The pairing key of an event of kind k: its id (absent and null included,
// as their own values) and, for transfers, its channel or link.
uint64_t raw(const Ev &e, Key k) { return e.has(k) ? e.v[k] : ~uint64_t{0}; }

int kind_of(uint8_t type, bool *is_start) {
  for (int k = 0; k < kNumPairKinds; ++k) {
    if (kPairStart[k] == type) { *is_start = true; return k; }
    if (kPairEnd[k] == type) { *is_start = false; return k; }
  }
  return -1;
}
}  // namespace

void Pairer::add(const Ev &e) {
  ++seq_;
  last_t_ = e.t_cycle;
  uint64_t x;
  if (e.type == E_CMD_ENQUEUE) {
    CmdInfo ci{kNoLayer, kNoLabel};
    if (e.value(K_layer_id, &x)) ci.layer = static_cast<uint32_t>(x);
    if (e.value(K_phase, &x)) ci.phase = x;
    cmds_[raw(e, K_cmd_id)] = ci;
    sink_.instant(e.type, e.t_cycle, core_of(e));
    return;
  }
  bool is_start = false;
  const int kind = kind_of(e.type, &is_start);
  if (kind < 0) {
    sink_.instant(e.type, e.t_cycle, core_of(e));
    return;
  }
  K key{static_cast<uint64_t>(kind) << 32, 0};
  uint32_t unit = kNoUnit;
  switch (kind) {
    case P_CMD: key.b = raw(e, K_cmd_id); break;
    case P_JOB: case P_TE: case P_VE: key.b = raw(e, K_job_id); break;
    case P_DMA: case P_DRAM:
      key.b = raw(e, K_tx_id);
      key.a |= raw(e, K_channel) & 0xFFFFFFFFu;
      if (e.value(K_channel, &x)) unit = static_cast<uint32_t>(x);
      break;
    case P_NOC:
      key.b = raw(e, K_tx_id);
      key.a |= raw(e, K_link_id) & 0xFFFFFFFFu;
      if (e.value(K_link_id, &x)) unit = static_cast<uint32_t>(x);
      break;
  }
  if (is_start) {
    Pending p{e.t_cycle, kNoSize, kNoLabel, seq_, core_of(e), unit, kNoLayer, kNoLabel};
    if (e.value(K_size_bytes, &x)) p.size = x;
    if (e.value(K_phase, &x)) p.phase = x;
    if (e.value(K_layer_id, &x)) p.layer = static_cast<uint32_t>(x);
    switch (kind) {
      case P_CMD: {
        auto it = cmds_.find(raw(e, K_cmd_id));
        if (it != cmds_.end()) {
          if (p.layer == kNoLayer) p.layer = it->second.layer;
          p.label = it->second.phase;
        }
        if (p.label == kNoLabel && e.value(K_phase, &x)) p.label = x;
        break;
      }
      case P_JOB: if (e.value(K_job_type, &x)) p.label = x; break;
      case P_DMA: if (e.value(K_direction, &x)) p.label = x; break;
      default: break;
    }
    if (p.layer == kNoLayer && kind != P_CMD && e.value(K_cmd_id, &x)) {
      auto it = cmds_.find(x);
      if (it != cmds_.end()) p.layer = it->second.layer;
    }
    auto [it, fresh] = pending_.try_emplace(key, p);
    if (!fresh) {  // a second START of the same id: the first had no END
      sink_.instant(kPairStart[kind], it->second.t, it->second.core);
      it->second = p;
    }
    return;
  }
  auto it = pending_.find(key);
  if (it == pending_.end()) {  // an END without its START
    sink_.instant(e.type, e.t_cycle, core_of(e));
    if (kind == P_CMD) cmds_.erase(raw(e, K_cmd_id));
    return;
  }
  Pending p = it->second;
  pending_.erase(it);
  if (kind == P_CMD) {
    if (p.label == kNoLabel && e.value(K_phase, &x)) p.label = x;
    if (p.layer == kNoLayer && e.value(K_layer_id, &x)) p.layer = static_cast<uint32_t>(x);
    cmds_.erase(raw(e, K_cmd_id));
  }
  if (kind == P_JOB && p.label == kNoLabel && e.value(K_job_type, &x)) p.label = x;
  sink_.interval(
      Interval{static_cast<uint8_t>(kind), p.t, e.t_cycle, p.core, p.unit, p.layer, p.size, p.label, p.phase});
}

uint64_t Pairer::horizon(PairKind kind) const {
  uint64_t h = last_t_;
  for (const auto &[k, p] : pending_)
    if ((k.a >> 32) == kind && p.t < h) h = p.t;
  return h;
}

uint64_t Pairer::horizon() const {
  uint64_t h = last_t_;
  for (const auto &kp : pending_) h = std::min(h, kp.second.t);
  return h;
}

void Pairer::finish() {
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::pair<uint8_t, uint32_t>>> left;
  for (const auto &[k, p] : pending_)
    left.push_back({{p.t, p.seq}, {kPairStart[k.a >> 32], p.core}});
  std::sort(left.begin(), left.end());
  for (const auto &l : left) sink_.instant(l.second.first, l.first.first, l.second.second);
  pending_.clear();
}

}  // namespace uscope::convert
