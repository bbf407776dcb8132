"""Hand-written NumPy building blocks: dense MLP forward/backward and Adam.

Used by the hand-written NumPy implementations (float32, timed) and by the
references the numerical checks compare against (the same code in float64).
"""
from __future__ import annotations

import numpy as np


def act_fwd(z, act):
    """Activation applied in place to z (a fresh matmul result); returns z."""
    if act == "relu":
        return np.maximum(z, 0, out=z)
    if act == "tanh":
        return np.tanh(z, out=z)
    if act == "sigmoid":
        np.negative(z, out=z)
        np.exp(z, out=z)
        z += 1
        return np.reciprocal(z, out=z)
    if act == "linear":
        return z
    raise ValueError(act)


def act_bwd(h, dh, act):
    """Gradient through the activation given its output h; overwrites dh."""
    if act == "relu":
        dh *= h > 0
        return dh
    if act == "tanh":
        t = h * h
        np.subtract(1, t, out=t)
        dh *= t
        return dh
    if act == "sigmoid":
        t = np.subtract(1, h)
        t *= h
        dh *= t
        return dh
    if act == "linear":
        return dh
    raise ValueError(act)


def mlp_forward(params, x, acts):
    """params = [W0, b0, W1, b1, ...]; returns (output, cache)."""
    hs = [x]
    h = x
    for i, act in enumerate(acts):
        z = h @ params[2 * i]
        z += params[2 * i + 1]
        h = act_fwd(z, act)
        hs.append(h)
    return h, hs


def mlp_backward(params, hs, acts, dout, need_dx=False):
    """Gradients of a scalar loss w.r.t. params given d loss / d output
    (dout is overwritten)."""
    grads = [None] * len(params)
    d = dout
    for i in reversed(range(len(acts))):
        dz = act_bwd(hs[i + 1], d, acts[i])
        grads[2 * i] = hs[i].T @ dz
        grads[2 * i + 1] = dz.sum(axis=0)
        if i > 0 or need_dx:
            d = dz @ params[2 * i].T
    return (grads, d) if need_dx else grads


class Adam:
    """Adam, in place. style "torch": torch.optim.Adam / optax (eps added to
    sqrt(v_hat)); style "keras": Keras's (eps added to sqrt(v), the bias
    correction folded into the step size)."""

    def __init__(self, params, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, style="torch"):
        self.lr, self.b1, self.b2, self.eps, self.style = lr, b1, b2, eps, style
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def update(self, params, grads):
        self.t += 1
        b1, b2 = self.b1, self.b2
        c1 = 1.0 - b1**self.t
        c2 = 1.0 - b2**self.t
        step = self.lr / c1
        sc2 = np.sqrt(c2)
        if self.style == "keras":
            alpha = self.lr * sc2 / c1
            for p, g, m, v in zip(params, grads, self.m, self.v):
                m += (g - m) * (1 - b1)
                v += (g * g - v) * (1 - b2)
                p -= alpha * m / (np.sqrt(v) + self.eps)
            return
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * (g * g)
            # p -= lr * m_hat / (sqrt(v_hat) + eps)
            p -= step * m / (np.sqrt(v) / sc2 + self.eps)


def as_dtype(arrays, dtype):
    return [np.array(a, dtype=dtype) for a in arrays]
