// The C entry points of src/base: status strings, the last error, versions.

#include "base/last_error.hpp"
#include "base/status.hpp"
#include "uscope/uscope.h"


extern "C" {

USCOPE_API uint32_t uscope_version_number(void) { return USCOPE_VERSION_NUMBER; }

USCOPE_API const char *uscope_version_string(void) {
#define USCOPE_STR2(x) #x
#define USCOPE_STR(x) USCOPE_STR2(x)
  return USCOPE_STR(USCOPE_VERSION_MAJOR) "." USCOPE_STR(USCOPE_VERSION_MINOR) "." USCOPE_STR(
      USCOPE_VERSION_PATCH);
}

USCOPE_API uint32_t uscope_format_version(void) {
  return (uint32_t{USCOPE_FORMAT_VERSION_MAJOR} << 16) | USCOPE_FORMAT_VERSION_MINOR;
}

USCOPE_API const char *uscope_status_str(uscope_status_t s) { return uscope::status_name(s); }

USCOPE_API const char *uscope_last_error(void) { return uscope::thread_error(); }

}  // extern "C"
