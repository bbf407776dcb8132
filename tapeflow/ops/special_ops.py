"""Special functions with TF's names (tf.math.lgamma, digamma, polygamma, erfc, erfinv, nextafter):
one primitive each (core/primitives/special.py says why and how accurate); and the other tf.math /
tf.nn / tf.unravel_index functions added in wave 18 (multiply_no_nan, cumulative_logsumexp,
unravel_index, log_poisson_loss, weighted_cross_entropy_with_logits)."""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape
from ..core.primitive import bind, aval_of
from ..core.primitives import elementwise as _E, reductions as _R, special as _S
from ..core.tensor import Tensor, TensorShape, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from .math_ops import (match_lists, where, multiply, add, subtract, exp, log, log1p, abs, negative, maximum,
                       greater_equal, less_equal, logical_and, zeros_like_, reduce_sum, cast, _scan_axis)


def lgamma(x, name=None):
    """tf.math.lgamma: log |Gamma(x)|; inf at 0 and the negative integers, as TF."""
    return bind(_S.lgamma_p, x)


def digamma(x, name=None):
    """tf.math.digamma: Gamma'(x) / Gamma(x); nan at 0 and the negative integers, as TF."""
    return bind(_S.polygamma_p, x, n=0)


def polygamma(a, x, name=None):
    """tf.math.polygamma: the a-th derivative of digamma. ``a`` is TF's float tensor of orders (x's
    dtype, broadcast against x); here its values must be known when the op runs (a Python number,
    a NumPy value or an eager tensor), as each order is its own op (``n`` static). Orders that are
    not whole numbers >= 0 give nan, as TF's kernel; a has no gradient (TF: None)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    dt = aval_of(x).dtype
    if isinstance(a, (Tensor, np.ndarray, np.generic)) and aval_of(a).dtype != dt:
        raise InvalidArgumentTypeError(f"polygamma: a and x must have the same dtype, got a {aval_of(a).dtype.name} "
                                       f"and x {dt.name}; cast a: tapeflow.cast(a, x.dtype)")
    if isinstance(a, Tensor) and a._v is None:
        return _traced_polygamma(a, x)
    try:
        av = np.asarray(a.numpy() if isinstance(a, Tensor) else a, dtype=np.float64)
    except Exception:
        raise InvalidArgumentError(
            f"polygamma: the order a must be known when the op runs (a Python number, a NumPy value or an "
            f"eager tensor), got {type(a).__name__}: tapeflow makes one op per order; pass it as a Python "
            "number") from None
    whole = np.isfinite(av) & (av >= 0) & (av == np.floor(av))
    if av.ndim == 0:
        return bind(_S.polygamma_p, x, n=int(av)) if whole else multiply(x, np.nan)
    # nan where the order is not whole, in the broadcast shape: x times a constant that is 0 where the order is
    # whole, so the gradient there is 0 * g (where() sends 0 to the branch it does not pick), not x * nan's nan
    # (every polygamma gradient of a vector of orders was nan), and nan where the order is not whole, as TF's
    out = multiply(x, np.where(whole, 0.0, np.nan).astype(np.zeros((), dt).dtype))
    for n in np.unique(av[whole]).astype(int).tolist():
        out = where(np.asarray(av == n), bind(_S.polygamma_p, x, n=n), out)
    return out


def _traced_polygamma(a, x):
    """polygamma of an order the trace computes (a tensor argument): TF's kernel's identity, digamma for
    a = 0 and (-1)^(a+1) a! zeta(a + 1, x) above (a! as exp(lgamma(a + 1)) in float64, so float32 loses
    nothing to it); nan where a is not a whole number >= 0. Matches the per-order series within float
    rounding (1e-7 relative in float32)."""
    from . import math_ops as M
    dt = aval_of(x).dtype
    a64 = cast(a, np.float64)
    whole = logical_and(greater_equal(a64, 0.0), M.equal(a64, M.floor(a64)))
    safe = where(whole, a64, zeros_like_(a64))   # (a bad order's branch stays finite; nan is chosen below)
    fact = exp(lgamma(add(safe, 1.0)))
    scale = cast(where(M.equal(M.floormod(safe, 2.0), 1.0), fact, negative(fact)), dt)
    series = multiply(scale, zeta(add(cast(safe, dt), np.asarray(1, dt)), x))
    out = where(M.equal(safe, 0.0), digamma(x), series)
    # nan where a is not whole, as x times 0 or nan (the static path's fill): its gradient is nan there and 0
    # elsewhere, where out * nan's zero cotangent times nan made every element's gradient nan
    fill = multiply(x, cast(where(whole, np.float64(0.0), np.float64(np.nan)), dt))
    return where(whole, out, fill)


def erfc(x, name=None):
    """tf.math.erfc: 1 - erf(x), accurate where erf(x) is near 1 (erfc(10) = 2.1e-45 in float64)."""
    return bind(_S.erfc_p, x)


def erfinv(x, name=None):
    """tf.math.erfinv: the inverse error function; +-inf at +-1, nan outside [-1, 1]."""
    return bind(_S.erfinv_p, x)


def nextafter(x1, x2, name=None):
    """tf.math.nextafter: the next representable value after x1 towards x2 (float32/float64)."""
    return bind(_S.nextafter_p, *match_lists("nextafter", x1, x2))


def multiply_no_nan(x, y, name=None):
    """tf.math.multiply_no_nan: x * y, and 0 where y == 0 even if x is inf or nan (float only, as TF)."""
    return bind(_E.mul_no_nan_p, *match_lists("multiply_no_nan", x, y))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """tf.math.cumulative_logsumexp: log(cumsum(exp(x))) along ``axis`` without overflow or underflow
    (a pairwise log-add-exp scan, TF's algorithm); exclusive starts at -inf."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    return bind(_R.cumulative_logsumexp_p, x, axis=_scan_axis("cumulative_logsumexp", x, axis),
                exclusive=bool(exclusive), reverse=bool(reverse))


