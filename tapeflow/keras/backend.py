"""A small ``keras.backend``: float type, epsilon, unique layer names, and Keras 3's L2
normalization (``unit_normalize``) that its losses and layers share."""
from __future__ import annotations

import collections

import numpy as np

_FLOATX = ["float32"]
_EPSILON = [1e-7]
_NAME_UIDS: collections.defaultdict = collections.defaultdict(int)


def floatx():
    return _FLOATX[0]


def set_floatx(value):
    value = str(np.dtype(value))
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"set_floatx: unknown float type {value!r}")
    _FLOATX[0] = value


def epsilon():
    """The fuzz factor of losses (1e-7, as Keras)."""
    return _EPSILON[0]


def set_epsilon(value):
    _EPSILON[0] = float(value)


def unique_object_name(base):
    """``dense``, ``dense_1``, ``dense_2``... (as Keras names layers)."""
    n = _NAME_UIDS[base]
    _NAME_UIDS[base] += 1
    return base if n == 0 else f"{base}_{n}"


def unit_normalize(x, axis, max_inv):
    """Keras 3's ``ops.normalize`` (order 2): ``x * min(rsqrt(sum(x^2)), max_inv)`` over ``axis``,
    ``max_inv`` = 1 / epsilon: a zero vector stays 0 (not NaN). (cosine_similarity and Dot take
    Keras' fuzz factor, UnitNormalization 1e-12, as Keras does.)"""
    from ..ops import math_ops as M
    return M.multiply(x, M.minimum(M.rsqrt(M.reduce_sum(M.square(x), axis, keepdims=True)), max_inv))


def clear_session():
    """Reset the layer-name counters (Keras' clear_session)."""
    _NAME_UIDS.clear()


def learning_phase():
    return 0
