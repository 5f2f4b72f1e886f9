// The JSONL line parser: one line of npu-trace-jsonl.md §4 into an Ev, with
// simdjson On-Demand.
//
// This file is compiled for the baseline ISA like the rest of the library.
// On-Demand's structural scan (stage 1) and string unescaping run through
// the implementation libsimdjson.so selects at run time (AVX2 or AVX-512
// where the CPU has them), so a separate AVX2 compilation of this file
// gained nothing measurable (bench_convert) — and would have shared inline
// std:: and simdjson functions with the other objects, one copy of which
// the linker keeps, so a CPU without AVX2 could have run AVX2 code.
#include <cstring>
#include <memory>
#include <string>

#include <simdjson.h>

#include "convert/jsonl_ingest.hpp"

namespace uscope::convert {

class LineParser::Impl {
 public:
  Impl() {
    for (auto &row : next_key_)
      for (auto &x : row) x = -1;
  }
  Result parse(std::string_view line, size_t readable, StringPool &pool, Ev *ev, TraceMeta *meta,
               std::string *reason);
  bool begin_block(const char *data, size_t size, size_t batch_size);
  bool parse_in_block(std::string_view line, StringPool &pool, Ev *ev, std::string *reason);
  void end_block() { in_block_ = false; }
  bool in_block() const { return in_block_; }

 private:
  // One line's object, from either front-end: `trailing` is whether this
  // parser must itself reject content after the object (the per-line
  // document ends at its line; a stream's does not, and the block caller
  // checks the rest of the line instead).
  template <class Doc>
  Result walk(Doc &doc, bool trailing, StringPool &pool, Ev *ev, TraceMeta *meta, std::string *reason);

