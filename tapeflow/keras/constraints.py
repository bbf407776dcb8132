"""Weight constraints (Keras 3): callables applied to a weight right after each optimizer
update (the optimizer calls them; see ``optimizers/base.py _constrain``). ``MaxNorm``,
``MinMaxNorm``, ``UnitNorm`` rescale norms taken over ``axis`` (epsilon 1e-7 below the
division, as Keras); ``NonNeg`` zeroes negative entries."""
from __future__ import annotations

from ..core.tensor import Tensor, convert_to_tensor
from ..ops import math_ops as M
from ._config import Configurable, lookup

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm", "min_max_norm", "non_neg",
           "unit_norm", "get", "serialize", "deserialize"]

_EPSILON = 1e-7   # Keras' backend.epsilon()


def _tensor(w):
    return w if isinstance(w, Tensor) else convert_to_tensor(w)


def _norms(w, axis):
    return M.sqrt(M.reduce_sum(M.square(w), axis=axis, keepdims=True))


class Constraint(Configurable):
    def __call__(self, w):
        return w


class MaxNorm(Constraint):
    """Rescales each weight vector along ``axis`` to a norm of at most ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = _tensor(w)
        norms = _norms(w, self.axis)
        return w * (M.clip_by_value(norms, 0.0, float(self.max_value)) / (_EPSILON + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each norm a ``rate`` of the way into [min_value, max_value]."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = _tensor(w)
        norms = _norms(w, self.axis)
        desired = self.rate * M.clip_by_value(norms, float(self.min_value), float(self.max_value)) + \
            (1 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class NonNeg(Constraint):
    """``max(w, 0)``."""

    def __call__(self, w):
        return M.maximum(_tensor(w), 0.0)


class UnitNorm(Constraint):
    """Rescales each weight vector along ``axis`` to unit norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = _tensor(w)
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

_BY_NAME = {"max_norm": MaxNorm, "maxnorm": MaxNorm, "min_max_norm": MinMaxNorm, "minmaxnorm": MinMaxNorm,
            "non_neg": NonNeg, "nonneg": NonNeg, "unit_norm": UnitNorm, "unitnorm": UnitNorm}


#: get: None, a Constraint, a callable, a name ('non_neg', 'max_norm', ...) or a config dict
get, serialize, deserialize = lookup("constraint", Constraint, _BY_NAME)
