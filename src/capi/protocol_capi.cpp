// extern "C" protocol helpers (include/uscope/protocols.h). The declare
// calls run in guard() on a copy of the schema builder that is committed only
// on success. The per-cycle calls are noexcept inline members of the handles
// (src/protocol/*.hpp) over the writer's inline hot path, so, as in
// writer_capi.cpp, they need no guard; the one call that can throw, string
// interning, is guarded where it is made (src/protocol/common.cpp).
#include <memory>
#include <string>

#include "capi/guard.hpp"
#include "protocol/cpu.hpp"
#include "protocol/noc.hpp"
#include "protocol/npu.hpp"
#include "uscope/protocols.h"
#include "writer/writer.hpp"

namespace uscope {
SchemaBuilder &builder_of(uscope_schema_t *s);  // schema_capi.cpp
}

using uscope::guard;
using uscope::proto::null_args;

namespace {

// Runs a declaration: the config copied and checked, the protocol declared on
// a copy of the builder, committed only when all of it succeeded; every
// message starts with the function's name.
template <class Handle, class Cfg, class Declare>
uscope_status_t declare(const char *fn, uscope_schema_t *schema, const Cfg *cfg, Handle **out,
                        Declare &&body) {
  return guard([&] {
    try {
      USCOPE_CHECK_ARG(schema, "schema is NULL");
      USCOPE_CHECK_ARG(out, "out is NULL");
      const Cfg c = uscope::proto::copy_config(cfg);
      uscope::proto::Declaration d(uscope::builder_of(schema));
      std::unique_ptr<Handle> h = body(d, c);
      d.commit();
      *out = h.release();
      return USCOPE_OK;
    } catch (const uscope::Error &e) { throw uscope::Error(e.code(), std::string(fn) + ": " + e.what()); }
  });
}

// Copies at most out->struct_size bytes of a size-prefixed ids struct.
template <class Ids>
uscope_status_t copy_ids(const char *fn, const void *h, const Ids *ids, Ids *out) {
  if (!h || !out) return uscope::proto::reject(USCOPE_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
  if (out->struct_size < 8)
    return uscope::proto::reject(USCOPE_ERR_INVALID_ARGUMENT, "%s: set out->struct_size first", fn);
  const uint32_t n = out->struct_size < sizeof(Ids) ? out->struct_size : static_cast<uint32_t>(sizeof(Ids));
  std::memcpy(out, ids, n);
  out->struct_size = n;
  return USCOPE_OK;
}

}  // namespace

// The body of a per-cycle wrapper: a NULL writer or handle refused with the
// wrapper's own name, else the handle's inline member on the writer. A macro
// rather than a template so that each exported function keeps its exact
// signature from protocols.h and compiles to the member's inline code.
#define USCOPE_FORWARD(method, ...) \
  (USCOPE_UNLIKELY(!w || !h) ? null_args(__func__, w, h) : h->method(w->impl, __VA_ARGS__))

extern "C" {

// ── cpu ──

USCOPE_API uscope_status_t uscope_cpu_declare(uscope_schema_t *schema, uscope_cpu_t **out,
                                              const uscope_cpu_config_t *cfg) {
  return declare<uscope_cpu>("uscope_cpu_declare", schema, cfg, out,
                             [](auto &d, const auto &c) { return uscope::proto::declare_cpu(d, c); });
}

USCOPE_API void uscope_cpu_free(uscope_cpu_t *cpu) { delete cpu; }

USCOPE_API uscope_status_t uscope_cpu_ids(const uscope_cpu_t *cpu, uscope_cpu_ids_t *out) {
  return copy_ids("uscope_cpu_ids", cpu, cpu ? &cpu->ids : nullptr, out);
}

USCOPE_API uscope_status_t uscope_cpu_fetch(uscope_writer_t *w, const uscope_cpu_t *h, uint32_t entity_id,
                                            uint64_t pc, uint32_t inst_bits) {
  return USCOPE_FORWARD(fetch, entity_id, pc, inst_bits);
}

USCOPE_API uscope_status_t uscope_cpu_stage_transition(uscope_writer_t *w, const uscope_cpu_t *h,
                                                       uint32_t entity_id, uint8_t stage) {
  return USCOPE_FORWARD(stage_transition, entity_id, stage);
}

USCOPE_API uscope_status_t uscope_cpu_retire(uscope_writer_t *w, const uscope_cpu_t *h, uint32_t entity_id) {
  return USCOPE_FORWARD(retire, entity_id);
}

USCOPE_API uscope_status_t uscope_cpu_flush(uscope_writer_t *w, const uscope_cpu_t *h, uint32_t entity_id,
                                            uint8_t reason) {
  return USCOPE_FORWARD(flush, entity_id, reason);
}

USCOPE_API uscope_status_t uscope_cpu_annotate(uscope_writer_t *w, const uscope_cpu_t *h, uint32_t entity_id,
                                               const char *text) {
  return USCOPE_FORWARD(annotate, entity_id, text);
}

USCOPE_API uscope_status_t uscope_cpu_dependency(uscope_writer_t *w, const uscope_cpu_t *h, uint32_t src_id,
                                                 uint32_t dst_id, uint8_t dep_type) {
  return USCOPE_FORWARD(dependency, src_id, dst_id, dep_type);
}

USCOPE_API uscope_status_t uscope_cpu_stall(uscope_writer_t *w, const uscope_cpu_t *h, uint8_t reason) {
  return USCOPE_FORWARD(stall, reason);
}

USCOPE_API uscope_status_t uscope_cpu_counter_add(uscope_writer_t *w, const uscope_cpu_t *h, uint16_t counter,
                                                  uint64_t delta) {
  return USCOPE_FORWARD(counter_add, counter, delta);
}

USCOPE_API uscope_status_t uscope_cpu_buffer_insert(uscope_writer_t *w, const uscope_cpu_t *h,
                                                    uint16_t buffer, uint16_t slot, uint32_t entity_id) {
  return USCOPE_FORWARD(buffer_insert, buffer, slot, entity_id);
}

USCOPE_API uscope_status_t uscope_cpu_buffer_set(uscope_writer_t *w, const uscope_cpu_t *h, uint16_t buffer,
                                                 uint16_t slot, uint16_t field, uint64_t value) {
  return USCOPE_FORWARD(buffer_set, buffer, slot, field, value);
}

USCOPE_API uscope_status_t uscope_cpu_buffer_remove(uscope_writer_t *w, const uscope_cpu_t *h,
                                                    uint16_t buffer, uint16_t slot) {
  return USCOPE_FORWARD(buffer_remove, buffer, slot);
}

USCOPE_API uscope_status_t uscope_cpu_entity_set(uscope_writer_t *w, const uscope_cpu_t *h,
                                                 uint32_t entity_id, uint16_t field, uint64_t value) {
  return USCOPE_FORWARD(entity_set, entity_id, field, value);
}

// ── noc ──

USCOPE_API uscope_status_t uscope_noc_declare(uscope_schema_t *schema, uscope_noc_t **out,
                                              const uscope_noc_config_t *cfg) {
  return declare<uscope_noc>("uscope_noc_declare", schema, cfg, out,
                             [](auto &d, const auto &c) { return uscope::proto::declare_noc(d, c); });
}

USCOPE_API void uscope_noc_free(uscope_noc_t *noc) { delete noc; }

USCOPE_API uscope_status_t uscope_noc_ids(const uscope_noc_t *noc, uscope_noc_ids_t *out) {
  return copy_ids("uscope_noc_ids", noc, noc ? &noc->ids : nullptr, out);
}

USCOPE_API uscope_status_t uscope_noc_issue(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                            uint8_t opcode, uint64_t addr, uint16_t len, uint8_t size,
                                            uint16_t src_port, uint16_t dst_port) {
  return USCOPE_FORWARD(issue, txn_id, opcode, addr, len, size, src_port, dst_port);
}

USCOPE_API uscope_status_t uscope_noc_stage_transition(uscope_writer_t *w, const uscope_noc_t *h,
                                                       uint32_t txn_id, uint8_t stage) {
  return USCOPE_FORWARD(stage_transition, txn_id, stage);
}

USCOPE_API uscope_status_t uscope_noc_complete(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id) {
  return USCOPE_FORWARD(complete, txn_id);
}

USCOPE_API uscope_status_t uscope_noc_beat(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                           uint16_t beat_num, uint16_t data_bytes) {
  return USCOPE_FORWARD(beat, txn_id, beat_num, data_bytes);
}

USCOPE_API uscope_status_t uscope_noc_retry(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                            uint8_t reason) {
  return USCOPE_FORWARD(retry, txn_id, reason);
}

USCOPE_API uscope_status_t uscope_noc_timeout(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                              uint32_t threshold_cycles) {
  return USCOPE_FORWARD(timeout, txn_id, threshold_cycles);
}

USCOPE_API uscope_status_t uscope_noc_link_credit(uscope_writer_t *w, const uscope_noc_t *h, uint16_t port,
                                                  uint8_t direction, uint8_t credits) {
  return USCOPE_FORWARD(link_credit, port, direction, credits);
}

USCOPE_API uscope_status_t uscope_noc_arb_decision(uscope_writer_t *w, const uscope_noc_t *h,
                                                   uint32_t winner_txn, uint16_t port,
                                                   uint8_t num_contenders) {
  return USCOPE_FORWARD(arb_decision, winner_txn, port, num_contenders);
}

USCOPE_API uscope_status_t uscope_noc_txn_handoff(uscope_writer_t *w, const uscope_noc_t *h,
                                                  uint16_t src_scope, uint32_t src_txn, uint16_t dst_scope,
                                                  uint32_t dst_txn) {
  return USCOPE_FORWARD(txn_handoff, src_scope, src_txn, dst_scope, dst_txn);
}

USCOPE_API uscope_status_t uscope_noc_annotate(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                               const char *text) {
  return USCOPE_FORWARD(annotate, txn_id, text);
}

USCOPE_API uscope_status_t uscope_noc_buffer_insert(uscope_writer_t *w, const uscope_noc_t *h,
                                                    uint16_t buffer, uint16_t slot, uint32_t txn_id) {
  return USCOPE_FORWARD(buffer_insert, buffer, slot, txn_id);
}

USCOPE_API uscope_status_t uscope_noc_buffer_set(uscope_writer_t *w, const uscope_noc_t *h, uint16_t buffer,
                                                 uint16_t slot, uint16_t field, uint64_t value) {
  return USCOPE_FORWARD(buffer_set, buffer, slot, field, value);
}

USCOPE_API uscope_status_t uscope_noc_buffer_remove(uscope_writer_t *w, const uscope_noc_t *h,
                                                    uint16_t buffer, uint16_t slot) {
  return USCOPE_FORWARD(buffer_remove, buffer, slot);
}

USCOPE_API uscope_status_t uscope_noc_counter_add(uscope_writer_t *w, const uscope_noc_t *h, uint16_t counter,
                                                  uint64_t delta) {
  return USCOPE_FORWARD(counter_add, counter, delta);
}

USCOPE_API uscope_status_t uscope_noc_txn_set(uscope_writer_t *w, const uscope_noc_t *h, uint32_t txn_id,
                                              uint16_t field, uint64_t value) {
  return USCOPE_FORWARD(txn_set, txn_id, field, value);
}

// ── npu ──

USCOPE_API uscope_status_t uscope_npu_declare(uscope_schema_t *schema, uscope_npu_t **out,
                                              const uscope_npu_config_t *cfg) {
  return declare<uscope_npu>("uscope_npu_declare", schema, cfg, out,
                             [](auto &d, const auto &c) { return uscope::proto::declare_npu(d, c); });
}

USCOPE_API void uscope_npu_free(uscope_npu_t *npu) { delete npu; }

USCOPE_API uscope_status_t uscope_npu_ids(const uscope_npu_t *npu, uscope_npu_ids_t *out) {
  return copy_ids("uscope_npu_ids", npu, npu ? &npu->ids : nullptr, out);
}

USCOPE_API uscope_status_t uscope_npu_context(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                              uint16_t core_id, uint16_t npu_id, uint32_t tenant_id,
                                              uint32_t layer_id, uint32_t block_id, uint32_t head_id,
                                              uint32_t token_idx, uint32_t seq_len, const char *phase) {
  return USCOPE_FORWARD(context, ctx, core_id, npu_id, tenant_id, layer_id, block_id, head_id, token_idx,
                        seq_len, phase);
}

USCOPE_API uscope_status_t uscope_npu_context_ext(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                  uint32_t thread_id, const char *model_name,
                                                  const char *precision) {
  return USCOPE_FORWARD(context_ext, ctx, thread_id, model_name, precision);
}

USCOPE_API uscope_status_t uscope_npu_context_clear(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx) {
  return USCOPE_FORWARD(context_clear, ctx);
}

USCOPE_API uscope_status_t uscope_npu_cmd_enqueue(uscope_writer_t *w, const uscope_npu_t *h, uint16_t slot,
                                                  uint16_t ctx, uint32_t cmd_id, const char *cmd_type,
                                                  uint8_t source, uint32_t token, uint64_t desc_addr,
                                                  uint32_t layer_id, uint32_t block_id, const char *phase) {
  return USCOPE_FORWARD(cmd_enqueue, slot, ctx, cmd_id, cmd_type, source, token, desc_addr, layer_id,
                        block_id, phase);
}

USCOPE_API uscope_status_t uscope_npu_cmd_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t slot,
                                                uint16_t ctx, uint32_t cmd_id) {
  return USCOPE_FORWARD(cmd_start, slot, ctx, cmd_id);
}

USCOPE_API uscope_status_t uscope_npu_cmd_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t slot,
                                              uint16_t ctx, uint32_t cmd_id, const char *status) {
  return USCOPE_FORWARD(cmd_end, slot, ctx, cmd_id, status);
}

