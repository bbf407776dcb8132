"""The second tier: elementwise fusion into native loops, checked against
the unfused code and eager execution, including variable writes deferred
past the group and a read after such a write."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.compiler import pipeline
from tapeflow.compiler.passes import fusion
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


def _bias_adam(n):
    rs = np.random.default_rng(1)
    b = tf.Variable(rs.standard_normal(n).astype(np.float32), name="b")
    m = tf.Variable(np.zeros(n, np.float32), name="m")
    v = tf.Variable(np.zeros(n, np.float32), name="v")

    def step(g):
        m.assign(m + (g - m) * 0.1)
        v.assign(v + (g * g - v) * 0.001)
        b.assign_sub(m * 0.01 / (tf.sqrt(v) + 1e-8))
        return tf.reduce_sum(b)
    return (b, m, v), step


def test_small_chain_of_many_ops_fuses_and_matches_eager():
    """An Adam update of a 150-element bias (12 elementwise ops, below MIN_ELEMENTS):
    one kernel call is cheaper than 12 NumPy calls, so it fuses; values as eager."""
    rs = np.random.default_rng(2)
    grads = [tf.constant(rs.standard_normal(150).astype(np.float32)) for _ in range(4)]
    vars_e, step_e = _bias_adam(150)
    eager = [float(step_e(g)) for g in grads]
    vars_c, step_c = _bias_adam(150)
    f = tf.function(step_c, backend="python")
    cf = f.get_concrete_function(grads[0])
    cf._tier_up()
    assert cf.fused_graph is not None, "the 12-op update of a 150-element bias was not fused"
    fused = [e for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]
    assert len(fused) == 1 and fused[0].outputs[0].aval.shape == (150,)
    assert len(fused[0].params["graph"].eqns) >= fusion.MIN_OPS_SMALL
    got = [float(f(g)) for g in grads]
    np.testing.assert_allclose(got, eager, rtol=1e-6)
    for a, b in zip(vars_c, vars_e):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_small_chain_of_few_ops_stays_unfused():
    x = tf.constant(np.ones((4, 4), np.float32))
    f = tf.function(lambda a: ((a * 2.0 + 1.0) * a - 3.0) * 0.5)   # 5 ops on 16 elements
    f(x)
    assert pipeline.tier_up(f.get_concrete_function(x).graph, "t") is None


def test_simd_exp_is_float32_exp_to_one_ulp():
    """numba_math.simd_exp (the vectorizable exp of fused float32 loops): within
    1 ulp of the correctly rounded exp over float32's whole range, subnormal
    results included, and NumPy's answers at inf / -inf / NaN / the overflow
    and underflow edges; float64 is the C library's exp itself."""
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
    # the C library's exp: NumPy's np.exp is that too, except on AVX-512 CPUs, where NumPy
    # has a SIMD float64 exp of its own (within 1 ulp, other last bits in ~4% of values)
    np.testing.assert_array_equal(got, [math.exp(v) for v in d])


