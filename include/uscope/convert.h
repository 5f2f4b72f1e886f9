/*
 * libuscope converters — between any two of NPU JSON-Lines (npu-trace-jsonl.md),
 * µScope (the npu protocol, docs/npu-protocol.md) and pccx-lab .pccx, in every
 * direction (docs/conversions.md: what each pair keeps), and the npu report
 * (the metrics of npu-trace-jsonl.md §7).
 *
 * Same error model as <uscope/uscope.h>: every call returns USCOPE_OK or a
 * negative USCOPE_ERR_*, leaves a message in uscope_last_error(), never
 * aborts on input and never lets an exception out. docs/convert.md has the
 * mappings, the canonical JSONL form and the limits.
 *
 * JSONL input is streamed (plain, or gzip detected by its magic 1f 8b) with
 * memory bounded independently of the file size. A malformed line (bad JSON,
 * missing event_type / t_cycle, a key of the wrong type or not a field of
 * its event type, an unknown event type, a line over max_line_bytes, a value
 * the target cannot represent, out of order beyond the reorder window) is an
 * issue: reported through on_issue with its 1-based line number and reason,
 * counted in stats.skipped, and skipped; with strict set the first one stops
 * the conversion with USCOPE_ERR_CORRUPT (USCOPE_ERR_LIMIT for a line too
 * long). A truncated gzip input gives USCOPE_ERR_TRUNCATED.
 *
 * Input that is not NPU JSONL fails with USCOPE_ERR_CORRUPT, naming the
 * first bad line and its reason: when none of its non-blank lines is a valid
 * record (an event or TRACE_META), and as soon as its first 100 non-blank
 * lines are all malformed. An empty or all-blank file is a valid trace of 0
 * events. Below that, bad lines are skipped and reported, whatever their
 * share.
 *
 * The output. An output that is the input file (the same device and inode:
 * the same path, "./f", "dir/../f", a symlink or a hard link to it) is
 * refused with USCOPE_ERR_INVALID_ARGUMENT before anything is opened. The
 * output is written to a temporary file in its directory (".~uscope.<pid>.
 * <n>.<name>", created O_EXCL) and renamed over it only when the conversion
 * succeeds; on any failure the temporary file is removed and an existing
 * output is left byte for byte as it was (none is created). A symlink output
 * replaces the file it points to. An output that is not a regular file (a
 * device, a FIFO, /proc/self/fd/N) is written in place.
 *
 * Errors name the input or output file, what was expected and what was
 * found; JSONL errors give "<file>: line N: <reason>".
 *
 * The clock period (options.period_ps, 0: the trace's) and the pccx header
 * fields ride on TRACE_META extension keys ("period_ps", "pccx") so that
 * every converter pair keeps them (docs/convert.md "Round trips").
 */
#ifndef USCOPE_CONVERT_H
#define USCOPE_CONVERT_H

#include "uscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Called for each event the output cannot place: line is the 1-based JSONL
 * line, or for a .uscope / .pccx input the 1-based event number (the reason
 * names it too); reason is a NUL-terminated message. Called with line 0 for
 * a note about the files as a whole, not counted as skipped: a defect of a
 * .uscope input, scopes it holds that are not converted, what the output
 * format cannot hold (one call each, with counts).
 */
typedef void (*uscope_convert_issue_fn)(void *user, uint64_t line, const char *reason);

