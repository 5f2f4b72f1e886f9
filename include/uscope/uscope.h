/*
 * libuscope — write µScope cycle-accurate traces from hardware simulations.
 *
 * This header is the manual. It is plain C, includes only standard C headers,
 * and every function in it is exported from libuscope.so / libuscope.a.
 *
 * Conventions
 * -----------
 *  - Names are uscope_<object>_<verb>; the per-cycle calls keep the short names
 *    of the µScope specification (uscope_begin_cycle, uscope_slot_set, ...).
 *  - Every call that can fail returns uscope_status_t: 0 (USCOPE_OK) on
 *    success, a negative USCOPE_ERR_* code otherwise. Codes are pinned and are
 *    never renumbered. Out-parameters come first after the handle, and are
 *    written only on success.
 *  - A failing call leaves a human-readable message. It is readable from the
 *    calling thread with uscope_last_error() (valid until the next failing call
 *    on that thread), and for writer calls also with uscope_writer_error().
 *  - The library never calls assert, abort or exit on caller input, and never
 *    lets a C++ exception cross this boundary.
 *  - Every handle returned by a *_new / *_open is released by the matching
 *    *_free / *_close, which accepts NULL.
 *
 * Threads
 * -------
 *  A handle is not safe for concurrent use: call each handle from one thread at
 *  a time. Different handles may be used from different threads freely. A writer
 *  owns one background thread that encodes, compresses and writes segments; the
 *  caller never sees it except through uscope_writer_stats() and errors.
 *
 * Versions
 * --------
 *  The library version (USCOPE_VERSION_*) and the file-format version it writes
 *  (USCOPE_FORMAT_VERSION_*) are independent.
 */
#ifndef USCOPE_USCOPE_H
#define USCOPE_USCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ── Export macro ─────────────────────────────────────────────────────── */

#if defined(_WIN32)
#  if defined(USCOPE_BUILDING_LIBRARY)
#    define USCOPE_API __declspec(dllexport)
#  else
#    define USCOPE_API
#  endif
#elif defined(__GNUC__)
#  define USCOPE_API __attribute__((visibility("default")))
#else
#  define USCOPE_API
#endif

/* Every call that can fail returns a uscope_status_t, and ignoring one is a
 * warning: [[nodiscard]] in C++17, warn_unused_result in GNU C. In C++ a
 * (void) cast says "ignored on purpose"; GCC's C front end does not accept that
 * cast as an answer, so C code that relies on the writer's sticky error (check
 * uscope_writer_close() only) may define USCOPE_NO_MUST_USE before including
 * this header. */
#if defined(USCOPE_NO_MUST_USE)
#  define USCOPE_MUST_USE
#elif defined(__cplusplus) && __cplusplus >= 201703L
#  define USCOPE_MUST_USE [[nodiscard]]
#elif defined(__GNUC__)
#  define USCOPE_MUST_USE __attribute__((warn_unused_result))
#else
#  define USCOPE_MUST_USE
#endif

/* ── Versions ─────────────────────────────────────────────────────────── */

#define USCOPE_VERSION_MAJOR 0
#define USCOPE_VERSION_MINOR 4
#define USCOPE_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH, comparable with uscope_version_number(). */
#define USCOPE_VERSION_NUMBER \
  (USCOPE_VERSION_MAJOR * 10000 + USCOPE_VERSION_MINOR * 100 + USCOPE_VERSION_PATCH)

/** The µScope file-format version this library writes (spec header §2). */
#define USCOPE_FORMAT_VERSION_MAJOR 0
#define USCOPE_FORMAT_VERSION_MINOR 3

/** Runtime library version, as USCOPE_VERSION_NUMBER of the loaded library. */
USCOPE_API uint32_t uscope_version_number(void);
/** Runtime library version as "MAJOR.MINOR.PATCH". Static storage; never NULL. */
USCOPE_API const char *uscope_version_string(void);
/** File-format version written: (major << 16) | minor. */
USCOPE_API uint32_t uscope_format_version(void);

/* ── Status codes ─────────────────────────────────────────────────────── */

typedef int32_t uscope_status_t;

/* Values are part of the ABI: never renumbered, never reused. */
#define USCOPE_OK                       0
#define USCOPE_ERR_INVALID_ARGUMENT    (-1)  /* NULL pointer, bad option, bad enum value */
#define USCOPE_ERR_NO_MEMORY           (-2)  /* an allocation failed */
#define USCOPE_ERR_IO                  (-3)  /* open/write/sync failed (ENOSPC, EIO, ...) */
#define USCOPE_ERR_SCHEMA              (-4)  /* schema is inconsistent (bad parent, enum, type) */
#define USCOPE_ERR_LIMIT               (-5)  /* a format limit is exceeded (string pool, counts) */
#define USCOPE_ERR_BAD_STATE           (-6)  /* call out of order (outside begin/end, nested) */
#define USCOPE_ERR_TIME_BACKWARDS      (-7)  /* begin_cycle with a time before the previous one */
#define USCOPE_ERR_UNKNOWN_STORAGE     (-8)  /* storage id not in the schema */
#define USCOPE_ERR_UNKNOWN_SLOT        (-9)  /* slot index >= num_slots */
#define USCOPE_ERR_UNKNOWN_FIELD       (-10) /* field index >= num_fields */
#define USCOPE_ERR_UNKNOWN_PROPERTY    (-11) /* property index >= num_properties */
#define USCOPE_ERR_UNKNOWN_EVENT       (-12) /* event type id not in the schema */
#define USCOPE_ERR_PAYLOAD_SIZE        (-13) /* event payload size differs from the schema */
#define USCOPE_ERR_VALUE_RANGE         (-14) /* value does not fit the field's type */
#define USCOPE_ERR_DATA_DROPPED        (-15) /* cycles were dropped (USCOPE_BACKPRESSURE_DROP) */
#define USCOPE_ERR_INTERNAL            (-16) /* a bug in libuscope; please report it */
#define USCOPE_ERR_UNSUPPORTED         (-17) /* valid but not supported by this build */
/* -18 .. -63 are reserved for the reader (corrupt, truncated, version, ...). */
#define USCOPE_ERR_CORRUPT             (-18) /* file contents are inconsistent */
#define USCOPE_ERR_TRUNCATED           (-19) /* file ends inside a structure */
#define USCOPE_ERR_BAD_MAGIC           (-20) /* not a µScope file */
#define USCOPE_ERR_UNSUPPORTED_VERSION (-21) /* file-format major version unknown */
#define USCOPE_ERR_UNKNOWN_COMPRESSION (-22) /* F_COMP_METHOD names no known method */
#define USCOPE_ERR_NOT_FOUND           (-23) /* no storage/field/event/key of that name */
#define USCOPE_ERR_CHECKSUM            (-24) /* payload checksum mismatch (strict mode) */
#define USCOPE_ERR_BAD_HEADER          (-25) /* JSON header invalid, field missing or mistyped */
#define USCOPE_ERR_BAD_UTF8            (-26) /* a string is not valid UTF-8 */
#define USCOPE_ERR_DUPLICATE           (-27) /* schema: a name is already used where look-ups need it
                                                unique (the message names the scope and the name) */
#define USCOPE_ERR_AMBIGUOUS           (-28) /* look-up by name: several items have that name (the
                                                message lists their ids); qualify it, or use an id */
