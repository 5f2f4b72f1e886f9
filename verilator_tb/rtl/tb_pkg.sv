// tb_pkg: what the parts of the testbench SoC share — the bus structs, the memory map and
// the NPU's register offsets, opcodes and phases. verilator_tb/README.md is the contract;
// this file is its machine-readable half, so change both together.
package tb_pkg;
  // Shared constants: each user needs only some of them.
  /* verilator lint_off UNUSEDPARAM */

  // ── Bus (README "Bus") ──────────────────────────────────────────────────────────────
  // valid/ready travel beside these structs so that a struct is pure payload.
  typedef struct packed {
    logic [31:0] addr;
    logic        we;
    logic [31:0] wdata;
    logic [3:0]  be;     // byte enables of wdata (writes); reads always return the word
    logic [3:0]  id;     // the master's tag, echoed in the response
  } bus_req_t;

  typedef struct packed {
    logic [31:0] rdata;
    logic        err;    // unmapped address
    logic [3:0]  id;
  } bus_rsp_t;

  localparam int NUM_MASTERS = 2;
  localparam int MST_CORE = 0;  // core load/store unit
  localparam int MST_DMA  = 1;  // NPU DMA

  localparam int NUM_SLAVES = 3;
  localparam int SLV_DRAM = 0;  // data RAM
  localparam int SLV_MMIO = 1;  // testbench MMIO
  localparam int SLV_NPU  = 2;  // NPU registers

  // ── Memory map (README "Memory map") ────────────────────────────────────────────────
  localparam logic [31:0] IMEM_BASE = 32'h0000_0000;
  localparam int          IMEM_BYTES = 64 * 1024;
  localparam logic [31:0] DRAM_BASE = 32'h1000_0000;
  localparam int          DRAM_BYTES = 256 * 1024;
  localparam logic [31:0] MMIO_BASE = 32'h2000_0000;
  localparam logic [31:0] NPU_BASE  = 32'h4000_0000;

  localparam logic [7:0] MMIO_TOHOST = 8'h00;
  localparam logic [7:0] MMIO_PUTC   = 8'h04;
  localparam logic [7:0] MMIO_CYCLE  = 8'h08;

  // ── NPU registers (README "NPU registers"), offsets from NPU_BASE ───────────────────
  localparam logic [11:0] NPU_REG_ID             = 12'h000;
  localparam logic [11:0] NPU_REG_STATUS         = 12'h004;
  localparam logic [11:0] NPU_REG_CMD_PUSH       = 12'h008;
  localparam logic [11:0] NPU_REG_DONE_TOKEN     = 12'h00C;
  localparam logic [11:0] NPU_REG_IRQ_STATUS     = 12'h010;
  localparam logic [11:0] NPU_REG_IRQ_ENABLE     = 12'h014;
  localparam logic [11:0] NPU_REG_PERF_MACS_LO   = 12'h018;
  localparam logic [11:0] NPU_REG_PERF_MACS_HI   = 12'h01C;
  localparam logic [11:0] NPU_REG_PERF_DMA_BYTES = 12'h020;
  localparam logic [11:0] NPU_REG_PERF_CONFLICTS = 12'h024;
  localparam logic [31:0] NPU_ID_VALUE = 32'h4E50_5531;  // "NPU1"

  // ── NPU command descriptor (README "Command descriptor") ────────────────────────────
  localparam int NPU_DESC_WORDS = 7;

  localparam logic [7:0] NPU_OP_DMA_IN    = 8'h01;
  localparam logic [7:0] NPU_OP_DMA_OUT   = 8'h02;
  localparam logic [7:0] NPU_OP_MATMUL    = 8'h10;
  localparam logic [7:0] NPU_OP_SOFTMAX   = 8'h20;
  localparam logic [7:0] NPU_OP_LAYERNORM = 8'h21;
  localparam logic [7:0] NPU_OP_GELU      = 8'h22;

  localparam logic [7:0] NPU_PH_QKV_PROJ        = 8'd0;
  localparam logic [7:0] NPU_PH_ATTENTION_SCORE = 8'd1;
  localparam logic [7:0] NPU_PH_SOFTMAX         = 8'd2;
  localparam logic [7:0] NPU_PH_ATTENTION_APPLY = 8'd3;
  localparam logic [7:0] NPU_PH_LN1             = 8'd4;
  localparam logic [7:0] NPU_PH_MLP             = 8'd5;
  localparam logic [7:0] NPU_PH_LN2             = 8'd6;

  /* verilator lint_on UNUSEDPARAM */
endpackage
