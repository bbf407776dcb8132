"""keras.ops names added in wave 21 (``tapeflow.keras.ops`` re-exports them): ``histogram``, the
NaN-skipping quantiles, ``correlate``, the window functions, ``extract_sequences``, ``unfold`` /
``fold``, adaptive pooling, ``view``, ``lu_factor``, ``jvp`` and ``rearrange``.

Each is Keras 3.15's TensorFlow-backend definition (``keras/src/backend/tensorflow``) composed of
tapeflow's ops, so it traces under ``tapeflow.function`` and differentiates; no new primitive.
Where Keras' own code is shape-dynamic (``boolean_mask`` in ``histogram``, ``map_fn`` over rows
in ``nanquantile``) the composition here keeps static shapes instead (a mask-weighted one-hot sum;
a sort with NaNs pushed last and per-row counts), which gives the same values and traces without
an unknown dimension. Checked against Keras on TF 2.21: tests/tf_reference/make_keras21_reference.py.
"""
from __future__ import annotations

import builtins
import re

import numpy as np

from .. import errors as _errors
from ..core.tensor import Tensor, convert_to_tensor as _tf_convert
from ..ops import array_ops as _A
from ..ops import math_ops as _M
from . import ops as _K


def _static_int(x, what):
    """A window length: a Python int, or a concrete (eager) integer tensor."""
    if isinstance(x, Tensor):
        try:
            x = x.numpy()
        except Exception as e:  # a traced value
            raise ValueError(f"keras.ops.{what}: the window length must be a Python int (or a concrete "
                             f"tensor) in tapeflow; got a traced tensor") from e
    return int(np.asarray(x).reshape(()))


# --- histogram ----------------------------------------------------------------------------

def histogram(x, bins=10, range=None):  # noqa: A002
    """Keras' histogram: ``bins`` equal bins between ``range`` (default: min and max of ``x``),
    counts in ``x``'s dtype, edges ``linspace`` in ``x``'s dtype. A value lands in bin
    ``searchsorted(edges[1:-1], v, 'right')`` (the last bin is closed); values outside the
    range are not counted. Counted as a masked one-hot sum (static shapes; Keras masks first)."""
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise TypeError(f"Argument `bins` must be of type `int`. Received: bins={bins}")
    if bins < 0:
        raise ValueError(f"Argument `bins` should be a non-negative integer. Received: bins={bins}")
    if range:
        if len(range) < 2 or not isinstance(range, tuple):
            raise ValueError(f"Argument `range` must be a tuple of two elements. Received: range={range}")
        if range[1] < range[0]:
            raise ValueError(f"The second element of `range` must be greater than the first. "
                             f"Received: range={range}")
    x = _K._t(x)
    if x.aval.ndim > 1:
        raise ValueError(f"Input tensor must be 1-dimensional. Received: input.shape={tuple(x.aval.shape)}")
    dt = x.aval.dtype
    if range is None:
        lo, hi = _M.reduce_min(x), _M.reduce_max(x)
    else:
        lo, hi = (_tf_convert(np.asarray(v, np.float32 if dt.kind != "f" else dt)) for v in range[:2])
    # TF's LinSpace kernel (start + i * step, the last edge exactly stop) on tensors, since the
    # bounds are values (tapeflow's linspace takes constants); then cast to x's dtype as Keras
    # does (an int x truncates its float64 edges)
    lin_dt = dt if dt.kind == "f" else np.dtype(np.float64)
    lo_f, hi_f = _M.cast(lo, lin_dt), _M.cast(hi, lin_dt)
    step = (hi_f - lo_f) / np.asarray(builtins.max(bins, 1), lin_dt)
    inner = lo_f + step * _tf_convert(np.arange(bins, dtype=lin_dt))
    edges = _M.cast(_A.concat([inner, _A.reshape(hi_f, [1])], axis=0), dt)
    inside = _M.logical_and(_M.greater_equal(x, _M.cast(lo, dt)), _M.less_equal(x, _M.cast(hi, dt)))
    idx = _A.searchsorted(edges[1:-1], x, side="right", out_type=np.int32)
    onehot = _A.one_hot(idx, bins, dtype=dt)
    counts = _M.reduce_sum(onehot * _A.expand_dims(_M.cast(inside, dt), 1), axis=0)
    return counts, edges


