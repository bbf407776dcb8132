"""tf.RaggedTensor: rows of different lengths, as TF stores them.

A RaggedTensor is ``values`` (a Tensor, or another RaggedTensor for more ragged dims) and
``row_splits`` (int64, nrows + 1 offsets into values); a dim of fixed row length (TF's
``uniform_row_length``) keeps its length too, so ``shape`` knows it. ``flat_values`` is the
innermost Tensor: elementwise ops map over it (``map_flat_values``), which is how TF's
dispatch runs ``rt + 3`` or ``tf.math.square(rt)``; in tapeflow every primitive whose record
says ``fusion="elementwise"`` does the same when an operand is a RaggedTensor (core/primitive.py
``CompositeTensor``), so tf.add, tf.math.*, the operators and gradients through flat_values need
nothing per op.

Eagerly the row partitions are computed with NumPy on concrete values. Inside
``tapeflow.function`` a RaggedTensor is its component tensors (TF's composite decomposition,
JAX's pytree): an argument goes into the trace as ``flat_values`` and its ``nested_row_splits``
(compiler/function.py's composite protocol: ``_tf_components`` / ``_tf_static`` /
``_tf_from_components``) and is rebuilt from them in the traced Python, so the IR stays dense
(no ragged primitive). The cache key holds TF's RaggedTensorSpec: dtype, ragged_rank, row_splits
dtype, the number of rows and the uniform dims, so a new raggedness (other row lengths) shares
the trace, and another row count retraces, as in TF 2.21. The traced forms of the partition
queries (value_rowids, row_lengths, nrows) and of the ops TF's ragged guide uses inside
tf.function (elementwise, reductions, concat, reverse) are compositions of dense ops on the
components, and so are indexing and to_tensor (wave 21: gathers whose data-decided sizes come
from a boolean_mask; see "to_tensor, and indexing traced" below); an op that needs the
partition's values while tracing raises, naming itself.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.primitive import CompositeOperand, CompositeTensor, aval_of
from ..core.tensor import Tensor, TensorShape, convert_to_tensor
from ..errors import InvalidArgumentError


def _np(x, what=None):
    if isinstance(x, Tensor):
        if x._v is None:
            raise _traced_error(what)
        return np.asarray(x._v)
    return np.asarray(x)


def _traced_error(what=None):
    return NotImplementedError(
        f"{what or 'this op'} of a tf.RaggedTensor inside tapeflow.function needs the row partition's values, "
        "which a trace does not have (tapeflow traces ragged tensors as their flat_values and row_splits; "
        "elementwise ops, reductions, concat, stack, reverse, indexing and to_tensor work traced): call it "
        "outside the function, "
        "or run functions eagerly (tf.config.run_functions_eagerly(True))")


def _is_traced(*xs):
    """Does any of these (Tensors, RaggedTensors) lack a value (a tracer of tapeflow.function)?"""
    for x in xs:
        if isinstance(x, RaggedTensor):
            if _is_traced(x._values, x._row_splits):
                return True
        elif isinstance(x, Tensor) and x._v is None:
            return True
    return False


def _positions(values):
    """int64 [0, 1, ..., n-1] for the n rows of ``values`` (a Tensor or RaggedTensor), traced
    or not: a cumulative sum of ones over its leading dim (a traced leading dim is unknown)."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    if isinstance(values, RaggedTensor):
        v = values._row_splits[1:]
    else:
        v = values
        while len(aval_of(v).shape) > 1:
            v = v[:, 0] if aval_of(v).shape[1] != 0 else A.reshape(v[:, :1], [-1] + list(aval_of(v).shape[2:]))
            if aval_of(v).shape and aval_of(v).shape[0] == 0:
                break
    if aval_of(v).dtype.kind in "OSU":
        v = M.cast(M.equal(v, v), _dt.int64)   # (ones_like takes no strings)
    return M.cumsum(A.ones_like(v, dtype=_dt.int64)) - 1


def _splits_tensor(s):
    return Tensor(np.asarray(s, np.int64))


