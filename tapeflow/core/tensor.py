"""Tensor and Variable.

A ``Tensor`` is an immutable wrapper around a NumPy array (``_v``); its
operators are defined here, in the class, and each is one ``bind`` (eager,
traced, taped and profiled alike). A ``Variable`` is a Tensor whose value can
be replaced (``assign``); using it in an op reads a snapshot of its value
through the ``read_variable`` primitive, so tapes and traces see the value as it
was at the read.
"""
from __future__ import annotations

import contextlib
import enum
import itertools
import threading
import weakref
from sys import getrefcount as _getrefcount

import numpy as np

from . import dtypes as _dt
from ..util import placement as _placement
from . import primitive as _prim
from .aval import Aval, fmt_shape, shapes_compatible
from .state import NAME_SCOPES
from .primitive import bind
from .primitives import elementwise as _E
from .primitives import indexing as _I
from .primitives import linalg as _L
from .primitives import shape as _S
from .primitives.effects import assign_variable_p as _ASSIGN
from .state import STATE


class TensorShape(tuple):
    """A tuple of dims (``None`` = unknown) with TF's helpers. ``TensorShape(None)``
    is a shape of unknown rank (an empty tuple whose ``rank`` is None)."""

    def __new__(cls, dims=()):
        if dims is None:
            s = tuple.__new__(cls, ())
            s._unknown_rank = True
            return s
        s = tuple.__new__(cls, dims)
        for d in s:
            if d is not None and d < 0:  # (-1 means "unknown" to reshape, never in a shape: TF raises)
                raise ValueError(f"TensorShape: dimension {d} in {list(s)} must be >= 0, or None for an "
                                 "unknown one")
        return s

    _unknown_rank = False

    # an unknown-rank shape equals only another one (not the scalar shape () it is stored as)
    def __eq__(self, other):
        if self._unknown_rank or getattr(other, "_unknown_rank", False):
            return self._unknown_rank and getattr(other, "_unknown_rank", False)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __bool__(self):
        # TF 2.21: a shape is true when its rank is known (the scalar shape () too; the TF1->TF2 guide's
        # cell), false for TensorShape(None). A tuple would be false when empty. tapeflow's own code
        # tests avals' shapes (plain tuples); an AST scan for truth tests of `<tensor>.shape` found one
        # (RaggedTensor.__getitem__'s scalar index, now len() == 0)
        return not self._unknown_rank

    def as_list(self):
        if self._unknown_rank:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self)

    @property
    def rank(self):
        return None if self._unknown_rank else len(self)

    @property
    def dims(self):
        """TF's: the dims as TF1's Dimension objects (None for an unknown rank); indexing the shape
        itself gives ints or None."""
        if self._unknown_rank:
            return None
        from ..compat import Dimension  # (compat imports tapeflow: not at import time)
        return [Dimension(d) for d in self]

    ndims = rank

    def num_elements(self):
        if self._unknown_rank or any(d is None for d in self):
            return None
        return int(np.prod(self, dtype=np.int64))

    def is_fully_defined(self):
        return not self._unknown_rank and all(d is not None for d in self)

    def is_compatible_with(self, other):
        if self._unknown_rank or getattr(other, "_unknown_rank", False):
            return True
        return shapes_compatible(tuple(self), tuple(other))

    def assert_is_compatible_with(self, other):
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        """TF's: the shape both describe (known dims from either); ValueError if they conflict."""
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._unknown_rank:
            return other
        if other._unknown_rank:
            return self
        if len(self) != len(other) or not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self, other)])

    def concatenate(self, other):
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._unknown_rank or other._unknown_rank:
            return TensorShape(None)
        return TensorShape(tuple(self) + tuple(other))

    def __getitem__(self, key, _get=tuple.__getitem__, _slice=slice):
        # a slice of a shape is a shape (TF: shape[:-1].merge_with(...)); an index is a dim
        if key.__class__ is _slice:
            return TensorShape(None) if self._unknown_rank else TensorShape(_get(self, key))
        return _get(self, key)

    # TF 2.21's text: str (2, 3) / (None, 3) / (2,) / () / <unknown>, repr
    # TensorShape([2, 3]) / TensorShape(None). Dims print as Python ints (a NumPy
    # integer would print as np.int64(2)).
    def __str__(self):
        if self._unknown_rank:
            return "<unknown>"
        dims = ["None" if d is None else str(int(d)) for d in self]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def __repr__(self):
        if self._unknown_rank:
            return "TensorShape(None)"
        return "TensorShape([" + ", ".join("None" if d is None else str(int(d)) for d in self) + "])"


def _reflected(p):
    """The reflected operator method of primitive ``p`` (``__radd__``: other + self)."""
    bind2 = p.bind2

    def rop(self, other):
        return bind2(other, self)
    rop.__name__ = rop.__qualname__ = f"reflected_{p.name}"
    return rop


def _logic_or_bits(logical, bitwise):
    """The operator methods (``__and__``, ``__rand__``) of TF's ``&``/``|``/``^``: the logical op for
    bool tensors, the bitwise one for integer tensors (TF's Tensor.__and__ does the same); any
    other dtype gets the logical op's dtype error."""
    lb2, bb2 = logical.bind2, bitwise.bind2

    def op(self, other):
        return (bb2 if self.dtype.np.kind in "iu" else lb2)(self, other)

    def rop(self, other):
        return (bb2 if self.dtype.np.kind in "iu" else lb2)(other, self)
    op.__name__ = op.__qualname__ = f"{logical.name}_or_{bitwise.name}"
    rop.__name__ = rop.__qualname__ = f"reflected_{logical.name}_or_{bitwise.name}"
    return op, rop


