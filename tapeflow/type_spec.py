"""``tf.TypeSpec`` and the specs of TF's core that have no home elsewhere (wave 21).

``TypeSpec`` is the base class of tapeflow's specs, as TF's is of its own: ``TensorSpec``
(compiler/function.py), ``RaggedTensorSpec``, ``SparseTensorSpec``, ``DatasetSpec``/``IteratorSpec``
(data.py), ``ExtensionTypeSpec``, and the ones here: ``NoneTensorSpec``, ``OptionalSpec``,
``TensorArraySpec``, ``IndexedSlicesSpec``. It carries no machinery: each spec keeps its own
equality, compatibility and (for composites) component hooks; the base makes ``isinstance(s,
tf.TypeSpec)`` hold as in TF and refuses to be instantiated itself, as TF's abstract class does.
A plain class, not an ABC: ``isinstance(x, TensorSpec)`` is asked by the compiled-call signature
check, and ABCMeta's instance check costs more than type's.

``IndexedSlices`` is TF's sparse row slices (values, indices, dense_shape). tapeflow's tapes return
dense gradients for gathers (where TF 2.21 returns IndexedSlices): a dense gradient is what every
consumer of a gradient in tapeflow (optimizers, clipping, the lean eager backward, compiled
steps) takes, and changing that everywhere at once is not safe; an IndexedSlices a program makes
itself converts to the dense tensor as TF's does (``convert_to_tensor``: the rows summed into
``dense_shape``), so passing one to an op or an optimizer works.
"""
from __future__ import annotations

import numpy as np

from .core import dtypes as _dt
from .core.tensor import Tensor, TensorShape, convert_to_tensor


class TypeSpec:
    """``tf.TypeSpec``: the base class of every spec (see the module's docstring)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        # TF 2.21's TypeError, word for word
        raise TypeError("Can't instantiate abstract class TypeSpec with abstract methods _component_specs, "
                        "_from_components, _serialize, _to_components, value_type")

    # specs of one class are equal when their ``_key()``s are (a spec without one equals only itself)
    def _key(self):
        return (id(self),)

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())


def _shape(shape):
    if isinstance(shape, TensorShape):   # (TensorShape(TensorShape(None)) would lose the unknown rank)
        return shape
    return TensorShape(None) if shape is None else TensorShape(shape)


def _shape_text(shape):
    """TF's repr of a TensorShape inside a spec's repr: TensorShape([2, None]) or TensorShape(None)."""
    s = _shape(shape)
    return "TensorShape(None)" if s.rank is None else f"TensorShape({list(s)!r})"


def _specs_compatible(a, b):
    """Whether two specs (TensorSpecs or nested ones) can describe the same values."""
    from .compiler.function import TensorSpec
    if isinstance(a, TensorSpec) and isinstance(b, TensorSpec):
        return a.dtype == b.dtype and _shape(a.shape).is_compatible_with(_shape(b.shape))
    if hasattr(a, "is_compatible_with") and type(a) is type(b):
        return a.is_compatible_with(b)
    return a == b


class NoneTensor:
    """TF's NoneTensor: the value of a NoneTensorSpec (a None inside a composite)."""

    def __repr__(self):
        return "NoneTensor()"


class NoneTensorSpec(TypeSpec):
    """``tf.NoneTensorSpec``: the spec of None inside a structure of specs."""

    __slots__ = ()

    def __init__(self):
        pass

    value_type = property(lambda self: NoneTensor)

    def is_compatible_with(self, spec_or_value):
        return spec_or_value is None or isinstance(spec_or_value, (NoneTensorSpec, NoneTensor))

    def most_specific_common_supertype(self, others):
        return self if all(isinstance(o, NoneTensorSpec) for o in others) else None

    def __eq__(self, other):
        return type(other) is NoneTensorSpec

    def __hash__(self):
        return hash(NoneTensorSpec)

    def __repr__(self):
        return "NoneTensorSpec()"


class OptionalSpec(TypeSpec):
    """``tf.OptionalSpec(element_spec)``: the spec of a ``tf.experimental.Optional``."""

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self):
        from .data import Optional
        return Optional

    @staticmethod
    def from_value(value):
        return OptionalSpec(value.element_spec)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value if isinstance(spec_or_value, OptionalSpec) else (
            OptionalSpec.from_value(spec_or_value) if hasattr(spec_or_value, "element_spec") else None)
        if other is None:
            return False
        from .util import nest
        if nest.structure_key(self._element_spec, lambda x: 0) != nest.structure_key(other._element_spec, lambda x: 0):
            return False
        return all(_specs_compatible(a, b) for a, b in zip(nest.flatten(self._element_spec),
                                                           nest.flatten(other._element_spec)))

    def __eq__(self, other):
        return type(other) is OptionalSpec and other._element_spec == self._element_spec

    def __hash__(self):
        from .util import nest
        return hash(("OptionalSpec", tuple(nest.flatten(self._element_spec))))

    def __repr__(self):   # (TF's: its serialization, a 1-tuple)
        return f"OptionalSpec({self._element_spec!r},)"


