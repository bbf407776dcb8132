"""tf.ragged: ragged tensors (eager; see ragged_tensor.py)."""
from __future__ import annotations

import builtins as _builtins

import numpy as np

from ..core import dtypes as _dt
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError
from ..type_spec import TypeSpec
from .ragged_tensor import RaggedTensor, _np

__all__ = ["RaggedTensor", "RaggedTensorSpec", "constant", "map_flat_values", "range", "boolean_mask", "stack", "row_splits_to_segment_ids",
           "segment_ids_to_row_splits", "is_ragged", "cross", "cross_hashed", "stack_dynamic_partitions"]


def _depth(x):
    """(the nesting depth of the scalars in ``x``, None if it holds none; the deepest list's),
    TF's _find_scalar_and_max_depth; ValueError where the scalars' depth varies."""
    if isinstance(x, (list, tuple)):
        ds, deepest = set(), 1
        for v in x:
            d, m = _depth(v)
            if d is not None:
                ds.add(d)
            deepest = max(deepest, m + 1)
        if len(ds) > 1:
            raise ValueError("all scalar values must have the same nesting depth")
        return ((ds.pop() + 1) if ds else None), deepest
    if isinstance(x, np.ndarray):
        return x.ndim, x.ndim
    return 0, 0


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=_dt.int64):
    """tf.ragged.constant: a nested list as a RaggedTensor; all dims but the first ragged unless
    ``ragged_rank``/``inner_shape`` make the inner ones uniform (TF's rule)."""
    if isinstance(pylist, RaggedTensor):
        return pylist
    if isinstance(pylist, Tensor):
        pylist = pylist.numpy().tolist()
    d, deepest = _depth(pylist)
    if d is None:   # no scalars (empty lists): the lists' depth, and any inner_shape below it
        d = deepest + (len(inner_shape) if inner_shape else 0)
    inner = 0 if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(d - 1 - inner, 0) if inner else max(d - 1, 0)
    if d == 0 or ragged_rank == 0:
        return convert_to_tensor(pylist, dtype=dtype)
    if ragged_rank >= d:
        raise ValueError(f"ragged_rank must be less than the nesting depth of pylist ({d}), got {ragged_rank}")
    levels = []
    items = list(pylist)
    for _ in _builtins.range(ragged_rank):
        lens = [len(x) for x in items]
        levels.append(lens)
        items = [v for x in items for v in x]
    # the rows of the innermost partition: uniform values (their shape is checked by the conversion)
    if not items:
        shape = tuple(inner_shape) if inner_shape else ()
        if not inner_shape and d - 1 - ragged_rank > 0:
            shape = (0,) * (d - 1 - ragged_rank)
        vals = np.zeros((0,) + shape, _dt.np_dtype(dtype) if dtype is not None else np.float32)
        if dtype is None and _has_strings(pylist):
            vals = np.zeros((0,) + shape, object)
        values = convert_to_tensor(vals)
    else:
        try:
            values = convert_to_tensor(items, dtype=dtype)
        except ValueError as e:
            if "mixed types" in str(e):
                raise ValueError("Can't convert Python sequence with mixed types to Tensor.") from None
            raise ValueError(f"inner values must have a uniform shape below ragged_rank {ragged_rank}: {e}") \
                from None
    if inner_shape is not None and tuple(values.shape[1:]) != tuple(inner_shape) and items:
        values = convert_to_tensor(np.reshape(values.numpy(), (-1,) + tuple(inner_shape)))
    rt = values
    for lens in reversed(levels):
        rt = RaggedTensor.from_row_lengths(rt, lens, validate=False)
    return rt


def _has_strings(x):
    if isinstance(x, (list, tuple)):
        return any(_has_strings(v) for v in x)
    return isinstance(x, (str, bytes))


