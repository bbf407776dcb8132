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


def _grad(fn, *args):
    """fn's value and the gradients of sum(fn * ct) for a seeded ct, wrt every argument."""
    ts = [tf.constant(a) for a in args]
    with tf.GradientTape(persistent=True) as t:
        for v in ts:
            t.watch(v)
        y = fn(*ts)
        ct = tf.constant(np.random.default_rng(7).standard_normal(y.shape.as_list()), y.dtype)
        s = tf.reduce_sum(y * ct)
    return {"out": _list(y), "ct": _list(ct), "grads": [_list(t.gradient(s, v)) for v in ts]}


def item2(rng):
    out = {}
    x = rng.standard_normal((4, 6)) * 3
    x[0, :3] = [-1000.0, 0.0, -np.inf]
    x[1, 2] = 40.0
    out["cumulative_logsumexp"] = [dict(axis=axis, exclusive=ex, reverse=rev, x=_list(x.astype(dt)),
                                        **_grad(lambda v: tf.math.cumulative_logsumexp(v, axis=axis, exclusive=ex,
                                                                                        reverse=rev), x.astype(dt)))
                                   for dt in (np.float32, np.float64) for axis in (0, 1, -1)
                                   for ex in (False, True) for rev in (False, True)]
    a = np.array([np.inf, np.nan, 2.0, -1.0, 3.0, 0.5, -np.inf], np.float32)
    b = np.array([0.0, 0.0, 0.0, 2.0, np.inf, -0.0, 1.0], np.float32)
    out["multiply_no_nan"] = dict(x=_list(a), y=_list(b), **_grad(tf.math.multiply_no_nan, a, b))
    tg = np.concatenate([[0.0, 1.0, 0.5, 2.0, 5.0], rng.uniform(0, 10, 15)]).astype(np.float32)
    li = rng.standard_normal(20).astype(np.float32)
    out["log_poisson_loss"] = [dict(full=full, targets=_list(tg), log_input=_list(li), **_grad(
        lambda t, l: tf.nn.log_poisson_loss(t, l, compute_full_loss=full), tg, li)) for full in (False, True)]
    lab = rng.uniform(0, 1, 20)
    lab[:4] = [0.0, 1.0, 1.0, 0.0]
    lo = rng.standard_normal(20) * 4
    lo[:4] = [100.0, -100.0, 0.0, 0.0]
    out["weighted_cross_entropy"] = [dict(pos_weight=pw, labels=_list(lab), logits=_list(lo), **_grad(
        lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, pw), lab, lo)) for pw in (0.5, 1.0, 3.0)]
    out["unravel_index"] = [
        {"indices": _list(np.array(i, dt)), "dims": _list(np.array(d, dt)),
         "out": _list(tf.unravel_index(tf.constant(i, dt), tf.constant(d, dt)))}
        for i, d, dt in [([0, 5, 11, 7], [3, 4], np.int32), (7, [3, 4], np.int32), ([23, 0, 17], [2, 3, 4], np.int64),
                         ([-1, -7], [3, 4], np.int32), ([4], [5], np.int32)]]
    out["saturate_cast"] = [
        {"x": _list(np.array(v, sdt)), "dtype": tdt, "out": _list(tf.dtypes.saturate_cast(tf.constant(v, sdt), tdt))}
        for v, sdt, tdt in [([300.0, -5.0, 1e10, 2.5], np.float32, "uint8"), ([300, -5, 100000], np.int32, "int8"),
                            ([3e9, -3e9, 1.5], np.float64, "int32")]]
    return out


