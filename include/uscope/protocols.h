/*
 * libuscope protocol helpers — declare and write the cpu, noc and npu
 * protocols of µScope without spelling out their conventions by hand.
 *
 * The transport (uscope.h) knows storages and events only; a protocol gives
 * them names and meaning (spec: "µScope cpu Protocol", "µScope noc Protocol";
 * docs/npu-protocol.md for npu, which this library defines). docs/protocols.md
 * explains the design and every place where the helpers depart from the spec.
 *
 * Each protocol has
 *  - a declare call that adds, to a schema not yet opened, one scope with its
 *    enums, storages, events, counters and DUT properties, exactly as the
 *    protocol names them, and returns a handle that records every id;
 *  - a free call (NULL is a no-op) and an ids accessor, so that a caller can
 *    also emit raw ops and events of its own on the same storages;
 *  - per-cycle calls, made between uscope_begin_cycle() and uscope_end_cycle().
 *
 * Declaring
 * ---------
 *  A declare call is all or nothing: on any error the schema is left exactly
 *  as it was. The parent scope and the clock must exist already (the root
 *  scope is added with uscope_schema_add_scope(..., USCOPE_NO_PARENT, ...)).
 *  Enums are shared: an enum of the same name and the same values that the
 *  schema has already is reused, so two cores declare one dep_type enum.
 *  A handle does not refer to the schema: free the schema whenever you like.
 *  Use a handle only with writers opened from the schema it was declared on.
 *  Config structs are size-prefixed: set struct_size = sizeof(the struct);
 *  a shorter struct from an older header leaves the newer fields zero.
 *  Errors: INVALID_ARGUMENT (a NULL or malformed config: no stages, zero
 *  slots, a NULL or repeated name, a name with a comma where a list is made of
 *  them), LIMIT (more than 255 stages or enum values), SCHEMA (what the schema
 *  refuses: an unknown parent or clock, a DUT property already set to another
 *  value), NO_MEMORY. Messages start with the function's name.
 *
 * Per-cycle calls
 * ---------------
 *  Their parameters are only uscope_writer_t *, a const protocol handle,
 *  uint8_t/16/32/64 and const char *, so SystemVerilog can import them directly
 *  with DPI-C (chandle, byte/shortint/int/longint unsigned, string).
 *
 *  Each call checks its arguments first (ids against the declared sizes, enum
 *  values against their counts) and writes nothing when one is wrong: it then
 *  returns a specific status with a message in uscope_last_error(), and the
 *  writer is not affected (such an error is not sticky and not in
 *  uscope_writer_error()):
 *    UNKNOWN_SLOT     an entity, transaction, slot, engine, channel or context
 *                     id outside its storage;
 *    VALUE_RANGE      an enum value (stage, reason, opcode, ...) >= its count,
 *                     or a noc port >= num_ports;
 *    UNKNOWN_STORAGE  a buffer or counter index past the declared ones;
 *    UNKNOWN_FIELD    a field index past the buffer's fields;
 *    INVALID_ARGUMENT a NULL writer, handle or required string.
 *  Then it makes its ops and events through the writer, and returns the first
 *  writer error unchanged (BAD_STATE outside a cycle, a sticky error, ...);
 *  writer errors are sticky as described in uscope.h.
 *
 *  The payloads are built on the stack: in steady state the calls make no heap
 *  allocation, take no lock and make no system call. The exception is a string
 *  parameter: it is interned with uscope_string_insert() into an FT_STRING_REF
 *  field, which allocates the first time a string is seen (and, in this
 *  version, for every string longer than 15 bytes: see docs/protocols.md).
 */
#ifndef USCOPE_PROTOCOLS_H
#define USCOPE_PROTOCOLS_H

#include "uscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ══ cpu ═══════════════════════════════════════════════════════════════ */

