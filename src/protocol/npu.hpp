// The npu protocol handle (docs/npu-protocol.md): the ids of a declared NPU
// scope and one per-cycle call per event type of the NPU JSON-Lines trace.
// Each call records its event with every JSONL field and keeps the storages
// (command queue, engines, channels, banks) and counters in step with it.
#pragma once

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "protocol/common.hpp"
#include "protocol/npu_table.hpp"

struct uscope_npu : uscope::proto::CounterScope {
  // Field indices of the storages (docs/npu-protocol.md §3; npu_table.hpp
  // has their names, and npu.cpp checks the counts).
  enum CmdQueueField : uint16_t {
    kCqCmdId,
    kCqState,
    kCqCmdType,
    kCqSource,
    kCqToken,
    kCqDescAddr,
    kCqLayerId,
    kCqBlockId,
    kCqPhase,
    kCqCtx,
    kCqNumFields
  };
  enum ContextField : uint16_t {
    kCxCoreId,
    kCxNpuId,
    kCxTenantId,
    kCxLayerId,
    kCxBlockId,
    kCxHeadId,
    kCxTokenIdx,
    kCxSeqLen,
    kCxPhase,
    kCxThreadId,
    kCxModelName,
    kCxPrecision,
    kCxNumFields
  };
  enum TeField : uint16_t { kTeJobId, kTeCmdId, kTeM, kTeN, kTeK, kTeCtx, kTeNumFields };
  enum VeField : uint16_t { kVeJobId, kVeCmdId, kVeOpType, kVeLen, kVeBatch, kVeCtx, kVeNumFields };
  enum DmaField : uint16_t {
    kDmaTxId,
    kDmaCmdId,
    kDmaJobId,
    kDmaDirection,
    kDmaSrcAddr,
    kDmaDstAddr,
    kDmaSizeBytes,
    kDmaCtx,
    kDmaNumFields
  };
  enum ChannelField : uint16_t { kChTxId, kChCmdId, kChSizeBytes, kChCtx, kChNumFields };  // dram, noc
  enum BankField : uint16_t { kBankAccesses, kBankConflicts, kBankNumFields };

  static constexpr uint16_t kNoStorage = 0xFFFF;

  uscope_npu_ids_t ids{};

  uscope_npu() : CounterScope("uscope_npu") {}

  using Writer = uscope::Writer;

  // ── contexts ──
  uscope_status_t context(Writer &w, uint16_t ctx, uint16_t core_id, uint16_t npu_id, uint32_t tenant_id,
                          uint32_t layer_id, uint32_t block_id, uint32_t head_id, uint32_t token_idx,
                          uint32_t seq_len, const char *phase) const noexcept {
    static constexpr const char *fn = "uscope_npu_context";
    if (USCOPE_UNLIKELY(ctx >= ids.num_contexts)) return bad_context(fn, ctx);
    uint32_t ph;
    USCOPE_TRY(str(w, fn, "phase", phase, &ph));
    const uint16_t s = ids.contexts;
    USCOPE_TRY(uscope::proto::set_fields(w, s, ctx, kCxCoreId, core_id, npu_id, tenant_id, layer_id, block_id,
                                         head_id, token_idx, seq_len, ph));
    // A slot made valid starts as zeros, and 0 is a real id: the fields this
    // call does not take are set absent explicitly.
    return uscope::proto::set_fields(w, s, ctx, kCxThreadId, USCOPE_NPU_ABSENT32, USCOPE_NPU_STR_ABSENT,
                                     USCOPE_NPU_STR_ABSENT);
  }
  uscope_status_t context_ext(Writer &w, uint16_t ctx, uint32_t thread_id, const char *model_name,
                              const char *precision) const noexcept {
    static constexpr const char *fn = "uscope_npu_context_ext";
    if (USCOPE_UNLIKELY(ctx >= ids.num_contexts)) return bad_context(fn, ctx);
    uint32_t mn, pr;
    USCOPE_TRY(str(w, fn, "model_name", model_name, &mn));
    USCOPE_TRY(str(w, fn, "precision", precision, &pr));
    return uscope::proto::set_fields(w, ids.contexts, ctx, kCxThreadId, thread_id, mn, pr);
  }
  uscope_status_t context_clear(Writer &w, uint16_t ctx) const noexcept {
    if (USCOPE_UNLIKELY(ctx >= ids.num_contexts)) return bad_context("uscope_npu_context_clear", ctx);
    return w.slot_clear(ids.contexts, ctx);
  }

