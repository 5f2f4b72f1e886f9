// The C entry points of src/base: status strings, the last error, versions.

#include "base/last_error.hpp"
#include "base/status.hpp"
#include "base/version.hpp"
#include "uscope/uscope.h"


extern "C" {

USCOPE_API uint32_t uscope_version_number(void) { return USCOPE_VERSION_NUMBER; }

USCOPE_API const char *uscope_version_string(void) { return uscope::kVersionString; }

USCOPE_API uint32_t uscope_format_version(void) {
  return (uint32_t{USCOPE_FORMAT_VERSION_MAJOR} << 16) | USCOPE_FORMAT_VERSION_MINOR;
}

USCOPE_API const char *uscope_status_str(uscope_status_t s) { return uscope::status_name(s); }

USCOPE_API const char *uscope_last_error(void) { return uscope::thread_error(); }

USCOPE_API void uscope_set_last_error(const char *message) { uscope::set_thread_error(message); }

}  // extern "C"
