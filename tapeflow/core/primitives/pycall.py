"""``py_call``: a Python function called from compiled code (tf.numpy_function
and tf.py_function inside ``tapeflow.function``).

The function is a parameter, so every call of the compiled code calls it again
(effect "io": never folded, merged or dropped). Its outputs' shapes and dtypes
are declared by the caller (``Tout`` as TensorSpecs), because tracing cannot
call it to find out. Not differentiable (TF's numpy_function is not either).
"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive


def _pycall_impl(*values, fn, out_avals, name):
    out = fn(*values)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(out_avals):
        raise ValueError(f"{name}: the function returned {len(outs)} values, Tout declares {len(out_avals)}")
    result = []
    for i, (o, av) in enumerate(zip(outs, out_avals)):
        a = np.asarray(o.numpy() if hasattr(o, "numpy") else o)
        if a.dtype != av.dtype:
            if a.dtype.kind != np.dtype(av.dtype).kind and not (a.dtype.kind in "iu" and av.dtype.kind in "iu"):
                raise TypeError(f"{name}: output {i} has dtype {a.dtype.name}, Tout declares {av.dtype.name}")
            a = a.astype(av.dtype)
        if av.shape is not None and (len(a.shape) != len(av.shape) or any(
                d is not None and d != s for d, s in zip(av.shape, a.shape))):
            raise ValueError(f"{name}: output {i} has shape {fmt_shape(a.shape)}, Tout declares "
                             f"{fmt_shape(av.shape)}")
        result.append(a)
    return tuple(result)


py_call_p = Primitive("py_call", _pycall_impl, lambda *avals, fn, out_avals, name: tuple(out_avals),
                      differentiable=False, effect="io", multiple_results=True,
                      doc="a Python function on NumPy values, called on every run", strings=True)
__all__ = ["py_call_p"]
