"""keras.utils: ``soft_update`` (target networks), seeds, one-hot."""
from __future__ import annotations

import numpy as np

from ..core.aval import fmt_shape
from ..core.state import STATE
from ..core.tensor import Tensor, Variable
from ..ops import math_ops as M
from ..optimizers import rules as _rules
from ..optimizers.base import _put

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
        a, b = t._v, s._v
        if b is None or a.shape != b.shape or a.dtype != b.dtype:  # (a symbolic source: its aval)
            _check_pair(i, t, s)
    if isinstance(tau, Tensor):
        keep = M.subtract(1.0, tau)
        for t, s in zip(tv, sv):
            t.assign(_rules.polyak(t.read_value(), _read(s), tau, keep))
        return
    tau = float(tau)
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"soft_update: tau must be in [0, 1], got {tau}")
    if tau == 1.0:
        for t, s in zip(tv, sv):
            t.assign(_read(s))
        return
    if STATE.unrecorded():
        _fused_soft_update(tv, sv, tau)
        return
    for t, s in zip(tv, sv):
        t.assign(_rules.polyak(t.read_value(), _read(s), tau, 1.0 - tau))


def _check_pair(i, t, s):
    if tuple(t.shape) != tuple(s.shape):
        raise ValueError(f"soft_update: variable {i}: target {t.name} has shape {fmt_shape(t.shape)}, "
                         f"source {s.name} has shape {fmt_shape(s.shape)}")
    if t.dtype != s.dtype:
        raise TypeError(f"soft_update: variable {i}: target {t.name} is {t.dtype.name}, source {s.name} "
                        f"is {s.dtype.name}")


def _fused_soft_update(tv, sv, tau):
    """The eager soft update with nothing recording: per pair, one pass of the rule's
    compiled loop (float32/float64; the rule on NumPy arrays for other float dtypes) into
    a fresh buffer that becomes the target's, as the optimizers' fused update stores its
    results (assign's semantics: the old buffer is replaced, never written, so earlier
    reads keep their values). The ops made two temporaries and a third pass. tau and
    1 - tau reach the loop as scalars of the dtype, as the ops convert the Python floats,
    so the bits are the op path's. Non-float targets, and targets whose class has its
    own ``assign``, take the op path (its errors, its writes)."""
    plans = {}
    for t, s in zip(tv, sv):
        w = t._v
        npd = w.dtype
        plan = plans.get(npd)
        if plan is None:
            fused = npd.kind == "f"
            plan = plans[npd] = (fused, _rules.kernel(_rules.polyak) if fused and npd.itemsize >= 4 else None,
                                 (npd.type(tau), npd.type(1.0 - tau)))
        fused, loop, c = plan
        if not fused or type(t).assign is not Variable.assign:
            t.assign(_rules.polyak(t.read_value(), _read(s), tau, 1.0 - tau))
            continue
        w, x = w.reshape(-1), s._v.reshape(-1)   # views (a copy for a non-contiguous source)
        if loop is not None:
            out = np.empty(w.shape[0], npd)
            loop(w, x, out, *c)
        else:
            out = _rules.polyak(w, x, *c)
        _put(t, out)


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


def to_categorical(y, num_classes=None, dtype="float64"):
    """One-hot rows of class ids; float64 as Keras 3 gives it (`np.zeros` of the default dtype;
    Keras 3 has no `dtype` argument, tapeflow keeps Keras 2's)."""
    y = np.asarray(y, dtype=np.int64)
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    n = int(num_classes) if num_classes is not None else int(y.max()) + 1
    out = np.zeros((y.size, n), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (n,))
