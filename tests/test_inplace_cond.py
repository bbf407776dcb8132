"""In-place variable updates through a ``cond`` (TD3's delayed actor update): the top
level's fused update writes a variable in place although the cond reads the new value
(buffers ``_plan_in_place`` with ``ir.graph.variable_effects``; the cond's outputs alias
only what a branch returns, ``alias_map``), and a cond operand that reads a variable the
branch writes becomes a read inside the branch (passes/branch_reads.py), so the
branch's own update loops write in place too. The python backend clears the enclosing
function's dead locals holding variables' arrays before the branch runs, so the branch's
``_own_array`` finds the arrays unshared and copies only for a real holder (a snapshot).

Checked against eager, the python backend (first tier, no in-place) and the reference
interpreter on the traced and on the rewritten graph, over calls with the branch taken
and not, with snapshots held; a read used after the cond (or a write between the read
and the cond) keeps the read where it is."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import tapeflow as tf
from conftest import eval_graph_with, fused_tier, moment_update, same_start
from tapeflow.compiler import pipeline
from tapeflow.compiler.passes import buffers
from tapeflow.compiler.passes.branch_reads import reads_into_branches
from tapeflow.core.primitive import READ_VARIABLE
from tapeflow.core.primitives.effects import assign_variable_p
from tapeflow.ir.control_flow import cond_p
from tapeflow.ir.graph import Eqn, Graph
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")

NAMES = ("C", "mc", "W", "m", "T")


def _vars(seed=0):
    rs = np.random.default_rng(seed)
    vs = [tf.Variable((rs.standard_normal((64, 48)) * s).astype(np.float32), name=n)
          for n, s in zip(NAMES, (0.1, 0.01, 0.1, 0.01, 0.1))]
    return vs + [tf.Variable(np.int64(0), name="it")]


def _step(C, mc, W, m, T, it, read_after=False):
    def step(z):
        it.assign_add(1)
        t_old = T.read_value()
        tq = tf.reduce_sum(tf.matmul(z, t_old))    # an earlier pure use of T's read (target Q)
        h, _ = moment_update(z, C, mc)              # the top level's update of C

        def actor():                                # reads C's new value, updates W, m and T
            _, y = moment_update(z, W, m)
            T.assign(0.995 * T + 0.005 * W)
            return tf.reduce_sum(y) + tf.reduce_sum(tf.matmul(h, C))
        out = tf.cond(it % 2 == 0, actor, lambda: tf.constant(0.0))
        if read_after:
            out = out + tf.reduce_sum(t_old * t_old)   # T's old value, after the cond
        return out + tq
    return step


def _z(seed=1):
    return np.random.default_rng(seed).standard_normal((32, 64)).astype(np.float32)


def _cond(graph):
    return [e for e in graph.eqns if e.prim is cond_p][-1]


def _read_operands(graph):
    reads = {e.outputs[0]: e.params["var"]._name for e in graph.eqns if e.prim is READ_VARIABLE}
    return sorted(reads[v] for v in _cond(graph).inputs if v in reads)


def _branch_plan(graph):
    g, plan, _ = pipeline.optimize(_cond(graph).params["branches"][1])
    return plan


@pytest.mark.parametrize("read_after", [False, True])
def test_the_reads_move_into_the_branch_and_both_levels_update_in_place(read_after):
    state = _vars()
    C, mc, W, m, T, it = state
    fn, cf = fused_tier(_step(*state, read_after=read_after), _z())
    g = cf.fused_graph
    # T's read stays an operand when its value is used after the cond
    assert _read_operands(g) == (["T"] if read_after else [])
    assert {"T", "W", "m"} <= set(_read_operands(cf.raw_graph))  # (the traced graph is untouched)
    top = {v._name for v in buffers.plan_buffers(g).owned}
    assert {"C", "mc"} <= top, "the cond reading C's new value kept C out of place"
    branch = {v._name for v in _branch_plan(g).owned}
    assert branch == ({"W", "m"} if read_after else {"W", "m", "T"})
    fn(_z(2))  # (it = 2 after the tier-up's call and this one: the branch ran)
    arrays = {n: weakref.ref(v._v) for n, v in zip(NAMES, state)}  # (a reference would make _own_array copy)
    for s in range(4):  # the branch taken twice, skipped twice
        fn(_z(3 + s))
    same = {n for n, v in zip(NAMES, state) if v._v is arrays[n]()}
    assert same == (set(NAMES) - {"T"} if read_after else set(NAMES))


@pytest.mark.parametrize("read_after", [False, True])
@pytest.mark.parametrize("snapshots", [False, True])
def test_values_equal_eager_the_python_backend_and_the_interpreter(read_after, snapshots):
    states = [_vars() for _ in range(5)]
    fused, cf = fused_tier(_step(*states[0], read_after=read_after), _z())
    same_start(states)
    py = tf.function(_step(*states[1], read_after=read_after), backend="python")
    eager = _step(*states[4], read_after=read_after)
    raw, rewritten = cf.raw_graph, cf.graph
    assert len(_cond(rewritten).inputs) < len(_cond(raw).inputs)
    for s in range(5):
        z = _z(s + 5)
        held = [(v.read_value(), v.numpy(), v.numpy().copy()) for v in states[0][:5]] if snapshots else []
        outs = [fused(z).numpy(), py(z).numpy(), eval_graph_with(raw, states[2], states[0], z),
                eval_graph_with(rewritten, states[3], states[0], z), eager(tf.constant(z)).numpy()]
        for o in outs[1:]:
            np.testing.assert_allclose(outs[0], o, rtol=1e-4)
        for k in range(6):
            for vs in states[1:]:
                np.testing.assert_allclose(states[0][k].numpy(), vs[k].numpy(), rtol=1e-5, atol=1e-6,
                                           err_msg=f"{state_name(k)} after call {s}")
        for t, n, want in held:  # a snapshot keeps its value, as in TF
            np.testing.assert_array_equal(t.numpy(), want)
            np.testing.assert_array_equal(n, want)
    assert int(states[0][5].numpy()) == 6


def state_name(k):
    return (NAMES + ("it",))[k]


# -- the move's conditions on hand-made orders (tracing puts a branch's hoisted reads just
# before its cond, so a write between them never comes from a trace)

def _two_writers():
    T = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="T")

    def f(x, flag):
        T.assign(T * 2.0 + x)                       # the write (in-between, once reordered)

        def upd():
            T.assign(T * 0.5 + 1.0)
            return tf.reduce_sum(T)
        return tf.cond(flag, upd, lambda: tf.constant(0.0))
    g = tf.function(f, backend="python").get_concrete_function(
        np.ones((2, 3), np.float32), tf.constant(True)).raw_graph
    return T, g


def _read_before_the_write(g):
    """``g`` with the cond's read of T moved before the top level's write of T: the cond
    must then see the value before the write, so the read may not move into the branch."""
    eqns = list(g.eqns)
    r = next(i for i, e in enumerate(eqns) if e.prim is READ_VARIABLE and e.outputs[0] in _cond(g).inputs)
    w = next(i for i, e in enumerate(eqns) if e.prim is assign_variable_p)
    assert w < r
    read = eqns.pop(r)
    eqns.insert(0, read)
    return g.copy(eqns=eqns)


def _write_in_a_cond_before(g):
    """The top level's write of T wrapped in a cond of its own (a write inside an equation)."""
    eqns = list(g.eqns)
    w = next(i for i, e in enumerate(eqns) if e.prim is assign_variable_p)
    a = eqns[w]
    pred = _cond(g).inputs[0]
    inner = Graph([*[v for v in a.inputs]], [], [Eqn(assign_variable_p, a.inputs, [], a.params)], [])
    eqns[w] = Eqn(cond_p, [pred, *a.inputs], [], {"branches": (inner, inner)})
    return g.copy(eqns=eqns)


