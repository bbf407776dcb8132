"""The compilation pipeline: passes in order, then a backend.

Backends are looked up by name in the registry (compiler/backends); 'auto'
tries ``AUTO`` in order: the first that does not decline the graph compiles
it. Any failure of a backend other than python (lowering, numba compiling)
falls back to the python backend with one debug line on the "tapeflow" logger.

``TAPEFLOW_DEBUG=passes`` prints the graph before the first pass and after
each one; ``TAPEFLOW_DEBUG=source`` prints the generated code.
"""
from __future__ import annotations

import logging
import os
import sys

import numpy as np

from .passes.simplify import simplify
from .passes.constant_folding import constant_folding
from .passes.cse import cse
from .passes.slices import push_slices
from .passes.dce import dce
from .passes.branch_reads import reads_into_branches
from .passes.buffers import plan_buffers
from ..ir.graph import Eqn, Graph

log = logging.getLogger("tapeflow")

#: backends 'auto' tries, in order (python takes every graph)
AUTO = ("numba", "python")

# push_slices after dce: a product counts as sliced only when its other uses are live;
# reads_into_branches last: a read's uses after the cond are then only the live ones
PASSES = [("simplify", simplify), ("constant_folding", constant_folding), ("cse", cse), ("dce", dce),
          ("push_slices", push_slices), ("reads_into_branches", reads_into_branches)]


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
    from .backends import get_backend
    choice = backend or os.environ.get("TAPEFLOW_BACKEND", "auto")
    order = AUTO if choice == "auto" else (choice,)
    ident = _ident(name)
    fn = None
    for bname in order:
        b = get_backend(bname)
        if bname == "python":
            break
        required = bname == choice
        if not b.available():
            if required:
                from ..util.extras import missing_extra_error
                raise missing_extra_error(b.requires or bname, b.extra, f"backend={bname!r}")
            continue
        try:
            fn = b.lower(graph, plan, ident, required=required)
        except NotImplementedError:
            if required:
                raise  # the user named this backend: say what it cannot lower
            fn = None
        except Exception as e:  # noqa: BLE001 - any backend failure: the python backend runs the graph
            log.debug("tapeflow: the %s backend failed on %r (%s: %s); using the python backend",
                      bname, name, type(e).__name__, e)
            fn = None
        if fn is not None:
            _show_source(name, fn)
            return fn, bname
    fn = get_backend("python").lower(graph, plan, ident)
    _show_source(name, fn)
    return fn, "python"


def _show_source(name, fn):
    src = getattr(fn, "__tapeflow_source__", None)
    if src is not None and _debug("source"):
        print(f"=== {name}: generated source\n{src}", file=sys.stderr)


def _ident(name):
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return s if s and not s[0].isdigit() else "f_" + s


#: elementwise work (elements per call) above which fusion pays on the second call
BIG_ELEMENTWISE_WORK = 1 << 20


def fuse_after(graph=None, jit_compile=None):
    """Calls after which a compiled function is recompiled with elementwise
    fusion: 100, or 2 when the graph moves over a million elements through
    fusible ops per call (big activations: each unfused op is a pass over
    memory, so compiling pays at once). ``function(jit_compile=True)`` asks for
    the fused tier from the first call (as TF's jit_compile compiles with XLA at
    once), ``jit_compile=False`` for the first tier only (TF: no XLA).
    ``TAPEFLOW_FUSE_AFTER`` overrides both; 0 turns the second tier off."""
    env = os.environ.get("TAPEFLOW_FUSE_AFTER")
    if env is not None:
        try:
            return int(env)
        except ValueError:
            pass
    if jit_compile is not None:
        return 1 if jit_compile else 0
    if graph is not None:
        work = 0
        for e in graph.eqns:
            if e.prim.fusion == "elementwise" and e.outputs and None not in e.outputs[0].aval.shape:
                work += int(np.prod(e.outputs[0].aval.shape))
        if work >= BIG_ELEMENTWISE_WORK:
            return 2
    return 100


def _fuse_nested(graph, fuse):
    """``fuse(graph)`` (None when it fused nothing) applied to ``graph`` and, first, to
    every sub-graph its equations hold (cond branches, loop bodies, at any depth):
    work inside a branch is as hot as the function (TD3's delayed actor branch holds
    the actor's Adam update and the soft target updates of three networks). Returns
    the new graph, or None when nothing was fused anywhere."""
    eqns, changed = [], False
    for e in graph.eqns:
        params = None
        for k, v in e.params.items():
            if isinstance(v, Graph):
                sub = _fuse_nested(v, fuse)
            elif isinstance(v, (tuple, list)) and v and all(isinstance(x, Graph) for x in v):
                subs = [_fuse_nested(x, fuse) for x in v]
                sub = None if all(x is None for x in subs) else type(v)(
                    x if n is None else n for x, n in zip(v, subs))
            else:
                continue
            if sub is not None:
                params = dict(e.params) if params is None else params
                params[k] = sub
        if params is not None:
            e = Eqn(e.prim, e.inputs, e.outputs, params, e.src)
            changed = True
        eqns.append(e)
    g = graph.copy(eqns=eqns) if changed else graph
    top = fuse(g)
    return top if top is not None else (g if changed else None)


def tier_up(graph, name="f"):
    """Second tier for a hot function: fuse elementwise chains into native
    loops (the ``python+fused`` backend). Returns (callable, backend name,
    fused graph) or None when nothing was fused or numba is unavailable."""
    from .backends import get_backend
    b = get_backend("python+fused")
    if not b.available():
        return None
    fused = _fuse_nested(graph, b.fuse)
    if fused is None:
        return None
    # a product that joined a loop as its narrow form (col_dots: x.T @ g folded in the loop
    # that reads x) leaves the transposed view it read unused: one Python line a call each
    fused = dce(fused)
    if _debug("passes"):
        print(f"=== {name}: after fusion ({len(graph.eqns)} -> {len(fused.eqns)} eqns)\n{fused}", file=sys.stderr)
    return get_backend("python").lower(fused, plan_buffers(fused), _ident(name)), b.name, fused
