// The converters' C++ interface (docs/convert.md): what src/capi/convert_capi.cpp
// calls. Each pipeline lives in its own file (jsonl_to_uscope.cpp, jsonl_to_pccx.cpp,
// jsonl_to_jsonl.cpp, uscope_to_jsonl.cpp, pccx_to_jsonl.cpp, npu_report.cpp); the
// pieces they share are in pipeline.hpp. This header needs neither simdjson nor zlib:
// options.cpp (defaults, format names) is built with USCOPE_WITH_NPU=OFF too.
#pragma once

#include <uscope/convert.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace uscope::convert {

// uscope_convert_options_init's defaults (convert.h).
void default_options(uscope_convert_options_t *opts);
// The format a path's suffix names, or USCOPE_CONVERT_AUTO (convert.h, uscope_convert_format_of).
uint32_t format_of(const char *path);
// s ends with suffix; ignore_case folds s to lower case (suffix is lower case).
bool ends_with(std::string_view s, std::string_view suffix, bool ignore_case);

// A conversion may skip this many events whatever their share
// (convert.h max_skipped_ppm): a killed run's truncated last line, a few
// debug prints.
constexpr uint64_t kSkipAllowance = 10;

// The caller's options with every 0 replaced by its default.
struct Options {
  uscope_convert_options_t o{};
  bool period_given = false;  // else TRACE_META's period_ps, else 1000
  // in may be NULL (the defaults); at most in->struct_size bytes of it are read.
  explicit Options(const uscope_convert_options_t *in);
};

// Converts in (in_format) to out (out_format), both formats resolved (not
// AUTO). The output is written beside out and renamed over it on success;
// it is never the input. On failure the thread's last error says why.
uscope_status_t convert(const char *in, uint32_t in_format, const char *out, uint32_t out_format,
                        const Options &opts, uscope_convert_stats_t *stats);

// The NPU metrics report of in (format resolved: JSONL, µScope or pccx), as
// text or JSON in *text.
uscope_status_t npu_report(const char *in, uint32_t format, const Options &opts, bool json, std::string *text,
                           uscope_convert_stats_t *stats);

}  // namespace uscope::convert
