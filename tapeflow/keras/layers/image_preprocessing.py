"""Keras 3's image preprocessing layers that tf.image's resizing makes possible (channels_last):
Resizing, CenterCrop, RandomFlip, RandomCrop, RandomContrast, RandomBrightness, and the affine
ones RandomRotation, RandomZoom and RandomTranslation (tf.image's projective transform: TF's
sampling and fill modes). Wave 19 adds the rest of Keras 3's augmentation layers: the colour
ones (RandomGrayscale, RandomHue, RandomSaturation, RandomColorJitter, RandomColorDegeneration,
RandomInvert, RandomPosterization, Solarization, RandomSharpness, AutoContrast, Equalization),
RandomErasing, RandomGaussianBlur, RandomShear, RandomPerspective (Keras' homography), MixUp,
CutMix, Pipeline, RandAugment, AugMix, and tf.keras' legacy RandomHeight/RandomWidth. Each
follows its Keras 3 source's map, quirks included (documented per class); all are composed of
tapeflow ops, so a compiled step draws fresh numbers per call. The random ones act when
``training`` is true, which is their call's default, as in Keras 3 (a direct call augments;
``predict``/``evaluate`` and ``training=False`` do not; AutoContrast always applies, as Keras');
their draws are not TF's bits."""
from __future__ import annotations

import numpy as np

from ...core.primitive import aval_of
from ...core.tensor import Tensor
from ...ops import array_ops as A
from ...ops import math_ops as M
from ...ops import random_ops as R
from ... import image as _image
from ..engine import Layer
from .conv import _data_format
from .core import SeedStream

__all__ = ["Resizing", "CenterCrop", "RandomFlip", "RandomCrop", "RandomContrast", "RandomBrightness",
           "RandomRotation", "RandomZoom", "RandomTranslation"]


def _hw(x):
    s = aval_of(x).shape
    if len(s) not in (3, 4):
        raise ValueError(f"expected images of shape (height, width, channels) or (batch, height, width, channels), "
                         f"got shape {tuple(s)}")
    return s[-3], s[-2]


def _crop_box(h, w, th, tw):
    """Keras' smart_resize crop: the largest centred box with the target's aspect ratio."""
    ch = max(min(h, int(float(w * th) / tw)), 1)
    cw = max(min(w, int(float(h * tw) / th)), 1)
    return int(float(h - ch) / 2), int(float(w - cw) / 2), ch, cw


def _smart_resize(x, th, tw, interpolation="bilinear"):
    h, w = _hw(x)
    oh, ow, ch, cw = _crop_box(h, w, th, tw)
    return _image.resize(x[..., oh:oh + ch, ow:ow + cw, :], (th, tw), method=interpolation)


def _back_to(resized, dtype):
    """Keras casts a resized integer image back, rounding and saturating."""
    if aval_of(resized).dtype == dtype:
        return resized
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        resized = M.clip_by_value(M.round(resized), float(info.min), float(info.max))
    return M.cast(resized, dtype)


def _n_images(batch):
    """The batch's image count: its static size, or (an input_signature's None batch) the traced size, which
    the layers' per-image draws take as their run-time dimension."""
    n = aval_of(batch).shape[0]
    return A.shape(batch)[0] if n is None else n


class _ImageLayer(SeedStream, Layer):

    def __init__(self, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(type(self).__name__, data_format)
        self._set_seed(seed)

    def _uniform(self, shape):
        return self._generator().uniform(shape, dtype=np.float32)

    def _per_image(self, x):
        """One uniform draw per image: shape (batch, 1, 1, 1), or (1, 1, 1) for one image."""
        s = aval_of(x).shape
        return self._uniform((1, 1, 1) if len(s) == 3 else (_n_images(x), 1, 1, 1))

    def call(self, inputs, training=True):
        # the random layers: augment when training (the call's default, as Keras 3), pass the
        # images (in the layer's dtype) otherwise; a boolean tensor selects per call
        x = M.cast(inputs, self._np_dtype)
        if training is None or training is False:
            return x
        _hw(x)
        out = self._augment(x)
        return M.where(training, out, x) if isinstance(training, Tensor) else out

    def compute_output_shape(self, input_shape):
        return input_shape


class Resizing(_ImageLayer):
    """Resizes to (height, width) with tf.image.resize ('bilinear' or 'nearest');
    ``crop_to_aspect_ratio`` first takes the largest centred crop of the target's aspect
    ratio, ``pad_to_aspect_ratio`` pads with ``fill_value`` to it instead."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                 fill_mode="constant", fill_value=0.0, antialias=False, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Resizing: only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True")
        if fill_mode != "constant":
            raise ValueError(f"Resizing: fill_mode must be 'constant', got {fill_mode!r}")
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = bool(crop_to_aspect_ratio), bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value, self.antialias = fill_mode, float(fill_value), bool(antialias)

    def call(self, inputs):
        dt = aval_of(inputs).dtype
        x = inputs
        if self.crop_to_aspect_ratio:
            out = _smart_resize(x, self.height, self.width, self.interpolation)
        else:
            if self.pad_to_aspect_ratio:
                h, w = _hw(x)
                ph = max(h, int(float(w * self.height) / self.width))
                pw = max(w, int(float(h * self.width) / self.height))
                # Keras pads int((ph - h) / 2) on BOTH sides: an odd difference leaves the
                # image one short of the target's aspect ratio (TF 2.21's numbers)
                top, left = int(float(ph - h) / 2), int(float(pw - w) / 2)
                pads = [[top, top], [left, left], [0, 0]]
                x = A.pad(x, ([[0, 0]] if len(aval_of(x).shape) == 4 else []) + pads,
                          constant_values=self.fill_value)
            out = _image.resize(x, (self.height, self.width), method=self.interpolation, antialias=self.antialias)
        return _back_to(out, dt)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-3]) + (self.height, self.width, input_shape[-1])

    def get_config(self):
        cfg = super().get_config()
        cfg.update(data_format=self.data_format, height=self.height, width=self.width,
                   interpolation=self.interpolation, crop_to_aspect_ratio=self.crop_to_aspect_ratio,
                   pad_to_aspect_ratio=self.pad_to_aspect_ratio, fill_mode=self.fill_mode,
                   fill_value=self.fill_value, antialias=self.antialias)
        return cfg


class CenterCrop(_ImageLayer):
    """The central (height, width) crop; an image smaller than that is cropped to the target's
    aspect ratio and resized (Keras' smart_resize)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs):
        x = M.cast(inputs, self._np_dtype)
        h, w = _hw(x)
        dh, dw = h - self.height, w - self.width
        if dh >= 0 and dw >= 0:
            return x[..., dh // 2:dh // 2 + self.height, dw // 2:dw // 2 + self.width, :]
        return _smart_resize(x, self.height, self.width)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-3]) + (self.height, self.width, input_shape[-1])

    def get_config(self):
        cfg = super().get_config()
        cfg.update(data_format=self.data_format, height=self.height, width=self.width)
        return cfg


class RandomFlip(_ImageLayer):
    """Flips each image with probability 1/2: 'horizontal', 'vertical', or
    'horizontal_and_vertical' (one draw for both axes, as Keras 3: a 180-degree turn or nothing)."""

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        if mode not in self._MODES:
            raise ValueError(f"RandomFlip: mode must be one of {', '.join(map(repr, self._MODES))}, got {mode!r}")
        self.mode = mode

    def _augment(self, x):
        flips = M.less_equal(self._per_image(x), 0.5)
        out = x
        if self.mode != "vertical":
            out = M.where(flips, A.reverse(out, [-2]), out)
        if self.mode != "horizontal":
            out = M.where(flips, A.reverse(out, [-3]), out)
        return out

    def get_config(self):
        cfg = super().get_config()
        cfg.update(seed=self.seed, mode=self.mode, data_format=self.data_format)
        return cfg


class RandomCrop(_ImageLayer):
    """In training, a (height, width) crop at a random offset (one offset per call, as Keras 3);
    an image not larger than that on both sides gets Keras' centred crop of the target's aspect
    ratio, resized. Outside training the images pass unchanged (Keras 3)."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, name=name, **kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs, training=True):
        if training is None or training is False:
            return inputs
        x = M.cast(inputs, self._np_dtype)
        h, w = _hw(x)
        th, tw = self.height, self.width
        if h > th and w > tw:
            # the offset is a tensor, so a traced step draws a new crop each call (a Python
            # int drawn at trace time would crop the same window every step)
            u = self._uniform((2,))
            top = M.minimum(M.cast(M.floor(u[0] * float(h - th + 1)), np.int32), h - th)
            left = M.minimum(M.cast(M.floor(u[1] * float(w - tw + 1)), np.int32), w - tw)
            out = A.gather(A.gather(x, top + np.arange(th, dtype=np.int32), axis=-3),
                           left + np.arange(tw, dtype=np.int32), axis=-2)
        else:
            top, left, _, _ = _crop_box(h, w, th, tw)
            out = x[..., top:top + th, left:left + tw, :]
            if tuple(aval_of(out).shape)[-3:-1] != (th, tw):
                out = _image.resize(out, (th, tw))
        if isinstance(training, Tensor):
            raise TypeError("RandomCrop: `training` must be a Python bool: the output's shape depends on it")
        return out

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-3]) + (self.height, self.width, input_shape[-1])

    def get_config(self):
        cfg = super().get_config()
        cfg.update(height=self.height, width=self.width, seed=self.seed, data_format=self.data_format)
        return cfg


def _factor(layer, factor, bounds):
    """Keras' _set_factor: a number f -> (max(-|f|, low), |f|); a pair -> sorted."""
    msg = (f"{layer}: the `factor` argument should be a number (or a list of two numbers) in the range "
           f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor!r}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(msg)
        return tuple(sorted(float(f) for f in factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if not bounds[0] <= factor <= bounds[1]:
            raise ValueError(msg)
        f = abs(float(factor))
        return max(-f, float(bounds[0])), f
    raise ValueError(msg)


def _value_range(layer, value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{layer}: the `value_range` argument should be a list of two numbers. Received: "
                         f"value_range={value_range!r}")
    return tuple(sorted(float(v) for v in value_range))


class _PerImage(_ImageLayer):
    """A random number per image (shape (batch, 1, 1, 1), or (1, 1, 1) for one image), applied
    when training (the call's default, as Keras 3), then clipped to ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor(type(self).__name__, factor, self._BOUNDS)
        self.value_range = _value_range(type(self).__name__, value_range)

    def _augment(self, x):
        return M.clip_by_value(self._apply(x, self._per_image(x)), self.value_range[0], self.value_range[1])

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, value_range=self.value_range, seed=self.seed)
        return cfg


class RandomContrast(_PerImage):
    """``(x - mean) * f + mean`` with f uniform in [1 - lower, 1 + upper] per image (the mean per
    image and channel), clipped to ``value_range``."""

    _BOUNDS = (0, 1)

    def _apply(self, x, u):
        f = M.cast((1.0 - self.factor[0]) + u * (self.factor[1] + self.factor[0]), aval_of(x).dtype)
        mean = M.reduce_mean(M.reduce_mean(x, axis=-3, keepdims=True), axis=-2, keepdims=True)
        return (x - mean) * f + mean


class RandomBrightness(_PerImage):
    """Adds ``d * (value_range[1] - value_range[0])`` with d uniform in [lower, upper] per image,
    clipped to ``value_range``."""

    _BOUNDS = (-1, 1)

    def _apply(self, x, u):
        lo, hi = self.factor
        d = (lo + u * (hi - lo)) * (self.value_range[1] - self.value_range[0])
        return x + M.cast(d, aval_of(x).dtype)


def _pm_factor(layer, what, factor):
    """Keras' zoom/translation factors: f -> (-|f|, |f|), a pair sorted; each within [-1, 1]."""
    pair = tuple(factor) if isinstance(factor, (tuple, list)) else None
    vals = pair if pair is not None else (factor,)
    if (pair is not None and len(pair) != 2) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                        for v in vals):
        raise ValueError(f"{layer}: the `{what}` argument should be a number (or a list of two numbers) in the "
                         f"range [-1.0, 1.0]. Received: {what}={factor!r}")
    if any(v > 1.0 or v < -1.0 for v in vals):
        raise ValueError(f"{layer}: the `{what}` argument should be a number (or a list of two numbers) in the "
                         f"range [-1.0, 1.0]. Received: {what}={factor!r}")
    return tuple(sorted(float(v) for v in pair)) if pair else (-abs(float(factor)), abs(float(factor)))


class _Affine(_ImageLayer):
    """Per-image random affine maps applied with tf.image's projective transform; identity
    outside training."""

    _FILL = ("reflect", "wrap", "constant", "nearest")

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        name = type(self).__name__
        if fill_mode not in self._FILL:
            raise NotImplementedError(f"{name}: unknown `fill_mode` {fill_mode!r}. Expected one of {self._FILL}")
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"{name}: unknown `interpolation` {interpolation!r}. Expected one of "
                                      "('nearest', 'bilinear')")
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, float(fill_value)

    def _augment(self, x):
        one = len(aval_of(x).shape) == 3
        batch = A.expand_dims(x, 0) if one else x
        h, w = aval_of(batch).shape[1:3]
        out = _image._projective_transform(batch, self._matrices(_n_images(batch), h, w), self.interpolation,
                                           self.fill_mode,
                                           self.fill_value)
        return A.squeeze(out, 0) if one else out

    def _draw(self, n, lo, hi):
        return lo + self._uniform((n,)) * (hi - lo)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(fill_mode=self.fill_mode, interpolation=self.interpolation, seed=self.seed,
                   fill_value=self.fill_value, data_format=self.data_format)
        return cfg


class RandomRotation(_Affine):
    """Rotates each image by ``factor * 360`` degrees drawn uniformly (factor f: [-f, f]) about
    its centre (Keras 3's affine matrix)."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = _factor("RandomRotation", factor, (-1, 1))

    def _matrices(self, n, h, w):
        angle = self._draw(n, self.factor[0] * 360.0, self.factor[1] * 360.0) * float(np.pi / 180.0)
        cos, sin = M.cos(angle), M.sin(angle)
        cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
        zeros = A.zeros_like(cos)
        return A.stack([cos, -sin, cx - cx * cos + cy * sin, sin, cos, cy - cx * sin - cy * cos, zeros, zeros],
                       axis=1)

    def get_config(self):
        cfg = super().get_config()
        cfg["factor"] = self.factor
        return cfg


class RandomZoom(_Affine):
    """Zooms each image by 1 + z, z uniform in the factor's range (negative zooms in, Keras'
    sign), about its centre; width_factor None keeps the aspect ratio."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = _pm_factor("RandomZoom", "height_factor", height_factor)
        self.width_factor = None if width_factor is None else _pm_factor("RandomZoom", "width_factor", width_factor)

    def _matrices(self, n, h, w):
        zy = self._draw(n, 1.0 + self.height_factor[0], 1.0 + self.height_factor[1])
        zx = zy if self.width_factor is None else self._draw(n, 1.0 + self.width_factor[0], 1.0 + self.width_factor[1])
        zeros = A.zeros_like(zx)
        return A.stack([zx, zeros, (w - 1) / 2.0 * (1.0 - zx), zeros, zy, (h - 1) / 2.0 * (1.0 - zy), zeros, zeros],
                       axis=1)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(height_factor=self.height_factor, width_factor=self.width_factor)
        return cfg


