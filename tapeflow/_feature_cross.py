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

import itertools

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


def _feature_text(v):
    return v if isinstance(v, bytes) else str(int(v)).encode()


def _feature_hash(v):
    return fingerprint64(v) if isinstance(v, bytes) else int(v) & _M64


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
        out, splits = [], [0]
        for r in range(int(nrows)):
            lists = [list(v[int(s[r]):int(s[r]) + int(c[r])]) for s, c, v in cols]
            if cols and all(lists):
                for combo in itertools.product(*lists):
                    if hashed:
                        h = key
                        for f in combo:
                            h = fingerprint_cat64(h, _feature_hash(f))
                        out.append(h % nb if nb > 0 else h % _INT64_MAX)
                    else:
                        out.append(sep.join(_feature_text(f) for f in combo))
            splits.append(len(out))
        vals = np.array(out, np.int64) if hashed else np.array(out + [b""], object)[:len(out)]
        splits = np.array(splits, np.int64)
        rows = np.repeat(np.arange(len(splits) - 1, dtype=np.int64), np.diff(splits))
        return vals, splits, rows, np.arange(len(out), dtype=np.int64) - splits[rows]


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
