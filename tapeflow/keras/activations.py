"""Activation functions by name (Keras): ``get("relu")`` -> function."""
from __future__ import annotations

from ..ops import math_ops as M
from ..ops import nn_ops as N

__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "softplus", "softsign", "elu", "selu", "gelu",
           "swish", "silu", "leaky_relu", "relu6", "exponential", "hard_sigmoid", "linear", "get",
           "serialize", "deserialize"]


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0, alpha=None):
    """max(x, 0), with Keras' optional negative slope, cap and threshold (Keras 3's
    ``negative_slope``; ``alpha`` is Keras 2's name for it)."""
    alpha = negative_slope if alpha is None else alpha
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return N.relu(x)
    if threshold != 0.0:
        y = M.where(M.greater(x, threshold), x, 0.0)  # (not x * 0.0: -inf * 0 is nan)
    else:
        y = M.maximum(x, 0.0)
    if max_value is not None:
        y = M.minimum(y, float(max_value))
    if alpha != 0.0:
        neg = M.multiply(M.minimum(M.subtract(x, threshold), 0.0), float(alpha))
        y = M.add(y, neg)
    return y


def tanh(x):
    return M.tanh(x)


def sigmoid(x):
    return M.sigmoid(x)


def softmax(x, axis=-1):
    return N.softmax(x, axis)


def log_softmax(x, axis=-1):
    return N.log_softmax(x, axis)


def softplus(x):
    return M.softplus(x)


def softsign(x):
    return N.softsign(x)


def elu(x, alpha=1.0):
    return N.elu(x, alpha)


def selu(x):
    return N.selu(x)


def gelu(x, approximate=False):
    return N.gelu(x, approximate)


def swish(x):
    return N.swish(x)


silu = swish


def leaky_relu(x, alpha=0.2):
    return N.leaky_relu(x, alpha)


def relu6(x):
    return N.relu6(x)


def exponential(x):
    return M.exp(x)


def hard_sigmoid(x):
    """Keras 3's piecewise-linear sigmoid: relu6(x + 3) / 6 = clip(x / 6 + 0.5, 0, 1) (Keras 2,
    before TF 2.16, used slope 0.2: 0.8 at x = 1.5 where TF 2.21 gives 0.75)."""
    return M.divide(N.relu6(M.add(x, 3.0)), 6.0)


def linear(x):
    return x


_BY_NAME = {f.__name__: f for f in (relu, tanh, sigmoid, softmax, log_softmax, softplus, softsign, elu, selu,
                                     gelu, swish, leaky_relu, relu6, exponential, hard_sigmoid, linear)}
_BY_NAME["silu"] = swish
_BY_NAME["identity"] = linear
_BY_NAME[None] = linear


def get(identifier):
    """A function from a name, None (linear) or a callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        f = _BY_NAME.get(identifier.lower())
        if f is None:
            raise ValueError(f"unknown activation {identifier!r}; known: "
                             f"{sorted(k for k in _BY_NAME if k)}")
        return f
    if isinstance(identifier, dict):
        return get(identifier.get("config", identifier.get("class_name")))
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as an activation")


def serialize(fn):
    for k, f in _BY_NAME.items():
        if f is fn and k:
            return "swish" if f is swish else ("linear" if f is linear else k)
    return fn


deserialize = get
