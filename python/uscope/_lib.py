"""Loading libuscope.so and declaring its C ABI to ctypes.

Every struct here mirrors one of include/uscope/*.h field for field (ctypes
applies the C alignment rules, so the offsets follow); tests/test_abi.py
checks sizes and offsets against a C program compiled from the headers.
Every function gets argtypes and restype: without them ctypes would pass
Python ints as C int and truncate 64-bit values and pointers.
"""
import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_uint8, c_uint16,
                    c_uint32, c_uint64, c_void_p)

# The item batches are read as 8-byte words (trace.py) and libuscope's own layout checks
# assume LP64: a 32-bit interpreter cannot load the 64-bit library anyway.
if ctypes.sizeof(c_void_p) != 8:
    raise ImportError("uscope needs a 64-bit Python (libuscope's uscope_item_t layout)")

status_t = c_int32
u8, u16, u32, u64 = c_uint8, c_uint16, c_uint32, c_uint64

ENV_VAR = "USCOPE_LIBRARY"

# ── structs (uscope.h) ──────────────────────────────────────────────────


class Field(Structure):
    _fields_ = [("name", c_char_p), ("type", u8), ("enum_id", u8), ("role", u8), ("pair_id", u8)]


class DutProperty(Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


class WriterOptions(Structure):
    _fields_ = [("struct_size", u32), ("compression", u32), ("compression_level", c_int32),
                ("durability", u32), ("checkpoint_interval_ps", u64), ("frame_format", u32),
                ("backpressure", u32), ("queue_bytes", u64), ("value_check", u32), ("reserved", u32),
                ("compress_threads", u32), ("reserved2", u32)]


class WriterStats(Structure):
    _fields_ = [("struct_size", u32), ("sticky_status", status_t), ("cycles", u64), ("ops", u64),
                ("events", u64), ("frames", u64), ("segments", u64), ("raw_bytes", u64),
                ("compressed_bytes", u64), ("checkpoint_bytes", u64), ("file_bytes", u64),
                ("errors", u64), ("dropped_cycles", u64), ("dropped_ops", u64), ("dropped_events", u64),
                ("stalls", u64), ("stall_ns", u64), ("queue_bytes", u64), ("summary_omitted", u32),
                ("reserved", u32), ("compress_threads", u32), ("reserved2", u32),
                ("compress_waits", u64), ("compress_wait_ns", u64)]


class FileInfo(Structure):
    _fields_ = [("struct_size", u32), ("version_major", u16), ("version_minor", u16), ("flags", u64),
                ("complete", u32), ("compression", u32), ("interleaved", u32), ("num_segments", u32),
                ("total_time_ps", u64), ("last_time_ps", u64), ("checkpoint_interval_ps", u64),
                ("file_bytes", u64), ("header_num_segments", u32), ("preamble_end", u32),
                ("section_table_offset", u64), ("tail_offset", u64), ("time_grid_ps", u64)]


class SchemaCounts(Structure):
    _fields_ = [("struct_size", u32), ("clocks", u32), ("scopes", u32), ("enums", u32),
                ("storages", u32), ("event_types", u32), ("summary_fields", u32)]


class ClockInfo(Structure):
    _fields_ = [("name", c_char_p), ("period_ps", u32)]


class ScopeInfo(Structure):
    _fields_ = [("name", c_char_p), ("protocol", c_char_p), ("parent_id", u16), ("clock_id", u8)]


class StorageInfo(Structure):
    _fields_ = [("name", c_char_p), ("scope_id", u16), ("num_slots", u16), ("flags", u16),
                ("num_fields", u16), ("num_properties", u16), ("slot_size", u32)]


class FieldInfo(Structure):
    _fields_ = [("name", c_char_p), ("type", u8), ("enum_id", u8), ("role", u8), ("pair_id", u8),
                ("size", u32), ("offset", u32)]


class EventTypeInfo(Structure):
    _fields_ = [("name", c_char_p), ("scope_id", u16), ("num_fields", u16), ("payload_size", u32)]


class SummaryInfo(Structure):
    _fields_ = [("struct_size", u32), ("present", u32), ("base_interval_cycles", u32), ("fan_out", u32),
                ("total_instructions", u64), ("density_levels", u32), ("num_counters", u32)]


class Item(Structure):
    _fields_ = [("time_ps", u64), ("is_event", u32), ("action", u8), ("storage_id", u16), ("slot", u16),
                ("field", u16), ("value", u64), ("event_type_id", u16), ("payload_size", u32),
                ("payload", c_void_p)]


class Defect(Structure):
    _fields_ = [("kind", u32), ("segment", u32), ("count", u64), ("offset", u64), ("time_ps", u64),
                ("subject", u32), ("reserved", u32)]


# ── structs (analysis.h) ────────────────────────────────────────────────


class CpuTraceOptions(Structure):
    _fields_ = [("struct_size", u32), ("scope", c_char_p), ("elf_path", c_char_p),
                ("cache_segments", u32), ("reserved", u32)]


class CpuTraceInfo(Structure):
    _fields_ = [("struct_size", u32), ("segment_count", u32), ("total_instructions", u64),
                ("max_cycle", u64), ("period_ps", u64), ("num_stages", u32), ("num_counters", u32),
                ("num_buffers", u32), ("num_metadata", u32), ("version", c_char_p),
                ("scope_name", c_char_p), ("isa", c_char_p), ("elf_path", c_char_p),
                ("has_symbols", u32), ("reserved", u32), ("elf_note", c_char_p)]


class CounterInfo(Structure):
    _fields_ = [("name", c_char_p), ("storage_id", u16), ("reserved", u16), ("tsum_index", u32)]


class StageSpan(Structure):
    _fields_ = [("stage", u32), ("lane", u32), ("start_cycle", u64), ("end_cycle", u64)]


class Insn(Structure):
    _fields_ = [("entity_id", u32), ("status", u32), ("sim_id", u64), ("pc", u64), ("inst_bits", u32),
                ("has_inst_bits", u32), ("first_cycle", u64), ("last_cycle", u64), ("flush_reason", u32),
                ("num_stages", u32), ("stages", POINTER(StageSpan)), ("disasm", c_char_p),
                ("annotations", c_char_p), ("function", c_char_p), ("source_file", c_char_p),
                ("source_line", u32), ("num_deps", u32), ("dep_src", POINTER(u32))]


class StageLatency(Structure):
    _fields_ = [("stage", u32), ("reserved", u32), ("total_cycles", u64), ("count", u64),
                ("avg_latency", c_double)]


class CounterSummary(Structure):
    _fields_ = [("counter", u32), ("reserved", u32), ("start_value", u64), ("end_value", u64),
                ("delta", u64), ("rate_per_cycle", c_double)]


class BufferSnapshot(Structure):
    _fields_ = [("buffer", u32), ("capacity", u32), ("cycle", u64 * 3), ("occupied", u32 * 3),
                ("fill_percent", c_double * 3)]


class StallCount(Structure):
    _fields_ = [("reason", u32), ("reserved", u32), ("name", c_char_p), ("count", u64)]


class PerfReport(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("start_cycle", u64), ("end_cycle", u64),
                ("range_cycles", u64), ("total", u64), ("retired", u64), ("flushed", u64),
                ("in_flight", u64), ("flush_rate", c_double), ("ipc", c_double),
                ("retired_in_range", u64), ("commit_ipc", c_double), ("num_counters", u32),
                ("num_buffers", u32), ("num_stages", u32), ("num_stalls", u32),
                ("counters", POINTER(CounterSummary)), ("buffers", POINTER(BufferSnapshot)),
                ("stages", POINTER(StageLatency)), ("stalls", POINTER(StallCount))]


# ── structs (convert.h, export.h) ───────────────────────────────────────

# void (*)(void *user, uint64_t line, const char *reason)
IssueFn = ctypes.CFUNCTYPE(None, c_void_p, u64, c_char_p)


class ConvertOptions(Structure):
    _fields_ = [("struct_size", u32), ("strict", u32), ("period_ps", u64), ("max_line_bytes", u64),
                ("reorder_window", u32), ("progress", u32), ("queue_depth", u16), ("num_contexts", u16),
                ("num_te", u16), ("num_ve", u16), ("num_dma_channels", u16), ("num_dram_channels", u16),
                ("num_noc_links", u16), ("num_sram_banks", u16), ("on_issue", IssueFn), ("user", c_void_p),
                ("queue_bytes", u64), ("max_skipped_ppm", u32), ("reserved0", u32)]


class ConvertStats(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("lines", u64), ("events_in", u64),
                ("events_out", u64), ("skipped", u64), ("meta_lines", u64), ("blank_lines", u64),
                ("bytes_in", u64), ("first_issue_line", u64)]


class ExportOptions(Structure):
    _fields_ = [("struct_size", u32), ("format", u32), ("range_start", u64), ("range_end", u64),
                ("time_unit", u32), ("progress", u32), ("elf_path", c_char_p), ("scope", c_char_p),
                ("on_issue", IssueFn), ("user", c_void_p), ("chrome_style", u32), ("reserved", u32)]


class ExportStats(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("first_cycle", u64), ("last_cycle", u64),
                ("records", u64), ("bytes_out", u64)]


# Every struct checked against the C headers (tests/test_abi.py), by its C name.
C_STRUCTS = {
    "uscope_field_t": Field, "uscope_dut_property_t": DutProperty,
    "uscope_writer_options_t": WriterOptions, "uscope_writer_stats_t": WriterStats,
    "uscope_file_info_t": FileInfo, "uscope_schema_counts_t": SchemaCounts,
    "uscope_clock_info_t": ClockInfo, "uscope_scope_info_t": ScopeInfo,
    "uscope_storage_info_t": StorageInfo, "uscope_field_info_t": FieldInfo,
    "uscope_event_type_info_t": EventTypeInfo, "uscope_summary_info_t": SummaryInfo,
    "uscope_item_t": Item, "uscope_defect_t": Defect,
    "uscope_cpu_trace_options_t": CpuTraceOptions, "uscope_cpu_trace_info_t": CpuTraceInfo,
    "uscope_counter_info_t": CounterInfo, "uscope_stage_span_t": StageSpan, "uscope_insn_t": Insn,
    "uscope_stage_latency_t": StageLatency, "uscope_counter_summary_t": CounterSummary,
    "uscope_buffer_snapshot_t": BufferSnapshot, "uscope_stall_count_t": StallCount,
    "uscope_perf_report_t": PerfReport, "uscope_convert_options_t": ConvertOptions,
    "uscope_convert_stats_t": ConvertStats, "uscope_export_options_t": ExportOptions,
    "uscope_export_stats_t": ExportStats,
}

# ── functions ────────────────────────────────────────────────────────────

P = POINTER
_S = status_t
# name: (restype, argtypes)
_FUNCS = {
    "uscope_version_string": (c_char_p, []),
    "uscope_version_number": (u32, []),
    "uscope_format_version": (u32, []),
    "uscope_status_str": (c_char_p, [status_t]),
    "uscope_last_error": (c_char_p, []),
    "uscope_set_last_error": (None, [c_char_p]),
    # schema
    "uscope_schema_new": (_S, [P(c_void_p)]),
    "uscope_schema_free": (None, [c_void_p]),
    "uscope_schema_load_json": (_S, [P(c_void_p), c_char_p, ctypes.c_size_t]),
    "uscope_schema_add_clock": (_S, [c_void_p, P(u8), c_char_p, u32]),
    "uscope_schema_add_scope": (_S, [c_void_p, P(u16), c_char_p, u16, c_char_p, u8]),
    "uscope_schema_add_enum": (_S, [c_void_p, P(u8), c_char_p, P(c_char_p), u16]),
    "uscope_schema_add_storage": (_S, [c_void_p, P(u16), c_char_p, u16, u16, u16, P(Field), u16,
                                       P(Field), u16]),
    "uscope_schema_add_event": (_S, [c_void_p, P(u16), c_char_p, u16, P(Field), u16]),
    "uscope_schema_add_summary_field": (_S, [c_void_p, P(u16), c_char_p, u8, u16]),
    "uscope_schema_add_dut_property": (_S, [c_void_p, c_char_p, c_char_p]),
    "uscope_schema_find_storage": (_S, [c_void_p, P(u16), c_char_p]),
    "uscope_schema_find_event": (_S, [c_void_p, P(u16), c_char_p]),
    # writer
    "uscope_compression_find": (_S, [P(u32), c_char_p]),
    "uscope_writer_options_init": (None, [P(WriterOptions)]),
    "uscope_writer_open": (_S, [P(c_void_p), c_char_p, c_void_p, P(DutProperty), u32, P(WriterOptions)]),
    "uscope_writer_close": (_S, [c_void_p]),
    "uscope_writer_finish": (_S, [c_void_p]),
    "uscope_writer_error": (c_char_p, [c_void_p]),
    "uscope_writer_find_storage": (_S, [c_void_p, P(u16), c_char_p]),
    "uscope_writer_find_event": (_S, [c_void_p, P(u16), c_char_p]),
    "uscope_begin_cycle": (_S, [c_void_p, u64]),
    "uscope_slot_set": (_S, [c_void_p, u16, u16, u16, u64]),
    "uscope_slot_clear": (_S, [c_void_p, u16, u16]),
    "uscope_slot_add": (_S, [c_void_p, u16, u16, u16, u64]),
    "uscope_prop_set": (_S, [c_void_p, u16, u16, u64]),
    "uscope_event": (_S, [c_void_p, u16, c_char_p, u32]),
    "uscope_end_cycle": (_S, [c_void_p]),
    "uscope_writer_flush": (_S, [c_void_p]),
    "uscope_string_insert": (_S, [c_void_p, P(u32), c_char_p]),
    "uscope_writer_stats": (_S, [c_void_p, P(WriterStats)]),
    # reader
    "uscope_reader_open": (_S, [P(c_void_p), c_char_p]),
    "uscope_reader_open_ex": (_S, [P(c_void_p), c_char_p, u32]),
    "uscope_reader_close": (None, [c_void_p]),
    "uscope_reader_info": (_S, [c_void_p, P(FileInfo)]),
    "uscope_reader_defects": (_S, [c_void_p, P(Defect), P(u32), u32]),
    "uscope_defect_name": (c_char_p, [u32]),
    "uscope_reader_dut_count": (u32, [c_void_p]),
    "uscope_reader_dut_property": (_S, [c_void_p, P(c_char_p), P(c_char_p), u32]),
    "uscope_reader_schema_counts": (_S, [c_void_p, P(SchemaCounts)]),
    "uscope_reader_clock": (_S, [c_void_p, P(ClockInfo), u32]),
    "uscope_reader_scope": (_S, [c_void_p, P(ScopeInfo), u32]),
    "uscope_reader_enum": (_S, [c_void_p, P(c_char_p), P(u32), u32]),
    "uscope_reader_enum_value": (_S, [c_void_p, P(c_char_p), u32, u32]),
    "uscope_reader_storage": (_S, [c_void_p, P(StorageInfo), u16]),
    "uscope_reader_storage_field": (_S, [c_void_p, P(FieldInfo), u16, u16, c_int]),
    "uscope_reader_event_type": (_S, [c_void_p, P(EventTypeInfo), u16]),
    "uscope_reader_event_field": (_S, [c_void_p, P(FieldInfo), u16, u16]),
    "uscope_reader_find_storage": (_S, [c_void_p, P(u16), c_char_p]),
    "uscope_reader_find_field": (_S, [c_void_p, P(u16), u16, c_char_p, c_int]),
    "uscope_reader_find_event": (_S, [c_void_p, P(u16), c_char_p]),
    "uscope_reader_string_count": (u32, [c_void_p]),
    "uscope_reader_string": (_S, [c_void_p, P(c_char_p), P(u32), u32]),
    "uscope_reader_summary": (_S, [c_void_p, P(SummaryInfo)]),
    "uscope_reader_state_at": (_S, [c_void_p, P(c_void_p), u64]),
    "uscope_state_free": (None, [c_void_p]),
    "uscope_state_slot_valid": (_S, [c_void_p, P(c_int), u16, u16]),
    "uscope_state_slot_field": (_S, [c_void_p, P(u64), u16, u16, u16]),
    "uscope_state_property": (_S, [c_void_p, P(u64), u16, u16]),
    "uscope_state_occupancy": (_S, [c_void_p, P(u32), u16]),
    "uscope_reader_replay": (_S, [c_void_p, P(c_void_p), u64, u64]),
    "uscope_replay_fill": (_S, [c_void_p, c_void_p, P(u32), u32]),
    "uscope_replay_free": (None, [c_void_p]),
    "uscope_reader_error": (c_char_p, [c_void_p]),
    # analysis
    "uscope_cpu_trace_open": (_S, [P(c_void_p), c_void_p, P(CpuTraceOptions)]),
    "uscope_cpu_trace_close": (None, [c_void_p]),
    "uscope_cpu_trace_info": (_S, [c_void_p, P(CpuTraceInfo)]),
    "uscope_cpu_trace_stage": (_S, [c_void_p, P(c_char_p), u32]),
    "uscope_cpu_trace_counter": (_S, [c_void_p, P(CounterInfo), u32]),
    "uscope_cpu_trace_find_counter": (_S, [c_void_p, P(u32), c_char_p]),
    "uscope_cpu_trace_counter_series": (_S, [c_void_p, c_void_p, u32, u64, u64]),
    "uscope_cpu_trace_instructions": (_S, [c_void_p, P(c_void_p), u64, u64]),
    "uscope_cpu_trace_entity": (_S, [c_void_p, P(c_void_p), u32, u64, u64]),
    "uscope_insn_iter_next": (_S, [c_void_p, P(Insn)]),
    "uscope_insn_iter_free": (None, [c_void_p]),
    "uscope_cpu_trace_analyze": (_S, [c_void_p, P(PerfReport), u64, u64]),
    # convert, export
    "uscope_convert_options_init": (None, [P(ConvertOptions)]),
    "uscope_convert": (_S, [P(ConvertStats), c_char_p, u32, c_char_p, u32, P(ConvertOptions)]),
    "uscope_convert_npu_report": (_S, [P(c_void_p), P(ConvertStats), c_char_p, u32, P(ConvertOptions),
                                       c_int]),
    "uscope_convert_free": (None, [c_void_p]),
    "uscope_export_format_from_name": (u32, [c_char_p]),
    "uscope_export_format_name": (c_char_p, [u32]),
    "uscope_export_options_init": (None, [P(ExportOptions)]),
    "uscope_export": (_S, [P(ExportStats), c_char_p, c_char_p, P(ExportOptions)]),
}


class LibraryNotFoundError(ImportError):
    """libuscope.so was found nowhere: the message lists where it was looked for."""


def _candidates():
    """Where the library is looked for, in order, as (description, path-or-name)."""
    env = os.environ.get(ENV_VAR)
    if env:
        # An explicit choice (a build tree) wins; it must exist.
        yield ("$%s" % ENV_VAR, env)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("libuscope.so") or name == "libuscope.dylib":
            yield ("next to the package", os.path.join(here, name))
    found = ctypes.util.find_library("uscope")
    if found:
        yield ("the system loader (find_library)", found)
    yield ("the system loader", "libuscope.so")


def load():
    tried = []
    for where, path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s: %s (%s)" % (where, path, e))
            continue
        missing = [n for n in _FUNCS if not hasattr(lib, n)]
        if missing:
            tried.append("%s: %s lacks %s (an older libuscope?)" % (where, path, ", ".join(missing[:3])))
            continue
        for name, (res, args) in _FUNCS.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        return lib
    raise LibraryNotFoundError(
        "uscope: cannot load libuscope.so. Install libuscope, put libuscope.so next to the uscope "
        "package, or set %s to its path. Tried:\n  %s" % (ENV_VAR, "\n  ".join(tried)))


lib = load()
