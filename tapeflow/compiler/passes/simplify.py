"""Algebraic simplification: replace an equation by one of its inputs when an
identity holds and the input has exactly the output's shape and dtype
(x*1, 1*x, x+0, x-0, x/1, x**1, reshape/broadcast_to/transpose/cast that
change nothing, stop_gradient (gradients were already taken at trace time),
neg(neg(x))).

Each rule is about particular primitives, so it names their record objects
(never their names as strings): a primitive a rule does not name is simply
left alone. Which ops broadcast by themselves comes from the records' fusion
class ("elementwise")."""
from __future__ import annotations

import numpy as np

from ...core.primitives import elementwise as E
from ...core.primitives import reductions as R
from ...core.primitives import shape as S
from ...core.primitives._rules import broadcast_shapes
from ...ir.graph import Eqn, Graph, Literal
from ._util import map_subgraphs, rebuild, resolve


def _is_lit(v, val):
    return isinstance(v, Literal) and not isinstance(v.val, bool) and v.val == val


def _same(out, v):
    return not isinstance(v, Literal) and v.aval.shape == out.aval.shape and v.aval.dtype == out.aval.dtype


_NOOP_WHEN_SAME = (S.reshape_p, S.broadcast_to_p, E.cast_p, E.stop_gradient_p)
#: reductions whose keepdims=True result a reshape may drop (_merge_keepdims_reshape)
_REDUCTIONS_KEEPDIMS = (R.reduce_sum_p, R.reduce_max_p, R.reduce_min_p)
#: reductions that over no axes return their input
_REDUCTIONS = _REDUCTIONS_KEEPDIMS + (R.reduce_prod_p,)


def _identity_input(e, producers):
    p = e.prim
    ins = e.inputs
    out = e.outputs[0] if e.outputs else None
    if p is E.mul_p:
        if _is_lit(ins[1], 1) and _same(out, ins[0]):
            return ins[0]
        if _is_lit(ins[0], 1) and _same(out, ins[1]):
            return ins[1]
    elif p is E.add_p:
        if _is_lit(ins[1], 0) and _same(out, ins[0]):
            return ins[0]
        if _is_lit(ins[0], 0) and _same(out, ins[1]):
            return ins[1]
    elif p is E.sub_p:
        if _is_lit(ins[1], 0) and _same(out, ins[0]):
            return ins[0]
    elif p is E.div_p or p is E.pow_p:
        if _is_lit(ins[1], 1) and _same(out, ins[0]):
            return ins[0]
    elif p in _NOOP_WHEN_SAME:
        # (a reshape or broadcast to sizes known only when it runs checks them then: never a no-op)
        if len(ins) == 1 and _same(out, ins[0]):
            return ins[0]
    elif p in _REDUCTIONS:
        if e.params["axis"] == () and _same(out, ins[0]):  # reducing over no axes
            return ins[0]
    elif p is S.transpose_p:
        if tuple(e.params["perm"]) == tuple(range(len(e.params["perm"]))) and _same(out, ins[0]):
            return ins[0]
    elif p is E.neg_p:
        q = producers.get(ins[0])
        if q is not None and q.prim is E.neg_p:
            return q.inputs[0]
    return None


def _peel_broadcasts(e, producers):
    """Elementwise ops broadcast by themselves: feed them the source of an
    explicit broadcast_to (or of a reshape of a one-element value) when the
    result shape stays the same. Gradient code is full of these."""
    if e.prim.fusion != "elementwise" or len(e.inputs) < 2:
        return e
    out = e.outputs[0].aval.shape
    ins = list(e.inputs)
    changed = False
    for k, v in enumerate(ins):
        while True:
            p = producers.get(v)
            if p is None or (p.prim is not S.broadcast_to_p and p.prim is not S.reshape_p) or len(p.inputs) != 1:
                break
            src = p.inputs[0]
            if isinstance(src, Literal) or src.aval.dtype != v.aval.dtype:
                break
            if p.prim is S.reshape_p and not (all(d == 1 for d in src.aval.shape)):
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
    if e.prim is not S.reshape_p or len(e.inputs) != 1:
        return None
    p = producers.get(e.inputs[0])
    if p is None or p.prim not in _REDUCTIONS_KEEPDIMS or not p.params["keepdims"]:
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
    if e.prim is E.select_p and isinstance(e.inputs[0], Literal) and e.outputs \
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
