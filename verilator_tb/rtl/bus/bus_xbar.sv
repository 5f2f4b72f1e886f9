// bus_xbar: the SoC's crossbar (README "Bus"): NM masters, NS slaves plus an internal error
// slave for unmapped addresses, one valid/ready request and response channel per port.
//
// Routing and ordering
//   - Each request is decoded by address to one target. Per target, the eligible requesting
//     masters are arbitrated round-robin (the last winner has the lowest priority next time);
//     grant and routing are combinational, so an uncontended request is accepted in the cycle
//     it is raised.
//   - Slaves answer in order. The crossbar remembers, per target, which master each accepted
//     request came from (a FIFO of MAX_OUT entries) and routes responses back by it.
//   - A master may have up to MAX_OUT requests outstanding, all to one target: a request to a
//     different target waits until they have returned. So each master sees its responses in
//     request order without any reorder buffer.
//
// Tracing (USCOPE_TRACE): the crossbar is the noc scope "bus0". Every transaction gets a slot
// of the transaction catalog: issue on the first edge its request is seen valid (stage
// "request"), arbitration when accepted (arb_decision + stage "grant"), and a beat, stage
// "response" and completion when its response is accepted.
module bus_xbar
  import tb_pkg::*;
#(
  parameter int NM      = NUM_MASTERS,
  parameter int NS      = NUM_SLAVES,
  parameter int MAX_OUT = 4
) (
  input  logic          clk,
  input  logic          rst_n,
  // Masters
  input  logic [NM-1:0] m_req_valid,
  output logic [NM-1:0] m_req_ready,
  input  bus_req_t      m_req [NM],
  output logic [NM-1:0] m_rsp_valid,
  input  logic [NM-1:0] m_rsp_ready,
  output bus_rsp_t      m_rsp [NM],
  // Slaves
  output logic [NS-1:0] s_req_valid,
  input  logic [NS-1:0] s_req_ready,
  output bus_req_t      s_req [NS],
  input  logic [NS-1:0] s_rsp_valid,
  output logic [NS-1:0] s_rsp_ready,
  input  bus_rsp_t      s_rsp [NS]
);
  localparam int NT   = NS + 1;        // targets: the slaves, then the error slave
  localparam int TERR = NS;
  localparam int MW   = (NM > 1) ? $clog2(NM) : 1;
  localparam int TW   = $clog2(NT);
  localparam int QW   = $clog2(MAX_OUT);
  localparam int CW   = $clog2(MAX_OUT + 1);

  // ── Address decode (README "Memory map") ──────────────────────────────────────────────
  function automatic logic [TW-1:0] decode(input logic [31:0] a);
    if (a >= DRAM_BASE && a < DRAM_BASE + DRAM_BYTES) return TW'(SLV_DRAM);
    if (a[31:8] == MMIO_BASE[31:8])                   return TW'(SLV_MMIO);
    if (a[31:12] == NPU_BASE[31:12])                  return TW'(SLV_NPU);
    return TW'(TERR);
  endfunction

  // ── Per-master outstanding state ──────────────────────────────────────────────────────
  logic [CW-1:0] out_cnt [NM];
  logic [TW-1:0] out_tgt [NM];
  logic [TW-1:0] tgt [NM];
  logic [NM-1:0] eligible;

  always_comb begin
    for (int m = 0; m < NM; m++) begin
      tgt[m]      = decode(m_req[m].addr);
      eligible[m] = m_req_valid[m] && (out_cnt[m] < CW'(MAX_OUT)) &&
                    (out_cnt[m] == '0 || out_tgt[m] == tgt[m]);
    end
  end

  // ── Per-target FIFO of (master) for response routing ──────────────────────────────────
  logic [MW-1:0] q_mst [NT][MAX_OUT];
  logic [QW-1:0] q_rd [NT], q_wr [NT];
  logic [CW-1:0] q_cnt [NT];

  // ── Arbitration ───────────────────────────────────────────────────────────────────────
  logic [MW-1:0] rr_last [NT];
  logic [NM-1:0] contenders [NT];
  logic [MW-1:0] winner [NT];
  logic [NT-1:0] t_req_valid, t_req_ready, t_rsp_valid, t_rsp_ready;
  bus_rsp_t      t_rsp [NT];

  always_comb begin
    for (int t = 0; t < NT; t++) begin
      for (int m = 0; m < NM; m++)
        contenders[t][m] = eligible[m] && (tgt[m] == TW'(t)) && (q_cnt[t] < CW'(MAX_OUT));
      // Round-robin: scan from the master after the last winner.
      winner[t] = rr_last[t];
      for (int i = NM; i >= 1; i--) begin
        /* verilator lint_off UNUSEDSIGNAL */
        int unsigned m;  // < NM: only its low bits index
        /* verilator lint_on UNUSEDSIGNAL */
        m = (32'(rr_last[t]) + 32'(i)) % 32'(NM);
        if (contenders[t][m]) winner[t] = MW'(m);
      end
      t_req_valid[t] = |contenders[t];
    end
  end

  for (genvar s = 0; s < NS; s++) begin : g_slave
    assign s_req_valid[s] = t_req_valid[s];
    assign s_req[s]       = m_req[winner[s]];
    assign t_req_ready[s] = s_req_ready[s];
    assign t_rsp_valid[s] = s_rsp_valid[s];
    assign t_rsp[s]       = s_rsp[s];
    assign s_rsp_ready[s] = t_rsp_ready[s];
  end

  // ── The error slave: answers every unmapped request, one cycle later, with err = 1 ────
  logic       err_valid;
  logic [3:0] err_id;
  assign t_req_ready[TERR] = !err_valid || t_rsp_ready[TERR];
  assign t_rsp_valid[TERR] = err_valid;
  assign t_rsp[TERR]       = '{rdata: 32'd0, err: 1'b1, id: err_id};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      err_valid <= 1'b0;
      err_id    <= 4'd0;
    end else if (t_req_valid[TERR] && t_req_ready[TERR]) begin
      err_valid <= 1'b1;
      err_id    <= m_req[winner[TERR]].id;
    end else if (t_rsp_ready[TERR]) begin
      err_valid <= 1'b0;
    end
  end

  // ── Handshakes ────────────────────────────────────────────────────────────────────────
  logic [NT-1:0] t_accept, t_done;
  logic [MW-1:0] t_head [NT];

  always_comb begin
    for (int m = 0; m < NM; m++) begin
      m_req_ready[m] = 1'b0;
      m_rsp_valid[m] = 1'b0;
      m_rsp[m]       = '0;
    end
    for (int t = 0; t < NT; t++) begin
      t_accept[t] = t_req_valid[t] && t_req_ready[t];
      if (t_req_valid[t] && t_req_ready[t]) m_req_ready[winner[t]] = 1'b1;
      // Responses go to the master at the head of the target's FIFO. A response with no
      // request outstanding cannot happen (slaves answer requests only); drop it defensively.
      t_head[t]      = q_mst[t][q_rd[t]];
      t_rsp_ready[t] = (q_cnt[t] != '0) && m_rsp_ready[t_head[t]];
      if (t_rsp_valid[t] && q_cnt[t] != '0) begin
        m_rsp_valid[t_head[t]] = 1'b1;
        m_rsp[t_head[t]]       = t_rsp[t];
      end
      t_done[t] = t_rsp_valid[t] && t_rsp_ready[t];
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      for (int m = 0; m < NM; m++) begin
        out_cnt[m] <= '0;
        out_tgt[m] <= '0;
      end
      for (int t = 0; t < NT; t++) begin
        q_rd[t]    <= '0;
        q_wr[t]    <= '0;
        q_cnt[t]   <= '0;
        rr_last[t] <= MW'(NM - 1);  // so that master 0 wins the first contest
      end
    end else begin
      for (int m = 0; m < NM; m++) begin
        logic inc, dec;
        inc = 1'b0;
        dec = 1'b0;
        for (int t = 0; t < NT; t++) begin
          if (t_accept[t] && winner[t] == MW'(m)) begin
            inc = 1'b1;
            out_tgt[m] <= TW'(t);
          end
          if (t_done[t] && t_head[t] == MW'(m)) dec = 1'b1;
        end
        out_cnt[m] <= out_cnt[m] + CW'(inc) - CW'(dec);
      end
      for (int t = 0; t < NT; t++) begin
        if (t_accept[t]) begin
          q_mst[t][q_wr[t]] <= winner[t];
          q_wr[t]           <= q_wr[t] + 1'b1;
          rr_last[t]        <= winner[t];
        end
        if (t_done[t]) q_rd[t] <= q_rd[t] + 1'b1;
        q_cnt[t] <= q_cnt[t] + CW'(t_accept[t]) - CW'(t_done[t]);
      end
    end
  end

  // ── Protocol check (simulation) ───────────────────────────────────────────────────────
  // A master keeps a request valid and unchanged until it is accepted (README "Bus rules").
  // Arbitration is fair only if it does, and the trace's bookkeeping relies on it.
  logic [NM-1:0] chk_waiting;
  bus_req_t      chk_req [NM];
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      chk_waiting <= '0;
    end else begin
      for (int m = 0; m < NM; m++) begin
        if (chk_waiting[m])
          assert (m_req_valid[m] && m_req[m] == chk_req[m])
          else $error("bus_xbar: master %0d dropped or changed a request before it was accepted", m);
        chk_waiting[m] <= m_req_valid[m] && !m_req_ready[m];
        chk_req[m]     <= m_req[m];
      end
    end
  end

  // ── Tracing: the noc scope "bus0" (README "Tracing handles") ─────────────────────────
  // Ports as sim_main.cpp declares them: masters 0..NM-1, then targets NM..NM+NT-1.
  // Every transaction takes a catalog slot from the first edge its request is seen valid until
  // its response is accepted. A slot freed on an edge is not reused on that same edge, so the
  // clear and the next occupant's issue never share a frame.
`ifdef USCOPE_TRACE
  localparam int NTXN = 16;  // sim_main.cpp: max_txns; > NM * (MAX_OUT + 1) in flight
  localparam int XW   = $clog2(NTXN);
  // Stages (sim_main.cpp's order); request, stage 0, is entered by uscope_noc_issue itself.
  localparam byte unsigned ST_GRANT = 8'd1, ST_RESPONSE = 8'd2;
  localparam byte unsigned OPC_READ = 8'd0, OPC_WRITE = 8'd1;
  localparam shortint unsigned CNT_BYTES_TX = 16'd0, CNT_BYTES_RX = 16'd1;
  localparam shortint unsigned FIELD_TAG = 16'd7;  // the extra catalog field "tag" (bus id)

  chandle tr_w, tr_bus;
  logic [NM-1:0]   tr_pending;            // request seen, not accepted yet
  logic [XW-1:0]   tr_req_txn [NM];       // ... and its slot
  logic [XW-1:0]   tr_q_txn [NT][MAX_OUT]; // slots of accepted requests, beside q_mst
  logic            tr_q_we [NT][MAX_OUT];  // ... and whether they are writes
  logic [NTXN-1:0] tr_busy;

  function automatic shortint unsigned popcount_be(input logic [3:0] be);
    return shortint'(be[0]) + shortint'(be[1]) + shortint'(be[2]) + shortint'(be[3]);
  endfunction

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_bus     <= uscope_pkg::uscope_handle("bus0");
      tr_pending <= '0;
      tr_busy    <= '0;
    end else if (tr_w != null) begin
      logic [NTXN-1:0] taken, freed;
      taken = tr_busy;
      freed = '0;
      // Completions first: a read's data moves with its response.
      for (int t = 0; t < NT; t++) begin
        if (t_done[t]) begin
          logic [XW-1:0] x;
          x = tr_q_txn[t][q_rd[t]];
          if (!t_rsp[t].err && !tr_q_we[t][q_rd[t]]) begin
            tb_trace_pkg::check(uscope_pkg::uscope_noc_beat(tr_w, tr_bus, 32'(x), 16'd0, 16'd4));
            tb_trace_pkg::check(uscope_pkg::uscope_noc_counter_add(tr_w, tr_bus, CNT_BYTES_RX, 64'd4));
          end
          tb_trace_pkg::check(uscope_pkg::uscope_noc_stage_transition(tr_w, tr_bus, 32'(x), ST_RESPONSE));
          tb_trace_pkg::check(uscope_pkg::uscope_noc_complete(tr_w, tr_bus, 32'(x)));
          freed[x] = 1'b1;
        end
      end
      // New requests, then grants: a write's data moves with its request.
      for (int m = 0; m < NM; m++) begin
        if (m_req_valid[m]) begin
          logic [XW-1:0] x;
          x = tr_req_txn[m];
          if (!tr_pending[m]) begin
            x = '0;
            for (int i = NTXN - 1; i >= 0; i--) if (!taken[i]) x = XW'(i);
            taken[x] = 1'b1;
            tb_trace_pkg::check(uscope_pkg::uscope_noc_issue(tr_w, tr_bus, 32'(x),
                                               m_req[m].we ? OPC_WRITE : OPC_READ,
                                               64'(m_req[m].addr), 16'd1, 8'd2, 16'(m),
                                               16'(NM) + 16'(tgt[m])));
            tb_trace_pkg::check(uscope_pkg::uscope_noc_txn_set(tr_w, tr_bus, 32'(x), FIELD_TAG,
                                                 64'(m_req[m].id)));
          end
          if (m_req_ready[m]) begin
            tb_trace_pkg::check(uscope_pkg::uscope_noc_arb_decision(tr_w, tr_bus, 32'(x), 16'(NM) + 16'(tgt[m]),
                                                      8'($countones(contenders[tgt[m]]))));
            tb_trace_pkg::check(uscope_pkg::uscope_noc_stage_transition(tr_w, tr_bus, 32'(x), ST_GRANT));
            if (m_req[m].we) begin
              tb_trace_pkg::check(uscope_pkg::uscope_noc_beat(tr_w, tr_bus, 32'(x), 16'd0,
                                                popcount_be(m_req[m].be)));
              tb_trace_pkg::check(uscope_pkg::uscope_noc_counter_add(tr_w, tr_bus, CNT_BYTES_TX,
                                                       64'(popcount_be(m_req[m].be))));
            end
            tr_q_txn[tgt[m]][q_wr[tgt[m]]] <= x;
            tr_q_we[tgt[m]][q_wr[tgt[m]]]  <= m_req[m].we;
            tr_pending[m] <= 1'b0;
          end else begin
            tr_pending[m] <= 1'b1;
            tr_req_txn[m] <= x;
          end
        end
      end
      tr_busy <= taken & ~freed;
    end
  end
`endif

endmodule