USCOPE_API uscope_status_t uscope_npu_job_issue(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                uint32_t job_id, uint32_t cmd_id, const char *job_type,
                                                uint32_t tile_id, uint32_t vec_chunk_id) {
  return USCOPE_FORWARD(job_issue, ctx, job_id, cmd_id, job_type, tile_id, vec_chunk_id);
}

USCOPE_API uscope_status_t uscope_npu_job_done(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                               uint32_t job_id, uint32_t cmd_id, const char *job_type,
                                               uint32_t latency_cycles) {
  return USCOPE_FORWARD(job_done, ctx, job_id, cmd_id, job_type, latency_cycles);
}

USCOPE_API uscope_status_t uscope_npu_dma_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                uint32_t tx_id, uint16_t channel, const char *direction,
                                                uint64_t src_addr, uint64_t dst_addr, uint64_t size_bytes,
                                                uint32_t cmd_id, uint32_t job_id) {
  return USCOPE_FORWARD(dma_start, ctx, tx_id, channel, direction, src_addr, dst_addr, size_bytes, cmd_id,
                        job_id);
}

USCOPE_API uscope_status_t uscope_npu_dma_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                              uint32_t tx_id, uint16_t channel, uint32_t cmd_id,
                                              uint32_t job_id, uint64_t size_bytes) {
  return USCOPE_FORWARD(dma_end, ctx, tx_id, channel, cmd_id, job_id, size_bytes);
}

