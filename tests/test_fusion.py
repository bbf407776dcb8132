"""The second tier: elementwise fusion into native loops, checked against
the unfused code and eager execution, including variable writes deferred
past the group and a read after such a write."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _adam_like():
    rs = np.random.default_rng(0)
    W = tf.Variable(rs.standard_normal((64, 40)).astype(np.float32), name="W")
    m = tf.Variable(np.zeros((64, 40), np.float32), name="m")
    v = tf.Variable(np.zeros((64, 40), np.float32), name="v")
    x = tf.constant(rs.standard_normal((8, 64)).astype(np.float32))

    def step(lr):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, W)) ** 2)
        g = tape.gradient(loss, W)
        m.assign(0.9 * m + 0.1 * g)
        v.assign(0.999 * v + 0.001 * g * g)
        seen_m = m.read_value() * 1.0          # a read after the (deferred) write of m
        W.assign_sub(lr * m / (tf.sqrt(v) + 1e-7))
        return loss, tf.reduce_sum(seen_m)
    return (W, m, v), step


def _run(step, lr, n):
    return [tuple(float(t) for t in step(tf.constant(lr))) for _ in range(n)]


def test_fused_matches_eager_and_fuses():
    vars_e, step_e = _adam_like()
    eager = _run(step_e, 1e-3, 4)
    vars_c, step_c = _adam_like()
    f = tf.function(step_c)
    first = _run(f, 1e-3, 1)
    cf = f.get_concrete_function(tf.constant(1e-3))
    cf._tier_up()
    assert cf.backend == "python+fused"
    fused = [e for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    assert fused, "the optimizer chain on a (64, 40) variable was not fused"
    rest = _run(f, 1e-3, 3)
    np.testing.assert_allclose(np.array(first + rest), np.array(eager), rtol=2e-5)
    for a, b in zip(vars_c, vars_e):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=1e-6)


def test_fused_graph_runs_in_the_reference_interpreter():
    _, step = _adam_like()
    f = tf.function(step)
    f(tf.constant(1e-3))
    cf = f.get_concrete_function(tf.constant(1e-3))
    r = pipeline.tier_up(cf.graph, "t")
    assert r is not None
    _, backend, g = r
    out = eval_graph(g, [np.float32(1e-3)])
    assert np.isfinite(out[0])


def test_small_or_short_chains_stay_unfused():
    x = tf.constant(np.ones((4, 4), np.float32))
    f = tf.function(lambda a: a * 2.0 + 1.0)
    f(x)
    cf = f.get_concrete_function(x)
    assert pipeline.tier_up(cf.graph, "t") is None  # 16 elements: NumPy is as fast
