// npu_tb_dpi.cpp: the DPI-C function the traced RTL imports (tb_trace_pkg::tb_trace_error),
// compiled against Verilator's generated header so the C and SV signatures cannot drift. Kept
// apart from npu_tb_trace.cpp: that header redeclares uscope_pkg's imports with DPI types,
// which clash with include/uscope/protocols.h.
#include "Vnpu_top__Dpi.h"
#include "npu_tb_trace.h"

void tb_trace_error(int status) { npu_tb_trace_hook_error(status); }
