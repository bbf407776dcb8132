"""TF 2.21's texts for traced signatures: ``TensorSpec`` reprs, ``print(concrete_function)``,
``pretty_printed_concrete_signatures()``, and shape-generic concrete functions for
``TensorSpec(None)`` (unknown rank).

The texts follow TF's format (checked against TF 2.21)::

    ConcreteFunction Input Parameters:
      a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.int32, name=None)
      b (POSITIONAL_OR_KEYWORD): Literal[2]
    Output Type:
      TensorSpec(shape=(), dtype=tf.int32, name=None)
    Captures:
      None

Python values are ``Literal[...]``; lists, tuples and dicts ``List[...]``, ``Tuple[...]``,
``Dict[['k', ...], ...]``; captured variables ``<id>: TensorSpec(shape=(), dtype=tf.resource,
name=None)``. TF's text names its own trace types, so an argument of another kind (a
Variable, an object keyed by identity) shows tapeflow's description of it.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..core import dtypes as _dt
from ..util import nest
from ..core.tensor import Tensor as _Tensor


def shape_text(shape) -> str:
    """TF's ``str(TensorShape)``: ``(None, 3)``, ``(2,)``, ``()``, ``<unknown>``."""
    if shape is None:
        return "<unknown>"
    dims = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def spec_text(shape, dtype, name=None) -> str:
    """TF's ``repr(tf.TensorSpec(...))``."""
    dt = dtype if isinstance(dtype, str) else _dt.as_dtype(dtype).name
    return f"TensorSpec(shape={shape_text(shape)}, dtype=tf.{dt}, name={name!r})"


def _key_text(k) -> str:
    """A structure key of function.py's (nest.structure_key of the call's arguments)."""
    tag = k[0] if isinstance(k, tuple) and k else None
    if tag == "Tensor":
        return spec_text(k[1], np.dtype(k[2]))
    if tag == "py":
        return f"Literal[{k[2]!r}]"
    if tag == "Variable":
        dt = _dt.as_dtype(np.dtype(k[2])).name
        return f"VariableSpec(shape={shape_text(k[1])}, dtype=tf.{dt}, trainable={k[3]}, " \
               f"alias_id={k[4]})"
    if tag in ("list", "tuple") and isinstance(k[1], tuple):
        inner = ", ".join(_key_text(x) for x in k[1])
        return f"{'List' if tag == 'list' else 'Tuple'}[{inner}]"
    if tag == "dict" and isinstance(k[1], tuple):
        return "Dict[" + ", ".join(f"[{name!r}, {_key_text(v)}]" for name, v in k[1]) + "]"
    if tag in ("trace_type", "obj", "spec"):
        return repr(k[1])
    if tag == "_Parts":   # a composite argument (a RaggedTensor): its TypeSpec, as TF prints it
        return repr(_composite_spec(k))
    return repr(k)


def _composite_spec(k):
    """The TypeSpec (tf.RaggedTensorSpec) of a composite's key: ('_Parts', (tag, components...))."""
    from .function import TensorSpec, _COMPOSITE_CLASSES
    tag, comps = k[1][0], k[1][1:]
    name, static = _public_leaf(tag[1][0], None, TensorSpec), _public_leaf(tag[1][1], None, TensorSpec)
    if isinstance(static, tuple) and len(static) == 2 and static[0] == "trace_type":
        static = static[1]   # (an extension type's static half keys as its tracing type: _Static)
    return _COMPOSITE_CLASSES[name]._tf_spec(static, [_public_leaf(c, None, TensorSpec) for c in comps])


