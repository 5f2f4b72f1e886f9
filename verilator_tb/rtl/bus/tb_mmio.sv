// tb_mmio: the testbench's own registers (README "Memory map"), a bus slave with one cycle of
// latency like the RAM.
//
//   0x00 TOHOST      W   exit code (0 = pass); the harness ends the run when the core halts
//   0x04 PUTC        W   low byte printed with $write
//   0x08 CYCLE       R   core cycles since reset, low 32 bits
//   0x0C CYCLEH      R   high 32 bits (read CYCLE first; CYCLEH is latched by that read)
//   0x10 REPORT_KEY  W   selects a scoreboard key (fw/tb_report.h)
//   0x14 REPORT_VAL  W   adds the value under the selected key: tb_fw_report(key, value)
//
// REPORT_* is how the firmware tells the harness what it asked for (commands, DMA bytes, MACs),
// so that the end-to-end test can compare the trace against the firmware's own intent.
module tb_mmio
  import tb_pkg::*;
(
  input  logic        clk,
  input  logic        rst_n,
  input  logic        req_valid,
  output logic        req_ready,
  input  bus_req_t    req,
  output logic        rsp_valid,
  input  logic        rsp_ready,
  output bus_rsp_t    rsp,
  output logic        tohost_valid,  // TOHOST has been written
  output logic [31:0] tohost_code
);
  // Implemented in sim_main.cpp: the scoreboard of what the firmware requested.
  import "DPI-C" function void tb_fw_report(input int unsigned key, input int unsigned value);

  logic [63:0] cycle;
  logic [31:0] cycleh_latch, report_key;

  assign req_ready = !rsp_valid || rsp_ready;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rsp_valid    <= 1'b0;
      rsp          <= '0;
      cycle        <= 64'd0;
      cycleh_latch <= 32'd0;
      report_key   <= 32'd0;
      tohost_valid <= 1'b0;
      tohost_code  <= 32'd0;
    end else begin
      cycle <= cycle + 64'd1;
      if (req_valid && req_ready) begin
        rsp_valid <= 1'b1;
        rsp.id    <= req.id;
        rsp.err   <= 1'b0;
        rsp.rdata <= 32'd0;
        if (req.we) begin
          unique case (req.addr[7:0])
            MMIO_TOHOST: begin
              tohost_valid <= 1'b1;
              tohost_code  <= req.wdata;
            end
            MMIO_PUTC: begin
              // The store may be a byte store to any lane of the word.
              for (int b = 0; b < 4; b++)
                if (req.be[b]) $write("%c", req.wdata[8*b +: 8]);
            end
            8'h10: report_key <= req.wdata;
            8'h14: tb_fw_report(report_key, req.wdata);
            default: ;
          endcase
        end else begin
          unique case (req.addr[7:0])
            MMIO_CYCLE: begin
              rsp.rdata    <= cycle[31:0];
              cycleh_latch <= cycle[63:32];
            end
            8'h0C:   rsp.rdata <= cycleh_latch;
            8'h10:   rsp.rdata <= report_key;
            default: ;
          endcase
        end
      end else if (rsp_ready) begin
        rsp_valid <= 1'b0;
      end
    end
  end
endmodule
