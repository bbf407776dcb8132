"""The native loops for narrow GEMMs (util/gemm_kernels.py) behind threads.matmul: every
shape class against a float64 product with a bound that grows with the contraction, in
float32 and float64, every operand layout, with and without out=, the edge cases that
must not reach a loop; that the loop is really the one taking the shape; and one kernel
per shape in every mode: eager and compiled (python, numba, fused tier) give the same
bits for a Dense -> Dense(6) network and its gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.util import gemm_kernels, threads

pytest.importorskip("numba")

F32, F64 = np.float32, np.float64


@pytest.fixture
def calls(monkeypatch):
    """Which native loop each threads.matmul call ran: ['dots' | 'rows', ...]."""
    dots, rows, *_ = gemm_kernels.kernels()
    seen = []

    def spy(name, k):
        def run(*args):
            seen.append(name)
            return k(*args)
        return run
    monkeypatch.setattr(gemm_kernels, "_KERNELS", [(spy("dots", dots), spy("rows", rows))])
    return seen


def _arr(shape, dtype, seed, layout="C"):
    """A float array of ``shape`` in the layout asked: C, F (a transposed C array) or S
    (every other column of a wider array: neither C nor F contiguous)."""
    rs = np.random.default_rng(seed)
    if layout == "C":
        return rs.standard_normal(shape).astype(dtype)
    if layout == "F":
        return rs.standard_normal(shape[::-1]).astype(dtype).T
    return rs.standard_normal((shape[0], 2 * shape[1])).astype(dtype)[:, ::2]


def _check(got, a, b):
    """|got - a @ b| within the float error of a K-term sum of |a| |b| (the bound any
    summation order meets), computed in float64; and the dtype and shape of np.matmul."""
    want = a.astype(F64) @ b.astype(F64)
    scale = np.abs(a).astype(F64) @ np.abs(b).astype(F64)
    eps = np.finfo(a.dtype).eps
    k = a.shape[1]
    assert got.dtype == np.result_type(a, b) and got.shape == want.shape
    assert np.all(np.abs(got - want) <= (k + 2) * eps * scale + np.finfo(a.dtype).tiny)


# shape class -> (M, K, N), the layouts of a and b that reach the native loop, the loop
CLASSES = [
    # 4-7 result columns, a contiguous along k >= 128: dot products (an output layer, its dX)
    ("narrow", (256, 256, 6), "C", "C", "dots"),
    ("narrow b.T", (256, 256, 6), "C", "F", "dots"),
    ("narrow 4", (256, 256, 4), "C", "C", "dots"),
    ("narrow 400x300", (256, 300, 6), "C", "F", "dots"),
    ("odd rows", (131, 257, 5), "C", "C", "dots"),
    ("k 128", (256, 128, 4), "C", "C", "dots"),
    # 4-7 result columns, a = h.T: the weight gradient h.T @ g as (g.T @ h).T
    ("narrow a.T", (256, 256, 6), "F", "C", "rows"),
    ("narrow a.T b.T", (131, 270, 5), "F", "F", "rows"),
    ("narrow a.T 7", (300, 256, 7), "F", "C", "rows"),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name, mkn, la, lb, loop", CLASSES, ids=[c[0] for c in CLASSES])
def test_each_shape_class_runs_its_loop_and_matches_a_float64_product(name, mkn, la, lb, loop, dtype, calls):
    m, k, n = mkn
    a, b = _arr((m, k), dtype, 1, la), _arr((k, n), dtype, 2, lb)
    got = threads.matmul(a, b)
    assert calls == [loop]
    _check(got, a, b)
    out = np.full((m, n), np.nan, dtype)
    assert threads.matmul(a, b, out=out) is out
    assert calls == [loop, loop]
    assert np.array_equal(out, got)                # into a buffer: the same bits


@pytest.mark.parametrize("loop", ["dots", "rows"])
def test_an_element_does_not_depend_on_the_blocking(loop):
    """Both loops take rows in blocks of four (the last block overlapping), rows takes k
    in chunks of 4, 2, 1 and vectorizes over columns (with a scalar remainder): an
    element's value is the same whichever block, chunk or lane computes it. Shifting
    the rows and taking a few columns moves every element to another place."""
    dots, rows, *_ = gemm_kernels.kernels()
    a, b = _arr((23, 37), F32, 3), _arr((37, 50), F32, 4)

    def run(a, b):
        c = np.empty((len(a), b.shape[1]), F32)
        if loop == "dots":
            dots(a, np.ascontiguousarray(b.T), c)
        else:
            rows(a, b, c)
        return c
    c = run(a, b)
    for i in (1, 2, 3, 5):
        assert np.array_equal(run(a[i:], b), c[i:])
    assert np.array_equal(run(a, np.ascontiguousarray(b[:, 11:18])), c[:, 11:18])
    assert np.array_equal(run(a[:9], b), c[:9])


@pytest.mark.parametrize("mkn, la, lb", [
    ((3, 256, 256), "F", "C"), ((4096, 3, 6), "C", "C"), ((256, 256, 3), "F", "C"),   # < 4: the loops' blocks
    ((256, 256, 1), "C", "C"), ((256, 256, 2), "C", "F"),                             # matrix-vector: BLAS's
    ((256, 23, 256), "C", "C"), ((256, 6, 256), "C", "F"),      # short contractions and few rows:
    ((23, 256, 256), "F", "C"), ((17, 256, 400), "F", "C"),     # BLAS on two threads is faster
    ((256, 256, 6), "S", "C"), ((256, 256, 8), "C", "C"),       # a strided; 8 columns: BLAS's tile
    ((1024, 96, 6), "C", "C"), ((100, 200, 4), "F", "C"),       # short dots; below NATIVE_MACS
])
def test_other_shapes_and_layouts_stay_with_numpy(mkn, la, lb, calls):
    m, k, n = mkn
    a, b = _arr((m, k), F32, 22, la), _arr((k, n), F32, 23, lb)
    got = threads.matmul(a, b)
    assert calls == []
    _check(got, a, b)


@pytest.mark.parametrize("mkn", [(0, 23, 256), (256, 0, 256), (256, 23, 0), (256, 256, 0), (0, 256, 6)])
def test_empty_sides_give_numpy_results_without_a_loop(mkn, calls):
    m, k, n = mkn
    a, b = _arr((m, k), F32, 5), _arr((k, n), F32, 6)
    got = threads.matmul(a, b)
    assert calls == []
    assert got.shape == (m, n) and got.dtype == F32 and not got.any()
    out = np.full((m, n), np.nan, F32)
    threads.matmul(a, b, out=out)
    assert not out.any()


@pytest.mark.parametrize("a_dt, b_dt", [(F32, F64), (np.int32, np.int32), (np.float16, np.float16),
                                        (np.dtype(">f4"), np.dtype(">f4"))])
def test_other_dtypes_stay_with_numpy(a_dt, b_dt, calls):
    a = (_arr((256, 256), F64, 7) * 4).astype(a_dt)
    b = (_arr((256, 6), F64, 8) * 4).astype(b_dt)
    got = threads.matmul(a, b)
    assert calls == []
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_float32_dtype_that_is_another_object_takes_the_loop_too(calls):
    """NumPy can hold equal dtypes that are different objects (a variable's value had
    one): the loop is chosen by the dtype's number, or such a product would go to BLAS
    and round differently from the same product of other arrays."""
    import pickle
    dt = pickle.loads(pickle.dumps(np.dtype(F32)))
    assert dt is not np.dtype(F32)
    a, b = _arr((256, 256), F32, 20), _arr((256, 6), F32, 21)
    b2 = b.astype(dt)
    assert b2.dtype is not np.dtype(F32)
    got = threads.matmul(a, b2)
    assert calls == ["dots"] and np.array_equal(got, threads.matmul(a, b))


def test_out_the_loop_cannot_write_goes_to_numpy(calls):
    a, b = _arr((256, 256), F32, 9), _arr((256, 6), F32, 10)
    for out in (np.empty((256, 6), F64), np.empty((256, 6), F32, order="F"), np.empty((256, 12), F32)[:, ::2]):
        assert threads.matmul(a, b, out=out) is out
        _check(out.astype(F32), a, b)
    assert calls == []


def test_batched_and_tiny_products_stay_with_numpy(calls):
    threads.matmul(_arr((1, 17), F32, 11), _arr((17, 256), F32, 12))          # act's first layer
    threads.matmul(_arr((1, 256), F32, 11), _arr((256, 6), F32, 12))
    a = np.stack([_arr((256, 256), F32, 13)] * 2)
    got = threads.matmul(a, _arr((256, 6), F32, 14))
    assert calls == [] and got.shape == (2, 256, 6)


def test_without_numba_the_product_is_numpy(monkeypatch, calls):
    monkeypatch.setattr(gemm_kernels, "_KERNELS", [None])
    a, b = _arr((256, 256), F32, 15), _arr((256, 6), F32, 16)
    out = np.empty((256, 6), F32)
    assert threads.matmul(a, b, out=out) is out
    with threads_one():
        want = np.matmul(a, b)
    assert np.array_equal(out, want) and calls == []


def threads_one():
    from threadpoolctl import threadpool_limits
    return threadpool_limits(1, "blas")


def test_dtype_errors_are_unchanged():
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtypes differ: float32 \\(256, 256\\) vs float64"):
        tf.matmul(tf.zeros((256, 256)), tf.zeros((256, 6), tf.float64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimensions differ"):
        tf.matmul(tf.zeros((256, 23)), tf.zeros((17, 256)))


def test_layout_decides_only_the_loop():
    """A narrow product runs as dot products when a is contiguous along k and as rows of
    the transposed product when a is transposed; both are within the float bound, and
    each layout gives its own bits every call (the choice is by shape and strides)."""
    a = _arr((256, 256), F32, 17)
    b = _arr((256, 6), F32, 18)
    at = np.ascontiguousarray(a.T).T               # the same values, F order
    r1, r2 = threads.matmul(a, b), threads.matmul(at, b)
    _check(r1, a, b)
    _check(r2, a, b)
    assert np.array_equal(threads.matmul(a, b), r1) and np.array_equal(threads.matmul(at, b), r2)


# -- one kernel per shape: eager and every compiled mode give the same bits --------------------

@pytest.fixture
def one_intra_thread():
    """The network's other GEMMs are BLAS's, whose thread count (and so last bits) may
    drop to one under load between the eager and the compiled call: one thread holds
    it (as the thread policy documents for bit-reproducible runs)."""
    tf.config.threading.set_intra_op_parallelism_threads(1)
    yield
    tf.config.threading.set_intra_op_parallelism_threads(0)


def _net(seed):
    """Dense(256, relu) -> Dense(6) and its gradients. Elementwise parts are exact in any
    implementation (the bias add, relu, the loss's cotangent y), so the fused tier's own
    loops (which may round a tanh or a mean differently) leave the GEMMs' bits visible."""
    rs = np.random.default_rng(seed)
    params = [tf.Variable(rs.standard_normal(s).astype(F32) * 0.2) for s in ((23, 256), (256,), (256, 6), (6,))]
    x = rs.standard_normal((256, 23)).astype(F32)
    y = rs.standard_normal((256, 6)).astype(F32)

    def step(x, y):
        w1, b1, w2, b2 = params
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
            loss = tf.reduce_sum(out * y)
        gw1, _, gw2, _, gx = tape.gradient(loss, params + [x])
        return out, gw1, gw2, gx
    return step, x, y


@pytest.mark.parametrize("backend, kw", [("interpreter", {}), ("python", {}), ("auto", {})])
def test_dense_to_dense6_same_bits_eager_and_compiled(backend, kw, calls, one_intra_thread):
    step, x, y = _net(19)
    eager = [v.numpy() for v in step(tf.constant(x), tf.constant(y))]
    # h @ W2: dots; dW2 = h.T @ g: rows (the other three GEMMs: BLAS)
    assert {"dots", "rows"} <= set(calls)
    del calls[:]
    fn = tf.function(step, backend=backend, **kw)
    for _ in range(2):
        got = [np.asarray(v) for v in fn(x, y)]
        for g, e in zip(got, eager):
            assert g.dtype == e.dtype and np.array_equal(g, e)
    assert {"dots", "rows"} <= set(calls)


@pytest.mark.parametrize("backend, kw", [("python+fused", {}), ("python", {"jit_compile": True})])
def test_dense_to_dense6_in_the_fused_tier(backend, kw, calls, one_intra_thread):
    """The fused tier computes h @ W2 as row folds in the loop that makes h, g @ W2.T and
    dW2 = h.T @ g inside the relu gradient's loop (matmul's row_dots, outer_sum and
    col_dots forms): their sums run in the loop's order, so those results (and the GEMMs
    after them, dW1, dx) are within float32 rounding of eager's, the same on every call;
    neither narrow kernel runs."""
    step, x, y = _net(19)
    eager = [v.numpy() for v in step(tf.constant(x), tf.constant(y))]
    del calls[:]
    fn = tf.function(step, backend=backend, **kw)
    first = [np.asarray(v).copy() for v in fn(x, y)]
    got = [np.asarray(v) for v in fn(x, y)]
    for g, f, e in zip(got, first, eager):
        assert g.dtype == e.dtype and np.array_equal(g, f)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5 * np.abs(e).max())
    assert "rows" not in calls and "dots" not in calls
