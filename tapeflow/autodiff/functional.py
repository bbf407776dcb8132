"""grad / value_and_grad: function transformations over GradientTape (JAX-style
names; ``argnums`` selects the positional arguments to differentiate)."""
from __future__ import annotations

import functools

from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..util import nest
from .tape import GradientTape


def value_and_grad(f, argnums=0, has_aux=False):
    """Returns ``g(*args) -> (value, grads)``; grads match ``args[argnums]``."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    @functools.wraps(f)
    def g(*args, **kwargs):
        args = list(args)
        for i in nums:
            args[i] = nest.map_structure(
                lambda a: a if isinstance(a, Variable) else convert_to_tensor(a), args[i])
        with GradientTape() as tape:
            for i in nums:
                tape.watch(args[i])
            out = f(*args, **kwargs)
        value, aux = (out if has_aux else (out, None))
        grads = tape.gradient(value, [args[i] for i in nums],
                              unconnected_gradients="zero")
        grads = grads[0] if single else tuple(grads)
        return ((value, aux), grads) if has_aux else (value, grads)

    return g


def grad(f, argnums=0, has_aux=False):
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def g(*args, **kwargs):
        (v, grads) = vg(*args, **kwargs)
        return (grads, v[1]) if has_aux else grads

    return g
