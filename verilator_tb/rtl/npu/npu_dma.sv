// npu_dma: the DMA engine, on npu_clk. Two channels share the bus request FIFO:
//   ch0 fetches 7-word command descriptors for the command processor;
//   ch1 moves DMA_IN (data RAM -> SRAM) and DMA_OUT (SRAM -> data RAM) payloads.
// ch0 has priority at the request FIFO: a descriptor fetch is short and lets the command
// processor decode the next command while ch1 streams.
//
// Responses return in request order (README "Bus rules") and carry their channel in the bus id.
// A DMA_IN response is popped only when its SRAM write is granted, so the response FIFO is the
// write buffer; a DMA_OUT reads SRAM into a 4-entry buffer ahead of the bus writes.
module npu_dma
  import npu_pkg::*;
(
  input  logic        clk,    // npu_clk
  input  logic        rst_n,
  // ch0: descriptor fetch
  input  logic        desc_start,
  input  logic [31:0] desc_addr,
  output logic        desc_done,    // pulse; desc_words/desc_err valid until the next start
  output logic [NPU_DESC_W-1:0][31:0] desc_words,
  output logic        desc_err,
  // ch1: payload transfer
  input  logic        xfer_start,
  input  logic        xfer_out,     // 0: data RAM -> SRAM, 1: SRAM -> data RAM
  input  logic [31:0] xfer_dram,    // byte address
  input  sram_addr_t  xfer_sram,    // word address
  input  logic [31:0] xfer_len,     // words
  input  logic [31:0] xfer_cmd_id,  // for tracing only
  output logic        xfer_done,    // pulse
  output logic        xfer_err,     // a bus error was seen; valid with xfer_done
  output logic        word_moved,   // one payload word completed this cycle (perf: 4 bytes)
  // request FIFO, write side
  output logic        dreq_valid,
  input  logic        dreq_ready,
  output dreq_t       dreq,
  // response FIFO, read side
  input  logic        drsp_valid,
  output logic        drsp_ready,
  input  drsp_t       drsp,
  // SRAM port (one client of the arbiter)
  output logic        sram_req,
  output logic        sram_we,
  output sram_addr_t  sram_addr,
  output logic [31:0] sram_wdata,
  input  logic        sram_gnt,
  input  logic [31:0] sram_rdata    // the cycle after a read grant
);
  localparam int unsigned NW = NPU_DESC_W;
  localparam int unsigned OBUF = 4;  // DMA_OUT read-ahead buffer

  // ── ch0 state ──
  logic        d_active;
  logic [2:0]  d_issued, d_recv;
  logic [31:0] d_ptr;

  // ── ch1 state ──
  logic        x_active, x_out, x_err;
  logic [31:0] x_len, x_issued, x_recv, x_rd_issued;
  logic [31:0] x_dptr;            // next data-RAM byte address to request
  sram_addr_t  x_sptr_rd;         // DMA_OUT: next SRAM word to read
  sram_addr_t  x_sptr_wr;         // DMA_IN: next SRAM word to write
  logic        x_rd_inflight;     // DMA_OUT: an SRAM read was granted last cycle

  // DMA_OUT read-ahead buffer (SRAM data waiting for the bus)
  logic [31:0] obuf [OBUF];
  logic [1:0]  ob_wp, ob_rp;
  logic [2:0]  ob_cnt;

  // ── request mux ──
  wire ch0_want = d_active && (d_issued != 3'(NW));
  wire ch1_want = x_active && (x_out ? (ob_cnt != 0) : (x_issued != x_len));
  always_comb begin
    dreq_valid = ch0_want || ch1_want;
    if (ch0_want) dreq = '{ch: 1'b0, we: 1'b0, addr: d_ptr, wdata: 32'd0};
    else          dreq = '{ch: 1'b1, we: x_out, addr: x_dptr, wdata: obuf[ob_rp]};
  end
  wire ch0_push = ch0_want && dreq_ready;
  wire ch1_push = !ch0_want && ch1_want && dreq_ready;

  // ── responses ──
  wire rsp_ch0 = drsp_valid && !drsp.ch;
  wire rsp_ch1 = drsp_valid && drsp.ch;
  // DMA_IN writes the response into SRAM; everything else is consumed at once.
  wire in_write = rsp_ch1 && x_active && !x_out;

  // ── SRAM port: DMA_IN writes, DMA_OUT reads ahead while the buffer has room ──
  wire out_read = x_active && x_out && (x_rd_issued != x_len) &&
                  ({1'b0, ob_cnt} + {3'd0, x_rd_inflight} < 4'(OBUF));
  assign sram_req   = in_write || out_read;
  assign sram_we    = in_write;
  assign sram_addr  = in_write ? x_sptr_wr : x_sptr_rd;
  assign sram_wdata = drsp.rdata;

  assign drsp_ready = rsp_ch0 || (rsp_ch1 && (!in_write || sram_gnt));
  wire ch1_rsp_pop  = rsp_ch1 && drsp_ready;

  wire x_finish = x_active && !xfer_start && (x_recv + (ch1_rsp_pop ? 32'd1 : 32'd0) == x_len);

  assign word_moved = ch1_rsp_pop;  // a DMA_IN word is in SRAM / a DMA_OUT write acknowledged

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      d_active <= 1'b0; d_issued <= '0; d_recv <= '0; d_ptr <= '0;
      desc_done <= 1'b0; desc_err <= 1'b0;
      x_active <= 1'b0; x_out <= 1'b0; x_err <= 1'b0;
      x_len <= '0; x_issued <= '0; x_recv <= '0; x_rd_issued <= '0;
      x_dptr <= '0; x_sptr_rd <= '0; x_sptr_wr <= '0; x_rd_inflight <= 1'b0;
      ob_wp <= '0; ob_rp <= '0; ob_cnt <= '0;
      xfer_done <= 1'b0; xfer_err <= 1'b0;
    end else begin
      desc_done <= 1'b0;
      xfer_done <= 1'b0;

      // ── ch0 ──
      if (desc_start) begin
        d_active <= 1'b1;
        d_issued <= '0;
        d_recv   <= '0;
        d_ptr    <= desc_addr;
        desc_err <= 1'b0;
      end else begin
        if (ch0_push) begin
          d_issued <= d_issued + 3'd1;
          d_ptr    <= d_ptr + 32'd4;
        end
        if (rsp_ch0) begin
          if (drsp.err) desc_err <= 1'b1;
          d_recv <= d_recv + 3'd1;
          if (d_recv == 3'(NW - 1)) begin
            d_active  <= 1'b0;
            desc_done <= 1'b1;
          end
        end
      end

      // ── ch1 ──
      if (xfer_start) begin
        x_active    <= 1'b1;
        x_out       <= xfer_out;
        x_err       <= 1'b0;
        x_len       <= xfer_len;
        x_issued    <= '0;
        x_recv      <= '0;
        x_rd_issued <= '0;
        x_dptr      <= xfer_dram;
        x_sptr_rd   <= xfer_sram;
        x_sptr_wr   <= xfer_sram;
      end else if (x_active) begin
        if (ch1_push) begin
          x_issued <= x_issued + 32'd1;
          x_dptr   <= x_dptr + 32'd4;
        end
        if (out_read && sram_gnt) begin
          x_rd_issued <= x_rd_issued + 32'd1;
          x_sptr_rd   <= x_sptr_rd + 1'b1;
        end
        if (ch1_rsp_pop) begin
          x_recv <= x_recv + 32'd1;
          if (drsp.err) x_err <= 1'b1;
          if (!x_out) x_sptr_wr <= x_sptr_wr + 1'b1;
        end
        // Done once every word is acknowledged (a zero-length transfer ends at once).
        if (x_finish) begin
          x_active  <= 1'b0;
          xfer_done <= 1'b1;
          xfer_err  <= x_err || (ch1_rsp_pop && drsp.err);
        end
      end

      // ── DMA_OUT buffer: SRAM data arrives the cycle after the grant ──
      x_rd_inflight <= out_read && sram_gnt;
      if (x_rd_inflight) begin
        obuf[ob_wp] <= sram_rdata;
        ob_wp       <= ob_wp + 2'd1;
      end
      if (ch1_push && x_out) ob_rp <= ob_rp + 2'd1;
      ob_cnt <= ob_cnt + (x_rd_inflight ? 3'd1 : 3'd0) - ((ch1_push && x_out) ? 3'd1 : 3'd0);
    end
  end

  // Descriptor words: data only, no reset (read after desc_done).
  always_ff @(posedge clk) begin
    if (rsp_ch0) desc_words[d_recv] <= drsp.rdata;
  end

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): the data channel as dma[0], one job per transfer.
  // Descriptor fetches are traced by the command processor (DESC_FETCH jobs).
  // Also one pccx DMA_READ / DMA_WRITE event per transfer (core_id 1 = the DMA) into the .pccx.
  chandle tr_w, tr_npu, tr_pccx;
  logic tr_armed;
  logic tr_fetched = 1'b0;
  logic [31:0] tr_cycle, tr_t0, tr_cmd, tr_tx;
  always_ff @(posedge clk or negedge rst_n) tr_armed <= !rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge clk) begin
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_pccx    <= uscope_pkg::uscope_handle("pccx");
      tr_fetched <= 1'b1;
      tr_tx      <= '0;
    end
    tr_cycle <= tr_cycle + 32'd1;
    if (tr_npu != null) begin
      if (xfer_start) begin
        tr_t0  <= tr_cycle;
        tr_cmd <= xfer_cmd_id;
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_issue(tr_w, tr_npu, trace_ctx(xfer_cmd_id),
            job_id(xfer_cmd_id, 32'd1), xfer_cmd_id, xfer_out ? "DMA_WRITE" : "DMA_READ",
            TRACE_ABSENT32, TRACE_ABSENT32));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_dma_start(tr_w, tr_npu, trace_ctx(xfer_cmd_id),
            tr_tx, 16'd0, xfer_out ? "SRAM_TO_DRAM" : "DRAM_TO_SRAM",
            xfer_out ? 64'({xfer_sram, 2'b00}) : 64'(xfer_dram),
            xfer_out ? 64'(xfer_dram) : 64'({xfer_sram, 2'b00}),
            64'(xfer_len) * 64'd4, xfer_cmd_id, job_id(xfer_cmd_id, 32'd1)));
      end
      if (x_finish) begin
        tr_tx <= tr_tx + 32'd1;
        tb_trace_pkg::check(uscope_pkg::uscope_npu_dma_end(tr_w, tr_npu, trace_ctx(tr_cmd), tr_tx,
            16'd0, tr_cmd, job_id(tr_cmd, 32'd1), 64'(x_len) * 64'd4));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_done(tr_w, tr_npu, trace_ctx(tr_cmd),
            job_id(tr_cmd, 32'd1), tr_cmd, x_out ? "DMA_WRITE" : "DMA_READ", tr_cycle - tr_t0));
        if (tr_pccx != null)
          tb_trace_pkg::check(uscope_pkg::uscope_sv_pccx_event(tr_pccx, 32'd1, {32'd0, tr_t0},
              {32'd0, tr_cycle - tr_t0},
              x_out ? uscope_pkg::PCCX_DMA_WRITE : uscope_pkg::PCCX_DMA_READ, ""));
        if (x_err || (ch1_rsp_pop && drsp.err))
          tb_trace_pkg::check(uscope_pkg::uscope_npu_error(tr_w, tr_npu, trace_ctx(tr_cmd), "DMA",
              err_code(ERR_DMA_BUS), err_msg(ERR_DMA_BUS), tr_cmd, job_id(tr_cmd, 32'd1)));
      end
    end
  end
`else
  wire unused_trace = &{1'b0, xfer_cmd_id};
`endif
endmodule
