/*
 * libuscope — read and write pccx-lab `.pccx` NPU profiling traces.
 *
 * Plain C. Part of libuscope (same library, same error model as
 * <uscope/uscope.h>): every call that can fail returns uscope_status_t
 * (USCOPE_OK or a negative USCOPE_ERR_*), writes out-parameters only on
 * success, leaves a message readable with uscope_last_error() on the calling
 * thread (and, per handle, with pccx_reader_error() / pccx_writer_error()),
 * never aborts on caller input and never lets a C++ exception out.
 * Handles are released by *_close(), which accepts NULL.
 *
 * Threads: a handle is not safe for concurrent use; different handles may be
 * used from different threads. A writer owns one background thread.
 *
 * Format: docs/pccx.md; pccx-lab's container (magic "PCCX", major 1, any
 * minor, u64 JSON-header length, JSON header, payload) with the bincode
 * NpuTrace, flatbuf (24-byte records + optional "PCC2" api_name trailer) and
 * raw payload encodings.
 */
#ifndef PCCX_PCCX_H
#define PCCX_PCCX_H

#include <stddef.h>
#include <stdint.h>

#include <uscope/uscope.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The container major version read and written (files with another major are
 * rejected with USCOPE_ERR_UNSUPPORTED_VERSION); the minor version written. */
#define PCCX_FORMAT_MAJOR 1
#define PCCX_FORMAT_MINOR 1

/* ── Event types ───────────────────────────────────────────────────────── */

#define PCCX_EVENT_UNKNOWN        0
#define PCCX_EVENT_MAC_COMPUTE    1
#define PCCX_EVENT_DMA_READ       2
#define PCCX_EVENT_DMA_WRITE      3
#define PCCX_EVENT_SYSTOLIC_STALL 4
#define PCCX_EVENT_BARRIER_SYNC   5
#define PCCX_EVENT_API_CALL       6
#define PCCX_EVENT_TYPE_COUNT     7

/**
 * The pccx name of event type id ("UNKNOWN", "MAC_COMPUTE", "DMA_READ",
 * "DMA_WRITE", "SYSTOLIC_STALL", "BARRIER_SYNC", "API_CALL"), or NULL for an
 * id >= PCCX_EVENT_TYPE_COUNT. Static storage.
 */
USCOPE_API const char *pccx_event_type_name(uint32_t id);

/** The id of a pccx event type name, or PCCX_EVENT_UNKNOWN when unknown / NULL. */
USCOPE_API uint32_t pccx_event_type_id(const char *name);

/* ── Payload encodings ─────────────────────────────────────────────────── */

#define PCCX_ENCODING_BINCODE 0 /* Rust bincode v1 NpuTrace (default when writing) */
#define PCCX_ENCODING_FLATBUF 1 /* 24-byte records, optional PCC2 api_name trailer */
#define PCCX_ENCODING_RAW     2 /* opaque bytes */
#define PCCX_ENCODING_OTHER   3 /* read only: an encoding string this library does not know;
                                   the payload is available as bytes, no events */

/* ── Reader ────────────────────────────────────────────────────────────── */

/** Open flags. */
#define PCCX_OPEN_STRICT_CHECKSUM 0x1u /* a checksum mismatch is USCOPE_ERR_CHECKSUM
                                          (default: open succeeds, checksum_status says
                                          PCCX_CHECKSUM_MISMATCH) */

/** Checksum status of an open file. */
#define PCCX_CHECKSUM_OK       0 /* checksum_fnv64 present and equal to FNV-1a 64 of the payload */
#define PCCX_CHECKSUM_MISMATCH 1 /* present and different (only without STRICT) */
#define PCCX_CHECKSUM_ABSENT   2 /* field missing or null */

/**
 * The container header and the JSON header's fields. Size-prefixed: set
 * struct_size = sizeof(pccx_header_t) before pccx_reader_header(). Strings
 * are owned by the reader, NUL-terminated, valid until pccx_reader_close().
 */
