"""tf.math.special (Cephes' functions: core/primitives/cephes.py) against TF 2.21's numbers
(tests/data/cephes_tf_reference.npz, made by tests/tf_reference/make_cephes_reference.py): values on a
sweep with 0, tiny, large, negative, inf and nan; gradients (TF's formulas) against TF and finite
differences; eager == compiled; bad dtypes."""
import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.primitives import cephes as C

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "cephes_tf_reference.npz"))
BESSEL = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e",
          "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]
OTHERS = ["dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]
UNARY = BESSEL + OTHERS


def _ulps(got, want):
    """|got - want| in units of want's spacing (tiny's where want is subnormal or 0), where both are finite."""
    sp = np.spacing(np.maximum(np.abs(want), np.finfo(want.dtype).tiny)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want.astype(np.float64)) / sp


def _same_specials(got, want, where):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=where)


@pytest.mark.parametrize("fn", UNARY)
def test_float64_matches_tf(fn):
    x = REF["x/float64"]
    got, want = getattr(tf.math.special, fn)(tf.constant(x)).numpy(), REF[f"{fn}/float64"].copy()
    assert got.dtype == np.float64
    if fn == "dawsn":
        # TF 2.21 returns 0.5 / x beyond |x| = 1e9 and then flips the sign for x < 0 once more: dawsn(-1e10) =
        # +5e-11. Dawson's integral is odd; tapeflow gives -5e-11 (docs/differences.md)
        far = (x <= -1e9) & np.isfinite(x)
        np.testing.assert_array_equal(want[far] > 0, True)
        want[far] = -want[far]
    _same_specials(got, want, fn)
    # TF flushes subnormal results to 0 (k0(710) = 2.1e-310: TF 0); tapeflow keeps them
    normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float64).tiny) | (want == 0) & (np.abs(got) == 0)
    sub = np.isfinite(want) & ~normal
    assert (np.abs(got[sub]) < np.finfo(np.float64).tiny).all(), fn
    # the same algorithm and coefficients as TF's kernel: the differences are NumPy's exp/log/sin/cos vs
    # Eigen's (measured: 7 ulp at most over the sweep, k0 at x = 2)
    err = _ulps(got[normal], want[normal])
    assert err.max(initial=0) <= 8, (fn, err.max(), x[normal][np.argmax(err)])


@pytest.mark.parametrize("dt", ["float32", "float16"])
@pytest.mark.parametrize("fn", UNARY)
def test_narrow_floats_are_tfs_float64_rounded(fn, dt):
    if f"{fn}/{dt}" not in REF:
        pytest.skip("TF 2.21 has no float16 CPU kernel for it")
    x = REF[f"x/{dt}"]
    got = getattr(tf.math.special, fn)(tf.constant(x)).numpy()
    assert got.dtype == np.dtype(dt)
    with np.errstate(over="ignore"):
        exact = REF[f"{fn}/float64_at_{dt}"].astype(dt)   # TF's float64 kernel at the same inputs, rounded once
    if fn == "dawsn":
        exact = np.where(x <= -1e9, -exact, exact)           # (TF's sign slip: test_float64_matches_tf)
    _same_specials(got, exact, fn)
    fin = np.isfinite(exact)
    assert _ulps(got[fin], exact[fin]).max(initial=0) <= 1, fn
    # TF's own narrow kernels (Cephes' float coefficients in float32) are less accurate: within 16 ulp of
    # them below |x| = 1000 (beyond, TF's float32 argument reduction of sin/cos loses the phase: j0(1e10)
    # is off by 1e7 ulp in TF), where the result is normal; near the zeros of j0, j1, y0, y1 TF's float32
    # values are within 7 eps absolute (measured 6.5) but thousands of ulp relative
    want = REF[f"{fn}/{dt}"]
    keep = np.isfinite(want) & np.isfinite(got) & (np.abs(want) >= np.finfo(dt).tiny) & (np.abs(x) <= 1000)
    err = _ulps(got[keep], want[keep])
    near_zero = np.abs(got[keep].astype(np.float64) - want[keep]) <= 7 * np.finfo(dt).eps
    # TF's float32 Fresnel integrals round the phase pi x^2 / 2 in float32: an absolute error growing like
    # eps x (measured 164 eps at x = 1000, 20 at 100)
    phase = np.abs(got[keep].astype(np.float64) - want[keep]) <= np.finfo(dt).eps * (4 + np.abs(x[keep]) / 3)
    ok = err <= 16
    ok |= near_zero if fn[-2] in "jy" else phase if fn.startswith("fresnel") else False
    assert ok.all(), (fn, err.max())
    if fn == "bessel_y1":
        # TF 2.21's float32 and float16 y1(0) are nan, its float64 y1(0) -inf (the limit): tapeflow -inf in all
        np.testing.assert_array_equal(np.isnan(want[x == 0]), True)
        np.testing.assert_array_equal(got[x == 0], -np.inf)