def _numpy_method(name):
    def get(self):
        if not _prim.NUMPY_MODE.enabled:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute {name!r}: NumPy's methods on tensors come with "
                "tnp.experimental_enable_numpy_behavior() (import tapeflow.experimental.numpy as tnp), as in TF")
        from ..experimental import numpy as _tnp  # (experimental imports core: not at import time)
        fn = _tnp.METHODS[name]
        return lambda *a, **k: fn(self, *a, **k)
    get.__name__ = name
    return property(get)


class Tensor:
    """An immutable n-d array value. Shapes and dtypes as NumPy's."""

    __slots__ = ("_v", "_s", "__weakref__")  # _s: the signature eager dispatch noted (core.primitive._Sig)
    __array_priority__ = 100  # NumPy defers to our operators: np_array + tensor -> Tensor

    def __init__(self, value, dtype=None):
        self._v = _to_array(value, dtype)

    # -- introspection ----------------------------------------------------
    @property
    def aval(self):
        try:
            return self._s.aval  # the interned signature eager dispatch noted (gradient rules ask often)
        except AttributeError:
            v = self._v
            return Aval(v.shape, v.dtype)

    @property
    def shape(self):
        return TensorShape(self._v.shape)

    @property
    def dtype(self):
        return _dt.from_np(self._v.dtype)

    @property
    def ndim(self):
        return self._v.ndim

    @property
    def rank(self):
        return self._v.ndim

    @property
    def size(self):
        return int(np.size(self._v))

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def numpy(self):
        """The value as a NumPy array (a copy-free read-only view for Tensors); a
        0-d tensor gives a NumPy scalar, as TF's ``.numpy()`` does."""
        v = self._v
        if not isinstance(v, np.ndarray):
            v = np.asarray(v)
        return v[()] if v.ndim == 0 else v

    def __array__(self, dtype=None, copy=None):
        v = np.asarray(self.numpy())
        return v if dtype is None else v.astype(dtype)

    def __len__(self):
        s = self._v.shape
        if not s:
            raise TypeError("len() of a scalar tensor (shape ())")
        return s[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self):
        if self._v.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {fmt_shape(self._v.shape)} is ambiguous; "
                             "use tapeflow.reduce_any / reduce_all")
        return bool(self._v)

    def __float__(self):
        return float(self._v)

    def __int__(self):
        return int(self._v)

    def __index__(self):
        if self._v.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self._v.dtype}")
        return int(self._v)

    def __hash__(self):
        return id(self)

    # -- text: exactly TF 2.21's (EagerTensor __str__/__repr__/__format__), so NumPy's
    # print options (np.set_printoptions / np.printoptions) apply as they do in TF
    def __str__(self):
        v = self._v
        return f"tf.Tensor({_numpy_text(v, False)}, shape={TensorShape(v.shape)}, dtype={_dt.from_np(v.dtype).name})"

    def __repr__(self):
        v = self._v
        return (f"<tf.Tensor: shape={TensorShape(v.shape)}, dtype={_dt.from_np(v.dtype).name}, "
                f"numpy={_numpy_text(v, True)}>")

    def __format__(self, format_spec):
        # NumPy's own formatting: f"{loss:.4f}" works on a scalar, a spec on an
        # array raises NumPy's TypeError (as in TF)
        return self.numpy().__format__(format_spec)

    # -- value semantics helpers -------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return Tensor(np.array(self._v, copy=True))

    def __reduce__(self):
        return (Tensor, (np.asarray(self._v),))

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"set_shape: {fmt_shape(self.shape)} is incompatible with {fmt_shape(shape)}")

    # -- operators: one bind each (TF 2 semantics; dtypes must agree, no promotion). A
    # binary operator is its primitive's bind2 (bind for two operands as a plain function:
    # ``a + b`` is one Python frame); a reflected one swaps the operands first.
    __add__ = _E.add_p.bind2
    __radd__ = _reflected(_E.add_p)
    __sub__ = _E.sub_p.bind2
    __rsub__ = _reflected(_E.sub_p)
    __mul__ = _E.mul_p.bind2
    __rmul__ = _reflected(_E.mul_p)
    __truediv__ = _E.div_p.bind2
    __rtruediv__ = _reflected(_E.div_p)
    __floordiv__ = _E.floordiv_p.bind2
    __rfloordiv__ = _reflected(_E.floordiv_p)
    __mod__ = _E.mod_p.bind2
    __rmod__ = _reflected(_E.mod_p)
    def __pow__(self, other): return _E.pow_p.bind2(self, other)  # (a def: pow(x, y, mod) is a TypeError)
    __rpow__ = _reflected(_E.pow_p)
    __matmul__ = _L.matmul_p.bind2
    __rmatmul__ = _reflected(_L.matmul_p)
    __and__, __rand__ = _logic_or_bits(_E.logical_and_p, _E.bitwise_and_p)
    __or__, __ror__ = _logic_or_bits(_E.logical_or_p, _E.bitwise_or_p)
    __xor__, __rxor__ = _logic_or_bits(_E.logical_xor_p, _E.bitwise_xor_p)
    __lt__ = _E.less_p.bind2
    __le__ = _E.less_equal_p.bind2
    __gt__ = _E.greater_p.bind2
    __ge__ = _E.greater_equal_p.bind2

    def __invert__(self): return bind(_E.invert_p if self.dtype.np.kind in "iu" else _E.logical_not_p, self)
    def __neg__(self): return bind(_E.neg_p, self)
    def __pos__(self): return self
    def __abs__(self): return bind(_E.abs_p, self)

    def __eq__(self, other):
        # TF 2 semantics: elementwise. Non-tensor-like objects (None, strings) compare unequal.
        if not isinstance(other, _TENSORLIKE):
            return False
        return bind(_E.equal_p, self, other)

    def __ne__(self, other):
        if not isinstance(other, _TENSORLIKE):
            return True
        return bind(_E.not_equal_p, self, other)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """``v[key].assign(value)`` writes ``value`` into that slice of the Variable ``v`` (TF's
        sliced assignment); every other tensor is immutable."""
        entry = _SLICES.get(id(self))
        if entry is None or entry[0]() is not self:
            raise AttributeError("'Tensor' object has no attribute 'assign': tensors are immutable; assign to a "
                                 "Variable, or to a slice of one (v[0, 1].assign(x))")
        var, key = entry[1], entry[2]
        from ..ops.array_ops import slice_assigned  # (ops import core: not at import time)
        return var.assign(slice_assigned(var, key, value), read_value=read_value)

    def __getitem__(self, key):
        """x[key]: slices, ints, None, Ellipsis; integer/bool tensors index (gather/mask).
        A Python list is the index tuple, as in TF (``x[[0, 1]]`` is ``x[0, 1]``; NumPy would
        gather rows 0 and 1, which a ported TF program does not mean)."""
        if _NUMPY_MODE.enabled:  # NumPy's indexing rules, as TF's after enable_numpy_behavior
            from ..experimental import numpy as _tnp  # (experimental imports core: not at import time)
            if _tnp._advanced(key):
                out = _tnp._np_getitem(self, key)
                if out is not None:
                    return out
        if key.__class__ is list:
            key = tuple(key)
        elif not isinstance(key, tuple):
            key = (key,)
        key = tuple(k.read_value() if isinstance(k, Variable) else k for k in key)
        for k in key:
            if isinstance(k, (Tensor, np.ndarray)) and _prim.aval_of(k).dtype.kind == "f":
                from ..errors import InvalidArgumentTypeError  # (tapeflow.errors imports nothing of core)
                raise InvalidArgumentTypeError(f"getitem: index tensors must be integer or bool, got "
                                               f"{_prim.aval_of(k).dtype.name}")
        return _I.getitem(self, key)

    def ref(self):
        """A hashable handle for this tensor (TF's ``x.ref()``): dict keys, sets."""
        return _Ref(self)

    experimental_ref = ref

    # -- a few NumPy-style conveniences ---------------------------------------------------
    @property
    def T(self):
        return _S.transpose(self, tuple(range(len(self.aval.shape) - 1, -1, -1)))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        return _S.reshape(self, (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape))

    def astype(self, dtype):
        npd = _dt.np_dtype(dtype)
        return self if self.aval.dtype == npd else bind(_E.cast_p, self, dtype=npd)

    # NumPy's methods (TF adds them to tensors with tnp.experimental_enable_numpy_behavior(); so does
    # tapeflow): properties that hand out the method while the switch is on and otherwise raise an
    # AttributeError naming the switch (hasattr sees them missing, as in TF). Properties, not a
    # __getattr__: a __getattr__ would put a Python frame on every missing-attribute probe of a tensor
    # (1.6 us a getattr(t, "_x", None), measured)
    ravel = _numpy_method("ravel")
    flatten = _numpy_method("flatten")
    clip = _numpy_method("clip")
    mean = _numpy_method("mean")
    max = _numpy_method("max")
    min = _numpy_method("min")
    transpose = _numpy_method("transpose")
    tolist = _numpy_method("tolist")