def _params(pysig, bound_method, key):
    """``(name, kind, key)`` of each parameter a call's structure key binds, defaults filled
    in as TF lists them (``*args``/``**kwargs`` only when they received something)."""
    args_key, kwargs_key = key[1]
    pos = list(args_key[1])
    kw = dict(kwargs_key[1])
    if pysig is None:
        return [(f"arg{i}", "POSITIONAL_ONLY", k) for i, k in enumerate(pos)] + \
            [(n, "KEYWORD_ONLY", k) for n, k in kw.items()]
    params = list(pysig.parameters.values())
    if bound_method and params:
        params = params[1:]
    out = []
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            out += [(f"{p.name}_{i}", "POSITIONAL_ONLY", k) for i, k in enumerate(pos)]
            pos = []
        elif p.kind is p.VAR_KEYWORD:
            out += [(n, "KEYWORD_ONLY", k) for n, k in kw.items()]
            kw = {}
        elif pos and p.kind is not p.KEYWORD_ONLY:
            out.append((p.name, p.kind.name, pos.pop(0)))
        elif p.name in kw:
            out.append((p.name, p.kind.name, kw.pop(p.name)))
        elif p.default is not p.empty:
            out.append((p.name, p.kind.name, ("py", type(p.default).__name__, p.default)))
    return out


def _public_leaf(k, name, TensorSpec):
    if isinstance(k, tuple) and k and k[0] == "Tensor":
        return TensorSpec(k[1], k[2], name)
    if isinstance(k, tuple) and k and k[0] == "Variable":
        return TensorSpec(k[1], k[2], name)  # (TF: a VariableSpec)
    if isinstance(k, tuple) and k and k[0] == "py":
        return k[2]
    if isinstance(k, tuple) and k and k[0] == "_Parts":
        return _composite_spec(k)
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[1], tuple):  # a structure
        kind, subs = k
        if kind in ("_Parts", "_CompositeTag"):
            raise NotImplementedError("a concrete function with a composite argument (an ExtensionType, a "
                                      "SparseTensor) has no public signature in tapeflow yet (tf.saved_model.save "
                                      "of it): pass its tensor fields as the arguments")
        if kind == "dict":
            return {kk: _public_leaf(v, None, TensorSpec) for kk, v in subs}
        items = [_public_leaf(v, None, TensorSpec) for v in subs]
        return items if kind == "list" else tuple(items) if kind == "tuple" else kind(*items)
    return k


def public_signature(cf, key) -> tuple:
    """TF's ``structured_input_signature``: ``((args...), {kwargs})`` with a TensorSpec named
    after its parameter for each tensor argument and the Python values as they are."""
    from .function import TensorSpec
    args, kwargs = [], {}
    for name, kind, k in _params(cf.python_signature, cf.bound_method, key):
        (kwargs.__setitem__(name, _public_leaf(k, name, TensorSpec)) if kind == "KEYWORD_ONLY"
         else args.append(_public_leaf(k, name, TensorSpec)))
    return tuple(args), kwargs


def output_specs(cf):
    """TF's ``structured_outputs``, with a TensorSpec for each output tensor (TF gives the
    graph's symbolic tensors, which exist only inside its graph)."""
    from .function import TensorSpec, _TENSOR
    avals = iter(v.aval for v in cf.raw_graph.outputs)
    kind, payload = cf.out_tree
    if kind == "single":
        a = next(avals)
        return TensorSpec(a.shape, a.dtype)
    out, leaves = payload
    if out is None:
        return None
    vals = []
    for leaf in leaves:
        if leaf is _TENSOR:
            a = next(avals)
            vals.append(TensorSpec(a.shape, a.dtype))
        else:
            vals.append(leaf)
    return nest.pack_sequence_as(out, vals)


def output_text(cf, unknown_shapes=False) -> str:
    """The ``Output Type`` of a ConcreteFunction: its outputs' specs (``<unknown>`` shapes for
    a shape-generic function, whose output shapes depend on the call's rank)."""
    avals = iter(v.aval for v in cf.raw_graph.outputs)

    def spec(aval):
        return spec_text(None if unknown_shapes else aval.shape, aval.dtype)

    kind, payload = cf.out_tree
    if kind == "single":
        return spec(next(avals))
    from .function import _TENSOR
    out, leaves = payload
    if out is None:
        return "Literal[None]"
    # a Python number returned comes back as a constant tensor (function.py): a scalar spec
    texts = [next(avals) if leaf is _TENSOR else
             spec_text((), np.asarray(leaf._v).dtype) if hasattr(leaf, "_v") else f"Literal[{leaf!r}]"
             for leaf in leaves]
    return _structure_text(_composite_results(nest.pack_sequence_as(out, texts), out, spec))


