"""tf.numpy_function and tf.py_function.

Eagerly they simply call the function (py_function on Tensors, so a
GradientTape sees what it computes; numpy_function on NumPy arrays). Inside
``tapeflow.function`` they become one ``py_call`` equation that calls the
function on every run (never while tracing). ``Tout`` as TensorSpecs gives the
outputs' shapes, checked on every call; a bare dtype gives an output of unknown
shape, as in TF: it can be returned from the function, and an op on it raises
an error asking for a TensorSpec (tapeflow's ops need ranks to be traced).
"""
from __future__ import annotations

import functools

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import Aval
from ..core.primitive import bind
from ..core.primitives.pycall import py_call_p
from ..core.state import STATE
from ..core.tensor import Tensor, convert_to_tensor


def _outs(name, Tout):
    single = not isinstance(Tout, (list, tuple))
    return single, ([Tout] if single else list(Tout))


def _traced(name, func, inp, Tout, wrap_inputs):
    from ..compiler.function import TensorSpec
    single, touts = _outs(name, Tout)
    avals = []
    for t in touts:
        # a bare dtype (or a TensorSpec of unknown rank): the output's shape is unknown until the
        # function runs, as in TF; it can be returned, and an op that needs its rank says so
        if isinstance(t, TensorSpec):
            avals.append(Aval(t.shape, t.dtype.np))
        else:
            avals.append(Aval(None, _dt.as_dtype(t).np))

    def call(*arrays):
        return func(*[Tensor(a) for a in arrays]) if wrap_inputs else func(*arrays)
    outs = bind(py_call_p, *inp, fn=call, out_avals=tuple(avals), name=name)
    return outs[0] if single else list(outs)


def _eager(name, func, inp, Tout, wrap_inputs):
    single, touts = _outs(name, Tout)
    args = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inp]
    out = func(*args) if wrap_inputs else func(*[a.numpy() for a in args])
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(touts):
        raise ValueError(f"{name}: the function returned {len(outs)} values, Tout declares {len(touts)}")
    res = []
    for o, t in zip(outs, touts):
        dt = t.dtype if hasattr(t, "dtype") and not isinstance(t, np.dtype) else t
        o = o if isinstance(o, Tensor) else convert_to_tensor(np.asarray(o))
        want = _dt.as_dtype(dt)
        if o.dtype != want:
            from .math_ops import cast
            o = cast(o, want)
        res.append(o)
    return res[0] if single else res


def _call_or_decorate(op, func, inp, Tout, wrap_inputs):
    if Tout is None:
        raise TypeError(f"{op}: Tout is required (the dtype, or a list of dtypes/TensorSpecs, of what "
                        "func returns)")
    if func is None or inp is None:
        # as TF 2.21: `@tf.py_function(Tout=...)` makes func callable on tensors directly
        def decorate(f):
            @functools.wraps(f)
            def call(*args):
                return _call_or_decorate(op, f, list(args), Tout, wrap_inputs)
            return call
        return decorate if func is None else decorate(func)
    if STATE.trace is not None:
        return _traced(op, func, inp, Tout, wrap_inputs=wrap_inputs)
    return _eager(op, func, inp, Tout, wrap_inputs=wrap_inputs)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    return _call_or_decorate("numpy_function", func, inp, Tout, wrap_inputs=False)


def py_function(func=None, inp=None, Tout=None, name=None):
    return _call_or_decorate("py_function", func, inp, Tout, wrap_inputs=True)
