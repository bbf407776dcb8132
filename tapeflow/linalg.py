"""tapeflow.linalg: TF's tf.linalg on NumPy.

``solve``, ``det``, ``cholesky``, ``svd``, ``qr`` and ``eigh`` are primitives
(core/primitives/dense_linalg.py); everything else composes from them and
matmul, so every function here has gradients and traces into compiled code.
"""
from __future__ import annotations

import numpy as np

from .errors import InvalidArgumentError
from .core.aval import fmt_shape, shapes_compatible as _shapes_compatible
from .core.primitive import aval_of
from .core.primitives import dense_linalg as _D
from .core.tensor import Tensor, convert_to_tensor
from .ops import array_ops as _A
from .ops import math_ops as _M
from .ops.math_ops import matmul, einsum, tensordot  # noqa: F401
from .ops.array_ops import eye  # noqa: F401
from .ops.math_ops import _swap_last as matrix_transpose  # noqa: F401
from . import linear_operator as _linop
from .linear_operator import LinearOperator as _LinOp   # TF dispatches these functions to operators

def adjoint(matrix, name=None):
    """The adjoint: the transpose (real dtypes only); an operator's ``adjoint()`` (TF's dispatch)."""
    if isinstance(matrix, _LinOp):
        return matrix.adjoint()
    return matrix_transpose(matrix)


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def solve(matrix, rhs, adjoint=False, name=None):
    if isinstance(matrix, _LinOp) or isinstance(rhs, _LinOp):
        return _linop.dispatch_solve(matrix, rhs, adjoint)
    matrix = _t(matrix)
    return _D.solve(matrix_transpose(matrix) if adjoint else matrix, _t(rhs))


def inv(input, adjoint=False, name=None):  # noqa: A002
    if isinstance(input, _LinOp):
        return input.inverse().adjoint() if adjoint else input.inverse()
    a = _square(_t(input))
    av = aval_of(a)
    if len(av.shape) >= 2:
        _runtime_size("inv", a, (-1,))   # (the identity it solves for)
    if len(av.shape) < 2 or (None not in av.shape[-2:] and av.shape[-1] != av.shape[-2]):
        raise InvalidArgumentError(f"inv: expects square matrices of shape (..., n, n), got shape "
                                   f"{tuple(av.shape)}")
    eye_ = _batched(np.eye(av.shape[-1], dtype=av.dtype), a) if None in av.shape and av.dtype.kind == "f" else \
        np.ascontiguousarray(np.broadcast_to(np.eye(av.shape[-1], dtype=av.dtype), av.shape)) \
        if av.dtype.kind == "f" else np.eye(av.shape[-1])
    return solve(a, eye_, adjoint=adjoint)


def det(input, name=None):  # noqa: A002
    if isinstance(input, _LinOp):
        return input.determinant()
    return _D.det(_t(input))


def logdet(matrix, name=None):
    """log det of a Hermitian positive-definite matrix, via Cholesky (as TF)."""
    if isinstance(matrix, _LinOp):
        return _linop.dispatch_logdet(matrix)
    return _M.multiply(2.0, _M.reduce_sum(_M.log(diag_part(cholesky(_square(_t(matrix))))), axis=-1))


def cholesky(input, name=None):  # noqa: A002
    if isinstance(input, _LinOp):
        return input.cholesky()
    return _D.cholesky(_t(input))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """TF's ``tf.linalg.svd``: ``s, u, v`` with ``tensor = u @ diag(s) @ v^T`` (``s`` alone
    when ``compute_uv=False``), singular values descending, batched over leading dimensions."""
    out = _D.svd(_t(tensor), compute_uv=compute_uv, full_matrices=full_matrices)
    return out if compute_uv else out[0]


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    return _A.squeeze(matmul(a, _A.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a), -1)


