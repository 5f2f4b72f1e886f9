#include "pccx/pccx_reader.hpp"

#include <cinttypes>
#include <cstring>

#include <simdjson.h>

#include "format/checksum.hpp"
#include "base/error.hpp"
#include "pccx/pccx_common.hpp"

namespace uscope::pccx {

namespace {

using simdjson::dom::element;

[[noreturn]] void bad(const char *path, const char *what) {
  fail(USCOPE_ERR_BAD_HEADER, "pccx JSON header: %s: %s", path, what);
}

// A member of obj, or nullptr-equivalent (returns false) when absent.
bool member(element obj, const char *key, element &out) {
  auto r = obj.get_object().at_key(key);
  if (r.error()) return false;
  out = r.value_unsafe();
  return true;
}

uint64_t get_u64(element e, const char *path, uint64_t max) {
  uint64_t v = 0;
  if (e.is_uint64()) {
    v = e.get_uint64().value_unsafe();
  } else if (e.is_int64()) {
    bad(path, "must be a non-negative integer");
  } else {
    bad(path, "must be an unsigned integer");
  }
  if (v > max) bad(path, "integer out of range");
  return v;
}

std::string get_str(element e, const char *path) {
  if (!e.is_string()) bad(path, "must be a string");
  std::string_view sv = e.get_string().value_unsafe();
  return std::string(sv);
}

element need(element obj, const char *key, const char *path) {
  element e;
  if (!member(obj, key, e)) bad(path, "missing required field");
  return e;
}

// checksum_fnv64: a JSON number parsed as an exact u64, a "0x..." hex string, or null.
bool parse_checksum(element e, uint64_t &out) {
  const char *path = "payload.checksum_fnv64";
  if (e.is_null()) return false;
  if (e.is_string()) {
    std::string_view s = e.get_string().value_unsafe();
    if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
      bad(path, "string must be \"0x\" followed by 1..16 hex digits");
    uint64_t v = 0;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      uint64_t d;
      if (c >= '0' && c <= '9') d = uint64_t(c - '0');
      else if (c >= 'a' && c <= 'f') d = uint64_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = uint64_t(c - 'A' + 10);
      else bad(path, "string must be \"0x\" followed by 1..16 hex digits");
      v = (v << 4) | d;
    }
    out = v;
    return true;
  }
  out = get_u64(e, path, UINT64_MAX);
  return true;
}

}  // namespace

void Reader::open_file(const std::string &path, uint32_t flags) {
  try {
    InputFile f;
    f.open(path, "a pccx container");
    if (f.size() > SIZE_MAX / 2) fail(USCOPE_ERR_NO_MEMORY, "%s: %llu bytes do not fit in memory", path.c_str(),
                                     static_cast<unsigned long long>(f.size()));
    copy_.resize(static_cast<size_t>(f.size()));
    f.read(0, copy_.data(), copy_.size(), "the file");
    data_ = copy_.data();
    size_ = copy_.size();
    parse(flags);
  } catch (const Error &e) {
    // Every open error names the file (the decoders' messages do not know it).
    if (std::strstr(e.what(), path.c_str())) throw;
    fail(e.code(), "%s: %s", path.c_str(), e.what());
  }
}

void Reader::open_memory(const void *data, size_t n, uint32_t flags) {
  copy_.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + n);
  data_ = copy_.data();
  size_ = copy_.size();
  parse(flags);
}

