"""Reductions and scans. ``axis`` params are normalised tuples (hashable, so
traced equations can be compared and cached)."""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive, bind, aval_of
from . import _rules
from ..dtypes import BF16 as _BF16
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from . import elementwise as E
from . import shape as S


def _reduce_abstract(name, kinds="fiu"):
    def rule(x, axis, keepdims):
        if _rules._kind(x.dtype) not in kinds:  # bools too, as TF: reduce_any/reduce_all, or cast to count
            raise InvalidArgumentTypeError(f"{name}: expects a numeric tensor, got {x.dtype.name} {fmt_shape(x.shape)}; "
                                           "cast first, e.g. tapeflow.cast(x, tapeflow.int32)")
        for a in axis:
            if not 0 <= a < max(x.ndim, 1):
                raise InvalidArgumentError(f"{name}: axis {a} is out of range for a tensor of rank {x.ndim}")
        if keepdims:
            shape = tuple(1 if i in axis else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axis)
        return Aval(shape, x.dtype)
    return rule


_INT32 = np.dtype(np.int32)


def _int_dtype(x):
    """Integer sums/products keep the input's dtype (NumPy would widen int32 to
    int64; TF does not); bools are counted as int32."""
    return _INT32 if x.dtype.kind == "b" else x.dtype


def _kept(shape, axis):
    """``shape`` with the reduced ``axis`` kept as 1s: a reduction's keepdims shape."""
    return tuple([1 if i in axis else d for i, d in enumerate(shape)])


def _expand_to(g, x, axis, keepdims):
    """Undo a reduction's shape: reshape g to keepdims form, then broadcast."""
    xs = aval_of(x).shape
    if not keepdims:
        g = S.reshape(g, tuple(1 if i in axis else (-1 if d is None else d) for i, d in enumerate(xs)))
    return S.broadcast_like(g, x)


def _expand_to_np(g, x, axis, keepdims):
    """``_expand_to`` on arrays: the same reshape and broadcast views."""
    xs = x.shape
    if not g.ndim and xs:  # a full reduction's cotangent: no reshape of a scalar first
        return _rules.broadcast_np(g, xs)
    if not keepdims:
        g = g.reshape(_kept(xs, axis))
    return g if g.shape == xs else _rules.broadcast_np(g, xs)


def reduce_sum(x, axis, keepdims=False):
    return bind(reduce_sum_p, x, axis=tuple(axis), keepdims=keepdims)


def _sum_kernel(x, axis, keepdims):
    # the ufunc's reduce directly: np.sum's Python wrapper costs microseconds per call
    if x.dtype.kind == "f":
        return _add_reduce(x, axis=axis, keepdims=keepdims)
    if x.dtype is _BF16:   # TF's bfloat16 sums accumulate in float32 and round once (TF 2.21's numbers)
        return _add_reduce(x, axis=axis, keepdims=keepdims, dtype=np.float32).astype(_BF16)
    return _add_reduce(x, axis=axis, keepdims=keepdims, dtype=_int_dtype(x))


_add_reduce = np.add.reduce


# Reductions return new arrays (aliases=False). Their numba lowering is the ufunc
# they fold with and where the fold starts: "zero" (the ufunc's identity; an empty
# input gives it), or "lowest"/"highest" of the dtype (the kernel then returns TF's
# identity for an empty input; the native tier declines empty inputs).
# (complex: a sum is linear with real coefficients, so its vjp needs no conj; TF's convention)
reduce_sum_p = Primitive("reduce_sum", _sum_kernel, _reduce_abstract("reduce_sum", "fiuc"),
                         lambda g, out, x, axis, keepdims: (_expand_to(g, x, axis, keepdims),), complex=True,
                         vjp_np=lambda need, g, out, x, axis, keepdims: (_expand_to_np(g, x, axis, keepdims),),
                         impl_out=lambda out, x, axis, keepdims: _add_reduce(x, axis=axis, keepdims=keepdims, out=out),
                         aliases=False, fusion="reduction", lowerings={"numba": (np.add, "zero")})