USCOPE_API uscope_status_t uscope_npu_te_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t engine,
                                               uint16_t ctx, uint32_t job_id, uint32_t cmd_id, uint32_t m,
                                               uint32_t n, uint32_t k, uint32_t tile_m, uint32_t tile_n,
                                               uint32_t tile_k) {
  return USCOPE_FORWARD(te_start, engine, ctx, job_id, cmd_id, m, n, k, tile_m, tile_n, tile_k);
}

USCOPE_API uscope_status_t uscope_npu_te_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t engine,
                                             uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                             uint64_t mac_count, uint32_t latency_cycles) {
  return USCOPE_FORWARD(te_end, engine, ctx, job_id, cmd_id, mac_count, latency_cycles);
}

USCOPE_API uscope_status_t uscope_npu_ve_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t engine,
                                               uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                               const char *op_type, uint32_t len, uint32_t batch) {
  return USCOPE_FORWARD(ve_start, engine, ctx, job_id, cmd_id, op_type, len, batch);
}

USCOPE_API uscope_status_t uscope_npu_ve_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t engine,
                                             uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                             uint32_t latency_cycles) {
  return USCOPE_FORWARD(ve_end, engine, ctx, job_id, cmd_id, latency_cycles);
}

USCOPE_API uscope_status_t uscope_npu_sram_access(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                  uint64_t addr, uint16_t bank_id, uint8_t access_type,
                                                  const char *by, uint8_t conflict, uint32_t cmd_id,
                                                  uint32_t job_id) {
  return USCOPE_FORWARD(sram_access, ctx, addr, bank_id, access_type, by, conflict, cmd_id, job_id);
}

