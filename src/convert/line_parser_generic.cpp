// The line parser with simdjson's portable On-Demand kernels, and the
// runtime choice between it and line_parser_haswell.cpp.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include <simdjson.h>
#include <uscope/uscope.h>

#include "convert/jsonl_ingest.hpp"

#define USCOPE_LP_NS lp_generic
#include "convert/line_parser_impl.inc"

namespace uscope::convert {
namespace lp_haswell {
std::unique_ptr<LineParserImpl> make();
bool compiled_for_avx2();
}

std::unique_ptr<LineParserImpl> make_line_parser() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (lp_haswell::compiled_for_avx2() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("bmi2"))
    return lp_haswell::make();
#endif
  return lp_generic::make();
}

}  // namespace uscope::convert
