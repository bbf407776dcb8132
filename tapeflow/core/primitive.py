"""The primitive table and ``bind``, the one call site of every op.

A primitive is one record: name, NumPy kernel (``impl``), shape/dtype rule
(``abstract``), gradient rule (``vjp``, written in tapeflow ops so gradients
of gradients work), and flags. Every op in tapeflow, eager or traced, ends in
``bind(primitive, *args, **params)``, which interprets it one of three ways:

* eager: run ``impl`` on NumPy arrays and wrap the result in a Tensor;
* tracing: ``STATE.trace.process`` appends an equation to a graph instead;
* recording: in either case, active GradientTapes record the call.

Eager runs the same shape/dtype rule as tracing on every call (its result is
cached per signature), so eager and compiled code accept and reject the same
inputs and produce the same dtypes. The profiler is a hook inside eager_apply;
GradientTapes record in one place, ``record``. The tracer and the compiler never
reimplement ops: they call ``impl``.
"""
from __future__ import annotations

import numpy as np

from . import memory as _memory  # noqa: F401  (sets the C allocator's thresholds once: memory.py)
from .aval import Aval, fmt_shape
from .dtypes import BF16 as _BF16, kind as _dt_kind
from .state import STATE
from ..errors import OpError as _OpError, InvalidArgumentTypeError as _InvalidArgumentTypeError

REGISTRY: dict[str, "Primitive"] = {}

#: Primitives with no gradient, listed explicitly (a differentiable primitive
#: without a vjp rule is a registration error, not a silent zero).
NON_DIFFERENTIABLE: set[str] = set()


class Primitive:
    """One row of the primitive table: every fact about an op lives here.

    impl(*values, **params) -> ndarray (or tuple when ``multiple_results``)
    abstract(*avals, **params) -> Aval (or tuple); raises ValueError/TypeError
        with a message naming the op, the shapes and the dtypes.
    vjp(cts, out, *args, **params) -> tuple of cotangents, one per arg (None
        where an arg gets no gradient). ``cts``/``out`` are tuples when
        ``multiple_results``.
    effect: None for pure ops; a string for ops the compiler may not move,
        merge or drop freely ("random", "read", "write", "io"). "read" and
        "write" ops name their Variable in params (``var=``), in bind as in the IR.
    aliases: may an output share memory with an input (a NumPy view, an
        operand passed through)? The buffer planner keeps the input's memory
        alive as long as the output, and a variable write copies such a value.
        Default True: only a kernel known to return a fresh array says False.
    alias_map(eqn): optional, for an op that ``aliases``: which of its inputs each output
        may share memory with (a list, one tuple of input indices per output); a cond
        output passes through only the operands some branch returns. None (the default):
        every output may alias every input.
    fusion: "elementwise" (one output element from the same-index input
        elements, broadcasting allowed), "reduction" (folds whole axes with
        one associative ufunc) or "opaque" (default: never fused, never
        rewritten as elementwise).
    lowerings: {backend name: lowering} for backends that need more than the
        kernel (the numba scalar form, a control-flow emitter). A backend with
        no entry calls ``impl``/``impl_out``, or declines the graph.
    interpret(apply, *values, **params): for ops holding sub-graphs (cond,
        loops): evaluates them with ``apply(eqn, values)`` for each inner
        equation, so every graph evaluator (reference, profiler) reaches inside.
        None: the evaluator calls ``impl``.
    impl_out: optional kernel writing into a preallocated buffer:
        impl_out(out, *values, **params).
    vjp_np(need, ct, out, *values, **params): optional; the vjp rule on NumPy
        values, for the lean eager backward (tape.gradient when nothing records
        the gradient computation: autodiff/tape.py). ``ct``/``out``/``values``
        are the arrays behind the cotangent, the result and the args (Python
        scalars, lists and arrays as given); ``need[i]``:
        does arg i want a gradient (where not, the rule may return None). It must
        run the same kernels on the same values in the same order as ``vjp``, so
        gradients are bit-identical either way. None (the default): the lean
        backward runs ``vjp`` on Tensors for this op.
    vjp_np_into(need, ct, out, *values, **params): optional; ``vjp_np`` for a call
        whose ``ct`` the lean backward owns (an array it made, which nothing else
        refers to: no tensor, no user, no other cotangent, no view): the rule may
        write its result over ``ct`` instead of into a new array. Same bits as
        ``vjp_np``.
    numpy_operands: "adopt" for ops whose operands share one dtype: a NumPy operand
        takes the tensor operands' dtype (adopt_numpy), eager and traced alike.
        None (the default): NumPy values keep their dtype.
    strings: True for a primitive whose kernel is right on string tensors (NumPy object arrays
        of bytes): shape ops, gathers, select, equality, add (TF's string concatenation). False
        (the default, the safe answer): its rule refuses a string operand with TF's error
        (``refuse_strings``, run before the rule in eager and traced code alike), so NumPy never
        computes on the objects (np.sum would concatenate them, np.negative raise a TypeError).
    complex: True for a primitive whose kernel, rule and vjp are right on complex tensors
        (complex64/128), with TF's gradient convention (a real loss's gradient with respect to
        z = x + iy is dL/dx + i dL/dy: a holomorphic op's vjp multiplies by the conjugate of its
        derivative). False (the safe answer): ``refuse_complex`` rejects a complex operand with
        TF's InvalidArgumentError before the rule runs, so a kernel or gradient written for real
        numbers (np.maximum's lexicographic order, a vjp missing its conj) never meets one.
        None (the default): the value of ``strings``, whose kernels (shape ops, gathers, select,
        equality, add, cast, control flow) move or compare values without arithmetic.
    specialize(*avals, **params): optional; an eager kernel for one signature, or
        None for ``impl``. Asked once, when eager's rule cache first meets the
        signature (``_run_rule``); bind's fast path then calls that kernel instead of
        ``impl`` (add: a native loop for the bias add (m, n) + (n,)), so a faster route
        for some shapes costs the other calls nothing. Same values and bits as
        ``impl``; traced and compiled code never ask it.
    """

    __slots__ = ("name", "impl", "abstract", "vjp", "differentiable", "effect",
                 "multiple_results", "impl_out", "doc", "aliases", "alias_map", "fusion", "lowerings", "interpret",
                 "bind2", "vjp_np", "vjp_np_into", "specialize", "numpy_operands", "strings", "complex")

    FUSION_CLASSES = ("elementwise", "reduction", "opaque")

    def __init__(self, name, impl, abstract, vjp=None, *, differentiable=True,
                 effect=None, multiple_results=False, impl_out=None, doc="",
                 aliases=True, fusion="opaque", lowerings=None, interpret=None, vjp_np=None, vjp_np_into=None,
                 specialize=None, alias_map=None, numpy_operands=None, strings=False,
                 complex=None):
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} registered twice")
        if differentiable and vjp is None:
            raise ValueError(f"primitive {name!r} is differentiable but has no vjp rule; "
                             "give one or pass differentiable=False")
        if fusion not in self.FUSION_CLASSES:
            raise ValueError(f"primitive {name!r}: fusion must be one of {self.FUSION_CLASSES}, got {fusion!r}")
        self.name = name
        self.impl = impl
        self.specialize = specialize
        self.abstract = abstract
        self.vjp = vjp
        self.vjp_np = vjp_np
        self.vjp_np_into = vjp_np_into
        self.differentiable = differentiable
        self.effect = effect
        self.multiple_results = multiple_results
        self.impl_out = impl_out
        self.doc = doc
        self.aliases = bool(aliases)
        self.alias_map = alias_map
        self.fusion = fusion
        self.lowerings = dict(lowerings or {})
        self.interpret = interpret
        #: "adopt": the operands share one dtype, and a NumPy operand (an array or NumPy scalar)
        #: takes the tensor operands' dtype, as TF converts it (x_f32 * np.ones(3) is float32);
        #: None (the default): a NumPy value keeps its dtype, and a mismatch is the rule's error
        self.numpy_operands = numpy_operands
        self.strings = bool(strings)
        self.complex = self.strings if complex is None else bool(complex)
        #: bind(self, a, b, **params) for two operands, as a plain function (see _make_bind2)
        self.bind2 = _make_bind2(self)
        REGISTRY[name] = self
        if not differentiable:
            NON_DIFFERENTIABLE.add(name)

    def __repr__(self):
        return f"<primitive {self.name}>"

    def bind(self, *args, **params):
        return bind(self, *args, **params)


