#include "pccx/pccx_reader.hpp"

#include <cinttypes>
#include <cstring>

#include <simdjson.h>

#include "format/checksum.hpp"
#include "base/error.hpp"
#include "pccx/pccx_common.hpp"
#include "pccx/pccx_decode.hpp"

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

// The container and JSON header parsers (pccx_decode.hpp), shared with
// SortedEventStream (pccx_stream.cpp): same checks, same messages.

void check_open_flags(uint32_t flags) {
  if (flags & ~uint32_t{PCCX_OPEN_STRICT_CHECKSUM})
    fail(USCOPE_ERR_INVALID_ARGUMENT, "pccx_reader_open: unknown flags 0x%x", flags);
}

void parse_fixed_header(const uint8_t *data, size_t avail, uint64_t size, pccx_header_t &hdr) {
  // Say what the input is when it is not pccx: a µScope trace or NPU
  // JSON-Lines given to the wrong reader are the usual mistakes.
  const size_t shown = size < avail ? static_cast<size_t>(size) : avail;
  if (size < 4) {
    if (size == 0 || std::memcmp(data, kMagic, shown) != 0)
      fail(USCOPE_ERR_BAD_MAGIC, "expected a pccx container (magic \"PCCX\"), found %s",
           describe_content(data, shown).c_str());
    fail(USCOPE_ERR_TRUNCATED, "pccx file ends inside its 16-byte fixed header (%" PRIu64 " bytes)", size);
  }
  if (std::memcmp(data, kMagic, 4) != 0)
    fail(USCOPE_ERR_BAD_MAGIC, "expected a pccx container (magic \"PCCX\"), found %s",
         describe_content(data, shown).c_str());
  if (size < kFixedHeader)
    fail(USCOPE_ERR_TRUNCATED, "pccx file ends inside its 16-byte fixed header (%" PRIu64 " bytes)", size);
  hdr.struct_size = sizeof(hdr);
  hdr.major = data[4];
  hdr.minor = data[5];
  if (hdr.major != PCCX_FORMAT_MAJOR)
    fail(USCOPE_ERR_UNSUPPORTED_VERSION, "pccx major version %u is not supported (expected %d)",
         hdr.major, PCCX_FORMAT_MAJOR);
  const uint64_t hlen = load_u64(data + 8);
  if (hlen > kMaxHeaderBytes)
    fail(hlen > size - kFixedHeader ? USCOPE_ERR_TRUNCATED : USCOPE_ERR_LIMIT,
         "pccx JSON header length %" PRIu64 " is over the 64 MiB limit (file has %" PRIu64 " bytes)", hlen,
         size);
  if (hlen > size - kFixedHeader)
    fail(USCOPE_ERR_TRUNCATED,
         "pccx JSON header (%" PRIu64 " bytes) runs past the end of the file (%" PRIu64 " bytes)", hlen, size);
  hdr.header_bytes = hlen;
}

void check_payload_fits(const pccx_header_t &hdr, uint64_t size) {
  const uint64_t avail = size - kFixedHeader - hdr.header_bytes;
  if (hdr.payload_bytes > avail)
    fail(USCOPE_ERR_TRUNCATED,
         "pccx payload.byte_length %" PRIu64 " but only %" PRIu64 " bytes follow the header",
         hdr.payload_bytes, avail);
}

void settle_checksum(pccx_header_t &hdr, uint32_t flags) {
  if (!hdr.checksum_present) {
    hdr.checksum_status = PCCX_CHECKSUM_ABSENT;
  } else if (hdr.checksum == hdr.computed_checksum) {
    hdr.checksum_status = PCCX_CHECKSUM_OK;
  } else {
    hdr.checksum_status = PCCX_CHECKSUM_MISMATCH;
    if (flags & PCCX_OPEN_STRICT_CHECKSUM)
      fail(USCOPE_ERR_CHECKSUM,
           "pccx payload checksum mismatch: header says %" PRIu64 " (0x%016" PRIx64
           "), payload hashes to %" PRIu64 " (0x%016" PRIx64 ")",
           hdr.checksum, hdr.checksum, hdr.computed_checksum, hdr.computed_checksum);
  }
}

void attach_strings(pccx_header_t &hdr, const HeaderStrings &strings) {
  hdr.pccx_lab_version = strings.lab_version.c_str();
  hdr.isa_version = strings.isa_version.c_str();
  hdr.encoding_name = strings.encoding.c_str();
}

