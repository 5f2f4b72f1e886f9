// What every extern "C" function shares: guard() (src/base/guard.hpp) around
// its body, and the argument check that fails with USCOPE_ERR_INVALID_ARGUMENT.
#pragma once

#include "base/guard.hpp"

#define USCOPE_CHECK_ARG(cond, ...)                                  \
  do {                                                               \
    if (!(cond)) ::uscope::fail(USCOPE_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)