typedef struct pccx_header_s {
  uint32_t struct_size;
  uint32_t major;              /* container major version (always 1) */
  uint32_t minor;              /* container minor version (any) */
  uint32_t format_minor;       /* JSON "format_minor" */
  const char *pccx_lab_version;/* JSON "pccx_lab_version" */
  uint32_t mac_rows;           /* arch.mac_dims[0] */
  uint32_t mac_cols;           /* arch.mac_dims[1] */
  const char *isa_version;     /* arch.isa_version */
  double peak_tops;            /* arch.peak_tops when has_peak_tops, else 0 */
  uint32_t has_peak_tops;
  uint32_t cores;              /* trace.cores */
  uint64_t cycles;             /* trace.cycles */
  uint32_t clock_mhz;          /* trace.clock_mhz (1000 when absent) */
  uint32_t encoding;           /* PCCX_ENCODING_* */
  const char *encoding_name;   /* payload.encoding as written */
  uint64_t payload_bytes;      /* payload.byte_length */
  uint64_t header_bytes;       /* length of the JSON header (with any padding) */
  uint32_t checksum_present;   /* 1 when payload.checksum_fnv64 is a number or hex string */
  uint32_t checksum_status;    /* PCCX_CHECKSUM_* */
  uint64_t checksum;           /* the file's checksum_fnv64 (when present) */
  uint64_t computed_checksum;  /* FNV-1a 64 of the payload bytes */
  uint64_t total_cycles;       /* bincode: NpuTrace.total_cycles; else max end cycle of events */
  uint64_t num_events;         /* events decoded (0 for raw) */
  uint64_t num_api_names;      /* events that carry an api_name */
  uint32_t flatbuf_trailer;    /* flatbuf: 1 when a PCC2 trailer is present */
  uint32_t reserved;
  /* Payload bytes after the decoded data, ignored as pccx-lab ignores them:
     bincode bytes after the declared events, flatbuf bytes of a partial last
     record when there is no PCC2 trailer. 0 in a well-formed file; the
     checksum still covers them. Added in 0.1 (older struct_size: not set). */
  uint64_t payload_trailing_bytes;
} pccx_header_t;

/** A decoded event. Strings are owned by the reader (NUL-terminated). */
typedef struct pccx_event_s {
  uint32_t core_id;
  uint32_t type_id;            /* PCCX_EVENT_*; see type_name for the exact name */
  uint64_t start_cycle;
  uint64_t duration;
  const char *type_name;       /* bincode: the file's event_type string (a name this
                                  library does not know gives type_id PCCX_EVENT_UNKNOWN
                                  and keeps the string here); flatbuf: the table name of
                                  type_id, or "UNKNOWN" for an id >= 7 (type_id kept) */
  const char *api_name;        /* NULL when the event has none */
} pccx_event_t;

typedef struct pccx_reader pccx_reader_t;

/**
 * Open and fully validate path. The file is read into memory the reader owns
 * (pread, not mapped), so a file truncated while it is read is TRUNCATED
 * ("PATH shrank under the reader: ..."), never a SIGBUS. On success *out owns
 * a reader. flags: PCCX_OPEN_*. Errors (every message names the path):
 * INVALID_ARGUMENT, IO (cannot open or read; not a regular file: "PATH is a
 * FIFO, not a pccx container (a regular file)", never a hang), BAD_MAGIC
 * (says what the file looks like: "found a µScope trace", JSON text, text, an
 * empty file), UNSUPPORTED_VERSION (major != 1), TRUNCATED (file ends inside the
 * fixed header, the JSON header or the payload, or a payload ends inside a
 * structure), BAD_HEADER (JSON invalid, a required field missing or of the
 * wrong type; the message names the JSON path, e.g. "payload.byte_length"),
 * CHECKSUM (mismatch with PCCX_OPEN_STRICT_CHECKSUM), CORRUPT (payload
 * inconsistent: trailing bytes, bad option tag, bad PCC2 trailer), BAD_UTF8
 * (a string is not valid UTF-8), LIMIT (a header over 64 MiB), NO_MEMORY.
 * Memory is bounded by the file size (the file's bytes, kept for
 * pccx_reader_payload(), plus the decoded events): declared counts and
 * lengths are checked against the bytes actually present before anything is
 * allocated.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_reader_open(pccx_reader_t **out, const char *path, uint32_t flags);

/** As pccx_reader_open(), from a buffer that the reader copies. */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_reader_open_memory(pccx_reader_t **out, const void *data,
                                                   size_t size, uint32_t flags);

