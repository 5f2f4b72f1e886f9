// JSONL <-> µScope npu protocol (docs/npu-protocol.md §6, docs/convert.md).
#include "convert/uscope_side.hpp"

#include <cstring>

#include "base/error.hpp"

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

// A look-up on an open reader fails only on a bug of ours; the converter's C entry catches it.
void must(uscope_status_t st) {
  if (st != USCOPE_OK) throw Error(st, uscope_last_error());
}
}  // namespace

UscopeOut::UscopeOut(const UnitCounts &u, uint64_t period_ps, const StringPool &pool)
    : u_(u), period_(period_ps), pool_(pool) {}

UscopeOut::~UscopeOut() {
  // Only an output abandoned on an error path gets here: its status adds nothing to the
  // error already reported.
  if (w_) (void)uscope_writer_close(w_);
  uscope_npu_free(npu_);
}

Status UscopeOut::open(const char *path, const TraceMeta &meta, std::string *error) {
  uscope_schema_t *s = nullptr;
  Status st = uscope_schema_new(&s);
  uint8_t clk = 0;
  if (!st) st = uscope_schema_add_clock(s, &clk, "npu_clk", static_cast<uint32_t>(period_));
  uint16_t root = 0;
  if (!st) st = uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, clk);
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
  if (!st) st = uscope_npu_declare(s, &npu_, &cfg);
  // Facts of the JSONL file that the protocol has no place for, so that
  // µScope -> JSONL writes the same lines (docs/convert.md).
  if (!st && meta.has_t_ns) st = uscope_schema_add_dut_property(s, "npu.jsonl.t_ns", "1");
  if (!st && meta.has_meta_line) st = uscope_schema_add_dut_property(s, "npu.jsonl.trace_meta", "1");
  // TRACE_META extensions (docs/convert.md): the period itself is the
  // clock's; the flag keeps an explicit "period_ps": 1000.
  if (!st && meta.has_period) st = uscope_schema_add_dut_property(s, "npu.jsonl.period_ps", "1");
  if (!st && meta.pccx.has) {
    std::string j;
    format_pccx_meta(meta.pccx, j);
    st = uscope_schema_add_dut_property(s, "npu.jsonl.pccx", j.c_str());
  }
  if (!st) {
    ids_.struct_size = sizeof ids_;
    st = uscope_npu_ids(npu_, &ids_);
  }
  uscope_writer_options_t o;
  uscope_writer_options_init(&o);
  o.durability = USCOPE_DURABILITY_NONE;  // a batch conversion: fewest syscalls
  o.queue_bytes = u_.queue_bytes;
  if (!st) st = uscope_writer_open(&w_, path, s, nullptr, 0, &o);
  if (st) *error = about_file(path, uscope_last_error());
  uscope_schema_free(s);
  if (st) return st;
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
    if (Status s = uscope_end_cycle(w_)) return s;
  }
  in_cycle_ = false;
  if (Status s = uscope_begin_cycle(w_, t * period_)) return s;
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
  Status s = uscope_npu_context(w_, npu_, slot, w16(K_core_id), w16(K_npu_id), w32(K_tenant_id), w32(K_layer_id),
                                w32(K_block_id), w32(K_head_id), w32(K_token_idx), w32(K_seq_len), strs[0]);
  if (!s && (t[K_thread_id] != kAbsentTuple || t[K_model_name] != kAbsentTuple || t[K_precision] != kAbsentTuple))
    s = uscope_npu_context_ext(w_, npu_, slot, w32(K_thread_id), strs[1], strs[2]);
  for (int i = 0; fix && !s && i < 3; ++i) {
    const uint64_t v = t[sk[i]];
    if (v == kAbsentTuple || (v != kNull && !pool_.str(v).empty())) continue;
    uint64_t ref = USCOPE_NPU_STR_NULL;
    if (v != kNull) {
      if (!have_empty_) {
        s = uscope_string_insert(w_, &empty_str_, "");
        have_empty_ = true;
      }
      ref = empty_str_;
    }
    if (!s) s = uscope_slot_set(w_, ids_.contexts, slot, sf[i], ref);
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
  uscope_writer_t *w = w_;
  switch (e.type) {
    case E_CMD_ENQUEUE: {
      if (q_free_.empty()) {
        *reason = "more than " + std::to_string(u_.queue_depth) + " commands in flight (--queue-depth)";
        return 1;
      }
      const uint16_t slot = q_free_.back();
      s = uscope_npu_cmd_enqueue(w, npu_, slot, ctx, n32(e, K_cmd_id), str(K_cmd_type),
                                 static_cast<uint8_t>(e.v[K_source]), n32(e, K_token), n64(e, K_desc_addr),
                                 n32(e, K_layer_id), n32(e, K_block_id), str(K_phase));
      if (!s) {
        q_free_.pop_back();
        q_of_.emplace(cmd, slot);
      }
      break;
    }
    case E_CMD_START: {
      auto it = q_of_.find(cmd);
      s = uscope_npu_cmd_start(w, npu_, it == q_of_.end() ? u_.queue_depth : it->second, ctx, n32(e, K_cmd_id));
      break;
    }
    case E_CMD_END: {
      auto it = q_of_.find(cmd);
      const uint16_t slot = it == q_of_.end() ? u_.queue_depth : it->second;
      s = uscope_npu_cmd_end(w, npu_, slot, ctx, n32(e, K_cmd_id), str(K_status));
      if (!s && it != q_of_.end()) {
        q_of_.erase(it);
        q_free_.push_back(slot);
      }
      break;
    }
    case E_JOB_ISSUE:
      s = uscope_npu_job_issue(w, npu_, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_job_type), n32(e, K_tile_id),
                               n32(e, K_vec_chunk_id));
      break;
    case E_JOB_DONE:
      s = uscope_npu_job_done(w, npu_, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_job_type),
                              n32(e, K_latency_cycles));
      break;
    case E_DMA_START:
      s = uscope_npu_dma_start(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_channel), str(K_direction),
                               n64(e, K_src_addr), n64(e, K_dst_addr), n64(e, K_size_bytes), n32(e, K_cmd_id),
                               n32(e, K_job_id));
      if (!s) dma_size_[tx_key(n16(e, K_channel), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_DMA_END: {
      const uint64_t key = tx_key(n16(e, K_channel), n32(e, K_tx_id));
      auto it = dma_size_.find(key);
      s = uscope_npu_dma_end(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_channel), n32(e, K_cmd_id), n32(e, K_job_id),
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
        s = uscope_npu_te_start(w, npu_, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n32(e, K_m), n32(e, K_n),
                                n32(e, K_k), n32(e, K_tile_m), n32(e, K_tile_n), n32(e, K_tile_k));
      else
        s = uscope_npu_ve_start(w, npu_, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), str(K_op_type), n32(e, K_len),
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
        s = uscope_npu_te_end(w, npu_, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n64(e, K_mac_count),
                              n32(e, K_latency_cycles));
      else
        s = uscope_npu_ve_end(w, npu_, eng, ctx, n32(e, K_job_id), n32(e, K_cmd_id), n32(e, K_latency_cycles));
      if (found) {
        if (s) (te ? te_of_ : ve_of_).emplace(job, eng);
        else (te ? te_free_ : ve_free_).push_back(eng);
      }
      break;
    }
    case E_SRAM_ACCESS:
      s = uscope_npu_sram_access(w, npu_, ctx, n64(e, K_addr), n16(e, K_bank_id),
                                 static_cast<uint8_t>(e.v[K_access_type]), str(K_by), u8b(K_conflict),
                                 n32(e, K_cmd_id), n32(e, K_job_id));
      break;
    case E_SRAM_CONFLICT:
      s = uscope_npu_sram_conflict(w, npu_, ctx, n16(e, K_bank_id), n32(e, K_num_requests), n32(e, K_allowed),
                                   str(K_stalled_clients), n32(e, K_cmd_id));
      break;
    case E_DRAM_TX_START:
      s = uscope_npu_dram_tx_start(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_channel), n64(e, K_size_bytes),
                                   n32(e, K_cmd_id));
      if (!s) dram_size_[tx_key(n16(e, K_channel), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_DRAM_TX_END: {
      const uint64_t key = tx_key(n16(e, K_channel), n32(e, K_tx_id));
      s = uscope_npu_dram_tx_end(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_channel), size_of(dram_size_, key));
      break;
    }
    case E_NOC_TX_START:
      s = uscope_npu_noc_tx_start(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_link_id), n64(e, K_size_bytes),
                                  n32(e, K_cmd_id));
      if (!s) noc_size_[tx_key(n16(e, K_link_id), n32(e, K_tx_id))] = n64(e, K_size_bytes);
      break;
    case E_NOC_TX_END: {
      const uint64_t key = tx_key(n16(e, K_link_id), n32(e, K_tx_id));
      s = uscope_npu_noc_tx_end(w, npu_, ctx, n32(e, K_tx_id), n16(e, K_link_id), size_of(noc_size_, key));
      break;
    }
    case E_IRQ_EMIT:
      s = uscope_npu_irq_emit(w, npu_, ctx, n32(e, K_cmd_id), n32(e, K_token), n32(e, K_irq_line));
      break;
    case E_TOKEN_COMPLETE:
      s = uscope_npu_token_complete(w, npu_, ctx, n32(e, K_token), n32(e, K_cmd_id), str(K_status));
      break;
    case E_ERROR:
    case E_WARN:
      s = (e.type == E_ERROR ? uscope_npu_error : uscope_npu_warn)(w, npu_, ctx, str(K_component), str(K_code),
                                                                   str(K_msg), n32(e, K_cmd_id), n32(e, K_job_id));
      break;
    default: break;
  }
  if (s == USCOPE_ERR_UNKNOWN_SLOT || s == USCOPE_ERR_VALUE_RANGE || s == USCOPE_ERR_INVALID_ARGUMENT) {
    // Argument errors are not sticky: the event is not recorded and the
    // writer goes on; the line is reported.
    *reason = std::string(uscope_last_error()) +
              (s == USCOPE_ERR_UNKNOWN_SLOT ? " (raise --dma-channels / --dram-channels / --noc-links / --sram-banks)" : "");
    return 1;
  }
  if (s) return s;
  ++events_;
  return 0;
}