def _band_mask(rows, cols, num_lower, num_upper):
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    keep = np.ones((rows, cols), bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return keep


def _row_col(x):
    """The int64 row and column positions of ``x``'s last two axes, (m, 1) and (1, n), as long as the
    function runs with where an input_signature leaves a size None (a mask built from them then has the
    run-time sizes, where a NumPy mask is a constant of static ones)."""
    return _A.expand_dims(_A._axis_positions(x, -2), -1), _A.expand_dims(_A._axis_positions(x, -1), 0)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keep the band num_lower below / num_upper above the diagonal (-1: all), zero the rest."""
    x = _t(input)
    s = aval_of(x).shape
    if len(s) < 2:
        raise InvalidArgumentError(f"band_part: expects rank >= 2 (a matrix or a batch of them), got shape {tuple(s)}")
    lo, up = int(num_lower), int(num_upper)
    if None in s[-2:]:
        i, j = _row_col(x)
        mask = _M.logical_and(_M.less_equal(i - j, lo) if lo >= 0 else True, _M.less_equal(j - i, up) if up >= 0
                              else True)
    else:
        mask = _band_mask(s[-2], s[-1], lo, up)
    return _M.where(mask, x, _A.zeros_like(x))


def diag_part(input, name=None):  # noqa: A002
    """The main diagonal of the last two axes: (..., m, n) -> (..., min(m, n))."""
    if isinstance(input, _LinOp):
        return input.diag_part()
    x = _t(input)
    s = aval_of(x).shape
    if len(s) < 2:
        raise InvalidArgumentError(f"diag_part: expects rank >= 2 (a matrix or a batch of them), got shape {tuple(s)}")
    if None in s[-2:]:
        # min(m, n), the result's length, is known when the function runs: each row's diagonal entry (zero
        # past the last column), the first min(m, n) of them kept by a traced slice's mask
        i, j = _row_col(x)
        kept = _M.where(_M.equal(i, j), x, _A.zeros_like(x))
        rows = (_M.reduce_any if aval_of(x).dtype == np.bool_ else _M.reduce_sum)(kept, axis=-1)
        m_n = _A.shape(x, out_type=np.int64)
        return rows[..., :_M.minimum(m_n[-2], m_n[-1])]
    k = min(s[-2], s[-1])
    sq = x[..., :k, :k]
    # the off-diagonal entries replaced by zeros, not multiplied by them (inf * 0 = NaN would put a NaN
    # on the diagonal of a matrix with an inf elsewhere); a bool matrix's row sum is its any
    kept = _M.where(np.eye(k, dtype=bool), sq, _A.zeros_like(sq))
    return (_M.reduce_any if aval_of(x).dtype == np.bool_ else _M.reduce_sum)(kept, axis=-1)


def diag(diagonal, name=None):
    """A (..., n, n) matrix with ``diagonal`` (..., n) on its diagonal."""
    d = _t(diagonal)
    if not aval_of(d).shape:   # (shape[-1] of a scalar raised an IndexError naming no op)
        raise InvalidArgumentError("diag: the diagonal must be at least 1-dimensional, got a scalar; "
                                   "give a vector, e.g. tf.linalg.diag([x])")
    n = aval_of(d).shape[-1]
    if n is None:   # (an input_signature's None: the identity mask from the run-time positions)
        p = _A._axis_positions(d, -1)
        eye_ = _M.equal(_A.expand_dims(p, -1), _A.expand_dims(p, 0))
    else:
        eye_ = np.eye(n, dtype=bool)
    # (where, not a product with the identity: inf * 0 put NaNs beside an infinite diagonal entry)
    return _M.where(eye_, _A.expand_dims(d, -1), np.zeros((), aval_of(d).dtype))


def trace(x, name=None):
    if isinstance(x, _LinOp):
        return x.trace()
    return _M.reduce_sum(diag_part(x), axis=-1)


def global_norm(t_list, name=None):
    """sqrt of the sum of squares of every tensor in t_list (None entries skipped)."""
    ts = [_t(t) for t in t_list if t is not None]
    if not ts:
        raise ValueError("global_norm: t_list holds no tensors")
    return _M.sqrt(_M.add_n([_M.reduce_sum(_M.square(t)) for t in ts]))


def _safe_l2(t, axes):
    # sqrt'(0) is infinite: take the root only where the sum is positive, so the
    # gradient of a clipped all-zero tensor is finite (TF's formulation)
    l2sum = _M.reduce_sum(_M.square(t), axes, keepdims=True)
    pred = _M.greater(l2sum, 0)
    return _M.where(pred, _M.sqrt(_M.where(pred, l2sum, _A.ones_like(l2sum))), l2sum)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(||t||, clip_norm): unchanged when its L2 norm is within clip_norm."""
    t = _t(t)
    # a negative clip_norm counts as 0 (as TF: every entry becomes 0, not flipped in sign)
    clip = _M.cast(_M.maximum(clip_norm, 0), t.dtype) if isinstance(clip_norm, Tensor) else max(clip_norm, 0)
    return _M.divide(_M.multiply(t, clip), _M.maximum(_safe_l2(t, axes), clip))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scale every tensor by clip_norm / max(global_norm, clip_norm); returns
    (clipped list, global norm). A non-finite global norm makes every entry NaN, as TF."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm: t_list must be a list or tuple of tensors")
    norm = global_norm(t_list) if use_norm is None else _t(use_norm)
    # a Python clip_norm stays a (weak) Python number, so it adopts the norm's dtype
    inv_clip = 1.0 / float(clip_norm) if not isinstance(clip_norm, Tensor) else _M.divide(1.0, clip_norm)
    clip = float(clip_norm) if not isinstance(clip_norm, Tensor) else clip_norm
    scale = _M.multiply(clip, _M.minimum(_M.divide(1.0, norm), inv_clip))
    scale = _M.where(_M.is_finite(norm), scale, _M.multiply(scale, float("nan")))
    out = [None if t is None else _M.multiply(_t(t), _M.cast(scale, _t(t).dtype)) for t in t_list]
    return (type(t_list)(out) if isinstance(t_list, tuple) else out), norm


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):  # noqa: A002
    """Vector norms (ord 'euclidean'/2, 1, inf, any p > 0) and matrix norms
    over a pair of axes ('fro'/'euclidean', 1, inf), as TF's tf.norm."""
    x = _t(tensor)
    rank = len(aval_of(x).shape)
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        a0, a1 = (int(a) % rank for a in axis)
        if ord in ("fro", "euclidean"):
            return _M.sqrt(_M.reduce_sum(_M.square(x), (a0, a1), keepdims))
        if ord == 1:  # max column sum
            return _M.reduce_max(_M.reduce_sum(_M.abs(x), a0, True), (a0, a1), keepdims)
        if ord == np.inf:  # max row sum
            return _M.reduce_max(_M.reduce_sum(_M.abs(x), a1, True), (a0, a1), keepdims)
        raise ValueError(f"norm: matrix norm ord must be 'fro', 'euclidean', 1 or inf, got {ord!r}")
    if axis is not None and not isinstance(axis, (int, np.integer)) and len(axis) != 1:
        raise ValueError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
    if isinstance(axis, (tuple, list)):
        axis = axis[0]
    if ord in ("euclidean", 2, 2.0):
        return _M.sqrt(_M.reduce_sum(_M.square(x), axis, keepdims))
    if ord == "fro":
        raise ValueError("norm: 'fro' is a matrix norm: give axis as a pair of ints")
    if ord == 1:
        return _M.reduce_sum(_M.abs(x), axis, keepdims)
    if ord == np.inf:
        return _M.reduce_max(_M.abs(x), axis, keepdims)
    if isinstance(ord, (int, float)) and ord > 0:
        return _M.pow(_M.reduce_sum(_M.pow(_M.abs(x), float(ord)), axis, keepdims), 1.0 / ord)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', a positive number or inf, got {ord!r}")


# -- wave 18 (branch ops18): normalize, qr, eigh, eigvalsh, cholesky_solve, triangular_solve, lstsq ---------

def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """tf.linalg.normalize: (tensor / norm, norm), the norm kept with its reduced dims (TF's keepdims)."""
    x = _t(tensor)
    if aval_of(x).dtype == np.bool_:   # (TF's TypeError comes before its axis check)
        from .errors import InvalidArgumentTypeError
        raise InvalidArgumentTypeError("normalize: Expected numeric or variant tensor, got dtype bool; cast first: "
                                       "tapeflow.cast(x, tapeflow.float32)")
    nrm = norm(x, ord=ord, axis=axis, keepdims=True)
    return _M.divide(x, nrm), nrm


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """tf.linalg.qr: (q, r), batched; gradients as TF's QrGrad (not for full_matrices with more rows than
    columns, as TF)."""
    from .core.primitive import bind
    return tuple(bind(_D.qr_p, _t(input), full_matrices=bool(full_matrices)))


def eigh(tensor, name=None):
    """tf.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of symmetric matrices, from their
    lower triangle. Eigenvectors are defined up to sign; tapeflow's are LAPACK's (syevd)."""
    from .core.primitive import bind
    return tuple(bind(_D.eigh_p, _t(tensor)))


def eig(tensor, name=None):
    """tf.linalg.eig (tf.eig): (eigenvalues, unit eigenvectors as columns) of general square matrices,
    complex (float32 -> complex64). LAPACK's geev: the eigenvalues are TF's; each eigenvector's
    complex phase is LAPACK's, not TF's (Eigen's), so compare |v| or v v^H, not v."""
    from .core.primitive import bind
    return tuple(bind(_D.eig_p, _t(tensor)))


def eigvals(tensor, name=None):
    """tf.linalg.eigvals (tf.eigvals): the eigenvalues of eig (its gradient: TF's, through V)."""
    return eig(tensor)[0]


def eigvalsh(tensor, name=None):
    """tf.linalg.eigvalsh: the eigenvalues of eigh (its gradient: V diag(g) V^T on the lower triangle)."""
    return eigh(tensor)[0]


def _square(x, rhs=None):
    """x (and rhs, a (..., n, k) operand) with the static shape a square-matrix op implies: an
    input_signature may leave one of the matrix's two sizes None, and the other then gives it
    (checked when the function runs, as TF's shape inference and kernel). Unchanged when known."""
    s = aval_of(x).shape
    if len(s) >= 2 and (s[-1] is None) != (s[-2] is None):
        from .ops.check_ops import ensure_shape
        n = s[-1] if s[-2] is None else s[-2]
        x, s = ensure_shape(x, s[:-2] + (n, n)), s[:-2] + (n, n)
    if rhs is not None and len(s) >= 2 and s[-1] is not None:
        r = aval_of(rhs).shape
        if len(r) >= 2 and r[-2] is None:
            from .ops.check_ops import ensure_shape
            rhs = ensure_shape(rhs, r[:-2] + (s[-1], r[-1]))
    return x if rhs is None else (x, rhs)


