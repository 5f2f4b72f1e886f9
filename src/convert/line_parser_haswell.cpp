// The line parser with simdjson's AVX2 (haswell) On-Demand kernels, chosen
// at run time by make_line_parser() on CPUs that have them. The root
// CMakeLists.txt compiles this file alone with -mavx2 -mbmi -mpclmul
// -mlzcnt on x86-64, which makes On-Demand's builtin implementation
// haswell (a target pragma does not define __AVX2__ in g++). Elsewhere (and
// in the fuzz build) it compiles the portable kernels and is never chosen.
// Caveat: inline functions shared with other files (std::, simdjson's
// non-kernel helpers) are compiled with AVX2 here too; the linker keeps one
// copy, so a pre-2013 x86 CPU without AVX2 could meet one of them.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <uscope/uscope.h>

#include "convert/jsonl_ingest.hpp"

#if defined(__AVX2__)
#define USCOPE_LP_AVX2 1
#else
#define USCOPE_LP_AVX2 0
#endif

#include <simdjson.h>

#define USCOPE_LP_NS lp_haswell
#include "convert/line_parser_impl.inc"

namespace uscope::convert::lp_haswell {
bool compiled_for_avx2() { return USCOPE_LP_AVX2 != 0; }
}  // namespace uscope::convert::lp_haswell