void Reader::parse(uint32_t flags) {
  if (flags & ~uint32_t{PCCX_OPEN_STRICT_CHECKSUM})
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_reader_open: unknown flags 0x%x", flags);
  // Say what the input is when it is not pccx: a µScope trace or NPU
  // JSON-Lines given to the wrong reader are the usual mistakes.
  if (size_ < 4) {
    if (size_ == 0 || std::memcmp(data_, kMagic, size_) != 0)
      fail(USCOPE_ERR_BAD_MAGIC, "expected a pccx container (magic \"PCCX\"), found %s",
           describe_content(data_, size_).c_str());
    fail(USCOPE_ERR_TRUNCATED, "pccx file ends inside its 16-byte fixed header (%zu bytes)", size_);
  }
  if (std::memcmp(data_, kMagic, 4) != 0)
    fail(USCOPE_ERR_BAD_MAGIC, "expected a pccx container (magic \"PCCX\"), found %s",
         describe_content(data_, size_).c_str());
  if (size_ < kFixedHeader)
    fail(USCOPE_ERR_TRUNCATED, "pccx file ends inside its 16-byte fixed header (%zu bytes)", size_);
  hdr_.struct_size = sizeof(hdr_);
  hdr_.major = data_[4];
  hdr_.minor = data_[5];
  if (hdr_.major != PCCX_FORMAT_MAJOR)
    fail(USCOPE_ERR_UNSUPPORTED_VERSION, "pccx major version %u is not supported (expected %d)",
         hdr_.major, PCCX_FORMAT_MAJOR);
  const uint64_t hlen = load_u64(data_ + 8);
  if (hlen > kMaxHeaderBytes)
    fail(hlen > size_ - kFixedHeader ? USCOPE_ERR_TRUNCATED : USCOPE_ERR_LIMIT,
         "pccx JSON header length %" PRIu64 " is over the 64 MiB limit (file has %zu bytes)", hlen,
         size_);
  if (hlen > size_ - kFixedHeader)
    fail(USCOPE_ERR_TRUNCATED, "pccx JSON header (%" PRIu64 " bytes) runs past the end of the file (%zu bytes)",
         hlen, size_);
  hdr_.header_bytes = hlen;
  parse_json();

  const uint64_t avail = size_ - kFixedHeader - hlen;
  if (hdr_.payload_bytes > avail)
    fail(USCOPE_ERR_TRUNCATED,
         "pccx payload.byte_length %" PRIu64 " but only %" PRIu64 " bytes follow the header",
         hdr_.payload_bytes, avail);
  payload_ = data_ + kFixedHeader + hlen;

  hdr_.computed_checksum = fnv1a64(payload_, static_cast<size_t>(hdr_.payload_bytes));
  if (!hdr_.checksum_present) {
    hdr_.checksum_status = PCCX_CHECKSUM_ABSENT;
  } else if (hdr_.checksum == hdr_.computed_checksum) {
    hdr_.checksum_status = PCCX_CHECKSUM_OK;
  } else {
    hdr_.checksum_status = PCCX_CHECKSUM_MISMATCH;
    if (flags & PCCX_OPEN_STRICT_CHECKSUM)
      fail(USCOPE_ERR_CHECKSUM,
           "pccx payload checksum mismatch: header says %" PRIu64 " (0x%016" PRIx64
           "), payload hashes to %" PRIu64 " (0x%016" PRIx64 ")",
           hdr_.checksum, hdr_.checksum, hdr_.computed_checksum, hdr_.computed_checksum);
  }

  switch (hdr_.encoding) {
    case PCCX_ENCODING_BINCODE: decode_bincode(); break;
    case PCCX_ENCODING_FLATBUF: decode_flatbuf(); break;
    default: break;
  }
  hdr_.num_events = events_.size();
  hdr_.pccx_lab_version = lab_version_.c_str();
  hdr_.isa_version = isa_version_.c_str();
  hdr_.encoding_name = encoding_.c_str();
}