# --- NaN-skipping quantiles ---------------------------------------------------------------

def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """Keras' nanquantile: the quantile of each slice's non-NaN values (NaN where all are NaN),
    q converted to floatx (float32) as Keras does, the interpolation of Keras' ``_quantile``
    (the tfp.stats.percentile formulas, positions in float64). Keras maps a quantile over the
    rows; here the rows are sorted once with NaNs replaced by +inf (so the valid values come
    first) and each row's position uses its own count of valid values."""
    if method not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"Invalid value for argument `method`. Received: method={method}. Expected one of "
                         f"'linear', 'lower', 'higher', 'midpoint', 'nearest'")
    x = _K._floating(x)
    dt = x.aval.dtype
    nd = x.aval.ndim
    qs = np.asarray(_K._tnp._val(q), _K._FLOATX).astype(np.float64)
    if axis is None:
        axes = list(builtins.range(nd))
    else:
        axes = sorted(a % nd for a in ((axis,) if isinstance(axis, int) else axis))
    others = [i for i in builtins.range(nd) if i not in axes]
    other_shape = [x.aval.shape[i] for i in others]
    y = _A.reshape(_A.transpose(x, others + axes) if nd else x,
                   other_shape + [int(np.prod([x.aval.shape[i] for i in axes]))])
    nan = _M.is_nan(y)
    ys = _A.sort(_M.where(nan, _A.ones_like(y) * np.asarray(np.inf, dt), y), axis=-1)
    n = y.aval.shape[-1]
    cnt = _M.reduce_sum(_M.cast(_M.logical_not(nan), np.int32), axis=-1, keepdims=True)   # (..., 1)
    d = _M.cast(cnt, np.float64)
    qf = _tf_convert(qs.reshape(-1))                                                      # (Q,)
    exact = (d - 1.0) * qf                                                                # (..., Q)

    def index(v):
        return _M.cast(_M.minimum(_M.maximum(v, 0.0), np.float64(builtins.max(n - 1, 0))), np.int32)

    def take(i):
        return _A.take_along_axis(ys, i, axis=-1)
    if method == "lower":
        out = take(index(_M.floor(exact)))
    elif method == "higher":
        out = take(index(_M.ceil(exact)))
    elif method == "nearest":
        out = take(index(_M.round(exact)))
    elif method == "midpoint":
        out = 0.5 * (take(index(_M.floor(exact))) + take(index(_M.ceil(exact))))
    else:
        hi = index(_M.ceil(exact))
        lo = _M.maximum(hi - 1, 0)
        hi = _M.minimum(lo + 1, _M.cast(_M.maximum(cnt - 1, 0), np.int32))
        frac = _M.cast(_M.cast(hi, np.float64) - exact, dt)
        out = take(hi) * (1 - frac) + take(lo) * frac
    out = _M.where(_M.equal(cnt, 0), _A.ones_like(out) * np.asarray(np.nan, dt), out)    # (..., Q)
    if qs.ndim == 0:
        out = _A.reshape(out, other_shape)
    else:
        out = _A.reshape(_A.transpose(out, [len(other_shape)] + list(builtins.range(len(other_shape)))),
                         list(qs.shape) + other_shape)
    if keepdims:
        if axis is None:
            out = _A.reshape(out, list(qs.shape) + [1] * nd)
        else:
            for a in axes:
                out = _A.expand_dims(out, a + qs.ndim)
    return out


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """Keras: q converted to floatx, divided by 100 in it."""
    q = np.asarray(_K._tnp._val(q), _K._FLOATX) / np.float32(100.0)
    return nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)


def nanmedian(x, axis=None, keepdims=False):
    if axis == () or axis == []:
        return _K._t(x)
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


# --- correlate ----------------------------------------------------------------------------

def _frames(x, length, step):
    """The ``(n - length) // step + 1`` windows of the last axis: (..., frames, length)."""
    n = x.aval.shape[-1]
    f = (n - length) // step + 1 if n >= length else 0
    idx = (np.arange(f)[:, None] * step + np.arange(length)[None, :]).astype(np.int32)
    return _A.gather(x, _tf_convert(idx.reshape(f, length)), axis=x.aval.ndim - 1)


