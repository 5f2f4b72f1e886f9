"""Argument checks done before a C call.

ctypes converts a Python int to a C integer by masking it (70000 becomes
4464 as a uint16_t, -1 becomes 2**64 - 1), and passes a str with a NUL
inside cut short. Either would reach the library as a different, valid-
looking value, so every argument is checked here first and refused with the
status the library uses for a bad argument.
"""
import operator
import os

from .errors import ArgumentTypeError, BadStateError, InvalidArgumentError


def integer(value, bits, what, signed=False):
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise ArgumentTypeError(-1, "%s must be an integer, not %s" % (what, type(value).__name__))
    v = operator.index(value)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise InvalidArgumentError(-1, "%s = %d is out of range (%d .. %d)" % (what, v, lo, hi))
    return v


def u8(v, what):
    return integer(v, 8, what)


def u16(v, what):
    return integer(v, 16, what)


def u32(v, what):
    return integer(v, 32, what)


def u64(v, what):
    return integer(v, 64, what)


def text(value, what, optional=False):
    """A str (or bytes) as NUL-terminated UTF-8; None when optional."""
    if value is None and optional:
        return None
    if isinstance(value, str):
        b = value.encode("utf-8")
    elif isinstance(value, bytes):
        b = value
    else:
        raise ArgumentTypeError(-1, "%s must be a str, not %s" % (what, type(value).__name__))
    if b"\0" in b:
        raise InvalidArgumentError(-1, "%s contains a NUL character" % what)
    return b


def path(value, what="path", optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(-1, "%s must be a str or os.PathLike, not %s" % (what, type(value).__name__))
    b = os.fsencode(value)
    if b"\0" in b:
        raise InvalidArgumentError(-1, "%s contains a NUL character" % what)
    if not b:
        raise InvalidArgumentError(-1, "%s is empty" % what)
    return b


def sequence(value, what):
    """A list from an iterable that is not a string."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(-1, "%s must be a list, not %s" % (what, type(value).__name__))
    return list(value)


def mapping(value, what):
    if not hasattr(value, "items"):
        raise ArgumentTypeError(-1, "%s must be a dict, not %s" % (what, type(value).__name__))
    return dict(value)


def handle(h, what):
    if not h:
        raise BadStateError(-6, "%s is closed" % what)
    return h
