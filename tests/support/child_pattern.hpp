// The deterministic cycle pattern of the test child (tests/e2e/child.c): one
// C++ definition for every test that checks what the child wrote. Keep it
// equal to child.c, which cannot include this header (it is plain C).
#pragma once

#include <cstdint>
#include <vector>

#include "format/wire.hpp"

namespace uscope::test::child {

inline constexpr uint64_t kPeriodPs = 1000;
inline constexpr uint64_t kIntervalPs = 50 * kPeriodPs;
inline constexpr uint64_t kCyclesPerSegment = kIntervalPs / kPeriodPs;
inline constexpr uint16_t kNumSlots = 8;
inline constexpr uint64_t kCyclesPerBlock = 50;  // one progress line, one token

// Every fifth cycle uses values too large for the compact form.
inline bool pat_wide(uint64_t n) { return n % 5 == 0; }
inline uint32_t pat_id(uint64_t n) {
  return pat_wide(n) ? (static_cast<uint32_t>(n * 2654435761u) | 0x10000u)
                     : static_cast<uint32_t>(n & 0xFFFFu);
}
inline uint64_t pat_pc(uint64_t n) { return pat_wide(n) ? 0x100000000ull + 4 * n : (4 * n) & 0xFFFFu; }
inline bool pat_clear(uint64_t n) { return (n / 8) % 3 == 2; }
inline uint64_t pat_add(uint64_t n) { return n % 7 + 1; }
// The 12-byte event of cycle n: u64 n, u32 n ^ 0xA5A5A5A5.
inline std::vector<uint8_t> pat_payload(uint64_t n) {
  std::vector<uint8_t> p(12);
  wire::put_u64(p.data(), n);
  wire::put_u32(p.data() + 8, static_cast<uint32_t>(n ^ 0xA5A5A5A5u));
  return p;
}

}  // namespace uscope::test::child