/*
 * The cpu protocol (spec chapter "µScope cpu Protocol", version 0.1). The
 * declared scope (protocol "cpu") holds:
 *   enums     pipeline_stage (cfg stages), dep_type (raw, war, waw,
 *             structural), flush_reason (mispredict, exception, interrupt,
 *             pipeline_clear), stall_reason (cfg stall_reasons, or the default
 *             rob_full, iq_full, lq_full, sq_full, fetch_miss, dcache_miss,
 *             frontend_stall);
 *   storages  entities (sparse, max_entities slots: entity_id U32, pc U64,
 *             inst_bits U32, then entity_extra_fields); one sparse buffer per
 *             cfg buffer (SF_SPARSE|SF_BUFFER: entity_id U32, then its extra
 *             fields); committed_insns and the cfg counters (dense, 1 slot,
 *             count U64);
 *   events    stage_transition(entity_id U32, stage ENUM pipeline_stage),
 *             annotate(entity_id U32, text STRING_REF),
 *             dependency(src_id U32, dst_id U32, dep_type ENUM dep_type),
 *             flush(entity_id U32, reason ENUM flush_reason),
 *             stall(reason ENUM stall_reason);
 *   DUT       dut_name, cpu.protocol_version = "0.1", cpu.isa,
 *             cpu.pipeline_stages, cpu.fetch_width, cpu.commit_width,
 *             cpu.elf_path, cpu.vendor (§8: one set per trace; a second core
 *             may repeat a key with the same value, not with another one).
 * The §7 summary fields are not declared: see docs/protocols.md.
 */

#define USCOPE_CPU_PROTOCOL_VERSION "0.1"

typedef struct uscope_cpu uscope_cpu_t;

/** A buffer (ROB, issue queue, LSQ, ...): entity_id U32 is field 0, extra fields follow. */
typedef struct uscope_cpu_buffer_def_s {
  const char *name;
  uint16_t num_slots;                /* >= 1 */
  const uscope_field_t *extra_fields; /* may be NULL when num_extra_fields is 0 */
  uint16_t num_extra_fields;
} uscope_cpu_buffer_def_t;

typedef struct uscope_cpu_config_s {
  uint32_t struct_size;              /* sizeof(uscope_cpu_config_t) */
  const char *scope_name;            /* e.g. "core0" */
  uint16_t parent_scope_id;          /* an existing scope */
  uint8_t clock_id;                  /* an existing clock or USCOPE_CLOCK_INHERIT */
  const char *isa;                   /* cpu.isa; required */
  const char *const *stages;         /* enum pipeline_stage and cpu.pipeline_stages, */
  uint16_t num_stages;               /* in pipeline order; 1..255, no commas, distinct */
  uint16_t max_entities;             /* slots of the entity catalog, >= 1 */
  const char *const *stall_reasons;  /* enum stall_reason; NULL (with 0): the default list */
  uint16_t num_stall_reasons;
  const uscope_cpu_buffer_def_t *buffers;
  uint16_t num_buffers;
  const char *const *counters;       /* extra counters; committed_insns is always counter 0 */
  uint16_t num_counters;
  uint32_t fetch_width, commit_width; /* cpu.fetch_width / cpu.commit_width; 0: omitted */
  const char *elf_path, *vendor, *dut_name; /* cpu.elf_path, cpu.vendor, dut_name; NULL: omitted */
  /* Optional fields of the entity catalog (spec §3.3: thread_id, priv_level,
     ...), after inst_bits; written with uscope_cpu_entity_set(). */
  const uscope_field_t *entity_extra_fields;
  uint16_t num_entity_extra_fields;
} uscope_cpu_config_t;

/** Field indices of the entities storage. */
#define USCOPE_CPU_FIELD_ENTITY_ID 0
#define USCOPE_CPU_FIELD_PC        1
#define USCOPE_CPU_FIELD_INST_BITS 2
/** Standard enum values (spec §5.3, §5.4). */
#define USCOPE_CPU_DEP_RAW        0
#define USCOPE_CPU_DEP_WAR        1
#define USCOPE_CPU_DEP_WAW        2
#define USCOPE_CPU_DEP_STRUCTURAL 3
#define USCOPE_CPU_FLUSH_MISPREDICT     0
#define USCOPE_CPU_FLUSH_EXCEPTION      1
#define USCOPE_CPU_FLUSH_INTERRUPT      2
#define USCOPE_CPU_FLUSH_PIPELINE_CLEAR 3
/** Counter index of committed_insns for uscope_cpu_counter_add(). */
#define USCOPE_CPU_COUNTER_COMMITTED_INSNS 0

/** Every id of a declared cpu scope. Size-prefixed: set struct_size. */
typedef struct uscope_cpu_ids_s {
  uint32_t struct_size;
  uint16_t scope_id;
  uint16_t entities;                 /* storage id of the entity catalog */
  uint16_t stage_transition, annotate, dependency, flush, stall; /* event type ids */
  uint8_t pipeline_stage_enum, dep_type_enum, flush_reason_enum, stall_reason_enum;
  uint16_t max_entities;
  uint16_t num_stages;
  uint16_t num_stall_reasons;
  uint16_t num_entity_fields;        /* 3 + num_entity_extra_fields */
  uint16_t num_buffers;
  uint16_t num_counters;             /* 1 + cfg num_counters */
  const uint16_t *buffers;           /* storage ids, [num_buffers]; owned by the handle */
  const uint16_t *counters;          /* storage ids, [num_counters]; [0] = committed_insns */
} uscope_cpu_ids_t;