  simdjson::ondemand::parser p_;
  // The block parser: its own parser, because iterate_many sizes it to the
  // batch (a constant, so that it is allocated once) while the per-line
  // parser is sized to the longest line seen.
  simdjson::ondemand::parser bp_;
  simdjson::ondemand::document_stream stream_;
  simdjson::ondemand::document_stream::iterator it_;
  bool in_block_ = false, started_ = false;
  const char *block_ = nullptr, *block_end_ = nullptr;
  // Strings of the line being walked in block mode, interned once the
  // document is known to be the line's (slot: a key, or kNumKeys for sim_id),
  // in field order like the per-line walk.
  struct Pending {
    size_t slot;
    std::string_view s;
  };
  bool defer_ = false;
  Pending pend_[kNumKeys + 1];
  size_t npend_ = 0;
  TraceMeta meta_scratch_;  // a TRACE_META line ends the block: the per-line parse gives its meta
  // The key that followed key j in the last line of event type t is
  // next_key_[t + 1][j + 1] (-1: none yet; t, j = -1: the first): lines of
  // one type have the same keys in the same order, so the look-up is most
  // often one check of that guess.
  int16_t next_key_[kNumEvTypes + 2][kNumTopKeys + 1];
  // The last string interned for each key (sim_id: the last slot): most
  // values repeat (sim_id, model, precision, phase), so the pool's hash map
  // is skipped for them. Strings of up to 32 bytes.
  struct LastString {
    uint64_t w[4];
    size_t len = ~size_t{0};
    uint32_t id = 0;
  };
  LastString last_[kNumKeys + 1];
  const StringPool *last_pool_ = nullptr;
  uint32_t intern(StringPool &pool, size_t slot, std::string_view s);
  std::string join_;
  std::string m_version_, m_sim_version_, m_sim_config_;
  PccxMeta m_pccx_;
  bool meta_used_ = false;
};

using simdjson::ondemand::json_type;
namespace {

uint64_t null_sentinel(Kind k) {
  switch (k) {
    case Kind::U16: return 0xFFFEu;
    case Kind::U32: return 0xFFFFFFFEu;
    default: return kNull;
  }
}

std::string quoted(std::string_view s) {
  std::string o;
  append_json_string(o, s.size() > 64 ? s.substr(0, 64) : s);
  return o;
}

// Word i of the text at p (bytes 8i..8i+7 as in memory), the bytes past its
// len bytes (len must be more than 8i) zeroed; read from a padded buffer (up
// to 7 bytes past the text). In registers, not a masked copy on the stack: a
// wide load of narrow stores just made stalls store forwarding.
inline uint64_t word(const char *p, size_t len, size_t i) {
  uint64_t w;
  std::memcpy(&w, p + 8 * i, 8);
  const size_t n = len - 8 * i;
  if (n >= 8) return w;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return w & ~((uint64_t{1} << (8 * (8 - n))) - 1);  // the first bytes are the high ones
#else
  return w & ((uint64_t{1} << (8 * n)) - 1);
#endif
}

// Name look-ups on the raw bytes of the input. top_key_by_name and
// ev_type_by_name hash the name byte by byte and compare it with memcmp:
// with a key look-up per field and one event type per line they were a
// quarter of the ingest's time (perf, bench_convert). This table hashes the
// first 8 bytes and the length, and compares in 8-byte words; a name it does
// not hold (a key of no event, a name longer than 24 bytes) goes to the
// authoritative look-up, so the answer is the same for every name. The
// name's text must be in a padded buffer (simdjson's input or string buffer).
class FastNames {
 public:
  template <class Name>
  FastNames(int n, Name name) {
    for (auto &x : slot_) x = -1;
    for (int k = 0; k < n && k < kMaxNames; ++k) {
      const char *s = name(k);
      const size_t len = std::strlen(s);
      if (len == 0 || len > 24) continue;
      std::memset(w_[k], 0, sizeof w_[k]);
      std::memcpy(w_[k], s, len);
      len_[k] = static_cast<uint8_t>(len);
      unsigned i = hash(w_[k][0], len);
      while (slot_[i] >= 0) i = (i + 1) & (kSize - 1);
      slot_[i] = static_cast<int16_t>(k);
    }
  }
  // -1: not in this table (ask the authoritative look-up).
  int find(const char *p, size_t len) const {
    if (len == 0 || len > 24) return -1;
    const uint64_t w0 = word(p, len, 0);
    for (unsigned i = hash(w0, len);; i = (i + 1) & (kSize - 1)) {
      const int k = slot_[i];
      if (k < 0) return -1;
      if (len_[k] == len && w_[k][0] == w0 && rest_equal(k, p, len)) return k;
    }
  }
  // Whether entry k is the name at p (the walk's guess of the next key, checked).
  bool is(int k, const char *p, size_t len) const {
    return len_[k] == len && w_[k][0] == word(p, len, 0) && rest_equal(k, p, len);
  }

