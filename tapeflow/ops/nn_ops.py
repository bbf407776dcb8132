"""Activations, softmax and losses' math, all composed from primitives.
Each stable form is chosen so that neither the value nor the gradient
overflows; comments say where."""
from __future__ import annotations

import collections

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape
from ..core.primitive import aval_of, bind
from ..core.primitives import conv as P
from ..core.tensor import Tensor, TensorShape, convert_to_tensor
from .._distribute_context import current as _dist_current
from ..errors import FailedPreconditionError, InvalidArgumentError, InvalidArgumentTypeError, UnimplementedError
from . import array_ops as A
from . import math_ops as M


def relu(features, name=None):
    # maximum's gradient sends ties to the second argument, so relu'(0) = 0 (as TF).
    return M.maximum(features, 0)


def relu6(features, name=None):
    return M.minimum(M.maximum(features, 0), 6)


def leaky_relu(features, alpha=0.2, name=None):
    features = features if isinstance(features, Tensor) else convert_to_tensor(features)
    if aval_of(features).dtype.kind in "iu":   # (TF casts integer features to float32 first)
        features = M.cast(features, np.float32)
    return M.where(M.greater(features, 0), features, M.multiply(features, alpha))


def elu(features, alpha=1.0, name=None):
    # expm1 of min(x, 0): the unselected branch must stay finite, or its inf
    # gradient would poison the selected one (0 * inf = NaN). min(x, 0) is a
    # where, not minimum, whose tie at 0 would send the gradient to the constant:
    # elu'(0) is alpha (TF: y + 1 for y <= 0), not 0.
    pos = M.greater(features, 0)
    if M._has_bf16(features):
        # TF 2.21's bfloat16 elu is exp(x) - 1, each rounded to bfloat16: it gives all 65,280 finite
        # bfloat16 inputs' results but the subnormals' (TF flushes them); expm1 rounded once, 49,330
        neg = M.multiply(M.subtract(M.exp(M.where(pos, 0.0, features)), 1.0), alpha)
        return M.where(pos, features, neg)
    neg = M.multiply(M.expm1(M.where(pos, 0.0, features)), alpha)
    return M.where(pos, features, neg)


_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def selu(features, name=None):
    return M.multiply(elu(features, _SELU_ALPHA), _SELU_SCALE)


def gelu(features, approximate=False, name=None):
    x = features if hasattr(features, "aval") else convert_to_tensor(features)
    dt = aval_of(x).dtype
    if not _dt.is_float(dt):
        # TF 2.21 refuses non-float features (ValueError); NumPy promotion here turned int32 into
        # a float64 result (sweep18)
        raise ValueError(f"gelu: `features.dtype` must be a floating point tensor. Received: features.dtype="
                         f"{dt.name} (cast it first, e.g. tf.cast(x, tf.float32))")
    if approximate:
        c = float(np.sqrt(2.0 / np.pi))
        return 0.5 * x * (1.0 + M.tanh(c * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + M.erf(x * float(1.0 / np.sqrt(2.0))))


def swish(features, beta=1.0, name=None):
    return M.multiply(features, M.sigmoid(M.multiply(features, beta) if beta != 1.0 else features))


silu = swish


def softsign(features, name=None):
    features = features if isinstance(features, Tensor) else convert_to_tensor(features)
    if _dt.kind(aval_of(features).dtype) != "f":   # (TF's Softsign takes floats; ints became float64 here)
        raise InvalidArgumentTypeError(f"softsign: expects a float tensor, got {aval_of(features).dtype.name}; "
                                       "cast first: tapeflow.cast(x, tapeflow.float32)")
    # x / (1 + |x|) differentiates to (1 + |x| - x sign x) / (1 + |x|)^2, which is inf/inf = NaN at +-inf; TF's
    # SoftsignGrad, g / (1 + |x|)^2, gives 0 there. The infinities take the branch sign(x) (slope 0) and the
    # quotient sees a finite stand-in, so no NaN reaches the tape (the where-gradient trap).
    inf = M.equal(M.abs(features), np.inf)
    safe = M.where(inf, A.zeros_like(features), features)
    return M.where(inf, M.sign(features), M.divide(safe, M.add(M.abs(safe), 1)))


sigmoid = M.sigmoid
tanh = M.tanh
softplus = M.softplus


def _check_axis(op, x, axis):
    s = aval_of(x).shape
    if not -len(s) <= axis < max(len(s), 1):
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for logits of shape {fmt_shape(s)} "
                                   f"(valid: {-len(s)} to {len(s) - 1})")


def _same_shape(a, b):
    """Shapes equal where both are known (traced dims may be None)."""
    return TensorShape(a).is_compatible_with(b)


def softmax(logits, axis=-1, name=None):
    _check_axis("softmax", logits, axis)
    if M._has_bf16(logits):   # (TF 2.21: in float32, rounded once; in bfloat16 14 of 24 entries differed)
        return M.in_float32(lambda x: softmax(x, axis), logits)
    # Shift by the (gradient-stopped) max: exp never overflows, and the shift
    # cancels exactly in value and gradient.
    m = M.stop_gradient(M.reduce_max(logits, axis, keepdims=True))
    e = M.exp(M.subtract(logits, m))
    return M.divide(e, M.reduce_sum(e, axis, keepdims=True))


def log_softmax(logits, axis=-1, name=None):
    _check_axis("log_softmax", logits, axis)
    # (x - m) - log(sum(exp(x - m))), not x - logsumexp(x): for large logits the
    # latter subtracts two nearly equal large numbers and loses the precision of
    # the small result (float32: log(2) came out as 0.69318 at logits of 1000).
    m = M.stop_gradient(M.reduce_max(logits, axis, keepdims=True))
    m = M.where(M.is_finite(m), m, M.zeros_like_(m))
    shifted = M.subtract(logits, m)
    return M.subtract(shifted, M.log(M.reduce_sum(M.exp(shifted), axis, keepdims=True)))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    # max(x, 0) - x z + log(1 + e^-|x|): TF's stable form, finite for any logit.
    x, z = logits, labels
    ls, zs = aval_of(labels).shape, aval_of(logits).shape
    if not _same_shape(ls, zs):  # (batch, 1) labels against (batch,) logits would broadcast to (batch, batch)
        raise InvalidArgumentError(f"sigmoid_cross_entropy_with_logits: labels {fmt_shape(ls)} and logits "
                                   f"{fmt_shape(zs)} must have the same shape")
    return M.add(M.subtract(M.maximum(x, 0), M.multiply(x, z)), M.log1p(M.exp(M.neg_abs_(x))))


def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1, name=None):
    ls, zs = aval_of(labels).shape, aval_of(logits).shape
    if not _same_shape(ls, zs):
        raise InvalidArgumentError(f"softmax_cross_entropy_with_logits: labels {fmt_shape(ls)} and logits "
                                   f"{fmt_shape(zs)} must have the same shape (one-hot or probability labels; "
                                   "class ids go to sparse_softmax_cross_entropy_with_logits)")
    return M.negative(M.reduce_sum(M.multiply(labels, log_softmax(logits, axis)), axis))


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    lab = convert_to_tensor(labels) if not hasattr(labels, "aval") else labels
    op = "sparse_softmax_cross_entropy_with_logits"
    la, za = aval_of(lab), aval_of(logits)
    if la.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{op}: labels must be integer class ids, got {la.dtype.name}; "
                                       "one-hot labels go to softmax_cross_entropy_with_logits")
    if not _same_shape(la.shape, za.shape[:-1]):
        raise InvalidArgumentError(f"{op}: labels {fmt_shape(la.shape)} must have the shape of logits "
                                   f"{fmt_shape(za.shape)} without its last (class) axis")
    lsm = log_softmax(logits, -1)
    # a label outside [0, classes) raises (as TF), naming this op, in every mode
    picked = A.take_along_axis(lsm, A.expand_dims(lab, -1), -1, _op=op)
    return M.negative(A.squeeze(picked, -1))


def l2_loss(t, name=None):
    return M.multiply(M.reduce_sum(M.square(t)), 0.5)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    sq = M.reduce_sum(M.square(x), axis, keepdims=True)
    return M.multiply(x, M.rsqrt(M.maximum(sq, epsilon)))


def bias_add(value, bias, data_format=None, name=None):
    """TF's tf.nn.bias_add: a 1-D bias along the channel axis, the last one for None and 'N...C'
    formats, axis 1 for 'NC...' ones (NCHW). TF's checks: a plain add broadcast a (1, C) bias,
    added to a 1-D value, and added NCHW's bias along the last axis (silently wrong when W == C)."""
    if data_format is not None and not (isinstance(data_format, str) and data_format.startswith("N")
                                        and (data_format.endswith("C") or data_format.startswith("NC"))):
        raise ValueError(f"bias_add: data_format must be of the form 'N...C' or 'NC...', got {data_format!r}")
    value = _tensor(value)
    bias = _tensor(bias)
    vs, bs = aval_of(value).shape, aval_of(bias).shape
    if len(bs) != 1:
        raise InvalidArgumentError(f"bias_add: the bias must be 1-D, got shape {fmt_shape(bs)}")
    if len(vs) < 2:
        raise InvalidArgumentError(f"bias_add: the value must be at least 2-D (batch, ..., channels), got shape "
                                   f"{fmt_shape(vs)}")
    first = data_format is not None and data_format.startswith("NC") and not data_format.endswith("C")
    ax = 1 if first else len(vs) - 1
    if vs[ax] is not None and bs[0] is not None and vs[ax] != bs[0]:
        raise InvalidArgumentError(f"bias_add: the bias has {bs[0]} entries, the value {fmt_shape(vs)} has {vs[ax]} "
                                   f"channels (axis {ax}, data_format={data_format!r}); they must match")
    if first and len(vs) > 2:
        bias = A.reshape(bias, (-1,) + (1,) * (len(vs) - 2))
    return M.add(value, bias)


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """tf.nn.sufficient_statistics: (count, sum(x - shift), sum((x - shift)^2), shift) over ``axes``;
    the count in x's dtype, the shift returned as given (None: no shift), as TF 2.21."""
    from .math_ops import reduce_sum, square, subtract, cast
    x = convert_to_tensor(x)
    axes = [a % max(x.shape.rank, 1) for a in ([axes] if isinstance(axes, int) else list(axes))]
    count = cast(np.prod([tuple(x.shape)[a] for a in axes]) if axes else 1, x.dtype)
    d = x if shift is None else subtract(x, cast(shift, x.dtype))
    return (count, reduce_sum(d, axis=axes, keepdims=keepdims), reduce_sum(square(d), axis=axes, keepdims=keepdims),
            None if shift is None else convert_to_tensor(shift, x.dtype))


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None, variance_epsilon=None,
                                         scale_after_normalization=None, name=None, input=None,  # noqa: A002
                                         mean=None, variance=None):
    """tf.nn.batch_norm_with_global_normalization: batch_normalization with gamma applied only when
    ``scale_after_normalization`` (TF 2.21's composition; ``input``/``mean``/``variance`` are the
    new names of ``t``/``m``/``v``)."""
    x = input if input is not None else t
    return batch_normalization(x, mean if mean is not None else m, variance if variance is not None else v, beta,
                               gamma if scale_after_normalization else None, variance_epsilon)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """TF's tf.nn.batch_normalization: (x - mean) * scale / sqrt(variance + eps) + offset, in
    TF's order (x * inv + (offset - mean * inv)), offset and scale optional."""
    inv = M.rsqrt(M.add(variance, variance_epsilon))
    if scale is not None:
        inv = M.multiply(inv, scale)
    shift = M.negative(M.multiply(mean, inv)) if offset is None else M.subtract(offset, M.multiply(mean, inv))
    return M.add(M.multiply(x, M.cast(inv, aval_of(_tensor(x)).dtype)), M.cast(shift, aval_of(_tensor(x)).dtype))


