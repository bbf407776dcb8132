"""Random primitives. The generator (a ``numpy.random.Generator``) is a
parameter, so compiled code draws fresh numbers from it on every call: a
random op is never folded into a constant. Non-differentiable.

The shape is a static param; a dimension known only when the function runs (tf.shape of a dimension an
input_signature leaves None, a size computed from the inputs) is None in it, and its value is an operand:
one integer scalar per None, in order (wave 25). The kernel fills the shape in and draws as for a static
shape, so a run-time shape (2, 3, 4) draws the numbers of the static (2, 3, 4): TF's Philox stream depends
on the element count only. (Operands of the same records, not a primitive of their own: the kernels, the
generator param and every backend's handling of an effect "random" equation stay one.)"""
from __future__ import annotations

import numpy as np

from ..aval import Aval, fmt_shape
from ..primitive import Primitive
from ...errors import InvalidArgumentError, InvalidArgumentTypeError


def _check_shape(name, shape, dims=()):
    """The result's aval: ``shape`` with None where a dimension is a run-time operand (``dims``, the
    operands' avals, one integer scalar per None)."""
    if len(dims) != sum(d is None for d in shape):
        raise ValueError(f"{name}: shape {shape} has {sum(d is None for d in shape)} run-time dimensions "
                         f"(None) but {len(dims)} operands give them")
    for d in dims:
        if d.shape != () or d.dtype.kind not in "iu":
            raise InvalidArgumentTypeError(f"{name}: a run-time dimension must be an integer scalar, got a "
                                           f"{d.dtype.name} tensor of shape {fmt_shape(d.shape)}")
    bad = [d for d in shape if d is not None and d < 0]
    if bad:   # (TF 2.21's class and text; an OpError is a ValueError too)
        raise InvalidArgumentError(f"{name}: Dimension {bad[0]} must be >= 0 (shape {list(shape)})")
    return shape


def _filled(name, shape, dims):
    """The shape with its run-time dimensions' values put in (the kernel's shape)."""
    if not dims:
        return shape
    it = iter(dims)
    out = tuple(int(next(it)) if d is None else d for d in shape)
    bad = [d for d in out if d < 0]
    if bad:   # (TF 2.21's text, when the function runs)
        raise InvalidArgumentError(f"{name}: Dimension {bad[0]} must be >= 0 (the run-time shape {list(out)})")
    return out


def _normal_abstract(*dims, shape, dtype, mean, stddev, gen):
    return Aval(_check_shape("random.normal", shape, dims), dtype)


def _normal_kernel(*dims, shape, dtype, mean, stddev, gen):
    shape = _filled("random.normal", shape, dims)
    if np.dtype(dtype) in (np.float32, np.float64):
        r = gen.standard_normal(shape, dtype=dtype)
    else:   # (float16, bfloat16: float32 normals rounded, as TF's NormalDistribution<half> makes them)
        r = gen.standard_normal(shape, dtype=np.float32).astype(dtype)
    if stddev != 1.0:
        r *= stddev
    if mean != 0.0:
        r += mean
    return r


random_normal_p = Primitive("random_normal", _normal_kernel, _normal_abstract, differentiable=False,
                            effect="random", aliases=False)


def _uniform_kernel(*dims, shape, dtype, minval, maxval, gen):
    shape = _filled("random.uniform", shape, dims)
    dtype = np.dtype(dtype)
    if minval is None:
        # integers over the dtype's whole range (Generator.uniform_full_int; the raw words
        # TF's RandomShuffle consumes): a Philox stream's bits reinterpreted, as TF
        if hasattr(gen, "full_int"):
            return gen.full_int(shape, dtype)
        info = np.iinfo(dtype)
        return gen.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind in "iu":
        return gen.integers(minval, maxval, size=shape, dtype=dtype)
    if dtype in (np.float32, np.float64):
        r = gen.random(shape, dtype=dtype)
    elif hasattr(gen, "truncated_normal"):   # a Philox stream: TF's 16-bit conversion of each word
        r = gen.random(shape, dtype=dtype)
    else:
        r = gen.random(shape).astype(dtype)
    if (minval, maxval) != (0.0, 1.0):
        r *= (maxval - minval)
        r += minval
    return r


def _uniform_abstract(*dims, shape, dtype, minval, maxval, gen):
    return Aval(_check_shape("random.uniform", shape, dims), dtype)


random_uniform_p = Primitive("random_uniform", _uniform_kernel, _uniform_abstract, differentiable=False,
                             effect="random", aliases=False)


def _truncated_normal_kernel(*dims, shape, dtype, mean, stddev, gen):
    """A normal redrawn while outside 2 standard deviations (TF's truncated normal). A Philox
    stream (tf.random.Generator, the stateless ops) draws TF's numbers with TF's rejection layout;
    a NumPy generator redraws the rejected entries until none is left."""
    shape = _filled("random.truncated_normal", shape, dims)
    dt = np.dtype(dtype)
    wide = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)
    if hasattr(gen, "truncated_normal"):
        r = gen.truncated_normal(shape, dtype=wide)
    else:
        r = gen.standard_normal(shape, dtype=wide)
        bad = np.abs(r) >= 2.0
        while bad.any():
            r[bad] = gen.standard_normal(int(bad.sum()), dtype=wide)
            bad = np.abs(r) >= 2.0
    r = r.astype(dt, copy=False)
    if stddev != 1.0:
        r *= stddev
    if mean != 0.0:
        r += mean
    return r


# A primitive of its own (not normal draws and where()s): a fixed number of redraws leaves a point
# mass at the cut (the stateless form, whose redraws repeat the first draw, put 4.6% of its values
# at exactly +-2), and TF's numbers need its per-group rejection layout.
random_truncated_normal_p = Primitive("random_truncated_normal", _truncated_normal_kernel, _normal_abstract,
                                      differentiable=False, effect="random", aliases=False)
