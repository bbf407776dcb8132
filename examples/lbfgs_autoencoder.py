"""UFLDL sparse autoencoder (784-196-784) trained by L-BFGS, the Eager
Execution announcement's benchmark program.

The model and cost are UFLDL's (http://ufldl.stanford.edu/wiki, "Sparse
Autoencoder" and its "Vectorization" exercise on MNIST: 784 visible, 196
hidden, sigmoid units, rho = 0.1, beta = 3, lambda = 3e-3), with TIED weights:
the decoder's weight matrix is the encoder's transpose, W2 = W1^T (biases are
separate). UFLDL's cost, for m images x_i:

    J = (1/m) sum_i 1/2 ||x_hat_i - x_i||^2                 (squared error)
      + lambda/2 (sum W1^2 + sum W2^2)                       (weight decay)
      + beta sum_j KL(rho || rho_hat_j)                      (sparsity)

    rho_hat_j = (1/m) sum_i a_j(x_i)   (hidden unit j's mean activation)
    KL(rho || r) = rho log(rho / r) + (1 - rho) log((1 - rho) / (1 - r))

With tied weights the weight-decay sum counts W twice (once per layer), as
UFLDL's sum over both layers' weights does. Initialisation is UFLDL's:
W ~ U(-r, r), r = sqrt(6 / (784 + 196 + 1)), biases 0.

The objective (value and gradients of W, b1, b2) is one compiled
``tapeflow.function``; ``tapeflow.optimizers.LBFGS`` (PyTorch's algorithm)
runs on it. The three configurations of the announcement:

    python examples/lbfgs_autoencoder.py --config 60k-h5     # batch 60,000, history 5
    python examples/lbfgs_autoencoder.py --config 60k-h100   # batch 60,000, history 100
    python examples/lbfgs_autoencoder.py --config 10k-h100   # batch 10,000, history 100

Images: Fashion-MNIST's training images scaled to [0, 1] when the files are
present (``make data``), else synthetic 784-pixel images (``--data``).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import tapeflow as tf

VISIBLE, HIDDEN = 784, 196
RHO, BETA, LAMBDA = 0.1, 3.0, 3e-3
CONFIGS = {"60k-h5": (60000, 5), "60k-h100": (60000, 100), "10k-h100": (10000, 100)}


def synthetic_images(n, seed=0):
    """784-pixel float32 images in [0, 1): sparse bright strokes on a dark
    background, roughly MNIST's statistics (most pixels near 0)."""
    rs = np.random.default_rng(seed)
    return (rs.random((n, VISIBLE), dtype=np.float32) ** 4).astype(np.float32)


def load_images(n, data="auto", seed=0):
    """(X of shape (n, 784) float32 in [0, 1], source name)."""
    if data in ("auto", "fashion_mnist", "mnist"):
        from tapeflow.keras import datasets
        try:
            loader = datasets.mnist if data == "mnist" else datasets.fashion_mnist
            (x_train, _), _ = loader.load_data()
            if n > len(x_train):
                raise ValueError(f"--batch {n} is larger than the {len(x_train)} training images")
            return (x_train[:n].reshape(n, VISIBLE).astype(np.float32) / np.float32(255)), (
                "Fashion-MNIST" if data != "mnist" else "MNIST")
        except FileNotFoundError:
            if data != "auto":
                raise
    return synthetic_images(n, seed), "synthetic"


def initial_params(seed=0):
    rs = np.random.default_rng(seed)
    r = np.sqrt(6.0 / (VISIBLE + HIDDEN + 1))
    W = rs.uniform(-r, r, (VISIBLE, HIDDEN)).astype(np.float32)
    return W, np.zeros(HIDDEN, np.float32), np.zeros(VISIBLE, np.float32)


