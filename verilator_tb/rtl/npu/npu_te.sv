// npu_te: the tensor engine, on npu_clk. dst[m x n] = src0[m x k] . src1[k x n] on a
// ROWS x COLS output-stationary systolic array of npu_te_pe.
//
// The output is computed in tiles of ROWS x COLS (edge tiles are masked), each a job. PE(r,c)
// must see A[r][kk] from the left and B[kk][c] from above at the same advance, kk + r + c:
//  - B: step t < k fetches row B[t][j0..] (COLS consecutive words, so COLS distinct banks) and
//    column c enters c advances late through skew registers;
//  - A: step t fetches the anti-diagonal A[i0+r][t-r] directly (port r idle outside
//    0 <= t-r < k), which is the skew done by addressing. Port r's address is
//    base + r*(k-1) + t, so for even k the ROWS ports hit distinct banks; fetching the column
//    A[..][t] instead (stride k) would put them all in one bank whenever 8 divides k.
// Steps run t = 0 .. k+ROWS-2, then COLS-1 advances flush zeros: after k + ROWS + COLS - 2
// advances every PE holds its dot product, and the COLS ports write the tile back one row per
// cycle (post() applied: out_shift, sat8).
//
// Operand fetch goes through the SRAM arbiter, so ports still lose to DMA, VE or each other
// (A's and B's bank sets overlap, and odd k pairs A's ports up). The array does not care: it
// only advances once a whole step's operands are in, so stalls change timing, never results.
// MACs are counted on the k steps that carry B, valid_rows x valid_cols each: m*n*k a command.
module npu_te
  import npu_pkg::*;