class RandomTranslation(_Affine):
    """Shifts each image by fractions of its height and width drawn from the factors' ranges."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = _pm_factor("RandomTranslation", "height_factor", height_factor)
        self.width_factor = _pm_factor("RandomTranslation", "width_factor", width_factor)

    def _matrices(self, n, h, w):
        ty = self._draw(n, *self.height_factor) * float(h)
        tx = self._draw(n, *self.width_factor) * float(w)
        ones, zeros = A.ones_like(tx), A.zeros_like(tx)
        return A.stack([ones, zeros, -tx, zeros, ones, -ty, zeros, zeros], axis=1)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(height_factor=self.height_factor, width_factor=self.width_factor)
        return cfg


# ---------------------------------------------------------------------------------------------
# Keras 3's colour augmentation layers (wave 19). Each follows its Keras 3 source's math
# (keras/src/layers/preprocessing/image_preprocessing/*.py), including its quirks, so a ported
# program sees TF's images: the draws are tapeflow's (per image, fresh per compiled call), the
# map given a draw is Keras'. Images are channels_last; a single (h, w, c) image is handled as a
# batch of one, as Keras' transform_single_image.

_VR_MSG = "The `value_range` argument should be a list of two numbers. Received: value_range={!r}"


def _sorted_range(layer, value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(f"{layer}: " + _VR_MSG.format(value_range))
    return tuple(sorted(float(v) for v in value_range))


def _to_range(x, src, dst):
    """Keras' _transform_value_range: identity when the ranges are equal, else an affine map
    through [0, 1] (in that order of operations, for TF's bits)."""
    if tuple(src) == tuple(dst):
        return x
    return (x - float(src[0])) / float(src[1] - src[0]) * float(dst[1] - dst[0]) + float(dst[0])


def _luma(x):
    """Keras' backend rgb_to_grayscale on float images: one channel (a 1-channel image as is)."""
    c = aval_of(x).shape[-1]
    if c not in (1, 3):
        raise ValueError(f"Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received input with shape: "
                         f"images.shape={tuple(aval_of(x).shape)}")
    return x if c == 1 else _image.rgb_to_grayscale(x)


class _Colour(_ImageLayer):
    """A batch-wise colour map: ``_map(x4, n)`` on a (batch, h, w, c) float batch of ``n``
    images; a single image goes through as a batch of one."""

    def _augment(self, x):
        one = len(aval_of(x).shape) == 3
        x4 = A.expand_dims(x, 0) if one else x
        out = self._map(x4, _n_images(x4))
        return A.squeeze(out, 0) if one else out

    def _draw(self, n, lo, hi, shape=(1, 1, 1)):
        """Uniform in [lo, hi) per image, shaped (n, 1, 1, 1) to broadcast over pixels."""
        return lo + self._uniform((n,) + tuple(shape)) * (hi - lo)


class RandomGrayscale(_Colour):
    """Turns each image into its luma (repeated over the channels) with probability ``factor``."""

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 0 <= factor <= 1:
            raise ValueError(f"RandomGrayscale: `factor` should be between 0 and 1. Received: factor={factor!r}")
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = float(factor)

    def _map(self, x, n):
        apply = M.less(self._uniform((n, 1, 1, 1)), self.factor)
        return M.where(apply, _luma(x) + A.zeros_like(x), x)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, data_format=self.data_format, seed=self.seed)
        return cfg