  // ── commands ──
  uscope_status_t cmd_enqueue(Writer &w, uint16_t slot, uint16_t ctx, uint32_t cmd_id, const char *cmd_type,
                              uint8_t source, uint32_t token, uint64_t desc_addr, uint32_t layer_id,
                              uint32_t block_id, const char *phase) const noexcept {
    static constexpr const char *fn = "uscope_npu_cmd_enqueue";
    if (USCOPE_UNLIKELY(slot >= ids.queue_depth))
      return bad_unit(fn, "slot", slot, "cmd_queue", ids.queue_depth);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    if (USCOPE_UNLIKELY(source >= kNumSources)) return bad_enum(fn, "source", source, kNumSources);
    uint32_t ty, ph;
    USCOPE_TRY(str(w, fn, "cmd_type", cmd_type, &ty));
    USCOPE_TRY(str(w, fn, "phase", phase, &ph));
    const uint16_t s = ids.cmd_queue;
    // cmd_id first: the trace summary counts field-0 sets of the first sparse
    // non-buffer storage as instructions (COMPAT 16), here one per command.
    USCOPE_TRY(uscope::proto::set_fields(w, s, slot, kCqCmdId, cmd_id, USCOPE_NPU_CMD_QUEUED, ty, source,
                                         token, desc_addr, layer_id, block_id, ph, ctx));
    return emit(w, USCOPE_NPU_EV_CMD_ENQUEUE, cmd_id, ty, source, token, desc_addr, layer_id, block_id, ph,
                slot, ctx);
  }
  uscope_status_t cmd_start(Writer &w, uint16_t slot, uint16_t ctx, uint32_t cmd_id) const noexcept {
    static constexpr const char *fn = "uscope_npu_cmd_start";
    if (USCOPE_UNLIKELY(slot >= ids.queue_depth))
      return bad_unit(fn, "slot", slot, "cmd_queue", ids.queue_depth);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    USCOPE_TRY(w.slot_set(ids.cmd_queue, slot, kCqState, USCOPE_NPU_CMD_RUNNING));
    return emit(w, USCOPE_NPU_EV_CMD_START, cmd_id, slot, ctx);
  }
  uscope_status_t cmd_end(Writer &w, uint16_t slot, uint16_t ctx, uint32_t cmd_id,
                          const char *status) const noexcept {
    static constexpr const char *fn = "uscope_npu_cmd_end";
    if (USCOPE_UNLIKELY(slot >= ids.queue_depth))
      return bad_unit(fn, "slot", slot, "cmd_queue", ids.queue_depth);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t st;
    USCOPE_TRY(str(w, fn, "status", status, &st));
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_CMD_END, cmd_id, st, slot, ctx));
    USCOPE_TRY(w.slot_clear(ids.cmd_queue, slot));
    return add(w, USCOPE_NPU_COUNTER_CMDS_DONE, 1);
  }

  // ── jobs ──
  uscope_status_t job_issue(Writer &w, uint16_t ctx, uint32_t job_id, uint32_t cmd_id, const char *job_type,
                            uint32_t tile_id, uint32_t vec_chunk_id) const noexcept {
    static constexpr const char *fn = "uscope_npu_job_issue";
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t ty;
    USCOPE_TRY(str(w, fn, "job_type", job_type, &ty));
    return emit(w, USCOPE_NPU_EV_JOB_ISSUE, job_id, cmd_id, ty, tile_id, vec_chunk_id, ctx);
  }
  uscope_status_t job_done(Writer &w, uint16_t ctx, uint32_t job_id, uint32_t cmd_id, const char *job_type,
                           uint32_t latency) const noexcept {
    static constexpr const char *fn = "uscope_npu_job_done";
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t ty;
    USCOPE_TRY(str(w, fn, "job_type", job_type, &ty));
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_JOB_DONE, job_id, cmd_id, ty, latency, ctx));
    return add(w, USCOPE_NPU_COUNTER_JOBS_DONE, 1);
  }

  // ── DMA ──
  uscope_status_t dma_start(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t channel, const char *direction,
                            uint64_t src_addr, uint64_t dst_addr, uint64_t size_bytes, uint32_t cmd_id,
                            uint32_t job_id) const noexcept {
    static constexpr const char *fn = "uscope_npu_dma_start";
    if (USCOPE_UNLIKELY(channel >= ids.num_dma_channels))
      return bad_unit(fn, "channel", channel, "dma", ids.num_dma_channels);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t dir;
    USCOPE_TRY(str(w, fn, "direction", direction, &dir));
    const uint16_t s = ids.dma;
    USCOPE_TRY(uscope::proto::set_fields(w, s, channel, kDmaTxId, tx_id, cmd_id, job_id, dir, src_addr,
                                         dst_addr, size_bytes, ctx));
    return emit(w, USCOPE_NPU_EV_DMA_START, tx_id, channel, dir, src_addr, dst_addr, size_bytes, cmd_id,
                job_id, ctx);
  }
  uscope_status_t dma_end(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t channel, uint32_t cmd_id,
                          uint32_t job_id, uint64_t size_bytes) const noexcept {
    static constexpr const char *fn = "uscope_npu_dma_end";
    if (USCOPE_UNLIKELY(channel >= ids.num_dma_channels))
      return bad_unit(fn, "channel", channel, "dma", ids.num_dma_channels);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_DMA_END, tx_id, channel, cmd_id, job_id, ctx));
    USCOPE_TRY(w.slot_clear(ids.dma, channel));
    return add_value(w, USCOPE_NPU_COUNTER_DMA_BYTES, size_bytes);
  }

  // ── engines ──
  uscope_status_t te_start(Writer &w, uint16_t engine, uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                           uint32_t m, uint32_t n, uint32_t k, uint32_t tile_m, uint32_t tile_n,
                           uint32_t tile_k) const noexcept {
    static constexpr const char *fn = "uscope_npu_te_start";
    if (USCOPE_UNLIKELY(engine >= ids.num_te)) return bad_unit(fn, "engine", engine, "te", ids.num_te);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    const uint16_t s = ids.te;
    USCOPE_TRY(uscope::proto::set_fields(w, s, engine, kTeJobId, job_id, cmd_id, m, n, k, ctx));
    return emit(w, USCOPE_NPU_EV_TE_START, job_id, cmd_id, m, n, k, tile_m, tile_n, tile_k, engine, ctx);
  }
  uscope_status_t te_end(Writer &w, uint16_t engine, uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                         uint64_t mac_count, uint32_t latency) const noexcept {
    static constexpr const char *fn = "uscope_npu_te_end";
    if (USCOPE_UNLIKELY(engine >= ids.num_te)) return bad_unit(fn, "engine", engine, "te", ids.num_te);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_TE_END, job_id, cmd_id, mac_count, latency, engine, ctx));
    USCOPE_TRY(w.slot_clear(ids.te, engine));
    return add_value(w, USCOPE_NPU_COUNTER_MACS, mac_count);
  }
  uscope_status_t ve_start(Writer &w, uint16_t engine, uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                           const char *op_type, uint32_t len, uint32_t batch) const noexcept {
    static constexpr const char *fn = "uscope_npu_ve_start";
    if (USCOPE_UNLIKELY(engine >= ids.num_ve)) return bad_unit(fn, "engine", engine, "ve", ids.num_ve);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t op;
    USCOPE_TRY(str(w, fn, "op_type", op_type, &op));
    const uint16_t s = ids.ve;
    USCOPE_TRY(uscope::proto::set_fields(w, s, engine, kVeJobId, job_id, cmd_id, op, len, batch, ctx));
    return emit(w, USCOPE_NPU_EV_VE_START, job_id, cmd_id, op, len, batch, engine, ctx);
  }
  uscope_status_t ve_end(Writer &w, uint16_t engine, uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                         uint32_t latency) const noexcept {
    static constexpr const char *fn = "uscope_npu_ve_end";
    if (USCOPE_UNLIKELY(engine >= ids.num_ve)) return bad_unit(fn, "engine", engine, "ve", ids.num_ve);
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_VE_END, job_id, cmd_id, latency, engine, ctx));
    return w.slot_clear(ids.ve, engine);
  }

  // ── SRAM ──
  uscope_status_t sram_access(Writer &w, uint16_t ctx, uint64_t addr, uint16_t bank_id, uint8_t access_type,
                              const char *by, uint8_t conflict, uint32_t cmd_id,
                              uint32_t job_id) const noexcept {
    static constexpr const char *fn = "uscope_npu_sram_access";
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    if (USCOPE_UNLIKELY(!opt_unit(bank_id, ids.sram_banks, ids.num_sram_banks)))
      return bad_unit(fn, "bank_id", bank_id, "sram_banks", ids.num_sram_banks);
    if (USCOPE_UNLIKELY(access_type >= kNumAccessTypes))
      return bad_enum(fn, "access_type", access_type, kNumAccessTypes);
    if (USCOPE_UNLIKELY(conflict > 1 && conflict < USCOPE_NPU_NULL8)) return bad_conflict(conflict);
    uint32_t b;
    USCOPE_TRY(str(w, fn, "by", by, &b));
    USCOPE_TRY(
        emit(w, USCOPE_NPU_EV_SRAM_ACCESS, addr, bank_id, access_type, b, conflict, cmd_id, job_id, ctx));
    USCOPE_TRY(add(w, USCOPE_NPU_COUNTER_SRAM_ACCESSES, 1));
    if (ids.sram_banks != kNoStorage && bank_id < ids.num_sram_banks)
      return w.slot_add(ids.sram_banks, bank_id, kBankAccesses, 1);
    return USCOPE_OK;
  }
  uscope_status_t sram_conflict(Writer &w, uint16_t ctx, uint16_t bank_id, uint32_t num_requests,
                                uint32_t allowed, const char *stalled_clients,
                                uint32_t cmd_id) const noexcept {
    static constexpr const char *fn = "uscope_npu_sram_conflict";
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    if (USCOPE_UNLIKELY(!opt_unit(bank_id, ids.sram_banks, ids.num_sram_banks)))
      return bad_unit(fn, "bank_id", bank_id, "sram_banks", ids.num_sram_banks);
    uint32_t sc;
    USCOPE_TRY(str(w, fn, "stalled_clients", stalled_clients, &sc));
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_SRAM_CONFLICT, bank_id, num_requests, allowed, sc, cmd_id, ctx));
    USCOPE_TRY(add(w, USCOPE_NPU_COUNTER_SRAM_CONFLICTS, 1));
    if (ids.sram_banks != kNoStorage && bank_id < ids.num_sram_banks)
      return w.slot_add(ids.sram_banks, bank_id, kBankConflicts, 1);
    return USCOPE_OK;
  }

  // ── DRAM and NoC transfers: the same shape on two storages ──
  uscope_status_t dram_tx_start(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t channel,
                                uint64_t size_bytes, uint32_t cmd_id) const noexcept {
    return channel_start(w, "uscope_npu_dram_tx_start", "channel", USCOPE_NPU_EV_DRAM_TX_START, ids.dram,
                         ids.num_dram_channels, "dram", ctx, tx_id, channel, size_bytes, cmd_id);
  }
  uscope_status_t dram_tx_end(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t channel,
                              uint64_t size_bytes) const noexcept {
    return channel_end(w, "uscope_npu_dram_tx_end", "channel", USCOPE_NPU_EV_DRAM_TX_END, ids.dram,
                       ids.num_dram_channels, "dram", USCOPE_NPU_COUNTER_DRAM_BYTES, ctx, tx_id, channel,
                       size_bytes);
  }
  uscope_status_t noc_tx_start(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t link_id, uint64_t size_bytes,
                               uint32_t cmd_id) const noexcept {
    return channel_start(w, "uscope_npu_noc_tx_start", "link_id", USCOPE_NPU_EV_NOC_TX_START, ids.noc,
                         ids.num_noc_links, "noc", ctx, tx_id, link_id, size_bytes, cmd_id);
  }
  uscope_status_t noc_tx_end(Writer &w, uint16_t ctx, uint32_t tx_id, uint16_t link_id,
                             uint64_t size_bytes) const noexcept {
    return channel_end(w, "uscope_npu_noc_tx_end", "link_id", USCOPE_NPU_EV_NOC_TX_END, ids.noc,
                       ids.num_noc_links, "noc", USCOPE_NPU_COUNTER_NOC_BYTES, ctx, tx_id, link_id,
                       size_bytes);
  }

  // ── interrupts, tokens, diagnostics ──
  uscope_status_t irq_emit(Writer &w, uint16_t ctx, uint32_t cmd_id, uint32_t token,
                           uint32_t irq_line) const noexcept {
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context("uscope_npu_irq_emit", ctx);
    return emit(w, USCOPE_NPU_EV_IRQ_EMIT, cmd_id, token, irq_line, ctx);
  }
  uscope_status_t token_complete(Writer &w, uint16_t ctx, uint32_t token, uint32_t cmd_id,
                                 const char *status) const noexcept {
    static constexpr const char *fn = "uscope_npu_token_complete";
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t st;
    USCOPE_TRY(str(w, fn, "status", status, &st));
    USCOPE_TRY(emit(w, USCOPE_NPU_EV_TOKEN_COMPLETE, token, cmd_id, st, ctx));
    return add(w, USCOPE_NPU_COUNTER_TOKENS_DONE, 1);
  }
  uscope_status_t diagnostic(Writer &w, const char *fn, int ev, uint16_t ctx, const char *component,
                             const char *code, const char *msg, uint32_t cmd_id,
                             uint32_t job_id) const noexcept {
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    uint32_t co, cd, ms;
    USCOPE_TRY(str(w, fn, "component", component, &co));
    USCOPE_TRY(str(w, fn, "code", code, &cd));
    USCOPE_TRY(str(w, fn, "msg", msg, &ms));
    return emit(w, ev, co, cd, ms, cmd_id, job_id, ctx);
  }

  static constexpr uint16_t kNumSources = std::size(uscope::proto::npu::kSources);
  static constexpr uint16_t kNumAccessTypes = std::size(uscope::proto::npu::kAccessTypes);

 private:
  bool ctx_ok(uint16_t ctx) const noexcept { return ctx < ids.num_contexts || ctx == USCOPE_NPU_NO_CONTEXT; }
  // An index into an optional storage: anything when the storage is not
  // declared; else inside it, or a sentinel (which updates nothing).
  static bool opt_unit(uint16_t v, uint16_t sid, uint16_t count) noexcept {
    return sid == kNoStorage || v < count || v >= USCOPE_NPU_NULL16;
  }
  static uscope_status_t str(Writer &w, const char *fn, const char *what, const char *s,
                             uint32_t *out) noexcept {
    return uscope::proto::intern(w, fn, what, s, true, out);
  }
  // The event of this USCOPE_NPU_EV_* index, its payload the values in the
  // field order of npu_table.hpp's event.
  template <class... T>
  uscope_status_t emit(Writer &w, int ev, T... v) const noexcept {
    return uscope::proto::emit(w, ids.events[ev], v...);
  }
  uscope_status_t add(Writer &w, uint16_t counter, uint64_t delta) const noexcept {
    return w.slot_add(counter_ids[counter], 0, 0, delta);
  }
  // A sentinel (absent or null) never feeds a counter.
  uscope_status_t add_value(Writer &w, uint16_t counter, uint64_t v) const noexcept {
    return v < USCOPE_NPU_NULL64 ? add(w, counter, v) : USCOPE_OK;
  }
  uscope_status_t channel_start(Writer &w, const char *fn, const char *what, int ev, uint16_t sid,
                                uint16_t count, const char *storage, uint16_t ctx, uint32_t tx_id,
                                uint16_t ch, uint64_t size, uint32_t cmd_id) const noexcept {
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    if (USCOPE_UNLIKELY(!opt_unit(ch, sid, count))) return bad_unit(fn, what, ch, storage, count);
    if (sid != kNoStorage && ch < count) {
      USCOPE_TRY(uscope::proto::set_fields(w, sid, ch, kChTxId, tx_id, cmd_id, size, ctx));
    }
    return emit(w, ev, tx_id, ch, size, cmd_id, ctx);
  }
  uscope_status_t channel_end(Writer &w, const char *fn, const char *what, int ev, uint16_t sid,
                              uint16_t count, const char *storage, uint16_t counter, uint16_t ctx,
                              uint32_t tx_id, uint16_t ch, uint64_t size) const noexcept {
    if (USCOPE_UNLIKELY(!ctx_ok(ctx))) return bad_context(fn, ctx);
    if (USCOPE_UNLIKELY(!opt_unit(ch, sid, count))) return bad_unit(fn, what, ch, storage, count);
    USCOPE_TRY(emit(w, ev, tx_id, ch, ctx));
    if (sid != kNoStorage && ch < count) USCOPE_TRY(w.slot_clear(sid, ch));
    return add_value(w, counter, size);
  }

  uscope_status_t bad_context(const char *fn, uint16_t ctx) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_unit(const char *fn, const char *what, unsigned v, const char *storage,
                           unsigned count) const noexcept __attribute__((cold, noinline));
  uscope_status_t bad_enum(const char *fn, const char *what, unsigned v, unsigned count) const noexcept
      __attribute__((cold, noinline));
  uscope_status_t bad_conflict(unsigned v) const noexcept __attribute__((cold, noinline));
};

namespace uscope::proto {
std::unique_ptr<uscope_npu> declare_npu(Declaration &d, const uscope_npu_config_t &cfg);
}  // namespace uscope::proto
