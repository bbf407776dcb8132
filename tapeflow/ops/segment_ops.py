"""tf.unique, tf.unique_with_counts, tf.math.segment_* / unsorted_segment_*,
tf.math.bincount and tf.math.confusion_matrix: compositions of the ``unique`` and
``segment_reduce`` primitives (core/primitives/segment.py) with gather and
elementwise ops. Outputs whose length depends on the values (unique's values, the
sorted segment ops, bincount) have an unknown leading dim while tracing, as
boolean_mask's."""
from __future__ import annotations

import collections

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape
from ..core.primitive import bind, aval_of
from ..core.primitives import segment as SG
from ..core.primitives import assert_op as AS
from ..core.state import STATE
from ..core.tensor import Tensor, constant, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from . import array_ops as A
from . import math_ops as M

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def unique(x, out_idx=np.int32, name=None):
    """The distinct values of a 1-D tensor in order of first occurrence, and each
    element's index into them. ``y`` is a gather of x, so it has a gradient
    (TF registers none for Unique)."""
    x = _tensor(x)
    first, idx, _ = bind(SG.unique_p, x, out_idx=A._index_dtype("unique", "out_idx", out_idx))
    return Unique(_values_at(x, first), idx)


def unique_with_counts(x, out_idx=np.int32, name=None):
    x = _tensor(x)
    first, idx, count = bind(SG.unique_p, x, out_idx=A._index_dtype("unique_with_counts", "out_idx", out_idx))
    return UniqueWithCounts(_values_at(x, first), idx, count)


def _values_at(x, first):
    # an empty x has no values to gather (and a traced gather of unknown length from a
    # length-0 axis is rejected by its shape rule): it is its own unique values
    return x if aval_of(x).shape[0] == 0 else A.gather(x, first)


# -- segment reductions ---------------------------------------------------------------------------

def _num_segments(op, num_segments):
    n = num_segments
    if isinstance(n, Tensor):
        if n._v is None:
            raise TypeError(f"{op}: num_segments must be static inside tapeflow.function (a Python int or a "
                            "constant); the output's length depends on it")
        n = n.numpy()
    a = np.asarray(n)
    if a.shape != () or a.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{op}: num_segments must be a scalar int32 or int64, got "
                                       f"{a.dtype.name} {fmt_shape(a.shape)}")
    return int(a)


def _seg(op, kind, data, segment_ids, num_segments, rule):
    return bind(SG.segment_reduce_p, _tensor(data), _tensor(segment_ids), kind=kind, num_segments=num_segments,
                ids_rule=rule, op=op)


def _sorted(op, kind):
    def f(data, segment_ids, name=None):
        return _seg(op, kind, data, segment_ids, None, "sorted")
    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"tf.math.{op}: the {kind} of data's rows per segment; segment_ids is a sorted vector of "
                 "ids >= 0 with one id per row; the output has last id + 1 rows (an empty segment is 0).")
    return f


segment_sum = _sorted("segment_sum", "sum")
segment_max = _sorted("segment_max", "max")
segment_min = _sorted("segment_min", "min")
segment_prod = _sorted("segment_prod", "prod")


def segment_mean(data, segment_ids, name=None):
    """The mean of data's rows per segment (sorted ids); an empty segment is 0. Integer
    data gives TF's truncated integer mean."""
    data, ids = _tensor(data), _tensor(segment_ids)
    total = _seg("segment_mean", "sum", data, ids, None, "sorted")
    count = _counts("segment_mean", data, ids, None, "sorted")
    if aval_of(data).dtype.kind == "f":
        return M.divide(total, M.maximum(count, M.ones_like_(count)))
    # TF's integer kernel divides in C: toward zero; floordiv rounds down
    c = M.maximum(count, M.ones_like_(count))
    if aval_of(data).dtype.kind == "u":   # (no sign to truncate toward: abs refuses unsigned dtypes)
        return M.floordiv(total, c)
    q = M.floordiv(M.abs(total), c)
    return M.where(M.less(total, M.zeros_like_(total)), M.negative(q), q)


