// Shared pieces of the .pccx reader and writer (docs/pccx.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "pccx/pccx.h"

namespace uscope::pccx {

inline constexpr uint8_t kMagic[4] = {'P', 'C', 'C', 'X'};
inline constexpr size_t kFixedHeader = 16;              // magic, major, minor, reserved, u64 len
inline constexpr uint64_t kMaxHeaderBytes = 64u << 20;   // JSON header sanity bound
inline constexpr uint32_t kFlatMagicV2 = 0x32434350u;   // "PCC2" little-endian
inline constexpr size_t kFlatStride = 24;
// Smallest bincode event: u32 core, u64 start, u64 duration, u64 name length
// (empty name), u8 option tag.
inline constexpr size_t kMinBincodeEvent = 4 + 8 + 8 + 8 + 1;

extern const char *const kTypeNames[PCCX_EVENT_TYPE_COUNT];

// PCCX_EVENT_TYPE_COUNT when the name is not in the table.
uint32_t type_id_of(const char *s, size_t n) noexcept;

bool valid_utf8(const char *s, size_t n) noexcept;

// Append s to out as a JSON string literal (quotes included).
void json_quote(std::string &out, const char *s);
// v (finite) as serde_json writes an f64, which is how pccx-lab's own
// headers read (COMPAT 22): the shortest digits that read back to v, laid
// out as the ryu crate does — 0.0, 100.0, 2.05, 0.0001, 1e16, 1.5e-7.
// Locale-independent.
std::string json_double(double v);

inline uint32_t load_u32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (the whole library assumes it)
}
inline uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint16_t load_u16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

}  // namespace uscope::pccx
