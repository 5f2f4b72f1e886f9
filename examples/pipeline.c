/*
 * pipeline.c — write a µScope trace of a toy 5-stage in-order RISC-V pipeline.
 *
 *   uscope_example_pipeline [output.uscope]      (default: pipeline.uscope)
 *
 * The "CPU" is a classic IF/ID/EX/MEM/WB pipeline running a small RV32I loop
 * (sum an array, then start over). It stalls one cycle on a load-use hazard
 * and flushes the two younger instructions when a branch or jump is taken in
 * EX. It follows the cpu protocol of the spec (chapter "µScope cpu
 * Protocol"), so that `uscope summary` and any cpu-aware viewer understand it:
 * every instruction is an entity whose entity_id is its slot of the sparse
 * `entities` catalog (§3): fetch makes the slot valid (entity_id, pc,
 * inst_bits), every stage it enters is a `stage_transition` event (§5.1),
 * retirement clears the slot and adds one to the `committed_insns` counter
 * (§3.4, §6), a squashed instruction gets a `flush` event before its slot is
 * cleared (§5.4), and a load-use bubble is a `stall` event (§5.5).
 *
 * Plain C; it uses only <uscope/uscope.h> and checks every status (the same
 * trace, with less code, comes from the helpers of <uscope/protocols.h>).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uscope/uscope.h>

#define NUM_CYCLES 10000u
#define PERIOD_PS 1000u
#define CHECKPOINT_PS 1000000u /* a segment every 1,000 cycles */
#define NUM_SLOTS 8u           /* at most 5 instructions are in flight */
#define RESET_PC 0x80000000u

/* ── status checking ─────────────────────────────────────────────────── */

static uscope_writer_t *g_writer; /* for error messages, once open */

static void check(uscope_status_t status, const char *what) {
  if (status == USCOPE_OK) return;
  fprintf(stderr, "pipeline: %s failed: %s (%d)\n  %s\n", what, uscope_status_str(status),
          (int)status, g_writer ? uscope_writer_error(g_writer) : uscope_last_error());
  if (g_writer) {
    /* Finalize what was recorded before the error; its status is the same error, so it is
       read only to satisfy the must-use mark (a (void) cast does not, in GNU C). */
    uscope_status_t closed = uscope_writer_close(g_writer);
    (void)closed;
    g_writer = NULL;
  }
  exit(1);
}
#define CHECK(call) check((call), #call)

/* ── a tiny RV32I subset: encoders and the program ─────────────────────── */

enum { X0 = 0, A0 = 10, A1 = 11, A2 = 12, A3 = 13 };

