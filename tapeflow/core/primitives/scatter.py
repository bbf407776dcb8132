"""``tensor_scatter_max`` / ``tensor_scatter_min``: ``tensor`` with each indexed entry
(or slice) replaced by the max/min of itself and every update aimed at it.

A primitive rather than a composition: duplicates must combine by max, which no
existing primitive does (getitem_add sums), and a composition through
"x - stop_gradient(x)" to shape the gradient turns -inf entries (the usual
starting value of a running max) into NaN. The kernel is NumPy's unbuffered
``maximum.at``; the gradient is TF's: the cotangent of each output entry is split
equally among the tensor entry and the updates that equal it (ties share).
"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape, shapes_compatible
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from ..primitive import Primitive
from . import _rules


def _check_indices(op, idx, shape):
    k = idx.shape[-1]
    flat = idx.reshape(-1, k)
    bad = np.nonzero(((flat < 0) | (flat >= np.asarray(shape[:k]))).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(f"{op}: indices[{i}] = {flat[i].tolist()} does not index into shape "
                                   f"{list(shape)} (TF does not wrap negative indices either)")


def _kernel(ufunc):
    def impl(tensor, indices, updates, *, op):
        t, idx = np.asarray(tensor), np.asarray(indices)
        _check_indices(op, idx, t.shape)
        out = np.array(t, copy=True)
        ufunc.at(out, tuple(np.moveaxis(idx, -1, 0)), np.asarray(updates, t.dtype))
        return out
    return impl


def _abstract(tensor, indices, updates, *, op):
    if indices.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{op}: indices must be integers, got {indices.dtype.name} "
                                       f"{fmt_shape(indices.shape)}")
    if _rules._kind(tensor.dtype) not in "fiu" or updates.dtype != tensor.dtype:
        raise InvalidArgumentTypeError(
            f"{op}: tensor and updates need one numeric dtype, got {tensor.dtype.name} and {updates.dtype.name}; "
            f"cast the updates: tapeflow.cast(updates, tapeflow.{tensor.dtype.name})")
    k = indices.shape[-1] if indices.shape else None
    if k is None or k > len(tensor.shape):
        raise InvalidArgumentError(f"{op}: the last dim of indices {fmt_shape(indices.shape)} (the index depth) "
                                   f"must be known and at most the rank of tensor {fmt_shape(tensor.shape)}")
    check_updates(op, indices.shape, updates.shape, tensor.shape)
    return Aval(tensor.shape, tensor.dtype)


def check_updates(op, indices_shape, updates_shape, shape):
    """TF's scatter rule, which does not broadcast: updates have the indices' leading dims, then
    the dims of ``shape`` the index depth leaves (indices.shape[:-1] + shape[depth:]). An unknown
    depth is not checked here (the callers' own rules name it)."""
    k = indices_shape[-1] if indices_shape else None
    if k is None:
        return
    want = tuple(indices_shape[:-1]) + tuple(shape[k:])
    if not shapes_compatible(tuple(updates_shape), want):
        raise InvalidArgumentError(f"{op}: updates have shape {fmt_shape(updates_shape)}; indices "
                                   f"{fmt_shape(indices_shape)} into shape {fmt_shape(shape)} need updates of shape "
                                   f"{fmt_shape(want)} (indices.shape[:-1] + shape[{k}:])")


def _vjp(ct, out, tensor, indices, updates, *, op):
    # TF's gradient: each output entry's cotangent goes to the inputs equal to it, shared
    # equally among ties (tensor entry and updates). Written in ops, so it differentiates again.
    from ...ops import array_ops as A, math_ops as M
    dtype = out.dtype
    at_updates = A.gather_nd(out, indices)
    hit_t = M.cast(M.equal(tensor, out), dtype)
    hit_u = M.cast(M.equal(updates, at_updates), dtype)
    count = M.maximum(M.add(hit_t, A.scatter_nd(indices, hit_u, out.shape)), 1)  # >= 1 unless NaN
    share = M.divide(ct, count)
    return M.multiply(share, hit_t), None, M.multiply(A.gather_nd(share, indices), hit_u)


def _record(name, ufunc, what):
    return Primitive(name, _kernel(ufunc), _abstract, _vjp, aliases=False,
                     doc=f"tensor with each indexed entry/slice replaced by the {what} of itself and the "
                         "updates at that index (op: the TF name for errors)")


tensor_scatter_max_p = _record("tensor_scatter_max", np.maximum, "max")
tensor_scatter_min_p = _record("tensor_scatter_min", np.minimum, "min")
