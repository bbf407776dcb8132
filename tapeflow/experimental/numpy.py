"""``tf.experimental.numpy`` (``import tapeflow.experimental.numpy as tnp``): TF's NumPy API.

Every function here is a composition of tapeflow's ops (so tapes differentiate it and
``tapeflow.function`` traces it); what this module adds is NumPy's *dtype* behaviour, as
TF 2.21's tnp has it (checked against TF, ``tests/tf_reference/make_tnp_reference.py``):

- creation takes NumPy's defaults: ``asarray(1)`` is int64, ``asarray(1.)`` float64 (float32
  once ``experimental_enable_numpy_behavior(prefer_float32=True)``), ``ones(3)`` float64;
- binary functions promote their operands with NumPy's rules (``add(int32, float32)`` is
  float64; a Python scalar is weak: ``add(float32, 1.5)`` stays float32);
- integer inputs of float functions (``sqrt``, ``mean``, ``true_divide``) become float64, and
  ``sum``/``prod`` of small integers or bools accumulate in int64.

The ndarray is ``tapeflow.Tensor`` (``tnp.ndarray is tf.Tensor``, as in TF). The promotion
rule is one function (``_result_type``) that ``tapeflow.keras.ops`` shares with its own
lattice (Keras' ``result_type``: ``int32 + float32`` is float32 there).

``experimental_enable_numpy_behavior()`` turns on what TF turns on: NumPy's promotion in the
Tensor operators (``int32_tensor + float32_tensor`` is float64; the record-level hook is
``core.primitive.NUMPY_MODE``, read where operands are adopted, so eager and traced code
promote alike), NumPy-style indexing (``x[:, (True, False, True)]``, ``x[1, (0, 0, 1), idx]``)
and the NumPy methods on tensors (``.ravel()``, ``.clip()``, ``.mean()``, ``.tolist()``, ...).
"""
from __future__ import annotations

import builtins
import math as _pymath
import numbers
import sys as _sys
import types as _types

import numpy as np

from .. import linalg as _linalg
from ..core import dtypes as _dt
from ..core.primitive import NUMPY_MODE as _MODE
from ..core.tensor import Tensor, Variable, convert_to_tensor as _to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentIndexError, FailedPreconditionError
from ..ops import array_ops as _A
from ..ops import math_ops as _M
from ..ops import nn_ops as _N
from ..ops import random_ops as _R
from ..ops import segment_ops as _SEG

ndarray = Tensor
newaxis = None
inf = float("inf")
pi = _pymath.pi
e = _pymath.e

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
int_, float_ = np.int64, np.float64
complex64, complex128, complex_ = np.complex64, np.complex128, np.complex128
object_, string_, unicode_ = np.object_, np.bytes_, np.str_
inexact = np.inexact
finfo, iinfo, issubdtype, promote_types = np.finfo, np.iinfo, np.issubdtype, np.promote_types


# --- dtypes -------------------------------------------------------------------------------

# TF 2.21's "all" and "safe" promotion tables (the JAX-like lattice of the
# tf_numpy_type_promotion guide), recorded from TF (`a + b` for each pair; rows: the left operand,
# Python scalars weak). "X": TF raises TypeError (SAFE mode's risky promotions); "-": TF makes no
# promotion (the op's own rule decides: bool + bool).
_ALL = """
         bool    uint8   uint16  uint32  uint64  int8    int16   int32   int64   float16 float32 float64 bfloat16
bool     -       u8      u16     u32     u64     i8      i16     i32     i64     f16     f32     f64     bf16
uint8    u8      u8      u16     u32     u64     i16     i16     i32     i64     f16     f32     f64     bf16
uint16   u16     u16     u16     u32     u64     i32     i32     i32     i64     f16     f32     f64     bf16
uint32   u32     u32     u32     u32     u64     i64     i64     i64     i64     f16     f32     f64     bf16
uint64   u64     u64     u64     u64     u64     f64     f64     f64     f64     f16     f32     f64     bf16
int8     i8      i16     i32     i64     f64     i8      i16     i32     i64     f16     f32     f64     bf16
int16    i16     i16     i32     i64     f64     i16     i16     i32     i64     f16     f32     f64     bf16
int32    i32     i32     i32     i64     f64     i32     i32     i32     i64     f16     f32     f64     bf16
int64    i64     i64     i64     i64     f64     i64     i64     i64     i64     f16     f32     f64     bf16
float16  f16     f16     f16     f16     f16     f16     f16     f16     f16     f16     f32     f64     f32
float32  f32     f32     f32     f32     f32     f32     f32     f32     f32     f32     f32     f64     f32
float64  f64     f64     f64     f64     f64     f64     f64     f64     f64     f64     f64     f64     f64
bfloat16 bf16    bf16    bf16    bf16    bf16    bf16    bf16    bf16    bf16    f32     f32     f64     bf16
pyint    i32     u8      u16     u32     u64     i8      i16     i32     i64     f16     f32     f64     bf16
pyfloat  f32     f64     f64     f64     f64     f64     f64     f64     f64     f16     f32     f64     bf16
pybool   -       X       X       X       u64     X       X       i32     i64     f16     f32     f64     X
"""
_SAFE = """
         bool    uint8   uint16  uint32  uint64  int8    int16   int32   int64   float16 float32 float64 bfloat16
bool     -       u8      u16     u32     u64     i8      i16     i32     i64     f16     f32     f64     bf16
uint8    u8      u8      u16     u32     u64     X       i16     i32     i64     f16     f32     f64     bf16
uint16   u16     u16     u16     u32     u64     X       X       i32     i64     X       f32     f64     X
uint32   u32     u32     u32     u32     u64     X       X       X       i64     X       X       f64     X
uint64   u64     u64     u64     u64     u64     X       X       X       X       X       X       X       X
int8     i8      X       X       X       X       i8      i16     i32     i64     f16     f32     f64     bf16
int16    i16     i16     X       X       X       i16     i16     i32     i64     X       f32     f64     X
int32    i32     i32     i32     X       X       i32     i32     i32     i64     X       X       f64     X
int64    i64     i64     i64     i64     X       i64     i64     i64     i64     X       X       X       X
float16  f16     f16     X       X       X       f16     X       X       X       f16     f32     f64     X
float32  f32     f32     f32     X       X       f32     f32     X       X       f32     f32     f64     f32
float64  f64     f64     f64     f64     X       f64     f64     f64     X       f64     f64     f64     f64
bfloat16 bf16    bf16    X       X       X       bf16    X       X       X       X       f32     f64     bf16
pyint    i32     u8      u16     u32     u64     i8      i16     i32     i64     f16     f32     f64     bf16
pyfloat  f32     X       X       X       X       X       X       X       X       f16     f32     f64     bf16
pybool   -       X       X       X       u64     X       X       i32     i64     f16     f32     f64     X
"""
_SHORT = {"u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
          "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}
_WEAK_AS = {"pyint": "int32", "pyfloat": "float32", "pybool": "bool"}


def _kind_text(k):
    return f"(<dtype: '{_WEAK_AS[k]}'>, weak=True)" if isinstance(k, str) else f"(<dtype: '{k.name}'>, weak=False)"


def _lattice(text, mode):
    """The table as {(kind, kind): dtype | TypeError}, both operand orders (TF's table is symmetric)."""
    rows = [line.split() for line in text.strip().splitlines()]
    cols = [np.dtype(c) for c in rows[0]]
    table = {}
    for row in rows[1:]:
        k = row[0] if row[0].startswith("py") else np.dtype(row[0])
        for c, cell in zip(cols, row[1:]):
            for x, y in ((k, c), (c, k)):
                if cell == "-" or (x, y) in table:
                    continue
                table[(x, y)] = np.dtype(_SHORT[cell]) if cell != "X" else TypeError(
                    f"In promotion mode PromoMode.{mode}, implicit dtype promotion between {_kind_text(x)} and "
                    f"{_kind_text(y)} is disallowed. You need to explicitly specify the dtype in your op, or relax "
                    "your dtype promotion rules (such as from SAFE mode to ALL mode).")
    return table


_LATTICES = {}


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """TF's switch: promotion in Tensor operators, NumPy indexing, NumPy methods on tensors.
    ``prefer_float32``: Python floats become float32 (``asarray(1.)``, ``add(1., 2.)``).
    ``dtype_conversion_mode``: ``"legacy"`` NumPy's promotion (``int32 + float32`` is float64);
    ``"all"`` TF's JAX-like lattice (``int32 + float32`` is float32, ``int64 + float16``
    float16); ``"safe"`` the lattice less its risky promotions, which raise TypeError. (TF's
    weak tensors, ``weak=True`` in its reprs, are not modelled: a tensor is always strong.)"""
    if dtype_conversion_mode in ("safe", "all"):
        # TF 2.21 logs this on every call that asks for the new promotion (its text, its logger)
        from ..util.tf_logger import get_logger
        get_logger().warning("UserWarning: enabling the new type promotion must happen at the beginning of the "
                             "program. Please ensure no TF APIs have been used yet.")
    mode = str(dtype_conversion_mode).lower()
    if mode not in ("legacy", "all", "safe"):
        raise ValueError(f"experimental_enable_numpy_behavior: dtype_conversion_mode must be 'legacy', 'all' or "
                         f"'safe', got {dtype_conversion_mode!r}")
    _MODE.enabled = True
    _MODE.prefer_float32 = bool(prefer_float32)
    if mode == "legacy":
        _MODE.lattice = None
    else:
        if mode not in _LATTICES:
            _LATTICES[mode] = _lattice(_ALL if mode == "all" else _SAFE, mode.upper())
        _MODE.lattice = _LATTICES[mode]


def _set_numpy_behavior(enabled, prefer_float32=False, mode="legacy"):
    """Tests only: TF has no way back from the switch; tapeflow's tests need one."""
    experimental_enable_numpy_behavior(prefer_float32, mode)
    if not enabled:
        _MODE.enabled = False
        _MODE.lattice = None


def _default_float():
    """The float integers become in NumPy's float functions (sqrt, mean, true_divide): float64,
    prefer_float32 or not (TF 2.21: prefer_float32 changes how Python floats convert, not this)."""
    return np.dtype(np.float64)


_PY_TYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64), bool: np.dtype(np.bool_)}