def _batched(const, like):
    """``const`` broadcast to ``like``'s shape (an identity per matrix): a NumPy constant when the shape
    is known, else added to zeros of ``like`` (an input_signature's None batch: its size when it runs)."""
    shape = tuple(aval_of(like).shape)
    if None in shape:
        return _M.add(const, _A.zeros_like(like, const.dtype))
    return _A.broadcast_to(const, shape)


def _runtime_size(op, x, dims):
    """TF's refusal text where a matrix's size must be a static number here (a loop over it)."""
    s = aval_of(x).shape
    if any(s[d] is None for d in dims):
        raise ValueError(f"{op}: a matrix size of the input of shape {fmt_shape(s)} is {_A._RUNTIME_SIZE}")


def _check_solve(name, m, rhs):
    """TF's checks of a triangular/Cholesky solve's operands (InvalidArgumentError, as its kernels)."""
    from .core.aval import fmt_shape
    from .errors import InvalidArgumentTypeError
    am, ar = aval_of(m), aval_of(rhs)
    if am.dtype != ar.dtype:
        raise InvalidArgumentTypeError(f"{name}: matrix ({am.dtype.name}) and rhs ({ar.dtype.name}) must have the same "
                                       "dtype; cast one")
    sm, sr = am.shape, ar.shape
    if len(sm) < 2 or len(sr) < 2 or sm[-1] != sm[-2] or sr[-2] != sm[-1]:
        raise InvalidArgumentError(f"{name}: expects a square matrix (..., n, n) and rhs (..., n, k), got matrix "
                                   f"{fmt_shape(sm)} and rhs {fmt_shape(sr)}")


def cholesky_solve(chol, rhs, name=None):
    """tf.linalg.cholesky_solve: x with (L L^T) x = rhs, from the Cholesky factor L: two triangular solves, as
    TF, so L's upper triangle is never read (a general solve read it: other numbers where it was not 0)
    and gets no gradient."""
    chol, rhs = _t(chol), _t(rhs)
    chol, rhs = _square(chol, rhs)
    _check_solve("cholesky_solve", chol, rhs)
    return triangular_solve(chol, triangular_solve(chol, rhs, lower=True), lower=True, adjoint=True)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """tf.linalg.triangular_solve: the other triangle of ``matrix`` is ignored (as TF's kernel), so the
    gradient with respect to ``matrix`` is zero there too."""
    matrix, rhs = _t(matrix), _t(rhs)
    matrix, rhs = _square(matrix, rhs)
    _check_solve("triangular_solve", matrix, rhs)
    m = band_part(matrix, -1, 0) if lower else band_part(matrix, 0, -1)
    if adjoint:   # (the adjoint of a lower triangle is an upper one)
        m, lower = _M.conj(matrix_transpose(m)) if aval_of(m).dtype.kind == "c" else matrix_transpose(m), not lower
    return _D.solve(m, rhs, triangle="lower" if lower else "upper")


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """tf.linalg.lstsq with TF's fast path: the regularised normal equations, (A^T A + l2 I)^-1 A^T b for
    m >= n, A^T (A A^T + l2 I)^-1 b for m < n (``fast=False``, TF's complete orthogonal decomposition,
    gives the same solution for full-rank A). A size an input_signature leaves None: the rhs's rows give
    the matrix's (and back), and where m or n is still unknown a cond chooses when it runs, as TF's."""
    a, b = _t(matrix), _t(rhs)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if len(sa) >= 2 and len(sa) == len(sb):
        # (TF's shape inference: the matrix's and rhs's batch dims and row counts are one; a known one is taken
        # for the other's None, checked when the function runs)
        from .ops.check_ops import ensure_shape
        lead = tuple(x if x is not None else y for x, y in zip(sa[:-1], sb[:-1]))
        if lead != tuple(sa[:-1]):
            a = ensure_shape(a, lead + (sa[-1],))
        if lead != tuple(sb[:-1]):
            b = ensure_shape(b, lead + (sb[-1],))
    m, n = aval_of(a).shape[-2:]
    dt = aval_of(a).dtype
    at = matrix_transpose(a)
    l2 = np.asarray(l2_regularizer, dt)

    def regularized(gram, axis, size):
        if size is not None:
            return _M.add(gram, _M.multiply(l2, np.eye(size, dtype=dt)))
        # a size an input_signature leaves None: l2 added where the run-time positions meet (a where, so the
        # gradient has the gram's shape: an added identity of unknown size broadcast against a batch would
        # need its sum back over unknown dims)
        p = _A._axis_positions(a, axis)
        return _M.where(_M.equal(_A.expand_dims(p, -1), _A.expand_dims(p, 0)), _M.add(gram, l2), gram)

    def over():   # m >= n
        return solve(regularized(matmul(at, a), -1, n), matmul(at, b))

    def under():
        return matmul(at, solve(regularized(matmul(a, at), -2, m), b))
    if m is None or n is None:
        # which normal equations is known when the function runs: TF's tf.cond on n <= m, one branch run
        from .ir.control_flow import cond
        st = _A.shape(a, out_type=np.int64)
        return cond(_M.greater_equal(st[-2], st[-1]), over, under)
    return over() if m >= n else under()


# -- more of tf.linalg, composed ------------------------------------------------------------------------
from .ops.nn_ops import l2_normalize  # noqa: F401,E402  (tf.linalg.l2_normalize is tf.nn's)


