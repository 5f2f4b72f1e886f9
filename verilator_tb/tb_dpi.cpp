// tb_dpi.cpp — the testbench's own DPI imports, implemented for the RTL (see tb_dpi.h).
#include "tb_dpi.h"

#include <cstdio>
#include <map>

#include "Vsoc_top__Dpi.h"

namespace {
std::map<uint32_t, uint64_t> g_fw_report;
uint64_t g_trace_errors = 0;
}  // namespace

// tb_mmio.sv: the firmware adds `value` to scoreboard entry `key` (fw/tb_report.h).
void tb_fw_report(unsigned int key, unsigned int value) { g_fw_report[key] += value; }

#ifdef USCOPE_TB_TRACE
// tb_trace_pkg.sv: a tracing call in the RTL returned `status`. The first few are printed (the
// protocol helpers' messages name the call); sim_main fails the run when there was any.
void tb_trace_error(int status) {
  if (g_trace_errors++ < 10)
    std::fprintf(stderr, "sim_main: trace call failed: %s: %s\n", uscope_status_str(status),
                 uscope_last_error());
}
#endif

uint64_t tb_dpi_fw_report(uint32_t key) {
  auto it = g_fw_report.find(key);
  return it == g_fw_report.end() ? 0 : it->second;
}

uint64_t tb_dpi_trace_errors() { return g_trace_errors; }
