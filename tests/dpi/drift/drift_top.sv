// A top for `verilator --dpi-hdr-only`: importing the package is enough for
// the generated __Dpi.h to list every DPI import of uscope_pkg.
module drift_top;
  import uscope_pkg::*;
endmodule
