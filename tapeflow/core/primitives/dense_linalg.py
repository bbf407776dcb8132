"""Dense linear algebra: solve, determinant, Cholesky factorisation and SVD.

Four primitives; the rest of tf.linalg composes from them and from matmul
(``inv(A)`` is ``solve(A, I)``). Kernels are NumPy's LAPACK calls, batched over
leading dimensions. Gradient rules are written in tapeflow ops, so they are
differentiable again.
"""
from __future__ import annotations

import logging

import numpy as np

from ..aval import Aval, fmt_shape
from ...errors import InvalidArgumentError, InvalidArgumentTypeError
from ..primitive import Primitive, bind, aval_of
from . import elementwise as E
from . import linalg as L
from . import shape as S


def _square(name, a, kinds="f"):
    if a.ndim < 2 or (a.shape[-1] is not None and a.shape[-2] is not None and a.shape[-1] != a.shape[-2]):
        raise InvalidArgumentError(f"{name}: expects square matrices of shape (..., n, n), got {fmt_shape(a.shape)}")
    if a.dtype.kind not in kinds:   # (TF 2.21, bfloat16 too: InvalidArgumentError eagerly, TypeError while tracing)
        raise InvalidArgumentTypeError(f"{name}: expects float32 or float64 matrices, got {a.dtype.name}; cast first: "
                        "tapeflow.cast(x, tapeflow.float32)")


def _lapack(name, fn, message):
    """Run a LAPACK kernel; its failure (singular / not positive definite) is
    an error about the input, with TF's wording, not NumPy's."""
    def kernel(*args):
        try:
            return fn(*args)
        except np.linalg.LinAlgError:
            raise InvalidArgumentError(f"{name}: {message} (input shapes: "
                             + ", ".join(fmt_shape(np.shape(a)) for a in args) + ")") from None
    return kernel


# -- solve ---------------------------------------------------------------------------------------

def _solve_abstract(a, b, triangle=None):
    _square("matrix_solve", a, "fc")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise InvalidArgumentError(f"matrix_solve: rhs must have shape (..., {a.shape[-1]}, k) with the matrix's batch "
                         f"dimensions; got matrix {fmt_shape(a.shape)} and rhs {fmt_shape(b.shape)}")
    if b.dtype != a.dtype:
        raise InvalidArgumentTypeError(f"matrix_solve: dtypes differ: matrix {a.dtype.name}, rhs {b.dtype.name}; cast one side")
    return Aval(b.shape, a.dtype)


def _solve_vjp(g, out, a, b, triangle=None):
    # X = A^-1 B:  dB = A^-T g,  dA = -dB X^T (complex: A^-H and X^H, TF's convention); A^T of a triangle is
    # the other triangle
    gb = solve(L._swap(E._cj(a)), g, triangle and {"lower": "upper", "upper": "lower"}[triangle])
    ga = None if E._is_const(a) else E.neg(L.matmul(gb, L._swap(E._cj(out))))
    return ga, (None if E._is_const(b) else gb)


def solve(a, b, triangle=None):
    """X with A X = B; ``triangle`` "lower"/"upper": A is that triangular matrix (its other triangle must be 0 or
    is ignored), solved by substitution as TF's triangular_solve."""
    return bind(matrix_solve_p, a, b) if triangle is None else bind(matrix_solve_p, a, b, triangle=triangle)


_general_solve = _lapack("matrix_solve", np.linalg.solve, "Input matrix is not invertible.")


def _solve_kernel(a, b, triangle=None):
    if triangle is None:
        return _general_solve(a, b)
    # Substitution, row by row from the triangle's corner (TF's Eigen triangular solve): no pivoting and no
    # singularity check, so a zero on the diagonal gives inf/nan as TF, and a NaN or inf reaches only the rows
    # that depend on it (LAPACK's pivoted LU mixed every row: a NaN in rhs's last row made the whole column NaN)
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], np.result_type(a, b))
    rows = range(n) if triangle == "lower" else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in rows:
            done = slice(0, i) if triangle == "lower" else slice(i + 1, n)
            s = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = s / a[..., i, i][..., None]
    return x


matrix_solve_p = Primitive("matrix_solve", _solve_kernel, _solve_abstract, _solve_vjp, complex=True,
                           doc="X with A X = B, batched; triangle='lower'/'upper': A triangular, by substitution")


# -- determinant ------------------------------------------------------------------------------------

