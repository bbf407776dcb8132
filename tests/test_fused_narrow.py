"""Narrow products in fused loops. A product over a short contraction, (m, K) @ (K, n)
with 1 < K <= SHORT_K (the input gradient g @ W.T under an output layer of K units:
an actor's 6 actions), is by matmul's record a sum of K outer products (``outer_sum``):
it joins the loop that consumes it (relu's gradient), which reads g as K values per
row and W.T as K rows, instead of a GEMM writing an (m, n) temporary for the loop to
read back. Checked against eager, a float64 product and the reference interpreter, for
K up to the limit and just past it (a GEMM again), on square and non-square
loops, with relu at exactly 0, in a prange-chunked loop; wide-contraction products
stay matmuls (integer and batched ones: test_fused_columns.py).

Products with few output columns are matmul's ``row_dots`` (h @ W, N <= FEW_N: N row
folds in the loop that makes h) and ``col_dots`` (a weight gradient h.T @ g, N <=
FEW_N_SUMS: N column folds in the loop that reads h), checked the same way, with a
store at the wrong index of the (m, N) or (k, N) result failing 13 and 10 tests (the
blocks read in the wrong orientation: 22).

K's limit (SHORT_K in core/primitives/linalg.py, with the numbers): the fused loop's
cost grows by about a load and an FMA per element per K, BLAS's more slowly; they tie
near K=16 on (256, K) @ (K, 256) with relu's gradient."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler.passes import fusion
from tapeflow.core.primitives import linalg
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")

# the relu gradient under an output layer (g @ w.T under relu's mask, its column sums)
from test_fused_columns import _names, _relu_backward, _tiered  # noqa: E402


def _loops(cf):
    return [e.params["graph"] for e in cf.fused_graph.eqns if e.prim is fusion.fused_elementwise_p]


def _case(m, n, k, seed=0):
    rs = np.random.default_rng(seed + 31 * k + m)
    h = rs.standard_normal((m, n)).astype(np.float32)
    h[::7, ::5] = 0.0                        # relu's gradient at exactly 0 is 0
    g = rs.standard_normal((m, k)).astype(np.float32)
    w = rs.standard_normal((n, k)).astype(np.float32)
    return h, g, w


def _check(h, g, w, fused):
    args = [tf.constant(x) for x in (h, g, w)]
    want = [t.numpy() for t in _relu_backward(*args)]
    fn, cf = _tiered(_relu_backward, *args)
    names = [n for lp in _loops(cf) for n in _names(lp)]
    if not fused:
        assert "matmul" in _names(cf.fused_graph) and "outer_sum" not in names
    else:
        assert "matmul" not in _names(cf.fused_graph), str(cf.fused_graph)
        assert len(_loops(cf)) == 1 and {"outer_sum", "select"} <= set(names)
    got = [t.numpy() for t in fn(*args)]
    # the K products summed in the loop's order (FMAs): float32 rounding of a K-term sum
    exact = np.where(h > 0, g.astype(np.float64) @ w.T.astype(np.float64), 0.0)
    scale = np.abs(g).max() * np.abs(w).max() * g.shape[1]
    np.testing.assert_allclose(got[0], exact, rtol=0, atol=4e-7 * scale)
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=4e-7 * scale)
    assert (got[0][h == 0] == 0).all() and (got[0][h < 0] == 0).all()
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=4e-7 * scale * h.shape[0] ** 0.5)
    ref = eval_graph(cf.fused_graph, [h, g, w])   # the form's own kernel: matmul's
    np.testing.assert_allclose(ref[0], exact, rtol=0, atol=4e-7 * scale)
    return got


@pytest.mark.parametrize("k", sorted({2, 3, 6, 8, linalg.SHORT_K}))
@pytest.mark.parametrize("m,n", [(256, 256), (300, 200), (200, 300)])
def test_short_contraction_joins_the_relu_gradient_loop(m, n, k):
    _check(*_case(m, n, k), fused=True)


@pytest.mark.parametrize("m,n", [(256, 256), (96, 40)])
def test_past_the_limit_the_product_stays_a_gemm(m, n):
    _check(*_case(m, n, linalg.SHORT_K + 1), fused=False)


def test_a_contraction_as_long_as_the_result_is_wide_stays_a_gemm():
    """K = m: the (K, n) operand would be the loop's own shape; K = n: the (m, K) one."""
    h, g, w = _case(6, 256, 6)
    _check(h, g, w, fused=False)
    h, g, w = _case(256, 6, 6)
    _check(h, g, w, fused=False)


def test_blocks_are_told_apart_by_shape():
    assert fusion.contraction_block((256, 6), (256, 300)) == ("columns", 6)
    assert fusion.contraction_block((6, 300), (256, 300)) == ("rows", 6)
    assert fusion.contraction_block((256, 300), (256, 300)) is None      # the loop's shape
    assert fusion.contraction_block((256, 1), (256, 300)) is None        # a column
    assert fusion.contraction_block((1, 300), (256, 300)) is None        # a row
    assert fusion.contraction_block((4, 256, 6), (4, 256, 300)) is None  # batched: not read as blocks


def test_short_contraction_in_a_chunked_parallel_loop():
    """Past PARALLEL_MIN_ELEMENTS the loop runs in prange chunks of whole rows (unsigned
    indices): the blocks are read at the row and column each chunk holds."""
    from tapeflow.compiler.backends import numba_backend
    m, n = 640, 256
    assert m * n >= numba_backend.PARALLEL_MIN_ELEMENTS
    _check(*_case(m, n, 5), fused=True)


def _layer_pair(x, w1, b1, w2):
    """A hidden layer (bias add, relu) and an output layer of N units over it."""
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    return tf.matmul(h, w2), h