/**
 * Declare a cpu scope on schema. *out receives a handle to release with
 * uscope_cpu_free(); it stays valid after the schema is freed.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_declare(uscope_schema_t *schema, uscope_cpu_t **out,
                                              const uscope_cpu_config_t *cfg);
USCOPE_API void uscope_cpu_free(uscope_cpu_t *cpu);
/** Copy the ids (at most out->struct_size bytes). The arrays live as long as the handle. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_ids(const uscope_cpu_t *cpu, uscope_cpu_ids_t *out);

/* Per-cycle calls. entity_id is the catalog slot: < max_entities. */

/** Fetch: entities[entity_id] = {entity_id, pc, inst_bits}, then stage_transition to stage 0. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_fetch(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                            uint32_t entity_id, uint64_t pc, uint32_t inst_bits);
/** stage_transition event; stage < num_stages. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_stage_transition(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                       uint32_t entity_id, uint8_t stage);
/** Retire: clear entities[entity_id] and add 1 to committed_insns. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_retire(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                             uint32_t entity_id);
/** Flush: a flush event (reason < 4, USCOPE_CPU_FLUSH_*), then clear entities[entity_id]. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_flush(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                            uint32_t entity_id, uint8_t reason);
/** annotate event; text is interned (not NULL). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_annotate(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                               uint32_t entity_id, const char *text);
/** dependency event from src_id to dst_id; dep_type < 4 (USCOPE_CPU_DEP_*). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_dependency(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                 uint32_t src_id, uint32_t dst_id, uint8_t dep_type);
/** stall event; reason < num_stall_reasons. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_stall(uscope_writer_t *w, const uscope_cpu_t *cpu, uint8_t reason);
/** Add delta to counter `counter` (0 = committed_insns, then the cfg counters). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_counter_add(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                  uint16_t counter, uint64_t delta);
/** Buffer `buffer` (cfg order): set slot's entity_id (field 0), making it valid. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_buffer_insert(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                    uint16_t buffer, uint16_t slot, uint32_t entity_id);
/** Set field `field` of a buffer slot (0 = entity_id, which must be < max_entities). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_buffer_set(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                 uint16_t buffer, uint16_t slot, uint16_t field,
                                                 uint64_t value);
/** Clear a buffer slot. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_buffer_remove(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                    uint16_t buffer, uint16_t slot);
/** Set field `field` (1 .. num_entity_fields-1; 0 is the id itself) of entities[entity_id]. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_entity_set(uscope_writer_t *w, const uscope_cpu_t *cpu,
                                                 uint32_t entity_id, uint16_t field, uint64_t value);

/* ══ noc ═══════════════════════════════════════════════════════════════ */

/*
 * The noc protocol (spec chapter "µScope noc Protocol", version 0.1). The
 * declared scope (protocol "noc") holds:
 *   enums     opcode (cfg opcodes, or read, write), pipeline_stage (cfg
 *             stages), retry_reason (target_busy, no_credits, vc_full,
 *             arb_lost, protocol_retry), credit_direction (grant, consume);
 *   storages  transactions (sparse, max_txns slots: txn_id U32, opcode ENUM,
 *             addr U64, len U16, size U8, src_port U16, dst_port U16, then
 *             txn_extra_fields); one sparse buffer per cfg buffer (txn_id U32,
 *             then its extra fields); the counters bytes_tx, bytes_rx,
 *             arb_conflicts, retries, txn_completed, then the cfg counters
 *             (dense, 1 slot, count U64);
 *   events    stage_transition(txn_id U32, stage ENUM), beat(txn_id U32,
 *             beat_num U16, data_bytes U16), retry(txn_id U32, reason ENUM),
 *             timeout(txn_id U32, threshold_cycles U32), link_credit(port U16,
 *             direction ENUM, credits U8), arb_decision(winner_txn U32,
 *             port U16, num_contenders U8), annotate(txn_id U32, text
 *             STRING_REF); txn_handoff(src_scope U16, src_txn_id U32,
 *             dst_scope U16, dst_txn_id U32) on the PARENT scope (§5.7: at a
 *             common ancestor), shared by every noc declared under it;
 *   DUT       the spec's scope properties (§8), which the transport cannot
 *             attach to a scope, as DUT properties keyed "<scope_name>/<key>":
 *             noc.protocol_version = "0.1", noc.bus_protocol, noc.topology,
 *             noc.pipeline_stages, clock.period_ps (of the scope's clock),
 *             noc.data_width, noc.addr_width, noc.num_ports, noc.dim_x,
 *             noc.dim_y, noc.num_vcs, noc.routing. The scope name must
 *             therefore be unused in the schema.
 */

