// extern "C" exporters and the Kanata import (include/uscope/export.h):
// argument checks, options resolved, exceptions caught; the work is
// src/export/'s.
#include <uscope/export.h>

#include <strings.h>

#include <cstring>

#include "capi/guard.hpp"
#ifdef USCOPE_WITH_EXPORT
#include "export/export.hpp"
#endif

using uscope::guard;

namespace {

struct FormatName {
  uint32_t format;
  const char *name;
};
// The names of `uscope export --to` (export.h).
constexpr FormatName kFormats[] = {
    {USCOPE_EXPORT_KONATA, "konata"},         {USCOPE_EXPORT_PERFETTO, "perfetto"},
    {USCOPE_EXPORT_CHROME_JSON, "chrome-json"}, {USCOPE_EXPORT_NYTPROF, "nytprof"},
    {USCOPE_EXPORT_HPCTOOLKIT, "hpctoolkit"}, {USCOPE_EXPORT_FST, "fst"},
    {USCOPE_EXPORT_VCD, "vcd"},
};

// Copies at most the caller's struct_size bytes of an options struct over
// the defaults (a caller built against an older, shorter struct).
template <class T>
T sized_copy(const T *in, const T &defaults) {
  T o = defaults;
  if (in) std::memcpy(&o, in, std::min<size_t>(in->struct_size, sizeof o));
  o.struct_size = sizeof o;
  return o;
}

}  // namespace

extern "C" {

USCOPE_API uint32_t uscope_export_format_from_name(const char *name) {
  if (!name) return 0;
  for (const FormatName &f : kFormats)
    if (!::strcasecmp(name, f.name)) return f.format;
  return 0;
}

USCOPE_API const char *uscope_export_format_name(uint32_t format) {
  for (const FormatName &f : kFormats)
    if (f.format == format) return f.name;
  return nullptr;
}

USCOPE_API void uscope_export_options_init(uscope_export_options_t *opts) {
  if (!opts) return;
  *opts = uscope_export_options_t{};
  opts->struct_size = sizeof *opts;
  opts->range_end = UINT64_MAX;
}

USCOPE_API void uscope_konata_import_options_init(uscope_konata_import_options_t *opts) {
  if (!opts) return;
  *opts = uscope_konata_import_options_t{};
  opts->struct_size = sizeof *opts;
  opts->clock_period_ps = 1000;
}

#ifdef USCOPE_WITH_EXPORT
USCOPE_API uscope_status_t uscope_export(uscope_export_stats_t *stats, const char *in, const char *out,
                                         const uscope_export_options_t *opts) {
  return guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out && opts, "uscope_export: NULL argument");
    USCOPE_CHECK_ARG(opts->struct_size >= 16, "uscope_export: opts->struct_size not set (uscope_export_options_init)");
    uscope_export_options_t dflt;
    uscope_export_options_init(&dflt);
    const uscope_export_options_t o = sized_copy(opts, dflt);
    USCOPE_CHECK_ARG(uscope_export_format_name(o.format), "uscope_export: unknown format %u", o.format);
    uscope::exporter::run_export(in, out, o, stats);
    return USCOPE_OK;
  });
}

USCOPE_API uscope_status_t uscope_import_konata(uscope_convert_stats_t *stats, const char *in, const char *out,
                                                const uscope_konata_import_options_t *opts) {
  return guard([&]() -> uscope_status_t {
    USCOPE_CHECK_ARG(in && out, "uscope_import_konata: NULL path");
    USCOPE_CHECK_ARG(!opts || opts->struct_size >= 8, "uscope_import_konata: opts->struct_size not set");
    uscope_konata_import_options_t dflt;
    uscope_konata_import_options_init(&dflt);
    uscope_konata_import_options_t o = sized_copy(opts, dflt);
    if (!o.clock_period_ps) o.clock_period_ps = 1000;
    uscope::exporter::import_konata(in, out, o, stats);
    return USCOPE_OK;
  });
}

#else
// The exporters read NPU events with the converters and gzip with zlib: a
// build without them (USCOPE_WITH_NPU=OFF) still exports every function.
namespace {
uscope_status_t unsupported(const char *call) {
  uscope::set_thread_error(std::string(call) +
                           ": this libuscope was built without the exporters "
                           "(USCOPE_WITH_NPU=OFF: they need simdjson and zlib)");
  return USCOPE_ERR_UNSUPPORTED;
}
}  // namespace
USCOPE_API uscope_status_t uscope_export(uscope_export_stats_t *, const char *, const char *,
                                         const uscope_export_options_t *) {
  return unsupported("uscope_export");
}
USCOPE_API uscope_status_t uscope_import_konata(uscope_convert_stats_t *, const char *, const char *,
                                                const uscope_konata_import_options_t *) {
  return unsupported("uscope_import_konata");
}
#endif

}  // extern "C"