static uint32_t enc_i(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
  return ((uint32_t)imm & 0xFFFu) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
static uint32_t enc_r(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd) {
  return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | 0x33u;
}
static uint32_t enc_b(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3) {
  const uint32_t u = (uint32_t)imm;
  return ((u >> 12) & 1u) << 31 | ((u >> 5) & 0x3Fu) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
         ((u >> 1) & 0xFu) << 8 | ((u >> 11) & 1u) << 7 | 0x63u;
}
static uint32_t enc_j(int32_t imm, uint32_t rd) {
  const uint32_t u = (uint32_t)imm;
  return ((u >> 20) & 1u) << 31 | ((u >> 1) & 0x3FFu) << 21 | ((u >> 11) & 1u) << 20 |
         ((u >> 12) & 0xFFu) << 12 | rd << 7 | 0x6Fu;
}

#define PROGRAM_LEN 8u
static uint32_t g_program[PROGRAM_LEN];

static void build_program(void) {
  g_program[0] = enc_i(0, X0, 0, A0, 0x13);    /* 0x00 addi a0, x0, 0     sum = 0        */
  g_program[1] = enc_i(64, X0, 0, A1, 0x13);   /* 0x04 addi a1, x0, 64    n = 64         */
  g_program[2] = enc_i(0, A3, 2, A2, 0x03);    /* 0x08 lw   a2, 0(a3)     loop: load     */
  g_program[3] = enc_r(0, A2, A0, 0, A0);      /* 0x0c add  a0, a0, a2    load-use stall */
  g_program[4] = enc_i(4, A3, 0, A3, 0x13);    /* 0x10 addi a3, a3, 4                    */
  g_program[5] = enc_i(-1, A1, 0, A1, 0x13);   /* 0x14 addi a1, a1, -1                   */
  g_program[6] = enc_b(-16, X0, A1, 1);        /* 0x18 bne  a1, x0, loop                 */
  g_program[7] = enc_j(-28, X0);               /* 0x1c jal  x0, 0x00      start over     */
}

static uint32_t fetch_word(uint32_t pc) {
  return g_program[((pc - RESET_PC) / 4u) % PROGRAM_LEN];
}
static uint32_t load_word(uint32_t addr) { return (addr * 2654435761u) >> 24; } /* "memory" */

static uint32_t rd_of(uint32_t in) { return (in >> 7) & 31u; }
static uint32_t rs1_of(uint32_t in) { return (in >> 15) & 31u; }
static uint32_t rs2_of(uint32_t in) { return (in >> 20) & 31u; }
static int32_t imm_i(uint32_t in) { return (int32_t)in >> 20; }
static int32_t imm_b(uint32_t in) {
  const uint32_t u = ((in >> 31) & 1u) << 12 | ((in >> 7) & 1u) << 11 | ((in >> 25) & 0x3Fu) << 5 |
                     ((in >> 8) & 0xFu) << 1;
  return (int32_t)(u << 19) >> 19;
}
static int32_t imm_j(uint32_t in) {
  const uint32_t u = ((in >> 31) & 1u) << 20 | ((in >> 12) & 0xFFu) << 12 |
                     ((in >> 20) & 1u) << 11 | ((in >> 21) & 0x3FFu) << 1;
  return (int32_t)(u << 11) >> 11;
}
static int reads_rs2(uint32_t in) {
  const uint32_t op = in & 0x7Fu;
  return op == 0x33u || op == 0x63u || op == 0x23u;
}

/* ── the pipeline ────────────────────────────────────────────────────── */

enum { ST_FETCH, ST_DECODE, ST_EXECUTE, ST_MEMORY, ST_WRITEBACK, NUM_STAGES };
static const char *const kStageNames[NUM_STAGES] = {"fetch", "decode", "execute", "memory",
                                                    "writeback"};

typedef struct {
  int valid;
  uint32_t eid, pc, inst;
} inst_t;

typedef struct {
  uscope_writer_t *w;
  uint16_t entities, committed_insns, stage_event, flush_event, stall_event;
} trace_t;

/* The entity id of the cpu protocol is the catalog slot (§3.2); the
   simulation numbers its instructions eid = 0, 1, 2, ... and at most 5 are in
   flight, so eid % NUM_SLOTS is free when an instruction is fetched. */
static uint16_t slot_of(uint32_t eid) { return (uint16_t)(eid % NUM_SLOTS); }

/* An event whose payload is (u32 entity_id, u8 value), packed little-endian:
   stage_transition (value: stage) and flush (value: reason). */
static void entity_event(const trace_t *t, uint16_t event, const inst_t *in, uint8_t value) {
  const uint32_t id = slot_of(in->eid);
  const uint8_t payload[5] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), (uint8_t)(id >> 24), value};
  CHECK(uscope_event(t->w, event, payload, sizeof payload));
}

static void stage_transition(const trace_t *t, const inst_t *in, uint8_t stage) {
  if (in->valid) entity_event(t, t->stage_event, in, stage);
}

enum { FLUSH_MISPREDICT = 0 }; /* flush_reason (cpu §5.4) */
enum { STALL_LOAD_USE = 0 };   /* stall_reason (cpu §5.5: DUT-defined) */