def embedding_lookup(params, ids, max_norm=None, name=None):
    """TF's tf.nn.embedding_lookup of one params tensor: the rows of ``params`` at ``ids``
    (out-of-range ids raise, as tf.gather), each clipped to L2 norm ``max_norm`` if given."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup: params sharded over several tensors is not supported; "
                                      "concatenate them (tf.concat(params, 0)) and look up in one")
        params = params[0]
    params = _tensor(params)
    ids = _tensor(ids)
    if aval_of(ids).dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"embedding_lookup: ids must be integers, got {aval_of(ids).dtype.name}")
    r = A.gather(params, ids)
    if max_norm is not None:
        from ..linalg import clip_by_norm
        pr, ir = len(aval_of(params).shape), len(aval_of(ids).shape)
        r = clip_by_norm(r, max_norm, axes=list(range(ir, ir + pr - 1)))
    return r


def _in_top_k(targets, predictions, k):
    """TF's in_top_k: the target's score has fewer than k scores above it (ties at the
    boundary count as in); False for a target outside [0, classes) or a row with any
    non-finite score (TF's kernel "cannot say" there). (Keras' top-k metrics use it too.)"""
    n = predictions.shape[-1]
    targets = M.cast(targets, "int32")
    valid = M.logical_and(M.greater_equal(targets, 0), M.less(targets, n))
    hit = M.equal(A.one_hot(M.where(valid, targets, A.zeros_like(targets)), n), 1.0)
    score = M.reduce_sum(M.where(hit, predictions, A.zeros_like(predictions)), -1)
    above = M.reduce_sum(M.cast(M.greater(predictions, A.expand_dims(score, -1)), "int32"), -1)
    finite = M.reduce_all(M.is_finite(predictions), -1)
    return M.logical_and(M.logical_and(valid, finite), M.less(above, k))


def in_top_k(targets, predictions, k, name=None):
    """TF2's tf.math.in_top_k / tf.nn.in_top_k(targets, predictions, k): (batch,) bools."""
    targets, predictions = _tensor(targets), _tensor(predictions)
    ts, ps = aval_of(targets).shape, aval_of(predictions).shape
    if aval_of(targets).dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"in_top_k: targets must be int32 or int64 class ids, got "
                                       f"{aval_of(targets).dtype.name}")
    if aval_of(predictions).dtype.kind != "f":
        raise InvalidArgumentTypeError(f"in_top_k: predictions must be float32, got {aval_of(predictions).dtype.name}")
    if len(ps) != 2 or len(ts) != 1 or (ts[0] is not None and ps[0] is not None and ts[0] != ps[0]):
        raise InvalidArgumentError(f"in_top_k: predictions must be (batch, classes) and targets (batch,), got "
                                   f"{fmt_shape(ps)} and {fmt_shape(ts)}")
    return _in_top_k(targets, predictions, k)


def moments(x, axes, shift=None, keepdims=False, name=None):
    mean = M.reduce_mean(x, axes, keepdims=True)
    # TF's form, mean((x - stop_gradient(mean))^2), has TF's values and first derivatives but
    # the wrong second ones: mean((x - c)^2) = var + (mean - c)^2 for a constant c, and the
    # (mean - c)^2 term, 0 in value and slope, still curves. Subtracting it (exactly 0.0 here,
    # so the same bits and first gradients as TF) gives var's true Hessian: LayerNormalization
    # etc. under a gradient penalty or a Hessian-vector product differentiate correctly.
    centered = M.stop_gradient(mean)
    var = M.subtract(M.reduce_mean(M.squared_difference(x, centered), axes, keepdims=True),
                     M.square(M.subtract(mean, centered)))
    if not keepdims:
        mean = A.squeeze(mean, axes)
        var = A.squeeze(var, axes)
    return mean, var


def dropout(x, rate, noise_shape=None, seed=None, rng=None, name=None):
    """Zero each entry with probability ``rate`` and scale the rest by 1/(1-rate)."""
    from . import random_ops
    x = x if hasattr(x, "aval") else convert_to_tensor(x)
    if not _dt.is_float(aval_of(x).dtype):   # (TF 2.21's check, also at rate 0, which returned an int x as it was)
        raise ValueError(f"dropout: `x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                         f"x_dtype={aval_of(x).dtype.name} (cast it first, e.g. tf.cast(x, tf.float32))")
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = noise_shape or aval_of(x).shape
    if isinstance(shape, (list, tuple)) and any(d is None for d in shape):
        # TF's _get_noise_shape: a None taken from x's static shape; where the trace leaves that None too (an
        # input_signature's batch) TF 2.21 cannot convert the partial shape (ValueError), so tf.nn.dropout
        # refuses it; the Keras layers (rng given) take the value when the function runs, as Keras 3
        shape = [s if d is None else d for d, s in zip(shape, aval_of(x).shape)]
        if rng is None and noise_shape is not None and None in shape:
            from .array_ops import _RUNTIME_SIZE
            raise ValueError(f"dropout: noise_shape {list(noise_shape)} has a None where x's dimension is "
                             f"{_RUNTIME_SIZE}; TF 2.21 cannot convert that partially known shape either: give "
                             f"that entry as tf.shape(x)[i]")
        shape = random_ops._shape_like(x, shape)
    u = random_ops.uniform(shape, dtype=aval_of(x).dtype, seed=seed) if rng is None else rng.uniform(shape, dtype=aval_of(x).dtype)
    keep = M.greater_equal(u, rate)
    return M.where(keep, M.multiply(x, 1.0 / (1.0 - rate)), M.zeros_like_(x))


# -- convolution and pooling (NHWC; primitives in tapeflow.core.primitives.conv) ----------------------

def _pair(name, what, v, rank=2):
    """TF's int / list of 1, rank or rank+2 ints (the 4-list has 1 at batch and channels)."""
    v = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(s) for s in v)
    if any(s < 1 for s in v):
        raise ValueError(f"{name}: {what} must be positive, got {list(v)}")
    if len(v) == 1:
        return v * rank
    if len(v) == rank:
        return v
    if len(v) == rank + 2:
        if v[0] != 1 or v[-1] != 1:
            raise ValueError(f"{name}: {what} {list(v)} moves along the batch or channel dimension; only "
                             f"the spatial ones may differ from 1, e.g. [1, 2, 2, 1]")
        return v[1:-1]
    raise ValueError(f"{name}: {what} must be an int or a list of 1, {rank} or {rank + 2} ints, got {list(v)}")


def _check_format(name, data_format, allowed=("NHWC", "NWC", "channels_last", None)):
    if data_format not in allowed:
        raise NotImplementedError(
            f"{name}: data_format={data_format!r} is not supported; tapeflow's convolutions and pools are "
            f"channels-last only (NHWC). Transpose the input: tf.transpose(x, [0, 2, 3, 1])")


def _padding(name, padding, in_hw, k_hw, strides, dilations):
    """'SAME' / 'VALID' / explicit [[0, 0], [t, b], [l, r], [0, 0]] -> ((t, b), (l, r))."""
    if isinstance(padding, str):
        if padding == "VALID":
            return ((0, 0),) * len(in_hw)
        if padding == "SAME":
            if any(n is None and s != 1 for n, s in zip(in_hw, strides)):
                raise ValueError(f"{name}: padding='SAME' with a stride > 1 needs known height and width (the "
                                 f"padding depends on them), got {in_hw}")
            # (stride 1: SAME pads (k - 1) * dilation whatever the size: an unknown one takes any, here 2**20)
            return tuple(P.same_padding(n if n is not None else 1 << 20, k, s, d)
                         for n, k, s, d in zip(in_hw, k_hw, strides, dilations))
        raise ValueError(f"{name}: padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}"
                         + (" (TF spells it in capitals)" if padding.upper() in ("SAME", "VALID") else ""))
    pads = [tuple(int(a) for a in p) for p in padding]
    if len(pads) == len(in_hw) + 2:
        if pads[0] != (0, 0) or pads[-1] != (0, 0):
            raise ValueError(f"{name}: explicit padding {padding} pads the batch or channel dimension")
        pads = pads[1:-1]
    if len(pads) != len(in_hw) or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise ValueError(f"{name}: explicit padding must be [[0, 0], [top, bottom], [left, right], [0, 0]] of "
                         f"non-negative ints, got {padding}")
    return tuple(pads)


def _spatial(x):
    return aval_of(x).shape[1:3]  # (height, width) of an NHWC tensor checked by _nhwc


def _tensor(x):
    return x if hasattr(x, "aval") else convert_to_tensor(x)  # tensors and Variables as they are


def _nhwc(name, x):
    x = _tensor(x)
    s = aval_of(x).shape
    if len(s) != 4:
        raise ValueError(f"{name}: input must have rank 4 (batch, height, width, channels), got shape "
                         f"{tuple(s)}")
    return x


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv2d: NHWC input, (kh, kw, in_channels, out_channels) filters;
    grouped when in_channels divides the input's channels (as TF)."""
    _check_format("conv2d", data_format)
    x, w = _nhwc("conv2d", input), _tensor(filters)
    if M._has_bf16(x, w):   # (TF 2.21's bfloat16 convolution: float32 sums, rounded once)
        return M.in_float32(lambda x, w: conv2d(x, w, strides, padding, data_format, dilations), x, w)
    ws = aval_of(w).shape
    if len(ws) != 4:
        raise ValueError(f"conv2d: filters must have rank 4 (kh, kw, in_channels, out_channels), got {tuple(ws)}")
    st, dl = _pair("conv2d", "strides", strides), _pair("conv2d", "dilations", 1 if dilations is None else dilations)
    c = aval_of(x).shape[3]
    if c is not None and (ws[2] == 0 or c % ws[2]):
        raise InvalidArgumentError(f"conv2d: input depth must be evenly divisible by filter depth: the input "
                         f"{tuple(aval_of(x).shape)} has {c} channels, the filter {tuple(ws)} has {ws[2]}")
    groups = 1 if c is None else c // ws[2]
    pad = _padding("conv2d", padding, _spatial(x), ws[:2], st, dl)
    return bind(P.conv2d_p, x, w, strides=st, padding=pad, dilations=dl, groups=groups)


def _transpose_output_shape(name, output_shape, ws, layout, g=None):
    """A transposed convolution's output_shape as a tuple: the batch may be None (it comes from
    the input; unknown while tracing), the rest must be given, and the channels must be the ones
    the filter ``ws`` (spatial..., out_channels, in_channels) makes. A batch the trace computes
    (``tf.shape(x)[0]`` of an input_signature's None batch, the way TF's decoders write it) is
    taken as the input's, which it must equal: checked when the function runs (TF's error)."""
    from ..core.primitives import indexing as I
    if isinstance(output_shape, Tensor):
        output_shape = output_shape.numpy().tolist()
    output_shape = list(output_shape)
    if output_shape and I._traced_bound(output_shape[0]):
        if g is not None:
            from ..core.primitives import assert_op as AS
            batch = M.cast(output_shape[0], np.int64)
            have = M.cast(A.shape(g)[0], np.int64)
            bind(AS.assert_p, M.equal(batch, have), batch, have,
                 template=(f"{name}: output_shape's batch ", None, " is not the input's ", None), summarize=3)
        output_shape[0] = None
    out = tuple(None if d is None else int(d) for d in output_shape)
    if len(out) != len(ws) or None in out[1:]:
        raise ValueError(f"{name}: output_shape must be {layout}, got {out}")
    if out[-1] != ws[-2]:
        raise ValueError(f"{name}: output_shape {out} has {out[-1]} channels but the filter {tuple(ws)} makes "
                         f"{ws[-2]} (its dimension {len(ws) - 1})")
    return out


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    """TF's tf.nn.conv2d_transpose: the gradient of conv2d w.r.t. its input.
    filters: (kh, kw, output_channels, input_channels); output_shape (N, H, W, C)."""
    _check_format("conv2d_transpose", data_format)
    g = _nhwc("conv2d_transpose", input)
    w = _tensor(filters)
    if M._has_bf16(g, w):   # (float32 sums, rounded once, as conv2d)
        return M.in_float32(lambda g, w: conv2d_transpose(g, w, output_shape, strides, padding, data_format,
                                                          dilations), g, w)
    ws = aval_of(w).shape
    if len(ws) != 4:
        raise ValueError(f"conv2d_transpose: filters must have rank 4 (kh, kw, out_channels, in_channels), "
                         f"got {tuple(ws)}")
    out = _transpose_output_shape("conv2d_transpose", output_shape, ws, "(batch, height, width, channels)", g)
    n = aval_of(g).shape[0]
    if out[0] is not None and n is not None and out[0] != n:
        raise ValueError(f"conv2d_transpose: output_shape {out} has batch {out[0]}, the input {aval_of(g).shape} "
                         f"has {n}")
    st = _pair("conv2d_transpose", "strides", strides)
    dl = _pair("conv2d_transpose", "dilations", 1 if dilations is None else dilations)
    pad = _padding("conv2d_transpose", padding, out[1:3], ws[:2], st, dl)
    return bind(P.conv2d_input_grad_p, g, w, input_hw=out[1:3], strides=st, padding=pad, dilations=dl, groups=1)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.depthwise_conv2d: filter (kh, kw, in_channels, channel_multiplier);
    output channel c * multiplier + m."""
    _check_format("depthwise_conv2d", data_format)
    x = _nhwc("depthwise_conv2d", input)
    w = _tensor(filter)
    if M._has_bf16(x, w):   # (float32 sums, rounded once, as conv2d)
        return M.in_float32(lambda x, w: depthwise_conv2d(x, w, strides, padding, data_format, dilations), x, w)
    ws, c = aval_of(w).shape, aval_of(x).shape[3]
    if len(ws) != 4:
        raise ValueError(f"depthwise_conv2d: filter must have rank 4 (kh, kw, in_channels, multiplier), got {ws}")
    if c != ws[2]:
        raise InvalidArgumentError(f"depthwise_conv2d: the input has {c} channels, the filter {tuple(ws)} "
                                   f"expects {ws[2]}")
    st = _pair("depthwise_conv2d", "strides", strides)
    dl = _pair("depthwise_conv2d", "dilations", 1 if dilations is None else dilations)
    pad = _padding("depthwise_conv2d", padding, _spatial(x), ws[:2], st, dl)
    w = A.reshape(w, (ws[0], ws[1], 1, ws[2] * ws[3]))
    return bind(P.conv2d_p, x, w, strides=st, padding=pad, dilations=dl, groups=c)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv1d: (N, W, C) input, (kw, in_channels, out_channels) filters (a conv2d of height 1)."""
    _check_format("conv1d", data_format)
    pad = padding if isinstance(padding, str) else [[0, 0], [0, 0]] + [list(p) for p in padding][-2:-1] + [[0, 0]]
    st = _pair("conv1d", "stride", stride, rank=1)
    dl = _pair("conv1d", "dilations", 1 if dilations is None else dilations, rank=1)
    y = conv2d(A.expand_dims(input, 1), A.expand_dims(filters, 0), (1,) + st, pad, dilations=(1,) + dl)
    return A.squeeze(y, 1)


