// npu_rst_sync: asynchronous assert, synchronous deassert. rst_n comes from the core_clk domain;
// the npu_clk logic must leave reset on an npu_clk edge (two flops after rst_n rises) so that no
// flop sees reset release inside its setup window.
module npu_rst_sync (
  input  logic clk,
  input  logic rst_n_in,
  output logic rst_n_out
);
  logic meta;

  always_ff @(posedge clk or negedge rst_n_in) begin
    if (!rst_n_in) begin
      meta      <= 1'b0;
      rst_n_out <= 1'b0;
    end else begin
      meta      <= 1'b1;
      rst_n_out <= meta;
    end
  end
endmodule
