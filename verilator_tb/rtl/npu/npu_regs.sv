// npu_regs: the MMIO register block, on core_clk (README "NPU registers").
//
// It owns the write side of the command queue (an async FIFO into npu_clk) and the read side of
// the completion queue (an async FIFO back), so every register the core reads is a core_clk flop:
// no multi-bit value is ever sampled across the clock boundary.
//
// Bus behaviour: one request at a time; the response follows acceptance by one cycle, except
// CMD_PUSH, whose response waits until the address is in the queue. That is how a full queue
// stalls the core's store, without ready depending combinationally on the request payload.
module npu_regs
  import tb_pkg::*;
  import npu_pkg::*;
(
  input  logic        clk,    // core_clk
  input  logic        rst_n,
  // register slave port
  input  logic        s_req_valid,
  output logic        s_req_ready,
  input  bus_req_t    s_req,
  output logic        s_rsp_valid,
  input  logic        s_rsp_ready,
  output bus_rsp_t    s_rsp,
  // command queue, write side
  output logic        cmdq_wvalid,
  input  logic        cmdq_wready,
  output cmdq_entry_t cmdq_wdata,
  input  logic [CMDQ_DEPTH_LOG2:0] cmdq_wcount,
  // completion queue, read side
  input  logic        cpl_rvalid,
  output logic        cpl_rready,
  input  cpl_entry_t  cpl_rdata,
  // outputs
  output logic        irq,
  output logic [63:0] perf_macs,
  output logic [31:0] perf_dma_bytes,
  output logic [31:0] perf_conflicts
);
  // ── architectural state ──
  logic        rsp_valid_q;
  bus_rsp_t    rsp_q;
  logic        push_pend_q;    // a CMD_PUSH accepted, waiting for queue space
  logic [31:0] push_addr_q;
  logic [3:0]  push_id_q;
  logic [31:0] pushed_q;       // CMD_PUSH writes accepted (also the next cmd_id)
  logic [31:0] completed_q;    // completions retired
  logic [31:0] done_token_q;
  logic        irq_status_q;
  logic        irq_enable_q;
  logic        error_q;        // sticky: some command completed with an error
  logic [63:0] macs_q;
  logic [31:0] dma_bytes_q;
  logic [31:0] conflicts_q;

  // A new request is taken when no push is pending and the previous response leaves this edge.
  assign s_req_ready = !push_pend_q && (!rsp_valid_q || s_rsp_ready);
  wire accept = s_req_valid && s_req_ready;
  wire [11:0] off = s_req.addr[11:0];
  // The only writable bits: IRQ_STATUS/IRQ_ENABLE bit 0 (byte 0), STATUS bit 16 (byte 2).
  wire wbit0  = s_req.wdata[0] && s_req.be[0];
  wire wbit16 = s_req.wdata[16] && s_req.be[2];

  // The queue write: the pending push goes in as soon as there is room.
  assign cmdq_wvalid = push_pend_q;
  assign cmdq_wdata  = '{cmd_id: pushed_q - 32'd1, desc_addr: push_addr_q};

  // Completions are always taken: every register they update is local.
  assign cpl_rready = 1'b1;

  // Busy while any pushed command has not completed; this counts the queue, the command in
  // decode and every engine, without sampling npu_clk state.
  wire busy = (pushed_q != completed_q);

  logic        rd_hit;
  logic [31:0] rd_data;
  always_comb begin
    rd_hit  = 1'b1;
    rd_data = 32'd0;
    unique case (off)
      NPU_REG_ID:             rd_data = NPU_ID_VALUE;
      NPU_REG_STATUS:         rd_data = {15'd0, error_q, 4'd0, 4'(cmdq_wcount), 6'd0,
                                         !cmdq_wready, busy};
      NPU_REG_CMD_PUSH:       rd_data = 32'd0;
      NPU_REG_DONE_TOKEN:     rd_data = done_token_q;
      NPU_REG_IRQ_STATUS:     rd_data = {31'd0, irq_status_q};
      NPU_REG_IRQ_ENABLE:     rd_data = {31'd0, irq_enable_q};
      NPU_REG_PERF_MACS_LO:   rd_data = macs_q[31:0];
      NPU_REG_PERF_MACS_HI:   rd_data = macs_q[63:32];
      NPU_REG_PERF_DMA_BYTES: rd_data = dma_bytes_q;
      NPU_REG_PERF_CONFLICTS: rd_data = conflicts_q;
      default:                rd_hit  = 1'b0;
    endcase
  end

  wire is_push = accept && s_req.we && off == NPU_REG_CMD_PUSH;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rsp_valid_q  <= 1'b0;
      rsp_q        <= '0;
      push_pend_q  <= 1'b0;
      push_addr_q  <= '0;
      push_id_q    <= '0;
      pushed_q     <= '0;
      completed_q  <= '0;
      done_token_q <= '0;
      irq_status_q <= 1'b0;
      irq_enable_q <= 1'b0;
      error_q      <= 1'b0;
      macs_q       <= '0;
      dma_bytes_q  <= '0;
      conflicts_q  <= '0;
    end else begin
      // ── response channel ──
      if (rsp_valid_q && s_rsp_ready) rsp_valid_q <= 1'b0;
      if (push_pend_q && cmdq_wready) begin
        push_pend_q <= 1'b0;
        rsp_valid_q <= 1'b1;
        rsp_q       <= '{rdata: 32'd0, err: 1'b0, id: push_id_q};
      end
      if (accept && !is_push) begin
        rsp_valid_q <= 1'b1;
        rsp_q       <= '{rdata: s_req.we ? 32'd0 : rd_data, err: !rd_hit, id: s_req.id};
      end

      // ── register writes (writes to read-only registers are ignored) ──
      if (is_push) begin
        push_pend_q <= 1'b1;
        push_addr_q <= s_req.wdata;
        push_id_q   <= s_req.id;
        pushed_q    <= pushed_q + 32'd1;
      end
      if (accept && s_req.we) begin
        if (off == NPU_REG_IRQ_STATUS && wbit0) irq_status_q <= 1'b0;         // W1C
        if (off == NPU_REG_IRQ_ENABLE && s_req.be[0]) irq_enable_q <= wbit0;
        if (off == NPU_REG_STATUS && wbit16) error_q <= 1'b0;                  // W1C (extension)
      end

      // ── completions (after the writes: a completion in the same edge wins over W1C) ──
      if (cpl_rvalid) begin
        completed_q  <= completed_q + 32'd1;
        done_token_q <= cpl_rdata.token;
        irq_status_q <= 1'b1;
        if (cpl_rdata.err) error_q <= 1'b1;
        macs_q       <= cpl_rdata.macs;
        dma_bytes_q  <= cpl_rdata.dma_bytes;
        conflicts_q  <= cpl_rdata.conflicts;
      end
    end
  end

  assign s_rsp_valid    = rsp_valid_q;
  assign s_rsp          = rsp_q;
  assign irq            = irq_status_q && irq_enable_q;
  assign perf_macs      = macs_q;
  assign perf_dma_bytes = dma_bytes_q;
  assign perf_conflicts = conflicts_q;

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): the completion as software sees it, on core_clk ──
  chandle tr_w, tr_npu;
  logic tr_armed, tr_warned;
  logic tr_fetched = 1'b0;
  always_ff @(posedge clk or negedge rst_n) tr_armed <= !rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge clk) begin
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_fetched <= 1'b1;
    end
    // one warning per CMD_PUSH that has to wait for queue space
    tr_warned <= push_pend_q && (tr_warned || !cmdq_wready);
    if (tr_npu != null) begin
      if (cpl_rvalid) begin
        tb_trace_pkg::check(uscope_pkg::uscope_npu_token_complete(tr_w, tr_npu,
            trace_ctx(cpl_rdata.cmd_id), cpl_rdata.token, cpl_rdata.cmd_id,
            cpl_rdata.err ? "ERROR" : "OK"));
        if (irq_enable_q)
          tb_trace_pkg::check(uscope_pkg::uscope_npu_irq_emit(tr_w, tr_npu,
              trace_ctx(cpl_rdata.cmd_id), cpl_rdata.cmd_id, cpl_rdata.token, 32'd0));
      end
      if (push_pend_q && !cmdq_wready && !tr_warned)
        tb_trace_pkg::check(uscope_pkg::uscope_npu_warn(tr_w, tr_npu, TRACE_NO_CTX, "CMDQ",
            "QUEUE_FULL", "CMD_PUSH waits: the command queue is full", pushed_q - 32'd1,
            TRACE_ABSENT32));
    end
  end
`else
  wire unused_trace = &{1'b0, cpl_rdata.cmd_id};  // the command id is for the trace only
`endif
endmodule
