"""Records TF 2.21 (Keras 3) numbers for tests/test_keras_reference.py: losses, metrics and
optimizer trajectories that tapeflow's tests compare against (tests cannot import TF).

Run with the peers venv (it has TensorFlow), from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_keras_reference.py
Writes tests/data/keras_reference.json. Inputs are stored with the outputs, so the test
feeds exactly what TF saw.
"""
import json
import os

import numpy as np
import tensorflow as tf

K = tf.keras
rng = np.random.default_rng(17)


def L(a):
    return np.asarray(a).tolist()


def f32(*shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


out = {"tensorflow": tf.__version__}

# -- losses: each case = (name, y_true, y_pred, sample_weight); function values per sample,
# class values under each reduction, with and without a sample weight
probs_t = f32(5, 4, lo=0, hi=1)
probs_t[0, 1] = 0.0                      # a zero label: clipped to eps in kl_divergence
probs_p = f32(5, 4, lo=0, hi=1)
onehot = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 5)]
binary = (rng.random((5, 4)) > 0.5).astype(np.float32)
signs = binary * 2 - 1
counts = rng.integers(0, 5, (5, 4)).astype(np.float32)
zero_row = f32(5, 4)
zero_row[2] = 0.0                        # a zero vector: cosine similarity 0, not NaN
cases = [
    ("kl_divergence", "KLDivergence", probs_t, probs_p, {}),
    ("cosine_similarity", "CosineSimilarity", f32(5, 4), zero_row, {}),
    ("cosine_similarity", "CosineSimilarity", f32(4, 3, 2), f32(4, 3, 2), {"axis": 1}),
    ("hinge", "Hinge", binary, f32(5, 4), {}),          # 0/1 labels converted to -1/+1
    ("hinge", "Hinge", signs, f32(5, 4), {}),
    ("hinge", "Hinge", probs_t, f32(5, 4), {}),         # not binary: used as given
    ("squared_hinge", "SquaredHinge", binary, f32(5, 4), {}),
    ("squared_hinge", "SquaredHinge", signs, f32(5, 4), {}),
    ("categorical_hinge", "CategoricalHinge", onehot, f32(5, 4), {}),
    ("poisson", "Poisson", counts, f32(5, 4, lo=0, hi=3), {}),
    ("log_cosh", "LogCosh", f32(5, 4), f32(5, 4), {}),
    ("hinge", "Hinge", f32(6, lo=0, hi=1).round(), f32(6, 1), {}),   # (batch,) vs (batch, 1)
    ("poisson", "Poisson", counts[:, 0], f32(5, 1, lo=0, hi=3), {}),
]
sw = np.array([1.0, 0.5, 0.0, 2.0, 1.5], np.float32)
out["losses"] = []
for fname, cname, yt, yp, kw in cases:
    fn = getattr(K.losses, fname) if hasattr(K.losses, fname) else K.losses.get(fname)
    rec = {"fn": fname, "cls": cname, "kwargs": kw, "y_true": L(yt), "y_pred": L(yp),
           "per_sample": L(fn(yt, yp, **kw)), "classes": {}}
    w = sw[:yt.shape[0]] if yt.shape[0] == 5 else None
    for red in ("sum_over_batch_size", "sum", "none"):
        obj = getattr(K.losses, cname)(reduction=red, **kw)
        rec["classes"][red] = L(obj(yt, yp))
        if w is not None:
            rec["classes"][red + "+sw"] = L(obj(yt, yp, sample_weight=w))
    rec["sample_weight"] = L(sw) if yt.shape[0] == 5 else None
    rec["config"] = getattr(K.losses, cname)(**kw).get_config()
    rec["config"].pop("dtype", None)
    out["losses"].append(rec)

if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "keras_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", os.path.normpath(path))
