"""tapeflow.types: the type names TF2 code uses in annotations and isinstance
checks (``tf.types.experimental.TensorLike``...), bound to tapeflow's classes."""
from __future__ import annotations

from typing import Union

import numpy as np

from .compiler.function import ConcreteFunction as _ConcreteFunction, Function as _Function, TraceType as _TraceType
from .core.tensor import Tensor as _Tensor, Variable as _Variable


class experimental:  # noqa: N801  (tf.types.experimental namespace)
    TensorLike = Union[_Tensor, _Variable, np.ndarray, int, float, bool, list, tuple]
    ConcreteFunction = _ConcreteFunction
    GenericFunction = _Function
    PolymorphicFunction = _Function
    TraceType = _TraceType


Tensor = _Tensor
