"""uscope.Error and its subclasses: one per family of USCOPE_ERR_* status.

Every failing C call raises the subclass of its status, carrying the status
(the pinned negative code) and the library's message (uscope_last_error(),
or the handle's). Misuse caught on the Python side before any C call (a
wrong type, a value that does not fit the C parameter, a closed handle) raises
the same classes with the status the library would have given, so a caller
catches uscope.Error and never sees a crash or a silently truncated value.
The classes also derive from the matching built-in exception (ValueError,
LookupError, OSError, ...) so that generic handlers keep working.
"""

from ._lib import lib

OK = 0
DONE = 1


class Error(Exception):
    """A libuscope failure: .status (USCOPE_ERR_*, negative), .message, .status_name."""

    def __init__(self, status, message):
        self.status = int(status)
        self.message = message
        self.status_name = status_name(status)
        super().__init__(status, message)

    def __str__(self):
        return "%s (%d): %s" % (self.status_name, self.status, self.message)


class InvalidArgumentError(Error, ValueError):
    """USCOPE_ERR_INVALID_ARGUMENT (-1), and a Python value a C parameter cannot hold."""


class ArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong Python type (status -1)."""


class NoMemoryError(Error, MemoryError):
    """USCOPE_ERR_NO_MEMORY (-2)."""


class IoError(Error, OSError):
    """USCOPE_ERR_IO (-3): a file could not be opened, read or written."""

    def __str__(self):  # OSError's would format the args as (errno, strerror)
        return Error.__str__(self)


class SchemaError(Error, ValueError):
    """USCOPE_ERR_SCHEMA (-4)."""


class DuplicateError(SchemaError):
    """USCOPE_ERR_DUPLICATE (-27): a name already used in its scope."""


class LimitError(Error, ValueError):
    """USCOPE_ERR_LIMIT (-5)."""


class BadStateError(Error, RuntimeError):
    """USCOPE_ERR_BAD_STATE (-6): a call out of order, or on a closed handle."""


class TimeBackwardsError(Error, ValueError):
    """USCOPE_ERR_TIME_BACKWARDS (-7)."""


class UnknownIdError(Error, LookupError):
    """An id not in the schema: UNKNOWN_STORAGE, _SLOT, _FIELD, _PROPERTY, _EVENT (-8 .. -12)."""


class PayloadSizeError(Error, ValueError):
    """USCOPE_ERR_PAYLOAD_SIZE (-13)."""


class ValueRangeError(Error, ValueError):
    """USCOPE_ERR_VALUE_RANGE (-14)."""


class DataDroppedError(Error):
    """USCOPE_ERR_DATA_DROPPED (-15)."""


class InternalError(Error):
    """USCOPE_ERR_INTERNAL (-16): a bug in libuscope."""


class UnsupportedError(Error):
    """USCOPE_ERR_UNSUPPORTED (-17)."""


class FormatError(Error, ValueError):
    """The file's contents: CORRUPT, TRUNCATED, UNSUPPORTED_VERSION, CHECKSUM, ... (-18 .. -29)."""


class CorruptError(FormatError):
    """USCOPE_ERR_CORRUPT (-18)."""


class TruncatedError(FormatError):
    """USCOPE_ERR_TRUNCATED (-19)."""


class NotATraceError(FormatError):
    """USCOPE_ERR_BAD_MAGIC (-20): the file is not a µScope trace (the message says what it is)."""


class NotFoundError(Error, LookupError):
    """USCOPE_ERR_NOT_FOUND (-23): no item of that name."""


class AmbiguousError(Error, LookupError):
    """USCOPE_ERR_AMBIGUOUS (-28): several items have that name; qualify it or use an id."""


_BY_STATUS = {
    -1: InvalidArgumentError, -2: NoMemoryError, -3: IoError, -4: SchemaError, -5: LimitError,
    -6: BadStateError, -7: TimeBackwardsError, -8: UnknownIdError, -9: UnknownIdError,
    -10: UnknownIdError, -11: UnknownIdError, -12: UnknownIdError, -13: PayloadSizeError,
    -14: ValueRangeError, -15: DataDroppedError, -16: InternalError, -17: UnsupportedError,
    -18: CorruptError, -19: TruncatedError, -20: NotATraceError, -23: NotFoundError,
    -27: DuplicateError, -28: AmbiguousError,
}


def status_name(status):
    """The library's description of a status code ("invalid argument", ...)."""
    return lib.uscope_status_str(int(status)).decode("utf-8", "replace")


def error_for(status, message):
    """The Error subclass instance for a status (FormatError for the other reader codes)."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = FormatError if -63 <= status <= -18 else Error
    return cls(status, message)


def last_error():
    return lib.uscope_last_error().decode("utf-8", "replace")


def check(status, what=None):
    """Raise the Error of a failed call (status < 0); return status (OK or DONE) otherwise."""
    if status >= 0:
        return status
    msg = last_error() or status_name(status)
    if what and what not in msg:
        msg = "%s: %s" % (what, msg)
    raise error_for(status, msg)