def _np(d):
    """A dtype argument as NumPy reads it: Python's ``float`` is float64, ``int`` int64."""
    if d in _PY_TYPES:
        return _PY_TYPES[d]
    return _dt.np_dtype(d)


def _dtype_of(x):
    """What NumPy's result_type sees of ``x``: a dtype, or the Python scalar itself (weak)."""
    if isinstance(x, Tensor):
        return x.aval.dtype
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.generic):
        return x
    if isinstance(x, float) and not isinstance(x, np.generic):
        return np.float32(x) if _MODE.prefer_float32 else x
    if isinstance(x, numbers.Number) and not isinstance(x, np.generic):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return asarray(x).aval.dtype


def result_type(*arrays_and_dtypes):
    """NumPy's ``result_type`` over tensors, arrays, dtypes and Python scalars (weak)."""
    ds = []
    for x in arrays_and_dtypes:
        if isinstance(x, (type, np.dtype, _dt.DType, str)):
            ds.append(_np(x))
        else:
            ds.append(_dtype_of(x))
    d = np.result_type(*ds)
    return d


def _result_type(*xs):
    return np.dtype(result_type(*xs))


def _weak_python(x):
    return isinstance(x, (int, float, bool)) and not isinstance(x, np.generic)


def asarray(a, dtype=None):
    """The value as a tensor: a tensor passes through (cast when ``dtype`` differs), anything
    else takes NumPy's dtype (``asarray(1)`` int64, ``asarray(1.)`` float64 or, with
    prefer_float32, float32)."""
    if isinstance(a, Variable):
        a = a.read_value()
    if isinstance(a, Tensor):
        return a if dtype is None else _M.cast(a, _np(dtype))
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(v, Tensor) for v in _flat(a)):
        return _A.stack([asarray(v, dtype) for v in a]) if len(a) else asarray(np.asarray(a), dtype)
    if dtype is None:
        arr = np.asarray(a)
        if _MODE.prefer_float32 and arr.dtype == np.float64 and not isinstance(a, (np.ndarray, np.generic)) \
                and _only_python(a):
            arr = arr.astype(np.float32)
    else:
        arr = np.asarray(np.asarray(a), dtype=_np(dtype))
    if arr.dtype.kind in "OUS":   # (complex arrays: complex64/128 tensors since wave 21)
        raise TypeError(f"tnp.asarray: cannot make a tensor of {arr.dtype} values (tapeflow's tensors are numeric)")
    return _to_tensor(arr)


def _flat(a):
    for v in a:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _only_python(a):
    if isinstance(a, (list, tuple)):
        return builtins.all(_only_python(v) for v in a)
    return _weak_python(a)


def array(val, dtype=None, copy=True, ndmin=0):
    t = asarray(val, dtype)
    while t.aval.ndim < ndmin:
        t = _A.expand_dims(t, 0)
    return t


asanyarray = ascontiguousarray = asarray


def copy(a):
    return _A.identity(asarray(a))


