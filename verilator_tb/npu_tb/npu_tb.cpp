// npu_tb: the NPU's standalone unit testbench.
//
// The harness plays the rest of the SoC around npu_top: a bus master that reads and writes the
// NPU registers (the core's role) and a data-RAM slave that serves the NPU's DMA with random
// backpressure and latency (the crossbar + RAM's role). It clocks core_clk (1000 ps) and npu_clk
// (1250 ps) the way sim_main.cpp does: jump to the next rising edge of either clock.
//
// Every command stream is also applied, in program order, to a host model of data RAM and NPU
// SRAM whose compute ops are fw/npu_ref.c, the same golden model the firmware uses. The NPU runs
// commands concurrently on its engines; matching the in-order model checks its hazard logic as
// well as its arithmetic. Perf registers are checked exactly: MACs = sum(m*n*k), DMA bytes =
// 4 * sum(m*n) over DMA commands. The tests: register_tests, directed_ops (each opcode, with its
// corner cases), reorder_test, error_cases, then random_program over several bus regimes;
// rtl/npu/README.md ("Verification") lists what each covers.
//
// Usage: npu_tb [--seed N] [--programs N] [--trace FILE]; exit status 0 = pass. With --trace
// (traced builds) the run is also recorded as a µScope trace, which is then read back and
// checked against the same totals (npu_tb_trace.cpp).
#include "Vnpu_top.h"
#include "verilated.h"

extern "C" {
#include "npu_ref.h"
}
#include "npu_tb_trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace {

// ── SoC constants (README) ──
constexpr uint32_t kDramBase = 0x10000000u;
constexpr uint32_t kDramWords = 256 * 1024 / 4;
constexpr uint32_t kSramWords = 16384;
enum : uint32_t {
  REG_ID = 0x00, REG_STATUS = 0x04, REG_CMD_PUSH = 0x08, REG_DONE_TOKEN = 0x0C,
  REG_IRQ_STATUS = 0x10, REG_IRQ_ENABLE = 0x14, REG_PERF_MACS_LO = 0x18, REG_PERF_MACS_HI = 0x1C,
  REG_PERF_DMA_BYTES = 0x20, REG_PERF_CONFLICTS = 0x24,
};
enum : uint32_t { OP_DMA_IN = 0x01, OP_DMA_OUT = 0x02, OP_MATMUL = 0x10, OP_SOFTMAX = 0x20,
                  OP_LAYERNORM = 0x21, OP_GELU = 0x22 };
// Data-RAM layout used by the tests.
constexpr uint32_t kDescBase = kDramBase;              // descriptor ring
constexpr uint32_t kDescSlots = 64;                  // 32 bytes each, below kInBase
constexpr uint32_t kInBase = kDramBase + 0x01000;      // DMA_IN sources (random data)
constexpr uint32_t kInBytes = 0x1F000;
constexpr uint32_t kOutBase = kDramBase + 0x20000;     // DMA_OUT destinations
constexpr uint32_t kOutBytes = 0x20000;

int g_failures = 0;
void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "FAIL: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  if (++g_failures > 20) {
    std::fprintf(stderr, "too many failures\n");
    std::exit(1);
  }
}

// ── packed-struct ports: bus_req_t is {addr, we, wdata, be, id} = 73 bits, MSB first ──
void set_bits(uint32_t *w, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; i++) {
    int b = lsb + i;
    uint32_t bit = (uint32_t)((v >> i) & 1u);
    w[b / 32] = (w[b / 32] & ~(1u << (b % 32))) | (bit << (b % 32));
  }
}
uint64_t get_bits(const uint32_t *w, int lsb, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; i++) {
    int b = lsb + i;
    v |= (uint64_t)((w[b / 32] >> (b % 32)) & 1u) << i;
  }
  return v;
}
struct BusReq { uint32_t addr; bool we; uint32_t wdata; uint32_t be; uint32_t id; };
void pack_req(VlWide<3> &w, const BusReq &r) {
  uint32_t *p = w.data();
  set_bits(p, 41, 32, r.addr);
  set_bits(p, 40, 1, r.we);
  set_bits(p, 8, 32, r.wdata);
  set_bits(p, 4, 4, r.be);
  set_bits(p, 0, 4, r.id);
}
BusReq unpack_req(const VlWide<3> &w) {
  const uint32_t *p = w.data();
  return BusReq{(uint32_t)get_bits(p, 41, 32), get_bits(p, 40, 1) != 0,
                (uint32_t)get_bits(p, 8, 32), (uint32_t)get_bits(p, 4, 4),
                (uint32_t)get_bits(p, 0, 4)};
}
// bus_rsp_t is {rdata, err, id} = 37 bits
uint64_t pack_rsp(uint32_t rdata, bool err, uint32_t id) {
  return ((uint64_t)rdata << 5) | ((uint64_t)err << 4) | (id & 15u);
}