def _pool_args(name, x, ksize, strides, padding, data_format):
    _check_format(name, data_format)
    x = _nhwc(name, x)
    k = _pair(name, "ksize", ksize)
    st = _pair(name, "strides", strides)
    return x, k, st, _padding(name, padding, _spatial(x), k, st, (1, 1))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    x, k, st, pad = _pool_args("max_pool2d", input, ksize, strides, padding, data_format)
    return bind(P.max_pool_p, x, x, ksize=k, strides=st, padding=pad)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Mean over each window; with 'SAME' padding the padded cells are not counted (as TF)."""
    if not isinstance(padding, str):
        raise TypeError(f"avg_pool2d: padding must be 'SAME' or 'VALID' (TF has no explicit padding for "
                        f"average pooling), got {padding!r}")
    x, k, st, pad = _pool_args("avg_pool2d", input, ksize, strides, padding, data_format)
    if M._has_bf16(x):   # (as TF 2.21: summed and divided in float32, rounded once)
        return M.in_float32(lambda x: avg_pool2d(x, ksize, strides, padding, data_format), x)
    av = aval_of(x)
    if av.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"avg_pool2d: expects a floating tensor, got {av.dtype.name}")
    c = av.shape[3]
    # a depthwise conv with a ones kernel sums each window; divide by how many real cells it covered
    ones = np.ones((k[0], k[1], 1, c), av.dtype)
    s = bind(P.conv2d_p, x, ones, strides=st, padding=pad, dilations=(1, 1), groups=c)
    return M.multiply(s, (1.0 / P.window_counts(av.shape[1:3], k, st, pad, av.dtype)).astype(av.dtype))


def _pool_nd(name, fn2d, input, ksize, strides, padding, data_format):  # noqa: A002
    """tf.nn.max_pool / avg_pool: rank 3 (N, W, C) pools as a height-1 image; rank 4 as 2-D; rank 5 as 3-D."""
    rank = len(aval_of(input).shape) if hasattr(input, "aval") else np.ndim(input)
    if rank == 4:
        return fn2d(input, ksize, strides, padding, data_format="NHWC" if data_format is None else data_format)
    if rank == 5:
        fn3d = max_pool3d if fn2d is max_pool2d else avg_pool3d
        return fn3d(input, ksize, strides, padding, data_format="NDHWC" if data_format is None else data_format)
    if rank == 3:
        _check_format(name, data_format)
        k = (1,) + _pair(name, "ksize", ksize, rank=1)
        st = (1,) + _pair(name, "strides", strides, rank=1)
        if not isinstance(padding, str):
            padding = [[0, 0], [0, 0]] + [list(p) for p in padding][-2:-1] + [[0, 0]]
        return A.squeeze(fn2d(A.expand_dims(input, 1), k, st, padding), 1)
    raise NotImplementedError(f"{name}: inputs of rank {rank} are not supported (rank 3, 4 or 5, channels last)")


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    return _pool_nd("max_pool", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    return _pool_nd("avg_pool", avg_pool2d, input, ksize, strides, padding, data_format)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool_nd("max_pool1d", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool_nd("avg_pool1d", avg_pool2d, input, ksize, strides, padding, data_format)


# -- more of tf.nn, composed ---------------------------------------------------------------------------

def crelu(features, axis=-1, name=None):
    """concat(relu(x), relu(-x)) along ``axis``."""
    x = _tensor(features)
    return A.concat([relu(x), relu(M.negative(x))], axis)


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """(n, h, w, c * b^2) -> (n, h * b, w * b, c), TF's DCR order."""
    _check_format("depth_to_space", data_format)
    x = _nhwc("depth_to_space", input)
    n, h, w, c = aval_of(x).shape
    b = int(block_size)
    if b < 2 or c % (b * b):
        raise InvalidArgumentError(f"depth_to_space: block_size must be >= 2 and the depth {c} divisible by "
                                   f"block_size^2 = {b * b}")
    y = A.reshape(x, (-1, h, w, b, b, c // (b * b)))
    y = A.transpose(y, (0, 1, 3, 2, 4, 5))
    return A.reshape(y, (-1, h * b, w * b, c // (b * b)))


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """(n, h * b, w * b, c) -> (n, h, w, c * b^2), the inverse of depth_to_space."""
    _check_format("space_to_depth", data_format)
    x = _nhwc("space_to_depth", input)
    n, h, w, c = aval_of(x).shape
    b = int(block_size)
    if b < 2 or h % b or w % b:
        raise InvalidArgumentError(f"space_to_depth: block_size must be >= 2 and divide height {h} and width {w}")
    y = A.reshape(x, (-1, h // b, b, w // b, b, c))
    y = A.transpose(y, (0, 1, 3, 2, 4, 5))
    return A.reshape(y, (-1, h // b, w // b, b * b * c))


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics: mean = mean_ss / counts (+ shift),
    variance = variance_ss / counts - (mean_ss / counts)^2."""
    d = M.divide(1.0, counts)
    m = M.multiply(mean_ss, d)
    var = M.subtract(M.multiply(variance_ss, d), M.square(m))
    return (m if shift is None else M.add(m, shift)), var


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """Frequency-weighted mean and variance over ``axes``."""
    x = _tensor(x)
    w = M.cast(_tensor(frequency_weights), aval_of(x).dtype)
    total = M.reduce_sum(M.add(w, A.zeros_like(x)), axes, keepdims=True)   # the weights, broadcast to x
    mean = M.divide_no_nan(M.reduce_sum(M.multiply(w, x), axes, keepdims=True), total)
    var = M.divide_no_nan(M.reduce_sum(M.multiply(w, M.squared_difference(x, mean)), axes, keepdims=True), total)
    if not keepdims:
        mean, var = A.squeeze(mean, axes), A.squeeze(var, axes)
    return mean, var


def _replicas(fn_name):
    """The number of replicas in sync where a loss is scaled (tf.distribute): 1 outside every
    strategy; in a strategy's scope but outside ``run`` (the cross-replica context) TF raises."""
    top = _dist_current()
    if top is None:
        return 1
    if top[1] is None:
        raise RuntimeError(f"You are calling `{fn_name}` in cross replica context, while it was expected to be "
                           "called in replica context.")
    return top[0].num_replicas_in_sync


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None, name=None):
    """sum(loss * weight) / global batch size; by default the loss's batch size times the number
    of replicas (tf.distribute), as TF. div_no_nan, as TF's: a replica's empty batch gives 0."""
    loss = _tensor(per_example_loss)
    if not aval_of(loss).shape:
        raise ValueError(f"Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={per_example_loss} with rank 0")
    if sample_weight is not None:
        loss = M.multiply(loss, M.cast(_tensor(sample_weight), aval_of(loss).dtype))
    if global_batch_size is None:
        n = aval_of(loss).shape[0]
        if n is None:   # an input_signature's None batch: its size when the function runs (as TF's tf.shape)
            n = M.multiply(A.shape(loss)[0], _replicas("compute_average_loss"))
        else:
            n = n * _replicas("compute_average_loss")
    else:
        n = global_batch_size
        try:
            g = n.numpy() if isinstance(n, Tensor) else np.asarray(n)
        except Exception:   # a traced tensor argument: used as it is (divide_no_nan below)
            g = None
        if g is not None:
            if g.dtype.kind not in "iu":   # (TF's assert_integer_v2 / assert_non_negative_v2: same classes)
                raise TypeError(f"global_batch_size must be an integer. Found: {n!r} of dtype {g.dtype}")
            if g.shape != () or int(g) < 0:
                raise InvalidArgumentError(None, None, f"global_batch_size must be a non-negative integer scalar, "
                                                       f"got {n!r}")
            n = int(g)
    total = M.reduce_sum(loss)
    if isinstance(n, (int, np.integer)) and n > 0:   # the common case: divide's bits, one op
        return M.divide(total, M.cast(n, aval_of(loss).dtype))
    return M.divide_no_nan(total, M.cast(n, aval_of(loss).dtype))


def scale_regularization_loss(regularization_loss, name=None):
    """The loss divided by the number of replicas (tf.distribute): itself, with one."""
    # reduce_sum, as TF: a tensor of losses (not only a list) is summed
    loss = M.add_n(regularization_loss) if isinstance(regularization_loss, (list, tuple)) else \
        _tensor(regularization_loss)
    if aval_of(loss).shape:
        loss = M.reduce_sum(loss)
    n = _replicas("scale_regularization_loss")
    return loss if n == 1 else M.divide(loss, M.cast(n, aval_of(loss).dtype))


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,  # noqa: A002
                name=None):
    """conv1d, conv2d or conv3d by the filters' rank (3, 4 or 5)."""
    r = len(aval_of(_tensor(filters)).shape)
    st = 1 if strides is None else strides
    if r == 3:
        return conv1d(input, filters, st, padding, data_format or "NWC", dilations=dilations)
    if r == 4:
        return conv2d(input, filters, st, padding, data_format or "NHWC", dilations=dilations)
    if r == 5:
        return conv3d(input, filters, st, padding, data_format or "NDHWC", dilations=dilations)
    raise ValueError(f"convolution: filters must have rank 3, 4 or 5 (a 1-D, 2-D or 3-D convolution), got rank {r}")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with dilation ``rate``."""
    return conv2d(value, filters, 1, padding, dilations=int(rate))


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """depthwise_conv2d then a 1x1 conv2d with ``pointwise_filter``."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format=data_format, dilations=dilations)
    return conv2d(y, pointwise_filter, 1, "VALID")


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """conv2d_transpose of height 1: filters (kw, out_channels, in_channels)."""
    _check_format("conv1d_transpose", data_format)
    # (a batch of None, unknown while tracing, passes through as conv2d_transpose takes it)
    os_ = list(output_shape.numpy().tolist() if isinstance(output_shape, Tensor) else output_shape)
    if len(os_) != 3:
        raise ValueError(f"conv1d_transpose: output_shape must be (batch, width, channels), got {os_}")
    st = _pair("conv1d_transpose", "strides", strides, rank=1)
    dl = _pair("conv1d_transpose", "dilations", 1 if dilations is None else dilations, rank=1)
    y = conv2d_transpose(A.expand_dims(input, 1), A.expand_dims(filters, 0), [os_[0], 1, os_[1], os_[2]],
                         (1,) + st, padding, dilations=(1,) + dl)
    return A.squeeze(y, 1)


# -- 3-D convolution and pooling, composed from the 2-D primitives ---------------------------------------
# A 3-D window is kd 2-D windows, one per depth tap t: the taps' inputs are depth slices
# x[:, t*dl :: s] (after padding the depth), folded into the batch so that one 2-D primitive call
# serves every output depth. The taps' results are summed (conv, average) or maxed (max pool). This
# keeps the primitive set 2-D (gradients, lowerings and the fused tier come with it) at the cost of
# kd primitive calls where a native kernel would make one.

def _ndhwc(name, x):
    x = _tensor(x)
    s = aval_of(x).shape
    if len(s) != 5:
        raise ValueError(f"{name}: input must have rank 5 (batch, depth, height, width, channels), got shape "
                         f"{tuple(s)}")
    return x


def _depth_taps(x, k, s, dl, pads, fill=0):
    """The kd depth slices of x (N, D, H, W, C) padded by ``pads`` along depth, each folded to
    (N * out_d, H, W, C); and out_d."""
    _, d, h, w, c = aval_of(x).shape
    if pads != (0, 0):
        x = A.pad(x, [[0, 0], list(pads), [0, 0], [0, 0], [0, 0]], constant_values=fill)
    out_d = P.out_size(d, k, s, dl, *pads)
    if out_d < 1:
        raise ValueError(f"depth window of size {k} (dilation {dl}) does not fit the padded depth "
                         f"{d + sum(pads)}")
    taps = [x[:, t * dl: t * dl + (out_d - 1) * s + 1: s] for t in range(k)]
    return [A.reshape(v, (-1, h, w, c)) for v in taps], out_d


def _unfold_depth(y, out_d):
    """(N * out_d, h, w, c) back to (N, out_d, h, w, c)."""
    _, h, w, c = aval_of(y).shape
    return A.reshape(y, (-1, out_d, h, w, c))


def _pads3(name, padding, dhw, k, st, dl):
    """(depth pads, (height, width) pads) of TF's 'SAME'/'VALID' padding."""
    if not isinstance(padding, str):   # TF's 3-D ops take no explicit padding
        raise TypeError(f"{name}: expected string for argument 'padding' ('SAME' or 'VALID'), not {padding!r}; "
                        f"for explicit padding, tf.pad the input first")
    pads = _padding(name, padding, dhw, k, st, dl)
    return pads[0], pads[1:]


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """TF's tf.nn.conv3d: NDHWC input, (kd, kh, kw, in_channels, out_channels) filters, grouped when
    in_channels divides the input's channels (as conv2d). strides and dilations are 5-lists with 1
    at batch and channels (or 1 or 3 ints)."""
    _check_format("conv3d", data_format, ("NDHWC", "channels_last", None))
    x, w = _ndhwc("conv3d", input), _tensor(filters)
    if M._has_bf16(x, w):   # (float32 sums over all taps, rounded once, as conv2d)
        return M.in_float32(lambda x, w: conv3d(x, w, strides, padding, data_format, dilations), x, w)
    ws = aval_of(w).shape
    if len(ws) != 5:
        raise ValueError(f"conv3d: filters must have rank 5 (kd, kh, kw, in_channels, out_channels), got "
                         f"{tuple(ws)}")
    c = aval_of(x).shape[4]
    if c is not None and (ws[3] == 0 or c % ws[3]):
        raise InvalidArgumentError(f"conv3d: input depth must be evenly divisible by filter depth: the input "
                                   f"{tuple(aval_of(x).shape)} has {c} channels, the filter {tuple(ws)} has {ws[3]}")
    groups = 1 if c is None else c // ws[3]
    st = _pair("conv3d", "strides", strides, rank=3)
    dl = _pair("conv3d", "dilations", 1 if dilations is None else dilations, rank=3)
    pd, phw = _pads3("conv3d", padding, aval_of(x).shape[1:4], ws[:3], st, dl)
    taps, out_d = _depth_taps(x, ws[0], st[0], dl[0], pd)
    ys = [bind(P.conv2d_p, v, w[t], strides=st[1:], padding=phw, dilations=dl[1:], groups=groups)
          for t, v in enumerate(taps)]
    return _unfold_depth(M.add_n(ys) if len(ys) > 1 else ys[0], out_d)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",  # noqa: A002
                     dilations=None, name=None):
    """TF's tf.nn.conv3d_transpose, the gradient of conv3d w.r.t. its input: filters
    (kd, kh, kw, output_channels, input_channels); output_shape (N, D, H, W, C)."""
    _check_format("conv3d_transpose", data_format, ("NDHWC", "channels_last", None))
    g, w = _ndhwc("conv3d_transpose", input), _tensor(filters)
    if M._has_bf16(g, w):   # (float32 sums over all taps, rounded once, as conv3d; the taps' primitive has no bfloat16)
        return M.in_float32(lambda g, w: conv3d_transpose(g, w, output_shape, strides, padding, data_format,
                                                          dilations), g, w)
    ws = aval_of(w).shape
    if len(ws) != 5:
        raise ValueError(f"conv3d_transpose: filters must have rank 5 (kd, kh, kw, out_channels, in_channels), "
                         f"got {tuple(ws)}")
    out = _transpose_output_shape("conv3d_transpose", output_shape, ws, "(batch, depth, height, width, channels)", g)
    st = _pair("conv3d_transpose", "strides", strides, rank=3)
    dl = _pair("conv3d_transpose", "dilations", 1 if dilations is None else dilations, rank=3)
    (pb, pa), phw = _pads3("conv3d_transpose", padding, out[1:4], ws[:3], st, dl)
    gs = aval_of(g).shape
    out_d = P.out_size(out[1], ws[0], st[0], dl[0], pb, pa)
    if gs[1] != out_d or gs[4] != ws[4]:
        raise ValueError(f"conv3d_transpose: the input {tuple(gs)} is not what conv3d of output_shape {out} with "
                         f"filters {tuple(ws)} makes (depth {out_d}, {ws[4]} channels)")
    s, dpad = st[0], out[1] + pb + pa
    span = (out_d - 1) * s + 1
    g2 = A.reshape(g, (-1,) + tuple(gs[2:]))
    parts = []
    for t in range(ws[0]):
        z = bind(P.conv2d_input_grad_p, g2, w[t], input_hw=out[2:4], strides=st[1:], padding=phw,
                 dilations=dl[1:], groups=1)
        z = _unfold_depth(z, out_d)                               # (N, out_d, H, W, C)
        if s > 1:   # spread the depths s apart: zeros between them, as the strided taps read them
            z = A.reshape(A.pad(A.expand_dims(z, 2), [[0, 0], [0, 0], [0, s - 1], [0, 0], [0, 0], [0, 0]]),
                          (-1, out_d * s) + tuple(out[2:]))[:, :span]
        parts.append(A.pad(z, [[0, 0], [t * dl[0], dpad - t * dl[0] - span], [0, 0], [0, 0], [0, 0]]))
    y = M.add_n(parts) if len(parts) > 1 else parts[0]
    return y[:, pb: pb + out[1]]


def _pool3d_args(name, input, ksize, strides, padding, data_format):  # noqa: A002
    _check_format(name, data_format, ("NDHWC", "channels_last", None))
    x = _ndhwc(name, input)
    k, st = _pair(name, "ksize", ksize, rank=3), _pair(name, "strides", strides, rank=3)
    pd, phw = _pads3(name, padding, aval_of(x).shape[1:4], k, st, (1, 1, 1))
    return x, k, st, pd, phw


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The max over each (kd, kh, kw) window; SAME padding never wins a window (as TF)."""
    x, k, st, pd, phw = _pool3d_args("max_pool3d", input, ksize, strides, padding, data_format)
    taps, out_d = _depth_taps(x, k[0], st[0], 1, pd, fill=P._fill_min(aval_of(x).dtype))
    ys = [bind(P.max_pool_p, v, v, ksize=k[1:], strides=st[1:], padding=phw) for v in taps]
    y = ys[0]
    for v in ys[1:]:
        y = M.maximum(y, v)
    return _unfold_depth(y, out_d)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean over each window; with 'SAME' the padded cells are not counted (as TF): each depth
    tap's 2-D average already leaves out the padded rows and columns, and the zero-padded depth taps
    add nothing, so the sum over taps is divided by the real depth taps only."""
    x, k, st, pd, phw = _pool3d_args("avg_pool3d", input, ksize, strides, padding, data_format)
    if M._has_bf16(x):   # (in float32, rounded once, as avg_pool2d)
        return M.in_float32(lambda x: avg_pool3d(x, ksize, strides, padding, data_format), x)
    av = aval_of(x)
    if av.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"avg_pool3d: expects a floating tensor, got {av.dtype.name}")
    taps, out_d = _depth_taps(x, k[0], st[0], 1, pd)
    ys = [avg_pool2d(v, k[1:], st[1:], padding) for v in taps]
    y = _unfold_depth(M.add_n(ys) if len(ys) > 1 else ys[0], out_d)
    depth_counts = P.window_counts((av.shape[1], 1), (k[0], 1), (st[0], 1), (pd, (0, 0)), av.dtype)
    return M.multiply(y, (1.0 / depth_counts).reshape(1, out_d, 1, 1, 1).astype(av.dtype))


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """x / (bias + alpha * sum of x^2 over the 2r + 1 nearest channels)^beta (TF's LRN, NHWC)."""
    x = _nhwc("local_response_normalization", input)
    r = int(depth_radius)
    sq = M.square(x)
    c = aval_of(x).shape[-1]
    padded = A.pad(sq, [[0, 0], [0, 0], [0, 0], [r, r]])
    window = M.add_n([padded[..., i:i + c] for i in range(2 * r + 1)])
    return M.divide(x, M.pow(M.add(M.multiply(window, float(alpha)), float(bias)), float(beta)))


lrn = local_response_normalization


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """tf.nn.conv_transpose: conv1d/2d/3d_transpose chosen by ``output_shape``'s length (TF 2.21's dispatch
    and ValueError)."""
    n = (int(tuple(output_shape.shape)[0]) if isinstance(output_shape, Tensor) else len(output_shape)) - 2
    if not 1 <= n <= 3:
        raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: output_shape={output_shape} of "
                         f"length {n + 2}.")
    op = (conv1d_transpose, conv2d_transpose, conv3d_transpose)[n - 1]
    kw = {} if data_format is None else {"data_format": data_format}
    if dilations is not None:
        kw["dilations"] = dilations
    return op(input, filters, output_shape, strides, padding=padding, **kw)


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,  # noqa: A002
         dilations=None, name=None):
    """tf.nn.pool: N-D max or average pooling (TF 2.21's pool_v2). With dilations (VALID padding, unit
    strides, as TF requires) the window's taps are spaced: the max/mean over the shifted slices (a
    composition, so differentiable and traceable)."""
    x = convert_to_tensor(input)
    n = len(window_shape)
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")   # TF 2.21's text
    strides = [1] * n if strides is None else list(strides)
    dil = [1] * n if dilations is None else ([int(dilations)] * n if np.ndim(dilations) == 0 else list(dilations))
    if all(d == 1 for d in dil):
        return (max_pool if kind == "MAX" else avg_pool)(x, list(window_shape), strides, padding, data_format)
    if any(s != 1 for s in strides):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")   # TF 2.21's text
    if str(padding).upper() != "VALID" or data_format not in (None, "NWC", "NHWC", "NDHWC"):
        raise NotImplementedError("tf.nn.pool with dilations: padding='VALID' and channels-last only in tapeflow")
    shape = tuple(x.shape)
    out = [shape[1 + i] - (window_shape[i] - 1) * dil[i] for i in range(n)]
    taps = []
    for off in np.ndindex(*window_shape):
        idx = (slice(None),) + tuple(slice(o * d, o * d + m) for o, d, m in zip(off, dil, out))
        taps.append(x[idx])
    stacked = A.stack(taps, axis=0)
    return M.reduce_max(stacked, axis=0) if kind == "MAX" else M.reduce_mean(stacked, axis=0)


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
             name=None):
    """tf.nn.ctc_loss with dense labels: per example, -log p(labels | logits) summed over the CTC
    alignments (log_softmax of the logits inside, as TF). The forward (alpha) recursion in log space
    over the label sequence with blanks between, one step per frame (frames past ``logit_length``
    leave alpha as it is); the gradient is the tape's through it (TF's is the same derivative,
    written out). ``blank_index`` None is TF's default, the last class; a negative index counts from
    the end. Sparse labels and ``unique`` (TF's fast path for precomputed label structure) are not
    supported. Eagerly and traced (a Python loop over the frames: T steps unrolled)."""
    from ..core.tensor import Tensor as _T
    if unique is not None:
        raise NotImplementedError("tf.nn.ctc_loss(unique=...): the precomputed-label fast path is not supported; "
                                  "pass unique=None")
    if not isinstance(labels, _T) and type(labels).__name__ == "SparseTensor":
        raise NotImplementedError("tf.nn.ctc_loss with SparseTensor labels is not supported: pass dense labels "
                                  "(batch, max_label_length) and label_length")
    x = convert_to_tensor(logits)
    if not x.dtype.is_floating:
        x = M.cast(x, "float32")
    if not logits_time_major:
        x = A.transpose(x, [1, 0, 2])
    T, B, C = tuple(x.shape)
    y = M.cast(convert_to_tensor(labels), "int32")
    L = tuple(y.shape)[1]
    blank = C - 1 if blank_index is None else int(blank_index) % C
    lab_len = M.cast(convert_to_tensor(label_length), "int32")
    log_len = M.cast(convert_to_tensor(logit_length), "int32")
    lp = log_softmax(x, axis=-1)                                     # (T, B, C)
    S = 2 * L + 1
    # the extended label sequence: blank, l1, blank, l2, ..., blank
    ext = A.reshape(A.stack([A.fill([B, L], blank), y], axis=2), [B, 2 * L])
    ext = A.concat([ext, A.fill([B, 1], blank)], axis=1)            # (B, S)
    onehot = M.cast(A.one_hot(ext, C), x.dtype)                      # (B, S, C)
    lp_ext = M.einsum("tbc,bsc->tbs", lp, onehot)                    # (T, B, S)
    # a label may follow the one two back (skipping a blank) unless it repeats it
    prev2 = A.concat([A.fill([B, 2], -1), ext[:, :-2]], axis=1)
    s_idx = A.range(S)
    skip = M.logical_and(M.equal(s_idx % 2, 1), M.not_equal(ext, prev2))
    neg = M.cast(-1e30, x.dtype)   # log(0): finite, so logsumexp of three "zeros" has a gradient (0)
    valid = M.less(s_idx[None, :], 2 * lab_len[:, None] + 1)        # positions inside this example's sequence
    init = M.where(M.logical_and(M.less(s_idx, 2)[None, :], valid), lp_ext[0], A.fill([B, S], neg))
    alpha = init
    for t in range(1, T):
        a1 = A.concat([A.fill([B, 1], neg), alpha[:, :-1]], axis=1)
        a2 = M.where(skip, A.concat([A.fill([B, 2], neg), alpha[:, :-2]], axis=1), A.fill([B, S], neg))
        new = M.reduce_logsumexp(A.stack([alpha, a1, a2], axis=0), axis=0) + lp_ext[t]
        alpha = M.where(M.less(t, log_len)[:, None], new, alpha)
    end = 2 * lab_len                                                # the last blank, then the last label
    last = M.reduce_sum(alpha * M.cast(A.one_hot(end, S), x.dtype), axis=1)
    prev = M.reduce_sum(alpha * M.cast(A.one_hot(end - 1, S), x.dtype), axis=1)
    both = M.reduce_logsumexp(A.stack([last, M.where(M.greater(lab_len, 0), prev, A.fill([B], neg))], axis=0), axis=0)
    return -both


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype="int64",  # noqa: A002
                         include_batch_in_index=False, name=None):
    """tf.nn.max_pool_with_argmax: 2-D max pooling (NHWC) and the flat index of each maximum,
    ``(y * width + x) * channels + c`` (plus ``b * height * width * channels`` with
    ``include_batch_in_index``), the first maximum of a window winning ties, as TF 2.21. The windows
    are shifted strided slices of the input padded with -inf (SAME), stacked: the max's gradient is
    reduce_max's, traceable."""
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. Received: "
                         f"data_format={data_format}")   # TF 2.21's text (two spaces included)
    x = convert_to_tensor(input)
    n, h, w, c = tuple(x.shape)

    def pair(v, what):
        v = [v] * 2 if np.ndim(v) == 0 else list(v)
        return [int(v[1]), int(v[2])] if len(v) == 4 else [int(v[0]), int(v[-1])]
    kh, kw = pair(ksize, "ksize")
    sh, sw = pair(strides, "strides")
    if str(padding).upper() == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        top, left = ph // 2, pw // 2
        lowest = np.finfo(x.dtype.np).min if x.dtype.is_floating else np.iinfo(x.dtype.np).min
        xp = A.pad(x, [[0, 0], [top, ph - top], [left, pw - left], [0, 0]], constant_values=-np.inf
                   if x.dtype.is_floating else lowest)
    else:
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
        top = left = 0
        xp = x
    taps, pos = [], []
    for dy in range(kh):
        for dx in range(kw):
            taps.append(xp[:, dy:dy + (oh - 1) * sh + 1:sh, dx:dx + (ow - 1) * sw + 1:sw, :])
            pos.append((dy, dx))
    stacked = A.stack(taps, axis=0)                                  # (kh*kw, n, oh, ow, c)
    out = M.reduce_max(stacked, axis=0)
    k = M.argmax(stacked, axis=0, output_type="int64")               # the first maximum
    dy = M.cast(A.gather(np.array([p[0] for p in pos], np.int64), k), "int64")
    dx = M.cast(A.gather(np.array([p[1] for p in pos], np.int64), k), "int64")
    yy = dy + np.arange(oh, dtype=np.int64)[None, :, None, None] * sh - top
    xx = dx + np.arange(ow, dtype=np.int64)[None, None, :, None] * sw - left
    idx = (yy * w + xx) * c + np.arange(c, dtype=np.int64)[None, None, None, :]
    if include_batch_in_index:
        idx = idx + np.arange(n, dtype=np.int64)[:, None, None, None] * (h * w * c)
    return out, M.cast(idx, output_dtype)


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None,
                            allow_fast_lookup=False):
    """tf.nn.embedding_lookup_sparse: per row of the SparseTensor ``sp_ids``, its ids' embeddings
    (clipped to ``max_norm``) combined by ``combiner`` ('mean', the default; 'sum'; 'sqrtn': the sum over
    the root of the summed squared weights), weighted by ``sp_weights``' values if given. As TF 2.21, the
    result has (largest row with an id) + 1 rows, rows without ids are zeros, and duplicate ids count
    twice. Composed of gather and segment sums: TF's values and gradient (dense here, IndexedSlices in TF).
    Eager: the row count depends on the ids."""
    from ..core.state import STATE
    from .segment_ops import unsorted_segment_sum
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")   # TF 2.21's text
    if STATE.trace is not None:
        raise NotImplementedError("tf.nn.embedding_lookup_sparse inside tapeflow.function: its row count is the "
                                  "largest row id + 1, known when it runs; call it eagerly (or tf.nn.embedding_lookup "
                                  "with dense ids)")
    ind = np.asarray(sp_ids.indices.numpy())
    seg = ind[:, 0].astype(np.int64) if ind.size else np.zeros(0, np.int64)
    n = int(seg.max()) + 1 if seg.size else 0
    emb = embedding_lookup(params, sp_ids.values, max_norm=max_norm)
    if sp_weights is None:
        w = A.ones_like(M.cast(sp_ids.values, emb.dtype))
    else:
        w = M.cast(sp_weights.values, emb.dtype)
    total = unsorted_segment_sum(emb * w[:, None], seg, n)
    if combiner == "sum":
        return total
    denom = unsorted_segment_sum(w if combiner == "mean" else M.square(w), seg, n)
    if combiner == "sqrtn":
        denom = M.sqrt(denom)
    return M.divide_no_nan(total, denom[:, None])


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, max_norm=None, name=None, allow_fast_lookup=False):
    """tf.nn.safe_embedding_lookup_sparse: embedding_lookup_sparse after dropping ids < 0 and weights
    <= 0, with one row per row of ``sparse_ids`` (its dense_shape[0]), empty rows given ``default_id``'s
    embedding or zeros (TF 2.21's rules; 2-D ids)."""
    from ..sparse import SparseTensor
    ind = np.asarray(sparse_ids.indices.numpy())
    ids = np.asarray(sparse_ids.values.numpy())
    keep = ids >= 0
    wv = None
    if sparse_weights is not None:
        wv = np.asarray(sparse_weights.values.numpy())
        keep &= wv > 0
    rows = int(np.asarray(sparse_ids.dense_shape.numpy())[0])
    shape = sparse_ids.dense_shape
    ids_k = SparseTensor(ind[keep].reshape(-1, ind.shape[1]), ids[keep], shape)
    w_k = None if wv is None else SparseTensor(ind[keep].reshape(-1, ind.shape[1]), wv[keep], shape)
    # the empty rows get default_id (weight 1) or stay empty (zeros), as TF's sparse.fill_empty_rows
    present = set(ind[keep][:, 0].tolist())
    empty = [r for r in range(rows) if r not in present]
    if default_id is not None and empty:
        extra = np.array([[r] + [0] * (ind.shape[1] - 1) for r in empty], np.int64)
        order = np.argsort(np.concatenate([ind[keep][:, 0], extra[:, 0]]), kind="stable")
        all_ind = np.concatenate([ind[keep].reshape(-1, ind.shape[1]), extra])[order]
        ids_k = SparseTensor(all_ind, np.concatenate([ids[keep], np.full(len(empty), default_id, ids.dtype)])[order],
                             shape)
        if wv is not None:
            w_k = SparseTensor(all_ind, np.concatenate([wv[keep], np.ones(len(empty), wv.dtype)])[order], shape)
    out = embedding_lookup_sparse(embedding_weights, ids_k, w_k, combiner=combiner, max_norm=max_norm)
    got = tuple(out.shape)[0]
    if got < rows:   # trailing empty rows: zeros
        out = A.concat([out, A.zeros([rows - got] + list(out.shape)[1:], out.dtype)], axis=0)
    return out


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """tf.nn.ctc_greedy_decoder: per example, the argmax class of each frame up to its length, repeats
    merged (``merge_repeated``) then blanks dropped (``blank_index``, default the last class): a list of
    one SparseTensor (batch, longest decode) and the negative sum of the chosen logits, (batch, 1), as
    TF 2.21. Time-major ``inputs`` (max_time, batch, classes). Eager: the decodes' lengths depend on
    the values."""
    from ..core.state import STATE
    from ..sparse import SparseTensor
    if STATE.trace is not None:
        raise NotImplementedError("tf.nn.ctc_greedy_decoder inside tapeflow.function: its output's size depends on "
                                  "the values; call it eagerly")
    x = np.asarray(convert_to_tensor(inputs).numpy())
    lens = np.asarray(convert_to_tensor(sequence_length).numpy()).astype(np.int64).ravel()
    t, b, c = x.shape
    blank = c - 1 if blank_index is None else int(blank_index) % c
    ind, vals, neg, width = [], [], np.zeros((b, 1), x.dtype), 0
    for i in range(b):
        n = int(lens[i])
        best = np.argmax(x[:n, i], axis=-1)
        acc = x.dtype.type(0)
        for v in np.max(x[:n, i], axis=-1):   # TF's order: one frame at a time (NumPy's pairwise sum rounds
            acc = acc - v                       # differently in the last bit)
        neg[i, 0] = acc
        out, prev = [], -1
        for k in best.tolist():
            if k != blank and not (merge_repeated and k == prev):
                out.append(k)
            prev = k
        width = max(width, len(out))
        ind += [[i, j] for j in range(len(out))]
        vals += out
    sp = SparseTensor(np.asarray(ind, np.int64).reshape(-1, 2), np.asarray(vals, np.int64),
                      np.asarray([b, width], np.int64))
    return [sp], Tensor(neg)