def test_float32_i0_past_exps_overflow():
    # TF 2.21's float32 i0(89) is inf (exp(89) overflows float32 before i0 does, at 91.9); tapeflow's the value
    np.testing.assert_array_equal(REF["i0_89/float32"], np.inf)
    got = tf.math.bessel_i0(tf.constant([89.0, 90.0, 91.0])).numpy()
    np.testing.assert_allclose(got, [1.9012419e+37, 5.1392386e+37, 1.3892714e+38], rtol=1e-7)


def _grads(f, x):
    v = tf.constant(x)
    with tf.GradientTape() as t2:
        t2.watch(v)
        with tf.GradientTape() as t1:
            t1.watch(v)
            y = f(v)
        g = t1.gradient(y, v)
    return g.numpy(), t2.gradient(g, v).numpy()


@pytest.mark.parametrize("fn", UNARY)
def test_gradients_match_tf(fn):
    # TF's formulas (math_grad.py): the same values at the edges too (i1'(0) = 1 imputed, k1'(0) nan, ...)
    x = REF["grad_x"]
    g, g2 = _grads(getattr(tf.math.special, fn), x)
    for got, want in ((g, REF[f"grad/{fn}"]), (g2, REF[f"grad2/{fn}"])):
        _same_specials(got, want, fn)
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12, atol=1e-300, err_msg=fn)


@pytest.mark.parametrize("fn", UNARY)
def test_gradients_against_finite_differences(fn):
    f = getattr(tf.math.special, fn)
    x = np.array([0.3, 0.9, 1.7, 2.5, 4.2, 6.0, 9.5, 14.0])
    if fn.startswith(("bessel_i", "bessel_j")) or fn in ("dawsn", "fresnel_cos", "fresnel_sin"):   # (the negative axis too)
        x = np.concatenate([x, -x])
    g, g2 = _grads(f, x)
    h = 1e-6
    fd = (f(tf.constant(x + h)).numpy() - f(tf.constant(x - h)).numpy()) / (2 * h)
    k = 1e-4
    fd2 = (f(tf.constant(x + k)).numpy() - 2 * f(tf.constant(x)).numpy() + f(tf.constant(x - k)).numpy()) / k ** 2
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9, err_msg=fn)
    np.testing.assert_allclose(g2, fd2, rtol=1e-4, atol=1e-6, err_msg=fn)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_eager_and_compiled_agree(dt):
    x = REF["x/float64"].astype(dt)
    fns = [getattr(tf.math.special, fn) for fn in UNARY]

    def prog(v):
        return [f(v) for f in fns]
    eager = [r.numpy() for r in prog(tf.constant(x))]
    compiled = [r.numpy() for r in tf.function(prog)(tf.constant(x))]
    for fn, a, b in zip(UNARY, eager, compiled):
        np.testing.assert_array_equal(a, b, err_msg=fn)

    def grad(v):
        with tf.GradientTape() as t:
            t.watch(v)
            y = tf.add_n([tf.reduce_sum(f(v)) for f in fns])
        return t.gradient(y, v)
    xs = tf.constant(np.array([0.4, 1.3, 2.2, 7.0], dt))
    np.testing.assert_array_equal(grad(xs).numpy(), tf.function(grad)(xs).numpy())


def test_namespaces_and_bad_dtypes():
    assert tf.math.bessel_i0 is tf.math.special.bessel_i0 and tf.math.bessel_i1e is tf.math.special.bessel_i1e
    assert tf.math.special.bessel_i0(1.0).dtype == tf.float32          # a Python float is float32, as TF
    for fn in UNARY:
        with pytest.raises(tf.errors.InvalidArgumentError, match=fn):
            getattr(tf.math.special, fn)([1, 2])                      # TF: int32 is not float
        with pytest.raises(tf.errors.InvalidArgumentError, match=fn):
            tf.function(getattr(tf.math.special, fn))(tf.constant([1, 2]))


