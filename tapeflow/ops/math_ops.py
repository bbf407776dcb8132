"""Math ops (TF names). Each is a primitive call or a composition of them."""
from __future__ import annotations

import builtins
from math import prod as _prod

import numpy as np

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..core.aval import fmt_shape
from ..core import dtypes as _dt
from ..core.primitive import bind, aval_of, _only_python, CompositeTensor, CompositeOperand
from ..core.tensor import TensorShape
from ..core.primitives import elementwise as E
from ..core.primitives import reductions as R
from ..core.primitives import linalg as L
from ..core.primitives import shape as S
from ..core.primitives._rules import norm_axis
from ..core.tensor import Tensor, convert_to_tensor

# -- Python lists among the operands ---------------------------------------------------

def _is_py_list(a):
    return a.__class__ in (list, tuple) and _only_python(a)


def match_lists(name, *args):
    """TF's conversion of operands that share one dtype (args_to_matching_eager): a list of
    Python numbers takes the dtype of the first tensor operand, or else of the first operand
    (``tf.maximum(0., [1, -1])`` is float32), and raises TypeError where its values do not
    fit that dtype, as TF does. Python scalars keep tapeflow's weak-dtype rule."""
    for a in args:  # (a loop, not any(generator): this runs on every tf.add/multiply/maximum/relu)
        if _is_py_list(a):
            break
    else:
        return args
    first = next((a for a in args if isinstance(a, (Tensor, np.ndarray, np.generic))), args[0])
    if isinstance(first, CompositeTensor):   # a RaggedTensor: a list takes its values' dtype
        first = first.flat_values
    dtype = aval_of(first).dtype
    return tuple(_list_as(name, a, dtype) if _is_py_list(a) else a for a in args)


def _list_as(name, values, dtype):
    arr = np.asarray(values)
    kind = arr.dtype.kind
    fits = arr.size == 0 or kind == dtype.kind or (kind in "iu" and dtype.kind in "iuf") or (kind == "b" and dtype.kind == "b")
    if fits:
        try:
            return convert_to_tensor(np.asarray(values, dtype))
        except OverflowError:
            fits = False
    raise TypeError(f"{name}: cannot convert {values!r} to a {_dt.as_dtype(dtype).name} tensor (TF converts a "
                    "Python list to the dtype of the op's first tensor argument, or of its first argument); "
                    "write the list with values of that dtype, or convert it first: "
                    "tapeflow.constant(values, dtype=...)")


# -- elementwise arithmetic -------------------------------------------------------


def add(x, y, name=None): return bind(E.add_p, *match_lists("add", x, y))
def subtract(x, y, name=None): return bind(E.sub_p, *match_lists("subtract", x, y))
def multiply(x, y, name=None): return bind(E.mul_p, *match_lists("multiply", x, y))
def divide(x, y, name=None): return bind(E.div_p, *match_lists("divide", x, y))
def floordiv(x, y, name=None): return bind(E.floordiv_p, *match_lists("floordiv", x, y))
def floormod(x, y, name=None): return bind(E.mod_p, *match_lists("floormod", x, y))
def pow(x, y, name=None): return bind(E.pow_p, *match_lists("pow", x, y))  # noqa: A001
def negative(x, name=None): return bind(E.neg_p, x)
def maximum(x, y, name=None): return bind(E.maximum_p, *match_lists("maximum", x, y))
def minimum(x, y, name=None): return bind(E.minimum_p, *match_lists("minimum", x, y))


truediv = divide
mod = floormod
floor_div = floordiv


def square(x, name=None): return bind(E.mul_p, x, x)
def sqrt(x, name=None): return bind(E.sqrt_p, x)
def rsqrt(x, name=None): return divide(1.0, sqrt(x))
def reciprocal(x, name=None): return divide(1.0, x)
def exp(x, name=None): return bind(E.exp_p, x)
def log(x, name=None): return bind(E.log_p, x)
def log1p(x, name=None): return bind(E.log1p_p, x)
def expm1(x, name=None): return bind(E.expm1_p, x)
def abs(x, name=None): return bind(E.abs_p, x)  # noqa: A001
def sign(x, name=None): return bind(E.sign_p, x)
def sin(x, name=None): return bind(E.sin_p, x)
def cos(x, name=None): return bind(E.cos_p, x)
def tan(x, name=None): return bind(E.tan_p, x)
def tanh(x, name=None): return bind(E.tanh_p, x)
def atan(x, name=None): return bind(E.atan_p, x)
def asin(x, name=None): return bind(E.asin_p, x)
def acos(x, name=None): return bind(E.acos_p, x)
def sinh(x, name=None): return bind(E.sinh_p, x)
def cosh(x, name=None): return bind(E.cosh_p, x)
def asinh(x, name=None): return bind(E.asinh_p, x)
def acosh(x, name=None): return bind(E.acosh_p, x)
def atanh(x, name=None): return bind(E.atanh_p, x)
def sigmoid(x, name=None): return bind(E.sigmoid_p, x)
def floor(x, name=None): return bind(E.floor_p, x)
def ceil(x, name=None): return bind(E.ceil_p, x)
def round(x, name=None):  # noqa: A001
    x = convert_to_tensor(x) if not isinstance(x, (Tensor, CompositeTensor)) else x
    try:
        if aval_of(x).dtype.kind in "iu":
            return x   # (TF's round returns an integer tensor itself; the kernel takes floats only)
    except CompositeOperand:
        pass
    return bind(E.round_p, x)
