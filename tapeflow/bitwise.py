"""tapeflow.bitwise: TF's tf.bitwise namespace. Integer tensors only (int8/16/32/64, uint8), as TF's
kernels: floats and bools raise. Shifts clamp the shift to [0, bits - 1], as TF's kernels do."""
from __future__ import annotations

import numpy as np

from .core.primitive import bind
from .core.primitives import elementwise as _E
from .core.tensor import Tensor, convert_to_tensor
from .ops.math_ops import match_lists

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _operands(name, x, y):
    x, y = match_lists(name, x, y)
    if not isinstance(x, (Tensor, np.ndarray, np.generic)) and not isinstance(y, (Tensor, np.ndarray, np.generic)):
        x = convert_to_tensor(x)   # two Python ints: int32 (TF's default), so a shift clamps at 31
    return x, y


def bitwise_and(x, y, name=None):
    return bind(_E.bitwise_and_p, *_operands("bitwise_and", x, y))


def bitwise_or(x, y, name=None):
    return bind(_E.bitwise_or_p, *_operands("bitwise_or", x, y))


def bitwise_xor(x, y, name=None):
    return bind(_E.bitwise_xor_p, *_operands("bitwise_xor", x, y))


def invert(x, name=None):
    return bind(_E.invert_p, x)


def left_shift(x, y, name=None):
    return bind(_E.left_shift_p, *_operands("left_shift", x, y))


def right_shift(x, y, name=None):
    return bind(_E.right_shift_p, *_operands("right_shift", x, y))