def map_flat_values(op, *args, **kwargs):
    """tf.ragged.map_flat_values: ``op`` on the flat values of the ragged arguments (which must
    share their row partitions); the result has their partitions."""
    from .ragged_tensor import _same_partitions
    rts = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not rts:
        return op(*args, **kwargs)
    base = rts[0]
    for r in rts[1:]:
        if not _same_partitions(base, r):
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError("map_flat_values: the ragged arguments' row partitions differ")

    def flat(a):
        return a.flat_values if isinstance(a, RaggedTensor) else a
    out = op(*[flat(a) for a in args], **{k: flat(v) for k, v in kwargs.items()})
    return base.with_flat_values(out)


def range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=_dt.int64):  # noqa: A001
    """tf.ragged.range: row i is range(starts[i], limits[i], deltas[i])."""
    if limits is None:
        starts, limits = 0, starts
    s, lim, dl = (np.asarray(_np(convert_to_tensor(v)) if not isinstance(v, Tensor) else _np(v))
                  for v in (starts, limits, deltas))
    # (vectors broadcast as NumPy's: an empty one gives no rows; scalars alone make one row)
    n = np.broadcast_shapes(s.shape, lim.shape, dl.shape)[0] if max(s.ndim, lim.ndim, dl.ndim) else 1
    s, lim, dl = (np.broadcast_to(v, (n,)) for v in (s, lim, dl))
    kind = np.result_type(s, lim, dl)
    if dtype is not None:
        kind = _dt.np_dtype(dtype)
    rows = [np.arange(a, b, c, dtype=kind) for a, b, c in zip(s, lim, dl)]
    vals = np.concatenate(rows) if rows else np.zeros(0, kind)
    return RaggedTensor.from_row_lengths(Tensor(vals.astype(kind)), [r.size for r in rows])


def boolean_mask(data, mask, name=None):
    """tf.ragged.boolean_mask: the values where ``mask`` (same outer shape) is True; the kept rows
    stay ragged."""
    if isinstance(data, RaggedTensor):
        if not isinstance(mask, RaggedTensor):
            m = _np(convert_to_tensor(mask))
            if m.ndim == 1:   # whole rows
                rows = [data[i] for i in np.nonzero(m)[0]]
                from .ragged_tensor import _stack_rows
                return _stack_rows(rows, data)
            mask = RaggedTensor.from_tensor(Tensor(m), lengths=np.diff(_np(data.row_splits)))
        keep = _np(mask.flat_values).astype(bool)
        fv = _np(data.flat_values)
        # new row lengths, innermost level first
        lens = []
        level_keep = keep
        for s in reversed([_np(x) for x in data.nested_row_splits]):
            kept = np.concatenate([[0], np.cumsum(level_keep, dtype=np.int64)])
            lens.append(kept[s[1:]] - kept[s[:-1]])   # each row's kept values (an empty row: 0)
            level_keep = np.ones(s.size - 1, bool)
        r = Tensor(fv[keep])
        for ln in lens:
            r = RaggedTensor.from_row_lengths(r, ln)
        return r
    d = _np(convert_to_tensor(data))
    m = _np(convert_to_tensor(mask)) if not isinstance(mask, RaggedTensor) else None
    if m is not None and m.ndim == 1:
        return Tensor(d[m.astype(bool)])
    rows = [d[i][m[i].astype(bool)] for i in _builtins.range(d.shape[0])]
    return RaggedTensor.from_row_lengths(Tensor(np.concatenate(rows) if rows else d.reshape(-1)[:0]),
                                         [r.shape[0] for r in rows])


def stack(values, axis=0, name=None):
    """tf.ragged.stack along axis 0: the inputs become the rows."""
    from .ops import stack as _stack
    return _stack(values, axis)


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    s = _np(convert_to_tensor(splits))
    return Tensor(np.repeat(np.arange(s.size - 1, dtype=np.int64), np.diff(s)))


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    ids = _np(convert_to_tensor(segment_ids)).astype(np.int64)
    n = int(num_segments) if num_segments is not None else (int(ids.max()) + 1 if ids.size else 0)
    return Tensor(np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=n)[:n])]).astype(np.int64))