# -- wave 21 (nn21): CTC helpers, beam search, edit distance ---------------------------------------------

def collapse_repeated(labels, seq_length, name=None):
    """tf.nn.collapse_repeated: per row, the first ``seq_length`` labels with runs of equal labels merged,
    left-aligned and zero-padded to the longest collapsed row; the new lengths in seq_length's dtype.
    Composed as TF's: kept positions' ranks place them (one-hot), so it traces; the output width
    depends on the values (traced: an unknown dimension, a column mask as boolean_mask's)."""
    x = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    n = seq_length if isinstance(seq_length, Tensor) else convert_to_tensor(seq_length)
    if x.shape.rank != 2:
        raise InvalidArgumentError(f"collapse_repeated: labels must be 2-D [batch, max_len], got shape {x.shape}")
    t = tuple(x.shape)[1]
    first = M.cast(A.ones_like(x[:, :1]), np.bool_)
    keep = A.concat([first, M.not_equal(x[:, 1:], x[:, :-1])], axis=1) & A.sequence_mask(n, t)
    new_len = M.reduce_sum(M.cast(keep, np.int32), axis=1)
    rank = M.cumsum(M.cast(keep, np.int32), axis=1) - 1
    hit = A.expand_dims(keep, 1) & M.equal(A.expand_dims(rank, 1), A.reshape(np.arange(t, dtype=np.int32), (t, 1)))
    out = M.reduce_sum(M.cast(hit, x.dtype) * A.expand_dims(x, 1), axis=2)         # (batch, t): slot j <- kept rank j
    width = M.reduce_max(new_len) if t else 0
    out = A.boolean_mask(out, M.less(np.arange(t, dtype=np.int32), width), axis=1)
    return out, M.cast(new_len, n.dtype)