_TENSORLIKE = (Tensor, int, float, bool, np.ndarray, np.generic, list, tuple, str, bytes)


def _numpy_text(v, is_repr):
    """TF's ``numpy_text``: str of the NumPy value, or for a repr the ndarray's repr
    (``array([1, 2], dtype=int32)``) and a 0-d value's Python repr (float32 27.3
    shows as 27.299999237060547, the float32 widened to a Python float). A text
    spanning several lines starts on a new line."""
    v = np.asarray(v)
    if v.ndim == 0:
        v = v[()]  # a NumPy scalar: its str ignores the print options, as TF's does
        text = (repr(v.item()) if v.__class__ is not bytes else repr(v)) if is_repr else str(v)
    else:
        text = repr(v) if is_repr else str(v)
    return "\n" + text if "\n" in text else text


class _Ref:
    """A hashable handle for a tensor (TF's ``x.ref()``): dict keys, sets."""

    __slots__ = ("_t",)

    def __init__(self, t):
        self._t = t

    def deref(self):
        return self._t

    def __hash__(self):
        return id(self._t)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._t is self._t

    def __repr__(self):
        return f"<Reference wrapping {self._t!r}>"   # TF 2.21's text


def _asarray(value, dtype=None):
    try:
        return np.asarray(value, dtype=dtype)
    except ValueError as e:
        if "inhomogeneous" not in str(e):
            raise
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None  # TF's text


def _has_python_float(value):
    """Whether a value of Python scalars holds a float (an empty list holds none)."""
    a = _asarray(value)
    return a.dtype.kind == "f" and a.size > 0


