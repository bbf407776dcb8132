"""tf.ragged: ragged tensors (eager; see ragged_tensor.py)."""
from __future__ import annotations

import builtins as _builtins

import numpy as np

from ..core import dtypes as _dt
from ..core.tensor import Tensor, convert_to_tensor
from ..type_spec import TypeSpec
from .ragged_tensor import RaggedTensor, _np

__all__ = ["RaggedTensor", "RaggedTensorSpec", "constant", "map_flat_values", "range", "boolean_mask", "stack", "row_splits_to_segment_ids",
           "segment_ids_to_row_splits", "is_ragged"]


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