def _extremum_vjp(g, out, x, axis, keepdims):
    # Ties share the gradient equally (as TF's reduce_max), so the sum of the
    # gradient over the tied entries is g and finite differences agree.
    o = out if keepdims else S.reshape(out, _kept(aval_of(x).shape, axis))
    mask = E.bind(E.cast_p, E.bind(E.equal_p, x, o), dtype=aval_of(x).dtype)
    count = reduce_sum(mask, axis, keepdims=True)
    return (E.mul(_expand_to(g, x, axis, keepdims), E.div(mask, count)),)


def _extremum_vjp_np(need, g, out, x, axis, keepdims):
    o = out if keepdims else out.reshape(_kept(x.shape, axis))
    mask = E.cast_p.impl(np.equal(x, o), dtype=x.dtype)
    count = _sum_kernel(mask, axis, True)
    return (np.multiply(_expand_to_np(g, x, axis, keepdims), E.div_p.impl(mask, count)),)


def _identity(x, lowest):
    """The identity of max (lowest=True) or min over x's dtype: TF's value for
    an empty reduction (-inf for floats, the dtype's minimum for integers)."""
    if x.dtype.kind == "f" or x.dtype is _BF16:
        return -np.inf if lowest else np.inf
    info = np.iinfo(x.dtype)
    return info.min if lowest else info.max


#: a 2-D max/min over a last axis this short runs as a chain of column ufuncs
SHORT_LAST_AXIS = 8


def _extremum_kernel(ufunc, lowest):
    def kernel(x, axis, keepdims, out=None):
        if x.size == 0:  # NumPy raises ("no identity"); TF returns the identity
            return ufunc.reduce(x, axis=axis, keepdims=keepdims, out=out, initial=_identity(x, lowest))
        if x.ndim == 2 and axis == (1,) and not keepdims and 2 <= x.shape[1] <= SHORT_LAST_AXIS:
            # Q-values' max over a few actions (DQN's target): NumPy's reduce over a short
            # inner axis costs ~10 us for 200x4, the same folds in the same order as column
            # ufuncs ~3 us (equal results, NaN propagating as in the reduce)
            out = ufunc(x[:, 0], x[:, 1], out=out)
            for j in range(2, x.shape[1]):
                ufunc(out, x[:, j], out=out)
            return out
        return ufunc.reduce(x, axis=axis, keepdims=keepdims, out=out)
    return kernel


_max_kernel = _extremum_kernel(np.maximum, True)
_min_kernel = _extremum_kernel(np.minimum, False)
reduce_max_p = Primitive("reduce_max", _max_kernel, _reduce_abstract("reduce_max"), _extremum_vjp,
                         vjp_np=_extremum_vjp_np,
                         impl_out=lambda out, x, axis, keepdims: _max_kernel(x, axis, keepdims, out=out),
                         aliases=False, fusion="reduction", lowerings={"numba": (np.maximum, "lowest")})
# reduce_min is its own primitive (not -max(-x)) only so compiled code calls one kernel.
reduce_min_p = Primitive("reduce_min", _min_kernel, _reduce_abstract("reduce_min"), _extremum_vjp,
                         vjp_np=_extremum_vjp_np,
                         impl_out=lambda out, x, axis, keepdims: _min_kernel(x, axis, keepdims, out=out),
                         aliases=False, fusion="reduction", lowerings={"numba": (np.minimum, "highest")})


def _prod_vjp(g, out, x, axis, keepdims):
    # d prod / d x_i = prod of the others. prod/x_i breaks at zeros, so compute
    # the product of the others directly: move the reduced axes last, replicate
    # along a new axis with x_i replaced by 1, and reduce. O(n^2) memory in the
    # reduced size, but exact with zeros and differentiable again.
    xs = aval_of(x).shape
    nd = len(xs)
    keep = [i for i in range(nd) if i not in axis]
    perm = tuple(keep) + tuple(axis)
    xt = S.transpose(x, perm)
    n = int(np.prod([xs[i] for i in axis])) if axis else 1
    lead = tuple(xs[i] for i in keep)
    xf = S.reshape(xt, lead + (1, n))                       # (..., 1, n)
    eye = np.eye(n, dtype=bool)                               # (n, n)
    others = bind(reduce_prod_p, E.bind(E.select_p, eye, 1, xf), axis=(len(lead) + 1,), keepdims=False)  # (..., n)
    others = S.reshape(others, lead + tuple(xs[i] for i in axis))
    inv = tuple(int(i) for i in np.argsort(perm))
    others = S.transpose(others, inv)
    # (complex, wave 22: TF's convention, a holomorphic op's vjp multiplies by the conjugate derivative)
    return (E.mul(_expand_to(g, x, axis, keepdims), E._cj(others)),)