def is_ragged(x):
    return isinstance(x, RaggedTensor)


class RaggedTensorSpec(TypeSpec):
    """tf.RaggedTensorSpec: shape, dtype and ragged_rank of a RaggedTensor. In a tapeflow.function's
    input_signature (or given to get_concrete_function) it stands for the component tensors a
    RaggedTensor is traced as (``_tf_component_specs``): flat_values and one row_splits per
    ragged dim, their lengths unknown unless the shape gives the number of rows."""

    def __init__(self, shape=None, dtype=_dt.float32, ragged_rank=None, row_splits_dtype=_dt.int64,
                 flat_values_spec=None):
        from ..core.tensor import TensorShape
        self.shape = TensorShape(shape)
        self.dtype = _dt.as_dtype(dtype)
        rank = self.shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if rank is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be non-negative and less than the rank ({rank}), got "
                             f"{ragged_rank}")
        self.ragged_rank = ragged_rank
        self.row_splits_dtype = _dt.as_dtype(row_splits_dtype)

    value_type = property(lambda self: RaggedTensor)

    def __repr__(self):
        dims = None if self.shape.rank is None else list(self.shape)
        return (f"RaggedTensorSpec(TensorShape({dims}), {self.dtype!r}, {self.ragged_rank}, "
                f"{self.row_splits_dtype!r})")

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        dims = None if self.shape.rank is None else tuple(self.shape)
        return (dims, self.dtype, self.ragged_rank, self.row_splits_dtype)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype, value.ragged_rank)

    def is_compatible_with(self, other):
        if isinstance(other, RaggedTensorSpec):
            o = other
        elif isinstance(other, RaggedTensor):
            o = RaggedTensorSpec.from_value(other)
        else:
            return False
        if o.dtype != self.dtype or o.ragged_rank != self.ragged_rank:
            return False
        a, b = self.shape, o.shape
        if a.rank is None or b.rank is None:
            return True
        return a.rank == b.rank and all(x is None or y is None or x == y for x, y in zip(a, b))

    # -- compiler/function.py's composite protocol, for a spec
    _tf_composite_class = property(lambda self: RaggedTensor)

    def _inner_dims(self):
        if self.shape.rank is None:
            raise ValueError(f"{self!r}: tapeflow.function needs the rank of a RaggedTensorSpec's shape")
        return tuple(self.shape)[self.ragged_rank + 1:]

    def _tf_static(self):
        dims = tuple(self.shape) if self.shape.rank is not None else (None,) * (self.ragged_rank + 1)
        return ("ragged", tuple(dims[1:self.ragged_rank + 1]))

    def _tf_component_specs(self):
        from ..compiler.function import TensorSpec
        n = tuple(self.shape)[0] if self.shape.rank else None
        return ((TensorSpec((None,) + self._inner_dims(), self.dtype),
                 TensorSpec((None if n is None else n + 1,), _dt.int64))
                + tuple(TensorSpec((None,), _dt.int64) for _ in _builtins.range(self.ragged_rank - 1)))


# -- wave 22 (api22): tf.ragged.cross / cross_hashed, stack_dynamic_partitions, tf.ragged_fill_empty_rows ----