def _counts(op, data, ids, num_segments, rule):
    """Rows per segment, in data's dtype, shaped to broadcast against the segment output."""
    ones = M.ones_like_(M.cast(ids, aval_of(data).dtype))
    n = _seg(op, "sum", ones, ids, num_segments, rule)
    for _ in range(len(aval_of(data).shape) - len(aval_of(ids).shape)):
        n = A.expand_dims(n, -1)
    return n


def _unsorted(op, kind):
    def f(data, segment_ids, num_segments, name=None):
        return _seg(op, kind, data, segment_ids, _num_segments(op, num_segments), "unsorted")
    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"tf.math.{op}: the {kind} of data's rows per segment id in [0, num_segments); a negative id "
                 "drops its row, a larger one raises" +
                 (("; an empty segment is the dtype's " + ("lowest" if kind == "max" else "highest") + " value")
                  if kind in ("max", "min") else "") + ".")
    return f


unsorted_segment_sum = _unsorted("unsorted_segment_sum", "sum")
unsorted_segment_max = _unsorted("unsorted_segment_max", "max")
unsorted_segment_min = _unsorted("unsorted_segment_min", "min")
unsorted_segment_prod = _unsorted("unsorted_segment_prod", "prod")


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """sum / max(count, 1) per segment, as TF composes it (integer data: a float64 mean)."""
    op = "unsorted_segment_mean"
    data, ids, n = _tensor(data), _tensor(segment_ids), _num_segments(op, num_segments)
    count = _counts(op, data, ids, n, "unsorted")
    return M.divide(_seg(op, "sum", data, ids, n, "unsorted"), M.maximum(count, M.ones_like_(count)))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """sum / sqrt(max(count, 1)) per segment, as TF composes it (float data only)."""
    op = "unsorted_segment_sqrt_n"
    data, ids, n = _tensor(data), _tensor(segment_ids), _num_segments(op, num_segments)
    if aval_of(data).dtype.kind != "f":
        raise InvalidArgumentTypeError(f"{op}: data must be floating point (the sqrt of the counts), got "
                                       f"{aval_of(data).dtype.name}; cast it: tapeflow.cast(data, tapeflow.float32)")
    count = _counts(op, data, ids, n, "unsorted")
    return M.divide(_seg(op, "sum", data, ids, n, "unsorted"), M.sqrt(M.maximum(count, M.ones_like_(count))))


# -- bincount, confusion_matrix -------------------------------------------------------------------