def _prod_kernel(x, axis, keepdims):
    if x.dtype is _BF16:   # in float32, rounded once, as TF's bfloat16 products
        return np.prod(x, axis=axis, keepdims=keepdims, dtype=np.float32).astype(_BF16)
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=None if x.dtype.kind == "f" else _int_dtype(x))


reduce_prod_p = Primitive("reduce_prod", _prod_kernel,
                          _reduce_abstract("reduce_prod", "fiuc"), _prod_vjp, aliases=False, fusion="reduction",
                          complex=True)


def _arg_abstract(name):
    def rule(x, axis, output_type):
        if not 0 <= axis < x.ndim:   # (TF: a scalar has no axis to search; argmax(5.0) raises)
            raise InvalidArgumentError(f"{name}: axis {axis} is out of range for a tensor of rank {x.ndim} "
                                       f"(shape {fmt_shape(x.shape)})")
        if x.ndim and x.shape[axis] == 0:
            raise InvalidArgumentError(f"{name}: reduction axis {axis} is empty in shape {fmt_shape(x.shape)}; "
                                       "there is no index to return")
        return Aval(tuple(d for i, d in enumerate(x.shape) if i != axis), output_type)
    return rule


def _arg_kernel(method, fill):
    # the ndarray method, not np.argmax: the function form adds ~1.5 us of dispatch per call
    # (numpy 2.4), most of a compiled act()'s gap to the NumPy forward (issue 14)
    def kernel(x, axis, output_type):
        r = getattr(x, method)(axis)
        # NumPy returns a slice's first NaN; TF's kernels compare with > (<), which a NaN never
        # passes: they skip NaNs (argmax([1, nan, 3]) is 2; a slice of NaNs gives 0). NumPy's
        # pick is a NaN iff the slice holds one, so the pick alone is checked.
        if r.size == 1:
            # every other axis has size 1 (an act()'s (1, n) row): r's index is the flat index;
            # for an integer array v != v is False (~0.14 us, where a dtype test first cost 0.26)
            v = x.item(r.item())
            nan = v != v
        elif x.dtype.kind == "f" or x.dtype is _BF16:
            v = np.take_along_axis(x, np.expand_dims(r, axis), axis)
            nan = bool((v != v).any())
        else:
            nan = False
        if nan:
            r = getattr(np.where(x != x, fill, x), method)(axis)
        return r.astype(output_type, copy=False)
    return kernel


argmax_p = Primitive("argmax", _arg_kernel("argmax", -np.inf), _arg_abstract("argmax"), differentiable=False,
                     aliases=False)
argmin_p = Primitive("argmin", _arg_kernel("argmin", np.inf), _arg_abstract("argmin"), differentiable=False,
                     aliases=False)


def _cumulative(x, axis, exclusive, reverse, accumulate, identity):
    """cumsum/cumprod's shared walk: reversed, the accumulation, shifted by one (exclusive: the
    identity first), reversed back."""
    if reverse:
        x = np.flip(x, axis)
    r = accumulate(x)
    if exclusive and r.shape[axis]:   # (an empty axis has nothing to shift: take([0]) of it raised)
        r = np.concatenate([identity(np.take(r, [0], axis=axis)), np.take(r, np.arange(r.shape[axis] - 1), axis=axis)],
                           axis=axis)
    if reverse:
        r = np.flip(r, axis)
    return r


def _cumsum_kernel(x, axis, exclusive, reverse):
    # (bfloat16: TF's Cumsum adds in bfloat16, each partial sum rounded: TF 2.21 gives
    # cumsum([1] + [2**-8] * 16) all ones, where reduce_sum gives 1.0625)
    dt = None if x.dtype.kind == "f" or x.dtype is _BF16 else _int_dtype(x)
    return _cumulative(x, axis, exclusive, reverse, lambda v: np.cumsum(v, axis=axis, dtype=dt), np.zeros_like)


