// npu_top: the NPU (verilator_tb/README.md "NPU ports", rtl/npu/README.md).
//
//   core_clk | npu_regs ─ cmd queue (async FIFO, 8) ──────────────▶ npu_cmdproc   | npu_clk
//            |          ◀ completion queue (async FIFO, 4) ───────       │ issue
//            | npu_busif ◀ DMA request queue (async FIFO, 8) ─── npu_dma ◀─┤
//            |           ─ DMA response queue (async FIFO, 8) ──▶         ├─▶ npu_te (ROWSxCOLS)
//            |                                                            └─▶ npu_ve
//            |                                   npu_sram: 8 banks, arbiter for DMA, VE, TE ports
//
// Every signal that crosses between the domains goes through one of the four async FIFOs, except
// rst_n, which each domain synchronizes for itself.
module npu_top
  import tb_pkg::*;
  import npu_pkg::*;
#(
  parameter int unsigned TE_ROWS = 4,           // systolic array (>= 2 each)
  parameter int unsigned TE_COLS = 4,
  /* verilator lint_off UNUSEDPARAM */  // used by traced builds only
  parameter int unsigned SRAM_TRACE_EVERY = 1   // traced builds: SRAM_ACCESS for 1 in N accesses
  /* verilator lint_on UNUSEDPARAM */
) (
  input  logic        core_clk,
  input  logic        npu_clk,
  input  logic        rst_n,
  input  logic        s_req_valid,
  output logic        s_req_ready,
  input  bus_req_t    s_req,
  output logic        s_rsp_valid,
  input  logic        s_rsp_ready,
  output bus_rsp_t    s_rsp,
  output logic        m_req_valid,
  input  logic        m_req_ready,
  output bus_req_t    m_req,
  input  logic        m_rsp_valid,
  output logic        m_rsp_ready,
  input  bus_rsp_t    m_rsp,
  output logic        irq,
  output logic [63:0] perf_macs,
  output logic [31:0] perf_dma_bytes,
  output logic [31:0] perf_conflicts
);
  localparam int unsigned DQ_LOG2 = 3;  // DMA request/response FIFOs
  // SRAM arbiter clients
  localparam int unsigned C_DMA   = 0;
  localparam int unsigned C_VE_RD = 1;
  localparam int unsigned C_VE_WR = 2;
  localparam int unsigned C_TE_A  = 3;
  localparam int unsigned C_TE_B  = C_TE_A + TE_ROWS;
  localparam int unsigned NCLI    = C_TE_B + TE_COLS;

  // ── resets ──
  // core_clk: rst_n already rises on a core_clk edge (README "Clocks and time").
  logic core_rst_n, npu_rst_n;
  assign core_rst_n = rst_n;
  npu_rst_sync u_npu_rst (.clk(npu_clk), .rst_n_in(rst_n), .rst_n_out(npu_rst_n));

  // ── core_clk side ──
  logic cmdq_wvalid, cmdq_wready, cmdq_rvalid, cmdq_rready;
  cmdq_entry_t cmdq_wdata, cmdq_rdata;
  logic [CMDQ_DEPTH_LOG2:0] cmdq_wcount;
  logic cpl_wvalid, cpl_wready, cpl_rvalid, cpl_rready;
  cpl_entry_t cpl_wdata, cpl_rdata;

  npu_regs u_regs (
    .clk(core_clk), .rst_n(core_rst_n),
    .s_req_valid, .s_req_ready, .s_req, .s_rsp_valid, .s_rsp_ready, .s_rsp,
    .cmdq_wvalid, .cmdq_wready, .cmdq_wdata, .cmdq_wcount,
    .cpl_rvalid, .cpl_rready, .cpl_rdata,
    .irq, .perf_macs, .perf_dma_bytes, .perf_conflicts
  );

  npu_async_fifo #(.WIDTH($bits(cmdq_entry_t)), .DEPTH_LOG2(CMDQ_DEPTH_LOG2)) u_cmdq (
    .wclk(core_clk), .wrst_n(core_rst_n), .wvalid(cmdq_wvalid), .wready(cmdq_wready),
    .wdata(cmdq_wdata), .wcount(cmdq_wcount),
    .rclk(npu_clk), .rrst_n(npu_rst_n), .rvalid(cmdq_rvalid), .rready(cmdq_rready),
    .rdata(cmdq_rdata)
  );

  /* verilator lint_off PINCONNECTEMPTY */
  npu_async_fifo #(.WIDTH($bits(cpl_entry_t)), .DEPTH_LOG2(CPLQ_DEPTH_LOG2)) u_cplq (
    .wclk(npu_clk), .wrst_n(npu_rst_n), .wvalid(cpl_wvalid), .wready(cpl_wready),
    .wdata(cpl_wdata), .wcount(),
    .rclk(core_clk), .rrst_n(core_rst_n), .rvalid(cpl_rvalid), .rready(cpl_rready),
    .rdata(cpl_rdata)
  );

  logic dreq_wvalid, dreq_wready, dreq_rvalid, dreq_rready;
  dreq_t dreq_wdata, dreq_rdata;
  logic drsp_wvalid, drsp_wready, drsp_rvalid, drsp_rready;
  drsp_t drsp_wdata, drsp_rdata;
  logic [DQ_LOG2:0] drsp_wcount;

  npu_async_fifo #(.WIDTH($bits(dreq_t)), .DEPTH_LOG2(DQ_LOG2)) u_dreq (
    .wclk(npu_clk), .wrst_n(npu_rst_n), .wvalid(dreq_wvalid), .wready(dreq_wready),
    .wdata(dreq_wdata), .wcount(),
    .rclk(core_clk), .rrst_n(core_rst_n), .rvalid(dreq_rvalid), .rready(dreq_rready),
    .rdata(dreq_rdata)
  );
  /* verilator lint_on PINCONNECTEMPTY */

  npu_async_fifo #(.WIDTH($bits(drsp_t)), .DEPTH_LOG2(DQ_LOG2)) u_drsp (
    .wclk(core_clk), .wrst_n(core_rst_n), .wvalid(drsp_wvalid), .wready(drsp_wready),
    .wdata(drsp_wdata), .wcount(drsp_wcount),
    .rclk(npu_clk), .rrst_n(npu_rst_n), .rvalid(drsp_rvalid), .rready(drsp_rready),
    .rdata(drsp_rdata)
  );

  npu_busif #(.RSPQ_DEPTH_LOG2(DQ_LOG2)) u_busif (
    .clk(core_clk), .rst_n(core_rst_n),
    .dreq_valid(dreq_rvalid), .dreq_ready(dreq_rready), .dreq(dreq_rdata),
    .drsp_valid(drsp_wvalid), .drsp_ready(drsp_wready), .drsp(drsp_wdata),
    .drsp_count(drsp_wcount),
    .m_req_valid, .m_req_ready, .m_req, .m_rsp_valid, .m_rsp_ready, .m_rsp
  );

  // ── npu_clk side ──
  logic desc_start, desc_done, desc_err;
  logic [31:0] desc_addr;
  logic [NPU_DESC_W-1:0][31:0] desc_words;
  cmd_t issue_cmd;
  logic dma_start, dma_out, dma_done, dma_err, dma_word;
  logic [31:0] dma_dram, dma_len;
  sram_addr_t dma_sram;
  logic te_start, te_done, ve_start, ve_done;
  logic [63:0] macs_q;
  logic [31:0] dma_bytes_q, conflicts_q;

  npu_cmdproc u_cmdproc (
    .clk(npu_clk), .rst_n(npu_rst_n),
    .cmdq_rvalid, .cmdq_rready, .cmdq_rdata,
    .desc_start, .desc_addr, .desc_done, .desc_words, .desc_err,
    .issue_cmd, .dma_start, .dma_out, .dma_dram, .dma_sram, .dma_len, .dma_done, .dma_err,
    .te_start, .te_done, .ve_start, .ve_done,
    .cpl_wvalid, .cpl_wready, .cpl_wdata,
    .perf_macs(macs_q), .perf_dma_bytes(dma_bytes_q), .perf_conflicts(conflicts_q)
  );

  // SRAM client buses
  logic [NCLI-1:0]              s_req_c, s_we_c, s_gnt_c;
  logic [NCLI-1:0][SRAM_AW-1:0] s_addr_c;
  logic [NCLI-1:0][31:0]        s_wdata_c, s_rdata_c;
  logic [SRAM_BANKS-1:0]        bank_conflict, bank_busy;
  logic [SRAM_BANKS-1:0][NCLI-1:0] bank_reqs;
  logic [SRAM_BANKS-1:0][$clog2(NCLI)-1:0] bank_winner;

  npu_dma u_dma (
    .clk(npu_clk), .rst_n(npu_rst_n),
    .desc_start, .desc_addr, .desc_done, .desc_words, .desc_err,
    .xfer_start(dma_start), .xfer_out(dma_out), .xfer_dram(dma_dram), .xfer_sram(dma_sram),
    .xfer_len(dma_len), .xfer_cmd_id(issue_cmd.cmd_id), .xfer_done(dma_done), .xfer_err(dma_err),
    .word_moved(dma_word),
    .dreq_valid(dreq_wvalid), .dreq_ready(dreq_wready), .dreq(dreq_wdata),
    .drsp_valid(drsp_rvalid), .drsp_ready(drsp_rready), .drsp(drsp_rdata),
    .sram_req(s_req_c[C_DMA]), .sram_we(s_we_c[C_DMA]), .sram_addr(s_addr_c[C_DMA]),
    .sram_wdata(s_wdata_c[C_DMA]), .sram_gnt(s_gnt_c[C_DMA]), .sram_rdata(s_rdata_c[C_DMA])
  );

  logic [$clog2(TE_ROWS*TE_COLS+1)-1:0] mac_inc;
  logic te_b_we;

  npu_te #(.ROWS(TE_ROWS), .COLS(TE_COLS)) u_te (
    .clk(npu_clk), .rst_n(npu_rst_n),
    .start(te_start), .cmd(issue_cmd), .done(te_done), .mac_inc,
    .a_req(s_req_c[C_TE_A +: TE_ROWS]), .a_addr(s_addr_c[C_TE_A +: TE_ROWS]),
    .a_gnt(s_gnt_c[C_TE_A +: TE_ROWS]), .a_rdata(s_rdata_c[C_TE_A +: TE_ROWS]),
    .b_req(s_req_c[C_TE_B +: TE_COLS]), .b_we(te_b_we), .b_addr(s_addr_c[C_TE_B +: TE_COLS]),
    .b_wdata(s_wdata_c[C_TE_B +: TE_COLS]), .b_gnt(s_gnt_c[C_TE_B +: TE_COLS]),
    .b_rdata(s_rdata_c[C_TE_B +: TE_COLS])
  );
  assign s_we_c[C_TE_A +: TE_ROWS]    = '0;
  assign s_wdata_c[C_TE_A +: TE_ROWS] = '0;
  assign s_we_c[C_TE_B +: TE_COLS]    = {TE_COLS{te_b_we}};

  npu_ve u_ve (
    .clk(npu_clk), .rst_n(npu_rst_n),
    .start(ve_start), .cmd(issue_cmd), .done(ve_done),
    .rd_req(s_req_c[C_VE_RD]), .rd_addr(s_addr_c[C_VE_RD]), .rd_gnt(s_gnt_c[C_VE_RD]),
    .rd_rdata(s_rdata_c[C_VE_RD]),
    .wr_req(s_req_c[C_VE_WR]), .wr_addr(s_addr_c[C_VE_WR]), .wr_wdata(s_wdata_c[C_VE_WR]),
    .wr_gnt(s_gnt_c[C_VE_WR])
  );
  assign s_we_c[C_VE_RD]    = 1'b0;
  assign s_wdata_c[C_VE_RD] = '0;
  assign s_we_c[C_VE_WR]    = 1'b1;

  npu_sram #(.NCLI(NCLI)) u_sram (
    .clk(npu_clk), .rst_n(npu_rst_n),
    .req(s_req_c), .we(s_we_c), .addr(s_addr_c), .wdata(s_wdata_c),
    .gnt(s_gnt_c), .rdata(s_rdata_c),
    .bank_conflict, .bank_reqs, .bank_winner, .bank_busy
  );

  // ── perf counters (npu_clk); the registers see them through the completion queue ──
  always_ff @(posedge npu_clk or negedge npu_rst_n) begin
    if (!npu_rst_n) begin
      macs_q      <= '0;
      dma_bytes_q <= '0;
      conflicts_q <= '0;
    end else begin
      macs_q      <= macs_q + 64'(mac_inc);
      dma_bytes_q <= dma_bytes_q + (dma_word ? 32'd4 : 32'd0);
      conflicts_q <= conflicts_q + 32'($countones(bank_conflict));
    end
  end

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): SRAM arbitration, every cycle ──
  // SRAM_ACCESS for granted accesses (every SRAM_TRACE_EVERY-th; 1 = all, the default), and one
  // SRAM_CONFLICT per bank that had two or more requesters, so the trace's sram_conflicts
  // counter equals PERF_CONFLICTS. Each is attributed to the command of the winning client.
  chandle tr_w, tr_npu;
  logic tr_armed;
  logic tr_fetched = 1'b0;
  logic [31:0] tr_cmd [4];  // by eng_t: the command each engine runs
  logic [31:0] tr_nacc;     // granted accesses so far (for sampling)

  function automatic string unit_name(input int c);
    if (c == int'(C_DMA)) return "DMA";
    if (c == int'(C_VE_RD) || c == int'(C_VE_WR)) return "VE";
    return "TE";
  endfunction
  // The clients that lost bank arbitration to `winner`, as "TE,VE". A function, called only for
  // a conflict: a string local of the per-bank loop was assigned "" for every bank every cycle.
  function automatic string stalled_units(input logic [NCLI-1:0] reqs, input int winner);
    string s = "";
    for (int c = 0; c < int'(NCLI); c++)
      if (reqs[c] && c != winner) s = (s.len() == 0) ? unit_name(c) : {s, ",", unit_name(c)};
    return s;
  endfunction
  function automatic eng_t unit_eng(input int c);
    if (c == int'(C_DMA)) return ENG_DMA;
    if (c == int'(C_VE_RD) || c == int'(C_VE_WR)) return ENG_VE;
    return ENG_TE;
  endfunction

  always_ff @(posedge npu_clk or negedge npu_rst_n) tr_armed <= !npu_rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge npu_clk) begin
    automatic logic [31:0] nacc = tr_nacc;
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_fetched <= 1'b1;
      nacc = '0;
    end
    if (dma_start) tr_cmd[ENG_DMA] <= issue_cmd.cmd_id;
    if (te_start)  tr_cmd[ENG_TE]  <= issue_cmd.cmd_id;
    if (ve_start)  tr_cmd[ENG_VE]  <= issue_cmd.cmd_id;
    if (tr_npu != null) begin
      for (int b = 0; b < int'(SRAM_BANKS); b++) begin
        automatic int w = int'(bank_winner[b]);
        automatic logic [31:0] cmd = tr_cmd[unit_eng(w)];
        if (bank_busy[b]) begin
          if (nacc % SRAM_TRACE_EVERY == 0)
            tb_trace_pkg::check(uscope_pkg::uscope_npu_sram_access(tr_w, tr_npu, trace_ctx(cmd),
                64'({s_addr_c[w], 2'b00}), 16'(b), s_we_c[w] ? 8'd1 : 8'd0, unit_name(w),
                bank_conflict[b] ? 8'd1 : 8'd0, cmd, TRACE_ABSENT32));
          nacc = nacc + 32'd1;
        end
        if (bank_conflict[b])
          tb_trace_pkg::check(uscope_pkg::uscope_npu_sram_conflict(tr_w, tr_npu, trace_ctx(cmd),
              16'(b), 32'($countones(bank_reqs[b])), 32'd1, stalled_units(bank_reqs[b], w), cmd));
      end
    end
    tr_nacc <= nacc;
  end
`else
  wire unused_trace = &{1'b0, bank_busy, bank_reqs, bank_winner};  // arbitration detail: trace only
`endif
endmodule