void parse_json_header(const char *js, size_t n, pccx_header_t &hdr, HeaderStrings &strings) {
  // An empty header (length 0) may come as NULL from an empty buffer (the
  // stream's): simdjson copies from the pointer, which must not be NULL.
  if (n == 0) js = "";
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
  strings.lab_version = get_str(need(root, "pccx_lab_version", "pccx_lab_version"), "pccx_lab_version");
  element e;
  if (member(root, "format_minor", e)) hdr.format_minor = uint32_t(get_u64(e, "format_minor", 255));

  element arch;
  if (member(root, "arch", arch)) {
    if (!arch.is_object()) bad("arch", "must be an object");
    element dims = need(arch, "mac_dims", "arch.mac_dims");
    if (!dims.is_array()) bad("arch.mac_dims", "must be an array [rows, cols]");
    auto arr = dims.get_array().value_unsafe();
    if (arr.size() != 2) bad("arch.mac_dims", "must have exactly 2 elements");
    hdr.mac_rows = uint32_t(get_u64(arr.at(0).value_unsafe(), "arch.mac_dims[0]", UINT32_MAX));
    hdr.mac_cols = uint32_t(get_u64(arr.at(1).value_unsafe(), "arch.mac_dims[1]", UINT32_MAX));
    strings.isa_version = get_str(need(arch, "isa_version", "arch.isa_version"), "arch.isa_version");
    if (member(arch, "peak_tops", e)) {
      if (!e.is_number()) bad("arch.peak_tops", "must be a number");
      hdr.peak_tops = e.get_double().value_unsafe();
      hdr.has_peak_tops = 1;
    }
  }
  element trace;
  hdr.clock_mhz = 1000;
  if (member(root, "trace", trace)) {
    if (!trace.is_object()) bad("trace", "must be an object");
    hdr.cycles = get_u64(need(trace, "cycles", "trace.cycles"), "trace.cycles", UINT64_MAX);
    hdr.cores = uint32_t(get_u64(need(trace, "cores", "trace.cores"), "trace.cores", UINT32_MAX));
    if (member(trace, "clock_mhz", e)) hdr.clock_mhz = uint32_t(get_u64(e, "trace.clock_mhz", UINT32_MAX));
  }
  element payload = need(root, "payload", "payload");
  if (!payload.is_object()) bad("payload", "must be an object");
  strings.encoding = get_str(need(payload, "encoding", "payload.encoding"), "payload.encoding");
  hdr.payload_bytes = get_u64(need(payload, "byte_length", "payload.byte_length"),
                              "payload.byte_length", UINT64_MAX);
  if (member(payload, "checksum_fnv64", e)) hdr.checksum_present = parse_checksum(e, hdr.checksum);
  if (strings.encoding == "bincode") hdr.encoding = PCCX_ENCODING_BINCODE;
  else if (strings.encoding == "flatbuf") hdr.encoding = PCCX_ENCODING_FLATBUF;
  else if (strings.encoding == "raw") hdr.encoding = PCCX_ENCODING_RAW;
  else hdr.encoding = PCCX_ENCODING_OTHER;
}

void Reader::parse(uint32_t flags) {
  check_open_flags(flags);
  parse_fixed_header(data_, size_, size_, hdr_);
  parse_json_header(reinterpret_cast<const char *>(data_ + kFixedHeader), static_cast<size_t>(hdr_.header_bytes),
                    hdr_, strings_);
  check_payload_fits(hdr_, size_);
  payload_ = data_ + kFixedHeader + hdr_.header_bytes;
  hdr_.computed_checksum = fnv1a64(payload_, static_cast<size_t>(hdr_.payload_bytes));
  settle_checksum(hdr_, flags);

  switch (hdr_.encoding) {
    case PCCX_ENCODING_BINCODE: decode_bincode(); break;
    case PCCX_ENCODING_FLATBUF: decode_flatbuf(); break;
    default: break;
  }
  hdr_.num_events = events_.size();
  attach_strings(hdr_, strings_);
}

uint64_t Reader::Pool::intern(const char *s, size_t n) {
  const uint64_t off = bytes.size();
  bytes.append(s, n);
  bytes.push_back('\0');
  return off;
}

void Reader::decode_bincode() {
  MemorySource src{payload_};
  BincodeDecoder<MemorySource, Pool> d(src, pool_, hdr_.payload_bytes, hdr_);
  d.begin();
  events_.reserve(static_cast<size_t>(d.count()));
  DecodedEvent ev;
  while (d.next(ev)) events_.push_back(ev);
}

void Reader::decode_flatbuf() {
  MemorySource src{payload_};
  const uint64_t n = hdr_.payload_bytes;
  FlatbufRecords<MemorySource> d(src, n);
  events_.reserve(static_cast<size_t>(n / kFlatStride));
  DecodedEvent ev;
  while (d.next(ev)) events_.push_back(ev);
  hdr_.total_cycles = d.total_cycles();
  if (!d.trailer()) {
    hdr_.payload_trailing_bytes = n - d.end();
    return;
  }
  hdr_.flatbuf_trailer = 1;
  decode_flatbuf_trailer(src, n, d.end(), events_.size(), [&](uint32_t idx, const char *s, uint16_t len) {
    if (events_[idx].api_name == kNoString) ++hdr_.num_api_names;
    events_[idx].api_name = pool_.intern(s, len);  // a repeated index: the last entry wins
  });
}

void Reader::event(uint64_t i, pccx_event_t *out) const {
  const DecodedEvent &e = events_[static_cast<size_t>(i)];
  out->core_id = e.core_id;
  out->type_id = e.type_id;
  out->start_cycle = e.start;
  out->duration = e.duration;
  if (e.type_name != kNoString) out->type_name = pool_.bytes.data() + e.type_name;
  else out->type_name = e.type_id < PCCX_EVENT_TYPE_COUNT ? kTypeNames[e.type_id] : "UNKNOWN";
  out->api_name = e.api_name == kNoString ? nullptr : pool_.bytes.data() + e.api_name;
}

}  // namespace uscope::pccx
