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
                         "value after the condition) unless every entry of the condition holds")

__all__ = ["assert_p"]
