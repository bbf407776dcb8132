"""tapeflow.types: the type names TF2 code uses in annotations and isinstance
checks (``tf.types.experimental.TensorLike``...), bound to tapeflow's classes."""
from __future__ import annotations

from typing import Union

import numpy as np

from .compiler.function import ConcreteFunction as _ConcreteFunction, Function as _Function, TraceType as _TraceType
from .core.tensor import Tensor as _Tensor, Variable as _Variable


class _Refusing(type):
    """A class namespace whose out-of-scope names (tapeflow/_unsupported.py) say what they are."""
    def __getattr__(cls, name):
        from ._unsupported import FEATURES, NAMES, UnsupportedNamespace, unsupported_name
        key = f"types.experimental.{name}"
        if key in FEATURES:
            return UnsupportedNamespace(key)
        if key in NAMES:
            raise unsupported_name(key)
        raise AttributeError(f"module 'tapeflow.types.experimental' has no attribute {name!r}")


class _Callable(metaclass=__import__("abc").ABCMeta):
    """tf.types.experimental.Callable: the base of TF's callables (tf.function's results and their concrete
    functions are instances of it; here through ABC registration)."""


_Callable.register(_Function)
_Callable.register(_ConcreteFunction)


class experimental(metaclass=_Refusing):  # noqa: N801  (tf.types.experimental namespace)
    Callable = _Callable
    TensorLike = Union[_Tensor, _Variable, np.ndarray, int, float, bool, list, tuple]
    ConcreteFunction = _ConcreteFunction
    GenericFunction = _Function
    PolymorphicFunction = _Function
    TraceType = _TraceType


Tensor = _Tensor
