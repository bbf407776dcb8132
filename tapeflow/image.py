"""tapeflow.image: the part of TF's ``tf.image`` that is arithmetic on images: resizing
(bilinear and nearest, TF's half-pixel-centre sampling), crops and pads, rotations by 90
degrees, colour conversions, standardization, image gradients, total variation and PSNR.

Images are ``[..., height, width, channels]`` (NHWC, as TF). Every function composes
existing ops, so it traces into compiled code and has gradients of every order -- unlike
TF, where ``adjust_contrast`` is one kernel with no gradient (``LookupError: gradient
registry has no entry for: AdjustContrastv2``; see docs/differences.md).
Flips take any dtype; for the arithmetic ones integer images (TF converts uint8 to float
and back, saturating) are not supported: they raise a TypeError that says to cast first.
"""
from __future__ import annotations

import collections

import numpy as np

from .core import dtypes as _dt
from .core.tensor import Tensor, convert_to_tensor
from .errors import (FailedPreconditionError, InvalidArgumentError, InvalidArgumentTypeError, OutOfRangeError,
                     UnimplementedError)
from .ops import array_ops as _A
from .ops import math_ops as _M

__all__ = ["adjust_contrast", "adjust_brightness", "flip_left_right", "flip_up_down", "resize", "ResizeMethod",
           "resize_with_crop_or_pad", "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "rot90",
           "transpose", "rgb_to_grayscale", "grayscale_to_rgb", "per_image_standardization", "convert_image_dtype",
           "image_gradients", "total_variation", "psnr", "random_flip_left_right", "random_flip_up_down",
           "rgb_to_hsv", "hsv_to_rgb", "adjust_saturation", "adjust_hue", "adjust_gamma", "rgb_to_yiq", "yiq_to_rgb",
           "rgb_to_yuv", "yuv_to_rgb", "random_brightness", "random_contrast", "random_saturation", "random_hue",
           "stateless_random_brightness", "stateless_random_contrast", "stateless_random_saturation",
           "stateless_random_hue", "sobel_edges", "ssim", "resize_with_pad", "extract_patches", "crop_and_resize",
           "random_crop", "stateless_random_crop", "non_max_suppression", "non_max_suppression_with_scores",
           "ssim_multiscale", "draw_bounding_boxes", "non_max_suppression_padded", "non_max_suppression_overlaps",
           "combined_non_max_suppression", "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box",
           "extract_glimpse", "adjust_jpeg_quality", "random_jpeg_quality", "stateless_random_jpeg_quality"]


def _image(fn, images, min_rank, any_dtype=False):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank < min_rank:
        raise InvalidArgumentError(f"tf.image.{fn}: images must be at least {min_rank}-D "
                                   f"([..., height, width, channels]), got shape {x.shape}")
    if not x.dtype.is_floating and not any_dtype:
        raise TypeError(f"tf.image.{fn}: images of dtype {x.dtype.name} are not supported; cast them to "
                        f"a float dtype first (tf.cast(images, tf.float32) / 255.0 for uint8 pixels)")
    return x


def _float32_detour(x, body, saturate):
    """TF's adjust_* ops on an image of any dtype: float16/float32 images go to ``body`` as they are,
    any other dtype through convert_image_dtype to float32 and back (``saturate``: clipped into
    the dtype's range), so a uint8 image works and a float64 one is computed in float32, as in TF."""
    if x.dtype in (_dt.float16, _dt.float32):
        return body(x)
    return convert_image_dtype(body(convert_image_dtype(x, np.float32)), x.dtype, saturate=saturate)


def _number_image(fn, images, min_rank):
    x = _image(fn, images, min_rank, any_dtype=True)
    if x.dtype == _dt.bool:
        raise TypeError(f"tf.image.{fn}: bool images are not supported; cast them to a number dtype first")
    return x


def adjust_contrast(images, contrast_factor, name=None):
    """``(x - mean) * contrast_factor + mean``, the mean of each channel over height and width
    (TF's definition), in float32 for other dtypes and converted back saturating, as TF."""
    def body(f):
        mean = _M.reduce_mean(f, axis=[-3, -2], keepdims=True)
        return _M.add(_M.multiply(_M.subtract(f, mean), _M.cast(contrast_factor, f.dtype)), mean)
    return _float32_detour(_number_image("adjust_contrast", images, 3), body, saturate=True)


def adjust_brightness(image, delta):
    """``image + delta``, in float32 for other dtypes and converted back saturating, as TF."""
    return _float32_detour(_number_image("adjust_brightness", image, 0),
                           lambda f: _M.add(f, _M.cast(delta, f.dtype)), saturate=True)


def flip_left_right(image):
    """Reverses the width axis (``[..., height, width, channels]``)."""
    return _A.reverse(_image("flip_left_right", image, 3, any_dtype=True), [-2])  # (a flip: any dtype, as TF)


def flip_up_down(image):
    """Reverses the height axis."""
    return _A.reverse(_image("flip_up_down", image, 3, any_dtype=True), [-3])


class ResizeMethod:
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = {v for k, v in vars(ResizeMethod).items() if not k.startswith("_")}


def _rank34(fn, images):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank not in (3, 4):
        raise ValueError(f"tf.image.{fn}: 'images' must have either 3 or 4 dimensions, got shape {x.shape}")
    return x


def _hw(x, fn=None):
    hw = tuple(x.shape)[-3:-1]
    if None in hw and fn is not None:
        # the sizes choose slices, paddings and resampling weights: static numbers in tapeflow
        raise ValueError(f"tf.image.{fn}: the image's height and width (shape {x.shape}) must be known; one is "
                         f"{_A._RUNTIME_SIZE}")
    return hw


def _size(fn, size):
    sz = size.numpy().tolist() if isinstance(size, Tensor) else list(np.asarray(size).reshape(-1).tolist()) \
        if not isinstance(size, (list, tuple)) else list(size)
    if len(sz) != 2:
        raise ValueError(f"tf.image.{fn}: 'size' must be a 1-D Tensor of 2 elements: new_height, new_width; "
                         f"got {size!r}")
    h, w = (int(v) for v in sz)
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(f"tf.image.{fn}: the output size must be positive, got {[h, w]}")
    return h, w


def _taps(n_in, n_out, method):
    """Source rows for each output row under TF's half-pixel centres, in float32 as TF's
    kernels compute them: nearest -> (index,), bilinear -> (lower, upper, lerp)."""
    scale = np.float32(n_in) / np.float32(n_out)
    out = np.arange(n_out, dtype=np.float32)
    if method == "nearest":
        return (np.minimum(np.floor((out + np.float32(0.5)) * scale).astype(np.int64), n_in - 1),)
    src = (out + np.float32(0.5)) * scale - np.float32(0.5)
    fl = np.floor(src)
    lower = np.maximum(fl, 0).astype(np.int64)
    upper = np.minimum(np.ceil(src), n_in - 1).astype(np.int64)
    return lower, upper, (src - fl).astype(np.float32)


# -- the other resize methods: per-axis weight matrices -----------------------------------------------
# TF's bicubic (ResizeBicubic, half-pixel centres), area (ResizeArea) and ScaleAndTranslate kernels
# (lanczos3/5, gaussian, mitchellcubic; bilinear and bicubic with antialias) are each separable: an
# output row is a weighted sum of input rows along one axis, then along the other. Their weights
# depend only on the sizes, so they are built here in NumPy, in float32 as TF's kernels compute them,
# and applied as two contractions: the result is differentiable in the image (TF registers no gradient
# for ResizeArea: tapeflow's is the transposed weights). Sums run in another order than TF's loops:
# results agree with TF's to float32 rounding, not bit for bit.

_F = np.float32


def _lanczos(radius):
    def k(x):
        x = abs(x)
        if x > radius:
            return _F(0.0)
        if x <= _F(1e-3):
            return _F(1.0)
        pi = _F(3.14159265359)
        return _F(radius) * np.sin(pi * x) * np.sin(pi * x / _F(radius)) / (pi * pi * x * x)
    return k, radius


def _gaussian():
    radius, sigma = 1.5, 1.5 / 3.0
    return (lambda x: _F(0.0) if abs(x) >= radius else _F(np.exp(-float(x) * float(x) / (2.0 * sigma * sigma)))), radius


def _triangle():
    return (lambda x: _F(1.0) - abs(x) if abs(x) < 1.0 else _F(0.0)), 1.0


def _keys_cubic():
    def k(x):
        x = abs(x)
        if x >= 2.0:
            return _F(0.0)
        if x >= 1.0:
            return ((_F(-0.5) * x + _F(2.5)) * x - _F(4.0)) * x + _F(2.0)
        return ((_F(1.5) * x - _F(2.5)) * x) * x + _F(1.0)
    return k, 2.0


def _mitchell_cubic():
    def k(x):
        x = abs(x)
        if x >= 2.0:
            return _F(0.0)
        if x >= 1.0:
            return (((_F(-7.0 / 18.0)) * x + _F(2.0)) * x - _F(10.0 / 3.0)) * x + _F(16.0 / 9.0)
        return (((_F(7.0 / 6.0)) * x - _F(2.0)) * x) * x + _F(8.0 / 9.0)
    return k, 2.0


_SAMPLING_KERNELS = {"lanczos3": lambda: _lanczos(3.0), "lanczos5": lambda: _lanczos(5.0), "gaussian": _gaussian,
                     "mitchellcubic": _mitchell_cubic, "triangle": _triangle, "keyscubic": _keys_cubic}


def _span_weights(kernel, n_in, n_out, antialias):
    """ScaleAndTranslate's spans (TF's ComputeSpansCore, zero translation): output x samples the input
    at (x + 0.5) / scale, the kernel stretched by 1/scale when antialiasing a downsample, the weights
    normalised to sum to 1."""
    k, radius = _SAMPLING_KERNELS[kernel]()
    scale = _F(n_out) / _F(n_in)
    inv_scale = _F(1.0 / float(scale))
    kscale = max(inv_scale, _F(1.0)) if antialias else _F(1.0)
    one_over_kscale = _F(1.0) / kscale
    w = np.zeros((n_out, n_in), np.float32)
    for x in range(n_out):
        sample = _F(x + 0.5) * inv_scale
        if sample < 0 or sample > n_in:
            continue
        start = int(np.ceil(sample - _F(radius) * kscale - _F(0.5)))
        end = int(np.floor(sample + _F(radius) * kscale - _F(0.5)))
        start, end = min(max(start, 0), n_in - 1), min(max(end, 0), n_in - 1) + 1
        ws = [k(abs((_F(src) + _F(0.5) - sample) * one_over_kscale)) for src in range(start, end)]
        w[x, start:end] = _normalised(ws)
    return w


def _normalised(ws):
    """Weights divided by their float32 sum, summed in order as TF's kernels sum them (as zeros where
    the sum is too small to divide by: TF leaves such a row's weights 0)."""
    total = _F(0.0)
    for v in ws:
        total = _F(total + v)
    if abs(total) < 1000.0 * np.finfo(np.float32).tiny:
        return np.zeros(len(ws), np.float32)
    return np.asarray(ws, np.float32) * (_F(1.0) / total)


def _bicubic_weights(n_in, n_out):
    """ResizeBicubic with half-pixel centres (TF 2's tf.image.resize 'bicubic'): Keys' cubic (a =
    -0.5) read from TF's 1024-step table at the rounded fraction, the taps outside the image dropped
    and the rest renormalised."""
    size = 1024
    a = -0.5
    t = np.arange(size + 1, dtype=np.float64) / size
    near = ((a + 2) * t - (a + 3)) * t * t + 1            # |d| in [0, 1]
    far = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a   # |d| in [1, 2]
    near, far = near.astype(np.float32), far.astype(np.float32)
    scale = _F(n_in) / _F(n_out)
    w = np.zeros((n_out, n_in), np.float32)
    for x in range(n_out):
        src = (_F(x) + _F(0.5)) * scale - _F(0.5)
        loc = int(np.floor(src))
        off = int(np.rint((src - _F(loc)) * _F(size)))
        taps = [(loc - 1, far[off]), (loc, near[off]), (loc + 1, near[size - off]), (loc + 2, far[size - off])]
        inside = [(i, v) for i, v in taps if 0 <= i < n_in]
        for (i, _), v in zip(inside, _normalised([v for _, v in inside])):
            w[x, i] += v
    return w


