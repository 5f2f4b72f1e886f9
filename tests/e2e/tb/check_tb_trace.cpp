// check_tb_trace — the end-to-end check of the testbench SoC's trace (verilator_tb/).
//
//   check_tb_trace <trace.uscope> <report.json>
//
// The report is sim_main's scoreboard: the core's own counters, the NPU's PERF registers and
// what the firmware says it requested. This program reads the trace only through libuscope's
// public reader API (uscope_reader_open, segment_items, state_at, ...) and checks that it tells
// the same story:
//
//   core0  retired entities == the core's instret, and committed_insns == instret;
//          every retired entity entered fetch, decode, execute, memory, writeback, in that
//          order, at strictly increasing times, and retired after writeback;
//          flushed entities == the core's squashed count, none of them retires;
//          load-use stall events == the core's load-use stalls;
//          the DUT property cpu.elf_path names the firmware: an absolute path to an existing
//          RISC-V ELF file (so that timelines of this trace can show its disassembly);
//   bus0   every issued transaction completes (none is left in the catalog), its stages are
//          request <= grant <= response in time, and every transaction of the NPU DMA's data
//          channel moves exactly the bytes the firmware requested;
//   npu0   every TE command's MACs (the mac_count of its te_end events: one per tile job) ==
//          its m * n * k (te_start), the TE commands are the firmware's MATMULs, and their MACs
//          add up to the firmware's == PERF_MACS; DMA commands move the firmware's DMA bytes ==
//          PERF_DMA_BYTES; every pushed command is enqueued and done; the npu0 counters (macs,
//          dma_bytes, sram_conflicts) end equal to the PERF registers.
//
// Events are decoded by field name (uscope_reader_event_field), never by hard-coded offsets, and
// scopes are matched by name, so the check follows the schema the protocol helpers declare.
// Exit status 0 when every check holds; each failure is printed.

#include <uscope/uscope.h>

#include <simdjson.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tb_check.hpp"

