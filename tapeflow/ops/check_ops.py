"""tf.debugging's assertions, check_numerics and tf.ensure_shape.

Value checks bind the ``assert`` primitive (core/primitives/assert_op.py, effect "io"):
eagerly it raises at once; in a ``tapeflow.function`` it stays in the graph, in program
order, and raises on every call whose values fail it (TF's Assert op), never at trace
time. Checks of static facts (ranks, the known dims of ``assert_shapes``) raise
ValueError at once in both modes, as TF's do. The assertions return None (TF 2 eager
returns None; its graph-mode op is not needed: effects here run in program order)."""
from __future__ import annotations

import numpy as np

from ..core.aval import fmt_shape
from ..core.primitive import bind, aval_of
from ..core.primitives import assert_op as AS
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from . import math_ops as M

_SUMMARIZE = 3


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _prefix(message):
    return "" if message is None else f"{message}\n"


def _describe(t):
    a = aval_of(t)
    return f"(shape={fmt_shape(a.shape)} dtype={a.dtype.name}) = "


def _binary(op, symbol, compare):
    def f(x, y, message=None, summarize=None, name=None):
        x, y = _t(x), _t(y)
        if isinstance(y, Tensor) and not isinstance(x, Tensor):
            x = convert_to_tensor(x, aval_of(y).dtype)
        cond = M.reduce_all(compare(x, y))
        bind(AS.assert_p, cond, x, y, summarize=_SUMMARIZE if summarize is None else int(summarize),
             template=(f"{_prefix(message)}{op}: condition x {symbol} y did not hold element-wise:\nx "
                       f"{_describe(x)}", None, f"\ny {_describe(y)}", None))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"Raise InvalidArgumentError unless x {symbol} y holds for every element (broadcasting)."
    return f


assert_equal = _binary("assert_equal", "==", M.equal)
assert_none_equal = _binary("assert_none_equal", "!=", M.not_equal)
assert_less = _binary("assert_less", "<", M.less)
assert_less_equal = _binary("assert_less_equal", "<=", M.less_equal)
assert_greater = _binary("assert_greater", ">", M.greater)
assert_greater_equal = _binary("assert_greater_equal", ">=", M.greater_equal)


def _sign(op, symbol, compare):
    def f(x, message=None, summarize=None, name=None):
        x = _t(x)
        zero = M.zeros_like_(x)
        bind(AS.assert_p, M.reduce_all(compare(x, zero)), x,
             summarize=_SUMMARIZE if summarize is None else int(summarize),
             template=(f"{_prefix(message)}{op}: condition x {symbol} 0 did not hold element-wise:\nx "
                       f"{_describe(x)}", None))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"Raise InvalidArgumentError unless x {symbol} 0 holds for every element."
    return f


assert_positive = _sign("assert_positive", ">", M.greater)
assert_negative = _sign("assert_negative", "<", M.less)
assert_non_negative = _sign("assert_non_negative", ">=", M.greater_equal)
assert_non_positive = _sign("assert_non_positive", "<=", M.less_equal)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TF's name)
    """Raise InvalidArgumentError showing ``data`` (tensors and strings) unless ``condition``."""
    cond = _t(condition)
    if aval_of(cond).dtype != np.bool_:
        raise InvalidArgumentTypeError(f"Assert: condition must be a bool tensor, got {aval_of(cond).dtype.name}")
    template, values = ["assertion failed:"], []
    for d in data:
        if isinstance(d, (str, bytes)):
            template.append(f" [{d.decode() if isinstance(d, bytes) else d}]")
        else:
            template += [" ", None]
            values.append(_t(d))
    bind(AS.assert_p, cond, *values, template=tuple(template),
         summarize=_SUMMARIZE if summarize is None else int(summarize))


def _static_rank(op, x, rank, message):
    n = len(aval_of(x).shape)
    if n != rank:
        raise ValueError(f"{'' if message is None else message + '.  '}{op}: tensor must have rank {rank}.  "
                         f"Received rank {n}, shape {fmt_shape(aval_of(x).shape)}")


