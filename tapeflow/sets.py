"""``tf.sets`` (wave 20): ``intersection``, ``union``, ``difference`` along the last dimension of two
dense or sparse tensors, and ``size`` of a sparse one, with TF 2.21's rules: each row's result is sorted
and duplicate-free, returned as a SparseTensor whose last dense dimension is the largest row's size;
int8/16/32/64, uint8/16 and string elements (TF's TypeError for others). Inside ``tapeflow.function``
two dense numeric tensors (wave 25, also under an input_signature's None batch) are a composition of
dense ops: each row sorted, its first occurrences kept (and, for intersection/difference, tested for
membership in the other row), the kept entries' coordinates from a boolean_mask, so the values' count
and the width are known when the function runs (TF's DenseToDenseSetOperation); sparse or string
operands there raise, naming the op: their rows' sizes or order need the values."""
from __future__ import annotations

import numpy as np

from . import errors
from .core.tensor import Tensor, convert_to_tensor

_OK = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")


def _dtype_of(x):
    from .sparse import SparseTensor
    if isinstance(x, SparseTensor):
        return x.values.dtype
    return (x if isinstance(x, Tensor) else convert_to_tensor(x)).dtype


def _check_dtypes(a, b):
    da, db = _dtype_of(a), _dtype_of(b)
    for what, dt in (("a", da), ("b", db)):
        if dt.name not in _OK:
            raise TypeError(f"'{what}' has invalid dtype `{dt!r}` not in supported dtypes: `{', '.join(_OK)}`.")
    if da != db:
        raise TypeError(f"Types don't match, {da!r} vs {db!r}.")
    return da


def _check_batch(sa, sb):
    """TF's DenseToDenseSetOperation: the two batch shapes (all but the last dimension) are equal."""
    ba, bb = list(sa[:-1]), list(sb[:-1])
    if len(ba) != len(bb) or any(x is not None and y is not None and x != y for x, y in zip(ba, bb)):
        # TF 2.21's text
        raise errors.InvalidArgumentError(None, None, f"Mismatched shapes {ba} vs {bb}")


def _rows(x, what):
    """(batch shape, {row index tuple: set}) of a dense tensor or a SparseTensor, TF's checks."""
    from .sparse import SparseTensor
    if isinstance(x, SparseTensor):
        dt = x.values.dtype
        shape = tuple(int(v) for v in x.dense_shape.numpy())
        ind = np.asarray(x.indices.numpy())
        vals = np.asarray(x.values.numpy(), object if dt.is_string else None)
        rows = {}
        for i, v in zip(ind, vals):
            rows.setdefault(tuple(int(k) for k in i[:-1]), set()).add(v)
    else:
        t = x if isinstance(x, Tensor) else convert_to_tensor(x)
        dt = t.dtype
        a = np.asarray(t.numpy())
        shape = a.shape
        if a.ndim < 2:
            # TF 2.21's text
            raise errors.InvalidArgumentError(None, None, f"Shape {list(a.shape)} has rank {a.ndim} < 2")
        rows = {idx: set(a[idx].tolist()) for idx in np.ndindex(*a.shape[:-1])}
    if dt.name not in _OK:
        raise TypeError(f"'{what}' has invalid dtype `{dt!r}` not in supported dtypes: `{', '.join(_OK)}`.")
    return shape[:-1], rows, dt


def _set_op(a, b, fn, kind):
    from .core.state import STATE
    from .sparse import SparseTensor
    if STATE.trace is not None:
        return _traced_set_op(a, b, kind)
    sa, ra, dt = _rows(a, "a")
    sb, rb, dtb = _rows(b, "b")
    if dt != dtb:
        raise TypeError(f"Types don't match, {dt!r} vs {dtb!r}.")
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        _check_batch(sa + (0,), sb + (0,))
    batch = sa
    out_i, out_v, width = [], [], 0
    for idx in np.ndindex(*batch):
        vals = sorted(fn(ra.get(idx, set()), rb.get(idx, set())))
        width = max(width, len(vals))
        for j, v in enumerate(vals):
            out_i.append(list(idx) + [j])
            out_v.append(v)
    indices = np.asarray(out_i, np.int64).reshape(-1, len(batch) + 1)
    if dt.is_string:
        values = np.empty(len(out_v), object)
        values[:] = [v if isinstance(v, bytes) else str(v).encode() for v in out_v]
    else:
        values = np.asarray(out_v, dt.np).reshape(-1)
    return SparseTensor(indices, Tensor(values), np.asarray(list(batch) + [width], np.int64))