#(
  parameter int unsigned ROWS = 4,
  parameter int unsigned COLS = 4
) (
  input  logic        clk,    // npu_clk
  input  logic        rst_n,
  input  logic        start,
  /* verilator lint_off UNUSEDSIGNAL */  // the decoded command; the TE uses its MATMUL fields
  input  cmd_t        cmd,    // sampled with start; addresses already validated
  /* verilator lint_on UNUSEDSIGNAL */
  output logic        done,   // pulse
  output logic [$clog2(ROWS*COLS+1)-1:0] mac_inc,
  // A operand ports (read)
  output logic [ROWS-1:0]              a_req,
  output logic [ROWS-1:0][SRAM_AW-1:0] a_addr,
  input  logic [ROWS-1:0]              a_gnt,
  input  logic [ROWS-1:0][31:0]        a_rdata,
  // B operand (read) / C result (write) ports
  output logic [COLS-1:0]              b_req,
  output logic                         b_we,
  output logic [COLS-1:0][SRAM_AW-1:0] b_addr,
  output logic [COLS-1:0][31:0]        b_wdata,
  input  logic [COLS-1:0]              b_gnt,
  input  logic [COLS-1:0][31:0]        b_rdata
);
  localparam int unsigned MW = $clog2(ROWS*COLS+1);
  localparam int unsigned RW = $clog2(ROWS+1);
  localparam int unsigned CW = $clog2(COLS+1);
  localparam int unsigned FLUSH_K0 = ROWS + COLS - 2;  // k = 0: nothing to fetch
  localparam int unsigned FLUSH    = COLS - 1;         // after the last fetch step

  typedef enum logic [2:0] {S_IDLE, S_TILE, S_FETCH, S_FLUSH, S_DRAIN} state_t;
  state_t state;

  // command
  logic [15:0] m, n, k;
  logic [10:5] pf;                // flags[10:5]: post() out_shift, sat8
  logic [31:0] src1w;
  logic [31:0] rowk [ROWS];       // r * k
  logic [31:0] rows_k, rows_n;    // ROWS * k, ROWS * n
  // tile
  logic [15:0] i0, j0;
  logic [RW-1:0] vr;
  logic [CW-1:0] vc;
  logic [31:0] a_tile, c_tile, b_row, c_row;
  logic [15:0] fs;                // fetch step t
  logic [16:0] steps;             // k + ROWS - 1 fetch steps
  logic [ROWS-1:0] need_a, a_pend, mask_a, adv_a;  // still to grant / granted last cycle /
  logic [COLS-1:0] need_b, b_pend, mask_b, adv_b;  // this step's ports / the advancing step's
  logic [COLS-1:0] need_w;
  logic        adv_real;          // the advancing step carries B (t < k): it counts MACs
  logic [31:0] hold_a [ROWS];
  logic [31:0] hold_b [COLS];
  logic        adv_pend;          // a complete step's operands arrive this cycle
  logic [$clog2(FLUSH_K0+2)-1:0] flush_left;
  logic [RW-1:0] dr;              // drain row
  logic [31:0] tile_idx;          // tiles done in this command

  function automatic logic [COLS-1:0] cmask(input logic [CW-1:0] v);
    for (int c = 0; c < int'(COLS); c++) cmask[c] = (c < int'(v));
  endfunction
  // A ports active at step t: valid rows whose element t-r exists
  function automatic logic [ROWS-1:0] amask(input logic [15:0] t, input logic [RW-1:0] v,
                                            input logic [15:0] kk);
    for (int r = 0; r < int'(ROWS); r++)
      amask[r] = (r < int'(v)) && (32'(t) >= 32'(r)) && (32'(t) - 32'(r) < 32'(kk));
  endfunction

  // valid rows / columns of the tile at (i0, j0)
  wire [15:0] m_left = m - i0;
  wire [15:0] n_left = n - j0;
  wire [RW-1:0] vr_next = (m_left >= 16'(ROWS)) ? RW'(ROWS) : RW'(m_left);
  wire [CW-1:0] vc_next = (n_left >= 16'(COLS)) ? CW'(COLS) : CW'(n_left);

  // ── the array ──
  logic clr, adv, zadv;
  logic signed [7:0] a_feed [ROWS];
  logic signed [7:0] b_feed [COLS];
  logic signed [7:0] a_h [ROWS][COLS+1];   // a_h[r][c]: into PE(r,c) from the left
  logic signed [7:0] b_v [ROWS+1][COLS];   // b_v[r][c]: into PE(r,c) from above
  logic [31:0] acc [ROWS][COLS];

  assign zadv = (state == S_FLUSH) && !adv_pend && (flush_left != 0);
  assign adv  = adv_pend || zadv;
  assign clr  = (state == S_TILE);

  // Ports idle in the advancing step feed zeros (their hold registers may be stale).
  always_comb begin
    for (int r = 0; r < int'(ROWS); r++)
      a_feed[r] = (adv_pend && adv_a[r]) ? (a_pend[r] ? a_rdata[r][7:0] : hold_a[r][7:0]) : 8'sd0;
    for (int c = 0; c < int'(COLS); c++)
      b_feed[c] = (adv_pend && adv_b[c]) ? (b_pend[c] ? b_rdata[c][7:0] : hold_b[c][7:0]) : 8'sd0;
  end

  // A arrives already skewed (anti-diagonal fetch); column c of B is delayed c advances.
  for (genvar r = 0; r < int'(ROWS); r++) begin : g_feed_a
    assign a_h[r][0] = a_feed[r];
  end
  for (genvar c = 0; c < int'(COLS); c++) begin : g_skew_b
    if (c == 0) begin : g_direct
      assign b_v[0][0] = b_feed[0];
    end else begin : g_delay
      logic signed [7:0] sr [c];
      always_ff @(posedge clk) begin
        if (clr) for (int s = 0; s < c; s++) sr[s] <= '0;
        else if (adv) begin
          sr[0] <= b_feed[c];
          for (int s = 1; s < c; s++) sr[s] <= sr[s-1];
        end
      end
      assign b_v[0][c] = sr[c-1];
    end
  end

  for (genvar r = 0; r < int'(ROWS); r++) begin : g_row
    for (genvar c = 0; c < int'(COLS); c++) begin : g_col
      npu_te_pe u_pe (
        .clk  (clk),
        .clr  (clr),
        .adv  (adv),
        .a_in (a_h[r][c]),
        .b_in (b_v[r][c]),
        .a_out(a_h[r][c+1]),
        .b_out(b_v[r+1][c]),
        .acc  (acc[r][c])
      );
    end
  end

  // ── SRAM ports ──
  always_comb begin
    for (int r = 0; r < int'(ROWS); r++) begin
      a_req[r]  = need_a[r];
      a_addr[r] = SRAM_AW'(a_tile + rowk[r] + 32'(fs) - 32'(r));  // A[i0+r][t-r]
    end
    b_we = (state == S_DRAIN);
    for (int c = 0; c < int'(COLS); c++) begin
      b_req[c]   = b_we ? need_w[c] : need_b[c];
      b_addr[c]  = SRAM_AW'((b_we ? c_row : b_row) + 32'(c));
      b_wdata[c] = post(acc[dr[$clog2(ROWS)-1:0]][c], pf);  // dr < vr <= ROWS in S_DRAIN
    end
  end

  wire [ROWS-1:0] rem_a = need_a & ~a_gnt;
  wire [COLS-1:0] rem_b = need_b & ~b_gnt;
  wire [COLS-1:0] rem_w = need_w & ~b_gnt;

  assign mac_inc  = (adv_pend && adv_real) ? MW'(vr * vc) : '0;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      m <= '0; n <= '0; k <= '0; pf <= '0;
      src1w <= '0;
      for (int r = 0; r < int'(ROWS); r++) rowk[r] <= '0;
      rows_k <= '0; rows_n <= '0;
      i0 <= '0; j0 <= '0; vr <= '0; vc <= '0;
      a_tile <= '0; c_tile <= '0; b_row <= '0; c_row <= '0;
      fs <= '0; steps <= '0; need_a <= '0; need_b <= '0; need_w <= '0;
      mask_a <= '0; mask_b <= '0; adv_a <= '0; adv_b <= '0; adv_real <= 1'b0;
      a_pend <= '0; b_pend <= '0;
      adv_pend <= 1'b0; flush_left <= '0; dr <= '0;
      done <= 1'b0; tile_idx <= '0;
    end else begin
      done       <= 1'b0;
      adv_pend   <= 1'b0;
      // Operand words arrive the cycle after their grant; keep them until the step advances.
      a_pend <= need_a & a_gnt;
      b_pend <= need_b & b_gnt;
      for (int r = 0; r < int'(ROWS); r++) if (a_pend[r]) hold_a[r] <= a_rdata[r];
      for (int c = 0; c < int'(COLS); c++) if (b_pend[c]) hold_b[c] <= b_rdata[c];

      unique case (state)
        S_IDLE: if (start) begin
          m <= cmd.m; n <= cmd.n; k <= cmd.k; pf <= cmd.flags[10:5];
          src1w <= {2'd0, cmd.src1[31:2]};
          for (int r = 0; r < int'(ROWS); r++) rowk[r] <= 32'(r) * 32'(cmd.k);
          rows_k <= 32'(ROWS) * 32'(cmd.k);
          rows_n <= 32'(ROWS) * 32'(cmd.n);
          steps  <= 17'(cmd.k) + 17'(ROWS) - 17'd1;
          i0 <= '0; j0 <= '0;
          a_tile   <= {2'd0, cmd.src0[31:2]};
          c_tile   <= {2'd0, cmd.dst[31:2]};
          tile_idx <= '0;
          if (cmd.m == 0 || cmd.n == 0) done <= 1'b1;
          else state <= S_TILE;
        end

        S_TILE: begin
          vr     <= vr_next;
          vc     <= vc_next;
          fs     <= '0;
          b_row  <= src1w + 32'(j0);
          c_row  <= c_tile + 32'(j0);
          if (k == 0) begin
            state <= S_FLUSH; flush_left <= ($clog2(FLUSH_K0+2))'(FLUSH_K0);
          end else begin
            state  <= S_FETCH;
            need_a <= amask(16'd0, vr_next, k);
            mask_a <= amask(16'd0, vr_next, k);
            need_b <= cmask(vc_next);
            mask_b <= cmask(vc_next);
          end
        end

        S_FETCH: begin
          if (rem_a == '0 && rem_b == '0) begin
            adv_pend <= 1'b1;
            adv_a    <= mask_a;
            adv_b    <= mask_b;
            adv_real <= (fs < k);
            fs       <= fs + 16'd1;
            b_row    <= b_row + 32'(n);
            if (17'(fs) + 17'd1 == steps) begin
              state <= S_FLUSH; flush_left <= ($clog2(FLUSH_K0+2))'(FLUSH);
              need_a <= '0; need_b <= '0;
            end else begin
              need_a <= amask(fs + 16'd1, vr, k);
              mask_a <= amask(fs + 16'd1, vr, k);
              need_b <= (fs + 16'd1 < k) ? cmask(vc) : '0;
              mask_b <= (fs + 16'd1 < k) ? cmask(vc) : '0;
            end
          end else begin
            need_a <= rem_a;
            need_b <= rem_b;
          end
        end

        S_FLUSH: begin
          if (!adv_pend) begin
            if (flush_left == 0) begin
              state  <= S_DRAIN;
              dr     <= '0;
              need_w <= cmask(vc);
            end else begin
              flush_left <= flush_left - 1'b1;
            end
          end
        end

        S_DRAIN: begin
          if (rem_w == '0) begin
            dr    <= dr + 1'b1;
            c_row <= c_row + 32'(n);
            if (dr + 1'b1 == vr) begin
              need_w    <= '0;
              tile_idx  <= tile_idx + 32'd1;
              if (32'(j0) + COLS >= 32'(n)) begin
                j0     <= '0;
                i0     <= i0 + 16'(ROWS);
                a_tile <= a_tile + rows_k;
                c_tile <= c_tile + rows_n;
                if (32'(i0) + ROWS >= 32'(m)) begin
                  state <= S_IDLE;
                  done  <= 1'b1;
                end else state <= S_TILE;
              end else begin
                j0    <= j0 + 16'(COLS);
                state <= S_TILE;
              end
            end else begin
              need_w <= cmask(vc);
            end
          end else begin
            need_w <= rem_w;
          end
        end

        default: state <= S_IDLE;
      endcase
    end
  end

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): one TE_GEMM job per tile ──
  // Also one pccx MAC_COMPUTE event per tile (core_id 0 = the TE) when sim_main opened a .pccx.
  chandle tr_w, tr_npu, tr_pccx;
  logic tr_armed;
  logic tr_fetched = 1'b0;
  logic [31:0] tr_cycle, tr_t0, tr_cmd;
  always_ff @(posedge clk or negedge rst_n) tr_armed <= !rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge clk) begin
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_pccx    <= uscope_pkg::uscope_handle("pccx");
      tr_fetched <= 1'b1;
    end
    tr_cycle <= tr_cycle + 32'd1;
    if (state == S_IDLE && start) tr_cmd <= cmd.cmd_id;
    if (tr_npu != null) begin
      if (state == S_TILE) begin
        tr_t0 <= tr_cycle;
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_issue(tr_w, tr_npu, trace_ctx(tr_cmd),
            job_id(tr_cmd, tile_idx + 32'd1), tr_cmd, "TE_GEMM", tile_idx, TRACE_ABSENT32));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_te_start(tr_w, tr_npu, 16'd0, trace_ctx(tr_cmd),
            job_id(tr_cmd, tile_idx + 32'd1), tr_cmd, 32'(m), 32'(n), 32'(k), 32'(vr_next),
            32'(vc_next), 32'(k)));
      end
      if (state == S_DRAIN && rem_w == '0 && dr + 1'b1 == vr) begin
        tb_trace_pkg::check(uscope_pkg::uscope_npu_te_end(tr_w, tr_npu, 16'd0, trace_ctx(tr_cmd),
            job_id(tr_cmd, tile_idx + 32'd1), tr_cmd, 64'(vr) * 64'(vc) * 64'(k),
            tr_cycle - tr_t0));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_done(tr_w, tr_npu, trace_ctx(tr_cmd),
            job_id(tr_cmd, tile_idx + 32'd1), tr_cmd, "TE_GEMM", tr_cycle - tr_t0));
        if (tr_pccx != null)
          tb_trace_pkg::check(uscope_pkg::uscope_sv_pccx_event(tr_pccx, 32'd0, {32'd0, tr_t0},
              {32'd0, tr_cycle - tr_t0}, uscope_pkg::PCCX_MAC_COMPUTE, ""));
      end
    end
  end

  // One pccx SYSTOLIC_STALL (core_id 0) per run of cycles in which the array waits on the SRAM
  // arbiter: a fetch step whose operands are not all granted, or a result row whose write is
  // not. Without conflicts every step and row takes one cycle, so these are exactly the cycles
  // the conflicts cost; each run lies inside its tile's MAC_COMPUTE.
  wire tr_stall = (state == S_FETCH && (rem_a != '0 || rem_b != '0)) || (state == S_DRAIN && rem_w != '0);
  logic tr_stalling = 1'b0;
  logic [31:0] tr_s0;
  always_ff @(posedge clk) begin
    if (tr_stall && !tr_stalling) begin
      tr_stalling <= 1'b1;
      tr_s0       <= tr_cycle;
    end else if (!tr_stall && tr_stalling) begin
      tr_stalling <= 1'b0;
      if (tr_pccx != null)
        tb_trace_pkg::check(uscope_pkg::uscope_sv_pccx_event(tr_pccx, 32'd0, {32'd0, tr_s0},
            {32'd0, tr_cycle - tr_s0}, uscope_pkg::PCCX_SYSTOLIC_STALL, ""));
    end
  end
`endif
endmodule
