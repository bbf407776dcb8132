"""TF's ragged versions of tf.concat/stack, the reductions, tf.tile, tf.map_fn, tf.shape and
tf.gather: the public ops hand a RaggedTensor argument here (one class test in each), as TF's
dispatch does. Built on tapeflow ops of the flat values where TF differentiates them (the
reductions along the ragged axis are segment reductions of flat_values)."""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError
from .ragged_tensor import RaggedTensor, _np, _concat_ragged_rows, _is_traced, _positions


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
    if ax == 1 and _is_traced(*rts):
        return _traced_concat_columns(rts)
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


def _traced_concat_columns(rts):
    """concat along axis 1, traced (ragged_rank 1): each value's place in the result is its row's
    start there, plus the lengths of the row's pieces before its own, plus its position in its
    row; the result's values are the inputs' values gathered in the order of those places."""
    from ..ops import array_ops as A
    from ..ops import math_ops as M
    if any(r.ragged_rank != 1 for r in rts):
        raise NotImplementedError("concat along axis 1 of RaggedTensors with ragged_rank > 1 inside "
                                  "tapeflow.function: tapeflow joins ragged_rank 1 there")
    ns = {r.nrows_static() for r in rts}
    if len(ns) > 1 and None not in ns:
        raise InvalidArgumentError(f"concat: inputs must have the same number of rows along axis 1, got "
                                   f"{[r.nrows_static() for r in rts]}")
    lens = [r.row_lengths() for r in rts]
    total = lens[0]
    for ln in lens[1:]:
        total = total + ln
    splits = A.concat([Tensor(np.zeros(1, np.int64)), M.cumsum(total)], 0)
    before = None
    places = []
    for r, ln in zip(rts, lens):
        ids = r.value_rowids()
        start = A.gather(splits, ids) + (_positions(r.values) - A.gather(r.row_splits, ids))
        places.append(start if before is None else start + A.gather(before, ids))
        before = ln if before is None else before + ln
    order = A.argsort(A.concat(places, 0), stable=True)
    vals = A.gather(A.concat([r.values for r in rts], 0), order)
    return RaggedTensor._from_parts(vals, splits)


def reverse(rt, axis):
    """tf.reverse of a RaggedTensor (TF's ragged dispatch): axis 0 reverses the order of the rows,
    the innermost ragged axis each row's values, a uniform inner axis each flat value. One gather
    of the values, eager and traced."""
    from ..ops import array_ops as A
    axes = [int(a) for a in np.asarray(axis if not isinstance(axis, Tensor) else _np(axis, "reverse")).reshape(-1)]
    nd = rt.ndim
    for a in axes:
        if not -nd <= a < nd:
            raise InvalidArgumentError(f"reverse: axis {a} is out of range for a RaggedTensor of rank {nd}")
    axes = sorted({a % nd for a in axes})
    out = rt
    for a in axes:
        out = _reverse_axis(out, a, A)
    return out


def _reverse_axis(rt, a, A):
    if a > rt.ragged_rank:   # a uniform axis of the flat values
        return rt.with_flat_values(A.reverse(rt.flat_values, [a - rt.ragged_rank]))
    if a > 1:
        return rt.with_values(_reverse_axis(rt.values, a - 1, A))
    if isinstance(rt.values, RaggedTensor):
        raise NotImplementedError("reverse along an outer axis of a RaggedTensor with ragged_rank > 1: "
                                  "tapeflow reverses ragged_rank 1, and the innermost ragged axis")
    s = rt.row_splits
    ids = rt.value_rowids()
    pos = _positions(rt.values)
    if a == 1:   # row r's value at j comes from splits[r] + splits[r + 1] - 1 - j
        src = A.gather(s, ids) + A.gather(s[1:], ids) - 1 - pos
        return RaggedTensor._from_parts(A.gather(rt.values, src), s, rt._uniform)
    # axis 0: the rows in reverse order; row r of the result is row n - 1 - r
    lens = A.reverse(s[1:] - s[:-1], [0])
    from ..ops import math_ops as M
    splits = A.concat([Tensor(np.zeros(1, np.int64)), M.cumsum(lens)], 0)
    new_ids = RaggedTensor._from_parts(rt.values, splits).value_rowids()
    n = rt.nrows() if rt.nrows_static() is None else rt.nrows_static()
    src = A.gather(s, (n - 1) - new_ids) + (pos - A.gather(splits, new_ids))
    return RaggedTensor._from_parts(A.gather(rt.values, src), splits, rt._uniform)


def stack(values, axis=0, name=None):
    if axis != 0:
        raise NotImplementedError("stack of RaggedTensors: only axis=0 is implemented")
    like = next(v for v in values if isinstance(v, RaggedTensor))
    rts = [_as_ragged(v, like) for v in values]
    return RaggedTensor.from_row_lengths(_concat_ragged_rows(rts), [r.nrows_static() for r in rts])


