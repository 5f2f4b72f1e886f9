#include "base/last_error.hpp"

#include <cstdio>

namespace uscope {

namespace {
thread_local char t_error[1024];
}  // namespace

void set_thread_error(const char *msg) noexcept { std::snprintf(t_error, sizeof t_error, "%s", msg ? msg : ""); }
void set_thread_error(const std::string &msg) noexcept { set_thread_error(msg.c_str()); }
const char *thread_error() noexcept { return t_error; }

}  // namespace uscope
