// uscope_sv_{cpu,noc,npu}_declare: SV strings and CSV lists into the config
// structs of include/uscope/protocols.h. The per-cycle protocol calls need no
// conversion: uscope_pkg imports them from libuscope directly.
//
// After a declaration the bridge records the names the protocol gave to the
// scope and enums, and the field names of its storages and events (from the
// ids accessor and the protocol's table, src/protocol/*_table.hpp: the same
// table the declaration was built from), so that uscope_sv_find and later
// CSV field lists (enum(pipeline_stage)) can refer to them. The storages and
// events themselves uscope_sv_find finds through libuscope.
#include "protocols.hpp"

#include <cstring>
#include <iterator>

#include "protocol/cpu_table.hpp"
#include "protocol/noc_table.hpp"
#include "protocol/npu_table.hpp"
#include "uscope/protocols.h"
#include "uscope/uscope_dpi.h"

namespace uscope_dpi {
namespace {

// Split on ',' outside parentheses: "rob:16(pc:u64,x:u8),iq:8" has two items.
std::vector<std::string> split_top(const std::string &text, const char *what) {
  std::vector<std::string> out;
  if (trim(text).empty()) return out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) fail(USCOPE_DPI_ERR_SYNTAX, format("%s: unbalanced ')' in \"%s\"", what, text.c_str()));
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (depth != 0) fail(USCOPE_DPI_ERR_SYNTAX, format("%s: unbalanced '(' in \"%s\"", what, text.c_str()));
  out.push_back(trim(cur));
  return out;
}

// A list of names kept alive with the const char * array a config points to.
struct NameList {
  std::vector<std::string> names;
  std::vector<const char *> ptrs;
  explicit NameList(const std::string &csv) : names(split_csv(csv)) {
    for (const std::string &n : names) ptrs.push_back(n.c_str());
  }
  const char *const *data() const { return ptrs.empty() ? nullptr : ptrs.data(); }
  uint16_t size(const char *what) const {
    if (ptrs.size() > 0xFFFF) fail(USCOPE_ERR_LIMIT, format("%s: too many names", what));
    return static_cast<uint16_t>(ptrs.size());
  }
};

// Field specs resolved into uscope_field_t, names owned by the specs.
struct FieldList {
  std::vector<FieldSpec> specs;
  std::vector<uscope_field_t> fields;
  FieldList(const Schema &s, std::vector<FieldSpec> in, const std::string &what) : specs(std::move(in)) {
    for (const FieldSpec &f : specs) {
      uscope_field_t u{};
      u.name = f.name.c_str();
      u.type = f.type;
      if (f.type == USCOPE_FT_ENUM) {
        if (s.names.enums.has(f.enum_ref)) u.enum_id = static_cast<uint8_t>(s.names.enums.one("enum", f.enum_ref));
        else if (!f.enum_ref.empty() && f.enum_ref.find_first_not_of("0123456789") == std::string::npos &&
                 f.enum_ref.size() <= 3 && std::stoi(f.enum_ref) < 255)
          u.enum_id = static_cast<uint8_t>(std::stoi(f.enum_ref));
        else
          fail(USCOPE_ERR_NOT_FOUND, format("%s: field \"%s\": no enum named \"%s\"", what.c_str(),
                                            f.name.c_str(), f.enum_ref.c_str()));
      }
      fields.push_back(u);
    }
  }
  const uscope_field_t *data() const { return fields.empty() ? nullptr : fields.data(); }
  uint16_t size() const { return static_cast<uint16_t>(fields.size()); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const FieldSpec &f : specs) out.push_back(f.name);
    return out;
  }
};

// "name:slots(extra fields)" items.
template <class Def>
struct BufferList {
  std::vector<std::string> names;
  std::vector<uint16_t> slots;
  std::vector<std::unique_ptr<FieldList>> extras;
  std::vector<Def> defs;
  BufferList(const Schema &s, const std::string &text, const char *what) {
    for (const std::string &item : split_top(text, what)) {
      std::string head = item, fields;
      const size_t paren = item.find('(');
      if (paren != std::string::npos) {
        if (item.back() != ')')
          fail(USCOPE_DPI_ERR_SYNTAX, format("%s: \"%s\": text after ')'", what, item.c_str()));
        head = trim(item.substr(0, paren));
        fields = item.substr(paren + 1, item.size() - paren - 2);
      }
      const size_t colon = head.find(':');
      uint64_t n = 0;
      if (colon == std::string::npos || !parse_u64(head.substr(colon + 1), &n) || n == 0 || n > 0xFFFF)
        fail(USCOPE_DPI_ERR_SYNTAX,
             format("%s: \"%s\" is not name:slots with 1..65535 slots", what, item.c_str()));
      names.push_back(trim(head.substr(0, colon)));
      slots.push_back(static_cast<uint16_t>(n));
      const std::string ctx = std::string(what) + " \"" + names.back() + "\"";
      extras.emplace_back(new FieldList(s, parse_fields(fields, false, ctx.c_str()), ctx));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      Def d{};
      d.name = names[i].c_str();
      d.num_slots = slots[i];
      d.extra_fields = extras[i]->data();
      d.num_extra_fields = extras[i]->size();
      defs.push_back(d);
    }
  }
  const Def *data() const { return defs.empty() ? nullptr : defs.data(); }
  uint16_t size() const { return static_cast<uint16_t>(defs.size()); }
};

