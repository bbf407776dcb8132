"""Abstract values: what the tracer and the shape/dtype rules know of a tensor."""
from __future__ import annotations

import numpy as np


class Aval:
    """Shape (a tuple; ``None`` for an unknown dimension; the shape itself ``None`` only for a
    py_function output whose Tout gives no shape, which no op accepts), NumPy dtype, and
    ``weak`` (True for a Python scalar, whose dtype adapts to its peers)."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=False):
        self.shape = None if shape is None else tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak = weak

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __eq__(self, other):
        return (isinstance(other, Aval) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak == other.weak)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak))

    def str_short(self):
        if self.shape is None:  # unknown rank: a py_function output with a bare-dtype Tout
            return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[*]"
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{dims}]"

    def __repr__(self):
        return f"Aval({self.str_short()}{', weak' if self.weak else ''})"


_SHORT = {"float32": "f32", "float64": "f64", "float16": "f16", "int32": "i32",
          "int64": "i64", "int8": "i8", "int16": "i16", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool", "object": "string",
          "complex64": "c64", "complex128": "c128"}


def shapes_compatible(a, b):
    """Whether shapes ``a`` and ``b`` (tuples, ``None`` for an unknown dimension) can be the
    same: equal ranks, and equal sizes wherever both are known. The one rule for every
    shape check that allows unknown dimensions (TensorShape.is_compatible_with included)."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def fmt_shape(shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