def _to_array(value, dtype=None):
    """Convert a Python/NumPy value to an array with TF's dtype defaults."""
    if dtype is None and value.__class__ is np.ndarray and value.dtype in _SUPPORTED:
        return value  # what an environment or a data pipeline hands over: taken as it is
    npd = _dt.np_dtype(dtype)
    if isinstance(value, Tensor):
        v = value.read_value()._v if isinstance(value, Variable) else value._v
        if v is None:
            raise TypeError("cannot convert a symbolic tensor to a concrete value here")
        if npd is not None and v.dtype != npd:
            raise TypeError(f"convert_to_tensor: tensor has dtype {v.dtype.name}, requested {npd.name}; "
                            "use tapeflow.cast to change dtypes")
        return v
    if npd is None:
        if isinstance(value, np.ndarray):
            arr = _dt.string_array(value) if value.dtype.kind in "OUS" else value
        elif isinstance(value, np.generic):
            arr = _dt.string_array(value) if isinstance(value, (str, bytes)) else np.asarray(value)
        else:
            if value.__class__ is range:   # TF converts a range as the list of its ints (int32)
                value = list(value)
            arr = _asarray(value)
            # TF's defaults apply to values made of Python scalars only: a list of
            # float64 tensors or NumPy float64 scalars keeps float64, and ints that
            # do not fit int32 stay int64 (astype would wrap them silently)
            if arr.dtype == np.float64:
                if _prim._only_python(value):
                    arr = arr.astype(np.float32)
            elif arr.dtype == np.int64:
                if _prim._only_python(value) and (arr.size == 0 or (
                        arr.min() >= -2**31 and arr.max() < 2**31)):
                    arr = arr.astype(np.int32)
            elif arr.dtype.kind in "OUS":   # text (tf.constant("Gray wolf")): tf.string's bytes
                arr = _dt.string_array(value)
    elif npd.kind == "O":   # dtype=tf.string
        arr = _dt.string_array(value, dtype_given=True)
    else:
        if npd.kind in "iub" and not isinstance(value, (np.ndarray, np.generic)) and _prim._only_python(value) \
                and _has_python_float(value):
            # TF refuses a Python float for an integer dtype (even 2.0); NumPy would truncate 1.5 to 1
            raise TypeError(f"cannot convert {value!r} to a tensor of dtype {npd.name}: a Python float is not "
                            f"an integer; convert it first (int(x), or tapeflow.cast, which truncates)")
        try:
            arr = _asarray(value, npd)
        except OverflowError:  # a Python int outside the dtype's range (TF 2.21 wraps it silently)
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError(f"constant: {value!r} is out of range for dtype {npd.name}") from None
    if arr.dtype not in _SUPPORTED and arr.dtype.kind != "O":
        try:
            _dt.as_dtype(arr.dtype)
        except TypeError as e:
            raise TypeError(f"cannot make a tensor: {e}") from None
    return arr


#: the dtypes a tensor may have, for membership tests (a hash, not a walk of == over a tuple)
_SUPPORTED = frozenset(_dt.SUPPORTED)

_var_uid = itertools.count()


#: the results of v[key] that .assign() writes through: id -> (weakref to the result, v, key)
_SLICES = {}


class VariableSynchronization(enum.Enum):
    """tf.VariableSynchronization: accepted and kept (one replica here, nothing to synchronize);
    ON_READ makes a variable non-trainable unless trainable=True is given, as in TF."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """tf.VariableAggregation: accepted and kept (one replica: nothing to aggregate)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class _Creators(threading.local):
    """tf.variable_creator_scope's creators, per thread (TF keeps them per thread too); ``making``:
    the last creator is making the variable now; ``made``: the variable the creators returned,
    whose own ``__init__`` call (Python makes it after ``__new__``) is skipped."""
    stack = ()
    making = False
    made = None


_CREATORS = _Creators()
_MISSING = object()
#: the keyword arguments TF 2.21 hands a variable creator, with its defaults
_TF_VARIABLE_KWARGS = {"initial_value": None, "trainable": None, "validate_shape": True, "caching_device": None,
                       "name": None, "variable_def": None, "dtype": None, "import_scope": None, "constraint": None,
                       "synchronization": VariableSynchronization.AUTO, "aggregation": VariableAggregation.NONE,
                       "shape": None,
                       "experimental_enable_variable_lifting": True}


def _create_through(cls, stack, args, kwargs):
    """``cls(*args, **kwargs)`` through the creators of ``stack``, the innermost scope's first;
    each gets ``next_creator`` and TF's keyword arguments (``cls._creator_kwargs``), and the last
    ``next_creator`` makes the variable from what they pass on (``cls._created_kwargs``)."""
    import inspect
    given = dict(inspect.signature(cls.__init__).bind(None, *args, **kwargs).arguments)
    given.pop(next(iter(given)))   # self
    given.update(given.pop("kwargs", {}))
    chain = list(stack)

    def default(**kw):
        _CREATORS.making = True
        try:
            return type.__call__(cls, **cls._created_kwargs(given, kw))
        finally:
            _CREATORS.making = False

    def make(i):
        if i < 0:
            return default
        creator = chain[i]
        nxt = make(i - 1)

        def next_creator(**kw):
            return creator(nxt, **kw)
        return next_creator
    return make(len(chain) - 1)(**cls._creator_kwargs(given))


