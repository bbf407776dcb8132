"""Seeded random numbers with explicit generators.

``Generator.from_seed(s)`` owns a NumPy PCG64 stream; the module functions
(``normal``, ``uniform``...) draw from a global generator that
``set_seed`` resets, so a script that calls ``set_seed`` first is
reproducible. Inside ``tapeflow.function`` each call draws fresh numbers
(the generator is a parameter of the random primitive, never a constant).
An op-level ``seed=`` derives a stream from (global seed, op seed), as TF.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.primitive import bind, aval_of
from ..core.primitives import random as RP
from ..core.primitives import reductions as R
from . import math_ops as M


class Generator:
    """An explicit random stream (TF's tf.random.Generator)."""

    def __init__(self, seed=None, _np=None):
        self._gen = _np if _np is not None else np.random.default_rng(seed)
        self.seed = seed

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(int(seed))

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls(None)

    def reset_from_seed(self, seed):
        # reseed the NumPy stream in place: compiled graphs hold it as a parameter of
        # their random equations, so a new object would leave them on the old stream
        self._gen.bit_generator.state = np.random.default_rng(int(seed)).bit_generator.state
        self.seed = seed

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, name=None):
        return bind(RP.random_normal_p, shape=_shape(shape), dtype=_dt.np_dtype(dtype), mean=float(mean),
                    stddev=float(stddev), gen=self._gen)

    def uniform(self, shape, minval=0, maxval=None, dtype=np.float32, name=None):
        d = _dt.np_dtype(dtype)
        if maxval is None:
            if d.kind in "iu":
                raise ValueError("random.uniform: integer dtypes need maxval")
            maxval = 1.0
        if d.kind == "f":
            minval, maxval = float(minval), float(maxval)
        else:
            minval, maxval = int(minval), int(maxval)
        return bind(RP.random_uniform_p, shape=_shape(shape), dtype=d, minval=minval, maxval=maxval, gen=self._gen)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, name=None):
        # resample outside 2 stddev (as TF): two redraws, then clip the rare rest
        z = self.normal(shape, dtype=dtype)
        for _ in range(3):
            z = M.where(M.greater(M.abs(z), 2.0), self.normal(shape, dtype=dtype), z)
        z = M.clip_by_value(z, -2.0, 2.0)
        return M.add(M.multiply(z, stddev), mean)

    def categorical(self, logits, num_samples, dtype=np.int64, seed=None, name=None):
        """Samples class ids from unnormalised log-probabilities (batch, classes).

        The Gumbel-max trick: argmax(logits + Gumbel noise) is an exact sample."""
        s = aval_of(logits).shape
        u = self.uniform((s[0], int(num_samples), s[1]), minval=1e-20, maxval=1.0, dtype=aval_of(logits).dtype)
        g = M.negative(M.log(M.negative(M.log(u))))
        from .array_ops import expand_dims
        return M.argmax(M.add(expand_dims(logits, 1), g), axis=-1, output_type=dtype)

    def shuffle(self, value):
        from .array_ops import gather
        n = aval_of(value).shape[0]
        keys = self.uniform((n,))
        return gather(value, bind(R.argsort_p, keys, axis=0, descending=False))


def _shape(shape):
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


_global_seed = None
_global = Generator(None)
_op_gens: dict = {}   # op seed -> Generator (reseeded in place by set_seed)


def _op_seed(op_seed):
    return int(np.random.SeedSequence([_global_seed or 0, int(op_seed)]).generate_state(1)[0])


def set_seed(seed):
    """Reset the global stream: everything random after this call is reproducible
    (also inside already compiled functions, which hold the same generators)."""
    global _global_seed
    _global_seed = None if seed is None else int(seed)
    _global.reset_from_seed(0 if seed is None else seed) if seed is not None else None
    for op_seed, g in _op_gens.items():
        g.reset_from_seed(_op_seed(op_seed))


def get_global_generator():
    return _global


def set_global_generator(gen):
    global _global
    _global = gen


def _gen_for(seed):
    if seed is None:
        return _global
    g = _op_gens.get(int(seed))
    if g is None:
        g = _op_gens[int(seed)] = Generator(_op_seed(seed))
    return g


def normal(shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None, name=None):
    return _gen_for(seed).normal(shape, mean, stddev, dtype)


def uniform(shape, minval=0, maxval=None, dtype=np.float32, seed=None, name=None):
    return _gen_for(seed).uniform(shape, minval, maxval, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None, name=None):
    return _gen_for(seed).truncated_normal(shape, mean, stddev, dtype)


def categorical(logits, num_samples, dtype=np.int64, seed=None, name=None):
    return _gen_for(seed).categorical(logits, num_samples, dtype)


def shuffle(value, seed=None, name=None):
    return _gen_for(seed).shuffle(value)
