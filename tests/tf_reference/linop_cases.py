"""The LinearOperators of tests/test_linear_operator.py and make_linop_reference.py, built the same way
under TF 2.21 (``L = tf.linalg``) and tapeflow (no TF import here: the tests run without TF).

``operators(L, tf, dt)`` builds each case; ``evaluate(op, dt)`` calls every public method on fixed
inputs and returns plain values (lists, numbers, strings), so the generator records TF's and the
test compares tapeflow's with them. ``bad(L, tf)`` are programs TF refuses (class + message recorded)."""
import numpy as np


def _rng():
    return np.random.RandomState(0)


def arrays():
    r = _rng()
    a = r.randn(3, 3)
    b = r.randn(3, 3)
    return dict(spd=a @ a.T + 3 * np.eye(3), b=b, v=r.randn(3), u=r.randn(3, 2), u2=r.randn(3, 2),
                bb=r.randn(2, 3, 3), vb=r.randn(2, 3), ub=r.randn(2, 3, 1), x=r.randn(3, 2), xb=r.randn(2, 3, 2))


def operators(L, tf, dt):
    """name -> operator, every array cast to ``dt`` (a numpy dtype)."""
    A = {k: v.astype(dt) for k, v in arrays().items()}
    spd, b, v = A["spd"], A["b"], A["v"]
    eye3 = np.eye(3, dtype=dt)
    tfdt = tf.float64 if dt == np.float64 else tf.float32
    F = L.LinearOperatorFullMatrix
    D = L.LinearOperatorDiag
    return {
        "full": lambda: F(b),
        "full_pd": lambda: F(spd, is_self_adjoint=True, is_positive_definite=True),
        "full_batch": lambda: F(A["bb"] + 3 * eye3),
        "diag": lambda: D(v + 3),
        "diag_batch": lambda: D(A["vb"] + 3),
        "diag_pd": lambda: D(v * v + 1, is_positive_definite=True),
        "identity": lambda: L.LinearOperatorIdentity(3, dtype=tfdt),
        "identity_batch": lambda: L.LinearOperatorIdentity(3, batch_shape=[2], dtype=tfdt),
        "scaled": lambda: L.LinearOperatorScaledIdentity(3, dt(2.5)),
        "scaled_batch": lambda: L.LinearOperatorScaledIdentity(3, np.array([2.5, -0.5], dt)),
        "scaled_pd": lambda: L.LinearOperatorScaledIdentity(3, dt(2.5), is_positive_definite=True),
        "tril": lambda: L.LinearOperatorLowerTriangular(b + 3 * eye3),
        "tril_batch": lambda: L.LinearOperatorLowerTriangular(A["bb"] + 3 * eye3),
        "composition": lambda: L.LinearOperatorComposition([F(b), D(v + 3)]),
        "composition_batch": lambda: L.LinearOperatorComposition([F(A["bb"] + 3 * eye3), D(v + 3)]),
        "inversion": lambda: L.LinearOperatorInversion(F(spd)),
        "adjoint": lambda: L.LinearOperatorAdjoint(F(b)),
        "block_diag": lambda: L.LinearOperatorBlockDiag([F(b[:2, :2] + 2 * eye3[:2, :2]), D(v[:1] + 3)]),
        "block_diag_pd": lambda: L.LinearOperatorBlockDiag([
            F(spd[:2, :2], is_self_adjoint=True, is_positive_definite=True), D(v[:1] ** 2 + 1, is_positive_definite=True)]),
        "kronecker": lambda: L.LinearOperatorKronecker([F(b[:1, :1] + 2), F(b + 3 * eye3)]),
        "kronecker_3": lambda: L.LinearOperatorKronecker([F(np.array([[2., 1.], [0.5, 3.]], dt)), D(v[:2] + 3),
                                                          F(np.array([[1.5]], dt))]),
        "kronecker_pd": lambda: L.LinearOperatorKronecker([
            F(spd[:2, :2], is_self_adjoint=True, is_positive_definite=True), D(v[:2] ** 2 + 1, is_positive_definite=True)]),
        "low_rank": lambda: L.LinearOperatorLowRankUpdate(D(v * v + 1, is_positive_definite=True), A["u"]),
        "low_rank_dv": lambda: L.LinearOperatorLowRankUpdate(F(b + 3 * eye3), A["u"], diag_update=np.array([.5, 2.], dt),
                                                             v=A["u2"]),
        "low_rank_batch": lambda: L.LinearOperatorLowRankUpdate(D(A["vb"] ** 2 + 1, is_positive_definite=True),
                                                                A["ub"]),
        "permutation": lambda: L.LinearOperatorPermutation(np.array([2, 0, 1], np.int32), dtype=tfdt),
        "householder": lambda: L.LinearOperatorHouseholder(v),
        "toeplitz": lambda: L.LinearOperatorToeplitz(np.array([3., 1., .5], dt), np.array([9., -1., .2], dt)),
        "toeplitz_batch": lambda: L.LinearOperatorToeplitz(np.array([[3., 1., .5], [4., 0., 1.]], dt),
                                                           np.array([[9., -1., .2], [5., .5, .1]], dt)),
        "tridiag": lambda: L.LinearOperatorTridiag(np.array([[1., 2., 0.], [4., 5., 6.], [0., 3., -2.]], dt)),
        "tridiag_sequence": lambda: L.LinearOperatorTridiag([np.array([1., 2., 0.], dt), np.array([4., 5., 6.], dt),
                                                             np.array([0., 1., 2.], dt)], diagonals_format="sequence"),
        "block_lower": lambda: L.LinearOperatorBlockLowerTriangular([
            [F(b[:2, :2] + 2 * eye3[:2, :2])], [F(b[2:, :2]), D(v[:1] + 3)]]),
        "block_lower_3": lambda: L.LinearOperatorBlockLowerTriangular([
            [D(v[:1] + 3)], [F(b[1:2, :1]), D(v[1:2] + 4)], [F(b[2:, :1]), F(b[:1, 2:]), D(v[2:] + 3)]]),
        "zeros": lambda: L.LinearOperatorZeros(3, dtype=tfdt),
        "zeros_rect": lambda: L.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False, dtype=tfdt),
    }


