"""Activation functions by name (Keras): ``get("relu")`` -> function."""
from __future__ import annotations

from ..core.tensor import Tensor, convert_to_tensor
from ..ops import array_ops as A
from ..ops import math_ops as M
from ..ops import nn_ops as N

__all__ = ["relu", "tanh", "sigmoid", "softmax", "log_softmax", "softplus", "softsign", "elu", "selu", "gelu",
           "swish", "silu", "leaky_relu", "relu6", "exponential", "hard_sigmoid", "linear", "celu", "glu",
           "hard_silu", "hard_swish", "hard_tanh", "hard_shrink", "soft_shrink", "tanh_shrink", "log_sigmoid",
           "mish", "sparse_plus", "sparse_sigmoid", "squareplus", "sparsemax", "threshold", "get",
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
    """Keras 3's ops.tanh: an integer or bool x is cast to floatx first (TF 2.21's Keras computes
    activations.tanh of an int8 tensor; it raised here)."""
    from . import ops
    return ops.tanh(x)


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


def silu(x):
    return N.swish(x)


# Keras 3 names the function silu (serialize(swish) == "silu", as a Dense(activation="swish")
# config says); "swish" stays a name that get() understands
swish = silu


def leaky_relu(x, alpha=0.2):
    return N.leaky_relu(x, alpha)


def relu6(x):
    return N.relu6(x)


def exponential(x):
    from . import ops   # (keras.ops.exp: an integer or bool input becomes floatx first, as Keras 3)
    return ops.exp(x)


def hard_sigmoid(x):
    """Keras 3's piecewise-linear sigmoid: relu6(x + 3) / 6 = clip(x / 6 + 0.5, 0, 1) (Keras 2,
    before TF 2.16, used slope 0.2: 0.8 at x = 1.5 where TF 2.21 gives 0.75)."""
    return M.divide(N.relu6(M.add(x, 3.0)), 6.0)


def linear(x):
    return x


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return M.add(M.maximum(x, 0.0), M.multiply(alpha, M.expm1(M.divide(M.minimum(x, 0.0), alpha))))


def glu(x, axis=-1):
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    n = x.shape[axis]
    if n is None or n % 2:
        raise ValueError(f"glu: axis size must be divisible by 2. Received: x.shape={tuple(x.shape)} with "
                         f"axis={axis}")
    a, b = A.split(x, 2, axis=axis)
    return M.multiply(a, M.sigmoid(b))


def hard_silu(x):
    """x * hard_sigmoid(x) (hard swish)."""
    return M.multiply(x, hard_sigmoid(x))


def hard_tanh(x):
    return M.clip_by_value(x, -1.0, 1.0)


def hard_shrink(x, threshold=0.5):
    """x where |x| > threshold, else 0."""
    return M.where(M.greater(M.abs(x), threshold), x, A.zeros_like(x))


def soft_shrink(x, threshold=0.5):
    """x - threshold above it, x + threshold below -threshold, else 0."""
    return M.where(M.greater(x, threshold), M.subtract(x, threshold),
                   M.where(M.less(x, -threshold), M.add(x, threshold), A.zeros_like(x)))


def tanh_shrink(x):
    return M.subtract(x, M.tanh(x))


def log_sigmoid(x):
    return M.log_sigmoid(x)


def mish(x):
    """x * tanh(softplus(x)) (Misra 2019)."""
    return M.multiply(x, M.tanh(M.softplus(x)))


def sparse_plus(x):
    """0 below -1, (x + 1)^2 / 4 on [-1, 1), x above."""
    return M.where(M.less_equal(x, -1.0), A.zeros_like(x),
                   M.where(M.less(x, 1.0), M.multiply(0.25, M.square(M.add(x, 1.0))), x))


def sparse_sigmoid(x):
    """0 below -1, (x + 1) / 2 on (-1, 1), 1 above."""
    return M.where(M.less_equal(x, -1.0), A.zeros_like(x),
                   M.where(M.greater_equal(x, 1.0), A.ones_like(x), M.multiply(0.5, M.add(x, 1.0))))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2 (So 2021)."""
    return M.divide(M.add(x, M.sqrt(M.add(M.square(x), float(b)))), 2.0)


def threshold(x, threshold, default_value):
    """x where x > threshold, else default_value."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    return M.where(M.greater(x, threshold), x, M.cast(default_value, x.dtype))


hard_swish = hard_silu


def sparsemax(x, axis=-1):
    """Keras 3.15's sparsemax (its TF backend, so TF 2.21's values), operation for operation: sort
    descending, cumulative sums, the support ``sorted - (cumsum - 1) / r > 0``, ``tau = (sum of the
    cumulative sums over the support - 1) / k``, ``max(x - tau, 0)``. Keras' tau sums the cumulative
    sums where the sparsemax paper takes the one at k, so with more than one element in the support
    the outputs need not sum to 1 (TF 2.21: [0.1, 0.1, 0.1] -> 0.2333 each); kept: TF is the spec."""
    x = convert_to_tensor(x)
    rank = x.shape.rank
    ax = axis % rank
    s = A.sort(x, axis=ax, direction="DESCENDING")
    c = M.cumsum(s, axis=ax)
    n = tuple(x.shape)[ax]
    r_shape = [1] * rank
    r_shape[ax] = n
    r = A.reshape(M.cast(A.range(1, n + 1), x.dtype), r_shape)
    support = M.cast(M.greater(s - (c - 1) / r, 0), x.dtype)
    k = M.reduce_sum(support, axis=ax, keepdims=True)
    c_safe = M.where(M.greater(support, 0), c, A.zeros_like(c))
    tau = (M.reduce_sum(c_safe, axis=ax, keepdims=True) - 1) / k
    return M.maximum(x - tau, M.cast(0.0, x.dtype))

_BY_NAME = {f.__name__: f for f in (relu, tanh, sigmoid, softmax, log_softmax, softplus, softsign, elu, selu,
                                     gelu, swish, leaky_relu, relu6, exponential, hard_sigmoid, linear, celu, glu,
                                     hard_silu, hard_tanh, hard_shrink, soft_shrink, tanh_shrink, log_sigmoid, mish,
                                     sparse_plus, sparse_sigmoid, squareplus, sparsemax)}
_BY_NAME["hard_swish"] = hard_silu
_BY_NAME["swish"] = silu
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
            return "linear" if f is linear else k
    return fn


deserialize = get