#define USCOPE_NOC_PROTOCOL_VERSION "0.1"

typedef struct uscope_noc uscope_noc_t;

/** A buffer (VC buffer, ORT, ROB, ...): txn_id U32 is field 0, extra fields follow. */
typedef struct uscope_noc_buffer_def_s {
  const char *name;
  uint16_t num_slots;                /* >= 1 */
  const uscope_field_t *extra_fields;
  uint16_t num_extra_fields;
} uscope_noc_buffer_def_t;

typedef struct uscope_noc_config_s {
  uint32_t struct_size;              /* sizeof(uscope_noc_config_t) */
  const char *scope_name;            /* e.g. "noc0"; not used by another scope */
  uint16_t parent_scope_id;
  uint8_t clock_id;                  /* an existing clock or USCOPE_CLOCK_INHERIT */
  const char *bus_protocol;          /* noc.bus_protocol (AXI4, CHI, ...); required */
  const char *topology;              /* noc.topology (crossbar, mesh, ...); required */
  const char *const *stages;         /* enum pipeline_stage and noc.pipeline_stages; */
  uint16_t num_stages;               /* 1..255, no commas, distinct */
  const char *const *opcodes;        /* enum opcode; NULL (with 0): read, write */
  uint16_t num_opcodes;
  uint16_t max_txns;                 /* slots of the transaction catalog, >= 1 */
  const uscope_noc_buffer_def_t *buffers;
  uint16_t num_buffers;
  const char *const *counters;       /* extra counters, after the five standard ones */
  uint16_t num_counters;
  uint32_t data_width, addr_width, num_ports; /* noc.*; 0: omitted. num_ports > 0 also
                                                 bounds every port argument */
  /* Optional §8.2 properties and §3.3 transaction fields. */
  uint32_t dim_x, dim_y, num_vcs;    /* noc.dim_x, noc.dim_y, noc.num_vcs; 0: omitted */
  const char *routing;               /* noc.routing; NULL: omitted */
  const uscope_field_t *txn_extra_fields; /* after dst_port; see uscope_noc_txn_set() */
  uint16_t num_txn_extra_fields;
} uscope_noc_config_t;

/** Field indices of the transactions storage. */
#define USCOPE_NOC_FIELD_TXN_ID   0
#define USCOPE_NOC_FIELD_OPCODE   1
#define USCOPE_NOC_FIELD_ADDR     2
#define USCOPE_NOC_FIELD_LEN      3
#define USCOPE_NOC_FIELD_SIZE     4
#define USCOPE_NOC_FIELD_SRC_PORT 5
#define USCOPE_NOC_FIELD_DST_PORT 6
/** Standard enum values (spec §5.3, §5.5). */
#define USCOPE_NOC_RETRY_TARGET_BUSY    0
#define USCOPE_NOC_RETRY_NO_CREDITS     1
#define USCOPE_NOC_RETRY_VC_FULL        2
#define USCOPE_NOC_RETRY_ARB_LOST       3
#define USCOPE_NOC_RETRY_PROTOCOL_RETRY 4
#define USCOPE_NOC_CREDIT_GRANT   0
#define USCOPE_NOC_CREDIT_CONSUME 1
/** Counter indices for uscope_noc_counter_add(); extra counters follow. */
#define USCOPE_NOC_COUNTER_BYTES_TX      0
#define USCOPE_NOC_COUNTER_BYTES_RX      1
#define USCOPE_NOC_COUNTER_ARB_CONFLICTS 2
#define USCOPE_NOC_COUNTER_RETRIES       3
#define USCOPE_NOC_COUNTER_TXN_COMPLETED 4

