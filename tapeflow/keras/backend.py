"""A small ``keras.backend``: float type, epsilon, unique layer names."""
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


def clear_session():
    """Reset the layer-name counters (Keras' clear_session)."""
    _NAME_UIDS.clear()


def learning_phase():
    return 0
