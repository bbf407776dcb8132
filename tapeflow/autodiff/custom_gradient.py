"""custom_gradient (TF semantics): ``f(*x) -> (y, grad_fn)``.

``f`` runs under the recording tapes (as TF's ``_eager_mode_decorator``), then
one node is recorded from its inputs to fresh output tensors, whose vjp is
``grad_fn``: a tape's gradient of the outputs takes that node, never ``f``'s own
ops. Those ops are on the tapes for the values ``grad_fn`` closes over (``e =
exp(x)`` in TF's ``log1pexp``): ``grad_fn`` is written in tapeflow ops, so when
one tape's gradient runs it, an outer tape (or a persistent tape inside its own
context, or a ForwardAccumulator) records that computation, and differentiates
it through those values back to the inputs: second and higher orders. With ``f``
run paused, those values had no history and TF 2.21's second derivatives came
out None (or zero in a trace). If ``f`` reads trainable variables, ``grad_fn``
must accept ``variables=`` and return ``(input_grads, variable_grads)``.
"""
from __future__ import annotations

import functools
import inspect

from ..core import primitive as _prim
from ..core.state import STATE
from ..core.tensor import Tensor, Variable
from ..util import nest


class _CustomNode:
    """A one-off record with the fields a tape node needs (not in the table)."""

    differentiable = True
    effect = None
    name = "custom_gradient"
    vjp_np = None  # the lean backward runs grad_fn on Tensors (it is written in tapeflow ops)
    vjp_np_into = None

    def __init__(self, grad_fn, n_inputs, variables, multiple_results, fn_name):
        self.grad_fn = grad_fn
        self.n_inputs = n_inputs
        self.variables = variables
        self.multiple_results = multiple_results
        self.fn_name = fn_name

    def vjp(self, ct, out, *args):
        cts = ct if self.multiple_results else (ct,)
        if self.variables:
            res = self.grad_fn(*cts, variables=list(self.variables))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise ValueError(f"custom_gradient({self.fn_name}): with variables, grad_fn must return "
                                 "(input_grads, variable_grads)")
            in_g, var_g = res
            var_g = list(var_g)
            if len(var_g) != len(self.variables):
                raise ValueError(f"custom_gradient({self.fn_name}): grad_fn returned {len(var_g)} variable "
                                 f"gradients for {len(self.variables)} variables")
        else:
            in_g, var_g = self.grad_fn(*cts), []
        in_g = list(in_g) if isinstance(in_g, (tuple, list)) else [in_g]
        if len(in_g) != self.n_inputs:
            raise ValueError(f"custom_gradient({self.fn_name}): grad_fn returned {len(in_g)} gradients "
                             f"for {self.n_inputs} tensor inputs")
        return tuple(in_g) + tuple(var_g)


class _AccessRecorder:
    """Collects the trainable variables read while ``f`` runs (tapes paused).

    It sits in ``STATE.tapes`` like a tape."""

    def __init__(self):
        self.vars = {}
        self._ids = {}  # it tracks nothing: every read comes to _record (primitive.record)

    def _record(self, p, args, params, out):
        if p is _prim.READ_VARIABLE and args[0].trainable:
            self.vars.setdefault(id(args[0]), args[0])


def _fresh(t):
    """A new tensor object for the same value (tape identity is object identity)."""
    if STATE.trace is not None:
        return STATE.trace.alias(t)
    n = object.__new__(Tensor)
    n._v = t._v
    return n


#: custom gradients met while tracing: [count, last function's name]. A traced graph holds
#: only the forward ops (the gradient function is Python, applied by tapes), so
#: tapeflow.function notes the count around each trace; a call in the top-level trace also
#: leaves a Region on it, which tf.saved_model.save turns into a traced gradient graph; it
#: refuses a trace whose custom gradients are not all regions (in a cond or loop body, or
#: reading variables: their loaded gradient would be the forward ops' own)
TRACED = [0, None]


class Region:
    """A custom_gradient call in a top-level trace: its equations are ``trace.eqns[start:end]``,
    the last ones a no-op ``cast`` of each output (so every output is a value of its own, made
    inside the region, even where ``f`` returns its input: a loaded graph's tape then records the
    custom node on those values; the simplify pass removes the casts from compiled code).
    ``grad_fn`` is the Python gradient function, traced by tf.saved_model.save against the
    trace's values (``trace`` is kept for that: its tracers are what grad_fn closes over)."""

    __slots__ = ("trace", "start", "end", "inputs", "outputs", "grad_fn", "name")

    def __init__(self, trace, start, end, inputs, outputs, grad_fn, name):
        self.trace, self.start, self.end = trace, start, end
        self.inputs, self.outputs, self.grad_fn, self.name = inputs, outputs, grad_fn, name


def _own_value(t):
    """``t`` as the output of an equation of its own (a same-dtype cast: a no-op simplify drops)."""
    dt = _prim.aval_of(t).dtype
    if dt.kind == "O":   # (a string output: no cast; such a call is not saved with its gradient)
        return t
    return _prim.bind(_CAST[0], t, dtype=dt)


_CAST = []


