"""Convolution and max pooling primitives (NHWC, TensorFlow's semantics).

Five primitives, two closed families, so gradients of any order stay inside them:

* ``conv2d(x, w)``: x (N, H, W, C), w (kh, kw, C/groups, O). Params: ``strides``
  (sh, sw), ``padding`` explicit ((top, bottom), (left, right)) (tapeflow.ops
  turns 'SAME'/'VALID' into pairs with TF's rule), ``dilations`` (dh, dw),
  ``groups`` (feature groups; depthwise when groups == C).
* ``conv2d_input_grad(g, w)``: the transpose of conv2d in x (TF's
  Conv2DBackpropInput, which is also ``tf.nn.conv2d_transpose``); param ``input_hw``.
* ``conv2d_filter_grad(x, g)``: the transpose of conv2d in w; param ``filter_hw``.
  The three are bilinear and each one's vjp is made of the other two.
* ``max_pool(x, v)``: in each window, the value of ``v`` where ``x`` is largest
  (the first maximum in row-major window order, as TF's MaxPoolGrad), so
  ``max_pool2d(x)`` is ``max_pool(x, x)``. Linear in v, piecewise constant in x.
* ``max_pool_grad(x, g)``: its transpose in v (g scattered to the window maxima).

Average pooling is a depthwise conv2d with a ones kernel (tapeflow.ops.nn_ops).

Kernels: im2col (a strided view of the padded input, copied once into a
(groups, N*OH*OW, kh*kw*C/groups) matrix) and one batched GEMM; the depthwise
case and col2im accumulate over the kh*kw kernel offsets instead (each offset
one vectorised NumPy op over the whole batch; no loop over pixels).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..aval import Aval, fmt_shape, shapes_compatible
from ..primitive import Primitive, bind
from . import _rules
from . import elementwise as E


# -- TF's padding and output-size rules ---------------------------------------------------------

def out_size(n, k, s, d, before, after):
    """Output length of a window of size k, stride s, dilation d over n padded by (before, after)."""
    if n is None:
        return None
    return (n + before + after - (k - 1) * d - 1) // s + 1


def same_padding(n, k, s, d):
    """TF 'SAME': out = ceil(n / s); the padding needed for it, the odd one at the end."""
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _check_window(name, strides, dilations, padding):
    for what, v in (("strides", strides), ("dilations", dilations)):
        if len(v) != 2 or any(int(s) < 1 for s in v):
            raise ValueError(f"{name}: {what} must be two positive integers (height, width), got {tuple(v)}")
    if len(padding) != 2 or any(len(p) != 2 or min(p) < 0 for p in padding):
        raise ValueError(f"{name}: explicit padding must be ((top, bottom), (left, right)) of non-negative "
                         f"integers, got {padding}")


def _out_hw(name, x_shape, k_hw, strides, dilations, padding, what="input"):
    out = []
    for axis, (n, k, s, d, (a, b)) in enumerate(zip(x_shape[1:3], k_hw, strides, dilations, padding)):
        o = out_size(n, k, s, d, a, b)
        if o is not None and o < 1:
            raise ValueError(
                f"{name}: the window ({k} with dilation {d}, i.e. {(k - 1) * d + 1} wide) is larger than the "
                f"padded {what} along {'height' if axis == 0 else 'width'} ({n} + padding {a}+{b}) in {what} "
                f"shape {fmt_shape(x_shape)}; use padding='SAME', a smaller kernel, or a larger {what}")
        out.append(o)
    return tuple(out)


def _conv_dtype(name, *avals):
    d = _rules.result_dtype(name, avals)
    if d.kind != "f" and d != np.int32:  # TF's Conv2D kernels: half, float, double and int32
        raise TypeError(f"{name}: expects float16/32/64 or int32 tensors, got {d.name}; "
                        f"cast first: tapeflow.cast(x, tapeflow.float32)")
    return d


def _rank4(name, what, a):
    if a.ndim != 4:
        raise ValueError(f"{name}: {what} must have rank 4, got shape {fmt_shape(a.shape)}"
                         + (" (NHWC: batch, height, width, channels)" if what in ("input", "gradient") else
                            " (kernel height, kernel width, in channels / groups, out channels)"))


def _conv_channels(name, c, w_shape, groups):
    cg, o = w_shape[2], w_shape[3]
    if groups < 1:
        raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
    if c is not None and cg is not None and c != cg * groups:
        raise ValueError(f"{name}: the input has {c} channels but the filter {fmt_shape(w_shape)} expects "
                         f"{cg} x {groups} group(s) = {cg * groups} (filter shape is (kh, kw, in_channels / "
                         f"groups, out_channels))")
    if o is not None and o % groups:
        raise ValueError(f"{name}: out channels {o} are not divisible by groups={groups}")


def window_counts(hw, ksize, strides, padding, dtype):
    """(1, OH, OW, 1): how many real (unpadded) cells each pooling window covers."""
    ones = np.ones((1,) + tuple(hw) + (1,), dtype)
    return _conv2d_kernel(ones, np.ones(tuple(ksize) + (1, 1), dtype), strides, padding, (1, 1), 1)


# -- kernels ---------------------------------------------------------------------------------------

def _pad(x, padding, value=0):
    (t, b), (l, r) = padding
    if not (t or b or l or r):
        return x
    return np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=value)


def _kernel_out_hw(xp_hw, k_hw, strides, dilations):
    out = tuple(out_size(n, k, s, d, 0, 0) for n, k, s, d in zip(xp_hw, k_hw, strides, dilations))
    if min(out) < 1:  # the shape rule words the error (TF would return an empty tensor)
        raise ValueError(f"empty output {out}")
    return out


def _check_operands(*arrays, pool=False):
    """Eager runs the kernel without the shape rule: raise so that the rule words the error
    instead of NumPy computing something (a bool or int64 GEMM) the rule would refuse."""
    for a in arrays:
        if not (_rules._kind(a.dtype) in ("fiu" if pool else "f") or a.dtype == np.int32):
            raise TypeError(f"dtype {a.dtype}")


def _check_out(g, out_hw):
    if tuple(g.shape[1:3]) != tuple(out_hw):
        raise ValueError(f"gradient spatial shape {g.shape[1:3]} != {out_hw}")


def _windows(xp, k_hw, strides, dilations, out_hw):
    """(N, OH, OW, kh, kw, C) read-only strided view of the padded input: no copy."""
    n, _, _, c = xp.shape
    sn, sh_, sw_, sc = xp.strides
    return as_strided(xp, (n, out_hw[0], out_hw[1], k_hw[0], k_hw[1], c),
                      (sn, sh_ * strides[0], sw_ * strides[1], sh_ * dilations[0], sw_ * dilations[1], sc),
                      writeable=False)


def _offsets(k_hw, strides, dilations, out_hw):
    """Per kernel offset (i, j), the slices of the padded input it reads."""
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            h0, w0 = i * dilations[0], j * dilations[1]
            yield i, j, (slice(None), slice(h0, h0 + (out_hw[0] - 1) * strides[0] + 1, strides[0]),
                         slice(w0, w0 + (out_hw[1] - 1) * strides[1] + 1, strides[1]))


def _is_depthwise(w_shape, groups):
    return groups > 1 and w_shape[2] == 1


def _cols(x, k_hw, strides, padding, dilations, groups):
    """im2col: (groups, N*OH*OW, kh*kw*C/groups), the one copy of the input the GEMM needs."""
    xp = _pad(x, padding)
    out_hw = _kernel_out_hw(xp.shape[1:3], k_hw, strides, dilations)
    win = _windows(xp, k_hw, strides, dilations, out_hw)
    n, c = x.shape[0], x.shape[3]
    m = n * out_hw[0] * out_hw[1]
    if groups == 1:
        return win.reshape(1, m, k_hw[0] * k_hw[1] * c), out_hw
    win = win.reshape(m, k_hw[0], k_hw[1], groups, c // groups)
    return win.transpose(3, 0, 1, 2, 4).reshape(groups, m, -1), out_hw


def _w_mat(w, groups):
    """(kh, kw, Cg, O) -> (groups, kh*kw*Cg, O/groups), matching _cols' column order."""
    kh, kw, cg, o = w.shape
    if groups == 1:
        return w.reshape(1, kh * kw * cg, o)
    return w.reshape(kh, kw, cg, groups, o // groups).transpose(3, 0, 1, 2, 4).reshape(groups, -1, o // groups)


def _g_mat(g, groups):
    """(N, OH, OW, O) -> (groups, N*OH*OW, O/groups)."""
    n, oh, ow, o = g.shape
    if groups == 1:
        return g.reshape(1, n * oh * ow, o)
    return g.reshape(n * oh * ow, groups, o // groups).transpose(1, 0, 2)


def _conv2d_kernel(x, w, strides, padding, dilations, groups):
    _check_operands(x, w)
    if _is_depthwise(w.shape, groups):
        return _depthwise(x, w, strides, padding, dilations)
    cols, out_hw = _cols(x, w.shape[:2], strides, padding, dilations, groups)
    out = np.matmul(cols, _w_mat(w, groups))  # (groups, M, O/groups)
    return out.transpose(1, 0, 2).reshape(x.shape[0], out_hw[0], out_hw[1], w.shape[3])


def _depthwise(x, w, strides, padding, dilations):
    # One multiply-add per kernel offset over the whole batch: a grouped GEMM
    # with 1-channel groups would be thousands of tiny matrix products.
    kh, kw, _, o = w.shape
    n, _, _, c = x.shape
    xp = _pad(x, padding)
    out_hw = _kernel_out_hw(xp.shape[1:3], (kh, kw), strides, dilations)
    w4 = w.reshape(kh, kw, c, o // c)
    out = np.zeros((n, out_hw[0], out_hw[1], c, o // c), np.result_type(x, w))
    for i, j, sl in _offsets((kh, kw), strides, dilations, out_hw):
        out += xp[sl][..., None] * w4[i, j]
    return out.reshape(n, out_hw[0], out_hw[1], o)


def _input_grad_kernel(g, w, input_hw, strides, padding, dilations, groups):
    _check_operands(g, w)
    kh, kw, cg, o = w.shape
    n, oh, ow, _ = g.shape
    c = cg * groups
    (t, b), (l, r) = padding
    _check_out(g, _kernel_out_hw((input_hw[0] + t + b, input_hw[1] + l + r), (kh, kw), strides, dilations))
    dtype = np.result_type(g, w)
    xp = np.zeros((n, input_hw[0] + t + b, input_hw[1] + l + r, c), dtype)
    if _is_depthwise(w.shape, groups):
        g5, w4 = g.reshape(n, oh, ow, c, o // c), w.reshape(kh, kw, c, o // c)
        for i, j, sl in _offsets((kh, kw), strides, dilations, (oh, ow)):
            xp[sl] += np.einsum("nhwcm,cm->nhwc", g5, w4[i, j])
    else:
        # col2im: one batched GEMM gives every window's contribution, laid out per kernel
        # offset (kh*kw, groups, M, cg), so each offset's block is contiguous and adds back
        # in place with rows of ow*cg elements (an (M, kh*kw*cg) product has rows of cg
        # only: 1.5x slower at cg=32)
        wt = _w_mat(w, groups).reshape(groups, kh * kw, cg, o // groups).transpose(1, 0, 3, 2)
        cols = np.matmul(_g_mat(g, groups), wt)
        cols = cols.reshape(kh, kw, groups, n, oh, ow, cg).transpose(0, 1, 3, 4, 5, 2, 6)
        xp5 = xp.reshape(n, xp.shape[1], xp.shape[2], groups, cg)
        for i, j, sl in _offsets((kh, kw), strides, dilations, (oh, ow)):
            xp5[sl] += cols[i, j]
    return xp[:, t:t + input_hw[0], l:l + input_hw[1]]


def _filter_grad_kernel(x, g, filter_hw, strides, padding, dilations, groups):
    _check_operands(x, g)
    n, _, _, c = x.shape
    o = g.shape[3]
    kh, kw = filter_hw
    (t, b), (l, r) = padding
    _check_out(g, _kernel_out_hw((x.shape[1] + t + b, x.shape[2] + l + r), filter_hw, strides, dilations))
    if groups > 1 and c == groups:  # depthwise: per-offset reductions, as in the forward kernel
        xp = _pad(x, padding)
        g5 = g.reshape(n, g.shape[1], g.shape[2], c, o // c)
        dw = np.empty((kh, kw, c, o // c), np.result_type(x, g))
        for i, j, sl in _offsets(filter_hw, strides, dilations, g.shape[1:3]):
            dw[i, j] = np.einsum("nhwc,nhwcm->cm", xp[sl], g5)
        return dw.reshape(kh, kw, 1, o)
    cols, _ = _cols(x, filter_hw, strides, padding, dilations, groups)
    dw = np.matmul(cols.transpose(0, 2, 1), _g_mat(g, groups))  # (groups, kh*kw*cg, O/groups)
    cg = c // groups
    return dw.reshape(groups, kh, kw, cg, o // groups).transpose(1, 2, 3, 0, 4).reshape(kh, kw, cg, o)


# -- shape/dtype rules ----------------------------------------------------------------------------

def _conv2d_abstract(x, w, strides, padding, dilations, groups):
    name = "conv2d"
    _rank4(name, "input", x)
    _rank4(name, "filter", w)
    d = _conv_dtype(name, x, w)
    _check_window(name, strides, dilations, padding)
    _conv_channels(name, x.shape[3], w.shape, groups)
    oh, ow = _out_hw(name, x.shape, w.shape[:2], strides, dilations, padding)
    return Aval((x.shape[0], oh, ow, w.shape[3]), d)


def _input_grad_abstract(g, w, input_hw, strides, padding, dilations, groups):
    name = "conv2d_transpose"
    _rank4(name, "gradient", g)
    _rank4(name, "filter", w)
    d = _conv_dtype(name, g, w)
    _check_window(name, strides, dilations, padding)
    _conv_channels(name, None, w.shape, groups)
    c = None if w.shape[2] is None else w.shape[2] * groups
    expect = _out_hw(name, (None,) + tuple(input_hw) + (c,), w.shape[:2], strides, dilations, padding,
                     what="output")
    if w.shape[3] is not None and g.shape[3] is not None and g.shape[3] != w.shape[3]:
        raise ValueError(f"{name}: the input has {g.shape[3]} channels but the filter {fmt_shape(w.shape)} "
                         f"expects {w.shape[3]} (its last dimension; conv2d_transpose's filter is (kh, kw, "
                         f"out_channels, in_channels))")
    if any(a is not None and a != b for a, b in zip(g.shape[1:3], expect)):
        raise ValueError(f"{name}: input spatial shape {tuple(g.shape[1:3])} does not match the output shape "
                         f"{tuple(input_hw)}: a conv2d with these strides {tuple(strides)}, padding and "
                         f"dilations maps {tuple(input_hw)} to {expect}; fix output_shape or the input")
    return Aval((g.shape[0],) + tuple(input_hw) + (c,), d)


def _filter_grad_abstract(x, g, filter_hw, strides, padding, dilations, groups):
    name = "conv2d_filter_grad"
    _rank4(name, "input", x)
    _rank4(name, "gradient", g)
    d = _conv_dtype(name, x, g)
    _check_window(name, strides, dilations, padding)
    c, o = x.shape[3], g.shape[3]
    if c is None or o is None:
        raise ValueError(f"{name}: channel counts must be known, got {fmt_shape(x.shape)} and {fmt_shape(g.shape)}")
    if c % groups or o % groups:
        raise ValueError(f"{name}: channels {c} -> {o} are not divisible by groups={groups}")
    expect = _out_hw(name, x.shape, filter_hw, strides, dilations, padding)
    if any(a is not None and b is not None and a != b for a, b in zip(g.shape[1:3], expect)):
        raise ValueError(f"{name}: gradient spatial shape {tuple(g.shape[1:3])} != conv2d output {expect}")
    return Aval(tuple(filter_hw) + (c // groups, o), d)


# -- gradients (each in the other two primitives) ----------------------------------------------------

def _hw(shape):
    return tuple(shape[1:3])


def _conv2d_vjp(ct, out, x, w, **p):
    gx = None if E._is_const(x) else bind(conv2d_input_grad_p, ct, w, input_hw=_hw(E.shape_of(x)), **p)
    gw = None if E._is_const(w) else bind(conv2d_filter_grad_p, x, ct, filter_hw=E.shape_of(w)[:2], **p)
    return gx, gw


def _input_grad_vjp(ct, out, g, w, input_hw, **p):
    # y = A(w)^T g, so <ct, y> = <A(w) ct, g> = <conv2d(ct, w), g>
    gg = None if E._is_const(g) else bind(conv2d_p, ct, w, **p)
    gw = None if E._is_const(w) else bind(conv2d_filter_grad_p, ct, g, filter_hw=E.shape_of(w)[:2], **p)
    return gg, gw


def _filter_grad_vjp(ct, out, x, g, filter_hw, **p):
    # <ct, dW(x, g)> = <conv2d(x, ct), g>
    gx = None if E._is_const(x) else bind(conv2d_input_grad_p, g, ct, input_hw=_hw(E.shape_of(x)), **p)
    gg = None if E._is_const(g) else bind(conv2d_p, x, ct, **p)
    return gx, gg


conv2d_p = Primitive("conv2d", _conv2d_kernel, _conv2d_abstract, _conv2d_vjp,
                     doc="NHWC convolution (cross-correlation, as TF) with explicit padding and groups")
conv2d_input_grad_p = Primitive("conv2d_input_grad", _input_grad_kernel, _input_grad_abstract, _input_grad_vjp,
                                doc="transpose of conv2d in its input (tf.nn.conv2d_transpose)")
conv2d_filter_grad_p = Primitive("conv2d_filter_grad", _filter_grad_kernel, _filter_grad_abstract,
                                 _filter_grad_vjp, doc="transpose of conv2d in its filter")
# (float32 with float64 raises in every mode: eager applies the rule on every call)


# -- max pooling -------------------------------------------------------------------------------------

def _fill_min(dtype):
    # padding never wins a window (TF ignores SAME padding in max pooling)
    return -np.inf if _rules._kind(dtype) == "f" else np.iinfo(dtype).min


def _window_max(xp, ksize, strides, out_hw):
    out = None
    for _, _, sl in _offsets(ksize, strides, (1, 1), out_hw):
        out = xp[sl].copy() if out is None else np.maximum(out, xp[sl], out=out)
    return out


def _bits(a):
    return a.view(np.dtype(f"i{a.dtype.itemsize}"))


def _first_max_masks(xp, ksize, strides, out_hw):
    """Per kernel offset: its input slice and a boolean mask of where it holds its
    window's first maximum in row-major offset order (TF's choice for ties). Callers
    select with ``bits * mask``: the values' bit patterns as integers times 0 or 1,
    branchless and exact (a float product would turn inf * 0 into nan), where
    np.where and boolean indexing branch per element on a random mask and mispredict
    (~20x slower). A window with a NaN has no maximum: it selects nothing."""
    best = _window_max(xp, ksize, strides, out_hw)
    taken = None
    last = ksize[0] * ksize[1] - 1
    for k, (_, _, sl) in enumerate(_offsets(ksize, strides, (1, 1), out_hw)):
        m = np.equal(xp[sl], best)
        if taken is None:
            taken = m.copy()
        else:
            np.greater(m, taken, out=m)  # m and not taken
            if k < last:
                np.logical_or(taken, m, out=taken)
        yield sl, m


def _max_pool_kernel(x, v, ksize, strides, padding):
    _check_operands(x, v, pool=True)
    xp = _pad(x, padding, _fill_min(x.dtype))
    out_hw = _kernel_out_hw(xp.shape[1:3], ksize, strides, (1, 1))
    if v is x:  # the forward pass: the running maximum is the answer
        return _window_max(xp, ksize, strides, out_hw)
    vp = _pad(v, padding)
    out = np.zeros((x.shape[0],) + out_hw + (x.shape[3],), v.dtype)
    ob = _bits(out)
    for sl, m in _first_max_masks(xp, ksize, strides, out_hw):
        ob |= np.multiply(_bits(vp[sl]), m)  # exactly one offset selects each window
    return out


def _max_pool_grad_kernel(x, g, ksize, strides, padding):
    _check_operands(x, g, pool=True)
    (t, b), (l, r) = padding
    xp = _pad(x, padding, _fill_min(x.dtype))
    out_hw = g.shape[1:3]
    _check_out(g, _kernel_out_hw(xp.shape[1:3], ksize, strides, (1, 1)))
    dx = np.zeros(xp.shape, g.dtype)
    gb = _bits(g)
    disjoint = all(s >= k for s, k in zip(strides, ksize))  # windows do not overlap: write, don't add
    for sl, m in _first_max_masks(xp, ksize, strides, out_hw):
        if disjoint:
            np.multiply(gb, m, out=_bits(dx)[sl])
        else:
            dx[sl] += np.multiply(gb, m).view(g.dtype)
    return dx[:, t:t + x.shape[1], l:l + x.shape[2]]


def _pool_check(name, x, ksize, strides, padding):
    _rank4(name, "input", x)
    _check_window(name, strides, (1, 1), padding)
    if len(ksize) != 2 or any(int(k) < 1 for k in ksize):
        raise ValueError(f"{name}: ksize must be two positive integers (height, width), got {tuple(ksize)}")
    if _rules._kind(x.dtype) not in "fiu":   # (max pooling is exact in bfloat16: no float32 pass)
        raise TypeError(f"{name}: expects a numeric tensor, got {x.dtype.name}")
    return _out_hw(name, x.shape, ksize, strides, (1, 1), padding)


def _max_pool_abstract(x, v, ksize, strides, padding):
    oh, ow = _pool_check("max_pool", x, ksize, strides, padding)
    if v.shape != x.shape:
        raise ValueError(f"max_pool: values {fmt_shape(v.shape)} must have the keys' shape {fmt_shape(x.shape)}")
    return Aval((x.shape[0], oh, ow, x.shape[3]), v.dtype)


def _max_pool_grad_abstract(x, g, ksize, strides, padding):
    out_hw = _pool_check("max_pool_grad", x, ksize, strides, padding)
    expect = (x.shape[0],) + out_hw + (x.shape[3],)
    if not shapes_compatible(g.shape, expect):
        raise ValueError(f"max_pool_grad: gradient {fmt_shape(g.shape)} != pooled shape {fmt_shape(expect)}")
    return Aval(x.shape, g.dtype)


max_pool_p = Primitive(
    "max_pool", _max_pool_kernel, _max_pool_abstract,
    # the window argmax is piecewise constant in x: x gets no gradient through the selection
    lambda ct, out, x, v, **p: (None, None if E._is_const(v) else bind(max_pool_grad_p, x, ct, **p)),
    doc="per window, v at the position of x's first maximum (max_pool2d(x) = max_pool(x, x))")
max_pool_grad_p = Primitive(
    "max_pool_grad", _max_pool_grad_kernel, _max_pool_grad_abstract,
    lambda ct, out, x, g, **p: (None, None if E._is_const(g) else bind(max_pool_p, x, ct, **p)),
    doc="transpose of max_pool in its values: g scattered to each window's maximum")