class _FactorRange(_Colour):
    """``factor`` read by Keras' _set_factor within _BOUNDS, ``value_range`` (sorted, checked)."""

    _SORT_RANGE = True

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        name = type(self).__name__
        self.factor = _factor(name, factor, self._BOUNDS)
        if self._SORT_RANGE:
            self.value_range = _sorted_range(name, value_range)
        else:   # Keras keeps RandomHue's and RandomInvert's value_range as given (unchecked)
            self.value_range = tuple(float(v) for v in value_range)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, value_range=self.value_range, seed=self.seed, data_format=self.data_format)
        return cfg


def _shift_hue(x, delta):
    hsv = _image.rgb_to_hsv(x)
    h = hsv[..., 0] + delta
    h = M.where(M.greater(h, 1.0), h - 1.0, h)
    h = M.where(M.less(h, 0.0), h + 1.0, h)
    return _image.hsv_to_rgb(A.stack([h, hsv[..., 1], hsv[..., 2]], axis=-1))


class RandomHue(_FactorRange):
    """Shifts each image's hue by ``+-f / 2`` (a random sign, f uniform in the factor's range
    within [0, 1]) in HSV on the images mapped to [0, 1], clipped there and mapped back."""

    _BOUNDS = (0, 1)
    _SORT_RANGE = False

    def _map(self, x, n):
        sign = M.where(M.greater(self._uniform((n, 1, 1)), 0.5), -1.0, 1.0)
        delta = sign * self._draw(n, self.factor[0], self.factor[1], (1, 1)) * 0.5
        y = _shift_hue(_to_range(x, self.value_range, (0, 1)), delta)
        return _to_range(M.clip_by_value(y, 0.0, 1.0), (0, 1), self.value_range)


class RandomSaturation(_FactorRange):
    """Multiplies each image's HSV saturation by ``f / (1 - f + 1e-7)``, f uniform in the
    factor's range within [-1, 1]; the saturation is clipped to ``value_range`` (Keras 3 does so,
    not to [0, 1]: with value_range (0, 255) a saturation above 1 passes to hsv_to_rgb)."""

    _BOUNDS = (-1, 1)

    def _map(self, x, n):
        f = self._draw(n, self.factor[0], self.factor[1], (1, 1))
        f = f / (1.0 - f + 1e-7)
        hsv = _image.rgb_to_hsv(x)
        s = M.clip_by_value(hsv[..., 1] * f, self.value_range[0], self.value_range[1])
        return _image.hsv_to_rgb(A.stack([hsv[..., 0], s, hsv[..., 2]], axis=-1))


class RandomColorDegeneration(_FactorRange):
    """Blends each image toward its luma: ``x + f (luma - x)``, f uniform in the factor's range
    within [-1, 1], clipped to ``value_range``."""

    _BOUNDS = (-1, 1)

    def _map(self, x, n):
        f = self._draw(n, self.factor[0], self.factor[1])
        return M.clip_by_value(x + f * (_luma(x) - x), self.value_range[0], self.value_range[1])


class RandomInvert(_FactorRange):
    """``value_range[1] - x`` for each image with probability p, p itself uniform in the
    factor's range within [0, 1] (Keras 3: the default factor 1.0 inverts half the images)."""

    _BOUNDS = (0, 1)
    _SORT_RANGE = False

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(factor, value_range, data_format=data_format, seed=seed, **kwargs)

    def _map(self, x, n):
        p = self._draw(n, self.factor[0], self.factor[1])
        return M.where(M.less(self._uniform((n, 1, 1, 1)), p), self.value_range[1] - x, x)


class RandomPosterization(_FactorRange):
    """Keeps the top b bits of each 8-bit channel value (images mapped to [0, 255] and truncated
    to uint8 first), b an integer drawn per image in [lower, upper) -- Keras 3's randint, so the
    upper bound itself is never drawn -- or lower when lower == upper; bounds [1, 8]."""

    _BOUNDS = (1, 8)

    def _map(self, x, n):
        lo, hi = self.factor
        if lo != hi:
            bits = M.floor(self._draw(n, lo, hi))
        else:
            bits = M.cast(A.fill((n, 1, 1, 1), lo), np.float32)
        # x >> s << s on uint8 values == floor(v / 2^s) * 2^s, exact in float32
        step = M.pow(2.0, 8.0 - bits)
        v = M.cast(M.cast(_to_range(x, self.value_range, (0, 255)), np.uint8), aval_of(x).dtype)
        v = M.floor(v / M.cast(step, aval_of(x).dtype)) * M.cast(step, aval_of(x).dtype)
        return _to_range(v, (0, 255), self.value_range)


def _solar_factor(name, factor):
    msg = ("Solarization: the `addition_factor` and `threshold_factor` arguments should be a number (or a list "
           "of two numbers) in the range [0, 1]. Received: ")

    def check(v):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v > 1.0 or v < 0:
            raise ValueError(msg + f"input_number={v!r}")

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(msg + f"{name}={factor!r}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(float(f) for f in factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        return 0.0, float(factor)
    raise ValueError(msg + f"{name}={factor!r}")


class Solarization(_Colour):
    """Adds a (per-image) uniform amount, clips to [0, 255], and inverts the values at or above
    a (per-image) uniform threshold, on the images mapped to [0, 255]. Keras 3 draws the
    addition from [lower, upper * 255] and the threshold alike (only the upper end is scaled)."""

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = _solar_factor("addition_factor", addition_factor)
        self.threshold_factor = _solar_factor("threshold_factor", threshold_factor)
        self.value_range = _sorted_range("Solarization", value_range)

    def _map(self, x, n):
        add = self._draw(n, self.addition_factor[0], self.addition_factor[1] * 255)
        thr = self._draw(n, self.threshold_factor[0], self.threshold_factor[1] * 255)
        r = M.clip_by_value(_to_range(x, self.value_range, (0, 255)) + add, 0.0, 255.0)
        return _to_range(M.where(M.less(r, thr), r, 255.0 - r), (0, 255), self.value_range)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=self.value_range, addition_factor=self.addition_factor,
                   threshold_factor=self.threshold_factor, seed=self.seed)
        return cfg


class RandomSharpness(_FactorRange):
    """Blends each image with its 3x3 smoothing (centre 5/13, the rest 1/13, zero padding):
    ``x + (1 - 2f) (smooth - x)``, f uniform in the factor's range within [0, 1] (f = 0.5 is the
    identity, larger sharpens), clipped to ``value_range``."""

    _BOUNDS = (0, 1)

    def _map(self, x, n):
        from ...ops import nn_ops as N
        s = self._draw(n, self.factor[0], self.factor[1]) * 2.0
        c, dt = aval_of(x).shape[-1], aval_of(x).dtype
        a, b = 1.0 / 13.0, 5.0 / 13.0
        k = np.tile(np.array([[a, a, a], [a, b, a], [a, a, a]], dt).reshape(3, 3, 1, 1), (1, 1, c, 1))
        smooth = N.depthwise_conv2d(x, k, [1, 1, 1, 1], "SAME")
        return M.clip_by_value(x + (1.0 - M.cast(s, dt)) * (smooth - x), self.value_range[0], self.value_range[1])


class AutoContrast(_Colour):
    """Stretches each image's channels to the full ``value_range`` (per image and channel: min
    to the low end, max to the high end); a flat channel (max == min: 0/0) keeps its input
    values. As Keras 3, it applies whatever ``training`` says (it draws nothing)."""

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = _sorted_range("AutoContrast", value_range)

    def call(self, inputs, training=True):
        _hw(inputs)
        x = M.cast(inputs, self._np_dtype)
        return self._augment(x)

    def _map(self, x, n):
        y = _to_range(x, self.value_range, (0, 255))
        low = M.reduce_min(y, axis=(1, 2), keepdims=True)
        high = M.reduce_max(y, axis=(1, 2), keepdims=True)
        # a flat channel's scale is inf, and inf * 0 or inf - inf is NaN: Keras keeps the input
        # there, which where() does without evaluating a different formula
        scale = 255.0 / (high - low)
        r = _to_range(M.clip_by_value(y * scale + (-low * scale), 0.0, 255.0), (0, 255), self.value_range)
        return M.where(M.is_nan(r), x, r)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=self.value_range)
        return cfg


class Equalization(_ImageLayer):
    """Histogram equalization per channel with ``bins`` bins on the images mapped to [0, 255].
    As Keras 3, one histogram per channel over the whole batch (not per image), the lookup table
    ``round((cdf - cdf_min) * 255 / (n - cdf_min))``, and a channel whose values fill at most one
    bin passes unchanged; applied when training (the call's default)."""

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = int(bins)
        self.value_range = _sorted_range("Equalization", value_range)

    def _channel(self, ch):
        from ...ops import segment_ops as SG
        bins = self.bins
        # Keras compares a list with a tuple here, so it always rescales (exactly for (0, 255))
        sc = 255.0 / (self.value_range[1] - self.value_range[0])
        ch = ch * sc + (0.0 - self.value_range[0] * sc)
        idx = M.clip_by_value(M.cast(ch * float(bins - 1) / 255.0, np.int32), 0, bins - 1)
        flat = A.reshape(idx, (-1,))
        hist = SG.unsorted_segment_sum(M.ones_like_(flat), flat, bins)
        cdf = M.cumsum(hist)
        # the first non-zero cdf value (cdf never decreases; the total is > 0 for a non-empty image)
        cdf_min = M.reduce_min(M.where(M.greater(cdf, 0), cdf, A.fill((bins,), np.int32(np.iinfo(np.int32).max))))
        den = cdf[-1] - cdf_min
        den = M.where(M.equal(den, 0), A.ones_like(den), den)
        # float64 as Keras' integer true-divide: the rounding of near-half quotients depends on it
        lut = M.clip_by_value(M.round(M.cast((cdf - cdf_min) * 255, np.float64) / M.cast(den, np.float64)),
                              0.0, 255.0)
        at = M.cast(M.clip_by_value(ch / 255.0 * float(bins - 1), 0.0, float(bins - 1)), np.int32)
        eq = A.gather(lut, at)
        nonzero = M.reduce_sum(M.cast(M.greater(hist, 0), np.int32))
        out = M.where(M.less_equal(nonzero, 1), M.cast(ch, np.float64), eq)
        back = (self.value_range[1] - self.value_range[0]) / 255.0
        return out * back + (self.value_range[0] - 0.0 * back)

    def _augment(self, x):
        c = aval_of(x).shape[-1]
        return M.cast(A.stack([self._channel(x[..., i]) for i in range(c)], axis=-1), aval_of(x).dtype)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(bins=self.bins, value_range=self.value_range, data_format=self.data_format)
        return cfg


