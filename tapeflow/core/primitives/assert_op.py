"""``assert``: TF's Assert op, behind tf.debugging.assert_* / check_numerics and the
value checks of ops composed from others (confusion_matrix's label checks).

A primitive because the check depends on values a traced function sees only when
it runs: effect "io" keeps it in every compiled graph, in program order, and it
raises on every call whose values fail (as TF's Assert in a tf.function), never
at trace time. It has no outputs (so no gradient: ``differentiable=False``);
``check_numerics`` returns its input beside it.

operands: the condition (bool, any shape: every entry must hold), then the values
the message shows. ``template``: strings, and None for the next value (formatted
as tf.print writes it, ``summarize`` entries at each end).
"""
from __future__ import annotations

import numpy as np

from ..primitive import Primitive
from ...errors import InvalidArgumentError
from .print_op import format_tensor


def _assert_impl(cond, *values, template, summarize):
    c = np.asarray(cond)
    if c.all():
        return ()
    vi = iter(values)
    raise InvalidArgumentError("".join(format_tensor(next(vi), summarize) if t is None else t for t in template))


def _assert_abstract(cond, *values, template, summarize):
    if cond.dtype != np.bool_:
        raise InvalidArgumentError(f"assert: the condition must be bool, got {cond.dtype.name}")
    return ()


assert_p = Primitive("assert", _assert_impl, _assert_abstract, differentiable=False, effect="io",
                     multiple_results=True,
                     doc="raise InvalidArgumentError with the message (template: strings, None = the next "
                         "value after the condition) unless every entry of the condition holds", strings=True)

__all__ = ["assert_p"]


# -- ensure_shape ----------------------------------------------------------------------------------
# TF's EnsureShape: x, checked to have a shape compatible with ``shape`` (None: any size), with the
# static shape refined to it. A pure primitive, not an assert: it has an output that later ops use
# (so it runs before them and, as TF's, is dropped with them when nothing uses it), and its check
# is of the shape, which a traced tensor with unknown dims does not have as a value.

def _compatible(have, want):
    return len(have) == len(want) and all(a is None or b is None or a == b for a, b in zip(have, want))


def _shape_text(s):
    return "[" + ",".join("?" if d is None else str(d) for d in s) + "]"


def _ensure_shape_impl(x, *, shape):
    s = np.shape(x)
    if not _compatible(s, shape):
        raise InvalidArgumentError(f"ensure_shape: shape of tensor input {_shape_text(s)} is not compatible with "
                                   f"expected shape {_shape_text(shape)}")
    return x


def _ensure_shape_abstract(x, *, shape):
    if not _compatible(x.shape, shape):
        raise InvalidArgumentError(f"ensure_shape: shape of tensor input {_shape_text(x.shape)} is not compatible "
                                   f"with expected shape {_shape_text(shape)}")
    from ..aval import Aval
    return Aval(tuple(b if a is None else a for a, b in zip(x.shape, shape)), x.dtype)


ensure_shape_p = Primitive("ensure_shape", _ensure_shape_impl, _ensure_shape_abstract,
                           lambda ct, out, x, *, shape: (ct,),
                           doc="x unchanged, after checking its shape against shape (None: any size)", strings=True)

__all__ += ["ensure_shape_p"]
