"""``tapeflow.function``: trace Python into a Graph, optimize it, compile it.

Calling a Function:

1. computes the call's *signature*: tensors by (shape, dtype), Python
   scalars/strings by value, nested lists/tuples/dicts by structure, other
   objects by identity. A Variable argument counts by (shape, dtype, trainable)
   and by which other arguments are the same Variable, not by identity (as TF):
   the trace sees a stand-in Variable that each call binds to the Variable passed,
   so ``f(tf.Variable(1.)); f(tf.Variable(2.))`` traces once and reads and writes
   the variable of each call;
2. looks it up in the cache; on a miss, traces (runs the Python function once
   with symbolic tensors), explains the retrace (which argument changed, old
   vs new), runs the pass pipeline and compiles with a backend;
3. calls the compiled code on the arguments' arrays.

The fast path (a signature seen before, of plain Tensors / NumPy arrays and Python
scalars) costs a tuple build and a dict lookup before the compiled code runs.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import warnings
import weakref

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import Aval, fmt_shape
from ..core.state import STATE
from ..core.tensor import Tensor, Variable, _CREATION_HOOKS, _var_uid, constant
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..ir.tracer import Trace, fmt_src
from ..util import nest
from . import pipeline

_new = object.__new__
_ndarray = np.ndarray
RETRACE_WARN_AT = 5
#: callables ``listener(concrete_function)`` called after every new trace (tf.summary.trace_on
#: adds one to record graphs): an observer list, so nothing patches Function._trace
TRACE_LISTENERS = []
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel():
    """``stacklevel`` for warnings.warn called by our caller: the first frame outside tapeflow."""
    f = sys._getframe(2)  # 0: here, 1: the caller of warnings.warn (stacklevel 1), 2: its caller
    level = 2
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


from ..type_spec import TypeSpec  # noqa: E402
from .signature_text import (RankGenericConcreteFunction, check_python_arguments,  # noqa: E402
                             check_composite_arguments, signature_text, spec_text, unknown_rank)

class TensorSpec(TypeSpec):
    """Shape (None = any size) and dtype of a tensor argument (as tf.TensorSpec)."""

    value_type = property(lambda self: Tensor)

    def __init__(self, shape=None, dtype=np.float32, name=None):
        if isinstance(shape, (int, np.integer)):   # TF: TensorSpec(2) is the shape (2,)
            shape = (shape,)
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = _dt.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, t, name=None):
        return cls(t.shape, t.dtype, name)

    def is_compatible_with(self, x):
        av = x.aval
        if av.dtype != self.dtype.np:
            return False
        if self.shape is None:
            return True
        return len(av.shape) == len(self.shape) and all(
            s is None or s == d for s, d in zip(self.shape, av.shape))

    def __repr__(self):
        return spec_text(self.shape, self.dtype, self.name)  # TF's text

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


class TraceType:
    """``tf.types.experimental.TraceType``: what an argument's ``__tf_tracing_type__(context)``
    returns. Calls whose TraceTypes are equal (``__eq__``/``__hash__``) share a trace, which
    runs with ``placeholder_value()`` in the argument's place. TF can also generalise two
    types through ``most_specific_common_supertype``; tapeflow matches by equality only."""

    def is_subtype_of(self, other):
        raise NotImplementedError

    def most_specific_common_supertype(self, others):
        raise NotImplementedError

    def placeholder_value(self, placeholder_context=None):
        raise NotImplementedError


# -- signatures ----------------------------------------------------------------------------------

class _Text:
    """An object whose str and repr are a given text (TF's FunctionType prints as its signature)."""
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    __repr__ = __str__


class _Obj:
    """Cache-key leaf for an arbitrary object: by identity. The object is held weakly
    when possible (strongly otherwise), so a new object that reuses a dead one's id()
    never matches the dead one's trace."""
    __slots__ = ("oid", "desc", "ref")

    def __init__(self, o):
        self.oid = id(o)
        self.desc = f"{type(o).__name__} object at {hex(id(o))}"
        self.ref = _identity_ref(o)

    def __eq__(self, other):
        if not isinstance(other, _Obj) or other.oid != self.oid:
            return False
        o = self.ref()
        return o is not None and o is other.ref()

    def __hash__(self):
        return self.oid

    def __repr__(self):
        return self.desc


def _identity_ref(o, callback=None):
    try:
        return weakref.ref(o, callback)
    except TypeError:  # not weakly referenceable: hold it (correct, if not frugal)
        return lambda: o


def _leaf_key(x, var_ordinal=None):
    if isinstance(x, Variable):
        # TF's trace type of a variable: shape, dtype, trainable, and aliasing (f(a, a)
        # and f(a, b) differ: a write through one argument must be seen by the other)
        v = x._v
        return ("Variable", v.shape, v.dtype, x.trainable, var_ordinal[id(x)])
    if isinstance(x, Tensor):
        av = x.aval
        return ("Tensor", av.shape, av.dtype)
    if isinstance(x, np.ndarray) or _numpy_scalar(x):
        return ("Tensor", x.shape, x.dtype)
    if x is None or isinstance(x, (bool, int, float, str, bytes, np.generic)):
        return ("py", type(x).__name__, x)
    if isinstance(x, _dt.DType):
        return ("py", "dtype", x.name)
    if hasattr(type(x), "__tf_tracing_type__"):
        # TF's protocol: the object says which calls may share a trace (its TraceType's ==)
        return ("trace_type", x.__tf_tracing_type__(None))
    return ("obj", _Obj(x))


def _numpy_scalar(x):
    """A NumPy float32/float16 number: an argument tensor, as a NumPy array is (TF converts
    both), so f(np.float32(1)) and f(np.float32(2)) share a trace instead of one per value.
    NumPy ints and bools stay trace constants (keyed by value, as Python's): TF makes them
    tensors too, but here a size or a Python `if` on one needs its value while tracing. A
    np.float64 is a Python float (a subclass), weak as one in every op here, so it stays one."""
    return isinstance(x, np.generic) and x.dtype.kind == "f" and not isinstance(x, float)


def _is_array(x):
    return isinstance(x, (Tensor, np.ndarray)) or _numpy_scalar(x)


# -- composite tensors (SparseTensor...) as arguments and results --------------------------------------
# TF passes a composite tensor into and out of a tf.function as its component tensors, so a new
# SparseTensor of the same dtype and rank shares the trace. A composite class says how: its
# ``_tf_components()`` (a tuple of tensors), ``_tf_static()`` (hashable Python values that pick the
# trace) and ``_tf_from_components(static, components)``. A call's composites become ``_Parts``
# tuples (a tag, then the components), which the cache key and the traced inputs see as tensors;
# the traced body and the caller get the composites back.

class _Parts(tuple):
    """(_CompositeTag, component, ...): a composite value taken apart."""
    __slots__ = ()


#: id(component) -> its traced shape (None where calls differ: a SparseTensor's entry count),
#: filled by _expand_composites for the call being keyed
_RELAXED = {}


class _CompositeTag(tuple):
    """(class name, static): a composite's kind, a hashable Python leaf of the cache key."""
    __slots__ = ()


_COMPOSITE_CLASSES = {}


def _is_composite(x):
    return hasattr(type(x), "_tf_from_components")


def _expand_composites(structure):
    """The structure with each composite replaced by its _Parts (None when it has none: the
    common case pays one flatten)."""
    if not any(_is_composite(x) for x in nest.flatten(structure)):
        return None

    def parts(x):
        cls = type(x)
        _COMPOSITE_CLASSES[cls.__name__] = cls
        comps = tuple(x._tf_components())
        shapes = getattr(x, "_tf_component_shapes", None)
        if shapes is not None:
            for c, shape in zip(comps, shapes()):
                _RELAXED[id(c)] = tuple(shape)
        return _Parts((_CompositeTag((cls.__name__, x._tf_static())),) + comps)
    return _replace(structure, _is_composite, parts)


def _replace(structure, hit, fn):
    """``structure`` with each part for which ``hit`` holds replaced by ``fn(part)`` (the
    containers rebuilt as they are, namedtuples and dict types kept)."""
    def walk(x):
        if hit(x):
            return fn(x)
        if isinstance(x, dict):
            return type(x)((k, walk(v)) for k, v in x.items())
        if nest._is_namedtuple(x):
            return type(x)(*[walk(v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(walk(v) for v in x)
        return x
    return walk(structure)


def _is_composite_spec(s):
    """A composite's TypeSpec (tf.RaggedTensorSpec): it names its class and component TensorSpecs."""
    return hasattr(type(s), "_tf_component_specs")


def _spec_parts(s):
    """A composite spec as the _Parts of its component TensorSpecs (what a value of it is traced as)."""
    cls = s._tf_composite_class
    _COMPOSITE_CLASSES[cls.__name__] = cls
    return _Parts((_CompositeTag((cls.__name__, s._tf_static())),) + tuple(s._tf_component_specs()))


def _composite_leaves(fn_name, arg_name, spec, value):
    """The component tensors of ``value`` for an input_signature's composite ``spec`` (TypeError
    where it does not match, as TF's binding of the call)."""
    if not isinstance(value, spec._tf_composite_class) or not spec.is_compatible_with(value):
        mismatch = getattr(spec, "_tf_mismatch", None)   # (a spec with TF's own binding text)
        if mismatch is not None:
            raise mismatch(fn_name, arg_name, value)
        got = type(value).__name__ if not hasattr(value, "dtype") else \
            f"{type(value).__name__} of dtype {value.dtype!r} and shape {getattr(value, 'shape', '?')}"
        raise TypeError(f"{fn_name}: argument {arg_name!r} is a {got}, which does not match input_signature "
                        f"{spec!r}")
    comps = tuple(value._tf_components())
    specs = _spec_parts(spec)[1:]
    if len(comps) != len(specs) or not all(cs.is_compatible_with(c) for cs, c in zip(specs, comps)):
        raise TypeError(f"{fn_name}: argument {arg_name!r} ({value.dtype!r}, shape {value.shape}) does not match "
                        f"input_signature {spec!r}")
    return comps


def _unknown_rank_spec(s):
    """A composite spec with a component TensorSpec of unknown rank (``MaskedTensor.Spec(shape=None)``)."""
    if not _is_composite_spec(s) or not hasattr(s, "_tf_mismatch"):
        return False   # (a RaggedTensorSpec of unknown rank says itself that it needs one)
    return any(t.shape is None for t in s._tf_component_specs())


def type_spec_text(a):
    """A value's TypeSpec as TF prints it in a binding error (its type where it has none)."""
    try:
        from ..extension_type import type_spec_from_value
        return repr(type_spec_from_value(a))
    except Exception:  # noqa: BLE001 -- (a value without a spec: its type)
        return type(a).__name__


def _has_parts(structure):
    """Does a call's structure (lists, tuples, dicts) hold a composite taken apart (_Parts)?"""
    if isinstance(structure, _Parts):
        return True
    if isinstance(structure, dict):
        return any(_has_parts(v) for v in structure.values())
    if isinstance(structure, (list, tuple)):
        return any(_has_parts(v) for v in structure)
    return False


def _rebuild(tag, components):
    name, static = tag
    cls = _COMPOSITE_CLASSES.get(name)
    if cls is None:   # (a loaded SavedModel's result, in a process that never took one apart)
        from ..ragged.ragged_tensor import RaggedTensor
        from ..sparse import SparseTensor
        cls = _COMPOSITE_CLASSES[name] = {"RaggedTensor": RaggedTensor, "SparseTensor": SparseTensor}[name]
    return cls._tf_from_components(static, tuple(components))


def _rebuild_composites(structure):
    """The inverse of _expand_composites (on the traced inputs, or on packed results)."""
    return _replace(structure, lambda x: isinstance(x, _Parts), lambda x: _rebuild(x[0], x[1:]))


def _arg_variables(args, kwargs):
    """The distinct Variables among the arguments, in argument order."""
    seen = {}
    for x in nest.flatten((args, kwargs)):
        if isinstance(x, Variable):
            seen.setdefault(id(x), x)
    return list(seen.values())


def _stand_in(var):
    """A Variable object for the trace to read and write in place of the argument
    ``var``; ConcreteFunction.run_bound points it at each call's variable. Built
    without Variable.__init__: it is no variable the function created."""
    p = _new(type(var))
    for cls in type(var).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot != "__weakref__" and hasattr(var, slot):
                setattr(p, slot, getattr(var, slot))
    p._uid = next(_var_uid)
    return p


def _graph_variable_ids(graph):
    """ids of the Variables a graph (and its sub-graphs) reads or writes."""
    from ..ir.graph import subgraphs
    ids = set()
    for e in graph.eqns:
        v = e.params.get("var")
        if isinstance(v, Variable):
            ids.add(id(v))
        for g in subgraphs(e):
            ids |= _graph_variable_ids(g)
    return ids


def _describe_leaf(k):
    if k[0] == "Tensor":
        return f"Tensor(shape={fmt_shape(k[1])}, dtype={k[2].name})"
    if k[0] == "Variable":
        pinned = f", the object at {hex(k[5])}" if len(k) > 5 else ""
        return f"Variable(shape={fmt_shape(k[1])}, dtype={k[2].name}, trainable={k[3]}{pinned})"
    if k[0] == "py":
        return f"Python {k[1]} {k[2]!r}"
    if k[0] == "spec":
        return repr(k[1])
    return repr(k[1])


def _diff_keys(old, new, path="arg"):
    """Human-readable differences between two structure keys."""
    if old == new:
        return []
    is_leaf_old, is_leaf_new = _is_leaf_key(old), _is_leaf_key(new)
    if is_leaf_old or is_leaf_new or type(old) is not type(new):
        return [(path, _describe(old), _describe(new))]
    if isinstance(old, tuple) and len(old) == 2 and isinstance(old[1], tuple) and isinstance(new, tuple) \
            and len(new) == 2 and old[0] == new[0]:
        a, b = old[1], new[1]
        if old[0] == "dict":
            da, db = dict(a), dict(b)
            out = []
            for k in sorted(set(da) | set(db), key=repr):
                sub = f"{path}[{k!r}]"
                if k not in db:
                    out.append((sub, _describe(da[k]), "not given"))
                elif k not in da:
                    out.append((sub, "not given", _describe(db[k])))
                else:
                    out += _diff_keys(da[k], db[k], sub)
            return out
        if len(a) != len(b):
            if path == "arg[0]":
                return [("number of positional arguments", str(len(a)), str(len(b)))]
            return [(path, f"{len(a)} items", f"{len(b)} items")]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += _diff_keys(x, y, f"{path}[{i}]")
        return out
    return [(path, _describe(old), _describe(new))]


def _describe(k):
    if _is_leaf_key(k):
        return _describe_leaf(k)
    return str(k)


# -- concrete functions ------------------------------------------------------------------------

class ConcreteFunction:
    """One trace of a Function: the graph, its optimized form and the compiled code."""

    def __init__(self, fn_name, raw_graph, graph, compiled, out_tree, n_out, backend, timings, pass_log,
                 jit_compile=None, defer_tier_up=False):
        self.name = fn_name
        self.raw_graph = raw_graph
        self.graph = graph
        self.compiled = _object_outputs(compiled, graph)
        self.out_tree = out_tree
        self.n_out = n_out
        self.backend = backend
        self.timings = timings
        self.pass_log = pass_log
        self._signature_key = None  # the call's structure key (what the cache matched)
        self.python_signature = None  # the Python function's inspect.Signature (for the texts)
        self.bound_method = False
        #: traced with a composite argument (a RaggedTensor): calls take composites apart
        self.takes_composites = False
        #: stand-ins of the Variable arguments, in argument order (see run_bound)
        self.var_slots = []
        #: ids of the Variables the graph touches by identity (closures, attributes)
        self.captured_ids = set()
        self._single = out_tree[0] == "single"
        #: the compiled code's output arrays -> the function's output structure
        self._pack = _packer(out_tree)
        self.calls = 0
        self.fuse_at = pipeline.fuse_after(graph, jit_compile) if backend == "python" else -1
        self.fused_graph = None
        #: past the tier-up (or never having one): calls need no counting, and
        #: Function.__call__'s fast path runs ``compiled`` itself
        self.hot = self.fuse_at < 1
        if self.fuse_at == 1 and not defer_tier_up:
            # fused from the first call (jit_compile=True): compile that tier now, with the
            # trace, rather than inside the first call. The first call then runs at the speed
            # of the others (TD3's update: a ~1 s compile had landed in the first timed
            # learning step, get_concrete_function at construction being the trace). A trace made
            # for a call inside another trace (defer_tier_up: the caller inlines its graph) tiers up
            # at its first direct call instead, if one comes: no native compile for a graph only inlined
            self._tier_up()
            self.hot = True


    @property
    def structured_input_signature(self):
        """TF's ``((args...), {kwargs})`` of the traced call: TensorSpecs named after their
        parameters, Python values as they are."""
        from .signature_text import public_signature
        return public_signature(self, self._signature_key)

    @property
    def function_type(self):
        """TF's FunctionType of the trace: its text is ``(a: TensorSpec(...)) -> TensorSpec(...)``."""
        from .signature_text import function_type_text
        return _Text(function_type_text(self))

    @property
    def inference_fn(self):
        """TF's AtomicFunction of the trace: called with the flat tensor arguments."""
        return self

    @property
    def structured_outputs(self):
        """The outputs' structure with a TensorSpec for each tensor (see signature_text)."""
        from .signature_text import output_specs
        return output_specs(self)

    def _tier_up(self):
        """Hot: recompile with elementwise fusion (native loops), if it applies."""
        t = time.perf_counter()
        r = pipeline.tier_up(self.graph, self.name)
        if r is not None:
            self.compiled, self.backend, self.fused_graph = r
            self.compiled = _object_outputs(self.compiled, self.graph)
        self.timings["tier_up_s"] = time.perf_counter() - t

    def __str__(self):
        return "ConcreteFunction " + signature_text(self)  # TF's text; the graph is str(cf.graph)

    def pretty_printed_signature(self):
        return signature_text(self)

    def graph_dot(self, optimized=True):
        return (self.graph if optimized else self.raw_graph).to_dot(self.name)

    def source(self):
        """The generated Python source (python backend)."""
        return getattr(self.compiled, "__tapeflow_source__", None)

    def run(self, arrays):
        if STATE.profiler is not None:  # tapeflow.profile times the call, then calls back here
            return STATE.profiler.run_compiled(self, arrays)
        if not self.hot:
            self.calls += 1
            if self.calls >= self.fuse_at:
                self._tier_up()
                self.hot = True
        try:
            outs = self.compiled(*arrays)
        except Exception as e:
            raise _runtime_error(self, e) from None
        return self._pack(outs)

    def run_bound(self, arrays, variables):
        """Run with the stand-ins of the Variable arguments bound to ``variables``:
        the compiled code reads and writes each call's own variables."""
        slots = self.var_slots
        if not slots:
            return self.run(arrays)
        saved = [p._v for p in slots]  # restored after: a re-entrant call of this trace
        for p, v in zip(slots, variables):
            p._v = v._v
        try:
            return self.run(arrays)
        finally:
            for p, v, old in zip(slots, variables, saved):
                v._v = p._v  # an assign replaced the stand-in's buffer: it is the variable's now
                p._v = old

    def __call__(self, *args, **kwargs):
        if self.takes_composites:   # a RaggedTensor argument: its component tensors (a trace of tensors skips it)
            check_composite_arguments(self, args, kwargs)
            expanded = _expand_composites((args, kwargs))
            if expanded is not None:
                _RELAXED.clear()
                args, kwargs = expanded
        check_python_arguments(self, args, kwargs)
        flat = [a for a in nest.flatten((args, kwargs)) if _is_array(a)
                and not isinstance(a, Variable)]
        variables = _arg_variables(args, kwargs)
        if len(variables) != len(self.var_slots):
            raise TypeError(f"concrete function {self.name!r} was traced with {len(self.var_slots)} distinct "
                            f"Variable argument(s); got {len(variables)}")
        arrays = [a._v if isinstance(a, Tensor) else a for a in flat]
        self._check_arrays(arrays)
        return self.run_bound(arrays, variables)

    def _check_arrays(self, arrays):
        """A direct call's tensors against the traced inputs. The compiled code has the traced
        dtypes and static shapes built in, so another dtype would compute in it (an int32 result
        from a float32 trace) and another shape could broadcast or hit a folded size: both raise
        (TF 2.21 raises InvalidArgumentError for the dtype; it runs another shape)."""
        inputs = self.raw_graph.inputs
        if len(inputs) != len(arrays):
            return
        for i, (v, a) in enumerate(zip(inputs, arrays)):
            want, got = v.aval, (np.shape(a), np.asarray(a).dtype)
            if got[1] != want.dtype:
                raise InvalidArgumentTypeError(
                    f"concrete function {self.name!r}: input #{i} was traced as {want.dtype.name} but is "
                    f"{got[1].name}; cast it (tapeflow.cast) or get a concrete function for that dtype")
            if len(got[0]) != len(want.shape) or any(w is not None and w != d for w, d in zip(want.shape, got[0])):
                raise InvalidArgumentError(
                    f"concrete function {self.name!r}: input #{i} has shape {fmt_shape(got[0])}, but it was "
                    f"traced for {fmt_shape(want.shape)}; get a concrete function for that shape (a TensorSpec "
                    "with None for the dimensions that vary)")


_TENSOR = object()

#: Python values a call may pass on the fast path: trace constants, keyed by (type, value)
#: as _leaf_key keys them (the type too: 1, 1.0 and True are equal and hash alike)
_FAST_PY = frozenset({bool, int, float, str, type(None)})


def _fast_key(args, kwargs):
    """(key, arrays) of a call __call__'s fast path can take, else None: positional plain
    Tensors / NumPy arrays (key: shape, dtype; they are the compiled code's inputs, in
    order) and Python scalars, positional (key: type, value) or by keyword (name, type,
    value). Each entry starts with a tuple, a type or a str, which never compare equal,
    so calls with different signatures never share a key."""
    key = []
    arrays = []
    for a in args:
        c = a.__class__
        if c is Tensor:
            a = a._v
        elif c is not _ndarray:
            if c not in _FAST_PY:
                return None
            key.append(c)
            key.append(a)
            continue
        arrays.append(a)
        key.append(a.shape)
        key.append(a.dtype)
    if kwargs:
        for name, a in kwargs.items():
            c = a.__class__
            if c not in _FAST_PY:
                return None
            key.append(name)
            key.append(c)
            key.append(a)
    return tuple(key), arrays


def _object_outputs(compiled, graph):
    """``compiled``, or for a graph with string (object) outputs, a wrapper keeping them arrays:
    NumPy's ufuncs return a 0-d object result as the bare Python object (b'aa'), where a numeric
    one is a NumPy scalar (which has a shape and dtype). Numeric graphs keep the bare function."""
    idx = [i for i, v in enumerate(graph.outputs)
           if getattr(getattr(getattr(v, "aval", None), "dtype", None), "kind", None) == "O"]
    if not idx:
        return compiled

    def run(*arrays):
        outs = list(compiled(*arrays))
        for i in idx:
            if not isinstance(outs[i], np.ndarray):
                o = np.empty((), object)
                o[()] = outs[i]
                outs[i] = o
        return tuple(outs)
    return run


def _packer(out_tree):
    """``pack(outs)``: the traced output structure with a new Tensor around each output
    array and the other leaves (constants, None, strings) as traced; the same as
    nest.pack_sequence_as, written out once per trace as straight-line code. The generic
    walk cost 4-8 us per call for a tuple of 2-5 tensors (a train step's (loss, grads)),
    more than the fast path and the output of a single tensor together."""
    kind, payload = out_tree
    if kind == "single":
        payload = (_TENSOR, [_TENSOR])
    structure, leaves = payload
    ns = {"_new": _new, "_Tensor": Tensor}
    lines = []
    leaf_iter = iter(leaves)
    n_out = 0

    def const(x):
        name = f"_c{len(ns)}"
        ns[name] = x
        return name

    def expr(s):  # nest._pack's cases, in its order; leaves are consumed in flatten order
        nonlocal n_out
        if isinstance(s, dict):
            vals = {k: expr(s[k]) for k in sorted(s, key=nest._sort_key)}
            items = [(const(k), vals[k]) for k in s]
            if type(s) is dict:
                return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
            return f"{const(type(s))}([" + ", ".join(f"({k}, {v})" for k, v in items) + "])"
        if isinstance(s, _Parts):      # a composite result: built again from its components
            parts = [expr(v) for v in s]
            return f"{const(_rebuild)}({parts[0]}, ({''.join(p + ', ' for p in parts[1:])}))"
        if nest._is_namedtuple(s):
            return f"{const(type(s))}(" + ", ".join([expr(v) for v in s]) + ")"
        if isinstance(s, (list, tuple)):
            items = "".join([expr(v) + ", " for v in s])
            if type(s) is list:
                return f"[{items}]"
            return f"({items})" if type(s) is tuple else f"{const(type(s))}(({items}))"
        leaf = next(leaf_iter)
        if leaf is not _TENSOR:
            return const(leaf)
        i, n_out = n_out, n_out + 1
        lines.append(f"    t{i} = _new(_Tensor)\n    t{i}._v = outs[{i}]\n")
        return f"t{i}"

    ret = expr(structure)
    exec(compile("def pack(outs):\n" + "".join(lines) + f"    return {ret}\n", "<tapeflow-outputs>", "exec"), ns)
    return ns["pack"]


def _pack_tensors(out_tree, outs):
    """The traced output structure around tensors ``outs`` (an inlined call's; _packer's are arrays)."""
    kind, payload = out_tree
    if kind == "single":
        return outs[0]
    structure, leaves = payload
    it = iter(outs)
    vals = [next(it) if leaf is _TENSOR else leaf for leaf in leaves]
    if structure is None:   # (a SavedModel's tree of one output)
        return vals[0]
    return _rebuild_composites(nest.pack_sequence_as(structure, vals))


def _runtime_error(cf, e):
    from .backends.python_backend import eqn_for_traceback
    eqn = getattr(e, "_tapeflow_eqn", None) or eqn_for_traceback(cf.compiled, e.__traceback__)
    if eqn is None:
        return e
    eager = _eager_error(cf, e)
    if eager is not None:
        e = eager
    msg = f"{type(e).__name__}: {e}\n  in compiled function {cf.name!r}, op {eqn.prim.name}, " \
          f"traced from {fmt_src(eqn.src)}"
    if eager is not None:
        try:
            return type(e)(msg)
        except Exception:
            pass
    # a kernel's error reaches the caller as the same type as eagerly (eager_apply's
    # mapping): e.g. NumPy's OverflowError for an out-of-range constant is a ValueError
    kind = type(e) if isinstance(e, (ValueError, TypeError, IndexError)) else ValueError
    try:
        return kind(msg)
    except Exception:
        return RuntimeError(msg)


def _eager_error(cf, e):
    """The error eager mode raises for the failing equation, or None. A kernel that fails only
    when the function runs (a dim an input_signature or a ragged partition leaves unknown) raised
    NumPy's error, e.g. a ValueError for shapes that do not broadcast, where eagerly the op's rule
    raises TF's class and tapeflow's text: the pure op runs again eagerly on the operands it had,
    so both modes agree. Ops with effects are not run twice."""
    from ..core.primitive import bind
    from .backends.python_backend import operands_for_traceback
    found = operands_for_traceback(cf.compiled, e.__traceback__)
    if found is None:
        return None
    eqn, values = found
    if eqn.prim.effect is not None or eqn.prim.interpret is not None:
        return None
    try:
        bind(eqn.prim, *[Tensor(v) if isinstance(v, np.ndarray) else v for v in values], **eqn.params)
    except Exception as eager:   # noqa: BLE001 - eager's error is the outcome wanted
        return eager
    return None


# -- Function ----------------------------------------------------------------------------------

class Function:
    """A Python function compiled on first call per input signature."""

    def __init__(self, python_function, input_signature=None, name=None, backend=None,
                 jit_compile=None, reduce_retracing=False, autograph=True, experimental_relax_shapes=None,
                 _instance=None):
        self._python_function = python_function
        self._autograph = bool(autograph)
        self._reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
        #: True: every trace runs in the fused (native) tier from its first call; False: never
        #: (the first tier only); None: after the tier's call count (pipeline.fuse_after)
        self._jit_compile = jit_compile
        self._relaxed = []  # (key with None dims, ConcreteFunction): traces that serve many shapes
        self._converted = None  # the AutoGraph-converted function, made on the first trace
        # a method's Function holds its instance weakly when it can: the instance's
        # entry in the class-level Function then goes when the instance does
        self._instance_ref = None if _instance is None else _identity_ref(_instance)
        self.__name__ = name or getattr(python_function, "__name__", type(python_function).__name__)
        self.__doc__ = getattr(python_function, "__doc__", None)
        self._input_signature = None if input_signature is None else list(input_signature)
        self._backend = backend
        self._cache = {}        # full key -> ConcreteFunction
        self._fast = {}         # (shape, dtype, ...) of all-Tensor positional calls -> ConcreteFunction
        self._keys = []         # keys in trace order (for retrace explanations)
        self.retrace_reasons = []
        self._warned = False
        self._traced_once = False
        self._inlined = []      # (args, kwargs) specs of calls inlined into other traces
        #: (args, kwargs) given to get_concrete_function with specs of unknown rank (TensorSpec(None),
        #: MaskedTensor.Spec(shape=None)): TF traced one graph for every rank; tf.saved_model.save
        #: traces them at the ranks it saves
        self._generic = []
        self._tracing = set()   # keys of this function's traces in progress (a recursive call is inside one)
        self._bound = {} if _instance is None else None  # id(instance) -> (ref, Function)
        try:
            self._sig = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._sig = None
        functools.update_wrapper(self, python_function, updated=()) if callable(python_function) and \
            hasattr(python_function, "__name__") else None
        if name:  # update_wrapper copied the Python function's __name__ over the name= argument
            self.__name__ = name

    @property
    def _instance(self):
        r = self._instance_ref
        if r is None:
            return None
        obj = r()
        if obj is None:
            raise ReferenceError(f"tapeflow.function {self.__name__!r}: its instance no longer exists")
        return obj

    # methods: one Function per instance, so `self` is part of what is captured
    def __get__(self, obj, objtype=None):
        # by identity, not hash/==: instances that compare equal (or are unhashable, as
        # dataclasses) still get their own Function and cache
        if obj is None:
            return self
        hit = self._bound.get(id(obj))
        if hit is not None and hit[0]() is obj:
            return hit[1]
        bound = Function(self._python_function, self._input_signature, self.__name__, self._backend,
                         jit_compile=self._jit_compile, autograph=self._autograph,
                         reduce_retracing=self._reduce_retracing, _instance=obj)
        key = id(obj)
        bound_map = self._bound

        def _forget(_ref, key=key):
            entry = bound_map.get(key)
            if entry is not None and entry[0] is _ref:
                del bound_map[key]
        self._bound[key] = (_identity_ref(obj, _forget), bound)
        return bound

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    @property
    def trace_count(self):
        return len(self._keys)

    def experimental_get_tracing_count(self):
        return len(self._keys)

    def _call_fn(self, *args, **kwargs):
        if self._instance is not None:
            return self._python_function(self._instance, *args, **kwargs)
        return self._python_function(*args, **kwargs)

    def _call_traced(self, *args, **kwargs):
        """The function as traced: AutoGraph-converted (tensor-dependent if/while/for
        become cond/while_loop) unless autograph=False."""
        fn = self._python_function
        if self._autograph:
            if self._converted is None:
                from ..autograph.converter import convert
                self._converted = convert(fn)
            fn = self._converted
        if self._instance is not None:
            return fn(self._instance, *args, **kwargs)
        return fn(*args, **kwargs)

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        st = STATE
        if st.trace is None and not st.tapes and not RUN_EAGERLY[0]:
            # The fast path: a signature seen before (_call_slow fills _fast), of plain
            # Tensors and NumPy arrays (a NumPy array and a Tensor of the same shape and dtype
            # share a trace, as in TF, so both take it at the same cost) and Python scalars,
            # which are constants of the trace. Anything else goes the slow way.
            a = args[0] if len(args) == 1 and not kwargs else None
            c = a.__class__
            if c is Tensor:
                a = a._v
                c = _ndarray
            if c is _ndarray:  # one array, the common case: without _fast_key's call and loop
                arrays = (a,)
                cf = self._fast.get((a.shape, a.dtype))
            else:
                found = _fast_key(args, kwargs)
                if found is None:
                    return self._call_slow(args, kwargs)
                key, arrays = found
                cf = self._fast.get(key)
            if cf is not None:
                if cf.hot and st.profiler is None:
                    # ConcreteFunction.run's work once the trace is past its tier-up
                    try:
                        outs = cf.compiled(*arrays)
                    except Exception as e:
                        raise _runtime_error(cf, e) from None
                    if cf._single:
                        t = _new(Tensor)
                        t._v = outs[0]
                        return t
                    return cf._pack(outs)
                return cf.run(arrays)
        elif RUN_EAGERLY[0]:  # tapeflow.config.run_functions_eagerly(True): plain Python, for debugging
            return self._call_fn(*args, **kwargs)
        elif st.trace is not None:
            # called from inside another traced function. The call's specs are noted for
            # tf.saved_model.save, which traces them (the saved_model migration guide calls a
            # loaded model's __call__ that only a serving function had called)
            if len(self._inlined) < 8:
                self._note_inlined(args, kwargs)
            return self._call_nested(args, kwargs)
        return self._call_slow(args, kwargs)

    def _call_nested(self, args, kwargs):
        """A call from inside another function's trace. As TF: this function is traced as a function
        of its own, once per input signature (its tracing count, its concrete functions and its
        Python side effects count that way; a retrace of the outer function with the same inner
        signature does not trace it again), and its traced graph is inlined into the outer trace
        equation by equation (no call boundary at run time: the outer graph's passes see through it).
        What the inner graph cannot carry runs as before, the Python function traced in place: a
        custom gradient (not in the graph), composite arguments, and a function whose own trace
        fails, e.g. on a symbolic tensor of the outer trace it closes over."""
        if RUN_EAGERLY[0] or (self._input_signature is None and _expand_composites((args, kwargs)) is not None):
            _RELAXED.clear()
            return self._call_traced(*args, **kwargs)
        try:
            c_args, c_kwargs = self._canonical(args, kwargs)
            variables = _arg_variables(c_args, c_kwargs) if self._input_signature is None else []
            # variables by identity (pinned): the inlined graph reads and writes the caller's own
            # variables (a stand-in would be bound only by a compiled call of this function)
            key, leaves = self._signature(c_args, c_kwargs, variables, pinned=bool(variables))
            cf = self._cache.get(key) or (self._relaxed_for(key) if not variables else None)
            if cf is None and key not in self._tracing:
                # (a key being traced: a recursive call on a tensor condition, traced in place below, where
                # it fails as before with RecursionError; a trace of its own would start one at every
                # level. Other signatures, a Python argument counting down, get their own traces, as TF's)
                # a trace of its own: no tape of the outer trace records it (the inlined equations
                # are what the outer tapes see)
                saved, tapes = STATE.trace, STATE.tapes
                STATE.tapes = ()
                try:
                    cf = self._trace(c_args, c_kwargs, key, variables, pinned=bool(variables), nested=True)
                finally:
                    STATE.trace, STATE.tapes = saved, tapes
        except RecursionError:
            raise                # (in place it would recurse again, level by level)
        except Exception:  # noqa: BLE001 -- traced in place below, where a genuine error is raised again
            _RELAXED.clear()
            cf = None
        if cf is None or cf.custom_gradient is not None or cf.takes_composites:
            return self._call_traced(*args, **kwargs)
        from ..ir.control_flow import inline_graph
        outs = inline_graph(cf.raw_graph, leaves)
        return _pack_tensors(cf.out_tree, [o if isinstance(o, Tensor) else Tensor(o) for o in outs])

    def _note_inlined(self, args, kwargs):
        def spec(x):
            return TensorSpec.from_tensor(x) if isinstance(x, Tensor) and not isinstance(x, Variable) else x
        try:
            specs = nest.map_structure(spec, (tuple(args), dict(kwargs)))
            if specs not in self._inlined:
                self._inlined.append(specs)
        except Exception:  # noqa: BLE001 -- values that do not compare (arrays): not noted
            pass

    def _note_generic(self, args, kwargs):
        try:
            if len(self._generic) < 8 and (tuple(args), dict(kwargs)) not in self._generic:
                self._generic.append((tuple(args), dict(kwargs)))
        except Exception:  # noqa: BLE001 -- values that do not compare (arrays): not noted
            pass

    def _call_slow(self, args, kwargs):
        if STATE.tapes:
            return self._call_under_tape(args, kwargs)
        if self._input_signature is None:
            expanded = _expand_composites((args, kwargs))
            if expanded is not None:     # composites in, taken apart (never the fast path)
                try:
                    return self._call_slow_expanded(*expanded)
                finally:
                    _RELAXED.clear()
        return self._call_slow_expanded(args, kwargs)

    def _call_slow_expanded(self, args, kwargs):
        fast = _fast_key(args, kwargs)  # of the call as made: __call__ looks it up before _canonical
        if fast is not None and self._input_signature is not None and (
                kwargs or len(fast[1]) != len(args) or not self._flat_signature(len(args))):
            fast = None  # an input_signature converts Python values to tensor inputs: no fast path
        args, kwargs = self._canonical(args, kwargs)
        variables = _arg_variables(args, kwargs) if self._input_signature is None else []
        key, leaves = self._signature(args, kwargs, variables)
        cf = self._cache.get(key)
        if cf is None:
            cf = self._relaxed_for(key)
            if cf is not None:
                self._cache[key] = cf
            elif self._reduce_retracing and (relaxed := self._relax_against_earlier(key)) is not None:
                cf = self._trace(args, kwargs, relaxed, variables)
                self._cache[key] = cf
            else:
                cf = self._trace(args, kwargs, key, variables)
        if any(id(v) in cf.captured_ids for v in variables):
            # the function also reaches one of these variables by identity (a closure, an
            # attribute): a stand-in would split that variable in two within one call, so
            # this call gets a trace of its own with the variables themselves
            key, _ = self._signature(args, kwargs, variables, pinned=True)
            cf = self._cache.get(key) or self._trace(args, kwargs, key, variables, pinned=True)
        arrays = [x._v if isinstance(x, Tensor) else np.asarray(x) for x in leaves]
        if fast is not None:
            # later calls with these shapes, dtypes and Python values take __call__'s fast
            # path (with an input_signature: the check above passed, and it depends on nothing
            # else); its arrays are these leaves: the positional tensors, in order
            self._fast[fast[0]] = cf
        return cf.run_bound(arrays, variables)

    def _flat_signature(self, n):
        """Is the input_signature ``n`` TensorSpecs, one per positional argument?"""
        specs = self._input_signature
        return len(specs) == n and all(isinstance(s, TensorSpec) for s in specs)

    def _canonical(self, args, kwargs):
        """Arguments given by keyword for positional parameters move to their position,
        so f(x, flag=True) and f(x, True) share a trace (defaults are not filled in)."""
        if not kwargs or self._sig is None:
            return args, kwargs
        pre = (self._instance,) if self._instance is not None else ()
        try:
            ba = self._sig.bind(*pre, *args, **kwargs)
        except TypeError:
            return args, kwargs  # the call itself will raise Python's error
        return tuple(ba.args[len(pre):]), dict(ba.kwargs)

    def _call_under_tape(self, args, kwargs):
        # A tape outside the function must see every op to differentiate through
        # it, so the function body runs eagerly here (once-per-function warning).
        if not getattr(self, "_warned_tape", False):
            warnings.warn(f"tapeflow.function {self.__name__!r} was called inside a GradientTape: it runs "
                          "eagerly so the tape can record it. For speed, open the tape inside the function "
                          "(compute gradients and apply them there).", stacklevel=_user_stacklevel())
            self._warned_tape = True
        return self._call_fn(*args, **kwargs)

    def _signature(self, args, kwargs, variables=(), pinned=False):
        """(cache key, tensor leaves in input order). ``variables``: the distinct Variable
        arguments (_arg_variables); ``pinned``: key them by identity too."""
        if self._input_signature is not None:
            return self._check_signature(args, kwargs)
        leaves = [x for x in nest.flatten((args, kwargs)) if _is_array(x)
                  and not isinstance(x, Variable)]
        ordinal = {id(v): i for i, v in enumerate(variables)}

        def leaf(x):
            k = _leaf_key(x, ordinal)
            if _RELAXED and k[0] == "Tensor" and id(x) in _RELAXED:
                k = ("Tensor", _RELAXED[id(x)], k[2])
            # a pinned trace holds its variables (graph params), so their ids stay theirs
            return k + (id(x),) if pinned and k[0] == "Variable" else k
        return nest.structure_key((args, kwargs), leaf), leaves

    def _check_signature(self, args, kwargs):
        specs = self._input_signature
        if kwargs:
            args = tuple(args) + tuple(kwargs.values())
        if len(args) != len(nest.flatten(specs, )) and len(args) != len(specs):
            raise TypeError(f"{self.__name__}: input_signature has {len(specs)} entries, got {len(args)} "
                            "arguments")
        flat_specs = nest.flatten(specs)
        flat_args = nest.flatten(list(args))
        if len(args) == len(specs):
            try:
                # up to the specs' structure: a Python list where a TensorSpec stands is one
                # argument, converted to a tensor of the spec's dtype (as TF: f([1.0, 2.0]))
                flat_args = nest.flatten_up_to(list(specs), list(args))
            except ValueError:
                flat_args = None
        if flat_args is None or len(flat_specs) != len(flat_args):
            raise TypeError(f"{self.__name__}: arguments do not match the structure of input_signature")
        names = self._arg_names(len(flat_args))
        leaves = []
        ranks = []
        for i, (s, a) in enumerate(zip(flat_specs, flat_args)):
            if _is_composite_spec(s):   # (a RaggedTensorSpec: the argument's component tensors)
                leaves += _composite_leaves(self.__name__, names[i], s, a)
                continue
            if isinstance(a, float) and s.dtype.np.kind in "iub":
                raise TypeError(f"{self.__name__}: argument {names[i]!r} is the Python float {a!r}, but "
                                f"input_signature wants {s!r}; pass an int (no silent truncation)")
            t = a if isinstance(a, Tensor) else Tensor(a, s.dtype) if not isinstance(a, np.ndarray) else Tensor(a)
            if isinstance(t, Variable):
                t = t.read_value()
            if not s.is_compatible_with(t):
                raise TypeError(
                    f"{self.__name__}: argument {names[i]!r} has shape {fmt_shape(t.aval.shape)} and dtype "
                    f"{t.aval.dtype.name}, which contradicts input_signature {s!r}")
            leaves.append(t)
            # a TensorSpec of unknown rank (shape=None) gets a trace per rank met, as
            # get_concrete_function's RankGenericConcreteFunction: one key for every rank would
            # run a rank-2 call through the graph of the first call's rank (a silent wrong answer)
            if s.shape is None:
                ranks.append(len(t.aval.shape))
        return ("signature",) + tuple(ranks), leaves

    def _arg_names(self, n):
        if self._sig is None:
            return [f"arg{i}" for i in range(n)]
        names = [p for p in self._sig.parameters if p != "self" or self._instance is None]
        if self._instance is not None and names and names[0] == "self":
            names = names[1:]
        return (names + [f"arg{i}" for i in range(len(names), n)])[:n] if len(names) >= 1 else \
            [f"arg{i}" for i in range(n)]

    # -- shape-generic traces (reduce_retracing, TensorSpec with None) ---------------------------------
    def _relaxed_for(self, key):
        for rkey, cf in self._relaxed:
            if _key_matches(rkey, key):
                return cf
        return None

    def _relax_against_earlier(self, key):
        """TF's reduce_retracing: a new shape for a tensor argument seen before
        with the same rank and dtype makes the differing dims unknown (None)."""
        for old in reversed(self._keys):
            r = _relax_key(old, key)
            if r is not None and r != key:
                return r
        return None

    # -- tracing -----------------------------------------------------------------------------------
    def _explain(self, key):
        if not self._keys:
            return None
        best = None
        for old in self._keys:
            diffs = _diff_keys(old, key)
            if best is None or len(diffs) < len(best):
                best = diffs
        names = self._param_names()
        out = []
        for path, a, b in best or []:
            out.append(f"{_pretty_path(path, names)}: {a} -> {b}")
        return out or ["signature changed"]

    def _param_names(self):
        if self._sig is None:
            return []
        names = list(self._sig.parameters)
        if self._instance is not None and names and names[0] == "self":
            names = names[1:]
        return names

    def _trace(self, args, kwargs, key, variables=(), pinned=False, nested=False):
        reasons = self._explain(key)
        if reasons is not None:
            self.retrace_reasons.append(reasons)
            self._maybe_warn()
        t0 = time.perf_counter()
        from ..autodiff.custom_gradient import TRACED as _custom
        custom_before = _custom[0]
        stand_ins = [] if pinned else [_stand_in(v) for v in variables]
        var_map = {id(v): p for v, p in zip(variables, stand_ins)}
        trace, out, created = self._trace_once(args, kwargs, key, var_map)
        if created and self._traced_once:
            raise ValueError(
                f"tapeflow.function {self.__name__!r} created {len(created)} Variable(s) "
                f"({', '.join(v._name for v in created[:3])}) on a call after its first trace (new input "
                "signature). Variables may only be created on the first trace (as tf.function): create "
                "them outside the function, or build the model/optimizer before the second signature.")
        if created:
            # As TF: a first trace that created variables is traced again, and that trace must
            # create none (the variables exist now, so `if self.v is None:` guards, Keras' lazy
            # build and optimizer slots skip their creation). A function that creates a Variable
            # on every trace has no graph form; TF raises this ValueError on its first call.
            custom_before = _custom[0]   # (the custom gradients of the trace kept)
            trace, out, again = self._trace_once(args, kwargs, key, var_map)
            if again:
                raise ValueError(
                    f"tapeflow.function {self.__name__!r} creates Variable(s) "
                    f"({', '.join(v._name for v in again[:3])}) on every trace. tf.function only supports "
                    "singleton Variables created on the first call: create them outside the function, or "
                    "only once (`if self.v is None: self.v = tapeflow.Variable(...)`).")
        flat_out = nest.flatten(out)
        tensors = []
        tree_leaves = []
        for o in flat_out:
            if isinstance(o, Tensor):
                tensors.append(o)
                tree_leaves.append(_TENSOR)
            elif isinstance(o, (bool, int, float, np.generic)):
                # a Python number returned from the function comes back as a tensor (as TF);
                # it is a constant of the trace, so the same Tensor serves every call
                tree_leaves.append(constant(o))
            else:
                tree_leaves.append(o)
        raw = trace.finish(tensors)
        t1 = time.perf_counter()
        graph, plan, pass_log = pipeline.optimize(raw, name=self.__name__)
        t2 = time.perf_counter()
        compiled, backend = pipeline.compile(graph, plan, name=self.__name__, backend=self._backend)
        t3 = time.perf_counter()
        if isinstance(out, Tensor) and len(tensors) == 1:
            out_tree = ("single", None)
        else:
            out_tree = ("tree", (out, tree_leaves))
        cf = ConcreteFunction(self.__name__, raw, graph, compiled, out_tree, len(tensors), backend,
                              {"trace_s": t1 - t0, "optimize_s": t2 - t1, "compile_s": t3 - t2}, pass_log,
                              jit_compile=self._jit_compile, defer_tier_up=nested)
        # an input_signature's cache key is the bare ("signature",): the texts (str(cf),
        # pretty_printed_signature) describe the specs' shapes and dtypes instead
        cf._signature_key = key if self._input_signature is None else nest.structure_key(
            (tuple(self._input_signature), {}),
            lambda s: ("spec", s) if _is_composite_spec(s) else ("Tensor", s.shape, s.dtype.np))
        cf.python_signature, cf.bound_method = self._sig, self._instance is not None
        cf.takes_composites = _has_parts((args, kwargs)) or (self._input_signature is not None and any(
            _is_composite_spec(s) for s in nest.flatten(self._input_signature)))
        cf.var_slots = stand_ins
        #: the name of a custom_gradient function the trace ran (its gradient is not in the graph)
        cf.custom_gradient = _custom[1] if _custom[0] != custom_before else None
        # the trace's custom_gradient calls a SavedModel can keep (None: some cannot be kept, in a
        # cond/loop body or reading variables; each call of the last _trace_once is a region then)
        regions = trace.custom_regions
        cf.custom_regions = regions if cf.custom_gradient is None or len(regions) == _custom[0] - custom_before \
            else None
        cf.captured_ids = _graph_variable_ids(raw) - {id(p) for p in stand_ins}
        for p in stand_ins:
            # between calls a stand-in holds no variable's buffer (run_bound binds it)
            p._v = np.broadcast_to(np.zeros((), p._v.dtype), p._v.shape)
        self._cache[key] = cf
        if any(k[0] == "Tensor" and None in k[1] for k in _key_leaves(key)):
            self._relaxed.append((key, cf))
        self._keys.append(key)
        self._traced_once = True
        prof = STATE.profiler
        if prof is not None:
            prof.on_trace(self.__name__, reasons, cf.timings)
        for listener in tuple(TRACE_LISTENERS):
            listener(cf)
        return cf

    def _trace_once(self, args, kwargs, key, var_map):
        """(trace, output, Variables created while tracing)."""
        trace = Trace()
        created = []
        hook = created.append
        _CREATION_HOOKS.append(hook)
        nested_key = key not in self._tracing
        self._tracing.add(key)
        try:
            with trace:
                t_args, t_kwargs = self._symbolic_args(trace, args, kwargs, _key_leaves(key), var_map)
                trace.name_inputs(self._python_function, t_args, t_kwargs, bound=self._instance is not None)
                t_args, t_kwargs = _rebuild_composites((t_args, t_kwargs))
                out = self._call_traced(*t_args, **t_kwargs)
                relaxed = dict(_RELAXED)
                expanded = _expand_composites(out)
                if expanded is not None:       # composite results go out as their components
                    out = expanded
                    # (the results' component shapes key nothing: only the call's arguments do)
                    _RELAXED.clear()
                    _RELAXED.update(relaxed)
        finally:
            _CREATION_HOOKS.remove(hook)
            if nested_key:
                self._tracing.discard(key)
        return trace, out, created

    def _symbolic_args(self, trace, args, kwargs, key_leaves=(), var_map=None):
        if self._input_signature is not None:
            specs = nest.flatten(self._input_signature)
            leaves = iter(self._check_signature(args, kwargs)[1])
            flat = []
            for s in specs:
                if _is_composite_spec(s):   # its components' inputs; _trace_once rebuilds the value
                    parts = _spec_parts(s)
                    comps = []
                    for cs in parts[1:]:
                        next(leaves)
                        comps.append(trace.new_input(Aval(cs.shape, cs.dtype.np)))
                    flat.append(_Parts((parts[0],) + tuple(comps)))
                    continue
                a = next(leaves)
                flat.append(trace.new_input(Aval(s.shape if s.shape is not None else (None,) * len(a.aval.shape),
                                                 s.dtype.np)))
            n = len(args)
            packed = nest.pack_sequence_as(list(self._input_signature), flat)
            return tuple(packed[:n]), {}

        # the key's leaves give each tensor argument its traced shape (None dims
        # for a shape-generic trace); they come in the same order as the arguments
        leaves = iter(key_leaves)

        def conv(x):
            k = next(leaves, None)
            if isinstance(x, Variable):
                return var_map.get(id(x), x) if var_map else x
            if _is_array(x):
                shape = k[1] if k is not None else None
                av = x.aval if isinstance(x, Tensor) else Aval(x.shape, x.dtype)
                return trace.new_input(Aval(shape, av.dtype) if shape is not None else av)
            if k is not None and k[0] == "trace_type":
                return k[1].placeholder_value(None)  # TF traces with the TraceType's placeholder
            return x
        return nest.map_structure(conv, (tuple(args), dict(kwargs)))

    def _maybe_warn(self):
        n = len(self._keys) + 1
        if n >= RETRACE_WARN_AT and not self._warned:
            self._warned = True
            counts = {}
            for r in self.retrace_reasons:
                for line in r:
                    arg = line.split(":")[0]
                    counts[arg] = counts.get(arg, 0) + 1
            arg = max(counts, key=counts.get) if counts else "an argument"
            # the advice fits the argument named: its latest change
            mine = [line for r in self.retrace_reasons for line in r if line.split(":")[0] == arg]
            last = mine[-1] if mine else ""
            if "Python" in last:
                fix = "pass it as a tensor (tapeflow.constant(...)) instead of a Python number"
            elif "Tensor(" in last:
                fix = ("give the function an input_signature (tapeflow.TensorSpec) with None for the "
                       "dimension that varies")
            else:
                fix = ("pass the same object on every call (objects are cached by identity), or pass "
                       "the values that change as tensors")
            warnings.warn(
                f"tapeflow.function {self.__name__!r} has been traced {n} times; most retraces come "
                f"from argument {arg!r} (last change: {last}). To avoid retracing, {fix}.",
                RetracingWarning, stacklevel=_user_stacklevel())

    # -- introspection -------------------------------------------------------------------------------
    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction (graph + compiled code) for these arguments (traces if needed).
        Arguments may be TensorSpecs."""
        if self._input_signature is not None and not args and not kwargs:
            args = tuple(nest.map_structure(_spec_example, s) for s in self._input_signature)
        elif unknown_rank(args, kwargs, TensorSpec):  # TensorSpec(None): a trace per rank met
            return RankGenericConcreteFunction(self, args, kwargs)
        elif self._input_signature is None and any(_unknown_rank_spec(a) for a in nest.flatten((args, kwargs))):
            return _SpecGenericConcreteFunction(self, args, kwargs)
        args, kwargs = self._canonical(tuple(args), kwargs)
        if self._input_signature is None:
            # composite arguments (a RaggedTensor) and their specs (a RaggedTensorSpec) as the
            # _Parts of their components, as a call takes them apart
            args, kwargs = _replace((tuple(args), dict(kwargs)), _is_composite_spec, _spec_parts)
            args, kwargs = _expand_composites((args, kwargs)) or (args, kwargs)
        try:
            return self._concrete_function(args, kwargs)
        finally:
            _RELAXED.clear()

    def _concrete_function(self, args, kwargs):
        variables = _arg_variables(args, kwargs)
        ordinal = {id(v): i for i, v in enumerate(variables)}

        def leaf(a):
            if isinstance(a, TensorSpec):
                return ("Tensor", a.shape, a.dtype.np)
            k = _leaf_key(a, ordinal)
            return ("Tensor", _RELAXED[id(a)], k[2]) if _RELAXED and k[0] == "Tensor" and id(a) in _RELAXED else k
        spec_key = nest.structure_key((tuple(args), dict(kwargs)), leaf)
        args = nest.map_structure(lambda a: _spec_example(a) if isinstance(a, TensorSpec) else a, args)
        kwargs = nest.map_structure(lambda a: _spec_example(a) if isinstance(a, TensorSpec) else a, kwargs)
        if self._input_signature is None:
            # a TensorSpec's None dims stay unknown in the trace, so the concrete
            # function serves every shape that matches (as TF's)
            cf = self._cache.get(spec_key) or self._relaxed_for(spec_key)
            return cf if cf is not None else self._trace(args, kwargs, spec_key, variables)
        args, kwargs = self._canonical(tuple(args), kwargs)
        key, _ = self._signature(args, kwargs)
        cf = self._cache.get(key)
        if cf is None:
            cf = self._trace(args, kwargs, key)
        return cf

    def graph_dot(self, *args, **kwargs):
        return self.get_concrete_function(*args, **kwargs).graph_dot()

    def pretty_printed_concrete_signatures(self):
        return "\n\n".join(signature_text(self._cache[k]) for k in self._keys if k in self._cache)

    def explain(self):
        """A report: each trace, why it happened, and its timings."""
        lines = [f"tapeflow.function {self.__name__!r}: {len(self._keys)} trace(s)"]
        for i, (k, cf) in enumerate(self._cache.items()):
            t = cf.timings
            lines.append(f"  trace {i + 1}: backend={cf.backend}, {len(cf.raw_graph.eqns)} eqns -> "
                         f"{len(cf.graph.eqns)} after passes; trace {t['trace_s'] * 1e3:.1f} ms, "
                         f"optimize {t['optimize_s'] * 1e3:.1f} ms, compile {t['compile_s'] * 1e3:.1f} ms")
        for i, r in enumerate(self.retrace_reasons):
            lines.append(f"  retrace {i + 1}: " + "; ".join(r))
        return "\n".join(lines)

    def __repr__(self):
        return f"<tapeflow.function {self.__name__}>"


#: set by tapeflow.config.run_functions_eagerly (a list: read on every call, rebound never)
RUN_EAGERLY = [False]


class RetracingWarning(UserWarning):
    pass


def _pretty_path(path, names):
    # "arg[0][1]['x']" -> "x" / "state" using parameter names
    if path.startswith("arg[0]["):
        rest = path[len("arg[0]["):]
        idx = int(rest.split("]")[0])
        tail = rest[len(str(idx)) + 1:]
        name = names[idx] if idx < len(names) else f"arg{idx}"
        return name + tail
    if path.startswith("arg[1]["):
        return path[len("arg[1]["):].split("]")[0].strip("'") + path[len("arg[1]["):].split("]", 1)[1]
    return path


_LEAF_TAGS = ("Tensor", "Variable", "py", "obj", "spec", "trace_type")


def _is_leaf_key(k):
    return isinstance(k, tuple) and bool(k) and isinstance(k[0], str) and k[0] in _LEAF_TAGS


def _key_leaves(key):
    """The leaf keys of a structure key, in argument order."""
    if _is_leaf_key(key):
        return [key]
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], tuple):
        subs = key[1]
        if key[0] == "dict":
            subs = [v for _, v in subs]
        return [leaf for sub in subs for leaf in _key_leaves(sub)]
    return []


def _map_keys(a, b, leaf_fn):
    """Walk two structure keys together; leaf_fn(la, lb) -> new leaf or None (mismatch)."""
    if _is_leaf_key(a) or _is_leaf_key(b):
        if not (_is_leaf_key(a) and _is_leaf_key(b)):
            return None
        return leaf_fn(a, b)
    if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 and a[0] == b[0]
            and isinstance(a[1], tuple) and isinstance(b[1], tuple) and len(a[1]) == len(b[1])):
        return a if a == b else None
    out = []
    for x, y in zip(a[1], b[1]):
        if a[0] == "dict":
            if x[0] != y[0]:
                return None
            m = _map_keys(x[1], y[1], leaf_fn)
            if m is None:
                return None
            out.append((x[0], m))
        else:
            m = _map_keys(x, y, leaf_fn)
            if m is None:
                return None
            out.append(m)
    return (a[0], tuple(out))


def _relax_leaf(a, b):
    if a[0] == b[0] == "Tensor" and a[2] == b[2] and len(a[1]) == len(b[1]):
        return ("Tensor", tuple(x if x == y else None for x, y in zip(a[1], b[1])), a[2])
    return a if a == b else None


def _match_leaf(r, k):
    if r[0] == k[0] == "Tensor" and r[2] == k[2] and len(r[1]) == len(k[1]) and \
            all(x is None or x == y for x, y in zip(r[1], k[1])):
        return k
    return k if r == k else None


class _SpecGenericConcreteFunction:
    """get_concrete_function(Spec) whose TensorSpecs have an unknown rank (``MaskedTensor.Spec(shape=None)``):
    TF traces once for every rank; tapeflow's graphs have ranks, so each call is checked against the specs
    (TF's TypeError for a value of another spec) and runs the Function, which traces once per spec met."""

    def __init__(self, function, args, kwargs):
        self._function, self._args, self._kwargs = function, tuple(args), dict(kwargs)
        self.name = function.__name__
        function._note_generic(self._args, self._kwargs)

    def __call__(self, *args, **kwargs):
        for spec, a in zip(nest.flatten((self._args, self._kwargs)), nest.flatten((args, kwargs))):
            if _is_composite_spec(spec) and not (isinstance(a, spec._tf_composite_class) and spec.is_compatible_with(a)):
                raise TypeError(f"Binding inputs to the concrete function {self.name!r} failed: can not cast "
                                f"{type_spec_text(a)} to {spec!r}")
        return self._function(*args, **kwargs)


def _relax_key(old, new):
    return _map_keys(old, new, _relax_leaf)


def _key_matches(relaxed, key):
    return _map_keys(relaxed, key, _match_leaf) is not None


def _spec_example(s):
    if _is_composite_spec(s):   # a value built from example components (only its specs are traced)
        parts = _spec_parts(s)
        return _rebuild(parts[0], [_spec_example(c) for c in parts[1:]])
    if not isinstance(s, TensorSpec):
        return s
    shape = tuple(1 if d is None else d for d in (s.shape or ()))
    if s.dtype.np.kind == "O":     # a string spec: empty strings (np.zeros of objects holds int 0s)
        return Tensor(np.full(shape, b"", object))
    return Tensor(np.zeros(shape, s.dtype.np))


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_relax_shapes=None, name=None, backend=None, experimental_implements=None,
             experimental_autograph_options=None, experimental_attributes=None, experimental_compile=None,
             experimental_follow_type_hints=None):
    """Compile ``func`` (decorator or call). See the module docstring. TF's other keywords: ``experimental_compile``
    is ``jit_compile``'s old name; ``experimental_implements``, ``experimental_autograph_options`` and
    ``experimental_attributes`` annotate TF's graph (grappler, AutoGraph features) and change no result here;
    ``experimental_follow_type_hints=True`` (tensors for arguments annotated ``tf.Tensor``) is refused."""
    if experimental_compile is not None and jit_compile is None:
        jit_compile = experimental_compile
    if experimental_follow_type_hints:
        raise NotImplementedError("tapeflow.function: experimental_follow_type_hints=True is not supported (it "
                                  "changes which Python arguments retrace); convert such arguments with "
                                  "tf.convert_to_tensor before the call")
    if func is None:
        return lambda f: function(f, input_signature, autograph, jit_compile, reduce_retracing,
                                  experimental_relax_shapes, name, backend)
    if isinstance(func, Function):
        return func
    return Function(func, input_signature=input_signature, name=name, backend=backend, autograph=autograph,
                    jit_compile=jit_compile, reduce_retracing=reduce_retracing,
                    experimental_relax_shapes=experimental_relax_shapes)
