"""Writing a trace from Python: a Schema, then a Writer with the per-cycle calls."""
import ctypes
import struct
from ctypes import byref, c_char_p, c_void_p

from . import _args
from ._lib import DutProperty, Field, WriterOptions, WriterStats, lib, u8, u16, u32
from .errors import InvalidArgumentError, ValueRangeError, check, error_for, last_error

NO_PARENT = 0xFFFF      # USCOPE_NO_PARENT: the root scope's parent
ROOT_SCOPE = 0xFFFF     # USCOPE_ROOT_SCOPE: a storage or event at root level
CLOCK_INHERIT = 0xFF    # USCOPE_CLOCK_INHERIT

# Field types (USCOPE_FT_*) by name, with the struct code of their packed bytes.
FIELD_TYPES = {"u8": (0x01, "B"), "u16": (0x02, "H"), "u32": (0x03, "I"), "u64": (0x04, "Q"),
               "i8": (0x05, "b"), "i16": (0x06, "h"), "i32": (0x07, "i"), "i64": (0x08, "q"),
               "bool": (0x09, "B"), "string_ref": (0x0A, "I"), "enum": (0x0B, "B")}
_TYPE_CODES = {code: fmt for code, fmt in FIELD_TYPES.values()}
ROLES = {"plain": 0, "head_ptr": 1, "tail_ptr": 2}


def _fields(fields, what):
    """[(name, type[, enum_id[, role, pair_id]])] -> a ctypes Field array, the names kept alive,
    and the struct format of the packed fields."""
    if isinstance(fields, (str, bytes)) or not hasattr(fields, "__iter__"):
        raise _args.ArgumentTypeError(-1, "%s must be a list of (name, type) tuples" % what)
    fields = list(fields)
    arr = (Field * max(1, len(fields)))()
    names, fmt = [], "<"
    for i, f in enumerate(fields):
        if isinstance(f, str) or not isinstance(f, (tuple, list)) or not 2 <= len(f) <= 5:
            raise _args.ArgumentTypeError(-1, "%s[%d] must be (name, type[, enum_id[, role, pair_id]])"
                                          % (what, i))
        name, ftype = f[0], f[1]
        if isinstance(ftype, str):
            if ftype not in FIELD_TYPES:
                raise InvalidArgumentError(-1, "%s[%d]: unknown field type %r (one of %s)"
                                           % (what, i, ftype, ", ".join(FIELD_TYPES)))
            code = FIELD_TYPES[ftype][0]
        else:
            code = _args.u8(ftype, "%s[%d] type" % (what, i))
        role = f[3] if len(f) > 3 else 0
        if isinstance(role, str):
            if role not in ROLES:
                raise InvalidArgumentError(-1, "%s[%d]: unknown role %r" % (what, i, role))
            role = ROLES[role]
        b = _args.text(name, "%s[%d] name" % (what, i))
        names.append(b)
        arr[i] = Field(b, code, _args.u8(f[2] if len(f) > 2 else 0, "enum_id"), _args.u8(role, "role"),
                       _args.u8(f[4] if len(f) > 4 else 0, "pair_id"))
        fmt += _TYPE_CODES.get(code, "")
    return arr, len(fields), names, fmt