class TensorArraySpec(TypeSpec):
    """``tf.TensorArraySpec(element_shape=None, dtype=tf.float32, dynamic_size=False, infer_shape=True)``."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=_dt.float32, dynamic_size=False, infer_shape=True):
        self._element_shape = _shape(element_shape)
        self._dtype = _dt.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self):
        from .ops.tensor_array import TensorArray
        return TensorArray

    @staticmethod
    def from_value(value):
        shape = getattr(value, "element_shape", None)
        return TensorArraySpec(None if shape is None or callable(shape) else shape, value.dtype,
                               bool(getattr(value, "_dynamic", False)), True)

    def is_compatible_with(self, other):
        if not isinstance(other, TensorArraySpec):
            return False
        return (self._dtype == other._dtype and self._dynamic_size == other._dynamic_size
                and self._element_shape.is_compatible_with(other._element_shape))

    def _key(self):
        s = self._element_shape
        return (None if s.rank is None else tuple(s), self._dtype, self._dynamic_size, self._infer_shape)

    def __repr__(self):
        return (f"TensorArraySpec({_shape_text(self._element_shape)}, {self._dtype!r}, {self._dynamic_size}, "
                f"{self._infer_shape})")


class IndexedSlicesSpec(TypeSpec):
    """``tf.IndexedSlicesSpec(shape=None, dtype=tf.float32, indices_dtype=tf.int64, dense_shape_dtype=None,
    indices_shape=None)``: the spec of an IndexedSlices."""

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype", "_indices_shape")

    def __init__(self, shape=None, dtype=_dt.float32, indices_dtype=_dt.int64, dense_shape_dtype=None,
                 indices_shape=None):
        self._shape = _shape(shape)
        self._values_dtype = _dt.as_dtype(dtype)
        self._indices_dtype = _dt.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else _dt.as_dtype(dense_shape_dtype)
        self._indices_shape = _shape([None] if indices_shape is None else indices_shape)

    value_type = property(lambda self: IndexedSlices)

    def _key(self):
        def t(s):
            return None if s.rank is None else tuple(s)
        return (t(self._shape), self._values_dtype, self._indices_dtype, self._dense_shape_dtype,
                t(self._indices_shape))

    def is_compatible_with(self, other):
        if isinstance(other, IndexedSlices):
            other = other._type_spec
        return (isinstance(other, IndexedSlicesSpec) and self._values_dtype == other._values_dtype
                and self._indices_dtype == other._indices_dtype
                and self._dense_shape_dtype == other._dense_shape_dtype
                and self._shape.is_compatible_with(other._shape)
                and self._indices_shape.is_compatible_with(other._indices_shape))

    def __repr__(self):
        return (f"IndexedSlicesSpec({_shape_text(self._shape)}, {self._values_dtype!r}, {self._indices_dtype!r}, "
                f"{self._dense_shape_dtype!r}, {_shape_text(self._indices_shape)})")


class IndexedSlices:
    """``tf.IndexedSlices(values, indices, dense_shape=None)``: the rows ``values[i]`` of a tensor of
    shape ``dense_shape`` at rows ``indices[i]`` (a repeated index: the rows add up). As in TF, it
    is not a Tensor: ``tf.convert_to_tensor`` (and so every op) densifies it, summing repeated
    rows (TF's unsorted_segment_sum); without ``dense_shape`` that is TF's ValueError."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = convert_to_tensor(values)
        self._indices = convert_to_tensor(indices)
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    device = property(lambda self: self._values.device)

    @property
    def shape(self):
        """The dense shape where known (TF: from dense_shape's value, else the values' row shape)."""
        if self._dense_shape is not None and self._dense_shape._v is not None:
            return TensorShape([int(d) for d in np.asarray(self._dense_shape._v)])
        return TensorShape([None] + list(self._values.shape)[1:])

    @property
    def _type_spec(self):
        ds = self._dense_shape
        return IndexedSlicesSpec(self.shape, self.dtype, self._indices.dtype, None if ds is None else ds.dtype,
                                 self._indices.shape)

    def _tf_dense(self):
        """The dense tensor (``convert_to_tensor``'s conversion; TF 2.21's message without dense_shape)."""
        if self._dense_shape is None:
            raise ValueError("Tensor conversion requested for IndexedSlices for argument `value` without "
                             f"dense_shape: {self!s}")
        from .ops import segment_ops as S
        return S.unsorted_segment_sum(self._values, self._indices, self._dense_shape[0])

    def __neg__(self):
        from .ops import math_ops as M
        return IndexedSlices(M.negative(self._values), self._indices, self._dense_shape)

    def __str__(self):
        ds = "" if self._dense_shape is None else f", dense_shape={self._dense_shape!s}"
        return f"IndexedSlices(indices={self._indices!s}, values={self._values!s}{ds})"

    def __repr__(self):   # (TF's default object repr)
        return f"<tapeflow.IndexedSlices object at {id(self):#x}>"


__all__ = ["TypeSpec", "NoneTensorSpec", "OptionalSpec", "TensorArraySpec", "IndexedSlices", "IndexedSlicesSpec"]


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    t = value._tf_dense()
    if dtype is not None and t.dtype != dtype:   # (TF's: a conversion does not cast)
        raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices with dtype {t.dtype.name}")
    return t


from .core.tensor import register_tensor_conversion_function  # noqa: E402
register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
