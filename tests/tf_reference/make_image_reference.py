"""Records TF 2.21's tf.image outputs for tests/test_image_ops.py (tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_image_reference.py
Writes tests/data/image_reference.npz: the input ``x`` and one array per call in CALLS (the
test runs the same calls under tapeflow; both read them from tests/image_cases.py).
"""
import os
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from image_cases import CALLS, image  # noqa: E402

x = image()
out = {"x": x}
for name, fn in CALLS.items():
    r = fn(tf, tf.constant(x))
    for i, a in enumerate(r if isinstance(r, tuple) else (r,)):
        out[f"{name}/{i}"] = np.asarray(a)
        print(name, i, np.asarray(a).dtype, np.asarray(a).shape)
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "image_reference.npz"), **out)
