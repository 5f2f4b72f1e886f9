#include "base/error.hpp"

#include <cstdio>

namespace uscope {

std::string format_message_v(const char *fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  return buf;
}

std::string format_message(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = format_message_v(fmt, ap);
  va_end(ap);
  return s;
}

void fail(uscope_status_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = format_message_v(fmt, ap);
  va_end(ap);
  throw Error(code, std::move(s));
}

}  // namespace uscope
