"""Parallel fused loops: a native loop over at least PARALLEL_MIN_ELEMENTS elements
runs in prange chunks. Checked against the serial kernels and the reference
interpreter above and below the threshold (elementwise chains, row-broadcast
operands, full and leading-axis reductions, integer sums), for bit-for-bit
determinism across calls and thread counts, the thread policy, and numba's
on-disk cache of parallel kernels."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ir.interpreter import eval_graph

numba = pytest.importorskip("numba")
from tapeflow.compiler.backends import numba_backend as nbk  # noqa: E402
from tapeflow.util import threads  # noqa: E402

C = 160
ROWS_ABOVE = -(-nbk.PARALLEL_MIN_ELEMENTS // C) + 64    # a few chunks of rows
ROWS_BELOW = nbk.PARALLEL_MIN_ELEMENTS // C // 8


@pytest.fixture
def two_threads(monkeypatch):
    """Threads as on a quiet machine (the policy gives one thread while others run)."""
    monkeypatch.setattr(threads, "machine_quiet", lambda: True)
    yield
    tf.config.threading.set_intra_op_parallelism_threads(0)


def _batch(x, b, k):
    a = tf.sigmoid(x * 1.5 + b)                       # b: a bias row
    d = a - 0.25
    kk = k * 3 + 1                                    # int32: sums must stay exact
    return (a * (1.0 - a),                            # elementwise outputs
            tf.reduce_sum(d * d),                     # full reductions (float32 sum: widened)
            tf.reduce_max(d),
            tf.reduce_sum(a, axis=0),                 # column sums (widened)
            tf.reduce_max(d, axis=0, keepdims=True),  # column max
            tf.reduce_sum(kk, axis=0),                # integer column sums
            tf.reduce_sum(kk * kk))                   # integer full sum


def _flat(x, y):
    s = tf.sin(x) * y + x
    return s * s + 1.0, tf.reduce_sum(s), tf.reduce_min(s * y)


def _args(rows, seed=0):
    rs = np.random.default_rng(seed)
    return (rs.standard_normal((rows, C)).astype(np.float32), rs.standard_normal(C).astype(np.float32),
            rs.integers(-1000, 1000, (rows, C)).astype(np.int32))


def _fused(fn, args, monkeypatch, parallel):
    """``fn`` tiered up with parallel loops on or off: (function, its fused kernels' sources)."""
    monkeypatch.setattr(nbk, "PARALLEL_MIN_ELEMENTS", nbk.PARALLEL_MIN_ELEMENTS if parallel else 1 << 62)
    f = tf.function(fn)
    cf = f.get_concrete_function(*args)
    cf._tier_up()
    monkeypatch.undo()
    assert cf.backend == "python+fused"
    srcs = [e.params["kernel"].__tapeflow_source__ for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    return f, cf, srcs


def _check(fn, args, monkeypatch, expect_parallel, float_sums):
    """Parallel kernels == serial kernels, exactly except the float sums at
    positions ``float_sums`` (grouped differently per chunk: float32 rounding),
    and both == the reference interpreter on the unfused graph."""
    fp, cf, srcs = _fused(fn, args, monkeypatch, parallel=True)
    assert any("prange" in s for s in srcs) == expect_parallel, srcs
    fs, _, serial_srcs = _fused(fn, args, monkeypatch, parallel=False)
    assert not any("prange" in s for s in serial_srcs)
    ref = eval_graph(cf.graph, list(args))
    par = [t.numpy() for t in fp(*args)]
    ser = [t.numpy() for t in fs(*args)]
    assert len(par) == len(ser) == len(ref)
    for k, (p, s, r) in enumerate(zip(par, ser, ref)):
        r = np.asarray(r)
        assert p.dtype == s.dtype == r.dtype and p.shape == s.shape == r.shape, k
        if k in float_sums:
            np.testing.assert_allclose(p, s, rtol=2.5e-7, err_msg=str(k))
        elif p.dtype.kind == "f":
            # fastmath 'contract' lets LLVM fuse a multiply-add (in simd_exp's polynomial)
            # into an FMA in one loop and not in the other (the serial loop's noalias
            # arguments change how it is scheduled): a sigmoid differs by an ulp, which
            # a * (1 - a) near a = 1 turns into a few ulps of its small result (the same
            # tolerance as against the interpreter below)
            np.testing.assert_allclose(p, s, rtol=2e-6, atol=1e-6 * np.abs(s).max(), err_msg=str(k))
        else:
            np.testing.assert_array_equal(p, s, err_msg=str(k))
        np.testing.assert_allclose(p, r, rtol=2e-6, atol=1e-6 * np.abs(r).max(), err_msg=str(k))
    return fp


@pytest.mark.parametrize("rows,parallel", [(ROWS_ABOVE, True), (ROWS_BELOW, False)])
def test_rows_and_reductions_match_serial_and_interpreter(rows, parallel, monkeypatch, two_threads):
    _check(_batch, _args(rows), monkeypatch, parallel, float_sums=(1, 3))


@pytest.mark.parametrize("n,parallel", [(3 * nbk.PARALLEL_MIN_ELEMENTS // 2 + 7, True), (4096, False)])
def test_flat_chain_and_full_reductions_match(n, parallel, monkeypatch, two_threads):
    rs = np.random.default_rng(1)
    args = tuple(rs.random(n).astype(np.float32) for _ in range(2))  # positive: no cancellation in the sums
    _check(_flat, args, monkeypatch, parallel, float_sums=(1,))


def test_results_are_identical_across_calls_and_thread_counts(monkeypatch, two_threads):
    """The chunks depend on the sizes only: every call, on one thread or all,
    adds the same partial sums in the same order."""
    args = _args(ROWS_ABOVE, seed=3)
    f, _, srcs = _fused(_batch, args, monkeypatch, parallel=True)
    assert any("prange" in s for s in srcs)
    runs = []
    for k in (0, 1, 0, 2, 0):
        tf.config.threading.set_intra_op_parallelism_threads(k)
        runs.append([t.numpy() for t in f(*args)])
        assert numba.get_num_threads() == nbk.loop_threads()
    for r in runs[1:]:
        for a, b in zip(r, runs[0]):
            np.testing.assert_array_equal(a, b)


def test_thread_policy(monkeypatch):
    most = numba.config.NUMBA_NUM_THREADS
    monkeypatch.setattr(threads, "machine_quiet", lambda: False)
    assert nbk.loop_threads() == 1                     # another process holds the cores
    monkeypatch.setattr(threads, "machine_quiet", lambda: True)
    assert nbk.loop_threads() == most
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        assert nbk.loop_threads() == 1
        tf.config.threading.set_intra_op_parallelism_threads(most + 5)
        assert nbk.loop_threads() == most              # never past numba's pool
        monkeypatch.setattr(threads, "machine_quiet", lambda: False)
        assert nbk.loop_threads() == most              # the user's explicit count, as in TF
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(0)


def test_native_while_loop_with_a_parallel_body(two_threads):
    """A big loop inside a native while loop (the numba tier) runs chunked too."""
    n = 2 * nbk.PARALLEL_MIN_ELEMENTS
    init = np.linspace(-1, 1, n).astype(np.float32)

    def make():
        v = tf.Variable(init)

        def step(k):
            def body(i, s):
                v.assign(v * 0.99 + 0.01 * tf.sin(v))
                return i + 1, s + tf.reduce_sum(v * v)
            return tf.while_loop(lambda i, s: i < k, body, (tf.constant(0), tf.constant(0.0)))[1]
        return step, v

    step, v = make()
    f = tf.function(step, backend="numba")
    got = float(f(tf.constant(4)))
    assert "prange" in next(iter(f._cache.values())).compiled.__tapeflow_source__
    x, want = init.copy(), 0.0
    for _ in range(4):
        x = x * np.float32(0.99) + np.float32(0.01) * np.sin(x)
        want = np.float32(want + np.float32((x.astype(np.float64) ** 2).sum()))
    assert got == pytest.approx(float(want), rel=1e-6)
    np.testing.assert_allclose(v.numpy(), x, rtol=1e-6)


def test_parallel_kernels_are_cached_on_disk(tmp_path):
    code = (
        "import sys, numpy as np, tapeflow as tf\n"
        "x = np.ones((%d, 160), np.float32)\n"
        "f = tf.function(lambda a: tf.reduce_sum(tf.sigmoid(a * 2.0 + 1.0) * a, axis=0))\n"
        "f.get_concrete_function(x)._tier_up()\n"
        "print(float(f(x).numpy().sum()))\n"
        "ks = [m.kernel for n, m in list(sys.modules.items()) if n.startswith('_tapeflow_numba_')]\n"
        "print(sum(sum(k.stats.cache_hits.values()) for k in ks))\n" % ROWS_ABOVE)
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    first, second = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True).stdout.split("\n") for _ in range(2))
    src = [p.read_text() for p in (tmp_path / "numba").glob("tf_*.py")]
    assert len(src) == 1 and "prange" in src[0]
    assert first[0] == second[0]
    assert first[1] == "0" and second[1] == "1", (first, second)  # the second process loaded the machine code


@pytest.mark.parametrize("user", [{}, {"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "5"}])
def test_openmp_spin_is_shortened_unless_the_user_chose(user, monkeypatch):
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in user.items():
        monkeypatch.setenv(k, v)
    nbk.short_openmp_spin()
    assert os.environ.get("GOMP_SPINCOUNT") == user.get("GOMP_SPINCOUNT", None if user else nbk.OPENMP_SPINCOUNT)

