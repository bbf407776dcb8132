"""``tf.experimental.ExtensionType``: user-defined tensor-like records (TF 2.21's rules).

A subclass declares typed fields with annotations (``values: tf.Tensor``); the class gets TF's
generated ``__init__`` (each field converted and type-checked: Python lists to Tensors, lists to
tuples, mappings to an ``ImmutableDict``), ``__validate__``, ``__repr__``, ``__eq__``/``__ne__``,
immutability outside the constructor, and a nested ``Spec`` class (its TypeSpec; a user's own
``class Spec:`` body is kept and the generated spec added beneath it, as TF does).

An extension type is a composite value (``core/primitive.py``'s ``CompositeTensor``):

* in ``tapeflow.function`` it follows ``compiler/function.py``'s composite protocol
  (``_tf_components`` / ``_tf_static`` / ``_tf_from_components``): its tensor leaves are the traced
  inputs, the rest of its value (the class, its non-tensor fields, the structure) is part of the
  cache key, so a new value of the same spec shares the trace, as TF's TypeSpec does. Specs follow
  the composite-spec protocol a RaggedTensorSpec follows (``_tf_component_specs`` / ``_tf_static`` /
  ``_tf_composite_class``) in an ``input_signature`` or ``get_concrete_function``, at any depth.
* as an operand of a primitive (``tf.abs(mt)``, ``tf.math.add(a, b)``) it misses ``bind``'s
  Tensor fast path; ``eager_apply`` (and, while tracing, the tracer's operand conversion, once it
  failed) hand the call to ``_bind_composite``, which consults the handlers registered with
  ``dispatch_for_unary/binary_elementwise_apis``. Public ops with a composite form catch
  ``CompositeOperand`` and consult ``dispatch_for_api``'s table (``api_dispatch``). The dense path
  never looks at either table.
"""
from __future__ import annotations

import collections.abc as _abc
import inspect
import types
import typing

import numpy as np

from .core import dtypes as _dt
from .core.primitive import CompositeTensor, CompositeOperand, bind
from .core.tensor import Tensor, TensorShape, Variable, convert_to_tensor
from .type_spec import TypeSpec

__all__ = ["ExtensionType", "BatchableExtensionType", "ExtensionTypeSpec", "BatchableExtensionTypeSpec",
           "AnonymousExtensionType", "ImmutableDict", "type_spec_from_value", "dispatch_for_api", "dispatch_for_unary_elementwise_apis",
           "dispatch_for_binary_elementwise_apis", "unregister_dispatch_for"]

_MUTATE = "Cannot mutate attribute `{}` outside the custom constructor of {}."


class ImmutableDict(_abc.Mapping):
    """TF's ImmutableDict: the value of a ``Mapping[...]`` field (no item assignment)."""

    __slots__ = ("_d",)

    def __init__(self, *args, **kwargs):
        # (through the slot's descriptor: this class's own __setattr__ refuses every write)
        ImmutableDict._d.__set__(self, dict(*args, **kwargs))

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __repr__(self):
        return f"ImmutableDict({self._d!r})"

    def __setattr__(self, name, value):
        raise AttributeError(f"'ImmutableDict' object has no attribute {name!r}")


# -- field types -------------------------------------------------------------------------------------

def _origin(t):
    o = typing.get_origin(t)
    return typing.Union if o is types.UnionType else o   # (X | None is Optional[X])


def _type_name(t):
    if isinstance(t, type):
        return t.__name__
    return str(t)


def _is_ext(t):
    return isinstance(t, type) and issubclass(t, ExtensionType)


def _check_annotation(t, name):
    """TF's class-definition check: an unsupported annotation is a TypeError naming the field."""
    origin = _origin(t)
    if origin is not None:
        if origin in (tuple, typing.Union, _abc.Mapping, dict) or origin is getattr(typing, "Mapping", None):
            for a in typing.get_args(t):
                if a is not Ellipsis:
                    _check_annotation(a, name)
            return
        raise TypeError(f"In field {name!r}: Unsupported type annotation {t!r}")
    if isinstance(t, (str, typing.ForwardRef)) or t is type(None):
        return   # (a forward reference: TF refuses it when a value meets it, as here)
    if t in (int, float, str, bool, bytes) or t is TensorShape or t is _dt.DType:
        return
    if isinstance(t, type) and (issubclass(t, (Tensor, CompositeTensor)) or _is_composite_class(t)):
        return
    raise TypeError(f"In field {name!r}: Unsupported type annotation {_type_name(t)!r}")


def _is_composite_class(t):
    from .sparse import SparseTensor
    return issubclass(t, SparseTensor)


