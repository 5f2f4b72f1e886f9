/*
 * libuscope_dpi — the SystemVerilog DPI-C bridge of libuscope.
 *
 * This header is the manual of the C side of the bridge. The SystemVerilog
 * side is sv/uscope_pkg.sv (package uscope_pkg); docs/dpi.md has the guide,
 * the CSV field syntax and the JSON schema format.
 *
 * What lives where
 * ----------------
 *  libuscope_dpi.so defines ONLY the calls below: the ones that need a type
 *  conversion (SV strings and CSV lists into schema structs, a fixed-size SV
 *  byte array into an event payload, JSON into a schema) plus a name -> handle
 *  registry. The per-cycle calls (uscope_begin_cycle, uscope_slot_set,
 *  uscope_prop_set, the protocol helpers' uscope_cpu_fetch, ...) already have
 *  DPI-compatible C signatures; uscope_pkg imports them straight from
 *  libuscope.so, which libuscope_dpi.so depends on. There is no second writer
 *  and no symbol is defined twice.
 *
 * Types
 * -----
 *  Every prototype is written with the C types Verilator generates for the
 *  matching DPI import (chandle = void *, string = const char *, int = int,
 *  int unsigned = unsigned int, shortint unsigned = unsigned short, a fixed
 *  array of byte unsigned = const unsigned char *), and a test compiles the
 *  bridge against Verilator's generated __Dpi.h to keep it so. The header
 *  includes nothing: dlopen users (Python ctypes, Rust, ...) can copy it.
 *
 * Errors
 * ------
 *  Every call returns a status (0 = USCOPE_OK, negative = error; an id >= 0
 *  for the schema calls) or a handle that is NULL on failure. A failing call
 *  leaves a message readable with uscope_dpi_last_error() on the same thread
 *  and its status with uscope_dpi_last_status(). The message is libuscope's
 *  own last error (uscope_last_error(); the bridge records its failures with
 *  uscope_set_last_error()), valid until the next failing call, of the bridge
 *  or of libuscope, on that thread. Codes -1..-63 are libuscope's (uscope.h);
 *  the bridge adds USCOPE_DPI_ERR_* below. Nothing aborts, exits, calls
 *  $fatal or lets a C++ exception out; a NULL or unknown handle is an error.
 *
 * Threads
 * -------
 *  Schema handles, writers and protocol handles are used by one thread at a
 *  time (the simulation thread). The registry and the bookkeeping of handles
 *  take a mutex: they are for set-up, not for every cycle.
 */
#ifndef USCOPE_USCOPE_DPI_H
#define USCOPE_USCOPE_DPI_H

