"""Indexing: one primitive for ``x[key]`` (basic and advanced) and its
transpose, a scatter-add. gather, gather_nd, boolean_mask, scatter_nd and
take_along_axis are compositions (tapeflow.ops.array_ops).

A key is stored as a hashable template (Python 3.11 slices are unhashable):
``('s', start, stop, step)``, ``('i', k)``, ``('n',)`` (None), ``('e',)``
(Ellipsis) or ``('a', j)`` = the j-th index tensor passed as an argument.

``bounds``: None for Python/NumPy indexing (``x[-1]`` is the last element), or
the name of the TF op (gather, gather_nd, scatter_nd...) whose rule applies:
every entry of an index tensor must lie in [0, dim), checked by the kernel since
it depends on the data. TF raises there; wrapping a -1 is a silent wrong value.
"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive, bind, aval_of
from ...errors import InvalidArgumentError, InvalidArgumentIndexError, InvalidArgumentTypeError

_SENTINEL = 1 << 20  # stands in for unknown (None) dims when computing shapes


def encode_key(key):
    """Split a user index into (template, index tensors)."""
    if not isinstance(key, tuple):
        key = (key,)
    tpl, args = [], []
    for k in key:
        if isinstance(k, slice):
            tpl.append(("s", _static(k.start), _static(k.stop), _static(k.step)))
        elif k is None:
            tpl.append(("n",))
        elif k is Ellipsis:
            tpl.append(("e",))
        elif isinstance(k, (bool, np.bool_)):
            raise TypeError("getitem: a Python bool is not a valid index; use a boolean tensor mask")
        elif isinstance(k, (int, np.integer)):
            tpl.append(("i", int(k)))
        else:
            if isinstance(k, (list, tuple)):
                k = np.asarray(k)
                if k.dtype == np.float64 and k.size == 0:
                    k = k.astype(np.int64)
            tpl.append(("a", len(args)))
            args.append(k)
    return tuple(tpl), args


def known_int(v):
    """The value of ``v`` as a Python int when it is an eager (concrete) scalar integer tensor,
    else None: TF takes ``x[:tf.shape(x)[0] - 1]``, ``one_hot(x, tf.shape(x)[1])``, a tensor
    index in a sliced assignment. A Tracer's value is unknown (None)."""
    a = getattr(v, "_v", None)
    if isinstance(a, (np.ndarray, np.integer)) and a.shape == () and a.dtype.kind in "iu":
        return int(a)
    return None


def _static(v):
    if v is None or isinstance(v, (int, np.integer)):
        return None if v is None else int(v)
    n = known_int(v)   # an eager scalar int tensor (x[:tf.shape(x)[0] - 1]): its value, as TF
    if n is not None:
        return n
    raise TypeError(f"getitem: slice bounds must be integers, got {type(v).__name__}")


def decode_key(tpl, idx):
    out = []
    for k in tpl:
        t = k[0]
        if t == "s":
            out.append(slice(k[1], k[2], k[3]))
        elif t == "i":
            out.append(k[1])
        elif t == "a":
            out.append(idx[k[1]])
        elif t == "n":
            out.append(None)
        else:
            out.append(Ellipsis)
    return tuple(out)


def check_bounds(op, shape, key, idx):
    """Raise if an integer index tensor in ``key`` has an entry outside [0, dim)."""
    dim = 0
    for k in key:
        t = k[0]
        if t == "e":
            consumed = sum(1 for k in key if k[0] in "si") + sum(
                np.ndim(idx[k[1]]) if np.asarray(idx[k[1]]).dtype.kind == "b" else 1 for k in key if k[0] == "a")
            dim += len(shape) - consumed
        elif t in "si":
            dim += 1
        elif t == "a":
            a = np.asarray(idx[k[1]])
            if a.dtype.kind == "b":
                dim += a.ndim
                continue
            n = shape[dim]
            if a.size and not _in_range(a, n):
                bad = (a < 0) | (a >= n)
                pos = tuple(int(i) for i in np.argwhere(bad)[0])
                raise InvalidArgumentIndexError(
                    f"{op}: index {a[pos]} (at position {list(pos)} of an index tensor of shape "
                    f"{fmt_shape(a.shape)}) is out of bounds: not in [0, {n}) for axis {dim} of a tensor of shape "
                    f"{fmt_shape(shape)}; indices must be in range (negative ones do not count from the end)")
            dim += 1


