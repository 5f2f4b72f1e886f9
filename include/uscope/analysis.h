/*
 * libuscope analysis — the questions an architect asks of a trace, answered
 * over an open reader: instructions, stage spans, IPC and stalls of a cpu
 * protocol scope; counters and buffers; noc transaction latencies; npu engine
 * utilization. The reference's `uscope-cpu` CpuTrace, in C.
 *
 * Same error model as <uscope/uscope.h>: every call that can fail returns
 * USCOPE_OK or a negative USCOPE_ERR_*, leaves a message in
 * uscope_last_error(), never aborts on input and never lets an exception out.
 * Out-parameters come first and are written only on success.
 *
 * Handles and memory
 * ------------------
 *  - An analysis handle is opened over an existing uscope_reader_t and reads
 *    the file through it (no second mapping, no second descriptor). It must
 *    be closed before the reader. While it is open, the reader may still be
 *    used directly, but not from another thread at the same time.
 *  - Strings (const char *) returned by a handle are owned by it and stay
 *    valid until it is closed, unless a function says otherwise.
 *  - A result object (uscope_buffer_state_t, uscope_insn_iter_t, ...) is
 *    owned by the caller, freed by its *_free (which accepts NULL), and
 *    must be freed before the handle it came from.
 *
 * Threads: a handle is not safe for concurrent use, like the reader under it.
 *
 * Cycles: every cycle number is time / the scope clock's period (the
 * reference's convention). A range [start, end] is closed; a range past the
 * trace's end is clamped to it (the clamp is reported through
 * uscope_cpu_trace_info().max_cycle; the CLI warns).
 *
 * Memory: instructions are built one segment at a time and kept in a cache of
 * at most cache_segments segments (default 8) and 24 MiB, so a query over a window of a
 * 10 GB trace touches only the segments it needs and memory stays bounded.
 * Counter downsampling over a long range is served from the TSUM mipmaps
 * (spec §6) and costs O(buckets), not O(cycles).
 */
#ifndef USCOPE_ANALYSIS_H
#define USCOPE_ANALYSIS_H

#include "uscope/uscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ── cpu protocol ─────────────────────────────────────────────────────── */

typedef struct uscope_cpu_trace uscope_cpu_trace_t;

typedef struct uscope_cpu_trace_options_s {
  uint32_t struct_size;       /* sizeof(uscope_cpu_trace_options_t) */
  /* The cpu scope to analyze, by scope name; NULL: the first scope whose
     protocol is "cpu". */
  const char *scope;
  /* An ELF to disassemble and symbolize with; NULL: the trace's
     cpu.elf_path DUT property, if any (a missing file there is not an
     error: disassembly then comes from inst_bits alone). An ELF whose
     machine or class does not match the trace's cpu.isa is refused with
     USCOPE_ERR_INVALID_ARGUMENT. */
  const char *elf_path;
  /* Segments of decoded instructions kept in memory; 0: 8. Whatever the
     count, the cache holds at most 24 MiB of them besides the two most
     recently used. */
  uint32_t cache_segments;
  uint32_t reserved;
} uscope_cpu_trace_options_t;

