// Harness of the Verilator end-to-end test (tests/dpi/sv/dpi_tb.sv): drives
// the clock, brackets each rising edge with uscope_begin_cycle / end_cycle
// (except in +mode=cycle, where SV frames itself), lets SV close the writer in
// its final block, then reads the trace back and checks its exact contents.
//
// usage: dpi_tb_sim +mode=sv|json|cycle +trace=<out.uscope> [+json=<schema.json>]
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vdpi_tb.h"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"
#include "verilated.h"

namespace {

constexpr uint64_t kCycles = 40;
int failures = 0;

#define EXPECT(cond)                                                            \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "sim_main.cpp:%d: expected %s\n", __LINE__, #cond); \
      ++failures;                                                               \
    }                                                                           \
  } while (0)

std::string plusarg(int argc, char **argv, const char *key) {
  const std::string k = std::string("+") + key + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], k.c_str(), k.size()) == 0) return argv[i] + k.size();
  return "";
}

uint64_t field(uscope_reader_t *r, uint64_t t, uint16_t sid, uint16_t slot, uint16_t f) {
  uscope_state_t *st = nullptr;
  if (uscope_reader_state_at(r, &st, t) != USCOPE_OK) return UINT64_MAX;
  uint64_t v = UINT64_MAX;
  if (uscope_state_slot_field(st, &v, sid, slot, f) != USCOPE_OK) v = UINT64_MAX;
  uscope_state_free(st);
  return v;
}

uint64_t prop(uscope_reader_t *r, uint64_t t, uint16_t sid, uint16_t p) {
  uscope_state_t *st = nullptr;
  if (uscope_reader_state_at(r, &st, t) != USCOPE_OK) return UINT64_MAX;
  uint64_t v = UINT64_MAX;
  if (uscope_state_property(st, &v, sid, p) != USCOPE_OK) v = UINT64_MAX;
  uscope_state_free(st);
  return v;
}

uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