#define USCOPE_ERR_NONCONFORMING      (-29) /* strict read: the file follows a known writer's
                                                deviation from the spec (end-of-segment
                                                checkpoints, timestamps off the clock's grid) */

/** Not an error: an iterator has no more items. */
#define USCOPE_DONE 1

/**
 * A static, never-NULL English description of a status code (also for codes
 * this version does not know).
 */
USCOPE_API const char *uscope_status_str(uscope_status_t status);

/**
 * The message of the last failing call made on this thread, or "" if none.
 * Thread-local storage owned by the library; valid until the next failing
 * call on the same thread. Works before any handle exists.
 */
USCOPE_API const char *uscope_last_error(void);

/**
 * Record message as this thread's last error, as a failing library call does:
 * uscope_last_error() returns it until the next failure on this thread. For
 * layers built on this ABI (the DPI-C bridge, language bindings), so that a
 * failure of theirs and a failure of the library read from one place. NULL
 * records "". Never fails and never allocates: the message is copied into a
 * fixed thread-local buffer and cut at 1023 bytes.
 */
USCOPE_API void uscope_set_last_error(const char *message);

/* ── Schema ───────────────────────────────────────────────────────────── */

/** Field types (spec §4.2). Sizes: 1,2,4,8,1,2,4,8,1,4,1 bytes. */
#define USCOPE_FT_U8         0x01
#define USCOPE_FT_U16        0x02
#define USCOPE_FT_U32        0x03
#define USCOPE_FT_U64        0x04
#define USCOPE_FT_I8         0x05
#define USCOPE_FT_I16        0x06
#define USCOPE_FT_I32        0x07
#define USCOPE_FT_I64        0x08
#define USCOPE_FT_BOOL       0x09
#define USCOPE_FT_STRING_REF 0x0A /* u32 index into the string table */
#define USCOPE_FT_ENUM       0x0B /* u8 index into a named enum */

/** Storage flags (spec §4.6.1). */
#define USCOPE_SF_SPARSE 0x0001u /* slots have a valid bit; checkpoints hold valid slots */
#define USCOPE_SF_BUFFER 0x0002u /* protocol hint: a named buffer (ROB, IQ, ...) */

/** Storage-property roles (field_def_t byte 4, COMPAT point 5). */
#define USCOPE_ROLE_PLAIN    0
#define USCOPE_ROLE_HEAD_PTR 1
#define USCOPE_ROLE_TAIL_PTR 2

/** Sentinels of the format. */
#define USCOPE_NO_PARENT      0xFFFFu /* scope parent of the root scope */
#define USCOPE_ROOT_SCOPE     0xFFFFu /* storage/event scope_id: root-level */
#define USCOPE_CLOCK_INHERIT  0xFFu   /* scope clock_id: inherit from the parent */

/**
 * One field of a storage slot, a storage property or an event payload.
 * role and pair_id are meaningful for storage properties only (HEAD_PTR /
 * TAIL_PTR pairs); leave them 0 elsewhere. enum_id is used when type is
 * USCOPE_FT_ENUM, and must be 0 otherwise.
 */
typedef struct uscope_field {
  const char *name; /* UTF-8, copied */
  uint8_t type;     /* USCOPE_FT_* */
  uint8_t enum_id;
  uint8_t role;     /* USCOPE_ROLE_* */
  uint8_t pair_id;
} uscope_field_t;

/** A schema under construction. Opaque. */
typedef struct uscope_schema uscope_schema_t;

/**
 * Create an empty schema. *out receives a handle owned by the caller, to be
 * released with uscope_schema_free(). The writer copies what it needs at open,
 * so a schema may be freed right after uscope_writer_open() or reused.
 *
 * Strings are interned into the schema's string pool in call order (so the
 * pool matches the reference writer's for the same calls). Every add_* call
 * validates its arguments and returns USCOPE_ERR_SCHEMA or USCOPE_ERR_LIMIT
 * without changing the schema when they are wrong.
 *
 * Names are unique where a look-up by name needs them to be, and a repeat is
 * USCOPE_ERR_DUPLICATE (schema unchanged; the message names the scope and
 * the name): a clock's name among clocks; a scope's among the scopes of the
 * same parent; a value's name within its enum; a storage's, an event type's
 * and a summary field's among those of the same scope; a field's among the
 * fields of its storage or event, and a property's among the properties of
 * its storage. Different kinds may share a name (a storage and an event
 * "flush"), and so may items of different scopes (each core's "rob"):
 * uscope_schema_find_storage() and uscope_reader_find_storage() tell those
 * apart by scope ("core0.rob").
 * Enum names may repeat: enums have no scope (§4.5), fields refer to them by
 * id, and two protocol instances may each need their own "pipeline_stage".
 * See docs/compat.md.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_new(uscope_schema_t **out);
USCOPE_API void uscope_schema_free(uscope_schema_t *schema);

/**
 * A schema read from JSON text: clocks, scopes, enums, storages, events,
 * summary fields and DUT properties, referring to each other by name (the
 * format of docs/dpi.md, "JSON schema files"; the DPI bridge's
 * uscope_sv_schema_from_json reads the same files with the same reader).
 * json need not end with a NUL; len is its size in bytes. *out receives a
 * new schema owned by the caller (release it with uscope_schema_free; more
 * may be added to it with the add_* calls), or NULL on failure.
 *
 * Returns USCOPE_ERR_INVALID_ARGUMENT when json is not JSON;
 * USCOPE_ERR_SCHEMA, with a message naming the JSON path ("JSON schema:
 * $.storages[1]: missing member "slots"), when it does not describe a
 * schema (an unknown member, a wrong type, a name not declared above); or the
 * status of the add_* call that refused an item (USCOPE_ERR_DUPLICATE, ...).
 * The "options" member holds writer settings for the DPI bridge's
 * uscope_open_json: its shape is checked, its values are not read here (pass
 * writer options to uscope_writer_open). USCOPE_ERR_UNSUPPORTED in a build
 * without simdjson (USCOPE_WITH_NPU=OFF). Touches no shared state: any
 * thread may call it.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_load_json(uscope_schema_t **out, const char *json,
                                                                   size_t len);

/** Add a clock domain (§4.9). period_ps may be 0 (unknown). At most 255. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_clock(uscope_schema_t *schema, uint8_t *out_clock_id,
                                                   const char *name, uint32_t period_ps);

/**
 * Add a scope (§4.4). The first scope is the root and must have parent
 * USCOPE_NO_PARENT; later scopes need an existing parent. protocol may be NULL.
 * clock_id is an existing clock or USCOPE_CLOCK_INHERIT.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_scope(uscope_schema_t *schema, uint16_t *out_scope_id,
                                                   const char *name, uint16_t parent_id,
                                                   const char *protocol, uint8_t clock_id);

/** Add an enum (§4.5) with values 0..count-1 named by values[]. 1 <= count <= 255. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_enum(uscope_schema_t *schema, uint8_t *out_enum_id,
                                                  const char *name, const char *const *values,
                                                  uint16_t count);

/**
 * Add a storage (§4.6): num_slots slots of num_fields fields each, plus
 * num_properties storage-level properties (§4.6.2; may be 0 with props NULL).
 * flags is a mix of USCOPE_SF_*. scope_id is an existing scope or
 * USCOPE_ROOT_SCOPE. num_slots >= 1.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_storage(uscope_schema_t *schema, uint16_t *out_storage_id,
                                                     const char *name, uint16_t scope_id,
                                                     uint16_t num_slots, uint16_t flags,
                                                     const uscope_field_t *fields,
                                                     uint16_t num_fields,
                                                     const uscope_field_t *props,
                                                     uint16_t num_properties);

/** Add an event type (§4.7). Its payload is the fields packed little-endian. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_event(uscope_schema_t *schema, uint16_t *out_event_id,
                                                   const char *name, uint16_t scope_id,
                                                   const uscope_field_t *fields, uint16_t num_fields);

/** Add a summary field (§4.8). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_summary_field(uscope_schema_t *schema,
                                                           uint16_t *out_id, const char *name,
                                                           uint8_t type, uint16_t scope_id);

/**
 * Add a DUT property (§3.1) to the schema: key and value are UTF-8 and copied.
 * A schema carries DUT properties so that whatever declares a part of it (the
 * protocol helpers of <uscope/protocols.h>, a testbench library) can also
 * declare the properties that describe that part. uscope_writer_open() writes
 * the schema's properties first, in call order, then its props[] array; the
 * file is the same as if all of them had been passed in props[].
 *
 * Each key is set once: a key already in the schema is USCOPE_ERR_SCHEMA here,
 * and a key of props[] that the schema already has is USCOPE_ERR_INVALID_ARGUMENT
 * at open; both messages name the key. (props[] alone is not checked for
 * repeated keys, as before this call existed.) Other errors: INVALID_ARGUMENT
 * (NULL schema, key or value), LIMIT (more than 65,535 properties). The 64 KiB
 * string pool that holds them with the schema's names is checked at open.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_add_dut_property(uscope_schema_t *schema, const char *key,
                                                         const char *value);

/**
 * Look-ups by name in a schema being built, with the rules and errors of
 * uscope_reader_find_storage() / uscope_reader_find_event() (see "Look-ups by
 * name" below): the plain name or the name qualified by its enclosing scopes
 * ("core0.rob"); USCOPE_ERR_AMBIGUOUS, listing the candidates, when a plain
 * name is declared in several scopes; USCOPE_ERR_NOT_FOUND when nothing
 * matches. On failure *out is unchanged and uscope_last_error() says why.
 * Call them from the thread that builds the schema.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_find_storage(const uscope_schema_t *schema, uint16_t *out_storage_id,
                                                      const char *name);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_schema_find_event(const uscope_schema_t *schema, uint16_t *out_event_type_id,
                                                    const char *name);

/* ── Writer ───────────────────────────────────────────────────────────── */

/** A DUT property (§3.1): an opaque key/value pair, both UTF-8, copied at open. */
typedef struct uscope_dut_property {
  const char *key;
  const char *value;
} uscope_dut_property_t;

/** Delta compression (§8.6.7, COMPAT point 3). */
#define USCOPE_COMPRESSION_LZ4  0 /* default; the only one the reference reader decodes */
#define USCOPE_COMPRESSION_ZSTD 1 /* smaller; readable by libuscope, not by the reference */
#define USCOPE_COMPRESSION_NONE 2 /* F_COMPRESSED clear; raw delta blobs */

/** "lz4", "zstd", "none" for a USCOPE_COMPRESSION_* value; NULL for another. Static storage. */
USCOPE_API const char *uscope_compression_name(uint32_t method);
/**
 * The USCOPE_COMPRESSION_* value named `name` (as uscope_compression_name
 * spells it, lower case). USCOPE_ERR_UNKNOWN_COMPRESSION for another name,
 * USCOPE_ERR_INVALID_ARGUMENT for a NULL argument; *out_method is then unchanged.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_compression_find(uint32_t *out_method, const char *name);

/** What the writer does to make each finished segment durable. */
#define USCOPE_DURABILITY_FLUSH     0 /* default: each segment reaches the OS before its
                                         tail_offset commit; a killed process keeps it */
#define USCOPE_DURABILITY_NONE      1 /* segments may wait in a user-space buffer (up to
                                         1 MiB) before reaching the OS: fewest syscalls.
                                         After a crash the advisory num_segments may lag
                                         tail_offset by more than one segment */
