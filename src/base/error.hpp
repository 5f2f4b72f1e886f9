// The C++ core reports failures by throwing uscope::Error; the C ABI layer
// (src/capi/) catches every exception and turns it into a status plus a
// message. The per-cycle hot path never throws: it returns status codes.
#pragma once

#include <cstdarg>
#include <stdexcept>
#include <string>

#include "uscope/uscope.h"

namespace uscope {

class Error : public std::runtime_error {
 public:
  Error(uscope_status_t code, std::string msg) : std::runtime_error(std::move(msg)), code_(code) {}
  uscope_status_t code() const noexcept { return code_; }

 private:
  uscope_status_t code_;
};

// printf-style message formatting for error paths (never the hot path).
std::string format_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format_message_v(const char *fmt, va_list ap);

[[noreturn]] void fail(uscope_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace uscope