class Variable(Tensor):
    """A mutable tensor: model weights, optimizer slots, counters.

    ``assign``/``assign_add``/``assign_sub`` replace the value (eagerly now, or
    as an ordered write when traced inside ``tapeflow.function``). A
    ``GradientTape`` watches trainable variables when they are read.
    """

    __slots__ = ("_name", "trainable", "_uid", "_handle_name", "aggregation", "synchronization",
                 "_shape_spec")
    #: a tf.Variable made inside ``tf.name_scope("s")`` is named ``s/<name>`` (TF; a checkpoint's
    #: object graph records it); Keras 3's weights are not (keras/engine.py KerasVariable)
    _NAME_SCOPED = True

    def __new__(cls, *args, **kwargs):
        # tf.variable_creator_scope: inside one, the scope's creators make the variable (TF's
        # VariableMetaclass does this; a metaclass here would make every isinstance(x, Variable),
        # which bind's fast path asks of operands, look up __instancecheck__: +20 ns each)
        c = _CREATORS
        stack = c.stack
        if not stack or c.making:
            return _new(cls)
        v = _create_through(cls, stack, args, kwargs)
        if isinstance(v, cls):
            c.made = v
        return v

    @classmethod
    def _creator_kwargs(cls, given):
        """What a variable creator sees: TF's keyword arguments, the ones not given at their defaults."""
        return {**_TF_VARIABLE_KWARGS, **given}

    @classmethod
    def _created_kwargs(cls, given, kw):
        """``__init__``'s keyword arguments from a creator's: the given ones and those it changed."""
        return {k: v for k, v in kw.items() if k in given or v is not _TF_VARIABLE_KWARGS.get(k, _MISSING)}

    def __init__(self, initial_value=None, trainable=None, name=None, dtype=None, shape=None,
                 validate_shape=True, **kwargs):
        c = _CREATORS
        if c.made is self:   # (made by the creators already: see __new__)
            c.made = None
            return
        if initial_value is None:
            raise ValueError("Variable: initial_value is required")
        if callable(initial_value) and not isinstance(initial_value, Tensor):
            initial_value = initial_value()
        if isinstance(initial_value, Tensor) and initial_value._v is None \
                and not isinstance(initial_value, Variable):
            initial_value = _lift_symbolic(initial_value)
        v = _to_array(initial_value, dtype)
        # a Variable owns its buffer: never alias the caller's array
        self._v = np.array(v, copy=True)
        if trainable is None:  # TF's default: trainable, except a variable synchronized ON_READ
            trainable = kwargs.get("synchronization") is not VariableSynchronization.ON_READ
        self.trainable = bool(trainable)
        self._uid = next(_var_uid)
        self._name = name if name is not None else "Variable"
        if NAME_SCOPES and self._NAME_SCOPED:   # TF's name: the open tf.name_scope's prefix (scoped/c)
            self._name = NAME_SCOPES[-1] + self._name
        self._shape_spec = None if shape is None else tuple(shape)
        if shape is not None and not TensorShape(v.shape).is_compatible_with(shape):
            raise ValueError(f"Variable: the initial value's shape {fmt_shape(v.shape)} is not compatible with "
                             f"shape={fmt_shape(tuple(shape)) if shape is not None else None}")
        self.aggregation = kwargs.get("aggregation")
        self.synchronization = kwargs.get("synchronization")
        constraint = kwargs.get("constraint")
        if constraint is not None:
            if not callable(constraint):
                raise ValueError(f"Variable: constraint must be callable, got {constraint!r}")
            # as TF: kept, not applied by assign; optimizers apply it after each update
            # (Keras 3's apply_gradients does, for tf.Variables too)
            _CONSTRAINTS[id(self)] = (self, constraint)
        hook = _CREATION_HOOKS
        for h in hook:
            h(self)

    @property
    def name(self):
        return self._name + ":0"

    @property
    def aval(self):
        v = self._v
        return Aval(v.shape, v.dtype)

    def read_value(self):
        """A Tensor snapshot of the current value (the ``read_variable`` primitive)."""
        return bind(_READ, var=self)

    value = read_value

    def numpy(self):
        if STATE.trace is not None:
            raise _symbolic_numpy_error()
        v = self._v
        return v[()] if v.ndim == 0 else np.array(v, copy=True)

    def __array__(self, dtype=None, copy=None):
        v = np.asarray(self.numpy())  # (numpy() of a 0-d variable is a NumPy scalar)
        return v if dtype is None else v.astype(dtype)

    def __bool__(self):
        return bool(self.read_value())  # a symbolic read raises the TracingError

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __index__(self):
        return self.read_value().__index__()

    def __repr__(self):
        # TF 2.21: str is the repr; while tracing a tf.function the value is not shown
        m = _MIRRORED.get(id(self))
        if m is not None and m[0]() is self:
            # made under a MirroredStrategy of n replicas (tapeflow/distribute): TF's MirroredVariable
            # lists one component per replica; tapeflow's one copy holds every component's value
            return "MirroredVariable:{\n" + ",\n".join(
                f"  {r}: {self._repr(self.name if r == 0 else self.name[:-2] + f'/replica_{r}:0')}"
                for r in range(m[1])) + "\n}"
        return self._repr(self.name)

    def _repr(self, name):
        v = self._v
        head = f"<tf.Variable '{name}' shape={TensorShape(v.shape)} dtype={_dt.from_np(v.dtype).name}"
        if STATE.trace is not None:
            return head + ">"
        return f"{head}, numpy={_numpy_text(v, True)}>"

    __str__ = __repr__
    # TF 2.21's variables have no format spec: f"{v}" is the repr, f"{v:.2f}" a TypeError
    # (format v.numpy() or v.read_value())
    __format__ = object.__format__

    def __hash__(self):
        return id(self)

    @property
    def constraint(self):
        c = _CONSTRAINTS.get(id(self))
        return c[1] if c is not None and c[0] is self else None

    # `v += 1` would rebind the name to a new Tensor and leave the variable as it was (a
    # silent no-op on the variable): TF 2.21 raises this RuntimeError, with these words
    def __iadd__(self, other):
        raise RuntimeError("`variable += value` with `tf.Variable`s is not supported. Use "
                           "`variable.assign_add(value)` to modify the variable, or `out = variable + value` "
                           "if you need to get a new output Tensor.")

    def __isub__(self, other):
        raise RuntimeError("`variable -= value` with `tf.Variable`s is not supported. Use "
                           "`variable.assign_sub(value)` to modify the variable, or `out = variable - value` "
                           "if you need to get a new output Tensor.")

    def _no_inplace(op):
        def f(self, other):
            raise RuntimeError(f"`var {op}= value` with `tf.Variable`s is not supported. Use "
                               f"`var.assign(var {op} value)` to modify the variable, or `out = var {op} value` "
                               "if you need to get a new output Tensor.")
        return f
    __imul__ = _no_inplace("*")
    __itruediv__ = _no_inplace("/")
    __ipow__ = _no_inplace("**")
    del _no_inplace

    def __deepcopy__(self, memo):
        return Variable(np.array(self._v, copy=True), trainable=self.trainable, name=self._name)

    def __reduce__(self):
        return (Variable, (np.asarray(self._v), self.trainable, self._name))

    # -- writes -------------------------------------------------------------
    def _check_value(self, value, op):
        """Convert ``value`` for a write; shapes and dtypes must match exactly."""
        v = value
        if isinstance(v, Variable):
            v = v.read_value()
        if isinstance(v, Tensor):
            av = v.aval if v._v is None else v._v  # (an array has .shape and .dtype too: no Aval to build)
            lattice = _prim.NUMPY_MODE.lattice
            if av.dtype != self._v.dtype and lattice is not None and lattice.get((av.dtype, self._v.dtype)) \
                    == self._v.dtype:
                # TF's "all"/"safe" promotion (tnp.experimental_enable_numpy_behavior) writes a value
                # whose promotion with the variable's dtype is that dtype (int16 into int32)
                v = bind(_E.cast_p, v, dtype=self._v.dtype)
                av = v.aval if v._v is None else v._v
            if av.dtype != self._v.dtype:
                from ..errors import InvalidArgumentTypeError  # TF: ValueError; TypeError kept for old code
                raise InvalidArgumentTypeError(f"{self._name}.{op}: value has dtype {av.dtype.name}, variable has "
                                f"{self._v.dtype.name}; use tapeflow.cast(value, {self._v.dtype.name!r})")
            if av.shape != self._v.shape and not _shape_compatible(av.shape, self._v.shape):
                self._shape_mismatch(op, av.shape)
            return v
        # NumPy arrays and Python values convert to the variable's dtype, as
        # TF's convert_to_tensor(value, dtype=var.dtype) does; tensors don't (above).
        arr = _dt.string_array(v, dtype_given=True) if self._v.dtype.kind == "O" else np.asarray(v)
        if arr.dtype != self._v.dtype:
            if arr.dtype.kind == "f" and self._v.dtype.kind in "iub":
                raise TypeError(f"{self._name}.{op}: float value for a {self._v.dtype.name} variable")
            if arr.dtype.kind in "iu" and self._v.dtype.kind in "iu" and arr.size and (
                    arr.min() < np.iinfo(self._v.dtype).min or arr.max() > np.iinfo(self._v.dtype).max):
                from ..errors import InvalidArgumentError  # astype would wrap silently (2**40 -> 0)
                raise InvalidArgumentError(f"{self._name}.{op}: value {v!r} is out of range for the variable's "
                                           f"dtype {self._v.dtype.name}")
            arr = arr.astype(self._v.dtype)
        if arr.shape != self._v.shape:
            self._shape_mismatch(op, arr.shape)
        return arr

    def _shape_mismatch(self, op, shape):
        # TF 2.21: assign raises ValueError with this text (guides print it), assign_add/assign_sub
        # an InvalidArgumentError (which is a ValueError too)
        if op == "assign":
            raise ValueError(f"Cannot assign value to variable ' {self.name}': Shape mismatch.The variable shape "
                             f"{tuple(self._v.shape)}, and the assigned value shape {tuple(shape)} are incompatible.")
        from ..errors import InvalidArgumentError
        raise InvalidArgumentError(f"{self._name}.{op}: value has shape {fmt_shape(shape)}, variable has "
                                   f"{fmt_shape(self._v.shape)}")

    def __getitem__(self, key):
        out = Tensor.__getitem__(self, key)
        i = id(out)
        # (the entry goes with the result: its weakref's callback removes it)
        _SLICES[i] = (weakref.ref(out, lambda _r, i=i: _SLICES.pop(i, None)), self, key)
        return out

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Replace the value (the ``assign_variable`` primitive: eagerly now, or as an
        ordered write in a traced function)."""
        v = self._check_value(value, "assign")
        st = STATE
        if st.trace is None and st.profiler is None and (v.__class__ is np.ndarray or v._v is not None):
            # Eager: the primitive's kernel now, as bind's fast path calls kernels. bind
            # would get there through eager_apply, which has nothing else to do for a write:
            # no rule (_check_value checked the value), no result, no tape record (a write
            # is not differentiable). Traced or profiled writes (and a leaked symbolic
            # value, for its error) go through bind.
            if v.__class__ is np.ndarray:
                _ASSIGN.impl(v, var=self)
            elif v._v.shape == self._v.shape and _sole_array(v):
                # the value of an expression (tau * p + (1 - tau) * tp): its array is
                # fresh and only this tensor holds it, so no one can write to it; the
                # variable may take it without the kernel's copy (Tensors' arrays are
                # never written in place: Tensor.numpy() is a read-only view; variables'
                # buffers are replaced, never written)
                self._v = v._v
            else:
                _ASSIGN.impl(v._v, var=self)
        else:
            bind(_ASSIGN, v, var=self)
        return self._written(read_value)

    def _written(self, read_value):
        if not read_value:
            return None
        st = STATE
        if st.trace is None and not st.tapes:
            u = _new(_UnreadVariable)   # (a view, not a new variable: no creators, no __init__ to call)
            u._target = self
            return u
        # Traced or taped, the result is the variable itself, so traces and tapes see
        # reads of it as reads of this variable (ordering, gradients)
        return self

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_op(_E.add_p, delta, "assign_add", read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_op(_E.sub_p, delta, "assign_sub", read_value)

    def _assign_op(self, p, delta, op, read_value):
        """``self.assign(p(self, delta))``: a read, the op and a write (the traced IR)."""
        d = self._check_value(delta, op)
        if STATE.unrecorded():
            # Eager with nothing recording: the op's bind2 on the variable (read in its fast
            # path) and the result becomes the buffer as it is. The kernel (np.add/np.subtract)
            # just made that array and nobody else holds it, so assign's defensive copy
            # would only cost a pass over it. A result of another dtype (none for
            # same-dtype add/sub, but the buffer's dtype is the variable's) takes assign.
            # A Python int for an integer variable (that passed the range check) goes in as
            # itself: a weak scalar takes the variable's dtype, as the checked 0-d array
            # has, with the same value, and it keeps bind2's fast path, which an array
            # operand leaves (~4 us of every optimizer step's iterations.assign_add(1))
            new = p.bind2(self, delta if delta.__class__ is int and d.dtype.kind in "iu" else d)
            arr = new._v
            if arr.dtype is self._v.dtype and arr.shape == self._v.shape:
                self._v = arr
                return self._written(read_value)
            return self.assign(new, read_value=read_value)
        return self.assign(bind(p, self.read_value(), d), read_value=read_value)

    def scatter_nd_update(self, indices, updates):
        from ..ops import array_ops
        return self.assign(array_ops.tensor_scatter_nd_update(self.read_value(), indices, updates))

    @property
    def shape(self):
        return TensorShape(self._v.shape)

    @property
    def dtype(self):
        return _dt.from_np(self._v.dtype)


def _sole_array(t):
    """Whether ``t``'s array owns its memory and no object but ``t`` refers to it (no
    view of it, no user's name for it, no other tensor): then nothing can write to it.
    The reference counts are compared with those the same statements see for a tensor
    made of a fresh array (``_ref_counts``, ``_sole_refs``), so an interpreter counting
    references differently (borrowed references on the stack) gives the same comparison."""
    refs = _SOLE_REFS or _sole_refs()
    # (the same two statements as _ref_counts', so a's and b's counts match its baseline)
    a = t._v
    b = a.base
    if b is None:
        return _getrefcount(a) == refs[0]
    # a view of an array that owns its memory and that nothing but this view refers to
    # (every other view of it would refer to it: NumPy points a view's base at the owner),
    # as util/placement's arrays: nothing else can reach the memory either
    return type(b) is np.ndarray and b.base is None and _getrefcount(a) == refs[1] and _getrefcount(b) == refs[2]


def _ref_counts(t):
    """The reference counts ``_sole_array``'s statements see for ``t``'s array and its
    base (None without one)."""
    a = t._v
    b = a.base
    return _getrefcount(a), (None if b is None else _getrefcount(b))


#: (count of an array that owns its memory, of a placed view, of its buffer) when nothing
#: but the tensor holds them, as ``_sole_array`` counts; empty until its first call
_SOLE_REFS = []


def _sole_refs():
    fresh = _new(Tensor)
    fresh._v = np.empty(1)
    plain = _ref_counts(fresh)[0]
    fresh._v = np.empty(8, np.uint8)[:].view(np.float64)  # a view of a buffer only it refers to
    _SOLE_REFS.extend((plain,) + _ref_counts(fresh))
    return _SOLE_REFS


def _own_array(t):
    """``t``'s array, made one a kernel may write in place: its own (``_sole_array``: no
    tensor a user read earlier, no view, no other name holds it), C-ordered and writable;
    otherwise ``t`` first gets a C-ordered copy and the old array stays, unchanged, with
    its holders (a snapshot read before the write keeps its value, as in TF). Used by the
    eager optimizer's in-place slot updates and by compiled code that updates variables
    in place."""
    # (t._v is not bound to a local here: a local would be one more reference)
    if not (_sole_array(t) and t._v.flags.c_contiguous and t._v.flags.writeable):
        t._v = np.array(t._v, order="C")
    return t._v


def _own_arrays(ts):
    """``_own_array`` for every tensor of the tuple ``ts``, in one call (nothing returned):
    compiled code's check, per call, of each variable it updates in place (54 in a TD3
    critic+policy call, 108 per benchmark cycle), one generated line for all of them. 54
    placed 256x256 variables: ~14 us per call (min of 7 x 2000 calls), ~11 with the
    ownership test copied into this loop; one test with one calibration is worth the 3 us."""
    for t in ts:
        _own_array(t)


def _place_owned(variables):
    """Moves each variable's large array that malloc placed (``base`` None) to a copy
    placed by ``util/placement`` (same values), and empties ``variables``. Compiled code
    that updates variables in place calls it once, at its first call: its fused loops
    then stream through arrays that do not alias within a page (an Adam update: weight,
    moments, target copy). A variable whose array is later replaced keeps the new one."""
    for t in variables:
        if t._v.base is None and _placement.is_placed_size(t._v):
            t._v = _placement.copy(t._v)
    variables.clear()


class _UnreadVariable(Variable):
    """What an eager ``assign``/``assign_add``/``assign_sub`` returns, as TF's: a view
    of the assigned variable that prints as ``<tf.Variable 'UnreadVariable' ...>``.
    It holds no value of its own: reads see the variable's current value and writes
    go to the variable. (As in TF, a tape does not count reads of it as reads of
    the variable; an assign done under a tape or while tracing returns the
    variable itself.)"""

    __slots__ = ("_target",)

    def __init__(self, target):
        self._target = target

    _v = property(lambda self: self._target._v)
    _name = property(lambda self: self._target._name)
    trainable = property(lambda self: self._target.trainable)
    aggregation = property(lambda self: self._target.aggregation)
    synchronization = property(lambda self: self._target.synchronization)
    _shape_spec = property(lambda self: self._target._shape_spec)

    @property
    def name(self):
        return "UnreadVariable"

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._target.assign(value, read_value=read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._target.assign_add(delta, read_value=read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._target.assign_sub(delta, read_value=read_value)

    def __deepcopy__(self, memo):
        return self._target.__deepcopy__(memo)

    def __reduce__(self):
        return self._target.__reduce__()


def _shape_compatible(a, b):
    if a is None:  # unknown rank (a py_function output): the trace's op check says what to do
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _symbolic_numpy_error():
    return RuntimeError(
        "`.numpy()` was called inside tapeflow.function, where values are symbolic while tracing. "
        "Use tapeflow ops on the tensor instead (tapeflow.cond / tapeflow.while_loop for control flow "
        "that depends on it), tapeflow.print to see it at run time, or return it from the function "
        "and call .numpy() on the result.")


def _lift_symbolic(t):
    trace = STATE.trace
    if trace is None:
        raise _prim._leaked(_READ, t)
    return trace.lift_to_constant(t)


#: callbacks run on each Variable's creation (tracing's "first trace only"
#: rule and checkpoints' deferred restore subscribe here)
_CREATION_HOOKS: list = []
# id(variable) -> (weakref to it, replicas): variables made under a MirroredStrategy's scope,
# noted by tapeflow/distribute's creation hook (installed once a strategy is made), read by repr
_MIRRORED: dict = {}
#: constraints by variable id: (variable, fn), from Variable(constraint=) and Keras' add_weight;
#: optimizers apply them after updates (Variable.constraint reads it)
_CONSTRAINTS: dict = {}
_new = object.__new__


_READ = _prim.READ_VARIABLE
_NUMPY_MODE = _prim.NUMPY_MODE  # (one global load in __getitem__'s check)
_prim.set_tensor_types(Tensor, Variable)


# -- tf.register_tensor_conversion_function ------------------------------------------------------
#: (priority, registration number, base type(s), function): TF's order, lowest priority first
_CONVERSIONS: list = []
#: class -> its conversion functions in that order (an empty tuple: none), filled on first use
_CONVERSIONS_BY_CLASS: dict = {}


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """``tf.variable_creator_scope``: inside it, making a variable calls
    ``variable_creator(next_creator, **kwargs)`` (kwargs: TF's ``initial_value``, ``trainable``, ``name``,
    ``dtype``, ``shape``, ...), which may change them, record the variable, or return something else;
    ``next_creator(**kwargs)`` goes on to the enclosing scope's creator, the last one makes the
    variable. Keras layers' weights go through it as in TF (keras/engine.py KerasVariable)."""
    old = _CREATORS.stack
    _CREATORS.stack = old + (variable_creator,)
    try:
        yield
    finally:
        _CREATORS.stack = old


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """``tf.register_tensor_conversion_function``: ``conversion_func(value, dtype=None, name=None,
    as_ref=False)`` converts instances of ``base_type`` to a Tensor (or returns NotImplemented to
    pass), in ``convert_to_tensor`` and wherever an op meets such an operand. Consulted only for
    values no built-in conversion takes (after it failed: Tensors, NumPy values, Python scalars and
    lists never look), so registering costs the common conversions nothing; unlike TF, an object
    NumPy can convert (``__array__``) converts so before a function registered for its type is
    asked. TF 2.21's checks and errors."""
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not types or not all(isinstance(t, type) for t in types):
        raise TypeError(f"Argument `base_type` must be a type or a tuple of types. Obtained: {base_type}")
    if any(issubclass(t, (int, float, complex, np.generic, np.ndarray)) for t in types):
        raise TypeError("Cannot register conversions for Python numeric types and NumPy scalars and arrays.")
    if not callable(conversion_func):
        raise TypeError(f"Argument `conversion_func` must be callable. Received {conversion_func}.")
    _CONVERSIONS.append((priority, len(_CONVERSIONS), types, conversion_func))
    _CONVERSIONS.sort(key=lambda e: e[:2])
    _CONVERSIONS_BY_CLASS.clear()


