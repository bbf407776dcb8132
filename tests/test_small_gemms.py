"""The small products and lone elementwise ops of a compiled TD3-style update:
a slice of a GEMM's product pushed down to its operands (passes/slices.py), a lone
relu-gradient select between two GEMMs fused into a native loop (fusion._pays), and
outer products (contraction of length 1) into a planned buffer by a native loop
(threads.matmul). Each checked for what the rewrite must and must not do, and by
values: against NumPy, eager and the reference interpreter, in every backend."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.compiler.passes import fusion
from tapeflow.compiler.passes.cse import cse
from tapeflow.compiler.passes.dce import dce
from tapeflow.compiler.passes.slices import push_slices
from tapeflow.core.primitives import linalg
from tapeflow.ir.interpreter import eval_graph
from tapeflow.util import threads

F32 = np.float32
BACKENDS = ["interpreter", "python", "auto", "python+fused"]  # numba alone takes no GEMM graph


def _raw(fn, *args):
    return tf.function(fn, backend="interpreter").get_concrete_function(*args).raw_graph


def _matmuls(g):
    return [(e.inputs[0].aval.shape, e.inputs[1].aval.shape) for e in g.eqns if e.prim.name == "matmul"]


def _arrays(*shapes, seed=0):
    rs = np.random.default_rng(seed)
    return [rs.standard_normal(s).astype(F32) for s in shapes]


def _close(got, want, rtol=2e-5):
    for g, w in zip(got, want):
        g = np.asarray(g.numpy() if hasattr(g, "numpy") else g)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.abs(w).max())))


# -- slice push-down ----------------------------------------------------------------------------

@pytest.mark.parametrize("key, a_shape, b_shape", [
    ((slice(None), slice(3, 5)), (8, 7), (7, 2)),          # columns: b's columns
    ((slice(1, 4),), (3, 7), (7, 6)),                      # rows only: a's rows
    ((slice(2, 6), slice(None, 4)), (4, 7), (7, 4)),       # both
    ((Ellipsis, slice(-2, None)), (8, 7), (7, 2)),         # x[..., -2:]
])
def test_slice_of_a_product_becomes_a_product_of_slices(key, a_shape, b_shape):
    a, b = _arrays((8, 7), (7, 6))
    f = lambda a, b: tf.matmul(a, b)[key]  # noqa: E731
    raw = _raw(f, a, b)
    g = push_slices(raw)
    assert _matmuls(raw) == [((8, 7), (7, 6))]
    assert _matmuls(g) == [(a_shape, b_shape)]
    want = (a @ b)[key]
    _close(eval_graph(g, [a, b]), [want])
    _close(eval_graph(raw, [a, b]), [want])


@pytest.mark.parametrize("f", [
    lambda a, b: tf.matmul(a, b)[:, ::2],                          # a step: not a BLAS-ready view
    lambda a, b: tf.matmul(a, b)[:, 1],                            # an integer drops an axis
    lambda a, b: (tf.matmul(a, b)[:, 1:3], tf.matmul(a, b)),       # the product is used whole too
    lambda a, b: tf.matmul(a, b)[:, 1:3] + tf.reduce_sum(tf.matmul(a, b)),
    lambda a, b: tf.matmul(a, b)[:, :],                            # keeps everything
])
def test_products_used_whole_or_sliced_otherwise_stay(f):
    a, b = _arrays((8, 7), (7, 6))
    raw = dce(cse(_raw(f, a, b)))  # the two matmuls of a program are one
    g = push_slices(raw)
    assert _matmuls(g) == _matmuls(raw)
    _close(eval_graph(g, [a, b]), eval_graph(raw, [a, b]))


def _critic_grad_wrt_action(params):
    """The actor update's path through the critic: Q(concat(s, a)) differentiated
    at the action; only the action's columns of d(concat) reach the actor."""
    w1, b1, w2 = params

    def f(s, a):
        with tf.GradientTape() as tape:
            tape.watch(a)
            h = tf.nn.relu(tf.matmul(tf.concat([s, a], 1), w1) + b1)
            q = tf.reduce_mean(tf.matmul(h, w2))
        return tape.gradient(q, a)
    return f