typedef struct uscope_noc_ids_s {
  uint32_t struct_size;
  uint16_t scope_id;
  uint16_t handoff_scope_id;         /* scope of txn_handoff: the parent (or this scope
                                        when it is the root) */
  uint16_t transactions;             /* storage id of the catalog */
  uint16_t stage_transition, beat, retry, timeout, link_credit, arb_decision, txn_handoff,
      annotate;                      /* event type ids */
  uint8_t opcode_enum, pipeline_stage_enum, retry_reason_enum, credit_direction_enum;
  uint16_t max_txns;
  uint16_t num_stages;
  uint16_t num_opcodes;
  uint16_t num_txn_fields;           /* 7 + num_txn_extra_fields */
  uint16_t num_buffers;
  uint16_t num_counters;             /* 5 + cfg num_counters */
  const uint16_t *buffers;           /* storage ids, [num_buffers] */
  const uint16_t *counters;          /* storage ids, [num_counters] */
} uscope_noc_ids_t;

USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_declare(uscope_schema_t *schema, uscope_noc_t **out,
                                              const uscope_noc_config_t *cfg);
USCOPE_API void uscope_noc_free(uscope_noc_t *noc);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_ids(const uscope_noc_t *noc, uscope_noc_ids_t *out);

/* Per-cycle calls. txn_id is the catalog slot: < max_txns. Ports are checked
   against num_ports when it is not 0. */

/** Issue: transactions[txn_id] = all seven fields, then stage_transition to stage 0. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_issue(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                            uint8_t opcode, uint64_t addr, uint16_t len, uint8_t size,
                                            uint16_t src_port, uint16_t dst_port);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_stage_transition(uscope_writer_t *w, const uscope_noc_t *noc,
                                                       uint32_t txn_id, uint8_t stage);
/** Complete: clear transactions[txn_id] and add 1 to txn_completed. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_complete(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id);
/** beat event. Bytes are not counted: bytes_tx / bytes_rx depend on the direction,
    which only the DUT knows (uscope_noc_counter_add). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_beat(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                           uint16_t beat_num, uint16_t data_bytes);
/** retry event (reason < 5, USCOPE_NOC_RETRY_*) and retries += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_retry(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                            uint8_t reason);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_timeout(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                              uint32_t threshold_cycles);
/** link_credit event; direction < 2 (USCOPE_NOC_CREDIT_*). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_link_credit(uscope_writer_t *w, const uscope_noc_t *noc, uint16_t port,
                                                  uint8_t direction, uint8_t credits);
/** arb_decision event; arb_conflicts += 1 when num_contenders > 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_arb_decision(uscope_writer_t *w, const uscope_noc_t *noc,
                                                   uint32_t winner_txn, uint16_t port,
                                                   uint8_t num_contenders);
/** txn_handoff event (on the handoff scope). The ids refer to other scopes and
    are recorded as given. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_txn_handoff(uscope_writer_t *w, const uscope_noc_t *noc,
                                                  uint16_t src_scope, uint32_t src_txn,
                                                  uint16_t dst_scope, uint32_t dst_txn);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_annotate(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                               const char *text);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_buffer_insert(uscope_writer_t *w, const uscope_noc_t *noc,
                                                    uint16_t buffer, uint16_t slot, uint32_t txn_id);
/** field 0 is txn_id (< max_txns). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_buffer_set(uscope_writer_t *w, const uscope_noc_t *noc,
                                                 uint16_t buffer, uint16_t slot, uint16_t field,
                                                 uint64_t value);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_buffer_remove(uscope_writer_t *w, const uscope_noc_t *noc,
                                                    uint16_t buffer, uint16_t slot);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_counter_add(uscope_writer_t *w, const uscope_noc_t *noc,
                                                  uint16_t counter, uint64_t delta);
/** Set field `field` (1 .. num_txn_fields-1) of transactions[txn_id], e.g. qos. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_txn_set(uscope_writer_t *w, const uscope_noc_t *noc, uint32_t txn_id,
                                              uint16_t field, uint64_t value);

/* ══ npu ═══════════════════════════════════════════════════════════════ */

/*
 * The npu protocol, version 0.1, defined by docs/npu-protocol.md: one µScope
 * event type per event type of the NPU JSON-Lines trace (npu-trace-jsonl.md),
 * named as its event_type in lower case, with every field of it under the
 * same key, so that JSONL -> µScope -> JSONL is lossless. On top of that the
 * state is kept in storages: the command queue, the engines, the DMA, DRAM
 * and NoC channels, the SRAM banks, and counters.
 *
 * Absent values. Any numeric field may be absent from a JSONL event (or
 * null): pass USCOPE_NPU_ABSENT* (or USCOPE_NPU_NULL*) of the parameter's
 * width, and it is recorded as is. A string parameter that is NULL or ""
 * (SystemVerilog cannot pass NULL) is recorded as USCOPE_NPU_STR_ABSENT. A
 * sentinel never feeds a counter.
 *
 * Contexts. The JSONL meta fields (core_id, npu_id, tenant_id, thread_id) and
 * the LLM metadata (layer_id, block_id, head_id, token_idx, seq_len, phase,
 * precision, model_name) are not repeated in every event: they live in the
 * sparse storage "contexts", one slot per distinct context, and every event
 * carries a ctx field naming its slot (or USCOPE_NPU_NO_CONTEXT). Define a
 * context with uscope_npu_context() (and amend it with uscope_npu_context_ext())
 * before the events that use it, in the same or an earlier cycle; do not
 * change a context in a cycle after an event has used it in that cycle.
 * Then the state at an event's time gives its context exactly.
 */