def test_simd_tanh_is_float32_tanh_to_one_and_a_half_ulp():
    """numba_math.simd_tanh (the vectorizable tanh of fused float32 loops): within 1.5 ulp
    of the correctly rounded tanh over float32's range (tiny and subnormal inputs, the
    polynomial/exp switch at 0.625, saturation), NumPy's answers at +-0 (the sign kept),
    +-inf and NaN; float64 is numba's np.tanh (libm's) as before."""
    from numba import njit
    from tapeflow.compiler.backends.numba_math import simd_tanh

    @njit(error_model="numpy")
    def run(a, out):
        for i in range(a.size):
            out[i] = simd_tanh(a[i])

    mags = np.float32(10.0) ** np.arange(-44, 1.5, 0.001, dtype=np.float32)
    x = np.concatenate([np.linspace(-12, 12, 400_001, dtype=np.float32), mags, -mags,
                        np.nextafter(np.float32(0.625), np.float32([0, 1]))])
    got = np.empty_like(x)
    run(x, got)
    want = np.tanh(x.astype(np.float64))
    ulp = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert ulp.max() <= 1.5
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0, 100.0], np.float32)
    got = np.empty_like(edges)
    run(edges, got)
    np.testing.assert_array_equal(got, np.tanh(edges))
    assert np.array_equal(np.signbit(got), np.signbit(np.tanh(edges)))
    d = np.linspace(-30, 30, 1001)
    got = np.empty_like(d)
    run(d, got)
    np.testing.assert_array_max_ulp(got, np.tanh(d), maxulp=2)  # libm's tanh: NumPy's own differs by 2 ulp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_tanh_matches_the_unfused_graph(dtype):
    """TD3's target-policy smoothing in a fused loop: tanh of a bias add, clipped sum with
    clipped noise (the SIMD tanh in float32) agrees with the python backend's NumPy."""
    rs = np.random.default_rng(2)
    x = np.concatenate([rs.standard_normal((256, 6)) * 3, np.full((1, 6), np.inf), np.full((1, 6), -0.0)]).astype(dtype)
    noise = rs.standard_normal(x.shape).astype(dtype)
    b = rs.standard_normal(6).astype(dtype)

    def f(a, n, b):
        return tf.clip_by_value(tf.tanh(a + b) + tf.clip_by_value(n, -0.5, 0.5), -1.0, 1.0), tf.tanh(a)

    ref = [r.numpy() for r in tf.function(f, backend="python")(x, noise, b)]
    fn = tf.function(f)
    cf = fn.get_concrete_function(x, noise, b)
    cf._tier_up()
    assert cf.backend == "python+fused"
    eps = np.finfo(dtype).eps  # values within [-1, 1]: a tanh's last bit, absolute, survives the clipped sum
    for g, r in zip(fn(x, noise, b), ref):
        np.testing.assert_allclose(g.numpy(), r, rtol=2 * eps, atol=2 * eps)
        assert np.array_equal(np.signbit(g.numpy()), np.signbit(r))


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


def test_unknown_batch_dim_runs_fused_where_shapes_are_known():
    """A concrete function traced with TensorSpec((None, 64)): the ops over the
    unknown batch stay unfused (their loop size is only known per call) while
    the known-shape optimizer chain fuses; every batch size gives eager's values."""
    def make():
        rs = np.random.default_rng(0)
        W = tf.Variable(rs.standard_normal((64, 64)).astype(np.float32) * 0.1)
        b = tf.Variable(rs.standard_normal(64).astype(np.float32))
        m = tf.Variable(np.zeros((64, 64), np.float32))

        def step(x):
            with tf.GradientTape() as tape:
                h = tf.sigmoid(tf.matmul(x, W) + b)
                y = h * h * 0.5 - h * x
            g = tape.gradient(y, W)
            m.assign(0.9 * m + 0.1 * g)
            W.assign_sub(1e-2 * m * (m * m + 1.0))
            return y, tf.reduce_sum(y * y, axis=0)
        return W, step

    W_e, step_e = make()
    W_c, step_c = make()
    f = tf.function(step_c, input_signature=[tf.TensorSpec((None, 64), tf.float32)])
    cf = f.get_concrete_function()
    cf._tier_up()
    assert cf.backend == "python+fused"
    for n in (100, 37, 1, 100, 600):
        x = np.random.default_rng(n).standard_normal((n, 64)).astype(np.float32)
        for got, want in zip(f(x), step_e(tf.constant(x))):
            assert got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(W_c.numpy(), W_e.numpy(), rtol=1e-5, atol=1e-6)


def _tiered(f, *args):
    fn = tf.function(f)
    cf = fn.get_concrete_function(*args)
    cf._tier_up()
    assert cf.backend == "python+fused"
    return fn, [e.params["graph"] for e in cf.fused_graph.eqns if e.prim.name == "fused_elementwise"]


