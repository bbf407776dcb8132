"""tapeflow: TensorFlow-2-style eager deep learning on NumPy, compiled by
``tapeflow.function`` to near-zero-overhead code.

Port a TF2 eager program by changing ``import tensorflow as tf`` to
``import tapeflow as tf``.
"""
import warnings as _warnings

# NumPy's floating-point RuntimeWarnings ("divide by zero encountered in log", "invalid value in
# sqrt") raised inside tapeflow's kernels and compiled code: TF computes the same IEEE results
# (-inf, nan) silently, so a ported program printed warnings that it did not print under TF. The
# filter names tapeflow's modules only (compiled code runs in a namespace named "tapeflow.compiled"),
# so NumPy code of the user's own still warns; tf.debugging.check_numerics is the way to catch them.
# A filter costs nothing until a warning is raised (NumPy's errstate would cost every call).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tapeflow(\.|$)")

from .core import primitives as _primitives  # noqa: F401,E402  (registers the primitive table)
from .core.dtypes import (DType, as_dtype, float16, bfloat16, float32, float64, half, double, int8, int16,  # noqa: F401
                          int32, int64, uint8, uint16, uint32, uint64, bool_ as bool, string,
                          complex64, complex128)
from .core.tensor import Tensor, Variable, TensorShape, constant, convert_to_tensor, is_tensor  # noqa: F401
from .core.tensor import VariableAggregation, VariableSynchronization  # noqa: F401
from .ops.math_ops import *  # noqa: F401,F403
from .ops.math_ops import (add, subtract, multiply, divide, truediv, floordiv, pow, negative, maximum,  # noqa: F401
                           minimum, square, sqrt, rsqrt, exp, log, log1p, expm1, abs, sign, sin, cos, tan, tanh,
                           sigmoid, floor, ceil, round, equal, not_equal, less, less_equal, greater, greater_equal,
                           logical_and, logical_or, logical_xor, logical_not, where, clip_by_value, cast,
                           saturate_cast, stop_gradient, reduce_sum, reduce_mean, reduce_max, reduce_min,
                           reduce_prod, reduce_any, reduce_all, reduce_logsumexp, reduce_std, reduce_variance,
                           argmax, argmin, cumsum, add_n, matmul, einsum, tensordot, squared_difference)
from .ops.array_ops import (zeros, ones, fill, zeros_like, ones_like, range, linspace, eye, one_hot,  # noqa: F401
                            identity, shape, size, rank, reshape, transpose, expand_dims, squeeze, broadcast_to,
                            concat, stack, unstack, split, tile, repeat, pad, reverse, slice, gather, gather_nd,
                            take_along_axis, scatter_nd, tensor_scatter_nd_add, tensor_scatter_nd_update,
                            boolean_mask, argsort, sort, sequence_mask, meshgrid, tensor_scatter_nd_sub,
                            tensor_scatter_nd_max, tensor_scatter_nd_min, roll, searchsorted)
from .autodiff import GradientTape, UnconnectedGradients, custom_gradient, grad, value_and_grad  # noqa: F401
from .autodiff import gradients, hessians, recompute_grad, AggregationMethod  # noqa: F401
from .device import device, list_physical_devices, DeviceSpec  # noqa: F401
from .type_spec import (TypeSpec, NoneTensorSpec, OptionalSpec, TensorArraySpec, IndexedSlices,  # noqa: F401
                        IndexedSlicesSpec)
from .core.tensor import variable_creator_scope, register_tensor_conversion_function  # noqa: F401
from . import math, nn, random, linalg, image, debugging, bitwise, signal  # noqa: F401
from .linalg import norm, clip_by_norm, clip_by_global_norm, global_norm, eig, eigvals  # noqa: F401
from .linalg import sqrtm as matrix_square_root  # noqa: F401  (tf.matrix_square_root: TF 2.21 exports both)
# (tf.fftnd & co. are TF 2.21's raw ops: fft_length and axes required; tf.signal's have defaults)
from .signal import (raw_fftnd as fftnd, raw_ifftnd as ifftnd, raw_rfftnd as rfftnd,  # noqa: F401,E402
                     raw_irfftnd as irfftnd)
from .compiler.function import function, Function, TensorSpec, RetracingWarning  # noqa: F401
from .ir.control_flow import cond, while_loop, fori_loop  # noqa: F401
from .ops.control_flow_ops import scan, foldl, foldr  # noqa: F401  (TF's; JAX's scan is tapeflow.lax.scan)
from . import lax  # noqa: F401
from . import sparse  # noqa: F401,E402
from .sparse import SparseTensor, SparseTensorSpec  # noqa: F401,E402
from .ops.logging_ops import tf_print as print  # noqa: F401
from .util import nest  # noqa: F401
from .ops.context_ops import executing_eagerly, init_scope, name_scope, group, no_op  # noqa: F401
from .ops.context_ops import inside_function, control_dependencies, grad_pass_through  # noqa: F401
from .ops.context_ops import tuple_ as _tuple_op
from .ops.context_ops import current_name_scope as get_current_name_scope  # noqa: F401
from .ops.array_ops import (identity_n, get_static_value, reverse_sequence, broadcast_static_shape,  # noqa: F401
                            broadcast_dynamic_shape, strided_slice, parallel_stack, shape_n, is_symbolic_tensor)