#define USCOPE_DURABILITY_FDATASYNC 2 /* as FLUSH, plus fdatasync() before each commit:
                                         committed segments survive power loss */

/** Delta frame layout. */
#define USCOPE_FRAMES_V02 0 /* default: interleaved tagged items (§8.6.6), call order kept */
#define USCOPE_FRAMES_V01 1 /* v0.1 frames (§8.6.1) with compact ops. Call order is lost:
                               per segment and timestamp, all ops (in call order), then all
                               events, which is the order the reference reader yields; the
                               cycles of one timestamp share a frame (docs/compat.md) */

/** What begin_cycle does when the background queue is full. */
#define USCOPE_BACKPRESSURE_BLOCK 0 /* default: wait for the encoder; counted in stats */
#define USCOPE_BACKPRESSURE_DROP  1 /* drop whole cycles; counted, and close() returns
                                       USCOPE_ERR_DATA_DROPPED */

/** How values passed to slot_set / prop_set are checked against the field type. */
#define USCOPE_VALUE_CHECK_NONE   0 /* default, as the reference writer: any 64-bit value is
                                       recorded; readers keep the field's low bytes */
#define USCOPE_VALUE_CHECK_STRICT 1 /* a value that does not fit the field type is a
                                       USCOPE_ERR_VALUE_RANGE misuse (same cost per call) */

/**
 * Where sealed segments are compressed (uscope_writer_options_t.compress_threads).
 * 0 is the default: min(online CPUs - 1, 4) worker threads, none on a single CPU.
 * 1..USCOPE_COMPRESS_THREADS_MAX workers compress segments in parallel with the
 * encoder thread, and the segments are written in order: the file is byte for
 * byte what inline compression writes. At most workers + 1 segments are in
 * flight (memory stays bounded); when all are, the encoder thread waits (counted
 * in uscope_writer_stats_t.compress_waits) and nothing is dropped.
 */
#define USCOPE_COMPRESS_THREADS_INLINE 0xFFFFFFFFu /* compress on the encoder thread */
#define USCOPE_COMPRESS_THREADS_MAX    64u

/**
 * Writer options. Size-prefixed so that it can grow: set struct_size to
 * sizeof(uscope_writer_options_t) (USCOPE_WRITER_OPTIONS_INIT and
 * uscope_writer_options_init() do). Zero-valued fields mean "default".
 */
typedef struct uscope_writer_options {
  uint32_t struct_size;
  uint32_t compression;           /* USCOPE_COMPRESSION_*; default LZ4 */
  int32_t compression_level;      /* 0 = method default; LZ4: >0 selects LZ4HC level;
                                     ZSTD: 1..22 */
  uint32_t durability;            /* USCOPE_DURABILITY_*; default FLUSH */
  uint64_t checkpoint_interval_ps;/* time between checkpoints; 0 = 10,000,000 ps */
  uint32_t frame_format;          /* USCOPE_FRAMES_*; default V02 */
  uint32_t backpressure;          /* USCOPE_BACKPRESSURE_*; default BLOCK */
  uint64_t queue_bytes;           /* queue between simulation thread and encoder;
                                     0 = 8 MiB; raised to fit the largest record.
                                     Its pages are touched at open (resident memory) */
  uint32_t value_check;           /* USCOPE_VALUE_CHECK_*; default NONE */
  uint32_t reserved;              /* must be 0 */
  /* Added after 0.4.0 (a caller built against an older header passes a
     smaller struct_size and gets the default): */
  uint32_t compress_threads;      /* segment compression workers: 0 = default,
                                     USCOPE_COMPRESS_THREADS_INLINE or 1..64 (above) */
  uint32_t reserved2;             /* must be 0 */
} uscope_writer_options_t;