void Reader::parse_json() {
  const char *js = reinterpret_cast<const char *>(data_ + kFixedHeader);
  const size_t n = static_cast<size_t>(hdr_.header_bytes);
  if (!valid_utf8(js, n)) fail(USCOPE_ERR_BAD_UTF8, "pccx JSON header is not valid UTF-8");
  simdjson::dom::parser parser;
  element root;
  auto err = parser.parse(js, n, true).get(root);  // copies into padded storage
  if (err) fail(USCOPE_ERR_BAD_HEADER, "pccx JSON header: invalid JSON: %s", simdjson::error_message(err));
  if (!root.is_object()) bad("$", "must be an object");

  // Required and optional fields exactly as pccx-lab's PccxHeader (serde):
  // pccx_lab_version required; arch / trace / payload objects default when
  // absent, but their own non-default fields are required when present.
  // payload is required here: without it there is nothing to decode.
  lab_version_ = get_str(need(root, "pccx_lab_version", "pccx_lab_version"), "pccx_lab_version");
  element e;
  if (member(root, "format_minor", e)) hdr_.format_minor = uint32_t(get_u64(e, "format_minor", 255));

  element arch;
  if (member(root, "arch", arch)) {
    if (!arch.is_object()) bad("arch", "must be an object");
    element dims = need(arch, "mac_dims", "arch.mac_dims");
    if (!dims.is_array()) bad("arch.mac_dims", "must be an array [rows, cols]");
    auto arr = dims.get_array().value_unsafe();
    if (arr.size() != 2) bad("arch.mac_dims", "must have exactly 2 elements");
    hdr_.mac_rows = uint32_t(get_u64(arr.at(0).value_unsafe(), "arch.mac_dims[0]", UINT32_MAX));
    hdr_.mac_cols = uint32_t(get_u64(arr.at(1).value_unsafe(), "arch.mac_dims[1]", UINT32_MAX));
    isa_version_ = get_str(need(arch, "isa_version", "arch.isa_version"), "arch.isa_version");
    if (member(arch, "peak_tops", e)) {
      if (!e.is_number()) bad("arch.peak_tops", "must be a number");
      hdr_.peak_tops = e.get_double().value_unsafe();
      hdr_.has_peak_tops = 1;
    }
  }
  element trace;
  hdr_.clock_mhz = 1000;
  if (member(root, "trace", trace)) {
    if (!trace.is_object()) bad("trace", "must be an object");
    hdr_.cycles = get_u64(need(trace, "cycles", "trace.cycles"), "trace.cycles", UINT64_MAX);
    hdr_.cores = uint32_t(get_u64(need(trace, "cores", "trace.cores"), "trace.cores", UINT32_MAX));
    if (member(trace, "clock_mhz", e)) hdr_.clock_mhz = uint32_t(get_u64(e, "trace.clock_mhz", UINT32_MAX));
  }
  element payload = need(root, "payload", "payload");
  if (!payload.is_object()) bad("payload", "must be an object");
  encoding_ = get_str(need(payload, "encoding", "payload.encoding"), "payload.encoding");
  hdr_.payload_bytes = get_u64(need(payload, "byte_length", "payload.byte_length"),
                               "payload.byte_length", UINT64_MAX);
  if (member(payload, "checksum_fnv64", e)) hdr_.checksum_present = parse_checksum(e, hdr_.checksum);
  if (encoding_ == "bincode") hdr_.encoding = PCCX_ENCODING_BINCODE;
  else if (encoding_ == "flatbuf") hdr_.encoding = PCCX_ENCODING_FLATBUF;
  else if (encoding_ == "raw") hdr_.encoding = PCCX_ENCODING_RAW;
  else hdr_.encoding = PCCX_ENCODING_OTHER;
}

uint64_t Reader::intern(const char *s, size_t n) {
  const uint64_t off = pool_.size();
  pool_.append(s, n);
  pool_.push_back('\0');
  return off;
}

void Reader::decode_bincode() {
  const uint8_t *p = payload_;
  const uint64_t n = hdr_.payload_bytes;
  uint64_t pos = 0;
  auto need_bytes = [&](uint64_t k, const char *what) {
    if (n - pos < k)
      fail(USCOPE_ERR_TRUNCATED,
           "pccx bincode payload ends inside %s at payload offset %" PRIu64 " (%" PRIu64
           " bytes, %zu events decoded)",
           what, pos, n, events_.size());
  };
  auto read_string = [&](const char *what, const char *&s, uint64_t &len) {
    need_bytes(8, what);
    len = load_u64(p + pos);
    pos += 8;
    if (len > n - pos)
      fail(USCOPE_ERR_TRUNCATED,
           "pccx bincode payload: %s declares %" PRIu64 " bytes but %" PRIu64
           " remain (event %zu)",
           what, len, n - pos, events_.size());
    s = reinterpret_cast<const char *>(p + pos);
    pos += len;
    if (!valid_utf8(s, static_cast<size_t>(len)))
      fail(USCOPE_ERR_BAD_UTF8, "pccx bincode payload: %s of event %zu is not valid UTF-8", what,
           events_.size());
  };
  need_bytes(16, "the NpuTrace header (total_cycles, event count)");
  hdr_.total_cycles = load_u64(p);
  const uint64_t count = load_u64(p + 8);
  pos = 16;
  if (count > (n - pos) / kMinBincodeEvent)
    fail(USCOPE_ERR_TRUNCATED,
         "pccx bincode payload declares %" PRIu64 " events but its %" PRIu64
         " remaining bytes hold at most %" PRIu64,
         count, n - pos, (n - pos) / kMinBincodeEvent);
  events_.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    Ev ev{};
    need_bytes(20, "an event's core_id/start_cycle/duration");
    ev.core_id = load_u32(p + pos);
    ev.start = load_u64(p + pos + 4);
    ev.duration = load_u64(p + pos + 12);
    pos += 20;
    const char *s;
    uint64_t len;
    read_string("event_type", s, len);
    const uint32_t id = type_id_of(s, static_cast<size_t>(len));
    if (id == PCCX_EVENT_TYPE_COUNT) {
      ev.type_id = PCCX_EVENT_UNKNOWN;
      ev.type_name = intern(s, static_cast<size_t>(len));
    } else {
      ev.type_id = id;
      ev.type_name = kNone;
    }
    need_bytes(1, "an event's api_name option tag");
    const uint8_t tag = p[pos++];
    if (tag == 1) {
      read_string("api_name", s, len);
      ev.api_name = intern(s, static_cast<size_t>(len));
      ++hdr_.num_api_names;
    } else if (tag == 0) {
      ev.api_name = kNone;
    } else {
      fail(USCOPE_ERR_CORRUPT, "pccx bincode payload: api_name option tag %u of event %" PRIu64
           " is not 0 or 1", tag, i);
    }
    events_.push_back(ev);
  }
  // pccx-lab's bincode::deserialize ignores bytes after the value: so do we,
  // and say how many (uscope info shows them).
  hdr_.payload_trailing_bytes = n - pos;
}

