"""tapeflow.debugging: TF's tf.debugging namespace (the assertions, check_numerics)."""
from .ops.check_ops import (Assert, assert_equal, assert_none_equal, assert_less, assert_less_equal,  # noqa: F401
                            assert_greater, assert_greater_equal, assert_positive, assert_negative,
                            assert_non_negative, assert_non_positive, assert_rank, assert_shapes, check_numerics,
                            assert_all_finite)
from .numerics_checker import enable_check_numerics, disable_check_numerics  # noqa: F401
