"""Wave 18's tf.math / tf.nn additions against TF 2.21's numbers (tests/data/ops18_tf_reference.json,
made by tests/tf_reference/make_ops18_reference.py): multiply_no_nan, cumulative_logsumexp,
log_poisson_loss, weighted_cross_entropy_with_logits, unravel_index, tf.dtypes.saturate_cast;
gradients against TF and finite differences, eager == compiled."""
import json
import os

import numpy as np
import pytest

import tapeflow as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "ops18_tf_reference.json")))["item2"]


def _arr(d):
    return np.array([float(v) for v in d["values"]], dtype=d["dtype"]).reshape(d["shape"])


def _grad(fn, ct, *args):
    ts = [tf.convert_to_tensor(a) for a in args]
    with tf.GradientTape(persistent=True) as t:
        for v in ts:
            t.watch(v)
        y = fn(*ts)
        s = tf.reduce_sum(y * tf.constant(ct))
    return y, [t.gradient(s, v) for v in ts]


def _check(rec, fn, *args, rtol=None, compiled=True, bits=True):
    ct = _arr(rec["ct"])
    y, gs = _grad(fn, ct, *args)
    dt = y.dtype.as_numpy_dtype if hasattr(y.dtype, "as_numpy_dtype") else y.numpy().dtype
    rtol = rtol or (2e-6 if np.dtype(dt) == np.float32 else 1e-12)
    np.testing.assert_allclose(y.numpy(), _arr(rec["out"]), rtol=rtol, atol=rtol)
    for g, w in zip(gs, rec["grads"]):
        np.testing.assert_allclose(g.numpy(), _arr(w), rtol=rtol * 5, atol=rtol)
    if compiled:
        # eager and compiled: the same values and gradients, bit for bit (``bits``), or within the
        # fused tier's documented last-bit differences (its float32 exp: compositions of exp)
        f = tf.function(lambda *a: _grad(fn, ct, *a))
        for _ in range(3):
            yc, gc = f(*args)
        same = np.testing.assert_array_equal if bits else \
            (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6))
        same(yc.numpy(), y.numpy())
        for a, b in zip(gc, gs):
            same(a.numpy(), b.numpy())


@pytest.mark.parametrize("i", range(len(REF["cumulative_logsumexp"])))
def test_cumulative_logsumexp(i):
    rec = REF["cumulative_logsumexp"][i]
    _check(rec, lambda v: tf.math.cumulative_logsumexp(v, axis=rec["axis"], exclusive=rec["exclusive"],
                                                       reverse=rec["reverse"]), _arr(rec["x"]), compiled=i % 5 == 0)


def test_cumulative_logsumexp_wide_range_and_second_order():
    # a shifted log(cumsum(exp(x - max))) would give -inf for the -1000 (TF 2.21: -1000, -1000 + log 2 ...)
    r = tf.math.cumulative_logsumexp(tf.constant([-1000.0, -1000.0, 0.0], tf.float64)).numpy()
    np.testing.assert_allclose(r, [-1000.0, -1000.0 + np.log(2.0), 0.0], rtol=1e-15)
    x = np.array([0.3, -1.2, 2.0, 0.7])
    v = tf.constant(x)
    with tf.GradientTape() as t2:
        t2.watch(v)
        with tf.GradientTape() as t1:
            t1.watch(v)
            y = tf.reduce_sum(tf.math.cumulative_logsumexp(v, exclusive=True) * tf.constant([0.0, 1.0, -2.0, 0.5], tf.float64))
        g = t1.gradient(y, v)
        gw = tf.reduce_sum(g * tf.constant([1.0, 0.5, -1.0, 2.0], tf.float64))
    h = t2.gradient(gw, v)

    def f(z):   # the exclusive scan's entries 1.. (entry 0 is -inf, weighted 0)
        c = np.logaddexp.accumulate(z[:-1])
        return float(np.dot(c, [1.0, -2.0, 0.5]))
    eps = 1e-6
    fd = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-7, atol=1e-9)
    gf = lambda z: np.array([(f(z + eps * e) - f(z - eps * e)) / (2 * eps) for e in np.eye(4)])  # noqa: E731
    fd2 = np.array([np.dot((gf(x + 1e-4 * e) - gf(x - 1e-4 * e)) / 2e-4, [1.0, 0.5, -1.0, 2.0]) for e in np.eye(4)])
    np.testing.assert_allclose(h.numpy(), fd2, rtol=1e-4, atol=1e-6)


