// tb_dpi.h — the harness side of the testbench's own DPI imports (tb_dpi.cpp), as sim_main.cpp
// sees it. tb_dpi.cpp is compiled against Verilator's generated Vsoc_top__Dpi.h, so the C and
// SystemVerilog signatures cannot drift apart; sim_main.cpp cannot include that header itself,
// because it declares libuscope's functions with DPI types (void * for uscope_writer_t *).
#pragma once
#include <cstdint>

// Total of the values the firmware reported under scoreboard key `key` (tb_mmio.sv REPORT_*).
uint64_t tb_dpi_fw_report(uint32_t key);
// Tracing calls in the RTL that returned an error (tb_trace_pkg.sv); 0 in untraced builds.
uint64_t tb_dpi_trace_errors();
