"""Columns in fused loops: an operand of shape (m, 1) against an (m, n) loop is read
once per row. An outer product (m, 1) @ (1, n) (the backward of a layer with one
output unit: g @ W.T) is, by matmul's record, the multiply of a column by a row, so
it joins the loop that consumes it instead of writing an (m, n) temporary. Checked
against eager and the reference interpreter, in both orientations, on square loops
(where a column and a row have the same size), with a relu at exactly 0."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler.passes import fusion
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _tiered(f, *args):
    fn = tf.function(f)
    cf = fn.get_concrete_function(*args)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return fn, cf


def _names(graph):
    return [e.prim.name for e in graph.eqns]


def _relu_backward(h, g, w):
    """The hidden layer's gradient under an output layer of one unit: relu's mask
    (h > 0, false at exactly 0) times g @ w.T, and its column sums (the bias gradient)."""
    d = tf.matmul(g, tf.transpose(w))
    s = tf.where(h > 0, d, tf.zeros_like(d))
    return s, tf.reduce_sum(s, axis=0)


@pytest.mark.parametrize("m,n", [(256, 256), (300, 200), (200, 300)])
def test_outer_product_joins_the_relu_gradient_loop(m, n):
    rs = np.random.default_rng(m + n)
    h = rs.standard_normal((m, n)).astype(np.float32)
    h[::7, ::5] = 0.0                        # relu's gradient at exactly 0 is 0
    g = rs.standard_normal((m, 1)).astype(np.float32)
    w = rs.standard_normal((n, 1)).astype(np.float32)
    args = [tf.constant(x) for x in (h, g, w)]
    want = [t.numpy() for t in _relu_backward(*args)]
    fn, cf = _tiered(_relu_backward, *args)
    assert "matmul" not in _names(cf.fused_graph), str(cf.fused_graph)
    loops = [e.params["graph"] for e in cf.fused_graph.eqns if e.prim is fusion.fused_elementwise_p]
    assert len(loops) == 1 and "mul" in _names(loops[0]) and "select" in _names(loops[0])
    got = [t.numpy() for t in fn(*args)]
    # one product per element, rounded once: the select's values are the eager bits
    np.testing.assert_array_equal(got[0], want[0])
    assert (got[0][h == 0] == 0).all()
    # the column sums accumulate in float64 in the loop (NumPy's are pairwise float32)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5 * np.abs(want[1]).max())
    ref = eval_graph(cf.fused_graph, [h, g, w])
    np.testing.assert_array_equal(ref[0], want[0])


def test_outer_product_of_a_row_times_a_column_is_not_read_transposed():
    """(m, 1) @ (1, n) with the column made by a transpose of a row and the row by a
    transpose of a column: the loop must read a[i] * b[j], not a[j] * b[i] (equal
    sizes make both index maps valid)."""
    rs = np.random.default_rng(3)
    a = rs.standard_normal((1, 128)).astype(np.float32)
    b = rs.standard_normal((128, 1)).astype(np.float32)
    x = rs.standard_normal((128, 128)).astype(np.float32)

    def f(a, b, x):
        return tf.nn.relu(tf.matmul(tf.transpose(a), tf.transpose(b)) + x) * x

    args = [tf.constant(v) for v in (a, b, x)]
    want = f(*args).numpy()
    fn, cf = _tiered(f, *args)
    assert "matmul" not in _names(cf.fused_graph)
    # the add after the product may contract into one fused multiply-add in the loop
    # (fastmath 'contract', as in every fused loop): equal within float32 rounding
    np.testing.assert_allclose(fn(*args).numpy(), want, rtol=1e-5, atol=1e-5)
    transposed = f(tf.constant(b.T), tf.constant(a.T), args[2]).numpy()
    assert np.abs(transposed - want).max() > 0.1


@pytest.mark.parametrize("shape,col", [((256, 256), (256, 1)), ((64, 32, 48), (64, 32, 1)),
                                       ((64, 32, 48), (1, 32, 1)), ((40, 40), (1, 40, 1))])
def test_column_operands_broadcast_along_the_last_axis(shape, col):
    """x * c + row with a column c: the fused loop and the whole-graph numba backend
    give eager's values (within the rounding of a contracted multiply-add). Shapes that do not broadcast as a column over every leading
    axis ((1, 32, 1) against (64, 32, 48)) stay out of the loop, still correct."""
    rs = np.random.default_rng(len(shape))
    x = rs.standard_normal(shape).astype(np.float32)
    c = rs.standard_normal(col).astype(np.float32)
    r = rs.standard_normal(shape[-1:]).astype(np.float32)

    def f(x, c, r):
        y = x * c + r
        return tf.nn.relu(y) - c, tf.reduce_sum(y * y)

    args = [tf.constant(v) for v in (x, c, r)]
    want = [t.numpy() for t in f(*args)]
    fn, cf = _tiered(f, *args)
    got = [t.numpy() for t in fn(*args)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    fused_inputs = {v.aval.shape for e in cf.fused_graph.eqns if e.prim is fusion.fused_elementwise_p
                    for v in e.inputs}
    is_column = fusion.column_rows(col, shape) is not None
    assert (col in fused_inputs) == is_column
    nb = tf.function(f, backend="numba")
    if not is_column:
        with pytest.raises(NotImplementedError, match="broadcasting"):
            nb(*args)
        return
    got = [t.numpy() for t in nb(*args)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


def test_column_rows_is_decided_by_shape():
    assert fusion.column_rows((256, 1), (256, 256)) == 256
    assert fusion.column_rows((1, 256), (256, 256)) is None       # a row
    assert fusion.column_rows((256,), (256, 256)) is None         # a row of the same size
    assert fusion.column_rows((1, 1), (256, 256)) is None         # one element: a scalar read
    assert fusion.column_rows((256, 1), (256, 1)) is None         # the loop's own shape
    assert fusion.column_rows((8, 4, 1), (8, 4, 5)) == 32
    assert fusion.column_rows((4, 1), (8, 4, 5)) is None          # broadcast over the batch too


def test_an_outer_product_no_loop_takes_stays_a_matmul():
    """Its consumer is a GEMM: no loop takes the multiply, so the product keeps
    matmul's own kernel (the native outer loop into its planned buffer)."""
    rs = np.random.default_rng(5)
    g = tf.constant(rs.standard_normal((256, 1)).astype(np.float32))
    w = tf.constant(rs.standard_normal((1, 256)).astype(np.float32))
    x = tf.constant(rs.standard_normal((256, 64)).astype(np.float32))

    def f(g, w, x):
        y = tf.nn.relu(x * 2.0 + 1.0) * x          # a loop of another shape
        return tf.matmul(tf.matmul(g, w), y), y

    want = [t.numpy() for t in f(g, w, x)]
    fn, cf = _tiered(f, g, w, x)
    assert _names(cf.fused_graph).count("matmul") == 2
    got = [t.numpy() for t in fn(g, w, x)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("k", [1, 4])  # an outer product; a short contraction (outer_sum's)
def test_integer_and_batched_products_keep_matmul(k):
    rs = np.random.default_rng(6)
    a = tf.constant(rs.integers(-5, 5, (64, k)).astype(np.int32))
    b = tf.constant(rs.integers(-5, 5, (k, 64)).astype(np.int32))
    ab = tf.constant(rs.standard_normal((4, 64, k)).astype(np.float32))
    bb = tf.constant(rs.standard_normal((4, k, 64)).astype(np.float32))

    def f(a, b, ab, bb):
        return (tf.matmul(a, b) * 3 + 1) * a[:, :1], (tf.matmul(ab, bb) * 3.0 + 1.0) * ab[:, :, :1]

    want = [t.numpy() for t in f(a, b, ab, bb)]
    fn, cf = _tiered(f, a, b, ab, bb)
    assert _names(cf.fused_graph).count("matmul") == 2
    got = fn(a, b, ab, bb)
    np.testing.assert_array_equal(got[0].numpy(), want[0])
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-5, atol=1e-5)