 private:
  static constexpr int kMaxNames = 128;
  static constexpr unsigned kSize = 512;  // load <= 1/4
  bool rest_equal(int k, const char *p, size_t len) const {
    return (len <= 8 || w_[k][1] == word(p, len, 1)) && (len <= 16 || w_[k][2] == word(p, len, 2));
  }
  static unsigned hash(uint64_t w0, size_t len) {
    return static_cast<unsigned>(((w0 ^ (len * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull) >> 55) & (kSize - 1);
  }
  int16_t slot_[kSize];
  uint64_t w_[kMaxNames][3] = {};
  uint8_t len_[kMaxNames] = {};
};

const char *const kTopNames[] = {"event_type", "t_cycle", "t_ns", "sim_id", "version", "sim_version",
                                 "sim_config", "period_ps", "pccx"};
static_assert(sizeof kTopNames / sizeof *kTopNames == kNumTopKeys - kNumKeys);

const FastNames &top_names() {
  // Built from the same names as top_key_by_name; an entry that does not
  // give top_key_by_name's answer is left out (then looked up there).
  static const FastNames t(kNumTopKeys, [](int k) -> const char * {
    const char *s = k < kNumKeys ? kKeys[k].name : kTopNames[k - kNumKeys];
    return top_key_by_name(s) == k ? s : "";
  });
  return t;
}

int fast_top_key(std::string_view name) {
  const int k = top_names().find(name.data(), name.size());
  return k >= 0 ? k : top_key_by_name(name);
}

int fast_ev_type(std::string_view name) {
  static const FastNames t(kNumEvTypes + 1, [](int k) -> const char * {
    const char *s = k < kNumEvTypes ? kEvTypes[k].name : "TRACE_META";
    return ev_type_by_name(s) == k ? s : "";
  });
  const int k = t.find(name.data(), name.size());
  return k >= 0 ? k : ev_type_by_name(name);
}

// A string token's text when it has no escape: its bytes in the input are
// its value, so it needs neither unescaping nor a copy. `p` is just after the
// opening quote (stage 1 has matched the closing one). Eight bytes at a time
// (keys and values are short, and the byte loop was a tenth of the walk): the
// lowest byte of a word that is '"' or '\\' ends the scan. Reads up to 7
// bytes past the closing quote, inside the padding.
bool plain_string(const uint8_t *p, std::string_view *out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  for (size_t i = 0;; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t q = w ^ (kOnes * '"'), b = w ^ (kOnes * '\\');
    // A zero byte of q or b sets its high bit here (bits above the lowest
    // zero byte may be wrong, but only the lowest is used).
    const uint64_t m = ((q - kOnes) & ~q & kHighs) | ((b - kOnes) & ~b & kHighs);
    if (m) {
      const size_t j = i + static_cast<size_t>(__builtin_ctzll(m) >> 3);
      if (p[j] != '"') return false;
      *out = std::string_view(reinterpret_cast<const char *>(p), j);
      return true;
    }
  }
#else
  const uint8_t *q = p;
  while (*q != '"') {
    if (*q == '\\') return false;
    ++q;
  }
  *out = std::string_view(reinterpret_cast<const char *>(p), static_cast<size_t>(q - p));
  return true;
#endif
}

// A string value (the caller has checked that its type is string), without
// a copy when it has no escape; get_string() otherwise. true on an error,
// like simdjson_result::get. A value left unread is skipped by the object's
// iteration.
bool string_value(simdjson::ondemand::value &val, std::string_view *out) {
  const std::string_view tok = val.raw_json_token();
  if (tok.size() >= 2 && tok[0] == '"' && plain_string(reinterpret_cast<const uint8_t *>(tok.data()) + 1, out))
    return false;
  return val.get_string().get(*out) != simdjson::SUCCESS;
}

const char *type_name(json_type t) {
  switch (t) {
    case json_type::array: return "an array";
    case json_type::object: return "an object";
    case json_type::number: return "a number";
    case json_type::string: return "a string";
    case json_type::boolean: return "a boolean";
    case json_type::null: return "null";
  }
  return "?";
}
}  // namespace

LineParser::Result LineParser::Impl::parse(std::string_view line, size_t readable, StringPool &pool, Ev *ev,
                                     TraceMeta *meta, std::string *reason) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == line.size()) return LineParser::kBlank;

