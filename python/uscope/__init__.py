"""uscope: read and write µScope traces from Python, over libuscope's C ABI (ctypes).

    import uscope
    with uscope.Trace("run.uscope") as t:
        print(t.info.num_segments)
        for time_ps, type_id, payload in t.events(0, 1000):
            ...

The library is found through $USCOPE_LIBRARY (a path to libuscope.so), next to
this package, or through the system loader, in that order. docs/python.md is
the guide.
"""
from ._lib import ENV_VAR, LibraryNotFoundError, lib as _clib
from .errors import (AmbiguousError, ArgumentTypeError, BadStateError, CorruptError, DataDroppedError,
                     DuplicateError, Error, FormatError, InternalError, InvalidArgumentError, IoError,
                     LimitError, NoMemoryError, NotATraceError, NotFoundError, PayloadSizeError, SchemaError,
                     TimeBackwardsError, TruncatedError, UnknownIdError, UnsupportedError, ValueRangeError,
                     status_name)
from .tools import convert, export, npu_report
from .trace import CpuAnalysis, Instruction, State, Trace, TraceInfo
from .writer import CLOCK_INHERIT, FIELD_TYPES, NO_PARENT, ROOT_SCOPE, Schema, Writer

__version__ = "0.4.0"


def library_version():
    """The loaded libuscope's version, "MAJOR.MINOR.PATCH"."""
    return _clib.uscope_version_string().decode()


def library_path():
    """The file the library was loaded from."""
    return _clib._name


__all__ = [
    "Trace", "TraceInfo", "State", "CpuAnalysis", "Instruction", "Schema", "Writer", "convert", "export",
    "npu_report", "library_version", "library_path", "status_name", "ENV_VAR", "NO_PARENT", "ROOT_SCOPE",
    "CLOCK_INHERIT", "FIELD_TYPES", "LibraryNotFoundError",
    "Error", "InvalidArgumentError", "ArgumentTypeError", "NoMemoryError", "IoError", "SchemaError",
    "DuplicateError", "LimitError", "BadStateError", "TimeBackwardsError", "UnknownIdError", "PayloadSizeError",
    "ValueRangeError", "DataDroppedError", "InternalError", "UnsupportedError", "FormatError", "CorruptError",
    "TruncatedError", "NotATraceError", "NotFoundError", "AmbiguousError",
]