struct Desc {
  uint32_t w[7];
};
Desc make_desc(uint32_t op, uint32_t token, uint32_t src0, uint32_t src1, uint32_t dst, uint32_t m,
               uint32_t n, uint32_t k, uint32_t flags, uint32_t phase = 0) {
  Desc d;
  d.w[0] = op | (phase << 8) | (1u << 16) | (2u << 24);
  d.w[1] = token;
  d.w[2] = src0;
  d.w[3] = src1;
  d.w[4] = dst;
  d.w[5] = (m & 0xFFFFu) | (n << 16);
  d.w[6] = (k & 0xFFFFu) | (flags << 16);
  return d;
}

// ── the simulation ──
class Tb {
 public:
  explicit Tb(uint64_t seed, const char *trace_path) : rng_(seed), dram_(kDramWords, 0) {
    top_ = new Vnpu_top;
    tracer_ = npu_tb_trace_open(trace_path);
  }
  ~Tb() {
    top_->final();
    npu_tb_trace_close(tracer_);
    delete top_;
  }

  std::mt19937_64 &rng() { return rng_; }
  uint32_t rnd(uint32_t lo, uint32_t hi) {  // inclusive
    return lo + (uint32_t)(rng_() % (uint64_t)(hi - lo + 1));
  }
  std::vector<uint32_t> &dram() { return dram_; }
  uint64_t core_cycles() const { return core_cycle_; }
  void set_bus_stress(int ready_pct, int max_latency) {
    ready_pct_ = ready_pct;
    max_latency_ = max_latency;
  }

  void reset() {
    top_->rst_n = 0;
    top_->core_clk = 0;
    top_->npu_clk = 0;
    top_->s_req_valid = 0;
    top_->s_rsp_ready = 0;
    top_->m_req_ready = 0;
    top_->m_rsp_valid = 0;
    top_->eval();
    while (core_cycle_ < 10) tick();  // README: rst_n low for the first 10 core cycles
    top_->rst_n = 1;
    for (int i = 0; i < 5; i++) tick();
  }

  // Advance to the next rising edge of either clock.
  void tick() {
    uint64_t t = std::min(next_core_, next_npu_);
    bool ce = (next_core_ == t), ne = (next_npu_ == t);
    top_->eval();
    // Sample the handshakes as they stand before the edge (registered TB behaviour).
    bool req_acc = false, rsp_taken = false, m_acc = false, m_rsp_pop = false;
    BusReq mreq{};
    uint64_t s_rsp = 0;
    if (ce) {
      req_acc = top_->s_req_valid && top_->s_req_ready;
      rsp_taken = top_->s_rsp_valid && top_->s_rsp_ready;
      s_rsp = top_->s_rsp;
      m_acc = top_->m_req_valid && top_->m_req_ready;
      if (m_acc) mreq = unpack_req(top_->m_req);
      m_rsp_pop = top_->m_rsp_valid && top_->m_rsp_ready;
      if (top_->m_rsp_valid && !top_->m_rsp_ready) fail("m_rsp_ready low: NPU must always take");
      if (top_->m_req_valid) check_m_req_stable();
    }
    npu_tb_trace_begin(tracer_, t);
    top_->core_clk = ce;
    top_->npu_clk = ne;
    top_->eval();
    npu_tb_trace_end(tracer_);
    top_->core_clk = 0;
    top_->npu_clk = 0;
    if (ce) {
      core_cycle_++;
      next_core_ += 1000;
      // register master
      if (req_acc) top_->s_req_valid = 0;
      if (rsp_taken) {
        reg_rsp_ = s_rsp;
        reg_rsp_done_ = true;
      }
      // data-RAM slave
      if (m_rsp_pop) rsp_q_.pop_front();
      if (m_acc) serve(mreq);
      drive_slave();
    }
    if (ne) {
      npu_cycle_++;
      next_npu_ += 1250;
    }
    top_->eval();
  }

