// soc_top: the Verilator top of the testbench SoC (README): the RV32I core with its instruction
// RAM, the crossbar, the data RAM, the testbench MMIO and the NPU.
//
//   core (master 0) ──┐                 ┌── data RAM      0x1000_0000  (slave 0)
//                     ├── bus_xbar ─────┼── tb_mmio       0x2000_0000  (slave 1)
//   NPU DMA (master 1)┘                 └── NPU registers 0x4000_0000  (slave 2)
//
// Everything here runs on core_clk except the NPU's engines, which run on npu_clk; sim_main.cpp
// drives both clocks and the reset and reads the status and counter outputs below.
module soc_top
  import tb_pkg::*;
(
  input  logic        core_clk,
  input  logic        npu_clk,
  input  logic        rst_n,

  output logic        halted,
  output logic [3:0]  trap_cause,
  output logic [31:0] trap_pc,
  output logic        tohost_valid,
  output logic [31:0] tohost_code,
  output logic        npu_irq,

  output logic [63:0] perf_cycles,
  output logic [63:0] perf_instret,
  output logic [63:0] perf_flushes,
  output logic [63:0] perf_squashed,
  output logic [63:0] perf_load_use,
  output logic [63:0] perf_mem_wait,
  output logic [63:0] npu_perf_macs,
  output logic [31:0] npu_perf_dma_bytes,
  output logic [31:0] npu_perf_conflicts
);
  // ── Core and its instruction RAM ──────────────────────────────────────────────────────
  logic [31:0] imem_addr, imem_rdata;

  imem #(.BYTES(IMEM_BYTES)) u_imem (.addr(imem_addr), .rdata(imem_rdata));

  logic [NUM_MASTERS-1:0] m_req_valid, m_req_ready, m_rsp_valid, m_rsp_ready;
  bus_req_t               m_req [NUM_MASTERS];
  bus_rsp_t               m_rsp [NUM_MASTERS];

  rv32i_core #(.RESET_PC(IMEM_BASE)) u_core (
    .clk          (core_clk),
    .rst_n        (rst_n),
    .imem_addr    (imem_addr),
    .imem_rdata   (imem_rdata),
    .dreq_valid   (m_req_valid[MST_CORE]),
    .dreq_ready   (m_req_ready[MST_CORE]),
    .dreq         (m_req[MST_CORE]),
    .drsp_valid   (m_rsp_valid[MST_CORE]),
    .drsp_ready   (m_rsp_ready[MST_CORE]),
    .drsp         (m_rsp[MST_CORE]),
    .halted       (halted),
    .trap_cause   (trap_cause),
    .trap_pc      (trap_pc),
    .perf_cycles  (perf_cycles),
    .perf_instret (perf_instret),
    .perf_flushes (perf_flushes),
    .perf_squashed(perf_squashed),
    .perf_load_use(perf_load_use),
    .perf_mem_wait(perf_mem_wait)
  );

  // ── Crossbar ──────────────────────────────────────────────────────────────────────────
  logic [NUM_SLAVES-1:0] s_req_valid, s_req_ready, s_rsp_valid, s_rsp_ready;
  bus_req_t              s_req [NUM_SLAVES];
  bus_rsp_t              s_rsp [NUM_SLAVES];

  bus_xbar u_xbar (
    .clk        (core_clk),
    .rst_n      (rst_n),
    .m_req_valid(m_req_valid),
    .m_req_ready(m_req_ready),
    .m_req      (m_req),
    .m_rsp_valid(m_rsp_valid),
    .m_rsp_ready(m_rsp_ready),
    .m_rsp      (m_rsp),
    .s_req_valid(s_req_valid),
    .s_req_ready(s_req_ready),
    .s_req      (s_req),
    .s_rsp_valid(s_rsp_valid),
    .s_rsp_ready(s_rsp_ready),
    .s_rsp      (s_rsp)
  );

  // ── Slaves ────────────────────────────────────────────────────────────────────────────
  bus_ram #(.BYTES(DRAM_BYTES)) u_dram (
    .clk      (core_clk),
    .rst_n    (rst_n),
    .req_valid(s_req_valid[SLV_DRAM]),
    .req_ready(s_req_ready[SLV_DRAM]),
    .req      (s_req[SLV_DRAM]),
    .rsp_valid(s_rsp_valid[SLV_DRAM]),
    .rsp_ready(s_rsp_ready[SLV_DRAM]),
    .rsp      (s_rsp[SLV_DRAM])
  );

  tb_mmio u_mmio (
    .clk         (core_clk),
    .rst_n       (rst_n),
    .req_valid   (s_req_valid[SLV_MMIO]),
    .req_ready   (s_req_ready[SLV_MMIO]),
    .req         (s_req[SLV_MMIO]),
    .rsp_valid   (s_rsp_valid[SLV_MMIO]),
    .rsp_ready   (s_rsp_ready[SLV_MMIO]),
    .rsp         (s_rsp[SLV_MMIO]),
    .tohost_valid(tohost_valid),
    .tohost_code (tohost_code)
  );

  npu_top u_npu (
    .core_clk      (core_clk),
    .npu_clk       (npu_clk),
    .rst_n         (rst_n),
    .s_req_valid   (s_req_valid[SLV_NPU]),
    .s_req_ready   (s_req_ready[SLV_NPU]),
    .s_req         (s_req[SLV_NPU]),
    .s_rsp_valid   (s_rsp_valid[SLV_NPU]),
    .s_rsp_ready   (s_rsp_ready[SLV_NPU]),
    .s_rsp         (s_rsp[SLV_NPU]),
    .m_req_valid   (m_req_valid[MST_DMA]),
    .m_req_ready   (m_req_ready[MST_DMA]),
    .m_req         (m_req[MST_DMA]),
    .m_rsp_valid   (m_rsp_valid[MST_DMA]),
    .m_rsp_ready   (m_rsp_ready[MST_DMA]),
    .m_rsp         (m_rsp[MST_DMA]),
    .irq           (npu_irq),
    .perf_macs     (npu_perf_macs),
    .perf_dma_bytes(npu_perf_dma_bytes),
    .perf_conflicts(npu_perf_conflicts)
  );
endmodule
