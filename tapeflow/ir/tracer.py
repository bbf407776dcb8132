"""Tracing: the third interpretation of ``bind``.

While a ``Trace`` is active (``STATE.trace``), ``bind(p, *args)`` calls
``trace.process``, which runs the primitive's shape/dtype rule and appends an
equation instead of computing anything. Tensors seen while tracing are
``Tracer`` objects: symbolic, with a shape and dtype but no value.

Variables are captured by reference: each read is a ``read_variable``
equation and each assign an ``assign_variable`` equation, in program order,
so compiled code reads the current value on every call and sees its own
writes. Sub-traces (cond branches, loop bodies) capture outer tracers as
extra inputs.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from ..core import primitive as _prim
from ..core.aval import Aval
from ..core.primitives.effects import assign_variable_p
from ..core.state import STATE
from ..core.tensor import Tensor, Variable, TensorShape, _to_array
from ..core import dtypes as _dt
from .graph import Eqn, Graph, Literal, Var
from ..errors import OperatorNotAllowedInGraphError as _OperatorNotAllowedInGraphError

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TracingError(RuntimeError):
    pass


class SymbolicValueError(TracingError, AttributeError):
    """``.numpy()`` of a symbolic tensor. Also an AttributeError because TF raises one
    there (its symbolic tensors have no ``numpy``), and TF code catches that."""


class SymbolicBoolError(TracingError, _OperatorNotAllowedInGraphError):
    """bool() of a symbolic tensor (a Python ``if``/``while`` on it). Also TF's
    OperatorNotAllowedInGraphError (a TypeError), which TF raises there and TF code catches."""


class EscapedTensorError(TracingError, TypeError):
    """A symbolic tensor of a finished trace used again. Also a TypeError, as TF's
    "An op outside of the function building code is being passed a Graph tensor"."""


def _unknown_rank(where, a):
    from ..errors import InvalidArgumentError
    return InvalidArgumentError(
        f"{where} ({a._short()}) has an unknown shape: it is the output of a "
        "py_function/numpy_function whose Tout gives only a dtype. Inside tapeflow.function such an "
        "output can be returned, but an op on it needs its rank: give Tout as a TensorSpec, e.g. "
        "tapeflow.TensorSpec([None], tapeflow.float32) (None for the dimensions that vary).")


#: the largest result folded into a constant (at trace time here, and by the constant-folding
#: pass): bigger ones are computed at run time, memory over speed
MAX_FOLD_ELEMENTS = 1 << 16


def _has_graph(params):
    """Whether an op carries sub-graphs (control flow): those stay in the program."""
    return any(isinstance(v, Graph) or (isinstance(v, (tuple, list)) and any(isinstance(g, Graph) for g in v))
               for v in params.values())


def _small(p, args, params):
    """Whether ``p``'s result on these known operands is small enough to fold."""
    try:
        out = p.abstract(*[_prim.aval_of(a) for a in args], **params)
    except Exception:   # (the op's own error: eager_apply raises it with the op's words)
        return True
    n = 1
    for d in out.shape:
        if d is None:
            return False
        n *= d
    return n <= MAX_FOLD_ELEMENTS


