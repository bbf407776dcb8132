"""A small ``keras.backend``: float type, epsilon, image data format, unique layer names (and
``get_uid`` on the same counters, as Keras' naming), Keras 3's dtype helpers (``standardize_dtype``,
``result_type`` on its promotion lattice, ``is_float_dtype``/``is_int_dtype``), and Keras 3's L2
normalization (``unit_normalize``) that its losses and layers share."""
from __future__ import annotations

import collections

import numpy as np

_FLOATX = ["float32"]
_EPSILON = [1e-7]
_NAME_UIDS: collections.defaultdict = collections.defaultdict(int)


def floatx():
    return _FLOATX[0]


def set_floatx(value):
    value = str(np.dtype(value))
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"set_floatx: unknown float type {value!r}")
    _FLOATX[0] = value


def epsilon():
    """The fuzz factor of losses (1e-7, as Keras)."""
    return _EPSILON[0]


def set_epsilon(value):
    _EPSILON[0] = float(value)


def backend():
    """The backend Keras runs on: tapeflow ports TF programs, so TF's answer."""
    return "tensorflow"


def image_data_format():
    return "channels_last"


def set_image_data_format(data_format):
    if str(data_format).lower() != "channels_last":
        raise ValueError(f"set_image_data_format({data_format!r}): tapeflow's layers are channels_last only; "
                         "transpose the images to (batch, ..., channels)")


def get_uid(prefix=""):
    """Keras' ``get_uid``: counts calls per prefix (1, 2, ...) on the counters that name layers, so
    ``get_uid("dense")`` after a layer ``dense`` gives 2 and the next layer is ``dense_2``, as Keras."""
    _NAME_UIDS[prefix] += 1
    return _NAME_UIDS[prefix]


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic tensor (``keras.Input``'s and the layers' outputs on it)."""
    from .engine import KerasTensor
    return isinstance(x, KerasTensor)


# Keras 3.15's dtype names (keras.src.backend.common.dtypes.ALLOWED_DTYPES): what standardize_dtype
# accepts as a string. Not int4/uint4: TF 2.21's Keras refuses them ("Invalid dtype: int4").
_KERAS_DTYPES = frozenset((
    "float16", "float32", "float64", "bfloat16", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
    "int64", "bool", "string", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"))
# Python's types as Keras' TF backend names them (int is int64 there, as TF converts it)
_PY_DTYPES = {float: "float32", int: "int64", bool: "bool", str: "string", complex: "complex128"}


def standardize_dtype(dtype):
    """keras.backend/utils.standardize_dtype: a dtype's Keras name. None is floatx(); Python's float,
    int, bool and str are 'float32', 'int64', 'bool' and 'string'; a tf/NumPy dtype (or NumPy scalar
    type) gives its name; anything else is TF 2.21's ``ValueError: Invalid dtype: float``."""
    if dtype is None:
        return floatx()
    if isinstance(dtype, type) and dtype in _PY_DTYPES:
        return _PY_DTYPES[dtype]
    if isinstance(dtype, str) and dtype == "int":      # Keras maps the string "int" as the type int
        return "int64"
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        if isinstance(dtype, str):
            name = dtype
        else:
            try:
                name = np.dtype(dtype).name
            except TypeError:
                name = str(dtype)
    if name not in _KERAS_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return name


def is_float_dtype(dtype):
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    return standardize_dtype(dtype).startswith(("int", "uint"))


# Keras 3's type promotion lattice (JAX's): each type's immediate successors; "int"/"float" are the
# weak types of Python's int and float. The result of several types is their least upper bound.
_LATTICE = {
    "bool": ("int",), "int": ("uint8", "int8", "complex64"), "uint8": ("int16", "uint16"),
    "uint16": ("int32", "uint32"), "uint32": ("int64", "uint64"), "uint64": ("float",),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": ("float",),
    "float": ("bfloat16", "float16"), "bfloat16": ("float32",), "float16": ("float32",),
    "float32": ("float64", "complex64"), "float64": ("complex128",), "complex64": ("complex128",),
    "complex128": ()}


def _upper_bounds():
    ub = {}
    for node in _LATTICE:
        seen, todo = {node}, [node]
        while todo:
            for nxt in _LATTICE[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        ub[node] = seen
    return ub


_UB = _upper_bounds()


def _least_upper_bound(nodes):
    for n in nodes:
        if n not in _UB:
            raise ValueError(f"dtype={n!r} is not a valid dtype for Keras type promotion.")
    common = set.intersection(*(_UB[n] for n in nodes))
    lub = (common & nodes) or {c for c in common if common <= _UB[c]}
    if len(lub) != 1:
        raise ValueError(f"Input dtypes {tuple(nodes)} have no available implicit dtype promotion path. Try "
                         "explicitly casting inputs to the desired output type.")
    return lub.pop()


def result_type(*dtypes):
    """Keras 3's ``backend.result_type`` on dtypes (names, tf/NumPy dtypes, Python's types, None for
    floatx): the least upper bound on Keras' lattice. Python's int and float are weak (they take the
    other operand's type; alone, or with each other, a 32-bit type of floatx's precision); as Keras'
    TF backend, 64-bit results stay 64-bit except uint64 (uint32) and complex128 (complex64). Returns
    the name, as Keras."""
    if not dtypes:
        return floatx()
    for d in dtypes:
        if isinstance(d, str) and d in ("float8_e4m3fn", "float8_e5m2"):
            raise ValueError(f"There is no implicit conversions from float8 dtypes to others. You must cast it "
                             f"internally. Received: {dtypes}")
    args = [floatx() if d is None else d for d in dtypes]
    names = [standardize_dtype(d) for d in args]
    weak = [d is int or d is float for d in args]
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(set(names)), True
    else:
        def as_weak(name, w):
            if not w or name == "bool":
                return name
            return "float" if "float" in name else "int"
        out = _least_upper_bound({as_weak(n, w) for n, w in zip(names, weak)})
        out_weak = out in ("int", "float")
    if out_weak and out != "bool":
        # a weak result takes floatx's precision: float32 -> 'int32'/'float32', float64 -> 64-bit
        bits = floatx()[-2:]
        out = {"i": f"int{bits}", "u": f"uint{bits}", "b": "bool"}.get(
            "f" if out == "bfloat16" else out[0], f"float{bits}")
    return {"uint64": "uint32", "complex128": "complex64"}.get(out, out)


def unique_object_name(base):
    """``dense``, ``dense_1``, ``dense_2``... (as Keras names layers)."""
    n = _NAME_UIDS[base]
    _NAME_UIDS[base] += 1
    return base if n == 0 else f"{base}_{n}"


def unit_normalize(x, axis, max_inv):
    """Keras 3's ``ops.normalize`` (order 2): ``x * min(rsqrt(sum(x^2)), max_inv)`` over ``axis``,
    ``max_inv`` = 1 / epsilon: a zero vector stays 0 (not NaN). (cosine_similarity and Dot take
    Keras' fuzz factor, UnitNormalization 1e-12, as Keras does.)"""
    from ..ops import math_ops as M
    return M.multiply(x, M.minimum(M.rsqrt(M.reduce_sum(M.square(x), axis, keepdims=True)), max_inv))


def clear_session():
    """Reset the layer-name counters (Keras' clear_session)."""
    _NAME_UIDS.clear()


def learning_phase():
    return 0
