// Drives tests/dpi/sv/pccx_tb.sv under Verilator, then reads the .pccx it
// wrote back with libuscope's pccx reader (strict checksum) and checks every
// event. Prints "pccx_tb: OK" on success (ctest DpiPccxVerilator).
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "Vpccx_tb.h"
#include "pccx/pccx.h"
#include "verilated.h"

namespace {
constexpr uint64_t kCycles = 64;
int failures = 0;
#define EXPECT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "pccx_sim_main.cpp:%d: expected %s\n", __LINE__, #cond); \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)
}  // namespace

int main(int argc, char **argv) {
  std::string path;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "+pccx=", 6) == 0) path = argv[i] + 6;
  if (path.empty()) {
    std::fprintf(stderr, "usage: %s +pccx=<file>\n", argv[0]);
    return 2;
  }
  const std::unique_ptr<VerilatedContext> ctx{new VerilatedContext};
  ctx->commandArgs(argc, argv);
  const std::unique_ptr<Vpccx_tb> top{new Vpccx_tb{ctx.get()}};
  top->clk = 0;
  top->eval();
  for (uint64_t k = 0; k < kCycles; ++k) {
    ctx->time(k * 1000);
    top->clk = 1;
    top->eval();
    ctx->time(k * 1000 + 500);
    top->clk = 0;
    top->eval();
  }
  top->final();
  EXPECT(top->errors == 0);

  pccx_reader_t *r = nullptr;
  if (pccx_reader_open(&r, path.c_str(), PCCX_OPEN_STRICT_CHECKSUM) != USCOPE_OK) {
    std::fprintf(stderr, "cannot read %s: %s\n", path.c_str(), uscope_last_error());
    return 1;
  }
  pccx_header_t h{};
  h.struct_size = sizeof h;
  EXPECT(pccx_reader_header(r, &h) == USCOPE_OK);
  EXPECT(std::strcmp(h.pccx_lab_version, "pccx_tb") == 0);
  EXPECT(h.cores == 4 && h.mac_rows == 8 && h.mac_cols == 8);
  EXPECT(h.checksum_status == PCCX_CHECKSUM_OK);
  EXPECT(h.total_cycles == kCycles * 10 && h.cycles == kCycles * 10);
  const uint64_t n = pccx_reader_event_count(r);
  EXPECT(n == 1 + kCycles + 2 * (kCycles / 4));
  uint64_t counts[PCCX_EVENT_TYPE_COUNT] = {};
  for (uint64_t i = 0; i < n; ++i) {
    pccx_event_t e{};
    EXPECT(pccx_reader_event(r, &e, i) == USCOPE_OK);
    ++counts[e.type_id];
    if (e.type_id == PCCX_EVENT_API_CALL) EXPECT(e.api_name && std::strcmp(e.api_name, "uca_init") == 0);
    else EXPECT(e.api_name == nullptr);
    if (e.type_id == PCCX_EVENT_MAC_COMPUTE) EXPECT(e.duration == 8 && e.core_id == (e.start_cycle / 10) % 4);
  }
  EXPECT(counts[PCCX_EVENT_MAC_COMPUTE] == kCycles);
  EXPECT(counts[PCCX_EVENT_DMA_READ] == kCycles / 4 && counts[PCCX_EVENT_DMA_WRITE] == kCycles / 4);
  EXPECT(counts[PCCX_EVENT_API_CALL] == 1);
  pccx_reader_close(r);
  if (failures) {
    std::fprintf(stderr, "pccx_tb: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("pccx_tb: OK, %llu events written from SV and read back\n", static_cast<unsigned long long>(n));
  return 0;
}