/** Options. Size-prefixed: set struct_size (uscope_convert_options_init does). 0 = default. */
typedef struct uscope_convert_options_s {
  uint32_t struct_size;
  uint32_t strict;             /* 1: stop at the first malformed line */
  uint64_t period_ps;          /* npu clock period: time_ps = t_cycle x period_ps; 0 (the default):
                                  the JSONL's TRACE_META "period_ps", else 1000. Set, it wins over
                                  TRACE_META's (and is written back as it). */
  uint64_t max_line_bytes;     /* longer lines are issues; default 64 MiB */
  uint32_t reorder_window;     /* lines held to sort out-of-order t_cycle; default 65536 */
  uint32_t progress;           /* 1: progress bar on stderr when stderr is a terminal */
  /* .uscope output: unit counts of the npu scope (JSONL does not declare them). */
  uint16_t queue_depth;        /* commands in flight; default 1024 */
  uint16_t num_contexts;       /* distinct meta/LLM contexts live at once; default 256 */
  uint16_t num_te, num_ve;     /* engines busy at once; default 64 each */
  uint16_t num_dma_channels;   /* DMA channel ids < this; default 64 */
  uint16_t num_dram_channels;  /* default 64 */
  uint16_t num_noc_links;      /* default 64 */
  uint16_t num_sram_banks;     /* default 1024 */
  uscope_convert_issue_fn on_issue; /* may be NULL */
  void *user;
  /* The output writer's queue between the parsing thread and its encoder
     thread (.uscope, .pccx): part of the conversion's memory bound. 0: the
     default, 8 MiB for .uscope and 16 MiB for .pccx; the writers' minimums
     (64 KiB .uscope, 256 KiB .pccx) apply. An upper bound: an input file
     of known size gets a smaller queue when twice its size (32 times for
     gzip) is smaller, rounded up to a power of two (the writers pre-fault
     their whole queue at open, which a small file need not pay for). Added
     in 0.1; a caller built with an older struct_size gets the default. */
  uint64_t queue_bytes;
  /* Events the output cannot place (an id beyond the unit counts, a value
     the target cannot represent, a malformed JSONL line) are issues: each is
     reported and skipped. Above a share of them the conversion fails instead
     (USCOPE_ERR_CORRUPT, no output written): when more than 10 were skipped
     and more than max_skipped_ppm per million of the input's events. 0: the
     default, 10000 (1%); 1000000 or more: never fail for it. Added in 0.2.1;
     a caller built with an older struct_size gets the default. */
  uint32_t max_skipped_ppm;
  uint32_t reserved0;
} uscope_convert_options_t;

USCOPE_API void uscope_convert_options_init(uscope_convert_options_t *opts);

typedef struct uscope_convert_stats_s {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t lines;              /* JSONL lines read (input JSONL) */
  uint64_t events_in;          /* events read */
  uint64_t events_out;         /* events (lines, pccx events) written */
  uint64_t skipped;            /* malformed lines and events the output cannot place, reported and skipped */
  uint64_t meta_lines;         /* TRACE_META lines */
  uint64_t blank_lines;
  uint64_t bytes_in;           /* input bytes (decompressed) */
  uint64_t first_issue_line;   /* line (JSONL input) or event number of the first; 0 when none */
} uscope_convert_stats_t;

/** Input / output formats. */
#define USCOPE_CONVERT_AUTO   0 /* by file name: .jsonl / .jsonl.gz / .uscope / .pccx */
#define USCOPE_CONVERT_JSONL  1 /* output: .gz in the name writes gzip */
#define USCOPE_CONVERT_USCOPE 2
#define USCOPE_CONVERT_PCCX   3

/** The format of a file name (USCOPE_CONVERT_JSONL/USCOPE/PCCX), or AUTO when unknown. */
USCOPE_API uint32_t uscope_convert_format_of(const char *path);

/**
 * Convert in to out: any two of USCOPE_CONVERT_JSONL, _USCOPE and _PCCX, the
 * same format too (a re-encoding; jsonl -> jsonl writes the canonical form).
 * Formats AUTO go by the names. stats may be NULL (set stats->struct_size
 * otherwise). Events that cannot be placed are skipped and reported through
 * on_issue; above options->max_skipped_ppm the call fails with
 * USCOPE_ERR_CORRUPT and writes no output.
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_convert(uscope_convert_stats_t *stats, const char *in, uint32_t in_format,
                                          const char *out, uint32_t out_format,
                                          const uscope_convert_options_t *opts);

/** The single-direction entry points (same as uscope_convert with the formats). */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_jsonl_to_uscope(uscope_convert_stats_t *stats, const char *in,
                                                  const char *out,
                                                  const uscope_convert_options_t *opts);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_jsonl_to_pccx(uscope_convert_stats_t *stats, const char *in,
                                                const char *out,
                                                const uscope_convert_options_t *opts);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_convert_uscope_to_jsonl(uscope_convert_stats_t *stats, const char *in,
                                                          const char *out,
                                                          const uscope_convert_options_t *opts);
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_convert_pccx_to_jsonl(uscope_convert_stats_t *stats, const char *in,
                                                        const char *out,
                                                        const uscope_convert_options_t *opts);

/**
 * The npu report of a .jsonl(.gz), .uscope (its first npu scope) or .pccx
 * file: *out receives a NUL-terminated text (json != 0: one JSON object and
 * a newline) to release with uscope_convert_free(). Metrics a format cannot
 * support are reported as unavailable (docs/convert.md).
 */
USCOPE_MUST_USE USCOPE_API uscope_status_t uscope_convert_npu_report(char **out, uscope_convert_stats_t *stats,
                                                     const char *in, uint32_t in_format,
                                                     const uscope_convert_options_t *opts, int json);

/** Free memory returned by this header's calls (NULL is a no-op). */
USCOPE_API void uscope_convert_free(void *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* USCOPE_CONVERT_H */