#define USCOPE_WRITER_OPTIONS_INIT \
  { (uint32_t)sizeof(uscope_writer_options_t), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/** Fill *opts with defaults (same as USCOPE_WRITER_OPTIONS_INIT). NULL is ignored. */
USCOPE_API void uscope_writer_options_init(uscope_writer_options_t *opts);

/** A writer. Opaque. */
typedef struct uscope_writer uscope_writer_t;

/**
 * Create path and write the file header and preamble (DUT descriptor,
 * schema, trace config). They are written to a temporary file beside path
 * (".NAME.XXXXXX", same directory, O_EXCL) that is renamed onto path once
 * they are complete: path is never truncated in place. A reader that has the
 * previous file open keeps reading it unchanged (a new inode); a kill or a
 * write error during open leaves path absent or the previous file (a failed
 * open removes its temporary; a SIGKILL inside this call can leave it). A
 * symbolic link is followed and its target replaced, so the link keeps
 * working. An existing path that is not a regular file (directory, FIFO,
 * device) is refused with IO. The directory must be writable. See
 * docs/writer.md. On success *out owns a writer that must
 * be closed with uscope_writer_close(). The schema is copied; the caller keeps
 * ownership of schema, props and options. opts may be NULL for defaults. The
 * DUT descriptor holds the schema's properties (uscope_schema_add_dut_property)
 * and then props[0..num_props); props may be NULL when num_props is 0.
 *
 * All memory the per-cycle calls need is allocated here, sized from the
 * schema, and the background encoder thread is started.
 *
 * Errors: INVALID_ARGUMENT (NULL path/schema/out, bad option, a props[] key
 * the schema sets already), SCHEMA (no clock, no scope), LIMIT (string pool over 65,535 bytes, checkpoint over
 * 4 GiB), IO (cannot create, write or rename the file; path is not a
 * regular file), NO_MEMORY.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_open(uscope_writer_t **out, const char *path,
                                              const uscope_schema_t *schema,
                                              const uscope_dut_property_t *props,
                                              uint32_t num_props,
                                              const uscope_writer_options_t *opts);

/**
 * Finish the trace: encode the open segment, write the TSUM summary, the
 * string table, the segment table and the section table, set F_COMPLETE and
 * rewrite the header; then free the writer, whatever the outcome.
 *
 * An unfinished cycle (begin without end) is discarded. Returns USCOPE_OK, or
 * the first sticky error of the writer's life (a per-cycle misuse, an I/O
 * error, dropped data). After a misuse or dropped data the file is still
 * finalized with every cycle recorded before the error. After an I/O error
 * (e.g. ENOSPC) the file is left unfinalized, as a crashed run would leave
 * it: every segment committed before the error stays readable. Call it from
 * the thread that made the per-cycle calls. NULL is a no-op returning
 * USCOPE_OK.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_close(uscope_writer_t *writer);

/**
 * Do everything uscope_writer_close() does except freeing the writer: finish
 * the file and stop the encoder thread. Afterwards uscope_writer_stats()
 * reports the final figures (segments, compressed bytes, file size), the
 * per-cycle calls return USCOPE_ERR_BAD_STATE, and uscope_writer_close() only
 * frees the writer and returns this same status. Calling it twice returns
 * the first call's status.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_finish(uscope_writer_t *writer);

/* ── Several producers (multi-threaded models) ──────────────────────── */

/** At most this many producers per writer. */
#define USCOPE_MAX_PRODUCERS 64u

/**
 * Add a producer to writer: a handle of its own, for another thread (one per
 * core model, one per Verilator thread), that takes every per-cycle call
 * (uscope_begin_cycle ... uscope_end_cycle, the uscope_cpu_* / uscope_noc_* /
 * uscope_npu_* protocol calls) exactly as a writer does. Each producer has its
 * own queue (options.queue_bytes, allocated and pre-faulted here) and the same
 * hot path: no lock, no allocation, no system call in steady state. The
 * writer's encoder thread merges the producers' cycles into one trace:
 *
 *  - The cycles of all producers at one time_ps are one cycle of the trace.
 *    Its items are producer 1's, then producer 2's, ... (the order of the
 *    uscope_writer_add_producer calls), each in the order it recorded them.
 *    The file is byte for byte the one a single thread would write recording
 *    those items in that order, with the same options.
 *  - A producer's times must strictly increase (TIME_BACKWARDS otherwise).
 *  - A time is written once every open producer has recorded its cycle at
 *    that time, or a later one. So each producer must keep recording (an
 *    empty begin/end pair is enough) or be closed: a producer that stops
 *    without closing holds the others back until their queues fill. Each
 *    producer's cycle is handed to the encoder at its uscope_end_cycle (a
 *    single release store), so threads that meet at a barrier every cycle
 *    never wait on each other through the writer.
 *
 * Rules, each checked (BAD_STATE):
 *  - Add every producer before any of them records a cycle, from the
 *    writer's thread; at most USCOPE_MAX_PRODUCERS (LIMIT).
 *  - Once it has producers, the writer itself records no cycles (its
 *    per-cycle calls return BAD_STATE, not sticky): create a producer for
 *    the main thread's model too. uscope_writer_flush() and
 *    uscope_string_insert() stay available on the writer; a checkpoint
 *    callback cannot be combined with producers.
 *  - uscope_writer_close(producer) (or _finish) ends the producer: its
 *    unfinished cycle is discarded, its handle stops recording, and its
 *    memory is freed with the writer. Close every producer before the
 *    writer. Closing the writer first still finalizes the trace with every
 *    cycle the open producers had ended, returns BAD_STATE, and makes their
 *    later calls fail; but their threads must have stopped calling by then.
 *  - A producer handle is invalid once its writer is closed (freed).
 *
 * uscope_string_insert() on a producer interns into the writer's table
 * (shared, under a lock: call it outside the hot loop where possible).
 * uscope_writer_stats() on a producer gives its own cycles, ops, events,
 * drops and stalls with the writer's encoder figures; on the writer, after
 * its producers are closed, the sums over them.
 *
 * Errors: BAD_STATE (see above; or writer is itself a producer), LIMIT,
 * NO_MEMORY (the producer's queue), INVALID_ARGUMENT (NULL).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_add_producer(uscope_writer_t *writer,
                                                                      uscope_writer_t **out_producer);

/**
 * The per-handle message of the writer's sticky error, or "" when there is
 * none. Owned by the writer; valid until the next call on it.
 */
USCOPE_API const char *uscope_writer_error(const uscope_writer_t *writer);

/**
 * The same look-ups as uscope_schema_find_storage() / _event(), in the schema
 * the writer was opened with (a copy taken at open: later additions to the
 * uscope_schema_t are not in it). A failed look-up sets uscope_last_error()
 * only; it is not a sticky error of the writer. The schema does not change
 * after open, so any thread may call these while the writer is open.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_find_storage(const uscope_writer_t *writer, uint16_t *out_storage_id,
                                                      const char *name);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_find_event(const uscope_writer_t *writer, uint16_t *out_event_type_id,
                                                    const char *name);

/*
 * ── Per-cycle calls ──
 * All are called from the simulation thread, between uscope_begin_cycle() and
 * uscope_end_cycle(). In steady state they make no heap allocation, take no
 * lock and make no system call (only a full queue under
 * USCOPE_BACKPRESSURE_BLOCK makes the thread wait). They validate every id,
 * index and payload size against the schema, and values too with
 * USCOPE_VALUE_CHECK_STRICT.
 *
 * Errors are sticky: the first failing call records its status and message
 * (see uscope_writer_error()), the cycle it happened in is discarded as a
 * whole, and from then on every per-cycle call is a cheap no-op returning that
 * same status. uscope_writer_close() returns it too, after finalizing every
 * cycle completed before the error.
 */

/**
 * Start the cycle at time_ps (picoseconds, non-decreasing; equal times make
 * frames at the same timestamp). Errors: BAD_STATE (already in a cycle),
 * TIME_BACKWARDS, plus any sticky error (e.g. IO from the encoder thread).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_begin_cycle(uscope_writer_t *writer, uint64_t time_ps);

/**
 * Set field `field` of slot `slot` of storage `storage_id` (DA_SLOT_SET). On a
 * sparse storage this makes the slot valid. Signed fields take the value
 * sign-extended to 64 bits (e.g. (uint64_t)(int64_t)-1), which makes the
 * frame wide (COMPAT 13). Errors: UNKNOWN_STORAGE, UNKNOWN_SLOT,
 * UNKNOWN_FIELD, BAD_STATE, and with USCOPE_VALUE_CHECK_STRICT also
 * VALUE_RANGE (value does not fit the field type; BOOL takes 0/1, ENUM takes
 * < num_values, signed types their sign-extended range).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_slot_set(uscope_writer_t *writer, uint16_t storage_id,
                                           uint16_t slot, uint16_t field, uint64_t value);

/** Invalidate a sparse slot, or zero a dense slot (DA_SLOT_CLEAR). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_slot_clear(uscope_writer_t *writer, uint16_t storage_id,
                                             uint16_t slot);

/** Add value to a field, wrapping at the field's width (DA_SLOT_ADD). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_slot_add(uscope_writer_t *writer, uint16_t storage_id,
                                           uint16_t slot, uint16_t field, uint64_t value);

/** Set storage property prop_index (DA_PROP_SET). Errors: UNKNOWN_PROPERTY, BAD_STATE,
 * VALUE_RANGE (strict value check only), ... */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_prop_set(uscope_writer_t *writer, uint16_t storage_id,
                                           uint16_t prop_index, uint64_t value);

/**
 * Record an event. payload holds the event's fields packed little-endian in
 * schema order, and payload_size must equal their total size (PAYLOAD_SIZE
 * otherwise). payload may be NULL only when payload_size is 0. The bytes are
 * copied before the call returns.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_event(uscope_writer_t *writer, uint16_t event_type_id,
                                        const void *payload, uint32_t payload_size);

/**
 * End the cycle. When its time reaches the next checkpoint time, the segment
 * is closed here and handed to the encoder thread (after calling the
 * checkpoint callback, if one is set).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_end_cycle(uscope_writer_t *writer);

/**
 * Between cycles: ask the encoder thread to commit everything recorded so far
 * to the file, ending the open segment early, so that a live reader (or a
 * crash) sees every completed cycle. Returns at once; the commit follows on
 * the encoder thread, so stats.frames and stats.segments catch up shortly.
 * Without it, cycles reach the encoder in 16 KiB batches and the file at
 * checkpoint boundaries. Costs an extra checkpoint per call; no allocation.
 * Errors: BAD_STATE inside a cycle (sticky), any sticky error.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_flush(uscope_writer_t *writer);

/**
 * Intern str (UTF-8, NUL-terminated, copied) in the string table and store its
 * index for use as an FT_STRING_REF value in *out_index. Equal strings get
 * the same index; indices count up from 0. Callable at any time while the
 * writer is open, inside a cycle or not; it may allocate.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_string_insert(uscope_writer_t *writer, uint32_t *out_index,
                                                const char *str);

/* ── Checkpoint callback (§9) ─────────────────────────────────────────── */

/**
 * Called on the simulation thread, from uscope_end_cycle(), at every segment
 * boundary: time_ps is the boundary time. Inside it, the callback may call
 * uscope_checkpoint_storage() to supply the authoritative state of any
 * storage for the checkpoint of the next segment; storages it does not
 * supply keep the state tracked from the deltas. No other writer call is
 * allowed inside the callback.
 */
typedef void (*uscope_checkpoint_fn)(uscope_writer_t *writer, uint64_t time_ps, void *user_data);

/** Install (or, with fn NULL, remove) the checkpoint callback. Not inside a cycle. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_set_checkpoint_callback(uscope_writer_t *writer,
                                                          uscope_checkpoint_fn fn,
                                                          void *user_data);

/**
 * Only inside the checkpoint callback: replace the state of storage_id.
 * Misuse (outside the callback, unknown storage, a mask or count that does not
 * match) is sticky like a per-cycle error, and uscope_end_cycle() returns it.
 * For a sparse storage valid_mask holds ceil(num_slots/8) bytes, LSB-first
 * (bit s%8 of byte s/8 = slot s), and slot_data holds num_valid_slots packed
 * slots, in slot order, for the set bits; num_valid_slots must equal the
 * number of set bits. For a dense storage valid_mask is NULL and slot_data
 * holds all num_slots slots (num_valid_slots == num_slots). Property values
 * keep their tracked values. The data is copied.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_checkpoint_storage(uscope_writer_t *writer,
                                                     uint16_t storage_id,
                                                     const uint8_t *valid_mask,
                                                     const void *slot_data,
                                                     uint32_t num_valid_slots);

/* ── Statistics ───────────────────────────────────────────────────────── */

/** Writer counters. Size-prefixed: set struct_size before the call. */
typedef struct uscope_writer_stats_s {
  uint32_t struct_size;
  uscope_status_t sticky_status;  /* first error, or USCOPE_OK */
  uint64_t cycles;                /* cycles recorded (begin/end pairs) */
  uint64_t ops;                   /* slot_set/clear/add and prop_set recorded (a cycle
                                     discarded by an error does not count) */
  uint64_t events;                /* events recorded */
  uint64_t frames;                /* frames encoded (a cycle over 65,535 items is split;
                                     with USCOPE_FRAMES_V01 one frame per timestamp) */
  uint64_t segments;              /* segments committed to the file */
  uint64_t raw_bytes;             /* uncompressed delta bytes encoded */
  uint64_t compressed_bytes;      /* delta bytes after compression, with size prefix */
  uint64_t checkpoint_bytes;      /* checkpoint bytes written */
  uint64_t file_bytes;            /* file size so far */
  uint64_t errors;                /* calls that failed (including sticky repeats) */
  uint64_t dropped_cycles;        /* cycles dropped under USCOPE_BACKPRESSURE_DROP */
  uint64_t dropped_ops;
  uint64_t dropped_events;
  uint64_t stalls;                /* times the simulation thread waited for the queue */
  uint64_t stall_ns;              /* total time it waited */
  uint64_t queue_bytes;           /* size of the queue actually allocated */
  uint32_t summary_omitted;       /* after finish/close: 1 when the TSUM summary was left
                                     out because a time jump needed more than 256 MiB of
                                     buckets (trace content is complete; a reader can
                                     recompute it), else 0 */
  uint32_t reserved;
  /* Added after 0.4.0 (filled when struct_size covers them): */
  uint32_t compress_threads;      /* segment compression workers in use; 0 = inline */
  uint32_t reserved2;
  uint64_t compress_waits;        /* times the encoder thread waited for a free
                                     compression slot (back-pressure, never a drop) */
  uint64_t compress_wait_ns;      /* total time it waited */
} uscope_writer_stats_t;

/**
 * Read the counters. The encoder-side figures (frames, segments, bytes) are
 * read atomically and may lag the simulation thread until close. Call from
 * the writer's thread. out->struct_size must be set; at most that many bytes
 * are written.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_writer_stats(const uscope_writer_t *writer,
                                               uscope_writer_stats_t *out);


/* ── Reader ───────────────────────────────────────────────────────────── */

/*
 * Reading a trace. A reader reads the file with pread() into buffers it
 * owns (it does not map it) and checks every offset and length against the
 * file size before use, so corrupt, truncated or hostile files give an error
 * (CORRUPT, TRUNCATED, BAD_MAGIC, UNSUPPORTED_VERSION, UNKNOWN_COMPRESSION)
 * and never a crash. A file that shrinks while a reader has it open (a
 * re-run by a tool that truncates in place) makes the calls that need the
 * missing bytes return TRUNCATED, "PATH shrank under the reader: segment I
 * at offset O needs N bytes, the file now has M" (or CORRUPT if other bytes
 * took their place), never a SIGBUS; the reader stays usable. Memory: about
 * one segment (its checkpoint and compressed deltas, and its raw deltas) is
 * held at a time, whatever the file size. It reads finalized files (section
 * table, binary search of the segment table) and unfinished or crashed ones
 * (tail_offset and the prev_segment_offset chain), v0.1 and v0.2 frames, and
 * LZ4, ZSTD or uncompressed deltas.
 *
 * Threads: a reader and everything obtained from it (states, iterators) are
 * used by one thread at a time. Several readers may read one file at once.
 * Ownership: strings and arrays a reader returns belong to it and stay valid
 * until uscope_reader_close(), unless a function says otherwise.
 */
typedef struct uscope_reader uscope_reader_t;

/**
 * Open path. *out must be released with uscope_reader_close(). Only a regular
 * file is opened: a FIFO (opened non-blocking, so this never hangs), a
 * directory or a device is IO ("PATH is a FIFO, not a µScope trace (a regular
 * file)"). A file that is not a trace is BAD_MAGIC and says what it looks
 * like ("expected a µScope trace (magic "uSCP", spec §2), found a pccx
 * container"; or JSON text, text, binary data); an empty file is TRUNCATED
 * ("found an empty file (0 bytes)"). Every message names the path.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_open(uscope_reader_t **out, const char *path);

/*
 * Tolerant and strict reading. Files written by other tools, or damaged on
 * disk, carry defects that do not stop decoding. By default a reader skips
 * each such item, counts it by kind and keeps the first place it met one
 * (uscope_reader_defects()); every answer is the one the file gives without
 * the skipped items:
 *  - an op on a slot past its storage's size does nothing (as in the
 *    reference reader; the reference's Rust cpu writer writes them, COMPAT
 *    27); an op on an unknown storage, field or property, or with an unknown
 *    action, does nothing;
 *  - an event of an unknown type, or whose payload size differs from its
 *    type's, is not returned;
 *  - a frame whose time is before the previous frame's (a wrapped delta) is
 *    ignored with its items; a segment that starts before the previous one
 *    ends is ignored whole;
 *  - a value naming a string past the string table, or lying past its enum,
 *    is kept as written; as no answer depends on it, only
 *    uscope_reader_check() and strict reads look at values (checking every
 *    value would cost the replay about a quarter of its speed);
 *  - a segment that cannot be decoded (a corrupt compressed block, a bad
 *    checkpoint or frame, a header or size that does not fit the file) is
 *    skipped: its items are lost, and every query outside it answers as on
 *    an intact file (the next segment's checkpoint holds the state). A query
 *    at a time inside it answers from its checkpoint (or, when that is bad
 *    too, from the end of the previous segment);
 *  - end-of-segment checkpoints (the reference Rust writer's, COMPAT 9 and
 *    28) are recognised at open and read as their writer meant: segment N
 *    starts from segment N-1's checkpoint, segment 0 from the empty state;
 *  - timestamps off every clock's period (COMPAT 29) are counted, and
 *    uscope_file_info_t.time_grid_ps gives the step they follow.
 * A reader opened with USCOPE_READ_STRICT instead fails the call that meets
 * the first defect, with the kind's status (see USCOPE_DEFECT_*).
 * Defects of the file's structure are found at open (and at each poll);
 * those inside segments as the segments are read, so the counts grow as
 * more of the file is read. uscope_reader_check() reads all of it.
 */
#define USCOPE_READ_STRICT 0x1u

/* Defect kinds: values are pinned. The strict status of each is in brackets. */
#define USCOPE_DEFECT_SLOT_OUT_OF_RANGE         0  /* [UNKNOWN_SLOT] */
#define USCOPE_DEFECT_UNKNOWN_STORAGE           1  /* [UNKNOWN_STORAGE] */
#define USCOPE_DEFECT_FIELD_OUT_OF_RANGE        2  /* [UNKNOWN_FIELD; UNKNOWN_PROPERTY for a property index] */
#define USCOPE_DEFECT_UNKNOWN_EVENT_TYPE        3  /* [UNKNOWN_EVENT] */
#define USCOPE_DEFECT_EVENT_PAYLOAD_SIZE        4  /* [PAYLOAD_SIZE] */
#define USCOPE_DEFECT_STRING_REF_OUT_OF_RANGE   5  /* [VALUE_RANGE] finalized files; check/strict only */
#define USCOPE_DEFECT_ENUM_OUT_OF_RANGE         6  /* [VALUE_RANGE] check/strict only */
#define USCOPE_DEFECT_TIME_BACKWARDS            7  /* [TIME_BACKWARDS] frames or segments */
#define USCOPE_DEFECT_SEGMENT_UNDECODABLE       8  /* [CORRUPT or TRUNCATED, as met] */
#define USCOPE_DEFECT_END_OF_SEGMENT_CHECKPOINTS 9 /* [NONCONFORMING] count: 1 */
#define USCOPE_DEFECT_OFF_CLOCK_GRID            10 /* [NONCONFORMING] timestamps */
#define USCOPE_DEFECT_TSUM_MISMATCH             11 /* [CORRUPT] uscope_reader_check() only */
#define USCOPE_DEFECT_UNKNOWN_OP_ACTION         12 /* [CORRUPT] */
#define USCOPE_DEFECT_CHECKPOINT_MISMATCH       13 /* [CORRUPT] uscope_reader_check() only */
#define USCOPE_DEFECT_KIND_COUNT                14

/** One kind of defect a reader met: how often, and the first place. */
typedef struct uscope_defect_s {
  uint32_t kind;       /* USCOPE_DEFECT_* */
  uint32_t segment;    /* the segment of the first one, by its place in the file's list of
                          segments (which counts the segments left out of the reader's list,
                          so it can exceed uscope_reader_segment()'s index); UINT32_MAX: the
                          file as a whole */
  uint64_t count;      /* items (ops, events, frames, timestamps, segments) of this kind */
  uint64_t offset;     /* file offset of that segment (items lie inside compressed blocks),
                          or of the structure at fault */
  uint64_t time_ps;    /* time of the first one (0 where it has none) */
  uint32_t subject;    /* what the first one names: the storage id of an op (slot, field,
                          value kinds), the event type id of an event (unknown type, payload
                          size, value kinds); UINT32_MAX for none */
  uint32_t reserved;   /* 0 */
} uscope_defect_t;

/**
 * Open path with flags (USCOPE_READ_*; 0 is uscope_reader_open()). Unknown
 * flag bits are INVALID_ARGUMENT. With USCOPE_READ_STRICT, a defect found at
 * open (a bad segment, end-of-segment checkpoints, timestamps off the grid)
 * fails the open with its kind's status.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_open_ex(uscope_reader_t **out, const char *path,
                                                 uint32_t flags);
/**
 * The defects met so far, one entry per kind seen, in kind order. Writes at
 * most capacity entries to out (which may be NULL when capacity is 0) and
 * the number of kinds seen to *count (which may exceed capacity; at most
 * USCOPE_DEFECT_KIND_COUNT). Counts never include an item twice, however
 * often its segment is read.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_defects(const uscope_reader_t *reader, uscope_defect_t *out,
                                                 uint32_t *count, uint32_t capacity);
/** "slot_out_of_range", ... for a USCOPE_DEFECT_* value; NULL for another. Static storage. */
USCOPE_API const char *uscope_defect_name(uint32_t kind);
/**
 * One line saying what the reader did about a kind ("ops on slots past their
 * storage's size were ignored"); NULL for an unknown kind. Static storage.
 */
USCOPE_API const char *uscope_defect_description(uint32_t kind);

/** Progress of a long call: done and total in the same unit (bytes of the file). */
typedef void (*uscope_progress_fn)(void *ctx, uint64_t done, uint64_t total);
/**
 * Read and validate every structure and item of the file, as a validator
 * (fsck, SQLite's integrity_check) does: every segment's checkpoint and
 * deltas; every op and event against the schema; string and enum values;
 * every timestamp against the clocks; each checkpoint against the state the
 * items before it give (checkpoint_mismatch); the TSUM against one
 * recomputed from the items (tsum_mismatch; finalized files that carry one).
 * The findings are in uscope_reader_defects() afterwards. Memory: one
 * segment at a time. progress (may be NULL) is called after each segment
 * with bytes of segments read so far and their total. Returns OK when the
 * walk finished (defects or not); a strict reader returns the first
 * defect's status; an I/O error (or a file that shrank) is returned as such.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_check(uscope_reader_t *reader, uscope_progress_fn progress,
                                               void *ctx);
/** Release a reader (NULL is a no-op). States and iterators from it must be freed first. */
USCOPE_API void uscope_reader_close(uscope_reader_t *reader);

/** File-level facts. Size-prefixed: set struct_size. */
typedef struct uscope_file_info_s {
  uint32_t struct_size;
  uint16_t version_major;
  uint16_t version_minor;
  uint64_t flags;                  /* spec §2.1 */
  uint32_t complete;               /* 1 when F_COMPLETE is set (finalized) */
  uint32_t compression;            /* USCOPE_COMPRESSION_* */
  uint32_t interleaved;            /* 1 for v0.2 frames */
  uint32_t num_segments;           /* segments this reader has found */
  uint64_t total_time_ps;          /* header value (0 while live, COMPAT 11) */
  uint64_t last_time_ps;           /* end time of the last segment found */
  uint64_t checkpoint_interval_ps; /* the trace config chunk (§2.4) */
  uint64_t file_bytes;
  /* The remaining file header fields (§2), as last read. */
  uint32_t header_num_segments;    /* advisory while live (§2.2) */
  uint32_t preamble_end;
  uint64_t section_table_offset;   /* 0 until finalized */
  uint64_t tail_offset;            /* the live commit point (§2.2) */
  /* The step the timestamps follow: clock 0's period (the greatest common
     divisor of the clocks' periods with several), or, when timestamps were
     seen off that grid (USCOPE_DEFECT_OFF_CLOCK_GRID, COMPAT 29), the
     greatest common step of the timestamps seen. Cycle numbers are time /
     time_grid_ps. 0 when no clock has a period. */
  uint64_t time_grid_ps;
} uscope_file_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_info(const uscope_reader_t *reader, uscope_file_info_t *out);
/**
 * 1 when the file was cleanly finalized (F_COMPLETE), else 0 (also for
 * NULL). A live reader sees this turn to 1 at the poll after the writer
 * closes; a crashed writer's file stays 0.
 */
USCOPE_API int uscope_is_complete(const uscope_reader_t *reader);

/** DUT properties (§3): index < count. Strings are owned by the reader. */
USCOPE_API uint32_t uscope_reader_dut_count(const uscope_reader_t *reader);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_dut_property(const uscope_reader_t *reader, const char **key,
                                                      const char **value, uint32_t index);
/** The value of DUT property key; NOT_FOUND when absent. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_dut_lookup(const uscope_reader_t *reader, const char **value,
                                                    const char *key);

/** Schema counts. */
typedef struct uscope_schema_counts_s {
  uint32_t struct_size;
  uint32_t clocks, scopes, enums, storages, event_types, summary_fields;
} uscope_schema_counts_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_schema_counts(const uscope_reader_t *reader,
                                                       uscope_schema_counts_t *out);

typedef struct uscope_clock_info_s {
  const char *name;
  uint32_t period_ps;
} uscope_clock_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_clock(const uscope_reader_t *reader, uscope_clock_info_t *out,
                                               uint32_t clock_id);

typedef struct uscope_scope_info_s {
  const char *name;
  const char *protocol;  /* NULL when the scope has none */
  uint16_t parent_id;    /* USCOPE_NO_PARENT for the root */
  uint8_t clock_id;      /* USCOPE_CLOCK_INHERIT to inherit */
} uscope_scope_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_scope(const uscope_reader_t *reader, uscope_scope_info_t *out,
                                               uint32_t scope_id);

/** Enum enum_id: its name and number of values; then each value's name. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_enum(const uscope_reader_t *reader, const char **name,
                                              uint32_t *num_values, uint32_t enum_id);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_enum_value(const uscope_reader_t *reader, const char **name,
                                                    uint32_t enum_id, uint32_t value);

typedef struct uscope_storage_info_s {
  const char *name;
  uint16_t scope_id;
  uint16_t num_slots;
  uint16_t flags;        /* USCOPE_SF_* */
  uint16_t num_fields;
  uint16_t num_properties;
  uint32_t slot_size;    /* bytes of one packed slot */
} uscope_storage_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_storage(const uscope_reader_t *reader, uscope_storage_info_t *out,
                                                 uint16_t storage_id);