#ifdef __cplusplus
extern "C" {
#endif

/** An SV chandle: a uscope_writer_t *, a bridge schema, a protocol handle. */
typedef void *uscope_dpi_chandle_t;

/* ── Versions and status ──────────────────────────────────────────────── */

/** The bridge's library version, "MAJOR.MINOR.PATCH" (same as libuscope's). */
#define USCOPE_DPI_VERSION "0.4.0"

/** Bytes of the fixed payload array of uscope_event_raw (uscope_pkg::uscope_payload_t). */
#define USCOPE_DPI_PAYLOAD_BYTES 256

/*
 * Bridge status codes. Pinned, never renumbered. libuscope uses -1..-63; the
 * bridge starts at -100.
 */
#define USCOPE_DPI_ERR_SYNTAX      (-100) /* a CSV field list / options string does not parse */
#define USCOPE_DPI_ERR_JSON        (-101) /* the JSON file cannot be read or is not JSON */
#define USCOPE_DPI_ERR_JSON_SCHEMA (-102) /* valid JSON, but not a schema: missing or mistyped
                                             member, unknown member, type or reference. The
                                             message names the JSON path ($.storages[1]...) */
#define USCOPE_DPI_ERR_BAD_HANDLE  (-103) /* a chandle that is NULL or not of the kind the call
                                             takes (e.g. a writer passed as a schema) */

/** "0.4.0". Static storage. SV: string uscope_dpi_version(). */
const char *uscope_dpi_version(void);

/** The message of the last failing call on this thread, bridge or libuscope (= uscope_last_error()), or "". */
const char *uscope_dpi_last_error(void);

/** The status of the last failing bridge call on this thread, or 0. */
int uscope_dpi_last_status(void);

/** A static description of any status, libuscope's or the bridge's. Never NULL. */
const char *uscope_dpi_status_str(int status);

/* ── Handle registry ──────────────────────────────────────────────────── */

/**
 * Publish handle under name (copied) for SystemVerilog to fetch with
 * uscope_handle(). A second registration of the same name replaces the first;
 * a NULL handle removes the name. uscope_close() removes every name that
 * points to the writer it closes. The registry does not own handles.
 * Thread-safe (a mutex). A NULL name is ignored (and sets the last error).
 */
void uscope_dpi_register(const char *name, void *handle);

/** The handle registered under name, or NULL (NULL name, or not registered). */
void *uscope_handle(const char *name);

/* ── Schema building ──────────────────────────────────────────────────── */

/*
 * A bridge schema wraps a libuscope uscope_schema_t together with the names it
 * has seen, so that later calls can refer to clocks, scopes and enums by name
 * and uscope_sv_find() can answer lookups. Calls that add something return the
 * new id (>= 0) or a negative status; nothing is added on failure.
 *
 * The bridge's names are uscope_sv_schema_*: libuscope already exports
 * uscope_schema_new / uscope_schema_free with pointer signatures.
 */

/** A new empty schema, or NULL (last error set). Free with uscope_sv_schema_free(). */
void *uscope_sv_schema_create(void);

/**
 * A schema read from a JSON file (format: docs/dpi.md), or NULL with
 * USCOPE_DPI_ERR_JSON / USCOPE_DPI_ERR_JSON_SCHEMA / a libuscope status and a
 * message naming the JSON path. More may be added to it from SV afterwards.
 * The file's "options" member, if any, becomes the default options of
 * uscope_open / uscope_open_opts on this schema.
 */
void *uscope_sv_schema_from_json(const char *json_path);

/**
 * Release a schema. Writers opened from it are unaffected (the writer copies
 * the schema at open), as are protocol handles declared on it. NULL is a
 * no-op returning 0; an unknown handle returns USCOPE_DPI_ERR_BAD_HANDLE.
 */
int uscope_sv_schema_free(void *schema);

/** Add a clock domain; returns its id (0..254). period_ps 0 = unknown. */
int uscope_sv_schema_clock(void *schema, const char *name, unsigned int period_ps);

/**
 * Add a scope; returns its id. parent: a scope id, or -1 for the root scope
 * (the first scope must be the root). protocol: "" or NULL for none. clock: a
 * clock id, or -1 to inherit the parent's.
 */
int uscope_sv_schema_scope(void *schema, const char *name, int parent, const char *protocol,
                           int clock);

/** Add an enum whose values are the comma-separated names in values_csv; returns its id. */
int uscope_sv_schema_enum(void *schema, const char *name, const char *values_csv);

/**
 * Add a storage; returns its id. scope: a scope id or -1 (root level).
 * num_slots: 1..65535. flags: 0 dense, 1 sparse (USCOPE_SF_SPARSE), 2 buffer
 * hint (USCOPE_SF_BUFFER), or both. fields / properties: CSV field lists,
 * "name:type[:role],...", e.g. "entity_id:u32,pc:u64,stage:enum(pipeline_stage)"
 * and "head:u16:head_ptr(0),tail:u16:tail_ptr(0)". properties may be "".
 * Types: u8 u16 u32 u64 i8 i16 i32 i64 bool string enum(<enum name or id>).
 */
int uscope_sv_schema_storage(void *schema, const char *name, int scope, unsigned int num_slots,
                             unsigned int flags, const char *fields, const char *properties);

/** Add an event type with the CSV field list fields ("" = no payload); returns its id. */
int uscope_sv_schema_event(void *schema, const char *name, int scope, const char *fields);

/** Add a summary field of type type ("u64", ...) to scope (-1 = root); returns its id. */
int uscope_sv_schema_summary(void *schema, const char *name, const char *type, int scope);

/** Add a DUT property (spec §3.1), written into the file at open. Returns 0. */
int uscope_sv_schema_dut_property(void *schema, const char *key, const char *value);

/**
 * Look up an id by name in a bridge schema or in a writer opened by the
 * bridge (uscope_open*; it keeps the names as they were at open). kind:
 * "clock", "scope", "enum", "storage", "event", "summary"; or "field" /
 * "property" with name "storage.field", "event_field" with "event.field",
 * "enum_value" with "enum.value" (the last '.' separates the member).
 * Storages and events are found by libuscope's own look-up
 * (uscope_schema_find_storage / uscope_writer_find_storage, the rules of
 * uscope_reader_find_storage): the plain name, or the name qualified by its
 * enclosing scopes, nearest last ("core1.rob", "top.core1.rob"); so is the
 * owner of a field or property ("core1.rob.pc"). Items a protocol
 * declaration adds are known too.
 * Returns the id / index; USCOPE_ERR_AMBIGUOUS when the name fits several
 * items (a plain name declared in several scopes; for clocks, scopes, enums
 * and summary fields, which take no qualification, a name declared more than
 * once), the message listing the candidates: qualify it or use the id
 * returned when it was declared; USCOPE_ERR_NOT_FOUND;
 * USCOPE_ERR_INVALID_ARGUMENT (unknown kind, no '.' in a member name); or
 * USCOPE_DPI_ERR_BAD_HANDLE (also for a closed writer). (Before 0.1 a plain
 * name meant the first one declared.)
 */
int uscope_sv_find(void *handle, const char *kind, const char *name);

/* ── Writers ──────────────────────────────────────────────────────────── */

/**
 * Create path and return a uscope_writer_t * (the handle the per-cycle calls
 * of libuscope take), or NULL with the last error set. The schema (a bridge
 * schema) is copied; it may be freed or reused afterwards. Default options,
 * or those of the schema's JSON file.
 */
void *uscope_open(const char *path, void *schema);

/**
 * As uscope_open, with options: "key=value" pairs separated by ',' or spaces,
 * applied over the defaults. Keys: compression=lz4|zstd|none, level=<int>,
 * checkpoint_interval_ps=<u64>, durability=flush|none|fdatasync,
 * frames=v02|v01, backpressure=block|drop, queue_bytes=<u64>,
 * value_check=none|strict, compress_threads=<1..64>|inline|auto. An unknown
 * key or value is USCOPE_DPI_ERR_SYNTAX.
 */
void *uscope_open_opts(const char *path, void *schema, const char *options);

/** Read schema_json_path (as uscope_sv_schema_from_json) and open path with it. */
void *uscope_open_json(const char *path, const char *schema_json_path);

/**
 * Finalize and free a writer (any writer, also one opened in C): returns
 * uscope_writer_close()'s status (the first sticky error of its life, or 0)
 * and removes the registry names that point to it. A frame left open by
 * uscope_sv_cycle() is ended first, so it is kept. NULL is a no-op returning 0;
 * a bridge schema is USCOPE_DPI_ERR_BAD_HANDLE.
 */
int uscope_close(void *writer);

/**
 * A producer of writer (uscope_writer_add_producer in uscope.h, whose rules
 * apply): a writer handle of its own for another simulation thread (a
 * Verilator --threads partition, one core model), taking every per-cycle call
 * and uscope_sv_cycle; the writer's encoder merges the producers' cycles by
 * time. Add every producer before any records a cycle. Close each producer
 * with uscope_close() before the writer; uscope_close() of the writer also
 * forgets its producers' handles. NULL with the last error set on failure
 * (USCOPE_DPI_ERR_BAD_HANDLE for a NULL handle or a schema).
 */
void *uscope_sv_add_producer(void *writer);

/**
 * Frames from SystemVerilog, for a testbench whose harness does not call
 * uscope_begin_cycle / uscope_end_cycle around its clock edges (an
 * event-driven simulator, or a Verilator model whose sim_main knows nothing
 * of tracing). Call it before the ops of a clock edge with the edge's time:
 * when a frame at time_ps is open already it does nothing (a map lookup under
 * a mutex); otherwise it ends the frame it opened before, if any, and begins
 * one at time_ps. uscope_close() ends the last one. Returns the status of
 * those calls (BAD_STATE when the harness has begun a frame itself: use one
 * scheme or the other per writer). A writer used with it must be closed with
 * uscope_close(), not uscope_writer_close().
 */
int uscope_sv_cycle(void *writer, unsigned long long time_ps);

/**
 * Record an event whose payload is the first len bytes of payload, a
 * USCOPE_DPI_PAYLOAD_BYTES-byte array (SV: uscope_pkg::uscope_payload_t).
 * len must equal the event's payload size in the schema. A len above 256 is
 * a sticky misuse of the writer (as uscope_event() with a wrong size), never
 * a read past the array. Returns uscope_event()'s status.
 */
int uscope_event_raw(void *writer, unsigned short event_type_id, const unsigned char *payload,
                     unsigned int len);

/* ── Protocol declarations (include/uscope/protocols.h) ──────────────────── */

/*
 * Each declares one protocol scope on a bridge schema (all or nothing) and
 * returns libuscope's protocol handle (uscope_cpu_t *, uscope_noc_t *,
 * uscope_npu_t *), which the per-cycle calls take and uscope_cpu_free /
 * uscope_noc_free / uscope_npu_free release; or NULL with the last error set.
 * The handle outlives the schema. The scope, its storages, events and enums
 * become known to uscope_sv_find (storages and events also as
 * "<scope>.<name>", which a name declared in several scopes needs). parent: an existing scope id, -1 only when this scope is
 * the root; clock: a clock id or -1 (inherit). "" (or NULL) and 0 mean
 * "omitted" for the optional parameters, as NULL and 0 do in the config
 * structs.
 *
 * Lists are comma-separated. A buffer list is "name:slots" items, each
 * optionally followed by its extra fields in parentheses, a CSV field list:
 * "rob:64(pc:u64,done:bool),iq:16". Field lists use the CSV field syntax.
 */

/**
 * uscope_cpu_declare. stages: the pipeline stages in order ("IF,ID,EX,MEM,WB").
 * buffers: see above (entity_id is their field 0; the extra fields follow).
 * counters: extra counters after committed_insns. stall_reasons: "" for the
 * protocol's default list. entity_fields: extra fields of the entity catalog.
 */
void *uscope_sv_cpu_declare(void *schema, const char *scope_name, int parent, int clock,
                            const char *isa, const char *stages, unsigned int max_entities,
                            const char *buffers, const char *counters, const char *stall_reasons,
                            unsigned int fetch_width, unsigned int commit_width,
                            const char *elf_path, const char *vendor, const char *dut_name,
                            const char *entity_fields);

/**
 * uscope_noc_declare. stages: the transaction pipeline stages. opcodes: ""
 * for read,write. buffers: as for the cpu (txn_id is field 0). counters: extra
 * counters after the five standard ones. txn_fields: extra transaction fields.
 */
void *uscope_sv_noc_declare(void *schema, const char *scope_name, int parent, int clock,
                            const char *bus_protocol, const char *topology, const char *stages,
                            unsigned int max_txns, const char *opcodes, const char *buffers,
                            const char *counters, unsigned int data_width, unsigned int addr_width,
                            unsigned int num_ports, unsigned int dim_x, unsigned int dim_y,
                            unsigned int num_vcs, const char *routing, const char *txn_fields);

/** uscope_npu_declare; the counts are those of uscope_npu_config_t (0 = omitted / default). */
void *uscope_sv_npu_declare(void *schema, const char *scope_name, int parent, int clock,
                            unsigned int queue_depth, unsigned int num_te, unsigned int num_ve,
                            unsigned int num_dma_channels, unsigned int num_contexts,
                            unsigned int num_sram_banks, unsigned int num_dram_channels,
                            unsigned int num_noc_links, unsigned int te_rows, unsigned int te_cols,
                            const char *counters, const char *dut_name, const char *vendor,
                            const char *sim_id, const char *trace_version, const char *sim_version,
                            const char *sim_config_json);

/* ── pccx-lab .pccx traces (include/pccx/pccx.h, docs/pccx.md) ─────────── */

/**
 * Open a streaming pccx writer (libuscope's pccx_writer_t *), or NULL with
 * uscope_sv_pccx_error() set. options: "" or key=value items separated by
 * commas/spaces: encoding=bincode|flatbuf|raw, lab_version=..., isa_version=...,
 * mac_rows=N, mac_cols=N, peak_tops=X, cores=N, clock_mhz=N, queue_bytes=N,
 * backpressure=block|drop.
 */
void *uscope_sv_pccx_open(const char *path, const char *options);

/**
 * pccx_writer_event(); api_name "" means none (NULL). type_id 0..6
 * (MAC_COMPUTE 1, DMA_READ 2, DMA_WRITE 3, SYSTOLIC_STALL 4, BARRIER_SYNC 5,
 * API_CALL 6). Hot path: no allocation, no lock, no system call.
 */
int uscope_sv_pccx_event(void *writer, unsigned int core_id, unsigned long long start_cycle,
                         unsigned long long duration, unsigned int type_id, const char *api_name);

/** pccx_writer_set_total_cycles(). */
int uscope_sv_pccx_set_total_cycles(void *writer, unsigned long long cycles);

/** pccx_writer_close(): finalize (JSON header, checksum) and free. NULL: 0. */
int uscope_sv_pccx_close(void *writer);

/**
 * The message of the last failing bridge call on this thread, or "": the same
 * as uscope_dpi_last_error() (the bridge keeps one error record; a failing
 * uscope_sv_pccx_* call also sets uscope_dpi_last_status(), USCOPE_DPI_ERR_SYNTAX
 * for an options string that does not parse). Numbers in options are decimal
 * or 0x hex; a leading 0 (octal), a sign or a value past the field's width is
 * USCOPE_DPI_ERR_SYNTAX.
 */
const char *uscope_sv_pccx_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* USCOPE_USCOPE_DPI_H */
