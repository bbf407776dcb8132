"""Keras 3.15 (TF 2.21 backend) on the keras.ops names added in wave 21 (branch keras21):
histogram, nan-quantiles, correlate, the windows, extract_sequences, fold/unfold, adaptive
pooling, view, lu_factor, jvp, rearrange. Each expression's value, dtype and shape (or its
error class), for tests/test_keras21.py (same encoding as make_keras_ops_reference.py).

    .venv-peers/bin/python tests/tf_reference/make_keras21_reference.py
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_keras_ops_reference import encode  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "keras21_ops_reference.json")

SETUP = """
h = np.array([0.5, 1.0, 1.5, 2.0, 3.25, 3.5, 4.0, -1.0, 0.0, 2.0], np.float32)
hi = np.array([1, 2, 2, 3, 7, 9, 0], np.int32)
n = np.array([[1., np.nan, 3., 4.], [np.nan, np.nan, np.nan, np.nan], [2., 8., np.nan, -1.]], np.float32)
n64 = np.array([5., np.nan, 1., 2., np.inf, 3.], np.float64)
c1 = np.array([1., 2., 3., 4., 5.], np.float32)
c2 = np.array([0., 1., 0.5], np.float32)
c3 = np.array([2., -1., 0.5, 1.], np.float32)
ci = np.array([1, 2, 3], np.int32)
s = np.arange(2 * 10, dtype=np.float32).reshape(2, 10)
u = (np.arange(2 * 3 * 5 * 6, dtype=np.float32).reshape(2, 3, 5, 6) - 40.) / 9.
p1 = (np.arange(2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3) * 37 % 11) / 5.
p2 = (np.arange(2 * 5 * 7 * 3, dtype=np.float32).reshape(2, 5, 7, 3) * 37 % 13) / 5.
p3 = (np.arange(1 * 4 * 5 * 6 * 2, dtype=np.float32).reshape(1, 4, 5, 6, 2) * 37 % 17) / 5.
vw = np.array([[1., -2., 3.5, 0.25]], np.float32)
vi = np.arange(12, dtype=np.int32).reshape(3, 4)
la = np.array([[1., 2., 4.], [3., 8., 1.], [6., 1., 7.]], np.float32)
lb = np.array([[[2., 1.], [4., 3.]], [[1., 5.], [2., 2.]]], np.float64)
T = ops.convert_to_tensor
img = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
"""

EXPRS = [
    # histogram
    "ops.histogram(h)", "ops.histogram(h, bins=4)", "ops.histogram(h, bins=3, range=(0., 3.))",
    "ops.histogram(hi, bins=5)", "ops.histogram(h, bins=2.5)", "ops.histogram(h, bins=-1)",
    "ops.histogram(h, range=(3., 1.))", "ops.histogram(h, range=[0., 1.])", "ops.histogram(n)",
    # nan-quantiles
    "ops.nanmedian(n)", "ops.nanmedian(n, axis=1)", "ops.nanmedian(n, axis=0, keepdims=True)",
    "ops.nanmedian(n64)", "ops.nanquantile(n, 0.3, axis=1)", "ops.nanquantile(n, [0.1, 0.75], axis=1)",
    "ops.nanquantile(n, 0.25)", "ops.nanquantile(n, [0.2, 0.9], axis=0, keepdims=True)",
    "ops.nanquantile(n, 0.4, axis=1, method='lower')", "ops.nanquantile(n, 0.4, axis=1, method='higher')",
    "ops.nanquantile(n, 0.4, axis=1, method='nearest')", "ops.nanquantile(n, 0.4, axis=1, method='midpoint')",
    "ops.nanpercentile(n, 40., axis=1)", "ops.nanpercentile(n64, [10., 50., 90.])",
    "ops.nanmedian(vi)", "ops.nanquantile(vi, 0.5, axis=0)", "ops.nanmedian(n, axis=1, keepdims=True)",
    # correlate
    "ops.correlate(c1, c2)", "ops.correlate(c1, c2, mode='same')", "ops.correlate(c1, c2, mode='full')",
    "ops.correlate(c1, c3, mode='same')", "ops.correlate(c3, c1, mode='full')", "ops.correlate(ci, ci)",
    "ops.correlate(c1, c2, mode='bad')", "ops.correlate(s, c2)",
    # windows
    "ops.bartlett(0)", "ops.bartlett(1)", "ops.bartlett(6)", "ops.bartlett(7)", "ops.blackman(1)",
    "ops.blackman(7)", "ops.blackman(6)", "ops.hamming(1)", "ops.hamming(6)", "ops.hamming(7)", "ops.hanning(1)",
    "ops.hanning(6)", "ops.hanning(7)", "ops.kaiser(1, 5.0)", "ops.kaiser(7, 5.0)", "ops.kaiser(6, 14.)",
    "ops.kaiser(5, 0.)", "ops.blackman(0)", "ops.hamming(0)",
    # extract_sequences
    "ops.extract_sequences(c1, 2, 1)", "ops.extract_sequences(s, 4, 3)", "ops.extract_sequences(s, 10, 1)",
    "ops.extract_sequences(s, 11, 1)",
    # unfold / fold
    "ops.unfold(u, 2)", "ops.unfold(u, (2, 3), stride=2)", "ops.unfold(u, 3, padding=1, dilation=(1, 2))",
    "ops.fold(ops.unfold(u, 2), (5, 6), 2)", "ops.fold(ops.unfold(u, (2, 3), stride=2), (5, 6), (2, 3), stride=2)",
    "ops.fold(ops.unfold(u, 3, padding=1, dilation=(1, 2)), (5, 6), 3, padding=1, dilation=(1, 2))",
    # adaptive pooling (channels_last default)
    "ops.adaptive_average_pool(T(p1), 3)", "ops.adaptive_max_pool(T(p1), 3)", "ops.adaptive_average_pool(T(p1), 7)",
    "ops.adaptive_average_pool(T(p2), (2, 3))", "ops.adaptive_max_pool(T(p2), (3, 4))", "ops.adaptive_max_pool(T(p2), 2)",
    "ops.adaptive_average_pool(T(p3), (2, 3, 4))", "ops.adaptive_max_pool(T(p3), (3, 2, 4))",
    "ops.adaptive_average_pool(T(p2), (2, 3), data_format='channels_first')",
    "ops.adaptive_max_pool(T(p1), 2, data_format='channels_first')", "ops.adaptive_average_pool(T(c1), 2)",
    # view
    "ops.view(vw, 'int32')", "ops.view(vw, 'float16')", "ops.view(vw, 'uint8')", "ops.view(vi, 'float64')",
    "ops.view(vi, 'int16')", "ops.view(vi, 'float32')", "ops.view(vw, 'float64')", "ops.view(c1, 'float64')",
    "ops.view(vi)",
    # lu_factor
    "ops.lu_factor(la)", "ops.lu_factor(lb)", "ops.lu_factor(lb[0])", "ops.lu_factor(lb[1])", "ops.lu_factor(c1)",
    # jvp
    "ops.jvp(lambda x: ops.sin(x) * x, (T(c1),), (T(c2[[0, 1, 2, 0, 1]]),))",
    "ops.jvp(lambda x, y: ops.matmul(x, y), (T(la), T(la.T)), (T(la * 0 + 1), T(la)))",
    "ops.jvp(lambda x: (ops.exp(x), [ops.sum(x * x)]), (T(c2),), (T(c2 + 1.),))",
    "ops.jvp(lambda x: (ops.tanh(x), ops.sum(x)), (T(c2),), (T(c2 * 2.),), has_aux=True)",
    # rearrange
    "ops.rearrange(img, 'b h w c -> b c h w')", "ops.rearrange(img, 'b h w c -> (b h) w c')",
    "ops.rearrange(img, 'b h w c -> h (b w) c')", "ops.rearrange(img, 'b h w c -> b (c h w)')",
    "ops.rearrange(img, 'b (h1 h) (w1 w) c -> (b h1 w1) h w c', h1=2, w1=2)",
    "ops.rearrange(img, 'b (h h1) (w w1) c -> b h w (c h1 w1)', h1=2, w1=3)",
    "ops.rearrange(img, 'b h w c -> b h w')",
]


def main():
    import keras
    import numpy as np
    from keras import ops
    ns = {"ops": ops, "np": np}
    exec(SETUP, ns)
    out = []
    for expr in EXPRS:
        try:
            rec = encode(eval(expr, ns))
        except Exception as e:  # noqa: BLE001
            rec = {"error": type(e).__name__, "message": str(e)[:200]}
        out.append({"expr": expr, "out": rec})
    with open(OUT, "w") as fh:
        json.dump({"keras": keras.__version__, "setup": SETUP, "cases": out}, fh, indent=0)
    print("wrote", OUT, len(out), "cases,", sum("error" in r["out"] for r in out), "errors")


if __name__ == "__main__":
    main()
