"""Helpers to load the same NumPy weights into PyTorch, JAX and Keras models.

Weights are lists [W0, b0, W1, b1, ...] with W of shape (in, out) (the Keras
layout). Frameworks are imported lazily, inside the functions.
"""
from __future__ import annotations

import numpy as np


def torch_mlp(arrays, acts):
    import torch
    from torch import nn

    mods = []
    for i, act in enumerate(acts):
        W, b = arrays[2 * i], arrays[2 * i + 1]
        lin = nn.Linear(W.shape[0], W.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(W.T)))
            lin.bias.copy_(torch.from_numpy(np.ascontiguousarray(b)))
        mods.append(lin)
        if act == "relu":
            mods.append(nn.ReLU())
        elif act == "tanh":
            mods.append(nn.Tanh())
        elif act == "sigmoid":
            mods.append(nn.Sigmoid())
    return nn.Sequential(*mods)


def torch_arrays(model):
    """Weights of a torch_mlp back in [W(in,out), b, ...] order."""
    from torch import nn

    out = []
    for m in model:
        if isinstance(m, nn.Linear):
            out.append(m.weight.detach().numpy().T.copy())
            out.append(m.bias.detach().numpy().copy())
    return out


def jax_mlp(params, x, acts):
    import jax
    import jax.numpy as jnp

    h = x
    for i, act in enumerate(acts):
        h = h @ params[2 * i] + params[2 * i + 1]
        if act == "relu":
            h = jax.nn.relu(h)
        elif act == "tanh":
            h = jnp.tanh(h)
        elif act == "sigmoid":
            h = jax.nn.sigmoid(h)
    return h


def keras_mlp(tf, arrays, acts, input_dim):
    """tf.keras.Sequential of Dense layers with the given weights (TF or tapeflow)."""
    layers = []
    for i, act in enumerate(acts):
        units = arrays[2 * i].shape[1]
        layers.append(tf.keras.layers.Dense(units, activation=None if act == "linear" else act))
    model = tf.keras.Sequential(layers)
    model.build((None, input_dim))
    model.set_weights([np.array(a) for a in arrays])
    return model


def keras_arrays(model):
    return [np.array(w) for w in model.get_weights()]


def named(arrays, prefix="p"):
    return {f"{prefix}{i}": np.asarray(a) for i, a in enumerate(arrays)}
