"""Records TF 2.21's tf.nn 3-D convolution and pooling outputs and gradients for tests/test_nn3d.py
(tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_nn3d_reference.py
Writes tests/data/nn3d_reference.npz: per case ``<case>/x``, ``<case>/w`` (if any), ``<case>/ct``
(the cotangent), ``<case>/out``, ``<case>/gx`` and ``<case>/gw`` (gradients of sum(out * ct)).
The cases are in tests/nn3d_cases.py, shared with the test.
"""
import os
import sys
import zlib

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from nn3d_cases import CASES, call, inputs_for  # noqa: E402

out = {}
for name, case in CASES.items():
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x, w = inputs_for(case, rng)
    xt = tf.constant(x)
    wt = None if w is None else tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        if wt is not None:
            tape.watch(wt)
        y = call(tf, case, xt, wt)
        ct = rng.standard_normal(y.shape).astype(np.float32)
        loss = tf.reduce_sum(y * ct)
    grads = tape.gradient(loss, [xt] + ([] if wt is None else [wt]))
    out[f"{name}/x"], out[f"{name}/ct"], out[f"{name}/out"] = x, ct, y.numpy()
    out[f"{name}/gx"] = grads[0].numpy()
    if wt is not None:
        out[f"{name}/w"], out[f"{name}/gw"] = w, grads[1].numpy()
    print(name, y.shape)
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "nn3d_reference.npz"), **out)
