#include "protocol/npu.hpp"

namespace uscope::proto {

namespace {
constexpr uint8_t U8 = USCOPE_FT_U8, U16 = USCOPE_FT_U16, U32 = USCOPE_FT_U32, U64 = USCOPE_FT_U64,
                  STR = USCOPE_FT_STRING_REF, ENUM = USCOPE_FT_ENUM;
// Placeholders for the enum ids, patched in when the enums exist.
constexpr uint8_t kSourceEnum = 0xF0, kAccessEnum = 0xF1, kStateEnum = 0xF2;

struct FieldSpec {
  const char *name;
  uint8_t type;
  uint8_t enum_ref;  // one of the placeholders for ENUM fields
};
struct EventSpec {
  const char *name;
  std::vector<FieldSpec> fields;
};

// One µScope event type per JSONL event type (npu-trace-jsonl.md §4), named
// as its event_type in lower case; the JSONL fields in JSONL order under their
// JSONL keys, then the protocol's own: the storage slot it updates (slot,
// engine) and ctx. docs/npu-protocol.md §4 has the same tables; the per-cycle
// calls of npu.hpp pack payloads in this order.
const std::vector<EventSpec> &event_specs() {
  static const std::vector<EventSpec> specs = {
      {"cmd_enqueue",
       {{"cmd_id", U32, 0},
        {"cmd_type", STR, 0},
        {"source", ENUM, kSourceEnum},
        {"token", U32, 0},
        {"desc_addr", U64, 0},
        {"layer_id", U32, 0},
        {"block_id", U32, 0},
        {"phase", STR, 0},
        {"slot", U16, 0},
        {"ctx", U16, 0}}},
      {"cmd_start", {{"cmd_id", U32, 0}, {"slot", U16, 0}, {"ctx", U16, 0}}},
      {"cmd_end", {{"cmd_id", U32, 0}, {"status", STR, 0}, {"slot", U16, 0}, {"ctx", U16, 0}}},
      {"job_issue",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"job_type", STR, 0},
        {"tile_id", U32, 0},
        {"vec_chunk_id", U32, 0},
        {"ctx", U16, 0}}},
      {"job_done",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"job_type", STR, 0},
        {"latency_cycles", U32, 0},
        {"ctx", U16, 0}}},
      {"dma_start",
       {{"tx_id", U32, 0},
        {"channel", U16, 0},
        {"direction", STR, 0},
        {"src_addr", U64, 0},
        {"dst_addr", U64, 0},
        {"size_bytes", U64, 0},
        {"cmd_id", U32, 0},
        {"job_id", U32, 0},
        {"ctx", U16, 0}}},
      {"dma_end",
       {{"tx_id", U32, 0}, {"channel", U16, 0}, {"cmd_id", U32, 0}, {"job_id", U32, 0}, {"ctx", U16, 0}}},
      {"te_start",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"m", U32, 0},
        {"n", U32, 0},
        {"k", U32, 0},
        {"tile_m", U32, 0},
        {"tile_n", U32, 0},
        {"tile_k", U32, 0},
        {"engine", U16, 0},
        {"ctx", U16, 0}}},
      {"te_end",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"mac_count", U64, 0},
        {"latency_cycles", U32, 0},
        {"engine", U16, 0},
        {"ctx", U16, 0}}},
      {"ve_start",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"op_type", STR, 0},
        {"len", U32, 0},
        {"batch", U32, 0},
        {"engine", U16, 0},
        {"ctx", U16, 0}}},
      {"ve_end",
       {{"job_id", U32, 0},
        {"cmd_id", U32, 0},
        {"latency_cycles", U32, 0},
        {"engine", U16, 0},
        {"ctx", U16, 0}}},
      {"sram_access",
       {{"addr", U64, 0},
        {"bank_id", U16, 0},
        {"access_type", ENUM, kAccessEnum},
        {"by", STR, 0},
        {"conflict", U8, 0},
        {"cmd_id", U32, 0},
        {"job_id", U32, 0},
        {"ctx", U16, 0}}},
      {"sram_conflict",
       {{"bank_id", U16, 0},
        {"num_requests", U32, 0},
        {"allowed", U32, 0},
        {"stalled_clients", STR, 0},
        {"cmd_id", U32, 0},
        {"ctx", U16, 0}}},
      {"dram_tx_start",
       {{"tx_id", U32, 0}, {"channel", U16, 0}, {"size_bytes", U64, 0}, {"cmd_id", U32, 0}, {"ctx", U16, 0}}},
      {"dram_tx_end", {{"tx_id", U32, 0}, {"channel", U16, 0}, {"ctx", U16, 0}}},
      {"noc_tx_start",
       {{"tx_id", U32, 0}, {"link_id", U16, 0}, {"size_bytes", U64, 0}, {"cmd_id", U32, 0}, {"ctx", U16, 0}}},
      {"noc_tx_end", {{"tx_id", U32, 0}, {"link_id", U16, 0}, {"ctx", U16, 0}}},
      {"irq_emit", {{"cmd_id", U32, 0}, {"token", U32, 0}, {"irq_line", U32, 0}, {"ctx", U16, 0}}},
      {"token_complete", {{"token", U32, 0}, {"cmd_id", U32, 0}, {"status", STR, 0}, {"ctx", U16, 0}}},
      {"error",
       {{"component", STR, 0},
        {"code", STR, 0},
        {"msg", STR, 0},
        {"cmd_id", U32, 0},
        {"job_id", U32, 0},
        {"ctx", U16, 0}}},
      {"warn",
       {{"component", STR, 0},
        {"code", STR, 0},
        {"msg", STR, 0},
        {"cmd_id", U32, 0},
        {"job_id", U32, 0},
        {"ctx", U16, 0}}},
  };
  return specs;
}