def ctc_unique_labels(labels, name=None):
    """tf.nn.ctc_unique_labels: per row, TF's ``unique`` of the row (first occurrences, in order)
    zero-padded to the row length as int64, and each label's index into it (int32). Composed with
    pairwise equalities, so the shapes are static and it traces."""
    x = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    if x.shape.rank != 2:
        raise InvalidArgumentError(f"ctc_unique_labels: labels must be 2-D [batch, max_len] (unique expects a 1D "
                                   f"vector per row), got shape {x.shape}")
    t = tuple(x.shape)[1]
    same = M.equal(A.expand_dims(x, 2), A.expand_dims(x, 1))                       # (b, i, j): x_i == x_j
    earlier = np.tril(np.ones((t, t), bool), -1)                                   # j < i
    first = M.logical_not(M.reduce_any(same & earlier, axis=2))                    # (b, i)
    rank = M.cumsum(M.cast(first, np.int32), axis=1) - 1
    idx = M.reduce_sum(M.cast(same & A.expand_dims(first, 1), np.int32) * A.expand_dims(rank, 1), axis=2)
    hit = A.expand_dims(first, 1) & M.equal(A.expand_dims(rank, 1), A.reshape(np.arange(t, dtype=np.int32), (t, 1)))
    y = M.reduce_sum(M.cast(hit, np.int64) * A.expand_dims(M.cast(x, np.int64), 1), axis=2)
    return [y, idx]


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def _edit_distance_np(hi, hv, hs, ti, tv, ts, normalize):
    hi, ti = np.asarray(hi, np.int64), np.asarray(ti, np.int64)
    hs, ts = np.asarray(hs, np.int64), np.asarray(ts, np.int64)
    if hs.size < 2 or ts.size < 2:
        raise InvalidArgumentError(f"edit_distance: Input SparseTensors must have rank at least 2, got dense shapes "
                                   f"{hs.tolist()} and {ts.tolist()}")
    if hs.shape != ts.shape:
        raise InvalidArgumentError(f"edit_distance: Expected truth and hypothesis to have matching ranks, got dense "
                                   f"shapes {hs.tolist()} and {ts.tolist()}")
    out_shape = tuple(np.maximum(hs[:-1], ts[:-1]).tolist())

    def groups(ind, val):
        g = {}
        for k, v in zip(map(tuple, ind[:, :-1].tolist()), (val.tolist() if hasattr(val, "tolist") else list(val))):
            g.setdefault(k, []).append(v)
        return g
    hg, tg = groups(hi, np.asarray(hv)), groups(ti, np.asarray(tv))
    out = np.zeros(out_shape, np.float32)
    for k in set(hg) | set(tg):
        h, t = hg.get(k, []), tg.get(k, [])
        d = np.float32(_levenshtein(h, t))
        out[k] = (d / np.float32(len(t)) if t else (np.float32(np.inf) if h else np.float32(0))) if normalize else d
    return out


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """tf.edit_distance: Levenshtein distance between the sequences (last dimension) of two SparseTensors
    of the same rank, float32 of shape max(dense_shapes)[:-1]; ``normalize`` divides by the truth's
    length (an empty truth: inf, or 0 when both are empty, as TF). Values of any dtype (strings too);
    the indices are taken in the order given (TF requires them sorted). Inside tapeflow.function it is
    one numpy_function (its shape is the dense shapes')."""
    from ..core.state import STATE
    from ..sparse import SparseTensor
    if not isinstance(hypothesis, SparseTensor) or not isinstance(truth, SparseTensor):
        raise TypeError(f"edit_distance: hypothesis and truth must be SparseTensors, got "
                        f"{type(hypothesis).__name__} and {type(truth).__name__}")
    if hypothesis.values.dtype != truth.values.dtype:
        raise InvalidArgumentError(f"edit_distance: hypothesis and truth must have the same dtype, got "
                        f"{hypothesis.values.dtype.name} and {truth.values.dtype.name}")
    parts = [hypothesis.indices, hypothesis.values, hypothesis.dense_shape, truth.indices, truth.values,
             truth.dense_shape]
    if STATE.trace is None:
        return Tensor(_edit_distance_np(*[p.numpy() for p in parts], bool(normalize)))
    from .script_ops import numpy_function
    return numpy_function(lambda *a: _edit_distance_np(*a, bool(normalize)), parts, np.float32)