def _det_abstract(a):
    _square("matrix_determinant", a)
    return Aval(a.shape[:-2], a.dtype)


def _det_vjp(g, out, a):
    # d det(A) / dA = det(A) A^-T. Through solve, so a singular A raises rather
    # than returning inf (TF's gradient fails there too).
    n = aval_of(a).shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=aval_of(a).dtype), aval_of(a).shape)
    inv_t = solve(L._swap(a), np.ascontiguousarray(eye))
    scale = S.reshape(E.mul(g, out), tuple(aval_of(out).shape) + (1, 1))
    return (E.mul(scale, inv_t),)


def det(a):
    return bind(matrix_determinant_p, a)


matrix_determinant_p = Primitive("matrix_determinant", lambda a: np.asarray(np.linalg.det(a), a.dtype),
                                 _det_abstract, _det_vjp, doc="determinant, batched")


# -- Cholesky ----------------------------------------------------------------------------------------

def _cholesky_abstract(a):
    _square("cholesky", a)
    return Aval(a.shape, a.dtype)


def _cholesky_vjp(g, out, a):
    # Murray (2016), as TF: with Phi(M) = the lower triangle of M with its
    # diagonal halved, dA = (S + S^T) / 2 where S = L^-T Phi(L^T G) L^-1.
    # L^-1 comes from one solve against I (L is well conditioned whenever the
    # factorisation succeeded in the forward pass).
    n = aval_of(out).shape[-1]
    dt = aval_of(out).dtype
    lower = np.tril(np.ones((n, n), dt)) - 0.5 * np.eye(n, dtype=dt)  # Phi's mask: 1 below, 1/2 on the diagonal
    middle = E.mul(L.matmul(L._swap(out), g), lower)
    eye = np.ascontiguousarray(np.broadcast_to(np.eye(n, dtype=dt), aval_of(out).shape))
    l_inv = solve(out, eye)
    ga = L.matmul(L.matmul(L._swap(l_inv), middle), l_inv)
    return (E.mul(E.add(ga, L._swap(ga)), 0.5),)


def cholesky(a):
    return bind(cholesky_p, a)


