"""TF 2.21's outputs for the ops added in wave 18 (branch ops18), for tests/test_special.py and
tests/test_ops18.py, which compare tapeflow against tests/data/ops18_tf_reference.json (inputs
included): tf.math's special functions (lgamma, digamma, polygamma, erfc, erfinv, nextafter:
values over float32/float64 incl. poles, infinities and nan, gradients to second order).

Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_ops18_reference.py
"""
from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "ops18_tf_reference.json")


def _list(a):
    a = np.asarray(a)
    v = a.reshape(-1).tolist()
    if a.dtype.kind == "f":   # JSON has no inf/nan: strings
        v = [x if np.isfinite(x) else str(x) for x in v]
    return {"dtype": a.dtype.name, "shape": list(a.shape), "values": v}


EDGES = [-np.inf, -1e10 + 0.5, -50.5, -3.0, -2.5, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-30, 1e-8, 0.5, 1.0,
         1.4616321449683622, 2.0, 3.0, 9.99, 10.0, 30.0, 1e5, 1e10, 1e30, np.inf, np.nan]


def special(rng):
    out = []
    for dt in (np.float32, np.float64):
        xs = np.concatenate([EDGES, rng.uniform(-20, 20, 300), rng.uniform(0, 3, 200),
                             np.exp(rng.uniform(-20, 60, 100))]).astype(dt)
        ys = np.concatenate([[-1.0, -1 + 1e-7, -0.999, 0.0, -0.0, 0.3, 0.9999999, 1.0, 1.5, -2.0, np.nan],
                             rng.uniform(-1, 1, 300)]).astype(dt)
        ez = np.concatenate([[-30.0, -6.0, 0.0, 0.4, 0.5, 0.51, 3.99, 4.0, 4.01, 10.0, 26.0, np.inf, -np.inf, np.nan],
                             rng.uniform(-6, 26, 300)]).astype(dt)
        t = tf.constant(xs)
        rec = {"dtype": np.dtype(dt).name, "x": _list(xs), "y": _list(ys), "z": _list(ez),
               "lgamma": _list(tf.math.lgamma(t)), "digamma": _list(tf.math.digamma(t)),
               "erfc": _list(tf.math.erfc(tf.constant(ez))), "erfinv": _list(tf.math.erfinv(tf.constant(ys))),
               # (TF's polygamma sums a Hurwitz zeta series from x upwards: |x| + 9 terms, so no -1e10 here)
               "polygamma": {str(n): _list(tf.math.polygamma(tf.constant(float(n), dt), tf.constant(np.maximum(xs, -60))))
                             for n in (1, 2, 3)}}
        toward = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan], rng.uniform(-20, 20, len(xs) - 5)]).astype(dt)
        rec["toward"] = _list(toward)
        rec["nextafter"] = _list(tf.math.nextafter(t, tf.constant(toward)))
        out.append(rec)
    return out


def grads(rng):
    """First and second derivatives (sum of outputs) at points away from the poles."""
    out = []
    for dt in (np.float32, np.float64):
        x = np.concatenate([[-2.5, -0.5, 0.5, 1.0, 3.0, 25.0], rng.uniform(0.1, 8, 20)]).astype(dt)
        e = rng.uniform(-0.95, 0.95, 20).astype(dt)
        rec = {"dtype": np.dtype(dt).name, "x": _list(x), "e": _list(e)}
        for name, inp in (("lgamma", x), ("digamma", x), ("erfc", x), ("erfinv", e)):
            v = tf.constant(inp)
            with tf.GradientTape() as t2:
                t2.watch(v)
                with tf.GradientTape() as t1:
                    t1.watch(v)
                    y = getattr(tf.math, name)(v)
                g = t1.gradient(y, v)
            rec[name] = {"grad": _list(g), "grad2": _list(t2.gradient(g, v))}
        v = tf.constant(x)
        with tf.GradientTape() as t1:
            t1.watch(v)
            y = tf.math.polygamma(tf.constant(2.0, dt), v)
        rec["polygamma2"] = {"grad": _list(t1.gradient(y, v))}
        out.append(rec)
    return out


def main():
    rng = np.random.default_rng(18)
    out = {"tensorflow": tf.__version__, "special": special(rng), "special_grads": grads(rng)}
    with open(OUT, "w") as f:
        json.dump(out, f)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
