// Key and event-type tables of the npu protocol and the canonical JSONL
// formatter (docs/convert.md).
#include "convert/npu_event.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>

namespace uscope::convert {

const KeyInfo kKeys[kNumKeys] = {
    {"core_id", Kind::U16},        {"npu_id", Kind::U16},         {"tenant_id", Kind::U32},
    {"layer_id", Kind::U32},       {"block_id", Kind::U32},       {"head_id", Kind::U32},
    {"token_idx", Kind::U32},      {"seq_len", Kind::U32},        {"phase", Kind::Str},
    {"thread_id", Kind::U32},      {"model_name", Kind::Str},     {"precision", Kind::Str},
    {"cmd_id", Kind::U32},         {"cmd_type", Kind::Str},       {"source", Kind::SourceEnum},
    {"token", Kind::U32},          {"desc_addr", Kind::U64},      {"status", Kind::Str},
    {"job_id", Kind::U32},         {"job_type", Kind::Str},       {"tile_id", Kind::U32},
    {"vec_chunk_id", Kind::U32},   {"latency_cycles", Kind::U32}, {"tx_id", Kind::U32},
    {"channel", Kind::U16},        {"direction", Kind::Str},      {"src_addr", Kind::U64},
    {"dst_addr", Kind::U64},       {"size_bytes", Kind::U64},     {"m", Kind::U32},
    {"n", Kind::U32},              {"k", Kind::U32},              {"tile_m", Kind::U32},
    {"tile_n", Kind::U32},         {"tile_k", Kind::U32},         {"mac_count", Kind::U64},
    {"op_type", Kind::Str},        {"len", Kind::U32},            {"batch", Kind::U32},
    {"addr", Kind::U64},           {"bank_id", Kind::U16},        {"access_type", Kind::AccessEnum},
    {"by", Kind::Str},             {"conflict", Kind::Bool},      {"num_requests", Kind::U32},
    {"allowed", Kind::U32},        {"stalled_clients", Kind::StrArray}, {"link_id", Kind::U16},
    {"irq_line", Kind::U32},       {"component", Kind::Str},      {"code", Kind::Str},
    {"msg", Kind::Str},
};

#define F(...) {__VA_ARGS__}
constexpr uint64_t B(Key k) { return uint64_t{1} << k; }
const EvTypeInfo kEvTypes[kNumEvTypes] = {
    {"CMD_ENQUEUE", "cmd_enqueue", 8,
     F(K_cmd_id, K_cmd_type, K_source, K_token, K_desc_addr, K_layer_id, K_block_id, K_phase),
     B(K_cmd_id) | B(K_cmd_type) | B(K_source) | B(K_token) | B(K_desc_addr) | B(K_layer_id) |
         B(K_block_id) | B(K_phase)},
    {"CMD_START", "cmd_start", 1, F(K_cmd_id), B(K_cmd_id)},
    {"CMD_END", "cmd_end", 2, F(K_cmd_id, K_status), B(K_cmd_id) | B(K_status)},
    {"JOB_ISSUE", "job_issue", 5, F(K_job_id, K_cmd_id, K_job_type, K_tile_id, K_vec_chunk_id),
     B(K_job_id) | B(K_cmd_id) | B(K_job_type) | B(K_tile_id) | B(K_vec_chunk_id)},
    {"JOB_DONE", "job_done", 4, F(K_job_id, K_cmd_id, K_job_type, K_latency_cycles),
     B(K_job_id) | B(K_cmd_id) | B(K_job_type) | B(K_latency_cycles)},
    {"DMA_START", "dma_start", 8,
     F(K_tx_id, K_channel, K_direction, K_src_addr, K_dst_addr, K_size_bytes, K_cmd_id, K_job_id),
     B(K_tx_id) | B(K_channel) | B(K_direction) | B(K_src_addr) | B(K_dst_addr) | B(K_size_bytes) |
         B(K_cmd_id) | B(K_job_id)},
    {"DMA_END", "dma_end", 4, F(K_tx_id, K_channel, K_cmd_id, K_job_id),
     B(K_tx_id) | B(K_channel) | B(K_cmd_id) | B(K_job_id)},
    {"TE_START", "te_start", 8, F(K_job_id, K_cmd_id, K_m, K_n, K_k, K_tile_m, K_tile_n, K_tile_k),
     B(K_job_id) | B(K_cmd_id) | B(K_m) | B(K_n) | B(K_k) | B(K_tile_m) | B(K_tile_n) | B(K_tile_k)},
    {"TE_END", "te_end", 4, F(K_job_id, K_cmd_id, K_mac_count, K_latency_cycles),
     B(K_job_id) | B(K_cmd_id) | B(K_mac_count) | B(K_latency_cycles)},
    {"VE_START", "ve_start", 5, F(K_job_id, K_cmd_id, K_op_type, K_len, K_batch),
     B(K_job_id) | B(K_cmd_id) | B(K_op_type) | B(K_len) | B(K_batch)},
    {"VE_END", "ve_end", 3, F(K_job_id, K_cmd_id, K_latency_cycles),
     B(K_job_id) | B(K_cmd_id) | B(K_latency_cycles)},
    {"SRAM_ACCESS", "sram_access", 7,
     F(K_addr, K_bank_id, K_access_type, K_by, K_conflict, K_cmd_id, K_job_id),
     B(K_addr) | B(K_bank_id) | B(K_access_type) | B(K_by) | B(K_conflict) | B(K_cmd_id) | B(K_job_id)},
    {"SRAM_CONFLICT", "sram_conflict", 5,
     F(K_bank_id, K_num_requests, K_allowed, K_stalled_clients, K_cmd_id),
     B(K_bank_id) | B(K_num_requests) | B(K_allowed) | B(K_stalled_clients) | B(K_cmd_id)},
    {"DRAM_TX_START", "dram_tx_start", 4, F(K_tx_id, K_channel, K_size_bytes, K_cmd_id),
     B(K_tx_id) | B(K_channel) | B(K_size_bytes) | B(K_cmd_id)},
    {"DRAM_TX_END", "dram_tx_end", 2, F(K_tx_id, K_channel), B(K_tx_id) | B(K_channel)},
    {"NOC_TX_START", "noc_tx_start", 4, F(K_tx_id, K_link_id, K_size_bytes, K_cmd_id),
     B(K_tx_id) | B(K_link_id) | B(K_size_bytes) | B(K_cmd_id)},
    {"NOC_TX_END", "noc_tx_end", 2, F(K_tx_id, K_link_id), B(K_tx_id) | B(K_link_id)},
    {"IRQ_EMIT", "irq_emit", 3, F(K_cmd_id, K_token, K_irq_line), B(K_cmd_id) | B(K_token) | B(K_irq_line)},
    {"TOKEN_COMPLETE", "token_complete", 3, F(K_token, K_cmd_id, K_status),
     B(K_token) | B(K_cmd_id) | B(K_status)},
    {"ERROR", "error", 5, F(K_component, K_code, K_msg, K_cmd_id, K_job_id),
     B(K_component) | B(K_code) | B(K_msg) | B(K_cmd_id) | B(K_job_id)},
    {"WARN", "warn", 5, F(K_component, K_code, K_msg, K_cmd_id, K_job_id),
     B(K_component) | B(K_code) | B(K_msg) | B(K_cmd_id) | B(K_job_id)},
};
#undef F

uint32_t StringPool::intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  strs_.emplace_back(s);
  const uint32_t id = static_cast<uint32_t>(strs_.size() - 1);
  ids_.emplace(std::string_view(strs_.back()), id);
  return id;
}