def _critic_reference(params, s, a):
    w1, b1, w2 = (p.numpy().astype(np.float64) for p in params)
    x = np.concatenate([s, a], 1).astype(np.float64)
    z = x @ w1 + b1
    g = np.ones((len(x), 1)) / len(x) @ w2.T * (z > 0)
    return (g @ w1.T)[:, s.shape[1]:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_at_the_action_matches_numpy_in_every_backend(backend):
    S, A, H, N = 17, 6, 64, 32
    w1, b1, w2 = _arrays((S + A, H), (H,), (H, 1), seed=1)
    params = [tf.Variable(w1), tf.Variable(b1 * 0.1), tf.Variable(w2)]
    s, a = _arrays((N, S), (N, A), seed=2)
    want = _critic_reference(params, s, a)
    f = _critic_grad_wrt_action(params)
    _close([f(tf.constant(s), tf.constant(a))], [want])                       # eager
    fn = tf.function(f, backend=backend)
    _close([fn(s, a)], [want])
    cf = fn.get_concrete_function(s, a)
    # d(concat) @ W1.T sliced to the action's columns is an (N, H) @ (H, A) GEMM
    assert ((N, H), (H, A)) in _matmuls(cf.graph)
    assert ((N, H), (H, S + A)) not in _matmuls(cf.graph)


# -- a lone select between two GEMMs fuses --------------------------------------------------------

B, D, H, O = 64, 12, 48, 5


def _input_gradient(w1, w2):
    """Gradient of a bias-free relu layer at its input: g @ w2.T, then the relu mask's
    select, then @ w1.T -- the select is the only elementwise op between two GEMMs."""
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2))
        return tape.gradient(y, x)
    return f


#: sizes past matmul's narrow forms (linalg.SHORT_K, FEW_N), so that the products stay GEMMs
#: and the op between them is alone
D_WIDE = O_WIDE = max(linalg.SHORT_K, linalg.FEW_N) + 1


def test_lone_relu_gradient_select_runs_in_a_native_loop():
    pytest.importorskip("numba")
    x, w1, w2 = _arrays((B, D_WIDE), (D_WIDE, H), (H, O_WIDE), seed=3)
    f = _input_gradient(tf.constant(w1), tf.constant(w2))
    fn = tf.function(f)
    cf = fn.get_concrete_function(x)
    assert [e for e in cf.graph.eqns if e.prim.name == "select" and e.outputs[0].aval.shape == (B, H)]
    cf._tier_up()
    assert cf.backend == "python+fused"
    left = [e for e in cf.fused_graph.eqns if e.prim.name == "select"]
    assert not left, [str(e) for e in left]
    groups = [e.params["graph"] for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    assert any("select" in [e.prim.name for e in g.eqns] and len(g.eqns) < fusion.MIN_OPS for g in groups), \
        [str(g) for g in groups]
    want = ((np.ones((B, O_WIDE)) @ w2.T.astype(np.float64)) * (x @ w1 > 0)) @ w1.T
    _close([fn(x)], [want])
    _close(eval_graph(cf.fused_graph, [x]), [want])


def test_lone_ufunc_op_between_two_gemms_stays_a_numpy_call():
    """A single multiply is one NumPy pass already: a native call would add its own cost."""
    pytest.importorskip("numba")
    x, w1, w2 = _arrays((B, D_WIDE), (D_WIDE, H), (H, O_WIDE), seed=4)
    fn = tf.function(lambda x: tf.matmul(tf.matmul(x, w1) * 3.0, w2))
    cf = fn.get_concrete_function(x)
    assert pipeline.tier_up(cf.graph, "t") is None
    _close([fn(x)], [(x @ w1 * 3.0) @ w2])


# -- outer products -------------------------------------------------------------------------------

def _outer_operands(dtype):
    rs = np.random.default_rng(5)
    col = rs.standard_normal((40, 1)).astype(dtype)
    row = rs.standard_normal((1, 30)).astype(dtype)
    wide = rs.standard_normal((40, 4)).astype(dtype)
    return [(col, row), (row.T.copy().T.T, col.T),  # (30,1) views of transposes
            (wide[:, 2:3], row)]                     # a strided column of a wider array


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_outer_product_into_a_buffer_is_the_elementwise_product_to_the_bit(dtype):
    for a, b in _outer_operands(dtype):
        want = np.multiply(a, b)
        out = np.full(want.shape, 7, dtype)
        got = threads.matmul(a, b, out=out)
        assert got is out
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(threads.matmul(a, b), want)    # eager: no buffer


def test_outer_product_gradient_compiled_matches_eager():
    """A layer with one output unit: its input gradient g @ W.T is an outer product."""
    x, w, g = _arrays((50, 20), (20, 1), (50, 1), seed=6)
    wv = tf.Variable(w)

    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.matmul(x, wv) * g)
        return tape.gradient(y, x) * 2.0  # the product is an intermediate: into a planned buffer
    want = 2.0 * (g.astype(np.float64) @ w.T.astype(np.float64))
    eager = f(tf.constant(x)).numpy()
    _close([eager], [want])
    for backend in ("interpreter", "python", "auto"):  # nothing elementwise to fuse here
        got = tf.function(f, backend=backend)(x).numpy()
        np.testing.assert_array_equal(got, eager)