def _traced_set_op(a, b, kind):
    """The set op of two dense tensors inside tapeflow.function (see the module's docstring); ``kind`` is
    "intersection", "union", "difference" (a - b) or "rdifference" (b - a)."""
    from .core.primitive import bind
    from .core.primitives import assert_op as AS
    from .ops import array_ops as A
    from .ops import math_ops as M
    from .sparse import SparseTensor
    op = f"tf.sets.{'difference' if kind == 'rdifference' else kind}"
    dt = _check_dtypes(a, b)
    if isinstance(a, SparseTensor) or isinstance(b, SparseTensor) or dt.is_string:
        raise NotImplementedError(f"{op} inside tapeflow.function: of dense numeric tensors only (a sparse "
                                  f"operand's rows, or the order of strings, need the values); call it eagerly, "
                                  f"or densify: tf.sparse.to_dense")
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    sa, sb = tuple(a.shape), tuple(b.shape)
    for x in (sa, sb):
        if len(x) < 2:
            # TF 2.21's text
            raise errors.InvalidArgumentError(None, None, f"Shape {list(x)} has rank {len(x)} < 2")
    _check_batch(sa, sb)
    if kind == "rdifference":   # (aminusb=False: b - a)
        a, b, sa, sb, kind = b, a, sb, sa, "difference"
    ka, kb = sa[-1], sb[-1]
    if ka is None or kb is None:
        raise NotImplementedError(f"{op}: the last dimension (each row's set) must be known while tracing, got "
                                  f"shapes {sa} and {sb}; give it in the input_signature")
    batch = A.shape(a, out_type=np.int64)[:-1]
    if None in sa[:-1] or None in sb[:-1]:
        # an input_signature's None: the batch shapes compared when the function runs (TF's text)
        bb = A.shape(b, out_type=np.int64)[:-1]
        bind(AS.assert_p, M.reduce_all(M.equal(batch, bb)), batch, bb, summarize=len(sa),
             template=("Mismatched shapes ", None, " vs ", None))
    nrows = M.reduce_prod(batch)

    def flat(x, k):   # (rows of 0 entries: reshape cannot infer their count from 0 elements)
        return A.reshape(x, [-1, k]) if k else A.zeros([nrows, 0], dt.np)
    fa, fb = flat(a, ka), flat(b, kb)
    # each row's candidates in order: a's (intersection, difference) or a's and b's (union)
    cand = A.sort(A.concat([fa, fb], 1) if kind == "union" else fa, axis=-1)
    k = ka + kb if kind == "union" else ka
    # a value's first occurrence in its sorted row: unequal to its left neighbour, or in column 0
    left = A.concat([cand[:, :1], cand[:, :-1]], 1)
    keep = M.logical_or(M.not_equal(cand, left), Tensor(np.arange(k) == 0))
    if kind != "union":
        member = M.reduce_any(M.equal(A.expand_dims(cand, 2), A.expand_dims(fb, 1)), axis=2)
        keep = M.logical_and(keep, member if kind == "intersection" else M.logical_not(member))
    kept = M.cast(keep, np.int64)
    width = M.reduce_max(A.concat([M.reduce_sum(kept, axis=1), Tensor(np.zeros(1, np.int64))], 0))
    cols = A.boolean_mask(M.cumsum(kept, axis=1) - 1, keep)
    rows = A._where_indices(keep)[:, 0]
    # the flat row unravelled into the batch coordinates (a batch of size 0 has no rows: no divisor 0)
    nb = len(sa) - 1
    b1 = M.maximum(batch, Tensor(np.ones((), np.int64)))
    coords = [M.floormod(M.floordiv(rows, M.reduce_prod(b1[j + 1:])), b1[j]) for j in range(nb)]
    indices = A.stack(coords + [cols], axis=1)
    return SparseTensor(indices, A.boolean_mask(cand, keep), A.concat([batch, A.reshape(width, [1])], 0))


def intersection(a, b, validate_indices=True):
    return _set_op(a, b, lambda x, y: x & y, "intersection")


def union(a, b, validate_indices=True):
    return _set_op(a, b, lambda x, y: x | y, "union")


def difference(a, b, aminusb=True, validate_indices=True):
    return _set_op(a, b, (lambda x, y: x - y) if aminusb else (lambda x, y: y - x),
                   "difference" if aminusb else "rdifference")


def size(a, validate_indices=True):
    """The number of distinct values in each row of a SparseTensor (int32), TF 2.21's TypeError otherwise."""
    from .sparse import SparseTensor
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    from .core.state import STATE
    if STATE.trace is not None:
        raise NotImplementedError("tf.sets.size inside tapeflow.function: a sparse operand's rows need the values; "
                                  "call it eagerly")
    batch, rows, _ = _rows(a, "a")
    return Tensor(np.asarray([len(rows.get(idx, ())) for idx in np.ndindex(*batch)], np.int32).reshape(batch))


__all__ = ["intersection", "union", "difference", "size"]
