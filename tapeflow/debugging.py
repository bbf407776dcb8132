"""tapeflow.debugging: TF's tf.debugging namespace (the assertions, check_numerics, and TF's switches for
traceback filtering and device-placement logging, which tapeflow records: it has one device and its tracebacks
hold no TF runtime frames to filter). tf.debugging.experimental (Debugger V2's dumps) is out of scope."""
from .ops.check_ops import (Assert, assert_equal, assert_none_equal, assert_less, assert_less_equal,  # noqa: F401
                            assert_greater, assert_greater_equal, assert_positive, assert_negative,
                            assert_non_negative, assert_non_positive, assert_rank, assert_shapes, check_numerics,
                            assert_all_finite)
from .ops.check_ops import (assert_rank_at_least, assert_rank_in, assert_scalar, assert_type,  # noqa: F401
                            assert_integer, assert_same_float_dtype, assert_proper_iterable, is_numeric_tensor,
                            assert_near)
from .numerics_checker import enable_check_numerics, disable_check_numerics  # noqa: F401
from ._unsupported import UnsupportedNamespace as _UnsupportedNamespace

experimental = _UnsupportedNamespace("debugging.experimental")

_traceback_filtering = [True]   # TF's default: on


def enable_traceback_filtering():
    """Records the switch (TF drops its own frames from tracebacks; tapeflow's hold only Python's)."""
    _traceback_filtering[0] = True


def disable_traceback_filtering():
    _traceback_filtering[0] = False


def is_traceback_filtering_enabled():
    return _traceback_filtering[0]


def set_log_device_placement(enabled):
    """tf.config.set_log_device_placement's other name (TF 2.21 exports both)."""
    from . import config
    return config.set_log_device_placement(enabled)


def get_log_device_placement():
    from . import config
    return config.get_log_device_placement()