typedef struct uscope_field_info_s {
  const char *name;
  uint8_t type;     /* USCOPE_FT_* */
  uint8_t enum_id;
  uint8_t role;     /* USCOPE_ROLE_* (properties) */
  uint8_t pair_id;
  uint32_t size;    /* bytes */
  uint32_t offset;  /* within the slot, the property block, or the event payload */
} uscope_field_info_t;
/** Field `index` of a storage's slots, or (is_property) of its properties. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_storage_field(const uscope_reader_t *reader,
                                                       uscope_field_info_t *out, uint16_t storage_id,
                                                       uint16_t index, int is_property);

typedef struct uscope_event_type_info_s {
  const char *name;
  uint16_t scope_id;
  uint16_t num_fields;
  uint32_t payload_size;
} uscope_event_type_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_event_type(const uscope_reader_t *reader, uscope_event_type_info_t *out,
                                                    uint16_t event_type_id);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_event_field(const uscope_reader_t *reader, uscope_field_info_t *out,
                                                     uint16_t event_type_id, uint16_t index);

/**
 * Look-ups by name. `name` is either an item's own name ("rob") or that name
 * qualified by the names of its enclosing scopes, nearest last, joined by '.'
 * ("core0.rob", "top.core0.rob"): as many levels as it takes to single one
 * out. Storages and events are matched this way; fields (and properties,
 * with is_property) by their own name within the storage.
 *
 * Returns USCOPE_OK with the id (index) in *out when exactly one item
 * matches; USCOPE_ERR_NOT_FOUND when none does; USCOPE_ERR_AMBIGUOUS when
 * several do, with a message listing their ids (the first 16): two cores
 * each with a "rob" storage, or a file whose writer did not keep names
 * unique. *out is then left unchanged; qualify the name or use an id.
 * (Before libuscope 0.1 these returned the first match in schema order.)
 * Our schema builder keeps names unique where these look-ups need it (see
 * uscope_schema_new, USCOPE_ERR_DUPLICATE); files of other writers may not.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_find_storage(const uscope_reader_t *reader, uint16_t *out_storage_id,
                                                      const char *name);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_find_field(const uscope_reader_t *reader, uint16_t *out_index,
                                                    uint16_t storage_id, const char *name,
                                                    int is_property);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_find_event(const uscope_reader_t *reader, uint16_t *out_event_type_id,
                                                    const char *name);

/** The string table (§7): index < count; *len excludes the NUL. */
USCOPE_API uint32_t uscope_reader_string_count(const uscope_reader_t *reader);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_string(const uscope_reader_t *reader, const char **str,
                                                uint32_t *len, uint32_t index);

