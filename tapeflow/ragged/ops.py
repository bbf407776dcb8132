"""TF's ragged versions of tf.concat/stack, the reductions, tf.tile, tf.map_fn, tf.shape and
tf.gather: the public ops hand a RaggedTensor argument here (one class test in each), as TF's
dispatch does. Built on tapeflow ops of the flat values where TF differentiates them (the
reductions along the ragged axis are segment reductions of flat_values)."""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError
from .ragged_tensor import RaggedTensor, _np, _concat_ragged_rows


def _as_ragged(x, like=None):
    if isinstance(x, RaggedTensor):
        return x
    t = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=None if like is None else like.dtype)
    rr = like.ragged_rank if like is not None else 1
    return RaggedTensor.from_tensor(t, ragged_rank=min(rr, len(t.shape) - 1))


def concat(values, axis, name=None):
    """tf.concat with a RaggedTensor among ``values``: axis 0 stacks the rows, axis 1 joins each
    row's pieces (dense inputs become ragged first, as TF converts them)."""
    like = next(v for v in values if isinstance(v, RaggedTensor))
    rts = [_as_ragged(v, like) for v in values]
    nd = len(like.shape)
    ax = axis + nd if axis < 0 else axis
    if ax == 0:
        return _concat_ragged_rows(rts)
    if ax == 1:
        n = rts[0].nrows_static()
        if any(r.nrows_static() != n for r in rts):
            raise InvalidArgumentError(f"concat: inputs must have the same number of rows along axis 1, got "
                                       f"{[r.nrows_static() for r in rts]}")
        rows = []
        for i in range(n):
            pieces = [r[i] for r in rts]
            rows.append(pieces)
        if isinstance(rts[0].values, RaggedTensor):
            return RaggedTensor.from_row_lengths(
                _concat_ragged_rows([p for row in rows for p in row]),
                [sum(p.nrows_static() for p in row) for row in rows])
        from ..ops import array_ops as A
        flat = [p for row in rows for p in row]
        vals = A.concat(flat, 0) if flat else like.flat_values[:0]
        return RaggedTensor.from_row_lengths(vals, [sum(int(p.shape[0]) for p in row) for row in rows])
    raise NotImplementedError(f"concat of RaggedTensors along axis {axis}: tapeflow joins axes 0 and 1")


def stack(values, axis=0, name=None):
    if axis != 0:
        raise NotImplementedError("stack of RaggedTensors: only axis=0 is implemented")
    like = next(v for v in values if isinstance(v, RaggedTensor))
    rts = [_as_ragged(v, like) for v in values]
    return RaggedTensor.from_row_lengths(_concat_ragged_rows(rts), [r.nrows_static() for r in rts])


def reduce(kind, rt, axis=None, keepdims=False):
    """tf.reduce_<kind> of a RaggedTensor: all values (axis None), each row (axis 1: a segment
    reduction of flat_values by row id, TF's; an empty row gives the reduction's identity, NaN
    for a mean), or each column (axis 0)."""
    from ..ops import math_ops as M
    from ..ops import segment_ops as S
    fv = rt.flat_values
    if axis is None:
        r = getattr(M, "reduce_" + kind)(fv)
        return r if kind != "mean" or fv.dtype.is_floating else M.reduce_mean(M.cast(fv, np.float64))
    nd = len(rt.shape)
    ax = axis + nd if axis < 0 else axis
    if rt.ragged_rank != 1 and ax != 0:
        if ax > 1:
            return rt.with_values(reduce(kind, rt.values, ax - 1, keepdims))
        raise NotImplementedError("reduce along axis 1 of a RaggedTensor with ragged_rank > 1")
    if ax == 1:
        ids = rt.value_rowids()
        n = rt.nrows_static()
    elif ax == 0:
        s = _np(rt.row_splits)
        ids = Tensor(np.arange(int(s[-1]), dtype=np.int64) - np.repeat(s[:-1], np.diff(s)))
        n = int(np.diff(s).max()) if s.size > 1 else 0
    else:
        return rt.with_flat_values(getattr(M, "reduce_" + kind)(fv, axis=ax - rt.ragged_rank, keepdims=keepdims))
    if kind == "mean":
        x = fv if fv.dtype.is_floating else M.cast(fv, np.float64)
        tot = S.unsorted_segment_sum(x, ids, n)
        cnt = S.unsorted_segment_sum(M.cast(Tensor(np.ones(int(fv.shape[0]), np.float64)), x.dtype), ids, n)
        cnt = M.cast(cnt, x.dtype)
        if len(x.shape) > 1:
            from ..ops import array_ops as A
            cnt = A.reshape(cnt, [-1] + [1] * (len(x.shape) - 1))
        r = tot / cnt
    elif kind in ("any", "all"):
        v = M.cast(fv, np.int32)
        r = M.cast(getattr(S, "unsorted_segment_" + ("max" if kind == "any" else "min"))(v, ids, n), bool)
        if kind == "all":   # an empty row: all() is True (the segment min's fill is int32's max)
            r = M.logical_or(r, M.equal(_row_counts(ids, n), 0))
    else:
        seg = {"sum": "sum", "max": "max", "min": "min", "prod": "prod"}[kind]
        r = getattr(S, "unsorted_segment_" + seg)(fv, ids, n)
    if keepdims:
        from ..ops import array_ops as A
        r = A.expand_dims(r, ax)
    return r