def _convert(t, value, path):
    """``value`` converted to the field type ``t`` (TF's extension_type_field conversions), or a
    TypeError naming the field path and the types."""
    origin = _origin(t)
    if origin is typing.Union:
        for a in typing.get_args(t):
            try:
                return _convert(a, value, path)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
        args = typing.get_args(t)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if args == ((),):
            args = ()
        if len(args) != len(value):
            raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r} of length {len(value)}")
        return tuple(_convert(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if origin is not None and origin in (_abc.Mapping, dict):
        if not isinstance(value, _abc.Mapping):
            raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
        kt, vt = typing.get_args(t) or (typing.Any, typing.Any)
        return ImmutableDict((_convert(kt, k, f"{path}"), _convert(vt, v, f"{path}[{k!r}]"))
                             for k, v in value.items())
    if t is typing.Any:
        return value
    if isinstance(t, (str, typing.ForwardRef)):
        ref = t if isinstance(t, typing.ForwardRef) else typing.ForwardRef(t)
        raise TypeError(f"{path}: Unsupported type annotation {ref!r}")
    if t is type(None):
        if value is not None:
            raise TypeError(f"{path}: expected 'NoneType', got {type(value).__name__!r}")
        return None
    if isinstance(t, type) and issubclass(t, Tensor):
        if isinstance(value, Variable):
            return value.read_value()
        if isinstance(value, Tensor):
            return value
        if value is None or isinstance(value, (CompositeTensor, ExtensionType)) or not _convertible(value):
            raise TypeError(f"{path}: expected a Tensor, got {type(value).__name__!r}")
        try:
            return convert_to_tensor(value)
        except (TypeError, ValueError):
            raise TypeError(f"{path}: expected a Tensor, got {type(value).__name__!r}") from None
    if t is TensorShape:
        if isinstance(value, TensorShape):
            return value
        try:
            return TensorShape(None if value is None else [None if d is None else int(d) for d in value])
        except TypeError:
            raise TypeError(f"{path}: expected 'TensorShape', got {type(value).__name__!r}") from None
    if t is _dt.DType:
        try:
            return _dt.as_dtype(value)
        except (TypeError, ValueError, KeyError):
            raise TypeError(f"{path}: expected 'DType', got {type(value).__name__!r}") from None
    if t is float and isinstance(value, float) or t is int and isinstance(value, int) or \
            t in (str, bool, bytes) and isinstance(value, t):
        return value
    if t in (int, float, str, bool, bytes):
        raise TypeError(f"{path}: expected {t.__name__!r}, got {type(value).__name__!r}")
    if isinstance(t, type) and isinstance(value, t):
        return value
    raise TypeError(f"{path}: expected {_type_name(t)!r}, got {type(value).__name__!r}")


def _convertible(value):
    return isinstance(value, (int, float, bool, str, bytes, list, tuple, range, np.ndarray, np.generic))


# -- the value's structure: components and static parts (compiler/function.py's protocol) ------------

def _decompose(value, comps):
    """A hashable description of ``value`` with each tensor leaf replaced by its slot (appended to
    ``comps``): the static half of TF's (TypeSpec, components)."""
    if isinstance(value, Tensor):
        comps.append(value)
        return ("T",)
    if isinstance(value, ExtensionType):
        return ("E", type(value), tuple(_decompose(getattr(value, f), comps) for f in type(value)._tf_fields))
    if isinstance(value, TensorShape):   # (a tuple too: first)
        return ("shape", None if value.rank is None else tuple(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_decompose(v, comps) for v in value))
    if isinstance(value, ImmutableDict):
        return ("map", tuple((k, _decompose(v, comps)) for k, v in value.items()))
    if hasattr(type(value), "_tf_from_components"):   # another composite (a SparseTensor)
        sub = tuple(value._tf_components())
        comps.extend(sub)
        return ("C", type(value), value._tf_static(), len(sub))
    return ("py", value)


def _compose(static, it):
    kind = static[0]
    if kind == "T":
        return next(it)
    if kind == "E":
        cls = static[1]
        return cls._tf_from_fields(dict(zip(cls._tf_fields, [_compose(s, it) for s in static[2]])))
    if kind == "tuple":
        return tuple(_compose(s, it) for s in static[1])
    if kind == "map":
        return ImmutableDict((k, _compose(s, it)) for k, s in static[1])
    if kind == "C":
        return static[1]._tf_from_components(static[2], tuple(next(it) for _ in range(static[3])))
    if kind == "shape":
        return TensorShape(static[1] if static[1] is None else list(static[1]))
    return static[1]


class _Static:
    """The static half of a value (its class, structure and Python fields): a leaf of a
    tapeflow.function cache key, compared by value (TF's TypeSpec equality), through the
    ``__tf_tracing_type__`` protocol, so the key's walk does not look inside it."""

    __slots__ = ("value", "_h")

    def __init__(self, value):
        self.value = value
        self._h = hash(value)

    def __tf_tracing_type__(self, context):
        return self

    def placeholder_value(self, placeholder_context=None):
        return self

    def __eq__(self, other):
        return isinstance(other, _Static) and self._h == other._h and self.value == other.value

    def __hash__(self):
        return self._h

    def __repr__(self):
        return f"<spec {self.value[1].__qualname__}>" if self.value[0] == "E" else repr(self.value)


# -- the class ---------------------------------------------------------------------------------------

class ExtensionType(CompositeTensor):
    """TF's ``tf.experimental.ExtensionType``: subclass it with annotated fields."""

    _tf_fields = ()           # field names, base classes' first (TF's order)
    _tf_field_types = {}
    _tf_defaults = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_tf_abstract"):   # (BatchableExtensionType itself)
            return
        own = cls.__dict__.get("__annotations__", {})
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # noqa: BLE001 -- a forward reference to a class not defined yet
            hints = {}
        fields = list(cls._tf_fields)
        types = dict(cls._tf_field_types)
        defaults = dict(cls._tf_defaults)
        for name, ann in own.items():
            if name.startswith("_tf_") or name in ("__name__",):
                continue
            t = hints.get(name, ann)
            _check_annotation(t, name)
            if name not in fields:
                fields.append(name)
            types[name] = t
            if name in cls.__dict__:
                default = cls.__dict__[name]
                defaults[name] = default
                delattr(cls, name)   # (the instance's value, not a class attribute, answers it)
            else:
                defaults.pop(name, None)
        cls._tf_fields = tuple(fields)
        cls._tf_field_types = types
        cls._tf_defaults = defaults
        if "__init__" in cls.__dict__:
            cls.__init__ = _custom_init(cls.__dict__["__init__"])
        else:
            cls.__init__ = _generated_init(cls)
        cls.__signature__ = None
        cls.Spec = _make_spec(cls)
        _register(cls)

    def __new__(cls, *args, **kwargs):
        if cls is ExtensionType or cls is BatchableExtensionType:
            raise AssertionError(f"Cannot create an instance of {cls.__name__} because {cls.__name__} is an "
                                 "abstract base class.")
        return object.__new__(cls)

    @classmethod
    def _tf_from_fields(cls, values):
        """A value from already converted fields: no ``__init__`` (a custom one may take other
        arguments) and no ``__validate__`` (TF rebuilds values from components so too)."""
        self = object.__new__(cls)
        d = self.__dict__
        d.update(values)
        return self

    def _tf_set_fields(self, values):
        """Convert and type-check the fields set by a constructor, then ``__validate__``."""
        d = self.__dict__
        missing = [f for f in type(self)._tf_fields if f not in values]
        if missing:
            raise ValueError(f"Missing required fields: {set(missing)}")
        for f in type(self)._tf_fields:
            d[f] = _convert(type(self)._tf_field_types[f], values[f], f)
        self.__validate__()

    def __validate__(self):
        pass

    def __setattr__(self, name, value):
        if self.__dict__.get("_tf_building"):
            self.__dict__[name] = value
            return
        raise AttributeError(_MUTATE.format(name, "ExtensionType"))

    def __delattr__(self, name):
        raise AttributeError(_MUTATE.format(name, "ExtensionType"))

    def __repr__(self):
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in type(self)._tf_fields)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other):
        # TF 2.21: False (a Python bool) for another type or spec; else a scalar bool tensor, all
        # the tensor leaves equal with equal shapes (broadcasting values are not equal)
        if type(self) is not type(other):
            return False
        a, b = [], []
        if _decompose(self, a) != _decompose(other, b):
            return False
        if any(tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype for x, y in zip(a, b)):
            return False
        from .ops import math_ops as M
        conds = [M.reduce_all(M.equal(x, y)) for x, y in zip(a, b)]
        if not conds:
            return convert_to_tensor(True)
        from .ops import array_ops as A
        return M.reduce_all(A.stack(conds))

    def __ne__(self, other):
        eq = self.__eq__(other)
        if isinstance(eq, Tensor):
            from .ops import math_ops as M
            return M.logical_not(eq)
        return not eq

    __hash__ = None

    # -- the composite protocol (compiler/function.py) ---------------------------------------------
    def _tf_components(self):
        comps = []
        _decompose(self, comps)
        return tuple(comps)

    def _tf_static(self):
        return _Static(_decompose(self, []))

    @classmethod
    def _tf_from_components(cls, static, components):
        return _compose(static.value, iter(components))

    @classmethod
    def _tf_spec(cls, static, specs):
        """The Spec of a trace's component TensorSpecs (signature texts)."""
        return _spec_compose(static.value, iter(specs))

    @property
    def _type_spec(self):
        return _spec_of(self)

    # -- operands of primitives: the elementwise dispatch tables -----------------------------------
    @classmethod
    def _bind_composite(cls, p, args, params):
        r = _elementwise_dispatch(p, args, params)
        if r is NotImplemented:
            raise ExtensionTypeOperand(p.name, next(a for a in args if isinstance(a, ExtensionType)))
        return r