def correlate(x1, x2, mode="valid"):
    """NumPy's correlate of two 1-D tensors (Keras: int64 operands give float64, other integer and
    float32 ones float32): ``out[k] = sum_j x1[k + j] * x2[j]`` over the windows of ``x1``."""
    a, b = _K._t(x1), _K._t(x2)
    dt = _K.result_type(a, b)
    dt = np.dtype(np.float64) if dt == np.int64 else (dt if dt in (np.float16, np.float64) else _K._FLOATX)
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"Invalid mode: '{mode}'. Mode must be one of: 'full', 'same', 'valid'.")
    if a.aval.ndim != 1 or b.aval.ndim != 1:
        # (Keras 3.15 on TF: an InvalidArgumentError from its reshape to (1, n, 1))
        raise _errors.InvalidArgumentError(
            None, None, f"keras.ops.correlate: x1 and x2 must be 1-D, got shapes {tuple(a.aval.shape)} and "
                        f"{tuple(b.aval.shape)}")
    a, b = _M.cast(a, dt), _M.cast(b, dt)
    n, m = a.aval.shape[0], b.aval.shape[0]
    if mode == "valid":
        if n < m:   # (TF's conv1d VALID with a filter longer than the input)
            raise _errors.InvalidArgumentError(
                None, None, f"keras.ops.correlate(mode='valid'): x2 (length {m}) is longer than x1 (length {n})")
        return _M.reduce_sum(_frames(a, m, 1) * b, axis=-1)
    pad = builtins.max(m - 1, 0)
    full = _M.reduce_sum(_frames(_A.pad(a, [[pad, pad]]), m, 1) * b, axis=-1)
    if mode == "full":
        return full
    out_len = builtins.max(n, m)
    start = (n + m - 1 - out_len) // 2
    return full[start:start + out_len]


# --- sequences, unfold / fold -------------------------------------------------------------

def extract_sequences(x, sequence_length, sequence_stride):
    """tf.signal.frame on the last axis (pad_end=False): (..., frames, sequence_length)."""
    return _frames(_K._t(x), int(sequence_length), int(sequence_stride))


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's unfold (im2col) on NCHW: (N, C*kH*kW, L), Keras' channel-major block order. One
    strided slice per kernel position (kH*kW of them), stacked."""
    x = _K._t(x)
    if x.aval.ndim != 4:
        raise ValueError(f"keras.ops.unfold: the input must be 4-D (N, C, H, W), got shape {tuple(x.aval.shape)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair(v) for v in (kernel_size, dilation, padding, stride))
    if ph or pw:
        x = _A.pad(x, [[0, 0], [0, 0], [ph, ph], [pw, pw]])
    N, C, H, W = x.aval.shape
    nh, nw = (H - dh * (kh - 1) - 1) // sh + 1, (W - dw * (kw - 1) - 1) // sw + 1
    blocks = [x[:, :, i * dh:i * dh + sh * (nh - 1) + 1:sh, j * dw:j * dw + sw * (nw - 1) + 1:sw]
              for i in builtins.range(kh) for j in builtins.range(kw)]
    out = _A.stack(blocks, axis=2)                      # (N, C, kH*kW, nH, nW)
    return _A.reshape(out, [N, C * kh * kw, nh * nw])


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's fold (col2im), unfold's adjoint: each block added back at its place (overlaps
    sum). Each kernel position's (nH, nW) grid is spread to its stride with zero padding and
    shifted into place with a pad, then the kH*kW grids are summed."""
    x = _K._t(x)
    (kh, kw), (oh, ow), (dh, dw), (ph, pw), (sh, sw) = (
        _pair(v) for v in (kernel_size, output_size, dilation, padding, stride))
    if x.aval.ndim != 3 or x.aval.shape[1] % (kh * kw):
        raise ValueError(f"keras.ops.fold: the input must be (N, C*kH*kW, L) with kH*kW={kh * kw}, got shape "
                         f"{tuple(x.aval.shape)}")
    N, ckk, L = x.aval.shape
    C = ckk // (kh * kw)
    nh, nw = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if nh * nw != L:
        raise ValueError(f"keras.ops.fold: {L} blocks do not match output_size={(oh, ow)}, kernel_size={(kh, kw)} "
                         f"(expected {nh}x{nw} = {nh * nw})")
    x = _A.reshape(x, [N, C, kh, kw, nh, nw])
    H, W = oh + 2 * ph, ow + 2 * pw
    total = None
    for i in builtins.range(kh):
        for j in builtins.range(kw):
            g = x[:, :, i, j]                                            # (N, C, nH, nW)
            if sh > 1 or sw > 1:   # spread: (nH, 1, nW, 1) padded to (nH, sH, nW, sW), cropped
                g = _A.pad(_A.reshape(g, [N, C, nh, 1, nw, 1]), [[0, 0], [0, 0], [0, 0], [0, sh - 1], [0, 0], [0, sw - 1]])
                g = _A.reshape(g, [N, C, nh * sh, nw * sw])[:, :, :sh * (nh - 1) + 1, :sw * (nw - 1) + 1]
            top, left = i * dh, j * dw
            hh, ww = g.aval.shape[2], g.aval.shape[3]
            g = _A.pad(g, [[0, 0], [0, 0], [top, H - top - hh], [left, W - left - ww]])
            total = g if total is None else total + g
    return total[:, :, ph:ph + oh, pw:pw + ow]


