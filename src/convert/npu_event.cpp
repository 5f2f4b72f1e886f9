// Key and event-type tables of the npu protocol, built at compile time from
// its table (src/protocol/npu_table.hpp), and the canonical JSONL formatter
// (docs/convert.md).
#include "convert/npu_event.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

#include "protocol/npu_table.hpp"

namespace uscope::convert {

namespace {
namespace npu = uscope::proto::npu;
using uscope::proto::table::Field;
using uscope::proto::table::same;

// A key's kind from its field in the npu table.
constexpr Kind kind_of(const Field &f) {
  if (f.jsonl == uscope::proto::table::kBool) return Kind::Bool;
  if (f.jsonl == uscope::proto::table::kStrArray) return Kind::StrArray;
  switch (f.type) {
    case USCOPE_FT_U16: return Kind::U16;
    case USCOPE_FT_U32: return Kind::U32;
    case USCOPE_FT_U64: return Kind::U64;
    case USCOPE_FT_STRING_REF: return Kind::Str;
    case USCOPE_FT_ENUM:
      if (f.enum_ref == npu::kCmdSource) return Kind::SourceEnum;
      if (f.enum_ref == npu::kAccessType) return Kind::AccessEnum;
      break;
    default: break;
  }
  throw "an npu JSONL field of a type the converter has no kind for";
}

constexpr bool is_key(const Field &f) { return f.jsonl != uscope::proto::table::kOwn; }

// The keys: the contexts' fields, then each event's JSONL fields not seen
// before. A name met twice must have one kind (Kind's comment says why).
constexpr std::array<KeyInfo, kNumKeys> build_keys() {
  std::array<KeyInfo, kNumKeys> keys{};
  int n = 0;
  auto add = [&](const Field &f) {
    for (int i = 0; i < n; ++i) {
      if (!same(keys[i].name, f.name)) continue;
      if (keys[i].kind != kind_of(f)) throw "an npu JSONL key with two kinds";
      return;
    }
    if (n == kNumKeys) throw "more npu JSONL keys than enum Key has";
    keys[n++] = {f.name, kind_of(f)};
  };
  for (const Field &f : npu::kContextFields) add(f);
  if (n != kNumMetaKeys) throw "the contexts storage is not the 12 context keys";
  for (const auto &e : npu::kEvents)
    for (const Field &f : e.fields)
      if (is_key(f)) add(f);
  if (n != kNumKeys) throw "fewer npu JSONL keys than enum Key has";
  return keys;
}
constexpr std::array<KeyInfo, kNumKeys> kBuiltKeys = build_keys();
// Each identifier of enum Key names its key.
#define USCOPE_NPU_KEY_CHECK(k) static_assert(same(kBuiltKeys[K_##k].name, #k), "enum Key: K_" #k);
USCOPE_NPU_JSONL_KEYS(USCOPE_NPU_KEY_CHECK)
#undef USCOPE_NPU_KEY_CHECK

constexpr int key_of(const char *name) {
  for (int k = 0; k < kNumKeys; ++k)
    if (same(kBuiltKeys[k].name, name)) return k;
  throw "not an npu JSONL key";
}

// The JSONL event_type names: the table's names in upper case, one buffer of
// NUL-terminated strings.
constexpr size_t upper_size() {
  size_t n = 0;
  for (const auto &e : npu::kEvents) n += std::string_view(e.name).size() + 1;
  return n;
}
constexpr std::array<char, upper_size()> build_upper() {
  std::array<char, upper_size()> out{};
  size_t at = 0;
  for (const auto &e : npu::kEvents) {
    for (const char c : std::string_view(e.name))
      out[at++] = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    out[at++] = '\0';
  }
  return out;
}
constexpr std::array<char, upper_size()> kUpperNames = build_upper();

constexpr std::array<EvTypeInfo, kNumEvTypes> build_ev_types() {
  static_assert(std::size(npu::kEvents) == kNumEvTypes);
  std::array<EvTypeInfo, kNumEvTypes> out{};
  size_t upper = 0;
  for (size_t e = 0; e < kNumEvTypes; ++e) {
    EvTypeInfo &ti = out[e];
    ti.name = kUpperNames.data() + upper;
    ti.lower = npu::kEvents[e].name;
    upper += std::string_view(ti.lower).size() + 1;
    for (const Field &f : npu::kEvents[e].fields) {
      if (!is_key(f)) continue;
      if (ti.num_fields == std::size(ti.fields))
        throw "an npu event with more JSONL fields than EvTypeInfo holds";
      const int k = key_of(f.name);
      ti.fields[ti.num_fields++] = static_cast<Key>(k);
      ti.own_mask |= uint64_t{1} << k;
    }
  }
  return out;
}
constexpr std::array<EvTypeInfo, kNumEvTypes> kBuiltEvTypes = build_ev_types();
// Each identifier of enum EvType names its event.
#define USCOPE_NPU_EV_CHECK(e) static_assert(same(kBuiltEvTypes[E_##e].name, #e), "enum EvType: E_" #e);
USCOPE_NPU_JSONL_EVENTS(USCOPE_NPU_EV_CHECK)
#undef USCOPE_NPU_EV_CHECK
}  // namespace

// Constant-initialized copies (no static-initialization order to mind).
const std::array<KeyInfo, kNumKeys> kKeys = kBuiltKeys;
const std::array<EvTypeInfo, kNumEvTypes> kEvTypes = kBuiltEvTypes;

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
  // Runs of characters that need no escape go in one append (the names and
  // phases of a trace have none: per-character appends were a quarter of
  // the canonical form's time).
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default: {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out += b;
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

namespace {
void append_u64(std::string &out, uint64_t v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

void append_key(std::string &out, const char *k) {
  out += ",\"";
  out += k;
  out += "\":";
}

// The canonical form's fixed text, made once: `,"<key>":` per key and
// `{"event_type":"<TYPE>","t_cycle":` per event type (one append each
// instead of three with a strlen).
struct Prefixes {
  std::array<std::string, kNumKeys> key;
  std::array<std::string, kNumEvTypes> head;
  Prefixes() {
    for (int k = 0; k < kNumKeys; ++k) key[k] = std::string(",\"") + kKeys[k].name + "\":";
    for (int t = 0; t < kNumEvTypes; ++t)
      head[t] = std::string("{\"event_type\":\"") + kEvTypes[t].name + "\",\"t_cycle\":";
  }
};
const Prefixes &prefixes() {
  static const Prefixes p;
  return p;
}
}  // namespace

namespace {
// A line of the canonical form is made in a scratch buffer through a raw
// cursor and appended to the output once: std::string's per-append
// capacity checks and the strlen of each key were most of the formatting
// time. room(n) makes n bytes of room before each piece; a string value
// asks for its worst case (6 bytes per character, \u00XX).
class LineOut {
 public:
  LineOut() {
    static thread_local std::vector<char> buf(4096);
    buf_ = &buf;
    p_ = buf.data();
  }
  void room(size_t n) {
    const size_t used = static_cast<size_t>(p_ - buf_->data());
    if (buf_->size() - used < n) {
      buf_->resize(std::max(buf_->size() * 2, used + n));
      p_ = buf_->data() + used;
    }
  }
  void put(const char *s, size_t n) {
    room(n);
    std::memcpy(p_, s, n);
    p_ += n;
  }
  void put(const std::string &s) { put(s.data(), s.size()); }
  void put(char c) {
    room(1);
    *p_++ = c;
  }
  void u64(uint64_t v) {
    room(24);
    p_ = std::to_chars(p_, p_ + 24, v).ptr;
  }
  void str(std::string_view s) {
    room(s.size() * 6 + 2);
    *p_++ = '"';
    for (const char ch : s) {
      const unsigned char c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c != '"' && c != '\\') {
        *p_++ = ch;
        continue;
      }
      *p_++ = '\\';
      switch (c) {
        case '"': *p_++ = '"'; break;
        case '\\': *p_++ = '\\'; break;
        case '\n': *p_++ = 'n'; break;
        case '\r': *p_++ = 'r'; break;
        case '\t': *p_++ = 't'; break;
        case '\b': *p_++ = 'b'; break;
        case '\f': *p_++ = 'f'; break;
        default: {
          static const char kHex[] = "0123456789abcdef";
          *p_++ = 'u';
          *p_++ = '0';
          *p_++ = '0';
          *p_++ = kHex[c >> 4];
          *p_++ = kHex[c & 15];
        }
      }
    }
    *p_++ = '"';
  }
  void value(Key k, uint64_t v, const StringSource &strs) {
    if (v == kNull) return put("null", 4);
    switch (kKeys[k].kind) {
      case Kind::U16: case Kind::U32: case Kind::U64: return u64(v);
      case Kind::Str: return str(strs.str(v));
      // 0 is the first value of the enum, anything else the second.
      case Kind::SourceEnum: return str(uscope::proto::npu::kSources[v != 0]);
      case Kind::AccessEnum: return str(uscope::proto::npu::kAccessTypes[v != 0]);
      case Kind::Bool: return v ? put("true", 4) : put("false", 5);
      case Kind::StrArray: {
        const std::string_view s = strs.str(v);
        put('[');
        size_t from = 0;
        for (;;) {
          const size_t comma = s.find(',', from);
          if (from) put(',');
          str(s.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
          if (comma == std::string_view::npos) break;
          from = comma + 1;
        }
        return put(']');
      }
    }
  }
  void flush_to(std::string &out) { out.append(buf_->data(), static_cast<size_t>(p_ - buf_->data())); }

 private:
  std::vector<char> *buf_;
  char *p_;
};
}  // namespace

void format_jsonl(const Ev &e, const StringSource &strs, const TraceMeta &meta, uint64_t period_ps,
                  std::string &out) {
  const EvTypeInfo &ti = kEvTypes[e.type];
  const Prefixes &px = prefixes();
  LineOut l;
  l.put(px.head[e.type]);
  l.u64(e.t_cycle);
  if (meta.has_t_ns) {
    // t_ns is derived (npu-protocol.md §2.6): the shortest text that reads
    // back as the same double.
    l.put(",\"t_ns\":", 8);
    const double ns = static_cast<double>(e.t_cycle) * static_cast<double>(period_ps) / 1000.0;
    char b[40];
    auto r = std::to_chars(b, b + sizeof b, ns);
    l.put(b, static_cast<size_t>(r.ptr - b));
  }
  if (meta.has_sim_id) {
    l.put(",\"sim_id\":", 10);
    l.str(meta.sim_id);
  }
  for (int i = 0; i < ti.num_fields; ++i) {
    const Key k = ti.fields[i];
    if (!e.has(k)) continue;
    l.put(px.key[k]);
    l.value(k, e.v[k], strs);
  }
  for (uint64_t ctx = e.mask & kMetaMask & ~ti.own_mask; ctx; ctx &= ctx - 1) {
    const int k = __builtin_ctzll(ctx);
    l.put(px.key[k]);
    l.value(static_cast<Key>(k), e.v[k], strs);
  }
  l.put("}\n", 2);
  l.flush_to(out);
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
