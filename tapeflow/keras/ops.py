"""``keras.ops`` (Keras 3's backend-neutral ops; ``tapeflow.keras.ops``, also ``tf.keras.ops``).

One implementation serves this namespace and ``tf.experimental.numpy``: each NumPy-family op here
is the tnp function (``tapeflow/experimental/numpy.py``, compositions of tapeflow's ops) called on
operands that Keras' dtype rules have already converted. Where the two differ is the rule only:

- Keras promotes with its ``result_type`` (the JAX-like lattice: ``int32 + float32`` is float32,
  a Python float with an integer tensor gives ``floatx()``, float32) where tnp uses NumPy's
  (float64);
- Keras' float functions and ``mean`` turn integers into float32, not float64; ``sum``/``prod``
  of bools and small integers accumulate in int32, not int64; ``argmax`` and ``top_k``'s
  indices are int32; creation defaults to float32 (``ones(3)``) and int32 (``arange(3)``).

The nn and core families map onto ``tapeflow.nn``, ``tapeflow.keras.losses`` and the control
flow of ``tapeflow.ir.control_flow`` (``cond``, ``while_loop``, ``fori_loop``, ``scan``).
Checked against Keras 3.15 on TF 2.21 (``tests/tf_reference/make_keras_ops_reference.py``).
A Keras op tapeflow does not have raises NotImplementedError naming it (``__getattr__``).
"""
from __future__ import annotations

import builtins
import types as _types

import numpy as np

from .. import linalg as _linalg
from .._unsupported import UnsupportedFeatureError
from .. import nn as _nn
from ..core import dtypes as _dt
from ..core.tensor import Tensor, Variable, convert_to_tensor as _tf_convert
from ..experimental import numpy as _tnp
from ..ir import control_flow as _cf
from ..ops import array_ops as _A
from ..ops import check_ops as _check_ops
from ..ops import math_ops as _M
from ..ops import segment_ops as _SEG

_FLOATX = np.dtype(np.float32)
_ALL = _tnp._lattice(_tnp._ALL, "ALL")


# --- Keras' dtype rules -------------------------------------------------------------------

def _kind(x):
    if isinstance(x, Variable):
        x = x.read_value()
    if isinstance(x, Tensor):
        return x.aval.dtype
    if isinstance(x, bool):
        return "pybool"
    if isinstance(x, int):
        return "pyint"
    if isinstance(x, float):
        return "pyfloat"
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return convert_to_tensor(x).aval.dtype


def result_type(*xs):
    """Keras' ``result_type``: the JAX-like lattice; Python scalars weak, a Python float with an
    integer or bool gives floatx (float32)."""
    d = None
    for x in xs:
        if x is int or x is float or x is bool:   # Python's types are weak, as their values
            k = {int: "pyint", float: "pyfloat", bool: "pybool"}[x]
        elif isinstance(x, (type, np.dtype, _dt.DType, str)):
            k = np.dtype(_dt.np_dtype(x))
        else:
            k = _kind(x)
        if d is None:
            d = k
            continue
        if isinstance(d, str) and isinstance(k, str):
            d = "pyfloat" if "pyfloat" in (d, k) else "pyint" if "pyint" in (d, k) else "pybool"
            continue
        if "pyfloat" in (d, k) and ((d if k == "pyfloat" else k).kind in "biu"):
            d = _FLOATX
            continue
        if d == k:
            continue
        r = _ALL.get((d, k))
        d = r if isinstance(r, np.dtype) else (d if isinstance(d, np.dtype) else k)
    if isinstance(d, str):
        return {"pyfloat": _FLOATX, "pyint": np.dtype(np.int32), "pybool": np.dtype(np.bool_)}[d]
    return np.dtype(d)


def _t(x, dtype=None):
    """A tensor with Keras' conversion: Python floats float32, ints int32; arrays keep their dtype."""
    if isinstance(x, Variable):
        x = x.read_value()
    if isinstance(x, Tensor):
        return x if dtype is None or x.aval.dtype == dtype else _M.cast(x, dtype)
    if dtype is not None:
        return _tf_convert(np.asarray(x, dtype=dtype))
    return _tf_convert(x)


def _promote(*xs):
    d = result_type(*xs)
    return [_t(x, d) for x in xs]


def _floating(x):
    x = _t(x)
    return x if x.aval.dtype.kind == "f" else _M.cast(x, _FLOATX)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    if sparse or ragged:
        raise NotImplementedError("keras.ops.convert_to_tensor: sparse and ragged tensors are out of scope in "
                                  "tapeflow")
    return _t(x, None if dtype is None else _dt.np_dtype(dtype))


def convert_to_numpy(x):
    return np.asarray(_t(x).numpy())


def is_tensor(x):
    return isinstance(x, Tensor)


def cast(x, dtype):
    return _M.cast(_t(x), _dt.np_dtype(dtype))


def dtype(x):
    return _t(x).aval.dtype.name


def shape(x):
    return tuple(_t(x).aval.shape)


def ndim(x):
    return _t(x).aval.ndim


def size(x):
    return int(np.prod(_t(x).aval.shape))


def stop_gradient(variable):
    return _M.stop_gradient(_t(variable))


# --- elementwise (the tnp functions on Keras-promoted operands) ----------------------------

def _binary(name, fn=None):
    impl = fn or getattr(_tnp, name)

    def f(x1, x2):
        return impl(*_promote(x1, x2))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"keras.ops.{name}: Keras' result_type, then tnp.{name}."
    return f


for _name in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "floor_divide", "mod", "power", "logical_and", "logical_or",
              "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "nextafter"):
    globals()[_name] = _binary(_name)


def heaviside(x1, x2):
    """keras.ops.heaviside: Keras' result_type, then (its TF backend) int64 -> float64 and the other
    integers -> floatx, so a step of integers is a float as in NumPy."""
    a, b = _promote(x1, x2)
    d = a.aval.dtype
    if d.kind in "iu":
        d = np.float64 if d in (np.int64, np.uint64) else _FLOATX
        a, b = _M.cast(a, d), _M.cast(b, d)
    return _tnp.heaviside(a, b)


def _float_binary(name):
    impl = getattr(_tnp, name)

    def f(x1, x2):
        d = result_type(x1, x2)
        if d.kind != "f":
            d = _FLOATX
        return impl(_t(x1, d), _t(x2, d))
    f.__name__ = f.__qualname__ = name
    return f


for _name in ("arctan2", "hypot", "logaddexp", "logaddexp2"):
    globals()[_name] = _float_binary(_name)
divide = true_divide = _float_binary("true_divide")


def divide_no_nan(x1, x2):
    a, b = _promote(x1, x2)
    if a.aval.dtype.kind != "f":
        a, b = _M.cast(a, _FLOATX), _M.cast(b, _FLOATX)
    return _M.divide_no_nan(a, b)


def _float_unary(name, fn=None):
    impl = fn or getattr(_tnp, name)

    def f(x):
        return impl(_floating(x))
    f.__name__ = f.__qualname__ = name
    return f


for _name in ("sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
              "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "cbrt", "exp2", "deg2rad", "rad2deg",
              "sinc"):
    globals()[_name] = _float_unary(_name)


def i0(x):
    """keras.ops.i0: the modified Bessel function I0 (Keras' TF backend: int64 -> float64, other integers
    -> floatx, then tf.math.bessel_i0)."""
    x = _t(x)
    if x.aval.dtype.kind != "f":
        x = _M.cast(x, np.float64 if x.aval.dtype == np.int64 else _FLOATX)
    return __import__("tapeflow").math.bessel_i0(x)


def _same_unary(name, fn=None):
    impl = fn or getattr(_tnp, name)

    def f(x):
        return impl(_t(x))
    f.__name__ = f.__qualname__ = name
    return f


for _name in ("negative", "square", "sign", "abs", "absolute", "isfinite", "isnan", "isinf", "isposinf",
              "isneginf", "logical_not", "bitwise_not", "real", "imag", "conj", "conjugate", "signbit"):
    globals()[_name] = _same_unary(_name)
bitwise_invert = bitwise_not


def sign(x):
    """Keras 3's sign: an unsigned integer's is 1 or 0 in its dtype (Keras' TF backend; tf.math.sign refuses
    uint8, and so did this)."""
    x = _t(x)
    if x.aval.dtype.kind == "u":
        return _M.cast(_M.greater(x, 0), x.aval.dtype)
    return _tnp.sign(x)