# --- adaptive pooling ---------------------------------------------------------------------

def _adaptive(inputs, output_size, data_format, reduce, what):
    x = _K._floating(inputs)
    nd = x.aval.ndim - 2
    if nd not in (1, 2, 3):
        raise ValueError(f"{what} supports 1D, 2D, or 3D inputs only.")
    fmt = _K._data_format(data_format)
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format}")
    sizes = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"{what}: output_size {output_size!r} for {nd} spatial dimensions")
    first = 2 if fmt == "channels_first" else 1
    # PyTorch's windows: output i covers [floor(i L / out), ceil((i + 1) L / out)). Average and max
    # over such a box are separable, so one spatial axis at a time.
    for k, out in enumerate(sizes):
        ax = first + k
        L = x.aval.shape[ax]
        parts = []
        for i in builtins.range(out):
            s, e = (i * L) // out, -((-(i + 1) * L) // out)
            sl = [slice(None)] * x.aval.ndim
            sl[ax] = slice(s, e)
            parts.append(reduce(x[tuple(sl)], axis=ax, keepdims=True))
        x = _A.concat(parts, axis=ax)
    return x


def adaptive_average_pool(inputs, output_size, data_format=None):
    """PyTorch's adaptive average pooling (Keras 3): output i averages input
    ``[floor(i L / out), ceil((i + 1) L / out))`` on each spatial axis."""
    return _adaptive(inputs, output_size, data_format, _M.reduce_mean, "adaptive_average_pool")


def adaptive_max_pool(inputs, output_size, data_format=None):
    return _adaptive(inputs, output_size, data_format, _M.reduce_max, "adaptive_max_pool")


# --- view, lu_factor ----------------------------------------------------------------------