def _same_shape(name, a, b, an, bn):
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if not TensorShape(sa).is_compatible_with(sb):
        raise ValueError(f"{name}: `{an}` and `{bn}` must have the same shape, received ({fmt_shape(sa)} vs "
                         f"{fmt_shape(sb)}).")


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """tf.nn.log_poisson_loss: exp(log_input) - targets * log_input, plus Stirling's approximation of
    log(targets!) where targets > 1 when ``compute_full_loss`` (TF's formula)."""
    targets = targets if isinstance(targets, Tensor) else convert_to_tensor(targets)
    log_input = log_input if isinstance(log_input, Tensor) else convert_to_tensor(log_input)
    _same_shape("log_poisson_loss", log_input, targets, "log_input", "targets")
    result = subtract(exp(log_input), multiply(log_input, targets))
    if compute_full_loss:
        # TF: z log z - z + 0.5 log(2 pi z), only where z > 1 (0 for 0 and 1: log(0!) = log(1!) = 0)
        dt = aval_of(targets).dtype
        z = targets
        stirling = add(subtract(multiply(z, log(z)), z), multiply(0.5, log(multiply(np.asarray(2 * np.pi, dt), z))))
        result = add(result, where(logical_and(greater_equal(z, 0), less_equal(z, 1)), zeros_like_(z), stirling))
    return result


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """tf.nn.weighted_cross_entropy_with_logits: sigmoid cross-entropy with the positive term weighted
    by ``pos_weight``, in TF's stable form (1 - z) x + (1 + (q - 1) z) (log1p(exp(-|x|)) + max(-x, 0))."""
    labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    _same_shape("weighted_cross_entropy_with_logits", logits, labels, "logits", "labels")
    # (a Python pos_weight stays a Python number, weak, so float64 labels keep float64 as in TF)
    pw1 = subtract(pos_weight, 1.0) if isinstance(pos_weight, (Tensor, np.ndarray)) else pos_weight - 1.0
    log_weight = add(1.0, multiply(pw1, labels))
    return add(multiply(subtract(1.0, labels), logits),
               multiply(log_weight, add(log1p(exp(negative(abs(logits)))), maximum(negative(logits), 0.0))))


def unravel_index(indices, dims, name=None):
    """tf.unravel_index: the coordinates of flat ``indices`` (a scalar or a vector, int32/int64) in an
    array of shape ``dims``: shape (len(dims),) or (len(dims), n). As TF's kernel: an index past the
    end raises, a negative one divides with C's truncation (-1 in (3, 4) gives (0, -1))."""
    from .check_ops import Assert
    from .math_ops import reduce_all, reduce_prod, cumprod, floordiv, less, not_equal, greater_equal
    from .array_ops import expand_dims
    indices = indices if isinstance(indices, Tensor) else convert_to_tensor(indices)
    dims = dims if isinstance(dims, Tensor) else convert_to_tensor(dims, dtype=aval_of(indices).dtype)
    ai, ad = aval_of(indices), aval_of(dims)
    for what, a in (("indices", ai), ("dims", ad)):
        if a.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise InvalidArgumentTypeError(f"unravel_index: {what} must be int32 or int64, got {a.dtype.name}; "
                                           "cast it: tf.cast(x, tf.int32)")
    if ai.dtype != ad.dtype:
        raise InvalidArgumentTypeError(f"unravel_index: indices ({ai.dtype.name}) and dims ({ad.dtype.name}) must "
                                       "have the same dtype; cast one")
    if len(ai.shape) > 1:
        raise InvalidArgumentError(f"unravel_index: The indices can only be scalar or vector, got shape "
                                   f"{fmt_shape(ai.shape)}")
    if len(ad.shape) != 1:
        raise InvalidArgumentError(f"unravel_index: dims must be a vector, got shape {fmt_shape(ad.shape)}")
    if ai.shape == (0,):
        raise InvalidArgumentError("unravel_index: received empty tensor indices (TF's kernel refuses them)")
    Assert(reduce_all(not_equal(dims, 0)), ["unravel_index: Input dims cannot contain a dim of zero, but dims "
                                           "contains zero:", dims])
    Assert(reduce_all(less(indices, reduce_prod(dims))),
           ["unravel_index: index is out of bound as with dims:", dims, "indices:", indices])
    strides = cumprod(dims, exclusive=True, reverse=True)
    if len(ai.shape) == 1:
        idx, strides, d = expand_dims(indices, 0), expand_dims(strides, -1), expand_dims(dims, -1)
    else:
        idx, d = indices, dims

    def truncdiv(a, b):    # C's division (b > 0): toward zero
        return where(greater_equal(a, 0), floordiv(a, b), negative(floordiv(negative(a), b)))
    q = truncdiv(idx, strides)
    return subtract(q, multiply(d, truncdiv(q, d)))


