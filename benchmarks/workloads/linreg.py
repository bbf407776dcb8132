"""linreg: gradient descent on a 2-parameter linear regression.

Fit Y = W*x + b to x = 0, 0.1, ..., 99.9 (1000 points),
y = x + 20*sin(x/10) + 15, MSE loss, lr 1e-4, W = b = 0 at the start, the
run being 100,000 steps. Per-step rows call one step from a Python loop (the
harness times as many steps as fit its blocks and scales); whole-loop rows
run all the steps in one compiled call (tapeflow.fori_loop,
jax.lax.fori_loop, tf.while_loop) and are timed per full run. The
tensor-bound rows run the same loop with the step count passed as a tensor
argument, written three ways (fori_loop, while_loop, AutoGraph's
``for i in tf.range(n)``): issue 14 asks them to be as fast as the
Python-int bound.
"""
from __future__ import annotations

import numpy as np

from benchmarks.common import Bench, Impl
from benchmarks.workloads._tfapi import fori_loop, import_tf

NAME = "linreg"
TITLE = "Linear regression, gradient descent (1000 points, 100,000 steps)"
LR = 1e-4


def cases(mode):
    steps = {"full": 100_000, "quick": 10_000, "tiny": 200}[mode]
    check = {"full": 1000, "quick": 1000, "tiny": 50}[mode]
    return [{"name": "gd", "title": f"y = W*x + b, 1000 points, lr 1e-4, whole-loop rows run {steps:,} steps per call",
             "unit": "step", "display": "us", "n_points": 1000, "steps": steps, "check_steps": check, "lr": LR}]


def make_data(case, seed):
    x = (np.arange(case["n_points"]) * 0.1).astype(np.float32)
    y = (x + 20 * np.sin(x / 10) + 15).astype(np.float32)
    return {"x": x, "y": y}


def np_steps(x, y, W, b, n, lr):
    for _ in range(n):
        err = W * x + b - y
        gW = 2 * np.mean(err * x)
        gb = 2 * np.mean(err)
        W = W - lr * gW
        b = b - lr * gb
    return W, b


def reference(case, data):
    x, y = data["x"].astype(np.float64), data["y"].astype(np.float64)
    W, b = np_steps(x, y, 0.0, 0.0, case["check_steps"], case["lr"])
    return {"W": np.array(W), "b": np.array(b)}


TOL = 1e-4


def build_numpy(case, data):
    x, y, lr = data["x"], data["y"], case["lr"]
    st = {"W": np.float32(0), "b": np.float32(0)}

    def step():
        st["W"], st["b"] = np_steps(x, y, st["W"], st["b"], 1, lr)
        return st["W"]

    def check():
        W, b = np_steps(x, y, np.float32(0), np.float32(0), case["check_steps"], lr)
        return {"W": W, "b": b}

    return Bench(step=step, check=check)


# --- TF API: tapeflow and TensorFlow -------------------------------------------
def _tf(framework, how):
    def build(case, data):
        tf = import_tf(framework)
        lr = case["lr"]
        x, y = tf.constant(data["x"]), tf.constant(data["y"])
        W = tf.Variable(np.float32(0.0))
        b = tf.Variable(np.float32(0.0))

        def train_step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(W * x + b - y))
            gW, gb = tape.gradient(loss, [W, b])
            W.assign_sub(lr * gW)
            b.assign_sub(lr * gb)
            return loss

        def body(i, carry):
            w, c = carry
            with tf.GradientTape() as tape:
                tape.watch(w)
                tape.watch(c)
                loss = tf.reduce_mean(tf.square(w * x + c - y))
            gw, gc = tape.gradient(loss, [w, c])
            return (w - lr * gw, c - lr * gc)

        def finish(w, c):
            W.assign(w)
            b.assign(c)
            return w

        # whole loops whose step count is a tensor argument
        @tf.function
        def loop_fori(n):
            return finish(*fori_loop(tf, 0, n, body, (W.read_value(), b.read_value())))

        @tf.function
        def loop_while(n):
            _, w, c = tf.while_loop(lambda i, w, c: i < n, lambda i, w, c: (i + 1,) + body(i, (w, c)),
                                    (tf.constant(0), W.read_value(), b.read_value()))
            return finish(w, c)

        @tf.function
        def loop_range(n):
            w, c = W.read_value(), b.read_value()
            for i in tf.range(n):
                w, c = body(i, (w, c))
            return finish(w, c)

        def make_loop(n):
            if how == "loop":  # the Python-int bound
                @tf.function
                def train_loop():
                    return finish(*fori_loop(tf, 0, n, body, (W.read_value(), b.read_value())))
                return train_loop
            fn = {"loop_fori_tensor": loop_fori, "loop_while_tensor": loop_while,
                  "loop_range_tensor": loop_range}[how]
            steps = tf.constant(n)
            return lambda: fn(steps)

        def reset():
            W.assign(np.float32(0.0))
            b.assign(np.float32(0.0))

        if how.startswith("loop"):
            check_loop, loop = make_loop(case["check_steps"]), make_loop(case["steps"])

            def check():
                reset()
                check_loop()
                return {"W": W.numpy(), "b": b.numpy()}

            return Bench(step=loop, units=case["steps"], check=check, sync=lambda w: w.numpy())
        fn = tf.function(train_step) if how == "function" else train_step

        def check():
            reset()
            for _ in range(case["check_steps"]):
                fn()
            return {"W": W.numpy(), "b": b.numpy()}

        return Bench(step=fn, check=check, sync=lambda loss: loss.numpy())

    return build