def _cumsum_abstract(x, axis, exclusive, reverse):
    if _rules._kind(x.dtype) not in "fiuc":   # (TF's Cumsum has no bool kernel: a sum of bools is a cast away)
        raise InvalidArgumentTypeError(f"cumsum: expects numbers (float or int), got {x.dtype.name} "
                                       f"{fmt_shape(x.shape)}; cast first, e.g. tf.cast(x, tf.int32)")
    if not 0 <= axis < x.ndim:   # (TF: a scalar has no scan axis; the kernel gave shape (1,))
        raise InvalidArgumentError(f"cumsum: axis {axis} is out of range for a tensor of rank {x.ndim} "
                                   f"(shape {fmt_shape(x.shape)})")
    return Aval(x.shape, x.dtype)


cumsum_p = Primitive("cumsum", _cumsum_kernel, _cumsum_abstract,
                     # the transpose of a prefix sum is the suffix sum
                     lambda g, out, x, axis, exclusive, reverse: (
                         bind(cumsum_p, g, axis=axis, exclusive=exclusive, reverse=not reverse),), aliases=False,
                     complex=True,
                     vjp_np=lambda need, g, out, x, axis, exclusive, reverse: (
                         _cumsum_kernel(g, axis, exclusive, not reverse),))


def _cumprod_kernel(x, axis, exclusive, reverse):
    # (integers wrap in their own dtype, as TF's)
    return _cumulative(x, axis, exclusive, reverse, lambda v: np.cumprod(v, axis=axis, dtype=x.dtype), np.ones_like)


def _scan_rule(name, kinds, wants):
    """The shape/dtype rule of a cumulative op along ``axis``: the input's aval, for dtypes of
    the ``kinds`` (``wants`` names them in the error) and an axis inside the rank."""
    def rule(x, axis, exclusive, reverse):
        if _rules._kind(x.dtype) not in kinds:
            raise InvalidArgumentTypeError(f"{name}: expects {wants}, got {x.dtype.name} {fmt_shape(x.shape)}")
        if not 0 <= axis < x.ndim:   # (TF: a scalar has no scan axis)
            raise InvalidArgumentError(f"{name}: axis {axis} is out of range for a tensor of rank {x.ndim} "
                                       f"(shape {fmt_shape(x.shape)})")
        return Aval(x.shape, x.dtype)
    return rule


_cumprod_abstract = _scan_rule("cumprod", "fiu", "numbers (float or int)")


def _cumprod_vjp(g, out, x, axis, exclusive, reverse):
    # TF's _CumprodGrad: cumsum(out * g, reversed) / x, with div_no_nan: exact where x != 0; at a
    # zero entry TF's formula gives 0 (the true derivative there is the product of the others),
    # kept so that gradients match TF's. Written in ops: it differentiates again.
    from ...ops import math_ops as M
    s = bind(cumsum_p, M.multiply(out, g), axis=axis, exclusive=exclusive, reverse=not reverse)
    return (M.divide_no_nan(s, x),)


cumprod_p = Primitive("cumprod", _cumprod_kernel, _cumprod_abstract, _cumprod_vjp, aliases=False,
                      doc="running product along axis (exclusive: shifted, starting at 1; reverse: from the end)")


def _argsort_kernel(x, axis, descending):
    if descending:
        # stable descending order: sort the negated keys (ints: bitwise-not keeps order reversal exact)
        key = -x if _rules._kind(x.dtype) == "f" else ~x if x.dtype.kind in "iu" else ~x
        return np.argsort(key, axis=axis, kind="stable").astype(np.int32)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int32)


argsort_p = Primitive("argsort", _argsort_kernel, lambda x, axis, descending: Aval(x.shape, np.int32),
                      differentiable=False, aliases=False)


