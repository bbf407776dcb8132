"""Slice push-down (Graph -> Graph): ``matmul(a, b)[rows, cols]`` whose product is used
only by that slice becomes ``matmul(a[rows, :], b[:, cols])``: the GEMM computes only
the elements kept.

Why: the gradient of a concatenation slices the gradient of the whole. TD3's actor
update differentiates the critic at ``concat([state, actor(state)])``, and only the
action's columns reach the actor: ``(d1 @ W1.T)[:, 17:23]``, a (256, 256) @ (256, 23)
GEMM of which 17 columns are dropped. Pushed down it is d1 @ W1.T[:, 17:23], a
(256, 256) @ (256, 6) product. Both slices are views (basic slicing with step 1), and
a row or column block of a BLAS-ready operand stays BLAS-ready (one stride is 1), so
nothing is copied.

Only rank-2 products and unit-step slices are rewritten; each element is still one
dot product of the same row and column (BLAS may block the shorter product
differently, so sums can differ by rounding, as between thread counts).
"""
from __future__ import annotations

from ...core.aval import Aval
from ...core.primitives.indexing import getitem_p
from ...core.primitives.linalg import matmul_p
from ...ir.graph import Eqn, Graph, Var
from ._util import map_subgraphs

_FULL = ("s", None, None, None)


def _axis_slices(key, rank):
    """(rows, cols) slice templates of a basic-slice key over a rank-2 value, or None
    when the key does anything else (an integer, None, an index tensor, a step)."""
    if any(k[0] != "s" or k[3] not in (None, 1) for k in key if k[0] != "e"):
        return None
    if sum(k[0] == "e" for k in key) > 1:
        return None
    if key and key[0][0] == "e":                 # x[..., cols]
        rest = list(key[1:])
        key = [_FULL] * (rank - len(rest)) + rest
    elif key and key[-1][0] == "e":              # x[rows, ...]
        head = list(key[:-1])
        key = head + [_FULL] * (rank - len(head))
    else:
        key = list(key) + [_FULL] * (rank - len(key))
    if len(key) != rank or any(k[0] == "e" for k in key):
        return None
    return key[0], key[1]


def _length(s, n):
    return len(range(*slice(s[1], s[2], s[3]).indices(n)))


def _sliced(v, axis, s, src):
    """``v`` sliced along ``axis`` (0: rows, 1: columns): (new value, its equation), or
    (v, None) when the slice keeps the whole axis."""
    shape = list(v.aval.shape)
    n = _length(s, shape[axis])
    if n == shape[axis]:
        return v, None
    shape[axis] = n
    out = Var(Aval(tuple(shape), v.aval.dtype))
    key = (s, _FULL) if axis == 0 else (_FULL, s)
    return out, Eqn(getitem_p, [v], [out], {"key": key}, src)


def push_slices(graph: Graph) -> Graph:
    eqns = [map_subgraphs(e, push_slices) for e in graph.eqns]
    changed = any(x is not y for x, y in zip(eqns, graph.eqns))
    uses = {}
    for e in eqns:
        for v in e.inputs:
            if isinstance(v, Var):
                uses[v] = uses.get(v, 0) + 1
    for v in graph.outputs:
        if isinstance(v, Var):
            uses[v] = uses.get(v, 0) + 2          # a returned product is used whole
    producer = {o: e for e in eqns for o in e.outputs}
    out, dropped = [], set()
    for e in eqns:
        p = producer.get(e.inputs[0]) if e.prim is getitem_p and len(e.inputs) == 1 else None
        if p is not None and p.prim is matmul_p and uses.get(e.inputs[0]) == 1 \
                and all(isinstance(v, Var) and len(v.aval.shape) == 2 for v in p.inputs):
            a, b = p.inputs
            shape = p.outputs[0].aval.shape
            sl = _axis_slices(e.params["key"], 2) if None not in shape else None
            if sl is not None and e.params.get("bounds") is None:
                a2, ea = _sliced(a, 0, sl[0], e.src)
                b2, eb = _sliced(b, 1, sl[1], e.src)
                if ea is not None or eb is not None:
                    out.extend(x for x in (ea, eb) if x is not None)
                    out.append(Eqn(matmul_p, [a2, b2], e.outputs, dict(p.params), p.src))
                    dropped.add(id(p))
                    changed = True
                    continue
        out.append(e)
    if not changed:
        return graph
    return graph.copy(eqns=[e for e in out if id(e) not in dropped])