def _val(t):
    a = np.asarray(t)
    return a.tolist() if a.dtype.kind != "f" else np.where(np.isfinite(a), a, 0).tolist()


def evaluate(op, dt):
    """Every public method of ``op`` on fixed inputs: name -> value (a method TF refuses: its error class)."""
    n, m = op.domain_dimension, op.range_dimension
    rs = np.random.RandomState(5)
    x, xb, v, xr, vr, xrb = (rs.randn(n, 2).astype(dt), rs.randn(2, n, 2).astype(dt), rs.randn(n).astype(dt),
                             rs.randn(m, 2).astype(dt), rs.randn(m).astype(dt), rs.randn(2, m, 2).astype(dt))
    out = {"shape": list(op.shape), "batch_shape": list(op.batch_shape), "tensor_rank": int(op.tensor_rank),
           "domain": int(op.domain_dimension), "range": int(op.range_dimension), "dtype": op.dtype.name,
           "name": op.name,
           "hints": [op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square]}
    calls = {
        "dense": lambda: op.to_dense(),
        "matmul": lambda: op.matmul(x), "matmul_batch": lambda: op.matmul(xb),
        "matmul_adj": lambda: op.matmul(xr, adjoint=True),
        "matmul_adj_arg": lambda: op.matmul(np.ascontiguousarray(x.T), adjoint_arg=True),
        "matvec": lambda: op.matvec(v), "matvec_adj": lambda: op.matvec(vr, adjoint=True),
        "solve": lambda: op.solve(xr), "solve_batch": lambda: op.solve(xrb),
        "solve_adj": lambda: op.solve(xr, adjoint=True),
        "solve_adj_arg": lambda: op.solve(np.ascontiguousarray(xr.T), adjoint_arg=True),
        "solvevec": lambda: op.solvevec(vr),
        "determinant": lambda: op.determinant(), "log_abs_determinant": lambda: op.log_abs_determinant(),
        "trace": lambda: op.trace(), "diag_part": lambda: op.diag_part(),
        "add_to_tensor": lambda: op.add_to_tensor(np.ones((m, n), dt)),
        "cond": lambda: op.cond(),
        "eigvals": lambda: np.sort(np.asarray(op.eigvals()), axis=-1),
        "inverse": lambda: op.inverse().to_dense(), "inverse_type": lambda: type(op.inverse()).__name__,
        "adjoint": lambda: op.H.to_dense(), "adjoint_type": lambda: type(op.adjoint()).__name__,
        "cholesky": lambda: op.cholesky().to_dense(), "cholesky_type": lambda: type(op.cholesky()).__name__,
        "square_type": lambda: type(op @ op).__name__,
        "square": lambda: (op @ op).to_dense(),
        "getitem": lambda: op[0].to_dense() if len(op.batch_shape) else "no batch",
    }
    for k, f in calls.items():
        try:
            r = f()
            out[k] = r if isinstance(r, str) else _val(r)
        except Exception as e:   # noqa: BLE001  (TF's refusal is the expected value)
            out[k] = {"error": type(e).__name__}
    return out


