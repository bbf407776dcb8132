"""tf.linalg.LinearOperator* (tapeflow/linear_operator.py) against TF 2.21 (tests/data/linop_tf.json, recorded
by tests/tf_reference/make_linop_reference.py on the cases of linop_cases.py): every public method's value,
the hints, the types of derived operators (inverse, adjoint, cholesky, A @ A), TF's error classes and
messages for bad inputs; eager == compiled (an operator closed over by a tapeflow.function); gradients
through matmul / solve / log_abs_determinant against finite differences; Module tracking of Variables."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "tf_reference"))
from linop_cases import operators, evaluate, bad, arrays  # noqa: E402

REF = json.loads((HERE / "data" / "linop_tf.json").read_text())
L = tf.linalg


def _close(got, want, tol, where):
    if isinstance(want, dict):   # TF refused: the same exception class
        assert isinstance(got, dict) and got.get("error") == want["error"], (where, got, want)
        return
    if isinstance(want, str) or want is None or isinstance(want, bool):
        assert got == want, (where, got, want)
        return
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert g.shape == w.shape, (where, g.shape, w.shape)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=where)


# TF 2.21 raises InvalidArgumentError where a batched operator meets an unbatched argument (or the reverse) in
# these methods (its kernels do not broadcast there: matrix_set_diag, the circulant embedding, tridiagonal_matmul);
# tapeflow broadcasts (docs/differences.md), checked here against the dense matrix
_TF_DOES_NOT_BROADCAST = {("diag_batch", "add_to_tensor"), ("scaled_batch", "add_to_tensor"),
                          ("tridiag", "matmul_batch"), ("tridiag_sequence", "matmul_batch")}


def _dense_reference(key, got, dt, n):
    dense = np.asarray(got["dense"])
    r = np.random.RandomState(5)   # evaluate()'s inputs
    r.randn(n, 2)
    return {"add_to_tensor": dense + 1.0, "matmul_batch": dense @ r.randn(2, n, 2).astype(dt)}[key]


@pytest.mark.parametrize("key", sorted(REF["values"]))
def test_every_method_matches_tf(key):
    name, dt = key.split("/")
    dt = np.dtype(dt).type
    op = operators(L, tf, dt)[name]()
    got = evaluate(op, dt)
    want = REF["values"][key]
    # float32: LAPACK vs Eigen orderings of the same algorithms (and dense vs FFT for Toeplitz); cond and
    # log-determinants of float32 matrices are the loosest
    tol = 2e-4 if dt == np.float32 else 1e-9
    for k, w in want.items():
        if (name, k) in _TF_DOES_NOT_BROADCAST:
            assert w == {"error": "InvalidArgumentError"}
            w = _dense_reference(k, got, dt, op.domain_dimension).tolist()
        _close(got[k], w, tol, f"{key} {k}")
    assert set(got) == set(want)


def _tf_error_class(name):
    return {"InvalidArgumentError": tf.errors.InvalidArgumentError}.get(name) or __builtins__[name] \
        if isinstance(__builtins__, dict) else {"InvalidArgumentError": tf.errors.InvalidArgumentError}.get(name) \
        or getattr(__builtins__, name)


# the bad inputs whose message tapeflow words differently from TF (the class is still TF's)
_OWN_WORDING = {"composition_dtype", "identity_float_rows", "matmul_dtype", "getitem_too_many", "assert_pd_full",
                "diag_scalar", "permutation_float", "full_rank1", "inversion_singular"}


@pytest.mark.parametrize("case", sorted(REF["bad"]))
def test_bad_inputs_raise_tfs_errors(case):
    want = REF["bad"][case]
    prog = bad(L, tf)[case]
    cls = _tf_error_class(want["error"])
    with pytest.raises(cls) as info:
        prog()
    msg = str(info.value)
    first = want["message"].split("\n")[0].strip().rstrip(".")
    if case not in _OWN_WORDING:
        assert first in msg, (case, msg, first)


# -- compiled: an operator closed over by a tapeflow.function gives its eager values --------------------------

_COMPILED = ["full_pd", "full_batch", "diag", "scaled_batch", "tril", "composition_batch", "inversion", "block_diag",
             "kronecker_3", "low_rank", "low_rank_dv", "permutation", "householder", "toeplitz", "tridiag",
             "block_lower_3", "identity_batch"]


@pytest.mark.parametrize("name", _COMPILED)
def test_compiled_equals_eager(name):
    op = operators(L, tf, np.float64)[name]()
    x = np.random.RandomState(1).randn(2, op.domain_dimension, 2)

    def prog(x):
        return (op.matmul(x), op.matmul(x, adjoint=True), op.solve(x), op.solve(x, adjoint=True),
                op.log_abs_determinant(), op.to_dense(), op.trace(), op.diag_part(), op.inverse().matmul(x))
    eager = prog(tf.constant(x))
    f = tf.function(prog)
    compiled = f(tf.constant(x))
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
    # a second call with new values reuses the trace and still agrees
    x2 = tf.constant(x * 2.0)
    for e, c in zip(prog(x2), f(x2)):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_operator_built_inside_a_function():
    d = tf.constant([1.0, 2.0, 4.0])

    @tf.function
    def f(d, x):
        op = L.LinearOperatorComposition([L.LinearOperatorDiag(d), L.LinearOperatorFullMatrix(x)])
        return op.solve(x), op.log_abs_determinant()
    x = tf.constant(arrays()["b"].astype(np.float32) + 3 * np.eye(3, dtype=np.float32))
    s, lad = f(d, x)
    np.testing.assert_allclose(s.numpy(), np.linalg.solve(np.diag(d.numpy()) @ x.numpy(), x.numpy()), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(lad.numpy(), np.linalg.slogdet(np.diag(d.numpy()) @ x.numpy())[1], rtol=1e-5)


# -- gradients: matmul, solve and log_abs_determinant against central finite differences --------------------

def _params():
    A = arrays()
    return {
        "full": (A["b"] + 3 * np.eye(3), lambda p: L.LinearOperatorFullMatrix(p)),
        "full_pd": (A["spd"], lambda p: L.LinearOperatorFullMatrix(
            0.5 * (p + tf.linalg.matrix_transpose(p)), is_self_adjoint=True, is_positive_definite=True)),
        "diag": (A["v"] + 3, lambda p: L.LinearOperatorDiag(p)),
        "tril": (A["b"] + 3 * np.eye(3), lambda p: L.LinearOperatorLowerTriangular(p)),
        "scaled": (np.array(2.5), lambda p: L.LinearOperatorScaledIdentity(3, p)),
        "kronecker": (np.array([[2., 1.], [0.5, 3.]]), lambda p: L.LinearOperatorKronecker(
            [L.LinearOperatorFullMatrix(p), L.LinearOperatorFullMatrix(np.array([[1.5, 0.2], [0.1, 2.]]))])),
        "low_rank": (A["u"], lambda p: L.LinearOperatorLowRankUpdate(
            L.LinearOperatorDiag(A["v"] ** 2 + 1, is_positive_definite=True), p)),
        "low_rank_dv": (A["u2"], lambda p: L.LinearOperatorLowRankUpdate(
            L.LinearOperatorFullMatrix(A["b"] + 3 * np.eye(3)), A["u"], diag_update=np.array([.5, 2.]), v=p)),
        "toeplitz": (np.array([3., 1., .5]), lambda p: L.LinearOperatorToeplitz(p, np.array([9., -1., .2]))),
        "tridiag": (np.array([[1., 2., 0.], [4., 5., 6.], [0., 1., 2.]]), lambda p: L.LinearOperatorTridiag(p)),
        "householder": (A["v"], lambda p: L.LinearOperatorHouseholder(p)),
        "block_lower": (A["b"][:2, :2] + 2 * np.eye(2), lambda p: L.LinearOperatorBlockLowerTriangular(
            [[L.LinearOperatorFullMatrix(p)], [L.LinearOperatorFullMatrix(A["b"][2:, :2]),
                                               L.LinearOperatorDiag(A["v"][:1] + 3)]])),
    }


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", sorted(_params()))
def test_gradients_match_finite_differences(name, compiled):
    p0, make = _params()[name]
    n = make(tf.constant(p0)).domain_dimension
    x = np.random.RandomState(2).randn(n, 2)
    w = np.arange(2 * n).reshape(n, 2) % 4 + 1.0

    def loss(p):
        op = make(p)
        out = tf.reduce_sum(op.matmul(x) * w) + tf.reduce_sum(op.solve(x) * w) \
            + tf.reduce_sum(op.matmul(x, adjoint=True) * w)
        if name != "householder":   # |det| of a reflection is 1: no gradient to check
            out = out + op.log_abs_determinant()
        return out
    f = tf.function(loss) if compiled else loss
    p = tf.constant(p0)
    with tf.GradientTape() as t:
        t.watch(p)
        y = f(p)
    g = t.gradient(y, p).numpy()
    eps, fd = 1e-6, np.zeros_like(p0)
    for i in np.ndindex(p0.shape):
        d = np.zeros_like(p0)
        d[i] = eps
        fd[i] = (float(loss(tf.constant(p0 + d))) - float(loss(tf.constant(p0 - d)))) / (2 * eps)
    if name == "tridiag":   # the corners of the compact format are ignored (zero gradient, as TF)
        fd[0, -1] = fd[2, 0] = 0.0
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


# -- tracking, slicing, hints -------------------------------------------------------------------------------

def test_module_tracks_variables_and_gradients_reach_them():
    v = tf.Variable([1.0, 2.0, 3.0])
    m = tf.Variable(np.eye(3, dtype=np.float32))
    op = L.LinearOperatorComposition([L.LinearOperatorDiag(v), L.LinearOperatorFullMatrix(m)])
    assert isinstance(op, tf.Module)
    assert {id(t) for t in op.trainable_variables} == {id(v), id(m)}
    with tf.GradientTape() as t:
        y = op.log_abs_determinant() + tf.reduce_sum(op.matvec([1.0, 1.0, 1.0]))
    gv, gm = t.gradient(y, [v, m])
    np.testing.assert_allclose(gv.numpy(), 1.0 / v.numpy() + 1.0, rtol=1e-6)
    np.testing.assert_allclose(gm.numpy(), np.eye(3) + v.numpy()[:, None] * np.ones((3, 3)), rtol=1e-6)
    v.assign([2.0, 2.0, 2.0])   # the operator reads the Variable at each call
    np.testing.assert_allclose(op.determinant().numpy(), 8.0)


def test_batch_slicing():
    d = np.arange(1, 13, dtype=np.float32).reshape(2, 2, 3)
    op = L.LinearOperatorDiag(d)
    np.testing.assert_array_equal(op[1].to_dense().numpy(), np.stack([np.diag(r) for r in d[1]]))
    np.testing.assert_array_equal(op[:, 0].diag_part().numpy(), d[:, 0])
    comp = L.LinearOperatorComposition([op, L.LinearOperatorFullMatrix(np.ones((3, 3), np.float32))])
    assert tuple(comp[0].shape) == (2, 3, 3)
    assert tuple(L.LinearOperatorIdentity(2, batch_shape=[4, 5])[1:3].shape) == (2, 5, 2, 2)


def test_hints_and_derived_types():
    full = L.LinearOperatorFullMatrix(np.eye(2, dtype=np.float32))
    assert full.H.__class__.__name__ == "LinearOperatorAdjoint"
    assert full.H.H is full and full.inverse().inverse() is full
    pd = L.LinearOperatorFullMatrix(np.eye(2, dtype=np.float32), is_self_adjoint=True, is_positive_definite=True)
    assert pd.H is pd and pd.is_non_singular and pd.is_square
    ident = L.LinearOperatorIdentity(2)
    assert (ident @ full) is full and (full @ ident) is full
    assert L.LinearOperatorDiag([1., 2.]).inverse().__class__.__name__ == "LinearOperatorDiag"
    assert "LinearOperatorDiag" in repr(L.LinearOperatorDiag([1., 2.]))
    with pytest.raises(ValueError, match="User set is_square hint to False"):
        L.LinearOperatorZeros(2, is_square=False, is_self_adjoint=False).is_square
    # assertions pass quietly on good operators, eagerly and compiled
    L.LinearOperatorDiag([1., 2.]).assert_non_singular()
    tf.function(lambda: L.LinearOperatorDiag([1., 2.]).assert_positive_definite())()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Diagonal contained zero values"):
        tf.function(lambda d: L.LinearOperatorDiag(d).assert_non_singular())(tf.constant([1., 0.]))


@pytest.mark.parametrize("compiled", [False, True])
def test_conjugate_gradient_is_tfs(compiled):
    a = np.array([[4., 1., 0.], [1., 3., 1.], [0., 1., 2.]], np.float32)
    op = L.LinearOperatorFullMatrix(a, is_self_adjoint=True, is_positive_definite=True)
    cg = L.experimental.conjugate_gradient

    def run(b, **kw):
        return (tf.function(lambda b: tuple(cg(op, b, **kw))) if compiled else (lambda b: tuple(cg(op, b, **kw))))(b)
    b = tf.constant([1., 2., 3.])
    i, x, r, p, gamma = run(b)
    # TF 2.21: CGState(i=3, x=[0.22222215, 0.11111115, 1.4444444], r ~ 1e-7)
    assert int(i) == 3
    np.testing.assert_allclose(x.numpy(), [0.22222215, 0.11111115, 1.4444444], rtol=1e-6)
    assert np.abs(r.numpy()).max() < 1e-6
    i, x, r, p, gamma = run(b, max_iter=1)
    # TF 2.21 after one step
    assert int(i) == 1
    np.testing.assert_allclose(x.numpy(), [0.28, 0.56, 0.84], rtol=1e-6)
    np.testing.assert_allclose(r.numpy(), [-0.68, -0.8, 0.76], rtol=1e-6)
    np.testing.assert_allclose(p.numpy(), [-0.56, -0.56, 1.12], rtol=1e-6)
    np.testing.assert_allclose(float(gamma), 1.68, rtol=1e-6)
    i, x, *_ = run(b, preconditioner=L.LinearOperatorDiag(1 / np.diag(a)), x=tf.ones(3), tol=1e-2)
    assert int(i) == 3   # TF 2.21: 3 steps with the Jacobi preconditioner from x0 = 1
    np.testing.assert_allclose(x.numpy(), [0.22222218, 0.11111112, 1.4444444], rtol=1e-6)
    with pytest.raises(ValueError, match="Expected a self-adjoint, positive definite operator"):
        cg(L.LinearOperatorFullMatrix(a), b)


@pytest.mark.parametrize("compiled", [False, True])
def test_tf_linalg_functions_dispatch_to_operators(compiled):
    # TF 2.21 dispatches tf.matmul/linalg.matvec/solve/det/logdet/inv/trace/diag_part/cholesky/adjoint to an
    # operator operand (its values below)
    op = L.LinearOperatorDiag([1., 2.])
    x = tf.ones((2, 2))

    def run(f):
        return tf.function(f)() if compiled else f()
    np.testing.assert_array_equal(run(lambda: tf.matmul(op, x)).numpy(), [[1., 1.], [2., 2.]])
    np.testing.assert_array_equal(run(lambda: tf.matmul(x, op)).numpy(), [[1., 2.], [1., 2.]])
    np.testing.assert_array_equal(run(lambda: tf.linalg.matmul(op, x, adjoint_b=True)).numpy(), [[1., 1.], [2., 2.]])
    np.testing.assert_array_equal(run(lambda: L.matvec(op, tf.ones(2))).numpy(), [1., 2.])
    np.testing.assert_array_equal(run(lambda: L.solve(op, x)).numpy(), [[1., 1.], [0.5, 0.5]])
    assert float(run(lambda: L.det(op))) == 2.0 and float(run(lambda: L.trace(op))) == 3.0
    np.testing.assert_array_equal(run(lambda: L.diag_part(op)).numpy(), [1., 2.])
    assert type(L.inv(op)).__name__ == "LinearOperatorDiag" and L.adjoint(op) is op
    b = np.array([[2., 1.], [0.5, 3.]])
    np.testing.assert_allclose(L.inv(L.LinearOperatorFullMatrix(b), adjoint=True).to_dense().numpy(),
                               np.linalg.inv(b).T, rtol=1e-12)
    pd = L.LinearOperatorDiag([1., 4.], is_positive_definite=True)
    np.testing.assert_allclose(float(run(lambda: L.logdet(pd))), np.log(4.0))
    np.testing.assert_array_equal(L.cholesky(pd).to_dense().numpy(), [[1., 0.], [0., 2.]])
    with pytest.raises(ValueError, match="Expected matrix to be self-adjoint positive definite"):
        L.logdet(op)
    with pytest.raises(ValueError, match="Transposing not supported at this time"):
        tf.matmul(op, x, transpose_a=True)
    with pytest.raises(ValueError, match="Passing in `matrix` as a Tensor and `rhs` as a LinearOperator"):
        L.solve(x, op)
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot convert argument"):   # not an operator
        tf.matmul(object(), x)


def test_vector_operators_check_the_rank_first_as_tf():
    # TF 2.21: a scalar diag / reflection_axis fails on its rank before any hint or dtype check
    for make in (lambda: tf.linalg.LinearOperatorDiag(1.0, is_square=False),
                 lambda: tf.linalg.LinearOperatorDiag(tf.constant(1)),
                 lambda: tf.linalg.LinearOperatorHouseholder(1.0, is_self_adjoint=False)):
        with pytest.raises(ValueError, match="must have at least 1 dimension"):
            make()
    with pytest.raises(ValueError, match="Only square diagonal"):
        tf.linalg.LinearOperatorDiag([1.0], is_square=False)
