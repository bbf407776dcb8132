"""TF 2.21's tf.signal outputs and gradients for tests/test_signal21.py (cases in
tests/signal_cases.py). Run with real TensorFlow (the peers venv), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_signal_reference.py

Writes tests/data/signal21_tf_reference.npz: per case ``<name>/out`` (TF's result) and
``<name>/grad<i>`` (the gradient of signal_cases.loss w.r.t. input i), or ``<name>/grad_error``
where TF has no gradient (rfft3d, irfft3d: tapeflow's is checked by finite differences).
"""
import os
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import signal_cases as C  # noqa: E402

OUT = os.path.join(os.path.dirname(HERE), "data", "signal21_tf_reference.npz")


def main():
    data = {}
    for name, prog, inputs, diff in C.CASES:
        xs = [tf.constant(x) for x in inputs]
        with tf.GradientTape() as t:
            for i in diff:
                t.watch(xs[i])
            out = prog(tf, *xs)
            w, w2 = C.cotangent(out.numpy())
            y = C.loss(tf, out, w, w2)
        data[f"{name}/out"] = out.numpy()
        try:
            gs = t.gradient(y, [xs[i] for i in diff]) if diff else []
        except LookupError as e:   # (TF 2.21 registers no gradient for RFFT3D / IRFFT3D)
            data[f"{name}/grad_error"] = np.array(f"{type(e).__name__}: {str(e)[:300]}")
            print(name, "TF's gradient raises", type(e).__name__, str(e)[:120])
            continue
        for i, g in zip(diff, gs):
            data[f"{name}/grad{i}"] = g.numpy()
    np.savez_compressed(OUT, **data)
    print("wrote", OUT, len(data), "arrays")


if __name__ == "__main__":
    main()