/**
 * Open the cpu analysis of reader. opts may be NULL (the defaults).
 * USCOPE_ERR_NOT_FOUND "this trace has no cpu protocol scope" when the
 * schema has none (or none named opts->scope: the message names the cpu
 * scopes there are); USCOPE_ERR_SCHEMA when the scope lacks what the cpu
 * protocol requires (an "entities" storage with entity_id and pc, the
 * stage_transition event). Close with uscope_cpu_trace_close() before the
 * reader.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_open(uscope_cpu_trace_t **out, uscope_reader_t *reader,
                                                                 const uscope_cpu_trace_options_t *opts);
USCOPE_API void uscope_cpu_trace_close(uscope_cpu_trace_t *t);

typedef struct uscope_cpu_trace_info_s {
  uint32_t struct_size;
  uint32_t segment_count;
  uint64_t total_instructions;   /* from the TSUM when present, else 0 */
  uint64_t max_cycle;            /* total (or last) time / period_ps */
  uint64_t period_ps;            /* the scope clock's period (1000 when none) */
  uint32_t num_stages;
  uint32_t num_counters;
  uint32_t num_buffers;
  uint32_t num_metadata;
  const char *version;           /* "0.3": the file format's */
  const char *scope_name;
  const char *isa;               /* cpu.isa, or "" */
  const char *elf_path;          /* the ELF in use, or "" */
  uint32_t has_symbols;          /* 1: the ELF gave symbols or line tables */
  uint32_t reserved;
  /* Why the cpu.elf_path ELF is not in use (missing, unreadable, another
     ISA), or "": an ELF named by the trace is optional, one named by the
     caller (opts->elf_path) is not. */
  const char *elf_note;
} uscope_cpu_trace_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_info(const uscope_cpu_trace_t *t,
                                                                 uscope_cpu_trace_info_t *out);
/** Stage index (the pipeline_stage enum value) → its name. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_stage(const uscope_cpu_trace_t *t, const char **name,
                                                                  uint32_t index);
/**
 * The reference's metadata list, in its order: File, Format, Flags, every DUT
 * property, Clock, Pipeline, Duration, Segments, Schema, Strings.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_metadata(const uscope_cpu_trace_t *t, const char **key,
                                                                     const char **value, uint32_t index);

/* Counters: 1-slot dense storages with one u64 field (spec cpu §6), in
   schema order, across the whole trace (as the reference lists them). */
typedef struct uscope_counter_info_s {
  const char *name;
  uint16_t storage_id;
  uint16_t reserved;
  uint32_t tsum_index;           /* its TSUM counter, or UINT32_MAX */
} uscope_counter_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter(const uscope_cpu_trace_t *t,
                                                                    uscope_counter_info_t *out, uint32_t index);
/**
 * Counter index by exact name. USCOPE_ERR_NOT_FOUND names the known counters
 * in the message.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_find_counter(const uscope_cpu_trace_t *t, uint32_t *index,
                                                                         const char *name);
/** Cumulative value at the end of cycle (exact: replays one segment). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter_value(uscope_cpu_trace_t *t, uint64_t *value,
                                                                          uint32_t counter, uint64_t cycle);
/** value(cycle) - value(cycle - 1). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter_delta(uscope_cpu_trace_t *t, uint64_t *delta,
                                                                          uint32_t counter, uint64_t cycle);
/** (value(cycle) - value(cycle - window)) / window: the rate over a window ending at cycle. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter_rate(uscope_cpu_trace_t *t, double *rate,
                                                                         uint32_t counter, uint64_t cycle,
                                                                         uint64_t window);
/**
 * Cumulative values at cycles start .. start + count - 1 into values[count]
 * (one pass over the segments that hold them; clamped cycles past the end
 * repeat the last value).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter_series(uscope_cpu_trace_t *t, uint64_t *values,
                                                                           uint32_t counter, uint64_t start,
                                                                           uint64_t count);
typedef struct uscope_counter_bucket_s {
  uint64_t start_cycle;          /* of the bucket; it ends where the next one starts */
  uint64_t min_delta;            /* least per-cycle increment seen in the bucket */
  uint64_t max_delta;            /* greatest per-cycle increment */
  uint64_t sum;                  /* increments over the bucket */
} uscope_counter_bucket_t;
/**
 * A min/max downsample of [start, end) into n equal buckets. From the TSUM
 * mipmap level whose entries are no wider than a bucket when the trace has
 * one (*exact = 0 when a bucket edge splits a mipmap entry: its sum is then
 * shared in proportion), otherwise by replaying the range (*exact = 1).
 * exact may be NULL.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_counter_downsample(uscope_cpu_trace_t *t,
                                                                               uscope_counter_bucket_t *buckets,
                                                                               int *exact, uint32_t counter,
                                                                               uint64_t start, uint64_t end,
                                                                               uint32_t n);

/* Buffers: storages with the SF_BUFFER flag. */
typedef struct uscope_buffer_info_s {
  const char *name;
  uint16_t storage_id;
  uint16_t capacity;
  uint16_t num_fields;
  uint16_t num_properties;
} uscope_buffer_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_buffer(const uscope_cpu_trace_t *t,
                                                                   uscope_buffer_info_t *out, uint32_t index);