USCOPE_API uscope_status_t uscope_npu_sram_conflict(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                    uint16_t bank_id, uint32_t num_requests, uint32_t allowed,
                                                    const char *stalled_clients, uint32_t cmd_id) {
  return USCOPE_FORWARD(sram_conflict, ctx, bank_id, num_requests, allowed, stalled_clients, cmd_id);
}

USCOPE_API uscope_status_t uscope_npu_dram_tx_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                    uint32_t tx_id, uint16_t channel, uint64_t size_bytes,
                                                    uint32_t cmd_id) {
  return USCOPE_FORWARD(dram_tx_start, ctx, tx_id, channel, size_bytes, cmd_id);
}

USCOPE_API uscope_status_t uscope_npu_dram_tx_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                  uint32_t tx_id, uint16_t channel, uint64_t size_bytes) {
  return USCOPE_FORWARD(dram_tx_end, ctx, tx_id, channel, size_bytes);
}

USCOPE_API uscope_status_t uscope_npu_noc_tx_start(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                   uint32_t tx_id, uint16_t link_id, uint64_t size_bytes,
                                                   uint32_t cmd_id) {
  return USCOPE_FORWARD(noc_tx_start, ctx, tx_id, link_id, size_bytes, cmd_id);
}

USCOPE_API uscope_status_t uscope_npu_noc_tx_end(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                 uint32_t tx_id, uint16_t link_id, uint64_t size_bytes) {
  return USCOPE_FORWARD(noc_tx_end, ctx, tx_id, link_id, size_bytes);
}

