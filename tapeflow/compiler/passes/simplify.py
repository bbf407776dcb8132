"""Algebraic simplification: replace an equation by one of its inputs when an
identity holds and the input has exactly the output's shape and dtype
(x*1, 1*x, x+0, x-0, x/1, x**1, reshape/broadcast_to/transpose/cast that
change nothing, stop_gradient (gradients were already taken at trace time),
neg(neg(x)))."""
from __future__ import annotations

import numpy as np

from ...core.primitives._rules import broadcast_shapes
from ...ir.graph import Eqn, Graph, Literal
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
    elif name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        if e.params["axis"] == () and _same(out, ins[0]):  # reducing over no axes
            return ins[0]
    elif name == "transpose":
        if tuple(e.params["perm"]) == tuple(range(len(e.params["perm"]))) and _same(out, ins[0]):
            return ins[0]
    elif name == "neg":
        p = producers.get(ins[0])
        if p is not None and p.prim.name == "neg":
            return p.inputs[0]
    return None


_ELEMENTWISE = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "select", "equal", "not_equal",
                "less", "less_equal", "greater", "greater_equal", "mod", "floordiv"}


def _peel_broadcasts(e, producers):
    """Elementwise ops broadcast by themselves: feed them the source of an
    explicit broadcast_to (or of a reshape of a one-element value) when the
    result shape stays the same. Gradient code is full of these."""
    if e.prim.name not in _ELEMENTWISE:
        return e
    out = e.outputs[0].aval.shape
    ins = list(e.inputs)
    changed = False
    for k, v in enumerate(ins):
        while True:
            p = producers.get(v)
            if p is None or p.prim.name not in ("broadcast_to", "reshape"):
                break
            src = p.inputs[0]
            if isinstance(src, Literal) or src.aval.dtype != v.aval.dtype:
                break
            if p.prim.name == "reshape" and not (all(d == 1 for d in src.aval.shape)):
                break
            trial = [x.aval.shape if not isinstance(x, Literal) else () for x in ins]
            trial[k] = src.aval.shape
            try:
                shape = broadcast_shapes(e.prim.name, *trial)
            except ValueError:
                break
            if shape != out:
                break
            ins[k] = v = src
            changed = True
    return rebuild(e, inputs=ins) if changed else e


def _merge_keepdims_reshape(e, producers):
    """reshape(reduce_sum(x, keepdims=True)) that only drops the kept dims ->
    reduce_sum(x, keepdims=False)."""
    if e.prim.name != "reshape":
        return None
    p = producers.get(e.inputs[0])
    if p is None or p.prim.name not in ("reduce_sum", "reduce_max", "reduce_min") or not p.params["keepdims"]:
        return None
    x = p.inputs[0]
    axis = p.params["axis"]
    dropped = tuple(d for i, d in enumerate(x.aval.shape) if i not in axis)
    if dropped != e.outputs[0].aval.shape:
        return None
    return Eqn(p.prim, [x], e.outputs, dict(p.params, keepdims=False), e.src)


def _fold_shape_only(e):
    """select(True, c, x) with a literal c is c broadcast to x's shape: a constant
    when the shape is known (it seeds every gradient: ones_like(loss))."""
    if e.prim.name == "select" and isinstance(e.inputs[0], Literal) and e.outputs \
            and all(d is not None for d in e.outputs[0].aval.shape):
        chosen = e.inputs[1] if e.inputs[0].val else e.inputs[2]
        if isinstance(chosen, Literal):
            a = e.outputs[0].aval
            return np.full(a.shape, chosen.val, a.dtype)
    return None


def simplify(graph: Graph) -> Graph:
    subst = {}
    producers = {}
    eqns = []
    consts = list(graph.consts)
    for e in graph.eqns:
        e = rebuild(e, inputs=[resolve(subst, v) for v in e.inputs])
        e = map_subgraphs(e, simplify)
        if e.effect is None and len(e.outputs) == 1 and not e.prim.multiple_results:
            c = _fold_shape_only(e)
            if c is not None:
                consts.append((e.outputs[0], c))
                continue
            e = _peel_broadcasts(e, producers)
            m = _merge_keepdims_reshape(e, producers)
            if m is not None:
                e = m
        if e.effect is None and len(e.outputs) == 1 and not e.prim.multiple_results:
            r = _identity_input(e, producers)
            if r is not None:
                subst[e.outputs[0]] = r
                continue
        for o in e.outputs:
            producers[o] = e
        eqns.append(e)
    return graph.copy(eqns=eqns, consts=consts, outputs=[resolve(subst, v) for v in graph.outputs])