# --- PyTorch -----------------------------------------------------------------
def build_torch(case, data):
    import torch

    x, y, lr = torch.from_numpy(data["x"]), torch.from_numpy(data["y"]), case["lr"]
    W = torch.zeros((), requires_grad=True)
    b = torch.zeros((), requires_grad=True)

    def step():
        loss = ((W * x + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            W.sub_(lr * W.grad)
            b.sub_(lr * b.grad)
        W.grad = None
        b.grad = None
        return loss

    def check():
        with torch.no_grad():
            W.zero_()
            b.zero_()
        for _ in range(case["check_steps"]):
            step()
        return {"W": W.detach().numpy(), "b": b.detach().numpy()}

    return Bench(step=step, check=check)


# --- JAX ---------------------------------------------------------------------
def _jax(how):
    def build(case, data):
        import jax
        import jax.numpy as jnp

        x, y, lr = jnp.asarray(data["x"]), jnp.asarray(data["y"]), case["lr"]

        def loss_fn(p, x, y):
            W, b = p
            return jnp.mean((W * x + b - y) ** 2)

        def gd(p, x, y):
            g = jax.grad(loss_fn)(p, x, y)
            return (p[0] - lr * g[0], p[1] - lr * g[1])

        zero = (jnp.float32(0.0), jnp.float32(0.0))
        st = {"p": zero}
        if how == "jit":
            step_fn = jax.jit(gd)

            def step():
                st["p"] = step_fn(st["p"], x, y)
                return st["p"]

            def check():
                p = zero
                for _ in range(case["check_steps"]):
                    p = step_fn(p, x, y)
                return {"W": np.asarray(p[0]), "b": np.asarray(p[1])}

            return Bench(step=step, check=check, sync=lambda p: jax.block_until_ready(p))

        def make_loop(n):
            return jax.jit(lambda p, x, y: jax.lax.fori_loop(0, n, lambda i, p: gd(p, x, y), p))

        loop, check_loop = make_loop(case["steps"]), make_loop(case["check_steps"])

        def step():
            st["p"] = loop(st["p"], x, y)
            return st["p"]

        def check():
            p = check_loop(zero, x, y)
            return {"W": np.asarray(p[0]), "b": np.asarray(p[1])}

        return Bench(step=step, units=case["steps"], check=check, sync=lambda p: jax.block_until_ready(p))

    return build


IMPLS = [
    Impl("numpy", "numpy", "NumPy (Python loop)", build_numpy),
    Impl("tapeflow_eager", "tapeflow", "tapeflow eager (GradientTape + assign_sub)", _tf("tapeflow", "eager")),
    Impl("tapeflow_function", "tapeflow", "tapeflow.function per step", _tf("tapeflow", "function")),
    Impl("tapeflow_loop", "tapeflow", "tapeflow.function whole loop (fori_loop)", _tf("tapeflow", "loop")),
    Impl("tapeflow_loop_fori_tensor", "tapeflow", "tapeflow.function whole loop, fori_loop to a tensor n",
         _tf("tapeflow", "loop_fori_tensor")),
    Impl("tapeflow_loop_while_tensor", "tapeflow", "tapeflow.function whole loop, while_loop on i < n (tensor)",
         _tf("tapeflow", "loop_while_tensor")),
    Impl("tapeflow_loop_range_tensor", "tapeflow", "tapeflow.function whole loop, AutoGraph for i in tf.range(n)",
         _tf("tapeflow", "loop_range_tensor")),
    Impl("torch", "torch", "PyTorch eager (autograd)", build_torch),
    Impl("jax_jit", "jax", "JAX jit per step", _jax("jit")),
    Impl("jax_fori", "jax", "JAX jit whole loop (lax.fori_loop)", _jax("fori")),
    Impl("tf_eager", "tensorflow", "TF eager (GradientTape)", _tf("tensorflow", "eager")),
    Impl("tf_function", "tensorflow", "TF tf.function per step", _tf("tensorflow", "function")),
    Impl("tf_loop", "tensorflow", "TF tf.function whole loop (while_loop)", _tf("tensorflow", "loop")),
]
