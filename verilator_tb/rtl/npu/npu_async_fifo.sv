// npu_async_fifo: a dual-clock FIFO with Gray-coded pointers (Cummings, SNUG 2002, style 1).
//
// Each side keeps a binary pointer with one extra wrap bit and publishes its Gray code; the other
// side sees it through a two-flop npu_sync. Gray code changes one bit per increment, so a
// synchronizer samples either the old or the new pointer, never a mix: the reader can only
// under-estimate what was written (never reads a slot before its data is stable, because the data
// was written to `mem` an edge before the write pointer moved) and the writer can only
// under-estimate what was freed. Both errors are conservative.
//
// Storage is a flop array written on wclk and read combinationally at the read pointer: the
// head entry is stable while it is visible (`rvalid`), so the read side needs no extra latency.
module npu_async_fifo #(
  parameter int unsigned WIDTH = 32,
  parameter int unsigned DEPTH_LOG2 = 3
) (
  // write side
  input  logic                wclk,
  input  logic                wrst_n,
  input  logic                wvalid,      // push when wvalid && wready
  output logic                wready,      // not full
  input  logic [WIDTH-1:0]    wdata,
  output logic [DEPTH_LOG2:0] wcount,      // occupancy as the writer sees it (>= the true one)
  // read side
  input  logic                rclk,
  input  logic                rrst_n,
  output logic                rvalid,      // not empty
  input  logic                rready,      // pop when rvalid && rready
  output logic [WIDTH-1:0]    rdata
);
  localparam int unsigned DEPTH = 1 << DEPTH_LOG2;
  localparam int unsigned PW = DEPTH_LOG2 + 1;  // pointer width: index + wrap bit

  logic [WIDTH-1:0] mem [DEPTH];

  function automatic logic [PW-1:0] bin2gray(input logic [PW-1:0] b);
    return b ^ (b >> 1);
  endfunction

  function automatic logic [PW-1:0] gray2bin(input logic [PW-1:0] g);
    logic [PW-1:0] b;
    b[PW-1] = g[PW-1];
    for (int i = int'(PW) - 2; i >= 0; i--) b[i] = b[i+1] ^ g[i];
    return b;
  endfunction

  // ── write side (wclk) ──
  logic [PW-1:0] wptr, wptr_gray, rptr_gray_w, rptr_bin_w;

  npu_sync #(.WIDTH(PW)) u_sync_rptr (.clk(wclk), .rst_n(wrst_n), .d(rptr_gray), .q(rptr_gray_w));
  assign rptr_bin_w = gray2bin(rptr_gray_w);
  assign wcount = wptr - rptr_bin_w;
  assign wready = (wcount != PW'(DEPTH));

  always_ff @(posedge wclk or negedge wrst_n) begin
    if (!wrst_n) begin
      wptr      <= '0;
      wptr_gray <= '0;
    end else if (wvalid && wready) begin
      wptr      <= wptr + 1'b1;
      wptr_gray <= bin2gray(wptr + 1'b1);
    end
  end

  // No reset on the storage: entries are only read after being written.
  always_ff @(posedge wclk) begin
    if (wvalid && wready) mem[wptr[DEPTH_LOG2-1:0]] <= wdata;
  end

  // ── read side (rclk) ──
  logic [PW-1:0] rptr, rptr_gray, wptr_gray_r;

  npu_sync #(.WIDTH(PW)) u_sync_wptr (.clk(rclk), .rst_n(rrst_n), .d(wptr_gray), .q(wptr_gray_r));
  assign rvalid = (wptr_gray_r != rptr_gray);
  assign rdata  = mem[rptr[DEPTH_LOG2-1:0]];

  always_ff @(posedge rclk or negedge rrst_n) begin
    if (!rrst_n) begin
      rptr      <= '0;
      rptr_gray <= '0;
    end else if (rvalid && rready) begin
      rptr      <= rptr + 1'b1;
      rptr_gray <= bin2gray(rptr + 1'b1);
    end
  end
endmodule
