"""Sinking (Graph -> Graph, before elementwise fusion): an elementwise equation
that reads only values the graph has from its start (inputs, constants,
variable reads) moves to just before its first user.

Why: tracing emits such equations where the program wrote them, often far from
their use. An optimizer step written as ``m.assign(0.9 * m + 0.1 * g)`` traces
``0.9 * m`` before the forward pass (it needs only ``m``), while ``+ 0.1 * g``
waits for the gradient. The fusion pass grows a group over every candidate of
its shape in program order, so the forward pass's loop took ``0.9 * m``, wrote
it to memory, and the Adam loop read it back. Next to its user, the fusion pass
(``fusion._drop_detached``) leaves it to the user's group, which reads ``m`` once.

Moving an equation later is safe when it has no effect and no sub-graph: its
inputs are values, computed once and never changed (a variable read is a
snapshot; a later write gives the variable a new array), so they are the same
wherever it runs. Equations whose value only the graph returns stay in place.
"""
from __future__ import annotations

from ...ir.graph import Graph, Var, subgraphs


def _sinkable(e, early):
    return (e.effect is None and e.prim.fusion == "elementwise" and not subgraphs(e) and e.outputs
            and all(not isinstance(v, Var) or v in early for v in e.inputs))


def sink(graph: Graph) -> Graph:
    eqns = graph.eqns
    early = set(graph.inputs) | {v for v, _ in graph.consts}
    for e in eqns:
        if e.effect == "read":
            early.update(e.outputs)
    first_use = {}
    for k, e in enumerate(eqns):
        for v in e.inputs:
            if isinstance(v, Var):
                first_use.setdefault(v, k)
    moves = {}  # index of an equation -> indices of the equations to place just before it
    for k, e in enumerate(eqns):
        if _sinkable(e, early):
            uses = [first_use[o] for o in e.outputs if o in first_use]
            if uses and min(uses) > k + 1:
                moves.setdefault(min(uses), []).append(k)
    if not moves:
        return graph
    moved = {k for ks in moves.values() for k in ks}
    out = []
    for k, e in enumerate(eqns):
        out.extend(eqns[j] for j in moves.get(k, ()))
        if k not in moved:
            out.append(e)
    return graph.copy(eqns=out)
