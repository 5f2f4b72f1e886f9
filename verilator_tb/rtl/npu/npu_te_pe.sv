// npu_te_pe: one processing element of the output-stationary systolic array. On each advance it
// multiplies the int8 operands arriving from the left (a) and from above (b), adds the product
// into its int32 accumulator (wrapping, like the C model), and passes a right and b down.
module npu_te_pe (
  input  logic              clk,
  input  logic              clr,    // start of a tile: zero everything
  input  logic              adv,    // the whole array steps together (operands may stall)
  input  logic signed [7:0] a_in,
  input  logic signed [7:0] b_in,
  output logic signed [7:0] a_out,
  output logic signed [7:0] b_out,
  output logic [31:0]       acc
);
  // Datapath flops need no reset: clr precedes every use.
  always_ff @(posedge clk) begin
    if (clr) begin
      a_out <= '0;
      b_out <= '0;
      acc   <= '0;
    end else if (adv) begin
      a_out <= a_in;
      b_out <= b_in;
      acc   <= acc + 32'(a_in * b_in);
    end
  end
endmodule