def test_multiply_no_nan():
    rec = REF["multiply_no_nan"]
    _check(rec, tf.math.multiply_no_nan, _arr(rec["x"]), _arr(rec["y"]))
    # TF's MulNoNanGrad is mul_no_nan(x, g) for y: a zero cotangent gives 0 even at x = inf (x * g: nan)
    a, b = tf.constant([np.inf, 2.0]), tf.constant([1.0, 0.0])
    with tf.GradientTape() as t:
        t.watch(b)
        r = tf.reduce_sum(tf.math.multiply_no_nan(a, b) * tf.constant([0.0, 1.0]))
    assert t.gradient(r, b).numpy().tolist() == [0.0, 2.0]
    # TF 2.21: a Python pair is float32 0.0; broadcasting
    assert tf.math.multiply_no_nan(2.0, 0.0).numpy() == 0.0
    np.testing.assert_array_equal(tf.math.multiply_no_nan(tf.constant([[1.0], [np.inf]]), tf.constant([0.0, 3.0])).numpy(),
                                  [[0.0, 3.0], [0.0, np.inf]])
    # the fused tier's scalar form gives the kernel's values
    f = tf.function(lambda a, b: tf.math.multiply_no_nan(a * 2.0 + 1.0, b) * 3.0 - 1.0, jit_compile=True)
    a = np.array([np.inf, np.nan, 1.0, 2.0] * 64, np.float32)
    b = np.array([0.0, 0.0, 3.0, -0.0] * 64, np.float32)
    for _ in range(3):
        r = f(a, b).numpy()
    np.testing.assert_array_equal(r, (tf.math.multiply_no_nan(tf.constant(a) * 2.0 + 1.0, tf.constant(b)) * 3.0 - 1.0).numpy())


@pytest.mark.parametrize("i", [0, 1])
def test_log_poisson_loss(i):
    rec = REF["log_poisson_loss"][i]
    # (float32 exp is NumPy's: 2 ulp from TF's)
    _check(rec, lambda t, l: tf.nn.log_poisson_loss(t, l, compute_full_loss=rec["full"]), _arr(rec["targets"]),
           _arr(rec["log_input"]), rtol=2e-6, bits=False)


@pytest.mark.parametrize("i", [0, 1, 2])
def test_weighted_cross_entropy(i):
    rec = REF["weighted_cross_entropy"][i]
    _check(rec, lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, rec["pos_weight"]), _arr(rec["labels"]),
           _arr(rec["logits"]), bits=False)


def test_unravel_index_and_saturate_cast():
    for rec in REF["unravel_index"]:
        ind = np.array(rec["indices"]["values"], rec["indices"]["dtype"]).reshape(rec["indices"]["shape"])
        dims = np.array(rec["dims"]["values"], rec["dims"]["dtype"])
        want = np.array(rec["out"]["values"], rec["out"]["dtype"]).reshape(rec["out"]["shape"])
        got = tf.unravel_index(tf.constant(ind), tf.constant(dims))
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(tf.function(tf.unravel_index)(tf.constant(ind), tf.constant(dims)).numpy(), want)
    for rec in REF["saturate_cast"]:
        got = tf.dtypes.saturate_cast(tf.constant(np.array(rec["x"]["values"], rec["x"]["dtype"])), rec["dtype"])
        np.testing.assert_array_equal(got.numpy(), np.array(rec["out"]["values"], rec["out"]["dtype"]))


def test_namespaces():
    assert tf.math.multiply_no_nan and tf.math.cumulative_logsumexp and tf.nn.log_poisson_loss
    assert tf.nn.weighted_cross_entropy_with_logits and tf.unravel_index and tf.dtypes.saturate_cast
    for n in ("lgamma", "digamma", "polygamma", "erfc", "erfinv", "nextafter"):
        assert callable(getattr(tf.math, n))


# -- tf.linalg: normalize, qr, eigh, eigvalsh, cholesky_solve, triangular_solve, lstsq ------------------

L4 = json.load(open(os.path.join(os.path.dirname(__file__), "data", "ops18_tf_reference.json")))["item4"]


def test_normalize_matches_tf():
    for rec in L4["normalize"]:
        o = np.inf if rec["ord"] == "inf" else rec["ord"]
        ax = tuple(rec["axis"]) if isinstance(rec["axis"], list) else rec["axis"]
        n, nrm = tf.linalg.normalize(tf.constant(_arr(rec["x"])), ord=o, axis=ax)
        np.testing.assert_allclose(n.numpy(), _arr(rec["normalized"]), rtol=1e-14)
        assert nrm.shape == tuple(rec["norm"]["shape"])            # TF keeps the reduced dims
        np.testing.assert_allclose(nrm.numpy(), _arr(rec["norm"]), rtol=1e-14)