class Schema:
    """A schema under construction (uscope_schema_t). Every add_* returns the new item's id."""

    def __init__(self):
        self._h = None
        h = c_void_p()
        check(lib.uscope_schema_new(byref(h)))
        self._h = h
        self._event_formats = {}
        self._scopes = 0

    @classmethod
    def from_json(cls, text):
        """A schema from the JSON schema format of docs/dpi.md."""
        b = text.encode("utf-8") if isinstance(text, str) else text
        if not isinstance(b, bytes):
            raise _args.ArgumentTypeError(-1, "from_json: text must be a str or bytes")
        self = cls.__new__(cls)
        self._h, self._event_formats, self._scopes = None, {}, 1
        h = c_void_p()
        check(lib.uscope_schema_load_json(byref(h), b, len(b)))
        self._h = h
        return self

    def close(self):
        h, self._h = self._h, None
        if h:
            lib.uscope_schema_free(h)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        return _args.handle(self._h, "Schema")

    def add_clock(self, name, period_ps=0):
        out = u8()
        check(lib.uscope_schema_add_clock(self._handle(), byref(out), _args.text(name, "name"),
                                          _args.u32(period_ps, "period_ps")))
        return out.value

    def add_scope(self, name, parent=None, protocol=None, clock=None):
        """parent None: the root scope's NO_PARENT for the first scope, the root (0) after it."""
        if parent is None:
            parent = NO_PARENT if self._scopes == 0 else 0
        out = u16()
        check(lib.uscope_schema_add_scope(self._handle(), byref(out), _args.text(name, "name"),
                                          _args.u16(parent, "parent"),
                                          _args.text(protocol, "protocol", optional=True),
                                          _args.u8(CLOCK_INHERIT if clock is None else clock, "clock")))
        self._scopes += 1
        return out.value

    def add_enum(self, name, values):
        values = [_args.text(v, "enum value") for v in _args.sequence(values, "values")]
        arr = (c_char_p * max(1, len(values)))(*values)
        out = u8()
        check(lib.uscope_schema_add_enum(self._handle(), byref(out), _args.text(name, "name"), arr,
                                         _args.u16(len(values), "number of values")))
        return out.value

    def add_storage(self, name, fields, num_slots=1, scope=ROOT_SCOPE, sparse=False, buffer=False,
                    properties=()):
        """fields, properties: [(name, type[, enum_id[, role, pair_id]])], type "u8" ... "enum"."""
        f, nf, keep1, _ = _fields(fields, "fields")
        p, np_, keep2, _ = _fields(properties, "properties")
        flags = (1 if sparse else 0) | (2 if buffer else 0)
        out = u16()
        check(lib.uscope_schema_add_storage(self._handle(), byref(out), _args.text(name, "name"),
                                            _args.u16(scope, "scope"), _args.u16(num_slots, "num_slots"), flags,
                                            f, _args.u16(nf, "number of fields"), p if np_ else None,
                                            _args.u16(np_, "number of properties")))
        return out.value

    def add_event(self, name, fields=(), scope=ROOT_SCOPE):
        f, nf, keep, fmt = _fields(fields, "fields")
        out = u16()
        check(lib.uscope_schema_add_event(self._handle(), byref(out), _args.text(name, "name"),
                                          _args.u16(scope, "scope"), f if nf else None,
                                          _args.u16(nf, "number of fields")))
        self._event_formats[out.value] = struct.Struct(fmt)
        return out.value

    def add_dut_property(self, key, value):
        check(lib.uscope_schema_add_dut_property(self._handle(), _args.text(key, "key"),
                                                 _args.text(value, "value")))


_COMPRESSIONS = {"lz4": 0, "zstd": 1, "none": 2}