/* Trace summary (§6: TSUM, or legacy CSUM with no instruction density). */
typedef struct uscope_summary_info_s {
  uint32_t struct_size;
  uint32_t present;               /* 0: the file has none */
  uint32_t base_interval_cycles;
  uint32_t fan_out;
  uint64_t total_instructions;
  uint32_t density_levels;
  uint32_t num_counters;
} uscope_summary_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_summary(const uscope_reader_t *reader, uscope_summary_info_t *out);
/**
 * Instruction counts per bucket of a density level. The array is owned by the
 * reader: read from the file on the first call for that level (a summary's
 * arrays grow with the trace, so opening a reader reads none of them) and kept
 * until the reader is closed.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_summary_density(const uscope_reader_t *reader, const uint32_t **counts,
                                                         uint32_t *num, uint32_t level);
typedef struct uscope_mipmap_entry_s {  /* §6.2 */
  uint64_t min_delta;
  uint64_t max_delta;
  uint64_t sum;
} uscope_mipmap_entry_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_summary_counter(const uscope_reader_t *reader, const char **name,
                                                         uint16_t *storage_id, uint32_t *num_levels,
                                                         uint32_t index);
/** A counter's level (§6.2): owned by the reader, read on first call and kept
 *  until close, as for uscope_reader_summary_density. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_summary_counter_level(const uscope_reader_t *reader,
                                                               const uscope_mipmap_entry_t **entries, uint32_t *num,
                                                               uint32_t index,
                                                               uint32_t level);

/* State reconstruction (§10). */
typedef struct uscope_state uscope_state_t;
/**
 * The state after every frame at or before time_ps (the checkpoint of the
 * right segment plus its deltas). A trace with no segments gives the initial
 * state. *out must be freed with uscope_state_free() before the reader is
 * closed (it describes the reader's schema).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_state_at(uscope_reader_t *reader, uscope_state_t **out,
                                                  uint64_t time_ps);
USCOPE_API void uscope_state_free(uscope_state_t *state);
/** Dense slots are always valid (§4.6.1). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_state_slot_valid(const uscope_state_t *state, int *valid,
                                                   uint16_t storage_id, uint16_t slot);
/** A field's stored bytes, zero-extended (signed fields are not sign-extended). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_state_slot_field(const uscope_state_t *state, uint64_t *value,
                                                   uint16_t storage_id, uint16_t slot, uint16_t field);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_state_property(const uscope_state_t *state, uint64_t *value,
                                                 uint16_t storage_id, uint16_t prop);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_state_occupancy(const uscope_state_t *state, uint32_t *valid_slots,
                                                  uint16_t storage_id);

/* Events and items. */
typedef struct uscope_event_s {
  uint64_t time_ps;
  uint16_t event_type_id;
  uint32_t payload_size;
  const uint8_t *payload;  /* valid until the next call on the iterator */
} uscope_event_t;
typedef struct uscope_event_iter uscope_event_iter_t;
/**
 * Iterate every event with t0 <= time <= t1 (a closed range), in file
 * order, decoding one segment at a time. Free with uscope_event_iter_free()
 * before closing the reader.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_events_in_range(uscope_reader_t *reader, uscope_event_iter_t **out,
                                                         uint64_t t0, uint64_t t1);
/** USCOPE_OK with *ev filled, USCOPE_DONE at the end, or an error. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_event_iter_next(uscope_event_iter_t *it, uscope_event_t *ev);
USCOPE_API void uscope_event_iter_free(uscope_event_iter_t *it);

typedef struct uscope_segment_info_s {
  uint64_t offset;
  uint64_t time_start_ps;
  uint64_t time_end_ps;          /* inclusive: time of its last frame (COMPAT 10) */
  uint32_t checkpoint_size;
  uint32_t deltas_compressed_size;
  uint32_t deltas_raw_size;
  uint32_t num_frames;
  uint32_t num_frames_active;
} uscope_segment_info_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_segment(const uscope_reader_t *reader, uscope_segment_info_t *out,
                                                 uint32_t index);

