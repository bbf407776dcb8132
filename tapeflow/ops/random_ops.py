"""Seeded random numbers with explicit generators.

``Generator.from_seed(s)`` owns TF's Philox stream (ops/philox.py); the module functions
(``normal``, ``uniform``...) run TF's Philox kernel for the (global seed, op seed) pair TF's seed
rules give them (``_kernel``), so seeded draws are TF 2.21's numbers; an op without any seed draws
from tapeflow's global NumPy stream, which ``set_seed`` also resets. Inside ``tapeflow.function``
each call draws fresh numbers (the stream is a parameter of the random primitive, never a constant).
"""
from __future__ import annotations

import enum
import weakref as _weakref

import numpy as np

from ..core import dtypes as _dt
from ..core.tensor import Tensor, constant, convert_to_tensor
from ..module import Module
from .philox import PhiloxStream, ReplicaStream, _Box
from .._distribute_context import current as _dist_current
from ..core.primitive import bind, aval_of
from ..core.primitives import random as RP
from ..core.primitives import reductions as R
from . import math_ops as M
from ..core.aval import fmt_shape
from ..errors import InvalidArgumentError, InvalidArgumentTypeError, UnimplementedError


def _state_from_seed(seed):
    """TF's create_rng_state(seed, "philox"): the int cut into 3 x 64-bit words, low first."""
    seed = int(seed) % (1 << 192)
    return np.array([(seed >> (64 * i)) & ((1 << 64) - 1) for i in range(3)], np.uint64).view(np.int64)


class Algorithm(enum.Enum):
    """``tf.random.Algorithm`` (TF 2.21's values). tapeflow's Generators and stateless ops are Philox:
    AUTO_SELECT picks it, as TF on the CPU; THREEFRY is refused as TF refuses it without XLA."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _check_alg(alg):
    """None, an Algorithm, its name or its number -> the Algorithm; THREEFRY raises TF's error."""
    if alg is None:
        return Algorithm.AUTO_SELECT
    if isinstance(alg, Algorithm):
        a = alg
    elif isinstance(alg, str) and alg.lower() in ("philox", "threefry", "auto_select"):
        a = Algorithm[alg.upper()]
    elif isinstance(alg, (int, np.integer)) and int(alg) in (1, 2, 3):
        a = Algorithm(int(alg))
    else:
        # TF 2.21's text
        raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are philox for the Philox "
                         "algorithm, threefry for the ThreeFry algorithm, and auto_select for auto-selection.")
    if a is Algorithm.THREEFRY:
        # TF 2.21 raises this at the first draw; tapeflow when the generator is made
        raise UnimplementedError(None, None, "Non-XLA devices don't support the ThreeFry algorithm.")
    return a