Status UscopeOut::close(std::string *error) {
  Status s = 0;
  if (in_cycle_) s = uscope_end_cycle(w_);
  in_cycle_ = false;
  const Status c = uscope_writer_close(w_);
  w_ = nullptr;
  if (!s) s = c;
  if (s) *error = std::string("writing the .uscope file: ") + uscope_last_error();
  return s;
}

// ── UscopeIn ──

UscopeIn::~UscopeIn() { uscope_reader_close(r_); }

std::string_view UscopeIn::str(uint64_t id) const {
  const char *s = nullptr;
  uint32_t len = 0;
  if (uscope_reader_string(r_, &s, &len, static_cast<uint32_t>(id)) != USCOPE_OK) return "";
  return std::string_view(s, len);
}

void UscopeIn::report_defects(const Issues &issues) const {
  if (!issues.on_issue) return;
  uscope_defect_t d[USCOPE_DEFECT_KIND_COUNT];
  uint32_t n = 0;
  if (uscope_reader_defects(r_, d, &n, USCOPE_DEFECT_KIND_COUNT) != USCOPE_OK) return;
  for (uint32_t i = 0; i < n && i < USCOPE_DEFECT_KIND_COUNT; ++i)
    issues.on_issue(0, "trace defect " + std::string(uscope_defect_name(d[i].kind)) + " x" +
                           std::to_string(d[i].count) + ": " + uscope_defect_description(d[i].kind) +
                           " (first in segment " + std::to_string(d[i].segment) + " at " +
                           std::to_string(d[i].time_ps) + " ps)");
}

