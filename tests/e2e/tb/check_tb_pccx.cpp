// check_tb_pccx — the testbench's .pccx (written beside its µScope trace, sim_main +pccx) against
// that µScope trace.
//
//   check_tb_pccx <tb.uscope> <tb.pccx>
//
// The .pccx is read with libuscope's pccx reader with the strict checksum flag (so the checksum
// must verify), and:
//   - the header says 4x4 MACs, 2 cores (0 = TE, 1 = DMA), 800 MHz, bincode;
//   - MAC_COMPUTE events == the µScope trace's TE tiles (npu0 te_end events), all on core 0,
//     and their durations are, as a multiset, the te_end latency_cycles;
//   - DMA_READ + DMA_WRITE events == the DMA transfers (npu0 dma_end events), on core 1, and
//     their durations per direction are the latency_cycles of the DMA_READ / DMA_WRITE job_done
//     events;
//   - SYSTOLIC_STALL events (the TE waiting on the SRAM arbiter) exist, on core 0, do not
//     overlap, and each lies inside one MAC_COMPUTE (its tile);
//   - total_cycles == the max end cycle of the events.
// Exit 0 when every check holds.
#include <pccx/pccx.h>
#include <uscope/uscope.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tb_check.hpp"


int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: check_tb_pccx <tb.uscope> <tb.pccx>\n");
    return 2;
  }
  g_prog = "check_tb_pccx";
  // ── the µScope side: npu0's TE tiles and DMA transfers ──
  uscope_reader_t *r = nullptr;
  uscope_status_t st = uscope_reader_open(&r, argv[1]);
  if (st != USCOPE_OK) die(argv[1], st);
  const Schema sc = Schema::load(r);
  const EventLayout te_end = sc.event("npu0", "te_end");
  const EventLayout dma_end = sc.event("npu0", "dma_end");
  const EventLayout job_done = sc.event("npu0", "job_done");
  std::vector<uint64_t> te_lat, dma_rd_lat, dma_wr_lat;
  uint64_t dma_ends = 0;
  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  if ((st = uscope_reader_info(r, &fi)) != USCOPE_OK) die("file_info", st);
  for (uint32_t seg = 0; seg < fi.num_segments; ++seg) {
    uscope_item_iter_t *it = nullptr;
    if ((st = uscope_reader_segment_items(r, &it, seg)) != USCOPE_OK) die("segment_items", st);
    uscope_item_t item{};
    while ((st = uscope_item_iter_next(it, &item)) == USCOPE_OK) {
      if (!item.is_event) continue;
      const int ev = item.event_type_id;
      if (ev == te_end.id) {
        te_lat.push_back(te_end.get(item.payload, "latency_cycles"));
      } else if (ev == dma_end.id) {
        ++dma_ends;
      } else if (ev == job_done.id) {
        const char *s = nullptr;
        uint32_t len = 0;
        if (uscope_reader_string(r, &s, &len, uint32_t(job_done.get(item.payload, "job_type"))) != USCOPE_OK)
          continue;
        const std::string t(s, len);
        if (t == "DMA_READ") dma_rd_lat.push_back(job_done.get(item.payload, "latency_cycles"));
        else if (t == "DMA_WRITE") dma_wr_lat.push_back(job_done.get(item.payload, "latency_cycles"));
      }
    }
    if (st != USCOPE_DONE) die("item_iter_next", st);
    uscope_item_iter_free(it);
  }
  uscope_reader_close(r);

  // ── the .pccx side ──
  pccx_reader_t *p = nullptr;
  if ((st = pccx_reader_open(&p, argv[2], PCCX_OPEN_STRICT_CHECKSUM)) != USCOPE_OK) die(argv[2], st);
  pccx_header_t h{};
  h.struct_size = sizeof h;
  if ((st = pccx_reader_header(p, &h)) != USCOPE_OK) die("pccx_reader_header", st);
  CHECK(h.checksum_status == PCCX_CHECKSUM_OK && h.checksum_present, "checksum does not verify");
  CHECK(h.encoding == PCCX_ENCODING_BINCODE, "encoding %s", h.encoding_name);
  CHECK(h.mac_rows == 4 && h.mac_cols == 4 && h.cores == 2 && h.clock_mhz == 800,
        "header mac %ux%u cores %u clock %u", h.mac_rows, h.mac_cols, h.cores, h.clock_mhz);
  std::vector<uint64_t> mac, rd, wr;
  std::vector<std::pair<uint64_t, uint64_t>> tiles, stalls;  // [start, end)
  uint64_t max_end = 0, bad_core = 0, other = 0;
  for (uint64_t i = 0; i < pccx_reader_event_count(p); ++i) {
    pccx_event_t e{};
    if ((st = pccx_reader_event(p, &e, i)) != USCOPE_OK) die("pccx_reader_event", st);
    max_end = std::max(max_end, e.start_cycle + e.duration);
    if (e.type_id == PCCX_EVENT_MAC_COMPUTE) {
      mac.push_back(e.duration);
      tiles.emplace_back(e.start_cycle, e.start_cycle + e.duration);
      bad_core += e.core_id != 0;
    } else if (e.type_id == PCCX_EVENT_SYSTOLIC_STALL) {
      stalls.emplace_back(e.start_cycle, e.start_cycle + e.duration);
      bad_core += e.core_id != 0;
    } else if (e.type_id == PCCX_EVENT_DMA_READ || e.type_id == PCCX_EVENT_DMA_WRITE) {
      (e.type_id == PCCX_EVENT_DMA_READ ? rd : wr).push_back(e.duration);
      bad_core += e.core_id != 1;
    } else {
      ++other;
    }
  }
  pccx_reader_close(p);
  for (auto *v : {&te_lat, &dma_rd_lat, &dma_wr_lat, &mac, &rd, &wr}) std::sort(v->begin(), v->end());
  std::sort(tiles.begin(), tiles.end());
  std::sort(stalls.begin(), stalls.end());
  uint64_t stall_cycles = 0, outside = 0, overlapping = 0, empty = 0;
  for (size_t i = 0; i < stalls.size(); ++i) {
    const auto [s, e] = stalls[i];
    stall_cycles += e - s;
    empty += e == s;
    if (i && s < stalls[i - 1].second) ++overlapping;
    // The tile that starts last at or before s must hold the whole stall.
    auto t = std::upper_bound(tiles.begin(), tiles.end(), std::make_pair(s, ~uint64_t{0}));
    if (t == tiles.begin() || std::prev(t)->second < e) ++outside;
  }
  uint64_t tile_cycles = 0;
  for (const auto &[s, e] : tiles) tile_cycles += e - s;

  std::printf("pccx:  %zu MAC_COMPUTE (TE tiles in the µScope trace: %zu), %zu DMA_READ + %zu DMA_WRITE "
              "(DMA transfers: %" PRIu64 "), %zu SYSTOLIC_STALL (%" PRIu64 " of %" PRIu64 " TE cycles), "
              "total_cycles %" PRIu64 ", checksum %s\n",
              mac.size(), te_lat.size(), rd.size(), wr.size(), dma_ends, stalls.size(), stall_cycles, tile_cycles,
              h.total_cycles, h.checksum_status == PCCX_CHECKSUM_OK ? "ok" : "BAD");
  CHECK(!mac.empty(), "no MAC_COMPUTE events");
  CHECK(mac.size() == te_lat.size(), "MAC_COMPUTE %zu != TE tiles %zu", mac.size(), te_lat.size());
  CHECK(mac == te_lat, "MAC_COMPUTE durations differ from te_end latency_cycles");
  CHECK(rd.size() + wr.size() == dma_ends, "DMA events %zu != DMA transfers %" PRIu64, rd.size() + wr.size(),
        dma_ends);
  CHECK(rd == dma_rd_lat && wr == dma_wr_lat, "DMA durations differ from the DMA job_done latency_cycles");
  CHECK(!stalls.empty(), "no SYSTOLIC_STALL events");
  CHECK(empty == 0 && overlapping == 0, "%" PRIu64 " empty and %" PRIu64 " overlapping stalls", empty, overlapping);
  CHECK(outside == 0, "%" PRIu64 " stalls outside every MAC_COMPUTE", outside);
  CHECK(stall_cycles < tile_cycles, "stall cycles %" PRIu64 " >= TE cycles %" PRIu64, stall_cycles, tile_cycles);
  CHECK(bad_core == 0, "%" PRIu64 " events on the wrong core", bad_core);
  CHECK(other == 0, "%" PRIu64 " events of other types", other);
  CHECK(h.total_cycles == max_end && h.cycles == max_end, "total_cycles %" PRIu64 " != max end %" PRIu64,
        h.total_cycles, max_end);
  if (g_failures) {
    std::fprintf(stderr, "check_tb_pccx: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("check_tb_pccx: OK\n");
  return 0;
}
