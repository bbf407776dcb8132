"""Records TF 2.21's outputs of tests/nn21_cases.py's CALLS (wave 21, branch nn21) for
tests/test_nn21.py (tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_nn21_reference.py
Writes tests/data/nn21_reference.npz: ``NAME/i`` per output (a SparseTensor output is three:
``NAME/i.indices``, ``.values``, ``.dense_shape``).
"""
import os
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from nn21_cases import CALLS  # noqa: E402


def flat(r):
    if isinstance(r, (tuple, list)):
        out = []
        for x in r:
            out += flat(x)
        return out
    return [r]


out = {}
for name, (fn, inputs, _) in CALLS.items():
    r = fn(tf, *[tf.constant(x) for x in inputs])
    for i, a in enumerate(flat(r)):
        if isinstance(a, tf.SparseTensor):
            for part in ("indices", "values", "dense_shape"):
                out[f"{name}/{i}.{part}"] = getattr(a, part).numpy()
        else:
            out[f"{name}/{i}"] = np.asarray(a)
        print(name, i, {k: v.shape for k, v in out.items() if k.startswith(f"{name}/{i}")})
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "nn21_reference.npz"), **out)
