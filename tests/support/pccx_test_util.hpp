// Helpers for the .pccx tests: build files byte by byte, read files whole.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pccx/pccx.h"

namespace uscope::test {

inline const std::string kPccxDummy =
    std::string(USCOPE_SHARED_DIR) + "/conformance/pccx/dummy_trace.pccx";

inline std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline void put_u16(std::vector<uint8_t> &b, uint16_t v) {
  b.insert(b.end(), reinterpret_cast<uint8_t *>(&v), reinterpret_cast<uint8_t *>(&v) + 2);
}
inline void put_u32(std::vector<uint8_t> &b, uint32_t v) {
  b.insert(b.end(), reinterpret_cast<uint8_t *>(&v), reinterpret_cast<uint8_t *>(&v) + 4);
}
inline void put_u64(std::vector<uint8_t> &b, uint64_t v) {
  b.insert(b.end(), reinterpret_cast<uint8_t *>(&v), reinterpret_cast<uint8_t *>(&v) + 8);
}
inline void put_str(std::vector<uint8_t> &b, const std::string &s) {
  put_u64(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}

// A whole .pccx file: fixed header, json as given, payload.
inline std::vector<uint8_t> pccx_file(const std::string &json, const std::vector<uint8_t> &payload,
                                      uint8_t major = 1, uint8_t minor = 1) {
  std::vector<uint8_t> f = {'P', 'C', 'C', 'X', major, minor, 0, 0};
  put_u64(f, json.size());
  f.insert(f.end(), json.begin(), json.end());
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

inline std::string pccx_json(const std::string &encoding, uint64_t bytes, const std::string &checksum = "null") {
  return "{\"pccx_lab_version\":\"test\",\"arch\":{\"mac_dims\":[4,8],\"isa_version\":\"1.1\",\"peak_tops\":1.5},"
         "\"trace\":{\"cycles\":100,\"cores\":2,\"clock_mhz\":500},\"payload\":{\"encoding\":\"" +
         encoding + "\",\"byte_length\":" + std::to_string(bytes) + ",\"checksum_fnv64\":" + checksum +
         "},\"format_minor\":1}";
}

inline uscope_status_t open_bytes(const std::vector<uint8_t> &b, pccx_reader_t **r, uint32_t flags = 0) {
  return pccx_reader_open_memory(r, b.data(), b.size(), flags);
}

}  // namespace uscope::test