def _area_weights(n_in, n_out):
    """ResizeArea: output y averages the input over [y, y + 1) * (n_in / n_out), each input row
    weighted by its overlap (rows past the end clamp to the last)."""
    scale = _F(n_in) / _F(n_out)
    w = np.zeros((n_out, n_in), np.float32)
    for y in range(n_out):
        lo, hi = _F(y) * scale, _F(y + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            w[y, min(i, n_in - 1)] += min(_F(i + 1), hi) - max(_F(i), lo)
    return w * (_F(1.0) / scale)


def _weights(method, n_in, n_out, antialias):
    if method == "area":
        return _area_weights(n_in, n_out)
    if method == "bicubic" and not antialias:
        return _bicubic_weights(n_in, n_out)
    kernel = {"bilinear": "triangle", "bicubic": "keyscubic"}.get(method, method)
    return _span_weights(kernel, n_in, n_out, antialias)


def _taps_sum(x, wmat, axis):
    """sum_i wmat[o, i] x[.., i, ..] along ``axis`` over each output's taps (its nonzero weights) only, in
    index order: as TF's kernels, which visit only the pixels under the kernel, so a NaN or inf pixel
    reaches only the outputs it weighs in (a contraction with the whole weight matrix multiplied it by the
    zeros too: 0 * nan spread it over the row)."""
    n_out = wmat.shape[0]
    taps = [np.flatnonzero(row) for row in wmat]
    k_max = max([len(t) for t in taps] + [1])
    shape = [1] * x.shape.rank
    shape[axis] = n_out
    out = None
    for k in range(k_max):
        have = np.array([len(t) > k for t in taps])
        idx = np.array([t[k] if len(t) > k else 0 for t in taps], np.int32)
        wk = np.array([wmat[o, idx[o]] if have[o] else 0.0 for o in range(n_out)], np.float32).reshape(shape)
        term = _M.multiply(_A.gather(x, idx, axis=axis), wk)
        if not have.all():   # (an output with fewer taps: its padding must not read 0 * a NaN pixel)
            term = _M.where(have.reshape(shape), term, np.zeros((), np.float32))
        out = term if out is None else _M.add(out, term)
    return out


def _weighted(x, h, w, method, antialias):
    """Rows (height) first, then columns, as TF's ScaleAndTranslate; float32 out."""
    H, W = _hw(x)
    x = _M.cast(x, np.float32) if x.dtype != _dt.float32 else x
    wy, wx = _weights(method, H, h, antialias), _weights(method, W, w, antialias)
    return _taps_sum(_taps_sum(x, wy, -3), wx, -2)


def _resample(x, axis, n_out, method):
    n_in = tuple(x.shape)[axis]
    if n_in == n_out:
        return x
    taps = _taps(n_in, n_out, method)
    if method == "nearest":
        return _A.gather(x, taps[0], axis=axis)
    lo, hi, lerp = taps
    a, b = _A.gather(x, lo, axis=axis), _A.gather(x, hi, axis=axis)
    shape = [1] * x.shape.rank
    shape[axis] = n_out
    return a + (b - a) * lerp.reshape(shape)   # TF's form: lower + (upper - lower) * lerp


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """TF 2's resize: half-pixel centres, no corner alignment. 'nearest' keeps the dtype; every other
    method returns float32 (whatever the input dtype, as TF). Differentiable: gathers of constant
    taps (bilinear, nearest) or contractions with constant weights (the rest, ``_weighted``)."""
    x = _rank34("resize", images)
    if method not in _METHODS:
        raise ValueError(f"tf.image.resize: Resize method is not implemented: {method}")
    h, w = _size("resize", size)
    H, W = _hw(x, "resize")
    if preserve_aspect_ratio:
        f = min(h / H, w / W)
        h, w = int(round(f * H)), int(round(f * W))
    # TF's dispatch: bilinear and bicubic with antialias are ScaleAndTranslate's triangle and Keys
    # kernels; area, bicubic, lanczos3/5, gaussian and mitchellcubic their own weights (float32 out)
    if method not in ("bilinear", "nearest") or (antialias and method == "bilinear"):
        return _weighted(x, h, w, method, antialias)
    if method == "bilinear" and x.dtype != _dt.float32:
        x = _M.cast(x, np.float32)
    # width first, then height: the order of TF's bilinear kernel (its rounding)
    return _resample(_resample(x, -2, w, method), -3, h, method)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = _rank34("crop_to_bounding_box", image)
    H, W = _hw(x, "crop_to_bounding_box")
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    if min(oh, ow) < 0 or min(th, tw) <= 0 or oh + th > H or ow + tw > W:
        raise ValueError(f"tf.image.crop_to_bounding_box: the box (offset {oh}, {ow}, size {th}, {tw}) must lie "
                         f"inside the image of height {H} and width {W}, with positive target sizes")
    return x[..., oh:oh + th, ow:ow + tw, :]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = _rank34("pad_to_bounding_box", image)
    H, W = _hw(x, "pad_to_bounding_box")
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    if min(oh, ow) < 0 or th < oh + H or tw < ow + W:
        raise ValueError(f"tf.image.pad_to_bounding_box: the image (height {H}, width {W}) at offset ({oh}, {ow}) "
                         f"must fit in the target ({th}, {tw}), with non-negative offsets")
    pads = [[oh, th - oh - H], [ow, tw - ow - W], [0, 0]]
    return _A.pad(x, ([[0, 0]] if x.shape.rank == 4 else []) + pads)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centre-crops or zero-pads to (target_height, target_width), as TF (the odd pixel goes to
    the bottom/right when padding, the top/left is cropped by floor(diff / 2))."""
    x = _rank34("resize_with_crop_or_pad", image)
    H, W = _hw(x, "resize_with_crop_or_pad")
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(f"tf.image.resize_with_crop_or_pad: target sizes must be positive, got {th}, {tw}")
    x = crop_to_bounding_box(x, max((H - th) // 2, 0), max((W - tw) // 2, 0), min(H, th), min(W, tw))
    h, w = _hw(x, "resize_with_crop_or_pad")
    return pad_to_bounding_box(x, max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of height and width (TF's rounding of the offsets)."""
    x = _rank34("central_crop", image)
    f = float(central_fraction)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"tf.image.central_crop: central_fraction must be within (0, 1], got {central_fraction}")
    if f == 1.0:
        return x
    H, W = _hw(x, "central_crop")
    oh, ow = int((H - H * f) / 2), int((W - W * f) / 2)
    return x[..., oh:H - oh, ow:W - ow, :]


def rot90(image, k=1, name=None):
    """Rotates counter-clockwise by k * 90 degrees."""
    x = _rank34("rot90", image)
    k = int(k) % 4
    h, w = x.shape.rank - 3, x.shape.rank - 2
    perm = list(range(x.shape.rank))
    perm[h], perm[w] = w, h
    if k == 1:
        return _A.transpose(_A.reverse(x, [w]), perm)
    if k == 2:
        return _A.reverse(x, [h, w])
    if k == 3:
        return _A.reverse(_A.transpose(x, perm), [w])
    return x


def transpose(image, name=None):
    """Swaps height and width."""
    x = _rank34("transpose", image)
    perm = list(range(x.shape.rank))
    perm[-3], perm[-2] = perm[-2], perm[-3]
    return _A.transpose(x, perm)


_GRAY = np.array([0.2989, 0.587, 0.114])


def _three_channels(x):
    """``x`` whose last dimension an input_signature leaves None: checked to be 3 (RGB) when the function runs,
    and 3 from here on (TF's kernels check it then too)."""
    if x.shape.rank and tuple(x.shape)[-1] is None:
        from .ops.check_ops import ensure_shape
        return ensure_shape(x, list(x.shape)[:-1] + [3])
    return x


def rgb_to_grayscale(images, name=None):
    """ITU-R 601 luma (0.2989, 0.587, 0.114), keeping a channel axis of 1."""
    x = _three_channels(images if isinstance(images, Tensor) else convert_to_tensor(images))
    if tuple(x.shape)[-1] != 3:
        raise ValueError(f"tf.image.rgb_to_grayscale: the last dimension must be 3 (RGB), got shape {x.shape}")
    # integers go through [0, 1] floats and back, as TF (so 8-bit luma is truncated, not rounded)
    xf = x if x.dtype.is_floating else convert_image_dtype(x, np.float32)
    g = _M.reduce_sum(xf * _GRAY.astype(xf.dtype.as_numpy_dtype), axis=-1, keepdims=True)
    return g if x.dtype.is_floating else convert_image_dtype(g, x.dtype)


def grayscale_to_rgb(images, name=None):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank < 2 or tuple(x.shape)[-1] != 1:
        raise ValueError(f"tf.image.grayscale_to_rgb: the last dimension must be 1, got shape {x.shape}")
    return _A.concat([x, x, x], axis=-1)


def per_image_standardization(image):
    """``(x - mean) / max(stddev, 1 / sqrt(N))`` per image (N its number of values): a constant
    image gives zeros, not NaN."""
    x = _rank34("per_image_standardization", image)
    if not x.dtype.is_floating:
        x = _M.cast(x, np.float32)
    dims = tuple(x.shape)[-3:]
    mean = _M.reduce_mean(x, axis=[-3, -2, -1], keepdims=True)
    std = _M.reduce_std(x, axis=[-3, -2, -1], keepdims=True)
    if None in dims:   # an input_signature's None: N when the function runs
        lo = _M.cast(_M.rsqrt(_M.cast(_M.reduce_prod(_A.shape(x)[-3:]), np.float64)), x.dtype)
    else:
        lo = _M.cast(1.0 / np.sqrt(int(np.prod(dims))), x.dtype)
    return (x - mean) / _M.maximum(std, lo)