def _composite_results(x, orig, spec):
    """The packed output texts with a composite result (a RaggedTensor's _Parts of avals) as its
    TypeSpec's text and each aval as its TensorSpec's."""
    from .function import TensorSpec, _COMPOSITE_CLASSES, _Parts
    from ..core.aval import Aval
    if isinstance(x, Aval):
        return spec(x)
    if isinstance(x, _Parts):
        name, static = orig[0]   # (the packed tag's leaves are texts now)
        specs = [TensorSpec(None if unknown else a.shape, a.dtype) for a in x[1:]
                 for unknown in [spec(a).startswith("TensorSpec(shape=<unknown>")]]
        return repr(_COMPOSITE_CLASSES[name]._tf_spec(static, specs))
    if isinstance(x, dict):
        return type(x)((k, _composite_results(v, orig[k], spec)) for k, v in x.items())
    if isinstance(x, (list, tuple)) and not nest._is_namedtuple(x):
        return type(x)(_composite_results(v, o, spec) for v, o in zip(x, orig))
    return x


def _structure_text(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_structure_text(v)}]" for k, v in x.items()) + "]"
    if isinstance(x, list):
        return "List[" + ", ".join(_structure_text(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "Tuple[" + ", ".join(_structure_text(v) for v in x) + "]"
    return f"Literal[{x!r}]"


def signature_text(cf, key=None, unknown_shapes=False) -> str:
    """TF's ``ConcreteFunction.pretty_printed_signature()`` text (see the module docstring)."""
    key = cf._signature_key if key is None else key
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {_key_text(k)}"
              for name, kind, k in _params(cf.python_signature, cf.bound_method, key)]
    lines += ["Output Type:", f"  {output_text(cf, unknown_shapes)}", "Captures:"]
    captured = sorted(cf.captured_ids)
    lines += [f"  {i}: TensorSpec(shape=(), dtype=tf.resource, name=None)" for i in captured] or ["  None"]
    return "\n".join(lines)


def function_type_text(cf) -> str:
    """TF's ``str(ConcreteFunction.function_type)``: ``(a: TensorSpec(...)) -> TensorSpec(...)``."""
    params = ", ".join(f"{name}: {_key_text(k)}" for name, _, k in _params(cf.python_signature, cf.bound_method,
                                                                             cf._signature_key))
    return f"({params}) -> {output_text(cf)}"


def check_python_arguments(cf, args, kwargs):
    """As TF binds a call of a concrete function: a Python value (or structure) other than the
    traced one is a TypeError -- the trace has the traced value built in, so running it would
    silently compute with that value instead. Tensor arguments are not checked here."""
    from .function import _key_leaves
    if not kwargs and len(args) == _plain_positional(cf):
        # a call of tensors only, one for each tensor the trace's positional arguments were:
        # nothing here can differ (no Python value, no structure) -- the binding and walk below
        # are half a direct call's time (7 of ~15 us)
        for a in args:
            if a.__class__ is not _Tensor:
                break
        else:
            return
    key = cf._signature_key
    pysig = cf.python_signature
    if pysig is None or not (isinstance(key, tuple) and len(key) == 2 and key[0] == "tuple"):
        return
    pre = (object(),) if cf.bound_method else ()
    try:
        given = pysig.bind_partial(*pre, *args, **kwargs).arguments
    except TypeError as e:
        raise TypeError(f"concrete function {cf.name!r}: {e}") from None
    traced = {name: k for name, _, k in _params(pysig, cf.bound_method, key)}
    for name, value in given.items():
        if pre and value is pre[0]:
            continue
        k = traced.get(name)
        kind = pysig.parameters[name].kind
        if kind in (kind.VAR_POSITIONAL, kind.VAR_KEYWORD):
            continue  # (their parts are named differently in the trace's key)
        want = [] if k is None else _key_leaves(k)
        got = nest.flatten(value)
        if k is None or len(want) != len(got):
            if k is not None and any(w[0] == "spec" for w in want):
                continue   # (composite specs' values, taken apart: check_composite_arguments compared them)
            raise TypeError(f"concrete function {cf.name!r}: argument {name!r} does not match the traced "
                            f"signature:\n{signature_text(cf)}")
        for w, g in zip(want, got):
            if w[0] == "py" and not (type(g).__name__ == w[1] and g == w[2]):
                raise TypeError(f"concrete function {cf.name!r}: argument {name!r} is {g!r}, but it was traced "
                                f"with Literal[{w[2]!r}]; get another concrete function for that value")


def _plain_positional(cf):
    """How many positional arguments ``cf`` was traced with when each was one plain tensor and
    none came by keyword (its key's leaves are all ``Tensor``); -1 otherwise. Kept on ``cf``."""
    n = cf.__dict__.get("_plain_n")
    if n is None:
        key = cf._signature_key
        n = -1
        if cf.python_signature is not None and isinstance(key, tuple) and len(key) == 2 and key[0] == "tuple":
            args_key, kwargs_key = key[1]
            if not kwargs_key[1] and all(isinstance(k, tuple) and k and k[0] == "Tensor" for k in args_key[1]):
                n = len(args_key[1])
        cf._plain_n = n
    return n


def check_composite_arguments(cf, args, kwargs):
    """A call of a concrete function whose input_signature holds composite specs (RaggedTensorSpecs,
    at any depth), before its values are taken apart: TF's TypeError for a value not of its spec (a
    dense tensor, another dtype or ragged_rank). Only such calls run it: a trace of tensors never
    does (check_python_arguments lets the specs' taken-apart values through)."""
    from .function import _composite_leaves, _key_leaves
    key, pysig = cf._signature_key, cf.python_signature
    if pysig is None or not (isinstance(key, tuple) and len(key) == 2 and key[0] == "tuple"):
        return
    pre = (object(),) if cf.bound_method else ()
    try:
        given = pysig.bind_partial(*pre, *args, **kwargs).arguments
    except TypeError:
        return   # (check_python_arguments raises it)
    traced = {name: k for name, _, k in _params(pysig, cf.bound_method, key)}
    for name, value in given.items():
        k = traced.get(name)
        want = [] if k is None else _key_leaves(k)
        if not any(w[0] == "spec" for w in want):
            continue
        got = nest.flatten(value)
        if len(want) != len(got):
            raise TypeError(f"concrete function {cf.name!r}: argument {name!r} does not match the traced "
                            f"signature:\n{signature_text(cf)}")
        for w, g in zip(want, got):
            if w[0] == "spec":
                _composite_leaves(cf.name, name, w[1], g)


# -- unknown rank (TensorSpec(None)) --------------------------------------------------------------

class RankGenericConcreteFunction:
    """``get_concrete_function`` with a ``TensorSpec(None, dtype)`` argument: TF traces once
    with an unknown rank; tapeflow's graphs have ranks, so this concrete function traces once
    per rank met (every dimension unknown: one trace serves all shapes of that rank) and
    dispatches each call to the trace of its rank. Arguments are checked as TF binds them:
    a Python value other than the traced one, or another dtype, is a TypeError."""

    def __init__(self, function, args, kwargs):
        from .function import TensorSpec
        self._function = function
        self._TensorSpec = TensorSpec
        self._args, self._kwargs = args, kwargs
        self._pysig = function._sig
        # trace now (as TF does at get_concrete_function): rank 0 stands for every rank, so the
        # structure and dtypes of the outputs are known and printed (their shapes as <unknown>)
        self._probe = function.get_concrete_function(*self._with_rank(args, ()), **self._with_rank(kwargs, ()))
        function._note_generic(args, kwargs)   # (tf.saved_model.save traces the other ranks)
        self._signature_key = nest.structure_key(
            (tuple(args), dict(kwargs)),
            lambda a: ("Tensor", a.shape, a.dtype.np) if isinstance(a, TensorSpec) else ("py", type(a).__name__, a))

    def _with_rank(self, struct, shape_of):
        """The specs of unknown rank made specs of rank ``len(shape_of)`` with unknown dims."""
        TS = self._TensorSpec

        def fix(s):
            if isinstance(s, TS) and s.shape is None:
                return TS((None,) * len(shape_of), s.dtype, s.name)
            return s
        return nest.map_structure(fix, struct)

    def _bind(self, args, kwargs):
        """``(specs, values)``: BoundArguments of the trace to use (each spec of unknown rank
        given the call's rank) and of the call. A mismatch is TF's TypeError."""
        pysig = self._pysig
        TS = self._TensorSpec
        fn_name = self._function.__name__
        pre = () if self._function._instance is None else (self._function._instance,)
        try:
            want = pysig.bind_partial(*pre, *self._args, **self._kwargs)
            given = pysig.bind_partial(*pre, *args, **kwargs).arguments
        except TypeError as e:
            raise TypeError(f"{fn_name}: the arguments do not match the concrete function's signature: "
                            f"{e}") from None
        # a Python value bound at get_concrete_function may be left out of the call (as in TF)
        order = list(pysig.parameters)
        full = {n: given[n] if n in given else want.arguments[n] for n in order
                if n in given or (n in want.arguments and not any(
                    isinstance(x, TS) for x in nest.flatten(want.arguments[n])))}
        got = inspect.BoundArguments(pysig, full)
        specs = inspect.BoundArguments(pysig, dict(full))
        extra = set(got.arguments) - set(want.arguments)
        if extra:
            raise TypeError(f"{fn_name}: unexpected argument(s) {sorted(extra)} for this concrete function")
        for name, w in want.arguments.items():
            if pre and w is pre[0]:
                continue
            if name not in got.arguments:
                raise TypeError(f"{fn_name}: the concrete function was traced with {name}={w!r}; it is missing")
            g = got.arguments[name]
            flat_w, flat_g = nest.flatten(w), nest.flatten(g)
            if len(flat_w) != len(flat_g):
                raise TypeError(f"{fn_name}: argument {name!r} has another structure than the traced one")
            fixed = []
            for s, a in zip(flat_w, flat_g):
                if isinstance(s, TS):
                    dt = getattr(a, "dtype", None)
                    if dt is None or _dt.as_dtype(dt) != s.dtype:
                        raise TypeError(f"{fn_name}: argument {name!r} must be a {s.dtype.name} tensor (the "
                                        f"concrete function's {spec_text(s.shape, s.dtype, s.name)}), got {a!r}")
                    fixed.append(TS((None,) * len(a.shape), s.dtype) if s.shape is None else s)
                elif type(a) is type(s) and a == s:
                    fixed.append(s)
                else:
                    raise TypeError(f"{fn_name}: argument {name!r} is {a!r}, but the concrete function was "
                                    f"traced with Literal[{s!r}]; get another concrete function for it")
            specs.arguments[name] = nest.pack_sequence_as(w, fixed)
        return specs, got

    def __call__(self, *args, **kwargs):
        specs, got = self._bind(args, kwargs)
        n = 0 if self._function._instance is None else 1
        cf = self._function.get_concrete_function(*specs.args[n:], **specs.kwargs)
        return cf(*got.args[n:], **got.kwargs)

    @property
    def python_signature(self):
        return self._pysig

    @property
    def bound_method(self):
        return self._function._instance is not None

    @property
    def captured_ids(self):
        return self._probe.captured_ids

    @property
    def graph(self):
        return self._probe.graph

    def pretty_printed_signature(self):
        return signature_text(self._probe, key=self._signature_key, unknown_shapes=True)

    @property
    def structured_input_signature(self):
        return public_signature(self._probe, self._signature_key)

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()


def unknown_rank(args, kwargs, spec_type) -> bool:
    """Whether a get_concrete_function call has a TensorSpec of unknown rank (shape None)."""
    return any(isinstance(a, spec_type) and a.shape is None for a in nest.flatten((tuple(args), dict(kwargs))))