void check_trace(const std::string &path, const std::string &mode) {
  uscope_reader_t *r = nullptr;
  if (uscope_reader_open(&r, path.c_str()) != USCOPE_OK) {
    std::fprintf(stderr, "cannot read %s: %s\n", path.c_str(), uscope_last_error());
    ++failures;
    return;
  }
  EXPECT(uscope_is_complete(r) == 1);
  const char *v = nullptr;
  EXPECT(uscope_reader_dut_lookup(r, &v, "dut_name") == USCOPE_OK && std::strcmp(v, "demo_core") == 0);
  uint16_t rob = 0, regs = 0, ev_stage = 0, ev_done = 0;
  // Scope-qualified: the SV-declared schema has the cpu protocol's scope
  // "cpu0" beside "core0", with its own "rob" buffer and "stage_transition".
  EXPECT(uscope_reader_find_storage(r, &rob, "core0.rob") == USCOPE_OK && rob == 0);
  EXPECT(uscope_reader_find_storage(r, &regs, "regs") == USCOPE_OK && regs == 1);
  EXPECT(uscope_reader_find_event(r, &ev_stage, "core0.stage_transition") == USCOPE_OK);
  EXPECT(uscope_reader_find_event(r, &ev_done, "npu_done") == USCOPE_OK);
  if (mode != "json") {  // a plain name two scopes share is reported, never resolved to the first
    uint16_t any = 0;
    EXPECT(uscope_reader_find_storage(r, &any, "rob") == USCOPE_ERR_AMBIGUOUS);
    EXPECT(uscope_reader_find_event(r, &any, "stage_transition") == USCOPE_ERR_AMBIGUOUS);
    EXPECT(uscope_reader_find_storage(r, &any, "cpu0.rob") == USCOPE_OK && any != rob);
  }

  const uint64_t last = (kCycles - 1) * 1000;
  for (uint64_t k = kCycles - 16; k < kCycles; ++k) {  // the last write of each rob slot
    const uint16_t slot = static_cast<uint16_t>(k % 16);
    EXPECT(field(r, last, rob, slot, 0) == k);
    EXPECT(field(r, last, rob, slot, 1) == 0x1000 + k * 4);
    EXPECT(field(r, last, rob, slot, 2) == k % 5);
  }
  EXPECT(prop(r, last, rob, 0) == (kCycles - 1) % 16);
  for (uint16_t s = 0; s < 32; ++s) {  // slot_add 3 per visit
    uint64_t visits = 0;
    for (uint64_t k = 0; k < kCycles; ++k) visits += (k % 32 == s);
    EXPECT(field(r, last, regs, s, 0) == 3 * visits);
  }
  // Mid-run state: at cycle 10, slot 10 % 16 holds entity 10.
  EXPECT(field(r, 10000, rob, 10, 0) == 10);

  uscope_event_iter_t *it = nullptr;
  EXPECT(uscope_reader_events_in_range(r, &it, 0, UINT64_MAX) == USCOPE_OK);
  uint64_t n_stage = 0, n_done = 0;
  uscope_event_t ev{};
  while (it && uscope_event_iter_next(it, &ev) == USCOPE_OK) {
    if (ev.event_type_id == ev_stage) {
      const uint64_t k = n_stage++;
      EXPECT(ev.time_ps == k * 1000);
      EXPECT(ev.payload_size == 5);
      EXPECT(le(ev.payload, 4) == k && ev.payload[4] == k % 5);
    } else if (ev.event_type_id == ev_done) {
      const uint64_t k = 4 * n_done++;
      EXPECT(ev.time_ps == k * 1000);
      EXPECT(ev.payload_size == 7);
      EXPECT(le(ev.payload, 4) == k / 4 && le(ev.payload + 4, 2) == k && ev.payload[6] == 1);
    } else if (mode == "json") {
      ++failures;
      std::fprintf(stderr, "unexpected event type %u\n", ev.event_type_id);
    }
  }
  uscope_event_iter_free(it);
  EXPECT(n_stage == kCycles);
  EXPECT(n_done == kCycles / 4);

  if (mode != "json") {  // the cpu scope declared from SV
    EXPECT(uscope_reader_dut_lookup(r, &v, "cpu.vendor") == USCOPE_OK && std::strcmp(v, "tb") == 0);
    uint16_t committed = 0, entities = 0;
    EXPECT(uscope_reader_find_storage(r, &committed, "committed_insns") == USCOPE_OK);
    EXPECT(uscope_reader_find_storage(r, &entities, "entities") == USCOPE_OK);
    EXPECT(field(r, last, committed, 0, 0) == kCycles - 3);
    EXPECT(field(r, last, entities, (kCycles - 1) % 8, 1) == 0x80000000ull + (kCycles - 1) * 4);
  }
  uscope_reader_close(r);
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = plusarg(argc, argv, "mode");
  const std::string trace = plusarg(argc, argv, "trace");
  if (trace.empty() || (mode != "sv" && mode != "json" && mode != "cycle")) {
    std::fprintf(stderr, "usage: %s +mode=sv|json|cycle +trace=<file> [+json=<schema>]\n", argv[0]);
    return 2;
  }
  const std::unique_ptr<VerilatedContext> ctx{new VerilatedContext};
  ctx->commandArgs(argc, argv);
  const std::unique_ptr<Vdpi_tb> top{new Vdpi_tb{ctx.get()}};
  top->clk = 0;
  top->eval();  // initial blocks: SV builds the schema, opens and registers the writer

  void *w = uscope_handle("writer");
  if (!w) {
    std::fprintf(stderr, "no writer registered: %s\n", uscope_dpi_last_error());
    return 1;
  }
  uscope_writer_t *writer = static_cast<uscope_writer_t *>(w);
  const bool harness = mode != "cycle";
  for (uint64_t k = 0; k < kCycles; ++k) {
    ctx->time(k * 1000);
    if (harness) EXPECT(uscope_begin_cycle(writer, k * 1000) == USCOPE_OK);
    top->clk = 1;
    top->eval();
    if (harness) EXPECT(uscope_end_cycle(writer) == USCOPE_OK);
    ctx->time(k * 1000 + 500);
    top->clk = 0;
    top->eval();
  }
  top->final();  // SV closes the writer, which unregisters it
  EXPECT(uscope_handle("writer") == nullptr);
  EXPECT(top->errors == 0);
  check_trace(trace, mode);
  if (failures) {
    std::fprintf(stderr, "dpi_tb (%s): %d failure(s)\n", mode.c_str(), failures);
    return 1;
  }
  std::printf("dpi_tb (%s): OK, %llu cycles traced and read back\n", mode.c_str(),
              static_cast<unsigned long long>(kCycles));
  return 0;
}