USCOPE_API void pccx_reader_close(pccx_reader_t *reader);

/** The message of the reader's last error, or "". Owned by the reader. */
USCOPE_API const char *pccx_reader_error(const pccx_reader_t *reader);

/** Fill *out (struct_size must be set; a smaller older struct is filled up to its size). */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_reader_header(const pccx_reader_t *reader, pccx_header_t *out);

/** The JSON header bytes as in the file (not NUL-terminated; *len bytes). NULL on bad args. */
USCOPE_API const char *pccx_reader_header_json(const pccx_reader_t *reader, size_t *len);

/** Number of events (0 for raw / other encodings, or NULL reader). */
USCOPE_API uint64_t pccx_reader_event_count(const pccx_reader_t *reader);

/** Event `index` (< event count; else NOT_FOUND), in payload order. */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_reader_event(const pccx_reader_t *reader, pccx_event_t *out,
                                             uint64_t index);

/** The payload bytes (owned by the reader, valid until close). */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_reader_payload(const pccx_reader_t *reader, const uint8_t **data,
                                               uint64_t *len);

/* ── Writer ────────────────────────────────────────────────────────────── */

/** What pccx_writer_event() does when the queue is full. */
#define PCCX_BACKPRESSURE_BLOCK 0 /* default: wait for the encoder; counted in stats */
#define PCCX_BACKPRESSURE_DROP  1 /* drop the event; counted, and close() returns
                                     USCOPE_ERR_DATA_DROPPED */

/**
 * Writer options. Size-prefixed: set struct_size = sizeof(pccx_writer_options_t)
 * (PCCX_WRITER_OPTIONS_INIT / pccx_writer_options_init() do). Zero / NULL
 * fields mean "default". Strings are copied at open.
 */
typedef struct pccx_writer_options_s {
  uint32_t struct_size;
  uint32_t encoding;           /* PCCX_ENCODING_BINCODE (default), FLATBUF or RAW */
  const char *pccx_lab_version;/* default "libuscope <version>" */
  const char *isa_version;     /* default "1.1" */
  uint32_t mac_rows;           /* default 32 */
  uint32_t mac_cols;           /* default 32 */
  double peak_tops;            /* arch.peak_tops (finite, >= 0; always written, as pccx-lab does) */
  uint32_t cores;              /* trace.cores; 0: max core_id seen + 1 */
  uint32_t clock_mhz;          /* default 1000 */
  uint64_t queue_bytes;        /* SPSC ring between caller and encoder; 0 = 4 MiB */
  uint32_t backpressure;       /* PCCX_BACKPRESSURE_* */
  uint32_t reserved;           /* must be 0 */
} pccx_writer_options_t;

#define PCCX_WRITER_OPTIONS_INIT \
  { (uint32_t)sizeof(pccx_writer_options_t), 0, NULL, NULL, 0, 0, 0.0, 0, 0, 0, 0, 0 }

USCOPE_API void pccx_writer_options_init(pccx_writer_options_t *opts);

typedef struct pccx_writer pccx_writer_t;

