"""Helpers shared by the primitive modules: shape/dtype rules for families of
primitives, and the small functions their gradient rules share (``unbroadcast``,
``shape_of``, ``is_const``). This module imports no primitive module, so every
primitive module can import it without a cycle."""
from __future__ import annotations

import os
import sys

import numpy as np

from ..aval import Aval, fmt_shape
from ..dtypes import kind as _kind
from ...errors import InvalidArgumentError, InvalidArgumentTypeError, ResourceExhaustedError
from ..primitive import REGISTRY, aval_of, bind


def shape_of(x):
    return aval_of(x).shape


def is_const(x):
    """Python scalars and NumPy values never receive gradients."""
    return not hasattr(x, "aval")


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape`` (the transpose of broadcasting)."""
    gshape = shape_of(g)
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1)
    # reduce_sum and reshape are looked up when a gradient runs (all primitives are
    # registered by then): importing their modules here would make the cycle
    # elementwise -> reductions -> elementwise
    if axes:
        g = bind(REGISTRY["reduce_sum"], g, axis=axes, keepdims=True)
    if lead or shape_of(g) != tuple(shape):
        g = bind(REGISTRY["reshape"], g, shape=tuple(-1 if d is None else d for d in shape))
    return g


def unbroadcast_np(g, shape):
    """``unbroadcast`` on arrays (array-level vjp rules): what the reduce_sum
    kernel computes for a float cotangent (np.add.reduce) and the reshape view."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead))
    if 1 in shape:  # (most broadcast operands -- biases, scalars -- have no 1 dims: no generator to run)
        axes += tuple([lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1])
    if axes:
        if g.dtype.kind != "f":
            g = REGISTRY["reduce_sum"].impl(g, axis=axes, keepdims=True)
        else:
            s = _column_sums(g) if axes == _ROWS and g.ndim == 2 and g.size >= COLUMN_SUMS_MIN else None
            g = _add_reduce(g, axis=axes, keepdims=True) if s is None else s
    if lead or g.shape != shape:
        g = g.reshape(shape)
    return g


def native_loops(cache, build):
    """``build(numba)``'s native loops, compiled once and kept in ``cache`` (a list: empty
    until then); None while numba is not imported, and asked again next time: an eager
    op never pays numba's import (an optimizer's fused loops import it in a training
    process). Callers fall back to NumPy's forms, so only speed depends on it, never
    values."""
    if cache:
        return cache[0]
    numba = sys.modules.get("numba")
    if numba is None:
        return None
    cache.append(build(numba))
    return cache[0]


_add_reduce = np.add.reduce
_ROWS = (0,)
#: the float dtypes the rules' native loops are compiled for (elsewhere: NumPy's forms)
NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: below this many elements NumPy's reduce costs about the loop's call. NumPy's reduce
#: pays per row (its inner loop is one row): an output layer's (200, 4) bias gradient
#: took 3.9 us against the loop's 1.7, (32, 8) 1.5 against 1.1, (16, 4) 1.2 against 1.0;
#: from 64 elements the loop was never the slower (2-core EPYC, float32 and float64)
COLUMN_SUMS_MIN = 64
#: the column-sums loop once compiled (a list: empty until then)
_COLUMN_SUMS = []


def _column_sums(g):
    """The column sums of a 2-D float array (a bias's gradient: the cotangent summed over
    the batch) by a native loop, NumPy's reduce's bits: for a C-ordered (m, n >= 2) array
    NumPy adds the rows one after another into a result that starts at +0.0 (a column
    of -0.0 sums to +0.0), and the loop does the same (tested against np.add.reduce). The
    loop reads g once, along its rows: 256x256 float32 ~4 us against ~11-14 for NumPy's
    reduce. None (NumPy's reduce) for one column (NumPy sums a contiguous column
    pairwise), another dtype or layout, or while numba is not imported (a gradient never
    pays its import; only speed depends on it, never values)."""
    if g.__class__ is not np.ndarray or g.shape[1] < 2 or g.dtype not in NATIVE_FLOATS or not g.flags.c_contiguous:
        return None
    column_sums = native_loops(_COLUMN_SUMS, _column_sums_loop)
    if column_sums is None:
        return None
    out = np.empty((1, g.shape[1]), g.dtype)
    column_sums(g, out[0])
    return out