Status UscopeIn::open(const char *path, std::string *error, bool strict) {
  Status s = uscope_reader_open_ex(&r_, path, strict ? USCOPE_READ_STRICT : 0);
  if (s) {
    *error = about_file(path, uscope_last_error());
    return s;
  }
  uscope_schema_counts_t c{};
  c.struct_size = sizeof c;
  must(uscope_reader_schema_counts(r_, &c));
  bool found = false;
  for (uint32_t i = 0; i < c.scopes && !found; ++i) {
    uscope_scope_info_t si{};
    if (uscope_reader_scope(r_, &si, i) == USCOPE_OK && si.protocol && std::strcmp(si.protocol, "npu") == 0) {
      scope_ = static_cast<uint16_t>(i);
      found = true;
      // The period of the scope's clock, inherited up the tree.
      uint16_t sc = scope_;
      for (int d = 0; d < 65536 && sc != USCOPE_NO_PARENT; ++d) {
        uscope_scope_info_t x{};
        if (uscope_reader_scope(r_, &x, sc) != USCOPE_OK) break;
        if (x.clock_id != USCOPE_CLOCK_INHERIT) {
          uscope_clock_info_t ck{};
          if (uscope_reader_clock(r_, &ck, x.clock_id) == USCOPE_OK && ck.period_ps) period_ = ck.period_ps;
          break;
        }
        sc = x.parent_id;
      }
    }
  }
  if (!found) {
    *error = std::string(path) + ": expected a scope with protocol \"npu\" (the converters read the npu protocol), found none among its " +
             std::to_string(c.scopes) + " scope(s)";
    return USCOPE_ERR_NOT_FOUND;
  }
  for (uint32_t i = 0; i < c.storages; ++i) {
    uscope_storage_info_t si{};
    if (uscope_reader_storage(r_, &si, static_cast<uint16_t>(i)) || si.scope_id != scope_) continue;
    if (!si.name || std::strcmp(si.name, "contexts") != 0) continue;
    contexts_ = static_cast<uint16_t>(i);
    for (uint16_t f = 0; f < si.num_fields && f < kNumMetaKeys; ++f) {
      uscope_field_info_t fi{};
      if (uscope_reader_storage_field(r_, &fi, contexts_, f, 0) != USCOPE_OK || !fi.name ||
          key_by_name(fi.name) != f) {
        *error = std::string(path) + ": the npu scope's contexts storage: expected field " + std::to_string(f) + " \"" +
                 kKeys[f].name + "\" of the npu protocol, found " + (fi.name ? "\"" + std::string(fi.name) + "\"" : "none");
        return USCOPE_ERR_SCHEMA;
      }
      ctx_sizes_.push_back(fi.size);
      ctx_types_.push_back(fi.type);
    }
  }
  types_.resize(c.event_types);
  for (uint32_t i = 0; i < c.event_types; ++i) {
    uscope_event_type_info_t ti{};
    if (uscope_reader_event_type(r_, &ti, static_cast<uint16_t>(i)) || ti.scope_id != scope_ || !ti.name) continue;
    const int ev = ev_type_by_lower(ti.name);
    if (ev < 0) continue;
    TypeMap &tm = types_[i];
    tm.ev = ev;
    for (uint16_t f = 0; f < ti.num_fields; ++f) {
      uscope_field_info_t fi{};
      if (uscope_reader_event_field(r_, &fi, static_cast<uint16_t>(i), f) != USCOPE_OK || !fi.name) {
        *error = std::string(path) + ": event type " + ti.name + ": field " + std::to_string(f) +
                 " unreadable: " + uscope_last_error();
        return USCOPE_ERR_CORRUPT;
      }
      int key = key_by_name(fi.name);
      if (std::strcmp(fi.name, "ctx") == 0) key = -2;
      else if (key < 0 || !((kEvTypes[ev].own_mask >> key) & 1)) key = -1;
      if (fi.offset + fi.size > ti.payload_size || fi.size > 8) {
        *error = std::string(path) + ": event type " + ti.name + ", field " + fi.name + ": expected a field of at most 8 bytes inside the " +
                 std::to_string(ti.payload_size) + "-byte payload, found offset " + std::to_string(fi.offset) + " size " +
                 std::to_string(fi.size);
        return USCOPE_ERR_CORRUPT;
      }
      tm.fields.push_back({key, fi.type, fi.size, fi.offset});
    }
  }
  const char *v = nullptr;
  auto dut = [&](const char *k, std::string *out) {
    if (uscope_reader_dut_lookup(r_, &v, k) != USCOPE_OK || !v) return false;
    *out = v;
    return true;
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
}  // namespace

Status UscopeIn::run(const std::function<void(const Ev &)> &fn, std::string *error) {
  uscope_file_info_t info{};
  info.struct_size = sizeof info;
  must(uscope_reader_info(r_, &info));
  const size_t nctx = 65536;
  // The contexts storage, replayed from its ops in stream order: exact at
  // every event (the checkpoints are not needed when every segment is read).
  std::vector<uint64_t> ctx;
  std::vector<uint8_t> ctx_valid;
  if (contexts_ != 0xFFFF) {
    uscope_storage_info_t si{};
    must(uscope_reader_storage(r_, &si, contexts_));
    ctx.assign(static_cast<size_t>(si.num_slots) * kNumMetaKeys, 0);
    ctx_valid.assign(si.num_slots, 0);
  }
  (void)nctx;
  Ev e;
  for (uint32_t seg = 0; seg < info.num_segments; ++seg) {
    uscope_item_iter_t *it = nullptr;
    Status s = uscope_reader_segment_items(r_, &it, seg);
    if (s) {
      *error = std::string("segment ") + std::to_string(seg) + ": " + uscope_last_error();
      return s;
    }
    uscope_item_t item;
    while ((s = uscope_item_iter_next(it, &item)) == USCOPE_OK) {
      if (!item.is_event) {
        if (item.storage_id != contexts_ || item.slot >= ctx_valid.size()) continue;
        uint64_t *row = &ctx[static_cast<size_t>(item.slot) * kNumMetaKeys];
        if (item.action == 1) {
          if (!ctx_valid[item.slot]) std::memset(row, 0, kNumMetaKeys * sizeof(uint64_t));
          ctx_valid[item.slot] = 1;
          if (item.field < ctx_sizes_.size()) row[item.field] = item.value;
        } else if (item.action == 2) {
          ctx_valid[item.slot] = 0;
        } else if (item.action == 3 && item.field < ctx_sizes_.size()) {
          row[item.field] += item.value;
        }
        continue;
      }
      if (item.event_type_id >= types_.size() || types_[item.event_type_id].ev < 0) continue;
      const TypeMap &tm = types_[item.event_type_id];
      e.type = static_cast<uint8_t>(tm.ev);
      e.mask = 0;
      e.line = 0;
      e.has_t_ns = e.has_sim_id = 0;
      e.t_cycle = item.time_ps / period_;
      uint64_t c = USCOPE_NPU_NO_CONTEXT;
      for (const FieldMap &f : tm.fields) {
        if (f.offset + f.size > item.payload_size) continue;
        uint64_t raw = 0;
        std::memcpy(&raw, item.payload + f.offset, f.size);
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
      fn(e);
    }
    uscope_item_iter_free(it);
    if (s != USCOPE_DONE) {
      *error = std::string("segment ") + std::to_string(seg) + ": " + uscope_last_error();
      return s;
    }
  }
  return 0;
}

}  // namespace uscope::convert