# ---------------------------------------------------------------------------
# bind: the single dispatch point
# ---------------------------------------------------------------------------

def bind(p, *args, **params):
    st = STATE
    trace = st.trace
    if trace is not None:
        return trace.process(p, args, params)
    # The eager interpretation's fast path (operators, layer math, most gradient rules):
    # Tensors, Variables (read first) and Python scalars (at least one Tensor or Variable);
    # any static params; no profiler; a signature seen before. Two
    # operands: p.bind2 (_make_bind2), which Tensor's operators call directly. Same cached
    # rule result, same kernel, same tape record as eager_apply, minus the argument
    # conversions; a miss or a kernel error takes eager_apply, which handles it in full.
    # The result's shape was checked against the rule on the signature's first call
    # (eager_apply): a kernel's result shape follows from its input shapes and params
    # (rules with unknown dims are never in _FAST), so only the dtype is checked again.
    # The key is eager_apply's: (p, per operand its _Sig or scalar class[, params items]).
    if st.profiler is None:
        T = _Tensor
        n = len(args)
        if n == 2:
            return p.bind2(args[0], args[1], params)
        osig = None
        try:
            if n == 1:
                a = args[0]
                ca = a.__class__
                if ca is not T and isinstance(a, _Variable):
                    a = _read_eager(a)
                    args = (a,)
                    ca = T
                if ca is T:  # (a signature not seen yet is a KeyError: eager_apply caches it)
                    if params:
                        if p.effect not in _STATEFUL:  # (never cached: see eager_apply)
                            osig, k = _FAST[p, a._s, tuple(params.items())]
                            out = (p.impl if k is None else k)(a._v, **params)
                    else:
                        osig, k = _FAST[p, a._s]
                        out = (p.impl if k is None else k)(a._v)
            elif n == 3 and ((a := args[0]).__class__ is T or isinstance(a, _Variable)) \
                    and ((b := args[1]).__class__ is T or isinstance(b, _Variable)) \
                    and ((c := args[2]).__class__ is T or isinstance(c, _Variable)):
                # three tensors or variables (Dense's x, kernel and bias: six dense calls a
                # DQN step): the loop below unrolled, the same reads in the same order,
                # the same key (~0.6 us a call less)
                if a.__class__ is not T:
                    a = _read_eager(a)
                if b.__class__ is not T:
                    b = _read_eager(b)
                if c.__class__ is not T:
                    c = _read_eager(c)
                args = (a, b, c)
                if params:
                    osig, k = _FAST[p, a._s, b._s, c._s, tuple(params.items())]
                    out = (p.impl if k is None else k)(a._v, b._v, c._v, **params)
                else:
                    osig, k = _FAST[p, a._s, b._s, c._s]
                    out = (p.impl if k is None else k)(a._v, b._v, c._v)
            elif n:  # where(c, g, 0) in the relu/maximum gradients, concat, add_n
                key = [p]
                vals = []
                tensors = False
                read = None
                for i, a in enumerate(args):
                    ca = a.__class__
                    if ca is not T and ca is not float and ca is not int and isinstance(a, _Variable):
                        # a Variable operand (Dense's kernel and bias) is read first, as
                        # eager_apply does; the reads are the operands recorded
                        a = _read_eager(a)
                        if read is None:
                            read = list(args)
                        read[i] = a
                        ca = T
                    if ca is T:
                        key.append(a._s)
                        vals.append(a._v)
                        tensors = True
                    elif ca is float or ca is int:
                        key.append(ca)
                        vals.append(a)
                    else:
                        break
                else:
                    if read is not None:
                        args = tuple(read)
                    if tensors:  # (only Python scalars take TF's default dtypes: eager_apply)
                        if params:
                            key.append(tuple(params.items()))
                        osig, k = _FAST[tuple(key)]
                        out = (p.impl if k is None else k)(*vals, **params)
        except Exception:
            # a new signature, a tensor made outside bind (no _s yet), an unhashable param,
            # a kernel error: the full path handles each (and names the op, shapes and dtypes in errors)
            return eager_apply(p, args, params)
        if osig is not None:
            try:
                ok = out.dtype is osig.dtype
            except AttributeError:  # a kernel returned a Python scalar
                ok = False
            t = _new(T)
            t._v = out if ok else _conform(p, out, osig.aval)  # (or computed wider: _conform casts)
            t._s = osig
            if st.tapes and p.differentiable:
                record(p, args, params, t, st.tapes)
            return t
    return eager_apply(p, args, params)


