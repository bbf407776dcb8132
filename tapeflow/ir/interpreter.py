"""The reference interpreter: evaluates any Graph with the primitives' NumPy
kernels, one equation at a time. Every backend is tested against it."""
from __future__ import annotations

import numpy as np

from ..core import primitive as _prim
from .graph import Literal


def _read(env, v):
    return v.val if isinstance(v, Literal) else env[v]


def eval_graph(graph, args):
    """Run ``graph`` on concrete input values; returns the list of outputs."""
    if len(args) != len(graph.inputs):
        raise ValueError(f"graph takes {len(graph.inputs)} inputs, got {len(args)}")
    env = {}
    for v, val in graph.consts:
        env[v] = val
    for v, a in zip(graph.inputs, args):
        env[v] = a
    for e in graph.eqns:
        vals = [_read(env, v) for v in e.inputs]
        try:
            out = apply_eqn(e, vals)
        except Exception as ex:
            # remember the innermost equation that failed (tapeflow.function names its op and line)
            if getattr(ex, "_tapeflow_eqn", None) is None:
                try:
                    ex._tapeflow_eqn = e
                except Exception:
                    pass
            raise
        if e.prim.multiple_results:
            for v, o in zip(e.outputs, out):
                env[v] = o
        else:
            env[e.outputs[0]] = out
    return [_read(env, v) for v in graph.outputs]


def apply_eqn(e, vals):
    p = e.prim
    if p is _prim.READ_VARIABLE:
        return e.params["var"]._v
    if p.name == "assign_variable":
        return p.impl(*vals, var=e.params["var"])
    interp = INTERPRETERS.get(p.name)
    if interp is not None:
        return interp(e, vals)
    return p.impl(*vals, **e.params)


#: control-flow primitives register how the interpreter runs their sub-graphs
INTERPRETERS: dict = {}


def eval_slice(trace, target_var):
    """Evaluate the part of a trace that ``target_var`` depends on, if it
    depends on no input (used to give Variables created while tracing a value)."""
    produced = {}
    for i, e in enumerate(trace.eqns):
        for o in e.outputs:
            produced[o] = i
    inputs = set(trace.inputs) | {v for _, v in trace.captures}
    need, stack = set(), [target_var]
    while stack:
        v = stack.pop()
        if isinstance(v, Literal) or v in need:
            continue
        if v in inputs:
            from .tracer import TracingError
            raise TracingError(
                "a Variable's initial value depends on the traced function's arguments; create the "
                "variable outside the function, or from a constant / shape-only initializer")
        need.add(v)
        if v in produced:
            stack.extend(trace.eqns[produced[v]].inputs)
    env = {v: val for v, val in trace.consts}
    for e in trace.eqns:
        if any(o in need for o in e.outputs):
            vals = [_read(env, v) for v in e.inputs]
            out = apply_eqn(e, vals)
            if e.prim.multiple_results:
                env.update(zip(e.outputs, out))
            else:
                env[e.outputs[0]] = out
    return np.asarray(env[target_var])