def _critic_head(h, b, w, g):
    """A critic's last hidden layer and its one-unit output: relu(h + b) @ w (a row sum
    per example), the output layer's weight gradient y.T @ g (column sums of y times
    the column g) and the relu gradient of g @ w.T."""
    y = tf.nn.relu(h + b)
    q = tf.matmul(y, w)
    dw = tf.matmul(tf.transpose(y), g)
    dh = tf.where(y > 0, tf.matmul(g, tf.transpose(w)), tf.zeros_like(y))
    return q, dw, dh, tf.reduce_sum(dh, axis=0)


def _critic_head_case(m, n, seed):
    """Random (h, b, w, g) for _critic_head, their Tensors, eager's results, and the
    function tiered up to its fused graph."""
    rs = np.random.default_rng(seed)
    h = rs.standard_normal((m, n)).astype(np.float32)
    b = rs.standard_normal(n).astype(np.float32)
    w = rs.standard_normal((n, 1)).astype(np.float32)
    g = rs.standard_normal((m, 1)).astype(np.float32)
    args = [tf.constant(x) for x in (h, b, w, g)]
    want = [t.numpy() for t in _critic_head(*args)]
    fn, cf = _tiered(_critic_head, *args)
    return (h, b, w, g), args, want, fn, cf


@pytest.mark.parametrize("m,n", [(256, 256), (300, 200), (200, 300)])
def test_products_with_one_output_column_become_row_and_column_sums(m, n):
    (h, b, w, g), args, want, fn, cf = _critic_head_case(m, n, m * 7 + n)
    assert "matmul" not in _names(cf.fused_graph), str(cf.fused_graph)
    got = [t.numpy() for t in fn(*args)]
    for x, y in zip(got, want):
        assert x.shape == y.shape
    # sums in the loop's order (float32 per row, float64 over rows), not BLAS's
    for k in (0, 1, 3):
        np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=2e-5 * np.abs(want[k]).max())
    np.testing.assert_array_equal(got[2], want[2])
    # a transposed reading would be far off: y @ w against y.T @ w (square case) or a shape error
    y = np.maximum(h + b, 0)
    assert np.abs(got[0][:, 0] - (y @ w)[:, 0]).max() < 1e-3 * np.abs(y @ w).max()
    ref = eval_graph(cf.fused_graph, [h, b, w, g])
    np.testing.assert_allclose(ref[0], want[0], rtol=2e-5, atol=2e-5 * np.abs(want[0]).max())