def _make_bind2(p):
    """``p.bind2(a, b, params)``: ``bind(p, a, b, **params)`` as a plain function of
    two operands. Tensor's operators *are* these functions (``Tensor.__add__ =
    add_p.bind2``), so ``a + b`` costs one Python frame and no argument packing, and
    bind hands its two-operand calls here: this is bind's two-operand fast path, not
    a second one (same key, same kernel call, same result check and tape record as
    the one- and many-operand paths in bind, and the same eager_apply on a miss)."""

    def bind2(a, b, params=_EMPTY):
        st = STATE
        if st.trace is not None or st.profiler is not None:
            return bind(p, a, b, **params)
        T = _Tensor
        osig = None
        try:
            # (a signature not seen yet is a KeyError: eager_apply runs its rule and caches it)
            ca = a.__class__
            cb = b.__class__
            # a Variable operand (layer math: x @ w, x + b; Keras' variables are a subclass)
            # is read first, as eager_apply does
            if ca is not T and ca is not float and ca is not int and isinstance(a, _Variable):
                a = _read_eager(a)
                ca = T
            if cb is not T and cb is not float and cb is not int and isinstance(b, _Variable):
                b = _read_eager(b)
                cb = T
            if ca is T:
                if cb is T:
                    if params:
                        osig, k = _FAST[p, a._s, b._s, tuple(params.items())]
                        out = (p.impl if k is None else k)(a._v, b._v, **params)
                    else:
                        osig, k = _FAST[p, a._s, b._s]
                        out = (p.impl if k is None else k)(a._v, b._v)
                elif cb is float or cb is int:
                    if params:
                        osig, k = _FAST[p, a._s, cb, tuple(params.items())]
                        out = (p.impl if k is None else k)(a._v, b, **params)
                    else:
                        osig, k = _FAST[p, a._s, cb]
                        out = (p.impl if k is None else k)(a._v, b)
            elif cb is T and (ca is float or ca is int):
                if params:
                    osig, k = _FAST[p, ca, b._s, tuple(params.items())]
                    out = (p.impl if k is None else k)(a, b._v, **params)
                else:
                    osig, k = _FAST[p, ca, b._s]
                    out = (p.impl if k is None else k)(a, b._v)
        except Exception:
            # as in bind: a new signature, a tensor made outside bind (no _s yet), an
            # unhashable param, a kernel error -- the full path handles each
            return eager_apply(p, (a, b), params)
        if osig is None:
            return eager_apply(p, (a, b), params)
        try:
            ok = out.dtype is osig.dtype
        except AttributeError:  # a kernel returned a Python scalar
            ok = False
        t = _new(T)
        t._v = out if ok else _conform(p, out, osig.aval)
        t._s = osig
        if st.tapes and p.differentiable:
            record(p, (a, b), params, t, st.tapes)
        return t

    bind2.__name__ = bind2.__qualname__ = f"bind2_{p.name}"
    return bind2


_Tensor = None    # the Tensor and Variable classes (set_tensor_types: tensor.py imports
_Variable = None  # this module, so this module cannot import it)