  // ── register master ──
  uint32_t reg_access(bool we, uint32_t off, uint32_t wdata, bool *err = nullptr) {
    BusReq r{0x40000000u + off, we, wdata, 0xFu, 5u};
    pack_req(top_->s_req, r);
    top_->s_req_valid = 1;
    top_->s_rsp_ready = 1;
    reg_rsp_done_ = false;
    uint64_t start = core_cycle_;
    while (!reg_rsp_done_) {
      tick();
      if (core_cycle_ - start > 200000) {
        fail("register access 0x%03x timed out", off);
        std::exit(1);
      }
    }
    top_->s_rsp_ready = 0;
    uint32_t id = (uint32_t)(reg_rsp_ & 15u);
    bool e = (reg_rsp_ >> 4) & 1u;
    if (id != 5u) fail("register response id %u, expected 5", id);
    if (err) *err = e;
    else if (e) fail("register access 0x%03x answered err", off);
    return (uint32_t)(reg_rsp_ >> 5);
  }
  uint32_t rd(uint32_t off) { return reg_access(false, off, 0); }
  void wr(uint32_t off, uint32_t v) { reg_access(true, off, v); }

  void write_desc(uint32_t slot, const Desc &d) {
    for (int i = 0; i < 7; i++) dram_[(kDescBase - kDramBase) / 4 + slot * 8 + i] = d.w[i];
  }
  uint32_t desc_addr(uint32_t slot) const { return kDescBase + slot * 32; }

  // Polls until idle. DONE_TOKEN is sampled on the way: it must never move back (the NPU
  // retires in push order; token 0 is the rejected-descriptor-address case and is skipped).
  void wait_idle(uint64_t limit = 5000000) {
    uint64_t start = core_cycle_;
    for (;;) {
      uint32_t tok = rd(REG_DONE_TOKEN);
      if (tok != 0) {
        if (tok < last_token_) fail("DONE_TOKEN moved back from %u to %u", last_token_, tok);
        last_token_ = tok;
      }
      if (!(rd(REG_STATUS) & 1u)) break;
      if (core_cycle_ - start > limit) {
        fail("NPU still busy after %" PRIu64 " core cycles", limit);
        std::exit(1);
      }
    }
  }

  uint64_t perf_macs() { return rd(REG_PERF_MACS_LO) | ((uint64_t)rd(REG_PERF_MACS_HI) << 32); }
  Vnpu_top *top() { return top_; }
  int trace_check(const npu_tb_expect_t &e) { return npu_tb_trace_check(tracer_, e); }

 private:
  // Requests are read/written at acceptance; responses leave in order after 1..max latency.
  void serve(const BusReq &r) {
    Rsp rsp{};
    rsp.id = r.id;
    rsp.ready_at = core_cycle_ + rnd(0, (uint32_t)max_latency_ - 1);
    if (r.be != 0xFu) fail("DMA request with be=%x", r.be);
    if (r.addr < kDramBase || r.addr >= kDramBase + kDramWords * 4 || (r.addr & 3u)) {
      rsp.err = true;
    } else {
      uint32_t &word = dram_[(r.addr - kDramBase) / 4];
      if (r.we) word = r.wdata;
      else rsp.rdata = word;
    }
    rsp_q_.push_back(rsp);
  }
  void drive_slave() {
    top_->m_req_ready = (rnd(1, 100) <= (uint32_t)ready_pct_);
    if (!rsp_q_.empty() && rsp_q_.front().ready_at <= core_cycle_) {
      const Rsp &h = rsp_q_.front();
      top_->m_rsp_valid = 1;
      top_->m_rsp = pack_rsp(h.rdata, h.err, h.id);
    } else {
      top_->m_rsp_valid = 0;
    }
  }
  // Bus rule: a master keeps valid and its payload until ready.
  void check_m_req_stable() {
    BusReq cur = unpack_req(top_->m_req);
    if (have_prev_ && prev_pending_ &&
        (cur.addr != prev_.addr || cur.we != prev_.we || cur.wdata != prev_.wdata))
      fail("DMA request changed while waiting for ready");
    prev_ = cur;
    have_prev_ = true;
    prev_pending_ = !top_->m_req_ready;
  }

  struct Rsp {
    uint32_t rdata = 0;
    bool err = false;
    uint32_t id = 0;
    uint64_t ready_at = 0;
  };

  Vnpu_top *top_;
  npu_tb_tracer_t *tracer_;
  std::mt19937_64 rng_;
  std::vector<uint32_t> dram_;
  std::deque<Rsp> rsp_q_;
  uint64_t next_core_ = 0, next_npu_ = 0, core_cycle_ = 0, npu_cycle_ = 0;
  int ready_pct_ = 70, max_latency_ = 3;
  bool reg_rsp_done_ = false;
  uint32_t last_token_ = 0;
  uint64_t reg_rsp_ = 0;
  BusReq prev_{};
  bool have_prev_ = false, prev_pending_ = false;
};

// ── the in-order reference of the whole NPU ──
struct Model {
  std::vector<int32_t> sram = std::vector<int32_t>(kSramWords, 0);
  uint64_t macs = 0;
  uint64_t dma_bytes = 0;