def _check_head(m, k, n, fused, seed=0):
    rs = np.random.default_rng(seed + 7 * n + m)
    x = rs.standard_normal((m, 17)).astype(np.float32)
    w1 = rs.standard_normal((17, k)).astype(np.float32)
    b1 = rs.standard_normal(k).astype(np.float32)
    b1[::3] = 0.0
    x[:, 0] = 0.0
    w1[1:, ::3] = 0.0                        # some pre-activations exactly 0: relu keeps them 0
    w2 = rs.standard_normal((k, n)).astype(np.float32)
    args = [tf.constant(v) for v in (x, w1, b1, w2)]
    want = [t.numpy() for t in _layer_pair(*args)]
    fn, cf = _tiered(_layer_pair, *args)
    names = [nm for lp in _loops(cf) for nm in _names(lp)]
    assert ("row_dots" in names) == fused, str(cf.fused_graph)
    assert _names(cf.fused_graph).count("matmul") == (1 if fused else 2)
    got = [t.numpy() for t in fn(*args)]
    np.testing.assert_array_equal(got[1], want[1])
    h = want[1].astype(np.float64)
    exact = h @ w2.astype(np.float64)
    # a row's k products summed in float32 in the loop's order (vector lanes, FMAs)
    tol = 2e-6 * (np.abs(h) @ np.abs(w2.astype(np.float64)))
    assert (np.abs(got[0] - exact) <= tol).all()
    assert (np.abs(want[0] - exact) <= tol).all()
    ref = eval_graph(cf.fused_graph, [x, w1, b1, w2])     # row_dots' own kernel: matmul's
    assert (np.abs(ref[0] - exact) <= tol).all()


@pytest.mark.parametrize("n", sorted({2, 3, 6, linalg.FEW_N}))
@pytest.mark.parametrize("m,k", [(256, 256), (300, 200), (200, 300)])
def test_few_output_columns_are_row_folds_in_the_loop_that_makes_the_operand(m, k, n):
    _check_head(m, k, n, fused=True)


def test_past_few_columns_the_product_stays_a_gemm():
    _check_head(256, 256, linalg.FEW_N + 1, fused=False)
    _check_head(6, 256, 6, fused=False)         # as many columns as rows


def test_few_columns_in_a_chunked_parallel_loop():
    from tapeflow.compiler.backends import numba_backend
    assert 640 * 256 >= numba_backend.PARALLEL_MIN_ELEMENTS
    _check_head(640, 256, 5, fused=True)


def _actor_backward(h, g, w):
    """The backward of an output layer of N units over a relu layer h: the input gradient
    g @ w.T under relu's mask (outer_sum), its column sums (the bias gradient) and the
    weight gradient h.T @ g (col_dots), all over h's (m, n) elements: one loop."""
    d = tf.where(h > 0, tf.matmul(g, tf.transpose(w)), 0.0)
    return d, tf.reduce_sum(d, axis=0), tf.matmul(tf.transpose(h), g)


def _check_weight_gradient(m, n, k, fused):
    h, g, w = _case(m, n, k, seed=5)
    args = [tf.constant(x) for x in (h, g, w)]
    want = [t.numpy() for t in _actor_backward(*args)]
    fn, cf = _tiered(_actor_backward, *args)
    names = [nm for lp in _loops(cf) for nm in _names(lp)]
    assert ("col_dots" in names) == fused, str(cf.fused_graph)
    if fused:
        assert len(_loops(cf)) == 1 and "matmul" not in _names(cf.fused_graph), str(cf.fused_graph)
    got = [t.numpy() for t in fn(*args)]
    exact = h.T.astype(np.float64) @ g.astype(np.float64)
    # m products per element, summed down the rows in float32 (as BLAS accumulates)
    tol = 4e-7 * m ** 0.5 * 4 * (np.abs(h.T) @ np.abs(g.astype(np.float64)))
    for r in (got[2], want[2], eval_graph(cf.fused_graph, [h, g, w])[2]):
        assert r.shape == (n, k) and (np.abs(r - exact) <= tol).all()
    scale = np.abs(g).max() * np.abs(w).max() * k
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=4e-7 * scale)


@pytest.mark.parametrize("k", sorted({2, 5, linalg.FEW_N_SUMS}))
@pytest.mark.parametrize("m,n", [(256, 256), (300, 200), (200, 300)])
def test_a_weight_gradient_with_few_columns_folds_down_the_rows(m, n, k):
    _check_weight_gradient(m, n, k, fused=True)


def test_weight_gradient_column_folds_in_a_chunked_parallel_loop():
    from tapeflow.compiler.backends import numba_backend
    assert 640 * 256 >= numba_backend.PARALLEL_MIN_ELEMENTS
    _check_weight_gradient(640, 256, 5, fused=True)


def test_a_weight_gradient_past_the_limit_or_with_no_loop_keeps_matmul():
    """Past FEW_N_SUMS columns, or with no loop over x (its fold joins a loop that reads
    x, never seeds one), x.T @ g stays a product (gemm_kernels' rows loop or BLAS)."""
    _check_weight_gradient(256, 256, linalg.FEW_N_SUMS + 1, fused=False)
    rs = np.random.default_rng(11)
    x = tf.constant(rs.standard_normal((256, 200)).astype(np.float32))
    g = tf.constant(rs.standard_normal((256, 6)).astype(np.float32))

    def f(x, g):
        y = tf.nn.relu(g * 2.0 + 1.0)
        return tf.matmul(tf.transpose(x), y), y

    want = [t.numpy() for t in f(x, g)]
    fn, cf = _tiered(f, x, g)
    assert "matmul" in _names(cf.fused_graph)
    assert "col_dots" not in [nm for lp in _loops(cf) for nm in _names(lp)]
    got = [t.numpy() for t in fn(x, g)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)
