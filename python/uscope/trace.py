"""Reading a trace: Trace, its info, states, events, and the cpu analysis."""
import collections
import ctypes
import html
import itertools
import operator
import sys
import weakref
from ctypes import byref, c_char_p, c_int, c_void_p

from . import _args
from ._lib import (CounterInfo, CpuTraceInfo, CpuTraceOptions, EventTypeInfo, FieldInfo, FileInfo, Insn,
                   Item, PerfReport, ScopeInfo, SchemaCounts, StorageInfo, ClockInfo, lib, u16, u32, u64)
from .errors import DONE, BadStateError, PayloadSizeError, UnknownIdError, check

UINT64_MAX = (1 << 64) - 1

try:  # Optional: counters become numpy arrays when it is there.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None

_COMPRESSION = {0: "lz4", 1: "zstd", 2: "none"}
_FIELD_TYPES = {1: "u8", 2: "u16", 3: "u32", 4: "u64", 5: "i8", 6: "i16", 7: "i32", 8: "i64", 9: "bool",
                10: "string_ref", 11: "enum"}

FieldDesc = collections.namedtuple("FieldDesc", "name type size offset enum_id")
StorageDesc = collections.namedtuple("StorageDesc", "id name scope_id num_slots sparse fields properties")
EventTypeDesc = collections.namedtuple("EventTypeDesc", "id name scope_id payload_size fields")
ScopeDesc = collections.namedtuple("ScopeDesc", "id name protocol parent_id clock_id")
ClockDesc = collections.namedtuple("ClockDesc", "id name period_ps")

TraceInfo = collections.namedtuple(
    "TraceInfo",
    "path format_version complete compression num_segments total_time_ps last_time_ps time_grid_ps "
    "checkpoint_interval_ps file_bytes dut clocks scopes storages event_types")
TraceInfo.__doc__ = "What a trace file holds: header facts, DUT properties and the schema."

StageSpan = collections.namedtuple("StageSpan", "stage lane start_cycle end_cycle")
Instruction = collections.namedtuple(
    "Instruction", "entity_id sim_id status pc inst_bits first_cycle last_cycle flush_reason stages disasm "
    "function source_file source_line annotations deps")
_INSN_STATUS = {0: "in_flight", 1: "retired", 2: "flushed"}

# Items taken per uscope_replay_fill call: large enough that the per-call cost
# of ctypes (a few microseconds) is spread over thousands of items, small
# enough (384 KiB) to stay in the caches while Python reads it.
_BATCH = 8192
_ITEM_SIZE = ctypes.sizeof(Item)  # 48, checked by tests/test_abi.py
# The process's address space (every address below 2**63) as one byte view: an
# event's payload is sliced out of it by address (its pointer from the batch)
# without a ctypes call per event, which costs several times as much. Only the
# bytes of payloads the library has just handed out are ever read.
_MEMORY = memoryview((ctypes.c_ubyte * sys.maxsize).from_address(0)).cast("B")


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else None