namespace {

// cpu.elf_path: absolute, and an existing little-endian RISC-V ELF (the gABI's e_ident, then
// e_machine at offset 18 = EM_RISCV, 243).
void check_elf_path(uscope_reader_t *r) {
  const char *elf = nullptr;
  const uscope_status_t st = uscope_reader_dut_lookup(r, &elf, "cpu.elf_path");
  CHECK(st == USCOPE_OK && elf != nullptr, "no DUT property cpu.elf_path: %s", uscope_last_error());
  if (st != USCOPE_OK || elf == nullptr) return;
  CHECK(elf[0] == '/', "cpu.elf_path '%s' is not absolute", elf);
  FILE *f = std::fopen(elf, "rb");
  CHECK(f != nullptr, "cpu.elf_path '%s' cannot be opened: %s", elf, std::strerror(errno));
  if (f == nullptr) return;
  unsigned char h[20] = {};
  const size_t n = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  CHECK(n == sizeof h && std::memcmp(h, "\x7f" "ELF", 4) == 0, "cpu.elf_path '%s' is not an ELF file", elf);
  CHECK(h[5] == 1 && (h[18] | (h[19] << 8)) == 243, "cpu.elf_path '%s' is not a little-endian RISC-V ELF (e_machine %u)",
        elf, static_cast<unsigned>(h[18] | (h[19] << 8)));
}

// A cpu entity's life: from the slot set that creates it to the clear that ends it.
struct Entity {
  bool alive = false;
  bool flushed = false;
  uint64_t stage_time[5] = {};
  uint32_t stages_seen = 0;  // bit s: stage s entered
  int last_stage = -1;
  bool order_ok = true;
};

// A bus transaction's life.
struct Txn {
  bool alive = false;
  uint64_t src_port = 0, tag = 0, opcode = 0;
  uint64_t beat_bytes = 0;
  uint64_t t_stage[3] = {};
  uint32_t stages_seen = 0;
};

uint64_t json_u64(simdjson::dom::element doc, const char *path) {
  uint64_t v = 0;
  auto err = doc.at_pointer(path).get(v);
  if (err) {
    std::fprintf(stderr, "check_tb_trace: report has no %s\n", path);
    std::exit(2);
  }
  return v;
}

// --compare: the runs of the same firmware, µScope-traced and untraced, must simulate exactly the
// same thing: tracing may cost time, never change behaviour. The FST run may be a +bench_cycles
// window (a full FST dump of the workload takes minutes); it must end without a failure. Prints
// the speed of each mode (not asserted: it depends on the machine).
int compare(int argc, char **argv) {
  static const char *const kModes[] = {"µScope trace", "untraced", "FST"};
  simdjson::dom::parser parsers[3];
  simdjson::dom::element rep[3];
  for (int i = 0; i < 3; ++i) {
    if (auto err = parsers[i].load(argv[i]).get(rep[i])) {
      std::fprintf(stderr, "check_tb_trace: %s: %s\n", argv[i], simdjson::error_message(err));
      return 2;
    }
    const uint64_t status = json_u64(rep[i], "/status");
    CHECK(status == 0, "%s run ended with status %" PRIu64, kModes[i], status);
  }
  bool fst_window = false;
  if (rep[2]["window"].get(fst_window)) fst_window = false;
  static const char *const kSame[] = {"/core/cycles", "/core/instret", "/core/flushes",
                                      "/core/squashed", "/core/load_use_stalls",
                                      "/core/mem_wait_cycles", "/npu/macs", "/npu/dma_bytes",
                                      "/npu/conflicts", "/sim/core_edges", "/sim/npu_edges"};
  for (const char *path : kSame) {
    const uint64_t a = json_u64(rep[0], path), b = json_u64(rep[1], path), c = json_u64(rep[2], path);
    CHECK(a == b, "%s differs: traced %" PRIu64 ", untraced %" PRIu64, path, a, b);
    CHECK(fst_window || b == c, "%s differs: untraced %" PRIu64 ", FST %" PRIu64, path, b, c);
  }
  const uint64_t instret = json_u64(rep[1], "/core/instret"), core_cycles = json_u64(rep[1], "/core/cycles");
  std::printf("workload: %" PRIu64 " core cycles, %" PRIu64 " instructions retired, IPC %.3f\n",
              core_cycles, instret, core_cycles ? double(instret) / double(core_cycles) : 0.0);
  std::printf("%-14s %12s %10s %16s %12s\n", "mode", "core cycles", "wall s", "core cycles/s",
              "vs untraced");
  double base = 0;
  for (int i : {1, 0, 2}) {
    double wall = 0;
    if (rep[i].at_pointer("/sim/wall_s").get(wall)) wall = 0;
    const uint64_t cycles = json_u64(rep[i], "/sim/core_edges");
    const double cps = wall > 0 ? double(cycles) / wall : 0.0;
    if (i == 1) base = cps;
    std::printf("%-14s %12" PRIu64 " %10.3f %16.0f %11.2fx%s\n", kModes[i], cycles, wall, cps,
                cps > 0 ? base / cps : 0.0, i == 2 && fst_window ? "  (+bench_cycles window)" : "");
  }
  const uint64_t trace_bytes = json_u64(rep[0], "/trace/file_bytes");
  const uint64_t traced_cycles = json_u64(rep[0], "/sim/core_edges");
  std::printf("µScope file: %" PRIu64 " bytes, %.1f bytes per core cycle\n", trace_bytes,
              traced_cycles ? double(trace_bytes) / double(traced_cycles) : 0.0);
  if (argc > 3) {
    if (FILE *f = std::fopen(argv[3], "rb")) {
      std::fseek(f, 0, SEEK_END);
      const long fst_bytes = std::ftell(f);
      std::fclose(f);
      const uint64_t fst_cycles = json_u64(rep[2], "/sim/core_edges");
      std::printf("FST file:    %ld bytes, %.1f bytes per core cycle\n", fst_bytes,
                  fst_cycles ? double(fst_bytes) / double(fst_cycles) : 0.0);
    }
  }
  if (g_failures) return 1;
  std::printf("check_tb_trace --compare: OK\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  g_prog = "check_tb_trace";
  if (argc >= 5 && std::strcmp(argv[1], "--compare") == 0) return compare(argc - 2, argv + 2);
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: check_tb_trace <trace.uscope> <report.json>\n"
                 "       check_tb_trace --compare <traced.json> <untraced.json> <fst.json> [wave.fst]\n");
    return 2;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  if (auto err = parser.load(argv[2]).get(report)) {
    std::fprintf(stderr, "check_tb_trace: %s: %s\n", argv[2], simdjson::error_message(err));
    return 2;
  }
  bool pass = false;
  if (report["pass"].get(pass) || !pass) {
    std::fprintf(stderr, "check_tb_trace: the run did not pass (firmware failure or timeout)\n");
    return 1;
  }
  const uint64_t instret = json_u64(report, "/core/instret");
  const uint64_t squashed = json_u64(report, "/core/squashed");
  const uint64_t load_use = json_u64(report, "/core/load_use_stalls");
  const uint64_t mem_wait = json_u64(report, "/core/mem_wait_cycles");
  const uint64_t flushes = json_u64(report, "/core/flushes");
  const uint64_t npu_macs = json_u64(report, "/npu/macs");
  const uint64_t npu_dma_bytes = json_u64(report, "/npu/dma_bytes");
  const uint64_t npu_conflicts = json_u64(report, "/npu/conflicts");
  const uint64_t fw_macs = json_u64(report, "/fw/macs");
  const uint64_t fw_dma_bytes = json_u64(report, "/fw/dma_bytes");
  const uint64_t fw_matmuls = json_u64(report, "/fw/matmuls");
  const uint64_t fw_dma_cmds = json_u64(report, "/fw/dma_cmds");
  const uint64_t fw_npu_cmds = json_u64(report, "/fw/npu_cmds");

  uscope_reader_t *r = nullptr;
  uscope_status_t st = uscope_reader_open(&r, argv[1]);
  if (st != USCOPE_OK) die(argv[1], st);
  CHECK(uscope_is_complete(r) == 1, "the trace is not finalized");
  check_elf_path(r);

  const Schema sc = Schema::load(r);

  // core0
  const uint16_t entities = sc.storage("core0", "entities");
  const uint16_t committed = sc.storage("core0", "committed_insns");
  const EventLayout cpu_stage = sc.event("core0", "stage_transition");
  const EventLayout cpu_flush = sc.event("core0", "flush");
  const EventLayout cpu_stall = sc.event("core0", "stall");
  const uint16_t stall_load_use = sc.enum_value("stall_reason", "load_use");
  // bus0
  const uint16_t txns = sc.storage("bus0", "transactions");
  const uint16_t f_src = sc.field(txns, "src_port");
  const uint16_t f_tag = sc.field(txns, "tag");
  const uint16_t f_opcode = sc.field(txns, "opcode");
  const EventLayout bus_stage = sc.event("bus0", "stage_transition");
  const EventLayout bus_beat = sc.event("bus0", "beat");
  // npu0
  const EventLayout te_start = sc.event("npu0", "te_start");
  const EventLayout te_end = sc.event("npu0", "te_end");
  const EventLayout dma_start = sc.event("npu0", "dma_start");
  const EventLayout cmd_enqueue = sc.event("npu0", "cmd_enqueue");
  const uint16_t npu_macs_ctr = sc.storage("npu0", "macs");
  const uint16_t npu_dma_ctr = sc.storage("npu0", "dma_bytes");
  const uint16_t npu_conflicts_ctr = sc.storage("npu0", "sram_conflicts");
  const uint16_t npu_cmds_ctr = sc.storage("npu0", "cmds_done");

  uscope_storage_info_t ent_info{};
  CHECK(uscope_reader_storage(r, &ent_info, entities) == USCOPE_OK, "%s", uscope_last_error());
  std::vector<Entity> ents(ent_info.num_slots);
  uscope_storage_info_t txn_info{};
  CHECK(uscope_reader_storage(r, &txn_info, txns) == USCOPE_OK, "%s", uscope_last_error());
  std::vector<Txn> tx(txn_info.num_slots);

  uint64_t retired = 0, flushed = 0, order_bad = 0, fetched = 0, load_use_events = 0,
           mem_wait_events = 0, last_time = 0;
  uint64_t txn_issued = 0, txn_completed = 0, txn_order_bad = 0, dma_data_bytes = 0,
           dma_data_txns = 0, core_txns = 0;
  uint64_t te_macs = 0, te_bad = 0, dma_cmds = 0, dma_bytes = 0, enqueued = 0, te_jobs = 0;
  std::map<uint64_t, uint64_t> te_expected;  // cmd_id -> m*n*k
  std::map<uint64_t, uint64_t> te_done;      // cmd_id -> sum of its jobs' mac_count

  uscope_file_info_t fi{};
  fi.struct_size = sizeof fi;
  CHECK(uscope_reader_info(r, &fi) == USCOPE_OK, "%s", uscope_last_error());
  for (uint32_t seg = 0; seg < fi.num_segments; ++seg) {
    uscope_item_iter_t *it = nullptr;
    st = uscope_reader_segment_items(r, &it, seg);
    if (st != USCOPE_OK) die("uscope_reader_segment_items", st);
    uscope_item_t item{};
    while ((st = uscope_item_iter_next(it, &item)) == USCOPE_OK) {
      CHECK(item.time_ps >= last_time, "time goes backwards at %" PRIu64, item.time_ps);
      last_time = item.time_ps;
      if (!item.is_event) {
        if (item.storage_id == entities) {
          Entity &e = ents.at(item.slot);
          if (item.action == 1 && item.field == 0) {  // fetch: a new lifetime
            CHECK(!e.alive, "entity %u fetched while alive at %" PRIu64, item.slot, item.time_ps);
            e = Entity{};
            e.alive = true;
            ++fetched;
          } else if (item.action == 2) {  // retire or flush
            CHECK(e.alive, "entity %u cleared while not alive", item.slot);
            if (!e.flushed) {
              ++retired;
              const bool all = e.stages_seen == 0x1F;
              if (!all || !e.order_ok || item.time_ps <= e.stage_time[4]) {
                if (order_bad++ < 5)
                  std::fprintf(stderr,
                               "entity %u retired at %" PRIu64 " with stages 0x%x (order %s), times "
                               "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                               item.slot, item.time_ps, e.stages_seen, e.order_ok ? "ok" : "bad",
                               e.stage_time[0], e.stage_time[1], e.stage_time[2], e.stage_time[3],
                               e.stage_time[4]);
              }
            }
            e.alive = false;
          }
        } else if (item.storage_id == txns) {
          Txn &t = tx.at(item.slot);
          if (item.action == 1 && item.field == 0) {
            CHECK(!t.alive, "transaction %u issued while alive", item.slot);
            t = Txn{};
            t.alive = true;
            ++txn_issued;
          } else if (item.action == 1 && item.field == f_src) {
            t.src_port = item.value;
          } else if (item.action == 1 && item.field == f_tag) {
            t.tag = item.value;
          } else if (item.action == 1 && item.field == f_opcode) {
            t.opcode = item.value;
          } else if (item.action == 2) {
            CHECK(t.alive, "transaction %u completed while not alive", item.slot);
            ++txn_completed;
            const bool order = t.stages_seen == 7 && t.t_stage[0] <= t.t_stage[1] &&
                               t.t_stage[1] <= t.t_stage[2] && t.t_stage[0] < t.t_stage[2];
            if (!order && txn_order_bad++ < 5)
              std::fprintf(stderr, "transaction %u: stages 0x%x at %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                           item.slot, t.stages_seen, t.t_stage[0], t.t_stage[1], t.t_stage[2]);
            if (t.src_port == 1 && t.tag == 1) {
              dma_data_bytes += t.beat_bytes;
              ++dma_data_txns;
            }
            if (t.src_port == 0) ++core_txns;
            t.alive = false;
          }
        }
        continue;
      }
      const uint8_t *p = item.payload;
      const uint16_t ev = item.event_type_id;
      if (ev == cpu_stage.id) {
        Entity &e = ents.at(cpu_stage.get(p, "entity_id"));
        const int s = (int)cpu_stage.get(p, "stage");
        CHECK(e.alive, "stage_transition of a dead entity");
        if (s != e.last_stage + 1 || (s > 0 && item.time_ps <= e.stage_time[s - 1])) e.order_ok = false;
        e.stage_time[s] = item.time_ps;
        e.stages_seen |= 1u << s;
        e.last_stage = s;
      } else if (ev == cpu_flush.id) {
        Entity &e = ents.at(cpu_flush.get(p, "entity_id"));
        CHECK(e.alive && !e.flushed, "flush of an entity not in flight");
        e.flushed = true;
        ++flushed;
      } else if (ev == cpu_stall.id) {
        if (cpu_stall.get(p, "reason") == stall_load_use) ++load_use_events;
        else ++mem_wait_events;
      } else if (ev == bus_stage.id) {
        Txn &t = tx.at(bus_stage.get(p, "txn_id"));
        const unsigned s = (unsigned)bus_stage.get(p, "stage");
        CHECK(t.alive && s < 3, "bus stage_transition of a dead transaction");
        if (s < 3) {
          t.t_stage[s] = item.time_ps;
          t.stages_seen |= 1u << s;
        }
      } else if (ev == bus_beat.id) {
        Txn &t = tx.at(bus_beat.get(p, "txn_id"));
        CHECK(t.alive, "beat of a dead transaction");
        t.beat_bytes += bus_beat.get(p, "data_bytes");
      } else if (ev == te_start.id) {
        // One te_start per tile job, each with the command's m, n, k.
        const uint64_t m = te_start.get(p, "m"), n = te_start.get(p, "n"), k = te_start.get(p, "k");
        te_expected[te_start.get(p, "cmd_id")] = m * n * k;
      } else if (ev == te_end.id) {
        const uint64_t macs = te_end.get(p, "mac_count");
        te_done[te_end.get(p, "cmd_id")] += macs;
        te_macs += macs;
        ++te_jobs;
      } else if (ev == dma_start.id) {
        ++dma_cmds;
        dma_bytes += dma_start.get(p, "size_bytes");
      } else if (ev == cmd_enqueue.id) {
        ++enqueued;
      }
    }
    if (st != USCOPE_DONE) die("uscope_item_iter_next", st);
    uscope_item_iter_free(it);
  }

  // The final state: committed_insns, and nothing left in flight on the bus.
  uscope_state_t *end = nullptr;
  st = uscope_reader_state_at(r, &end, fi.last_time_ps);
  if (st != USCOPE_OK) die("uscope_reader_state_at", st);
  uint64_t committed_count = 0;
  CHECK(uscope_state_slot_field(end, &committed_count, committed, 0, 0) == USCOPE_OK, "%s", uscope_last_error());
  uint32_t txn_left = 0;
  CHECK(uscope_state_occupancy(end, &txn_left, txns) == USCOPE_OK, "%s", uscope_last_error());
  uint64_t ctr_macs = 0, ctr_dma = 0, ctr_conflicts = 0, ctr_cmds = 0;
  CHECK(uscope_state_slot_field(end, &ctr_macs, npu_macs_ctr, 0, 0) == USCOPE_OK, "%s", uscope_last_error());
  CHECK(uscope_state_slot_field(end, &ctr_dma, npu_dma_ctr, 0, 0) == USCOPE_OK, "%s", uscope_last_error());
  CHECK(uscope_state_slot_field(end, &ctr_conflicts, npu_conflicts_ctr, 0, 0) == USCOPE_OK, "%s", uscope_last_error());
  CHECK(uscope_state_slot_field(end, &ctr_cmds, npu_cmds_ctr, 0, 0) == USCOPE_OK, "%s", uscope_last_error());
  uscope_state_free(end);

  for (const auto &[cmd, macs] : te_done) {
    auto exp = te_expected.find(cmd);
    if ((exp == te_expected.end() || exp->second != macs) && te_bad++ < 5)
      std::fprintf(stderr, "TE command %" PRIu64 ": %" PRIu64 " MACs, m*n*k %" PRIu64 "\n", cmd, macs,
                   exp == te_expected.end() ? 0 : exp->second);
  }
  const uint64_t te_cmds = te_done.size();
  CHECK(te_expected.size() == te_cmds, "%zu TE commands started, %" PRIu64 " finished",
        te_expected.size(), te_cmds);

  std::printf("core0: %" PRIu64 " fetched, %" PRIu64 " retired, %" PRIu64 " flushed, %" PRIu64
              " load-use and %" PRIu64 " bus-wait stall events\n",
              fetched, retired, flushed, load_use_events, mem_wait_events);
  std::printf("bus0:  %" PRIu64 " transactions issued, %" PRIu64 " completed (%" PRIu64 " by the core), "
              "%" PRIu64 " DMA data transactions moving %" PRIu64 " bytes\n",
              txn_issued, txn_completed, core_txns, dma_data_txns, dma_data_bytes);
  std::printf("npu0:  %" PRIu64 " commands enqueued, %" PRIu64 " TE commands in %" PRIu64 " tile jobs (%" PRIu64
              " MACs), %" PRIu64 " DMA commands (%" PRIu64 " bytes)\n",
              enqueued, te_cmds, te_jobs, te_macs, dma_cmds, dma_bytes);

  CHECK(retired == instret, "retired entities %" PRIu64 " != core instret %" PRIu64, retired, instret);
  CHECK(committed_count == instret, "committed_insns %" PRIu64 " != instret %" PRIu64, committed_count,
        instret);
  CHECK(order_bad == 0, "%" PRIu64 " retired entities did not pass fetch<decode<execute<memory<writeback",
        order_bad);
  CHECK(flushed == squashed, "flush events %" PRIu64 " != squashed instructions %" PRIu64, flushed, squashed);
  CHECK(fetched == retired + flushed, "fetched %" PRIu64 " != retired + flushed", fetched);
  CHECK(flushes > 0 && load_use > 0, "the workload should have both flushes and load-use stalls");
  CHECK(load_use_events == load_use, "load-use stall events %" PRIu64 " != core count %" PRIu64,
        load_use_events, load_use);
  CHECK(mem_wait_events == mem_wait, "bus-wait stall events %" PRIu64 " != core count %" PRIu64,
        mem_wait_events, mem_wait);
  CHECK(txn_issued == txn_completed && txn_left == 0,
        "%" PRIu64 " transactions issued, %" PRIu64 " completed, %u left in flight", txn_issued,
        txn_completed, txn_left);
  CHECK(txn_order_bad == 0, "%" PRIu64 " transactions out of request<=grant<=response order", txn_order_bad);
  CHECK(te_bad == 0, "%" PRIu64 " TE commands whose MACs != m*n*k", te_bad);
  CHECK(te_cmds == fw_matmuls, "TE commands %" PRIu64 " != firmware MATMULs %" PRIu64, te_cmds, fw_matmuls);
  CHECK(te_macs == fw_macs && fw_macs == npu_macs, "MACs: trace %" PRIu64 ", firmware %" PRIu64
        ", PERF_MACS %" PRIu64, te_macs, fw_macs, npu_macs);
  CHECK(dma_cmds == fw_dma_cmds, "DMA commands %" PRIu64 " != firmware's %" PRIu64, dma_cmds, fw_dma_cmds);
  CHECK(dma_bytes == fw_dma_bytes && fw_dma_bytes == npu_dma_bytes,
        "DMA bytes: npu0 trace %" PRIu64 ", firmware %" PRIu64 ", PERF_DMA_BYTES %" PRIu64, dma_bytes,
        fw_dma_bytes, npu_dma_bytes);
  CHECK(dma_data_bytes == fw_dma_bytes, "DMA data bytes on bus0 %" PRIu64 " != firmware's %" PRIu64,
        dma_data_bytes, fw_dma_bytes);
  CHECK(enqueued == fw_npu_cmds, "commands enqueued %" PRIu64 " != firmware pushes %" PRIu64, enqueued,
        fw_npu_cmds);
  CHECK(fw_matmuls > 0 && fw_dma_cmds > 0, "the firmware ran no NPU work");
  // The npu0 counters, as a viewer shows them, against the PERF registers.
  CHECK(ctr_macs == npu_macs && ctr_dma == npu_dma_bytes && ctr_conflicts == npu_conflicts,
        "npu0 counters macs %" PRIu64 ", dma_bytes %" PRIu64 ", sram_conflicts %" PRIu64
        " != PERF %" PRIu64 ", %" PRIu64 ", %" PRIu64,
        ctr_macs, ctr_dma, ctr_conflicts, npu_macs, npu_dma_bytes, npu_conflicts);
  CHECK(ctr_cmds == fw_npu_cmds, "npu0 cmds_done %" PRIu64 " != firmware pushes %" PRIu64, ctr_cmds,
        fw_npu_cmds);

  uscope_reader_close(r);
  if (g_failures) {
    std::fprintf(stderr, "check_tb_trace: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("check_tb_trace: OK\n");
  return 0;
}
