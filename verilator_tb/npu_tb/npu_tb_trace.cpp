// npu_tb_trace.cpp — see npu_tb_trace.h.
#include "npu_tb_trace.h"

#include <cstdio>
#include <cstdlib>

#ifndef NPU_TB_TRACE

npu_tb_tracer_t *npu_tb_trace_open(const char *path) {
  if (path) {
    std::fprintf(stderr, "npu_tb: built without tracing; --trace is not available\n");
    std::exit(2);
  }
  return nullptr;
}
void npu_tb_trace_begin(npu_tb_tracer_t *, uint64_t) {}
void npu_tb_trace_end(npu_tb_tracer_t *) {}
int npu_tb_trace_check(npu_tb_tracer_t *, const npu_tb_expect_t &) { return 0; }
void npu_tb_trace_close(npu_tb_tracer_t *) {}
void npu_tb_trace_hook_error(int) {}

#else

#include "uscope/protocols.h"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"

#include <cinttypes>
#include <map>
#include <string>

namespace {
uint64_t g_hook_errors = 0;
}

// Every hook passes its status through tb_trace_pkg::check(); failures land here (through
// tb_trace_error() in npu_tb_dpi.cpp).
void npu_tb_trace_hook_error(int status) {
  if (g_hook_errors++ < 10)
    std::fprintf(stderr, "npu_tb: trace call failed: %s: %s\n", uscope_status_str(status),
                 uscope_last_error());
}

struct npu_tb_tracer_t {
  std::string path;
  uscope_writer_t *w = nullptr;
  uscope_npu_t *npu = nullptr;
  uscope_npu_ids_t ids{};
  bool finished = false;
};

static void must(uscope_status_t st, const char *what) {
  if (st == USCOPE_OK) return;
  std::fprintf(stderr, "npu_tb: %s: %s (%s)\n", what, uscope_status_str(st), uscope_last_error());
  std::exit(2);
}

npu_tb_tracer_t *npu_tb_trace_open(const char *path) {
  if (!path) return nullptr;
  auto *t = new npu_tb_tracer_t;
  t->path = path;
  uscope_schema_t *s = nullptr;
  must(uscope_schema_new(&s), "uscope_schema_new");
  uint8_t core_clk = 0, npu_clk = 0;
  uint16_t root = 0;
  must(uscope_schema_add_clock(s, &core_clk, "core_clk", 1000), "add_clock");
  must(uscope_schema_add_clock(s, &npu_clk, "npu_clk", 1250), "add_clock");
  must(uscope_schema_add_scope(s, &root, "/", USCOPE_NO_PARENT, nullptr, core_clk), "add_scope");
  // The sizes rtl/npu/README.md ("Tracing") asks of the npu0 declaration.
  uscope_npu_config_t pc{};
  pc.struct_size = sizeof pc;
  pc.scope_name = "npu0";
  pc.parent_scope_id = root;
  pc.clock_id = npu_clk;
  pc.queue_depth = 8;
  pc.num_contexts = 16;
  pc.num_te = 1;
  pc.num_ve = 1;
  pc.num_dma_channels = 1;
  pc.num_sram_banks = 8;
  pc.te_rows = NPU_TB_TE_ROWS;
  pc.te_cols = NPU_TB_TE_COLS;
  pc.dut_name = "npu_top";
  pc.vendor = "libuscope verilator_tb/npu_tb";
  must(uscope_npu_declare(s, &t->npu, &pc), "uscope_npu_declare");
  t->ids.struct_size = sizeof t->ids;
  must(uscope_npu_ids(t->npu, &t->ids), "uscope_npu_ids");
  uscope_writer_options_t opts = USCOPE_WRITER_OPTIONS_INIT;
  must(uscope_writer_open(&t->w, path, s, nullptr, 0, &opts), "uscope_writer_open");
  uscope_schema_free(s);
  uscope_dpi_register("writer", t->w);
  uscope_dpi_register("npu0", t->npu);
  return t;
}

void npu_tb_trace_begin(npu_tb_tracer_t *t, uint64_t time_ps) {
  // A misuse is sticky in the writer and reported by finish(), which checks it.
  if (t) (void)uscope_begin_cycle(t->w, time_ps);
}
void npu_tb_trace_end(npu_tb_tracer_t *t) {
  if (t) (void)uscope_end_cycle(t->w);  // sticky, as above
}

static int finish(npu_tb_tracer_t *t) {
  if (t->finished) return 0;
  t->finished = true;
  uscope_dpi_register("writer", nullptr);
  uscope_dpi_register("npu0", nullptr);
  uscope_status_t st = uscope_writer_finish(t->w);
  int bad = 0;
  if (st != USCOPE_OK) {
    std::fprintf(stderr, "npu_tb: trace: %s: %s\n", uscope_status_str(st), uscope_writer_error(t->w));
    bad++;
  }
  if (uscope_writer_close(t->w) != USCOPE_OK && st == USCOPE_OK) {
    std::fprintf(stderr, "npu_tb: trace: close: %s\n", uscope_last_error());
    bad++;
  }
  t->w = nullptr;
  return bad;
}