def set_tensor_types(tensor_cls, variable_cls):
    """Called once by core/tensor.py: the classes bind wraps results in and reads."""
    global _Tensor, _Variable
    _Tensor, _Variable = tensor_cls, variable_cls


_new = object.__new__
_ndarray = np.ndarray
_PY_SCALARS = (float, int, bool)
_EMPTY: dict = {}


class _Sig:
    """An interned (shape, dtype): one object per signature, hashed by identity, so
    a rule-cache key costs a few pointer hashes. A Tensor notes its own in ``_s``
    (its value never changes; Variables, whose value does, never carry one)."""

    __slots__ = ("aval", "dtype")

    def __init__(self, aval):
        self.aval = aval
        self.dtype = aval.dtype


_SIGS: dict = {}


def _sig(shape, dtype):
    k = (shape, dtype)
    s = _SIGS.get(k)
    if s is None:
        s = _SIGS[k] = _Sig(Aval(shape, dtype))
    return s


#: (primitive, per input: its _Sig or the Python scalar's class, params) ->
#: (the rule's result, the result's _Sig or None when it has several results or
#: an unknown dim). Filled on first use of each signature; a training loop repeats
#: a handful of them, so after the first step eager pays one dict lookup, not a rule.
_RULES: dict = {}
#: the same keys, for entries bind's fast path may take (one result of known shape)
#: -> (the result's _Sig, the record's kernel for the signature: None for ``impl``)
_FAST: dict = {}
#: effects whose params name a Variable (see eager_apply)
_STATEFUL = ("read", "write")
_NO_RULE = (None, None)


def eager_apply(p, args, params, kernel=None):
    """Eager interpretation: the shape/dtype rule (cached), the NumPy kernel now,
    then the tapes record. ``kernel`` replaces ``p.impl`` for this call only (the
    profiler passes a timed one)."""
    prof = STATE.profiler
    if prof is not None and kernel is None:  # tapeflow.profile is on: it times this op, then calls back here
        return prof.eager(p, args, params)
    if p is READ_VARIABLE and kernel is None:  # bind(READ_VARIABLE, var=v): Variable.read_value()
        return _read_eager(params["var"])
    if p.numpy_operands is not None:
        args = adopt_numpy(p, args)
    T = _Tensor
    vals = []
    key = [p]
    canon = None  # args with Variables replaced by read snapshots (only built if needed)
    n_py = 0      # Python scalars among the args
    for i, a in enumerate(args):
        c = a.__class__
        if c is T:
            v = a._v
            try:
                s = a._s
            except AttributeError:
                s = a._s = _sig(v.shape, v.dtype)
            vals.append(v)
            key.append(s)
            continue
        if c in _PY_SCALARS:
            vals.append(a)
            key.append(c)
            n_py += 1
            continue
        if c is np.ndarray:
            v = a
        elif c is _Variable or isinstance(a, _Variable):
            r = _read_eager(a)  # snapshot: later assigns don't change this read
            if canon is None:
                canon = list(args)
            canon[i] = r
            v = r._v
        elif isinstance(a, np.generic):
            if c is np.float64:  # a Python float subclass: weak like one (as aval_of says)
                # (the tape records the float too: a vjp given the np.float64 would compute in
                # float64, NumPy 2's rule for a float32 array times a float64 scalar)
                if canon is None:
                    canon = list(args)
                canon[i] = float(a)
                vals.append(float(a))
                key.append(float)
                n_py += 1
                continue
            v = a
        elif isinstance(a, T):  # a symbolic tensor used outside its trace
            raise _leaked(p, a)
        elif isinstance(a, CompositeTensor):  # a RaggedTensor operand: its class applies p (TF's dispatch)
            return a._bind_composite(p, args, params)
        else:
            v = _py_array(a) if isinstance(a, (list, tuple)) else _convert_other(p, a)
            # the tape records the array, not the list: a vjp rule reads its operands as arrays
            # ([[1., 2.]] @ w: matmul's gradient transposes the left operand)
            if canon is None:
                canon = list(args)
            canon[i] = v
        vals.append(v)
        key.append(_sig(v.shape, v.dtype))
    if canon is not None:
        args = tuple(canon)
    hit = None
    if params:
        if p.effect not in _STATEFUL:
            key.append(tuple(params.items()))
            try:
                hit = _RULES.get(tuple(key))
            except TypeError:  # an unhashable param (a list, an array): no caching
                key = None
        else:
            # A variable read or write: tracing builds its equation from the variable
            # (Trace.read_variable / write_variable), not from a rule, and so does eager:
            # a read's result is the variable's value, a write checked its value already
            # (Variable._check_value). (Caching would also keep the variable alive.)
            hit = _NO_RULE
    else:
        key = tuple(key)
        hit = _RULES.get(key)
    if hit is None:
        hit = _run_rule(p, vals, params, key)
    rule_out, osig = hit
    if n_py and n_py == len(vals):
        # only Python scalars: TF's defaults (float32, int32), not NumPy's float64/int64
        vals = _py_defaults(vals)
    elif n_py and _BF16_NUMBERS[0] and _takes_bf16_numbers(p) and any(getattr(v, "dtype", None) is _BF16
                                                                        for v in vals):
        vals = _bf16_numbers(vals)
        args = _bf16_numbers(args)
    try:
        out = (p.impl if kernel is None else kernel)(*vals, **params)
    except Exception as e:  # re-raise with op name, shapes and dtypes
        raise _kernel_error(p, e, args) from None
    if p.multiple_results:
        out = tuple([_wrap(_conform(p, o, a)) for o, a in zip(out, rule_out)]) if out else ()
    else:
        try:
            ok = rule_out is None or (out.__class__ is _ndarray and out.dtype is rule_out.dtype
                                      and out.shape == rule_out.shape)
        except AttributeError:
            ok = False
        t = _new(T)
        t._v = out if ok else _conform(p, out, rule_out)
        if osig is not None:
            t._s = osig
        out = t
    tapes = STATE.tapes
    if tapes and p.differentiable:
        record(p, args, params, out, tapes)
    return out