def test_the_record_is_one_primitive_and_opaque():
    assert C.special_unary_p.fusion == "opaque"
    with pytest.raises(ValueError, match="unknown function"):
        C.special_unary("bessel_i2", tf.constant([1.0]))


def test_keras_ops_i0():
    from tapeflow.keras import ops
    # Keras' TF backend: int64 -> float64, other integers -> floatx
    assert ops.i0(np.array([1, 2], np.int64)).dtype == tf.float64
    r = ops.i0(np.array([1, 2], np.int32))
    assert r.dtype == tf.float32
    np.testing.assert_allclose(r.numpy(), [1.2660658, 2.2795853], rtol=1e-7)   # TF 2.21 (float32)
    np.testing.assert_array_equal(ops.i0(tf.constant([0.5], tf.float16)).numpy(),
                                  tf.math.bessel_i0(tf.constant([0.5], tf.float16)).numpy())


# -- betainc, zeta, sobol_sample -------------------------------------------------------------------------------

def test_betainc_matches_tf():
    a, b, x = REF["betainc_abx"]
    got, want = tf.math.betainc(a, b, x).numpy(), REF["betainc/float64"]
    _same_specials(got, want, "betainc")
    normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float64).tiny)
    rel = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    # Cephes' incbet as TF's; the prefactor lgamma(a + b) - lgamma(a) - lgamma(b) cancels, so lgamma's absolute
    # error shows: measured 1.1e-13 relative for a, b < 100 and 1.7e-12 at a = 1000 (TF's is 6e-13 off mpmath
    # there, tapeflow's 1.9e-12)
    assert rel.max() <= 2e-12
    small = (a[normal] < 100) & (b[normal] < 100)
    assert rel[small].max() <= 2e-13
    # float32: the float64 value rounded once (TF's float32 kernel runs Cephes in float32: 4e-4 absolute off at
    # betainc(0.01, 1000, 1e-6))
    a32, b32, x32 = (v.astype(np.float32) for v in (a, b, x))
    g32 = tf.math.betainc(a32, b32, x32).numpy()
    assert g32.dtype == np.float32
    exact = tf.math.betainc(a32.astype(np.float64), b32.astype(np.float64), x32.astype(np.float64)).numpy()
    np.testing.assert_array_equal(g32, exact.astype(np.float32))
    w32 = REF["betainc/float32"]
    _same_specials(g32, w32, "betainc float32")
    fin = np.isfinite(w32)
    np.testing.assert_allclose(g32[fin], w32[fin], atol=5e-4)


def test_betainc_gradient_x_only():
    a, b, x = REF["betainc_grad_abx"]
    av, bv, xv = tf.constant(a), tf.constant(b), tf.constant(x)
    with tf.GradientTape() as t:
        t.watch([av, bv, xv])
        y = tf.math.betainc(av, bv, xv)
    ga, gb, gx = t.gradient(y, [av, bv, xv])
    assert ga is None and gb is None                                   # TF: None for a and b
    np.testing.assert_allclose(gx.numpy(), REF["betainc_grad/x"], rtol=1e-12)
    h = 1e-6
    fd = (tf.math.betainc(a, b, x + h).numpy() - tf.math.betainc(a, b, x - h).numpy()) / (2 * h)
    np.testing.assert_allclose(gx.numpy(), fd, rtol=1e-7)
    # a scalar x broadcast against vectors a, b: its gradient sums
    xs = tf.constant(0.4, tf.float64)
    with tf.GradientTape() as t:
        t.watch(xs)
        y = tf.reduce_sum(tf.math.betainc(tf.constant(a), tf.constant(b), xs))
    np.testing.assert_allclose(t.gradient(y, xs).numpy(), sum(
        (tf.math.betainc(a, b, 0.4 + h).numpy() - tf.math.betainc(a, b, 0.4 - h).numpy()) / (2 * h)), rtol=1e-7)


