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
from ..core.tensor import constant
from ..module import Module
from .philox import PhiloxStream
from ..core.primitive import bind, aval_of
from ..core.primitives import random as RP
from ..core.primitives import reductions as R
from . import math_ops as M
from ..core.aval import fmt_shape
from ..errors import InvalidArgumentError, InvalidArgumentTypeError


def _state_from_seed(seed):
    """TF's create_rng_state(seed, "philox"): the int cut into 3 x 64-bit words, low first."""
    seed = int(seed) % (1 << 192)
    return np.array([(seed >> (64 * i)) & ((1 << 64) - 1) for i in range(3)], np.uint64).view(np.int64)


class Generator(Module):
    """An explicit random stream (TF's tf.random.Generator).

    ``from_seed``/``from_state``/``from_key_counter``/``from_non_deterministic_state``
    give TF's Philox-4x32-10 stream, whose float32/float64 ``normal`` and
    ``uniform`` and integer ``uniform``/``uniform_full_int`` draws equal TF's
    bit for bit (tapeflow/ops/philox.py). The state is a Variable (``state``),
    so checkpoints save and restore the stream. The module-level functions
    (``tapeflow.random.normal``...) use NumPy's PCG64 instead (TF's global ops
    use another algorithm, which tapeflow does not reproduce).
    """

    def __init__(self, copy_from=None, state=None, alg=None, *, _np=None):
        super().__init__(name="generator")
        self.seed = None
        if _np is not None:  # NumPy-backed (the global stream and op-seeded streams)
            self._gen = _np
            self._state_var = None
            return
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise ValueError("Generator: give state=, copy_from=, or use Generator.from_seed(seed)")
        st = np.asarray(state.numpy() if hasattr(state, "numpy") else state).astype(np.int64).reshape(-1)
        if st.shape != (3,):
            raise ValueError(f"Generator: a Philox state has 3 int64 words, got shape {st.shape}")
        from ..core.tensor import Variable
        self._state_var = Variable(st, trainable=False, name="generator_state")
        self._gen = PhiloxStream(self._state_var)

    @classmethod
    def _numpy(cls, seed):
        return cls(_np=np.random.default_rng(seed))

    @classmethod
    def from_seed(cls, seed, alg=None):
        g = cls(state=_state_from_seed(seed), alg=alg)
        g.seed = seed
        return g

    @classmethod
    def from_state(cls, state, alg=None):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg=None):
        c = np.asarray(counter, np.int64).reshape(-1)
        return cls(state=np.concatenate([c, np.asarray([key], np.int64).reshape(-1)]), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        import os
        return cls(state=np.frombuffer(os.urandom(24), np.int64).copy(), alg=alg)

    @property
    def state(self):
        if self._state_var is None:
            raise AttributeError("this generator is NumPy-backed (the global or an op-seeded stream); "
                                 "only Philox generators (Generator.from_seed...) expose a state")
        return self._state_var

    @property
    def algorithm(self):
        return 1  # TF's RNG_ALG_PHILOX

    @property
    def key(self):
        return self.state[2]

    def reset(self, state):
        self.state.assign(np.asarray(state, np.int64))

    def reset_from_seed(self, seed):
        if self._state_var is None:
            # reseed the NumPy stream in place: compiled graphs hold it as a parameter of
            # their random equations, so a new object would leave them on the old stream
            self._gen.bit_generator.state = np.random.default_rng(int(seed)).bit_generator.state
        else:
            self._state_var.assign(_state_from_seed(seed))
        self.seed = seed

    def reset_from_key_counter(self, key, counter):
        self.reset(np.concatenate([np.asarray(counter, np.int64).reshape(-1), [np.int64(key)]]))

    def uniform_full_int(self, shape, dtype=np.uint64, name=None):
        """Integers over the dtype's whole range (TF's bits, reinterpreted)."""
        d = _dt.np_dtype(dtype)
        shape = _shape(shape)
        if self._state_var is None:
            info = np.iinfo(d)
            return constant(self._gen.integers(info.min, info.max, size=shape, dtype=d, endpoint=True))
        return constant(self._gen.full_int(shape, d))

    def make_seeds(self, count=1):
        """A [2, count] int64 tensor of seeds for stateless ops (keys over zeros, as TF)."""
        keys = self.uniform_full_int([count], np.int64).numpy()
        return constant(np.stack([keys, np.zeros_like(keys)]))

    def split(self, count=1):
        """``count`` new generators keyed from this stream (TF's split: counter 0, fresh key)."""
        keys = self.uniform_full_int([count], np.int64).numpy()
        return [Generator(state=[0, 0, int(k)]) for k in keys]

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
        if len(s) != 2:
            raise InvalidArgumentError(f"random.categorical: logits must be 2-D (batch, classes), got shape "
                                       f"{fmt_shape(s)}")
        if int(num_samples) < 0:
            raise InvalidArgumentError(f"random.categorical: num_samples must be >= 0, got {num_samples}")
        u = self.uniform((s[0], int(num_samples), s[1]), minval=1e-20, maxval=1.0, dtype=aval_of(logits).dtype)
        g = M.negative(M.log(M.negative(M.log(u))))
        from .array_ops import expand_dims
        return M.argmax(M.add(expand_dims(logits, 1), g), axis=-1, output_type=dtype)

    def shuffle(self, value):
        from .array_ops import gather
        if not aval_of(value).shape:  # a scalar has no first axis to shuffle (TF returns it)
            return value
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
_global = Generator._numpy(None)
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
        g = _op_gens[int(seed)] = Generator._numpy(_op_seed(seed))
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


# -- stateless ops: the same numbers for the same seed pair, in every call and mode --------------

def _stateless_gen(name, seed):
    from ..ir.tracer import Tracer
    if isinstance(seed, Tracer):
        raise TypeError(f"{name}: the seed must be known when the function is traced (Python ints or an eager "
                        "tensor); a seed computed inside tapeflow.function is not supported")
    pair = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed).reshape(-1)
    # TF 2.21 eagerly: InvalidArgumentError "seed must have shape [2], not [3]"
    if pair.shape != (2,):
        raise InvalidArgumentError(f"{name}: seed must be a pair of integers (shape [2]), got {seed!r}")
    if pair.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{name}: seed must be a pair of integers (int32 or int64), got {seed!r}")
    from .philox import stateless_stream
    return Generator(_np=stateless_stream(pair))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=np.float32, name=None, alg="auto_select"):
    return _stateless_gen("stateless_normal", seed).normal(shape, mean, stddev, dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=np.float32, name=None, alg="auto_select"):
    return _stateless_gen("stateless_uniform", seed).uniform(shape, minval, maxval, dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=np.float32, name=None, alg="auto_select"):
    """Deterministic per seed pair, but not TF's numbers (TF's rejection sampler is not reproduced)."""
    return _stateless_gen("stateless_truncated_normal", seed).truncated_normal(shape, mean, stddev, dtype)
