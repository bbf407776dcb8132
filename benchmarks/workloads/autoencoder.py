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

import os
import time

import numpy as np

from benchmarks.common import Bench, Impl, array_gemm_label, gemm_label, mlp_params, rng
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


def _best_ms(f, reps):
    """The fastest of ``reps`` calls of ``f`` after a warm-up call, in ms."""
    f()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


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
    best = _best_ms(mm, 7 if mode != "tiny" else 2) / 1e3
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


# --- where the compiled step's time goes (issue 14's note) ------------------------------
# python -m benchmarks.workloads.autoencoder [--framework tapeflow|tensorflow] [--reps N] [--steps N]
# (tensorflow: run with the peers' Python). Each op of the graph tapeflow's compiled step runs
# (after the fused tier) is timed alone through the shared evaluator, GEMMs as tapeflow runs
# them (one-thread pieces, or the BLAS thread count it chose); TF's five GEMMs are timed alone with the transpose
# flags its MatMul gradients use. The rest of a step is what the GEMMs leave. --steps N
# instead times each of N steps (min, median, the page faults per step): a run's spread.

def _tapeflow_breakdown(tf, step, x, reps):
    from tapeflow.compiler.backends.numba_backend import loop_threads
    from tapeflow.ir import interpreter
    from tapeflow.util import split_gemm, threads

    cf = step.get_concrete_function(x)
    while not cf.hot:  # past the tier-up: the graph the step runs from now on
        step(x)
    graph = cf.fused_graph if cf.fused_graph is not None else cf.graph
    rows, times, vals = [], {}, {}

    def apply(e, args):
        vals[e] = args
        return interpreter.apply_eqn(e, args)

    interpreter.evaluate(graph, [x._v], apply)
    for e in graph.eqns:
        args = vals[e]
        name = e.prim.name
        if name == "matmul":
            label = f"GEMM {array_gemm_label(*args)}"
        else:
            label = name + ("" if name != "fused_elementwise" else f" ({len(e.params['graph'].eqns)} ops)")
        t = _best_ms(lambda: interpreter.apply_eqn(e, args), reps)
        if name == "matmul":
            a, b = args
            how = split_gemm.plan(a.shape, b.shape, a.dtype, b.dtype, threads._STATE["many"]) \
                if a.shape[0] * a.shape[1] * b.shape[1] >= threads.CEIL_MACS else None
            # as threads._gemm: the intra-op count when set, else BLAS's pool
            n = min(tf.config.threading.get_intra_op_parallelism_threads() or 1 << 30, threads._STATE["many"])
            label += (f", {how[1]} one-thread pieces (split {('rows', 'columns', 'contraction')[how[0]]}) "
                      f"on {n} thread(s)" if how else f", {threads.blas_threads() or 'default'} BLAS thread(s)")
        elif name == "fused_elementwise":
            label += f", {loop_threads()} loop thread(s)"
        rows.append((label, t))
    return rows