def _cholesky_impl(a):
    """TF 2.21's Cholesky kernel does not raise for a matrix that is not positive definite: it logs a
    warning and fills that matrix's lower triangle with NaNs (the rest of a batch is factorised), so
    logdet or a Gaussian log-density of a bad covariance is NaN, not an exception. The upper
    triangle is 0 as for a factorised matrix (TF leaves it unwritten)."""
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        pass
    out = np.zeros(a.shape, a.dtype)
    flat, res = a.reshape((-1,) + a.shape[-2:]), out.reshape((-1,) + a.shape[-2:])
    nan_lower = np.where(np.tri(a.shape[-1], dtype=bool), np.nan, 0).astype(a.dtype)
    for i, m in enumerate(flat):
        try:
            res[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            res[i] = nan_lower
    logging.getLogger("tapeflow").warning("Cholesky decomposition was not successful. The input might not be "
                                          "valid (not positive definite). Filling lower-triangular output with NaNs.")
    return out


cholesky_p = Primitive("cholesky", _cholesky_impl, _cholesky_abstract, _cholesky_vjp,
                       doc="lower-triangular L with A = L L^T, batched (NaNs for a matrix not positive definite)")

# -- singular value decomposition ---------------------------------------------------------------
# A primitive because no composition of the others factorises a matrix. Outputs in TF's order and
# form: s (descending), u, v (not v^T), thin unless full_matrices; s alone without compute_uv.

def _svd_abstract(a, compute_uv, full_matrices):
    if a.ndim < 2:
        raise ValueError(f"svd: expects matrices of shape (..., m, n), got {fmt_shape(a.shape)}")
    if a.dtype.kind != "f":
        raise TypeError(f"svd: expects float32 or float64 matrices, got {a.dtype.name}; cast first: "
                        "tapeflow.cast(x, tapeflow.float32)")
    *batch, m, n = a.shape
    k = None if m is None or n is None else min(m, n)
    s = Aval(tuple(batch) + (k,), a.dtype)
    if not compute_uv:
        return (s,)
    return (s, Aval(tuple(batch) + (m, m if full_matrices else k), a.dtype),
            Aval(tuple(batch) + (n, n if full_matrices else k), a.dtype))


def _svd_impl(a, compute_uv, full_matrices):
    try:
        if not compute_uv:
            return (np.linalg.svd(a, compute_uv=False),)
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        # (a NaN or inf entry: LAPACK does not converge. TF's Eigen SVD logs the failure and
        # returns NaNs; NumPy's LinAlgError named no op)
        return tuple(np.full(av.shape, np.nan, a.dtype) for av in
                     _svd_abstract(Aval(a.shape, a.dtype), compute_uv=compute_uv, full_matrices=full_matrices))
    return s, u, np.ascontiguousarray(np.swapaxes(vh, -1, -2))


def _diag(x, k, dt):
    """(..., k) -> (..., k, k) with x on the diagonal."""
    return E.mul(S.reshape(x, tuple(aval_of(x).shape) + (1,)), np.eye(k, dtype=dt))


def _svd_vjp(cts, outs, a, compute_uv, full_matrices):
    # Thin SVD A = U S V^T (m x n, k = min(m, n)); Townsend (2016), as TF's SvdGrad:
    #   dA = U [diag(gs) + (F o (U^T gu - gu^T U)) S + S (F o (V^T gv - gv^T V))] V^T
    #        + (I - U U^T) gu S^-1 V^T + U S^-1 gv^T (I - V V^T),   F_ij = 1 / (s_j^2 - s_i^2), F_ii = 0.
    # Repeated singular values make F infinite: the gradient of u, v is undefined there (TF: inf/nan
    # too); the gradient of s alone never uses F.
    av = aval_of(a)
    m, n = av.shape[-2:]
    k, dt = min(m, n), av.dtype
    if compute_uv:
        s, u, v = outs
        gs, gu, gv = cts
        if full_matrices and m != n:
            raise NotImplementedError("svd: the gradient with full_matrices=True of a non-square matrix is not "
                                      f"defined (input {fmt_shape(av.shape)}; TF raises too); use "
                                      "full_matrices=False")
    else:
        s, u, v = bind(svd_p, a, compute_uv=True, full_matrices=False)
        gs, gu, gv = cts[0], None, None
    ut, vt = L._swap(u), L._swap(v)
    middle = _diag(gs, k, dt)
    if gu is not None or gv is not None:
        s2 = E.mul(s, s)
        eye = np.eye(k, dtype=dt)
        row = S.reshape(s2, tuple(aval_of(s2).shape[:-1]) + (1, k))     # s_j^2 along a row
        col = S.reshape(s2, tuple(aval_of(s2).shape[:-1]) + (k, 1))     # s_i^2 down a column
        f = E.div(1.0 - eye, E.add(E.sub(row, col), eye))               # 0 on the diagonal
        s_row = S.reshape(s, tuple(aval_of(s).shape[:-1]) + (1, k))
        s_col = S.reshape(s, tuple(aval_of(s).shape[:-1]) + (k, 1))
        inv_s_row = E.div(1.0, s_row)
        if gu is not None:
            utgu = L.matmul(ut, gu)
            j = E.mul(f, E.sub(utgu, L._swap(utgu)))
            middle = E.add(middle, E.mul(j, s_row))                     # J S
        if gv is not None:
            vtgv = L.matmul(vt, gv)
            kk = E.mul(f, E.sub(vtgv, L._swap(vtgv)))
            middle = E.add(middle, E.mul(s_col, kk))                    # S K
    ga = L.matmul(L.matmul(u, middle), vt)
    if gu is not None and m > k:   # the part of gu outside U's span
        outside = E.sub(gu, L.matmul(u, L.matmul(ut, gu)))
        ga = E.add(ga, L.matmul(E.mul(outside, inv_s_row), vt))
    if gv is not None and n > k:
        outside = E.sub(gv, L.matmul(v, L.matmul(vt, gv)))
        ga = E.add(ga, L.matmul(E.mul(u, inv_s_row), L._swap(outside)))
    return (ga,)


svd_p = Primitive("svd", _svd_impl, _svd_abstract, _svd_vjp, multiple_results=True,
                  doc="(s, u, v) with a = u diag(s) v^T, batched; params compute_uv, full_matrices")


def svd(a, compute_uv=True, full_matrices=False):
    return bind(svd_p, a, compute_uv=bool(compute_uv), full_matrices=bool(full_matrices))


# -- QR and the symmetric eigendecomposition (branch ops18) ------------------------------------------------
# Primitives for the same reason as svd: no composition of the others factorises a matrix. Kernels are
# LAPACK's through NumPy (geqrf/orgqr: Householder, the sign convention of TF's Eigen kernel, tested
# against TF's numbers; syevd on the lower triangle, as TF). Gradients are TF's formulas in tapeflow ops.

def _float_matrices(name, a):
    if a.ndim < 2:
        raise InvalidArgumentError(f"{name}: expects matrices of shape (..., m, n), got {fmt_shape(a.shape)}")
    if a.dtype.kind != "f":   # (TF: InvalidArgumentError eagerly, TypeError while tracing: both)
        raise InvalidArgumentTypeError(f"{name}: expects float32 or float64 matrices, got {a.dtype.name}; cast "
                                       "first: tapeflow.cast(x, tapeflow.float32)")


def _qr_abstract(a, full_matrices):
    _float_matrices("qr", a)
    *batch, m, n = a.shape
    k = m if full_matrices or m is None or n is None else min(m, n)
    return (Aval(tuple(batch) + (m, k), a.dtype), Aval(tuple(batch) + (k, n), a.dtype))


def _qr_impl(a, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q, r


def _zeros_for(ct, like):
    return ct if ct is not None else E.mul(like, 0.0)


def _tri_solve_right(x, r):
    # x r^-T for an upper-triangular r (TF's _TriangularSolve in QrGrad): (r^-1 x^T)^T
    return L._swap(solve(r, L._swap(x)))


def _qr_grad_deep(q, r, dq, dr):
    # TF's _QrGradSquareAndDeepMatrices (m >= n)
    qdq = L.matmul(L._swap(q), dq)
    qdq_ = E.sub(qdq, L._swap(qdq))
    rdr = L.matmul(r, L._swap(dr))
    rdr_ = E.sub(rdr, L._swap(rdr))
    k = aval_of(r).shape[-2]
    tril = E.mul(E.add(qdq_, rdr_), np.tril(np.ones((k, k), aval_of(r).dtype)))
    grad_a = L.matmul(q, E.add(dr, _tri_solve_right(tril, r)))
    grad_b = _tri_solve_right(E.sub(dq, L.matmul(q, qdq)), r)
    return E.add(grad_a, grad_b)


def _qr_vjp(cts, outs, a, full_matrices):
    q, r = outs
    dq, dr = _zeros_for(cts[0], q), _zeros_for(cts[1], r)
    m, n = aval_of(a).shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(f"qr: the gradient with full_matrices=True of a matrix with more rows than "
                                  f"columns ({fmt_shape(aval_of(a).shape)}) is not defined (TF raises too); use "
                                  "full_matrices=False")
    if m >= n:
        return (_qr_grad_deep(q, r, dq, dr),)
    # wide: A = Q [U | V], X = A[..., :m] = Q U; TF's split
    y = _cols(a, m, n)
    u, du, dv = _cols(r, 0, m), _cols(dr, 0, m), _cols(dr, m, n)
    dy = L.matmul(q, dv)
    dx = _qr_grad_deep(q, u, E.add(dq, L.matmul(y, L._swap(dv))), du)
    return (bind(S.concat_p, dx, dy, axis=len(aval_of(a).shape) - 1),)


def _cols(x, lo, hi):
    """x[..., :, lo:hi]"""
    from . import indexing as I
    return I.getitem(x, (Ellipsis, slice(None), slice(lo, hi)))


qr_p = Primitive("qr", _qr_impl, _qr_abstract, _qr_vjp, multiple_results=True, aliases=False,
                 doc="(q, r) with a = q r, batched; param full_matrices")


def _eigh_abstract(a):
    _float_matrices("eigh", a)
    _square("eigh", a)
    *batch, n, _ = a.shape
    return (Aval(tuple(batch) + (n,), a.dtype), Aval(a.shape, a.dtype))


def _eigh_impl(a):
    try:
        # (TF's Eigen solver fails on a NaN or inf entry and raises InvalidArgument; LAPACK either
        # fails to converge, NumPy's LinAlgError naming no op, or returns NaNs: both raise here)
        if not np.isfinite(np.tril(a)).all():   # (the upper triangle is never read: TF ignores a NaN there)
            raise np.linalg.LinAlgError
        e, v = np.linalg.eigh(a)      # the lower triangle (UPLO='L'), as TF's SelfAdjointEigV2
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(f"eigh: self-adjoint eigen decomposition was not successful (input shape "
                                   f"{fmt_shape(a.shape)}; a NaN or inf entry?)") from None
    return e, v


def _eigh_vjp(cts, outs, a):
    # TF's _SelfAdjointEigV2Grad: V (diag(ge) + F o (V^T gv)) V^T, F_ij = 1 / (e_j - e_i) off the
    # diagonal (repeated eigenvalues: inf, the eigenvectors' gradient is undefined there, as in TF),
    # then symmetrised onto the lower triangle (the kernel reads only that), the diagonal halved
    e, v = outs
    ge, gv = cts
    av = aval_of(a)
    n, dt = av.shape[-1], av.dtype
    eye = np.eye(n, dtype=dt)
    mid = _diag(_zeros_for(ge, e), n, dt)
    if gv is not None:
        row = S.reshape(e, tuple(aval_of(e).shape[:-1]) + (1, n))      # e_j along a row
        col = S.reshape(e, tuple(aval_of(e).shape[:-1]) + (n, 1))      # e_i down a column
        f = E.div(1.0 - eye, E.add(E.sub(row, col), eye))              # 0 on the diagonal, no 1/0 there
        mid = E.add(mid, E.mul(f, L.matmul(L._swap(v), gv)))
    ga = L.matmul(L.matmul(v, mid), L._swap(v))
    ga = E.add(ga, L._swap(ga))
    lower = np.tril(np.ones((n, n), dt)) - 0.5 * eye                   # the lower triangle, the diagonal halved
    return (E.mul(ga, lower),)


eigh_p = Primitive("eigh", _eigh_impl, _eigh_abstract, _eigh_vjp, multiple_results=True, aliases=False,
                   doc="(e, v): eigenvalues ascending and eigenvectors of a symmetric matrix (its lower triangle)")


# -- eig: eigenvalues and eigenvectors of general matrices (wave 21) -----------------------------------
# A primitive: no composition of tapeflow ops finds eigenvalues. LAPACK's geev through NumPy; the
# results are complex (complex64 for float32/complex64 input). Eigenvectors have unit norm, each
# defined up to a complex phase: LAPACK's phases are not TF's (Eigen's), so only phase-invariant
# functions of them (|v|, v v^H, the eigenvalues) agree with TF.

_EIG_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128),
           np.dtype(np.complex64): np.dtype(np.complex64), np.dtype(np.complex128): np.dtype(np.complex128)}