def set_diag(input, diagonal, name=None, k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with its main diagonal (of the last two axes) replaced by ``diagonal``."""
    if k != 0:
        raise NotImplementedError("set_diag: only the main diagonal (k=0) is supported")
    x = _t(input)
    s = aval_of(x).shape
    if len(s) >= 2 and None in s[-2:]:
        return _traced_set_diag(x, diagonal)
    mask = np.eye(s[-2], s[-1], dtype=bool)
    eye_mn = np.eye(s[-2], s[-1], dtype=aval_of(x).dtype)
    # the diagonal (..., min(m, n)) spread along the axis it indexes, kept at i == j by the eye
    # (a diagonal given as a list takes the matrix's dtype, as TF converts the op's inputs to one T)
    d = diagonal if isinstance(diagonal, Tensor) else convert_to_tensor(diagonal, aval_of(x).dtype)
    want = tuple(s[:-2]) + (None if None in s[-2:] else min(s[-2:]),)
    ds = tuple(aval_of(d).shape)
    # (a short diagonal was broadcast along the diagonal, silently; batch dimensions may broadcast, which the
    # linear operators' add_to_tensor relies on, where TF's kernel wants them equal)
    if not ds or not _shapes_compatible(ds[-1:], want[-1:]):
        raise InvalidArgumentError(f"set_diag: the diagonal must have shape {fmt_shape(want)} for an input of shape "
                                   f"{fmt_shape(s)}, got {fmt_shape(ds)}")
    full = _M.multiply(_A.expand_dims(d, -2 if s[-1] <= s[-2] else -1), eye_mn)
    return _M.where(mask, full, x)


def _traced_set_diag(x, diagonal):
    """set_diag of a matrix whose size an input_signature leaves None: the diagonal (..., min(m, n)) spread
    over the columns by a where on the run-time positions (column j takes d[j], zero past its end), then
    kept on the run-time diagonal; its length checked against min(m, n) when the function runs."""
    from .core.primitive import bind
    from .core.primitives import assert_op as AS
    s = aval_of(x).shape
    d = diagonal if isinstance(diagonal, Tensor) else convert_to_tensor(diagonal, aval_of(x).dtype)
    ds = tuple(aval_of(d).shape)
    if not ds:
        raise InvalidArgumentError(f"set_diag: the diagonal must have shape {fmt_shape(tuple(s[:-2]) + (None,))} "
                                   f"for an input of shape {fmt_shape(s)}, got {fmt_shape(ds)}")
    m_n = _A.shape(x, out_type=np.int64)
    k = _M.minimum(m_n[-2], m_n[-1])
    dk = _A.shape(d, out_type=np.int64)[-1]
    bind(AS.assert_p, _M.equal(dk, k), dk, k, summarize=1,
         template=(f"set_diag: the diagonal's last dimension must be min(m, n) of the input of shape {fmt_shape(s)}, "
                   "got ", None, " for ", None))
    i, j = _row_col(x)
    # (k, n): diagonal entry p goes to column p
    pick = _M.equal(_A.expand_dims(_A._axis_positions(d, -1), -1), j)
    spread = _M.where(pick, _A.expand_dims(d, -1), np.zeros((), aval_of(d).dtype))
    cols = (_M.reduce_any if aval_of(d).dtype == np.bool_ else _M.reduce_sum)(spread, axis=-2)
    return _M.where(_M.equal(i, j), _A.expand_dims(cols, -2), x)


def tensor_diag(diagonal, name=None):
    """A (d1..dk, d1..dk) tensor with ``diagonal`` (d1..dk) on its diagonal (rank-1: diag)."""
    d = _t(diagonal)
    shape = aval_of(d).shape
    n = int(np.prod(shape))
    return _A.reshape(diag(_A.reshape(d, (n,))), tuple(shape) + tuple(shape))


def tensor_diag_part(input, name=None):  # noqa: A002
    """The diagonal of a (d1..dk, d1..dk) tensor, shaped (d1..dk)."""
    x = _t(input)
    shape = aval_of(x).shape
    k = len(shape) // 2
    if len(shape) % 2 or tuple(shape[:k]) != tuple(shape[k:]):
        raise InvalidArgumentError(f"tensor_diag_part: the input must have shape (d1..dk, d1..dk), got {tuple(shape)}")
    n = int(np.prod(shape[:k]))
    return _A.reshape(diag_part(_A.reshape(x, (n, n))), tuple(shape[:k]))


def slogdet(input, name=None):  # noqa: A002
    """(sign, log |det|) of square matrices, from the determinant's sign and the sum of the
    logs of the singular values (stable for large or small determinants)."""
    x = _t(input)
    s = svd(x, compute_uv=False)
    return _M.sign(det(x)), _M.reduce_sum(_M.log(s), axis=-1)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse through the SVD; singular values below
    rcond * max(s) (default 10 * max(m, n) * eps, as TF) count as zero."""
    x = _t(a)
    m, n = aval_of(x).shape[-2:]
    dt = aval_of(x).dtype
    if rcond is None:
        eps = float(np.finfo(dt).eps)
        # (an input_signature's None size: max(m, n) when the function runs)
        rcond = 10.0 * max(m, n) * eps if None not in (m, n) else \
            _M.multiply(_M.cast(_M.reduce_max(_A.shape(x)[-2:]), dt), np.asarray(10.0 * eps, dt))
    s, u, v = svd(x)
    cutoff = _M.multiply(rcond if isinstance(rcond, Tensor) else float(rcond), _M.reduce_max(s, axis=-1, keepdims=True))
    inv_s = _M.where(_M.greater(s, cutoff), _M.divide(1.0, _M.maximum(s, cutoff)), _A.zeros_like(s))
    return _M.matmul(_M.multiply(v, _A.expand_dims(inv_s, -2)), u, transpose_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` (default max(s) * max(m, n) * eps, as TF)."""
    x = _t(a)
    m, n = aval_of(x).shape[-2:]
    s = svd(x, compute_uv=False)
    if tol is None:
        eps = np.finfo(aval_of(x).dtype).eps
        # (an input_signature's None size: max(m, n) when the function runs)
        f = float(max(m, n) * eps) if None not in (m, n) else \
            _M.multiply(_M.cast(_M.reduce_max(_A.shape(x)[-2:]), aval_of(x).dtype), np.asarray(eps, aval_of(x).dtype))
        tol = _M.multiply(_M.reduce_max(s, axis=-1, keepdims=True), f)
    return _M.reduce_sum(_M.cast(_M.greater(s, tol), np.int32), axis=-1)


def cross(a, b, name=None):
    """The cross product of 3-vectors along the last axis."""
    from .errors import FailedPreconditionError
    a, b = _t(a), _t(b)
    if aval_of(a).dtype == np.bool_ or aval_of(b).dtype == np.bool_:   # (TF checks the dtype first)
        from .errors import InvalidArgumentTypeError
        raise InvalidArgumentTypeError("cross: Value for attr 'T' of bool is not in the list of allowed values (real "
                                       "number types); cast first: tapeflow.cast(x, tapeflow.float32)")
    if not _shapes_compatible(aval_of(a).shape, aval_of(b).shape):   # (TF's kernel: no broadcasting)
        raise InvalidArgumentError(f"cross: Both inputs must be of same shape: {fmt_shape(aval_of(a).shape)} vs. "
                                   f"{fmt_shape(aval_of(b).shape)}")
    if not aval_of(a).shape or not aval_of(b).shape:   # (shape[-1] of a scalar raised an IndexError)
        raise InvalidArgumentError(f"cross: inputs must be at least 1-D (3-vectors along the last axis), got shapes "
                                   f"{tuple(aval_of(a).shape)} and {tuple(aval_of(b).shape)}")
    if aval_of(a).shape[-1] is None or aval_of(b).shape[-1] is None:   # (an input_signature's None: 3 when it runs)
        from .ops.check_ops import ensure_shape
        a, b = (ensure_shape(v, aval_of(v).shape[:-1] + (3,)) if aval_of(v).shape[-1] is None else v for v in (a, b))
    if aval_of(a).shape[-1] != 3 or aval_of(b).shape[-1] != 3:   # (TF 2.21's eager class; traced, ValueError)
        raise FailedPreconditionError(f"cross: Cross-products are only defined for 3-element vectors: the last "
                                      f"dimension of both inputs must be 3, got {tuple(aval_of(a).shape)} and "
                                      f"{tuple(aval_of(b).shape)}")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return _A.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)



# -- tf.linalg.expm: TF 2.21's scaling-and-squaring Pade algorithm (linalg_impl.matrix_exponential) ------

_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0],
}


def _pade(m, order, ident):
    """(U, V) of the order-``order`` Pade approximant, TF's expressions term for term."""
    dt = m.dtype
    b = [_M.cast(c, dt) for c in _PADE[order]]
    m2 = matmul(m, m)
    if order == 3:
        return matmul(m, m2 + b[1] * ident), b[2] * m2 + b[0] * ident
    m4 = matmul(m2, m2)
    if order == 5:
        return (matmul(m, m4 + b[3] * m2 + b[1] * ident), b[4] * m4 + b[2] * m2 + b[0] * ident)
    m6 = matmul(m4, m2)
    if order == 7:
        return (matmul(m, m6 + b[5] * m4 + b[3] * m2 + b[1] * ident),
                b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident)
    if order == 9:
        m8 = matmul(m6, m2)
        return (matmul(m, m8 + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * ident),
                b[8] * m8 + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident)
    tmp_u = matmul(m6, m6 + b[11] * m4 + b[9] * m2) + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * ident
    tmp_v = b[12] * m6 + b[10] * m4 + b[8] * m2
    return matmul(m, tmp_u), matmul(m6, tmp_v) + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident


def expm(input, name=None):  # noqa: A002
    """tf.linalg.expm: the matrix exponential of each (..., n, n) matrix, TF 2.21's algorithm (Higham
    2005 as TF writes it): the Pade order chosen per matrix by its 1-norm (3/5/7 for float32, up to 13
    for float64), the highest order on the matrix scaled by 2^-s, solve(-U + V, U + V), then s
    squarings (per matrix: a ``where`` in a while_loop, so traceable); non-finite norms give NaNs.
    Composed of matmul/solve/where: differentiable as they are."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # every order is evaluated for every matrix (TF's where-selection): the unused high orders of a
        # large matrix overflow, silently in TF
        return _expm(_square(convert_to_tensor(input)))


def _expm(x):
    from .ir.control_flow import while_loop
    dt = x.dtype
    if dt.name not in ("float16", "float32", "float64"):
        raise ValueError(f"tf.linalg.expm does not support matrices of type {dt!r}")
    shape = tuple(x.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:   # (a (2, 1) matrix gave numbers; TF raises)
        raise InvalidArgumentError(f"expm: expects square matrices of shape (..., n, n), got {fmt_shape(shape)}")
    if shape[-2:] == (0, 0):
        return x
    n = shape[-1]
    m = _A.reshape(x, (-1, n, n))
    l1 = _M.reduce_max(_M.reduce_sum(_M.abs(m), axis=1), axis=-1)[:, None, None]

    def const(v):
        return _M.cast(v, l1.dtype)

    def nest_where(vals, cases):
        if len(vals) == 1:
            return _M.where(_M.less(l1, const(vals[0])), cases[0], cases[1])
        return _M.where(_M.less(l1, const(vals[0])), cases[0], nest_where(vals[1:], cases[1:]))
    ident = _batched(np.eye(n, dtype=dt.as_numpy_dtype), m)
    if dt.name in ("float16", "float32"):
        squarings = _M.maximum(_M.floor(_M.log(l1 / const(3.925724783138660)) / _M.log(const(2.0))), const(0.0))
        orders, conds = (3, 5, 7), (4.258730016922831e-001, 1.880152677804762e+000)
    else:
        squarings = _M.maximum(_M.floor(_M.log(l1 / const(5.371920351148152)) / _M.log(const(2.0))), const(0.0))
        orders = (3, 5, 7, 9, 13)
        conds = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001, 2.097847961257068e+000)
    uv = [_pade(m, o, ident) for o in orders[:-1]]
    uv.append(_pade(m / _M.cast(_M.pow(const(2.0), squarings), dt), orders[-1], ident))
    u = nest_where(conds, [p[0] for p in uv])
    v = nest_where(conds, [p[1] for p in uv])
    finite = _M.is_finite(_M.reduce_max(l1))
    result = _M.where(finite, solve(-u + v, u + v), _M.cast(np.nan, dt) * _A.ones_like(m))
    max_sq = _M.where(finite, _M.reduce_max(squarings), const(0.0))

    def body(i, r):
        return i + 1, _M.where(_M.less(i, squarings), matmul(r, r), r)
    _, result = while_loop(lambda i, r: _M.less(i, max_sq), body, [const(0.0), result])
    return _A.reshape(result, tuple(-1 if d is None else d for d in shape))   # (an input_signature's None batch)


# -- tridiagonal matrices (TF 2.21's formats: compact [..., 3, M], sequence (super, main, sub), matrix) ---

def _tri_parts(diagonals, diagonals_format, op):
    """(super, main, sub), each [..., M]: super's last and sub's first entries are ignored, as TF."""
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals)
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if diagonals_format == "sequence":
        sup, main, sub = (convert_to_tensor(t) for t in diagonals)
        return sup, main, sub
    if diagonals_format == "matrix":
        m = convert_to_tensor(diagonals)
        n = tuple(m.shape)[-1]
        up = _M.reduce_sum(m * np.eye(n, k=1, dtype=m.dtype.np), axis=-1)      # row i: m[i, i + 1]
        low = _M.reduce_sum(m * np.eye(n, k=-1, dtype=m.dtype.np), axis=-1)    # row i: m[i, i - 1]
        return up, _A.matrix_diag_part(m) if hasattr(_A, "matrix_diag_part") else \
            _M.reduce_sum(m * np.eye(n, dtype=m.dtype.np), axis=-1), low
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")   # TF 2.21's text


def _rhs(rhs, main, transpose_rhs):
    r = convert_to_tensor(rhs)
    vector = r.shape.rank == main.shape.rank
    if transpose_rhs and not vector:
        r = _M._swap_last(r)
    if vector:
        r = r[..., None]
    return r, vector


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """tf.linalg.tridiagonal_matmul: ``main * x + super * x[i + 1] + sub * x[i - 1]`` per row (elementwise
    with shifts: differentiable and traceable)."""
    sup, main, sub = _tri_parts(diagonals, diagonals_format, "tridiagonal_matmul")
    x, vector = _rhs(rhs, main, False)
    zero = _A.zeros_like(x[..., :1, :])
    nxt = _A.concat([x[..., 1:, :], zero], axis=-2)
    prv = _A.concat([zero, x[..., :-1, :]], axis=-2)
    y = main[..., :, None] * x + sup[..., :, None] * nxt + sub[..., :, None] * prv
    return y[..., 0] if vector else y


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False, conjugate_rhs=False, name=None,
                      partial_pivoting=True, perturb_singular=False):
    """tf.linalg.tridiagonal_solve: the tridiagonal system solved as the dense one it is (``solve`` with
    partial pivoting: TF's values to rounding, and ``solve``'s gradient, which is TF's). ``M`` is small
    in practice; a banded solver would save the O(M^3)."""
    sup, main, sub = _tri_parts(diagonals, diagonals_format, "tridiagonal_solve")
    x, vector = _rhs(rhs, main, transpose_rhs)
    n = tuple(main.shape)[-1]
    if tuple(x.shape)[-2] != n:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be equal, got {n} and "
                         f"{tuple(x.shape)[-2]}")   # TF 2.21's text
    dt = main.dtype.np
    a = (main[..., :, None] * np.eye(n, dtype=dt) + sup[..., :, None] * np.eye(n, k=1, dtype=dt)
         + sub[..., :, None] * np.eye(n, k=-1, dtype=dt))
    y = solve(a, x)
    return y[..., 0] if vector else y


# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
# -- LU with partial pivoting ------------------------------------------------------------------------------

def lu(input, output_idx_type=np.int32, name=None):  # noqa: A002
    """tf.linalg.lu: ``(lower_upper, perm)`` with ``input[..., perm, :] = L @ U`` (L unit lower, stored
    below the diagonal; U on and above it). Partial pivoting as LAPACK's getrf and Eigen's PartialPivLU:
    at step k the row of largest |a| at or below k, the first of equals. Composed of tapeflow ops (one
    masked rank-1 update per column), so it traces and differentiates (TF 2.21 registers no gradient
    for Lu: a LookupError there). A zero pivot is TF's "Input is not invertible." (an assert when traced)."""
    from .core.primitive import bind
    from .core.primitives import assert_op as _AS
    from .errors import InvalidArgumentTypeError
    a = _square(_t(input))
    av = aval_of(a)
    if av.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"lu: Value for attr 'T' of {av.dtype.name} is not in the list of allowed "
                                       "values: double, float, half (TF 2.21's complex ones are out of scope)")
    shape = tuple(av.shape)
    if len(shape) < 2:
        raise InvalidArgumentError(f"lu: Input tensor must have rank >= 2, got {len(shape)}")
    if shape[-1] != shape[-2]:
        raise InvalidArgumentError(f"lu: Input matrix must be square. (got shape {shape})")
    _runtime_size("lu", a, (-1,))   # (unrolled over the columns)
    n, batch = shape[-1], shape[:-2]
    idx = np.arange(n)
    perm = _batched(np.arange(n, dtype=np.int64), a[..., 0]) if None in batch else \
        _A.broadcast_to(np.arange(n, dtype=np.int64), batch + (n,))
    invertible = []
    for k in range(n):
        col = _M.where(idx >= k, _M.abs(a[..., :, k]), -1.0)   # (rows above k never pivot)
        # (a zero pivot, and only that: a NaN pivot is no error, TF's factors carry the NaNs)
        invertible.append(_M.reduce_all(_M.not_equal(_M.reduce_max(col, axis=-1), 0.0)))
        # Eigen's maxCoeff: a NaN wins only as the first candidate (every later comparison with it is false)
        nan = _M.is_nan(col)
        piv = _M.where(_M.reduce_any(_M.logical_and(nan, idx == k), axis=-1), np.int64(k),
                       _M.argmax(_M.where(nan, -1.0, col), axis=-1))
        piv = _A.expand_dims(piv, -1)
        swap = _M.where(idx == k, piv, _M.where(_M.equal(idx, piv), np.int64(k), idx))
        a = _A.gather(a, swap, axis=len(batch), batch_dims=len(batch))
        perm = _A.gather(perm, swap, axis=len(batch), batch_dims=len(batch))
        below = (idx > k)[:, None]
        mult = _M.where(below, a[..., :, k:k + 1] / a[..., k:k + 1, k:k + 1], 0.0)   # (..., n, 1)
        # (the update selected where it applies, not multiplied by a 0/1 mask: 0 * NaN would spread a NaN of
        # the pivot row into the stored multipliers)
        a = _M.where(below & (idx > k)[None, :], a - mult * a[..., k:k + 1, :], a)
        a = _M.where(below & (idx == k)[None, :], mult, a)
    bind(_AS.assert_p, _M.reduce_all(_A.stack(invertible)), template=("lu: Input is not invertible.",),
         summarize=3)
    return a, _M.cast(perm, output_idx_type)


def _lu_factors(lower_upper):
    """(L with its unit diagonal, U) of lu's packed factors."""
    lu_ = _t(lower_upper)
    lower = set_diag(band_part(lu_, -1, 0), _A.ones(tuple(aval_of(lu_).shape[:-1]), aval_of(lu_).dtype))
    return lower, band_part(lu_, 0, -1)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """tf.linalg.lu_reconstruct: ``L @ U`` with its rows put back (the inverse permutation of ``perm``)."""
    lower, upper = _lu_factors(lower_upper)
    p = _t(perm)
    batch = len(aval_of(p).shape) - 1
    return _A.gather(matmul(lower, upper), _A.argsort(p, axis=-1), axis=batch, batch_dims=batch)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """tf.linalg.lu_solve: ``x`` with ``A x = rhs`` for ``A``'s LU factors: rhs's rows permuted, then the
    unit-lower and the upper triangular solves."""
    lower, upper = _lu_factors(lower_upper)
    p, b = _t(perm), _t(rhs)
    batch = len(aval_of(p).shape) - 1
    pb = _A.gather(b, p, axis=batch, batch_dims=batch)
    return triangular_solve(upper, triangular_solve(lower, pb, lower=True), lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """tf.linalg.lu_matrix_inverse: ``lu_solve`` of the identity."""
    av = aval_of(_t(lower_upper))
    eye_ = _batched(np.eye(av.shape[-1], dtype=av.dtype), _t(lower_upper))
    return lu_solve(lower_upper, perm, eye_)


# -- matrix functions: sqrtm, banded_triangular_solve, eigh_tridiagonal (wave 21) ----------------------------

def _check_square_float(op, x, types="double, float, half"):
    """TF's kernel checks (InvalidArgumentError, its texts)."""
    from .errors import InvalidArgumentTypeError
    av = aval_of(x)
    if av.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"{op}: Value for attr 'T' of {av.dtype.name} is not in the list of allowed "
                                       f"values: {types} (TF 2.21's complex ones are out of scope)")
    if len(av.shape) < 2:
        raise InvalidArgumentError(f"{op}: Input tensor 0 must have rank >= 2, got {len(av.shape)}")
    if av.shape[-1] != av.shape[-2]:
        raise InvalidArgumentError(f"{op}: Input matrix must be square. (got shape {tuple(av.shape)})")


_TF_TYPE_NAMES = {"float64": "double", "float32": "float", "float16": "half"}   # (TF's attr texts)


def logm(input, name=None):  # noqa: A002
    """tf.linalg.logm: the principal logarithm of each (..., n, n) complex64/complex128 matrix (TF 2.21
    takes complex matrices only; a real one is its InvalidArgumentError). TF computes it on a complex Schur
    form (Eigen), which NumPy lacks; this is the eigendecomposition A = V diag(w) V^-1, so
    logm(A) = V diag(log w) V^-1 (eig, log, solve, matmul: it traces, and differentiates through eig's
    gradient, where TF 2.21 registers none). Its error is about cond(V) * eps: a matrix whose eigenvectors
    are nearly dependent (defective, e.g. a Jordan block) gives NaNs rather than a silently wrong result
    (cond_1(V) * eps > sqrt(eps), i.e. fewer than half the digits left; TF returns the true logarithm
    there). A singular matrix gives NaNs, as TF's."""
    from .core.aval import fmt_shape
    from .errors import InvalidArgumentTypeError
    a = _t(input)
    av = aval_of(a)
    if av.dtype.kind != "c":   # TF 2.21's text
        raise InvalidArgumentTypeError(f"MatrixLogarithm: Value for attr 'T' of "
                                       f"{_TF_TYPE_NAMES.get(av.dtype.name, av.dtype.name)} is not in "
                                       "the list of allowed values: complex64, complex128 (TF's logm takes complex "
                                       "matrices only: tf.cast(x, tf.complex64))")
    if len(av.shape) < 2:
        raise InvalidArgumentError(f"MatrixLogarithm: Input tensor 0 must have rank >= 2, got {len(av.shape)}")
    if av.shape[-1] != av.shape[-2]:
        raise InvalidArgumentError(f"MatrixLogarithm: Input matrix must be square. (got shape {fmt_shape(av.shape)})")
    shape = tuple(av.shape)
    n = shape[-1]
    if n == 0 or 0 in shape:
        return _A.identity(a)
    with np.errstate(all="ignore"):
        w, v = eig(a)
        eye_ = _batched(np.eye(n, dtype=av.dtype), a)
        vinv = solve(v, eye_)
        out = _M.matmul(v * _A.expand_dims(_M.log(w), -2), vinv)
        norm1 = lambda m: _M.reduce_max(_M.reduce_sum(_M.abs(m), axis=-2), axis=-1)  # noqa: E731
        eps = float(np.finfo(np.float32 if av.dtype == np.complex64 else np.float64).eps)
        cond = norm1(v) * norm1(vinv)
        bad = _M.logical_not(_M.less_equal(cond, 1.0 / np.sqrt(eps)))   # (NaN cond: bad too)
        return _M.where(bad[..., None, None], _M.cast(np.full((), np.nan), av.dtype) * _A.ones_like(out), out)


_SQRTM_ITERATIONS = 12


def sqrtm(input, name=None):  # noqa: A002
    """tf.linalg.sqrtm (tf.linalg.matrix_square_root, tf.matrix_square_root): the principal square root of
    each (..., n, n) matrix. TF 2.21 uses a real Schur decomposition, which tapeflow lacks; this is the
    coupled Denman-Beavers iteration (Higham, Functions of Matrices, 6.3; stable in its coupled form)
    with determinant scaling mu = |det Y det Z|^(-1/2n), composed of solve/det/matmul, so it traces and
    differentiates (the derivative of the converged iterates is the derivative of the root). Measured on
    6x6 matrices: float64 rounding after 5 (condition 1e2), 6 (1e6), 8 (1e12) scaled steps, 5 for a
    non-symmetric one; 12 leave a margin. Like TF, a matrix without a real
    principal root (a negative real eigenvalue, or singular) gives NaNs: the iteration does not converge
    there, and a result whose residual |Y Y - A| exceeds 100 sqrt(eps) |A| is replaced by NaN."""
    a = _square(_t(input))
    _check_square_float("MatrixSquareRoot", a)
    _runtime_size("sqrtm", a, (-1,))
    shape = tuple(aval_of(a).shape)
    n = shape[-1]
    if n == 0 or 0 in shape:
        return _A.identity(a)
    dt = aval_of(a).dtype
    with np.errstate(all="ignore"):
        eye_ = _batched(np.eye(n, dtype=dt), a)
        y, z = a, eye_
        failed = None
        for _ in range(_SQRTM_ITERATIONS):
            # the determinants in float64 (a float32 determinant of a large matrix overflows). A singular
            # iterate (no real root: the iteration meets a singular matrix) would make solve raise: it is
            # swapped for I, and its matrix marked to become NaN, as TF's result for it
            dy, dz = det(_M.cast(y, np.float64)), det(_M.cast(z, np.float64))
            bad = _M.logical_or(_M.logical_or(_M.equal(dy, 0.0), _M.equal(dz, 0.0)),
                                _M.logical_not(_M.is_finite(dy * dz)))
            failed = bad if failed is None else _M.logical_or(failed, bad)
            y = _M.where(failed[..., None, None], eye_, y)
            z = _M.where(failed[..., None, None], eye_, z)
            # determinant scaling: mu = |det Y det Z|^(-1/2n) (1 where it over/underflows)
            mu = _M.pow(_M.abs(dy * dz), -1.0 / (2 * n))
            mu = _M.cast(_M.where(_M.logical_and(_M.is_finite(mu), _M.greater(mu, 0.0)), mu, _A.ones_like(mu)), dt)
            mu = mu[..., None, None]
            yi, zi = inv(y), inv(z)
            y, z = 0.5 * (mu * y + zi / mu), 0.5 * (mu * z + yi / mu)
        resid = _M.reduce_max(_M.abs(matmul(y, y) - a), axis=[-2, -1])
        scale = _M.maximum(_M.reduce_max(_M.abs(a), axis=[-2, -1]), np.asarray(np.finfo(dt).tiny, dt))
        ok = _M.logical_and(_M.less_equal(resid, 100.0 * float(np.sqrt(np.finfo(dt).eps)) * scale),
                            _M.logical_not(failed))
        # A negative real eigenvalue is a 1x1 block of TF's real Schur form whose square root is NaN. The
        # residual test alone missed one that is small: a float32 matrix with eigenvalues 2.9 and -0.009
        # "converged" to a matrix whose square is off by 3e-3 |A|, under float32's tolerance. LAPACK returns
        # a real eigenvalue with an imaginary part of exactly 0
        # A matrix holding a NaN or inf is NaN, as TF's; its eigenvalues are taken of zeros instead (LAPACK's
        # eig raised "Eigen decomposition failed" on it)
        finite = _M.reduce_all(_M.is_finite(a), axis=[-2, -1])
        ev = eigvals(_M.stop_gradient(_M.where(finite[..., None, None], a, _A.zeros_like(a))))
        negative_real = _M.reduce_any(_M.logical_and(_M.equal(_M.imag(ev), 0), _M.less(_M.real(ev), 0)), axis=-1)
        ok = _M.logical_and(_M.logical_and(ok, finite), _M.logical_not(negative_real))
        return _M.where(ok[..., None, None], y, _M.cast(np.nan, dt) * _A.ones_like(y))




def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """tf.linalg.banded_triangular_solve: ``bands`` (..., K, M) holds K diagonals in TF's LEFT_RIGHT layout
    (lower: row k is the k-th subdiagonal, its first k entries padding; upper: row r is superdiagonal K-1-r,
    its last K-1-r entries padding). The triangular matrix is formed (K masked outer products with
    constant shift matrices) and solved by triangular_solve: TF's values to rounding and solve's gradient
    (TF's kernel is O(M K) per column; the dense solve is O(M^3): fine for the moderate M it is used at).
    ``rhs`` must be a (..., M, N) matrix, as TF's kernel requires; the batch dimensions broadcast."""
    from .core.aval import fmt_shape
    from .errors import InvalidArgumentTypeError
    b = _t(bands)
    r = rhs if isinstance(rhs, Tensor) else convert_to_tensor(rhs, aval_of(b).dtype)
    ab, ar = aval_of(b), aval_of(r)
    if ab.dtype.kind != "f":
        raise InvalidArgumentTypeError(f"banded_triangular_solve: Value for attr 'T' of {ab.dtype.name} is not in "
                                       "the list of allowed values: double, float, half")
    if ab.dtype != ar.dtype:
        raise InvalidArgumentTypeError(f"banded_triangular_solve: bands ({ab.dtype.name}) and rhs "
                                       f"({ar.dtype.name}) must have the same dtype; cast one")
    if len(ab.shape) < 2 or len(ar.shape) < 2:
        raise InvalidArgumentError(f"banded_triangular_solve: In[{0 if len(ab.shape) < 2 else 1}] ndims must be >= 2: "
                                   f"bands {fmt_shape(ab.shape)}, rhs {fmt_shape(ar.shape)} (rhs must be a "
                                   "(..., M, N) matrix: add a last axis to a vector)")
    k, m = ab.shape[-2], ab.shape[-1]
    if ar.shape[-2] != m:
        raise InvalidArgumentError(f"banded_triangular_solve: In[0] mismatch In[1] shape: {m} vs. {ar.shape[-2]}: "
                                   f"bands {fmt_shape(ab.shape)}, rhs {fmt_shape(ar.shape)}")
    dt = ab.dtype
    dense = None
    for row in range(min(k, m)):
        offset = -row if lower else (k - 1 - row)
        term = b[..., row, :][..., :, None] * np.eye(m, k=offset, dtype=dt)   # A[i, i + offset] = bands[row, i]
        dense = term if dense is None else dense + term
    batch = tuple(np.broadcast_shapes(tuple(ab.shape[:-2]), tuple(ar.shape[:-2])))
    dense = _A.broadcast_to(dense, batch + (m, m))
    r = _A.broadcast_to(r, batch + tuple(ar.shape[-2:]))
    return triangular_solve(dense, r, lower=lower, adjoint=adjoint)


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None, name=None):
    """tf.linalg.eigh_tridiagonal: the eigenvalues (ascending; with ``eigvals_only=False`` also the
    eigenvectors, as columns) of the symmetric tridiagonal matrix with diagonal ``alpha`` (n,) and off-
    diagonal ``beta`` (n-1,). TF 2.21 bisects (and inverse-iterates for vectors); tapeflow forms the
    matrix and calls eigh: the same values to rounding, eigenvectors up to sign, and the true gradient
    (TF's differentiates through its bisection: not the eigenvalues' derivative). ``select``: 'a' all,
    'i' the indices select_range[0]..select_range[1] (inclusive), 'v' the eigenvalues in
    (select_range[0], select_range[1]] (a value-dependent length: eager, or traced with an unknown
    dimension, as boolean_mask). ``tol`` is bisection's and unused."""
    if select not in ("a", "i", "v"):
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")   # TF 2.21's text
    a, b = _t(alpha), _t(beta)
    if aval_of(a).dtype.kind != "f":
        raise ValueError(f"data type {aval_of(a).dtype.type} not inexact")   # TF 2.21's (NumPy's finfo) text
    if aval_of(b).dtype != aval_of(a).dtype:
        b = _M.cast(b, aval_of(a).dtype)
    n = aval_of(a).shape[-1] if len(aval_of(a).shape) else None
    if len(aval_of(a).shape) != 1 or len(aval_of(b).shape) != 1 or aval_of(b).shape[0] != max(n - 1, 0):
        raise InvalidArgumentError(f"eigh_tridiagonal: expects alpha of shape (n,) and beta of shape (n - 1,), got "
                                   f"{tuple(aval_of(a).shape)} and {tuple(aval_of(b).shape)}")
    if n == 0:
        e = _A.zeros((0,), aval_of(a).dtype)
        return e if eigvals_only else (e, _A.zeros((0, 0), aval_of(a).dtype))
    dt = aval_of(a).dtype
    m = _M.multiply(_A.expand_dims(a, -1), np.eye(n, dtype=dt))
    if n > 1:
        off = _A.concat([b, _A.zeros((1,), dt)], axis=0)
        # M[i, i + 1] = beta[i] (off scales rows), M[i + 1, i] = beta[i] (off scales columns)
        m = m + _A.expand_dims(off, -1) * np.eye(n, k=1, dtype=dt) + _A.expand_dims(off, 0) * np.eye(n, k=-1, dtype=dt)
    w, v = eigh(m)
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    elif select == "v":
        lo, hi = select_range
        keep = _M.logical_and(_M.greater(w, _M.cast(lo, dt)), _M.less_equal(w, _M.cast(hi, dt)))
        w = _A.boolean_mask(w, keep)
        v = _A.boolean_mask(v, keep, axis=1)
    return w if eigvals_only else (w, v)


# -- tf.linalg.LinearOperator and its subclasses (tapeflow/linear_operator.py) ------------------------------
from .linear_operator import (LinearOperator, LinearOperatorFullMatrix, LinearOperatorDiag,  # noqa: E402,F401
                              LinearOperatorIdentity, LinearOperatorScaledIdentity, LinearOperatorLowerTriangular,
                              LinearOperatorComposition, LinearOperatorInversion, LinearOperatorAdjoint,
                              LinearOperatorBlockDiag, LinearOperatorKronecker, LinearOperatorLowRankUpdate,
                              LinearOperatorZeros, LinearOperatorPermutation, LinearOperatorHouseholder,
                              LinearOperatorToeplitz, LinearOperatorTridiag, LinearOperatorBlockLowerTriangular,
                              LinearOperatorCirculant, LinearOperatorCirculant2D, LinearOperatorCirculant3D)


# -- tf.linalg.experimental.conjugate_gradient (TF 2.21's linalg/sparse/conjugate_gradient.py) -----------------
import collections as _collections  # noqa: E402
import types as _types  # noqa: E402

_CGState = _collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol=1e-5, max_iter=20, name="conjugate_gradient"):
    """tf.linalg.experimental.conjugate_gradient: (preconditioned) conjugate gradients for a self-adjoint
    positive definite LinearOperator, TF's loop step for step (a while_loop: traceable; it stops when
    ||r|| <= tol ||rhs|| for every batch member, or after max_iter steps). Returns TF's CGState
    (i, x, r, p, gamma)."""
    from .ir.control_flow import while_loop
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator.")   # TF 2.21's text
    rhs = _t(rhs)
    batch = tuple(np.broadcast_shapes(tuple(aval_of(rhs).shape[:-1]), tuple(operator.batch_shape),
                                      tuple(preconditioner.batch_shape) if preconditioner is not None else ()))
    r0 = _A.broadcast_to(rhs, batch + tuple(aval_of(rhs).shape[-1:]))
    tol = _M.multiply(_M.cast(tol, aval_of(rhs).dtype), norm(r0, axis=-1))

    def dot(a, b):
        return _M.reduce_sum(a * b, axis=-1)
    if x is None:
        x = _A.zeros_like(r0)
    else:
        x = _t(x)
        r0 = rhs - operator.matvec(x)
    p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
    gamma0 = dot(r0, p0)

    def cond(i, x, r, p, gamma):
        return _M.logical_and(_M.less(i, max_iter), _M.reduce_any(_M.greater(norm(r, axis=-1), tol)))

    def body(i, x, r, p, gamma):
        z = operator.matvec(p)
        alpha = gamma / dot(p, z)
        x = x + alpha[..., None] * p
        r = r - alpha[..., None] * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        new_gamma = dot(r, q)
        p = q + (new_gamma / gamma)[..., None] * p
        return i + 1, x, r, p, new_gamma
    out = while_loop(cond, body, [convert_to_tensor(np.int32(0)), x, r0, p0, gamma0])
    return _CGState(*out)


experimental = _types.SimpleNamespace(conjugate_gradient=conjugate_gradient)   # tf.linalg.experimental

from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("linalg", "tapeflow.linalg")
