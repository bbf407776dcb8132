"""Algebraic simplification: replace an equation by one of its inputs when an
identity holds and the input has exactly the output's shape and dtype
(x*1, 1*x, x+0, x-0, x/1, x**1, reshape/broadcast_to/transpose/cast that
change nothing, stop_gradient (gradients were already taken at trace time),
neg(neg(x)))."""
from __future__ import annotations

from ...ir.graph import Graph, Literal
from ._util import map_subgraphs, rebuild, resolve


def _is_lit(v, val):
    return isinstance(v, Literal) and not isinstance(v.val, bool) and v.val == val


def _same(out, v):
    return not isinstance(v, Literal) and v.aval.shape == out.aval.shape and v.aval.dtype == out.aval.dtype


def _identity_input(e, producers):
    name = e.prim.name
    ins = e.inputs
    out = e.outputs[0] if e.outputs else None
    if name == "mul":
        if _is_lit(ins[1], 1) and _same(out, ins[0]):
            return ins[0]
        if _is_lit(ins[0], 1) and _same(out, ins[1]):
            return ins[1]
    elif name == "add":
        if _is_lit(ins[1], 0) and _same(out, ins[0]):
            return ins[0]
        if _is_lit(ins[0], 0) and _same(out, ins[1]):
            return ins[1]
    elif name in ("sub",):
        if _is_lit(ins[1], 0) and _same(out, ins[0]):
            return ins[0]
    elif name in ("div", "pow"):
        if _is_lit(ins[1], 1) and _same(out, ins[0]):
            return ins[0]
    elif name in ("reshape", "broadcast_to", "cast", "stop_gradient"):
        if _same(out, ins[0]):
            return ins[0]
    elif name == "transpose":
        if tuple(e.params["perm"]) == tuple(range(len(e.params["perm"]))) and _same(out, ins[0]):
            return ins[0]
    elif name == "neg":
        p = producers.get(ins[0])
        if p is not None and p.prim.name == "neg":
            return p.inputs[0]
    return None


def simplify(graph: Graph) -> Graph:
    subst = {}
    producers = {}
    eqns = []
    for e in graph.eqns:
        e = rebuild(e, inputs=[resolve(subst, v) for v in e.inputs])
        e = map_subgraphs(e, simplify)
        if e.effect is None and len(e.outputs) == 1 and not e.prim.multiple_results:
            r = _identity_input(e, producers)
            if r is not None:
                subst[e.outputs[0]] = r
                continue
        for o in e.outputs:
            producers[o] = e
        eqns.append(e)
    return graph.copy(eqns=eqns, outputs=[resolve(subst, v) for v in graph.outputs])
