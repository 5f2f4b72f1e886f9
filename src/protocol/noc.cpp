#include "protocol/noc.hpp"

namespace uscope::proto {

namespace {
// Spec noc §5.3, §5.5; the default opcodes are the two every bus has.
const char *const kRetryReasons[] = {"target_busy", "no_credits", "vc_full", "arb_lost", "protocol_retry"};
const char *const kCreditDirections[] = {"grant", "consume"};
const char *const kDefaultOpcodes[] = {"read", "write"};
const char *const kStdCounters[] = {"bytes_tx", "bytes_rx", "arb_conflicts", "retries", "txn_completed"};
const char *const kTxnFields[] = {"txn_id", "opcode", "addr", "len", "size", "src_port", "dst_port"};
constexpr uint16_t kNumStdCounters = sizeof kStdCounters / sizeof *kStdCounters;
static_assert(kNumStdCounters == USCOPE_NOC_COUNTER_TXN_COMPLETED + 1);
}  // namespace

std::unique_ptr<uscope_noc> declare_noc(Declaration &d, const uscope_noc_config_t &c) {
  static_assert(uscope_noc::kNumRetryReasons == sizeof kRetryReasons / sizeof *kRetryReasons);
  static_assert(uscope_noc::kNumCreditDirections == sizeof kCreditDirections / sizeof *kCreditDirections);

  // ── the config ──
  if (!c.scope_name) fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.scope_name is NULL");
  if (!c.bus_protocol)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.bus_protocol is NULL; noc.bus_protocol is required (noc §8.1)");
  if (!c.topology)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.topology is NULL; noc.topology is required (noc §8.1)");
  check_names(c.stages, c.num_stages, "cfg.stages", true);
  const char *const *opcodes = c.opcodes;
  uint16_t num_opcodes = c.num_opcodes;
  if (!opcodes) {
    if (num_opcodes)
      fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.opcodes is NULL but cfg.num_opcodes is %u", num_opcodes);
    opcodes = kDefaultOpcodes;
    num_opcodes = 2;
  }
  check_names(opcodes, num_opcodes, "cfg.opcodes", false);
  if (c.max_txns == 0)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.max_txns is 0; the transaction catalog needs at least one slot");
  if (c.num_buffers && !c.buffers)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.buffers is NULL but cfg.num_buffers is %u", c.num_buffers);
  if (c.num_counters && !c.counters)
    fail(USCOPE_ERR_INVALID_ARGUMENT, "cfg.counters is NULL but cfg.num_counters is %u", c.num_counters);
  if (c.num_counters > 0xFFFF - kNumStdCounters)
    fail(USCOPE_ERR_LIMIT, "cfg.num_counters is %u; with the five standard ones that passes the u16 index",
         c.num_counters);
  check_extra_fields(c.txn_extra_fields, c.num_txn_extra_fields, "cfg.txn_extra_fields", kTxnFields, 7);
  if (c.num_txn_extra_fields > 0xFFFF - 7)
    fail(USCOPE_ERR_LIMIT, "cfg.num_txn_extra_fields is %u; a storage has at most 65,535 fields",
         c.num_txn_extra_fields);
  NameSet names;
  names.add("transactions", "the transaction catalog");
  for (const char *n : kStdCounters) names.add(n, "a standard counter");
  auto h = std::make_unique<uscope_noc>();
  h->check_buffers(names, c.buffers, c.num_buffers);
  for (uint16_t i = 0; i < c.num_counters; ++i) names.add(c.counters[i], "cfg.counters[]");
  d.require_unused_scope_name(c.scope_name);

  h->scope_name = c.scope_name;
  h->max_ids = c.max_txns;
  h->num_ports = c.num_ports;
  uscope_noc_ids_t &ids = h->ids;
  ids.struct_size = sizeof ids;
  ids.max_txns = c.max_txns;
  ids.num_stages = c.num_stages;
  ids.num_opcodes = num_opcodes;

  // ── scope and enums ──
  SchemaBuilder &b = d.b();
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, "noc", c.clock_id);
  const uint16_t sc = ids.scope_id;
  ids.opcode_enum = d.shared_enum("opcode", opcodes, num_opcodes);
  ids.pipeline_stage_enum = d.shared_enum("pipeline_stage", c.stages, c.num_stages);
  ids.retry_reason_enum = d.shared_enum("retry_reason", kRetryReasons, uscope_noc::kNumRetryReasons);
  ids.credit_direction_enum =
      d.shared_enum("credit_direction", kCreditDirections, uscope_noc::kNumCreditDirections);