namespace {
// The JSONL keys that are not fields (npu-trace-jsonl.md §3, §4, §8.1, and
// the TRACE_META extension keys of docs/convert.md), in TopKey order.
const char *const kTopKeyNames[] = {"event_type", "t_cycle", "t_ns", "sim_id", "version", "sim_version",
                                    "sim_config", "period_ps", "pccx"};
static_assert(sizeof kTopKeyNames / sizeof *kTopKeyNames == kNumTopKeys - kNumKeys);

// Name -> index by a small open-addressing hash over names and their
// lengths, built once: every JSONL line looks up ~10 keys and one event type.
template <int N>
class NameTable {
 public:
  template <class Get>
  explicit NameTable(Get get) {
    std::memset(slot_, -1, sizeof slot_);
    for (int k = 0; k < N; ++k) {
      name_[k] = get(k);
      len_[k] = std::strlen(name_[k]);
      unsigned i = hash(std::string_view(name_[k], len_[k])) % kSize;
      while (slot_[i] >= 0) i = (i + 1) % kSize;
      slot_[i] = static_cast<int16_t>(k);
    }
  }
  int find(std::string_view s) const {
    for (unsigned i = hash(s) % kSize; slot_[i] >= 0; i = (i + 1) % kSize) {
      const int k = slot_[i];
      if (len_[k] == s.size() && std::memcmp(name_[k], s.data(), s.size()) == 0) return k;
    }
    return -1;
  }

 private:
  static constexpr unsigned kSize = 4 * N;  // load <= 1/4: probes are short
  static unsigned hash(std::string_view s) {
    unsigned h = static_cast<unsigned>(s.size()) * 31u;
    for (char c : s) h = h * 131u + static_cast<unsigned char>(c);
    return h;
  }
  int16_t slot_[kSize];
  const char *name_[N];
  size_t len_[N];
};
}  // namespace

int top_key_by_name(std::string_view name) {
  static const NameTable<kNumTopKeys> t(
      [](int k) { return k < kNumKeys ? kKeys[k].name : kTopKeyNames[k - kNumKeys]; });
  return t.find(name);
}
int key_by_name(std::string_view name) {
  const int k = top_key_by_name(name);
  return k < kNumKeys ? k : -1;
}
int ev_type_by_name(std::string_view name) {
  // E_TRACE_META == kNumEvTypes: the table's last entry.
  static const NameTable<kNumEvTypes + 1> t(
      [](int k) { return k < kNumEvTypes ? kEvTypes[k].name : "TRACE_META"; });
  return t.find(name);
}
int ev_type_by_lower(std::string_view name) {
  static const NameTable<kNumEvTypes> t([](int k) { return kEvTypes[k].lower; });
  return t.find(name);
}

