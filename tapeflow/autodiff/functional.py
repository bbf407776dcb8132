"""grad / value_and_grad: function transformations over GradientTape (JAX-style
names; ``argnums`` selects the positional arguments to differentiate)."""
from __future__ import annotations

import functools

from ..core.tensor import Tensor, Variable, convert_to_tensor
from ..util import nest
from .tape import GradientTape, UnconnectedGradients, _unconnected


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


class ForwardAccumulator:
    """tf.autodiff.ForwardAccumulator: Jacobian-vector products of the values computed inside
    ``with acc:`` with respect to ``primals`` along ``tangents``. Forward mode as reverse mode
    twice: a persistent tape records the block; ``jvp(y)`` takes the vjp of ``y`` with a
    cotangent ``u`` under a second tape (a linear function of ``u``, as every vjp rule is
    written in tapeflow ops) and differentiates <vjp(u), tangents> with respect to ``u``.
    The same numbers as TF's forward mode, at the cost of two backward passes per jvp."""

    def __init__(self, primals, tangents):
        self._primals = nest.flatten(primals)
        self._tangents = []
        flat_t = nest.flatten(tangents)
        if len(flat_t) != len(self._primals):
            raise ValueError(f"ForwardAccumulator: {len(self._primals)} primals but {len(flat_t)} tangents")
        for p, t in zip(self._primals, flat_t):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator: primals must be tensors or variables, got {type(p).__name__}")
            t = t if isinstance(t, Tensor) and not isinstance(t, Variable) else convert_to_tensor(t, p.dtype)
            if t.dtype != p.dtype:  # (TF 2.21: ValueError "Tensor conversion requested dtype float32 ...")
                raise ValueError(f"ForwardAccumulator: a tangent of dtype {t.dtype.name} for a primal of dtype "
                                 f"{p.dtype.name}")
            if tuple(t.shape) != tuple(p.shape):  # (TF 2.21 does not check; the products would broadcast)
                raise ValueError(f"ForwardAccumulator: a tangent of shape {tuple(t.shape)} for a primal of "
                                 f"shape {tuple(p.shape)}")
            self._tangents.append(t)
        self._tape = GradientTape(persistent=True)

    def __enter__(self):
        self._tape.__enter__()
        self._tape.watch(self._primals)
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The jvp of each tensor in ``primals`` (a nested structure), shaped like it; None
        for a tensor that does not depend on the primals (ZERO: zeros)."""
        from ..ops import array_ops, math_ops
        unconnected_gradients = _unconnected(unconnected_gradients)

        def one(y):
            if not isinstance(y, Tensor) or not (y.dtype.is_floating or y.dtype.is_complex):  # (TF 2.21: None for an int result)
                return None
            u = array_ops.zeros_like(y)
            with GradientTape() as outer:
                outer.watch(u)
                gs = self._tape.gradient(y, self._primals, output_gradients=u)
                terms = [math_ops.reduce_sum(math_ops.multiply(g, t)) for g, t in zip(gs, self._tangents)
                         if g is not None]
                s = math_ops.add_n(terms) if terms else None
            j = None if s is None else outer.gradient(s, u)
            if j is None and unconnected_gradients is UnconnectedGradients.ZERO:
                j = array_ops.zeros_like(y)
            return j
        return nest.map_structure(one, primals)


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False, aggregation_method=None,
              stop_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
    """tf.gradients: TF's symbolic (graph) gradients. Eagerly TF 2.21 raises this RuntimeError;
    inside tf.function TF differentiates its graph, which tapeflow's traces do not support:
    a GradientTape inside the function gives the same gradients."""
    from ..core.state import STATE
    if STATE.trace is None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    from .._unsupported import UnsupportedFeatureError
    raise UnsupportedFeatureError("tf.gradients inside tapeflow.function: tapeflow does not differentiate a traced "
                                  "graph after the fact; open a tapeflow.GradientTape inside the function "
                                  "(tape.gradient(ys, xs, output_gradients=grad_ys) gives the same values)")


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """tf.hessians: tf.gradients applied twice, so TF 2.21's eager RuntimeError, and inside
    tapeflow.function the same refusal as tf.gradients (nested GradientTapes give Hessians:
    ``t2.jacobian(t1.gradient(y, x), x)``)."""
    from ..core.state import STATE
    if STATE.trace is None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    from .._unsupported import UnsupportedFeatureError
    raise UnsupportedFeatureError("tf.hessians inside tapeflow.function: tapeflow does not differentiate a traced "
                                  "graph after the fact; nest two tapeflow.GradientTapes inside the function "
                                  "(outer.jacobian(inner.gradient(y, x), x) gives the Hessian)")


class AggregationMethod:
    """tf.AggregationMethod (TF 2.21's constants): how tf.gradients sums a variable's gradients.
    tapeflow's tape always adds them in order; the argument is accepted and has no effect."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2