# -- registration: the name a SavedModel records (TF 2.21's type_spec_registry) ----------------------
#: registered name ("pkg.MaskedTensor.Spec") -> the class. TF registers a class that sets
#: ``__name__ = "pkg.MaskedTensor"`` in its body (and only such a class: a SavedModel cannot name
#: the others, so saving a function that takes or returns one fails, as TF's NotEncodableError)
_REGISTERED = {}


def _register(cls):
    name = cls.__dict__.get("__name__")
    if not isinstance(name, str):
        return
    key = name + ".Spec"
    old = _REGISTERED.get(key)
    if old is not None and old is not cls:
        # TF 2.21: ValueError("Name foo.A.Spec has already been registered for class __main__.A.Spec.")
        raise ValueError(f"Name {key} has already been registered for class {old.__module__}.{old.__qualname__}.Spec.")
    _REGISTERED[key] = cls


def registered_name(cls):
    """The name a SavedModel records for ``cls``'s values and specs (``cls.__name__ + ".Spec"`` as the
    class body set ``__name__``), or None for a class TF would not register."""
    if cls.__dict__.get("_tf_anonymous"):
        return "tf.AnonymousExtensionType.Spec"
    name = cls.__dict__.get("__name__")
    return name + ".Spec" if isinstance(name, str) and _REGISTERED.get(name + ".Spec") is cls else None


