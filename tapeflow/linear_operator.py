"""tf.linalg.LinearOperator and its subclasses (TF 2.21's ``linear_operator*.py``), composed of tapeflow ops.

A LinearOperator is a ``tapeflow.Module`` (as in TF, so the Variables it holds are tracked and checkpointed)
that represents a [batch] matrix by its structure and uses the structure in every method, as TF does:
``LinearOperatorDiag.solve`` divides, ``LinearOperatorKronecker.log_abs_determinant`` sums the factors'
log-determinants scaled by the other factors' sizes, ``LinearOperatorLowRankUpdate`` solves by Woodbury and
takes determinants by the matrix determinant lemma. Every method composes existing ops (matmul, solve,
cholesky, gather, ...), so each is differentiable and traces into ``tapeflow.function`` (an operator used
inside a function is a Python object: its tensors are captured, its Variables read).

Differences from TF 2.21 (docs/differences.md): real dtypes only, except the circulant operators (wave 22:
complex64/128 by default, as TF's; the others' ``adjoint`` is the transpose); ``LinearOperatorToeplitz``
multiplies by its dense matrix (TF embeds it in a circulant and uses FFTs: the same values to rounding);
operators are not CompositeTensors (they cannot be a ``tf.function`` signature's TensorSpec-typed argument
nor go through ``tf.nest`` as tensors: pass them as Python objects).

Hints (``is_non_singular`` ...) follow TF's rules: the same implications, the same ValueErrors for
contradictory hints, the same NotImplementedError/ValueError for methods a hint rules out. Shape errors
at the Python level are TF's ValueError "Dimensions a and b are not compatible"; wrong dtypes TF's
TypeError.
"""
from __future__ import annotations

import numpy as np

from .core.dtypes import as_dtype
from .core.tensor import Tensor, Variable, TensorShape, convert_to_tensor
from .module import Module
from .ops import array_ops as _A
from .ops import math_ops as _M
from .ops import check_ops as _C
from .errors import InvalidArgumentError

__all__ = ["LinearOperator", "LinearOperatorFullMatrix", "LinearOperatorDiag", "LinearOperatorIdentity",
           "LinearOperatorScaledIdentity", "LinearOperatorLowerTriangular", "LinearOperatorComposition",
           "LinearOperatorInversion", "LinearOperatorAdjoint", "LinearOperatorBlockDiag",
           "LinearOperatorKronecker", "LinearOperatorLowRankUpdate", "LinearOperatorZeros",
           "LinearOperatorPermutation", "LinearOperatorHouseholder", "LinearOperatorToeplitz",
           "LinearOperatorTridiag", "LinearOperatorBlockLowerTriangular"]

_FLOATS = ("float16", "float32", "float64")
_ALLOWED = "[tf.float16, tf.float32, tf.float64, tf.complex64, tf.complex128]"   # TF 2.21's text


# -- helpers -----------------------------------------------------------------------------------------------

def _read(x):
    """The value of a stored parameter: a Variable is read here (so the tape sees the read), a Tensor is
    itself."""
    return convert_to_tensor(x) if isinstance(x, Variable) else x


def _param(x, name):
    """A constructor argument: a Variable is kept (the Module tracks it), anything else becomes a Tensor."""
    return x if isinstance(x, Variable) else convert_to_tensor(x)


def _check_float(t, name):
    dt = as_dtype(t.dtype)
    if dt.name not in _FLOATS:
        raise TypeError(f"Argument `{name}` must have dtype in {_ALLOWED}. Received: {dt}.")


def _vector_param(x, name):
    """The defining vector of Diag and Householder (``diag``, ``reflection_axis``): rank >= 1, then a
    float dtype, checked first, as TF's constructors check it (before the hints)."""
    t = _param(x, name)
    if len(t.shape) < 1:
        raise ValueError(f"Argument {name} must have at least 1 dimension.  Found: {_read(t)!r}")
    _check_float(t, name)
    return t


def _square_shape(v):
    """The shape of the (..., n, n) operator a (..., n) vector defines."""
    s = tuple(v.shape)
    return s + (s[-1],)


def _tr(x):
    return _M._swap_last(x)


def _batch(shape):
    return tuple(shape[:-2])


def _bcast(*shapes):
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _broadcast_batch(x, batch):
    """``x`` (..., m, n) with its batch dimensions broadcast against ``batch``."""
    s = tuple(x.shape)
    full = _bcast(s[:-2], batch) + s[-2:]
    return x if full == s else _A.broadcast_to(x, full)


def _solve_bcast(matrix, rhs, adjoint=False):
    """linalg.solve with the batch dimensions of ``matrix`` and ``rhs`` broadcast (TF's
    matrix_solve_with_broadcast)."""
    from . import linalg as _L
    b = _bcast(_batch(matrix.shape), _batch(rhs.shape))
    return _L.solve(_broadcast_batch(matrix, b), _broadcast_batch(rhs, b), adjoint=adjoint)