  simdjson::ondemand::document doc;
  if (auto e = p_.iterate(line.data(), line.size(), readable).get(doc)) {
    *reason = std::string("bad JSON: ") + simdjson::error_message(e);
    return LineParser::kBad;
  }
  return walk(doc, true, pool, ev, meta, reason);
}

// `s` is in a padded buffer (the input or simdjson's string buffer).
uint32_t LineParser::Impl::intern(StringPool &pool, size_t slot, std::string_view s) {
  if (&pool != last_pool_) {  // ids are the pool's
    for (auto &c : last_) c.len = ~size_t{0};
    last_pool_ = &pool;
  }
  LastString &c = last_[slot];
  const size_t n = s.size();
  if (n == c.len && n <= 32) {
    bool eq = true;
    for (size_t i = 0; eq && 8 * i < n; ++i) eq = c.w[i] == word(s.data(), n, i);
    if (eq) return c.id;
  }
  const uint32_t id = pool.intern(s);
  if (n <= 32) {
    for (size_t i = 0; 8 * i < n; ++i) c.w[i] = word(s.data(), n, i);
    c.len = n;
    c.id = id;
  }
  return id;
}

bool LineParser::Impl::begin_block(const char *data, size_t size, size_t batch_size) {
  in_block_ = started_ = false;
  block_ = data;
  block_end_ = data + size;
  // The stream runs stage 1 once over the whole block (size <= batch_size:
  // one batch, so simdjson starts no look-ahead thread). An error here (no
  // memory) only means the block is parsed line by line.
  if (bp_.iterate_many(data, size, batch_size).get(stream_)) return false;
  in_block_ = true;
  return true;
}

// A stream's documents are split by JSON structure, not by lines, so a
// document is taken for `line` only when it is exactly that line's object:
// it starts at the line's first character that is not a space or tab (where
// the per-line parser would start), and its last byte is on the line and the
// stream's next document starts after the line (so nothing but whitespace
// follows it on the line). Then the per-line parser would have seen the same
// tokens, and the walk gives the same Ev. The end is known only once the
// walk is done and the stream has moved to the next document, so the walk
// defers its one side effect, interning strings in the pool, until the
// document is known to be the line's. Anything else (a stage-1 error in the
// block, a document spanning lines or sharing one, a line that is not an
// event) ends the block: the caller parses this line and the rest of the
// block per line, which is what gives every issue its reason and line.
bool LineParser::Impl::parse_in_block(std::string_view line, StringPool &pool, Ev *ev, std::string *reason) {
  if (!in_block_) return false;
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == line.size()) return false;  // blank: the stream has no document for it, parse() says kBlank
  in_block_ = false;                   // until this line is known to be an event
  if (!started_) {
    it_ = stream_.begin();
    started_ = true;
  }
  if (!(it_ != stream_.end())) return false;
  auto dr = *it_;
  if (dr.error()) return false;
  // current_index() is where the document's first token is, but for the
  // stream's first document it is where the block starts (blank lines and
  // leading blanks before it included).
  const char *start = block_ + it_.current_index();
  while (start < block_end_ && (*start == ' ' || *start == '\t' || *start == '\r' || *start == '\n')) ++start;
  if (start != line.data() + i) return false;
  simdjson::ondemand::document_reference doc = dr.value_unsafe();
  defer_ = true;
  npend_ = 0;
  const LineParser::Result r = walk(doc, false, pool, ev, &meta_scratch_, reason);
  defer_ = false;
  if (r != LineParser::kEvent) return false;
  // The walk has read the whole object: the next document starts at the
  // first token after it.
  ++it_;
  const char *next = block_end_;
  if (it_ != stream_.end()) {
    if (it_.error()) return false;
    next = block_ + it_.current_index();
  }
  const char *line_end = line.data() + line.size(), *last = next;
  while (last > start && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r' || last[-1] == '\n')) --last;
  if (next < line_end || last > line_end) return false;
  for (size_t j = 0; j < npend_; ++j) {
    const Pending &p = pend_[j];
    if (p.slot == kNumKeys) {
      ev->sim_id = intern(pool, kNumKeys, p.s);
    } else {
      // A joined array is in join_ (no padding to read words past it).
      ev->v[p.slot] = kKeys[p.slot].kind == Kind::StrArray ? pool.intern(p.s) : intern(pool, p.slot, p.s);
    }
  }
  in_block_ = true;
  return true;
}

template <class Doc>
LineParser::Result LineParser::Impl::walk(Doc &doc, bool trailing, StringPool &pool, Ev *ev, TraceMeta *meta,
                                          std::string *reason) {
  simdjson::ondemand::object obj;
  if (auto e = doc.get_object().get(obj)) {
    *reason = e == simdjson::INCORRECT_TYPE ? "bad JSON: the line is not a JSON object"
                                             : std::string("bad JSON: ") + simdjson::error_message(e);
    return LineParser::kBad;
  }
  ev->mask = 0;
  ev->has_t_ns = ev->has_sim_id = 0;
  int type = -1;
  bool has_t = false;
  std::string_view bad_key;       // first key that is not a field of any event type
  uint64_t meta_keys = 0;         // TRACE_META keys seen: 1 version, 2 sim_config, 4 sim_version,
                                  // 8 period_ps, 16 pccx
  uint64_t m_period = 0;
  // TRACE_META's values: members, so that an event line does not construct
  // and destroy four strings; reset when a line has set them.
  std::string &m_version = m_version_, &m_sim_version = m_sim_version_, &m_sim_config = m_sim_config_;
  PccxMeta &m_pccx = m_pccx_;
  if (meta_used_) {
    m_version.clear();
    m_sim_version.clear();
    m_sim_config.clear();
    m_pccx = PccxMeta{};
    meta_used_ = false;
  }

  auto bad = [&](const std::string &why) {
    *reason = why;
    return LineParser::kBad;
  };
  // The field and its value are used in place (value_unsafe() after the
  // error check, field.value() by reference): copying them out of their
  // simdjson_result, which GCC does as one 16-byte load of two narrower
  // stores just made, stalled store forwarding on every field and was half
  // of this function's time (perf annotate).
  const FastNames &names = top_names();
  int prev_key = -1;
  bool joined = false;  // block mode: join_ holds a pending array
  for (auto fr : obj) {
    std::string_view key;
    if (auto e = fr.error()) return bad(std::string("bad JSON: ") + simdjson::error_message(e));
    simdjson::ondemand::field &field = fr.value_unsafe();
    if (!plain_string(reinterpret_cast<const uint8_t *>(field.key().raw()), &key))
      if (auto e = field.unescaped_key().get(key)) return bad(std::string("bad JSON: ") + simdjson::error_message(e));
    simdjson::ondemand::value &val = field.value();
    json_type jt;
    if (auto e = val.type().get(jt)) return bad(std::string("bad JSON: ") + simdjson::error_message(e));
    int k;
    int16_t &guess = next_key_[type + 1][prev_key + 1];
    if (guess >= 0 && names.is(guess, key.data(), key.size())) {
      k = guess;
    } else {
      k = fast_top_key(key);
      guess = static_cast<int16_t>(k);
    }
    prev_key = k;
    if (k >= 0 && k < kNumKeys) {
      const Kind kind = kKeys[k].kind;
      if (ev->has(static_cast<Key>(k))) return bad("duplicate key " + quoted(key));
      if (jt == json_type::null) {
        bool n = false;
        if (auto e = val.is_null().get(n); e || !n) return bad("bad JSON: invalid literal");
        ev->set(static_cast<Key>(k), kNull);
        continue;
      }
      switch (kind) {
        case Kind::U16: case Kind::U32: case Kind::U64: {
          uint64_t x = 0;
          if (jt != json_type::number)
            return bad("wrong type: " + quoted(key) + " must be an unsigned integer, not " + type_name(jt));
          if (auto e = val.get_uint64().get(x)) {
            (void)e;
            return bad("wrong type: " + quoted(key) + " must be an unsigned integer (got " +
                       std::string(simdjson::trim(val.raw_json_token())) + ")");
          }
          if (x >= null_sentinel(kind))
            return bad("value out of range: " + quoted(key) + " = " + std::to_string(x) +
                       " does not fit the field's width below its absent/null sentinels");
          ev->set(static_cast<Key>(k), x);
          break;
        }
        case Kind::Str: {
          std::string_view s;
          if (jt != json_type::string || string_value(val, &s))
            return bad("wrong type: " + quoted(key) + " must be a string, not " + type_name(jt));
          if (defer_) {
            pend_[npend_++] = {static_cast<size_t>(k), s};  // each key once (duplicates are refused above)
            ev->set(static_cast<Key>(k), 0);
          } else {
            ev->set(static_cast<Key>(k), intern(pool, static_cast<size_t>(k), s));
          }
          break;
        }
        case Kind::SourceEnum: case Kind::AccessEnum: {
          std::string_view s;
          if (jt != json_type::string || string_value(val, &s))
            return bad("wrong type: " + quoted(key) + " must be a string, not " + type_name(jt));
          const bool src = kind == Kind::SourceEnum;
          const char *v0 = src ? "ISA" : "READ", *v1 = src ? "MMIO" : "WRITE";
          if (s == v0) ev->set(static_cast<Key>(k), 0);
          else if (s == v1) ev->set(static_cast<Key>(k), 1);
          else return bad("bad value: " + quoted(key) + " is " + quoted(s) + ", not \"" + v0 + "\" or \"" + v1 + "\"");
          break;
        }
        case Kind::Bool: {
          bool b = false;
          if (jt != json_type::boolean || val.get_bool().get(b))
            return bad("wrong type: " + quoted(key) + " must be a boolean, not " + type_name(jt));
          ev->set(static_cast<Key>(k), b ? 1 : 0);
          break;
        }
        case Kind::StrArray: {
          simdjson::ondemand::array arr;
          if (jt != json_type::array || val.get_array().get(arr))
            return bad("wrong type: " + quoted(key) + " must be an array of strings, not " + type_name(jt));
          join_.clear();
          bool first = true;
          for (auto xr : arr) {
            std::string_view s;
            simdjson::ondemand::value x;
            if (auto e = std::move(xr).get(x)) return bad(std::string("bad JSON: ") + simdjson::error_message(e));
            if (x.get_string().get(s)) return bad("wrong type: " + quoted(key) + " must be an array of strings");
            if (s.find(',') != std::string_view::npos)
              return bad("bad value: an element of " + quoted(key) + " contains ',' (the npu protocol joins them with ',')");
            if (!first) join_ += ',';
            join_ += s;
            first = false;
          }
          if (defer_) {
            // Its pending view is into join_: a second array would reuse
            // it. None has two today; if one does, parse it per line.
            if (joined) return bad("two string arrays in a block line (parsed per line)");
            joined = true;
            pend_[npend_++] = {static_cast<size_t>(k), join_};
            ev->set(static_cast<Key>(k), 0);
          } else {
            ev->set(static_cast<Key>(k), pool.intern(join_));
          }
          break;
        }
      }
      continue;
    }
    if (k == T_event_type) {
      std::string_view s;
      if (type != -1) return bad("duplicate key \"event_type\"");
      if (jt != json_type::string || string_value(val, &s))
        return bad(std::string("wrong type: \"event_type\" must be a string, not ") + type_name(jt));
      type = fast_ev_type(s);
      if (type < 0) return bad("unknown event type " + quoted(s));
    } else if (k == T_t_cycle) {
      if (has_t) return bad("duplicate key \"t_cycle\"");
      if (jt != json_type::number || val.get_uint64().get(ev->t_cycle))
        return bad("wrong type: \"t_cycle\" must be an unsigned integer");
      has_t = true;
    } else if (k == T_t_ns) {
      if (ev->has_t_ns) return bad("duplicate key \"t_ns\"");
      if (jt != json_type::number || val.get_double().get(ev->t_ns))
        return bad(std::string("wrong type: \"t_ns\" must be a number, not ") + type_name(jt));
      ev->has_t_ns = 1;
    } else if (k == T_sim_id) {
      std::string_view s;
      if (ev->has_sim_id) return bad("duplicate key \"sim_id\"");
      if (jt != json_type::string || string_value(val, &s))
        return bad(std::string("wrong type: \"sim_id\" must be a string, not ") + type_name(jt));
      if (defer_) pend_[npend_++] = {kNumKeys, s};
      else ev->sim_id = intern(pool, kNumKeys, s);
      ev->has_sim_id = 1;
    } else if (k == T_version || k == T_sim_version) {
      std::string_view s;
      const uint64_t bit = k == T_version ? 1 : 4;
      if (meta_keys & bit) return bad("duplicate key " + quoted(key));
      if (jt != json_type::string || val.get_string().get(s))
        return bad("wrong type: " + quoted(key) + " must be a string, not " + type_name(jt));
      (bit == 1 ? m_version : m_sim_version).assign(s);
      meta_used_ = true;
      meta_keys |= bit;
    } else if (k == T_sim_config) {
      std::string_view raw;
      if (meta_keys & 2) return bad("duplicate key \"sim_config\"");
      simdjson::error_code e = simdjson::SUCCESS;
      if (jt == json_type::object) {
        simdjson::ondemand::object o;
        e = val.get_object().get(o);
        if (!e) e = o.raw_json().get(raw);
      } else if (jt == json_type::array) {
        simdjson::ondemand::array a;
        e = val.get_array().get(a);
        if (!e) e = a.raw_json().get(raw);
      } else {
        raw = val.raw_json_token();
      }
      if (e) return bad(std::string("bad JSON: ") + simdjson::error_message(e));
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
      m_sim_config.assign(raw);
      meta_used_ = true;
      meta_keys |= 2;
    } else if (k == T_period_ps) {
      if (meta_keys & 8) return bad("duplicate key \"period_ps\"");
      if (jt != json_type::number || val.get_uint64().get(m_period) || m_period == 0 || m_period > 0xFFFFFFFFull)
        return bad("wrong value: \"period_ps\" must be the clock period in picoseconds, an integer in 1..2^32-1");
      meta_keys |= 8;
    } else if (k == T_pccx) {
      if (meta_keys & 16) return bad("duplicate key \"pccx\"");
      simdjson::ondemand::object o;
      std::string_view raw;
      if (jt != json_type::object || val.get_object().get(o) || o.raw_json().get(raw))
        return bad(std::string("wrong type: \"pccx\" must be an object, not ") + type_name(jt));
      std::string why;
      meta_used_ = true;
      if (!parse_pccx_meta(raw, &m_pccx, &why)) return bad("\"pccx\": " + why);
      meta_keys |= 16;
    } else {
      // Not a key of any event type: reported after the loop (the value is
      // skipped by the iteration, which still checks its structure).
      if (bad_key.empty()) bad_key = key;  // the parser's string buffer lives until the next line
    }
  }
  const char *rest = nullptr;
  if (trailing && doc.current_location().get(rest) == simdjson::SUCCESS)
    return bad("bad JSON: trailing content after the object");
  if (type < 0) return bad("missing field \"event_type\"");
  if (!bad_key.empty()) return bad("unknown key " + quoted(bad_key));
  if (type == E_TRACE_META) {
    if (ev->mask || has_t || ev->has_t_ns || ev->has_sim_id)
      return bad("TRACE_META takes only \"version\", \"sim_config\", \"sim_version\", \"period_ps\" and \"pccx\"");
    meta->has_meta_line = true;
    meta->has_version = meta_keys & 1;
    meta->has_sim_config = meta_keys & 2;
    meta->has_sim_version = meta_keys & 4;
    meta->version = std::move(m_version);
    meta->sim_config = std::move(m_sim_config);
    meta->sim_version = std::move(m_sim_version);
    meta->has_period = meta_keys & 8;
    meta->period_ps = (meta_keys & 8) ? m_period : 1000;
    meta->pccx = std::move(m_pccx);
    return LineParser::kMeta;
  }
  if (meta_keys) return bad(std::string("\"version\", \"sim_config\", \"sim_version\", \"period_ps\" and \"pccx\" belong to TRACE_META, not ") +
                            kEvTypes[type].name);
  if (!has_t) return bad("missing field \"t_cycle\"");
  const uint64_t extra = ev->mask & ~(kEvTypes[type].own_mask | kMetaMask);
  if (extra) {
    int k = 0;
    while (!((extra >> k) & 1)) ++k;
    return bad(std::string("key \"") + kKeys[k].name + "\" is not a field of " + kEvTypes[type].name);
  }
  ev->type = static_cast<uint8_t>(type);
  return LineParser::kEvent;
}

bool parse_pccx_meta(std::string_view json, PccxMeta *m, std::string *reason) {
  simdjson::ondemand::parser p;
  const simdjson::padded_string text(json);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (p.iterate(text).get(doc) || doc.get_object().get(obj)) {
    *reason = "not a JSON object";
    return false;
  }
  *m = PccxMeta{};
  m->has = true;
  auto u64 = [&](simdjson::ondemand::value v, uint64_t max, uint64_t *out) {
    return !v.get_uint64().get(*out) && *out <= max;
  };
  for (auto fr : obj) {
    simdjson::ondemand::field f;
    std::string_view key;
    if (std::move(fr).get(f) || f.unescaped_key().get(key)) {
      *reason = "bad JSON";
      return false;
    }
    simdjson::ondemand::value v = f.value();
    std::string_view sv;
    uint64_t x = 0;
    bool ok = true;
    if (key == "pccx_lab_version" || key == "isa_version" || key == "encoding") {
      ok = !v.get_string().get(sv);
      if (ok && key == "pccx_lab_version") m->lab_version.assign(sv), m->has_lab_version = true;
      else if (ok && key == "isa_version") m->isa_version.assign(sv), m->has_isa_version = true;
      else if (ok) m->encoding.assign(sv), m->has_encoding = true;
      if (!ok) *reason = "\"" + std::string(key) + "\" must be a string";
    } else if (key == "mac_dims") {
      simdjson::ondemand::array a;
      uint64_t d[2] = {0, 0};
      size_t n = 0;
      ok = !v.get_array().get(a);
      for (auto xr : a) {
        if (!ok) break;
        simdjson::ondemand::value xv;
        if (std::move(xr).get(xv) || n >= 2 || !u64(xv, 0xFFFFFFFFu, &d[n])) ok = false;
        ++n;
      }
      ok = ok && n == 2;
      if (ok) m->mac_rows = static_cast<uint32_t>(d[0]), m->mac_cols = static_cast<uint32_t>(d[1]), m->has_mac_dims = true;
      else *reason = "\"mac_dims\" must be [rows, cols], two unsigned 32-bit integers";
    } else if (key == "peak_tops") {
      double t = 0;
      ok = !v.get_double().get(t) && t >= 0 && t <= 1.7976931348623157e308;
      if (ok) m->peak_tops = t, m->has_peak_tops = true;
      else *reason = "\"peak_tops\" must be a finite number >= 0";
    } else if (key == "cores" || key == "clock_mhz") {
      ok = u64(v, 0xFFFFFFFFu, &x);
      if (ok && key == "cores") m->cores = static_cast<uint32_t>(x), m->has_cores = true;
      else if (ok) m->clock_mhz = static_cast<uint32_t>(x), m->has_clock_mhz = true;
      if (!ok) *reason = "\"" + std::string(key) + "\" must be an unsigned 32-bit integer";
    } else if (key == "cycles") {
      ok = u64(v, ~uint64_t{0}, &x);
      if (ok) m->cycles = x, m->has_cycles = true;
      else *reason = "\"cycles\" must be an unsigned 64-bit integer";
    } else {
      *reason = "unknown key \"" + std::string(key) +
                "\" (expected pccx_lab_version, isa_version, mac_dims, peak_tops, cores, cycles, clock_mhz, encoding)";
      return false;
    }
    if (!ok) return false;
  }
  if (m->has_clock_mhz && m->clock_mhz == 0) {
    *reason = "\"clock_mhz\" must not be 0";
    return false;
  }
  return true;
}

LineParser::LineParser() : p_(std::make_unique<Impl>()) {}
LineParser::~LineParser() = default;
LineParser::Result LineParser::parse(std::string_view line, size_t readable, StringPool &pool, Ev *ev,
                                     TraceMeta *meta, std::string *reason) {
  return p_->parse(line, readable, pool, ev, meta, reason);
}
bool LineParser::begin_block(std::string_view block, size_t batch_size) {
  return p_->begin_block(block.data(), block.size(), batch_size);
}
bool LineParser::parse_in_block(std::string_view line, StringPool &pool, Ev *ev, std::string *reason) {
  return p_->parse_in_block(line, pool, ev, reason);
}
void LineParser::end_block() { p_->end_block(); }
bool LineParser::in_block() const { return p_->in_block(); }

}  // namespace uscope::convert