def assert_rank(x, rank, message=None, name=None):
    """ValueError unless x has rank ``rank`` (ranks are static here, so this checks at once)."""
    _static_rank("assert_rank", _t(x), int(rank), message)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Check [(tensor, dims)] pairs: a dim is an int (that size), a name (the same size
    wherever the name appears), '.' or None (any size). Shapes are static here, so this
    raises ValueError at once, as TF does for the dims it knows."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes = {}
    for x, dims in pairs:
        x = _t(x)
        s = aval_of(x).shape
        if isinstance(dims, str):
            dims = tuple(dims)
        dims = tuple(dims)
        _static_rank("assert_shapes", x, len(dims), message)
        for i, (d, n) in enumerate(zip(dims, s)):
            if d is None or d == "." or n is None:
                continue
            if isinstance(d, str):
                if d in sizes and sizes[d][0] != n:
                    raise ValueError(f"{'' if message is None else message + '.  '}assert_shapes: dimension {i} "
                                     f"('{d}') of a tensor of shape {fmt_shape(s)} must have size {sizes[d][0]}, "
                                     f"as in the tensor of shape {fmt_shape(sizes[d][1])}.  Received size {n}")
                sizes.setdefault(d, (n, s))
            elif int(d) != n:
                raise ValueError(f"{'' if message is None else message + '.  '}assert_shapes: dimension {i} of a "
                                 f"tensor of shape {fmt_shape(s)} must have size {int(d)}.  Received size {n}")


def check_numerics(tensor, message, name=None):
    """``tensor``, after raising InvalidArgumentError if it holds a NaN or an inf (TF's
    CheckNumerics texts: "<message> : Tensor had NaN values" / "Inf values" / "Inf and NaN values")."""
    x = _t(tensor)
    if aval_of(x).dtype.kind != "f":
        raise InvalidArgumentTypeError(f"check_numerics: expects a floating-point tensor, got "
                                       f"{aval_of(x).dtype.name} {fmt_shape(aval_of(x).shape)}")
    any_nan = M.reduce_any(M.is_nan(x))
    any_inf = M.reduce_any(M.is_inf(x))
    for cond, what in ((M.logical_not(M.logical_and(any_nan, any_inf)), "Inf and NaN"),
                       (M.logical_not(any_nan), "NaN"), (M.logical_not(any_inf), "Inf")):
        bind(AS.assert_p, cond, template=(f"check_numerics: {message} : Tensor had {what} values",),
             summarize=_SUMMARIZE)
    return x


def assert_all_finite(t, msg, name=None, x=None, message=None):
    return check_numerics(t if x is None else x, msg if message is None else message)


def ensure_shape(x, shape, name=None):
    """x, checked to have a shape compatible with ``shape`` (None entries: any size), with
    its static shape refined to it; a mismatch raises InvalidArgumentError (at run time for
    dims a trace does not know)."""
    x = _t(x)
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    shape = tuple(None if d is None or (not isinstance(d, str) and int(d) == -1) else int(d) for d in shape)
    return bind(AS.ensure_shape_p, x, shape=shape)


# --- wave 25 (api25): the rest of TF 2.21's tf.debugging assertions -------------------------------------
# Static facts (rank, dtype, scalar shape) raise at once in both modes, with TF's classes: ValueError for
# ranks and shapes, TypeError for dtypes. assert_near's values are checked by the assert primitive.

def _msg(message):
    return "" if message is None else f"{message}.  "


def assert_rank_at_least(x, rank, message=None, name=None):
    """ValueError unless x has rank >= ``rank`` (static here, so checked at once, as TF's known ranks)."""
    x, rank = _t(x), int(rank)
    s = aval_of(x).shape
    if len(s) < rank:
        raise ValueError(f"{_msg(message)}assert_rank_at_least: tensor must have rank at least {rank}.  "
                         f"Received rank {len(s)}, shape {fmt_shape(s)}")


def assert_rank_in(x, ranks, message=None, name=None):
    """ValueError unless x's rank is one of ``ranks``."""
    x = _t(x)
    ranks = tuple(int(r) for r in ranks)
    s = aval_of(x).shape
    if len(s) not in ranks:
        raise ValueError(f"{_msg(message)}assert_rank_in: tensor must have rank in {ranks}.  "
                         f"Received rank {len(s)}, shape {fmt_shape(s)}")


def assert_scalar(tensor, message=None, name=None):
    """ValueError unless ``tensor`` has shape () (TF 2 returns None)."""
    s = aval_of(_t(tensor)).shape
    if len(s) != 0:
        raise ValueError(f"{_msg(message)}assert_scalar: expected scalar shape, saw shape: {fmt_shape(s)}.")


