"""Straight-line Python code generation.

Each equation becomes one line calling its primitive's NumPy kernel, e.g.::

    def compiled(a, b):
        c = _read_0._v
        d = matmul(a, c, out=_buf0)
        e = maximum(d, 0.0, out=_buf1)
        ...
        return [g]

The kernels come from the primitive table (``impl``/``impl_out``), never
from here. Buffers come from the buffer plan (passes/buffers.py): an
intermediate with a static shape is written into a preallocated array with
``out=``, reused once its previous occupant is dead. Values that escape
(outputs, variable writes) are always freshly allocated, so a caller never
sees a buffer change under it.
"""
from __future__ import annotations

import functools
import itertools
import linecache

import numpy as np

from ...core import primitive as _prim
from ...ir.graph import Literal, Var
from ...ir.tracer import fmt_src

#: control-flow primitives register code emitters: emitter(ctx, eqn, in_names, out_names) -> [lines]
EMITTERS: dict = {}

_uid = itertools.count()


class Ctx:
    """Names and namespace for one generated module."""

    def __init__(self):
        self.ns = {"np": np}
        self.n = itertools.count()
        self.line_eqn = {}  # generated line number -> eqn (for error messages)

    def add(self, prefix, obj):
        name = f"_{prefix}{next(self.n)}"
        self.ns[name] = obj
        return name


def _lit(v):
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, float):
        r = repr(v)
        return r if r not in ("inf", "-inf", "nan") else f"float('{r}')"
    return repr(v)


def compile_graph(graph, plan=None, name="compiled"):
    """Graph -> Python function over NumPy arrays (returns a list of outputs)."""
    ctx = Ctx()
    fn = build_function(ctx, graph, plan, name)
    return fn


def build_function(ctx, graph, plan, name):
    names = {}
    counter = itertools.count()

    def nm(v):
        if isinstance(v, Literal):
            return _lit(v.val)
        n = names.get(v)
        if n is None:
            n = names[v] = f"v{next(counter)}"
        return n

    for v, val in graph.consts:
        names[v] = ctx.add("c", val)
    args = [nm(v) for v in graph.inputs]
    lines = [f"def {name}({', '.join(args)}):"]
    eqn_at = {}
    buffers = plan.buffers if plan is not None else {}
    copies = plan.copies if plan is not None else set()
    for e in graph.eqns:
        ins = [nm(v) for v in e.inputs]
        outs = [nm(v) for v in e.outputs]
        start = len(lines) + 1
        lines.extend("    " + ln for ln in emit_eqn(ctx, e, ins, outs, buffers.get(e.outputs[0]) if e.outputs else None,
                                                    e in copies, plan))
        for ln in range(start, len(lines) + 1):
            eqn_at[ln] = e
    outs = ", ".join(nm(v) for v in graph.outputs)
    lines.append(f"    return [{outs}]")
    src = "\n".join(lines) + "\n"
    filename = f"<tapeflow-compiled-{name}-{next(_uid)}>"
    # register the source so tracebacks show the generated line
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    code = compile(src, filename, "exec")
    exec(code, ctx.ns)
    fn = ctx.ns[name]
    fn.__tapeflow_source__ = src
    fn.__tapeflow_eqn_at__ = eqn_at
    fn.__tapeflow_filename__ = filename
    return fn


def emit_eqn(ctx, e, ins, outs, buf, copy_input, plan):
    p = e.prim
    if p is _prim.READ_VARIABLE:
        return [f"{outs[0]} = {ctx.add('var', e.params['var'])}._v"]
    if p.name == "assign_variable":
        var = ctx.add("var", e.params["var"])
        # values produced fresh by this graph are handed over; others (views, inputs,
        # constants, shared buffers) are copied so the variable owns its array
        if copy_input:
            return [f"{var}._v = np.array({ins[0]}, dtype={var}._v.dtype, copy=True)"]
        return [f"{var}._v = {ins[0]}"]
    em = EMITTERS.get(p.name)
    if em is not None:
        return em(ctx, e, ins, outs, plan)
    lhs = ", ".join(outs) if outs else "_"
    if p.multiple_results and len(outs) == 1:
        lhs = outs[0] + ","
    if buf is not None and p.impl_out is not None:
        b = ctx.add("buf", buf)
        if isinstance(p.impl, np.ufunc) and not e.params:
            k = ctx.add("u", p.impl)
            return [f"{lhs} = {k}({', '.join(ins)}, out={b})"]
        k = ctx.add("ko", functools.partial(p.impl_out, **e.params) if e.params else p.impl_out)
        return [f"{lhs} = {k}({b}, {', '.join(ins)})"]
    if e.params:
        k = ctx.add("k", functools.partial(p.impl, **e.params))
    else:
        k = ctx.add("k", p.impl)
    return [f"{lhs} = {k}({', '.join(ins)})"]


def eqn_for_traceback(fn, tb):
    """The equation whose generated line raised, from a traceback."""
    fname = getattr(fn, "__tapeflow_filename__", None)
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == fname:
            found = fn.__tapeflow_eqn_at__.get(tb.tb_lineno)
        tb = tb.tb_next
    return found
