// extern "C" converters (include/uscope/convert.h): argument checks, the
// formats resolved, exceptions caught; the work is src/convert/convert.hpp's.
#include <uscope/convert.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "capi/guard.hpp"
#include "convert/convert.hpp"

using uscope::guard;
namespace cv = uscope::convert;

extern "C" {

USCOPE_API uscope_status_t uscope_convert(uscope_convert_stats_t *stats, const char *in, uint32_t in_format, const char *out,
                                          uint32_t out_format, const uscope_convert_options_t *opts) {
  return guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert: NULL path");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert: opts->struct_size not set");
    const uint32_t fi = in_format ? in_format : cv::format_of(in);
    const uint32_t fo = out_format ? out_format : cv::format_of(out);
    return cv::convert(in, fi, out, fo, cv::Options(opts), stats);
  });
}

USCOPE_API uscope_status_t uscope_jsonl_to_uscope(uscope_convert_stats_t *s, const char *in, const char *out,
                                                  const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_USCOPE, o);
}
USCOPE_API uscope_status_t uscope_jsonl_to_pccx(uscope_convert_stats_t *s, const char *in, const char *out,
                                                const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_JSONL, out, USCOPE_CONVERT_PCCX, o);
}
USCOPE_API uscope_status_t uscope_convert_uscope_to_jsonl(uscope_convert_stats_t *s, const char *in,
                                                          const char *out, const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_USCOPE, out, USCOPE_CONVERT_JSONL, o);
}
USCOPE_API uscope_status_t uscope_convert_pccx_to_jsonl(uscope_convert_stats_t *s, const char *in,
                                                        const char *out, const uscope_convert_options_t *o) {
  return uscope_convert(s, in, USCOPE_CONVERT_PCCX, out, USCOPE_CONVERT_JSONL, o);
}

USCOPE_API uscope_status_t uscope_convert_npu_report(char **out, uscope_convert_stats_t *stats,
                                                     const char *in, uint32_t in_format, const uscope_convert_options_t *opts,
                                                     int json) {
  return guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_convert_npu_report: NULL argument");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_convert_npu_report: opts->struct_size not set");
    std::string text;
    const uint32_t fmt = in_format ? in_format : cv::format_of(in);
    if (uscope_status_t s = cv::npu_report(in, fmt, cv::Options(opts), json != 0, &text, stats)) return s;
    // The caller frees it with uscope_convert_free (free()).
    char *buf = static_cast<char *>(std::malloc(text.size() + 1));
    if (!buf) uscope::fail(USCOPE_ERR_NO_MEMORY, "out of memory");
    std::memcpy(buf, text.c_str(), text.size() + 1);
    *out = buf;
    return USCOPE_OK;
  });
}

}  // extern "C"
