"""A fused loop's new value of a variable that later equations also read (TD3's actor
update reads the critic's new weights in its GEMMs) is written over the variable's
array too (passes/buffers.py ``_plan_in_place``): the readers read the variable's
array, so that needs no later write of the variable in the graph. Values equal eager
and the reference interpreter; with a second write of the variable after the readers,
the update stays out of place."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import tapeflow as tf
from conftest import fused_tier, moment_update, same_start
from tapeflow.compiler.passes import buffers
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _vars(seed=0):
    rs = np.random.default_rng(seed)
    W = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.1, name="W")
    m = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.01, name="m")
    T = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.1, name="T")
    return W, m, T


def _step(W, m, T, write_again=False):
    def step(z):
        h, _ = moment_update(z, W, m)
        y2 = tf.matmul(h, W)                      # reads the new W (a GEMM after the update)
        T.assign(0.995 * T + 0.005 * W)           # and the soft update reads it too
        if write_again:
            W.assign(W * 0.5)                     # W written again after the readers
        return tf.reduce_sum(y2) + tf.reduce_sum(tf.matmul(h, W))
    return step


def _z(seed=1):
    return np.random.default_rng(seed).standard_normal((32, 64)).astype(np.float32)


@pytest.mark.parametrize("write_again", [False, True])
def test_a_new_value_read_after_its_assign_is_written_in_place_unless_written_again(write_again):
    state = _vars()
    fn, cf = fused_tier(_step(*state, write_again=write_again), _z())
    plan = buffers.plan_buffers(cf.fused_graph)
    W = state[0]
    assert (id(W) in {id(v) for v in plan.owned}) is not write_again
    arrays = weakref.ref(W._v)  # (a reference would make _own_array copy)
    fn(_z(2))
    assert (W._v is arrays()) is not write_again


@pytest.mark.parametrize("write_again", [False, True])
def test_values_equal_eager_the_python_backend_and_the_interpreter(write_again):
    states = [_vars() for _ in range(3)]
    fn, cf = fused_tier(_step(*states[0], write_again=write_again), _z())
    # the fused run above made one step: bring the others to the same start
    start = same_start(states)
    py = tf.function(_step(*states[1], write_again=write_again), backend="python")
    eager = _step(*states[2], write_again=write_again)
    py.get_concrete_function(_z())
    for v, s in zip(states[1], start):
        v.assign(s)
    for s in range(3):
        z = _z(s + 5)
        outs = [fn(z).numpy(), py(z).numpy(), eager(tf.constant(z)).numpy()]
        for o in outs[1:]:
            np.testing.assert_allclose(outs[0], o, rtol=1e-4)
        for k in range(3):
            for vs in (states[1], states[2]):
                np.testing.assert_allclose(states[0][k].numpy(), vs[k].numpy(), rtol=1e-5, atol=1e-6)
    # the fused graph in the reference interpreter (it reads and writes the traced
    # variables, states[0]'s): the same step from the same state as the compiled call
    start = [v.numpy().copy() for v in states[0]]
    got = eval_graph(cf.fused_graph, [_z(9)])
    got_vars = [v.numpy().copy() for v in states[0]]
    for v, s in zip(states[0], start):
        v.assign(s)
    want = fn(_z(9)).numpy()
    np.testing.assert_allclose(np.asarray(got[0]), want, rtol=1e-4)
    for a, v in zip(got_vars, states[0]):
        np.testing.assert_allclose(a, v.numpy(), rtol=1e-5, atol=1e-6)