class Generator(Module):
    """An explicit random stream (TF's tf.random.Generator).

    ``from_seed``/``from_state``/``from_key_counter``/``from_non_deterministic_state``
    give TF's Philox-4x32-10 stream, whose float32/float64 ``normal`` and
    ``uniform`` and integer ``uniform``/``uniform_full_int`` draws equal TF's
    bit for bit (tapeflow/ops/philox.py). The state is a Variable (``state``),
    so checkpoints save and restore the stream; ``binomial``, ``make_seeds``,
    ``split`` and ``skip`` are TF's too. The module-level functions
    (``tapeflow.random.normal``...) run Generators of TF's op kernels (``_kernel``),
    or for an unseeded op tapeflow's NumPy-backed global one (``Generator._numpy``).
    """

    def __init__(self, copy_from=None, state=None, alg=None, *, _np=None):
        super().__init__(name="generator")
        _check_alg(alg)
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
        if _dist_current() is not None:
            _MirroredGenerator._mirror(self, _dist_current()[0])

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
        # a draw of the random primitive (not a constant), so a traced function draws anew per call
        return _draw(RP.random_uniform_p, shape, "uniform_full_int", dtype=d, minval=None, maxval=None,
                     gen=self._gen)

    def make_seeds(self, count=1):
        """A [2, count] int64 tensor of seeds for stateless ops (keys over zeros, as TF)."""
        from .array_ops import stack, zeros_like
        keys = self.uniform_full_int([count], np.int64)
        return stack([keys, zeros_like(keys)])

    def skip(self, delta):
        """Advances the counter as a draw of ``delta`` outputs would (TF: 256 counters per output)."""
        from .philox import _SKIP_PER_OUTPUT
        st = self.state.numpy().view(np.uint64)
        c = ((int(st[0]) | (int(st[1]) << 64)) + _SKIP_PER_OUTPUT * int(delta)) % (1 << 128)
        self.state.assign(np.array([c & ((1 << 64) - 1), c >> 64, int(st[2])], np.uint64).view(np.int64))

    def binomial(self, shape, counts, probs, dtype=np.int32, name=None):
        """TF's StatefulRandomBinomial: stateless_binomial's samplers (per-element Philox skips, BTRS and
        inversion) on the generator's stream from its current state, which then advances by 256 counters
        per output of num_batches * 200 * (samples_per_batch + 3) / 4 (TF 2.21's reservation, measured)."""
        from .random_binomial_ops import _binomial
        stream = self._gen

        def reserve(nb, spb):
            st = stream.state_var._v.view(np.uint64)
            here = PhiloxStream(_Box(stream.state_var._v.copy()), advance=False)
            if hasattr(stream, "_key") and type(stream) is not PhiloxStream:   # a replica's hashed key
                here._key = stream._key
            c = ((int(st[0]) | (int(st[1]) << 64)) + 256 * (nb * 2 * 100 * (spb + 3) // 4)) % (1 << 128)
            stream.state_var._v = np.array([c & ((1 << 64) - 1), c >> 64, int(st[2])], np.uint64).view(np.int64)
            return here
        return _binomial("Generator.binomial", stream, shape, counts, probs, dtype, reserve=reserve)

    def split(self, count=1):
        """``count`` new generators keyed from this stream (TF's split: counter 0, fresh key)."""
        # (the keys are drawn now, also in a trace: a new Generator's state is a value, as TF's
        # split makes its generators' variables when it runs)
        keys = np.asarray(self._gen.full_int([count], np.int64) if self._state_var is not None else
                          self._gen.integers(-2 ** 63, 2 ** 63 - 1, size=count, dtype=np.int64, endpoint=True))
        return [Generator(state=[0, 0, int(k)]) for k in keys]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, name=None):
        return _draw(RP.random_normal_p, shape, "random.normal", dtype=_dt.np_dtype(dtype), mean=float(mean),
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
        return _draw(RP.random_uniform_p, shape, "random.uniform", dtype=d, minval=minval, maxval=maxval,
                     gen=self._gen)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=np.float32, name=None):
        """Normals redrawn while outside 2 standard deviations (TF's numbers for Philox streams)."""
        return _draw(RP.random_truncated_normal_p, shape, "random.truncated_normal", dtype=_dt.np_dtype(dtype),
                     mean=float(mean), stddev=float(stddev), gen=self._gen)

    def categorical(self, logits, num_samples, dtype=np.int64, seed=None, name=None):
        """Samples class ids from unnormalised log-probabilities (batch, classes).

        The Gumbel-max trick: argmax(logits + Gumbel noise) is an exact sample."""
        s = aval_of(logits).shape
        if len(s) != 2:
            raise InvalidArgumentError(f"random.categorical: logits must be 2-D (batch, classes), got shape "
                                       f"{fmt_shape(s)}")
        if int(num_samples) < 0:
            raise InvalidArgumentError(f"random.categorical: num_samples must be >= 0, got {num_samples}")
        u = self.uniform(_shape_like(logits, (s[0], int(num_samples), s[1])), minval=1e-20, maxval=1.0,
                         dtype=aval_of(logits).dtype)
        g = M.negative(M.log(M.negative(M.log(u))))
        from .array_ops import expand_dims
        return M.argmax(M.add(expand_dims(logits, 1), g), axis=-1, output_type=dtype)

    def shuffle(self, value):
        from .array_ops import gather
        if not aval_of(value).shape:  # a scalar has no first axis to shuffle (TF returns it)
            return value
        keys = self.uniform(_shape_like(value, aval_of(value).shape[:1]))
        return gather(value, bind(R.argsort_p, keys, axis=0, descending=False))


class _MirroredGenerator(Generator):
    """A Generator made under a tf.distribute strategy (``strategy.scope()`` or a replica of
    ``run``), as TF's: in replica ``r`` of a run it draws with its key hashed with ``r``
    (``ReplicaStream``) and advances a state of that replica's own (replica 0's is ``state``,
    the others' copies of it taken at the start of each ``run``, as every mirror of TF's state
    variable holds the same value between runs); outside a replica (the cross-replica context,
    or outside the strategy) it is a plain Generator on ``state``. Only generators made under
    a strategy are of this class: the others' ``_gen`` stays a plain attribute."""

    @staticmethod
    def _mirror(gen, strategy):
        gen.__class__ = _MirroredGenerator   # (Module.__setattr__ passes dunder names through)
        d = gen.__dict__
        d["_primary"] = d.pop("_gen")
        d["_views"] = {}
        d["_dispatch"] = _DispatchStream(gen)
        if hasattr(strategy, "_gens"):
            strategy._gens.add(gen)
        ctx = _dist_current()[1]
        t = getattr(ctx, "_thread", None)
        if t is not None:
            # made inside the replicas of a run: TF makes one mirrored state variable of the
            # replicas' k-th creations, every replica starting from replica 0's initial value
            # (a split() inside the replicas gives replica 1 replica 0's new key, then its hash)
            k = t.n_created
            t.n_created += 1
            if t.replica == 0:
                t.created[k] = gen._state_var._v.copy()
            elif k in t.created:
                gen._state_var._v = t.created[k].copy()

    def _view(self, replica):
        v = self._views.get(replica)
        if v is None:
            state = self._state_var if replica == 0 else _Box(self._state_var._v.copy())
            v = self._views[replica] = ReplicaStream(state, replica)
        return v

    def _sync_replica_states(self, n):
        """The start of a run: the other replicas' states copy replica 0's."""
        for r in range(1, n):
            self._view(r).state_var._v = self._state_var._v.copy()

    def _replica(self):
        from .._distribute_context import replica_context_of_run
        ctx = replica_context_of_run()
        if ctx is None or not hasattr(ctx._strategy, "_gens"):
            return None
        return ctx

    @property
    def _gen(self):
        ctx = self._replica()
        if ctx is None:
            return self._primary
        from ..core.state import STATE
        if STATE.trace is not None and not ctx._traced:
            # a function traced inside a replica: its graph may run in any replica, which the
            # stream asks when it draws
            return self._dispatch
        return self._view(ctx._id)


class _DispatchStream(PhiloxStream):
    """The stream of a _MirroredGenerator inside a function traced in a replica: picks the
    replica's stream when the function runs. A PhiloxStream on the generator's state, so a
    graph holding it serializes (tf.saved_model) as the plain stream on that state: TF saves
    the non-distributed function, whose draws use the key unhashed."""

    def __init__(self, gen):
        super().__init__(gen._state_var)
        self._g = gen

    def _stream(self):
        g = self._g
        ctx = g._replica()
        return g._primary if ctx is None else g._view(ctx._id)

    def _take(self, n_out, per_block):
        return self._stream()._take(n_out, per_block)

    def truncated_normal(self, shape=(), dtype=np.float32):
        return self._stream().truncated_normal(shape, dtype)


def _shape(shape, op="random draw (tf.random.*, dropout, random image ops)"):
    """A draw's shape as a tuple of ints; a dimension known only when the function runs is refused,
    naming ``op`` (for the draws that need their size as a number; the others take _run_shape)."""
    static, dims = _run_shape(shape, op)
    if dims:
        from .array_ops import _RUNTIME_SIZE
        raise ValueError(f"{op}: the shape {fmt_shape(static)} has a dimension that is {_RUNTIME_SIZE}")
    return static


def _symbolic(v):
    return isinstance(v, Tensor) and getattr(v, "_v", 0) is None


def _known_value(t):
    """What a traced integer scalar or 1-D vector is known to hold while tracing, as an object array with None
    where an entry is known only when the function runs (None: nothing known): TF's constant_value_as_shape,
    which follows tf.shape of a partly known shape, constants, slices and single entries of them, reshapes,
    concatenations and casts. So tf.random.normal(tf.shape(x)) of an x of shape (None, 3, 4) has that shape, and
    tf.concat([tf.shape(x)[:1], [3]], 0) is (None, 3)."""
    from ..core.primitives.shape import shape_p, reshape_p, concat_p
    from ..core.primitives.indexing import getitem_p, decode_key
    from ..core.primitives.elementwise import cast_p
    from ..ir.graph import Literal
    trace = getattr(t, "_trace", None)
    if trace is None:
        return None
    producer = {}
    for e in trace.eqns:
        for o in e.outputs:
            producer[id(o)] = e
    consts = {id(v): val for v, val in trace.consts}

    def value(var, depth):
        if var.__class__ is Literal:
            return np.asarray(var.val).astype(object)
        if id(var) in consts:
            c = np.asarray(consts[id(var)])
            return c.astype(object) if c.dtype.kind in "iu" else None
        e = producer.get(id(var))
        if e is None or depth > 16 or len(e.outputs) != 1:
            return None
        if e.prim is shape_p:
            return np.array(e.inputs[0].aval.shape, dtype=object)
        if e.prim is cast_p and np.dtype(e.params.get("dtype", np.float32)).kind in "iu":
            return value(e.inputs[0], depth + 1)
        if e.prim is getitem_p and len(e.inputs) == 1 and all(k[0] in "sine" for k in e.params["key"]):
            v = value(e.inputs[0], depth + 1)
            return None if v is None else np.asarray(v[decode_key(e.params["key"], [])], dtype=object)
        if e.prim is reshape_p:
            v = value(e.inputs[0], depth + 1)
            return None if v is None else np.reshape(v, e.params["shape"])
        if e.prim is concat_p and e.params.get("axis") in (0, -1):
            parts = [value(i, depth + 1) for i in e.inputs]
            if any(p is None or p.ndim != 1 for p in parts):
                parts = [p if p is not None and p.ndim == 1 else np.full(i.aval.shape, None, object)
                         for p, i in zip(parts, e.inputs)]
                if any(None in i.aval.shape for i in e.inputs):
                    return None
            return np.concatenate(parts).astype(object)
        return None
    try:
        v = value(t._var, 0)
    except Exception:   # (a form not followed: nothing known, the dims are operands)
        return None
    if v is None or v.shape != tuple(aval_of(t).shape):
        return None
    return v


def _run_shape(shape, op):
    """A draw's shape as (a tuple with None where a dimension is known only when the function runs, the
    traced integer scalars giving those dimensions, in order): the random primitives take them as operands.
    ``shape``: an int, a list of ints and scalar tensors (eager or traced), or a 1-D integer tensor (eager,
    or traced: tf.shape(x) of an input_signature's None dimension)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),), []
    if _symbolic(shape):
        av = aval_of(shape)
        if av.ndim != 1 or av.dtype.kind not in "iu" or av.shape[0] is None:
            raise InvalidArgumentError(f"{op}: a shape tensor must be a 1-D integer vector of known length, got "
                                       f"a {av.dtype.name} tensor of shape {fmt_shape(av.shape)}")
        v = _known_value(shape)
        known = (None,) * av.shape[0] if v is None else tuple(None if d is None else int(d) for d in v)
        dims = [shape[i] for i, d in enumerate(known) if d is None]
        return known, dims
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
        if isinstance(shape, int):
            return (shape,), []
    static, dims = [], []
    for d in shape:
        if _symbolic(d):
            av = aval_of(d)
            if av.shape != () or av.dtype.kind not in "iu":
                raise InvalidArgumentTypeError(f"{op}: a shape's dimension must be an integer scalar, got a "
                                               f"{av.dtype.name} tensor of shape {fmt_shape(av.shape)}")
            v = _known_value(d)   # (tf.shape(x)[1] of a known dim: that number, as TF)
            if v is not None and v[()] is not None:
                static.append(int(v[()]))
                continue
            static.append(None)
            dims.append(d)
        elif d is None:   # an aval's unknown dim, not its value (int(None) raised a TypeError naming no op)
            from .array_ops import _RUNTIME_SIZE
            raise ValueError(f"{op}: the shape {fmt_shape(tuple(shape))} has a dimension that is {_RUNTIME_SIZE} "
                             f"(pass tf.shape(x) for it)")
        else:
            v = d.numpy() if hasattr(d, "numpy") else d
            if isinstance(v, (float, np.floating)) and not float(v).is_integer():
                # (int() truncated it; TF 2.21: TypeError "Cannot convert 2.5 to EagerTensor of dtype int32")
                raise TypeError(f"{op}: a shape's dimensions must be integers, got {v!r} in {list(shape)}")
            static.append(int(v))
    return tuple(static), dims


def _shape_like(x, shape=None):
    """``shape`` (default: x's) with each None dimension taken from x when the function runs: the shape of
    a draw the size of x (dropout, the noise layers), a list of ints and traced scalars."""
    s = tuple(aval_of(x).shape) if shape is None else tuple(shape)
    if all(d is not None for d in s):
        return s
    from .array_ops import shape as shape_of
    runtime = shape_of(x)
    return [runtime[i] if d is None else d for i, d in enumerate(s)]


def _draw(p, shape, op, **params):
    """bind of a random primitive on a shape of _run_shape's forms."""
    static, dims = _run_shape(shape, op)
    return bind(p, *dims, shape=static, **params)


_global_seed = None
_global = Generator._numpy(None)
_op_gens: dict = {}   # op seed -> Generator (reseeded in place by set_seed): the candidate samplers' streams

# TF's seeds for its stateful ops (tf.random.uniform, normal, ..., random_seed.get_seed): an op runs a
# Philox kernel keyed by (seed, seed2): the global seed and the op seed, both mod 2**31 - 1. Without an op
# seed, eagerly the op seed is the next draw of Python's random.Random(global seed) (TF's
# context.internal_operation_seed), and inside tapeflow.function the graph's count of such ops (0, 1, ...).
# An op seed without a global seed pairs with TF's DEFAULT_GRAPH_SEED. Eagerly TF caches the kernel by its
# attributes, so calls with the same explicit op seed continue one stream; each op of a traced function
# owns its stream. set_seed clears the eager kernels and restarts the traced ones (TF clears its kernel
# cache, compiled functions' kernels included; their seeds stay the ones fixed when traced).
_DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1
_op_seed_rng = None                  # random.Random(global seed)
_kernels: dict = {}                  # (op, dtypes, seed, seed2) -> Generator: eager kernels of explicit op seeds
_traced_states = _weakref.WeakSet()  # the _Box states of traced ops' streams (restarted by set_seed)


def _op_seed(op_seed):
    return int(np.random.SeedSequence([_global_seed or 0, int(op_seed)]).generate_state(1)[0])


def set_seed(seed):
    """TF's tf.random.set_seed: the global seed of the stateful ops (and tapeflow's global stream, which
    the candidate samplers and unseeded draws use); everything random after this call is reproducible,
    also inside already compiled functions, whose streams restart."""
    global _global_seed, _op_seed_rng
    import random as _pyrandom
    _global_seed = None if seed is None else int(seed)
    _op_seed_rng = None if seed is None else _pyrandom.Random(int(seed))
    _kernels.clear()
    for box in list(_traced_states):
        box._v = box.initial.copy()
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


def _tf_seeds(op_seed):
    """TF's random_seed.get_seed: (seed, seed2), or None for an unseeded op."""
    from ..core.state import STATE
    if _global_seed is not None:
        if op_seed is None:
            trace = STATE.trace
            if trace is None:
                op_seed = _op_seed_rng.randint(0, _MAXINT32)
            else:   # the graph's counter (kept on the trace: a retrace counts from 0 again)
                op_seed = trace.__dict__.get("_tf_op_seeds", 0)
                trace.__dict__["_tf_op_seeds"] = op_seed + 1
        seeds = (_global_seed % _MAXINT32, int(op_seed) % _MAXINT32)
    elif op_seed is not None:
        seeds = (_DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32)
    else:
        return None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds   # (TF: (0, 0) would mean "nondeterministic")


def _kernel(op, dtypes, op_seed, advance=True):
    """The stream a stateful op ``op`` (TF's kernel name) draws from: TF's Philox kernel for its seeds
    (key = seed, counter = [0, seed2]); tapeflow's global stream for an unseeded op (TF: a
    nondeterministic one)."""
    from ..core.state import STATE
    seeds = _tf_seeds(op_seed)
    if seeds is None:
        return _global
    key = (op, dtypes) + seeds
    if STATE.trace is None and op_seed is not None and key in _kernels:
        return _kernels[key]
    box = _Box(np.array([0, seeds[1], seeds[0]], np.uint64).view(np.int64))
    box.initial = box._v.copy()
    g = Generator(_np=PhiloxStream(box, advance=advance))
    if STATE.trace is not None:
        _traced_states.add(box)
    elif op_seed is not None:
        _kernels[key] = g
    return g


def _dtname(dtype):
    return _dt.np_dtype(dtype).name


def normal(shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None, name=None):
    """TF's RandomStandardNormal times stddev plus mean (TF's numbers for a seeded op)."""
    return _kernel("RandomStandardNormal", _dtname(dtype), seed).normal(shape, mean, stddev, dtype)


def uniform(shape, minval=0, maxval=None, dtype=np.float32, seed=None, name=None):
    """TF's RandomUniform (floats: u * (maxval - minval) + minval, the difference in ``dtype``) or
    RandomUniformInt (integers: minval + bits % (maxval - minval))."""
    d = _dt.np_dtype(dtype)
    if d.kind in "iu":
        if maxval is None:
            raise ValueError("random.uniform: integer dtypes need maxval")
        return _kernel("RandomUniformInt", d.name, seed).uniform(shape, minval, maxval, d)
    g = _kernel("RandomUniform", d.name, seed)
    u = g.uniform(shape, 0.0, 1.0, d)
    # TF's arithmetic, in the dtype: an int 0 minval scales by maxval alone, else
    # u * (maxval - minval) + minval with the difference rounded in the dtype
    if maxval is None:
        maxval = 1
    if isinstance(minval, int) and not isinstance(minval, bool) and minval == 0:
        if isinstance(maxval, int) and not isinstance(maxval, bool) and maxval == 1:
            return u
        return M.multiply(u, convert_to_tensor(maxval, dtype=d))
    lo, hi = convert_to_tensor(minval, dtype=d), convert_to_tensor(maxval, dtype=d)
    return M.add(M.multiply(u, M.subtract(hi, lo)), lo)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=np.float32, seed=None, name=None):
    return _kernel("TruncatedNormal", _dtname(dtype), seed).truncated_normal(shape, mean, stddev, dtype)


def categorical(logits, num_samples, dtype=np.int64, seed=None, name=None):
    """TF's Multinomial kernel on the op's stream (see stateless_categorical); unseeded, tapeflow's
    Gumbel-max on the global stream."""
    x = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    g = _kernel("Multinomial", (aval_of(x).dtype.name, _dtname(dtype)), seed)
    if g is _global:
        return g.categorical(x, num_samples, dtype)
    return _multinomial("random.categorical", x, num_samples, dtype, g, stateful=True)


def shuffle(value, seed=None, name=None):
    """TF's RandomShuffle: a forward Fisher-Yates pass over the first dimension, the i-th partner
    ``i + word_i % (n - i)`` from the op stream's 32-bit words (n - 1 of them; the stream advances by
    the blocks read)."""
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if sum(d is None for d in aval_of(x).shape[1:]) > 1:
        # (the rows' gather: getitem's shape rule stands a large size in for each unknown dimension and
        # would allocate their product)
        from .array_ops import _RUNTIME_SIZE
        raise ValueError(f"random.shuffle: x of shape {fmt_shape(aval_of(x).shape)} has more than one dimension "
                         f"after the first that is {_RUNTIME_SIZE}")
    g = _kernel("RandomShuffle", aval_of(x).dtype.name, seed, advance="blocks")
    if g is _global:
        return g.shuffle(x)
    s = tuple(aval_of(x).shape)
    if not s or (s[0] is not None and s[0] <= 1) or 0 in s[1:]:
        return x
    from .array_ops import gather, shape as shape_of
    from .random_shuffle_ops import _fisher_yates
    from .script_ops import numpy_function
    from ..compiler.function import TensorSpec
    n = s[0]
    if n is None:
        # a first dimension known when the function runs: n - 1 words (none for n <= 1, which draws nothing,
        # as a static n <= 1 returns x untouched)
        n = shape_of(x, out_type=np.int64)[0]
        count = M.maximum(M.subtract(n, np.int64(1)), np.int64(0))
        words = bind(RP.random_uniform_p, count, shape=(None,), dtype=np.dtype(np.uint32), minval=None,
                     maxval=None, gen=g._gen)
        perm = numpy_function(lambda w, m: _fisher_yates(w, int(m)), [words, n], TensorSpec([None], "int64"))
        return gather(x, perm)
    words = bind(RP.random_uniform_p, shape=(n - 1,), dtype=np.dtype(np.uint32), minval=None, maxval=None,
                 gen=g._gen)
    perm = numpy_function(lambda w: _fisher_yates(w, n), [words], TensorSpec([n], "int64"))
    return gather(x, perm)


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


def _traced_seed(name, seed, fn, inputs, shape, out_dtype, runtime_shape=False):
    """A stateless op whose seed is computed inside the function being traced (TF takes a seed tensor, e.g. a
    keras SeedGenerator's state): the draw needs the pair's value, so the op runs when the function runs, as a
    numpy_function of the seed (and its other operands) calling the eager op ``fn(shape, seed, *inputs)``; None
    for a known seed. ``shape``: the result's, in _run_shape's forms; its run-time dimensions are operands too,
    filled in before ``fn`` runs. ``runtime_shape``: also for a known seed when the shape is a run-time value
    (the per-element samplers, which size their loops with it)."""
    from ..ir.tracer import Tracer
    static, dims = _run_shape(shape, name)
    if not isinstance(seed, Tracer) and not (runtime_shape and dims):
        return None
    if isinstance(seed, Tracer) and (tuple(aval_of(seed).shape) != (2,) or aval_of(seed).dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{name}: seed must be a pair of integers (shape [2]), got a "
                                   f"{aval_of(seed).dtype.name} tensor of shape {fmt_shape(aval_of(seed).shape)}")
    if not isinstance(seed, Tracer):
        _stateless_gen(name, seed)   # (the eager checks of a known seed, while tracing)
        seed = convert_to_tensor(np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed))
    from ..compiler.function import TensorSpec
    from .script_ops import numpy_function
    ins = [x if isinstance(x, (Tensor, Tracer)) else convert_to_tensor(x) for x in inputs]
    k = len(dims)

    def run(sd, *xs):
        it = iter(xs[len(xs) - k:])
        filled = tuple(int(next(it)) if d is None else d for d in static)
        xs = xs[:len(xs) - k]
        return np.asarray(fn(filled, np.asarray(sd), *(constant(np.asarray(x)) for x in xs)).numpy())
    return numpy_function(run, [seed] + ins + list(dims), TensorSpec(list(static), np.dtype(out_dtype).name))


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=np.float32, name=None, alg="auto_select"):
    t = _traced_seed("stateless_normal", seed, lambda sh, sd: stateless_normal(sh, sd, mean, stddev, dtype), [],
                     shape, _dt.np_dtype(dtype))
    if t is not None:
        return t
    return _stateless_gen("stateless_normal", seed).normal(shape, mean, stddev, dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=np.float32, name=None, alg="auto_select"):
    """Integer dtypes with ``minval=None, maxval=None``: the dtype's full range (TF's bits)."""
    d = _dt.np_dtype(dtype)
    lims = [v for v in (minval, maxval) if v is not None]
    t = _traced_seed("stateless_uniform", seed,
                     lambda sh, sd, *ls: stateless_uniform(sh, sd, *(ls if lims else (None, None)), dtype=dtype),
                     lims, shape, d)
    if t is not None:
        return t
    if d.kind in "iu" and (minval is None or maxval is None):
        if minval is not None or maxval is not None:
            raise ValueError(f"stateless_uniform: for integer dtype {d.name}, minval and maxval must be both None "
                             f"or not None, got minval={minval}, maxval={maxval}")
        gen = _stateless_gen("stateless_uniform", seed)
        static, dims = _run_shape(shape, "stateless_uniform")
        if dims:   # (a draw when the function runs, of the seed's fixed stream)
            return bind(RP.random_uniform_p, *dims, shape=static, dtype=d, minval=None, maxval=None, gen=gen._gen)
        return constant(gen._gen.full_int(static, d))
    return _stateless_gen("stateless_uniform", seed).uniform(shape, minval, maxval, dtype)