/** Buffer index by exact name; USCOPE_ERR_NOT_FOUND names the known ones. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_find_buffer(const uscope_cpu_trace_t *t, uint32_t *index,
                                                                        const char *name);

/**
 * Occupied slots of buffer at cycles start .. start + count - 1 into
 * occupied[count], in one pass (what "when was the ROB full" needs).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_buffer_occupancy(uscope_cpu_trace_t *t, uint32_t *occupied,
                                                                             uint32_t buffer, uint64_t start,
                                                                             uint64_t count);

typedef struct uscope_buffer_state uscope_buffer_state_t;
/** Every buffer's state at the end of cycle. Free with uscope_buffer_state_free(). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_buffers_at(uscope_cpu_trace_t *t,
                                                                       uscope_buffer_state_t **out, uint64_t cycle);
USCOPE_API void uscope_buffer_state_free(uscope_buffer_state_t *s);
typedef struct uscope_buffer_fill_s {
  uint32_t capacity;
  uint32_t occupied;
  double fill_percent;           /* occupied / capacity * 100 */
  uint32_t num_properties;
  uint32_t num_pairs;            /* head/tail pointer pairs (same pair_id) */
} uscope_buffer_fill_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_buffer_state_fill(const uscope_buffer_state_t *s,
                                                                    uscope_buffer_fill_t *out, uint32_t buffer);
typedef struct uscope_buffer_slot_s {
  uint32_t slot;                 /* its index in the buffer */
  uint32_t num_fields;
  const uint64_t *fields;        /* the buffer's fields, in schema order */
  uint32_t has_entity;           /* 1: field 0 names a live entity of the catalog */
  uint32_t num_entity_fields;    /* the catalog fields after entity_id and pc */
  const uint64_t *entity_fields;
  const char *const *entity_field_names;
} uscope_buffer_slot_t;
/** The i-th occupied slot of buffer (in slot order). Pointers live as long as s. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_buffer_state_slot(const uscope_buffer_state_t *s,
                                                                    uscope_buffer_slot_t *out, uint32_t buffer,
                                                                    uint32_t i);
#define USCOPE_ROLE_PLAIN    0
#define USCOPE_ROLE_HEAD_PTR 1       /* spec §4.6.2 */
#define USCOPE_ROLE_TAIL_PTR 2
typedef struct uscope_buffer_property_s {
  const char *name;
  uint64_t value;
  uint8_t role;                  /* USCOPE_ROLE_* */
  uint8_t pair_id;
  uint16_t reserved;
} uscope_buffer_property_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_buffer_state_property(const uscope_buffer_state_t *s,
                                                                        uscope_buffer_property_t *out,
                                                                        uint32_t buffer, uint32_t i);
typedef struct uscope_pointer_pair_s {
  uint8_t pair_id;
  uint8_t reserved[3];
  uint32_t head_property;        /* property indices */
  uint32_t tail_property;
  uint64_t head;
  uint64_t tail;
  uint64_t distance;             /* (tail - head) mod capacity: slots between them */
} uscope_pointer_pair_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_buffer_state_pair(const uscope_buffer_state_t *s,
                                                                    uscope_pointer_pair_t *out, uint32_t buffer,
                                                                    uint32_t i);

