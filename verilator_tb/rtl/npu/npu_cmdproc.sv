// npu_cmdproc: the command processor, on npu_clk.
//
//   fetch   pop a descriptor address from the command queue and have DMA channel 0 read the
//           7-word descriptor from data RAM;
//   decode  check it (opcode, alignment, SRAM bounds, overlaps) and compute the SRAM word
//           ranges it reads and writes;
//   issue   in order, to the engine the opcode needs (DMA, TE or VE), once that engine is free
//           and the command's ranges do not overlap what an engine still running will write, or
//           read where this one writes (RAW/WAR/WAW through SRAM). Independent commands thus
//           run concurrently on different engines, e.g. DMA_IN of the next tile while the TE
//           multiplies this one, and then contend for SRAM banks;
//   retire  in order, through a 4-entry reorder buffer, so DONE_TOKEN only ever moves forward:
//           a completion goes to the core_clk side with the perf counters of that edge.
// A command that fails decode never runs: it retires in order with its error.
module npu_cmdproc
  import tb_pkg::*;
  import npu_pkg::*;
(
  input  logic        clk,    // npu_clk
  input  logic        rst_n,
  // command queue, read side
  input  logic        cmdq_rvalid,
  output logic        cmdq_rready,
  input  cmdq_entry_t cmdq_rdata,
  // descriptor fetch (DMA channel 0)
  output logic        desc_start,
  output logic [31:0] desc_addr,
  input  logic        desc_done,
  input  logic [NPU_DESC_W-1:0][31:0] desc_words,
  input  logic        desc_err,
  // engines: issue_cmd is valid with each start pulse
  output cmd_t        issue_cmd,
  output logic        dma_start,
  output logic        dma_out,
  output logic [31:0] dma_dram,
  output sram_addr_t  dma_sram,
  output logic [31:0] dma_len,
  input  logic        dma_done,
  input  logic        dma_err,
  output logic        te_start,
  input  logic        te_done,
  output logic        ve_start,
  input  logic        ve_done,
  // completion queue, write side
  output logic        cpl_wvalid,
  input  logic        cpl_wready,
  output cpl_entry_t  cpl_wdata,
  input  logic [63:0] perf_macs,
  input  logic [31:0] perf_dma_bytes,
  input  logic [31:0] perf_conflicts
);
  // ── SRAM word ranges [lo, hi), for the hazard check ──
  typedef struct packed {
    logic        v;       // non-empty
    logic [14:0] lo, hi;  // 0..16384
  } rng_t;

  function automatic rng_t mkrng(input logic [31:0] byte_addr, input logic [31:0] len);
    rng_t r;
    r.v  = (len != 0);
    r.lo = 15'(byte_addr >> 2);
    r.hi = 15'((byte_addr >> 2) + len);
    return r;
  endfunction
  function automatic logic ov(input rng_t a, input rng_t b);
    return a.v && b.v && (a.lo < b.hi) && (b.lo < a.hi);
  endfunction
  // [addr, addr + 4*len) inside the 64 KiB SRAM (35-bit sum: nothing wraps)
  function automatic logic fits(input logic [31:0] addr, input logic [31:0] len);
    return ({3'd0, addr} + {1'b0, len, 2'b00}) <= 35'h1_0000;
  endfunction

  // ── fetch / decode ──
  typedef enum logic [1:0] {F_IDLE, F_WAIT, F_DECODE} fstate_t;
  fstate_t fstate;
  cmd_t    cur;
  logic    cur_desc_err;

  // the issue stage: one decoded command
  logic slot_valid;
  cmd_t slot_cmd;
  err_t slot_err;
  eng_t slot_eng;
  rng_t slot_rd0, slot_rd1, slot_wr;

  // decode of `cur` (combinational; registered into the slot in F_DECODE)
  logic [31:0] len_mn, len_mk, len_kn;
  logic        is_dma_in, is_dma_out, is_mm, is_ve, known;
  err_t        dec_err;
  eng_t        dec_eng;
  rng_t        dec_rd0, dec_rd1, dec_wr;
  always_comb begin
    len_mn = 32'(cur.m) * 32'(cur.n);
    len_mk = 32'(cur.m) * 32'(cur.k);
    len_kn = 32'(cur.k) * 32'(cur.n);
    is_dma_in  = (cur.opcode == NPU_OP_DMA_IN);
    is_dma_out = (cur.opcode == NPU_OP_DMA_OUT);
    is_mm      = (cur.opcode == NPU_OP_MATMUL);
    is_ve      = (cur.opcode == NPU_OP_SOFTMAX) || (cur.opcode == NPU_OP_LAYERNORM) ||
                 (cur.opcode == NPU_OP_GELU);
    known      = is_dma_in || is_dma_out || is_mm || is_ve;
    dec_eng = is_mm ? ENG_TE : is_ve ? ENG_VE : (is_dma_in || is_dma_out) ? ENG_DMA : ENG_NONE;
    dec_rd0 = '0;
    dec_rd1 = '0;
    dec_wr  = '0;
    if (is_dma_in)  dec_wr  = mkrng(cur.dst, len_mn);
    if (is_dma_out) dec_rd0 = mkrng(cur.src0, len_mn);
    if (is_mm) begin
      dec_rd0 = mkrng(cur.src0, len_mk);
      dec_rd1 = mkrng(cur.src1, len_kn);
      dec_wr  = mkrng(cur.dst, len_mn);
    end
    if (is_ve) begin
      dec_rd0 = mkrng(cur.src0, len_mn);
      dec_wr  = mkrng(cur.dst, len_mn);
    end
    // checks, in priority order
    dec_err = ERR_NONE;
    if (cur_desc_err) dec_err = ERR_DESC_BUS;
    else if (!known) dec_err = ERR_OPCODE;
    else if (cur.src0[1:0] != 0 || cur.dst[1:0] != 0 || (is_mm && cur.src1[1:0] != 0))
      dec_err = ERR_ALIGN;
    else if ((is_dma_in && !fits(cur.dst, len_mn)) ||
             (is_dma_out && !fits(cur.src0, len_mn)) ||
             (is_mm && (!fits(cur.src0, len_mk) || !fits(cur.src1, len_kn) ||
                        !fits(cur.dst, len_mn))) ||
             (is_ve && (!fits(cur.src0, len_mn) || !fits(cur.dst, len_mn))))
      dec_err = ERR_RANGE;
    else if ((is_mm && (ov(dec_wr, dec_rd0) || ov(dec_wr, dec_rd1))) ||
             (is_ve && cur.dst != cur.src0 && ov(dec_wr, dec_rd0)))
      dec_err = ERR_OVERLAP;
    if (dec_err != ERR_NONE) dec_eng = ENG_NONE;
  end

  // ── engines in flight ──
  logic [3:0]  eng_busy;                // indexed by eng_t
  rng_t        eng_rd0 [4], eng_rd1 [4], eng_wr [4];
  logic [1:0]  eng_rob [4];              // the ROB entry of the command on each engine

  // ── reorder buffer ──
  localparam int unsigned ROB = 4;
  logic [31:0] rob_id    [ROB];
  logic [31:0] rob_token [ROB];
  err_t        rob_err   [ROB];
  logic [ROB-1:0] rob_done;
  logic [1:0]  rob_head, rob_tail;
  logic [2:0]  rob_cnt;

  logic hazard;
  always_comb begin
    hazard = 1'b0;
    for (int e = 1; e < 4; e++) begin
      if (eng_busy[e] &&
          (ov(slot_wr, eng_rd0[e]) || ov(slot_wr, eng_rd1[e]) || ov(slot_wr, eng_wr[e]) ||
           ov(slot_rd0, eng_wr[e]) || ov(slot_rd1, eng_wr[e])))
        hazard = 1'b1;
    end
  end

  wire rob_full = (rob_cnt == 3'(ROB));
  wire issue = slot_valid && !rob_full &&
               (slot_eng == ENG_NONE || (!eng_busy[slot_eng] && !hazard));
  wire retire = (rob_cnt != 0) && rob_done[rob_head] && cpl_wready;

  assign cmdq_rready = (fstate == F_IDLE) && !slot_valid;
  wire ev_fetch      = cmdq_rvalid && cmdq_rready;
  assign cpl_wvalid  = retire;
  assign cpl_wdata   = '{cmd_id: rob_id[rob_head], token: rob_token[rob_head],
                         err: (rob_err[rob_head] != ERR_NONE), macs: perf_macs,
                         dma_bytes: perf_dma_bytes, conflicts: perf_conflicts};

  wire [3:0] eng_done = {ve_done, te_done, dma_done, 1'b0};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      fstate <= F_IDLE; cur <= '0; cur_desc_err <= 1'b0;
      desc_start <= 1'b0; desc_addr <= '0;
      slot_valid <= 1'b0; slot_cmd <= '0; slot_err <= ERR_NONE; slot_eng <= ENG_NONE;
      slot_rd0 <= '0; slot_rd1 <= '0; slot_wr <= '0;
      issue_cmd <= '0;
      dma_start <= 1'b0; dma_out <= 1'b0; dma_dram <= '0; dma_sram <= '0; dma_len <= '0;
      te_start <= 1'b0; ve_start <= 1'b0;
      eng_busy <= '0;
      for (int e = 0; e < 4; e++) begin
        eng_rd0[e] <= '0; eng_rd1[e] <= '0; eng_wr[e] <= '0; eng_rob[e] <= '0;
      end
      for (int i = 0; i < int'(ROB); i++) begin
        rob_id[i] <= '0; rob_token[i] <= '0; rob_err[i] <= ERR_NONE;
      end
      rob_done <= '0; rob_head <= '0; rob_tail <= '0; rob_cnt <= '0;
    end else begin
      desc_start <= 1'b0;
      dma_start  <= 1'b0;
      te_start   <= 1'b0;
      ve_start   <= 1'b0;

      // ── fetch / decode ──
      unique case (fstate)
        F_IDLE: if (ev_fetch) begin
          cur        <= '0;
          cur.cmd_id <= cmdq_rdata.cmd_id;
          if (cmdq_rdata.desc_addr[1:0] != 2'd0) begin
            // No fetch from a misaligned descriptor: the command fails with token 0.
            slot_valid <= 1'b1;
            slot_cmd   <= '{cmd_id: cmdq_rdata.cmd_id, default: '0};
            slot_err   <= ERR_ALIGN;
            slot_eng   <= ENG_NONE;
            slot_rd0 <= '0; slot_rd1 <= '0; slot_wr <= '0;
          end else begin
            desc_start <= 1'b1;
            desc_addr  <= cmdq_rdata.desc_addr;
            fstate     <= F_WAIT;
          end
        end
        F_WAIT: if (desc_done) begin
          cur.opcode <= desc_words[0][7:0];
          cur.phase  <= desc_words[0][15:8];
          cur.layer  <= desc_words[0][23:16];
          cur.head   <= desc_words[0][31:24];
          cur.token  <= desc_words[1];
          cur.src0   <= desc_words[2];
          cur.src1   <= desc_words[3];
          cur.dst    <= desc_words[4];
          cur.m      <= desc_words[5][15:0];
          cur.n      <= desc_words[5][31:16];
          cur.k      <= desc_words[6][15:0];
          cur.flags  <= desc_words[6][31:16];
          cur_desc_err <= desc_err;
          fstate     <= F_DECODE;
        end
        F_DECODE: begin
          slot_valid <= 1'b1;
          slot_cmd   <= cur;
          slot_err   <= dec_err;
          slot_eng   <= dec_eng;
          slot_rd0   <= dec_rd0;
          slot_rd1   <= dec_rd1;
          slot_wr    <= dec_wr;
          fstate     <= F_IDLE;
        end
        default: fstate <= F_IDLE;
      endcase

      // ── engine completions ──
      for (int e = 1; e < 4; e++) begin
        if (eng_done[e]) begin
          eng_busy[e] <= 1'b0;
          rob_done[eng_rob[e]] <= 1'b1;
          if (e == int'(ENG_DMA) && dma_err) rob_err[eng_rob[e]] <= ERR_DMA_BUS;
        end
      end

      // ── issue ──
      if (issue) begin
        slot_valid <= 1'b0;
        rob_id[rob_tail]    <= slot_cmd.cmd_id;
        rob_token[rob_tail] <= slot_cmd.token;
        rob_err[rob_tail]   <= slot_err;
        rob_done[rob_tail]  <= (slot_eng == ENG_NONE);
        rob_tail <= rob_tail + 2'd1;
        if (slot_eng != ENG_NONE) begin
          eng_busy[slot_eng] <= 1'b1;
          eng_rob[slot_eng]  <= rob_tail;
          eng_rd0[slot_eng]  <= slot_rd0;
          eng_rd1[slot_eng]  <= slot_rd1;
          eng_wr[slot_eng]   <= slot_wr;
          issue_cmd <= slot_cmd;
        end
        unique case (slot_eng)
          ENG_DMA: begin
            dma_start <= 1'b1;
            dma_out   <= (slot_cmd.opcode == NPU_OP_DMA_OUT);
            dma_dram  <= (slot_cmd.opcode == NPU_OP_DMA_OUT) ? slot_cmd.dst : slot_cmd.src0;
            dma_sram  <= SRAM_AW'(((slot_cmd.opcode == NPU_OP_DMA_OUT) ? slot_cmd.src0
                                                                     : slot_cmd.dst) >> 2);
            dma_len   <= 32'(slot_cmd.m) * 32'(slot_cmd.n);
          end
          ENG_TE:  te_start <= 1'b1;
          ENG_VE:  ve_start <= 1'b1;
          default: ;
        endcase
      end

      // ── retire ──
      if (retire) begin
        rob_head <= rob_head + 2'd1;
        rob_done[rob_head] <= 1'b0;
      end
      rob_cnt <= rob_cnt + (issue ? 3'd1 : 3'd0) - (retire ? 3'd1 : 3'd0);
    end
  end

`ifdef USCOPE_TRACE
  // ── tracing (rtl/npu/README.md "Tracing"): the command's life and the descriptor fetch.
  // CMD_ENQUEUE when the decoded command enters the issue stage (that is when its type, token
  // and phase are known), CMD_START when it issues to an engine, CMD_END when it retires.
  chandle tr_w, tr_npu;
  logic tr_armed;
  logic tr_fetched = 1'b0;
  logic [31:0] tr_cycle, tr_t0, tr_addr;
  always_ff @(posedge clk or negedge rst_n) tr_armed <= !rst_n ? 1'b0 : 1'b1;
  always_ff @(posedge clk) begin
    if (tr_armed && !tr_fetched) begin
      tr_w       <= uscope_pkg::uscope_handle("writer");
      tr_npu     <= uscope_pkg::uscope_handle("npu0");
      tr_fetched <= 1'b1;
    end
    tr_cycle <= tr_cycle + 32'd1;
    if (ev_fetch) tr_addr <= cmdq_rdata.desc_addr;
    if (tr_npu != null) begin
      // descriptor fetch: job 0 of the command
      if (ev_fetch && cmdq_rdata.desc_addr[1:0] == 2'd0) begin
        tr_t0 <= tr_cycle;
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_issue(tr_w, tr_npu, TRACE_NO_CTX,
            job_id(cmdq_rdata.cmd_id, 32'd0), cmdq_rdata.cmd_id, "DESC_FETCH", TRACE_ABSENT32,
            TRACE_ABSENT32));
      end
      if (fstate == F_WAIT && desc_done)
        tb_trace_pkg::check(uscope_pkg::uscope_npu_job_done(tr_w, tr_npu, TRACE_NO_CTX,
            job_id(cur.cmd_id, 32'd0), cur.cmd_id, "DESC_FETCH", tr_cycle - tr_t0));
      // a misaligned descriptor address: enqueued and failed without a fetch
      if (ev_fetch && cmdq_rdata.desc_addr[1:0] != 2'd0) begin
        tb_trace_pkg::check(uscope_pkg::uscope_npu_context(tr_w, tr_npu,
            trace_ctx(cmdq_rdata.cmd_id), 16'd0, 16'd0, 32'd0, TRACE_ABSENT32, TRACE_ABSENT32,
            TRACE_ABSENT32, TRACE_ABSENT32, TRACE_ABSENT32, "UNKNOWN"));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_cmd_enqueue(tr_w, tr_npu,
            trace_slot(cmdq_rdata.cmd_id), trace_ctx(cmdq_rdata.cmd_id), cmdq_rdata.cmd_id,
            "UNKNOWN", 8'd1, 32'd0, 64'(cmdq_rdata.desc_addr), TRACE_ABSENT32, TRACE_ABSENT32,
            "UNKNOWN"));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_error(tr_w, tr_npu, trace_ctx(cmdq_rdata.cmd_id),
            "CMDPROC", err_code(ERR_ALIGN), "descriptor address not 4-byte aligned",
            cmdq_rdata.cmd_id, TRACE_ABSENT32));
      end
      // decoded: the command's context (its LLM metadata), then the enqueue
      if (fstate == F_DECODE) begin
        tb_trace_pkg::check(uscope_pkg::uscope_npu_context(tr_w, tr_npu, trace_ctx(cur.cmd_id),
            16'd0, 16'd0, 32'd0, 32'(cur.layer), 32'(cur.layer), 32'(cur.head), TRACE_ABSENT32,
            TRACE_ABSENT32, phase_name(cur.phase)));
        tb_trace_pkg::check(uscope_pkg::uscope_npu_cmd_enqueue(tr_w, tr_npu, trace_slot(cur.cmd_id),
            trace_ctx(cur.cmd_id), cur.cmd_id, op_name(cur.opcode), 8'd1, cur.token,
            64'(tr_addr), 32'(cur.layer), 32'(cur.layer), phase_name(cur.phase)));
        if (dec_err != ERR_NONE)
          tb_trace_pkg::check(uscope_pkg::uscope_npu_error(tr_w, tr_npu, trace_ctx(cur.cmd_id),
              "CMDPROC", err_code(dec_err), err_msg(dec_err), cur.cmd_id, TRACE_ABSENT32));
      end
      if (issue)
        tb_trace_pkg::check(uscope_pkg::uscope_npu_cmd_start(tr_w, tr_npu,
            trace_slot(slot_cmd.cmd_id), trace_ctx(slot_cmd.cmd_id), slot_cmd.cmd_id));
      if (retire)
        tb_trace_pkg::check(uscope_pkg::uscope_npu_cmd_end(tr_w, tr_npu,
            trace_slot(rob_id[rob_head]), trace_ctx(rob_id[rob_head]), rob_id[rob_head],
            rob_err[rob_head] == ERR_NONE ? "OK" : "ERROR"));
    end
  end
`endif
endmodule
