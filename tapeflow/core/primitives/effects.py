"""Primitives with side effects, which traced graphs keep in program order:
variable writes (``read_variable`` lives in core/primitive.py, ``print`` in print_op.py)."""
from __future__ import annotations

import numpy as np

from ..aval import Aval
from ..primitive import Primitive


def _assign_impl(value, *, var):
    # A write replaces the variable's buffer with an owned copy, so earlier reads
    # (snapshots on a tape, outputs already returned) keep their values.
    d = var._v.dtype
    # (ndarray.copy() costs a third of np.array(..., dtype=, copy=True) on small arrays:
    # the optimizers write every slot every step)
    var._v = value.copy() if value.__class__ is np.ndarray and value.dtype is d else \
        np.array(value, dtype=d, copy=True)
    return ()


assign_variable_p = Primitive("assign_variable", _assign_impl, lambda value, var: (), differentiable=False,
                              effect="write", multiple_results=True,
                              doc="var <- value (ordered after earlier reads/writes of var)", strings=True)
