"""The second tier fuses inside sub-graphs too (cond branches, loop bodies): an
optimizer step or a soft target update in a delayed branch is as hot as the rest
of the function. Checked against eager execution and the reference interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _fused_in(graph):
    """fused equations of ``graph`` and of every sub-graph its equations hold, by depth"""
    found = []

    def walk(g, depth):
        for e in g.eqns:
            if e.prim.name == "fused_elementwise":
                found.append(depth)
            for v in e.params.values():
                for s in (v if isinstance(v, (tuple, list)) else (v,)):
                    if hasattr(s, "eqns"):
                        walk(s, depth + 1)
    walk(graph, 0)
    return found


def _delayed_update():
    """A counter-driven branch holding an Adam-like update and a soft target update."""
    rs = np.random.default_rng(0)
    W = tf.Variable(rs.standard_normal((48, 32)).astype(np.float32), name="W")
    T = tf.Variable(rs.standard_normal((48, 32)).astype(np.float32), name="T")
    m = tf.Variable(np.zeros((48, 32), np.float32), name="m")
    v = tf.Variable(np.zeros((48, 32), np.float32), name="v")
    it = tf.Variable(np.int64(0), trainable=False, name="it")
    x = tf.constant(rs.standard_normal((8, 48)).astype(np.float32))

    def update(g):
        m.assign(0.9 * m + 0.1 * g)
        v.assign(0.999 * v + 0.001 * g * g)
        W.assign_sub(1e-2 * m / (tf.sqrt(v) + 1e-7))
        T.assign(0.005 * W + 0.995 * T)
        return tf.reduce_sum(T)

    def step():
        it.assign_add(1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, W)) ** 2)
        g = tape.gradient(loss, W)
        t = tf.cond(it % 2 == 0, lambda: update(g), lambda: tf.constant(0.0))
        return loss, t
    return (W, T, m, v, it), step


def test_cond_branches_are_fused_and_match_eager():
    vars_e, step_e = _delayed_update()
    eager = [tuple(float(t) for t in step_e()) for _ in range(6)]
    vars_c, step_c = _delayed_update()
    f = tf.function(step_c)
    cf = f.get_concrete_function()
    cf._tier_up()
    assert cf.backend == "python+fused"
    assert 1 in _fused_in(cf.fused_graph), "the update inside the cond branch was not fused"
    got = [tuple(float(t) for t in f()) for _ in range(6)]
    np.testing.assert_allclose(np.array(got), np.array(eager), rtol=2e-5)
    for a, b in zip(vars_c, vars_e):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=1e-6)


def test_nested_fused_graph_runs_in_the_reference_interpreter():
    state, step = _delayed_update()
    f = tf.function(step)
    cf = f.get_concrete_function()
    cf._tier_up()
    f()                                   # counter 0 -> 1: the next call takes the branch
    before = [a.numpy().copy() for a in state]
    compiled = [float(t) for t in f()]
    after = [a.numpy().copy() for a in state]
    for a, b in zip(state, before):
        a.assign(b)
    interpreted = [float(np.asarray(t)) for t in eval_graph(cf.fused_graph, [])]
    np.testing.assert_allclose(interpreted, compiled, rtol=1e-6)
    assert interpreted[1] != 0.0          # the branch ran
    for a, b in zip(state, after):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6, atol=1e-7)


def test_a_graph_without_sub_graphs_tiers_up_as_before():
    x = tf.constant(np.linspace(-1, 1, 4096).astype(np.float32).reshape(64, 64))
    f = tf.function(lambda a: tf.tanh(a * 2.0 + 1.0) * 3.0 - a)
    f(x)
    cf = f.get_concrete_function(x)
    r = pipeline.tier_up(cf.graph)
    assert r is not None and _fused_in(r[2]) == [0]
    np.testing.assert_allclose(r[0](x.numpy())[0], f.python_function(x).numpy(), rtol=1e-5, atol=1e-6)
