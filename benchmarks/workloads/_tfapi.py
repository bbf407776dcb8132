"""Code written once against the TensorFlow 2 API and run twice: with
``tensorflow`` (peers venv) and with ``tapeflow`` (tapeflow's venv), which
mirrors that API. Both rows of a table then come from the same source."""
from __future__ import annotations

import importlib

import numpy as np


def import_tf(framework: str):
    """The module that plays `tf`: tapeflow or tensorflow."""
    if framework == "tapeflow":
        return importlib.import_module("tapeflow")
    if framework == "tensorflow":
        return importlib.import_module("tensorflow")
    raise ValueError(framework)


def variables(tfm, arrays, prefix="v"):
    return [tfm.Variable(np.array(a), name=f"{prefix}{i}") for i, a in enumerate(arrays)]


def constants(tfm, arrays):
    return [tfm.constant(a) for a in arrays]


def fori_loop(tfm, lower, upper, body, init):
    """tapeflow.fori_loop when it exists (tapeflow), else tf.while_loop."""
    if hasattr(tfm, "fori_loop"):
        return tfm.fori_loop(lower, upper, body, init)
    i0 = tfm.constant(lower)

    def cond(i, carry):
        return i < upper

    def step(i, carry):
        return i + 1, body(i, carry)

    _, out = tfm.while_loop(cond, step, (i0, init))
    return out


def dense_mlp(tfm, params, x, acts):
    """Forward pass of an MLP with params [W0, b0, W1, b1, ...]."""
    h = x
    for i, act in enumerate(acts):
        h = tfm.matmul(h, params[2 * i]) + params[2 * i + 1]
        if act == "relu":
            h = tfm.nn.relu(h)
        elif act == "tanh":
            h = tfm.tanh(h)
        elif act == "sigmoid":
            h = tfm.sigmoid(h)
        elif act != "linear":
            raise ValueError(act)
    return h


class HandAdam:
    """Adam written with raw ops (same update as torch.optim.Adam)."""

    def __init__(self, tfm, init_arrays, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        self.tfm = tfm
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = [tfm.Variable(np.zeros_like(a)) for a in init_arrays]
        self.v = [tfm.Variable(np.zeros_like(a)) for a in init_arrays]
        self.b1t = tfm.Variable(np.float32(1.0))
        self.b2t = tfm.Variable(np.float32(1.0))

    def apply(self, grads, params):
        tfm, b1, b2 = self.tfm, self.b1, self.b2
        self.b1t.assign(self.b1t * b1)
        self.b2t.assign(self.b2t * b2)
        step = self.lr / (1.0 - self.b1t)
        sc2 = tfm.sqrt(1.0 - self.b2t)
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m.assign(b1 * m + (1.0 - b1) * g)
            v.assign(b2 * v + (1.0 - b2) * tfm.square(g))
            p.assign_sub(step * m / (tfm.sqrt(v) / sc2 + self.eps))


class KerasAdam:
    """The same Adam through the framework's Keras optimizer (``apply_gradients``), as a
    TF2 port writes it; tapeflow's ``epsilon_mode="torch"`` puts epsilon where
    torch.optim.Adam does (TF's Keras Adam has only its own placement)."""

    def __init__(self, tfm, init_arrays, lr=1e-3, eps=1e-8):
        kw = {"epsilon_mode": "torch"} if tfm.__name__ == "tapeflow" else {}
        self.opt = tfm.keras.optimizers.Adam(learning_rate=lr, epsilon=eps, **kw)

    def apply(self, grads, params):
        self.opt.apply_gradients(zip(grads, params))


def read(v):
    return np.array(v.numpy())
