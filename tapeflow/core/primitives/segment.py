"""Grouping by value: ``unique`` and ``segment_reduce``, the two primitives behind
tf.unique / tf.unique_with_counts, tf.math.segment_* / unsorted_segment_*, and
tf.math.bincount (compositions in tapeflow.ops.segment_ops).

Both are primitives, not compositions, because their result shapes depend on the
values (the number of distinct values; the largest segment id) and because a
segment max/min/prod must combine duplicates by max/min/product, which no other
primitive does (getitem_add only sums). Their traced outputs have an unknown
(None) leading dim, as boolean_mask's.

``unique`` returns integers only -- the first position of each distinct value,
every element's group, and the group sizes -- so it is not differentiable; the
values themselves are a gather at those positions (so tf.unique's ``y`` has a
gradient, where TF registers none).

``segment_reduce(data, ids)``: ``kind`` sum/max/min/prod over the rows of ``data``
whose id (``ids`` indexes data's leading dims) is each segment. ``ids_rule`` says
which ids are valid, as the TF op that binds it does:
* "sorted" (tf.math.segment_*): a vector, non-decreasing, non-negative; the
  segment count is the last id + 1; an empty segment is 0 (max/min too).
* "unsorted" (unsorted_segment_*): any shape prefix of data; a negative id
  drops its row; an id >= num_segments raises; an empty max/min segment is
  the dtype's lowest/highest value (TF's fill).
* "bincount": negative ids raise; the count is max(max id + 1, minlength),
  cut to maxlength, and ids >= maxlength are dropped.
The vjp (TF's rules, written in ops so that gradients differentiate again): sum
gathers the cotangent; max/min route it to the rows equal to their segment's
result, shared equally among ties; prod divides the product by each row, and
at zeros uses the product of the segment's other rows (0 when the segment has
two zeros).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..aval import Aval, fmt_shape, shapes_compatible
from ..primitive import Primitive, bind
from .indexing import _in_range
from ...errors import InvalidArgumentError, InvalidArgumentTypeError

_INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# -- unique -----------------------------------------------------------------------------------

def _unique_kernel(x, *, out_idx):
    """(first position of each distinct value, in order of first occurrence; each
    element's group; each group's size). As TF: every NaN is its own value
    (NaN != NaN), and 0.0 and -0.0 are one value (the first one met is kept)."""
    x = np.asarray(x)
    n = x.shape[0]
    if n == 0:
        e = np.zeros(0, out_idx)
        return np.zeros(0, np.int64), e, e
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    group = np.cumsum(new) - 1                    # group of each sorted element, by value
    first = order[new]                            # stable sort: the first position of each group
    by_first = np.argsort(first, kind="stable")   # TF numbers groups by first occurrence
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(by_first.size)
    idx = np.empty(n, out_idx)
    idx[order] = rank[group]
    counts = np.bincount(idx, minlength=first.size).astype(out_idx)
    return first[by_first].astype(np.int64), idx, counts


def _unique_abstract(x, *, out_idx):
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"unique: expects a 1-D vector, got shape {fmt_shape(x.shape)}; "
                                   "flatten it first: tapeflow.reshape(x, [-1])")
    d = np.dtype(out_idx)
    return (Aval((None,), np.int64), Aval(x.shape, d), Aval((None,), d))


unique_p = Primitive("unique", _unique_kernel, _unique_abstract, differentiable=False, multiple_results=True,
                     aliases=False,
                     doc="(first positions of the distinct values (int64), each element's group (out_idx), "
                         "group sizes (out_idx)) of a 1-D tensor, groups in order of first occurrence", strings=True)


# -- segment_reduce ------------------------------------------------------------------------------

_UFUNC = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}


def _fill(kind, dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    info = _dt._finfo(dtype) if _dt.is_float(dtype) else np.iinfo(dtype)
    return info.min if kind == "max" else info.max   # TF: lowest / highest, not -inf / inf


def _check_ids(ids, data_shape, n, ids_rule, op):
    """The data-dependent checks of the ids (the shapes were checked by the rule)."""
    if ids_rule == "sorted":
        if ids.size and ids[0] < 0:
            raise InvalidArgumentError(f"{op}: segment id {int(ids[0])} is negative; segment ids must be "
                                       "sorted and >= 0 (for ids in any order, or negative ids to drop, use "
                                       "the unsorted_segment_* ops)")
        if ids.size > 1 and (ids[1:] < ids[:-1]).any():
            i = int(np.argmax(ids[1:] < ids[:-1])) + 1
            raise InvalidArgumentError(f"{op}: segment ids are not increasing (segment_ids[{i}] = {int(ids[i])} "
                                       f"after {int(ids[i - 1])}); sort them, or use the unsorted_segment_* ops")
    elif ids_rule == "unsorted":
        if ids.size and ids.max() >= n:
            flat = ids.reshape(-1)
            i = int(np.argmax(flat >= n))
            raise InvalidArgumentError(f"{op}: segment_ids[{i}] = {int(flat[i])} is out of range [0, {n}) "
                                       f"(num_segments = {n}); negative ids drop their rows, others must be "
                                       "< num_segments")
    elif ids.size and ids.min() < 0:   # bincount
        flat = ids.reshape(-1)
        i = int(np.argmax(flat < 0))
        raise InvalidArgumentError(f"{op}: input arr must be non-negative, got {int(flat[i])} at flat position "
                                   f"{i}")


def _count(ids, *, num_segments, ids_rule, minlength, maxlength):
    if num_segments is not None:
        return int(num_segments)
    n = int(ids.max()) + 1 if ids.size else 0
    if ids_rule == "bincount":
        n = max(n, int(minlength or 0))
        if maxlength is not None:
            n = min(n, int(maxlength))
    return n


def _segment_kernel(data, ids, *, kind, num_segments, ids_rule, op, minlength=0, maxlength=None, rows=False):
    data, ids = np.asarray(data), np.asarray(ids)
    if rows:
        return _row_counts(data, ids, op=op, minlength=minlength, maxlength=maxlength)
    if data.shape[:ids.ndim] != ids.shape:   # (the rule checked the dims it knew)
        raise InvalidArgumentError(f"{op}: data.shape = {list(data.shape)} does not start with segment_ids.shape "
                                   f"= {list(ids.shape)}")
    n = _count(ids, num_segments=num_segments, ids_rule=ids_rule, minlength=minlength, maxlength=maxlength)
    tail = data.shape[ids.ndim:]
    flat = ids.reshape(-1)
    rows = data.reshape((flat.size,) + tail)
    # the common case, every id in [0, n): one pass (ids read as unsigned, a negative one is above
    # any n), no checks or masks after it; it took the kernel's cost over a bare add.at from +6.6
    # to +3.4 us at 1k float32 rows, from +33 to +10.5 us at 100k (300 interleaved pairs, medians)
    if ids_rule == "sorted" or (flat.size and not _in_range(flat, n)):
        _check_ids(ids, data.shape, n, ids_rule, op)
        keep = (flat >= 0) & (flat < n)
        if not keep.all():
            flat, rows = flat[keep], rows[keep]
    out = np.full((n,) + tail, _fill(kind, data.dtype), data.dtype)
    # (NumPy 2's ufunc.at is a C loop: np.bincount(weights=) for a 1-D float sum measured the same,
    # 3.0 vs 2.9 us at 1k rows and 146 vs 139 us at 100k, and sums in float64 where TF sums in
    # the data's dtype: not taken)
    _UFUNC[kind].at(out, flat, rows)
    if ids_rule == "sorted" and kind in ("max", "min") and n:
        empty = np.bincount(flat, minlength=n) == 0
        out[empty] = 0   # TF's sorted segment ops give 0 for an empty segment (the unsorted ones, the fill)
    return out


def _row_counts(data, ids, *, op, minlength, maxlength):
    """bincount(axis=-1): one count row per row of the 2-D ids, all of one length (the whole
    array's max + 1, at least minlength, at most maxlength)."""
    n = _count(ids, num_segments=None, ids_rule="bincount", minlength=minlength, maxlength=maxlength)
    _check_ids(ids, data.shape, n, "bincount", op)
    keep = ids < n
    flat = (ids + np.arange(ids.shape[0], dtype=ids.dtype)[:, None] * ids.dtype.type(n))[keep]
    out = np.zeros(ids.shape[0] * n, data.dtype)
    np.add.at(out, flat, data[keep])
    return out.reshape(ids.shape[0], n)


def _segment_abstract(data, ids, *, kind, num_segments, ids_rule, op, minlength=0, maxlength=None, rows=False):
    if rows and (kind != "sum" or ids_rule != "bincount" or len(ids.shape) != 2 or data.shape != ids.shape):
        raise InvalidArgumentError(f"{op}: per-row counts take 2-D values and weights of one shape, got "
                                   f"{fmt_shape(ids.shape)} and {fmt_shape(data.shape)}")
    allowed = _INT_DTYPES + ((np.dtype(np.int16),) if ids_rule == "unsorted" else ())
    if ids.dtype not in allowed:
        raise InvalidArgumentTypeError(f"{op}: segment ids must be {' or '.join(d.name for d in allowed)}, got "
                                       f"{ids.dtype.name} {fmt_shape(ids.shape)}; cast them: "
                                       "tapeflow.cast(ids, tapeflow.int32)")
    if _dt.kind(data.dtype) not in "fiu":
        raise InvalidArgumentTypeError(f"{op}: data must be numbers (float or int), got {data.dtype.name} "
                                       f"{fmt_shape(data.shape)}")
    if ids_rule == "sorted" and len(ids.shape) != 1:
        raise InvalidArgumentError(f"{op}: segment_ids should be a vector, got shape {fmt_shape(ids.shape)}")
    if len(ids.shape) > len(data.shape) or not shapes_compatible(ids.shape, data.shape[:len(ids.shape)]):
        raise InvalidArgumentError(f"{op}: data.shape = {fmt_shape(data.shape)} does not start with "
                                   f"segment_ids.shape = {fmt_shape(ids.shape)}; each row of data needs one id")
    if num_segments is not None and num_segments < 0:
        raise InvalidArgumentError(f"{op}: num_segments = {num_segments} must not be negative")
    if rows:
        return Aval((ids.shape[0], None), data.dtype)
    return Aval((num_segments,) + tuple(data.shape[len(ids.shape):]), data.dtype)


def _kept(ids, params):
    """Which ids select a segment (the others drop their rows), as a bool tensor."""
    from ...ops import math_ops as M
    keep = M.greater_equal(ids, 0)
    if params["ids_rule"] == "bincount" and params.get("maxlength") is not None:
        keep = M.logical_and(keep, M.less(ids, params["maxlength"]))
    return keep


def gather_segments(values, ids, params):
    """values[ids] along the segment axis, 0 for a dropped id: the transpose of the
    segment sum. A zero row goes in front and dropped ids read it, so no segment count
    is needed (it is unknown while tracing the sorted ops)."""
    from ...ops import array_ops as A, math_ops as M
    zero_row = M.reduce_sum(M.zeros_like_(values), axis=0, keepdims=True)   # (1, *tail), any tail
    padded = A.concat([zero_row, values], 0)
    pos = M.where(_kept(ids, params), M.add(M.cast(ids, np.int64), np.int64(1)), np.int64(0))
    return A.gather(padded, pos)


def _segment_vjp(ct, out, data, ids, **params):
    from ...ops import math_ops as M
    if params.get("rows"):
        # (the row offsets need the count length, which a trace does not know; TF registers no
        # gradient for bincount at all)
        raise NotImplementedError(f"{params['op']}: per-row counts (axis=-1) have no gradient w.r.t. the weights; "
                                  "count each row with tapeflow.math.bincount(row, weights=w, minlength=n) "
                                  "for a gradient")
    kind = params["kind"]
    if kind == "sum":
        return gather_segments(ct, ids, params), None
    if kind in ("max", "min"):
        # TF's _UnsortedSegmentMinOrMaxGrad: the rows equal to their segment's result
        # share its cotangent equally
        hit = M.logical_and(M.equal(data, gather_segments(out, ids, params)), _expand(_kept(ids, params), data))
        hits = M.cast(hit, data.dtype)
        n_hit = bind(segment_reduce_p, hits, ids, **dict(params, kind="sum"))
        share = M.divide(ct, M.maximum(n_hit, M.ones_like_(n_hit)))
        return M.where(hit, gather_segments(share, ids, params), M.zeros_like_(data)), None
    # prod (TF's _UnsortedSegmentProdGrad): d out / d x_i = prod / x_i where x_i != 0; at a
    # zero, the product of the segment's other rows (nonzero when it is the only zero); a
    # segment with two zeros passes no gradient
    zero = M.equal(data, M.zeros_like_(data))
    n_zero = bind(segment_reduce_p, M.cast(zero, data.dtype), ids, **dict(params, kind="sum"))
    ct = M.where(M.greater(n_zero, M.ones_like_(n_zero)), M.zeros_like_(ct), ct)
    nonzero = M.where(zero, M.ones_like_(data), data)
    prod_nonzero = bind(segment_reduce_p, nonzero, ids, **params)
    partial = M.where(zero, gather_segments(prod_nonzero, ids, params),
                      M.divide(gather_segments(out, ids, params), nonzero))
    return M.multiply(gather_segments(ct, ids, params), partial), None


def _expand(mask, data):
    """An ids-shaped mask broadcast against data's rows (trailing 1 dims)."""
    from ...ops import array_ops as A
    from ..primitive import aval_of
    extra = len(aval_of(data).shape) - len(aval_of(mask).shape)
    for _ in range(extra):
        mask = A.expand_dims(mask, -1)
    return mask


segment_reduce_p = Primitive(
    "segment_reduce", _segment_kernel, _segment_abstract, _segment_vjp, aliases=False,
    doc="kind (sum/max/min/prod) over the rows of data per segment id; num_segments (None: from the ids), "
        "ids_rule ('sorted', 'unsorted', 'bincount': which ids are valid, which are dropped), op (the TF name "
        "for errors), minlength/maxlength (bincount)")

__all__ = ["unique_p", "segment_reduce_p", "gather_segments"]