/* Instructions. */
#define USCOPE_INSN_IN_FLIGHT 0
#define USCOPE_INSN_RETIRED   1
#define USCOPE_INSN_FLUSHED   2
typedef struct uscope_stage_span_s {
  uint32_t stage;                /* pipeline_stage value (uscope_cpu_trace_stage) */
  uint32_t lane;
  uint64_t start_cycle;
  uint64_t end_cycle;            /* the cycle the next stage (or the end) began */
} uscope_stage_span_t;
typedef struct uscope_insn_s {
  uint32_t entity_id;            /* catalog id (reused by later instructions) */
  uint32_t status;               /* USCOPE_INSN_* */
  uint64_t sim_id;               /* unique per instruction and stable across queries:
                                    first_cycle * catalog slots + catalog slot (65,536
                                    instead of the catalog's slots in files of the
                                    reference's Rust writer, whose slots are
                                    instruction ids: COMPAT 27); it sorts in fetch order */
  uint64_t pc;
  uint32_t inst_bits;
  uint32_t has_inst_bits;
  uint64_t first_cycle;          /* fetched */
  uint64_t last_cycle;           /* retired, flushed, or last seen */
  uint32_t flush_reason;         /* flush_reason value when flushed */
  uint32_t num_stages;
  const uscope_stage_span_t *stages;
  const char *disasm;            /* an annotation that disassembles it, else decoded from inst_bits, else "0x<pc>" */
  const char *annotations;       /* the other annotations, one per line, or "" */
  const char *function;          /* from the ELF's symbols, or "" */
  const char *source_file;       /* from the ELF's line table, or "" */
  uint32_t source_line;          /* 0: unknown */
  uint32_t num_deps;             /* dependency events naming it as dst */
  const uint32_t *dep_src;       /* their src entity ids */
} uscope_insn_t;
typedef struct uscope_insn_iter uscope_insn_iter_t;
/**
 * Iterate the instructions whose life meets [start, end] (first_cycle <= end
 * and last_cycle >= start), ordered by first_cycle then sim_id. Stage spans
 * that began before start or end after end are given whole: an instruction
 * is never cut. Pointers in *out stay valid until the next call on it.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_instructions(uscope_cpu_trace_t *t,
                                                                         uscope_insn_iter_t **out,
                                                                         uint64_t start, uint64_t end);
/** USCOPE_OK with *out filled, USCOPE_DONE at the end, or an error. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_insn_iter_next(uscope_insn_iter_t *it, uscope_insn_t *out);
USCOPE_API void uscope_insn_iter_free(uscope_insn_iter_t *it);
/**
 * One entity's timeline: the instructions with this entity id whose life
 * meets [start, end] (the whole trace: 0, UINT64_MAX), as the iterator above.
 * Entity ids are reused (our writer's ids are catalog slots), so an id names
 * many instructions over a trace; an id never seen in the range gives an
 * iterator that ends at once (the CLI and MCP server report that).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_entity(uscope_cpu_trace_t *t, uscope_insn_iter_t **out,
                                                                   uint32_t entity_id, uint64_t start,
                                                                   uint64_t end);

/* analyze_performance: the reference's summary, plus stall reasons. */
typedef struct uscope_stage_latency_s {
  uint32_t stage;
  uint32_t reserved;
  uint64_t total_cycles;
  uint64_t count;
  double avg_latency;
} uscope_stage_latency_t;
typedef struct uscope_counter_summary_s {
  uint32_t counter;
  uint32_t reserved;
  uint64_t start_value;
  uint64_t end_value;
  uint64_t delta;
  double rate_per_cycle;
} uscope_counter_summary_t;
typedef struct uscope_buffer_snapshot_s {
  uint32_t buffer;
  uint32_t capacity;
  uint64_t cycle[3];             /* start, mid, end */
  uint32_t occupied[3];
  double fill_percent[3];
} uscope_buffer_snapshot_t;
typedef struct uscope_stall_count_s {
  uint32_t reason;               /* stall_reason value */
  uint32_t reserved;
  const char *name;
  uint64_t count;                /* stall events in the range */
} uscope_stall_count_t;
typedef struct uscope_perf_report_s {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t start_cycle;
  uint64_t end_cycle;
  uint64_t range_cycles;         /* end - start */
  /* Instructions fetched in [start, end): */
  uint64_t total;
  uint64_t retired;
  uint64_t flushed;
  uint64_t in_flight;
  double flush_rate;             /* flushed / total */
  double ipc;                    /* retired / range_cycles (the reference's IPC:
                                    retired among those fetched in the range) */
  uint64_t retired_in_range;     /* instructions that retired in [start, end) */
  double commit_ipc;             /* retired_in_range / range_cycles */
  uint32_t num_counters;
  uint32_t num_buffers;
  uint32_t num_stages;           /* stage latencies, sorted by avg_latency, largest first */
  uint32_t num_stalls;           /* stall reasons with a count, largest first */
  const uscope_counter_summary_t *counters;
  const uscope_buffer_snapshot_t *buffers;
  const uscope_stage_latency_t *stages;
  const uscope_stall_count_t *stalls;
} uscope_perf_report_t;
/**
 * Analyze [start, end) (start < end, else USCOPE_ERR_INVALID_ARGUMENT). The
 * arrays in *out are owned by t and valid until the next analyze call on it
 * or its close.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_cpu_trace_analyze(uscope_cpu_trace_t *t, uscope_perf_report_t *out,
                                                                    uint64_t start, uint64_t end);

/* ── latencies (noc and npu) ─────────────────────────────────────────── */