  // ── storages (§3, §4, §6) ──
  std::vector<uscope_field_t> f = {
      {"txn_id", USCOPE_FT_U32, 0, 0, 0},  {"opcode", USCOPE_FT_ENUM, ids.opcode_enum, 0, 0},
      {"addr", USCOPE_FT_U64, 0, 0, 0},    {"len", USCOPE_FT_U16, 0, 0, 0},
      {"size", USCOPE_FT_U8, 0, 0, 0},     {"src_port", USCOPE_FT_U16, 0, 0, 0},
      {"dst_port", USCOPE_FT_U16, 0, 0, 0}};
  f.insert(f.end(), c.txn_extra_fields, c.txn_extra_fields + c.num_txn_extra_fields);
  ids.transactions = b.add_storage("transactions", sc, c.max_txns, USCOPE_SF_SPARSE, f.data(),
                                   static_cast<uint16_t>(f.size()), nullptr, 0);
  ids.num_txn_fields = static_cast<uint16_t>(f.size());
  h->add_buffers(b, sc, c.buffers, c.num_buffers);
  for (const char *n : kStdCounters) h->counter_ids.push_back(d.counter(n, sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events (§5) ──
  const uscope_field_t st[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0},
                               {"stage", USCOPE_FT_ENUM, ids.pipeline_stage_enum, 0, 0}};
  ids.stage_transition = b.add_event("stage_transition", sc, st, 2);
  const uscope_field_t bt[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0},
                               {"beat_num", USCOPE_FT_U16, 0, 0, 0},
                               {"data_bytes", USCOPE_FT_U16, 0, 0, 0}};
  ids.beat = b.add_event("beat", sc, bt, 3);
  const uscope_field_t rt[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0},
                               {"reason", USCOPE_FT_ENUM, ids.retry_reason_enum, 0, 0}};
  ids.retry = b.add_event("retry", sc, rt, 2);
  const uscope_field_t to[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0},
                               {"threshold_cycles", USCOPE_FT_U32, 0, 0, 0}};
  ids.timeout = b.add_event("timeout", sc, to, 2);
  const uscope_field_t lc[] = {{"port", USCOPE_FT_U16, 0, 0, 0},
                               {"direction", USCOPE_FT_ENUM, ids.credit_direction_enum, 0, 0},
                               {"credits", USCOPE_FT_U8, 0, 0, 0}};
  ids.link_credit = b.add_event("link_credit", sc, lc, 3);
  const uscope_field_t ar[] = {{"winner_txn", USCOPE_FT_U32, 0, 0, 0},
                               {"port", USCOPE_FT_U16, 0, 0, 0},
                               {"num_contenders", USCOPE_FT_U8, 0, 0, 0}};
  ids.arb_decision = b.add_event("arb_decision", sc, ar, 3);
  const uscope_field_t an[] = {{"txn_id", USCOPE_FT_U32, 0, 0, 0}, {"text", USCOPE_FT_STRING_REF, 0, 0, 0}};
  ids.annotate = b.add_event("annotate", sc, an, 2);
  // §5.7: txn_handoff lives at a common ancestor of the scopes it joins. The
  // parent is the nearest one the declaration knows; every noc declared under
  // the same parent shares the one event type there.
  const uscope_field_t ho[] = {{"src_scope", USCOPE_FT_U16, 0, 0, 0},
                               {"src_txn_id", USCOPE_FT_U32, 0, 0, 0},
                               {"dst_scope", USCOPE_FT_U16, 0, 0, 0},
                               {"dst_txn_id", USCOPE_FT_U32, 0, 0, 0}};
  const uint16_t parent = d.schema().scopes[sc].parent_id;
  ids.handoff_scope_id = parent == USCOPE_NO_PARENT ? sc : parent;
  ids.txn_handoff = d.find_event("txn_handoff", ids.handoff_scope_id);
  if (ids.txn_handoff == 0xFFFF) {
    ids.txn_handoff = b.add_event("txn_handoff", ids.handoff_scope_id, ho, 4);
  } else {
    const EventDef &ev = d.schema().events[ids.txn_handoff];
    bool same = ev.fields.size() == 4;
    for (size_t i = 0; same && i < 4; ++i) {
      const char *n = d.schema().str(ev.fields[i].name);
      same = n && std::strcmp(n, ho[i].name) == 0 && ev.fields[i].type == ho[i].type;
    }
    if (!same)
      fail(USCOPE_ERR_SCHEMA,
           "scope %u has an event \"txn_handoff\" already whose fields are not those of noc §5.7",
           ids.handoff_scope_id);
  }

  // ── DUT properties: the spec's scope properties (§8), keyed by scope ──
  const std::string k = std::string(c.scope_name) + "/";
  d.property(k + "noc.protocol_version", USCOPE_NOC_PROTOCOL_VERSION);
  d.property(k + "noc.bus_protocol", c.bus_protocol);
  d.property(k + "noc.topology", c.topology);
  d.property(k + "noc.pipeline_stages", join(c.stages, c.num_stages));
  uint32_t period = 0;
  if (d.clock_period(sc, &period)) d.property(k + "clock.period_ps", std::to_string(period));
  const std::pair<const char *, uint32_t> optional[] = {
      {"noc.data_width", c.data_width}, {"noc.addr_width", c.addr_width}, {"noc.num_ports", c.num_ports},
      {"noc.dim_x", c.dim_x},           {"noc.dim_y", c.dim_y},           {"noc.num_vcs", c.num_vcs}};
  for (const auto &[key, v] : optional)
    if (v) d.property(k + key, std::to_string(v));
  if (c.routing) d.property(k + "noc.routing", c.routing);

  h->publish(ids);
  return h;
}

}  // namespace uscope::proto

using uscope::proto::reject;

uscope_status_t uscope_noc::bad_port(const char *op, const char *what, unsigned port) const noexcept {
  return reject(USCOPE_ERR_VALUE_RANGE, "%s_%s: %s %u is not a port of scope \"%s\" (num_ports %u)", prefix_,
                op, what, port, scope_name.c_str(), num_ports);
}