def igamma(a, x, name=None):
    """tf.math.igamma: the regularized lower incomplete gamma function P(a, x); nan for a <= 0 or x < 0.
    Differentiable in x (the gradient in a is None here; TF has one)."""
    return bind(_S.igamma_p, *match_lists("igamma", a, x))


def igammac(a, x, name=None):
    """tf.math.igammac: the regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return bind(_S.igammac_p, *match_lists("igammac", a, x))


def lbeta(x, name=None):
    """log of the multivariate beta function over the last axis: sum(lgamma(x)) - lgamma(sum(x))."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    return subtract(reduce_sum(lgamma(x), axis=-1), lgamma(reduce_sum(x, axis=-1)))


def ndtri(x, name=None):
    """The standard normal quantile: sqrt(2) * erfinv(2x - 1)."""
    # 2x - 1 in float64: in float32 it rounds away the digits erfinv magnifies near +-1
    # (ndtri(0.001) came out 7.7e-6 off, TF's 2.3e-6)
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    d = aval_of(x).dtype
    if _dt.kind(d) != "f":   # (the float64 detour cast integer and bool results back: ndtri([1, 0]) was INT_MIN)
        raise InvalidArgumentTypeError(f"ndtri: expects a float tensor, got {d.name}; cast first: "
                                       "tapeflow.cast(x, tapeflow.float32)")
    x64 = cast(x, np.float64)
    return cast(multiply(erfinv(subtract(multiply(x64, 2.0), 1.0)), float(np.sqrt(2.0))), d)


