"""Feature crosses: tf.sparse.cross/cross_hashed (TF's SparseCrossV2 / SparseCross with
hashed_output) and tf.ragged.cross/cross_hashed (RaggedCross), one kernel for both.

Each input is a column of per-row feature lists (a SparseTensor's entries of a row, a dense
matrix's row, a RaggedTensor's row). A row's crosses are the Cartesian product of its lists, the
last column varying fastest (TF's ProductIterator); a row with an empty list has none. A string
cross joins the features' strings with ``separator`` (integers as decimal text); a hashed cross
folds the features' hashes into ``hash_key`` with TF's FingerprintCat64, a string's hash being
FarmHash Fingerprint64 (``util/farmhash.py``) and an integer's its own 64 bits, then takes
``% num_buckets`` (``% (2**63 - 1)`` when num_buckets is 0, TF's non-negative int64): bit for bit
TF 2.21's values (tests/test_sparse22.py and test_ragged22.py hold TF's numbers).

The kernel is NumPy on the inputs' values: the crosses are strings or 64-bit hashes whose count
per row the data decides, and no cross is differentiable, so no primitive composition would buy a
gradient. Inside ``tapeflow.function`` it is one ``py_call`` equation with outputs of unknown
length (as ``tf.numpy_function`` with TensorSpecs), so a traced call gives the eager values.
"""
from __future__ import annotations

import numpy as np

from .core.primitive import aval_of, bind
from .core.state import STATE
from .core.tensor import Tensor, convert_to_tensor
from .errors import InvalidArgumentError
from .util.farmhash import fingerprint64

_M64 = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_K_MUL = 0xc6a4a7935bd1e995
DEFAULT_HASH_KEY = 0xDECAFCAFFE     # TF's _DEFAULT_HASH_KEY / _DEFAULT_CROSS_HASH_KEY


def fingerprint_cat64(fp1, fp2):
    """TF's FingerprintCat64 (tensorflow/core/platform/fingerprint.h) on unsigned 64-bit ints."""
    r = fp1 ^ _K_MUL
    x = (fp2 * _K_MUL) & _M64
    r ^= ((x ^ (x >> 47)) * _K_MUL) & _M64
    r = (r * _K_MUL) & _M64
    r = (((r ^ (r >> 47)) * _K_MUL) & _M64)
    return r ^ (r >> 47)