/*
 * Latency statistics of a group, in cycles. count, min, max and mean are
 * exact. Percentiles are by nearest rank (p50 of n values is the
 * ceil(n/2)-th smallest); they are exact while the group has at most 4096
 * values (65,536 for a report's overall figures), and beyond that come from
 * a log-linear histogram (64 buckets per power of two, a bucket's midpoint):
 * then exact = 0 and the relative error is at most 1/128 (0.79 %). Memory
 * stays bounded whatever the number of transactions.
 */
typedef struct uscope_latency_s {
  uint64_t count;
  uint64_t min;
  uint64_t max;
  uint64_t p50;
  uint64_t p90;
  uint64_t p99;
  double mean;
  uint32_t exact;                /* 1: the percentiles are exact */
  uint32_t reserved;
} uscope_latency_t;

/* ── noc protocol ─────────────────────────────────────────────────────── */

/*
 * Transaction latencies of the noc scopes of a trace (spec chapter "µScope
 * noc Protocol"). A transaction (a hop) is one life of a transactions
 * catalog slot (§3.4): issued when the slot becomes valid, complete when it
 * is cleared; its latency is in cycles of its scope's clock. Hops joined by
 * txn_handoff events (§5.7: the source's live or last completed hop to the
 * destination's live or next issued one) make one end-to-end transaction,
 * whose latency runs from the first hop's issue to the last hop's
 * completion, in cycles of the first noc scope's clock (a hop no handoff
 * joins is an end-to-end transaction of its own).
 *
 * Over a range [start_cycle, end_cycle] (cycles of the first noc scope's
 * clock, closed, clamped to the trace): a hop or end-to-end transaction
 * counts when it completes in the range, with its whole latency (its issue
 * may lie before the range: the analysis steps back at most 64 segments to
 * find it; one issued earlier still counts in unknown_issue and not in the
 * latencies); retries, timeouts, handoffs and link credits count when they
 * lie in the range. A credit stall is a retry whose reason is no_credits
 * (§5.3). Events of a scope below a noc scope (a noc.router, §2.6) count
 * with that noc scope; link credits are kept per event scope and port.
 * Reads the segments of the range (and the lookback) once.
 */
typedef struct uscope_noc_analysis uscope_noc_analysis_t;

