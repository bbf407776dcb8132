"""tf.linalg.sqrtm (tf.matrix_square_root), banded_triangular_solve and eigh_tridiagonal against TF 2.21's
numbers (literals, recorded with the peers venv), eagerly and compiled; gradients against TF's and finite
differences; tf.linalg.logm refuses real matrices (TF 2.21 accepts only complex ones)."""
import numpy as np
import pytest

import tapeflow as tf

A2 = np.array([[4., 1.], [2., 3.]])
# TF 2.21: tf.linalg.sqrtm(A2)
SQRT_A2 = np.array([[1.96211651, 0.27395147], [0.54790294, 1.68816503]])


def _fd(f, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        g[i] = (float(f(tf.constant(x0 + d))) - float(f(tf.constant(x0 - d)))) / (2 * eps)
    return g


@pytest.mark.parametrize("compiled", [False, True])
def test_sqrtm_values_are_tfs(compiled):
    f = tf.function(tf.linalg.sqrtm) if compiled else tf.linalg.sqrtm
    np.testing.assert_allclose(f(tf.constant(A2)).numpy(), SQRT_A2, rtol=1e-8)
    np.testing.assert_allclose(f(tf.constant(A2, tf.float32)).numpy(), SQRT_A2, rtol=2e-6)
    # TF 2.21: a rotation's principal root; NaN where no real principal root exists (a negative eigenvalue,
    # a singular matrix), per matrix of a batch
    batch = np.stack([A2, [[0., 1.], [-1., 0.]], [[-1., 0.], [0., 1.]], np.zeros((2, 2))])
    out = f(tf.constant(batch)).numpy()
    np.testing.assert_allclose(out[0], SQRT_A2, rtol=1e-8)
    np.testing.assert_allclose(out[1], np.array([[1., 1.], [-1., 1.]]) / np.sqrt(2), rtol=1e-12)
    assert np.isnan(out[2]).all() and np.isnan(out[3]).all()
    assert tf.matrix_square_root is tf.linalg.sqrtm   # TF 2.21 exports both names


def test_sqrtm_ill_conditioned_and_nonsymmetric():
    r = np.random.RandomState(0)
    q, _ = np.linalg.qr(r.randn(6, 6))
    for a in (q @ np.diag(np.logspace(0, 10, 6)) @ q.T, r.randn(6, 6) @ r.randn(6, 6) + 6 * np.eye(6)):
        y = tf.linalg.sqrtm(tf.constant(a)).numpy()
        np.testing.assert_allclose(y @ y, a, rtol=1e-9, atol=1e-9 * np.abs(a).max())
    assert tf.linalg.sqrtm(tf.zeros((0, 0))).shape == (0, 0)   # TF 2.21: empty in, empty out
    assert tf.linalg.sqrtm(tf.zeros((2, 0, 0))).shape == (2, 0, 0)


@pytest.mark.parametrize("compiled", [False, True])
def test_sqrtm_gradient(compiled):
    w = np.array([[1., 2.], [3., 4.]])

    def loss(x):
        return tf.reduce_sum(tf.linalg.sqrtm(x) * w)
    f = tf.function(loss) if compiled else loss
    x = tf.constant(A2)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    g = t.gradient(y, x).numpy()
    # TF 2.21's MatrixSquareRoot gradient (a Sylvester solve)
    np.testing.assert_allclose(g, [[0.12616825, 0.37358575], [0.73469582, 1.03518126]], rtol=1e-7)
    np.testing.assert_allclose(g, _fd(loss, A2), rtol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
def test_banded_triangular_solve_values_are_tfs(compiled):
    f = tf.function(tf.linalg.banded_triangular_solve) if compiled else tf.linalg.banded_triangular_solve
    bands = np.array([[2., 3., 4.], [1., 2., 3.]], np.float32)
    # TF 2.21's docstring examples (LEFT_RIGHT layout: the padding entries are ignored)
    np.testing.assert_allclose(f(bands, np.ones((3, 1), np.float32)).numpy(), [[0.5], [0.], [0.25]], rtol=1e-6)
    padded = bands.copy()
    padded[1, 0] = 10000.
    np.testing.assert_array_equal(f(padded, np.ones((3, 1), np.float32)).numpy(),
                                  f(bands, np.ones((3, 1), np.float32)).numpy())
    up = np.array([[2., 3., 4., 5.], [-1., -2., -3., -4.]])
    np.testing.assert_allclose(f(up, np.ones((4, 1)), lower=False).numpy(),
                               [[-4.], [-1.5], [-0.66666667], [-0.25]], rtol=1e-8)
    # TF 2.21: adjoint=True
    np.testing.assert_allclose(f(bands, np.ones((3, 2), np.float32), adjoint=True).numpy(),
                               [[0.41666666] * 2, [0.08333334] * 2, [0.25] * 2], rtol=1e-6)
    assert tuple(f(bands, np.ones((2, 3, 1), np.float32)).shape) == (2, 3, 1)   # batch dims broadcast


def test_banded_triangular_solve_gradient_is_tfs():
    bands = tf.constant(np.array([[2., 3., 4.], [1., 2., 3.]]))
    rhs = tf.constant(np.arange(6.).reshape(3, 2) + 1)
    w = np.array([[1., 2.], [3., 4.], [5., 6.]])
    with tf.GradientTape() as t:
        t.watch([bands, rhs])
        y = tf.reduce_sum(tf.linalg.banded_triangular_solve(bands, rhs) * w)
    gb, gr = t.gradient(y, [bands, rhs])
    # TF 2.21 (float32 there): the padding entry bands[1, 0] gets no gradient
    np.testing.assert_allclose(gb.numpy(), [[-1.5416666, 0.2777778, -2.4375], [0., 0.2916667, -1.8333334]], rtol=1e-6)
    np.testing.assert_allclose(gr.numpy(), [[0.75, 1.1666666], [-0.25, -0.16666667], [1.25, 1.5]], rtol=1e-6)


ALPHA, BETA = np.array([1., 2., 3., 4.]), np.array([.5, -1., .3])
# TF 2.21: tf.linalg.eigh_tridiagonal(ALPHA, BETA)
EIGS = np.array([0.70660702, 1.63731804, 3.51807421, 4.13800072])
# TF 2.21: |eigenvectors| (columns; the signs are the solver's)
ABS_VECS = np.array([[0.84157717, 0.52958081, 0.10142934, 0.03168778], [0.49382566, 0.67502281, 0.51081321, 0.19887253],
                     [0.21792206, 0.509609, 0.72473769, 0.40934573], [0.01985084, 0.06470727, 0.45115101, 0.88987734]])


@pytest.mark.parametrize("compiled", [False, True])
def test_eigh_tridiagonal_values_are_tfs(compiled):
    def run(a, b, **kw):
        g = (lambda a, b: tf.linalg.eigh_tridiagonal(a, b, **kw))
        return (tf.function(g) if compiled else g)(tf.constant(a), tf.constant(b))
    np.testing.assert_allclose(run(ALPHA, BETA).numpy(), EIGS, rtol=1e-8)
    w, v = run(ALPHA, BETA, eigvals_only=False)
    np.testing.assert_allclose(np.abs(v.numpy()), ABS_VECS, atol=1e-8)
    m = np.diag(ALPHA) + np.diag(BETA, 1) + np.diag(BETA, -1)
    np.testing.assert_allclose(m @ v.numpy(), v.numpy() * w.numpy(), atol=1e-12)
    np.testing.assert_allclose(run(ALPHA, BETA, select="i", select_range=[1, 2]).numpy(), EIGS[1:3], rtol=1e-8)
    # 'v': the eigenvalues in (lo, hi] (a value-dependent length)
    np.testing.assert_allclose(run(ALPHA, BETA, select="v", select_range=[0., 3.]).numpy(), EIGS[:2], rtol=1e-8)
    assert run(ALPHA.astype(np.float32), BETA.astype(np.float32)).dtype == tf.float32


def test_eigh_tridiagonal_bad_inputs_and_gradient():
    with pytest.raises(ValueError, match="select must have a value in"):   # TF 2.21's text
        tf.linalg.eigh_tridiagonal(ALPHA, BETA, select="x")
    with pytest.raises(ValueError, match="not inexact"):
        tf.linalg.eigh_tridiagonal(ALPHA.astype(np.int32), BETA.astype(np.int32))
    with pytest.raises(tf.errors.InvalidArgumentError):   # TF 2.21: InvalidArgumentError (incompatible shapes)
        tf.linalg.eigh_tridiagonal(ALPHA, BETA[:2])
    np.testing.assert_allclose(tf.linalg.eigh_tridiagonal(ALPHA[:1], BETA[:0]).numpy(), [1.])   # TF 2.21: [1.]
    assert tf.linalg.eigh_tridiagonal(ALPHA[:0], BETA[:0]).shape == (0,)
    # the eigenvalues' true derivative (TF 2.21 differentiates through its bisection instead)
    wts = np.array([1., 2., 3., 4.])

    def loss(a):
        return tf.reduce_sum(tf.linalg.eigh_tridiagonal(a, BETA) * wts)
    a = tf.constant(ALPHA)
    with tf.GradientTape() as t:
        t.watch(a)
        y = loss(a)
    np.testing.assert_allclose(t.gradient(y, a).numpy(), _fd(loss, ALPHA), rtol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
def test_sqrtm_and_banded_bad_inputs(compiled):
    sq = tf.function(tf.linalg.sqrtm) if compiled else tf.linalg.sqrtm
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square"):   # TF 2.21's text
        sq(tf.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank >= 2"):
        sq(tf.ones(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32"):
        sq(tf.constant([[1, 2], [3, 4]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="mismatch"):
        tf.linalg.banded_triangular_solve(tf.ones((2, 3)), tf.ones((4, 1)))


def test_logm_refuses_real_matrices_as_tf():
    # (wave 22: tf.linalg.logm computes complex matrices, tests/test_logm22.py; TF 2.21 refuses real ones)
    with pytest.raises(tf.errors.InvalidArgumentError, match="complex64, complex128"):
        tf.linalg.logm(tf.constant(A2))


def test_second_order_gradients():
    # d/dx of the gradient (nested tapes) against finite differences of the gradient: sqrtm, and a
    # LinearOperator's solve + log-determinant
    w = np.array([[1., 2.], [3., 4.]])
    L = tf.linalg

    def f_sqrtm(x):
        return tf.reduce_sum(tf.linalg.sqrtm(x) * w)

    def f_linop(x):
        op = L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(x), np.array([[1.], [0.5]]))
        return op.log_abs_determinant() + tf.reduce_sum(op.solve(w) * w)
    for f in (f_sqrtm, f_linop):
        def grad(x0):
            x = tf.constant(x0)
            with tf.GradientTape() as t:
                t.watch(x)
                y = f(x)
            return t.gradient(y, x)
        x = tf.constant(A2)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
            s = tf.reduce_sum(g * w)
        h = outer.gradient(s, x).numpy()
        fd = _fd(lambda x: tf.reduce_sum(grad(x.numpy()) * w), A2, eps=1e-5)
        np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)