class CrossKernel:
    """The cross of columns given as (starts, counts, values) per column (NumPy arrays, a row's
    features ``values[starts[r]:starts[r] + counts[r]]``): returns (values, row_splits, and each
    value's row and position in its row, int64: a SparseTensor's indices).
    Hashable by its parameters, so equal calls share a trace."""

    def __init__(self, hashed, num_buckets, hash_key, separator):
        self.key = (bool(hashed), int(num_buckets), int(hash_key) & _M64, bytes(separator))

    def __eq__(self, other):
        return isinstance(other, CrossKernel) and other.key == self.key

    def __hash__(self):
        return hash(("feature_cross",) + self.key)

    def __repr__(self):
        return f"feature_cross{self.key!r}"

    def __call__(self, nrows, *arrays):
        hashed, nb, key, sep = self.key
        cols = [arrays[i:i + 3] for i in range(0, len(arrays), 3)]
        n = int(nrows)
        if not cols:
            return _empty(hashed, n)
        # a row's crosses in mixed radix, the last column fastest (TF's ProductIterator): cross j of
        # row r takes feature (j // stride_k) % count_k of column k, stride_k the product of the
        # later columns' counts
        counts = [np.asarray(c, np.int64).reshape(-1)[:n] for _, c, _ in cols]
        per_row = np.ones(n, np.int64)
        for c in counts:
            per_row = per_row * c
        splits = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
        rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
        local = np.arange(splits[-1], dtype=np.int64) - splits[rows]
        positions, stride = [], np.ones(len(rows), np.int64)
        for (st, _, _), c in zip(reversed(cols), reversed(counts)):
            cr = c[rows]
            positions.append(np.asarray(st, np.int64).reshape(-1)[rows] + (local // stride) % np.maximum(cr, 1))
            stride = stride * cr
        positions.reverse()
        if hashed:
            h = np.full(len(rows), key, np.uint64)
            for (_, _, v), pos in zip(cols, positions):
                h = _cat64(h, _column_hashes(v)[pos])
            vals = (h % np.uint64(nb) if nb > 0 else h % np.uint64(_INT64_MAX)).astype(np.int64)
        else:
            texts = [_column_texts(v) for _, _, v in cols]
            vals = np.empty(len(rows), object)
            vals[:] = [sep.join(parts) for parts in zip(*[[t[i] for i in pos] for t, pos in zip(texts, positions)])] \
                if len(rows) else []
        return vals, splits, rows, local


def _empty(hashed, n):
    z = np.zeros(0, np.int64)
    return (z if hashed else np.zeros(0, object)), np.zeros(n + 1, np.int64), z, z


_U47 = np.uint64(47)
_UMUL = np.uint64(_K_MUL)


def _cat64(fp1, fp2):
    """fingerprint_cat64 on uint64 arrays (NumPy's uint64 products wrap modulo 2**64, as C's)."""
    r = fp1 ^ _UMUL
    x = fp2 * _UMUL
    r = r ^ ((x ^ (x >> _U47)) * _UMUL)
    r = r * _UMUL
    r = (r ^ (r >> _U47)) * _UMUL
    return r ^ (r >> _U47)


def _column_hashes(v):
    """Each feature's 64-bit hash as uint64: an integer's own bits, a string's Fingerprint64
    (computed once per distinct string)."""
    v = np.asarray(v)
    if v.dtype.kind != "O":
        return v.astype(np.int64).view(np.uint64)
    memo = {}
    return np.array([memo[f] if f in memo else memo.setdefault(f, fingerprint64(f)) for f in v.tolist()],
                    np.uint64).reshape(-1)


def _column_texts(v):
    v = np.asarray(v)
    return v.tolist() if v.dtype.kind == "O" else [str(x).encode() for x in v.astype(np.int64).tolist()]


def _np_values(t):
    """A column's values as the kernel reads them: bytes objects, or int64 (TF casts other
    numbers to int64: floats truncate, bools are 0/1)."""
    return t if aval_of(t).dtype.kind == "O" else _cast_i64(t)


def _cast_i64(t):
    from .ops import math_ops as M
    return t if aval_of(t).dtype == np.dtype(np.int64) else M.cast(t, np.int64)


def run_cross(kernel, nrows, columns):
    """``columns``: (starts, counts, values) tensors per column; ``nrows`` a scalar int64 tensor.
    Eagerly the kernel runs on their values; traced, one py_call of unknown output length."""
    flat = [nrows] + [x for col in columns for x in col]
    hashed = kernel.key[0]
    if STATE.trace is None:
        return tuple(convert_to_tensor(a) for a in kernel(*[np.asarray(t.numpy()) for t in flat]))
    from .core.aval import Aval
    from .core.primitives.pycall import py_call_p
    i64 = np.dtype(np.int64)
    out_avals = (Aval((None,), i64 if hashed else np.dtype(object)), Aval((None,), i64), Aval((None,), i64),
                 Aval((None,), i64))
    return tuple(bind(py_call_p, *flat, fn=kernel, out_avals=out_avals, name="feature_cross"))


def check_num_buckets(num_buckets):
    nb = int(num_buckets)
    if nb < 0:
        raise InvalidArgumentError(f"Value for attr 'num_buckets' of {nb} must be at least minimum 0 (a cross's "
                                   "hash is taken % num_buckets; 0 keeps the full non-negative int64 hash)")
    return nb


def dense_column(t, where):
    """A dense [rows, k] tensor's rows as a column."""
    from .ops import array_ops as A
    sh = A.shape(t, out_type=np.int64)
    rows = A.range(sh[0], dtype=np.int64)
    return rows * sh[1], A.fill(A.reshape(sh[0], [1]), sh[1]), A.reshape(_np_values(t), [-1])


def sparse_column(sp):
    """A rank-2 SparseTensor's rows as a column: its entries grouped by row (a stable sort by
    row, so entries out of row order still cross within their row)."""
    from .ops import array_ops as A
    from .ops import math_ops as M
    from .ops import segment_ops as S
    from .sparse import _count
    rows = sp.indices[:, 0]
    order = A.argsort(rows, stable=True)
    n = _count(sp.dense_shape[0])
    counts = M.cast(S.unsorted_segment_sum(A.ones_like(rows), rows, n), np.int64)
    starts = M.cumsum(counts, exclusive=True)
    return starts, counts, A.gather(_np_values(sp.values), order)


def ragged_column(rt):
    return rt.row_splits[:-1], rt.row_splits[1:] - rt.row_splits[:-1], _np_values(rt.values)


def static_int(t):
    from .ops import array_ops as A
    v = A.get_static_value(t)
    return None if v is None else int(v)
