// npu_sram: the banked NPU SRAM and its arbiter, on npu_clk.
//
// SRAM_BANKS single-port banks, word-interleaved (bank = word address[2:0]). Every client
// presents at most one request per cycle; each bank grants one of the clients that address it,
// round-robin from the client after the one it granted last, so no client starves. The others
// are told "no grant" in the same cycle and simply hold their request (the loser stalls).
// A write takes effect at the granting edge; read data is registered and appears at the client
// the cycle after its grant. A bank that sees two or more requests in a cycle counts as one
// conflict (PERF_CONFLICTS and the SRAM_CONFLICT trace event both count (bank, cycle) pairs).
module npu_sram
  import npu_pkg::*;
#(
  parameter int unsigned NCLI = 3
) (
  input  logic                         clk,   // npu_clk
  input  logic                         rst_n,
  input  logic [NCLI-1:0]              req,
  input  logic [NCLI-1:0]              we,
  input  logic [NCLI-1:0][SRAM_AW-1:0] addr,
  input  logic [NCLI-1:0][31:0]        wdata,
  output logic [NCLI-1:0]              gnt,
  output logic [NCLI-1:0][31:0]        rdata,
  // per-cycle arbitration outcome, for perf and tracing
  output logic [SRAM_BANKS-1:0]        bank_conflict,   // >= 2 requesters this cycle
  output logic [SRAM_BANKS-1:0][NCLI-1:0] bank_reqs,    // who asked for each bank
  output logic [SRAM_BANKS-1:0][$clog2(NCLI)-1:0] bank_winner,
  output logic [SRAM_BANKS-1:0]        bank_busy        // granted an access this cycle
);
  localparam int unsigned CW = $clog2(NCLI);

  logic [31:0] mem [SRAM_BANKS][SRAM_BANK_WORDS];
  logic [SRAM_BANKS-1:0][CW-1:0] last_q;       // last client granted, per bank
  logic [SRAM_BANKS-1:0][31:0]   bank_rd_q;    // registered read data, per bank
  logic [NCLI-1:0][SRAM_BANK_BITS-1:0] cli_bank_q;  // bank of each client's last grant

  // word address = {row, bank}
  logic [NCLI-1:0][SRAM_BANK_BITS-1:0] bank_of;
  logic [NCLI-1:0][SRAM_ROW_BITS-1:0]  row_of;
  always_comb begin
    for (int c = 0; c < int'(NCLI); c++) begin
      bank_of[c] = addr[c][SRAM_BANK_BITS-1:0];
      row_of[c]  = addr[c][SRAM_AW-1:SRAM_BANK_BITS];
    end
  end

  // ── arbitration ──
  always_comb begin
    gnt = '0;
    for (int b = 0; b < int'(SRAM_BANKS); b++) begin
      bank_reqs[b]   = '0;
      bank_winner[b] = '0;
      bank_busy[b]   = 1'b0;
      for (int c = 0; c < int'(NCLI); c++)
        bank_reqs[b][c] = req[c] && (bank_of[c] == SRAM_BANK_BITS'(b));
      // Round-robin: scan NCLI clients starting after last_q[b]; the first requester wins.
      for (int i = 1; i <= int'(NCLI); i++) begin
        logic [CW-1:0] c;
        c = CW'((int'(last_q[b]) + i) % int'(NCLI));
        if (!bank_busy[b] && bank_reqs[b][c]) begin
          bank_busy[b]   = 1'b1;
          bank_winner[b] = c;
        end
      end
      if (bank_busy[b]) gnt[bank_winner[b]] = 1'b1;
      bank_conflict[b] = ($countones(bank_reqs[b]) > 1);
    end
  end

  // ── banks ──
  always_ff @(posedge clk) begin
    for (int b = 0; b < int'(SRAM_BANKS); b++) begin
      if (bank_busy[b]) begin
        if (we[bank_winner[b]]) mem[b][row_of[bank_winner[b]]] <= wdata[bank_winner[b]];
        else                    bank_rd_q[b] <= mem[b][row_of[bank_winner[b]]];
      end
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      last_q     <= '0;
      cli_bank_q <= '0;
    end else begin
      for (int b = 0; b < int'(SRAM_BANKS); b++)
        if (bank_busy[b]) last_q[b] <= bank_winner[b];
      for (int c = 0; c < int'(NCLI); c++)
        if (gnt[c]) cli_bank_q[c] <= bank_of[c];
    end
  end

  always_comb begin
    for (int c = 0; c < int'(NCLI); c++) rdata[c] = bank_rd_q[cli_bank_q[c]];
  end
endmodule