_UNSIGNED = {np.dtype(t): np.dtype("u%d" % np.dtype(t).itemsize) for t in (np.int8, np.int16, np.int32, np.int64)}
_max_reduce = np.maximum.reduce


def _in_range(a, n):
    """Whether every entry of the integer array ``a`` lies in [0, n). Read as
    unsigned, a negative entry is above any n: one pass over the indices, no mask
    arrays (the common case, every index valid, is the one that must be cheap)."""
    u = _UNSIGNED.get(a.dtype)
    if u is not None:
        return _max_reduce(a.view(u), axis=None) < n
    return a.min() >= 0 and a.max() < n  # (unsigned, or a non-native byte order)


def _getitem_kernel(x, *idx, key, bounds=None):
    if bounds is not None:
        # (an array's own shape: np.shape's Python dispatch costs ~0.4 us, every gather)
        check_bounds(bounds, x.shape if x.__class__ is np.ndarray else np.shape(x), key, idx)
    return x[decode_key(key, idx)]


def _dummy(shape, dtype, sentinel=_SENTINEL):
    if dtype.kind == "O":  # a string tensor: only the result's shape is wanted (an object 0 indexes to an int)
        dtype = np.bool_
    return np.broadcast_to(np.zeros((), dtype), tuple(sentinel if d is None else d for d in shape))


class _TooBig(Exception):
    """The sentinel dummies' result would be allocated (an advanced index over several unknown dims)."""


def _getitem_abstract(x, *idx, key, bounds=None):
    try:
        return _getitem_shape(x, idx, key, bounds, _SENTINEL, None)
    except _TooBig:
        # several unknown dims beside an advanced index: NumPy allocates the result, and (2^20)^k elements
        # cannot be. Two small sentinels instead, larger than every static bound in the key (an int index
        # past a sentinel would raise here): a result dim that differs between them depends on an unknown dim
        bound = max([abs(v) for k in key if k[0] in "si" for v in k[1:] if isinstance(v, (int, np.integer))],
                    default=0)
        try:
            first = _getitem_shape(x, idx, key, bounds, bound + 3, "raw")
            return _getitem_shape(x, idx, key, bounds, bound + 4, first)
        except _TooBig:
            raise InvalidArgumentError(f"{bounds or 'getitem'}: cannot work out the result's shape of an index "
                                       f"{_show(key, idx)} into a tensor of shape {fmt_shape(x.shape)} "
                                       "(too many unknown dimensions beside an advanced index)") from None


def _getitem_shape(x, idx, key, bounds, sentinel, first):
    """getitem's result aval, from indexing dummies whose unknown dims are ``sentinel`` long: a result dim
    at least half the sentinel is unknown; or, given the aval ``first`` of a run with another sentinel, a
    dim that differs from it (``first="raw"``: that run, the dummies' result shape as it is)."""
    try:
        return _getitem_shape_raw(x, idx, key, bounds, sentinel, first)
    except MemoryError:
        raise _TooBig() from None
    except InvalidArgumentError as e:
        if "too big" in str(e) or "too large" in str(e) or "maximum possible size" in str(e):
            raise _TooBig() from None
        raise


