"""After fusion, the fused graph keeps no pure equation whose results nothing uses
(pipeline.tier_up runs dce on it): a product that joined a loop as its narrow form
(col_dots, x.T @ g folded in the loop that reads x) left the transposed view it read
behind, one Python line a call."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

pytest.importorskip("numba")


def test_no_unused_pure_equation_is_left_after_fusion():
    rs = np.random.default_rng(0)
    x = tf.constant(rs.standard_normal((256, 6)).astype(np.float32))
    W = tf.Variable(rs.standard_normal((6, 256)).astype(np.float32) * 0.1)
    V = tf.Variable(rs.standard_normal((256, 6)).astype(np.float32) * 0.1)
    y = tf.constant(rs.standard_normal((256, 6)).astype(np.float32))

    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, W))          # K=6: the outer_sum form
            out = tf.matmul(h, V)                    # 6 output columns: row_dots
            loss = tf.reduce_mean((out - y) ** 2)
        gW, gV = tape.gradient(loss, [W, V])          # gV = h.T @ g, g of 6 columns: col_dots
        W.assign_sub(0.01 * gW)
        V.assign_sub(0.01 * gV)
        return loss

    ref_W, ref_V = W.numpy().copy(), V.numpy().copy()
    eager = step(x, y).numpy()
    want_W, want_V = W.numpy().copy(), V.numpy().copy()
    W.assign(ref_W)
    V.assign(ref_V)
    f = tf.function(step)
    f(x, y)
    cf = f.get_concrete_function(x, y)
    W.assign(ref_W)
    V.assign(ref_V)
    cf._tier_up()
    assert cf.backend == "python+fused"
    g = cf.fused_graph
    assert any(e.prim.name == "fused_elementwise" and any(x.prim.name == "col_dots"
                                                          for x in e.params["graph"].eqns) for e in g.eqns), \
        "h.T @ g did not join a loop as its narrow form"
    used = {v for e in g.eqns for v in e.inputs} | set(g.outputs)
    dead = [e.prim.name for e in g.eqns if e.outputs and e.effect is None and not any(o in used for o in e.outputs)]
    assert not dead, dead
    np.testing.assert_allclose(f(x, y).numpy(), eager, rtol=1e-5)
    np.testing.assert_allclose(W.numpy(), want_W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(V.numpy(), want_V, rtol=1e-4, atol=1e-6)