const char *opt(const char *s) { return s && *s ? s : nullptr; }
std::string req(const char *s, const char *what) {
  if (!s) fail(USCOPE_ERR_INVALID_ARGUMENT, std::string(what) + " is null");
  return s;
}
uint16_t u16(unsigned v, const char *what) {
  if (v > 0xFFFF) fail(USCOPE_ERR_INVALID_ARGUMENT, format("%s = %u does not fit 16 bits", what, v));
  return static_cast<uint16_t>(v);
}
uint16_t parent_of(int parent) { return scope_ref(parent, "parent"); }
uint8_t clock_of(int clock) {
  if (clock == -1) return USCOPE_CLOCK_INHERIT;
  if (clock < 0 || clock >= 0xFF) fail(USCOPE_ERR_INVALID_ARGUMENT, format("clock id %d is neither -1 nor 0..254", clock));
  return static_cast<uint8_t>(clock);
}

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string> &tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

void name_scope(Names &n, const std::string &name, int id) { n.scopes.add(name, id); }
void name_enum(Names &n, const std::string &name, int id, std::vector<std::string> values) {
  n.enums.add(name, id);
  n.enum_values.emplace(id, std::move(values));
}
void name_storage(Names &n, int id, std::vector<std::string> fields) {
  if (id == 0xFFFF) return;  // not declared
  n.storage_fields.emplace(id, std::move(fields));
}
void name_event(Names &n, int id, std::vector<std::string> fields) {
  n.event_fields.emplace(id, std::move(fields));
}

namespace table = uscope::proto::table;

std::vector<std::string> names_of(table::Span<table::Field> fields) {
  std::vector<std::string> out;
  for (const table::Field &f : fields) out.push_back(f.name);
  return out;
}
std::vector<std::string> names_of(table::Span<const char *> names) { return {names.begin(), names.end()}; }

// The protocol's enums as the declaration made them: the table's values, or
// the config's list (config[i], empty for a fixed enum) where the table takes one.
template <class Ids, size_t N>
void name_enums(Names &n, table::Span<table::Enum> enums, uint8_t Ids::*const (&id_of)[N], const Ids &ids,
                const std::vector<std::string> *config) {
  for (uint16_t i = 0; i < enums.size; ++i) {
    const table::Enum &e = enums[i];
    const bool from_config = e.source == table::Values::kConfig ||
                             (e.source == table::Values::kOrDefault && !config[i].empty());
    name_enum(n, e.name, ids.*id_of[i], from_config ? config[i] : names_of(e.values));
  }
}

// The standard counters, then the config's: each a storage of one field.
void name_counters(Names &n, const uint16_t *ids, uint16_t num_ids, size_t num_counters) {
  for (uint16_t i = 0; i < num_ids && i < num_counters; ++i) name_storage(n, ids[i], {table::kCounterField.name});
}

}  // namespace

// ── cpu ──