/* Returns 1 when an instruction was squashed. */
static int squash(const trace_t *t, inst_t *in) {
  if (!in->valid) return 0;
  entity_event(t, t->flush_event, in, FLUSH_MISPREDICT); /* the event first, then the clear */
  CHECK(uscope_slot_clear(t->w, t->entities, slot_of(in->eid)));
  in->valid = 0;
  return 1;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "pipeline.uscope";
  build_program();

  /* ── schema ── */
  uscope_schema_t *schema = NULL;
  uint8_t clk = 0, stage_enum = 0, flush_enum = 0, stall_enum = 0;
  static const char *const kFlushReasons[] = {"mispredict", "exception", "interrupt", "pipeline_clear"};
  static const char *const kStallReasons[] = {"load_use"};
  uint16_t root = 0, core = 0;
  trace_t t = {0};
  CHECK(uscope_schema_new(&schema));
  CHECK(uscope_schema_add_clock(schema, &clk, "core_clk", PERIOD_PS));
  CHECK(uscope_schema_add_scope(schema, &root, "root", USCOPE_NO_PARENT, NULL, clk));
  CHECK(uscope_schema_add_scope(schema, &core, "core0", root, "cpu", USCOPE_CLOCK_INHERIT));
  CHECK(uscope_schema_add_enum(schema, &stage_enum, "pipeline_stage", kStageNames, NUM_STAGES));
  CHECK(uscope_schema_add_enum(schema, &flush_enum, "flush_reason", kFlushReasons, 4));
  CHECK(uscope_schema_add_enum(schema, &stall_enum, "stall_reason", kStallReasons, 1));
  {
    const uscope_field_t fields[] = {
        {"entity_id", USCOPE_FT_U32, 0, 0, 0},
        {"pc", USCOPE_FT_U64, 0, 0, 0},
        {"inst_bits", USCOPE_FT_U32, 0, 0, 0},
    };
    CHECK(uscope_schema_add_storage(schema, &t.entities, "entities", core, NUM_SLOTS, USCOPE_SF_SPARSE,
                                    fields, 3, NULL, 0));
  }
  {
    const uscope_field_t fields[] = {{"count", USCOPE_FT_U64, 0, 0, 0}};
    /* A counter (1 slot, dense); cpu §6 names the retired-instruction count committed_insns. */
    CHECK(uscope_schema_add_storage(schema, &t.committed_insns, "committed_insns", core, 1, 0, fields, 1, NULL,
                                    0));
  }
  {
    const uscope_field_t fields[] = {
        {"entity_id", USCOPE_FT_U32, 0, 0, 0},
        {"stage", USCOPE_FT_ENUM, stage_enum, 0, 0},
    };
    CHECK(uscope_schema_add_event(schema, &t.stage_event, "stage_transition", core, fields, 2));
  }
  {
    const uscope_field_t fields[] = {
        {"entity_id", USCOPE_FT_U32, 0, 0, 0},
        {"reason", USCOPE_FT_ENUM, flush_enum, 0, 0},
    };
    CHECK(uscope_schema_add_event(schema, &t.flush_event, "flush", core, fields, 2));
  }
  {
    const uscope_field_t fields[] = {{"reason", USCOPE_FT_ENUM, stall_enum, 0, 0}};
    CHECK(uscope_schema_add_event(schema, &t.stall_event, "stall", core, fields, 1));
  }

  /* ── writer ── */
  const uscope_dut_property_t props[] = {
      {"dut_name", "toy_5stage"},
      {"cpu.protocol_version", "0.1"},
      {"cpu.isa", "RV32I"},
      {"cpu.pipeline_stages", "fetch,decode,execute,memory,writeback"},
  };
  uscope_writer_options_t opts;
  uscope_writer_options_init(&opts);
  opts.checkpoint_interval_ps = CHECKPOINT_PS;
  CHECK(uscope_writer_open(&t.w, path, schema, props, 4, &opts));
  g_writer = t.w;
  uscope_schema_free(schema); /* the writer copied what it needs */

  /* ── simulation: stage[] holds the instruction in each stage this cycle ── */
  inst_t stage[NUM_STAGES];
  memset(stage, 0, sizeof stage);
  uint32_t regs[32] = {0};
  uint32_t pc = RESET_PC, next_eid = 0;
  uint64_t retired = 0, stall_cycles = 0, flushes = 0, squashed = 0;

  for (uint32_t cycle = 0; cycle < NUM_CYCLES; ++cycle) {
    CHECK(uscope_begin_cycle(t.w, (uint64_t)cycle * PERIOD_PS));

    /* The instruction that was in WB last cycle retires. */
    if (stage[ST_WRITEBACK].valid) {
      CHECK(uscope_slot_clear(t.w, t.entities, slot_of(stage[ST_WRITEBACK].eid)));
      CHECK(uscope_slot_add(t.w, t.committed_insns, 0, 0, 1));
      ++retired;
    }

    /* Load-use hazard: the instruction in ID reads the register that the
       load in EX writes; it waits a cycle and a bubble goes down to EX. */
    const inst_t *ld = &stage[ST_EXECUTE], *use = &stage[ST_DECODE];
    const int stall = ld->valid && (ld->inst & 0x7Fu) == 0x03u && rd_of(ld->inst) != 0 &&
                      use->valid &&
                      (rs1_of(use->inst) == rd_of(ld->inst) ||
                       (reads_rs2(use->inst) && rs2_of(use->inst) == rd_of(ld->inst)));

    /* Advance. */
    stage[ST_WRITEBACK] = stage[ST_MEMORY];
    stage[ST_MEMORY] = stage[ST_EXECUTE];
    if (stall) {
      stage[ST_EXECUTE].valid = 0;
      ++stall_cycles;
      {
        const uint8_t reason = STALL_LOAD_USE;
        CHECK(uscope_event(t.w, t.stall_event, &reason, 1));
      }
    } else {
      stage[ST_EXECUTE] = stage[ST_DECODE];
      stage[ST_DECODE] = stage[ST_FETCH];
      stage[ST_FETCH].valid = 0;
      const inst_t f = {1, next_eid++, pc, fetch_word(pc)};
      const uint16_t s = slot_of(f.eid);
      CHECK(uscope_slot_set(t.w, t.entities, s, 0, s)); /* entity_id = slot (cpu §3.2) */
      CHECK(uscope_slot_set(t.w, t.entities, s, 1, f.pc));
      CHECK(uscope_slot_set(t.w, t.entities, s, 2, f.inst));
      stage[ST_FETCH] = f;
      pc += 4;
    }
    stage_transition(&t, &stage[ST_WRITEBACK], ST_WRITEBACK);
    stage_transition(&t, &stage[ST_MEMORY], ST_MEMORY);
    if (!stall) {
      stage_transition(&t, &stage[ST_EXECUTE], ST_EXECUTE);
      stage_transition(&t, &stage[ST_DECODE], ST_DECODE);
      stage_transition(&t, &stage[ST_FETCH], ST_FETCH);
    }

    /* Execute (full forwarding). A taken branch or jump squashes the two
       younger instructions and redirects fetch. */
    const inst_t *ex = &stage[ST_EXECUTE];
    if (ex->valid && !stall) {
      const uint32_t in = ex->inst, op = in & 0x7Fu, rd = rd_of(in);
      const uint32_t a = regs[rs1_of(in)], b = regs[rs2_of(in)];
      int taken = 0;
      uint32_t target = 0;
      if (op == 0x13u && rd) regs[rd] = a + (uint32_t)imm_i(in);
      if (op == 0x33u && rd) regs[rd] = a + b;
      if (op == 0x03u && rd) regs[rd] = load_word(a + (uint32_t)imm_i(in));
      if (op == 0x63u && a != b) taken = 1, target = ex->pc + (uint32_t)imm_b(in);
      if (op == 0x6Fu) taken = 1, target = ex->pc + (uint32_t)imm_j(in);
      if (taken) {
        squashed += (uint64_t)squash(&t, &stage[ST_DECODE]);
        squashed += (uint64_t)squash(&t, &stage[ST_FETCH]);
        pc = target;
        ++flushes;
      }
    }
    CHECK(uscope_end_cycle(t.w));
  }

  /* ── finish, read the final statistics, close ──
     uscope_writer_finish() completes the file and stops the encoder thread
     but keeps the writer, so the counters below are final. */
  check(uscope_writer_finish(t.w), "uscope_writer_finish(writer)");
  uscope_writer_stats_t st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK(uscope_writer_stats(t.w, &st));
  check(uscope_writer_close(t.w), "uscope_writer_close(writer)");
  g_writer = NULL;

  printf("wrote %s: %" PRIu64 " bytes, %.2f bytes/cycle\n", path, st.file_bytes,
         (double)st.file_bytes / (double)st.cycles);
  printf("  simulation  %" PRIu64 " cycles: %" PRIu64 " instructions retired, %" PRIu64
         " load-use stalls, %" PRIu64 " flushes (%" PRIu64 " instructions squashed)\n",
         st.cycles, retired, stall_cycles, flushes, squashed);
  printf("  recorded    %" PRIu64 " ops + %" PRIu64 " events (%.1f per cycle); "
         "%.0f MiB queue, %" PRIu64 " waits (%.3f ms)\n",
         st.ops, st.events, (double)(st.ops + st.events) / (double)st.cycles,
         mib(st.queue_bytes), st.stalls, (double)st.stall_ns / 1e6);
  printf("  encoded     %" PRIu64 " frames in %" PRIu64 " segments: %" PRIu64 " raw -> %" PRIu64
         " compressed delta bytes (%.2fx), %" PRIu64 " checkpoint bytes\n",
         st.frames, st.segments, st.raw_bytes, st.compressed_bytes,
         st.compressed_bytes ? (double)st.raw_bytes / (double)st.compressed_bytes : 0.0,
         st.checkpoint_bytes);
  return 0;
}
