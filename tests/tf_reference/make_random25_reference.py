"""Records TF 2.21's outputs for the draws of a run-time shape (the cases of
tests/tf_reference/random25_cases.py) into tests/data/random25_tf.npz, for tests/test_dynamic_random25.py.

Run with the peers venv (it has TensorFlow) from outside the repository (so tapeflow is not imported), on one
intra-op thread (TF's Multinomial kernel shards large batches across its threads; see make_random24_reference):
    cd /tmp && /work/main/.venv-peers/bin/python /path/to/tests/tf_reference/make_random25_reference.py
"""
import os
import sys

import numpy as np
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import random25_cases as C  # noqa: E402

arrays = {"tensorflow": np.array(tf.__version__)}
for name, fn in C.CASES.items():
    for i, a in enumerate(fn(tf)):
        arrays[f"{name}/{i}"] = a
np.savez_compressed(os.path.join(here, "..", "data", "random25_tf.npz"), **arrays)
print(len(C.CASES), "cases recorded")
