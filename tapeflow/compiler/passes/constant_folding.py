"""Constant folding: a pure equation whose inputs are all constants or
literals is evaluated once at compile time and becomes a constant. Random
draws and variable reads are effects, never folded. Results larger than
``MAX_ELEMENTS`` stay computed at run time (memory over speed)."""
from __future__ import annotations

import numpy as np

from ...ir.graph import Graph, Literal, Var, subgraphs
from ...core.aval import Aval
from ._util import map_subgraphs, rebuild, resolve

from ...ir.tracer import MAX_FOLD_ELEMENTS as MAX_ELEMENTS  # the one threshold (tracing folds too)


def constant_folding(graph: Graph) -> Graph:
    values = {v: val for v, val in graph.consts}
    consts = list(graph.consts)
    subst = {}
    eqns = []
    for e in graph.eqns:
        e = rebuild(e, inputs=[resolve(subst, v) for v in e.inputs])
        e = map_subgraphs(e, constant_folding)
        if (e.effect is None and not subgraphs(e) and not e.prim.multiple_results and e.inputs
                and all(isinstance(v, Literal) or v in values for v in e.inputs)):
            vals = [v.val if isinstance(v, Literal) else values[v] for v in e.inputs]
            try:
                out = np.asarray(e.prim.impl(*vals, **e.params))
            except Exception:
                out = None  # leave it: the error will surface at run time with its context
            if out is not None and out.size <= MAX_ELEMENTS and out.dtype == e.outputs[0].aval.dtype:
                v = e.outputs[0]
                values[v] = out
                consts.append((v, out))
                continue
        eqns.append(e)
    g = graph.copy(eqns=eqns, consts=consts, outputs=[resolve(subst, v) for v in graph.outputs])
    # drop constants nothing uses any more
    return _prune_consts(g)


def _prune_consts(g):
    used = set()
    for e in g.eqns:
        used.update(v for v in e.inputs if isinstance(v, Var))
    used.update(v for v in g.outputs if isinstance(v, Var))
    return g.copy(consts=[(v, val) for v, val in g.consts if v in used])