# (Keras 3's TF backend passes these to tf.math as they are: an integer tensor is TF's InvalidArgumentError, where
# casting it to floatx computed a value)
erf = _same_unary("erf", _M.erf)
erfinv = _same_unary("erfinv", lambda x: __import__("tapeflow").math.erfinv(x))
rsqrt = _same_unary("rsqrt", _M.rsqrt)


def floor(x):
    x = _t(x)
    return _tnp.floor(x if x.aval.dtype.kind == "f" else _M.cast(x, _FLOATX))


def ceil(x):
    x = _t(x)
    return _tnp.ceil(x if x.aval.dtype.kind == "f" else _M.cast(x, _FLOATX))


def trunc(x):
    x = _t(x)
    return _tnp.fix(x) if x.aval.dtype.kind == "f" else x


def round(x, decimals=0):  # noqa: A001
    return _tnp.around(_t(x), decimals)


def reciprocal(x):
    return _M.reciprocal(_floating(x))


def clip(x, x_min, x_max):
    x = _t(x)
    d = x.aval.dtype
    if d == np.bool_:
        x, d = _M.cast(x, np.int32), np.dtype(np.int32)
    return _M.clip_by_value(x, _t(x_min, d), _t(x_max, d))


def where(condition, x1=None, x2=None):
    if x1 is None and x2 is None:
        return tuple(_M.cast(i, np.int32) for i in _tnp.nonzero(_t(condition)))
    a, b = _promote(x1, x2)
    return _tnp.where(_t(condition), a, b)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _tnp.isclose(*_promote(x1, x2), rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _tnp.allclose(*_promote(x1, x2), rtol=rtol, atol=atol, equal_nan=equal_nan)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    x = _t(x)
    if x.aval.dtype.kind != "f":
        return x
    info = np.finfo(x.aval.dtype)
    x = _M.where(_M.is_nan(x), _t(nan, x.aval.dtype) * _A.ones_like(x), x)
    x = _M.where(_M.logical_and(_M.is_inf(x), x > 0), _A.ones_like(x) * (info.max if posinf is None else posinf), x)
    return _M.where(_M.logical_and(_M.is_inf(x), x < 0), _A.ones_like(x) * (info.min if neginf is None else neginf), x)


# --- reductions ---------------------------------------------------------------------------

def _acc(x):
    """Keras' accumulation dtype of sum/prod: bools and integers narrower than 32 bits: int32."""
    d = x.aval.dtype
    if d == np.bool_ or (d.kind in "iu" and d.itemsize < 4):
        return np.dtype(np.int32)
    return d


def sum(x, axis=None, keepdims=False):  # noqa: A001
    x = _t(x)
    return _M.reduce_sum(_M.cast(x, _acc(x)), axis=_tnp._axis(axis), keepdims=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    x = _t(x)
    d = _acc(x) if dtype is None else _dt.np_dtype(dtype)
    return _M.reduce_prod(_M.cast(x, d), axis=_tnp._axis(axis), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    x = _t(x)
    if x.aval.dtype == _dt.BF16:
        # Keras 3 averages bfloat16 in float32 and casts the mean back (floats keep their dtype; _floating
        # would leave it float32)
        return _M.cast(_M.reduce_mean(_M.cast(x, np.float32), axis=_tnp._axis(axis), keepdims=keepdims), _dt.BF16)
    return _M.reduce_mean(_floating(x), axis=_tnp._axis(axis), keepdims=keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    out = _tnp.amax(_t(x), axis=axis, keepdims=keepdims)
    return out if initial is None else maximum(out, initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    out = _tnp.amin(_t(x), axis=axis, keepdims=keepdims)
    return out if initial is None else minimum(out, initial)


amax, amin = max, min


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _tnp.all(_t(x), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _tnp.any(_t(x), axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    x = _floating(x)
    return _M.reduce_variance(x, axis=_tnp._axis(axis), keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return _M.sqrt(var(x, axis, keepdims))


def logsumexp(x, axis=None, keepdims=False):
    return _M.reduce_logsumexp(_floating(x), axis=_tnp._axis(axis), keepdims=keepdims)


def argmax(x, axis=None, keepdims=False):
    x = _t(x)
    flat = axis is None
    out = _M.argmax(_A.reshape(x, [-1]) if flat else x, axis=0 if flat else axis, output_type=np.int32)
    if keepdims:
        out = _A.reshape(out, [1] * x.aval.ndim) if flat else _A.expand_dims(out, axis)
    return out


def argmin(x, axis=None, keepdims=False):
    x = _t(x)
    flat = axis is None
    out = _M.argmin(_A.reshape(x, [-1]) if flat else x, axis=0 if flat else axis, output_type=np.int32)
    if keepdims:
        out = _A.reshape(out, [1] * x.aval.ndim) if flat else _A.expand_dims(out, axis)
    return out


def argsort(x, axis=-1):
    x = _t(x)
    if axis is None:
        x, axis = _A.reshape(x, [-1]), -1
    return _M.cast(_A.argsort(x, axis=axis, stable=True), np.int32)


def sort(x, axis=-1):
    return _tnp.sort(_t(x), axis=axis)


def _cum(fn, x, axis, dtype):
    # (Keras 3's TF backend: bools accumulate in int32, every other dtype in its own, int8 included; sum/prod's
    # _acc widening gave int32 for int8/int16/uint8/uint16)
    x = _t(x)
    d = (np.dtype(np.int32) if x.aval.dtype == np.bool_ else x.aval.dtype) if dtype is None else _dt.np_dtype(dtype)
    x = _M.cast(x, d)
    if axis is None:
        x, axis = _A.reshape(x, [-1]), 0
    return fn(x, axis=axis)


def cumsum(x, axis=None, dtype=None):
    return _cum(_M.cumsum, x, axis, dtype)


def cumprod(x, axis=None, dtype=None):
    return _cum(_M.cumprod, x, axis, dtype)


def count_nonzero(x, axis=None):
    return _M.cast(_tnp.count_nonzero(_t(x), axis=axis), np.int32)


def average(x, axis=None, weights=None):
    x = _floating(x)
    if weights is None:
        return mean(x, axis)
    w = _t(weights, x.aval.dtype)
    return _tnp.average(x, axis=axis, weights=w)


def ptp(x, axis=None, keepdims=False):
    return _tnp.ptp(_t(x), axis=axis, keepdims=keepdims)


# --- creation -----------------------------------------------------------------------------

def _dtype_or(dtype, default):
    return np.dtype(default) if dtype is None else _dt.np_dtype(dtype)


def ones(shape, dtype=None):
    return _A.ones(_tnp._shape(shape), dtype=_dtype_or(dtype, _FLOATX))


def zeros(shape, dtype=None):
    return _A.zeros(_tnp._shape(shape), dtype=_dtype_or(dtype, _FLOATX))


empty = zeros


def full(shape, fill_value, dtype=None):
    v = _t(fill_value, _dtype_or(dtype, _FLOATX))   # (Keras: floatx unless a dtype is given, even for 3)
    return _A.broadcast_to(v, _tnp._shape(shape))


def ones_like(x, dtype=None):
    return _A.ones_like(_t(x), dtype=None if dtype is None else _dt.np_dtype(dtype))


def zeros_like(x, dtype=None):
    return _A.zeros_like(_t(x), dtype=None if dtype is None else _dt.np_dtype(dtype))


empty_like = zeros_like


def full_like(x, fill_value, dtype=None):
    x = _t(x)
    d = x.aval.dtype if dtype is None else _dt.np_dtype(dtype)
    return _A.broadcast_to(_t(fill_value, d), x.aval.shape)


def arange(start, stop=None, step=None, dtype=None):
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype is None:
        d = result_type(start, stop, step)
    else:
        d = _dt.np_dtype(dtype)
    vals = [v.numpy() if isinstance(v, Tensor) else v for v in (start, stop, step)]
    return _tf_convert(np.arange(*vals).astype(d))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    d = _dtype_or(dtype, _FLOATX)
    out = np.linspace(_tnp._val(start), _tnp._val(stop), num, endpoint=endpoint, retstep=retstep, axis=axis)
    if retstep:
        return _tf_convert(np.asarray(out[0], d)), out[1]
    return _tf_convert(np.asarray(out, d))


def eye(N, M=None, k=0, dtype=None):  # noqa: N803
    return _tf_convert(np.eye(N, M, k, dtype=_dtype_or(dtype, _FLOATX)))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    return _tf_convert(np.tri(N, M, k, dtype=_dtype_or(dtype, _FLOATX)))


def copy(x):
    return _A.identity(_t(x))


# --- shapes and indexing (the tnp functions; their dtypes follow the input) ---------------

def _same(name, n_tensor=1):
    impl = getattr(_tnp, name)

    def f(x, *args, **kwargs):
        return impl(_t(x), *args, **kwargs)
    f.__name__ = f.__qualname__ = name
    return f


for _name in ("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
              "flip", "fliplr", "flipud", "rot90", "roll", "tile", "repeat", "split", "hsplit", "vsplit", "dsplit",
              "diagonal", "diagflat", "tril", "triu", "diff", "take_along_axis", "trace"):
    globals()[_name] = _same(_name)
flatten = ravel


def take(x, indices, axis=None):
    """A gather (out-of-range indices raise, as Keras' TF backend; tnp.take clips, as TF's tnp)."""
    x = _t(x)
    if axis is None:
        x, axis = _A.reshape(x, [-1]), 0
    return _A.gather(x, _t(indices), axis=axis)


def diag(x, k=0):
    return _tnp.diag(_t(x), k)


def pad(x, pad_width, mode="constant", constant_values=None):
    x = _t(x)
    kw = {} if constant_values is None else {"constant_values": constant_values}
    return _tnp.pad(x, pad_width, mode=mode, **kw)


def concatenate(xs, axis=0):
    return _tnp.concatenate(_promote(*xs), axis=axis)


def append(x1, x2, axis=None):
    return _tnp.append(*_promote(x1, x2), axis=axis)


def stack(x, axis=0):
    return _A.stack(_promote(*x), axis=axis)


def hstack(xs):
    return _tnp.hstack(_promote(*xs))


def vstack(xs):
    # Keras 3's TF backend concatenates along axis 0 as they are (1-D inputs stay 1-D: [6], not [2, 3])
    return _A.concat(_promote(*xs), axis=0)


def dstack(xs):
    return _tnp.dstack(_promote(*xs))


def unstack(x, num=None, axis=0):
    return _A.unstack(_t(x), num=num, axis=axis)


def array_split(x, indices_or_sections, axis=0):
    x = _t(x)
    n = x.aval.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        sizes = [n // k + (1 if i < n % k else 0) for i in builtins.range(k)]
        return _A.split(x, sizes, axis=axis)
    return _tnp.split(x, indices_or_sections, axis)


def meshgrid(*x, indexing="xy"):
    return _A.meshgrid(*_promote(*x), indexing=indexing)


def get_item(x, key):
    return _t(x)[key]


def slice(inputs, start_indices, shape):  # noqa: A001
    return _A.slice(_t(inputs), list(start_indices), list(shape))


def slice_update(inputs, start_indices, updates):
    inputs, updates = _t(inputs), _t(updates)
    starts = [int(s) for s in start_indices]
    idx = np.stack(np.meshgrid(*[np.arange(s, s + n) for s, n in zip(starts, updates.aval.shape)],
                               indexing="ij"), axis=-1).astype(np.int32)
    return _A.tensor_scatter_nd_update(inputs, _tf_convert(idx), _M.cast(updates, inputs.aval.dtype))


def scatter(indices, values, shape):
    values = _t(values)
    return _A.scatter_nd(_t(indices), values, _tnp._shape(shape))


def scatter_update(inputs, indices, updates, reduction=None):
    inputs = _t(inputs)
    updates = _t(updates, inputs.aval.dtype)
    if reduction is None:
        return _A.tensor_scatter_nd_update(inputs, _t(indices), updates)
    if reduction == "add":
        return _A.tensor_scatter_nd_add(inputs, _t(indices), updates)
    if reduction == "max":
        return _A.tensor_scatter_nd_max(inputs, _t(indices), updates)
    if reduction == "min":
        return _A.tensor_scatter_nd_min(inputs, _t(indices), updates)
    raise ValueError(f"keras.ops.scatter_update: reduction must be None, 'add', 'max' or 'min', got {reduction!r}")


def searchsorted(sorted_sequence, values, side="left"):
    return _A.searchsorted(_t(sorted_sequence), _t(values), side=side, out_type=np.int32)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise NotImplementedError("keras.ops.one_hot(sparse=True): sparse tensors are out of scope in tapeflow")
    x = _t(x)
    if x.aval.dtype.kind == "f":   # (Keras casts float class ids to int32)
        x = _M.cast(x, np.int32)
    return _A.one_hot(x, num_classes, axis=axis, dtype=_dtype_or(dtype, _FLOATX))


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    num_classes = kwargs.get("num_tokens", num_classes)
    oh = one_hot(inputs, num_classes, axis=axis, dtype=dtype)
    x = _t(inputs)
    red = -2 if axis == -1 else axis
    return _M.reduce_max(oh, axis=red) if x.aval.ndim > 1 else _M.reduce_max(oh, axis=0)


def top_k(x, k, sorted=True):  # noqa: A002
    values, idx = _A.top_k(_t(x), k=k, sorted=sorted)
    return values, _M.cast(idx, np.int32)


def in_top_k(targets, predictions, k):
    return _nn.in_top_k(_t(targets), _t(predictions), k)


def unique(x, sorted=True, return_inverse=False, return_counts=False, axis=None, size=None,  # noqa: A002
           fill_value=None):
    """NumPy's unique (sorted values) of a 1-D tensor, eagerly (the count is data-dependent)."""
    v = _t(x).numpy()
    res = np.unique(v, return_inverse=return_inverse, return_counts=return_counts, axis=axis)
    if not isinstance(res, tuple):
        return _tf_convert(res)
    return tuple(_tf_convert(r.astype(np.int32) if i else r) for i, r in enumerate(res))


def nonzero(x):
    return tuple(_M.cast(i, np.int32) for i in _tnp.nonzero(_t(x)))


def select(condlist, choicelist, default=0):
    return _tnp.select([_t(c) for c in condlist], [_t(c) for c in choicelist], default)


def vectorize(pyfunc, *, excluded=None, signature=None):
    raise NotImplementedError("keras.ops.vectorize: not implemented in tapeflow; use keras.ops.vectorized_map or "
                              "tapeflow.map_fn")


# --- linear algebra -----------------------------------------------------------------------

def matmul(x1, x2):
    return _tnp.matmul(*_promote(x1, x2))


def dot(x1, x2):
    return _tnp.dot(*_promote(x1, x2))


def vdot(x1, x2):
    return _tnp.vdot(*_promote(x1, x2))


def inner(x1, x2):
    return _tnp.inner(*_promote(x1, x2))


def outer(x1, x2):
    return _tnp.outer(*_promote(x1, x2))


def kron(x1, x2):
    return _tnp.kron(*_promote(x1, x2))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return _tnp.cross(*_promote(x1, x2), axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def tensordot(x1, x2, axes=2):
    return _tnp.tensordot(*_promote(x1, x2), axes=axes)


def einsum(subscripts, *operands, **kwargs):
    return _M.einsum(subscripts, *_promote(*operands))


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """Keras 3's norm: ``axis=None`` is every axis, so a matrix gets a matrix norm (``ord=1`` of a matrix is its
    largest column sum; the flattened vector's 1-norm was returned) and a tensor of rank 0 or above 2 is refused,
    as Keras' "Invalid axis values". One axis: the vector norms (inf, -inf, 0: the count of nonzeros, any other
    p: sum(|x|^p)^(1/p), negative p included); two: the matrix norms ('fro' (ord=None), 'nuc', +-1, +-inf, +-2:
    the extreme singular values), as Keras' TF backend computes them."""
    x = _floating(x)
    nd = x.aval.ndim
    axes = tuple(builtins.range(nd)) if axis is None else (axis,) if isinstance(axis, (int, np.integer)) \
        else tuple(axis)
    if len(axes) not in (1, 2):
        raise ValueError(f"norm: Invalid axis values. Received: axis={axes}")
    axes = tuple(int(a) % nd if nd else int(a) for a in axes)
    ax = _M.abs(x)
    if len(axes) == 1:
        a = axes[0]
        if ord is None or ord == 2 or ord == "euclidean":
            return _M.sqrt(_M.reduce_sum(_M.square(x), axis=a, keepdims=keepdims))
        if ord in ("fro", "nuc") or isinstance(ord, str):
            raise ValueError(f"norm: Invalid `ord` argument for vector norm. Received: ord={ord}")
        if ord == np.inf:
            return _M.reduce_max(ax, axis=a, keepdims=keepdims)
        if ord == -np.inf:
            return _M.reduce_min(ax, axis=a, keepdims=keepdims)
        if ord == 0:
            return _M.cast(_M.reduce_sum(_M.cast(_M.not_equal(x, 0), np.int32), axis=a, keepdims=keepdims),
                           x.aval.dtype)
        p = np.asarray(ord, x.aval.dtype)
        return _M.pow(_M.reduce_sum(_M.pow(ax, p), axis=a, keepdims=keepdims), np.asarray(1.0, x.aval.dtype) / p)
    r, c = axes
    if r == c:
        raise ValueError(f"norm: Invalid axis values. Received: axis={axes}")
    if ord is None or ord in ("fro", "euclidean"):
        return _M.sqrt(_M.reduce_sum(_M.square(x), axis=list(axes), keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        # 1: the largest column sum (sum over the row axis, then the extreme over the columns); inf: rows
        over, then = (r, c) if ord in (1, -1) else (c, r)
        sums = _M.reduce_sum(ax, axis=over, keepdims=True)
        red = _M.reduce_max if ord > 0 else _M.reduce_min
        out = red(sums, axis=then, keepdims=True)
        return out if keepdims else _A.squeeze(out, list(axes))
    if ord in (2, -2, "nuc"):
        sv = _linalg.svd(_tnp.moveaxis(x, list(axes), [-2, -1]), compute_uv=False)
        out = _M.reduce_sum(sv, axis=-1) if ord == "nuc" else (_M.reduce_max if ord == 2 else _M.reduce_min)(
            sv, axis=-1)
        if keepdims:
            for a in sorted(axes):
                out = _A.expand_dims(out, a)
        return out
    raise ValueError(f"norm: Invalid `ord` argument for matrix norm. Received: ord={ord}")


def det(x):
    return _linalg.det(_floating(x))


def inv(x):
    return _linalg.inv(_floating(x))


def solve(a, b):
    a, b = _promote(a, b)
    return _linalg.solve(_floating(a), _floating(b))


def cholesky(x, upper=False):
    # (tf.linalg.cholesky gives NaNs for a matrix that is not positive definite; Keras 3's TF backend
    # turns them into check_numerics' InvalidArgumentError)
    out = _check_ops.check_numerics(_linalg.cholesky(_floating(x)), "Cholesky")
    return _linalg.matrix_transpose(out) if upper else out


def eigh(x):
    return _linalg.eigh(_floating(x))


def eig(x):
    """keras.ops.eig: tf.linalg.eig (complex eigenvalues and eigenvectors), as Keras 3's TF backend."""
    return _linalg.eig(_floating(x))


def qr(x, mode="reduced"):
    return _linalg.qr(_floating(x), full_matrices=(mode == "complete"))


def svd(x, full_matrices=True, compute_uv=True):
    s, u, v = _linalg.svd(_floating(x), full_matrices=full_matrices, compute_uv=True)
    return (u, s, _linalg.matrix_transpose(v)) if compute_uv else s


def slogdet(x):
    return _linalg.slogdet(_floating(x))


def logdet(x):
    return _linalg.logdet(_floating(x))


def pinv(x, rcond=1e-15):
    return _linalg.pinv(_floating(x), rcond=rcond)


def matrix_rank(x, tol=None):
    return _linalg.matrix_rank(_floating(x), tol=tol)


def lstsq(a, b, rcond=None):
    return _linalg.lstsq(_floating(a), _floating(b))


def solve_triangular(a, b, lower=False):
    return _linalg.triangular_solve(_floating(a), _floating(b), lower=lower)


# --- nn -----------------------------------------------------------------------------------

def relu(x):
    return _nn.relu(_t(x))


def relu6(x):
    return _nn.relu6(_t(x))


def sigmoid(x):
    return _nn.sigmoid(_floating(x))


def softplus(x):
    return _nn.softplus(_floating(x))


def softsign(x):
    return _nn.softsign(_floating(x))


def silu(x):
    return _nn.silu(_floating(x))


swish = silu


def log_sigmoid(x):
    return _M.log_sigmoid(_floating(x))


def leaky_relu(x, negative_slope=0.2):
    return _nn.leaky_relu(_floating(x), alpha=negative_slope)


def elu(x, alpha=1.0):
    x = _floating(x)
    return _M.where(x > 0, x, _M.cast(alpha, x.aval.dtype) * _M.expm1(x))


def selu(x):
    return _nn.selu(_floating(x))


def celu(x, alpha=1.0):
    x = _floating(x)
    a = _M.cast(alpha, x.aval.dtype)
    return _M.maximum(x, _A.zeros_like(x)) + _M.minimum(_A.zeros_like(x), a * _M.expm1(x / a))


def gelu(x, approximate=True):
    return _nn.gelu(_floating(x), approximate=approximate)


def glu(x, axis=-1):
    a, b = _A.split(_floating(x), 2, axis=axis)
    return a * _nn.sigmoid(b)


def hard_sigmoid(x):
    x = _floating(x)
    return _M.clip_by_value(x / 6.0 + 0.5, 0.0, 1.0)


def hard_silu(x):
    x = _floating(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    return _M.clip_by_value(_floating(x), -1.0, 1.0)


def soft_shrink(x, threshold=0.5):
    x = _floating(x)
    t = _M.cast(threshold, x.aval.dtype)
    return _M.where(x > t, x - t, _M.where(x < -t, x + t, _A.zeros_like(x)))


def hard_shrink(x, threshold=0.5):
    x = _floating(x)
    return _M.where(_M.abs(x) > threshold, x, _A.zeros_like(x))


def tanh_shrink(x):
    x = _floating(x)
    return x - _M.tanh(x)


def squareplus(x, b=4):
    x = _floating(x)
    return (x + _M.sqrt(_M.square(x) + _M.cast(b, x.aval.dtype))) / 2


def sparse_plus(x):
    x = _floating(x)
    return _M.where(x <= -1, _A.zeros_like(x), _M.where(x >= 1, x, _M.square(x + 1) / 4))


def threshold(x, threshold, default_value):
    x = _t(x)
    return _M.where(x > threshold, x, _t(default_value, x.aval.dtype) * _A.ones_like(x))


def softmax(x, axis=-1):
    x = _floating(x)
    if isinstance(axis, (tuple, list)):
        m = _M.reduce_max(x, axis=list(axis), keepdims=True)
        e = _M.exp(x - _M.stop_gradient(m))
        return e / _M.reduce_sum(e, axis=list(axis), keepdims=True)
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    x = _floating(x)
    if isinstance(axis, (tuple, list)):
        return x - _M.reduce_logsumexp(x, axis=list(axis), keepdims=True)
    return _nn.log_softmax(x, axis=axis)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """Keras 3's ctc_loss (TF backend): tf.nn.ctc_loss on (batch, time, classes) ``output`` taken as
    logits, blank = ``mask_index``; float16 computed in float32, as Keras."""
    out = _tf_convert(output)
    dt = out.dtype
    if dt.name == "float16":
        out = _M.cast(out, "float32")
    loss = _nn.ctc_loss(_M.cast(_tf_convert(target), "int32"), out, target_length, output_length,
                        logits_time_major=False, blank_index=mask_index)
    return _M.cast(loss, dt)


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True,
               mask_index=0):
    """Keras 3's ctc_decode (TF backend): tf.nn.ctc_greedy_decoder (blank = ``mask_index``) or, "beam_search"
    (wave 21), tf.nn.ctc_beam_search_decoder with the ``mask_index`` column moved last and the labels above it
    shifted back, as Keras; on the (batch, time, classes) ``inputs`` (logits). The decodes padded with -1 to
    (top_paths, batch, time) int32, and the scores (batch, top_paths). Eager only (value-dependent sizes)."""
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    x = _tf_convert(inputs)
    if not x.dtype.is_floating:
        x = _M.cast(x, "float32")
    b, t = tuple(x.shape)[:2]
    xt = _A.transpose(x, [1, 0, 2])
    if strategy == "greedy":
        decoded, scores = _nn.ctc_greedy_decoder(xt, sequence_lengths, merge_repeated=merge_repeated,
                                                 blank_index=mask_index)
    else:
        if mask_index is not None:   # Keras' slices, literally (a negative mask_index included)
            xt = _A.concat([xt[..., :mask_index], xt[..., mask_index + 1:], xt[..., mask_index:mask_index + 1]], -1)
        decoded, scores = _nn.ctc_beam_search_decoder(xt, sequence_lengths, beam_width=beam_width,
                                                      top_paths=top_paths)
    dense = np.full((len(decoded), b, t), -1, np.int32)
    for k, sp in enumerate(decoded):
        ind = np.asarray(sp.indices.numpy())
        dense[k, ind[:, 0], ind[:, 1]] = np.asarray(sp.values.numpy())
    if strategy == "beam_search" and mask_index is not None:
        m = mask_index + tuple(x.shape)[-1] if mask_index < 0 else mask_index
        dense = np.where(dense >= m, dense + 1, dense).astype(np.int32)
    return Tensor(dense), scores


def sparsemax(x, axis=-1):
    from .activations import sparsemax as _sparsemax   # Keras 3.15's formula, TF 2.21's values
    return _sparsemax(_floating(x), axis=axis)


def moments(x, axes, keepdims=False, synchronized=False):
    x = _floating(x)
    return _nn.moments(x, axes=list(axes) if isinstance(axes, (tuple, list)) else [axes], keepdims=keepdims)


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    x = _floating(x)
    shape = [1] * x.aval.ndim
    shape[axis] = x.aval.shape[axis]

    def r(v):
        return None if v is None else _A.reshape(_t(v, x.aval.dtype), shape)
    return _nn.batch_normalization(x, r(mean), r(variance), r(offset), r(scale), epsilon)


def normalize(x, axis=-1, order=2, epsilon=None):
    x = _floating(x)
    if order != 2:
        n = _linalg.norm(x, ord=order, axis=axis, keepdims=True)
        return x / _M.maximum(n, _M.cast(1e-12 if epsilon is None else epsilon, x.aval.dtype))
    return _nn.l2_normalize(x, axis=axis, epsilon=1e-12 if epsilon is None else epsilon)


def rms_normalization(x, scale=1, axis=-1, epsilon=None):
    x = _floating(x)
    eps = 1e-7 if epsilon is None else epsilon   # (Keras 3: backend.epsilon())
    r = _M.rsqrt(_M.reduce_mean(_M.square(x), axis=axis, keepdims=True) + eps)
    return x * r * _t(scale, x.aval.dtype)


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    x = _floating(x)
    eps = 1e-7 if epsilon is None else epsilon   # (Keras 3: backend.epsilon())
    m, v = _nn.moments(x, axes=[axis], keepdims=True)
    out = (x - m) * _M.rsqrt(v + eps)
    if gamma is not None:
        out = out * _t(gamma, x.aval.dtype)
    if beta is not None:
        out = out + _t(beta, x.aval.dtype)
    return out


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    from . import losses
    return losses.categorical_crossentropy(_floating(target), _floating(output), from_logits=from_logits, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    from . import losses
    return losses.sparse_categorical_crossentropy(_t(target), _floating(output), from_logits=from_logits, axis=axis)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise, as Keras' op (the loss function averages over the last axis; this does not)."""
    target, output = _floating(target), _floating(output)
    if from_logits:
        return _nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = np.asarray(1e-7, output.aval.dtype)
    output = _M.clip_by_value(output, eps, 1 - eps)
    return -(target * _M.log(output) + (1 - target) * _M.log(1 - output))


def _data_format(data_format):
    return "channels_last" if data_format is None else data_format


def _nd_format(nd, data_format):
    if _data_format(data_format) != "channels_last":
        raise NotImplementedError("keras.ops: only data_format='channels_last' is implemented in tapeflow's conv "
                                  "and pooling ops")
    return {3: "NWC", 4: "NHWC", 5: "NDHWC"}[nd]


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    x = _floating(inputs)
    k = _t(kernel, x.aval.dtype)
    nd = x.aval.ndim
    return _nn.convolution(x, k, strides=strides, padding=padding.upper(), data_format=_nd_format(nd, data_format),
                           dilations=dilation_rate)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    x = _floating(inputs)
    if x.aval.ndim != 4:
        raise NotImplementedError("keras.ops.depthwise_conv: only 2-D inputs (batch, h, w, c) in tapeflow")
    _nd_format(4, data_format)
    s = (strides, strides) if isinstance(strides, int) else tuple(strides)
    d = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    return _nn.depthwise_conv2d(x, _t(kernel, x.aval.dtype), strides=(1,) + s + (1,), padding=padding.upper(),
                                dilations=d)


def _tuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    """1-D and 2-D transposed convolution (kernel: spatial..., out_channels, in_channels, as Keras'),
    output size Keras' (``output_padding=None``): valid ``(n - 1) * s + (k - 1) * d + 1``, same ``n * s``."""
    x = _floating(inputs)
    nd = x.aval.ndim
    if nd not in (3, 4):
        raise NotImplementedError("keras.ops.conv_transpose: 1-D and 2-D inputs only in tapeflow")
    if output_padding is not None:
        raise NotImplementedError("keras.ops.conv_transpose: output_padding is not implemented in tapeflow")
    fmt = _nd_format(nd, data_format)
    k = _t(kernel, x.aval.dtype)
    sp = nd - 2
    s, d = _tuple(strides, sp), _tuple(dilation_rate, sp)
    ks = k.aval.shape[:sp]
    ins = x.aval.shape[1:1 + sp]
    if padding.lower() == "same":
        outs = [n * st for n, st in zip(ins, s)]
    else:
        outs = [(n - 1) * st + (kk - 1) * dd + 1 for n, st, kk, dd in zip(ins, s, ks, d)]
    shape = [x.aval.shape[0], *outs, k.aval.shape[-2]]
    fn = _nn.conv2d_transpose if sp == 2 else _nn.conv1d_transpose
    return fn(x, k, shape, list(s), padding=padding.upper(), data_format=fmt, dilations=list(d))


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    x = _floating(inputs)
    if x.aval.ndim != 4:
        raise NotImplementedError("keras.ops.separable_conv: only 2-D inputs (batch, h, w, c) in tapeflow")
    _nd_format(4, data_format)
    s, d = _tuple(strides, 2), _tuple(dilation_rate, 2)
    return _nn.separable_conv2d(x, _t(depthwise_kernel, x.aval.dtype), _t(pointwise_kernel, x.aval.dtype),
                                [1, *s, 1], padding.upper(), dilations=list(d))


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    x = _floating(inputs)
    fmt = _nd_format(x.aval.ndim, data_format)
    return _nn.max_pool(x, pool_size, pool_size if strides is None else strides, padding.upper(), data_format=fmt)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    x = _floating(inputs)
    fmt = _nd_format(x.aval.ndim, data_format)
    return _nn.avg_pool(x, pool_size, pool_size if strides is None else strides, padding.upper(), data_format=fmt)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """Keras 3's (batch, seq, heads, dim) layout: softmax(q k^T * scale + bias, masked) v."""
    q, k, v = _floating(query), _floating(key), _floating(value)
    d = q.aval.shape[-1]
    s = (1.0 / np.sqrt(d)) if scale is None else scale
    logits = _M.einsum("btnh,bsnh->bnts", q, k) * np.asarray(s, q.aval.dtype)
    if attn_logits_soft_cap is not None:
        c = np.asarray(attn_logits_soft_cap, q.aval.dtype)
        logits = _M.tanh(logits / c) * c
    if bias is not None:
        logits = logits + _t(bias, q.aval.dtype)
    big = np.asarray(np.finfo(q.aval.dtype).min, q.aval.dtype)  # (a large negative number, not -inf: Keras')
    if mask is not None:
        logits = _M.where(_t(mask), logits, big * _A.ones_like(logits))
    if is_causal:
        t, sl = logits.aval.shape[-2:]
        causal = _tf_convert(np.tril(np.ones((t, sl), dtype=bool)))
        logits = _M.where(causal, logits, big * _A.ones_like(logits))
    w = _nn.softmax(logits, axis=-1)
    return _M.einsum("bnts,bsnh->btnh", w, v)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    data, ids = _t(data), _t(segment_ids)
    n = int(np.max(ids.numpy())) + 1 if num_segments is None else num_segments
    return _SEG.unsorted_segment_sum(data, ids, n)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    data, ids = _t(data), _t(segment_ids)
    n = int(np.max(ids.numpy())) + 1 if num_segments is None else num_segments
    return _SEG.unsorted_segment_max(data, ids, n)


# --- more of the numpy family ---------------------------------------------------------------

def array(x, dtype=None):
    return convert_to_tensor(x, dtype)


def angle(x):
    return _tnp.angle(_floating(x))


fabs = abs  # noqa: F821  (bound in the loop above)


def erfc(x):
    import tapeflow
    return tapeflow.math.erfc(_floating(x))


def fmax(x1, x2):
    a, b = _promote(x1, x2)
    if a.aval.dtype.kind == "f":   # NaN-ignoring, as NumPy's
        return _M.where(_M.is_nan(a), b, _M.where(_M.is_nan(b), a, _M.maximum(a, b)))
    return _M.maximum(a, b)


def fmin(x1, x2):
    a, b = _promote(x1, x2)
    if a.aval.dtype.kind == "f":
        return _M.where(_M.is_nan(a), b, _M.where(_M.is_nan(b), a, _M.minimum(a, b)))
    return _M.minimum(a, b)


def fmod(x1, x2):
    a, b = _promote(x1, x2)
    return _M.truncatemod(a, b)


def gcd(x1, x2):
    return _tnp.gcd(*_promote(x1, x2))


def lcm(x1, x2):
    return _tnp.lcm(*_promote(x1, x2))


def ldexp(x1, x2):
    x = _floating(x1)
    return x * _M.pow(_M.cast(2.0, x.aval.dtype), _M.cast(_t(x2), x.aval.dtype))


def _shift(name):
    def f(x, y):
        from .. import bitwise
        a, b = _promote(x, y)
        return getattr(bitwise, name)(a, b)
    f.__name__ = name
    return f


left_shift = bitwise_left_shift = _shift("left_shift")
right_shift = bitwise_right_shift = _shift("right_shift")


def isreal(x):
    return _tnp.isreal(_t(x))


def isin(x1, x2, assume_unique=False, invert=False):
    a, b = _promote(x1, x2)
    eq = _M.reduce_any(_M.equal(_A.expand_dims(a, -1), _A.reshape(b, [-1])), axis=-1)
    return _M.logical_not(eq) if invert else eq


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    return _tf_convert(np.asarray(np.logspace(_tnp._val(start), _tnp._val(stop), num, endpoint, base, axis=axis),
                                  _dtype_or(dtype, _FLOATX)))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return _tf_convert(np.asarray(np.geomspace(_tnp._val(start), _tnp._val(stop), num, endpoint, axis=axis),
                                  _dtype_or(dtype, _FLOATX)))


def vander(x, N=None, increasing=False):  # noqa: N803
    return _tnp.vander(_t(x), N, increasing)


def saturate_cast(x, dtype):
    return _dt.saturate_cast(_t(x), _dt.np_dtype(dtype))


def unravel_index(indices, shape):
    from ..ops.special_ops import unravel_index as ui
    idx = _t(indices)
    return tuple(_A.unstack(ui(idx, _tf_convert(np.asarray(shape, idx.aval.dtype))), axis=0))


def digitize(x, bins):
    x, bins = _promote(x, bins)
    flat = _A.searchsorted(bins, _A.reshape(x, [-1]), side="right", out_type=np.int32)
    return _A.reshape(flat, x.aval.shape)


def bincount(x, weights=None, minlength=0, sparse=False):
    from ..ops.segment_ops import bincount as bc
    w = None if weights is None else _t(weights)
    return bc(_t(x), weights=w, minlength=minlength, dtype=np.int32 if w is None else w.aval.dtype)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _floating(y)
    n = y.aval.shape[axis]
    lo = _A.gather(y, _tf_convert(np.arange(n - 1)), axis=axis % y.aval.ndim)
    hi = _A.gather(y, _tf_convert(np.arange(1, n)), axis=axis % y.aval.ndim)
    if x is None:
        return _M.reduce_sum((lo + hi) * np.asarray(dx / 2.0, y.aval.dtype), axis=axis)
    dxs = _tnp.diff(_t(x, y.aval.dtype), axis=-1)
    return _M.reduce_sum((lo + hi) * dxs / 2.0, axis=axis)


def _nan_to(x, value):
    x = _floating(x)
    return _M.where(_M.is_nan(x), _A.ones_like(x) * np.asarray(value, x.aval.dtype), x)


def nansum(x, axis=None, keepdims=False):
    return sum(_nan_to(x, 0.0), axis, keepdims)


def nanprod(x, axis=None, keepdims=False):
    return prod(_nan_to(x, 1.0), axis, keepdims)


def nanmax(x, axis=None, keepdims=False):
    return max(_nan_to(x, -np.inf), axis, keepdims)


def nanmin(x, axis=None, keepdims=False):
    return min(_nan_to(x, np.inf), axis, keepdims)


def nanmean(x, axis=None, keepdims=False):
    x = _floating(x)
    n = _M.reduce_sum(_M.cast(_M.logical_not(_M.is_nan(x)), x.aval.dtype), axis=_tnp._axis(axis), keepdims=keepdims)
    return nansum(x, axis, keepdims) / n


def nanvar(x, axis=None, keepdims=False):
    x = _floating(x)
    m = nanmean(x, axis, True)
    return nanmean(_M.square(x - m), axis, keepdims)


def nanstd(x, axis=None, keepdims=False):
    return _M.sqrt(nanvar(x, axis, keepdims))


def nanargmax(x, axis=None, keepdims=False):
    return argmax(_nan_to(x, -np.inf), axis, keepdims)


def nanargmin(x, axis=None, keepdims=False):
    return argmin(_nan_to(x, np.inf), axis, keepdims)


def nancumsum(x, axis=None, dtype=None):
    return cumsum(_nan_to(x, 0.0), axis, dtype)


def nancumprod(x, axis=None, dtype=None):
    return cumprod(_nan_to(x, 1.0), axis, dtype)


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """NumPy's quantile (method 'linear', 'lower', 'higher', 'nearest', 'midpoint') as a sort and
    two gathers, so it traces and differentiates."""
    x = _floating(x)
    nd = x.aval.ndim
    if axis is None:
        x, ax = _A.reshape(x, [-1]), 0
    else:
        ax = axis % nd
    xs = _A.sort(x, axis=ax)
    n = xs.aval.shape[ax]
    qs = np.asarray(_tnp._val(q), np.float64)
    pos = qs * (n - 1)
    lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
    frac = pos - lo
    if method == "lower":
        hi, frac = lo, np.zeros_like(frac)
    elif method == "higher":
        lo, frac = hi, np.zeros_like(frac)
    elif method == "nearest":
        lo = hi = np.round(pos).astype(np.int64)
        frac = np.zeros_like(frac)
    elif method == "midpoint":
        frac = np.where(hi > lo, 0.5, 0.0)
    elif method != "linear":
        raise ValueError(f"keras.ops.quantile: unknown method {method!r}")
    a = _A.gather(xs, _tf_convert(lo.reshape(-1)), axis=ax)
    b = _A.gather(xs, _tf_convert(hi.reshape(-1)), axis=ax)
    f = _tf_convert(frac.reshape((-1,) + (1,) * (xs.aval.ndim - ax - 1)).astype(x.aval.dtype))
    out = a + (b - a) * f
    out = _tnp.moveaxis(out, ax, 0)
    if qs.ndim == 0:
        out = out[0]
    if keepdims:
        k = ax if axis is not None else None
        out = _A.expand_dims(out, (k if k is not None else 0) + (0 if qs.ndim == 0 else 1)) if k is not None else \
            _A.reshape(out, qs.shape + (1,) * nd)
    return out


def percentile(x, q, axis=None, method="linear", keepdims=False):
    return quantile(x, np.asarray(_tnp._val(q), np.float64) / 100.0, axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def argpartition(x, kth, axis=-1):
    """A full argsort: one of the partitions NumPy allows (every element before ``kth`` is no larger)."""
    return argsort(x, axis=axis)


def corrcoef(x):
    x = _floating(x)
    c = x - _M.reduce_mean(x, axis=1, keepdims=True)
    cov = _M.matmul(c, _A.transpose(c))
    d = _M.sqrt(_tnp.diagonal(cov))
    return cov / (_A.expand_dims(d, 1) * _A.expand_dims(d, 0))


def cdist(x, y):
    x, y = _promote(x, y)
    x, y = _floating(x), _floating(y)
    diff_ = _A.expand_dims(x, -2) - _A.expand_dims(y, -3)
    return _M.sqrt(_M.reduce_sum(_M.square(diff_), axis=-1))


def cholesky_inverse(x, upper=False):
    x = _floating(x)
    lower = _linalg.matrix_transpose(x) if upper else x
    return _linalg.inv(_M.matmul(lower, _linalg.matrix_transpose(lower)))


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    data, ids = _t(data), _t(segment_ids)
    n = int(np.max(ids.numpy())) + 1 if num_segments is None else num_segments
    return _SEG.unsorted_segment_min(data, ids, n)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    data, ids = _t(data), _t(segment_ids)
    n = int(np.max(ids.numpy())) + 1 if num_segments is None else num_segments
    return _SEG.unsorted_segment_prod(data, ids, n)


def sparse_sigmoid(x):
    x = _floating(x)
    return _M.clip_by_value((x + 1.0) / 2.0, 0.0, 1.0)


def depth_to_space(x, block_size, data_format="channels_last"):
    _nd_format(4, data_format)
    return _nn.depth_to_space(_t(x), block_size)


def space_to_depth(x, block_size, data_format="channels_last"):
    _nd_format(4, data_format)
    return _nn.space_to_depth(_t(x), block_size)


def psnr(x1, x2, max_val):
    a, b = _promote(x1, x2)
    a, b = _floating(a), _floating(b)
    mse = _M.reduce_mean(_M.square(a - b))
    return 20.0 * _M.log(_M.cast(max_val, a.aval.dtype)) / np.log(10.0).astype(a.aval.dtype) \
        - 10.0 * _M.log(mse) / np.log(10.0).astype(a.aval.dtype)


# --- core: control flow -------------------------------------------------------------------

def cond(pred, true_fn, false_fn):
    return _cf.cond(pred, true_fn, false_fn)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    single = not isinstance(loop_vars, (tuple, list))
    lv = (loop_vars,) if single else tuple(loop_vars)

    def c(*a):
        return cond(*a)

    def b(*a):
        out = body(*a)
        return (out,) if single else tuple(out)
    out = _cf.while_loop(c, b, lv, maximum_iterations=maximum_iterations)
    return out[0] if single else type(loop_vars)(out) if isinstance(loop_vars, list) else tuple(out)


def fori_loop(lower, upper, body_fun, init_val):
    return _cf.fori_loop(lower, upper, body_fun, init_val)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    return _cf.scan(f, init, xs=xs, length=length, reverse=reverse)


def associative_scan(f, elems, reverse=False, axis=0):
    """A sequential scan (Keras' result; the parallel algorithm is a speed choice)."""
    from ..util import nest
    leaves = nest.flatten(elems)
    n = _t(leaves[0]).aval.shape[axis]
    order = list(builtins.range(n))[::-1] if reverse else list(builtins.range(n))
    acc = None
    outs = []
    for i in order:
        cur = nest.pack_sequence_as(elems, [_A.gather(_t(x), i, axis=axis) for x in leaves])
        acc = cur if acc is None else (f(cur, acc) if reverse else f(acc, cur))
        outs.append(acc)
    if reverse:
        outs = outs[::-1]
    return nest.map_structure(lambda *xs: _A.stack(list(xs), axis=axis), *outs)


def map(f, xs):  # noqa: A001
    """``f`` of each slice of ``xs`` along axis 0, stacked (tapeflow.vectorized_map's loop: f's
    own output structure and dtypes)."""
    from ..ops.control_flow_ops import vectorized_map as vm
    return vm(f, xs)


def vectorized_map(function, elements):
    from ..ops.control_flow_ops import vectorized_map as vm
    return vm(function, elements)


def switch(index, branches, *operands):
    from ..ops.control_flow_ops import switch_case
    return switch_case(_t(index, np.int32), [lambda b=b: b(*operands) for b in branches])


def custom_gradient(f):
    from ..autodiff import custom_gradient as cg
    return cg(f)


# --- keras.ops.image (channels_last; tapeflow.image underneath) -------------------------------

def _image_format(data_format):
    if _data_format(data_format) != "channels_last":
        raise NotImplementedError("keras.ops.image: only data_format='channels_last' is implemented in tapeflow")


def _img_resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
                pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    _image_format(data_format)
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError("keras.ops.image.resize: crop_to_aspect_ratio / pad_to_aspect_ratio are not "
                                  "implemented in tapeflow")
    from .. import image
    x = _floating(images)
    return image.resize(x, list(size), method=interpolation, antialias=antialias)


def _img_rgb_to_grayscale(images, data_format=None):
    _image_format(data_format)
    from .. import image
    return image.rgb_to_grayscale(_floating(images))


def _img_rgb_to_hsv(images, data_format=None):
    _image_format(data_format)
    from .. import image
    return image.rgb_to_hsv(_floating(images))


def _img_hsv_to_rgb(images, data_format=None):
    _image_format(data_format)
    from .. import image
    return image.hsv_to_rgb(_floating(images))


def _img_extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    _image_format(data_format)
    from .. import image
    size = (size, size) if isinstance(size, int) else tuple(size)
    strides = size if strides is None else (strides, strides) if isinstance(strides, int) else tuple(strides)
    rates = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    x = _t(images)
    single = x.aval.ndim == 3
    if single:
        x = _A.expand_dims(x, 0)
    out = image.extract_patches(x, [1, *size, 1], [1, *strides, 1], [1, *rates, 1], padding.upper())
    return out[0] if single else out


def _crop_pad_box(shape, top, left, bottom, right, target_h, target_w, pad):
    word = "padding" if pad else "cropping"
    for a, b_, t, names in ((top, bottom, target_h, ("top", "bottom", "target_height")),
                            (left, right, target_w, ("left", "right", "target_width"))):
        if builtins.sum(v is not None for v in (a, b_, t)) != 2:
            raise ValueError(f"Must specify exactly two of {names[0]}_{word}, {names[1]}_{word}, {names[2]}. "
                             f"Received: {names[0]}_{word}={a}, {names[1]}_{word}={b_}, {names[2]}={t}")
    h, w = shape[-3], shape[-2]
    if target_h is None:
        target_h = h + (top or 0) + (bottom or 0) if pad else h - (top or 0) - (bottom or 0)
    if target_w is None:
        target_w = w + (left or 0) + (right or 0) if pad else w - (left or 0) - (right or 0)
    if top is None:
        top = (target_h - h - (bottom or 0)) if pad else (h - target_h - (bottom or 0))
    if left is None:
        left = (target_w - w - (right or 0)) if pad else (w - target_w - (right or 0))
    return int(top), int(left), int(target_h), int(target_w)


def _img_crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None, right_cropping=None,
                     target_height=None, target_width=None, data_format=None):
    _image_format(data_format)
    from .. import image
    x = _t(images)
    top, left, th, tw = _crop_pad_box(x.aval.shape, top_cropping, left_cropping, bottom_cropping, right_cropping,
                                      target_height, target_width, pad=False)
    return image.crop_to_bounding_box(x, top, left, th, tw)


def _img_pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
                    target_height=None, target_width=None, data_format=None):
    _image_format(data_format)
    from .. import image
    x = _t(images)
    top, left, th, tw = _crop_pad_box(x.aval.shape, top_padding, left_padding, bottom_padding, right_padding,
                                      target_height, target_width, pad=True)
    return image.pad_to_bounding_box(x, top, left, th, tw)


_IMAGE = {"resize": _img_resize, "rgb_to_grayscale": _img_rgb_to_grayscale, "rgb_to_hsv": _img_rgb_to_hsv,
          "hsv_to_rgb": _img_hsv_to_rgb, "extract_patches": _img_extract_patches, "crop_images": _img_crop_images,
          "pad_images": _img_pad_images}


# --- FFTs and complex views (wave 21: Keras 3's TF backend, on tf.signal) --------------------------
# Keras 3 passes complex values as (real, imag) tuples of float tensors (its backends' common form)

def _complex_from_tuple(x):
    from .. import signal as _signal  # noqa: F401  (tf.signal underneath)
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary."
                         f"Received: x={x}")
    re, im = _t(x[0]), _t(x[1])
    if re.aval.shape != im.aval.shape:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary."
                         "Both the real and imaginary parts should have the same shape. "
                         f"Received: x[0].shape = {re.aval.shape}, x[1].shape = {im.aval.shape}")
    if re.aval.dtype.kind != "f" or im.aval.dtype.kind != "f":
        raise ValueError(f"At least one tensor in input `x` is not of type float.Received: x={x}.")
    return _M.complex(re, im)


def _parts(z):
    return _M.real(z), _M.imag(z)


def fft(x):
    from .. import signal
    return _parts(signal.fft(_complex_from_tuple(x)))


def fft2(x):
    from .. import signal
    return _parts(signal.fft2d(_complex_from_tuple(x)))


def ifft2(x):
    # Keras 3's TF backend: the conjugate's fft2, conjugated and divided by h * w
    re, im = _t(x[0]), _t(x[1])
    h, w = re.aval.shape[-2], re.aval.shape[-1]
    fr, fi = fft2((re, -im))
    return fr / float(h * w), -fi / float(h * w)


def rfft(x, fft_length=None):
    from .. import signal
    return _parts(signal.rfft(_t(x), None if fft_length is None else [fft_length]))


def irfft(x, fft_length=None):
    from .. import signal
    return signal.irfft(_complex_from_tuple(x), None if fft_length is None else [fft_length])


def _stft_window(window, sequence_length, dtype, l_pad, r_pad):
    from .. import signal
    if isinstance(window, str):
        w = (signal.hann_window if window == "hann" else signal.hamming_window)(sequence_length, periodic=True,
                                                                                  dtype=dtype)
    else:
        w = _M.cast(_t(window), dtype)
    if len(w.aval.shape) != 1 or w.aval.shape[-1] != sequence_length:
        raise ValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape="
                         f"{w.aval.shape}")
    return _A.pad(w, [[l_pad, r_pad]])


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """keras.ops.stft (Keras 3's TF backend): reflect-padded by fft_length // 2 when centred, the
    window zero-padded to fft_length; returns (real, imag)."""
    from .. import signal
    x = _t(x)
    if x.aval.dtype.name not in ("float32", "float64"):
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={x.aval.dtype}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. Received: sequence_length="
                         f"{sequence_length}, fft_length={fft_length}")
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise ValueError(f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                         f"Received: window={window}")
    if center:
        pads = [[0, 0]] * (len(x.aval.shape) - 1) + [[fft_length // 2, fft_length // 2]]
        x = _A.pad(x, pads, mode="REFLECT")
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    win = None
    if window is not None:
        w = _stft_window(window, sequence_length, x.aval.dtype, l_pad, r_pad)

        def win(frame_length, dtype):
            return w
    return _parts(signal.stft(x, sequence_length + l_pad + r_pad, sequence_stride, fft_length=fft_length,
                              window_fn=win))


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """keras.ops.istft (Keras 3's TF backend): inverse_stft with the inverse window of the padded
    forward window, the centring padding cut off (or ``length`` samples kept)."""
    from .. import signal
    z = _complex_from_tuple(x)
    dtype = _M.real(z).aval.dtype
    frames = z.aval.shape[-2]
    expected = fft_length + sequence_stride * (frames - 1)
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    win = None
    if window is not None:
        w = _stft_window(window, sequence_length, dtype, l_pad, r_pad)
        win = signal.inverse_stft_window_fn(sequence_stride, lambda frame_length, dtype: w)
    out = signal.inverse_stft(z, sequence_length + l_pad + r_pad, sequence_stride, fft_length=fft_length,
                              window_fn=win)
    start = 0 if center is False else fft_length // 2
    if length is not None:
        end = start + length
    elif center is True:
        end = -(fft_length // 2)
    else:
        end = expected
    return out[..., start:end]


def _window_length(x):
    n = _A.get_static_value(x)
    if n is None:
        raise ValueError(f"keras.ops window: the length must be known when the op is built, got {x!r}")
    return int(n)


def hamming(x):
    """keras.ops.hamming: the symmetric Hamming window (Keras 3's TF backend: tf.signal's)."""
    from .. import signal
    return signal.hamming_window(_window_length(x), periodic=False)


def hanning(x):
    """keras.ops.hanning: the symmetric Hann window (tf.signal.hann_window(periodic=False))."""
    from .. import signal
    return signal.hann_window(_window_length(x), periodic=False)


def kaiser(x, beta):
    """keras.ops.kaiser: tf.signal.kaiser_window(x, beta), as Keras 3's TF backend."""
    from .. import signal
    return signal.kaiser_window(_window_length(x), beta=beta)


def bartlett(x):
    """keras.ops.bartlett: the triangular window 2n/(M-1) up to the middle, then down (floatx)."""
    m = _window_length(x)
    if m <= 1:
        return _A.ones([m], dtype=_FLOATX) if m == 1 else _t(np.zeros(0, _FLOATX))
    n = np.arange(m, dtype=np.float64)
    w = np.where(n <= (m - 1) / 2, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))
    return _t(w.astype(_FLOATX))


def blackman(x):
    """keras.ops.blackman: 0.42 - 0.5 cos(2 pi n / (M-1)) + 0.08 cos(4 pi n / (M-1)) (floatx; 1 for M = 1)."""
    m = _window_length(x)
    n = np.arange(m, dtype=np.float64)
    d = builtins.max(m - 1, 1)
    w = 0.42 - 0.5 * np.cos(2 * np.pi * n / d) + 0.08 * np.cos(4 * np.pi * n / d)
    return _t((np.ones(m) if m == 1 else w).astype(_FLOATX))


def view_as_complex(x):
    """keras.ops.view_as_complex: [..., 2] real -> [...] complex64 (Keras casts to complex64)."""
    x = _t(x)
    if len(x.aval.shape) < 1 or x.aval.shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real and imaginary). Received shape: "
                         f"{tuple(x.aval.shape)}")
    return _M.cast(x[..., 0], np.complex64) + 1j * _M.cast(x[..., 1], np.complex64)


def view_as_real(x):
    """keras.ops.view_as_real: complex [...] -> [..., 2] (real, imag)."""
    x = _t(x)
    return _A.stack([_M.real(x), _M.imag(x)], axis=-1)


def polar(abs_, angle):
    """keras.ops.polar: abs * (cos(angle) + i sin(angle)) (Keras 3: float tensors in, complex out)."""
    a, t = _t(abs_), _t(angle)
    return _complex_from_tuple((a * _M.cos(t), a * _M.sin(t)))

# wave 21 (keras21): histogram, the NaN-quantiles, correlate, extract_sequences, fold/unfold, adaptive
# pooling, view, lu_factor, jvp, rearrange (their own module: compositions of the above); the windows are
# the ones above (cplx21's, on tf.signal as Keras 3's TF backend computes them)
from ._ops_more import (histogram, nanquantile, nanpercentile, nanmedian, correlate,  # noqa: E402
                        extract_sequences, unfold, fold,
                        adaptive_average_pool, adaptive_max_pool, view, lu_factor, jvp, rearrange)


# --- namespaces and the names left out ----------------------------------------------------

#: the Keras 3 ops tapeflow does not implement (FFT, signal windows, image ops, CTC, ...): a
#: use names the op, never a bare AttributeError
_MISSING_WHAT = "not implemented in tapeflow's keras.ops (see docs/differences.md)"


def __getattr__(name):
    # UnsupportedFeatureError: a NotImplementedError and an AttributeError, so hasattr(ops, "fft") is False
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedFeatureError(f"keras.ops.{name}: {_MISSING_WHAT}")


def _namespace(name, names):
    mod = _types.ModuleType(f"{__name__}.{name}", f"keras.ops.{name}")
    g = globals()
    for n in names:
        if n in g:
            setattr(mod, n, g[n])

    def missing(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise UnsupportedFeatureError(f"keras.ops.{name}.{attr}: {_MISSING_WHAT}")
    mod.__getattr__ = missing
    return mod


_NN_NAMES = ("relu", "relu6", "sigmoid", "softplus", "softsign", "silu", "swish", "log_sigmoid", "leaky_relu", "elu",
             "selu", "celu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "soft_shrink",
             "hard_shrink", "tanh_shrink", "squareplus", "sparse_plus", "threshold", "softmax", "log_softmax",
             "moments", "batch_normalization", "normalize", "rms_normalization", "layer_normalization",
             "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy", "conv",
             "depthwise_conv", "max_pool", "average_pool", "dot_product_attention", "one_hot", "multi_hot",
             "sparse_sigmoid", "depth_to_space", "space_to_depth", "psnr", "conv_transpose", "separable_conv",
             "ctc_loss", "ctc_decode", "sparsemax", "polar", "adaptive_average_pool", "adaptive_max_pool", "fold",
             "unfold")
_LINALG_NAMES = ("cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "lstsq", "norm", "qr", "solve",
                 "solve_triangular", "svd", "lu_factor", "jvp")
nn = _namespace("nn", _NN_NAMES)
linalg = _namespace("linalg", _LINALG_NAMES)
#: keras.ops.math's names that keras.ops.numpy does not have
_MATH_ONLY = ("fft", "fft2", "ifft2", "rfft", "irfft", "stft", "istft", "view_as_complex", "view_as_real")
math = _namespace("math", _MATH_ONLY)
numpy = _namespace("numpy", [n for n in list(globals()) if not n.startswith("_")
                             and callable(globals()[n]) and n not in _NN_NAMES and n not in _MATH_ONLY])
image = _namespace("image", ())
for _name, _fn in _IMAGE.items():
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(image, _name, _fn)

del _name