class RandomColorJitter(_Colour):
    """RandomBrightness, RandomContrast, RandomSaturation, RandomHue in that order, each present
    when its factor is given, drawing from this layer's random stream (Keras 3)."""

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None, saturation_factor=None,
                 hue_factor=None, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.value_range = tuple(value_range) if isinstance(value_range, (tuple, list)) else value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        parts = []
        for cls, f in ((RandomBrightness, brightness_factor), (RandomContrast, contrast_factor),
                       (RandomSaturation, saturation_factor), (RandomHue, hue_factor)):
            if f is not None:
                part = cls(f, value_range=value_range, seed=seed)
                parts.append(part)
        self._parts = parts

    def _map(self, x, n):
        for part in self._parts:
            # one stream for all four (the sub-layers' own streams, seeded alike, would draw
            # the same numbers for brightness and contrast)
            part._gen = self._gen
            x = part._augment(x)
        return x

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=self.value_range, brightness_factor=self.brightness_factor,
                   contrast_factor=self.contrast_factor, saturation_factor=self.saturation_factor,
                   hue_factor=self.hue_factor, seed=self.seed, data_format=self.data_format)
        return cfg


__all__ += ["RandomGrayscale", "RandomHue", "RandomSaturation", "RandomColorDegeneration", "RandomInvert",
            "RandomPosterization", "Solarization", "RandomSharpness", "AutoContrast", "Equalization",
            "RandomColorJitter"]


# ---------------------------------------------------------------------------------------------
# Keras 3's RandomErasing, RandomGaussianBlur and RandomShear (wave 19), same conventions.

def _named_factor(layer, name, factor):
    """Keras' _set_factor_by_name within [0, 1]: f -> (0, |f|), a pair sorted."""
    msg = (f"{layer}: The `{name}` argument should be a number (or a list of two numbers) in the range [0, 1]. "
           f"Received: factor={factor!r}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > 1 or factor[1] < 0:
            raise ValueError(msg)
        return tuple(sorted(float(f) for f in factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if not 0 <= factor <= 1:
            raise ValueError(msg)
        return 0.0, abs(float(factor))
    raise ValueError(msg)


class RandomErasing(_Colour):
    """Fills a random box of each image (with probability p, p uniform in the factor's range;
    Keras 3's default factor 1.0 erases half the images) with ``fill_value`` (a number or three
    channel values; None: Gaussian noise times value_range[1]), clipped to ``value_range``. The
    box's sides are sqrt(s) of the image's, s uniform in ``scale`` per side, at a uniform
    offset (Keras 3's draws)."""

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255), seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = _factor("RandomErasing", factor, (0, 1))
        self.scale = _named_factor("RandomErasing", "scale", scale)
        self.fill_value = list(fill_value) if isinstance(fill_value, tuple) else fill_value
        self.value_range = tuple(value_range)

    def _fill(self, x):
        f, dt = self.fill_value, aval_of(x).dtype
        if f is None:
            fill = self._generator().normal(R._shape_like(x), dtype=dt) * float(self.value_range[1])
        elif isinstance(f, list) and len(f) == 3:
            fill = A.zeros_like(x) + np.asarray(f, dt)
        elif isinstance(f, (int, float)) and not isinstance(f, bool):
            fill = A.zeros_like(x) + dt.type(f)
        else:
            raise ValueError(f"RandomErasing: The `fill_value` argument should be a number (or a list of three "
                             f"numbers). Received: fill_value={f!r}")
        return M.clip_by_value(fill, float(self.value_range[0]), float(self.value_range[1]))

    def _map(self, x, n):
        h, w = aval_of(x).shape[1:3]
        dt = aval_of(x).dtype
        mix = M.sqrt(self._draw(n, self.scale[0], self.scale[1], (2,)))

        def bounds(length, ratio):
            crop = ratio * float(length)
            start = self._uniform((n,)) * (float(length) - crop)
            shape = (n if isinstance(n, int) else -1, 1, 1, 1)
            return A.reshape(start, shape), A.reshape(start + crop, shape)

        x0, x1 = bounds(w, mix[:, 0])
        y0, y1 = bounds(h, mix[:, 1])
        gy = np.arange(h, dtype=dt).reshape(1, h, 1, 1)
        gx = np.arange(w, dtype=dt).reshape(1, 1, w, 1)
        box = M.logical_and(M.logical_and(M.greater_equal(gx, x0), M.less(gx, x1)),
                            M.logical_and(M.greater_equal(gy, y0), M.less(gy, y1)))
        p = self._draw(n, self.factor[0], self.factor[1])
        apply = M.logical_and(M.less(self._uniform((n, 1, 1, 1)), p), box)
        return M.where(apply, self._fill(x), x)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, scale=self.scale, fill_value=self.fill_value, value_range=self.value_range,
                   seed=self.seed, data_format=self.data_format)
        return cfg


def _kernel_size(ks):
    msg = f"RandomGaussianBlur: kernel_size must be an odd number. Received: kernel_size={ks!r}"
    if isinstance(ks, (tuple, list)):
        if len(ks) != 2:
            raise ValueError(f"RandomGaussianBlur: The `kernel_size` argument should be a number (or a list of two "
                             f"numbers) Received: kernel_size={ks!r}")
        if ks[0] % 2 == 0 or ks[1] % 2 == 0:
            raise ValueError(msg)
        return int(ks[0]), int(ks[1])
    if isinstance(ks, (int, float)) and not isinstance(ks, bool):
        if ks % 2 == 0:
            raise ValueError(msg)
        return int(ks), int(ks)
    raise ValueError(msg)


class RandomGaussianBlur(_Colour):
    """Blurs each image (with probability p, p uniform in the factor's range) with a Gaussian
    kernel of ``kernel_size`` (zero padding); Keras 3 draws ONE (sigma_x, sigma_y) pair per call
    for the whole batch, uniform in ``sigma``'s range (+1e-6), and clips every image to
    ``value_range``, blurred or not."""

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = _factor("RandomGaussianBlur", factor, (0, 1))
        self.kernel_size = _kernel_size(kernel_size)
        self.sigma = _named_factor("RandomGaussianBlur", "sigma", sigma)
        self.value_range = tuple(value_range)

    def _map(self, x, n):
        from ...ops import nn_ops as N
        dt = aval_of(x).dtype
        p = self._draw(n, self.factor[0], self.factor[1])
        apply = M.less(self._uniform((n, 1, 1, 1)), p)
        sig = self.sigma[0] + self._uniform((2,)) * (self.sigma[1] - self.sigma[0]) + 1e-6

        def k1d(size, s):
            t = np.arange(size, dtype=dt) - dt.type((size - 1) / 2)
            k = M.exp(-0.5 * M.square(t / s))
            return k / M.reduce_sum(k)

        # Keras: the x kernel (size[0], sigma[0]) along the width, the y kernel (size[1],
        # sigma[1]) along the height, reshaped to (size[0], size[1]) as it does
        k2 = A.reshape(k1d(self.kernel_size[1], sig[1])[:, None] * k1d(self.kernel_size[0], sig[0])[None, :],
                       (self.kernel_size[0], self.kernel_size[1], 1, 1))
        k2 = A.tile(k2, [1, 1, aval_of(x).shape[-1], 1])
        blurred = N.depthwise_conv2d(x, k2, [1, 1, 1, 1], "SAME")
        return M.clip_by_value(M.where(apply, blurred, x), float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, kernel_size=self.kernel_size, sigma=self.sigma, value_range=self.value_range,
                   seed=self.seed, data_format=self.data_format)
        return cfg


def _shear_factor(name, factor):
    msg = "RandomShear: The `factor` argument should be a number (or a list of two numbers) in the range [0, 1.0]. "

    def check(v):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v > 1.0 or v < 0.0:
            raise ValueError(msg + f"Received: input_number={v!r}")

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(msg + f"Received: {name}={factor!r}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(float(f) for f in factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        return -abs(float(factor)), abs(float(factor))
    raise ValueError(msg + f"Received: {name}={factor!r}")


class RandomShear(_Affine):
    """Shears each image: output (x, y) reads input (x + s_x y, y + s_y x) (Keras 3's matrix,
    about the top-left corner), s_x and s_y uniform in their factors' ranges (each within
    [0, 1]; a number f is [-f, f]) and one random sign per image for both."""

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 data_format=None, seed=None, **kwargs):
        self.x_factor = _shear_factor("x_factor", x_factor)
        self.y_factor = _shear_factor("y_factor", y_factor)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    @staticmethod
    def _shear_matrices(sf):
        ones, zeros = A.ones_like(sf[:, 0]), A.zeros_like(sf[:, 0])
        return A.stack([ones, sf[:, 0], zeros, sf[:, 1], ones, zeros, zeros, zeros], axis=1)

    def _matrices(self, n, h, w):
        sign = M.where(M.greater(self._uniform((n, 1)), 0.5), -1.0, 1.0)
        sy = self._draw(n, *self.y_factor)[:, None]
        sx = self._draw(n, *self.x_factor)[:, None]
        return self._shear_matrices(A.concat([sx, sy], axis=1) * sign)

    def transform_images(self, images, transformation, training=True):
        """Keras 3's hook: the shear of a given ``{"shear_factor": (batch, 2)}`` (s_x, s_y)."""
        x = M.cast(images, self._np_dtype)
        if not training or transformation is None:
            return x
        one = len(aval_of(x).shape) == 3
        batch = A.expand_dims(x, 0) if one else x
        sf = M.cast(transformation["shear_factor"], self._np_dtype)
        out = _image._projective_transform(batch, self._shear_matrices(sf), self.interpolation, self.fill_mode,
                                           self.fill_value)
        return A.squeeze(out, 0) if one else out

    def get_config(self):
        cfg = super().get_config()
        cfg.update(x_factor=self.x_factor, y_factor=self.y_factor)
        return cfg

    @classmethod
    def from_config(cls, config):
        # the config holds Keras' (-f, f) for a number f, which Keras 3's own constructor then
        # refuses (TF 2.21 cannot rebuild RandomShear(0.3) from its config); read it back as f
        config = dict(config)
        for k in ("x_factor", "y_factor"):
            v = config.get(k)
            if isinstance(v, (tuple, list)) and len(v) == 2 and v[0] < 0 and v[0] == -v[1]:
                config[k] = v[1]
        return super().from_config(config)


__all__ += ["RandomErasing", "RandomGaussianBlur", "RandomShear"]


# ---------------------------------------------------------------------------------------------
# Keras 3's MixUp and CutMix (batch mixes, also of a {"images", "labels"} dict), Pipeline, and
# tf.keras' legacy RandomHeight / RandomWidth (wave 19).

def _beta(gen, shape, a, dtype):
    """Beta(a, a) as G1 / (G1 + G2), two Gamma(a) draws (Keras' backend beta does the same)."""
    from ...ops.random_ops import _gamma_draw
    g1 = _gamma_draw(gen, shape, a, None, dtype, "beta")
    g2 = _gamma_draw(gen, shape, a, None, dtype, "beta")
    return g1 / (g1 + g2)


class _Mix(_ImageLayer):
    """A batch mix: ``call`` takes images, or a dict with "images" (and "labels", mixed with the
    images' weights), as Keras 3's preprocessing layers do."""

    def call(self, inputs, training=True):
        data = dict(inputs) if isinstance(inputs, dict) else {"images": inputs}
        x = M.cast(data["images"], self._np_dtype)
        _hw(x)
        if training is None or training is False or len(aval_of(x).shape) == 3:
            data["images"] = x
        else:
            if isinstance(training, Tensor):
                raise TypeError(f"{type(self).__name__}: `training` must be a Python bool")
            n = aval_of(x).shape[0]
            # (a None batch: the permutation of the images the function runs with)
            perm = self._generator().shuffle(np.arange(n, dtype=np.int32) if n is not None else
                                             A.range(A.shape(x)[0]))
            data["images"], w = self._mix(x, _n_images(x), perm)
            if "labels" in data:
                y = M.cast(data["labels"], self._np_dtype)
                w2 = A.reshape(w, (-1,) + (1,) * (len(aval_of(y).shape) - 1))
                data["labels"] = w2 * y + (1.0 - w2) * A.gather(y, perm)
        return data if isinstance(inputs, dict) else data["images"]


class MixUp(_Mix):
    """Mixes each image with another of the batch (a random permutation): ``w x + (1 - w) x[perm]``,
    w ~ Beta(alpha, alpha) per image (Zhang et al. 2017; Keras 3)."""

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.alpha = alpha

    def _mix(self, x, n, perm):
        w = _beta(self._generator(), (n,), float(self.alpha), aval_of(x).dtype)
        w4 = A.reshape(w, (-1, 1, 1, 1))
        return w4 * x + (1.0 - w4) * A.gather(x, perm), w

    def get_config(self):
        cfg = super().get_config()
        cfg.update(alpha=self.alpha, seed=self.seed, data_format=self.data_format)
        return cfg


class CutMix(_Mix):
    """Pastes a box of another image of the batch into each image (Yun et al. 2019; Keras 3):
    lambda ~ Beta(a, a) with a uniform in the factor's range (+1e-6, one per call), box sides
    sqrt(1 - lambda) of the image's at uniform offsets; the labels mix with the weight
    1 - box area / image area. A single image passes unchanged (Keras 3)."""

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = _factor("CutMix", factor, (0, 1))

    def _mix(self, x, n, perm):
        h, w = aval_of(x).shape[1:3]
        dt = aval_of(x).dtype
        a = self.factor[0] + self._uniform(()) * (self.factor[1] - self.factor[0]) + 1e-6
        lam = _beta(self._generator(), (n,), a, dt)
        ratio = M.sqrt(1.0 - lam)

        def bounds(length):
            crop = ratio * float(length)
            start = self._uniform((n,)) * (float(length) - crop)
            return start, start + crop

        x0, x1 = bounds(w)
        y0, y1 = bounds(h)
        r = lambda t: A.reshape(t, (n if isinstance(n, int) else -1, 1, 1, 1))  # noqa: E731
        gy = np.arange(h, dtype=dt).reshape(1, h, 1, 1)
        gx = np.arange(w, dtype=dt).reshape(1, 1, w, 1)
        box = M.logical_and(M.logical_and(M.greater_equal(gx, r(x0)), M.less(gx, r(x1))),
                            M.logical_and(M.greater_equal(gy, r(y0)), M.less(gy, r(y1))))
        weight = 1.0 - (x1 - x0) * (y1 - y0) / float(w * h)
        return M.where(box, A.gather(x, perm), x), weight

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, seed=self.seed, data_format=self.data_format)
        return cfg


