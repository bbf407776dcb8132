"""Big GEMMs cut into pieces that threads take in turn (tapeflow/util/split_gemm.py)."""
import os
import threading

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.util import split_gemm, threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _ops(m, k, n, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)


@pytest.mark.parametrize("sa, sb, want", [
    ((10000, 784), (784, 200), (0, 8)),    # the autoencoder's forward GEMMs: output rows
    ((10000, 200), (200, 784), (0, 8)),
    ((200, 10000), (10000, 784), (2, 8)),  # its weight gradients: the batch (contraction)
    ((784, 10000), (10000, 200), (2, 8)),
    ((200, 784), (784, 10000), (1, 8)),    # a wide output: columns
    ((2048, 2048), (2048, 2048), None),    # every piece would pack a 16 MB operand again
    ((4, 10000), (10000, 4), (2, 8)),
    ((10000, 3), (3, 10000), (0, 8)),      # an outer product's pieces re-read a 3x10000 operand
    ((7, 7), (7, 7), None),                # fewer rows, columns and terms than pieces
])
def test_plan_splits_where_pieces_add_little_traffic(sa, sb, want):
    assert split_gemm.plan(sa, sb, np.dtype(np.float32), np.dtype(np.float32), 2) == want


def test_a_bigger_pool_gets_more_pieces_until_they_cost_too_much():
    f32 = np.dtype(np.float32)
    assert split_gemm.plan((10000, 784), (784, 200), f32, f32, 4) == (0, 8)
    assert split_gemm.plan((10000, 784), (784, 200), f32, f32, 6) == (0, 12)
    # 32 pieces would each pack the 784x200 operand again: OpenBLAS's threads run it
    assert split_gemm.plan((10000, 784), (784, 200), f32, f32, 16) is None
    assert split_gemm.plan((200, 10000), (10000, 784), f32, f32, 16) is None


def test_plan_leaves_batches_mixed_and_non_blas_dtypes_alone():
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert split_gemm.plan((10000, 784), (784, 200), f64, f64, 2) == (0, 8)
    assert split_gemm.plan((10000, 784), (784, 200), f32, f64, 2) is None
    assert split_gemm.plan((10000, 784), (784, 200), np.dtype(np.int32), np.dtype(np.int32), 2) is None
    assert split_gemm.plan((10000, 784), (784, 200), np.dtype(np.float16), np.dtype(np.float16), 2) is None
    assert split_gemm.plan((2, 10000, 784), (784, 200), f32, f32, 2) is None


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("layout", ["NN", "TN", "NT"])
@pytest.mark.parametrize("given_out", [False, True])
def test_pieces_compute_the_product(axis, layout, given_out):
    a, b = _ops(203, 157, 61)
    if layout[0] == "T":
        a = np.ascontiguousarray(a.T).T
    if layout[1] == "T":
        b = np.ascontiguousarray(b.T).T
    want = a.astype(np.float64) @ b.astype(np.float64)
    out = np.full((203, 61), np.nan, np.float32) if given_out else None
    got = split_gemm.matmul(a, b, out, (axis, 8), 2)
    assert got.dtype == np.float32 and got.shape == (203, 61)
    if given_out:
        assert got is out
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("axis", [0, 2])
def test_bits_do_not_depend_on_the_thread_count(axis):
    """The pieces and the order of the partial sums follow from the shapes: one, two or
    three threads (a busy machine's or a quiet one's) give the same bits."""
    a, b = _ops(600, 900, 50) if axis == 0 else _ops(50, 900, 60)
    with threadpoolctl.threadpool_limits(1, "blas"):
        got = [split_gemm.matmul(a, b, None, (axis, 8), n) for n in (1, 2, 3, 2)]
    for g in got[1:]:
        assert np.array_equal(g, got[0])


def test_a_failing_piece_raises_in_the_caller_and_the_pool_goes_on():
    a, b = _ops(64, 32, 16)
    with pytest.raises(TypeError, match="matmul"):
        split_gemm.matmul(a, b, np.empty((64, 16), np.int32), (0, 8), 2)   # float into int
    np.testing.assert_allclose(split_gemm.matmul(a, b, None, (0, 8), 2), a @ b, rtol=1e-5, atol=1e-5)


