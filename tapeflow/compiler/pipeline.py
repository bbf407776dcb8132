"""The compilation pipeline: passes in order, then a backend.

``TAPEFLOW_DEBUG=passes`` prints the graph before the first pass and after
each one; ``TAPEFLOW_DEBUG=source`` prints the generated code.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .passes.simplify import simplify
from .passes.constant_folding import constant_folding
from .passes.cse import cse
from .passes.dce import dce
from .passes.buffers import plan_buffers

PASSES = [("simplify", simplify), ("constant_folding", constant_folding), ("cse", cse), ("dce", dce)]


def _debug(what):
    flags = os.environ.get("TAPEFLOW_DEBUG", "")
    return what in flags.split(",") or flags == "all"


def optimize(graph, name="f", passes=None):
    log = []
    if _debug("passes"):
        print(f"=== {name}: traced graph ({len(graph.eqns)} eqns)\n{graph}", file=sys.stderr)
    for pname, p in (PASSES if passes is None else passes):
        before = len(graph.eqns)
        graph = p(graph)
        log.append((pname, before, len(graph.eqns)))
        if _debug("passes"):
            print(f"=== {name}: after {pname} ({before} -> {len(graph.eqns)} eqns)\n{graph}", file=sys.stderr)
    plan = plan_buffers(graph)
    log.append(("buffers", repr(plan)))
    return graph, plan, log


def compile(graph, plan, name="f", backend=None):  # noqa: A001
    """Returns (callable(*arrays) -> list, backend name)."""
    backend = backend or os.environ.get("TAPEFLOW_BACKEND", "auto")
    if backend in ("auto", "numba"):
        from .backends import numba_backend
        fn = numba_backend.try_compile(graph, name, required=(backend == "numba"))
        if fn is not None:
            return fn, "numba"
    if backend == "interpreter":
        from ..ir.interpreter import eval_graph
        return (lambda *args: eval_graph(graph, list(args))), "interpreter"
    from .backends.python_backend import compile_graph
    from .backends import control_flow_emitters  # noqa: F401  (registers cond/while/scan code)
    fn = compile_graph(graph, plan, name=_ident(name))
    if _debug("source"):
        print(f"=== {name}: generated source\n{fn.__tapeflow_source__}", file=sys.stderr)
    return fn, "python"


def _ident(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return s if s and not s[0].isdigit() else "f_" + s


#: elementwise work (elements per call) above which fusion pays on the second call
BIG_ELEMENTWISE_WORK = 1 << 20


def fuse_after(graph=None):
    """Calls after which a compiled function is recompiled with elementwise
    fusion: 100, or 2 when the graph moves over a million elements through
    fusible ops per call (big activations: each unfused op is a pass over
    memory, so compiling pays at once). ``TAPEFLOW_FUSE_AFTER`` overrides;
    0 turns the second tier off."""
    env = os.environ.get("TAPEFLOW_FUSE_AFTER")
    if env is not None:
        try:
            return int(env)
        except ValueError:
            pass
    if graph is not None:
        from .passes.fusion import FUSIBLE
        work = 0
        for e in graph.eqns:
            if e.prim.name in FUSIBLE and e.outputs and None not in e.outputs[0].aval.shape:
                work += int(np.prod(e.outputs[0].aval.shape))
        if work >= BIG_ELEMENTWISE_WORK:
            return 2
    return 100


def tier_up(graph, name="f"):
    """Second tier for a hot function: fuse elementwise chains into native
    loops (passes/fusion.py). Returns (callable, backend, fused graph) or None
    when nothing was fused or numba is unavailable."""
    from .backends import numba_backend
    from .backends.python_backend import compile_graph
    from .backends import control_flow_emitters  # noqa: F401
    from .passes.fusion import fuse_elementwise

    if numba_backend._numba() is None:
        return None

    def compile_group(sub):
        try:
            return numba_backend.try_compile(sub, "fused", required=True)
        except Exception:  # a group numba cannot lower stays unfused
            return None

    fused = fuse_elementwise(graph, compile_group)
    if not any(e.prim.name == "fused_elementwise" for e in fused.eqns):
        return None
    if _debug("passes"):
        print(f"=== {name}: after fusion ({len(graph.eqns)} -> {len(fused.eqns)} eqns)\n{fused}", file=sys.stderr)
    plan = plan_buffers(fused)
    return compile_graph(fused, plan, name=_ident(name)), "python+fused", fused