# -- start values seeding a loop of the backward pass ---------------------------------------------

def _products_of(g, literal):
    """Outputs of fused loops that are ``literal * <loop input>``: a start value written
    by one loop and read back by another."""
    found = []
    for e in g.eqns:
        if e.prim.name != "fused_elementwise":
            continue
        sub = e.params["graph"]
        for q in sub.eqns:
            if q.prim.name == "mul" and q.outputs[0] in sub.outputs and any(
                    getattr(v, "val", None) == literal for v in q.inputs):
                found.append(q)
    return found


def _interpreted(sub):
    """A stand-in for the native kernel of a fused group: the reference interpreter."""
    return lambda *args: eval_graph(sub, list(args))


def test_a_start_value_seeding_a_backward_loop_leaves_it_for_its_users_loop():
    """``0.9 * m`` (Adam's first moment) found just before a relu-gradient select and its
    column sums of the same shape (TD3: batch 256 = width 256) seeded their loop, which
    then wrote it out for the update loop to read back; it now leaves the group and
    joins its user's loop."""
    n = 64
    m, mask_src, g, w = _arrays((n, n), (n, n), (n, n), (n, n), seed=7)

    def f(m, mask_src, g, w):
        start = 0.9 * m
        s = tf.where(mask_src > 0, g, 0.0)
        u = tf.matmul(s, w)
        return start + 0.1 * u, tf.reduce_sum(s, 0)
    graph = tf.function(f).get_concrete_function(m, mask_src, g, w).graph
    assert [e.prim.name for e in graph.eqns][:2] == ["mul", "greater"]   # the start value leads
    fused = fusion.fuse_elementwise(graph, _interpreted)
    groups = [e.params["graph"] for e in fused.eqns if e.prim.name == "fused_elementwise"]
    assert [[q.prim.name for q in sub.eqns] for sub in groups] == [
        ["greater", "select", "reduce_sum"], ["mul", "mul", "add"]], str(fused)
    assert not _products_of(fused, 0.9)
    want = [0.9 * m + 0.1 * (np.where(mask_src > 0, g, 0) @ w), np.where(mask_src > 0, g, 0).sum(0)]
    _close(eval_graph(fused, [m, mask_src, g, w]), want)
    _close(tf.function(f)(m, mask_src, g, w), want)
