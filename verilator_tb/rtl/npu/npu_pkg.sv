// npu_pkg: the NPU's private parameters, types and the fixed-point arithmetic shared by its
// engines. rtl/npu/README.md defines the arithmetic in prose; fw/npu_ref.c is the C golden model
// that must match these functions bit for bit. Opcodes, register offsets and the descriptor
// layout are the SoC contract and live in tb_pkg.
package npu_pkg;

  // ── NPU SRAM ────────────────────────────────────────────────────────────────────────
  // 8 banks x 2K words, word-interleaved: word address w lives in bank w[2:0], row w[13:3], so a
  // unit-stride stream touches every bank once per 8 words and strided streams collide.
  localparam int unsigned SRAM_BANKS      = 8;
  localparam int unsigned SRAM_BANK_BITS  = 3;
  localparam int unsigned SRAM_BANK_WORDS = 2048;
  localparam int unsigned SRAM_ROW_BITS   = 11;
  localparam int unsigned SRAM_AW         = SRAM_BANK_BITS + SRAM_ROW_BITS;  // 16K words = 64 KiB

  typedef logic [SRAM_AW-1:0] sram_addr_t;  // word address

  localparam int unsigned NPU_DESC_W = tb_pkg::NPU_DESC_WORDS;

  // ── Command queue and completion path ───────────────────────────────────────────────
  localparam int unsigned CMDQ_DEPTH_LOG2 = 3;  // README: a queue of 8 descriptors
  localparam int unsigned CPLQ_DEPTH_LOG2 = 2;

  // What crosses core_clk -> npu_clk per CMD_PUSH.
  typedef struct packed {
    logic [31:0] cmd_id;     // sequence number of the push, from 0
    logic [31:0] desc_addr;  // data-RAM byte address of the descriptor
  } cmdq_entry_t;

  // What crosses npu_clk -> core_clk per completed command: its token and status, plus a
  // snapshot of the perf counters taken at the same edge, so that software that has seen
  // DONE_TOKEN == t reads PERF_* values that include every command up to t.
  typedef struct packed {
    logic [31:0] cmd_id;
    logic [31:0] token;
    logic        err;
    logic [63:0] macs;
    logic [31:0] dma_bytes;
    logic [31:0] conflicts;
  } cpl_entry_t;

  // DMA bus requests npu_clk -> core_clk, and their responses back.
  typedef struct packed {
    logic        ch;     // 0 descriptor fetch, 1 data; sent as the bus id
    logic        we;
    logic [31:0] addr;
    logic [31:0] wdata;
  } dreq_t;

  typedef struct packed {
    logic        ch;
    logic        err;
    logic [31:0] rdata;
  } drsp_t;

  // ── Decoded command ─────────────────────────────────────────────────────────────────
  typedef struct packed {
    logic [31:0] cmd_id;
    logic [7:0]  opcode;
    logic [7:0]  phase;
    logic [7:0]  layer;
    logic [7:0]  head;
    logic [31:0] token;
    logic [31:0] src0;
    logic [31:0] src1;
    logic [31:0] dst;
    logic [15:0] m;
    logic [15:0] n;
    logic [15:0] k;
    logic [15:0] flags;
  } cmd_t;

  // Error codes, reported in the trace and folded into STATUS.error.
  typedef enum logic [3:0] {
    ERR_NONE     = 4'd0,
    ERR_OPCODE   = 4'd1,  // unknown opcode
    ERR_ALIGN    = 4'd2,  // an address (descriptor, data RAM or SRAM) not 4-byte aligned
    ERR_RANGE    = 4'd3,  // an SRAM operand runs past the 64 KiB SRAM
    ERR_OVERLAP  = 4'd4,  // MATMUL dst overlaps a source; VE dst partially overlaps src0
    ERR_DESC_BUS = 4'd5,  // bus error while fetching the descriptor
    ERR_DMA_BUS  = 4'd6   // bus error during DMA_IN / DMA_OUT
  } err_t;

  // Engines a command can occupy.
  typedef enum logic [1:0] {
    ENG_NONE = 2'd0,  // a command that failed decode: retires without running
    ENG_DMA  = 2'd1,
    ENG_TE   = 2'd2,
    ENG_VE   = 2'd3
  } eng_t;

  // Vector engine ops (the low two bits of the VE opcodes 0x20..0x22).
  typedef enum logic [1:0] {
    VE_SOFTMAX   = 2'd0,
    VE_LAYERNORM = 2'd1,
    VE_GELU      = 2'd2
  } ve_op_t;

  // ── flags (descriptor word 6 bits 31:16) ────────────────────────────────────────────
  //   [4:0]  in_shift   SOFTMAX/LAYERNORM/GELU: input scaling (see each op)
  //   [9:5]  out_shift  MATMUL/SOFTMAX/LAYERNORM/GELU: result >>> out_shift (arithmetic)
  //   [10]   sat8       then clamp to [-128, 127] (requantize to int8 for the next MATMUL)
  // The common output stage of every compute op; f = flags[10:5].
  function automatic logic [31:0] post(input logic [31:0] v, input logic [10:5] f);
    logic signed [31:0] r;
    r = $signed(v) >>> f[9:5];
    if (f[10]) begin
      if (r > 32'sd127) r = 32'sd127;
      else if (r < -32'sd128) r = -32'sd128;
    end
    return r;
  endfunction

  // ── SOFTMAX: e = 2^16 * 2^(-t/16), t = ((mx - x) >> s) * log2(e) in Q4 ──────────────
  // round(2^16 * 2^(-f/16)), f = 0..15 (gen_npu_luts.py)
  localparam logic [16:0] EXP2_LUT [16] = '{
    17'd65536, 17'd62757, 17'd60097, 17'd57549, 17'd55109, 17'd52773, 17'd50535, 17'd48393,
    17'd46341, 17'd44376, 17'd42495, 17'd40693, 17'd38968, 17'd37316, 17'd35734, 17'd34219
  };

  // mx is the row maximum, so mx - x is in [0, 2^32) and fits unsigned 32 bits exactly.
  // d is clamped to 16 bits before the multiply: any d >= 189 already gives e = 0, so the clamp
  // changes no result and bounds the multiplier at 16 x 9 bits. 369/256 ~= log2(e) = 1.4427.
  function automatic logic [16:0] softmax_exp(input logic [31:0] mx, input logic [31:0] x,
                                              input logic [4:0] s);
    logic [31:0] d;
    logic [15:0] dc;
    logic [24:0] t;
    logic [20:0] q;
    d  = (mx - x) >> s;
    dc = (d > 32'hFFFF) ? 16'hFFFF : d[15:0];
    t  = 25'((dc * 25'd369) >> 8);
    q  = t[24:4];
    if (q >= 21'd17) return 17'd0;
    return EXP2_LUT[t[3:0]] >> q[4:0];
  endfunction

  // ── GELU: x * Phi(x) on Q8 input, Phi interpolated from a 1/16-step table on [-4, 4] ──
  // round(2^16 * Phi(-4 + i/16)), i = 0..128 (gen_npu_luts.py)
  localparam logic [16:0] PHI_LUT [129] = '{
    17'd2, 17'd3, 17'd3, 17'd5, 17'd6, 17'd7, 17'd9, 17'd12, 17'd15, 17'd19, 17'd24, 17'd30,
    17'd38, 17'd47, 17'd58, 17'd72, 17'd88, 17'd108, 17'd132, 17'd161, 17'd195, 17'd236,
    17'd284, 17'd341, 17'd407, 17'd485, 17'd575, 17'd680, 17'd801, 17'd941, 17'd1101, 17'd1283,
    17'd1491, 17'd1726, 17'd1992, 17'd2291, 17'd2625, 17'd2999, 17'd3413, 17'd3872, 17'd4378,
    17'd4934, 17'd5542, 17'd6205, 17'd6924, 17'd7701, 17'd8539, 17'd9437, 17'd10398, 17'd11420,
    17'd12503, 17'd13648, 17'd14852, 17'd16114, 17'd17432, 17'd18801, 17'd20220, 17'd21684,
    17'd23189, 17'd24729, 17'd26299, 17'd27894, 17'd29508, 17'd31135, 17'd32768, 17'd34401,
    17'd36028, 17'd37642, 17'd39237, 17'd40807, 17'd42347, 17'd43852, 17'd45316, 17'd46735,
    17'd48104, 17'd49422, 17'd50684, 17'd51888, 17'd53033, 17'd54116, 17'd55138, 17'd56099,
    17'd56997, 17'd57835, 17'd58612, 17'd59331, 17'd59994, 17'd60602, 17'd61158, 17'd61664,
    17'd62123, 17'd62537, 17'd62911, 17'd63245, 17'd63544, 17'd63810, 17'd64045, 17'd64253,
    17'd64435, 17'd64595, 17'd64735, 17'd64856, 17'd64961, 17'd65051, 17'd65129, 17'd65195,
    17'd65252, 17'd65300, 17'd65341, 17'd65375, 17'd65404, 17'd65428, 17'd65448, 17'd65464,
    17'd65478, 17'd65489, 17'd65498, 17'd65506, 17'd65512, 17'd65517, 17'd65521, 17'd65524,
    17'd65527, 17'd65529, 17'd65530, 17'd65531, 17'd65533, 17'd65533, 17'd65534
  };

  // Before post(): xs = x >>> in_shift is Q8; xs >= 4.0 passes through, xs < -4.0 gives 0,
  // otherwise y = (xs * phi) >>> 16 with phi linearly interpolated between table entries.
  // |xs| <= 1024 and phi < 2^16 keep the product inside 27 bits.
  function automatic logic [31:0] gelu(input logic [31:0] x, input logic [4:0] s);
    logic signed [31:0] xs;
    logic [10:0] u;
    logic [16:0] lo, hi, phi;
    logic [20:0] dfr;
    logic signed [31:0] prod;
    xs = $signed(x) >>> s;
    if (xs >= 32'sd1024) return xs;
    if (xs < -32'sd1024) return 32'd0;
    u   = 11'(xs + 32'sd1024);
    lo  = PHI_LUT[{1'b0, u[10:4]}];
    hi  = PHI_LUT[{1'b0, u[10:4]} + 8'd1];
    dfr = 21'(17'(hi - lo)) * 21'(u[3:0]);  // the table is monotonic: hi >= lo
    phi = lo + 17'(dfr >> 4);
    prod = xs * $signed({15'd0, phi});
    return prod >>> 16;
  endfunction

  // ── LAYERNORM helpers ───────────────────────────────────────────────────────────────
  function automatic logic signed [15:0] clamp16(input logic signed [31:0] v);
    if (v > 32'sd32767) return 16'sh7FFF;
    if (v < -32'sd32768) return 16'sh8000;
    return v[15:0];
  endfunction

  // y = (dc * inv) >>> 16, dc a clamped deviation, inv = 2^24 / isqrt(var + 1).
  // |dc * inv| < 2^39, so y fits in 24 bits.
  function automatic logic [31:0] ln_scale(input logic signed [15:0] dc, input logic [24:0] inv);
    logic signed [41:0] p;
    p = 42'(dc) * $signed({17'd0, inv});
    return 32'(p >>> 16);
  endfunction

`ifdef USCOPE_TRACE
  // ── Trace names (rtl/npu/README.md "Tracing"); strings exist only in traced builds ──
  localparam logic [31:0] TRACE_ABSENT32 = 32'hFFFF_FFFF;  // USCOPE_NPU_ABSENT32
  localparam logic [15:0] TRACE_NO_CTX   = 16'hFFFF;       // USCOPE_NPU_NO_CONTEXT
  localparam int unsigned TRACE_SLOTS    = 8;   // cmd_queue slots used: cmd_id % 8
  localparam int unsigned TRACE_CTXS     = 16;  // contexts slots used: cmd_id % 16

  function automatic string op_name(input logic [7:0] op);
    unique case (op)
      tb_pkg::NPU_OP_DMA_IN:    return "DMA_IN";
      tb_pkg::NPU_OP_DMA_OUT:   return "DMA_OUT";
      tb_pkg::NPU_OP_MATMUL:    return "MATMUL";
      tb_pkg::NPU_OP_SOFTMAX:   return "SOFTMAX";
      tb_pkg::NPU_OP_LAYERNORM: return "LAYERNORM";
      tb_pkg::NPU_OP_GELU:      return "GELU";
      default:                  return "UNKNOWN";
    endcase
  endfunction

  function automatic string phase_name(input logic [7:0] ph);
    unique case (ph)
      8'd0:    return "QKV_PROJ";
      8'd1:    return "ATTENTION_SCORE";
      8'd2:    return "SOFTMAX";
      8'd3:    return "ATTENTION_APPLY";
      8'd4:    return "LN1";
      8'd5:    return "MLP";
      8'd6:    return "LN2";
      default: return "UNKNOWN";
    endcase
  endfunction

  function automatic string err_code(input err_t e);
    unique case (e)
      ERR_OPCODE:   return "BAD_OPCODE";
      ERR_ALIGN:    return "ADDR_ALIGN";
      ERR_RANGE:    return "SRAM_RANGE";
      ERR_OVERLAP:  return "OPERAND_OVERLAP";
      ERR_DESC_BUS: return "DESC_BUS_ERROR";
      ERR_DMA_BUS:  return "DMA_BUS_ERROR";
      default:      return "NONE";
    endcase
  endfunction

  function automatic string err_msg(input err_t e);
    unique case (e)
      ERR_OPCODE:   return "unknown opcode in the descriptor";
      ERR_ALIGN:    return "descriptor, data RAM or SRAM address not 4-byte aligned";
      ERR_RANGE:    return "SRAM operand runs past the 64 KiB SRAM";
      ERR_OVERLAP:  return "dst overlaps a source operand";
      ERR_DESC_BUS: return "bus error while fetching the descriptor";
      ERR_DMA_BUS:  return "bus error during the DMA transfer";
      default:      return "";
    endcase
  endfunction

  // Context and queue slots of a command (README: at most 5 commands are decoded and not yet
  // retired, and completions reach the core side long before 16 more commands are decoded).
  function automatic logic [15:0] trace_slot(input logic [31:0] cmd_id);
    return 16'(cmd_id % TRACE_SLOTS);
  endfunction
  function automatic logic [15:0] trace_ctx(input logic [31:0] cmd_id);
    return 16'(cmd_id % TRACE_CTXS);
  endfunction
  // job ids: cmd_id in the upper 16 bits, the job's index in the command below (0 = the
  // descriptor fetch, then tiles / rows / the DMA transfer from 1)
  /* verilator lint_off UNUSEDSIGNAL */  // ids wrap at 16 bits by definition
  function automatic logic [31:0] job_id(input logic [31:0] cmd_id, input logic [31:0] idx);
    return {cmd_id[15:0], idx[15:0]};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
`endif

endpackage
