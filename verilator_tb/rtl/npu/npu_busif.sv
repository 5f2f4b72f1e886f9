// npu_busif: the DMA's bus master, on core_clk.
//
// The DMA engine runs on npu_clk and posts word requests into an async FIFO; this block pops
// them onto the bus and pushes every response (writes included: the bus answers those too) into
// the response FIFO back to npu_clk. Requests are pipelined: the bus keeps one master's
// responses in order, so several may be outstanding. Credits make the response FIFO unable to
// overflow: a request is only issued while
//     outstanding + (response FIFO occupancy as the writer sees it) < depth,
// and the writer's view over-estimates the occupancy, so m_rsp_ready can stay high.
module npu_busif
  import tb_pkg::*;
  import npu_pkg::*;
#(
  parameter int unsigned RSPQ_DEPTH_LOG2 = 3
) (
  input  logic     clk,     // core_clk
  input  logic     rst_n,
  // request FIFO, read side
  input  logic     dreq_valid,
  output logic     dreq_ready,
  input  dreq_t    dreq,
  // response FIFO, write side
  output logic     drsp_valid,
  input  logic     drsp_ready,
  output drsp_t    drsp,
  input  logic [RSPQ_DEPTH_LOG2:0] drsp_count,
  // bus master
  output logic     m_req_valid,
  input  logic     m_req_ready,
  output bus_req_t m_req,
  input  logic     m_rsp_valid,
  output logic     m_rsp_ready,
  input  bus_rsp_t m_rsp
);
  localparam int unsigned DEPTH = 1 << RSPQ_DEPTH_LOG2;

  logic [RSPQ_DEPTH_LOG2:0] outstanding_q;

  // While m_req_valid waits for ready, outstanding + count can only fall (a response moves one
  // from outstanding to the FIFO; a pop on npu_clk removes one), so valid never drops early.
  wire credit = ({1'b0, outstanding_q} + {1'b0, drsp_count}) < (RSPQ_DEPTH_LOG2 + 2)'(DEPTH);
  assign m_req_valid = dreq_valid && credit;
  assign m_req       = '{addr: dreq.addr, we: dreq.we, wdata: dreq.wdata, be: 4'hF,
                         id: {3'd0, dreq.ch}};
  assign dreq_ready  = m_req_ready && credit;

  assign m_rsp_ready = 1'b1;
  assign drsp_valid  = m_rsp_valid;
  assign drsp        = '{ch: m_rsp.id[0], err: m_rsp.err, rdata: m_rsp.rdata};

  wire issue  = m_req_valid && m_req_ready;
  wire retire = m_rsp_valid;  // m_rsp_ready is constant 1

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) outstanding_q <= '0;
    else        outstanding_q <= outstanding_q + (RSPQ_DEPTH_LOG2 + 1)'(issue) - (RSPQ_DEPTH_LOG2 + 1)'(retire);
  end

  // The credit scheme guarantees this; a violation would lose a response silently.
  always_ff @(posedge clk) begin
    if (drsp_valid && !drsp_ready) $error("npu_busif: response FIFO overflow");
  end

  // m_rsp.id[3:1] is always 0 (only ids 0 and 1 are issued).
  wire unused_ok = &{1'b0, m_rsp.id[3:1]};
endmodule