class RaggedTensor(CompositeTensor):
    """A ragged tensor (TF's tf.RaggedTensor), eager: see the module's docstring."""

    __slots__ = ("_values", "_row_splits", "_uniform")

    def __init__(self, values, row_splits, uniform_row_length=None, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._row_splits = row_splits
        self._uniform = uniform_row_length

    # -- tapeflow.function's composite protocol (compiler/function.py): an argument or result of a
    # traced function is its flat_values and nested row_splits; the static part is what TF's
    # RaggedTensorSpec keys a trace by besides the components' shapes and dtypes
    def _tf_components(self):
        return (self.flat_values,) + self.nested_row_splits

    def _tf_static(self):
        uniform, v = [], self
        while isinstance(v, RaggedTensor):
            uniform.append(v._uniform)
            v = v._values
        return ("ragged", tuple(uniform))

    def _tf_component_shapes(self):
        # the number of rows is part of TF's spec (shape [3, None] for three rows: another row count
        # retraces, other row lengths do not); the values' count and the inner splits' lengths vary
        fv = aval_of(self.flat_values).shape
        splits = self.nested_row_splits
        return ((None,) + tuple(fv[1:]), tuple(aval_of(splits[0]).shape)) + tuple((None,) for _ in splits[1:])

    @classmethod
    def _tf_spec(cls, static, specs):
        """The RaggedTensorSpec of a trace's components' TensorSpecs (signature texts, SavedModels)."""
        from . import RaggedTensorSpec
        n = specs[1].shape[0]
        shape = (None if n is None else n - 1,) + tuple(static[1]) + tuple(specs[0].shape[1:])
        return RaggedTensorSpec(shape, specs[0].dtype, len(specs) - 1)

    @classmethod
    def _tf_from_components(cls, static, components):
        _, uniform = static
        r = components[0]
        for s, u in zip(reversed(components[1:]), reversed(uniform)):
            r = cls._from_parts(r, s, u)
        return r

    @classmethod
    def _from_parts(cls, values, splits, uniform=None):
        if not isinstance(values, (Tensor, RaggedTensor)):
            values = convert_to_tensor(values)
        return cls(values, splits if isinstance(splits, Tensor) else _splits_tensor(splits), uniform, internal=True)

    # -- factories --------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        values = _as_values(values)
        if _is_traced(values, row_splits):
            return cls._traced_from_row_splits(values, row_splits, validate)
        s = _np(row_splits).astype(np.int64).reshape(-1)
        n = _nrows_of(values)
        if validate:
            if s.size == 0 or s[0] != 0 or np.any(np.diff(s) < 0) or s[-1] != n:
                raise InvalidArgumentError(
                    f"from_row_splits: row_splits must start at 0, be sorted and end at the number of values "
                    f"({n}); got {s.tolist()}")
        return cls._from_parts(values, s)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        if _is_traced(values, row_lengths):
            from ..ops import array_ops as A
            from ..ops import math_ops as M
            ln = M.cast(row_lengths if isinstance(row_lengths, Tensor) else convert_to_tensor(row_lengths),
                        _dt.int64)
            splits = A.concat([Tensor(np.zeros(1, np.int64)), M.cumsum(ln)], 0)
            if validate:
                # (checked as lengths, not as the splits made of them: the error names what was passed)
                _assert(M.reduce_all(M.greater_equal(ln, 0)), "from_row_lengths: row_lengths must be >= 0, got ",
                        ln)
                nv = values.nrows() if isinstance(values, RaggedTensor) else A.shape(values, out_type=_dt.int64)[0]
                _assert(M.equal(splits[-1], nv), "from_row_lengths: row_lengths must sum to the number of values (",
                        nv, "); got ", ln)
            return cls.from_row_splits(values, splits, validate=False)
        ln = _np(row_lengths).astype(np.int64).reshape(-1)
        if validate:
            if np.any(ln < 0):
                raise InvalidArgumentError(f"from_row_lengths: row_lengths must be >= 0, got {ln.tolist()}")
            n = _nrows_of(values)
            if ln.sum() != n:
                raise InvalidArgumentError(f"from_row_lengths: row_lengths must sum to the number of values ({n}); "
                                           f"got {ln.tolist()}")
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(ln)]), validate=False)

    @classmethod
    def _traced_from_row_splits(cls, values, row_splits, validate):
        """from_row_splits inside tapeflow.function: the checks become assert equations (TF's
        graph-mode validation), run on every call."""
        from ..ops import array_ops as A
        from ..ops import math_ops as M
        s = row_splits if isinstance(row_splits, Tensor) else convert_to_tensor(row_splits)
        s = M.cast(A.reshape(s, [-1]), _dt.int64)
        if validate:
            nv = values.nrows() if isinstance(values, RaggedTensor) else \
                A.shape(values, out_type=_dt.int64)[0]
            ok = M.logical_and(M.logical_and(M.equal(s[0], 0), M.equal(s[-1], nv)),
                               M.reduce_all(M.greater_equal(s[1:] - s[:-1], 0)))
            _assert(ok, "from_row_splits: row_splits must start at 0, be sorted and end at the number of "
                        "values (", nv, "); got ", s)
        return cls._from_parts(values, s)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        values = _as_values(values)
        st = _np(row_starts).astype(np.int64).reshape(-1)
        return cls.from_row_splits(values, np.concatenate([st, [_nrows_of(values)]]), validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        lim = _np(row_limits).astype(np.int64).reshape(-1)
        return cls.from_row_splits(values, np.concatenate([[0], lim]), validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        ids = _np(value_rowids).astype(np.int64).reshape(-1)
        if validate and (np.any(np.diff(ids) < 0) or np.any(ids < 0)):
            raise InvalidArgumentError(f"from_value_rowids: value_rowids must be sorted and >= 0, got {ids.tolist()}")
        n = int(_np(nrows)) if nrows is not None else (int(ids[-1]) + 1 if ids.size else 0)
        counts = np.bincount(ids, minlength=n)[:n] if ids.size else np.zeros(n, np.int64)
        return cls.from_row_lengths(values, counts, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        values = _as_values(values)
        k = int(_np(uniform_row_length))
        nv = _nrows_of(values)
        if nv is None or _is_traced(nrows):
            return cls._traced_uniform(values, k, nrows, validate)
        n = int(_np(nrows)) if nrows is not None else (nv // k if k else 0)
        if validate and k * n != nv:
            raise InvalidArgumentError(f"from_uniform_row_length: {nv} values do not make rows of {k}")
        return cls._from_parts(values, np.arange(n + 1, dtype=np.int64) * k, uniform=k)

    @classmethod
    def _traced_uniform(cls, values, k, nrows, validate):
        """from_uniform_row_length of values whose count (an input_signature's None), or of an nrows, the
        trace does not know: the splits 0, k, 2k, ... as long as the rows the function runs with."""
        from ..ops import array_ops as A
        from ..ops import math_ops as M
        nv = values.nrows() if isinstance(values, RaggedTensor) else A.shape(values, out_type=_dt.int64)[0]
        if nrows is not None:
            n = M.cast(nrows if isinstance(nrows, Tensor) else convert_to_tensor(nrows), _dt.int64)
        else:   # (TF's rule: rows of length 0 make no rows unless nrows says how many)
            n = nv // k if k else Tensor(np.int64(0))
        if validate:
            _assert(M.equal(n * k, nv), "from_uniform_row_length: ", nv, f" values do not make rows of {k}")
        return cls._from_parts(values, A.range(n + 1, dtype=_dt.int64) * k, uniform=k)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        r = flat_values
        for s in reversed(list(nested_row_splits)):
            r = cls.from_row_splits(r, s, validate=validate)
        return r

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        r = flat_values
        for s in reversed(list(nested_row_lengths)):
            r = cls.from_row_lengths(r, s, validate=validate)
        return r

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
                                 validate=True):
        r = flat_values
        ids = list(nested_value_rowids)
        nn = list(nested_nrows) if nested_nrows is not None else [None] * len(ids)
        for s, n in zip(reversed(ids), reversed(nn)):
            r = cls.from_value_rowids(r, s, n, validate=validate)
        return r

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None, row_splits_dtype=None):
        """Each row of a dense tensor cut at ``lengths``, or before its trailing ``padding``."""
        t = _np(tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor))
        if t.ndim < 2:
            raise ValueError(f"from_tensor: tensor must have rank >= 2, got shape {t.shape}")
        if ragged_rank != 1:
            inner = cls.from_tensor(Tensor(t.reshape((-1,) + t.shape[2:])), lengths, padding, ragged_rank - 1)
            return cls.from_uniform_row_length(inner, t.shape[1])
        if lengths is not None:
            ln = _np(lengths).astype(np.int64)
        elif padding is not None:
            pad = _np(padding if isinstance(padding, Tensor) else convert_to_tensor(padding))
            is_pad = np.all((t == pad).reshape(t.shape[:2] + (-1,)), axis=2)
            # a row's length: up to its last value that is not padding
            keep = ~is_pad
            idx = np.arange(1, t.shape[1] + 1)
            ln = np.max(np.where(keep, idx, 0), axis=1).astype(np.int64) if t.shape[1] else \
                np.zeros(t.shape[0], np.int64)
        else:
            ln = np.full(t.shape[0], t.shape[1], np.int64)
        rows = [t[i, :ln[i]] for i in range(t.shape[0])]
        vals = np.concatenate(rows, 0) if rows else np.zeros((0,) + t.shape[2:], t.dtype)
        return cls.from_row_lengths(Tensor(vals), ln)

    # -- the parts --------------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self):
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return _dt.int64

    @property
    def uniform_row_length(self):
        return None if self._uniform is None else Tensor(np.int64(self._uniform))

    @property
    def shape(self):
        inner = tuple(self._values.shape)[1:]
        return TensorShape((self.nrows_static(), self._uniform) + inner)

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return len(self.shape)

    def nrows_static(self):
        """The number of rows as a Python int (None: traced with an input_signature's None)."""
        n = aval_of(self._row_splits).shape[0]
        return None if n is None else n - 1

    def nrows(self, out_type=None, name=None):
        d = _dt.np_dtype(out_type or _dt.int64)
        n = self.nrows_static()
        if n is None:   # traced, unknown: the splits' length - 1
            from ..ops import array_ops as A
            from ..ops import math_ops as M
            return M.cast(A.shape(self._row_splits, out_type=_dt.int64)[0] - 1, d)
        return Tensor(np.asarray(n, d))

    def row_lengths(self, axis=1, name=None):
        if axis != 1:
            return self.with_values(self._values.row_lengths(axis - 1))
        if _is_traced(self._row_splits):
            return self._row_splits[1:] - self._row_splits[:-1]
        return Tensor(np.diff(_np(self._row_splits)))

    def row_starts(self, name=None):
        if _is_traced(self._row_splits):
            return self._row_splits[:-1]
        return Tensor(_np(self._row_splits)[:-1])

    def row_limits(self, name=None):
        if _is_traced(self._row_splits):
            return self._row_splits[1:]
        return Tensor(_np(self._row_splits)[1:])

    def value_rowids(self, name=None):
        if _is_traced(self._row_splits, self._values):
            # traced: each value's row is the number of row limits at or below its position
            # (splits are sorted), TF's RowPartition.value_rowids computed without the values
            from ..ops import array_ops as A
            return A.searchsorted(self._row_splits[1:], _positions(self._values), side="right",
                                  out_type=_dt.int64)
        ln = np.diff(_np(self._row_splits))
        return Tensor(np.repeat(np.arange(ln.size, dtype=np.int64), ln))

    def nested_row_lengths(self, name=None):
        if _is_traced(self):
            return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)
        return tuple(Tensor(np.diff(_np(s))) for s in self.nested_row_splits)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        if _is_traced(self):
            return self._traced_bounding_shape(axis, out_type)
        dims = [self.nrows_static()]
        v = self
        while isinstance(v, RaggedTensor):
            ln = np.diff(_np(v._row_splits))
            dims.append(int(ln.max()) if ln.size else 0)
            v = v._values
        dims += list(v.shape)[1:]
        out = np.asarray(dims, _dt.np_dtype(out_type or _dt.int64))
        return Tensor(out if axis is None else out[axis])

    def _traced_bounding_shape(self, axis, out_type):
        from ..ops import array_ops as A
        from ..ops import math_ops as M
        d = _dt.np_dtype(out_type or _dt.int64)
        dims = [self.nrows(out_type=d)]
        v = self
        while isinstance(v, RaggedTensor):
            ln = v._row_splits[1:] - v._row_splits[:-1]
            # the longest row (0 without rows: the max of [0, lengths...])
            dims.append(M.cast(M.reduce_max(A.concat([Tensor(np.zeros(1, np.int64)), ln], 0)), d))
            v = v._values
        dims += [Tensor(np.asarray(k, d)) for k in aval_of(v).shape[1:]]
        out = A.stack(dims)
        return out if axis is None else out[axis]

    def with_values(self, new_values):
        return RaggedTensor._from_parts(new_values, self._row_splits, self._uniform)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        return self

    # -- conversions ------------------------------------------------------------------------
    def to_list(self):
        """Nested Python lists (TF's to_list: Python ints/floats/bytes)."""
        if _is_traced(self):
            raise ValueError("to_list can only be used in eager mode.")
        vals = self._values.to_list() if isinstance(self._values, RaggedTensor) else \
            _np(self._values, "to_list()").tolist()
        s = _np(self._row_splits, "to_list()")
        return [vals[s[i]:s[i + 1]] for i in range(s.size - 1)]

    def numpy(self):
        """TF's numpy(): rows of one length stack into one array, else a 1-D object array of rows."""
        values = self._values.numpy() if isinstance(self._values, RaggedTensor) else \
            _np(self._values, "numpy()")
        splits = _np(self._row_splits, "numpy()")
        rows = [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), object)
            out[:] = rows
            return out
        return np.array(rows)

    def to_tensor(self, default_value=None, name=None, shape=None):
        """Dense, padded with ``default_value`` (0, or b'' for strings) to the bounding shape or
        ``shape`` (None dims: the bounding one; smaller dims cut the rows, as TF)."""
        if shape is not None:
            _check_inner_shape(self, shape)
        # one composition of gathers, eager and traced: a tape sees it (TF's to_tensor is
        # differentiable), and rows are not copied one by one in Python
        return _to_tensor(self, default_value, shape)

    def _coords(self):
        """(the (N, rank) coordinates of every flat value in row-major order, the flat values)."""
        s = _np(self._row_splits).astype(np.int64)
        lens = np.diff(s)
        row = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
        pos = np.arange(int(s[-1]), dtype=np.int64) - s[:-1][row]
        outer = np.stack([row, pos], 1)
        if isinstance(self._values, RaggedTensor):
            inner, flat = self._values._coords()
            return np.concatenate([outer[inner[:, 0]], inner[:, 1:]], 1), flat
        flat = _np(self._values)
        if flat.ndim > 1:   # uniform inner dimensions: every element of each value gets a coordinate
            inner = np.indices(flat.shape[1:]).reshape(flat.ndim - 1, -1).T.astype(np.int64)
            n, k = flat.shape[0], inner.shape[0]
            coords = np.concatenate([np.repeat(outer, k, 0), np.tile(inner, (n, 1))], 1)
            return coords, flat.reshape(-1)
        return outer, flat

    def to_sparse(self, name=None):
        """The SparseTensor of the stored values at their coordinates, of the bounding shape."""
        from ..sparse import SparseTensor
        coords, flat = self._coords()
        return SparseTensor(coords, flat, _np(self.bounding_shape()).astype(np.int64))

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=np.int64):
        """A 2-D SparseTensor (entries in row-major order) as a RaggedTensor of its rows' stored values."""
        idx, dense_shape = _np(st_input.indices), _np(st_input.dense_shape)
        if idx.shape[1] != 2:
            raise ValueError(f"RaggedTensor.from_sparse: the SparseTensor must have rank 2, got rank {idx.shape[1]}")
        lin = idx[:, 0] * dense_shape[1] + idx[:, 1]
        if lin.size and (np.any(np.diff(lin) <= 0)):
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError("RaggedTensor.from_sparse: the SparseTensor's indices must be in row-major "
                                       "order without repeats (tf.sparse.reorder)")
        counts = np.bincount(idx[:, 0], minlength=int(dense_shape[0])).astype(np.dtype(row_splits_dtype))
        return cls.from_row_lengths(st_input.values, counts)

    # -- text: TF 2.21's (eager __repr__ and __str__ are one)
    def __repr__(self):
        if _is_traced(self):   # TF's text of a symbolic ragged tensor
            return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"
        with np.printoptions(formatter={"all": _formatter}):
            text = _formatter(self.numpy())
        return f"<tf.RaggedTensor {text}>"

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        # (np.asarray would make an object array of rows, or fail; tapeflow.function's argument
        # conversion lands here too)
        raise TypeError("a RaggedTensor is not a dense array: use rt.to_tensor(), rt.numpy() or rt.flat_values")

    def __bool__(self):
        raise TypeError("the truth value of a RaggedTensor is ambiguous")

    def __iter__(self):
        return (self[i] for i in range(self.nrows_static()))

    # -- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if not key:
            return self
        k0, rest = key[0], key[1:]
        if k0 is Ellipsis:
            if rest and rest[-1] is not Ellipsis and len(rest) < self.ndim:
                key = (slice(None),) * (self.ndim - len(rest)) + rest
                return self[key]
            return self
        if _is_traced(self) or (isinstance(k0, Tensor) and k0._v is None):
            return _traced_getitem(self, k0, rest)
        s = _np(self._row_splits, "indexing")
        n = s.size - 1
        if isinstance(k0, Tensor):
            k0 = int(k0) if len(k0.shape) == 0 else k0   # (a scalar index tensor: TF 2.21 shapes are true when ranked)
        if isinstance(k0, (int, np.integer)):
            i = int(k0)
            if not -n <= i < n:
                raise IndexError(f"Row key {i} out of bounds")   # TF 2.21's eager text
            i %= n
            row = self._values[int(s[i]):int(s[i + 1])]
            return row[rest] if rest else row
        if isinstance(k0, slice):
            idx = range(n)[k0]
            if k0.step not in (None, 1):
                rows = [self[i] for i in idx]
                picked = _stack_rows(rows, self)
            else:
                a, b = (idx.start, idx.stop) if len(idx) else (0, 0)
                lo, hi = int(s[a]), int(s[b]) if len(idx) else int(s[0])
                vals = self._values[lo:hi] if len(idx) else self._values[0:0]
                picked = RaggedTensor._from_parts(vals, s[a:b + 1] - s[a] if len(idx) else np.zeros(1, np.int64),
                                                  self._uniform)
            if not rest:
                return picked
            return picked._index_inner(rest)
        raise TypeError(f"RaggedTensor indices must be ints or slices, got {type(k0).__name__}")

    def _index_inner(self, rest):
        """rt[:, rest...]: each row indexed by ``rest`` (a slice keeps the rows ragged)."""
        k1, more = rest[0], rest[1:]
        if not isinstance(k1, slice) and self._uniform is None:
            raise ValueError("Cannot index into an inner ragged dimension.")   # TF 2.21's, even if every row has it
        rows = []
        for i in range(self.nrows_static()):
            row = self[i]
            r = row[(k1,) + more] if more or not isinstance(row, RaggedTensor) else row[k1]
            rows.append(r)
        if isinstance(k1, slice):
            return _stack_rows(rows, self)
        from ..ops import array_ops as A
        return A.stack(rows) if rows else Tensor(np.zeros((0,), _np(self.flat_values).dtype))

    def _traced_index_inner(self, rest):
        """rt[:, rest...] traced: a slice of every row (Python's bounds per row, positive steps)
        keeps the values whose column it selects; ``rest``'s later keys index those values."""
        from ..ops import math_ops as M
        k1, more = rest[0], rest[1:]
        if not isinstance(k1, slice):
            if self._uniform is None:
                raise ValueError("Cannot index into an inner ragged dimension.")
            raise NotImplementedError("an int index of a uniform row dimension of a tf.RaggedTensor inside "
                                      "tapeflow.function: slice it (rt[:, k:k + 1]) or index it eagerly")
        step = 1 if k1.step is None else int(k1.step)
        if step <= 0:
            raise NotImplementedError("slicing the rows of a tf.RaggedTensor with a negative step inside "
                                      "tapeflow.function (tf.reverse of the rows' values is not traced yet); "
                                      "run it eagerly")
        s = self._row_splits
        ln = s[1:] - s[:-1]
        zero = Tensor(np.int64(0))
        start = _row_bound(k1.start, ln, ln * 0)
        stop = _row_bound(k1.stop, ln, ln)
        count = M.maximum(stop - start, zero)
        if step != 1:
            count = (count + (step - 1)) // step
        rows = self.value_rowids()
        pos = _positions(self._values)
        from ..ops import array_ops as A
        col = pos - A.gather(s[:-1], rows) - A.gather(start, rows)   # the column past the row's start
        keep = M.logical_and(M.greater_equal(col, zero), M.less(col, A.gather(stop - start, rows)))
        if step != 1:
            keep = M.logical_and(keep, M.equal(M.floormod(col, step), zero))
        values = _take_rows(self._values, A.boolean_mask(pos, keep))
        if more:
            values = values._traced_index_inner(more) if isinstance(values, RaggedTensor) else \
                values[(slice(None),) + tuple(more)]
        splits = A.concat([Tensor(np.zeros(1, np.int64)), M.cumsum(count)], 0)
        return RaggedTensor._from_parts(values, splits)

    # -- operators: elementwise primitives map over flat_values (core/primitive.py) -----------
    def __add__(self, o): return _E.add(self, o)
    def __radd__(self, o): return _E.add(o, self)
    def __sub__(self, o): return _E.subtract(self, o)
    def __rsub__(self, o): return _E.subtract(o, self)
    def __mul__(self, o): return _E.multiply(self, o)
    def __rmul__(self, o): return _E.multiply(o, self)
    def __truediv__(self, o): return _E.divide(self, o)
    def __rtruediv__(self, o): return _E.divide(o, self)
    def __floordiv__(self, o): return _E.floordiv(self, o)
    def __mod__(self, o): return _E.floormod(self, o)
    def __pow__(self, o): return _E.pow(self, o)
    def __neg__(self): return _E.negative(self)
    def __abs__(self): return _E.abs(self)
    def __lt__(self, o): return _E.less(self, o)
    def __le__(self, o): return _E.less_equal(self, o)
    def __gt__(self, o): return _E.greater(self, o)
    def __ge__(self, o): return _E.greater_equal(self, o)
    def __and__(self, o): return _E.logical_and(self, o)
    def __or__(self, o): return _E.logical_or(self, o)
    def __invert__(self): return _E.logical_not(self)

    __hash__ = object.__hash__

    def _bind_composite(self_or_cls, p, args, params):
        return elementwise_apply(p, args, params)

    _bind_composite = classmethod(_bind_composite)