class Pipeline(Layer):
    """Applies its layers in order (Keras 3's augmentation pipeline), handing ``training`` to
    those whose call takes it."""

    def __init__(self, layers, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._pipeline_layers = list(layers)

    @property
    def layers(self):
        return self._pipeline_layers

    def call(self, inputs, training=True):
        import inspect
        x = inputs
        for layer in self._pipeline_layers:
            takes = "training" in inspect.signature(layer.call).parameters
            x = layer(x, training=training) if takes and training is not None else layer(x)
        return x

    def compute_output_shape(self, input_shape):
        for layer in self._pipeline_layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self):
        from ..saving import serialize_keras_object
        return {"layers": [serialize_keras_object(layer) for layer in self._pipeline_layers], "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..saving import deserialize_keras_object
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized "
                             f"layers. Received config with layers={layers!r}.")
        config = dict(config)
        config["layers"] = [deserialize_keras_object(c, custom_objects) if isinstance(c, dict) else c for c in layers]
        return cls(**config)


class _RandomSide(SeedStream, Layer):
    """tf.keras' legacy RandomHeight/RandomWidth: resizes one side by 1 + f, f uniform in the
    factor's range (one draw per call). The output's size depends on the draw, so inside
    ``tapeflow.function`` only a fixed factor (lower == upper) traces; eagerly any."""

    _AXIS = None

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(**kwargs)
        self._set_seed(seed)
        self.factor = factor
        lo, hi = (factor[0], factor[1]) if isinstance(factor, (tuple, list)) else (-factor, factor)
        if hi < lo:
            raise ValueError(f"{type(self).__name__}: `factor` argument cannot have an upper bound {self._LESS} than "
                             f"the lower bound. Received: factor={factor!r}")
        if lo < -1.0 or hi < -1.0:
            raise ValueError(f"{type(self).__name__}: `factor` argument must have values larger than -1. "
                             f"Received: factor={factor!r}")
        self._lo, self._hi = float(lo), float(hi)
        self.interpolation = interpolation

    def call(self, inputs, training=True):
        from ...ops.context_ops import executing_eagerly
        x = M.cast(inputs, self._np_dtype)
        if training is None or training is False:
            return x
        if isinstance(training, Tensor):
            raise TypeError(f"{type(self).__name__}: `training` must be a Python bool: the output's shape depends "
                            "on it")
        hw = list(_hw(x))
        side = hw[self._AXIS]
        if self._lo == self._hi:
            f = np.float32(1.0 + self._lo)
        elif executing_eagerly():
            f = self._generator().uniform((), 1.0 + self._lo, 1.0 + self._hi).numpy()
        else:
            raise ValueError(f"{type(self).__name__}: a random output size cannot be traced (tapeflow.function "
                             f"compiles static shapes); call the layer eagerly or give a fixed factor "
                             f"(lower == upper). Got factor={self.factor!r}")
        hw[self._AXIS] = int(np.float32(f) * np.float32(side))
        return M.cast(_image.resize(x, hw, method=self.interpolation), self._np_dtype)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, interpolation=self.interpolation, seed=self.seed)
        return cfg


class RandomHeight(_RandomSide):
    _AXIS = 0
    _LESS = "lesser"    # (tf.keras' two messages differ by this word)


class RandomWidth(_RandomSide):
    _AXIS = 1
    _LESS = "less"


