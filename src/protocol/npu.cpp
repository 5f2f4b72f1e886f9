#include "protocol/npu.hpp"

#include <iterator>

#include "protocol/npu_table.hpp"

namespace uscope::proto {

namespace {
// The per-cycle calls (npu.hpp) set storage fields by these indices.
static_assert(std::size(npu::kCmdQueueFields) == uscope_npu::kCqNumFields);
static_assert(std::size(npu::kContextFields) == uscope_npu::kCxNumFields);
static_assert(std::size(npu::kTeFields) == uscope_npu::kTeNumFields);
static_assert(std::size(npu::kVeFields) == uscope_npu::kVeNumFields);
static_assert(std::size(npu::kDmaFields) == uscope_npu::kDmaNumFields);
static_assert(std::size(npu::kChannelFields) == uscope_npu::kChNumFields);
static_assert(std::size(npu::kBankFields) == uscope_npu::kBankNumFields);
}  // namespace

std::unique_ptr<uscope_npu> declare_npu(Declaration &d, const uscope_npu_config_t &c) {
  // ── the config ──
  if (!c.scope_name) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.scope_name is NULL");
  const std::pair<const char *, uint16_t> required[] = {{"cfg.queue_depth", c.queue_depth},
                                                        {"cfg.num_te", c.num_te},
                                                        {"cfg.num_ve", c.num_ve},
                                                        {"cfg.num_dma_channels", c.num_dma_channels}};
  for (const auto &[what, n] : required)
    if (n == 0) fail(USCOPE_ERR_INVALID_ARGUMENT, "%s is 0; its storage needs at least one slot", what);
  // The largest slot count whose last index is not a sentinel.
  const std::pair<const char *, uint16_t> bounded[] = {{"cfg.num_contexts", c.num_contexts},
                                                       {"cfg.num_sram_banks", c.num_sram_banks},
                                                       {"cfg.num_dram_channels", c.num_dram_channels},
                                                       {"cfg.num_noc_links", c.num_noc_links}};
  for (const auto &[what, n] : bounded)
    if (n > USCOPE_NPU_NULL16)
      fail(USCOPE_ERR_LIMIT, "%s is %u; 0xFFFE and 0xFFFF are the null and absent sentinels", what, n);
  if (!c.te_rows != !c.te_cols)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.te_rows is %u and cfg.te_cols is %u; give both or neither",
         c.te_rows, c.te_cols);
  if (c.num_counters && !c.counters)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.counters is NULL but cfg.num_counters is %u", c.num_counters);
  if (c.num_counters > 0xFFFF - USCOPE_NPU_NUM_STD_COUNTERS)
    fail(USCOPE_ERR_LIMIT, "cfg.num_counters is %u; with the nine standard ones that passes the u16 index",
         c.num_counters);
  NameSet names;
  for (const table::Storage &st : npu::kStorages) names.add(st.name, "a protocol storage");
  for (const char *n : npu::kCounters) names.add(n, "a standard counter");
  for (uint16_t i = 0; i < c.num_counters; ++i) names.add(c.counters[i], "cfg.counters[]");
  d.require_unused_scope_name(c.scope_name);

  auto h = std::make_unique<uscope_npu>();
  h->scope_name = c.scope_name;
  uscope_npu_ids_t &ids = h->ids;
  ids.struct_size = sizeof ids;
  ids.queue_depth = c.queue_depth;
  ids.num_contexts = c.num_contexts ? c.num_contexts : 16;
  ids.num_te = c.num_te;
  ids.num_ve = c.num_ve;
  ids.num_dma_channels = c.num_dma_channels;
  ids.num_sram_banks = c.num_sram_banks;
  ids.num_dram_channels = c.num_dram_channels;
  ids.num_noc_links = c.num_noc_links;

  // ── scope and enums ──
  SchemaBuilder &b = d.b();
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, npu::kTable.name, c.clock_id);
  const uint16_t sc = ids.scope_id;
  uint8_t enum_ids[npu::kNumEnums];
  const NameList none[npu::kNumEnums] = {};  // all fixed
  d.enums(npu::kEnums, none, enum_ids);
  for (uint16_t i = 0; i < npu::kNumEnums; ++i) ids.*npu::kEnumIds[i] = enum_ids[i];

  // ── storages (docs/npu-protocol.md §3), in table order; those of 0 slots
  // (the optional ones) are left out ──
  const uint16_t slots[] = {c.queue_depth,      ids.num_contexts,     c.num_te,
                            c.num_ve,           c.num_dma_channels,   c.num_sram_banks,
                            c.num_dram_channels, c.num_noc_links};
  static_assert(std::size(slots) == std::size(npu::kStorages));
  for (size_t i = 0; i < std::size(npu::kStorages); ++i)
    ids.*npu::kStorageIds[i] =
        slots[i] ? d.storage(npu::kStorages[i], sc, slots[i], enum_ids) : uscope_npu::kNoStorage;
  for (const char *n : npu::kCounters) h->counter_ids.push_back(d.counter(n, sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events, ids.events[] by USCOPE_NPU_EV_* ──
  for (uint16_t e = 0; e < std::size(npu::kEvents); ++e) ids.events[e] = d.event(npu::kEvents[e], sc, enum_ids);

  // ── DUT properties: trace-wide ones once per trace, the instance's under
  // its scope name (as for noc) ──
  auto text = [](const char *v) { return v ? std::optional<std::string>(v) : std::nullopt; };
  const std::optional<std::string> props[] = {
      text(c.dut_name),
      USCOPE_NPU_PROTOCOL_VERSION,
      text(c.vendor),
      text(c.sim_id),
      text(c.trace_version),
      text(c.sim_version),
      text(c.sim_config_json),
      c.te_rows ? std::optional<std::string>(std::to_string(c.te_rows) + "x" + std::to_string(c.te_cols))
                : std::nullopt};
  static_assert(std::size(props) == std::size(npu::kProperties));
  d.properties(npu::kProperties, c.scope_name, props);

  ids.num_counters = static_cast<uint16_t>(h->counter_ids.size());
  ids.counters = h->counter_ids.data();
  return h;
}

}  // namespace uscope::proto

using uscope::proto::reject;

uscope_status_t uscope_npu::bad_context(const char *fn, uint16_t ctx) const noexcept {
  return reject(
      USCOPE_ERR_UNKNOWN_SLOT,
      "%s: ctx %u is not a context of scope \"%s\" (num_contexts %u; USCOPE_NPU_NO_CONTEXT for none)", fn,
      ctx, scope_name.c_str(), ids.num_contexts);
}
uscope_status_t uscope_npu::bad_unit(const char *fn, const char *what, unsigned v, const char *storage,
                                     unsigned count) const noexcept {
  return reject(USCOPE_ERR_UNKNOWN_SLOT, "%s: %s %u is not a slot of %s of scope \"%s\", which has %u", fn,
                what, v, storage, scope_name.c_str(), count);
}
uscope_status_t uscope_npu::bad_enum(const char *fn, const char *what, unsigned v,
                                     unsigned count) const noexcept {
  return reject(USCOPE_ERR_VALUE_RANGE, "%s: %s %u is out of range (the enum has %u values)", fn, what, v,
                count);
}
uscope_status_t uscope_npu::bad_conflict(unsigned v) const noexcept {
  return reject(USCOPE_ERR_VALUE_RANGE,
                "uscope_npu_sram_access: conflict %u; it is 0, 1, USCOPE_NPU_ABSENT8 or USCOPE_NPU_NULL8 "
                "(scope \"%s\")",
                v, scope_name.c_str());
}
