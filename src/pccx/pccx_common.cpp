#include "pccx/pccx_common.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace uscope::pccx {

const char *const kTypeNames[PCCX_EVENT_TYPE_COUNT] = {
    "UNKNOWN", "MAC_COMPUTE", "DMA_READ", "DMA_WRITE", "SYSTOLIC_STALL", "BARRIER_SYNC", "API_CALL"};

uint32_t type_id_of(const char *s, size_t n) noexcept {
  for (uint32_t i = 0; i < PCCX_EVENT_TYPE_COUNT; ++i)
    if (std::strlen(kTypeNames[i]) == n && std::memcmp(kTypeNames[i], s, n) == 0) return i;
  return PCCX_EVENT_TYPE_COUNT;
}

void json_quote(std::string &out, const char *s) {
  out += '"';
  for (const unsigned char *p = reinterpret_cast<const unsigned char *>(s); *p; ++p) {
    const unsigned char c = *p;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

std::string json_double(double v) {
  std::string out = std::signbit(v) ? "-" : "";
  if (v == 0) return out + "0.0";
  // Shortest round-trip digits: [-]d[.ddd]e±XX.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string digits;
  const char *p = buf;
  for (; p < r.ptr && *p != 'e'; ++p)
    if (*p != '.') digits += *p;
  // to_chars writes no terminating NUL: the exponent is parsed up to r.ptr
  // only (atoi read on into stale stack bytes, so 1.23e-04 could become e-040).
  int exp10 = 0;                                   // v = d.ddd x 10^exp10
  const char *e = p + 1;
  if (e < r.ptr && *e == '+') ++e;
  std::from_chars(e, r.ptr, exp10);
  const int n = static_cast<int>(digits.size());
  const int kk = exp10 + 1;                        // digits before the decimal point
  const int k = kk - n;                            // v = digits x 10^k
  if (k >= 0 && kk <= 16) {                        // 1234e7 -> 12340000000.0
    out += digits;
    out.append(static_cast<size_t>(k), '0');
    out += ".0";
  } else if (kk > 0 && kk <= 16) {                 // 1234e-2 -> 12.34
    out += digits.substr(0, static_cast<size_t>(kk));
    out += '.';
    out += digits.substr(static_cast<size_t>(kk));
  } else if (kk > -5 && kk <= 0) {                 // 1234e-6 -> 0.001234
    out += "0.";
    out.append(static_cast<size_t>(-kk), '0');
    out += digits;
  } else {                                         // 1e30, 1234e30 -> 1.234e33
    out += digits[0];
    if (n > 1) out += '.' + digits.substr(1);
    out += 'e' + std::to_string(kk - 1);
  }
  return out;
}

}  // namespace uscope::pccx