def erfcinv(x, name=None):
    """The inverse of erfc: erfinv(1 - x)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if aval_of(x).dtype.kind != "f":   # (TF's TypeError: its 0.5 does not convert to an integer tensor)
        raise InvalidArgumentTypeError(f"erfcinv: expects a float tensor, got {aval_of(x).dtype.name}; cast first: "
                                       "tapeflow.cast(x, tapeflow.float32)")
    return cast(erfinv(subtract(1.0, cast(x, np.float64))), aval_of(x).dtype)   # (1 - x in float64, as ndtri)


def timestamp(name=None):
    """tf.timestamp: seconds since the epoch, a float64 scalar. Inside tapeflow.function it is one
    py_call (an effect, run at every call: TF's op is stateful), not a constant of the trace."""
    import time
    from ..core.state import STATE
    if STATE.trace is not None:
        from ..compiler.function import TensorSpec
        from .script_ops import numpy_function
        return numpy_function(lambda: np.float64(time.time()), [], TensorSpec([], "float64"))
    return Tensor(np.asarray(time.time(), np.float64))


def guarantee_const(input, name=None):  # noqa: A002
    """tf.guarantee_const (deprecated in TF, still exported): the identity; TF's promise that the
    value is constant is a Grappler hint with no effect on values."""
    from .array_ops import identity
    return identity(input)


def check_pinned(tensor, name=None):
    """tf.check_pinned (TF 2.21's CheckPinned op): whether a tensor lies in host memory pinned for
    a GPU. TF built without CUDA (its CPU package, tapeflow's peer) raises FailedPreconditionError
    on every call, eagerly and in tf.function; tapeflow runs on the CPU, so it does the same."""
    from ..errors import FailedPreconditionError
    convert_to_tensor(tensor)
    raise FailedPreconditionError("to check pinnedness, must be built with `--config=cuda` (tf.check_pinned: "
                                  "tapeflow runs on the CPU, with no GPU-pinned host memory, as TF's CPU build)")


def bitcast(input, type, name=None):  # noqa: A002
    """tf.bitcast: the same bytes as another dtype (NumPy's view, little-endian as TF on x86). A wider
    target eats the last dimension (which must be the size ratio), a narrower one appends it (TF 2.21's
    shapes). No gradient, as TF. Traced: one py_call; its output shape is the input's run-time shape so
    changed (an input_signature's None dims stay None), and a last dim unknown while tracing is checked
    when it runs."""
    from ..core import dtypes as _dtypes
    x = convert_to_tensor(input)
    dt = _dtypes.as_dtype(type)
    src, dst = x.dtype.np.itemsize, dt.np.itemsize
    shape = list(x.shape)
    if x.dtype.is_string or dt.is_string or x.dtype.name == "bool" or dt.name == "bool":
        raise InvalidArgumentTypeError(f"bitcast: {x.dtype.name} -> {dt.name}: numeric dtypes only")

    def out_shape(shape):
        if src > dst:
            return list(shape) + [src // dst]
        if src < dst:
            if not shape or shape[-1] is not None and shape[-1] != dst // src:
                # TF 2.21's text: "Cannot bitcast from 4 to 3" (the target size, the last dimension)
                raise InvalidArgumentError(f"Cannot bitcast from {dst} to {shape[-1] if shape else 'a scalar'}: "
                                           f"the last dimension of a {x.dtype.name} {tuple(shape)} input must be "
                                           f"{dst // src} to make one {dt.name}")
            return list(shape[:-1])
        return list(shape)

    def view(a):
        # (np.ascontiguousarray makes a scalar 1-D: view needs a dimension to change the itemsize of)
        to = out_shape(np.shape(a))   # (TF's check first: NumPy's view raises its own ValueError)
        return np.ascontiguousarray(a).view(dt.np).reshape(to)
    static = out_shape(shape)
    from ..core.state import STATE
    if STATE.trace is not None:
        from ..compiler.function import TensorSpec
        from .script_ops import numpy_function
        return numpy_function(view, [x], TensorSpec(static, dt))
    return Tensor(view(x.numpy()))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """tf.dynamic_partition: ``num_partitions`` tensors, the i-th holding the slices of ``data``
    whose partition is i, in order. Each is a boolean_mask (so traced with an unknown first
    dimension, and differentiable: TF's gradient, the slices scattered back). Eagerly a partition
    outside [0, num_partitions) raises TF 2.21's InvalidArgumentError."""
    from .array_ops import boolean_mask
    from .math_ops import equal
    from ..core.state import STATE
    x = convert_to_tensor(data)
    p = convert_to_tensor(partitions)
    n = int(num_partitions)
    ps, xs = tuple(p.shape), tuple(x.shape)
    head = xs[:len(ps)]
    if len(head) != len(ps) or any(a is not None and b is not None and a != b for a, b in zip(head, ps)):
        # TF 2.21's text
        raise InvalidArgumentError(f"data.shape must start with partitions.shape, got data.shape = {list(xs)}, "
                                   f"partitions.shape = {list(ps)}")
    if head != ps:
        # an input_signature's None on one side: compared when the function runs (TF's text)
        from .array_ops import shape as shape_of
        from .math_ops import reduce_all, equal as eq
        from ..core.primitive import bind
        from ..core.primitives import assert_op as AS
        xh, ph = shape_of(x)[:len(ps)], shape_of(p)
        bind(AS.assert_p, reduce_all(eq(xh, ph)), shape_of(x), ph, summarize=len(xs),
             template=("data.shape must start with partitions.shape, got data.shape = ", None,
                       ", partitions.shape = ", None))
    if STATE.trace is None:
        flat = np.asarray(p.numpy()).ravel()
        bad = np.flatnonzero((flat < 0) | (flat >= n))
        if bad.size:
            raise InvalidArgumentError(f"partitions[{bad[0]}] = {flat[bad[0]]} is not in [0, {n})")
    else:
        # traced, the ids are known only when it runs: an id outside [0, n) falls in no partition,
        # and the compiled function returned the other rows without it (a silent loss where the
        # eager call raises); the assert raises TF's message at run time instead
        _partition_ids_checked(p, n)
    if not ps:   # (scalar partitions: the whole of data is one slice, TF's outputs have shape [0 or 1] + data's)
        from .array_ops import expand_dims
        x, p = expand_dims(x, 0), expand_dims(p, 0)
    return [boolean_mask(x, equal(p, i)) for i in range(n)]


def _partition_ids_checked(p, n):
    from .array_ops import assert_no_bad_entry, reshape
    from .math_ops import logical_or, less
    flat = reshape(p, [-1])
    assert_no_bad_entry(flat, logical_or(less(flat, 0), greater_equal(flat, n)),
                        ("partitions[", None, "] = ", None, f" is not in [0, {n})"))


def dynamic_stitch(indices, data, name=None):
    """tf.dynamic_stitch: ``merged[indices[m][i]] = data[m][i]``, later writes winning, unwritten
    rows zero, the length max(index) + 1. TF's gradient: each ``data[m]`` gets ``gather(grad,
    indices[m])``, overwritten entries included (a custom gradient, as TF's op defines it). Traced,
    the length is a value: the rows are scattered into zeros of a size known when it runs."""
    from ..core.state import STATE
    from ..autodiff import custom_gradient
    from .array_ops import gather
    idx = [convert_to_tensor(i) for i in indices]
    vals = [convert_to_tensor(d) for d in data]
    if STATE.trace is not None:
        return _traced_stitch(idx, vals)
    for m, (i, d) in enumerate(zip(idx, vals)):
        if tuple(d.shape)[:len(i.shape)] != tuple(i.shape):
            # TF 2.21's text
            raise InvalidArgumentError(f"data[{m}].shape = {list(d.shape)} does not start with indices[{m}].shape = "
                                       f"{list(i.shape)}")
    flat_idx = np.concatenate([np.asarray(i.numpy()).ravel() for i in idx]).astype(np.int64)
    neg = np.flatnonzero(flat_idx < 0)
    if neg.size:
        raise InvalidArgumentError(f"indices[{neg[0]}] is out of range")
    rows = [tuple(d.shape)[len(i.shape):] for i, d in zip(idx, vals)]
    size = int(flat_idx.max()) + 1 if flat_idx.size else 0
    last = np.full(size, -1, np.int64)
    last[flat_idx] = np.arange(flat_idx.size)   # NumPy's fancy assignment: the last write wins
    row_shape = rows[0] if rows else ()

    @custom_gradient
    def stitch(*vs):
        flat = np.concatenate([np.asarray(v.numpy()).reshape((-1,) + row_shape) for v in vs]) if vs else \
            np.zeros((0,) + row_shape)
        out = np.zeros((size,) + row_shape, flat.dtype)
        out[last >= 0] = flat[last[last >= 0]]

        def grad(dy):
            return [gather(dy, i) for i in idx]
        return Tensor(out), grad
    return stitch(*vals)


def _traced_stitch(idx, vals):
    """dynamic_stitch inside a trace: the flattened rows written by tensor_scatter_nd_update (the last write
    wins, as eagerly) into zeros of length max(indices) + 1, a size known when the function runs; TF's
    gradient (each data[m] gathers the cotangent at indices[m]) and its negative-index error."""
    from ..autodiff import custom_gradient
    from ..core.aval import shapes_compatible
    from ..core.primitives import assert_op as AS
    from ..core.tensor import constant
    from .array_ops import concat, gather, reshape, tensor_scatter_nd_update, zeros
    from .math_ops import cast, greater_equal, reduce_all, reduce_max
    rows = []
    for m, (i, d) in enumerate(zip(idx, vals)):
        ishape, dshape = tuple(aval_of(i).shape), tuple(aval_of(d).shape)
        if not shapes_compatible(dshape[:len(ishape)], ishape):
            raise InvalidArgumentError(f"data[{m}].shape = {list(dshape)} does not start with indices[{m}].shape = "
                                       f"{list(ishape)}")
        rows.append(dshape[len(ishape):])
    row_shape = rows[0] if rows else ()
    if None in row_shape or any(r != row_shape for r in rows):
        raise InvalidArgumentError(f"dynamic_stitch: the data's rows must have one known shape, got {rows}")
    flat_idx = concat([cast(reshape(i, [-1]), np.int64) for i in idx] + [constant(np.zeros(0, np.int64))], 0)
    bind(AS.assert_p, reduce_all(greater_equal(flat_idx, np.int64(0))),
         template=("dynamic_stitch: an index is negative (out of range)",), summarize=3)
    n = add(maximum(reduce_max(concat([flat_idx, constant(np.array([-1], np.int64))], 0)), np.int64(-1)),
            np.int64(1))
    dt = aval_of(vals[0]).dtype if vals else np.dtype(np.float32)

    @custom_gradient
    def stitch(*vs):
        flat = concat([reshape(v, (-1,) + row_shape) for v in vs], 0) if vs else constant(np.zeros((0,) + row_shape, dt))
        out = tensor_scatter_nd_update(zeros([n, *row_shape], dt), reshape(flat_idx, [-1, 1]), flat)

        def grad(dy):
            return [gather(dy, i) for i in idx]
        return out, grad
    return stitch(*vals)


def _block_args(block_shape, pairs, what):
    b = [int(v) for v in np.asarray(convert_to_tensor(block_shape).numpy()).ravel()]
    p = np.asarray(convert_to_tensor(pairs).numpy()).astype(np.int64).reshape(-1, 2) if pairs is not None else \
        np.zeros((len(b), 2), np.int64)
    if p.shape[0] != len(b):
        raise InvalidArgumentError(f"{what} should have shape [{len(b)}, 2] (one pair per block dimension), got "
                                   f"{list(p.shape)}")
    return b, p


def _known_beyond_batch(op, shape):
    if None in shape[1:]:
        from .array_ops import _RUNTIME_SIZE
        raise ValueError(f"{op}: the dimensions after the batch of the input of shape {tuple(shape)} must be known; "
                         f"one is {_RUNTIME_SIZE}")


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """tf.space_to_batch_nd (tf.space_to_batch, tf.nn.space_to_batch in TF 2): pad the M spatial
    dimensions after the batch, cut them into ``block_shape`` blocks and move the block offsets into
    the batch (TF's pad, reshape, transpose, reshape: differentiable and traceable as those are)."""
    from .array_ops import pad, reshape, transpose
    x = convert_to_tensor(input)
    b, p = _block_args(block_shape, paddings, "paddings")
    m = len(b)
    shape = list(x.shape)
    _known_beyond_batch("space_to_batch", shape)
    full = [[0, 0]] + p.tolist() + [[0, 0]] * (len(shape) - 1 - m)
    padded = [shape[1 + i] + int(p[i, 0]) + int(p[i, 1]) for i in range(m)]
    for i in range(m):
        if padded[i] % b[i]:
            # TF 2.21's text
            raise InvalidArgumentError(f"padded_shape[{i}]={padded[i]} is not divisible by block_shape[{i}]={b[i]}")
    y = pad(x, full) if p.any() else x
    rest = shape[1 + m:]
    lead = -1 if shape[0] is None else shape[0]   # (an input_signature's None batch: -1 in the reshapes)
    y = reshape(y, [lead] + [v for i in range(m) for v in (padded[i] // b[i], b[i])] + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, 1 + 2 * m +
                                                                                          len(rest)))
    y = transpose(y, perm)
    return reshape(y, [lead if lead == -1 else shape[0] * int(np.prod(b))] + [padded[i] // b[i] for i in range(m)]
                   + rest)


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """tf.batch_to_space (TF 2's batch_to_space_nd): the inverse of space_to_batch_nd, then ``crops``."""
    from .array_ops import reshape, transpose
    x = convert_to_tensor(input)
    b, c = _block_args(block_shape, crops, "crops")
    m = len(b)
    shape = list(x.shape)
    nb = int(np.prod(b))
    _known_beyond_batch("batch_to_space", shape)
    if shape[0] is not None and shape[0] % nb:
        # TF 2.21's text
        raise InvalidArgumentError(f"Input batch dimension ({shape[0]}) is not divisible by product of block sizes "
                                   f"({nb})")
    batch = -1 if shape[0] is None else shape[0] // nb   # (a None batch: -1 in the reshapes, checked when it runs)
    spatial, rest = shape[1:1 + m], shape[1 + m:]
    y = reshape(x, b + [batch] + spatial + rest)
    perm = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = transpose(y, perm)
    full = [spatial[i] * b[i] for i in range(m)]
    y = reshape(y, [batch] + full + rest)
    if c.any():
        y = y[(slice(None),) + tuple(slice(int(c[i, 0]), full[i] - int(c[i, 1])) for i in range(m))]
    return y


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """tf.required_space_to_batch_paddings: (paddings, crops) making ``input_shape`` plus
    ``base_paddings`` divisible by ``block_shape`` (the extra padding at the end, cropped back)."""
    shp = np.asarray(convert_to_tensor(input_shape).numpy()).astype(np.int32).ravel()
    blk = np.asarray(convert_to_tensor(block_shape).numpy()).astype(np.int32).ravel()
    base = np.zeros((len(blk), 2), np.int32) if base_paddings is None else \
        np.asarray(convert_to_tensor(base_paddings).numpy()).astype(np.int32).reshape(-1, 2)
    full = shp + base[:, 0] + base[:, 1]
    extra = (blk - full % blk) % blk
    paddings = np.stack([base[:, 0], base[:, 1] + extra], 1)
    crops = np.stack([np.zeros_like(extra), extra], 1)
    return Tensor(paddings), Tensor(crops)


def _fingerprint_rows(a):
    import struct
    from ..util.farmhash import fingerprint64
    n = a.shape[0]
    out = np.zeros((n, 8), np.uint8)
    if a.dtype == object:
        # TF: a row of one string is that string's fingerprint; a longer row, the fingerprint of its strings'
        # fingerprints (8 little-endian bytes each)
        rows = a.reshape(n, int(np.prod(a.shape[1:])))
        for i in range(n):
            b = [s if isinstance(s, bytes) else str(s).encode() for s in rows[i]]
            v = fingerprint64(b[0]) if len(b) == 1 else fingerprint64(b"".join(struct.pack("<Q", fingerprint64(s))
                                                                             for s in b))
            out[i] = np.frombuffer(struct.pack("<Q", v), np.uint8)
    else:
        rows = np.ascontiguousarray(a).reshape(n, int(np.prod(a.shape[1:])))
        for i in range(n):
            out[i] = np.frombuffer(struct.pack("<Q", fingerprint64(rows[i].tobytes())), np.uint8)
    return out


def fingerprint(data, method="farmhash64", name=None):
    """tf.fingerprint: FarmHash Fingerprint64 of each row (the first dimension) of ``data``, as 8
    little-endian bytes: (rows, 8) uint8, TF 2.21's bytes (numbers: the row's bytes; strings: see
    ``_fingerprint_rows``). Traced: one py_call."""
    if method != "farmhash64":
        raise InvalidArgumentError(f"Unsupported fingerprint method: {method}")   # TF 2.21's text
    x = convert_to_tensor(data)
    if x.shape.rank == 0:
        raise InvalidArgumentError(f"`data` should have at least one dimension: {list(x.shape)}")
    from ..core.state import STATE
    if STATE.trace is not None:
        from ..compiler.function import TensorSpec
        from .script_ops import numpy_function
        return numpy_function(lambda a: _fingerprint_rows(np.asarray(a)), [x], TensorSpec([tuple(x.shape)[0], 8],
                                                                                          "uint8"))
    return Tensor(_fingerprint_rows(np.asarray(x.numpy())))


# -- tf.math.special: Cephes' functions, one primitive (core/primitives/cephes.py says why and how accurate) --

def _cephes_unary(fn, doc):
    from ..core.primitives import cephes as _C

    def op(x, name=None):
        return bind(_C.special_unary_p, x, fn=fn)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"tf.math.special.{fn}: {doc} (float16/32/64; TF's Cephes algorithm, computed in float64)."
    return op


bessel_i0 = _cephes_unary("bessel_i0", "the modified Bessel function of the first kind of order 0, I0(x)")
bessel_i0e = _cephes_unary("bessel_i0e", "I0(x) exp(-|x|), without I0's overflow")
bessel_i1 = _cephes_unary("bessel_i1", "the modified Bessel function of the first kind of order 1, I1(x)")
bessel_i1e = _cephes_unary("bessel_i1e", "I1(x) exp(-|x|)")
bessel_k0 = _cephes_unary("bessel_k0", "the modified Bessel function of the second kind of order 0, K0(x); "
                                       "inf for x <= 0")
bessel_k0e = _cephes_unary("bessel_k0e", "K0(x) exp(x)")
bessel_k1 = _cephes_unary("bessel_k1", "the modified Bessel function of the second kind of order 1, K1(x); "
                                       "inf for x <= 0")
bessel_k1e = _cephes_unary("bessel_k1e", "K1(x) exp(x)")
bessel_j0 = _cephes_unary("bessel_j0", "the Bessel function of the first kind of order 0, J0(x)")
bessel_j1 = _cephes_unary("bessel_j1", "the Bessel function of the first kind of order 1, J1(x)")
bessel_y0 = _cephes_unary("bessel_y0", "the Bessel function of the second kind of order 0, Y0(x); -inf for x <= 0")
bessel_y1 = _cephes_unary("bessel_y1", "the Bessel function of the second kind of order 1, Y1(x); -inf for x <= 0")
dawsn = _cephes_unary("dawsn", "Dawson's integral, exp(-x^2) times the integral of exp(t^2) from 0 to x")
expint = _cephes_unary("expint", "the exponential integral Ei(x); nan for x < 0, -inf at 0")
fresnel_cos = _cephes_unary("fresnel_cos", "Fresnel's cosine integral, the integral of cos(pi t^2 / 2) from 0 to x")
fresnel_sin = _cephes_unary("fresnel_sin", "Fresnel's sine integral, the integral of sin(pi t^2 / 2) from 0 to x")
spence = _cephes_unary("spence", "Spence's integral (the dilogarithm Li2(1 - x)); nan for x < 0")


def betainc(a, b, x, name=None):
    """tf.math.betainc: the regularized incomplete beta function I_x(a, b) (Cephes' incbet, float32/float64);
    nan for a <= 0, b <= 0 or x outside [0, 1]. As TF: the three have one shape, or are scalars (broadcast
    to it); differentiable in x only (a and b get None)."""
    from ..core.primitives import cephes as _C
    ops = match_lists("betainc", a, b, x)          # (Python numbers stay weak: they take the tensors' dtype)
    ops = [convert_to_tensor(v) if isinstance(v, (list, tuple)) else v for v in ops]
    shapes = [tuple(aval_of(v).shape) for v in ops]
    full = next((s for s in shapes if s != ()), ())
    for nm, s in zip("abx", shapes):
        if s != () and not TensorShape(s).is_compatible_with(full):
            # TF 2.21's text: "Shapes of a and b are inconsistent: [2] vs. [3]"
            first = "a" if shapes[0] != () else "b"
            raise InvalidArgumentError(f"Shapes of {first} and {nm} are inconsistent: {list(full)} vs. {list(s)} "
                                       "(betainc broadcasts scalars only: give a, b and x one shape)")
    return bind(_C.betainc_p, *ops)


def zeta(x, q, name=None):
    """tf.math.zeta: Hurwitz's zeta function, sum over k >= 0 of (k + q)^-x (float32/float64, broadcasting);
    inf at x = 1, nan for x < 1. Differentiable in q only (x gets None), as TF."""
    from ..core.primitives import cephes as _C
    return bind(_C.zeta_p, *match_lists("zeta", x, q))


_SOBOL_V = []      # the (MAX_DIM, 32) uint64 direction vectors, made at the first call


def _sobol_directions():
    if not _SOBOL_V:
        from ..util._sobol_table import TABLE, MAX_DIM
        v = np.zeros((MAX_DIM, 32), np.uint64)
        v[0] = [1 << (31 - k) for k in range(32)]           # van der Corput's: every m = 1
        rows = [list(map(int, ln.split())) for ln in TABLE.strip().splitlines()]
        for d, row in enumerate(rows, 1):
            poly, m = row[0], row[1:]
            s = poly.bit_length() - 1
            a = (poly >> 1) & ((1 << (s - 1)) - 1)           # the polynomial's inner coefficients
            vd = [m[k] << (31 - k) for k in range(min(s, 32))]
            for k in range(s, 32):
                x = vd[k - s] ^ (vd[k - s] >> s)
                for j in range(1, s):
                    if (a >> (s - 1 - j)) & 1:
                        x ^= vd[k - j]
                vd.append(x)
            v[d] = vd
        _SOBOL_V.append(v)
    return _SOBOL_V[0]


def sobol_sample(dim, num_results, skip=0, dtype=None, name=None):
    """tf.math.sobol_sample: points skip+1 .. skip+num_results of the Sobol sequence in ``dim`` dimensions
    ((num_results, dim), float32 or float64), TF's values bit for bit (Joe and Kuo's direction numbers in
    Gray-code order; TF leaves out the first point, 0). Deterministic, so a constant when traced. tapeflow
    carries the first 1111 of TF's 21200 dimensions (util/_sobol_table.py)."""
    from ..core import dtypes as _dtypes
    from ..util._sobol_table import MAX_DIM
    dt = _dtypes.as_dtype(dtype if dtype is not None else "float32")
    if dt.name not in ("float32", "float64"):
        raise InvalidArgumentTypeError(f"Value for attr 'dtype' of {dt.name} is not in the list of allowed values: "
                                       "float, double (sobol_sample)")

    def known(v, what):
        try:
            return int(np.asarray(v.numpy() if isinstance(v, Tensor) else v))
        except Exception:
            raise InvalidArgumentError(f"sobol_sample: {what} must be known when the op runs (a Python int or an "
                                       f"eager tensor), got {type(v).__name__}") from None
    dim, n, skip = known(dim, "dim"), known(num_results, "num_results"), known(skip, "skip")
    if dim < 1:
        raise InvalidArgumentError("dim must be at least one")             # TF 2.21's texts
    if dim > 21200:
        raise InvalidArgumentError("dim must be at most 21200")
    if dim > MAX_DIM:
        raise InvalidArgumentError(f"sobol_sample: dim {dim}: tapeflow carries the direction numbers of the first "
                                   f"{MAX_DIM} dimensions of TF's 21200 (see docs/differences.md)")
    if n < 1:
        raise InvalidArgumentError("num_results must be at least one")
    if skip < 0:
        raise InvalidArgumentError("skip must be non-negative")
    v = _sobol_directions()[:dim]
    idx = np.arange(skip + 1, skip + n + 1, dtype=np.uint64)
    gray = idx ^ (idx >> np.uint64(1))
    pts = np.zeros((n, dim), np.uint64)
    for k in range(32):
        bit = ((gray >> np.uint64(k)) & np.uint64(1)).astype(bool)
        if bit.any():
            pts[bit] ^= v[:, k]
    return Tensor((pts.astype(np.float64) * 2.0 ** -32).astype(dt.np))