#define USCOPE_NPU_PROTOCOL_VERSION "0.1"

typedef struct uscope_npu uscope_npu_t;

/* Sentinels of absent and null (JSON null) values, per field width. */
#define USCOPE_NPU_ABSENT8  0xFFu
#define USCOPE_NPU_ABSENT16 0xFFFFu
#define USCOPE_NPU_ABSENT32 0xFFFFFFFFu
#define USCOPE_NPU_ABSENT64 0xFFFFFFFFFFFFFFFFull
#define USCOPE_NPU_NULL8    0xFEu
#define USCOPE_NPU_NULL16   0xFFFEu
#define USCOPE_NPU_NULL32   0xFFFFFFFEu
#define USCOPE_NPU_NULL64   0xFFFFFFFFFFFFFFFEull
/** STRING_REF values that are not string-table indices. */
#define USCOPE_NPU_STR_ABSENT 0xFFFFFFFFu /* a NULL or "" string parameter */
#define USCOPE_NPU_STR_NULL   0xFFFFFFFEu /* JSON null; written only through raw events */
/** The ctx of an event that has no context. */
#define USCOPE_NPU_NO_CONTEXT 0xFFFFu

/** Enum values: cmd_source (CMD_ENQUEUE source), access_type, cmd_state. */
#define USCOPE_NPU_SOURCE_ISA  0
#define USCOPE_NPU_SOURCE_MMIO 1
#define USCOPE_NPU_ACCESS_READ  0
#define USCOPE_NPU_ACCESS_WRITE 1
#define USCOPE_NPU_CMD_QUEUED  0
#define USCOPE_NPU_CMD_RUNNING 1

/** Event indices into uscope_npu_ids_t.events (µScope name = lower-case event_type). */
#define USCOPE_NPU_EV_CMD_ENQUEUE    0
#define USCOPE_NPU_EV_CMD_START      1
#define USCOPE_NPU_EV_CMD_END        2
#define USCOPE_NPU_EV_JOB_ISSUE      3
#define USCOPE_NPU_EV_JOB_DONE       4
#define USCOPE_NPU_EV_DMA_START      5
#define USCOPE_NPU_EV_DMA_END        6
#define USCOPE_NPU_EV_TE_START       7
#define USCOPE_NPU_EV_TE_END         8
#define USCOPE_NPU_EV_VE_START       9
#define USCOPE_NPU_EV_VE_END         10
#define USCOPE_NPU_EV_SRAM_ACCESS    11
#define USCOPE_NPU_EV_SRAM_CONFLICT  12
#define USCOPE_NPU_EV_DRAM_TX_START  13
#define USCOPE_NPU_EV_DRAM_TX_END    14
#define USCOPE_NPU_EV_NOC_TX_START   15
#define USCOPE_NPU_EV_NOC_TX_END     16
#define USCOPE_NPU_EV_IRQ_EMIT       17
#define USCOPE_NPU_EV_TOKEN_COMPLETE 18
#define USCOPE_NPU_EV_ERROR          19
#define USCOPE_NPU_EV_WARN           20
#define USCOPE_NPU_NUM_EVENTS        21

/** Counter indices for uscope_npu_counter_add(); extra counters follow. */
#define USCOPE_NPU_COUNTER_MACS           0 /* += TE_END mac_count */
#define USCOPE_NPU_COUNTER_DMA_BYTES      1 /* += DMA_END size_bytes */
#define USCOPE_NPU_COUNTER_SRAM_ACCESSES  2 /* += 1 per SRAM_ACCESS */
#define USCOPE_NPU_COUNTER_SRAM_CONFLICTS 3 /* += 1 per SRAM_CONFLICT */
#define USCOPE_NPU_COUNTER_CMDS_DONE      4 /* += 1 per CMD_END */
#define USCOPE_NPU_COUNTER_JOBS_DONE      5 /* += 1 per JOB_DONE */
#define USCOPE_NPU_COUNTER_TOKENS_DONE    6 /* += 1 per TOKEN_COMPLETE */
#define USCOPE_NPU_COUNTER_DRAM_BYTES     7 /* += DRAM_TX_END size_bytes */
#define USCOPE_NPU_COUNTER_NOC_BYTES      8 /* += NOC_TX_END size_bytes */
#define USCOPE_NPU_NUM_STD_COUNTERS       9