def _registered_conversion(value, dtype=None):
    """The Tensor a registered conversion function makes of ``value``, or None when none is
    registered for its class (TF's errors for a function returning something else)."""
    c = value.__class__
    funcs = _CONVERSIONS_BY_CLASS.get(c)
    if funcs is None:
        funcs = _CONVERSIONS_BY_CLASS[c] = tuple(f for _, _, t, f in _CONVERSIONS if issubclass(c, t))
    if not funcs:
        return None
    want = None if dtype is None else _dt.as_dtype(dtype)
    for f in funcs:
        r = f(value, dtype=want, name=None, as_ref=False)
        if r is NotImplemented:
            continue
        if not isinstance(r, Tensor):
            raise RuntimeError(f"Conversion function {f!r} for type {c} returned non-Tensor: {r!r}")
        if want is not None and r.dtype != want:
            raise RuntimeError(f"Conversion function {f!r} for type {c} returned incompatible dtype: requested = "
                               f"{want.name}, actual = {r.dtype.name}")
        return r.read_value() if isinstance(r, Variable) else r
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type ({c}) to a Tensor.")


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Value -> Tensor (Tensors pass through; Variables are read)."""
    if isinstance(value, Variable):
        t = value.read_value()
        if dtype is not None and t.aval.dtype != _dt.np_dtype(dtype):
            raise TypeError(f"convert_to_tensor: variable {value.name} has dtype {t.aval.dtype.name}, "
                            f"requested {_dt.as_dtype(dtype).name}")
        return t
    if isinstance(value, Tensor):
        if dtype is not None and value.aval.dtype != _dt.np_dtype(dtype):
            raise TypeError(f"convert_to_tensor: tensor has dtype {value.aval.dtype.name}, requested "
                            f"{_dt.as_dtype(dtype).name}; use tapeflow.cast")
        return value
    if dtype is None and dtype_hint is not None and not isinstance(value, np.ndarray):
        dtype = dtype_hint
    t = _new(Tensor)
    try:
        t._v = _to_array(value, dtype)
    except (TypeError, ValueError):
        # a value no built-in conversion takes: a registered conversion function's, if any (so
        # the conversions above pay nothing for the registry: a try costs nothing until it raises)
        r = _registered_conversion(value, dtype) if _CONVERSIONS else None
        if r is None:
            raise
        return r
    return t


def constant(value, dtype=None, shape=None, name=None):
    """A constant tensor; Python floats default to float32, ints to int32 (as TF)."""
    if isinstance(value, Tensor):
        value = value.numpy()
    arr = _to_array(value, dtype)
    if shape is not None:
        shape = tuple(shape)
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        else:
            try:
                arr = arr.reshape(shape)
            except ValueError:
                raise ValueError(f"constant: cannot reshape {arr.size} values to shape {fmt_shape(shape)}") from None
    t = _new(Tensor)
    t._v = arr
    return t


def is_tensor(x):
    return isinstance(x, Tensor)