def _cross(inputs, hashed, num_buckets, hash_key):
    """tf.ragged.cross's front (TF's _cross_internal): inputs in their order, each a rank-2
    RaggedTensor (ragged_rank 1), SparseTensor or dense matrix; integers as int64, strings as
    they are, anything else TF's ValueError. The kernel is ``_feature_cross.py``'s."""
    from .. import _feature_cross as FC
    from ..ops import array_ops as A
    from ..sparse import SparseTensor, _raise_or_assert, _i64
    from ..ops import math_ops as M
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    cols, sizes = [], []
    for i, t in enumerate(inputs):
        if not isinstance(t, (SparseTensor, RaggedTensor, Tensor)):
            t = constant(t) if isinstance(t, (list, tuple)) else convert_to_tensor(t)
        d = np.dtype(t.dtype.np if hasattr(t.dtype, "np") else t.dtype)
        if d.kind not in "iuO":
            raise ValueError(f"Unexpected dtype for inputs[{i}]: <dtype: '{_dt.as_dtype(d).name}'> (tf.ragged.cross "
                             "crosses integer and string features)")
        if isinstance(t, RaggedTensor):
            if t.ragged_rank != 1 or len(t.values.shape) != 1:
                raise ValueError("tf.ragged.cross only supports inputs with rank=2")
            cols.append(FC.ragged_column(t))
            sizes.append(t.nrows())
        elif isinstance(t, SparseTensor):
            cols.append(FC.sparse_column(t))
            sizes.append(t.dense_shape[0])
        else:
            if len(t.shape) != 2:
                raise InvalidArgumentError("tf.ragged.cross only supports inputs with rank=2. (got a dense input of "
                                           f"shape {list(t.shape)})")
            cols.append(FC.dense_column(t, i))
            sizes.append(A.shape(t, out_type=np.int64)[0])
    nrows = _i64(sizes[0]) if sizes else convert_to_tensor(np.array(0, np.int64))
    for n in sizes[1:]:
        _raise_or_assert(lambda: "inputs must all have the same batch dimension size. (tf.ragged.cross)",
                         M.equal(nrows, _i64(n)), "tf.ragged.cross: inputs must all have the same batch dimension size.")
    vals, splits, _, _ = FC.run_cross(FC.CrossKernel(hashed, num_buckets, hash_key, b"_X_"), nrows, cols)
    return RaggedTensor.from_row_splits(vals, splits, validate=False)


def cross(inputs, name=None):
    """tf.ragged.cross: each row's string feature crosses (inputs in their order, '_X_' joined)."""
    return _cross(inputs, False, 0, 0)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """tf.ragged.cross_hashed: each row's crosses as FingerprintCat64 hashes (int64), ``% num_buckets``
    when num_buckets > 0; hash_key a uint64 (TF passes a key >= 2**63 as its int64 bits)."""
    from .. import _feature_cross as FC
    nb = FC.check_num_buckets(num_buckets)
    key = FC.DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    return _cross(inputs, True, nb, key)