class _Beam:
    """One prefix of TF's CTC beam search (util/ctc/ctc_beam_search.h): its label, parent, children
    by label, and log-probabilities (total, ending in blank, ending in its label) now and one frame ago."""
    __slots__ = ("label", "parent", "children", "new", "old")

    def __init__(self, label, parent):
        self.label, self.parent, self.children = label, parent, {}
        self.new = [-np.inf, -np.inf, -np.inf]      # total, blank, label
        self.old = [-np.inf, -np.inf, -np.inf]

    def active(self):
        return self.new[0] != -np.inf

    def labels(self):
        seq, e = [], self
        while e.parent is not None:
            seq.append(e.label)
            e = e.parent
        return seq[::-1]


def _lse(a, b):
    # TF's LogSumExp (ctc_loss_util.h) in float32: the larger plus log1p(exp(smaller - larger))
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    a, b = (a, b) if a > b else (b, a)
    return np.float32(a + np.log1p(np.exp(np.float32(b - a))))


def _beam_search_np(x, n_frames, beam_width, top_paths):
    """TF's CTCBeamSearchDecoder with the default (no language model) scorer on one example's
    (frames, classes) float32 logits; blank is the last class. The beam is TF's TopN: at most
    beam_width leaves, a newcomer replacing the worst only when strictly better (the worst's
    probabilities reset, as TF). Returns the top_paths best label sequences and their scores."""
    blank = x.shape[1] - 1
    root = _Beam(-1, None)
    root.new = [np.float32(0), np.float32(0), -np.inf]
    leaves = [root]

    def bottom():
        return min(leaves, key=lambda e: e.new[0])
    # TF's op hands the search log-softmax frames (its reported scores are log-probabilities: checked
    # against TF 2.21, the max-subtracted logits of the search's own normalization leave an offset of
    # sum_t logsumexp); a per-frame shift changes no decision, so only the scores depend on it
    m = x.max(axis=1, keepdims=True)
    x = (x - m - np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))).astype(np.float32)
    for t in range(n_frames):
        row = x[t]
        mx = np.float32(0)
        branches = sorted(leaves, key=lambda e: -e.new[0])
        leaves = []
        for b in branches:
            b.old = list(b.new)
        for b in branches:
            if b.parent is not None:
                if b.parent.active():
                    prev = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                    b.new[2] = _lse(b.new[2], prev)
                b.new[2] = np.float32(b.new[2] + np.float32(row[b.label] - mx))
            b.new[1] = np.float32(b.old[0] + np.float32(row[blank] - mx))
            b.new[0] = _lse(b.new[1], b.new[2])
            leaves.append(b)

        def candidate(p):
            return p[0] > -np.inf and (len(leaves) < beam_width or p[0] > bottom().new[0])
        for b in branches:
            if not candidate(b.old):
                continue
            for lab in range(blank):
                c = b.children.get(lab)
                if c is None:
                    c = b.children[lab] = _Beam(lab, b)
                if c.active():
                    continue
                c.new[1] = -np.inf
                prev = b.old[1] if lab == b.label else b.old[0]
                c.new[2] = np.float32(np.float32(row[lab] - mx) + prev)
                c.new[0] = c.new[2]
                if candidate(c.new):
                    if len(leaves) == beam_width:
                        worst = bottom()
                        worst.new = [-np.inf, -np.inf, -np.inf]
                        leaves.remove(worst)
                    leaves.append(c)
                else:
                    c.old = [-np.inf, -np.inf, -np.inf]
                    c.new = [-np.inf, -np.inf, -np.inf]
    if top_paths > len(leaves):
        raise InvalidArgumentError("ctc_beam_search_decoder: Less leaves in the beam search than requested "
                                   f"({top_paths} paths, {len(leaves)} leaves: fewer frames than paths?)")
    best = sorted(leaves, key=lambda e: -e.new[0])[:top_paths]
    return [e.labels() for e in best], [e.new[0] for e in best]


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1):
    """tf.nn.ctc_beam_search_decoder (TF 2's: repeats are not merged): per example, TF's CTC prefix beam
    search over the first sequence_length frames of time-major logits (max_time, batch, classes), blank
    the last class. Returns a list of top_paths SparseTensors (int64 decodes, (batch, longest)) and the
    (batch, top_paths) log-probabilities of the decodes (each the sum over the beam's alignments of
    that labelling, softmax over each frame's logits). Eager only: the decodes' sizes depend on
    the values (as ctc_greedy_decoder)."""
    from ..core.state import STATE
    from ..sparse import SparseTensor
    if STATE.trace is not None:
        raise NotImplementedError("tf.nn.ctc_beam_search_decoder inside tapeflow.function: its output's size depends "
                                  "on the values; call it eagerly")
    x = np.asarray(convert_to_tensor(inputs).numpy())
    if x.ndim != 3:
        raise InvalidArgumentError(f"ctc_beam_search_decoder: inputs must be 3-D (max_time, batch, num_classes), "
                                   f"got shape {list(x.shape)}")
    if x.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"ctc_beam_search_decoder: inputs must be float32 or float64, got {x.dtype}")
    lens = np.asarray(convert_to_tensor(sequence_length).numpy()).reshape(-1).astype(np.int64)
    t, b, c = x.shape
    if lens.shape != (b,):
        raise FailedPreconditionError(f"ctc_beam_search_decoder: len(sequence_length) != batch_size: {len(lens)} vs "
                                      f"{b}")
    if (lens > t).any():
        raise FailedPreconditionError(f"ctc_beam_search_decoder: sequence_length(b) <= max_time, got {lens.max()} > "
                                      f"{t}")
    beam_width, top_paths = int(beam_width), int(top_paths)
    if beam_width <= 0 or top_paths <= 0:
        raise InvalidArgumentError(f"ctc_beam_search_decoder: beam_width and top_paths must be > 0, got {beam_width}, "
                                   f"{top_paths}")
    if top_paths > beam_width:
        raise InvalidArgumentError("ctc_beam_search_decoder: requested more paths than the beam width "
                                   f"({top_paths} > {beam_width})")
    paths, scores = [], np.zeros((b, top_paths), x.dtype)
    for i in range(b):
        seqs, sc = _beam_search_np(x[:, i].astype(np.float32), int(lens[i]), beam_width, top_paths)
        paths.append(seqs)
        scores[i] = sc
    decoded = []
    for k in range(top_paths):
        ind = [[i, j] for i in range(b) for j in range(len(paths[i][k]))]
        vals = [v for i in range(b) for v in paths[i][k]]
        width = max((len(paths[i][k]) for i in range(b)), default=0)
        decoded.append(SparseTensor(np.asarray(ind, np.int64).reshape(-1, 2), np.asarray(vals, np.int64),
                                    np.asarray([b, width], np.int64)))
    return decoded, Tensor(scores)


# -- wave 21 (nn21): morphology, fractional pooling, convolution gradients and aliases -------------------

def _morph_args(name, x, filters, strides, padding, data_format, dilations):
    _check_format(name, data_format, allowed=("NHWC",))
    x = _nhwc(name, x)
    w = _tensor(filters)
    ws = tuple(aval_of(w).shape)
    if len(ws) != 3:
        raise InvalidArgumentError(f"{name}: filter must be 3-dimensional (filter_height, filter_width, depth), got "
                                   f"shape {ws}")
    c = aval_of(x).shape[3]
    if c != ws[2]:
        raise InvalidArgumentError(f"{name}: input and filter must have the same depth: {c} vs {ws[2]}")
    if aval_of(w).dtype != aval_of(x).dtype:
        raise InvalidArgumentTypeError(f"{name}: input and filters must have the same dtype, got {aval_of(x).dtype} "
                                       f"and {aval_of(w).dtype}")
    st = _pair(name, "strides", strides)
    dl = _pair(name, "dilations", dilations)
    return x, w, ws, st, dl


def dilation2d(input, filters, strides, padding, data_format, dilations, name=None):  # noqa: A002
    return _dilation2d("dilation2d", input, filters, strides, padding, data_format, dilations)