typedef struct uscope_npu_config_s {
  uint32_t struct_size;              /* sizeof(uscope_npu_config_t) */
  const char *scope_name;            /* e.g. "npu0"; not used by another scope */
  uint16_t parent_scope_id;
  uint8_t clock_id;                  /* an existing clock or USCOPE_CLOCK_INHERIT */
  uint16_t queue_depth;              /* cmd_queue slots, >= 1 */
  uint16_t num_contexts;             /* contexts slots; 0: 16 */
  uint16_t num_te, num_ve;           /* te / ve slots (one per engine), >= 1 */
  uint16_t num_dma_channels;         /* dma slots, >= 1 */
  uint16_t num_sram_banks;           /* sram_banks slots; 0: no sram_banks storage */
  uint16_t num_dram_channels;        /* dram slots; 0: no dram storage */
  uint16_t num_noc_links;            /* noc slots; 0: no noc storage */
  uint32_t te_rows, te_cols;         /* "<scope>/npu.te_dims" = "ROWSxCOLS"; 0: omitted */
  const char *const *counters;       /* extra counters, after the nine standard ones */
  uint16_t num_counters;
  /* Trace-wide DUT properties; NULL: omitted. */
  const char *dut_name;              /* dut_name */
  const char *vendor;                /* npu.vendor */
  const char *sim_id;                /* npu.sim_id (JSONL meta sim_id) */
  const char *trace_version;         /* npu.trace_version (TRACE_META version) */
  const char *sim_version;           /* npu.sim_version */
  const char *sim_config_json;       /* npu.sim_config (TRACE_META sim_config, JSON text) */
} uscope_npu_config_t;

typedef struct uscope_npu_ids_s {
  uint32_t struct_size;
  uint16_t scope_id;
  uint16_t cmd_queue, contexts, te, ve, dma; /* storage ids */
  uint16_t sram_banks, dram, noc;    /* storage ids; 0xFFFF when not declared */
  uint8_t cmd_source_enum, access_type_enum, cmd_state_enum;
  uint8_t reserved;
  uint16_t events[USCOPE_NPU_NUM_EVENTS]; /* event type ids, by USCOPE_NPU_EV_* */
  uint16_t queue_depth, num_contexts, num_te, num_ve, num_dma_channels, num_sram_banks,
      num_dram_channels, num_noc_links;
  uint16_t num_counters;             /* 9 + cfg num_counters */
  const uint16_t *counters;          /* storage ids, [num_counters] */
} uscope_npu_ids_t;

USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_declare(uscope_schema_t *schema, uscope_npu_t **out,
                                              const uscope_npu_config_t *cfg);
USCOPE_API void uscope_npu_free(uscope_npu_t *npu);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_ids(const uscope_npu_t *npu, uscope_npu_ids_t *out);

/*
 * Per-cycle calls. `ctx` is a contexts slot or USCOPE_NPU_NO_CONTEXT. `slot`
 * (cmd_queue), `engine` (te / ve) and the DMA channel must be inside their
 * storage; a DRAM channel, NoC link or SRAM bank is checked only when its
 * storage is declared (and may then also be ABSENT16, which updates nothing).
 * The JSONL fields come in JSONL order; docs/npu-protocol.md has the tables.
 */

