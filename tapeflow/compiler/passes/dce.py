"""Dead-code elimination: keep an equation if one of its outputs is used
(transitively) by the graph's outputs, or if it has a side effect (variable
write, print, a loop/branch containing one). Unused reads and unused random
draws are dropped. Sub-graphs keep all their outputs (their signature is
fixed by the enclosing equation)."""
from __future__ import annotations

from ...ir.graph import Graph, Var
from ._util import map_subgraphs

_LIVE_EFFECTS = ("write", "io", "control")


def dce(graph: Graph) -> Graph:
    live = {v for v in graph.outputs if isinstance(v, Var)}
    kept = []
    for e in reversed(graph.eqns):
        if e.effect in _LIVE_EFFECTS or any(o in live for o in e.outputs):
            e = map_subgraphs(e, dce)
            kept.append(e)
            live.update(v for v in e.inputs if isinstance(v, Var))
    kept.reverse()
    consts = [(v, val) for v, val in graph.consts if v in live]
    return graph.copy(eqns=kept, consts=consts)