def test_bias_rows_and_reductions_fold_into_one_loop():
    """An output layer: bias add (a row), sigmoid, the squared error's sum and a
    column max in one loop; the gradient chain needs the loss (a scalar made
    after that loop), so it and its column sums (reductions over leading axes,
    keepdims too) form a second loop. No reduction of a (300, 40) value is
    left outside; values as the unfused graph's (float32 sums accumulate in
    float64 in the loops, so within rounding)."""
    rs = np.random.default_rng(1)
    z = tf.constant(rs.standard_normal((300, 40)).astype(np.float32) * 3)
    x = tf.constant(rs.random((300, 40)).astype(np.float32))
    b = tf.constant(rs.standard_normal(40).astype(np.float32))
    b2 = tf.constant(rs.standard_normal((1, 40)).astype(np.float32))
    one = tf.constant(np.array([[0.7]], np.float32))  # a (1, 1) operand: read at [0]

    def f(z, x, b, b2):
        a = tf.sigmoid(z * one + b)
        d = a - x
        loss = tf.reduce_sum(d * d) * 0.5
        g = (d * loss) * a * (1.0 - a) + b2
        return (loss, g, tf.reduce_sum(g, axis=0), tf.reduce_max(a, axis=0),
                tf.reduce_sum(g, axis=0, keepdims=True) * b)

    ref = [t.numpy() for t in tf.function(f)(z, x, b, b2)]
    fn, groups = _tiered(f, z, x, b, b2)
    assert len(groups) == 2, [str(g) for g in groups]
    assert {e.prim.name for e in groups[0].eqns} >= {"reduce_sum", "reduce_max", "sigmoid", "add"}
    cf = fn.get_concrete_function(z, x, b, b2)
    assert not [e for e in cf.fused_graph.eqns if e.prim.fusion == "reduction" and e.inputs[0].aval.shape == (300, 40)]
    for got, want in zip(fn(z, x, b, b2), ref):
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_group_stops_where_a_member_would_need_its_own_result_through_another_op():
    """h = sigmoid(z); y = h @ W depends on the group; a later elementwise op
    on y cannot join it (a cycle), so it forms its own group after the matmul."""
    rs = np.random.default_rng(2)
    z = tf.constant(rs.standard_normal((200, 64)).astype(np.float32))
    W = tf.constant(rs.standard_normal((64, 64)).astype(np.float32) * 0.1)

    def f(z, W):
        h = tf.sigmoid(z * 2.0 + 1.0)
        y = tf.matmul(h, W)
        return y * h * 3.0 + h

    ref = tf.function(f)(z, W).numpy()
    fn, groups = _tiered(f, z, W)
    assert [len(g.eqns) for g in groups] == [3, 3]
    np.testing.assert_allclose(fn(z, W).numpy(), ref, rtol=1e-6, atol=1e-6)