# -- to_tensor, and indexing traced ------------------------------------------------------------
# Inside tapeflow.function a partition's values are unknown, so every size they decide (a row's
# length, the longest row) comes from a boolean_mask, the one way a trace gets a dimension the
# data decides: the positions 0..k-1 of k values are the values' positions below k (k never
# exceeds the values' count). Everything else is gathers, so memory stays linear in the output
# and gradients reach the flat values through the gathers' vjps.

def _i64(x):
    from ..ops import math_ops as M
    return M.cast(x if isinstance(x, Tensor) else convert_to_tensor(x), _dt.int64)


def _first(n, bound):
    """int64 [0, ..., n-1], n a traced scalar no larger than the count of ``bound``'s rows (see above)."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    pos = _positions(bound)
    return A.boolean_mask(pos, M.less(pos, n))


def _take_rows(v, idx):
    """Rows ``idx`` (int64, distinct) of ``v`` (a Tensor, or a RaggedTensor: its rows with their
    values, their splits rebuilt), traced."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    if not isinstance(v, RaggedTensor):
        return A.gather(v, idx)
    if aval_of(idx).shape[0] == 0:   # (no rows: the gathers below would check an index against nothing)
        none = Tensor(np.zeros(0, np.int64))
        return RaggedTensor._from_parts(_take_rows(v._values, none), Tensor(np.zeros(1, np.int64)), v._uniform)
    s = v._row_splits
    sel = A.gather(s[1:] - s[:-1], idx)
    splits = A.concat([Tensor(np.zeros(1, np.int64)), M.cumsum(sel)], 0)
    q = _first(splits[-1], v._values)                # the new values' positions
    row = A.searchsorted(splits[1:], q, side="right", out_type=_dt.int64)
    src = A.gather(A.gather(s[:-1], idx), row) + q - A.gather(splits, row)
    return RaggedTensor._from_parts(_take_rows(v._values, src), splits, v._uniform)


