"""convert and export: whole-file operations of <uscope/convert.h> and <uscope/export.h>."""
import ctypes
from ctypes import byref, c_void_p

from . import _args
from ._lib import ConvertOptions, ConvertStats, ExportOptions, ExportStats, IssueFn, lib
from .errors import InvalidArgumentError, check

_FORMATS = {None: 0, "auto": 0, "jsonl": 1, "uscope": 2, "pccx": 3}
_TIME_UNITS = {None: 0, "auto": 0, "cycle": 1, "ps": 2, "ns": 3}
_CHROME_STYLES = {None: 0, "auto": 0, "uscope": 1, "pccx-lab": 2}


def _choice(table, value, what):
    if not isinstance(value, (str, type(None))):
        raise _args.ArgumentTypeError(-1, "%s must be a str" % what)
    if value not in table:
        raise InvalidArgumentError(-1, "unknown %s %r (one of %s)" % (what, value,
                                                                      ", ".join(k for k in table if k)))
    return table[value]


def _issue_callback(on_issue):
    """A C callback for on_issue(line, reason), or NULL. Exceptions raised by on_issue cannot
    cross the C library; they are kept and raised after the call returns."""
    if on_issue is None:
        return IssueFn(), None
    if not callable(on_issue):
        raise _args.ArgumentTypeError(-1, "on_issue must be callable")
    errors = []

    def cb(_user, line, reason):
        if errors:
            return
        try:
            on_issue(line, reason.decode("utf-8", "replace") if reason else "")
        except BaseException as e:  # noqa: B902 - re-raised after the C call
            errors.append(e)
    return IssueFn(cb), errors


def _stats_dict(s):
    return {n: getattr(s, n) for n, _ in type(s)._fields_ if n != "struct_size" and not n.startswith("reserved")}


def convert(src, dst, src_format=None, dst_format=None, strict=False, period_ps=0, on_issue=None):
    """Convert between NPU JSON-Lines, µScope and .pccx (formats by file name unless given:
    "jsonl", "uscope", "pccx"). Returns the conversion's counts as a dict.
    on_issue(line, reason) is called for each event the output cannot place."""
    opts = ConvertOptions()
    lib.uscope_convert_options_init(byref(opts))
    opts.strict = 1 if strict else 0
    opts.period_ps = _args.u64(period_ps, "period_ps")
    cb, errors = _issue_callback(on_issue)
    opts.on_issue = cb
    stats = ConvertStats(struct_size=ctypes.sizeof(ConvertStats))
    st = lib.uscope_convert(byref(stats), _args.path(src, "src"), _choice(_FORMATS, src_format, "src_format"),
                            _args.path(dst, "dst"), _choice(_FORMATS, dst_format, "dst_format"), byref(opts))
    if errors:
        raise errors[0]
    check(st)
    return _stats_dict(stats)


def npu_report(path, json=False, period_ps=0):
    """The npu report of a .jsonl(.gz), .uscope or .pccx file, as text (json=True: its JSON)."""
    opts = ConvertOptions()
    lib.uscope_convert_options_init(byref(opts))
    opts.period_ps = _args.u64(period_ps, "period_ps")
    out = c_void_p()
    stats = ConvertStats(struct_size=ctypes.sizeof(ConvertStats))
    check(lib.uscope_convert_npu_report(byref(out), byref(stats), _args.path(path), 0, byref(opts),
                                        1 if json else 0))
    try:
        return ctypes.string_at(out.value).decode("utf-8", "replace")
    finally:
        lib.uscope_convert_free(out)


def export(src, dst, format, start=0, end=None, time_unit=None, scope=None, elf=None, chrome_style=None,
           on_issue=None):
    """Export a trace to another tool's format: "konata", "perfetto", "chrome-json", "nytprof",
    "hpctoolkit", "fst", "vcd". start/end: the window of cycles (both included; end None: to
    the end). Returns the export's counts as a dict."""
    code = lib.uscope_export_format_from_name(_args.text(format, "format"))
    if code == 0:
        raise InvalidArgumentError(-1, "unknown export format %r (konata, perfetto, chrome-json, nytprof, "
                                   "hpctoolkit, fst, vcd)" % (format,))
    opts = ExportOptions()
    lib.uscope_export_options_init(byref(opts))
    opts.format = code
    opts.range_start = _args.u64(start, "start")
    opts.range_end = (1 << 64) - 1 if end is None else _args.u64(end, "end")
    opts.time_unit = _choice(_TIME_UNITS, time_unit, "time_unit")
    opts.chrome_style = _choice(_CHROME_STYLES, chrome_style, "chrome_style")
    opts.scope = _args.text(scope, "scope", optional=True)
    opts.elf_path = _args.path(elf, "elf", optional=True)
    cb, errors = _issue_callback(on_issue)
    opts.on_issue = cb
    stats = ExportStats(struct_size=ctypes.sizeof(ExportStats))
    st = lib.uscope_export(byref(stats), _args.path(src, "src"), _args.path(dst, "dst"), byref(opts))
    if errors:
        raise errors[0]
    check(st)
    return _stats_dict(stats)
