"""The second tier: elementwise fusion into native loops, checked against
the unfused code and eager execution, including variable writes deferred
past the group and a read after such a write."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _adam_like():
    rs = np.random.default_rng(0)
    W = tf.Variable(rs.standard_normal((64, 40)).astype(np.float32), name="W")
    m = tf.Variable(np.zeros((64, 40), np.float32), name="m")
    v = tf.Variable(np.zeros((64, 40), np.float32), name="v")
    x = tf.constant(rs.standard_normal((8, 64)).astype(np.float32))

    def step(lr):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, W)) ** 2)
        g = tape.gradient(loss, W)
        m.assign(0.9 * m + 0.1 * g)
        v.assign(0.999 * v + 0.001 * g * g)
        seen_m = m.read_value() * 1.0          # a read after the (deferred) write of m
        W.assign_sub(lr * m / (tf.sqrt(v) + 1e-7))
        return loss, tf.reduce_sum(seen_m)
    return (W, m, v), step


def _run(step, lr, n):
    return [tuple(float(t) for t in step(tf.constant(lr))) for _ in range(n)]


def test_fused_matches_eager_and_fuses():
    vars_e, step_e = _adam_like()
    eager = _run(step_e, 1e-3, 4)
    vars_c, step_c = _adam_like()
    f = tf.function(step_c)
    first = _run(f, 1e-3, 1)
    cf = f.get_concrete_function(tf.constant(1e-3))
    cf._tier_up()
    assert cf.backend == "python+fused"
    fused = [e for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    assert fused, "the optimizer chain on a (64, 40) variable was not fused"
    rest = _run(f, 1e-3, 3)
    np.testing.assert_allclose(np.array(first + rest), np.array(eager), rtol=2e-5)
    for a, b in zip(vars_c, vars_e):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=1e-6)


def test_fused_graph_runs_in_the_reference_interpreter():
    _, step = _adam_like()
    f = tf.function(step)
    f(tf.constant(1e-3))
    cf = f.get_concrete_function(tf.constant(1e-3))
    r = pipeline.tier_up(cf.graph, "t")
    assert r is not None
    _, backend, g = r
    out = eval_graph(g, [np.float32(1e-3)])
    assert np.isfinite(out[0])


def test_small_or_short_chains_stay_unfused():
    x = tf.constant(np.ones((4, 4), np.float32))
    f = tf.function(lambda a: a * 2.0 + 1.0)
    f(x)
    cf = f.get_concrete_function(x)
    assert pipeline.tier_up(cf.graph, "t") is None  # 16 elements: NumPy is as fast


def test_simd_exp_is_float32_exp_to_one_ulp():
    """numba_math.simd_exp (the vectorizable exp of fused float32 loops): within
    1 ulp of the correctly rounded exp over float32's whole range, subnormal
    results included, and NumPy's answers at inf / -inf / NaN / the overflow
    and underflow edges; float64 is np.exp itself."""
    from numba import njit
    from tapeflow.compiler.backends.numba_math import simd_exp

    @njit(error_model="numpy")
    def run(a, out):
        for i in range(a.size):
            out[i] = simd_exp(a[i])

    x = np.linspace(-110, 95, 400_001, dtype=np.float32)
    got = np.empty_like(x)
    run(x, got)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    finite = np.isfinite(want)
    ulp = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(want[finite]).astype(np.float64)
    assert ulp.max() <= 1.0
    assert np.array_equal(np.isinf(got), ~finite)
    edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.7228, 88.7229, -87.34, -103.97, -103.98, -200],
                     np.float32)
    got = np.empty_like(edges)
    run(edges, got)
    with np.errstate(over="ignore"):
        np.testing.assert_array_max_ulp(got, np.exp(edges.astype(np.float64)).astype(np.float32), maxulp=1)
    d = np.linspace(-700, 700, 1001)
    got = np.empty_like(d)
    run(d, got)
    np.testing.assert_array_equal(got, np.exp(d))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_sigmoid_and_exp_match_the_unfused_graph(dtype):
    """A fused chain with sigmoid and exp (the SIMD exp in float32) agrees with
    the python backend's NumPy kernels within float32 rounding, tails included."""
    x = np.concatenate([np.linspace(-120, 120, 3001), [np.inf, -np.inf, np.nan]]).astype(dtype)

    def f(a):
        s = tf.sigmoid(a)
        return s * (1.0 - s) + tf.exp(a * 0.5) * 1e-30

    ref = tf.function(f)(tf.constant(x)).numpy()
    fn = tf.function(f)
    cf = fn.get_concrete_function(tf.constant(x))
    cf._tier_up()
    assert cf.backend == "python+fused"
    got = fn(tf.constant(x)).numpy()
    np.testing.assert_allclose(got, ref, rtol=4 * np.finfo(dtype).eps, atol=np.finfo(dtype).tiny)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
