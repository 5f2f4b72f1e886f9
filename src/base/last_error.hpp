// The per-thread message of the last failed call: what uscope_last_error()
// returns. Set by the C facade when it turns an exception into a status, and
// by the parts of the core whose per-call paths return statuses without
// throwing (the writer's per-cycle calls, the protocol helpers, the pccx
// writer). A fixed buffer, so that recording an error never allocates and
// never fails.
#pragma once

#include <string>

namespace uscope {

void set_thread_error(const char *msg) noexcept;
void set_thread_error(const std::string &msg) noexcept;
// The calling thread's last message ("" when none was set).
const char *thread_error() noexcept;

}  // namespace uscope