void *cpu_declare(Schema &s, const CpuArgs &a) {
  const std::string scope = req(a.scope_name, "scope_name");
  const std::string ctx = "cpu \"" + scope + "\"";
  const std::string isa = req(a.isa, "isa");
  NameList stages(req(a.stages, "stages"));
  NameList counters(a.counters ? a.counters : "");
  NameList stalls(a.stall_reasons ? a.stall_reasons : "");
  BufferList<uscope_cpu_buffer_def_t> buffers(s, a.buffers ? a.buffers : "", "buffers");
  FieldList entity(s, parse_fields(a.entity_fields ? a.entity_fields : "", false, "entity_fields"),
                   "entity_fields");

  uscope_cpu_config_t cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = scope.c_str();
  cfg.parent_scope_id = parent_of(a.parent);
  cfg.clock_id = clock_of(a.clock);
  cfg.isa = isa.c_str();
  cfg.stages = stages.data();
  cfg.num_stages = stages.size("stages");
  cfg.max_entities = u16(a.max_entities, "max_entities");
  cfg.stall_reasons = stalls.data();
  cfg.num_stall_reasons = stalls.size("stall_reasons");
  cfg.buffers = buffers.data();
  cfg.num_buffers = buffers.size();
  cfg.counters = counters.data();
  cfg.num_counters = counters.size("counters");
  cfg.fetch_width = a.fetch_width;
  cfg.commit_width = a.commit_width;
  cfg.elf_path = opt(a.elf_path);
  cfg.vendor = opt(a.vendor);
  cfg.dut_name = opt(a.dut_name);
  cfg.entity_extra_fields = entity.data();
  cfg.num_entity_extra_fields = entity.size();

  uscope_cpu_t *cpu = nullptr;
  check(uscope_cpu_declare(s.raw, &cpu, &cfg), ctx);
  uscope_cpu_ids_t ids;
  std::memset(&ids, 0, sizeof ids);
  ids.struct_size = sizeof ids;
  const uscope_status_t st = uscope_cpu_ids(cpu, &ids);
  if (st != USCOPE_OK) {
    uscope_cpu_free(cpu);
    check(st, ctx);
  }
  try {
    Names &n = s.names;
    const int sc = ids.scope_id;
    name_scope(n, scope, sc);
    namespace cpu = uscope::proto::cpu;
    std::vector<std::string> lists[cpu::kNumEnums];
    lists[cpu::kPipelineStage] = stages.names;
    lists[cpu::kStallReason] = stalls.names;
    name_enums(n, cpu::kEnums, cpu::kEnumIds, ids, lists);
    name_storage(n, ids.entities, with(names_of(cpu::kEntities.fields), entity.names()));
    for (uint16_t i = 0; i < ids.num_buffers && i < buffers.names.size(); ++i)
      name_storage(n, ids.buffers[i],
                   with({cpu::kEntityFields[USCOPE_CPU_FIELD_ENTITY_ID].name}, buffers.extras[i]->names()));
    name_counters(n, ids.counters, ids.num_counters, std::size(cpu::kCounters) + counters.names.size());
    for (size_t i = 0; i < std::size(cpu::kEvents); ++i)
      name_event(n, ids.*cpu::kEventIds[i], names_of(cpu::kEvents[i].fields));
  } catch (...) {
    uscope_cpu_free(cpu);
    throw;
  }
  return cpu;
}

// ── noc ──

void *noc_declare(Schema &s, const NocArgs &a) {
  const std::string scope = req(a.scope_name, "scope_name");
  const std::string ctx = "noc \"" + scope + "\"";
  const std::string bus = req(a.bus_protocol, "bus_protocol");
  const std::string topology = req(a.topology, "topology");
  NameList stages(req(a.stages, "stages"));
  NameList opcodes(a.opcodes ? a.opcodes : "");
  NameList counters(a.counters ? a.counters : "");
  BufferList<uscope_noc_buffer_def_t> buffers(s, a.buffers ? a.buffers : "", "buffers");
  FieldList txn(s, parse_fields(a.txn_fields ? a.txn_fields : "", false, "txn_fields"), "txn_fields");

  uscope_noc_config_t cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = scope.c_str();
  cfg.parent_scope_id = parent_of(a.parent);
  cfg.clock_id = clock_of(a.clock);
  cfg.bus_protocol = bus.c_str();
  cfg.topology = topology.c_str();
  cfg.stages = stages.data();
  cfg.num_stages = stages.size("stages");
  cfg.opcodes = opcodes.data();
  cfg.num_opcodes = opcodes.size("opcodes");
  cfg.max_txns = u16(a.max_txns, "max_txns");
  cfg.buffers = buffers.data();
  cfg.num_buffers = buffers.size();
  cfg.counters = counters.data();
  cfg.num_counters = counters.size("counters");
  cfg.data_width = a.data_width;
  cfg.addr_width = a.addr_width;
  cfg.num_ports = a.num_ports;
  cfg.dim_x = a.dim_x;
  cfg.dim_y = a.dim_y;
  cfg.num_vcs = a.num_vcs;
  cfg.routing = opt(a.routing);
  cfg.txn_extra_fields = txn.data();
  cfg.num_txn_extra_fields = txn.size();

  uscope_noc_t *noc = nullptr;
  check(uscope_noc_declare(s.raw, &noc, &cfg), ctx);
  uscope_noc_ids_t ids;
  std::memset(&ids, 0, sizeof ids);
  ids.struct_size = sizeof ids;
  const uscope_status_t st = uscope_noc_ids(noc, &ids);
  if (st != USCOPE_OK) {
    uscope_noc_free(noc);
    check(st, ctx);
  }
  try {
    Names &n = s.names;
    const int sc = ids.scope_id;
    name_scope(n, scope, sc);
    namespace noc = uscope::proto::noc;
    std::vector<std::string> lists[noc::kNumEnums];
    lists[noc::kOpcode] = opcodes.names;
    lists[noc::kPipelineStage] = stages.names;
    name_enums(n, noc::kEnums, noc::kEnumIds, ids, lists);
    name_storage(n, ids.transactions, with(names_of(noc::kTransactions.fields), txn.names()));
    for (uint16_t i = 0; i < ids.num_buffers && i < buffers.names.size(); ++i)
      name_storage(n, ids.buffers[i],
                   with({noc::kTxnFields[USCOPE_NOC_FIELD_TXN_ID].name}, buffers.extras[i]->names()));
    name_counters(n, ids.counters, ids.num_counters, std::size(noc::kCounters) + counters.names.size());
    for (size_t i = 0; i < std::size(noc::kEvents); ++i)
      name_event(n, ids.*noc::kEventIds[i], names_of(noc::kEvents[i].fields));
    name_event(n, ids.txn_handoff, names_of(noc::kTxnHandoff.fields));
    // this noc's, on the parent scope
    n.event_aliases.emplace(scope + "." + noc::kTxnHandoff.name, ids.txn_handoff);
  } catch (...) {
    uscope_noc_free(noc);
    throw;
  }
  return noc;
}