/**
 * Open the noc analysis of reader. USCOPE_ERR_NOT_FOUND "this trace has no
 * noc protocol scope" when the schema has none; USCOPE_ERR_SCHEMA when a noc
 * scope has no transactions catalog (sparse, with txn_id, src_port and
 * dst_port). Close with uscope_noc_analysis_close() before the reader.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_analysis_open(uscope_noc_analysis_t **out,
                                                                    uscope_reader_t *reader);
USCOPE_API void uscope_noc_analysis_close(uscope_noc_analysis_t *a);

typedef struct uscope_noc_counts_s {
  uint64_t completed;            /* hops completed in the range */
  uint64_t unknown_issue;        /* of those, issued before what was read: no latency */
  uint64_t retries;
  uint64_t timeouts;
  uint64_t credit_stalls;        /* retries whose reason is no_credits */
} uscope_noc_counts_t;

typedef struct uscope_noc_scope_stats_s {  /* one noc scope: a fabric or a link */
  const char *name;
  uint16_t scope_id;
  uint16_t reserved[3];
  uint64_t period_ps;            /* its clock's: its latencies are in these cycles */
  uint64_t in_flight;            /* live at the end of the range */
  uscope_noc_counts_t counts;
  uscope_latency_t latency;
} uscope_noc_scope_stats_t;

typedef struct uscope_noc_pair_stats_s {   /* one (scope, src_port, dst_port) */
  uint32_t scope;                /* index in uscope_noc_report_t.scopes */
  uint32_t src_port;
  uint32_t dst_port;
  uint32_t reserved;
  uscope_noc_counts_t counts;    /* retries and timeouts of its live transactions */
  uscope_latency_t latency;
} uscope_noc_pair_stats_t;

typedef struct uscope_noc_port_credits_s { /* link_credit events of one (scope, port) */
  uint32_t scope;                /* index in uscope_noc_report_t.scopes: its noc scope */
  uint16_t scope_id;             /* the events' own scope: that one or a router below it (§2.6) */
  uint16_t reserved;
  const char *where;             /* that scope's name */
  uint32_t port;
  uint32_t reserved2;
  uint64_t grants;
  uint64_t consumes;
  uint64_t credits_granted;
  uint64_t credits_consumed;
} uscope_noc_port_credits_t;

typedef struct uscope_noc_report_s {
  uint32_t struct_size;          /* sizeof(uscope_noc_report_t), set by the caller */
  uint32_t clamped;              /* 1: the range asked for went past the trace */
  uint64_t start_cycle;          /* the range, clamped */
  uint64_t end_cycle;
  uint64_t max_cycle;            /* the trace's last cycle */
  uint64_t period_ps;            /* the first noc scope's clock */
  uscope_noc_counts_t counts;    /* every scope */
  uint64_t in_flight;
  uint64_t handoffs;             /* txn_handoff events in the range */
  uint64_t multi_hop;            /* end-to-end transactions of two hops or more */
  uint64_t retries_by_reason[8]; /* by retry_reason value, USCOPE_NOC_RETRY_* */
  uscope_latency_t latency;      /* every hop */
  uscope_latency_t end_to_end;
  uint32_t num_scopes;           /* schema order */
  uint32_t num_pairs;            /* by scope, src_port, dst_port */
  uint32_t num_ports;            /* by scope_id, port */
  uint32_t segments_read;
  const uscope_noc_scope_stats_t *scopes;
  const uscope_noc_pair_stats_t *pairs;
  const uscope_noc_port_credits_t *ports;
} uscope_noc_report_t;

/**
 * Analyze [start_cycle, end_cycle] (0, UINT64_MAX: the whole trace).
 * start_cycle > end_cycle is USCOPE_ERR_INVALID_ARGUMENT; out->struct_size
 * below sizeof(uscope_noc_report_t) too. The arrays and names in *out are
 * owned by a and valid until the next analyze call on it or its close.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_noc_analyze(uscope_noc_analysis_t *a, uscope_noc_report_t *out,
                                                              uint64_t start_cycle, uint64_t end_cycle);

/* ── npu protocol ─────────────────────────────────────────────────────── */

