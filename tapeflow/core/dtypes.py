"""dtypes and the promotion rules.

tapeflow's dtypes are thin names over NumPy dtypes (``tapeflow.float32`` etc.).

Promotion rules (enforced by every primitive, eager and traced):

1. Tensors are *strong*: all tensor operands of an op must share one dtype.
   ``float32 + float64`` is a ``TypeError`` that tells you to ``cast`` one
   side. TF does the same; NumPy would silently upcast, which hides precision
   bugs in float32 models. A NumPy operand (array or NumPy scalar) of an op
   whose operands share a dtype (arithmetic, comparisons, matmul, concat: the
   record's ``numpy_operands="adopt"``) takes its tensor peers' dtype, as TF
   converts it: ``x_f32 * np.ones(3)`` is float32. Values the conversion would
   change (an int64 outside int32, a fraction into an integer dtype) are an
   error, where TF wraps or truncates them. Alone, a NumPy value keeps its
   dtype.
2. Python scalars are *weak*: ``x * 2`` and ``x * 0.5`` take ``x``'s dtype
   (NumPy 2's NEP 50 rule). A Python float with an integer tensor is an error
   (it would have to change the tensor's dtype).
3. A value made only of Python scalars gets TF's defaults: ``float`` ->
   float32, ``int`` -> int32, ``bool`` -> bool.

``complex64``/``complex128`` (wave 21) are NumPy's complex dtypes. Only primitives whose record
says ``complex=True`` accept them (core/primitive.py ``Primitive.complex``; the rest refuse with
TF's InvalidArgumentError before the rule runs), so an op whose kernel or gradient was written for
real numbers never meets one. A Python complex scalar is *weak* too: ``z_c64 * 1j`` stays complex64;
alone it is complex128, as TF converts it.

``string`` (TF's tf.string) is a NumPy object array whose elements are ``bytes``, as TF's
``.numpy()`` returns them (str input is UTF-8 encoded, as TF does). Only the primitives whose
record says ``strings=True`` (shape ops, gathers, select, equality, add) accept it; every other
rule refuses it (core/primitive.py ``Primitive.strings``), so NumPy never computes on the objects.
"""
from __future__ import annotations

import builtins as _builtins

import ml_dtypes
import numpy as np


class DType:
    """A tapeflow dtype: compares equal to itself, its NumPy dtype and its name."""

    __slots__ = ("np", "name")

    def __init__(self, np_dtype, name=None):
        self.np = np.dtype(np_dtype)
        self.name = name or self.np.name

    # TF spellings
    @property
    def as_numpy_dtype(self):
        return object if self.np.kind == "O" else self.np.type  # (TF: tf.string.as_numpy_dtype is object)

    @property
    def is_floating(self):
        return self.np.kind == "f" or self.np is BF16

    @property
    def is_integer(self):
        return self.np.kind in "iu"

    @property
    def is_unsigned(self):
        return self.np.kind == "u"   # (TF 2.21: False for tf.bool)

    @property
    def is_complex(self):
        return self.np.kind == "c"

    @property
    def real_dtype(self):
        """TF's real_dtype: the component dtype of a complex dtype, else the dtype itself."""
        return from_np(np.dtype(self.np.char.lower())) if self.np.kind == "c" else self

    @property
    def is_bool(self):
        return self.np.kind == "b"

    @property
    def is_string(self):
        return self.np.kind == "O"

    @property
    def size(self):
        return 0 if self.np.kind == "O" else self.np.itemsize  # (TF: tf.string.size is 0)

    @property
    def min(self):
        self._numeric("minimum")
        return _finfo(self.np).min if self.is_floating else np.iinfo(self.np).min

    @property
    def max(self):
        self._numeric("maximum")
        return _finfo(self.np).max if self.is_floating else np.iinfo(self.np).max

    def _numeric(self, what):
        if self.np.kind in "Oc":  # TF 2.21's TypeError text
            raise TypeError(f"Cannot find {what} value of {self} with type {self}.")

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.np == other.np
        try:
            return self.np == np.dtype(other)
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.np)

    # TF 2.21 prints dtypes two ways, and programs' printed output depends on both:
    # repr (in containers, notebooks) is `tf.float32`, str (print, f-strings) `<dtype: 'float32'>`.
    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType(np.float16)
float32 = DType(np.float32)
float64 = DType(np.float64)
int8 = DType(np.int8)
int16 = DType(np.int16)
int32 = DType(np.int32)
int64 = DType(np.int64)
uint8 = DType(np.uint8)
uint16 = DType(np.uint16)
uint32 = DType(np.uint32)
uint64 = DType(np.uint64)
bool_ = DType(np.bool_)
complex64 = DType(np.complex64)
complex128 = DType(np.complex128)
half, double = float16, float64
#: tf.bfloat16: ml_dtypes' NumPy dtype (the one TF and JAX use; its kind is "V", not "f":
#: ask ``is_float``/``kind`` below, never ``dtype.kind == "f"`` alone, where bfloat16 may come)
bfloat16 = DType(ml_dtypes.bfloat16)
BF16 = bfloat16.np
#: tf.string: an object array of bytes (see the module's docstring)
string = DType(np.object_, "string")
STRING = string.np

_BY_NP = {d.np: d for d in (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
                                  uint64, bool_, complex64, complex128, string)}
#: the numeric dtypes (an array of one is taken as it is; an object array is checked for bytes)
SUPPORTED = tuple(d for d in _BY_NP if d.kind != "O")
FLOATS = (np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64))