def _from_sorted_rowids(values, rowids, nrows):
    """A RaggedTensor of ``nrows`` rows from sorted row ids (traceable: the splits are where each
    row's ids start, a searchsorted)."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    n = M.cast(nrows, _dt.int64)
    splits = A.searchsorted(M.cast(rowids, _dt.int64), A.range(n + 1, dtype=_dt.int64), side="left",
                            out_type=_dt.int64)
    return RaggedTensor.from_row_splits(values, splits, validate=False)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """tf.ragged.stack_dynamic_partitions: row i of the result stacks the slices of ``data`` whose
    partition is i, in row-major order (a stable sort by partition). ``partitions``' shape is a
    prefix of ``data``'s; both may be ragged."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    from ..sparse import _raise_or_assert
    if not isinstance(data, (Tensor, RaggedTensor)):
        data = constant(data) if isinstance(data, (list, tuple)) and _ragged_list(data) else convert_to_tensor(data)
    if not isinstance(partitions, (Tensor, RaggedTensor)):
        partitions = constant(partitions) if isinstance(partitions, (list, tuple)) and _ragged_list(partitions) \
            else convert_to_tensor(partitions)
    pd = np.dtype(partitions.dtype.np if hasattr(partitions.dtype, "np") else partitions.dtype)
    if pd not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError("value_rowids must have dtype int32 or int64 (tf.ragged.stack_dynamic_partitions: "
                         f"partitions is {_dt.as_dtype(pd).name})")
    num = num_partitions if isinstance(num_partitions, Tensor) else convert_to_tensor(np.array(num_partitions, pd))
    if len(num.shape) != 0:
        raise ValueError(f"Shape {list(num.shape)} must have rank 0 (tf.ragged.stack_dynamic_partitions: "
                         "num_partitions)")
    prank = len(partitions.shape)
    pshape, dshape = list(partitions.shape), list(data.shape)[:prank]
    if len(dshape) < prank or any(a is not None and b is not None and a != b for a, b in zip(pshape, dshape)):
        raise ValueError(f"Shapes {tuple(pshape)} and {tuple(dshape)} are incompatible "
                         "(tf.ragged.stack_dynamic_partitions: partitions' shape must be a prefix of data's)")
    if prank == 0:
        return _from_sorted_rowids(A.stack([data]) if isinstance(data, Tensor) else stack([data]),
                                   A.reshape(M.cast(partitions, _dt.int64), [1]), num)
    if prank == 1:
        p = M.cast(partitions, _dt.int64)
        perm = A.argsort(p, stable=True)
        rowids = A.gather(p, perm)
        values = A.gather(data, perm)
        n64 = M.cast(num, _dt.int64)
        _raise_or_assert(lambda: "partitions must be less than num_partitions",
                         M.reduce_all(M.less(rowids[-1:], n64)), "partitions must be less than num_partitions")
        _raise_or_assert(lambda: "partitions must be non-negative.", M.reduce_all(M.greater_equal(p, 0)),
                         "partitions must be non-negative.")
        return _from_sorted_rowids(values, rowids, n64)
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(data)
    if not isinstance(partitions, RaggedTensor):
        partitions = RaggedTensor.from_tensor(partitions, ragged_rank=max(data.ragged_rank, prank - 1))
    a, b = data.row_splits, partitions.row_splits
    same = M.reduce_all(M.equal(a, b)) if a.shape == b.shape else convert_to_tensor(np.False_)
    _raise_or_assert(lambda: "data and partitions have incompatible ragged shapes", same,
                     "data and partitions have incompatible ragged shapes")
    return stack_dynamic_partitions(data.values, partitions.values, num)