class Tracer(Tensor):
    """A symbolic tensor: shape and dtype known, value not (yet)."""

    __slots__ = ("_trace", "_var")

    def __init__(self, trace, var):
        self._v = None
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval

    @property
    def shape(self):
        return TensorShape(self._var.aval.shape)

    @property
    def dtype(self):
        return _dt.from_np(self._var.aval.dtype)

    @property
    def ndim(self):
        return self._var.aval.ndim

    rank = ndim

    def numpy(self):
        if STATE.trace is None:  # no trace is running: the tensor leaked out of a finished one
            raise SymbolicValueError(
                "'SymbolicTensor' object has no attribute 'numpy': this symbolic tensor escaped a "
                "finished tapeflow.function (stored in a global or on self?) and has no value. Return "
                "it from the function and call .numpy() on the result.")
        raise SymbolicValueError(
            "`.numpy()` was called on a symbolic tensor inside tapeflow.function (values don't exist "
            "while tracing). Use tapeflow ops on it (tapeflow.cond / tapeflow.while_loop for control "
            "flow that depends on it), tapeflow.print(x) to see it on every call, or return it from the "
            "function and call .numpy() on the result.")

    def __array__(self, dtype=None, copy=None):
        raise TracingError(
            "a symbolic tensor was converted to a NumPy array inside tapeflow.function (np.* on a "
            "tensor?). Use the tapeflow op (tapeflow.math.*) instead, or return the tensor and use NumPy outside.")

    def __bool__(self):
        raise SymbolicBoolError(
            f"Python `if`/`while`/`and`/`or`/bool() on a symbolic tensor {self._short()} inside "
            "tapeflow.function: its value is unknown while tracing. Use tapeflow.cond(pred, true_fn, "
            "false_fn) or tapeflow.where for `if`, tapeflow.while_loop / fori_loop for loops, or pass "
            "the value as a Python argument (it then becomes part of the cache key).")

    def __float__(self):
        raise TracingError(f"float() of a symbolic tensor {self._short()} inside tapeflow.function: its "
                           "value is unknown while tracing. Keep it a tensor (tapeflow.cond / "
                           "tapeflow.while_loop for control flow that depends on it), or pass a Python "
                           "float argument instead")

    def __int__(self):
        raise TracingError(f"int() of a symbolic tensor {self._short()} inside tapeflow.function: its "
                           "value is unknown while tracing. Keep it a tensor (tapeflow.cond / "
                           "tapeflow.while_loop / tapeflow.fori_loop for control flow that depends on "
                           "it), or pass a Python int argument instead")

    def __index__(self):
        raise TracingError(f"a symbolic tensor {self._short()} was used as a Python index; use "
                           "tapeflow.gather, or pass the index as a Python int")

    def __len__(self):
        s = self._var.aval.shape
        if not s:
            raise TypeError("len() of a scalar tensor")
        if s[0] is None:
            raise TracingError("len() of a tensor whose first dim is unknown while tracing")
        return s[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def _short(self):
        return f"({self._var.aval.str_short()})"

    # TF 2.21's graph-tensor text: str Tensor("x:0", shape=(None,), dtype=int32),
    # repr <tf.Tensor 'x:0' shape=(None,) dtype=int32>
    def __str__(self):
        av = self._var.aval
        dt = _dt.from_np(av.dtype).name
        return f'Tensor("{self._trace.tf_name(self._var)}", shape={TensorShape(av.shape)}, dtype={dt})'

    def __repr__(self):
        av = self._var.aval
        dt = _dt.from_np(av.dtype).name
        return f"<tf.Tensor '{self._trace.tf_name(self._var)}' shape={TensorShape(av.shape)} dtype={dt}>"

    # f"{x}" is str(x) while tracing (no value to format; a spec is a TypeError, as in TF)
    __format__ = object.__format__

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TracingError("a symbolic tensor cannot be pickled")


def user_frame():
    """The innermost stack frame outside tapeflow's own package (the user's line)."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIR) or os.sep + "tests" + os.sep in fn:
            return (fn, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return None


def fmt_src(src):
    if not src:
        return "<unknown>"
    return f'File "{src[0]}", line {src[1]}, in {src[2]}'


class Trace:
    """Builds one Graph. ``kind``: 'function' (top level), 'branch' (cond), 'loop'."""

    def __init__(self, parent=None, kind="function", local_vars=()):
        self.parent = parent
        self.kind = kind
        self.eqns = []
        self.inputs = []
        self.consts = []          # (Var, value)
        self._const_ids = {}      # id(obj) -> Var (obj kept alive in _keep)
        self._keep = []
        self.captures = []        # (outer tracer, inner Var)
        self._capture_ids = {}
        self.variables = {}       # id -> Variable, in first-use order
        self.written = set()      # ids of variables written in this trace
        self.hoisted = set()      # ids of variables whose reads were hoisted to the parent
        self.local_vars = set(local_vars)
        self.created_variables = []
        self.saved = None
        self.saved_tapes = ()
        #: tapes active where this (sub-)trace began; they see the cond/loop as one op
        self.entry_tapes = ()
        self.input_names = {}     # id(input Var) -> the Python parameter it came from (for reprs)
        #: custom_gradient calls of this (top-level) trace (autodiff/custom_gradient.py Region),
        #: which tf.saved_model.save turns into gradient graphs
        self.custom_regions = []

    # -- context -----------------------------------------------------------------------
    def __enter__(self):
        self.saved = STATE.trace
        STATE.trace = self
        if self.parent is not None:
            # a sub-graph starts with no tape recording: tapes opened outside see
            # the cond/loop equation as a whole, tapes opened inside see its body
            self.entry_tapes = self.saved_tapes = STATE.tapes
            STATE.tapes = ()
        return self

    def __exit__(self, *exc):
        STATE.trace = self.saved
        if self.parent is not None:
            STATE.tapes = self.saved_tapes
        return False

    # -- values -------------------------------------------------------------------------
    def new_input(self, aval):
        v = Var(aval)
        self.inputs.append(v)
        return Tracer(self, v)

    def const(self, value, keep=None):
        key = id(keep if keep is not None else value)
        v = self._const_ids.get(key)
        if v is None:
            arr = value
            v = Var(Aval(np.shape(arr), np.asarray(arr).dtype if not hasattr(arr, "dtype") else arr.dtype))
            self.consts.append((v, arr))
            self._const_ids[key] = v
            self._keep.append(keep if keep is not None else value)
        return v

    def to_var(self, x):
        c = x.__class__
        if c is Tracer:
            if x._trace is self:
                return x._var
            return self._capture(x)
        if c is Tensor:
            if x._v is None:
                raise TracingError("a symbolic tensor from another trace was used here")
            return self.const(x._v, keep=x)
        if c is float or c is int or c is bool:
            return Literal(x, _prim.aval_of(x))
        if isinstance(x, Variable):
            return self.read_variable(x)._var
        if c is np.float64:  # a Python float subclass: weak like one, as in eager (aval_of)
            return Literal(float(x), _prim.aval_of(x))
        if isinstance(x, np.ndarray) and (x.flags.writeable or x.base is not None):
            # a NumPy array the function closes over is a constant of the trace, its value
            # when traced (as TF captures it): held by reference, a later in-place change
            # would reach the compiled code's reads but not the values folded while tracing
            return self.const(np.array(x), keep=x)
        if isinstance(x, (np.ndarray, np.generic)):
            return self.const(x)
        if isinstance(x, (list, tuple)):
            return self.const(_to_array(x))
        if isinstance(x, Tensor):
            return self.const(x._v, keep=x)
        if c is str or c is bytes:   # a Python text operand: a tf.string constant, as eagerly
            return self.const(_to_array(x))
        from ..core.tensor import _registered_conversion   # (tf.register_tensor_conversion_function)
        r = _registered_conversion(x)
        if r is not None:
            return self.to_var(r)
        raise TypeError(f"cannot use a {type(x).__name__} as a tensor: {x!r}")

    def _is_ancestor(self, t):
        p = self.parent
        while p is not None:
            if p is t:
                return True
            p = p.parent
        return False

    def _capture(self, x):
        if not self._is_ancestor(x._trace):
            raise EscapedTensorError(
                f"a symbolic tensor {x._short()} from a finished trace was used: it escaped a "
                "tapeflow.function (kept on self or in a global?). Return it instead.")
        v = self._capture_ids.get(id(x))
        if v is not None:
            return v
        outer = x if x._trace is self.parent else Tracer(self.parent, self.parent._capture(x))
        v = Var(x._var.aval)
        self.captures.append((outer, v))
        self._capture_ids[id(x)] = v
        return v

    def alias(self, t):
        return Tracer(self, self.to_var(t))

    # -- names (only for printing symbolic tensors) ------------------------------------------
    def name_inputs(self, fn, args, kwargs, bound=False):
        """Name the symbolic arguments as TF names a function's placeholders: the
        parameter's name (``x:0``; the tensors of a nested argument ``ys``, ``ys_1``;
        ``*args`` ``args_0``, ``args_1``; keywords their key). ``bound``: ``fn``'s
        first parameter is the instance."""
        import inspect
        from ..util import nest
        try:
            params = list(inspect.signature(fn).parameters.values())[1 if bound else 0:]
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")

        def label(value, base):
            for leaf in nest.flatten(value):
                if isinstance(leaf, Tracer) and leaf._trace is self:
                    self.input_names.setdefault(id(leaf._var), base)

        for i, a in enumerate(args):
            label(a, positional[i] if i < len(positional) else f"{star}_{i - len(positional)}")
        for k, a in kwargs.items():
            label(a, k)

    def tf_name(self, var):
        """A TF-style name for ``var`` (``x:0``, ``add:0``, ``add_1:0``, ``Const:0``),
        made on demand for a repr: arguments are named by ``name_inputs``, constants
        ``Const``, results by their primitive; repeated names get ``_1``, ``_2``..."""
        taken = {}

        def unique(base):
            n = taken.get(base, 0)
            taken[base] = n + 1
            return base if n == 0 else f"{base}_{n}"

        for v in self.inputs:
            name = unique(self.input_names.get(id(v), "Placeholder"))
            if v is var:
                return name + ":0"
        for _, v in self.captures:
            name = unique("Placeholder")
            if v is var:
                return name + ":0"
        for v, _ in self.consts:
            name = unique("Const")
            if v is var:
                return name + ":0"
        for e in self.eqns:
            name = unique(e.prim.name)
            for j, o in enumerate(e.outputs):
                if o is var:
                    return f"{name}:{j}"
        return "Placeholder:0"

    # -- the interpretation -----------------------------------------------------------------
    def process(self, p, args, params):
        for i, a in enumerate(args):
            if isinstance(a, Tracer) and a._var.aval.shape is None:
                raise _unknown_rank(f"{p.name}: argument {i}", a)
        if p.effect == "read":  # an ordered read of params["var"] (hoisted out of sub-graphs when safe)
            return self.read_variable(params["var"])
        if p.effect == "write":  # an ordered write (enclosing traces learn of it)
            self.write_variable(params["var"], *args)
            return ()
        canon = None
        for i, a in enumerate(args):
            if isinstance(a, Variable):
                if canon is None:
                    canon = list(args)
                canon[i] = self.read_variable(a)
        if canon is not None:
            args = tuple(canon)
        if p.effect is None and not p.multiple_results and not any(isinstance(a, Tracer) for a in args) \
                and not _has_graph(params) and _small(p, args, params):
            # Every operand is known now (constants, tf.shape of known dims, Python numbers): the op
            # runs now, as it would eagerly, and its value is known to the rest of the trace, so
            # tf.one_hot(x, tf.shape(x)[1]) or x[:tf.shape(x)[0] - 1] take it as a number in both
            # modes (TF folds such constants in its graph). Only pure ops: random draws, prints and
            # variable accesses keep their place in the program; control flow (sub-graphs)
            # and large results (memory over speed, as the constant-folding pass) stay traced.
            return _prim.eager_apply(p, args, params)
        if p.numpy_operands is not None:  # (as eager_apply: a NumPy operand takes its tensor peers' dtype)
            args = _prim.adopt_numpy(p, args)
        if _prim._takes_bf16_numbers(p) and any(a.__class__ in _prim._PY_NUMBERS for a in args) and any(
                isinstance(a, Tensor) and _prim.aval_of(a).dtype is _prim._BF16 for a in args):
            args = _prim._bf16_numbers(args)   # (as eager_apply: TF converts them to bfloat16 first)
        try:
            in_vars = [self.to_var(a) for a in args]
        except (TypeError, ValueError) as e:  # a None/object argument, a mixed list: name the op it was passed to
            for a in args:
                if isinstance(a, _prim.CompositeTensor):
                    # a composite operand (an ExtensionType, a RaggedTensor): its class applies p, as
                    # eager_apply hands it over (TF's dispatch); tried only once the conversion failed
                    return a._bind_composite(p, args, params)
            from ..errors import InvalidArgumentTypeError
            raise InvalidArgumentTypeError(f"{p.name}: {e}") from None
        try:
            in_avals = [v.aval for v in in_vars]
            if not p.strings:
                _prim.refuse_strings(p, in_avals)
            if not p.complex:
                _prim.refuse_complex(p, in_avals)
            out_aval = p.abstract(*in_avals, **params)
        except (ValueError, TypeError, IndexError) as e:
            src = user_frame()
            raise type(e)(f"{e}\n  while tracing, at {fmt_src(src)}") from None
        if p.multiple_results:
            outs = [Var(a) for a in out_aval]
            self.eqns.append(Eqn(p, in_vars, outs, params, user_frame()))
            result = tuple(Tracer(self, v) for v in outs)
        else:
            out = Var(out_aval)
            self.eqns.append(Eqn(p, in_vars, [out], params, user_frame()))
            result = Tracer(self, out)
        if STATE.tapes and p.differentiable:
            _prim.record(p, args, params, result, STATE.tapes)
        return result

    # -- variables -----------------------------------------------------------------------------
    def read_variable(self, var, _tapes=None):
        """A read of ``var`` (recorded on ``_tapes``, default: the active tapes)."""
        tapes = STATE.tapes if _tapes is None else _tapes
        self.variables.setdefault(id(var), var)
        vid = id(var)
        if self.parent is not None and vid not in self.written and vid not in self.local_vars:
            # Hoist the read to the enclosing trace: the sub-graph then takes the value
            # as an input, which lets gradients flow to the variable through cond/scan.
            # Tapes that were active around the cond/loop see the outer read; tapes
            # opened inside it see the captured inner value.
            self.hoisted.add(vid)
            outer = self.parent.read_variable(var, _tapes=self.entry_tapes)
            t = Tracer(self, self._capture(outer))
        else:
            out = Var(var.aval)
            self.eqns.append(Eqn(_prim.READ_VARIABLE, [], [out], {"var": var}, user_frame()))
            t = Tracer(self, out)
        if tapes:
            _prim.record(_prim.READ_VARIABLE, (), {"var": var}, t, tapes)
        return t

    def write_variable(self, var, value):
        self.variables.setdefault(id(var), var)
        v = self.to_var(value)
        if v.aval.dtype != var._v.dtype:
            raise TypeError(f"{var._name}.assign: value has dtype {v.aval.dtype.name}, variable has "
                            f"{var._v.dtype.name}")
        # enclosing traces see the write too (through the cond/loop equation this trace
        # becomes): their later reads must not be hoisted past it, and a loop whose
        # earlier read was hoisted must be re-traced with the read inside
        t = self
        while t is not None:
            t.written.add(id(var))
            t = t.parent
        self.eqns.append(Eqn(assign_variable_p, [v], [], {"var": var}, user_frame()))

    def lift_to_constant(self, t):
        """Concrete value of a tracer that depends only on constants and variables
        (a Variable created while tracing: optimizer slots, lazily built layers)."""
        from .interpreter import eval_slice
        if t._trace is not self:
            raise TracingError("cannot create a Variable from a symbolic tensor of another trace")
        return eval_slice(self, t._var)

    # -- result ------------------------------------------------------------------------------------
    def finish(self, outputs):
        out_vars = [self.to_var(o) for o in outputs]
        return Graph(self.inputs + [v for _, v in self.captures], self.consts, self.eqns, out_vars,
                     list(self.variables.values()))