def _max(dtype):
    return 1.0 if dtype.is_floating else float(np.iinfo(dtype.as_numpy_dtype).max)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Rescales between dtypes' ranges (floats in [0, 1], integers over their range), as TF:
    float -> int multiplies by max + 0.5 and truncates; ``saturate`` clips first (without it,
    out-of-range floats wrap or are undefined, as in TF)."""
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    dtype = _dt.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    src, dst = x.dtype, dtype
    if src.is_floating and dst.is_floating:
        return _M.cast(x, dst)
    if src.is_integer and dst.is_integer:
        # TF's rule: scaling down divides by the ratio of the ranges (rounded down) first, scaling
        # up casts first and multiplies (so a round trip gives the input back)
        sin, sout = int(_max(src)), int(_max(dst))
        if sin > sout:
            scaled = _M.floordiv(x, _M.cast((sin + 1) // (sout + 1), src))
            return _M.saturate_cast(scaled, dst) if saturate else _M.cast(scaled, dst)
        cast = _M.saturate_cast(x, dst) if saturate else _M.cast(x, dst)
        return _M.multiply(cast, _M.cast((sout + 1) // (sin + 1), dst))
    if src.is_integer:
        return _M.cast(x, dst) * _M.cast(1.0 / _max(src), dst)
    if saturate:
        x = _M.clip_by_value(x, 0.0, 1.0)
    return _M.cast(x * _M.cast(_max(dst) + 0.5, src), dst)


def image_gradients(image):
    """(dy, dx): forward differences along height and width, zero in the last row / column."""
    x = images = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if images.shape.rank != 4:
        raise ValueError(f"tf.image.image_gradients: the image must be 4-D (batch, height, width, channels), got "
                         f"shape {images.shape}")
    dy = x[:, 1:, :, :] - x[:, :-1, :, :]
    dx = x[:, :, 1:, :] - x[:, :, :-1, :]
    dy = _A.concat([dy, _A.zeros_like(x[:, :1, :, :])], axis=1)
    dx = _A.concat([dx, _A.zeros_like(x[:, :, :1, :])], axis=2)
    return dy, dx


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels, per image."""
    x = _rank34("total_variation", images)
    axes = [-3, -2, -1]
    dh = _M.abs(x[..., 1:, :, :] - x[..., :-1, :, :])
    dw = _M.abs(x[..., :, 1:, :] - x[..., :, :-1, :])
    return _M.reduce_sum(dh, axis=axes) + _M.reduce_sum(dw, axis=axes)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image: 10 log10(max_val^2 / mse)."""
    a = a if isinstance(a, Tensor) else convert_to_tensor(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b)
    a, b = _M.cast(a, np.float32), _M.cast(b, np.float32)
    mse = _M.reduce_mean(_M.squared_difference(a, b), axis=[-3, -2, -1])
    mv = _M.cast(max_val, np.float32)
    return _M.cast(20.0, np.float32) * _M.log(mv) / np.float32(np.log(10.0)) - \
        _M.cast(10.0, np.float32) / np.float32(np.log(10.0)) * _M.log(mse)


def _random_flip(fn, image, seed, axis):
    from .ops import random_ops as _R
    x = _rank34(fn, image)
    if x.shape.rank == 3:
        flip = _R.uniform((), seed=seed) < 0.5
        return _M.where(flip, _A.reverse(x, [axis]), x)
    n = tuple(x.shape)[0]
    # a batch flips where round(u) is 1, u > 0.5 (TF's batched form), where one image flips for u < 0.5;
    # an input_signature's None batch draws as many as the batch it runs with
    flip = _A.reshape(_R.uniform((_A.shape(x)[0] if n is None else n,), seed=seed) > 0.5,
                      (-1 if n is None else n, 1, 1, 1))
    return _M.where(flip, _A.reverse(x, [axis]), x)


def random_flip_left_right(image, seed=None):
    """Each image flipped left-right with probability 1/2 (draws are not TF's bits)."""
    return _random_flip("random_flip_left_right", image, seed, -2)


def random_flip_up_down(image, seed=None):
    """Each image flipped upside down with probability 1/2 (draws are not TF's bits)."""
    return _random_flip("random_flip_up_down", image, seed, -3)


def _stateless_flip(fn, image, seed, axis):
    """TF 2.21's _random_flip with stateless_random_uniform (Philox: TF's draws, so TF's images). Its
    two branches differ, kept: one image flips when u < 0.5; a batch flips image i when round(u_i) is
    1 (u_i > 0.5) and blends ``flips * flipped + (1 - flips) * image``."""
    from .ops import random_ops as _R
    x = _rank34(fn, image)
    if x.shape.rank == 3:
        return _M.where(_R.stateless_uniform((), seed=seed, minval=0, maxval=1.0) < 0.5, _A.reverse(x, [axis]), x)
    n = tuple(x.shape)[0]
    u = _R.stateless_uniform((_A.shape(x)[0] if n is None else n,), seed=seed, minval=0, maxval=1.0)
    flips = _M.cast(_M.round(_A.reshape(u, (-1 if n is None else n, 1, 1, 1))), x.dtype)
    return flips * _A.reverse(x, [axis]) + (1 - flips) * x


def stateless_random_flip_left_right(image, seed):
    """Each image flipped left-right for the seed (TF 2.21's draws and rule)."""
    return _stateless_flip("stateless_random_flip_left_right", image, seed, -2)


def stateless_random_flip_up_down(image, seed):
    """Each image flipped upside down for the seed (TF 2.21's draws and rule)."""
    return _stateless_flip("stateless_random_flip_up_down", image, seed, -3)


_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _map_coordinate(c, n, mode):
    """TF's ImageProjectiveTransform fill modes: where a source coordinate outside [0, n - 1]
    reads from (NumPy arithmetic on the coordinate tensors; 'constant' is handled by the reads)."""
    if mode == "constant" or n <= 1 and mode != "nearest":
        return c if mode == "constant" else _M.zeros_like_(c)
    if mode == "nearest":
        return _M.clip_by_value(c, 0.0, float(n - 1))
    if mode == "reflect":
        sz2 = float(2 * n)
        low = c < 0
        # c < 0: fold into [-2n, 0), then mirror
        cl = _M.where(c < -sz2, c + sz2 * _M.cast(_M.cast(-c / sz2, np.int32), c.dtype), c)
        cl = _M.where(cl < -float(n), cl + sz2, -cl - 1.0)
        ch = c - sz2 * _M.cast(_M.cast(c / sz2, np.int32), c.dtype)
        ch = _M.where(ch >= float(n), sz2 - ch - 1.0, ch)
        out = _M.where(low, cl, _M.where(c > float(n - 1), ch, c))
        return _M.clip_by_value(out, 0.0, float(n - 1))
    # wrap
    sz = float(n - 1)
    cl = c + float(n) * (_M.cast(_M.cast(-c / sz, np.int32), c.dtype) + 1.0)
    ch = c - float(n) * _M.cast(_M.cast(c / sz, np.int32), c.dtype)
    out = _M.where(c < 0, cl, _M.where(c > float(n - 1), ch, c))
    return _M.clip_by_value(out, 0.0, float(n - 1))


def _projective_transform(images, transforms, interpolation="bilinear", fill_mode="reflect", fill_value=0.0):
    """TF's ImageProjectiveTransformV3 for (batch, height, width, channels) float images: output
    pixel (y, x) reads the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),
    k = c0 x + c1 y + 1, per image's 8 parameters ``transforms`` (batch, 8); fill modes as TF.
    Composed of gathers, so it traces, and is differentiable in the images."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if interpolation not in ("bilinear", "nearest"):
        raise ValueError(f"image transform: interpolation must be 'bilinear' or 'nearest', got {interpolation!r}")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"image transform: fill_mode must be one of {', '.join(map(repr, _FILL_MODES))}, got "
                         f"{fill_mode!r}")
    b, h, w, c = tuple(x.shape)
    t = _M.cast(transforms if isinstance(transforms, Tensor) else convert_to_tensor(transforms), np.float32)
    t = _A.reshape(t, (-1, 8, 1))                                 # (batch, 8, 1): one column per image
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    xs, ys = xs.reshape(1, -1), ys.reshape(1, -1)                  # (1, h*w)
    k = t[:, 6] * xs + t[:, 7] * ys + 1.0
    sx = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k               # (batch, h*w)
    sy = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
    sx, sy = _map_coordinate(sx, w, fill_mode), _map_coordinate(sy, h, fill_mode)
    flat = _A.reshape(x, (-1, c))                                  # (batch*h*w, c)
    if b is None:   # an input_signature's None batch: each image's first row, from the batch size it runs with
        base = _A.expand_dims(_A.range(_A.shape(x)[0]) * (h * w), 1)
    else:
        base = (np.arange(b, dtype=np.int32) * (h * w)).reshape(-1, 1)
    fill = _M.cast(fill_value, x.dtype)

    def read(yy, xx):
        # the pixel at integer (yy, xx), or fill_value outside the image
        inside = (yy >= 0.0) & (yy <= float(h - 1)) & (xx >= 0.0) & (xx <= float(w - 1))
        yi = _M.cast(_M.clip_by_value(yy, 0.0, float(h - 1)), np.int32)
        xi = _M.cast(_M.clip_by_value(xx, 0.0, float(w - 1)), np.int32)
        v = _A.gather(flat, _A.reshape(base + yi * w + xi, (-1,)))  # (batch*h*w, c)
        return _M.where(_A.reshape(inside, (-1, 1)), v, fill)

    if interpolation == "nearest":
        # std::round as TF's kernel: halves away from zero (tf.round rounds them to even)
        def away(v):
            return _M.sign(v) * _M.floor(_M.abs(v) + 0.5)
        out = read(away(sy), away(sx))
    else:
        y0, x0 = _M.floor(sy), _M.floor(sx)
        y1, x1 = y0 + 1.0, x0 + 1.0
        wx1, wx0 = _A.reshape(sx - x0, (-1, 1)), _A.reshape(x1 - sx, (-1, 1))
        wy1, wy0 = _A.reshape(sy - y0, (-1, 1)), _A.reshape(y1 - sy, (-1, 1))
        top = wx0 * read(y0, x0) + wx1 * read(y0, x1)
        bottom = wx0 * read(y1, x0) + wx1 * read(y1, x1)
        out = wy0 * top + wy1 * bottom
    return _A.reshape(out, (-1 if b is None else b, h, w, c))


# -- colour spaces and colour adjustments ------------------------------------------------------
# All compose elementwise ops, so they trace and have gradients of every order (TF registers a
# gradient for RGBToHSV only; AdjustHue / AdjustSaturation have none).

def _rgb(fn, images, err=InvalidArgumentError):
    x = _three_channels(images if isinstance(images, Tensor) else convert_to_tensor(images))
    if x.shape.rank < 1 or tuple(x.shape)[-1] != 3:
        raise err(f"tf.image.{fn}: the last dimension of images must be of size 3 (RGB), got "
                                   f"shape {x.shape}")
    if not x.dtype.is_floating:
        raise InvalidArgumentTypeError(f"tf.image.{fn}: images of dtype {x.dtype.name} are not supported (TF takes float16, "
                        f"bfloat16, float32 or float64); use tf.image.convert_image_dtype(images, tf.float32)")
    return x


def _channels(x):
    return x[..., 0], x[..., 1], x[..., 2]


def _safe(d):
    # a denominator that is 1 where d == 0, so the masked-out branch of a where() has finite
    # values *and* finite gradients (a 0/0 there would put NaN into the cotangent)
    return _M.where(d > 0.0, d, _A.ones_like(d))


def _hsv(x):
    """TF's RGBToHSV kernel: h in [0, 1), s = range / max (0 for black), v = max."""
    r, g, b = _channels(x)
    dt = x.dtype.as_numpy_dtype
    v = _M.maximum(r, _M.maximum(g, b))
    rng = v - _M.minimum(r, _M.minimum(g, b))
    zero = _A.zeros_like(v)
    s = _M.where(v > 0.0, rng / _safe(v), zero)
    norm = _M.reciprocal(_safe(rng)) * dt(1.0 / 6.0)     # TF: range.inverse() * (1/6)
    h = _M.where(_M.equal(r, v), norm * (g - b),
                 _M.where(_M.equal(g, v), norm * (b - r) + dt(2.0 / 6.0), norm * (r - g) + dt(4.0 / 6.0)))
    h = _M.where(rng > 0.0, h, zero)
    h = _M.where(h < 0.0, h + dt(1.0), h)
    return h, s, v


def _from_hsv(h, s, v):
    """TF's HSVToRGB kernel: channel = v * (1 - s + s * d), d a clipped triangle wave of 6 h."""
    dh = h * 6.0
    dr = _M.clip_by_value(_M.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = _M.clip_by_value(2.0 - _M.abs(dh - 2.0), 0.0, 1.0)
    db = _M.clip_by_value(2.0 - _M.abs(dh - 4.0), 0.0, 1.0)
    one_s = 1.0 - s
    return _A.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], axis=-1)