int npu_tb_trace_check(npu_tb_tracer_t *t, const npu_tb_expect_t &e) {
  if (!t) return 0;
  int bad = finish(t);
  if (g_hook_errors) {
    std::fprintf(stderr, "npu_tb: %" PRIu64 " trace calls failed\n", g_hook_errors);
    bad++;
  }
  uscope_reader_t *r = nullptr;
  if (uscope_reader_open(&r, t->path.c_str()) != USCOPE_OK) {
    std::fprintf(stderr, "npu_tb: cannot read back %s: %s\n", t->path.c_str(), uscope_last_error());
    return bad + 1;
  }
  // Count the events by name.
  std::map<std::string, uint64_t> n;
  uint64_t last_t = 0;
  uscope_event_iter_t *it = nullptr;
  if (uscope_reader_events_in_range(r, &it, 0, UINT64_MAX) != USCOPE_OK) bad++;
  uscope_event_t ev;
  while (it && uscope_event_iter_next(it, &ev) == USCOPE_OK) {
    uscope_event_type_info_t info{};
    if (uscope_reader_event_type(r, &info, ev.event_type_id) != USCOPE_OK) bad++;
    n[info.name ? info.name : "?"]++;
    last_t = ev.time_ps;
  }
  uscope_event_iter_free(it);

  auto expect = [&](const char *what, uint64_t got, uint64_t want) {
    if (got != want) {
      std::fprintf(stderr, "npu_tb: trace: %s = %" PRIu64 ", expected %" PRIu64 "\n", what, got, want);
      bad++;
    }
  };
  // Every command is enqueued, ends, and completes its token; engine and job intervals pair up.
  expect("cmd_enqueue events", n["cmd_enqueue"], e.commands);
  expect("cmd_end events", n["cmd_end"], e.commands);
  expect("token_complete events", n["token_complete"], e.commands);
  expect("te_end events (= te_start)", n["te_end"], n["te_start"]);
  expect("ve_end events (= ve_start)", n["ve_end"], n["ve_start"]);
  expect("dma_end events (= dma_start)", n["dma_end"], n["dma_start"]);
  expect("job_done events (= job_issue)", n["job_done"], n["job_issue"]);
  expect("sram_conflict events", n["sram_conflict"], e.conflicts);
  if (n["te_start"] == 0 || n["ve_start"] == 0 || n["dma_start"] == 0 || n["error"] == 0 ||
      n["irq_emit"] == 0 || n["warn"] == 0 || n["sram_access"] == 0) {
    std::fprintf(stderr, "npu_tb: trace: an expected event kind is missing\n");
    bad++;
  }
  // The protocol's counters at the end equal the perf registers.
  uscope_state_t *st = nullptr;
  if (uscope_reader_state_at(r, &st, last_t) == USCOPE_OK) {
    auto counter = [&](int idx) {
      uint64_t v = 0;
      if (uscope_state_slot_field(st, &v, t->ids.counters[idx], 0, 0) != USCOPE_OK) bad++;
      return v;
    };
    expect("counter macs", counter(USCOPE_NPU_COUNTER_MACS), e.macs);
    expect("counter dma_bytes", counter(USCOPE_NPU_COUNTER_DMA_BYTES), e.dma_bytes);
    expect("counter sram_conflicts", counter(USCOPE_NPU_COUNTER_SRAM_CONFLICTS), e.conflicts);
    expect("counter cmds_done", counter(USCOPE_NPU_COUNTER_CMDS_DONE), e.commands);
    expect("counter tokens_done", counter(USCOPE_NPU_COUNTER_TOKENS_DONE), e.commands);
    expect("counter sram_accesses (= events)", counter(USCOPE_NPU_COUNTER_SRAM_ACCESSES),
           n["sram_access"]);
    // Nothing left in flight.
    uint32_t occ = 0;
    if (uscope_state_occupancy(st, &occ, t->ids.cmd_queue) != USCOPE_OK) bad++;
    expect("cmd_queue occupancy at the end", occ, 0);
    if (uscope_state_occupancy(st, &occ, t->ids.te) != USCOPE_OK) bad++;
    expect("te occupancy at the end", occ, 0);
    if (uscope_state_occupancy(st, &occ, t->ids.ve) != USCOPE_OK) bad++;
    expect("ve occupancy at the end", occ, 0);
    if (uscope_state_occupancy(st, &occ, t->ids.dma) != USCOPE_OK) bad++;
    expect("dma occupancy at the end", occ, 0);
    uscope_state_free(st);
  } else {
    std::fprintf(stderr, "npu_tb: trace: state_at failed: %s\n", uscope_reader_error(r));
    bad++;
  }
  std::printf("npu_tb: trace %s: %" PRIu64 " commands, %" PRIu64 " TE jobs, %" PRIu64
              " VE jobs, %" PRIu64 " DMA transfers, %" PRIu64 " SRAM accesses, %" PRIu64
              " conflicts, %" PRIu64 " errors, %" PRIu64 " warnings\n",
              t->path.c_str(), n["cmd_end"], n["te_end"], n["ve_end"], n["dma_end"],
              n["sram_access"], n["sram_conflict"], n["error"], n["warn"]);
  uscope_reader_close(r);
  return bad;
}

void npu_tb_trace_close(npu_tb_tracer_t *t) {
  if (!t) return;
  finish(t);
  uscope_npu_free(t->npu);
  delete t;
}

#endif