def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32, name=None, axis=None,
             binary_output=False):
    """Counts (or summed weights) of each value of arr in [0, length): length is
    max(arr) + 1, at least minlength, at most maxlength (larger values are dropped).
    axis=None or 0 counts the flattened arr; axis=-1 counts each row of a 2-D arr."""
    op = "bincount"
    arr = _tensor(arr)
    ad = aval_of(arr).dtype
    if ad.kind not in "iu":   # TF casts non-integer values to int32
        arr = M.cast(arr, np.int32)
    elif ad not in (np.dtype(np.int32), np.dtype(np.int64)):
        arr = M.cast(arr, np.int32)
    if axis not in (None, 0, -1):
        raise InvalidArgumentError(f"{op}: axis must be None, 0 or -1, got {axis}")
    if weights is not None:
        weights = _tensor(weights)
        ws, xs = tuple(aval_of(weights).shape), tuple(aval_of(arr).shape)
        if len(ws) != len(xs) or any(w is not None and a is not None and w != a for w, a in zip(ws, xs)):
            raise InvalidArgumentError(f"{op}: weights must have arr's shape {fmt_shape(xs)}, got {fmt_shape(ws)}")
        if ws != xs:
            # an input_signature's None on one side: the shapes are compared when the function runs
            same = M.reduce_all(M.equal(A.shape(weights), A.shape(arr)))
            bind(AS.assert_p, same, A.shape(arr), A.shape(weights), summarize=len(xs),
                 template=(f"{op}: weights must have arr's shape ", None, ", got ", None))
        if binary_output:
            raise InvalidArgumentError(f"{op}: binary_output and weights cannot both be given")
        values = weights
    else:
        values = M.ones_like_(M.cast(arr, _dt.np_dtype(dtype)))
    minlength = None if minlength is None else max(int(minlength), 0)   # TF ignores a negative minlength
    maxlength = None if maxlength is None else max(int(maxlength), 0)
    params = dict(kind="sum", num_segments=None, ids_rule="bincount", op=op, minlength=minlength or 0,
                  maxlength=maxlength)
    nd = len(aval_of(arr).shape)
    if axis == -1 and nd > 2:
        raise InvalidArgumentError(f"{op}: axis=-1 counts each row of a 2-D arr; got rank {nd} "
                                   f"(shape {fmt_shape(aval_of(arr).shape)})")
    if axis == -1 and nd == 2:
        out = bind(SG.segment_reduce_p, values, arr, **params, rows=True)
    else:
        out = bind(SG.segment_reduce_p, A.reshape(values, (-1,)), A.reshape(arr, (-1,)), **params)
    if binary_output:
        out = M.cast(M.greater(out, M.zeros_like_(out)), aval_of(out).dtype)
    return out


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=np.int32, name=None):
    """(num_classes, num_classes) counts (or summed weights) of (label, prediction)
    pairs. num_classes None: max(labels, predictions) + 1, known only from the values,
    so inside tapeflow.function it must be given."""
    op = "confusion_matrix"
    d = _dt.np_dtype(dtype)
    labels, predictions = _tensor(labels), _tensor(predictions)
    for what, t in (("labels", labels), ("predictions", predictions)):
        if len(aval_of(t).shape) != 1:
            raise InvalidArgumentError(f"{op}: {what} must be 1-D, got shape {fmt_shape(aval_of(t).shape)}")
    ls, ps = aval_of(labels).shape[0], aval_of(predictions).shape[0]
    if ls is not None and ps is not None and ls != ps:
        raise InvalidArgumentError(f"{op}: labels (shape {fmt_shape((ls,))}) and predictions (shape "
                                   f"{fmt_shape((ps,))}) must have the same length")
    labels, predictions = M.cast(labels, np.int64), M.cast(predictions, np.int64)
    traced_size = num_classes is None and (labels._v is None or predictions._v is None)
    if traced_size:
        # the matrix's size is max(labels, predictions) + 1, a value: a (n, n) tensor of a shape known when the
        # function runs (zeros of run-time dims), the pairs added into it (TF's scatter_nd)
        n = M.add(M.maximum(M.reduce_max(A.concat([labels, predictions, constant(np.array([-1], np.int64))], 0)),
                            np.int64(-1)), np.int64(1))
        num_classes = None
    elif num_classes is None:
        num_classes = int(max(labels._v.max(initial=-1), predictions._v.max(initial=-1))) + 1
    else:
        num_classes = _num_segments(op, num_classes)
    if weights is None:
        values = M.ones_like_(M.cast(labels, d))
    else:
        values = M.cast(_tensor(weights), d)
        if aval_of(values).shape != aval_of(labels).shape:
            raise InvalidArgumentError(f"{op}: weights must have the labels' shape "
                                       f"{fmt_shape(aval_of(labels).shape)}, got {fmt_shape(aval_of(values).shape)}")
    # TF's checks (tf.debugging asserts in its composition): at run time, in every mode
    for what, t in (("labels", labels), ("predictions", predictions)):
        bind(AS.assert_p, M.reduce_all(M.greater_equal(t, np.int64(0))),
             template=(f"{op}: `{what}` contains negative values",), summarize=3)
        if traced_size:
            continue
        bind(AS.assert_p, M.reduce_all(M.less(t, np.int64(num_classes))),
             template=(f"{op}: `{what}` out of bound: every entry must be < num_classes = {num_classes}",),
             summarize=3)
    if traced_size:
        return A.tensor_scatter_nd_add(A.zeros([n, n], d), A.stack([labels, predictions], 1), values)
    flat = M.add(M.multiply(labels, np.int64(num_classes)), predictions)
    out = bind(SG.segment_reduce_p, values, flat, kind="sum", num_segments=num_classes * num_classes,
               ids_rule="unsorted", op=op)
    return A.reshape(out, (num_classes, num_classes))


# -- histograms ------------------------------------------------------------------------------------

