"""The first-order update rules (and the target networks' soft update), each
written once and run three ways.

A rule is a function of one variable's gradient ``g``, value ``w`` and slot values,
then its per-step constants and flags; it returns the variable's new value and the
new slot values, in the order of the optimizer's ``_rule_slots``. It is written with
operators and this module's ``sqrt``/``square``/``rsqrt``/``maximum``/``sign`` only, so the same
text runs

* on Tensors: the op path (traced, taped and profiled steps; the spec);
* elementwise inside a numba loop (``kernel``): the eager update with nothing
  recording, one pass over g, w and the slots per variable, as torch's fused Adam;
* on NumPy arrays: the eager update for dtypes the loops are not compiled for.

Same bits in all three: each operator rounds once in the variable's dtype in every
form (constants reach the loops as scalars of that dtype, as the ops convert a
Python float), and the loops are compiled without fastmath, so LLVM neither
contracts ``a * b + c`` into an FMA nor reassociates; ``error_model="numpy"``
keeps IEEE division (``x / 0`` is inf, not ZeroDivisionError). Tests compare the
forms on every optimizer and option.

A slot that the configuration does not use (Adam's ``vhat`` without amsgrad)
comes in as None on the op path and as ``g`` inside the loop (the loop is given
a size-0 array for it); the rule returns it unchanged and nobody stores it.
"""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..ops import math_ops as M


# -- the elementwise functions rules may use (Tensor, ndarray; numba overloads in _build) --
def sqrt(x):
    return M.sqrt(x) if isinstance(x, Tensor) else np.sqrt(x)


def square(x):
    return M.square(x) if isinstance(x, Tensor) else np.square(x)


def rsqrt(x):
    # math_ops.rsqrt is 1 / sqrt(x) (two roundings), not a reciprocal-sqrt instruction
    return M.rsqrt(x) if isinstance(x, Tensor) else 1.0 / np.sqrt(x)


def absolute(x):
    return M.abs(x) if isinstance(x, Tensor) else np.abs(x)