  static bool sram_fits(uint32_t a, uint64_t len) {
    return (a & 3u) == 0 && (uint64_t)a + 4 * len <= 0x10000u;
  }
  // Returns false when the NPU must reject the command.
  bool apply(const Desc &d, std::vector<uint32_t> &dram) {
    uint32_t op = d.w[0] & 0xFFu;
    uint32_t m = d.w[5] & 0xFFFFu, n = d.w[5] >> 16, k = d.w[6] & 0xFFFFu;
    uint64_t len = (uint64_t)m * n;
    switch (op) {
      case OP_DMA_IN:
        if ((d.w[2] & 3u) || !sram_fits(d.w[4], len)) return false;
        for (uint64_t i = 0; i < len; i++)
          sram[d.w[4] / 4 + i] = (int32_t)dram[(d.w[2] - kDramBase) / 4 + i];
        dma_bytes += 4 * len;
        return true;
      case OP_DMA_OUT:
        if ((d.w[4] & 3u) || !sram_fits(d.w[2], len)) return false;
        for (uint64_t i = 0; i < len; i++)
          dram[(d.w[4] - kDramBase) / 4 + i] = (uint32_t)sram[d.w[2] / 4 + i];
        dma_bytes += 4 * len;
        return true;
      default:
        if (npu_ref_run(sram.data(), kSramWords, d.w) != 0) return false;
        if (op == OP_MATMUL) macs += (uint64_t)m * n * k;
        return true;
    }
  }
};

// ── test drivers ──
struct Runner {
  explicit Runner(Tb &t) : tb(t) {}
  Tb &tb;
  Model model;
  uint32_t token = 0;
  uint32_t slot = 0;
  uint64_t n_cmds = 0;

  // Push one command; the model applies it at once (program order). Returns the token.
  uint32_t push(Desc d, bool expect_ok = true) {
    d.w[1] = ++token;
    tb.write_desc(slot, d);
    tb.wr(REG_CMD_PUSH, tb.desc_addr(slot));
    slot = (slot + 1) % kDescSlots;
    bool ok = model.apply(d, tb.dram());
    if (ok != expect_ok)
      fail("model says command op=0x%02x is %s, test expected %s", d.w[0] & 0xFF,
           ok ? "valid" : "invalid", expect_ok ? "valid" : "invalid");
    n_cmds++;
    return token;
  }

  // Check DONE_TOKEN, perf counters and the error bit once the NPU is idle.
  void check_idle(const char *what, bool expect_error) {
    tb.wait_idle();
    uint32_t st = tb.rd(REG_STATUS);
    if (tb.rd(REG_DONE_TOKEN) != token) fail("%s: DONE_TOKEN %u, expected %u", what,
                                             tb.rd(REG_DONE_TOKEN), token);
    if (((st >> 16) & 1u) != (uint32_t)expect_error)
      fail("%s: STATUS.error = %u, expected %d", what, (st >> 16) & 1u, expect_error);
    if (st & 0x2u) fail("%s: queue full while idle", what);
    if ((st >> 8) & 0xFFu) fail("%s: queue occupancy %u while idle", what, (st >> 8) & 0xFF);
    if (expect_error) tb.wr(REG_STATUS, 1u << 16);  // W1C
    uint64_t macs = tb.perf_macs();
    if (macs != model.macs)
      fail("%s: PERF_MACS %" PRIu64 ", expected %" PRIu64, what, macs, model.macs);
    uint32_t bytes = tb.rd(REG_PERF_DMA_BYTES);
    if (bytes != (uint32_t)model.dma_bytes)
      fail("%s: PERF_DMA_BYTES %u, expected %u", what, bytes, (uint32_t)model.dma_bytes);
  }

  // Bring all of SRAM into a known state (the model starts from zeros).
  void init_sram() {
    for (uint32_t i = 0; i < kSramWords; i++) tb.dram()[(kOutBase - kDramBase) / 4 + i] = 0;
    push(make_desc(OP_DMA_IN, 0, kOutBase, 0, 0, 128, kSramWords / 128, 0, 0));
    check_idle("init", false);
  }

  // Compare SRAM with the model by copying all of it out.
  void check_sram(const char *what) {
    push(make_desc(OP_DMA_OUT, 0, 0, 0, kOutBase, 128, kSramWords / 128, 0, 0));
    check_idle(what, false);
    int bad = 0;
    for (uint32_t i = 0; i < kSramWords; i++) {
      uint32_t got = tb.dram()[(kOutBase - kDramBase) / 4 + i];
      if (got != (uint32_t)model.sram[i] && bad++ < 8)
        fail("%s: SRAM word %u (0x%04x) = 0x%08x, expected 0x%08x", what, i, i * 4, got,
             (uint32_t)model.sram[i]);
    }
  }
};

