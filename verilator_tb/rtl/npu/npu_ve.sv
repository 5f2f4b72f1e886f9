// npu_ve: the vector engine, on npu_clk. Row-wise SOFTMAX and LAYERNORM, element-wise GELU, over
// an m x n int32 matrix in SRAM; one row is one job. The arithmetic is npu_pkg's (see
// rtl/npu/README.md, "Fixed point"); fw/npu_ref.c does the same passes in the same order.
//
// A row is processed in passes over SRAM rather than from a row buffer, so n is bounded by the
// SRAM, not by the engine:
//   SOFTMAX:   A  max(x)                    B  e = exp2(...) -> dst, sum(e)
//              r = 0xFFFFFFFF / sum         C  dst = post((e * r) >> 16)
//   LAYERNORM: A  sum(x >>> s)              mean = sum / n (signed, truncating)
//              B  sum(clamp16(xs-mean)^2)   var = sumsq / n; sd = isqrt(var + 1); inv = 2^24 / sd
//              C  dst = post((dc * inv) >>> 16)
//   GELU:      C  dst = post(gelu(x))
// A pass streams reads through one SRAM port (one per cycle when granted) and writes through a
// second port from a 4-entry queue; a pass ends when its last write is granted, so the next pass
// (which may read what this one wrote) sees it. Division is a 32-step restoring divider and the
// square root 16 digit steps, both one step per cycle.
module npu_ve
  import npu_pkg::*;