def _row_counts(ids, n):
    from ..ops import segment_ops as S
    return S.unsorted_segment_sum(Tensor(np.ones(int(ids.shape[0]), np.int32)), ids, n)


def tile(rt, multiples):
    """tf.tile of a 2-D RaggedTensor: rows repeated multiples[0] times, each row's values
    multiples[1] times."""
    m = [int(x) for x in np.asarray(_np(convert_to_tensor(multiples)) if not isinstance(multiples, (list, tuple))
                                    else multiples).reshape(-1)]
    if rt.ragged_rank != 1 or len(m) != len(rt.shape) or any(x != 1 for x in m[2:]):
        raise NotImplementedError("tile of a RaggedTensor: 2-D (ragged_rank 1) only")
    from ..ops import array_ops as A
    rows = [rt[i] for i in range(rt.nrows_static())] * m[0]
    tiled = [A.concat([r] * m[1], 0) if m[1] else r[:0] for r in rows]
    vals = A.concat(tiled, 0) if tiled else rt.values
    return RaggedTensor.from_row_lengths(vals, [int(t.shape[0]) for t in tiled])


def map_fn(fn, rt, fn_output_signature=None):
    """tf.map_fn over the rows of a RaggedTensor: each row through ``fn``; ragged results (or
    rows of different lengths) stay ragged."""
    from ..ops import array_ops as A
    outs = [fn(rt[i]) for i in range(rt.nrows_static())]
    if outs and isinstance(outs[0], RaggedTensor):
        return stack(outs)
    lens = [int(o.shape[0]) if len(o.shape) else None for o in outs]
    if outs and None in lens:
        return A.stack(outs)
    if isinstance(fn_output_signature, type(None)) or _ragged_spec(fn_output_signature) or len(set(lens)) > 1:
        return RaggedTensor.from_row_lengths(A.concat(outs, 0) if outs else rt.values[:0], lens)
    return A.stack(outs)


def _ragged_spec(s):
    return type(s).__name__ == "RaggedTensorSpec"


def shape(rt, out_type=None):
    """tf.shape of a RaggedTensor: TF returns a DynamicRaggedShape; tapeflow returns the bounding
    shape (the dims a dense tensor of it would need), int32 like tf.shape."""
    from ..core import dtypes as _dt
    return Tensor(_np(rt.bounding_shape()).astype(_dt.np_dtype(out_type or _dt.int32)))


def gather(params, indices, axis=0):
    if axis != 0:
        raise NotImplementedError("gather of a RaggedTensor: axis 0 only")
    idx = _np(convert_to_tensor(indices)).reshape(-1)
    return _concat_ragged_rows([params[int(i):int(i) + 1] for i in idx]) if idx.size else params[0:0]
