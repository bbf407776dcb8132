"""TF 2.21's outputs for tf.math.cumprod (values and gradients, zeros included),
tf.searchsorted and tf.histogram_fixed_width / histogram_fixed_width_bins on seeded
random inputs with many values on bin edges, for tests/test_search_ops.py (which compares
tapeflow against tests/data/ops17_tf_reference.json, inputs included).

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_ops17_reference.py
"""
from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "ops17_tf_reference.json")


def _list(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "values": a.reshape(-1).tolist()}


def main():
    rng = np.random.default_rng(17)
    out = {"tensorflow": tf.__version__, "histogram": [], "searchsorted": [], "cumprod": []}
    vals = (rng.standard_normal(2000) * 3).astype(np.float32)
    vals[:50] = np.linspace(-1, 1, 50, dtype=np.float32)          # values on the bin edges of [-1, 1]
    vals[50:60] = [-np.inf, np.inf, 5.0, -3.0, 0.7, 0.1, 1e30, -1e30, 0.0, -0.0]
    out["histogram_values"] = _list(vals)
    for lo, hi, n in [(-1., 1., 10), (-3., 5., 7), (0., 1., 3), (-1., 1., 100), (0.1, 0.7, 6), (-2.5, 1e-3, 1)]:
        r = tf.constant([lo, hi], tf.float32)
        out["histogram"].append({
            "range": [lo, hi], "nbins": n,
            "counts": _list(tf.histogram_fixed_width(tf.constant(vals), r, nbins=n)),
            "bins": _list(tf.histogram_fixed_width_bins(tf.constant(vals), r, nbins=n))})
    iv = rng.integers(-10, 30, 500).astype(np.int32)
    out["histogram"].append({"values": _list(iv), "range": [0, 20], "nbins": 7,
                             "counts": _list(tf.histogram_fixed_width(tf.constant(iv), tf.constant([0, 20]), nbins=7,
                                                                      dtype=tf.int64))})
    for dt, shape_s, shape_v in [(np.int32, (3, 10), (3, 15)), (np.float32, (12,), (20,)),
                                 (np.float64, (2, 2, 8), (2, 2, 5))]:
        s = np.sort(rng.integers(0, 20, shape_s), axis=-1).astype(dt)
        v = rng.integers(-2, 22, shape_v).astype(dt)
        if dt != np.int32:
            v = v + rng.choice([0.0, 0.5], shape_v).astype(dt)
        for side in ("left", "right"):
            out["searchsorted"].append({"sorted": _list(s), "values": _list(v), "side": side,
                                        "out": _list(tf.searchsorted(tf.constant(s), tf.constant(v), side=side))})
    x = rng.uniform(-1.5, 1.5, (4, 5))
    x[1, 2] = x[3, 0] = x[3, 4] = 0.0                           # zeros: TF's gradient formula there
    x[2, 1] = x[2, 3] = 0.0                                     # two zeros in one row
    ct = rng.standard_normal((4, 5))
    for axis in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                t = tf.constant(x)
                with tf.GradientTape() as tape:
                    tape.watch(t)
                    y = tf.math.cumprod(t, axis=axis, exclusive=exclusive, reverse=reverse)
                    loss = tf.reduce_sum(y * ct)
                out["cumprod"].append({"x": _list(x), "ct": _list(ct), "axis": axis, "exclusive": exclusive,
                                       "reverse": reverse, "out": _list(y), "grad": _list(tape.gradient(loss, t))})
    with open(OUT, "w") as f:
        json.dump(out, f)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