/** One timed op or event of a segment, in stream order. */
typedef struct uscope_item_s {
  uint64_t time_ps;
  uint32_t is_event;
  uint8_t action;                /* ops: DA_* of spec §8.6.2 (1 set, 2 clear, 3 add, 4 prop) */
  uint16_t storage_id;
  uint16_t slot;
  uint16_t field;                /* property index for action 4 */
  uint64_t value;
  uint16_t event_type_id;        /* events */
  uint32_t payload_size;
  const uint8_t *payload;        /* valid until the next call on the iterator */
} uscope_item_t;
typedef struct uscope_item_iter uscope_item_iter_t;
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_segment_items(uscope_reader_t *reader, uscope_item_iter_t **out,
                                                       uint32_t index);
/** USCOPE_OK with *item filled, USCOPE_DONE at the end, or an error. */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_item_iter_next(uscope_item_iter_t *it, uscope_item_t *item);
USCOPE_API void uscope_item_iter_free(uscope_item_iter_t *it);

/*
 * Replay in batches: every op and event with t0 <= time <= t1, in file order,
 * into an array the caller owns, as many per call as it holds.
 *
 * Why a cursor over a caller's array, and no callback: a binding that cannot
 * take a C callback cheaply (Python's ctypes costs microseconds per call)
 * makes one call per batch and reads the array in place, and a C caller
 * that wants a callback writes the five-line loop around fill. The cursor
 * also lets the caller stop at any point, and keeps no segment's worth of
 * items anywhere: items go straight from the decoder into the array, and a
 * fill that ends inside a frame keeps only the rest of that frame for the
 * next one. Once warm (after the first fills: the cursor's state and the
 * reader's segment buffers are sized), a fill allocates nothing.
 *
 * The items are those of a replay of the segments that meet [t0, t1], each
 * from its checkpoint: ops before t0 are applied but not returned, the
 * decoding stops at the first frame after t1. What does not fit the schema
 * is skipped and counted in uscope_reader_defects() as for every query; the
 * items of a segment that does not decode end where it breaks (those before
 * the damage are returned, as by the C++ core's replay). A reader opened
 * with USCOPE_READ_STRICT fails the fill instead.
 *
 * Threads: a cursor belongs to its reader and is used on the reader's thread
 * (one thread at a time, as every call on a reader).
 */
