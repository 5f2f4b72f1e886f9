// The library's version as text, from the macros of include/uscope/uscope.h: what
// uscope_version_string() returns and what the writers record as their producer.
#pragma once

#include "uscope/uscope.h"

#define USCOPE_VERSION_STR2_(x) #x
#define USCOPE_VERSION_STR_(x) USCOPE_VERSION_STR2_(x)

namespace uscope {

inline constexpr const char *kVersionString = USCOPE_VERSION_STR_(USCOPE_VERSION_MAJOR) "." USCOPE_VERSION_STR_(
    USCOPE_VERSION_MINOR) "." USCOPE_VERSION_STR_(USCOPE_VERSION_PATCH);

}  // namespace uscope
