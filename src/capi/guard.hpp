// The one place where C++ failures become C status codes. Every extern "C"
// function that can fail runs its body through guard(), which catches every
// exception, stores the message for uscope_last_error() and returns a status.
#pragma once

#include <new>
#include <string>

#include "format/error.hpp"

namespace uscope {

void set_thread_error(const std::string &msg);
void set_thread_error(const char *msg) noexcept;

template <class F>
uscope_status_t guard(F &&body) noexcept {
  try {
    return body();
  } catch (const Error &e) {
    set_thread_error(e.what());
    return e.code();
  } catch (const std::bad_alloc &) {
    set_thread_error("out of memory");
    return USCOPE_ERR_NO_MEMORY;
  } catch (const std::exception &e) {
    set_thread_error(e.what());
    return USCOPE_ERR_INTERNAL;
  } catch (...) {
    set_thread_error("unknown exception");
    return USCOPE_ERR_INTERNAL;
  }
}

}  // namespace uscope

#define USCOPE_CHECK_ARG(cond, ...)                                  \
  do {                                                               \
    if (!(cond)) ::uscope::fail(USCOPE_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)
