// The pivot of every NPU converter: one JSONL event (npu-trace-jsonl.md §4)
// as a fixed-layout record, the key and event-type tables of the npu
// protocol (built from src/protocol/npu_table.hpp), the string pool, and the canonical
// JSONL formatter. JSONL text, .uscope events and .pccx events all become
// Ev records first, so the converters and the npu report share one meaning
// of each field.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "uscope/protocols.h"

namespace uscope::convert {

using Status = int32_t;  // uscope_status_t

// Value kinds. Every key has exactly one kind whatever its event type, so a
// line can be decoded before its event_type is known (keys come in any order).
enum class Kind : uint8_t { U16, U32, U64, Str, SourceEnum, AccessEnum, Bool, StrArray };

// The converter's names for the JSONL keys, in key order: the fields of the
// contexts storage (npu-protocol.md §3.2), then every other JSONL field of
// the npu events in the order it first appears (npu_table.hpp), so a key
// index below 12 is also a contexts field index. The names and kinds come
// from the table (kKeys); npu_event.cpp checks at compile time that each
// identifier here names its key.
#define USCOPE_NPU_JSONL_KEYS(X)                                                                              \
  X(core_id) X(npu_id) X(tenant_id) X(layer_id) X(block_id) X(head_id) X(token_idx) X(seq_len) X(phase)     \
  X(thread_id) X(model_name) X(precision) X(cmd_id) X(cmd_type) X(source) X(token) X(desc_addr) X(status)   \
  X(job_id) X(job_type) X(tile_id) X(vec_chunk_id) X(latency_cycles) X(tx_id) X(channel) X(direction)       \
  X(src_addr) X(dst_addr) X(size_bytes) X(m) X(n) X(k) X(tile_m) X(tile_n) X(tile_k) X(mac_count)           \
  X(op_type) X(len) X(batch) X(addr) X(bank_id) X(access_type) X(by) X(conflict) X(num_requests) X(allowed) \
  X(stalled_clients) X(link_id) X(irq_line) X(component) X(code) X(msg)

enum Key : uint8_t {
#define USCOPE_NPU_KEY_ENUM(k) K_##k,
  USCOPE_NPU_JSONL_KEYS(USCOPE_NPU_KEY_ENUM)
#undef USCOPE_NPU_KEY_ENUM
  kNumKeys
};
constexpr int kNumMetaKeys = 12;
constexpr uint64_t kMetaMask = (uint64_t{1} << kNumMetaKeys) - 1;

struct KeyInfo {
  const char *name;
  Kind kind;
};
extern const std::array<KeyInfo, kNumKeys> kKeys;

// Event types, numbered as USCOPE_NPU_EV_* (the npu table's event order);
// TRACE_META is not an event.
#define USCOPE_NPU_JSONL_EVENTS(X)                                                                          \
  X(CMD_ENQUEUE) X(CMD_START) X(CMD_END) X(JOB_ISSUE) X(JOB_DONE) X(DMA_START) X(DMA_END) X(TE_START)      \
  X(TE_END) X(VE_START) X(VE_END) X(SRAM_ACCESS) X(SRAM_CONFLICT) X(DRAM_TX_START) X(DRAM_TX_END)          \
  X(NOC_TX_START) X(NOC_TX_END) X(IRQ_EMIT) X(TOKEN_COMPLETE) X(ERROR) X(WARN)

enum EvType : uint8_t {
#define USCOPE_NPU_EV_ENUM(e) E_##e = USCOPE_NPU_EV_##e,
  USCOPE_NPU_JSONL_EVENTS(USCOPE_NPU_EV_ENUM)
#undef USCOPE_NPU_EV_ENUM
  kNumEvTypes = USCOPE_NPU_NUM_EVENTS,
  E_TRACE_META = kNumEvTypes,
};

struct EvTypeInfo {
  const char *name;        // JSONL event_type: the table's event name in upper case
  const char *lower;       // µScope event name (the table's)
  uint8_t num_fields;
  Key fields[8];           // own fields in protocol (= JSONL spec) order
  uint64_t own_mask;       // bit per own key
};
extern const std::array<EvTypeInfo, kNumEvTypes> kEvTypes;

// Value encoding in Ev::v: numbers as themselves, enums and booleans as 0/1,
// strings (and string arrays joined with ',') as ids of a StringSource.
// kNull is JSON null; an absent key has its bit clear in Ev::mask.
constexpr uint64_t kNull = ~uint64_t{0} - 1;

struct Ev {
  uint64_t t_cycle;
  uint64_t line;     // 1-based input line (0: not from a JSONL line)
  uint64_t mask;     // bit k: key k present (value or null)
  double t_ns;
  uint8_t type;      // EvType
  uint8_t has_t_ns;
  uint8_t has_sim_id;
  uint32_t sim_id;   // string id
  uint64_t v[kNumKeys];  // only entries with their mask bit are initialized

