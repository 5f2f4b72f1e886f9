// PLACEHOLDER (replaced in this session; never released).
#include "base/error.hpp"
#include "export/export.hpp"

namespace uscope::exporter {
void import_konata(const char *, const char *, const uscope_konata_import_options_t &, uscope_convert_stats_t *) {
  fail(USCOPE_ERR_UNSUPPORTED, "konata import: not built yet");
}
}  // namespace uscope::exporter
