"""Shape primitives: reshape, transpose, broadcast_to, concat, pad.

squeeze/expand_dims/stack/tile are compositions of these (tapeflow.ops).
"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive, bind, aval_of
from . import _rules
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from . import elementwise as E
from . import indexing as I
from ...util import gemm_kernels as _gemm_kernels


def reshape(x, shape):
    return bind(reshape_p, x, shape=tuple(shape))


def transpose(x, perm):
    return bind(transpose_p, x, perm=tuple(perm))


def broadcast_to(x, shape):
    shape = tuple(shape)
    if aval_of(x).shape == shape:
        return x
    return bind(broadcast_to_p, x, shape=shape)


def broadcast_like(g, x):
    """``g`` broadcast to ``x``'s shape (a reduction's or einsum's gradient). In a
    shape-generic trace ``x`` has unknown dims, which a static ``shape`` param cannot
    name, so the size comes from ``x`` itself at run time: ``select(x == x, g, g)``
    (both branches are ``g``, so NaNs in ``x`` do not change the result)."""
    xs = aval_of(x).shape
    if None not in xs:
        return broadcast_to(g, xs)
    return bind(E.select_p, bind(E.equal_p, x, x), g, g)


def _reshape_abstract(x, shape):
    if sum(1 for d in shape if d == -1) > 1:
        raise InvalidArgumentError(f"reshape: at most one -1 in the new shape, got {fmt_shape(shape)}")
    known = [d for d in shape if d != -1]
    if any(d is None or d < -1 for d in shape):
        raise InvalidArgumentError(f"reshape: bad target shape {fmt_shape(shape)} (use -1 for one unknown dim)")
    n_in = None if any(d is None for d in x.shape) else int(np.prod(x.shape, dtype=np.int64))
    n_known = int(np.prod(known, dtype=np.int64))
    if -1 in shape:
        if n_in is None:
            out = tuple(None if d == -1 else d for d in shape)
        else:
            if n_known == 0 or n_in % n_known:
                raise InvalidArgumentError(f"reshape: cannot reshape {fmt_shape(x.shape)} ({n_in} elements) to "
                                 f"{fmt_shape(shape)}")
            out = tuple(n_in // n_known if d == -1 else d for d in shape)
    else:
        if n_in is not None and n_in != n_known:
            raise InvalidArgumentError(f"reshape: cannot reshape {fmt_shape(x.shape)} ({n_in} elements) to "
                             f"{fmt_shape(shape)} ({n_known} elements)")
        out = shape
    return Aval(out, x.dtype)


def _reshape_vjp(g, out, x, shape):
    return (reshape(g, tuple(-1 if d is None else d for d in aval_of(x).shape)),)


def _reshape_kernel(x, shape):
    # the array's method: np.reshape reaches it through a Python wrapper (~1 us a call)
    return x.reshape(shape) if x.__class__ is np.ndarray else np.reshape(x, shape)


# -- the run-time shape --------------------------------------------------------------------------
# A primitive because a dimension an input_signature leaves None is known only when the function
# runs: tf.shape(x) of such a tensor is this op's result (a known shape is a constant, folded while
# tracing). Its consumers that need numbers at trace time (sizes, slice bounds) still refuse a
# run-time value; arithmetic on it (tf.cast(tf.shape(x)[0], tf.float32)) is ordinary tensor math.

def _shape_abstract(x, out_type):
    return Aval((len(x.shape),), np.dtype(out_type))


shape_p = Primitive("shape", lambda x, out_type: np.asarray(x.shape, out_type), _shape_abstract,
                    differentiable=False, aliases=False, doc="x's shape as a 1-D int tensor, at run time", strings=True)


reshape_p = Primitive("reshape", _reshape_kernel, _reshape_abstract, _reshape_vjp,
                      vjp_np=lambda need, g, out, x, shape: (g.reshape(x.shape),), strings=True)


def _transpose_abstract(x, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise InvalidArgumentError(f"transpose: perm {perm} is not a permutation of the {x.ndim} axes of "
                                   f"a tensor of shape {fmt_shape(x.shape)}; give each of 0..{x.ndim - 1} once")
    return Aval(tuple(x.shape[i] for i in perm), x.dtype)


def _transpose_python(ctx, e, ins, outs):
    """The python backend's line: the array's own view inline (``x.T``, 0.2 us), where
    the kernel called through its ``functools.partial`` cost ~1.6 us (TD3's update has
    21 transposes). The same view as ``np.transpose``. A 0-d value, which may be a NumPy
    scalar there, keeps the kernel (None)."""
    perm = tuple(int(i) for i in e.params["perm"])
    if not perm:
        return None
    return [f"{outs[0]} = {ins[0]}." + ("T" if perm == (1, 0) else f"transpose({perm!r})")]


transpose_p = Primitive("transpose", lambda x, perm: np.transpose(x, perm), _transpose_abstract,
                        lambda g, out, x, perm: (transpose(g, tuple(int(i) for i in np.argsort(perm))),),
                        vjp_np=lambda need, g, out, x, perm: (g.transpose(np.argsort(perm)),),
                        lowerings={"python": _transpose_python}, strings=True)


def _broadcast_to_abstract(x, shape):
    try:
        out = _rules.broadcast_shapes("broadcast_to", x.shape, shape)
    except ValueError:
        raise InvalidArgumentError(f"broadcast_to: cannot broadcast {fmt_shape(x.shape)} to {fmt_shape(shape)}") from None
    if len(x.shape) > len(shape) or out != tuple(shape) and None not in out:
        raise InvalidArgumentError(f"broadcast_to: cannot broadcast {fmt_shape(x.shape)} to {fmt_shape(shape)}")
    _rules.check_size("broadcast_to", shape, x.dtype)
    return Aval(shape, x.dtype)


def _broadcast_to_kernel(x, shape):
    # np.broadcast_to makes a stride-0 view of any size; a huge one would only fail
    # (or loop for minutes) in the op that reads it: check the size here, as TF allocates
    _rules.check_size("broadcast_to", shape, np.asarray(x).dtype)
    return np.broadcast_to(x, shape)


broadcast_to_p = Primitive("broadcast_to", _broadcast_to_kernel, _broadcast_to_abstract,
                           lambda g, out, x, shape: (E.unbroadcast(g, aval_of(x).shape),),
                           vjp_np=lambda need, g, out, x, shape: (E.unbroadcast_np(g, x.shape),), strings=True)


def _concat_abstract(*xs, axis):
    r = xs[0].ndim
    if r == 0:
        raise InvalidArgumentError("concat: cannot concatenate scalars; use stack")
    if not 0 <= axis < r:
        raise InvalidArgumentError(f"concat: axis {axis} is out of range for rank {r}")
    d = _rules.result_dtype("concat", xs)
    total = 0
    for x in xs:
        if x.ndim != r or any(a != b and a is not None and b is not None
                              for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != axis):
            raise InvalidArgumentError("concat: shapes " + ", ".join(fmt_shape(x.shape) for x in xs)
                             + f" differ outside axis {axis}")
        total = None if total is None or x.shape[axis] is None else total + x.shape[axis]
    shape = list(xs[0].shape)
    if None in shape:   # an unknown dimension of one operand is the known size of another
        shape = [next((x.shape[i] for x in xs if x.shape[i] is not None), None) for i in range(r)]
    shape[axis] = total
    return Aval(shape, d)


def _concat_vjp(g, out, *xs, axis):
    grads, start = [], 0
    for x in xs:
        n = aval_of(x).shape[axis]
        if n is None:
            # an input_signature's None along the axis: the piece's length and so the later offsets are
            # known when the function runs (a slice with traced bounds masks the axis)
            n = bind(shape_p, x, out_type=np.dtype(np.int64))[axis]
        key = (slice(None),) * axis + (slice(start, start + n),)
        grads.append(None if E._is_const(x) else I.getitem(g, key))
        start += n
    return tuple(grads)


def _concat_vjp_np(need, g, out, *xs, axis):
    grads, start = [], 0
    for x, want in zip(xs, need):
        n = np.shape(x)[axis]  # (a constant operand may be a list)
        grads.append(g[(slice(None),) * axis + (slice(start, start + n),)] if want else None)
        start += n
    return tuple(grads)


def _concat_out(out, *xs, axis):
    """concat into a planned buffer (compiled code). Two C-ordered float matrices joined
    along their columns (TD3's critic input, concat(state, action), three times an
    update) take a native loop (``gemm_kernels``' ``columns``); eager calls and other
    shapes keep NumPy, which needs no kernel compiled. A copy either way: same values."""
    if len(xs) == 2 and axis == 1 and out.ndim == 2:
        a, b = xs
        # (float32/float64 only: numba has no float16 or bfloat16, whose concat failed to compile)
        if a.dtype == b.dtype == out.dtype and out.dtype in _rules.NATIVE_FLOATS and a.ndim == 2 == b.ndim \
                and a.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous:
            ks = _gemm_kernels.kernels()
            if ks is not None:
                ks[3](a, b, out)
                return out
    return np.concatenate(xs, axis=axis, out=out)


concat_p = Primitive("concat", lambda *xs, axis: np.concatenate(xs, axis=axis), _concat_abstract, _concat_vjp,
                     aliases=False, vjp_np=_concat_vjp_np, impl_out=_concat_out, numpy_operands="adopt", strings=True)


# -- range: the one op whose result's length is a value -------------------------------------------------
# A primitive because no composition of static-shape ops makes an array whose length is only known when the
# graph runs (boolean_mask needs an array at least as long). Eagerly, and traced with bounds known while
# tracing, tf.range is a constant; this is for bounds a trace computes (tf.range(n) of a tensor argument,
# sequence_mask without maxlen), whose result has an unknown length, like boolean_mask's.

def _range_kernel(start, limit, delta, *, dtype):
    start, limit, delta = (np.asarray(v)[()] for v in (start, limit, delta))
    if delta == 0:
        raise InvalidArgumentError(f"range: delta must not be 0 (start {start}, limit {limit})")
    # a start past the limit is an empty range, as eagerly (see ops/array_ops.range)
    return np.arange(start, limit, delta, dtype=dtype)


def _range_abstract(start, limit, delta, *, dtype):
    for what, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v.shape != ():
            raise InvalidArgumentError(f"range: {what} must be a scalar, got shape {fmt_shape(v.shape)}")
        if v.dtype.kind not in "iuf":
            raise InvalidArgumentTypeError(f"range: {what} must be a number, got {v.dtype.name}")
    return Aval((None,), dtype)


range_p = Primitive("range", _range_kernel, _range_abstract, differentiable=False, aliases=False,
                    doc="start, start + delta, ... up to limit (excluded): a 1-D result of a length known at run time")


def check_paddings(paddings, ndim):
    if len(paddings) != ndim:  # np.pad would broadcast one row to every axis
        raise InvalidArgumentError(f"pad: paddings has {len(paddings)} rows for a tensor of rank {ndim}; "
                                   "give one (before, after) pair per axis")
    if any(a < 0 or b < 0 for a, b in paddings):  # (np.pad: "index can't contain negative values")
        raise InvalidArgumentError(f"pad: paddings {[list(p) for p in paddings]} has a negative entry; "
                                   "paddings must be >= 0 (to crop, slice the tensor)")


def _pad_abstract(x, paddings, constant_values):
    check_paddings(paddings, x.ndim)
    return Aval(tuple(None if d is None else d + a + b for d, (a, b) in zip(x.shape, paddings)), x.dtype)


def _pad_vjp(g, out, x, paddings, constant_values):
    key = tuple(slice(a, (-b if b else None)) for a, b in paddings)
    return (I.getitem(g, key),)


def _pad_kernel(x, paddings, constant_values):
    check_paddings(paddings, np.ndim(x))
    if x.dtype.kind == "O":  # a string tensor: TF pads with b'' (np.pad would store np.bytes_ objects)
        out = np.full(tuple(d + a + b for d, (a, b) in zip(x.shape, paddings)),
                      b"" if constant_values == 0 else constant_values, object)
        out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, paddings))] = x
        return out
    return np.pad(x, paddings, constant_values=constant_values)


pad_p = Primitive("pad", _pad_kernel,
                  _pad_abstract, _pad_vjp, aliases=False,
                  vjp_np=lambda need, g, out, x, paddings, constant_values: (
                      g[tuple(slice(a, (-b if b else None)) for a, b in paddings)],), strings=True)
