"""A fused group past MAX_ARRAYS arrays is cut between independent chains
(passes/fusion.py ``_limit_arrays``), not inside one: no value of a chain is
written by one loop and read back by the next (TD3's second critic's Adam update
had its moments updated in one loop and its weight in the next). Values agree
with eager and the reference interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler.passes import fusion
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")

SHAPE = (128, 64)


def _adam_chains(n, shared_x=False):
    """``n`` unrelated updates of one shape, each of its own gradient (an argument, not a
    constant): a momentum update (5 arrays), then Adam updates (4 operands and 3 results
    each), so the first two fit in MAX_ARRAYS and the third does not. With ``shared_x``,
    Adam updates only, and the first and the last also add one common (128, 64)
    operand, the argument ``x``, to their gradient."""
    rs = np.random.default_rng(2)
    state = [tuple(tf.Variable(rs.random(SHAPE).astype(np.float32) * (k + 1)) for k in range(3))
             for _ in range(n)]

    def step(lr, x, grads):
        for i, (p, m, v) in enumerate(state):
            gi = grads[i]
            if shared_x and i in (0, n - 1):
                gi = gi + x
            if i == 0 and not shared_x:
                # a momentum update first (3 operands, 2 results): then a cut that counts
                # members keeps the third chain's moment updates (their results are
                # written to variables, so they are results of the loop anyway)
                m.assign(0.9 * m + gi)
                p.assign_sub(lr * m)
                continue
            m.assign(0.9 * m + 0.1 * gi)
            v.assign(0.999 * v + 0.001 * gi * gi)
            p.assign_sub(lr * m / (tf.sqrt(v) + 1e-7))
        return tf.constant(0.0)
    return state, step


X = tf.constant(np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32))
G = [tf.constant(g) for g in np.random.default_rng(4).standard_normal((4,) + SHAPE).astype(np.float32)]


def _fused(step, lr):
    f = tf.function(step)
    f(lr, X, G)
    cf = f.get_concrete_function(lr, X, G)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return f, cf, [e for e in cf.fused_graph.eqns if e.prim is fusion.fused_elementwise_p]


@pytest.mark.parametrize("n", [3, 4])
def test_a_group_past_the_limit_is_cut_between_chains(n):
    state_e, step_e = _adam_chains(n)
    state_c, step_c = _adam_chains(n)
    lr = tf.constant(np.float32(1e-2))
    step_e(lr, X, G)
    f, cf, fused = _fused(step_c, lr)
    made = {o for e in fused for o in e.outputs}
    # a result of one loop read by another: a chain was split across loops
    crossing = [v for e in fused for v in e.inputs if v in made]
    assert not crossing, [str(e.params["graph"]) for e in fused]
    assert len(fused) >= 2
    assert max(sum(v.aval.shape != () for v in e.inputs) + len(e.outputs) for e in fused) <= fusion.MAX_ARRAYS
    assert not [e for e in cf.fused_graph.eqns if e.prim.name in ("sqrt", "div")], "an update was left unfused"
    _two_more_steps_equal(f, step_e, lr, state_c, state_e)


def _two_more_steps_equal(f, step_e, lr, state_c, state_e):
    """Two more steps of the fused function ``f`` and of eager ``step_e``: every state
    variable equal to eager's (fused loops: last bits only)."""
    for _ in range(2):
        step_e(lr, X, G)
        f(lr, X, G)
    for a, b in zip(state_c, state_e):
        for u, w in zip(a, b):
            np.testing.assert_allclose(u.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)

def test_chains_reading_a_common_operand_stay_in_one_loop():
    """Two chains that read the same (128, 64) operand are cut as one: the loop reads
    it once. Parameters equal eager's."""
    n = 3
    state_e, step_e = _adam_chains(n, shared_x=True)
    state_c, step_c = _adam_chains(n, shared_x=True)
    lr = tf.constant(np.float32(1e-2))
    step_e(lr, X, G)
    f, cf, fused = _fused(step_c, lr)
    x = cf.fused_graph.inputs[1]
    readers = [e for e in fused if x in e.inputs]
    assert len(fused) >= 2 and len(readers) == 1, [str(e.params["graph"]) for e in fused]
    _two_more_steps_equal(f, step_e, lr, state_c, state_e)


def test_components_split_on_shared_values_and_common_operands():
    """``_components`` on a traced chain list: members linked by a value one makes and
    another reads, or by an operand of the loop's shape they both read; the seed's
    (first member's) chain first, the others by their last member."""
    a = tf.constant(np.ones(SHAPE, np.float32))
    b = tf.constant(np.ones(SHAPE, np.float32))
    c = tf.constant(np.ones(SHAPE, np.float32))
    d = tf.constant(np.ones(SHAPE, np.float32))

    def f(a, b, c, d):
        p = a * 2.0          # 0  chain A
        q = b * 3.0          # 1  chain B (reads b)
        r = p + 1.0          # 2  chain A
        s = c * 4.0          # 3  chain C
        t = b - 5.0          # 4  chain B: reads b too
        u = d * 6.0          # 5  chain D
        return r, q, s, t, u

    g = tf.function(f).get_concrete_function(a, b, c, d).graph
    eqns = [e for e in g.eqns if e.prim.fusion == "elementwise"]
    assert len(eqns) == 6, [str(e) for e in eqns]
    comps = fusion._components(eqns, list(range(6)))
    assert comps == [[0, 2], [3], [1, 4], [5]], comps
    assert fusion._components(eqns, [1, 3, 4, 5]) == [[1, 4], [3], [5]]
    # the interpreter runs the graph as traced (a check that the trace is what it says)
    out = eval_graph(g, [np.ones(SHAPE, np.float32)] * 4)
    np.testing.assert_array_equal(out[0], np.full(SHAPE, 3.0, np.float32))
