"""tapeflow.linalg."""
from .ops.math_ops import matmul, einsum, tensordot, linalg_norm as norm  # noqa: F401
from .ops.array_ops import eye  # noqa: F401
from .ops.math_ops import _swap_last as matrix_transpose  # noqa: F401