def lookup_registered(name, fields):
    """The class registered under ``name`` (a SavedModel being loaded), or, as TF 2.21 does for a name
    this process has not registered (its module not imported), an ``AnonymousExtensionType`` class of
    those fields, with TF's UserWarning."""
    cls = _REGISTERED.get(name)
    if cls is not None and tuple(cls._tf_fields) == tuple(fields):
        return cls
    if name != "tf.AnonymousExtensionType.Spec":
        import warnings
        why = "has not been registered" if cls is None else \
            f"is registered with the fields {list(cls._tf_fields)}, not the saved {list(fields)}"
        warnings.warn(f"The type {name!r} {why}. Falling back to using AnonymousExtensionTypeSpec instead.",
                      UserWarning, stacklevel=1)   # (one place: Python shows it once, as TF's)
    return AnonymousExtensionType._class_for(tuple(fields))


class ExtensionTypeOperand(CompositeOperand, ValueError):
    """An extension type where an op needs a tensor and no dispatch handler takes it: TF 2.21's
    ValueError (and a CompositeOperand, which the public ops with a dispatch table catch)."""

    def __init__(self, op, value):
        TypeError.__init__(self, f"{op}: does not accept a {type(value).__name__} operand: Attempt to convert a value "
                                 f"({value!r}) with an unsupported type ({type(value)}) to a Tensor. Register a "
                                 "handler (tf.experimental.dispatch_for_unary_elementwise_apis, "
                                 "dispatch_for_binary_elementwise_apis, dispatch_for_api) or pass its tensor fields")


def _custom_init(init):
    def __init__(self, *args, **kwargs):
        d = self.__dict__
        d["_tf_building"] = True
        try:
            init(self, *args, **kwargs)
        finally:
            del d["_tf_building"]
        values = {f: d[f] for f in type(self)._tf_fields if f in d}
        for f in type(self)._tf_fields:
            if f not in values and f in type(self)._tf_defaults:
                values[f] = type(self)._tf_defaults[f]
        self._tf_set_fields(values)
    __init__.__wrapped__ = init
    __init__.__doc__ = init.__doc__
    return __init__


