"""Weight regularizers (Keras): ``L1``, ``L2``, ``L1L2``, ``OrthogonalRegularizer``; a regularizer
maps a weight to a scalar penalty (``l2 * sum(w**2)``, no 1/2, as Keras)."""
from __future__ import annotations

import numpy as np

from ..ops import math_ops as M
from ..core.primitive import aval_of
from ._config import Configurable, lookup

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "get", "serialize", "deserialize"]


class Regularizer(Configurable):
    def __call__(self, x):
        return 0.0


def _factor(cls, name, value):
    """A penalty factor, checked (as Keras 3): a negative one rewards large weights."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = None
    if v is None or not v >= 0:  # (NaN fails too)
        raise ValueError(f"{cls}: {name} must be a non-negative float, got {value!r}")
    return v


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(type(self).__name__, "l1", l1)
        self.l2 = _factor(type(self).__name__, "l2", l2)

    def __call__(self, x):
        # Keras 3 casts the factors to x's dtype: an integer activation (ActivityRegularization on int
        # inputs) gets an integer penalty (l1=0.1 becomes 0), where a Python float would not combine
        dt = aval_of(x).dtype
        r = None
        if self.l1:
            r = M.multiply(M.reduce_sum(M.abs(x)), M.cast(self.l1, dt))
        if self.l2:
            t = M.multiply(M.reduce_sum(M.square(x)), M.cast(self.l2, dt))
            r = t if r is None else M.add(r, t)
        if r is None:
            r = M.multiply(M.reduce_sum(x), M.cast(0, dt))
        return r

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


l1 = L1
l2 = L2


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811
    return L1L2(l1=l1, l2=l2)


class OrthogonalRegularizer(Regularizer):
    """Keras 3's penalty on non-orthogonal rows (``mode="rows"``) or columns of a rank-2 weight:
    ``factor * 0.5 * sum(|P - diag(P)|) / (n (n - 1) / 2)``, P the Gram matrix of the L2-normalized
    rows/columns (Keras' ``normalize``: a zero row stays zero), n their number."""

    def __init__(self, factor=0.01, mode="rows"):
        # Keras' check: a Python float or int, finite and >= 0 (a string "0.1" is refused)
        if isinstance(factor, bool) or not isinstance(factor, (float, int)) or not factor >= 0 \
                or factor == float("inf"):
            raise ValueError("Invalid value for argument factor: expected a non-negative float."
                             f"Received: factor={factor}")
        if mode not in {"rows", "columns"}:
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", "columns"}. '
                             f"Received: mode={mode}")
        # Keras keeps the factor as a tensor of it: float32 for a float, int32 for an int (whose
        # product with 0.5 then fails, as Keras' does: TypeError)
        self.factor = factor
        self.mode = mode

    def __call__(self, x):
        from ..core.tensor import convert_to_tensor
        from ..ops import array_ops as A
        from .backend import epsilon, unit_normalize
        x = convert_to_tensor(x)
        shape = aval_of(x).shape
        if len(shape) != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape="
                             f"{tuple(shape)}")
        factor = convert_to_tensor(self.factor)
        if factor.aval.dtype.kind != "f":
            raise TypeError(f"Cannot convert 0.5 to EagerTensor of dtype {factor.aval.dtype.name}")
        rows = self.mode == "rows"
        v = unit_normalize(x, 1 if rows else 0, 1.0 / epsilon())
        product = M.matmul(v, v, transpose_b=True) if rows else M.matmul(v, v, transpose_a=True)
        size = shape[0] if rows else shape[1]
        dt = aval_of(x).dtype
        off_diagonal = M.multiply(product, M.subtract(M.cast(1.0, dt), A.eye(size, dtype=dt)))
        num_pairs = size * (size - 1.0) / 2.0
        # Keras' order: factor * 0.5 * sum / pairs; a float32 factor with float64 weights is TF's
        # InvalidArgumentError, as Keras' (its factor tensor is float32)
        return M.divide(M.multiply(M.multiply(factor, 0.5), M.reduce_sum(M.abs(off_diagonal))), num_pairs)

    def get_config(self):
        return {"factor": float(np.float32(self.factor)), "mode": self.mode}


orthogonal_regularizer = OrthogonalRegularizer

_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2, "orthogonalregularizer": OrthogonalRegularizer,
            "orthogonal_regularizer": OrthogonalRegularizer}


get, serialize, deserialize = lookup("regularizer", Regularizer, _BY_NAME)