// Random data helpers
void fill_random(Tb &tb, uint32_t addr, uint32_t words, int kind) {
  auto &dr = tb.dram();
  for (uint32_t i = 0; i < words; i++) {
    uint32_t v;
    switch (kind) {
      case 0: v = (uint32_t)tb.rng()(); break;                              // any int32
      case 1: v = (uint32_t)(int32_t)(int8_t)tb.rnd(0, 255) ^ (tb.rnd(0, 1) ? 0xABCD0000u : 0); break;
      case 2: v = (uint32_t)((int32_t)tb.rnd(0, 1 << 17) - (1 << 16)); break;  // +-2^16
      default: v = (uint32_t)((int32_t)tb.rnd(0, 4096) - 2048); break;     // +-8.0 in Q8
    }
    dr[(addr - kDramBase) / 4 + i] = v;
  }
}

// A random program: commands over random, often overlapping, SRAM regions, so that hazards,
// engine concurrency and bank conflicts all happen; then SRAM is compared with the model.
void random_program(Runner &r, int ncmds) {
  Tb &tb = r.tb;
  // A handful of SRAM regions that commands pick from; overlaps between them are intended.
  auto sram_addr = [&](uint32_t words) {
    uint32_t max_word = kSramWords - words;
    return tb.rnd(0, max_word) * 4;
  };
  // DMA_IN sources are carved sequentially: a queued DMA_IN may read its source long after the
  // push, so the harness must not rewrite that memory until the program is over.
  uint32_t in_next = kInBase;
  for (int c = 0; c < ncmds; c++) {
    uint32_t kind = tb.rnd(0, 9);
    uint32_t flags = 0;
    if (kind <= 1) {  // DMA_IN
      uint32_t m = tb.rnd(1, 8), n = tb.rnd(1, 40);
      uint32_t src = in_next;
      in_next += 4 * m * n;
      if (in_next > kInBase + kInBytes) fail("test bug: DMA_IN source area exhausted");
      fill_random(tb, src, m * n, (int)tb.rnd(0, 3));
      r.push(make_desc(OP_DMA_IN, 0, src, 0, sram_addr(m * n), m, n, 0, 0));
    } else if (kind == 2) {  // DMA_OUT
      uint32_t m = tb.rnd(1, 8), n = tb.rnd(1, 40);
      uint32_t dst = kOutBase + tb.rnd(0, (kOutBytes / 4) - m * n - 1) * 4;
      r.push(make_desc(OP_DMA_OUT, 0, sram_addr(m * n), 0, dst, m, n, 0, 0));
    } else if (kind <= 5) {  // MATMUL (dst disjoint from sources)
      uint32_t m = tb.rnd(1, 13), n = tb.rnd(1, 13), k = tb.rnd(0, 20);
      if (tb.rnd(0, 3) == 0) k = 8 * tb.rnd(1, 3);  // A's ports all in one bank
      flags = NPU_FLAGS(0, tb.rnd(0, 1) ? 0 : tb.rnd(0, 12), tb.rnd(0, 1));
      uint32_t a, b, d;
      for (;;) {
        a = sram_addr(m * k);
        b = sram_addr(k * n);
        d = sram_addr(m * n);
        auto ov = [](uint32_t x, uint32_t xl, uint32_t y, uint32_t yl) {
          return xl && yl && x < y + 4 * yl && y < x + 4 * xl;
        };
        if (!ov(d, m * n, a, m * k) && !ov(d, m * n, b, k * n)) break;
      }
      r.push(make_desc(OP_MATMUL, 0, a, b, d, m, n, k, flags, 0));
    } else {  // VE ops, in place or disjoint
      static const uint32_t ops[3] = {OP_SOFTMAX, OP_LAYERNORM, OP_GELU};
      uint32_t op = ops[tb.rnd(0, 2)];
      uint32_t m = tb.rnd(1, 6), n = tb.rnd(1, 48);
      flags = NPU_FLAGS(tb.rnd(0, 12), tb.rnd(0, 1) ? 0 : tb.rnd(0, 10), tb.rnd(0, 1));
      uint32_t s = sram_addr(m * n), d = s;
      if (tb.rnd(0, 1)) {
        do {
          d = sram_addr(m * n);
        } while (d != s && d < s + 4 * m * n && s < d + 4 * m * n);
      }
      r.push(make_desc(op, 0, s, 0, d, m, n, 0, flags, 2));
    }
  }
  r.check_idle("program", false);
}

