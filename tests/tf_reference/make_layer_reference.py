"""Records TF 2.21 (Keras 3) outputs of Keras layers for tests/test_keras_layer_reference.py
(tests cannot import TF): the attention layers, EinsumDense, Dot, and the reshaping,
normalization and convolution layers of tests/layer_cases.py.

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_layer_reference.py
Writes tests/data/layer_reference.npz: per case ``<case>/in<i>`` inputs, ``<case>/w<i>``
weights (get_weights order), ``<case>/out<i>`` outputs, ``<case>/shapes`` the weight shapes;
the cases' layer configs are in CASES below (the test imports them from this file's twin,
tests/layer_cases.py, so both sides build the same layers).
"""
import os
import sys
import zlib

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from layer_cases import CASES, build, inputs_for  # noqa: E402

out = {}
for name, (cls, kwargs, call_kwargs, in_shapes) in CASES.items():
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    layer = build(tf.keras.layers, cls, kwargs)
    args, ckw = inputs_for(name, in_shapes, call_kwargs, rng)
    layer(*args, **ckw)
    weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in layer.weights]
    layer.set_weights(weights)
    res = layer(*args, **ckw)
    res = res if isinstance(res, (tuple, list)) else [res]
    for i, a in enumerate(args if not isinstance(args[0], list) else args[0]):
        out[f"{name}/in{i}"] = np.asarray(a)
    for k, v in ckw.items():
        if v is not None and not isinstance(v, bool):
            for i, m in enumerate(v if isinstance(v, list) else [v]):
                out[f"{name}/kw_{k}{i}"] = np.asarray(m)
    for i, w in enumerate(weights):
        out[f"{name}/w{i}"] = w
    for i, r in enumerate(res):
        out[f"{name}/out{i}"] = np.asarray(r)
    print(name, [tuple(w.shape) for w in weights], [tuple(np.shape(r)) for r in res])

# -- masks inside models: Embedding(mask_zero) feeding the attention layers --------------------------
ids = np.array([[3, 5, 2, 0, 0], [7, 1, 0, 0, 0], [4, 4, 9, 8, 6]], np.int32)
models = {}
inp = tf.keras.Input((5,), dtype="int32")
h = tf.keras.layers.Embedding(10, 4, mask_zero=True)(inp)
models["model_mha_mask"] = tf.keras.Model(inp, tf.keras.layers.GlobalAveragePooling1D()(
    tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(h, h)))
inp = tf.keras.Input((5,), dtype="int32")
h = tf.keras.layers.Embedding(10, 4, mask_zero=True)(inp)
models["model_attention_mask"] = tf.keras.Model(inp, tf.keras.layers.GlobalAveragePooling1D()(
    tf.keras.layers.Attention()([h, h])))
for name, model in models.items():
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in model.weights]
    model.set_weights(weights)
    out[f"{name}/in0"] = ids
    for i, w in enumerate(weights):
        out[f"{name}/w{i}"] = w
    out[f"{name}/out0"] = np.asarray(model(ids))
    print(name, [tuple(w.shape) for w in weights])
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "layer_reference.npz"), **out)