def bad(L, tf):
    """Programs TF 2.21 refuses: name -> thunk."""
    F, D = L.LinearOperatorFullMatrix, L.LinearOperatorDiag
    sq = np.array([[2., 1.], [1., 3.]], np.float32)
    return {
        "matmul_shape": lambda: F(sq).matmul(np.ones((3, 2), np.float32)),
        "matmul_adjoint_arg_shape": lambda: F(sq).matmul(np.ones((2, 3), np.float32), adjoint_arg=True),
        "matvec_shape": lambda: D(np.ones(3, np.float32)).matvec(np.ones(2, np.float32)),
        "solve_shape": lambda: F(sq).solve(np.ones((3, 1), np.float32)),
        "solve_nonsquare": lambda: F(np.ones((2, 3), np.float32)).solve(np.ones((2, 1), np.float32)),
        "det_nonsquare": lambda: F(np.ones((2, 3), np.float32)).determinant(),
        "matmul_dtype": lambda: F(sq).matmul(np.ones((2, 2), np.float64)),
        "full_rank1": lambda: F(np.ones(3, np.float32)),
        "full_int": lambda: F(np.ones((3, 3), np.int32)),
        "diag_scalar": lambda: D(np.float32(1.0)),
        "diag_not_self_adjoint": lambda: D(np.ones(2, np.float32), is_self_adjoint=False),
        "pd_singular_hint": lambda: F(sq, is_positive_definite=True, is_non_singular=False),
        "non_singular_not_square": lambda: F(sq, is_non_singular=True, is_square=False),
        "inverse_singular_hint": lambda: D(np.ones(2, np.float32), is_non_singular=False).inverse(),
        "inverse_non_square": lambda: F(np.ones((2, 3), np.float32)).inverse(),
        "cholesky_not_pd": lambda: F(sq).cholesky(),
        "eigvals_not_self_adjoint": lambda: F(np.array([[1., 2.], [3., 4.]], np.float32)).eigvals(),
        "solve_singular_hint": lambda: D(np.ones(2, np.float32), is_non_singular=False).solve(np.ones((2, 1), np.float32)),
        "operator_matmul_shape": lambda: F(sq) @ D(np.ones(3, np.float32)),
        "composition_empty": lambda: L.LinearOperatorComposition([]),
        "composition_dtype": lambda: L.LinearOperatorComposition([F(sq), F(sq.astype(np.float64))]),
        "identity_negative": lambda: L.LinearOperatorIdentity(-1),
        "identity_float_rows": lambda: L.LinearOperatorIdentity(2.0),
        "identity_not_pd": lambda: L.LinearOperatorIdentity(2, is_positive_definite=False),
        "zeros_non_singular": lambda: L.LinearOperatorZeros(2, is_non_singular=True),
        "permutation_not_unique": lambda: L.LinearOperatorPermutation(np.array([0, 0, 1], np.int32)),
        "permutation_float": lambda: L.LinearOperatorPermutation(np.array([0., 1.], np.float32)),
        "householder_pd": lambda: L.LinearOperatorHouseholder(np.ones(2, np.float32), is_positive_definite=True),
        "toeplitz_mismatch": lambda: L.LinearOperatorToeplitz(np.ones(3, np.float32), np.ones(2, np.float32)),
        "tridiag_format": lambda: L.LinearOperatorTridiag(np.ones((3, 3), np.float32), diagonals_format="banded"),
        "block_lower_blocks": lambda: L.LinearOperatorBlockLowerTriangular([[F(sq)], [F(sq)]]),
        "kronecker_empty": lambda: L.LinearOperatorKronecker([]),
        "low_rank_diag_positive": lambda: L.LinearOperatorLowRankUpdate(F(sq), np.ones((2, 1), np.float32),
                                                                        is_diag_update_positive=False),
        "inversion_singular": lambda: L.LinearOperatorInversion(D(np.ones(2, np.float32), is_non_singular=False)),
        "assert_non_singular": lambda: D(np.array([1., 0.], np.float32)).assert_non_singular(),
        "assert_positive_definite": lambda: D(np.array([1., -1.], np.float32)).assert_positive_definite(),
        "assert_self_adjoint": lambda: F(np.array([[1., 2.], [3., 4.]], np.float32)).assert_self_adjoint(),
        "assert_pd_full": lambda: F(np.array([[1., 2.], [2., 1.]], np.float32),
                                    is_self_adjoint=True).assert_positive_definite(),
        "assert_zeros_non_singular": lambda: L.LinearOperatorZeros(2).assert_non_singular(),
        "assert_householder_pd": lambda: L.LinearOperatorHouseholder(np.ones(2, np.float32)).assert_positive_definite(),
        "getitem_too_many": lambda: D(np.ones((2, 3), np.float32))[0, 0],
    }