def _column_sums_loop(numba):
    @numba.njit(cache=True, nogil=True)
    def column_sums(g, out):
        for j in range(out.shape[0]):
            out[j] = 0.0
        for i in range(g.shape[0]):
            row = g[i]
            for j in range(out.shape[0]):
                out[j] += row[j]

    return column_sums


def broadcast_np(g, shape):
    """``g`` (same rank, dims 1 or equal; or 0-d) as a read-only stride-0 view of
    ``shape``: the view np.broadcast_to returns (same memory, same strides, so every
    later kernel computes the same bits), built directly: np.broadcast_to constructs
    an nditer and costs several times more on the small arrays of an eager step."""
    if not g.ndim:
        # a 0-d value (a loss's mean, often a NumPy scalar) over its bytes: immutable, so
        # the view is read-only without setting its flag (0.6 us instead of 4-6)
        return np.ndarray(shape, g.dtype, g.tobytes(), 0, (0,) * len(shape))
    if g.__class__ is not np.ndarray or not g.flags.c_contiguous or not g.size or 0 in shape:
        return np.broadcast_to(g, shape)
    v = np.ndarray(shape, g.dtype, g, 0, tuple([0 if d == 1 and n != 1 else s
                                                for d, n, s in zip(g.shape, shape, g.strides)]))
    v.flags.writeable = False
    return v


def broadcast_shapes(name, *shapes):
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise InvalidArgumentError(f"{name}: shapes " + " and ".join(fmt_shape(s) for s in shapes)
                             + " are not broadcastable (NumPy rules: trailing dims must be equal or 1)")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _name(d):
    return "string" if d.kind == "O" else d.name   # (tf.string is NumPy's object dtype)


def result_dtype(name, avals):
    """Rule 1-3 of tapeflow.core.dtypes: strong dtypes must agree; weak adapt."""
    strong = [a for a in avals if not a.weak]
    if strong:
        d = strong[0].dtype
        for a in strong[1:]:
            if a.dtype != d:
                raise InvalidArgumentTypeError(
                    f"{name}: dtypes differ: {_name(d)} {fmt_shape(strong[0].shape)} vs {_name(a.dtype)} "
                    f"{fmt_shape(a.shape)}. tapeflow does not convert silently; "
                    + ("convert the strings first: tf.strings.to_number / tf.strings.as_string"
                       if "O" in (d.kind, a.dtype.kind) else f"cast one side, e.g. tapeflow.cast(y, tapeflow.{d.name})"))
        if d.kind == "O" and len(strong) != len(avals):  # "a" + 1: TF converts 1 to a string tensor and fails
            raise InvalidArgumentTypeError(f"{name}: a Python number cannot combine with a string tensor; "
                                           "convert it first: tf.strings.as_string(x)")
        for a in avals:
            if a.weak and a.dtype.kind == "f" and d.kind in "iub":
                raise InvalidArgumentTypeError(f"{name}: a Python float cannot combine with a {d.name} tensor without "
                                f"changing its dtype; cast the tensor first: tapeflow.cast(x, tapeflow.float32)")
            if a.weak and a.dtype.kind in "iu" and d.kind == "b":
                # TF converts the number to bool and refuses ("Cannot convert 2 to EagerTensor of dtype
                # bool"); eagerly 2 * mask became mask (2 taken as True), compiled NumPy's int64 [2, 0]
                raise InvalidArgumentTypeError(f"{name}: a Python int cannot combine with a bool tensor (TF does "
                                               "not convert numbers to bool); cast the tensor first: "
                                               "tapeflow.cast(mask, tapeflow.int32)")
        return d
    kinds = {a.dtype.kind for a in avals}
    if "f" in kinds:
        return np.dtype(np.float32)
    if "i" in kinds:
        return np.dtype(np.int32)
    return np.dtype(np.bool_)


