// The converters' option defaults and format names (convert.h). Built in
// every configuration: they need neither simdjson nor zlib, and
// src/capi/npu_common_capi.cpp exports them with USCOPE_WITH_NPU=OFF too.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "convert/convert.hpp"

namespace uscope::convert {

void default_options(uscope_convert_options_t *opts) {
  std::memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->period_ps = 0;  // the trace's (TRACE_META period_ps), else 1000
  opts->max_line_bytes = 64ull << 20;
  opts->reorder_window = 65536;
  opts->queue_depth = 1024;
  opts->num_contexts = 256;
  opts->num_te = 64;
  opts->num_ve = 64;
  opts->num_dma_channels = 64;
  opts->num_dram_channels = 64;
  opts->num_noc_links = 64;
  opts->num_sram_banks = 1024;
  opts->max_skipped_ppm = 10000;
}

bool ends_with(std::string_view s, std::string_view suffix, bool ignore_case) {
  if (s.size() < suffix.size()) return false;
  const std::string_view tail = s.substr(s.size() - suffix.size());
  if (!ignore_case) return tail == suffix;
  return std::equal(tail.begin(), tail.end(), suffix.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

uint32_t format_of(const char *path) {
  if (!path) return USCOPE_CONVERT_AUTO;
  const std::string_view p(path);
  for (const char *sfx : {".jsonl", ".jsonl.gz", ".json.gz", ".json"})
    if (ends_with(p, sfx, false)) return USCOPE_CONVERT_JSONL;
  if (ends_with(p, ".uscope", false)) return USCOPE_CONVERT_USCOPE;
  if (ends_with(p, ".pccx", false)) return USCOPE_CONVERT_PCCX;
  return USCOPE_CONVERT_AUTO;
}

Options::Options(const uscope_convert_options_t *in) {
  default_options(&o);
  if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
  o.struct_size = sizeof o;
  uscope_convert_options_t d;
  default_options(&d);
  period_given = o.period_ps != 0;
  if (!o.period_ps) o.period_ps = 1000;
  if (!o.max_line_bytes) o.max_line_bytes = d.max_line_bytes;
  if (!o.reorder_window) o.reorder_window = d.reorder_window;
  if (!o.queue_depth) o.queue_depth = d.queue_depth;
  if (!o.num_contexts) o.num_contexts = d.num_contexts;
  if (!o.num_te) o.num_te = d.num_te;
  if (!o.num_ve) o.num_ve = d.num_ve;
  if (!o.num_dma_channels) o.num_dma_channels = d.num_dma_channels;
  if (!o.num_dram_channels) o.num_dram_channels = d.num_dram_channels;
  if (!o.num_noc_links) o.num_noc_links = d.num_noc_links;
  if (!o.num_sram_banks) o.num_sram_banks = d.num_sram_banks;
  if (!o.max_skipped_ppm) o.max_skipped_ppm = d.max_skipped_ppm;
}

}  // namespace uscope::convert