def is_nan(x, name=None): return bind(E.isnan_p, x)
def is_finite(x, name=None): return bind(E.isfinite_p, x)
def is_inf(x, name=None): return logical_and(logical_not(is_finite(x)), logical_not(is_nan(x)))


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (even for x inf or nan), as TF. The divisor is replaced by 1
    there before dividing, so the gradient at those entries is 0, not nan."""
    x, y = match_lists("divide_no_nan", x, y)
    zero = equal(y, 0)
    return where(zero, 0, divide(x, where(zero, 1, y)))


def squared_difference(x, y, name=None):
    # two tensors (a loss's y_pred and y_true) have no list to convert: subtract's bind2
    d = E.sub_p.bind2(x, y) if x.__class__ is Tensor and y.__class__ is Tensor else subtract(x, y)
    return E.mul_p.bind2(d, d)  # (multiply's bind: d is a tensor, no list to convert)


def softplus(x, name=None):
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|): never overflows, and its gradient
    # (sigmoid) stays finite for large |x|.
    return add(maximum(x, 0), log1p(exp(neg_abs_(x))))


def neg_abs_(x):
    """-|x| spelled where(x > 0, -x, x): at x == 0 its gradient is 1, so in
    max(x, 0) + f(-|x|) the two kinks' gradients add up to the true derivative
    there (softplus'(0) = 1/2), where abs'(0) = 0 would give 0."""
    return where(greater(x, 0), negative(x), x)


def log_sigmoid(x, name=None):
    return negative(softplus(negative(x)))


def erf(x, name=None):
    """Error function: the special-function primitive (float64 series / erfc, rounded once), float tensors only
    as TF's kernel."""
    if _has_bf16(x):   # (TF 2.21: float32's erf rounded once)
        return in_float32(erf, x)
    from ..core.primitives import special as _S
    return bind(_S.erf_p, x)


def xlogy(x, y, name=None):
    return where(equal(x, 0), zeros_like_(x), multiply(x, log(where(equal(x, 0), ones_like_(y), y))))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0 (even for y 0 or nan), as TF. The divisor is 1 there before
    dividing, so those entries' gradients are 0, not nan."""
    x, y = match_lists("xdivy", x, y)
    zero = equal(x, 0)
    return where(zero, zeros_like_(x), divide(x, where(zero, ones_like_(y), y)))


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (even for y -1 or nan), as TF."""
    x, y = match_lists("xlog1py", x, y)
    zero = equal(x, 0)
    return where(zero, zeros_like_(x), multiply(x, log1p(where(zero, zeros_like_(y), y))))


def atan2(y, x, name=None):
    """tf.math.atan2: the angle of (x, y) in (-pi, pi], elementwise with broadcasting."""
    return bind(E.atan2_p, *match_lists("atan2", y, x))


def rint(x, name=None):
    """tf.math.rint: the nearest integer, halves to even (tf.round's rule), float tensors only as TF's
    kernel (an integer tensor is an InvalidArgumentError naming the float dtypes)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    dt = aval_of(x).dtype
    if dt.kind != "f":
        raise InvalidArgumentTypeError(f"rint: expects a float tensor (half, float, double), got {dt.name}; "
                                       "cast it first, or use tf.round")
    return round(x)


def scalar_mul(scalar, x, name=None):
    """tf.math.scalar_mul: a 0-D scalar times x (a Python number takes x's dtype, as in TF)."""
    if isinstance(scalar, Tensor) and aval_of(scalar).shape != ():
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {tuple(aval_of(scalar).shape)}.")
    return multiply(scalar, x)


def polyval(coeffs, x, name=None):
    """tf.math.polyval: sum of coeffs[i] * x ** (n - 1 - i) by Horner's rule (TF's order: the
    first coefficient is the highest power); no coefficients give zeros like x."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"polyval: coeffs must be a list of tensors, got {type(coeffs).__name__}")
    if not coeffs:
        return zeros_like_(x)
    p = coeffs[0] if isinstance(coeffs[0], Tensor) else convert_to_tensor(coeffs[0], dtype=aval_of(x).dtype)
    for c in coeffs[1:]:
        p = add(c, multiply(p, x))
    return p


def zeros_like_(x):
    return bind(E.select_p, True, 0, x)


def ones_like_(x):
    return bind(E.select_p, True, 1, x)


# -- comparison and logic -------------------------------------------------------------------

def equal(x, y, name=None): return bind(E.equal_p, *match_lists("equal", x, y))
def not_equal(x, y, name=None): return bind(E.not_equal_p, *match_lists("not_equal", x, y))
def less(x, y, name=None): return bind(E.less_p, *match_lists("less", x, y))
def less_equal(x, y, name=None): return bind(E.less_equal_p, *match_lists("less_equal", x, y))
def greater(x, y, name=None): return bind(E.greater_p, *match_lists("greater", x, y))
def greater_equal(x, y, name=None): return bind(E.greater_equal_p, *match_lists("greater_equal", x, y))
def logical_and(x, y, name=None): return bind(E.logical_and_p, x, y)
def logical_or(x, y, name=None): return bind(E.logical_or_p, x, y)
def logical_xor(x, y, name=None): return bind(E.logical_xor_p, x, y)
def logical_not(x, name=None): return bind(E.logical_not_p, x)


def where(condition, x=None, y=None, name=None):
    """where(c, x, y): elementwise select with broadcasting. where(c) alone
    returns the (n, rank) int64 indices of true entries (eager only: data-dependent shape)."""
    if x is None and y is None:
        from .array_ops import _where_indices
        return _where_indices(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return bind(E.select_p, condition, *match_lists("where", x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``maximum(minimum(t, clip_value_max), clip_value_min)``, in TF's order: where
    clip_value_min > clip_value_max the result is clip_value_min (np.clip's order gives
    the max). Bounds may broadcast against t but not enlarge it (TF raises there too).
    t is the *second* operand of both: maximum/minimum send a tie's gradient to their second
    operand (so that relu = maximum(x, 0) has gradient 0 at 0), and TF's clip passes the
    gradient where t equals a bound (its Maximum/Minimum send ties to the first operand)."""
    out = maximum(clip_value_min, minimum(clip_value_max, t))
    ts, os_ = aval_of(t).shape, aval_of(out).shape
    if not TensorShape(ts).is_compatible_with(os_):
        raise InvalidArgumentError(f"clip_by_value: the bounds would broadcast t of shape {fmt_shape(ts)} to "
                                   f"{fmt_shape(os_)}; give bounds that broadcast to t's shape")
    return out


def cast(x, dtype, name=None):
    npd = _dt.np_dtype(dtype)
    try:
        xd = aval_of(x).dtype
    except CompositeOperand:   # a RaggedTensor: its flat values cast (TF's dispatch)
        return x.with_flat_values(cast(x.flat_values, dtype))
    if xd == npd and isinstance(x, Tensor):
        return x
    if not isinstance(x, Tensor):
        return convert_to_tensor(np.asarray(x, dtype=npd) if not isinstance(x, (list, tuple)) else np.array(x, dtype=npd))
    return bind(E.cast_p, x, dtype=npd)


def saturate_cast(x, dtype, name=None):
    """cast, clamping to the target's range first (as TF: only where the input's
    range exceeds it). The bounds are the target's limits rounded *inward* to
    values the input dtype holds exactly: float32 cannot hold 2**31 - 1, and
    clamping to its float32 rounding (2**31) would overflow in the cast."""
    d = _dt.as_dtype(dtype)
    src = np.dtype(aval_of(x).dtype)
    smin, smax = (np.finfo(src).min, np.finfo(src).max) if src.kind == "f" else \
        (np.iinfo(src).min, np.iinfo(src).max) if src.kind in "iu" else (0, 1)
    if src.kind == "b" or d.is_floating:
        return cast(x, dtype)
    if smin < d.min:
        x = maximum(x, _inward(d.min, src))
    if smax > d.max:
        x = minimum(x, _inward(d.max, src))
    return cast(x, dtype)


def _inward(bound, src):
    """The integer ``bound`` as a ``src`` value, rounded toward zero if ``src`` cannot hold it."""
    v = np.asarray(bound).astype(src) if src.kind == "f" else np.asarray(bound, src)
    if src.kind == "f" and (int(v) > bound if bound > 0 else int(v) < bound):
        v = np.nextafter(v, src.type(0))
    return v[()]


def stop_gradient(x, name=None):
    return bind(E.stop_gradient_p, x)


# -- reductions -----------------------------------------------------------------------------------

def _axes(name, x, axis):
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    v = x._v if x.__class__ is Tensor else None  # (an eager tensor's rank off its array: no Aval built)
    return norm_axis(name, axis, v.ndim if v is not None else len(aval_of(x).shape))


def _ragged_reduce(kind, rt, axis, keepdims):
    """A reduction of a RaggedTensor (TF dispatches it to its ragged reduction)."""
    from ..ragged.ops import reduce
    return reduce(kind, rt, axis.numpy().tolist() if isinstance(axis, Tensor) else axis, keepdims)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    try:
        return bind(R.reduce_sum_p, input_tensor, axis=_axes("reduce_sum", input_tensor, axis), keepdims=keepdims)
    except CompositeOperand:
        return _ragged_reduce("sum", input_tensor, axis, keepdims)


def _count(x, axes):
    shape = aval_of(x).shape
    dims = [shape[a] for a in axes]
    if None in dims:
        # unknown traced dims: one scalar count when it runs (it divides a sum kept with or without its
        # reduced dims alike; a count per output position, shaped without them, broadcast a keepdims
        # sum (n, 1) against (n,) into an (n, n) "mean")
        from . import array_ops as A
        d = aval_of(x).dtype
        size = A.shape(x, np.int64)
        n = reduce_prod(A.stack([size[a] for a in axes]))
        return cast(n, d if d.kind in "fc" else np.int64)
    return _prod(dims)  # (np.prod of a list costs ~4 us: it builds an array first)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    x = input_tensor
    v = x._v if x.__class__ is Tensor else None
    # an eager float tensor (every loss's mean): its shape and dtype read off its array
    # once (~3 us of aval_of and helper calls per mean); the same ops either way
    eager_float = v is not None and v.dtype.kind == "f" and not isinstance(axis, Tensor)
    if eager_float:
        axes = norm_axis("reduce_mean", axis, v.ndim)
    else:
        try:
            kind = _dt.kind(aval_of(x).dtype)
        except CompositeOperand:   # a RaggedTensor (TF's ragged reduce_mean)
            return _ragged_reduce("mean", x, axis, keepdims)
        if kind not in "fiuc":
            raise InvalidArgumentTypeError(f"reduce_mean: expects a numeric tensor, got {aval_of(x).dtype.name}; "
                                           "cast first: tapeflow.cast(x, tapeflow.float32)")
        axes = _axes("reduce_mean", x, axis)
        if aval_of(x).dtype is _dt.BF16:   # TF's bfloat16 mean: summed and divided in float32, rounded once
            return cast(reduce_mean(cast(x, _dt.float32), axes, keepdims), _dt.bfloat16)
        if kind not in "fc":
            return _integer_mean(x, axes, keepdims)
    s = bind(R.reduce_sum_p, x, axis=axes, keepdims=keepdims)
    n = _prod([v.shape[a] for a in axes]) if eager_float else _count(x, axes)
    if isinstance(n, int) and n == 0:
        return multiply(s, float("nan"))  # the mean of nothing is NaN, as TF (0/0)
    return divide(s, n) if not isinstance(n, int) else (E.mul_p.bind2(s, 1.0 / n) if n != 1 else s)


def _integer_mean(x, axes, keepdims):
    """TF's mean of integers: summed in a 64-bit accumulator (the mean of int32 [2**30, 2**30]
    is 2**30, not an overflow), divided with truncation toward zero (mean([-1, -2]) is -1),
    in the input's dtype; the mean of nothing is 0."""
    d = aval_of(x).dtype
    if d.kind == "u":  # no sign to truncate toward; uint64's own width (TF sums uint64 in uint64)
        wide = cast(x, np.uint64)
        s = bind(R.reduce_sum_p, wide, axis=axes, keepdims=keepdims)
        n = _count(wide, axes)
        n = builtins.max(n, 1) if isinstance(n, int) else maximum(n, 1)
        return cast(floordiv(s, cast(n, np.uint64) if not isinstance(n, int) else n), d)
    wide = cast(x, np.int64)  # holds any sum of int8..int32 values
    s = bind(R.reduce_sum_p, wide, axis=axes, keepdims=keepdims)
    n = _count(wide, axes)
    n = builtins.max(n, 1) if isinstance(n, int) else maximum(n, 1)
    return cast(multiply(sign(s), floordiv(abs(s), n)), d)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    try:
        return bind(R.reduce_max_p, input_tensor, axis=_axes("reduce_max", input_tensor, axis), keepdims=keepdims)
    except CompositeOperand:
        return _ragged_reduce("max", input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    try:
        return bind(R.reduce_min_p, input_tensor, axis=_axes("reduce_min", input_tensor, axis), keepdims=keepdims)
    except CompositeOperand:
        return _ragged_reduce("min", input_tensor, axis, keepdims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    try:
        return bind(R.reduce_prod_p, input_tensor, axis=_axes("reduce_prod", input_tensor, axis), keepdims=keepdims)
    except CompositeOperand:
        return _ragged_reduce("prod", input_tensor, axis, keepdims)


def _bools(op, x):
    """reduce_any/reduce_all's operand as int32 (their reductions are reduce_max/min of it),
    after TF's check that it is bool: a float 0.5 cast to int32 is 0 (reduce_any([0.5]) was
    False where TF raises)."""
    try:
        d = aval_of(x).dtype
    except CompositeOperand:   # (a RaggedTensor: cast maps its values)
        d = None
    if d is not None and d != np.bool_:
        raise InvalidArgumentTypeError(f"{op}: expects a bool tensor, got {d.name}; compare first, e.g. "
                                       f"tf.{op}(x != 0)")
    return cast(x, np.int32)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    return greater(reduce_max(_bools("reduce_any", input_tensor), axis, keepdims), 0)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    return greater(reduce_min(_bools("reduce_all", input_tensor), axis, keepdims), 0)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) without overflow: subtract the max first.

    The shift m is stop_gradient'ed: the value does not depend on it, and the
    gradient through the remaining expression is exactly softmax(x). An
    all--inf slice gives m = -inf; replace it by 0 so the result is -inf, not NaN.
    """
    x = input_tensor
    axes = _axes("reduce_logsumexp", x, axis)
    m = stop_gradient(reduce_max(x, axes, keepdims=True))
    m = where(is_finite(m), m, zeros_like_(m))
    s = reduce_sum(exp(subtract(x, m)), axes, keepdims=True)
    r = add(log(s), m)
    if not keepdims:
        r = S.reshape(r, tuple(-1 if d is None else d for i, d in enumerate(aval_of(x).shape) if i not in axes) or ())
    return r


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    d = aval_of(input_tensor).dtype
    if not _dt.is_float(d):   # (TF: a TypeError; an integer mean would truncate: variance([1, 2]) gave 0)
        raise InvalidArgumentTypeError(f"reduce_variance / reduce_std: expects a floating tensor, got {d.name}; "
                                       "cast first, e.g. tf.cast(x, tf.float32)")
    m = reduce_mean(input_tensor, axis, keepdims=True)
    return reduce_mean(squared_difference(input_tensor, m), axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return sqrt(reduce_variance(input_tensor, axis, keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = input_tensor
    try:
        d = aval_of(x).dtype
    except CompositeOperand:
        d = None
    if d is not None and d.kind in "iu":
        return _integer_euclidean_norm(x, d, axis, keepdims)
    return sqrt(reduce_sum(square(x), axis, keepdims))


def _integer_euclidean_norm(x, d, axis, keepdims):
    """TF's norm of integers (its EuclideanNorm kernel): the squares summed in the dtype,
    wrapping as TF's and NumPy's integer arithmetic does, and the root taken in double and
    truncated ([1, 1] -> 1). A sum that wrapped negative has no root; TF's conversion of that
    NaN gives the dtype's minimum for 32/64-bit ints and 0 for 8/16-bit ones (TF 2.21:
    int32 [46341, 0] -> -2147483648, int8 [12, 0] -> 0)."""
    s = reduce_sum(square(x), axis, keepdims)
    root = cast(sqrt(cast(s, np.float64)), d) if d.kind == "u" else \
        cast(sqrt(cast(maximum(s, 0), np.float64)), d)
    if d.kind == "u":
        return root
    return where(less(s, 0), np.array(np.iinfo(d).min if d.itemsize >= 4 else 0, d), root)


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=np.int64, name=None):
    x = input_tensor
    try:
        is_bool = aval_of(x).dtype == np.bool_
    except CompositeOperand:
        is_bool = False
    # (a bool tensor counts its Trues: comparing it with the Python 0 is refused, as in TF,
    # whose count_nonzero compares with a zero of the input's dtype)
    return reduce_sum(cast(x if is_bool else not_equal(x, 0), dtype), axis, keepdims)


def argmax(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    x = input
    nd = len(aval_of(x).shape)
    if axis is None:
        axis = 0
    return bind(R.argmax_p, x, axis=norm_axis("argmax", axis, nd)[0], output_type=_dt.np_dtype(output_type))


def argmin(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    x = input
    nd = len(aval_of(x).shape)
    if axis is None:
        axis = 0
    return bind(R.argmin_p, x, axis=norm_axis("argmin", axis, nd)[0], output_type=_dt.np_dtype(output_type))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    nd = len(aval_of(x).shape)
    return bind(R.cumsum_p, x, axis=norm_axis("cumsum", axis, nd)[0], exclusive=bool(exclusive), reverse=bool(reverse))


def _scan_axis(name, x, axis):
    """The scan axis of a cumulative op (cumprod, cumulative_logsumexp), non-negative; a tensor
    axis is read now, as TF's ops take it."""
    if isinstance(axis, Tensor):
        axis = int(axis.numpy())
    nd = len(aval_of(x).shape)
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"{name}: axis {axis} is out of range for a tensor of rank {nd} "
                                   f"(valid: {-nd} to {nd - 1})")
    return axis % nd


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running product along ``axis`` (TF's cumprod); its gradient is TF's formula (0 at zero entries)."""
    return bind(R.cumprod_p, x, axis=_scan_axis("cumprod", x, axis), exclusive=bool(exclusive),
                reverse=bool(reverse))


def add_n(inputs, name=None):
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n: needs at least one tensor")
    r = inputs[0] if len(inputs) > 1 else convert_to_tensor(inputs[0])
    s0 = aval_of(r).shape
    for i, t in enumerate(inputs[1:], 1):
        # TF's AddN takes tensors of one shape: an add would broadcast a (3,) into a (2, 3)
        s = aval_of(t).shape if isinstance(t, Tensor) else np.shape(t)
        if not TensorShape(s).is_compatible_with(s0):
            raise InvalidArgumentError(f"add_n: input {i} has shape {fmt_shape(s)}, input 0 {fmt_shape(s0)}; "
                                       "AddN's inputs must all have the same shape (it does not broadcast)")
    if aval_of(r).dtype.kind == "O":  # (add concatenates strings; TF's AddN is numeric only)
        from ..core.primitive import refuse_strings
        refuse_strings(E.add_p, [aval_of(r)])
    for t in inputs[1:]:
        r = add(r, t)
    return r


# -- linear algebra --------------------------------------------------------------------------------

def _swap_last(x):
    n = len(aval_of(x).shape)
    return S.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None):
    try:   # (a try costs nothing until it raises: Python 3.11's zero-cost exceptions)
        a, b = match_lists("matmul", a, b)
        if transpose_a or adjoint_a:
            a = _swap_last(a)
        if transpose_b or adjoint_b:
            b = _swap_last(b)
        return bind(L.matmul_p, a, b)
    except TypeError as e:
        # TF's fallback dispatch: an operand that is no tensor but a tf.linalg.LinearOperator
        from ..linear_operator import LinearOperator, dispatch_matmul
        if isinstance(a, LinearOperator) or isinstance(b, LinearOperator):
            return dispatch_matmul(a, b, transpose_a or transpose_b, adjoint_a, adjoint_b)
        # TF 2.21's tf.matmul takes bfloat16 with float32 (either side; its SparseMatMul kernel):
        # a float32 product of the float32 values. Only here: the `@` operator and the matmul
        # record keep one dtype (TF's `@` is tf.matmul: docs/differences.md)
        if isinstance(e, InvalidArgumentTypeError) and \
                {aval_of(a).dtype, aval_of(b).dtype} == {_dt.BF16, np.dtype(np.float32)}:
            return bind(L.matmul_p, cast(a, _dt.float32), cast(b, _dt.float32))
        raise


def _has_bf16(*xs):
    """Whether one of ``xs`` is a bfloat16 tensor or array (``getattr``: lists and numbers have none)."""
    for x in xs:
        d = getattr(x, "dtype", None)
        if d is not None and (d is _dt.bfloat16 or d is _dt.BF16):
            return True
    return False


def in_float32(fn, *xs):
    """``fn(*xs)`` computed in float32 and rounded to bfloat16 once: how TF 2.21's CPU kernels
    compute their bfloat16 forms of products (einsum, convolutions), softmax and erf (their
    numbers in tests/test_bfloat16.py), where NumPy has no bfloat16 kernel or a composition in
    bfloat16 would round every step. The casts carry the gradient (in float32, rounded once)."""
    r = fn(*[cast(x, _dt.float32) if _has_bf16(x) else x for x in xs])
    return tuple(cast(t, _dt.bfloat16) for t in r) if isinstance(r, tuple) else cast(r, _dt.bfloat16)


def einsum(equation, *inputs, name=None, **kwargs):
    """TF's einsum: NumPy's notation, including an implicit output ('ij,jk': the letters
    that appear once, sorted) and '...' (broadcast like NumPy). The primitive takes only
    explicit letters, so both are spelled out here: the IR names every axis."""
    if _has_bf16(*inputs):   # (np.einsum has no bfloat16 loop; TF sums in float32)
        return in_float32(lambda *xs: einsum(equation, *xs), *inputs)
    spec = equation.replace(" ", "")
    if "..." in spec or "->" not in spec:
        spec, inputs = _explicit_einsum(spec, inputs)
    return bind(L.einsum_p, *inputs, spec=spec)


def _explicit_einsum(spec, inputs):
    lhs, arrow, out = spec.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(inputs):
        raise InvalidArgumentError(f"einsum: equation {spec!r} names {len(subs)} operands, got {len(inputs)}")
    inputs = [convert_to_tensor(x) for x in inputs]
    shapes = [tuple(aval_of(x).shape) for x in inputs]
    letters = "".join(c for c in lhs if c.isalpha())
    if not arrow:  # NumPy's implicit output: the letters used once, in alphabetical order
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    counts = []
    for sub, shp in zip(subs, shapes):
        n = len(shp) - (len(sub) - 3) if "..." in sub else 0
        if n < 0:
            raise InvalidArgumentError(f"einsum: operand of shape {fmt_shape(shp)} has rank {len(shp)}, fewer than "
                                       f"the {len(sub) - 3} axes {sub!r} names")
        counts.append(n)
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    nmax = builtins.max(counts, default=0)
    ell = "".join(free[:nmax])
    # the '...' axes broadcast as in NumPy (right-aligned; a 1 stretches to the other size)
    size = {}
    for sub, shp, n in zip(subs, shapes, counts):
        if n:
            k = sub.index("...")
            for c, d in zip(ell[nmax - n:], shp[k:k + n]):
                if d is not None and d != 1:
                    if size.get(c, d) != d:
                        raise InvalidArgumentError(f"einsum: the '...' axes of {spec!r} do not broadcast: sizes "
                                                   f"{size[c]} and {d}; operand shapes {[fmt_shape(s) for s in shapes]}")
                    size[c] = d
    new_subs, new_inputs = [], []
    for sub, x, shp, n in zip(subs, inputs, shapes, counts):
        if "..." in sub:
            k = sub.index("...")
            mine = ell[nmax - n:]
            target = list(shp)
            for j, c in enumerate(mine):
                if shp[k + j] == 1 and size.get(c, 1) != 1:
                    target[k + j] = size[c]
            if tuple(target) != shp:
                from .array_ops import broadcast_to
                x = broadcast_to(x, target)
            sub = sub.replace("...", mine)
        new_subs.append(sub)
        new_inputs.append(x)
    return ",".join(new_subs) + "->" + out.replace("...", ell), new_inputs


def tensordot(a, b, axes, name=None):
    na, nb = len(aval_of(a).shape), len(aval_of(b).shape)
    if isinstance(axes, int):
        ax_a, ax_b = list(range(na - axes, na)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b)
    sha, shb = aval_of(a).shape, aval_of(b).shape
    for i, j in zip(ax_a, ax_b):
        if not (-na <= i < na and -nb <= j < nb):
            raise InvalidArgumentError(f"tensordot: axes ({i}, {j}) are out of range for a of rank {na} and b of rank {nb}")
        if sha[i] is not None and shb[j] is not None and sha[i] != shb[j]:
            raise InvalidArgumentError(
                f"tensordot: contracted dimensions differ: a{tuple(sha)} axis {i} has size {sha[i]}, "
                f"b{tuple(shb)} axis {j} has size {shb[j]}; pick axes whose sizes match")
        if sha[i] is None or shb[j] is None:
            # known when it runs: checked then (einsum would broadcast a size-1 axis against the other)
            from . import array_ops as A
            from ..core.primitives import assert_op as AS
            da, db = (cast(A.shape(t, np.int64)[k], np.int64) for t, k in ((a, i), (b, j)))
            bind(AS.assert_p, equal(da, db), da, db, template=(
                f"tensordot: contracted dimensions differ: a's axis {i} has size ", None, f", b's axis {j} has "
                "size ", None, "; pick axes whose sizes match"), summarize=3)
    letters = "abcdefghijklmnopqrstuvwxyz"
    sa = list(letters[:na])
    sb = list(letters[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        sb[j % nb] = sa[i % na]
    out = [c for i, c in enumerate(sa) if i not in [x % na for x in ax_a]] + \
          [c for j, c in enumerate(sb) if j not in [x % nb for x in ax_b]]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def linalg_norm(x, ord="euclidean", axis=None, keepdims=False):
    return reduce_euclidean_norm(x, axis, keepdims)


# -- small tf.math functions TF programs call (compositions) ----------------------------------------

def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0 (floating dtypes only, as TF)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if aval_of(x).dtype.kind != "f":
        raise InvalidArgumentTypeError(f"reciprocal_no_nan: Value for attr 'T' of {aval_of(x).dtype.name} is not in the "
                                   "list of allowed values: bfloat16, half, float, double (cast to a float dtype)")
    return divide_no_nan(convert_to_tensor(np.ones((), aval_of(x).dtype)), x)


def invert_permutation(x, name=None):
    """y with y[x[i]] = i for a permutation x of 0..n-1 (the argsort of x); anything else is an
    InvalidArgumentError, eagerly and inside a function (an Assert)."""
    from .array_ops import argsort, gather, range as _range
    from .check_ops import Assert
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if len(aval_of(x).shape) != 1 or aval_of(x).dtype.kind not in "iu":
        raise InvalidArgumentError(f"invert_permutation: x must be a 1-D int32 or int64 tensor, got "
                                   f"{aval_of(x).dtype.name} {fmt_shape(aval_of(x).shape)}")
    y = argsort(x, stable=True)
    n = aval_of(x).shape[0]
    if n is None:   # an input_signature's None: 0..n-1 when the function runs
        from .array_ops import shape
        ok = reduce_all(equal(cast(gather(x, y), np.int64), _range(shape(x, np.int64)[0], dtype=np.int64)))
        Assert(ok, ["invert_permutation: x is not a permutation of 0..n-1 (n its length)"])
        return cast(y, aval_of(x).dtype)
    ok = reduce_all(equal(cast(gather(x, y), np.int64), cast(_range(n), np.int64)))
    Assert(ok, [f"invert_permutation: x is not a permutation of 0..{n - 1}"])
    return cast(y, aval_of(x).dtype)


def _monotonic(x, strict):
    from .array_ops import reshape
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if aval_of(x).dtype.kind not in "iuf":   # (TF 2.21's TypeError)
        raise InvalidArgumentTypeError(f"is_{'strictly_increasing' if strict else 'non_decreasing'}: expected x to be "
                                       f"numeric, got {aval_of(x).dtype.name}")
    flat = reshape(x, [-1])
    n = aval_of(flat).shape[0]
    if n is not None and n < 2:
        return convert_to_tensor(np.array(True))
    a, b = flat[1:], flat[:-1]
    return reduce_all(greater(a, b) if strict else greater_equal(a, b))


def is_non_decreasing(x, name=None):
    """Whether x (flattened, row-major) never decreases; True for fewer than two elements."""
    return _monotonic(x, False)


def is_strictly_increasing(x, name=None):
    """Whether x (flattened, row-major) always increases; True for fewer than two elements."""
    return _monotonic(x, True)


def zero_fraction(value, name=None):
    """The fraction of entries of ``value`` that are 0, as float32."""
    value = value if isinstance(value, Tensor) else convert_to_tensor(value)
    return reduce_mean(cast(equal(value, convert_to_tensor(np.zeros((), aval_of(value).dtype))), np.float32))


def realdiv(x, y, name=None):
    """x / y for floating tensors (TF has no integer kernel: NotFoundError)."""
    from ..errors import NotFoundError
    x, y = match_lists("realdiv", x, y)
    d = aval_of(x).dtype if isinstance(x, Tensor) else aval_of(y).dtype
    if d.kind != "f":
        raise NotFoundError(f"realdiv: no kernel for {d.name} (TF: Could not find device for node RealDiv); "
                            "use tf.math.truediv or cast to a float dtype")
    return divide(x, y)


def truncatediv(x, y, name=None):
    """x / y rounded toward zero (C's integer division; trunc(x / y) for floats)."""
    x, y = match_lists("truncatediv", x, y)
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if aval_of(x).dtype.kind == "b":
        raise InvalidArgumentTypeError("truncatediv/truncatemod: expects numeric tensors, got bool; cast first: "
                                       "tapeflow.cast(x, tapeflow.int32)")
    if aval_of(x).dtype.kind == "u":   # (non-negative: truncation is floor)
        return floordiv(x, y)
    if aval_of(x).dtype.kind == "i":
        q = floordiv(abs(x), abs(y))
        return where(equal(sign(x), sign(y)), q, negative(q))
    q = divide(x, y)
    return where(less(q, 0), ceil(q), floor(q))


def truncatemod(x, y, name=None):
    """The remainder of truncatediv: x - truncatediv(x, y) * y (the sign of x, as C's fmod)."""
    x, y = match_lists("truncatemod", x, y)
    return subtract(x, multiply(truncatediv(x, y), y))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """add_n (TF deprecates accumulate_n for it)."""
    return add_n(inputs)


def _tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def complex(real, imag, name=None):  # noqa: A001  (TF's name)
    """tf.complex: real + i * imag (float32 -> complex64, float64 -> complex128), broadcasting;
    the two must share their dtype (TF 2.21's TypeError otherwise; ints are refused as TF)."""
    return bind(E.complex_p, real, imag)


def real(input, name=None):  # noqa: A002
    """The real part (TF 2.21: float32 of complex64); a real tensor is returned as it is."""
    x = _tensor(input)
    return bind(E.real_p, x) if x.dtype.is_complex else x


def imag(input, name=None):  # noqa: A002
    """The imaginary part (TF 2.21: float32 of complex64); zeros of a real tensor."""
    x = _tensor(input)
    return bind(E.imag_p, x) if x.dtype.is_complex else zeros_like_(x)


def conj(x, name=None):
    """The complex conjugate; a real tensor is returned as it is (TF 2.21, ints too)."""
    x = _tensor(x)
    return bind(E.conj_p, x) if x.dtype.is_complex else x


def angle(input, name=None):  # noqa: A002
    """The argument atan2(imag, real) in (-pi, pi]; of a real number: 0 for x >= 0, pi for x < 0.
    Composed, so its gradient is atan2's through real/imag (TF 2.21's: -y/|z|^2 + i x/|z|^2)."""
    x = _tensor(input)
    if x.dtype.is_complex:
        return atan2(bind(E.imag_p, x), bind(E.real_p, x))
    return atan2(zeros_like_(x), x)