def _check_row(i, n, traced):
    """A row index among ``n`` rows: a static one checked now (eager's IndexError), a traced one (or
    one among a traced count) by an assert equation (TF's InvalidArgumentError at run time)."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    if not traced:
        i = int(i)
        if not -n <= i < n:
            raise IndexError(f"Row key {i} out of bounds")
        return Tensor(np.asarray([i % n], np.int64))
    i, n = _i64(i), _i64(n)
    _assert(M.logical_and(M.greater_equal(i, -n), M.less(i, n)), "slice index ", i,
            " of dimension 0 out of bounds.")
    return A.reshape(M.floormod(i, n), [1])


def _traced_getitem(rt, k0, rest):
    """rt[k0, rest...] traced: rows picked by _take_rows, then ``rest`` inside them."""
    n = rt.nrows_static()
    if isinstance(k0, (int, np.integer)) or (isinstance(k0, Tensor) and not aval_of(k0).shape):
        traced = n is None or (isinstance(k0, Tensor) and k0._v is None)
        row = _take_rows(rt, _check_row(k0, rt.nrows() if n is None else n, traced))._values
        return row[rest] if rest else row
    if isinstance(k0, slice):
        if k0 == slice(None):
            picked = rt
        elif n is not None:
            picked = _take_rows(rt, Tensor(np.arange(n, dtype=np.int64)[k0]))
        else:   # an unknown row count (an input_signature's None): the slice's rows by a mask
            picked = _take_rows(rt, _traced_slice_rows(rt, k0))
        return picked._traced_index_inner(rest) if rest else picked
    raise TypeError(f"RaggedTensor indices must be ints or slices, got {type(k0).__name__}")


def _traced_slice_rows(rt, k):
    """The rows ``k`` (a slice, positive step) selects of ``rt``, whose row count is traced."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    step = 1 if k.step is None else int(k.step)
    if step <= 0:
        raise NotImplementedError("slicing the rows of a tf.RaggedTensor with a negative step inside "
                                  "tapeflow.function when its row count is unknown (an input_signature's None)")
    n = M.cast(rt.nrows(), _dt.int64)
    start, stop = _row_bound(k.start, n, Tensor(np.int64(0))), _row_bound(k.stop, n, n)
    pos = _positions(rt._row_splits[1:])
    keep = M.logical_and(M.greater_equal(pos, start), M.less(pos, stop))
    if step != 1:
        keep = M.logical_and(keep, M.equal(M.floormod(pos - start, step), 0))
    return A.boolean_mask(pos, keep)