  bool has(Key k) const { return (mask >> k) & 1; }
  bool value(Key k, uint64_t *out) const {  // present and not null
    if (!has(k) || v[k] == kNull) return false;
    *out = v[k];
    return true;
  }
  void set(Key k, uint64_t x) {
    mask |= uint64_t{1} << k;
    v[k] = x;
  }
};

// Resolves the string ids of Ev values.
struct StringSource {
  virtual ~StringSource() = default;
  virtual std::string_view str(uint64_t id) const = 0;
  // The same string, NUL-terminated (the writers' C-string calls take it).
  virtual const char *c_str(uint64_t id) const = 0;
};

// Interns strings for Ev records built from text. Ids are stable; the
// strings stay alive (and NUL-terminated) as long as the pool.
class StringPool final : public StringSource {
 public:
  uint32_t intern(std::string_view s);
  std::string_view str(uint64_t id) const override { return strs_[id]; }
  const char *c_str(uint64_t id) const override { return strs_[id].c_str(); }
  size_t size() const { return strs_.size(); }

 private:
  std::deque<std::string> strs_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

// The .pccx header fields that JSONL carries in the TRACE_META extension key
// "pccx" (docs/convert.md "TRACE_META extensions"), so that pccx -> JSONL ->
// pccx keeps them. Each is optional.
struct PccxMeta {
  bool has = false;  // the "pccx" object was present (possibly empty)
  bool has_lab_version = false, has_isa_version = false, has_mac_dims = false, has_peak_tops = false,
       has_cores = false, has_cycles = false, has_clock_mhz = false, has_encoding = false;
  std::string lab_version, isa_version, encoding;
  uint32_t mac_rows = 0, mac_cols = 0, cores = 0, clock_mhz = 0;
  double peak_tops = 0;
  uint64_t cycles = 0;
};

// Meta DUT-level facts of a trace (TRACE_META, sim_id, t_ns presence).
struct TraceMeta {
  bool has_meta_line = false;
  std::string version, sim_version, sim_config;
  bool has_version = false, has_sim_version = false, has_sim_config = false;
  bool has_sim_id = false;
  std::string sim_id;
  bool has_t_ns = false;
  // The clock period (TRACE_META extension "period_ps"): written when the
  // trace's TRACE_META had it or the period is not the default 1000 ps.
  bool has_period = false;
  uint64_t period_ps = 1000;
  PccxMeta pccx;
  // The npu scope's tensor engine (µScope "<scope>/npu.te_dims"): pccx's
  // mac_dims when the trace has no pccx header fields. 0: none.
  uint32_t te_rows = 0, te_cols = 0;
  // A .pccx input's event count: pccx -> pccx writes as many (the two
  // mappings are inverses), which lets the pccx writer hash its bincode
  // payload as it writes it (pccx_writer.hpp Writer::Expect). ~0: unknown.
  uint64_t pccx_events = ~uint64_t{0};
};

// A TRACE_META line is written when the trace had one or has something only
// it can carry (a period other than 1000 ps, pccx header fields).
// "PATH: message", unless the message already names PATH (the readers' open
// errors do): an error names its file once.
inline std::string about_file(const char *path, const char *message) {
  if (std::strstr(message, path)) return message;
  return std::string(path) + ": " + message;
}

inline bool wants_meta_line(const TraceMeta &m) { return m.has_meta_line || m.has_period || m.pccx.has; }

// The JSONL top-level keys that are not fields (npu-trace-jsonl.md §3, §4),
// numbered after the fields so that one look-up answers for any key.
enum TopKey : int {
  T_event_type = kNumKeys, T_t_cycle, T_t_ns, T_sim_id, T_version, T_sim_version, T_sim_config, T_period_ps,
  T_pccx, kNumTopKeys
};

// Look-ups (hash tables built on first use).
int top_key_by_name(std::string_view name);    // a Key, a TopKey, or -1
int key_by_name(std::string_view name);        // -1 when unknown
int ev_type_by_name(std::string_view name);    // -1 when unknown (TRACE_META: E_TRACE_META)
int ev_type_by_lower(std::string_view name);   // µScope name; -1 when unknown

// The canonical JSONL form (docs/convert.md "Canonical JSONL"): event_type,
// t_cycle, t_ns, sim_id, the event's own fields in protocol order, then the
// context keys (core_id .. precision, contexts field order) it does not
// have as own fields. Appends one line with its '\n'.
void format_jsonl(const Ev &e, const StringSource &strs, const TraceMeta &meta, uint64_t period_ps,
                  std::string &out);
void format_trace_meta(const TraceMeta &meta, std::string &out);
// The "pccx" object of TRACE_META (canonical: keys in a fixed order, absent
// ones left out); also the value of the .uscope DUT property npu.jsonl.pccx.
void format_pccx_meta(const PccxMeta &m, std::string &out);
// Parses that object (line_parser.cpp); false with *reason when it is not one.
bool parse_pccx_meta(std::string_view json, PccxMeta *m, std::string *reason);
void append_json_string(std::string &out, std::string_view s);

}  // namespace uscope::convert
