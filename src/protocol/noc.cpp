#include "protocol/noc.hpp"

#include <iterator>

#include "protocol/noc_table.hpp"

namespace uscope::proto {

namespace {
constexpr uint16_t kNumStdCounters = std::size(noc::kCounters);
constexpr uint16_t kNumTxnFields = std::size(noc::kTxnFields);
}  // namespace

std::unique_ptr<uscope_noc> declare_noc(Declaration &d, const uscope_noc_config_t &c) {
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
    opcodes = noc::kDefaultOpcodes;
    num_opcodes = std::size(noc::kDefaultOpcodes);
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
  check_extra_fields(c.txn_extra_fields, c.num_txn_extra_fields, "cfg.txn_extra_fields", noc::kTransactions.fields);
  if (c.num_txn_extra_fields > 0xFFFF - kNumTxnFields)
    fail(USCOPE_ERR_LIMIT, "cfg.num_txn_extra_fields is %u; a storage has at most 65,535 fields",
         c.num_txn_extra_fields);
  NameSet names;
  names.add(noc::kTransactions.name, "the transaction catalog");
  for (const char *n : noc::kCounters) names.add(n, "a standard counter");
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
  ids.scope_id = b.add_scope(c.scope_name, c.parent_scope_id, noc::kTable.name, c.clock_id);
  const uint16_t sc = ids.scope_id;
  uint8_t enum_ids[noc::kNumEnums];
  NameList lists[noc::kNumEnums];
  lists[noc::kOpcode] = {opcodes, num_opcodes};
  lists[noc::kPipelineStage] = {c.stages, c.num_stages};
  d.enums(noc::kEnums, lists, enum_ids);
  for (uint16_t i = 0; i < noc::kNumEnums; ++i) ids.*noc::kEnumIds[i] = enum_ids[i];

  // ── storages (§3, §4, §6) ──
  ids.transactions =
      d.storage(noc::kTransactions, sc, c.max_txns, enum_ids, c.txn_extra_fields, c.num_txn_extra_fields);
  ids.num_txn_fields = static_cast<uint16_t>(kNumTxnFields + c.num_txn_extra_fields);
  h->add_buffers(b, sc, c.buffers, c.num_buffers);
  for (const char *n : noc::kCounters) h->counter_ids.push_back(d.counter(n, sc));
  for (uint16_t i = 0; i < c.num_counters; ++i) h->counter_ids.push_back(d.counter(c.counters[i], sc));

  // ── events (§5) ──
  for (uint16_t i = 0; i < std::size(noc::kEvents); ++i)
    ids.*noc::kEventIds[i] = d.event(noc::kEvents[i], sc, enum_ids);
  // txn_handoff (noc_table.hpp): on the parent, the nearest common ancestor
  // the declaration knows.
  const table::Event &ho = noc::kTxnHandoff;
  const uint16_t parent = d.schema().scopes[sc].parent_id;
  ids.handoff_scope_id = parent == USCOPE_NO_PARENT ? sc : parent;
  ids.txn_handoff = d.find_event(ho.name, ids.handoff_scope_id);
  if (ids.txn_handoff == 0xFFFF) {
    ids.txn_handoff = d.event(ho, ids.handoff_scope_id, enum_ids);
  } else {
    const EventDef &ev = d.schema().events[ids.txn_handoff];
    bool same = ev.fields.size() == ho.fields.size;
    for (size_t i = 0; same && i < ho.fields.size; ++i) {
      const char *n = d.schema().str(ev.fields[i].name);
      same = n && std::strcmp(n, ho.fields[i].name) == 0 && ev.fields[i].type == ho.fields[i].type;
    }
    if (!same)
      fail(USCOPE_ERR_SCHEMA,
           "scope %u has an event \"txn_handoff\" already whose fields are not those of noc §5.7",
           ids.handoff_scope_id);
  }

  // ── DUT properties: the spec's scope properties (§8), keyed by scope ──
  uint32_t period = 0;
  auto number = [](uint32_t v) { return v ? std::optional<std::string>(std::to_string(v)) : std::nullopt; };
  const std::optional<std::string> props[] = {
      USCOPE_NOC_PROTOCOL_VERSION,
      c.bus_protocol,
      c.topology,
      join(c.stages, c.num_stages),
      d.clock_period(sc, &period) ? std::optional<std::string>(std::to_string(period)) : std::nullopt,
      number(c.data_width),
      number(c.addr_width),
      number(c.num_ports),
      number(c.dim_x),
      number(c.dim_y),
      number(c.num_vcs),
      c.routing ? std::optional<std::string>(c.routing) : std::nullopt};
  static_assert(std::size(props) == std::size(noc::kProperties));
  d.properties(noc::kProperties, c.scope_name, props);

  h->publish(ids);
  return h;
}

}  // namespace uscope::proto

using uscope::proto::reject;

uscope_status_t uscope_noc::bad_port(const char *op, const char *what, unsigned port) const noexcept {
  return reject(USCOPE_ERR_VALUE_RANGE, "%s_%s: %s %u is not a port of scope \"%s\" (num_ports %u)", prefix_,
                op, what, port, scope_name.c_str(), num_ports);
}