def _value_range(op, values, value_range):
    # (a Python range converts to the values' dtype as TF converts it: [-1.0, 1.0] for int values is a
    # TypeError; np.asarray truncated it silently, or raised Python's OverflowError for uint8)
    vr = value_range if isinstance(value_range, Tensor) else convert_to_tensor(value_range, aval_of(values).dtype)
    if aval_of(vr).dtype != aval_of(values).dtype:
        raise InvalidArgumentTypeError(f"{op}: value_range ({aval_of(vr).dtype.name}) must have the values' dtype "
                                       f"({aval_of(values).dtype.name})")
    if aval_of(vr).shape != (2,):
        raise InvalidArgumentError(f"{op}: value_range should be a vector of 2 elements, got shape "
                                   f"{fmt_shape(aval_of(vr).shape)}")
    lo, hi = A.gather(vr, 0), A.gather(vr, 1)
    bind(AS.assert_p, M.less(lo, hi), vr, summarize=2,
         template=(f"{op}: value_range should satisfy value_range[0] < value_range[1], but got ", None))
    return lo, hi


def _nbins(op, nbins):
    n = nbins.numpy() if isinstance(nbins, Tensor) and nbins._v is not None else nbins
    if isinstance(n, Tensor):
        raise TypeError(f"{op}: nbins must be static inside tapeflow.function (the output's length)")
    n = int(n)
    if n <= 0:
        raise InvalidArgumentError(f"{op}: nbins should be a positive number, but got {n}")
    return n


def histogram_fixed_width(values, value_range, nbins=100, dtype=np.int32, name=None):
    """Counts of values in nbins equal bins over [value_range[0], value_range[1]]; values
    below the range count in the first bin, above it in the last (TF's rule). NaN raises."""
    op = "histogram_fixed_width"
    d = A._index_dtype(op, "dtype", dtype)
    values = _tensor(values)
    if aval_of(values).dtype.kind not in "fiu":
        raise InvalidArgumentTypeError(f"{op}: values must be numbers, got {aval_of(values).dtype.name}")
    lo, hi = _value_range(op, values, value_range)
    n = _nbins(op, nbins)
    if aval_of(values).dtype.kind == "f":
        bind(AS.assert_p, M.logical_not(M.reduce_any(M.is_nan(values))), summarize=3,
             template=(f"{op}: histogram values must not contain NaN",))
    # In float64: (max(v, lo) - lo) / ((hi - lo) / nbins), capped at nbins - 1, truncated. Of the
    # orders of these operations in float32/float64 tried against TF 2.21 on 3171 values on and
    # next to bin edges, this one gave TF's bin for all but 3 (values whose quotient is exactly an
    # integer, where TF's bin is one lower); float32 arithmetic missed 460-640 of them
    lo64, hi64 = M.cast(lo, np.float64), M.cast(hi, np.float64)
    step = M.divide(M.subtract(hi64, lo64), np.float64(n))
    pos = M.divide(M.subtract(M.cast(M.maximum(values, lo), np.float64), lo64), step)
    bins = M.cast(M.minimum(pos, np.float64(n - 1)), np.int32)
    flat = A.reshape(bins, (-1,))
    return bind(SG.segment_reduce_p, M.ones_like_(M.cast(flat, d)), flat, kind="sum", num_segments=n,
                ids_rule="unsorted", op=op)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=np.int32, name=None):
    """Each value's bin index in [0, nbins) (TF's Python formula: floor(nbins * (v - lo) /
    (hi - lo)) in the values' dtype, clipped to the ends)."""
    op = "histogram_fixed_width_bins"
    values = _tensor(values)
    if aval_of(values).dtype.kind != "f":
        raise InvalidArgumentTypeError(f"{op}: values must be floating point, got {aval_of(values).dtype.name}")
    # (a Python range converts to the values' dtype as TF converts it: [-1.0, 1.0] for int values is a
    # TypeError; np.asarray truncated it silently, or raised Python's OverflowError for uint8)
    vr = value_range if isinstance(value_range, Tensor) else convert_to_tensor(value_range, aval_of(values).dtype)
    lo, hi = A.gather(vr, 0), A.gather(vr, 1)
    n = _nbins(op, nbins)
    nf = np.asarray(n, aval_of(values).dtype)
    scaled = M.divide(M.subtract(values, lo), M.subtract(hi, lo))
    idx = M.floor(M.multiply(nf, scaled))
    return M.cast(M.clip_by_value(idx, np.asarray(0, nf.dtype), nf - 1), _dt.np_dtype(dtype))