def test_variable_write_of_a_group_value_then_read_keeps_program_order():
    """m is written from a group value (the write waits for the fused loop);
    a later read of m feeds an op of the same shape: it must see the new
    value, so that op cannot join the group that runs before the write."""
    rs = np.random.default_rng(3)
    m_e, m_c = (tf.Variable(rs.standard_normal((32, 32)).astype(np.float32)) for _ in range(2))
    m_c.assign(m_e)
    x = tf.constant(rs.standard_normal((32, 32)).astype(np.float32))

    def make(m):
        def f(x):
            u = x * 2.0 + 1.0
            m.assign(u * u)
            return m.read_value() * 0.5 + u
        return f

    want = make(m_e)(x).numpy()
    fn, groups = _tiered(make(m_c), x)
    m_c.assign(m_e.numpy() * 0)
    np.testing.assert_allclose(fn(x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(m_c.numpy(), m_e.numpy(), rtol=1e-6)


def test_autoencoder_objective_fuses_to_one_pass_per_activation_side():
    """The UFLDL objective (examples/lbfgs_autoencoder.py) at a small batch:
    the second tier leaves no elementwise op or reduction over the batch
    activations outside a fused loop (bias adds, sigmoids, the loss sum,
    rho_hat and the bias gradients are all folded in), and its loss and
    gradients equal the float64 hand-derived ones to float32 rounding."""
    import importlib.util
    import os
    from benchmarks.workloads.lbfgs_autoencoder import np_value_and_grad
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "lbfgs_autoencoder.py")
    spec = importlib.util.spec_from_file_location("lbfgs_autoencoder_example", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    X = ex.synthetic_images(64, seed=2)
    W, b1, b2 = ex.initial_params(2)
    b1 += 0.1
    b2 -= 0.2
    vs = [tf.Variable(a) for a in (W, b1, b2)]
    f = ex.make_objective(X, vs, compiled=True)
    f()
    cf = next(iter(f._cache.values()))
    cf._tier_up()
    assert cf.backend == "python+fused"
    batch_shapes = {(64, 196), (64, 784)}
    left = [e.prim.name for e in cf.fused_graph.eqns if e.prim.fusion in ("elementwise", "reduction")
            and any(getattr(v, "aval", None) is not None and v.aval.shape in batch_shapes
                    for v in e.inputs + e.outputs)]
    assert not left, left
    loss, grads = f()
    J, *want = np_value_and_grad(*(a.astype(np.float64) for a in (W, b1, b2)), X.astype(np.float64))
    assert float(loss) == pytest.approx(J, rel=2e-6)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-4, atol=2e-6 * np.abs(w).max())


@pytest.mark.parametrize("jit_compile, tier_at_call_1, tier_at_call_150", [
    (True, "python+fused", "python+fused"),    # fused from the first call (TF: XLA at once)
    (False, "python", "python"),                # the first tier for good (TF: no XLA)
    (None, "python", "python+fused"),           # tiers up after pipeline.fuse_after() calls
])
def test_jit_compile_picks_the_tier(monkeypatch, jit_compile, tier_at_call_1, tier_at_call_150):
    monkeypatch.delenv("TAPEFLOW_FUSE_AFTER", raising=False)
    monkeypatch.delenv("TAPEFLOW_BACKEND", raising=False)
    _, step_e = _adam_like()
    eager = _run(step_e, 1e-3, 150)
    _, step_c = _adam_like()
    f = tf.function(step_c, jit_compile=jit_compile, backend="python")
    out = _run(f, 1e-3, 1)
    cf = f.get_concrete_function(tf.constant(1e-3))
    assert cf.backend == tier_at_call_1
    out += _run(f, 1e-3, 149)
    assert cf.backend == tier_at_call_150
    np.testing.assert_allclose(out, eager, rtol=1e-5)


def test_jit_compile_reaches_a_method_bound_per_instance(monkeypatch):
    monkeypatch.delenv("TAPEFLOW_FUSE_AFTER", raising=False)

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.vars, self.step = _adam_like()

        @tf.function(jit_compile=True, backend="python")
        def __call__(self, lr):
            return self.step(lr)

    m = M()
    m(tf.constant(1e-3))
    assert m.__call__.get_concrete_function(tf.constant(1e-3)).backend == "python+fused"


def test_jit_compile_fuses_with_the_trace_not_in_the_first_call(monkeypatch):
    # TD3 traces its update at construction (get_concrete_function) and times its
    # learning steps from the first call: the fused tier's compile (~1 s) belongs to the trace
    monkeypatch.delenv("TAPEFLOW_FUSE_AFTER", raising=False)
    monkeypatch.delenv("TAPEFLOW_BACKEND", raising=False)
    _, step_e = _adam_like()
    eager = _run(step_e, 1e-3, 3)
    _, step_c = _adam_like()
    f = tf.function(step_c, jit_compile=True, backend="python", input_signature=[tf.TensorSpec((), tf.float32)])
    cf = f.get_concrete_function()
    assert cf.hot and cf.backend == "python+fused" and "tier_up_s" in cf.timings
    code = cf.compiled
    out = _run(f, 1e-3, 3)
    assert cf.compiled is code and f.trace_count == 1
    np.testing.assert_allclose(out, eager, rtol=1e-5)


def test_a_select_of_two_arrays_reads_both_before_it_chooses():
    """tf.where(mask, x, y) with x and y arrays (a zeros_like constant): the loop reads
    both operands first and the select picks between values (a blend), never reading an
    array inside a branch: LLVM keeps such a branch, and a random mask mispredicts it
    half the time (a 256x256 select took 300 us, 18-23 us read first). Values as eager."""
    pytest.importorskip("numba")
    rs = np.random.default_rng(3)
    h, d = (rs.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    h[::5, ::3] = 0.0

    def f(h, d):
        s = tf.where(h > 0, d, tf.zeros_like(d) - d)
        return s, tf.reduce_sum(s, axis=0)

    args = [tf.constant(h), tf.constant(d)]
    want = [t.numpy() for t in f(*args)]
    fn, _ = _tiered(f, *args)
    loops = [e for e in fn.get_concrete_function(*args).fused_graph.eqns if e.prim is fusion.fused_elementwise_p]
    assert len(loops) == 1 and "select" in [x.prim.name for x in loops[0].params["graph"].eqns]
    src = loops[0].params["kernel"].__tapeflow_source__
    chooses = [ln for ln in src.splitlines() if " if " in ln and " else " in ln]
    assert chooses and not any("[" in ln for ln in chooses), src
    got = [t.numpy() for t in fn(*args)]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-4)
