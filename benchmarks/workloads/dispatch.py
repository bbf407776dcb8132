"""dispatch: the per-op overhead of eager execution.

A chain of 100 elementwise adds on (10,) float32 tensors (y = y + c, 100
times). Reported in µs per op: for eager rows this is the framework's
dispatch cost; for compiled rows (whole chain in one tf.function / jax.jit)
it is the call's cost divided by the 100 ops it replaces.
"""
from __future__ import annotations

import numpy as np

from benchmarks.common import Bench, Impl, rng
from benchmarks.workloads._tfapi import import_tf

NAME = "dispatch"
TITLE = "Eager dispatch: chain of 100 adds on (10,) float32"
N_OPS = 100


def cases(mode):
    return [{"name": "chain100", "title": TITLE, "unit": "op", "display": "us", "n_ops": N_OPS, "size": 10}]


def make_data(case, seed):
    rs = rng(seed)
    return {
        "x": rs.standard_normal(case["size"]).astype(np.float32),
        "c": rs.standard_normal(case["size"]).astype(np.float32),
    }


def reference(case, data):
    return {"y": data["x"].astype(np.float64) + case["n_ops"] * data["c"].astype(np.float64)}


TOL = 1e-5


# --- NumPy -------------------------------------------------------------------
def build_numpy(case, data):
    x, c, n = data["x"], data["c"], case["n_ops"]

    def chain():
        y = x
        for _ in range(n):
            y = y + c
        return y

    return Bench(step=chain, units=n, check=lambda: {"y": chain()})


# --- TF API (tapeflow and TensorFlow) ------------------------------------------
def _tf_chain(framework, mode):
    def build(case, data):
        tf = import_tf(framework)
        x, c, n = tf.constant(data["x"]), tf.constant(data["c"]), case["n_ops"]

        def chain(x, c):
            y = x
            for _ in range(n):
                y = y + c
            return y

        if mode == "eager":

            def step():
                return chain(x, c)

        elif mode == "tape":

            def step():
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = chain(x, c)
                return y

        elif mode == "function":
            fn = tf.function(chain)

            def step():
                return fn(x, c)

        else:
            raise ValueError(mode)
        return Bench(step=step, units=n, check=lambda: {"y": step().numpy()}, sync=lambda y: y.numpy())

    return build


# --- PyTorch -----------------------------------------------------------------
def _torch_chain(requires_grad):
    def build(case, data):
        import torch

        x = torch.from_numpy(data["x"].copy()).requires_grad_(requires_grad)
        c = torch.from_numpy(data["c"].copy())
        n = case["n_ops"]

        def step():
            y = x
            for _ in range(n):
                y = y + c
            return y

        return Bench(step=step, units=n, check=lambda: {"y": step().detach().numpy()})

    return build


# --- JAX ---------------------------------------------------------------------
def _jax_chain(jit):
    def build(case, data):
        import jax
        import jax.numpy as jnp

        x, c, n = jnp.asarray(data["x"]), jnp.asarray(data["c"]), case["n_ops"]

        def chain(x, c):
            y = x
            for _ in range(n):
                y = y + c
            return y

        fn = jax.jit(chain) if jit else chain

        def step():
            return fn(x, c)

        return Bench(
            step=step, units=n, sync=lambda y: y.block_until_ready(), check=lambda: {"y": np.asarray(step())}
        )

    return build


IMPLS = [
    Impl("numpy", "numpy", "NumPy", build_numpy),
    Impl("tapeflow_eager", "tapeflow", "tapeflow eager", _tf_chain("tapeflow", "eager")),
    Impl("tapeflow_tape", "tapeflow", "tapeflow eager, under GradientTape", _tf_chain("tapeflow", "tape")),
    Impl("tapeflow_function", "tapeflow", "tapeflow.function (whole chain, per call)", _tf_chain("tapeflow", "function")),
    Impl("torch", "torch", "PyTorch eager", _torch_chain(False)),
    Impl("torch_grad", "torch", "PyTorch eager, requires_grad (recording)", _torch_chain(True)),
    Impl("jax_eager", "jax", "JAX eager (op by op)", _jax_chain(False)),
    Impl("jax_jit", "jax", "JAX jit (whole chain, per call)", _jax_chain(True)),
    Impl("tf_eager", "tensorflow", "TF eager", _tf_chain("tensorflow", "eager")),
    Impl("tf_tape", "tensorflow", "TF eager, under GradientTape", _tf_chain("tensorflow", "tape")),
    Impl("tf_function", "tensorflow", "TF tf.function (whole chain, per call)", _tf_chain("tensorflow", "function")),
]
