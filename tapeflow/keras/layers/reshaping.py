"""Reshaping layers of Keras 3 that the conv module does not hold (channels_last, as the
rest of tapeflow's layers): Cropping1D/2D/3D, ZeroPadding1D/3D, UpSampling1D/3D, and Identity."""
from __future__ import annotations

from ...core.aval import fmt_shape
from ...core.primitive import aval_of
from ...ops import array_ops as A
from ..engine import Layer, InputSpec
from .conv import _data_format, _tuple

__all__ = ["Cropping1D", "Cropping2D", "Cropping3D", "ZeroPadding1D", "ZeroPadding3D", "UpSampling1D", "UpSampling3D",
           "Identity"]


def _pair(layer, what, v, allow_zero=True):
    """An int or a pair of ints -> a pair of non-negative ints (Keras' standardize_tuple)."""
    t = (v, v) if isinstance(v, int) else tuple(v) if hasattr(v, "__len__") else None
    if t is None or len(t) != 2 or not all(isinstance(a, int) for a in t) or min(t) < (0 if allow_zero else 1):
        raise ValueError(f"{layer}: `{what}` must be a non-negative int or a tuple of 2 non-negative ints, "
                         f"got {v!r}")
    return t


class Identity(Layer):
    """Returns its inputs unchanged (a placeholder in a model)."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)

    _passes_mask = True   # Keras 3's supports_masking

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape


class Cropping1D(Layer):
    """Drops ``cropping[0]`` steps at the start and ``cropping[1]`` at the end of axis 1."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pair("Cropping1D", "cropping", cropping)
        self.input_spec = InputSpec(ndim=3)

    def _check(self, shape):
        if shape[1] is not None and sum(self.cropping) >= shape[1]:
            raise ValueError(f"Cropping1D: `cropping` parameter of Cropping1D layer must be smaller than the input "
                             f"length: cropping={self.cropping}, input shape {fmt_shape(tuple(shape))}")

    def call(self, inputs):
        shape = aval_of(inputs).shape
        self._check(shape)
        return inputs[:, self.cropping[0]:shape[1] - self.cropping[1], :]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        n = input_shape[1]
        return (input_shape[0], None if n is None else n - sum(self.cropping), input_shape[2])

    def get_config(self):
        cfg = super().get_config()
        cfg["cropping"] = self.cropping
        return cfg


class Cropping2D(Layer):
    """cropping: int, (rows, cols) symmetric, or ((top, bottom), (left, right))."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(cropping, int):
            self.cropping = (_pair("Cropping2D", "cropping", cropping),) * 2
        elif hasattr(cropping, "__len__") and len(cropping) == 2:
            self.cropping = (_pair("Cropping2D", "1st entry of cropping", cropping[0]),
                             _pair("Cropping2D", "2nd entry of cropping", cropping[1]))
        else:
            raise ValueError("Cropping2D: `cropping` should be either an int, a tuple of 2 ints "
                             "(symmetric_height_crop, symmetric_width_crop), or a tuple of 2 tuples of 2 ints "
                             f"((top_crop, bottom_crop), (left_crop, right_crop)). Received: cropping={cropping!r}")
        self.data_format = _data_format("Cropping2D", data_format)
        self.input_spec = InputSpec(ndim=4)

    def _check(self, shape):
        for n, c in zip(shape[1:3], self.cropping):
            if n is not None and sum(c) >= n:
                raise ValueError(f"Cropping2D: values in `cropping` argument should be smaller than the "
                                 f"corresponding spatial dimension of the input. Received: input_shape="
                                 f"{fmt_shape(tuple(shape))}, cropping={self.cropping}")

    def call(self, inputs):
        shape = aval_of(inputs).shape
        self._check(shape)
        (t, b), (lft, r) = self.cropping
        return inputs[:, t:shape[1] - b, lft:shape[2] - r, :]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        hw = tuple(None if n is None else n - sum(c) for n, c in zip(input_shape[1:3], self.cropping))
        return (input_shape[0],) + hw + (input_shape[3],)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(cropping=self.cropping, data_format=self.data_format)
        return cfg


class ZeroPadding1D(Layer):
    """Pads axis 1 with ``padding`` zeros on each side (or (left, right))."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pair("ZeroPadding1D", "padding", padding)
        self.data_format = _data_format("ZeroPadding1D", data_format)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return A.pad(inputs, ((0, 0), self.padding, (0, 0)))

    def compute_output_shape(self, input_shape):
        n = input_shape[1]
        return (input_shape[0], None if n is None else n + sum(self.padding), input_shape[2])

    def get_config(self):
        cfg = super().get_config()
        cfg.update(padding=self.padding, data_format=self.data_format)
        return cfg