const char *const kSources[] = {"ISA", "MMIO"};
const char *const kAccessTypes[] = {"READ", "WRITE"};
const char *const kCmdStates[] = {"QUEUED", "RUNNING"};
const char *const kStdCounters[] = {"macs",           "dma_bytes",  "sram_accesses",
                                    "sram_conflicts", "cmds_done",  "jobs_done",
                                    "tokens_done",    "dram_bytes", "noc_bytes"};
static_assert(sizeof kStdCounters / sizeof *kStdCounters == USCOPE_NPU_NUM_STD_COUNTERS);
}  // namespace

std::unique_ptr<uscope_npu> declare_npu(Declaration &d, const uscope_npu_config_t &c) {
  static_assert(uscope_npu::kNumSources == sizeof kSources / sizeof *kSources);
  static_assert(uscope_npu::kNumAccessTypes == sizeof kAccessTypes / sizeof *kAccessTypes);

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
  for (const char *n : {"cmd_queue", "contexts", "te", "ve", "dma", "sram_banks", "dram", "noc"})
    names.add(n, "a protocol storage");
  for (const char *n : kStdCounters) names.add(n, "a standard counter");
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
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, "npu", c.clock_id);
  const uint16_t sc = ids.scope_id;
  ids.cmd_source_enum = d.shared_enum("cmd_source", kSources, uscope_npu::kNumSources);
  ids.access_type_enum = d.shared_enum("access_type", kAccessTypes, uscope_npu::kNumAccessTypes);
  ids.cmd_state_enum = d.shared_enum("cmd_state", kCmdStates, 2);

  // ── storages (docs/npu-protocol.md §3). cmd_queue comes first: it is the
  // scope's entity catalog, the commands being the NPU's instructions ──
  constexpr uint16_t kSparse = USCOPE_SF_SPARSE, kBuffer = USCOPE_SF_SPARSE | USCOPE_SF_BUFFER;
  {
    const uscope_field_t f[] = {{"cmd_id", U32, 0, 0, 0},   {"state", ENUM, ids.cmd_state_enum, 0, 0},
                                {"cmd_type", STR, 0, 0, 0}, {"source", ENUM, ids.cmd_source_enum, 0, 0},
                                {"token", U32, 0, 0, 0},    {"desc_addr", U64, 0, 0, 0},
                                {"layer_id", U32, 0, 0, 0}, {"block_id", U32, 0, 0, 0},
                                {"phase", STR, 0, 0, 0},    {"ctx", U16, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kCqNumFields);
    ids.cmd_queue =
        b.add_storage("cmd_queue", sc, c.queue_depth, kSparse, f, uscope_npu::kCqNumFields, nullptr, 0);
  }
  {
    const uscope_field_t f[] = {
        {"core_id", U16, 0, 0, 0},   {"npu_id", U16, 0, 0, 0},     {"tenant_id", U32, 0, 0, 0},
        {"layer_id", U32, 0, 0, 0},  {"block_id", U32, 0, 0, 0},   {"head_id", U32, 0, 0, 0},
        {"token_idx", U32, 0, 0, 0}, {"seq_len", U32, 0, 0, 0},    {"phase", STR, 0, 0, 0},
        {"thread_id", U32, 0, 0, 0}, {"model_name", STR, 0, 0, 0}, {"precision", STR, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kCxNumFields);
    ids.contexts =
        b.add_storage("contexts", sc, ids.num_contexts, kSparse, f, uscope_npu::kCxNumFields, nullptr, 0);
  }
  {
    const uscope_field_t f[] = {{"job_id", U32, 0, 0, 0}, {"cmd_id", U32, 0, 0, 0}, {"m", U32, 0, 0, 0},
                                {"n", U32, 0, 0, 0},      {"k", U32, 0, 0, 0},      {"ctx", U16, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kTeNumFields);
    ids.te = b.add_storage("te", sc, c.num_te, kBuffer, f, uscope_npu::kTeNumFields, nullptr, 0);
  }
  {
    const uscope_field_t f[] = {{"job_id", U32, 0, 0, 0}, {"cmd_id", U32, 0, 0, 0}, {"op_type", STR, 0, 0, 0},
                                {"len", U32, 0, 0, 0},    {"batch", U32, 0, 0, 0},  {"ctx", U16, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kVeNumFields);
    ids.ve = b.add_storage("ve", sc, c.num_ve, kBuffer, f, uscope_npu::kVeNumFields, nullptr, 0);
  }
  {
    const uscope_field_t f[] = {{"tx_id", U32, 0, 0, 0},      {"cmd_id", U32, 0, 0, 0},
                                {"job_id", U32, 0, 0, 0},     {"direction", STR, 0, 0, 0},
                                {"src_addr", U64, 0, 0, 0},   {"dst_addr", U64, 0, 0, 0},
                                {"size_bytes", U64, 0, 0, 0}, {"ctx", U16, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kDmaNumFields);
    ids.dma = b.add_storage("dma", sc, c.num_dma_channels, kBuffer, f, uscope_npu::kDmaNumFields, nullptr, 0);
  }
  ids.sram_banks = ids.dram = ids.noc = uscope_npu::kNoStorage;
  if (c.num_sram_banks) {
    const uscope_field_t f[] = {{"accesses", U64, 0, 0, 0}, {"conflicts", U64, 0, 0, 0}};
    static_assert(sizeof f / sizeof *f == uscope_npu::kBankNumFields);
    // Dense: every bank always exists; its two counts only grow.
    ids.sram_banks =
        b.add_storage("sram_banks", sc, c.num_sram_banks, 0, f, uscope_npu::kBankNumFields, nullptr, 0);
  }
  const uscope_field_t ch[] = {
      {"tx_id", U32, 0, 0, 0}, {"cmd_id", U32, 0, 0, 0}, {"size_bytes", U64, 0, 0, 0}, {"ctx", U16, 0, 0, 0}};
  static_assert(sizeof ch / sizeof *ch == uscope_npu::kChNumFields);
  if (c.num_dram_channels)
    ids.dram =
        b.add_storage("dram", sc, c.num_dram_channels, kBuffer, ch, uscope_npu::kChNumFields, nullptr, 0);
  if (c.num_noc_links)
    ids.noc = b.add_storage("noc", sc, c.num_noc_links, kBuffer, ch, uscope_npu::kChNumFields, nullptr, 0);
  for (const char *n : kStdCounters) h->counter_ids.push_back(d.counter(n, sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events ──
  const auto &specs = event_specs();
  static_assert(USCOPE_NPU_NUM_EVENTS == 21);
  if (specs.size() != USCOPE_NPU_NUM_EVENTS)
    fail(USCOPE_ERR_INTERNAL, "npu event table has %zu entries", specs.size());
  std::vector<uscope_field_t> f;
  for (size_t e = 0; e < specs.size(); ++e) {
    f.clear();
    for (const FieldSpec &fs : specs[e].fields) {
      const uint8_t en = fs.enum_ref == kSourceEnum   ? ids.cmd_source_enum
                         : fs.enum_ref == kAccessEnum ? ids.access_type_enum
                         : fs.enum_ref == kStateEnum  ? ids.cmd_state_enum
                                                      : 0;
      f.push_back({fs.name, fs.type, en, 0, 0});
    }
    ids.events[e] = b.add_event(specs[e].name, sc, f.data(), static_cast<uint16_t>(f.size()));
  }

  // ── DUT properties: trace-wide ones once per trace, the instance's under
  // its scope name (as for noc) ──
  if (c.dut_name) d.property("dut_name", c.dut_name);
  d.property("npu.protocol_version", USCOPE_NPU_PROTOCOL_VERSION);
  const std::pair<const char *, const char *> global[] = {{"npu.vendor", c.vendor},
                                                          {"npu.sim_id", c.sim_id},
                                                          {"npu.trace_version", c.trace_version},
                                                          {"npu.sim_version", c.sim_version},
                                                          {"npu.sim_config", c.sim_config_json}};
  for (const auto &[key, v] : global)
    if (v) d.property(key, v);
  if (c.te_rows)
    d.property(std::string(c.scope_name) + "/npu.te_dims",
               std::to_string(c.te_rows) + "x" + std::to_string(c.te_cols));

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
