"""keras.utils: ``soft_update`` (target networks), seeds, one-hot."""
from __future__ import annotations

import numpy as np

from ..core.aval import fmt_shape
from ..core.tensor import Tensor, Variable
from ..ops import math_ops as M

from .saving import (custom_object_scope, deserialize_keras_object, get_custom_objects,  # noqa: F401
                     register_keras_serializable, serialize_keras_object)

__all__ = ["soft_update", "hard_update", "set_random_seed", "to_categorical", "custom_object_scope",
           "deserialize_keras_object", "get_custom_objects", "register_keras_serializable",
           "serialize_keras_object"]   # the last five: Keras also exports them from keras.utils


def _vars(x, what, tensors_ok=False):
    if isinstance(x, Variable):
        return [x]
    if hasattr(x, "weights") and not isinstance(x, (list, tuple)):
        return list(x.weights)          # a Keras layer/model: all weights (incl. BN statistics)
    if hasattr(x, "variables") and not isinstance(x, (list, tuple)):
        v = x.variables
        return list(v() if callable(v) else v)
    out = list(x)
    for i, v in enumerate(out):
        if not isinstance(v, Variable) and not (tensors_ok and isinstance(v, Tensor)):
            raise TypeError(f"soft_update: {what}[{i}] is a {type(v).__name__}, not a Variable")
    return out


def soft_update(target_vars, source_vars, tau):
    """Polyak averaging for target networks: ``target <- tau * source + (1 - tau) * target``
    for each pair of variables (``assign``, so it works inside a compiled step).

    Takes two lists of Variables (the sources may also be tensors), or two
    Keras models/layers (their ``weights``). ``tau`` is a Python float or a scalar tensor; ``tau=1``
    copies. Lists of different length or shapes raise a ValueError.
    """
    tv = _vars(target_vars, "target_vars")
    sv = _vars(source_vars, "source_vars", tensors_ok=True)
    if len(tv) != len(sv):
        raise ValueError(f"soft_update: {len(tv)} target variables but {len(sv)} source variables")
    for i, (t, s) in enumerate(zip(tv, sv)):
        if tuple(t.shape) != tuple(s.shape):
            raise ValueError(f"soft_update: variable {i}: target {t.name} has shape {fmt_shape(t.shape)}, "
                             f"source {s.name} has shape {fmt_shape(s.shape)}")
        if t.dtype != s.dtype:
            raise TypeError(f"soft_update: variable {i}: target {t.name} is {t.dtype.name}, source {s.name} "
                            f"is {s.dtype.name}")
    if isinstance(tau, Tensor):
        for t, s in zip(tv, sv):
            t.assign(M.add(M.multiply(_read(s), tau), M.multiply(t.read_value(), M.subtract(1.0, tau))))
        return
    tau = float(tau)
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"soft_update: tau must be in [0, 1], got {tau}")
    for t, s in zip(tv, sv):
        if tau == 1.0:
            t.assign(_read(s))
        else:
            t.assign(M.add(M.multiply(_read(s), tau), M.multiply(t.read_value(), 1.0 - tau)))


def _read(x):
    return x.read_value() if isinstance(x, Variable) else x


def hard_update(target_vars, source_vars):
    """Copy source values into target variables (``soft_update`` with tau=1)."""
    soft_update(target_vars, source_vars, 1.0)


def set_random_seed(seed):
    """Seed tapeflow's global random stream, Python's and NumPy's global RNGs."""
    import random as _pyrandom
    from ..ops import random_ops
    random_ops.set_seed(seed)
    _pyrandom.seed(seed)
    np.random.seed(seed)


def to_categorical(y, num_classes=None, dtype="float32"):
    y = np.asarray(y, dtype=np.int64)
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    n = int(num_classes) if num_classes is not None else int(y.max()) + 1
    out = np.zeros((y.size, n), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (n,))