def _compatible(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions {a} and {b} are not compatible")   # TF 2.21's TensorShape text


def _split(x, sizes, axis):
    out, start = [], 0
    for s in sizes:
        out.append(x[..., start:start + s, :] if axis == -2 else x[..., start:start + s])
        start += s
    return out


def _eye(n, batch, dtype):
    return _A.eye(n, batch_shape=list(batch) if batch else None, dtype=dtype)


# -- the base class ----------------------------------------------------------------------------------------

class LinearOperator(Module):
    """TF's abstract base: a subclass defines ``_shape()`` (a tuple) and ``_matmul(x, adjoint, adjoint_arg)``,
    and overrides the defaults (dense, O(N^3)) where its structure allows better."""

    # the parameters that are [batch] tensors, with the number of their trailing non-batch dimensions
    # (TF's _experimental_parameter_ndims_to_matrix_ndims): __getitem__ slices their batch dimensions
    _param_ndims: dict = {}

    def __init__(self, dtype, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None, parameters=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        super().__init__(name=name or type(self).__name__)
        self._dtype = as_dtype(dtype) if dtype is not None else None
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._parameters = dict(parameters or {})

    # -- properties --------------------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self):
        return dict(self._parameters)

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        auto = self.domain_dimension == self.range_dimension
        if self._is_square_set_or_implied_by_hints is False and auto:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        if self._is_square_set_or_implied_by_hints is None:
            return auto
        return self._is_square_set_or_implied_by_hints

    @property
    def shape(self):
        return TensorShape(self._shape())

    @property
    def batch_shape(self):
        return TensorShape(self._shape()[:-2])

    @property
    def tensor_rank(self):
        return len(self._shape())

    @property
    def domain_dimension(self):
        return self._shape()[-1]

    @property
    def range_dimension(self):
        return self._shape()[-2]

    def shape_tensor(self, name="shape_tensor"):
        return convert_to_tensor(np.asarray(self._shape(), np.int32))

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return convert_to_tensor(np.asarray(self._shape()[:-2], np.int32))

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        return convert_to_tensor(np.int32(self.tensor_rank))

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        return convert_to_tensor(np.int32(self.domain_dimension))

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        return convert_to_tensor(np.int32(self.range_dimension))

    def __repr__(self):
        return (f"<tf.linalg.{type(self).__name__} '{self.name}' shape={tuple(self._shape())} "
                f"dtype={self.dtype.name}>")

    def _shape(self):
        raise NotImplementedError("_shape is not implemented.")

    # -- checks ------------------------------------------------------------------------------------------
    def _check_input_dtype(self, arg):
        if as_dtype(arg.dtype) != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype}.  Found: {as_dtype(arg.dtype)} in "
                            f"tensor {arg!r}")

    def _input(self, x):
        x = convert_to_tensor(x)   # no dtype hint, as TF: a float64 array for a float32 operator is a TypeError
        self._check_input_dtype(x)
        return x

    def _can_use_cholesky(self):
        return bool(self.is_self_adjoint and self.is_positive_definite)

    # -- matmul / matvec ---------------------------------------------------------------------------------
    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        raise NotImplementedError("_matmul is not implemented.")

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if (right.range_dimension is not None and left.domain_dimension is not None
                    and right.range_dimension != left.domain_dimension):
                raise ValueError(f"Operators are incompatible. Expected `x` to have dimension "
                                 f"{left.domain_dimension} but got {right.range_dimension}.")
            return left._linop_matmul(left, right)
        x = self._input(x)
        if len(x.shape) < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {len(x.shape)}")
        _compatible(self._shape()[-2 if adjoint else -1], tuple(x.shape)[-1 if adjoint_arg else -2])
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def __matmul__(self, other):
        return self.matmul(other)

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorIdentity):
            return left
        if isinstance(right, LinearOperatorZeros):
            if not right.is_square or not left.is_square:
                raise ValueError("Matmul with non-square `LinearOperator`s or non-square `LinearOperatorZeros` "
                                 "not supported at this time.")
            return right
        return LinearOperatorComposition([left, right], **_combined_hints(left, right))

    def _matvec(self, x, adjoint=False):
        return _A.squeeze(self.matmul(_A.expand_dims(x, -1), adjoint=adjoint), -1)

    def matvec(self, x, adjoint=False, name="matvec"):
        x = self._input(x)
        _compatible(self._shape()[-2 if adjoint else -1], tuple(x.shape)[-1])
        return self._matvec(x, adjoint=adjoint)

    # -- determinants ------------------------------------------------------------------------------------
    def _check_square(self):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is expected to not be "
                                      "square.")

    def _determinant(self):
        from . import linalg as _L
        if self._can_use_cholesky():
            return _M.exp(self.log_abs_determinant())
        return _L.det(self.to_dense())

    def determinant(self, name="det"):
        self._check_square()
        return self._determinant()

    def _log_abs_determinant(self):
        from . import linalg as _L
        if self._can_use_cholesky():
            d = _L.diag_part(_L.cholesky(self.to_dense()))
            return 2 * _M.reduce_sum(_M.log(d), axis=-1)
        return _L.slogdet(self.to_dense())[1]

    def log_abs_determinant(self, name="log_abs_det"):
        self._check_square()
        return self._log_abs_determinant()

    # -- solve / solvevec --------------------------------------------------------------------------------
    def _dense_solve(self, rhs, adjoint=False, adjoint_arg=False):
        from . import linalg as _L
        rhs = _tr(rhs) if adjoint_arg else rhs
        if self._can_use_cholesky():
            dense = self.to_dense()
            b = _bcast(_batch(dense.shape), _batch(rhs.shape))
            return _L.cholesky_solve(_L.cholesky(_broadcast_batch(dense, b)), _broadcast_batch(rhs, b))
        return _solve_bcast(self.to_dense(), rhs, adjoint=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _check_solvable(self):
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is expected to not be "
                                      "square.")

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            if (right.range_dimension is not None and left.domain_dimension is not None
                    and right.range_dimension != left.domain_dimension):
                raise ValueError(f"Operators are incompatible. Expected `rhs` to have dimension "
                                 f"{left.domain_dimension} but got {right.range_dimension}.")
            return left._linop_solve(left, right)
        rhs = self._input(rhs)
        if len(rhs.shape) < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {len(rhs.shape)}")
        _compatible(self._shape()[-1 if adjoint else -2], tuple(rhs.shape)[-1 if adjoint_arg else -2])
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_solve(self, left, right):
        if isinstance(right, LinearOperatorIdentity):
            return left.inverse()
        return LinearOperatorComposition([LinearOperatorInversion(left), right], **_combined_hints(left, right))

    def _solvevec(self, rhs, adjoint=False):
        return _A.squeeze(self.solve(_A.expand_dims(rhs, -1), adjoint=adjoint), -1)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        rhs = self._input(rhs)
        _compatible(self._shape()[-1 if adjoint else -2], tuple(rhs.shape)[-1])
        return self._solvevec(rhs, adjoint=adjoint)

    # -- derived operators -------------------------------------------------------------------------------
    def adjoint(self, name="adjoint"):
        if self.is_self_adjoint is True:
            return self
        return self._linop_adjoint()

    H = property(adjoint, None)

    def _linop_adjoint(self):
        return LinearOperatorAdjoint(self, is_non_singular=self.is_non_singular, is_self_adjoint=self.is_self_adjoint,
                                     is_positive_definite=self.is_positive_definite, is_square=self.is_square)

    def inverse(self, name="inverse"):
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular matrix.")
        return self._linop_inverse()

    def _linop_inverse(self):
        return LinearOperatorInversion(self, is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite, is_square=self.is_square)

    def cholesky(self, name="cholesky"):
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive definite self adjoint matrix.")
        return self._linop_cholesky()

    def _linop_cholesky(self):
        from . import linalg as _L
        return LinearOperatorLowerTriangular(_L.cholesky(self.to_dense()), is_non_singular=True,
                                             is_self_adjoint=False, is_square=True)

    # -- dense views -------------------------------------------------------------------------------------
    def _to_dense(self):
        return self.matmul(_eye(self.domain_dimension, _batch(self._shape()), self.dtype))

    def to_dense(self, name="to_dense"):
        return self._to_dense()

    def _diag_part(self):
        from . import linalg as _L
        return _L.diag_part(self.to_dense())

    def diag_part(self, name="diag_part"):
        return self._diag_part()

    def _trace(self):
        return _M.reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name="trace"):
        return self._trace()

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def add_to_tensor(self, x, name="add_to_tensor"):
        return self._add_to_tensor(self._input(x))

    def _eigvals(self):
        from . import linalg as _L
        return _L.eigvalsh(self.to_dense())

    def eigvals(self, name="eigvals"):
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _cond(self):
        from . import linalg as _L
        if not self.is_self_adjoint:
            vals = _L.svd(self.to_dense(), compute_uv=False)
        else:
            vals = _M.abs(self._eigvals())
        return _M.reduce_max(vals, axis=-1) / _M.reduce_min(vals, axis=-1)

    def cond(self, name="cond"):
        return self._cond()

    # -- assertions (InvalidArgumentError when they fail, eagerly or when the traced function runs) ---------
    def _max_condition_number_to_be_non_singular(self):
        eps = float(np.finfo(self.dtype.np).eps)
        return 1.0 / (max(100.0, float(self.range_dimension), float(self.domain_dimension)) * eps)

    def _assert_non_singular(self):
        from . import linalg as _L
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        s = _L.svd(self.to_dense(), compute_uv=False)
        cond = _M.reduce_max(s, axis=-1) / _M.reduce_min(s, axis=-1)
        return _C.assert_less(cond, _M.cast(self._max_condition_number_to_be_non_singular(), self.dtype),
                              message="Singular matrix up to precision epsilon.")

    def assert_non_singular(self, name="assert_non_singular"):
        return self._assert_non_singular()

    def _assert_positive_definite(self):
        from . import linalg as _L
        if self.is_self_adjoint:
            return _C.assert_positive(_L.diag_part(_L.cholesky(self.to_dense())),
                                      message="Matrix was not positive definite.")
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_positive_definite(self, name="assert_positive_definite"):
        return self._assert_positive_definite()

    def _assert_self_adjoint(self):
        dense = self.to_dense()
        return _C.assert_equal(dense, _tr(dense), message="Matrix was not equal to its adjoint.")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        return self._assert_self_adjoint()

    # -- batch slicing -----------------------------------------------------------------------------------
    def __getitem__(self, slices):
        """Slice the batch dimensions (TF's ``operator[i]``): each [batch] parameter is broadcast to the
        operator's batch shape and sliced; the matrix dimensions are never sliced."""
        key = slices if isinstance(slices, tuple) else (slices,)
        batch = tuple(self.batch_shape)
        if sum(k is not Ellipsis and k is not None for k in key) > len(batch):
            # (TF 2.21: an InvalidArgumentError from the strided slice of a parameter)
            raise InvalidArgumentError(f"Too many indices for the batch shape {batch} of {type(self).__name__}: "
                                       f"{slices!r}; only the batch dimensions of an operator can be sliced")
        return self._batch_slice(key, batch)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        for pname, nd in self._param_ndims.items():
            v = params.get(pname)
            if v is None:
                continue
            t = _read(v) if isinstance(v, Tensor) else convert_to_tensor(v)
            ev = tuple(t.shape)[len(t.shape) - nd:] if nd else ()
            t = _A.broadcast_to(t, batch + ev)
            params[pname] = t[key + (Ellipsis,) * (nd > 0)] if nd else t[key]
        return type(self)(**params)


def _combined_hints(left, right):
    """TF's property_hint_util for a product of two operators."""
    if left.is_square and right.is_square:
        ns = True if (left.is_non_singular and right.is_non_singular) else (
            False if (left.is_non_singular is False or right.is_non_singular is False) else None)
        return dict(is_non_singular=ns, is_square=True)
    if left.is_square is False or right.is_square is False:
        return dict(is_non_singular=False, is_self_adjoint=False, is_positive_definite=False, is_square=None)
    return {}


# -- full and triangular matrices --------------------------------------------------------------------------