__all__ += ["MixUp", "CutMix", "Pipeline", "RandomHeight", "RandomWidth"]


def _homography(start, end):
    """Keras' compute_homography_matrix: the 8 projective coefficients mapping end points to
    start points (output pixel -> input pixel, ImageProjectiveTransform's convention), solved
    per image from the 8x8 system of the four point pairs."""
    from ... import linalg as _linalg
    rows = []
    for i in range(4):
        sx, sy, ex, ey = start[:, i, 0], start[:, i, 1], end[:, i, 0], end[:, i, 1]
        one, zero = A.ones_like(ex), A.zeros_like(ex)
        rows.append(A.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], axis=-1))
        rows.append(A.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], axis=-1))
    coeff = A.stack(rows, axis=1)
    target = A.reshape(start, (-1, 8, 1))
    return A.reshape(_linalg.solve(coeff, target), (-1, 8))


class RandomPerspective(_ImageLayer):
    """Moves each image's four corners by up to ``scale / 2`` of their coordinates (uniform per
    corner and axis, Keras 3's draw: corner (x, y) -> (x, y) (1 + u)), with probability p, p
    uniform in the factor's range (default 1.0: half the images), and resamples through the
    homography (constant ``fill_value`` outside)."""

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0, seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = _factor("RandomPerspective", factor, (0, 1))
        if scale < 0.0 or scale > 1.0:
            raise ValueError(f"RandomPerspective: The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale!r}")
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"RandomPerspective: Unknown `interpolation` {interpolation}. Expected of one "
                                      "('nearest', 'bilinear').")
        self.scale, self.interpolation, self.fill_value = float(scale), interpolation, float(fill_value)

    def _warp(self, batch, start, end):
        return _image._projective_transform(batch, _homography(start, end), self.interpolation, "constant",
                                            self.fill_value)

    def _augment(self, x):
        one = len(aval_of(x).shape) == 3
        batch = A.expand_dims(x, 0) if one else x
        h, w = aval_of(batch).shape[1:3]
        n = _n_images(batch)
        p = self.factor[0] + self._uniform((n, 1, 1, 1)) * (self.factor[1] - self.factor[0])
        apply = M.less(self._uniform((n, 1, 1, 1)), p)
        pf = -0.5 * self.scale + self._uniform((n, 4, 2)) * self.scale
        corners = np.array([[[0.0, 0.0], [w - 1, 0.0], [0.0, h - 1], [w - 1, h - 1]]], np.float32)
        # (a None batch: the corners broadcast over the images it runs with)
        start = np.repeat(corners, n, 0) if isinstance(n, int) else corners + A.zeros_like(pf)
        end = start + start * pf
        out = M.where(apply, self._warp(batch, start, end), batch)
        return A.squeeze(out, 0) if one else out

    def transform_images(self, images, transformation, training=True):
        """Keras 3's hook: the warp of given {"apply_perspective", "start_points", "end_points"}."""
        x = M.cast(images, self._np_dtype)
        if not training or transformation is None:
            return x
        one = len(aval_of(x).shape) == 3
        batch = A.expand_dims(x, 0) if one else x
        start = M.cast(transformation["start_points"], np.float32)
        end = M.cast(transformation["end_points"], np.float32)
        apply = A.reshape(M.cast(transformation["apply_perspective"], np.bool_), (-1, 1, 1, 1))
        out = M.where(apply, self._warp(batch, start, end), batch)
        return A.squeeze(out, 0) if one else out

    def get_config(self):
        cfg = super().get_config()
        cfg.update(factor=self.factor, scale=self.scale, interpolation=self.interpolation,
                   fill_value=self.fill_value, seed=self.seed, data_format=self.data_format)
        return cfg


__all__ += ["RandomPerspective"]


class RandAugment(_ImageLayer):
    """Keras 3's RandAugment (Cubuk et al. 2019): ``num_ops`` times, one of eleven augmentations
    drawn uniformly per call (shared by the batch): shear, translation, rotation, brightness,
    colour degeneration, contrast, sharpness, posterization, solarization, auto-contrast,
    equalization, built from ``factor`` as Keras 3 builds them. Each op evaluates all eleven
    and selects (as Keras' where chain), so a compiled step draws its ops anew per call. One
    difference: an augmentation drawn twice in a call draws its parameters twice (Keras reuses
    one draw per call)."""

    _AUGMENT_LAYERS = ["random_shear", "random_translation", "random_rotation", "random_brightness",
                       "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
                       "solarization", "auto_contrast", "equalization"]

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.value_range = tuple(value_range)
        self.num_ops = int(num_ops)
        self.factor = _factor("RandAugment", factor, (0, 1))
        self.interpolation = interpolation
        f, vr = self.factor, self.value_range
        self._ops = [
            RandomShear(x_factor=f, y_factor=f, interpolation=interpolation, seed=seed),
            RandomTranslation(height_factor=f, width_factor=f, interpolation=interpolation, seed=seed),
            RandomRotation(factor=f, interpolation=interpolation, seed=seed),
            RandomBrightness(factor=f, value_range=vr, seed=seed),
            RandomColorDegeneration(factor=f, value_range=vr, seed=seed),
            RandomContrast(factor=f, value_range=vr, seed=seed),
            RandomSharpness(factor=f, value_range=vr, seed=seed),
            RandomPosterization(factor=max(1, int(8 * f[1])), value_range=vr, seed=seed),
            Solarization(addition_factor=f, threshold_factor=f, value_range=vr, seed=seed),
            AutoContrast(value_range=vr),
            Equalization(value_range=vr),
        ]

    def _augment(self, x):
        k = len(self._ops)
        idx = M.minimum(M.cast(M.floor(self._uniform((max(self.num_ops, 1),)) * float(k)), np.int32), k - 1)
        for i in range(self.num_ops):
            chosen = x
            for j, op in enumerate(self._ops):
                op._gen = self._gen   # this layer's stream (seeded sub-layers would draw alike)
                chosen = M.where(M.equal(idx[i], j), op._augment(x), chosen)
            x = chosen
        return x

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=self.value_range, num_ops=self.num_ops, factor=self.factor,
                   interpolation=self.interpolation, seed=self.seed, data_format=self.data_format)
        return cfg


__all__ += ["RandAugment"]


class AugMix(_ImageLayer):
    """Keras 3's AugMix (Hendrycks et al. 2020): ``num_chains`` chains of ``chain_depth`` steps,
    each step one of Keras' augmentations or none (uniform; all eleven with ``all_ops``, else the
    seven geometric/tonal ones), the chains mixed with Dirichlet(alpha) weights and the result
    blended with the input by a Beta(alpha, alpha) weight, clipped to ``value_range``. Keras
    picks the steps with Python's ``random`` (fixed once a graph is traced); here they are
    tensor draws, so a compiled step picks anew per call."""

    _ALL = ["random_shear", "random_translation", "random_rotation", "random_posterization", "solarization",
            "auto_contrast", "equalization", "random_brightness", "random_color_degeneration", "random_contrast",
            "random_sharpness"]

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0, all_ops=True,
                 interpolation="bilinear", seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.value_range = tuple(value_range)
        self.num_chains, self.chain_depth = int(num_chains), int(chain_depth)
        self.factor = _factor("AugMix", factor, (0, 1))
        self.alpha, self.all_ops, self.interpolation = float(alpha), bool(all_ops), interpolation
        f, vr = self.factor, self.value_range
        ops = {
            "random_shear": RandomShear(x_factor=f, y_factor=f, interpolation=interpolation, seed=seed),
            "random_translation": RandomTranslation(height_factor=f, width_factor=f, interpolation=interpolation,
                                                    seed=seed),
            "random_rotation": RandomRotation(factor=f, interpolation=interpolation, seed=seed),
            "random_posterization": RandomPosterization(factor=max(1, int(8 * f[1])), value_range=vr, seed=seed),
            "solarization": Solarization(addition_factor=f, threshold_factor=f, value_range=vr, seed=seed),
            "auto_contrast": AutoContrast(value_range=vr),
            "equalization": Equalization(value_range=vr),
        }
        if self.all_ops:
            ops.update(random_brightness=RandomBrightness(factor=f, value_range=vr, seed=seed),
                       random_color_degeneration=RandomColorDegeneration(factor=f, value_range=vr, seed=seed),
                       random_contrast=RandomContrast(factor=f, value_range=vr, seed=seed),
                       random_sharpness=RandomSharpness(factor=f, value_range=vr, seed=seed))
        self._ops = [ops[k] for k in self._ALL if k in ops]

    def _augment(self, x):
        from ...ops.random_ops import _gamma_draw
        dt = aval_of(x).dtype
        k = len(self._ops) + 1                       # the ops and "none"
        g = _gamma_draw(self._generator(), (self.num_chains,), self.alpha, None, dt, "AugMix")
        chain_w = g / M.reduce_sum(g)
        blend = _beta(self._generator(), (), self.alpha, dt)
        mixed = A.zeros_like(x)
        for c in range(self.num_chains):
            y = x
            picks = M.minimum(M.cast(M.floor(self._uniform((max(self.chain_depth, 1),)) * float(k)), np.int32), k - 1)
            for d in range(self.chain_depth):
                chosen = y
                for j, op in enumerate(self._ops):
                    op._gen = self._gen
                    chosen = M.where(M.equal(picks[d], j), op._augment(y), chosen)
                y = chosen
            mixed = mixed + y * chain_w[c]
        out = blend * x + (1.0 - blend) * mixed
        return M.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=self.value_range, num_chains=self.num_chains, chain_depth=self.chain_depth,
                   factor=self.factor, alpha=self.alpha, all_ops=self.all_ops, interpolation=self.interpolation,
                   seed=self.seed, data_format=self.data_format)
        return cfg