def sparse_autoencoder_cost(W, b1, b2, X, rho=RHO, beta=BETA, lam=LAMBDA):
    m = X.shape[0]
    a2 = tf.sigmoid(tf.matmul(X, W) + b1)
    a3 = tf.sigmoid(tf.matmul(a2, W, transpose_b=True) + b2)   # tied: W2 = W^T
    squared_error = 0.5 * tf.reduce_sum(tf.square(a3 - X)) / m
    weight_decay = 0.5 * lam * (2.0 * tf.reduce_sum(tf.square(W)))  # sum W1^2 + sum W2^2, W2 = W^T
    rho_hat = tf.reduce_mean(a2, axis=0)
    kl = tf.reduce_sum(rho * tf.math.log(rho / rho_hat) + (1 - rho) * tf.math.log((1 - rho) / (1 - rho_hat)))
    return squared_error + weight_decay + beta * kl


def make_objective(X, variables, compiled=True, **hyper):
    """closure() -> (J, [dJ/dW, dJ/db1, dJ/db2]) at the variables' values."""
    X = tf.constant(X)

    def value_and_gradients():
        with tf.GradientTape() as tape:
            loss = sparse_autoencoder_cost(*variables, X, **hyper)
        return loss, tape.gradient(loss, variables)

    # jit_compile=True: every evaluation runs the fused tier's code, from the first. L-BFGS
    # builds its curvature pairs from differences of gradients (y = g1 - g0, after a first
    # step of length 1/|g|_1), where rounding that changes between two calls does not cancel:
    # a function that tiers up after its first calls mixed the NumPy kernels' float32
    # rounding (bias gradients summed over 60,000 rows row by row: 3e-5 relative) with the
    # fused tier's (float64 sums: 2e-7), and the 3rd loss of the 60k benchmark case moved
    # 0.045 from the float64 run (0.068 on the first tier alone, 6.6e-4 fused throughout;
    # PyTorch 6e-4)
    return tf.function(value_and_gradients, jit_compile=True) if compiled else value_and_gradients


def make_optimizer(variables, history, line_search=None):
    # tolerances 0: run every iteration asked for (as the benchmark's PyTorch side)
    return tf.optimizers.LBFGS(variables, lr=1.0, max_iter=1, history_size=history, line_search_fn=line_search,
                               tolerance_grad=0.0, tolerance_change=0.0)


def train(X, history, iters, seed=0, line_search=None, compiled=True, log=print):
    """Runs ``iters`` L-BFGS iterations; returns (variables, losses, seconds per iteration)."""
    variables = [tf.Variable(p) for p in initial_params(seed)]
    closure = make_objective(X, variables, compiled=compiled)
    opt = make_optimizer(variables, history, line_search)
    losses, times = [], []
    for it in range(iters):
        t0 = time.perf_counter()
        losses.append(float(opt.step(closure)))   # the loss at the start of this iteration
        times.append(time.perf_counter() - t0)
        if log and (it % 10 == 0 or it == iters - 1):
            log(f"iter {it:4d}  J {losses[-1]:.6f}  {times[-1]:.3f} s")
    return variables, losses, times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="10k-h100")
    ap.add_argument("--batch", type=int, help="number of images (overrides --config's)")
    ap.add_argument("--history", type=int, help="L-BFGS history size (overrides --config's)")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--data", choices=["auto", "fashion_mnist", "mnist", "synthetic"], default="auto")
    ap.add_argument("--line-search", choices=["none", "strong_wolfe"], default="none")
    ap.add_argument("--eager", action="store_true", help="do not compile the objective")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    batch, history = CONFIGS[args.config]
    batch, history = args.batch or batch, args.history or history
    X, source = load_images(batch, args.data, args.seed)
    print(f"UFLDL sparse autoencoder 784-196-784 (tied weights), {source} batch {batch}, L-BFGS history {history}")
    _, losses, times = train(X, history, args.iters, args.seed,
                             None if args.line_search == "none" else "strong_wolfe", not args.eager)
    steady = times[2:] or times
    print(f"J: {losses[0]:.6f} -> {losses[-1]:.6f} in {len(losses)} iterations; "
          f"{np.median(steady):.3f} s per iteration (median after the first two)")
    return losses


if __name__ == "__main__":
    main()