class LinearOperatorFullMatrix(LinearOperator):
    """A [batch] matrix ``matrix`` (..., M, N) as an operator (every method is the dense algorithm)."""
    _param_ndims = {"matrix": 2}

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorFullMatrix"):
        parameters = dict(matrix=matrix, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        m = _param(matrix, "matrix")
        _check_float(m, "matrix")
        if len(m.shape) < 2:
            raise ValueError(f"Argument `matrix` must have at least 2 dimensions. Received: {_read(m)!r}.")
        super().__init__(m.dtype, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters)
        self._matrix = m

    def _shape(self):
        return tuple(self._matrix.shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _M.matmul(_read(self._matrix), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _to_dense(self):
        return _A.identity(_read(self._matrix))


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of ``tril`` (the rest ignored, as TF): solves are triangular, the determinant is
    the product of the diagonal."""
    _param_ndims = {"tril": 2}

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        parameters = dict(tril=tril, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        t = _param(tril, "tril")
        _check_float(t, "tril")
        if len(t.shape) < 2:
            raise ValueError(f"Argument tril must have at least 2 dimensions.  Found: {_read(t)!r}")
        super().__init__(t.dtype, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters)
        self._tril = t

    def _shape(self):
        return tuple(self._tril.shape)

    def _get_tril(self):
        from . import linalg as _L
        return _L.band_part(_read(self._tril), -1, 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _M.matmul(self._get_tril(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _diag_part(self):
        from . import linalg as _L
        return _L.diag_part(_read(self._tril))

    def _determinant(self):
        return _M.reduce_prod(self._diag_part(), axis=-1)

    def _log_abs_determinant(self):
        return _M.reduce_sum(_M.log(_M.abs(self._diag_part())), axis=-1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from . import linalg as _L
        rhs = _tr(rhs) if adjoint_arg else rhs
        tril = self._get_tril()
        b = _bcast(_batch(tril.shape), _batch(rhs.shape))
        return _L.triangular_solve(_broadcast_batch(tril, b), _broadcast_batch(rhs, b), lower=True, adjoint=adjoint)

    def _to_dense(self):
        return self._get_tril()

    def _eigvals(self):
        return self._diag_part()

    def _assert_non_singular(self):
        return _C.assert_less(_A.zeros_like(self._diag_part()), _M.abs(self._diag_part()),
                              message="Singular operator:  Diagonal contained zero values.")


# -- diagonal and scaled identity --------------------------------------------------------------------------

class LinearOperatorDiag(LinearOperator):
    """``diag(d)``: matmul scales rows, solve divides, the determinant is the product of ``d``."""
    _param_ndims = {"diag": 1}

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorDiag"):
        parameters = dict(diag=diag, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        d = _vector_param(diag, "diag")
        if is_self_adjoint is False:   # real dtypes only (complex ones are out of scope)
            raise ValueError("A real diagonal operator is always self adjoint.")
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(d.dtype, is_non_singular, True, is_positive_definite, True, name, parameters)
        self._diag = d

    @property
    def diag(self):
        return _read(self._diag)

    def _shape(self):
        return _square_shape(self._diag)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        return _A.expand_dims(self.diag, -1) * x

    def _matvec(self, x, adjoint=False):
        return self.diag * x

    def _determinant(self):
        return _M.reduce_prod(self.diag, axis=-1)

    def _log_abs_determinant(self):
        return _M.reduce_sum(_M.log(_M.abs(self.diag)), axis=-1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _tr(rhs) if adjoint_arg else rhs
        return rhs / _A.expand_dims(self.diag, -1)

    def _solvevec(self, rhs, adjoint=False):
        return rhs / self.diag

    def _to_dense(self):
        from . import linalg as _L
        return _L.diag(self.diag)

    def _diag_part(self):
        return _A.identity(self.diag)

    def _add_to_tensor(self, x):
        from . import linalg as _L
        return _L.set_diag(x, _L.diag_part(x) + self.diag)

    def _eigvals(self):
        return _A.identity(self.diag)

    def _cond(self):
        a = _M.abs(self.diag)
        return _M.reduce_max(a, axis=-1) / _M.reduce_min(a, axis=-1)

    def _assert_non_singular(self):
        return _C.assert_less(_A.zeros_like(self.diag), _M.abs(self.diag),
                              message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        return _C.assert_positive(self.diag, message="Real diagonal operator had non-positive diagonal entries, "
                                                     "thus was not positive definite.")

    def _assert_self_adjoint(self):
        return None   # a real diagonal is self-adjoint (TF checks the imaginary part of complex ones)

    def _linop_inverse(self):
        return LinearOperatorDiag(1.0 / self.diag, is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint, is_positive_definite=self.is_positive_definite,
                                  is_square=True)

    def _linop_cholesky(self):
        return LinearOperatorDiag(_M.sqrt(self.diag), is_non_singular=True, is_self_adjoint=True,
                                  is_positive_definite=True, is_square=True)

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(left.diag * right.diag,
                                      is_non_singular=_combined_hints(left, right).get("is_non_singular"),
                                      is_square=True)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorDiag(left.diag * _A.expand_dims(right.multiplier, -1), is_square=True)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(right.diag / left.diag, is_square=True)
        return super()._linop_solve(left, right)


def _check_num_rows(v, what="num_rows"):
    if isinstance(v, (Tensor, np.ndarray)):
        a = np.asarray(v.numpy() if isinstance(v, Tensor) else v)
        if a.dtype.kind not in "iu":
            raise TypeError(f"Argument {what} must be integer type.  Found: {v}")
        if a.ndim != 0:
            raise ValueError(f"Argument {what} must be a 0-D Tensor.  Found: {a}")
        v = int(a)
    if isinstance(v, (bool, float)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"Argument {what} must be integer type.  Found: {v}")
    if v < 0:
        raise ValueError(f"Argument {what} must be non-negative.  Found: {v}")
    return int(v)


def _check_batch_shape(batch_shape):
    if batch_shape is None:
        return ()
    a = np.asarray(batch_shape.numpy() if isinstance(batch_shape, Tensor) else batch_shape)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"Argument batch_shape must be integer type.  Found: {batch_shape}")
    if a.ndim != 1:
        raise ValueError(f"Argument batch_shape must be a 1-D Tensor.  Found: {a}")
    if (a < 0).any():
        raise ValueError(f"Argument batch_shape must be non-negative.  Found:{a}")
    return tuple(int(v) for v in a)


class LinearOperatorIdentity(LinearOperator):
    """The [batch] identity: matmul and solve return their argument (broadcast to the batch shape)."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True, is_self_adjoint=True,
                 is_positive_definite=True, is_square=True, assert_proper_shapes=False, name="LinearOperatorIdentity"):
        parameters = dict(num_rows=num_rows, batch_shape=batch_shape, dtype=dtype, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, assert_proper_shapes=assert_proper_shapes, name=name)
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        super().__init__(dtype or "float32", True, True, True, True, name, parameters)
        self._num_rows = _check_num_rows(num_rows)
        self._batch_shape_arg = _check_batch_shape(batch_shape)

    def _shape(self):
        return self._batch_shape_arg + (self._num_rows, self._num_rows)

    def _ones(self):
        return _A.ones(self._batch_shape_arg, self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        return _broadcast_batch(_A.identity(x), self._batch_shape_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        s = tuple(x.shape)
        return _A.broadcast_to(x, _bcast(s[:-1], self._batch_shape_arg) + s[-1:])

    def _solvevec(self, rhs, adjoint=False):
        return self._matvec(rhs)

    def _determinant(self):
        return self._ones()

    def _log_abs_determinant(self):
        return _A.zeros(self._batch_shape_arg, self.dtype)

    def _trace(self):
        return self._ones() * _M.cast(self._num_rows, self.dtype)

    def _diag_part(self):
        return _A.ones(self._batch_shape_arg + (self._num_rows,), self.dtype)

    def _to_dense(self):
        return _eye(self._num_rows, self._batch_shape_arg, self.dtype)

    def _add_to_tensor(self, x):
        from . import linalg as _L
        return _L.set_diag(x, _L.diag_part(x) + 1)   # x's shape (TF: the batch shape is not broadcast in)

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return self._ones()

    def _assert_non_singular(self):
        return None

    def _assert_positive_definite(self):
        return None

    def _assert_self_adjoint(self):
        return None

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return self

    def _linop_cholesky(self):
        return self

    def _linop_matmul(self, left, right):
        return right if isinstance(left, LinearOperatorIdentity) else super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        return right if isinstance(left, LinearOperatorIdentity) else super()._linop_solve(left, right)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["batch_shape"] = np.empty(batch, np.int8)[key].shape
        return type(self)(**params)


class LinearOperatorScaledIdentity(LinearOperator):
    """``multiplier * I`` ([batch] multiplier): matmul scales, solve divides, det is multiplier^N."""
    _param_ndims = {"multiplier": 0}

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorScaledIdentity"):
        parameters = dict(num_rows=num_rows, multiplier=multiplier, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, assert_proper_shapes=assert_proper_shapes, name=name)
        m = _param(multiplier, "multiplier")
        _check_float(m, "multiplier")
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        if is_self_adjoint is None:
            is_self_adjoint = True   # a real multiplier (TF: when the dtype is not complex)
        super().__init__(m.dtype, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters)
        self._num_rows = _check_num_rows(num_rows)
        self._multiplier = m

    @property
    def multiplier(self):
        return _read(self._multiplier)

    def _shape(self):
        return tuple(self._multiplier.shape) + (self._num_rows, self._num_rows)

    def _mat(self):
        return self.multiplier[..., None, None]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        return x * self._mat()

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _tr(rhs) if adjoint_arg else rhs
        return rhs / self._mat()

    def _matvec(self, x, adjoint=False):
        return x * self.multiplier[..., None]

    def _solvevec(self, rhs, adjoint=False):
        return rhs / self.multiplier[..., None]

    def _determinant(self):
        return _M.pow(self.multiplier, _M.cast(self._num_rows, self.dtype))

    def _log_abs_determinant(self):
        return _M.cast(self._num_rows, self.dtype) * _M.log(_M.abs(self.multiplier))

    def _trace(self):
        return self.multiplier * _M.cast(self._num_rows, self.dtype)

    def _diag_part(self):
        return self.multiplier[..., None] * _A.ones((self._num_rows,), self.dtype)

    def _to_dense(self):
        return self._mat() * _eye(self._num_rows, (), self.dtype)

    def _add_to_tensor(self, x):
        from . import linalg as _L
        return _L.set_diag(x, _L.diag_part(x) + self.multiplier[..., None])

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return _A.ones_like(self.multiplier)

    def _assert_non_singular(self):
        return _C.assert_less(_A.zeros_like(self.multiplier), _M.abs(self.multiplier),
                              message="LinearOperator was singular")

    def _assert_positive_definite(self):
        return _C.assert_positive(self.multiplier, message="LinearOperator was not positive definite.")

    def _assert_self_adjoint(self):
        return None

    def _linop_inverse(self):
        return LinearOperatorScaledIdentity(self._num_rows, 1.0 / self.multiplier,
                                            is_non_singular=self.is_non_singular,
                                            is_self_adjoint=self.is_self_adjoint,
                                            is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_cholesky(self):
        return LinearOperatorScaledIdentity(self._num_rows, _M.sqrt(self.multiplier), is_non_singular=True,
                                            is_self_adjoint=True, is_positive_definite=True, is_square=True)

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(self._num_rows, left.multiplier * right.multiplier, is_square=True)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(right.diag * _A.expand_dims(left.multiplier, -1), is_square=True)
        return super()._linop_matmul(left, right)


class LinearOperatorZeros(LinearOperator):
    """The [batch] zero matrix: singular (solve and inverse refused, as TF)."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None, is_non_singular=False,
                 is_self_adjoint=True, is_positive_definite=False, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorZeros"):
        parameters = dict(num_rows=num_rows, num_columns=num_columns, batch_shape=batch_shape, dtype=dtype,
                          is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square,
                          assert_proper_shapes=assert_proper_shapes, name=name)
        if not is_self_adjoint and is_square:
            raise ValueError("A zero operator is always self adjoint.")
        if is_non_singular:
            raise ValueError("A zero operator is always singular.")
        if is_positive_definite:
            raise ValueError("A zero operator is always not positive-definite.")
        super().__init__(dtype or "float32", is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         parameters)
        rows = _check_num_rows(num_rows)
        cols = _check_num_rows(num_rows if num_columns is None else num_columns, "num_columns")
        if is_square and rows != cols:
            raise ValueError(f"LinearOperatorZeros initialized as is_square=True, but got num_rows({rows}) != "
                             f"num_columns({cols})")
        self._num_rows, self._num_columns = rows, cols
        self._batch_shape_arg = _check_batch_shape(batch_shape)

    def _shape(self):
        return self._batch_shape_arg + (self._num_rows, self._num_columns)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        s = tuple(x.shape)
        r = s[-2] if adjoint_arg else s[-1]
        rows = self._num_columns if adjoint else self._num_rows
        return _A.zeros(_bcast(s[:-2], self._batch_shape_arg) + (rows, r), self.dtype)

    def _matvec(self, x, adjoint=False):
        s = tuple(x.shape)
        rows = self._num_columns if adjoint else self._num_rows
        return _A.zeros(_bcast(s[:-1], self._batch_shape_arg) + (rows,), self.dtype)

    def _determinant(self):
        return _A.zeros(self._batch_shape_arg, self.dtype)

    def _log_abs_determinant(self):
        return _M.log(self._determinant())   # -inf, as TF

    def _trace(self):
        return _A.zeros(self._batch_shape_arg, self.dtype)

    def _diag_part(self):
        return _A.zeros(self._batch_shape_arg + (min(self._num_rows, self._num_columns),), self.dtype)

    def _to_dense(self):
        return _A.zeros(self._shape(), self.dtype)

    def _add_to_tensor(self, x):
        return _A.identity(x)

    def _eigvals(self):
        return self._diag_part()

    def _assert_non_singular(self):
        raise InvalidArgumentError("Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        raise InvalidArgumentError("Zero operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return None

    def _linop_matmul(self, left, right):
        if isinstance(left, LinearOperatorZeros):
            if not right.is_square or not left.is_square:
                raise ValueError("Matmul with non-square `LinearOperator`s or non-square `LinearOperatorZeros` "
                                 "not supported at this time.")
            return left
        return super()._linop_matmul(left, right)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["batch_shape"] = np.empty(batch, np.int8)[key].shape
        return type(self)(**params)


# -- operators of operators --------------------------------------------------------------------------------

def _same_dtype(operators):
    dts = {op.dtype for op in operators}
    if len(dts) > 1:
        raise TypeError("Expected all operators to have the same dtype.  Found "
                        + "   ".join(f"{op.name}: {op.dtype!r}" for op in operators))
    return operators[0].dtype


class LinearOperatorComposition(LinearOperator):
    """``A1 @ A2 @ ... @ An``: matmul applies the factors right to left, solve solves them left to right,
    determinants multiply (log-determinants add)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        parameters = dict(operators=operators, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        dtype = _same_dtype(operators)
        if all(op.is_non_singular for op in operators):
            if is_non_singular is False:
                raise ValueError("The composition of non-singular operators is always non-singular.")
            is_non_singular = True
        for a, b in zip(operators[:-1], operators[1:]):
            _compatible(a.domain_dimension, b.range_dimension)
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in operators), parameters)
        self._operators = operators

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        b = _bcast(*[op.batch_shape for op in self._operators])
        return b + (self._operators[0].range_dimension, self._operators[-1].domain_dimension)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        ops = self._operators if adjoint else self._operators[::-1]
        y = ops[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ops[1:]:
            y = op.matmul(y, adjoint=adjoint)
        return y

    def _determinant(self):
        out = self._operators[0].determinant()
        for op in self._operators[1:]:
            out = out * op.determinant()
        return out

    def _log_abs_determinant(self):
        out = self._operators[0].log_abs_determinant()
        for op in self._operators[1:]:
            out = out + op.log_abs_determinant()
        return out

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # (A1 ... An)^-1 = An^-1 ... A1^-1; adjoint: (A1^H)^-1 last
        ops = self._operators[::-1] if adjoint else self._operators
        y = ops[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ops[1:]:
            y = op.solve(y, adjoint=adjoint)
        return y

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operators"] = [op._batch_slice(key, batch) for op in self._operators]
        return type(self)(**params)


def _derived_hints(operator, given, message):
    """The hints (non-singular, self-adjoint, positive-definite, square) of an operator derived from
    ``operator`` (its inverse, its adjoint): each given one, else the operator's; TF's ValueError
    (``message(what, theirs, mine)``) where both are given and disagree."""
    out = []
    for what, mine, theirs in zip(("non-singular", "self-adjoint", "positive-definite", "square"), given,
                                  (operator.is_non_singular, operator.is_self_adjoint,
                                   operator.is_positive_definite, operator.is_square)):
        if mine is not None and theirs is not None and mine != theirs:
            raise ValueError(message(what, theirs, mine))
        out.append(theirs if mine is None else mine)
    return out


class LinearOperatorInversion(LinearOperator):
    """``A^-1`` without forming it: matmul is A's solve, solve is A's matmul."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        parameters = dict(operator=operator, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"Argument `is_non_singular` or argument `operator` must have supplied hint "
                             f"`is_non_singular` equal to `True` or `None`. Found `operator.is_non_singular`: "
                             f"{operator.is_non_singular}, `is_non_singular`: {is_non_singular}.")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"Argument `is_square` or argument `operator` must have supplied hint `is_square` "
                             f"equal to `True` or `None`. Found `operator.is_square`: {operator.is_square}, "
                             f"`is_square`: {is_square}.")
        super().__init__(operator.dtype, *_derived_hints(
            operator, (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            lambda what, theirs, mine: f"Inconsistent {what} hints: operator {theirs}, argument {mine}."),
            name or operator.name + "_inv", parameters)
        self._operator = operator

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        return tuple(self._operator.shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -self._operator.log_abs_determinant()

    def _linop_inverse(self):
        return self._operator

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operator"] = self._operator._batch_slice(key, batch)
        return type(self)(**params)


class LinearOperatorAdjoint(LinearOperator):
    """``A^H`` (the transpose: real dtypes) without forming it."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        parameters = dict(operator=operator, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        super().__init__(operator.dtype, *_derived_hints(
            operator, (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            lambda what, theirs, mine: f"An operator is {what} if and only if its adjoint is {what}."),
            name or operator.name + "_adjoint", parameters)
        self._operator = operator

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        s = tuple(self._operator.shape)
        return s[:-2] + (s[-1], s[-2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return self._operator.determinant()

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _trace(self):
        return self._operator.trace()

    def _diag_part(self):
        return self._operator.diag_part()

    def _to_dense(self):
        return _tr(self._operator.to_dense())

    def _linop_adjoint(self):
        return self._operator

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operator"] = self._operator._batch_slice(key, batch)
        return type(self)(**params)


def _block_hints(operators, is_non_singular, is_self_adjoint, is_positive_definite, what):
    if all(op.is_non_singular for op in operators):
        if is_non_singular is False:
            raise ValueError(f"The {what} of non-singular operators is always non-singular.")
        is_non_singular = True
    if all(op.is_self_adjoint for op in operators):
        if is_self_adjoint is False:
            raise ValueError(f"The {what} of self-adjoint operators is always self-adjoint.")
        is_self_adjoint = True
    if all(op.is_positive_definite for op in operators):
        if is_positive_definite is False:
            raise ValueError(f"The {what} of positive definite operators is always positive definite.")
        is_positive_definite = True
    return is_non_singular, is_self_adjoint, is_positive_definite


class LinearOperatorBlockDiag(LinearOperator):
    """``diag(A1, ..., An)``: each method splits its argument into the blocks' rows, applies the blocks and
    concatenates; determinants multiply; inverse, adjoint and Cholesky factor are block-diagonal."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=True, name=None):
        parameters = dict(operators=operators, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        dtype = _same_dtype(operators)
        if is_square is False:
            raise ValueError("Non-square block diagonal operators are not supported by tapeflow (TF 2.21 supports "
                             "them since 2.3); pass square blocks")
        ns, sa, pd = _block_hints(operators, is_non_singular, is_self_adjoint, is_positive_definite, "direct sum")
        super().__init__(dtype, ns, sa, pd, True, name or "_ds_".join(op.name for op in operators), parameters)
        self._operators = operators

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        b = _bcast(*[op.batch_shape for op in self._operators])
        return b + (sum(op.range_dimension for op in self._operators),
                    sum(op.domain_dimension for op in self._operators))

    def _batch(self):
        return _bcast(*[op.batch_shape for op in self._operators])

    def _blockwise(self, x, fn, adjoint, adjoint_arg, dim_of):
        x = _tr(x) if adjoint_arg else x
        parts = _split(x, [dim_of(op) for op in self._operators], -2)
        outs = [fn(op, p) for op, p in zip(self._operators, parts)]
        b = _bcast(self._batch(), *[_batch(o.shape) for o in outs])
        return _A.concat([_broadcast_batch(o, b) for o in outs], axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._blockwise(x, lambda op, p: op.matmul(p, adjoint=adjoint), adjoint, adjoint_arg,
                               (lambda op: op.range_dimension) if adjoint else (lambda op: op.domain_dimension))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._blockwise(rhs, lambda op, p: op.solve(p, adjoint=adjoint), adjoint, adjoint_arg,
                               (lambda op: op.domain_dimension) if adjoint else (lambda op: op.range_dimension))

    def _determinant(self):
        out = self._operators[0].determinant()
        for op in self._operators[1:]:
            out = out * op.determinant()
        return out

    def _log_abs_determinant(self):
        out = self._operators[0].log_abs_determinant()
        for op in self._operators[1:]:
            out = out + op.log_abs_determinant()
        return out

    def _trace(self):
        out = self._operators[0].trace()
        for op in self._operators[1:]:
            out = out + op.trace()
        return out

    def _diag_part(self):
        b = self._batch()
        parts = [op.diag_part() for op in self._operators]
        return _A.concat([_A.broadcast_to(p, b + tuple(p.shape)[-1:]) for p in parts], axis=-1)

    def _eigvals(self):
        b = self._batch()
        parts = [op.eigvals() for op in self._operators]
        return _A.concat([_A.broadcast_to(p, b + tuple(p.shape)[-1:]) for p in parts], axis=-1)

    def _to_dense(self):
        b = self._batch()
        n = self.domain_dimension
        rows, start = [], 0
        for op in self._operators:
            d = _broadcast_batch(op.to_dense(), b)
            k = op.domain_dimension
            pads = [[0, 0]] * len(b) + [[0, 0], [start, n - start - k]]
            rows.append(_A.pad(d, pads))
            start += k
        return _A.concat(rows, axis=-2)

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorBlockDiag) and isinstance(left, LinearOperatorBlockDiag):
            if len(left._operators) != len(right._operators):
                raise ValueError("Can not efficiently multiply two `LinearOperatorBlockDiag`s together when number "
                                 "of blocks differ.")
            return LinearOperatorBlockDiag([a.matmul(b) for a, b in zip(left._operators, right._operators)],
                                           is_square=True)
        return super()._linop_matmul(left, right)

    def _linop_inverse(self):
        return LinearOperatorBlockDiag([op.inverse() for op in self._operators], is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_adjoint(self):
        return LinearOperatorBlockDiag([op.adjoint() for op in self._operators], is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_cholesky(self):
        return LinearOperatorBlockDiag([op.cholesky() for op in self._operators], is_non_singular=True,
                                       is_self_adjoint=None, is_square=True)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operators"] = [op._batch_slice(key, batch) for op in self._operators]
        return type(self)(**params)


class LinearOperatorKronecker(LinearOperator):
    """``A1 (x) A2 (x) ... (x) An``: matmul applies each factor along its own axis of the argument reshaped
    to (..., n1, ..., nk, R) (never the N x N product); solve applies the factors' solves; the determinant
    is prod_i det(Ai)^(N / ni) (its log: a weighted sum of the factors' log-determinants)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name=None):
        parameters = dict(operators=operators, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        operators = list(operators)
        if not operators:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. Received: {operators}.")
        dts = [op.dtype for op in operators]
        if len(set(dts)) > 1:
            raise TypeError(f"Expected every operation in argument `operators` to have the same dtype. Received "
                            f"{[(op.name, op.dtype) for op in operators]}.")
        ns, sa, pd = _block_hints(operators, is_non_singular, is_self_adjoint, is_positive_definite,
                                  "Kronecker product")
        super().__init__(dts[0], ns, sa, pd, is_square, name or "_x_".join(op.name for op in operators), parameters)
        self._operators = operators

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        b = _bcast(*[op.batch_shape for op in self._operators])
        return b + (int(np.prod([op.range_dimension for op in self._operators])),
                    int(np.prod([op.domain_dimension for op in self._operators])))

    def _apply(self, x, fn, in_dim, out_dim, adjoint_arg):
        """fn(op, (..., P, n_i)^T) along each factor's axis: x (..., N, R) -> (..., M, R)."""
        x = _tr(x) if adjoint_arg else x
        s = tuple(x.shape)
        lead, r = s[:-2], s[-1]
        dims = [in_dim(op) for op in self._operators]
        nb = len(lead)
        y = _A.reshape(x, lead + tuple(dims) + (r,))
        for i, op in enumerate(self._operators):
            cur = tuple(y.shape)
            k = nb + i
            perm = [a for a in range(len(cur)) if a != k] + [k]
            t = _A.transpose(y, perm)                                      # lead, others..., r, d_i
            tshape = tuple(t.shape)
            flat = _A.reshape(t, tshape[:nb] + (int(np.prod(tshape[nb:-1])), tshape[-1]))   # lead, P, d_i
            z = fn(op, flat)                                               # op's batch (+) lead, m_i, P
            zb = tuple(z.shape)[:-2]
            z = _A.reshape(_tr(z), zb + tshape[nb:-1] + (out_dim(op),))    # batch, others..., r, m_i
            nbz = len(zb)
            m = len(tuple(z.shape))
            rest = [a for a in range(nbz, m - 1)]
            order = rest[:i] + [m - 1] + rest[i:]
            y = _A.transpose(z, list(range(nbz)) + order)
            nb = nbz
        ys = tuple(y.shape)
        return _A.reshape(y, ys[:nb] + (int(np.prod(ys[nb:-1])), ys[-1]))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        if adjoint:
            return self._apply(x, lambda op, f: op.matmul(f, adjoint=True, adjoint_arg=True),
                               lambda op: op.range_dimension, lambda op: op.domain_dimension, adjoint_arg)
        return self._apply(x, lambda op, f: op.matmul(f, adjoint_arg=True),
                           lambda op: op.domain_dimension, lambda op: op.range_dimension, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        dom, rng = (lambda op: op.domain_dimension), (lambda op: op.range_dimension)
        return self._apply(rhs, lambda op, f: op.solve(f, adjoint=adjoint, adjoint_arg=True),
                           dom if adjoint else rng, rng if adjoint else dom, adjoint_arg)

    def _determinant(self):
        n = self.domain_dimension
        out = None
        for op in self._operators:
            t = _M.pow(op.determinant(), _M.cast(n // op.domain_dimension, self.dtype))
            out = t if out is None else out * t
        return out

    def _log_abs_determinant(self):
        n = self.domain_dimension
        out = None
        for op in self._operators:
            t = _M.cast(n // op.domain_dimension, self.dtype) * op.log_abs_determinant()
            out = t if out is None else out + t
        return out

    def _trace(self):
        out = self._operators[0].trace()
        for op in self._operators[1:]:
            out = out * op.trace()
        return out

    def _kron_vectors(self, parts):
        out = parts[0]
        for p in parts[1:]:
            a, b = out, p
            bb = _bcast(tuple(a.shape)[:-1], tuple(b.shape)[:-1])
            out = _A.reshape(a[..., :, None] * b[..., None, :], bb + (tuple(a.shape)[-1] * tuple(b.shape)[-1],))
        return out

    def _diag_part(self):
        return self._kron_vectors([op.diag_part() for op in self._operators])

    def _eigvals(self):
        return self._kron_vectors([op.eigvals() for op in self._operators])

    def _to_dense(self):
        out = self._operators[0].to_dense()
        for op in self._operators[1:]:
            a, b = out, op.to_dense()
            sa, sb = tuple(a.shape), tuple(b.shape)
            bb = _bcast(sa[:-2], sb[:-2])
            out = _A.reshape(a[..., :, None, :, None] * b[..., None, :, None, :],
                             bb + (sa[-2] * sb[-2], sa[-1] * sb[-1]))
        return out

    def _linop_inverse(self):
        return LinearOperatorKronecker([op.inverse() for op in self._operators], is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_adjoint(self):
        return LinearOperatorKronecker([op.adjoint() for op in self._operators], is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite, is_square=self.is_square)

    def _linop_cholesky(self):
        return LinearOperatorKronecker([op.cholesky() for op in self._operators], is_non_singular=True,
                                       is_square=True)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operators"] = [op._batch_slice(key, batch) for op in self._operators]
        return type(self)(**params)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``L + U D V^H`` (V = U and D = I when not given): matmul applies the factors; solve is Woodbury's
    identity, the determinant the matrix determinant lemma, both through the small K x K capacitance
    ``C = D^-1 + V^H L^-1 U`` (TF's algorithm; Cholesky-solved when the operator is self-adjoint positive
    definite, as TF)."""

    def __init__(self, base_operator, u, diag_update=None, v=None, is_diag_update_positive=None,
                 is_non_singular=None, is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowRankUpdate"):
        parameters = dict(base_operator=base_operator, u=u, diag_update=diag_update, v=v,
                          is_diag_update_positive=is_diag_update_positive, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, name=name)
        dtype = base_operator.dtype
        if diag_update is None:
            if is_diag_update_positive is False:
                raise ValueError("Default diagonal is the identity, which is positive.  However, user set "
                                 "'is_diag_update_positive' to False.")
            is_diag_update_positive = True
        if base_operator.is_self_adjoint and v is None:   # (real dtypes: D is real)
            if is_self_adjoint is False:
                raise ValueError("A = L + UDU^H, with L self-adjoint and D real diagonal.  Since UDU^H is "
                                 "self-adjoint, this must be a self-adjoint operator.")
            is_self_adjoint = True
        if (base_operator.is_positive_definite and base_operator.is_self_adjoint and is_diag_update_positive
                and v is None):
            if is_positive_definite is False:
                raise ValueError("Arguments imply this is self-adjoint positive-definite operator.")
            is_positive_definite = True
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name, parameters)
        self._base_operator = base_operator
        self._u = _param(u, "u")
        self._v = None if v is None else _param(v, "v")
        self._diag_update = None if diag_update is None else _param(diag_update, "diag_update")
        self._is_diag_update_positive = is_diag_update_positive
        for nm, t in (("u", self._u), ("v", self._v), ("diag_update", self._diag_update)):
            if t is not None and as_dtype(t.dtype) != dtype:
                raise TypeError(f"Expected argument to have dtype {dtype!r}.  Found: {as_dtype(t.dtype)!r} in tensor "
                                f"{nm}")
        _compatible(base_operator.range_dimension, tuple(self._u.shape)[-2])
        if self._v is not None:
            _compatible(base_operator.domain_dimension, tuple(self._v.shape)[-2])
        self._use_cholesky = bool(is_positive_definite and is_self_adjoint and is_diag_update_positive and v is None)

    base_operator = property(lambda self: self._base_operator)
    u = property(lambda self: _read(self._u))
    v = property(lambda self: _read(self._u if self._v is None else self._v))
    diag_update = property(lambda self: None if self._diag_update is None else _read(self._diag_update))

    def _shape(self):
        b = _bcast(self._base_operator.batch_shape, tuple(self._u.shape)[:-2],
                   () if self._v is None else tuple(self._v.shape)[:-2],
                   () if self._diag_update is None else tuple(self._diag_update.shape)[:-1])
        return b + tuple(self._base_operator.shape)[-2:]

    def _scale(self, x):
        return x if self._diag_update is None else _A.expand_dims(self.diag_update, -1) * x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        u, v = self.u, self.v
        left, right = (v, u) if adjoint else (u, v)
        lx = self._base_operator.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vhx = _M.matmul(right, x, transpose_a=True, transpose_b=adjoint_arg)
        return lx + _M.matmul(left, self._scale(vhx))

    def _capacitance(self):
        # C = D^-1 + V^H L^-1 U (K x K)
        linv_u = self._base_operator.solve(self.u)
        vh_linv_u = _M.matmul(self.v, linv_u, transpose_a=True)
        k = tuple(self.u.shape)[-1]
        if self._diag_update is None:
            return vh_linv_u + _eye(k, (), self.dtype)
        from . import linalg as _L
        return vh_linv_u + _L.diag(1.0 / self.diag_update)

    def _log_abs_determinant(self):
        from . import linalg as _L
        c = self._capacitance()
        if self._use_cholesky:
            lad_c = 2 * _M.reduce_sum(_M.log(_L.diag_part(_L.cholesky(c))), axis=-1)
        else:
            lad_c = _L.slogdet(c)[1]
        out = self._base_operator.log_abs_determinant() + lad_c
        if self._diag_update is not None:
            out = out + _M.reduce_sum(_M.log(_M.abs(self.diag_update)), axis=-1)
        return out

    def _determinant(self):
        from . import linalg as _L
        if self.is_positive_definite:
            return _M.exp(self.log_abs_determinant())
        det = self._base_operator.determinant() * _L.det(self._capacitance())
        if self._diag_update is not None:
            det = det * _M.reduce_prod(self.diag_update, axis=-1)
        return det

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from . import linalg as _L
        if self._base_operator.is_non_singular is False:
            raise ValueError("Solve not implemented unless this is a perturbation of a non-singular LinearOperator.")
        # Woodbury: A^-1 = L^-1 - L^-1 U C^-1 V^H L^-1 (adjoint: the roles of U and V swap)
        u, v = (self.v, self.u) if adjoint else (self.u, self.v)
        rhs = _tr(rhs) if adjoint_arg else rhs
        base = self._base_operator
        linv_rhs = base.solve(rhs, adjoint=adjoint)
        vh_linv_rhs = _M.matmul(v, linv_rhs, transpose_a=True)
        c = self._capacitance()
        c = _tr(c) if adjoint else c
        if self._use_cholesky:
            cb = _bcast(_batch(c.shape), _batch(vh_linv_rhs.shape))
            cinv = _L.cholesky_solve(_L.cholesky(_broadcast_batch(c, cb)), _broadcast_batch(vh_linv_rhs, cb))
        else:
            cinv = _solve_bcast(c, vh_linv_rhs)
        return linv_rhs - base.solve(_M.matmul(u, cinv), adjoint=adjoint)

    def _diag_part(self):
        return self._base_operator.diag_part() + _M.reduce_sum(self.u * self._scale_row(self.v), axis=-1)

    def _scale_row(self, v):
        return v if self._diag_update is None else v * _A.expand_dims(self.diag_update, -2)

    def _to_dense(self):
        return self._base_operator.to_dense() + _M.matmul(self._scale_row(self.u), self.v, transpose_b=True)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["base_operator"] = self._base_operator._batch_slice(key, batch)
        for nm, nd in (("u", 2), ("v", 2), ("diag_update", 1)):
            t = params.get(nm)
            if t is None:
                continue
            t = convert_to_tensor(t)
            ev = tuple(t.shape)[len(t.shape) - nd:]
            params[nm] = _A.broadcast_to(t, batch + ev)[key + (Ellipsis,)]
        return type(self)(**params)


# -- permutations, reflections, Toeplitz, tridiagonal ------------------------------------------------------

class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P with P[i, perm[i]] = 1: matmul gathers rows, solve is the transpose's."""
    _param_ndims = {"perm": 1}

    def __init__(self, perm, dtype=None, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorPermutation"):
        parameters = dict(perm=perm, dtype=dtype, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        if is_non_singular is False:
            raise ValueError(f"A Permutation operator is always non-singular. Expected argument `is_non_singular` to "
                             f"be True. Received: {is_non_singular}.")
        if is_square is False:
            raise ValueError(f"A Permutation operator is always square. Expected argument `is_square` to be True. "
                             f"Received: {is_square}.")
        p = convert_to_tensor(perm)
        if len(p.shape) < 1:
            raise ValueError(f"Argument `perm` must have at least 1 dimension. Received: {p!r}.")
        if np.dtype(as_dtype(p.dtype).np).kind not in "iu":
            raise TypeError(f"Argument `perm` must be integer dtype. Received: {p!r}.")
        try:
            pv = np.asarray(p.numpy())
        except Exception:   # a traced perm: its uniqueness cannot be checked here (TF: not checked either)
            pv = None
        if pv is not None:
            n = pv.shape[-1]
            if not (np.sort(pv, axis=-1) == np.arange(n)).all():
                raise ValueError(f"Argument `perm` must be a vector of unique integers from 0 to {n - 1}.")
        super().__init__(dtype or "float32", is_non_singular, is_self_adjoint, is_positive_definite, True, name,
                         parameters)
        self._perm = p

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        return _square_shape(self._perm)

    def _gather_rows(self, x, idx):
        s = tuple(x.shape)
        b = _bcast(s[:-2], tuple(idx.shape)[:-1])
        x = _A.broadcast_to(x, b + s[-2:])
        idx = _A.broadcast_to(idx, b + tuple(idx.shape)[-1:])
        return _A.gather(x, idx, axis=len(b), batch_dims=len(b))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        idx = _A.argsort(self._perm, axis=-1) if adjoint else self._perm
        return self._gather_rows(x, idx)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        return _A.one_hot(self._perm, self.domain_dimension, dtype=self.dtype)

    def _determinant(self):
        from . import linalg as _L
        # the sign of the permutation: LU of a 0/1 permutation matrix is exact, so this is exactly +-1
        return _L.det(self.to_dense())

    def _log_abs_determinant(self):
        return _A.zeros(tuple(self.batch_shape), self.dtype)

    def _diag_part(self):
        return _M.cast(_M.equal(self._perm, _M.cast(np.arange(self.domain_dimension), self._perm.dtype)), self.dtype)

    def _assert_non_singular(self):
        return None


class LinearOperatorHouseholder(LinearOperator):
    """The reflection ``I - 2 v v^H / |v|^2`` about the hyperplane orthogonal to ``reflection_axis``:
    matmul is one rank-1 update, it is its own inverse, its determinant is -1."""
    _param_ndims = {"reflection_axis": 1}

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorHouseholder"):
        parameters = dict(reflection_axis=reflection_axis, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, name=name)
        v = _vector_param(reflection_axis, "reflection_axis")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        is_positive_definite = False
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        super().__init__(v.dtype, is_non_singular, True, is_positive_definite, True, name, parameters)
        self._reflection_axis = v

    @property
    def reflection_axis(self):
        return _read(self._reflection_axis)

    def _shape(self):
        return _square_shape(self._reflection_axis)

    def _unit(self):
        v = self.reflection_axis
        return v / _M.sqrt(_M.reduce_sum(v * v, axis=-1, keepdims=True))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        u = self._unit()[..., :, None]
        return x - 2 * u * _M.reduce_sum(u * x, axis=-2, keepdims=True)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)   # H^-1 = H

    def _determinant(self):
        return -_A.ones(tuple(self.batch_shape), self.dtype)

    def _log_abs_determinant(self):
        return _A.zeros(tuple(self.batch_shape), self.dtype)

    def _trace(self):
        return _A.ones(tuple(self.batch_shape), self.dtype) * _M.cast(self.domain_dimension - 2, self.dtype)

    def _diag_part(self):
        u = self._unit()
        return 1 - 2 * u * u

    def _to_dense(self):
        u = self._unit()
        return _eye(self.domain_dimension, (), self.dtype) - 2 * u[..., :, None] * u[..., None, :]

    def _eigvals(self):
        n = self.domain_dimension
        ev = np.ones(n, self.dtype.np)
        ev[0] = -1   # TF's order: -1 first
        return _A.broadcast_to(convert_to_tensor(ev), tuple(self.batch_shape) + (n,))

    def _cond(self):
        return _A.ones(tuple(self.batch_shape), self.dtype)

    def _assert_non_singular(self):
        return None

    def _assert_positive_definite(self):
        raise InvalidArgumentError("Householder operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return None

    def _linop_inverse(self):
        return self


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column ``col`` and first row ``row`` (``row[0]`` ignored, as TF).
    tapeflow multiplies by the dense matrix (TF 2.21 embeds it in a circulant and uses FFTs, which tapeflow
    lacks: the same values to rounding, O(N^2) instead of O(N log N))."""
    _param_ndims = {"col": 1, "row": 1}

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorToeplitz"):
        parameters = dict(col=col, row=row, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        c, r = _param(col, "col"), _param(row, "row")
        _check_float(c, "col")
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        for nm, t in (("col", c), ("row", r)):
            if len(t.shape) < 1:
                raise ValueError(f"Argument {nm} must have at least 1 dimension.  Found: {_read(t)!r}")
        if tuple(c.shape)[-1] != tuple(r.shape)[-1]:
            raise ValueError("Expected square matrix, got row and col with mismatched dimensions.")
        super().__init__(c.dtype, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters)
        self._col, self._row = c, r

    col = property(lambda self: _read(self._col))
    row = property(lambda self: _read(self._row))

    def _shape(self):
        b = _bcast(tuple(self._col.shape)[:-1], tuple(self._row.shape)[:-1])
        n = tuple(self._col.shape)[-1]
        return b + (n, n)

    def _to_dense(self):
        n = self.domain_dimension
        b = tuple(self.batch_shape)
        col = _A.broadcast_to(self.col, b + (n,))
        row = _A.broadcast_to(self.row, b + (n,))
        w = _A.concat([_A.reverse(row[..., 1:], [-1]), col], axis=-1)          # w[n-1+k]: diagonal k = i - j
        idx = (np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1).reshape(-1)
        return _A.reshape(_A.gather(w, idx, axis=-1), b + (n, n))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _M.matmul(self._to_dense(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _diag_part(self):
        return self.col[..., :1] * _A.ones(tuple(self.batch_shape) + (self.domain_dimension,), self.dtype)

    def _trace(self):
        return self.col[..., 0] * _M.cast(self.domain_dimension, self.dtype) * \
            _A.ones(tuple(self.batch_shape), self.dtype)


_COMPACT, _MATRIX, _SEQUENCE = "compact", "matrix", "sequence"


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal matrix in TF's formats (compact [..., 3, N] (super, main, sub), sequence, matrix):
    matmul is tf.linalg.tridiagonal_matmul, solve tf.linalg.tridiagonal_solve."""

    def __init__(self, diagonals, diagonals_format=_COMPACT, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorTridiag"):
        parameters = dict(diagonals=diagonals, diagonals_format=diagonals_format, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, name=name)
        if diagonals_format not in (_COMPACT, _MATRIX, _SEQUENCE):
            raise ValueError(f"Argument `diagonals_format` must be one of compact, matrix, or sequence. Received : "
                             f"{diagonals_format}.")
        if diagonals_format == _SEQUENCE:
            d = [_param(t, "diagonals") for t in diagonals]
            dtype = d[0].dtype
        else:
            d = _param(diagonals, "diagonals")
            dtype = d.dtype
        _check_float(d[0] if isinstance(d, list) else d, "diagonals")
        if is_square is False:
            raise ValueError("Only square tridiagonal operators currently supported.")
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters)
        self._diagonals = d
        self._diagonals_format = diagonals_format

    @property
    def diagonals(self):
        return [_read(t) for t in self._diagonals] if isinstance(self._diagonals, list) else _read(self._diagonals)

    @property
    def diagonals_format(self):
        return self._diagonals_format

    def _shape(self):
        if self._diagonals_format == _MATRIX:
            return tuple(self._diagonals.shape)
        if self._diagonals_format == _SEQUENCE:
            b = _bcast(*[tuple(t.shape)[:-1] for t in self._diagonals])
            n = tuple(self._diagonals[1].shape)[-1]
        else:
            s = tuple(self._diagonals.shape)
            b, n = s[:-2], s[-1]
        return b + (n, n)

    def _parts(self):
        from . import linalg as _L
        return _L._tri_parts(self.diagonals, self._diagonals_format, "LinearOperatorTridiag")

    def _adjoint_parts(self):
        """(super, main, sub) of the transpose: the sub-diagonal moved up one place and vice versa."""
        sup, main, sub = self._parts()
        zero = _A.zeros_like(main[..., :1])
        return (_A.concat([sub[..., 1:], zero], -1), main, _A.concat([zero, sup[..., :-1]], -1))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        from . import linalg as _L
        x = _tr(x) if adjoint_arg else x
        parts = self._adjoint_parts() if adjoint else self._parts()
        b = _bcast(tuple(self.batch_shape), _batch(x.shape))
        parts = [_A.broadcast_to(p, b + tuple(p.shape)[-1:]) for p in parts]
        return _L.tridiagonal_matmul(parts, _broadcast_batch(x, b), diagonals_format="sequence")

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from . import linalg as _L
        rhs = _tr(rhs) if adjoint_arg else rhs
        parts = self._adjoint_parts() if adjoint else self._parts()
        b = _bcast(tuple(self.batch_shape), _batch(rhs.shape))
        parts = [_A.broadcast_to(p, b + tuple(p.shape)[-1:]) for p in parts]
        return _L.tridiagonal_solve(parts, _broadcast_batch(rhs, b), diagonals_format="sequence")

    def _diag_part(self):
        return _A.broadcast_to(self._parts()[1], tuple(self.batch_shape) + (self.domain_dimension,))

    def _to_dense(self):
        sup, main, sub = self._parts()
        n = self.domain_dimension
        dt = self.dtype.np
        return (main[..., :, None] * np.eye(n, dtype=dt) + sup[..., :, None] * np.eye(n, k=1, dtype=dt)
                + sub[..., :, None] * np.eye(n, k=-1, dtype=dt))

    def _batch_slice(self, key, batch):
        raise NotImplementedError("LinearOperatorTridiag: batch slicing is not implemented in tapeflow; slice the "
                                  "diagonals and build a new operator")


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator: ``operators[i]`` is row i's blocks ``[A_i0, ..., A_ii]``. matmul
    sums the blocks row by row; solve is block forward (adjoint: backward) substitution with the diagonal
    blocks' solves; the determinant is the diagonal blocks' product."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=None, name="LinearOperatorBlockLowerTriangular"):
        parameters = dict(operators=operators, is_non_singular=is_non_singular, is_self_adjoint=is_self_adjoint,
                          is_positive_definite=is_positive_definite, is_square=is_square, name=name)
        rows = [list(r) for r in operators]
        if not rows:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. Received: {operators}.")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` blocks. Received: {len(row)} "
                                 f"blocks.")
        for i, row in enumerate(rows):
            for j, op in enumerate(row):
                if i > 0 and j < i and op.domain_dimension != rows[i - 1][j].domain_dimension:
                    raise ValueError(f"Argument `operators[{i}][{j}].domain_dimension` ({op.domain_dimension}) must "
                                     f"be the same as `operators[{i-1}][{j}].domain_dimension` "
                                     f"({rows[i - 1][j].domain_dimension}).")
                if j < i and op.range_dimension != row[j + 1].range_dimension:
                    raise ValueError(f"Argument `operators[{i}][{j}].range_dimension` ({op.range_dimension}) must be "
                                     f"the same as `operators[{i}][{j + 1}].range_dimension` "
                                     f"({row[j + 1].range_dimension}).")
        diag = [row[-1] for row in rows]
        if all(op.is_non_singular for op in diag):
            if is_non_singular is False:
                raise ValueError("A blockwise lower-triangular operator with non-singular operators on the main "
                                 "diagonal is always non-singular. Expected argument `is_non_singular` to be True. "
                                 f"Received: {is_non_singular}.")
            is_non_singular = True
        if any(op.is_non_singular is False for op in diag):
            if is_non_singular is True:
                raise ValueError("A blockwise lower-triangular operator with a singular operator on the main "
                                 "diagonal is always singular. Expected argument `is_non_singular` to be True. "
                                 f"Received: {is_non_singular}.")
            is_non_singular = False
        if is_square is False:
            raise ValueError(f"`LinearOperatorBlockLowerTriangular` must be square. Expected argument `is_square` to "
                             f"be True. Received: {is_square}.")
        for op in diag:
            if op.is_square is False:
                raise ValueError("Matrices on the diagonal (the final elements of each row-partition in the "
                                 "`operators` list) must be square. Expected argument `is_square` to be True.")
        dtype = rows[0][0].dtype
        for i, row in enumerate(rows):
            for op in row:
                if op.dtype != dtype:
                    raise TypeError(f"Expected all operators to have the same dtype.  Found {op.name}: {op.dtype!r} "
                                    f"in row {i} and {dtype!r} in row 0.")
        super().__init__(dtype, is_non_singular, is_self_adjoint, is_positive_definite, True, name, parameters)
        self._operators = rows

    @property
    def operators(self):
        return [list(r) for r in self._operators]

    def _dims(self):
        return [row[-1].domain_dimension for row in self._operators]

    def _batch(self):
        return _bcast(*[op.batch_shape for row in self._operators for op in row])

    def _shape(self):
        n = sum(self._dims())
        return self._batch() + (n, n)

    def _cat(self, parts):
        b = _bcast(self._batch(), *[_batch(p.shape) for p in parts])
        return _A.concat([_broadcast_batch(p, b) for p in parts], axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _tr(x) if adjoint_arg else x
        xs = _split(x, self._dims(), -2)
        k = len(self._operators)
        out = []
        for i in range(k):
            if adjoint:   # row i of A^H: blocks (j, i)^H for j >= i
                terms = [self._operators[j][i].matmul(xs[j], adjoint=True) for j in range(i, k)]
            else:
                terms = [self._operators[i][j].matmul(xs[j]) for j in range(i + 1)]
            y = terms[0]
            for t in terms[1:]:
                y = y + t
            out.append(y)
        return self._cat(out)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _tr(rhs) if adjoint_arg else rhs
        bs = _split(rhs, self._dims(), -2)
        k = len(self._operators)
        xs = [None] * k
        order = range(k - 1, -1, -1) if adjoint else range(k)
        for i in order:
            r = bs[i]
            if adjoint:
                for j in range(i + 1, k):
                    r = r - self._operators[j][i].matmul(xs[j], adjoint=True)
            else:
                for j in range(i):
                    r = r - self._operators[i][j].matmul(xs[j])
            xs[i] = self._operators[i][i].solve(r, adjoint=adjoint)
        return self._cat(xs)

    def _determinant(self):
        out = self._operators[0][0].determinant()
        for row in self._operators[1:]:
            out = out * row[-1].determinant()
        return out

    def _log_abs_determinant(self):
        out = self._operators[0][0].log_abs_determinant()
        for row in self._operators[1:]:
            out = out + row[-1].log_abs_determinant()
        return out

    def _diag_part(self):
        b = self._batch()
        parts = [row[-1].diag_part() for row in self._operators]
        return _A.concat([_A.broadcast_to(p, b + tuple(p.shape)[-1:]) for p in parts], axis=-1)

    def _trace(self):
        out = self._operators[0][0].trace()
        for row in self._operators[1:]:
            out = out + row[-1].trace()
        return out

    def _to_dense(self):
        b = self._batch()
        n = sum(self._dims())
        rows = []
        for i, row in enumerate(self._operators):
            blocks = [_broadcast_batch(op.to_dense(), b) for op in row]
            r = _A.concat(blocks, axis=-1)
            used = sum(self._dims()[:i + 1])
            rows.append(_A.pad(r, [[0, 0]] * len(b) + [[0, 0], [0, n - used]]))
        return _A.concat(rows, axis=-2)

    def _linop_inverse(self):
        # TF's recursion: [[A, 0], [B, C]]^-1 = [[A^-1, 0], [-C^-1 B A^-1, C^-1]]; the off-diagonal blocks
        # of the inverse are dense (TF: summed by linear_operator_addition, dense for general blocks)
        hints = dict(is_non_singular=self.is_non_singular, is_self_adjoint=self.is_self_adjoint,
                     is_positive_definite=self.is_positive_definite, is_square=True)
        if len(self._operators) == 1:
            return LinearOperatorBlockLowerTriangular([[self._operators[0][0].inverse()]], **hints)
        k = len(self._operators)
        upper_left = LinearOperatorBlockLowerTriangular(self._operators[:-1]).inverse()
        bottom = self._operators[-1]
        c_inv = bottom[-1].inverse()
        row = []
        for i in range(k - 1):
            s = None
            for j in range(i, k - 1):
                t = bottom[j].matmul(upper_left.operators[j][i].to_dense())
                s = t if s is None else s + t
            row.append(LinearOperatorFullMatrix(-c_inv.matmul(s)))
        row.append(c_inv)
        return LinearOperatorBlockLowerTriangular(upper_left.operators + [row], **hints)

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        params["operators"] = [[op._batch_slice(key, batch) for op in row] for row in self._operators]
        return type(self)(**params)


# -- circulant operators (wave 22): diagonal in the Fourier basis, every method an FFT -----------------------

def _to_complex(x):
    """TF's _to_complex: a complex spectrum is itself, float64 becomes complex128, anything else complex64."""
    d = as_dtype(x.dtype)
    if d.is_complex:
        return x
    return _M.cast(x, "complex128" if d.name == "float64" else "complex64")


class _BaseLinearOperatorCirculant(LinearOperator):
    """TF 2.21's _BaseLinearOperatorCirculant: the [nested] block circulant matrix C = F^H diag(spectrum) F
    (F the ``block_depth``-dimensional DFT over the spectrum's trailing dims), in ``input_output_dtype``.
    matmul/solve are ifft(spectrum * fft(x)) and ifft(fft(x) / spectrum) (signal's FFTs: the ``fft``
    primitive), determinant the spectrum's product, eigvals the spectrum; products, solves, inverses and
    adjoints of circulants are circulants of the spectra's products, ratios, reciprocals and conjugates."""

    def __init__(self, spectrum, block_depth, input_output_dtype="complex64", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True, parameters=None,
                 name="LinearOperatorCirculant"):
        if block_depth not in (1, 2, 3):
            raise ValueError(f"Argument `block_depth` must be one of [1, 2, 3]. Received: {block_depth}.")
        self._block_depth = block_depth
        sp = _param(spectrum, "spectrum")
        if len(sp.shape) < block_depth:
            raise ValueError(f"Argument `spectrum` must have at least {block_depth} dimensions. "
                             f"Received: {_read(sp)!r}.")
        if not as_dtype(sp.dtype).is_complex:
            if is_self_adjoint is False:   # TF 2.21's text
                raise ValueError("A real spectrum always corresponds to a self-adjoint operator. Expected argument "
                                 "`is_self_adjoint` to be True when `spectrum.dtype.is_complex` = True. "
                                 f"Received: {is_self_adjoint}.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("A [[nested] block] circulant operator is always square. Expected argument "
                             f"`is_square` to be True. Received: {is_square}.")
        self._spectrum = sp
        super().__init__(as_dtype(input_output_dtype), is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name, parameters)

    @property
    def _param_ndims(self):
        return {"spectrum": self._block_depth}

    @property
    def block_depth(self):
        return self._block_depth

    @property
    def spectrum(self):
        return _read(self._spectrum)

    @property
    def block_shape(self):
        return TensorShape(tuple(self._spectrum.shape)[-self._block_depth:])

    def block_shape_tensor(self):
        return convert_to_tensor(np.asarray(tuple(self.block_shape), np.int32))

    def _shape(self):
        s = tuple(self._spectrum.shape)
        n = int(np.prod(s[-self._block_depth:]))
        return s[:-self._block_depth] + (n, n)

    # the FFTs of the block depth (TF's _FFT_OP / _IFFT_OP)
    def _fft(self, x):
        from . import signal as _S
        return (_S.fft, _S.fft2d, _S.fft3d)[self._block_depth - 1](_to_complex(x))

    def _ifft(self, x):
        from . import signal as _S
        return (_S.ifft, _S.ifft2d, _S.ifft3d)[self._block_depth - 1](_to_complex(x))

    def convolution_kernel(self, name="convolution_kernel"):
        """ifft(spectrum) in the operator's dtype: the first column of each block as a kernel (TF's)."""
        return _M.cast(self._ifft(self.spectrum), self.dtype)

    def _apply(self, x, adjoint, adjoint_arg, solve):
        """TF's _matmul/_solve: x (..., N, R) vectorized into R blocks of block_shape, transformed, scaled
        by the (conjugated if adjoint) spectrum or divided by it, transformed back."""
        if adjoint_arg:
            x = _tr(x)
            if as_dtype(x.dtype).is_complex:
                x = _M.conj(x)
        spectrum = _to_complex(self.spectrum)
        if adjoint:
            spectrum = _M.conj(spectrum)
        x = _M.cast(x, spectrum.dtype)
        k = self._block_depth
        block = tuple(self._spectrum.shape)[-k:]
        b = _bcast(_batch(x.shape), tuple(self._spectrum.shape)[:-k])
        x = _broadcast_batch(x, b)
        r = tuple(x.shape)[-1]
        xv = _A.reshape(_tr(x), b + (r,) + block)          # (..., R, *block): each column a block vector
        sp = _A.broadcast_to(_A.reshape(spectrum, tuple(spectrum.shape)[:-k] + (1,) + block), b + (1,) + block)
        fx = self._fft(xv)
        y = self._ifft(fx / sp if solve else sp * fx)
        y = _tr(_A.reshape(y, b + (r, int(np.prod(block)))))
        return _M.cast(y, self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply(x, adjoint, adjoint_arg, solve=False)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply(rhs, adjoint, adjoint_arg, solve=True)

    def _axes(self):
        return [-(i + 1) for i in range(self._block_depth)]

    def _determinant(self):
        return _M.cast(_M.reduce_prod(self.spectrum, axis=self._axes()), self.dtype)

    def _log_abs_determinant(self):
        return _M.cast(_M.reduce_sum(_M.log(_M.abs(self.spectrum)), axis=self._axes()), self.dtype)

    def _unblockify(self, x):
        s = tuple(x.shape)
        return _A.reshape(x, s[:-self._block_depth] + (int(np.prod(s[-self._block_depth:])),))

    def _eigvals(self):
        return self._unblockify(self.spectrum)

    def _cond(self):
        a = _M.abs(self._unblockify(self.spectrum))
        return _M.reduce_max(a, axis=-1) / _M.reduce_min(a, axis=-1)

    def _trace(self):
        sp = self.spectrum
        re = _M.reduce_sum(_M.real(sp), axis=self._axes())
        if not self.dtype.is_complex:
            return _M.cast(re, self.dtype)
        im = _A.zeros_like(re) if self.is_self_adjoint else _M.reduce_sum(_M.imag(sp), axis=self._axes())
        return _M.cast(_M.complex(re, im), self.dtype)

    def _diag_part(self):
        n = self.domain_dimension
        value = self.trace() / _M.cast(n, self.dtype)
        return _A.expand_dims(value, -1) * _A.ones(tuple(self.batch_shape) + (n,), self.dtype)

    def _assert_non_singular(self):
        sp = self.spectrum
        return _C.assert_less(_A.zeros_like(_M.abs(sp)), _M.abs(sp),
                              message="Singular operator:  Spectrum contained zero values.")

    def _assert_positive_definite(self):
        return _C.assert_positive(_M.real(self.spectrum),
                                  message="Not positive definite:  Real part of spectrum was not all positive.")

    def _assert_self_adjoint(self):
        sp = self.spectrum
        if not as_dtype(sp.dtype).is_complex:
            return None
        im = _M.imag(sp)
        return _C.assert_equal(_A.zeros_like(im), im,
                               message="Not self-adjoint:  The spectrum contained non-zero imaginary part.")

    def assert_hermitian_spectrum(self, name="assert_hermitian_spectrum"):
        """The spectrum is Hermitian (the convolution kernel real) to eps * N, as TF."""
        eps = float(np.finfo(self.dtype.real_dtype.np).eps)
        imag = _M.imag(_M.cast(self._ifft(self.spectrum), "complex128" if self.dtype.real_dtype.name == "float64"
                                else "complex64"))
        if not self.dtype.is_complex:   # (TF: the kernel cast to a real dtype has no imaginary part)
            imag = _A.zeros_like(_M.real(self.convolution_kernel()))
        return _C.assert_less(_M.abs(imag), _M.cast(eps * self.domain_dimension, imag.dtype),
                              message="Spectrum was not Hermitian")

    # -- derived operators: circulants of the same depth -----------------------------------------------
    def _same(self, spectrum, **hints):
        return type(self)(spectrum=spectrum, **hints) if type(self) is not _BaseLinearOperatorCirculant else \
            _BaseLinearOperatorCirculant(spectrum, self._block_depth, **hints)

    def _linop_adjoint(self):
        sp = self.spectrum
        if as_dtype(sp.dtype).is_complex:
            sp = _M.conj(sp)
        # (TF 2.21 drops input_output_dtype here: the adjoint of a float32 or complex128 operator is a
        # complex64 one; tapeflow keeps the operator's dtype)
        return self._same(sp, input_output_dtype=self.dtype, is_non_singular=self.is_non_singular,
                          is_self_adjoint=self.is_self_adjoint, is_positive_definite=self.is_positive_definite,
                          is_square=True)

    def _linop_inverse(self):
        return self._same(1.0 / self.spectrum, input_output_dtype=self.dtype, is_non_singular=self.is_non_singular,
                          is_self_adjoint=self.is_self_adjoint, is_positive_definite=self.is_positive_definite,
                          is_square=True)

    def _commuting_hints(self, a, b):
        ns = False if (a.is_non_singular is False or b.is_non_singular is False) else \
            (a.is_non_singular and b.is_non_singular)
        if a.is_self_adjoint and b.is_self_adjoint:
            sa = True
        elif (a.is_self_adjoint is True and b.is_self_adjoint is False) or \
                (a.is_self_adjoint is False and b.is_self_adjoint is True):
            sa = False
        else:
            sa = None
        pd = True if (a.is_positive_definite is True and a.is_self_adjoint is True and
                      b.is_positive_definite is True and b.is_self_adjoint is True) else None
        return dict(is_non_singular=ns, is_self_adjoint=sa, is_positive_definite=pd, is_square=True)

    def _linop_matmul(self, left, right):
        if not isinstance(right, _BaseLinearOperatorCirculant) or not isinstance(left, type(right)):
            return super()._linop_matmul(left, right)
        # (TF 2.21: the product's input_output_dtype is the default complex64)
        return left._same(left.spectrum * right.spectrum, **self._commuting_hints(left, right))

    def _linop_solve(self, left, right):
        if not isinstance(right, type(left)):
            return super()._linop_solve(left, right)
        return left._same(right.spectrum / left.spectrum, **self._commuting_hints(left, right))

    def _batch_slice(self, key, batch):
        params = dict(self._parameters)
        t = _read(self._spectrum)
        k = self._block_depth
        t = _A.broadcast_to(t, batch + tuple(t.shape)[-k:])
        params["spectrum"] = t[key + (Ellipsis,)]
        return type(self)(**params)


def _circulant_class(depth, cls_name, doc):
    def __init__(self, spectrum, input_output_dtype="complex64", is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=cls_name):
        parameters = dict(spectrum=spectrum, input_output_dtype=input_output_dtype, is_non_singular=is_non_singular,
                          is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite,
                          is_square=is_square, name=name)
        _BaseLinearOperatorCirculant.__init__(self, spectrum, depth, input_output_dtype, is_non_singular,
                                              is_self_adjoint, is_positive_definite, is_square, parameters, name)
    return type(cls_name, (_BaseLinearOperatorCirculant,), {"__init__": __init__, "__doc__": doc,
                                                            "__module__": __name__, "__qualname__": cls_name})


LinearOperatorCirculant = _circulant_class(
    1, "LinearOperatorCirculant", "tf.linalg.LinearOperatorCirculant: the circulant matrix of ``spectrum`` "
    "[..., N] (its DFT eigenvalues), in ``input_output_dtype`` (default complex64, as TF).")
LinearOperatorCirculant2D = _circulant_class(
    2, "LinearOperatorCirculant2D", "tf.linalg.LinearOperatorCirculant2D: block circulant with circulant blocks, "
    "``spectrum`` [..., N0, N1] (its 2-D DFT eigenvalues).")
LinearOperatorCirculant3D = _circulant_class(
    3, "LinearOperatorCirculant3D", "tf.linalg.LinearOperatorCirculant3D: doubly nested block circulant, "
    "``spectrum`` [..., N0, N1, N2] (its 3-D DFT eigenvalues).")
__all__ += ["LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D"]


# -- TF's dispatch of tf.linalg functions to operators (linear_operator.py's dispatch_for_types) -------------

def dispatch_matmul(a, b, transposed, adjoint_a, adjoint_b):
    """tf.matmul / tf.linalg.matmul / tf.linalg.matvec with an operator operand (ops/math_ops.py matmul calls
    this when an operand does not convert): ``a.matmul(b)``, or ``(b^H a^H)^H`` when only ``b`` is one."""
    if transposed:
        raise ValueError("Transposing not supported at this time.")   # TF 2.21's text
    if not isinstance(a, LinearOperator):
        return _tr(b.matmul(a, adjoint=not adjoint_b, adjoint_arg=not adjoint_a))
    return a.matmul(b, adjoint=adjoint_a, adjoint_arg=adjoint_b)


def dispatch_logdet(matrix):
    if matrix.is_positive_definite and matrix.is_self_adjoint:
        return matrix.log_abs_determinant()
    raise ValueError("Expected matrix to be self-adjoint positive definite.")   # TF 2.21's text


def dispatch_solve(matrix, rhs, adjoint):
    if not isinstance(matrix, LinearOperator):
        raise ValueError("Passing in `matrix` as a Tensor and `rhs` as a LinearOperator is not supported.")
    return matrix.solve(rhs, adjoint=adjoint)