def _eig_abstract(a):
    _square("eig", a, "fc")
    c = _EIG_OF[a.dtype]
    return Aval(a.shape[:-1], c), Aval(a.shape, c)


def _eig_impl(a):
    c = _EIG_OF[a.dtype]
    e, v = np.linalg.eig(a)
    return e.astype(c, copy=False), v.astype(c, copy=False)


def _eig_vjp(cts, outs, a):
    # TF's _EigGrad: grad_a = V^-H (diag(ge) + conj(F) o (V^H gv - V^H V diag(Re diag(V^H gv)))) V^H,
    # F_ij = 1 / (e_j - e_i) off the diagonal, 0 on it (repeated eigenvalues: inf, as TF)
    e, v = outs
    ge, gv = cts
    n = aval_of(a).shape[-1]
    c = aval_of(e).dtype
    eye = np.eye(n, dtype=c)
    vt = L._swap(E._cj(v))
    mid = _diag(_zeros_for(ge, e), n, c)
    if gv is not None:
        row = S.reshape(e, tuple(aval_of(e).shape[:-1]) + (1, n))
        col = S.reshape(e, tuple(aval_of(e).shape[:-1]) + (n, 1))
        f = E._cj(E.div(1.0 - eye, E.add(E.sub(row, col), eye)))
        vgv = L.matmul(vt, gv)
        dpart = E.mul(E.bind(E.cast_p, E.bind(E.real_p, vgv), dtype=c), eye)
        mid = E.add(mid, E.mul(f, E.sub(vgv, L.matmul(L.matmul(vt, v), dpart))))
    ga = solve(vt, L.matmul(mid, vt))
    d = aval_of(a).dtype
    return (ga if d == c else E.bind(E.cast_p, ga, dtype=d),)


eig_p = Primitive("eig", _lapack("eig", _eig_impl, "Eigen decomposition failed."), _eig_abstract, _eig_vjp,
                  multiple_results=True, aliases=False, complex=True,
                  doc="(e, v): eigenvalues and unit eigenvectors (columns) of general matrices, complex")


__all__ = ["solve", "det", "cholesky", "svd", "matrix_solve_p", "matrix_determinant_p", "cholesky_p", "svd_p"]