def _same_results(g, out, T, flag):
    """``out`` (the rewritten graph) returns what ``g`` returns and leaves ``T`` as ``g`` does,
    both run by the reference interpreter from ``T``'s current value."""
    x, start = np.full((2, 3), 3.0, np.float32), T.numpy().copy()
    want = eval_graph(g, [x, np.bool_(flag)])
    after = T.numpy().copy()
    T.assign(start)
    got = eval_graph(out, [x, np.bool_(flag)])
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    np.testing.assert_array_equal(T.numpy(), after)


@pytest.mark.parametrize("make", [_read_before_the_write, _write_in_a_cond_before])
def test_a_write_between_the_read_and_the_cond_keeps_the_read(make):
    T, g = _two_writers()
    g = make(_read_before_the_write(g)) if make is _write_in_a_cond_before else make(g)
    out = reads_into_branches(g)
    assert _read_operands(out) == ["T"]
    _same_results(g, out, T, True)


def test_with_no_write_between_the_read_moves_and_the_values_stay():
    T, g = _two_writers()
    assert _read_operands(g) == ["T"]
    out = reads_into_branches(g)
    assert _read_operands(out) == []
    start = T.numpy().copy()
    for flag in (True, False):
        T.assign(start)
        _same_results(g, out, T, flag)


