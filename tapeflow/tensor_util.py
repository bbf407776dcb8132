"""``tf.make_tensor_proto`` and ``tf.make_ndarray`` (wave 21): a value as TF's ``TensorProto`` message
and back, TF 2.21's rules, so that ``SerializeToString()`` gives TF's bytes.

The message class is the TensorProto of TensorBoard's copy of TF's protos (the same schema,
tensorflow/core/framework/tensor.proto), else tensorboardX's. TF's encoding rules:
a value with as many elements as the requested shape, more than one, is stored as raw
little-endian ``tensor_content`` (numbers other than bool); anything else (a scalar, bools,
strings, a value broadcast to a bigger shape) as the typed repeated field of its dtype
(``float_val``, ``int_val``, ... ``half_val`` for float16 and bfloat16 bits), where a list
shorter than the shape stands for itself followed by copies of its last element.
"""
from __future__ import annotations

import numpy as np

from .core import dtypes as _dt
from .core.tensor import Tensor
from .io import _DT_ENUM, _ENUM_DT
from .util.extras import require

# the typed field each dtype's values go to when not in tensor_content (TF's GetNumpyAppendFn)
_FIELD = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val", "int8": "int_val",
          "uint8": "int_val", "uint16": "int_val", "int64": "int64_val", "uint32": "uint32_val",
          "uint64": "uint64_val", "bool": "bool_val", "float16": "half_val", "bfloat16": "half_val",
          "string": "string_val"}


def _pb():
    # TensorBoard's copy of TF's protos has the whole schema (uint32_val, uint64_val); tensorboardX's
    # (the summary writer's) lacks those two fields, so it is the fallback
    try:
        from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2
    except ImportError:
        require("tensorboardX", "summary", "tf.make_tensor_proto (TensorProto messages)")
        from tensorboardX.proto import tensor_pb2, tensor_shape_pb2
    return tensor_pb2, tensor_shape_pb2


def _values(values, dtype):
    """``values`` as an array of ``dtype`` (None: TF's defaults for Python values), with TF's errors."""
    if values is None:
        raise ValueError("None values not supported.")
    if isinstance(values, Tensor):
        values = values.numpy()
    want = None if dtype is None else _dt.as_dtype(dtype)
    if want is not None and want.is_integer and not isinstance(values, (np.ndarray, np.generic)):
        flat = np.asarray(values, dtype=object).reshape(-1) if not isinstance(values, (int, float, bool)) else [values]
        for v in flat:
            if isinstance(v, float):   # TF 2.21: TypeError "Expected int32, but got 1.5 of type 'float'."
                raise TypeError(f"Expected {want.name}, but got {v!r} of type 'float'.")
    try:
        arr = np.asarray(values) if want is None or want.is_string else np.asarray(values, want.np)
    except ValueError as e:   # a ragged list: NumPy's message, as TF's
        raise ValueError(str(e)) from None
    if want is not None and want.is_string or want is None and arr.dtype.kind in "OUS":
        if arr.dtype.kind == "O" and not all(isinstance(x, (str, bytes)) for x in arr.reshape(-1)):
            raise TypeError(f"Failed to convert elements of {values!r} to Tensor. Consider casting elements to a "
                            "supported type.")
        return _dt.string_array(values), _dt.string
    if want is None:
        if isinstance(values, (np.ndarray, np.generic)):
            d = _dt.as_dtype(arr.dtype)
        else:   # Python values: TF's defaults (float32, int32; int64 for ints outside int32)
            d = _dt.as_dtype(_dt.default_for_python(values))
            if d == _dt.int32 and arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
                d = _dt.int64
        arr = arr.astype(d.np, copy=False)
        return arr, d
    return arr, want


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """``tf.make_tensor_proto``: a TensorProto of ``values`` (a Tensor, NumPy value, Python value),
    optionally of ``dtype`` and ``shape`` (a single value fills the shape; a shorter list is padded
    with its last value, unless ``verify_shape``), as TF 2.21 encodes it."""
    tensor_pb2, tensor_shape_pb2 = _pb()
    arr, d = _values(values, dtype)
    if d.name not in _DT_ENUM:
        raise TypeError(f"make_tensor_proto: dtype {d.name} is not supported")
    if shape is None:
        shape = arr.shape
        same = True
    else:
        shape = tuple(int(s) for s in shape)
        n = int(np.prod(shape, dtype=np.int64))
        if verify_shape and arr.shape != shape:
            raise TypeError(f"Expected Tensor's shape: {shape}, but got {arr.shape}.")
        same = arr.size == n   # (TF: as many values as the shape holds: reshaped, stored as they are)
        if not same and arr.size > n:
            raise ValueError(f"Too many elements provided. Takes at most {n}, but got {arr.size}.")
        if not same and allow_broadcast and arr.size != 1:
            raise TypeError(f"Expected Tensor's shape: {shape}, but got {arr.shape}.")
    proto = tensor_pb2.TensorProto(dtype=_DT_ENUM[d.name], tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in shape]))
    if same and arr.size > 1 and d.name not in ("bool", "string"):
        proto.tensor_content = np.ascontiguousarray(arr, arr.dtype.newbyteorder("<")).tobytes()
        return proto
    flat = arr.reshape(-1)
    field = _FIELD[d.name]
    if d.name in ("float16", "bfloat16"):   # their bits, as int32s (TF's half_val)
        getattr(proto, field).extend(flat.view(np.uint16).astype(np.int32).tolist())
    elif d.name == "string":
        getattr(proto, field).extend([bytes(x) for x in flat])
    else:
        getattr(proto, field).extend(flat.tolist())
    return proto


def make_ndarray(tensor):
    """``tf.make_ndarray``: the NumPy array of a TensorProto (strings as an object array of bytes)."""
    try:
        shape = [d.size for d in tensor.tensor_shape.dim]
        enum = tensor.dtype
    except AttributeError as e:   # TF 2.21: the same AttributeError (e.g. "'int' object has no attribute ...")
        raise AttributeError(str(e)) from None
    name = _ENUM_DT.get(enum)
    if name is None:
        raise TypeError(f"make_ndarray: TensorProto dtype {enum} is not supported")
    d = _dt.as_dtype(name)
    n = int(np.prod(shape, dtype=np.int64))
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, d.np.newbyteorder("<")).astype(d.np).reshape(shape)
    vals = list(getattr(tensor, _FIELD[name]))
    if name == "string":
        out = np.empty(n, object)
        out[:] = (vals + vals[-1:] * n)[:n] if vals else [b""] * n
        return out.reshape(shape)
    if name in ("float16", "bfloat16"):
        bits = np.array(vals, np.uint16)
        vals_arr = bits.view(d.np)
    else:
        vals_arr = np.array(vals, d.np)
    if vals_arr.size == 0:
        return np.zeros(shape, d.np)
    if vals_arr.size < n:   # TF's rule: the last value repeats
        vals_arr = np.concatenate([vals_arr, np.repeat(vals_arr[-1:], n - vals_arr.size)])
    return vals_arr[:n].reshape(shape)


__all__ = ["make_tensor_proto", "make_ndarray"]
