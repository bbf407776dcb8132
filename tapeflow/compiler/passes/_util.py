"""Helpers shared by passes: substitution and recursion into sub-graphs."""
from __future__ import annotations

from ...ir.graph import Eqn, Graph, Literal, subgraphs


def resolve(subst, v):
    while not isinstance(v, Literal) and v in subst:
        v = subst[v]
    return v


def rebuild(eqn, inputs=None, params=None):
    return Eqn(eqn.prim, eqn.inputs if inputs is None else inputs, eqn.outputs,
               eqn.params if params is None else params, eqn.src)


def map_subgraphs(eqn, fn):
    """Apply ``fn`` (Graph -> Graph) to every sub-graph in an equation's params."""
    if not subgraphs(eqn):
        return eqn
    params = {}
    for k, v in eqn.params.items():
        if isinstance(v, Graph):
            params[k] = fn(v)
        elif isinstance(v, tuple) and v and all(isinstance(x, Graph) for x in v):
            params[k] = tuple(fn(x) for x in v)
        else:
            params[k] = v
    return rebuild(eqn, params=params)


def is_pure(eqn):
    return eqn.effect is None