// One directed test per compute opcode, with data shaped for it, DMA'd in and out.
void directed_ops(Runner &r) {
  Tb &tb = r.tb;
  // MATMUL 16x12x24 on full int8 range, plus post with sat8
  {
    uint32_t m = 16, n = 12, k = 24;
    fill_random(tb, kInBase, m * k, 1);
    fill_random(tb, kInBase + 0x1000, k * n, 1);
    r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x0000, m, k, 0, 0));
    r.push(make_desc(OP_DMA_IN, 0, kInBase + 0x1000, 0, 0x1000, k, n, 0, 0));
    r.push(make_desc(OP_MATMUL, 0, 0x0000, 0x1000, 0x2000, m, n, k, 0));
    r.push(make_desc(OP_MATMUL, 0, 0x0000, 0x1000, 0x3000, m, n, k, NPU_FLAGS(0, 7, 1)));
    r.push(make_desc(OP_DMA_OUT, 0, 0x2000, 0, kOutBase, m, n, 0, 0));
    r.push(make_desc(OP_DMA_OUT, 0, 0x3000, 0, kOutBase + 0x1000, m, n, 0, 0));
    r.check_idle("matmul", false);
    // Cross-check the model against a direct computation on the data-RAM copies.
    std::vector<int32_t> c(m * n);
    npu_ref_matmul((const int32_t *)&tb.dram()[(kInBase - kDramBase) / 4],
                   (const int32_t *)&tb.dram()[(kInBase + 0x1000 - kDramBase) / 4], c.data(), m,
                   n, k, 0);
    for (uint32_t i = 0; i < m * n; i++)
      if ((uint32_t)c[i] != tb.dram()[(kOutBase - kDramBase) / 4 + i])
        fail("matmul element %u: got %d expected %d", i,
             (int32_t)tb.dram()[(kOutBase - kDramBase) / 4 + i], c[i]);
  }
  // SOFTMAX, including extreme rows (INT32_MIN/MAX in one row: a 2^32-1 difference)
  {
    uint32_t m = 5, n = 33;
    fill_random(tb, kInBase, m * n, 2);
    tb.dram()[(kInBase - kDramBase) / 4 + 0] = 0x7FFFFFFFu;
    tb.dram()[(kInBase - kDramBase) / 4 + 1] = 0x80000000u;
    for (uint32_t j = 0; j < n; j++) tb.dram()[(kInBase - kDramBase) / 4 + n + j] = 7;  // flat
    r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x4000, m, n, 0, 0));
    r.push(make_desc(OP_SOFTMAX, 0, 0x4000, 0, 0x4000, m, n, 0, NPU_FLAGS(8, 0, 0)));
    r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x5000, m, n, 0, 0));
    r.push(make_desc(OP_SOFTMAX, 0, 0x5000, 0, 0x6000, m, n, 0, NPU_FLAGS(4, 9, 1)));
    r.check_idle("softmax", false);
  }
  // LAYERNORM, including a row of huge values (clamp16, saturating sum of squares) and a
  // constant row (variance 0)
  {
    uint32_t m = 4, n = 64;
    fill_random(tb, kInBase, m * n, 2);
    for (uint32_t j = 0; j < n; j++) {
      tb.dram()[(kInBase - kDramBase) / 4 + n + j] = (j & 1) ? 0x7FFFFFF0u : 0x80000010u;
      tb.dram()[(kInBase - kDramBase) / 4 + 2 * n + j] = 1234;
    }
    r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x7000, m, n, 0, 0));
    r.push(make_desc(OP_LAYERNORM, 0, 0x7000, 0, 0x8000, m, n, 0, NPU_FLAGS(0, 0, 0)));
    r.push(make_desc(OP_LAYERNORM, 0, 0x7000, 0, 0x7000, m, n, 0, NPU_FLAGS(3, 4, 1)));
    r.check_idle("layernorm", false);
  }
  // GELU: every table entry and both ends: xs = -1100 .. 1100 in Q8
  {
    uint32_t n = 2201;
    for (uint32_t j = 0; j < n; j++) tb.dram()[(kInBase - kDramBase) / 4 + j] = (uint32_t)((int32_t)j - 1100);
    r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x9000, 1, n, 0, 0));
    r.push(make_desc(OP_GELU, 0, 0x9000, 0, 0x9000, 1, n, 0, 0));
    fill_random(tb, kInBase + 0x4000, 3 * 50, 0);
    r.push(make_desc(OP_DMA_IN, 0, kInBase + 0x4000, 0, 0xC000, 3, 50, 0, 0));
    r.push(make_desc(OP_GELU, 0, 0xC000, 0, 0xD000, 3, 50, 0, NPU_FLAGS(20, 2, 1)));
    r.check_idle("gelu", false);
  }
  r.check_sram("directed ops");
}