__all__ += ["AugMix"]


class MaxNumBoundingBoxes(Layer):
    """Keras 3's MaxNumBoundingBoxes: a detection pipeline's dict ``{"images", "bounding_boxes":
    {"boxes": (batch, n, 4), "labels": (batch, n)}}`` (or unbatched) with exactly ``max_number``
    boxes per image: the first ``max_number`` kept, the rest filled with ``fill_value``. Images
    (and a plain image tensor) pass unchanged. As Keras, a dict with bounding boxes needs the
    layer's ``bounding_box_format`` (the padding does not depend on it)."""

    def __init__(self, max_number, fill_value=-1, bounding_box_format=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)
        self.bounding_box_format = bounding_box_format
        self.data_format = _data_format("MaxNumBoundingBoxes", data_format)

    def _fix(self, x, boxes):
        x = x if isinstance(x, Tensor) else _as_tensor(x)
        axis = aval_of(x).ndim - (2 if boxes else 1)
        n = aval_of(x).shape[axis]
        sl = [slice(None)] * aval_of(x).ndim
        sl[axis] = slice(0, self.max_number)
        x = x[tuple(sl)]
        if n < self.max_number:
            pads = [[0, 0]] * aval_of(x).ndim
            pads[axis] = [0, self.max_number - n]
            x = A.pad(x, pads, constant_values=self.fill_value)
        return x

    def call(self, data, training=True):
        if not isinstance(data, dict):
            return data
        out = dict(data)
        if "bounding_boxes" in data:
            if self.bounding_box_format is None:
                raise ValueError("You passed an input with a 'bounding_boxes' key, but you didn't specify a bounding "
                                 "box format. Pass a `bounding_box_format` argument to your MaxNumBoundingBoxes "
                                 "layer, e.g. `bounding_box_format='xyxy'`.")
            bb = data["bounding_boxes"]
            extra = set(bb) - {"boxes", "labels"}
            if extra:
                raise KeyError(f"There are unsupported keys in `bounding_boxes`: {sorted(extra)}. Only `boxes` and "
                               "`labels` are supported.")
            out["bounding_boxes"] = {"boxes": self._fix(bb["boxes"], True), "labels": self._fix(bb["labels"], False)}
        return out

    def get_config(self):
        cfg = super().get_config()
        cfg.update(max_number=self.max_number, fill_value=self.fill_value,
                   bounding_box_format=self.bounding_box_format, data_format=self.data_format)
        return cfg


def _as_tensor(x):
    from ...core.tensor import convert_to_tensor
    return convert_to_tensor(np.asarray(x))


def _to_value_range(images, src, dst):
    """Keras' ``_transform_value_range`` in float32 (unchanged when the ranges are equal)."""
    if src[0] == dst[0] and src[1] == dst[1]:
        return images
    f = np.float32
    x = M.cast(images, np.float32)
    x = (x - f(src[0])) / (f(src[1]) - f(src[0]))
    return x * (f(dst[1]) - f(dst[0])) + f(dst[0])


class ContrastLimitedAdaptiveHistogramEqualization(Layer):
    """Keras 3's CLAHE layer, operation for operation (its ``keras.ops`` code on tapeflow's
    ``keras.ops``): images to [0, 255]; per channel, a ``tile_grid_size`` grid of tiles (the image
    symmetric-padded to whole tiles), each tile's 256-bin histogram clipped at
    ``clip_limit * tile_pixels / 256`` with the excess spread evenly, its normalised CDF the tile's
    mapping; each pixel's value bilinearly interpolated between the mappings of the four nearest
    tile centres; back to ``value_range`` and the input dtype. Deterministic (no training flag)."""

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.value_range = tuple(value_range)
        self.clip_limit = clip_limit
        self.tile_grid_size = tuple(tile_grid_size)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                             f"Received: data_format={data_format}")
        self.data_format = data_format or "channels_last"

    def call(self, images, training=True):
        from .. import ops as K
        x = images if isinstance(images, Tensor) else _as_tensor(images)
        first = self.data_format == "channels_first"
        if first:
            x = K.transpose(x, (0, 2, 3, 1) if aval_of(x).ndim == 4 else (1, 2, 0))
        dt = aval_of(x).dtype
        x = _to_value_range(x, self.value_range, (0, 255))
        x = self._clahe(x)
        x = _to_value_range(x, (0, 255), self.value_range)
        x = M.cast(x, dt)
        if first:
            x = K.transpose(x, (0, 3, 1, 2) if aval_of(x).ndim == 4 else (2, 0, 1))
        return x

    def _clahe(self, images):
        from .. import ops as K
        unbatched = aval_of(images).ndim == 3
        if unbatched:
            images = K.expand_dims(images, 0)
        b, h, w, c = aval_of(images).shape
        gh, gw = self.tile_grid_size
        th, tw = (h + gh - 1) // gh, (w + gw - 1) // gw
        ph, pw = th * gh - h, tw * gw - w
        if ph == 0 and pw == 0:
            padded = images
        else:
            x3 = K.reshape(K.transpose(images, (0, 3, 1, 2)), (-1, h, w))
            x3 = K.pad(x3, [[0, 0], [0, ph], [0, pw]], mode="symmetric")
            padded = K.transpose(K.reshape(x3, (-1, c, h + ph, w + pw)), (0, 2, 3, 1))
        tiled = K.transpose(K.reshape(padded, (b, gh, th, gw, tw, c)), (0, 1, 3, 5, 2, 4))
        tiled = K.clip(K.cast(K.reshape(tiled, (b, gh, gw, c, th * tw)), "int32"), 0, 255)
        hists = K.sum(K.one_hot(tiled, 256), axis=-2)
        if self.clip_limit > 0:
            limit = K.cast(self.clip_limit * (th * tw) / 256.0, hists.dtype)
            clipped = K.clip(hists, 0, limit)
            excess = K.sum(hists - clipped, axis=-1, keepdims=True)
            hists = clipped + excess / 256.0
        cdf = K.cumsum(hists, axis=-1)
        cdf_min = K.min(cdf, axis=-1, keepdims=True)
        num = (cdf - cdf_min) * 255.0
        den = K.cast(th * tw, cdf.dtype) - cdf_min
        den = K.where(den == 0, K.ones_like(den), den)
        cdf_norm = K.clip(num / den, 0, 255)
        cdf_pad = K.concatenate([cdf_norm[:, 0:1], cdf_norm, cdf_norm[:, -1:]], axis=1)
        cdf_pad = K.concatenate([cdf_pad[:, :, 0:1], cdf_pad, cdf_pad[:, :, -1:]], axis=2)
        # the tile-centre coordinates and bilinear weights are static (NumPy, float32 as Keras)
        f32 = np.float32
        yg = (np.arange(th * gh, dtype=f32) - f32(th / 2.0)) / f32(th) + f32(1.0)
        xg = (np.arange(tw * gw, dtype=f32) - f32(tw / 2.0)) / f32(tw) + f32(1.0)
        y0, x0 = np.floor(yg), np.floor(xg)
        wy, wx = yg - y0, xg - x0
        y1, x1 = np.clip(y0 + 1, 0, gh + 1).astype(np.int32), np.clip(x0 + 1, 0, gw + 1).astype(np.int32)
        y0, x0 = np.clip(y0, 0, gh + 1).astype(np.int32), np.clip(x0, 0, gw + 1).astype(np.int32)
        sc, sx = 256, 256 * c
        sy = sx * (gw + 2)
        sb = sy * (gh + 2)
        flat = K.reshape(cdf_pad, (-1,))
        pixels = K.cast(K.clip(padded, 0, 255), "int32")
        base = pixels + _as_tensor((np.arange(b, dtype=np.int32)[:, None, None, None] * sb
                                    + np.arange(c, dtype=np.int32)[None, None, None, :] * sc))
        Y0, Y1 = (y0 * sy)[None, :, None, None], (y1 * sy)[None, :, None, None]
        X0, X1 = (x0 * sx)[None, None, :, None], (x1 * sx)[None, None, :, None]

        def at(yy, xx):
            return K.take(flat, base + _as_tensor((yy + xx).astype(np.int32)))
        wxe, wye = _as_tensor(wx[None, None, :, None]), _as_tensor(wy[None, :, None, None])
        top = at(Y0, X0) * (1.0 - wxe) + at(Y0, X1) * wxe
        bot = at(Y1, X0) * (1.0 - wxe) + at(Y1, X1) * wxe
        out = (top * (1.0 - wye) + bot * wye)[:, :h, :w, :]
        return K.squeeze(out, 0) if unbatched else out

    def get_config(self):
        cfg = super().get_config()
        cfg.update(value_range=list(self.value_range), clip_limit=self.clip_limit,
                   tile_grid_size=list(self.tile_grid_size), data_format=self.data_format)
        return cfg


# -- RandomElasticTransform (wave 24) -------------------------------------------------------------------------------