def _dilation2d(fn, input, filters, strides, padding, data_format, dilations):  # noqa: A002
    """tf.nn.dilation2d: grayscale morphological dilation, out = max over the window of x + filter
    (positions in the padding never count). Composed: the taps stacked, the first maximum
    (in filter row-major order) chosen by argmax and gathered, so the gradient goes to that one
    input pixel and filter tap -- TF's subgradient at ties (checked against TF 2.21)."""
    x, w, ws, st, dl = _morph_args(fn, input, filters, strides, padding, data_format, dilations)
    n, h, wd, c = aval_of(x).shape
    kh, kw = ws[:2]
    if padding == "SAME":
        (t, b), (l, r) = _padding(fn, padding, (h, wd), (kh, kw), st, dl)
    elif padding == "VALID":
        (t, b), (l, r) = (0, 0), (0, 0)
    else:
        raise ValueError(f"{fn}: padding must be 'SAME' or 'VALID', got {padding!r}")
    oh = (h + t + b - (kh - 1) * dl[0] - 1) // st[0] + 1
    ow = (wd + l + r - (kw - 1) * dl[1] - 1) // st[1] + 1
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(f"{fn}: the input {h}x{wd} is smaller than the dilated filter "
                                   f"{(kh - 1) * dl[0] + 1}x{(kw - 1) * dl[1] + 1} (padding {padding})")
    neg = np.asarray(-np.inf, aval_of(x).dtype)
    xp = A.pad(x, [[0, 0], [t, b], [l, r], [0, 0]], constant_values=neg) if t + b + l + r else x
    taps = []
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dl[0], j * dl[1]
            taps.append(xp[:, y0:y0 + (oh - 1) * st[0] + 1:st[0], x0:x0 + (ow - 1) * st[1] + 1:st[1], :] + w[i, j])
    s = A.stack(taps, axis=-1)                                               # (n, oh, ow, c, kh * kw)
    k = A.expand_dims(M.argmax(s, axis=-1, output_type=np.int32), -1)
    return A.squeeze(A.take_along_axis(s, k, axis=-1), -1)


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None):
    """tf.nn.erosion2d: as TF, -dilation2d(-value, filters reversed in both spatial axes)."""
    w = _tensor(filters)
    return M.negative(_dilation2d("erosion2d", M.negative(_tensor(value)), A.reverse(w, [0, 1]), strides, padding,
                                  data_format, dilations))


def _fractional_sequence(n_in, n_out, pseudo_random, seed):
    """TF's pooling sequence (fractional_pool_common.cc): cumulative boundaries [0, ..., n_in] of n_out
    intervals. Random: the n_in % n_out intervals one longer than n_in // n_out at uniformly random
    places (a random permutation: argsort of uniforms). Pseudo-random: ceil(alpha (i + u)) - ceil(alpha u),
    u uniform in [0, min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))). Drawn in the graph
    (tapeflow's stream: TF's distribution, not its draws), so a compiled call draws anew."""
    from . import random_ops as R
    if n_out == 0:
        return A.zeros((1,), np.int64)
    if pseudo_random:
        alpha = n_in / n_out
        k = n_in // n_out
        umax = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = R.uniform((), dtype=np.float64, seed=seed) * umax
        i = np.arange(1, n_out, dtype=np.float64)
        mid = M.cast(M.ceil(alpha * (i + u)) - M.ceil(alpha * u), np.int64)
        return A.concat([np.zeros(1, np.int64), mid, np.full(1, n_in, np.int64)], 0)
    k, extra = divmod(n_in, n_out)
    rank = A.argsort(A.argsort(R.uniform((n_out,), seed=seed)))             # a uniform random permutation
    diff = k + M.cast(M.less(rank, extra), np.int64)
    return A.concat([np.zeros(1, np.int64), M.cumsum(diff)], 0)


def _windows(seq, n_in, overlapping):
    """(n_out, n_in) boolean membership of each input index in each pooling window: [seq[i], seq[i+1])
    or, overlapping, [seq[i], seq[i+1]] (clipped to the input)."""
    pos = np.arange(n_in, dtype=np.int64)
    lo = A.expand_dims(seq[:-1], 1)
    hi = A.expand_dims(seq[1:], 1) + (1 if overlapping else 0)
    return M.greater_equal(pos, lo) & M.less(pos, hi)


def _fractional_pool_with(x, rows, cols, overlapping, kind):
    """Pool NHWC ``x`` over the windows the boundary sequences ``rows``/``cols`` (int64) make:
    max (TF's FractionalMaxPool; ties split the gradient as reduce_max's) or mean."""
    _, h, w, _ = aval_of(x).shape
    r = _windows(rows, h, overlapping)                                       # (oh, h)
    c = _windows(cols, w, overlapping)                                       # (ow, w)
    if kind == "max":
        neg = np.asarray(-np.inf, aval_of(x).dtype)
        t = M.reduce_max(M.where(A.reshape(r, (1,) + tuple(aval_of(r).shape) + (1, 1)), A.expand_dims(x, 1), neg),
                         axis=2)                                             # (n, oh, w, ch)
        return M.reduce_max(M.where(A.reshape(c, (1, 1) + tuple(aval_of(c).shape) + (1,)), A.expand_dims(t, 2),
                                    neg), axis=3)
    dt = aval_of(x).dtype
    rn = M.cast(r, dt) / M.reduce_sum(M.cast(r, dt), axis=1, keepdims=True)
    cn = M.cast(c, dt) / M.reduce_sum(M.cast(c, dt), axis=1, keepdims=True)
    return A.transpose(M.tensordot(M.tensordot(x, rn, [[1], [1]]), cn, [[1], [1]]), (0, 2, 3, 1))


def _fractional_pool(name, kind, value, pooling_ratio, pseudo_random, overlapping, seed):
    x = _tensor(value)
    if len(aval_of(x).shape) != 4:
        raise InvalidArgumentError(f"{name}: input must be 4-dimensional (batch, height, width, channels), got shape "
                                   f"{tuple(aval_of(x).shape)}")
    ratio = [float(v) for v in (pooling_ratio if isinstance(pooling_ratio, (list, tuple)) else [pooling_ratio])]
    if len(ratio) == 1:
        ratio = [1.0, ratio[0], ratio[0], 1.0]
    elif len(ratio) == 2:
        ratio = [1.0] + ratio + [1.0]
    if len(ratio) != 4:
        raise ValueError(f"{name}: pooling_ratio must be a float or a list of 1, 2 or 4 floats, got {pooling_ratio}")
    if min(ratio) < 1.0:        # TF 2.21: ValueError from the Python wrapper
        raise ValueError(f"{name}: `pooling_ratio` should be >= 1.0 but got {pooling_ratio}")
    if ratio[0] != 1.0 or ratio[3] != 1.0:
        raise UnimplementedError(f"{name}: pooling_ratio must be [1, row, col, 1]: pooling along the batch or depth "
                                 f"dimension is not yet supported, got {pooling_ratio}")
    if aval_of(x).dtype.kind not in "fiu":
        raise InvalidArgumentTypeError(f"{name}: value must be a real tensor, got {aval_of(x).dtype}")
    _, h, w, _ = aval_of(x).shape
    oh, ow = int(h / ratio[1]), int(w / ratio[2])
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(f"{name}: outputsize must be positive: the input {h}x{w} pooled by "
                                   f"{ratio[1:3]} leaves {oh}x{ow}")
    sd = None if not seed else seed
    rows = _fractional_sequence(h, oh, pseudo_random, sd)
    cols = _fractional_sequence(w, ow, pseudo_random, sd)
    return _fractional_pool_with(x, rows, cols, overlapping, kind), rows, cols


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None):
    """tf.nn.fractional_max_pool (Graham, 2015): (output, row_pooling_sequence, col_pooling_sequence).
    The sequences are TF's law drawn from tapeflow's stream (see _fractional_sequence): a nonzero ``seed``
    makes them repeat under tf.random.set_seed, not equal TF's. Windows are one-hot memberships, so it
    traces and has gradients."""
    return _fractional_pool("fractional_max_pool", "max", value, pooling_ratio, pseudo_random, overlapping, seed)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None):
    """tf.nn.fractional_avg_pool: as fractional_max_pool, the window means."""
    return _fractional_pool("fractional_avg_pool", "avg", value, pooling_ratio, pseudo_random, overlapping, seed)


def _sizes(name, v, n=4):
    v = v.numpy() if isinstance(v, Tensor) else v
    out = tuple(int(s) for s in np.asarray(v).reshape(-1))
    if len(out) != n:
        raise InvalidArgumentError(f"{name}: sizes must be a {n}-element vector, got {list(out)}")
    return out