// ── npu ──

void *npu_declare(Schema &s, const NpuArgs &a) {
  const std::string scope = req(a.scope_name, "scope_name");
  const std::string ctx = "npu \"" + scope + "\"";
  NameList counters(a.counters ? a.counters : "");

  uscope_npu_config_t cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.struct_size = sizeof cfg;
  cfg.scope_name = scope.c_str();
  cfg.parent_scope_id = parent_of(a.parent);
  cfg.clock_id = clock_of(a.clock);
  cfg.queue_depth = u16(a.queue_depth, "queue_depth");
  cfg.num_contexts = u16(a.num_contexts, "num_contexts");
  cfg.num_te = u16(a.num_te, "num_te");
  cfg.num_ve = u16(a.num_ve, "num_ve");
  cfg.num_dma_channels = u16(a.num_dma_channels, "num_dma_channels");
  cfg.num_sram_banks = u16(a.num_sram_banks, "num_sram_banks");
  cfg.num_dram_channels = u16(a.num_dram_channels, "num_dram_channels");
  cfg.num_noc_links = u16(a.num_noc_links, "num_noc_links");
  cfg.te_rows = a.te_rows;
  cfg.te_cols = a.te_cols;
  cfg.counters = counters.data();
  cfg.num_counters = counters.size("counters");
  cfg.dut_name = opt(a.dut_name);
  cfg.vendor = opt(a.vendor);
  cfg.sim_id = opt(a.sim_id);
  cfg.trace_version = opt(a.trace_version);
  cfg.sim_version = opt(a.sim_version);
  cfg.sim_config_json = opt(a.sim_config_json);

  uscope_npu_t *npu = nullptr;
  check(uscope_npu_declare(s.raw, &npu, &cfg), ctx);
  uscope_npu_ids_t ids;
  std::memset(&ids, 0, sizeof ids);
  ids.struct_size = sizeof ids;
  const uscope_status_t st = uscope_npu_ids(npu, &ids);
  if (st != USCOPE_OK) {
    uscope_npu_free(npu);
    check(st, ctx);
  }
  try {
    Names &n = s.names;
    const int sc = ids.scope_id;
    name_scope(n, scope, sc);
    namespace npu = uscope::proto::npu;
    const std::vector<std::string> fixed[npu::kNumEnums] = {};  // its enums are all the table's
    name_enums(n, npu::kEnums, npu::kEnumIds, ids, fixed);
    for (size_t i = 0; i < std::size(npu::kStorages); ++i)
      name_storage(n, ids.*npu::kStorageIds[i], names_of(npu::kStorages[i].fields));  // 0xFFFF: not declared
    name_counters(n, ids.counters, ids.num_counters, std::size(npu::kCounters) + counters.names.size());
    for (size_t i = 0; i < std::size(npu::kEvents); ++i) name_event(n, ids.events[i], names_of(npu::kEvents[i].fields));
  } catch (...) {
    uscope_npu_free(npu);
    throw;
  }
  return npu;
}

}  // namespace uscope_dpi