def view(x, dtype=None):
    """NumPy's ``view``: the same bytes as another dtype along the last axis (tf.bitcast plus the
    reshapes Keras does). No gradient (as TF's bitcast)."""
    from ..core import dtypes as _dt
    from ..ops.special_ops import bitcast
    x = _K._t(x)
    old = x.aval.dtype
    new = np.dtype(_dt.np_dtype(dtype)) if dtype is not None else old
    shape = list(x.aval.shape)
    last = shape[-1] if shape else -1
    if (last == -1 and old.itemsize != new.itemsize) or (last * old.itemsize % new.itemsize != 0):
        raise ValueError(f"Cannot view array of shape {tuple(shape)} and dtype {old.name} as dtype {new.name} "
                         f"because the total number of bytes is not divisible by the new itemsize.")
    if old.itemsize == new.itemsize:
        return x if old == new else bitcast(x, new)
    if old.itemsize > new.itemsize:
        out = bitcast(x, new)
        return _A.reshape(out, shape[:-1] + [last * (old.itemsize // new.itemsize)])
    ratio = new.itemsize // old.itemsize
    if last % ratio:
        raise ValueError(f"Cannot view dtype. Last dimension size ({last}) must be divisible by the ratio of "
                         f"new/old item sizes ({ratio}).")
    return bitcast(_A.reshape(x, shape[:-1] + [last // ratio, ratio]), new)


def lu_factor(x):
    """``(lu, pivots)``: tf.linalg.lu's packed factors and the inverse of its row permutation
    (Keras' TF backend). The inverse is an argsort of the permutation, so batches work too
    (Keras 3.15's invert_permutation rejects a batch: docs/differences.md)."""
    from .. import linalg
    a = _K._floating(x)
    if a.aval.ndim < 2:
        raise ValueError(f"Expected input to have rank >= 2. Received input with shape {tuple(a.aval.shape)}.")
    lu, p = linalg.lu(a)
    return lu, _M.cast(_A.argsort(p, axis=-1), np.int32)


# --- jvp ----------------------------------------------------------------------------------

def jvp(fun, primals, tangents, has_aux=False):
    """Keras' jvp: ``(fun(*primals), J(primals) @ tangents)`` (plus ``aux`` with ``has_aux``).
    Forward mode as tapeflow's ForwardAccumulator does it (tf.autodiff.ForwardAccumulator, as
    Keras' TF backend): reverse mode twice, the vjp of each output under a second tape is linear
    in its cotangent ``u``, and the gradient of ``<vjp(u), tangents>`` in ``u`` is the jvp.
    Tangents are cast to their primals' dtypes (Keras does)."""
    from ..util import nest
    from ..autodiff.functional import ForwardAccumulator
    p_flat = [_K._t(p) for p in nest.flatten(primals)]
    t_flat = [_K._t(t, p.aval.dtype) for t, p in zip(nest.flatten(tangents), p_flat)]
    primals = nest.pack_sequence_as(primals, p_flat)
    with ForwardAccumulator(p_flat, t_flat) as acc:
        out = fun(*primals)
        if has_aux:
            out, aux = out
        tangents_out = acc.jvp(out)
    if has_aux:
        return out, tangents_out, aux
    return out, tangents_out


# --- rearrange (Keras' einops subset) -----------------------------------------------------

def rearrange(tensor, pattern, **axes_lengths):
    """einops' rearrange as Keras 3 defines it (keras/src/ops/einops.py): split the input's grouped
    axes, transpose to the output's order, merge the output's groups."""
    x = _K._t(tensor)
    inp, outp = re.split(r"\s*->\s*", pattern)
    in_axes = re.findall(r"\w+|\(.*?\)", inp)
    out_axes = re.findall(r"\w+|\(.*?\)", outp)
    shape = list(x.aval.shape)
    if len(in_axes) != len(shape):
        raise ValueError(f"keras.ops.rearrange: the pattern's input {inp!r} names {len(in_axes)} axes, the tensor "
                         f"has {len(shape)} (shape {tuple(shape)})")
    lengths = dict(axes_lengths)
    dims = {}
    for ax, dim in zip(in_axes, shape):
        g = re.match(r"\(([\w\s]+)\)", ax)
        if g:
            inner = g.group(1).split()
            inferred = [a for a in inner if a not in lengths]
            if inferred:
                lengths[inferred[0]] = dim // int(np.prod([lengths[a] for a in inner if a in lengths]))
            dims.update({a: lengths[a] for a in inner})
        else:
            dims[ax] = dim

    def groups(axes):
        return [re.match(r"\(([\w\s]+)\)", a).group(1).split() if re.match(r"\(([\w\s]+)\)", a) else [a]
                for a in axes]
    flat_in = [a for g in groups(in_axes) for a in g]
    flat_out = [a for g in groups(out_axes) for a in g]
    if sorted(flat_in) != sorted(flat_out):
        # (Keras 3.15 on TF: an InvalidArgumentError from its transpose)
        raise _errors.InvalidArgumentError(
            None, None, f"keras.ops.rearrange: {pattern!r}: the output names axes {flat_out}, the input {flat_in}; "
                        f"each input axis must appear once in the output")
    decomposed = [dims[a] for a in flat_in]
    if decomposed != shape:
        x = _A.reshape(x, decomposed)
    x = _A.transpose(x, [flat_in.index(a) for a in flat_out])
    return _A.reshape(x, [int(np.prod([dims[a] for a in g])) for g in groups(out_axes)])


NAMES = ("histogram", "nanquantile", "nanpercentile", "nanmedian", "correlate", "bartlett", "blackman", "hamming",
         "hanning", "kaiser", "extract_sequences", "unfold", "fold", "adaptive_average_pool", "adaptive_max_pool",
         "view", "lu_factor", "jvp", "rearrange")
