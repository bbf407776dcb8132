"""Records TF 2.21's results of the bfloat16 programs in tests/bfloat16_cases.py for
tests/test_bfloat16.py (tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_bfloat16_reference.py
Writes tests/data/bfloat16_reference.npz: per case ``case/<name>`` (the result as float32; bool
results as 0/1) and ``dtype/<name>``; for the 'mixed_bfloat16' model ``model/layer<i>/...`` and
``model/weights<i>``, ``model/loss``, ``model/optimizer``.
"""
import os
import sys

import numpy as np
import tensorflow as tf
import keras

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import bfloat16_cases as C  # noqa: E402

out = {}
for name in C.CASES:
    r = C.run(tf, name)
    out[f"dtype/{name}"] = np.array(r.dtype.name)
    out[f"case/{name}"] = np.asarray(tf.cast(r, tf.float32).numpy())
    print(name, r.dtype.name, r.shape)
keras.mixed_precision.set_global_policy("mixed_bfloat16")
rec = C.model_record(tf, keras)
keras.mixed_precision.set_global_policy("float32")
for i, (comp, var, wd, od, val) in enumerate(rec["layers"]):
    out[f"model/layer{i}/dtypes"] = np.array([comp, var, od] + wd)
    out[f"model/layer{i}/out"] = val
for i, w in enumerate(rec["weights"]):
    out[f"model/weights{i}"] = w
out["model/loss"] = np.array(rec["loss"])
out["model/optimizer"] = np.array(rec["optimizer"])
print(rec["optimizer"], rec["loss"], [l[:4] for l in rec["layers"]])
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "bfloat16_reference.npz"), **out)