def _row_bound(k, ln, default):
    """Python's slice bound ``k`` (None, or an int: negative from the end) for rows of lengths ``ln``,
    clipped to [0, ln]."""
    from ..ops import math_ops as M
    if k is None:
        return default
    k = int(k)
    return M.minimum(Tensor(np.int64(k)), ln) if k >= 0 else M.maximum(ln + k, Tensor(np.int64(0)))


def _to_tensor(rt, default_value, shape):
    """to_tensor: see _dense; the rows dim cut or padded to ``shape[0]`` (a trace knows
    the row count)."""
    from ..ops import array_ops as A
    fv = rt.flat_values
    if default_value is None:
        default_value = b"" if aval_of(fv).dtype.kind == "O" else 0
    d = default_value if isinstance(default_value, Tensor) else \
        convert_to_tensor(default_value, dtype=rt.dtype if aval_of(fv).dtype.kind != "O" else None)
    shape = None if shape is None else [None if x is None or x == -1 else int(x) for x in list(shape)]
    dense, pad = _dense(rt, d, shape)
    n, want = aval_of(dense).shape[0], (shape or [None])[0]
    if want is not None and n is not None and want != n:   # TF cuts the rows, or pads with default rows
        if want < n:
            return dense[:want]
        return A.concat([dense, A.stack([pad] * (want - n))], 0)
    return dense