def _getitem_shape_raw(x, idx, key, bounds, sentinel, first):
    _dummy_s = lambda shape, dtype: _dummy(shape, dtype, sentinel)  # noqa: E731
    dyn = False
    dummies = []
    for a in idx:
        if a.dtype.kind == "b":
            dyn = True  # a boolean mask: the result's length depends on the data
            dummies.append(np.ones(tuple(1 if d is None else d for d in a.shape), bool))
        elif a.dtype.kind in "iu":
            dummies.append(np.zeros(tuple(1 if d is None else d for d in a.shape), a.dtype))
        else:
            raise InvalidArgumentTypeError(f"{bounds or 'getitem'}: index tensors must be integer or bool, "
                                           f"got {a.dtype.name} {fmt_shape(a.shape)}; cast them, e.g. "
                                           "tapeflow.cast(i, tapeflow.int32)")
    try:
        try:
            r = _dummy_s(x.shape, x.dtype)[decode_key(key, dummies)]
        except IndexError:
            # a mask of unknown length against an axis of unknown (or known) length: both are
            # data-dependent (a traced where's rows masked by a flag of theirs), so align the
            # mask's unknown dims with the axes it covers; an empty mask keeps the dummy small
            aligned = _masks_aligned(x, idx, key, sentinel)
            xs = _dims_from_masks(x, idx, key)
            if aligned is None and (xs == tuple(x.shape) or None in xs):
                # (the mask's sizes help only where they leave no unknown dim: masking a dummy of
                # sentinel dims would allocate it)
                raise
            aligned = aligned or {}
            r = _dummy_s(xs, x.dtype)[decode_key(key, [aligned.get(i, d) for i, d in enumerate(dummies)])]
    except IndexError as e:
        raise InvalidArgumentIndexError(f"{bounds or 'getitem'}: {e} (tensor shape {fmt_shape(x.shape)}, index {_show(key, idx)})") from None
    except ValueError as e:   # (NumPy's "slice step cannot be zero": TF's strided slice raises InvalidArgument)
        raise InvalidArgumentError(f"{bounds or 'getitem'}: {e} (tensor shape {fmt_shape(x.shape)}, index "
                                   f"{_show(key, idx)})") from None
    if first == "raw":
        return Aval(r.shape, x.dtype)
    shape = tuple(None if d >= sentinel // 2 else d for d in r.shape) if first is None else \
        tuple(None if d != f else d for d, f in zip(r.shape, first.shape))
    for axis, d in enumerate(x.shape):
        if d is None:
            # a slice of an unknown dim: x[:1] of the sentinel has 1 row, but the dim may be 0 when the
            # function runs (an empty ragged row). Each unknown dim taken as 0 in turn: the result dims
            # that change with it are unknown (an int index into it raises here: that axis goes away)
            small = tuple(0 if i == axis else dd for i, dd in enumerate(x.shape))
            try:
                r0 = _dummy_s(small, x.dtype)[decode_key(key, dummies)]
            except IndexError:
                continue
            if r0.ndim == len(shape):
                shape = tuple(None if a != b else a for a, b in zip(shape, r0.shape))
    if any(a.dtype.kind in "iu" and None in a.shape for a in idx):
        # an integer index of unknown length (unique's positions, a traced where): its dummy
        # had length 1; the dims that change with length 2 follow it, so they are unknown
        # too (a gather at n positions has n rows, not 1)
        dummies2 = [np.zeros(tuple(2 if d is None else d for d in a.shape), a.dtype) if a.dtype.kind in "iu"
                    else m for a, m in zip(idx, dummies)]
        try:
            r2 = _dummy_s(x.shape, x.dtype)[decode_key(key, dummies2)]
        except IndexError:   # (length 2 does not broadcast with the other indices: they fix it at 1)
            r2 = r
        if r2.ndim == len(shape):
            shape = tuple(None if d != d2 else d for d, d2 in zip(shape, r2.shape))
    if dyn:
        # the masked axes collapse to one axis of unknown length
        shape = _mask_shape(x, idx, key, shape)
    return Aval(shape, x.dtype)


def _masks_aligned(x, idx, key, sentinel=_SENTINEL):
    """{index position: an all-False mask dummy whose unknown dims take the dims of the axes the
    mask covers}, for boolean masks with unknown dims; None when nothing to align (or an
    ellipsis makes the axes ambiguous)."""
    out, axis = {}, 0
    for k in key:
        if k[0] == "e":
            return None
        if k[0] in ("s", "i"):
            axis += 1
        elif k[0] == "a":
            a = idx[k[1]]
            if a.dtype.kind == "b" and None in a.shape:
                dims = tuple(sentinel if xd is None else xd if d is None else d
                             for d, xd in zip(a.shape, tuple(x.shape[axis:axis + len(a.shape)])))
                out[k[1]] = np.zeros(dims, bool)
            axis += len(a.shape) if a.dtype.kind == "b" else 1
    return out or None


def _dims_from_masks(x, idx, key):
    """x's shape with each unknown dim a boolean mask of known size covers set to that size (an
    input_signature's None batch masked by a (3,) mask: the sizes must agree when it runs, as TF's
    boolean_mask requires)."""
    dims, axis = list(x.shape), 0
    for k in key:
        if k[0] == "e":
            return tuple(x.shape)
        if k[0] in ("s", "i"):
            axis += 1
        elif k[0] == "a":
            a = idx[k[1]]
            if a.dtype.kind == "b":
                for j, d in enumerate(a.shape):
                    if axis + j < len(dims) and dims[axis + j] is None and d is not None:
                        dims[axis + j] = d
            axis += len(a.shape) if a.dtype.kind == "b" else 1
    return tuple(dims)


def _mask_shape(x, idx, key, shape):
    # Find where the mask's collapsed axis lands: NumPy puts the advanced-index
    # result first unless the advanced indices are adjacent; with one mask it is
    # at the mask's position. Mark that axis unknown.
    pos = 0
    for k in key:
        if k[0] == "a":
            break
        if k[0] in ("s", "n"):
            pos += 1
    shape = list(shape)
    if pos < len(shape):
        shape[pos] = None
    return tuple(shape)


def _show(key, idx):
    parts = []
    for k in key:
        if k[0] == "s":
            parts.append(f"{'' if k[1] is None else k[1]}:{'' if k[2] is None else k[2]}"
                         + (f":{k[3]}" if k[3] is not None else ""))
        elif k[0] == "i":
            parts.append(str(k[1]))
        elif k[0] == "n":
            parts.append("None")
        elif k[0] == "e":
            parts.append("...")
        else:
            parts.append(f"<index {fmt_shape(idx[k[1]].shape)} {idx[k[1]].dtype}>")
    return "[" + ", ".join(parts) + "]"


def _getitem_vjp(g, out, x, *idx, key, bounds=None):
    # the forward pass checked the indices: the transpose need not again
    return (bind(getitem_add_p, x, g, *idx, key=key),) + (None,) * len(idx)


def _getitem_vjp_np(need, g, out, x, *idx, key, bounds=None):
    return ((_getitem_add_kernel(x, g, *idx, key=key) if need[0] else None),) + (None,) * len(idx)


getitem_p = Primitive("getitem", _getitem_kernel, _getitem_abstract, _getitem_vjp, vjp_np=_getitem_vjp_np,
                      doc="x[key]: slices, ints, None, Ellipsis, integer and boolean index tensors", strings=True)


def _getitem_add_kernel(like, g, *idx, key, bounds=None):
    # The transpose of indexing. Advanced indices may repeat (gather at the same
    # action twice): np.add.at accumulates, a plain assignment would overwrite.
    shape = like.shape if like.__class__ is np.ndarray else np.shape(like)  # (as in _getitem_kernel)
    if bounds is not None:
        check_bounds(bounds, shape, key, idx)
    z = np.zeros(shape, dtype=g.dtype if g.__class__ is np.ndarray else np.asarray(g).dtype)
    k = decode_key(key, idx)
    if idx:
        np.add.at(z, k, g)
    else:
        z[k] = g  # basic indexing never repeats an element
    return z


def _getitem_add_abstract(like, g, *idx, key, bounds=None):
    return Aval(like.shape, g.dtype)


def _getitem_add_vjp(ct, out, like, g, *idx, key, bounds=None):
    return (None, bind(getitem_p, ct, *idx, key=key)) + (None,) * len(idx)


def _getitem_add_vjp_np(need, ct, out, like, g, *idx, key, bounds=None):
    return (None, _getitem_kernel(ct, *idx, key=key) if need[1] else None) + (None,) * len(idx)


getitem_add_p = Primitive("getitem_add", _getitem_add_kernel, _getitem_add_abstract, _getitem_add_vjp, aliases=False,
                          vjp_np=_getitem_add_vjp_np, complex=True,
                          doc="zeros_like(like) with g added at [key]; repeated indices accumulate")


_PLAIN = (type(None), int)


def _traced_bound(v):
    """A slice bound that is a tensor the trace computes (not a Python int or an eager scalar)."""
    return v is not None and not isinstance(v, (int, np.integer)) and hasattr(v, "aval") and known_int(v) is None


def getitem(x, key, bounds=None):
    keys = key if key.__class__ is tuple else (key,)
    # (the common bounds, None and Python ints, cost one class test each: every eager slice passes here)
    if any(k.__class__ is slice and not (k.start.__class__ in _PLAIN and k.stop.__class__ in _PLAIN and
                                         k.step.__class__ in _PLAIN)
           and (_traced_bound(k.start) or _traced_bound(k.stop) or _traced_bound(k.step)) for k in keys):
        from ...ops.array_ops import traced_slices   # (the ops that mask an axis; ops imports this module)
        return traced_slices(x, keys)
    tpl, args = encode_key(key)
    if bounds is None:
        return bind(getitem_p, x, *args, key=tpl)
    return bind(getitem_p, x, *args, key=tpl, bounds=bounds)
