// rv32i_core: an in-order RV32I core with the classic five stages.
//
//   F  fetch      the instruction RAM is read with the next PC; F holds (pc, instruction)
//   D  decode     decode, register-file read (with a write-first bypass from W), hazard check
//   E  execute    ALU, branch/jump resolution, load/store address; loads and stores are issued
//                 on the bus from here so that the data comes back while the instruction is in M
//   M  memory     waits for the bus response; aligns and extends load data
//   W  writeback  register-file write; the instruction retires at the end of W
//
// Each stage is one register (f_*, d_*, e_*, m_*, w_*): an instruction is "in" a stage while it
// sits in that stage's register, and it enters the stage on the edge that loads the register.
// The trace hooks use exactly these edges, so a stage bar in the trace is the cycles spent there.
//
// Hazards:
//   - forwarding into E from M (ALU results: "EX->EX") and from W (any result: "MEM->EX");
//   - load-use: a load in E whose rd a D instruction reads stalls F and D for one cycle and puts
//     a bubble into E (its data is then forwarded from W);
//   - control: no prediction beyond "not taken"; a taken branch or a jump redirects fetch when it
//     leaves E and squashes the two younger instructions in F and D (2-cycle penalty);
//   - M waits for the bus response (valid/ready) and freezes F, D, E meanwhile. W always drains.
//
// ECALL/EBREAK, illegal instructions and misaligned accesses "trap": the instruction squashes
// everything younger, fetch stops, and when it retires `halted` rises with `trap_cause`. There
// are no trap handlers: in this testbench a trap ends the simulation (ECALL = normal end).
//
// Zicsr (minimal, read-only): cycle/cycleh, time/timeh (= cycle), instret/instreth, and three
// hpmcounters so firmware can read the core's own stall/flush counts:
//   hpmcounter3 = pipeline flushes (taken branches and jumps), hpmcounter4 = load-use stalls,
//   hpmcounter5 = cycles M waited on the bus. Writing any of them is an illegal instruction.
//
// Tracing (USCOPE_TRACE defined): the always_ff blocks call the cpu protocol helpers of
// uscope_pkg with a rolling entity id (< NUM_EIDS) that travels down the pipe with the
// instruction. Every hook is behind `tr != null`, so with +notrace nothing is called.
module rv32i_core
  import tb_pkg::*;
