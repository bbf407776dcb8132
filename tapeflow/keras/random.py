"""``keras.random`` as Keras 3's TF backend defines it: every draw is a stateless TF draw whose seed
is ``[seed, 0]`` for an int seed, the next state of a ``SeedGenerator`` (its state [s, i] advances
to [s, i + 1] per draw), or, with no seed, the global generator's (which steps its state to
``(state + 1) * 5387 % 933199``). tapeflow's stateless normal, uniform and truncated normal are TF's
Philox numbers, so a seeded ``keras.random.normal`` gives TF 2.21's values; gamma, beta and
categorical draw other numbers from the same distributions (tapeflow's stateless gamma and
categorical are not TF's bit for bit)."""
from __future__ import annotations

import random as _pyrandom

import numpy as np

from ..core.tensor import Variable, convert_to_tensor
from ..ops import array_ops as A
from ..ops import math_ops as M
from ..ops import random_ops as R
from . import backend

__all__ = ["SeedGenerator", "normal", "uniform", "truncated_normal", "randint", "categorical", "dropout",
           "shuffle", "gamma", "beta", "binomial"]


class SeedGenerator:
    """A seed state [seed, counter] in a non-trainable Variable (checkpointed with its owner);
    each draw reads the state and advances it."""

    def __init__(self, seed=None, name=None, **kwargs):
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        self.name = name or backend.unique_object_name("seed_generator")
        self._initial_seed = seed
        if seed is None:
            seed = _pyrandom.randint(1, int(1e9))
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self.state = Variable(np.array([int(seed), 0], np.int64), trainable=False, name="seed_generator_state")

    def next(self, ordered=True):
        value = self.state.read_value() * 1
        if ordered:
            self.state.assign_add(np.array([0, 1], np.int64))
        else:   # Keras' sequence of near-unique numbers in [0, 1M) for the global generator
            self.state.assign((self.state.read_value() + 1) * 5387 % 933199)
        return value

    def get_config(self):
        return {"seed": self._initial_seed}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


_GLOBAL = []


def global_seed_generator():
    if not _GLOBAL:
        _GLOBAL.append(SeedGenerator())
    return _GLOBAL[0]


def draw_seed(seed):
    """Keras' seed for one draw: a [2] int tensor."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        # Keras reinterprets the seed's low 32 bits as a signed int (seeds are uint32 values)
        s = (int(seed) & 0xFFFFFFFF ^ 0x80000000) - 0x80000000
        return convert_to_tensor(np.array([s, 0], np.int64))
    if seed is None:
        return global_seed_generator().next(ordered=False)
    raise ValueError("Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
                     f"Received: seed={seed} (of type {type(seed)})")


def _seed(seed):
    # Keras' _cast_seed: int64 seeds folded into int32 (modulo int32.max - 1)
    return M.cast(M.floormod(draw_seed(seed), np.int64(np.iinfo(np.int32).max - 1)), np.int32)


def _float(dtype):
    return np.dtype(getattr(dtype, "as_numpy_dtype", dtype) or backend.floatx())


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return R.stateless_normal(shape, _seed(seed), mean=mean, stddev=stddev, dtype=_float(dtype))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    dt = _float(dtype)
    return R.stateless_uniform(shape, _seed(seed), minval=M.cast(minval, dt), maxval=M.cast(maxval, dt), dtype=dt)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return R.stateless_truncated_normal(shape, _seed(seed), mean=mean, stddev=stddev, dtype=_float(dtype))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    dt = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    mid = dt if dt in (np.dtype(np.int32), np.dtype(np.int64)) else np.dtype(np.int64)
    out = R.stateless_uniform(shape, _seed(seed), minval=minval, maxval=maxval, dtype=mid)
    return out if mid == dt else M.cast(out, dt)


def categorical(logits, num_samples, dtype="int64", seed=None):
    out = R.stateless_categorical(logits, num_samples, _seed(seed))
    return M.cast(out, np.dtype(getattr(dtype, "as_numpy_dtype", dtype)))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """TF's stateless dropout: keep where a uniform draw >= rate, scaled by 1 / (1 - rate)."""
    x = inputs if hasattr(inputs, "aval") else convert_to_tensor(inputs)
    if rate == 1.0:
        return A.zeros_like(x)
    if rate == 0.0:
        return x
    shape = tuple(x.shape) if noise_shape is None else \
        tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape))
    # (a dimension the trace leaves None, an input_signature's batch: its value when the function runs)
    u = R.stateless_uniform(R._shape_like(x, shape), _seed(seed), dtype=x.dtype)
    return M.where(M.greater_equal(u, M.cast(rate, x.dtype)), M.multiply(x, M.cast(1.0 / (1.0 - rate), x.dtype)),
                   A.zeros_like(x))


def shuffle(x, axis=0, seed=None):
    """x permuted along ``axis`` by the argsort of one uniform draw per position (Keras' TF backend)."""
    x = x if hasattr(x, "aval") else convert_to_tensor(x)
    n = x.shape[axis]
    keys = R.stateless_uniform([A.shape(x)[axis] if n is None else n], _seed(seed))
    return A.gather(x, A.argsort(keys), axis=axis)


def gamma(shape, alpha, dtype=None, seed=None):
    return R.stateless_gamma(shape, _seed(seed), alpha=alpha, dtype=_float(dtype))


def beta(shape, alpha, beta, dtype=None, seed=None):  # noqa: A002  (Keras' names)
    """gamma_a / (gamma_a + gamma_b), the second gamma seeded 12 above the first (Keras)."""
    dt = _float(dtype)
    s1 = _seed(seed)
    a = A.broadcast_to(convert_to_tensor(alpha, dtype=dt), shape)
    b = A.broadcast_to(convert_to_tensor(beta, dtype=dt), shape)
    ga = R.stateless_gamma(shape, s1, alpha=a, dtype=dt)
    gb = R.stateless_gamma(shape, s1 + 12, alpha=b, dtype=dt)
    return ga / (ga + gb)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Keras' TF backend: tf.random.stateless_binomial in ``dtype`` (float32 for bfloat16), cast."""
    from ..ops.random_binomial_ops import stateless_binomial
    dt = _float(dtype)
    mid = np.dtype(np.float32) if dt.name == "bfloat16" else dt
    return M.cast(stateless_binomial(shape, _seed(seed), counts, probabilities, output_dtype=mid), dt)