def _dtype_name(dt):
    from ..core import dtypes as D
    return f"tf.{D.as_dtype(dt).name}"


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless ``tensor``'s dtype is ``tf_type`` (TF's text: 'tensor must be of type tf.int32; got
    tf.float32')."""
    from ..core import dtypes as D
    want = D.as_dtype(tf_type)
    got = D.as_dtype(aval_of(_t(tensor)).dtype)
    if got != want:
        raise TypeError(f"{_msg(message)}assert_type: tensor must be of type {_dtype_name(want)}; "
                        f"got {_dtype_name(got)}")


def assert_integer(x, message=None, name=None):
    """TypeError unless x has an integer dtype."""
    from ..core import dtypes as D
    dt = D.as_dtype(aval_of(_t(x)).dtype)
    if not dt.is_integer:
        raise TypeError(f"{_msg(message)}assert_integer: expected \"x\" to be integer type.  Found: tensor of "
                        f"dtype {_dtype_name(dt)}")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating dtype of ``tensors`` (and ``dtype``), float32 when both are empty; ValueError on a
    mismatch or a non-float dtype (TF's assert_same_float_dtype, which returns the dtype)."""
    from ..core import dtypes as D
    want = None if dtype is None else D.as_dtype(dtype)
    first = None
    for t in tensors or ():
        if t is None:
            continue
        dt = D.as_dtype(t.dtype)
        if want is None:
            want, first = dt, t
        elif dt != want:
            against = f" as {first!r}" if first is not None else ""
            raise ValueError(f"assert_same_float_dtype: {t!r}, type={_dtype_name(dt)}, must be of the same type "
                             f"({_dtype_name(want)}){against}.")
    if want is None:
        return D.float32
    if not want.is_floating:
        raise ValueError(f"assert_same_float_dtype: expected floating point type, got {_dtype_name(want)}.")
    return want


def assert_proper_iterable(values):
    """TypeError unless ``values`` is an iterable other than a tensor, an ndarray, str or bytes (those
    iterate over their elements or characters, which a caller wanting a list of values never means)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError(f"assert_proper_iterable: expected argument \"values\" to be a \"proper\" iterable.  "
                        f"Found: {type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"assert_proper_iterable: expected argument \"values\" to be iterable.  "
                        f"Found: {type(values)}")


def is_numeric_tensor(tensor):
    """True for a tensor of a numeric dtype (not bool, not string); False for anything else."""
    from ..core import dtypes as D
    if not isinstance(tensor, Tensor):
        return False
    dt = D.as_dtype(tensor.dtype)
    return bool(dt.is_floating or dt.is_integer or dt.is_complex)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """InvalidArgumentError unless |x - y| <= atol + rtol * |y| for every element (broadcasting). The
    default tolerances are TF's: 10 * eps of x's dtype (of its real part for complex)."""
    x = _t(x)
    xa = aval_of(x)
    from ..core import dtypes as D
    dt = D.as_dtype(xa.dtype)
    if not (dt.is_floating or dt.is_complex):   # TF's np.finfo(dtype) raises on integer dtypes
        raise ValueError(f"assert_near: data type {xa.dtype.name} not inexact (assert_near compares floating "
                         f"tensors; cast x and y to a float dtype)")
    if isinstance(y, Tensor) and aval_of(y).dtype != xa.dtype:
        raise ValueError(f"assert_near: y: Tensor conversion requested dtype {xa.dtype.name} for Tensor with dtype "
                         f"{aval_of(y).dtype.name}")
    y = convert_to_tensor(y, xa.dtype)
    fi = D._finfo(xa.dtype) if dt.is_floating else np.finfo(xa.dtype)
    real = np.dtype(fi.dtype)   # (float32 for complex64)
    eps = fi.eps
    rtol = real.type(10 * eps) if rtol is None else real.type(rtol)
    atol = real.type(10 * eps) if atol is None else real.type(atol)
    tol = M.add(convert_to_tensor(atol, real), M.multiply(convert_to_tensor(rtol, real), M.abs(y)))
    cond = M.reduce_all(M.less_equal(M.abs(M.subtract(x, y)), tol))
    bind(AS.assert_p, cond, x, y, summarize=_SUMMARIZE if summarize is None else int(summarize),
         template=(f"{_prefix(message)}assert_near: x and y not equal to tolerance rtol = {rtol}, atol = {atol}\nx "
                   f"{_describe(x)}", None, f"\ny {_describe(y)}", None))
