// A small protobuf wire-format encoder (protobuf "Encoding": varints,
// length-delimited fields, fixed64), for the Perfetto exporter.
//
// Why not libprotobuf: the exporter writes a dozen fields of five Perfetto
// messages; a generated .proto subset would bring a build-time protoc step
// and a runtime library to the core for what is ~60 lines here, and the
// messages are written once and never parsed back. The encoding is tested
// by decoding every packet with protoc --decode_raw and with an independent
// decoder (tests/unit/test_export_perfetto.cpp).
//
// A message is built into a std::string; a nested message is built into its
// own string first and then appended as a length-delimited field, so every
// length is known when it is written (no back-patching).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace uscope::exporter::pb {

// Wire types (protobuf encoding, "Message Structure").
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2 };

inline void put_varint(std::string &out, uint64_t v) {
  char b[10];
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<char>(v);
  out.append(b, n);
}

inline void put_tag(std::string &out, uint32_t field, WireType wt) { put_varint(out, (uint64_t{field} << 3) | wt); }

// uint32/uint64/bool/enum, and int32/int64 as their two's complement (a
// negative int is ten bytes, as protobuf writes it).
inline void put_uint(std::string &out, uint32_t field, uint64_t v) {
  put_tag(out, field, kVarint);
  put_varint(out, v);
}
inline void put_int(std::string &out, uint32_t field, int64_t v) { put_uint(out, field, static_cast<uint64_t>(v)); }

inline void put_fixed64(std::string &out, uint32_t field, uint64_t v) {
  put_tag(out, field, kFixed64);
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));  // little-endian
  out.append(b, 8);
}

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
// The bytes put_bytes(out, field, s) appends for an s of n bytes, so that a
// message can be written straight into its parent once its parts are known.
inline size_t len_field_size(uint32_t field, size_t n) {
  return varint_size((uint64_t{field} << 3) | kLen) + varint_size(n) + n;
}

// A string, bytes, or an already-encoded nested message.
inline void put_bytes(std::string &out, uint32_t field, std::string_view s) {
  put_tag(out, field, kLen);
  put_varint(out, s.size());
  out.append(s.data(), s.size());
}

// The same encoding into a raw buffer the caller sized (the hot path's
// packets: no capacity check per field). Each advances p past what it wrote.
inline void wr_varint(char *&p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
}
inline void wr_tag(char *&p, uint32_t field, WireType wt) { wr_varint(p, (uint64_t{field} << 3) | wt); }
inline void wr_uint(char *&p, uint32_t field, uint64_t v) {
  wr_tag(p, field, kVarint);
  wr_varint(p, v);
}
inline void wr_fixed64(char *&p, uint32_t field, uint64_t v) {
  wr_tag(p, field, kFixed64);
  for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(v >> (8 * i));  // little-endian
}
inline void wr_bytes(char *&p, uint32_t field, const char *s, size_t n) {
  wr_tag(p, field, kLen);
  wr_varint(p, n);
  // Most are a few bytes (a nested annotation): a loop, not a memcpy call.
  if (n <= 16) {
    for (size_t i = 0; i < n; ++i) p[i] = s[i];
  } else {
    std::memcpy(p, s, n);
  }
  p += n;
}
// The most bytes a field of each kind takes (tag and varints of 10 bytes).
inline constexpr size_t kMaxVarintField = 20, kMaxFixed64Field = 18, kMaxLenFieldHead = 20;

}  // namespace uscope::exporter::pb