def _check_inner_shape(rt, shape):
    """to_tensor's ``shape`` may cut or pad the ragged dims, not the flat values' own dims (TF's
    graph-mode ValueError text; its eager kernel raises the same text as InvalidArgumentError)."""
    shape = [None if x is None or x == -1 else int(x) for x in list(shape)]
    inner = list(aval_of(rt.flat_values).shape[1:])
    for k, (want, have) in enumerate(zip(shape[rt.ragged_rank + 1:], inner)):
        if want is not None and have is not None and want != have:
            raise ValueError(f"rt_input.shape and shape={shape} are incompatible: rt_input.shape"
                             f"[{rt.ragged_rank + 1 + k}] = {have} but shape[{rt.ragged_rank + 1 + k}] = {want}")


def _dense(rt, default, shape):
    """(rt as a dense tensor, one padding row of it): row i's column j gathers flat position
    splits[i] + j where j is below the row's length, else the padding row appended after the
    values; the columns are the values' positions below the longest length, or ``shape``'s."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    sub = None if shape is None else [None] + list(shape[2:])
    if isinstance(rt._values, RaggedTensor):
        vals, vpad = _dense(rt._values, default, sub)
    else:
        vals = rt._values
        vpad = A.broadcast_to(M.cast(default, aval_of(vals).dtype) if aval_of(vals).dtype.kind != "O" else default,
                              aval_of(vals).shape[1:])
    s = rt._row_splits
    ln = s[1:] - s[:-1]
    width = None if shape is None or len(shape) < 2 else shape[1]
    if rt._uniform is not None and width is None:
        width = rt._uniform
    if width is not None:
        col = Tensor(np.arange(width, dtype=np.int64))
    else:
        longest = M.reduce_max(A.concat([Tensor(np.zeros(1, np.int64)), ln], 0))
        col = _first(longest, rt._values)
    padded = A.concat([vals, A.expand_dims(vpad, 0)], 0)
    valid = M.less(col[None, :], ln[:, None])
    idx = M.where(valid, s[:-1][:, None] + col[None, :], s[-1])
    return A.gather(padded, idx), A.gather(padded, col * 0 + s[-1])


from ..ops import math_ops as _E  # noqa: E402  (the ops import core; this module is imported after them)


def _formatter(x):
    """TF's: NumPy's text with commas between elements; empty arrays as their nested list."""
    if isinstance(x, np.ndarray):
        if x.size != 0:
            return np.array2string(x, separator=", ")
        return repr(x.tolist())
    return str(x)


def _assert(cond, *message):
    """An assert equation (core/primitives/assert_op.py): a traced check of a partition's values."""
    from ..core.primitive import bind
    from ..core.primitives import assert_op as AS
    template = tuple(None if isinstance(m, Tensor) else m for m in message)
    bind(AS.assert_p, cond, *[m for m in message if isinstance(m, Tensor)], template=template, summarize=6)