/** Define context ctx: every field; thread_id, model_name and precision become absent. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_context(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                              uint16_t core_id, uint16_t npu_id, uint32_t tenant_id,
                                              uint32_t layer_id, uint32_t block_id, uint32_t head_id,
                                              uint32_t token_idx, uint32_t seq_len, const char *phase);
/** Amend context ctx (defined earlier with uscope_npu_context) with the rarer fields. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_context_ext(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                  uint32_t thread_id, const char *model_name,
                                                  const char *precision);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_context_clear(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx);

/** CMD_ENQUEUE; cmd_queue[slot] = the command, state QUEUED. source < 2 (USCOPE_NPU_SOURCE_*). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_cmd_enqueue(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t slot,
                                                  uint16_t ctx, uint32_t cmd_id, const char *cmd_type,
                                                  uint8_t source, uint32_t token, uint64_t desc_addr,
                                                  uint32_t layer_id, uint32_t block_id, const char *phase);
/** CMD_START; cmd_queue[slot].state = RUNNING. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_cmd_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t slot,
                                                uint16_t ctx, uint32_t cmd_id);
/** CMD_END; clears cmd_queue[slot], cmds_done += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_cmd_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t slot,
                                              uint16_t ctx, uint32_t cmd_id, const char *status);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_job_issue(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                uint32_t job_id, uint32_t cmd_id, const char *job_type,
                                                uint32_t tile_id, uint32_t vec_chunk_id);
/** JOB_DONE; jobs_done += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_job_done(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                               uint32_t job_id, uint32_t cmd_id, const char *job_type,
                                               uint32_t latency_cycles);
/** DMA_START; dma[channel] = the transfer. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_dma_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                uint32_t tx_id, uint16_t channel, const char *direction,
                                                uint64_t src_addr, uint64_t dst_addr, uint64_t size_bytes,
                                                uint32_t cmd_id, uint32_t job_id);
/** DMA_END; clears dma[channel], dma_bytes += size_bytes (the DMA_START's size: it feeds
    the counter only, as the JSONL event has no such field). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_dma_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                              uint32_t tx_id, uint16_t channel, uint32_t cmd_id,
                                              uint32_t job_id, uint64_t size_bytes);
/** TE_START on engine `engine`; te[engine] = the job. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_te_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t engine,
                                               uint16_t ctx, uint32_t job_id, uint32_t cmd_id, uint32_t m,
                                               uint32_t n, uint32_t k, uint32_t tile_m, uint32_t tile_n,
                                               uint32_t tile_k);
/** TE_END; clears te[engine], macs += mac_count. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_te_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t engine,
                                             uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                             uint64_t mac_count, uint32_t latency_cycles);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_ve_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t engine,
                                               uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                               const char *op_type, uint32_t len, uint32_t batch);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_ve_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t engine,
                                             uint16_t ctx, uint32_t job_id, uint32_t cmd_id,
                                             uint32_t latency_cycles);
/** SRAM_ACCESS; access_type < 2 (USCOPE_NPU_ACCESS_*), conflict 0, 1 or a sentinel;
    sram_accesses += 1 and sram_banks[bank_id].accesses += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_sram_access(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                  uint64_t addr, uint16_t bank_id, uint8_t access_type,
                                                  const char *by, uint8_t conflict, uint32_t cmd_id,
                                                  uint32_t job_id);
/** SRAM_CONFLICT; stalled_clients is the JSON array joined with ',' ("VE,DMA");
    sram_conflicts += 1 and sram_banks[bank_id].conflicts += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_sram_conflict(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                    uint16_t bank_id, uint32_t num_requests, uint32_t allowed,
                                                    const char *stalled_clients, uint32_t cmd_id);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_dram_tx_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                    uint32_t tx_id, uint16_t channel, uint64_t size_bytes,
                                                    uint32_t cmd_id);
/** DRAM_TX_END; clears dram[channel], dram_bytes += size_bytes (counter only). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_dram_tx_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                  uint32_t tx_id, uint16_t channel, uint64_t size_bytes);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_noc_tx_start(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                   uint32_t tx_id, uint16_t link_id, uint64_t size_bytes,
                                                   uint32_t cmd_id);
/** NOC_TX_END; clears noc[link_id], noc_bytes += size_bytes (counter only). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_noc_tx_end(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                 uint32_t tx_id, uint16_t link_id, uint64_t size_bytes);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_irq_emit(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                               uint32_t cmd_id, uint32_t token, uint32_t irq_line);
/** TOKEN_COMPLETE; tokens_done += 1. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_token_complete(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                                     uint32_t token, uint32_t cmd_id, const char *status);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_error(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                            const char *component, const char *code, const char *msg,
                                            uint32_t cmd_id, uint32_t job_id);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_warn(uscope_writer_t *w, const uscope_npu_t *npu, uint16_t ctx,
                                           const char *component, const char *code, const char *msg,
                                           uint32_t cmd_id, uint32_t job_id);
/** Add delta to counter `counter` (USCOPE_NPU_COUNTER_*, then the cfg counters). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_counter_add(uscope_writer_t *w, const uscope_npu_t *npu,
                                                  uint16_t counter, uint64_t delta);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* USCOPE_PROTOCOLS_H */