USCOPE_API uscope_status_t uscope_npu_irq_emit(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                               uint32_t cmd_id, uint32_t token, uint32_t irq_line) {
  return USCOPE_FORWARD(irq_emit, ctx, cmd_id, token, irq_line);
}

USCOPE_API uscope_status_t uscope_npu_token_complete(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                                     uint32_t token, uint32_t cmd_id, const char *status) {
  return USCOPE_FORWARD(token_complete, ctx, token, cmd_id, status);
}

USCOPE_API uscope_status_t uscope_npu_counter_add(uscope_writer_t *w, const uscope_npu_t *h, uint16_t counter,
                                                  uint64_t delta) {
  return USCOPE_FORWARD(counter_add, counter, delta);
}

USCOPE_API uscope_status_t uscope_npu_error(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                            const char *component, const char *code, const char *msg,
                                            uint32_t cmd_id, uint32_t job_id) {
  return USCOPE_FORWARD(diagnostic, "uscope_npu_error", USCOPE_NPU_EV_ERROR, ctx, component, code, msg,
                        cmd_id, job_id);
}

USCOPE_API uscope_status_t uscope_npu_warn(uscope_writer_t *w, const uscope_npu_t *h, uint16_t ctx,
                                           const char *component, const char *code, const char *msg,
                                           uint32_t cmd_id, uint32_t job_id) {
  return USCOPE_FORWARD(diagnostic, "uscope_npu_warn", USCOPE_NPU_EV_WARN, ctx, component, code, msg, cmd_id,
                        job_id);
}

}  // extern "C"