from .ops.math_ops import realdiv, truncatediv, truncatemod  # noqa: F401
from .ops.script_ops import numpy_function, py_function  # noqa: F401
from .ops.tensor_array import TensorArray  # noqa: F401
from .ops.segment_ops import unique, unique_with_counts, histogram_fixed_width, histogram_fixed_width_bins  # noqa: F401,E501
from .ops.control_flow_ops import map_fn, switch_case, case, vectorized_map  # noqa: F401
from .ops.check_ops import Assert, assert_equal, assert_less, assert_greater, assert_rank, ensure_shape  # noqa: F401
from .core import dtypes  # noqa: F401
from .ops.special_ops import (unravel_index, timestamp, guarantee_const, bitcast, dynamic_partition,  # noqa: F401
                               dynamic_stitch, space_to_batch_nd, batch_to_space, required_space_to_batch_paddings,
                               fingerprint)
from .ops.special_ops import check_pinned  # noqa: F401,E402  (wave 22: TF 2.21's CPU behaviour)
from .ops.special_ops import space_to_batch_nd as space_to_batch  # noqa: F401,E402  (TF 2: the same op)
from .ops.random_shuffle_ops import random_index_shuffle  # noqa: F401,E402
from . import errors  # noqa: F401
from .ops.nn_ops import (edit_distance, conv, conv2d_backprop_filter_v2, conv2d_backprop_input_v2,  # noqa: F401,E402
                         extract_volume_patches, approx_top_k)  # (wave 21, nn21)

newaxis = None


from .util.tf_logger import get_logger  # noqa: E402,F401  (tf.get_logger: "tensorflow", TF's handler)
get_logger()   # TF configures its logger's handler at import (a later logging.basicConfig adds to it)

__version__ = "0.1.0"
from .module import Module  # noqa: E402,F401
from . import keras, optimizers  # noqa: E402,F401
from .keras.utils import soft_update  # noqa: E402,F401
from .keras import initializers  # noqa: E402,F401  (tf.initializers)
# TF 2.21: tf.metrics is tf.keras.metrics and tf.losses is tf.keras.losses (the same objects); TF's docs
# reach them by the short names 44 times (tf.metrics.Mean, tf.losses.SparseCategoricalCrossentropy, ...)
from .keras import metrics, losses  # noqa: E402,F401


class version:  # noqa: N801  (tf.version namespace)
    """``tf.version``: tapeflow's own version (``tf.__version__``), not TF's. The GraphDef versions are
    TF 2.21's (tapeflow writes no GraphDef; programs print them or compare them as TF reports them)."""
    VERSION = __version__
    GIT_VERSION = "unknown"   # TF's value when a build does not know its commit
    COMPILER_VERSION = __import__("platform").python_compiler()
    GRAPH_DEF_VERSION = 2474          # TF 2.21's
    GRAPH_DEF_VERSION_MIN_CONSUMER = 0
    GRAPH_DEF_VERSION_MIN_PRODUCER = 0
# TF2's top-level initializer names are the Keras initializers with the same defaults
from .keras.initializers import (RandomNormal as random_normal_initializer,  # noqa: E402,F401
                                 RandomUniform as random_uniform_initializer, Zeros as zeros_initializer,
                                 Ones as ones_initializer, Constant as constant_initializer,
                                 TruncatedNormal as truncated_normal_initializer,
                                 GlorotUniform as glorot_uniform_initializer)


# tf.train / tf.summary / tf.profile / tf.rl load on first use (PEP 562): they
# pull in safetensors and TensorBoard's writer, which `import tapeflow` should not pay for.
_LAZY_SUBMODULES = {"train", "summary", "profiler", "rl", "data", "config", "autograph", "types", "eager",
                    "experimental", "saved_model", "distribute", "strings", "ragged", "io", "lookup"}


# tf.tuple shadows Python's tuple in this module's namespace: bound here, after every use of it
tuple = _tuple_op  # noqa: A001

# wave 20 (api20): tf.test, tf.audio and tf.sets load on first use too
_LAZY_SUBMODULES |= {"test", "audio", "sets"}
# wave 21: tf.compat (its helpers, v1's TF2-usable names, v2 = tapeflow) on first use
_LAZY_SUBMODULES |= {"compat"}
# wave 24: tf.quantization's fake-quantization ops (quantization-aware training) on first use
_LAZY_SUBMODULES |= {"quantization"}
# wave 25 (api25): tf.sysconfig's get_build_info (its C++ build flags refused by name)
_LAZY_SUBMODULES |= {"sysconfig"}


def __getattr__(name):
    import importlib
    if name in _LAZY_SUBMODULES:
        mod = importlib.import_module(f".{name}", __name__)
        globals()[name] = mod
        return mod
    if name == "profile":
        from .profiler import profile as p
        globals()["profile"] = p
        return p
    if name == "type_spec_from_value":   # (with tf.experimental's extension types)
        from .extension_type import type_spec_from_value as f
        globals()[name] = f
        return f
    if name in ("RaggedTensor", "RaggedTensorSpec", "ragged_fill_empty_rows", "ragged_fill_empty_rows_grad"):
        # (tf.ragged loads on first use; TF 2.21 exports its RaggedFillEmptyRows raw op and its
        # gradient op at the top level)
        from . import ragged
        globals()[name] = getattr(ragged, name)
        return globals()[name]
    if name in ("make_tensor_proto", "make_ndarray"):   # (TensorProto messages: tensorboardX's protos, on first use)
        from . import tensor_util
        globals()[name] = getattr(tensor_util, name)
        return globals()[name]
    if name == "as_string":   # tf.as_string is tf.strings.as_string (TF 2.21); tf.strings loads on first use
        from .strings import as_string
        globals()[name] = as_string
        return as_string
    from ._unsupported import FEATURES, NAMES, UnsupportedNamespace, unsupported_name
    if name in FEATURES:   # out-of-scope TF namespaces: their use names the feature
        return UnsupportedNamespace(name)
    if name in NAMES:
        raise unsupported_name(name)
    raise AttributeError(f"module 'tapeflow' has no attribute {name!r}")
