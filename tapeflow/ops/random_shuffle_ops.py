"""Wave 21's stateless shuffles: ``tf.random_index_shuffle`` / ``tf.random.experimental.index_shuffle`` and
``tf.random.experimental.stateless_shuffle``, TF 2.21's numbers bit for bit.

index_shuffle: TF's kernel maps ``index`` through a pseudorandom permutation of [0, max_index] without
materializing it: a Simon block cipher (Beaulieu et al. 2013, reduced to TF's fixed 3-word key and an even
number of rounds, 4 by default) on a block of ceil(log2(max_index)) bits rounded up to even and at least 16,
iterated until the value falls in range (cycle walking: Black & Rogaway's cipher on a subset). Here the
cipher runs on uint64 NumPy words, every element of a batch at once (the words masked to the half-block).

stateless_shuffle: TF's kernel runs a forward Fisher-Yates pass whose i-th swap partner is ``i + u_i mod
(n - i)``, u_i the i-th 32-bit word of the stateless Philox stream (philox.stateless_stream: TF's key and
counter for the seed pair). The permutation depends only on the seed and the first dimension, so a trace
computes it once and gathers (differentiable, as a gather).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.primitive import aval_of
from ..core.aval import fmt_shape
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError

#: the first seed word tf.random.experimental.index_shuffle prepends to a seed pair (TF's constant)
_INDEX_SHUFFLE_PAD = 498247692
_SIMON_C = 0xFFFFFFFC
_SIMON_Z = 0x7369F885192C0EF5
_INT_DTYPES = ("int32", "int64", "uint32", "uint64")
#: TF's attr errors name C types
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half", "bool": "bool"}


def _rotl(x, r, w, mask):
    return ((x << np.uint64(r)) | (x >> np.uint64(w - r))) & mask


def _rotr(x, r, w, mask):
    return ((x >> np.uint64(r)) | (x << np.uint64(w - r))) & mask


def _simon_f(x, w, mask):
    return (_rotl(x, 1, w, mask) & _rotl(x, 8, w, mask)) ^ _rotl(x, 2, w, mask)


def _index_shuffle_np(index, key, max_index, rounds):
    """TF's random::index_shuffle on arrays: index, max_index (n,) uint64, key (n, 3) uint32-valued uint64."""
    out = np.zeros_like(index)
    with np.errstate(divide="ignore"):
        bits = np.ceil(np.log2(max_index.astype(np.float64)))     # (TF: std::ceil(std::log2(max_index)), in double)
    bits = np.where(max_index == 0, 0, bits).astype(np.int64)
    block = np.minimum(np.maximum(bits + bits % 2, 16), 64)
    for b in np.unique(block[max_index != 0]):
        sel = np.nonzero((block == b) & (max_index != 0))[0]
        w = int(b) // 2
        mask = np.uint64((1 << w) - 1)
        rk = [key[sel, j] & mask for j in range(3)]
        z = _SIMON_Z & ((1 << w) - 1)
        c = np.uint64(_SIMON_C & ((1 << w) - 1))
        for i in range(3, rounds):
            rk.append(c ^ np.uint64(z & 1) ^ rk[i - 3] ^ _rotr(rk[i - 1], 3, w, mask) ^ _rotr(rk[i - 1], 4, w, mask))
            z >>= 1
        value, top = index[sel].copy(), max_index[sel]

        def encrypt(v, keys):
            left, right = (v >> np.uint64(w)) & mask, v & mask
            for i in range(0, rounds, 2):
                left = left ^ _simon_f(right, w, mask) ^ keys[i]
                right = right ^ _simon_f(left, w, mask) ^ keys[i + 1]
            return (left << np.uint64(w)) | right
        keyrows = np.stack(rk, 1)
        if w <= 10 and len(np.unique(keyrows, axis=0)) == 1:
            # a 16..20-bit block under one key: the cipher's whole table once, then the walk is one gather a
            # step. (Cycle walking takes 2^bits / (max_index + 1) steps on average: 6554 for max_index = 9,
            # 32768 for 1, where a step of the cipher on NumPy arrays costs ~100 us.)
            table = encrypt(np.arange(1 << (2 * w), dtype=np.uint64), [k[:1] for k in rk])
            todo = np.arange(sel.size)
            while todo.size:
                value[todo] = table[value[todo]]
                todo = todo[value[todo] > top[todo]]    # cycle walking: encrypt again until in range
        else:
            todo = np.arange(sel.size)
            while todo.size:
                value[todo] = encrypt(value[todo], [k[todo] for k in rk])
                todo = todo[value[todo] > top[todo]]
        out[sel] = value
    return out


def _known(x, what, op):
    from ..ir.tracer import Tracer
    if isinstance(x, Tracer):
        return None
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x)