typedef struct uscope_replay uscope_replay_t;
/**
 * A cursor over [t0, t1] (closed; t1 < t0 gives no item). Owned by the
 * caller: free it with uscope_replay_free(). Closing the reader first is
 * allowed: the cursor's fills then fail with USCOPE_ERR_BAD_STATE, and it
 * must still be freed. Statuses: USCOPE_ERR_INVALID_ARGUMENT (a NULL
 * argument), USCOPE_ERR_NO_MEMORY.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_replay(uscope_reader_t *reader, uscope_replay_t **out,
                                                                uint64_t t0, uint64_t t1);
/**
 * Fill items[0 .. capacity) with the next items. USCOPE_OK with *count
 * (1..capacity) items, or USCOPE_DONE with *count = 0 when there are no more
 * (and at every fill after). A fill may return fewer than capacity items
 * before the end; only USCOPE_DONE ends the replay.
 *
 * An event's payload points into the reader's buffers or the cursor's: valid
 * until the next fill on this cursor or the next call on its reader,
 * whichever comes first. Copy it to keep it.
 *
 * Errors (*count = 0, the message in uscope_last_error() and
 * uscope_reader_error()): USCOPE_ERR_INVALID_ARGUMENT for a NULL cursor,
 * items or count, or capacity 0 (the cursor is unchanged: fix the call and
 * fill again); USCOPE_ERR_BAD_STATE when the reader was closed, or when a
 * uscope_reader_poll_new_segments() found segments after the cursor was made
 * (its index changed: make a new cursor); a file error (CORRUPT, TRUNCATED,
 * IO; strict reads: the defect's status), after which the cursor is failed:
 * every later fill returns that status again.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_replay_fill(uscope_replay_t *cursor, uscope_item_t *items,
                                                              uint32_t *count, uint32_t capacity);
/** Free a cursor (NULL is allowed), before or after closing its reader. */
USCOPE_API void uscope_replay_free(uscope_replay_t *cursor);

/**
 * Live tailing: re-read the header of a file still being written and pick up
 * segments committed since (§2.2: tail_offset is the commit point). *found
 * is set to the number of new segments. Works on finalized files too (0).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_reader_poll_new_segments(uscope_reader_t *reader, uint32_t *found);

/** The message of the reader's last error, or "". Owned by the reader. */
USCOPE_API const char *uscope_reader_error(const uscope_reader_t *reader);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* USCOPE_USCOPE_H */
