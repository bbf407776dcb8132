"""Fused loops update variables in place (passes/buffers.py ``_plan_in_place``, the
numba kernel writing a result over its input, core.tensor ``_own_array``): the values
stay those of the one assign semantics. Checked: a snapshot read before the step keeps
its value; a graph reading the old value after the assign gets the old value; the fused
tier equals the reference interpreter, the python backend and eager; a checkpoint after
the step holds the new value; Adam, SGD with momentum and a soft update agree in place
and out of place (to 1 ulp: FMA contraction)."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import tapeflow as tf
from conftest import eval_graph_with, fused_tier, moment_update, same_start
from tapeflow.compiler.passes import buffers

pytest.importorskip("numba")


def _vars(seed=0):
    rs = np.random.default_rng(seed)
    W = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.1, name="W")
    m = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.01, name="m")
    return W, m


def _step(W, m):
    def step(z):
        _, y = moment_update(z, W, m)
        return tf.reduce_sum(y)
    return step


def _z(seed=1):
    return np.random.default_rng(seed).standard_normal((32, 64)).astype(np.float32)


def test_the_update_is_planned_in_place_and_writes_the_variables_arrays():
    W, m = _vars()
    fn, cf = fused_tier(_step(W, m), _z())
    plan = buffers.plan_buffers(cf.fused_graph)
    assert {id(v) for v in plan.owned} == {id(W), id(m)}
    arrays = weakref.ref(W._v), weakref.ref(m._v)  # (a reference would make _own_array copy)
    fn(_z())
    assert W._v is arrays[0]() and m._v is arrays[1](), "the update did not write the variables' arrays"


def test_a_snapshot_read_before_the_step_keeps_its_value():
    W, m = _vars()
    fn, _ = fused_tier(_step(W, m), _z())
    snap_t = W.read_value()          # a tensor holding W's array
    snap_n = m.numpy()               # a read-only view of m's array
    want_W, want_m = snap_t.numpy().copy(), snap_n.copy()
    fn(_z(2))
    np.testing.assert_array_equal(snap_t.numpy(), want_W)
    np.testing.assert_array_equal(snap_n, want_m)
    assert not np.array_equal(W.numpy(), want_W) and not np.array_equal(m.numpy(), want_m)


def test_a_graph_reading_the_old_value_after_the_assign_gets_the_old_value():
    W, m = _vars()
    W2, m2 = _vars()

    def step(z):
        old = m.read_value()
        m.assign(0.9 * m + 0.1 * tf.reduce_mean(z) * tf.sqrt(m * m + 1.0))
        # a GEMM reads the old value after the update's loop: no writing over it (more
        # columns than matmul's row_dots form takes into the loop, linalg.FEW_N)
        return old * 2.0 + 1.0 - old * old, tf.matmul(old, tf.ones((48, 16)))

    def eager(z):
        old = m2.numpy().copy()
        m2.assign(0.9 * m2 + 0.1 * tf.reduce_mean(tf.constant(z)) * tf.sqrt(m2 * m2 + 1.0))
        return old * 2.0 + 1.0 - old * old, old @ np.ones((48, 16), np.float32), m2.numpy()
    fn, cf = fused_tier(step, _z())
    m2.assign(m.numpy())
    assert not buffers.plan_buffers(cf.fused_graph).inplace
    for s in range(3):
        got, want = (*fn(_z(s)), m.numpy()), eager(_z(s))
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6)
        # a new value made out of place owns its memory (not a view of a flat array), so a
        # later in-place update needs no copy first
        assert m._v.base is None


def test_fused_tier_matches_the_interpreter_the_python_backend_and_eager():
    states = [_vars() for _ in range(4)]
    fused, _ = fused_tier(_step(*states[0]), _z())
    start = same_start(states)
    py = tf.function(_step(*states[1]), backend="python")
    graph = py.get_concrete_function(_z()).graph
    for v, s in zip(states[1], start):
        v.assign(s)
    eager = _step(*states[3])
    for s in range(3):
        z = _z(s + 5)
        outs = [fused(z).numpy(), py(z).numpy(), eval_graph_with(graph, states[2], states[1], z),
                eager(tf.constant(z)).numpy()]
        for o in outs[1:]:
            np.testing.assert_allclose(outs[0], o, rtol=1e-4)
        # the variables hold values up to ~2 (float32 ulp 2.4e-7): the fused loops' FMAs and
        # SIMD sums (8 or 16 lanes by CPU) move last bits, which a near-zero entry shows as
        # a relative error; hence an absolute tolerance of a few ulps at the arrays' scale
        for k in range(2):
            for vs in states[1:]:
                np.testing.assert_allclose(states[0][k].numpy(), vs[k].numpy(), rtol=1e-5, atol=1e-6)


def test_a_checkpoint_after_the_step_holds_the_new_value(tmp_path):
    W, m = _vars()
    fn, _ = fused_tier(_step(W, m), _z())
    fn(_z(3))
    path = tf.train.Checkpoint(W=W, m=m).write(str(tmp_path / "ck"))
    W2, m2 = tf.Variable(np.zeros((64, 48), np.float32)), tf.Variable(np.zeros((64, 48), np.float32))
    tf.train.Checkpoint(W=W2, m=m2).read(path)
    np.testing.assert_array_equal(W2.numpy(), W.numpy())
    np.testing.assert_array_equal(m2.numpy(), m.numpy())


@pytest.mark.parametrize("opt", ["adam", "sgd"])
def test_optimizer_and_soft_update_equal_out_of_place(opt, monkeypatch):
    """The same compiled step with in-place planning switched off (the kernels write new
    arrays, as before in-place updates existed) gives the same values to an ulp a step: not to
    the bit, because fastmath 'contract' lets LLVM form FMAs differently in the two
    kernels' code (the in-place kernel stores its results last in the iteration)."""
    def run(inplace):
        if not inplace:
            monkeypatch.setattr(buffers, "_plan_in_place", lambda *a: None)
        rs = np.random.default_rng(4)
        W = tf.Variable(rs.standard_normal((96, 80)).astype(np.float32) * 0.1)
        T = tf.Variable(W.numpy())
        o = tf.keras.optimizers.Adam(3e-4) if opt == "adam" else tf.keras.optimizers.SGD(0.01, momentum=0.9)

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, W)))
            o.apply_gradients([(tape.gradient(loss, W), W)])
            T.assign(0.005 * W + 0.995 * T)
            return loss
        x = rs.standard_normal((32, 96)).astype(np.float32)
        step(x)
        step.get_concrete_function(x)._tier_up()
        for _ in range(3):
            step(x)
        monkeypatch.undo()
        plan_owned = buffers.plan_buffers(step.get_concrete_function(x).fused_graph).owned
        return W.numpy(), T.numpy(), [v.numpy() for v in o.variables], plan_owned
    a, b = run(True), run(False)
    assert len(a[3]) >= 2, "nothing was updated in place"
    for x, y in zip([a[0], a[1]] + a[2], [b[0], b[1]] + b[2]):
        np.testing.assert_array_max_ulp(x, y, maxulp=4)  # an ulp a step, four steps


def test_the_old_value_read_in_the_same_loop_is_read_before_it_is_overwritten():
    """The update's loop also computes a result from the old value: it is written over in
    place (nothing after the loop reads it), each element read before its store."""
    (W, m), (_, m2) = _vars(), _vars()

    def step(z):
        old = m.read_value()
        m.assign(0.9 * m + 0.1 * tf.reduce_mean(z) * tf.sqrt(m * m + 1.0))
        return old * 2.0 + 1.0 - old * old
    fn, cf = fused_tier(step, _z())
    m2.assign(m.numpy())
    assert buffers.plan_buffers(cf.fused_graph).inplace
    for s in range(3):
        old = m2.numpy().copy()
        m2.assign(0.9 * m2 + 0.1 * float(np.mean(_z(s))) * tf.sqrt(m2 * m2 + 1.0))
        np.testing.assert_allclose(fn(_z(s)).numpy(), old * 2.0 + 1.0 - old * old, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m.numpy(), m2.numpy(), rtol=1e-5, atol=1e-7)
