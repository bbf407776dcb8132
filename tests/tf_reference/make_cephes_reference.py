"""Records TF 2.21's special functions for tests/test_cephes.py: tf.math.special's Bessel functions,
dawsn, expint, fresnel_cos/sin, spence on a sweep (0, tiny, large, negative, inf, nan) in float16 (the
Bessel ones: TF's other kernels have no half on CPU), float32 and float64; their first and second
gradients (float64); betainc and zeta on grids with their gradients; sobol_sample.

Run with the peers venv (it has TensorFlow), from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_cephes_reference.py
Writes tests/data/cephes_tf_reference.npz (keys "<what>/<dtype>").
"""
import os

import numpy as np
import tensorflow as tf

UNARY = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e",
         "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]

mag = np.concatenate([[0.0, 1e-300, 1e-30, 1e-10, 1e-5, 1e-3], np.linspace(0.01, 12, 240), np.geomspace(12, 800, 60),
                      [1e3, 1e5, 36973.0, 36975.0, 1e9, 1e10, 1e20, 1e300]])
edges = np.array([np.inf, -np.inf, np.nan, -0.0, 1.0, 2.0, 3.25, 6.25, 5.0, 8.0, 1.5, 0.5, 2.5625 ** 0.5])
sweep = np.concatenate([mag, -mag[1:], edges])
out = {"sweep": sweep}
for dt in ("float16", "float32", "float64"):
    x = tf.constant(sweep.astype(dt))
    out[f"x/{dt}"] = x.numpy()
    for fn in UNARY:
        if dt == "float16" and not fn.startswith("bessel"):
            continue
        out[f"{fn}/{dt}"] = getattr(tf.math.special, fn)(x).numpy()
        if dt != "float64":
            # TF's float64 kernel at the same (rounded) inputs: the accurate value a float32 result is compared with
            out[f"{fn}/float64_at_{dt}"] = getattr(tf.math.special, fn)(tf.cast(x, tf.float64)).numpy()

# TF's float32 i0 past exp's float32 overflow (88.72), below i0's own (91.9)
out["i0_89/float32"] = tf.math.special.bessel_i0(tf.constant([89.0, 90.0, 91.0], tf.float32)).numpy()

# gradients (float64), first and second order, at points inside each function's domain
gx = np.array([-7.5, -2.0, -0.3, 0.0, 0.2, 0.9, 1.0, 1.7, 2.0, 3.0, 4.5, 6.0, 9.0, 20.0])
out["grad_x"] = gx
for fn in UNARY:
    v = tf.constant(gx)
    with tf.GradientTape() as t2:
        t2.watch(v)
        with tf.GradientTape() as t1:
            t1.watch(v)
            y = getattr(tf.math.special, fn)(v)
        g = t1.gradient(y, v)
    g2 = t2.gradient(g, v)
    out[f"grad/{fn}"] = g.numpy()
    out[f"grad2/{fn}"] = g2.numpy() if g2 is not None else np.full_like(gx, np.nan)

# betainc on a grid (a, b in a log grid, x in [0, 1]), edges, and its x-gradient
rng = np.random.default_rng(0)
ab = np.geomspace(1e-3, 1e3, 13)
a, b, xv = np.meshgrid(ab, ab, np.array([0.0, 1e-6, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0]), indexing="ij")
a, b, xv = a.ravel(), b.ravel(), xv.ravel()
a = np.concatenate([a, rng.uniform(0.1, 50, 300), [1.0, 1.0, -1.0, 0.0, np.nan, 1.0, 1.0, 2.0, np.inf]])
b = np.concatenate([b, rng.uniform(0.1, 50, 300), [1.0, 0.0, 1.0, 1.0, 1.0, np.nan, 1.0, np.inf, 2.0]])
xv = np.concatenate([xv, rng.uniform(0, 1, 300), [-0.1, 0.5, 0.5, 0.5, 0.5, 0.5, 1.1, 0.5, 0.5]])
out["betainc_abx"] = np.stack([a, b, xv])
for dt in ("float32", "float64"):
    out[f"betainc/{dt}"] = tf.math.betainc(a.astype(dt), b.astype(dt), xv.astype(dt)).numpy()
ga, gb, gxv = (np.array([0.5, 2.0, 3.0, 1.0, 7.5]), np.array([1.5, 2.0, 0.7, 1.0, 2.5]),
               np.array([0.3, 0.6, 0.95, 0.5, 0.1]))
v = tf.constant(gxv)
with tf.GradientTape() as t1:
    t1.watch(v)
    y = tf.math.betainc(tf.constant(ga), tf.constant(gb), v)
out["betainc_grad_abx"] = np.stack([ga, gb, gxv])
out["betainc_grad/x"] = t1.gradient(y, v).numpy()

# zeta(x, q): x > 1 on a grid of q (positive, negative, integers), edges; the q-gradient
zx = np.array([1.0, 1.0001, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 100.0, 0.5, -1.0, np.inf, np.nan])
zq = np.array([1e-3, 0.3, 1.0, 2.0, 7.5, 100.0, 1e6, 0.0, -1.0, -1.5, -2.7, np.inf, np.nan])
X, Q = np.meshgrid(zx, zq, indexing="ij")
out["zeta_xq"] = np.stack([X.ravel(), Q.ravel()])
for dt in ("float32", "float64"):
    out[f"zeta/{dt}"] = tf.math.zeta(X.ravel().astype(dt), Q.ravel().astype(dt)).numpy()
gzx, gzq = np.array([1.5, 2.0, 3.0, 2.5]), np.array([0.5, 1.0, 2.5, 10.0])
v = tf.constant(gzq)
with tf.GradientTape() as t1:
    t1.watch(v)
    y = tf.math.zeta(tf.constant(gzx), v)
out["zeta_grad_xq"] = np.stack([gzx, gzq])
out["zeta_grad/q"] = t1.gradient(y, v).numpy()

# sobol_sample: TF's exact points
for dim, n, skip, dt in ((1, 9, 0, "float32"), (3, 33, 0, "float32"), (8, 70, 0, "float64"), (5, 10, 1000, "float64"),
                         (12, 20, 7, "float32"), (300, 40, 0, "float64"), (1111, 6, 2 ** 20 - 3, "float64")):
    out[f"sobol/{dim}_{n}_{skip}_{dt}"] = tf.math.sobol_sample(dim, n, skip=skip, dtype=dt).numpy()

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cephes_tf_reference.npz")
np.savez_compressed(path, **out)
print("wrote", os.path.normpath(path), len(out), "arrays")