def _ragged_list(x):
    """Whether a nested list has rows of different lengths (then it converts to a RaggedTensor)."""
    try:
        np.asarray(x, dtype=object if any(isinstance(v, str) for v in np.ravel(np.asarray(x, object))) else None)
        return False
    except ValueError:
        return True


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """tf.ragged_fill_empty_rows (TF's raw RaggedFillEmptyRows op): (output_value_rowids,
    output_values, empty_row_indicator, reverse_index_map) -- ``default_value`` added as the one
    value of every row without values, the values sorted by row (stably), reverse_index_map[i] the
    output position of input value i. Composed of a stable sort and gathers, so the outputs'
    gradient reaches values and default_value (TF's RaggedFillEmptyRowsGrad)."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    from ..ops import segment_ops as S
    from ..sparse import _raise_or_assert, _count
    args = [("value_rowids", value_rowids), ("values", values), ("nrows", nrows), ("default_value", default_value)]
    ts = [a if isinstance(a, Tensor) else convert_to_tensor(a) for _, a in args]
    ids, vals, n, dflt = ts
    for k, (what, t), want in ((0, args[0], np.dtype(np.int64)), (2, args[2], np.dtype(np.int64)),
                               (3, args[3], np.dtype(vals.dtype.np))):
        if np.dtype(ts[k].dtype.np) != want:
            raise InvalidArgumentError(f"cannot compute RaggedFillEmptyRows as input #{k}(zero-based) was expected to "
                                       f"be a {_dt.as_dtype(want).name} tensor but is a {ts[k].dtype.name} tensor "
                                       f"(tf.ragged_fill_empty_rows: {what})")
    if len(vals.shape) != 1:
        raise InvalidArgumentError(f"values must be a vector, saw: {list(vals.shape)} (tf.ragged_fill_empty_rows)")
    if len(dflt.shape) != 0:
        raise InvalidArgumentError(f"default_value must be a scalar, saw: {list(dflt.shape)} "
                                   "(tf.ragged_fill_empty_rows)")
    if ids.shape[0] is not None and vals.shape[0] is not None and ids.shape[0] != vals.shape[0]:
        raise InvalidArgumentError(f"The length of `values` ({vals.shape[0]}) must match the first dimension of "
                                   f"`value_rowids` ({ids.shape[0]}). (tf.ragged_fill_empty_rows)")
    inb = M.logical_and(M.greater_equal(ids, 0), M.less(ids, n))

    def oob():
        i = int(np.argmin(inb.numpy()))
        return f"indices({i}, 0) is invalid: {int(ids.numpy()[i])} >= {int(n.numpy())} (tf.ragged_fill_empty_rows)"
    _raise_or_assert(oob, M.reduce_all(inb), "tf.ragged_fill_empty_rows: a value_rowid is invalid: not in [0, nrows)")
    count = S.unsorted_segment_sum(A.ones_like(ids), ids, _count(n))
    empty = M.equal(count, 0)
    new_rows = A.reshape(M.where(empty), [-1])
    all_rows = A.concat([ids, new_rows], 0)
    order = A.argsort(all_rows, stable=True)                 # a row's values first, in their order
    out_ids = A.gather(all_rows, order)
    # the default once per empty row: a gather (its count is data; its gradient sums into default_value)
    fill = A.gather(A.reshape(dflt, [1]), A.zeros_like(new_rows))
    out_vals = A.gather(A.concat([vals, fill], 0), order)
    # reverse_index_map: the inverse permutation of ``order`` at the input values' positions
    # (argsort of a permutation is its inverse; traceable where a scatter of a range of a length
    # known only at run time is not)
    rim = M.cast(A.argsort(order, stable=True), np.int64)[:A.shape(ids)[0]]
    nn = _count(n)
    if not isinstance(nn, Tensor) and nn == 0:
        out_ids = A.reshape(out_ids, [0, 1])          # (TF 2.21 returns an empty (0, 1) row-id tensor then)
    return _FillEmptyRows(out_ids, out_vals, empty, rim)


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """tf.ragged_fill_empty_rows_grad (TF's RaggedFillEmptyRowsGrad): (d_values, d_default_value):
    the output gradient at each input value's position, and the rest summed."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    from ..sparse import _raise_or_assert
    rim = reverse_index_map if isinstance(reverse_index_map, Tensor) else convert_to_tensor(reverse_index_map)
    g = grad_values if isinstance(grad_values, Tensor) else convert_to_tensor(grad_values)
    if len(g.shape) != 1:
        raise InvalidArgumentError(f"grad_values must be a vector, saw: {list(g.shape)} "
                                   "(tf.ragged_fill_empty_rows_grad)")
    n = A.shape(g, out_type=np.int64)[0]
    inb = M.logical_and(M.greater_equal(rim, 0), M.less(rim, n))

    def oob():
        bad = int(rim.numpy()[int(np.argmin(inb.numpy()))])
        return f"Elements in reverse index must be in [0, {int(n.numpy())}) but got {bad} " \
               "(tf.ragged_fill_empty_rows_grad)"
    _raise_or_assert(oob, M.reduce_all(inb), "tf.ragged_fill_empty_rows_grad: Elements in reverse index must be in "
                     "[0, len(grad_values))")
    d_values = A.gather(g, rim)
    return _FillEmptyRowsGrad(d_values, M.subtract(M.reduce_sum(g), M.reduce_sum(d_values)))


import collections as _collections  # noqa: E402
_FillEmptyRows = _collections.namedtuple(
    "RaggedFillEmptyRows", ["output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map"])
_FillEmptyRowsGrad = _collections.namedtuple("RaggedFillEmptyRowsGrad", ["d_values", "d_default_value"])
