"""GEMM epilogues in compiled training steps: the passes over a dense layer's
output (bias add, relu, its mask) and over the gradient arriving at it (the
relu mask's select and the bias gradient's column sums) run as one fused loop
each, and the GEMMs take transposed operands as views (BLAS transpose flags),
not copies. Values agree with eager and the reference interpreter in every
backend."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.compiler.passes import fusion
from tapeflow.ir.graph import Literal
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")

B, D, H, O = 200, 64, 150, 4
N = 128


def _layers():
    rs = np.random.default_rng(3)
    w1 = tf.Variable(rs.standard_normal((D, H)).astype(np.float32) * 0.2, name="w1")
    b1 = tf.Variable(rs.standard_normal(H).astype(np.float32) * 0.1, name="b1")
    w2 = tf.Variable(rs.standard_normal((H, O)).astype(np.float32) * 0.2, name="w2")
    b2 = tf.Variable(rs.standard_normal(O).astype(np.float32) * 0.1, name="b2")
    x = tf.constant(rs.standard_normal((B, D)).astype(np.float32))
    y = tf.constant(rs.standard_normal((B, O)).astype(np.float32))
    return [w1, b1, w2, b2], x, y


def _grads(params, x, y):
    """The DQN's layer pair: relu(x @ w1 + b1) @ w2 + b2, squared error. The backward
    of the relu layer is select(mask, g, 0), its column sums (db1) and x.T @ it (dw1)."""
    w1, b1, w2, b2 = params
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) + b2 - y))
    return [loss] + tape.gradient(loss, params)


def _numpy_reference(params, x, y):
    w1, b1, w2, b2 = (p.numpy().astype(np.float64) for p in params)
    x, y = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    e = h @ w2 + b2 - y
    g = 2 * e / e.size
    gz = (g @ w2.T) * (z > 0)
    return [np.mean(e * e), x.T @ gz, gz.sum(0), h.T @ g, g.sum(0)]


def _tiered(params, x, y):
    fn = tf.function(lambda x, y: _grads(params, x, y))
    cf = fn.get_concrete_function(x, y)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return fn, cf


def _close(got, want):
    for g, w in zip(got, want):
        g = np.asarray(g.numpy() if hasattr(g, "numpy") else g)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5 * max(1.0, np.abs(w).max()))


def test_relu_mask_select_and_bias_grad_column_sums_fuse_into_one_pass():
    """Two ops, but fused the select's result is not written then read back for the
    column sums: the group must form although it is shorter than MIN_OPS. (The input
    gradient g @ w2.T, a contraction of O=4, and the weight gradient h.T @ g, 4 columns,
    join it as matmul's outer_sum and col_dots forms.)"""
    params, x, y = _layers()
    fn, cf = _tiered(params, x, y)
    groups = [e.params["graph"] for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    forms = {"outer_sum", "col_dots"}
    epilogue = [g for g in groups if {e.prim.name for e in g.eqns} - forms == {"select", "reduce_sum"}]
    assert len(epilogue) == 1, [str(g) for g in groups]
    assert len([e for e in epilogue[0].eqns if e.prim.name not in forms]) < fusion.MIN_OPS
    # no (B, H) select or column sum is left as a NumPy call
    left = [e for e in cf.fused_graph.eqns if e.prim.name in ("select", "reduce_sum")
            and (e.inputs[-1] if e.prim.name == "select" else e.inputs[0]).aval.shape == (B, H)]
    assert not left, [str(e) for e in left]
    _close(fn(x, y), _numpy_reference(params, x, y))
    # the fused graph in the reference interpreter: the same values
    flat = [x.numpy(), y.numpy()]
    _close(eval_graph(cf.fused_graph, flat), _numpy_reference(params, x, y))


@pytest.mark.parametrize("backend", ["python", "python+fused", "interpreter"])
def test_dense_layer_gradients_equal_the_reference_in_every_backend(backend):
    params, x, y = _layers()
    want = _numpy_reference(params, x, y)
    _close(_grads(params, x, y), want)  # eager
    fn = tf.function(lambda x, y: _grads(params, x, y), backend=backend)
    _close(fn(x, y), want)


def test_two_independent_ops_of_one_shape_stay_numpy_calls():
    """Two bias adds that share no value save no pass over memory by fusing; the
    native call would cost more than the NumPy dispatch it saves."""
    rs = np.random.default_rng(0)
    a, b = (tf.constant(rs.standard_normal((B, H)).astype(np.float32)) for _ in range(2))
    r1, r2 = (tf.constant(rs.standard_normal(H).astype(np.float32)) for _ in range(2))
    f = tf.function(lambda a, b, r1, r2: (a + r1, b + r2))
    cf = f.get_concrete_function(a, b, r1, r2)
    assert pipeline.tier_up(cf.graph, "t") is None


def test_transposed_gemm_operands_are_views_not_copies():
    """The weight gradient x.T @ g and the input gradient g @ w.T take their
    transposed operand as a view (sgemm's transpose flag): a copy of x.T
    (B x 256 floats, 2 MB) would show in the call's peak allocation."""
    rs = np.random.default_rng(1)
    n, k, m = 2048, 256, 16
    x = tf.constant(rs.standard_normal((n, k)).astype(np.float32))
    g = tf.constant(rs.standard_normal((n, m)).astype(np.float32))
    w = tf.constant(rs.standard_normal((k, m)).astype(np.float32))

    def f(x, g, w):
        return tf.matmul(x, g, transpose_a=True), tf.matmul(g, w, transpose_b=True)

    fn = tf.function(f)
    fn(x, g, w)
    tracemalloc.start()
    try:
        got = fn(x, g, w)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    xn, gn, wn = x.numpy(), g.numpy(), w.numpy()
    np.testing.assert_allclose(got[0].numpy(), xn.T @ gn, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got[1].numpy(), gn @ wn.T, rtol=1e-4, atol=1e-3)
    results = (k * m + n * k) * 4
    assert peak < results + n * k * 4 // 2, f"peak {peak} bytes: a transposed operand was copied"


def _adam_chains(n):
    """``n`` unrelated Adam updates of one (128, 64) shape: one fusible chain each
    (4 operands, 3 results), all candidates for the same loop."""
    rs = np.random.default_rng(2)
    shape = (128, 64)
    state = [tuple(tf.Variable(rs.random(shape).astype(np.float32) * (k + 1)) for k in range(3))
             for _ in range(n)]
    g = [tf.constant(rs.standard_normal(shape).astype(np.float32)) for _ in range(n)]

    def step(lr):
        for (p, m, v), gi in zip(state, g):
            m.assign(0.9 * m + 0.1 * gi)
            v.assign(0.999 * v + 0.001 * gi * gi)
            p.assign_sub(lr * m / (tf.sqrt(v) + 1e-7))
        return tf.constant(0.0)
    return state, step


def test_a_fused_loop_touches_at_most_max_arrays():
    """Four unrelated Adam updates (28 arrays) would make one loop LLVM leaves
    scalar: the groups are cut to MAX_ARRAYS arrays each and every update is
    still fused; parameters equal the unfused run's."""
    n = 4
    state_e, step_e = _adam_chains(n)
    state_c, step_c = _adam_chains(n)
    lr = tf.constant(np.float32(1e-2))
    f = tf.function(step_c)
    for _ in range(2):
        step_e(lr)
    f(lr)
    cf = f.get_concrete_function(lr)
    cf._tier_up()
    assert cf.backend == "python+fused"
    fused = [e for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    arrays = [sum(v.aval.shape != () for v in e.inputs) + len(e.outputs) for e in fused]
    assert len(fused) >= 2 and max(arrays) <= fusion.MAX_ARRAYS, arrays
    assert not [e for e in cf.fused_graph.eqns if e.prim.name in ("sqrt", "div")], "an update was left unfused"
    f(lr)
    for a, b in zip(state_c, state_e):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-5, atol=1e-6)


def _dense_adam():
    """A relu layer trained by a hand-written Adam: ``0.9 * m`` needs only ``m``, so
    tracing puts it before the forward pass. Square (N, N) weights and a batch of N
    (TD3's 256-256 layer): the weights and the activations share one loop shape."""
    rs = np.random.default_rng(4)
    w = tf.Variable(rs.standard_normal((N, N)).astype(np.float32) * 0.2, name="w")
    b = tf.Variable(np.zeros(N, np.float32), name="b")
    m = tf.Variable(rs.random((N, N)).astype(np.float32), name="m")
    v = tf.Variable(rs.random((N, N)).astype(np.float32), name="v")
    x = tf.constant(rs.standard_normal((N, N)).astype(np.float32))
    y = tf.constant(rs.standard_normal((N, N)).astype(np.float32))

    def step(lr):
        m_decayed = 0.9 * m
        v_decayed = 0.999 * v
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.nn.relu(tf.matmul(x, w) + b) - y))
        g = tape.gradient(loss, w)
        m.assign(m_decayed + 0.1 * g)
        v.assign(v_decayed + 0.001 * g * g)
        w.assign_sub(lr * m / (tf.sqrt(v) + 1e-8))
        return loss
    return (w, b, m, v), step