def custom_gradient(f=None, *, _autodiff_equivalent=False, _record_forward=True):
    """``_record_forward=False``: ``f`` runs with the tapes paused (recompute_grad, whose
    point is that the tapes keep none of ``f``'s values; TF's stops recording there too)."""
    if f is None:
        return functools.partial(custom_gradient, _autodiff_equivalent=_autodiff_equivalent,
                                 _record_forward=_record_forward)
    name = getattr(f, "__name__", "f")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        trace = STATE.trace if not _autodiff_equivalent else None
        if trace is not None:
            TRACED[0] += 1
            TRACED[1] = name
            start = len(trace.eqns)
            if not _CAST:
                from ..core.primitives.elementwise import cast_p
                _CAST.append(cast_p)
        tapes = STATE.tapes
        rec = _AccessRecorder()
        # The tapes record f's ops (the values grad_fn closes over get their history), and
        # the recorder notes the trainable variables f reads (every read reaches its _record).
        # Not when the one tape recording is a non-persistent GradientTape (a first-order
        # training step): its gradient pauses it, so it never records grad_fn's ops, and it
        # computes one gradient, through the custom node. Skipping them there keeps that step
        # as fast as before (recording them cost +4.4 us median a call of a three-op
        # function, +13%: the extra nodes recorded, then swept by the backward walk). The one
        # thing lost is TF's gradient through an intermediate of f that escapes it by a side
        # channel and is used after the call (docs/differences.md). Any other tape (an outer
        # one, a persistent one, a ForwardAccumulator's) may differentiate grad_fn's ops.
        STATE.tapes = tapes + (rec,) if _record_forward and (len(tapes) > 1 or tapes and getattr(
            tapes[0], "_persistent", True)) else (rec,)
        try:
            y, grad_fn = f(*args, **kwargs)
            if trace is not None:
                # (tapes paused: the casts are part of the custom function, not recorded)
                STATE.tapes = (rec,)
                flat_y = nest.flatten(y)
                outs = [_own_value(t) if isinstance(t, Tensor) else t for t in flat_y]
                y = nest.pack_sequence_as(y, outs)
        finally:
            STATE.tapes = tapes
        if trace is not None and trace.parent is None and not rec.vars and STATE.trace is trace:
            ins = [a for a in args if isinstance(a, Tensor)]
            if not kwargs and all(isinstance(o, _prim_Tracer()) and o._trace is trace for o in outs) and \
                    len(trace.eqns) > start:
                trace.custom_regions.append(Region(trace, start, len(trace.eqns), ins, [o for o in outs],
                                                   grad_fn, name))
        if not tapes:
            return y
        flat_y = nest.flatten(y)
        # (traced: the casts above are values of their own already)
        outs = [(_fresh(t) if trace is None else t) if isinstance(t, Tensor) else t for t in flat_y]
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        # as TF: a variable passed as an argument is an input (its gradient is an input gradient)
        variables = [v for v in rec.vars.values() if all(v is not a for a in args)]
        if variables and "variables" not in inspect.signature(grad_fn).parameters:
            raise TypeError(f"custom_gradient({name}): the function reads trainable variables "
                            f"{[v.name for v in variables]}; its grad_fn must take a `variables` keyword "
                            "argument and return (input_grads, variable_grads)")
        node_inputs = tuple(tensor_args) + tuple(variables)
        multiple = len(outs) != 1
        node = _CustomNode(grad_fn, len(tensor_args), variables, multiple, name)
        out_val = tuple(outs) if multiple else outs[0]
        for tape in tapes:
            if not getattr(tape, "_watch_accessed", False):
                continue
            # watch what f's reads would have (a variable argument, which f may not read, and
            # the trainable variables f read, which a paused f (recompute_grad) did not show
            # the tapes). Without the second, a call whose tensor inputs no tape tracks
            # recorded nothing, and the variables' gradients were None (TF 2.21 gives them)
            for a in args:
                if isinstance(a, Variable) and a.trainable:
                    tape._watch_var(a)
            for v in variables:
                tape._watch_var(v)
        _prim.record(node, node_inputs, {}, out_val, tapes)
        return nest.pack_sequence_as(y, outs)

    return wrapped


def _prim_Tracer():
    from ..ir.tracer import Tracer
    return Tracer


def recompute_grad(f):
    """tf.recompute_grad: ``f``'s gradient without keeping its intermediate values. The
    forward pass runs with the tapes paused (one custom-gradient node is recorded); the
    backward pass runs ``f`` again under a tape of its own and differentiates that. The
    values and gradients are ``f``'s own (TF 2.21 returns None for the inputs' gradient when
    ``f`` reads a variable; here they are computed)."""
    from .tape import GradientTape

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        # its gradient is f's own (recomputed): a graph without it differentiates the same
        @functools.partial(custom_gradient, _autodiff_equivalent=True, _record_forward=False)
        def inner(*xs):
            y = f(*xs, **kwargs)

            def grad_fn(*dys, variables=None):
                ins = [a for a in xs if isinstance(a, Tensor)]
                variables = list(variables or [])
                with GradientTape() as tape:
                    tape.watch(ins)
                    y2 = f(*xs, **kwargs)
                flat = nest.flatten(y2)
                seeds = [d if d is not None else _zeros_like(t) for d, t in zip(dys, flat)]
                g = tape.gradient(flat, ins + variables, output_gradients=seeds)
                return (g[:len(ins)], g[len(ins):]) if variables else g[:len(ins)]
            return y, grad_fn
        return inner(*args)
    return wrapped


def _zeros_like(t):
    from ..ops import array_ops
    return array_ops.zeros_like(t)
