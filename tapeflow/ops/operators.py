"""Python operators on Tensor: each is one primitive call (or a composite)."""
from __future__ import annotations

from ..core.primitive import bind
from ..core.primitives import elementwise as E
from ..core.primitives import linalg as L
from ..core.state import STATE
from ..core.tensor import Tensor

_new = object.__new__
from . import array_ops, math_ops

_add, _sub, _mul, _div = E.add_p, E.sub_p, E.mul_p, E.div_p


_EMPTY: dict = {}


def _binop(p):
    """Operator methods for a binary primitive.

    The body is ``bind``'s eager interpretation inlined for the commonest case
    (two concrete Tensors of one dtype, no trace): the same kernel, the same
    tape record. Everything else (tracing, Variables, scalars, dtype errors)
    takes ``bind``. Worth it: operator dispatch is the per-op overhead that
    small-model training pays on every step (benchmarks/dispatch).
    """
    kernel = p.impl

    def op(self, other):
        if other.__class__ is Tensor and self.__class__ is Tensor and STATE.trace is None \
                and STATE.profiler is None:  # (the profiler times ops in bind's eager path)
            a = self._v
            b = other._v
            if a.dtype is b.dtype:
                try:
                    v = kernel(a, b)
                except Exception:
                    return bind(p, self, other)
                t = _new(Tensor)
                t._v = v
                tapes = STATE.tapes
                if tapes:
                    # GradientTape._record, inlined: both operands are plain Tensors
                    # (Variables never take this path), so no auto-watch case arises
                    for tape in tapes:
                        ids = tape._ids
                        if id(self) in ids or id(other) in ids:
                            tape._nodes.append((p, (self, other), _EMPTY, t))
                            ids[id(t)] = t
                return t
        return bind(p, self, other)

    def rop(self, other):
        return bind(p, other, self)
    return op, rop


Tensor.__add__, Tensor.__radd__ = _binop(E.add_p)
Tensor.__sub__, Tensor.__rsub__ = _binop(E.sub_p)
Tensor.__mul__, Tensor.__rmul__ = _binop(E.mul_p)
Tensor.__truediv__, Tensor.__rtruediv__ = _binop(E.div_p)
Tensor.__floordiv__, Tensor.__rfloordiv__ = _binop(E.floordiv_p)
Tensor.__mod__, Tensor.__rmod__ = _binop(E.mod_p)
Tensor.__pow__, Tensor.__rpow__ = _binop(E.pow_p)
Tensor.__matmul__, Tensor.__rmatmul__ = _binop(L.matmul_p)
Tensor.__lt__ = lambda self, other: bind(E.less_p, self, other)
Tensor.__le__ = lambda self, other: bind(E.less_equal_p, self, other)
Tensor.__gt__ = lambda self, other: bind(E.greater_p, self, other)
Tensor.__ge__ = lambda self, other: bind(E.greater_equal_p, self, other)
Tensor.__and__, Tensor.__rand__ = _binop(E.logical_and_p)
Tensor.__or__, Tensor.__ror__ = _binop(E.logical_or_p)
Tensor.__xor__, Tensor.__rxor__ = _binop(E.logical_xor_p)
Tensor.__invert__ = lambda self: bind(E.logical_not_p, self)
Tensor.__neg__ = lambda self: bind(E.neg_p, self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: bind(E.abs_p, self)
Tensor.__getitem__ = array_ops._index


def _eq(self, other):
    # TF 2 semantics: elementwise. Non-tensor-like objects (None, strings) compare unequal.
    if other is None or isinstance(other, (str, bytes)) or not _tensorlike(other):
        return False
    return bind(E.equal_p, self, other)


def _ne(self, other):
    if other is None or isinstance(other, (str, bytes)) or not _tensorlike(other):
        return True
    return bind(E.not_equal_p, self, other)


def _tensorlike(x):
    import numpy as np
    return isinstance(x, (Tensor, int, float, bool, np.ndarray, np.generic, list, tuple))


Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__hash__ = lambda self: id(self)


class _Ref:
    """A hashable handle for a tensor (TF's ``x.ref()``): dict keys, sets."""

    __slots__ = ("_t",)

    def __init__(self, t):
        self._t = t

    def deref(self):
        return self._t

    def __hash__(self):
        return id(self._t)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._t is self._t


Tensor.ref = lambda self: _Ref(self)
Tensor.experimental_ref = Tensor.ref
# a few NumPy-style conveniences
Tensor.T = property(lambda self: array_ops.transpose(self))
Tensor.reshape = lambda self, *shape: array_ops.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)
Tensor.astype = lambda self, dtype: math_ops.cast(self, dtype)