def _keras_factor(name, factor, bounds=(0, 1)):
    """Keras 3.15's _set_factor / _set_factor_by_name, its text and its -0.0 lower bound for 0."""
    msg = (f"The `{name}` argument should be a number (or a list of two numbers) in the range [{bounds[0]}, "
           f"{bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(msg)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(msg)
        factor = abs(factor)
        return max(-factor, bounds[0]), factor
    raise ValueError(msg)


def _map_coordinates(images, cy, cx, order, fill_mode, fill_value):
    """Keras' TF-backend map_coordinates for every image and channel at once: images (B, H, W, C),
    sample rows ``cy`` and columns ``cx`` (B, H, W); order 0 rounds (half to even), order 1 is
    bilinear; Keras' index fixes per fill mode (its 'reflect' takes abs() first: -1 -> 1)."""
    shape = aval_of(images).shape
    b, h, w, c = shape
    dt = aval_of(cy).dtype

    def nodes(coord):
        if order == 0:
            return [(M.cast(M.round(coord), np.int32), None)]
        lower = M.floor(coord)
        upper_w = coord - lower
        idx = M.cast(lower, np.int32)
        return [(idx, 1 - upper_w), (idx + 1, upper_w)]

    def fix(idx, size):
        if fill_mode == "constant":
            return M.clip_by_value(idx, 0, size - 1), M.logical_and(M.greater_equal(idx, 0), M.less(idx, size))
        if fill_mode == "nearest":
            return M.clip_by_value(idx, 0, size - 1), None
        if fill_mode in ("mirror", "reflect"):
            a = M.abs(idx)
            mod = M.floormod(a, 2 * size)
            under = M.less(mod, size)
            out = M.where(under, mod, 2 * size - mod)
            if fill_mode == "reflect":
                out = M.where(under, out, out - 1)
            return out, None
        return M.floormod(idx, size), None   # wrap

    flat = A.reshape(images, (-1 if b is None else b * h * w, c))
    # (a None batch: each image's first row from the batch size the function runs with)
    base = (np.arange(b, dtype=np.int32) * (h * w)).reshape(b, 1, 1) if b is not None else \
        A.reshape(A.range(A.shape(images)[0]) * (h * w), (-1, 1, 1))
    fill = M.cast(fill_value, dt)
    out = None
    for iy, wy in nodes(cy):
        sy, vy = fix(iy, h)
        for ix, wx in nodes(cx):
            sx, vx = fix(ix, w)
            g = M.cast(A.gather(flat, base + sy * w + sx), dt)          # (B, H, W, C)
            if fill_mode == "constant":
                g = M.where(M.logical_and(vy, vx)[..., None], g, fill)
            term = g if wy is None else (wy * wx)[..., None] * g           # Keras: weight_y * weight_x, then times
            out = term if out is None else out + term                     # the four corners summed in product order
    return out


class RandomElasticTransform(SeedStream, Layer):
    """Keras 3.15's elastic deformation: with probability p (p uniform in ``factor``'s range, per
    image) each image is resampled at ``(y, x) + alpha * d``, d a Gaussian-blurred normal noise field
    (``sigma`` = min(H, W) * 0.05 * s, ``alpha`` = max(H, W) * 0.1 * s, s uniform in ``scale``'s
    range, one per call), then clipped to ``value_range``.

    Draws from a keras.random SeedGenerator in Keras' order (p, threshold, s, then the noise's seed),
    so a seeded layer gives TF 2.21's images (tests/test_elastic24.py). Keras' TF-backend quirks kept:
    the x and y displacements are ONE noise field (the same seed draws both), the blur kernel is
    ``6 * int(sigma) | 1`` taps, 'reflect' maps index -1 to 1, and 'mirror' passes the constructor
    but fails at call time (TF's ValueError). Inside ``tapeflow.function`` the kernel size (data)
    is a fixed-size kernel masked to the drawn size: the same taps. Traced, the draws come from the
    layer's stateful generator (stateless ops need a seed known at trace time, and a SeedGenerator's
    is a Variable's value): fresh deformations per call, not TF's numbers (docs/differences.md)."""

    _bookkeeping = frozenset({"_seed_generator"})

    _INTERPOLATIONS = ("nearest", "bilinear")
    _FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 value_range=(0, 255), seed=None, data_format=None, **kwargs):
        from ..random import SeedGenerator
        super().__init__(**kwargs)
        if data_format is None:
            from ..config import image_data_format
            data_format = image_data_format()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                             f"Received: data_format={data_format}")
        self.data_format = data_format   # channels_first: transposed around the channels_last computation
        self.factor = _keras_factor("factor", factor)
        self.scale = _keras_factor("scale", scale)
        self.interpolation, self.fill_mode = interpolation, fill_mode
        self.fill_value, self.value_range, self.seed = fill_value, value_range, seed
        self._seed_generator = SeedGenerator(seed)
        self._set_seed(seed)   # SeedStream: the stateful stream drawn from inside tapeflow.function
        if interpolation not in self._INTERPOLATIONS:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one "
                                      f"{self._INTERPOLATIONS}.")
        if fill_mode not in self._FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {set(self._FILL_MODES)}.")

    def call(self, inputs, training=True):
        x = M.cast(inputs, self._np_dtype)   # Keras: transform_images casts to the compute dtype first
        if training is None or training is False or self.scale[1] == 0 or self.factor[1] == 0:
            return x
        s = aval_of(x).shape
        if len(s) not in (3, 4):
            raise ValueError(f"RandomElasticTransform: expected images of rank 3 or 4, got shape {tuple(s)}")
        unbatched = len(s) == 3
        if unbatched:
            x = x[None]
        if self.data_format == "channels_first":
            x = A.transpose(x, (0, 2, 3, 1))
        out = self._augment(x)
        if self.data_format == "channels_first":
            out = A.transpose(out, (0, 3, 1, 2))
        return out[0] if unbatched else out

    def _augment(self, x):
        from .. import random as KR
        dt = aval_of(x).dtype
        _, h, w, _ = aval_of(x).shape
        b = _n_images(x)
        from ...core.state import STATE
        traced = STATE.trace is not None
        gen = self._generator() if traced else self._seed_generator
        if traced:
            f32 = np.float32
            prob = gen.uniform((b,), minval=f32(self.factor[0]), maxval=f32(self.factor[1]), dtype=f32)
            threshold = gen.uniform((b,), dtype=f32)
            dist = gen.uniform((), minval=dt.type(self.scale[0]), maxval=dt.type(self.scale[1]), dtype=dt)
        else:
            # Keras' order of draws from the layer's SeedGenerator: TF's numbers
            prob = KR.uniform((b,), self.factor[0], self.factor[1], seed=gen)
            threshold = KR.uniform((b,), 0.0, 1.0, seed=gen)
            dist = KR.uniform((), self.scale[0], self.scale[1], seed=gen, dtype=dt)
        apply = M.less(threshold, prob)
        alpha = M.cast(max(h, w), dt) * (dt.type(0.1) * dist)
        sigma = M.cast(min(h, w), dt) * (dt.type(0.05) * dist)
        if self.fill_mode not in ("constant", "nearest", "wrap", "reflect"):
            # Keras' TF backend (its elastic_transform) refuses 'mirror', which the layer accepts
            raise ValueError("Invalid value for argument `fill_mode`. Expected of one ('constant', 'nearest', 'wrap', "
                             f"'reflect'). Received: fill_mode={self.fill_mode}")
        # Keras' TF backend draws the seed once and uses it for both displacement fields: dx == dy
        noise = (gen.normal((b, h, w), dtype=dt) if traced else R.stateless_normal((b, h, w), gen.next(), dtype=dt)) \
            * sigma
        d = self._blur(noise, sigma, min(h, w))
        gy, gx = np.meshgrid(np.arange(h, dtype=dt), np.arange(w, dtype=dt), indexing="ij")
        order = self._INTERPOLATIONS.index(self.interpolation)
        warped = _map_coordinates(x, gy[None] + alpha * d, gx[None] + alpha * d, order, self.fill_mode,
                                  self.fill_value)
        out = M.where(apply[:, None, None, None], M.cast(warped, dt), x)
        return M.cast(M.clip_by_value(out, M.cast(self.value_range[0], dt), M.cast(self.value_range[1], dt)), dt)

    def _blur(self, noise, sigma, short_side):
        """Keras' gaussian_blur of the noise: a (k, k) kernel, k = 6 * int(sigma) | 1, the outer
        product of exp(-t^2 / (2 sigma^2)) normalised, over t = arange(k) - (k - 1) / 2; SAME zero
        padding (depthwise_conv2d)."""
        from ...core.state import STATE
        from ...ops import nn_ops as N
        dt = aval_of(noise).dtype
        kf = M.cast(sigma, np.int32)
        if STATE.trace is None:
            kmax = 6 * int(kf.numpy()) + 1
        else:
            # traced, k is data: the largest k the scale range allows, taps past the drawn k masked to zero
            kmax = 6 * int(short_side * 0.05 * float(self.scale[1])) + 1
        t = np.arange(kmax, dtype=dt) - dt.type((kmax - 1) / 2)
        half = M.cast(3 * kf, dt)                                   # (k - 1) / 2
        k1 = M.where(M.less_equal(np.abs(t), half), M.exp(dt.type(-0.5) * M.square(t / sigma)), dt.type(0))
        k1 = k1 / M.reduce_sum(k1)
        k2 = A.reshape(k1[:, None] * k1[None, :], (kmax, kmax, 1, 1))
        return N.depthwise_conv2d(noise[..., None], k2, [1, 1, 1, 1], "SAME")[..., 0]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg.update(data_format=self.data_format, factor=self.factor, scale=self.scale,
                   interpolation=self.interpolation, fill_mode=self.fill_mode, fill_value=self.fill_value,
                   value_range=self.value_range, seed=self.seed)
        return cfg