def _overlap_rows(batch, reps):
    """The backward's two independent GEMMs (g2 @ W2^T and h^T @ g2, both from the output
    layer's gradient) one after the other: unsplit on all BLAS threads (OpenBLAS's even
    split, with its barrier), and as tapeflow runs them (``threads.matmul``: one-thread
    pieces that the threads take in turn when the product splits at no extra work); and
    side by side on one thread each, as an inter-op scheduler (TF's) can run them. Best
    and median of ``reps``: on a shared machine the spread is the point."""
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    from tapeflow.util import threads

    rs = rng(2)
    h = rs.random((batch, SIZES[1]), dtype=np.float32)
    g2 = rs.random((batch, SIZES[0]), dtype=np.float32)
    w2 = rs.random((SIZES[1], SIZES[0]), dtype=np.float32)
    most = len(os.sched_getaffinity(0))  # BLAS's pool (tapeflow may have set fewer threads for now)
    pool = ThreadPoolExecutor(1)

    def unsplit():
        with threadpool_limits(most, user_api="blas"):
            np.matmul(g2, w2.T)
            np.matmul(h.T, g2)

    def tapeflow():
        threads.matmul(g2, w2.T)
        threads.matmul(h.T, g2)

    def side_by_side():
        with threadpool_limits(1, user_api="blas"):
            other = pool.submit(np.matmul, g2, w2.T)
            np.matmul(h.T, g2)
            other.result()

    runs = {f: [] for f in (unsplit, tapeflow, side_by_side)}
    for f in runs:
        f()
    for _ in range(reps):  # interleaved: the machine's load changes alike for the three
        for f, ts in runs.items():
            t0 = time.perf_counter()
            f()
            ts.append((time.perf_counter() - t0) * 1e3)
    med = {f: sorted(ts)[len(ts) // 2] for f, ts in runs.items()}
    try:
        return [(f"the 2 backward GEMMs one after the other, unsplit on {most} BLAS thread(s) "
                 f"(median {med[unsplit]:.1f})", min(runs[unsplit])),
                (f"the 2 backward GEMMs one after the other, as tapeflow runs them "
                 f"(median {med[tapeflow]:.1f})", min(runs[tapeflow])),
                (f"the 2 backward GEMMs side by side, 1 BLAS thread each (median {med[side_by_side]:.1f})",
                 min(runs[side_by_side]))]
    finally:
        pool.shutdown()


def _tf_gemms(tf, x, params, reps):
    B, d_in = x.shape
    hidden = params[0].shape[1]
    rs = rng(1)
    h = tf.constant(rs.random((B, hidden), dtype=np.float32))
    g1 = tf.constant(rs.random((B, hidden), dtype=np.float32))
    g2 = tf.constant(rs.random((B, d_in), dtype=np.float32))
    w0, w2 = tf.constant(params[0].numpy()), tf.constant(params[2].numpy())
    mm = tf.function(lambda a, b, ta, tb: tf.linalg.matmul(a, b, transpose_a=ta, transpose_b=tb))
    rows = []
    for a, b, ta, tb in [(x, w0, False, False), (h, w2, False, False), (g2, w2, False, True),
                         (h, g2, True, False), (x, g1, True, False)]:
        t = _best_ms(lambda: mm(a, b, ta, tb).numpy(), reps)
        rows.append((f"GEMM {gemm_label(a, b, ta, tb)}", t))
    return rows


def _step(tf, params):
    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            out = dense_mlp(tf, params, x, ACTS)
            loss = tf.reduce_mean(tf.square(out - x))
        return loss, tape.gradient(loss, params)
    return step


def spread(framework="tapeflow", steps=30, batch=10_000):
    """The time of each of ``steps`` compiled steps after the warm-up, with the minor page
    faults each took: the median's distance from the best is what a shared machine costs."""
    import resource

    data = make_data({"batch": batch}, 0)
    tf = import_tf(framework)
    params = variables(tf, weights(data), "w")
    x = tf.constant(data["x"])
    step = _step(tf, params)
    for _ in range(3):  # past tapeflow's tier-up
        step(x)[0].numpy()
    times, faults = [], []
    for _ in range(steps):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        step(x)[0].numpy()
        times.append((time.perf_counter() - t0) * 1e3)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    s = sorted(times)
    return (f"{framework}: {steps} compiled steps, batch {batch}: min {s[0]:.1f} ms, median "
            f"{s[len(s) // 2]:.1f} ({s[len(s) // 2] / s[0] - 1:+.0%}), max {s[-1]:.1f}; minor page faults "
            f"per step: median {sorted(faults)[len(faults) // 2]}\n  steps (ms): "
            + " ".join(f"{t:.0f}" for t in times))


def breakdown(framework="tapeflow", reps=7, batch=10_000, threads=0):
    """The text of the breakdown; ``threads``: the intra-op count to set (0: the
    framework's own choice; on a busy machine tapeflow's is one thread)."""
    case = {"batch": batch}
    data = make_data(case, 0)
    tf = import_tf(framework)
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    params = variables(tf, weights(data), "w")
    x = tf.constant(data["x"])
    step = _step(tf, params)
    total = _best_ms(lambda: step(x)[0].numpy(), reps)
    rows = _tapeflow_breakdown(tf, step, x, reps) if framework == "tapeflow" else _tf_gemms(tf, x, params, reps)
    gemm = sum(t for label, t in rows if label.startswith("GEMM"))
    lines = [f"{framework}: compiled step {total:.1f} ms (best of {reps}), batch {batch}, "
             f"intra-op threads {threads or 'default'}"]
    lines += [f"  {t:8.2f} ms  {label}" for label, t in rows]
    lines.append(f"  GEMMs {gemm:.1f} ms ({2 * 5 * batch * SIZES[0] * SIZES[1] / gemm / 1e6:.0f} GFLOP/s), "
                 f"the rest of the step {total - gemm:.1f} ms")
    if framework == "tapeflow":
        lines += [f"  {t:8.2f} ms  {label}" for label, t in _overlap_rows(batch, reps)]
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="where a compiled autoencoder step's time goes")
    ap.add_argument("--framework", default="tapeflow", choices=["tapeflow", "tensorflow"])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: the framework's choice)")
    ap.add_argument("--steps", type=int, default=0,
                    help="instead: time each of this many steps (the spread of a run)")
    args = ap.parse_args()
    if args.steps:
        print(spread(args.framework, args.steps, args.batch))
    else:
        print(breakdown(args.framework, args.reps, args.batch, args.threads))