def test_concurrent_callers_get_the_same_bits():
    """A second program thread finding the pool busy runs its pieces itself: the same
    pieces, so the same bits as through the pool."""
    a, b = _ops(800, 400, 64)
    with threadpoolctl.threadpool_limits(1, "blas"):
        want = split_gemm.matmul(a, b, None, (0, 8), 2)
        got, errors = [], []

        def call():
            try:
                for _ in range(5):
                    got.append(split_gemm.matmul(a, b, None, (0, 8), 2))
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        ts = [threading.Thread(target=call) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    assert not errors and len(got) == 15
    assert all(np.array_equal(g, want) for g in got)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_gets_a_pool_of_its_own():
    a, b = _ops(64, 32, 16)
    split_gemm.matmul(a, b, None, (0, 8), 2)      # the parent's worker exists now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            ok = np.allclose(split_gemm.matmul(a, b, None, (0, 8), 2), a @ b, atol=1e-4)
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 1) == b"1" and status == 0
    os.close(r)


# --- the route through threads.matmul ------------------------------------------------------
@pytest.fixture
def fake_blas(monkeypatch):
    """threads' policy on a fake 2-thread BLAS (thread counts recorded, not set), past the
    ceiling from 1M multiply-adds; split_gemm.matmul's calls recorded."""
    sets, calls = [], []
    for k, v in {"set": sets.append, "many": 2, "current": None, "load_at": float("-inf"),
                 "intra": tf.config.threading.get_intra_op_parallelism_threads}.items():
        monkeypatch.setitem(threads._STATE, k, v)
    monkeypatch.setattr(threads, "_CHOICE", {})
    monkeypatch.setattr(threads, "CEIL_MACS", 1 << 20)
    real = split_gemm.matmul
    monkeypatch.setattr(split_gemm, "matmul", lambda a, b, out, how, n: calls.append((how, n)) or real(a, b, out, how, n))
    tf.config.threading.set_intra_op_parallelism_threads(0)
    yield sets, calls
    tf.config.threading.set_intra_op_parallelism_threads(0)


@pytest.mark.parametrize("quiet", [True, False])
def test_big_splittable_gemms_run_as_pieces_on_all_threads_busy_or_quiet(fake_blas, monkeypatch, quiet):
    sets, calls = fake_blas
    monkeypatch.setattr(threads, "_machine_quiet", lambda now, others=None: quiet)
    a, b = _ops(4096, 64, 32)
    got = threads.matmul(a, b)
    assert calls == [((0, 8), 2)] and sets == [1] and threads._CHOICE == {}
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)
    a, b = _ops(256, 256, 256)                     # past the ceiling, but not split
    threads.matmul(a, b)
    assert len(calls) == 1 and sets == [1, 2] if quiet else sets == [1]


def test_the_intra_op_count_is_the_pieces_thread_count(fake_blas):
    sets, calls = fake_blas
    a, b = _ops(4096, 64, 32)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    threads.matmul(a, b)
    tf.config.threading.set_intra_op_parallelism_threads(8)   # capped at BLAS's pool
    threads.matmul(a, b)
    assert calls == [((0, 8), 1), ((0, 8), 2)] and sets == [1]


@pytest.mark.parametrize("size, n", [(10000, 8), (60000, 8), (784, 12), (8, 8), (1, 8)])
def test_pieces_cover_the_axis_and_shrink_towards_the_end(size, n):
    """The pieces taken last are the short ones (a slowed thread holds the others up by a
    short piece at most); together they cover the axis once, in order."""
    c = split_gemm._cuts(size, n)
    sizes = [c[i + 1] - c[i] for i in range(n)]
    assert c[0] == 0 and c[-1] == size and min(sizes) >= 0
    assert all(x >= y for x, y in zip(sizes, sizes[1:])) or size < n * n
    if size >= 1000:
        assert sizes[-1] < size / n / 2 < sizes[0]