def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] -> HSV, each in [0, 1] (hue 0 for grey pixels, saturation 0 for black)."""
    # FailedPreconditionError for a wrong channel count: TF 2.21's eager RGBToHSV kernel's class
    return _A.stack(list(_hsv(_rgb("rgb_to_hsv", images, FailedPreconditionError))), axis=-1)


def hsv_to_rgb(images, name=None):
    """HSV -> RGB (TF's formula; hue is periodic with period 1 only within [0, 1])."""
    return _from_hsv(*_channels(_rgb("hsv_to_rgb", images, FailedPreconditionError)))


def _via_float32(fn, images, body):
    """TF's adjust_hue / adjust_saturation / adjust_gamma: float16/float32 images directly, any
    other dtype converted to float32 and back with convert_image_dtype."""
    x = _three_channels(images if isinstance(images, Tensor) else convert_to_tensor(images))
    if x.shape.rank < 1 or tuple(x.shape)[-1] != 3:
        raise InvalidArgumentError(f"tf.image.{fn}: the last dimension of images must be of size 3 (RGB), got "
                                   f"shape {x.shape}")
    return _float32_detour(x, body, saturate=False)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the HSV saturation by ``saturation_factor``, clipped to [0, 1]."""
    def body(x):
        h, s, v = _hsv(x)
        s = _M.clip_by_value(s * _M.cast(saturation_factor, x.dtype), 0.0, 1.0)
        return _from_hsv(h, s, v)
    return _via_float32("adjust_saturation", image, body)


def adjust_hue(image, delta, name=None):
    """Rotates the hue by ``delta`` (a fraction of the colour circle, in [-1, 1]), keeping each
    pixel's min and max channel (TF's AdjustHue kernel works in hue sextants: the same map)."""
    def body(x):
        h, s, v = _hsv(x)
        h6 = h * 6.0 + _M.cast(delta, x.dtype) * 6.0
        h6 = h6 - 6.0 * _M.floor(h6 / 6.0)                   # into [0, 6), as TF's wrap loop
        r, g, b = _channels(x)
        lo = _M.minimum(r, _M.minimum(g, b))
        span = v - lo
        dr = _M.clip_by_value(_M.abs(h6 - 3.0) - 1.0, 0.0, 1.0)
        dg = _M.clip_by_value(2.0 - _M.abs(h6 - 2.0), 0.0, 1.0)
        db = _M.clip_by_value(2.0 - _M.abs(h6 - 4.0), 0.0, 1.0)
        return _A.stack([lo + span * dr, lo + span * dg, lo + span * db], axis=-1)
    return _via_float32("adjust_hue", image, body)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * image ** gamma``; integer images go through float32 and back (saturating), as TF."""
    if isinstance(gamma, (int, float, np.number)) and gamma < 0:
        raise ValueError("tf.image.adjust_gamma: Gamma should be a non-negative real number, got "
                         f"{gamma}")
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    return _float32_detour(x, lambda f: _M.cast(gain, f.dtype) * _M.pow(f, _M.cast(gamma, f.dtype)), saturate=True)


def _linear_colour(fn, images, kernel):
    x = _rgb(fn, images)
    k = np.asarray(kernel, dtype=x.dtype.as_numpy_dtype)
    return _M.tensordot(x, k, axes=[[x.shape.rank - 1], [0]])