class UpSampling1D(Layer):
    """Repeats each step ``size`` times along axis 1."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = _tuple("UpSampling1D", "size", size, 1)[0]
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return A.repeat(inputs, self.size, axis=1)

    def compute_output_shape(self, input_shape):
        n = input_shape[1]
        return (input_shape[0], None if n is None else n * self.size, input_shape[2])

    def get_config(self):
        cfg = super().get_config()
        cfg["size"] = self.size
        return cfg


def _triple_pairs(layer, what, v):
    """Keras' 3-D padding/cropping argument: an int, 3 ints (symmetric), or 3 pairs."""
    if isinstance(v, int):
        t = ((v, v),) * 3
    elif hasattr(v, "__len__") and len(v) == 3 and all(isinstance(a, int) for a in v):
        t = tuple((a, a) for a in v)
    elif hasattr(v, "__len__") and len(v) == 3 and all(hasattr(a, "__len__") and len(a) == 2 for a in v):
        t = tuple((int(a), int(b)) for a, b in v)
    else:
        raise ValueError(f"{layer}: `{what}` should have 3 elements. Received: {v!r}.")
    if min(min(p) for p in t) < 0:
        # Keras 3 builds the layer and fails in the pad op at the first call; tapeflow says it here
        raise ValueError(f"{layer}: `{what}` cannot be negative. Received: {what}={v!r}.")
    return t


class Cropping3D(Layer):
    """cropping: int, (depth, rows, cols) symmetric, or three (before, after) pairs."""

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.cropping = _triple_pairs("Cropping3D", "cropping", cropping)
        self.data_format = _data_format("Cropping3D", data_format)
        self.input_spec = InputSpec(ndim=5)

    def _check(self, shape):
        for n, c in zip(shape[1:4], self.cropping):
            if n is not None and sum(c) >= n:
                raise ValueError(f"Cropping3D: values in `cropping` argument should be smaller than the "
                                 f"corresponding spatial dimension of the input. Received: inputs.shape="
                                 f"{fmt_shape(tuple(shape))}, cropping={self.cropping}")

    def call(self, inputs):
        shape = aval_of(inputs).shape
        self._check(shape)
        (a, b), (c, d), (e, f) = self.cropping
        return inputs[:, a:shape[1] - b, c:shape[2] - d, e:shape[3] - f, :]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        dhw = tuple(None if n is None else n - sum(c) for n, c in zip(input_shape[1:4], self.cropping))
        return (input_shape[0],) + dhw + (input_shape[4],)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(cropping=self.cropping, data_format=self.data_format)
        return cfg


class ZeroPadding3D(Layer):
    """padding: int, (depth, rows, cols) symmetric, or three (before, after) pairs."""

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _triple_pairs("ZeroPadding3D", "padding", padding)
        self.data_format = _data_format("ZeroPadding3D", data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        return A.pad(inputs, ((0, 0),) + self.padding + ((0, 0),))

    def compute_output_shape(self, input_shape):
        dhw = tuple(None if n is None else n + sum(p) for n, p in zip(input_shape[1:4], self.padding))
        return (input_shape[0],) + dhw + (input_shape[4],)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(padding=self.padding, data_format=self.data_format)
        return cfg


class UpSampling3D(Layer):
    """Repeats each depth slice, row and column ``size`` times (nearest neighbour)."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        t = (size,) * 3 if isinstance(size, int) else tuple(size) if hasattr(size, "__len__") else ()
        if len(t) != 3 or not all(isinstance(a, int) and a > 0 for a in t):
            raise ValueError(f"UpSampling3D: the `size` argument must be a tuple of 3 positive integers. "
                             f"Received size={size!r}")
        self.size = t
        self.data_format = _data_format("UpSampling3D", data_format)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis, k in zip((1, 2, 3), self.size):
            if k > 1:
                x = A.repeat(x, k, axis=axis)
        return x

    def compute_output_shape(self, input_shape):
        dhw = tuple(None if n is None else n * k for n, k in zip(input_shape[1:4], self.size))
        return (input_shape[0],) + dhw + (input_shape[4],)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(size=self.size, data_format=self.data_format)
        return cfg