@pytest.mark.parametrize("keepdims", [False, True])
def test_row_folds_over_the_last_axis(keepdims):
    """Reductions over the last axis only (a user's reduce_sum(x * y, axis=-1), a max)
    fold per row inside the loop, rank 3 too, beside column sums of the same loop."""
    rs = np.random.default_rng(9)
    x = rs.standard_normal((16, 24, 40)).astype(np.float32)
    r = rs.standard_normal(40).astype(np.float32)

    def f(x, r):
        y = tf.nn.relu(x * r + 0.5)
        return (tf.reduce_sum(y * r, axis=-1, keepdims=keepdims), tf.reduce_max(y, axis=2, keepdims=keepdims),
                tf.reduce_sum(y, axis=(0, 1)))

    args = [tf.constant(x), tf.constant(r)]
    want = [t.numpy() for t in f(*args)]
    fn, cf = _tiered(f, *args)
    assert not [e for e in cf.fused_graph.eqns if e.prim.fusion == "reduction"], str(cf.fused_graph)
    got = [t.numpy() for t in fn(*args)]
    # (x * r + 0.5 may contract to a multiply-add: the max is within that rounding)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)
    # each row's own value: a fold that mixed rows (or read columns) would be far off
    y = np.maximum(x * r + 0.5, 0)
    assert np.abs(got[1].reshape(16, 24) - y.max(axis=2)).max() < 1e-5


def test_softmax_over_rows_fuses_in_stages_and_matches_eager():
    """A row max, then values that read it as a column, then a row sum read back the
    same way: the kernel runs them in stages (a fold's result is ready in the next
    loop), every value eager's within float32 rounding."""
    rs = np.random.default_rng(11)
    x = rs.standard_normal((300, 40)).astype(np.float32)
    b = rs.standard_normal(40).astype(np.float32)
    y = rs.random((300, 40)).astype(np.float32)

    def f(x, b, y):
        z = x * 2.0 + b
        e = tf.exp(z - tf.reduce_max(z, axis=-1, keepdims=True))
        s = e / tf.reduce_sum(e, axis=-1, keepdims=True)
        return s, tf.reduce_sum(s * y, axis=1), tf.reduce_sum((s - y) ** 2)

    args = [tf.constant(v) for v in (x, b, y)]
    want = [t.numpy() for t in f(*args)]
    fn, cf = _tiered(f, *args)
    assert [e.prim for e in cf.fused_graph.eqns] == [fusion.fused_elementwise_p]
    got = [t.numpy() for t in fn(*args)]
    np.testing.assert_allclose(got[0], want[0], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(got[0].sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_row_folds_and_columns_in_a_chunked_parallel_loop():
    """Past PARALLEL_MIN_ELEMENTS the loop runs in prange chunks of whole rows: each
    row's sum is stored by the chunk that holds the row, columns read at the row."""
    from tapeflow.compiler.backends import numba_backend
    m, n = 640, 256
    assert m * n >= numba_backend.PARALLEL_MIN_ELEMENTS
    (h, b, w, g), args, want, fn, cf = _critic_head_case(m, n, 12)
    assert "matmul" not in _names(cf.fused_graph)
    got = [t.numpy() for t in fn(*args)]
    for k in (0, 1, 3):
        np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=2e-5 * np.abs(want[k]).max())
    np.testing.assert_array_equal(got[2], want[2])