/*
 * The npu report (docs/convert.md "npu-report", npu-trace-jsonl.md §7) of
 * the first npu scope of a trace, over a cycle range: the same code as
 * `uscope npu-report` (the events paired START to END, engines busy as the
 * union of their running jobs), plus command latency percentiles.
 *
 * Over the whole trace (0, UINT64_MAX) it is npu-report's: T is the span
 * from the first to the last npu event. Over a range [start_cycle,
 * end_cycle] (cycles of the npu scope's clock, clamped to the trace): T is
 * end - start; TE, VE and DRAM busy spans are cut to the range; a command or
 * DMA transfer counts when it ends in the range, whole; SRAM events when
 * they lie in it. The trace is read from its first segment to the one
 * holding end_cycle, in bounded memory (the report folds busy spans as it
 * goes).
 */
typedef struct uscope_npu_analysis uscope_npu_analysis_t;

/**
 * Open the npu analysis of reader. USCOPE_ERR_NOT_FOUND "this trace has no
 * npu protocol scope" when the schema has none; USCOPE_ERR_SCHEMA when its
 * contexts storage is not the npu protocol's; USCOPE_ERR_UNSUPPORTED in a
 * build without the npu converters (USCOPE_WITH_NPU=OFF). Close with
 * uscope_npu_analysis_close() before the reader.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_analysis_open(uscope_npu_analysis_t **out,
                                                                    uscope_reader_t *reader);
USCOPE_API void uscope_npu_analysis_close(uscope_npu_analysis_t *a);

#define USCOPE_NPU_ENGINE_TE   0
#define USCOPE_NPU_ENGINE_VE   1
#define USCOPE_NPU_ENGINE_DRAM 2
typedef struct uscope_npu_engine_s {
  const char *name;              /* "TE", "VE", "DRAM 0", "DRAM -" (no channel id) */
  uint32_t kind;                 /* USCOPE_NPU_ENGINE_* */
  uint32_t channel;              /* DRAM channel, else UINT32_MAX */
  uint64_t jobs;                 /* intervals (jobs, transfers) that met the range */
  uint64_t busy_cycles;          /* cycles of T with at least one running */
  double utilization;            /* busy_cycles / T */
} uscope_npu_engine_t;

typedef struct uscope_npu_phase_s {
  const char *name;              /* the command's phase, "(none)" when absent */
  uint64_t commands;
  uint64_t total_cycles;
  uint64_t min_cycles;
  uint64_t max_cycles;
  double mean_cycles;
} uscope_npu_phase_t;

typedef struct uscope_npu_report_s {
  uint32_t struct_size;          /* sizeof(uscope_npu_report_t), set by the caller */
  uint32_t clamped;              /* 1: the range asked for went past the trace */
  uint64_t start_cycle;          /* T's start and end: the range, or the event span */
  uint64_t end_cycle;
  uint64_t range_cycles;         /* T = end - start */
  uint64_t max_cycle;            /* the trace's last cycle */
  uint64_t period_ps;            /* the npu scope's clock */
  uint64_t dma_transfers;
  uint64_t dma_bytes;
  double dma_bytes_per_cycle;
  uint64_t sram_accesses;
  uint64_t sram_conflicts;
  uscope_latency_t command_latency; /* CMD_START to CMD_END of the commands counted */
  uint32_t num_engines;
  uint32_t num_phases;           /* by name */
  const uscope_npu_engine_t *engines;
  const uscope_npu_phase_t *phases;
  const char *text;              /* npu-report's text of the same figures */
  const char *json;              /* and its JSON (one line) */
} uscope_npu_report_t;

/**
 * Analyze [start_cycle, end_cycle] (0, UINT64_MAX: npu-report's figures).
 * start_cycle > end_cycle is USCOPE_ERR_INVALID_ARGUMENT. The arrays and
 * strings in *out are owned by a and valid until the next analyze call on it
 * or its close.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_npu_analyze(uscope_npu_analysis_t *a, uscope_npu_report_t *out,
                                                              uint64_t start_cycle, uint64_t end_cycle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* USCOPE_ANALYSIS_H */
