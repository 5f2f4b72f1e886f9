// The pccx code's one use of simdjson outside the reader: its UTF-8 check
// (pccx_common.hpp), apart so that the simdjson-free part of pccx_common.cpp
// (the event type names) is in every build, USCOPE_WITH_NPU=OFF included.
#include <simdjson.h>

#include "pccx/pccx_common.hpp"

namespace uscope::pccx {

bool valid_utf8(const char *s, size_t n) noexcept { return simdjson::validate_utf8(s, n); }

}  // namespace uscope::pccx