def _promote(*xs, dtype=None):
    """Each operand as a tensor of NumPy's result dtype of all of them."""
    d = _result_type(*xs) if dtype is None else _np(dtype)
    return [asarray(x, d) if not isinstance(x, Tensor) or x.aval.dtype != d else x for x in xs]


def _float_of(x):
    """``x`` as a tensor, integers and bools as the default float (NumPy's float functions)."""
    x = asarray(x)
    if x.aval.dtype.kind not in "fc":
        x = _M.cast(x, _default_float())
    return x


# --- elementwise --------------------------------------------------------------------------

def _binary(fn, name):
    def f(x1, x2):
        a, b = _promote(x1, x2)
        return fn(a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: the operands promoted with NumPy's rules, then tapeflow's op."
    return f


def _unary_float(fn, name):
    def f(x):
        return fn(_float_of(x))
    f.__name__ = f.__qualname__ = name
    return f


def _unary(fn, name):
    def f(x):
        return fn(asarray(x))
    f.__name__ = f.__qualname__ = name
    return f


def _bool_or(tf_fn, bool_fn):
    def f(a, b):
        if a.aval.dtype == np.bool_:
            return bool_fn(a, b)
        return tf_fn(a, b)
    return f


add = _binary(_bool_or(_M.add, _M.logical_or), "add")
subtract = _binary(_M.subtract, "subtract")
multiply = _binary(_bool_or(_M.multiply, _M.logical_and), "multiply")
maximum = _binary(_M.maximum, "maximum")
minimum = _binary(_M.minimum, "minimum")
equal = _binary(_M.equal, "equal")
not_equal = _binary(_M.not_equal, "not_equal")
less = _binary(_M.less, "less")
less_equal = _binary(_M.less_equal, "less_equal")
greater = _binary(_M.greater, "greater")
greater_equal = _binary(_M.greater_equal, "greater_equal")
floor_divide = _binary(_M.floordiv, "floor_divide")
mod = remainder = _binary(_M.floormod, "mod")
logical_and = _binary(lambda a, b: _M.logical_and(_bool(a), _bool(b)), "logical_and")
logical_or = _binary(lambda a, b: _M.logical_or(_bool(a), _bool(b)), "logical_or")
logical_xor = _binary(lambda a, b: _M.logical_xor(_bool(a), _bool(b)), "logical_xor")


def _bool(x):
    return x if x.aval.dtype == np.bool_ else _M.not_equal(x, _M.cast(0, x.aval.dtype))


def logical_not(x):
    return _M.logical_not(_bool(asarray(x)))


def power(x1, x2):
    a, b = _promote(x1, x2)
    return _M.pow(a, b)


def float_power(x1, x2):
    # TF 2.21's float_power is power (int32 ** 2 stays int32), not NumPy's float64 power
    return power(x1, x2)


def true_divide(x1, x2):
    """Integers divide as the default float (NumPy's true division)."""
    d = _result_type(x1, x2)
    if d.kind not in "fc":
        d = _default_float()
    a, b = _promote(x1, x2, dtype=d)
    return _M.divide(a, b)


divide = true_divide


def divmod(x1, x2):  # noqa: A001
    return floor_divide(x1, x2), mod(x1, x2)


def arctan2(x1, x2):
    d = _result_type(x1, x2)
    if d.kind != "f":
        d = _default_float()
    return _M.atan2(*_promote(x1, x2, dtype=d))


def hypot(x1, x2):
    d = _result_type(x1, x2)
    if d.kind != "f":
        d = _default_float()
    a, b = _promote(x1, x2, dtype=d)
    return _M.sqrt(a * a + b * b)


def logaddexp(x1, x2):
    d = _result_type(x1, x2)
    if d.kind != "f":
        d = _default_float()
    a, b = _promote(x1, x2, dtype=d)
    m = _M.maximum(a, b)
    return m + _M.log1p(_M.exp(-_M.abs(a - b)))


def logaddexp2(x1, x2):
    d = _result_type(x1, x2)
    if d.kind != "f":
        d = _default_float()
    a, b = _promote(x1, x2, dtype=d)
    ln2 = np.log(2.0)
    m = _M.maximum(a, b)
    return m + _M.log1p(_M.pow(_M.cast(2.0, d), -_M.abs(a - b))) / ln2


def heaviside(x1, x2):
    a, b = _promote(x1, x2)
    zero = _A.zeros_like(a)
    return _M.where(a < 0, zero, _M.where(a > 0, zero + 1, b))


def nextafter(x1, x2):
    from ..ops.special_ops import nextafter as nx
    return nx(*_promote(x1, x2))


def gcd(x1, x2):
    a, b = _promote(x1, x2)
    return _M.cast(_to_tensor(np.gcd(a.numpy(), b.numpy())), a.aval.dtype)


def lcm(x1, x2):
    a, b = _promote(x1, x2)
    return _M.cast(_to_tensor(np.lcm(a.numpy(), b.numpy())), a.aval.dtype)


def _bitwise(name):
    from .. import bitwise as _B
    fn = getattr(_B, name)

    def f(x1, x2):
        a, b = _promote(x1, x2)
        if a.aval.dtype == np.bool_:
            return {"bitwise_and": _M.logical_and, "bitwise_or": _M.logical_or,
                    "bitwise_xor": _M.logical_xor}[name](a, b)
        return fn(a, b)
    f.__name__ = name
    return f


bitwise_and = _bitwise("bitwise_and")
bitwise_or = _bitwise("bitwise_or")
bitwise_xor = _bitwise("bitwise_xor")


def bitwise_not(x):
    x = asarray(x)
    if x.aval.dtype == np.bool_:
        return _M.logical_not(x)
    from .. import bitwise as _B
    return _B.invert(x)


sqrt = _unary_float(_M.sqrt, "sqrt")
exp = _unary_float(_M.exp, "exp")
expm1 = _unary_float(_M.expm1, "expm1")
log = _unary_float(_M.log, "log")
log1p = _unary_float(_M.log1p, "log1p")
sin = _unary_float(_M.sin, "sin")
cos = _unary_float(_M.cos, "cos")
tan = _unary_float(_M.tan, "tan")
sinh = _unary_float(_M.sinh, "sinh")
cosh = _unary_float(_M.cosh, "cosh")
tanh = _unary_float(_M.tanh, "tanh")
arcsin = _unary_float(_M.asin, "arcsin")
arccos = _unary_float(_M.acos, "arccos")
arctan = _unary_float(_M.atan, "arctan")
arcsinh = _unary_float(_M.asinh, "arcsinh")
arccosh = _unary_float(_M.acosh, "arccosh")
arctanh = _unary_float(_M.atanh, "arctanh")
exp2 = _unary_float(lambda x: _M.pow(_M.cast(2.0, x.aval.dtype), x), "exp2")
log2 = _unary_float(lambda x: _M.log(x) / np.log(2.0).astype(x.aval.dtype), "log2")
log10 = _unary_float(lambda x: _M.log(x) / np.log(10.0).astype(x.aval.dtype), "log10")
cbrt = _unary_float(lambda x: _M.sign(x) * _M.pow(_M.abs(x), _M.cast(1.0 / 3.0, x.aval.dtype)), "cbrt")
reciprocal = _unary(lambda x: _M.reciprocal(x) if x.aval.dtype.kind == "f" else _M.floordiv(_A.ones_like(x), x),
                    "reciprocal")
deg2rad = radians = _unary_float(lambda x: x * np.asarray(np.pi / 180.0, x.aval.dtype), "deg2rad")
rad2deg = degrees = _unary_float(lambda x: x * np.asarray(180.0 / np.pi, x.aval.dtype), "rad2deg")
negative = _unary(_M.negative, "negative")
positive = _unary(lambda x: x, "positive")
square = _unary(_M.square, "square")
sign = _unary(_M.sign, "sign")
floor = _unary_float(_M.floor, "floor")
ceil = _unary_float(_M.ceil, "ceil")
fix = _unary_float(lambda x: _M.where(x < 0, _M.ceil(x), _M.floor(x)), "fix")
isfinite = _unary(lambda x: _M.is_finite(x) if x.aval.dtype.kind == "f" else _A.ones_like(x, dtype=np.bool_),
                  "isfinite")
isnan = _unary(lambda x: _M.is_nan(x) if x.aval.dtype.kind == "f" else _A.zeros_like(x, dtype=np.bool_), "isnan")
isinf = _unary(lambda x: _M.is_inf(x) if x.aval.dtype.kind == "f" else _A.zeros_like(x, dtype=np.bool_), "isinf")
isposinf = _unary(lambda x: _M.logical_and(isinf(x), x > 0), "isposinf")
isneginf = _unary(lambda x: _M.logical_and(isinf(x), x < 0), "isneginf")
signbit = _unary(lambda x: x < 0 if x.aval.dtype.kind != "f" else
                 _to_tensor(np.signbit(x.numpy())) if x._v is not None else x < 0, "signbit")
sinc = _unary_float(lambda x: _M.where(_M.equal(x, 0.0), _A.ones_like(x), _M.sin(np.asarray(np.pi, x.aval.dtype) * x)
                                       / _M.where(_M.equal(x, 0.0), _A.ones_like(x),
                                                  np.asarray(np.pi, x.aval.dtype) * x)), "sinc")


def abs(x):  # noqa: A001
    return _M.abs(asarray(x))


absolute = fabs = abs


def around(a, decimals=0):
    a = asarray(a)
    if a.aval.dtype.kind != "f":
        return a
    if decimals == 0:
        return _M.round(a)
    f = np.asarray(10.0 ** decimals, a.aval.dtype)
    return _M.round(a * f) / f


round = around  # noqa: A001


def clip(a, a_min, a_max):
    a = asarray(a)
    if a_min is not None:
        a, lo = _promote(a, a_min)
        a = _M.maximum(a, lo)
    if a_max is not None:
        a, hi = _promote(a, a_max)
        a = _M.minimum(a, hi)
    return a


def real(val):
    return _M.real(asarray(val))   # (complex64 -> float32; a real tensor as it is)


def imag(val):
    return _M.imag(asarray(val))


def conj(x):
    return _M.conj(asarray(x))


conjugate = conj


def angle(z, deg=False):
    a = asarray(z)
    if a.aval.dtype.kind == "c":
        r = _M.angle(a)
        return r * (180.0 / np.pi) if deg else r
    z = _float_of(z)
    return _M.where(z < 0, _A.ones_like(z) * np.asarray(180.0 if deg else np.pi, z.aval.dtype), _A.zeros_like(z))


def iscomplex(x):
    a = asarray(x)
    return _M.not_equal(_M.imag(a), 0) if a.aval.dtype.kind == "c" else _A.zeros_like(a, dtype=np.bool_)


def isreal(x):
    a = asarray(x)
    return _M.equal(_M.imag(a), 0) if a.aval.dtype.kind == "c" else _A.ones_like(a, dtype=np.bool_)


def iscomplexobj(x):
    return asarray(x).aval.dtype.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def isscalar(num):
    if isinstance(num, Tensor):
        return num.aval.ndim == 0
    return np.isscalar(num)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote(a, b)
    if a.aval.dtype.kind != "f":
        a, b = _M.cast(a, _default_float()), _M.cast(b, _default_float())
    d = a.aval.dtype
    close = _M.less_equal(_M.abs(a - b), np.asarray(atol, d) + np.asarray(rtol, d) * _M.abs(b))
    close = _M.logical_or(close, _M.equal(a, b))
    if equal_nan:
        close = _M.logical_or(close, _M.logical_and(_M.is_nan(a), _M.is_nan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _M.reduce_all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.aval.shape != a2.aval.shape:
        return asarray(False)
    return _M.reduce_all(equal(a1, a2))


def where(condition, x=None, y=None):
    condition = _bool(asarray(condition))
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("tnp.where: either both or neither of x and y should be given")
    x, y = _promote(x, y)
    return _M.where(condition, x, y)


def select(condlist, choicelist, default=0):
    out = asarray(default)
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, v, out)
    return out


def nonzero(a):
    """Per axis, the indices of the true/nonzero elements in row-major order, each a
    ``boolean_mask`` of that axis' index grid: traceable (the count is an unknown dimension; under an
    input_signature's None, tf.where's run-time coordinates)."""
    a = _bool(asarray(a))
    shape = a.aval.shape
    if None in shape:
        # an input_signature's None: no constant grid of positions; tf.where's coordinates (unravelled by
        # the run-time shape), one column per axis
        idx = _A._where_indices(a)
        return tuple(idx[:, d] for d in builtins.range(len(shape)))
    out = []
    for d, n in enumerate(shape):
        grid = np.broadcast_to(np.arange(n, dtype=np.int64).reshape([-1 if k == d else 1 for k in range(len(shape))]),
                               shape)
        out.append(_A.boolean_mask(_to_tensor(np.ascontiguousarray(grid)), a))
    return tuple(out)


def polyval(p, x):
    p, x = asarray(p), asarray(x)
    d = _result_type(p, x)
    p, x = _M.cast(p, d), _M.cast(x, d)
    out = _A.zeros_like(x)
    for i in builtins.range(p.aval.shape[0]):
        out = out * x + p[i]
    return out


# --- reductions ---------------------------------------------------------------------------

def _axis(axis):
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _reduce(fn, a, axis, dtype, keepdims, int_to=None):
    a = asarray(a)
    if dtype is not None:
        a = _M.cast(a, _np(dtype))
    elif int_to is not None and a.aval.dtype.kind in "biu":
        to = int_to() if callable(int_to) else int_to
        if np.dtype(to).kind == "f" or a.aval.dtype.itemsize < np.dtype(to).itemsize or a.aval.dtype.kind == "b":
            a = _M.cast(a, to)
    return fn(a, axis=_axis(axis), keepdims=bool(keepdims))


def sum(a, axis=None, dtype=None, keepdims=None):  # noqa: A001
    return _reduce(_M.reduce_sum, a, axis, dtype, keepdims, np.int64)


def prod(a, axis=None, dtype=None, keepdims=None):
    return _reduce(_M.reduce_prod, a, axis, dtype, keepdims, np.int64)


def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    return _reduce(_M.reduce_mean, a, axis, dtype, keepdims, _default_float)


def amax(a, axis=None, out=None, keepdims=None):
    a = asarray(a)
    if a.aval.dtype == np.bool_:
        return _M.reduce_any(a, axis=_axis(axis), keepdims=bool(keepdims))
    return _M.reduce_max(a, axis=_axis(axis), keepdims=bool(keepdims))


def amin(a, axis=None, out=None, keepdims=None):
    a = asarray(a)
    if a.aval.dtype == np.bool_:
        return _M.reduce_all(a, axis=_axis(axis), keepdims=bool(keepdims))
    return _M.reduce_min(a, axis=_axis(axis), keepdims=bool(keepdims))


max = amax  # noqa: A001
min = amin  # noqa: A001


def all(a, axis=None, keepdims=None):  # noqa: A001
    return _M.reduce_all(_bool(asarray(a)), axis=_axis(axis), keepdims=bool(keepdims))


def any(a, axis=None, keepdims=None):  # noqa: A001
    return _M.reduce_any(_bool(asarray(a)), axis=_axis(axis), keepdims=bool(keepdims))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    a = _float_of(asarray(a) if dtype is None else asarray(a, dtype))
    m = _M.reduce_mean(a, axis=_axis(axis), keepdims=True)
    sq = _M.square(a - m)
    if ddof == 0:
        return _M.reduce_mean(sq, axis=_axis(axis), keepdims=bool(keepdims))
    n = _count(a, axis)
    return _M.reduce_sum(sq, axis=_axis(axis), keepdims=bool(keepdims)) / np.asarray(n - ddof, a.aval.dtype)


def _count(a, axis):
    shape = a.aval.shape
    if axis is None:
        return int(np.prod(shape))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return int(np.prod([shape[ax] for ax in axes]))


def std(a, axis=None, keepdims=None):
    return _M.sqrt(var(a, axis=axis, keepdims=keepdims))


def ptp(a, axis=None, keepdims=None):
    return amax(a, axis=axis, keepdims=keepdims) - amin(a, axis=axis, keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False):
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis=axis)
        wsum = asarray(_count(a, axis), avg.aval.dtype)
    else:
        a, w = _promote(a, weights)
        if a.aval.dtype.kind != "f":
            a, w = _M.cast(a, _default_float()), _M.cast(w, _default_float())
        if w.aval.ndim == 1 and a.aval.ndim > 1 and axis is not None:
            shape = [1] * a.aval.ndim
            shape[axis] = -1
            w = _A.reshape(w, shape)
        wsum = _M.reduce_sum(w * _A.ones_like(a), axis=axis)
        avg = _M.reduce_sum(a * w, axis=axis) / wsum
    return (avg, wsum) if returned else avg


def count_nonzero(a, axis=None):
    return _M.reduce_sum(_M.cast(_bool(asarray(a)), np.int64), axis=_axis(axis))


def nansum(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    if a.aval.dtype.kind == "f":
        a = _M.where(_M.is_nan(a), _A.zeros_like(a), a)
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    if a.aval.dtype.kind == "f":
        a = _M.where(_M.is_nan(a), _A.ones_like(a), a)
    return prod(a, axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=None):
    a = _float_of(a)
    ok = _M.logical_not(_M.is_nan(a))
    n = _M.reduce_sum(_M.cast(ok, a.aval.dtype), axis=_axis(axis), keepdims=bool(keepdims))
    return nansum(a, axis=axis, keepdims=keepdims) / n


def argmax(a, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = _A.reshape(a, [-1]), 0
    return _M.argmax(a, axis=axis, output_type=np.int64)


def argmin(a, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = _A.reshape(a, [-1]), 0
    return _M.argmin(a, axis=axis, output_type=np.int64)


def cumsum(a, axis=None, dtype=None):
    a = asarray(a)
    if axis is None:
        a, axis = _A.reshape(a, [-1]), 0
    if dtype is not None:
        a = _M.cast(a, _np(dtype))
    elif a.aval.dtype.kind in "biu" and (a.aval.dtype.itemsize < 8):   # (unsigned too, as TF's tnp: uint8 -> int64)
        a = _M.cast(a, np.int64)
    return _M.cumsum(a, axis=axis)


def cumprod(a, axis=None, dtype=None):
    a = asarray(a)
    if axis is None:
        a, axis = _A.reshape(a, [-1]), 0
    if dtype is not None:
        a = _M.cast(a, _np(dtype))
    elif a.aval.dtype.kind in "biu" and (a.aval.dtype.itemsize < 8):   # (unsigned too, as TF's tnp: uint8 -> int64)
        a = _M.cast(a, np.int64)
    return _M.cumprod(a, axis=axis)


def diff(a, n=1, axis=-1):
    a = asarray(a)
    if a.aval.ndim == 0:   # (axis % 0 raised ZeroDivisionError; TF: IndexError, Keras: ValueError)
        raise InvalidArgumentIndexError("diff: requires input that is at least one dimensional, got a scalar")
    ax = axis % a.aval.ndim
    for _ in builtins.range(n):
        hi = [builtins.slice(None)] * a.aval.ndim
        lo = [builtins.slice(None)] * a.aval.ndim
        hi[ax], lo[ax] = builtins.slice(1, None), builtins.slice(None, -1)
        if a.aval.dtype == np.bool_:
            a = _M.not_equal(a[tuple(hi)], a[tuple(lo)])
        else:
            a = a[tuple(hi)] - a[tuple(lo)]
    return a


# --- creation -----------------------------------------------------------------------------

def _creation_dtype(dtype):
    """A creation function's dtype: None and Python's float are float64 (prefer_float32 or not:
    TF 2.21's ``ones(3)`` is float64 either way)."""
    return np.dtype(np.float64) if dtype is None else _np(dtype)


def _shape(shape):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def zeros(shape, dtype=float):
    return _A.zeros(_shape(shape), dtype=_creation_dtype(dtype))


def ones(shape, dtype=float):
    return _A.ones(_shape(shape), dtype=_creation_dtype(dtype))


def empty(shape, dtype=float):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    v = asarray(fill_value, dtype)
    return _A.broadcast_to(v, _shape(shape))


def zeros_like(a, dtype=None):
    a = asarray(a)
    return _A.zeros_like(a, dtype=None if dtype is None else _np(dtype))


def ones_like(a, dtype=None):
    a = asarray(a)
    return _A.ones_like(a, dtype=None if dtype is None else _np(dtype))


empty_like = zeros_like


def full_like(a, fill_value, dtype=None):
    a = asarray(a)
    d = a.aval.dtype if dtype is None else _np(dtype)
    return _A.broadcast_to(asarray(fill_value, d), a.aval.shape)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        d = _result_type(start, stop, step)
        if d.kind == "i":
            d = np.dtype(np.int64)
        elif d.kind == "f" and builtins.all(_weak_python(v) for v in (start, stop, step)):
            d = np.dtype(np.float32 if _MODE.prefer_float32 else np.float64)
    else:
        d = _np(dtype)
    vals = [v.numpy() if isinstance(v, Tensor) else v for v in (start, stop, step)]
    if vals[2] == 0:
        raise ValueError("tnp.arange: step must not be 0")
    return _to_tensor(np.arange(vals[0], vals[1], vals[2]).astype(d))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    d = np.dtype(np.float32) if _MODE.prefer_float32 and dtype in (float, None) else _creation_dtype(dtype)
    vals = np.linspace(_val(start), _val(stop), num, endpoint=endpoint, retstep=retstep, axis=axis)
    if retstep:
        return _to_tensor(np.asarray(vals[0], d)), vals[1]
    return _to_tensor(np.asarray(vals, d))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    d = _creation_dtype(dtype)
    return _to_tensor(np.asarray(np.logspace(_val(start), _val(stop), num, endpoint, base, axis=axis), d))


def geomspace(start, stop, num=50, endpoint=True, dtype=float, axis=0):
    d = _creation_dtype(dtype)
    return _to_tensor(np.asarray(np.geomspace(_val(start), _val(stop), num, endpoint, axis=axis), d))


def _val(x):
    return x.numpy() if isinstance(x, Tensor) else x


def eye(N, M=None, k=0, dtype=float):  # noqa: N803
    return _to_tensor(np.eye(N, M, k, dtype=_creation_dtype(dtype)))


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    return _to_tensor(np.tri(N, M, k, dtype=_creation_dtype(dtype)))


def _tri_mask(a, k, lower):
    a = asarray(a)
    n, m = a.aval.shape[-2:]
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return _M.where(_to_tensor(np.broadcast_to(mask, a.aval.shape)), a, _A.zeros_like(a))


def tril(m, k=0):
    return _tri_mask(m, k, True)


def triu(m, k=0):
    return _tri_mask(m, k, False)


def vander(x, N=None, increasing=False):  # noqa: N803
    x = asarray(x)
    n = x.aval.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return _M.pow(_A.expand_dims(x, 1), _to_tensor(powers.astype(x.aval.dtype)))


def diag(v, k=0):
    v = asarray(v)
    if v.aval.ndim == 1:
        n = v.aval.shape[0] + builtins.abs(k)
        idx = np.arange(v.aval.shape[0])
        rows, cols = (idx, idx + k) if k >= 0 else (idx - k, idx)
        return _A.scatter_nd(_to_tensor(np.stack([rows, cols], 1).astype(np.int64)), v, (n, n))
    return diagonal(v, k)


def diagflat(v, k=0):
    return diag(ravel(v), k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.aval.shape[-2:]
    rows = np.arange(builtins.max(0, -offset), builtins.min(n, m - offset))
    cols = rows + offset
    flat = _A.reshape(a, a.aval.shape[:-2] + (n * m,))
    return _A.gather(flat, _to_tensor((rows * m + cols).astype(np.int64)), axis=a.aval.ndim - 2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    # (TF 2.21 sums in the input's dtype: int32 stays int32, unlike tnp.sum)
    d = diagonal(a, offset, axis1, axis2)
    return _M.reduce_sum(d if dtype is None else _M.cast(d, _np(dtype)), axis=-1)


def diag_indices(n, ndim=2):
    return tuple(_to_tensor(np.arange(n)) for _ in builtins.range(ndim))


def meshgrid(*xi, **kwargs):
    indexing = kwargs.get("indexing", "xy")
    xs = _promote(*xi) if xi else []
    return _A.meshgrid(*xs, indexing=indexing)


def ix_(*args):
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        shape = [1] * n
        shape[i] = -1
        out.append(_A.reshape(a, shape))
    return tuple(out)


# --- shape --------------------------------------------------------------------------------

def shape(a):
    return tuple(asarray(a).aval.shape)


def ndim(a):
    return asarray(a).aval.ndim


def size(x, axis=None):
    s = asarray(x).aval.shape
    return int(np.prod(s)) if axis is None else s[axis]


def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("tnp.reshape: only order='C' is implemented")
    return _A.reshape(asarray(a), _shape(newshape))


def ravel(a):
    return _A.reshape(asarray(a), [-1])


flatten = ravel


def transpose(a, axes=None):
    return _A.transpose(asarray(a), None if axes is None else list(axes))


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(builtins.range(a.aval.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _A.transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    nd = a.aval.ndim
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if nd == 0 and builtins.all(int(v) in (0, -1) for v in src + dst):
        return a          # (TF's tnp returns a scalar itself)
    for v in src + dst:   # (taken modulo the rank, moveaxis(x, 5, 0) of a matrix moved axis 1: TF raises)
        if not -nd <= int(v) < nd:
            raise InvalidArgumentError(f"moveaxis: axis {v} is out of range for an array of rank {nd} "
                                       f"(valid: {-nd} to {nd - 1})")
    src, dst = [int(v) % nd for v in src], [int(v) % nd for v in dst]
    perm = [i for i in builtins.range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _A.transpose(a, perm)


def expand_dims(a, axis):
    a = asarray(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.aval.ndim + len(axes)
    for ax in axes:
        if not -nd <= ax < nd:
            raise ValueError(f"expand_dims: axis {ax} is out of bounds for an array with dimension {nd}")
    for ax in sorted(x % nd for x in axes):
        a = _A.expand_dims(a, ax)
    return a


def squeeze(a, axis=None):
    return _A.squeeze(asarray(a), axis=None if axis is None else
                      (list(axis) if isinstance(axis, (tuple, list)) else [axis]))


def broadcast_to(array, shape):  # noqa: A002
    return _A.broadcast_to(asarray(array), _shape(shape))


def broadcast_arrays(*args, **kwargs):
    ts = [asarray(a) for a in args]
    shp = np.broadcast_shapes(*[t.aval.shape for t in ts])
    return [_A.broadcast_to(t, shp) for t in ts]


def atleast_1d(*arys):
    out = [asarray(a) if asarray(a).aval.ndim >= 1 else _A.reshape(asarray(a), [1]) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        out.append(a if a.aval.ndim >= 2 else _A.reshape(a, (1, -1) if a.aval.ndim else (1, 1)))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        nd = a.aval.ndim
        if nd == 0:
            a = _A.reshape(a, (1, 1, 1))
        elif nd == 1:
            a = _A.reshape(a, (1, -1, 1))
        elif nd == 2:
            a = _A.expand_dims(a, 2)
        out.append(a)
    return out[0] if len(out) == 1 else out


def concatenate(arys, axis=0):
    ts = _promote(*arys)
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    return _A.concat(ts, axis=axis)


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def stack(arrays, axis=0):
    return _A.stack(_promote(*arrays), axis=axis)


def hstack(tup):
    ts = [atleast_1d(t) for t in tup]
    return concatenate(ts, 0 if ts[0].aval.ndim == 1 else 1)


def vstack(tup):
    return concatenate([atleast_2d(t) for t in tup], 0)


def dstack(tup):
    return concatenate([atleast_3d(t) for t in tup], 2)


def split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        n = ary.aval.shape[axis]
        if n % indices_or_sections:
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError(f"tnp.split: {indices_or_sections} sections do not divide axis {axis} "
                                       f"(size {n}) evenly; give split indices instead")
        return _A.split(ary, int(indices_or_sections), axis=axis)
    bounds = [0] + [int(i) for i in indices_or_sections] + [ary.aval.shape[axis]]
    sizes = [builtins.max(0, bounds[i + 1] - bounds[i]) for i in builtins.range(len(bounds) - 1)]
    return _A.split(ary, sizes, axis=axis)


def hsplit(ary, indices_or_sections):
    ary = asarray(ary)
    return split(ary, indices_or_sections, 0 if ary.aval.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def tile(a, reps):
    a = asarray(a)
    reps = _shape(reps)
    nd = builtins.max(a.aval.ndim, len(reps))
    a = _A.reshape(a, (1,) * (nd - a.aval.ndim) + a.aval.shape)
    return _A.tile(a, (1,) * (nd - len(reps)) + reps)


def repeat(a, repeats, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _A.repeat(a, repeats, axis=axis)


def flip(m, axis=None):
    m = asarray(m)
    axes = list(builtins.range(m.aval.ndim)) if axis is None else \
        list(axis) if isinstance(axis, (tuple, list)) else [axis]
    return _A.reverse(m, axes)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    if k == 1:
        return swapaxes(flip(m, axes[1]), axes[0], axes[1])
    return flip(swapaxes(m, axes[0], axes[1]), axes[1])


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return _A.reshape(_A.roll(ravel(a), shift, 0), a.aval.shape)
    return _A.roll(a, shift, axis)


def pad(array, pad_width, mode="constant", **kwargs):  # noqa: A002
    a = asarray(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2) if np.ndim(pad_width) else
                         np.asarray([[pad_width, pad_width]]), (a.aval.ndim, 2))
    return _A.pad(a, pw.tolist(), mode=mode.upper(), constant_values=kwargs.get("constant_values", 0))


def take(a, indices, axis=None, mode=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    idx = asarray(indices)
    if mode in (None, "clip", "raise"):
        # TF 2.21's tnp.take clips out-of-range indices whatever the mode says (take([1, 2, 3], [5]) is 3)
        n = a.aval.shape[axis]
        idx = _M.clip_by_value(idx, _M.cast(0, idx.aval.dtype), _M.cast(n - 1, idx.aval.dtype))
    elif mode == "wrap":
        idx = _M.floormod(idx, a.aval.shape[axis])
    return _A.gather(a, idx, axis=axis)


def take_along_axis(arr, indices, axis):
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    return _A.take_along_axis(arr, asarray(indices), axis)


def compress(condition, a, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    c = _bool(asarray(condition))
    n = a.aval.shape[axis]
    if c.aval.shape[0] < n:
        c = _A.concat([c, _A.zeros([n - c.aval.shape[0]], dtype=np.bool_)], 0)
    return _A.boolean_mask(a, c, axis=axis)


def sort(a, axis=-1, kind="quicksort", order=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), -1
    return _A.sort(a, axis=axis)


def argsort(a, axis=-1, kind="quicksort", order=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), -1
    return _M.cast(_A.argsort(a, axis=axis, stable=True), np.int64)


# --- linear algebra -----------------------------------------------------------------------

def matmul(x1, x2):
    a, b = _promote(x1, x2)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        raise InvalidArgumentError("tnp.matmul: In[1] ndims must be >= 2: the operands must not be scalars "
                                   "(use tnp.multiply)")
    if a.aval.dtype == np.bool_:
        a, b = _M.cast(a, np.int64), _M.cast(b, np.int64)
    return _M.matmul(a, b) if a.aval.ndim > 1 and b.aval.ndim > 1 else _vec_matmul(a, b)


def _vec_matmul(a, b):
    if a.aval.ndim == 1 and b.aval.ndim == 1:
        return _M.reduce_sum(a * b)
    if a.aval.ndim == 1:
        return _A.squeeze(_M.matmul(_A.expand_dims(a, 0), b), [-2])
    return _A.squeeze(_M.matmul(a, _A.expand_dims(b, 1)), [-1])


def dot(a, b):
    a, b = _promote(a, b)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        return a * b
    if b.aval.ndim <= 2:
        return matmul(a, b)
    return _M.tensordot(a, b, [[a.aval.ndim - 1], [b.aval.ndim - 2]])


def vdot(a, b):
    a, b = _promote(ravel(a), ravel(b))
    return _M.reduce_sum(a * b)


def inner(a, b):
    a, b = _promote(a, b)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        return a * b
    return _M.tensordot(a, b, [[a.aval.ndim - 1], [b.aval.ndim - 1]])


def outer(a, b):
    a, b = _promote(ravel(a), ravel(b))
    return _A.expand_dims(a, 1) * _A.expand_dims(b, 0)


def kron(a, b):
    a, b = _promote(a, b)
    nd = builtins.max(a.aval.ndim, b.aval.ndim)
    a = _A.reshape(a, (1,) * (nd - a.aval.ndim) + a.aval.shape)
    b = _A.reshape(b, (1,) * (nd - b.aval.ndim) + b.aval.shape)
    ea = _A.reshape(a, [d for s in a.aval.shape for d in (s, 1)])
    eb = _A.reshape(b, [d for s in b.aval.shape for d in (1, s)])
    return _A.reshape(ea * eb, [x * y for x, y in zip(a.aval.shape, b.aval.shape)])


def tensordot(a, b, axes=2):
    a, b = _promote(a, b)
    return _M.tensordot(a, b, axes)


def einsum(subscripts, *operands, **kwargs):
    ops = _promote(*operands)
    return _M.einsum(subscripts, *ops)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    a, b = _promote(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.aval.ndim == 0 or b.aval.ndim == 0:   # (shape[-1] of a scalar raised a bare IndexError)
        raise InvalidArgumentIndexError(f"cross: the operands must be at least 1-D (vectors along the axis), got "
                                        f"shapes {tuple(a.aval.shape)} and {tuple(b.aval.shape)}")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    dims = (a.aval.shape[-1], b.aval.shape[-1])
    if builtins.any(d not in (2, 3, None) for d in dims):   # (a 4-vector was cut to 3 silently; TF's Cross kernel raises)
        raise FailedPreconditionError(f"cross: Cross-products are only defined for 2- and 3-element vectors, got "
                                      f"shapes {tuple(a.aval.shape)} and {tuple(b.aval.shape)} along the axis")
    if a.aval.shape[-1] == 2:
        a = _A.pad(a, [[0, 0]] * (a.aval.ndim - 1) + [[0, 1]])
    if b.aval.shape[-1] == 2:
        b = _A.pad(b, [[0, 0]] * (b.aval.ndim - 1) + [[0, 1]])
    a0, a1, a2 = (a[..., i] for i in builtins.range(3))
    b0, b1, b2 = (b[..., i] for i in builtins.range(3))
    if dims == (2, 2):   # NumPy's (and TF's) scalar z component of two 2-vectors (it returned a 3-vector)
        return a0 * b1 - a1 * b0
    c = _A.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, axisc)


# --- random (tnp.random): draws from tapeflow's global generator ----------------------------

def _size(size):
    if size is None:
        return ()
    return _shape(size)


def _random_seed(s):
    _R.set_seed(int(s))


def _randn(*args):
    return _R.normal(args, dtype=np.float64)


def _standard_normal(size=None):
    return _R.normal(_size(size), dtype=np.float64)


def _uniform(low=0.0, high=1.0, size=None):
    d = _result_type(low, high)
    if d.kind != "f":
        d = np.dtype(np.float64)
    low, high = asarray(low, d), asarray(high, d)
    return _R.uniform(_size(size), dtype=d) * (high - low) + low


def _rand(*size):
    return _R.uniform(size, dtype=np.float64)


def _random(size=None):
    return _R.uniform(_size(size), dtype=np.float64)


def _randint(low, high=None, size=None, dtype=np.int64):
    if high is None:
        low, high = 0, low
    return _R.uniform(_size(size), minval=int(low), maxval=int(high), dtype=_np(dtype))


def _poisson(lam=1.0, size=None):
    return _R.poisson(_size(size), lam, dtype=np.int64)


random = _types.ModuleType(__name__ + ".random", "tnp.random: NumPy's random functions over tapeflow's global "
                           "generator (tf.random.set_seed seeds it; tnp.random.seed calls it)")
random.seed = _random_seed
random.randn = _randn
random.standard_normal = _standard_normal
random.uniform = _uniform
random.rand = _rand
random.random = _random
random.randint = _randint
random.poisson = _poisson
_sys.modules[random.__name__] = random


# --- NumPy methods on tensors (TF adds them with experimental_enable_numpy_behavior) ---------

def _np_getitem(x, key):
    """NumPy's indexing (advanced and boolean indices with NumPy's rules) as one gather of the
    flattened tensor: NumPy itself computes which flat positions the key picks (an index array
    of the tensor's shape indexed by the key), so every rule is NumPy's and the gradient is
    the gather's. Keys holding symbolic tensors take tapeflow's own getitem."""
    k = key if isinstance(key, tuple) else (key,)
    k = tuple(v.numpy() if isinstance(v, Tensor) and v._v is not None else v for v in k)
    if builtins.any(isinstance(v, Tensor) for v in k):
        return None
    flat = np.arange(int(np.prod(x.aval.shape)), dtype=np.int64).reshape(x.aval.shape)
    try:
        pos = flat[k]
    except IndexError as err:
        from ..errors import InvalidArgumentIndexError
        raise InvalidArgumentIndexError(f"getitem: {err} (shape {x.aval.shape})") from None
    return _A.reshape(_A.gather(_A.reshape(x, [-1]), _to_tensor(np.ravel(pos))), np.shape(pos))


def _advanced(key):
    k = key if isinstance(key, tuple) else (key,)
    for v in k:
        if isinstance(v, (list, tuple, np.ndarray)) or (isinstance(v, Tensor) and v.aval.ndim > 0):
            return True
        if isinstance(v, Tensor) and v.aval.dtype == np.bool_:
            return True
    return False


def _no_out(out):
    if out is not None:
        raise TypeError("tnp: out= is not supported (tensors are immutable)")


def _m_transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return transpose(self, axes or None)


#: the NumPy methods tensors get with the switch (TF 2.21's list); ``out=`` is accepted as NumPy's
#: functions pass it (``np.mean(t)`` calls ``t.mean(axis=None, dtype=None, out=None)``)
METHODS = {
    "ravel": ravel,
    "flatten": ravel,
    # (no out=, as TF's: np.clip(t, ...) then falls back to NumPy and returns an ndarray, as in TF)
    "clip": lambda self, min=None, max=None: clip(self, min, max),  # noqa: A002
    "mean": lambda self, axis=None, dtype=None, out=None, keepdims=None, **kw: (
        _no_out(out), mean(self, axis, dtype, keepdims=keepdims))[1],
    "max": lambda self, axis=None, out=None, keepdims=None, **kw: (_no_out(out), amax(self, axis, keepdims=keepdims))[1],
    "min": lambda self, axis=None, out=None, keepdims=None, **kw: (_no_out(out), amin(self, axis, keepdims=keepdims))[1],
    "transpose": _m_transpose,
    "tolist": lambda self: self.numpy().tolist(),
}
