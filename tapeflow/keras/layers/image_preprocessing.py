"""Keras 3's image preprocessing layers that tf.image's resizing makes possible (channels_last):
Resizing, CenterCrop, RandomFlip, RandomCrop, RandomContrast, RandomBrightness, and the affine
ones RandomRotation, RandomZoom and RandomTranslation (tf.image's projective transform: TF's
sampling and fill modes). The random ones act when ``training`` is true,
which is their call's default, as in Keras 3 (a direct call augments; ``predict``/``evaluate``
and ``training=False`` do not); their draws are not TF's bits."""
from __future__ import annotations

import numpy as np

from ...core.primitive import aval_of
from ...core.tensor import Tensor
from ...ops import array_ops as A
from ...ops import math_ops as M
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
        return self._uniform((1, 1, 1) if len(s) == 3 else (s[0], 1, 1, 1))

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
        n, h, w = aval_of(batch).shape[:3]
        out = _image._projective_transform(batch, self._matrices(n, h, w), self.interpolation, self.fill_mode,
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