class _Owned:
    """A C object that must be freed before its owner (states and iterators before their
    reader, C rule): the owner closes what it still holds when it is closed."""

    _free = None

    def __init__(self, owner, handle):
        self._h = handle
        self._owner = owner
        owner._children.add(self)

    def close(self):
        h, self._h = self._h, None
        if h:
            type(self)._free(h)

    def _handle(self):
        if self._owner._h is None:
            self.close()
        return _args.handle(self._h, type(self).__name__)

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Trace:
    """An open µScope trace (uscope_reader_t).

    Use as a context manager, or call close(). Cycles are timestamps divided by
    the trace's time grid (``period_ps``: clock 0's period, see uscope_file_info_t
    .time_grid_ps); a trace without clock periods counts cycles in picoseconds.
    """

    def __init__(self, path, strict=False):
        self._h = None
        self._children = weakref.WeakSet()
        self.path = path
        p = _args.path(path)
        h = c_void_p()
        check(lib.uscope_reader_open_ex(byref(h), p, 1 if strict else 0))
        self._h = h
        self._cpu = None
        self._info = None

    # ── lifetime ──
    def close(self):
        if self._h is None:
            return
        for child in list(self._children):
            child.close()
        h, self._h = self._h, None
        lib.uscope_reader_close(h)

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover
            pass

    def _handle(self):
        return _args.handle(self._h, "Trace")

    # ── info and schema ──
    @property
    def period_ps(self):
        """Picoseconds per cycle (the time grid; 1 when the trace has no clock period)."""
        return self.info.time_grid_ps or 1

    @property
    def info(self):
        """A TraceInfo (read once, at the first use)."""
        h = self._handle()
        if self._info is not None:
            return self._info
        fi = FileInfo(struct_size=ctypes.sizeof(FileInfo))
        check(lib.uscope_reader_info(h, byref(fi)))
        counts = SchemaCounts(struct_size=ctypes.sizeof(SchemaCounts))
        check(lib.uscope_reader_schema_counts(h, byref(counts)))
        dut = {}
        k, v = c_char_p(), c_char_p()
        for i in range(lib.uscope_reader_dut_count(h)):
            check(lib.uscope_reader_dut_property(h, byref(k), byref(v), i))
            dut[_s(k.value)] = _s(v.value)
        clocks = []
        for i in range(counts.clocks):
            c = ClockInfo()
            check(lib.uscope_reader_clock(h, byref(c), i))
            clocks.append(ClockDesc(i, _s(c.name), c.period_ps))
        scopes = []
        for i in range(counts.scopes):
            s = ScopeInfo()
            check(lib.uscope_reader_scope(h, byref(s), i))
            scopes.append(ScopeDesc(i, _s(s.name), _s(s.protocol), s.parent_id, s.clock_id))
        storages = []
        for i in range(counts.storages):
            s = StorageInfo()
            check(lib.uscope_reader_storage(h, byref(s), i))
            fields = tuple(self._field(i, j, 0) for j in range(s.num_fields))
            props = tuple(self._field(i, j, 1) for j in range(s.num_properties))
            storages.append(StorageDesc(i, _s(s.name), s.scope_id, s.num_slots, bool(s.flags & 1), fields,
                                        props))
        events = []
        for i in range(counts.event_types):
            e = EventTypeInfo()
            check(lib.uscope_reader_event_type(h, byref(e), i))
            fields = []
            for j in range(e.num_fields):
                f = FieldInfo()
                check(lib.uscope_reader_event_field(h, byref(f), i, j))
                fields.append(FieldDesc(_s(f.name), _FIELD_TYPES.get(f.type, f.type), f.size, f.offset, f.enum_id))
            events.append(EventTypeDesc(i, _s(e.name), e.scope_id, e.payload_size, tuple(fields)))
        self._info = TraceInfo(
            path=str(self.path), format_version="%d.%d" % (fi.version_major, fi.version_minor),
            complete=bool(fi.complete), compression=_COMPRESSION.get(fi.compression, str(fi.compression)),
            num_segments=fi.num_segments, total_time_ps=fi.total_time_ps, last_time_ps=fi.last_time_ps,
            time_grid_ps=fi.time_grid_ps, checkpoint_interval_ps=fi.checkpoint_interval_ps,
            file_bytes=fi.file_bytes, dut=dut, clocks=tuple(clocks), scopes=tuple(scopes),
            storages=tuple(storages), event_types=tuple(events))
        return self._info

    def _field(self, storage, index, is_property):
        f = FieldInfo()
        check(lib.uscope_reader_storage_field(self._h, byref(f), storage, index, is_property))
        return FieldDesc(_s(f.name), _FIELD_TYPES.get(f.type, f.type), f.size, f.offset, f.enum_id)

    def _repr_html_(self):
        """The info table, for Jupyter."""
        if self._h is None:
            return "<p>uscope.Trace (closed)</p>"
        i = self.info
        rows = [("File", i.path), ("Format", i.format_version), ("Complete", "yes" if i.complete else "no"),
                ("Compression", i.compression), ("Segments", i.num_segments),
                ("Duration", "%d ps (%d cycles)" % (i.last_time_ps, i.last_time_ps // self.period_ps)),
                ("Time grid", "%d ps" % i.time_grid_ps), ("File size", "%d bytes" % i.file_bytes)]
        rows += [("DUT " + k, v) for k, v in i.dut.items()]
        rows += [("Clock " + c.name, "%d ps" % c.period_ps) for c in i.clocks]
        rows += [("Scope " + s.name, s.protocol or "") for s in i.scopes]
        rows += [("Storage " + s.name, "%d slots%s, fields: %s" % (s.num_slots, " (sparse)" if s.sparse else "",
                                                                   ", ".join(f.name for f in s.fields)))
                 for s in i.storages]
        rows += [("Event " + e.name, ", ".join(f.name for f in e.fields)) for e in i.event_types]
        body = "".join("<tr><th style=\"text-align:left\">%s</th><td style=\"text-align:left\">%s</td></tr>"
                       % (html.escape(str(k)), html.escape(str(v))) for k, v in rows)
        return "<table class=\"uscope-trace\">%s</table>" % body

    def __repr__(self):
        if self._h is None:
            return "<uscope.Trace %r (closed)>" % (str(self.path),)
        return "<uscope.Trace %r: %d segments, %d cycles>" % (str(self.path), self.info.num_segments,
                                                              self.info.last_time_ps // self.period_ps)

    # ── look-ups ──
    def storage_id(self, storage):
        """A storage's id from its id or its (qualified) name."""
        h = self._handle()
        if isinstance(storage, str):
            out = u16()
            check(lib.uscope_reader_find_storage(h, byref(out), _args.text(storage, "storage")))
            return out.value
        return _args.u16(storage, "storage")

    def field_index(self, storage, field, is_property=False):
        sid = self.storage_id(storage)
        if isinstance(field, str):
            out = u16()
            check(lib.uscope_reader_find_field(self._h, byref(out), sid, _args.text(field, "field"),
                                               1 if is_property else 0))
            return out.value
        return _args.u16(field, "property" if is_property else "field")

    def event_type_id(self, event):
        h = self._handle()
        if isinstance(event, str):
            out = u16()
            check(lib.uscope_reader_find_event(h, byref(out), _args.text(event, "event")))
            return out.value
        return _args.u16(event, "event type")

    def _time(self, cycle, what):
        c = _args.u64(cycle, what)
        t = c * self.period_ps
        if t > UINT64_MAX:
            raise _args.InvalidArgumentError(-1, "%s = %d cycles is past the last representable time" % (what, c))
        return t

    # ── state ──
    def state_at(self, cycle=None, *, time_ps=None):
        """The state after every frame at or before the cycle (or time_ps): a State."""
        h = self._handle()
        if (cycle is None) == (time_ps is None):
            raise _args.InvalidArgumentError(-1, "state_at: give either a cycle or time_ps")
        t = self._time(cycle, "cycle") if time_ps is None else _args.u64(time_ps, "time_ps")
        out = c_void_p()
        check(lib.uscope_reader_state_at(h, byref(out), t))
        return State(self, out)

    # ── events ──
    def events(self, start=0, end=None, types=None):
        """Iterate the events with start <= cycle <= end (end None: to the end), in file order.

        Each event is a tuple (time_ps, event_type_id, payload) with the payload as bytes
        (see decode()). types: an iterable of event type ids or names to keep (None: all).
        """
        self._handle()
        t0 = self._time(start, "start")
        if end is None:
            t1 = UINT64_MAX
        else:
            t1 = self._time(end, "end")
            t1 = min(UINT64_MAX, t1 + self.period_ps - 1)  # the whole of cycle `end`
        keep = None
        if types is not None:
            if isinstance(types, (str, int)):
                types = [types]
            keep = frozenset(self.event_type_id(t) for t in _args.sequence(types, "types"))
        cur = c_void_p()
        check(lib.uscope_reader_replay(self._h, byref(cur), t0, t1))
        return itertools.chain.from_iterable(_EventBatches(self, cur, keep))

    def decode(self, event):
        """An event tuple's fields as a dict {name: value} (signed fields sign-extended)."""
        try:
            _, type_id, payload = event
        except (TypeError, ValueError):
            raise _args.ArgumentTypeError(-1, "decode: expected an event tuple (time_ps, type_id, payload)") from None
        types = self.info.event_types
        if not isinstance(type_id, int) or not 0 <= type_id < len(types):
            raise UnknownIdError(-12, "decode: event type %r is not in the schema (%d types)" % (type_id, len(types)))
        et = types[type_id]
        if not isinstance(payload, (bytes, bytearray, memoryview)) or len(payload) != et.payload_size:
            raise PayloadSizeError(-13, "decode: a %s event's payload is %d bytes" % (et.name, et.payload_size))
        out = {"event": et.name}
        for f in et.fields:
            v = int.from_bytes(payload[f.offset:f.offset + f.size], "little",
                               signed=f.type in ("i8", "i16", "i32", "i64"))
            out[f.name] = bool(v) if f.type == "bool" else v
        return out

    # ── cpu analysis ──
    def cpu(self, scope=None, elf=None):
        """The cpu protocol analysis of a scope (the first cpu scope by default): a CpuAnalysis.
        The default one is made once and reused."""
        if scope is None and elf is None:
            if self._cpu is None or self._cpu._h is None:
                self._cpu = CpuAnalysis(self, None, None)
            return self._cpu
        return CpuAnalysis(self, scope, elf)

    def analyze(self, start=0, end=None):
        """The cpu performance report of [start, end) in cycles (end None: the trace's end)."""
        return self.cpu().analyze(start, end)

    def timeline(self, start=0, end=None, entity=None):
        """The instructions whose life meets [start, end] (cycles): Instruction tuples."""
        return self.cpu().timeline(start, end, entity)

    def counters(self, names=None, start=0, end=None):
        """Cumulative counter values per cycle from start to end (inclusive) as {name: series}."""
        return self.cpu().counters(names, start, end)


class _EventBatches:
    """Fills batches through one uscope_replay_t cursor and turns each into an iterator of
    event tuples. Python code runs once per batch; per event only C-level iteration
    (memoryview slices, map, zip) runs, which is what makes millions per second."""

    def __init__(self, trace, cursor, keep):
        self._trace = trace
        self._cur = cursor
        self._keep = keep
        trace._children.add(self)
        self._buf = bytearray(_BATCH * _ITEM_SIZE)
        self._addr = ctypes.addressof(ctypes.c_char.from_buffer(self._buf))
        mv = memoryview(self._buf)
        self._q, self._i, self._hw = mv.cast("Q"), mv.cast("I"), mv.cast("H")
        self._count = u32()

    def close(self):
        cur, self._cur = self._cur, None
        if cur:
            lib.uscope_replay_free(cur)

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __iter__(self):
        return self

    def __next__(self):
        if self._trace._h is None:
            self.close()
            raise BadStateError(-6, "events: the Trace was closed during the iteration")
        if not self._cur:
            raise StopIteration
        st = lib.uscope_replay_fill(self._cur, self._addr, byref(self._count), _BATCH)
        if st == DONE:
            self.close()
            raise StopIteration
        if st < 0:
            self.close()
            check(st, "events")
        n = self._count.value
        q, i32 = self._q, self._i
        # uscope_item_t as 8-byte words: [0] time_ps, [1] is_event (low half), [4] event type
        # id (its low 16 bits) and payload_size (high half), [5] the payload pointer.
        times = q[0:6 * n:6].tolist()
        types = self._hw[16:24 * n:24].tolist()
        ptrs = q[5:6 * n:6].tolist()
        sizes = i32[9:12 * n:12].tolist()
        flags = i32[2:12 * n:12]
        if 0 in flags:  # ops among the items: keep the events' columns only
            flags = flags.tolist()
            times, types, ptrs, sizes = (list(itertools.compress(c, flags)) for c in (times, types, ptrs, sizes))
        payloads = map(bytes, map(_MEMORY.__getitem__, map(slice, ptrs, map(operator.add, ptrs, sizes))))
        events = zip(times, types, payloads)
        if self._keep is not None:
            keep = self._keep
            events = (e for e in events if e[1] in keep)
        # Built now, not lazily: the payload pointers are valid only until the next call on
        # the reader, and the caller may make one (state_at, ...) in the middle of a batch.
        return list(events)


class State(_Owned):
    """The state of every storage at one time (uscope_state_t). Storages and fields may be
    given by id or by name."""

    _free = staticmethod(lib.uscope_state_free)

    def __init__(self, trace, handle):
        super().__init__(trace, handle)
        self.trace = trace

    def slot_valid(self, storage, slot):
        h = self._handle()
        out = c_int()
        check(lib.uscope_state_slot_valid(h, byref(out), self.trace.storage_id(storage), _args.u16(slot, "slot")))
        return bool(out.value)

    def field(self, storage, slot, field):
        """A field's value (stored bytes, zero-extended)."""
        h = self._handle()
        sid = self.trace.storage_id(storage)
        out = u64()
        check(lib.uscope_state_slot_field(h, byref(out), sid, _args.u16(slot, "slot"),
                                          self.trace.field_index(sid, field)))
        return out.value

    def property(self, storage, prop):
        h = self._handle()
        sid = self.trace.storage_id(storage)
        out = u64()
        check(lib.uscope_state_property(h, byref(out), sid, self.trace.field_index(sid, prop, True)))
        return out.value

    def occupancy(self, storage):
        h = self._handle()
        out = u32()
        check(lib.uscope_state_occupancy(h, byref(out), self.trace.storage_id(storage)))
        return out.value

    def slots(self, storage):
        """The valid slots of a storage as {slot: {field: value}}."""
        sid = self.trace.storage_id(storage)
        desc = self.trace.info.storages[sid]
        return {s: {f.name: self.field(sid, s, j) for j, f in enumerate(desc.fields)}
                for s in range(desc.num_slots) if self.slot_valid(sid, s)}


class CpuAnalysis(_Owned):
    """uscope_cpu_trace_t over a Trace: analyze, timeline, counters."""

    _free = staticmethod(lib.uscope_cpu_trace_close)

    def __init__(self, trace, scope, elf):
        opts = CpuTraceOptions(struct_size=ctypes.sizeof(CpuTraceOptions),
                               scope=_args.text(scope, "scope", optional=True),
                               elf_path=_args.path(elf, "elf", optional=True))
        out = c_void_p()
        check(lib.uscope_cpu_trace_open(byref(out), trace._handle(), byref(opts)))
        self._children = weakref.WeakSet()
        super().__init__(trace, out)
        self.trace = trace
        info = CpuTraceInfo(struct_size=ctypes.sizeof(CpuTraceInfo))
        check(lib.uscope_cpu_trace_info(out, byref(info)))
        self.max_cycle = info.max_cycle
        self.period_ps = info.period_ps
        self.scope = _s(info.scope_name)
        self.isa = _s(info.isa)
        name = c_char_p()
        self.stages = []
        for i in range(info.num_stages):
            check(lib.uscope_cpu_trace_stage(out, byref(name), i))
            self.stages.append(_s(name.value))
        self.counter_names = []
        for i in range(info.num_counters):
            c = CounterInfo()
            check(lib.uscope_cpu_trace_counter(out, byref(c), i))
            self.counter_names.append(_s(c.name))

    def close(self):
        for child in list(self._children):
            child.close()
        super().close()

    def _end(self, end, default):
        return default if end is None else _args.u64(end, "end")

    def analyze(self, start=0, end=None):
        h = self._handle()
        start = _args.u64(start, "start")
        end = self._end(end, self.max_cycle + 1)
        r = PerfReport(struct_size=ctypes.sizeof(PerfReport))
        check(lib.uscope_cpu_trace_analyze(h, byref(r), start, end))
        stage = lambda k: self.stages[k] if k < len(self.stages) else str(k)  # noqa: E731
        return {
            "start_cycle": r.start_cycle, "end_cycle": r.end_cycle, "range_cycles": r.range_cycles,
            "total": r.total, "retired": r.retired, "flushed": r.flushed, "in_flight": r.in_flight,
            "flush_rate": r.flush_rate, "ipc": r.ipc, "retired_in_range": r.retired_in_range,
            "commit_ipc": r.commit_ipc,
            "counters": [{"name": self.counter_names[c.counter], "start_value": c.start_value,
                          "end_value": c.end_value, "delta": c.delta, "rate_per_cycle": c.rate_per_cycle}
                         for c in r.counters[:r.num_counters]],
            "stages": [{"stage": stage(s.stage), "total_cycles": s.total_cycles, "count": s.count,
                        "avg_latency": s.avg_latency} for s in r.stages[:r.num_stages]],
            "stalls": [{"reason": _s(s.name), "count": s.count} for s in r.stalls[:r.num_stalls]],
            "buffers": [{"buffer": b.buffer, "capacity": b.capacity, "cycle": list(b.cycle),
                         "occupied": list(b.occupied), "fill_percent": list(b.fill_percent)}
                        for b in r.buffers[:r.num_buffers]],
        }

    def timeline(self, start=0, end=None, entity=None):
        h = self._handle()
        start = _args.u64(start, "start")
        end = self._end(end, UINT64_MAX)
        out = c_void_p()
        if entity is None:
            check(lib.uscope_cpu_trace_instructions(h, byref(out), start, end))
        else:
            check(lib.uscope_cpu_trace_entity(h, byref(out), _args.u32(entity, "entity"), start, end))
        return _InsnIter(self, out)

    def counters(self, names=None, start=0, end=None):
        h = self._handle()
        start = _args.u64(start, "start")
        # Past the trace's last cycle a series only repeats its last value (the C call's clamp):
        # the range is cut there, so that a far end does not allocate a huge array.
        end = min(self._end(end, self.max_cycle), self.max_cycle)
        if end < start:
            raise _args.InvalidArgumentError(-1, "counters: the range %d .. %d is empty (the trace ends at "
                                             "cycle %d)" % (start, end, self.max_cycle))
        if isinstance(names, str):
            names = [names]
        names = list(self.counter_names) if names is None else _args.sequence(names, "names")
        n = end - start + 1
        out = {}
        for name in names:
            k = u32()
            check(lib.uscope_cpu_trace_find_counter(h, byref(k), _args.text(name, "counter")))
            if _np is not None:
                arr = _np.empty(n, dtype=_np.uint64)
                check(lib.uscope_cpu_trace_counter_series(h, arr.ctypes.data, k.value, start, n))
            else:
                buf = (u64 * n)()
                check(lib.uscope_cpu_trace_counter_series(h, buf, k.value, start, n))
                arr = list(buf)
            out[name] = arr
        return out


class _InsnIter(_Owned):
    _free = staticmethod(lib.uscope_insn_iter_free)

    def __init__(self, cpu, handle):
        super().__init__(cpu, handle)
        self._cpu = cpu
        self._insn = Insn()

    def __iter__(self):
        return self

    def __next__(self):
        if self._h is None and self._owner._h is not None:
            raise StopIteration
        h = self._handle()
        i = self._insn
        st = check(lib.uscope_insn_iter_next(h, byref(i)))
        if st == DONE:
            self.close()
            raise StopIteration
        stages = self._cpu.stages
        spans = tuple(StageSpan(stages[s.stage] if s.stage < len(stages) else str(s.stage), s.lane,
                                s.start_cycle, s.end_cycle) for s in i.stages[:i.num_stages])
        return Instruction(i.entity_id, i.sim_id, _INSN_STATUS.get(i.status, str(i.status)), i.pc,
                           i.inst_bits if i.has_inst_bits else None, i.first_cycle, i.last_cycle,
                           i.flush_reason, spans, _s(i.disasm), _s(i.function), _s(i.source_file),
                           i.source_line, _s(i.annotations), tuple(i.dep_src[:i.num_deps]))