def elementwise(name, out_dtype=None, require=None):
    """Abstract rule for an n-ary elementwise op with broadcasting.

    out_dtype: fixed output dtype (bool for comparisons) or None (= the inputs').
    require: a string of NumPy dtype kinds the inputs must have ('f' for exp...).
    """
    def rule(*avals, **params):
        d = result_dtype(name, avals)
        if require is not None and _kind(d) not in require:
            what = {"f": "floating", "b": "bool", "iu": "integer", "fiu": "numeric", "fi": "float or integer", "iub": "integer or bool"}.get(require, require)
            raise InvalidArgumentTypeError(f"{name}: expects {what} tensors, got {d.name}; "
                            + ("cast first: tapeflow.cast(x, tapeflow.float32)" if "f" in require else "cast first"))
        if len(avals) == 1:
            shape = avals[0].shape
        else:
            shape = broadcast_shapes(name, *[a.shape for a in avals])
            if shape != avals[0].shape:  # broadcasting can make a result bigger than any input
                check_size(name, shape, d)
        return Aval(shape, out_dtype if out_dtype is not None else d)
    return rule


def norm_axis(name, axis, ndim):
    """Normalise an int/tuple/None axis to a sorted tuple of non-negative ints."""
    # every reduction call normalises its axis: a valid None or int axis is looked up
    # per rank (~1.5 us of checks and sorting for reduce_mean(x, -1)); an error is never
    # cached. Other axes (tuples, lists, NumPy ints) are normalised each call.
    c = axis.__class__
    if c is int or axis is None:
        key = (axis, ndim)  # (a bool axis, an error, is not an int: True == 1 would find 1's entry)
        out = _AXES.get(key)
        if out is None:
            out = _norm_axis(name, axis, ndim)
            if len(_AXES) > 4096:
                _AXES.clear()
            _AXES[key] = out
        return out
    return _norm_axis(name, axis, ndim)


#: (None or an int axis, rank) -> the normalised axes
_AXES: dict = {}


def _norm_axis(name, axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise InvalidArgumentTypeError(f"{name}: axis must be an int or a list of ints, got {axis!r}")
        a = int(a)
        # a rank-0 tensor has no axis: TF raises for axis 0 too (Invalid reduction dimension,
        # Expected dimension in the range [0, 0)); accepting it let the kernels fail on their
        # own (NumPy's AxisError, an IndexError in a traced reduce_mean, an AssertionError in
        # sort) and a traced argsort return shape (1,)
        if ndim == 0:
            raise InvalidArgumentError(f"{name}: axis {a} is out of range for a tensor of rank 0 (a scalar "
                                       "has no axes); reshape it to rank 1 first, e.g. tapeflow.reshape(x, [1])")
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(f"{name}: axis {a} is out of range for a tensor of rank {ndim} "
                                       f"(valid: {-ndim} to {ndim - 1}); axes are not taken modulo the rank")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise InvalidArgumentError(f"{name}: repeated axis in {axis}; give each axis once")
    return tuple(sorted(out))


def _memory_bytes():
    """Physical memory: a result larger than this can never be allocated."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume a large machine
        return 1 << 40


MAX_RESULT_BYTES = _memory_bytes()


def check_size(name, shape, dtype):
    """ResourceExhaustedError, before allocating or looping, for a result that
    would not fit in this machine's memory (TF fails such an allocation at once;
    NumPy would return a stride-0 view, or loop for minutes over a broadcast)."""
    n = 1
    for d in shape:
        if d is None:
            return
        if d < 0:  # NumPy says only "negative dimensions are not allowed", naming no op
            raise InvalidArgumentError(f"{name}: the result shape {fmt_shape(shape)} has a negative dimension; "
                                       "every dimension must be >= 0")
        n *= int(d)
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > MAX_RESULT_BYTES:
        raise ResourceExhaustedError(
            f"{name}: the result of shape {fmt_shape(shape)} and dtype {np.dtype(dtype).name} needs "
            f"{nbytes / 2**30:.4g} GiB, more than this machine's {MAX_RESULT_BYTES / 2**30:.4g} GiB of memory; "
            "check the shape arguments")