def test_a_cond_returning_a_variables_array_keeps_a_later_update_out_of_place():
    """A branch that writes V and returns V's read hands the caller V's array with no read
    at the top level to show it: the update after the cond must not write over it."""
    V = tf.Variable(np.random.default_rng(3).standard_normal((64, 48)).astype(np.float32), name="V")
    V2 = tf.Variable(V.numpy())

    def make(V):
        def step(z, flag):
            def upd():
                V.assign(V * 0.5 + 1.0)
                return V.read_value()
            got = tf.cond(flag, upd, lambda: V.read_value() * 1.0)
            V.assign(0.9 * V + 0.1 * tf.reduce_mean(z) * tf.sqrt(V * V + 1.0))
            # (a GEMM after the update reads it: a fused loop would read each element before
            # storing over it, and hide the sharing)
            return tf.matmul(got, tf.ones((48, 16)))
        return step
    fn, cf = fused_tier(make(V), _z(), tf.constant(False))
    V2.assign(V.numpy())
    assert id(V) not in {id(v) for v in buffers.plan_buffers(cf.fused_graph).owned}
    eager = make(V2)
    for s, flag in enumerate((True, False, True)):
        got = fn(_z(s), tf.constant(flag)).numpy()
        np.testing.assert_allclose(got, eager(tf.constant(_z(s)), tf.constant(flag)).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(V.numpy(), V2.numpy(), rtol=1e-5, atol=1e-6)


def test_variable_effects_reach_nested_sub_graphs_and_keep_other_effects():
    """A cond inside a cond: the outer equation reads and writes what the inner one does;
    a print inside makes it an equation that may touch anything (``other``), which the
    in-place planner treats as it did every cond before."""
    from tapeflow.ir.graph import variable_effects
    A = tf.Variable(np.ones(3, np.float32), name="A")
    B = tf.Variable(np.ones(3, np.float32), name="B")

    def make(show):
        def f(x, flag):
            def outer():
                def inner():
                    B.assign(A * 2.0 + x)
                    if show:
                        tf.print(x)
                    return tf.constant(1.0)
                return tf.cond(flag, inner, lambda: tf.constant(0.0))
            return tf.cond(flag, outer, lambda: tf.constant(0.0))
        return tf.function(f, backend="python").get_concrete_function(
            np.ones(3, np.float32), tf.constant(True)).raw_graph
    for show in (False, True):
        fx = variable_effects(_cond(make(show)))
        assert set(fx.writes) == {id(B)} and fx.other == ({"io"} if show else set())