def _run_rule(p, vals, params, key):
    """The shape/dtype rule on the avals of ``vals`` (what tracing runs too); its
    errors are the op's errors, in eager exactly as while tracing. Returns the
    cache entry (rule result, result signature), cached under ``key`` if given."""
    avals = [_PY_AVAL[v.__class__] if v.__class__ in _PY_SCALARS else _sig(v.shape, v.dtype).aval
             for v in vals]
    if not p.strings:
        refuse_strings(p, avals)
    if not p.complex:
        refuse_complex(p, avals)
    try:
        out = p.abstract(*avals, **params)
    except (ValueError, TypeError, IndexError) as e:
        raise type(e)(str(e)) from None
    osig = None
    if not p.multiple_results and None not in out.shape:
        osig = _sig(out.shape, out.dtype)
    bf16_numbers = any(a.dtype is _BF16 for a in avals) and any(a.weak for a in avals) and _takes_bf16_numbers(p)
    if bf16_numbers:
        # a bfloat16 call with Python numbers: eager_apply converts them from now on, in the operands
        # the tape records too (a vjp_np multiplying by 0.7 must see bfloat16); it never enters
        # bind's fast path, which would not
        _BF16_NUMBERS[0] = True
    hit = (out, osig)
    if key is not None:
        if len(_RULES) > 50_000:  # shapes that never repeat (varying batch sizes): stay bounded
            _RULES.clear()
            _FAST.clear()
            _SIGS.clear()
        key = tuple(key)
        _RULES[key] = hit
        if osig is not None:
            # the kernel for this signature: the record's specialize, asked once here
            spec = p.specialize
            if not bf16_numbers:
                _FAST[key] = (osig, None if spec is None else spec(*avals, **params))
    return hit


class CompositeTensor:
    """TF's CompositeTensor: a value made of tensors (tf.RaggedTensor). As an operand of ``bind``
    (eagerly: it is never a Tensor, so bind's fast path misses and ``eager_apply`` meets it) its
    class's ``_bind_composite(p, args, params)`` computes the op from the record's facts: the
    ragged tensor maps elementwise primitives over its flat values and raises CompositeOperand
    for the others. ``aval_of`` raises CompositeOperand too. The public ops TF dispatches for
    ragged tensors (reductions, concat, tile, cast, ...) catch it and call their ragged form:
    a try costs nothing in Python 3.11 until it raises, so the tensor path pays nothing."""

    __slots__ = ()

    @classmethod
    def _bind_composite(cls, p, args, params):
        raise CompositeOperand(p.name, cls.__name__)


class CompositeOperand(TypeError):
    """A composite tensor (a RaggedTensor) where an op needs a dense tensor."""

    def __init__(self, op, kind="RaggedTensor"):
        super().__init__(f"{op}: does not accept a {kind} operand (elementwise ops map over its flat_values, and "
                         "TF's ragged forms of reductions, concat, tile, gather and map_fn take one); convert it "
                         "first: rt.to_tensor(), or use tf.ragged.map_flat_values")


def refuse_strings(p, avals):
    """TF's error for a string operand of a primitive whose record does not say ``strings``
    (``tf.constant("a") - "b"``, ``tf.reduce_sum`` of strings): InvalidArgumentError (TF raises
    it eagerly) that is also a TypeError (what TF's conversion raises for ``"a" * 2``). Run
    before the rule, eagerly (on a rule-cache miss only) and while tracing."""
    for a in avals:
        if getattr(a, "dtype", None) is _STRING:
            from ..errors import InvalidArgumentTypeError
            raise InvalidArgumentTypeError(
                f"{p.name}: does not accept string tensors (got {_describe_avals(avals)}); TF's op is "
                f"numeric too. Convert first: tf.strings.to_number(s), or tf.strings.length(s)")


def refuse_complex(p, avals):
    """TF's error for a complex operand of a primitive whose record does not say ``complex``
    (``tf.maximum`` of complex: InvalidArgumentError "Value for attr 'T' of complex64 is not in
    the list of allowed values"). Run before the rule, eagerly (on a rule-cache miss only) and
    while tracing, as refuse_strings."""
    for a in avals:
        d = getattr(a, "dtype", None)
        if d is not None and d.kind == "c":
            from ..errors import InvalidArgumentTypeError
            raise InvalidArgumentTypeError(
                f"{p.name}: does not accept complex tensors (got {_describe_avals(avals)}): ordering ops (less, "
                f"maximum, argmax, sort) refuse them in TF too, and tapeflow's other ops take complex64/128 only "
                f"where their record says so. Take a real part first: tf.math.real(z), tf.math.imag(z) or tf.abs(z)")