def _seed_dtype(seed):
    if hasattr(seed, "dtype") and hasattr(seed, "numpy"):
        return _dt.np_dtype(seed.dtype)
    a = np.asarray(seed)
    return np.dtype(np.int32) if a.dtype.kind in "iu" and not isinstance(seed, np.ndarray) else a.dtype


def split(seed, num=2, alg="auto_select"):
    """``num`` new seed pairs from ``seed``: TF's stateless_split (a full-range stateless draw of
    shape [num, 2] in the seed's dtype; a Python tuple is int32, as TF), so TF's seeds."""
    return stateless_uniform([int(num), 2], seed, minval=None, maxval=None, dtype=_seed_dtype(seed))


def fold_in(seed, data, alg="auto_select"):
    """TF's stateless_fold_in: ``[full-range draw from seed, data]`` in data's dtype (TF's numbers)."""
    from .array_ops import stack
    from ..core.tensor import convert_to_tensor
    d = data if hasattr(data, "dtype") else convert_to_tensor(data)
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=d.dtype)
    return stack([first, d])


def create_rng_state(seed, alg):
    """The initial state of a Generator for ``seed``: 3 int64 words for Philox, 2 for ThreeFry
    (the seed cut into 64-bit words, low first), as TF."""
    name = str(getattr(alg, "name", alg)).lower()
    if name in ("philox", "1"):
        return constant(_state_from_seed(seed))
    if name in ("threefry", "2"):
        v = int(seed) % (1 << 128)
        return constant(np.array([v & ((1 << 64) - 1), v >> 64], np.uint64).view(np.int64))
    raise ValueError(f"create_rng_state: unsupported algorithm {alg!r}; use 'philox' or 'threefry'")


