"""tf.experimental.DynamicRaggedShape and RowPartition (eager): the shape of a RaggedTensor as
TF's tf.shape(rt) returns it, the basics TF's ragged guide uses: its text, indexing (a uniform
dim's size, TF's ValueError for a ragged one), slicing the leading dims, from_lengths, and
tf.reshape / tf.zeros / tf.ones / tf.fill of it (a RaggedTensor of those row partitions).

A shape is row partitions (each one a row_splits vector, int64 or the shape's dtype) and the
inner shape (the flat values' shape: its first dim is the values the last partition splits).
tf.reshape and the creation ops catch ``CompositeOperand``, which iterating a shape raises, as
the ragged ops do (array_ops.py): a try costs the dense shapes nothing."""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.primitive import CompositeOperand
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError
from .ragged_tensor import RaggedTensor, _np


def _traced(x):
    return isinstance(x, Tensor) and x._v is None


class RowPartition:
    """tf.experimental.RowPartition: how one dimension splits into rows (its row_splits). Inside
    tapeflow.function (``tf.shape`` of a traced RaggedTensor) the splits are a traced Tensor and
    the queries are ops on it."""

    def __init__(self, row_splits, uniform_row_length=None, dtype=_dt.int64):
        if _traced(row_splits):
            from ..ops import math_ops as M
            self._splits = M.cast(row_splits, _dt.np_dtype(dtype))
        else:
            self._splits = np.asarray(row_splits, _dt.np_dtype(dtype))
        self._uniform = uniform_row_length

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=_dt.int64, dtype_hint=None):
        ln = np.asarray(_np(convert_to_tensor(row_lengths)) if not isinstance(row_lengths, np.ndarray)
                        else row_lengths, np.int64).reshape(-1)
        if validate and (ln < 0).any():
            raise InvalidArgumentError(f"RowPartition.from_row_lengths: row lengths must be >= 0, got {ln.tolist()}")
        return cls(np.concatenate([[0], np.cumsum(ln)]), dtype=dtype)

    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=_dt.int64, dtype_hint=None):
        s = np.asarray(_np(convert_to_tensor(row_splits)), np.int64).reshape(-1)
        if validate and (s.size == 0 or s[0] != 0 or (np.diff(s) < 0).any()):
            raise InvalidArgumentError(f"RowPartition.from_row_splits: row_splits must start at 0 and be sorted, "
                                       f"got {s.tolist()}")
        return cls(s, dtype=dtype)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length, nvals=None, nrows=None, validate=True, dtype=_dt.int64,
                                dtype_hint=None):
        k = int(uniform_row_length)
        n = int(nrows) if nrows is not None else (int(nvals) // k if k else 0)
        return cls(np.arange(n + 1, dtype=np.int64) * k, uniform_row_length=k, dtype=dtype)

    @property
    def dtype(self):
        return _dt.as_dtype(self._splits.dtype)

    def _np_dtype(self):
        return _dt.np_dtype(self._splits.dtype)

    def row_splits(self):
        return self._splits if isinstance(self._splits, Tensor) else Tensor(self._splits)

    def row_lengths(self):
        if isinstance(self._splits, Tensor):
            return self._splits[1:] - self._splits[:-1]
        return Tensor(np.diff(self._splits))

    def _static_nrows(self):
        n = self._splits.shape[0]
        return None if n is None else n - 1

    def nrows(self):
        n = self._static_nrows()
        if n is None:   # traced with an unknown row count
            from ..ops import array_ops as A
            return A.shape(self._splits, out_type=self._np_dtype())[0] - 1
        return Tensor(np.asarray(n, self._np_dtype()))

    def nvals(self):
        if isinstance(self._splits, Tensor):
            return self._splits[-1]
        return Tensor(np.asarray(self._splits[-1], self._splits.dtype))

    def is_uniform(self):
        return self._uniform is not None

    def uniform_row_length(self):
        return None if self._uniform is None else Tensor(np.asarray(self._uniform, self._np_dtype()))

    def _lengths(self):
        if self._uniform is not None:
            return int(self._uniform)
        if isinstance(self._splits, Tensor):
            return None   # traced: TF's text shows a ragged dim's lengths as None
        return tuple(int(x) for x in np.diff(self._splits))

    def __repr__(self):
        return f"tf.RowPartition(row_splits={self.row_splits()!r})"


class DynamicRaggedShape:
    """tf.experimental.DynamicRaggedShape: row partitions and an inner shape (see the module)."""

    def __init__(self, row_partitions, inner_shape, dtype=None, validate=False, static_inner_shape=None,
                 _like=None):
        self._partitions = list(row_partitions)
        # traced (tf.shape of a traced RaggedTensor): the inner shape's first dim, the values' count,
        # is unknown (None) and ``_like`` holds the flat values it came from (tf.zeros/ones of the shape)
        self._like = _like
        if _like is not None:
            self._dtype = np.dtype(_dt.np_dtype(dtype or _dt.int64))
            self._inner = list(inner_shape)
            return
        inner = inner_shape if not isinstance(inner_shape, Tensor) else _np(inner_shape)
        d = _dt.np_dtype(dtype) if dtype is not None else (
            self._partitions[0]._np_dtype() if self._partitions else
            (np.asarray(inner).dtype if np.asarray(inner).dtype.kind in "iu" else np.int64))
        self._inner = np.asarray(inner, d).reshape(-1)
        self._dtype = np.dtype(d)
        if self._partitions:
            nvals = int(self._partitions[-1]._splits[-1])
            if self._inner.size == 0 or int(self._inner[0]) != nvals:
                raise ValueError(f"DynamicRaggedShape: the inner shape's first dim ({self._inner.tolist()}) must be "
                                 f"the number of values the last row partition splits ({nvals})")

    @classmethod
    def from_lengths(cls, lengths, num_row_partitions=None, dtype=_dt.int64):
        """From a list of dims: an int is a uniform dim, a tuple the lengths of ragged rows."""
        lengths = list(lengths)
        ragged = [i for i, x in enumerate(lengths) if isinstance(x, (tuple, list))]
        if lengths and isinstance(lengths[0], (tuple, list)):
            raise ValueError("DynamicRaggedShape.from_lengths: the first dimension must be an int")
        k = (ragged[-1] if ragged else 0) if num_row_partitions is None else int(num_row_partitions)
        parts, rows = [], int(lengths[0]) if lengths else 0
        for x in lengths[1:k + 1]:
            if isinstance(x, (tuple, list)):
                if len(x) != rows:
                    raise ValueError(f"DynamicRaggedShape.from_lengths: {len(x)} row lengths for {rows} rows")
                p = RowPartition.from_row_lengths(np.asarray(x, np.int64), dtype=dtype)
            else:
                p = RowPartition.from_uniform_row_length(int(x), nrows=rows, dtype=dtype)
            parts.append(p)
            rows = int(p._splits[-1])
        inner = [rows] + [int(x) for x in lengths[k + 1:]] if parts else [int(x) for x in lengths]
        return cls(parts, inner, dtype=dtype)

    @classmethod
    def from_tensor(cls, t, dtype=None):
        d = dtype or _dt.int64
        if isinstance(t, RaggedTensor) and any(_traced(x) for x in (t.flat_values,) + t.nested_row_splits):
            parts, v = [], t
            while isinstance(v, RaggedTensor):
                parts.append(RowPartition(v.row_splits, v._uniform, dtype=d))
                v = v.values
            from ..core.primitive import aval_of
            return cls(parts, [None] + list(aval_of(v).shape[1:]), dtype=d, _like=v)
        if isinstance(t, RaggedTensor):
            parts, v = [], t
            while isinstance(v, RaggedTensor):
                s = _np(v.row_splits)
                parts.append(RowPartition(s, v._uniform, dtype=d))
                v = v.values
            return cls(parts, list(v.shape), dtype=d)
        return cls([], list(convert_to_tensor(t).shape), dtype=d)

    # -- the parts
    @property
    def row_partitions(self):
        return tuple(self._partitions)

    @property
    def num_row_partitions(self):
        return len(self._partitions)

    @property
    def inner_shape(self):
        if self._like is not None:
            from ..ops import array_ops as A
            return A.shape(self._like, out_type=self._dtype)
        return Tensor(self._inner)

    @property
    def dtype(self):
        return _dt.as_dtype(self._dtype)

    @property
    def rank(self):
        return len(self._partitions) + len(self._inner)

    def _nrows(self):
        return self._partitions[0]._static_nrows() if self._partitions else int(self._inner[0])

    def _lengths(self):
        if not self._partitions:
            return [int(x) for x in self._inner]
        return [self._nrows()] + [p._lengths() for p in self._partitions] + [int(x) for x in self._inner[1:]]

    def __repr__(self):
        return f"<DynamicRaggedShape lengths={self._lengths()} num_row_partitions={len(self._partitions)}>"

    def __len__(self):
        return self.rank

    def __iter__(self):   # (tf.reshape, tf.zeros, ... iterate a shape: they catch this for the ragged form)
        raise CompositeOperand("a shape", "DynamicRaggedShape")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._slice(index)
        i = int(index)
        n = self.rank
        if not -n <= i < n:
            raise ValueError(f"Index {i} is out of range for a shape of rank {n}")
        i %= n
        if i == 0:
            if self._partitions and self._nrows() is None:   # traced, an unknown row count
                return self._partitions[0].nrows()
            return Tensor(np.asarray(self._nrows(), self._dtype))
        if i <= len(self._partitions):
            p = self._partitions[i - 1]
            if p._uniform is None:
                raise ValueError(f"Index {i} is not uniform")
            return Tensor(np.asarray(p._uniform, self._dtype))
        return Tensor(np.asarray(self._inner[i - len(self._partitions)], self._dtype))

    def _slice(self, index):
        start, stop, step = index.indices(self.rank)
        if start != 0 or step != 1:
            raise ValueError("DynamicRaggedShape: slices must start at 0 with step 1 (its leading dims)")
        if stop > len(self._partitions):
            return DynamicRaggedShape(self._partitions, self._inner[:stop - len(self._partitions)], self._dtype,
                                      _like=self._like)
        if stop == 0:
            return DynamicRaggedShape([], [], self._dtype)
        if self._like is not None:
            raise NotImplementedError("slicing a traced DynamicRaggedShape inside its ragged dims (its values' "
                                      "counts are only known when the function runs)")
        parts = self._partitions[:stop - 1]
        rows = int(parts[-1]._splits[-1]) if parts else self._nrows()
        return DynamicRaggedShape(parts, [rows], self._dtype)

    # -- a RaggedTensor of this shape
    def _wrap(self, flat):
        from ..ops import math_ops as M
        rt = flat
        for p in reversed(self._partitions):
            s = M.cast(p._splits, _dt.int64) if isinstance(p._splits, Tensor) else Tensor(p._splits.astype(np.int64))
            rt = RaggedTensor._from_parts(rt, s, p._uniform)
        return rt

    def _reshape(self, t):
        from ..ops import array_ops as A
        if isinstance(t, RaggedTensor):
            t = t.flat_values
        t = t if isinstance(t, Tensor) else convert_to_tensor(t)
        return self._wrap(A.reshape(t, [-1 if x is None else int(x) for x in self._inner]))

    def _full(self, value, dtype):
        from ..ops import array_ops as A
        if self._like is not None:   # traced: the values' count is the traced flat values'
            from ..ops import math_ops as M
            v = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype)
            like = A.zeros_like(self._like, dtype=dtype or v.dtype)
            return self._wrap(like + M.cast(v, like.dtype))
        if dtype is None:
            return self._wrap(A.fill([int(x) for x in self._inner], value))
        d = _dt.np_dtype(dtype)
        return self._wrap(Tensor(np.full([int(x) for x in self._inner], A._string_value(value, d), d)))


def ragged_form(op, shape, *args):
    """tf.reshape / zeros / ones / fill given a DynamicRaggedShape (array_ops calls it from its
    ``except CompositeOperand``); anything else re-raises TF's TypeError."""
    if not isinstance(shape, DynamicRaggedShape):
        return None
    if op == "reshape":
        return shape._reshape(args[0])
    if op == "fill":
        return shape._full(args[0], None)
    return shape._full(0 if op == "zeros" else 1, args[0])