def _describe_avals(avals):
    return ", ".join(f"{fmt_shape(a.shape)} {'string' if a.dtype is _STRING else a.dtype.name}"
                     if getattr(a, "shape", None) is not None else repr(a) for a in avals)


_STRING = np.dtype(object)


def _read_eager(var):
    """The read_variable primitive's eager interpretation for a Variable operand
    (``v + 1``): bind(READ_VARIABLE, var=v) without re-entering bind. Its rule is
    the variable's own aval, true by construction."""
    t = _new(_Tensor)
    v = t._v = var._v
    # (_sig's lookup inline: a DQN step reads its 12 variables this way)
    s = _SIGS.get((v.shape, v.dtype))
    t._s = s if s is not None else _sig(v.shape, v.dtype)
    tapes = STATE.tapes
    if tapes:
        record(READ_VARIABLE, (), {"var": var}, t, tapes)
    return t


#: a Python scalar's aval: TF's default dtype of its kind, weak (it adapts to its peers)
_PY_AVAL = {float: Aval((), np.float32, weak=True), int: Aval((), np.int32, weak=True),
            bool: Aval((), np.bool_, weak=True)}


def _conform(p, v, aval):
    """The kernel's result as the rule says it is. NumPy may return a wider dtype than
    the rule (a kernel computing in float64, NumPy's int64 for Python ints): cast to
    the rule's. A different shape is a bug in the primitive's record: raise."""
    try:
        d = v.dtype
        s = v.shape
    except AttributeError:  # a kernel returned a Python scalar
        if aval.dtype is _STRING:  # one element of a string array (bytes): np.asarray would drop trailing NULs
            o = np.empty((), _STRING)
            o[()] = v
            v = o
        else:
            v = np.asarray(v)
        d = v.dtype
        s = v.shape
    if d is not aval.dtype and d != aval.dtype:
        v = np.asarray(v).astype(aval.dtype)
    if s != aval.shape and not _shape_matches(s, aval.shape):
        raise AssertionError(
            f"{p.name}: the kernel returned shape {fmt_shape(s)} but the shape rule says "
            f"{fmt_shape(aval.shape)}; the primitive's record is inconsistent (a tapeflow bug)")
    return v


def _shape_matches(concrete, rule):
    # a rule's None dim is data dependent (boolean_mask, unique): any size matches it
    return len(concrete) == len(rule) and all(r is None or r == c for c, r in zip(concrete, rule))


def _wrap(v):
    t = _new(_Tensor)
    t._v = v
    return t


def record(p, args, params, out, tapes):
    """The one place where GradientTapes (and tape-like recorders) record an op:
    eager and traced binds, variable reads, custom gradients all end here.

    A recorder has ``_ids`` (id -> the tensors it tracks, kept alive so ids stay
    unique) and ``_append`` (its node list's append). An op with a tracked operand
    is appended here, as one tuple, and its results become tracked: this runs for
    every op under a tape, so it makes no Python call into the tape. A read of a variable the recorder does not
    track goes to its ``_record`` (a tape may start watching the variable then);
    any other op is not the recorder's concern."""
    if p.effect == "read":
        # a read names its variable in params (as in the IR); on a tape the variable
        # is the read's input, so gradients flow to it through the read's vjp
        args = (params["var"],)
        params = _EMPTY
    for tape in tapes:
        ids = tape._ids
        for a in args:
            if id(a) in ids:
                tape._append((p, args, params, out))
                if p.multiple_results:
                    for o in out:
                        ids[id(o)] = o
                else:
                    ids[id(out)] = out
                break
        else:
            if p is READ_VARIABLE:
                tape._record(p, args, params, out)


# ---------------------------------------------------------------------------
# read_variable: the one primitive bind itself needs (Variable operands are reads)
# ---------------------------------------------------------------------------

def _read_impl(var):
    # no copy: writes replace a variable's buffer (assign_variable), never mutate it,
    # so this array stays the value as it was at the read
    return var._v


def _read_vjp(ct, out, var):
    return (ct,)


READ_VARIABLE = Primitive("read_variable", _read_impl, lambda var: var.aval, _read_vjp, effect="read",
                          vjp_np=lambda need, ct, out, var: (ct,),
                          doc="A snapshot of a Variable's value: bind(READ_VARIABLE, var=v).", strings=True)


def aval_of(x) -> Aval:
    if isinstance(x, _Tensor):
        return x.aval
    if isinstance(x, bool):
        return Aval((), np.bool_, weak=True)
    if isinstance(x, int):
        return Aval((), np.int32, weak=True)
    if isinstance(x, float):
        return Aval((), np.float32, weak=True)
    if isinstance(x, (str, bytes)):   # a Python text operand: a 0-d tf.string (TF converts it so)
        return Aval((), _STRING)
    if isinstance(x, CompositeTensor):
        raise CompositeOperand("a tensor op")
    a = _py_array(x) if isinstance(x, (list, tuple)) else np.asarray(x)
    if a.dtype.kind == "O" and not a.ndim:   # a foreign object: a registered conversion's tensor, if any
        from .tensor import _registered_conversion   # (tf.register_tensor_conversion_function)
        r = _registered_conversion(x)
        if r is not None:
            return r.aval
    return Aval(a.shape, _STRING if a.dtype.kind in "US" else a.dtype)


