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
import operator as _operator
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
    """TF1's Dimension (TF 2.21's ``tf.compat.v1.Dimension``, what ``dimension_at_index`` and
    ``TensorShape.dims`` return): ``value`` is the size, or None for an unknown one. Unknown
    propagates: arithmetic with an unknown dimension is unknown, and a comparison involving one is
    None (neither True nor False), as in TF. Unhashable, as TF's (``__eq__`` is not an identity)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
            return
        if isinstance(value, (float, _np.floating)) or not hasattr(value, "__index__"):
            # TF 2.21's TypeError (a float 3.0 too: a size is an integer)
            raise TypeError(f"Dimension value must be integer or None or have an __index__ method, got value "
                            f"'{value!r}' with type '{type(value)}'")
        value = value.__index__()
        if value < 0:
            raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        return self._value   # (None: Python's TypeError "__int__ returned non-int", as TF's)

    __index__ = __int__

    def __bool__(self):
        return bool(self._value)

    __hash__ = None

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {as_dimension(other)} are not compatible")

    def merge_with(self, other):
        """The dimension both describe (a known one from either); ValueError if they differ."""
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(other.value if self._value is None else self._value)

    # comparisons: None when either side is unknown (TF's three-valued logic)
    def _cmp(self, other, op):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return op(self._value, other.value)

    def __eq__(self, other): return self._cmp(other, _operator.eq)
    def __ne__(self, other): return self._cmp(other, _operator.ne)
    def __lt__(self, other): return self._cmp(other, _operator.lt)
    def __le__(self, other): return self._cmp(other, _operator.le)
    def __gt__(self, other): return self._cmp(other, _operator.gt)
    def __ge__(self, other): return self._cmp(other, _operator.ge)

    # arithmetic: a Dimension, unknown if either side is; ``/`` is refused as TF refuses it
    def _arith(self, other, op, reflected=False):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return Dimension(None)
        a, b = (other.value, self._value) if reflected else (self._value, other.value)
        return Dimension(op(a, b))

    def __add__(self, other): return self._arith(other, _operator.add)
    def __radd__(self, other): return self._arith(other, _operator.add, True)
    def __sub__(self, other): return self._arith(other, _operator.sub)
    def __rsub__(self, other): return self._arith(other, _operator.sub, True)
    def __mul__(self, other): return self._arith(other, _operator.mul)
    def __rmul__(self, other): return self._arith(other, _operator.mul, True)
    def __floordiv__(self, other): return self._arith(other, _operator.floordiv)
    def __rfloordiv__(self, other): return self._arith(other, _operator.floordiv, True)
    def __mod__(self, other): return self._arith(other, _operator.mod)
    def __rmod__(self, other): return self._arith(other, _operator.mod, True)

    def __truediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: 'Dimension' and '{type(other).__name__}', please use "
                        "// instead")

    def __rtruediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and 'Dimension', please use "
                        "// instead")

    def __reduce__(self):
        return Dimension, (self._value,)


def as_dimension(value):
    """``value`` as a Dimension (a Dimension as it is)."""
    return value if isinstance(value, Dimension) else Dimension(value)


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
