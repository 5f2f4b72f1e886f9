// bus_ram: a word-wide RAM as a bus slave with one cycle of latency.
//
// A request accepted on edge t has its response registered on that edge, so the response is
// valid from t until the master accepts it. The RAM accepts a new request whenever its
// response register is empty or is being emptied in the same cycle, so a master that keeps
// rsp_ready high moves one word per cycle. Writes honour the byte enables and answer with
// rdata = 0.
//
// The initial contents come from $readmemh(<+fw plusarg or FW_DEFAULT><HEX_SUFFIX>), a hex
// file of 32-bit words whose @addresses are word indices from the RAM's base (the firmware
// build makes them: objcopy --change-addresses -BASE -O verilog --verilog-data-width 4).
module bus_ram
  import tb_pkg::*;
#(
  parameter int    BYTES      = 256 * 1024,
  parameter string HEX_SUFFIX = ".dram.hex"
) (
  input  logic     clk,
  input  logic     rst_n,
  input  logic     req_valid,
  output logic     req_ready,
  input  bus_req_t req,
  output logic     rsp_valid,
  input  logic     rsp_ready,
  output bus_rsp_t rsp
);
  localparam int WORDS = BYTES / 4;
  localparam int AW    = $clog2(WORDS);

  logic [31:0] mem [WORDS];

  `include "fw_default.svh"  // defines FW_DEFAULT: the firmware image base path of the build
  initial begin
    string fw;
    if (!$value$plusargs("fw=%s", fw)) fw = `FW_DEFAULT;
    for (int i = 0; i < WORDS; i++) mem[i] = 32'd0;
    $readmemh({fw, HEX_SUFFIX}, mem);
  end

  logic [AW-1:0] idx;
  assign idx       = req.addr[AW+1:2];  // the crossbar only routes this RAM's own range here
  assign req_ready = !rsp_valid || rsp_ready;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rsp_valid <= 1'b0;
      rsp       <= '0;
    end else if (req_valid && req_ready) begin
      rsp_valid <= 1'b1;
      rsp.id    <= req.id;
      rsp.err   <= 1'b0;
      rsp.rdata <= req.we ? 32'd0 : mem[idx];
    end else if (rsp_ready) begin
      rsp_valid <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (req_valid && req_ready && req.we) begin
      for (int b = 0; b < 4; b++)
        if (req.be[b]) mem[idx][8*b +: 8] <= req.wdata[8*b +: 8];
    end
  end
endmodule