def _only_python(x):
    if isinstance(x, (list, tuple)):
        return all(_only_python(v) for v in x)
    return x.__class__ in _PY_SCALARS


def _py_array(x):
    """A list/tuple argument as an array. Made of Python scalars only, it gets
    TF's defaults (float32, int32; dtypes rule 3), as tapeflow.constant would."""
    a = np.asarray(x)
    if a.dtype.kind in "US":   # a list of str/bytes: tf.string's object array of bytes
        from .dtypes import string_array
        try:
            return string_array(x)
        except (ValueError, TypeError):   # text mixed with numbers: the op's rule names the problem
            return a
    if a.dtype.itemsize == 8 and a.dtype.kind in "fi" and _only_python(x):
        if a.dtype.kind == "f":
            a = a.astype(np.float32)
        elif a.size == 0 or (a.min() >= -2**31 and a.max() < 2**31):  # else int64, not wrapped
            a = a.astype(np.int32)
    return a


def _py_defaults(vals):
    """Python scalars only (``tapeflow.exp(1.0)``, ``equal(0.0, 0)``): each in TF's
    default dtype of its kind (float32, int32 (int64 if it does not fit), bool); the
    rule's result dtype then applies to the kernel's result (``_conform``)."""
    out = []
    for v in vals:
        c = v.__class__
        if c is float:
            out.append(np.float32(v))
        elif c is int:
            out.append(np.int32(v) if -2**31 <= v < 2**31 else np.int64(v))
        else:
            out.append(np.bool_(v))
    return out


class _NumpyMode:
    """TF's ``tnp.experimental_enable_numpy_behavior()`` switch (set by
    ``tapeflow.experimental.numpy``): while ``enabled``, operands of the ops that adopt NumPy
    operands (``numpy_operands="adopt"``: arithmetic, comparisons, matmul, concat) are promoted
    with NumPy's rules (``int32 + float32`` is float64; a Python scalar is weak) instead of
    having to agree, in eager and traced code alike (both call ``adopt_numpy``). The one
    global switch is TF's: the program turns it on once, at its start."""

    __slots__ = ("enabled", "prefer_float32", "lattice")

    def __init__(self):
        self.enabled = False
        self.prefer_float32 = False
        #: None: NumPy's rules (TF's "legacy" mode); else TF's "all"/"safe" table (the JAX-like
        #: lattice): {(kind, kind): result dtype | an exception to raise}; a pair not in it makes
        #: no promotion (the op's rule decides); kinds are dtypes and "pyint"/"pyfloat"/"pybool"
        self.lattice = None


NUMPY_MODE = _NumpyMode()


def _lattice_promote(args, table):
    """TF's "all"/"safe" promotion: the table folded over the operands (the lattice is
    associative), Python scalars weak."""
    kinds = []
    for a in args:
        if isinstance(a, _Tensor):
            kinds.append(aval_of(a).dtype)
        elif a.__class__ in _PY_SCALARS:
            kinds.append("pybool" if a.__class__ is bool else "pyint" if a.__class__ is int else "pyfloat")
        elif isinstance(a, (np.ndarray, np.generic)):
            kinds.append(a.dtype)
        else:
            return args
    d = kinds[0] if kinds else None
    for k in kinds[1:]:
        r = table.get((d, k))
        if r is None:
            return args
        if isinstance(r, Exception):
            raise type(r)(str(r))
        d = r
    if d is None or isinstance(d, str):  # Python scalars only: nothing to promote
        return args
    return _cast_all(args, d)


def _cast_all(args, d):
    out = []
    for a in args:
        if isinstance(a, _Tensor):
            if aval_of(a).dtype != d:
                a = bind(REGISTRY["cast"], a, dtype=d)
        elif isinstance(a, (np.ndarray, np.generic)) and a.dtype != d:
            a = np.asarray(a).astype(d)
            a = a if a.ndim else a[()]
        out.append(a)
    return tuple(out)


def _numpy_promote(args):
    """NumPy's promotion of ``args`` (NUMPY_MODE on): tensors and NumPy operands of another
    dtype are cast to ``np.result_type`` of all of them (a tensor by the cast primitive, so
    tapes and traces see it); Python scalars stay weak, so the op's rule gives them that dtype."""
    if NUMPY_MODE.lattice is not None:
        return _lattice_promote(args, NUMPY_MODE.lattice)
    ds = []
    for a in args:
        if isinstance(a, _Tensor):
            ds.append(aval_of(a).dtype)
        elif a.__class__ in _PY_SCALARS:
            ds.append(np.float32(a) if a.__class__ is float and NUMPY_MODE.prefer_float32 else a)
        elif isinstance(a, (np.ndarray, np.generic)):
            ds.append(a.dtype)
        else:
            return args  # lists and other values: the op's own conversion (and its errors)
    try:
        d = np.result_type(*ds)
    except (TypeError, OverflowError):
        return args  # (no common dtype: the op's rule says what is wrong)
    if d.kind not in "biuf":
        return args
    return _cast_all(args, d)