#(
  parameter logic [31:0] RESET_PC = 32'h0000_0000,
  parameter int          NUM_EIDS = 16  // trace entity slots; > instructions in flight (5)
) (
  input  logic        clk,
  input  logic        rst_n,

  // Instruction port: a synchronous-read RAM addressed with the next PC; imem_rdata is the word
  // at imem_addr, registered into F on the edge (one cycle, no wait states).
  output logic [31:0] imem_addr,
  input  logic [31:0] imem_rdata,

  // Data port: bus master 0 (README "Bus").
  output logic        dreq_valid,
  input  logic        dreq_ready,
  output bus_req_t    dreq,
  input  logic        drsp_valid,
  output logic        drsp_ready,
  /* verilator lint_off UNUSEDSIGNAL */
  input  bus_rsp_t    drsp,            // id unused: the core has one request outstanding at most
  /* verilator lint_on UNUSEDSIGNAL */

  // Status for the harness.
  output logic        halted,
  output logic [3:0]  trap_cause,   // TRAP_* below; valid when halted
  output logic [31:0] trap_pc,      // pc of the trapping instruction (or of the bus error)

  // The core's own performance counters (the same values the CSRs return).
  output logic [63:0] perf_cycles,
  output logic [63:0] perf_instret,
  output logic [63:0] perf_flushes,       // redirects (taken branches, jumps)
  output logic [63:0] perf_squashed,      // instructions squashed by redirects and traps
  output logic [63:0] perf_load_use,      // load-use bubbles
  output logic [63:0] perf_mem_wait       // cycles M waited for a bus response
);

  localparam int EIDW = $clog2(NUM_EIDS);

  // Trap causes (also printed by sim_main).
  localparam logic [3:0] TRAP_NONE = 4'd0, TRAP_ECALL = 4'd1, TRAP_EBREAK = 4'd2,
                         TRAP_ILLEGAL = 4'd3, TRAP_MISALIGNED = 4'd4, TRAP_BUS_ERROR = 4'd5;

  // RV32I opcodes (inst[6:0]).
  localparam logic [6:0] OP_LUI = 7'b0110111, OP_AUIPC = 7'b0010111, OP_JAL = 7'b1101111,
                         OP_JALR = 7'b1100111, OP_BRANCH = 7'b1100011, OP_LOAD = 7'b0000011,
                         OP_STORE = 7'b0100011, OP_IMM = 7'b0010011, OP_REG = 7'b0110011,
                         OP_FENCE = 7'b0001111, OP_SYSTEM = 7'b1110011;

  typedef enum logic [3:0] {
    ALU_ADD, ALU_SUB, ALU_SLL, ALU_SLT, ALU_SLTU, ALU_XOR, ALU_SRL, ALU_SRA, ALU_OR, ALU_AND
  } alu_op_e;

  // Where E's result comes from.
  typedef enum logic [1:0] { RES_ALU, RES_LINK, RES_CSR } res_sel_e;

  // ── Pipeline registers ────────────────────────────────────────────────────────────────
  // F
  logic            f_valid;
  logic [31:0]     f_pc, f_inst;
  logic [EIDW-1:0] f_eid;
  // D
  logic            d_valid;
  logic [31:0]     d_pc, d_inst;
  logic [EIDW-1:0] d_eid;
  // E: decoded control plus operands (kept current while E waits, see e_hold)
  logic            e_valid;
  logic [31:0]     e_pc, e_imm, e_rs1_val, e_rs2_val;
  logic [EIDW-1:0] e_eid;
  logic [4:0]      e_rd, e_rs1, e_rs2;
  logic            e_wb_en;
  alu_op_e         e_alu_op;
  logic            e_a_pc, e_a_zero, e_b_imm;   // ALU operand A = pc / 0, B = imm
  res_sel_e        e_res_sel;
  logic            e_is_branch, e_is_jal, e_is_jalr, e_is_load, e_is_store;
  logic [2:0]      e_funct3;
  logic [11:0]     e_csr;
  logic [3:0]      e_trap;                       // TRAP_* decided in D (ecall, ebreak, illegal)
  // M
  logic            m_valid;
  logic [31:0]     m_pc, m_result;
  logic [EIDW-1:0] m_eid;
  logic [4:0]      m_rd;
  logic            m_wb_en, m_is_load, m_is_mem;
  logic [2:0]      m_funct3;
  logic [1:0]      m_addr_lo;
  logic [3:0]      m_trap;
  // W
  logic            w_valid;
  logic [31:0]     w_pc, w_result;
  logic [EIDW-1:0] w_eid;
  logic [4:0]      w_rd;
  logic            w_wb_en;
  logic [3:0]      w_trap;

  logic            fetch_stopped;  // set when a trap leaves E; nothing more is fetched
  logic [EIDW-1:0] eid_next;       // entity id of the next fetched instruction

  logic [31:0]     rf [32];        // x0 is never written, so it reads 0

  // ── D: decode ─────────────────────────────────────────────────────────────────────────
  logic [6:0]  d_opcode;
  logic [2:0]  d_funct3;
  logic [6:0]  d_funct7;
  logic [4:0]  d_rd, d_rs1, d_rs2;
  logic [31:0] d_imm_i, d_imm_s, d_imm_b, d_imm_u, d_imm_j;

  assign d_opcode = d_inst[6:0];
  assign d_funct3 = d_inst[14:12];
  assign d_funct7 = d_inst[31:25];
  assign d_rd     = d_inst[11:7];
  assign d_rs1    = d_inst[19:15];
  assign d_rs2    = d_inst[24:20];
  assign d_imm_i  = {{20{d_inst[31]}}, d_inst[31:20]};
  assign d_imm_s  = {{20{d_inst[31]}}, d_inst[31:25], d_inst[11:7]};
  assign d_imm_b  = {{19{d_inst[31]}}, d_inst[31], d_inst[7], d_inst[30:25], d_inst[11:8], 1'b0};
  assign d_imm_u  = {d_inst[31:12], 12'b0};
  assign d_imm_j  = {{11{d_inst[31]}}, d_inst[31], d_inst[19:12], d_inst[20], d_inst[30:21], 1'b0};

  // Decoded fields, as they will be registered into E.
  logic [31:0] dc_imm;
  logic        dc_uses_rs1, dc_uses_rs2, dc_wb_en;
  alu_op_e     dc_alu_op;
  logic        dc_a_pc, dc_a_zero, dc_b_imm;
  res_sel_e    dc_res_sel;
  logic        dc_is_branch, dc_is_jal, dc_is_jalr, dc_is_load, dc_is_store;
  logic [3:0]  dc_trap;

  // Read-only CSRs this core has (hpmcounter3..5 hold the core's own stall/flush counts).
  function automatic logic csr_exists(input logic [11:0] a);
    case (a)
      12'hC00, 12'hC01, 12'hC02, 12'hC03, 12'hC04, 12'hC05,
      12'hC80, 12'hC81, 12'hC82, 12'hC83, 12'hC84, 12'hC85: return 1'b1;
      default: return 1'b0;
    endcase
  endfunction

  always_comb begin
    dc_imm       = d_imm_i;
    dc_uses_rs1  = 1'b0;
    dc_uses_rs2  = 1'b0;
    dc_wb_en     = 1'b0;
    dc_alu_op    = ALU_ADD;
    dc_a_pc      = 1'b0;
    dc_a_zero    = 1'b0;
    dc_b_imm     = 1'b1;
    dc_res_sel   = RES_ALU;
    dc_is_branch = 1'b0;
    dc_is_jal    = 1'b0;
    dc_is_jalr   = 1'b0;
    dc_is_load   = 1'b0;
    dc_is_store  = 1'b0;
    dc_trap      = TRAP_NONE;
    unique case (d_opcode)
      OP_LUI: begin
        dc_imm = d_imm_u; dc_a_zero = 1'b1; dc_wb_en = 1'b1;
      end
      OP_AUIPC: begin
        dc_imm = d_imm_u; dc_a_pc = 1'b1; dc_wb_en = 1'b1;
      end
      OP_JAL: begin
        dc_imm = d_imm_j; dc_a_pc = 1'b1; dc_is_jal = 1'b1; dc_wb_en = 1'b1;
        dc_res_sel = RES_LINK;
      end
      OP_JALR: begin
        dc_uses_rs1 = 1'b1; dc_is_jalr = 1'b1; dc_wb_en = 1'b1; dc_res_sel = RES_LINK;
        if (d_funct3 != 3'b000) dc_trap = TRAP_ILLEGAL;
      end
      OP_BRANCH: begin
        dc_imm = d_imm_b; dc_uses_rs1 = 1'b1; dc_uses_rs2 = 1'b1; dc_is_branch = 1'b1;
        dc_a_pc = 1'b1;  // the ALU computes the target, a separate comparator the condition
        if (d_funct3 == 3'b010 || d_funct3 == 3'b011) dc_trap = TRAP_ILLEGAL;
      end
      OP_LOAD: begin
        dc_uses_rs1 = 1'b1; dc_is_load = 1'b1; dc_wb_en = 1'b1;
        if (d_funct3 == 3'b011 || d_funct3 == 3'b110 || d_funct3 == 3'b111)
          dc_trap = TRAP_ILLEGAL;
      end
      OP_STORE: begin
        dc_imm = d_imm_s; dc_uses_rs1 = 1'b1; dc_uses_rs2 = 1'b1; dc_is_store = 1'b1;
        if (d_funct3[2] || d_funct3 == 3'b011) dc_trap = TRAP_ILLEGAL;
      end
      OP_IMM: begin
        dc_uses_rs1 = 1'b1; dc_wb_en = 1'b1;
        unique case (d_funct3)
          3'b000: dc_alu_op = ALU_ADD;
          3'b010: dc_alu_op = ALU_SLT;
          3'b011: dc_alu_op = ALU_SLTU;
          3'b100: dc_alu_op = ALU_XOR;
          3'b110: dc_alu_op = ALU_OR;
          3'b111: dc_alu_op = ALU_AND;
          3'b001: begin
            dc_alu_op = ALU_SLL;
            if (d_funct7 != 7'b0000000) dc_trap = TRAP_ILLEGAL;
          end
          3'b101: begin
            dc_alu_op = d_funct7[5] ? ALU_SRA : ALU_SRL;
            if (d_funct7 != 7'b0000000 && d_funct7 != 7'b0100000) dc_trap = TRAP_ILLEGAL;
          end
          default: ;
        endcase
      end
      OP_REG: begin
        dc_uses_rs1 = 1'b1; dc_uses_rs2 = 1'b1; dc_wb_en = 1'b1; dc_b_imm = 1'b0;
        unique case (d_funct3)
          3'b000: dc_alu_op = d_funct7[5] ? ALU_SUB : ALU_ADD;
          3'b001: dc_alu_op = ALU_SLL;
          3'b010: dc_alu_op = ALU_SLT;
          3'b011: dc_alu_op = ALU_SLTU;
          3'b100: dc_alu_op = ALU_XOR;
          3'b101: dc_alu_op = d_funct7[5] ? ALU_SRA : ALU_SRL;
          3'b110: dc_alu_op = ALU_OR;
          3'b111: dc_alu_op = ALU_AND;
          default: ;
        endcase
        // Only SUB and SRA have funct7 = 0100000; everything else (the M extension too) traps.
        if (!(d_funct7 == 7'b0000000 ||
              (d_funct7 == 7'b0100000 && (d_funct3 == 3'b000 || d_funct3 == 3'b101))))
          dc_trap = TRAP_ILLEGAL;
      end
      OP_FENCE: ;  // FENCE and FENCE.I: the core is in order and has no caches, so a no-op
      OP_SYSTEM: begin
        if (d_funct3 == 3'b000) begin
          if (d_inst[31:7] == 25'h0)                 dc_trap = TRAP_ECALL;
          else if (d_inst[31:7] == 25'h0002000)      dc_trap = TRAP_EBREAK;
          else                                       dc_trap = TRAP_ILLEGAL;  // mret, wfi, ...
        end else if (d_funct3 == 3'b100) begin
          dc_trap = TRAP_ILLEGAL;
        end else begin
          // CSRRW/S/C[I]: all our CSRs are read-only. CSRRS/C with rs1 (or uimm) = 0 do not
          // write; CSRRW always writes; anything that writes a read-only CSR is illegal.
          dc_wb_en = 1'b1; dc_res_sel = RES_CSR;
          if (!csr_exists(d_inst[31:20]) || d_funct3[1:0] == 2'b01 || d_rs1 != 5'd0)
            dc_trap = TRAP_ILLEGAL;
        end
      end
      default: dc_trap = TRAP_ILLEGAL;
    endcase
    if (dc_trap != TRAP_NONE) begin
      // A trapping instruction has no architectural effect besides ending the run.
      dc_wb_en = 1'b0; dc_is_load = 1'b0; dc_is_store = 1'b0;
      dc_is_branch = 1'b0; dc_is_jal = 1'b0; dc_is_jalr = 1'b0;
    end
  end

  // Register read with a write-first bypass: W writes at the edge that ends this cycle, so a
  // reader in D in the same cycle takes W's value directly.
  logic w_writes;
  assign w_writes = w_valid && w_wb_en && (w_rd != 5'd0);

  logic [31:0] d_rs1_val, d_rs2_val;
  assign d_rs1_val = (d_rs1 == 5'd0) ? 32'd0 : (w_writes && w_rd == d_rs1) ? w_result : rf[d_rs1];
  assign d_rs2_val = (d_rs2 == 5'd0) ? 32'd0 : (w_writes && w_rd == d_rs2) ? w_result : rf[d_rs2];

  // ── E: forwarding, ALU, branches, address generation ──────────────────────────────────
  // M's result is forwardable only when M holds no load: a load in M has its data in flight,
  // and the load-use stall guarantees that no consumer is in E at that time.
  logic m_fwd_ok;
  assign m_fwd_ok = m_valid && m_wb_en && !m_is_load && (m_rd != 5'd0);

  logic [31:0] fwd_a, fwd_b;
  always_comb begin
    fwd_a = e_rs1_val;
    if (m_fwd_ok && m_rd == e_rs1)                       fwd_a = m_result;
    else if (w_writes && w_rd == e_rs1 && e_rs1 != 5'd0) fwd_a = w_result;
    fwd_b = e_rs2_val;
    if (m_fwd_ok && m_rd == e_rs2)                       fwd_b = m_result;
    else if (w_writes && w_rd == e_rs2 && e_rs2 != 5'd0) fwd_b = w_result;
  end

  logic [31:0] alu_a, alu_b, alu_out;
  assign alu_a = e_a_zero ? 32'd0 : e_a_pc ? e_pc : fwd_a;
  assign alu_b = e_b_imm ? e_imm : fwd_b;

  always_comb begin
    unique case (e_alu_op)
      ALU_ADD:  alu_out = alu_a + alu_b;
      ALU_SUB:  alu_out = alu_a - alu_b;
      ALU_SLL:  alu_out = alu_a << alu_b[4:0];
      ALU_SLT:  alu_out = {31'd0, $signed(alu_a) < $signed(alu_b)};
      ALU_SLTU: alu_out = {31'd0, alu_a < alu_b};
      ALU_XOR:  alu_out = alu_a ^ alu_b;
      ALU_SRL:  alu_out = alu_a >> alu_b[4:0];
      ALU_SRA:  alu_out = $unsigned($signed(alu_a) >>> alu_b[4:0]);
      ALU_OR:   alu_out = alu_a | alu_b;
      ALU_AND:  alu_out = alu_a & alu_b;
      default:  alu_out = 32'd0;
    endcase
  end

  // Branch condition on the forwarded operands; the target is pc + imm from the ALU.
  logic br_cond;
  always_comb begin
    unique case (e_funct3)
      3'b000:  br_cond = (fwd_a == fwd_b);
      3'b001:  br_cond = (fwd_a != fwd_b);
      3'b100:  br_cond = ($signed(fwd_a) < $signed(fwd_b));
      3'b101:  br_cond = ($signed(fwd_a) >= $signed(fwd_b));
      3'b110:  br_cond = (fwd_a < fwd_b);
      3'b111:  br_cond = (fwd_a >= fwd_b);
      default: br_cond = 1'b0;
    endcase
  end

  logic        e_taken;
  logic [31:0] e_target, e_mem_addr, e_link;
  assign e_taken    = e_is_jal || e_is_jalr || (e_is_branch && br_cond);
  assign e_mem_addr = fwd_a + e_imm;                 // loads, stores and JALR share this adder
  assign e_target   = e_is_jalr ? {e_mem_addr[31:1], 1'b0} : alu_out;
  assign e_link     = e_pc + 32'd4;

  // Misaligned loads/stores trap (RV32I lets the core choose; the firmware never does them).
  logic e_misaligned;
  always_comb begin
    unique case (e_funct3[1:0])
      2'b00:   e_misaligned = 1'b0;
      2'b01:   e_misaligned = e_mem_addr[0];
      default: e_misaligned = (e_mem_addr[1:0] != 2'b00);
    endcase
    if (!(e_is_load || e_is_store)) e_misaligned = 1'b0;
  end

  logic [3:0] e_trap_eff;
  assign e_trap_eff = (e_trap != TRAP_NONE) ? e_trap : e_misaligned ? TRAP_MISALIGNED : TRAP_NONE;

  // CSR values. instret counts the older instructions still in M and W too: they will retire
  // before this one, so the value is exactly "instructions retired before this CSR read".
  logic [63:0] instret_now;
  assign instret_now = perf_instret + {63'd0, m_valid} + {63'd0, w_valid};

  logic [31:0] csr_val;
  always_comb begin
    unique case (e_csr)
      12'hC00, 12'hC01: csr_val = perf_cycles[31:0];
      12'hC80, 12'hC81: csr_val = perf_cycles[63:32];
      12'hC02:          csr_val = instret_now[31:0];
      12'hC82:          csr_val = instret_now[63:32];
      12'hC03:          csr_val = perf_flushes[31:0];
      12'hC83:          csr_val = perf_flushes[63:32];
      12'hC04:          csr_val = perf_load_use[31:0];
      12'hC84:          csr_val = perf_load_use[63:32];
      12'hC05:          csr_val = perf_mem_wait[31:0];
      12'hC85:          csr_val = perf_mem_wait[63:32];
      default:          csr_val = 32'd0;
    endcase
  end

  logic [31:0] e_result;
  always_comb begin
    unique case (e_res_sel)
      RES_LINK: e_result = e_link;
      RES_CSR:  e_result = csr_val;
      default:  e_result = alu_out;
    endcase
  end

  // Store data lanes and byte enables.
  logic [3:0]  st_be;
  logic [31:0] st_data;
  always_comb begin
    unique case (e_funct3[1:0])
      2'b00:   begin st_be = 4'b0001 << e_mem_addr[1:0]; st_data = {4{fwd_b[7:0]}};  end
      2'b01:   begin st_be = 4'b0011 << e_mem_addr[1:0]; st_data = {2{fwd_b[15:0]}}; end
      default: begin st_be = 4'b1111;                    st_data = fwd_b;           end
    endcase
  end

  // ── Pipeline control ──────────────────────────────────────────────────────────────────
  logic m_is_busy, m_adv, e_mem_req, e_adv, load_use, d_adv, f_adv, squash, redirect, e_trapping;

  // M waits for its response; W always drains, so M moves whenever it is not waiting.
  assign m_is_busy  = m_valid && m_is_mem && !drsp_valid;
  assign m_adv      = !m_is_busy && !halted;
  assign e_trapping = e_valid && (e_trap_eff != TRAP_NONE);
  // E needs the bus for a load/store; the request goes out only when M can take E next edge,
  // so a request once raised stays up until accepted (the valid/ready rule).
  assign e_mem_req  = e_valid && (e_is_load || e_is_store) && !e_trapping;
  assign dreq_valid = e_mem_req && m_adv;
  assign e_adv      = m_adv && (!e_mem_req || dreq_ready);
  // Load-use: the load's data arrives while it is in M, too late for E; one bubble, then W
  // forwards it.
  assign load_use   = e_valid && e_is_load && (e_rd != 5'd0) && d_valid &&
                      ((dc_uses_rs1 && d_rs1 == e_rd) || (dc_uses_rs2 && d_rs2 == e_rd));
  assign redirect   = e_valid && e_adv && e_taken && !e_trapping;
  assign squash     = e_valid && e_adv && (e_taken || e_trapping);
  assign d_adv      = e_adv && !load_use;
  assign f_adv      = d_adv;

  // Fetch: the next PC addresses the instruction RAM; F registers the word.
  logic f_load;
  assign f_load    = !fetch_stopped && !halted && !(e_trapping && e_adv) &&
                     (redirect || !f_valid || f_adv);
  assign imem_addr = redirect ? e_target : f_valid ? f_pc + 32'd4 : f_pc;

  assign dreq.addr  = {e_mem_addr[31:2], 2'b00};
  assign dreq.we    = e_is_store;
  assign dreq.wdata = st_data;
  assign dreq.be    = e_is_store ? st_be : 4'b1111;
  assign dreq.id    = 4'd0;
  assign drsp_ready = m_valid && m_is_mem;

  // Load data alignment and extension in M, on the response.
  logic [31:0] ld_shifted, ld_data;
  assign ld_shifted = drsp.rdata >> {m_addr_lo, 3'b000};
  always_comb begin
    unique case (m_funct3)
      3'b000:  ld_data = {{24{ld_shifted[7]}}, ld_shifted[7:0]};
      3'b001:  ld_data = {{16{ld_shifted[15]}}, ld_shifted[15:0]};
      3'b100:  ld_data = {24'd0, ld_shifted[7:0]};
      3'b101:  ld_data = {16'd0, ld_shifted[15:0]};
      default: ld_data = ld_shifted;
    endcase
  end

  // ── Sequential state ──────────────────────────────────────────────────────────────────
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      f_valid <= 1'b0; f_pc <= RESET_PC; f_inst <= 32'd0; f_eid <= '0;
      d_valid <= 1'b0; d_pc <= 32'd0; d_inst <= 32'd0; d_eid <= '0;
      e_valid <= 1'b0;
      m_valid <= 1'b0;
      w_valid <= 1'b0;
      fetch_stopped <= 1'b0;
      eid_next <= '0;
    end else begin
      // F
      if (f_load) begin
        f_valid  <= 1'b1;
        f_pc     <= imem_addr;
        f_inst   <= imem_rdata;
        f_eid    <= eid_next;
        eid_next <= eid_next + 1'b1;
      end else if (squash) begin
        f_valid <= 1'b0;
      end
      if (e_trapping && e_adv) fetch_stopped <= 1'b1;

      // D
      if (squash)             d_valid <= 1'b0;
      else if (d_adv) begin
        d_valid <= f_valid;
        d_pc    <= f_pc;
        d_inst  <= f_inst;
        d_eid   <= f_eid;
      end

      // E
      if (e_adv) begin
        e_valid <= d_valid && !squash && !load_use;
      end else begin
        // E waits (M busy or bus not ready): keep its operands current, because the forwarding
        // source in W leaves the pipe at this edge.
        e_rs1_val <= fwd_a;
        e_rs2_val <= fwd_b;
      end
      if (d_adv) begin
        e_pc        <= d_pc;
        e_eid       <= d_eid;
        e_imm       <= dc_imm;
        e_rd        <= d_rd;
        e_rs1       <= dc_uses_rs1 ? d_rs1 : 5'd0;
        e_rs2       <= dc_uses_rs2 ? d_rs2 : 5'd0;
        e_rs1_val   <= dc_uses_rs1 ? d_rs1_val : 32'd0;
        e_rs2_val   <= dc_uses_rs2 ? d_rs2_val : 32'd0;
        e_wb_en     <= dc_wb_en && (d_rd != 5'd0);
        e_alu_op    <= dc_alu_op;
        e_a_pc      <= dc_a_pc;
        e_a_zero    <= dc_a_zero;
        e_b_imm     <= dc_b_imm;
        e_res_sel   <= dc_res_sel;
        e_is_branch <= dc_is_branch;
        e_is_jal    <= dc_is_jal;
        e_is_jalr   <= dc_is_jalr;
        e_is_load   <= dc_is_load;
        e_is_store  <= dc_is_store;
        e_funct3    <= d_funct3;
        e_csr       <= d_inst[31:20];
        e_trap      <= dc_trap;
      end

      // M
      if (m_adv) begin
        m_valid   <= e_valid && e_adv;
        m_pc      <= e_pc;
        m_eid     <= e_eid;
        m_rd      <= e_rd;
        m_wb_en   <= e_wb_en && !e_trapping;
        m_is_load <= e_is_load && !e_trapping;
        m_is_mem  <= e_mem_req;
        m_funct3  <= e_funct3;
        m_addr_lo <= e_mem_addr[1:0];
        m_result  <= e_result;
        m_trap    <= e_trap_eff;
      end

      // W: always takes M's instruction (or a bubble when M waits).
      w_valid  <= m_valid && m_adv;
      w_pc     <= m_pc;
      w_eid    <= m_eid;
      w_rd     <= m_rd;
      w_wb_en  <= m_wb_en;
      w_result <= m_is_load ? ld_data : m_result;
      w_trap   <= m_trap;
      if (halted) w_valid <= 1'b0;
    end
  end

  // Register file: written at the end of W.
  always_ff @(posedge clk) begin
    if (w_writes) rf[w_rd] <= w_result;
  end

  // ── Halt, counters ────────────────────────────────────────────────────────────────────
  logic retire;
  assign retire = w_valid;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      halted        <= 1'b0;
      trap_cause    <= TRAP_NONE;
      trap_pc       <= 32'd0;
      perf_cycles   <= 64'd0;
      perf_instret  <= 64'd0;
      perf_flushes  <= 64'd0;
      perf_squashed <= 64'd0;
      perf_load_use <= 64'd0;
      perf_mem_wait <= 64'd0;
    end else if (!halted) begin
      perf_cycles <= perf_cycles + 64'd1;
      if (retire) perf_instret <= perf_instret + 64'd1;
      if (redirect) perf_flushes <= perf_flushes + 64'd1;
      if (squash) perf_squashed <= perf_squashed + {63'd0, f_valid} + {63'd0, d_valid};
      if (load_use && e_adv) perf_load_use <= perf_load_use + 64'd1;
      if (m_is_busy) perf_mem_wait <= perf_mem_wait + 64'd1;
      // A trapping instruction halts the core when it retires. A bus error (an unmapped
      // address) halts at once: there is no precise way to continue.
      if (retire && w_trap != TRAP_NONE) begin
        halted     <= 1'b1;
        trap_cause <= w_trap;
        trap_pc    <= w_pc;
      end else if (m_valid && m_is_mem && drsp_valid && drsp.err) begin
        halted     <= 1'b1;
        trap_cause <= TRAP_BUS_ERROR;
        trap_pc    <= m_pc;
      end
    end
  end

  // ── Tracing (README "Tracing handles") ────────────────────────────────────────────────
  // A separate always_ff that sees the same pre-edge values as the pipeline above and reports
  // what this edge does, oldest instruction first: retire from W, M->W, E->M, the squash of
  // F and D, D->E, F->D, then the new fetch into F. Entity ids (the catalog slots) are the
  // rolling eid of each instruction: 16 slots against at most 5 in flight, so a slot is never
  // reused while its previous occupant can still be in the pipe.
`ifdef USCOPE_TRACE
  // Stages (sim_main.cpp's order); fetch, stage 0, is entered by uscope_cpu_fetch itself.
  localparam byte unsigned ST_DECODE = 8'd1, ST_EXECUTE = 8'd2, ST_MEMORY = 8'd3,
                           ST_WRITEBACK = 8'd4;
  // Stall reasons, in the order sim_main.cpp declares them.
  localparam byte unsigned STALL_LOAD_USE = 8'd0, STALL_MEM_WAIT = 8'd1;
  // Extra counters, in the order sim_main.cpp declares them (0 is committed_insns).
  localparam shortint unsigned CNT_FLUSHES = 16'd1, CNT_SQUASHED = 16'd2,
                               CNT_LOAD_USE = 16'd3, CNT_MEM_WAIT = 16'd4;

  chandle tr_w, tr_cpu;  // fetched during reset; null (no call at all) with +notrace

  // Which forwarding path each E operand uses, for dependency arrows.
  logic fwd_a_m, fwd_a_w, fwd_b_m, fwd_b_w;
  assign fwd_a_m = m_fwd_ok && m_rd == e_rs1;
  assign fwd_a_w = !fwd_a_m && w_writes && w_rd == e_rs1 && e_rs1 != 5'd0;
  assign fwd_b_m = m_fwd_ok && m_rd == e_rs2;
  assign fwd_b_w = !fwd_b_m && w_writes && w_rd == e_rs2 && e_rs2 != 5'd0;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      tr_w   <= uscope_pkg::uscope_handle("writer");
      tr_cpu <= uscope_pkg::uscope_handle("core0");
    end else if (tr_w != null && !halted) begin
      if (w_valid) tb_trace_pkg::check(uscope_pkg::uscope_cpu_retire(tr_w, tr_cpu, 32'(w_eid)));
      if (m_valid && m_adv)
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_stage_transition(tr_w, tr_cpu, 32'(m_eid), ST_WRITEBACK));
      if (e_valid && e_adv) begin
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_stage_transition(tr_w, tr_cpu, 32'(e_eid), ST_MEMORY));
        // Read-after-write dependencies served by forwarding, one arrow per producer, recorded
        // when the consumer leaves E. (A value E picked up while it waited is not shown.)
        if (fwd_a_m || fwd_b_m)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_dependency(tr_w, tr_cpu, 32'(m_eid), 32'(e_eid), 8'd0));
        if (fwd_a_w || fwd_b_w)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_dependency(tr_w, tr_cpu, 32'(w_eid), 32'(e_eid), 8'd0));
      end
      if (squash) begin
        // Taken branches and jumps are mispredictions of the static not-taken prediction; a
        // trap squashes as an exception.
        if (d_valid)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_flush(tr_w, tr_cpu, 32'(d_eid), e_trapping ? 8'd1 : 8'd0));
        if (f_valid)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_flush(tr_w, tr_cpu, 32'(f_eid), e_trapping ? 8'd1 : 8'd0));
        if (redirect) tb_trace_pkg::check(uscope_pkg::uscope_cpu_counter_add(tr_w, tr_cpu, CNT_FLUSHES, 64'd1));
        if (f_valid || d_valid)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_counter_add(tr_w, tr_cpu, CNT_SQUASHED,
                                                   64'(f_valid) + 64'(d_valid)));
      end else begin
        if (d_valid && d_adv && !load_use)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_stage_transition(tr_w, tr_cpu, 32'(d_eid), ST_EXECUTE));
        if (f_valid && f_adv)
          tb_trace_pkg::check(uscope_pkg::uscope_cpu_stage_transition(tr_w, tr_cpu, 32'(f_eid), ST_DECODE));
      end
      if (f_load)
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_fetch(tr_w, tr_cpu, 32'(eid_next), 64'(imem_addr), imem_rdata));
      if (load_use && e_adv) begin
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_stall(tr_w, tr_cpu, STALL_LOAD_USE));
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_counter_add(tr_w, tr_cpu, CNT_LOAD_USE, 64'd1));
      end
      if (m_is_busy) begin
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_stall(tr_w, tr_cpu, STALL_MEM_WAIT));
        tb_trace_pkg::check(uscope_pkg::uscope_cpu_counter_add(tr_w, tr_cpu, CNT_MEM_WAIT, 64'd1));
      end
    end
  end
`else
  logic unused_trace;
  assign unused_trace = ^w_eid;  // only the trace hooks read W's entity id
`endif

endmodule