void append_json_string(std::string &out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

namespace {
void append_u64(std::string &out, uint64_t v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

void append_value(std::string &out, Key k, uint64_t v, const StringSource &strs) {
  if (v == kNull) {
    out += "null";
    return;
  }
  switch (kKeys[k].kind) {
    case Kind::U16: case Kind::U32: case Kind::U64: append_u64(out, v); break;
    case Kind::Str: append_json_string(out, strs.str(v)); break;
    case Kind::SourceEnum: out += v ? "\"MMIO\"" : "\"ISA\""; break;
    case Kind::AccessEnum: out += v ? "\"WRITE\"" : "\"READ\""; break;
    case Kind::Bool: out += v ? "true" : "false"; break;
    case Kind::StrArray: {
      const std::string_view s = strs.str(v);
      out += '[';
      size_t from = 0;
      for (;;) {
        const size_t comma = s.find(',', from);
        if (from) out += ',';
        append_json_string(out, s.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
      out += ']';
      break;
    }
  }
}

void append_key(std::string &out, const char *k) {
  out += ",\"";
  out += k;
  out += "\":";
}
}  // namespace

void format_jsonl(const Ev &e, const StringSource &strs, const TraceMeta &meta, uint64_t period_ps,
                  std::string &out) {
  const EvTypeInfo &ti = kEvTypes[e.type];
  out += "{\"event_type\":\"";
  out += ti.name;
  out += "\",\"t_cycle\":";
  append_u64(out, e.t_cycle);
  if (meta.has_t_ns) {
    // t_ns is derived (npu-protocol.md §2.6): the shortest text that reads
    // back as the same double.
    out += ",\"t_ns\":";
    const double ns = static_cast<double>(e.t_cycle) * static_cast<double>(period_ps) / 1000.0;
    char b[40];
    auto r = std::to_chars(b, b + sizeof b, ns);
    out.append(b, r.ptr);
  }
  if (meta.has_sim_id) {
    append_key(out, "sim_id");
    append_json_string(out, meta.sim_id);
  }
  for (int i = 0; i < ti.num_fields; ++i) {
    const Key k = ti.fields[i];
    if (!e.has(k)) continue;
    append_key(out, kKeys[k].name);
    append_value(out, k, e.v[k], strs);
  }
  const uint64_t ctx = e.mask & kMetaMask & ~ti.own_mask;
  for (int k = 0; k < kNumMetaKeys; ++k) {
    if (!((ctx >> k) & 1)) continue;
    append_key(out, kKeys[k].name);
    append_value(out, static_cast<Key>(k), e.v[k], strs);
  }
  out += "}\n";
}

void format_pccx_meta(const PccxMeta &m, std::string &out) {
  const size_t start = out.size();
  auto key = [&](const char *k) {
    out += out.size() == start ? "{\"" : ",\"";
    out += k;
    out += "\":";
  };
  if (m.has_lab_version) {
    key("pccx_lab_version");
    append_json_string(out, m.lab_version);
  }
  if (m.has_isa_version) {
    key("isa_version");
    append_json_string(out, m.isa_version);
  }
  if (m.has_mac_dims) {
    key("mac_dims");
    out += '[';
    append_u64(out, m.mac_rows);
    out += ',';
    append_u64(out, m.mac_cols);
    out += ']';
  }
  if (m.has_peak_tops) {
    // Shortest text that reads back as the same double.
    key("peak_tops");
    char b[40];
    auto r = std::to_chars(b, b + sizeof b, m.peak_tops);
    out.append(b, r.ptr);
  }
  if (m.has_cores) {
    key("cores");
    append_u64(out, m.cores);
  }
  if (m.has_cycles) {
    key("cycles");
    append_u64(out, m.cycles);
  }
  if (m.has_clock_mhz) {
    key("clock_mhz");
    append_u64(out, m.clock_mhz);
  }
  if (m.has_encoding) {
    key("encoding");
    append_json_string(out, m.encoding);
  }
  if (out.size() == start) out += '{';
  out += '}';
}

void format_trace_meta(const TraceMeta &meta, std::string &out) {
  out += "{\"event_type\":\"TRACE_META\"";
  if (meta.has_version) {
    append_key(out, "version");
    append_json_string(out, meta.version);
  }
  if (meta.has_sim_config) {
    append_key(out, "sim_config");
    out += meta.sim_config;  // JSON text as given
  }
  if (meta.has_sim_version) {
    append_key(out, "sim_version");
    append_json_string(out, meta.sim_version);
  }
  if (meta.has_period) {
    append_key(out, "period_ps");
    append_u64(out, meta.period_ps);
  }
  if (meta.pccx.has) {
    append_key(out, "pccx");
    format_pccx_meta(meta.pccx, out);
  }
  out += "}\n";
}

}  // namespace uscope::convert