class Writer:
    """An open trace being written (uscope_writer_t). Use as a context manager: leaving the
    block closes (finalizes) the file. Times are picoseconds, as in the C API.

    Per-cycle errors are sticky, as in C: the first failing call raises, and so does every
    later call and close(), with the same status and message.
    """

    def __init__(self, path, schema, dut=None, compression="lz4", checkpoint_interval_ps=0,
                 strict_values=False, compress_threads=0):
        self._h = None
        if not isinstance(schema, Schema):
            raise _args.ArgumentTypeError(-1, "schema must be a uscope.Schema, not %s" % type(schema).__name__)
        p = _args.path(path)
        if not isinstance(compression, str) or compression not in _COMPRESSIONS:
            raise InvalidArgumentError(-1, "unknown compression %r (lz4, zstd or none)" % (compression,))
        opts = WriterOptions()
        lib.uscope_writer_options_init(byref(opts))
        opts.compression = _COMPRESSIONS[compression]
        opts.checkpoint_interval_ps = _args.u64(checkpoint_interval_ps, "checkpoint_interval_ps")
        opts.value_check = 1 if strict_values else 0
        opts.compress_threads = _args.u32(compress_threads, "compress_threads")
        dut = {} if dut is None else _args.mapping(dut, "dut")
        props = (DutProperty * max(1, len(dut)))()
        keep = []
        for i, (k, v) in enumerate(dut.items()):
            kb, vb = _args.text(k, "dut key"), _args.text(v, "dut value")
            keep += [kb, vb]
            props[i] = DutProperty(kb, vb)
        h = c_void_p()
        check(lib.uscope_writer_open(byref(h), p, schema._handle(), props, len(dut), byref(opts)))
        self._h = h
        self._formats = dict(schema._event_formats)
        self.path = path

    # ── lifetime ──
    def close(self):
        """Finalize the file and free the writer; raises the writer's sticky error, if any."""
        h, self._h = self._h, None
        if h:
            check(lib.uscope_writer_close(h), "close")

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:  # the exception in flight says more than the sticky error it caused
            try:
                self.close()
            except Exception:
                pass

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _handle(self):
        return _args.handle(self._h, "Writer")

    def _check(self, st):
        if st < 0:
            msg = lib.uscope_writer_error(self._h)
            msg = msg.decode("utf-8", "replace") if msg else last_error()
            raise error_for(st, msg)

    # ── per-cycle calls ──
    def begin_cycle(self, time_ps):
        self._check(lib.uscope_begin_cycle(self._handle(), _args.u64(time_ps, "time_ps")))

    def end_cycle(self):
        self._check(lib.uscope_end_cycle(self._handle()))

    def slot_set(self, storage, slot, field, value):
        """Signed fields take negative values (sign-extended, as C's (uint64_t)(int64_t)v)."""
        h = self._handle()
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            value = _args.integer(value, 64, "value", signed=True) & 0xFFFFFFFFFFFFFFFF
        self._check(lib.uscope_slot_set(h, _args.u16(storage, "storage"), _args.u16(slot, "slot"),
                                        _args.u16(field, "field"), _args.u64(value, "value")))

    def slot_clear(self, storage, slot):
        self._check(lib.uscope_slot_clear(self._handle(), _args.u16(storage, "storage"), _args.u16(slot, "slot")))

    def slot_add(self, storage, slot, field, value):
        self._check(lib.uscope_slot_add(self._handle(), _args.u16(storage, "storage"), _args.u16(slot, "slot"),
                                        _args.u16(field, "field"), _args.u64(value, "value")))

    def prop_set(self, storage, prop, value):
        self._check(lib.uscope_prop_set(self._handle(), _args.u16(storage, "storage"), _args.u16(prop, "property"),
                                        _args.u64(value, "value")))

    def event(self, event_type, *values):
        """Record an event: event(type, payload_bytes), or event(type, v0, v1, ...) packed by the
        field types of a Schema built in Python (a JSON schema's events take bytes)."""
        h = self._handle()
        t = _args.u16(event_type, "event type")
        if len(values) == 1 and isinstance(values[0], (bytes, bytearray, memoryview)):
            payload = bytes(values[0])
        elif not values and t not in self._formats:
            payload = b""
        else:
            fmt = self._formats.get(t)
            if fmt is None:
                raise InvalidArgumentError(-1, "event type %d: its field types are unknown here (a schema "
                                           "loaded from JSON, or not an event): pass the payload as bytes" % t)
            if len(values) != len(fmt.format) - 1:  # the format starts with "<"
                raise InvalidArgumentError(-1, "event type %d takes %d values, not %d"
                                           % (t, len(fmt.format) - 1, len(values)))
            try:
                payload = fmt.pack(*values)
            except struct.error as e:
                raise ValueRangeError(-14, "event type %d: %s" % (t, e)) from None
        self._check(lib.uscope_event(h, t, payload, _args.u32(len(payload), "payload size")))

    def flush(self):
        self._check(lib.uscope_writer_flush(self._handle()))

    def string(self, text):
        """Intern a string; its index is the value of a string_ref field."""
        out = u32()
        self._check(lib.uscope_string_insert(self._handle(), byref(out), _args.text(text, "string")))
        return out.value

    def find_storage(self, name):
        out = u16()
        check(lib.uscope_writer_find_storage(self._handle(), byref(out), _args.text(name, "name")))
        return out.value

    def find_event(self, name):
        out = u16()
        check(lib.uscope_writer_find_event(self._handle(), byref(out), _args.text(name, "name")))
        return out.value

    def stats(self):
        """The writer's counters (uscope_writer_stats_t) as a dict."""
        s = WriterStats(struct_size=ctypes.sizeof(WriterStats))
        check(lib.uscope_writer_stats(self._handle(), byref(s)))
        return {name: getattr(s, name) for name, _ in WriterStats._fields_
                if name not in ("struct_size",) and not name.startswith("reserved")}