def _as_values(values):
    if isinstance(values, (Tensor, RaggedTensor)):
        return values
    return convert_to_tensor(values)


def _nrows_of(values):
    if isinstance(values, RaggedTensor):
        return values.nrows_static()
    sh = aval_of(values).shape
    if not sh:
        raise ValueError("RaggedTensor values must have rank >= 1")
    return sh[0]


def _stack_rows(rows, like):
    """Rows (Tensors or RaggedTensors) as one RaggedTensor with a ragged dim 1."""
    from ..ops import array_ops as A
    if rows and isinstance(rows[0], RaggedTensor):
        vals = _concat_ragged_rows(rows)
        return RaggedTensor.from_row_lengths(vals, [r.nrows_static() for r in rows])
    lens = [int(aval_of(r).shape[0]) for r in rows]
    if rows:
        vals = A.concat(rows, 0)
    else:
        fv = _np(like.flat_values)
        vals = Tensor(np.zeros((0,) + fv.shape[1:], fv.dtype))
    return RaggedTensor.from_row_lengths(vals, lens)


def _concat_ragged_rows(rts):
    """RaggedTensors of the same ragged rank, their rows one after another."""
    from ..ops import array_ops as A
    if _is_traced(*rts):   # the splits offset by the values before them, in ops
        vals = _concat_ragged_rows([r._values for r in rts]) if isinstance(rts[0]._values, RaggedTensor) else \
            A.concat([r._values for r in rts], 0)
        parts, off = [rts[0]._row_splits], rts[0]._row_splits[-1]
        for r in rts[1:]:
            parts.append(r._row_splits[1:] + off)
            off = off + r._row_splits[-1]
        return RaggedTensor._from_parts(vals, A.concat(parts, 0))
    if isinstance(rts[0]._values, RaggedTensor):
        vals = _concat_ragged_rows([r._values for r in rts])
    else:
        vals = A.concat([r._values for r in rts], 0)
    lens = np.concatenate([np.diff(_np(r._row_splits)) for r in rts])
    return RaggedTensor.from_row_lengths(vals, lens)


def _partitions(rt):
    return [_np(s) for s in rt.nested_row_splits]


def _same_partitions(a, b):
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if len(sa) != len(sb):
        return False
    if all(x is y for x, y in zip(sa, sb)):
        return True   # (one partition: x + x, rt + rt * 2; traced too)
    if _is_traced(a, b):
        return _traced_same_partitions(sa, sb)
    pa, pb = _partitions(a), _partitions(b)
    return len(pa) == len(pb) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(pa, pb))


def _traced_same_partitions(sa, sb):
    """Traced operands' partitions: different static lengths differ now; else an assert equation
    checks the values on every call (TF's assert_equal of the row splits in a tf.function)."""
    from ..ops import math_ops as M
    for x, y in zip(sa, sb):
        nx, ny = aval_of(x).shape[0], aval_of(y).shape[0]
        if nx is not None and ny is not None and nx != ny:
            return False
    for x, y in zip(sa, sb):
        if x is not y:
            # (TF's graph text starts so too: its assert_equal of the splits, element-wise)
            _assert(M.reduce_all(M.equal(x, y)), "Condition x == y did not hold element-wise: the ragged operands' "
                    "row partitions differ (row_splits ", x, " vs ", y, ")")
    return True