// Out-of-order completion behind a long head: a big MATMUL, then independent short commands
// on the other engines, which finish first and must wait in the reorder buffer (and stall
// issue once it is full); DONE_TOKEN is watched as it advances.
void reorder_test(Runner &r) {
  Tb &tb = r.tb;
  fill_random(tb, kInBase, 32 * 64, 1);
  r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x0000, 32, 64, 0, 0));  // A 32x64 at 0x0000
  r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x2000, 64, 16, 0, 0));  // B 64x16 at 0x2000
  r.check_idle("reorder setup", false);
  r.push(make_desc(OP_MATMUL, 0, 0x0000, 0x2000, 0x3000, 32, 16, 64, 0));
  for (uint32_t i = 0; i < 10; i++) {
    r.push(make_desc(OP_DMA_IN, 0, kInBase + 4 * i, 0, 0x4000 + 0x40 * i, 1, 4, 0, 0));
    r.push(make_desc(OP_GELU, 0, 0x6000 + 0x40 * i, 0, 0x6000 + 0x40 * i, 1, 4, 0, 0));
    // wait_idle's DONE_TOKEN watch only runs at the end; sample it here as well
    uint32_t tok = tb.rd(REG_DONE_TOKEN);
    if (tok > r.token) fail("DONE_TOKEN %u ahead of the last push %u", tok, r.token);
  }
  r.check_idle("reorder", false);
  r.check_sram("reorder");
}

// Commands the NPU must reject: each completes (token advances) with STATUS.error, changes
// nothing, and does not disturb the next command.
void error_cases(Runner &r) {
  Tb &tb = r.tb;
  struct Case {
    const char *name;
    Desc d;
  } cases[] = {
      {"bad opcode", make_desc(0x7F, 0, 0, 0, 0, 1, 1, 1, 0)},
      {"misaligned sram", make_desc(OP_GELU, 0, 0x102, 0, 0x200, 1, 4, 0, 0)},
      {"misaligned dram", make_desc(OP_DMA_IN, 0, kInBase + 2, 0, 0x200, 1, 4, 0, 0)},
      {"sram range", make_desc(OP_DMA_IN, 0, kInBase, 0, 0xFFF0, 1, 8, 0, 0)},
      {"matmul range", make_desc(OP_MATMUL, 0, 0xF000, 0x0, 0x100, 64, 1, 64, 0)},
      {"matmul overlap", make_desc(OP_MATMUL, 0, 0x0, 0x100, 0x10, 4, 4, 4, 0)},
      {"ve partial overlap", make_desc(OP_SOFTMAX, 0, 0x0, 0, 0x8, 2, 4, 0, 0)},
  };
  for (auto &c : cases) {
    r.push(c.d, false);
    r.push(make_desc(OP_GELU, 0, 0x300, 0, 0x300, 1, 4, 0, 0));  // a good one right after
    r.check_idle(c.name, true);
  }
  // A misaligned descriptor address: fails with token 0 (nothing could be read).
  {
    tb.wr(REG_CMD_PUSH, tb.desc_addr(0) + 2);
    r.n_cmds++;
    tb.wait_idle();
    if (tb.rd(REG_DONE_TOKEN) != 0) fail("misaligned descriptor: DONE_TOKEN %u, expected 0",
                                         tb.rd(REG_DONE_TOKEN));
    if (!((tb.rd(REG_STATUS) >> 16) & 1u)) fail("misaligned descriptor: no STATUS.error");
    tb.wr(REG_STATUS, 1u << 16);
  }
  // A descriptor outside data RAM: bus error on the fetch.
  {
    tb.wr(REG_CMD_PUSH, 0x30000000u);
    r.n_cmds++;
    tb.wait_idle();
    if (!((tb.rd(REG_STATUS) >> 16) & 1u)) fail("unmapped descriptor: no STATUS.error");
    tb.wr(REG_STATUS, 1u << 16);
  }
  // DMA_IN from unmapped memory: the DMA moves words (as 0) but reports the bus error.
  {
    Desc d = make_desc(OP_DMA_IN, 0, 0x30000000u, 0, 0x400, 1, 4, 0, 0);
    d.w[1] = ++r.token;
    tb.write_desc(r.slot, d);
    tb.wr(REG_CMD_PUSH, tb.desc_addr(r.slot));
    r.n_cmds++;
    r.slot = (r.slot + 1) % kDescSlots;
    for (int i = 0; i < 4; i++) r.model.sram[0x400 / 4 + i] = 0;
    r.model.dma_bytes += 16;
    r.check_idle("dma bus error", true);
  }
  // Zero-sized commands complete without error and without MACs.
  r.push(make_desc(OP_MATMUL, 0, 0, 0x100, 0x200, 0, 4, 4, 0));
  r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0, 0, 4, 0, 0));
  r.push(make_desc(OP_SOFTMAX, 0, 0, 0, 0, 3, 0, 0, 0));
  r.check_idle("zero-sized", false);
  r.check_sram("error cases");
}

