"""Fit Y = W*x + b by gradient descent, the TF2-eager way, made fast.

x = 0, 0.1, ..., 99.9 and y = x + 20 sin(x/10) + 15; W = b = 0; mean-squared
loss; lr 1e-4; 100,000 steps. Three ways, same code:

    python examples/linear_regression.py                 # whole loop compiled (fori_loop)
    python examples/linear_regression.py --mode step     # compiled step, Python loop
    python examples/linear_regression.py --mode eager    # plain eager (slow: ~1 min)
    python examples/linear_regression.py --standardize   # rescale x first: ~100 steps at lr 0.1

With --standardize, x is centred and scaled (x' = (x - mean) / std), which makes
the problem well conditioned; W and b are mapped back to the original scale.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import tapeflow as tf


def data():
    x = np.arange(0.0, 100.0, 0.1).astype(np.float32)  # (1000,)
    y = (x + 20 * np.sin(x / 10) + 15).astype(np.float32)
    return x, y


def fit(x, y, steps=100_000, lr=1e-4, mode="loop"):
    """Returns (W, b, final loss, seconds). x, y: (n,) float32."""
    W = tf.Variable(0.0, name="W")
    b = tf.Variable(0.0, name="b")
    X, Y = tf.constant(x), tf.constant(y)

    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(W * X + b - Y))
        dW, db = tape.gradient(loss, [W, b])
        W.assign_sub(lr * dW)
        b.assign_sub(lr * db)
        return loss

    t0 = time.perf_counter()
    if mode == "eager":
        for _ in range(steps):
            loss = train_step()
    elif mode == "step":
        step = tf.function(train_step)
        for _ in range(steps):
            loss = step()
    elif mode == "loop":
        @tf.function
        def train(n):
            return tf.fori_loop(0, n, lambda i, last: train_step(), tf.constant(0.0))
        loss = train(steps)
    else:
        raise ValueError(f"unknown mode {mode!r}: use loop, step or eager")
    return float(W.numpy()), float(b.numpy()), float(loss), time.perf_counter() - t0


def fit_numpy(x, y, steps=100_000, lr=1e-4):
    """The hand-written NumPy reference loop (float32)."""
    W = np.float32(0)
    b = np.float32(0)
    lr = np.float32(lr)
    for _ in range(steps):
        e = W * x + b - y
        W -= lr * np.mean(2 * e * x)
        b -= lr * np.mean(2 * e)
    return float(W), float(b)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["loop", "step", "eager"], default="loop")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--standardize", action="store_true", help="rescale x first (converges in ~100 steps)")
    args = ap.parse_args(argv)
    x, y = data()
    if args.standardize:
        mu, sd = float(x.mean()), float(x.std())
        xs = ((x - mu) / sd).astype(np.float32)
        steps, lr = args.steps or 100, args.lr or 0.1
        Ws, bs, loss, secs = fit(xs, y, steps, lr, args.mode)
        # y = Ws * (x - mu)/sd + bs  =>  W = Ws/sd, b = bs - Ws*mu/sd
        W, b = Ws / sd, bs - Ws * mu / sd
    else:
        steps, lr = args.steps or 100_000, args.lr or 1e-4
        W, b, loss, secs = fit(x, y, steps, lr, args.mode)
    print(f"W = {W:.6f}  b = {b:.6f}  loss = {loss:.4f}  ({steps} steps, mode {args.mode}"
          f"{', standardized' if args.standardize else ''}) in {secs:.3f} s")
    return W, b, loss


if __name__ == "__main__":
    main()
