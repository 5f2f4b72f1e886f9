/*
 * libuscope exporters and importers — a trace in the tools architects
 * already use (docs/export.md: what each format keeps and how it maps):
 *
 *   konata       Kanata log v0004 (Konata's pipeline view) of a cpu-protocol trace
 *   perfetto     Perfetto protobuf trace (ui.perfetto.dev), streamed: big traces
 *   chrome-json  Trace Event Format JSON (chrome://tracing, Perfetto): small traces
 *   nytprof      Devel::NYTProf profile of the firmware (nytprofhtml), needs its ELF
 *   hpctoolkit   HPCToolkit database v4 directory (hpcviewer)
 *   fst, vcd     waveforms of a window of cycles (GTKWave, Surfer)
 *
 * and the reverse of the first: a Kanata log imported as a µScope trace.
 *
 * Same error model as <uscope/uscope.h>: every call returns USCOPE_OK or a
 * negative USCOPE_ERR_*, leaves a message in uscope_last_error(), never
 * aborts on input and never lets an exception out.
 *
 * Every exporter streams: its memory is bounded independently of the trace's
 * size. The output is written to a temporary file (a temporary directory
 * for hpctoolkit) beside it and renamed over it only on success; on failure
 * an existing output is left as it was. An output that is the input is
 * refused.
 *
 * Thread safety: the calls share nothing; any number may run at once on
 * different files.
 */
#ifndef USCOPE_EXPORT_H
#define USCOPE_EXPORT_H

#include "convert.h"
#include "uscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Export formats (uscope_export_options_t.format). */
#define USCOPE_EXPORT_KONATA      1
#define USCOPE_EXPORT_PERFETTO    2
#define USCOPE_EXPORT_CHROME_JSON 3
#define USCOPE_EXPORT_NYTPROF     4
#define USCOPE_EXPORT_HPCTOOLKIT  5
#define USCOPE_EXPORT_FST         6
#define USCOPE_EXPORT_VCD         7

/** Layouts of chrome-json (uscope_export_options_t.chrome_style). */
#define USCOPE_CHROME_AUTO     0 /* pccx-lab's for a .pccx input, ours otherwise */
#define USCOPE_CHROME_USCOPE   1 /* ours: processes per scope, tracks, counters, flows (docs/export.md) */
#define USCOPE_CHROME_PCCX_LAB 2 /* pccx-lab's own exporter's JSON, byte for byte: its events as "X"
                                    slices, ts and dur in its fixed 200 cycles per microsecond; an NPU
                                    trace gives what pccx-lab writes for the .pccx `uscope convert`
                                    makes of it */

/** Time units of the timeline exporters (perfetto, chrome-json). */
#define USCOPE_TIME_AUTO  0 /* cycles for a single-clock trace, else ps */
#define USCOPE_TIME_CYCLE 1 /* 1 cycle of the exported scope's clock is 1 unit */
#define USCOPE_TIME_PS    2
#define USCOPE_TIME_NS    3

/**
 * The format a name gives ("konata", "perfetto", "chrome-json", "nytprof",
 * "hpctoolkit", "fst", "vcd"; case-insensitive), or 0 when none.
 */
USCOPE_API uint32_t uscope_export_format_from_name(const char *name);
/** The name of a format, or NULL for an unknown one. Static storage. */
USCOPE_API const char *uscope_export_format_name(uint32_t format);

/** Options. Size-prefixed: set struct_size (uscope_export_options_init does). */
typedef struct uscope_export_options_s {
  uint32_t struct_size;
  uint32_t format;         /* USCOPE_EXPORT_*: required */
  /* The window of cycles exported, both included, in the cycles of the
     exported scope's clock. range_end UINT64_MAX (the default): to the end.
     A range reaching past the last cycle is cut there. */
  uint64_t range_start;
  uint64_t range_end;
  uint32_t time_unit;      /* USCOPE_TIME_*: perfetto and chrome-json */
  uint32_t progress;       /* 1: progress bar on stderr when stderr is a terminal */
  /* The firmware's ELF (nytprof, hpctoolkit; konata labels): NULL, the
     trace's cpu.elf_path DUT property. */
  const char *elf_path;
  /* The scope exported (cpu exporters: its cpu protocol; perfetto: only it);
     NULL: every scope the format can show (the first cpu scope for konata,
     nytprof). */
  const char *scope;
  /* Called with line 0 for each note about the export as a whole (what the
     format cannot hold, with counts). May be NULL. */
  uscope_convert_issue_fn on_issue;
  void *user;
  uint32_t chrome_style;   /* USCOPE_CHROME_*: chrome-json only */
  uint32_t reserved;
} uscope_export_options_t;

USCOPE_API void uscope_export_options_init(uscope_export_options_t *opts);

typedef struct uscope_export_stats_s {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t first_cycle;    /* the window exported, after clamping */
  uint64_t last_cycle;
  uint64_t records;        /* what the format counts: instructions, slices, samples, value changes */
  uint64_t bytes_out;      /* bytes written (all files, for hpctoolkit) */
} uscope_export_stats_t;

/**
 * Export the trace `in` (.uscope; .pccx and NPU JSON-Lines for perfetto and
 * chrome-json) to `out` (a directory for hpctoolkit). stats may be NULL.
 */
USCOPE_API uscope_status_t uscope_export(uscope_export_stats_t *stats, const char *in, const char *out,
                                         const uscope_export_options_t *opts);

/** Options of the Kanata import. Size-prefixed: set struct_size. */
typedef struct uscope_konata_import_options_s {
  uint32_t struct_size;
  uint32_t strict;           /* 1: stop at the first malformed line (USCOPE_ERR_CORRUPT) */
  uint64_t clock_period_ps;  /* 0: 1000 */
  const char *dut_name;      /* NULL: "konata" */
  uint32_t progress;
  uint32_t reserved;
  /* Each malformed line: its 1-based number and why; it is skipped. */
  uscope_convert_issue_fn on_issue;
  void *user;
} uscope_konata_import_options_t;

USCOPE_API void uscope_konata_import_options_init(uscope_konata_import_options_t *opts);

/**
 * Import the Kanata log `in` (plain or gzip) as the µScope trace `out`, with
 * the cpu protocol (docs/export.md "Konata import"). stats: lines read,
 * instructions (events_out) and malformed lines (skipped); may be NULL.
 */
USCOPE_API uscope_status_t uscope_import_konata(uscope_convert_stats_t *stats, const char *in, const char *out,
                                                const uscope_konata_import_options_t *opts);

#ifdef __cplusplus
}
#endif

#endif /* USCOPE_EXPORT_H */
