// PLACEHOLDER (replaced by the exporter's own implementation in this session; never released).
#include "base/error.hpp"
#include "export/export.hpp"

namespace uscope::exporter {
void export_chrome_json(Job &) { fail(USCOPE_ERR_UNSUPPORTED, "chrome_json: not built yet"); }
}  // namespace uscope::exporter