/**
 * Start a new container for path, reserve the container header and the JSON
 * header (filled in at finish), allocate the queue (pages touched) and start
 * the encoder thread. opts may be NULL. The container is written to a
 * temporary file beside path (".NAME.XXXXXX", same directory; a symbolic link
 * is followed) and renamed onto path by pccx_writer_finish() / _close() once
 * complete: until then path is left as it was (absent, or the previous file,
 * which readers that have it open keep reading), and a failed or killed run
 * never leaves half a container there. A failed finish removes the temporary
 * file; a SIGKILL can leave it. An existing path that is not a regular file
 * is refused (IO). Errors: INVALID_ARGUMENT (bad option,
 * string too long or not UTF-8 / containing control characters), IO, NO_MEMORY.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_open(pccx_writer_t **out, const char *path,
                                            const pccx_writer_options_t *opts);

/**
 * Record one event. Hot path: in steady state no heap allocation, no lock, no
 * system call (only a full queue under PCCX_BACKPRESSURE_BLOCK waits).
 * api_name (may be NULL) is copied into the queue; at most 65,535 bytes of
 * valid UTF-8 (checked here with a SIMD validator, no allocation).
 * type_id: 0..6. A bad type_id or api_name (or, for flatbuf, core_id
 * 0x32434350, which pccx-lab would read as the PCC2 trailer magic) is
 * INVALID_ARGUMENT: the event is not recorded and the writer stays usable.
 * Other errors: BAD_STATE (raw encoding / after finish), DATA_DROPPED (this
 * event was dropped under PCCX_BACKPRESSURE_DROP), or the writer's sticky
 * error (e.g. IO from the encoder thread).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_event(pccx_writer_t *writer, uint32_t core_id,
                                             uint64_t start_cycle, uint64_t duration,
                                             uint32_t type_id, const char *api_name);

/** Append n bytes to a raw-encoding payload (BAD_STATE for other encodings). Copied. */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_raw(pccx_writer_t *writer, const void *data, size_t n);

/** Set NpuTrace.total_cycles and trace.cycles (default: max start+duration seen). */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_set_total_cycles(pccx_writer_t *writer, uint64_t cycles);

typedef struct pccx_writer_stats_s {
  uint32_t struct_size;
  uscope_status_t sticky_status; /* first error, or USCOPE_OK */
  uint64_t events;               /* events accepted into the queue */
  uint64_t events_written;       /* events encoded by the encoder thread */
  uint64_t api_names;            /* events carrying an api_name */
  uint64_t raw_bytes;            /* bytes passed to pccx_writer_raw */
  uint64_t dropped_events;       /* dropped under PCCX_BACKPRESSURE_DROP */
  uint64_t dropped_raw_bytes;
  uint64_t errors;               /* calls that failed */
  uint64_t stalls;               /* times the caller waited for the queue */
  uint64_t stall_ns;
  uint64_t queue_bytes;          /* queue size allocated */
  uint64_t payload_bytes;        /* payload bytes written so far (final after finish) */
  uint64_t file_bytes;           /* file size so far */
  uint64_t checksum;             /* after finish: FNV-1a 64 of the payload */
} pccx_writer_stats_t;

USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_stats(const pccx_writer_t *writer, pccx_writer_stats_t *out);

/**
 * Finish the file without freeing the writer: drain the queue, write the
 * flatbuf trailer, patch the bincode event count and total_cycles, compute
 * the checksum and write the JSON header (checksum_fnv64 as a JSON number)
 * into its reserved space. Returns USCOPE_OK, DATA_DROPPED when events were
 * dropped (the file is still complete and valid), or the sticky error. A
 * second call returns the first call's status.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_finish(pccx_writer_t *writer);

/** pccx_writer_finish() then free the writer; returns the finish status. NULL: USCOPE_OK. */
USCOPE_MUST_USE USCOPE_API uscope_status_t pccx_writer_close(pccx_writer_t *writer);

/** The writer's sticky error message, or "". Owned by the writer. */
USCOPE_API const char *pccx_writer_error(const pccx_writer_t *writer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PCCX_PCCX_H */