def test_betainc_shapes_and_dtypes_as_tf():
    # TF 2.21: scalars broadcast; other shapes must be equal
    np.testing.assert_allclose(tf.math.betainc(2.0, [1.0, 2.0], [0.5, 0.5]).numpy(), [0.25, 0.5])   # TF 2.21
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shapes of a and b are inconsistent"):
        tf.math.betainc(tf.constant([2.0, 3.0]), tf.constant([1.0, 2.0, 3.0]), tf.constant([0.5, 0.5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="inconsistent"):
        tf.math.betainc(tf.constant([[2.0], [3.0]]), tf.constant([1.0, 2.0]), tf.constant([0.5, 0.5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="float32 or float64"):
        tf.math.betainc(tf.constant([2.0], tf.float16), tf.constant([1.0], tf.float16), tf.constant([0.5], tf.float16))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.betainc(tf.constant([2.0], tf.float64), tf.constant([1.0]), tf.constant([0.5]))
    # x outside [0, 1] and a, b <= 0: nan; the ends exact (TF 2.21)
    np.testing.assert_array_equal(tf.math.betainc(1.0, 2.0, [-0.1, 1.1, 1.0, 0.0]).numpy(), [np.nan, np.nan, 1, 0])


def test_zeta_matches_tf():
    X, Q = REF["zeta_xq"]
    got, want = tf.math.zeta(X, Q).numpy(), REF["zeta/float64"]
    _same_specials(got, want, "zeta")
    fin = np.isfinite(want) & (want != 0)
    # Cephes' zeta as TF's (measured 2.1e-16 relative at most)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-15)
    g32 = tf.math.zeta(X.astype(np.float32), Q.astype(np.float32)).numpy()
    w32 = REF["zeta/float32"]
    _same_specials(g32, w32, "zeta float32")
    fin = np.isfinite(w32) & (w32 != 0)
    # (TF's float32 kernel sums 9 terms in float32: 1.5e-6 relative off at zeta(3, -1.5))
    np.testing.assert_allclose(g32[fin], w32[fin], rtol=2e-6)
    # broadcasting, as TF
    np.testing.assert_allclose(tf.math.zeta([[2.0], [3.0]], [1.0, 2.0]).numpy(),
                               [[1.644934, 0.6449341], [1.202057, 0.20205691]], rtol=1e-6)   # TF 2.21


def test_zeta_gradient_q_only():
    x, q = REF["zeta_grad_xq"]
    xv, qv = tf.constant(x), tf.constant(q)
    with tf.GradientTape() as t:
        t.watch([xv, qv])
        y = tf.math.zeta(xv, qv)
    gx, gq = t.gradient(y, [xv, qv])
    assert gx is None                                                  # TF: None for x
    np.testing.assert_allclose(gq.numpy(), REF["zeta_grad/q"], rtol=1e-13)
    h = 1e-6
    fd = (tf.math.zeta(x, q + h).numpy() - tf.math.zeta(x, q - h).numpy()) / (2 * h)
    np.testing.assert_allclose(gq.numpy(), fd, rtol=1e-7)


def test_betainc_and_zeta_eager_equals_compiled():
    a, b, x = (v[:400] for v in REF["betainc_abx"])
    X, Q = REF["zeta_xq"]

    def prog(a, b, x, X, Q):
        return tf.math.betainc(a, b, x), tf.math.zeta(X, Q)
    args = [tf.constant(v) for v in (a, b, x, X, Q)]
    for e, c in zip(prog(*args), tf.function(prog)(*args)):
        np.testing.assert_array_equal(e.numpy(), c.numpy())


def test_sobol_sample_is_tfs():
    for k in REF.files:
        if k.startswith("sobol/"):
            dim, n, skip, dt = k[len("sobol/"):].split("_")
            got = tf.math.sobol_sample(int(dim), int(n), skip=int(skip), dtype=dt)
            assert got.dtype == dt and tuple(got.shape) == (int(n), int(dim))
            np.testing.assert_array_equal(got.numpy(), REF[k], err_msg=k)
    # traced: a constant, the same points
    np.testing.assert_array_equal(tf.function(lambda: tf.math.sobol_sample(3, 5))().numpy(),
                                  tf.math.sobol_sample(3, 5).numpy())


@pytest.mark.parametrize("args, needle", [((0, 4), "dim must be at least one"), ((21202, 4), "at most 21200"),
                                          ((2, 0), "num_results must be at least one"),
                                          ((2, 3, -1), "skip must be non-negative"),
                                          ((1112, 3), "first 1111")])
def test_sobol_sample_bad_inputs(args, needle):
    with pytest.raises(tf.errors.InvalidArgumentError, match=needle):       # TF 2.21's texts (the last: tapeflow's)
        tf.math.sobol_sample(*args)
    with pytest.raises(tf.errors.InvalidArgumentError, match="float, double"):
        tf.math.sobol_sample(2, 3, dtype=tf.int32)