def maximum(a, b):
    return M.maximum(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else np.maximum(a, b)


def sign(x):
    return M.sign(x) if isinstance(x, Tensor) else np.sign(x)


def power(a, b):
    # np.power, the ufunc (the pow op's kernel), never ``**``: NumPy's scalar ``**`` is a
    # different implementation and pow is not correctly rounded, so it could differ
    return M.pow(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else np.power(a, b)


# -- the rules ---------------------------------------------------------------------------------
def sgd(g, w, m, lr, momentum, use_momentum, nesterov):
    """Keras' SGD: ``m = momentum*m - lr*g; w += m`` (Nesterov: ``w += momentum*m - lr*g``)."""
    step = g * lr
    if use_momentum:
        new_m = m * momentum - step
        if nesterov:
            return w + (new_m * momentum - step), new_m
        return w + new_m, new_m
    return w - step, m


def adam(g, w, m, v, vhat, alpha, s2, b1c, b2, b2c, eps, keras, amsgrad):
    """Adam; ``alpha`` the bias-corrected step size, ``s2`` = sqrt(1 - b2^t), ``b1c`` =
    1 - beta_1, ``b2c`` = 1 - beta_2 (epsilon placement: first_order's docstring)."""
    new_m = m + (g - m) * b1c
    if keras:
        new_v = v + (square(g) - v) * b2c
    else:
        new_v = v * b2 + square(g) * b2c
    if amsgrad:
        vhat = maximum(vhat, new_v)
        vv = vhat
    else:
        vv = new_v
    if keras:
        u = new_m * alpha / (sqrt(vv) + eps)
    else:
        u = new_m / (sqrt(vv) / s2 + eps) * alpha
    return w - u, new_m, new_v, vhat


def adam_factors(t, lr, beta_1, beta_2, keras):
    """Adam's per-step constants ``(alpha, s2)`` for ``adam`` at step ``t`` (the step
    number in the variable's float dtype): ``s2`` = sqrt(1 - b2^t) and the bias-corrected
    step size (Keras: lr * s2 / (1 - b1^t); torch: lr / (1 - b1^t)). Run once per step, on
    Tensors (the op path) or on NumPy scalars (the fused update): not in the loops."""
    bc1 = 1.0 - power(beta_1, t)
    s2 = sqrt(1.0 - power(beta_2, t))
    if keras:
        return lr * s2 / bc1, s2
    return lr / bc1, s2


def rmsprop(g, w, vel, ag, mom, lr, rho, rho_c, momentum, eps, keras, centered, use_momentum):
    """RMSprop; ``rho_c`` = 1 - rho. Keras keeps lr inside the momentum buffer, torch outside."""
    new_v = vel * rho + square(g) * rho_c
    if centered:
        ag = ag * rho + g * rho_c
        denom = new_v - square(ag)
    else:
        denom = new_v
    if keras:
        step = g * lr * rsqrt(denom + eps)
    else:
        step = g / (sqrt(denom) + eps)
    if use_momentum:
        mom = mom * momentum + step
        step = mom
    if not keras:
        step = step * lr
    return w - step, new_v, ag, mom


def adagrad(g, w, acc, lr, eps, keras):
    new_acc = acc + square(g)
    if keras:
        return w - g * lr / sqrt(new_acc + eps), new_acc
    return w - g / (sqrt(new_acc) + eps) * lr, new_acc


def nadam(g, w, m, v, b1c, b2c, u_next, d_next, c_now, d_now, bc2, lr, eps):
    """Keras 3's Nadam: Adam's m and v, then
    ``m_hat = u_{t+1} m / (1 - prod_{t+1}) + (1 - u_t) g / (1 - prod_t)``,
    ``v_hat = v / (1 - b2^t)``, ``w -= m_hat lr / (sqrt(v_hat) + eps)``, with ``u_t = b1
    (1 - 0.5 0.96^t)`` and ``prod_t`` the running product of the u's (the optimizer's
    ``u_product``); the per-step constants come from ``nadam_factors``: ``d_next`` =
    1 - prod_{t+1}, ``c_now`` = 1 - u_t, ``d_now`` = 1 - prod_t, ``bc2`` = 1 - b2^t."""
    new_m = m + (g - m) * b1c
    new_v = v + (square(g) - v) * b2c
    m_hat = u_next * new_m / d_next + c_now * g / d_now
    return w - m_hat * lr / (sqrt(new_v / bc2) + eps), new_m, new_v


def nadam_factors(t, u_product, beta_1, beta_2):
    """Nadam's per-step scalars at step ``t`` (in the variable's dtype, as Keras casts
    beta_1, beta_2 and 0.96 to it): the new ``u_product`` and ``(b1c, b2c, u_next,
    d_next, c_now, d_now, bc2)`` for ``nadam``. Keras 3 casts the betas first, so
    1 - beta_1 is computed in float32 (0.10000002 for 0.9, not float32(0.1))."""
    one = t * 0 + 1
    b1, b2, decay = one * beta_1, one * beta_2, one * 0.96
    u_now = b1 * (1.0 - 0.5 * power(decay, t))
    u_next = b1 * (1.0 - 0.5 * power(decay, t + 1.0))
    # Keras' _backend_update_step: u_product * beta_1 * (1 - 0.5 * 0.96^t), left to right
    prod = u_product * b1 * (1.0 - 0.5 * power(decay, t))
    return prod, (one - b1, one - b2, u_next, 1.0 - prod * u_next, 1.0 - u_now, 1.0 - prod, 1.0 - power(b2, t))


def adamax(g, w, m, u, lr, bc1, b1c, b2, eps):
    """Keras 3's Adamax: ``m += (g - m)(1 - b1)``, ``u = max(b2 u, |g|)``,
    ``w -= lr m / ((1 - b1^t)(u + eps))``; ``bc1`` = 1 - b1^t."""
    new_m = m + (g - m) * b1c
    new_u = maximum(u * b2, absolute(g))
    return w - lr * new_m / (bc1 * (new_u + eps)), new_m, new_u


def adadelta(g, w, ag, adv, lr, rho, rho_c, eps):
    """Keras 3's Adadelta: ``ag = rho ag + (1 - rho) g^2``, ``d = -sqrt(adv + eps) g /
    sqrt(ag + eps)``, ``adv = rho adv + (1 - rho) d^2``, ``w += lr d``."""
    new_ag = ag * rho + square(g) * rho_c
    delta = -(sqrt(adv + eps) * g / sqrt(new_ag + eps))
    new_adv = adv * rho + square(delta) * rho_c
    return w + lr * delta, new_ag, new_adv


def lion(g, w, m, lr, b1, b1c, b2, b2c):
    """Keras 3's Lion (Chen et al. 2023): ``w -= lr * sign(b1 m + (1 - b1) g)``, then
    ``m = b2 m + (1 - b2) g`` (``b1c``, ``b2c`` = 1 - b1, 1 - b2 in the variable's dtype)."""
    return w - lr * sign(m * b1 + g * b1c), m * b2 + g * b2c


def polyak(t, s, tau, keep):
    """The soft (Polyak) target update of ``keras.utils.soft_update``: ``tau * s + keep * t``
    for a target ``t`` and source ``s``, ``keep`` = 1 - tau (computed by the caller, as the
    op path always did: in Python floats, rounded once to the variable's dtype)."""
    return s * tau + t * keep


# -- the numba loops ---------------------------------------------------------------------------
_KERNELS = {}


def kernel(rule):
    """The compiled loop of ``rule`` over 1-D contiguous arrays:
    ``k(g, w, *slots, w_out, *constants)``, the slots updated in place (a slot of size
    0 is an unused one); ``polyak``'s is ``k(t, s, t_out, tau, keep)``. None when numba
    cannot be imported."""
    if not _KERNELS:
        _KERNELS.update(_build())
    return _KERNELS.get(rule)


def _build():
    try:
        import numba
        from numba.extending import overload, register_jitable
    except ImportError:  # pragma: no cover - numba is pinned; the NumPy form still runs
        return {None: None}
    from numba.np.numpy_support import as_dtype

    overload(sqrt)(lambda x: lambda x: np.sqrt(x))
    overload(square)(lambda x: lambda x: x * x)
    overload(maximum)(lambda a, b: lambda a, b: np.maximum(a, b))
    overload(absolute)(lambda x: lambda x: np.abs(x))
    overload(sign)(lambda x: lambda x: np.sign(x))

    @overload(rsqrt)
    def _rsqrt(x):
        one = as_dtype(x).type(1)  # a literal 1.0 would be float64 and widen a float32 rule
        return lambda x: one / np.sqrt(x)

    for r in (sgd, adam, rmsprop, adagrad, polyak, nadam, adamax, adadelta, lion):
        register_jitable(r)
    # cache=True: compiled once per machine (about a second per rule and dtype), later
    # processes load the machine code. One loop per rule: the rule is a global of the
    # loop, which numba's cache needs (a closure over it would not be cached)
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")

    # The slots are updated in place (the caller passes a buffer nobody else holds) and
    # the variable's new value goes to w_out. An unused slot is a size-0 array, tested
    # once, outside the loop: the rule then reads g in its place and its result is
    # dropped. A store under a test inside the loop (``if m.shape[0]: m[i] = ...``) keeps
    # LLVM from vectorizing it (Adam's loop ran ~6x slower: scalar sqrt and division), as
    # would an output that is another name for an input (the runtime overlap check fails
    # and the scalar loop runs): each buffer is passed once. The bodies are the rule, so
    # the bits do not change.
    @jit
    def sgd_loop(g, w, m, w_out, *c):
        if m.shape[0]:
            for i in range(g.shape[0]):
                w_out[i], m[i] = sgd(g[i], w[i], m[i], *c)
        else:
            for i in range(g.shape[0]):
                w_out[i] = sgd(g[i], w[i], g[i], *c)[0]

    @jit
    def adam_loop(g, w, m, v, vh, w_out, *c):
        if vh.shape[0]:
            for i in range(g.shape[0]):
                w_out[i], m[i], v[i], vh[i] = adam(g[i], w[i], m[i], v[i], vh[i], *c)
        else:
            for i in range(g.shape[0]):
                w_out[i], m[i], v[i], _ = adam(g[i], w[i], m[i], v[i], g[i], *c)

    @jit
    def rmsprop_loop(g, w, vel, ag, mom, w_out, *c):
        if ag.shape[0] and mom.shape[0]:
            for i in range(g.shape[0]):
                w_out[i], vel[i], ag[i], mom[i] = rmsprop(g[i], w[i], vel[i], ag[i], mom[i], *c)
        elif ag.shape[0]:
            for i in range(g.shape[0]):
                w_out[i], vel[i], ag[i], _ = rmsprop(g[i], w[i], vel[i], ag[i], g[i], *c)
        elif mom.shape[0]:
            for i in range(g.shape[0]):
                w_out[i], vel[i], _, mom[i] = rmsprop(g[i], w[i], vel[i], g[i], mom[i], *c)
        else:
            for i in range(g.shape[0]):
                w_out[i], vel[i], _, _ = rmsprop(g[i], w[i], vel[i], g[i], g[i], *c)

    @jit
    def adagrad_loop(g, w, acc, w_out, *c):
        for i in range(g.shape[0]):
            w_out[i], acc[i] = adagrad(g[i], w[i], acc[i], *c)

    @jit
    def nadam_loop(g, w, m, v, w_out, *c):
        for i in range(g.shape[0]):
            w_out[i], m[i], v[i] = nadam(g[i], w[i], m[i], v[i], *c)

    @jit
    def adamax_loop(g, w, m, u, w_out, *c):
        for i in range(g.shape[0]):
            w_out[i], m[i], u[i] = adamax(g[i], w[i], m[i], u[i], *c)

    @jit
    def adadelta_loop(g, w, ag, adv, w_out, *c):
        for i in range(g.shape[0]):
            w_out[i], ag[i], adv[i] = adadelta(g[i], w[i], ag[i], adv[i], *c)

    @jit
    def lion_loop(g, w, m, w_out, *c):
        for i in range(g.shape[0]):
            w_out[i], m[i] = lion(g[i], w[i], m[i], *c)

    @jit
    def polyak_loop(t, s, t_out, *c):
        for i in range(t.shape[0]):
            t_out[i] = polyak(t[i], s[i], *c)

    return {sgd: sgd_loop, adam: adam_loop, rmsprop: rmsprop_loop, adagrad: adagrad_loop, polyak: polyak_loop,
            nadam: nadam_loop, adamax: adamax_loop, adadelta: adadelta_loop, lion: lion_loop}
