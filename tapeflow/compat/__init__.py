"""``tf.compat``: TF 2.21's version-compatibility helpers, and its ``v1``/``v2`` namespaces.

A TF2 program meets ``tf.compat`` on its first lines (``tf.compat.v1.logging.set_verbosity``,
``tf.compat.as_bytes``, the GPU memory-growth idiom of a ``ConfigProto`` and a ``Session`` that is
never run), so refusing the whole namespace stopped programs that use nothing of TF1. ``v2`` is
tapeflow itself; ``v1`` (``compat/v1.py``) holds the TF1 names a TF2 eager program can use and
refuses the rest (graphs, sessions that run, placeholders, v1 op signatures) by name.
"""
from __future__ import annotations

import datetime as _datetime
import numbers as _numbers
import os as _os
import sys as _sys

import numpy as _np

integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)
bytes_or_text_types = (bytes, str)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """bytes as they are, text encoded (TF's TypeError for anything else)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """text as it is, bytes decoded (TF's TypeError for anything else)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """``as_str`` of bytes, ``str()`` of anything else."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object's text; anything else as it is."""
    return _os.fspath(path) if isinstance(path, _os.PathLike) else path


class Dimension:
    """TF1's Dimension, what ``dimension_at_index`` returns: ``value`` is the size or None."""

    def __init__(self, value):
        self.value = None if value is None else int(value)

    def __repr__(self):
        return f"Dimension({self.value})"

    def __str__(self):
        return "?" if self.value is None else str(self.value)

    def __int__(self):
        return self.value

    __index__ = __int__

    def __eq__(self, other):
        other = getattr(other, "value", other)
        return None if self.value is None or other is None else self.value == other

    def __hash__(self):
        return hash(self.value)


def dimension_value(dimension):
    """A dimension's size: an int or None (a Dimension's value)."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index):
    """``shape``'s dim ``index`` as a Dimension (of None when the rank is unknown)."""
    if getattr(shape, "rank", len(shape)) is None:
        return Dimension(None)
    return Dimension(list(shape)[index])


# TF 2.21's forward-compatibility horizon (tensorflow/python/compat/compat.py), moved by
# TF_FORWARD_COMPATIBILITY_DELTA_DAYS as TF does
_HORIZON = _datetime.date(2026, 1, 16)


def _date_number(year, month, day):
    return (year << 9) | (month << 5) | day


def _horizon_number(date):
    delta = _os.environ.get("TF_FORWARD_COMPATIBILITY_DELTA_DAYS")
    if delta:
        date = date + _datetime.timedelta(days=int(delta))
    return _date_number(date.year, date.month, date.day)


_HORIZON_NUMBER = [_horizon_number(_HORIZON)]


def forward_compatible(year, month, day):
    """Whether the forward-compatibility horizon is past the given date."""
    return _HORIZON_NUMBER[0] > _date_number(year, month, day)


class forward_compatibility_horizon:  # noqa: N801 (TF's name: a context manager)
    """Moves the horizon to the given date for the ``with`` block."""

    def __init__(self, year, month, day):
        self._number = _horizon_number(_datetime.date(year, month, day))

    def __enter__(self):
        self._saved = _HORIZON_NUMBER[0]
        _HORIZON_NUMBER[0] = self._number

    def __exit__(self, *exc):
        _HORIZON_NUMBER[0] = self._saved
        return False


v2 = _sys.modules[__name__.rsplit(".", 1)[0]]
from . import v1  # noqa: E402,F401
