"""Special functions with TF's names (tf.math.lgamma, digamma, polygamma, erfc, erfinv, nextafter):
one primitive each (core/primitives/special.py says why and how accurate)."""
from __future__ import annotations

import numpy as np

from ..core.primitive import bind, aval_of
from ..core.primitives import special as _S
from ..core.tensor import Tensor, convert_to_tensor
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from .math_ops import match_lists, where, multiply


def lgamma(x, name=None):
    """tf.math.lgamma: log |Gamma(x)|; inf at 0 and the negative integers, as TF."""
    return bind(_S.lgamma_p, x)


def digamma(x, name=None):
    """tf.math.digamma: Gamma'(x) / Gamma(x); nan at 0 and the negative integers, as TF."""
    return bind(_S.polygamma_p, x, n=0)


def polygamma(a, x, name=None):
    """tf.math.polygamma: the a-th derivative of digamma. ``a`` is TF's float tensor of orders (x's
    dtype, broadcast against x); here its values must be known when the op runs (a Python number,
    a NumPy value or an eager tensor), as each order is its own op (``n`` static). Orders that are
    not whole numbers >= 0 give nan, as TF's kernel; a has no gradient (TF: None)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    dt = aval_of(x).dtype
    if isinstance(a, (Tensor, np.ndarray, np.generic)) and aval_of(a).dtype != dt:
        raise InvalidArgumentTypeError(f"polygamma: a and x must have the same dtype, got a {aval_of(a).dtype.name} "
                                       f"and x {dt.name}; cast a: tapeflow.cast(a, x.dtype)")
    try:
        av = np.asarray(a.numpy() if isinstance(a, Tensor) else a, dtype=np.float64)
    except Exception:
        raise InvalidArgumentError(
            f"polygamma: the order a must be known when the op runs (a Python number, a NumPy value or an "
            f"eager tensor), got {type(a).__name__}: tapeflow makes one op per order; pass it as a Python "
            "number") from None
    whole = np.isfinite(av) & (av >= 0) & (av == np.floor(av))
    if av.ndim == 0:
        return bind(_S.polygamma_p, x, n=int(av)) if whole else multiply(x, np.nan)
    out = multiply(multiply(x, np.nan), np.zeros(av.shape, dt))           # nan in the broadcast shape
    for n in np.unique(av[whole]).astype(int).tolist():
        out = where(np.asarray(av == n), bind(_S.polygamma_p, x, n=n), out)
    return out


def erfc(x, name=None):
    """tf.math.erfc: 1 - erf(x), accurate where erf(x) is near 1 (erfc(10) = 2.1e-45 in float64)."""
    return bind(_S.erfc_p, x)


def erfinv(x, name=None):
    """tf.math.erfinv: the inverse error function; +-inf at +-1, nan outside [-1, 1]."""
    return bind(_S.erfinv_p, x)


def nextafter(x1, x2, name=None):
    """tf.math.nextafter: the next representable value after x1 towards x2 (float32/float64)."""
    return bind(_S.nextafter_p, *match_lists("nextafter", x1, x2))
