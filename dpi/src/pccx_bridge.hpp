// The pccx calls of the bridge (pccx.cpp), as seen from entry.cpp. Like
// bridge.hpp it includes no libuscope header (entry.cpp is also compiled
// against Verilator's generated __Dpi.h).
#pragma once

#include <cstdint>

namespace uscope_dpi {

void *pccx_open(const char *path, const char *options) noexcept;
int pccx_event(void *w, uint32_t core, uint64_t start, uint64_t duration, uint32_t type,
               const char *api_name) noexcept;
int pccx_set_total_cycles(void *w, uint64_t cycles) noexcept;
int pccx_close(void *w) noexcept;
const char *pccx_error() noexcept;

}  // namespace uscope_dpi
