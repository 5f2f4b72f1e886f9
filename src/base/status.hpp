// Status codes are the public enum uscope_status_t (include/uscope/uscope.h);
// this is their one table of names, for uscope_status_str() and for messages.
#pragma once

#include "uscope/uscope.h"

namespace uscope {

const char *status_name(uscope_status_t s) noexcept;

}  // namespace uscope
