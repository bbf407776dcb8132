"""Records TF 2.21's tf.random.Generator streams for tests/test_random_philox.py.

Run with the peers venv (it has TensorFlow), from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_philox_reference.py
Writes tests/data/philox_reference.json: small draws verbatim, big draws as
the sha256 of their bytes, and the generator state after each draw.
"""
import hashlib
import json
import os

import numpy as np
import tensorflow as tf


def rec(arr):
    a = np.ascontiguousarray(arr)
    if a.size <= 16:
        return {"values": a.tolist(), "dtype": a.dtype.name, "shape": list(a.shape)}
    return {"sha256": hashlib.sha256(a.tobytes()).hexdigest(), "dtype": a.dtype.name, "shape": list(a.shape),
            "head": a.ravel()[:4].tolist()}


draws = [
    ("normal", 1, {"shape": [8]}), ("normal", 1, {"shape": [5]}), ("normal", 1, {"shape": [3, 7]}),
    ("uniform", 1234, {"shape": [6]}), ("uniform", 1234, {"shape": [3], "minval": -2.0, "maxval": 3.0}),
    ("normal", 1234, {"shape": [2, 3], "dtype": "float64"}), ("uniform", 1234, {"shape": [3], "dtype": "float64"}),
    ("uniform", 1234, {"shape": [5], "minval": 0, "maxval": 10, "dtype": "int32"}),
    ("uniform", 1234, {"shape": [5], "minval": -7, "maxval": 1000, "dtype": "int64"}),
    ("normal", 7, {"shape": [1000]}), ("normal", 7, {"shape": [123457]}),
    ("normal", 2**40 + 3, {"shape": [10], "mean": 2.0, "stddev": 0.5}),
    ("uniform", 99, {"shape": [100001]}), ("normal", 99, {"shape": [3001], "dtype": "float64"}),
    # truncated normals: TF's per-group rejection layout (and the state advance after it)
    ("truncated_normal", 3, {"shape": [6]}), ("truncated_normal", 3, {"shape": [3]}),
    ("truncated_normal", 3, {"shape": [50001]}), ("truncated_normal", 3, {"shape": [2001], "dtype": "float64"}),
    ("truncated_normal", 8, {"shape": [7], "mean": -1.0, "stddev": 3.0}),
]
out = {"tensorflow": tf.__version__, "draws": []}
gens = {}
for method, seed, kw in draws:
    g = gens.setdefault(seed, tf.random.Generator.from_seed(seed))
    kw2 = dict(kw)
    if "dtype" in kw2:
        kw2["dtype"] = getattr(tf, kw2["dtype"])
    x = getattr(g, method)(**kw2).numpy()
    out["draws"].append({"method": method, "seed": seed, "kwargs": kw, "result": rec(x),
                         "state_after": [int(s) for s in g.state.numpy()]})
g = tf.random.Generator.from_seed(5)
parts = g.split(3)
out["split"] = {"seed": 5, "count": 3, "states": [[int(s) for s in p.state.numpy()] for p in parts],
                "parent_state": [int(s) for s in g.state.numpy()],
                "first_child_normal": parts[0].normal([4]).numpy().tolist()}
out["stateless"] = []
for method, kw in [("stateless_normal", {"shape": [6], "seed": [1, 2]}),
                   ("stateless_normal", {"shape": [2, 3], "seed": [2**40, -7], "mean": 1.0, "stddev": 2.0}),
                   ("stateless_normal", {"shape": [40001], "seed": [11, 12]}),
                   ("stateless_uniform", {"shape": [5], "seed": [3, 4]}),
                   ("stateless_uniform", {"shape": [3], "seed": [3, 4], "dtype": "float64"}),
                   ("stateless_uniform", {"shape": [5], "seed": [5, 6], "minval": 0, "maxval": 100, "dtype": "int32"}),
                   ("stateless_truncated_normal", {"shape": [3], "seed": [5, 0]}),
                   ("stateless_truncated_normal", {"shape": [7, 3], "seed": [1, 2]}),
                   ("stateless_truncated_normal", {"shape": [5], "seed": [1, 2], "dtype": "float64"}),
                   ("stateless_truncated_normal", {"shape": [30001], "seed": [9, 9], "mean": 2.0, "stddev": 0.5})]:
    kw2 = dict(kw)
    if "dtype" in kw2:
        kw2["dtype"] = getattr(tf, kw2["dtype"])
    out["stateless"].append({"method": method, "kwargs": kw, "result": rec(getattr(tf.random, method)(**kw2).numpy())})
path = os.path.join(os.path.dirname(__file__), "..", "data", "philox_reference.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", os.path.normpath(path))
