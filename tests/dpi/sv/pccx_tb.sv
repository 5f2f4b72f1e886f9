// pccx writer from SystemVerilog (tests/dpi/pccx_sim_main.cpp): opens a
// .pccx in `initial`, records events from always_ff, closes in `final`.
// Per cycle k (0..kCycles-1): MAC_COMPUTE on core k%4 at 10k for 8 cycles;
// every 4th cycle a DMA_READ (core 0, 10k, 3) and a DMA_WRITE (core 1, 10k+5, 2);
// once, at the start, an API_CALL "uca_init". "" api names mean none.
module pccx_tb (
    input  logic clk,
    output int   errors
);
  import uscope_pkg::*;

  chandle p;
  string  path;
  int unsigned cyc;

  function automatic void check(input int status, input string what);
    if (status != 0) begin
      errors = errors + 1;
      $display("pccx_tb: %s failed: %0d %s", what, status, uscope_sv_pccx_error());
    end
  endfunction

  initial begin
    errors = 0;
    cyc = 0;
    if (!$value$plusargs("pccx=%s", path)) path = "pccx_tb.pccx";
    p = uscope_sv_pccx_open(path, "encoding=bincode, cores=4, mac_rows=8, mac_cols=8, lab_version=pccx_tb");
    if (p == null) check(-1, {"open ", path, ": ", uscope_sv_pccx_error()});
    check(uscope_sv_pccx_event(p, 0, 0, 1, PCCX_API_CALL, "uca_init"), "api event");
    // A bad option is refused with a message.
    if (uscope_sv_pccx_open({path, ".bad"}, "encoding=zip") != null) check(-1, "bad option accepted");
  end

  always_ff @(posedge clk) begin
    check(uscope_sv_pccx_event(p, cyc % 4, 64'(cyc) * 10, 8, PCCX_MAC_COMPUTE, ""), "mac event");
    if (cyc % 4 == 0) begin
      check(uscope_sv_pccx_event(p, 0, 64'(cyc) * 10, 3, PCCX_DMA_READ, ""), "dma read");
      check(uscope_sv_pccx_event(p, 1, 64'(cyc) * 10 + 5, 2, PCCX_DMA_WRITE, ""), "dma write");
    end
    cyc <= cyc + 1;
  end

  final begin
    check(uscope_sv_pccx_set_total_cycles(p, 64'(cyc) * 10), "total cycles");
    check(uscope_sv_pccx_close(p), "close");
  end
endmodule