# TF 2.21's matrices (image_ops_impl.py), rows = input channels
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def rgb_to_yiq(images):
    return _linear_colour("rgb_to_yiq", images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    return _linear_colour("yiq_to_rgb", images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    return _linear_colour("rgb_to_yuv", images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    return _linear_colour("yuv_to_rgb", images, _YUV_TO_RGB)


# -- random colour adjustments: one factor per call (per image batch, as TF) -------------------
# The random_* forms draw from tapeflow's op-seeded stream (not TF's bits); the stateless_* forms
# draw with tf.random.stateless_uniform, whose Philox numbers are TF's, so they give TF's images.

def _check_delta(fn, max_delta, hue=False):
    if hue and max_delta > 0.5:
        raise ValueError(f"tf.image.{fn}: max_delta must be <= 0.5, got {max_delta}")
    if max_delta < 0:
        raise ValueError(f"tf.image.{fn}: max_delta must be non-negative, got {max_delta}")


def _check_range(fn, lower, upper):
    if upper <= lower:
        raise ValueError(f"tf.image.{fn}: upper must be > lower, got lower={lower}, upper={upper}")
    if lower < 0:
        raise ValueError(f"tf.image.{fn}: lower must be non-negative, got lower={lower}")


def _draw(lo, hi, seed, stateless):
    from .ops import random_ops as _R
    if stateless:
        return _R.stateless_uniform((), seed=seed, minval=lo, maxval=hi)
    return _R.uniform((), minval=lo, maxval=hi, seed=seed)


def random_brightness(image, max_delta, seed=None):
    _check_delta("random_brightness", max_delta)
    return adjust_brightness(image, _draw(-max_delta, max_delta, seed, False))


def stateless_random_brightness(image, max_delta, seed):
    _check_delta("stateless_random_brightness", max_delta)
    return adjust_brightness(image, _draw(-max_delta, max_delta, seed, True))


def random_contrast(image, lower, upper, seed=None):
    _check_range("random_contrast", lower, upper)
    return adjust_contrast(image, _draw(lower, upper, seed, False))


def stateless_random_contrast(image, lower, upper, seed):
    _check_range("stateless_random_contrast", lower, upper)
    return adjust_contrast(image, _draw(lower, upper, seed, True))


def random_saturation(image, lower, upper, seed=None):
    _check_range("random_saturation", lower, upper)
    return adjust_saturation(image, _draw(lower, upper, seed, False))


def stateless_random_saturation(image, lower, upper, seed=None):
    _check_range("stateless_random_saturation", lower, upper)
    return adjust_saturation(image, _draw(lower, upper, seed, True))


def random_hue(image, max_delta, seed=None):
    _check_delta("random_hue", max_delta, hue=True)
    return adjust_hue(image, _draw(-max_delta, max_delta, seed, False))


def stateless_random_hue(image, max_delta, seed):
    _check_delta("stateless_random_hue", max_delta, hue=True)
    return adjust_hue(image, _draw(-max_delta, max_delta, seed, True))


# -- measures and geometry ---------------------------------------------------------------------

def sobel_edges(image):
    """(batch, h, w, d, 2): [dy, dx] of 3x3 Sobel filters per channel, on a REFLECT-padded image
    (TF's definition; here six shifted slices per direction instead of a depthwise conv)."""
    x = images = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if images.shape.rank != 4:
        raise InvalidArgumentError(f"tf.image.sobel_edges: the image must be 4-D (batch, height, width, channels), got "
                         f"shape {images.shape}")
    h, w = _hw(x, "sobel_edges")
    p = _A.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")

    def tap(i, j):
        return p[:, i:i + h, j:j + w, :]
    dy = (tap(2, 0) + 2.0 * tap(2, 1) + tap(2, 2)) - (tap(0, 0) + 2.0 * tap(0, 1) + tap(0, 2))
    dx = (tap(0, 2) + 2.0 * tap(1, 2) + tap(2, 2)) - (tap(0, 0) + 2.0 * tap(1, 0) + tap(2, 0))
    return _A.stack([dy, dx], axis=-1)


def _gauss(size, sigma):
    """TF's _fspecial_gauss in float32: a softmax of -(dy^2 + dx^2) / (2 sigma^2)."""
    c = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2.0)
    g = np.square(c) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g.reshape(1, -1) + g.reshape(-1, 1)).reshape(-1)
    e = np.exp(g - g.max())
    return (e / e.sum()).astype(np.float32).reshape(size, size)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2):
    shape = tuple(x.shape)
    if min(shape[-3:-1]) < filter_size:
        raise InvalidArgumentError(f"tf.image.ssim: the images (shape {x.shape}) must be at least filter_size "
                                   f"({filter_size}) high and wide; pass a smaller filter_size")
    from .ops import nn_ops as _N
    c = shape[-1]
    kernel = np.tile(_gauss(filter_size, filter_sigma)[:, :, None, None], (1, 1, c, 1))

    def reducer(t):
        t4 = _A.reshape(t, (-1,) + shape[-3:])
        r = _N.depthwise_conv2d(t4, kernel, strides=[1, 1, 1, 1], padding="VALID")
        if shape[:-3].count(None) == 1:   # (an input_signature's None batch: -1 in the reshape)
            return _A.reshape(r, tuple(-1 if d is None else d for d in shape[:-3]) + tuple(r.shape)[1:])
        return _A.reshape(r, shape[:-3] + tuple(r.shape)[1:])

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = _M.square(mean0) + _M.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(_M.square(x) + _M.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _ssim_inputs(fn, img1, img2, max_val):
    a = img1 if isinstance(img1, Tensor) else convert_to_tensor(img1)
    b = img2 if isinstance(img2, Tensor) else convert_to_tensor(img2)
    if a.shape.rank < 3 or tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"tf.image.{fn}: img1 and img2 must have the same shape, at least 3-D ([..., height, "
                         f"width, channels]), got {a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"tf.image.{fn}: img1 and img2 must have the same dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    # TF: max_val in the images' dtype, rescaled like the images to float32 ([0, 1] for integers)
    mv = convert_image_dtype(_M.cast(max_val, a.dtype), np.float32)
    return convert_image_dtype(a, np.float32), convert_image_dtype(b, np.float32), mv


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity per image (mean over channels of the mean over the VALID-filtered map),
    TF's Gaussian window (filter_size x filter_sigma), k1, k2; differentiable in both images."""
    a, b, mv = _ssim_inputs("ssim", img1, img2, max_val)
    lum, cs = _ssim_per_channel(a, b, mv, int(filter_size), float(filter_sigma), k1, k2)
    val = lum * cs
    if not return_index_map:
        val = _M.reduce_mean(val, axis=[-3, -2])
    return _M.reduce_mean(val, axis=[-1])


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """Resizes keeping the aspect ratio, then zero-pads to (target_height, target_width), with
    TF's float32 arithmetic for the resized size and the offsets."""
    x = _rank34("resize_with_pad", image)
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(f"tf.image.resize_with_pad: target_height and target_width must be > 0, got {th}, {tw}")
    H, W = _hw(x, "resize_with_pad")
    f32 = np.float32
    ratio = max(f32(W) / f32(tw), f32(H) / f32(th))
    rh, rw = f32(H) / ratio, f32(W) / ratio
    ph, pw = max(0, int(np.floor((f32(th) - rh) / f32(2)))), max(0, int(np.floor((f32(tw) - rw) / f32(2))))
    resized = resize(x, (int(np.floor(rh)), int(np.floor(rw))), method=method, antialias=antialias)
    return pad_to_bounding_box(resized, ph, pw, th, tw)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """(batch, out_rows, out_cols, kh * kw * depth): each patch flattened in (row, col, channel)
    order, as TF's ExtractImagePatches; one strided slice per kernel tap, so differentiable."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank != 4:
        raise ValueError(f"tf.image.extract_patches: images must be 4-D (batch, rows, cols, depth), got shape "
                         f"{x.shape}")
    quad = []
    for arg, v in (("sizes", sizes), ("strides", strides), ("rates", rates)):
        v = [int(e) for e in v]
        if len(v) == 4 and min(v) >= 1 and (v[0] != 1 or v[3] != 1):
            # TF 2.21: UnimplementedError "Only support ksizes across space"
            raise UnimplementedError(f"tf.image.extract_patches: {arg} must be [1, rows, cols, 1]: patches over "
                                     f"the batch or depth axes are not supported, got {v}")
        if len(v) != 4 or min(v) < 1:
            raise InvalidArgumentError(f"tf.image.extract_patches: {arg} must be [1, rows, cols, 1] with "
                                       f"positive entries (patches are taken over rows and cols only), got {v}")
        quad.append(v[1:3])
    (kh, kw), (sh, sw), (rh, rw) = quad
    padding = str(padding).upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"tf.image.extract_patches: padding must be 'VALID' or 'SAME', got {padding!r}")
    H, W = _hw(x, "extract_patches")
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1          # the dilated patch's extent
    if padding == "VALID":
        oh, ow = max(0, -(-(H - eh + 1) // sh)), max(0, -(-(W - ew + 1) // sw))
        top = left = 0
    else:
        oh, ow = -(-H // sh), -(-W // sw)
        ph, pw = max((oh - 1) * sh + eh - H, 0), max((ow - 1) * sw + ew - W, 0)
        top, left = ph // 2, pw // 2
        x = _A.pad(x, [[0, 0], [top, ph - top], [left, pw - left], [0, 0]])
    b, c = tuple(x.shape)[0], tuple(x.shape)[3]
    if oh == 0 or ow == 0:
        if b is None:   # an input_signature's None batch: empty slices keep it
            return _A.concat([x[:, :oh, :ow, :]] * (kh * kw), axis=-1)
        return _A.zeros((b, oh, ow, kh * kw * c), x.dtype)
    taps = [x[:, i * rh:i * rh + (oh - 1) * sh + 1:sh, j * rw:j * rw + (ow - 1) * sw + 1:sw, :]
            for i in range(kh) for j in range(kw)]
    return _A.concat(taps, axis=-1)


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0,
                    name=None):
    """TF's CropAndResize: box i = [y1, x1, y2, x2] (normalized) of image box_indices[i] sampled on a
    crop_size grid (bilinear or nearest), points outside the image = extrapolation_value; float32
    out. Composed of gathers: differentiable in the image and the boxes."""
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if x.shape.rank != 4:
        raise InvalidArgumentError(f"tf.image.crop_and_resize: image must be 4-D (batch, height, width, depth), "
                                   f"got shape {x.shape}")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"tf.image.crop_and_resize: method must be 'bilinear' or 'nearest', got {method!r}")
    bx = _M.cast(boxes if isinstance(boxes, Tensor) else convert_to_tensor(boxes), np.float32)
    bi = box_indices if isinstance(box_indices, Tensor) else convert_to_tensor(box_indices)
    if bx.shape.rank != 2 or tuple(bx.shape)[1] != 4 or bi.shape.rank != 1 or \
            tuple(bi.shape)[0] != tuple(bx.shape)[0]:
        raise InvalidArgumentError(f"tf.image.crop_and_resize: boxes must be (num_boxes, 4) and box_indices "
                                   f"(num_boxes,), got {bx.shape} and {bi.shape}")
    ch, cw = _size("crop_and_resize", crop_size)
    B, H, W, C = tuple(x.shape)
    from .ir.tracer import Tracer
    if not isinstance(bi, Tracer) and B is not None:
        # (traced ids, or a batch an input_signature leaves None: the gather below checks them when it runs)
        ids = np.asarray(bi.numpy())
        if ids.size and (ids.min() < 0 or ids.max() >= B):
            raise OutOfRangeError(f"tf.image.crop_and_resize: box_indices has values outside [0, {B}): "
                                       f"{ids.tolist()}")
    xf = _M.cast(x, np.float32)

    def coords(lo, hi, n_out, n_in):
        # (num_boxes, n_out) sample positions in pixels, TF's formula
        if n_out > 1:
            step = np.arange(n_out, dtype=np.float32).reshape(1, -1)
            scale = (hi - lo) * float(n_in - 1) / float(n_out - 1)
            return lo * float(n_in - 1) + step * scale
        return _A.tile(0.5 * (lo + hi) * float(n_in - 1), [1, n_out])

    ys = coords(bx[:, 0:1], bx[:, 2:3], ch, H)             # (n, ch)
    xs = coords(bx[:, 1:2], bx[:, 3:4], cw, W)             # (n, cw)
    inside = (_A.reshape((ys >= 0.0) & (ys <= float(H - 1)), (-1, ch, 1, 1)) &
              _A.reshape((xs >= 0.0) & (xs <= float(W - 1)), (-1, 1, cw, 1)))
    flat = _A.reshape(xf, (-1, C))
    base = _A.reshape(_M.cast(bi, np.int32) * (H * W), (-1, 1, 1))

    def read(yi, xi):
        # pixels at integer rows yi (n, ch) and cols xi (n, cw), clamped (outside is masked later)
        yi = _M.cast(_M.clip_by_value(yi, 0.0, float(H - 1)), np.int32)
        xi = _M.cast(_M.clip_by_value(xi, 0.0, float(W - 1)), np.int32)
        idx = base + _A.reshape(yi, (-1, ch, 1)) * W + _A.reshape(xi, (-1, 1, cw))
        return _A.gather(flat, idx)                        # (n, ch, cw, C)

    if method == "nearest":
        def away(v):   # roundf: halves away from zero
            return _M.sign(v) * _M.floor(_M.abs(v) + 0.5)
        out = read(away(ys), away(xs))
    else:
        y0, x0 = _M.floor(ys), _M.floor(xs)
        y1, x1 = _M.ceil(ys), _M.ceil(xs)
        ly = _A.reshape(ys - y0, (-1, ch, 1, 1))
        lx = _A.reshape(xs - x0, (-1, 1, cw, 1))
        tl, tr, bl, br = read(y0, x0), read(y0, x1), read(y1, x0), read(y1, x1)
        top = tl + (tr - tl) * lx
        bottom = bl + (br - bl) * lx
        out = top + (bottom - top) * ly
    return _M.where(inside, out, _M.cast(extrapolation_value, np.float32))


def _crop_at(x, offset, size):
    # offsets may be tensors (random): one gather of a contiguous index range per axis
    for ax, n in enumerate(size):
        if n != tuple(x.shape)[ax]:
            x = _A.gather(x, offset[ax] + np.arange(n, dtype=np.int32), axis=ax)
    return x


def _crop_args(fn, value, size):
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    sz = [int(s) for s in (size.numpy() if isinstance(size, Tensor) else np.asarray(size)).reshape(-1)]
    shape = tuple(x.shape)
    if len(sz) != len(shape) or any(s < 0 or (n is not None and s > n) for s, n in zip(sz, shape)):
        raise InvalidArgumentError(f"tf.image.{fn}: Need value.shape >= size (and one size per axis), got "
                                   f"value shape {list(shape)}, size {sz}")
    if None in shape:   # an input_signature's None: the offsets' range when the function runs (the crop's
        # slice checks value.shape >= size then)
        return x, sz, _M.maximum(_A.shape(x) - np.asarray(sz, np.int32) + np.int32(1), np.int32(1))
    limit = np.array([n - s + 1 for s, n in zip(sz, shape)], np.int32)
    return x, sz, limit


def random_crop(value, size, seed=None, name=None):
    """A ``size`` slice of ``value`` at a uniform random offset (tapeflow's stream: not TF's bits)."""
    from .ops import random_ops as _R
    x, sz, limit = _crop_args("random_crop", value, size)
    offset = _M.floormod(_R.uniform((len(sz),), maxval=np.iinfo(np.int32).max, dtype=np.int32, seed=seed), limit)
    return _crop_at(x, offset, sz)


def stateless_random_crop(value, size, seed, name=None):
    """As TF: offset = stateless_uniform(int32, [0, int32 max)) % (shape - size + 1), the same
    Philox draws as TF's, so TF's crop."""
    from .ops import random_ops as _R
    x, sz, limit = _crop_args("stateless_random_crop", value, size)
    draw = _R.stateless_uniform((len(sz),), seed=seed, maxval=np.iinfo(np.int32).max, dtype=np.int32)
    return _crop_at(x, _M.floormod(draw, limit), sz)


# -- non-maximum suppression -------------------------------------------------------------------

def _nms_keep(fn, boxes, scores, iou_threshold, score_threshold):
    """(order, keep): boxes in descending score order (ties: lower index first, as TF's queue)
    and TF's greedy decision for each, unrolled over the (static) number of boxes: box i is kept
    when its score > score_threshold and no kept higher-scoring box overlaps it with IoU >
    iou_threshold. O(n) equations of O(n) work each, so meant for the few hundred boxes NMS sees."""
    b = _M.cast(boxes if isinstance(boxes, Tensor) else convert_to_tensor(boxes), np.float32)
    s = _M.cast(scores if isinstance(scores, Tensor) else convert_to_tensor(scores), np.float32)
    if b.shape.rank != 2 or tuple(b.shape)[1] != 4:
        raise InvalidArgumentError(f"tf.image.{fn}: boxes must be 2-D (num_boxes, 4), got shape {b.shape}")
    n, ns = tuple(b.shape)[0], tuple(s.shape)[0] if s.shape.rank == 1 else -1
    if s.shape.rank != 1 or (n != ns and n is not None and ns is not None):
        raise InvalidArgumentError(f"tf.image.{fn}: scores must be 1-D with one score per box "
                                   f"({tuple(b.shape)[0]}), got shape {s.shape}")
    if isinstance(iou_threshold, (int, float)) and not 0.0 <= iou_threshold <= 1.0:
        raise InvalidArgumentError(f"tf.image.{fn}: iou_threshold must be in [0, 1], got {iou_threshold}")
    n = ns if n is None else n   # (one of them may be an input_signature's None)
    if n is None:   # the greedy decisions are unrolled over the boxes
        raise ValueError(f"tf.image.{fn}: the number of boxes is {_A._RUNTIME_SIZE}")
    order = _A.argsort(s, direction="DESCENDING", stable=True)
    b = _A.gather(b, order)
    ss = _A.gather(s, order)
    y1, x1, y2, x2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    ymin, ymax, xmin, xmax = _M.minimum(y1, y2), _M.maximum(y1, y2), _M.minimum(x1, x2), _M.maximum(x1, x2)
    over = _kernel_iou(ymin, xmin, ymax, xmax) > _M.cast(iou_threshold, np.float32)   # (n, n): j suppresses i
    valid = ss > _M.cast(score_threshold, np.float32)
    return order, ss, _greedy(over, valid)


def _intersections(ymin, xmin, ymax, xmax):
    """(the intersection area of every pair of boxes (..., n, n), each box's area (..., n)) for boxes
    given by their corners along the last axis."""
    def col(v):
        return _A.expand_dims(v, -1)

    def row(v):
        return _A.expand_dims(v, -2)
    inter = _M.maximum(_M.minimum(col(ymax), row(ymax)) - _M.maximum(col(ymin), row(ymin)), 0.0) * \
        _M.maximum(_M.minimum(col(xmax), row(xmax)) - _M.maximum(col(xmin), row(xmin)), 0.0)
    return inter, (ymax - ymin) * (xmax - xmin)


def _kernel_iou(ymin, xmin, ymax, xmax):
    """The pairwise IoU of TF's NMS kernels: 0 where either box has no area (no division by it)."""
    inter, area = _intersections(ymin, xmin, ymax, xmax)
    col, row = _A.expand_dims(area, -1), _A.expand_dims(area, -2)
    union = col + row - inter
    positive = (col > 0.0) & (row > 0.0)
    return _M.where(positive, inter / _M.where(positive, union, _A.ones_like(union)), _A.zeros_like(union))


def _max_out(fn, max_output_size):
    m = int(max_output_size.numpy() if isinstance(max_output_size, Tensor) else max_output_size)
    if m < 0:
        raise InvalidArgumentError(f"tf.image.{fn}: max_output_size must be >= 0, got {m}")
    return m


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    """Indices (int32) of at most max_output_size boxes kept by greedy NMS, in descending score
    order (TF's NonMaxSuppressionV3). The count depends on the values: traced, its dimension is
    unknown (as boolean_mask)."""
    m = _max_out("non_max_suppression", max_output_size)
    order, _, keep = _nms_keep("non_max_suppression", boxes, scores, iou_threshold, score_threshold)
    return _M.cast(_A.boolean_mask(order, keep)[:m], np.int32)


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """(indices, scores) as non_max_suppression; soft-NMS (soft_nms_sigma > 0) is not implemented."""
    if float(soft_nms_sigma) != 0.0:
        raise NotImplementedError("tf.image.non_max_suppression_with_scores: soft_nms_sigma > 0 (soft-NMS) is not "
                                  "implemented in tapeflow; use soft_nms_sigma=0.0")
    m = _max_out("non_max_suppression_with_scores", max_output_size)
    order, ss, keep = _nms_keep("non_max_suppression_with_scores", boxes, scores, iou_threshold, score_threshold)
    return _M.cast(_A.boolean_mask(order, keep)[:m], np.int32), _A.boolean_mask(ss, keep)[:m]


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)   # Wang et al. (2003), TF's defaults


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5,
                    k1=0.01, k2=0.03):
    """Multi-scale SSIM as TF: at each of len(power_factors) scales (2x2 average-pooled, odd sizes
    first SYMMETRIC-padded at the bottom/right) the mean contrast-structure term, the last scale's
    full SSIM, relu'd, raised to the power factors and multiplied; mean over channels."""
    from .ops import nn_ops as _N
    a, b, mv = _ssim_inputs("ssim_multiscale", img1, img2, max_val)
    head = tuple(a.shape)[:-3]
    mcs, val = [], None
    for k in range(len(power_factors)):
        if k > 0:
            h, w, c = tuple(a.shape)[-3:]
            pad = [[0, 0], [0, h % 2], [0, w % 2], [0, 0]]
            pooled = []
            for t in (a, b):
                t = _A.reshape(t, (-1, h, w, c))
                if h % 2 or w % 2:
                    t = _A.pad(t, pad, mode="SYMMETRIC")
                t = _N.avg_pool2d(t, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
                pooled.append(_A.reshape(t, head + tuple(t.shape)[1:]))
            a, b = pooled
        lum, cs = _ssim_per_channel(a, b, mv, int(filter_size), float(filter_sigma), k1, k2)
        val = _M.reduce_mean(lum * cs, axis=[-3, -2])
        mcs.append(_M.maximum(_M.reduce_mean(cs, axis=[-3, -2]), 0.0))
    mcs.pop()
    stacked = _A.stack(mcs + [_M.maximum(val, 0.0)], axis=-1)
    pf = np.asarray(power_factors, np.float32)
    return _M.reduce_mean(_M.reduce_prod(_M.pow(stacked, pf), axis=[-1]), axis=[-1])


def draw_bounding_boxes(images, boxes, colors, name=None):
    """TF's DrawBoundingBoxesV2: 1-pixel outlines of boxes[b] ([y1, x1, y2, x2], normalized) on
    image b, box i in colors[i % num_colors] (its first `depth` entries), later boxes on top. Box
    edges are ``int(coord * (size - 1))`` (truncated as the kernel's static_cast); boxes with
    y1 > y2 or x1 > x2, or wholly outside, are skipped; edges outside the image are not drawn.
    Composed of where()s per box, so it traces; the count of boxes is static."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape.rank != 4:
        raise InvalidArgumentError(f"tf.image.draw_bounding_boxes: images must be 4-D (batch, height, width, "
                                   f"depth), got shape {x.shape}")
    if not x.dtype.is_floating:
        raise InvalidArgumentTypeError(f"tf.image.draw_bounding_boxes: images must be float32 or float16, got "
                                       f"{x.dtype.name}")
    B, H, W, D = tuple(x.shape)
    if D not in (1, 3, 4):
        raise InvalidArgumentError(f"tf.image.draw_bounding_boxes: channel depth must be 1 (grey), 3 (RGB) or 4 "
                                   f"(RGBA), got {D}")
    bx = _M.cast(boxes if isinstance(boxes, Tensor) else convert_to_tensor(boxes), np.float32)
    if bx.shape.rank != 3 or tuple(bx.shape)[0] != B or tuple(bx.shape)[2] != 4:
        raise InvalidArgumentError(f"tf.image.draw_bounding_boxes: boxes must be (batch={B}, num_boxes, 4), got "
                                   f"shape {bx.shape}")
    col = np.asarray(colors.numpy() if isinstance(colors, Tensor) else colors, np.float32)
    if col.ndim != 2 or col.shape[0] == 0 or col.shape[1] < D:
        raise InvalidArgumentError(f"tf.image.draw_bounding_boxes: colors must be 2-D (num_colors, >= depth {D}) "
                                   f"with at least one colour, got shape {col.shape}")
    rows = np.arange(H, dtype=np.int64).reshape(1, H, 1)
    cols = np.arange(W, dtype=np.int64).reshape(1, 1, W)

    def edge(v, n):   # static_cast<int64>(float(box) * (n - 1)): truncation toward zero
        return _A.reshape(_M.cast(v * np.float32(n - 1), np.int64), (B, 1, 1))

    out = x
    for i in range(tuple(bx.shape)[1]):
        r0, c0 = edge(bx[:, i, 0], H), edge(bx[:, i, 1], W)
        r1, c1 = edge(bx[:, i, 2], H), edge(bx[:, i, 3], W)
        ok = (r0 <= r1) & (c0 <= c1) & (r0 < H) & (r1 >= 0) & (c0 < W) & (c1 >= 0)
        in_cols = (cols >= _M.maximum(c0, 0)) & (cols <= _M.minimum(c1, W - 1))
        in_rows = (rows >= _M.maximum(r0, 0)) & (rows <= _M.minimum(r1, H - 1))
        line = (((rows == r0) | (rows == r1)) & in_cols) | (((cols == c0) | (cols == c1)) & in_rows)
        mask = _A.reshape(ok & line, (B, H, W, 1))
        out = _M.where(mask, col[i % col.shape[0], :D].astype(x.dtype.as_numpy_dtype), out)
    return out


# the image codecs (tf.image.decode_png, ...; also tf.io's): tapeflow/image_codecs.py
from .image_codecs import (decode_image, decode_png, decode_jpeg, decode_gif, decode_bmp,  # noqa: E402,F401
                           decode_webp, decode_jxl, decode_and_crop_jpeg, is_jpeg, extract_jpeg_shape, encode_png,
                           encode_jpeg)
__all__ += ["stateless_random_flip_left_right", "stateless_random_flip_up_down", "decode_image", "decode_png",
            "decode_jpeg", "decode_gif", "decode_bmp", "decode_webp", "decode_jxl", "decode_and_crop_jpeg", "is_jpeg",
            "extract_jpeg_shape", "encode_png", "encode_jpeg"]


# -- wave 21: batched / padded / combined NMS ----------------------------------------------------

def _greedy(over, valid):
    """TF's greedy selection, vectorized over leading batch dims: ``over[..., j, i]`` says box j
    (earlier in score order) suppresses box i, ``valid[..., i]`` that i may be kept. Unrolled over the
    (static) number of boxes n: O(n) equations of O(n) work each, as ``_nms_keep``."""
    n = tuple(valid.shape)[-1]
    keep = []
    sup = None           # (..., n): suppressed by a box kept so far -- one O(n) update per box, rather than
    for i in range(n):   # re-stacking the kept flags each step (measured: 200 boxes x 10 classes, eager 1.06 s)
        k = valid[..., i] if sup is None else valid[..., i] & _M.logical_not(sup[..., i])
        if i + 1 < n:
            hit = _A.expand_dims(k, -1) & over[..., i, :]
            sup = hit if sup is None else sup | hit
        keep.append(k)
    if not keep:
        return _M.cast(_A.zeros(tuple(valid.shape)), np.bool_)
    return _A.stack(keep, axis=-1)


def _first_k(keep, values, k):
    """Per batch row, the ``values`` at the first k True positions of ``keep`` (..., n), zero-padded
    to k: a one-hot of each kept position's rank, so the shape stays static (traceable)."""
    rank = _M.cumsum(_M.cast(keep, np.int32), axis=-1) - 1
    slots = _A.reshape(np.arange(k, dtype=np.int32), (k, 1))
    hit = _A.expand_dims(keep, -2) & _M.equal(_A.expand_dims(rank, -2), slots)       # (..., k, n)
    return _M.reduce_sum(_M.cast(hit, values.dtype) * _A.expand_dims(values, -2), axis=-1)


def _f32(fn, x):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if np.dtype(x.dtype.as_numpy_dtype).kind != "f":
        raise InvalidArgumentTypeError(f"tf.image.{fn}: expected float boxes/scores, got {x.dtype.name} (cast them "
                                       f"with tf.cast(x, tf.float32))")
    return _M.cast(x, np.float32)


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """TF 2.21's padded (batched) NMS: ``(indices, num_valid)``; boxes ``[..., n, 4]``, scores ``[..., n]``.
    TF computes it with a tiled algorithm whose result is the greedy one with TF's own rules, which
    differ from ``non_max_suppression``'s and are kept here: IoU = inter / (union + 1e-8) (no
    zero-area test), a box is suppressed when IoU >= iou_threshold (not >), boxes with score <=
    score_threshold are zeroed, a kept box is output only when one of its coordinates is > 0, and
    (``canonicalized_coordinates=False``) the coordinate order of every box is taken from the first
    box's. ``sorted_input=True`` takes the boxes in the given order. Indices past num_valid are 0.
    ``tile_size`` only partitions TF's work: the result does not depend on it."""
    fn = "non_max_suppression_padded"
    b, s = _f32(fn, boxes), _f32(fn, scores)
    if b.shape.rank is None or b.shape.rank < 2 or tuple(b.shape)[-1] != 4:
        raise InvalidArgumentError(f"tf.image.{fn}: boxes must be [..., num_boxes, 4], got shape {b.shape}")
    if tuple(s.shape) != tuple(b.shape)[:-1]:
        raise InvalidArgumentError(f"tf.image.{fn}: scores must be [..., num_boxes] matching boxes {b.shape}, "
                                   f"got shape {s.shape}")
    if not pad_to_max_output_size and b.shape.rank > 2:
        raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched input")
    m = _max_out(fn, max_output_size)
    batch = _A._sizes_of(b)[:-2]   # (a batch an input_signature leaves None: its run-time size)
    n = tuple(b.shape)[-2]
    b = _A.reshape(b, (-1, n, 4))
    s = _A.reshape(s, (-1, n))
    if score_threshold != float("-inf"):
        live = s > _M.cast(score_threshold, np.float32)
        s = s * _M.cast(live, np.float32)
        b = b * _M.cast(_A.expand_dims(live, 2), np.float32)
    y1, x1, y2, x2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    if not canonicalized_coordinates and n:
        # TF's quirk: one decision for all boxes, from the first box of the first image
        ys, xs = y1[0, 0] <= y2[0, 0], x1[0, 0] <= x2[0, 0]
        y1, y2 = _M.where(ys, y1, y2), _M.where(ys, y2, y1)
        x1, x2 = _M.where(xs, x1, x2), _M.where(xs, x2, x1)
    b = _A.stack([y1, x1, y2, x2], axis=-1)
    if sorted_input:
        order = _A.broadcast_to(np.arange(n, dtype=np.int32), _A.shape(s) if None in tuple(s.shape) else tuple(s.shape))
    else:
        order = _M.cast(_A.argsort(s, axis=-1, direction="DESCENDING", stable=True), np.int32)
        b = _A.gather(b, order, axis=1, batch_dims=1)
    ymin, xmin, ymax, xmax = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    inter, area = _intersections(ymin, xmin, ymax, xmax)
    iou = inter / (_A.expand_dims(area, -1) + _A.expand_dims(area, -2) - inter + 1e-8)   # (TF's padded form)
    keep = _greedy(iou >= _M.cast(iou_threshold, np.float32), _A.ones_like(ymin) > 0)
    out = keep & _M.reduce_any(b > 0.0, axis=-1)
    num = _M.minimum(_M.reduce_sum(_M.cast(out, np.int32), axis=-1), m)
    idx = _first_k(out, order, m)
    if not pad_to_max_output_size:
        # the count depends on the values: a mask, so traced it is an unknown dimension
        return _A.boolean_mask(idx[0], _M.less(np.arange(m, dtype=np.int32), num[0])), num[0]
    return _A.reshape(idx, batch + [m]), _A.reshape(num, batch)


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Greedy NMS on a given (n, n) overlap matrix (TF's NonMaxSuppressionWithOverlaps): highest score
    first (ties: lower index), box i suppressed when ``overlaps[i, j] > overlap_threshold`` for a
    kept j, kept only when its score > score_threshold; int32 indices, at most max_output_size.
    Traced, the count is an unknown dimension (as non_max_suppression)."""
    fn = "non_max_suppression_overlaps"
    ov, s = _f32(fn, overlaps), _f32(fn, scores)
    if s.shape.rank != 1 or tuple(ov.shape) != (tuple(s.shape)[0],) * 2:
        raise InvalidArgumentError(f"tf.image.{fn}: overlaps must be square (num_boxes, num_boxes) and scores "
                                   f"(num_boxes,), got overlaps {ov.shape}, scores {s.shape}")
    m = _max_out(fn, max_output_size)
    order = _A.argsort(s, direction="DESCENDING", stable=True)
    ov = _A.gather(_A.gather(ov, order, axis=0), order, axis=1)
    # TF reads overlaps[candidate, selected]: kept j suppresses i when overlaps[i, j] > threshold (_greedy's
    # over[j, i]: the transpose; checked with an asymmetric matrix)
    keep = _greedy(_A.transpose(ov) > _M.cast(overlap_threshold, np.float32),
                   _A.gather(s, order) > _M.cast(score_threshold, np.float32))
    return _M.cast(_A.boolean_mask(order, keep)[:m], np.int32)


#: TF's result namedtuple
CombinedNonMaxSuppression = collections.namedtuple(
    "CombinedNonMaxSuppression", ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"])


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=float("-inf"), pad_per_class=False, clip_boxes=True, name=None):
    """TF's CombinedNonMaxSuppression: per image and class, greedy NMS (``non_max_suppression``'s
    rules: IoU > iou_threshold suppresses, zero-area boxes never overlap, score > score_threshold),
    at most max_output_size_per_class per class; then the images' survivors of all classes by
    descending score, the first max_total_size (or, ``pad_per_class``, min(max_total_size,
    max_output_size_per_class * num_classes)) of them, zero-padded. boxes ``[batch, n, q, 4]`` (q = 1:
    shared by all classes, or num_classes), scores ``[batch, n, num_classes]``. ``clip_boxes`` clips
    the output coordinates to [0, 1]. Classes are float32 (as TF). Equal scores across classes:
    TF's order is std::sort's (unspecified); here lower class, then earlier box, first."""
    fn = "combined_non_max_suppression"
    b, s = _f32(fn, boxes), _f32(fn, scores)
    if b.shape.rank != 4 or tuple(b.shape)[-1] != 4:
        raise InvalidArgumentError(f"tf.image.{fn}: boxes must be 4-D [batch, num_boxes, q, 4], got shape {b.shape}")
    bs, n, q, _ = tuple(b.shape)
    if s.shape.rank != 3 or tuple(s.shape)[:2] != (bs, n):
        raise InvalidArgumentError(f"tf.image.{fn}: scores must be 3-D [batch, num_boxes, num_classes] matching "
                                   f"boxes {b.shape}, got shape {s.shape}")
    c = tuple(s.shape)[2]
    if q not in (1, c):
        raise InvalidArgumentError(f"tf.image.{fn}: third dimension of boxes must be either 1 or num_classes ({c}), "
                                   f"got {q}")
    if isinstance(iou_threshold, (int, float)) and not 0.0 <= iou_threshold <= 1.0:
        raise InvalidArgumentError(f"tf.image.{fn}: iou_threshold must be in [0, 1], got {iou_threshold}")
    per = _max_out(fn, max_output_size_per_class)
    total = _max_out(fn, max_total_size)
    if total == 0:
        raise InvalidArgumentError(f"tf.image.{fn}: max_total_size must be > 0, got {total}")
    size = min(total, per * c) if pad_per_class else total
    sc = _A.transpose(s, (0, 2, 1))                                              # (B, C, n)
    order = _A.argsort(sc, axis=-1, direction="DESCENDING", stable=True)
    ss = _A.gather(sc, order, axis=2, batch_dims=2)
    bx = _A.broadcast_to(_A.transpose(b, (0, 2, 1, 3)), (bs, c, n, 4))          # (B, C, n, 4)
    bx = _A.gather(bx, order, axis=2, batch_dims=2)
    y1, x1, y2, x2 = bx[..., 0], bx[..., 1], bx[..., 2], bx[..., 3]
    ymin, ymax, xmin, xmax = _M.minimum(y1, y2), _M.maximum(y1, y2), _M.minimum(x1, x2), _M.maximum(x1, x2)
    iou = _kernel_iou(ymin, xmin, ymax, xmax)
    keep = _greedy(iou > _M.cast(iou_threshold, np.float32), ss > _M.cast(score_threshold, np.float32))
    keep = keep & (_M.cumsum(_M.cast(keep, np.int32), axis=-1) <= per)          # max_output_size_per_class
    # survivors of all classes, by descending score: top_k of the scores with the dropped at -inf
    flat = _A.reshape(_M.where(keep, ss, _A.fill(tuple(ss.shape), float("-inf"))), (bs, c * n))
    k = min(size, c * n)
    top, pos = _A.top_k(flat, k)
    nvalid = _M.minimum(_M.reduce_sum(_M.cast(keep, np.int32), axis=(1, 2)), size)
    live = _M.less(np.arange(k, dtype=np.int32), _A.expand_dims(nvalid, 1))            # (B, k)
    out_b = _A.gather(_A.reshape(bx, (bs, c * n, 4)), pos, axis=1, batch_dims=1)
    if clip_boxes:
        out_b = _M.minimum(_M.maximum(out_b, 0.0), 1.0)
    zero = _A.zeros_like(top)
    out_b = _M.where(_A.expand_dims(live, 2), out_b, _A.zeros_like(out_b))
    out_s = _M.where(live, top, zero)
    out_c = _M.where(live, _M.cast(pos // n, np.float32), zero)
    if k < size:
        pad = [[0, 0], [0, size - k]]
        out_b = _A.pad(out_b, pad + [[0, 0]])
        out_s, out_c = _A.pad(out_s, pad), _A.pad(out_c, pad)
    return CombinedNonMaxSuppression(out_b, out_s, out_c, nvalid)


# -- wave 21: sample_distorted_bounding_box -------------------------------------------------------

class _SimplePhilox:
    """TF's random::SimplePhilox over a PhiloxRandom(counter, key): 32-bit words in block order
    (counter low word 0, 1, ...), RandFloat from the low 23 bits, Uniform(n) by rejection of the
    words below 2**32 % n (TF's ExactUniformInt)."""

    def __init__(self, key, counter_hi):
        self.key, self.hi, self.block, self.words = key, counter_hi, 0, []

    def rand32(self):
        if not self.words:
            from .ops.philox import _blocks
            self.words = _blocks(self.block, self.hi, self.key, 16).ravel().tolist()
            self.block += 16
        return self.words.pop(0)

    def rand_float(self):
        from .ops.philox import _u32_to_float
        return _u32_to_float(np.uint32(self.rand32()))

    def uniform(self, n):
        rem = (1 << 32) % n
        while True:
            bits = self.rand32()
            if bits >= rem:
                return bits % n


def _lrintf(v):
    return int(np.rint(np.float32(v)))


def _random_crop(rng, width, height, min_rel, max_rel, aspect):
    """TF's GenerateRandomCrop (sample_distorted_bounding_box_op.cc), float32 arithmetic where TF's is
    float (lrintf rounds half to even, as np.rint): (x, y, w, h) or None."""
    f = np.float32
    if max_rel <= 0.0 or aspect <= 0.0 or width <= 0 or height <= 0 or min_rel > max_rel:
        return None
    min_area = f(f(min_rel) * f(width)) * f(height)
    max_area = f(f(max_rel) * f(width)) * f(height)
    h = _lrintf(np.sqrt(f(min_area / aspect)))
    max_h = _lrintf(np.sqrt(f(max_area / aspect)))
    if _lrintf(f(max_h) * aspect) > width:
        max_h = int((width + 0.5 - float(f(1e-7))) / float(aspect))   # double arithmetic, as TF's
        if _lrintf(f(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += rng.uniform(max_h - h + 1)
    w = _lrintf(f(h) * aspect)
    area = f(w * h)
    if area < min_area:        # rounding put the area out of range: one step bigger, then smaller
        h += 1
        w = _lrintf(f(h) * aspect)
        area = f(w * h)
    if area > max_area:
        h -= 1
        w = _lrintf(f(h) * aspect)
        area = f(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = rng.uniform(height - h) if h < height else 0
    x = rng.uniform(width - w) if w < width else 0
    return x, y, w, h


def _rect_area(x0, y0, x1, y1):
    return 0 if x0 > x1 or y0 > y1 else (x1 - x0) * (y1 - y0)


def _sample_box_np(fn, image_size, boxes, seed, min_object_covered, aspect_ratio_range, area_range, max_attempts,
                   use_image):
    image_size, boxes = np.asarray(image_size), np.asarray(boxes, np.float32)
    if image_size.shape != (3,):
        raise InvalidArgumentError(f"tf.image.{fn}: image_size must be 1-D with 3 elements [height, width, "
                                   f"channels], got shape {list(image_size.shape)}")
    if boxes.ndim == 0 or boxes.shape[-1] != 4:
        raise InvalidArgumentError(f"tf.image.{fn}: bounding boxes must have shape [4] or [*, 4], got "
                                   f"{list(boxes.shape)}")
    mc = float(np.asarray(min_object_covered))
    if mc < 0:
        raise InvalidArgumentError(f"tf.image.{fn}: Min object covered must be non-negative: {mc:g}")
    height, width = int(image_size[0]), int(image_size[1])
    if height <= 0 or width <= 0:
        raise InvalidArgumentError(f"tf.image.{fn}: image height and width must be positive, got "
                                   f"{image_size.tolist()}")
    rects = []
    for b in boxes.reshape(-1, 4):
        if not ((b >= 0) & (b <= 1)).all():
            raise InvalidArgumentError(f"tf.image.{fn}: All bounding box coordinates must be in [0.0, 1.0]: "
                                       f"{b[~((b >= 0) & (b <= 1))][0]:g}")
        rects.append((int(b[1] * np.float32(width)), int(b[0] * np.float32(height)),
                      int(b[3] * np.float32(width)), int(b[2] * np.float32(height))))
    if not rects:
        if not use_image:
            raise InvalidArgumentError(f"tf.image.{fn}: No bounding boxes provided as input. One must enable "
                                       "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.")
        rects.append((0, 0, width, height))
    from .ops.philox import _blocks
    s0, s1 = (int(v) % (1 << 64) for v in np.asarray(seed).reshape(-1)[:2])
    mix = _blocks(s0, s1, (0x3EC8F720, 0x02461E29), 1)[0].astype(np.uint64)   # TF's GenerateKey
    rng = _SimplePhilox((int(mix[0]), int(mix[1])), int(mix[2]) | (int(mix[3]) << 32))
    lo_a, hi_a = (np.float32(v) for v in aspect_ratio_range)
    crop = None
    for _ in range(int(max_attempts)):
        aspect = np.float32(rng.rand_float() * (hi_a - lo_a) + lo_a)
        c = _random_crop(rng, width, height, np.float32(area_range[0]), np.float32(area_range[1]), aspect)
        if c is None or c[2] * c[3] < 1:
            continue
        x, y, w, h = c
        for (bx0, by0, bx1, by1) in rects:
            obj = _rect_area(bx0, by0, bx1, by1)
            if obj < 1:
                continue
            inter = _rect_area(max(x, bx0), max(y, by0), min(x + w, bx1), min(y + h, by1))
            if np.float32(inter) / np.float32(obj) >= np.float32(mc):
                crop = c
                break
        if crop is not None:
            break
    x, y, w, h = crop if crop is not None else (0, 0, width, height)
    dt = image_size.dtype
    bbox = np.array([[[y / np.float32(height), x / np.float32(width), (y + h) / np.float32(height),
                       (x + w) / np.float32(width)]]], np.float32)
    return np.array([y, x, 0]).astype(dt), np.array([h, w, -1]).astype(dt), bbox


def _sample_box(fn, image_size, bounding_boxes, seed, min_object_covered, aspect_ratio_range, area_range,
                max_attempts, use_image_if_no_bounding_boxes):
    from .core.state import STATE
    aspect_ratio_range = (0.75, 1.33) if aspect_ratio_range is None else tuple(float(v) for v in aspect_ratio_range)
    area_range = (0.05, 1.0) if area_range is None else tuple(float(v) for v in area_range)
    max_attempts = 100 if max_attempts is None else int(max_attempts)
    if max_attempts <= 0:
        raise InvalidArgumentError(f"tf.image.{fn}: max_attempts must be positive, got {max_attempts}")
    if len(aspect_ratio_range) != 2 or len(area_range) != 2:
        raise InvalidArgumentError(f"tf.image.{fn}: aspect_ratio_range and area_range must have 2 elements, got "
                                   f"{aspect_ratio_range}, {area_range}")
    use = bool(use_image_if_no_bounding_boxes)
    size = image_size if isinstance(image_size, Tensor) else convert_to_tensor(image_size)
    if size.dtype.name not in ("uint8", "int8", "int16", "int32", "int64"):
        raise InvalidArgumentTypeError(f"tf.image.{fn}: image_size must be an integer tensor, got {size.dtype.name}")

    def run(sz, bb, sd, mc):
        return _sample_box_np(fn, sz, bb, sd, mc, aspect_ratio_range, area_range, max_attempts, use)
    args = [size, bounding_boxes, seed, min_object_covered]
    if STATE.trace is None:
        begin, sz, bbox = run(*[np.asarray(a.numpy() if isinstance(a, Tensor) else a) for a in args])
        return Tensor(begin), Tensor(sz), Tensor(bbox)
    from .compiler.function import TensorSpec
    from .ops.script_ops import numpy_function
    outs = numpy_function(run, args, [TensorSpec([3], size.dtype), TensorSpec([3], size.dtype),
                                      TensorSpec([1, 1, 4], _dt.float32)])
    return tuple(outs)


def stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed, min_object_covered=0.1,
                                            aspect_ratio_range=None, area_range=None, max_attempts=None,
                                            use_image_if_no_bounding_boxes=None, name=None):
    """TF's StatelessSampleDistortedBoundingBox, bit for bit: TF's Philox words for ``seed`` (its
    GenerateKey, SimplePhilox) feed TF's rejection loop (GenerateRandomCrop, then the overlap test);
    ``(begin, size, bboxes)`` with begin/size in image_size's dtype, bboxes float32 [1, 1, 4]. After
    max_attempts failures the crop is the whole image (as TF)."""
    return _sample_box("stateless_sample_distorted_bounding_box", image_size, bounding_boxes, seed,
                       min_object_covered, aspect_ratio_range, area_range, max_attempts,
                       use_image_if_no_bounding_boxes)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=0, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """TF's sample_distorted_bounding_box (v2): the stateless algorithm fed by a seed pair drawn from
    tapeflow's random stream (``seed`` as tf.random ops' op seed): TF's distribution, not TF's draws
    (its stateful op seeds a Philox of its own, wave 19's rule)."""
    from .ops import random_ops as _R
    pair = _R.uniform((2,), maxval=np.iinfo(np.int32).max, dtype=np.int32, seed=(seed or None))
    return _sample_box("sample_distorted_bounding_box", image_size, bounding_boxes, pair, min_object_covered,
                       aspect_ratio_range, area_range, max_attempts, use_image_if_no_bounding_boxes)


# -- wave 21: extract_glimpse ---------------------------------------------------------------------

def extract_glimpse(input, size, offsets, centered=True, normalized=True, noise="uniform", name=None):  # noqa: A002
    """TF 2.21's extract_glimpse (ExtractGlimpseV2): per image, the (h, w) window whose top-left pixel is
    ``(int(y), int(x))`` (truncation toward zero) where (y, x) = offsets scaled by the image size when
    ``normalized`` and, when ``centered``, shifted by half the image (and, normalized and centered,
    by minus half the window, as TF). Pixels outside the image are ``noise``: "zero"; "uniform" in the
    image's [min, max]; "gaussian" with each channel's mean and standard deviation -- TF's
    distribution, tapeflow's draws (TF's come from Eigen's generator). Float32 out, as TF."""
    fn = "extract_glimpse"
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    if x.shape.rank != 4:
        raise InvalidArgumentError(f"tf.image.{fn}: input must be 4-dimensional (batch_size, height, width, depth), "
                                   f"got shape {x.shape}")
    if noise not in ("uniform", "gaussian", "zero", ""):
        raise InvalidArgumentError(f"tf.image.{fn}: The noise could only be uniform, gaussian, or zero, got {noise}")
    sz = np.asarray(size.numpy() if isinstance(size, Tensor) else size).reshape(-1)
    if sz.shape != (2,):
        raise InvalidArgumentError(f"tf.image.{fn}: size must be a vector of size 2 (height, width), got {sz.tolist()}")
    h, w = int(sz[0]), int(sz[1])
    x = _M.cast(x, np.float32)
    b, hh, ww, ch = tuple(x.shape)
    off = _M.cast(offsets if isinstance(offsets, Tensor) else convert_to_tensor(offsets), np.float32)
    if off.shape.rank != 2 or tuple(off.shape)[0] != b or tuple(off.shape)[1] != 2:
        raise InvalidArgumentError(f"tf.image.{fn}: offsets must be (batch, 2) with (y, x) per image: first dimension "
                                   f"should be batch ({b}), second of size 2, got shape {off.shape}")
    oy, ox = off[:, 0], off[:, 1]
    f = np.float32
    if normalized:
        oy, ox = oy * f(hh), ox * f(ww)
        if centered:
            oy = oy / f(2) + f(hh / 2.0) - f(h / 2.0)
            ox = ox / f(2) + f(ww / 2.0) - f(w / 2.0)
    elif centered:
        oy, ox = oy + f(hh / 2.0), ox + f(ww / 2.0)
    rows = _A.expand_dims(_M.cast(oy, np.int32), 1) + np.arange(h, dtype=np.int32)      # (b, h), truncated
    cols = _A.expand_dims(_M.cast(ox, np.int32), 1) + np.arange(w, dtype=np.int32)
    rin = (rows >= 0) & (rows < hh)
    cin = (cols >= 0) & (cols < ww)
    g = _A.gather(x, _M.minimum(_M.maximum(rows, 0), max(hh - 1, 0)), axis=1, batch_dims=1)
    g = _A.transpose(_A.gather(_A.transpose(g, (0, 2, 1, 3)), _M.minimum(_M.maximum(cols, 0), max(ww - 1, 0)),
                               axis=1, batch_dims=1), (0, 2, 1, 3))
    inside = _A.reshape(rin, (b, h, 1, 1)) & _A.reshape(cin, (b, 1, w, 1))
    if noise == "uniform":
        from .ops import random_ops as _R
        lo = _M.reduce_min(x, axis=(1, 2, 3), keepdims=True)
        fill = lo + _R.uniform((b, h, w, ch)) * (_M.reduce_max(x, axis=(1, 2, 3), keepdims=True) - lo)
    elif noise == "gaussian":
        from .ops import random_ops as _R
        mean = _M.reduce_mean(x, axis=(1, 2), keepdims=True)
        sd = _M.sqrt(_M.reduce_mean(_M.square(x - mean), axis=(1, 2), keepdims=True))
        fill = mean + _R.normal((b, h, w, ch)) * sd
    else:
        fill = _A.zeros_like(g)
    return _M.where(inside, g, fill)


# -- wave 21: JPEG quality (through tf.io's Pillow codecs) -----------------------------------------------------

def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """TF's adjust_jpeg_quality: the (H, W, 1|3) image as uint8 (convert_image_dtype, saturating), JPEG-encoded
    at ``jpeg_quality`` and decoded, back in its dtype. The encoder is Pillow's libjpeg(-turbo) with TF's
    settings: the bytes equal TF's (checked on the tests' images at qualities 10/50/90), so with
    ``dct_method="INTEGER_ACCURATE"`` the pixels are TF's; TF's default decode uses the fast IDCT, which
    Pillow does not offer: pixels then within a few levels of TF's (docs/differences.md). Not
    differentiable (nor is TF's). Traced: one numpy_function."""
    from .core.state import STATE
    from .image_codecs import decode_jpeg, encode_jpeg
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if x.shape.rank != 3:
        raise InvalidArgumentError(f"tf.image.adjust_jpeg_quality: image must be 3-dimensional (height, width, "
                                   f"channels), got shape {x.shape}")
    h, w, c = tuple(x.shape)
    if c not in (1, 3):
        raise InvalidArgumentError(f"tf.image.adjust_jpeg_quality: image must have 1 or 3 channels, got {c}")
    orig = x.dtype
    u8 = convert_image_dtype(x, _dt.uint8, saturate=True)
    q = jpeg_quality if isinstance(jpeg_quality, Tensor) else convert_to_tensor(np.int32(jpeg_quality))

    def run(a, qq):
        qq = int(np.asarray(qq))
        if not 0 <= qq <= 100:
            raise InvalidArgumentError(f"tf.image.adjust_jpeg_quality: quality must be in [0,100], got {qq}")
        return decode_jpeg(encode_jpeg(Tensor(np.asarray(a, np.uint8)), quality=qq), channels=c).numpy()
    if STATE.trace is None:
        y = Tensor(run(u8.numpy(), q.numpy()))
    else:
        from .compiler.function import TensorSpec
        from .ops.script_ops import numpy_function
        y = numpy_function(run, [u8, q], TensorSpec([h, w, c], _dt.uint8))
    return convert_image_dtype(y, orig, saturate=True)


def _jpeg_range(fn, lo, hi):
    if lo < 0 or hi < 0 or lo > 100 or hi > 100:
        raise ValueError(f"tf.image.{fn}: jpeg encoding range must be between 0 and 100, got [{lo}, {hi})")
    if lo >= hi:
        raise ValueError(f"tf.image.{fn}: `min_jpeg_quality` must be less than `max_jpeg_quality`, got {lo}, {hi}")


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """adjust_jpeg_quality at a quality uniform in [min, max) (tapeflow's stream: TF's law, not its draw)."""
    from .ops import random_ops as _R
    _jpeg_range("random_jpeg_quality", min_jpeg_quality, max_jpeg_quality)
    q = _R.uniform((), minval=min_jpeg_quality, maxval=max_jpeg_quality, dtype=np.int32, seed=seed)
    return adjust_jpeg_quality(image, q)


def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed):
    """adjust_jpeg_quality at TF's quality for ``seed`` (stateless_uniform int32: TF's Philox draw)."""
    from .ops import random_ops as _R
    _jpeg_range("stateless_random_jpeg_quality", min_jpeg_quality, max_jpeg_quality)
    q = _R.stateless_uniform((), seed=seed, minval=min_jpeg_quality, maxval=max_jpeg_quality, dtype=np.int32)
    return adjust_jpeg_quality(image, q)


# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("image", "tapeflow.image")