def stateless_categorical(logits, num_samples, seed, dtype=np.int64, name=None):
    """TF's numbers for the seed pair: TF's CPU Multinomial kernel (see _multinomial) on the
    stateless stream, whose uniforms are then a constant of the seed and the sizes."""
    x = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    t = _traced_seed("stateless_categorical", seed,
                     lambda sh, sd, lg: stateless_categorical(lg, num_samples, sd, dtype), [x],
                     _shape_like(x, (aval_of(x).shape[0], int(num_samples))) if len(aval_of(x).shape) == 2 else
                     (0, 0), _dt.np_dtype(dtype))
    if t is not None:
        return t
    gen = _stateless_gen("stateless_categorical", seed)
    return _multinomial("stateless_categorical", x, num_samples, dtype, gen, stateful=False)


def _multinomial(name, x, num_samples, dtype, gen, stateful):
    """TF's CPU Multinomial kernel: its stream does not depend on the logits (one double per sample,
    row after row, from two consecutive Philox words), then per row the cumulative sums in float64
    of exp(logit - max) over the finite logits and, per sample, the number of them <= u * total (its
    upper_bound). Composed, so it traces; the draw matches TF's while TF runs the batch as one shard
    (its CPU kernel splits large batches across threads, each restarting the stream at its own
    offset). The stateful kernel (tf.random.categorical) reserves 512 counters per sample of a
    batch padded to a multiple of 4 samples; its uniforms are drawn when the op runs."""
    from .array_ops import expand_dims, reshape
    from .philox import _u64_to_double
    s = aval_of(x).shape
    if len(s) != 2:
        raise InvalidArgumentError(f"{name}: logits should be a matrix (batch, classes), got shape "
                                   f"{fmt_shape(s)}")
    n = int(num_samples)
    if n < 0:
        raise InvalidArgumentError(f"{name}: num_samples should be non-negative, got {n}")
    if s[1] == 0:
        raise InvalidArgumentError(f"{name}: num_classes should be positive, got 0")
    d = aval_of(x).dtype
    if _dt.kind(d) != "f":
        raise InvalidArgumentTypeError(f"{name}: logits must be floats, got {d.name}")
    batch = s[0]
    if batch is None:
        # a batch known when the function runs: the same draws, sized then (the i-th row's samples are
        # doubles i * n .. i * n + n - 1 of the flat draw, as for a static batch)
        from .array_ops import shape as shape_of, range as range_
        b = shape_of(x, out_type=np.int64)[0]
        if stateful:
            n4 = -(-n // 4) * 4
            flat = bind(RP.random_uniform_p, M.multiply(b, np.int64(2 * n4)), shape=(None,),
                        dtype=np.dtype(np.float64), minval=0.0, maxval=1.0, gen=gen._gen)
            from .array_ops import gather
            at = M.add(M.multiply(expand_dims(range_(b), 1), np.int64(n)), constant(np.arange(n, dtype=np.int64)))
            u = gather(flat, at)
        else:   # the stateless stream's float64 uniforms are _u64_to_double of word pairs, as below
            u = bind(RP.random_uniform_p, b, shape=(None, n), dtype=np.dtype(np.float64), minval=0.0, maxval=1.0,
                     gen=gen._gen)
    elif stateful:
        # TF 2.21's kernel reserves 512 counters per sample of the batch padded to 4 samples a row
        # (measured: its next call starts there); a draw of 2 * batch * n4 doubles advances as much
        n4 = -(-n // 4) * 4
        u = bind(RP.random_uniform_p, shape=(2 * batch * n4,), dtype=np.dtype(np.float64), minval=0.0, maxval=1.0,
                 gen=gen._gen)
        u = reshape(u[:batch * n], (batch, n))
    else:
        words = gen._gen._take(batch * n, 2).ravel()[:2 * batch * n]
        u = constant(_u64_to_double(words[0::2], words[1::2]).reshape(batch, n))
    x64 = M.cast(x, np.float64)
    finite = M.is_finite(x64)
    low = float(np.finfo(np.float32 if d == _dt.BF16 else d).min)
    mx = M.reduce_max(M.where(finite, x64, low), axis=1, keepdims=True)
    cdf = M.cumsum(M.where(finite, M.exp(M.subtract(x64, mx)), 0.0), axis=1)
    to_find = M.multiply(u, cdf[:, -1:])
    below = M.less_equal(expand_dims(cdf, 1), expand_dims(to_find, 2))
    return M.cast(M.reduce_sum(M.cast(below, np.int64), axis=2), dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=np.float32, name=None, alg="auto_select"):
    """TF's numbers for the seed pair (its rejection layout: see PhiloxStream.truncated_normal)."""
    t = _traced_seed("stateless_truncated_normal", seed,
                     lambda sh, sd: stateless_truncated_normal(sh, sd, mean, stddev, dtype), [], shape,
                     _dt.np_dtype(dtype))
    if t is not None:
        return t
    return _stateless_gen("stateless_truncated_normal", seed).truncated_normal(shape, mean, stddev, dtype)


# -- gamma and Poisson: TF's per-element rejection samplers (ops/random_gamma_poisson_ops.py) ----------

def _advance(stream, n):
    """The state ``stream`` holds now, then moved on by ``n`` outputs (TF's ReserveRandomOutputs(n, 256)):
    the state a stateful per-element sampler draws from. tapeflow's NumPy global stream (an unseeded
    op) gives a fresh Philox state of its own draws."""
    from .philox import _SKIP_PER_OUTPUT
    if not isinstance(stream, PhiloxStream):
        return stream.integers(-2 ** 63, 2 ** 63 - 1, size=3, dtype=np.int64, endpoint=True)
    here = stream.state_var._v.copy()
    if stream.advance:
        st = here.view(np.uint64)
        c = ((int(st[0]) | (int(st[1]) << 64)) + _SKIP_PER_OUTPUT * int(n)) % (1 << 128)
        stream.state_var._v = np.array([c & ((1 << 64) - 1), c >> 64, int(st[2])], np.uint64).view(np.int64)
    return here


def _per_element_draw(sampler, stream, param, out_shape, num_samples, out_dtype, dims=()):
    """``sampler(state, flat params, num_samples)`` reshaped to ``out_shape`` in ``out_dtype``. Eagerly it
    runs now; inside a trace a stateful stream (or a traced parameter) makes it a numpy_function, so
    the draw happens, and the stream advances, when the function runs. ``dims``: the traced values of
    out_shape's None dimensions (a run-time shape; num_samples None: the count of its leading dimensions,
    those before the parameters')."""
    from ..core.state import STATE
    from ..ir.tracer import Tracer

    def run(pv, *ds):
        it = iter(ds)
        shape = tuple(int(next(it)) if d is None else d for d in out_shape)
        if any(d < 0 for d in shape):   # (TF 2.21's text, when the function runs)
            raise InvalidArgumentError(f"Dimension {min(shape)} must be >= 0 (the run-time shape {list(shape)})")
        total = int(np.prod(shape, dtype=np.int64))
        if total == 0:
            return np.zeros(shape, out_dtype)
        n = num_samples if num_samples is not None else \
            int(np.prod(shape[:len(shape) - np.ndim(pv)], dtype=np.int64))
        st = _advance(stream, total)
        with np.errstate(invalid="ignore", over="ignore"):
            return sampler(st, np.asarray(pv), n).astype(out_dtype).reshape(shape)
    fixed = isinstance(stream, PhiloxStream) and not stream.advance
    if STATE.trace is None or (fixed and not isinstance(param, Tracer) and not dims):
        return constant(run(param.numpy()))
    from ..compiler.function import TensorSpec
    from .script_ops import numpy_function
    return numpy_function(run, [param] + list(dims), TensorSpec(list(out_shape), np.dtype(out_dtype).name))


def _gamma_params(fn, alpha, beta, dtype):
    from .array_ops import broadcast_to
    d_ = _dt.np_dtype(dtype)
    if d_.kind != "f":
        raise TypeError(f"{fn}: dtype must be a float dtype, got {d_.name}")
    a = convert_to_tensor(alpha, dtype=d_)
    b = convert_to_tensor(1 if beta is None else beta, dtype=d_)
    bshape = tuple(np.broadcast_shapes(tuple(aval_of(a).shape), tuple(aval_of(b).shape)))
    return d_, broadcast_to(a, bshape), b, bshape


def _gamma_finish(x, a_b, b, out_shape, d_):
    """TF's maximum(tiny, sample / beta), the sample carrying TF's implicit gradient in alpha
    (RandomGammaGrad; alpha - stop_gradient(alpha) is 0 in value and 1 in derivative) and beta's
    exactly."""
    from .array_ops import broadcast_to
    # (a run-time shape: alpha broadcast by an add of zeros, whose gradient sums as broadcast_to's)
    a_full = M.add(M.zeros_like_(x), a_b) if None in out_shape else broadcast_to(a_b, out_shape)
    a_sg = M.stop_gradient(a_full)
    x = M.add(x, M.multiply(M.subtract(a_full, a_sg), M.stop_gradient(_gamma_sample_grad(a_sg, x))))
    return M.maximum(float(np.finfo(d_).tiny), M.divide(x, b))


def gamma(shape, alpha, beta=None, dtype=np.float32, seed=None, name=None):
    """Gamma(alpha, rate beta) samples of shape ``shape + broadcast(alpha, beta).shape`` (TF's layout);
    TF's RandomGamma kernel on the op's stream, so TF's numbers for a seeded op."""
    d_ = _dt.np_dtype(dtype)
    return _gamma_draw(_kernel("RandomGamma", d_.name, seed), shape, alpha, beta, dtype, "random.gamma")


def _gamma_draw(gen, shape, alpha, beta, dtype, fn):
    """TF's RandomGamma kernel drawing from the Generator ``gen`` (its stream advances as a stateful op's):
    tf.random.gamma's draw, and the preprocessing layers' (MixUp, CutMix, AugMix) on their own streams."""
    from .random_gamma_poisson_ops import gamma_np
    d_, a_b, b, bshape = _gamma_params(fn, alpha, beta, dtype)
    static, dims = _run_shape(shape, fn)
    out_shape = static + bshape
    n = None if dims else int(np.prod(static, dtype=np.int64))
    x = _per_element_draw(gamma_np, gen._gen, M.stop_gradient(a_b), out_shape, n, d_, dims)
    return _gamma_finish(x, a_b, b, out_shape, d_)


def _suffix(fn, out_shape, pshape):
    if len(pshape) > len(out_shape) or tuple(out_shape[len(out_shape) - len(pshape):]) != tuple(pshape):
        raise InvalidArgumentError(f"{fn}: shape {list(out_shape)} must end with the parameters' broadcast shape "
                                   f"{list(pshape)}")
    return int(np.prod(out_shape[:len(out_shape) - len(pshape)], dtype=np.int64))


def stateless_gamma(shape, seed, alpha, beta=None, dtype=np.float32, name=None):
    """TF's StatelessRandomGammaV3 for the seed pair (TF's numbers); ``shape`` is the output shape, ending
    with broadcast(alpha, beta).shape."""
    t = _traced_seed("stateless_gamma", seed,
                     lambda sh, sd, a, *b: stateless_gamma(sh, sd, a, b[0] if b else None, dtype),
                     [alpha] + ([] if beta is None else [beta]), shape, _dt.np_dtype(dtype), runtime_shape=True)
    if t is not None:
        return t
    gen = _stateless_gen("stateless_gamma", seed)
    d_, a_b, b, bshape = _gamma_params("stateless_gamma", alpha, beta, dtype)
    out_shape = tuple(_shape(shape, "stateless_gamma"))
    n = _suffix("stateless_gamma", out_shape, bshape)
    from .random_gamma_poisson_ops import gamma_np
    x = _per_element_draw(gamma_np, gen._gen, M.stop_gradient(a_b), out_shape, n, d_)
    return _gamma_finish(x, a_b, b, out_shape, d_)


def _gamma_sample_grad(a, x):
    """TF's RandomGammaGrad: d x / d alpha of a Gamma(alpha, 1) draw x held at its quantile (implicit
    reparameterization, Figurnov et al. 2018): -(dP(alpha, x)/d alpha) / p(x; alpha), p the density;
    0 at x = 0 (TF's value there)."""
    from ..core.primitives import special as SP
    from .special_ops import lgamma
    pos = M.greater(x, 0.0)
    xs = M.where(pos, x, M.ones_like_(x))
    log_density = M.subtract(M.subtract(M.multiply(M.subtract(a, 1.0), M.log(xs)), xs), lgamma(a))
    g = M.negative(M.divide(bind(SP.igamma_grad_a_p, a, xs), M.exp(log_density)))
    return M.where(pos, g, M.zeros_like_(g))


def _rate(fn, lam):
    t = lam if isinstance(lam, Tensor) else convert_to_tensor(lam)
    if aval_of(t).dtype.name not in ("float16", "float32", "float64", "int32", "int64"):
        raise InvalidArgumentTypeError(f"{fn}: lam must be float16, float32, float64, int32 or int64, got "
                                       f"{aval_of(t).dtype.name}")
    return M.stop_gradient(t)


def poisson(shape, lam, dtype=np.float32, seed=None, name=None):
    """Poisson(lam) samples of shape ``shape + lam.shape`` in ``dtype``: TF's RandomPoissonV2 kernel on the
    op's stream (TF's numbers for a seeded op)."""
    from .random_gamma_poisson_ops import poisson_np
    t = _rate("random.poisson", lam)
    out_d = _dt.np_dtype(dtype)
    g = _kernel("RandomPoissonV2", (aval_of(t).dtype.name, out_d.name), seed)
    static, dims = _run_shape(shape, "random.poisson")
    out_shape = static + tuple(aval_of(t).shape)
    n = None if dims else int(np.prod(static, dtype=np.int64))
    return _per_element_draw(poisson_np, g._gen, t, out_shape, n, out_d, dims)


def stateless_poisson(shape, seed, lam, dtype=np.int32, name=None):
    """TF's StatelessRandomPoisson for the seed pair (TF's numbers); ``shape`` is the output shape, ending
    with lam's shape."""
    from .random_gamma_poisson_ops import poisson_np
    t = _traced_seed("stateless_poisson", seed, lambda sh, sd, lm: stateless_poisson(sh, sd, lm, dtype), [lam],
                     shape, _dt.np_dtype(dtype), runtime_shape=True)
    if t is not None:
        return t
    gen = _stateless_gen("stateless_poisson", seed)
    t = _rate("stateless_poisson", lam)
    out_shape = tuple(_shape(shape, "stateless_poisson"))
    n = _suffix("stateless_poisson", out_shape, tuple(aval_of(t).shape))
    return _per_element_draw(poisson_np, gen._gen, t, out_shape, n, _dt.np_dtype(dtype))
