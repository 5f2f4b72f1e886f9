// PLACEHOLDER (replaced by the exporter's own implementation in this session; never released).
#include "base/error.hpp"
#include "export/export.hpp"

namespace uscope::exporter {
void export_perfetto(Job &) { fail(USCOPE_ERR_UNSUPPORTED, "perfetto: not built yet"); }
}  // namespace uscope::exporter