def adopt_numpy(p, args):
    """``args`` with each NumPy operand converted to the dtype of the op's tensor operands
    (primitives whose record says ``numpy_operands="adopt"``; eager_apply and the tracer both
    call this, so every mode converts alike). As TF's conversion, floats round to float32 and
    integers become floats; unlike it, values the conversion would change are refused: TF
    wraps 300 to 44 in uint8 and truncates 1.5 to 1 in int32 without a word. A NumPy float64
    scalar is a Python float (its subclass) and stays weak. Under NUMPY_MODE the operands
    are promoted with NumPy's rules instead (``_numpy_promote``)."""
    if NUMPY_MODE.enabled:
        return _numpy_promote(args)
    d = None
    found = False
    for a in args:
        if isinstance(a, _Tensor):
            if d is None:
                d = aval_of(a).dtype
        elif _is_numpy_operand(a):
            found = True
    if not found or d is None:
        return args
    return tuple(_adopt(p, a, d) if _is_numpy_operand(a) else a for a in args)


_PY_NUMBERS = (float, int)
#: whether a rule has met a bfloat16 operand beside a Python number yet (eager_apply converts only
#: then: a program without bfloat16 pays one flag test per call with Python numbers)
_BF16_NUMBERS = [False]


def _takes_bf16_numbers(p):
    """Whether ``p``'s Python-number operands take its tensor operands' dtype: the records whose
    operands share one dtype (``numpy_operands="adopt"``) and the elementwise family (its rules
    give weak operands the strong dtype; where's condition is a bool, never a number)."""
    return p.numpy_operands is not None or p.fusion == "elementwise"


def _bf16_numbers(vals):
    """``vals`` with each Python number converted to a bfloat16 NumPy scalar, as TF converts
    it before the op (x * 0.3 multiplies by 0.30078125). NumPy would compute a bfloat16 array
    and a Python float in float32 or float64 (ml_dtypes is a legacy user dtype: no NEP 50 weak
    scalars), rounding the result instead of the operand; and where(c, x, 0.3) would be float64.
    eager_apply (such signatures never enter bind's fast path) and the tracer (``Trace.process``)
    convert them, in the operands the tapes record too."""
    return tuple(_BF16.type(v) if v.__class__ in _PY_NUMBERS else v for v in vals)




def _is_numpy_operand(a):
    # (a Python complex is one too: z_c64 * 1j is complex64, as TF converts 1j to its peer's dtype)
    return ((a.__class__ is np.ndarray or isinstance(a, np.generic)) and a.__class__ is not np.float64) \
        or a.__class__ is complex


def _adopt(p, a, d):
    if a.__class__ is complex:
        a = np.complex128(a)
    k, dk = _dt_kind(a.dtype), _dt_kind(d)   # (bfloat16's NumPy kind is "V": read as "f")
    if a.dtype == d or not ((dk == "f" and k in "fiub") or (dk in "iu" and k in "iuf") or (dk == "c" and k in "fiuc")):
        return a  # the same dtype, or no conversion TF makes either (the rule says what is wrong)
    arr = np.asarray(a)
    if dk in "iu" and arr.size:
        if k == "f" and not np.array_equal(arr, np.trunc(arr)):
            from ..errors import InvalidArgumentTypeError
            raise InvalidArgumentTypeError(
                f"{p.name}: a NumPy {arr.dtype} operand {fmt_shape(arr.shape)} has fractional values and the tensor "
                f"operand is {d}; cast one side first (TF truncates them silently)")
        info = np.iinfo(d)
        if arr.min() < info.min or arr.max() > info.max:
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError(
                f"{p.name}: a NumPy {arr.dtype} operand {fmt_shape(arr.shape)} has values outside {d}'s range "
                f"[{info.min}, {info.max}], the tensor operand's dtype; cast one side first (TF wraps them silently)")
    out = arr.astype(d)
    return out if isinstance(a, np.ndarray) else out[()]


def _describe(args):
    parts = []
    for a in args:
        try:
            av = aval_of(a)
            parts.append(f"{fmt_shape(av.shape)} {'string' if av.dtype is _STRING else av.dtype}"
                         + (" (Python scalar)" if av.weak else ""))
        except Exception:
            parts.append(type(a).__name__)
    return ", ".join(parts)


def _kernel_error(p, e, args):
    if isinstance(e, _OpError):  # raised on purpose by a kernel (index range, division by zero, size)
        return type(e)(f"{e} (inputs: {_describe(args)})")
    # the rule passed (it ran first), so this is a value-dependent error: an index
    # out of range, a reshape of a data-dependent size
    kind = type(e) if isinstance(e, (ValueError, TypeError, IndexError)) else ValueError
    return kind(f"{p.name}: {e} (inputs: {_describe(args)})")


def _leaked(p, a):
    return RuntimeError(
        f"{p.name}: got a symbolic tensor from a finished trace ({a!r}). It escaped a "
        "tapeflow.function (stored on self or in a global?). Return it from the function instead.")


def _convert_other(p, a):
    if isinstance(a, (str, bytes)):   # `s == "a"`, tf.strings ops: a 0-d tf.string, as TF converts it
        from .dtypes import string_array
        return string_array(a)
    if hasattr(a, "__array__"):
        return np.asarray(a)
    if a.__class__ is range:   # tf.reshape(range(20), ...): TF converts the list of its ints (int32)
        return _py_array(list(a))
    if a.__class__ is complex:   # TF: a Python complex alone is complex128
        return np.complex128(a)
    from .tensor import _registered_conversion   # (tf.register_tensor_conversion_function)
    r = _registered_conversion(a)
    if r is not None:
        return r._v
    raise _InvalidArgumentTypeError(f"{p.name}: cannot convert argument of type {type(a).__name__} to a tensor: {a!r}")