def elementwise_apply(p, args, params):
    """``bind(p, *args)`` for an elementwise primitive with RaggedTensor operands: TF's ragged
    dispatch. Ragged operands must share their row partitions (else TF's InvalidArgumentError);
    a dense operand broadcasts against the flat values when it has no more dims than one flat
    value (its trailing dims), or, of the ragged tensor's full rank with dims 1 where rows are
    ragged, is gathered row by row (TF's ragged broadcasting, ragged_rank 1)."""
    from ..core.primitive import bind
    if p.fusion != "elementwise" or p.multiple_results:
        raise CompositeOperand(p.name)   # (the public ops with a ragged form catch it: tf.concat, ...)
    base = next(a for a in args if isinstance(a, RaggedTensor))
    flat = []
    for a in args:
        if isinstance(a, RaggedTensor):
            if a is not base and not _same_partitions(base, a):
                raise InvalidArgumentError(_mismatch_text(base, a))
            flat.append(a.flat_values)
        else:
            flat.append(_broadcast_dense(p, a, base))
    return base.with_flat_values(bind(p, *flat, **params))


def _assert_equal_text(x, y):
    """TF 2.21's eager assert_equal message, which its ragged broadcasting raises for row splits
    that differ (the first 3 differing indices and values, and the first 3 of each)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:   # (TF compares the row counts first: its text shows the flags)
        return "Condition x == y did not hold.\nFirst 1 elements of x:\n[False]\nFirst 1 elements of y:\n[ True]"
    diff = np.nonzero(x != y)[0][:3]
    return (f"Condition x == y did not hold.\nIndices of first {diff.size} different values:\n"
            f"{diff.reshape(-1, 1)}\nCorresponding x values:\n{x[diff]}\nCorresponding y values:\n{y[diff]}\n"
            f"First 3 elements of x:\n{x[:3]}\nFirst 3 elements of y:\n{y[:3]}")


def _mismatch_text(x, y):
    """The message for ragged operands whose partitions differ: TF's, of the first level that does."""
    for sx, sy in zip(_partitions(x), _partitions(y)):
        if sx.shape != sy.shape or not np.array_equal(sx, sy):
            return _assert_equal_text(sx, sy)
    return f"Input tensors have incompatible shapes: ragged ranks {x.ragged_rank} and {y.ragged_rank}"


def _shape_text(rt):
    return "[" + ", ".join(str(n) for n in [len(s) - 1 for s in _partitions(rt)]) + "]"


def _broadcast_dense(p, a, base):
    if isinstance(a, (int, float, bool)):
        return a
    t = a if isinstance(a, Tensor) else convert_to_tensor(a, dtype=base.dtype if isinstance(a, list) else None)
    sh = tuple(aval_of(t).shape)
    inner = tuple(base.flat_values.shape)[1:]
    if len(sh) <= len(inner):
        return t   # broadcasts against each flat value's dims
    full = len(base.shape)
    if len(sh) > full:
        raise InvalidArgumentError(f"{p.name}: a dense operand of shape {list(sh)} has more dims than the "
                                   f"RaggedTensor of shape {base.shape}")
    sh = (1,) * (full - len(sh)) + sh   # TF's broadcasting: leading dims of 1
    if _is_traced(t, base):
        return _traced_broadcast_dense(p, t, sh, base)
    t = _np(t).reshape(sh)
    outer = base.ragged_rank + 1
    if all(d == 1 for d in sh[:outer]):   # one value for every row: broadcast against the flat values
        return Tensor(t.reshape(sh[outer:]))
    if base.ragged_rank == 1 and sh[1] == 1 and sh[0] in (1, base.nrows_static()):
        v = t[:, 0]   # row i's value for each of its elements
        ids = _np(base.value_rowids())
        return Tensor(v[ids] if sh[0] != 1 else np.broadcast_to(v, (ids.size,) + v.shape[1:]).copy())
    if base.ragged_rank == 1 and sh[0] == base.nrows_static():
        # rows of sh[1] values: TF makes the dense operand ragged (uniform rows) and checks the
        # row splits are equal; then its values line up with the flat values
        dense = np.arange(sh[0] + 1, dtype=np.int64) * sh[1]
        if not np.array_equal(dense, _np(base.row_splits)):
            raise InvalidArgumentError(_assert_equal_text(dense, _np(base.row_splits)))
        return Tensor(t.reshape((-1,) + sh[2:]))
    raise InvalidArgumentError(f"{p.name}: a dense operand of shape {list(sh)} does not broadcast against a "
                               f"RaggedTensor of shape {base.shape}")


def _traced_broadcast_dense(p, t, sh, base):
    """_broadcast_dense's cases in ops (the row ids traced)."""
    from ..ops import array_ops as A
    outer = base.ragged_rank + 1
    if all(d == 1 for d in sh[:outer]):
        return A.reshape(t, sh[outer:])
    n = base.nrows_static()
    if base.ragged_rank == 1 and sh[1] == 1 and (sh[0] == 1 or sh[0] == n):
        v = A.reshape(t, sh[:1] + sh[2:])
        ids = base.value_rowids()
        return A.gather(v, ids if sh[0] != 1 else ids * 0)
    if base.ragged_rank == 1 and n is not None and sh[0] == n:   # (as _broadcast_dense: the splits checked)
        from ..ops import math_ops as M
        dense = Tensor(np.arange(n + 1, dtype=np.int64) * sh[1])
        _assert(M.reduce_all(M.equal(dense, base.row_splits)), "Input tensors have incompatible shapes: the dense "
                "operand's rows ", dense, " vs the RaggedTensor's row_splits ", base.row_splits)
        return A.reshape(t, (-1,) + sh[2:])
    raise InvalidArgumentError(f"{p.name}: a dense operand of shape {list(sh)} does not broadcast against a "
                               f"RaggedTensor of shape {base.shape}")