def _searchsorted_kernel(sorted_sequence, values, side, out_type):
    s, v = np.asarray(sorted_sequence), np.asarray(values)
    # (rows counted from the leading dims: reshape(-1, 0) of an empty row is ambiguous)
    rows_s = s.reshape(int(np.prod(s.shape[:-1])), s.shape[-1])
    rows_v = v.reshape(int(np.prod(v.shape[:-1])), v.shape[-1])
    if rows_s.shape[0] != rows_v.shape[0]:
        raise InvalidArgumentError(f"searchsorted: the leading dims of sorted_sequence {fmt_shape(s.shape)} and "
                                   f"values {fmt_shape(v.shape)} must match (one row of values per sorted row)")
    out = np.empty(rows_v.shape, out_type)
    for r in range(rows_v.shape[0]):
        out[r] = np.searchsorted(rows_s[r], rows_v[r], side=side)
    if side == "left" and _rules._kind(v.dtype) == "f":
        # TF's lower_bound compares with <, which no NaN satisfies: a NaN goes first (NumPy: last)
        out[np.isnan(rows_v)] = 0
    return out.reshape(v.shape)


def _searchsorted_abstract(sorted_sequence, values, side, out_type):
    if not sorted_sequence.shape or not values.shape:
        raise InvalidArgumentError(f"searchsorted: sorted_sequence and values need rank >= 1 (rows in their last "
                                   f"axis), got {fmt_shape(sorted_sequence.shape)} and {fmt_shape(values.shape)}")
    if sorted_sequence.dtype != values.dtype:
        raise InvalidArgumentTypeError(f"searchsorted: sorted_sequence ({sorted_sequence.dtype.name}) and values "
                                       f"({values.dtype.name}) need one dtype")
    return Aval(values.shape, np.dtype(out_type))


searchsorted_p = Primitive("searchsorted", _searchsorted_kernel, _searchsorted_abstract, differentiable=False,
                           aliases=False, doc="per row (last axis), where each value would go in the sorted row: "
                                              "side 'left' (first position) or 'right' (after equal entries)")


# -- cumulative_logsumexp (branch ops18) --------------------------------------------------------------

def _cumlse_kernel(x, axis, exclusive, reverse):
    # np.logaddexp.accumulate: the running log(e^a + e^b) pair by pair, max(a, b) + log1p(e^-|a-b|),
    # TF's algorithm; a shift by the global max (log(cumsum(exp(x - max)))) would underflow the
    # early terms of a row with a wide range (-1000 before 0: -inf instead of -1000)
    with np.errstate(invalid="ignore"):
        return _cumulative(x, axis, exclusive, reverse, lambda v: np.logaddexp.accumulate(v, axis=axis),
                           lambda v: np.full_like(v, -np.inf))


_cumlse_abstract = _scan_rule("cumulative_logsumexp", "f", "a float tensor (cast first: tf.cast(x, tf.float32))")


def _cumlse_vjp(g, out, x, axis, exclusive, reverse):
    # TF's _CumulativeLogsumexpGrad: the positive and negative parts of g in log space, each a
    # reversed cumulative_logsumexp of log|g| - out, plus x; written in ops, so it differentiates
    # again. Where a part is empty (g <= 0 for the positive one) its term is the constant -inf,
    # selected, not log(0) - out: that was -inf - out, nan where out is -inf, and at second order
    # a nan cotangent for out (every part of an all-positive g's negative side), which the outer
    # rule's g > 0 / g < 0 tests then dropped, losing the whole path through out. (First order: the
    # same values as TF's, except 0 where TF's formula gives -inf - -inf = nan.)
    from ...ops import math_ops as M
    ninf = np.asarray(-np.inf, aval_of(x).dtype)
    parts = []
    for has, mag in ((M.greater(g, 0), g), (M.less(g, 0), M.negative(g))):
        z = M.where(has, M.subtract(M.log(M.where(has, mag, 1)), out), ninf)
        parts.append(M.exp(M.add(bind(cumulative_logsumexp_p, z, axis=axis, exclusive=exclusive,
                                      reverse=not reverse), x)))
    return (M.subtract(parts[0], parts[1]),)


# a primitive: no composition of the existing ops is accurate (see the kernel), and NumPy has the
# pairwise scan as one ufunc accumulate
cumulative_logsumexp_p = Primitive("cumulative_logsumexp", _cumlse_kernel, _cumlse_abstract, _cumlse_vjp,
                                   aliases=False, doc="running log-sum-exp along axis (exclusive: shifted, "
                                   "starting at -inf; reverse: from the end)")