def as_dtype(x) -> DType:
    """Normalise a dtype spelling (DType, NumPy dtype/type, 'float32') to a DType."""
    if isinstance(x, DType):
        return x
    if x is float:
        return float32
    if x is int:
        return int32
    if x is bool:
        return bool_
    if x is _builtins.complex:
        return complex128
    if x is str or x is bytes or (isinstance(x, str) and x == "string"):
        return string
    try:
        npd = np.dtype(x)
    except TypeError:
        raise TypeError(f"not a dtype: {x!r}; use e.g. tapeflow.float32") from None
    d = _BY_NP.get(npd)
    if d is None and npd.kind in "US":  # NumPy's text dtypes: TF's tf.string, as tf.as_dtype maps them
        return string
    if d is None:
        raise TypeError(f"dtype {npd} is not supported by tapeflow; supported: "
                        + ", ".join(str(k) for k in _BY_NP))
    return d


def string_array(value, dtype_given=False):
    """``value`` (str, bytes, a nested list of them, a NumPy text or object array) as tf.string's
    array: NumPy object dtype, each element ``bytes`` (str is UTF-8 encoded, as TF encodes it).
    Anything else among the elements is TF's error: ValueError for a sequence of mixed types,
    TypeError for a non-text value given dtype=tf.string."""
    if isinstance(value, bytes):
        out = np.empty((), object)
        out[()] = bytes(value)
        return out
    if isinstance(value, str):
        out = np.empty((), object)
        out[()] = value.encode()
        return out
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        # np.bytes_ drops trailing NULs; tolist gives the bytes NumPy holds (as TF's conversion does)
        arr = np.empty(value.shape, object)
        arr[...] = value.tolist() if value.ndim else value[()]
        return arr
    try:
        arr = np.array(value, dtype=object)
    except ValueError:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    flat = arr.reshape(-1)
    for i, x in enumerate(flat):
        c = x.__class__
        if c is bytes:
            continue
        if isinstance(x, str):
            flat[i] = x.encode()
        elif isinstance(x, bytes):
            flat[i] = bytes(x)
        elif hasattr(x, "numpy") and getattr(x, "dtype", None) == string and not getattr(x, "shape", (1,)):
            flat[i] = x.numpy()   # a 0-d string tensor in a list
        elif isinstance(x, (list, tuple)):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
        elif dtype_given:
            raise TypeError(f"Cannot convert {x!r} to EagerTensor of dtype string")
        elif not any(isinstance(y, (str, bytes)) for y in flat):   # no text at all: not a string tensor
            raise TypeError(f"cannot make a tensor from {type(value).__name__} holding {type(x).__name__} "
                            f"objects: {x!r}")
        else:  # TF 2.21's words for ["a", 1]
            raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    return arr


def np_dtype(x) -> np.dtype:
    """The NumPy dtype for any dtype spelling (None stays None)."""
    return None if x is None else as_dtype(x).np


def from_np(npd) -> DType:
    return _BY_NP.get(npd) or as_dtype(npd)


def is_float(npd) -> bool:
    return npd.kind == "f" or npd is BF16


def differentiable(npd) -> bool:
    """Whether a GradientTape differentiates values of NumPy dtype ``npd``: the floats (bfloat16
    too) and, with TF's convention, the complex dtypes."""
    return npd.kind in "fc" or npd is BF16


def kind(npd) -> str:
    """``npd.kind``, with bfloat16's "V" (a NumPy user dtype) read as "f": for the rules that
    ask which kinds an operand may have."""
    return "f" if npd is BF16 else npd.kind


def _finfo(npd):
    return ml_dtypes.finfo(npd) if npd is BF16 else np.finfo(npd)


def default_for_python(value) -> np.dtype:
    """TF's defaults for values made only of Python scalars (rule 3)."""
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int32)
    if isinstance(value, float):
        return np.dtype(np.float32)
    if isinstance(value, _builtins.complex):   # TF: tf.constant(1j) is complex128 (no float32-like default)
        return np.dtype(np.complex128)
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        return np.dtype(np.float32)
    if arr.dtype == np.int64:
        return np.dtype(np.int32)
    return arr.dtype


def saturate_cast(value, dtype, name=None):
    """tf.dtypes.saturate_cast: tapeflow.saturate_cast (ops/math_ops.py; imported here when called,
    as the ops import this module)."""
    from ..ops.math_ops import saturate_cast as _saturate_cast
    return _saturate_cast(value, dtype, name)


def complex(real, imag, name=None):  # noqa: A001  (TF 2.21: tf.dtypes.complex is tf.complex)
    """tf.dtypes.complex: tapeflow.complex (ops/math_ops.py; imported here when called)."""
    from ..ops.math_ops import complex as _complex
    return _complex(real, imag, name)


# TF names that are out of scope say so (TF1's API, string/complex dtypes), not "no attribute"
from .._unsupported import module_getattr as _module_getattr  # noqa: E402
_unsupported_getattr = _module_getattr("dtypes", "tapeflow.core.dtypes")


def _math_op(op):
    def load():
        from ..ops import math_ops
        return getattr(math_ops, op)
    return load


# tf.dtypes.bool and tf.dtypes.cast (TF 2.21: `tf.dtypes.bool is tf.bool`, `tf.dtypes.cast is tf.cast`);
# resolved on access, not bound: a module global named `bool` would shadow the builtin in this module
# (and math_ops imports this module)
_ALIASES = {"bool": lambda: bool_, "cast": _math_op("cast"),
            # tf.dtypes.experimental: the low-bit dtypes, out of scope (_unsupported.FEATURES)
            "experimental": lambda: __import__("tapeflow._unsupported", fromlist=["x"]).UnsupportedNamespace(
                "dtypes.experimental")}


def __getattr__(name):
    if name in _ALIASES:
        return _ALIASES[name]()
    return _unsupported_getattr(name)