def test_moment_decay_traced_before_the_forward_pass_fuses_into_the_update_loop():
    """passes/sink.py moves ``0.9 * m`` next to its user and fusion leaves it out of
    the forward loop (which would write it for the update loop to read back)."""
    state_e, step_e = _dense_adam()
    state_c, step_c = _dense_adam()
    lr = tf.constant(np.float32(1e-2))
    f = tf.function(step_c)
    f(lr)
    cf = f.get_concrete_function(lr)
    cf._tier_up()
    groups = [e.params["graph"] for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    forward = [g for g in groups if "maximum" in {e.prim.name for e in g.eqns}]
    update = [g for g in groups if "sqrt" in {e.prim.name for e in g.eqns}]
    assert len(forward) == 1 and len(update) == 1, [str(g) for g in groups]
    literals = lambda g: {x.val for e in g.eqns if e.prim.name == "mul" for x in e.inputs  # noqa: E731
                          if isinstance(x, Literal)}
    assert not literals(forward[0]) & {0.9, 0.999}, str(forward[0])
    assert literals(update[0]) >= {0.9, 0.999}, str(update[0])
    for _ in range(2):
        step_e(lr)
    f(lr)
    for a, b in zip(state_c, state_e):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_sink_moves_start_values_next_to_their_user_and_keeps_results():
    from tapeflow.compiler.passes.sink import sink
    state, step = _dense_adam()
    lr = tf.constant(np.float32(1e-2))
    g = tf.function(step).get_concrete_function(lr).graph
    s = sink(g)
    assert sorted(map(id, s.eqns)) == sorted(map(id, g.eqns))
    decays = [k for k, e in enumerate(s.eqns) if e.prim.name == "mul" and e.outputs[0].aval.shape == (N, N)
              and any(isinstance(x, Literal) and x.val in (0.9, 0.999) for x in e.inputs)]
    assert len(decays) == 2
    for k in decays:  # just before its first user, after the gradient's matmul
        user = min(j for j, u in enumerate(s.eqns) if s.eqns[k].outputs[0] in u.inputs)
        assert user == k + 1
        assert any(u.prim.name == "matmul" and u.outputs[0].aval.shape == (N, N) for u in s.eqns[:k])
    start = [v.numpy() for v in state]
    results = []
    for graph in (g, s):  # each graph from the same variable values
        for v, x in zip(state, start):
            v.assign(x)
        out = eval_graph(graph, [np.float32(1e-2)])
        results.append([np.asarray(o) for o in out] + [v.numpy() for v in state])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
