// JSONL <-> µScope npu protocol (docs/npu-protocol.md §6, docs/convert.md).
#include "convert/uscope_side.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "base/error.hpp"
#include "base/guard.hpp"
#include "base/last_error.hpp"
#include "convert/pipeline.hpp"
#include "format/wire.hpp"
#include "protocol/npu.hpp"
#include "reader/scope_presence.hpp"
#include "reader/trace_reader.hpp"
#include "schema/schema_builder.hpp"
#include "writer/writer.hpp"

namespace uscope::convert {

namespace {
constexpr uint64_t kAbsentTuple = ~uint64_t{0};

uint16_t n16(const Ev &e, Key k) {
  if (!e.has(k)) return USCOPE_NPU_ABSENT16;
  return e.v[k] == kNull ? USCOPE_NPU_NULL16 : static_cast<uint16_t>(e.v[k]);
}
uint32_t n32(const Ev &e, Key k) {
  if (!e.has(k)) return USCOPE_NPU_ABSENT32;
  return e.v[k] == kNull ? USCOPE_NPU_NULL32 : static_cast<uint32_t>(e.v[k]);
}
uint64_t n64(const Ev &e, Key k) {
  if (!e.has(k)) return USCOPE_NPU_ABSENT64;
  return e.v[k] == kNull ? USCOPE_NPU_NULL64 : e.v[k];
}
uint64_t tx_key(uint64_t chan, uint64_t tx) { return (chan << 40) ^ tx; }

}  // namespace

UscopeOut::UscopeOut(const UnitCounts &u, const StringSource &strs) : u_(u), pool_(strs) {}

UscopeOut::~UscopeOut() {
  // Only an output abandoned on an error path gets here: its status adds nothing to the
  // error already reported.
  if (w_) (void)guard([&] { return w_->close(); });
}

Status UscopeOut::open(const char *path, const TraceMeta &meta, uint64_t period_ps, std::string *error) {
  if (period_ps == 0 || period_ps > 0xFFFFFFFFull) {
    *error = "period_ps " + std::to_string(period_ps) +
             ": expected 1 to 2^32-1 ps (a µScope clock period is 32-bit; --period-ps)";
    return USCOPE_ERR_INVALID_ARGUMENT;
  }
  period_ = period_ps;
  // The schema built, the npu protocol declared on it and the writer opened
  // through the core, as uscope_schema_*, uscope_npu_declare and
  // uscope_writer_open do (the same checks, the same messages).
  const Status st = guard([&] {
    SchemaBuilder b;
    const uint8_t clk = b.add_clock("npu_clk", static_cast<uint32_t>(period_));
    const uint16_t root = b.add_scope("/", USCOPE_NO_PARENT, nullptr, clk);
    uscope_npu_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.scope_name = "npu0";
    cfg.parent_scope_id = root;
    cfg.clock_id = USCOPE_CLOCK_INHERIT;
    // One spare queue slot and engine receive the ENDs whose START is not in
    // the file: clearing a slot that is never set changes nothing.
    cfg.queue_depth = static_cast<uint16_t>(u_.queue_depth + 1);
    cfg.num_contexts = u_.num_contexts;
    cfg.num_te = static_cast<uint16_t>(u_.num_te + 1);
    cfg.num_ve = static_cast<uint16_t>(u_.num_ve + 1);
    cfg.num_dma_channels = u_.num_dma;
    cfg.num_sram_banks = u_.num_banks;
    cfg.num_dram_channels = u_.num_dram;
    cfg.num_noc_links = u_.num_noc;
    cfg.sim_id = meta.has_sim_id ? meta.sim_id.c_str() : nullptr;
    cfg.trace_version = meta.has_version ? meta.version.c_str() : nullptr;
    cfg.sim_version = meta.has_sim_version ? meta.sim_version.c_str() : nullptr;
    cfg.sim_config_json = meta.has_sim_config ? meta.sim_config.c_str() : nullptr;
    // The tensor engine's shape: pccx's mac_dims, else the input's own.
    if (meta.pccx.has_mac_dims && meta.pccx.mac_rows && meta.pccx.mac_cols) {
      cfg.te_rows = meta.pccx.mac_rows;
      cfg.te_cols = meta.pccx.mac_cols;
    } else if (meta.te_rows && meta.te_cols) {
      cfg.te_rows = meta.te_rows;
      cfg.te_cols = meta.te_cols;
    }
    try {
      proto::Declaration d(b);
      npu_ = proto::declare_npu(d, cfg);
      d.commit();
    } catch (const Error &e) { throw Error(e.code(), std::string("uscope_npu_declare: ") + e.what()); }
    // Facts of the JSONL file that the protocol has no place for, so that
    // µScope -> JSONL writes the same lines (docs/convert.md).
    if (meta.has_t_ns) b.add_dut_property("npu.jsonl.t_ns", "1");
    if (meta.has_meta_line) b.add_dut_property("npu.jsonl.trace_meta", "1");
    // TRACE_META extensions (docs/convert.md): the period itself is the
    // clock's; the flag keeps an explicit "period_ps": 1000.
    if (meta.has_period) b.add_dut_property("npu.jsonl.period_ps", "1");
    if (meta.pccx.has) {
      std::string j;
      format_pccx_meta(meta.pccx, j);
      b.add_dut_property("npu.jsonl.pccx", j.c_str());
    }
    ids_ = npu_->ids;
    uscope_writer_options_t o{};
    o.struct_size = sizeof o;
    o.durability = USCOPE_DURABILITY_NONE;  // a batch conversion: fewest syscalls
    o.queue_bytes = u_.queue_bytes;
    // The schema's DUT properties (the protocol's, then ours), in call order.
    std::vector<uscope_dut_property_t> props;
    for (const auto &d : b.dut_properties()) props.push_back({d.key.c_str(), d.value.c_str()});
    w_ = std::make_unique<Writer>(nullptr, path, b.schema(), props.empty() ? nullptr : props.data(),
                                  static_cast<uint32_t>(props.size()), &o);
    return USCOPE_OK;
  });
  if (st) {
    *error = about_file(path, thread_error());
    return st;
  }
  ctxs_.resize(u_.num_contexts);
  for (uint16_t i = u_.num_te; i-- > 0;) te_free_.push_back(i);
  for (uint16_t i = u_.num_ve; i-- > 0;) ve_free_.push_back(i);
  for (uint16_t i = u_.queue_depth; i-- > 0;) q_free_.push_back(i);
  return 0;
}

Status UscopeOut::cycle(uint64_t t, std::string *reason) {
  if (in_cycle_ && t == cur_) return 0;
  if (period_ && t > ~uint64_t{0} / period_) {
    *reason = "t_cycle " + std::to_string(t) + " x period_ps overflows 64-bit picoseconds";
    return 1;
  }
  if (in_cycle_) {
    if (Status s = w_->end_cycle()) return s;
  }
  in_cycle_ = false;
  if (Status s = w_->begin_cycle(t * period_)) return s;
  in_cycle_ = true;
  cur_ = t;
  return 0;
}

Status UscopeOut::context_of(const Ev &e, uint16_t *ctx, std::string *reason) {
  // The meta / LLM keys of the line that are not own fields of its type
  // (npu-protocol.md §2.3); absent ones are part of the tuple too.
  const uint64_t m = e.mask & kMetaMask & ~kEvTypes[e.type].own_mask;
  if (!m) {
    *ctx = USCOPE_NPU_NO_CONTEXT;
    return 0;
  }
  Tuple t;
  for (int k = 0; k < kNumMetaKeys; ++k) t[k] = (m >> k) & 1 ? e.v[k] : kAbsentTuple;
  ++tick_;
  auto it = ctx_of_.find(t);
  if (it != ctx_of_.end()) {
    Ctx &c = ctxs_[it->second];
    c.last_cycle = cur_;
    c.tick = tick_;
    *ctx = it->second;
    return 0;
  }
  // A new context: a free slot, else the least recently used one not used in
  // this cycle (a context must not change in a cycle after an event used it).
  int best = -1;
  for (size_t i = 0; i < ctxs_.size(); ++i) {
    const Ctx &c = ctxs_[i];
    if (!c.used) { best = static_cast<int>(i); break; }
    if (c.last_cycle == cur_) continue;
    if (best < 0 || c.tick < ctxs_[best].tick) best = static_cast<int>(i);
  }
  if (best < 0) {
    *reason = "more than " + std::to_string(ctxs_.size()) + " distinct meta/LLM contexts in one cycle (--contexts)";
    return 1;
  }
  // Strings: NULL is absent; JSON null and "" are set afterwards (the calls
  // read "" as absent).
  const char *strs[3] = {nullptr, nullptr, nullptr};
  const Key sk[3] = {K_phase, K_model_name, K_precision};
  const uint16_t sf[3] = {8, 10, 11};
  bool fix = false;
  for (int i = 0; i < 3; ++i) {
    if (t[sk[i]] == kAbsentTuple) continue;
    if (t[sk[i]] == kNull || pool_.str(t[sk[i]]).empty()) fix = true;
    else strs[i] = pool_.c_str(t[sk[i]]);
  }
  auto w16 = [&](Key k) -> uint16_t {
    return t[k] == kAbsentTuple ? USCOPE_NPU_ABSENT16 : t[k] == kNull ? USCOPE_NPU_NULL16 : static_cast<uint16_t>(t[k]);
  };
  auto w32 = [&](Key k) -> uint32_t {
    return t[k] == kAbsentTuple ? USCOPE_NPU_ABSENT32 : t[k] == kNull ? USCOPE_NPU_NULL32 : static_cast<uint32_t>(t[k]);
  };
  const uint16_t slot = static_cast<uint16_t>(best);
  Status s = npu_->context(*w_, slot, w16(K_core_id), w16(K_npu_id), w32(K_tenant_id), w32(K_layer_id),
                                w32(K_block_id), w32(K_head_id), w32(K_token_idx), w32(K_seq_len), strs[0]);
  if (!s && (t[K_thread_id] != kAbsentTuple || t[K_model_name] != kAbsentTuple || t[K_precision] != kAbsentTuple))
    s = npu_->context_ext(*w_, slot, w32(K_thread_id), strs[1], strs[2]);
  for (int i = 0; fix && !s && i < 3; ++i) {
    const uint64_t v = t[sk[i]];
    if (v == kAbsentTuple || (v != kNull && !pool_.str(v).empty())) continue;
    uint64_t ref = USCOPE_NPU_STR_NULL;
    if (v != kNull) {
      if (!have_empty_) {
        s = guard([&] { return w_->string_insert("", &empty_str_); });
        have_empty_ = true;
      }
      ref = empty_str_;
    }
    if (!s) s = w_->slot_set(ids_.contexts, slot, sf[i], ref);
  }
  if (s) return s;
  Ctx &c = ctxs_[slot];
  if (c.used) ctx_of_.erase(c.tuple);
  c.used = true;
  c.tuple = t;
  c.last_cycle = cur_;
  c.tick = tick_;
  ctx_of_.emplace(t, slot);
  *ctx = slot;
  return 0;
}

Status UscopeOut::add(const Ev &e, std::string *reason) {
  // Values the per-cycle calls cannot record (npu-protocol.md §2.4).
  const EvTypeInfo &ti = kEvTypes[e.type];
  for (int i = 0; i < ti.num_fields; ++i) {
    const Key k = ti.fields[i];
    if (!e.has(k)) {
      if (kKeys[k].kind == Kind::SourceEnum || kKeys[k].kind == Kind::AccessEnum) {
        *reason = std::string("missing field \"") + kKeys[k].name + "\" (an enum of the npu protocol: always present)";
        return 1;
      }
      continue;
    }
    const Kind kind = kKeys[k].kind;
    if (e.v[k] == kNull && (kind == Kind::Str || kind == Kind::StrArray || kind == Kind::SourceEnum ||
                            kind == Kind::AccessEnum)) {
      *reason = std::string("\"") + kKeys[k].name + "\": null is not representable by the npu protocol";
      return 1;
    }
    if ((kind == Kind::Str || kind == Kind::StrArray) && pool_.str(e.v[k]).empty()) {
      *reason = std::string("\"") + kKeys[k].name + "\": an empty string (or array) is not representable by the npu protocol";
      return 1;
    }
  }
  // Numbers past their field's width (the JSONL ingest checks its own lines;
  // a .pccx core id is 32-bit, a µScope core_id 16-bit): the width's top two
  // values are the absent and null sentinels (npu-protocol.md §2.4).
  for (uint64_t m = e.mask; m; m &= m - 1) {
    const Key k = static_cast<Key>(__builtin_ctzll(m));
    const Kind kind = kKeys[k].kind;
    const uint64_t top = kind == Kind::U16 ? 0xFFFF : kind == Kind::U32 ? 0xFFFFFFFF : 0;
    if (top && e.v[k] != kNull && e.v[k] >= top - 1) {
      *reason = std::string("\"") + kKeys[k].name + "\" " + std::to_string(e.v[k]) + " does not fit the npu protocol's " +
                (kind == Kind::U16 ? "16" : "32") + "-bit field (at most " + std::to_string(top - 2) + ")";
      return 1;
    }
  }
  // A transfer names its channel or link: the storage slot it occupies.
  const bool chan = e.type == E_DMA_START || e.type == E_DMA_END || e.type == E_DRAM_TX_START ||
                    e.type == E_DRAM_TX_END;
  if ((chan && !e.has(K_channel)) || ((e.type == E_NOC_TX_START || e.type == E_NOC_TX_END) && !e.has(K_link_id))) {
    *reason = std::string("missing field \"") + (chan ? "channel" : "link_id") + "\" (the npu protocol keeps a " +
              (chan ? "transfer in its channel's slot" : "NoC transfer in its link's slot") + ")";
    return 1;
  }
  Status s = cycle(e.t_cycle, reason);
  if (s) return s;
  uint16_t ctx = 0;
  if ((s = context_of(e, &ctx, reason))) return s;
  auto str = [&](Key k) -> const char * { return e.has(k) ? pool_.c_str(e.v[k]) : nullptr; };
  auto u8b = [&](Key k) -> uint8_t {
    return !e.has(k) ? USCOPE_NPU_ABSENT8 : e.v[k] == kNull ? USCOPE_NPU_NULL8 : static_cast<uint8_t>(e.v[k]);
  };
  auto take = [&](std::unordered_multimap<uint64_t, uint16_t> &m, uint64_t key, uint16_t spare, bool *found) {
    auto it = m.find(key);
    *found = it != m.end();
    if (!*found) return spare;
    const uint16_t v = it->second;
    m.erase(it);
    return v;
  };
  auto size_of = [&](std::unordered_map<uint64_t, uint64_t> &m, uint64_t key) {
    auto it = m.find(key);
    if (it == m.end()) return uint64_t{USCOPE_NPU_ABSENT64};
    const uint64_t v = it->second;
    m.erase(it);
    return v;
  };
  const uint64_t job = e.has(K_job_id) ? e.v[K_job_id] : ~uint64_t{0};
  const uint64_t cmd = e.has(K_cmd_id) ? e.v[K_cmd_id] : ~uint64_t{0};
  bool found = false;
  Writer &w = *w_;
  switch (e.type) {
    case E_CMD_ENQUEUE: {
      if (q_free_.empty()) {
        *reason = "more than " + std::to_string(u_.queue_depth) + " commands in flight (--queue-depth)";
        return 1;
      }
      const uint16_t slot = q_free_.back();
      s = npu_->cmd_enqueue(w, slot, ctx, n32(e, K_cmd_id), str(K_cmd_type),
                                 static_cast<uint8_t>(e.v[K_source]), n32(e, K_token), n64(e, K_desc_addr),
                                 n32(e, K_layer_id), n32(e, K_block_id), str(K_phase));
      if (!s && cmd == ~uint64_t{0}) {
        // No cmd_id (a CMD_ENQUEUE from a .pccx file, which keeps none): no
        // CMD_END can ever clear its slot, so it holds none past its cycle.
        s = w.slot_clear(ids_.cmd_queue, slot);
      } else if (!s) {
        q_free_.pop_back();
        q_of_.emplace(cmd, slot);
      }
      break;
    }
    case E_CMD_START: {
      auto it = q_of_.find(cmd);
      s = npu_->cmd_start(w, it == q_of_.end() ? u_.queue_depth : it->second, ctx, n32(e, K_cmd_id));
      break;
    }
    case E_CMD_END: {
      auto it = q_of_.find(cmd);
      const uint16_t slot = it == q_of_.end() ? u_.queue_depth : it->second;
      s = npu_->cmd_end(w, slot, ctx, n32(e, K_cmd_id), str(K_status));
      if (!s && it != q_of_.end()) {
        q_of_.erase(it);
        q_free_.push_back(slot);
      }
      break;
    }
    case E_JOB_ISSUE:
      s = npu_->job_issue(w, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_job_type), n32(e, K_tile_id),
                               n32(e, K_vec_chunk_id));
      break;
    case E_JOB_DONE:
      s = npu_->job_done(w, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_job_type),
                              n32(e, K_latency_cycles));
      break;
    case E_DMA_START:
      s = npu_->dma_start(w, ctx, n32(e, K_tx_id), n16(e, K_channel), str(K_direction),
                               n64(e, K_src_addr), n64(e, K_dst_addr), n64(e, K_size_bytes), n32(e, K_cmd_id),
                               n32(e, K_job_id));
      if (!s) dma_size_[tx_key(n16(e, K_channel), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_DMA_END: {
      const uint64_t key = tx_key(n16(e, K_channel), n32(e, K_tx_id));
      auto it = dma_size_.find(key);
      s = npu_->dma_end(w, ctx, n32(e, K_tx_id), n16(e, K_channel), n32(e, K_cmd_id), n32(e, K_job_id),
                             it == dma_size_.end() ? USCOPE_NPU_ABSENT64 : it->second);
      if (!s && it != dma_size_.end()) dma_size_.erase(it);
      break;
    }
    case E_TE_START: case E_VE_START: {
      const bool te = e.type == E_TE_START;
      auto &fl = te ? te_free_ : ve_free_;
      if (fl.empty()) {
        *reason = std::string("all ") + std::to_string(te ? u_.num_te : u_.num_ve) + (te ? " TE" : " VE") +
                  " engines are busy (" + (te ? "--num-te" : "--num-ve") + ")";
        return 1;
      }
      const uint16_t eng = fl.back();
      if (te)
        s = npu_->te_start(w, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n32(e, K_m), n32(e, K_n),
                                n32(e, K_k), n32(e, K_tile_m), n32(e, K_tile_n), n32(e, K_tile_k));
      else
        s = npu_->ve_start(w, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_op_type), n32(e, K_len),
                                n32(e, K_batch));
      if (!s) {
        fl.pop_back();
        (te ? te_of_ : ve_of_).emplace(job, eng);
      }
      break;
    }
    case E_TE_END: case E_VE_END: {
      const bool te = e.type == E_TE_END;
      const uint16_t eng = take(te ? te_of_ : ve_of_, job, te ? u_.num_te : u_.num_ve, &found);
      if (te)
        s = npu_->te_end(w, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n64(e, K_mac_count),
                              n32(e, K_latency_cycles));
      else
        s = npu_->ve_end(w, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n32(e, K_latency_cycles));
      if (found) {
        if (s) (te ? te_of_ : ve_of_).emplace(job, eng);
        else (te ? te_free_ : ve_free_).push_back(eng);
      }
      break;
    }
    case E_SRAM_ACCESS:
      s = npu_->sram_access(w, ctx, n64(e, K_addr), n16(e, K_bank_id),
                                 static_cast<uint8_t>(e.v[K_access_type]), str(K_by), u8b(K_conflict),
                                 n32(e, K_cmd_id), n32(e, K_job_id));
      break;
    case E_SRAM_CONFLICT:
      s = npu_->sram_conflict(w, ctx, n16(e, K_bank_id), n32(e, K_num_requests), n32(e, K_allowed),
                                   str(K_stalled_clients), n32(e, K_cmd_id));
      break;
    case E_DRAM_TX_START:
      s = npu_->dram_tx_start(w, ctx, n32(e, K_tx_id), n16(e, K_channel), n64(e, K_size_bytes),
                                   n32(e, K_cmd_id));
      if (!s) dram_size_[tx_key(n16(e, K_channel), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_DRAM_TX_END: {
      const uint64_t key = tx_key(n16(e, K_channel), n32(e, K_tx_id));
      s = npu_->dram_tx_end(w, ctx, n32(e, K_tx_id), n16(e, K_channel), size_of(dram_size_, key));
      break;
    }
    case E_NOC_TX_START:
      s = npu_->noc_tx_start(w, ctx, n32(e, K_tx_id), n16(e, K_link_id), n64(e, K_size_bytes),
                                  n32(e, K_cmd_id));
      if (!s) noc_size_[tx_key(n16(e, K_link_id), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_NOC_TX_END: {
      const uint64_t key = tx_key(n16(e, K_link_id), n32(e, K_tx_id));
      s = npu_->noc_tx_end(w, ctx, n32(e, K_tx_id), n16(e, K_link_id), size_of(noc_size_, key));
      break;
    }
    case E_IRQ_EMIT:
      s = npu_->irq_emit(w, ctx, n32(e, K_cmd_id), n32(e, K_token), n32(e, K_irq_line));
      break;
    case E_TOKEN_COMPLETE:
      s = npu_->token_complete(w, ctx, n32(e, K_token), n32(e, K_cmd_id), str(K_status));
      break;
    case E_ERROR:
    case E_WARN:
      s = e.type == E_ERROR ? npu_->diagnostic(w, "uscope_npu_error", USCOPE_NPU_EV_ERROR, ctx, str(K_component),
                                              str(K_code), str(K_msg), n32(e, K_cmd_id), n32(e, K_job_id))
                         : npu_->diagnostic(w, "uscope_npu_warn", USCOPE_NPU_EV_WARN, ctx, str(K_component),
                                              str(K_code), str(K_msg), n32(e, K_cmd_id), n32(e, K_job_id));
      break;
    default: break;
  }
  if (s == USCOPE_ERR_UNKNOWN_SLOT || s == USCOPE_ERR_VALUE_RANGE || s == USCOPE_ERR_INVALID_ARGUMENT) {
    // Argument errors are not sticky: the event is not recorded and the
    // writer goes on; the line is reported.
    *reason = std::string(thread_error()) +
              (s == USCOPE_ERR_UNKNOWN_SLOT ? " (raise --dma-channels / --dram-channels / --noc-links / --sram-banks)" : "");
    return 1;
  }
  if (s) return s;
  ++events_;
  return 0;
}

Status UscopeOut::close(std::string *error) {
  Status s = 0;
  if (in_cycle_) s = w_->end_cycle();
  in_cycle_ = false;
  const Status c = guard([&] { return w_->close(); });
  w_.reset();
  if (!s) s = c;
  if (s) *error = std::string("writing the .uscope file: ") + thread_error();
  return s;
}

// ── UscopeIn: through the reader core (src/reader/trace_reader.hpp) ──

UscopeIn::UscopeIn(const Options &o) : strict_(o.o.strict != 0), issues_(issues_of(o)) {}
UscopeIn::UscopeIn(TraceReader &r, const Options &o)
    : strict_(r.strict()), issues_(issues_of(o)), path_("the trace"), r_(&r) {}
UscopeIn::~UscopeIn() = default;

std::string_view UscopeIn::str(uint64_t id) const {
  const auto &strings = r_->strings();
  const uint32_t i = static_cast<uint32_t>(id);
  return i < strings.size() ? std::string_view(strings[i]) : std::string_view();
}

const char *UscopeIn::c_str(uint64_t id) const {
  const auto &strings = r_->strings();
  const uint32_t i = static_cast<uint32_t>(id);
  return i < strings.size() ? strings[i].c_str() : "";
}

uint64_t UscopeIn::input_size() const {
  struct stat st {};
  return ::stat(path_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

bool UscopeIn::units(UnitCounts *u) const {
  const Schema &sc = r_->schema();
  for (const StorageDef &sd : sc.storages) {
    if (sd.scope_id != scope_) continue;
    const std::string_view n = sc.name(sd.name);
    const uint16_t slots = sd.num_slots;
    // UscopeOut adds one spare queue slot and TE/VE engine (uscope_side.cpp
    // open): a file it wrote declares one more than its options.
    auto less_spare = [&](uint16_t x) { return static_cast<uint16_t>(x > 1 ? x - 1 : x); };
    if (n == "cmd_queue") u->queue_depth = less_spare(slots);
    else if (n == "contexts") u->num_contexts = slots;
    else if (n == "te") u->num_te = less_spare(slots);
    else if (n == "ve") u->num_ve = less_spare(slots);
    else if (n == "dma") u->num_dma = slots;
    else if (n == "dram") u->num_dram = slots;
    else if (n == "noc") u->num_noc = slots;
    else if (n == "sram_banks") u->num_banks = slots;
  }
  return true;
}

void UscopeIn::notes(std::vector<std::string> *out) const {
  const std::vector<DefectEntry> entries = r_->defects().entries();
  for (size_t i = 0; i < entries.size() && i < USCOPE_DEFECT_KIND_COUNT; ++i) {
    const DefectEntry &d = entries[i];
    const DefectKindInfo &k = defect_info(d.kind);
    out->push_back("trace defect " + std::string(k.name) + " x" + std::to_string(d.count) + ": " + k.what +
                   " (first in segment " + std::to_string(d.first.segment) + " at " +
                   std::to_string(d.first.time_ps) + " ps)");
  }
  // Only the first npu scope is converted (docs/conversions.md): say what else the file holds.
  const Schema &sc = r_->schema();
  std::string others;
  uint32_t n = 0;
  for (uint32_t i = 0; i < sc.scopes.size(); ++i) {
    const ScopeDef &si = sc.scopes[i];
    if (i == scope_ || si.protocol == wire::kNoString) continue;
    others += (n++ ? ", " : "") + std::string(sc.name(si.name)) + " (" + sc.name(si.protocol) + ")";
  }
  if (n && note_others_)
    out->push_back("not converted: " + count_of(n, "other protocol scope") + " besides the npu scope " +
                   sc.name(sc.scopes[scope_].name) + ": " + others + " (only the first npu scope converts)");
}

Status UscopeIn::open(const char *path, std::string *error) {
  path_ = path;
  if (!r_) {
    // The reader throws; guard() gives its status and message, as the C API would.
    Status s = guard([&] {
      own_ = std::make_unique<TraceReader>(path, strict_ ? TraceReader::kStrict : 0);
      return USCOPE_OK;
    });
    if (s) {
      *error = about_file(path, thread_error());
      return s;
    }
    r_ = own_.get();
  }
  return attach(error);
}

Status UscopeIn::attach(std::string *error) {
  const char *path = path_.c_str();
  const Schema &sc = r_->schema();
  bool found = false;
  for (uint32_t i = 0; i < sc.scopes.size() && !found; ++i) {
    const ScopeDef &si = sc.scopes[i];
    if (si.protocol == wire::kNoString || std::strcmp(sc.name(si.protocol), "npu") != 0) continue;
    scope_ = static_cast<uint16_t>(i);
    found = true;
    // The period of the scope's clock, inherited up the tree.
    uint16_t at = scope_;
    for (int d = 0; d < 65536 && at != USCOPE_NO_PARENT && at < sc.scopes.size(); ++d) {
      const ScopeDef &x = sc.scopes[at];
      if (x.clock_id != USCOPE_CLOCK_INHERIT) {
        if (x.clock_id < sc.clocks.size() && sc.clocks[x.clock_id].period_ps) period_ = sc.clocks[x.clock_id].period_ps;
        break;
      }
      at = x.parent_id;
    }
  }
  if (!found) {
    *error = std::string(path) + ": expected a scope with protocol \"npu\" (the converters read the npu protocol), found none among its " +
             std::to_string(sc.scopes.size()) + " scope(s)";
    return USCOPE_ERR_NOT_FOUND;
  }
  for (uint32_t i = 0; i < sc.storages.size(); ++i) {
    const StorageDef &si = sc.storages[i];
    if (si.scope_id != scope_ || std::strcmp(sc.name(si.name), "contexts") != 0) continue;
    contexts_ = static_cast<uint16_t>(i);
    for (uint16_t f = 0; f < si.fields.size() && f < kNumMetaKeys; ++f) {
      const char *name = sc.name(si.fields[f].name);
      if (key_by_name(name) != f) {
        *error = std::string(path) + ": the npu scope's contexts storage: expected field " + std::to_string(f) + " \"" +
                 kKeys[f].name + "\" of the npu protocol, found \"" + name + "\"";
        return USCOPE_ERR_SCHEMA;
      }
      ctx_sizes_.push_back(wire::field_type_size(si.fields[f].type));
      ctx_types_.push_back(si.fields[f].type);
    }
  }
  types_.resize(sc.events.size());
  for (uint32_t i = 0; i < sc.events.size(); ++i) {
    const EventDef &ti = sc.events[i];
    const char *tname = sc.name(ti.name);
    if (ti.scope_id != scope_) continue;
    const int ev = ev_type_by_lower(tname);
    if (ev < 0) continue;
    TypeMap &tm = types_[i];
    tm.ev = ev;
    const uint32_t payload_size = packed_size(ti.fields);
    uint32_t offset = 0;  // §8.6.5: fields packed in order, no padding
    for (const FieldDef &fd : ti.fields) {
      const char *fname = sc.name(fd.name);
      const uint32_t size = wire::field_type_size(fd.type);
      int key = key_by_name(fname);
      if (std::strcmp(fname, "ctx") == 0) key = -2;
      else if (key < 0 || !((kEvTypes[ev].own_mask >> key) & 1)) key = -1;
      if (offset + size > payload_size || size > 8) {
        *error = std::string(path) + ": event type " + tname + ", field " + fname + ": expected a field of at most 8 bytes inside the " +
                 std::to_string(payload_size) + "-byte payload, found offset " + std::to_string(offset) + " size " +
                 std::to_string(size);
        return USCOPE_ERR_CORRUPT;
      }
      tm.fields.push_back({key, fd.type, size, offset});
      offset += size;
    }
  }
  auto dut = [&](const char *k, std::string *out) {
    for (const DutProperty &p : r_->dut())
      if (std::strcmp(sc.name(p.key), k) == 0) {
        *out = sc.name(p.value);
        return true;
      }
    return false;
  };
  meta_.has_sim_id = dut("npu.sim_id", &meta_.sim_id);
  meta_.has_version = dut("npu.trace_version", &meta_.version);
  meta_.has_sim_version = dut("npu.sim_version", &meta_.sim_version);
  meta_.has_sim_config = dut("npu.sim_config", &meta_.sim_config);
  std::string flag;
  meta_.has_t_ns = dut("npu.jsonl.t_ns", &flag);
  meta_.has_meta_line = dut("npu.jsonl.trace_meta", &flag) || meta_.has_version || meta_.has_sim_version ||
                        meta_.has_sim_config;
  meta_.period_ps = period_;
  meta_.has_period = dut("npu.jsonl.period_ps", &flag) || period_ != 1000;
  std::string dims;
  if (dut((std::string(sc.name(sc.scopes[scope_].name)) + "/npu.te_dims").c_str(), &dims)) {
    unsigned rows = 0, cols = 0;
    char tail = 0;
    if (std::sscanf(dims.c_str(), "%ux%u%c", &rows, &cols, &tail) == 2 && rows && cols) {
      meta_.te_rows = rows;
      meta_.te_cols = cols;
    }
  }
  std::string pj;
  if (dut("npu.jsonl.pccx", &pj)) {
    std::string why;
    if (!parse_pccx_meta(pj, &meta_.pccx, &why)) {
      *error = std::string(path) + ": DUT property npu.jsonl.pccx: expected the pccx object of docs/convert.md, found " +
               pj.substr(0, 80) + " (" + why + ")";
      return USCOPE_ERR_CORRUPT;
    }
  }
  return 0;
}

namespace {
// A stored value widened to the Ev encoding: the width's absent sentinel is
// "absent" (returns false), its null sentinel kNull.
bool widen(uint64_t raw, uint32_t size, uint8_t type, uint64_t *out) {
  const uint64_t ones = size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (size * 8)) - 1;
  if (type == USCOPE_FT_ENUM) {
    *out = raw;
    return true;
  }
  if (raw == ones) return false;
  *out = raw == ones - 1 ? kNull : raw;
  return true;
}

// One segment's ops and events in stream order. A segment is collected whole
// before any of it is used: one that fails to decode part way gives nothing
// (the reader counts it as a defect), as events_in_range gives no events of it.
struct SegmentItems {
  struct Item {
    uint64_t time_ps, value;  // value: an op's; an event's payload offset in payloads
    uint16_t storage_or_type, slot, field;
    uint8_t action;
    bool is_event;
    uint32_t payload_size;
  };
  std::vector<Item> items;
  std::vector<uint8_t> payloads;
  // Only what run() reads is kept: the contexts storage's ops and the
  // events of the npu types (a trace's other scopes, a cpu pipeline's
  // millions of ops, are most of its items).
  uint16_t contexts = 0xFFFF;
  const std::vector<uint8_t> *wanted = nullptr;  // per event type id: 1 = an npu event
  void frame(uint64_t) {}
  void op(uint64_t t, const DeltaOp &o) {
    if (o.storage_id == contexts) items.push_back({t, o.value, o.storage_id, o.slot, o.field, o.action, false, 0});
  }
  void event(uint64_t t, uint16_t id, const uint8_t *p, uint32_t n) {
    if (id >= wanted->size() || !(*wanted)[id]) return;
    items.push_back({t, payloads.size(), id, 0, 0, 0, true, n});
    payloads.insert(payloads.end(), p, p + n);
  }
};
}  // namespace

Status UscopeIn::run(const Fn &fn, std::string *error) {
  // The contexts storage, replayed from its ops in stream order: exact at
  // every event (the checkpoints are not needed when every segment is read).
  std::vector<uint64_t> ctx;
  std::vector<uint8_t> ctx_valid;
  if (contexts_ != 0xFFFF) {
    const uint16_t slots = r_->schema().storages[contexts_].num_slots;
    ctx.assign(static_cast<size_t>(slots) * kNumMetaKeys, 0);
    ctx_valid.assign(slots, 0);
  }
  Ev e;
  SegmentItems seg_items;
  std::vector<uint8_t> wanted(types_.size());
  for (size_t k = 0; k < types_.size(); ++k) wanted[k] = types_[k].ev >= 0;
  seg_items.contexts = contexts_;
  seg_items.wanted = &wanted;
  const size_t num_segments = r_->segments().size();
  for (size_t seg = 0; seg < num_segments; ++seg) {
    if (r_->segments()[seg].header.time_start_ps > until_ps_) break;
    if (seen_ && !seen_->may_hold(seg, scope_)) continue;  // none of its items is the npu scope's
    seg_items.items.clear();
    seg_items.payloads.clear();
    const Status s = guard([&] {
      auto st = r_->initial_state();
      if (!r_->replay(seg, st, seg_items)) {
        seg_items.items.clear();
        seg_items.payloads.clear();
      }
      return USCOPE_OK;
    });
    if (s) {
      *error = std::string("segment ") + std::to_string(seg) + ": " + thread_error();
      return s;
    }
    for (const SegmentItems::Item &item : seg_items.items) {
      if (item.time_ps > until_ps_) break;
      if (!item.is_event) {
        if (item.storage_or_type != contexts_ || item.slot >= ctx_valid.size()) continue;
        uint64_t *row = &ctx[static_cast<size_t>(item.slot) * kNumMetaKeys];
        if (item.action == wire::DA_SLOT_SET) {
          if (!ctx_valid[item.slot]) std::memset(row, 0, kNumMetaKeys * sizeof(uint64_t));
          ctx_valid[item.slot] = 1;
          if (item.field < ctx_sizes_.size()) row[item.field] = item.value;
        } else if (item.action == wire::DA_SLOT_CLEAR) {
          ctx_valid[item.slot] = 0;
        } else if (item.action == wire::DA_SLOT_ADD && item.field < ctx_sizes_.size()) {
          row[item.field] += item.value;
        }
        continue;
      }
      if (item.storage_or_type >= types_.size() || types_[item.storage_or_type].ev < 0) continue;
      const TypeMap &tm = types_[item.storage_or_type];
      const uint8_t *payload = seg_items.payloads.data() + item.value;
      e.type = static_cast<uint8_t>(tm.ev);
      e.mask = 0;
      e.line = 0;
      e.has_t_ns = e.has_sim_id = 0;
      e.t_cycle = item.time_ps / period_;
      uint64_t c = USCOPE_NPU_NO_CONTEXT;
      for (const FieldMap &f : tm.fields) {
        if (f.offset + f.size > item.payload_size) continue;
        // Fixed-size loads: a memcpy of a variable size into the low bytes
        // of a u64 stalls on the store-forward of every field (it was most
        // of this loop's time).
        uint64_t raw = 0;
        const uint8_t *p = payload + f.offset;
        switch (f.size) {
          case 1: raw = *p; break;
          case 2: { uint16_t x; std::memcpy(&x, p, 2); raw = x; break; }
          case 4: { uint32_t x; std::memcpy(&x, p, 4); raw = x; break; }
          case 8: std::memcpy(&raw, p, 8); break;
          default: std::memcpy(&raw, p, f.size); break;
        }
        if (f.key == -2) c = raw;
        if (f.key < 0) continue;
        uint64_t v;
        if (widen(raw, f.size, f.type, &v)) e.set(static_cast<Key>(f.key), v);
      }
      if (c != USCOPE_NPU_NO_CONTEXT && c < ctx_valid.size() && ctx_valid[c]) {
        const uint64_t *row = &ctx[static_cast<size_t>(c) * kNumMetaKeys];
        for (int k = 0; k < static_cast<int>(ctx_sizes_.size()); ++k) {
          if (e.has(static_cast<Key>(k))) continue;  // the event's own field wins
          uint64_t v;
          if (widen(row[k], ctx_sizes_[k], ctx_types_[k], &v)) e.set(static_cast<Key>(k), v);
        }
      }
      ++stats_.events;
      std::string reason;
      const Status r = fn(e, &reason);
      if (r < 0) {
        *error = reason;
        return r;
      }
      if (r > 0 && issues_.report(stats_.events, "event " + std::to_string(stats_.events) + " (" +
                                                     kEvTypes[e.type].lower + " at cycle " +
                                                     std::to_string(e.t_cycle) + "): " + reason)) {
        *error = "event " + std::to_string(stats_.events) + ": " + reason + " (strict)";
        return USCOPE_ERR_CORRUPT;
      }
    }
  }
  return 0;
}

std::unique_ptr<EvSource> make_uscope_source(const Options &o) { return std::make_unique<UscopeIn>(o); }

std::unique_ptr<EvSink> make_uscope_sink(const UnitCounts &u, const StringSource &strs) {
  return std::make_unique<UscopeOut>(u, strs);
}

}  // namespace uscope::convert