@pytest.mark.parametrize("i", range(6))
def test_qr_matches_tf(i):
    rec = L4["qr"][i]
    a = tf.constant(_arr(rec["a"]))
    wq, wr = _arr(rec["wq"]), _arr(rec["wr"])

    def loss(a):
        q, r = tf.linalg.qr(a, full_matrices=rec["full"])
        return q, r, tf.reduce_sum(q * tf.constant(wq)) + tf.reduce_sum(r * tf.constant(wr))
    with tf.GradientTape() as t:
        t.watch(a)
        q, r, y = loss(a)
    # LAPACK's Householder QR has the sign convention of TF's kernel: the same q and r
    np.testing.assert_allclose(q.numpy(), _arr(rec["q"]), atol=1e-13)
    np.testing.assert_allclose(r.numpy(), _arr(rec["r"]), atol=1e-13)
    if "grad_error" in rec:     # TF 2.21: NotImplementedError (full_matrices, more rows than columns)
        with pytest.raises(NotImplementedError, match="qr"):
            t.gradient(y, a)
        return
    g = t.gradient(y, a)
    np.testing.assert_allclose(g.numpy(), _arr(rec["grad"]), atol=1e-12)
    x = _arr(rec["a"])
    f = lambda z: float(loss(tf.constant(z))[2].numpy())  # noqa: E731
    fd = np.zeros_like(x).reshape(-1)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1e-6
        fd[k] = (f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / 2e-6
    np.testing.assert_allclose(g.numpy().reshape(-1), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("i", range(4))
def test_eigh_matches_tf(i):
    rec = L4["eigh"][i]
    f64 = rec["a"]["dtype"] == "float64"
    a = tf.constant(_arr(rec["a"]))
    with tf.GradientTape(persistent=True) as t:
        t.watch(a)
        e, v = tf.linalg.eigh(a)
        y = tf.reduce_sum(e * tf.constant(_arr(rec["we"]))) + tf.reduce_sum(v * v * tf.constant(_arr(rec["wv"])))
        y2 = tf.reduce_sum(tf.linalg.eigvalsh(a) * tf.constant(_arr(rec["we"])))
    tol = 1e-12 if f64 else 2e-5
    np.testing.assert_allclose(e.numpy(), _arr(rec["e"]), atol=tol)
    np.testing.assert_allclose(np.abs(v.numpy()), np.abs(_arr(rec["v"])), atol=tol)   # (signs: either)
    np.testing.assert_allclose(t.gradient(y, a).numpy(), _arr(rec["grad"]), atol=tol * 10)
    np.testing.assert_allclose(t.gradient(y2, a).numpy(), _arr(rec["grad_eigvalsh"]), atol=tol * 10)
    # eager == compiled (the kernel's bits)
    ec, vc = tf.function(tf.linalg.eigh)(a)
    np.testing.assert_array_equal(ec.numpy(), e.numpy())
    np.testing.assert_array_equal(vc.numpy(), v.numpy())


def test_eigh_gradient_against_finite_differences():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((4, 4))
    x = m + m.T
    we, wv = rng.standard_normal(4), rng.standard_normal((4, 4))

    def f(z):
        e, v = tf.linalg.eigh(tf.convert_to_tensor(z))
        return tf.reduce_sum(e * we) + tf.reduce_sum(v * v * wv)
    a = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(a)
        y = f(a)
    g = t.gradient(y, a).numpy()
    # the kernel reads the lower triangle: a perturbation of x[i, j] (i >= j) moves that entry only
    for i in range(4):
        for j in range(i + 1):
            e = np.zeros((4, 4))
            e[i, j] = 1e-6
            fd = (float(f(x + e).numpy()) - float(f(x - e).numpy())) / 2e-6
            np.testing.assert_allclose(g[i, j], fd, rtol=1e-5, atol=1e-8)
    assert np.all(np.triu(g, 1) == 0)


def test_solves_match_tf():
    s = L4["solves"]
    np.testing.assert_allclose(tf.linalg.cholesky_solve(_arr(s["chol"]), _arr(s["b"])).numpy(),
                               _arr(s["cholesky_solve"]), rtol=1e-12)
    for k, want in s["triangular_solve"].items():
        lo, adj = k.split("_")
        got = tf.linalg.triangular_solve(_arr(s["tri"]), _arr(s["b"]), lower=lo == "True", adjoint=adj == "True")
        np.testing.assert_allclose(got.numpy(), _arr(want), rtol=1e-12, atol=1e-14)
    for k, want in s["lstsq"].items():
        np.testing.assert_allclose(tf.linalg.lstsq(_arr(s["A"]), _arr(s["B"]), l2_regularizer=float(k)).numpy(),
                                   _arr(want), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tf.linalg.lstsq(_arr(s["W"]), _arr(s["B"])[:3], l2_regularizer=0.1).numpy(),
                               _arr(s["lstsq_wide"]), rtol=1e-12, atol=1e-14)
    _check(s["triangular_solve_grad"], lambda m, r: tf.linalg.triangular_solve(m, r, lower=True), _arr(s["tri"]),
           _arr(s["b"]), rtol=1e-11)
    _check(s["lstsq_grad"], lambda a, r: tf.linalg.lstsq(a, r, l2_regularizer=0.5), _arr(s["A"]), _arr(s["B"]),
           rtol=1e-11)
