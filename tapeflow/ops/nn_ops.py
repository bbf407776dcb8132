"""Activations, softmax and losses' math, all composed from primitives.
Each stable form is chosen so that neither the value nor the gradient
overflows; comments say where."""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape
from ..core.primitive import aval_of, bind
from ..core.primitives import conv as P
from ..core.tensor import Tensor, TensorShape, convert_to_tensor
from .._distribute_context import current as _dist_current
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from . import array_ops as A
from . import math_ops as M


def relu(features, name=None):
    # maximum's gradient sends ties to the second argument, so relu'(0) = 0 (as TF).
    return M.maximum(features, 0)


def relu6(features, name=None):
    return M.minimum(M.maximum(features, 0), 6)


def leaky_relu(features, alpha=0.2, name=None):
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
    return M.divide(features, M.add(M.abs(features), 1))


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
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = noise_shape or aval_of(x).shape
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
            if any(n is None for n in in_hw):
                raise ValueError(f"{name}: padding='SAME' needs known height and width, got {in_hw}")
            return tuple(P.same_padding(n, k, s, d) for n, k, s, d in zip(in_hw, k_hw, strides, dilations))
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


def _transpose_output_shape(name, output_shape, ws, layout):
    """A transposed convolution's output_shape as a tuple: the batch may be None (it comes from
    the input; unknown while tracing), the rest must be given, and the channels must be the ones
    the filter ``ws`` (spatial..., out_channels, in_channels) makes."""
    if isinstance(output_shape, Tensor):
        output_shape = output_shape.numpy().tolist()
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
    out = _transpose_output_shape("conv2d_transpose", output_shape, ws, "(batch, height, width, channels)")
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
        n = aval_of(loss).shape[0] * _replicas("compute_average_loss")
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
    ws = aval_of(w).shape
    if len(ws) != 5:
        raise ValueError(f"conv3d_transpose: filters must have rank 5 (kd, kh, kw, out_channels, in_channels), "
                         f"got {tuple(ws)}")
    out = _transpose_output_shape("conv3d_transpose", output_shape, ws, "(batch, depth, height, width, channels)")
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
