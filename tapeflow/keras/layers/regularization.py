"""Keras 3's regularization layers beside Dropout/GaussianNoise (core.py): ActivityRegularization,
GaussianDropout, AlphaDropout and SpatialDropout1D/2D/3D. The random ones act only when
``training`` is true (as Dropout) and draw from the layer's own stream when seeded, else from
tapeflow's global stream; a seeded GaussianDropout or SpatialDropout draws Keras 3's SeedGenerator numbers
(TF's, as a seeded Dropout and GaussianNoise), AlphaDropout tapeflow's stream."""
from __future__ import annotations

import math

from ...core.primitive import aval_of
from ...core.tensor import Tensor
from ...ops import array_ops as A
from ...ops import math_ops as M
from ...ops import nn_ops as N
from ...ops import random_ops as R
from .. import regularizers as _regs
from ..engine import Layer, InputSpec
from .core import SeedStream
from .conv import _data_format

__all__ = ["ActivityRegularization", "GaussianDropout", "AlphaDropout", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D"]


def _rate(layer, rate):
    if not 0 <= float(rate) <= 1:
        raise ValueError(f"{layer}: invalid value received for argument `rate`. Expected a float value between 0 "
                         f"and 1. Received: rate={rate}")
    return float(rate)


class ActivityRegularization(Layer):
    """Identity that adds ``l1 * sum|x| + l2 * sum x^2`` (per batch element, as every activity
    regularizer) to the layer's losses."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)

    _passes_mask = True   # Keras 3's supports_masking

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=_regs.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("activity_regularizer", None)
        cfg.update(l1=self.l1, l2=self.l2)
        return cfg


class _Noise(SeedStream, Layer):
    """A seeded random stream (SeedStream), and ``training`` handling as Dropout's."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)

    _passes_mask = True   # Keras 3's supports_masking

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _rate(type(self).__name__, rate)
        self._set_seed(seed)

    def call(self, inputs, training=None):
        if self.rate == 0 or training is None or training is False:
            return inputs
        noisy = self._noisy(inputs)
        if isinstance(training, Tensor):
            return M.where(training, noisy, inputs)
        return noisy if training else inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg.update(rate=self.rate, seed=self.seed)
        return cfg


class GaussianDropout(_Noise):
    """Multiplies by N(1, rate / (1 - rate)) noise in training (variance that of Dropout's
    0-or-1/(1-rate) mask)."""

    def _noisy(self, inputs):
        if self.rate >= 1:
            raise ValueError("GaussianDropout: rate=1 gives noise of infinite variance; use a rate below 1")
        av = aval_of(inputs)
        std = math.sqrt(self.rate / (1.0 - self.rate))
        sg = self._seed_generator()
        if sg is not None:      # Keras 3: keras.random.normal on the layer's SeedGenerator
            from .. import random as keras_random
            return inputs * keras_random.normal(R._shape_like(inputs), mean=1.0, stddev=std, dtype=av.dtype, seed=sg)
        return inputs * self._generator().normal(R._shape_like(inputs), mean=1.0, stddev=std, dtype=av.dtype)


class AlphaDropout(_Noise):
    """Dropout for SELU networks (Klambauer et al. 2017): dropped units are set to SELU's
    negative saturation -alpha*scale, then an affine map restores the mean and variance."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def _noisy(self, inputs):
        av = aval_of(inputs)
        shape = av.shape if self.noise_shape is None else \
            tuple(s if d is None else d for d, s in zip(self.noise_shape, av.shape))
        alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
        kept = M.cast(M.greater_equal(self._generator().uniform(R._shape_like(inputs, shape), dtype=av.dtype),
                                      self.rate), av.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b

    def get_config(self):
        cfg = super().get_config()
        cfg["noise_shape"] = self.noise_shape
        return cfg


class _SpatialDropout(_Noise):
    """Dropout of whole channels: one draw per (sample, channel), shared over the spatial axes."""

    ndim = 3

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = _data_format(type(self).__name__, data_format)
        self.input_spec = InputSpec(ndim=self.ndim)

    def _noisy(self, inputs):
        shape = aval_of(inputs).shape
        noise = (shape[0],) + (1,) * (self.ndim - 2) + (shape[-1],)
        if self.rate == 1:
            return A.zeros_like(inputs)
        sg = self._seed_generator()
        if sg is not None:      # Keras 3 (a Dropout with a noise shape): keras.random.dropout on its SeedGenerator
            from .. import random as keras_random
            return keras_random.dropout(inputs, self.rate, noise_shape=noise, seed=sg)
        return N.dropout(inputs, self.rate, noise_shape=noise, rng=self._generator())

    def get_config(self):
        cfg = super().get_config()
        if self.ndim > 3:
            cfg["data_format"] = self.data_format
        return cfg


class SpatialDropout1D(_SpatialDropout):
    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    ndim = 4


class SpatialDropout3D(_SpatialDropout):
    ndim = 5
