#include "pccx/pccx_common.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <simdjson.h>

namespace uscope::pccx {

const char *const kTypeNames[PCCX_EVENT_TYPE_COUNT] = {
    "UNKNOWN", "MAC_COMPUTE", "DMA_READ", "DMA_WRITE", "SYSTOLIC_STALL", "BARRIER_SYNC", "API_CALL"};

uint32_t type_id_of(const char *s, size_t n) noexcept {
  for (uint32_t i = 0; i < PCCX_EVENT_TYPE_COUNT; ++i)
    if (std::strlen(kTypeNames[i]) == n && std::memcmp(kTypeNames[i], s, n) == 0) return i;
  return PCCX_EVENT_TYPE_COUNT;
}

bool valid_utf8(const char *s, size_t n) noexcept { return simdjson::validate_utf8(s, n); }

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
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace uscope::pccx