def _generated_init(cls):
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for f in cls._tf_fields:
        default = cls._tf_defaults.get(f, inspect.Parameter.empty)
        params.append(inspect.Parameter(f, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    try:
        sig = inspect.Signature(params)
    except ValueError as e:   # a field without a default after one with a default
        raise TypeError(f"{cls.__name__}: {e}") from None

    def __init__(self, *args, **kwargs):
        ba = sig.bind(self, *args, **kwargs)
        ba.apply_defaults()
        values = dict(ba.arguments)
        del values["self"]
        self._tf_set_fields(values)
    __init__.__signature__ = sig
    return __init__


class BatchableExtensionType(ExtensionType):
    """TF's ``tf.experimental.BatchableExtensionType``: an extension type whose values stack along a
    new leading axis (``tf.data`` batching, ``tf.map_fn``): each tensor leaf gets the batch axis, and a
    ``tf.TensorShape`` field (the batch shape) gets the batch size in front."""

    _tf_abstract = True


class AnonymousExtensionType(ExtensionType):
    """TF's fallback for an extension type a SavedModel names but this process has not registered
    (``tensorflow.python.framework.extension_type.AnonymousExtensionType``): the saved fields, no
    methods. ``AnonymousExtensionType(values=..., mask=...)`` builds one (a class per field set, made
    on first use, so values of the same fields share a spec and a loaded function's trace)."""

    _tf_abstract = True
    _classes = {}

    def __new__(cls, *args, **kwargs):
        if cls is AnonymousExtensionType:
            if args:
                raise TypeError("AnonymousExtensionType takes keyword arguments only (its fields)")
            return object.__new__(AnonymousExtensionType._class_for(tuple(kwargs)))
        return object.__new__(cls)

    def __init__(self, **fields):
        d = self.__dict__
        for f in type(self)._tf_fields:
            v = fields[f]
            if isinstance(v, (np.ndarray, np.generic, list)):
                v = convert_to_tensor(v)
            elif not isinstance(v, (Tensor, CompositeTensor, TensorShape, _dt.DType, tuple, ImmutableDict,
                                    str, bytes, bool, int, float, type(None))):
                raise TypeError(f"AnonymousExtensionType: field {f!r} must be a tensor, an extension type or an "
                                f"immutable Python value, got {type(v).__name__!r}")
            d[f] = v

    def __setattr__(self, name, value):
        raise AttributeError(f"Cannot set attribute `{name}`. AnonymousExtensionType instances are immutable.")

    @staticmethod
    def _class_for(fields):
        cls = AnonymousExtensionType._classes.get(fields)
        if cls is None:
            ns = {"__annotations__": {}, "_tf_anonymous": True, "__qualname__": "AnonymousExtensionType",
                  "__module__": __name__, "__init__": AnonymousExtensionType.__init__}
            cls = type("AnonymousExtensionType", (AnonymousExtensionType,), ns)
            # the fields take any value (TF's fallback keeps what was saved), so no annotations
            cls._tf_fields = tuple(fields)
            cls._tf_field_types = {f: typing.Any for f in fields}
            cls.__init__ = AnonymousExtensionType.__init__
            cls.Spec.__qualname__ = "AnonymousExtensionTypeSpec"
            cls.Spec._tf_fields = cls._tf_fields
            AnonymousExtensionType._classes[fields] = cls
        return cls


# -- specs -------------------------------------------------------------------------------------------

class ExtensionTypeSpec(TypeSpec):
    """TF's ``tf.experimental.ExtensionTypeSpec``: the TypeSpec of an extension type. Its fields
    are the value's, with a TensorSpec for each tensor and a nested spec for each nested value."""

    value_type = None   # set on each generated spec class
    _tf_fields = ()

    def __setattr__(self, name, value):
        if self.__dict__.get("_tf_building"):
            self.__dict__[name] = value
            return
        raise AttributeError(_MUTATE.format(name, "ExtensionTypeSpec"))

    def __delattr__(self, name):
        raise AttributeError(_MUTATE.format(name, "ExtensionTypeSpec"))

    def __repr__(self):
        def text(v):
            if isinstance(v, ImmutableDict):
                return "{" + ", ".join(f"{k!r}: {text(x)}" for k, x in v.items()) + "}"
            if isinstance(v, tuple) and not isinstance(v, TensorShape):
                return "(" + ", ".join(text(x) for x in v) + ("," if len(v) == 1 else "") + ")"
            return repr(v)
        fields = ", ".join(f"{f}={text(self.__dict__.get(f))}" for f in self._tf_fields)
        return f"{type(self).__qualname__}({fields})"

    def _tf_key(self):
        return _spec_key(self)

    def __eq__(self, other):
        return type(self) is type(other) and self._tf_key() == other._tf_key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._tf_key())

    @classmethod
    def from_value(cls, value):
        return _spec_of(value)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value if isinstance(spec_or_value, ExtensionTypeSpec) else _spec_of(spec_or_value)
        if type(other) is not type(self):
            return False
        a, b = [], []
        if _spec_decompose(self, a) != _spec_decompose(other, b):
            return False
        return all(_tensor_spec_compatible(x, y) for x, y in zip(a, b))

    # -- the composite-spec protocol of tapeflow.function (compiler/function.py _spec_parts): a
    # value of this spec is traced as _tf_component_specs()' tensors, its _tf_static() in the key
    _tf_composite_class = property(lambda self: self.value_type)

    def _tf_spec_components(self):
        """(static, TensorSpecs): the static half matches _decompose of every value of this spec."""
        specs = []
        return _Static(_spec_decompose(self, specs)), specs

    def _tf_static(self):
        return self._tf_spec_components()[0]

    def _tf_component_specs(self):
        return tuple(self._tf_spec_components()[1])

    def _tf_mismatch(self, fn_name, arg_name, value):
        """TF 2.21's TypeError for a call whose argument is not of this spec."""
        from .compiler.function import type_spec_text
        return TypeError(f"Binding inputs to tf.function {fn_name!r} failed: can not cast {type_spec_text(value)} "
                         f"to {self!r} (argument {arg_name!r})")


class BatchableExtensionTypeSpec(ExtensionTypeSpec):
    """The spec of a BatchableExtensionType."""


def _tensor_spec_compatible(a, b):
    if a.dtype != b.dtype:
        return False
    if a.shape is None or b.shape is None:
        return True
    return len(a.shape) == len(b.shape) and all(x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def _make_spec(cls):
    user = cls.__dict__.get("Spec")
    base = BatchableExtensionTypeSpec if issubclass(cls, BatchableExtensionType) else ExtensionTypeSpec
    bases = (base,)
    if user is not None and isinstance(user, type) and not issubclass(user, ExtensionTypeSpec):
        bases = (user, base)
    ns = {"value_type": cls, "_tf_fields": cls._tf_fields, "__module__": cls.__module__,
          "__qualname__": f"{cls.__qualname__}.Spec"}
    if user is not None and "__init__" in getattr(user, "__dict__", {}):
        uinit = user.__dict__["__init__"]

        def __init__(self, *args, **kwargs):
            d = self.__dict__
            d["_tf_building"] = True
            try:
                uinit(self, *args, **kwargs)
            finally:
                del d["_tf_building"]
        ns["__init__"] = __init__
    else:
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        params += [inspect.Parameter(f, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     default=cls._tf_defaults.get(f, inspect.Parameter.empty))
                   for f in cls._tf_fields]
        sig = inspect.Signature(params)
        types = cls._tf_field_types

        def __init__(self, *args, **kwargs):
            ba = sig.bind(self, *args, **kwargs)
            ba.apply_defaults()
            d = self.__dict__
            for f in cls._tf_fields:
                d[f] = _convert_spec(types[f], ba.arguments[f], f)
        __init__.__signature__ = sig
        ns["__init__"] = __init__
    return type("Spec", bases, ns)


def _convert_spec(t, value, path):
    """A Spec constructor's field: a TensorSpec where the value has a Tensor (TF's checks)."""
    from .compiler.function import TensorSpec
    origin = _origin(t)
    if origin is typing.Union:
        for a in typing.get_args(t):
            try:
                return _convert_spec(a, value, path)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
    if origin is tuple:
        args = typing.get_args(t)
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert_spec(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        return tuple(_convert_spec(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    if origin is not None and origin in (_abc.Mapping, dict):
        if not isinstance(value, _abc.Mapping):
            raise TypeError(f"{path}: expected {t}, got {type(value).__name__!r}")
        vt = (typing.get_args(t) or (None, typing.Any))[1]
        return ImmutableDict((k, _convert_spec(vt, v, f"{path}[{k!r}]")) for k, v in value.items())
    if isinstance(t, type) and issubclass(t, Tensor):
        if not isinstance(value, TensorSpec):
            raise TypeError(f"{path}: expected a TensorSpec, got {type(value).__name__!r}")
        return value
    if _is_ext(t):
        if not isinstance(value, t.Spec):
            raise TypeError(f"{path}: expected a {t.__qualname__}.Spec, got {type(value).__name__!r}")
        return value
    if isinstance(t, type) and issubclass(t, CompositeTensor):
        return value   # (a RaggedTensorSpec / SparseTensorSpec: taken as given)
    return _convert(t, value, path)


def _spec_of(value):
    """The spec of a field value (a TensorSpec for a tensor, a nested Spec for an extension type)."""
    from .compiler.function import TensorSpec
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, ExtensionType):
        cls = type(value)
        spec = object.__new__(cls.Spec)
        spec.__dict__.update({f: _spec_of(getattr(value, f)) for f in cls._tf_fields})
        return spec
    if isinstance(value, tuple) and not isinstance(value, TensorShape):
        return tuple(_spec_of(v) for v in value)
    if isinstance(value, ImmutableDict):
        return ImmutableDict((k, _spec_of(v)) for k, v in value.items())
    return type_spec_from_value(value) if isinstance(value, CompositeTensor) else value


def _spec_decompose(spec, specs):
    """As _decompose, on a spec: TensorSpecs are the component slots."""
    from .compiler.function import TensorSpec
    if isinstance(spec, TensorSpec):
        specs.append(spec)
        return ("T",)
    if isinstance(spec, ExtensionTypeSpec):
        cls = spec.value_type
        return ("E", cls, tuple(_spec_decompose(spec.__dict__.get(f), specs) for f in cls._tf_fields))
    if isinstance(spec, tuple) and not isinstance(spec, TensorShape):
        return ("tuple", tuple(_spec_decompose(v, specs) for v in spec))
    if isinstance(spec, ImmutableDict):
        return ("map", tuple((k, _spec_decompose(v, specs)) for k, v in spec.items()))
    if isinstance(spec, TensorShape):
        return ("shape", None if spec.rank is None else tuple(spec))
    if hasattr(spec, "value_type") and hasattr(spec.value_type, "_tf_from_components"):
        raise NotImplementedError(f"tapeflow.function: a {type(spec).__name__} inside an extension type's "
                                  "spec is not supported in input_signature (pass the value instead)")
    return ("py", spec)


def _spec_key(spec):
    specs = []
    static = _spec_decompose(spec, specs)
    return static, tuple((s.shape, s.dtype) for s in specs)


def type_spec_from_value(value):
    """``tf.type_spec_from_value``: the TypeSpec of a value (a TensorSpec for a tensor or a value
    convertible to one, an extension type's Spec, a RaggedTensorSpec, a SparseTensorSpec)."""
    from .compiler.function import TensorSpec
    if isinstance(value, ExtensionType):
        return _spec_of(value)
    if isinstance(value, Variable):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    from .ragged import RaggedTensor, RaggedTensorSpec
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    from .sparse import SparseTensor, SparseTensorSpec
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    try:
        t = convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type "
                        f"{type(value)}.") from None
    return TensorSpec(t.shape, t.dtype)


# -- dispatch (tf.experimental.dispatch_for_*) -------------------------------------------------------
# Consulted only after the dense path failed: an elementwise primitive with an extension-type
# operand reaches ExtensionType._bind_composite (eager_apply's composite branch, or the tracer's
# operand conversion once it failed); a public op with a composite form reaches api_dispatch
# from its `except CompositeOperand`. A Tensor-only call never looks here.

_UNARY = []    # (type annotation, handler)
_BINARY = []   # (x annotation, y annotation, handler)
_API = {}      # api function -> [(handler, {param: annotation}, signature)]


def _matches(ann, value):
    """Does ``value`` match a dispatch annotation (a class, Union, Optional, List/Iterable of one)?"""
    if ann is inspect.Parameter.empty or ann is typing.Any:
        return True
    origin = _origin(ann)
    if origin is typing.Union:
        return any(_matches(a, value) for a in typing.get_args(ann))
    if origin in (list, tuple, _abc.Sequence, _abc.Iterable):
        if not isinstance(value, (list, tuple)):
            return False
        args = [a for a in typing.get_args(ann) if a is not Ellipsis] or [typing.Any]
        return all(_matches(args[0], v) for v in value)
    if ann is None or ann is type(None):
        return value is None
    if isinstance(ann, type):
        if issubclass(ann, Tensor):
            return isinstance(value, Tensor)
        return isinstance(value, ann)
    return False


def _dispatch_types(ann):
    """The extension types an annotation names: a handler is consulted only for those."""
    origin = typing.get_origin(ann)
    if origin is not None:
        return {t for a in typing.get_args(ann) for t in _dispatch_types(a)}
    return {ann} if isinstance(ann, type) and issubclass(ann, CompositeTensor) else set()


def dispatch_for_unary_elementwise_apis(x_type):
    """``tf.experimental.dispatch_for_unary_elementwise_apis``: ``handler(api_func, x)`` computes every
    unary elementwise op (tf.abs, tf.math.exp, ...) on an ``x`` of ``x_type``."""

    def decorator(handler):
        _UNARY.append((x_type, handler))
        return handler
    return decorator


def dispatch_for_binary_elementwise_apis(x_type, y_type):
    """``tf.experimental.dispatch_for_binary_elementwise_apis``: ``handler(api_func, x, y)`` computes
    every binary elementwise op (tf.math.add, tf.maximum, ...) on operands of these types."""

    def decorator(handler):
        _BINARY.append((x_type, y_type, handler))
        return handler
    return decorator


def dispatch_for_api(api, *signatures):
    """``tf.experimental.dispatch_for_api(api)``: the decorated function computes ``api`` when the
    arguments match its annotations (or the given ``{param: type}`` signatures). Its parameters must
    be ``api``'s (TF's check)."""
    try:
        api_sig = inspect.signature(api)
    except (TypeError, ValueError):
        raise TypeError(f"dispatch_for_api: {api!r} is not a function tapeflow can dispatch") from None

    def decorator(handler):
        hsig = inspect.signature(handler)
        api_params = [p for p in api_sig.parameters if p != "name"]
        handler_params = [p for p in hsig.parameters if p != "name"]
        if handler_params[:len(api_params)] != api_params:
            raise ValueError(f"Dispatch function's signature {hsig} does not match API's signature {api_sig}.")
        sigs = list(signatures) or [{n: p.annotation for n, p in hsig.parameters.items()
                                     if p.annotation is not inspect.Parameter.empty}]
        for s in sigs:
            if not any(_dispatch_types(a) for a in s.values()):
                raise ValueError(f"dispatch_for_api: the signature {s} of {handler.__name__} names no "
                                 "ExtensionType")
            _API.setdefault(api, []).append((handler, s, api_sig))
        return handler
    return decorator


def unregister_dispatch_for(dispatch_target):
    """``tf.experimental.unregister_dispatch_for``: remove a handler registered by a dispatch_for_*."""
    found = False
    for table in (_UNARY, _BINARY):
        keep = [e for e in table if e[-1] is not dispatch_target]
        found |= len(keep) != len(table)
        table[:] = keep
    for api, entries in list(_API.items()):
        keep = [e for e in entries if e[0] is not dispatch_target]
        found |= len(keep) != len(entries)
        _API[api] = keep
    if not found:
        raise ValueError(f"Function {dispatch_target} was not registered using a `@dispatch_for_*` decorator.")


def api_dispatch(api, args, kwargs):
    """The result of a handler registered for ``api`` whose annotations these arguments match, or
    NotImplemented. Called by public ops once their dense path raised CompositeOperand."""
    entries = _API.get(api)
    if not entries:
        return NotImplemented
    for handler, sig, api_sig in reversed(entries):
        try:
            ba = api_sig.bind(*args, **kwargs)
        except TypeError:
            continue
        if all(_matches(ann, ba.arguments.get(name)) for name, ann in sig.items() if name in ba.arguments):
            return handler(*args, **kwargs)
    return NotImplemented


def unary_dispatch(api_func, x):
    """``handler(api_func, x)`` of the unary elementwise handler registered for ``x``'s type, or
    NotImplemented (public unary ops that are no primitive: ones_like, zeros_like)."""
    for ann, handler in reversed(_UNARY):
        if _matches(ann, x):
            return handler(api_func, x)
    return NotImplemented


def _elementwise_dispatch(p, args, params):
    if p.fusion != "elementwise":
        return NotImplemented

    def api_func(*xs, **kw):   # the op itself, on the handler's operands
        return bind(p, *xs, **params)
    api_func.__name__ = p.name
    if len(args) == 1:
        for ann, handler in reversed(_UNARY):
            if _matches(ann, args[0]):
                return handler(api_func, args[0])
    elif len(args) == 2:
        x, y = (convert_to_tensor(a) if isinstance(a, (int, float, bool, list, np.ndarray)) else a for a in args)
        for xa, ya, handler in reversed(_BINARY):
            if _matches(xa, x) and _matches(ya, y):
                return handler(api_func, x, y)
    return NotImplemented


# -- batching (BatchableExtensionType: tf.data, tf.map_fn) -------------------------------------------
# TF's batch encoder: a batch of values stacks each tensor leaf along a new axis 0 and puts the
# batch size in front of each tf.TensorShape field (the batch shape); a row slices both back.
# Composed of tapeflow ops (indexing, stack), so they run eagerly and inside traces alike.

def _restatic(static, shape_fn):
    kind = static[0]
    if kind == "E":
        return ("E", static[1], tuple(_restatic(s, shape_fn) for s in static[2]))
    if kind == "tuple":
        return ("tuple", tuple(_restatic(s, shape_fn) for s in static[1]))
    if kind == "map":
        return ("map", tuple((k, _restatic(s, shape_fn)) for k, s in static[1]))
    if kind == "shape":
        return ("shape", None if static[1] is None else shape_fn(static[1]))
    return static


def _check_batchable(value, what):
    if not isinstance(value, BatchableExtensionType):
        raise TypeError(f"{what}: {type(value).__qualname__} is an ExtensionType whose values do not batch; "
                        "derive it from tf.experimental.BatchableExtensionType")


def batch_size(value, what="Dataset.from_tensor_slices"):
    """The leading dimension the tensor leaves of a batched ``value`` share."""
    _check_batchable(value, what)
    comps = []
    _decompose(value, comps)
    if not comps or any(len(c.shape) == 0 for c in comps):
        raise ValueError(f"{what}: cannot slice {type(value).__qualname__}: every tensor field needs a leading "
                         "(batch) dimension")
    dims = {c.shape[0] for c in comps}
    if len(dims) > 1:
        raise ValueError(f"{what}: the tensor fields of {type(value).__qualname__} have different leading "
                         f"dimensions {sorted(dims, key=str)}")
    return dims.pop()


def row(value, i):
    """Row ``i`` of a batched value (TF's unbatch of one element)."""
    comps = []
    static = _restatic(_decompose(value, comps), lambda d: d[1:])
    return _compose(static, iter([c[i] for c in comps]))


def stack_rows(values, what="Dataset.batch"):
    """The batch of values of one spec (tensor leaves stacked, TensorShape fields given the batch size)."""
    from .ops.array_ops import stack
    _check_batchable(values[0], what)
    comps_list, statics = [], []
    for v in values:
        c = []
        statics.append(_decompose(v, c))
        comps_list.append(c)
    if any(s != statics[0] for s in statics[1:]):
        raise ValueError(f"{what}: cannot batch {type(values[0]).__qualname__} values whose non-tensor fields "
                         "or structure differ")
    n = len(values)
    stacked = []
    for i, parts in enumerate(zip(*comps_list)):
        shapes = {tuple(p.shape) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"{what}: cannot batch {type(values[0]).__qualname__} values whose tensor leaf {i} "
                             f"has different shapes {sorted(shapes, key=str)}")
        stacked.append(stack(list(parts)))
    return _compose(_restatic(statics[0], lambda d: (n,) + d), iter(stacked))


def _spec_compose(static, it):
    kind = static[0]
    if kind == "T":
        return next(it)
    if kind == "E":
        cls = static[1]
        spec = object.__new__(cls.Spec)
        spec.__dict__.update(zip(cls._tf_fields, [_spec_compose(s, it) for s in static[2]]))
        return spec
    return _compose(static, it)


def spec_with_batch(spec, lead):
    """The spec of a batch (``lead``: the batch size or None) of values of ``spec``; ``lead=-1``:
    the spec of a row of values of ``spec``."""
    from .compiler.function import TensorSpec
    specs = []
    static = _spec_decompose(spec, specs)
    if lead == -1:
        new = [TensorSpec(None if s.shape is None else s.shape[1:], s.dtype) for s in specs]
        static = _restatic(static, lambda d: d[1:])
    else:
        new = [TensorSpec(None if s.shape is None else (lead,) + tuple(s.shape), s.dtype) for s in specs]
        static = _restatic(static, lambda d: (lead,) + d)
    return _spec_compose(static, iter(new))


def map_rows(fn, elems):
    """tf.map_fn over a batched extension type: fn on each row, the results batched again."""
    n = batch_size(elems, "map_fn")
    if n is None:
        raise ValueError("map_fn: the batch dimension of the extension type must be known (it is the loop's "
                         "trip count)")
    outs = [fn(row(elems, i)) for i in range(n)]
    if isinstance(outs[0], ExtensionType):
        return stack_rows(outs, "map_fn")
    from .ops.array_ops import stack
    from .util import nest
    return nest.map_structure(lambda *xs: stack(list(xs)), *outs)