def item4(rng):
    """tf.linalg: normalize, qr (q, r and the gradient of a loss of both), eigh/eigvalsh (the
    gradient of a loss invariant to the eigenvectors' signs: sum(e * we) + sum(v^2 * wv)),
    cholesky_solve, triangular_solve, lstsq."""
    out = {"normalize": [], "qr": [], "eigh": [], "solves": []}
    x = rng.standard_normal((3, 4))
    for ord_, axis in (("euclidean", None), ("euclidean", 1), (1, 0), (np.inf, -1), (3, 1), ("fro", (0, 1))):
        n, nrm = tf.linalg.normalize(tf.constant(x), ord=ord_, axis=axis)
        out["normalize"].append({"ord": ord_ if ord_ != np.inf else "inf", "axis": axis, "x": _list(x),
                                 "normalized": _list(n), "norm": _list(nrm)})
    for shape, full in (((4, 3), False), ((3, 3), False), ((2, 5, 3), False), ((3, 5), False), ((5, 3), True),
                        ((3, 5), True)):
        a = rng.standard_normal(shape)
        ta = tf.constant(a)
        with tf.GradientTape() as t:
            t.watch(ta)
            q, r = tf.linalg.qr(ta, full_matrices=full)
            wq = tf.constant(np.random.default_rng(1).standard_normal(q.shape.as_list()))
            wr = tf.constant(np.random.default_rng(2).standard_normal(r.shape.as_list()))
            loss = tf.reduce_sum(q * wq) + tf.reduce_sum(r * wr)
        rec = {"a": _list(a), "full": full, "q": _list(q), "r": _list(r), "wq": _list(wq), "wr": _list(wr)}
        try:
            rec["grad"] = _list(t.gradient(loss, ta))
        except Exception as e:   # (TF: no gradient for full_matrices with more rows than columns)
            rec["grad_error"] = type(e).__name__
        out["qr"].append(rec)
    for n in (3, 5):
        for dt in (np.float32, np.float64):
            m = rng.standard_normal((2, n, n))
            a = (m + np.swapaxes(m, -1, -2)).astype(dt)
            ta = tf.constant(a)
            with tf.GradientTape(persistent=True) as t:
                t.watch(ta)
                e, v = tf.linalg.eigh(ta)
                we = tf.constant(np.random.default_rng(3).standard_normal(e.shape.as_list()).astype(dt))
                wv = tf.constant(np.random.default_rng(4).standard_normal(v.shape.as_list()).astype(dt))
                loss = tf.reduce_sum(e * we) + tf.reduce_sum(v * v * wv)
                ev = tf.linalg.eigvalsh(ta)
                loss2 = tf.reduce_sum(ev * we)
            out["eigh"].append({"a": _list(a), "e": _list(e), "v": _list(v), "we": _list(we), "wv": _list(wv),
                                "grad": _list(t.gradient(loss, ta)), "grad_eigvalsh": _list(t.gradient(loss2, ta))})
    m = rng.standard_normal((4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    chol = np.linalg.cholesky(spd)
    b = rng.standard_normal((4, 2))
    tri = np.tril(rng.standard_normal((4, 4))) + 3 * np.eye(4) + np.triu(rng.standard_normal((4, 4)), 1) * 10
    A = rng.standard_normal((6, 3))
    B = rng.standard_normal((6, 2))
    W = rng.standard_normal((3, 6))
    out["solves"] = {"chol": _list(chol), "b": _list(b), "tri": _list(tri), "A": _list(A), "B": _list(B), "W": _list(W),
                     "cholesky_solve": _list(tf.linalg.cholesky_solve(tf.constant(chol), tf.constant(b))),
                     "triangular_solve": {f"{lo}_{adj}": _list(tf.linalg.triangular_solve(
                         tf.constant(tri), tf.constant(b), lower=lo, adjoint=adj))
                         for lo in (True, False) for adj in (False, True)},
                     "lstsq": {str(l2): _list(tf.linalg.lstsq(tf.constant(A), tf.constant(B), l2_regularizer=l2))
                               for l2 in (0.0, 0.5)},
                     "lstsq_wide": _list(tf.linalg.lstsq(tf.constant(W), tf.constant(B[:3]), l2_regularizer=0.1)),
                     "triangular_solve_grad": _grad(lambda m, r: tf.linalg.triangular_solve(m, r, lower=True),
                                                    tri, b),
                     "lstsq_grad": _grad(lambda a, r: tf.linalg.lstsq(a, r, l2_regularizer=0.5), A, B)}
    return out


def igamma(rng):
    a = np.concatenate([[0.5, 1.0, 2.0, 5.0, 0.0, -1.0, 1.0, 1.0, 3.0, 0.01], rng.uniform(0.05, 30, 200),
                        rng.uniform(100, 1000, 20)])
    x = np.concatenate([[1.0, 0.5, 3.0, 2.0, 1.0, 1.0, 0.0, np.inf, -1.0, 1e-5], a[10:] * rng.uniform(0.01, 3, 220)])
    out = {}
    for dt in (np.float32, np.float64):
        ta, tx = tf.constant(a.astype(dt)), tf.constant(x.astype(dt))
        rec = {"a": _list(a.astype(dt)), "x": _list(x.astype(dt)), "igamma": _list(tf.math.igamma(ta, tx)),
               "igammac": _list(tf.math.igammac(ta, tx))}
        xs = tf.constant(x[10:].astype(dt))
        with tf.GradientTape(persistent=True) as t:
            t.watch(xs)
            p = tf.math.igamma(tf.constant(a[10:].astype(dt)), xs)
            q = tf.math.igammac(tf.constant(a[10:].astype(dt)), xs)
        rec["grad_x_igamma"] = _list(t.gradient(p, xs))
        rec["grad_x_igammac"] = _list(t.gradient(q, xs))
        out[np.dtype(dt).name] = rec
    return out


def main():
    rng = np.random.default_rng(18)
    out = {"tensorflow": tf.__version__, "special": special(rng), "special_grads": grads(rng), "item2": item2(rng),
           "item4": item4(rng), "igamma": igamma(rng)}
    with open(OUT, "w") as f:
        json.dump(out, f)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