def _grad_conv_args(name, x_hw, k_hw, strides, padding, data_format, dilations):
    _check_format(name, data_format, allowed=("NHWC",))
    if padding == "EXPLICIT":
        raise NotImplementedError(f"{name}: padding='EXPLICIT' is not supported in tapeflow; pass 'SAME', 'VALID' "
                                  f"or explicit pairs as the padding argument")
    st = _pair(name, "strides", strides)
    dl = _pair(name, "dilations", dilations)
    return st, dl, _padding(name, padding, x_hw, k_hw, st, dl)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                              explicit_paddings=(), data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """tf.conv2d_backprop_filter_v2: the gradient of conv2d(input, filter) w.r.t. the filter for the
    output gradient ``out_backprop`` (``filter`` gives only its shape) -- conv2d's own vjp primitive."""
    x, w, g = _nhwc("conv2d_backprop_filter_v2", input), _tensor(filter), _tensor(out_backprop)
    ws = tuple(aval_of(w).shape)
    st, dl, pad = _grad_conv_args("conv2d_backprop_filter_v2", _spatial(x), ws[:2], strides, padding, data_format,
                                  dilations)
    c = aval_of(x).shape[3]
    if len(ws) != 4 or ws[2] == 0 or c % ws[2]:
        raise InvalidArgumentError(f"conv2d_backprop_filter_v2: filter {ws} must be (kh, kw, in_channels, "
                                   f"out_channels) with in_channels dividing the input's {c}")
    return bind(P.conv2d_filter_grad_p, x, g, filter_hw=ws[:2], strides=st, padding=pad, dilations=dl,
                groups=c // ws[2])


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                             explicit_paddings=(), data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """tf.conv2d_backprop_input_v2: the gradient of conv2d(input, filter) w.r.t. the input (``input``
    gives only its shape) -- conv2d_transpose's primitive."""
    x, w, g = _nhwc("conv2d_backprop_input_v2", input), _tensor(filter), _tensor(out_backprop)
    ws = tuple(aval_of(w).shape)
    st, dl, pad = _grad_conv_args("conv2d_backprop_input_v2", _spatial(x), ws[:2], strides, padding, data_format,
                                  dilations)
    c = aval_of(x).shape[3]
    if len(ws) != 4 or ws[2] == 0 or c % ws[2]:
        raise InvalidArgumentError(f"conv2d_backprop_input_v2: filter {ws} must be (kh, kw, in_channels, out_channels) "
                                   f"with in_channels dividing the input's {c}")
    return bind(P.conv2d_input_grad_p, g, w, input_hw=tuple(_spatial(x)), strides=st, padding=pad, dilations=dl,
                groups=c // ws[2])


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                     data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """tf.nn.depthwise_conv2d_backprop_filter: depthwise_conv2d's filter gradient, shape filter_sizes
    (kh, kw, in_channels, multiplier): the grouped conv2d filter gradient, reshaped."""
    fn = "depthwise_conv2d_backprop_filter"
    x, g = _nhwc(fn, input), _tensor(out_backprop)
    kh, kw, c, m = _sizes(fn, filter_sizes)
    st, dl, pad = _grad_conv_args(fn, _spatial(x), (kh, kw), strides, padding, data_format, dilations)
    if aval_of(x).shape[3] != c:
        raise InvalidArgumentError(f"{fn}: input depth {aval_of(x).shape[3]} != filter_sizes' in_channels {c}")
    gw = bind(P.conv2d_filter_grad_p, x, g, filter_hw=(kh, kw), strides=st, padding=pad, dilations=dl, groups=c)
    return A.reshape(gw, (kh, kw, c, m))


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                    data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """tf.nn.depthwise_conv2d_backprop_input: depthwise_conv2d's input gradient, shape input_sizes."""
    fn = "depthwise_conv2d_backprop_input"
    w, g = _tensor(filter), _tensor(out_backprop)
    n, h, wd, c = _sizes(fn, input_sizes)
    ws = tuple(aval_of(w).shape)
    if len(ws) != 4 or ws[2] != c:
        raise InvalidArgumentError(f"{fn}: filter {ws} must be (kh, kw, in_channels={c}, multiplier)")
    st, dl, pad = _grad_conv_args(fn, (h, wd), ws[:2], strides, padding, data_format, dilations)
    w = A.reshape(w, (ws[0], ws[1], 1, ws[2] * ws[3]))
    return bind(P.conv2d_input_grad_p, g, w, input_hw=(h, wd), strides=st, padding=pad, dilations=dl, groups=c)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """tf.nn.atrous_conv2d_transpose: conv2d_transpose with stride 1 and dilation ``rate`` (TF computes
    it through space_to_batch; the map is the same)."""
    if int(rate) < 1:
        raise ValueError(f"atrous_conv2d_transpose: rate {rate} cannot be less than one")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"atrous_conv2d_transpose: padding must be either VALID or SAME: {padding}")
    return conv2d_transpose(value, filters, output_shape, 1, padding=padding, dilations=int(rate))


def conv(input, filter, strides, padding, explicit_paddings=(), data_format="CHANNELS_LAST",  # noqa: A002
         dilations=(), batch_dims=1, groups=1, name=None):
    """tf.conv (TF's raw Conv op): a 2-D or 3-D channels-last convolution,
    strides/dilations as N + 2 lists; here conv1d/2d/3d through tf.nn.convolution (batch_dims=1 only;
    grouped when the filter's in_channels divide the input's, ``groups`` then must agree)."""
    if data_format not in ("CHANNELS_LAST", "NHWC", "NDHWC", "NWC"):
        raise NotImplementedError(f"tf.conv: data_format={data_format!r}: tapeflow's convolutions are channels-last "
                                  f"only")
    if int(batch_dims) != 1:
        raise NotImplementedError(f"tf.conv: batch_dims={batch_dims}: only one batch dimension is supported")
    x, w = _tensor(input), _tensor(filter)
    ws, c = aval_of(w).shape, aval_of(x).shape[-1]
    if len(aval_of(x).shape) not in (4, 5):
        raise InvalidArgumentError(f"tf.conv: The input must have 2 or 3 spatial dimensions but got "
                                   f"{len(aval_of(x).shape) - 2} (input shape {tuple(aval_of(x).shape)})")
    if c is not None and ws[-2] and c // ws[-2] != int(groups):
        raise InvalidArgumentError(f"tf.conv: groups={groups} but the input's {c} channels and the filter's "
                                   f"in_channels {ws[-2]} make {c // ws[-2]} groups")
    if padding == "EXPLICIT":
        padding = [list(p) for p in np.asarray(explicit_paddings, np.int64).reshape(-1, 2)]
    return convolution(x, w, strides=list(strides), padding=padding,
                       dilations=list(dilations) if len(dilations) else None)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """tf.nn.with_space_to_batch: ``op(converted, num_spatial_dims, "VALID")`` on the input moved by
    space_to_batch_nd by ``dilation_rate`` (paddings as TF's: SAME pads the dilated filter's
    extent, ``filter_shape`` required), then batch_to_space with the crops; rate 1 calls
    ``op(input, num_spatial_dims, padding)`` directly."""
    from .special_ops import batch_to_space, required_space_to_batch_paddings, space_to_batch_nd
    x = _tensor(input)
    rate = np.asarray(dilation_rate.numpy() if isinstance(dilation_rate, Tensor) else dilation_rate,
                      np.int64).reshape(-1)
    nsd = len(rate)
    if (rate < 1).any():
        raise ValueError(f"with_space_to_batch: dilation_rate must be positive, got {rate.tolist()}")
    if spatial_dims is None:
        first = 2 if data_format is not None and data_format.startswith("NC") else 1
        spatial_dims = list(range(first, first + nsd))
    spatial_dims = [int(d) for d in spatial_dims]
    if len(spatial_dims) != nsd or sorted(spatial_dims) != spatial_dims or len(set(spatial_dims)) != nsd:
        raise ValueError(f"with_space_to_batch: spatial_dims must be {nsd} increasing dims, got {spatial_dims}")
    if (rate == 1).all():
        return op(x, nsd, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("with_space_to_batch: filter_shape must be specified for SAME padding")
        fs = np.asarray(filter_shape.numpy() if isinstance(filter_shape, Tensor) else filter_shape, np.int64)
        total = fs + (fs - 1) * (rate - 1) - 1
        base = np.stack([total // 2, total - total // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros((nsd, 2), np.int64)
    else:
        raise ValueError(f"with_space_to_batch: Invalid padding method {padding!r}")
    shape = tuple(aval_of(x).shape)
    in_spatial = [shape[d] for d in spatial_dims]
    paddings, crops = required_space_to_batch_paddings(in_spatial, rate, base_paddings=base)
    paddings, crops = np.asarray(paddings.numpy()), np.asarray(crops.numpy())
    # dims between the first spatial one and the others ride along with block 1 and no padding (TF's adjust)
    lo = spatial_dims[0]
    span = spatial_dims[-1] - lo + 1
    block, pads, crps = np.ones(span, np.int64), np.zeros((span, 2), np.int64), np.zeros((span, 2), np.int64)
    for k, d in enumerate(spatial_dims):
        block[d - lo], pads[d - lo], crps[d - lo] = rate[k], paddings[k], crops[k]
    if lo != 1:
        raise NotImplementedError(f"with_space_to_batch: spatial_dims starting at {lo}: tapeflow's space_to_batch_nd "
                                  f"takes the spatial dims right after the batch (channels-last inputs)")
    converted = space_to_batch_nd(x, block, pads)
    return batch_to_space(op(converted, nsd, "VALID"), block, crps)


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """tf.extract_volume_patches: the (kp, kr, kc) patches of a 5-D NDHWC input at the strides, each
    flattened (plane, row, col, depth) into the last dimension, SAME padding with zeros (TF's). Composed
    of strided slices, so differentiable and traceable."""
    fn = "extract_volume_patches"
    x = _tensor(input)
    s = tuple(aval_of(x).shape)
    if len(s) != 5:
        raise InvalidArgumentError(f"{fn}: input must be 5-dimensional (batch, planes, rows, cols, depth), got {s}")
    k = _sizes(fn, ksizes, 5)
    st = _sizes(fn, strides, 5)
    if k[0] != 1 or k[4] != 1 or st[0] != 1 or st[4] != 1:
        raise UnimplementedError(f"{fn}: Only supports ksizes and strides across space: ksizes {list(k)}, "
                                 f"strides {list(st)} must be 1 at batch and depth")
    if min(k) < 1 or min(st) < 1:
        raise InvalidArgumentError(f"{fn}: ksizes and strides must be positive, got {list(k)}, {list(st)}")
    k, st = k[1:4], st[1:4]
    pads = _padding(fn, padding, s[1:4], k, st, (1, 1, 1))
    xp = A.pad(x, [[0, 0]] + [list(p) for p in pads] + [[0, 0]]) if any(sum(p) for p in pads) else x
    out = [(s[1 + i] + sum(pads[i]) - k[i]) // st[i] + 1 for i in range(3)]
    if min(out) <= 0:
        return A.zeros((s[0], *[max(o, 0) for o in out], int(np.prod(k)) * s[4]), aval_of(x).dtype)
    taps = []
    for a in range(k[0]):
        for b in range(k[1]):
            for c in range(k[2]):
                taps.append(xp[:, a:a + (out[0] - 1) * st[0] + 1:st[0], b:b + (out[1] - 1) * st[1] + 1:st[1],
                               c:c + (out[2] - 1) * st[2] + 1:st[2], :])
    return A.concat(taps, axis=-1)


# -- wave 21 (nn21): isotonic regression, approximate top-k -----------------------------------------------

#: TF's result namedtuple
IsotonicRegression = collections.namedtuple("IsotonicRegression", ["output", "segments"])


def _pav_np(x, decreasing, out_dtype):
    """Pool-adjacent-violators per row of 2-D ``x`` (TF's kernel: increasing is the decreasing problem
    of -x; a segment merges into the previous one while the previous mean < its mean -- strictly,
    so equal neighbours stay apart and NaN never merges): (means, int32 segment ids)."""
    x = np.asarray(x, out_dtype)
    out = np.empty_like(x)
    seg = np.empty(x.shape, np.int32)
    for r in range(x.shape[0]):
        row = x[r] if decreasing else -x[r]
        blocks = []                                   # [sum, count, start]
        for i, v in enumerate(row):
            blocks.append([v, 1, i])
            while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
                s, c, _ = blocks.pop()
                blocks[-1][0] += s
                blocks[-1][1] += c
        for k, (s, c, start) in enumerate(blocks):
            m = s / out_dtype.type(c)
            out[r, start:start + c] = m if decreasing else -m
            seg[r, start:start + c] = k
    return out, seg


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """tf.nn.isotonic_regression: per vector along ``axis``, the non-increasing (``decreasing``) or
    non-decreasing sequence nearest in least squares (pool-adjacent-violators, TF's merge rule), and
    the int32 segment ids. Dtypes as TF: floats stay, int8/int16 -> float32, other ints -> float64.
    The solve is NumPy (one numpy_function when traced); the output's gradient is TF's: each
    position gets the mean of its segment's incoming gradient (the output is each segment's mean)."""
    from ..core.state import STATE
    x = _tensor(inputs)
    dt = np.dtype(aval_of(x).dtype)
    if dt.kind == "f":
        odt = dt
    elif dt.kind in "iu":
        odt = np.dtype(np.float32 if dt.itemsize <= 2 else np.float64)
    else:
        raise InvalidArgumentTypeError(f"isotonic_regression: inputs must be real numbers, got {dt}")
    rank = len(aval_of(x).shape)
    if rank == 0:
        raise InvalidArgumentError("isotonic_regression: inputs must have rank >= 1, got a scalar")
    ax = axis % rank
    perm = [d for d in range(rank) if d != ax] + [ax]
    inv = list(np.argsort(perm))
    xt = A.transpose(M.cast(x, odt), perm)
    shp = tuple(aval_of(xt).shape)
    flat = A.reshape(xt, (-1, shp[-1]))

    def solve(a):
        return _pav_np(a, bool(decreasing), odt)
    if STATE.trace is None:
        y, seg = (Tensor(v) for v in solve(flat.numpy()))
    else:
        from ..compiler.function import TensorSpec
        from .script_ops import numpy_function
        y, seg = numpy_function(solve, [flat], [TensorSpec(tuple(aval_of(flat).shape), odt),
                                                TensorSpec(tuple(aval_of(flat).shape), np.int32)])
    # the value is the solve's; the gradient the segment-mean map's (a - stop_gradient(a) is exactly 0)
    same = M.equal(A.expand_dims(seg, 2), A.expand_dims(seg, 1))
    # where, not a 0/1 product: a NaN in another segment must not leak into this one (0 * NaN)
    avg = M.reduce_sum(M.where(same, A.expand_dims(flat, 1), np.zeros((), odt)), axis=2) / \
        M.reduce_sum(M.cast(same, odt), axis=2)
    y = y + (avg - M.stop_gradient(avg))
    return IsotonicRegression(A.transpose(A.reshape(y, shp), inv), A.transpose(A.reshape(seg, shp), inv))


#: TF's result namedtuple
ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,  # noqa: A002
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """tf.approx_top_k: on CPU TF computes the exact top k (TPU's approximation is not used): top_k along
    ``reduction_dimension`` (ties: lower index first; NaN ranked first, as TF's kernel), the smallest k when
    not ``is_max_k``; int32 indices. TF's CPU kernel takes reduction_dimension=-1 and is_max_k only
    (NotFoundError otherwise); here any dimension and the min too. Float32 (and float16) as TF."""
    x = _tensor(input)
    dt = np.dtype(aval_of(x).dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float16)):
        raise InvalidArgumentError(f"approx_top_k: Value for attr 'T' of {_dt_name(dt)} is not in the list of allowed "
                                   f"values: half, bfloat16, float (cast the input to float32)")
    shape = tuple(aval_of(x).shape)
    if not shape:
        raise InvalidArgumentError("approx_top_k: input must have rank >= 1, got a scalar")
    ax = int(reduction_dimension) % len(shape)
    k = int(k)
    if shape[ax] is not None and k > shape[ax]:
        raise InvalidArgumentError(f"approx_top_k: input must have at least k columns. Had {shape[ax]}, needed {k}")
    if k < 0:
        raise InvalidArgumentError(f"approx_top_k: k must be >= 0, got {k}")
    xt = A.transpose(x, [d for d in range(len(shape)) if d != ax] + [ax]) if ax != len(shape) - 1 else x
    # TF's CPU kernel ranks NaN above every number (its TopK); tapeflow's top_k puts NaN last, so rank a
    # key with NaN as +inf and gather the values back (approx_min_k: NaN first too)
    key = xt if is_max_k else M.negative(xt)
    key = M.where(M.is_nan(key), np.asarray(np.inf, dt), key)
    _, idx = A.top_k(key, k)
    vals = A.take_along_axis(xt, idx, -1)
    if ax != len(shape) - 1:
        back = list(range(ax)) + [len(shape) - 1] + list(range(ax, len(shape) - 1))
        vals, idx = A.transpose(vals, back), A.transpose(idx, back)
    return ApproxTopK(vals, M.cast(idx, np.int32))


def _dt_name(dt):
    from ..core import dtypes as _dtypes
    return _dtypes.as_dtype(dt).name


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """tf.math.approx_max_k / tf.nn.approx_max_k: approx_top_k with is_max_k=True (exact on CPU, as TF)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                        aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """tf.math.approx_min_k / tf.nn.approx_min_k: the k smallest (exact; TF 2.21's CPU has no kernel for it)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                        aggregate_to_topk)
