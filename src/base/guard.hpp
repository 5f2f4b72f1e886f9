// The one place where C++ failures become status codes: guard() runs a body,
// catches every exception, stores its message for uscope_last_error() and
// returns a status. Every extern "C" function that can fail runs through it
// (src/capi), as do the core's noexcept per-call paths that may allocate (the
// protocol helpers' string interning).
#pragma once

#include <new>
#include <string>

#include "base/error.hpp"
#include "base/last_error.hpp"

namespace uscope {

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