def random_index_shuffle(index, seed, max_index, rounds=4, name=None):
    """tf.random_index_shuffle (TF's raw RandomIndexShuffle op): the position of ``index`` in the permutation
    of [0, max_index] that ``seed`` (shape [3], or [n, 3] for a batch) picks; index and max_index scalars or
    vectors of one integer dtype (int32, int64, uint32, uint64), the output in that dtype. ``rounds``: the
    cipher's rounds, even and >= 4 (TF asserts it only in debug builds; an odd count reads past its round keys)."""
    op = "random_index_shuffle"
    index = index if isinstance(index, Tensor) else convert_to_tensor(index)
    dt = aval_of(index).dtype
    max_index = max_index if isinstance(max_index, Tensor) else convert_to_tensor(np.asarray(max_index, dt))
    seed = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)
    if dt.name not in _INT_DTYPES:
        raise InvalidArgumentTypeError(f"Value for attr 'dtype' of {_TF_TYPE_NAMES.get(dt.name, dt.name)} is not in "
                                       "the list of allowed values: "
                                       f"int32, uint32, int64, uint64 ({op})")
    if aval_of(max_index).dtype != dt:
        raise InvalidArgumentTypeError(f"{op}: index ({dt.name}) and max_index ({aval_of(max_index).dtype.name}) must "
                                       "have the same dtype")
    if aval_of(seed).dtype.name not in _INT_DTYPES:
        raise InvalidArgumentTypeError(f"Value for attr 'Tseed' of {aval_of(seed).dtype.name} is not in the list of "
                                       f"allowed values: int32, uint32, int64, uint64 ({op})")
    rounds = int(rounds)
    if rounds < 4 or rounds % 2:
        raise InvalidArgumentError(f"{op}: rounds must be even and at least 4, got {rounds}")
    si, ss, sm = (tuple(aval_of(v).shape) for v in (index, seed, max_index))
    if len(si) > 1:
        raise InvalidArgumentError("Index bust be a scalar or vector.")          # (sic: TF 2.21's text)
    n = max(int(np.prod(si, dtype=np.int64)), int(np.prod(sm, dtype=np.int64)), int(np.prod(ss, dtype=np.int64)) // 3)
    if not (ss == (3,) or (len(ss) == 2 and ss[0] == n and ss[1] == 3)):
        raise InvalidArgumentError(f"Seed must be a vector of size [3] or a matrix of size [{n}, 3] but got "
                                   f"[{','.join(map(str, ss))}].")
    if si not in ((), (n,)):
        raise InvalidArgumentError("Index bust be a scalar or vector.")
    if sm not in ((), (n,)):
        raise InvalidArgumentError(f"Maxval must be a scalar or a vector of the same size as index but got "
                                   f"[{','.join(map(str, sm))}]")
    all_scalar = si == () and ss == (3,) and sm == ()
    out_shape = () if all_scalar else (n,)

    def run(i, s, m):
        i64 = np.broadcast_to(np.asarray(i).astype(np.uint64), (n,))
        m64 = np.broadcast_to(np.asarray(m).astype(np.uint64), (n,))
        over = np.nonzero(m64 < i64)[0]
        if over.size:            # TF 2.21's text
            raise InvalidArgumentError(f"max_index must be >= index, but {m64[over[0]]} < {i64[over[0]]}")
        key = np.broadcast_to(np.asarray(s).reshape(-1, 3).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF),
                              (n, 3))
        return _index_shuffle_np(i64, key, m64, rounds).astype(dt).reshape(out_shape)
    vals = [_known(v, w, op) for v, w in ((index, "index"), (seed, "seed"), (max_index, "max_index"))]
    if all(v is not None for v in vals):
        return Tensor(run(*vals))
    from ..compiler.function import TensorSpec
    from .script_ops import numpy_function
    return numpy_function(run, [index, seed, max_index], TensorSpec(list(out_shape), dt.name))


def index_shuffle(index, seed, max_index):
    """tf.random.experimental.index_shuffle: ``random_index_shuffle`` with a seed pair (shape [2] or [n, 2]),
    TF's padding of it to three words, and 4 rounds."""
    seed = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)
    from .array_ops import pad
    rank = len(aval_of(seed).shape)
    seed = pad(seed, [[1, 0]] + [[0, 0]] * (rank - 1), constant_values=_INDEX_SHUFFLE_PAD)
    return random_index_shuffle(index, seed, max_index, rounds=4)


def _shuffle_permutation(seed, n):
    """TF's RandomShuffle's permutation of range(n) for a stateless seed pair (n - 1 words of the stream)."""
    from .random_ops import _stateless_gen
    perm = np.arange(n, dtype=np.int64)
    if n <= 1:
        return perm
    stream = _stateless_gen("stateless_shuffle", seed)._gen
    return _fisher_yates(stream._take(n - 1, 4).ravel()[:n - 1], n)


def _fisher_yates(words, n):
    """TF's RandomShuffle pass: swap i with i + words[i] % (n - i), i = 0 .. n - 2 (uint32 words)."""
    perm = np.arange(n, dtype=np.int64)
    u = np.asarray(words).astype(np.uint32).astype(np.int64)
    for i in range(n - 1):
        j = i + int(u[i]) % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """tf.random.experimental.stateless_shuffle: ``value`` shuffled along its first dimension by the permutation
    the seed pair picks (TF's bits). Philox only, as TF's kernel."""
    from .array_ops import gather
    from .random_ops import _check_alg
    _check_alg(alg)
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    shape = tuple(aval_of(x).shape)
    if shape and shape[0] is None and 0 not in shape[1:]:
        # a first dimension known when the function runs (an input_signature's None batch): the permutation
        # of that many rows, the same n - 1 words of the seed's stream, computed then
        from .random_ops import _stateless_gen
        from .array_ops import shape as shape_of
        from .script_ops import numpy_function
        from ..compiler.function import TensorSpec
        if sum(d is None for d in shape[1:]) > 1:   # (as tf.random.shuffle: getitem's rule would allocate)
            raise InvalidArgumentError(f"stateless_shuffle: x of shape {fmt_shape(shape)} has more than one "
                                       "dimension after the first known only when the function runs")
        _stateless_gen("stateless_shuffle", seed)        # (validates the seed as TF does)
        pair = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed)
        perm = numpy_function(lambda m: _shuffle_permutation(pair, int(m)), [shape_of(x, out_type=np.int64)[0]],
                              TensorSpec([None], "int64"))
        return gather(x, perm)
    if not shape or shape[0] is None or shape[0] <= 1 or 0 in shape:
        from .random_ops import _stateless_gen
        _stateless_gen("stateless_shuffle", seed)        # (validates the seed as TF does)
        return x
    return gather(x, _shuffle_permutation(seed, shape[0]))
