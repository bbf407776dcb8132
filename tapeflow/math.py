"""tapeflow.math: TF's math namespace."""
from .ops.math_ops import *  # noqa: F401,F403
from .ops.math_ops import (add, subtract, multiply, divide, truediv, floordiv, floormod, mod, pow, negative,  # noqa: F401
                           maximum, minimum, square, sqrt, rsqrt, reciprocal, exp, log, log1p, expm1, abs, sign,
                           sin, cos, tan, tanh, atan, sigmoid, floor, ceil, round, is_nan, is_finite, is_inf,
                           squared_difference, softplus, log_sigmoid, erf, xlogy, equal, not_equal, less,
                           less_equal, greater, greater_equal, logical_and, logical_or, logical_xor, logical_not,
                           reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod, reduce_any, reduce_all,
                           reduce_logsumexp, reduce_variance, reduce_std, reduce_euclidean_norm, count_nonzero,
                           argmax, argmin, cumsum, add_n, cast, matmul, tensordot, einsum, where)
from .ops.array_ops import top_k  # noqa: F401
from .ops.nn_ops import l2_normalize  # noqa: F401  (tf.math.l2_normalize is tf.nn.l2_normalize)
from .ops.segment_ops import (segment_sum, segment_mean, segment_max, segment_min, segment_prod,  # noqa: F401,E402
                              unsorted_segment_sum, unsorted_segment_mean, unsorted_segment_max,
                              unsorted_segment_min, unsorted_segment_prod, unsorted_segment_sqrt_n, bincount,
                              confusion_matrix)
from .ops.math_ops import cumprod  # noqa: F401,E402
from .ops.math_ops import xdivy, xlog1py  # noqa: F401,E402
from .ops.nn_ops import in_top_k  # noqa: F401,E402
from .ops.nn_ops import approx_max_k, approx_min_k  # noqa: F401,E402  (wave 21, nn21)
from .ops.special_ops import lgamma, digamma, polygamma, erfc, erfinv, nextafter, igamma, igammac  # noqa: F401,E402
from .ops.special_ops import multiply_no_nan, cumulative_logsumexp  # noqa: F401,E402
from .ops.math_ops import (reciprocal_no_nan, invert_permutation, is_non_decreasing,  # noqa: F401,E402
                           is_strictly_increasing, zero_fraction)
from .ops.nn_ops import softmax, log_softmax, softsign  # noqa: F401,E402
from .ops.math_ops import truncatediv, truncatemod, accumulate_n, real, imag, conj, angle  # noqa: F401,E402
from .ops.special_ops import lbeta, ndtri, erfcinv  # noqa: F401,E402
from .ops.special_ops import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, betainc, zeta, sobol_sample  # noqa: F401,E402,E501
from . import _math_special as special  # noqa: F401,E402  (tf.math.special)