def reduce(kind, rt, axis=None, keepdims=False):
    """tf.reduce_<kind> of a RaggedTensor: all values (axis None), each row (axis 1: a segment
    reduction of flat_values by row id, TF's; an empty row gives the reduction's identity, NaN
    for a mean), or each column (axis 0). Traced, the row ids are value_rowids' composition and
    the segment count is the static number of rows where the trace knows it (the same kernel
    as eagerly), else data-dependent (see _segments)."""
    from ..ops import math_ops as M
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
    traced = _is_traced(rt)
    if ax == 1:
        ids = rt.value_rowids()
        n = rt.nrows_static()
    elif ax == 0:
        if traced:   # each value's position in its row; the longest row's length segments
            ids = _positions(rt.values) - _gather(rt.row_splits, rt.value_rowids())
            n = None
        else:
            s = _np(rt.row_splits)
            ids = Tensor(np.arange(int(s[-1]), dtype=np.int64) - np.repeat(s[:-1], np.diff(s)))
            n = int(np.diff(s).max()) if s.size > 1 else 0
    else:
        return rt.with_flat_values(getattr(M, "reduce_" + kind)(fv, axis=ax - rt.ragged_rank, keepdims=keepdims))
    if kind == "mean":
        x = fv if fv.dtype.is_floating else M.cast(fv, np.float64)
        tot = _segments("sum", x, ids, n, rt, ax)
        cnt = _segments("sum", _ones(ids, x.dtype), ids, n, rt, ax)
        if len(x.shape) > 1:
            from ..ops import array_ops as A
            cnt = A.reshape(cnt, [-1] + [1] * (len(x.shape) - 1))
        r = tot / cnt
    elif kind in ("any", "all"):
        v = M.cast(fv, np.int32)
        r = M.cast(_segments("max" if kind == "any" else "min", v, ids, n, rt, ax), bool)
        if kind == "all":   # an empty row: all() is True (the segment min's fill is int32's max)
            r = M.logical_or(r, M.equal(_segments("sum", _ones(ids, np.int32), ids, n, rt, ax), 0))
    else:
        r = _segments(kind, fv, ids, n, rt, ax)
    if keepdims:
        from ..ops import array_ops as A
        r = A.expand_dims(r, ax)
    return r


def _ones(ids, dtype):
    from ..ops import array_ops as A
    return A.ones_like(ids, dtype=dtype)


def _gather(params, ids):
    from ..ops import array_ops as A
    return A.gather(params, ids)


def _segments(kind, data, ids, n, rt, ax):
    """unsorted_segment_<kind> of data by ids into n segments. With n unknown (traced: rows of an
    input_signature's None, or the longest row) the segment_reduce primitive counts them from the
    ids (its "bincount" rule: max id + 1); for rows, one extra value with id nrows makes the
    trailing empty rows count too, and is cut off after."""
    from ..ops import segment_ops as S
    if n is not None:
        return getattr(S, "unsorted_segment_" + kind)(data, ids, n)
    from ..core.primitive import bind
    from ..core.primitives import segment as SG
    from ..ops import array_ops as A
    op = "unsorted_segment_" + kind
    if ax == 1:
        pad = A.zeros_like(data[:1])
        data = A.concat([data, pad], 0)
        ids = A.concat([ids, A.reshape(rt.nrows(), [1])], 0)
    r = bind(SG.segment_reduce_p, data, ids, kind=kind, num_segments=None, ids_rule="bincount", op=op)
    return r[:-1] if ax == 1 else r


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
    if rt.nrows_static() is None:
        raise ValueError("map_fn: the number of rows of a RaggedTensor must be known inside tapeflow.function (it "
                         "is the loop's trip count); give the input_signature that dim")
    outs = [fn(rt[i]) for i in range(rt.nrows_static())]
    if outs and isinstance(outs[0], RaggedTensor):
        return stack(outs)
    if any(len(o.shape) and o.shape[0] is None for o in outs):   # traced rows: their lengths are ops
        from ..core import dtypes as _dt
        lens = A.stack([A.shape(o, out_type=_dt.int64)[0] for o in outs])
        return RaggedTensor.from_row_lengths(A.concat(outs, 0), lens, validate=False)
    lens = [int(o.shape[0]) if len(o.shape) else None for o in outs]
    if outs and None in lens:
        return A.stack(outs)
    if isinstance(fn_output_signature, type(None)) or _ragged_spec(fn_output_signature) or len(set(lens)) > 1:
        return RaggedTensor.from_row_lengths(A.concat(outs, 0) if outs else rt.values[:0], lens)
    return A.stack(outs)


def _ragged_spec(s):
    return type(s).__name__ == "RaggedTensorSpec"


def shape(rt, out_type=None):
    """tf.shape of a RaggedTensor: TF's DynamicRaggedShape (int32 like tf.shape), traced too (its
    row partitions then hold the traced splits)."""
    from ..core import dtypes as _dt
    from .dynamic_ragged_shape import DynamicRaggedShape
    return DynamicRaggedShape.from_tensor(rt, dtype=out_type or _dt.int32)


def gather(params, indices, axis=0):
    if axis != 0:
        raise NotImplementedError("gather of a RaggedTensor: axis 0 only")
    idx = _np(convert_to_tensor(indices)).reshape(-1)
    return _concat_ragged_rows([params[int(i):int(i) + 1] for i in idx]) if idx.size else params[0:0]
