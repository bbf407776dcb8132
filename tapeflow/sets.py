"""``tf.sets`` (wave 20): ``intersection``, ``union``, ``difference`` along the last dimension of two
dense or sparse tensors, and ``size`` of a sparse one, with TF 2.21's rules: each row's result is sorted
and duplicate-free, returned as a SparseTensor whose last dense dimension is the largest row's size;
int8/16/32/64, uint8/16 and string elements (TF's TypeError for others). Eager only: the output's
size depends on the values."""
from __future__ import annotations

import numpy as np

from . import errors
from .core.tensor import Tensor, convert_to_tensor

_OK = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")


def _rows(x, what):
    """(batch shape, {row index tuple: set}) of a dense tensor or a SparseTensor, TF's checks."""
    from .core.state import STATE
    from .sparse import SparseTensor
    if STATE.trace is not None:
        raise NotImplementedError("tf.sets inside tapeflow.function: the result's size depends on the values; call it "
                                  "eagerly")
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


def _set_op(a, b, fn):
    from .sparse import SparseTensor
    sa, ra, dt = _rows(a, "a")
    sb, rb, dtb = _rows(b, "b")
    if dt != dtb:
        raise TypeError(f"Types don't match, {dt!r} vs {dtb!r}.")
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


def intersection(a, b, validate_indices=True):
    return _set_op(a, b, lambda x, y: x & y)


def union(a, b, validate_indices=True):
    return _set_op(a, b, lambda x, y: x | y)


def difference(a, b, aminusb=True, validate_indices=True):
    return _set_op(a, b, (lambda x, y: x - y) if aminusb else (lambda x, y: y - x))


def size(a, validate_indices=True):
    """The number of distinct values in each row of a SparseTensor (int32), TF 2.21's TypeError otherwise."""
    from .sparse import SparseTensor
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    batch, rows, _ = _rows(a, "a")
    return Tensor(np.asarray([len(rows.get(idx, ())) for idx in np.ndindex(*batch)], np.int32).reshape(batch))


__all__ = ["intersection", "union", "difference", "size"]
