"""autoencoder: forward + backward of a 784-200-784 sigmoid autoencoder.

Batch 10,000 (random inputs in [0, 1) from a fixed seed), both layers
sigmoid, MSE against the input; one timed call computes the loss and the
gradients w.r.t. all four weight arrays (no update). FLOPs counted: the five
matmuls (2 forward, 3 backward; no gradient w.r.t. the input), 5 * 2*B*784*200.
% of peak is against the machine's float32 matmul peak measured with NumPy
(2048^3), as the brief asks, and against the best 2048^3 rate of any of the
frameworks (NumPy's OpenBLAS may use AVX2 kernels where oneDNN/Eigen use
AVX-512, so the NumPy "peak" can be beaten); each framework's own rate is in
the notes and the JSON.
"""
from __future__ import annotations

import time

import numpy as np

from benchmarks.common import Bench, Impl, mlp_params, rng
from benchmarks.workloads import _npnn as nn
from benchmarks.workloads._peerutil import jax_mlp, named, torch_mlp
from benchmarks.workloads._tfapi import dense_mlp, import_tf, variables

NAME = "autoencoder"
TITLE = "Autoencoder 784-200-784 (sigmoid), forward + backward, batch 10,000"
SIZES = [784, 200, 784]
ACTS = ["sigmoid", "sigmoid"]


def cases(mode):
    B = {"full": 10_000, "quick": 10_000, "tiny": 64}[mode]
    flops = 5 * 2 * B * SIZES[0] * SIZES[1]
    return [{"name": f"batch{B}", "title": f"784-200-784 sigmoid, MSE, gradients of all weights, batch {B:,}",
             "unit": "step", "display": "ms", "batch": B, "flops_per_unit": flops,
             "peak_n": 2048 if mode != "tiny" else 256,
             "columns": [["GFLOP/s", "gflops", "{:.0f}"], ["% of NumPy matmul peak", "pct_peak", "{:.0f}%"],
                         ["% of best matmul peak", "pct_best_peak", "{:.0f}%"]]}]


def make_data(case, seed):
    rs = rng(seed)
    d = {f"w{i}": w for i, w in enumerate(mlp_params(rs, SIZES))}
    d["x"] = rs.random((case["batch"], SIZES[0]), dtype=np.float32)
    return d


def weights(data):
    return [data[f"w{i}"] for i in range(4)]


def np_grads(params, x):
    out, cache = nn.mlp_forward(params, x, ACTS)
    diff = out - x  # (out itself is needed by the backward pass)
    loss = np.mean(np.square(diff))  # pairwise summation (a float32 BLAS dot drifts at 7.8M terms)
    diff *= 2.0 / diff.size
    grads = nn.mlp_backward(params, cache, ACTS, diff)
    return loss, grads


def pack(loss, grads):
    out = named(grads, "g")
    out["loss"] = np.asarray(loss)
    return out


def reference(case, data):
    params = nn.as_dtype(weights(data), np.float64)
    return pack(*np_grads(params, data["x"].astype(np.float64)))


TOL = 2e-4


def build_numpy(case, data):
    params, x = weights(data), data["x"]
    return Bench(step=lambda: np_grads(params, x), check=lambda: pack(*np_grads(params, x)))


def _tf(framework, how):
    def build(case, data):
        tf = import_tf(framework)
        params = variables(tf, weights(data), "w")
        x = tf.constant(data["x"])

        def step(x):
            with tf.GradientTape() as tape:
                out = dense_mlp(tf, params, x, ACTS)
                loss = tf.reduce_mean(tf.square(out - x))
            return loss, tape.gradient(loss, params)

        fn = tf.function(step) if how == "function" else step
        return Bench(step=lambda: fn(x), sync=lambda r: r[0].numpy(),
                     check=lambda: (lambda r: pack(r[0].numpy(), [g.numpy() for g in r[1]]))(fn(x)))

    return build


def build_torch(case, data):
    import torch

    model = torch_mlp(weights(data), ACTS)
    params = list(model.parameters())
    x = torch.from_numpy(data["x"])

    def step():
        loss = torch.mean((model(x) - x) ** 2)
        return loss, torch.autograd.grad(loss, params)

    def check():
        loss, g = step()
        g = [t.numpy() for t in g]
        return pack(float(loss.detach()), [g[0].T, g[1], g[2].T, g[3]])

    return Bench(step=step, check=check)


def build_jax(case, data):
    import jax
    import jax.numpy as jnp

    params = [jnp.asarray(w) for w in weights(data)]
    x = jnp.asarray(data["x"])
    fn = jax.jit(jax.value_and_grad(lambda p, x: jnp.mean((jax_mlp(p, x, ACTS) - x) ** 2)))

    def check():
        loss, g = fn(params, x)
        return pack(np.asarray(loss), [np.asarray(t) for t in g])

    return Bench(step=lambda: fn(params, x), sync=lambda r: jax.block_until_ready(r), check=check)


def framework_extras(framework, case, mode):
    """This framework's float32 n^3 matmul rate (best of a few)."""
    n = case["peak_n"]
    a = rng(7).random((n, n), dtype=np.float32)
    b = rng(8).random((n, n), dtype=np.float32)
    if framework == "numpy":
        mm = lambda: a @ b  # noqa: E731
    elif framework == "torch":
        import torch

        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        mm = lambda: ta @ tb  # noqa: E731
    elif framework == "jax":
        import jax

        ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
        f = jax.jit(lambda x, y: x @ y)
        mm = lambda: f(ja, jb).block_until_ready()  # noqa: E731
    else:
        tf = import_tf(framework)
        ta, tb = tf.constant(a), tf.constant(b)
        mm = lambda: tf.matmul(ta, tb).numpy()  # noqa: E731
    mm()
    best = float("inf")
    for _ in range(7 if mode != "tiny" else 2):
        t0 = time.perf_counter()
        mm()
        best = min(best, time.perf_counter() - t0)
    gflops = 2 * n**3 / best / 1e9
    return {"peak_matmul": f"{n}x{n}x{n} float32", "peak_s": best, "peak_gflops": gflops}


IMPLS = [
    Impl("numpy", "numpy", "NumPy (hand-written backprop)", build_numpy),
    Impl("tapeflow_function", "tapeflow", "tapeflow.function", _tf("tapeflow", "function")),
    Impl("tapeflow_eager", "tapeflow", "tapeflow eager", _tf("tapeflow", "eager")),
    Impl("torch", "torch", "PyTorch (autograd.grad)", build_torch),
    Impl("jax", "jax", "JAX jit(value_and_grad)", build_jax),
    Impl("tf_function", "tensorflow", "TF tf.function", _tf("tensorflow", "function")),
    Impl("tf_eager", "tensorflow", "TF eager", _tf("tensorflow", "eager")),
]
