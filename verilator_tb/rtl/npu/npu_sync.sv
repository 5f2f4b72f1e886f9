// npu_sync: a two-flop synchronizer for a level (or a Gray-coded bus whose value changes by at most
// one bit per source clock, which is what the async FIFO pointers guarantee). The first flop may go
// metastable in silicon; the second gives it a full destination cycle to settle. Async reset so the
// synchronizer is in a known state before either clock runs.
module npu_sync #(
  parameter int unsigned WIDTH = 1,
  parameter logic [WIDTH-1:0] RESET_VALUE = '0
) (
  input  logic             clk,
  input  logic             rst_n,
  input  logic [WIDTH-1:0] d,   // from the other clock domain
  output logic [WIDTH-1:0] q
);
  logic [WIDTH-1:0] meta;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      meta <= RESET_VALUE;
      q    <= RESET_VALUE;
    end else begin
      meta <= d;
      q    <= meta;
    end
  end
endmodule