// Register block: ID, unmapped offsets, queue-full backpressure, IRQ.
void register_tests(Runner &r) {
  Tb &tb = r.tb;
  if (tb.rd(REG_ID) != 0x4E505531u) fail("ID = 0x%08x", tb.rd(REG_ID));
  bool err = false;
  tb.reg_access(false, 0x100, 0, &err);
  if (!err) fail("unmapped register offset answered without err");
  if (tb.rd(REG_STATUS) != 0) fail("STATUS when idle = 0x%08x", tb.rd(REG_STATUS));

  // IRQ: enable, complete a command, see irq; W1C clears it.
  tb.wr(REG_IRQ_ENABLE, 1);
  if (tb.rd(REG_IRQ_ENABLE) != 1) fail("IRQ_ENABLE readback");
  tb.wr(REG_IRQ_STATUS, 1);
  r.push(make_desc(OP_GELU, 0, 0, 0, 0, 1, 1, 0, 0));
  r.check_idle("irq", false);
  if (!(tb.rd(REG_IRQ_STATUS) & 1u)) fail("IRQ_STATUS not set after completion");
  if (!tb.top()->irq) fail("irq output low with IRQ_STATUS and IRQ_ENABLE set");
  tb.wr(REG_IRQ_STATUS, 1);
  if (tb.rd(REG_IRQ_STATUS) & 1u) fail("IRQ_STATUS not cleared by W1C");
  if (tb.top()->irq) fail("irq output high after W1C");
  tb.wr(REG_IRQ_ENABLE, 0);

  // Queue full: 8 long commands queue up behind one running; STATUS shows occupancy and full,
  // and further pushes stall (their response waits) instead of being lost.
  fill_random(tb, kInBase, 64 * 64, 1);
  r.push(make_desc(OP_DMA_IN, 0, kInBase, 0, 0x0, 64, 64, 0, 0));
  bool saw_full = false;
  uint32_t max_occ = 0;
  for (int i = 0; i < 12; i++) {
    r.push(make_desc(OP_MATMUL, 0, 0x0, 0x4000, 0x8000 + 0x100 * (uint32_t)(i % 4), 8, 8, 16, 0));
    uint32_t st = tb.rd(REG_STATUS);
    if (!(st & 1u)) fail("STATUS.busy low with commands queued");
    saw_full |= (st & 2u) != 0;
    max_occ = std::max(max_occ, (st >> 8) & 0xFFu);
  }
  if (!saw_full) fail("queue never reported full");
  if (max_occ != 8) fail("queue occupancy peaked at %u, expected 8", max_occ);
  r.check_idle("queue full", false);
}

}  // namespace

int main(int argc, char **argv) {
  Verilated::commandArgs(argc, argv);
  uint64_t seed = 1;
  int programs = 12;
  const char *trace = nullptr;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], 0, 0);
    else if (!std::strcmp(argv[i], "--programs") && i + 1 < argc) programs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc) trace = argv[++i];
  }
  Tb tb(seed, trace);
  tb.reset();
  Runner r(tb);

  r.init_sram();
  register_tests(r);
  directed_ops(r);
  reorder_test(r);
  error_cases(r);
  for (int p = 0; p < programs; p++) {
    // Alternate an easy bus and a hostile one (30% ready, up to 6 cycles latency).
    if (p % 2) tb.set_bus_stress(30, 6);
    else tb.set_bus_stress(90, 2);
    random_program(r, 30);
    char what[32];
    std::snprintf(what, sizeof what, "program %d", p);
    r.check_sram(what);
  }
  uint32_t conflicts = tb.rd(REG_PERF_CONFLICTS);
  if (conflicts == 0) fail("no SRAM bank conflict in the whole run");
  npu_tb_expect_t expect{r.n_cmds, r.model.macs, r.model.dma_bytes, conflicts};
  int trace_rc = tb.trace_check(expect);
  std::printf("npu_tb: seed %" PRIu64 ", %" PRIu64 " commands, %" PRIu64 " core cycles, MACs %" PRIu64
              ", DMA bytes %" PRIu64 ", conflicts %u: %s\n",
              seed, r.n_cmds, tb.core_cycles(), r.model.macs, r.model.dma_bytes, conflicts,
              g_failures || trace_rc ? "FAIL" : "PASS");
  return g_failures || trace_rc ? 1 : 0;
}