(
  input  logic        clk,    // npu_clk
  input  logic        rst_n,
  input  logic        start,
  /* verilator lint_off UNUSEDSIGNAL */  // the decoded command; the VE uses its own fields
  input  cmd_t        cmd,    // sampled with start; addresses already validated
  /* verilator lint_on UNUSEDSIGNAL */
  output logic        done,   // pulse
  // read port
  output logic        rd_req,
  output sram_addr_t  rd_addr,
  input  logic        rd_gnt,
  input  logic [31:0] rd_rdata,
  // write port
  output logic        wr_req,
  output sram_addr_t  wr_addr,
  output logic [31:0] wr_wdata,
  input  logic        wr_gnt
);
  localparam int unsigned WQ = 4;

  typedef enum logic [3:0] {
    S_IDLE, S_ROW, S_PASS, S_DIV, S_SQRT, S_SQRT_DONE
  } state_t;
  typedef enum logic [1:0] {P_A, P_B, P_C} pass_t;
  // what the divider result is for
  typedef enum logic [1:0] {D_RECIP, D_MEAN, D_VAR, D_INV} div_t;

  state_t state;
  pass_t  pass;
  div_t   dkind;
  ve_op_t op;
  logic [15:0] m, n;
  logic [10:5] pf;        // flags[10:5]: post() out_shift, sat8
  logic [4:0]  s;
  logic [15:0] row_idx;   // rows done in this command
  sram_addr_t  src_row, dst_row;

  // pass engine
  logic [15:0] rd_j, recv_j, wr_j;
  logic        rd_inflight;
  logic [31:0] wq [WQ];
  logic [1:0]  wq_wp, wq_rp;
  logic [2:0]  wq_cnt;

  // row statistics
  logic [31:0] mx;      // SOFTMAX: row max (signed)
  logic [31:0] sum;     // SOFTMAX: sum(e); LAYERNORM: sum(xs) (wraps)
  logic [31:0] sumsq;   // LAYERNORM: saturating
  logic [31:0] recip;   // SOFTMAX: 0xFFFFFFFF / sum
  logic [31:0] mean;    // LAYERNORM (signed)
  logic [31:0] var_q;   // LAYERNORM
  logic [24:0] inv;     // LAYERNORM: 2^24 / sd

  // divider: quo holds the dividend and shifts the quotient in from the right
  logic [5:0]  d_cnt;
  logic [31:0] d_rem;   // < d_den
  logic [31:0] d_quo, d_den;
  logic        d_neg;   // negate the quotient (signed mean)
  // square root
  logic [4:0]  q_cnt;
  logic [31:0] q_v, q_res, q_bit;

  wire writes = (op == VE_SOFTMAX) ? (pass != P_A) : (pass == P_C);
  wire reads_dst = (op == VE_SOFTMAX) && (pass == P_C);

  // ── read stream ──
  // Reads stop while the write queue could not take the data they bring back.
  wire room = !writes || ({1'b0, wq_cnt} + {3'd0, rd_inflight} < 4'(WQ));
  assign rd_req  = (state == S_PASS) && (rd_j != n) && room;
  assign rd_addr = (reads_dst ? dst_row : src_row) + SRAM_AW'(rd_j);

  // ── per-element arithmetic on the word that arrives this cycle ──
  wire [31:0] x  = rd_rdata;
  wire [31:0] xs = $signed(x) >>> s;
  wire signed [15:0] dc = clamp16($signed(xs - mean));
  wire [31:0] sq = 32'($signed(dc) * $signed(dc));
  wire [32:0] sumsq_add = {1'b0, sumsq} + {1'b0, sq};
  wire [16:0] e = softmax_exp(mx, x, s);
  wire [63:0] e_r = 64'(x) * 64'(recip);   // x < 2^17 here (an e), and e * r < 2^32

  logic [31:0] y;        // the word this element writes, if the pass writes
  always_comb begin
    y = 32'd0;
    unique case (op)
      VE_SOFTMAX:   y = (pass == P_B) ? 32'(e) : post(e_r[47:16], pf);
      VE_LAYERNORM: y = post(ln_scale(dc, inv), pf);
      VE_GELU:      y = post(gelu(x, s), pf);
      default:      y = 32'd0;
    endcase
  end

  // ── write stream ──
  assign wr_req   = (wq_cnt != 0);
  assign wr_addr  = dst_row + SRAM_AW'(wr_j);
  assign wr_wdata = wq[wq_rp];
  wire wq_push = rd_inflight && writes;
  wire wq_pop  = wr_req && wr_gnt;

  wire pass_end = (state == S_PASS) && (recv_j == n) && !rd_inflight && (wq_cnt == 0);


  // The divider's next remainder/quotient step.
  wire [32:0] d_sh   = {d_rem, d_quo[31]};
  wire        d_ge   = (d_sh >= {1'b0, d_den});
  // either way below d_den < 2^32: 32 bits hold it
  wire [31:0] d_next = d_ge ? 32'(d_sh - {1'b0, d_den}) : d_sh[31:0];

  task automatic div_start(input logic [31:0] num, input logic [31:0] den, input logic neg,
                           input div_t kind);
    d_quo <= num;
    d_den <= den;
    d_rem <= '0;
    d_cnt <= 6'd32;
    d_neg <= neg;
    dkind <= kind;
    state <= S_DIV;
  endtask

  task automatic pass_start(input pass_t p);
    pass   <= p;
    rd_j   <= '0;
    recv_j <= '0;
    wr_j   <= '0;
    state  <= S_PASS;
  endtask

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE; pass <= P_A; dkind <= D_RECIP; op <= VE_SOFTMAX;
      m <= '0; n <= '0; pf <= '0; s <= '0; src_row <= '0; dst_row <= '0;
      rd_j <= '0; recv_j <= '0; wr_j <= '0; rd_inflight <= 1'b0;
      wq_wp <= '0; wq_rp <= '0; wq_cnt <= '0;
      mx <= '0; sum <= '0; sumsq <= '0; recip <= '0; mean <= '0; var_q <= '0; inv <= '0;
      d_cnt <= '0; d_rem <= '0; d_quo <= '0; d_den <= '0; d_neg <= 1'b0;
      q_cnt <= '0; q_v <= '0; q_res <= '0; q_bit <= '0;
      done <= 1'b0; row_idx <= '0;
    end else begin
      done <= 1'b0;

      // ── streams (active in S_PASS only; idle otherwise) ──
      rd_inflight <= rd_req && rd_gnt;
      if (rd_req && rd_gnt) rd_j <= rd_j + 16'd1;
      if (rd_inflight) begin
        recv_j <= recv_j + 16'd1;
        unique case (op)
          VE_SOFTMAX: begin
            if (pass == P_A && $signed(x) > $signed(mx)) mx <= x;
            if (pass == P_B) sum <= sum + 32'(e);
          end
          VE_LAYERNORM: begin
            if (pass == P_A) sum <= sum + xs;
            if (pass == P_B) sumsq <= sumsq_add[32] ? 32'hFFFF_FFFF : sumsq_add[31:0];
          end
          default: ;
        endcase
      end
      if (wq_push) begin
        wq[wq_wp] <= y;
        wq_wp     <= wq_wp + 2'd1;
      end
      if (wq_pop) begin
        wq_rp <= wq_rp + 2'd1;
        wr_j  <= wr_j + 16'd1;
      end
      wq_cnt <= wq_cnt + (wq_push ? 3'd1 : 3'd0) - (wq_pop ? 3'd1 : 3'd0);

      unique case (state)
        S_IDLE: if (start) begin
          op      <= ve_op_t'(cmd.opcode[1:0]);
          m       <= cmd.m;
          n       <= cmd.n;
          pf      <= cmd.flags[10:5];
          s       <= cmd.flags[4:0];
          src_row <= SRAM_AW'(cmd.src0 >> 2);
          dst_row <= SRAM_AW'(cmd.dst >> 2);
          row_idx <= '0;
          if (cmd.m == 0 || cmd.n == 0) done <= 1'b1;
          else state <= S_ROW;
        end

        S_ROW: begin
          mx    <= 32'h8000_0000;
          sum   <= '0;
          sumsq <= '0;
          pass_start(op == VE_GELU ? P_C : P_A);
        end

        S_PASS: if (pass_end) begin
          unique case (pass)
            P_A: if (op == VE_SOFTMAX) pass_start(P_B);
                 else begin
                   // mean = sum / n truncating toward zero: divide magnitudes, fix the sign
                   div_start($signed(sum) < 0 ? -sum : sum, 32'(n), sum[31], D_MEAN);
                 end
            P_B: if (op == VE_SOFTMAX) div_start(32'hFFFF_FFFF, sum, 1'b0, D_RECIP);
                 else div_start(sumsq, 32'(n), 1'b0, D_VAR);
            default: begin  // P_C: the row is done
              src_row  <= src_row + SRAM_AW'(n);
              dst_row  <= dst_row + SRAM_AW'(n);
              row_idx  <= row_idx + 16'd1;
              if (row_idx + 16'd1 == m) begin
                state <= S_IDLE;
                done  <= 1'b1;
              end else state <= S_ROW;
            end
          endcase
        end

        S_DIV: begin
          d_rem <= d_next;
          d_quo <= {d_quo[30:0], d_ge};
          d_cnt <= d_cnt - 6'd1;
          if (d_cnt == 6'd1) begin
            unique case (dkind)
              D_RECIP: begin recip <= {d_quo[30:0], d_ge}; pass_start(P_C); end
              D_MEAN: begin
                mean <= d_neg ? -{d_quo[30:0], d_ge} : {d_quo[30:0], d_ge};
                pass_start(P_B);
              end
              D_VAR: begin
                var_q <= {d_quo[30:0], d_ge};
                // sd = isqrt(var + 1): the +1 keeps sd >= 1 (epsilon)
                q_v   <= {d_quo[30:0], d_ge} + 32'd1;
                q_res <= '0;
                q_bit <= 32'h4000_0000;
                q_cnt <= 5'd16;
                state <= S_SQRT;
              end
              default: begin inv <= 25'({d_quo[30:0], d_ge}); pass_start(P_C); end  // D_INV
            endcase
          end
        end

        S_SQRT: begin
          if (q_v >= q_res + q_bit) begin
            q_v   <= q_v - (q_res + q_bit);
            q_res <= (q_res >> 1) + q_bit;
          end else begin
            q_res <= q_res >> 1;
          end
          q_bit <= q_bit >> 2;
          q_cnt <= q_cnt - 5'd1;
          if (q_cnt == 5'd1) begin
            // the last step's result is q_res' computed above; divide with it next cycle
            state <= S_SQRT_DONE;
          end
        end

        S_SQRT_DONE: div_start(32'h0100_0000, q_res, 1'b0, D_INV);

        default: state <= S_IDLE;
      endcase
    end
  end

  wire unused_ok = &{1'b0, var_q, e_r[63:48], e_r[15:0]};

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): one VE job per row ──
  chandle tr_w, tr_npu;
  logic tr_armed;
  logic tr_fetched = 1'b0;
  logic [31:0] tr_cycle, tr_t0, tr_cmd;
  // The job's opcode, named only where a call takes the name: string registers written with
  // `<=` made Verilator copy both strings through their delayed shadows every cycle, traced
  // or not (std::string::_M_assign in nba_sequent, 1% of the demo's samples).
  logic [7:0] tr_opc;
  function automatic string job_name(input logic [7:0] opc);
    return opc == tb_pkg::NPU_OP_SOFTMAX ? "VE_SOFTMAX" : opc == tb_pkg::NPU_OP_LAYERNORM ? "VE_LN" : "VE_GELU";
  endfunction
  always_ff @(posedge clk or negedge rst_n) tr_armed <= !rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge clk) begin
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_fetched <= 1'b1;
    end
    tr_cycle <= tr_cycle + 32'd1;
    if (state == S_IDLE && start) begin
      tr_cmd <= cmd.cmd_id;
      tr_opc <= cmd.opcode;
    end
    if (tr_npu != null) begin
      if (state == S_ROW) begin
        tr_t0 <= tr_cycle;
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_issue(tr_w, tr_npu, trace_ctx(tr_cmd),
            job_id(tr_cmd, 32'(row_idx) + 32'd1), tr_cmd, job_name(tr_opc), TRACE_ABSENT32, 32'(row_idx)));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_ve_start(tr_w, tr_npu, 16'd0, trace_ctx(tr_cmd),
            job_id(tr_cmd, 32'(row_idx) + 32'd1), tr_cmd, op_name(tr_opc), 32'(n), 32'd1));
      end
      if (pass_end && pass == P_C) begin
        tb_trace_pkg::check(uscope_pkg::uscope_npu_ve_end(tr_w, tr_npu, 16'd0, trace_ctx(tr_cmd),
            job_id(tr_cmd, 32'(row_idx) + 32'd1), tr_cmd, tr_cycle - tr_t0));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_done(tr_w, tr_npu, trace_ctx(tr_cmd),
            job_id(tr_cmd, 32'(row_idx) + 32'd1), tr_cmd, job_name(tr_opc), tr_cycle - tr_t0));
      end
    end
  end
`endif
endmodule