void Reader::decode_flatbuf() {
  const uint8_t *p = payload_;
  const uint64_t n = hdr_.payload_bytes;
  // As pccx-lab: the event array ends at the first 24-byte-aligned offset
  // holding the PCC2 magic with at least 8 bytes left; else at the end.
  uint64_t end = n;
  bool trailer = false;
  for (uint64_t off = 0; off + 8 <= n; off += kFlatStride)
    if (load_u32(p + off) == kFlatMagicV2) {
      end = off;
      trailer = true;
      break;
    }
  if (!trailer) {
    // pccx-lab decodes the whole records and ignores a partial last one.
    hdr_.payload_trailing_bytes = n % kFlatStride;
    end = n - n % kFlatStride;
  }
  const uint64_t count = end / kFlatStride;
  events_.reserve(static_cast<size_t>(count));
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *r = p + i * kFlatStride;
    Ev ev{};
    ev.core_id = load_u32(r);
    ev.start = load_u64(r + 4);
    ev.duration = load_u64(r + 12);
    ev.type_id = load_u32(r + 20);
    ev.type_name = kNone;
    ev.api_name = kNone;
    const uint64_t e = ev.start + ev.duration < ev.start ? UINT64_MAX : ev.start + ev.duration;
    if (e > total) total = e;
    events_.push_back(ev);
  }
  hdr_.total_cycles = total;
  if (!trailer) return;
  hdr_.flatbuf_trailer = 1;
  uint64_t pos = end + 4;
  const uint32_t names = load_u32(p + pos);
  pos += 4;
  // Each entry takes at least 6 bytes.
  if (names > (n - pos) / 6)
    fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer declares %u names but only %" PRIu64 " bytes remain",
         names, n - pos);
  for (uint32_t k = 0; k < names; ++k) {
    if (n - pos < 6)
      fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer ends inside entry %u", k);
    const uint32_t idx = load_u32(p + pos);
    const uint16_t len = load_u16(p + pos + 4);
    pos += 6;
    if (len > n - pos)
      fail(USCOPE_ERR_TRUNCATED, "pccx flatbuf PCC2 trailer: name %u (%u bytes) runs past the payload", k, len);
    const char *s = reinterpret_cast<const char *>(p + pos);
    pos += len;
    if (idx >= count)
      fail(USCOPE_ERR_CORRUPT, "pccx flatbuf PCC2 trailer: entry %u names event %u of %" PRIu64, k, idx, count);
    if (!valid_utf8(s, len))
      fail(USCOPE_ERR_BAD_UTF8, "pccx flatbuf PCC2 trailer: name of event %u is not valid UTF-8", idx);
    if (events_[idx].api_name == kNone) ++hdr_.num_api_names;
    events_[idx].api_name = intern(s, len);  // a repeated index: the last entry wins
  }
  if (pos != n)
    fail(USCOPE_ERR_CORRUPT, "pccx flatbuf payload has %" PRIu64 " trailing bytes after its PCC2 trailer",
         n - pos);
}

void Reader::event(uint64_t i, pccx_event_t *out) const {
  const Ev &e = events_[static_cast<size_t>(i)];
  out->core_id = e.core_id;
  out->type_id = e.type_id;
  out->start_cycle = e.start;
  out->duration = e.duration;
  if (e.type_name != kNone) out->type_name = pool_.data() + e.type_name;
  else out->type_name = e.type_id < PCCX_EVENT_TYPE_COUNT ? kTypeNames[e.type_id] : "UNKNOWN";
  out->api_name = e.api_name == kNone ? nullptr : pool_.data() + e.api_name;
}

}  // namespace uscope::pccx
